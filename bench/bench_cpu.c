/* bench_cpu.c — `imgpu bench --cpu`, and `imgpu bench` where no GPU can be used (no NVIDIA GPU
 * or driver, or a build without CUDA): the CPU backend's ops timed alone (no decode, no
 * encode) on a photo scaled to each size, next to OpenCV's same functions when a python3 with
 * cv2 is found (bench/cpu_opencv.py, run on the same pixels, saved as PNG).
 *
 * Method: wall clock (CLOCK_MONOTONIC) around each imgpu_cpu_* call, output allocation
 * included; one warm-up call, then the median (and the minimum) of --reps calls. Both sides
 * use as many threads: the CPU backend's (IMGPU_CPU_THREADS, else the cores), and
 * cv2.setNumThreads with that count. These are not the GPU table's figures (CUDA events over
 * inputs rotated past the L2): compare rows of this table with each other only.
 *
 * In a build without CUDA this file is the whole of imgpu-bench (its main is at the end). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_cpu.h"
#include "cpu/cpu.h"
#include "error.h"
#include "io.h"
#include "wall_clock.h"

void bench_usage(FILE *f)
{
    fprintf(f, "usage: imgpu bench [--csv] [--sizes 1080p,4k,8k] [--channels 1,3] [--contents photo,noise,constant]\n"
               "                   [--ops histogram,equalize,rotate,full]   (full: the CLAHE, 16-bit and formula rows;\n"
               "                   or a part of them: hist16, eqfull, clahe; tone: levels, normalize,\n"
               "                   autolevel, only when named) [--depths 8,16] (of those rows)\n"
               "                   [--issue6-only]   (only CLAHE, 16-bit and formula rows; OpenCV's CLAHE\n"
               "                   beside them when IMGPU_BENCH_PYTHON names a python3 with cv2)\n"
               "                   [--cpu] [--reps N]\n"
               "Times every op and kernel variant on the GPU next to CUB and NPP (median CUDA-event times,\n"
               "inputs rotated over buffers larger than the L2 cache). Markdown table on stdout; --csv for CSV.\n"
               "--cpu, or no usable GPU (no NVIDIA GPU or driver; a build without CUDA): times the CPU\n"
               "backend instead (histogram, equalize, CLAHE, rotations; default sizes 1080p,4k), wall-clock\n"
               "median of --reps calls (default 5), next to OpenCV's same functions when a python3 with cv2\n"
               "is found (IMGPU_BENCH_PYTHON, else /usr/bin/python3 or python3 on PATH).\n");
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

/* The photo scaled bilinearly to w x h plus +-2 of noise (a sensor's grain), as the GPU
 * table's inputs; noise where there is no photo. */
static imgpu_image *make_input(int w, int h, int c, const imgpu_image *photo)
{
    imgpu_image *im = imgpu_image_new(w, h, c, 8);
    if (!im)
        return NULL;
    uint32_t seed = 777u;
    for (int y = 0; y < h; y++) {
        uint8_t *row = imgpu_image_row(im, y);
        for (int x = 0; x < w; x++)
            for (int ch = 0; ch < c; ch++) {
                uint8_t *p = row + (size_t)x * c + ch;
                if (!photo) {
                    *p = (uint8_t)xs(&seed);
                    continue;
                }
                float fx = (x + 0.5f) * photo->width / w - 0.5f, fy = (y + 0.5f) * photo->height / h - 0.5f;
                int ix = (int)floorf(fx), iy = (int)floorf(fy);
                float a = fx - ix, b = fy - iy;
                int x0 = ix < 0 ? 0 : ix, y0 = iy < 0 ? 0 : iy;
                int x1 = ix + 1 >= photo->width ? photo->width - 1 : ix + 1;
                int y1 = iy + 1 >= photo->height ? photo->height - 1 : iy + 1;
                int pc = photo->channels, k = ch < pc ? ch : 0;
#define PX(xx, yy) imgpu_image_row(photo, yy)[(xx) * pc + k]
                float v = (1 - a) * (1 - b) * PX(x0, y0) + a * (1 - b) * PX(x1, y0) + (1 - a) * b * PX(x0, y1) +
                          a * b * PX(x1, y1);
#undef PX
                v += (float)((int)(xs(&seed) % 5) - 2);
                *p = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5f);
            }
    }
    return im;
}

/* ---- the ops (names as bench/cpu_opencv.py prints them) --------------------------------------- */

enum { OP_HIST, OP_EQ, OP_CLAHE, OP_ROT_BILINEAR, OP_ROT_BICUBIC, OP_ROT90, OP_COUNT };
static const char *const s_op_names[OP_COUNT] = {"histogram", "equalize", "clahe", "rotate30_bilinear",
                                                 "rotate30_bicubic", "rotate90"};
