/* codec_jpeg.c — the JPEG entry of the codec table, through libjpeg-turbo (jpeglib.h):
 *  - the SOI signature, and the structure scan that walks the markers to the end-of-image
 *    marker (a JPEG that ends early is refused as truncated, never padded), checks every
 *    Huffman table, that every frame component is coded by some scan, and bounds the number
 *    of scans (IMGPU_MAX_JPEG_SCANS);
 *  - decoding with the settings OpenCV's imread uses (cv::JpegDecoder, OpenCV 4.6): libjpeg's
 *    defaults (islow IDCT, fancy upsampling), gray out as 1 channel, YCbCr/RGB as 3, so the
 *    pixels equal cv2.imread(path, cv2.IMREAD_UNCHANGED) (RGB order) bit for bit; CMYK and
 *    YCCK as CMYK, then to sRGB through the file's ICC profile with lcms2 (relative
 *    colorimetric, as libvips), or with OpenCV's formula and a notice when there is no usable
 *    profile (or no lcms2 in the build); under imgpu's limits:
 *    the output checked against the budget before it is allocated, libjpeg's own memory
 *    capped, its progress monitor polling the decode-time limit, every error (and every
 *    warning that means corrupt data) returned as the reason, nothing printed;
 *  - encoding as cv2.imwrite does (jpeg_set_defaults, jpeg_set_quality with baseline tables,
 *    jpeg_simple_progression, optimize_coding), plus the chroma subsampling, so the bytes
 *    equal cv2.imwrite's at the same settings; gray stays a 1-channel JPEG (io.c flattens
 *    alpha and converts 16-bit images to 8 bits first);
 *  - the metadata: EXIF and XMP (APP1) and the ICC profile (APP2 chunks), read and written;
 *    a CMYK file's profile is replaced by sRGB's where the pixels were converted through it.
 */
#include "codec.h"
#include "error.h"

#include <limits.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>
#ifdef IMGPU_HAVE_LCMS2
#include <lcms2.h>
#endif

static int jpeg_sniff(const unsigned char *b, size_t n)
{
    return n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff;
}

static int jpeg_is_sof(int m)
{
    return m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc;
}

/* Walks the markers to the end-of-image marker. libjpeg (like stb before it) pads a JPEG
 * that ends early with made-up data after a warning, so a missing EOI is refused here as
 * truncated, before any decoder runs. Segments are skipped by their length, so an EOI inside
 * an embedded thumbnail (APP1) does not count; bytes after the EOI (some cameras append
 * data) are allowed. A frame component that no scan codes (in a progressive file: no DC
 * scan) is refused too: libjpeg decodes it without a word from its zeroed coefficients, a
 * short decode like a file cut short (issue 25). Reports the size and the decoded channel
 * count (gray 1, else 3: CMYK and YCCK are converted to RGB). */
#define JPEG_MAX_COMPONENTS 10   /* libjpeg's MAX_COMPONENTS: a frame with more is its error */

