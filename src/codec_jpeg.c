/* codec_jpeg.c — the JPEG entry of the codec table: the SOI signature, and the structure
 * scan that walks the markers to the end-of-image marker (stb fills a JPEG that ends early
 * with made-up data instead of failing), checks every Huffman table and that every scan uses
 * defined ones (two memory-safety bugs of stb v2.27), and bounds the number of scans. Decoding
 * and encoding are stb's (8 bits; 16-bit images are converted by io.c).
 */
#include "codec.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int jpeg_sniff(const unsigned char *b, size_t n)
{
    return n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff;
}

static int jpeg_is_sof(int m)
{
    return m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc;
}

/* Walks the markers to the end-of-image marker. stb fills a JPEG that ends early with
 * made-up data instead of failing, so a missing EOI is the only sign of a truncated file.
 * Segments are skipped by their length, so an EOI inside an embedded thumbnail (APP1) does
 * not count; bytes after the EOI (some cameras append data) are allowed. */
static const char *scan_jpeg(const unsigned char *b, size_t n, imgpu__scan *s)
{
    size_t pos = 2;
    int have_sof = 0;
    int jpeg_scans = 0, jpeg_progressive = 0;
    unsigned char jpeg_huff[2][4] = { { 0 } }; /* [DC=0/AC=1][table id]: defined by a DHT so far */
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
        size_t len = imgpu__be16(b + pos);
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
                    jpeg_huff[b[p] >> 4][b[p] & 15] = 1;
                p += 17 + sum;
            }
            if (s->data_error)
                break;
        }
        if (jpeg_is_sof(m) && !have_sof) {
            if (len < 8)
                return "corrupt JPEG header";
            have_sof = 1;
            jpeg_progressive = m == 0xc2;
            s->h = imgpu__be16(b + pos + 3);
            s->w = imgpu__be16(b + pos + 5);
        }
        pos += len;
        if (m == 0xda && ++jpeg_scans > IMGPU_MAX_JPEG_SCANS) {
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
            int need_dc = !jpeg_progressive || (ss == 0 && ah == 0);
            int need_ac = !jpeg_progressive || ss != 0;
            for (size_t i = 0; i < ns; i++) {
                int td = sos[2 + 2 * i] >> 4, ta = sos[2 + 2 * i] & 15;
                if ((need_dc && (td > 3 || !jpeg_huff[0][td])) ||
                    (need_ac && (ta > 3 || !jpeg_huff[1][ta])))
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

static const char *const s_jpeg_ext[] = { "jpg", "jpeg", "jpe", NULL };

const imgpu__codec imgpu__codec_jpeg = {
    .format = IMGPU_FORMAT_JPEG,
    .name = "JPEG",
    .extensions = s_jpeg_ext,
    .sniff = jpeg_sniff,
    .scan = scan_jpeg,
    .decode8 = NULL,   /* stb */
    .load16 = NULL,    /* never: stb reports no 16-bit JPEG */
    .stores_alpha = 0, /* stb's encoder writes YCbCr only */
    .max_side = 65535,
    .encode8 = NULL,   /* stb */
    .encode16 = NULL,  /* 8 bits: io.c converts */
};
