# unit.cmake — C unit tests of the library on the CPU (label unit, and io / exif where that is
# what they test), each registered by imgpu_add_c_test (tests/CMakeLists.txt).
#   test_cpu_equalize, test_cpu_rotate, test_cpu_color, test_cpu_clahe
#                     the CPU reference backend (test_cpu_clahe: geometry, clip, reflect-101,
#                     formulas)
#   test_cpu_threads  the CPU backend on 1, 2, 3, 4 and 7 threads: byte-identical outputs
#                     (src/backend/cpu/parallel.h); cli/cpu_threads_cli.sh does the same through the CLI
#   test_cpu_pool     the CPU backend's thread pool (parallel.c): each part exactly once, from many
#                     callers, nested, after fork(); threads kept across calls
#   test_cpu_resize   resize's row engine (src/backend/cpu/resize.c) against its per-sample
#                     reference code, byte for byte: every filter, --antialias, 1..4 channels,
#                     8/16 bits, odd sizes, 1 and 3 threads
#   test_image_pages  pixel buffers of 4 MiB and more carry the transparent-huge-page hint, as
#                     numpy's arrays do (src/core/image.c)
#   test_plan         the pipeline plan
#   test_auto_rule    `auto`'s start rule and run-time rule held to each other (issue 30)
#   test_op_table     the op table (src/op/op_table.h): names, kinds, each parameter's default
#                     against the op's constructor, parsing in and out of range, a run entry in
#                     the CPU backend for every op
#   test_io           round trips of every format and channel count, the assets, hostile,
#                     damaged and truncated input, and writes that must fail cleanly
#   test_png_decode   the fast PNG decoding path (src/io/png_decode.c) against the source pixels and
#                     stb, and every kind of file it must leave to stb
#   test_error        messages (src/core/error.c) escape what must not reach a terminal and, too long,
#                     lose the middle of their path, never the reason
#   test_utf8         the UTF-8 validator (RFC 3629, exhaustive to 3 bytes and every code
#                     point) and the JSON string escaper of `info --json` (src/core/error.c; issue 25);
#                     its fuzz target is fuzz_utf8
#   test_exif         EXIF metadata (src/io/exif.c): every orientation in both byte orders,
#                     Make/Model/dates, the in-place rewrites, and malformed blobs (truncated, out
#                     of range, loops, count overflow, budget); its fuzz target is fuzz_exif
#   test_orient       imgpu_image_orient (src/io/orient.c) against the EXIF definition's own words, at
#                     8 and 16 bits and 1..4 channels, and the inverse orientations
#   test_batch_png    imgpu batch's parallel PNG encoder and its queue (issue 5)
#   test_batch_split  a batch split over processes (plan, staged shares, commit: imgpu.dask's C half)
#   test_jpeg_meta    the ICC profile in a JPEG encoded elsewhere (nvJPEG: imgpu__jpeg_insert_meta)
#                     split into APP2 segments, up to 255 and read back whole, and one byte more
#                     left out with a notice (issue 25)
#   test_jpeg_scan    the baseline scan walker that keeps a JPEG cut short from nvJPEG's engines
#                     (src/io/jpeg_scan.c, issue 25) against libjpeg-turbo's verdict on thousands
#                     of cut and altered scans, and against the walk it replaced (issue 27's
#                     faster walk) on 7,200 altered files and every cut; its fuzz target is fuzz_jpeg_scan
#   test_pages        multi-page TIFF output (imgpu_pages_*, each page's own metadata) and
#                     imgpu_image_load_pages (issue 30: --pages all)
set(_imgpu_unit_dir ${CMAKE_CURRENT_LIST_DIR})

imgpu_add_c_test(test_cpu_equalize ${_imgpu_unit_dir}/test_cpu_equalize.c)
imgpu_add_c_test(test_cpu_rotate ${_imgpu_unit_dir}/test_cpu_rotate.c)
imgpu_add_c_test(test_cpu_color ${_imgpu_unit_dir}/test_cpu_color.c)
imgpu_add_c_test(test_cpu_clahe ${_imgpu_unit_dir}/test_cpu_clahe.c)
imgpu_add_c_test(test_cpu_threads ${_imgpu_unit_dir}/test_cpu_threads.c)
imgpu_add_c_test(test_cpu_pool ${_imgpu_unit_dir}/test_cpu_pool.c)
imgpu_add_c_test(test_cpu_resize ${_imgpu_unit_dir}/test_cpu_resize.c TIMEOUT 120)
imgpu_add_c_test(test_image_pages ${_imgpu_unit_dir}/test_image_pages.c)
imgpu_add_c_test(test_plan ${_imgpu_unit_dir}/test_plan.c)
imgpu_add_c_test(test_auto_rule ${_imgpu_unit_dir}/test_auto_rule.c)
imgpu_add_c_test(test_op_table ${_imgpu_unit_dir}/test_op_table.c)

imgpu_add_c_test(test_io ${_imgpu_unit_dir}/test_io.c LABELS unit io TIMEOUT 300)
imgpu_add_c_test(test_png_decode ${_imgpu_unit_dir}/png_decode.c LABELS unit io TIMEOUT 120)
imgpu_add_c_test(test_error ${_imgpu_unit_dir}/test_error.c LABELS unit io TIMEOUT 60)
imgpu_add_c_test(test_utf8 ${_imgpu_unit_dir}/test_utf8.c LABELS unit TIMEOUT 60)
imgpu_add_c_test(test_jpeg_meta ${_imgpu_unit_dir}/test_jpeg_meta.c LABELS unit io TIMEOUT 60)

imgpu_add_c_test(test_exif ${_imgpu_unit_dir}/test_exif.c LABELS unit exif TIMEOUT 120)
imgpu_add_c_test(test_orient ${_imgpu_unit_dir}/test_orient.c LABELS unit exif TIMEOUT 60)

imgpu_add_c_test(test_batch_png ${_imgpu_unit_dir}/batch_png.c)
imgpu_add_c_test(test_jpeg_scan ${_imgpu_unit_dir}/test_jpeg_scan.c LABELS unit io TIMEOUT 120)
imgpu_add_c_test(test_batch_split ${_imgpu_unit_dir}/test_batch_split.c LABELS unit io TIMEOUT 60)
imgpu_add_c_test(test_pages ${_imgpu_unit_dir}/test_pages.c LABELS unit io TIMEOUT 60)