static const char *scan_jpeg(const unsigned char *b, size_t n, imgpu__scan *s)
{
    size_t pos = 2;
    int have_sof = 0, progressive = 0;
    int jpeg_scans = 0;
    int ncomp = 0;
    int comp_id[JPEG_MAX_COMPONENTS], coded[JPEG_MAX_COMPONENTS] = { 0 };
    int hs[4] = { 1, 1, 1, 1 }, vs[4] = { 1, 1, 1, 1 };
    for (;;) {
        /* libjpeg skips junk between segments (with a warning it is allowed); so do we. */
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
            /* A table's 16 code counts sum to at most 256 and must fit the segment (libjpeg
             * refuses the same tables; this names the cause before any decoder runs). */
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
                p += 17 + sum;
            }
            if (s->data_error)
                break;
        }
        if (jpeg_is_sof(m) && !have_sof) {
            if (len < 8)
                return "corrupt JPEG header";
            have_sof = 1;
            s->h = imgpu__be16(b + pos + 3);
            s->w = imgpu__be16(b + pos + 5);
            s->channels = b[pos + 7] == 1 ? 1 : 3;
            /* the component ids, where the segment holds them all (else libjpeg refuses it) */
            progressive = m == 0xc2 || m == 0xc6 || m == 0xca || m == 0xce;
            if (b[pos + 7] <= JPEG_MAX_COMPONENTS && len >= 8 + 3 * (size_t)b[pos + 7]) {
                ncomp = b[pos + 7];
                for (int i = 0; i < ncomp; i++)
                    comp_id[i] = b[pos + 8 + 3 * i];
            }
            /* for the decoder's memory (below): the sampling factors */
            for (int i = 0; i < b[pos + 7] && i < 4 && 8 + 3 * (size_t)i + 2 <= len; i++) {
                const int hv = b[pos + 8 + 3 * i + 1];
                hs[i] = (hv >> 4) >= 1 && (hv >> 4) <= 4 ? hv >> 4 : 1;
                vs[i] = (hv & 15) >= 1 && (hv & 15) <= 4 ? hv & 15 : 1;
            }
        }
        if (m == 0xda && have_sof && len >= 3 && len >= 6 + 2 * (size_t)b[pos + 2]) {
            /* the components this scan codes: any scan of a sequential (or lossless) frame,
             * a DC scan (Ss = 0) of a progressive one */
            const int ns = b[pos + 2];
            if (!progressive || b[pos + 3 + 2 * ns] == 0)
                for (int i = 0; i < ns; i++)
                    for (int k = 0; k < ncomp; k++)
                        if (comp_id[k] == b[pos + 3 + 2 * i])
                            coded[k] = 1;
        }
        pos += len;
        if (m == 0xda && ++jpeg_scans > IMGPU_MAX_JPEG_SCANS) {
            snprintf(s->buf, sizeof s->buf, "JPEG has more than %d scans (refused: each scan is "
                     "another pass over the whole image)", IMGPU_MAX_JPEG_SCANS);
            return s->buf;
        }
        if (m == 0xda) {
            /* A scan naming an undefined Huffman table is left to libjpeg, which (as for
             * Motion-JPEG frames) supplies the standard tables 0 and 1 and refuses others.
             * Entropy-coded data: FF 00 is a stuffed byte, FF D0..D7 a restart marker,
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
    for (int k = 0; k < ncomp && !s->data_error; k++)
        if (!coded[k]) {
            snprintf(s->buf, sizeof s->buf, "corrupt JPEG data (component %d of %d is in no %s)",
                     k + 1, ncomp, progressive ? "DC scan" : "scan");
            s->data_error = s->buf;
        }
    /* libjpeg's memory beside the output (decode_jpeg): a progressive or multi-scan file
     * keeps every component's DCT coefficients for the whole image (64 of 2 bytes a block,
     * blocks padded to whole MCUs); every file needs rows of samples per component (the
     * IDCT output, context rows for fancy upsampling, the upsampled row group), and a CMYK
     * file one more row. libjpeg is held to what is left of the budget in any case. */
    {
        int hmax = 1, vmax = 1;
        const int nc = ncomp < 1 ? 1 : ncomp > 4 ? 4 : ncomp;
        for (int i = 0; i < nc; i++) {
            hmax = hs[i] > hmax ? hs[i] : hmax;
            vmax = vs[i] > vmax ? vs[i] : vmax;
        }
        const uint64_t mcu_x = (s->w + 8 * (uint64_t)hmax - 1) / (8 * (uint64_t)hmax);
        const uint64_t mcu_y = (s->h + 8 * (uint64_t)vmax - 1) / (8 * (uint64_t)vmax);
        uint64_t coef = 0;
        for (int i = 0; i < nc; i++)
            coef += mcu_x * (uint64_t)hs[i] * mcu_y * (uint64_t)vs[i] * 128;
        const uint64_t rows = mcu_x * 8 * (uint64_t)hmax * nc * 8 * (uint64_t)vmax * 4;
        s->work = (progressive || jpeg_scans > 1 ? coef : 0) + rows + 4 * s->w +
                  ((uint64_t)1 << 20);
    }
    return NULL;
}

/* ---- libjpeg's error handling: nothing printed, every error a reason ------------------- */

/* The error manager of one decode or encode: error_exit jumps back to the call site with the
 * library's message; warnings that mean the data is corrupt do the same on decode (libjpeg
 * would pad or skip what it could not read and carry on, as OpenCV lets it). */
typedef struct jpeg_err {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    int decoding;
    char msg[JMSG_LENGTH_MAX];
} jpeg_err;

static void on_error(j_common_ptr ci)
{
    jpeg_err *e = (jpeg_err *)(void *)ci->err;
    if (e->pub.msg_code == JERR_NO_BACKING_STORE)   /* what libjpeg says at the memory cap */
        snprintf(e->msg, sizeof e->msg, "needs more memory than an image of its size can use "
                 "(corrupt or malicious file)");
    else
        e->pub.format_message(ci, e->msg);
    /* io.c says "corrupt JPEG data (...)" already: drop libjpeg's own "Corrupt JPEG data: " */
    static const char prefix[] = "Corrupt JPEG data: ";
    if (!strncmp(e->msg, prefix, sizeof prefix - 1))
        memmove(e->msg, e->msg + sizeof prefix - 1, strlen(e->msg) - (sizeof prefix - 2));
    longjmp(e->jump, 1);
}

/* Warnings that leave the pixels as the file has them: junk bytes between segments (the
 * structure scan skips them too), an unknown JFIF revision or Adobe transform code. Every
 * other warning (premature end of data, bad Huffman or arithmetic code, a missing restart
 * marker, an inconsistent progression) means decoded pixels that are not the file's. */
static int benign_warning(int code)
{
    return code == JWRN_EXTRANEOUS_DATA || code == JWRN_JFIF_MAJOR || code == JWRN_ADOBE_XFORM ||
           code == JWRN_BOGUS_ICC;
}

static void on_message(j_common_ptr ci, int level)
{
    jpeg_err *e = (jpeg_err *)(void *)ci->err;
    if (level < 0 && e->decoding && !benign_warning(e->pub.msg_code))
        on_error(ci);
    /* trace messages and benign warnings: not printed */
}

static void on_output(j_common_ptr ci)
{
    (void)ci;   /* never to stderr */
}

static struct jpeg_error_mgr *jpeg_err_init(jpeg_err *e, int decoding)
{
    memset(e, 0, sizeof *e);
    jpeg_std_error(&e->pub);
    e->pub.error_exit = on_error;
    e->pub.emit_message = on_message;
    e->pub.output_message = on_output;
    e->decoding = decoding;
    return &e->pub;
}

/* ---- decode ----------------------------------------------------------------------------- */

