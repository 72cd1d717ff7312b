/* jpeg.c — nvJPEG for batch mode (contract in cuda_backend.h): decode on the GPU's hardware
 * JPEG engines (NVJPG, batched) or nvJPEG's CUDA decoder, encode with nvJPEG's CUDA encoder,
 * so that a JPEG never crosses PCIe as pixels: the file's bytes go up, the bitstream comes
 * back. libjpeg-turbo stays the reference and the fallback (codec_jpeg.c): every file nvJPEG
 * does not take, or refuses, is decoded on the CPU by the caller.
 *
 * The trap on H100 (../shared/GPU.md): the hardware batched decode does not wait for work
 * already queued on the stream it is given, so a pool buffer still read by the previous
 * batch's copies could be overwritten. Every decode therefore starts after a synchronize of
 * the module's stream, and the caller's copies out of the pool finish before its next decode
 * (the batch worker synchronizes its sessions: the encode and the download wait on them).
 */
#include "cuda_util.h"
#include "error.h"
#include "jpeg_scan.h"

#ifdef IMGPU_HAVE_NVJPEG
#include <nvjpeg.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- routing: which decoder takes a file, from its markers ---------------------------------- */

int imgpu_cuda_jpeg_route(const unsigned char *b, size_t n, int *channels)
{
    int sof = -1, prec = 0, nc = 0, w = 0, h = 0, adobe = -1;
    int hs[4] = {0}, vs[4] = {0}, id[4] = {0};
    if (n < 4 || b[0] != 0xFF || b[1] != 0xD8)
        return IMGPU_JPEG_CPU;
    size_t i = 2;
    while (i + 4 <= n) {
        if (b[i] != 0xFF)
            return IMGPU_JPEG_CPU;
        const int m = b[i + 1];
        if (m == 0xFF) {   /* fill byte */
            i++;
            continue;
        }
        if (m == 0xDA)     /* SOS: the frame header came before it */
            break;
        const size_t L = (size_t)b[i + 2] << 8 | b[i + 3];
        if (L < 2 || i + 2 + L > n)
            return IMGPU_JPEG_CPU;
        const unsigned char *d = b + i + 4;
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
            if (sof >= 0 || L < 8)
                return IMGPU_JPEG_CPU;
            sof = m;
            prec = d[0];
            h = d[1] << 8 | d[2];
            w = d[3] << 8 | d[4];
            nc = d[5];
            if ((nc != 1 && nc != 3) || L < 8 + 3 * (size_t)nc)
                return IMGPU_JPEG_CPU;
            for (int k = 0; k < nc; k++) {
                id[k] = d[6 + 3 * k];
                hs[k] = d[7 + 3 * k] >> 4;
                vs[k] = d[7 + 3 * k] & 15;
            }
        } else if (m == 0xEE && L >= 14 && !memcmp(d, "Adobe", 5)) {
            adobe = d[11];
        }
        i += 2 + L;
    }
    if (sof < 0 || prec != 8 || w < 1 || h < 1 || w > 16000 || h > 16000)
        return IMGPU_JPEG_CPU;
    if (nc == 3) {
        /* YCbCr only (libjpeg's rule): an Adobe marker saying "no transform", or the
         * component ids 'R' 'G' 'B' without one, mean RGB-coded samples */
        if (adobe == 0 || (adobe < 0 && id[0] == 'R' && id[1] == 'G' && id[2] == 'B'))
            return IMGPU_JPEG_CPU;
        if (hs[1] != 1 || vs[1] != 1 || hs[2] != 1 || vs[2] != 1)
            return IMGPU_JPEG_CPU;
        const int ok = (hs[0] == 1 && vs[0] == 1) || (hs[0] == 2 && vs[0] == 1) ||
                       (hs[0] == 2 && vs[0] == 2) || (hs[0] == 1 && vs[0] == 2);
        if (!ok)
            return IMGPU_JPEG_CPU;
    }
    /* Issue 25: nvJPEG's engines report success on a scan cut short (an EOI after it) and fill
     * the missing MCUs from the next file's bitstream. A baseline file goes to them only when its
     * scan holds every MCU inside its data (src/io/jpeg_scan.c walks its codes: about a fifth
     * of a CPU decode); anything else goes to libjpeg-turbo, which decodes or refuses it. */
    if ((sof == 0xC0 || sof == 0xC1) && imgpu__jpeg_scan_check(b, n) != IMGPU_SCAN_WHOLE)
        return IMGPU_JPEG_CPU;
    *channels = nc;
    if (sof == 0xC0 || sof == 0xC1)
        return IMGPU_JPEG_HW;
    if (sof == 0xC2)
        return IMGPU_JPEG_CUDA;
    return IMGPU_JPEG_CPU;   /* lossless, arithmetic, hierarchical */
}

