# The Python module `imgpu` (issue 27): python/_imgpu.c on CPython's C API (no pybind11, no
# numpy C API) and the pure-Python layer python/imgpu/ (__init__.py, the .pyi stubs). Built
# when Python 3's headers are found (Debian: python3-dev), preferring Debian's /usr/bin/python3,
# which has numpy and pytest. It lands in <build>/python/imgpu, so that
#   PYTHONPATH=build/python /usr/bin/python3 -c "import imgpu"
# works after the build; `cmake --install` puts it in <prefix>/lib/python3/dist-packages.
# The extension links imgpu_core statically (it is a client of the library like the CLI, and
# uses the option grammars and the batch engine, which libimgpu.so does not export); it exports
# PyInit__imgpu alone. Sanitizer builds leave it out: an ASan extension cannot be loaded by an
# uninstrumented python (its tests then report skipped).
option(IMGPU_ENABLE_PYTHON "Build the Python module when Python 3's headers are found" ON)
set(IMGPU_HAVE_PYTHON OFF)
set(IMGPU_PYTHON_INSTALL_DIR "lib/python3/dist-packages" CACHE STRING
    "Where `cmake --install` puts the Python module, relative to the prefix")
if(IMGPU_ENABLE_PYTHON AND IMGPU_SANITIZE)
  message(STATUS "imgpu: Python module not built in a sanitizer build (IMGPU_SANITIZE)")
elseif(IMGPU_ENABLE_PYTHON)
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  if(Python3_Development.Module_FOUND)
    set(IMGPU_HAVE_PYTHON ON)
    set(IMGPU_PYTHON_BUILD_DIR ${PROJECT_BINARY_DIR}/python/imgpu)
    Python3_add_library(imgpu_python MODULE WITH_SOABI ${PROJECT_SOURCE_DIR}/python/_imgpu.c)
    target_link_libraries(imgpu_python PRIVATE imgpu_core)
    target_compile_options(imgpu_python PRIVATE ${IMGPU_C_WARNINGS} -fvisibility=hidden)
    target_link_options(imgpu_python PRIVATE
                        "LINKER:--version-script=${PROJECT_SOURCE_DIR}/python/_imgpu.map")
    set_target_properties(imgpu_python PROPERTIES
      OUTPUT_NAME _imgpu
      LIBRARY_OUTPUT_DIRECTORY ${IMGPU_PYTHON_BUILD_DIR}
      LINK_DEPENDS ${PROJECT_SOURCE_DIR}/python/_imgpu.map)
    # the pure-Python files beside the extension (copied again whenever one changes)
    file(GLOB IMGPU_PYTHON_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/imgpu/*)
    foreach(_f ${IMGPU_PYTHON_FILES})
      get_filename_component(_n ${_f} NAME)
      configure_file(${_f} ${IMGPU_PYTHON_BUILD_DIR}/${_n} COPYONLY)
    endforeach()
    # the type stubs: written from the op table by the built module (imgpu/_stubgen.py), so that
    # an op added to the registry gets its stub without an edit
    add_custom_command(
      OUTPUT ${IMGPU_PYTHON_BUILD_DIR}/__init__.pyi
      COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PROJECT_BINARY_DIR}/python PYTHONDONTWRITEBYTECODE=1
              ${Python3_EXECUTABLE} -m imgpu._stubgen ${PROJECT_SOURCE_DIR}/python/__init__.pyi.in
              ${IMGPU_PYTHON_BUILD_DIR}/__init__.pyi
      DEPENDS imgpu_python ${PROJECT_SOURCE_DIR}/python/__init__.pyi.in ${IMGPU_PYTHON_FILES}
      COMMENT "imgpu: Python type stubs from the op table"
      VERBATIM)
    add_custom_target(imgpu_python_stubs ALL DEPENDS ${IMGPU_PYTHON_BUILD_DIR}/__init__.pyi)
    install(DIRECTORY ${IMGPU_PYTHON_BUILD_DIR} DESTINATION ${IMGPU_PYTHON_INSTALL_DIR}
            PATTERN __pycache__ EXCLUDE)
    message(STATUS "imgpu: Python module ON (${Python3_EXECUTABLE}, Python ${Python3_VERSION})")
  else()
    message(STATUS "imgpu: Python module not built: Python 3's headers not found "
                   "(Debian: python3-dev)")
  endif()
endif()