static void on_progress(j_common_ptr ci)
{
    jpeg_err *e = (jpeg_err *)(void *)ci->err;
    if (imgpu__decode_late()) {
        snprintf(e->msg, sizeof e->msg, "decoding took longer than the time limit");
        longjmp(e->jump, 1);
    }
}

/* OpenCV's CMYK to RGB (icvCvt_CMYK2BGR_8u_C4C3R): libjpeg hands CMYK (YCCK already turned
 * into CMYK) as the file stores it, which for Adobe's inverted CMYK is 255 - ink; each
 * colour is then k - (255 - v) * k / 256, truncated. */
static void cmyk_to_rgb(const unsigned char *cmyk, unsigned char *rgb, size_t w)
{
    for (size_t x = 0; x < w; x++, cmyk += 4, rgb += 3) {
        const int k = cmyk[3];
        rgb[0] = (unsigned char)(k - ((255 - cmyk[0]) * k >> 8));
        rgb[1] = (unsigned char)(k - ((255 - cmyk[1]) * k >> 8));
        rgb[2] = (unsigned char)(k - ((255 - cmyk[2]) * k >> 8));
    }
}

/* ---- colour: CMYK and YCCK through the file's ICC profile (lcms2) ------------------------ */

/* What the segments say about the colour (jpeg_read_blocks). */
typedef struct jpeg_colour {
    int components;   /* the first frame's */
    int adobe;        /* an Adobe APP14 marker was seen */
    int transform;    /* its colour transform: 0 none (RGB, CMYK), 1 YCbCr, 2 YCCK */
} jpeg_colour;

static int jpeg_read_blocks(const unsigned char *b, size_t n, imgpu_meta *m, jpeg_colour *col);

#ifdef IMGPU_HAVE_LCMS2
/* lcms2 reports through its context's logger: the first message is kept, nothing printed. */
typedef struct lcms_log {
    char msg[120];
} lcms_log;

static void lcms_logger(cmsContext ctx, cmsUInt32Number code, const char *text)
{
    (void)code;
    lcms_log *log = cmsGetContextUserData(ctx);
    if (log && !log->msg[0])
        snprintf(log->msg, sizeof log->msg, "%s", text);
}

static cmsContext lcms_context(lcms_log *log)
{
    log->msg[0] = '\0';
    cmsContext ctx = cmsCreateContext(NULL, log);
    if (ctx)
        cmsSetLogErrorHandlerTHR(ctx, lcms_logger);
    return ctx;
}
#endif

/* Whether lcms2 takes icc[0..len) as a CMYK profile: 1, or 0 with the reason in why. The
 * decode and the metadata reader ask the same question of the same bytes, so the pixels and
 * the profile written with them agree. */
static int cmyk_profile_usable(const unsigned char *icc, size_t len, char *why, size_t wn)
{
#ifdef IMGPU_HAVE_LCMS2
    lcms_log log;
    cmsContext ctx = lcms_context(&log);
    if (!ctx || len > UINT32_MAX) {
        snprintf(why, wn, "out of memory");
        cmsDeleteContext(ctx);
        return 0;
    }
    cmsHPROFILE p = cmsOpenProfileFromMemTHR(ctx, icc, (cmsUInt32Number)len);
    int ok = p && cmsGetColorSpace(p) == cmsSigCmykData;
    if (!p)
        snprintf(why, wn, "lcms2: %s", log.msg[0] ? log.msg : "not an ICC profile");
    else if (!ok)
        snprintf(why, wn, "it is not a CMYK profile");
    if (p)
        cmsCloseProfile(p);
    cmsDeleteContext(ctx);
    return ok;
#else
    (void)icc, (void)len;
    snprintf(why, wn, "this imgpu is built without lcms2");
    return 0;
#endif
}

/* sRGB's profile (lcms2's built-in "sRGB built-in", ICC v4), malloc'ed: 0, or -1 out of
 * memory. Only called where lcms2 is built in. */
static int srgb_profile(unsigned char **out, size_t *len)
{
#ifdef IMGPU_HAVE_LCMS2
    lcms_log log;
    cmsContext ctx = lcms_context(&log);
    cmsHPROFILE p = ctx ? cmsCreate_sRGBProfileTHR(ctx) : NULL;
    cmsUInt32Number n = 0;
    unsigned char *b = NULL;
    if (p && cmsSaveProfileToMem(p, NULL, &n) && n && (b = malloc(n)) &&
        !cmsSaveProfileToMem(p, b, &n)) {
        free(b);
        b = NULL;
    }
    if (p)
        cmsCloseProfile(p);
    cmsDeleteContext(ctx);
    *out = b;
    *len = b ? n : 0;
    return b ? 0 : -1;
#else
    *out = NULL;
    *len = 0;
    return -1;
#endif
}

/* The state a longjmp may come back to: everything read after setjmp lives here, through a
 * pointer, so nothing needs volatile. */
typedef struct jpeg_dec {
    struct jpeg_decompress_struct ci;
    jpeg_err err;
    struct jpeg_progress_mgr progress;
    unsigned char *px, *row;
    imgpu_meta blocks;   /* a 4-component file's segments: its ICC profile */
#ifdef IMGPU_HAVE_LCMS2
    cmsContext lcms;
    cmsHTRANSFORM xf;   /* CMYK (as stored) to sRGB, when the file's profile is usable */
    lcms_log log;
#endif
} jpeg_dec;

