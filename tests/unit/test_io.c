/* test_io.c — unit tests of the image I/O layer (src/io/io.c, src/io/stb_impl.c): round trips of
 * every format and channel count (odd widths, 1x1, 1xN, Nx1, padded strides), the assets
 * against checksums taken with OpenCV, hostile input (truncated at every offset, renamed
 * formats, lying headers, a zlib bomb), 16-bit PNG/PNM, and writes that must fail cleanly (bad
 * paths, /dev/full, a file-size rlimit) without harming an existing target. Crafted files
 * are built here byte by byte; nothing is downloaded.
 */
#include "io.h"
#include "error.h"
#include "test_bytes.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

static char g_dir[] = "/tmp/imgpu_test_io.XXXXXX";

/* ---- helpers ------------------------------------------------------------------------- */

static int contains(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }
static int starts_with(const char *s, const char *p) { return s && strncmp(s, p, strlen(p)) == 0; }

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Noise (exercises every code path of the lossless encoders) or a smooth picture (what
 * JPEG is made for, so its tolerance can be tight). Alpha is never 0 everywhere. */
static imgpu_image *make_image(int w, int h, int c, unsigned seed, int smooth)
{
    imgpu_image *im = imgpu_image_new(w, h, c, 8);
    uint32_t x = seed * 2654435761u + 1;
    for (int y = 0; y < h; y++) {
        unsigned char *row = imgpu_image_row(im, y);
        for (int i = 0; i < w; i++)
            for (int k = 0; k < c; k++) {
                x = x * 1664525u + 1013904223u;
                row[i * c + k] = smooth ? (unsigned char)(20 + i * 150 / (w > 1 ? w - 1 : 1) +
                                                          y * 60 / (h > 1 ? h - 1 : 1) + k * 10)
                                        : (unsigned char)(x >> 24);
            }
    }
    return im;
}

static imgpu_image *encode_load(const imgpu_image *im, imgpu_format f,
                                const imgpu_save_options *o, size_t *len_out)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    if (imgpu_image_encode(im, f, o, &buf, &len) < 0)
        return NULL;
    if (len_out)
        *len_out = len;
    imgpu_image *r = imgpu_image_load_memory(buf, len, "mem", NULL);
    free(buf);
    return r;
}

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    bytes b = { 0 };
    unsigned char tmp[65536];
    size_t got;
    while ((got = fread(tmp, 1, sizeof tmp, f)) > 0)
        put(&b, tmp, got);
    fclose(f);
    if (!b.p)
        b.p = malloc(1);
    *n = b.n;
    return b.p;
}

static char *tpath(const char *name)
{
    static char buf[8][512];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, 512, "%s/%s", g_dir, name);
    return p;
}

/* Files left behind in the test directory whose names start with '.': temp files. */
static int temp_files_left(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    if (d)
        closedir(d);
    return n;
}

static uint32_t checksum(const imgpu_image *im)
{
    uint64_t s = 0, i = 0;
    for (int y = 0; y < im->height; y++) {
        const unsigned char *r = imgpu_image_row(im, y);
        for (size_t k = 0; k < (size_t)im->width * (size_t)im->channels; k++, i++)
            s += (uint64_t)r[k] * (i % 251 + 1);
    }
    return (uint32_t)s;
}

/* Value of channel k of pixel (x,y) of `src` as a format that changes the channel layout is
 * expected to give it back: BMP stores gray as RGB, gray+alpha as RGBA. */
static int expected_sample(const imgpu_image *src, int x, int y, int k, int out_channels)
{
    const unsigned char *p = imgpu_image_row(src, y) + (size_t)x * src->channels;
    if (src->channels == out_channels)
        return p[k];
    if (src->channels == 1)
        return p[0];
    return k < 3 ? p[0] : p[1];   /* gray+alpha as RGBA */
}

/* ---- format names ---------------------------------------------------------------------- */

static void test_format_from_path(void)
{
    CHECK(imgpu_format_from_path("a.png") == IMGPU_FORMAT_PNG);
    CHECK(imgpu_format_from_path("dir.d/A.PNG") == IMGPU_FORMAT_PNG);
    CHECK(imgpu_format_from_path("a.tar.png") == IMGPU_FORMAT_PNG);
    CHECK(imgpu_format_from_path("x.JpEg") == IMGPU_FORMAT_JPEG);
    CHECK(imgpu_format_from_path("x.jpg") == IMGPU_FORMAT_JPEG);
    CHECK(imgpu_format_from_path("x.bmp") == IMGPU_FORMAT_BMP);
    CHECK(imgpu_format_from_path("x.Tga") == IMGPU_FORMAT_TGA);
    CHECK(imgpu_format_from_path("x.pnm") == IMGPU_FORMAT_PNM);
    CHECK(imgpu_format_from_path("x.PGM") == IMGPU_FORMAT_PNM);
    CHECK(imgpu_format_from_path("x.ppm") == IMGPU_FORMAT_PNM);
    CHECK(imgpu_format_from_path("x.gif") == IMGPU_FORMAT_UNKNOWN);
    CHECK(imgpu_format_from_path("x.png.bak") == IMGPU_FORMAT_UNKNOWN);
    CHECK(imgpu_format_from_path("noext") == IMGPU_FORMAT_UNKNOWN);
    CHECK(imgpu_format_from_path("dir.png/file") == IMGPU_FORMAT_UNKNOWN);
    CHECK(imgpu_format_from_path(".png") == IMGPU_FORMAT_UNKNOWN);
    CHECK(imgpu_format_from_path("x.") == IMGPU_FORMAT_UNKNOWN);
    CHECK(strcmp(imgpu_format_name(IMGPU_FORMAT_JPEG), "JPEG") == 0);
    CHECK(strcmp(imgpu_format_name(IMGPU_FORMAT_PNM), "PNM") == 0);
}

/* ---- round trips ----------------------------------------------------------------------- */

/* JPEG tolerance at quality 95 without chroma subsampling (the settings of stb's encoder,
 * which these bounds were measured with; the JPEG round trips below ask for them
 * explicitly, since the default is now quality 92, 4:2:0). For the smooth test picture
 * (measured: mean <= 0.31, max 1): mean absolute error per sample at most 0.5, no sample off
 * by more than 3. For photos (measured: chelsea mean 1.25, max 12; camera 0.95, 9): mean at
 * most 2, max at most 24. */
#define JPEG_MEAN_TOL 0.5
#define JPEG_MAX_TOL 3
#define JPEG_PHOTO_MEAN_TOL 2.0
#define JPEG_PHOTO_MAX_TOL 24

/* JPEG's save options for the tolerances above: quality 95, 4:4:4 */
static const imgpu_save_options s_jpeg95 = { .quality = 95, .png_level = -1,
                                             .subsampling = IMGPU_SUBSAMPLING_444 };

/* A sample of src composited onto white as JPEG's save does (alpha last; computed here from
 * the definition, v * a + 255 * (255 - a) over 255, rounded). */
static int flattened_sample(const imgpu_image *src, int x, int y, int k)
{
    const unsigned char *p = imgpu_image_row(src, y) + (size_t)x * src->channels;
    const int a = p[src->channels - 1];
    return (p[k] * a + 255 * (255 - a) + 127) / 255;
}

