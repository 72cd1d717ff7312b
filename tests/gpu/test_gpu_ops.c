/* test_gpu_ops.c — the CUDA backend against the CPU reference (src/cpu/):
 *  - histogram (every kernel variant) and equalize (both fused kernels, on-chip with and
 *    without spill, and three-launch with every scan variant; both color modes): bit for bit;
 *  - rotation (both thread layouts): nearest and quarter turns bit for bit; bilinear and
 *    bicubic within 1 level (the texture unit's 8-bit weights; the CPU models them, so most
 *    pixels agree exactly), except on images with alpha, whose colour is interpolated
 *    premultiplied (src/op.h) in software: bit for bit; gray bicubic by gathers equal to it by
 *    point fetches, bit for bit;
 *  - premultiplied rotation (issue 30) on cut-outs (an opaque ellipse on transparent pixels
 *    hiding a colour, a soft rim, scattered partial alphas) and on alpha noise, gray+alpha and
 *    RGBA, 8 and 16 bits, bilinear and bicubic, no / translucent / opaque background, both
 *    layouts and both texture kinds (in place, CUDA array): bit for bit;
 *  - a chained pipeline (one upload, one download) equal to the CPU chain.
 * Images: noise, smooth "photo-like" ramps, constant, two-level, all-255; sizes 1x1, 1xN,
 * Nx1, odd widths, and one large enough for many blocks; 1 to 4 channels.
 * Rotation at 1920x1080 (#18: its CPU references were most of this test's time): one kind per
 * channel count (noise at 1 and 3 channels, smooth at 2 and 4) and the angles that reach every
 * (filter, crop, background) combination and a quarter turn each way; the quarter turns 180,
 * 270, 450 and the 0 turn are index permutations whose size plays no part, tested at every
 * smaller size. IMGPU_TEST_FULL=1: every kind and angle at 1920x1080 too (the matrix before #18);
 * IMGPU_TEST_QUICK=1 (compute-sanitizer runs): leave out 1920x1080. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cuda/cuda_util.h" /* imgpu__cuda_tuning: IMGPU_HIST_BLOCKS_PER_SM and the rest */
#include "gpu_util.h"
#include "kernels.h"
#include "ops.h"
#include "test_util.h"

enum { NOISE, SMOOTH, CONSTANT, TWO_LEVEL, ALL_255, KINDS };
static const char *kind_name[] = {"noise", "smooth", "constant", "two-level", "all-255"};

static imgpu_image *make(int w, int h, int c, int kind, uint32_t seed)
{
    imgpu_image *im = imgpu_image_new(w, h, c, 8);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                uint8_t v;
                switch (kind) {
                case NOISE: v = (uint8_t)gpu_rand(&seed); break;
                case SMOOTH: v = (uint8_t)(60 + (x * 37 / (w + 1) + y * 53 / (h + 1)) + k * 11 + gpu_rand(&seed) % 5); break;
                case CONSTANT: v = 77; break;
                case TWO_LEVEL: v = ((x / 3 + y) & 1) ? 200 : 40; break;
                default: v = 255; break;
                }
                imgpu_image_row(im, y)[x * c + k] = v;
            }
    return im;
}

/* max |a-b| over all samples, -1 when shapes differ; *ndiff: samples that differ */
static int max_diff(const imgpu_image *a, const imgpu_image *b, size_t *ndiff)
{
    if (!a || !b || a->width != b->width || a->height != b->height || a->channels != b->channels)
        return -1;
    int m = 0;
    size_t nd = 0;
    for (int y = 0; y < a->height; y++)
        for (int i = 0; i < a->width * a->channels; i++) {
            int d = abs(imgpu_image_row(a, y)[i] - imgpu_image_row(b, y)[i]);
            nd += d != 0;
            if (d > m)
                m = d;
        }
    if (ndiff)
        *ndiff = nd;
    return m;
}

