#!/bin/bash
# bench/fetch_vips.sh [DEST] — on this CPU machine, Debian 12's vipsthumbnail for the GPU machine
# (which has no vips), for bench/resize_batch.sh's vips row: the .deb files of libvips-tools and
# of the libraries its closure needs that the GPU machine lacks, into DEST (default .gpuvips,
# ignored by git; name it in the device call's carry beside .gpu), ~19.5 MB.
#   bash bench/fetch_vips.sh [.gpuvips]
# Left out, as the GPU machine (Ubuntu 24.04 with Python 3.12 and apt) has them under the same
# sonames: glibc, libgcc, libstdc++, zlib, liblzma, libzstd, libbz2, libexpat, libffi, libssl,
# libpcre2, libselinux, libblkid, libmount and the GnuTLS chain (gnutls, nettle, hogweed,
# gmp, idn2, p11-kit, tasn1); and the codecs .gpu/prefix already brings (libjpeg62-turbo,
# libtiff6, libwebp7/mux/demux, libdeflate0, libjbig0, liblerc4, libxext6, libxrender1: .gpu is
# carried in the same call and device-env.sh puts its libraries on LD_LIBRARY_PATH).
# libicu72 (9.4 MB, wanted only by libxml2's converters) is replaced by bench/icu_stub.c built as
# DEST/libicuuc.so.72. resize_batch.sh unpacks DEST into /tmp/gpuvips and names, with ldd, any
# library still missing there (then its vips row is skipped).
# Checked here in a chroot holding only the left-out libraries: vipsthumbnail made the same
# 1920x1080 JPEG as the system's vips. libunistring2 is fetched too: the GPU machine has
# libunistring.so.5, not .2 (session 16, run 8: the vips row was skipped for it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-.gpuvips}
mkdir -p "$dest"
apt-get update -qq >/dev/null 2>&1 || true
(cd "$dest" && apt-get download \
  libvips-tools libvips42 \
  libaec0 libbrotli1 libbsd0 libcairo-gobject2 libcairo2 libcfitsio10 libcgif0 libcom-err2 libcurl3-gnutls \
  libcurl4 libdatrie1 libexif12 libfftw3-double3 libfontconfig1 libfreetype6 libfribidi0 \
  libgdk-pixbuf-2.0-0 libglib2.0-0 libgomp1 libgraphite2-3 libgsf-1-114 libgssapi-krb5-2 libharfbuzz0b \
  libhdf5-103-1 libimagequant0 libimath-3-1-29 libk5crypto3 libkeyutils1 libkrb5-3 \
  libkrb5support0 liblcms2-2 libldap-2.5-0 libmd0 libmatio11 libnghttp2-14 libopenexr-3-1-30 libopenjp2-7 \
  liborc-0.4-0 libpango-1.0-0 libpangocairo-1.0-0 libpangoft2-1.0-0 libpixman-1-0 libpng16-16 libpsl5 \
  librsvg2-2 librtmp1 libunistring2 libsasl2-2 libssh2-1 libsz2 libthai0 libx11-6 libxau6 libxcb-render0 libxcb-shm0 libxcb1 libxdmcp6 libxml2 \
  2>&1 | grep -v -e unsandboxed -e '^Get:' -e '^Fetched' || true)
cc -shared -fPIC -O2 -Wl,-soname,libicuuc.so.72 -o "$dest/libicuuc.so.72" "$here/icu_stub.c"
du -sh "$dest"
