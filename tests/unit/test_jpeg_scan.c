/* test_jpeg_scan.c — the scan walker (src/io/jpeg_scan.c, issue 25) against libjpeg-turbo, the
 * reference: JPEGs written by libjpeg here in every layout the GPU route takes (gray, 4:4:4,
 * 4:2:2, 4:2:0, 4:4:0; standard and optimized Huffman tables; with and without restart
 * intervals; sizes not a multiple of the MCU), then
 *   - each whole file: the walker says WHOLE and libjpeg-turbo (imgpu's CPU load, which turns
 *     its warnings into errors) decodes it;
 *   - its scan cut at many points with an EOI after it (the attack of issue 25): the walker
 *     says WHOLE exactly when libjpeg-turbo decodes it without a word, and BAD otherwise;
 *   - single bytes of the scan changed: never BAD or OTHER for a file libjpeg-turbo decodes
 *     without a word (no file the GPU could take is sent away for nothing), except IRREGULAR:
 *     data the standard does not allow (a code no table holds, which libjpeg-turbo's fast path
 *     decodes as 0 silently; 0xFF fill before a stuffed FF 00), no file for a decoder whose
 *     handling of it is unknown;
 *   - progressive and multi-scan files: OTHER (not judged);
 *   - the many-code walk against the reference walk it replaced (imgpu__jpeg_scan_walk: one or
 *     two codes a lookup, each read ahead as before): the same verdict on each file and on
 *     thousands of altered ones (bytes changed, cuts, RST markers, FF FF 00 inside the data and
 *     in junk before the EOI, where how far each walk reads ahead decides the irregular flag).
 * Prints the walker's speed on a large photo-like image beside libjpeg-turbo's decode (not a
 * test of speed: bench/ measures that). */
#include "error.h"
#include "image.h"
#include "io.h"
#include "jpeg_scan.h"
#include "test_util.h"

#include <jpeglib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int w, h, c, hs, vs, quality, optimize, restart, progressive;
} layout;

/* A smooth image with noise and edges, so that the scan has runs, long codes and EOBs. */
static unsigned char *picture(int w, int h, int c, unsigned seed)
{
    unsigned char *p = malloc((size_t)w * h * c);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                seed = seed * 1103515245u + 12345u;
                int v = (x * 255) / (w > 1 ? w - 1 : 1) / 2 + (y * 127) / (h > 1 ? h - 1 : 1) + k * 20;
                if (((x / 13) ^ (y / 9)) & 1)
                    v = 255 - v;
                v += (int)((seed >> 16) % 41) - 20;
                p[((size_t)y * w + x) * c + k] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
    return p;
}

static unsigned char *encode(const layout *L, unsigned seed, size_t *len)
{
    struct jpeg_compress_struct ci;
    struct jpeg_error_mgr jerr;
    unsigned char *out = NULL;
    unsigned long n = 0;
    unsigned char *px = picture(L->w, L->h, L->c, seed);
    ci.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&ci);
    jpeg_mem_dest(&ci, &out, &n);
    ci.image_width = (JDIMENSION)L->w;
    ci.image_height = (JDIMENSION)L->h;
    ci.input_components = L->c;
    ci.in_color_space = L->c == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&ci);
    jpeg_set_quality(&ci, L->quality, TRUE);
    if (L->c == 3) {
        ci.comp_info[0].h_samp_factor = L->hs;
        ci.comp_info[0].v_samp_factor = L->vs;
    }
    ci.optimize_coding = L->optimize ? TRUE : FALSE;
    ci.restart_interval = (unsigned)L->restart;
    if (L->progressive)
        jpeg_simple_progression(&ci);
    jpeg_start_compress(&ci, TRUE);
    while (ci.next_scanline < ci.image_height) {
        JSAMPROW row = px + (size_t)ci.next_scanline * L->w * L->c;
        jpeg_write_scanlines(&ci, &row, 1);
    }
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);
    free(px);
    *len = n;
    return out;
}

/* imgpu's CPU load of the bytes: 1 when it decodes (libjpeg-turbo said nothing), 0 when refused */
static int cpu_decodes(const unsigned char *b, size_t n)
{
    imgpu_image *im = imgpu_image_load_memory(b, n, "scan.jpg", NULL);
    if (!im) {
        imgpu_error_clear();
        return 0;
    }
    imgpu_image_free(im);
    return 1;
}

static size_t sos_data(const unsigned char *b, size_t n)
{
    for (size_t i = 2; i + 4 <= n;) {
        if (b[i] != 0xFF)
            return 0;
        const size_t L = (size_t)b[i + 2] << 8 | b[i + 3];
        if (b[i + 1] == 0xDA)
            return i + 2 + L;
        i += 2 + L;
    }
    return 0;
}

/* xorshift: the altered files of the differential check */
static unsigned long long rs = 88172645463325252ull;
static unsigned rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs >> 11);
}

