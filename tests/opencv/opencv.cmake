# opencv.cmake — cross-checks against OpenCV (label opencv, and gpu for the .cuda variants; unit
# for the CPU backend's own), in Debian's /usr/bin/python3 with cv2 + numpy. Without such a
# Python they are still registered, as tests that exit 77 (skipped, not passed).
#   opencv.equalize[.cuda]  imgpu equalize vs cv2.equalizeHist / YCrCb pipeline, bit for bit
#   opencv.rotate[.cuda]    imgpu rotate --crop vs cv2.warpAffine, interior PSNR >= 35 dB (8-bit),
#                           >= 65 dB on the 16-bit cases (full 16-bit precision, output stays 16-bit);
#                           the cpu one also every filter, the sign, quarter turns and --expand
#                           (the one OpenCV rotation check)
#   opencv.resize[.cuda]    imgpu resize vs cv2.resize: 8-bit bit for bit (area, bicubic within 1), 16-bit within 1
#   opencv.clahe            imgpu clahe vs cv2.createCLAHE (8- and 16-bit, gray and color), 16-bit
#                           equalize written as 16-bit PNG/PNM and decoded by cv2
#   cpu_ycc_exhaustive, cpu_opencv_equalize
#                           (label unit) the CPU backend driven through test_cpu_driver (raw files
#                           in, raw files out) against cv2: every colour through YCrCb, equalize
#   opencv_exif_orient      (labels unit;exif;opencv) what OpenCV's imread shows for a JPEG with
#                           each orientation in its APP1 == our parse of that APP1 (exif_dump) +
#                           imgpu_image_orient of the stored pixels
# opencv_ref.py (tests/common/) holds the OpenCV pipelines these and golden/make_golden.py share.
# Label oracle-only (opencv.equalize[.cuda], opencv.rotate[.cuda], opencv.resize[.cuda], opencv.clahe,
# cpu_ycc_exhaustive, cpu_opencv_equalize): what they add is OpenCV's verdict; every line and
# branch of src/ they run, other tests run too (clang source coverage, 2026-11-27), so CI's
# ASan+UBSan pass leaves them out (ctest -LE oracle-only); the release pass runs them.
set(_imgpu_opencv_dir ${CMAKE_CURRENT_LIST_DIR})

# The .cuda variants run their `imgpu` commands (400 for resize, 200 for pil.resize: a size and
# filter each) through the test tool cli_inproc (IMGPU_INPROC; tests/common/cli_inproc.c,
# cli_common.Runner): src/cli/main.c's main in one process, so CUDA starts once instead of once
# a command (~1 s each beside the suite's other GPU tests: 260 s on the H200); the first
# command of each name runs as an imgpu process of its own. The cpu variants: a process each.
# each device its own work folder: the cpu and cuda runs of one check write the same synthetic
# inputs, and a run beside the other read a file the other was writing ('file is empty')
foreach(_check equalize rotate resize)
  foreach(_dev cpu cuda)
    if(_dev STREQUAL "cpu")
      set(_tname opencv.${_check})
      set(_labels opencv oracle-only)
    else()
      set(_tname opencv.${_check}.cuda)
      set(_labels opencv gpu oracle-only)
    endif()
    if(IMGPU_HAVE_CV2)
      add_test(NAME ${_tname}
               COMMAND ${IMGPU_PYTHON3} ${_imgpu_opencv_dir}/opencv_${_check}.py
                       $<TARGET_FILE:imgpu> ${IMGPU_ASSETS}
                       ${CMAKE_CURRENT_BINARY_DIR}/opencv/${_check}.${_dev} ${_dev})
    else()
      add_test(NAME ${_tname}
               COMMAND ${IMGPU_SH} -c "echo 'SKIP: /usr/bin/python3 with cv2 and numpy not found (apt-get install python3-opencv python3-numpy)'; exit 77")
    endif()
    set_tests_properties(${_tname} PROPERTIES LABELS "${_labels}" SKIP_RETURN_CODE 77 TIMEOUT 300)
    if(_dev STREQUAL "cuda")   # the commands through one cli_inproc: one CUDA start-up (below)
      set_tests_properties(${_tname} PROPERTIES ENVIRONMENT "IMGPU_INPROC=$<TARGET_FILE:cli_inproc>")
    endif()
  endforeach()
