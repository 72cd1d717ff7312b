/* texture.c — CUDA arrays and texture objects for the sampled operations (rotation).
 * Why textures there: a rotated output row walks diagonally through the source, which the
 * texture cache's 2D locality (arrays are stored block-linear) serves far better than
 * row-major global loads; the hardware does the bilinear filtering; and the border address
 * mode, with the background as border colour, answers every tap outside the image without a
 * branch. Streamed ops (histogram, LUT) read plain device buffers instead: every byte once,
 * in order, where 16-byte coalesced loads are as good as it gets.
 * Created and destroyed here only (house rule: create and destroy in the same file). */
#include "cuda_util.h"
#include "error.h"
#include "kernels.h"

#include <stdint.h>
#include <string.h>

static void destroy_views(imgpu__cuda_tex *t)
{
    if (t->linear)
        cudaDestroyTextureObject(t->linear);
    if (t->point)
        cudaDestroyTextureObject(t->point);
    if (t->surf)
        cudaDestroySurfaceObject(t->surf);
    t->linear = t->point = 0;
    t->surf = 0;
}

/* Destroys the retired views whose kernels are done (all of them, waiting, with wait). */
static void reap_retired(imgpu__cuda_tex *t, int wait)
{
    for (size_t i = 0; i < sizeof t->retired / sizeof t->retired[0]; i++) {
        if (!t->retired[i].live)
            continue;
        cudaError_t e = wait ? cudaEventSynchronize(t->retired[i].done) : cudaEventQuery(t->retired[i].done);
        if (e == cudaErrorNotReady) {
            cudaGetLastError();
            continue;
        }
        /* done, or the device failed (then nothing samples them any more either) */
        cudaDestroyTextureObject(t->retired[i].linear);
        cudaDestroyTextureObject(t->retired[i].point);
        t->retired[i].live = 0;
    }
}

/* Replaces the views without waiting for the kernels enqueued on s that sample them (the old
 * way: cudaStreamSynchronize, a host wait for all earlier work, on every call whose source
 * address changed): they are destroyed once the work enqueued so far is done. With every slot
 * still busy, the oldest is waited for. 0, or a CUDA failure (rc). */
static int retire_views(imgpu__cuda_tex *t, cudaStream_t s)
{
    int rc = 0;
    const size_t n = sizeof t->retired / sizeof t->retired[0];
    if (!t->linear && !t->point)
        return 0;
    reap_retired(t, 0);
    size_t k = 0;
    while (k < n && t->retired[k].live)
        k++;
    if (k == n) {
        IMGPU_CUDA_TRY(cudaStreamSynchronize(s)); /* every slot busy: all of them are done after this */
        reap_retired(t, 1);
        k = 0;
    }
    if (!t->retired[k].done)
        IMGPU_CUDA_TRY(cudaEventCreateWithFlags(&t->retired[k].done, cudaEventDisableTiming));
    IMGPU_CUDA_TRY(cudaEventRecord(t->retired[k].done, s));
    t->retired[k].linear = t->linear;
    t->retired[k].point = t->point;
    t->retired[k].live = 1;
    t->linear = t->point = 0;
    return 0;
fail:
    return rc;
}

void imgpu__cuda_tex_destroy(imgpu__cuda_tex *t, size_t *held)
{
    if (!t)
        return;
    reap_retired(t, 1);
    for (size_t i = 0; i < sizeof t->retired / sizeof t->retired[0]; i++)
        if (t->retired[i].done)
            cudaEventDestroy(t->retired[i].done);
    destroy_views(t);
    if (t->array) {
        cudaFreeArray(t->array);
        if (held)
            *held -= (size_t)t->w * t->h * (t->channels == 3 ? 4 : t->channels);
    }
    memset(t, 0, sizeof *t);
}

static struct cudaChannelFormatDesc texel_format(int tc)
{
    return cudaCreateChannelDesc(8, tc >= 2 ? 8 : 0, tc >= 3 ? 8 : 0, tc >= 4 ? 8 : 0, cudaChannelFormatKindUnsigned);
}