/* the --ops group each row belongs to (the GPU table's names; `full` holds CLAHE there too) */
static const char *const s_op_group[OP_COUNT] = {"histogram", "equalize", "clahe", "rotate", "rotate", "rotate"};

/* 0, or -1 with imgpu's error recorded */
static int run_op(int op, const imgpu_image *in)
{
    imgpu_image *out = NULL;
    switch (op) {
    case OP_HIST: {
        imgpu_histogram h;
        return imgpu_cpu_histogram(in, &h);
    }
    case OP_EQ: {
        imgpu_equalize_params p = {.mode = IMGPU_MODE_LUMINANCE};
        out = imgpu_cpu_equalize(in, &p);
        break;
    }
    case OP_CLAHE: {
        /* through the CPU's run table: the op's own entry point is not in cpu.h (an undeclared
         * call here returned an int truncated to a pointer) */
        const imgpu_op o = imgpu_op_clahe(IMGPU_CLAHE_DEFAULT_CLIP, 8, 8, IMGPU_MODE_LUMINANCE);
        out = imgpu_cpu_run(in, &o);
        break;
    }
    default: {
        imgpu_rotate_params p = {.angle = op == OP_ROT90 ? 90 : 30, .crop = op != OP_ROT90,
                                 .filter = op == OP_ROT_BICUBIC ? IMGPU_FILTER_BICUBIC : IMGPU_FILTER_BILINEAR};
        out = imgpu_cpu_rotate(in, &p);
        break;
    }
    }
    if (!out)
        return -1;
    imgpu_image_free(out);
    return 0;
}

/* median and minimum seconds of reps calls after a warm-up; -1 when the op fails */
static int time_op(int op, const imgpu_image *in, int reps, double *med, double *min)
{
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t || run_op(op, in) < 0) {
        free(t);
        return -1;
    }
    for (int i = 0; i < reps; i++) {
        const double t0 = wall_now();
        if (run_op(op, in) < 0) {
            free(t);
            return -1;
        }
        t[i] = wall_now() - t0;
    }
    *med = wall_median(t, reps); /* sorts t */
    *min = t[0];
    free(t);
    return 0;
}

/* ---- OpenCV, through bench/cpu_opencv.py -------------------------------------------------------- */

typedef struct opencv {
    char py[512];      /* a python3 that imports cv2; "" when none */
    char script[1024]; /* bench/cpu_opencv.py */
    char version[32];
} opencv;

/* a python that imports cv2: IMGPU_BENCH_PYTHON when set (empty: none), else Debian's, else PATH's */
static void find_opencv(opencv *cv)
{
    memset(cv, 0, sizeof *cv);
    const char *script = getenv("IMGPU_BENCH_OPENCV_SCRIPT_DIR");
    snprintf(cv->script, sizeof cv->script, "%s/cpu_opencv.py", script && *script ? script : IMGPU_BENCH_DIR);
    if (access(cv->script, R_OK) != 0) {
        cv->script[0] = '\0';
        return;
    }
    const char *env = getenv("IMGPU_BENCH_PYTHON");
    const char *cands[] = {env, env ? NULL : "/usr/bin/python3", env ? NULL : "python3"};
    for (int i = 0; i < 3; i++) {
        if (!cands[i] || !*cands[i] || strchr(cands[i], '\''))
            continue;
        char cmd[700];
        snprintf(cmd, sizeof cmd, "'%s' -c 'import cv2; print(cv2.__version__)' 2>/dev/null", cands[i]);
        FILE *f = popen(cmd, "r");
        if (!f)
            continue;
        char line[64] = "";
        const int got = fgets(line, sizeof line, f) != NULL;
        if (pclose(f) == 0 && got) {
            line[strcspn(line, "\r\n")] = '\0';
            snprintf(cv->py, sizeof cv->py, "%s", cands[i]);
            snprintf(cv->version, sizeof cv->version, "%s", line);
            return;
        }
    }
}

typedef struct cv_times {
    char name[48];
    double med, min;
} cv_times;

