# libimgpu (issue 27): the library every front end links, as libimgpu.so (with a SONAME,
# exporting only imgpu_ names) and libimgpu.a, its public headers under include/imgpu/, and the
# files `cmake --install` puts beside them: imgpu.pc (pkg-config) and imgpuConfig.cmake with its
# version file and targets (find_package(imgpu)). Included by the top CMakeLists.txt once
# imgpu_core (and imgpu_kernels with CUDA) exist.
#
# - imgpu_core stays the static library the tools and tests link (it now holds src/lib/api.c and is
#   built position-independent); libimgpu.so is imgpu_core linked in whole, its exports cut to
#   imgpu_[!_]* by cmake/libimgpu.map; libimgpu.a is imgpu_core (+ imgpu_kernels with CUDA)
#   merged into one archive.
# - The public headers are include/imgpu/imgpu.h plus copies of the library headers it includes
#   (IMGPU_PUBLIC_HEADERS, from src/'s floors), made at configure time in <build>/include/imgpu, so that
#   src/ stays their one source; a program compiled in the build tree and an installed one
#   see the same files.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(IMGPU_SOVERSION 0)
set(IMGPU_BUILD_INCLUDE ${PROJECT_BINARY_DIR}/include)
# by their place in src/ (their floor); copied flat into include/imgpu/, where they include
# each other by bare name (as they do in src/, whose core, io and backend folders are include
# directories)
set(IMGPU_PUBLIC_HEADERS core/device.h core/error.h core/image.h core/imgpu_limits.h io/meta.h core/op.h
                          backend/ops.h io/io.h)
file(MAKE_DIRECTORY ${IMGPU_BUILD_INCLUDE}/imgpu)
foreach(_h ${IMGPU_PUBLIC_HEADERS})
  get_filename_component(_name ${_h} NAME)
  configure_file(${PROJECT_SOURCE_DIR}/src/${_h} ${IMGPU_BUILD_INCLUDE}/imgpu/${_name} COPYONLY)
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/include/imgpu/imgpu.h ${IMGPU_BUILD_INCLUDE}/imgpu/imgpu.h COPYONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.h.in ${IMGPU_BUILD_INCLUDE}/imgpu/version.h @ONLY)

target_sources(imgpu_core PRIVATE ${PROJECT_SOURCE_DIR}/src/lib/api.c)
target_include_directories(imgpu_core PUBLIC ${IMGPU_BUILD_INCLUDE})
set_target_properties(imgpu_core PROPERTIES POSITION_INDEPENDENT_CODE ON)
# The tools link the static library; the name says so where they link it.
add_library(imgpu::static ALIAS imgpu_core)

# ---- libimgpu.so ------------------------------------------------------------------------------
add_library(imgpu_shared SHARED ${PROJECT_SOURCE_DIR}/cmake/so_anchor.c)
target_include_directories(imgpu_shared PRIVATE ${IMGPU_BUILD_INCLUDE})
target_link_libraries(imgpu_shared PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,imgpu_core>")
target_link_options(imgpu_shared PRIVATE
                    "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/libimgpu.map")
set_target_properties(imgpu_shared PROPERTIES
  OUTPUT_NAME imgpu
  VERSION ${PROJECT_VERSION}
  SOVERSION ${IMGPU_SOVERSION}
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/libimgpu.map)
if(NOT IMGPU_SANITIZE)
  # every symbol resolved at link time (a sanitizer's runtime is the executable's, so not there)
  target_link_options(imgpu_shared PRIVATE "LINKER:--no-undefined")
endif()

# ---- libimgpu.a: imgpu_core and the kernels in one archive (ar's MRI script) ------------------
set(IMGPU_STATIC_ARCHIVE ${PROJECT_BINARY_DIR}/lib/libimgpu.a)
set(_imgpu_mri "CREATE ${IMGPU_STATIC_ARCHIVE}\nADDLIB $<TARGET_FILE:imgpu_core>\n")
set(_imgpu_static_deps imgpu_core)
if(TARGET imgpu_kernels)
  string(APPEND _imgpu_mri "ADDLIB $<TARGET_FILE:imgpu_kernels>\n")
  list(APPEND _imgpu_static_deps imgpu_kernels)
endif()
string(APPEND _imgpu_mri "SAVE\nEND\n")
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/libimgpu.mri CONTENT "${_imgpu_mri}")
add_custom_command(OUTPUT ${IMGPU_STATIC_ARCHIVE}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/lib
  COMMAND ${CMAKE_COMMAND} -E rm -f ${IMGPU_STATIC_ARCHIVE}
  COMMAND sh -c "'${CMAKE_AR}' -M < '${PROJECT_BINARY_DIR}/libimgpu.mri'"
  DEPENDS ${_imgpu_static_deps} ${PROJECT_BINARY_DIR}/libimgpu.mri
  COMMENT "Merging libimgpu.a"
  VERBATIM)
add_custom_target(imgpu_static ALL DEPENDS ${IMGPU_STATIC_ARCHIVE})

# ---- what a program linking libimgpu.a statically needs besides it ---------------------------
# (pkg-config --static imgpu; the imgpu::imgpu_static target). libimgpu.so carries them itself.
set(IMGPU_PC_REQUIRES_PRIVATE "libwebp libwebpmux libwebpdemux libtiff-4 zlib libdeflate")
set(IMGPU_PC_LIBS_PRIVATE "-ljpeg -lpthread -lm")
if(IMGPU_HAVE_LCMS2)   # CMYK JPEGs' colour management (src/codec_jpeg.c)
  string(APPEND IMGPU_PC_REQUIRES_PRIVATE " lcms2")
endif()
set(IMGPU_CMAKE_STATIC_DEPS "JPEG::JPEG;TIFF::TIFF;ZLIB::ZLIB;Threads::Threads;m")
if(IMGPU_HAVE_CUDA)
  string(PREPEND IMGPU_PC_LIBS_PRIVATE "-L${CUDAToolkit_LIBRARY_DIR} ")
  if(IMGPU_HAVE_NVJPEG)
    string(APPEND IMGPU_PC_LIBS_PRIVATE " -lnvjpeg")
  endif()
  string(APPEND IMGPU_PC_LIBS_PRIVATE " -lcudart_static -ldl -lrt -lstdc++")
endif()

# ---- install ----------------------------------------------------------------------------------
install(TARGETS imgpu_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${IMGPU_STATIC_ARCHIVE} DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${IMGPU_BUILD_INCLUDE}/imgpu DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# imgpu.pc: relative to its own place (${pcfiledir}), so `--prefix P` at install time works
file(RELATIVE_PATH IMGPU_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
configure_file(${PROJECT_SOURCE_DIR}/cmake/imgpu.pc.in ${PROJECT_BINARY_DIR}/imgpu.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/imgpu.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
set(IMGPU_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/imgpu)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/imgpuConfig.cmake.in
  ${PROJECT_BINARY_DIR}/imgpuConfig.cmake INSTALL_DESTINATION ${IMGPU_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/imgpuConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
file(RELATIVE_PATH IMGPU_CMAKE_TO_PREFIX /${IMGPU_CMAKE_DIR} /)
configure_file(${PROJECT_SOURCE_DIR}/cmake/imgpuTargets.cmake.in
  ${PROJECT_BINARY_DIR}/imgpuTargets.cmake @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/imgpuConfig.cmake ${PROJECT_BINARY_DIR}/imgpuConfigVersion.cmake
        ${PROJECT_BINARY_DIR}/imgpuTargets.cmake DESTINATION ${IMGPU_CMAKE_DIR})
