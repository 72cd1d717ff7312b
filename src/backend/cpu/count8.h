/* count8.h — counting 8-bit samples into four histograms (equalize.c, histogram.c).
 *
 * Four histograms, one per sample of each group of four, summed at the end: neighbouring
 * samples of a photo often share a value, and one histogram would make each increment wait for
 * the one before it (a store-to-load dependency through the same counter). The counts are the
 * same integers either way. */
#ifndef IMGPU_CPU_COUNT8_H
#define IMGPU_CPU_COUNT8_H

#include <stdint.h>
#include <string.h>

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Eight samples p[0..7] counted with one load, taken apart by shifts (byte i of v is p[i]),
 * spread over the four histograms as the four-at-a-time loops spread them. */
static inline void imgpu__count8(uint32_t h4[4][256], const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    h4[0][v & 255]++;
    h4[1][(v >> 8) & 255]++;
    h4[2][(v >> 16) & 255]++;
    h4[3][(v >> 24) & 255]++;
    h4[0][(v >> 32) & 255]++;
    h4[1][(v >> 40) & 255]++;
    h4[2][(v >> 48) & 255]++;
    h4[3][v >> 56]++;
}
#endif

/* The n contiguous samples p[0..n) into h4 (eight a load where the byte order allows). */
static inline void imgpu__count_run(uint32_t h4[4][256], const uint8_t *p, int n)
{
    int x = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; x + 8 <= n; x += 8)
        imgpu__count8(h4, p + x);
#endif
    for (; x + 4 <= n; x += 4) {
        h4[0][p[x]]++;
        h4[1][p[x + 1]]++;
        h4[2][p[x + 2]]++;
        h4[3][p[x + 3]]++;
    }
    for (; x < n; x++)
        h4[0][p[x]]++;
}

#endif