/* Frees what a 4-component decode holds (after success or a longjmp). */
static void colour_free(jpeg_dec *d)
{
#ifdef IMGPU_HAVE_LCMS2
    if (d->xf)
        cmsDeleteTransform(d->xf);
    if (d->lcms)
        cmsDeleteContext(d->lcms);
    d->xf = NULL;
    d->lcms = NULL;
#endif
    free(d->blocks.icc);
    free(d->blocks.exif);
    free(d->blocks.xmp);
    memset(&d->blocks, 0, sizeof d->blocks);
}

/* Sets up the conversion of a 4-component frame: through the file's ICC profile with lcms2
 * (relative colorimetric, as `vips icc_transform` does) when it has a usable CMYK profile,
 * else OpenCV's formula with a notice saying so. The samples are taken as 255 - ink, Adobe's
 * convention, with or without an Adobe marker: libvips, PIL, ImageMagick and OpenCV's formula
 * all read every CMYK JPEG so. -1 only when out of memory. */
static int colour_setup(jpeg_dec *d, const unsigned char *b, size_t n, const char *name)
{
    jpeg_colour col = { 0 };
    char why[160] = "";
    if (jpeg_read_blocks(b, n, &d->blocks, &col) < 0)
        return -1;
    const char *space = d->ci.jpeg_color_space == JCS_YCCK ? "YCCK" : "CMYK";
    if (!d->blocks.icc) {
        imgpu_notice("'%s': %s JPEG without an ICC profile: converted to RGB with the plain "
                     "formula (no colour management)", name, space);
        return 0;
    }
    if (cmyk_profile_usable(d->blocks.icc, d->blocks.icc_len, why, sizeof why)) {
#ifdef IMGPU_HAVE_LCMS2
        d->lcms = lcms_context(&d->log);
        cmsHPROFILE in = d->lcms ? cmsOpenProfileFromMemTHR(d->lcms, d->blocks.icc,
                                                            (cmsUInt32Number)d->blocks.icc_len)
                                 : NULL;
        cmsHPROFILE out = d->lcms ? cmsCreate_sRGBProfileTHR(d->lcms) : NULL;
        if (in && out)
            d->xf = cmsCreateTransformTHR(d->lcms, in, TYPE_CMYK_8_REV, out, TYPE_RGB_8,
                                          INTENT_RELATIVE_COLORIMETRIC, 0);
        if (in)
            cmsCloseProfile(in);
        if (out)
            cmsCloseProfile(out);
        if (d->xf)
            return 0;
        snprintf(why, sizeof why, "lcms2: %s", d->log.msg[0] ? d->log.msg : "no transform");
#endif
    }
    imgpu_notice("'%s': the ICC profile of this %s JPEG cannot be used (%s): converted to RGB "
                 "with the plain formula (no colour management)", name, space, why);
    return 0;
}

/* One row of 4-component samples to RGB: through the profile, or OpenCV's formula. */
static void colour_row(jpeg_dec *d, const unsigned char *cmyk, unsigned char *rgb, size_t w)
{
#ifdef IMGPU_HAVE_LCMS2
    if (d->xf) {
        cmsDoTransform(d->xf, cmyk, rgb, (cmsUInt32Number)w);
        return;
    }
#else
    (void)d;
#endif
    cmyk_to_rgb(cmyk, rgb, w);
}

static unsigned char *decode_jpeg(jpeg_dec *d, const unsigned char *b, size_t n, size_t budget,
                                  const char *name, int *w, int *h, int *c, const char **why)
{
    static _Thread_local char s_why[JMSG_LENGTH_MAX + 16];
    struct jpeg_decompress_struct *ci = &d->ci;
    ci->err = jpeg_err_init(&d->err, 1);
    if (setjmp(d->err.jump)) {
        jpeg_destroy_decompress(ci);
        colour_free(d);
        free(d->px);
        free(d->row);
        snprintf(s_why, sizeof s_why, "%s", d->err.msg);
        *why = s_why;
        return NULL;
    }
    jpeg_create_decompress(ci);
    d->progress.progress_monitor = on_progress;
    ci->progress = &d->progress;
    jpeg_mem_src(ci, b, (unsigned long)n);
    jpeg_read_header(ci, TRUE);
    /* OpenCV's choices for a file read unchanged: gray stays gray, 4 components come out
     * as CMYK (libjpeg converts YCCK) for the conversion below, everything else as RGB. */
    const int four = ci->num_components == 4;
    if (ci->num_components == 1)
        ci->out_color_space = JCS_GRAYSCALE;
    else if (four)
        ci->out_color_space = JCS_CMYK;
    else
        ci->out_color_space = JCS_RGB;
    const uint64_t out_c = ci->num_components == 1 ? 1 : 3;
    const uint64_t need = (uint64_t)ci->image_width * ci->image_height * out_c;
    if (need > budget || need > SIZE_MAX) {
        snprintf(d->err.msg, sizeof d->err.msg, "needs more memory than an image of its size "
                 "can use (corrupt or malicious file)");
        longjmp(d->err.jump, 1);
    }
    /* libjpeg's own allocations (progressive coefficients above all) share what is left */
    ci->mem->max_memory_to_use = (long)((budget - need) > (size_t)LONG_MAX ? LONG_MAX
                                                                            : budget - need);
    jpeg_start_decompress(ci);
    if (ci->output_components != (int)(four ? 4 : out_c) ||
        (uint64_t)ci->output_width * ci->output_height * out_c != need) {
        snprintf(d->err.msg, sizeof d->err.msg, "unexpected decoder output layout");
        longjmp(d->err.jump, 1);
    }
    const size_t stride = (size_t)ci->output_width * (size_t)out_c;
    d->px = malloc(need ? (size_t)need : 1);
    if (four)
        d->row = malloc((size_t)ci->output_width * 4);
    if (!d->px || (four && !d->row) || (four && colour_setup(d, b, n, name) < 0)) {
        snprintf(d->err.msg, sizeof d->err.msg, "out of memory");
        longjmp(d->err.jump, 1);
    }
    while (ci->output_scanline < ci->output_height) {
        JSAMPROW r = four ? d->row : d->px + (size_t)ci->output_scanline * stride;
        const size_t y = ci->output_scanline;
        if (jpeg_read_scanlines(ci, &r, 1) != 1) {
            snprintf(d->err.msg, sizeof d->err.msg, "decoder stopped early");
            longjmp(d->err.jump, 1);
        }
        if (four)
            colour_row(d, d->row, d->px + y * stride, ci->output_width);
    }
    jpeg_finish_decompress(ci);
    colour_free(d);
    *w = (int)ci->output_width;
    *h = (int)ci->output_height;
    *c = (int)out_c;
    jpeg_destroy_decompress(ci);
    free(d->row);
    return d->px;
}

