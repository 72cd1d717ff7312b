/* jpeg_scan.c — walks a baseline JPEG's entropy-coded scan without decoding it (jpeg_scan.h).
 *
 * The markers are read as ITU-T T.81 lays them out (B.2): DHT tables are built into canonical
 * codes (C.2), the frame and scan headers give the MCU layout (A.2), and the scan is read code by
 * code (F.2.2): per block one DC code and its extra bits, then AC run/size codes until EOB or the
 * 64th coefficient. Nothing else of the decode is done.
 *
 * The walk needs no coefficient, only where each code ends and how far it moves the block, so
 * one lookup of 12 bits takes as many whole codes (each with its extra bits) as those bits hold:
 * a block's DC code and its first AC codes, or a run of AC codes (walk_many). Codes too long for
 * that are read one at a time, as before. A walk is a chain of dependent lookups; fewer, longer
 * steps make it shorter. */
#include "jpeg_scan.h"

#include <stdint.h>
#include <string.h>

#define LOOK 10   /* bits of the lookup table: most codes of a photo are shorter */
#define PAIR 12   /* bits of the reference walk's two-code lookup (walk_ref) */
#define MB 12     /* bits of the many-code lookups (build_many): 12 beat 11 and 13 here */
#define MANY_FROM 131072   /* bytes after SOS from which the many-code walk pays for its tables
                            * (here: even at 128 KB, 8% faster at 210 KB, 20% at 1 MB) */

typedef struct {
    int defined;
    uint16_t look[1 << LOOK];   /* (length << 8) | symbol for codes of <= LOOK bits; 0: longer */
    uint16_t fast[1 << LOOK];   /* a code and its extra bits together, where they fit in LOOK bits:
                                 * (coefficients it advances << 5) | bits (DC: 1 | bits); 0: look
                                 * it up */
    int32_t maxcode[17];        /* the largest code of each length, -1 where none (C.2, F.2.2.3) */
    int32_t valptr[17];         /* index in val[] of the first code of each length, minus its code */
    uint8_t val[256];
} htab;

typedef struct {
    const unsigned char *b;
    size_t n, pos;
    uint64_t acc;    /* bits, MSB first */
    int bits;        /* how many of acc's top bits are loaded */
    int pad;         /* of those, zero bits added after the data ended (a marker or the end) */
    int at_marker;
    int irregular;   /* FF FF .. FF 00 met inside the data */
} bitrd;

static int build(htab *t, const unsigned char *counts, const unsigned char *vals, int nvals, int dc)
{
    memset(t, 0, sizeof *t);
    memcpy(t->val, vals, (size_t)nvals);
    int32_t code = 0;
    int k = 0;
    for (int len = 1; len <= 16; len++) {
        const int c = counts[len - 1];
        t->valptr[len] = k - code;
        t->maxcode[len] = c ? code + c - 1 : -1;
        for (int i = 0; i < c; i++, k++, code++) {
            if (code >= (1 << len))
                return -1;   /* more codes than the length holds */
            if (dc && vals[k] > 15)
                return -1;   /* libjpeg: JERR_BAD_HUFF_TABLE */
            if (len <= LOOK) {
                const int shift = LOOK - len;
                /* an AC symbol: run (high nibble) and size; 0x00 is EOB (ends the block: 64),
                 * 0xF0 sixteen zeros */
                const int run = vals[k] >> 4, size = dc ? vals[k] : vals[k] & 15;
                const int adv = dc ? 1 : size ? run + 1 : run == 15 ? 16 : 64;
                for (int f = 0; f < 1 << shift; f++) {
                    t->look[(code << shift) | f] = (uint16_t)(len << 8 | vals[k]);
                    if (len + size <= LOOK)
                        t->fast[(code << shift) | f] = (uint16_t)(adv << 5 | (len + size));
                }
            }
        }
        if (code >= (1 << len))   /* the codes overflow the length, or one is all ones (libjpeg) */
            return -1;
        code <<= 1;
    }
    t->defined = 1;
    return 0;
}

/* Loads bytes until at least 57 bits are there; past the data, zero bits counted in pad. Eight
 * bytes at once where none of them is 0xFF (no stuffing, no marker). */