/* Runs cpu_opencv.py on the two inputs (either may be NULL: not timed); fills up to max rows ("gray_equalize" ...); the count. */
static int run_opencv(const opencv *cv, const imgpu_image *gray, const imgpu_image *rgb, int reps, int threads,
                      cv_times *rows, int max)
{
    if (!cv->py[0] || (!gray && !rgb))
        return 0;
    char dir[] = "/tmp/imgpu-bench-cpu-XXXXXX";
    if (!mkdtemp(dir))
        return 0;
    char gp[64], rp[64], cmd[2048];
    snprintf(gp, sizeof gp, "%s/gray.png", dir);
    snprintf(rp, sizeof rp, "%s/rgb.png", dir);
    imgpu_save_options so;
    memset(&so, 0, sizeof so);
    so.png_level = 0; /* stored: quick to write; the decode is not timed */
    int n = 0;
    if ((!gray || imgpu_image_save(gray, gp, &so) == 0) && (!rgb || imgpu_image_save(rgb, rp, &so) == 0)) {
        snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' '%s' %d %d", cv->py, cv->script, gray ? gp : "-", rgb ? rp : "-",
                 reps, threads);
        fflush(stdout);
        FILE *f = popen(cmd, "r");
        if (f) {
            char line[256];
            while (n < max && fgets(line, sizeof line, f)) {
                cv_times r;
                if (sscanf(line, "%47[^\t]\t%lf\t%lf", r.name, &r.med, &r.min) == 3)
                    rows[n++] = r;
            }
            pclose(f);
        }
    } else {
        fprintf(stderr, "imgpu bench: %s\n", imgpu_error_message());
    }
    remove(gp);
    remove(rp);
    rmdir(dir);
    return n;
}

static const cv_times *find_row(const cv_times *rows, int n, const char *kind, const char *op)
{
    char name[64];
    snprintf(name, sizeof name, "%s_%s", kind, op);
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].name, name))
            return &rows[i];
    return NULL;
}

/* ---- the table ---------------------------------------------------------------------------------- */

