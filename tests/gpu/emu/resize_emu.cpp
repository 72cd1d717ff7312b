// resize_emu.cpp — kernels/resize.cu run on the host under ASan (tests/gpu/emu/run.sh says how and why).
#include <cuda_runtime_api.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#undef __global__
#undef __device__
#undef __forceinline__
#define __global__ static
#define __device__ static
#define __forceinline__ inline
struct U3 { unsigned x, y, z; };
static U3 blockIdx, threadIdx, blockDim;
static inline float __fadd_rn(float a, float b) { volatile float r = a + b; return r; }
static inline float __fmul_rn(float a, float b) { volatile float r = a * b; return r; }
static inline float __fdiv_rn(float a, float b) { volatile float r = a / b; return r; }
static inline float __uint2float_rn(unsigned a) { return (float)a; }
static inline float __int2float_rn(int a) { return (float)a; }
static inline int __float2int_rn(float a) { return (int)lrintf(a); }
#define IMGPU_PREMUL_CUH
static inline float imgpu__premul(float c, float a) { return __fmul_rn(c, a); }
static inline float imgpu__unpremul(float m, float a, float maxv) { const float v = __fdiv_rn(m, a); return v < 0.0f ? 0.0f : (v > maxv ? maxv : v); }
#include "resize_body.inc"

template <class F> static void grid(long long n, F f)
{
    const long long B = 256, nb = (n + B - 1) / B;
    blockDim.x = B;
    for (long long b = 0; b < nb; b++)
        for (long long t = 0; t < B; t++) {
            blockIdx.x = (unsigned)b;
            threadIdx.x = (unsigned)t;
            f();
        }
}

static unsigned long long rng = 88172645463325252ull;
static unsigned rnd() { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (unsigned)rng; }

static int one(int sw, int sh, int c, int depth, imgpu_resize_params p)
{
    imgpu_resize_tab t;
    if (imgpu_resize_tab_build(sw, sh, c, depth, &p, &t) < 0)
        return -1;
    if (t.method == IMGPU_RSZ_COPY) { imgpu_resize_tab_free(&t); return 0; }
    const int b = depth / 8;
    size_t inb = (size_t)sw * sh * c * b, outb = (size_t)t.dw * t.dh * c * b;
    unsigned char *in = (unsigned char *)malloc(inb), *out = (unsigned char *)malloc(outb);
    for (size_t i = 0; i < inb; i++) in[i] = rnd();
    int32_t *blk = (int32_t *)malloc((size_t)t.block_words * 4);
    memcpy(blk, t.block, (size_t)t.block_words * 4);
    imgpu_resize_tab dt = t;
    dt.block = blk;
    void *h = t.method == IMGPU_RSZ_NEAREST ? NULL : malloc((size_t)t.nh * t.dw * t.cn * 4 + 0);
    if (t.method == IMGPU_RSZ_NEAREST) {
        grid((long long)t.dw * t.dh, [&] { k_nearest(dt, in, out); });
    } else {
        if (t.nh > 0) grid((long long)t.nh * t.dw * t.cn, [&] { k_h(dt, in, h); });
        grid((long long)t.dw * t.dh, [&] { k_v(dt, in, h, out); });
    }
    free(h); free(blk); free(in); free(out);
    imgpu_resize_tab_free(&t);
    return 0;
}

int main(int argc, char **argv)
{
    static const int src[][2] = {{1, 1}, {1, 37}, {41, 1}, {64, 48}, {97, 61}, {2, 2}, {3, 1}, {1, 3}, {5, 7}, {640, 427}};
    static const int dst[][2] = {{1, 1}, {1, 9}, {13, 1}, {32, 24}, {50, 31}, {200, 133}, {333, 211}, {1280, 854}, {2, 3}, {3, 2}};
    int big = argc > 1;
    long n = 0;
    for (auto &s : src) {
        if (!big && s[0] * s[1] > 10000) continue;
        for (int depth = 8; depth <= 16; depth += 8)
            for (int c = 1; c <= 4; c++)
                for (int f = 0; f <= 4; f++) for (int aa = 0; aa <= (f ? 1 : 0); aa++) {
                    for (auto &d : dst) {
                        if (!big && d[0] * d[1] > 100000) continue;
                        imgpu_resize_params p; memset(&p, 0, sizeof p);
                        p.size_w = d[0]; p.size_h = d[1]; p.filter = f; p.antialias = aa;
                        one(s[0], s[1], c, depth, p); n++;
                    }
                    const double scales[] = {0.5, 1.0 / 3, 0.25, 2.0, 1.7, 0.37, 0.1, 3.0};
                    for (double sc : scales) {
                        imgpu_resize_params p; memset(&p, 0, sizeof p);
                        p.scale = sc; p.filter = f; p.antialias = aa;
                        one(s[0], s[1], c, depth, p); n++;
                    }
                }
        fprintf(stderr, "src %dx%d done\n", s[0], s[1]);
    }
    printf("%ld cases clean\n", n);
    return 0;
}
