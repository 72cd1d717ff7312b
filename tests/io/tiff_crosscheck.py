"""tiff_crosscheck.py — issue 16's TIFF codec (src/io/codec_tiff.c) against independent readers.

Every TIFF here starts as known pixels (numpy), written uncompressed by the small TIFF writer
below (either byte order, contiguous or separate planes), then rewritten by tiffcp (libtiff-
tools) into each variant. The matrix: depth (8, 16) x channels (gray, gray+alpha, RGB, RGBA) x
compression (none, LZW, deflate, PackBits, zstd, LZMA, each with and without predictor 2
where it applies; JPEG and WebP where they take the samples) x strips / short strips / tiles x
contiguous / separate planes x little / big endian. imgpu's decode (io_dump) must equal:
  - the source pixels exactly (lossless compressions), and
  - PIL's decode (Image.open) exactly where PIL reads that kind (8-bit; 16-bit gray as I;16),
    else cv2.imread(IMREAD_UNCHANGED)'s (16-bit RGB/RGBA; cv2 has libtiff too). 16-bit
    gray+alpha is read by neither (PIL refuses it, cv2 drops the alpha and the depth): the
    source pixels are its oracle. Lossy variants (JPEG, WebP) are compared with PIL/cv2 only.
Then: palette, MinIsWhite and associated alpha; multi-page files with --page and
`imgpu info`'s pages; write round trips for every --compression (imgpu writes, PIL/cv2 read
the same pixels as imgpu's PNG output of the same command); 16-bit LZW equalize stays 16-bit;
ICC / XMP / Orientation through exiftool; EXIF (IFD0's tags, the Exif and GPS IFDs) written
into TIFF outputs and kept through TIFF -> JPEG / TIFF (exiftool, PIL), damaged EXIF skipped
tag by tag; the kinds that are refused by name (exit 1, no
output); truncated and corrupt files (the file named, the reason, an existing output left as
it was); batch over a folder of .tif/.tiff files.

usage: tiff_crosscheck.py IMGPU IO_DUMP TMPDIR   (exit 77: no tiffcp, cv2 or PIL here)
"""
import json
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402
import exif_blob as eb  # noqa: E402
import zlib

try:
    import cv2
    import numpy as np
    from PIL import Image, TiffImagePlugin
except ImportError as e:
    print("skip:", e)
    sys.exit(77)
if not shutil.which("tiffcp"):
    print("skip: no tiffcp (libtiff-tools)")
    sys.exit(77)

IMGPU, DUMP, TMP = sys.argv[1:4]
os.makedirs(TMP, exist_ok=True)
T = cc.Checker("tiff_crosscheck")
check = T.check  # counts, prints "FAIL: ..." and returns cond (cli_common.Checker)


def run(argv):
    return cc.run_argv(argv, timeout=120)


def dump(path, page=None):
    """imgpu's decode: an (h, w, c) array, or (None, message)."""
    argv = [DUMP, path] + (["--page", str(page)] if page is not None else [])
    rc, out, err = run(argv)
    if rc != 0:
        return None, err.strip()
    head, _, raw = out.partition(b"\n")
    f = head.split()
    w, h, c = map(int, f[:3])
    dt = np.uint16 if len(f) > 3 and f[3] == b"16" else np.uint8
    return np.frombuffer(raw, dt).reshape(h, w, c), None


def pil_read(path):
    im = Image.open(path)
    if im.mode == "P":
        im = im.convert("RGB")
    a = np.asarray(im)
    if im.mode.startswith("I;16"):   # I;16B (big-endian files) too: native order
        a = a.astype(np.uint16)
    return a if a.ndim == 3 else a[:, :, None]


def cv_read(path):
    a = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if a is None:
        return None
    if a.ndim == 2:
        return a[:, :, None]
    return cv2.cvtColor(a, cv2.COLOR_BGR2RGB if a.shape[2] == 3 else cv2.COLOR_BGRA2RGBA)


# ---- a small uncompressed TIFF writer (the source of every variant) -------------------------

