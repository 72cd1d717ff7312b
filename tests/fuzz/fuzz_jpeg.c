/* fuzz_jpeg.c — libFuzzer target: the JPEG codec (src/io/codec_jpeg.c, libjpeg-turbo) on any
 * bytes, below io.c: the structure scan, then decode8 and read_meta under small limits (at
 * most 2^22 pixels, io.c's decoder budget for that size, a decode-time limit of 2 s: a file
 * that keeps libjpeg busy must be stopped by the progress monitor, so a libFuzzer timeout
 * here is a finding), then, when it decoded, the image encoded again with two settings
 * (defaults with the metadata read; progressive + optimized 4:4:4 at quality 30) and the
 * result decoded back. The decoder runs even where the scan found truncated or damaged
 * entropy data (io.c would refuse those first): libjpeg's own error and warning paths must
 * hold on their own. Checked for every input:
 *   - a failed decode always gives a reason, and returns no pixels;
 *   - a decoded image has the scan's size and channel count (1 or 3), every byte readable;
 *   - metadata reading never fails but for memory, and the ICC profile, EXIF and XMP it
 *     returns are as long as it says (ASan reads them);
 *   - what the encoder writes decodes to the same size and channel count.
 */
#include "codec.h"
#include "error.h"
#include "exif.h"
#include "io.h"
#include "meta.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_PIXELS ((uint64_t)1 << 22)

static unsigned touch(const unsigned char *p, size_t n)
{
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += p[i];
    return sum;
}

/* io.c's decoder budget for a w x h file of len bytes */
static size_t budget_for(uint64_t w, uint64_t h, size_t len)
{
    uint64_t area = ((w + 31) & ~(uint64_t)31) * ((h + 31) & ~(uint64_t)31);
    return (size_t)(2 * (uint64_t)len + 20 * area + ((uint64_t)1 << 20));
}

static void roundtrip(const unsigned char *px, int w, int h, int c, const imgpu_meta *m,
                      int settings)
{
    imgpu_image im = { w, h, c, 8, (size_t)w * (size_t)c, (unsigned char *)px, 0 };
    imgpu__encode_args a;
    memset(&a, 0, sizeof a);
    a.quality = settings ? 30 : IMGPU_DEFAULT_QUALITY;
    a.subsampling = settings ? IMGPU_SUBSAMPLING_444 : IMGPU_SUBSAMPLING_420;
    a.progressive = a.optimize = settings;
    a.meta = settings ? NULL : m;
    unsigned char *out = NULL;
    size_t out_len = 0;
    char why[160] = "";
    if (imgpu__codec_jpeg.encode8(&im, &a, &out, &out_len, why, sizeof why) < 0) {
        if (!why[0])
            abort();
        return;   /* out of memory is the only legitimate failure */
    }
    imgpu__scan s;
    memset(&s, 0, sizeof s);
    if (imgpu__codec_jpeg.scan(out, out_len, &s) || s.data_error || s.w != (uint64_t)w ||
        s.h != (uint64_t)h || s.channels != c)
        abort();
    int w2, h2, c2;
    const char *r = NULL;
    unsigned char *back = imgpu__codec_jpeg.decode8(out, out_len, &s, budget_for(s.w, s.h, out_len),
                                                    &w2, &h2, &c2, &r);
    if (!back || w2 != w || h2 != h || c2 != c)
        abort();
    free(back);
    if (!settings) {   /* the metadata written is read back */
        imgpu_meta m2;
        memset(&m2, 0, sizeof m2);
        if (imgpu__codec_jpeg.read_meta(out, out_len, &m2) < 0)
            abort();
        if (m && m->icc && (m2.icc_len != m->icc_len || memcmp(m2.icc, m->icc, m->icc_len)))
            abort();
        free(m2.icc);
        free(m2.exif);
        free(m2.xmp);
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!imgpu__codec_jpeg.sniff(data, size))
        return 0;
    imgpu__scan s;
    memset(&s, 0, sizeof s);
    if (imgpu__codec_jpeg.scan(data, size, &s) || s.w * s.h > FUZZ_MAX_PIXELS)
        return 0;
    imgpu__stb_deadline_begin(2000);
    int w, h, c;
    const char *why = NULL;
    unsigned char *px = imgpu__codec_jpeg.decode8(data, size, &s, budget_for(s.w, s.h, size), &w,
                                                  &h, &c, &why);
    const int late = imgpu__stb_deadline_end();
    if (!px) {
        if (!why || !why[0])
            abort();
        return 0;
    }
    if ((uint64_t)w != s.w || (uint64_t)h != s.h || c != s.channels || (c != 1 && c != 3))
        abort();
    volatile unsigned sink = touch(px, (size_t)w * (size_t)h * (size_t)c);
    (void)sink;

    imgpu_meta *m = calloc(1, sizeof *m);
    if (!m || imgpu__codec_jpeg.read_meta(data, size, m) < 0) {
        imgpu_meta_free(m);
        free(px);
        return 0;
    }
    sink = touch(m->icc, m->icc_len) + touch(m->exif, m->exif_len) + touch(m->xmp, m->xmp_len);
    imgpu_exif_info ex;
    if (m->exif)
        imgpu_exif_parse(m->exif, m->exif_len, &ex);
    /* encoding is the slower half: only for images up to 2^18 pixels decoded in time */
    if (!late && (uint64_t)w * (uint64_t)h <= ((uint64_t)1 << 18)) {
        roundtrip(px, w, h, c, m, 0);
        roundtrip(px, w, h, c, m, 1);
    }
    imgpu_meta_free(m);
    free(px);
    imgpu_error_clear();
    return 0;
}
