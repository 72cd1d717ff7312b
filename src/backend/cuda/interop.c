/* interop.c — the CUDA side of the viewer (interop.h): its session, the overlay's histogram
 * buffers and frame events, and the CUDA-GL interop resources. A GL texture is registered once
 * (cudaGraphicsGLRegisterImage, surface load/store) and unregistered before GL deletes it; each
 * write maps the textures on the session's stream, makes a surface object over each one's
 * array, launches the display kernels of kernels/viewer.cu into them, unmaps, waits for the
 * stream and destroys the surfaces. Everything here is created and destroyed here.
 */
#include "interop.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GL's types and GL_TEXTURE_2D; cuda_gl_interop.h includes <GL/gl.h> itself */
#include <cuda_gl_interop.h>
#include <cuda_runtime_api.h>

#include "error.h"
#include "cuda_backend.h"
#include "cuda_util.h" /* imgpu__cuda_tuning */
#include "kernels.h"

enum { HIST_BYTES = 4 * 256 * 4 }; /* 4 channels x 256 bins x uint32 */

struct imgpu_interop_tex {
    cudaGraphicsResource_t res;
};

struct imgpu_interop {
    imgpu_cuda_session *sess;
    uint32_t *d_hist_before, *d_hist_after;
    cudaEvent_t ev0, ev1;
};

