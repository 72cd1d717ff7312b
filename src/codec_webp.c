/* codec_webp.c — WebP (placeholder entry: the codec is being written; refused as before). */
#include "codec.h"

#include <stdio.h>
#include <string.h>

static int sniff(const unsigned char *b, size_t n) { return n >= 12 && !memcmp(b, "RIFF", 4) && !memcmp(b + 8, "WEBP", 4); }

static const char *scan(const unsigned char *b, size_t n, imgpu__scan *s)
{
    (void)b, (void)n, (void)s;
    return "WebP images are not supported";
}

static int check_size(int w, int h, int c, int depth, char *why, size_t n)
{
    (void)w, (void)h, (void)c, (void)depth;
    snprintf(why, n, "WebP output is not supported");
    return -1;
}

static const char *const s_ext[] = { "webp", NULL };

const imgpu__codec imgpu__codec_webp = {
    .format = IMGPU_FORMAT_WEBP,
    .name = "WebP",
    .extensions = s_ext,
    .sniff = sniff,
    .scan = scan,
    .info_from_scan = 1,
    .stores_alpha = 1,
    .check_size = check_size,
};
