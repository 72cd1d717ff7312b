# io.cmake — the image I/O layer (src/io/io.c, src/io/stb_impl.c, src/codec_*.c) against outside
# decoders and tools, through the CLI and io_dump (labels unit;io). Its C unit tests (test_io,
# test_png_decode, test_error) are unit/'s.
# io_crosscheck: format variants (progressive JPEG, paletted/interlaced PNG, ...) decoded by
#   imgpu and compared with OpenCV or with the pixels they were built from; skipped (77)
#   without Debian's python3 + cv2.
set(_imgpu_io_dir ${CMAKE_CURRENT_LIST_DIR})

# io_dump writes what imgpu_image_load decoded from a file: its size and raw samples.
imgpu_add_test_tool(io_dump ${_imgpu_io_dir}/io_dump.c)
if(IMGPU_PYTHON3)
  add_test(NAME io_crosscheck
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_io_dir}/io_crosscheck.py $<TARGET_FILE:io_dump> ${IMGPU_ASSETS})
  set_tests_properties(io_crosscheck PROPERTIES LABELS "unit;io" SKIP_RETURN_CODE 77 TIMEOUT 120)
  # pnm_check: every Netpbm kind read (P1..P6) against the samples written and PIL, the kind
  #   each extension writes (.pgm gray as cv2's RGB2GRAY), bad ASCII data
  add_test(NAME pnm_check
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_io_dir}/pnm_check.py $<TARGET_FILE:imgpu>
                   ${CMAKE_CURRENT_BINARY_DIR}/io_tmp ${IMGPU_ASSETS})
  set_tests_properties(pnm_check PROPERTIES LABELS "unit;io" SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()

# tiff_crosscheck: the TIFF codec (src/io/codec_tiff.c) against the source pixels, PIL and cv2 over
#   the depth x channels x compression x strips/tiles x planar x byte-order matrix (variants
#   made by tiffcp), pages, every --compression written and read back, metadata (exiftool),
#   the refused kinds and damaged files; skipped (77) without tiffcp, cv2 or PIL.
if(IMGPU_PYTHON3)
  add_test(NAME tiff_crosscheck
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_io_dir}/tiff_crosscheck.py $<TARGET_FILE:imgpu>
                   $<TARGET_FILE:io_dump> ${CMAKE_CURRENT_BINARY_DIR}/tiff_crosscheck)
  set_tests_properties(tiff_crosscheck PROPERTIES LABELS "unit;io" SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()

# io_jpeg_cv2: the JPEG codec (libjpeg-turbo) against OpenCV, PIL and exiftool through the CLI
#   and io_dump: decoded pixels == cv2.imread exactly (baseline, progressive, restart,
#   arithmetic, gray, CMYK, odd sizes), equalize == OpenCV on cv2's decode, output bytes ==
#   cv2.imwrite at the same settings, metadata, orientation, bad files; skipped (77) without
#   Debian's python3 + cv2 + PIL.
if(IMGPU_PYTHON3)
  add_test(NAME io_jpeg_cv2
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_io_dir}/io_jpeg_cv2.py $<TARGET_FILE:imgpu>
                   $<TARGET_FILE:io_dump> ${CMAKE_CURRENT_BINARY_DIR}/io_jpeg_cv2_tmp)
  set_tests_properties(io_jpeg_cv2 PROPERTIES LABELS "unit;io;opencv" SKIP_RETURN_CODE 77
                       TIMEOUT 300)
endif()

# webp_check: the WebP codec (src/io/codec_webp.c) against PIL (same libwebp), cwebp / dwebp /
#   webpmux / img2webp and exiftool: decode of lossy, lossless, alpha, animated (first frame)
#   and odd-size files equal to PIL's exactly, lossless writes exact, lossy writes the bytes of
#   PIL's save at the same quality and method, ICC / EXIF / XMP round trips and orientation,
#   batch on .webp, and truncated, corrupt and hostile files refused cleanly; skipped (77)
#   without PIL's WebP or the tools (Debian: python3-pil, webp, libimage-exiftool-perl).
if(IMGPU_PYTHON3)
  add_test(NAME webp_check
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_io_dir}/webp_check.py $<TARGET_FILE:imgpu>
                   $<TARGET_FILE:io_dump> ${CMAKE_CURRENT_BINARY_DIR}/webp_check.tmp)
  set_tests_properties(webp_check PROPERTIES LABELS "unit;io" SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()

# cmyk_check (issue 30): CMYK, YCCK and marker-less CMYK JPEGs (made by make_cmyk with an
#   lcms2-built CMYK profile; one by ImageMagick where installed) converted to sRGB through
#   their profile, within a mean of 3 levels of PIL's ImageCms and of `vips icc_transform` (where
#   libvips' tools are installed); sRGB's profile on the outputs (none with --strip); the formula
#   and a notice without a profile or with a damaged one; info's colour space. Needs lcms2 (the
#   helper makes the profile with it); skipped (77) without numpy and PIL's ImageCms.
if(IMGPU_PYTHON3 AND IMGPU_HAVE_LCMS2)
  imgpu_add_test_tool(make_cmyk ${_imgpu_io_dir}/make_cmyk.c)
  add_test(NAME cmyk_check
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_io_dir}/cmyk_check.py $<TARGET_FILE:imgpu>
                   $<TARGET_FILE:io_dump> $<TARGET_FILE:make_cmyk>
                   ${CMAKE_CURRENT_BINARY_DIR}/cmyk_check.tmp ${IMGPU_ASSETS})
  set_tests_properties(cmyk_check PROPERTIES LABELS "unit;io" SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()

# bmp_rle_check (issue 30): RLE8 and RLE4 BMPs (every code, bottom-up and top-down) against a
#   reference decoder written from Microsoft's description (tests/common/bmp_rle.py), PIL and
#   ImageMagick's gray BMP (where installed); streams that leave the image refused; the limits.
#   Skipped (77) without numpy and PIL.
if(IMGPU_PYTHON3)
  add_test(NAME bmp_rle_check
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_io_dir}/bmp_rle_check.py $<TARGET_FILE:imgpu>
                   $<TARGET_FILE:io_dump> ${CMAKE_CURRENT_BINARY_DIR}/bmp_rle_check.tmp
                   ${IMGPU_ASSETS})
  set_tests_properties(bmp_rle_check PROPERTIES LABELS "unit;io" SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()

# tiff_pages_check (issue 30): the notice when page 0 of a multi-page TIFF is all that is used;
#   --pages all through rotate and equalize into a multi-page TIFF (pages against numpy's
#   rot90 and against --page N alone, 16-bit pages, standard input), its usage errors, and a
#   broken page failing the run without an output. Skipped (77) without numpy and PIL.
if(IMGPU_PYTHON3)
  add_test(NAME tiff_pages_check
           COMMAND ${IMGPU_PYTHON3} ${_imgpu_io_dir}/tiff_pages_check.py $<TARGET_FILE:imgpu>
                   ${CMAKE_CURRENT_BINARY_DIR}/tiff_pages_check.tmp ${IMGPU_ASSETS})
  set_tests_properties(tiff_pages_check PROPERTIES LABELS "unit;io" SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