static void test_histograms(const imgpu_image *im, const char *what)
{
    imgpu_histogram ref;
    CHECK(imgpu_cpu_histogram(im, &ref) == 0);
    const size_t npix = (size_t)im->width * im->height;
    const int planes = imgpu_hist_planes(im->channels, 1);
    uint8_t *d_img;
    uint32_t *d_hist, h[5 * 256];
    CUDA_OK(cudaMalloc((void **)&d_img, npix * im->channels + 64));
    CUDA_OK(cudaMalloc((void **)&d_hist, sizeof h));
    CUDA_OK(cudaMemcpy(d_img, im->data, npix * im->channels, cudaMemcpyHostToDevice));
    for (int v = 0; v < IMGPU_HIST_VARIANT_COUNT; v++)
        for (int luma = 1; luma >= 0; luma--) { /* with the luma plane (3-4 channels) and without */
            CUDA_OK(cudaMemset(d_hist, 0xee, sizeof h)); /* the planes to fill, then one more: untouched */
            CUDA_OK(cudaMemset(d_hist, 0, planes * 256 * 4));
            CUDA_OK(imgpu_launch_histogram((imgpu_hist_variant)v, d_img, npix, im->channels, luma, d_hist,
                                           imgpu_hist_grid(imgpu__cuda_tuning()), 0));
            CUDA_OK(cudaMemcpy(h, d_hist, sizeof h, cudaMemcpyDeviceToHost));
            int ok = 1;
            for (int c = 0; c < im->channels; c++)
                ok &= memcmp(h + c * 256, ref.bins[c], 1024) == 0;
            if (im->channels >= 3 && luma)
                ok &= memcmp(h + im->channels * 256, ref.luma, 1024) == 0;
            else if (im->channels >= 3) /* no luma asked: its plane is left alone */
                ok &= memcmp(h + im->channels * 256, (uint32_t[256]){0}, 1024) == 0;
            if (planes < 5)
                ok &= h[planes * 256] == 0xeeeeeeeeu;
            CHECKF(ok, "histogram %s luma %d on %s", imgpu_hist_variant_name((imgpu_hist_variant)v), luma, what);
        }
    /* through the backend entry point */
    imgpu_histogram got;
    CHECKF(imgpu_cuda_histogram(im, &got) == 0, "%s", imgpu_error_message());
    CHECKF(memcmp(got.bins, ref.bins, sizeof ref.bins) == 0 && got.has_luma == ref.has_luma &&
               (!ref.has_luma || memcmp(got.luma, ref.luma, sizeof ref.luma) == 0),
           "imgpu_cuda_histogram on %s", what);
    cudaFree(d_img);
    cudaFree(d_hist);
}

/* histogram -> LUT -> apply as three launches, with each scan variant */
static void test_three_launch(const imgpu_image *im, imgpu_eq_mode mode, const imgpu_image *ref, const char *what)
{
    const size_t npix = (size_t)im->width * im->height, bytes = npix * im->channels;
    const int luma = mode == IMGPU_MODE_LUMINANCE && im->channels >= 3;
    uint8_t *d_in, *d_out, *d_lut;
    uint32_t *d_hist;
    CUDA_OK(cudaMalloc((void **)&d_in, bytes + 64));
    CUDA_OK(cudaMalloc((void **)&d_out, bytes + 64));
    CUDA_OK(cudaMalloc((void **)&d_lut, 3 * 256 + 1));
    CUDA_OK(cudaMalloc((void **)&d_hist, 5 * 256 * 4));
    CUDA_OK(cudaMemcpy(d_in, im->data, bytes, cudaMemcpyHostToDevice));
    imgpu_image *got = imgpu_image_new(im->width, im->height, im->channels, 8);
    for (int v = 0; v < IMGPU_SCAN_VARIANT_COUNT; v++) {
        CUDA_OK(cudaMemset(d_hist, 0, 5 * 256 * 4));
        CUDA_OK(imgpu_launch_histogram(IMGPU_HIST_DEFAULT_FOR(im->channels), d_in, npix, im->channels, luma, d_hist,
                                   imgpu_hist_grid(imgpu__cuda_tuning()), 0));
        const uint32_t *planes = luma ? d_hist + im->channels * 256 : d_hist;
        CUDA_OK(imgpu_launch_equalize_lut((imgpu_scan_variant)v, planes, luma ? 1 : (im->channels >= 3 ? 3 : 1), npix,
                                          d_lut, 0));
        CUDA_OK(imgpu_launch_apply_lut(d_in, d_out, npix, im->channels, luma, d_lut, 0, 0));
        CUDA_OK(cudaMemcpy(got->data, d_out, bytes, cudaMemcpyDeviceToHost));
        CHECKF(max_diff(got, ref, NULL) == 0, "three-launch equalize (%s scan) on %s",
               imgpu_scan_variant_name((imgpu_scan_variant)v), what);
    }
    imgpu_image_free(got);
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_lut);
    cudaFree(d_hist);
}