static int has_item(const char *list, const char *tok)
{
    size_t n = strlen(tok);
    for (const char *p = list; (p = strstr(p, tok)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

static int want_op(const char *ops, int op)
{
    return has_item(ops, s_op_group[op]) || (op == OP_CLAHE && has_item(ops, "full"));
}

int bench_cpu_main(int argc, char **argv, const char *why)
{
    const char *sizes = "1080p,4k", *chans = "1,3", *ops = "histogram,equalize,rotate,full";
    int csv = 0, reps = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--csv"))
            csv = 1;
        else if (!strcmp(a, "--cpu"))
            continue;
        else if (!strcmp(a, "--issue6-only"))   /* GPU rows; CLAHE is in this table */
            continue;
        else if ((!strcmp(a, "--contents") || !strcmp(a, "--depths")) && i + 1 < argc)
            i++;   /* the GPU table's: this one times photos at 8 bits */
        else if (!strcmp(a, "--sizes") && i + 1 < argc)
            sizes = argv[++i];
        else if (!strcmp(a, "--channels") && i + 1 < argc)
            chans = argv[++i];
        else if (!strcmp(a, "--ops") && i + 1 < argc)
            ops = argv[++i];
        else if (!strcmp(a, "--reps") && i + 1 < argc) {
            char *end;
            errno = 0;
            long v = strtol(argv[++i], &end, 10);
            if (*end || errno || v < 1 || v > 1000) {
                fprintf(stderr, "imgpu bench: --reps '%s': a count of 1 to 1000 is needed\n", argv[i]);
                return 2;
            }
            reps = (int)v;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            bench_usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "imgpu bench: unknown option '%s'\n", a);
            bench_usage(stderr);
            return 2;
        }
    }
    static const struct { const char *name; int w, h; } S[] = {{"1080p", 1920, 1080}, {"4k", 3840, 2160}, {"8k", 7680, 4320}};
    int nsizes = 0;
    for (int s = 0; s < 3; s++)
        nsizes += has_item(sizes, S[s].name);
    if (!nsizes) {
        fprintf(stderr, "imgpu bench: --sizes '%s': none of 1080p, 4k, 8k\n", sizes);
        return 2;
    }

    char dir[4096], path[4200];
    const char *env = getenv("IMGPU_ASSETS");
    snprintf(dir, sizeof dir, "%s", env && *env ? env : IMGPU_ASSETS_DIR);
    snprintf(path, sizeof path, "%s/camera.png", dir);
    imgpu_image *gray_photo = imgpu_image_load(path, NULL);
    snprintf(path, sizeof path, "%s/astronaut.png", dir);
    imgpu_image *rgb_photo = imgpu_image_load(path, NULL);
    if (!gray_photo || !rgb_photo)
        fprintf(stderr, "imgpu bench: photos not found in %s (set IMGPU_ASSETS): timing noise\n", dir);

    opencv cv;
    find_opencv(&cv);
    const int threads = imgpu_cpu_threads();
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    if (why)
        fprintf(stderr, "imgpu bench: %s: timing the CPU backend instead (the GPU table needs an NVIDIA GPU, "
                "its driver and a CUDA build)\n", why);
    if (!cv.py[0])
        fprintf(stderr, "imgpu bench: OpenCV not timed: %s\n",
                !cv.script[0] ? "bench/cpu_opencv.py not found (IMGPU_BENCH_OPENCV_SCRIPT_DIR names its folder)"
                : "no python3 with cv2 found (IMGPU_BENCH_PYTHON names one; Debian: python3-opencv)");
    if (csv) {
        printf("size,image,op,imgpu_cpu_median_ms,imgpu_cpu_min_ms,mpix_per_s,opencv_median_ms,opencv_min_ms,"
               "imgpu_over_opencv\n");
    } else {
        printf("imgpu bench: the CPU backend, %d thread%s, %s; wall clock around each call (output allocation "
               "included), median and minimum of %d after one warm-up", threads, threads == 1 ? "" : "s", date, reps);
        if (cv.py[0])
            printf("; OpenCV %s (%s, cv2.setNumThreads(%d)) on the same pixels", cv.version, cv.py, threads);
        printf("\n\n| size | image | op | imgpu CPU ms | min ms | MP/s | OpenCV ms | min ms | imgpu / OpenCV |\n");
        printf("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    }
    fflush(stdout);
    int rc = 0;
    for (int s = 0; s < 3 && rc == 0; s++) {
        if (!has_item(sizes, S[s].name))
            continue;
        const int w = S[s].w, h = S[s].h;
        imgpu_image *in[5] = {NULL};
        for (int c = 1; c <= 4; c++) {
            char cs[4];
            snprintf(cs, sizeof cs, "%d", c);
            if (has_item(chans, cs) && !(in[c] = make_input(w, h, c, c == 1 ? gray_photo : rgb_photo))) {
                fprintf(stderr, "imgpu bench: %s\n", imgpu_error_message());
                rc = 1;
            }
        }
        cv_times cvr[32];
        const int ncv = rc ? 0 : run_opencv(&cv, in[1], in[3], reps, threads, cvr, 32);
        for (int c = 1; c <= 4 && rc == 0; c++) {
            if (!in[c])
                continue;
            const char *kind = c == 1 ? "gray" : c == 3 ? "rgb" : c == 2 ? "gray+alpha" : "rgba";
            for (int op = 0; op < OP_COUNT; op++) {
                if (!want_op(ops, op))
                    continue;
                double med, min;
                if (time_op(op, in[c], reps, &med, &min) < 0) {
                    fprintf(stderr, "imgpu bench: %s %s %s: %s\n", S[s].name, kind, s_op_names[op],
                            imgpu_error_message());
                    rc = 1;
                    break;
                }
                const cv_times *r = find_row(cvr, ncv, kind, s_op_names[op]);
                const double mps = (double)w * h / med / 1e6;
                if (csv) {
                    printf("%s,%s,%s,%.3f,%.3f,%.1f,", S[s].name, kind, s_op_names[op], med * 1e3, min * 1e3, mps);
                    if (r)
                        printf("%.3f,%.3f,%.2f\n", r->med * 1e3, r->min * 1e3, med / r->med);
                    else
                        printf(",,\n");
                } else {
                    printf("| %s | %s | %s | %.2f | %.2f | %.0f |", S[s].name, kind, s_op_names[op], med * 1e3,
                           min * 1e3, mps);
                    if (r)
                        printf(" %.2f | %.2f | %.2f |\n", r->med * 1e3, r->min * 1e3, med / r->med);
                    else
                        printf(" n/a | | |\n");
                }
                fflush(stdout);
            }
        }
        for (int c = 1; c <= 4; c++)
            imgpu_image_free(in[c]);
    }
    if (!csv && rc == 0)
        printf("\nOpenCV's rows: cv2.calcHist per channel, cv2.equalizeHist and createCLAHE(40, (8, 8)).apply (RGB: "
               "on Y of YCrCb, as imgpu), warpAffine by 30 degrees about the centre at the same size "
               "(INTER_LINEAR / INTER_CUBIC), cv2.rotate 90; the script: bench/cpu_opencv.py.\n");
    imgpu_image_free(gray_photo);
    imgpu_image_free(rgb_photo);
    return rc;
}

#ifndef IMGPU_HAVE_CUDA
int main(int argc, char **argv)
{
    int cpu = 0;   /* --cpu: asked for, so not "instead" of anything */
    for (int i = 1; i < argc; i++)
        cpu |= !strcmp(argv[i], "--cpu");
    return bench_cpu_main(argc, argv, cpu ? NULL : "imgpu was built without CUDA");
}
#endif