endforeach()

if(IMGPU_HAVE_CV2)
  add_test(NAME opencv.clahe
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_opencv_dir}/opencv_clahe.py
                   $<TARGET_FILE:imgpu> ${IMGPU_ASSETS} ${CMAKE_CURRENT_BINARY_DIR}/opencv/clahe_cpu cpu)
else()
  add_test(NAME opencv.clahe COMMAND ${IMGPU_SH} -c "echo 'SKIP: /usr/bin/python3 with cv2 not found'; exit 77")
endif()
set_tests_properties(opencv.clahe PROPERTIES LABELS "opencv;oracle-only" SKIP_RETURN_CODE 77 TIMEOUT 300)

# pil.resize[.cuda]: imgpu resize --antialias vs Pillow's Image.resize (label oracle-only, as
# the cv2 cross-checks: Pillow's verdict only; test_gpu_resize and cli_resize run the code)
foreach(_dev cpu cuda)
  if(_dev STREQUAL "cpu")
    set(_tname pil.resize)
    set(_labels pil oracle-only)
  else()
    set(_tname pil.resize.cuda)
    set(_labels pil gpu oracle-only)
  endif()
  if(IMGPU_HAVE_CV2) # opencv_ref.py (its imgpu runner) imports cv2
    add_test(NAME ${_tname}
             COMMAND ${IMGPU_PYTHON3} ${_imgpu_opencv_dir}/pil_resize.py $<TARGET_FILE:imgpu> ${IMGPU_ASSETS}
                     ${CMAKE_CURRENT_BINARY_DIR}/pil/resize.${_dev} ${_dev})
  else()
    add_test(NAME ${_tname} COMMAND ${IMGPU_SH} -c "echo 'SKIP: /usr/bin/python3 with cv2 not found'; exit 77")
  endif()
  set_tests_properties(${_tname} PROPERTIES LABELS "${_labels}" SKIP_RETURN_CODE 77 TIMEOUT 300)
  if(_dev STREQUAL "cuda")
    set_tests_properties(${_tname} PROPERTIES ENVIRONMENT "IMGPU_INPROC=$<TARGET_FILE:cli_inproc>")
  endif()
endforeach()

# The CPU backend without the CLI: test_cpu_driver runs one op on a raw file.
imgpu_add_test_tool(test_cpu_driver ${_imgpu_opencv_dir}/test_cpu_driver.c)

# imgpu_cpu_py_test(name script args...): run a cross-check script, or skip (77) without cv2.
function(imgpu_cpu_py_test name script)
  if(IMGPU_HAVE_CV2)
    add_test(NAME ${name} COMMAND ${IMGPU_PYTHON3} ${_imgpu_opencv_dir}/${script} ${ARGN})
  else()
    add_test(NAME ${name} COMMAND sh -c "echo 'skip: no /usr/bin/python3 with cv2'; exit 77")
  endif()
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS "unit;oracle-only"
                       ENVIRONMENT "IMGPU_ASSETS=${IMGPU_ASSETS}")
endfunction()

imgpu_cpu_py_test(cpu_ycc_exhaustive cpu_ycc_exhaustive.py $<TARGET_FILE:test_cpu_driver>)
imgpu_cpu_py_test(cpu_opencv_equalize cpu_opencv_equalize.py $<TARGET_FILE:test_cpu_driver>
                  ${IMGPU_ASSETS})

# exif_dump prints what src/io/exif.c parses from a file's APP1 and the oriented pixels.
imgpu_add_test_tool(exif_dump ${_imgpu_opencv_dir}/exif_dump.c)
if(IMGPU_PYTHON3)
  add_test(NAME opencv_exif_orient
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_opencv_dir}/opencv_exif_orient.py $<TARGET_FILE:exif_dump>)
  set_tests_properties(opencv_exif_orient PROPERTIES LABELS "unit;exif;opencv" SKIP_RETURN_CODE 77
                       TIMEOUT 120)
endif()
