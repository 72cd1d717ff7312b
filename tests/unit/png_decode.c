/* png_decode.c — tests of the fast PNG decoding path (src/io/png_decode.c):
 *  - it takes the files it is for: every channel count, sizes from 1x1 to many rows, photo,
 *    noise and constant content, written by the strip encoder (one IDAT per strip) at levels
 *    0, 1 and 6 and by stb_image_write (one IDAT, stb's filter choice), and the 8-bit assets;
 *    its pixels equal the source pixels and what the loader gives with the path turned off
 *    (stb alone);
 *  - it declines (NULL, so stb decides) everything else: 16-bit, palette, interlaced, tRNS, an
 *    unknown critical chunk, IDATs split by another chunk, a bad filter type, a bad Adler-32,
 *    too few or too many inflated bytes, a zlib stream cut short, a budget too small; and a
 *    declined file still loads through stb where stb can read it.
 */
#include "error.h"
#include "image.h"
#include "io.h"
#include "png_decode.h"
#include "png_parallel.h"
#include "test_bytes.h"
#include "test_util.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

static uint32_t s_rng = 2024;
static uint32_t rnd(void)
{
    s_rng = s_rng * 1664525u + 1013904223u;
    return s_rng >> 8;
}

/* content 0: smooth gradients with a little noise; 1: noise; 2: constant */
static imgpu_image *make(int w, int h, int c, int content)
{
    imgpu_image *im = imgpu_image_new(w, h, c, 8);
    for (int y = 0; y < h; y++) {
        unsigned char *r = imgpu_image_row(im, y);
        for (int x = 0; x < w * c; x++)
            r[x] = (unsigned char)(content == 0 ? (unsigned)((x / c) * 3 + y * 2 + (x % c) * 40) + rnd() % 5
                                   : content == 1 ? rnd() : 77u);
    }
    return im;
}

static int same_pixels(const imgpu_image *a, const unsigned char *px, int w, int h, int c)
{
    if (a->width != w || a->height != h || a->channels != c || a->depth != 8)
        return 0;
    for (int y = 0; y < h; y++)
        if (memcmp(imgpu_image_row(a, y), px + (size_t)y * w * c, (size_t)w * c))
            return 0;
    return 1;
}

/* The file through the fast path (which must take it) and through the loader with the path
 * off (stb): both give the image's pixels. */
static void check_taken(const unsigned char *png, size_t len, const imgpu_image *src, const char *what)
{
    int w = 0, h = 0, c = 0;
    unsigned char *px = imgpu__png_decode_fast(png, len, SIZE_MAX, &w, &h, &c);
    CHECKF(px != NULL, "%s: the fast path takes it", what);
    if (px)
        CHECKF(same_pixels(src, px, w, h, c), "%s: fast path pixels equal the source", what);
    imgpu__png_decode_fast_enable(0);
    imgpu_image *ref = imgpu_image_load_memory(png, len, what, NULL);
    imgpu__png_decode_fast_enable(1);
    CHECKF(ref != NULL, "%s: stb decodes it: %s", what, ref ? "" : imgpu_error_message());
    if (ref && px)
        CHECKF(same_pixels(ref, px, w, h, c), "%s: fast path pixels equal stb's", what);
    imgpu_image_free(ref);
    free(px);
}

static void test_encoded(void)
{
    static const int sizes[][2] = {{1, 1}, {3, 2}, {17, 5}, {640, 37}, {1000, 1200}};
    for (int c = 1; c <= 4; c++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int content = 0; content < 3; content++) {
                const int w = sizes[s][0], h = sizes[s][1];
                imgpu_image *im = make(w, h, c, content);
                char what[96];
                static const int levels[] = {0, 1, 6};
                for (int l = 0; l < 3; l++) {
                    unsigned char *png = NULL;
                    size_t len = 0;
                    const char *why = NULL;
                    snprintf(what, sizeof what, "%dx%dx%d content %d strips level %d", w, h, c, content, levels[l]);
                    CHECKF(imgpu__png_encode_parallel(im->data, w, h, c, im->stride, levels[l], 2, &png, &len,
                                                     &why) == 0, "%s: encodes", what);
                    if (png)
                        check_taken(png, len, im, what);
                    free(png);
                }
                unsigned char *png = NULL;
                size_t len = 0;
                imgpu_save_options o = { .quality = 0, .png_level = 1, .no_follow = 0 };
                snprintf(what, sizeof what, "%dx%dx%d content %d stb writer", w, h, c, content);
                CHECKF(imgpu_image_encode(im, IMGPU_FORMAT_PNG, &o, &png, &len) == 0, "%s: encodes", what);
                if (png)
                    check_taken(png, len, im, what);
                free(png);
                imgpu_image_free(im);
            }
}

