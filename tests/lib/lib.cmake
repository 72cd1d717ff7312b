# libimgpu (label lib): the installed library as a user gets it. install_check.sh installs the
# build into a scratch prefix, checks the files and libimgpu.so's exports (imgpu_ names only),
# and builds and runs example.c (the README's C example) through pkg-config and through
# find_package(imgpu). It needs every target built (it installs them all).
if(IMGPU_SANITIZE)
  # an instrumented libimgpu.so needs the sanitizer's runtime loaded first by every program that
  # links it: not what a user installs; the release build runs this test
  add_test(NAME lib_install COMMAND sh -c "echo 'skip: sanitizer build (IMGPU_SANITIZE)'; exit 77")
else()
add_test(NAME lib_install
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/install_check.sh ${PROJECT_BINARY_DIR}
                 $<TARGET_FILE:imgpu> ${CMAKE_CURRENT_BINARY_DIR}/lib_tmp ${IMGPU_ASSETS}/camera.png
                 $<IF:$<BOOL:${IMGPU_HAVE_PYTHON}>,1,0>)
endif()
set_tests_properties(lib_install PROPERTIES LABELS lib SKIP_RETURN_CODE 77 TIMEOUT 300)

# test_api: the library's own additions (contexts, wrapped memory, run_into) in every build,
# the sanitizer builds included.
imgpu_add_c_test(test_api ${CMAKE_CURRENT_LIST_DIR}/test_api.c LABELS lib)