static void check_round_trip(imgpu_format f, int w, int h, int c, int padded_stride)
{
    int jpeg = f == IMGPU_FORMAT_JPEG;
    imgpu_image *src = make_image(w, h, c, (unsigned)(w * 31 + h * 7 + c), jpeg);
    imgpu_image view = *src;
    unsigned char *padded = NULL;
    if (padded_stride) {
        /* Same pixels, rows 13 bytes apart further, with junk in between. */
        view.stride = src->stride + 13;
        padded = malloc(view.stride * (size_t)h);
        memset(padded, 0xA5, view.stride * (size_t)h);
        for (int y = 0; y < h; y++)
            memcpy(padded + (size_t)y * view.stride, imgpu_image_row(src, y), src->stride);
        view.data = padded;
        view.owns = 0;
    }
    const char *fn = imgpu_format_name(f);
    imgpu_image *got = encode_load(&view, f, jpeg ? &s_jpeg95 : NULL, NULL);
    if (f == IMGPU_FORMAT_PNM && (c == 2 || c == 4)) {
        CHECKF(!got && contains(imgpu_error_message(), "cannot store alpha"),
               "%s %dx%dx%d: alpha must be refused, got '%s'", fn, w, h, c,
               imgpu_error_message());
        goto done;
    }
    CHECKF(got != NULL, "%s %dx%dx%d: %s", fn, w, h, c, imgpu_error_message());
    if (!got)
        goto done;
    if (jpeg && (c == 2 || c == 4)) {
        /* alpha is flattened onto white: the file must be the JPEG of the image flattened by
         * the definition (built here), decoded to the same pixels */
        imgpu_image *flat = imgpu_image_new(w, h, c - 1, 8);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                for (int k = 0; k < c - 1; k++)
                    imgpu_image_row(flat, y)[x * (c - 1) + k] =
                        (unsigned char)flattened_sample(src, x, y, k);
        imgpu_image *ref = encode_load(flat, f, &s_jpeg95, NULL);
        CHECKF(ref && got->width == w && got->height == h && got->channels == c - 1 &&
                   memcmp(got->data, ref->data, (size_t)w * h * (c - 1)) == 0,
               "JPEG %dx%dx%d: not the JPEG of the image flattened onto white", w, h, c);
        imgpu_image_free(ref);
        imgpu_image_free(flat);
        goto done;
    }
    int want_c = c;
    if (f == IMGPU_FORMAT_BMP && c <= 2)
        want_c = c + 2;
    if (jpeg)   /* gray stays gray; alpha is flattened away */
        want_c = c <= 2 ? 1 : 3;
    CHECKF(got->width == w && got->height == h && got->channels == want_c && got->depth == 8,
           "%s %dx%dx%d came back %dx%dx%d", fn, w, h, c, got->width, got->height,
           got->channels);
    if (got->width != w || got->height != h || got->channels != want_c)
        goto done;
    long bad = 0, maxerr = 0, gray_split = 0;
    double sum = 0;
    for (int y = 0; y < h; y++) {
        const unsigned char *r = imgpu_image_row(got, y);
        for (int x = 0; x < w; x++)
            for (int k = 0; k < want_c; k++) {
                int e = abs(r[x * want_c + k] - expected_sample(src, x, y, k, want_c));
                bad += e != 0;
                sum += e;
                if (e > maxerr)
                    maxerr = e;
                if (c == 1 && k > 0 && r[x * want_c + k] != r[x * want_c])
                    gray_split++;
            }
    }
    if (jpeg) {
        double mean = sum / ((double)w * h * want_c);
        CHECKF(mean <= JPEG_MEAN_TOL && maxerr <= JPEG_MAX_TOL,
               "JPEG %dx%dx%d: mean error %.3f, max %ld", w, h, c, mean, maxerr);
        CHECKF(gray_split == 0, "JPEG gray %dx%d: %ld samples with unequal channels", w, h,
               gray_split);
    } else {
        CHECKF(bad == 0, "%s %dx%dx%d%s: %ld samples differ (max %ld)", fn, w, h, c,
               padded_stride ? " (padded stride)" : "", bad, maxerr);
    }
done:
    imgpu_image_free(got);
    imgpu_image_free(src);
    free(padded);
}

static void test_round_trips(void)
{
    static const int sizes[][2] = { { 451, 23 }, { 1, 1 }, { 1, 37 }, { 37, 1 }, { 64, 48 },
                                    { 17, 9 } };
    static const imgpu_format fmts[] = { IMGPU_FORMAT_PNG, IMGPU_FORMAT_JPEG, IMGPU_FORMAT_BMP,
                                         IMGPU_FORMAT_TGA, IMGPU_FORMAT_PNM };
    for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++)
        for (int c = 1; c <= 4; c++) {
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                check_round_trip(fmts[f], sizes[s][0], sizes[s][1], c, 0);
            check_round_trip(fmts[f], 33, 5, c, 1);
        }

    /* Every PNG level decodes exactly; 9 is smaller than 0 (stored) on a smooth picture. */
    imgpu_image *im = make_image(200, 100, 3, 5, 1);
    size_t len0 = 0, len9 = 0;
    imgpu_save_options o0 = { .quality = 0, .png_level = 0, .no_follow = 0 }, o9 = { .quality = 0, .png_level = 9, .no_follow = 0 };
    imgpu_image *a = encode_load(im, IMGPU_FORMAT_PNG, &o0, &len0);
    imgpu_image *b = encode_load(im, IMGPU_FORMAT_PNG, &o9, &len9);
    CHECK(a && b && checksum(a) == checksum(im) && checksum(b) == checksum(im));
    CHECKF(len9 < len0 / 4, "level 9: %zu bytes, level 0: %zu", len9, len0);
    imgpu_image_free(a);
    imgpu_image_free(b);

    /* JPEG quality: lower quality, smaller file. */
    size_t lq = 0, hq = 0;
    imgpu_save_options q20 = { .quality = 20, .png_level = -1, .no_follow = 0 };
    a = encode_load(im, IMGPU_FORMAT_JPEG, &q20, &lq);
    b = encode_load(im, IMGPU_FORMAT_JPEG, NULL, &hq);
    CHECKF(a && b && lq < hq, "JPEG q20 %zu bytes vs q95 %zu", lq, hq);
    imgpu_image_free(a);
    imgpu_image_free(b);

    /* Bad options. */
    unsigned char *buf = NULL;
    size_t len;
    imgpu_save_options bad_q = { .quality = 101, .png_level = -1, .no_follow = 0 }, bad_l = { .quality = 0, .png_level = 10, .no_follow = 0 };
    CHECK(imgpu_image_encode(im, IMGPU_FORMAT_JPEG, &bad_q, &buf, &len) < 0 &&
          contains(imgpu_error_message(), "quality"));
    CHECK(imgpu_image_encode(im, IMGPU_FORMAT_PNG, &bad_l, &buf, &len) < 0 &&
          contains(imgpu_error_message(), "level"));
    CHECK(imgpu_image_encode(im, IMGPU_FORMAT_UNKNOWN, NULL, &buf, &len) < 0 &&
          starts_with(imgpu_error_message(), "cannot encode image: unknown output format"));
    /* 16-bit (issue 6): PNG and PNM keep every bit; the others convert to 8 bits. */
    imgpu_image *deep = imgpu_image_new(4, 4, 1, 16);
    for (int i = 0; i < 16; i++)
        ((uint16_t *)(void *)deep->data)[i] = (uint16_t)(i * 4099 + 1);
    for (int k = 0; k < 2; k++) {
        imgpu_format f = k ? IMGPU_FORMAT_PNM : IMGPU_FORMAT_PNG;
        buf = NULL;
        CHECK(imgpu_image_encode(deep, f, NULL, &buf, &len) == 0);
        imgpu_image *back = buf ? imgpu_image_load_memory(buf, len, "deep", NULL) : NULL;
        CHECK(back && back->depth == 16 && back->channels == 1 &&
              !memcmp(back->data, deep->data, 32));
        imgpu_image_free(back);
        free(buf);
    }
    imgpu_image_free(deep);
    imgpu_image_free(im);

    /* Through files, each format, and the mode of a new file. */
    mode_t old = umask(022);
    static const char *names[] = { "rt.png", "rt.JPG", "rt.bmp", "rt.tga", "rt.ppm" };
    im = make_image(451, 300, 3, 9, 1);
    for (int i = 0; i < 5; i++) {
        const char *p = tpath(names[i]);
        CHECKF(imgpu_image_save(im, p, NULL) == 0, "%s: %s", p, imgpu_error_message());
        imgpu_image *r = imgpu_image_load(p, NULL);
        CHECKF(r && r->width == 451 && r->height == 300 && r->channels == 3, "%s: %s", p,
               imgpu_error_message());
        if (r && i != 1)
            CHECK(checksum(r) == checksum(im));
        struct stat st;
        CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0644);
        imgpu_image_free(r);
    }
    imgpu_image_free(im);
    umask(old);
}

