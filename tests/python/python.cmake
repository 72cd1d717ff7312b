# The Python module (label python): tests/python/test_*.py under pytest (Debian's
# python3-pytest), with the built module first on PYTHONPATH and the built imgpu CLI to compare
# against. Without the module (no python3-dev, or a sanitizer build) or without pytest, the test
# is still registered and reports skipped (77), never passed.
set(_imgpu_py_dir ${CMAKE_CURRENT_LIST_DIR})
set(_imgpu_have_pytest FALSE)
if(IMGPU_PYTHON3)
  execute_process(COMMAND ${IMGPU_PYTHON3} -c "import pytest, numpy"
                  RESULT_VARIABLE _imgpu_pytest_rc OUTPUT_QUIET ERROR_QUIET)
  if(_imgpu_pytest_rc EQUAL 0)
    set(_imgpu_have_pytest TRUE)
  endif()
endif()
if(IMGPU_HAVE_PYTHON AND _imgpu_have_pytest)
  add_test(NAME python_module
           COMMAND ${IMGPU_PYTHON3} -m pytest -q -p no:cacheprovider --ignore=${_imgpu_py_dir}/test_gpu.py
                   --ignore=${_imgpu_py_dir}/test_dask.py ${_imgpu_py_dir})
  # the GPU side (test_gpu.py): reports skipped (77) where torch.cuda is unavailable
  # python_gpu_memory: test_gpu.py's device-memory check alone, with no other test beside it
  # (RUN_SERIAL): free device memory is the whole GPU's, and the suite's other GPU tests
  # (ctest -j on the GPU machine) allocate and free hundreds of MB while it runs (runs 2 and 4
  # of session 14 read a 540 MB "leak" that way)
  foreach(_t python_gpu python_gpu_memory)
    if(_t STREQUAL "python_gpu")
      set(_k "not device_memory_flat")
    else()
      set(_k "device_memory_flat")
    endif()
    add_test(NAME ${_t}
             COMMAND sh -c "\"$0\" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null || { echo 'skip: torch.cuda is not available (the GPU machine runs these)'; exit 77; }; exec \"$0\" -m pytest -q -p no:cacheprovider \"$1\" -k \"$2\""
                     ${IMGPU_PYTHON3} ${_imgpu_py_dir}/test_gpu.py ${_k})
  endforeach()
  set_tests_properties(python_gpu_memory PROPERTIES RUN_SERIAL TRUE)
  set_tests_properties(python_module python_gpu python_gpu_memory PROPERTIES
    ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;IMGPU_CLI=$<TARGET_FILE:imgpu>;IMGPU_ASSETS=${IMGPU_ASSETS};IMGPU_PY_TMP=${CMAKE_CURRENT_BINARY_DIR}/python_tmp;PYTHONDONTWRITEBYTECODE=1")
  set_tests_properties(python_gpu python_gpu_memory PROPERTIES LABELS "python;gpu" SKIP_RETURN_CODE 77 TIMEOUT 600)
  # imgpu.dask (test_dask.py): `imgpu batch` on a LocalCluster of 2 worker processes, against the
  # CLI; CUDA workers with IMGPU_PYTEST_DEVICE=cuda on the GPU machine. Reports skipped (77) where
  # dask.distributed does not import (Debian: python3-dask python3-distributed). The caller's
  # PYTHONPATH is kept after the built module's, so Dask unpacked elsewhere (the GPU machine's
  # Python has none) is found. Label python only: the sanitizer builds have no Python module,
  # and valgrind runs the CLI.
  add_test(NAME python_dask
           COMMAND sh -c "\"$0\" -c 'import dask.distributed' 2>/dev/null || { echo 'skip: dask.distributed does not import (Debian: python3-dask python3-distributed)'; exit 77; }; exec \"$0\" -m pytest -q -p no:cacheprovider \"$1\""
                   ${IMGPU_PYTHON3} ${_imgpu_py_dir}/test_dask.py)
  set_tests_properties(python_dask PROPERTIES LABELS python SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "IMGPU_CLI=$<TARGET_FILE:imgpu>;IMGPU_ASSETS=${IMGPU_ASSETS};PYTHONDONTWRITEBYTECODE=1"
    ENVIRONMENT_MODIFICATION "PYTHONPATH=path_list_prepend:${PROJECT_BINARY_DIR}/python")
elseif(NOT IMGPU_HAVE_PYTHON)
  add_test(NAME python_module COMMAND sh -c "echo 'skip: the Python module is not built (python3-dev missing, or a sanitizer build)'; exit 77")
else()
  add_test(NAME python_module COMMAND sh -c "echo 'skip: /usr/bin/python3 lacks pytest or numpy (Debian: python3-pytest python3-numpy)'; exit 77")
endif()
set_tests_properties(python_module PROPERTIES LABELS python SKIP_RETURN_CODE 77 TIMEOUT 600)
