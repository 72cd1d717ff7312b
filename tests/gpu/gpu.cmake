# gpu.cmake — C tests of the CUDA backend (label gpu), built only with it; they exit 77
# (skipped) where no usable GPU exists. Registered by imgpu_add_c_test(... GPU).
#   test_gpu_scan   the scans against a sequential scan
#   test_gpu_ops    histograms, both fused equalize kernels, both rotation thread layouts
#                   (premultiplied alpha bit for bit at 8 and 16 bits: issue 30), chains
#                   and sessions against the CPU reference
#   test_gpu_clahe  CUDA CLAHE, 16-bit equalize and the formulas against the CPU, bit for bit
#   test_gpu_tone   the tone LUT ops (issue 28: levels ...) against the CPU, bit for bit
#   test_gpu_norm   normalize and autolevel (issue 28, op-norm): the intensity kernel over every
#                   8-bit colour, the ops through the pipeline, against the CPU, bit for bit
# (The golden cases register .cuda variants too: golden/golden.cmake. robust/robust_gpu.sh runs
# these under compute-sanitizer.)
set(_imgpu_gpu_dir ${CMAKE_CURRENT_LIST_DIR})
imgpu_add_c_test(test_gpu_scan ${_imgpu_gpu_dir}/test_gpu_scan.c GPU TIMEOUT 600)
imgpu_add_c_test(test_gpu_ops ${_imgpu_gpu_dir}/test_gpu_ops.c GPU TIMEOUT 600)
imgpu_add_c_test(test_gpu_clahe ${_imgpu_gpu_dir}/test_gpu_clahe.c GPU TIMEOUT 600)
# test_gpu_geom (issue 28, op-geom): flip (and the other geometry ops) on CUDA == the CPU, bit for bit
imgpu_add_c_test(test_gpu_geom ${_imgpu_gpu_dir}/test_gpu_geom.c GPU TIMEOUT 600)
# test_gpu_crop (issue 28, op-crop): crop (--rect, --gravity/--size, --trim's box kernel, --inner,
#   chains after --trim) on CUDA == the CPU, bit for bit
imgpu_add_c_test(test_gpu_crop ${_imgpu_gpu_dir}/test_gpu_crop.c GPU TIMEOUT 600)
imgpu_add_c_test(test_gpu_resize ${_imgpu_gpu_dir}/test_gpu_resize.c GPU TIMEOUT 600)
# test_resize_emu: resize's kernel bodies (kernels/resize_body.cuh) run on the host in their grids
#   (fused tiles, two passes, nearest) against the CPU, bit for bit. Needs nvcc, no GPU: label unit.
if(IMGPU_HAVE_CUDA)
  add_executable(test_resize_emu ${_imgpu_gpu_dir}/test_resize_emu.cu)
  target_link_libraries(test_resize_emu PRIVATE imgpu_core)
  target_include_directories(test_resize_emu PRIVATE ${IMGPU_TESTS}/common ${PROJECT_SOURCE_DIR}/kernels)
  set_target_properties(test_resize_emu PROPERTIES CUDA_STANDARD 17)
  add_test(NAME test_resize_emu COMMAND test_resize_emu)
  set_tests_properties(test_resize_emu PROPERTIES LABELS unit TIMEOUT 300)
endif()
imgpu_add_c_test(test_gpu_tone ${_imgpu_gpu_dir}/test_gpu_tone.c GPU TIMEOUT 600)
imgpu_add_c_test(test_gpu_norm ${_imgpu_gpu_dir}/test_gpu_norm.c GPU TIMEOUT 600)
# test_gpu_tex_views: a new background on an RGB rotation source keeps the surface object over the
#   same array (d7abdc2: a new one was made and the old one leaked)
imgpu_add_c_test(test_gpu_tex_views ${_imgpu_gpu_dir}/test_gpu_tex_views.c GPU TIMEOUT 60)