/* ---- the assets ---------------------------------------------------------------------------- */

static void test_assets(void)
{
    /* Sizes from `file`, checksums of the pixels as OpenCV 4.6 decodes them (RGB order). */
    static const struct {
        const char *name;
        int w, h, c;
        uint32_t sum;
    } a[] = {
        { "camera.png", 512, 512, 1, 4256556634u },
        { "brick.png", 512, 512, 1, 3680281526u },
        { "clock_motion.png", 400, 300, 1, 2212290058u },
        { "astronaut.png", 512, 512, 3, 2764519867u },
        { "coffee.png", 600, 400, 3, 356932816u },
        { "chelsea.png", 451, 300, 3, 1601845827u },
        { "horse.png", 400, 328, 4, 4087300155u },
        /* OpenCV's: cv2.imread(IMREAD_UNCHANGED) in RGB order, summed as checksum() does */
        { "rocket.jpg", 640, 427, 3, 2447102695u },
    };
    const char *dir = getenv("IMGPU_ASSETS");
    CHECKF(dir != NULL, "IMGPU_ASSETS is not set");
    if (!dir)
        return;
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, a[i].name);
        imgpu_image *im = imgpu_image_load(p, NULL);
        CHECKF(im != NULL, "%s", imgpu_error_message());
        if (!im)
            continue;
        CHECKF(im->width == a[i].w && im->height == a[i].h && im->channels == a[i].c &&
                   im->depth == 8 && im->stride == (size_t)a[i].w * a[i].c,
               "%s: %dx%dx%d", a[i].name, im->width, im->height, im->channels);
        CHECKF(checksum(im) == a[i].sum, "%s: checksum %u, OpenCV's %u", a[i].name,
               checksum(im), a[i].sum);
        /* A JPEG round trip of the photo, against the stated photo tolerance. */
        if (a[i].sum && (a[i].c == 1 || a[i].c == 3)) {
            imgpu_image *r = encode_load(im, IMGPU_FORMAT_JPEG, &s_jpeg95, NULL);
            const int oc = a[i].c;   /* gray stays a 1-channel JPEG */
            CHECKF(r && r->channels == oc, "%s as JPEG: %d channels (%s)", a[i].name,
                   r ? r->channels : 0, imgpu_error_message());
            if (r && r->channels != oc) {
                imgpu_image_free(r);
                r = NULL;
            }
            double sum = 0;
            int mx = 0;
            for (int y = 0; r && y < im->height; y++)
                for (int x = 0; x < im->width; x++)
                    for (int k = 0; k < oc; k++) {
                        int e = abs(imgpu_image_row(r, y)[x * oc + k] -
                                    expected_sample(im, x, y, k, oc));
                        sum += e;
                        mx = e > mx ? e : mx;
                    }
            double mean = sum / ((double)im->width * im->height * oc);
            CHECKF(r && mean <= JPEG_PHOTO_MEAN_TOL && mx <= JPEG_PHOTO_MAX_TOL,
                   "%s as JPEG: mean error %.3f, max %d", a[i].name, mean, mx);
            imgpu_image_free(r);
        }
        imgpu_image_free(im);
    }
}

/* ---- bad input ---------------------------------------------------------------------------- */

static void expect_load_error(const char *path, const char *reason)
{
    char want[1024];
    snprintf(want, sizeof want, "cannot read '%s': %s", path, reason);
    imgpu_error_clear();
    imgpu_image *im = imgpu_image_load(path, NULL);
    CHECKF(!im && starts_with(imgpu_error_message(), want), "want '%s', got '%s'", want,
           imgpu_error_message());
    imgpu_image_free(im);
}

static void expect_mem_error(const void *buf, size_t n, const char *reason, const char *what)
{
    imgpu_error_clear();
    imgpu_image *im = imgpu_image_load_memory(buf, n, "x.png", NULL);
    char want[512];
    snprintf(want, sizeof want, "cannot read 'x.png': %s", reason);
    CHECKF(!im && starts_with(imgpu_error_message(), want), "%s: want '%s', got '%s'", what,
           want, im ? "(decoded)" : imgpu_error_message());
    imgpu_image_free(im);
}

/* A w x h gray PNG whose one IDAT inflates to `inflated` zero bytes (the rows of zeros when
 * that is (w + 1) * h; more: a stream that runs past the image's rows). */
static bytes zero_png(uint32_t w, uint32_t h, size_t inflated)
{
    bytes b = { 0 };
    unsigned char *zeros = calloc(1, inflated);
    uLongf zlen = compressBound(inflated);
    unsigned char *z = malloc(zlen);
    CHECK(zeros && z && compress2(z, &zlen, zeros, inflated, 9) == Z_OK);
    png_begin(&b, w, h, 8, 0);
    png_chunk(&b, "IDAT", z, zlen);
    png_chunk(&b, "IEND", NULL, 0);
    free(zeros);
    free(z);
    return b;
}

typedef struct shape_probe {
    int calls, refuse;
    imgpu_image_shape seen;
} shape_probe;

static int probe_shape(const imgpu_image_shape *s, void *ctx)
{
    shape_probe *p = ctx;
    p->calls++;
    p->seen = *s;
    return p->refuse ? imgpu_error("the job refused %dx%d", s->width, s->height) : 0;
}

/* --max-memory on the load (issue 25): the file, the image and the decoder's buffers against
 * the limit from the header, before the decode; the job's own check (on_shape) there too; and
 * the decoder held to the limit while it runs, for what the header cannot tell. */