/* ---- the library handles: one pair per GPU, shared by its workers ------------------------------
 * Creating nvJPEG's handles (the hardware backend's above all) costs far more than a batch of
 * small images takes, so the workers of one GPU share them (nvJPEG handles are thread-safe;
 * the decode and encode states are per worker). Counted references: the last module of a GPU
 * destroys them. One lock per GPU: under `imgpu batch --devices 0,1` the second GPU's set-up
 * must not wait for the first's (~0.6 s of handles). */
#define MAX_GPUS 64
static pthread_once_t s_handles_once = PTHREAD_ONCE_INIT;
static struct {
    pthread_mutex_t lock;
    nvjpegHandle_t hw, sw;
    int refs;
} s_handles[MAX_GPUS];

static void handles_init(void)
{
    for (int i = 0; i < MAX_GPUS; i++)
        pthread_mutex_init(&s_handles[i].lock, NULL);
}

static int handles_get(int dev, nvjpegHandle_t *hw, nvjpegHandle_t *sw)
{
    int rc = 0;
    if (dev < 0 || dev >= MAX_GPUS)
        return imgpu_error("nvJPEG: GPU %d: only the first %d GPUs are served", dev, MAX_GPUS);
    pthread_once(&s_handles_once, handles_init);
    pthread_mutex_lock(&s_handles[dev].lock);
    if (!s_handles[dev].refs) {
        nvjpegHandle_t h = NULL, s = NULL;
        /* chroma upsampled with interpolation, as libjpeg-turbo's "fancy" upsampling does (the
         * measured agreement with the CPU's decode goes from PSNR ~43 dB to ~100 on photos);
         * plain where a library does not offer it. And strict (issue 25): a bitstream that does
         * not follow the standard (a scan cut short) is an error, not a best-effort decode; the
         * file then goes to libjpeg-turbo, which refuses it with its reason.
         * IMGPU_NVJPEG_STRICT=0 turns that off (to measure what nvJPEG does without it). */
        const unsigned interp = NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION;
        unsigned strict = 0;
#ifdef NVJPEG_FLAGS_BITSTREAM_STRICT
        const char *senv = getenv("IMGPU_NVJPEG_STRICT");
        if (!(senv && !strcmp(senv, "0")))
            strict = NVJPEG_FLAGS_BITSTREAM_STRICT;
#endif
        if ((!strict || nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, NULL, NULL, strict | interp, &s) !=
                            NVJPEG_STATUS_SUCCESS) &&
            nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, NULL, NULL, interp, &s) != NVJPEG_STATUS_SUCCESS &&
            nvjpegCreateSimple(&s) != NVJPEG_STATUS_SUCCESS) {
            rc = imgpu_error("nvJPEG: cannot create its library handle");
        } else {
            /* the hardware decoder where the GPU has one (A100, H100, H200 ...): its absence is
             * no error, the CUDA decoder takes its files. IMGPU_NVJPEG_HARDWARE=0 turns it off. */
            const char *env = getenv("IMGPU_NVJPEG_HARDWARE");
            if (!(env && !strcmp(env, "0")) &&
                (!strict || nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, NULL, NULL, strict | interp, &h) !=
                                NVJPEG_STATUS_SUCCESS) &&
                nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, NULL, NULL, interp, &h) != NVJPEG_STATUS_SUCCESS &&
                nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, NULL, NULL, 0, &h) != NVJPEG_STATUS_SUCCESS)
                h = NULL;
            s_handles[dev].hw = h;
            s_handles[dev].sw = s;
        }
    }
    if (rc == 0) {
        s_handles[dev].refs++;
        *hw = s_handles[dev].hw;
        *sw = s_handles[dev].sw;
    }
    pthread_mutex_unlock(&s_handles[dev].lock);
    return rc;
}

static void handles_put(int dev)
{
    if (dev < 0 || dev >= MAX_GPUS)
        return;
    pthread_once(&s_handles_once, handles_init);
    pthread_mutex_lock(&s_handles[dev].lock);
    if (s_handles[dev].refs > 0 && --s_handles[dev].refs == 0) {
        if (s_handles[dev].hw)
            nvjpegDestroy(s_handles[dev].hw);
        if (s_handles[dev].sw)
            nvjpegDestroy(s_handles[dev].sw);
        s_handles[dev].hw = s_handles[dev].sw = NULL;
    }
    pthread_mutex_unlock(&s_handles[dev].lock);
}

