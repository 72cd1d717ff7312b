# io.cmake — tests of the image I/O layer (src/io.c, src/stb_impl.c).
# test_io: round trips of every format and channel count, the assets, hostile, damaged and
#   truncated input, and writes that must fail cleanly.
# io_crosscheck: format variants (progressive JPEG, paletted/interlaced PNG, ...) decoded by
#   imgpu and compared with OpenCV or with the pixels they were built from; skipped (77)
#   without Debian's python3 + cv2.
imgpu_add_unit_test(test_io test_io.c)
set_tests_properties(test_io PROPERTIES LABELS "unit;io" TIMEOUT 300)

add_executable(io_dump io_dump.c)
target_link_libraries(io_dump PRIVATE imgpu_core)
target_compile_options(io_dump PRIVATE -Wall -Wextra)
if(IMGPU_PYTHON3)
  add_test(NAME io_crosscheck
           COMMAND ${IMGPU_PYTHON3} ${IMGPU_TESTS}/io_crosscheck.py $<TARGET_FILE:io_dump> ${IMGPU_ASSETS})
  set_tests_properties(io_crosscheck PROPERTIES LABELS "unit;io" SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()

# tiff_crosscheck: the TIFF codec (src/codec_tiff.c) against the source pixels, PIL and cv2 over
#   the depth x channels x compression x strips/tiles x planar x byte-order matrix (variants
#   made by tiffcp), pages, every --compression written and read back, metadata (exiftool),
#   the refused kinds and damaged files; skipped (77) without tiffcp, cv2 or PIL.
if(IMGPU_PYTHON3)
  add_test(NAME tiff_crosscheck
           COMMAND ${IMGPU_PYTHON3} ${IMGPU_TESTS}/tiff_crosscheck.py $<TARGET_FILE:imgpu>
                   $<TARGET_FILE:io_dump> ${CMAKE_CURRENT_BINARY_DIR}/tiff_crosscheck)
  set_tests_properties(tiff_crosscheck PROPERTIES LABELS "unit;io" SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()

# test_png_decode: the fast PNG decoding path (src/png_decode.c) against the source pixels and
#   stb, and every kind of file it must leave to stb.
imgpu_add_unit_test(test_png_decode png_decode.c)
set_tests_properties(test_png_decode PROPERTIES LABELS "unit;io" TIMEOUT 120)

# test_error: messages (src/error.c) escape what must not reach a terminal and, too long,
#   lose the middle of their path, never the reason.
imgpu_add_unit_test(test_error test_error.c)
set_tests_properties(test_error PROPERTIES LABELS "unit;io" TIMEOUT 60)