static unsigned char *jpeg_decode8(const unsigned char *b, size_t n, const imgpu__scan *s,
                                   size_t budget, int *w, int *h, int *c, const char **why)
{
    jpeg_dec *d = calloc(1, sizeof *d);
    if (!d) {
        *why = "out of memory";
        return NULL;
    }
    unsigned char *px = decode_jpeg(d, b, n, budget, s->name ? s->name : "(memory)", w, h, c,
                                    why);
    free(d);
    return px;
}

/* ---- encode ----------------------------------------------------------------------------- */

static const char s_exif_id[6] = { 'E', 'x', 'i', 'f', 0, 0 };
static const char s_xmp_id[] = "http://ns.adobe.com/xap/1.0/";   /* with its NUL: 29 bytes */
#define JPEG_MAX_SEGMENT 65533u   /* a marker segment's payload: 65535 less the length field */

/* An ICC profile travels in APP2 segments of "ICC_PROFILE\0", its sequence number (1..N)
 * and N, then up to 65519 bytes of it: 255 of them at most. */
#define JPEG_ICC_CHUNK (JPEG_MAX_SEGMENT - 14u)   /* 65519 */
#define JPEG_MAX_ICC_CHUNKS 255
#define JPEG_MAX_ICC ((size_t)JPEG_MAX_ICC_CHUNKS * JPEG_ICC_CHUNK)

/* Whether m has an ICC profile that JPEG can carry; one too large for it gets a notice. */
static int icc_fits(const imgpu_meta *m, const char *name)
{
    if (!m || !m->icc || !m->icc_len)
        return 0;
    if (m->icc_len <= JPEG_MAX_ICC)
        return 1;
    imgpu_notice("'%s': the ICC profile (%zu bytes) does not fit %d JPEG APP2 segments "
                 "(%zu bytes at most): left out", name, m->icc_len, JPEG_MAX_ICC_CHUNKS,
                 JPEG_MAX_ICC);
    return 0;
}

/* meta's EXIF and XMP as APP1 segments and its ICC profile as APP2 chunks, after the JFIF
 * APP0 libjpeg writes (as libvips, PIL and exiftool do). A block too large for one segment
 * (EXIF, XMP past 64 KiB: extended XMP) is left out with a notice. */
static void write_meta(struct jpeg_compress_struct *ci, const imgpu_meta *m, unsigned char *tmp,
                       const char *name)
{
    if (m->exif && m->exif_len) {
        if (m->exif_len <= JPEG_MAX_SEGMENT - sizeof s_exif_id) {
            memcpy(tmp, s_exif_id, sizeof s_exif_id);
            memcpy(tmp + sizeof s_exif_id, m->exif, m->exif_len);
            jpeg_write_marker(ci, JPEG_APP0 + 1, tmp,
                              (unsigned)(sizeof s_exif_id + m->exif_len));
        } else {
            imgpu_notice("'%s': the EXIF block (%zu bytes) does not fit one JPEG APP1 segment: "
                         "left out", name, m->exif_len);
        }
    }
    if (m->xmp && m->xmp_len) {
        if (m->xmp_len <= JPEG_MAX_SEGMENT - sizeof s_xmp_id) {
            memcpy(tmp, s_xmp_id, sizeof s_xmp_id);
            memcpy(tmp + sizeof s_xmp_id, m->xmp, m->xmp_len);
            jpeg_write_marker(ci, JPEG_APP0 + 1, tmp, (unsigned)(sizeof s_xmp_id + m->xmp_len));
        } else {
            imgpu_notice("'%s': the XMP packet (%zu bytes) does not fit one JPEG APP1 segment: "
                         "left out", name, m->xmp_len);
        }
    }
    /* libjpeg-turbo splits it into "ICC_PROFILE\0", sequence, count, up to 65519 bytes (its
     * count byte would wrap past 255 chunks: icc_fits keeps it within) */
    if (icc_fits(m, name))
        jpeg_write_icc_profile(ci, m->icc, (unsigned)m->icc_len);
}