/* ---- the module ----------------------------------------------------------------------------- */

struct imgpu_cuda_jpeg {
    int dev;                      /* the GPU whose shared handles it holds; -1: none */
    nvjpegHandle_t hw;            /* hardware backend; NULL when the GPU has no NVJPG engines */
    nvjpegJpegState_t hw_state[2];/* batched states: [0] interleaved RGB, [1] gray */
    int hw_batch[2];              /* the batch size each state was initialized for (0: none) */
    int hw_state_failed[2];       /* its creation failed: the CUDA decoder takes those files */
    nvjpegHandle_t sw;            /* the default backend: single decodes and the encoder */
    nvjpegJpegState_t sw_state;
    nvjpegEncoderState_t enc;
    nvjpegEncoderParams_t params;
    cudaStream_t stream;
    cudaEvent_t decoded;          /* imgpu_cuda_jpeg_decode_after's: the engines' work enqueued */
    unsigned char *pool[IMGPU_JPEG_BATCH];
    size_t pool_bytes;            /* each pool buffer's size */
    size_t held;
    struct enc_slot {             /* imgpu_cuda_jpeg_encode_many's, made on its first call */
        nvjpegEncoderState_t st;
        nvjpegEncoderParams_t params;
        cudaStream_t s;
        cudaEvent_t ev;           /* the point of the item's `after` stream it waits for */
        int item;                 /* the item in flight on it; -1: free */
        unsigned char *host;      /* pinned: the bitstream's copy lands here (a DMA, no page
                                   * faults), then into the item's own buffer */
        size_t host_bytes;
    } eslot[IMGPU_JPEG_ENC_SLOTS];
    int eslots;                   /* how many are made */
};

static const char *status_name(nvjpegStatus_t s)
{
    switch (s) {
    case NVJPEG_STATUS_SUCCESS: return "success";
    case NVJPEG_STATUS_NOT_INITIALIZED: return "not initialized";
    case NVJPEG_STATUS_INVALID_PARAMETER: return "invalid parameter";
    case NVJPEG_STATUS_BAD_JPEG: return "bad JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "JPEG not supported";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: return "allocator failure";
    case NVJPEG_STATUS_EXECUTION_FAILED: return "execution failed";
    case NVJPEG_STATUS_ARCH_MISMATCH: return "architecture mismatch";
    case NVJPEG_STATUS_INTERNAL_ERROR: return "internal error";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "not supported";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "incomplete bitstream";
    default: return "unknown status";
    }
}

/* An nvJPEG failure: a device error behind it (sticky or not) is reported as CUDA's; else
 * nvJPEG's own status. */
static int nv_fail(nvjpegStatus_t st, const char *what, cudaStream_t stream)
{
    cudaError_t e = cudaStreamQuery(stream);
    if (e != cudaSuccess && e != cudaErrorNotReady)
        return imgpu__cuda_fail(e, what);
    if (st == NVJPEG_STATUS_ALLOCATOR_FAILURE) {
        imgpu_error("nvJPEG: %s: out of device memory", what);
        return IMGPU_CUDA_OOM;
    }
    return imgpu_error("nvJPEG: %s: %s", what, status_name(st));
}

