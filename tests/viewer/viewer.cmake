# Viewer tests (imgpu-view, `imgpu view`): built only where GLFW, GLEW, OpenGL and EGL are found.
#   viewer_snapshot_glfw   hidden GLFW window (under xvfb-run when $DISPLAY is unset; Mesa in CI:
#                          the glTexSubImage2D upload path), snapshots == CLI output, exact
#   viewer_snapshot_egl    the same through EGL, no X server
#   viewer_events          scripted keys and drags (--events): the printed command line, run, gives
#                          the snapshot and S's files; headless, then in a window under Xvfb
#   viewer_usage           option errors, missing input, `imgpu view --help`
#   viewer_16bit           16-bit images through EGL: the auto window's full contrast, the keys,
#                          views == the CLI's 16-bit output through the window (numpy, cv2)
#   viewer_overlay         the histogram overlay through EGL: H's corners (bounding boxes of
#                          the pixels it changes), the margins, the free corners, the BEFORE /
#                          AFTER labels and the legend against the bitmap font
#   viewer_walk_meta       a scripted snapshot walks the folder as a window does (key n skips a
#                          corrupt file); --snapshot and S keep ICC, EXIF, XMP and text as the CLI
#   viewer_interop_egl     (label gpu) EGL + CUDA-GL interop, the snapshots and events again
#   viewer_interop_window  (label gpu) a GLFW window on NVIDIA's GLX (__GLX_VENDOR_LIBRARY_NAME)
# Without the display or the GPU they needs they exit 77: skipped, not passed.
set(_imgpu_viewer_dir ${CMAKE_CURRENT_LIST_DIR})
if(TARGET imgpu-view)
  set(IMGPU_VIEWER_TMP ${CMAKE_CURRENT_BINARY_DIR}/viewer_tmp)
  foreach(_k snapshot-glfw snapshot-egl events usage interop-egl interop-window)
    string(REPLACE "-" "_" _name "viewer_${_k}")
    if(IMGPU_PYTHON3)
      add_test(NAME ${_name}
               COMMAND ${IMGPU_PYTHON3} ${_imgpu_viewer_dir}/viewer_test.py $<TARGET_FILE:imgpu>
                       $<TARGET_FILE:imgpu-view> ${IMGPU_VIEWER_TMP} ${IMGPU_ASSETS} ${_k})
    else()
      add_test(NAME ${_name} COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
    endif()
    if(_k MATCHES "^interop")
      set_tests_properties(${_name} PROPERTIES LABELS "viewer;gpu" SKIP_RETURN_CODE 77 TIMEOUT 600)
    else()
      set_tests_properties(${_name} PROPERTIES LABELS viewer SKIP_RETURN_CODE 77 TIMEOUT 600)
    endif()
  endforeach()
  # scripts of their own (same arguments as viewer_test.py, no KIND)
  foreach(_name viewer_16bit viewer_overlay viewer_walk_meta)
    if(IMGPU_PYTHON3)
      add_test(NAME ${_name}
               COMMAND ${IMGPU_PYTHON3} ${_imgpu_viewer_dir}/${_name}.py $<TARGET_FILE:imgpu>
                       $<TARGET_FILE:imgpu-view> ${IMGPU_VIEWER_TMP} ${IMGPU_ASSETS})
    else()
      add_test(NAME ${_name} COMMAND sh -c "echo 'skip: no /usr/bin/python3'; exit 77")
    endif()
    set_tests_properties(${_name} PROPERTIES LABELS viewer SKIP_RETURN_CODE 77 TIMEOUT 600)
  endforeach()
endif()
