/* io.h — loading and saving images (stb_image / stb_image_write, PNG deflate via zlib).
 *
 * Contract:
 *  - Load reads PNG, JPEG, BMP, TGA and PNM (8-bit; gray, gray+alpha, RGB, RGBA) and returns
 *    the file's own channel count. Everything else (HDR, GIF, PSD, 16-bit for now, a
 *    truncated or corrupt file, a header larger than max_pixels) is refused with a message
 *    naming the file and the reason, before any pixel memory is allocated where possible.
 *  - Save picks the format from the output's extension (.png .jpg/.jpeg .bmp .tga
 *    .pnm/.pgm/.ppm); an unknown extension is an error the CLI reports as a usage error.
 *    The write is atomic: a temp file in the target directory, flushed and fsync'ed, then
 *    renamed over the target. A failed save leaves no partial file and never touches an
 *    existing one.
 */
#ifndef IMGPU_IO_H
#define IMGPU_IO_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default --max-pixels: 2^28 (268 megapixels, e.g. 16384 x 16384). Documented in README. */
#define IMGPU_DEFAULT_MAX_PIXELS (UINT64_C(1) << 28)

typedef struct imgpu_load_options {
    uint64_t max_pixels;   /* 0 means IMGPU_DEFAULT_MAX_PIXELS */
} imgpu_load_options;

typedef enum imgpu_format {
    IMGPU_FORMAT_UNKNOWN = 0,
    IMGPU_FORMAT_PNG,
    IMGPU_FORMAT_JPEG,
    IMGPU_FORMAT_BMP,
    IMGPU_FORMAT_TGA,
    IMGPU_FORMAT_PNM,
} imgpu_format;

typedef struct imgpu_save_options {
    int quality;    /* JPEG quality 1..100; 0 means 95 */
    int png_level;  /* zlib level 0..9; -1 means the default (fast: 1) */
} imgpu_save_options;

/* Format chosen by a path's extension (case-insensitive); UNKNOWN when none matches. */
imgpu_format imgpu_format_from_path(const char *path);
const char *imgpu_format_name(imgpu_format f);

/* opts may be NULL (defaults). */
imgpu_image *imgpu_image_load(const char *path, const imgpu_load_options *opts);
/* Decode from memory; `name` is used in messages (the fuzzers use this path). */
imgpu_image *imgpu_image_load_memory(const void *buf, size_t len, const char *name,
                                     const imgpu_load_options *opts);
int imgpu_image_save(const imgpu_image *im, const char *path, const imgpu_save_options *opts);
/* Encode into a malloc'ed buffer (*out, *out_len); the caller frees *out. */
int imgpu_image_encode(const imgpu_image *im, imgpu_format f, const imgpu_save_options *opts,
                       unsigned char **out, size_t *out_len);

#ifdef __cplusplus
}
#endif
#endif