static void test_equalize(const imgpu_image *im, const char *what)
{
    /* the fused kernels: the default choice, the two-pass one, the on-chip one, the on-chip one
     * with at most 3 chunks kept per block (so that small images also take its spill path), and
     * the lane-private per-channel one (2-4 channels; the others run the default there) */
    static const int path[][2] = {{0, 0}, {1, 0}, {2, 0}, {2, 3}, {3, 0}};
    static const char *path_name[] = {"default", "two-pass", "on-chip", "on-chip with spill", "lane-private"};
    for (int m = 0; m < 2; m++) {
        imgpu_equalize_params p = {.mode = (imgpu_eq_mode)m};
        imgpu_image *ref = imgpu_cpu_equalize(im, &p);
        imgpu_op op = imgpu_op_equalize((imgpu_eq_mode)m);
        for (int k = 0; k < 5; k++) {
            imgpu_image *got = NULL;
            imgpu_kernels_eq_path(path[k][0], path[k][1]);
            CHECKF(imgpu_cuda_pipeline_run(im, &op, 1, &got) == 0, "%s", imgpu_error_message());
            CHECKF(max_diff(got, ref, NULL) == 0, "fused equalize (%s) mode %d on %s", path_name[k], m, what);
            imgpu_image_free(got);
        }
        imgpu_kernels_eq_path(0, 0);
        test_three_launch(im, (imgpu_eq_mode)m, ref, what);
        imgpu_image_free(ref);
    }
}

static void test_rotate(const imgpu_image *im, double angle, imgpu_filter f, int crop, int has_bg, const char *what)
{
    imgpu_op op = imgpu_op_rotate(angle);
    op.u.rotate.filter = f;
    op.u.rotate.crop = crop;
    if (has_bg) {
        op.u.rotate.has_background = 1;
        memcpy(op.u.rotate.background, (uint8_t[4]){200, 30, 90, 128}, 4);
    }
    imgpu_image *ref = imgpu_cpu_rotate(im, &op.u.rotate);
    for (int layout = 1; layout >= 0; layout--) { /* warp tiles (default), rows */
        imgpu_image *got = NULL;
        imgpu_kernels_rot_layout(layout);
        CHECK(imgpu_cuda_pipeline_run(im, &op, 1, &got) == 0);
        size_t nd = 0;
        int d = max_diff(got, ref, &nd);
        const int exact = f == IMGPU_FILTER_NEAREST || imgpu_cpu_rotate_quarter(angle) >= 0 ||
                          im->channels == 2 || im->channels == 4; /* premultiplied: the CPU's arithmetic */
        CHECKF(d >= 0 && d <= (exact ? 0 : 1),
               "rotate %g filter %d crop %d bg %d layout %d on %s: max diff %d (%zu samples differ)", angle, (int)f, crop,
               has_bg, layout, what, d, nd);
        if (f == IMGPU_FILTER_BICUBIC && im->channels == 1 && imgpu_cpu_rotate_quarter(angle) < 0) {
            /* gathers (the default) == 16 point fetches, and each ran */
            CHECKF(imgpu__cuda_last_rotate_gathered() == 1, "rotate %g bicubic on %s: gathers did not run", angle, what);
            imgpu_image *pt = NULL;
            imgpu_kernels_rot_gather(0);
            CHECK(imgpu_cuda_pipeline_run(im, &op, 1, &pt) == 0);
            imgpu_kernels_rot_gather(1);
            CHECKF(imgpu__cuda_last_rotate_gathered() == 0, "rotate %g bicubic on %s: point fetches gathered", angle, what);
            d = max_diff(got, pt, &nd);
            CHECKF(d == 0, "rotate %g bicubic crop %d bg %d layout %d on %s: gathers against point fetches: max diff "
                   "%d (%zu samples differ)", angle, crop, has_bg, layout, what, d, nd);
            imgpu_image_free(pt);
        }
        imgpu_image_free(got);
    }
    imgpu_kernels_rot_layout(-1);
    imgpu_image_free(ref);
}