static void test_memory_limit(void)
{
    bytes b = zero_png(2048, 2048, (size_t)2049 * 2048);   /* 4 MiB of pixels in ~4 KB */
    imgpu_load_options lo = { .max_memory = (uint64_t)2 << 20 };
    imgpu_error_clear();
    imgpu_image *im = imgpu_image_load_memory(b.p, b.n, "z.png", &lo);
    CHECKF(!im && starts_with(imgpu_error_message(), "cannot read 'z.png': decoding the "
                              "2048x2048 image needs ") &&
           contains(imgpu_error_message(), "over --max-memory 2.0 MiB (raise it with "
                    "--max-memory or IMGPU_MAX_MEMORY)"),
           "4 MiB of pixels under --max-memory 2M: %s", imgpu_error_message());
    imgpu_image_free(im);

    /* the job's hook: called once with the image the load returns, before the memory check
     * and the decode; its refusal is the load's */
    shape_probe p = { 0, 1, { 0, 0, 0, 0 } };
    lo.on_shape = probe_shape;
    lo.on_shape_ctx = &p;
    imgpu_error_clear();
    im = imgpu_image_load_memory(b.p, b.n, "z.png", &lo);
    CHECKF(!im && p.calls == 1 && !strcmp(imgpu_error_message(), "the job refused 2048x2048"),
           "on_shape refusal: %d calls, '%s'", p.calls, imgpu_error_message());
    imgpu_image_free(im);
    p = (shape_probe){ 0, 0, { 0, 0, 0, 0 } };
    lo.max_memory = (uint64_t)32 << 20;
    im = imgpu_image_load_memory(b.p, b.n, "z.png", &lo);
    CHECKF(im && im->width == 2048 && p.calls == 1 && p.seen.width == 2048 &&
           p.seen.height == 2048 && p.seen.channels == 1 && p.seen.depth == 8,
           "under --max-memory 32M: decoded (%s), on_shape saw %dx%d c%d d%d",
           im ? "yes" : imgpu_error_message(), p.seen.width, p.seen.height, p.seen.channels,
           p.seen.depth);
    imgpu_image_free(im);
    free(b.p);

    /* A 1024x1024 PNG (1 MiB) whose stream inflates to 16 MiB: its header passes 4 MiB, and
     * the decoder, held to the limit, stops at it and says so. */
    b = zero_png(1024, 1024, (size_t)16 << 20);
    imgpu_load_options lim4 = { .max_memory = (uint64_t)4 << 20 };
    imgpu_error_clear();
    im = imgpu_image_load_memory(b.p, b.n, "z.png", &lim4);
    CHECKF(!im && !strcmp(imgpu_error_message(), "cannot read 'z.png': decoding the 1024x1024 "
                          "image needs more memory than --max-memory 4.0 MiB (raise it with "
                          "--max-memory or IMGPU_MAX_MEMORY)"),
           "zlib bomb under --max-memory 4M: %s", im ? "(decoded)" : imgpu_error_message());
    imgpu_image_free(im);
    free(b.p);
}

static void test_bad_paths(void)
{
    expect_load_error(tpath("does-not-exist.png"), "No such file or directory");
    CHECK(write_file(tpath("empty.png"), "", 0) == 0);
    expect_load_error(tpath("empty.png"), "file is empty");
    expect_load_error(g_dir, "is a directory");
    CHECK(write_file(tpath("plain"), "x", 1) == 0);
    expect_load_error(tpath("plain/x.png"), "Not a directory");
    expect_load_error("/dev/null", "file is empty");

    /* Other formats renamed .png are refused by name, from their magic bytes. */
    static const struct {
        const char *file, *data;
        size_t n;
        const char *reason;
    } r[] = {
        { "hdr.png", "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 1\n\x80\x80\x80\x80", 47,
          "Radiance HDR images are not supported" },
        { "gif.png", "GIF89a\x01\0\x01\0\x80\0\0\0\0\0\xff\xff\xff!\xf9\x04\x01\0\0\0\0,\0\0\0"
                     "\0\x01\0\x01\0\0\x02\x02\x44\x01\0;", 43, "GIF images are not supported" },
        { "psd.png", "8BPS\0\x01\0\0\0\0\0\0\0\x03\0\0\0\x01\0\0\0\x01\0\x08\0\x03", 26,
          "PSD images are not supported" },
        { "tiff.png", "II*\0\x08\0\0\0\0\0", 10, "corrupt TIFF header (the first directory is empty)" },
        { "webp.png", "RIFF\x1a\0\0\0WEBPVP8L", 16, "truncated WebP header" },  /* read now */
        { "pic.png", "\x53\x80\xf6\x34PICT", 8, "Softimage PIC images are not supported" },
        { "pam.ppm", "P7\nWIDTH 1\nHEIGHT 1\n", 20, "PAM (P7) images are not supported" },
        { "text.png", "hello, world\n", 13, "unknown image format" },
        { "zeros.png", "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 20, "unknown image format" },
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        CHECK(write_file(tpath(r[i].file), r[i].data, r[i].n) == 0);
        expect_load_error(tpath(r[i].file), r[i].reason);
    }
}

/* Every prefix of a valid file must fail to load: never garbage, never a crash. Up to
 * `every` bytes are tried one by one, past that ~400 offsets spread over the file. */
static void check_truncations(const unsigned char *buf, size_t n, const char *what)
{
    imgpu_image *whole = imgpu_image_load_memory(buf, n, "x.png", NULL);
    CHECKF(whole != NULL, "%s: the untruncated file must load: %s", what,
           imgpu_error_message());
    imgpu_image_free(whole);
    size_t step = n <= 6000 ? 1 : n / 400;
    int failures = 0;
    for (size_t cut = 0; cut < n; cut += (cut < 64 || n - cut < 64) ? 1 : step) {
        imgpu_error_clear();
        imgpu_image *im = imgpu_image_load_memory(buf, cut, "x.png", NULL);
        if (im || !starts_with(imgpu_error_message(), "cannot read 'x.png': ")) {
            if (failures++ < 3)
                CHECKF(0, "%s cut to %zu of %zu bytes: %s", what, cut, n,
                       im ? "decoded" : imgpu_error_message());
        }
        imgpu_image_free(im);
    }
    CHECKF(failures == 0, "%s: %d truncated prefixes did not fail", what, failures);
}

static void truncate_encoded(imgpu_format f, int w, int h, int c, int smooth)
{
    imgpu_image *im = make_image(w, h, c, 77, smooth);
    unsigned char *buf = NULL;
    size_t len = 0;
    char what[64];
    snprintf(what, sizeof what, "%s %dx%dx%d", imgpu_format_name(f), w, h, c);
    CHECKF(imgpu_image_encode(im, f, NULL, &buf, &len) == 0, "%s", imgpu_error_message());
    if (buf)
        check_truncations(buf, len, what);
    free(buf);
    imgpu_image_free(im);
}

/* An uncompressed (type 2 / type 3) TGA, which stb's writer never makes (it writes RLE). */
static void make_tga_raw(bytes *b, int w, int h, int c)
{
    put8(b, 0); put8(b, 0); put8(b, c == 1 ? 3 : 2);
    put16le(b, 0); put16le(b, 0); put8(b, 0);
    put16le(b, 0); put16le(b, 0); put16le(b, (unsigned)w); put16le(b, (unsigned)h);
    put8(b, (unsigned)(c * 8)); put8(b, 0x20 | (c == 4 ? 8 : 0));   /* top-down */
    for (int i = 0; i < w * h * c; i++)
        put8(b, (unsigned)(i * 7 + 3));
}

/* An 8-bit paletted BMP with a 4-entry gray palette (0, 85, 170, 255). */
static void make_bmp8(bytes *b, int w, int h, int bad_index)
{
    int row = (w + 3) & ~3;
    uint32_t off = 14 + 40 + 4 * 4;
    puts_(b, "BM");
    put32le(b, off + (uint32_t)(row * h)); put32le(b, 0); put32le(b, off);
    put32le(b, 40); put32le(b, (uint32_t)w); put32le(b, (uint32_t)h); put16le(b, 1);
    put16le(b, 8); put32le(b, 0); put32le(b, (uint32_t)(row * h)); put32le(b, 2835);
    put32le(b, 2835); put32le(b, 4); put32le(b, 0);
    for (int i = 0; i < 4; i++)
        put32le(b, (uint32_t)(i * 85 * 0x010101));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < row; x++)
            put8(b, x < w ? (bad_index && y == 1 && x == 1 ? 4 : (unsigned)(x + y) % 4) : 0);
}

