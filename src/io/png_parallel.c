/* png_parallel.c — PNG encoding with every core on one image: rows are cut into strips, each
 * strip is filtered and deflated on its own thread, and the pieces are joined into one valid
 * zlib stream (see png_parallel.h for the contract). Used by io.c when a caller asks for
 * png_threads, and so by `imgpu batch`, where the last large images of a run would otherwise
 * leave most cores idle.
 *
 * Traps: a strip that is not the last must end with Z_FULL_FLUSH, not Z_SYNC_FLUSH alone —
 * both byte-align, but only the full flush promises that the next strip's data (deflated by a
 * different z_stream that never saw this one) is not expected to refer back into it; and no
 * strip but the last may set BFINAL, which deflate() only does for Z_FINISH. The filter of a
 * strip's first row looks at the row above it in the image (not at zeros), exactly as a
 * decoder will.
 */
#include "png_parallel.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#define STRIP_TARGET_BYTES ((size_t)1 << 20)

int imgpu__png_strategy(int level) { return level == 1 ? Z_RLE : Z_DEFAULT_STRATEGY; }

int imgpu__png_compress(unsigned char *dst, unsigned long *dst_len, const unsigned char *src,
                        unsigned long len, int level)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (len > UINT_MAX)
        return Z_BUF_ERROR; /* one deflate call; every caller's data is below 4 GiB */
    int rc = deflateInit2(&zs, level, Z_DEFLATED, 15, 8, imgpu__png_strategy(level));
    if (rc != Z_OK)
        return rc;
    zs.next_in = (Bytef *)(uintptr_t)src;
    zs.avail_in = (uInt)len;
    zs.next_out = dst;
    zs.avail_out = *dst_len > UINT_MAX ? UINT_MAX : (uInt)*dst_len;
    rc = deflate(&zs, Z_FINISH);
    *dst_len = zs.total_out;
    deflateEnd(&zs);
    return rc == Z_STREAM_END ? Z_OK : rc == Z_OK ? Z_BUF_ERROR : rc;
}

int imgpu__png_strip_rows(size_t row_bytes)
{
    size_t r = row_bytes ? (STRIP_TARGET_BYTES + row_bytes - 1) / row_bytes : 1;
    return r < 1 ? 1 : r > INT_MAX ? INT_MAX : (int)r;
}

typedef struct strip {
    int y0, y1;
    unsigned char *z;   /* raw deflate data */
    size_t zlen;
    uLong adler;        /* Adler-32 of the filtered bytes (starting value 1) */
    size_t raw_len;     /* filtered bytes */
    uLong crc;          /* CRC-32 of z (starting value 0) */
    const char *why;
} strip;

typedef struct job {
    const unsigned char *px;
    int w, h, c, level;
    size_t stride, row;   /* row: w*c bytes */
    strip *strips;
    int nstrips;
    atomic_int next;
} job;

/* |byte taken as signed| */
static inline unsigned sabs(unsigned v)
{
    int x = (signed char)(unsigned char)v;
    return (unsigned)(x < 0 ? -x : x);
}

/* The libpng heuristic's score of each of the five filters on one row (the sum of the filtered
 * bytes taken as signed), all in one pass that writes nothing: the loop body is straight-line
 * byte arithmetic (Paeth as selects), which the compiler vectorizes. Sums are kept in 32 bits
 * over pieces of at most 2^24 bytes (each byte adds at most 128) and added up in 64. */
static void filter_scores(const unsigned char *cur, const unsigned char *prev, size_t n, int bpp,
                          unsigned long long score[5])
{
    for (int f = 0; f < 5; f++)
        score[f] = 0;
    size_t i = 0;
    for (; i < (size_t)bpp && i < n; i++) { /* left neighbours a and c are 0 */
        const unsigned x = cur[i], b = prev[i];
        score[0] += sabs(x);
        score[1] += sabs(x);
        score[2] += sabs(x - b);
        score[3] += sabs(x - (b >> 1));
        score[4] += sabs(x - b); /* paeth(0, b, 0) is b */
    }
    while (i < n) {
        const size_t end = n - i > ((size_t)1 << 24) ? i + ((size_t)1 << 24) : n;
        uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0;
        for (; i < end; i++) {
            const int x = cur[i], a = cur[i - bpp], b = prev[i], c = prev[i - bpp];
            const int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
            const int pr = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
            s0 += sabs((unsigned)x);
            s1 += sabs((unsigned)(x - a));
            s2 += sabs((unsigned)(x - b));
            s3 += sabs((unsigned)(x - ((a + b) >> 1)));
            s4 += sabs((unsigned)(x - pr));
        }
        score[0] += s0;
        score[1] += s1;
        score[2] += s2;
        score[3] += s3;
        score[4] += s4;
    }
}

