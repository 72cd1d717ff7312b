/* codec_tiff.c — TIFF (placeholder entry: the codec is being written; refused as before). */
#include "codec.h"

#include <stdio.h>
#include <string.h>

static int sniff(const unsigned char *b, size_t n) { return n >= 4 && (!memcmp(b, "II*\0", 4) || !memcmp(b, "MM\0*", 4)); }

static const char *scan(const unsigned char *b, size_t n, imgpu__scan *s)
{
    (void)b, (void)n, (void)s;
    return "TIFF images are not supported";
}

static int check_size(int w, int h, int c, int depth, char *why, size_t n)
{
    (void)w, (void)h, (void)c, (void)depth;
    snprintf(why, n, "TIFF output is not supported");
    return -1;
}

static const char *const s_ext[] = { "tif", "tiff", NULL };

const imgpu__codec imgpu__codec_tiff = {
    .format = IMGPU_FORMAT_TIFF,
    .name = "TIFF",
    .extensions = s_ext,
    .sniff = sniff,
    .scan = scan,
    .info_from_scan = 1,
    .stores_alpha = 1,
    .check_size = check_size,
};
