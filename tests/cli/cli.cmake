# CLI tests (label cli): drive the built imgpu binary end to end. Each script gets the
# binary, a scratch root in the build tree (each run makes and removes its own directory
# there; IMGPU_KEEP_TMP=1 keeps a failing run's files) and the assets directory.
#   cli_usage      parsing, usage errors (exit 2, nothing written), --help, --version
#   cli_bad_input  broken and hostile inputs through every command (exit 1, no leftovers)
#   cli_output     successful runs, unwritable outputs, output == input, --device
#   cli_reports    histogram (table, --csv, --plot), info, compare (--diff, --max-abs)
#   cli_messages   long paths keep the reason, hostile file names and bytes print escaped,
#                  a decoder reason names the right format
#   cli_compare16  compare on 16-bit images and 8 vs 16 bits, against numpy (needs numpy, cv2)
#   cli_plot       histogram --plot read back as pixels: bins, range, x/y ticks, --log, --cdf
#                  (needs cv2 and numpy: skipped, 77, without them)
#   cli_info_header  info reads headers, not pixels (--decode decodes): the same fields either way
#   cli_no_gpu     no GPU (CUDA_VISIBLE_DEVICES=""): the notices say so, a resumed batch says
#                  why it ran on the CPU, bench times the CPU backend (and OpenCV's where cv2 is)
# The Python scripts need /usr/bin/python3 (cv2 is optional there: without it a few pixel
# checks fall back to `imgpu info`); without any python3 they report skipped (77).
# Below them: options_help, docs_options, layers, auto_start, meta_cli, cpu_threads_cli, equalize_formula.
set(_imgpu_cli_dir ${CMAKE_CURRENT_LIST_DIR})
set(IMGPU_CLI_TMP ${CMAKE_CURRENT_BINARY_DIR}/cli_tmp)
# cli_inproc (tests/common/cli_inproc.c): the imgpu command line with many commands in one
#   process, for the .cuda comparison tests (hundreds of commands: one CUDA start-up instead of
#   one each, through cli_common.Runner where IMGPU_INPROC names it); cli_inproc_check holds it
#   to imgpu's own processes.
set(_imgpu_inproc_sources ${IMGPU_CLI_SOURCES})
list(FILTER _imgpu_inproc_sources EXCLUDE REGEX "/src/cli/main\\.c$")
add_executable(cli_inproc ${IMGPU_TESTS}/common/cli_inproc.c ${_imgpu_inproc_sources})
target_link_libraries(cli_inproc PRIVATE imgpu::static)
target_compile_options(cli_inproc PRIVATE ${IMGPU_C_WARNINGS})
if(IMGPU_PYTHON3)
  add_test(NAME cli_inproc_check
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/cli_inproc_check.py $<TARGET_FILE:imgpu>
                   ${IMGPU_CLI_TMP} ${IMGPU_ASSETS})
  set_tests_properties(cli_inproc_check PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 120
                       ENVIRONMENT "IMGPU_INPROC=$<TARGET_FILE:cli_inproc>")
endif()

add_test(NAME cli_usage
         COMMAND bash ${_imgpu_cli_dir}/cli_usage.sh $<TARGET_FILE:imgpu> ${IMGPU_CLI_TMP} ${IMGPU_ASSETS})