static int cuda_fail(cudaError_t e, const char *what)
{
    cudaGetLastError();
    return imgpu_error("CUDA error in %s: %s", what, cudaGetErrorString(e));
}
#define CU_TRY(call)                          \
    do {                                      \
        cudaError_t e_ = (call);              \
        if (e_ != cudaSuccess)                \
            return cuda_fail(e_, #call);      \
    } while (0)

/* ---- registered textures --------------------------------------------------------------------- */

int imgpu_interop_probe(unsigned int gl_tex, char *why, size_t n)
{
    cudaGraphicsResource_t r = NULL;
    cudaError_t e = cudaGraphicsGLRegisterImage(&r, (GLuint)gl_tex, GL_TEXTURE_2D,
                                                cudaGraphicsRegisterFlagsSurfaceLoadStore);
    if (e != cudaSuccess) {
        cudaGetLastError();
        snprintf(why, n, "cudaGraphicsGLRegisterImage: %s", cudaGetErrorString(e));
        return -1;
    }
    cudaGraphicsUnregisterResource(r);
    return 0;
}

int imgpu_interop_register(unsigned int gl_tex, imgpu_interop_tex **out)
{
    imgpu_interop_tex *t = calloc(1, sizeof *t);
    if (!t)
        return imgpu_error("out of memory");
    cudaError_t e = cudaGraphicsGLRegisterImage(&t->res, (GLuint)gl_tex, GL_TEXTURE_2D,
                                                cudaGraphicsRegisterFlagsSurfaceLoadStore);
    if (e != cudaSuccess) {
        free(t);
        return cuda_fail(e, "cudaGraphicsGLRegisterImage(r, tex, GL_TEXTURE_2D, "
                            "cudaGraphicsRegisterFlagsSurfaceLoadStore)");
    }
    *out = t;
    return 0;
}

void imgpu_interop_unregister(imgpu_interop_tex **t)
{
    if (!*t)
        return;
    if ((*t)->res)
        cudaGraphicsUnregisterResource((*t)->res);
    free(*t);
    *t = NULL;
}

/* ---- writing into textures ------------------------------------------------------------------- */

typedef struct write_job {
    const unsigned char *d_img;
    int w, h, c;
} write_job;

/* texture 0 gets the image, texture 1 (when given) the overlay's histograms */
static int write_surface(imgpu_interop *x, int i, cudaSurfaceObject_t surf, const write_job *j)
{
    cudaStream_t st = imgpu_cuda_session_stream(x->sess);
    cudaError_t e;
    if (i == 0)
        e = imgpu_launch_view_to_surface(j->d_img, j->w, j->h, j->c, surf, st);
    else
        e = imgpu_launch_view_hist_to_surface(x->d_hist_before, x->d_hist_after, j->c >= 3 ? 3 : 1, surf, st);
    return e == cudaSuccess ? 0
                            : cuda_fail(e, i == 0 ? "imgpu_launch_view_to_surface" : "imgpu_launch_view_hist_to_surface");
}

/* Map the n (<= 2) textures together, write each through a surface object, unmap. */
static int with_surfaces(imgpu_interop *x, imgpu_interop_tex *const *tex, int n, const write_job *j)
{
    int rc = 0;
    cudaGraphicsResource_t res[2] = {NULL, NULL};
    cudaSurfaceObject_t surf[2] = {0, 0};
    cudaStream_t st = imgpu_cuda_session_stream(x->sess);
    for (int i = 0; i < n; i++) {
        if (!tex[i])   /* a texture whose registration failed: never mapped */
            return imgpu_error("a display texture is not registered with CUDA");
        res[i] = tex[i]->res;
    }
    cudaError_t e = cudaGraphicsMapResources(n, res, st);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaGraphicsMapResources");
    for (int i = 0; i < n && rc == 0; i++) {
        cudaArray_t arr;
        struct cudaResourceDesc rd;
        if ((e = cudaGraphicsSubResourceGetMappedArray(&arr, res[i], 0, 0)) != cudaSuccess) {
            rc = cuda_fail(e, "cudaGraphicsSubResourceGetMappedArray");
            break;
        }
        memset(&rd, 0, sizeof rd);
        rd.resType = cudaResourceTypeArray;
        rd.res.array.array = arr;
        if ((e = cudaCreateSurfaceObject(&surf[i], &rd)) != cudaSuccess) {
            rc = cuda_fail(e, "cudaCreateSurfaceObject");
            break;
        }
        rc = write_surface(x, i, surf[i], j);
    }
    /* unmap is stream-ordered after the launches; the surface objects go only once the stream
     * has finished with them (the frame waits for its end event anyway) */
    if ((e = cudaGraphicsUnmapResources(n, res, st)) != cudaSuccess && rc == 0)
        rc = cuda_fail(e, "cudaGraphicsUnmapResources");
    if ((e = cudaStreamSynchronize(st)) != cudaSuccess && rc == 0)
        rc = cuda_fail(e, "cudaStreamSynchronize (after the display kernels)");
    for (int i = 0; i < n; i++)
        if (surf[i])
            cudaDestroySurfaceObject(surf[i]);
    return rc;
}

/* ---- the session ----------------------------------------------------------------------------- */

imgpu_interop *imgpu_interop_new(void)
{
    imgpu_interop *x = calloc(1, sizeof *x);
    if (!x) {
        imgpu_error("out of memory");
        return NULL;
    }
    if (!(x->sess = imgpu_cuda_session_new()))
        goto fail;
    if (cudaMalloc((void **)&x->d_hist_before, HIST_BYTES) != cudaSuccess ||
        cudaMalloc((void **)&x->d_hist_after, HIST_BYTES) != cudaSuccess ||
        cudaEventCreate(&x->ev0) != cudaSuccess || cudaEventCreate(&x->ev1) != cudaSuccess) {
        cuda_fail(cudaGetLastError(), "cudaMalloc/cudaEventCreate (viewer)");
        goto fail;
    }
    return x;
fail:
    imgpu_interop_free(x);
    return NULL;
}

void imgpu_interop_free(imgpu_interop *x)
{
    if (!x)
        return;
    cudaFree(x->d_hist_before);
    cudaFree(x->d_hist_after);
    if (x->ev0)
        cudaEventDestroy(x->ev0);
    if (x->ev1)
        cudaEventDestroy(x->ev1);
    imgpu_cuda_session_free(x->sess);
    free(x);
}

int imgpu_interop_set_source(imgpu_interop *x, const imgpu_image *src, imgpu_interop_tex *orig)
{
    if (imgpu_cuda_session_upload(x->sess, src) != 0)
        return -1;
    const unsigned char *d_src;
    int w, h, c;
    cudaStream_t st = imgpu_cuda_session_stream(x->sess);
    if (imgpu_cuda_session_run(x->sess, NULL, 0, &d_src, &w, &h, &c) != 0)
        return -1;
    CU_TRY(cudaMemsetAsync(x->d_hist_before, 0, HIST_BYTES, st));
    CU_TRY(imgpu_launch_histogram(IMGPU_HIST_DEFAULT_FOR(c), d_src, (size_t)w * h, c, 0, x->d_hist_before,
                                  imgpu_hist_grid(imgpu__cuda_tuning()), st));
    if (orig) {
        write_job j = {d_src, w, h, c};
        if (with_surfaces(x, &orig, 1, &j) != 0)
            return -1;
        CU_TRY(cudaStreamSynchronize(st));
    }
    return 0;
}

int imgpu_interop_process(imgpu_interop *x, const imgpu_op *ops, int n, imgpu_interop_tex *dst,
                          imgpu_interop_tex *hist, int *w, int *h, int *channels, double *gpu_ms)
{
    cudaStream_t st = imgpu_cuda_session_stream(x->sess);
    const unsigned char *d_res;
    int rw, rh, c;
    CU_TRY(cudaEventRecord(x->ev0, st));
    if (imgpu_cuda_session_run(x->sess, ops, n, &d_res, &rw, &rh, &c) != 0)
        return -1;
    if (hist) {
        CU_TRY(cudaMemsetAsync(x->d_hist_after, 0, HIST_BYTES, st));
        CU_TRY(imgpu_launch_histogram(IMGPU_HIST_DEFAULT_FOR(c), d_res, (size_t)rw * rh, c, 0, x->d_hist_after,
                                      imgpu_hist_grid(imgpu__cuda_tuning()), st));
    }
    write_job j = {d_res, rw, rh, c};
    imgpu_interop_tex *tex[2] = {dst, hist};
    if (with_surfaces(x, tex, hist ? 2 : 1, &j) != 0)
        return -1;
    CU_TRY(cudaEventRecord(x->ev1, st));
    CU_TRY(cudaEventSynchronize(x->ev1));
    float ms = 0;
    CU_TRY(cudaEventElapsedTime(&ms, x->ev0, x->ev1));
    if (gpu_ms)
        *gpu_ms = ms;
    *w = rw;
    *h = rh;
    *channels = c;
    return 0;
}

int imgpu_interop_run(imgpu_interop *x, const imgpu_op *ops, int n, imgpu_image **out)
{
    if (imgpu_cuda_session_run(x->sess, ops, n, NULL, NULL, NULL, NULL) != 0 ||
        imgpu_cuda_session_download(x->sess, out) != 0)
        return -1;
    return 0;
}

int imgpu_interop_download(imgpu_interop *x, imgpu_image **out)
{
    return imgpu_cuda_session_download(x->sess, out) == 0 ? 0 : -1;
}
