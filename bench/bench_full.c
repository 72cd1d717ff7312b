/* bench_full.c — `imgpu bench` rows for issue 6: CLAHE (8- and 16-bit), the 65536-bin
 * histogram designs side by side, 16-bit equalize and the pil / imagemagick formulas, at 4K,
 * next to OpenCV's CPU CLAHE on the same images (bench/opencv_clahe.py, run by popen when
 * IMGPU_BENCH_PYTHON names a Python with cv2; its rows land in the same table).
 * Same method as bench.c: inputs rotated over buffers >= 4x the L2, CUDA events around 40
 * back-to-back ops / 40 (throughput), around one op (latency), medians of 15. Every op is
 * timed as the backend runs it (the memsets, the scans and the LUT launches included). */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_full.h"
#include "cuda/cuda_util.h"
#include "cuda/scratch_ops.h"

/* src/backend/cuda/clahe.c: its host side on the bench's own buffers */
int imgpu__cuda_clahe(imgpu__cuda_scratch *s, size_t *held, cudaStream_t st, const void *d_in, void *d_out, int w,
                      int h, int c, int depth, const imgpu_clahe_params *p);
#include "error.h"
#include "timing.h"
#include "io.h"
#include "kernels.h"
#include "ops.h"

#define MAXK 64

#define CK BENCH_CK

typedef struct fb {
    int w, h, c, depth;
    size_t bytes;
    int k;
    void *d_in[MAXK], *d_out;
    uint32_t *d_hist;
    imgpu__cuda_scratch scratch;
    size_t held;
    cudaStream_t s;
    int idx;
    imgpu_hist16_variant hv;
    imgpu_op op;
} fb;

/* The shared timing loop (timing.c) for this file's ops. */
BENCH_DEFINE_TIMER(time_fb, fb)

static int op_copy(fb *b, int k) { return cudaMemcpyAsync(b->d_out, b->d_in[k], b->bytes, cudaMemcpyDeviceToDevice, b->s) != cudaSuccess; }

static int op_hist16(fb *b, int k)
{
    cudaMemsetAsync(b->d_hist, 0, 65536 * 4, b->s);
    return imgpu_launch_histogram16_tuned(b->hv, b->d_in[k], (size_t)b->w * b->h, b->c, 0, b->d_hist, imgpu__cuda_tuning(),
                                          b->s) != cudaSuccess;
}

static int op_equalize_full(fb *b, int k)
{
    return imgpu__cuda_equalize_full(&b->scratch, &b->held, b->s, b->d_in[k], b->d_out, b->w, b->h, b->c, b->depth,
                                     &b->op.u.equalize) != 0;
}

/* An op through the CUDA backend's run table, as a session runs it (issue 28's tone ops: levels
 * uploads its host LUT and applies it; normalize and autolevel first run the device histogram
 * and scan, download the CDFs and wait for them, then the same). */
static int op_table(fb *b, int k)
{
    imgpu__cuda_op_env e = {.stream = b->s, .scratch = &b->scratch, .held = &b->held};
    const imgpu__cuda_shape s = {b->w, b->h, b->c, b->depth / 8};
    return imgpu__cuda_run_op(&e, &b->op, b->d_in[k], b->d_out, s, s) != 0;
}

static int op_clahe(fb *b, int k)
{
    return imgpu__cuda_clahe(&b->scratch, &b->held, b->s, b->d_in[k], b->d_out, b->w, b->h, b->c, b->depth,
                             &b->op.u.clahe) != 0;
}

static uint32_t xs(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/* photo: the bundled photo scaled bilinearly to w x h plus sensor-like grain (+-2 levels of
 * 8 bits), as 8 bits or as 16 bits (v * 257 + grain of +-2*257: every 16-bit level can occur);
 * noise: uniform over all levels. */
static imgpu_image *make(int w, int h, int c, int depth, int content, const imgpu_image *photo, uint32_t seed)
{
    imgpu_image *im = imgpu_image_new(w, h, c, depth);
    if (!im)
        return NULL;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int ch = 0; ch < c; ch++) {
                double v;
                if (content == 1 || !photo) {
                    v = depth == 16 ? (double)(xs(&seed) & 0xffff) : (double)(xs(&seed) & 0xff);
                } else {
                    float fx = (x + 0.5f) * photo->width / w - 0.5f, fy = (y + 0.5f) * photo->height / h - 0.5f;
                    int ix = (int)floorf(fx), iy = (int)floorf(fy);
                    float a = fx - ix, bb = fy - iy;
                    int x0 = ix < 0 ? 0 : ix, y0 = iy < 0 ? 0 : iy;
                    int x1 = ix + 1 >= photo->width ? photo->width - 1 : ix + 1;
                    int y1 = iy + 1 >= photo->height ? photo->height - 1 : iy + 1;
                    int pc = photo->channels;
#define PX(xx, yy) imgpu_image_row(photo, yy)[(xx) * pc + (ch < pc ? ch : 0)]
                    v = (1 - a) * (1 - bb) * PX(x0, y0) + a * (1 - bb) * PX(x1, y0) + (1 - a) * bb * PX(x0, y1) +
                        a * bb * PX(x1, y1);
#undef PX
                    if (depth == 16)
                        v = v * 257.0 + (double)((int)(xs(&seed) % 1029) - 514);
                    else
                        v += (double)((int)(xs(&seed) % 5) - 2);
                }
                const double maxv = depth == 16 ? 65535 : 255;
                v = v < 0 ? 0 : v > maxv ? maxv : floor(v + 0.5);
                imgpu_sample_put(imgpu_image_row(im, y), depth, (size_t)x * c + ch, (unsigned)v);
            }
    return im;
}

