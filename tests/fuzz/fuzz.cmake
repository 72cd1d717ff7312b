# fuzz.cmake — fuzz targets (tests/fuzz/) and their regression corpus (tests/fuzz/regress/).
#
# Targets: decode (imgpu_image_load_memory, the CLI's decode path and limits), ops
# (decode + every CPU operation + encode to memory, small images), cli (the command-line
# parser of src/cli/), exif (the EXIF reader and in-place editor, src/io/exif.h), exif_write
# (the EXIF writers: imgpu_exif_rebuild's fresh blob checked by a walker of its own, parsed and
# rebuilt again; imgpu_meta_check_exif), jpeg (the JPEG
# codec, src/io/codec_jpeg.c: libjpeg-turbo's decode and encode, the metadata reader), webp
# (the WebP codec: load, metadata, lossy and lossless re-encode and load back) and tiff
# (the TIFF codec: load at pages 0 and 1, its metadata reader, re-encode and load back);
# issue 25 added manifest (imgpu batch's OUTDIR/.imgpu-batch reader, src/batch/batch_manifest.c,
# against a reference reader of its own, with a small line bound, and an append read back)
# utf8 (src/core/error.c's UTF-8 validator against RFC 3629, the JSON escaper decoded back to
# its input, the terminal escaper); issue 30 added
# bmp (the BMP codec, imgpu's own RLE8 / RLE4 decoder above all: load, an RLE image written
# back uncompressed and loaded back equal). Each is built twice:
#   fuzz_<t>_replay   any compiler: runs the target once per file. Test fuzz.regress.<t>
#                     (label unit) replays tests/fuzz/regress/<t>/ (every input that once
#                     failed), the hand-made seeds and tests/fuzz/corpus/<t>/ (a campaign's
#                     minimized corpus, where kept), in every build — under ASan+UBSan in
#                     an IMGPU_SANITIZE or IMGPU_FUZZ build.
#   fuzz_<t>          IMGPU_FUZZ=ON only (clang): the libFuzzer binary. Test fuzz.smoke.<t>
#                     (label fuzz) fuzzes for IMGPU_FUZZ_SMOKE_SECONDS (default 20: eleven targets, two at a time, keep CI under 15 minutes) from the
#                     seeds; any crash, leak, timeout or out-of-memory fails it and leaves the
#                     input in <build>/tests/fuzz-smoke/<t>/.
# tests/fuzz/run.sh runs the long campaigns (docs/reliability.md, "Fuzzing").
set(IMGPU_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
set(IMGPU_FUZZ_REGRESS ${IMGPU_FUZZ_DIR}/regress)
# 20 s: eleven targets share CI's two cores (the long campaigns are tests/fuzz/run.sh's)
set(IMGPU_FUZZ_SMOKE_SECONDS 20 CACHE STRING "Seconds per target of the fuzz.smoke.* tests")

# imgpu_fuzz_target(t [SECONDS]): SECONDS, where given, caps the smoke run below the default
function(imgpu_fuzz_target t)
  set(_secs ${IMGPU_FUZZ_SMOKE_SECONDS})
  if(ARGC GREATER 1 AND ARGV1 LESS _secs)
    set(_secs ${ARGV1})
  endif()
  set(_src ${IMGPU_FUZZ_DIR}/fuzz_${t}.c)
  set(_extra)
  if(t STREQUAL "cli")
    list(APPEND _extra ${IMGPU_CLI_SOURCES})
  endif()
  add_executable(fuzz_${t}_replay ${_src} ${IMGPU_FUZZ_DIR}/replay_main.c ${_extra})
  set(_targets fuzz_${t}_replay)
  if(IMGPU_FUZZ)
    add_executable(fuzz_${t} ${_src} ${_extra})
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
    list(APPEND _targets fuzz_${t})
  endif()
  foreach(_tg IN LISTS _targets)
    target_link_libraries(${_tg} PRIVATE imgpu_core)
    target_compile_options(${_tg} PRIVATE -Wall -Wextra)
    if(t STREQUAL "cli")
      # src/cli/main.c's main() becomes a function; the parse-only switch stops it before any I/O.
      set_source_files_properties(${PROJECT_SOURCE_DIR}/src/cli/main.c TARGET_DIRECTORY ${_tg}
                                  PROPERTIES COMPILE_DEFINITIONS "main=imgpu__cli_main;IMGPU_CLI_PARSE_ONLY=1")
    endif()
  endforeach()

  # git keeps no empty folder: a target with no failing input yet has no fuzz/regress/<t>
  set(_inputs)
  if(EXISTS ${IMGPU_FUZZ_REGRESS}/${t})
    list(APPEND _inputs ${IMGPU_FUZZ_REGRESS}/${t})
  endif()
  if(EXISTS ${IMGPU_FUZZ_DIR}/seeds/${t})
    list(APPEND _inputs ${IMGPU_FUZZ_DIR}/seeds/${t})
  endif()
  # a campaign's corpus, minimized (libFuzzer -merge=1), where one was kept: tests/fuzz/corpus/<t>
  if(EXISTS ${IMGPU_FUZZ_DIR}/corpus/${t})
    list(APPEND _inputs ${IMGPU_FUZZ_DIR}/corpus/${t})
  endif()
  add_test(NAME fuzz.regress.${t} COMMAND fuzz_${t}_replay ${_inputs})
  set_tests_properties(fuzz.regress.${t} PROPERTIES LABELS unit TIMEOUT 300)

  if(IMGPU_FUZZ)
    add_test(NAME fuzz.smoke.${t}
             COMMAND bash ${IMGPU_FUZZ_DIR}/run.sh $<TARGET_FILE:fuzz_${t}> ${t}
                     ${_secs} ${CMAKE_CURRENT_BINARY_DIR}/fuzz-smoke/${t})
    set_tests_properties(fuzz.smoke.${t} PROPERTIES LABELS fuzz TIMEOUT 600
                         ENVIRONMENT "IMGPU_ASSETS=${IMGPU_ASSETS}")
  endif()
endfunction()

foreach(_t decode ops cli exif exif_write jpeg jpeg_scan webp tiff bmp)
  imgpu_fuzz_target(${_t})
endforeach()
imgpu_fuzz_target(manifest)
# a small, loop-free target whose coverage stops growing within seconds (test_utf8 is exhaustive
# up to 3 bytes): 10 s of CI time, not 30
imgpu_fuzz_target(utf8 10)