foreach(_imgpu_cli cli_bad_input cli_output cli_reports cli_messages cli_compare16 cli_plot cli_no_gpu cli_resize cli_info_header)
  if(IMGPU_PYTHON3)
    add_test(NAME ${_imgpu_cli}
             COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/${_imgpu_cli}.py $<TARGET_FILE:imgpu>
                     ${IMGPU_CLI_TMP} ${IMGPU_ASSETS})
  else()
    add_test(NAME ${_imgpu_cli} COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
  endif()
endforeach()

set_tests_properties(cli_usage cli_bad_input cli_output cli_reports cli_messages cli_compare16 cli_plot cli_no_gpu cli_resize cli_info_header PROPERTIES
                     LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 600)

# cli_rotate_sense (issue 30): --clockwise (CLI, batch, Python where built), no help lists an
# option twice, --background (rotate's fill) against --flatten (what JPEG flattens onto).
if(IMGPU_PYTHON3)
  add_test(NAME cli_rotate_sense
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/cli_rotate_sense.py $<TARGET_FILE:imgpu>
                   ${IMGPU_CLI_TMP} ${IMGPU_ASSETS})
  if(TARGET imgpu_python)
    set_tests_properties(cli_rotate_sense PROPERTIES ENVIRONMENT "IMGPU_PYTHONPATH=${PROJECT_BINARY_DIR}/python")
  endif()
else()
  add_test(NAME cli_rotate_sense COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
endif()
set_tests_properties(cli_rotate_sense PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)

# options_help (issue 15): every front end's --help against options.h's one option table
# (each entry a front end accepts is in its help; nothing in a help names an option that
# front end does not parse). options_table prints the table.
imgpu_add_test_tool(options_table ${_imgpu_cli_dir}/options_table.c)
if(IMGPU_PYTHON3)
  if(TARGET imgpu-view)
    set(_imgpu_view_arg $<TARGET_FILE:imgpu-view>)
  else()
    set(_imgpu_view_arg -)
  endif()
  add_test(NAME options_help
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/options_help.py $<TARGET_FILE:options_table>
                   $<TARGET_FILE:imgpu> ${_imgpu_view_arg})
else()
  add_test(NAME options_help COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
endif()
set_tests_properties(options_help PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)

# docs_options (issue 26): README.md and docs/*.md against the helps, the one source for
# options: every --option the pages name is in the --help it belongs to, every option a
# --help lists is documented in docs/cli.md, and the pages' links and anchors resolve.
if(IMGPU_PYTHON3)
  add_test(NAME docs_options
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/docs_options.py $<TARGET_FILE:imgpu>
                   ${PROJECT_SOURCE_DIR})
else()
  add_test(NAME docs_options COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
endif()
set_tests_properties(docs_options PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 120)

# layers (issue 26): the house's floors, core < op < io < backend < lib < front ends: no circle
# of includes or of calls (nm on the build tree's objects) between files, no lower floor that
# includes or calls a higher one, the codec table the only way into a codec. Plain python3,
# about a second.
if(IMGPU_PYTHON3)
  add_test(NAME layers COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/layers.py ${PROJECT_SOURCE_DIR}
                                 ${PROJECT_BINARY_DIR})
else()
  add_test(NAME layers COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
endif()
set_tests_properties(layers PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 60)

# `--device auto` starts CUDA only for a job the GPU could win (issue 17): seen through the
# dynamic loader; skipped (77) in a build without CUDA.
add_test(NAME auto_start
         COMMAND bash ${_imgpu_cli_dir}/auto_start.sh $<TARGET_FILE:imgpu>
                 ${CMAKE_CURRENT_BINARY_DIR}/auto_start_tmp ${IMGPU_ASSETS})
set_tests_properties(auto_start PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 120)

# meta_cli: issue 16's photo fidelity through the CLI on PNG: orientation applied on load (and
#   kept with --no-auto-orient), ICC / EXIF / XMP / text carried byte for byte (EXIF with
#   Orientation 1 and the turned pixel size), --strip, info on many files and --json, '-' in
#   and out, batch naming files that are not images; exiftool as the outside reader.
if(IMGPU_PYTHON3)
  add_test(NAME meta_cli
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/meta_cli.py $<TARGET_FILE:imgpu>
                   ${CMAKE_CURRENT_BINARY_DIR}/meta_cli.tmp)
  set_tests_properties(meta_cli PROPERTIES LABELS "cli;exif" TIMEOUT 120)
endif()

# cpu_threads_cli: the CPU backend through the CLI with IMGPU_CPU_THREADS=1, 3, 4, 0 (ignored:
#   the cores) on the assets, byte-identical outputs (unit/test_cpu_threads.c: the same in C).
add_test(NAME cpu_threads_cli
         COMMAND bash ${_imgpu_cli_dir}/cpu_threads_cli.sh $<TARGET_FILE:imgpu>
                 ${CMAKE_CURRENT_BINARY_DIR}/cpu_threads_tmp ${IMGPU_ASSETS})
set_tests_properties(cpu_threads_cli PROPERTIES LABELS unit)

# equalize_formula: --formula pil / imagemagick vs independent Python transliterations (issue 6).
if(IMGPU_PYTHON3)
  add_test(NAME equalize_formula
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/equalize_formula.py
                   $<TARGET_FILE:imgpu> ${IMGPU_ASSETS} ${CMAKE_CURRENT_BINARY_DIR}/formula cpu)
  set_tests_properties(equalize_formula PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()

# cli_io_messages (issue 30's small things): info's blank lines only between printed blocks, a
#   padded ICC description trimmed, an output that is a folder called one, .gif (and other
#   formats imgpu knows but cannot write) outputs refused by name.
if(IMGPU_PYTHON3)
  add_test(NAME cli_io_messages
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/cli_io_messages.py $<TARGET_FILE:imgpu>
                   ${IMGPU_CLI_TMP} ${IMGPU_ASSETS})
  set_tests_properties(cli_io_messages PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
# geom_ops (issue 28, op-geom): flip, crop and convert through the CLI and batch against numpy
#   transliterations of their rules (every depth, layout, edge size), cv2.flip / cv2.transpose
#   where cv2 is installed; .cuda: the same on the GPU (exits 77 without one).
# The CUDA variant's ~800 commands run through cli_inproc (IMGPU_INPROC; cli_common.Runner): one
# process, one CUDA start-up, the first command of each name (flip, crop, convert, rotate, batch,
# info) an imgpu process of its own. (As a process each, ~1 s of GPU start-up apiece beside the
# suite's other GPU tests, it ran past 300 s on the H200, test_crop alone past 300 s.) An
# optional 5th argument runs some of the test functions only (comma-separated).
foreach(_dev cpu cuda)
  if(_dev STREQUAL "cpu")
    set(_tname geom_ops)
    set(_labels cli)
  else()
    set(_tname geom_ops.cuda)
    set(_labels cli gpu)
  endif()
  if(IMGPU_PYTHON3)
    add_test(NAME ${_tname}
             COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/geom_ops.py $<TARGET_FILE:imgpu> ${IMGPU_CLI_TMP}
                     ${IMGPU_ASSETS} ${_dev})
  else()
    add_test(NAME ${_tname} COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
  endif()
  set_tests_properties(${_tname} PROPERTIES LABELS "${_labels}" SKIP_RETURN_CODE 77 TIMEOUT 300)
  if(_dev STREQUAL "cuda")
    set_tests_properties(${_tname} PROPERTIES ENVIRONMENT "IMGPU_INPROC=$<TARGET_FILE:cli_inproc>")
  endif()
endforeach()
# crop_imagemagick (issue 28, op-crop): imgpu crop --gravity/--size and --trim against
#   ImageMagick 6 itself (convert-im6.q16; skipped without it or cv2). geom_ops' numpy
#   transliteration is the CI oracle; this adds no coverage of imgpu's code (label oracle-only:
#   the sanitizer pass leaves it out).
if(IMGPU_PYTHON3)
  add_test(NAME crop_imagemagick
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/crop_imagemagick.py $<TARGET_FILE:imgpu>
                   /usr/bin/convert-im6.q16 ${IMGPU_CLI_TMP})
  set_tests_properties(crop_imagemagick PROPERTIES LABELS "cli;oracle-only" SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
# tone_formula (issue 28, op-tone): the tone LUT ops (levels, gamma, normalize, autolevel) on the
#   CPU and CUDA against independent Python transliterations of ImageMagick 6 Q16 (every sample
#   equal, alpha untouched, 8/16 bits, 1-4 channels, 1x1 / 1xN / Nx1); tone_imagemagick: the
#   transliterations against ImageMagick itself (convert-im6.q16; skipped without it). The
#   transliteration is the CI oracle; the ImageMagick check adds no coverage of imgpu's code
#   (label oracle-only: the sanitizer pass leaves it out).
if(IMGPU_PYTHON3)
  add_test(NAME tone_formula
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/tone_formula.py
                   $<TARGET_FILE:imgpu> ${IMGPU_ASSETS} ${CMAKE_CURRENT_BINARY_DIR}/tone cpu)
  set_tests_properties(tone_formula PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 300)
  # on CUDA, the 302 commands through cli_inproc (one process, one CUDA start-up; each op's
  # first command an imgpu process of its own): a process each ran past 300 s on the H200
  add_test(NAME tone_formula.cuda
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/tone_formula.py
                   $<TARGET_FILE:imgpu> ${IMGPU_ASSETS} ${CMAKE_CURRENT_BINARY_DIR}/tone_cuda cuda)
  set_tests_properties(tone_formula.cuda PROPERTIES LABELS "unit;gpu" SKIP_RETURN_CODE 77 TIMEOUT 300
                       ENVIRONMENT "IMGPU_INPROC=$<TARGET_FILE:cli_inproc>")
  add_test(NAME tone_imagemagick
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_cli_dir}/tone_formula.py --imagemagick
                   /usr/bin/convert-im6.q16 ${CMAKE_CURRENT_BINARY_DIR}/tone_im)
  set_tests_properties(tone_imagemagick PROPERTIES LABELS "unit;oracle-only" SKIP_RETURN_CODE 77 TIMEOUT 300
                       ENVIRONMENT IMGPU_ASSETS=${IMGPU_ASSETS})
endif()