/* Device inputs read in place (imgpu_context_run_device: a tight tensor at a 16-byte aligned
 * address, e.g. a view at a row offset): textures over pitched memory need their base address
 * aligned to the device's textureAlignment (512 bytes), not just 16, else
 * cudaCreateTextureObject refuses them. A rotation of such an input must equal the same
 * rotation of an aligned copy, byte for byte, and the CPU's within the backend's contract. */
static void test_rotate_device_offsets(void)
{
    static const int chans[] = {1, 2, 4};
    static const size_t offsets[] = {0, 16, 48, 256};
    const int w = 160, h = 37; /* rows of 160, 320, 640 bytes: multiples of the 32-byte pitch alignment */
    imgpu_cuda_session *s = imgpu_cuda_session_new();
    CHECK(s != NULL);
    unsigned char *d_buf = NULL, *d_out = NULL;
    CHECK(cudaMalloc((void **)&d_buf, (size_t)w * h * 4 + 1024) == cudaSuccess);
    for (size_t ci = 0; ci < sizeof chans / sizeof *chans; ci++)
        for (int f = IMGPU_FILTER_NEAREST; f <= IMGPU_FILTER_BICUBIC; f++) {
            const int c = chans[ci];
            imgpu_image *im = make(w, h, c, c == 1 ? NOISE : SMOOTH, 40 + (uint32_t)c);
            imgpu_op op = imgpu_op_rotate(25);
            op.u.rotate.filter = (imgpu_filter)f;
            imgpu_image *ref = imgpu_cpu_rotate(im, &op.u.rotate);
            CHECK(ref != NULL);
            const size_t obytes = (size_t)ref->width * ref->height * c;
            imgpu_image *first = NULL;
            if (!d_out)
                CHECK(cudaMalloc((void **)&d_out, (size_t)(w + h) * (w + h) * 4) == cudaSuccess);
            for (size_t oi = 0; oi < sizeof offsets / sizeof *offsets; oi++) {
                /* on the session's stream: run_device reads d_in there without waiting for
                 * anything else, and a plain cudaMemcpy from pageable memory returns once the
                 * bytes are staged, its DMA still pending on the legacy stream, which the
                 * session's non-blocking stream does not wait for (offset 48, the first run
                 * reusing the texture's array with no implicitly synchronizing call between,
                 * once read the previous offset's bytes) */
                CHECK(cudaMemcpyAsync(d_buf + offsets[oi], im->data, (size_t)w * h * c, cudaMemcpyHostToDevice,
                                      imgpu_cuda_session_stream(s)) == cudaSuccess);
                const int rc = imgpu_cuda_session_run_device(s, d_buf + offsets[oi], w, h, c, 1, &op, 1, d_out);
                CHECKF(rc == 0, "rotate 25 filter %d of %d channels at device offset %zu: %s", f, c, offsets[oi],
                       rc ? imgpu_error_message() : "");
                if (rc)
                    continue;
                CHECK(cudaStreamSynchronize(imgpu_cuda_session_stream(s)) == cudaSuccess);
                imgpu_image *got = imgpu_image_new(ref->width, ref->height, c, 8);
                CHECK(got && cudaMemcpy(got->data, d_out, obytes, cudaMemcpyDeviceToHost) == cudaSuccess);
                const int exact = f == IMGPU_FILTER_NEAREST || c == 2 || c == 4;
                const int d = max_diff(got, ref, NULL);
                CHECKF(d >= 0 && d <= (exact ? 0 : 1), "rotate 25 filter %d of %d channels at device offset %zu: "
                       "max diff %d from the CPU", f, c, offsets[oi], d);
                if (!first) {
                    first = got;
                } else {
                    CHECKF(max_diff(got, first, NULL) == 0, "rotate 25 filter %d of %d channels: offset %zu differs "
                           "from offset 0", f, c, offsets[oi]);
                    imgpu_image_free(got);
                }
            }
            imgpu_image_free(first);
            imgpu_image_free(ref);
            imgpu_image_free(im);
        }
    cudaFree(d_buf);
    cudaFree(d_out);
    imgpu_cuda_session_free(s);
}

