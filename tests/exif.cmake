# exif.cmake — EXIF metadata (src/exif.c) and the orientation transform (src/orient.c).
# test_exif: parse every orientation in both byte orders, Make/Model/dates, the in-place
#   rewrites, and malformed blobs (truncated, out of range, loops, count overflow, budget).
# test_orient: imgpu_image_orient against the EXIF definition's own words, at 8 and 16 bits
#   and 1..4 channels, and the inverse orientations.
# The fuzz target is fuzz_exif (fuzz.cmake).
imgpu_add_unit_test(test_exif test_exif.c)
set_tests_properties(test_exif PROPERTIES LABELS "unit;exif" TIMEOUT 120)
imgpu_add_unit_test(test_orient test_orient.c)
set_tests_properties(test_orient PROPERTIES LABELS "unit;exif" TIMEOUT 60)