static int s_csv;
static const char *s_parts = "full"; /* which rows: "full", or any of hist16, eqfull, clahe; tone */

/* Whether the comma-separated list has `tok` as one of its items. */
static int has_item(const char *list, const char *tok)
{
    const size_t n = strlen(tok);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, tok, n) && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

static int part(const char *name) { return has_item(s_parts, "full") || has_item(s_parts, name); }
static double s_copy_gbs;

static void row(const char *size, const fb *b, const char *content, const char *op, const char *variant, double thr,
                double lat, double moved)
{
    char img[32];
    snprintf(img, sizeof img, "%s %d-bit", b->c == 1 ? "gray" : "RGB", b->depth);
    if (isnan(thr)) {
        printf(s_csv ? "%s,%s,%s,%s,%s,,,,\n" : "| %s | %s | %s | %s | %s | n/a | n/a | | |\n", size, img, content, op, variant);
        return;
    }
    const double gbs = moved / (thr * 1e-6) / 1e9;
    if (s_csv)
        printf("%s,%s,%s,%s,%s,%.2f,%.2f,%.1f,%.0f\n", size, img, content, op, variant, thr, lat, gbs, 100.0 * gbs / s_copy_gbs);
    else
        printf("| %s | %s | %s | %s | %s | %.2f | %.2f | %.0f | %.0f%% |\n", size, img, content, op, variant, thr, lat, gbs,
               100.0 * gbs / s_copy_gbs);
    fflush(stdout);
}

/* OpenCV's CPU CLAHE on the same image, through bench/opencv_clahe.py (prints one row). */
static void opencv_row(const char *size, const fb *b, const imgpu_image *im, const char *content)
{
    const char *py = getenv("IMGPU_BENCH_PYTHON");
    if (!py || !*py)
        return;
    char png[256], cmd[1024];
    snprintf(png, sizeof png, "/tmp/imgpu-bench-clahe-%s-%d-%d.png", size, b->depth, b->c);
    if (imgpu_image_save(im, png, NULL) < 0) {
        fprintf(stderr, "imgpu bench: %s\n", imgpu_error_message());
        return;
    }
    const char *script = getenv("IMGPU_BENCH_OPENCV_SCRIPT"); /* default: the source tree's */
    char def[512];
    snprintf(def, sizeof def, "%s/../bench/opencv_clahe.py", IMGPU_ASSETS_DIR);
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' %s %s %d %d%s", py, script && *script ? script : def, png, size, content,
             b->c, b->depth, s_csv ? " --csv" : "");
    fflush(stdout);
    FILE *f = popen(cmd, "r");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f))
        fputs(line, stdout);
    pclose(f);
    remove(png);
    fflush(stdout);
}

