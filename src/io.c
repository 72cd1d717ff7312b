/* io.c — loading and saving images: the file handling and every check stb_image does not do.
 * Load reads the whole file into memory (size-capped), names the format from its magic bytes
 * (never the extension), walks the file's structure itself to find the dimensions and to
 * prove that the pixel data is all there (stb v2.27 happily decodes a truncated TGA, BMP, PNM
 * or JPEG into uninitialized or made-up pixels), refuses what is too large, 16-bit, or not a
 * supported format, and only then lets stb_impl.c decode it under a memory budget. Save
 * encodes into memory, then writes a temp file beside the target, checks every write, flush,
 * fsync and close, and renames it over the target, so a failure never leaves a partial file
 * or harms an existing one. Messages are "cannot read 'PATH': REASON" and
 * "cannot write 'PATH': REASON".
 */
#include "io.h"
#include "error.h"
#include "png_decode.h"
#include "png_parallel.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <poll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

/* ---- format names ---------------------------------------------------------------------- */

imgpu_format imgpu_format_from_path(const char *path)
{
    static const struct {
        const char *ext;
        imgpu_format f;
    } table[] = {
        { "png", IMGPU_FORMAT_PNG }, { "jpg", IMGPU_FORMAT_JPEG }, { "jpeg", IMGPU_FORMAT_JPEG },
        { "jpe", IMGPU_FORMAT_JPEG }, { "bmp", IMGPU_FORMAT_BMP }, { "tga", IMGPU_FORMAT_TGA },
        { "pnm", IMGPU_FORMAT_PNM }, { "pgm", IMGPU_FORMAT_PNM }, { "ppm", IMGPU_FORMAT_PNM },
    };
    if (!path)
        return IMGPU_FORMAT_UNKNOWN;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base)   /* "png" and ".png" are names, not extensions */
        return IMGPU_FORMAT_UNKNOWN;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcasecmp(dot + 1, table[i].ext) == 0)
            return table[i].f;
    return IMGPU_FORMAT_UNKNOWN;
}

const char *imgpu_format_name(imgpu_format f)
{
    switch (f) {
    case IMGPU_FORMAT_PNG: return "PNG";
    case IMGPU_FORMAT_JPEG: return "JPEG";
    case IMGPU_FORMAT_BMP: return "BMP";
    case IMGPU_FORMAT_TGA: return "TGA";
    case IMGPU_FORMAT_PNM: return "PNM";
    default: return "unknown";
    }
}

/* ---- small readers ------------------------------------------------------------------- */

static uint32_t be16(const unsigned char *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t le16(const unsigned char *p) { return (uint32_t)p[1] << 8 | p[0]; }
static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* ---- sniffing ------------------------------------------------------------------------ */

/* TGA has no magic number; this is stb's own plausibility test (stbi__tga_test), so a file
 * we call TGA is one stb will also decode as TGA. */
static int tga_plausible(const unsigned char *b, size_t n)
{
    if (n < 18)
        return 0;
    int cmap = b[1], type = b[2], bpp = b[16];
    if (cmap > 1)
        return 0;
    if (cmap == 1) {
        if (type != 1 && type != 9)
            return 0;
        int pbits = b[7];
        if (pbits != 8 && pbits != 15 && pbits != 16 && pbits != 24 && pbits != 32)
            return 0;
        if (bpp != 8 && bpp != 16)
            return 0;
    } else if (type != 2 && type != 3 && type != 10 && type != 11) {
        return 0;
    }
    if (le16(b + 12) < 1 || le16(b + 14) < 1)
        return 0;
    return bpp == 8 || bpp == 15 || bpp == 16 || bpp == 24 || bpp == 32;
}

/* Formats that are recognised only to be refused by name. */
static const struct {
    size_t off, len;
    const char *magic;
    const char *name;
} s_refused_formats[] = {
    { 0, 10, "#?RADIANCE", "Radiance HDR" },
    { 0, 6, "#?RGBE", "Radiance HDR" },
    { 0, 6, "GIF87a", "GIF" },
    { 0, 6, "GIF89a", "GIF" },
    { 0, 4, "8BPS", "PSD" },
    { 0, 4, "\x53\x80\xf6\x34", "Softimage PIC" },
    { 0, 4, "II*\0", "TIFF" },
    { 0, 4, "MM\0*", "TIFF" },
    { 8, 4, "WEBP", "WebP" },
    { 0, 4, "qoif", "QOI" },
    { 0, 4, "\x76\x2f\x31\x01", "OpenEXR" },
    { 0, 4, "\xff\x4f\xff\x51", "JPEG 2000" },
    { 4, 8, "jP  \r\n\x87\n", "JPEG 2000" },
    { 0, 2, "\xff\x0a", "JPEG XL" },
    { 4, 8, "JXL \r\n\x87\n", "JPEG XL" },
    { 4, 8, "ftypavif", "AVIF" },
    { 4, 8, "ftypavis", "AVIF" },
    { 4, 8, "ftypheic", "HEIF" },
    { 4, 8, "ftypheix", "HEIF" },
    { 4, 8, "ftypmif1", "HEIF" },
    { 0, 4, "DDS ", "DDS" },
    { 0, 4, "\0\0\1\0", "ICO" },
    { 0, 2, "P1", "ASCII PNM (P1)" },
    { 0, 2, "P2", "ASCII PNM (P2)" },
    { 0, 2, "P3", "ASCII PNM (P3)" },
    { 0, 2, "P4", "1-bit PBM (P4)" },
    { 0, 2, "P7", "PAM (P7)" },
    { 0, 2, "PF", "PFM" },
    { 0, 2, "Pf", "PFM" },
};

static imgpu_format sniff(const unsigned char *b, size_t n, const char **refused)
{
    *refused = NULL;
    if (n >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0)
        return IMGPU_FORMAT_PNG;
    if (n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
        return IMGPU_FORMAT_JPEG;
    if (n >= 2 && b[0] == 'B' && b[1] == 'M')
        return IMGPU_FORMAT_BMP;
    if (n >= 2 && b[0] == 'P' && (b[1] == '5' || b[1] == '6'))
        return IMGPU_FORMAT_PNM;
    for (size_t i = 0; i < sizeof s_refused_formats / sizeof s_refused_formats[0]; i++) {
        size_t off = s_refused_formats[i].off, len = s_refused_formats[i].len;
        if (n >= off + len && memcmp(b + off, s_refused_formats[i].magic, len) == 0 &&
            (off != 8 || memcmp(b, "RIFF", 4) == 0)) {
            *refused = s_refused_formats[i].name;
            return IMGPU_FORMAT_UNKNOWN;
        }
    }
    if (tga_plausible(b, n))
        return IMGPU_FORMAT_TGA;
    return IMGPU_FORMAT_UNKNOWN;
}

/* ---- structure scans ----------------------------------------------------------------- */

/* What a scan learns. A header error (returned) is reported at once; a data error is kept
 * and reported after the size and depth checks, so a huge header gets the clearer
 * "--max-pixels" message rather than "truncated". */
typedef struct scan {
    uint64_t w, h;
    const char *data_error;
    int pnm_maxval;
    int jpeg_scans;
    int jpeg_progressive;
    unsigned char jpeg_huff[2][4];   /* [DC=0/AC=1][table id]: defined by a DHT so far */
    char buf[96];
} scan;

/* Chunks the PNG specification allows at most once. A repeat is refused as libpng refuses
 * it: a decoder that sizes a buffer from the first PLTE must never meet a second one (two
 * PLTE chunks once overflowed a heap buffer here, tests/fuzz-regress/decode/). */
static const char s_png_once[][5] = {
    "IHDR", "PLTE", "tRNS", "cHRM", "gAMA", "iCCP", "sBIT", "sRGB", "cICP", "mDCV",
    "cLLI", "bKGD", "hIST", "pHYs", "tIME", "eXIf", "acTL",
};
#define IMGPU_PNG_ONCE (sizeof s_png_once / sizeof s_png_once[0])

static const char *scan_png(const unsigned char *b, size_t n, scan *s)
{
    size_t pos = 8;
    int have_ihdr = 0;
    unsigned char seen[IMGPU_PNG_ONCE] = { 0 };
    for (;;) {
        if (n - pos < 8) {
            s->data_error = "truncated PNG data";
            break;
        }
        uint32_t len = be32(b + pos);
        const unsigned char *type = b + pos + 4;
        if (len > 0x7fffffffu) {
            s->data_error = "corrupt PNG data (bad chunk length)";
            break;
        }
        /* Checking every length against the bytes that are really there is what keeps stb
         * from reallocating its IDAT buffer to whatever a chunk header claims. */
        if (n - pos - 8 < (size_t)len + 4) {
            s->data_error = "truncated PNG data";
            break;
        }
        int critical = !(type[0] & 0x20);
        if (critical) {
            uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), type, len + 4);
            if (crc != be32(b + pos + 8 + len)) {
                snprintf(s->buf, sizeof s->buf, "corrupt PNG data (CRC error in %.4s chunk)",
                         (const char *)type);
                s->data_error = s->buf;
                break;
            }
        }
        for (size_t i = 0; i < IMGPU_PNG_ONCE; i++) {
            if (memcmp(type, s_png_once[i], 4) != 0)
                continue;
            if (seen[i]++ && i > 0) {
                snprintf(s->buf, sizeof s->buf, "corrupt PNG data (more than one %.4s chunk)",
                         (const char *)type);
                s->data_error = s->buf;
            }
            break;
        }
        if (s->data_error)
            break;
        if (memcmp(type, "PLTE", 4) == 0 && (len == 0 || len > 768 || len % 3 != 0)) {
            s->data_error = "corrupt PNG data (bad PLTE length)";
            break;
        }
        if (memcmp(type, "IHDR", 4) == 0) {
            if (len != 13 || have_ihdr)
                return "corrupt PNG header";
            have_ihdr = 1;
            s->w = be32(b + pos + 8);
            s->h = be32(b + pos + 12);
        } else if (memcmp(type, "IEND", 4) == 0) {
            break;
        } else if (critical && memcmp(type, "PLTE", 4) != 0 && memcmp(type, "IDAT", 4) != 0 &&
                   memcmp(type, "CgBI", 4) != 0) {
            snprintf(s->buf, sizeof s->buf, "unsupported PNG chunk '%.4s'", (const char *)type);
            s->data_error = s->buf;
            break;
        }
        pos += 12 + (size_t)len;
    }
    if (!have_ihdr)
        return s->data_error && strncmp(s->data_error, "trunc", 5) == 0 ? "truncated PNG header"
                                                                        : "corrupt PNG header";
    return NULL;
}

