/* interop.c — the null CUDA-GL interop: the viewer's door into the CUDA backend
 * (src/backend/cuda/interop.h) in a build without CUDA. The probe says why there is none, so
 * the viewer takes its upload path; the other calls answer "not built in". */
#include "backend/cuda/interop.h"

#include <stdio.h>

#include "error.h"

#define NOT_BUILT "this imgpu was built without CUDA support"

int imgpu_interop_probe(unsigned int gl_tex, char *why, size_t n)
{
    (void)gl_tex;
    snprintf(why, n, "%s", NOT_BUILT);
    return -1;
}

int imgpu_interop_register(unsigned int gl_tex, imgpu_interop_tex **out)
{
    (void)gl_tex;
    *out = NULL;
    return imgpu_error(NOT_BUILT);
}

void imgpu_interop_unregister(imgpu_interop_tex **t)
{
    if (t)
        *t = NULL;
}

imgpu_interop *imgpu_interop_new(void)
{
    imgpu_error(NOT_BUILT);
    return NULL;
}

void imgpu_interop_free(imgpu_interop *x) { (void)x; }

int imgpu_interop_set_source(imgpu_interop *x, const imgpu_image *src, imgpu_interop_tex *orig)
{
    (void)x, (void)src, (void)orig;
    return imgpu_error(NOT_BUILT);
}

int imgpu_interop_process(imgpu_interop *x, const imgpu_op *ops, int n, imgpu_interop_tex *dst,
                          imgpu_interop_tex *hist, int *w, int *h, int *channels, double *gpu_ms)
{
    (void)x, (void)ops, (void)n, (void)dst, (void)hist, (void)w, (void)h, (void)channels, (void)gpu_ms;
    return imgpu_error(NOT_BUILT);
}

int imgpu_interop_run(imgpu_interop *x, const imgpu_op *ops, int n, imgpu_image **out)
{
    (void)x, (void)ops, (void)n, (void)out;
    return imgpu_error(NOT_BUILT);
}

int imgpu_interop_download(imgpu_interop *x, imgpu_image **out)
{
    (void)x, (void)out;
    return imgpu_error(NOT_BUILT);
}
