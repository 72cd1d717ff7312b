# robust.cmake — robustness tests (label robust; issue 7, docs/reliability.md):
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
#   robust.short_decode  issue 25: a decode that comes out short is corrupt data in every codec
#                  (JPEG-in-TIFF strips and tiles whose frame is smaller than the TIFF says, data
#                  that ends early, pages; PNG, JPEG, WebP, BMP, TGA, PNM guards): exit 1, no
#                  output, and every run twice under MALLOC_PERTURB_=85 / =170 so that heap bytes
#                  reaching an output would show as two different outputs
# All need Debian's /usr/bin/python3 (no extra modules); without it they report skipped.
# Not tests but run beside them (docs/reliability.md): robust_valgrind.sh (the CPU tests and
# imgpu's commands under valgrind memcheck, .ci/run) and robust_gpu.sh (the GPU tests and an
# imgpu run under compute-sanitizer, tests/device.sh).
set(_imgpu_robust_dir ${CMAKE_CURRENT_LIST_DIR})
set(IMGPU_ROBUST_TMP ${CMAKE_CURRENT_BINARY_DIR}/robust_tmp)
foreach(_r faults matrix hostile short_decode)
  if(IMGPU_PYTHON3)
    add_test(NAME robust.${_r}
             COMMAND ${IMGPU_PYTHON3} ${_imgpu_robust_dir}/robust_${_r}.py $<TARGET_FILE:imgpu>
                     ${IMGPU_ROBUST_TMP} ${IMGPU_ASSETS})
  else()
    add_test(NAME robust.${_r} COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
  endif()
  set_tests_properties(robust.${_r} PROPERTIES LABELS robust SKIP_RETURN_CODE 77 TIMEOUT 900)
endforeach()

# robust.NAME: tests/robust/robust_NAME.py IMGPU TMP [ARGS...], with the given labels; skipped
# (77) without Debian's python3
function(imgpu_robust_py name labels)
  if(IMGPU_PYTHON3)
    add_test(NAME robust.${name}
             COMMAND ${IMGPU_PYTHON3} ${_imgpu_robust_dir}/robust_${name}.py $<TARGET_FILE:imgpu>
                     ${IMGPU_ROBUST_TMP} ${ARGN})
  else()
    add_test(NAME robust.${name} COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
  endif()
  set_tests_properties(robust.${name} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77 TIMEOUT 300)
endfunction()

# robust.bounds: every op's result and memory bounded before allocation (--max-pixels on each
# result, --max-memory / IMGPU_MAX_MEMORY), impossible encodes refused before the op, the same
# through `imgpu batch` and the viewer's options; each refused run under an RLIMIT_AS cap.
imgpu_robust_py(bounds "robust" ${CMAKE_BINARY_DIR}/imgpu-view)
# robust.special  FIFOs (no writer, a writer, a stalled writer), pipes (/dev/stdin), /dev/zero,
#                 sockets as inputs; an output FIFO with and without a reader; batch over a
#                 folder holding a FIFO. Every run under a timeout: a hang fails the test.
imgpu_robust_py(special "robust" ${IMGPU_ASSETS})
# robust.manifest   hostile OUTDIR/.imgpu-batch files (issue 25): 280 MB of empty lines, one
#                   40 MB line and binary garbage (the batch completes with one notice, peak
#                   RSS under 100 MB), a hard or symbolic link planted as the manifest (refused;
#                   the linked file unchanged), a torn last line before later appends
# robust.info_text  `imgpu info` and `info --json` on hostile EXIF Make/Model/date, ICC
#                   descriptions and file names: nothing raw reaches the terminal, every JSON
#                   line is valid, well-formed UTF-8 and gives the file's bytes back
imgpu_robust_py(manifest "robust" ${IMGPU_ASSETS})
imgpu_robust_py(info_text "robust" ${IMGPU_ASSETS})
# robust.limits  --max-memory and --max-pixels from the header, before the decode (issue 25):
#                TIFF, WebP, PNG, JPEG and TGA bombs made on the fly; each refusal (equalize,
#                rotate, info, histogram, compare, batch) exits 1 naming the limit, writes
#                nothing, and peaks under 100 MiB RSS (wait4; 200 MiB under ASan)
imgpu_robust_py(limits "robust")
# robust.meta  issue 25's metadata defects through the CLI: ICC profiles too large for an output
#              named in a notice (JPEG over 255 APP2 segments, PNG over 64 MiB), carried up to
#              those bounds (and read back), an iCCP bomb skipped in bounded memory, the JPEG
#              reader's chunk order and consistency; EXIF the parser refuses not copied,
#              Orientation out of 1..8 written as 1, a TIFF's nested Exif pointer dropped
#              (exiftool -validate on every output). Needs PIL and exiftool, else skipped.
imgpu_robust_py(meta "robust" ${IMGPU_ASSETS})
# robust.nvjpeg_short  issue 25 on the GPU: JPEGs whose scan is cut short (EOI after it; with and
#                  without restart markers) among 24 valid ones in `imgpu batch --device cuda`,
#                  every JPEG through nvJPEG: each cut file fails with its reason and no output,
#                  the valid outputs are the same in two orders; with IMGPU_NVJPEG_STRICT=0 a
#                  cut file nvJPEG decodes never shows another file's pixels (exit 77 without
#                  a GPU or nvJPEG)
imgpu_robust_py(nvjpeg_short "gpu;robust" ${IMGPU_ASSETS})
