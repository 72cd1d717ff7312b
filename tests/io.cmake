# io.cmake — tests of the image I/O layer (src/io.c, src/stb_impl.c): round trips of every
# format and channel count, the assets, hostile and truncated input, and failing writes.
imgpu_add_unit_test(test_io test_io.c)
set_tests_properties(test_io PROPERTIES LABELS "unit;io" TIMEOUT 300)
