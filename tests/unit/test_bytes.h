/* test_bytes.h — building files byte by byte in tests: a growing buffer with little- and
 * big-endian writers, and PNG chunks with their CRC (test_io.c's hostile and damaged files,
 * png_decode.c's files for the fast PNG path). */
#ifndef IMGPU_TEST_BYTES_H
#define IMGPU_TEST_BYTES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

typedef struct bytes {
    unsigned char *p;
    size_t n, cap;
} bytes;

static inline void put(bytes *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}
static inline void put8(bytes *b, unsigned v) { unsigned char c = (unsigned char)v; put(b, &c, 1); }
static inline void put16le(bytes *b, unsigned v) { put8(b, v & 255); put8(b, v >> 8 & 255); }
static inline void put32le(bytes *b, uint32_t v) { put16le(b, v & 0xffff); put16le(b, v >> 16); }
static inline void put16be(bytes *b, unsigned v) { put8(b, v >> 8 & 255); put8(b, v & 255); }
static inline void put32be(bytes *b, uint32_t v) { put16be(b, v >> 16); put16be(b, v & 0xffff); }
static inline void puts_(bytes *b, const char *s) { put(b, s, strlen(s)); }

static inline void png_chunk(bytes *b, const char *type, const void *data, size_t n)
{
    put32be(b, (uint32_t)n);
    size_t at = b->n;
    put(b, type, 4);
    if (n)
        put(b, data, n);
    put32be(b, (uint32_t)crc32(0L, b->p + at, (uInt)(n + 4)));
}

/* The signature and an IHDR chunk (compression 0, filter 0, interlace as given). */
static inline void png_begin_ex(bytes *b, uint32_t w, uint32_t h, int depth, int color, int interlace)
{
    unsigned char ihdr[13];
    put(b, "\x89PNG\r\n\x1a\n", 8);
    ihdr[0] = w >> 24; ihdr[1] = w >> 16 & 255; ihdr[2] = w >> 8 & 255; ihdr[3] = w & 255;
    ihdr[4] = h >> 24; ihdr[5] = h >> 16 & 255; ihdr[6] = h >> 8 & 255; ihdr[7] = h & 255;
    ihdr[8] = (unsigned char)depth; ihdr[9] = (unsigned char)color;
    ihdr[10] = ihdr[11] = 0;
    ihdr[12] = (unsigned char)interlace;
    png_chunk(b, "IHDR", ihdr, 13);
}

static inline void png_begin(bytes *b, uint32_t w, uint32_t h, int depth, int color)
{
    png_begin_ex(b, w, h, depth, color, 0);
}

#endif