/* ---- hand-made files ------------------------------------------------------------------- */

enum { F_INTERLACE = 1, F_TRNS = 2, F_CRIT = 4, F_SPLIT = 8, F_PLTE = 16 };

/* A w x h 8-bit PNG of color type ct (depth `depth`) with the filtered stream `raw` deflated
 * (zlib), in two IDATs; flags add a trap; `mangle` edits the zlib stream before it is cut. */
static bytes make_png(int w, int h, int ct, int depth, const unsigned char *raw, size_t raw_len, int flags,
                      void (*mangle)(unsigned char *z, size_t *zn))
{
    bytes b = {NULL, 0, 0};
    png_begin_ex(&b, (uint32_t)w, (uint32_t)h, depth, ct, flags & F_INTERLACE ? 1 : 0);
    if (ct == 3 || flags & F_PLTE) {
        unsigned char pal[768];
        for (int i = 0; i < 768; i++)
            pal[i] = (unsigned char)i;
        png_chunk(&b, "PLTE", pal, 768);
    }
    if (flags & F_TRNS)
        png_chunk(&b, "tRNS", "\0\0\0\0\0\0", ct == 2 ? 6 : 2);
    if (flags & F_CRIT)
        png_chunk(&b, "ABCD", "x", 1);
    uLongf zn = compressBound((uLong)raw_len) + 16;
    unsigned char *z = malloc(zn);
    compress2(z, &zn, raw, (uLong)raw_len, 6);
    size_t zl = zn;
    if (mangle)
        mangle(z, &zl);
    png_chunk(&b, "IDAT", z, zl / 2);
    if (flags & F_SPLIT)
        png_chunk(&b, "tEXt", "a\0b", 3);
    png_chunk(&b, "IDAT", z + zl / 2, zl - zl / 2);
    png_chunk(&b, "IEND", NULL, 0);
    free(z);
    return b;
}

static void bad_adler(unsigned char *z, size_t *zn) { z[*zn - 1] ^= 1; }
static void cut_short(unsigned char *z, size_t *zn) { (void)z; *zn -= 7; }

static int declined(const bytes *b, size_t budget)
{
    int w, h, c;
    unsigned char *px = imgpu__png_decode_fast(b->p, b->n, budget, &w, &h, &c);
    free(px);
    return px == NULL;
}

