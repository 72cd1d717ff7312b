# GPU tests: the CUDA backend against the CPU reference, and the scans against a sequential
# scan. Label `gpu`; they exit 77 (skipped) where no usable GPU exists.
if(IMGPU_HAVE_CUDA)
  foreach(t test_gpu_scan test_gpu_ops)
    add_executable(${t} ${t}.c)
    target_link_libraries(${t} PRIVATE imgpu_core)
    target_include_directories(${t} PRIVATE ${IMGPU_TESTS} ${PROJECT_SOURCE_DIR}/kernels)
    target_compile_options(${t} PRIVATE -Wall -Wextra)
    add_test(NAME ${t} COMMAND ${t})
    set_tests_properties(${t} PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu TIMEOUT 600)
  endforeach()
endif()
