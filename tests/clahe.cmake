# clahe.cmake — issue 6: CLAHE, 16-bit processing, equalize formulas (included by
# tests/CMakeLists.txt).
#   opencv.clahe          imgpu clahe vs cv2.createCLAHE (8- and 16-bit, gray and color), 16-bit
#                         equalize written as 16-bit PNG/PNM and decoded by cv2 (label opencv)
#   test_cpu_clahe        unit tests of the CPU reference (geometry, clip, reflect-101, formulas)
#   test_gpu_clahe        (when tests/test_gpu_clahe.c exists) CUDA CLAHE vs the CPU, bit for bit
#   equalize_formula      --formula pil / imagemagick vs independent Python transliterations
imgpu_add_unit_test(test_cpu_clahe test_cpu_clahe.c)

# The CUDA backend runs CLAHE, 16-bit equalize and the formulas too: test_gpu_clahe holds it to
# the CPU bit for bit, and the golden cases (tests/golden/cases.txt) register .cuda variants.
if(_imgpu_have_cv2)
  add_test(NAME opencv.clahe
           COMMAND ${IMGPU_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/opencv_clahe.py
                   $<TARGET_FILE:imgpu> ${IMGPU_ASSETS} ${CMAKE_CURRENT_BINARY_DIR}/opencv/clahe_cpu cpu)
else()
  add_test(NAME opencv.clahe COMMAND ${IMGPU_SH} -c "echo 'SKIP: /usr/bin/python3 with cv2 not found'; exit 77")
endif()
set_tests_properties(opencv.clahe PROPERTIES LABELS opencv SKIP_RETURN_CODE 77 TIMEOUT 300)

if(IMGPU_PYTHON3)
  add_test(NAME equalize_formula
           COMMAND ${IMGPU_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/equalize_formula.py
                   $<TARGET_FILE:imgpu> ${IMGPU_ASSETS} ${CMAKE_CURRENT_BINARY_DIR}/formula cpu)
  set_tests_properties(equalize_formula PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()

if(IMGPU_HAVE_CUDA AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_clahe.c)
  add_executable(test_gpu_clahe test_gpu_clahe.c)
  target_link_libraries(test_gpu_clahe PRIVATE imgpu_core)
  target_include_directories(test_gpu_clahe PRIVATE ${IMGPU_TESTS} ${PROJECT_SOURCE_DIR}/kernels)
  target_compile_options(test_gpu_clahe PRIVATE -Wall -Wextra)
  add_test(NAME test_gpu_clahe COMMAND test_gpu_clahe)
  set_tests_properties(test_gpu_clahe PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu TIMEOUT 600)
endif()