/* Filter one row with filter f into dst (n bytes, no filter-type byte). */
static void filter_row(int f, unsigned char *dst, const unsigned char *cur, const unsigned char *prev,
                       size_t n, int bpp)
{
    size_t i;
    switch (f) {
    case 0:
        memcpy(dst, cur, n);
        break;
    case 1:
        for (i = 0; i < (size_t)bpp && i < n; i++)
            dst[i] = cur[i];
        for (; i < n; i++)
            dst[i] = (unsigned char)(cur[i] - cur[i - bpp]);
        break;
    case 2:
        for (i = 0; i < n; i++)
            dst[i] = (unsigned char)(cur[i] - prev[i]);
        break;
    case 3:
        for (i = 0; i < (size_t)bpp && i < n; i++)
            dst[i] = (unsigned char)(cur[i] - (prev[i] >> 1));
        for (; i < n; i++)
            dst[i] = (unsigned char)(cur[i] - ((cur[i - bpp] + prev[i]) >> 1));
        break;
    default:
        for (i = 0; i < (size_t)bpp && i < n; i++)
            dst[i] = (unsigned char)(cur[i] - prev[i]); /* paeth(0, b, 0) is b */
        for (; i < n; i++)
            dst[i] = (unsigned char)(cur[i] - imgpu__png_paeth(cur[i - bpp], prev[i], prev[i - bpp]));
        break;
    }
}

static void do_strip(job *j, strip *s)
{
    const size_t n = j->row, line = n + 1;
    const size_t raw = line * (size_t)(s->y1 - s->y0);
    unsigned char *buf = malloc(raw), *zero = NULL;
    z_stream zs;
    int zinit = 0;
    if (!buf) {
        s->why = "out of memory";
        goto done;
    }
    if (s->y0 == 0 && !(zero = calloc(1, n))) {
        s->why = "out of memory";
        goto done;
    }
    for (int y = s->y0; y < s->y1; y++) {
        const unsigned char *cur = j->px + (size_t)y * j->stride;
        const unsigned char *prev = y ? cur - j->stride : zero;
        unsigned char *dst = buf + line * (size_t)(y - s->y0);
        int bf = 0;
        if (j->level != 0) { /* level 0 stores: the cheapest filter to compute does as well as any */
            unsigned long long score[5];
            filter_scores(cur, prev, n, j->c, score);
            for (int f = 1; f < 5; f++) /* the first of equal scores, as before */
                if (score[f] < score[bf])
                    bf = f;
        }
        filter_row(bf, dst + 1, cur, prev, n, j->c);
        dst[0] = (unsigned char)bf;
    }
    s->raw_len = raw;
    s->adler = adler32(adler32(0L, Z_NULL, 0), buf, (uInt)raw);

    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, j->level, Z_DEFLATED, -15, 8, imgpu__png_strategy(j->level)) != Z_OK) {
        s->why = "zlib initialization failed";
        goto done;
    }
    zinit = 1;
    size_t cap = deflateBound(&zs, (uLong)raw) + 64;
    if (!(s->z = malloc(cap))) {
        s->why = "out of memory";
        goto done;
    }
    const int last = s->y1 == j->h;
    zs.next_in = buf;
    zs.avail_in = (uInt)raw;
    for (;;) {
        zs.next_out = s->z + s->zlen;
        zs.avail_out = (uInt)(cap - s->zlen);
        int rc = deflate(&zs, last ? Z_FINISH : Z_FULL_FLUSH);
        s->zlen = cap - zs.avail_out;
        if (rc == Z_STREAM_END || (!last && rc == Z_OK && zs.avail_out > 0 && zs.avail_in == 0))
            break;
        if ((rc != Z_OK && rc != Z_BUF_ERROR) || zs.avail_out > 0) {
            s->why = "zlib compression failed";
            goto done;
        }
        /* Out of room (the bound does not count the flush marker): grow and go on. */
        unsigned char *p = realloc(s->z, cap * 2);
        if (!p) {
            s->why = "out of memory";
            goto done;
        }
        s->z = p;
        cap *= 2;
    }
    s->crc = crc32(crc32(0L, Z_NULL, 0), s->z, (uInt)s->zlen);
done:
    if (zinit)
        deflateEnd(&zs);
    free(buf);
    free(zero);
}

static void *worker(void *arg)
{
    job *j = arg;
    for (;;) {
        int i = atomic_fetch_add(&j->next, 1);
        if (i >= j->nstrips)
            break;
        do_strip(j, &j->strips[i]);
    }
    return NULL;
}

static unsigned char *put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
    return p + 4;
}

/* A chunk without data (the caller fills it in); returns where the data goes. */
static unsigned char *chunk_head(unsigned char *p, uint32_t len, const char *type)
{
    p = put32(p, len);
    memcpy(p, type, 4);
    return p + 4;
}