static int jpeg_is_sof(int m)
{
    return m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc;
}

/* Walks the markers to the end-of-image marker. stb fills a JPEG that ends early with
 * made-up data instead of failing, so a missing EOI is the only sign of a truncated file.
 * Segments are skipped by their length, so an EOI inside an embedded thumbnail (APP1) does
 * not count; bytes after the EOI (some cameras append data) are allowed. */
static const char *scan_jpeg(const unsigned char *b, size_t n, scan *s)
{
    size_t pos = 2;
    int have_sof = 0;
    for (;;) {
        /* stb skips junk between segments; so do we. */
        while (pos < n && b[pos] != 0xff)
            pos++;
        while (pos < n && b[pos] == 0xff)
            pos++;
        if (pos >= n) {
            s->data_error = "truncated JPEG data";
            break;
        }
        int m = b[pos++];
        if (m == 0xd9)
            break;
        if (m == 0x00 || m == 0x01 || m == 0xd8 || (m >= 0xd0 && m <= 0xd7))
            continue;
        if (n - pos < 2) {
            s->data_error = "truncated JPEG data";
            break;
        }
        size_t len = be16(b + pos);
        if (len < 2) {
            s->data_error = "corrupt JPEG data (bad segment length)";
            break;
        }
        if (n - pos < len) {
            s->data_error = "truncated JPEG data";
            break;
        }
        if (m == 0xc4) {
            /* stb v2.27 writes a table's 16 code counts into 257-entry arrays without checking
             * their sum (up to 4080): a memory-safety bug, so check each table here. */
            size_t p = pos + 2, end = pos + len;
            while (p < end && !s->data_error) {
                size_t sum = 0;
                if (end - p < 17 || (b[p] >> 4) > 1 || (b[p] & 15) > 3) {
                    s->data_error = "corrupt JPEG data (bad Huffman table)";
                    break;
                }
                for (int i = 1; i <= 16; i++)
                    sum += b[p + i];
                if (sum > 256 || sum > end - p - 17)
                    s->data_error = "corrupt JPEG data (bad Huffman table)";
                if (!s->data_error)
                    s->jpeg_huff[b[p] >> 4][b[p] & 15] = 1;
                p += 17 + sum;
            }
            if (s->data_error)
                break;
        }
        if (jpeg_is_sof(m) && !have_sof) {
            if (len < 8)
                return "corrupt JPEG header";
            have_sof = 1;
            s->jpeg_progressive = m == 0xc2;
            s->h = be16(b + pos + 3);
            s->w = be16(b + pos + 5);
        }
        pos += len;
        if (m == 0xda && ++s->jpeg_scans > IMGPU_MAX_JPEG_SCANS) {
            snprintf(s->buf, sizeof s->buf, "JPEG has more than %d scans (refused: each scan is "
                     "another pass over the whole image)", IMGPU_MAX_JPEG_SCANS);
            return s->buf;
        }
        if (m == 0xda) {
            /* Every Huffman table the scan will use must have been defined: stb v2.27 decodes
             * with an undefined one from uninitialized memory and indexes far out of its
             * arrays. Baseline scans use DC and AC tables, progressive DC first scans the DC
             * table, AC scans the AC table, DC refinement scans none. */
            const unsigned char *sos = b + pos - len + 2;
            size_t ns = sos[0];
            if (len < 2 + 1 + 2 * ns + 3) {
                s->data_error = "corrupt JPEG data (bad scan header)";
                break;
            }
            int ss = sos[1 + 2 * ns], ah = sos[3 + 2 * ns] >> 4;
            int need_dc = !s->jpeg_progressive || (ss == 0 && ah == 0);
            int need_ac = !s->jpeg_progressive || ss != 0;
            for (size_t i = 0; i < ns; i++) {
                int td = sos[2 + 2 * i] >> 4, ta = sos[2 + 2 * i] & 15;
                if ((need_dc && (td > 3 || !s->jpeg_huff[0][td])) ||
                    (need_ac && (ta > 3 || !s->jpeg_huff[1][ta])))
                    s->data_error = "corrupt JPEG data (scan uses an undefined Huffman table)";
            }
            if (s->data_error)
                break;
            /* Entropy-coded data: FF 00 is a stuffed byte, FF D0..D7 a restart marker,
             * anything else after FF ends the scan. */
            for (;;) {
                const unsigned char *ff = memchr(b + pos, 0xff, n - pos);
                if (!ff || (size_t)(ff - b) + 1 >= n) {
                    pos = n;
                    break;
                }
                pos = (size_t)(ff - b);
                int c = b[pos + 1];
                if (c == 0x00 || (c >= 0xd0 && c <= 0xd7))
                    pos += 2;
                else if (c == 0xff)
                    pos += 1;
                else
                    break;
            }
            if (pos >= n) {
                s->data_error = "truncated JPEG data";
                break;
            }
        }
    }
    if (!have_sof)
        return s->data_error && strncmp(s->data_error, "trunc", 5) == 0 ? "truncated JPEG header"
                                                                        : "corrupt JPEG header";
    if (s->w == 0 || s->h == 0)
        return "corrupt JPEG header (zero size)";
    return NULL;
}