static int s_force_array;

void imgpu__cuda_tex_force_array(int on) { s_force_array = on; }

int imgpu__cuda_tex_pitched_ok(const void *d_src, int w, int h, int channels)
{
    /* Asked of the current device each time (a few hundred nanoseconds): a process-wide cache
     * would answer for the first device only under `imgpu batch --devices`.
     * Two alignments: the row pitch (texturePitchAlignment, 32 bytes) and the base address
     * (textureAlignment, 512 bytes: cudaCreateTextureObject refuses a pitch2D resource whose
     * devPtr is not aligned to it). The pipeline's own buffers come from cudaMalloc and meet
     * the second; an image the caller owns (imgpu_context_run_device: a tensor at an offset,
     * read in place when its address is 16-byte aligned) may not, and takes the array copy. */
    int dev = 0, align = 0, base_align = 0, max_w = 0, max_h = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&align, cudaDevAttrTexturePitchAlignment, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&base_align, cudaDevAttrTextureAlignment, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&max_w, cudaDevAttrMaxTexture2DLinearWidth, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&max_h, cudaDevAttrMaxTexture2DLinearHeight, dev) != cudaSuccess || align <= 0 ||
        base_align <= 0) {
        cudaGetLastError();
        return 0; /* unknown: never in place */
    }
    return !s_force_array && channels != 3 && ((size_t)w * channels) % (size_t)align == 0 &&
           (uintptr_t)d_src % (uintptr_t)base_align == 0 && w <= max_w && h <= max_h;
}

static int make_texture(imgpu__cuda_tex *t, enum cudaTextureFilterMode filter, cudaTextureObject_t *out)
{
    struct cudaResourceDesc res;
    struct cudaTextureDesc td;
    memset(&res, 0, sizeof res);
    memset(&td, 0, sizeof td);
    if (t->array) {
        res.resType = cudaResourceTypeArray;
        res.res.array.array = t->array;
    } else { /* sampling the packed buffer in place: no copy into an array */
        res.resType = cudaResourceTypePitch2D;
        res.res.pitch2D.devPtr = (void *)t->pitched;
        res.res.pitch2D.desc = texel_format(t->channels);
        res.res.pitch2D.width = (size_t)t->w;
        res.res.pitch2D.height = (size_t)t->h;
        res.res.pitch2D.pitchInBytes = (size_t)t->w * t->channels;
    }
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeBorder;
    td.filterMode = filter;
    td.readMode = cudaReadModeNormalizedFloat; /* texel / 255, so filtering happens in [0, 1] */
    td.normalizedCoords = 0;                   /* coordinates in pixels, texel centres at +0.5 */
    for (int c = 0; c < 4; c++)
        td.borderColor[c] = t->bg[c] / 255.0f;
    cudaError_t e = cudaCreateTextureObject(out, &res, &td, NULL);
    return e == cudaSuccess ? 0 : imgpu__cuda_fail(e, "cudaCreateTextureObject");
}

/* 1 when the current device can gather from a w x h array (its gather limit is below the
 * plain 2D texture limit). */
static int gather_ok(int w, int h)
{
    int dev = 0, max_w = 0, max_h = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&max_w, cudaDevAttrMaxTexture2DGatherWidth, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&max_h, cudaDevAttrMaxTexture2DGatherHeight, dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return w <= max_w && h <= max_h;
}

