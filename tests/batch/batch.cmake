# imgpu batch (issue 5): the command end to end on the CPU backend (cli; OpenCV decodes the
# PNGs) and the GPU stage (gpu: two sessions per worker, --devices, the OOM fallback; exit 77
# without a GPU). Its parallel PNG encoder and queue are unit/'s (test_batch_png, C).
set(_imgpu_batch_dir ${CMAKE_CURRENT_LIST_DIR})

set(IMGPU_BATCH_TMP ${CMAKE_CURRENT_BINARY_DIR}/batch_tmp)
if(IMGPU_PYTHON3)
  add_test(NAME batch_cli
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_batch_dir}/batch_cli.py $<TARGET_FILE:imgpu>
                   ${IMGPU_BATCH_TMP} ${IMGPU_ASSETS})
  add_test(NAME batch_gpu
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_batch_dir}/batch_gpu.py $<TARGET_FILE:imgpu>
                   ${IMGPU_BATCH_TMP} ${IMGPU_ASSETS})
  # issue 17: JPEG through nvJPEG in batch (exit 77 without nvJPEG or a GPU)
  add_test(NAME batch_nvjpeg
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_batch_dir}/batch_nvjpeg.py $<TARGET_FILE:imgpu>
                   ${IMGPU_BATCH_TMP} ${IMGPU_ASSETS})
  # issue 30: EXIF-oriented JPEGs through nvJPEG, turned upright on the GPU (the CPU half runs
  # everywhere; exit 77 without nvJPEG or a GPU once it passed)
  add_test(NAME batch_nvjpeg_orient
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_batch_dir}/batch_nvjpeg_orient.py $<TARGET_FILE:imgpu>
                   ${IMGPU_BATCH_TMP} ${IMGPU_ASSETS})
  add_test(NAME batch_interrupt
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_batch_dir}/batch_interrupt.py $<TARGET_FILE:imgpu>
                   ${IMGPU_BATCH_TMP} ${IMGPU_ASSETS})
  # issue 15: OUTDIR/.imgpu-batch, what made each output; stale outputs are not skipped
  add_test(NAME batch_manifest
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_batch_dir}/batch_manifest.py $<TARGET_FILE:imgpu>
                   ${IMGPU_BATCH_TMP} ${IMGPU_ASSETS})
else()
  add_test(NAME batch_cli COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
  add_test(NAME batch_gpu COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
  add_test(NAME batch_nvjpeg COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
  add_test(NAME batch_nvjpeg_orient COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
  add_test(NAME batch_interrupt COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
  add_test(NAME batch_manifest COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
endif()
set_tests_properties(batch_cli PROPERTIES LABELS "cli;opencv" SKIP_RETURN_CODE 77 TIMEOUT 600)
set_tests_properties(batch_interrupt PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
set_tests_properties(batch_manifest PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
# COST: the longest GPU test (about 40 s alone on an H100, several times that among the
# whole suite) starts first under ctest -j, so it is not the tail of the run
set_tests_properties(batch_gpu PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600 COST 1000)
if(IMGPU_PYTHON3)   # its ~40 single commands through cli_inproc (tests/cli/cli.cmake): one CUDA start-up
  set_tests_properties(batch_gpu PROPERTIES ENVIRONMENT "IMGPU_INPROC=$<TARGET_FILE:cli_inproc>")
endif()
set_tests_properties(batch_nvjpeg PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300 COST 900)
set_tests_properties(batch_nvjpeg_orient PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300 COST 500)

# issue 15 (one option table): every single-image option works in batch, equal to the single
# command with it (--formula, --depth, --max-file-size, --max-decode-time), one error wording.
if(IMGPU_PYTHON3)
  add_test(NAME batch_options
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_batch_dir}/batch_options.py $<TARGET_FILE:imgpu>
                   ${IMGPU_BATCH_TMP} ${IMGPU_ASSETS})
else()
  add_test(NAME batch_options COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
endif()
set_tests_properties(batch_options PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)

# issue 30: -o with missing parents, --name's {inext}, one line for many stale outputs (--verbose)
if(IMGPU_PYTHON3)
  add_test(NAME batch_ux
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_batch_dir}/batch_ux.py $<TARGET_FILE:imgpu>
                   ${IMGPU_BATCH_TMP} ${IMGPU_ASSETS})
else()
  add_test(NAME batch_ux COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
endif()
set_tests_properties(batch_ux PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
