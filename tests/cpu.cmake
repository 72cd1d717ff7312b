# CPU reference backend tests (label unit): C unit tests, plus OpenCV cross-checks in Python
# that drive the backend through test_cpu_driver (raw files in, raw files out). The Python
# checks need Debian's /usr/bin/python3 with cv2 and numpy; without them they exit 77, which
# CTest reports as skipped, never as passed.

imgpu_add_unit_test(test_cpu_equalize test_cpu_equalize.c)
imgpu_add_unit_test(test_cpu_rotate test_cpu_rotate.c)
imgpu_add_unit_test(test_cpu_color test_cpu_color.c)
imgpu_add_unit_test(test_plan test_plan.c)

add_executable(test_cpu_driver test_cpu_driver.c)
target_link_libraries(test_cpu_driver PRIVATE imgpu_core)
target_compile_options(test_cpu_driver PRIVATE -Wall -Wextra)

set(_imgpu_cpu_cv2 OFF)
if(IMGPU_PYTHON3)
  execute_process(COMMAND ${IMGPU_PYTHON3} -c "import cv2, numpy"
                  RESULT_VARIABLE _imgpu_cpu_cv2_rc OUTPUT_QUIET ERROR_QUIET)
  if(_imgpu_cpu_cv2_rc EQUAL 0)
    set(_imgpu_cpu_cv2 ON)
  endif()
endif()
if(NOT _imgpu_cpu_cv2)
  message(STATUS "imgpu: /usr/bin/python3 with cv2 not found: OpenCV cross-checks will be skipped "
                 "(Debian: python3-opencv)")
endif()

# imgpu_cpu_py_test(name script args...): run a cross-check script, or skip (77) without cv2.
function(imgpu_cpu_py_test name script)
  if(_imgpu_cpu_cv2)
    add_test(NAME ${name} COMMAND ${IMGPU_PYTHON3} ${IMGPU_TESTS}/${script} ${ARGN})
  else()
    add_test(NAME ${name} COMMAND sh -c "echo 'skip: no /usr/bin/python3 with cv2'; exit 77")
  endif()
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS unit
                       ENVIRONMENT "IMGPU_ASSETS=${IMGPU_ASSETS}")
endfunction()

imgpu_cpu_py_test(cpu_ycc_exhaustive cpu_ycc_exhaustive.py $<TARGET_FILE:test_cpu_driver>)
imgpu_cpu_py_test(cpu_opencv_equalize cpu_opencv_equalize.py $<TARGET_FILE:test_cpu_driver>
                  ${IMGPU_ASSETS})
imgpu_cpu_py_test(cpu_opencv_rotate cpu_opencv_rotate.py $<TARGET_FILE:test_cpu_driver>
                  ${IMGPU_ASSETS})

# The CPU backend on 1, 2, 3, 4 and 7 threads: byte-identical outputs (src/cpu/parallel.h).
imgpu_add_unit_test(test_cpu_threads test_cpu_threads.c)
# ... and through the CLI: IMGPU_CPU_THREADS=1, 3, 4, 0 (ignored: the cores) on the assets.
add_test(NAME cpu_threads_cli
         COMMAND bash ${IMGPU_TESTS}/cpu_threads_cli.sh $<TARGET_FILE:imgpu>
                 ${CMAKE_CURRENT_BINARY_DIR}/cpu_threads_tmp ${IMGPU_ASSETS})
set_tests_properties(cpu_threads_cli PROPERTIES LABELS unit)
