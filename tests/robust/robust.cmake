# robust.cmake — robustness tests (label robust; issue 7, README "Reliability"):
#   robust.faults  full disk (/dev/full), file-size rlimit, read-only and missing directories,
#                  SIGKILL mid-write: the target is the old file or the complete new one; the
#                  --max-* limits and IMGPU_MAX_* variables; decompression bombs; on a GPU
#                  machine no device / device-memory cap / injected sticky fault (else those
#                  checks are skipped inside the test, which still checks the rest)
#   robust.hostile the attacks of issue 14 on the decoder and writer: repeated PNG chunks, batch
#                  outputs through planted symlinks, a decoder busy past --max-decode-time,
#                  the stb paths UBSan flagged
#   robust.matrix  every seed file truncated at many offsets and bit-flipped (fixed seed), and
#                  every crafted file: exit 0 with an image or exit 1 with a message, within
#                  10 s and 1 GiB (peak RSS), never a signal
# All need Debian's /usr/bin/python3 (no extra modules); without it they report skipped.
# Not tests but run beside them (README, "Reliability"): robust_valgrind.sh (the CPU tests and
# imgpu's commands under valgrind memcheck, .ci/run) and robust_gpu.sh (the GPU tests and an
# imgpu run under compute-sanitizer, tests/device.sh).
set(_imgpu_robust_dir ${CMAKE_CURRENT_LIST_DIR})
set(IMGPU_ROBUST_TMP ${CMAKE_CURRENT_BINARY_DIR}/robust_tmp)
foreach(_r faults matrix hostile)
  if(IMGPU_PYTHON3)
    add_test(NAME robust.${_r}
             COMMAND ${IMGPU_PYTHON3} ${_imgpu_robust_dir}/robust_${_r}.py $<TARGET_FILE:imgpu>
                     ${IMGPU_ROBUST_TMP} ${IMGPU_ASSETS})
  else()
    add_test(NAME robust.${_r} COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
  endif()
  set_tests_properties(robust.${_r} PROPERTIES LABELS robust SKIP_RETURN_CODE 77 TIMEOUT 900)
endforeach()

# robust.bounds: every op's result and memory bounded before allocation (--max-pixels on each
# result, --max-memory / IMGPU_MAX_MEMORY), impossible encodes refused before the op, the same
# through `imgpu batch` and the viewer's options; each refused run under an RLIMIT_AS cap.
if(IMGPU_PYTHON3)
  add_test(NAME robust.bounds
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_robust_dir}/robust_bounds.py $<TARGET_FILE:imgpu>
                   ${IMGPU_ROBUST_TMP} ${CMAKE_BINARY_DIR}/imgpu-view)
else()
  add_test(NAME robust.bounds COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
endif()
set_tests_properties(robust.bounds PROPERTIES LABELS robust SKIP_RETURN_CODE 77 TIMEOUT 300)
# robust.special  FIFOs (no writer, a writer, a stalled writer), pipes (/dev/stdin), /dev/zero,
#                 sockets as inputs; an output FIFO with and without a reader; batch over a
#                 folder holding a FIFO. Every run under a timeout: a hang fails the test.
if(IMGPU_PYTHON3)
  add_test(NAME robust.special
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_robust_dir}/robust_special.py $<TARGET_FILE:imgpu>
                   ${IMGPU_ROBUST_TMP} ${IMGPU_ASSETS})
else()
  add_test(NAME robust.special COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
endif()
set_tests_properties(robust.special PROPERTIES LABELS robust SKIP_RETURN_CODE 77 TIMEOUT 300)
# robust.meta  issue 25's metadata defects through the CLI: ICC profiles too large for an output
#              named in a notice (JPEG over 255 APP2 segments, PNG over 64 MiB), carried up to
#              those bounds (and read back), an iCCP bomb skipped in bounded memory, the JPEG
#              reader's chunk order and consistency; EXIF the parser refuses not copied,
#              Orientation out of 1..8 written as 1, a TIFF's nested Exif pointer dropped
#              (exiftool -validate on every output). Needs PIL and exiftool, else skipped.
if(IMGPU_PYTHON3)
  add_test(NAME robust.meta
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_robust_dir}/robust_meta.py $<TARGET_FILE:imgpu>
                   ${IMGPU_ROBUST_TMP} ${IMGPU_ASSETS})
else()
  add_test(NAME robust.meta COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
endif()
set_tests_properties(robust.meta PROPERTIES LABELS robust SKIP_RETURN_CODE 77 TIMEOUT 300)
