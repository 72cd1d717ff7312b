/* meta.c — the metadata blocks that travel with an image (meta.h). */
#include "meta.h"
#include "error.h"
#include "exif.h"

#include <stdlib.h>
#include <string.h>

void imgpu_meta_free(imgpu_meta *m)
{
    if (!m)
        return;
    free(m->icc);
    free(m->file_icc);
    free(m->exif);
    free(m->xmp);
    for (int i = 0; i < m->n_text; i++)
        free(m->text[i].data);
    free(m->text);
    free(m);
}

int imgpu_meta_set(unsigned char **dst, size_t *dst_len, const unsigned char *b, size_t n)
{
    unsigned char *p = NULL;
    if (n) {
        if (!(p = malloc(n)))
            return -1;
        memcpy(p, b, n);
    }
    free(*dst);
    *dst = p;
    *dst_len = n;
    return 0;
}

int imgpu_meta_add_text(imgpu_meta *m, const char type[4], const unsigned char *b, size_t n)
{
    imgpu_meta_text *t = realloc(m->text, (size_t)(m->n_text + 1) * sizeof *t);
    if (!t)
        return -1;
    m->text = t;
    imgpu_meta_text *e = &t[m->n_text];
    memset(e, 0, sizeof *e);
    memcpy(e->type, type, 4);
    if (imgpu_meta_set(&e->data, &e->len, b, n) < 0)
        return -1;
    m->n_text++;
    return 0;
}

void imgpu_meta_check_exif(imgpu_meta *m)
{
    imgpu_exif_info ex;
    if (!m || !m->exif)
        return;
    if (imgpu_exif_parse(m->exif, m->exif_len, &ex) < 0) {
        /* a blob the parse refuses ("II*\0" alone) is no EXIF: readers call it malformed */
        imgpu_error_clear();
        imgpu_meta_set(&m->exif, &m->exif_len, NULL, 0);
        return;
    }
    /* every Orientation entry to the value that counts: the first one's where it is 1..8,
     * which also mends a later one out of range; else (none, or the first out of range) what
     * the load took instead. No entry: nothing is added. */
    const int o = ex.orientation ? ex.orientation
                  : m->orientation >= 1 && m->orientation <= 8 ? m->orientation : 1;
    imgpu_exif_set_orientation(m->exif, m->exif_len, o);
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int imgpu_meta_icc_description(const unsigned char *icc, size_t len, char *out, size_t n)
{
    if (!icc || len < 132 || n == 0)
        return -1;
    uint32_t count = be32(icc + 128);
    if (count > (len - 132) / 12)
        return -1;
    for (uint32_t i = 0; i < count; i++) {
        const unsigned char *e = icc + 132 + 12 * (size_t)i;
        if (memcmp(e, "desc", 4))
            continue;
        uint64_t off = be32(e + 4), sz = be32(e + 8);
        if (off + sz > len || sz < 12)
            return -1;
        const unsigned char *t = icc + off;
        size_t k = 0;
        if (!memcmp(t, "desc", 4)) {            /* v2: textDescriptionType, ASCII count */
            uint64_t cnt = be32(t + 8);
            if (cnt > sz - 12)
                cnt = sz - 12;
            for (uint64_t j = 0; j < cnt && t[12 + j] && k + 1 < n; j++)
                out[k++] = (t[12 + j] >= 32 && t[12 + j] < 127) ? (char)t[12 + j] : '?';
        } else if (!memcmp(t, "mluc", 4) && sz >= 28) {  /* v4: first record, UTF-16BE */
            uint64_t rlen = be32(t + 20), roff = be32(t + 24);
            if (roff + rlen > sz)
                return -1;
            for (uint64_t j = 0; j + 1 < rlen && k + 1 < n; j += 2) {
                unsigned c = (unsigned)t[roff + j] << 8 | t[roff + j + 1];
                if (!c)
                    break;
                out[k++] = (c >= 32 && c < 127) ? (char)c : '?';
            }
        } else {
            return -1;
        }
        /* writers pad the text with spaces ("A98 ICC Profile "): trimmed, or the report
         * shows "A98 ICC Profile  (564 bytes)" */
        while (k && out[k - 1] == ' ')
            k--;
        out[k] = '\0';
        return k ? 0 : -1;
    }
    return -1;
}