/* samples that differ (any depth), -1 when shapes differ */
static long count_diff(const imgpu_image *a, const imgpu_image *b)
{
    if (!a || !b || a->width != b->width || a->height != b->height || a->channels != b->channels ||
        a->depth != b->depth)
        return -1;
    long n = 0;
    const size_t row = (size_t)a->width * a->channels;
    for (int y = 0; y < a->height; y++)
        for (size_t i = 0; i < row; i++)
            n += imgpu_sample_get(imgpu_image_row(a, y), a->depth, i) !=
                 imgpu_sample_get(imgpu_image_row(b, y), b->depth, i);
    return n;
}

/* A cut-out (kind 0): colour noise; alpha full inside an ellipse, 0 outside it (the colour
 * there hidden, not black), a rim of partial alphas between, and one pixel in 17 of random
 * alpha; or alpha noise (kind 1). */
static imgpu_image *make_alpha(int w, int h, int c, int depth, int kind, uint32_t seed)
{
    imgpu_image *im = imgpu_image_new(w, h, c, depth);
    const unsigned maxv = depth == 16 ? 65535u : 255u;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const double dx = (x - w / 2.0) / (w / 3.0 + 1), dy = (y - h / 2.0) / (h / 3.0 + 1);
            const double r = sqrt(dx * dx + dy * dy);
            for (int k = 0; k < c; k++) {
                unsigned v = gpu_rand(&seed) & maxv;
                if (k == c - 1 && kind == 0) {
                    v = r < 0.9 ? maxv : r > 1.1 ? 0 : (unsigned)((1.1 - r) / 0.2 * maxv);
                    if (gpu_rand(&seed) % 17 == 0)
                        v = gpu_rand(&seed) & maxv;
                }
                imgpu_sample_put(imgpu_image_row(im, y), depth, (size_t)x * c + k, v);
            }
        }
    return im;
}