int imgpu__cuda_tex_load(imgpu__cuda_tex *t, const unsigned char *d_src, int w, int h, int channels,
                         const unsigned char bg[4], int gather, cudaStream_t s, size_t *held)
{
    int rc = 0;
    const int tc = channels == 3 ? 4 : channels; /* texel channels */
    unsigned char tbg[4] = {bg[0], bg[1], bg[2], bg[3]}; /* in the image's channel order */
    if (channels == 3)
        tbg[3] = 255;
    gather = gather && channels == 1 && gather_ok(w, h);
    /* a gather array serves point and filtered fetches too, so it is kept for them */
    const int in_place = !gather && imgpu__cuda_tex_pitched_ok(d_src, w, h, channels);
    const int size_changed = (t->array || t->pitched) &&
                             (t->w != w || t->h != h || t->channels != channels || in_place != !t->array ||
                              (gather && !t->gather));
    if (size_changed) {
        IMGPU_CUDA_TRY(cudaStreamSynchronize(s)); /* earlier kernels may still sample them */
        imgpu__cuda_tex_destroy(t, held);
    } else if (in_place && t->pitched && t->pitched != d_src) {
        /* the same shape at another address (an op on another tensor): new views over it, the
         * old ones destroyed when the kernels before are done (no host wait) */
        if ((rc = retire_views(t, s)) != 0)
            goto fail;
        t->pitched = d_src;
        memcpy(t->bg, tbg, 4);
    }
    if (in_place && !t->pitched) {
        t->pitched = d_src;
        t->w = w;
        t->h = h;
        t->channels = channels;
        memcpy(t->bg, tbg, 4);
    }
    if (!in_place && !t->array) {
        struct cudaDeviceProp p;
        int dev = 0;
        IMGPU_CUDA_TRY(cudaGetDevice(&dev));
        IMGPU_CUDA_TRY(cudaGetDeviceProperties(&p, dev));
        if (w > p.maxTexture2D[0] || h > p.maxTexture2D[1]) {
            imgpu_error("a %dx%d image exceeds the GPU's largest 2D texture (%dx%d)", w, h, p.maxTexture2D[0],
                        p.maxTexture2D[1]);
            return IMGPU_CUDA_OOM; /* a device limit: `auto` falls back to the CPU */
        }
        size_t bytes = (size_t)w * h * tc;
        if ((rc = imgpu__cuda_reserve(bytes, *held)) != 0)
            return rc;
        struct cudaChannelFormatDesc d = texel_format(tc);
        IMGPU_CUDA_TRY(cudaMallocArray(&t->array, &d, (size_t)w, (size_t)h,
                                       (channels == 3 ? cudaArraySurfaceLoadStore : 0) |
                                           (gather ? cudaArrayTextureGather : 0)));
        *held += bytes;
        t->gather = gather;
        t->w = w;
        t->h = h;
        t->channels = channels;
        memcpy(t->bg, tbg, 4);
    } else if (memcmp(t->bg, tbg, 4) != 0) {
        if ((rc = retire_views(t, s)) != 0) /* the border colour is part of the view */
            goto fail;
        memcpy(t->bg, tbg, 4);
    }
    if (!t->linear) {
        if ((rc = make_texture(t, cudaFilterModeLinear, &t->linear)) != 0)
            goto fail;
        if ((rc = make_texture(t, cudaFilterModePoint, &t->point)) != 0)
            goto fail;
        if (channels == 3 && !t->surf) { /* the array's surface: kept while the array is (a new
                                           * background retires only the texture views) */
            struct cudaResourceDesc res;
            memset(&res, 0, sizeof res);
            res.resType = cudaResourceTypeArray;
            res.res.array.array = t->array;
            IMGPU_CUDA_TRY(cudaCreateSurfaceObject(&t->surf, &res));
        }
    }
    if (in_place)
        return 0; /* the views read d_src itself */
    if (channels == 3)
        IMGPU_CUDA_TRY(imgpu_launch_rgb_to_surface(d_src, w, h, t->surf, s));
    else
        IMGPU_CUDA_TRY(cudaMemcpy2DToArrayAsync(t->array, 0, 0, d_src, (size_t)w * channels, (size_t)w * channels,
                                                (size_t)h, cudaMemcpyDeviceToDevice, s));
    return 0;
fail:
    imgpu__cuda_tex_destroy(t, held);
    return rc;
}