/* The layout below is stb's (stbi__bmp_parse_header / stbi__bmp_load), not the spec's,
 * because what matters is which bytes stb will read. */
static const char *scan_bmp(const unsigned char *b, size_t n, scan *s)
{
    if (n < 18)
        return "truncated BMP header";
    uint32_t offset = le32(b + 10), hsz = le32(b + 14);
    if (hsz != 12 && hsz != 40 && hsz != 56 && hsz != 108 && hsz != 124)
        return "unsupported BMP header version";
    if (n < 14 + hsz)
        return "truncated BMP header";
    int64_t w, h;
    uint32_t bpp, compress = 0;
    if (hsz == 12) {
        w = le16(b + 18);
        h = le16(b + 20);
        bpp = le16(b + 24);
    } else {
        w = (int32_t)le32(b + 18);
        h = (int32_t)le32(b + 22);
        bpp = le16(b + 28);
        compress = le32(b + 30);
    }
    if (h < 0)   /* top-down rows */
        h = -h;
    if (w <= 0 || h == 0)
        return "corrupt BMP header (bad size)";
    s->w = (uint64_t)w;
    s->h = (uint64_t)h;
    if (compress == 1 || compress == 2)
        return "RLE-compressed BMP images are not supported";
    if (compress >= 4)
        return "BMP images with embedded JPEG/PNG data are not supported";
    if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32)
        return "unsupported BMP bit depth";
    size_t header_end = 14 + hsz;
    if (hsz == 40 && compress == 3)
        header_end += 12;   /* the three bit masks follow a 40-byte header */
    if (offset < header_end)
        return "corrupt BMP header (pixel data overlaps the header)";

    uint64_t row = bpp == 1 ? ((uint64_t)w + 7) / 8 : bpp == 4 ? ((uint64_t)w + 1) / 2
                                                                 : (uint64_t)w * (bpp / 8);
    uint64_t padded = (row + 3) & ~(uint64_t)3;
    /* The last row's padding too: writers pad it, and a file missing it was cut short. */
    uint64_t need = offset + padded * (uint64_t)h;
    if (need > n) {
        s->data_error = "truncated BMP data";
        return NULL;
    }
    if (bpp < 16) {
        /* stb reads `psize` palette entries (its formula, including its off-by-12 for OS/2
         * headers) into an uninitialized table, then indexes it with every pixel: an index
         * past psize would read garbage, so check them all. */
        int64_t psize = hsz == 12 ? ((int64_t)offset - 14 - 24) / 3
                                  : ((int64_t)offset - 14 - (int64_t)hsz) >> 2;
        if (psize < 1 || psize > 256)
            return "corrupt BMP header (bad palette size)";
        for (uint64_t y = 0; y < (uint64_t)h && !s->data_error; y++) {
            const unsigned char *p = b + offset + y * padded;
            for (uint64_t x = 0; x < (uint64_t)w; x++) {
                int v = bpp == 8 ? p[x] : bpp == 4 ? (p[x / 2] >> (x % 2 ? 0 : 4)) & 15
                                                   : (p[x / 8] >> (7 - x % 8)) & 1;
                if (v >= psize) {
                    s->data_error = "corrupt BMP data (palette index out of range)";
                    break;
                }
            }
        }
    }
    return NULL;
}

/* Offsets as stb's stbi__tga_load reads them (it skips `palette start` bytes, for one). */
static const char *scan_tga(const unsigned char *b, size_t n, scan *s)
{
    int idlen = b[0], indexed = b[1], type = b[2];
    uint32_t pal_start = le16(b + 3), pal_len = le16(b + 5);
    int pal_bits = b[7], bpp = b[16];
    s->w = le16(b + 12);
    s->h = le16(b + 14);
    int rle = type >= 8;
    uint64_t data = 18 + (uint64_t)idlen;
    if (indexed) {
        if (pal_len == 0)
            return "corrupt TGA header (empty palette)";
        int entry = pal_bits == 15 || pal_bits == 16 ? 2 : pal_bits / 8;
        data += pal_start + (uint64_t)pal_len * (uint64_t)entry;
    }
    if (data > n) {
        s->data_error = "truncated TGA data";
        return NULL;
    }
    uint64_t px = indexed ? (bpp == 8 ? 1 : 2) : (uint64_t)(bpp + 7) / 8;
    uint64_t count = s->w * s->h;
    if (!rle) {
        if (count * px > n - data)
            s->data_error = "truncated TGA data";
        return NULL;
    }
    /* RLE: walk the packets; stb would read zeros past the end. */
    uint64_t pos = data, seen = 0;
    while (seen < count) {
        if (pos >= n) {
            s->data_error = "truncated TGA data";
            return NULL;
        }
        int cmd = b[pos++];
        uint64_t run = 1 + (uint64_t)(cmd & 127);
        uint64_t bytes = cmd & 128 ? px : run * px;
        if (bytes > n - pos) {
            s->data_error = "truncated TGA data";
            return NULL;
        }
        pos += bytes;
        seen += run;
    }
    return NULL;
}

static int pnm_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/* The header exactly as stb parses it (stbi__pnm_info): whitespace and '#' comments between
 * fields, then one byte, which must be whitespace, before the samples. */
static const char *scan_pnm(const unsigned char *b, size_t n, scan *s, size_t *data_off)
{
    size_t pos = 2;
    uint64_t v[3];
    for (int k = 0; k < 3; k++) {
        for (;;) {
            while (pos < n && pnm_space(b[pos]))
                pos++;
            if (pos < n && b[pos] == '#') {
                while (pos < n && b[pos] != '\n' && b[pos] != '\r')
                    pos++;
                continue;
            }
            break;
        }
        if (pos >= n)
            return "truncated PNM header";
        if (b[pos] < '0' || b[pos] > '9')
            return "corrupt PNM header";
        v[k] = 0;
        while (pos < n && b[pos] >= '0' && b[pos] <= '9') {
            v[k] = v[k] * 10 + (uint64_t)(b[pos++] - '0');
            if (v[k] > INT_MAX)   /* stb's int parser would overflow */
                return "corrupt PNM header (number too large)";
        }
    }
    if (pos >= n)
        return "truncated PNM header";
    if (!pnm_space(b[pos]))
        return "corrupt PNM header";
    pos++;
    if (v[0] == 0 || v[1] == 0)
        return "corrupt PNM header (zero size)";
    if (v[2] == 0 || v[2] > 65535)
        return "corrupt PNM header (bad maximum value)";
    s->w = v[0];
    s->h = v[1];
    s->pnm_maxval = (int)v[2];
    *data_off = pos;
    uint64_t need = v[0] * v[1] * (b[1] == '6' ? 3 : 1) * (v[2] > 255 ? 2 : 1);
    if (need > n - pos)
        s->data_error = "truncated PNM data";
    return NULL;
}

/* ---- load -------------------------------------------------------------------------------- */

static uint64_t max_pixels_of(const imgpu_load_options *opts)
{
    return opts && opts->max_pixels ? opts->max_pixels : IMGPU_DEFAULT_MAX_PIXELS;
}

/* Largest file accepted: --max-file-size, and never beyond stb's int lengths. */
static uint64_t max_file_bytes(const imgpu_load_options *opts)
{
    uint64_t limit = opts && opts->max_file_bytes ? opts->max_file_bytes
                                                  : IMGPU_DEFAULT_MAX_FILE_BYTES;
    return limit > (uint64_t)INT_MAX ? (uint64_t)INT_MAX : limit;
}

