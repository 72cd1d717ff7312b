# libimgpu (label lib): the installed library as a user gets it. install_check.sh installs the
# build into a scratch prefix, checks the files and libimgpu.so's exports (imgpu_ names only),
# and builds and runs example.c (the README's C example) through pkg-config and through
# find_package(imgpu). It needs every target built (it installs them all).
add_test(NAME lib_install
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/install_check.sh ${PROJECT_BINARY_DIR}
                 $<TARGET_FILE:imgpu> ${CMAKE_CURRENT_BINARY_DIR}/lib_tmp ${IMGPU_ASSETS}/camera.png
                 $<IF:$<BOOL:${IMGPU_HAVE_PYTHON}>,1,0>)
set_tests_properties(lib_install PROPERTIES LABELS lib SKIP_RETURN_CODE 77 TIMEOUT 300)
