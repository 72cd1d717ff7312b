/* bench.c — `imgpu bench`: every op and kernel variant, at 1080p, 4K and 8K, gray and RGB,
 * on a photo, noise and a constant image, next to CUB and NPP, in one table.
 *
 * Method (../shared/GPU.md): inputs rotate over K device buffers whose total exceeds the L2
 * cache several times, so every op reads from HBM as a real pipeline would.
 *  - throughput: CUDA events around BATCH back-to-back ops, divided by BATCH; median of REPS.
 *  - latency: events around one op (includes the ~6 us launch floor); median of REPS.
 *  - GB/s: (bytes the op must read once + bytes it must write once) / throughput time;
 *    "% copy": that against a device-to-device copy measured in the same run.
 * Every imgpu op is timed as the backend runs it: the histogram includes its cudaMemset, the
 * three-launch equalize its memset and three launches. Rotation is timed twice: sampling a
 * resident texture (K textures, rotated like the inputs), and with the upload of the linear
 * input into the CUDA array, which a pipeline pays and NPP (reading linear memory) does not.
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/cpu.h"
#include "cuda/cuda_util.h"
#include "error.h"
#include "timing.h"
#include "io.h"
#include "kernels.h"
#include "ops.h"
#include "peers.h"
#include "bench_full.h"
#include "bench_cpu.h"

#define MAXK 64

#define CK BENCH_CK

typedef struct bench {
    int w, h, c;
    size_t npix, bytes;
    int k;                       /* rotating inputs */
    uint8_t *d_in[MAXK], *d_out;
    uint32_t *d_hist, *d_fused;
    uint8_t *d_lut;
    void *d_temp;                /* CUB / NPP scratch */
    size_t temp_bytes;
    imgpu__cuda_tex tex[MAXK];   /* resident textures for the sampling-only timing */
    imgpu__cuda_tex tex_up;      /* re-uploaded every op */
    size_t held;
    int parity, filter, luma, scan;
    imgpu_hist_variant hv;
    cudaStream_t s;
    int idx;
} bench;

/* The shared timing loop (timing.c) for this file's ops. */
BENCH_DEFINE_TIMER(time_op, bench)

/* ---- the ops -------------------------------------------------------------------------------- */

static int op_copy(bench *b, int k) { return cudaMemcpyAsync(b->d_out, b->d_in[k], b->bytes, cudaMemcpyDeviceToDevice, b->s) != cudaSuccess; }
static int op_empty(bench *b, int k) { (void)k; return imgpu_launch_empty(b->s) != cudaSuccess; }

static int op_hist(bench *b, int k)
{
    cudaMemsetAsync(b->d_hist, 0, (size_t)(b->c + 1) * 256 * 4, b->s);
    return imgpu_launch_histogram(b->hv, b->d_in[k], b->npix, b->c, b->luma, b->d_hist, imgpu_hist_grid(imgpu__cuda_tuning()),
                                  b->s) != cudaSuccess;
}

static int op_cub_hist(bench *b, int k)
{
    return bench_cub_histogram(b->d_temp, &b->temp_bytes, b->d_in[k], b->npix, b->c, (int32_t *)b->d_hist, b->s) != cudaSuccess;
}

static int op_npp_hist(bench *b, int k)
{
    return bench_npp_histogram(b->d_in[k], b->w, b->h, b->c, (int32_t *)b->d_hist, b->d_temp, b->s);
}

static int op_eq_fused(bench *b, int k)
{
    cudaError_t e = imgpu_launch_equalize_fused(b->d_in[k], b->d_out, b->npix, b->c, b->luma, b->d_fused, b->parity,
                                                imgpu__cuda_tuning(), b->s);
    b->parity ^= 1;
    return e != cudaSuccess;
}

static int op_eq_three(bench *b, int k)
{
    const int luma = b->luma && b->c >= 3;
    cudaMemsetAsync(b->d_hist, 0, 5 * 256 * 4, b->s);
    imgpu_launch_histogram(IMGPU_HIST_DEFAULT_FOR(b->c), b->d_in[k], b->npix, b->c, luma, b->d_hist,
                           imgpu_hist_grid(imgpu__cuda_tuning()), b->s);
    imgpu_launch_equalize_lut((imgpu_scan_variant)b->scan, luma ? b->d_hist + b->c * 256 : b->d_hist,
                              luma ? 1 : (b->c >= 3 ? 3 : 1), b->npix, b->d_lut, b->s);
    return imgpu_launch_apply_lut(b->d_in[k], b->d_out, b->npix, b->c, luma, b->d_lut, 0, b->s) != cudaSuccess;
}

