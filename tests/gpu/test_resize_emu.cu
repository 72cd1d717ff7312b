/* test_resize_emu.cu — resize's GPU kernels run on the host: the thread bodies of
 * kernels/resize_body.cuh (the same functions kernels/resize.cu launches) called block by block
 * and thread by thread in the kernels' grids, phase 1 of every thread of a block before its
 * phase 2 (the barrier), against the CPU reference, bit for bit. Every way the kernels can go:
 * the fused tiles (shared memory: a band's rows), the two passes through the intermediate
 * (forced here as well, and the only way where a band's rows exceed shared memory: shrinking by
 * 10), nearest; every filter, --antialias, 8 and 16 bits, 1 to 4 channels (alpha: the
 * premultiplied colour), up and down, odd sizes, 1xN, Nx1, whole factors (area's box, bilinear
 * by 1/2). The fused tiles both ways where a table has a specialized instantiation
 * (rz_fused_dispatch, as the launcher: k_fused_s; and the generic k_fused's tiles), and every
 * instantiation (depth x mode x taps x channels, RZ_SPEC_N) must have run on several tables;
 * the 32-bit guard that sends images of 2^31 samples or more to the generic tiles is checked
 * on tables alone. It needs no GPU (no CUDA call is made), so CI without one checks the tiling and the
 * indices of the kernels; tests/gpu/test_gpu_resize.c checks the device itself. Built only with
 * the CUDA backend (nvcc compiles the bodies); label unit. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "image.h"
#include "ops.h"
#include "error.h"
#include "resize_body.cuh"
#include "resize_image.h"
#include "test_util.h"

static int n_spec[RZ_SPEC_N]; /* the launcher's way: runs of each specialized instantiation */

/* one fused block's two phases, every thread of phase 1 before any of phase 2 (the barrier) */
template <class H, class V> static void blocks(const imgpu_resize_tab &t, size_t smem, H h, V v)
{
    const size_t n = smem / 4, guard = 64; /* past the block's shared memory: must stay as set */
    std::vector<int32_t> sm(n + guard, (int32_t)0x3c3c3c3c);
    const int gx = (t.dw + RZ_TX - 1) / RZ_TX, gy = (t.dh + RZ_TY - 1) / RZ_TY;
    for (int by = 0; by < gy; by++)
        for (int bx = 0; bx < gx; bx++) {
            for (size_t i = 0; i < n; i++) /* poison: a read of a row phase 1 did not fill */
                sm[i] = (int32_t)0x5a5a5a5a;
            for (int ty = 0; ty < RZ_BY; ty++)
                for (int tx = 0; tx < RZ_TX; tx++)
                    h(sm.data(), bx, by, tx, ty);
            for (int ty = 0; ty < RZ_BY; ty++)
                for (int tx = 0; tx < RZ_TX; tx++)
                    v(sm.data(), bx, by, tx, ty);
        }
    size_t bad = 0;
    for (size_t i = n; i < n + guard; i++)
        bad += sm[i] != (int32_t)0x3c3c3c3c;
    CHECKF(bad == 0, "%zu int32 written past the block's %zu bytes of shared memory", bad, smem);
}

/* k_fused_s as imgpu_launch_resize launches it (rz_fused_dispatch's pick) */
struct emu_fused {
    const imgpu_resize_tab *t;
    const uint8_t *in;
    uint8_t *out;
    template <int D, int CN, int M, int K> void run()
    {
        const imgpu_resize_tab &T = *t;
        const uint8_t *I = in;
        uint8_t *O = out;
        n_spec[rz_spec_index(D, CN, M, K)]++;
        blocks(
            T, rz_spec_smem(&T), [&](int32_t *sm, int bx, int by, int tx, int ty) { rz_tile_h_s<D, CN, M, K>(T, I, sm, bx, by, tx, ty); },
            [&](int32_t *sm, int bx, int by, int tx, int ty) { rz_tile_v_s<D, CN, M, K>(T, I, sm, O, bx, by, tx, ty); });
    }
};

/* way 0: as imgpu_launch_resize chooses; 1: two passes even where fused could run; 2: the
 * generic fused tiles even where a specialized instantiation runs. *fused: 0 two passes, 1
 * generic tiles, 2 specialized. */