static void test_declined(void)
{
    enum { W = 9, H = 7, C = 3 };
    unsigned char raw[(W * C + 1) * H], raw16[(2 * W * C + 1) * H];
    for (size_t i = 0; i < sizeof raw; i++)
        raw[i] = i % (W * C + 1) == 0 ? (unsigned char)(i / (W * C + 1) % 5) : (unsigned char)rnd();
    for (size_t i = 0; i < sizeof raw16; i++)
        raw16[i] = i % (2 * W * C + 1) == 0 ? 0 : (unsigned char)rnd();

    bytes ok = make_png(W, H, 2, 8, raw, sizeof raw, 0, NULL);
    CHECKF(!declined(&ok, SIZE_MAX), "the plain hand-made file is taken (so the traps below are what declines)");
    imgpu_image *ref = imgpu_image_load_memory(ok.p, ok.n, "ok.png", NULL);
    CHECKF(ref != NULL, "the plain hand-made file loads");
    CHECKF(declined(&ok, sizeof raw - 1), "a budget below the inflated rows declines");
    free(ok.p);

    struct {
        const char *what;
        bytes b;
        int stb_reads; /* the loader (stb) still reads it, with the same pixels as `ok` */
    } cases[] = {
        {"interlaced", make_png(W, H, 2, 8, raw, sizeof raw, F_INTERLACE, NULL), 0},
        {"tRNS", make_png(W, H, 2, 8, raw, sizeof raw, F_TRNS, NULL), 0},
        {"unknown critical chunk", make_png(W, H, 2, 8, raw, sizeof raw, F_CRIT, NULL), 0},
        {"IDATs split by a tEXt chunk", make_png(W, H, 2, 8, raw, sizeof raw, F_SPLIT, NULL), 1},
        {"a PLTE in a truecolor file", make_png(W, H, 2, 8, raw, sizeof raw, F_PLTE, NULL), 1},
        {"bad Adler-32", make_png(W, H, 2, 8, raw, sizeof raw, 0, bad_adler), 1},
        {"zlib stream cut short", make_png(W, H, 2, 8, raw, sizeof raw, 0, cut_short), 0},
        {"too few inflated bytes", make_png(W, H + 1, 2, 8, raw, sizeof raw, 0, NULL), 0},
        {"too many inflated bytes", make_png(W, H - 1, 2, 8, raw, sizeof raw, 0, NULL), 0},
        {"16-bit", make_png(W, H, 2, 16, raw16, sizeof raw16, 0, NULL), 0},
        {"palette", make_png(W * C, H, 3, 8, raw, sizeof raw, 0, NULL), 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECKF(declined(&cases[i].b, SIZE_MAX), "%s: declined", cases[i].what);
        if (cases[i].stb_reads) {
            imgpu_image *im = imgpu_image_load_memory(cases[i].b.p, cases[i].b.n, cases[i].what, NULL);
            CHECKF(im && ref && same_pixels(im, ref->data, W, H, C), "%s: stb reads it, same pixels: %s",
                  cases[i].what, im ? "" : imgpu_error_message());
            imgpu_image_free(im);
        }
        free(cases[i].b.p);
    }

    unsigned char badf[sizeof raw];
    memcpy(badf, raw, sizeof raw);
    badf[3 * (W * C + 1)] = 5; /* row 3: filter type 5 */
    bytes b = make_png(W, H, 2, 8, badf, sizeof badf, 0, NULL);
    CHECKF(declined(&b, SIZE_MAX), "filter type 5: declined");
    imgpu_image *im = imgpu_image_load_memory(b.p, b.n, "badfilter.png", NULL);
    CHECKF(im == NULL, "filter type 5: the loader refuses it (stb)");
    imgpu_image_free(im);
    free(b.p);
    imgpu_image_free(ref);
}

/* Every 8-bit PNG asset: the same image with the fast path on and off. */
static void test_assets(void)
{
    const char *dir = getenv("IMGPU_ASSETS");
    DIR *d = dir ? opendir(dir) : NULL;
    CHECKF(d != NULL, "IMGPU_ASSETS (%s) can be listed", dir ? dir : "unset");
    if (!d)
        return;
    int taken = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".png"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        imgpu_image *fast = imgpu_image_load(path, NULL);
        imgpu__png_decode_fast_enable(0);
        imgpu_image *ref = imgpu_image_load(path, NULL);
        imgpu__png_decode_fast_enable(1);
        CHECKF(fast && ref, "%s loads", path);
        if (fast && ref) {
            int same = fast->width == ref->width && fast->height == ref->height &&
                       fast->channels == ref->channels && fast->depth == ref->depth;
            for (int y = 0; same && y < ref->height; y++)
                same = !memcmp(imgpu_image_row(fast, y), imgpu_image_row(ref, y),
                               (size_t)ref->width * ref->channels * (ref->depth / 8));
            CHECKF(same, "%s: the same image with the fast path on and off", path);
            if (ref->depth == 8)
                taken++;
        }
        imgpu_image_free(fast);
        imgpu_image_free(ref);
    }
    closedir(d);
    CHECKF(taken >= 5, "at least five 8-bit PNG assets compared (%d)", taken);
}

int main(void)
{
    test_encoded();
    test_declined();
    test_assets();
    printf("test_png_decode: ");
    TEST_MAIN_END();
}