typedef struct jpeg_enc {
    struct jpeg_compress_struct ci;
    jpeg_err err;
    unsigned char *out, *tmp;
    unsigned long out_len;
} jpeg_enc;

static int encode_jpeg(jpeg_enc *e, const imgpu_image *im, const imgpu__encode_args *a,
                       char *why, size_t n)
{
    struct jpeg_compress_struct *ci = &e->ci;
    ci->err = jpeg_err_init(&e->err, 0);
    if (setjmp(e->err.jump)) {
        jpeg_destroy_compress(ci);
        free(e->out);
        free(e->tmp);
        e->out = NULL;
        snprintf(why, n, "JPEG encoding failed: %s", e->err.msg);
        return -1;
    }
    jpeg_create_compress(ci);
    jpeg_mem_dest(ci, &e->out, &e->out_len);
    ci->image_width = (JDIMENSION)im->width;
    ci->image_height = (JDIMENSION)im->height;
    ci->input_components = im->channels == 1 ? 1 : 3;
    ci->in_color_space = im->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    /* cv2.imwrite's sequence (OpenCV 4.6, JpegEncoder::write), then the subsampling */
    jpeg_set_defaults(ci);
    ci->restart_interval = 0;
    jpeg_set_quality(ci, a->quality, TRUE);
    if (a->progressive)
        jpeg_simple_progression(ci);
    if (a->optimize)
        ci->optimize_coding = TRUE;
    if (im->channels != 1) {
        /* luma's factors; chroma stays 1x1: 4:4:4 1x1, 4:2:2 2x1, 4:2:0 2x2 (the default) */
        const int hs = a->subsampling == IMGPU_SUBSAMPLING_444 ? 1 : 2;
        const int vs = a->subsampling == IMGPU_SUBSAMPLING_420 ? 2 : 1;
        ci->comp_info[0].h_samp_factor = hs;
        ci->comp_info[0].v_samp_factor = vs;
        ci->comp_info[1].h_samp_factor = ci->comp_info[1].v_samp_factor = 1;
        ci->comp_info[2].h_samp_factor = ci->comp_info[2].v_samp_factor = 1;
    }
    jpeg_start_compress(ci, TRUE);
    if (a->meta) {
        if (!(e->tmp = malloc(JPEG_MAX_SEGMENT))) {
            snprintf(e->err.msg, sizeof e->err.msg, "out of memory");
            longjmp(e->err.jump, 1);
        }
        write_meta(ci, a->meta, e->tmp, a->path ? a->path : "(memory)");
    }
    while (ci->next_scanline < ci->image_height) {
        JSAMPROW r = (JSAMPROW)imgpu_image_row(im, (int)ci->next_scanline);
        jpeg_write_scanlines(ci, &r, 1);
    }
    jpeg_finish_compress(ci);
    jpeg_destroy_compress(ci);
    free(e->tmp);
    return 0;
}

static int jpeg_encode8(const imgpu_image *im, const imgpu__encode_args *a, unsigned char **out,
                        size_t *out_len, char *why, size_t n)
{
    if (im->channels != 1 && im->channels != 3) {   /* io.c flattens alpha first */
        snprintf(why, n, "JPEG cannot store %d channels", im->channels);
        return -1;
    }
    jpeg_enc *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    int rc = encode_jpeg(e, im, a, why, n);
    if (rc == 0) {
        *out = e->out;
        *out_len = (size_t)e->out_len;
    }
    free(e);
    return rc;
}

/* ---- a JPEG encoded elsewhere (nvJPEG): the same segments a libjpeg encode writes ------------ */

typedef struct seg_buf {
    unsigned char *p;
    size_t n, cap;
} seg_buf;

static int put(seg_buf *o, const void *d, size_t n)
{
    if (n == 0)
        return 0;    /* d may be NULL (an empty id or payload) */
    if (o->n + n > o->cap)
        return -1;   /* sized up front: cannot happen */
    memcpy(o->p + o->n, d, n);
    o->n += n;
    return 0;
}

/* one marker segment: FF m, the length (payload + 2), id[0..idn) then d[0..n) */
static int put_segment(seg_buf *o, int m, const void *id, size_t idn, const void *d, size_t n)
{
    const size_t L = idn + n + 2;
    const unsigned char hdr[4] = { 0xFF, (unsigned char)m, (unsigned char)(L >> 8), (unsigned char)L };
    return put(o, hdr, 4) || put(o, id, idn) || put(o, d, n) ? -1 : 0;
}