static void geom(bench *b, imgpu_rotate_geom *g)
{
    memset(g, 0, sizeof *g);
    g->in_w = g->out_w = b->w;
    g->in_h = g->out_h = b->h;
    g->channels = b->c;
    g->filter = b->filter;
    imgpu_cpu_rotate_trig(30.0, &g->cos_t, &g->sin_t);
    g->in_cx = g->out_cx = b->w / 2.0f;
    g->in_cy = g->out_cy = b->h / 2.0f;
}

static int op_rotate_resident(bench *b, int k)
{
    imgpu_rotate_geom g;
    geom(b, &g);
    g.gather = b->tex[k].gather && imgpu__cuda_tuning()->rot_gather;
    return imgpu_launch_rotate(b->tex[k].linear, b->tex[k].point, b->d_out, &g, imgpu__cuda_tuning(), b->s) != cudaSuccess;
}

static int op_rotate_upload(bench *b, int k)
{
    static const uint8_t bg[4] = {0, 0, 0, 0};
    imgpu_rotate_geom g;
    geom(b, &g);
    const int want = b->filter == 2 && imgpu__cuda_tuning()->rot_gather;
    if (imgpu__cuda_tex_load(&b->tex_up, b->d_in[k], b->w, b->h, b->c, bg, want, b->s, &b->held))
        return 1;
    g.gather = want && b->tex_up.gather;
    return imgpu_launch_rotate(b->tex_up.linear, b->tex_up.point, b->d_out, &g, imgpu__cuda_tuning(), b->s) != cudaSuccess;
}

static int op_turn90(bench *b, int k)
{
    static const uint8_t bg[4] = {0, 0, 0, 0};
    return imgpu_launch_turn(b->d_in[k], b->w, b->h, b->c, 1, b->d_out, b->h, b->w, 0, 0, bg, b->s) != cudaSuccess;
}

static int op_npp_rotate(bench *b, int k)
{
    return bench_npp_rotate(b->d_in[k], b->d_out, b->w, b->h, b->c, 30.0, b->filter, b->s);
}

/* ---- inputs ---------------------------------------------------------------------------------- */

static uint32_t xs(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/* photo: a bundled photo scaled bilinearly to w x h plus +-2 of noise (a sensor's grain), so
 * that neighbouring pixels are alike but not identical, as in a real high-resolution photo */
static void fill(uint8_t *dst, int w, int h, int c, int content, const imgpu_image *photo, uint32_t seed)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int ch = 0; ch < c; ch++) {
                uint8_t *p = dst + ((size_t)y * w + x) * c + ch;
                if (content == 1) {
                    *p = (uint8_t)xs(&seed);
                } else if (content == 2 || !photo) {
                    *p = 128;
                } else {
                    float fx = (x + 0.5f) * photo->width / w - 0.5f, fy = (y + 0.5f) * photo->height / h - 0.5f;
                    int ix = (int)floorf(fx), iy = (int)floorf(fy);
                    float a = fx - ix, bb = fy - iy;
                    int x0 = ix < 0 ? 0 : ix, y0 = iy < 0 ? 0 : iy;
                    int x1 = ix + 1 >= photo->width ? photo->width - 1 : ix + 1;
                    int y1 = iy + 1 >= photo->height ? photo->height - 1 : iy + 1;
                    int pc = photo->channels;
#define PX(xx, yy) imgpu_image_row(photo, yy)[(xx) * pc + (ch < pc ? ch : 0)]
                    float v = (1 - a) * (1 - bb) * PX(x0, y0) + a * (1 - bb) * PX(x1, y0) + (1 - a) * bb * PX(x0, y1) +
                              a * bb * PX(x1, y1);
#undef PX
                    v += (float)((int)(xs(&seed) % 5) - 2);
                    *p = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5f);
                }
            }
}