static int emulate(const imgpu_resize_tab &t, const uint8_t *in, uint8_t *out, int way, int *fused)
{
    *fused = 0;
    if (t.method == IMGPU_RSZ_NEAREST) {
        for (int dy = 0; dy < t.dh; dy++)
            for (int dx = 0; dx < t.dw; dx++)
                rz_nearest_px(t, in, out, dx, dy);
        return 0;
    }
    const size_t smem = rz_fused_smem(&t);
    if (smem && way == 0) {
        emu_fused L = {&t, in, out};
        if (rz_fused_dispatch(t, L)) {
            *fused = 2;
            return 0;
        }
    }
    if (smem && way != 1) {
        *fused = 1;
        blocks(
            t, smem, [&](int32_t *sm, int bx, int by, int tx, int ty) { rz_tile_h(t, in, sm, bx, by, tx, ty); },
            [&](int32_t *sm, int bx, int by, int tx, int ty) { rz_tile_v(t, in, sm, out, bx, by, tx, ty); });
        return 0;
    }
    std::vector<int32_t> h((size_t)t.nh * t.dw * t.cn + 1);
    for (int r = 0; r < t.nh; r++)
        for (int dx = 0; dx < t.dw; dx++)
            rz_h_px(t, in, h.data(), r, dx);
    for (int dy = 0; dy < t.dh; dy++)
        for (int dx = 0; dx < t.dw; dx++)
            rz_v_px(t, in, h.data(), out, dx, dy);
    return 0;
}

static int n_fused, n_two;

static void check(const imgpu_image *im, const imgpu_op &op, const char *what)
{
    imgpu_image *ref = imgpu_pipeline_run(im, &op, 1, IMGPU_DEVICE_CPU, NULL);
    CHECKF(ref != NULL, "CPU reference failed on %s: %s", what, imgpu_error_message());
    if (!ref)
        return;
    imgpu_resize_tab t;
    const int rc = imgpu_resize_tab_build(im->width, im->height, im->channels, im->depth, &op.u.resize, &t);
    CHECKF(rc == 0, "tables of %s", what);
    if (rc == 0 && t.method != IMGPU_RSZ_COPY) {
        const int b = im->depth == 16 ? 2 : 1;
        const size_t rowb = (size_t)im->width * im->channels * b, orow = (size_t)t.dw * t.cn * b;
        std::vector<uint8_t> in((size_t)im->height * rowb + 64);
        for (int y = 0; y < im->height; y++)
            memcpy(&in[(size_t)y * rowb], im->data + (size_t)y * im->stride, rowb);
        CHECKF(t.dw == ref->width && t.dh == ref->height, "%s: size", what);
        int launcher = 0;
        for (int way = 0; way < 3; way++) {
            if (way == 2 && launcher != 2)
                break; /* the generic tiles: way 0 ran them already (or they cannot run) */
            std::vector<uint8_t> out((size_t)t.dh * orow, 0xa5);
            int fused = 0;
            emulate(t, in.data(), out.data(), way, &fused);
            if (way == 0) { /* the way the launcher takes */
                launcher = fused;
                n_fused += fused != 0;
                n_two += !fused && t.method == IMGPU_RSZ_SEPARABLE;
            }
            size_t nd = 0;
            for (int y = 0; y < t.dh && t.dw == ref->width && t.dh == ref->height; y++)
                nd += memcmp(&out[(size_t)y * orow], ref->data + (size_t)y * ref->stride, orow) != 0;
            CHECKF(nd == 0, "%s (%s): %zu rows differ from the CPU", what,
                   fused == 2 ? "fused, specialized" : fused ? "fused" : "two passes", nd);
        }
    }
    imgpu_resize_tab_free(&t);
    imgpu_image_free(ref);
}

/* The specialized kernels index samples in 32 bits: an image whose samples (source or result)
 * reach 2^31 runs the generic tiles (size_t offsets). Only the tables are built here. */