int imgpu_parse_size(const char *s, uint64_t *bytes)
{
    if (!s || !*s || *s < '0' || *s > '9')
        return -1;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    unsigned shift = 0;
    if (*s == 'k' || *s == 'K') shift = 10;
    else if (*s == 'm' || *s == 'M') shift = 20;
    else if (*s == 'g' || *s == 'G') shift = 30;
    if (shift)
        s++;
    if (*s || v == 0 || v > (UINT64_MAX >> shift))
        return -1;
    *bytes = v << shift;
    return 0;
}

int imgpu_parse_seconds(const char *s, uint64_t *ms)
{
    if (!s || !*s || ((*s < '0' || *s > '9') && *s != '.'))
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    /* Up to a year; "nan", "inf", hex floats and exponents are refused by the first check
     * or here. */
    if (errno || *end || !(v > 0.0) || v > 365.0 * 86400.0)
        return -1;
    uint64_t m = (uint64_t)(v * 1000.0 + 0.5);
    *ms = m ? m : 1;
    return 0;
}

static int env_limit(const char *var, uint64_t *field, int (*parse)(const char *, uint64_t *),
                     const char *what)
{
    const char *v = getenv(var);
    if (*field || !v || !*v)
        return 0;
    if (parse(v, field) < 0)
        return imgpu_error("invalid %s '%s' (%s)", var, v, what);
    return 0;
}

static int parse_count(const char *s, uint64_t *out)
{
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9')
            return -1;
    return imgpu_parse_size(s, out);
}

int imgpu_load_options_from_env(imgpu_load_options *o)
{
    if (env_limit("IMGPU_MAX_PIXELS", &o->max_pixels, parse_count,
                  "a positive whole number of pixels") < 0 ||
        env_limit("IMGPU_MAX_FILE_SIZE", &o->max_file_bytes, imgpu_parse_size,
                  "a positive number of bytes, optionally with K, M or G") < 0 ||
        env_limit("IMGPU_MAX_DECODE_TIME", &o->max_decode_ms, imgpu_parse_seconds,
                  "a positive number of seconds") < 0)
        return -1;
    return 0;
}

static imgpu_image *load_fail(const char *name, const char *why)
{
    imgpu_error("cannot read '%s': %s", name, why);
    return NULL;
}

/* A 16-bit PNG (stb) or PNM (read here: stb v2.27 returns PNM's big-endian samples
 * unswapped) whose structure scan_* has already validated (size, data all there). */
/* A tight w x h x c image of `depth` bits that owns the decoder's malloc'ed px (freed here
 * when the image cannot be made). */
static imgpu_image *adopt_pixels(const char *name, void *px, int w, int h, int c, int depth)
{
    imgpu_image *im = calloc(1, sizeof *im);
    if (!im) {
        free(px);
        return load_fail(name, "out of memory");
    }
    im->width = w;
    im->height = h;
    im->channels = c;
    im->depth = depth;
    im->stride = (size_t)w * (size_t)c * (depth / 8);
    im->data = px;
    im->owns = 1;
    return im;
}

static imgpu_image *load16(const unsigned char *b, size_t len, const char *name, imgpu_format f,
                           const scan *s, size_t pnm_data, size_t budget)
{
    if (f == IMGPU_FORMAT_PNM) {
        const int c = b[1] == '6' ? 3 : 1;
        imgpu_image *im = imgpu_image_new((int)s->w, (int)s->h, c, 16);
        if (!im)
            return NULL;
        const size_t n = (size_t)s->w * (size_t)s->h * (size_t)c;
        const unsigned char *p = b + pnm_data;
        uint16_t *q = (uint16_t *)(void *)im->data;
        const uint32_t mv = (uint32_t)s->pnm_maxval;
        for (size_t i = 0; i < n; i++) {
            uint32_t v = be16(p + 2 * i);
            if (mv != 65535) /* scale to the full range, as the 8-bit path does for maxval < 255 */
                v = v >= mv ? 65535u : (v * 65535u + mv / 2) / mv;
            q[i] = (uint16_t)v;
        }
        return im;
    }
    int w, h, c;
    const char *why;
    unsigned char *px = imgpu__stb_decode16(b, len, budget, &w, &h, &c, &why);
    if (!px) {
        imgpu_error("cannot read '%s': corrupt %s data (%s)", name, imgpu_format_name(f), why);
        return NULL;
    }
    if ((uint64_t)w != s->w || (uint64_t)h != s->h) {
        free(px);
        imgpu_error("cannot read '%s': corrupt %s data", name, imgpu_format_name(f));
        return NULL;
    }
    return adopt_pixels(name, px, w, h, c, 16);
}

static imgpu_image *load_memory(const void *buf, size_t len, const char *name,
                                const imgpu_load_options *opts)
{
    const unsigned char *b = buf;
    uint64_t max_pixels = max_pixels_of(opts);
    if (!name)
        name = "(memory)";
    if (!b || len == 0)
        return load_fail(name, "file is empty");
    if ((uint64_t)len > max_file_bytes(opts)) {
        imgpu_error("cannot read '%s': file is too large (%zu bytes; the limit is %llu bytes, "
                    "raise it with --max-file-size or IMGPU_MAX_FILE_SIZE)", name, len,
                    (unsigned long long)max_file_bytes(opts));
        return NULL;
    }

    const char *refused;
    imgpu_format f = sniff(b, len, &refused);
    if (refused) {
        imgpu_error("cannot read '%s': %s images are not supported", name, refused);
        return NULL;
    }
    if (f == IMGPU_FORMAT_UNKNOWN)
        return load_fail(name, "unknown image format");

    scan s = { 0 };
    size_t pnm_data = 0;
    const char *err = NULL;
    switch (f) {
    case IMGPU_FORMAT_PNG: err = scan_png(b, len, &s); break;
    case IMGPU_FORMAT_JPEG: err = scan_jpeg(b, len, &s); break;
    case IMGPU_FORMAT_BMP: err = scan_bmp(b, len, &s); break;
    case IMGPU_FORMAT_TGA: err = scan_tga(b, len, &s); break;
    case IMGPU_FORMAT_PNM: err = scan_pnm(b, len, &s, &pnm_data); break;
    default: break;
    }
    if (err)
        return load_fail(name, err);
    if (s.w == 0 || s.h == 0)
        return load_fail(name, "corrupt image header (zero size)");
    /* Before anything allocates: w and h are each < 2^32, so the product cannot wrap. */
    if (s.w * s.h > max_pixels) {
        imgpu_error("cannot read '%s': image is %llux%llu = %llu pixels, more than the limit of "
                    "%llu (raise it with --max-pixels)", name, (unsigned long long)s.w,
                    (unsigned long long)s.h, (unsigned long long)(s.w * s.h),
                    (unsigned long long)max_pixels);
        return NULL;
    }

    int w, h, c, is16 = 0;
    const char *why;
    if (imgpu__stb_info(b, len, &w, &h, &c, &is16, &why) < 0) {
        if (s.data_error)   /* stb's complaint is a symptom; ours names the cause */
            return load_fail(name, s.data_error);
        imgpu_error("cannot read '%s': corrupt %s file (%s)", name, imgpu_format_name(f), why);
        return NULL;
    }
    /* Our scan and stb must agree on the size, or the truncation checks above measured a
     * different image than the one stb would decode. (stb's BMP info reports a top-down
     * BMP's height negative, as the header has it.) */
    if ((uint64_t)w != s.w || (uint64_t)(h < 0 ? -(int64_t)h : h) != s.h) {
        imgpu_error("cannot read '%s': corrupt %s header", name, imgpu_format_name(f));
        return NULL;
    }
    const int deep = is16 || s.pnm_maxval > 255;
    if (s.data_error)
        return load_fail(name, s.data_error);

    /* The decoder's budget: the compressed data twice over (stb grows its PNG data buffer by
     * doubling) plus 20 bytes per pixel of the image padded to whole 32x32 JPEG MCUs (JPEG:
     * up to 4 components of samples and of 16-bit progressive coefficients, and the output,
     * about 15; PNG: inflated rows, the image, the de-interlace copy, about 12), plus slack
     * for fixed-size state. */
    uint64_t area = ((s.w + 31) & ~(uint64_t)31) * ((s.h + 31) & ~(uint64_t)31);
    uint64_t budget = area > UINT64_MAX / 32 ? UINT64_MAX
                                             : 2 * (uint64_t)len + 20 * area + ((uint64_t)1 << 20);
    if (deep) /* every sample and inflated row twice as wide */
        budget = budget > UINT64_MAX / 2 ? UINT64_MAX : 2 * budget;
    if (budget > SIZE_MAX)
        budget = SIZE_MAX;
    if (deep)
        return load16(b, len, name, f, &s, pnm_data, (size_t)budget);

    unsigned char *px = NULL;
    if (f == IMGPU_FORMAT_PNG && imgpu__png_decode_fast_enabled())
        px = imgpu__png_decode_fast(b, len, (size_t)budget, &w, &h, &c);
    if (!px)
        px = imgpu__stb_decode(b, len, (size_t)budget, &w, &h, &c, &why);
    if (!px) {
        imgpu_error("cannot read '%s': corrupt %s data (%s)", name, imgpu_format_name(f), why);
        return NULL;
    }
    if ((uint64_t)w != s.w || (uint64_t)h != s.h) {
        free(px);
        imgpu_error("cannot read '%s': corrupt %s data", name, imgpu_format_name(f));
        return NULL;
    }
    if (f == IMGPU_FORMAT_PNM && s.pnm_maxval < 255) {
        /* stb returns PNM samples unscaled; a maxval-15 file would come out nearly black. */
        size_t n = (size_t)w * (size_t)h * (size_t)c;
        int mv = s.pnm_maxval;
        for (size_t i = 0; i < n; i++)
            px[i] = (unsigned char)(px[i] >= mv ? 255 : (px[i] * 255 + mv / 2) / mv);
    }
    return adopt_pixels(name, px, w, h, c, 8);
}