static void test_truncation(void)
{
    for (int c = 1; c <= 4; c++) {
        truncate_encoded(IMGPU_FORMAT_PNG, 37, 11, c, 0);
        truncate_encoded(IMGPU_FORMAT_TGA, 37, 11, c, 0);
        truncate_encoded(IMGPU_FORMAT_TGA, 37, 11, c, 1);   /* long RLE runs */
        truncate_encoded(IMGPU_FORMAT_BMP, 37, 11, c, 0);
    }
    truncate_encoded(IMGPU_FORMAT_JPEG, 45, 29, 1, 1);
    truncate_encoded(IMGPU_FORMAT_JPEG, 45, 29, 3, 0);
    truncate_encoded(IMGPU_FORMAT_PNM, 37, 11, 1, 0);
    truncate_encoded(IMGPU_FORMAT_PNM, 37, 11, 3, 0);
    truncate_encoded(IMGPU_FORMAT_PNG, 1, 1, 1, 0);
    truncate_encoded(IMGPU_FORMAT_BMP, 1, 1, 3, 0);
    truncate_encoded(IMGPU_FORMAT_JPEG, 1, 1, 3, 0);

    for (int c = 1; c <= 4; c++) {
        if (c == 2)
            continue;
        bytes b = { 0 };
        make_tga_raw(&b, 9, 5, c);
        imgpu_image *im = imgpu_image_load_memory(b.p, b.n, "raw.tga", NULL);
        CHECKF(im && im->channels == c && im->width == 9 && im->height == 5, "raw TGA: %s",
               imgpu_error_message());
        /* TGA stores BGR; the first pixel (top row) must come back as RGB. */
        if (im && c >= 3)
            CHECK(im->data[0] == 17 && im->data[1] == 10 && im->data[2] == 3);
        if (im && c == 1)
            CHECK(im->data[0] == 3 && im->data[1] == 10);
        imgpu_image_free(im);
        check_truncations(b.p, b.n, "uncompressed TGA");
        free(b.p);
    }

    bytes b = { 0 };
    make_bmp8(&b, 7, 3, 0);
    imgpu_image *im = imgpu_image_load_memory(b.p, b.n, "pal.bmp", NULL);
    CHECKF(im && im->channels == 3 && im->width == 7, "paletted BMP: %s", imgpu_error_message());
    /* Bottom-up: the last file row is the top row; its pixel 1 has index (1+2)%4 = 3. */
    if (im)
        CHECK(im->data[3] == 255 && im->data[4] == 255 && im->data[0] == 170);
    imgpu_image_free(im);
    check_truncations(b.p, b.n, "paletted BMP");
    free(b.p);
    /* A top-down 24-bit BMP (negative height): rows come back in file order. */
    b = (bytes){ 0 };
    puts_(&b, "BM");
    put32le(&b, 54 + 16); put32le(&b, 0); put32le(&b, 54);
    put32le(&b, 40); put32le(&b, 2); put32le(&b, (uint32_t)-2); put16le(&b, 1);
    put16le(&b, 24); put32le(&b, 0); put32le(&b, 16); put32le(&b, 0); put32le(&b, 0);
    put32le(&b, 0); put32le(&b, 0);
    put(&b, "\x01\x02\x03\x04\x05\x06\0\0\x07\x08\x09\x0a\x0b\x0c\0\0", 16);
    im = imgpu_image_load_memory(b.p, b.n, "td.bmp", NULL);
    CHECKF(im && im->width == 2 && im->height == 2 && im->channels == 3, "top-down BMP: %s",
           imgpu_error_message());
    if (im)
        CHECK(im->data[0] == 3 && im->data[1] == 2 && im->data[2] == 1 && im->data[6] == 9);
    imgpu_image_free(im);
    check_truncations(b.p, b.n, "top-down BMP");
    free(b.p);

    b = (bytes){ 0 };
    make_bmp8(&b, 7, 3, 1);
    expect_mem_error(b.p, b.n, "corrupt BMP data (palette index out of range)", "bad index");
    free(b.p);

    const char *dir = getenv("IMGPU_ASSETS");
    if (dir) {
        static const char *files[] = { "camera.png", "horse.png", "rocket.jpg" };
        for (int i = 0; i < 3; i++) {
            char p[1024];
            size_t n;
            snprintf(p, sizeof p, "%s/%s", dir, files[i]);
            unsigned char *buf = read_file(p, &n);
            CHECK(buf != NULL);
            if (buf)
                check_truncations(buf, n, files[i]);
            free(buf);
        }
    }
}

/* Finds chunk `type` in a PNG we made; returns its offset (of the length field) or 0. */
static size_t find_chunk(const unsigned char *p, size_t n, const char *type)
{
    size_t pos = 8;
    while (pos + 12 <= n) {
        uint32_t len = (uint32_t)p[pos] << 24 | (uint32_t)p[pos + 1] << 16 |
                       (uint32_t)p[pos + 2] << 8 | p[pos + 3];
        if (memcmp(p + pos + 4, type, 4) == 0)
            return pos;
        pos += 12 + len;
    }
    return 0;
}

