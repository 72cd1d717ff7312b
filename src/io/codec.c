/* codec.c — the codec table (see codec.h) and what is shared by its entries: the lookups by
 * format, by a path's extension and by content (the magic bytes of the supported formats,
 * and of the formats recognised only to be refused by name), the format names, the check of
 * what a format can store (imgpu_format_check_size). What the entries share lives below the
 * table, in codec_shared.c: the table references the entries and nothing of theirs calls back.
 */
#include "codec.h"
#include "error.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Sniffing tries the entries in this order (weak_magic ones after the refused formats). */
static const imgpu__codec *const s_codecs[] = {
    &imgpu__codec_png, &imgpu__codec_jpeg, &imgpu__codec_bmp, &imgpu__codec_tga,
    &imgpu__codec_pnm, &imgpu__codec_tiff, &imgpu__codec_webp,
};
#define IMGPU_NCODECS (sizeof s_codecs / sizeof s_codecs[0])

void imgpu_codec_libraries(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < IMGPU_NCODECS; i++) {
        char one[64];
        if (!s_codecs[i]->library)
            continue;
        s_codecs[i]->library(one, sizeof one);
        if (strstr(buf, one))   /* one library behind several entries: listed once */
            continue;
        int k = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", one);
        if (k < 0 || (size_t)k >= n - used)
            break;
        used += (size_t)k;
    }
}

const imgpu__codec *imgpu__codec_of(imgpu_format f)
{
    for (size_t i = 0; f != IMGPU_FORMAT_UNKNOWN && i < IMGPU_NCODECS; i++)
        if (s_codecs[i]->format == f)
            return s_codecs[i];
    return NULL;
}

/* ---- format names ---------------------------------------------------------------------- */

imgpu_format imgpu_format_from_path(const char *path)
{
    if (!path)
        return IMGPU_FORMAT_UNKNOWN;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base)   /* "png" and ".png" are names, not extensions */
        return IMGPU_FORMAT_UNKNOWN;
    for (size_t i = 0; i < IMGPU_NCODECS; i++)
        for (const char *const *e = s_codecs[i]->extensions; *e; e++)
            if (strcasecmp(dot + 1, *e) == 0)
                return s_codecs[i]->format;
    return IMGPU_FORMAT_UNKNOWN;
}

/* Extensions of formats imgpu knows (it names them when refusing to read them) but cannot
 * write: a path ending in one gets "GIF output is not supported", not "cannot tell". */
static const struct {
    const char *ext, *name;
} s_unwritable_ext[] = {
    { "gif", "GIF" }, { "psd", "PSD" }, { "hdr", "Radiance HDR" }, { "pic", "Softimage PIC" },
    { "qoi", "QOI" }, { "exr", "OpenEXR" }, { "jp2", "JPEG 2000" }, { "j2k", "JPEG 2000" },
    { "jxl", "JPEG XL" }, { "avif", "AVIF" }, { "heic", "HEIF" }, { "heif", "HEIF" },
    { "dds", "DDS" }, { "ico", "ICO" }, { "pam", "PAM (P7)" }, { "pfm", "PFM" },
};

const char *imgpu_format_unwritable_from_path(const char *path)
{
    if (!path || imgpu_format_from_path(path) != IMGPU_FORMAT_UNKNOWN)
        return NULL;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base)
        return NULL;
    for (size_t i = 0; i < sizeof s_unwritable_ext / sizeof s_unwritable_ext[0]; i++)
        if (strcasecmp(dot + 1, s_unwritable_ext[i].ext) == 0)
            return s_unwritable_ext[i].name;
    return NULL;
}

const char *imgpu_format_name(imgpu_format f)
{
    const imgpu__codec *k = imgpu__codec_of(f);
    return k ? k->name : "unknown";
}

/* ---- sniffing ------------------------------------------------------------------------ */

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
    { 0, 2, "P7", "PAM (P7)" },
    { 0, 2, "PF", "PFM" },
    { 0, 2, "Pf", "PFM" },
};

imgpu_format imgpu__codec_sniff(const unsigned char *b, size_t n, const char **refused)
{
    *refused = NULL;
    for (size_t i = 0; i < IMGPU_NCODECS; i++)
        if (!s_codecs[i]->weak_magic && s_codecs[i]->sniff(b, n))
            return s_codecs[i]->format;
    for (size_t i = 0; i < sizeof s_refused_formats / sizeof s_refused_formats[0]; i++) {
        size_t off = s_refused_formats[i].off, len = s_refused_formats[i].len;
        if (n >= off + len && memcmp(b + off, s_refused_formats[i].magic, len) == 0 &&
            (off != 8 || memcmp(b, "RIFF", 4) == 0)) {
            *refused = s_refused_formats[i].name;
            return IMGPU_FORMAT_UNKNOWN;
        }
    }
    for (size_t i = 0; i < IMGPU_NCODECS; i++)
        if (s_codecs[i]->weak_magic && s_codecs[i]->sniff(b, n))
            return s_codecs[i]->format;
    return IMGPU_FORMAT_UNKNOWN;
}

int imgpu__codec_sniff_checked(const char *name, const unsigned char *b, size_t n,
                               imgpu_format *f)
{
    const char *refused;
    *f = imgpu__codec_sniff(b, n, &refused);
    if (refused)
        return imgpu_error("cannot read '%s': %s images are not supported", name, refused);
    if (*f == IMGPU_FORMAT_UNKNOWN)
        return imgpu_error("cannot read '%s': unknown image format", name);
    return 0;
}

/* ---- what a format can store ------------------------------------------------------------ */

int imgpu_format_check_size(imgpu_format f, int w, int h, int channels, int depth, char *why,
                            size_t n)
{
    const imgpu__codec *k = imgpu__codec_of(f);   /* NULL: only the common checks */
    if (w < 1 || h < 1 || channels < 1 || channels > 4 || (depth != 8 && depth != 16)) {
        snprintf(why, n, "invalid image");
        return -1;
    }
    if (k && !k->stores_alpha && !k->flattens_alpha && (channels == 2 || channels == 4)) {
        snprintf(why, n, "%s cannot store alpha (the image has %d channels; save "
                 "as .png or .tga to keep it)", k->name, channels);
        return -1;
    }
    if (k && k->max_side && (w > k->max_side || h > k->max_side)) {
        snprintf(why, n, "%s cannot store images wider or taller than %d pixels (this one is "
                 "%dx%d)", k->name, k->max_side, w, h);
        return -1;
    }
    /* stb_image_write indexes pixels and sizes its headers with int arithmetic; 4 bytes per
     * pixel (BMP's widest) plus a pad per row must stay within int. */
    if (((uint64_t)w * 4 + 4) * (uint64_t)h + 4096 > (uint64_t)INT_MAX) {
        snprintf(why, n, "image of %dx%d is too large to encode (limit: 2 GiB of "
                 "pixel data)", w, h);
        return -1;
    }
    if (k && k->check_size)
        return k->check_size(w, h, channels, depth, why, n);
    return 0;
}