def write_tiff(path, a, photometric, extra=None, planar=1, be=False, bps=None, fmt=None,
               colormap=None, tags=(), raw=None, spp=None, tile=None, deflate=False,
               predictor=False):
    """a: (h, w, spp) array of uint8/uint16 (or raw bytes with bps/spp given for odd kinds);
    tile: (tw, th) writes tiles (zero-padded at the edges), else one strip per plane;
    deflate: each block zlib-compressed (Compression 8), with predictor 2 if asked."""
    e = ">" if be else "<"
    h, w = a.shape[:2]
    if raw is None:
        spp = a.shape[2]
        bps = a.dtype.itemsize * 8
        s = a.astype(a.dtype.newbyteorder(e))
        if tile:
            tw, th = tile
            pad = np.zeros(((h + th - 1) // th * th, (w + tw - 1) // tw * tw, spp), s.dtype)
            pad[:h, :w] = s
            planes = []
            for k in ([None] if planar == 1 else range(spp)):
                for y in range(0, h, th):
                    for x in range(0, w, tw):
                        b = pad[y:y + th, x:x + tw]
                        b = b if k is None else b[:, :, k:k + 1]
                        if predictor:   # horizontal differencing, per sample, mod 2^bps
                            b = b.copy()
                            b[:, 1:] = b[:, 1:] - pad[y:y + th, x:x + tw][:, :-1][
                                :, :, slice(None) if k is None else slice(k, k + 1)]
                        planes.append(b.tobytes())
        else:
            planes = [s.tobytes()] if planar == 1 else [s[:, :, k].tobytes() for k in range(spp)]
    else:
        planes = [raw]
    if deflate:
        planes = [zlib.compress(p) for p in planes]
    t = [(256, 4, [w]), (257, 4, [h]), (258, 3, [bps] * spp), (259, 3, [8 if deflate else 1]),
         (262, 3, [photometric]), (273, 4, [0] * len(planes)), (277, 3, [spp]),
         (279, 4, [len(p) for p in planes]), (284, 3, [planar])]
    if tile:   # TileWidth, TileLength, TileOffsets, TileByteCounts
        t = [({273: 324, 279: 325}.get(x[0], x[0]), x[1], x[2]) for x in t]
        t += [(322, 4, [tile[0]]), (323, 4, [tile[1]])]
    else:
        t.append((278, 4, [h]))
    if extra is not None:
        t.append((338, 3, [extra]))
    if predictor:
        t.append((317, 3, [2]))
    if fmt is not None:
        t.append((339, 3, [fmt] * spp))
    if colormap is not None:
        t.append((320, 3, list(colormap)))
    t += list(tags)
    t.sort(key=lambda x: x[0])
    code = {1: "B", 2: "B", 3: "H", 4: "I", 7: "B"}
    n = len(t)
    blob_at = 8 + 2 + 12 * n + 4

    def encode(tag, typ, vals, offsets):
        if tag in (273, 324):
            vals = offsets
        if isinstance(vals, bytes):
            return vals, len(vals)
        return b"".join(struct.pack(e + code[typ], v) for v in vals), len(vals)

    def pad(d):
        return d + (b"\0" if len(d) % 2 else b"")
    # the blobs' sizes do not depend on the offsets' values: lay them out first
    blob_len = sum(len(pad(encode(*x, [0] * len(planes))[0])) for x in t
                   if len(encode(*x, [0] * len(planes))[0]) > 4)
    offsets, pos = [], blob_at + blob_len
    for p in planes:
        offsets.append(pos)
        pos += len(p)
    out, blobs = b"", b""
    for tag, typ, vals in t:
        data, count = encode(tag, typ, vals, offsets)
        if len(data) > 4:
            out += struct.pack(e + "HHII", tag, typ, count, blob_at + len(blobs))
            blobs += pad(data)
        else:
            out += struct.pack(e + "HHI", tag, typ, count) + data.ljust(4, b"\0")
    head = (b"MM\0*" if be else b"II*\0") + struct.pack(e + "I", 8)
    with open(path, "wb") as f:
        f.write(head + struct.pack(e + "H", n) + out + struct.pack(e + "I", 0) + blobs +
                b"".join(planes))


def tiffcp(src, dst, *args):
    p = subprocess.run(["tiffcp", *args, src, dst], capture_output=True)
    return p.returncode == 0


rng = np.random.default_rng(20261126)
W, H = 45, 37   # not multiples of 16: partial tiles and strips
PHOTO = {1: 1, 2: 1, 3: 2, 4: 2}   # MinIsBlack, RGB


def source(c, depth):
    hi = 256 if depth == 8 else 65536
    # a smooth ramp plus noise: predictors and every compression get real work
    y, x = np.mgrid[0:H, 0:W]
    a = (x[:, :, None] * 977 + y[:, :, None] * 331 + np.arange(c) * 7919) % hi
    a = (a + rng.integers(0, max(2, hi // 64), (H, W, c))) % hi
    return a.astype(np.uint8 if depth == 8 else np.uint16)


def oracle(path, depth, c, planar=1):
    """PIL where it reads the kind, else cv2 where it keeps every channel; (None, None) where
    neither can: 16-bit gray+alpha (PIL refuses it, cv2 drops alpha and depth), gray+alpha in
    separate planes (PIL reads the planes as if interleaved), 16-bit RGB(A) in separate planes
    (cv2 reads them as if interleaved; PIL has no 16-bit RGB). The source pixels stay the
    oracle for all of those."""
    if (depth == 8 or c == 1) and not (c == 2 and planar == 2):
        try:
            return pil_read(path), "PIL"
        except (ValueError, OSError):
            pass
    if c != 2 and (planar == 1 or depth == 8):
        return cv_read(path), "cv2"
    return None, None


# ---- the matrix ---------------------------------------------------------------------------
# codecs a libtiff build may leave out (TIFFIsCODECConfigured); cv2's own libtiff may lack them
OPTIONAL_CODECS = ("webp", "zstd", "lzma", "jpeg")
COMPS = [("none", []), ("lzw", ["-c", "lzw"]), ("lzw_p2", ["-c", "lzw:2"]),
         ("deflate", ["-c", "zip"]), ("deflate_p2", ["-c", "zip:2"]),
         ("packbits", ["-c", "packbits"]), ("zstd", ["-c", "zstd"]), ("zstd_p2", ["-c", "zstd:2"]),
         ("lzma", ["-c", "lzma"]), ("lzma_p2", ["-c", "lzma:2"]),
         ("jpeg", ["-c", "jpeg"]), ("webp", ["-c", "webp"])]
LAYOUTS = [("strips", []), ("strips3", ["-r", "3"]), ("tiles", [])]
matrix = {"files": 0, "lossless_exact": 0, "oracle_exact": 0, "no_oracle": 0, "oracle_lacks_codec": 0,
          "skipped_by_tiffcp": 0}
mdir = os.path.join(TMP, "matrix")
os.makedirs(mdir, exist_ok=True)
for depth in (8, 16):
    for c in (1, 2, 3, 4):
        src = source(c, depth)
        for planar in (1, 2):
            for be in (False, True):
                base = os.path.join(mdir, f"src_{depth}_{c}_{planar}_{int(be)}.tif")
                write_tiff(base, src, PHOTO[c], extra=2 if c in (2, 4) else None, planar=planar,
                           be=be)
                # tiffcp's strips -> tiles copy garbles 16-bit separate planes (libtiff 4.5's
                # tiffcp; its tiles -> strips copy of the result disagrees with itself): tiled
                # variants start from tiles written here, which tiffcp only recompresses
                tbase = base.replace(".tif", "_tiles.tif")
                write_tiff(tbase, src, PHOTO[c], extra=2 if c in (2, 4) else None,
                           planar=planar, be=be, tile=(16, 16))
                got, err = dump(tbase)
                check(got is not None and np.array_equal(got, src),
                      f"the tiled source {os.path.basename(tbase)} decodes to its pixels", err)
                for cname, cargs in COMPS:
                    lossy = cname in ("jpeg", "webp")
                    if lossy and (depth != 8 or planar != 1):
                        continue
                    if cname == "jpeg" and c not in (1, 3):
                        continue
                    if cname == "webp" and (c < 3 or be):
                        continue
                    for lname, largs in LAYOUTS:
                        if lossy and lname == "strips3":
                            continue
                        name = f"d{depth}_c{c}_{'sep' if planar == 2 else 'contig'}_" \
                               f"{'be' if be else 'le'}_{cname}_{lname}"
                        path = os.path.join(mdir, name + ".tif")
                        args = (["-B"] if be else ["-L"]) + cargs + largs + \
                            ["-p", "separate" if planar == 2 else "contig"]
                        if cname == "jpeg" and c == 3:
                            args += ["-r", "16"] if lname != "tiles" else []
                        if lname == "tiles" and depth == 16 and planar == 2:
                            # tiffcp garbles these (see above): deflate tiles written here
                            if cname not in ("none", "deflate", "deflate_p2"):
                                matrix["skipped_by_tiffcp"] += 1
                                continue
                            write_tiff(path, src, PHOTO[c], extra=2 if c in (2, 4) else None,
                                       planar=2, be=be, tile=(16, 16), deflate=cname != "none",
                                       predictor=cname == "deflate_p2")
                        elif not tiffcp(tbase if lname == "tiles" else base, path, *args):
                            matrix["skipped_by_tiffcp"] += 1
                            continue
                        matrix["files"] += 1
                        got, err = dump(path)
                        if not check(got is not None, f"{name}: imgpu decodes it", err):
                            continue
                        if not lossy:
                            ok = check(got.shape == src.shape and np.array_equal(got, src),
                                       f"{name}: imgpu == the source pixels",
                                       f"{got.shape} vs {src.shape}")
                            matrix["lossless_exact"] += ok
                        want, who = oracle(path, depth, c, planar)
                        if who == "cv2" and want is None and cname.split("_")[0] in OPTIONAL_CODECS:
                            # an OpenCV whose own libtiff lacks the codec (pip's builds: no
                            # WebP, zstd; the GPU machine's): that oracle cannot say
                            matrix["oracle_lacks_codec"] += 1
                            who = None
                        if who:
                            ok = check(want is not None and want.shape == got.shape and
                                       want.dtype == got.dtype and np.array_equal(want, got),
                                       f"{name}: imgpu == {who}",
                                       None if want is None else f"{want.shape} {want.dtype}")
                            matrix["oracle_exact"] += ok
                        else:
                            matrix["no_oracle"] += 1
print(f"matrix: {matrix}", flush=True)
check(matrix["files"] >= 500, f"the matrix has its files ({matrix['files']})")

# ---- palette, MinIsWhite, associated alpha, YCbCr JPEG ------------------------------------
k = os.path.join(TMP, "kinds")
os.makedirs(k, exist_ok=True)
idx = rng.integers(0, 256, (H, W, 1)).astype(np.uint8)
cmap = rng.integers(0, 65536, 768)   # full 16-bit entries: >> 8 is not & 255
for be in (False, True):
    p = os.path.join(k, f"palette_{int(be)}.tif")
    write_tiff(p, idx, 3, colormap=[int(v) for v in cmap], be=be)
    for cname, cargs in (("none", []), ("lzw", ["-c", "lzw"]), ("tiles", ["-t", "-c", "zip"])):
        q = p.replace(".tif", f"_{cname}.tif")
        tiffcp(p, q, *cargs)
        got, err = dump(q)
        lut = (cmap.reshape(3, 256) >> 8).T.astype(np.uint8)
        check(got is not None and np.array_equal(got, lut[idx[:, :, 0]]),
              f"palette {cname} be={be}: the colormap >> 8", err)
        check(got is not None and np.array_equal(got, pil_read(q)), f"palette {cname}: == PIL")
        check(got is not None and np.array_equal(got, cv_read(q)), f"palette {cname}: == cv2")
g8 = source(1, 8)
p = os.path.join(k, "miniswhite8.tif")
write_tiff(p, g8, 0)
got, err = dump(p)
check(got is not None and np.array_equal(got, 255 - g8), "MinIsWhite 8-bit: inverted", err)
check(got is not None and np.array_equal(got, pil_read(p)), "MinIsWhite 8-bit: == PIL")
g16a = source(2, 16)
p = os.path.join(k, "miniswhite16a.tif")
write_tiff(p, g16a, 0, extra=2)
got, err = dump(p)
want = g16a.copy()
want[:, :, 0] = 65535 - want[:, :, 0]
check(got is not None and np.array_equal(got, want), "MinIsWhite 16-bit + alpha: gray inverted, "
      "alpha kept", err)
for depth in (8, 16):
    mx = 255 if depth == 8 else 65535
    a = source(4, depth).astype(np.int64)
    al = a[:, :, 3:4]
    pre = (a[:, :, :3] * al + mx // 2) // mx   # premultiplied, as a writer would store it
    stored = np.concatenate([pre, al], axis=2).astype(np.uint8 if depth == 8 else np.uint16)
    p = os.path.join(k, f"assoc{depth}.tif")
    write_tiff(p, stored, 2, extra=1)
    got, err = dump(p)
    s = stored.astype(np.int64)
    sa = s[:, :, 3:4]
    un = np.where(sa > 0, np.minimum(mx, (s[:, :, :3] * mx + sa // 2) // np.maximum(sa, 1)), 0)
    want = np.concatenate([un, sa], axis=2)
    check(got is not None and np.array_equal(got.astype(np.int64), want),
          f"associated alpha {depth}-bit: un-premultiplied, rounded", err)
    check(got is not None and np.abs(got[:, :, :3].astype(np.int64) - a[:, :, :3])[
        (al[:, :, 0] > mx // 4)].max() <= (2 if depth == 8 else 2),
          f"associated alpha {depth}-bit: close to the straight colours where alpha is high")

# ---- pages -------------------------------------------------------------------------------
pg = [source(3, 8), source(1, 16), source(2, 8)]
pages = []
for i, a in enumerate(pg):
    p = os.path.join(k, f"page{i}.tif")
    write_tiff(p, a, PHOTO[a.shape[2]], extra=2 if a.shape[2] == 2 else None)
    pages.append(p)
multi = os.path.join(k, "multi.tif")
subprocess.run(["tiffcp", "-c", "lzw", *pages, multi], check=True)
for i, a in enumerate(pg):
    got, err = dump(multi, page=i)
    check(got is not None and np.array_equal(got, a), f"multi-page: --page {i} is that page", err)
got, err = dump(multi)
check(got is not None and np.array_equal(got, pg[0]), "multi-page: page 0 by default", err)
out = os.path.join(k, "page_out.png")
rc, _, err = run([IMGPU, "equalize", multi, out, "--page", "3"])
check(rc == 1 and "3 pages" in err and "page 3" in err and multi in err and
      not os.path.exists(out), "--page 3 of 3 pages: a clear error naming the count", err)
rc, o, err = run([IMGPU, "info", multi])
check(rc == 0 and "pages:       3" in o.decode(), "imgpu info prints the pages", o.decode() + err)
rc, o, err = run([IMGPU, "info", "--json", multi, "--page", "2"])
try:
    j = json.loads(o.decode().splitlines()[0])
except Exception:
    j = {}
check(rc == 0 and j.get("pages") == 3 and j.get("page") == 2 and j.get("channels") == 2,
      "imgpu info --json --page 2: pages 3, page 2, its channels", o.decode() + err)
rc, _, err = run([IMGPU, "equalize", multi, os.path.join(k, "p1.tif"), "--page", "1"])
check(rc == 0 and pil_read(os.path.join(k, "p1.tif")).dtype == np.uint16,
      "equalize --page 1 of a multi-page file writes that page (16-bit)", err)

# ---- writes: every --compression, imgpu's TIFF == imgpu's PNG of the same command ----------
wdir = os.path.join(TMP, "write")
os.makedirs(wdir, exist_ok=True)
wcount = 0
wlacks = []   # outputs no oracle here can read (its libtiff lacks the codec)
for depth in (8, 16):
    for c in (1, 2, 3, 4):
        src = source(c, depth)
        sp = os.path.join(wdir, f"in_{depth}_{c}.tif")
        write_tiff(sp, src, PHOTO[c], extra=2 if c in (2, 4) else None)
        ref = os.path.join(wdir, f"ref_{depth}_{c}.png")
        rc, _, err = run([IMGPU, "equalize", sp, ref])
        refpx, _ = dump(ref)
        for comp in ("none", "deflate", "lzw", "packbits", "zstd", "lzma", "jpeg", "webp"):
            o = os.path.join(wdir, f"out_{depth}_{c}_{comp}.tif")
            rc, _, err = run([IMGPU, "equalize", sp, o, "--compression", comp])
            lossy = comp in ("jpeg", "webp")
            refused = (lossy and depth == 16) or (comp == "webp" and c < 3)
            if refused:
                check(rc == 1 and "compression takes" in err and not os.path.exists(o),
                      f"write {depth}-bit {c}ch {comp}: refused by name", err)
                continue
            wcount += 1
            if not check(rc == 0, f"write {depth}-bit {c}ch {comp}", err):
                continue
            got, err = dump(o)
            if not lossy:
                check(got is not None and np.array_equal(got, refpx),
                      f"write {depth}-bit {c}ch {comp}: imgpu reads back its PNG's pixels", err)
            want, who = oracle(o, depth, c)
            if who is None:
                want, who = got, "imgpu (16-bit gray+alpha)"
            if lossy and c == 2:   # JPEG gray+alpha: neither oracle reads 2-component JPEG
                continue
            if who == "cv2" and want is None and comp in OPTIONAL_CODECS:
                # PIL could not say (or does not read the kind) and cv2's own libtiff lacks
                # the codec (pip's OpenCV: no WebP, zstd, LZMA): imgpu's read-back above and
                # tiffinfo below still check the file
                wlacks.append(f"{depth}-bit {c}ch {comp}")
                want = None
            else:
                check(want is not None and got is not None and np.array_equal(want, got),
                      f"write {depth}-bit {c}ch {comp}: {who} reads what imgpu reads")
            if not lossy and want is not None:
                check(np.array_equal(want, refpx),
                      f"write {depth}-bit {c}ch {comp}: {who} == imgpu's PNG output")
            info = subprocess.run(["tiffinfo", o], capture_output=True, text=True).stdout
            tag = {"none": "None", "deflate": "AdobeDeflate", "lzw": "LZW", "packbits": "PackBits",
                   "zstd": "ZSTD", "lzma": "LZMA", "jpeg": "JPEG", "webp": "WEBP"}[comp]
            check(f"Compression Scheme: {tag}" in info, f"write {comp}: tiffinfo says {tag}",
                  info)
            if comp in ("deflate", "lzw", "zstd", "lzma"):
                check("Predictor: horizontal differencing" in info,
                      f"write {comp}: predictor 2", info)
            if c in (2, 4):
                check("Extra Samples: 1<unassoc-alpha>" in info, f"write {c}ch: unassociated alpha",
                      info)
for c in (3, 4):   # --compression webp --lossless: exact, but for the colour under alpha 0
    sp = os.path.join(wdir, f"in_8_{c}.tif")
    o = os.path.join(wdir, f"out_webp_lossless_{c}.tif")
    rc, _, err = run([IMGPU, "equalize", sp, o, "--compression", "webp", "--lossless"])
    got, err2 = dump(o)
    ref, _ = dump(os.path.join(wdir, f"ref_8_{c}.png"))
    vis = np.ones(ref.shape[:2], bool) if c == 3 else ref[:, :, 3] > 0
    try:
        pil = pil_read(o)
    except OSError:   # a PIL whose libtiff lacks WebP (pip's wheels)
        pil = None
        wlacks.append(f"webp --lossless {c}ch")
    check(rc == 0 and got is not None and np.array_equal(got[vis], ref[vis]) and
          (pil is None or np.array_equal(got, pil)), f"write webp --lossless {c}ch: exact where "
          "visible, == PIL", err + (err2 or ""))
o = os.path.join(wdir, "default.tif")
run([IMGPU, "equalize", os.path.join(wdir, "in_8_3.tif"), o])
check("AdobeDeflate" in subprocess.run(["tiffinfo", o], capture_output=True, text=True).stdout,
      "write: deflate by default")
print(f"writes: {wcount} written and read back; no oracle here reads {len(wlacks)} of them "
      f"(its libtiff lacks the codec){': ' + ', '.join(wlacks) if wlacks else ''}", flush=True)

# 16-bit LZW equalize keeps 16 bits and equals the 16-bit PNG path
g16 = os.path.join(wdir, "g16.tif")
g16lzw = os.path.join(wdir, "g16_lzw.tif")
write_tiff(g16, source(1, 16), 1)
tiffcp(g16, g16lzw, "-c", "lzw:2")
rc, _, err = run([IMGPU, "equalize", g16lzw, os.path.join(wdir, "g16_eq.tif")])
rc2, _, _ = run([IMGPU, "equalize", g16, os.path.join(wdir, "g16_eq.png")])
a = pil_read(os.path.join(wdir, "g16_eq.tif")) if rc == 0 else None
b = cv2.imread(os.path.join(wdir, "g16_eq.png"), cv2.IMREAD_UNCHANGED)
check(rc == 0 and a is not None and a.dtype == np.uint16 and a.shape == (H, W, 1) and
      len(np.unique(a)) > 256 and np.array_equal(a[:, :, 0], b),
      "equalize g16 LZW TIFF -> TIFF: 16 bits kept, == the 16-bit PNG path", err)

# ---- metadata: ICC, XMP, Orientation (exiftool) -------------------------------------------
def exiftool(path, *tags):
    p = subprocess.run(["exiftool", "-j", "-b", *tags, path], capture_output=True, text=True)
    try:
        return json.loads(p.stdout)[0]
    except Exception:
        return {}


icc_profile = cc.icc_profile


ICC = icc_profile("imgpu tiff test")
XMP = b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/' \
      b'22-rdf-syntax-ns#"><rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" ' \
      b'dc:format="image/tiff"/></rdf:RDF></x:xmpmeta>'
m = os.path.join(TMP, "meta")
os.makedirs(m, exist_ok=True)
src = source(3, 8)   # 45 wide, 37 tall
mp = os.path.join(m, "o6.tif")
write_tiff(mp, src, 2, tags=[(274, 3, [6]), (700, 1, XMP), (34675, 7, ICC)])
got, err = dump(mp)
check(got is not None and np.array_equal(got, np.rot90(src, -1)),
      "Orientation 6: loaded turned upright (90 deg clockwise)", err)
mo = os.path.join(m, "o6_out.tif")
rc, _, err = run([IMGPU, "equalize", mp, mo])
e = exiftool(mo, "-Orientation#", "-ImageWidth", "-ImageHeight")
check(rc == 0 and e.get("Orientation") == 1 and e.get("ImageWidth") == H and
      e.get("ImageHeight") == W, "output of Orientation 6: Orientation 1, turned size", e)
rc, o, _ = run(["exiftool", "-b", "-ICC_Profile", mo])
check(o == ICC, "ICC profile carried byte for byte (exiftool -ICC_Profile)", len(o))
rc, o, _ = run(["exiftool", "-b", "-XMP", mo])
check(o == XMP, "XMP carried byte for byte (exiftool -XMP)", o[:200])
rc, o, _ = run([IMGPU, "info", mp])
check(b"imgpu tiff test" in o and b"6" in o, "imgpu info: the ICC description, orientation",
      o.decode())
mo2 = os.path.join(m, "o6_keep.tif")
rc, _, err = run([IMGPU, "equalize", mp, mo2, "--no-auto-orient"])
e = exiftool(mo2, "-Orientation#", "-ImageWidth")
check(rc == 0 and e.get("Orientation") == 6 and e.get("ImageWidth") == W,
      "--no-auto-orient: stored pixels and Orientation 6 kept", e)
ms = os.path.join(m, "o6_strip.tif")
rc, _, err = run([IMGPU, "equalize", mp, ms, "--strip"])
e = exiftool(ms, "-ICC_Profile", "-XMP", "-Orientation#")
check(rc == 0 and "ICC_Profile" not in e and "XMP" not in e and "Orientation" not in e,
      "--strip: no ICC, XMP or Orientation", e)
mpng = os.path.join(m, "o6.png")
rc, _, err = run([IMGPU, "equalize", mp, mpng])
rc, o, _ = run(["exiftool", "-b", "-ICC_Profile", mpng])
check(o == ICC, "TIFF -> PNG: the ICC profile travels", len(o))
p2 = os.path.join(m, "page1_meta.tif")
write_tiff(os.path.join(m, "plain.tif"), src, 2)
subprocess.run(["tiffcp", os.path.join(m, "plain.tif"), mp, p2], check=True)
def info_json(*argv):
    rc, o, err = run([IMGPU, "info", "--json", *argv])
    try:
        return json.loads(o.decode().splitlines()[0])
    except Exception:
        return {"rc": rc, "out": o.decode(), "err": err}


j = info_json(p2, "--page", "1")
check(j.get("page") == 1 and j.get("orientation") == 6 and
      (j.get("icc") or {}).get("description") == "imgpu tiff test",
      "--page 1: the metadata of page 1 (orientation, ICC)", j)
j = info_json(p2)
check(j.get("page") == 0 and j.get("orientation") != 6 and j.get("icc") is None,
      "page 0: not page 1's orientation or ICC", j)

# EXIF: the Exif IFD and IFD0's camera tags read into the blob that other formats carry
ex = os.path.join(m, "exif.tif")
write_tiff(ex, src, 2)
subprocess.run(["exiftool", "-q", "-overwrite_original", "-Make=Canon", "-Model=EOS 5D",
                "-DateTimeOriginal=2024:01:02 03:04:05", "-ExposureTime=1/125",
                "-UserComment=a comment longer than four bytes", "-Orientation#=6",
                "-GPSLatitude=35.6586", "-GPSLatitudeRef=N", "-Artist=A. Photographer", ex],
               check=True)
rc, o, err = run([IMGPU, "info", ex])
check(rc == 0 and b"Canon EOS 5D" in o and b"2024:01:02 03:04:05" in o,
      "TIFF EXIF: imgpu info shows the camera and date", o.decode() + err)
exp = os.path.join(m, "exif_out.png")
rc, _, err = run([IMGPU, "equalize", ex, exp])
e = exiftool(exp, "-Make", "-Model", "-DateTimeOriginal", "-ExposureTime", "-UserComment",
             "-Orientation#", "-ImageWidth", "-GPSLatitude#", "-GPSLatitudeRef", "-Artist")
check(rc == 0 and e.get("Make") == "Canon" and e.get("Model") == "EOS 5D" and
      e.get("DateTimeOriginal") == "2024:01:02 03:04:05" and e.get("ExposureTime") == "1/125" and
      e.get("UserComment") == "a comment longer than four bytes" and e.get("Orientation") == 1 and
      e.get("ImageWidth") == H, "TIFF EXIF -> PNG: the tags carried, Orientation 1, upright", e)
check(e.get("GPSLatitude") == 35.6586 and e.get("GPSLatitudeRef") == "North" and
      e.get("Artist") == "A. Photographer", "TIFF EXIF -> PNG: the GPS IFD and the Artist too", e)
exp = os.path.join(m, "exif_keep.png")
rc, _, err = run([IMGPU, "equalize", ex, exp, "--no-auto-orient"])
e = exiftool(exp, "-Orientation#", "-ImageWidth")
check(rc == 0 and e.get("Orientation") == 6 and e.get("ImageWidth") == W,
      "TIFF EXIF -> PNG --no-auto-orient: Orientation 6 with the stored pixels", e)

# EXIF written into TIFF outputs (issue 16, "metadata kept"): a camera JPEG's IFD0 tags, Exif
# IFD and GPS IFD come out as the TIFF's own IFD0 tags and real Exif / GPS IFDs (exiftool and
# PIL read them), Orientation 1 over upright pixels, no thumbnail IFD1; and they survive
# TIFF -> JPEG and TIFF -> TIFF.

PHOTO_TAGS = ["Make", "Model", "DateTimeOriginal", "ExposureTime", "FNumber", "ISO",
              "GPSLatitude", "GPSLongitude", "GPSLatitudeRef", "GPSLongitudeRef", "Artist",
              "Copyright", "ImageDescription"]


def photo_tags(path):
    """exiftool's numeric values (-n) of PHOTO_TAGS plus Orientation, the pixel size tags and
    the groups seen (IFD1 is the thumbnail's)."""
    p = subprocess.run(["exiftool", "-j", "-n", "-G1", "-a", *[f"-{t}" for t in PHOTO_TAGS],
                        "-Orientation", "-ExifImageWidth", "-ExifImageHeight",
                        "-IFD1:all", path], capture_output=True, text=True)
    try:
        d = json.loads(p.stdout)[0]
    except Exception:
        return {}, set()
    flat = {k.split(":", 1)[1]: v for k, v in d.items() if ":" in k}
    return flat, {k.split(":", 1)[0] for k in d if ":" in k}


def jpeg_with_app1(path, img, blob):
    ok, enc = cv2.imencode(".jpg", img)
    enc = enc.tobytes()
    body = eb.app1(blob)
    open(path, "wb").write(enc[:2] + b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body +
                           enc[2:])


ew = os.path.join(TMP, "exif_write")
os.makedirs(ew, exist_ok=True)
PW, PH = 64, 40                      # stored 64 wide, 40 tall; Orientation 6: upright 40 x 64
stored = np.full((PH, PW, 3), 60, np.uint8)
stored += rng.integers(0, 40, stored.shape, dtype=np.uint8)
stored[:12, :16] = 250               # the stored top-left corner: upright, the top-right one
thumb = os.path.join(ew, "thumb.jpg")
cv2.imwrite(thumb, stored[::4, ::4])
photo = os.path.join(ew, "photo_with_exif.jpg")
cv2.imwrite(photo, stored)
subprocess.run(["exiftool", "-q", "-overwrite_original", "-Make=Canon", "-Model=EOS 5D",
                "-DateTimeOriginal=2024:01:02 03:04:05", "-ExposureTime=1/125", "-FNumber=2.8",
                "-ISO=400", "-GPSLatitude=48.8583", "-GPSLatitudeRef=N", "-GPSLongitude=2.2945",
                "-GPSLongitudeRef=E", "-Artist=A. Photographer", "-Copyright=(c) 2024 A. P.",
                "-ImageDescription=a test photo", "-Orientation#=6", f"-ExifImageWidth={PW}",
                f"-ExifImageHeight={PH}", f"-ThumbnailImage<={thumb}", photo], check=True)
want, groups = photo_tags(photo)
check(all(t in want for t in PHOTO_TAGS) and want.get("Orientation") == 6 and "IFD1" in groups,
      "the camera JPEG has every tag, Orientation 6 and a thumbnail IFD1 (exiftool wrote them)",
      want)


def same_photo_tags(got, what):
    diff = {t: (want.get(t), got.get(t)) for t in PHOTO_TAGS if got.get(t) != want.get(t)}
    check(not diff, f"{what}: Make, Model, DateTimeOriginal, ExposureTime, FNumber, ISO, GPS, "
          "Artist, Copyright, ImageDescription equal the input's (exiftool -n)", diff)


out_tif = os.path.join(ew, "out.tif")
rc, _, err = run([IMGPU, "equalize", photo, out_tif])
got, groups = photo_tags(out_tif) if rc == 0 else ({}, set())
check(rc == 0, "equalize photo_with_exif.jpg out.tif", err)
same_photo_tags(got, "JPEG -> TIFF")
check({"ExifIFD", "GPS"} <= groups and "IFD1" not in groups,
      "JPEG -> TIFF: real Exif and GPS IFDs, no thumbnail IFD1", sorted(groups))
check(got.get("Orientation") in (1, None) and got.get("ExifImageWidth") == PH and
      got.get("ExifImageHeight") == PW,
      "JPEG -> TIFF: Orientation 1, PixelX/YDimension the upright size", got)
up = pil_read(out_tif) if rc == 0 else None
# upright: 40 wide, 64 tall, the stored top-left block now at the top right (90 deg clockwise)
check(up is not None and up.shape == (PW, PH, 3) and
      up[:16, -12:].mean() > up[16:, :].mean() + 100 and up[:16, :12].mean() < 200,
      "JPEG -> TIFF: pixels upright (PIL: 40 x 64, the marked corner top right)",
      None if up is None else up.shape)
png_ref = os.path.join(ew, "out.png")
run([IMGPU, "equalize", photo, png_ref])
ref = cv_read(png_ref)
check(up is not None and ref is not None and np.array_equal(up, ref),
      "JPEG -> TIFF: the pixels equal the PNG output of the same command", None)
# PIL reads the same EXIF (its own TIFF and EXIF parsers)
try:
    with Image.open(out_tif) as im:
        ex = im.getexif()
        exif_ifd, gps_ifd = ex.get_ifd(0x8769), ex.get_ifd(0x8825)
        pil_ok = (ex.get(271) == "Canon" and ex.get(272) == "EOS 5D" and
                  ex.get(274) in (1, None) and
                  exif_ifd.get(0x9003) == "2024:01:02 03:04:05" and
                  exif_ifd.get(0x829A) == 0.008 and
                  (exif_ifd[0x829A].numerator, exif_ifd[0x829A].denominator) == (1, 125) and
                  exif_ifd.get(0x8827) == 400 and
                  gps_ifd.get(1) == "N" and gps_ifd.get(3) == "E" and
                  abs(sum(float(v) / 60 ** i for i, v in enumerate(gps_ifd.get(2))) - 48.8583)
                  < 1e-6)
        pil_what = (dict(ex), dict(exif_ifd), dict(gps_ifd))
except Exception as e:  # noqa: BLE001
    pil_ok, pil_what = False, repr(e)
check(pil_ok, "JPEG -> TIFF: PIL reads Make, Model, DateTimeOriginal, ExposureTime 1/125 "
      "exactly, ISO, GPS", pil_what)
for name, what in (("rt.jpg", "TIFF -> JPEG"), ("rt.tif", "TIFF -> TIFF"),
                   ("rt_jpegc.tif", "TIFF -> TIFF --compression jpeg")):
    rt = os.path.join(ew, name)
    argv = [IMGPU, "equalize", out_tif, rt] + (["--compression", "jpeg"] if "jpegc" in name else [])
    rc, _, err = run(argv)
    got, groups = photo_tags(rt) if rc == 0 else ({}, set())
    check(rc == 0, what, err)
    same_photo_tags(got, what)
    check(got.get("Orientation") in (1, None) and "IFD1" not in groups and
          got.get("ExifImageWidth") == PH, f"{what}: Orientation 1, no IFD1, the pixel size", got)
# a size change: PixelXDimension / PixelYDimension say the output's size
rot = os.path.join(ew, "rot.tif")
rc, _, err = run([IMGPU, "rotate", photo, rot, "--angle", "30"])
got, _ = photo_tags(rot) if rc == 0 else ({}, set())
r = pil_read(rot) if rc == 0 else None
check(r is not None and got.get("ExifImageWidth") == r.shape[1] and
      got.get("ExifImageHeight") == r.shape[0] and got.get("Make") == "Canon",
      "rotate 30 -> TIFF: ExifImageWidth/Height the rotated size", (got, None if r is None else r.shape))
# --no-auto-orient: the stored pixels and Orientation 6, the EXIF still there
keep = os.path.join(ew, "keep.tif")
rc, _, err = run([IMGPU, "equalize", photo, keep, "--no-auto-orient"])
got, _ = photo_tags(keep) if rc == 0 else ({}, set())
check(got.get("Orientation") == 6 and got.get("ExifImageWidth") == PW and
      got.get("GPSLatitude") == want.get("GPSLatitude"),
      "--no-auto-orient -> TIFF: Orientation 6, the stored size, the EXIF kept", got)
# --strip: none of it
strip = os.path.join(ew, "strip.tif")
rc, _, err = run([IMGPU, "equalize", photo, strip, "--strip"])
got, groups = photo_tags(strip) if rc == 0 else ({}, set())
check(rc == 0 and not {"ExifIFD", "GPS"} & groups and "Make" not in got,
      "--strip -> TIFF: no EXIF, no GPS, no Make", (got, groups))

# damaged EXIF never fails the save: entries of the wrong type or count, unknown tags, a zero
# denominator are left out one by one; the good ones (either byte order) are written
for be in (False, True):
    blob = eb.tiff(
        [(0x010F, eb.SHORT, 5),                                    # Make as SHORT: dropped
         (0x0110, eb.ASCII, "Model X"), (0x0112, eb.SHORT, 6), (0x013B, eb.ASCII, "Artist Y")],
        exif=[(0x829A, eb.RATIONAL, [(1, 0)]),                     # ExposureTime x/0: dropped
              (0x829D, eb.RATIONAL, [(28, 10), (1, 1)]),           # FNumber of 2: dropped
              (0x1234, eb.LONG, 7),                                # unknown: dropped
              (0x8827, eb.ASCII, "400"),                           # ISO as text: dropped
              (0x9003, eb.ASCII, "2020:01:02 03:04:05"),
              (0x9204, eb.SRATIONAL, [(-1, 3)]),                   # ExposureBiasValue
              (0xA002, eb.SHORT, 999), (0xA003, eb.LONG, 999),
              (0xA005, eb.LONG, 12345)],                           # Interop pointer: dropped
        gps=[(0x0000, eb.BYTE, b"\2\3\0\0"),
             (0x0002, eb.SHORT, [48, 51, 29]),                     # GPSLatitude SHORT: dropped
             (0x0004, eb.RATIONAL, [(2, 1), (17, 1), (4020, 100)])],
        ifd1=[(0x010F, eb.ASCII, "THUMB MAKE"), (0x0103, eb.SHORT, 6)],
        big_endian=be)
    dj = os.path.join(ew, f"damaged_{'be' if be else 'le'}.jpg")
    jpeg_with_app1(dj, stored, blob)
    dt = dj[:-4] + ".tif"
    rc, _, err = run([IMGPU, "equalize", dj, dt])
    p = subprocess.run(["exiftool", "-j", "-n", "-G1", "-a", dt], capture_output=True, text=True)
    try:
        d = json.loads(p.stdout)[0]
    except Exception:
        d = {}
    check(rc == 0 and d.get("IFD0:Model") == "Model X" and d.get("IFD0:Artist") == "Artist Y" and
          d.get("IFD0:Orientation") == 1 and "IFD0:Make" not in d and
          d.get("ExifIFD:DateTimeOriginal") == "2020:01:02 03:04:05" and
          abs(d.get("ExifIFD:ExposureCompensation", 0) + 1 / 3) < 1e-9 and
          d.get("ExifIFD:ExifImageWidth") == PH and d.get("ExifIFD:ExifImageHeight") == PW and
          "ExifIFD:ExposureTime" not in d and "ExifIFD:FNumber" not in d and
          "ExifIFD:ISO" not in d and "GPS:GPSLatitude" not in d and
          d.get("GPS:GPSVersionID") == "2 3 0 0" and
          abs(d.get("GPS:GPSLongitude", 0) - (2 + 17 / 60 + 40.2 / 3600)) < 1e-9 and
          not any(k.startswith(("IFD1:", "InteropIFD:")) for k in d),
          f"damaged EXIF ({'big' if be else 'little'}-endian) -> TIFF: saved, the well-formed "
          "tags written, the rest left out one by one, no IFD1",
          {k: v for k, v in d.items() if k.split(":")[0] in ("IFD0", "ExifIFD", "GPS", "IFD1")}
          if d else err)

# ---- refused kinds: named, exit 1, no output ----------------------------------------------
r = os.path.join(TMP, "refused")
os.makedirs(r, exist_ok=True)
z = np.zeros((H, W, 1), np.uint8)
kinds = [
    ("float32", dict(raw=np.zeros(H * W, np.float32).tobytes(), bps=32, spp=1, fmt=3,
                     photometric=1), "32-bit float samples"),
    ("int16", dict(raw=bytes(H * W * 2), bps=16, spp=1, fmt=2, photometric=1),
     "16-bit signed integer samples"),
    ("uint32", dict(raw=bytes(H * W * 4), bps=32, spp=1, photometric=1), "32-bit samples"),
    ("bilevel", dict(raw=bytes(H * ((W + 7) // 8)), bps=1, spp=1, photometric=1),
     "1-bit (bilevel) samples"),
    ("gray4", dict(raw=bytes(H * ((W + 1) // 2)), bps=4, spp=1, photometric=1), "4-bit samples"),
    ("palette4", dict(raw=bytes(H * ((W + 1) // 2)), bps=4, spp=1, photometric=3,
                      colormap=[0] * 48), "4-bit palette samples"),
    ("cmyk", dict(raw=bytes(H * W * 4), bps=8, spp=4, photometric=5), "CMYK"),
    ("lab", dict(raw=bytes(H * W * 3), bps=8, spp=3, photometric=8), "L*a*b*"),
    ("ycbcr_raw", dict(raw=bytes(H * W * 3), bps=8, spp=3, photometric=6), "YCbCr"),
    ("rgb5", dict(raw=bytes(H * W * 5), bps=8, spp=5, photometric=2), "5 samples per pixel"),
]
for name, kw, words in kinds:
    p = os.path.join(r, name + ".tif")
    photometric = kw.pop("photometric")
    write_tiff(p, z, photometric, **kw)
    o = os.path.join(r, name + "_out.png")
    rc, out, err = run([IMGPU, "equalize", p, o])
    check(rc == 1 and err.startswith(f"imgpu: cannot read '{p}': TIFF with ") and words in err
          and "not supported" in err and not os.path.exists(o),
          f"refused {name}: '{words}' named, exit 1, no output", err)

# ---- truncated and corrupt: the file named, the reason, an existing output untouched -------
cdir = os.path.join(TMP, "corrupt")
os.makedirs(cdir, exist_ok=True)
good = os.path.join(cdir, "good.tif")
write_tiff(os.path.join(cdir, "plain.tif"), source(3, 8), 2)
tiffcp(os.path.join(cdir, "plain.tif"), good, "-c", "lzw", "-r", "4")
blob = open(good, "rb").read()
ifd = struct.unpack("<I", blob[4:8])[0]
cases = {
    "truncated_half": blob[: len(blob) // 2],
    "truncated_header": blob[:6],
    "bad_ifd_offset": blob[:4] + struct.pack("<I", len(blob) + 100) + blob[8:],
    "garbage_strips": blob[:8] + bytes((b * 37 + 11) & 255 for b in blob[8:ifd]) + blob[ifd:],
}
out = os.path.join(cdir, "existing.png")
for name, data in cases.items():
    p = os.path.join(cdir, name + ".tif")
    open(p, "wb").write(data)
    open(out, "wb").write(b"precious")
    rc, _, err = run([IMGPU, "equalize", p, out])
    check(rc == 1 and err.startswith(f"imgpu: cannot read '{p}': ") and
          ("TIFF" in err) and err.count("\n") == 1 and open(out, "rb").read() == b"precious",
          f"{name}: 'imgpu: cannot read FILE: reason', exit 1, the existing output untouched",
          err)
rc, _, err = run([IMGPU, "equalize", os.path.join(cdir, "truncated_half.tif"), out])
check("truncated TIFF file" in err, "a file cut in half (its directory last): 'truncated'", err)
p = os.path.join(cdir, "truncated_strips.tif")
blob2 = open(os.path.join(cdir, "plain.tif"), "rb").read()   # directory first, then the strip
open(p, "wb").write(blob2[: len(blob2) - 100])
rc, _, err = run([IMGPU, "equalize", p, out])
check(rc == 1 and "truncated TIFF data (strip 0 ends past the end of the file)" in err and
      open(out, "rb").read() == b"precious", "strips cut short: 'truncated TIFF data'", err)
rc, _, err = run([IMGPU, "equalize", os.path.join(cdir, "garbage_strips.tif"), out])
check("corrupt TIFF data (" in err, "LZW strips of garbage: 'corrupt TIFF data (libtiff's "
      "message)'", err)
big = os.path.join(cdir, "big.tif")
write_tiff(os.path.join(cdir, "bigsrc.tif"), source(1, 8), 1)
rc, _, err = run([IMGPU, "equalize", os.path.join(cdir, "bigsrc.tif"), out, "--max-pixels", "100"])
check(rc == 1 and "--max-pixels" in err and open(out, "rb").read() == b"precious",
      "--max-pixels: refused from the header", err)

# libtiff's warnings and errors never reach stderr: an unknown tag (a warning), a bad one
p = os.path.join(cdir, "unknown_tag.tif")
write_tiff(p, source(1, 8), 1, tags=[(65000, 3, [7]), (65001, 4, [1, 2, 3])])
o = os.path.join(cdir, "unknown_tag_out.png")
rc, _, err = run([IMGPU, "equalize", p, o])
check(rc == 0 and err == "" and os.path.exists(o), "libtiff's warning (unknown tags): nothing on "
      "stderr, the image written", err)
rc, _, err = run([IMGPU, "equalize", os.path.join(cdir, "garbage_strips.tif"), out])
check(err.count("\n") == 1 and err.startswith("imgpu: "), "libtiff's error: one line, ours", err)
# a tile size that no budget holds: refused as memory, not as corrupt data
p = os.path.join(cdir, "huge_tiles.tif")
write_tiff(p, source(1, 8), 1, tile=(16, 16))
b = bytearray(open(p, "rb").read())
pos = b.find(struct.pack("<HHI", 322, 4, 1))
b[pos + 8:pos + 12] = struct.pack("<I", 1 << 16)
b[pos + 20:pos + 24] = struct.pack("<I", 1 << 16)   # TileLength follows TileWidth
open(p, "wb").write(bytes(b))
rc, _, err = run([IMGPU, "equalize", p, out])
check(rc == 1 and "out of memory (the image needs" in err and "corrupt TIFF" not in err and
      open(out, "rb").read() == b"precious", "65536x65536 tiles: refused as memory", err)
# --max-decode-time: a large LZMA TIFF stopped with io.c's wording
p = os.path.join(cdir, "slow.tif")
big_src = (np.arange(2048 * 2048 * 3, dtype=np.uint32) * 2654435761 >> 13).astype(np.uint8)
write_tiff(os.path.join(cdir, "slow_src.tif"), big_src.reshape(2048, 2048, 3), 2)
tiffcp(os.path.join(cdir, "slow_src.tif"), p, "-c", "lzma", "-r", "64")
rc, _, err = run([IMGPU, "equalize", p, out, "--max-decode-time", "0.01"])
check(rc == 1 and "decoding took longer than the limit" in err and
      open(out, "rb").read() == b"precious", "--max-decode-time 0.01 on a 2048^2 LZMA TIFF", err)

# ---- batch over .tif / .tiff --------------------------------------------------------------
bdir = os.path.join(TMP, "batch_in")
bout = os.path.join(TMP, "batch_out")
shutil.rmtree(bdir, ignore_errors=True)
shutil.rmtree(bout, ignore_errors=True)
os.makedirs(bdir)
write_tiff(os.path.join(bdir, "a.tif"), source(3, 8), 2)
write_tiff(os.path.join(bdir, "b.TIFF"), source(1, 16), 1)
rc, o, err = run([IMGPU, "batch", "--equalize", "-o", bout, bdir])
outs = sorted(os.listdir(bout)) if os.path.isdir(bout) else []
check(rc == 0 and "a.tif" in outs and "b.TIFF" in outs, "batch: .tif and .TIFF inputs processed",
      f"{outs} {o.decode()} {err}")
if "b.TIFF" in outs:
    check(pil_read(os.path.join(bout, "b.TIFF")).dtype == np.uint16,
          "batch: the 16-bit TIFF stays 16-bit")

sys.exit(T.end())