int imgpu__png_encode_parallel(const unsigned char *pixels, int w, int h, int c, size_t stride,
                               int level, int threads, unsigned char **out, size_t *out_len,
                               const char **why)
{
    static const unsigned char color_type[5] = {0, 0, 4, 2, 6};
    job j;
    pthread_t *tids = NULL;
    int started = 0, rc = -1;
    unsigned char *o = NULL;

    memset(&j, 0, sizeof j);
    if (w < 1 || h < 1 || c < 1 || c > 4 || level < 0 || level > 9 || (size_t)w > (SIZE_MAX - 1) / (size_t)c ||
        stride < (size_t)w * (size_t)c) {
        *why = "invalid image";
        return -1;
    }
    j.px = pixels;
    j.w = w;
    j.h = h;
    j.c = c;
    j.level = level;
    j.stride = stride;
    j.row = (size_t)w * (size_t)c;
    if (j.row + 1 > (size_t)UINT_MAX / 2) {
        *why = "rows too long for one deflate call";
        return -1;
    }
    /* a strip's filtered bytes go to zlib in one call: a strip is ~1 MiB, or one row */
    int rows = imgpu__png_strip_rows(j.row + 1);
    j.nstrips = (int)(((size_t)h + (size_t)rows - 1) / (size_t)rows);
    if (!(j.strips = calloc((size_t)j.nstrips, sizeof *j.strips))) {
        *why = "out of memory";
        return -1;
    }
    for (int i = 0; i < j.nstrips; i++) {
        j.strips[i].y0 = i * rows;
        j.strips[i].y1 = i == j.nstrips - 1 ? h : (i + 1) * rows;
    }
    atomic_init(&j.next, 0);
    int extra = threads - 1 < j.nstrips - 1 ? threads - 1 : j.nstrips - 1;
    if (extra > 0 && (tids = malloc((size_t)extra * sizeof *tids)))
        for (; started < extra; started++)
            if (pthread_create(&tids[started], NULL, worker, &j) != 0)
                break; /* fewer helpers is slower, not wrong */
    worker(&j);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);

    size_t total = 8 + 25 + 12;
    for (int i = 0; i < j.nstrips; i++) {
        if (j.strips[i].why) {
            *why = j.strips[i].why;
            goto done;
        }
        if (j.strips[i].zlen > 0x7fffffffu - 16) {
            *why = "a strip's deflate data is too large for one PNG chunk";
            goto done;
        }
        total += 12 + j.strips[i].zlen;
    }
    total += 2 + 4; /* zlib header and Adler-32 */
    if (!(o = malloc(total))) {
        *why = "out of memory";
        goto done;
    }

    unsigned char *p = o;
    memcpy(p, "\x89PNG\r\n\x1a\n", 8);
    p += 8;
    unsigned char *d = chunk_head(p, 13, "IHDR");
    d = put32(d, (uint32_t)w);
    d = put32(d, (uint32_t)h);
    d[0] = 8;                /* bit depth */
    d[1] = color_type[c];
    d[2] = d[3] = d[4] = 0;  /* deflate, adaptive filtering, no interlace */
    d = put32(d + 5, (uint32_t)crc32(crc32(0L, Z_NULL, 0), p + 4, 17));
    p = d;

    /* zlib header: 32K window, FLEVEL as zlib itself would set it, FCHECK making it % 31 == 0 */
    const unsigned flevel = level < 2 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3;
    unsigned char zh[2] = {0x78, (unsigned char)(flevel << 6)};
    zh[1] = (unsigned char)(zh[1] + 31 - ((zh[0] << 8) + zh[1]) % 31);
    uLong adler = 1;
    for (int i = 0; i < j.nstrips; i++) {
        strip *s = &j.strips[i];
        const int first = i == 0, last = i == j.nstrips - 1;
        size_t len = s->zlen + (first ? 2 : 0) + (last ? 4 : 0);
        d = chunk_head(p, (uint32_t)len, "IDAT");
        uLong crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)"IDAT", 4); /* type + data */
        if (first) {
            memcpy(d, zh, 2);
            crc = crc32(crc, zh, 2);
            d += 2;
        }
        memcpy(d, s->z, s->zlen);
        crc = crc32_combine(crc, s->crc, (z_off_t)s->zlen);
        d += s->zlen;
        adler = adler32_combine(adler, s->adler, (z_off_t)s->raw_len);
        if (last) {
            put32(d, (uint32_t)adler);
            crc = crc32(crc, d, 4);
            d += 4;
        }
        p = put32(d, (uint32_t)crc);
    }
    d = chunk_head(p, 0, "IEND");
    p = put32(d, (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)"IEND", 4));
    *out = o;
    *out_len = (size_t)(p - o);
    o = NULL;
    rc = 0;
done:
    free(o);
    for (int i = 0; i < j.nstrips; i++)
        free(j.strips[i].z);
    free(j.strips);
    free(tids);
    return rc;
}
