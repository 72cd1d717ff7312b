/* png_decode.c — the fast path of PNG decoding (see png_decode.h for what it takes and the
 * contract that anything else goes to stb). Traps: the chunk walk re-checks every length
 * against the bytes really there (io.c's scan_png has done so too, but this function is also
 * called on its own by the tests); rows are unfiltered in place, compacting as they go: row y's
 * filtered bytes start y + 1 bytes after where its pixels go, so each byte is read before the
 * byte written over it, and the row above (already compacted) is never overwritten. */
#include "png_decode.h"
#include "png_parallel.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>

static atomic_int s_enabled = 1;

void imgpu__png_decode_fast_enable(int on) { atomic_store(&s_enabled, on ? 1 : 0); }
int imgpu__png_decode_fast_enabled(void) { return atomic_load(&s_enabled); }

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Unfilter one row from src into dst (n bytes; dst <= src, see the top). prev: the row above,
 * unfiltered, or NULL for the first row (zeros). BPP is a constant in each instance so that
 * the compiler can keep the left neighbours in registers. */
static inline int unfilter(int ft, unsigned char *dst, const unsigned char *src, const unsigned char *prev,
                           size_t n, const int bpp)
{
    size_t i;
    switch (ft) {
    case 0:
        memmove(dst, src, n);
        return 0;
    case 1:
        for (i = 0; i < (size_t)bpp && i < n; i++)
            dst[i] = src[i];
        for (; i < n; i++)
            dst[i] = (unsigned char)(src[i] + dst[i - bpp]);
        return 0;
    case 2:
        if (!prev)
            memmove(dst, src, n);
        else
            for (i = 0; i < n; i++)
                dst[i] = (unsigned char)(src[i] + prev[i]);
        return 0;
    case 3:
        if (!prev) {
            for (i = 0; i < (size_t)bpp && i < n; i++)
                dst[i] = src[i];
            for (; i < n; i++)
                dst[i] = (unsigned char)(src[i] + (dst[i - bpp] >> 1));
        } else {
            for (i = 0; i < (size_t)bpp && i < n; i++)
                dst[i] = (unsigned char)(src[i] + (prev[i] >> 1));
            for (; i < n; i++)
                dst[i] = (unsigned char)(src[i] + ((dst[i - bpp] + prev[i]) >> 1));
        }
        return 0;
    case 4:
        if (!prev) { /* paeth(a, 0, 0) is a */
            for (i = 0; i < (size_t)bpp && i < n; i++)
                dst[i] = src[i];
            for (; i < n; i++)
                dst[i] = (unsigned char)(src[i] + dst[i - bpp]);
        } else {
            for (i = 0; i < (size_t)bpp && i < n; i++)
                dst[i] = (unsigned char)(src[i] + prev[i]); /* paeth(0, b, 0) is b */
            for (; i < n; i++)
                dst[i] = (unsigned char)(src[i] + imgpu__png_paeth(dst[i - bpp], prev[i], prev[i - bpp]));
        }
        return 0;
    default:
        return -1;
    }
}

static int unfilter_rows(unsigned char *raw, size_t row, size_t h, const int bpp)
{
    for (size_t y = 0; y < h; y++) {
        const unsigned char *src = raw + y * (row + 1);
        if (unfilter(src[0], raw + y * row, src + 1, y ? raw + (y - 1) * row : NULL, row, bpp) < 0)
            return -1;
    }
    return 0;
}

unsigned char *imgpu__png_decode_fast(const unsigned char *b, size_t n, size_t budget, int *pw, int *ph,
                                      int *pc)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n < 8 + 25 || memcmp(b, sig, 8) != 0 || be32(b + 8) != 13 || memcmp(b + 12, "IHDR", 4) != 0)
        return NULL;
    const uint32_t w = be32(b + 16), h = be32(b + 20);
    const int depth = b[24], ct = b[25];
    const int c = ct == 0 ? 1 : ct == 2 ? 3 : ct == 4 ? 2 : ct == 6 ? 4 : 0;
    /* stb's own limits (STBI_MAX_DIMENSIONS, at most 2^30 samples), so this path takes no
     * image stb would refuse */
    if (depth != 8 || !c || b[26] != 0 || b[27] != 0 || b[28] != 0 || w == 0 || h == 0 || w > (1u << 24) ||
        h > (1u << 24) || (1u << 30) / w / (uint32_t)c < h)
        return NULL;

    /* the chunks: IDAT in one run, then IEND; ancillary chunks are skipped; tRNS (stb turns it
     * into alpha), PLTE (stb checks it even for truecolor) and other critical chunks are stb's */
    size_t pos = 8 + 25, zlen = 0, first = 0;
    int idats = 0, run = 0; /* run: 0 before the IDATs, 1 in them, 2 after */
    for (;;) {
        if (n - pos < 12)
            return NULL;
        const uint32_t len = be32(b + pos);
        const unsigned char *t = b + pos + 4;
        if (len > 0x7fffffffu || n - pos - 12 < len)
            return NULL;
        if (memcmp(t, "IDAT", 4) == 0) {
            if (run == 2)
                return NULL;
            if (run == 0)
                first = pos;
            run = 1;
            zlen += len;
            idats++;
        } else {
            if (run == 1)
                run = 2;
            if (memcmp(t, "IEND", 4) == 0)
                break;
            if (memcmp(t, "tRNS", 4) == 0 || !(t[0] & 0x20))
                return NULL;
        }
        pos += 12 + (size_t)len;
    }
    if (zlen == 0 || zlen > (1u << 30))
        return NULL;

    const size_t row = (size_t)w * (size_t)c;
    if (row + 1 > SIZE_MAX / h || (row + 1) * h > budget || zlen > budget - (row + 1) * h)
        return NULL;
    const size_t raw_len = (row + 1) * h;
    const unsigned char *z = b + first + 8;
    unsigned char *joined = NULL, *raw = NULL;
    if (idats > 1) { /* the zlib stream spans chunks: join their data */
        if (!(joined = malloc(zlen)))
            return NULL;
        size_t at = 0;
        for (size_t p = first; memcmp(b + p + 4, "IDAT", 4) == 0; p += 12 + (size_t)be32(b + p)) {
            memcpy(joined + at, b + p + 8, be32(b + p));
            at += be32(b + p);
        }
        z = joined;
    }
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    if (d && (raw = malloc(raw_len)) != NULL &&
        libdeflate_zlib_decompress(d, z, zlen, raw, raw_len, NULL) != LIBDEFLATE_SUCCESS) {
        free(raw); /* corrupt, short, too long, or a bad Adler-32: stb's to report */
        raw = NULL;
    }
    libdeflate_free_decompressor(d);
    free(joined);
    if (!raw)
        return NULL;

    int rc;
    switch (c) {
    case 1: rc = unfilter_rows(raw, row, h, 1); break;
    case 2: rc = unfilter_rows(raw, row, h, 2); break;
    case 3: rc = unfilter_rows(raw, row, h, 3); break;
    default: rc = unfilter_rows(raw, row, h, 4); break;
    }
    if (rc < 0) {
        free(raw);
        return NULL;
    }
    unsigned char *px = realloc(raw, row * h); /* give back the filter-type bytes */
    *pw = (int)w;
    *ph = (int)h;
    *pc = c;
    return px ? px : raw;
}
