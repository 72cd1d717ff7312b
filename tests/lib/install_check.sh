#!/usr/bin/env bash
# install_check.sh BUILD_DIR IMGPU SCRATCH ASSET PYTHON_BUILT
# libimgpu as a user gets it (issue 27): `cmake --install BUILD_DIR --prefix P` into a scratch
# prefix without root, then
#  - the files are there: libimgpu.so.0 (its SONAME), libimgpu.a, include/imgpu/imgpu.h,
#    lib/pkgconfig/imgpu.pc, lib/cmake/imgpu/imgpuConfig.cmake (+ version file, targets) and,
#    when the Python module was built, lib/python3/dist-packages/imgpu;
#  - `nm -D --defined-only libimgpu.so` lists imgpu_ names only (no imgpu__ internals, nothing
#    from the static CUDA runtime or the codecs);
#  - tests/lib/example.c (the README's example) compiles and runs against P through pkg-config
#    and through find_package(imgpu) (shared and static), and its output equals `imgpu equalize`'s.
set -euo pipefail
build=$(cd "$1" && pwd); imgpu=$2; scratch=$3; asset=$4; python_built=$5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for tool in cc pkg-config nm readelf cmake; do
    command -v "$tool" >/dev/null || { echo "skip: no $tool"; exit 77; }
done
mkdir -p "$scratch"
t=$(mktemp -d "$scratch/install.XXXXXX")
[ "${IMGPU_KEEP_TMP:-0}" = 1 ] || trap 'rm -rf "$t"' EXIT
P=$t/prefix
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$P" > "$t/install.log" || { cat "$t/install.log"; fail "cmake --install"; }
so=$(ls "$P"/lib*/libimgpu.so.0 2>/dev/null | head -1)
[ -n "$so" ] || fail "no libimgpu.so.0 under $P"
libdir=$(dirname "$so")
for f in "$libdir/libimgpu.so" "$libdir/libimgpu.a" "$P/include/imgpu/imgpu.h" "$P/include/imgpu/version.h" \
         "$libdir/pkgconfig/imgpu.pc" "$libdir/cmake/imgpu/imgpuConfig.cmake" \
         "$libdir/cmake/imgpu/imgpuConfigVersion.cmake" "$libdir/cmake/imgpu/imgpuTargets.cmake"; do
    [ -e "$f" ] || fail "missing $f"
done
dyn=$(readelf -d "$so"); grep -q 'SONAME.*\[libimgpu\.so\.0\]' <<< "$dyn" || fail "SONAME is not libimgpu.so.0"
if [ "$python_built" = 1 ]; then
    [ -f "$libdir/python3/dist-packages/imgpu/__init__.py" ] || fail "no Python module under $libdir/python3/dist-packages"
    ls "$libdir"/python3/dist-packages/imgpu/_imgpu*.so >/dev/null || fail "no _imgpu extension installed"
fi

# exports: imgpu_ names only, and the API's entry points among them
nm -D --defined-only "$so" > "$t/nm"
awk '{print $NF}' "$t/nm" | sed 's/@.*//' | sort -u > "$t/exports"
bad=$(grep -v '^imgpu_' "$t/exports" || true)
internal=$(grep '^imgpu__' "$t/exports" || true)
[ -z "$bad" ] || fail "libimgpu.so exports non-imgpu_ names: $(echo $bad | head -c 400)"
[ -z "$internal" ] || fail "libimgpu.so exports internal imgpu__ names: $(echo $internal | head -c 400)"
for sym in imgpu_image_load imgpu_image_load_memory imgpu_image_save imgpu_image_encode imgpu_image_free \
           imgpu_op_equalize imgpu_op_clahe imgpu_op_rotate imgpu_pipeline_run imgpu_error_message \
           imgpu_context_create imgpu_context_destroy imgpu_context_run imgpu_image_wrap; do
    grep -qx "$sym" "$t/exports" || fail "libimgpu.so does not export $sym"
done
echo "exports: $(wc -l < "$t/exports") names, all imgpu_"

"$imgpu" equalize "$asset" "$t/ref.png" --quiet
cp "$here/example.c" "$t/"

# pkg-config, linked against the shared library (rpath: no LD_LIBRARY_PATH). The scratch prefix
# goes first, before the caller's PKG_CONFIG_PATH, which is kept: imgpu.pc's Requires.private
# (the codecs, for --static) must resolve even for a shared link, and on a machine whose codec
# packages are unpacked into a prefix (tests/device.sh: $GPU_PREFIX/usr) only that path finds
# their .pc files.
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
[ "$(pkg-config --modversion imgpu)" = "$(sed -n 's/#define IMGPU_VERSION_STRING "\(.*\)"/\1/p' "$P/include/imgpu/version.h")" ] \
    || fail "imgpu.pc's version differs from version.h"
# --static lists what libimgpu.a needs: the codecs through Requires.private, the rest in Libs.private
static_libs=" $(pkg-config --static --libs imgpu) " || fail "pkg-config --static --libs imgpu"
for l in -limgpu -lwebp -ltiff -ljpeg -lz -ldeflate; do
    grep -q -- " $l " <<< "$static_libs" || fail "pkg-config --static --libs imgpu lacks $l: $static_libs"
done
cc -std=c17 -Wall -Wextra -Werror "$t/example.c" $(pkg-config --cflags --libs imgpu) -Wl,-rpath,"$libdir" -o "$t/ex_pc"
# (ldd's output is captured first: grep -q closing the pipe early would fail the pipeline)
deps=$(ldd "$t/ex_pc"); grep -q "libimgpu.so.0 => $libdir" <<< "$deps" || fail "ex_pc does not load $libdir/libimgpu.so.0"
"$t/ex_pc" "$asset" "$t/out_pc.png"
"$imgpu" compare "$t/out_pc.png" "$t/ref.png" --max-abs 0 > /dev/null || fail "pkg-config example: output differs from imgpu equalize"

# find_package(imgpu): imgpu::imgpu (shared) and imgpu::imgpu_static
mkdir -p "$t/cm"
cp "$here/example.c" "$t/cm/"
cp "$here/CMakeLists.example.txt" "$t/cm/CMakeLists.txt"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$t/cm" -B "$t/cm/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$P" > "$t/cm.log" 2>&1 || { cat "$t/cm.log"; fail "configure with find_package(imgpu)"; }
cmake --build "$t/cm/build" > "$t/cm_build.log" 2>&1 || { cat "$t/cm_build.log"; fail "build with find_package(imgpu)"; }
for ex in example example_static; do
    "$t/cm/build/$ex" "$asset" "$t/out_$ex.png"
    "$imgpu" compare "$t/out_$ex.png" "$t/ref.png" --max-abs 0 > /dev/null || fail "find_package $ex: output differs"
done
deps=$(ldd "$t/cm/build/example"); grep -q "libimgpu.so.0 => $libdir" <<< "$deps" || fail "find_package example does not load $libdir/libimgpu.so.0"
deps=$(ldd "$t/cm/build/example_static")
if grep -q libimgpu <<< "$deps"; then fail "example_static loads libimgpu.so"; fi
echo "ok: installed to a scratch prefix; example built via pkg-config and find_package (shared, static)"
