# exif.cmake — EXIF metadata (src/exif.c) and the orientation transform (src/orient.c).
# test_exif: parse every orientation in both byte orders, Make/Model/dates, the in-place
#   rewrites, and malformed blobs (truncated, out of range, loops, count overflow, budget).
# test_orient: imgpu_image_orient against the EXIF definition's own words, at 8 and 16 bits
#   and 1..4 channels, and the inverse orientations.
# opencv_exif_orient: what OpenCV's imread shows for a JPEG with each orientation in its
#   APP1 == our parse of that APP1 + imgpu_image_orient of the stored pixels; skipped (77)
#   without Debian's python3 + cv2.
# The fuzz target is fuzz_exif (fuzz.cmake).
imgpu_add_unit_test(test_exif test_exif.c)
set_tests_properties(test_exif PROPERTIES LABELS "unit;exif" TIMEOUT 120)
imgpu_add_unit_test(test_orient test_orient.c)
set_tests_properties(test_orient PROPERTIES LABELS "unit;exif" TIMEOUT 60)

add_executable(exif_dump exif_dump.c)
target_link_libraries(exif_dump PRIVATE imgpu_core)
target_compile_options(exif_dump PRIVATE -Wall -Wextra)
if(IMGPU_PYTHON3)
  add_test(NAME opencv_exif_orient
           COMMAND ${IMGPU_PYTHON3} ${IMGPU_TESTS}/opencv_exif_orient.py $<TARGET_FILE:exif_dump>)
  set_tests_properties(opencv_exif_orient PROPERTIES LABELS "unit;exif;opencv" SKIP_RETURN_CODE 77
                       TIMEOUT 120)
endif()

# meta_cli: issue 16's photo fidelity through the CLI on PNG: orientation applied on load (and
#   kept with --no-auto-orient), ICC / EXIF / XMP / text carried byte for byte (EXIF with
#   Orientation 1 and the turned pixel size), --strip, info on many files and --json, '-' in
#   and out, batch naming files that are not images; exiftool as the outside reader.
if(IMGPU_PYTHON3)
  add_test(NAME meta_cli
           COMMAND ${IMGPU_PYTHON3} ${IMGPU_TESTS}/meta_cli.py $<TARGET_FILE:imgpu>
                   ${CMAKE_CURRENT_BINARY_DIR}/meta_cli.tmp)
  set_tests_properties(meta_cli PROPERTIES LABELS "cli;exif" TIMEOUT 120)
endif()