/* The decode-time limit wraps the whole load (checks and decode): see
 * imgpu__stb_deadline_begin. A load that finishes after the deadline is refused too, so what
 * --max-decode-time promises holds for every format: no image comes back from a decode that
 * took longer, and a decode that is still allocating stops at its next allocation. */
imgpu_image *imgpu_image_load_memory(const void *buf, size_t len, const char *name,
                                     const imgpu_load_options *opts)
{
    uint64_t ms = opts && opts->max_decode_ms ? opts->max_decode_ms : IMGPU_DEFAULT_MAX_DECODE_MS;
    imgpu__stb_deadline_begin(ms);
    imgpu_image *im = load_memory(buf, len, name, opts);
    if (imgpu__stb_deadline_end()) {
        imgpu_image_free(im);
        imgpu_error("cannot read '%s': decoding took longer than the limit of %.3g s (raise it "
                    "with --max-decode-time or IMGPU_MAX_DECODE_TIME)", name ? name : "(memory)",
                    (double)ms / 1000.0);
        return NULL;
    }
    return im;
}

/* ---- reading an input ------------------------------------------------------------------ */

/* Bytes of a file's start that decide its format: sniff() looks at no more (TGA's header is
 * the longest it reads), so a stream whose first bytes are no image is refused after them. */
#define SNIFF_BYTES 18

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The format of b[0..n) by its magic bytes, or -1 with the refusal recorded. */
static int check_magic(const char *name, const unsigned char *b, size_t n, imgpu_format *f)
{
    const char *refused;
    *f = sniff(b, n, &refused);
    if (refused)
        return imgpu_error("cannot read '%s': %s images are not supported", name, refused);
    if (*f == IMGPU_FORMAT_UNKNOWN)
        return imgpu_error("cannot read '%s': unknown image format", name);
    return 0;
}

/* Read an input whole, once, into a malloc'ed buffer. The path is opened once without
 * blocking (a FIFO with no writer would block open() forever) and everything else is asked
 * of the descriptor. A regular file is read to its end, at most limit + 1 bytes. Anything
 * else that can be read (a FIFO, a pipe such as /dev/stdin, a character device) is read
 * through poll() under a deadline of --max-decode-time for the whole wait, so no writer, a
 * stalled writer or an endless device cannot hang the run: it stops as soon as it has more
 * than the size limit, and after its first SNIFF_BYTES when they are no image (/dev/zero). */
static int read_input(const char *path, const imgpu_load_options *opts, unsigned char **out,
                      size_t *out_len)
{
    const uint64_t limit = max_file_bytes(opts);
    const uint64_t ms = opts && opts->max_decode_ms ? opts->max_decode_ms
                                                    : IMGPU_DEFAULT_MAX_DECODE_MS;
    unsigned char *buf = NULL;
    size_t len = 0, cap;
    int rc = -1, stream, sniffed = 0;
    struct stat st;

    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        /* A socket cannot be opened at all; say what it is rather than "No such device". */
        if (e == ENXIO && stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
            return imgpu_error("cannot read '%s': is a socket, not a file", path);
        return imgpu_error("cannot read '%s': %s", path, strerror(e));
    }
    const uint64_t t_end = now_ms() + ms;
    if (fstat(fd, &st) != 0) {
        imgpu_error("cannot read '%s': %s", path, strerror(errno));
        goto done;
    }
    if (S_ISDIR(st.st_mode)) {
        imgpu_error("cannot read '%s': is a directory", path);
        goto done;
    }
    if (S_ISBLK(st.st_mode)) {
        imgpu_error("cannot read '%s': is a block device, not an image file", path);
        goto done;
    }
    stream = !S_ISREG(st.st_mode);
    if (!stream) {
        if (st.st_size == 0) {
            imgpu_error("cannot read '%s': file is empty", path);
            goto done;
        }
        if ((uint64_t)st.st_size > limit) {
            imgpu_error("cannot read '%s': file is too large (%lld bytes; the limit is %llu "
                        "bytes, raise it with --max-file-size or IMGPU_MAX_FILE_SIZE)", path,
                        (long long)st.st_size, (unsigned long long)limit);
            goto done;
        }
        /* A regular file never blocks; plain reads from here on. */
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
            imgpu_error("cannot read '%s': %s", path, strerror(errno));
            goto done;
        }
    }
    /* Read to EOF rather than trusting st_size: a file can change. limit < INT_MAX, so
     * limit + 1 fits a size_t. */
    cap = stream ? 4096 : (size_t)st.st_size + 1;
    if ((uint64_t)cap > limit + 1)
        cap = (size_t)limit + 1;
    buf = malloc(cap);
    if (!buf) {
        imgpu_error("cannot read '%s': out of memory", path);
        goto done;
    }
    for (;;) {
        if (len == cap) {
            size_t ncap = (uint64_t)cap * 2 > limit + 1 ? (size_t)limit + 1 : cap * 2;
            unsigned char *nb = realloc(buf, ncap);
            if (!nb) {
                imgpu_error("cannot read '%s': out of memory", path);
                goto done;
            }
            buf = nb;
            cap = ncap;
        }
        if (stream) {
            uint64_t t = now_ms();
            struct pollfd pfd = { .fd = fd, .events = POLLIN };
            int pr = t >= t_end ? 0
                     : poll(&pfd, 1, t_end - t > INT_MAX ? INT_MAX : (int)(t_end - t));
            if (pr < 0 && errno == EINTR)
                continue;
            if (pr < 0) {
                imgpu_error("cannot read '%s': %s", path, strerror(errno));
                goto done;
            }
            if (pr == 0) {
                if (len == 0)
                    imgpu_error("cannot read '%s': no data within %.3g s (the --max-decode-time "
                                "limit; raise it with --max-decode-time or IMGPU_MAX_DECODE_TIME)",
                                path, (double)ms / 1000.0);
                else
                    imgpu_error("cannot read '%s': the data did not end within %.3g s (%zu "
                                "bytes read; the --max-decode-time limit; raise it with "
                                "--max-decode-time or IMGPU_MAX_DECODE_TIME)", path,
                                (double)ms / 1000.0, len);
                goto done;
            }
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            imgpu_error("cannot read '%s': %s", path, strerror(errno));
            goto done;
        }
        if (got == 0)
            break;
        len += (size_t)got;
        if ((uint64_t)len > limit) {
            imgpu_error("cannot read '%s': file is too large (more than the limit of %llu bytes, "
                        "raise it with --max-file-size or IMGPU_MAX_FILE_SIZE)", path,
                        (unsigned long long)limit);
            goto done;
        }
        if (stream && !sniffed && len >= SNIFF_BYTES) {
            imgpu_format f;
            sniffed = 1;
            if (check_magic(path, buf, len, &f) < 0)
                goto done;
        }
    }
    if (len == 0) {
        imgpu_error("cannot read '%s': file is empty", path);
        goto done;
    }
    *out = buf;
    *out_len = len;
    buf = NULL;
    rc = 0;