/* ---- table ------------------------------------------------------------------------------------ */

static int s_csv;
static double s_copy_gbs;
static const char *s_ops = "histogram,equalize,rotate,full"; /* --ops */

static int want(const char *group) { return strstr(s_ops, group) != NULL; }

static void row(const char *size, bench *b, const char *content, const char *op, const char *variant, double thr,
                double lat, double moved)
{
    double gbs = moved / (thr * 1e-6) / 1e9;
    const char *img = b->c == 1 ? "gray" : "RGB";
    if (isnan(thr)) {
        printf(s_csv ? "%s,%s,%s,%s,%s,,,,\n" : "| %s | %s | %s | %s | %s | n/a | n/a | | |\n", size, img, content, op, variant);
        return;
    }
    if (s_csv)
        printf("%s,%s,%s,%s,%s,%.2f,%.2f,%.1f,%.0f\n", size, img, content, op, variant, thr, lat, gbs,
               100.0 * gbs / s_copy_gbs);
    else
        printf("| %s | %s | %s | %s | %s | %.2f | %.2f | %.0f | %.0f%% |\n", size, img, content, op, variant, thr, lat,
               gbs, 100.0 * gbs / s_copy_gbs);
    fflush(stdout);
}

static void run_config(const char *size, int w, int h, int c, int content, const imgpu_image *photo, size_t l2)
{
    static const char *contents[] = {"photo", "noise", "constant"};
    const char *cn = contents[content];
    bench b;
    memset(&b, 0, sizeof b);
    b.w = w;
    b.h = h;
    b.c = c;
    b.npix = (size_t)w * h;
    b.bytes = b.npix * c;
    b.k = (int)((4 * l2) / b.bytes + 2); /* inputs together >= 4x the L2 */
    if (b.k > MAXK)
        b.k = MAXK;
    CK(cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking));
    uint8_t *h_img = malloc(b.bytes);
    for (int i = 0; i < b.k; i++) {
        CK(cudaMalloc((void **)&b.d_in[i], b.bytes + 64));
        if (i < 2 || content == 2) { /* two distinct images, then copies (the content is what matters) */
            fill(h_img, w, h, c, content, photo, 777u + (uint32_t)i);
            CK(cudaMemcpy(b.d_in[i], h_img, b.bytes, cudaMemcpyHostToDevice));
        } else {
            CK(cudaMemcpy(b.d_in[i], b.d_in[i % 2], b.bytes, cudaMemcpyDeviceToDevice));
        }
    }
    free(h_img);
    CK(cudaMalloc((void **)&b.d_out, b.bytes + 64));
    CK(cudaMalloc((void **)&b.d_hist, 5 * 256 * 4));
    CK(cudaMalloc((void **)&b.d_fused, 2 * 3 * 256 * 4));
    CK(cudaMemset(b.d_fused, 0, 2 * 3 * 256 * 4));
    CK(cudaMalloc((void **)&b.d_lut, 3 * 256 + 1));
    size_t cub_bytes = 0;
    bench_cub_histogram(NULL, &cub_bytes, b.d_in[0], b.npix, c, (int32_t *)b.d_hist, b.s);
    size_t npp_bytes = bench_have_npp() ? bench_npp_histogram_buffer(w, h, c) : 0;
    b.temp_bytes = cub_bytes > npp_bytes ? cub_bytes : npp_bytes;
    CK(cudaMalloc(&b.d_temp, b.temp_bytes + 1));
    b.temp_bytes = cub_bytes; /* what CUB is told; NPP takes the same (larger-or-equal) buffer */

    double thr, lat;
    const double B = (double)b.bytes;
    time_op(&b, op_copy, &thr, &lat);
    s_copy_gbs = 2 * B / (thr * 1e-6) / 1e9;
    row(size, &b, cn, "copy", "cudaMemcpyAsync D2D", thr, lat, 2 * B);

    for (int v = 0; v < IMGPU_HIST_VARIANT_COUNT && want("histogram"); v++) {
        b.hv = (imgpu_hist_variant)v;
        /* global atomics on a constant image serialize every thread of the GPU on one address: skip at 8K */
        if (v == IMGPU_HIST_GLOBAL_ATOMICS && content == 2 && b.npix > 9000000) {
            row(size, &b, cn, "histogram", "imgpu global-atomics (skipped: pathological)", NAN, NAN, B);
            continue;
        }
        time_op(&b, op_hist, &thr, &lat);
        char name[96];
        snprintf(name, sizeof name, "imgpu %s%s", imgpu_hist_variant_name(b.hv), v == IMGPU_HIST_DEFAULT_FOR(c) ? " (default)" : "");
        row(size, &b, cn, "histogram", name, thr, lat, B);
    }
    if (want("histogram") && c >= 3) { /* + the luma plane: what `imgpu histogram` computes */
        b.luma = 1;
        static const imgpu_hist_variant luma_variants[] = {IMGPU_HIST_BLOCK_PRIVATE, IMGPU_HIST_LANE_PRIVATE};
        for (size_t i = 0; i < sizeof luma_variants / sizeof *luma_variants; i++) {
            b.hv = luma_variants[i];
            char name[96];
            time_op(&b, op_hist, &thr, &lat);
            snprintf(name, sizeof name, "imgpu %s%s", imgpu_hist_variant_name(b.hv),
                     b.hv == IMGPU_HIST_DEFAULT_FOR(c) ? " (default)" : "");
            row(size, &b, cn, "histogram + luma", name, thr, lat, B);
        }
        b.luma = 0;
    }
    if (want("histogram")) {
        time_op(&b, op_cub_hist, &thr, &lat);
        row(size, &b, cn, "histogram", c == 1 ? "CUB HistogramEven" : "CUB MultiHistogramEven", thr, lat, B);
    }
    if (want("histogram") && bench_have_npp() && c != 4) {
        time_op(&b, op_npp_hist, &thr, &lat);
        row(size, &b, cn, "histogram", "NPP nppiHistogramEven", thr, lat, B);
    }

    for (int luma = (c >= 3 ? 1 : 0); luma >= 0 && want("equalize"); luma--) {
        b.luma = luma;
        const char *op = c == 1 ? "equalize" : luma ? "equalize luminance" : "equalize per-channel";
        time_op(&b, op_eq_fused, &thr, &lat);
        row(size, &b, cn, op, "imgpu fused, 1 cooperative launch (default)", thr, lat, 2 * B);
        /* the two fused kernels side by side: on chip (the image read once, kept in shared
         * memory across the grid barrier) and two-pass (read twice) */
        for (int path = 2; path >= 1; path--) {
            imgpu_kernels_eq_path(path, 0);
            time_op(&b, op_eq_fused, &thr, &lat);
            row(size, &b, cn, op, path == 2 ? "imgpu fused on-chip (forced)" : "imgpu fused two-pass (forced)", thr, lat,
                2 * B);
        }
        imgpu_kernels_eq_path(0, 0);
        for (int sv = 0; sv < IMGPU_SCAN_VARIANT_COUNT; sv++) {
            b.scan = sv;
            time_op(&b, op_eq_three, &thr, &lat);
            char name[96];
            snprintf(name, sizeof name, "imgpu memset+3 launches, %s", imgpu_scan_variant_name((imgpu_scan_variant)sv));
            row(size, &b, cn, op, name, thr, lat, 2 * B);
        }
    }

    if (content != 1 && want("rotate")) { /* rotation cost does not depend on the content: photo and constant only */
        static const uint8_t bg[4] = {0, 0, 0, 0};
        static const char *fname[] = {"nearest", "bilinear", "bicubic"};
        /* resident textures: over CUDA arrays, and (where the row pitch allows) over the packed
         * buffers themselves, which the pipeline uses to skip the array copy */
        for (int mode = 0; mode < 2; mode++) {
            imgpu__cuda_tex_force_array(mode == 0);
            if (mode == 1 && !imgpu__cuda_tex_pitched_ok(b.d_in[0], w, h, c))
                break;
            /* over arrays, gray ones allow gathers (what the pipeline makes for gray bicubic) */
            for (int i = 0; i < b.k; i++)
                if (imgpu__cuda_tex_load(&b.tex[i], b.d_in[i], w, h, c, bg, mode == 0, b.s, &b.held)) {
                    fprintf(stderr, "imgpu bench: %s\n", imgpu_error_message());
                    exit(1);
                }
            CK(cudaStreamSynchronize(b.s));
            for (int f = 0; f < 3; f++) {
                b.filter = f;
                char op[64];
                snprintf(op, sizeof op, "rotate 30 %s", fname[f]);
                time_op(&b, op_rotate_resident, &thr, &lat);
                row(size, &b, cn, op, mode == 0 ? "imgpu tex2D, CUDA array resident" : "imgpu tex2D, pitched linear (no copy)",
                    thr, lat, 2 * B);
            }
            if (mode == 0 && b.tex[0].gather) { /* gray bicubic: gathers (above) against point fetches */
                b.filter = 2;
                imgpu_kernels_rot_gather(0);
                time_op(&b, op_rotate_resident, &thr, &lat);
                row(size, &b, cn, "rotate 30 bicubic", "imgpu 16 point fetches (forced), CUDA array", thr, lat, 2 * B);
                imgpu_kernels_rot_gather(1);
            }
            /* the thread layouts side by side (bilinear, bicubic); the default rows above take one */
            for (int f = 1; f <= 2; f++) {
                b.filter = f;
                for (int lay = 0; lay < 2; lay++) {
                    char name[96], op[64];
                    imgpu_kernels_rot_layout(lay);
                    time_op(&b, op_rotate_resident, &thr, &lat);
                    snprintf(name, sizeof name, "imgpu tex2D %s layout, %s", lay ? "warp-tile" : "row",
                             mode == 0 ? (b.tex[0].gather && f == 2 ? "CUDA array, gathers" : "CUDA array")
                                       : "pitched linear");
                    snprintf(op, sizeof op, "rotate 30 %s", fname[f]);
                    row(size, &b, cn, op, name, thr, lat, 2 * B);
                }
            }
            imgpu_kernels_rot_layout(-1);
            for (int i = 0; i < b.k; i++)
                imgpu__cuda_tex_destroy(&b.tex[i], &b.held);
        }
        imgpu__cuda_tex_force_array(1);
        b.filter = 1;
        time_op(&b, op_rotate_upload, &thr, &lat);
        row(size, &b, cn, "rotate 30 bilinear", "imgpu tex2D + copy into the CUDA array", thr, lat, 2 * B);
        b.filter = 2;
        time_op(&b, op_rotate_upload, &thr, &lat);
        row(size, &b, cn, "rotate 30 bicubic", b.tex_up.gather ? "imgpu gathers + copy into the CUDA array (the pipeline's)"
                                                               : "imgpu tex2D + copy into the CUDA array", thr, lat, 2 * B);
        imgpu__cuda_tex_force_array(0);
        for (int f = 0; f < 3 && bench_have_npp() && c != 4; f++) {
            b.filter = f;
            char op[64];
            snprintf(op, sizeof op, "rotate 30 %s", fname[f]);
            time_op(&b, op_npp_rotate, &thr, &lat);
            row(size, &b, cn, op, "NPP nppiRotate", thr, lat, 2 * B);
        }
        time_op(&b, op_turn90, &thr, &lat);
        row(size, &b, cn, "rotate 90", "imgpu tiled transpose", thr, lat, 2 * B);
        imgpu__cuda_tex_destroy(&b.tex_up, &b.held);
    }
    CK(cudaStreamSynchronize(b.s));
    for (int i = 0; i < b.k; i++)
        cudaFree(b.d_in[i]);
    cudaFree(b.d_out);
    cudaFree(b.d_hist);
    cudaFree(b.d_fused);
    cudaFree(b.d_lut);
    cudaFree(b.d_temp);
    cudaStreamDestroy(b.s);
}