#define NV_TRY(call)                                          \
    do {                                                      \
        nvjpegStatus_t s_ = (call);                           \
        if (s_ != NVJPEG_STATUS_SUCCESS) {                    \
            rc = nv_fail(s_, #call, j->stream);               \
            goto fail;                                        \
        }                                                     \
    } while (0)

/* An encoder slot of imgpu_cuda_jpeg_encode_many, freed (its NULL members skipped). */
static void enc_slot_free(struct enc_slot *e)
{
    if (e->s)
        cudaStreamSynchronize(e->s);
    if (e->params)
        nvjpegEncoderParamsDestroy(e->params);
    if (e->st)
        nvjpegEncoderStateDestroy(e->st);
    if (e->ev)
        cudaEventDestroy(e->ev);
    if (e->s)
        cudaStreamDestroy(e->s);
    if (e->host)
        cudaFreeHost(e->host);
    memset(e, 0, sizeof *e);
    e->item = -1;
}

void imgpu_cuda_jpeg_free(imgpu_cuda_jpeg *j)
{
    if (!j)
        return;
    if (j->stream)
        cudaStreamSynchronize(j->stream);
    for (int k = 0; k < j->eslots; k++)
        enc_slot_free(&j->eslot[k]);
    for (int k = 0; k < IMGPU_JPEG_BATCH; k++)
        cudaFree(j->pool[k]);
    if (j->params)
        nvjpegEncoderParamsDestroy(j->params);
    if (j->enc)
        nvjpegEncoderStateDestroy(j->enc);
    if (j->sw_state)
        nvjpegJpegStateDestroy(j->sw_state);
    for (int k = 0; k < 2; k++)
        if (j->hw_state[k])
            nvjpegJpegStateDestroy(j->hw_state[k]);
    handles_put(j->dev);
    if (j->decoded)
        cudaEventDestroy(j->decoded);
    if (j->stream)
        cudaStreamDestroy(j->stream);
    free(j);
}

imgpu_cuda_jpeg *imgpu_cuda_jpeg_new(void)
{
    int rc = 0;
    imgpu_cuda_jpeg *j = calloc(1, sizeof *j);
    if (!j) {
        imgpu_error("out of memory");
        return NULL;
    }
    j->dev = -1;
    int dev = 0;
    IMGPU_CUDA_TRY(cudaGetDevice(&dev));
    IMGPU_CUDA_TRY(cudaStreamCreateWithFlags(&j->stream, cudaStreamNonBlocking));
    IMGPU_CUDA_TRY(cudaEventCreateWithFlags(&j->decoded, cudaEventDisableTiming));
    if ((rc = handles_get(dev, &j->hw, &j->sw)) != 0)
        goto fail;
    j->dev = dev;
    NV_TRY(nvjpegJpegStateCreate(j->sw, &j->sw_state));
    NV_TRY(nvjpegEncoderStateCreate(j->sw, &j->enc, j->stream));
    NV_TRY(nvjpegEncoderParamsCreate(j->sw, &j->params, j->stream));
    /* the RGB state now; the gray one when the first gray file comes (a hardware state costs
     * ~0.35 s on an H200: bench/nvjpeg_setup.c) */
    if (j->hw && nvjpegJpegStateCreate(j->hw, &j->hw_state[0]) != NVJPEG_STATUS_SUCCESS) {
        j->hw_state[0] = NULL;
        j->hw = NULL;   /* the handle stays the GPU's; this worker uses the CUDA decoder */
    }
    return j;
fail:
    (void)rc;
    imgpu_cuda_jpeg_free(j);
    return NULL;
}

int imgpu_cuda_jpeg_hardware(const imgpu_cuda_jpeg *j) { return j && j->hw != NULL; }

/* Every pool buffer at least `need` bytes (contents not kept). */
static int grow_pool(imgpu_cuda_jpeg *j, size_t need)
{
    int rc = 0;
    if (need <= j->pool_bytes)
        return 0;
    IMGPU_CUDA_TRY(cudaStreamSynchronize(j->stream));
    for (int k = 0; k < IMGPU_JPEG_BATCH; k++) {
        cudaFree(j->pool[k]);
        j->pool[k] = NULL;
    }
    j->held = 0;
    j->pool_bytes = 0;
    if ((rc = imgpu__cuda_reserve(need * IMGPU_JPEG_BATCH, 0)) != 0)
        return rc;
    for (int k = 0; k < IMGPU_JPEG_BATCH; k++) {
        IMGPU_CUDA_TRY(cudaMalloc((void **)&j->pool[k], need));
        j->held += need;
    }
    j->pool_bytes = need;
    return 0;
fail:
    return rc;
}

static nvjpegImage_t dest_of(unsigned char *d, int w, int c)
{
    nvjpegImage_t im;
    memset(&im, 0, sizeof im);
    im.channel[0] = d;
    im.pitch[0] = (size_t)w * c;
    return im;
}

/* ordered 0: returns with the images complete (a synchronize after the engines); 1: the
 * engines' batch is only enqueued, and `after` waits for it (imgpu_cuda_jpeg_decode_after). */
static int decode(imgpu_cuda_jpeg *j, int n, const unsigned char *const *data, const size_t *len,
                  const int *route, const int *channels, const int *w, const int *h,
                  const unsigned char **d_img, int *ok, int *how, cudaStream_t after, int ordered)
{
    int rc = 0;
    size_t need = 0;
    if (n < 1 || n > IMGPU_JPEG_BATCH)
        return imgpu_error("nvJPEG: a batch of %d images", n);
    for (int i = 0; i < n; i++) {
        size_t b = (size_t)w[i] * h[i] * channels[i];
        need = b > need ? b : need;
        ok[i] = 0;
        how[i] = IMGPU_JPEG_CPU;
        d_img[i] = NULL;
    }
    if ((rc = grow_pool(j, need + 64)) != 0)
        return rc;
    /* the trap: nothing may still use the pool when the engines start writing it */
    IMGPU_CUDA_TRY(cudaStreamSynchronize(j->stream));
    /* issue 25: each image's buffer zeroed first, so that a decode which reports success
     * without writing every MCU (a scan cut short) can never pass on an earlier image's
     * pixels, another file's. Synchronized before the decode: the hardware engines do not
     * wait for work queued on the stream (the trap above). */
    for (int i = 0; i < n; i++) {
        d_img[i] = j->pool[i];
        if (route[i] != IMGPU_JPEG_CPU)
            IMGPU_CUDA_TRY(cudaMemsetAsync(j->pool[i], 0, (size_t)w[i] * h[i] * channels[i], j->stream));
    }
    IMGPU_CUDA_TRY(cudaStreamSynchronize(j->stream));

    /* the hardware engines: one batched call per output layout (RGB, gray) */
    if (j->hw) {
        for (int g = 0; g < 2; g++) {
            const int want_c = g == 0 ? 3 : 1;
            const unsigned char *bd[IMGPU_JPEG_BATCH];
            size_t bl[IMGPU_JPEG_BATCH];
            nvjpegImage_t dst[IMGPU_JPEG_BATCH];
            int idx[IMGPU_JPEG_BATCH], m = 0;
            for (int i = 0; i < n; i++)
                if (route[i] == IMGPU_JPEG_HW && channels[i] == want_c) {
                    bd[m] = data[i];
                    bl[m] = len[i];
                    dst[m] = dest_of(j->pool[i], w[i], want_c);
                    idx[m++] = i;
                }
            if (!m)
                continue;
            if (!j->hw_state[g] &&
                (j->hw_state_failed[g] || nvjpegJpegStateCreate(j->hw, &j->hw_state[g]) != NVJPEG_STATUS_SUCCESS)) {
                j->hw_state[g] = NULL;   /* these go to the CUDA decoder below; not tried again */
                j->hw_state_failed[g] = 1;
                continue;
            }
            const nvjpegOutputFormat_t fmt = want_c == 3 ? NVJPEG_OUTPUT_RGBI : NVJPEG_OUTPUT_Y;
            nvjpegStatus_t st = NVJPEG_STATUS_SUCCESS;
            if (j->hw_batch[g] != m) {
                st = nvjpegDecodeBatchedInitialize(j->hw, j->hw_state[g], m, 1, fmt);
                j->hw_batch[g] = st == NVJPEG_STATUS_SUCCESS ? m : 0;
            }
            if (st == NVJPEG_STATUS_SUCCESS)
                st = nvjpegDecodeBatched(j->hw, j->hw_state[g], bd, bl, dst, j->stream);
            if (st == NVJPEG_STATUS_SUCCESS) {
                /* the engines' completion is ordered on j->stream (the synchronize below has
                 * always relied on it): an event recorded after them serves `after` as well.
                 * Only the last batch of the call is left running: the RGB batch is waited for
                 * when a gray one follows (the engines do not order themselves after earlier
                 * work on the stream, and both batches share the hardware handle) */
                int gray_next = 0;
                for (int i = 0; g == 0 && i < n; i++)
                    gray_next |= route[i] == IMGPU_JPEG_HW && channels[i] == 1;
                cudaError_t e = ordered && !gray_next ? cudaSuccess : cudaStreamSynchronize(j->stream);
                if (e != cudaSuccess)
                    return imgpu__cuda_fail(e, "nvjpegDecodeBatched");
                for (int k = 0; k < m; k++) {
                    ok[idx[k]] = 1;
                    how[idx[k]] = IMGPU_JPEG_HW;
                }
            } else {
                /* one bad file fails the whole batch: the state is reset, and each of them
                 * goes to the CUDA decoder alone (then to the CPU if that refuses it too) */
                j->hw_batch[g] = 0;
                cudaError_t e = cudaStreamSynchronize(j->stream);
                if (e != cudaSuccess)
                    return imgpu__cuda_fail(e, "nvjpegDecodeBatched");
            }
        }
    }
    /* the CUDA decoder, one image at a time: progressive files, and what the engines did not
     * decode (no engines, or a batch that failed) */
    for (int i = 0; i < n; i++) {
        if (ok[i] || route[i] == IMGPU_JPEG_CPU)
            continue;
        nvjpegImage_t dst = dest_of(j->pool[i], w[i], channels[i]);
        nvjpegStatus_t st = nvjpegDecode(j->sw, j->sw_state, data[i], len[i],
                                         channels[i] == 3 ? NVJPEG_OUTPUT_RGBI : NVJPEG_OUTPUT_Y, &dst,
                                         j->stream);
        cudaError_t e = cudaStreamSynchronize(j->stream);
        if (e != cudaSuccess)
            return imgpu__cuda_fail(e, "nvjpegDecode");
        if (st == NVJPEG_STATUS_SUCCESS) {
            ok[i] = 1;
            how[i] = IMGPU_JPEG_CUDA;
        }
    }
    if (ordered) {
        IMGPU_CUDA_TRY(cudaEventRecord(j->decoded, j->stream));
        IMGPU_CUDA_TRY(cudaStreamWaitEvent(after, j->decoded, 0));
    }
    return 0;
fail:
    return rc;
}

int imgpu_cuda_jpeg_decode(imgpu_cuda_jpeg *j, int n, const unsigned char *const *data, const size_t *len,
                           const int *route, const int *channels, const int *w, const int *h,
                           const unsigned char **d_img, int *ok, int *how)
{
    return decode(j, n, data, len, route, channels, w, h, d_img, ok, how, NULL, 0);
}

int imgpu_cuda_jpeg_decode_after(imgpu_cuda_jpeg *j, int n, const unsigned char *const *data, const size_t *len,
                                 const int *route, const int *channels, const int *w, const int *h,
                                 const unsigned char **d_img, int *ok, int *how, cudaStream_t after)
{
    return decode(j, n, data, len, route, channels, w, h, d_img, ok, how, after, 1);
}

/* The settings on an encoder's parameters: 0, or 1 when nvJPEG does not take them. */
static int enc_params(nvjpegEncoderParams_t params, const imgpu_cuda_jpeg_params *p, int gray, cudaStream_t s)
{
    const nvjpegChromaSubsampling_t css = gray ? NVJPEG_CSS_GRAY
                                        : p->subsampling == 444 ? NVJPEG_CSS_444
                                        : p->subsampling == 422 ? NVJPEG_CSS_422 : NVJPEG_CSS_420;
    return nvjpegEncoderParamsSetQuality(params, p->quality, s) != NVJPEG_STATUS_SUCCESS ||
           nvjpegEncoderParamsSetSamplingFactors(params, css, s) != NVJPEG_STATUS_SUCCESS ||
           nvjpegEncoderParamsSetOptimizedHuffman(params, p->optimize ? 1 : 0, s) != NVJPEG_STATUS_SUCCESS ||
           nvjpegEncoderParamsSetEncoding(params, p->progressive ? NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN
                                                                 : NVJPEG_ENCODING_BASELINE_DCT, s) != NVJPEG_STATUS_SUCCESS;
}

int imgpu_cuda_jpeg_encode(imgpu_cuda_jpeg *j, const unsigned char *d, int w, int h, int c,
                           const imgpu_cuda_jpeg_params *p, cudaStream_t stream, unsigned char **out,
                           size_t *len)
{
    int rc = 0;
    *out = NULL;
    *len = 0;
    if (c != 1 && c != 3)
        return 1;
    if (enc_params(j->params, p, c == 1, stream))
        return 1;   /* settings nvJPEG does not take: the caller encodes on the CPU */
    nvjpegImage_t src = dest_of((unsigned char *)d, w, c);
    nvjpegStatus_t st = c == 3 ? nvjpegEncodeImage(j->sw, j->enc, j->params, &src, NVJPEG_INPUT_RGBI, w, h, stream)
                               : nvjpegEncodeYUV(j->sw, j->enc, j->params, &src, NVJPEG_CSS_GRAY, w, h, stream);
    if (st == NVJPEG_STATUS_JPEG_NOT_SUPPORTED || st == NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED ||
        st == NVJPEG_STATUS_INVALID_PARAMETER) {
        cudaError_t e = cudaStreamSynchronize(stream);
        return e == cudaSuccess ? 1 : imgpu__cuda_fail(e, "nvjpegEncodeImage");
    }
    if (st != NVJPEG_STATUS_SUCCESS)
        return nv_fail(st, "nvjpegEncodeImage", stream);
    IMGPU_CUDA_TRY(cudaStreamSynchronize(stream));
    size_t n = 0;
    st = nvjpegEncodeRetrieveBitstream(j->sw, j->enc, NULL, &n, stream);
    if (st != NVJPEG_STATUS_SUCCESS)
        return nv_fail(st, "nvjpegEncodeRetrieveBitstream", stream);
    unsigned char *buf = malloc(n ? n : 1);
    if (!buf)
        return imgpu_error("out of memory");
    st = nvjpegEncodeRetrieveBitstream(j->sw, j->enc, buf, &n, stream);
    if (st == NVJPEG_STATUS_SUCCESS && cudaStreamSynchronize(stream) != cudaSuccess)
        st = NVJPEG_STATUS_EXECUTION_FAILED;
    if (st != NVJPEG_STATUS_SUCCESS) {
        free(buf);
        return nv_fail(st, "nvjpegEncodeRetrieveBitstream", stream);
    }
    *out = buf;
    *len = n;
    return 0;
fail:
    return rc;
}

/* ---- several encodes in flight ------------------------------------------------------------ */

/* IMGPU_JPEG_ENC_SLOTS=N (1..IMGPU_JPEG_ENC_SLOTS) uses fewer slots: bench/encode_slots.py */
static int enc_slots_want(void)
{
    const char *v = getenv("IMGPU_JPEG_ENC_SLOTS");
    const int n = v && *v ? atoi(v) : 4;
    return n >= 1 && n <= IMGPU_JPEG_ENC_SLOTS ? n : 4;
}

static int enc_slots_make(imgpu_cuda_jpeg *j)
{
    int rc = 0;
    for (const int want = enc_slots_want(); j->eslots < want; j->eslots++) {
        struct enc_slot *e = &j->eslot[j->eslots];
        memset(e, 0, sizeof *e);
        e->item = -1;
        IMGPU_CUDA_TRY(cudaStreamCreateWithFlags(&e->s, cudaStreamNonBlocking));
        IMGPU_CUDA_TRY(cudaEventCreateWithFlags(&e->ev, cudaEventDisableTiming));
        NV_TRY(nvjpegEncoderStateCreate(j->sw, &e->st, e->s));
        NV_TRY(nvjpegEncoderParamsCreate(j->sw, &e->params, e->s));
    }
    return 0;
fail:
    enc_slot_free(&j->eslot[j->eslots]);   /* the half-made one; the next call tries again */
    return rc;
}

static void item_fail(char **errors, int i, int *status)
{
    status[i] = -1;
    if (errors) {
        const char *m = imgpu_error_message();
        if (!m || !*m)
            m = "nvJPEG encode failed";
        const size_t n = strlen(m) + 1;
        if ((errors[i] = malloc(n)))
            memcpy(errors[i], m, n);
    }
}

/* The bitstream of the item in flight on slot e: 0, or the device's error code (the item failed). */
static int enc_fetch(imgpu_cuda_jpeg *j, struct enc_slot *e, unsigned char **out, size_t *len, int *status,
                     char **errors)
{
    const int i = e->item;
    e->item = -1;
    size_t n = 0;
    cudaError_t ce = cudaStreamSynchronize(e->s);
    nvjpegStatus_t st = ce == cudaSuccess ? nvjpegEncodeRetrieveBitstream(j->sw, e->st, NULL, &n, e->s)
                                          : NVJPEG_STATUS_EXECUTION_FAILED;
    unsigned char *buf = NULL;
    /* the copy out goes to the slot's pinned buffer (grown by a quarter more than asked, kept):
     * into fresh pageable memory the driver's copy faults every page in, ~3x the encode's time
     * for 4K photos held 64 at a time (bench/encode_slots.py) */
    if (st == NVJPEG_STATUS_SUCCESS && n > e->host_bytes) {
        if (e->host)
            cudaFreeHost(e->host);
        e->host = NULL;
        e->host_bytes = 0;
        const size_t want = n + n / 4 + 4096;
        if (cudaMallocHost((void **)&e->host, want) != cudaSuccess) {
            e->host = NULL;
            cudaGetLastError();
        } else
            e->host_bytes = want;
    }
    if (st == NVJPEG_STATUS_SUCCESS && !(buf = malloc(n ? n : 1))) {
        imgpu_error("out of memory");
        item_fail(errors, i, status);
        return 0;
    }
    unsigned char *dst = e->host && n <= e->host_bytes ? e->host : buf;
    if (st == NVJPEG_STATUS_SUCCESS)
        st = nvjpegEncodeRetrieveBitstream(j->sw, e->st, dst, &n, e->s);
    if (st == NVJPEG_STATUS_SUCCESS && cudaStreamSynchronize(e->s) != cudaSuccess)
        st = NVJPEG_STATUS_EXECUTION_FAILED;
    if (st == NVJPEG_STATUS_SUCCESS && dst != buf)
        memcpy(buf, dst, n);
    if (st != NVJPEG_STATUS_SUCCESS) {
        free(buf);
        const int rc = nv_fail(st, "nvjpegEncodeRetrieveBitstream", e->s);
        item_fail(errors, i, status);
        return rc == IMGPU_CUDA_STICKY || ce != cudaSuccess ? rc : 0;
    }
    out[i] = buf;
    len[i] = n;
    status[i] = 0;
    return 0;
}

int imgpu_cuda_jpeg_encode_many(imgpu_cuda_jpeg *j, int n, const imgpu_cuda_jpeg_src *src,
                                const imgpu_cuda_jpeg_params *p, unsigned char **out, size_t *len, int *status,
                                char **errors)
{
    int rc = 0, k = 0, set[2] = {0, 0}, takes[2] = {1, 1}, i = 0;
    for (i = 0; i < n; i++) {
        out[i] = NULL;
        len[i] = 0;
        status[i] = 1;
        if (errors)
            errors[i] = NULL;
    }
    i = 0;
    if ((rc = enc_slots_make(j)) != 0)
        goto dead;
    for (; i < n; i++) {
        const imgpu_cuda_jpeg_src *s = &src[i];
        if (s->c != 1 && s->c != 3)
            continue;   /* status 1: the CPU's */
        struct enc_slot *e = &j->eslot[k];
        k = (k + 1) % j->eslots;
        if (e->item >= 0 && (rc = enc_fetch(j, e, out, len, status, errors)) != 0)
            goto dead;
        /* a slot's parameters follow the image's kind (gray or colour); set once a kind a slot */
        const int g = s->c == 1;
        if (!(set[g] & (1 << (e - j->eslot)))) {
            /* the slot's previous item is fetched: its stream is idle, the parameters free */
            if (enc_params(e->params, p, g, e->s)) {
                takes[g] = 0;
                continue;
            }
            set[g] |= 1 << (e - j->eslot);
            set[!g] &= ~(1 << (e - j->eslot));
        }
        if (!takes[g])
            continue;
        IMGPU_CUDA_TRY(cudaEventRecord(e->ev, s->after));
        IMGPU_CUDA_TRY(cudaStreamWaitEvent(e->s, e->ev, 0));
        nvjpegImage_t im;
        memset(&im, 0, sizeof im);
        im.channel[0] = (unsigned char *)s->d;
        im.pitch[0] = s->pitch;
        nvjpegStatus_t st = g ? nvjpegEncodeYUV(j->sw, e->st, e->params, &im, NVJPEG_CSS_GRAY, s->w, s->h, e->s)
                              : nvjpegEncodeImage(j->sw, e->st, e->params, &im, NVJPEG_INPUT_RGBI, s->w, s->h, e->s);
        if (st == NVJPEG_STATUS_JPEG_NOT_SUPPORTED || st == NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED ||
            st == NVJPEG_STATUS_INVALID_PARAMETER) {
            IMGPU_CUDA_TRY(cudaStreamSynchronize(e->s));
            continue;   /* status 1 */
        }
        if (st != NVJPEG_STATUS_SUCCESS) {
            rc = nv_fail(st, "nvjpegEncodeImage", e->s);
            item_fail(errors, i, status);
            if (rc == IMGPU_CUDA_STICKY)
                goto dead;
            rc = 0;
            continue;
        }
        e->item = i;
    }
    /* the ones still in flight, oldest first */
    for (int m = 0; m < j->eslots; m++) {
        struct enc_slot *e = &j->eslot[(k + m) % j->eslots];
        if (e->item >= 0 && (rc = enc_fetch(j, e, out, len, status, errors)) != 0)
            goto dead;
    }
    return 0;
fail:
dead:
    /* the device failed: the items in flight and those not reached carry its error (those
     * that are not nvJPEG's keep status 1), and the slots are left idle */
    for (int m = 0; m < j->eslots; m++) {
        struct enc_slot *e = &j->eslot[m];
        cudaStreamSynchronize(e->s);
        if (e->item >= 0 && status[e->item] != -1)
            item_fail(errors, e->item, status);
        e->item = -1;
    }
    for (; i < n; i++)
        if (status[i] == 1 && (src[i].c == 1 || src[i].c == 3))
            item_fail(errors, i, status);
    return rc ? rc : -1;
}

#else
/* built without nvJPEG: nothing here (cuda_backend.h declares the API only with it) */
typedef int imgpu__no_nvjpeg;
#endif