done:
    free(buf);
    close(fd);
    return rc;
}

imgpu_image *imgpu_image_load_info(const char *path, const imgpu_load_options *opts,
                                   imgpu_format *format, uint64_t *bytes)
{
    unsigned char *buf;
    size_t len;
    if (read_input(path, opts, &buf, &len) < 0)
        return NULL;
    imgpu_image *im = imgpu_image_load_memory(buf, len, path, opts);
    if (im) {
        const char *refused;
        if (format)
            *format = sniff(buf, len, &refused);
        if (bytes)
            *bytes = len;
    }
    free(buf);
    return im;
}

imgpu_image *imgpu_image_load(const char *path, const imgpu_load_options *opts)
{
    return imgpu_image_load_info(path, opts, NULL, NULL);
}

/* ---- encode ---------------------------------------------------------------------------- */

static int save_fail(const char *path, const char *why)
{
    if (path)
        return imgpu_error("cannot write '%s': %s", path, why);
    return imgpu_error("cannot encode image: %s", why);
}

static int encode_pnm(const imgpu_image *im, unsigned char **out, size_t *out_len)
{
    char head[64];
    int hn = snprintf(head, sizeof head, "P%c\n%d %d\n255\n", im->channels == 1 ? '5' : '6',
                      im->width, im->height);
    size_t row = (size_t)im->width * (size_t)im->channels;
    size_t total = (size_t)hn + row * (size_t)im->height;
    unsigned char *p = malloc(total);
    if (!p)
        return -1;
    memcpy(p, head, (size_t)hn);
    for (int y = 0; y < im->height; y++)
        memcpy(p + hn + (size_t)y * row, imgpu_image_row(im, y), row);
    *out = p;
    *out_len = total;
    return 0;
}

imgpu_image *imgpu_image_to_depth(const imgpu_image *im, int depth)
{
    if (depth != 8 && depth != 16) {
        imgpu_error("invalid sample depth %d bits", depth);
        return NULL;
    }
    imgpu_image *o = imgpu_image_new(im->width, im->height, im->channels, depth);
    if (!o)
        return NULL;
    const size_t n = (size_t)im->width * (size_t)im->channels;
    for (int y = 0; y < im->height; y++) {
        const unsigned char *r = imgpu_image_row(im, y);
        unsigned char *d = imgpu_image_row(o, y);
        for (size_t i = 0; i < n; i++) {
            uint32_t v = imgpu_sample_get(r, im->depth, i);
            if (im->depth == 16 && depth == 8)
                v = (v * 255u + 32767u) / 65535u;
            else if (im->depth == 8 && depth == 16)
                v *= 257u;
            if (depth == 16)
                ((uint16_t *)(void *)d)[i] = (uint16_t)v;
            else
                d[i] = (unsigned char)v;
        }
    }
    return o;
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* Appends one PNG chunk (length, type, data, CRC over type + data) at *pos. */
static void png_chunk(unsigned char *out, size_t *pos, const char *type, const unsigned char *data,
                      uint32_t n)
{
    unsigned char *p = out + *pos;
    put_be32(p, n);
    memcpy(p + 4, type, 4);
    if (n)
        memcpy(p + 8, data, n);
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, p + 4, 4);
    if (n)
        crc = crc32(crc, data, n);
    put_be32(p + 8 + n, (uint32_t)crc);
    *pos += 12 + (size_t)n;
}

/* 16-bit PNG: stb_image_write has no 16-bit path. Rows are filtered with Sub (type 1:
 * each byte minus the byte one pixel to the left, mod 256), samples big-endian as PNG
 * requires; one zlib stream split into IDAT chunks of at most 1 GiB. */
static int encode_png16(const imgpu_image *im, int level, unsigned char **out, size_t *out_len)
{
    static const unsigned char color_type[5] = {0, 0, 4, 2, 6};
    const int w = im->width, h = im->height, c = im->channels, bpp = 2 * c;
    const size_t rowb = (size_t)w * (size_t)bpp, raw_len = (rowb + 1) * (size_t)h;
    unsigned char *raw = NULL, *z = NULL, *o = NULL;
    if (raw_len > (size_t)UINT32_MAX) /* zlib's uLong is 64-bit here, but stay conservative */
        return -2;
    raw = malloc(raw_len);
    if (!raw)
        goto oom;
    for (int y = 0; y < h; y++) {
        const uint16_t *s = (const uint16_t *)(const void *)imgpu_image_row(im, y);
        unsigned char *d = raw + (size_t)y * (rowb + 1);
        d[0] = 1; /* Sub */
        unsigned char *px = d + 1;
        for (size_t i = 0; i < (size_t)w * (size_t)c; i++) {
            px[2 * i] = (unsigned char)(s[i] >> 8);
            px[2 * i + 1] = (unsigned char)s[i];
        }
        for (size_t i = rowb; i-- > (size_t)bpp;) /* right to left: the left byte is still raw */
            px[i] = (unsigned char)(px[i] - px[i - (size_t)bpp]);
    }
    uLongf zn = compressBound((uLong)raw_len);
    z = malloc(zn);
    if (!z)
        goto oom;
    if (imgpu__png_compress(z, &zn, raw, (uLong)raw_len, level) != Z_OK)
        goto oom;
    free(raw);
    raw = NULL;
    const size_t max_chunk = (size_t)1 << 30, nchunks = zn / max_chunk + 1;
    const size_t total = 8 + 25 + (size_t)zn + 12 * nchunks + 12;
    o = malloc(total);
    if (!o)
        goto oom;
    size_t pos = 8;
    memcpy(o, "\x89PNG\r\n\x1a\n", 8);
    unsigned char ihdr[13];
    put_be32(ihdr, (uint32_t)w);
    put_be32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 16;
    ihdr[9] = color_type[c];
    ihdr[10] = ihdr[11] = ihdr[12] = 0; /* deflate, adaptive filtering, no interlace */
    png_chunk(o, &pos, "IHDR", ihdr, 13);
    for (size_t off = 0; off < (size_t)zn || off == 0; off += max_chunk) {
        const size_t n = (size_t)zn - off < max_chunk ? (size_t)zn - off : max_chunk;
        png_chunk(o, &pos, "IDAT", z + off, (uint32_t)n);
        if (n < max_chunk)
            break;
    }
    png_chunk(o, &pos, "IEND", NULL, 0);
    free(z);
    *out = o;
    *out_len = pos;
    return 0;
oom:
    free(raw);
    free(z);
    free(o);
    return -1;
}