static void test_hostile(void)
{
    double t0 = now();
    bytes b = { 0 };

    /* Huge dimensions: refused from the header, before any allocation. */
    png_begin(&b, 100000, 100000, 8, 6);
    png_chunk(&b, "IEND", NULL, 0);
    expect_mem_error(b.p, b.n, "image is 100000x100000 = 10000000000 pixels, more than the "
                     "limit of 268435456 (raise it with --max-pixels)", "huge PNG");
    imgpu_load_options big = {.max_pixels = UINT64_C(1) << 40};
    CHECK(imgpu_image_load_memory(b.p, b.n, "x.png", &big) == NULL);   /* stb: too large */
    free(b.p);

    b = (bytes){ 0 };
    puts_(&b, "BM");
    put32le(&b, 54 + 16); put32le(&b, 0); put32le(&b, 54);
    put32le(&b, 40); put32le(&b, 1000000); put32le(&b, (uint32_t)-1000000); put16le(&b, 1);
    put16le(&b, 24); put32le(&b, 0); put32le(&b, 0); put32le(&b, 0); put32le(&b, 0);
    put32le(&b, 0); put32le(&b, 0);
    put(&b, "0123456789abcdef", 16);
    expect_mem_error(b.p, b.n, "image is 1000000x1000000", "huge BMP");
    CHECKF(imgpu_image_load_memory(b.p, b.n, "x.png", &big) == NULL &&
           contains(imgpu_error_message(), "truncated BMP data"), "%s", imgpu_error_message());
    free(b.p);

    /* A smaller limit applies too. */
    imgpu_image *small = make_image(100, 100, 1, 1, 0);
    unsigned char *enc = NULL;
    size_t enc_len = 0;
    imgpu_load_options lim = {.max_pixels = 9999};
    CHECK(imgpu_image_encode(small, IMGPU_FORMAT_PNG, NULL, &enc, &enc_len) == 0);
    CHECK(imgpu_image_load_memory(enc, enc_len, "x.png", &lim) == NULL &&
          contains(imgpu_error_message(), "more than the limit of 9999"));
    lim.max_pixels = 10000;
    imgpu_image *ok = imgpu_image_load_memory(enc, enc_len, "x.png", &lim);
    CHECK(ok != NULL);
    imgpu_image_free(ok);

    /* A CRC error in a critical chunk, an unknown critical chunk. */
    size_t idat = find_chunk(enc, enc_len, "IDAT");
    CHECK(idat > 0);
    enc[idat + 8] ^= 0x40;
    expect_mem_error(enc, enc_len, "corrupt PNG data (CRC error in IDAT chunk)", "bad CRC");
    enc[idat + 8] ^= 0x40;
    b = (bytes){ 0 };
    put(&b, enc, idat);
    png_chunk(&b, "ZZZZ", "abc", 3);
    put(&b, enc + idat, enc_len - idat);
    expect_mem_error(b.p, b.n, "unsupported PNG chunk 'ZZZZ'", "unknown critical chunk");
    free(b.p);

    /* A zlib stream cut short inside well-formed chunks. */
    {
        uint32_t len = (uint32_t)enc[idat] << 24 | (uint32_t)enc[idat + 1] << 16 |
                       (uint32_t)enc[idat + 2] << 8 | enc[idat + 3];
        b = (bytes){ 0 };
        put(&b, enc, idat);
        png_chunk(&b, "IDAT", enc + idat + 8, len / 2);
        png_chunk(&b, "IEND", NULL, 0);
        expect_mem_error(b.p, b.n, "corrupt PNG data", "short zlib stream");
        free(b.p);
    }
    free(enc);
    imgpu_image_free(small);

    /* IDAT claiming ~4 GB (or 2 GB) in a 1x1 file: the length is checked against the file
     * before stb can realloc to it. */
    for (int i = 0; i < 2; i++) {
        b = (bytes){ 0 };
        png_begin(&b, 1, 1, 8, 0);
        put32be(&b, i ? 0x7FFFFFF0u : 0xFFFFFF00u);
        puts_(&b, "IDAT");
        put(&b, "\x78\x01\x01\x02\0\xfd\xff\0\x80\0\x82\0\x81", 13);
        expect_mem_error(b.p, b.n, i ? "truncated PNG data" : "corrupt PNG data (bad chunk "
                         "length)", "huge IDAT");
        imgpu_image *im = imgpu_image_load_memory(b.p, b.n, "x.png", &big);
        CHECK(!im);
        free(b.p);
    }

    /* A zlib bomb: a 1x1 PNG whose IDAT inflates to 64 MiB. The decoder's budget (a few
     * MiB for a 1x1 image) stops it. */
    {
        size_t raw = (size_t)64 << 20;
        unsigned char *zeros = calloc(1, raw);
        uLongf zlen = compressBound(raw);
        unsigned char *z = malloc(zlen);
        CHECK(zeros && z && compress2(z, &zlen, zeros, raw, 9) == Z_OK);
        b = (bytes){ 0 };
        png_begin(&b, 1, 1, 8, 0);
        png_chunk(&b, "IDAT", z, zlen);
        png_chunk(&b, "IEND", NULL, 0);
        double t = now();
        expect_mem_error(b.p, b.n, "corrupt PNG data (needs more memory than an image of its "
                         "size can use", "zlib bomb");
        CHECKF(now() - t < 2.0, "zlib bomb took %.2f s", now() - t);
        free(b.p);
        free(zeros);
        free(z);
    }

    /* 16-bit PNG and PNM. */
    {
        unsigned char rows[2 * 5] = { 0, 1, 2, 3, 4, 0, 5, 6, 7, 8 };
        uLongf zlen = 64;
        unsigned char z[64];
        CHECK(compress2(z, &zlen, rows, sizeof rows, 6) == Z_OK);
        b = (bytes){ 0 };
        png_begin(&b, 2, 2, 16, 0);
        png_chunk(&b, "IDAT", z, zlen);
        png_chunk(&b, "IEND", NULL, 0);
        /* issue 6: both decode at depth 16, samples big-endian in the file */
        static const uint16_t want16[4] = { 0x0102, 0x0304, 0x0506, 0x0708 };
        imgpu_image *im16 = imgpu_image_load_memory(b.p, b.n, "x.png", NULL);
        CHECKF(im16 && im16->depth == 16 && im16->width == 2 && im16->height == 2 &&
               !memcmp(im16->data, want16, 8), "16-bit PNG: %s", im16 ? "wrong pixels" : imgpu_error_message());
        imgpu_image_free(im16);
        free(b.p);
        b = (bytes){ 0 };
        puts_(&b, "P5\n2 2\n65535\n");
        put(&b, "\1\2\3\4\5\6\7\x08", 8);
        im16 = imgpu_image_load_memory(b.p, b.n, "x.pgm", NULL);
        CHECKF(im16 && im16->depth == 16 && !memcmp(im16->data, want16, 8), "16-bit PNM: %s",
               im16 ? "wrong pixels" : imgpu_error_message());
        imgpu_image_free(im16);
        free(b.p);
        /* maxval 1023 (10-bit data) is scaled to the full range: 1023 -> 65535, 512 -> 32800 */
        b = (bytes){ 0 };
        puts_(&b, "P5\n2 1\n1023\n");
        put(&b, "\x03\xff\x02\x00", 4);
        im16 = imgpu_image_load_memory(b.p, b.n, "x.pgm", NULL);
        CHECK(im16 && im16->depth == 16 && ((uint16_t *)(void *)im16->data)[0] == 65535 &&
              ((uint16_t *)(void *)im16->data)[1] == (512 * 65535 + 511) / 1023);
        imgpu_image_free(im16);
        free(b.p);
    }

    /* PNM with comments and a small maxval: samples are scaled to 0..255. */
    {
        b = (bytes){ 0 };
        puts_(&b, "P5 # a comment\n3 # width\n1\n15\n");
        put(&b, "\0\x07\x0f", 3);
        imgpu_image *im = imgpu_image_load_memory(b.p, b.n, "x.pgm", NULL);
        CHECKF(im && im->channels == 1 && im->width == 3, "%s", imgpu_error_message());
        if (im)
            CHECK(im->data[0] == 0 && im->data[1] == 119 && im->data[2] == 255);
        imgpu_image_free(im);
        free(b.p);
        expect_mem_error("P6\n0 5\n255\n", 11, "corrupt PNM header (zero size)", "0-wide PNM");
        expect_mem_error("P6\n99999999999 5\n255\n", 21, "corrupt PNM header (number too large)",
                         "huge PNM");
    }

    /* JPEG: data after the EOI is fine; an EOI replaced by junk is truncation. */
    {
        imgpu_image *im = make_image(40, 30, 3, 3, 1);
        unsigned char *j = NULL;
        size_t jn = 0;
        CHECK(imgpu_image_encode(im, IMGPU_FORMAT_JPEG, NULL, &j, &jn) == 0);
        b = (bytes){ 0 };
        put(&b, j, jn);
        puts_(&b, "trailing junk from a camera");
        imgpu_image *r = imgpu_image_load_memory(b.p, b.n, "x.jpg", NULL);
        CHECKF(r != NULL, "JPEG with trailing data: %s", imgpu_error_message());
        imgpu_image_free(r);
        CHECK(j[jn - 2] == 0xff && j[jn - 1] == 0xd9);
        /* Huffman code counts summing past 256 (stb v2.27 would write past its tables). */
        size_t dht = 2;
        while (dht + 4 < jn && !(j[dht] == 0xff && j[dht + 1] == 0xc4))
            dht++;
        CHECK(dht + 4 < jn);
        if (dht + 4 < jn) {
            unsigned char saved[16];
            memcpy(saved, j + dht + 5, 16);
            memset(j + dht + 5, 0, 16);
            j[dht + 5 + 14] = 200;
            j[dht + 5 + 15] = 200;
            expect_mem_error(j, jn, "corrupt JPEG data (bad Huffman table)", "bad DHT");
            memcpy(j + dht + 5, saved, 16);
            r = imgpu_image_load_memory(j, jn, "x.jpg", NULL);
            CHECK(r != NULL);
            imgpu_image_free(r);
        }
        j[jn - 1] = 0x00;
        expect_mem_error(j, jn, "truncated JPEG data", "JPEG without EOI");
        expect_mem_error(j, 600 < jn ? 600 : jn / 2, "truncated JPEG data", "cut JPEG");
        free(b.p);
        free(j);
        imgpu_image_free(im);
    }
    CHECKF(now() - t0 < 10.0, "hostile inputs took %.1f s", now() - t0);
}