int main(int argc, char **argv)
{
    const char *sizes = "1080p,4k,8k", *chans = "1,3", *contents = "photo,noise,constant", *depths = "8,16";
    int issue6_only = 0, cpu = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv"))
            s_csv = 1;
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            sizes = argv[++i];
        else if (!strcmp(argv[i], "--channels") && i + 1 < argc)
            chans = argv[++i];
        else if (!strcmp(argv[i], "--contents") && i + 1 < argc)
            contents = argv[++i];
        else if (!strcmp(argv[i], "--depths") && i + 1 < argc)
            depths = argv[++i];
        else if (!strcmp(argv[i], "--ops") && i + 1 < argc)
            s_ops = argv[++i];
        else if (!strcmp(argv[i], "--issue6-only")) /* CLAHE, 16-bit, formulas (bench_full.c) */
            issue6_only = 1;
        else if (!strcmp(argv[i], "--cpu"))   /* the CPU table (bench_cpu.c) */
            cpu = 1;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)   /* the CPU table's; checked there */
            i++;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            bench_usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "imgpu bench: unknown option '%s'\n", argv[i]);
            bench_usage(stderr);
            return 2;
        }
    }
    if (cpu)
        return bench_cpu_main(argc, argv, NULL);
    if (!imgpu_cuda_available()) {   /* "no usable GPU: no NVIDIA GPU or driver was found (...)" */
        char why[600];
        snprintf(why, sizeof why, "%s", imgpu_error_message());
        return bench_cpu_main(argc, argv, why);
    }
    struct cudaDeviceProp p;
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&p, dev));
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    if (!s_csv) {
        printf("imgpu bench: %s (%d SMs, L2 %d MiB), %s; median of %d; throughput = events around %d back-to-back "
               "ops / %d; latency = events around one op\n\n",
               p.name, p.multiProcessorCount, p.l2CacheSize >> 20, date, BENCH_REPS, BENCH_BATCH, BENCH_BATCH);
        printf("| size | image | content | op | variant | throughput us | latency us | GB/s | %% copy |\n");
        printf("| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: |\n");
    } else {
        printf("size,image,content,op,variant,throughput_us,latency_us,gbps,pct_copy\n");
    }
    {
        bench b;
        memset(&b, 0, sizeof b);
        b.k = 1;
        b.c = 1;
        CK(cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking));
        double thr, lat;
        time_op(&b, op_empty, &thr, &lat);
        s_copy_gbs = 1;
        if (s_csv)
            printf("-,-,-,empty kernel,launch floor,%.2f,%.2f,,\n", thr, lat);
        else
            printf("| - | - | - | empty kernel | launch floor | %.2f | %.2f | | |\n", thr, lat);
        cudaStreamDestroy(b.s);
    }
    char dir[4096];
    const char *env = getenv("IMGPU_ASSETS");
    snprintf(dir, sizeof dir, "%s", env && *env ? env : IMGPU_ASSETS_DIR);
    char path[4200];
    snprintf(path, sizeof path, "%s/camera.png", dir);
    imgpu_image *gray = imgpu_image_load(path, NULL);
    snprintf(path, sizeof path, "%s/astronaut.png", dir);
    imgpu_image *rgb = imgpu_image_load(path, NULL);
    if (!gray || !rgb)
        fprintf(stderr, "imgpu bench: photos not found in %s (set IMGPU_ASSETS): using a flat image\n", dir);

    static const struct { const char *name; int w, h; } S[] = {{"1080p", 1920, 1080}, {"4k", 3840, 2160}, {"8k", 7680, 4320}};
    static const char *CN[] = {"photo", "noise", "constant"};
    const int main_rows = !issue6_only && (want("histogram") || want("equalize") || want("rotate"));
    for (int s = 0; s < 3 && main_rows; s++) {
        if (!strstr(sizes, S[s].name))
            continue;
        for (int c = 1; c <= 4; c++) {
            char cs[4];
            snprintf(cs, sizeof cs, "%d", c);
            if (!strstr(chans, cs))
                continue;
            for (int k = 0; k < 3; k++)
                if (strstr(contents, CN[k]))
                    run_config(S[s].name, S[s].w, S[s].h, c, k, c == 1 ? gray : rgb, (size_t)p.l2CacheSize);
        }
    }
    if (issue6_only || want("full") || want("hist16") || want("eqfull") || want("clahe") || want("tone"))
        bench_full(sizes, chans, contents, depths, issue6_only ? "full" : s_ops, (size_t)p.l2CacheSize, s_csv, gray,
                   rgb);
    imgpu_image_free(gray);
    imgpu_image_free(rgb);
    imgpu_cuda_shutdown();
    return 0;
}