static void check_32bit_guard(void)
{
    static const struct {
        int sw, sh, dw, dh, cn, spec;
    } cases[] = {
        {30000, 20000, 29999, 19999, 3, 1},  /* 1.8e9 samples each side: specialized */
        {50000, 15000, 49999, 14999, 3, 0},  /* 2.25e9 samples: generic */
        {40000, 27000, 20000, 13500, 2, 0},  /* 2.16e9 samples in (a 2x2 box): generic */
        {46341, 46341, 100, 46341, 1, 0},    /* 2^31 + 9 source samples, a narrow result */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        imgpu_op op = imgpu_op_resize(cases[i].dw, cases[i].dh, IMGPU_RESIZE_BILINEAR);
        imgpu_resize_tab t;
        const int rc = imgpu_resize_tab_build(cases[i].sw, cases[i].sh, cases[i].cn, 8, &op.u.resize, &t);
        CHECKF(rc == 0, "tables of case %zu", i);
        if (rc != 0)
            continue;
        const int want = cases[i].spec;
        const int m = rz_spec_mode(&t);
        CHECKF(rz_fused_smem(&t) != 0, "case %zu: fused", i);
        CHECKF((m >= 0) == want, "case %zu (%dx%d c%d -> %dx%d): specialized mode %d, want %s", i, cases[i].sw,
               cases[i].sh, cases[i].cn, cases[i].dw, cases[i].dh, m, want ? "one" : "none (32-bit offsets)");
        imgpu_resize_tab_free(&t);
    }
}

int main(void)
{
    check_32bit_guard();
    static const int src[][2] = {{1, 1}, {1, 37}, {41, 1}, {2, 2}, {5, 7}, {97, 61}, {160, 96}, {12, 330}}; /* the last: scales only */
    static const int dst[][2] = {{1, 1}, {1, 9}, {13, 1}, {32, 24}, {50, 31}, {100, 60}, {233, 151}};
    static const double scales[] = {0.5, 1.0 / 3, 2.0, 1.7, 0.37, 0.1};
    static const char *fname[] = {"nearest", "bilinear", "bicubic", "area", "lanczos"};
    uint32_t seed = 11;
    char what[160];
    for (size_t s = 0; s < sizeof src / sizeof src[0]; s++)
        for (int depth = 8; depth <= 16; depth += 8)
            for (int c = 1; c <= 4; c++) {
                const int smooth = (int)(s + c) % 2;
                imgpu_image *im = resize_test_image(src[s][0], src[s][1], c, depth, smooth, seed++);
                for (int f = 0; f <= IMGPU_RESIZE_LANCZOS; f++)
                    for (int aa = 0; aa < (f == IMGPU_RESIZE_NEAREST ? 1 : 2); aa++) {
                        for (size_t d = 0; d < sizeof dst / sizeof dst[0]; d++) {
                            if ((d + s + (size_t)c + (size_t)aa) % 3 || s + 1 == sizeof src / sizeof src[0])
                                continue; /* a third of the matrix: every pair still occurs */
                            imgpu_op op = imgpu_op_resize(dst[d][0], dst[d][1], (imgpu_resize_filter)f);
                            op.u.resize.antialias = aa;
                            snprintf(what, sizeof what, "%s%s %dx%d -> %dx%d c%d d%d", fname[f], aa ? " antialias" : "",
                                     src[s][0], src[s][1], dst[d][0], dst[d][1], c, depth);
                            check(im, op, what);
                        }
                        for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
                            imgpu_op op = imgpu_op_resize(0, 0, (imgpu_resize_filter)f);
                            op.u.resize.antialias = aa;
                            op.u.resize.scale = scales[k];
                            snprintf(what, sizeof what, "%s%s %dx%d scale %g c%d d%d", fname[f], aa ? " antialias" : "",
                                     src[s][0], src[s][1], scales[k], c, depth);
                            check(im, op, what);
                        }
                    }
                imgpu_image_free(im);
            }
    /* the launcher takes both ways over this matrix */
    CHECKF(n_fused > 0 && n_two > 0, "fused %d, two passes %d", n_fused, n_two);
    printf("launcher's way: fused %d, two passes %d\n", n_fused, n_two);
    /* and every specialized instantiation, each on several tables */
    for (int i = 0; i < RZ_SPEC_N; i++)
        CHECKF(n_spec[i] >= 2, "specialized instantiation %d (rz_spec_index; depth %d, cn %d) ran %d times", i,
               i / 16 ? 16 : 8, i % 4 + 1, n_spec[i]);
    printf("specialized instantiations run:");
    for (int i = 0; i < RZ_SPEC_N; i++)
        printf(" %d", n_spec[i]);
    printf("\n");
    TEST_MAIN_END();
}