/* Random damage to valid files of every format: each load either fails with a proper
 * message or gives a sane image. Under -fsanitize=address,undefined this is a small fuzzer. */
static void mutate_and_load(const unsigned char *orig, size_t n, const char *what, uint32_t seed)
{
    unsigned char *buf = malloc(n);
    int bad = 0;
    /* IMGPU_IO_FUZZ_ROUNDS raises the count for a longer run under the sanitizers. */
    const char *env = getenv("IMGPU_IO_FUZZ_ROUNDS");
    int rounds = env ? atoi(env) : 400;
    for (int round = 0; round < rounds; round++) {
        memcpy(buf, orig, n);
        size_t len = n;
        int edits = 1 + (int)(seed >> 28) % 4;
        for (int e = 0; e < edits; e++) {
            seed = seed * 1664525u + 1013904223u;
            size_t at = (seed >> 8) % n;
            /* Headers are where the interesting decisions are: hit the first 64 bytes often. */
            if (round % 2 == 0 && n > 64)
                at %= 64;
            seed = seed * 1664525u + 1013904223u;
            buf[at] = (seed >> 24) % 3 == 0 ? 0xff : (seed >> 24) % 3 == 1 ? 0 : (unsigned char)(seed >> 16);
        }
        if (round % 7 == 0)
            len = (seed >> 4) % n + 1;
        imgpu_error_clear();
        imgpu_image *im = imgpu_image_load_memory(buf, len, "m", NULL);
        if (im) {
            if (im->width < 1 || im->height < 1 || im->channels < 1 || im->channels > 4 ||
                (uint64_t)im->width * im->height > IMGPU_DEFAULT_MAX_PIXELS)
                bad++;
            else {   /* touch every byte, so the sanitizer sees any uninitialized read */
                volatile unsigned sum = 0;
                for (size_t i = 0; i < (size_t)im->width * im->height * im->channels; i++)
                    sum += im->data[i];
            }
        } else if (!starts_with(imgpu_error_message(), "cannot read 'm': ")) {
            bad++;
        }
        imgpu_image_free(im);
    }
    CHECKF(bad == 0, "%s: %d damaged files gave an insane result", what, bad);
    free(buf);
}

static void test_mutations(void)
{
    static const struct {
        imgpu_format f;
        int c, smooth;
    } k[] = {
        { IMGPU_FORMAT_PNG, 1, 0 }, { IMGPU_FORMAT_PNG, 2, 1 }, { IMGPU_FORMAT_PNG, 3, 0 },
        { IMGPU_FORMAT_PNG, 4, 1 }, { IMGPU_FORMAT_JPEG, 1, 1 }, { IMGPU_FORMAT_JPEG, 3, 0 },
        { IMGPU_FORMAT_BMP, 3, 0 }, { IMGPU_FORMAT_BMP, 4, 0 }, { IMGPU_FORMAT_TGA, 1, 1 },
        { IMGPU_FORMAT_TGA, 2, 0 }, { IMGPU_FORMAT_TGA, 4, 1 }, { IMGPU_FORMAT_PNM, 1, 0 },
        { IMGPU_FORMAT_PNM, 3, 0 },
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        imgpu_image *im = make_image(23, 13, k[i].c, (unsigned)i, k[i].smooth);
        unsigned char *buf = NULL;
        size_t len = 0;
        char what[64];
        snprintf(what, sizeof what, "damaged %s x%d", imgpu_format_name(k[i].f), k[i].c);
        if (imgpu_image_encode(im, k[i].f, NULL, &buf, &len) == 0)
            mutate_and_load(buf, len, what, (uint32_t)i * 7919u + 1);
        free(buf);
        imgpu_image_free(im);
    }
    bytes b = { 0 };
    make_bmp8(&b, 7, 3, 0);
    mutate_and_load(b.p, b.n, "damaged paletted BMP", 99);
    free(b.p);
    b = (bytes){ 0 };
    make_tga_raw(&b, 9, 5, 3);
    mutate_and_load(b.p, b.n, "damaged raw TGA", 98);
    free(b.p);
}

/* ---- failing writes -------------------------------------------------------------------- */

static void expect_save_error(const imgpu_image *im, const char *path, const char *reason)
{
    char want[1024];
    snprintf(want, sizeof want, "cannot write '%s': %s", path, reason);
    imgpu_error_clear();
    int rc = imgpu_image_save(im, path, NULL);
    CHECKF(rc < 0 && starts_with(imgpu_error_message(), want), "want '%s', got '%s'", want,
           rc < 0 ? imgpu_error_message() : "(saved)");
}

static int same_file(const char *path, const unsigned char *data, size_t n)
{
    size_t m;
    unsigned char *p = read_file(path, &m);
    int same = p && m == n && memcmp(p, data, n) == 0;
    free(p);
    return same;
}

static void test_write_failures(void)
{
    imgpu_image *im = make_image(300, 200, 3, 4, 0);
    imgpu_image *rgba = make_image(30, 20, 4, 4, 0);
    char target[512];
    snprintf(target, sizeof target, "%s", tpath("target.png"));
    static const unsigned char original[] = "not really a PNG, but the bytes must survive";
    CHECK(write_file(target, original, sizeof original) == 0);
    CHECK(chmod(target, 0640) == 0);

    expect_save_error(im, tpath("out.xyz"), "unknown output format");
    expect_save_error(im, tpath("noext"), "unknown output format");
    /* a format imgpu knows but cannot write is named (issue 30) */
    expect_save_error(im, tpath("out.gif"), "GIF output is not supported");
    CHECK(access(tpath("out.xyz"), F_OK) != 0 && access(tpath("noext"), F_OK) != 0 &&
          access(tpath("out.gif"), F_OK) != 0);
    expect_save_error(im, tpath("plain/x.png"), "Not a directory");
    expect_save_error(im, tpath("missing/x.png"), "No such file or directory");
    expect_save_error(im, "/proc/imgpu_test_io.png", "");
    CHECK(mkdir(tpath("dir.png"), 0755) == 0);
    expect_save_error(im, tpath("dir.png"), "is a directory");

    /* Failing encodes leave an existing target alone. */
    char jpg[512];
    snprintf(jpg, sizeof jpg, "%s", tpath("target.jpg"));
    CHECK(write_file(jpg, original, sizeof original) == 0);
    imgpu_image *wide = make_image(65536, 1, 3, 4, 0);
    expect_save_error(wide, jpg, "JPEG cannot store images wider or taller than 65535");
    imgpu_image_free(wide);
    CHECK(same_file(jpg, original, sizeof original));
    expect_save_error(rgba, tpath("t.ppm"), "PNM cannot store alpha");
    CHECK(access(tpath("t.ppm"), F_OK) != 0);

    /* /dev/full through a symlink: the write fails with ENOSPC, and the device must still be
     * a device (a rename over it would have replaced /dev/full with a file). */
    CHECK(symlink("/dev/full", tpath("full.png")) == 0);
    expect_save_error(im, tpath("full.png"), "No space left on device");
    struct stat st;
    CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode));
    CHECK(lstat(tpath("full.png"), &st) == 0 && S_ISLNK(st.st_mode));

    /* A file-size limit hit in the middle of the write (EFBIG), in a child. */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = { 4096, 4096 };
        setrlimit(RLIMIT_FSIZE, &rl);
        int rc = imgpu_image_save(im, target, NULL);
        int ok = rc < 0 && contains(imgpu_error_message(), "File too large") &&
                 starts_with(imgpu_error_message(), "cannot write '");
        if (!ok)
            fprintf(stderr, "rlimit child: rc %d, '%s'\n", rc, imgpu_error_message());
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "RLIMIT_FSIZE save must fail cleanly");
    CHECK(same_file(target, original, sizeof original));
    CHECK(stat(target, &st) == 0 && (st.st_mode & 0777) == 0640);

    CHECKF(temp_files_left(g_dir) == 0, "%d temp files left behind", temp_files_left(g_dir));

    /* And a save that works replaces the target, keeping its mode; through a symlink, the
     * link stays and the file it names is replaced. */
    CHECKF(imgpu_image_save(im, target, NULL) == 0, "%s", imgpu_error_message());
    imgpu_image *back = imgpu_image_load(target, NULL);
    CHECK(back && checksum(back) == checksum(im));
    imgpu_image_free(back);
    CHECK(stat(target, &st) == 0 && (st.st_mode & 0777) == 0640);
    CHECK(symlink("target.png", tpath("link.png")) == 0);
    CHECKF(imgpu_image_save(rgba, tpath("link.png"), NULL) == 0, "%s", imgpu_error_message());
    CHECK(lstat(tpath("link.png"), &st) == 0 && S_ISLNK(st.st_mode));
    back = imgpu_image_load(target, NULL);
    CHECK(back && back->channels == 4 && checksum(back) == checksum(rgba));
    imgpu_image_free(back);
    CHECKF(temp_files_left(g_dir) == 0, "%d temp files left behind", temp_files_left(g_dir));

    imgpu_image_free(im);
    imgpu_image_free(rgba);
}