static void test_rotate_alpha(void)
{
    static const int sizes[][2] = {{451, 300}, {64, 48}, {33, 7}, {1, 1}};
    static const double angles[] = {30, -45, 17.5, 123.4};
    static const uint8_t bgs[3][4] = {{0}, {200, 30, 90, 128}, {48, 128, 192, 255}};
    char what[160];
    uint32_t seed = 4242;
    for (int depth = 8; depth <= 16; depth += 8)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (int c = 2; c <= 4; c += 2)
                for (int kind = 0; kind < 2; kind++) {
                    imgpu_image *im = make_alpha(sizes[s][0], sizes[s][1], c, depth, kind, seed++);
                    for (size_t a = 0; a < sizeof angles / sizeof *angles; a++)
                        for (int f = IMGPU_FILTER_BILINEAR; f <= IMGPU_FILTER_BICUBIC; f++) {
                            imgpu_op op = imgpu_op_rotate(angles[a]);
                            op.u.rotate.filter = (imgpu_filter)f;
                            op.u.rotate.crop = (int)(a % 2);
                            const int b = (int)((a + (size_t)f) % 3);
                            op.u.rotate.has_background = b != 0;
                            memcpy(op.u.rotate.background, bgs[b], 4);
                            imgpu_image *ref = imgpu_cpu_rotate(im, &op.u.rotate);
                            /* 8 bits: both layouts, the texture in place where it can be and a
                             * CUDA array; 16 bits: one kernel, plain loads */
                            for (int v = 0; v < (depth == 8 ? 4 : 1); v++) {
                                imgpu_kernels_rot_layout(depth == 8 ? v & 1 : -1);
                                imgpu__cuda_tex_force_array(v >> 1);
                                imgpu_image *got = NULL;
                                CHECKF(imgpu_cuda_pipeline_run(im, &op, 1, &got) == 0, "%s", imgpu_error_message());
                                const long d = count_diff(got, ref);
                                snprintf(what, sizeof what, "%dx%dx%d %d-bit %s rotate %g %s bg %d variant %d",
                                         sizes[s][0], sizes[s][1], c, depth, kind ? "alpha noise" : "cut-out",
                                         angles[a], f == IMGPU_FILTER_BILINEAR ? "bilinear" : "bicubic", b, v);
                                CHECKF(d == 0, "premultiplied %s: %ld samples differ from the CPU", what, d);
                                imgpu_image_free(got);
                            }
                            imgpu_kernels_rot_layout(-1);
                            imgpu__cuda_tex_force_array(0);
                            imgpu_image_free(ref);
                        }
                    imgpu_image_free(im);
                }
}

