# golden.cmake — golden-image tests (included by tests/CMakeLists.txt).
#
# Golden tests: one line of tests/golden/cases.txt = one case = two tests,
#   golden.<name>.cpu   label golden      `--device cpu`, must match the golden exactly
#   golden.<name>.cuda  label golden;gpu  `--device cuda`, within the case's gpu_tol
#                                         (0 for exact ops, 1 for bilinear/bicubic); exits 77,
#                                         a CTest skip, when imgpu reports no usable GPU
# run by tests/golden/run_case.sh, which leaves the actual output and a diff image under
# <build>/tests/golden/ on failure. Goldens are rewritten only by hand, with
# tests/golden/regenerate.sh (see docs/testing.md).

set(IMGPU_GOLDEN_DIR ${CMAKE_CURRENT_LIST_DIR})
set(IMGPU_GOLDEN_WORK ${CMAKE_CURRENT_BINARY_DIR}/golden)
set(IMGPU_GOLDEN_RUN ${IMGPU_GOLDEN_DIR}/run_case.sh)

set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${IMGPU_GOLDEN_DIR}/cases.txt)
file(STRINGS ${IMGPU_GOLDEN_DIR}/cases.txt _imgpu_golden_lines)
set(_imgpu_golden_count 0)
foreach(_line IN LISTS _imgpu_golden_lines)
  string(STRIP "${_line}" _line)
  if(_line STREQUAL "" OR _line MATCHES "^#")
    continue()
  endif()
  string(REGEX REPLACE "[ \t]+" ";" _f "${_line}")
  list(LENGTH _f _n)
  if(_n LESS 5)
    message(FATAL_ERROR "tests/golden/cases.txt: malformed line: ${_line}")
  endif()
  list(GET _f 0 _name)
  list(GET _f 2 _gpu_tol)
  list(GET _f 3 _asset)
  list(SUBLIST _f 4 -1 _op_args)  # operation, then its arguments

  foreach(_dev cpu cuda)
    if(_dev STREQUAL "cpu")
      set(_tol 0)
      set(_labels golden)
    else()
      set(_tol ${_gpu_tol})
      set(_labels golden gpu)
    endif()
    add_test(NAME golden.${_name}.${_dev}
             COMMAND ${IMGPU_SH} ${IMGPU_GOLDEN_RUN} $<TARGET_FILE:imgpu> ${_dev} ${_tol}
                     ${IMGPU_GOLDEN_DIR}/${_name}.png ${IMGPU_GOLDEN_WORK} ${_name}
                     ${IMGPU_ASSETS}/${_asset} ${_op_args})
    set_tests_properties(golden.${_name}.${_dev} PROPERTIES
                         LABELS "${_labels}" SKIP_RETURN_CODE 77 TIMEOUT 120)
  endforeach()
  math(EXPR _imgpu_golden_count "${_imgpu_golden_count} + 1")
endforeach()

# `imgpu compare` is the judge of every case above: make sure it can say "different".
add_test(NAME golden.compare_selftest
         COMMAND ${IMGPU_SH} ${IMGPU_GOLDEN_DIR}/compare_selftest.sh $<TARGET_FILE:imgpu>
                 ${IMGPU_ASSETS} ${IMGPU_GOLDEN_WORK})
set_tests_properties(golden.compare_selftest PROPERTIES LABELS golden TIMEOUT 60)

message(STATUS "imgpu: ${_imgpu_golden_count} golden cases (x2: cpu, cuda)")