static int encode_pnm16(const imgpu_image *im, unsigned char **out, size_t *out_len)
{
    char head[64];
    int hn = snprintf(head, sizeof head, "P%c\n%d %d\n65535\n", im->channels == 1 ? '5' : '6',
                      im->width, im->height);
    const size_t n = (size_t)im->width * (size_t)im->channels;
    const size_t total = (size_t)hn + 2 * n * (size_t)im->height;
    unsigned char *p = malloc(total);
    if (!p)
        return -1;
    memcpy(p, head, (size_t)hn);
    unsigned char *q = p + hn;
    for (int y = 0; y < im->height; y++) {
        const uint16_t *s = (const uint16_t *)(const void *)imgpu_image_row(im, y);
        for (size_t i = 0; i < n; i++, q += 2) {
            q[0] = (unsigned char)(s[i] >> 8);
            q[1] = (unsigned char)s[i];
        }
    }
    *out = p;
    *out_len = total;
    return 0;
}

int imgpu_format_check_size(imgpu_format f, int w, int h, int channels, int depth, char *why,
                            size_t n)
{
    if (w < 1 || h < 1 || channels < 1 || channels > 4 || (depth != 8 && depth != 16)) {
        snprintf(why, n, "invalid image");
        return -1;
    }
    if ((f == IMGPU_FORMAT_JPEG || f == IMGPU_FORMAT_PNM) && (channels == 2 || channels == 4)) {
        snprintf(why, n, "%s cannot store alpha (the image has %d channels; save "
                 "as .png or .tga to keep it)", imgpu_format_name(f), channels);
        return -1;
    }
    if ((f == IMGPU_FORMAT_JPEG || f == IMGPU_FORMAT_TGA) && (w > 65535 || h > 65535)) {
        snprintf(why, n, "%s cannot store images wider or taller than 65535 pixels (this one is "
                 "%dx%d)", imgpu_format_name(f), w, h);
        return -1;
    }
    /* stb_image_write indexes pixels and sizes its headers with int arithmetic; 4 bytes per
     * pixel (BMP's widest) plus a pad per row must stay within int. */
    if (((uint64_t)w * 4 + 4) * (uint64_t)h + 4096 > (uint64_t)INT_MAX) {
        snprintf(why, n, "image of %dx%d is too large to encode (limit: 2 GiB of "
                 "pixel data)", w, h);
        return -1;
    }
    /* encode_png16: the filtered rows (a filter byte + 2 bytes a sample) within 4 GiB */
    if (f == IMGPU_FORMAT_PNG && depth == 16 &&
        ((uint64_t)w * 2 * (uint64_t)channels + 1) * (uint64_t)h > (uint64_t)UINT32_MAX) {
        snprintf(why, n, "image too large for imgpu's 16-bit PNG encoder (4 GiB of rows)");
        return -1;
    }
    return 0;
}

/* Set by imgpu_image_save_threads for the duration of one save on this thread. */
static _Thread_local int s_png_threads;
/* imgpu_image_save_recorded's callback, for write_atomic (this thread's save only) */
static _Thread_local int (*s_before_rename)(void *, long long, long long);
static _Thread_local void *s_before_rename_ctx;

/* `path` only for messages (NULL from imgpu_image_encode). */
static int encode(const imgpu_image *im, imgpu_format f, const imgpu_save_options *opts,
                  const char *path, unsigned char **out, size_t *out_len)
{
    unsigned char *tight = NULL;
    char why[160];
    int rc = -1;

    if (!im || !im->data || im->width < 1 || im->height < 1 || im->channels < 1 ||
        im->channels > 4)
        return save_fail(path, "invalid image");
    if (im->depth != 8 && im->depth != 16)
        return save_fail(path, "invalid image (sample depth)");
    if (im->stride < (size_t)im->width * (size_t)im->channels * (im->depth / 8))
        return save_fail(path, "invalid image (row stride too small)");
    int quality = opts && opts->quality ? opts->quality : 95;
    int level = opts && opts->png_level != -1 ? opts->png_level : 1;
    if (quality < 1 || quality > 100)
        return save_fail(path, "JPEG quality must be between 1 and 100");
    if (level < 0 || level > 9)
        return save_fail(path, "PNG compression level must be between 0 and 9");
    if (f == IMGPU_FORMAT_UNKNOWN || f > IMGPU_FORMAT_PNM)
        return save_fail(path, "unknown output format (use .png, .jpg, .bmp, .tga, .pnm, .pgm "
                               "or .ppm)");
    int w = im->width, h = im->height, c = im->channels;
    if (imgpu_format_check_size(f, w, h, c, im->depth, why, sizeof why) < 0)
        return save_fail(path, why);

    if (im->depth == 16) {
        if (f == IMGPU_FORMAT_PNG) {
            int r = encode_png16(im, level, out, out_len);
            if (r == -2)
                return save_fail(path, "image too large for imgpu's 16-bit PNG encoder (4 GiB of rows)");
            return r < 0 ? save_fail(path, "out of memory") : 0;
        }
        if (f == IMGPU_FORMAT_PNM)
            return encode_pnm16(im, out, out_len) < 0 ? save_fail(path, "out of memory") : 0;
        /* JPEG, BMP, TGA: 8 bits per sample */
        imgpu_notice("%s%s%s%s stores 8 bits per sample: converting the 16-bit image", path ? "'" : "",
                     path ? path : "", path ? "': " : "", imgpu_format_name(f));
        imgpu_image *im8 = imgpu_image_to_depth(im, 8);
        if (!im8)
            return -1;
        rc = encode(im8, f, opts, path, out, out_len);
        imgpu_image_free(im8);
        return rc;
    }
    if (f == IMGPU_FORMAT_PNM) {
        if (encode_pnm(im, out, out_len) < 0)
            return save_fail(path, "out of memory");
        return 0;
    }

    const unsigned char *px = im->data;
    size_t row = (size_t)w * (size_t)c;
    int wc = c;
    if (f == IMGPU_FORMAT_BMP && c == 2) {
        /* stb's BMP writer drops the alpha of gray+alpha; as RGBA it survives. */
        tight = malloc((size_t)w * (size_t)h * 4);
        if (!tight) {
            save_fail(path, "out of memory");
            goto done;
        }
        for (int y = 0; y < h; y++) {
            const unsigned char *s = imgpu_image_row(im, y);
            unsigned char *d = tight + (size_t)y * (size_t)w * 4;
            for (int x = 0; x < w; x++) {
                d[4 * x] = d[4 * x + 1] = d[4 * x + 2] = s[2 * x];
                d[4 * x + 3] = s[2 * x + 1];
            }
        }
        px = tight;
        wc = 4;
    } else if (f != IMGPU_FORMAT_PNG && im->stride != row) {
        tight = malloc(row * (size_t)h);
        if (!tight) {
            save_fail(path, "out of memory");
            goto done;
        }
        for (int y = 0; y < h; y++)
            memcpy(tight + (size_t)y * row, imgpu_image_row(im, y), row);
        px = tight;
    }
    const char *reason;
    if (f == IMGPU_FORMAT_PNG && s_png_threads > 0) {
        if (imgpu__png_encode_parallel(px, w, h, wc, im->stride, level, s_png_threads, out,
                                       out_len, &reason) < 0) {
            snprintf(why, sizeof why, "PNG encoding failed: %s", reason);
            save_fail(path, why);
            goto done;
        }
    } else if (imgpu__stb_encode(f, px, w, h, wc, f == IMGPU_FORMAT_PNG ? im->stride : row, quality,
                                 level, out, out_len, &reason) < 0) {
        snprintf(why, sizeof why, "%s encoding failed: %s", imgpu_format_name(f), reason);
        save_fail(path, why);
        goto done;
    }
    rc = 0;
done:
    free(tight);
    return rc;
}

int imgpu_image_encode(const imgpu_image *im, imgpu_format f, const imgpu_save_options *opts,
                       unsigned char **out, size_t *out_len)
{
    return encode(im, f, opts, NULL, out, out_len);
}

/* ---- the checked, atomic write ------------------------------------------------------- */

