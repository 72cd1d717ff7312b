/* imgpu_limits.h — the limits every run obeys, on the ground floor: their defaults, the
 * process-wide values (imgpu_set_limits) and the grammars of their values. The op floor's plan
 * (op.h, imgpu_pipeline_plan) checks a pipeline against them, io (io.h) a load, the front ends
 * read them from their options and the environment. Named imgpu_limits.h, not limits.h: src/core
 * is an include directory, and <limits.h> must stay the C library's. */
#ifndef IMGPU_LIMITS_H
#define IMGPU_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Default --max-pixels: 2^28 (268 megapixels, e.g. 16384 x 16384). Documented in docs/reliability.md. */
#define IMGPU_DEFAULT_MAX_PIXELS (UINT64_C(1) << 28)

/* Default --max-file-size: 1 GiB (files are read whole; stb's lengths are ints, so more than
 * 2 GiB - 1 is never accepted). Default --max-decode-time: 30 s. docs/reliability.md, "Limits". */
#define IMGPU_DEFAULT_MAX_FILE_BYTES (UINT64_C(1) << 30)
#define IMGPU_DEFAULT_MAX_DECODE_MS UINT64_C(30000)
/* Limits every run obeys (--max-pixels, --max-memory; 0 means the default):
 *  - max_pixels bounds every stage's result, not only the input (a 100000x1 strip turned
 *    by 33 degrees is an 83867x54463 result);
 *  - max_memory bounds the host memory of the worst stage: the caller's input (held for the
 *    whole run) + the stage's input + its result + its working buffers (each op's descriptor
 *    states them: one LUT of 256 or 65536 entries per tile for the tiled equalization, planes
 *    of the image; histograms), and for the
 *    CUDA backend the input + its pinned staging + the result. The default, 8 GiB, lets the
 *    largest image the default --max-pixels admits (2^28 RGBA 16-bit pixels = 2 GiB) run any
 *    one op whose result also fits: the tiled equalization's peak there is 6 GiB; its 16-bit
 *    form with a 256x256 tile grid needs 8 GiB of LUTs by itself and is refused. The CUDA backend's device
 *    memory is held to the same number (over it, `auto` runs on the CPU). */
#define IMGPU_DEFAULT_MAX_MEMORY (UINT64_C(8) << 30)
typedef struct imgpu_limits {
    uint64_t max_pixels;      /* 0: IMGPU_DEFAULT_MAX_PIXELS (2^28, above) */
    uint64_t max_memory;      /* bytes; 0: IMGPU_DEFAULT_MAX_MEMORY */
} imgpu_limits;

/* Fill each limit still 0 from IMGPU_MAX_PIXELS (a count) and IMGPU_MAX_MEMORY (bytes, K/M/G
 * suffixes as --max-file-size). -1 with an error naming the variable when one is malformed. */
int imgpu_limits_from_env(imgpu_limits *l);
/* The process-wide limits imgpu_pipeline_run (and the CUDA sessions) enforce. Set them once,
 * before starting threads that run pipelines; unset, they are the defaults. */
void imgpu_set_limits(const imgpu_limits *l);
void imgpu_get_limits(imgpu_limits *l); /* resolved: no field is 0 */
/* "1.50 GiB", "12.0 MiB", "900 bytes" (binary units, as --max-memory reads them), for the
 * messages of every check against --max-memory (the plan's, io.c's load). */
void imgpu__fmt_bytes(char *buf, size_t n, double b);

/* The parsers of the limits' values, for the command-line options and the variables: 0 or -1 (no error
 * recorded). Both refuse 0, negative numbers, junk and overflow. */
int imgpu_parse_size(const char *s, uint64_t *bytes);
int imgpu_parse_seconds(const char *s, uint64_t *ms);

#ifdef __cplusplus
}
#endif
#endif