/* ---- threads ------------------------------------------------------------------------- */

typedef struct job {
    const char *assets;
    int id, failures;
} job;

/* Decodes (and one thread also feeds a zlib bomb) at the same time: each thread's budget is
 * its own, so the bomb's refusal must not leak into the others. */
static void *worker(void *arg)
{
    job *j = arg;
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", j->assets, j->id % 2 ? "chelsea.png" : "camera.png");
    uint32_t want = j->id % 2 ? 1601845827u : 4256556634u;
    for (int i = 0; i < 6; i++) {
        imgpu_image *im = imgpu_image_load(p, NULL);
        if (!im || checksum(im) != want)
            j->failures++;
        unsigned char *buf = NULL;
        size_t len;
        imgpu_save_options o = { .quality = 0, .png_level = j->id % 10, .no_follow = 0 };
        if (!im || imgpu_image_encode(im, IMGPU_FORMAT_PNG, &o, &buf, &len) < 0) {
            j->failures++;
        } else {
            imgpu_image *r = imgpu_image_load_memory(buf, len, "t", NULL);
            if (!r || checksum(r) != want)
                j->failures++;
            imgpu_image_free(r);
        }
        free(buf);
        imgpu_image_free(im);
    }
    return NULL;
}

static void test_threads(void)
{
    const char *dir = getenv("IMGPU_ASSETS");
    if (!dir)
        return;
    pthread_t t[6];
    job jobs[6];
    for (int i = 0; i < 6; i++) {
        jobs[i] = (job){ dir, i, 0 };
        CHECK(pthread_create(&t[i], NULL, worker, &jobs[i]) == 0);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(t[i], NULL);
        CHECKF(jobs[i].failures == 0, "thread %d: %d failures", i, jobs[i].failures);
    }
}

/* ---- main ---------------------------------------------------------------------------- */

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[1024];
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* imgpu_save_encoded_recorded (nvJPEG's bitstreams): libjpeg's own output without metadata, with
 * the metadata inserted, is byte for byte what libjpeg writes when asked for the metadata
 * (SOI, JFIF APP0, EXIF APP1, XMP APP1, ICC APP2 chunks, then the tables and the scan); a
 * stream without a JFIF APP0 gets libjpeg's; --strip writes none; non-JPEG bytes fail and
 * leave no file. */
static void test_save_encoded(void)
{
    imgpu_image *im = make_image(37, 21, 3, 5, 1);
    imgpu_meta m;
    memset(&m, 0, sizeof m);
    static unsigned char exif[300], xmp[500], icc[70000];   /* ICC: two APP2 chunks */
    for (size_t i = 0; i < sizeof icc; i++)
        icc[i] = (unsigned char)(i * 7 + 3);
    memcpy(exif, "II*\0\x08\0\0\0", 8);
    memset(xmp, 'x', sizeof xmp);
    CHECK(imgpu_meta_set(&m.exif, &m.exif_len, exif, sizeof exif) == 0 &&
          imgpu_meta_set(&m.xmp, &m.xmp_len, xmp, sizeof xmp) == 0 &&
          imgpu_meta_set(&m.icc, &m.icc_len, icc, sizeof icc) == 0);
    imgpu_save_options with = { .quality = 90, .png_level = -1, .meta = &m };
    imgpu_save_options bare = { .quality = 90, .png_level = -1 };
    unsigned char *a = NULL, *b = NULL, *got = NULL;
    size_t na = 0, nb = 0, ng = 0;
    CHECK(imgpu_image_encode(im, IMGPU_FORMAT_JPEG, &with, &a, &na) == 0);
    CHECK(imgpu_image_encode(im, IMGPU_FORMAT_JPEG, &bare, &b, &nb) == 0);
    char *p = tpath("encoded.jpg");
    CHECK(a && b && imgpu_save_encoded_recorded(b, nb, IMGPU_FORMAT_JPEG, p, &with, NULL, NULL) == 0);
    got = read_file(p, &ng);
    CHECK(got && ng == na && !memcmp(got, a, na));
    free(got);
    /* the same stream with its JFIF APP0 cut out (18 bytes after the SOI): libjpeg's goes in */
    if (b && nb > 20 && b[2] == 0xFF && b[3] == 0xE0) {
        unsigned char *cut = malloc(nb - 18);
        memcpy(cut, b, 2);
        memcpy(cut + 2, b + 20, nb - 20);
        CHECK(imgpu_save_encoded_recorded(cut, nb - 18, IMGPU_FORMAT_JPEG, p, &with, NULL, NULL) == 0);
        got = read_file(p, &ng);
        CHECK(got && ng == na && !memcmp(got, a, na));
        free(got);
        free(cut);
    } else {
        CHECK(!"libjpeg wrote no JFIF APP0 first");
    }
    imgpu_save_options strip = with;
    strip.strip = 1;
    CHECK(imgpu_save_encoded_recorded(b, nb, IMGPU_FORMAT_JPEG, p, &strip, NULL, NULL) == 0);
    got = read_file(p, &ng);
    CHECK(got && ng == nb && !memcmp(got, b, nb));
    free(got);
    char *q = tpath("not_jpeg.jpg");
    CHECK(imgpu_save_encoded_recorded((const unsigned char *)"\x89PNG\r\n\x1a\n", 8,
                                      IMGPU_FORMAT_JPEG, q, &with, NULL, NULL) < 0 &&
          contains(imgpu_error_message(), "no SOI") && access(q, F_OK) != 0);
    free(a);
    free(b);
    free(m.exif);
    free(m.xmp);
    free(m.icc);
    imgpu_image_free(im);
}

int main(void)
{
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_format_from_path();
    test_round_trips();
    test_save_encoded();
    test_assets();
    test_bad_paths();
    test_truncation();
    test_hostile();
    test_memory_limit();
    test_mutations();
    test_write_failures();
    test_threads();
    if (!t_failures)
        remove_tree(g_dir);
    else
        fprintf(stderr, "test files kept in %s\n", g_dir);
    TEST_MAIN_END();
}