/* One altered copy of the JPEG b (scan data from s): its length, at most n + 32 */
static size_t alter(const unsigned char *b, size_t n, size_t s, unsigned char *c)
{
    memcpy(c, b, n);
    const size_t data = n - s;
    size_t at = s + rnd() % data, m = n;
    switch (rnd() % 10) {
    case 0:   /* a byte */
        c[at] = (unsigned char)rnd();
        break;
    case 1:   /* a bit */
        c[at] ^= (unsigned char)(1u << (rnd() % 8));
        break;
    case 2:   /* cut, then an EOI */
        c[at] = 0xFF;
        c[at + 1] = 0xD9;
        m = at + 2;
        break;
    case 3:   /* four bytes */
        for (int q = 0; q < 4; q++)
            c[s + rnd() % data] = (unsigned char)rnd();
        break;
    case 4:   /* an RSTn marker */
        memmove(c + at + 2, c + at, n - at);
        c[at] = 0xFF;
        c[at + 1] = (unsigned char)(0xD0 + rnd() % 8);
        m = n + 2;
        break;
    case 5:   /* a header byte (tables, layout) */
        c[2 + rnd() % (s - 2)] = (unsigned char)rnd();
        break;
    default: {   /* FF FF .. 00 (with bytes before it): in the data, or in junk before the EOI */
        const size_t pre = rnd() % 9, ff = 2 + rnd() % 3, ins = pre + ff + 1;
        if (rnd() % 3)
            at = n - 2 - rnd() % 4;
        if (at < s)
            at = s;
        memmove(c + at + ins, c + at, n - at);
        for (size_t q = 0; q < pre; q++)
            c[at + q] = (unsigned char)(1 + rnd() % 254);
        memset(c + at + pre, 0xFF, ff);
        c[at + pre + ff] = 0;
        m = n + ins;
    }
    }
    return m;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* test_jpeg_scan FILE...: the walker's verdict and speed on each file, then nothing else */
static int time_files(int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
        FILE *f = fopen(argv[a], "rb");
        if (!f)
            return 2;
        fseek(f, 0, SEEK_END);
        const size_t n = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        unsigned char *b = malloc(n);
        if (fread(b, 1, n, f) != n)
            return 2;
        fclose(f);
        int v = 0;
        double t0 = now();
        for (int r = 0; r < 5; r++)
            v = imgpu__jpeg_scan_check(b, n);
        const double walk = (now() - t0) / 5;
        t0 = now();
        const int ok = cpu_decodes(b, n);
        printf("%s: %.2f MB: walker %d in %.2f ms (%.0f MB/s); CPU decode %s in %.2f ms\n", argv[a], n / 1e6, v,
               walk * 1e3, n / walk / 1e6, ok ? "ok" : "refused", (now() - t0) * 1e3);
        free(b);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return time_files(argc, argv);
    const layout layouts[] = {
        {97, 61, 1, 1, 1, 90, 0, 0, 0},  {97, 61, 1, 1, 1, 75, 1, 3, 0},  {96, 64, 3, 1, 1, 92, 0, 0, 0},
        {101, 67, 3, 2, 1, 92, 0, 0, 0}, {101, 67, 3, 2, 2, 92, 0, 0, 0}, {101, 67, 3, 1, 2, 85, 1, 0, 0},
        {131, 75, 3, 2, 2, 95, 1, 5, 0}, {64, 48, 3, 2, 2, 60, 0, 1, 0},  {17, 9, 3, 2, 2, 92, 0, 2, 0},
        {1, 1, 3, 2, 2, 92, 0, 0, 0},    {1, 1, 1, 1, 1, 92, 0, 0, 0},    {300, 200, 3, 2, 2, 100, 0, 7, 0},
    };
    int cuts = 0, cut_bad = 0, diff_irregular = 0, diff_n = 0;
    for (size_t li = 0; li < sizeof layouts / sizeof *layouts; li++) {
        const layout *L = &layouts[li];
        size_t n;
        unsigned char *jpg = encode(L, 7u + (unsigned)li, &n);
        CHECKF(imgpu__jpeg_scan_check(jpg, n) == IMGPU_SCAN_WHOLE, "layout %zu: a whole file is WHOLE", li);
        CHECKF(cpu_decodes(jpg, n), "layout %zu: libjpeg-turbo decodes it", li);
        const size_t s = sos_data(jpg, n);
        CHECK(s > 0 && s < n - 2);
        unsigned char *cut = malloc(n + 2);
        /* the scan cut at every byte for small files, at ~400 points for larger ones */
        const size_t data = n - 2 - s, step = data / 400 + 1;
        for (size_t k = 0; k <= data; k += step) {
            memcpy(cut, jpg, s + k);
            cut[s + k] = 0xFF;
            cut[s + k + 1] = 0xD9;
            const int v = imgpu__jpeg_scan_check(cut, s + k + 2), ok = cpu_decodes(cut, s + k + 2);
            CHECKF(imgpu__jpeg_scan_walk(cut, s + k + 2, 2) == v,   /* (v: the reference walk's, small files) */
                   "layout %zu: cut at %zu: the many-code walk and the reference walk agree", li, k);
            CHECKF(ok ? v == IMGPU_SCAN_WHOLE : (v == IMGPU_SCAN_BAD || v == IMGPU_SCAN_IRREGULAR),
                   "layout %zu: cut at %zu of %zu: walker %d, libjpeg-turbo %s", li, k, data, v,
                   ok ? "decodes" : "refuses");
            cuts++;
            cut_bad += v != IMGPU_SCAN_WHOLE;
            /* and the same without the EOI: the file just ends */
            const int v2 = imgpu__jpeg_scan_check(cut, s + k);
            CHECKF(v2 != IMGPU_SCAN_WHOLE, "layout %zu: cut at %zu, no EOI: %d", li, k, v2);
        }
        /* one byte of the scan changed: what libjpeg-turbo decodes is never sent away */
        unsigned seed = 99;
        for (int t = 0; t < 300; t++) {
            memcpy(cut, jpg, n);
            seed = seed * 1103515245u + 12345u;
            const size_t at = s + (seed >> 8) % data;
            cut[at] = (unsigned char)(seed >> 3);
            const int v = imgpu__jpeg_scan_check(cut, n);
            if (cpu_decodes(cut, n))   /* (a code no table holds: decoded as 0 by libjpeg-turbo's fast path) */
                CHECKF(v == IMGPU_SCAN_WHOLE || v == IMGPU_SCAN_IRREGULAR,
                       "layout %zu: byte %zu changed: libjpeg-turbo decodes it, the walker refuses", li, at);
        }
        free(cut);
        /* the walk and the reference walk: the same verdict on each altered file */
        unsigned char *alt = malloc(n + 32);
        int same = 1, verdicts[4] = {0};
        for (int t = 0; t < 600; t++) {
            const size_t m = alter(jpg, n, s, alt);
            unsigned char *exact = malloc(m);   /* exactly m bytes: a read past them is ASan's */
            memcpy(exact, alt, m);
            const int v = imgpu__jpeg_scan_walk(exact, m, 2), vr = imgpu__jpeg_scan_walk(exact, m, 1);
            if (same && v != vr)
                CHECKF(0, "layout %zu, altered file %d: walk %d, reference walk %d", li, t, v, vr);
            same &= v == vr;
            verdicts[vr & 3]++;
            free(exact);
        }
        CHECKF(same, "layout %zu: the walk and the reference walk agree on 600 altered files "
               "(whole %d, bad %d, other %d, irregular %d)", li, verdicts[0], verdicts[1], verdicts[2], verdicts[3]);
        diff_irregular += verdicts[IMGPU_SCAN_IRREGULAR];
        diff_n += 600;
        free(alt);
        free(jpg);
        /* progressive: not judged */
        layout P = *L;
        P.progressive = 1;
        jpg = encode(&P, 3, &n);
        CHECKF(imgpu__jpeg_scan_check(jpg, n) == IMGPU_SCAN_OTHER, "layout %zu progressive: OTHER", li);
        free(jpg);
    }
    printf("cuts: %d, %d of them short (BAD)\n", cuts, cut_bad);
    CHECK(cut_bad > cuts / 2);
    printf("walk against the reference walk: %d altered files, %d of them irregular\n", diff_n, diff_irregular);
    CHECK(diff_irregular > 0);   /* the altered files reach the irregular flag */

    /* hostile headers: no table, a table that overflows, nothing at all */
    static const unsigned char tiny[] = {0xFF, 0xD8, 0xFF, 0xD9};
    CHECK(imgpu__jpeg_scan_check(tiny, sizeof tiny) == IMGPU_SCAN_OTHER);
    CHECK(imgpu__jpeg_scan_check(tiny, 1) == IMGPU_SCAN_OTHER);
    {
        layout L = {64, 64, 3, 2, 2, 90, 0, 0, 0};
        size_t n;
        unsigned char *jpg = encode(&L, 5, &n);
        /* every DHT's 16 counts set to 255: more codes than the lengths hold */
        for (size_t i = 2; i + 4 <= n && jpg[i] == 0xFF && jpg[i + 1] != 0xDA;) {
            const size_t len = (size_t)jpg[i + 2] << 8 | jpg[i + 3];
            if (jpg[i + 1] == 0xC4)
                memset(jpg + i + 5, 0x10, 16);
            i += 2 + len;
        }
        CHECK(imgpu__jpeg_scan_check(jpg, n) == IMGPU_SCAN_BAD);
        free(jpg);
    }

    /* speed, for the record: a 4K-sized 4:2:0 q92 frame */
    {
        layout L = {3840, 2160, 3, 2, 2, 92, 0, 0, 0};
        size_t n;
        unsigned char *jpg = encode(&L, 11, &n);
        double t0 = now();
        int v = 0;
        for (int r = 0; r < 5; r++)
            v |= imgpu__jpeg_scan_check(jpg, n);
        const double walk = (now() - t0) / 5;
        t0 = now();
        CHECK(cpu_decodes(jpg, n));
        const double dec = now() - t0;
        CHECK(v == IMGPU_SCAN_WHOLE);
        printf("3840x2160 q92 4:2:0, %.2f MB: walker %.1f ms (%.0f MB/s); libjpeg-turbo decode %.1f ms\n",
               n / 1e6, walk * 1e3, n / walk / 1e6, dec * 1e3);
        free(jpg);
    }
    TEST_MAIN_END();
}