static int jpeg_insert_meta(const unsigned char *jpg, size_t n, const imgpu_meta *m,
                            const char *name, unsigned char **out, size_t *out_len, char *why,
                            size_t why_n)
{
    /* libjpeg's default JFIF APP0: version 1.01, no units, 1:1, no thumbnail */
    static const unsigned char jfif[14] = { 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0 };
    static const char icc_id[12] = "ICC_PROFILE";   /* with its NUL */
    const size_t icc_chunk = JPEG_ICC_CHUNK;
    *out = NULL;
    if (n < 4 || jpg[0] != 0xFF || jpg[1] != 0xD8) {
        snprintf(why, why_n, "the JPEG encoder's output has no SOI marker");
        return -1;
    }
    const int exif = m && m->exif && m->exif_len && m->exif_len <= JPEG_MAX_SEGMENT - sizeof s_exif_id;
    const int xmp = m && m->xmp && m->xmp_len && m->xmp_len <= JPEG_MAX_SEGMENT - sizeof s_xmp_id;
    if (m && m->exif && m->exif_len && !exif)
        imgpu_notice("'%s': the EXIF block (%zu bytes) does not fit one JPEG APP1 segment: left out",
                     name, m->exif_len);
    if (m && m->xmp && m->xmp_len && !xmp)
        imgpu_notice("'%s': the XMP packet (%zu bytes) does not fit one JPEG APP1 segment: left out",
                     name, m->xmp_len);
    const int icc = icc_fits(m, name);
    const size_t nicc = icc ? (m->icc_len + icc_chunk - 1) / icc_chunk : 0;
    seg_buf o = { NULL, 0, n + 32 + (exif ? m->exif_len + 16 : 0) + (xmp ? m->xmp_len + 40 : 0) +
                               (icc ? m->icc_len + 18 * nicc : 0) };
    if (!(o.p = malloc(o.cap))) {
        snprintf(why, why_n, "out of memory");
        return -1;
    }
    put(&o, jpg, 2);
    /* the encoder's segments before its first scan: its JFIF APP0 is kept (else libjpeg's),
     * other APP segments dropped, the tables kept; from the SOS on, everything as it is */
    size_t i = 2, keep_from = 0;
    int own_jfif = 0;
    while (i + 4 <= n && jpg[i] == 0xFF) {
        const int mk = jpg[i + 1];
        const size_t L = (size_t)jpg[i + 2] << 8 | jpg[i + 3];
        if (mk == 0xDA || L < 2 || i + 2 + L > n)
            break;
        if (mk == 0xE0 && i == 2 && L >= 7 && !memcmp(jpg + i + 4, "JFIF", 5)) {
            put(&o, jpg + i, 2 + L);
            own_jfif = 1;
        }
        i += 2 + L;
    }
    if (!own_jfif)
        put_segment(&o, 0xE0, jfif, sizeof jfif, NULL, 0);
    if (exif)
        put_segment(&o, 0xE1, s_exif_id, sizeof s_exif_id, m->exif, m->exif_len);
    if (xmp)
        put_segment(&o, 0xE1, s_xmp_id, sizeof s_xmp_id, m->xmp, m->xmp_len);
    for (size_t k = 0; k < nicc; k++) {
        const size_t off = k * icc_chunk, len = m->icc_len - off < icc_chunk ? m->icc_len - off : icc_chunk;
        unsigned char id[14];
        memcpy(id, icc_id, sizeof icc_id);
        id[12] = (unsigned char)(k + 1);
        id[13] = (unsigned char)nicc;
        put_segment(&o, 0xE2, id, sizeof id, m->icc + off, len);
    }
    /* the tables (and anything else) between SOI and SOS, less the APP segments */
    for (size_t j = 2; j < i;) {
        const int mk = jpg[j + 1];
        const size_t L = (size_t)jpg[j + 2] << 8 | jpg[j + 3];
        if (!(mk >= 0xE0 && mk <= 0xEF))
            put(&o, jpg + j, 2 + L);
        j += 2 + L;
    }
    keep_from = i;
    if (put(&o, jpg + keep_from, n - keep_from) < 0) {
        free(o.p);
        snprintf(why, why_n, "internal error: JPEG segment sizes");
        return -1;
    }
    *out = o.p;
    *out_len = o.n;
    return 0;
}

/* ---- metadata --------------------------------------------------------------------------- */

/* The segments before the first scan: the first EXIF APP1 (its TIFF structure), the first
 * XMP APP1 (the packet) and the ICC profile from its APP2 chunks, put together in sequence
 * order, into m; and into *col the frame's component count and the Adobe APP14 marker's
 * colour transform. A profile whose chunks disagree on their count, repeat or miss a number
 * is left out; damaged metadata never fails the load. */