static inline void fill(bitrd *r)
{
    r->acc &= r->bits ? ~0ull << (64 - r->bits) : 0;   /* walk_many's refill leaves bits below */
    if (!r->at_marker && r->pos + 8 <= r->n) {
        uint64_t w;
        memcpy(&w, r->b + r->pos, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        const uint64_t x = ~w;   /* a 0xFF byte of w is a zero byte of x */
        if (!((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull)) {
            const int take = (64 - r->bits) >> 3;
            r->acc |= (w >> (64 - 8 * take)) << (64 - 8 * take - r->bits);
            r->bits += 8 * take;
            r->pos += (size_t)take;
            return;
        }
    }
    while (r->bits <= 56) {
        unsigned c = 0;
        if (!r->at_marker && r->pos < r->n) {
            c = r->b[r->pos];
            if (c == 0xFF) {
                /* FF 00 is a data byte 0xFF; so is FF FF ... FF 00 (not the standard's, but
                 * libjpeg takes it so); FF then anything else, a marker */
                size_t q = r->pos + 1;
                while (q < r->n && r->b[q] == 0xFF)
                    q++;
                if (q < r->n && r->b[q] == 0x00) {
                    r->irregular |= q > r->pos + 1;
                    r->pos = q + 1;
                } else {
                    r->at_marker = 1;   /* a marker (or fill bytes before one): the data ends */
                    c = 0;
                }
            } else {
                r->pos++;
            }
        } else {
            r->at_marker = 1;
        }
        if (r->at_marker)
            r->pad += 8;
        r->acc |= (uint64_t)c << (56 - r->bits);
        r->bits += 8;
    }
}

static inline void skip(bitrd *r, int k)
{
    r->acc <<= k;
    r->bits -= k;
}

/* The next code's symbol, or -1 for a code no table entry matches. fill() first. */
static inline int decode(bitrd *r, const htab *t)
{
    const unsigned e = t->look[r->acc >> (64 - LOOK)];
    if (e) {
        skip(r, (int)(e >> 8));
        return (int)(e & 0xFF);
    }
    int len = LOOK + 1;
    int32_t code = (int32_t)(r->acc >> (64 - len));
    while (code > t->maxcode[len]) {
        len++;
        if (len > 16)
            return -1;
        code = (int32_t)(r->acc >> (64 - len));
    }
    skip(r, len);
    return t->val[t->valptr[len] + code];
}

/* Real bits consumed past the data: pad counts the zero bits still unread at the bottom. */
static inline int overran(const bitrd *r) { return r->bits < r->pad; }

/* The next marker at or after pos (stuffed bytes and fill skipped): its code, or -1. */
static int next_marker(const unsigned char *b, size_t n, size_t *pos)
{
    size_t i = *pos;
    for (;;) {
        const unsigned char *f = i < n ? memchr(b + i, 0xFF, n - i) : NULL;
        if (!f)
            return -1;
        i = (size_t)(f - b);
        while (i + 1 < n && b[i + 1] == 0xFF)
            i++;
        if (i + 1 >= n)
            return -1;
        if (b[i + 1] == 0x00) {
            i += 2;
            continue;
        }
        *pos = i + 2;
        return b[i + 1];
    }
}

/* The code at the top of the 16-bit window w, as decode() reads it: its length, its symbol in
 * *sym; 0 where no code matches. */
static int code_at(const htab *t, unsigned w, int *sym)
{
    const unsigned e = t->look[w >> (16 - LOOK)];
    if (e) {
        *sym = (int)(e & 0xFF);
        return (int)(e >> 8);
    }
    for (int len = LOOK + 1; len <= 16; len++) {
        const int32_t code = (int32_t)(w >> (16 - len));
        if (code <= t->maxcode[len]) {
            *sym = t->val[t->valptr[len] + code];
            return len;
        }
    }
    return 0;
}

/* A many-code table over MB bits: as many whole codes, each with its extra bits, as the MB bits
 * hold, read as the walk reads them one at a time; of a block's start (dc given: its DC code,
 * then AC codes) or of AC codes (dc NULL). Entry: pre << 10 | adv << 4 | bits: the codes take
 * bits bits and move the block's coefficient k by adv (63 once the block surely ended; a block's
 * start counts from k = 1, the DC code's own step not counted); pre: what all but the last code
 * advance. The entry is the walk's own only while k + pre < 64 (no code but the last ends the
 * block), so pre 63 (k >= 1) says: none fits, read one code alone. */
static void build_many(uint16_t *m, const htab *dc, const htab *ac)
{
    for (unsigned i = 0; i < 1u << MB; i++) {
        int pos = 0, tot = 0, pre = 0, used = 0;
        while (pos < MB) {
            const unsigned w = ((i << pos) & ((1u << MB) - 1)) << (16 - MB);
            const int first = dc && !used;
            int sym, len = code_at(first ? dc : ac, w, &sym);
            const int size = first ? sym : sym & 15, run = sym >> 4;
            if (!len || len + size > MB - pos)
                break;   /* no code, or its code or extra bits reach past the MB bits */
            pre = tot;
            tot += first ? 1 : size ? run + 1 : run == 15 ? 16 : 64;
            pos += len + size;
            used++;
            if (tot >= (dc ? 64 : 63))
                break;   /* the block ended (AC: k >= 1 before the first) */
        }
        if (dc)   /* the walk is at coefficient 1 at the start: the DC code's advance not counted */
            tot--, pre = 0;
        m[i] = (uint16_t)(used ? pre << 10 | (tot > 63 ? 63 : tot) << 4 | pos : 63 << 10);
    }
}

/* The AC table's two-code lookup of walk_ref (the walk before the many-code tables) */
static void build_pair(uint16_t *pair, const htab *t)
{
    for (int i = 0; i < 1 << PAIR; i++) {
        const unsigned e1 = t->fast[i >> (PAIR - LOOK)];
        const int b1 = (int)(e1 & 31), a1 = (int)(e1 >> 5);
        if (!e1 || a1 >= 64) {   /* none in LOOK bits, or an EOB: the first code alone */
            pair[i] = (uint16_t)e1;
            continue;
        }
        const unsigned rest = ((unsigned)i << b1) & ((1u << PAIR) - 1);
        const unsigned e2 = t->fast[rest >> (PAIR - LOOK)];
        const int b2 = (int)(e2 & 31);
        pair[i] = (uint16_t)(e2 && b1 + b2 <= PAIR ? (unsigned)(a1 + (int)(e2 >> 5)) << 5 | (unsigned)(b1 + b2) : e1);
    }
}

/* The scan's components as the walks read them */
typedef struct {
    int ns, nblk[4];
    const htab *dc[4], *ac[4];
    const uint16_t *st[4], *am[4];   /* many-code tables: a block's start, its AC codes */
    const uint16_t *pair[4];         /* walk_ref's */
} scan;

/* One AC code read alone: the coefficients it advances, or -1 for a code no entry matches */
static inline int ac_one(bitrd *r, const htab *ta)
{
    const unsigned e = ta->fast[r->acc >> (64 - LOOK)];
    if (e) {
        skip(r, (int)(e & 31));
        return (int)(e >> 5);
    }
    const int t = decode(r, ta);
    if (t < 0)
        return -1;
    const int run0 = t >> 4, size = t & 15;
    skip(r, size);
    return size ? run0 + 1 : run0 == 15 ? 16 : 64;
}

/* The first 0xFF at or after the reader's position (its end where none): the bytes before it are
 * data as they are, read eight at a time */
static size_t clean_end(const bitrd *r)
{
    const unsigned char *f = r->pos < r->n ? memchr(r->b + r->pos, 0xFF, r->n - r->pos) : NULL;
    return f ? (size_t)(f - r->b) : r->n;
}

/* Walks run MCUs from r: -1 when each is inside the data, else the verdict. Each lookup takes
 * as many codes as its table entry holds (a block of a 4K q92 photo: 4.6 lookups for 5.5 codes
 * of 43 bits). Where a block ends is known only after its last lookup, so the next lookup reads
 * both tables that may come next (the block's AC codes, the next block's start) before it is
 * known which one it keeps. */
static int walk_many(bitrd *r, const scan *S, long long run)
{
    const uint16_t *tst[14], *tam[14];   /* a slot's tables, slot c at c, c + nb, c + 2 nb */
    const htab *tdc[10], *tac[10];
    int nb = 0;
    for (int s = 0; s < S->ns; s++)
        for (int blk = 0; blk < S->nblk[s]; blk++, nb++) {
            tdc[nb] = S->dc[s];
            tac[nb] = S->ac[s];
        }
    for (int i = 0, c = 0; i < 14; i++, c = c + 1 == nb ? 0 : c + 1) {
        int s = 0, q = c;
        while (q >= S->nblk[s])
            q -= S->nblk[s++];
        tst[i] = S->st[s];
        tam[i] = S->am[s];
    }
    size_t ce = clean_end(r);
    /* the walk is in slot c's block at coefficient k; k >= 64: it ended, slot c + 1's is next.
     * A, N: the tables of the next lookup in either case; A2, N2: of the one after, once it ends */
    int c = nb - 1, k = 64;
    long long left = run + 1;   /* MCUs, and the one before the first */
    const uint16_t *A = tam[c], *N = tst[c + 1], *A2 = tam[c + 1], *N2 = tst[c + 2];
    for (;;) {
        if (r->pos + 8 <= ce) {   /* eight bytes of data: as many whole bytes as acc takes */
            uint64_t w;
            memcpy(&w, r->b + r->pos, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            w = __builtin_bswap64(w);
#endif
            r->acc |= w >> r->bits;   /* (the bits below the count: the next byte's, as it will load) */
            r->pos += (size_t)((63 - r->bits) >> 3);
            r->bits |= 56;
        } else if (r->bits < 32) {   /* a code and its extra bits: at most 16 + 15 */
            fill(r);
            if (r->pos > ce)
                ce = clean_end(r);
        }
        const int end = k >= 64;
        if (end & (c == nb - 1)) {   /* an MCU is done (or none yet) */
            if (overran(r))
                return IMGPU_SCAN_BAD;   /* it needed bits past the data: short */
            if (--left == 0)
                return -1;
        }
        const unsigned idx = (unsigned)(r->acc >> (64 - MB));
        const unsigned ea = A[idx], en = N[idx];
        const unsigned e = end ? en : ea;
        c = end ? (c + 1 == nb ? 0 : c + 1) : c;
        A = end ? A2 : A;
        N = end ? N2 : N;
        A2 = tam[c + 1];
        N2 = tst[c + 2];
        k = end ? 1 : k;
        if (k + (int)(e >> 10) < 64) {
            skip(r, (int)(e & 15));
            k += (int)(e >> 4 & 63);
        } else if (end) {   /* the DC code alone: a size, then that many bits */
            const int t = decode(r, tdc[c]);
            if (t < 0)
                return IMGPU_SCAN_IRREGULAR;
            skip(r, t);
        } else {
            const int a = ac_one(r, tac[c]);
            if (a < 0)
                return IMGPU_SCAN_IRREGULAR;
            k += a;
        }
    }
}

/* The same walk as the commit before the many-code tables made it (pair tables, a fill before
 * each lookup): the same codes, so the same verdicts, but also the same bytes read ahead of the
 * last code, which decide whether FF FF .. FF 00 there counts as inside the data (irregular).
 * walk_many reads ahead by other amounts; an interval with such bytes in it or just after it is
 * walked again here for that flag. */
static int walk_ref(bitrd *r, const scan *S, long long run)
{
    for (long long m = 0; m < run; m++) {
        for (int s = 0; s < S->ns; s++) {
            const htab *ta = S->ac[s];
            for (int blk = 0; blk < S->nblk[s]; blk++) {
                if (r->bits < 32)
                    fill(r);
                const unsigned ed = S->dc[s]->fast[r->acc >> (64 - LOOK)];
                if (ed) {
                    skip(r, (int)(ed & 31));
                } else {
                    const int t = decode(r, S->dc[s]);
                    if (t < 0)
                        return IMGPU_SCAN_IRREGULAR;
                    skip(r, t);
                }
                for (int k = 1; k < 64;) {
                    if (r->bits < 32)
                        fill(r);
                    /* two codes at once while the first cannot end the block (k + 16 <= 63) */
                    const unsigned p2 = k <= 47 ? S->pair[s][r->acc >> (64 - PAIR)] : 0;
                    if (p2) {
                        skip(r, (int)(p2 & 31));
                        k += (int)(p2 >> 5);
                        continue;
                    }
                    const int a = ac_one(r, ta);
                    if (a < 0)
                        return IMGPU_SCAN_IRREGULAR;
                    k += a;
                }
            }
        }
        if (overran(r))
            return IMGPU_SCAN_BAD;
    }
    return -1;
}

/* FF FF where walk_ref could have read it and walk_many not: met by walk_many, or within the
 * 8 bytes of data (16 raw bytes at most) past its read position that walk_ref may read beyond it */
static int ffff_near(const bitrd *r)
{
    if (r->irregular)
        return 1;
    const size_t e = r->n - r->pos > 17 ? r->pos + 17 : r->n;
    for (size_t j = r->pos; j + 1 < e; j++)
        if (r->b[j] == 0xFF && r->b[j + 1] == 0xFF)
            return 1;
    return 0;
}

int imgpu__jpeg_scan_walk(const unsigned char *b, size_t n, int how)
{
    htab dc[4], ac[4];
    int sof = -1, nc = 0, w = 0, h = 0, ri = 0;
    int cid[4] = {0}, hs[4] = {0}, vs[4] = {0};
    for (int k = 0; k < 4; k++)
        dc[k].defined = ac[k].defined = 0;
    if (n < 4 || b[0] != 0xFF || b[1] != 0xD8)
        return IMGPU_SCAN_OTHER;
    size_t i = 2;
    for (;;) {   /* the markers up to SOS (B.2.4) */
        if (i + 4 > n || b[i] != 0xFF)
            return IMGPU_SCAN_OTHER;
        const int m = b[i + 1];
        if (m == 0xFF) {
            i++;
            continue;
        }
        const size_t L = (size_t)b[i + 2] << 8 | b[i + 3];
        if (L < 2 || i + 2 + L > n)
            return IMGPU_SCAN_OTHER;
        const unsigned char *d = b + i + 4, *e = b + i + 2 + L;
        if (m == 0xDA)
            break;
        if (m == 0xC4) {   /* DHT: one or more tables */
            while (d < e) {
                if (e - d < 17)
                    return IMGPU_SCAN_BAD;
                const int tc = d[0] >> 4, th = d[0] & 15;
                int cnt = 0;
                for (int k = 0; k < 16; k++)
                    cnt += d[1 + k];
                if (tc > 1 || th > 3 || cnt > 256 || e - d < 17 + cnt)
                    return IMGPU_SCAN_BAD;
                /* a bad table is an error only where a scan uses it (libjpeg builds a table
                 * when its scan starts) */
                htab *t = tc ? &ac[th] : &dc[th];
                if (build(t, d + 1, d + 17, cnt, !tc) < 0)
                    t->defined = -1;
                d += 17 + cnt;
            }
        } else if (m == 0xC0 || m == 0xC1) {   /* baseline, extended Huffman */
            if (sof >= 0 || L < 8)
                return IMGPU_SCAN_OTHER;
            sof = m;
            h = d[1] << 8 | d[2];
            w = d[3] << 8 | d[4];
            nc = d[5];
            if (d[0] != 8 || nc < 1 || nc > 4 || L < 8 + 3 * (size_t)nc || w < 1 || h < 1)
                return IMGPU_SCAN_OTHER;
            for (int k = 0; k < nc; k++) {
                cid[k] = d[6 + 3 * k];
                hs[k] = d[7 + 3 * k] >> 4;
                vs[k] = d[7 + 3 * k] & 15;
                if (hs[k] < 1 || hs[k] > 4 || vs[k] < 1 || vs[k] > 4)
                    return IMGPU_SCAN_OTHER;
            }
        } else if ((m >= 0xC2 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) || m == 0xDC) {
            return IMGPU_SCAN_OTHER;   /* progressive, lossless, arithmetic, hierarchical, DNL */
        } else if (m == 0xDD) {
            if (L != 4)
                return IMGPU_SCAN_BAD;
            ri = d[0] << 8 | d[1];
        } else if (m == 0xD9 || (m >= 0xD0 && m <= 0xD8) || m == 0x01) {
            return IMGPU_SCAN_OTHER;   /* markers without a length before the scan */
        }
        i += 2 + L;
    }
    if (sof < 0)
        return IMGPU_SCAN_OTHER;

    /* SOS: which components, which tables (B.2.3) */
    const size_t L = (size_t)b[i + 2] << 8 | b[i + 3];
    const unsigned char *d = b + i + 4;
    const int ns = L >= 3 ? d[0] : 0;
    if (ns < 1 || ns > 4 || L != 6 + 2 * (size_t)ns)
        return IMGPU_SCAN_OTHER;
    if (ns != nc)
        return IMGPU_SCAN_OTHER;   /* a scan of some components: several scans follow */
    const htab *sdc[4], *sac[4];
    int nblk[4], hmax = 1, vmax = 1;
    for (int k = 0; k < nc; k++) {
        hmax = hs[k] > hmax ? hs[k] : hmax;
        vmax = vs[k] > vmax ? vs[k] : vmax;
    }
    int blocks = 0;
    for (int s = 0; s < ns; s++) {
        const int c = d[1 + 2 * s], td = d[2 + 2 * s] >> 4, ta = d[2 + 2 * s] & 15;
        int k = 0;
        while (k < nc && cid[k] != c)
            k++;
        if (k == nc || td > 3 || ta > 3)
            return IMGPU_SCAN_BAD;   /* libjpeg: a bad component id or table number */
        if (dc[td].defined < 0 || ac[ta].defined < 0)
            return IMGPU_SCAN_BAD;     /* a table libjpeg refuses (JERR_BAD_HUFF_TABLE) */
        if (!dc[td].defined || !ac[ta].defined)
            return IMGPU_SCAN_OTHER;   /* no such table: libjpeg-turbo takes the standard's (MJPEG) */
        sdc[s] = &dc[td];
        sac[s] = &ac[ta];
        nblk[s] = ns == 1 ? 1 : hs[k] * vs[k];
        blocks += nblk[s];
    }
    if (blocks > 10 || d[1 + 2 * ns] != 0 || d[2 + 2 * ns] != 63 || d[3 + 2 * ns] != 0)
        return IMGPU_SCAN_OTHER;   /* libjpeg's limit of 10 blocks an MCU; Ss, Se, Ah/Al of a baseline scan */
    /* MCUs (A.2): one component, one block each over its own size; several, interleaved */
    const long long mx = ns == 1 ? (w + 7) / 8 : (w + 8 * hmax - 1) / (8 * hmax);
    const long long my = ns == 1 ? (h + 7) / 8 : (h + 8 * vmax - 1) / (8 * vmax);
    const long long mcus = mx * my;

    /* the many-code tables, one for each distinct table (pair) of the scan; built where the scan
     * holds enough data to pay for them (about 20 us a table), else the reference walk walks */
    const size_t start0 = i + 2 + L;
    const int many = how == 2 || (how == 0 && n - start0 >= MANY_FROM);
    uint16_t st[4][1 << MB], am[4][1 << MB], pair[4][1 << PAIR];
    const htab *amt[4];
    scan S = { ns, {0}, {0}, {0}, {0}, {0}, {0} };
    int nst = 0, nam = 0, paired = 0;
    for (int s = 0; s < ns; s++) {
        S.nblk[s] = nblk[s];
        S.dc[s] = sdc[s];
        S.ac[s] = sac[s];
        int u = 0;
        while (u < s && (sdc[u] != sdc[s] || sac[u] != sac[s]))
            u++;
        if (u < s) {
            S.st[s] = S.st[u];
        } else {
            if (many)
                build_many(st[nst], sdc[s], sac[s]);
            S.st[s] = st[nst++];
        }
        for (u = 0; u < s && sac[u] != sac[s];)
            u++;
        if (u < s) {
            S.am[s] = S.am[u];
            S.pair[s] = S.pair[u];
        } else {
            if (many)
                build_many(am[nam], NULL, sac[s]);
            S.am[s] = am[nam];
            amt[nam] = sac[s];
            S.pair[s] = pair[nam++];
        }
    }

    size_t start = start0;   /* of the interval's data */
    bitrd r = { b, n, start, 0, 0, 0, 0, 0 };
    long long done = 0;
    int rst = 0, irregular = 0;
    while (done < mcus) {
        long long run = ri > 0 ? ri : mcus;
        if (run > mcus - done)
            run = mcus - done;
        int v = many ? walk_many(&r, &S, run) : -1;
        if (v >= 0)
            return v;
        if (!many || ffff_near(&r)) {
            if (!paired) {
                for (int u = 0; u < nam; u++)
                    build_pair(pair[u], amt[u]);
                paired = 1;
            }
            r = (bitrd){ b, n, start, 0, 0, 0, 0, 0 };
            v = walk_ref(&r, &S, run);
            if (v >= 0)
                return v;
        }
        irregular |= r.irregular;
        done += run;
        /* the end of an interval, or of the scan: its marker comes next */
        size_t p = r.pos;
        const int mk = next_marker(b, n, &p);
        if (done < mcus) {
            if (mk != 0xD0 + (rst & 7))
                return IMGPU_SCAN_BAD;   /* a restart marker missing or out of order */
            rst++;
            start = p;
            r = (bitrd){ b, n, p, 0, 0, 0, 0, 0 };
        } else {
            return mk != 0xD9 ? IMGPU_SCAN_OTHER : irregular ? IMGPU_SCAN_IRREGULAR : IMGPU_SCAN_WHOLE;
        }
    }
    return IMGPU_SCAN_OTHER;
}

int imgpu__jpeg_scan_check(const unsigned char *b, size_t n) { return imgpu__jpeg_scan_walk(b, n, 0); }
