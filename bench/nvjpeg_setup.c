/* bench/nvjpeg_setup.c — where nvJPEG's fixed start-up goes, one step at a time (issue 17).
 *
 * imgpu batch pays a fixed ~2 s before its first JPEG (bench/RESULTS.md). This probe times, in a
 * fresh process, each call imgpu's src/cuda/jpeg.c makes before and during its first decode and
 * encode, so the set-up can be cut where it is spent:
 *   nvjpeg_setup FILE.jpg [serial|parallel|hw-first]
 * serial:   CUDA context, the default backend's handle, the hardware backend's handle (imgpu's order);
 * hw-first: the hardware handle first;
 * parallel: both handles created at once on two threads (after the CUDA context).
 * Then the states, the first and second batched hardware decode of FILE (a batch of one) and the
 * first and second GPU encode (q92 4:2:0). One line per step: "<step> <ms>". Built on the GPU
 * machine only (bench/nvjpeg_batch.sh):
 *   gcc -O2 -I/usr/local/cuda/include bench/nvjpeg_setup.c -L/usr/local/cuda/lib64 -lnvjpeg -lcudart -lpthread */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime.h>
#include <nvjpeg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double t_last;
static void step(const char *name)
{
    double t = now_ms();
    printf("%-34s %8.1f\n", name, t - t_last);
    fflush(stdout);
    t_last = now_ms();
}

#define NV(call)                                                                    \
    do {                                                                            \
        nvjpegStatus_t s_ = (call);                                                 \
        if (s_ != NVJPEG_STATUS_SUCCESS) {                                          \
            fprintf(stderr, "nvjpeg_setup: %s: status %d\n", #call, (int)s_);     \
            exit(1);                                                                \
        }                                                                           \
    } while (0)
#define CU(call)                                                                    \
    do {                                                                            \
        cudaError_t e_ = (call);                                                    \
        if (e_ != cudaSuccess) {                                                    \
            fprintf(stderr, "nvjpeg_setup: %s: %s\n", #call, cudaGetErrorString(e_)); \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

static void *make_hw(void *out)
{
    CU(cudaSetDevice(0));
    NV(nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, NULL, NULL, NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION,
                      (nvjpegHandle_t *)out));
    return NULL;
}

static void *make_sw(void *out)
{
    CU(cudaSetDevice(0));
    NV(nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, NULL, NULL, NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION,
                      (nvjpegHandle_t *)out));
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: nvjpeg_setup FILE.jpg [serial|parallel|hw-first]\n");
        return 2;
    }
    const char *mode = argc > 2 ? argv[2] : "serial";
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(n);
    if (!data || fread(data, 1, n, f) != n)
        return 1;
    fclose(f);

    double t0 = now_ms();
    t_last = t0;
    CU(cudaFree(0));
    step("cuda context (cudaFree(0))");
    cudaStream_t st;
    CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    nvjpegHandle_t hw = NULL, sw = NULL;
    if (!strcmp(mode, "parallel")) {
        pthread_t a, b;
        pthread_create(&a, NULL, make_hw, &hw);
        pthread_create(&b, NULL, make_sw, &sw);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        step("both handles, two threads");
    } else if (!strcmp(mode, "hw-first")) {
        make_hw(&hw);
        step("hardware handle");
        make_sw(&sw);
        step("default handle");
    } else {
        make_sw(&sw);
        step("default handle");
        make_hw(&hw);
        step("hardware handle");
    }
    nvjpegJpegState_t hs, ss;
    NV(nvjpegJpegStateCreate(hw, &hs));
    step("hardware state");
    NV(nvjpegJpegStateCreate(sw, &ss));
    step("default state");
    nvjpegEncoderState_t es;
    nvjpegEncoderParams_t ep;
    NV(nvjpegEncoderStateCreate(sw, &es, st));
    NV(nvjpegEncoderParamsCreate(sw, &ep, st));
    step("encoder state + params");

    int nc, w[NVJPEG_MAX_COMPONENT], h[NVJPEG_MAX_COMPONENT];
    nvjpegChromaSubsampling_t sub;
    NV(nvjpegGetImageInfo(sw, data, n, &nc, &sub, w, h));
    unsigned char *dev;
    CU(cudaMalloc((void **)&dev, (size_t)w[0] * h[0] * 3));
    step("image info + output buffer");
    nvjpegImage_t img;
    memset(&img, 0, sizeof img);
    img.channel[0] = dev;
    img.pitch[0] = (size_t)w[0] * 3;
    const unsigned char *dp[1] = { data };
    size_t len[1] = { n };
    for (int r = 0; r < 2; r++) {
        NV(nvjpegDecodeBatchedInitialize(hw, hs, 1, 1, NVJPEG_OUTPUT_RGBI));
        step(r ? "batched init (again)" : "batched init (first)");
        NV(nvjpegDecodeBatched(hw, hs, dp, len, &img, st));
        CU(cudaStreamSynchronize(st));
        step(r ? "hardware decode (second)" : "hardware decode (first)");
    }
    NV(nvjpegEncoderParamsSetQuality(ep, 92, st));
    NV(nvjpegEncoderParamsSetSamplingFactors(ep, NVJPEG_CSS_420, st));
    for (int r = 0; r < 2; r++) {
        size_t m = 0;
        NV(nvjpegEncodeImage(sw, es, ep, &img, NVJPEG_INPUT_RGBI, w[0], h[0], st));
        NV(nvjpegEncodeRetrieveBitstream(sw, es, NULL, &m, st));
        unsigned char *out = malloc(m);
        NV(nvjpegEncodeRetrieveBitstream(sw, es, out, &m, st));
        CU(cudaStreamSynchronize(st));
        free(out);
        step(r ? "encode + bitstream (second)" : "encode + bitstream (first)");
    }
    nvjpegEncoderParamsDestroy(ep);
    nvjpegEncoderStateDestroy(es);
    nvjpegJpegStateDestroy(ss);
    nvjpegJpegStateDestroy(hs);
    nvjpegDestroy(hw);
    nvjpegDestroy(sw);
    cudaFree(dev);
    step("teardown");
    printf("%-34s %8.1f  (%s, %dx%d)\n", "total", now_ms() - t0, mode, w[0], h[0]);
    return 0;
}