static int jpeg_read_blocks(const unsigned char *b, size_t n, imgpu_meta *m, jpeg_colour *col)
{
    static const char icc_id[12] = "ICC_PROFILE";   /* with its NUL */
    const unsigned char *chunk[JPEG_MAX_ICC_CHUNKS + 1] = { 0 };
    size_t chunk_len[JPEG_MAX_ICC_CHUNKS + 1] = { 0 };
    int icc_count = 0, icc_bad = 0;
    size_t pos = 2;
    while (pos + 4 <= n) {
        if (b[pos] != 0xff) {   /* junk between segments: skip, as the scan does */
            pos++;
            continue;
        }
        const int mk = b[pos + 1];
        if (mk == 0xff) {
            pos++;
            continue;
        }
        if (mk == 0xd8 || mk == 0x01 || (mk >= 0xd0 && mk <= 0xd7)) {
            pos += 2;
            continue;
        }
        if (mk == 0xda || mk == 0xd9)
            break;
        const size_t len = imgpu__be16(b + pos + 2);
        if (len < 2 || len > n - pos - 2)
            break;
        const unsigned char *d = b + pos + 4;
        const size_t dn = len - 2;
        if (jpeg_is_sof(mk) && dn >= 6 && !col->components)
            col->components = d[5];
        if (mk == 0xee && dn >= 12 && !memcmp(d, "Adobe", 5) && !col->adobe) {
            col->adobe = 1;   /* libjpeg's rule (jdmarker.c): the first Adobe marker counts */
            col->transform = d[11];
        }
        if (mk == 0xe1 && dn > sizeof s_exif_id && !memcmp(d, s_exif_id, sizeof s_exif_id) &&
            !m->exif) {
            if (imgpu_meta_set(&m->exif, &m->exif_len, d + sizeof s_exif_id,
                               dn - sizeof s_exif_id) < 0)
                return -1;
        } else if (mk == 0xe1 && dn > sizeof s_xmp_id && !memcmp(d, s_xmp_id, sizeof s_xmp_id) &&
                   !m->xmp) {
            if (imgpu_meta_set(&m->xmp, &m->xmp_len, d + sizeof s_xmp_id,
                               dn - sizeof s_xmp_id) < 0)
                return -1;
        } else if (mk == 0xe2 && dn > sizeof icc_id + 2 && !memcmp(d, icc_id, sizeof icc_id)) {
            const int seq = d[sizeof icc_id], count = d[sizeof icc_id + 1];
            if (!icc_count)
                icc_count = count;
            if (seq < 1 || count < 1 || seq > count || count != icc_count || chunk[seq])
                icc_bad = 1;
            else {
                chunk[seq] = d + sizeof icc_id + 2;
                chunk_len[seq] = dn - sizeof icc_id - 2;
            }
        }
        pos += 2 + len;
    }
    if (icc_count && !icc_bad) {
        size_t total = 0;
        for (int i = 1; i <= icc_count; i++) {
            if (!chunk[i])
                return 0;   /* a chunk is missing: no profile */
            total += chunk_len[i];
        }
        unsigned char *icc = malloc(total);
        if (!icc)
            return -1;
        size_t at = 0;
        for (int i = 1; i <= icc_count; i++) {
            memcpy(icc + at, chunk[i], chunk_len[i]);
            at += chunk_len[i];
        }
        m->icc = icc;
        m->icc_len = total;
    }
    return 0;
}

/* The file's colour space, as libjpeg decides it (jdapimin.c's default_decompress_parms):
 * one component is gray, three are RGB (YCbCr, or RGB itself: an RGB image either way), four
 * are CMYK unless an Adobe marker's transform says YCCK (2; an unknown one counts as YCCK). */
static const char *colour_name(const jpeg_colour *col)
{
    switch (col->components) {
    case 1: return "Gray";
    case 3: return "RGB";
    case 4: return col->adobe && col->transform != 0 ? "YCCK" : "CMYK";
    default: return NULL;
    }
}

/* The metadata (jpeg_read_blocks) and the colour space. A CMYK or YCCK file loads as RGB, so
 * its CMYK profile cannot travel with the pixels: it moves to m->file_icc, and when lcms2 can
 * use it (the decode converted through it: cmyk_profile_usable) sRGB's profile takes its
 * place, as libvips does. */
static int jpeg_read_meta(const unsigned char *b, size_t n, imgpu_meta *m)
{
    jpeg_colour col = { 0 };
    if (jpeg_read_blocks(b, n, m, &col) < 0)
        return -1;
    m->colour = colour_name(&col);
    if (col.components != 4 || !m->icc)
        return 0;
    m->file_icc = m->icc;
    m->file_icc_len = m->icc_len;
    m->icc = NULL;
    m->icc_len = 0;
    char why[160];
    if (cmyk_profile_usable(m->file_icc, m->file_icc_len, why, sizeof why)) {
        if (srgb_profile(&m->icc, &m->icc_len) < 0)
            return -1;
        m->colour_converted = 1;
    }
    return 0;
}

static const char *const s_jpeg_ext[] = { "jpg", "jpeg", "jpe", NULL };

static void library(char *buf, size_t n)
{
#ifdef LIBJPEG_TURBO_VERSION_NUMBER   /* libjpeg has no run-time version call: the headers' */
    const int v = LIBJPEG_TURBO_VERSION_NUMBER;   /* MMMmmmppp */
#ifdef IMGPU_HAVE_LCMS2   /* CMYK's colour management (cmsGetEncodedCMMversion: 2140) */
    const int l = cmsGetEncodedCMMversion();
    snprintf(buf, n, "libjpeg-turbo %d.%d.%d + lcms2 %d.%d", v / 1000000, v / 1000 % 1000,
             v % 1000, l / 1000, l / 10 % 100);
#else
    snprintf(buf, n, "libjpeg-turbo %d.%d.%d", v / 1000000, v / 1000 % 1000, v % 1000);
#endif
#else
    snprintf(buf, n, "libjpeg %d", JPEG_LIB_VERSION);
#endif
}

const imgpu__codec imgpu__codec_jpeg = {
    .format = IMGPU_FORMAT_JPEG,
    .name = "JPEG",
    .extensions = s_jpeg_ext,
    .sniff = jpeg_sniff,
    .scan = scan_jpeg,
    .info_from_scan = 1,
    .decode8 = jpeg_decode8,
    .load16 = NULL,        /* never: the scan reports 8 bits (12-bit files are refused) */
    .read_meta = jpeg_read_meta,
    .stores_alpha = 0,
    .flattens_alpha = 1,   /* io.c composites onto --flatten (white) */
    .max_side = 65535,
    .encode8 = jpeg_encode8,
    .encode16 = NULL,      /* 8 bits: io.c converts */
    .library = library,
    .insert_meta = jpeg_insert_meta,   /* nvJPEG's bitstreams (imgpu_save_encoded_recorded) */
};