static void run(const char *size, int w, int h, int c, int depth, int content, const imgpu_image *photo, size_t l2)
{
    static const char *contents[] = {"photo", "noise"};
    const char *cn = contents[content];
    fb b;
    memset(&b, 0, sizeof b);
    b.w = w;
    b.h = h;
    b.c = c;
    b.depth = depth;
    b.bytes = (size_t)w * h * c * (depth / 8);
    b.k = (int)((4 * l2) / b.bytes + 2);
    if (b.k > MAXK)
        b.k = MAXK;
    CK(cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking));
    imgpu_image *im = make(w, h, c, depth, content, photo, 4242u);
    if (!im) {
        fprintf(stderr, "imgpu bench: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < b.k; i++) {
        CK(cudaMalloc(&b.d_in[i], b.bytes + 64));
        CK(cudaMemcpy(b.d_in[i], im->data, b.bytes, cudaMemcpyHostToDevice));
    }
    CK(cudaMalloc(&b.d_out, b.bytes + 64));
    CK(cudaMalloc((void **)&b.d_hist, 65536 * 4));
    double thr, lat;
    const double B = (double)b.bytes;
    time_fb(&b, op_copy, &thr, &lat);
    s_copy_gbs = 2 * B / (thr * 1e-6) / 1e9;
    row(size, &b, cn, "copy", "cudaMemcpyAsync D2D", thr, lat, 2 * B);

    if (depth == 16 && c == 1 && part("hist16")) {
        for (int v = 0; v < IMGPU_HIST16_VARIANT_COUNT; v++) {
            b.hv = (imgpu_hist16_variant)v;
            time_fb(&b, op_hist16, &thr, &lat);
            char name[96];
            snprintf(name, sizeof name, "imgpu %s%s (+ memset)", imgpu_hist16_variant_name(b.hv),
                     v == IMGPU_HIST16_DEFAULT ? " (default)" : "");
            row(size, &b, cn, "histogram 65536 bins", name, thr, lat, B);
        }
    }
    /* equalize: 16-bit opencv (and pil); 8-bit pil / imagemagick */
    for (int f = 0; f < 3 && part("eqfull"); f++) {
        if (depth == 8 && f == 0)
            continue; /* the 8-bit OpenCV equalize is bench.c's fused kernel */
        if (depth == 16 && f == 2)
            continue;
        b.op = imgpu_op_equalize(c >= 3 ? IMGPU_MODE_LUMINANCE : IMGPU_MODE_PER_CHANNEL);
        b.op.u.equalize.formula = (imgpu_eq_formula)f;
        static const char *fname[] = {"opencv", "pil", "imagemagick"};
        char op[64], name[128];
        snprintf(op, sizeof op, "equalize %s%s", fname[f], c >= 3 ? " luminance" : "");
        /* 16 bits: CDF + LUT in one cluster launch (default, sm_90), or the block scan then the
         * LUT kernel (the fallback) */
        for (int path = 0; path < (depth == 16 ? 2 : 1); path++) {
            if (depth == 16 && path == 0 && !imgpu_equalize_lut16_fused_available(imgpu__cuda_tuning()))
                continue;
            imgpu_kernels_lut16_path(path);
            snprintf(name, sizeof name, "imgpu memset + hist + %s + apply",
                     depth == 16 && path == 0 ? "CDF+LUT in one cluster (default)" : "block scan + LUT");
            time_fb(&b, op_equalize_full, &thr, &lat);
            row(size, &b, cn, op, name, thr, lat, 2 * B);
        }
        imgpu_kernels_lut16_path(0);
    }
    /* the tone LUT ops (issue 28, `--ops tone` only: not part of "full"), next to the copy's
     * bandwidth above: levels, normalize (luminance and per channel), autolevel */
    if (has_item(s_parts, "tone")) {
        const struct { imgpu_op op; const char *name, *how; } T[] = {
            {imgpu_op_levels(10, 240, 1.0), "levels 10,240", "imgpu host LUT + upload + apply"},
            {imgpu_op_normalize(IMGPU_NORMALIZE_BLACK_CLIP, IMGPU_NORMALIZE_WHITE_CLIP, IMGPU_MODE_LUMINANCE),
             "normalize", "imgpu hist + scan + CDF download (sync) + host LUT + upload + apply"},
            {imgpu_op_normalize(IMGPU_NORMALIZE_BLACK_CLIP, IMGPU_NORMALIZE_WHITE_CLIP, IMGPU_MODE_PER_CHANNEL),
             "normalize per-channel", "imgpu hist + scan + CDF download (sync) + host LUT + upload + apply"},
            {imgpu_op_autolevel(0), "autolevel", "imgpu hist + scan + CDF download (sync) + host LUT + upload + apply"},
        };
        for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
            b.op = T[i].op;
            time_fb(&b, op_table, &thr, &lat);
            row(size, &b, cn, T[i].name, T[i].how, thr, lat, 2 * B);
        }
    }
    /* CLAHE, OpenCV's defaults: clip 40, 8x8 tiles */
    if (part("clahe")) {
        b.op = imgpu_op_clahe(40, 8, 8, IMGPU_MODE_LUMINANCE);
        time_fb(&b, op_clahe, &thr, &lat);
        row(size, &b, cn, "clahe 40 8x8", "imgpu memset + tile hist + tile LUTs + apply", thr, lat, 2 * B);
        if (content == 0)
            opencv_row(size, &b, im, cn);
    }
    CK(cudaStreamSynchronize(b.s));
    imgpu__cuda_scratch_free(&b.scratch, &b.held);
    for (int i = 0; i < b.k; i++)
        cudaFree(b.d_in[i]);
    cudaFree(b.d_out);
    cudaFree(b.d_hist);
    cudaStreamDestroy(b.s);
    imgpu_image_free(im);
}

void bench_full(const char *sizes, const char *chans, const char *contents, const char *depths, const char *parts,
                size_t l2, int csv, const imgpu_image *gray,
                const imgpu_image *rgb)
{
    s_csv = csv;
    s_parts = parts;
    static const struct { const char *name; int w, h; } S[] = {{"1080p", 1920, 1080}, {"4k", 3840, 2160}, {"8k", 7680, 4320}};
    for (int s = 0; s < 3; s++) {
        if (!strstr(sizes, S[s].name))
            continue;
        for (int depth = 8; depth <= 16; depth += 8)
            for (int c = 1; c <= 3 && strstr(depths, depth == 8 ? "8" : "16"); c += 2) {
                char cs[4];
                snprintf(cs, sizeof cs, "%d", c);
                if (!strstr(chans, cs))
                    continue;
                for (int k = 0; k < 2; k++)
                    if (strstr(contents, k ? "noise" : "photo"))
                        run(S[s].name, S[s].w, S[s].h, c, depth, k, c == 1 ? gray : rgb, l2);
            }
    }
}
