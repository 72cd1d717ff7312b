/* bench/decode_profile.c — where imgpu_context_decode_batch's time goes (issue 27), on the GPU
 * machine: the same JPEGs (held in memory) through
 *   raw     nvJPEG's hardware decoder alone (nvjpegDecodeBatched, batch B, preallocated outputs,
 *           one synchronize a batch): the ceiling;
 *   walk    imgpu__jpeg_scan_check on each file, one thread (issue 25's check), and
 *   route   imgpu_session_jpeg_route (markers + the walk), one thread;
 *   lib     imgpu_context_decode_batch, B files a call, each result freed after the call;
 *   keep    the same, every result kept until the end (as a Python list of arrays is).
 * Each the wall time over all files after one warm-up pass, in images/s.
 * Build (bench/decode_profile.sh does it): cc -O2 bench/decode_profile.c -Ibuild-gpu/include
 *   -Isrc/io -Lbuild-gpu/lib -limgpu -lnvjpeg -lcudart
 * Usage: decode_profile B FILE... */
#define _POSIX_C_SOURCE 200809L
#include <imgpu/imgpu.h>

#include "jpeg_scan.h"

#include <cuda_runtime.h>
#include <nvjpeg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int imgpu_session_jpeg_route(const unsigned char *b, size_t n, int *channels);   /* the library's own */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CK(x)                                                              \
    do {                                                                   \
        int e_ = (int)(x);                                                 \
        if (e_) {                                                          \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, e_); \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const int B = atoi(argv[1]);
    const int n = argc - 2;
    unsigned char **data = calloc((size_t)n, sizeof *data);
    size_t *len = calloc((size_t)n, sizeof *len), total = 0;
    for (int i = 0; i < n; i++) {
        FILE *f = fopen(argv[2 + i], "rb");
        if (!f)
            return 2;
        fseek(f, 0, SEEK_END);
        len[i] = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        data[i] = malloc(len[i]);
        if (fread(data[i], 1, len[i], f) != len[i])
            return 2;
        fclose(f);
        total += len[i];
    }
    int w = 0, h = 0;
    {   /* the first file's size (all the same in the bench inputs) */
        nvjpegHandle_t hh;
        int nc, ws[4], hs[4];
        nvjpegChromaSubsampling_t ss;
        CK(nvjpegCreateSimple(&hh));
        CK(nvjpegGetImageInfo(hh, data[0], len[0], &nc, &ss, ws, hs));
        w = ws[0];
        h = hs[0];
        nvjpegDestroy(hh);
    }
    printf("%d files, %.1f MB, %dx%d, batch %d\n", n, total / 1e6, w, h, B);

    /* walk and route, one thread */
    double t0 = now();
    int whole = 0;
    for (int i = 0; i < n; i++)
        whole += imgpu__jpeg_scan_check(data[i], len[i]) == IMGPU_SCAN_WHOLE;
    double dt = now() - t0;
    printf("walk   %8.1f files/s one thread (%.2f ms a file, %.0f MB/s); %d of %d whole\n", n / dt, dt / n * 1e3,
           total / dt / 1e6, whole, n);
    t0 = now();
    int hw = 0;
    for (int i = 0; i < n; i++) {
        int c;
        hw += imgpu_session_jpeg_route(data[i], len[i], &c) == 1;
    }
    dt = now() - t0;
    printf("route  %8.1f files/s one thread (%.2f ms a file); %d to the engines\n", n / dt, dt / n * 1e3, hw);

    /* raw nvJPEG hardware batched decode */
    {
        nvjpegHandle_t hwh;
        nvjpegJpegState_t st;
        cudaStream_t s;
        CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        CK(nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, NULL, NULL, 0, &hwh));
        CK(nvjpegJpegStateCreate(hwh, &st));
        CK(nvjpegDecodeBatchedInitialize(hwh, st, B, 1, NVJPEG_OUTPUT_RGBI));
        nvjpegImage_t *dst = calloc((size_t)B, sizeof *dst);
        for (int k = 0; k < B; k++) {
            CK(cudaMalloc((void **)&dst[k].channel[0], (size_t)w * h * 3));
            dst[k].pitch[0] = (size_t)w * 3;
        }
        for (int pass = 0; pass < 2; pass++) {
            t0 = now();
            int done = 0;
            for (int i = 0; i + B <= n; i += B) {
                CK(nvjpegDecodeBatched(hwh, st, (const unsigned char *const *)data + i, len + i, dst, s));
                CK(cudaStreamSynchronize(s));
                done += B;
            }
            dt = now() - t0;
            if (pass)
                printf("raw    %8.1f images/s (nvjpegDecodeBatched, batch %d, synchronized each)\n", done / dt, B);
        }
        for (int k = 0; k < B; k++)
            cudaFree(dst[k].channel[0]);
        nvjpegJpegStateDestroy(st);
        nvjpegDestroy(hwh);
        cudaStreamDestroy(s);
    }

    /* the library */
    imgpu_context *ctx = imgpu_context_create(IMGPU_DEVICE_CUDA);
    void *cs = imgpu_context_cuda_stream(ctx);
    imgpu_device_image **out = calloc((size_t)n, sizeof *out);
    char **err = calloc((size_t)n, sizeof *err);
    for (int mode = 0; mode < 2; mode++) {
        for (int pass = 0; pass < 2; pass++) {
            t0 = now();
            for (int i = 0; i < n; i += B) {
                const int m = i + B <= n ? B : n - i;
                CK(imgpu_context_decode_batch(ctx, m, (const unsigned char *const *)data + i, len + i, 1, cs, out + i,
                                              err + i) != 0);
                if (mode == 0)
                    for (int k = i; k < i + m; k++) {
                        imgpu_device_image_free(out[k], &cs, 1);
                        out[k] = NULL;
                    }
            }
            cudaStreamSynchronize((cudaStream_t)cs);
            dt = now() - t0;
            for (int k = 0; k < n; k++) {
                if (err[k]) {
                    fprintf(stderr, "item %d: %s\n", k, err[k]);
                    free(err[k]);
                    err[k] = NULL;
                }
                imgpu_device_image_free(out[k], &cs, 1);
                out[k] = NULL;
            }
            cudaStreamSynchronize((cudaStream_t)cs);
            if (pass)
                printf("%s   %8.1f images/s (imgpu_context_decode_batch, %d a call%s)\n", mode ? "keep" : "lib ",
                       n / dt, B, mode ? ", results kept to the end" : ", results freed each call");
        }
    }
    imgpu_context_destroy(ctx);
    return 0;
}