static pthread_once_t s_umask_once = PTHREAD_ONCE_INIT;
static mode_t s_umask;

/* umask can only be read by setting it, which would briefly change it for every thread;
 * Linux also shows it in /proc/self/status, so use that, and the set-and-restore only
 * where /proc is missing (once, on the first save). */
static void read_umask(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    if (fp) {
        char line[256];
        while (fgets(line, sizeof line, fp)) {
            unsigned int m;
            if (sscanf(line, "Umask: %o", &m) == 1) {
                s_umask = (mode_t)(m & 0777);
                fclose(fp);
                return;
            }
        }
        fclose(fp);
    }
    s_umask = umask(022);
    umask(s_umask);
}

/* Write all of buf to fp and close it; 0 or errno. Every step is checked: fwrite can succeed
 * into the stdio buffer and the error (ENOSPC, EFBIG, EIO) surface only at fflush, fsync or
 * even close. */
static int write_close(FILE *fp, const unsigned char *buf, size_t len, int sync)
{
    int err = 0;
    if (len && fwrite(buf, 1, len, fp) != len)
        err = errno ? errno : EIO;
    if (!err && fflush(fp) != 0)
        err = errno ? errno : EIO;
    if (!err && sync && fsync(fileno(fp)) != 0)
        err = errno;
    if (fclose(fp) != 0 && !err)
        err = errno ? errno : EIO;
    return err;
}

static int write_atomic(const char *path, const unsigned char *buf, size_t len, int no_follow)
{
    char *resolved = NULL, *tmp = NULL;
    int fd = -1, rc = -1, created = 0;
    struct stat st;
    const char *target = path;
    int exists = 0;

    /* Through a symlink the user named, replace the file it names, not the link. With
     * no_follow the link is an entry like any other: rename() below replaces the link itself
     * (rename never follows its last component), and lstat keeps what the link points to
     * out of every check, so nothing outside the link's folder is read, written or chmod'ed. */
    if (!no_follow && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        resolved = realpath(path, NULL);
        if (resolved)
            target = resolved;
    }
    if ((no_follow ? lstat(target, &st) : stat(target, &st)) == 0 && !S_ISLNK(st.st_mode)) {
        exists = 1;
        if (S_ISDIR(st.st_mode)) {
            imgpu_error("cannot write '%s': is a directory", path);
            goto done;
        }
        if (!S_ISREG(st.st_mode)) {
            /* A device or FIFO (/dev/stdout, /dev/full) cannot be replaced by rename, and
             * must not be: write into it directly. Opened without blocking, or a FIFO that
             * nobody reads would hang open() forever; with a reader there, the writes may
             * block (the reader sets the pace). */
            int wfd = open(target, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
            if (wfd < 0) {
                if (errno == ENXIO && S_ISFIFO(st.st_mode))
                    imgpu_error("cannot write '%s': no process is reading the FIFO", path);
                else
                    imgpu_error("cannot write '%s': %s", path, strerror(errno));
                goto done;
            }
            int fl = fcntl(wfd, F_GETFL);
            FILE *fp = fl < 0 || fcntl(wfd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? NULL
                                                                           : fdopen(wfd, "wb");
            if (!fp) {
                imgpu_error("cannot write '%s': %s", path, strerror(errno));
                close(wfd);
                goto done;
            }
            int err = write_close(fp, buf, len, 0);
            if (err) {
                imgpu_error("cannot write '%s': %s", path, strerror(err));
                goto done;
            }
            rc = 0;
            goto done;
        }
        /* rename() would replace a write-protected file too; respect the protection. */
        if (access(target, W_OK) != 0) {
            imgpu_error("cannot write '%s': %s", path, strerror(errno));
            goto done;
        }
    }

    /* "DIR/.NAME.XXXXXX" beside the target, so rename() stays within one file system. */
    const char *slash = strrchr(target, '/');
    size_t dirlen = slash ? (size_t)(slash - target) + 1 : 0;
    const char *base = slash ? slash + 1 : target;
    size_t baselen = strlen(base);
    if (baselen > 200)   /* NAME_MAX is 255; leave room for the dot and the suffix */
        baselen = 200;
    tmp = malloc(dirlen + baselen + 16);
    if (!tmp) {
        imgpu_error("cannot write '%s': out of memory", path);
        goto done;
    }
    memcpy(tmp, target, dirlen);
    tmp[dirlen] = '.';
    memcpy(tmp + dirlen + 1, base, baselen);
    strcpy(tmp + dirlen + 1 + baselen, ".XXXXXX");
    fd = mkstemp(tmp);
    if (fd < 0) {
        imgpu_error("cannot write '%s': %s", path, strerror(errno));
        goto done;
    }
    created = 1;
    pthread_once(&s_umask_once, read_umask);
    /* mkstemp makes the file 0600; give it what a plain create would, or keep the mode of
     * the file being replaced. */
    mode_t mode = exists ? (st.st_mode & 0777) : (0666 & ~s_umask);
    if (fchmod(fd, mode) != 0) {
        imgpu_error("cannot write '%s': %s", path, strerror(errno));
        goto done;
    }
    FILE *fp = fdopen(fd, "wb");
    if (!fp) {
        imgpu_error("cannot write '%s': %s", path, strerror(errno));
        goto done;
    }
    fd = -1;   /* fclose in write_close owns it now */
    int err = write_close(fp, buf, len, 1);
    if (err) {
        imgpu_error("cannot write '%s': %s", path, strerror(err));
        goto done;
    }
    if (s_before_rename) {
        struct stat tst;
        if (lstat(tmp, &tst) != 0) {
            imgpu_error("cannot write '%s': %s", path, strerror(errno));
            goto done;
        }
        if (s_before_rename(s_before_rename_ctx, (long long)tst.st_size,
                            (long long)tst.st_mtim.tv_sec * 1000000000LL + tst.st_mtim.tv_nsec) != 0)
            goto done;
    }
    if (rename(tmp, target) != 0) {
        imgpu_error("cannot write '%s': %s", path, strerror(errno));
        goto done;
    }
    created = 0;
    /* Make the rename itself durable. Best effort: the new file is in place by now, so
     * failing the save here would report an error for a write that happened. */
    tmp[dirlen] = '\0';
    int dfd = open(dirlen ? tmp : ".", O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    rc = 0;
done:
    if (fd >= 0)
        close(fd);
    if (created)
        unlink(tmp);
    free(tmp);
    free(resolved);
    return rc;
}

int imgpu_image_save_threads(const imgpu_image *im, const char *path,
                             const imgpu_save_options *opts, int png_threads)
{
    s_png_threads = png_threads;
    int rc = imgpu_image_save(im, path, opts);
    s_png_threads = 0;
    return rc;
}

int imgpu_image_save_recorded(const imgpu_image *im, const char *path,
                              const imgpu_save_options *opts, int png_threads,
                              int (*before_rename)(void *ctx, long long size, long long mtime_ns),
                              void *ctx)
{
    s_before_rename = before_rename;
    s_before_rename_ctx = ctx;
    int rc = imgpu_image_save_threads(im, path, opts, png_threads);
    s_before_rename = NULL;
    s_before_rename_ctx = NULL;
    return rc;
}

int imgpu_image_save(const imgpu_image *im, const char *path, const imgpu_save_options *opts)
{
    imgpu_format f = imgpu_format_from_path(path);
    if (f == IMGPU_FORMAT_UNKNOWN)
        return save_fail(path ? path : "(null)",
                         "unknown output format (use .png, .jpg, .jpeg, .bmp, .tga, .pnm, "
                         ".pgm or .ppm)");
    unsigned char *buf = NULL;
    size_t len = 0;
    if (encode(im, f, opts, path, &buf, &len) < 0)
        return -1;
    int rc = write_atomic(path, buf, len, opts ? opts->no_follow : 0);
    free(buf);
    return rc;
}