int main(void)
{
    gpu_require_or_skip();
    static const int sizes[][2] = {{1, 1}, {1, 37}, {37, 1}, {451, 300}, {33, 7}, {1920, 1080}};
    char what[128];
    /* IMGPU_TEST_QUICK=1 (for compute-sanitizer runs): leave out the largest size */
    const size_t nsizes = sizeof sizes / sizeof *sizes - (getenv("IMGPU_TEST_QUICK") ? 1 : 0);
    const int full = getenv("IMGPU_TEST_FULL") != NULL;
    for (size_t s = 0; s < nsizes; s++)
        for (int c = 1; c <= 4; c++)
            for (int k = 0; k < KINDS; k++) {
                imgpu_image *im = make(sizes[s][0], sizes[s][1], c, k, 1234u + (uint32_t)(s * 100 + c * 10 + k));
                snprintf(what, sizeof what, "%dx%dx%d %s", sizes[s][0], sizes[s][1], c, kind_name[k]);
                test_histograms(im, what);
                test_equalize(im, what);
                /* the largest size (the last): one kind per channel count, and angles 30 (no
                 * crop, background), -45 (crop), 17.5 (neither), 123.4 (crop, background), 90
                 * and -90 (quarter turns, expand and crop) */
                const int large = sizes[s][0] * sizes[s][1] >= 1000000;
                if ((k == NOISE || k == SMOOTH) && (full || !large || k == (c % 2 ? NOISE : SMOOTH))) {
                    static const double angles[] = {30, -45, 17.5, 123.4, 90, 180, 270, -90, 450, 0};
                    for (size_t a = 0; a < sizeof angles / sizeof *angles; a++) {
                        if (!full && large && a > 4 && a != 7)
                            continue;
                        for (int f = 0; f < 3; f++)
                            test_rotate(im, angles[a], (imgpu_filter)f, (int)(a % 2), a % 3 == 0, what);
                    }
                }
                imgpu_image_free(im);
            }

    test_rotate_alpha();
    test_rotate_device_offsets();

    /* a chain stays on the device: equalize, rotate 90, rotate 30 nearest, equalize */
    imgpu_image *im = make(451, 300, 3, SMOOTH, 99);
    imgpu_op ops[4] = {imgpu_op_equalize(IMGPU_MODE_LUMINANCE), imgpu_op_rotate(90), imgpu_op_rotate(30),
                       imgpu_op_equalize(IMGPU_MODE_PER_CHANNEL)};
    ops[2].u.rotate.filter = IMGPU_FILTER_NEAREST;
    imgpu_image *got = NULL, *ref = imgpu_pipeline_run(im, ops, 4, IMGPU_DEVICE_CPU, NULL);
    CHECK(imgpu_cuda_pipeline_run(im, ops, 4, &got) == 0);
    CHECKF(max_diff(got, ref, NULL) == 0, "4-op chain");
    imgpu_image_free(got);
    imgpu_image_free(ref);
    imgpu_image_free(im);

    /* sessions: one upload, several runs on the resident source; two sessions interleaved */
    {
        imgpu_image *a = make(640, 480, 3, SMOOTH, 5), *b = make(451, 300, 1, NOISE, 6);
        imgpu_cuda_session *s1 = imgpu_cuda_session_new(), *s2 = imgpu_cuda_session_new();
        CHECK(s1 && s2);
        imgpu_op eq = imgpu_op_equalize(IMGPU_MODE_LUMINANCE), rot = imgpu_op_rotate(30);
        CHECK(imgpu_cuda_session_upload(s1, a) == 0);
        CHECK(imgpu_cuda_session_upload(s2, b) == 0);
        for (int round = 0; round < 2; round++) {
            const imgpu_op *op = round ? &rot : &eq;
            const unsigned char *d = NULL;
            int w = 0, h = 0, c = 0;
            imgpu_image *g1 = NULL, *g2 = NULL;
            CHECK(imgpu_cuda_session_run(s1, op, 1, &d, &w, &h, &c) == 0 && d != NULL);
            CHECK(imgpu_cuda_session_run(s2, op, 1, NULL, NULL, NULL, NULL) == 0);
            CHECK(imgpu_cuda_session_download(s2, &g2) == 0);
            CHECK(imgpu_cuda_session_download(s1, &g1) == 0);
            imgpu_image *r1 = imgpu_pipeline_run(a, op, 1, IMGPU_DEVICE_CPU, NULL);
            imgpu_image *r2 = imgpu_pipeline_run(b, op, 1, IMGPU_DEVICE_CPU, NULL);
            CHECKF(r1 && w == r1->width && h == r1->height && c == 3, "session result shape, round %d", round);
            /* equalize exact; bilinear rotation within 1 level */
            CHECKF(max_diff(g1, r1, NULL) >= 0 && max_diff(g1, r1, NULL) <= (round ? 1 : 0), "session 1 round %d", round);
            CHECKF(max_diff(g2, r2, NULL) >= 0 && max_diff(g2, r2, NULL) <= (round ? 1 : 0), "session 2 round %d", round);
            imgpu_image_free(g1);
            imgpu_image_free(g2);
            imgpu_image_free(r1);
            imgpu_image_free(r2);
        }
        /* n == 0 gives the source back */
        imgpu_image *same = NULL;
        CHECK(imgpu_cuda_session_run(s1, NULL, 0, NULL, NULL, NULL, NULL) == 0);
        CHECK(imgpu_cuda_session_download(s1, &same) == 0);
        CHECK(max_diff(same, a, NULL) == 0);
        imgpu_image_free(same);
        imgpu_cuda_session_free(s1);
        imgpu_cuda_session_free(s2);
        imgpu_image_free(a);
        imgpu_image_free(b);
    }

    imgpu_cuda_shutdown();
    TEST_MAIN_END();
}
