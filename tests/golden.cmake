# golden.cmake — golden-image tests and the OpenCV cross-checks (included by tests/CMakeLists.txt).
#
# Golden tests: one line of tests/golden/cases.txt = one case = two tests,
#   golden.<name>.cpu   label golden      `--device cpu`, must match the golden exactly
#   golden.<name>.cuda  label golden;gpu  `--device cuda`, within the case's gpu_tol
#                                         (0 for exact ops, 1 for bilinear/bicubic); exits 77,
#                                         a CTest skip, when imgpu reports no usable GPU
# run by tests/golden/run_case.sh, which leaves the actual output and a diff image under
# <build>/tests/golden/ on failure. Goldens are rewritten only by hand, with
# tests/golden/regenerate.sh (see README.md, "Tests").
#
# OpenCV cross-checks (tests/opencv_*.py, Debian's /usr/bin/python3 with cv2 + numpy):
#   opencv.equalize[.cuda]  imgpu equalize vs cv2.equalizeHist / YCrCb pipeline, bit for bit
#   opencv.rotate[.cuda]    imgpu rotate --crop vs cv2.warpAffine, interior PSNR >= 35 dB (8-bit),
#                           >= 65 dB on the 16-bit cases (full 16-bit precision, output stays 16-bit)
# Without such a Python they are still registered, as tests that exit 77 (skipped, not passed).

set(IMGPU_GOLDEN_DIR ${CMAKE_CURRENT_SOURCE_DIR}/golden)
set(IMGPU_GOLDEN_WORK ${CMAKE_CURRENT_BINARY_DIR}/golden)
set(IMGPU_GOLDEN_RUN ${IMGPU_GOLDEN_DIR}/run_case.sh)
find_program(IMGPU_SH sh REQUIRED)

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

# ---- OpenCV cross-checks ---------------------------------------------------------------------
set(_imgpu_have_cv2 FALSE)
if(IMGPU_PYTHON3)
  execute_process(COMMAND ${IMGPU_PYTHON3} -c "import cv2, numpy"
                  RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
  if(_rc EQUAL 0)
    set(_imgpu_have_cv2 TRUE)
  endif()
endif()
foreach(_check equalize rotate)
  foreach(_dev cpu cuda)
    if(_dev STREQUAL "cpu")
      set(_tname opencv.${_check})
      set(_labels opencv)
    else()
      set(_tname opencv.${_check}.cuda)
      set(_labels opencv gpu)
    endif()
    if(_imgpu_have_cv2)
      add_test(NAME ${_tname}
               COMMAND ${IMGPU_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/opencv_${_check}.py
                       $<TARGET_FILE:imgpu> ${IMGPU_ASSETS}
                       ${CMAKE_CURRENT_BINARY_DIR}/opencv/${_check} ${_dev})
    else()
      add_test(NAME ${_tname}
               COMMAND ${IMGPU_SH} -c "echo 'SKIP: /usr/bin/python3 with cv2 and numpy not found (apt-get install python3-opencv python3-numpy)'; exit 77")
    endif()
    set_tests_properties(${_tname} PROPERTIES LABELS "${_labels}" SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
endforeach()

if(NOT _imgpu_have_cv2)
  message(STATUS "imgpu: OpenCV cross-checks will be skipped: no /usr/bin/python3 with cv2+numpy")
endif()
message(STATUS "imgpu: ${_imgpu_golden_count} golden cases (x2: cpu, cuda)")
