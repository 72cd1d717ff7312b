/* options.c — the one table of op options and limits (options.h says who uses it and how). */
#include "options.h"

#include "cli_values.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- usage errors ---------------------------------------------------------------------- */

static char s_usage[512];

int imgpu_usage_bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    imgpu_vformat_message(s_usage, sizeof s_usage, fmt, ap);   /* escaped: it quotes argv */
    va_end(ap);
    return -1;
}

const char *imgpu_usage_message(void) { return s_usage; }

/* The one wording of a bad value. */
static int invalid(const imgpu_opt *o, const char *v)
{
    return imgpu_usage_bad("invalid --%s '%s' (%s)", o->name, v, o->hint);
}

/* ---- defaults: the constructors' (op.h) ------------------------------------------------- */

imgpu_op imgpu_opt_default_op(imgpu_op_kind kind)
{
    switch (kind) {
    case IMGPU_OP_EQUALIZE: return imgpu_op_equalize(IMGPU_MODE_LUMINANCE);
    case IMGPU_OP_ROTATE: return imgpu_op_rotate(0.0);
    case IMGPU_OP_CLAHE:
    default:
        return imgpu_op_clahe(IMGPU_CLAHE_DEFAULT_CLIP, IMGPU_CLAHE_DEFAULT_TILES,
                              IMGPU_CLAHE_DEFAULT_TILES, IMGPU_MODE_LUMINANCE);
    }
}

/* ---- one parser per kind of value ---------------------------------------------------------- */

/* --equalize, --clahe: a new op at its defaults. */
static int p_add(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)v, (void)run;
    *op = imgpu_opt_default_op(o->id == IMGPU_OPT_ID_CLAHE ? IMGPU_OP_CLAHE : IMGPU_OP_EQUALIZE);
    return 0;
}

/* --angle DEG (imgpu rotate), --rotate DEG (batch, view: a new rotation) */
static int p_angle(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)run;
    double deg;
    if (imgpu__parse_angle(v, &deg) < 0)
        return invalid(o, v);
    if (o->sets & IMGPU_OPT_ADD)
        *op = imgpu_opt_default_op(IMGPU_OP_ROTATE);
    op->u.rotate.angle = deg;
    return 0;
}

static int p_mode(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)run;
    imgpu_eq_mode m;
    if (!strcmp(v, "luminance")) m = IMGPU_MODE_LUMINANCE;
    else if (!strcmp(v, "per-channel")) m = IMGPU_MODE_PER_CHANNEL;
    else return invalid(o, v);
    if (op->kind == IMGPU_OP_EQUALIZE)
        op->u.equalize.mode = m;
    else
        op->u.clahe.mode = m;
    return 0;
}

static int p_formula(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)run;
    imgpu_eq_formula *f = &op->u.equalize.formula;
    if (!strcmp(v, "opencv")) *f = IMGPU_FORMULA_OPENCV;
    else if (!strcmp(v, "pil")) *f = IMGPU_FORMULA_PIL;
    else if (!strcmp(v, "imagemagick")) *f = IMGPU_FORMULA_IMAGEMAGICK;
    else return invalid(o, v);
    return 0;
}

/* A clip limit is a plain number, not an angle: 0..1000000 (0: no clipping). */
static int p_clip(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)run;
    double x;
    if (imgpu__parse_double(v, 0.0, IMGPU_OPT_CLIP_MAX, &x) < 0)
        return invalid(o, v);
    op->u.clahe.clip = x;
    return 0;
}

/* WxH, each 1..IMGPU_CLAHE_MAX_TILES ('x' or 'X'). */
static int p_tiles(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)run;
    char buf[32];
    long tw, th;
    size_t n = strcspn(v, "xX");
    if (strlen(v) >= sizeof buf || !v[n])
        return invalid(o, v);
    memcpy(buf, v, n);
    buf[n] = '\0';
    if (imgpu__parse_long(buf, 1, IMGPU_CLAHE_MAX_TILES, &tw) < 0 ||
        imgpu__parse_long(v + n + 1, 1, IMGPU_CLAHE_MAX_TILES, &th) < 0)
        return invalid(o, v);
    op->u.clahe.tiles_x = (int)tw;
    op->u.clahe.tiles_y = (int)th;
    return 0;
}

static int p_filter(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)run;
    imgpu_filter *f = &op->u.rotate.filter;
    if (!strcmp(v, "nearest")) *f = IMGPU_FILTER_NEAREST;
    else if (!strcmp(v, "bilinear")) *f = IMGPU_FILTER_BILINEAR;
    else if (!strcmp(v, "bicubic")) *f = IMGPU_FILTER_BICUBIC;
    else return invalid(o, v);
    return 0;
}

/* --expand, --crop */
static int p_canvas(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)v, (void)run;
    op->u.rotate.crop = o->id == IMGPU_OPT_ID_CROP;
    return 0;
}

/* --background: a rotation's fill (when op is a rotation) and what alpha is flattened onto
 * for outputs without alpha (JPEG). */
static int p_color(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    uint8_t c[4];
    if (imgpu__parse_color(v, c) < 0)
        return invalid(o, v);
    if (op && op->kind == IMGPU_OP_ROTATE) {
        memcpy(op->u.rotate.background, c, 4);
        op->u.rotate.has_background = 1;
    }
    memcpy(run->save.background, c, 4);
    run->save.has_background = 1;
    return 0;
}

static int p_depth(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)op;
    if (strcmp(v, "8") && strcmp(v, "16"))
        return invalid(o, v);
    run->out_depth = !strcmp(v, "8") ? 8 : 0;
    return 0;
}

/* A positive whole number (--max-pixels). */
static int p_count(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)op;
    uint64_t n;
    if (imgpu__parse_u64(v, &n) < 0 || n == 0)
        return invalid(o, v);
    run->load.max_pixels = n;
    return 0;
}

/* Bytes with an optional K, M or G (--max-memory, --max-file-size): io.c's parser, which
 * the IMGPU_MAX_* variables use too. */
static int p_size(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)op;
    uint64_t *dst = o->id == IMGPU_OPT_ID_MAX_MEMORY ? &run->max_memory : &run->load.max_file_bytes;
    if (imgpu_parse_size(v, dst) < 0)
        return invalid(o, v);
    return 0;
}

static int p_seconds(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)op;
    if (imgpu_parse_seconds(v, &run->load.max_decode_ms) < 0)
        return invalid(o, v);
    return 0;
}

/* --page N: 0-based, up to 65535 */
static int p_page(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)op;
    long n;
    if (imgpu__parse_long(v, 0, 65535, &n) < 0)
        return invalid(o, v);
    run->load.page = (int)n;
    return 0;
}

/* --pages all (the one value for now: every page) */
static int p_pages(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)op;
    if (strcmp(v, "all"))
        return invalid(o, v);
    run->all_pages = 1;
    return 0;
}

/* --no-auto-orient, --progressive, --optimize, --lossless, --strip */
static int p_flag(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)v, (void)op;
    switch (o->id) {
    case IMGPU_OPT_ID_NO_AUTO_ORIENT: run->load.no_auto_orient = 1; break;
    case IMGPU_OPT_ID_PROGRESSIVE: run->save.progressive = 1; break;
    case IMGPU_OPT_ID_OPTIMIZE: run->save.optimize = 1; break;
    case IMGPU_OPT_ID_LOSSLESS: run->save.lossless = 1; break;
    default: run->save.strip = 1; break;
    }
    return 0;
}

/* --quality N (1..100), --png-level N (0..9) */
static int p_level(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)op;
    long n;
    const int q = o->id == IMGPU_OPT_ID_QUALITY;
    if (imgpu__parse_long(v, q ? 1 : 0, q ? 100 : 9, &n) < 0)
        return invalid(o, v);
    if (q)
        run->save.quality = (int)n;
    else
        run->save.png_level = (int)n;
    return 0;
}

static int p_subsampling(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)op;
    if (!strcmp(v, "444") || !strcmp(v, "4:4:4")) run->save.subsampling = IMGPU_SUBSAMPLING_444;
    else if (!strcmp(v, "422") || !strcmp(v, "4:2:2")) run->save.subsampling = IMGPU_SUBSAMPLING_422;
    else if (!strcmp(v, "420") || !strcmp(v, "4:2:0")) run->save.subsampling = IMGPU_SUBSAMPLING_420;
    else return invalid(o, v);
    return 0;
}

static int p_compression(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    (void)op;
    static const char *const names[] = { "none", "deflate", "lzw", "packbits", "zstd", "lzma",
                                         "jpeg", "webp" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(v, names[i])) {
            run->save.compression = (imgpu_compression)(IMGPU_COMPRESSION_NONE + i);
            return 0;
        }
    return invalid(o, v);
}

/* ---- the table ------------------------------------------------------------------------------ */

#define F_ALL IMGPU_FRONT_ALL
#define F_CLI IMGPU_FRONT_CLI
#define F_BATCH IMGPU_FRONT_BATCH
#define F_VIEW IMGPU_FRONT_VIEW
#define HINT_ANGLE "degrees, e.g. 30 or -12.5"
#define HINT_SIZE "a positive number of bytes, optionally with K, M or G"

const imgpu_opt imgpu_opt_table[] = {
    {"equalize", IMGPU_OPT_ID_EQUALIZE, NULL, IMGPU_OPT_ADD | IMGPU_OPT_EQ, F_BATCH | F_VIEW, p_add, "",
     "histogram equalization (as 'imgpu equalize')"},
    {"clahe", IMGPU_OPT_ID_CLAHE, NULL, IMGPU_OPT_ADD | IMGPU_OPT_CLAHE, F_BATCH | F_VIEW, p_add, "",
     "CLAHE (as 'imgpu clahe')"},
    {"rotate", IMGPU_OPT_ID_ROTATE, "DEG", IMGPU_OPT_ADD | IMGPU_OPT_ROT, F_BATCH | F_VIEW, p_angle,
     HINT_ANGLE, "rotation counterclockwise (as 'imgpu rotate --angle DEG')"},
    {"mode", IMGPU_OPT_ID_MODE, "luminance|per-channel", IMGPU_OPT_EQ | IMGPU_OPT_CLAHE, F_ALL, p_mode,
     "use luminance or per-channel", "luminance (default): Y of BT.601 YCbCr; per-channel: R, G, B"},
    {"formula", IMGPU_OPT_ID_FORMULA, "opencv|pil|imagemagick", IMGPU_OPT_EQ, F_CLI | F_BATCH, p_formula,
     "use opencv, pil or imagemagick", "equalization LUT (default opencv)"},
    {"clip", IMGPU_OPT_ID_CLIP, "X", IMGPU_OPT_CLAHE, F_ALL, p_clip,
     "a number 0..1000000; 0 disables clipping", "CLAHE clip limit (default 40)"},
    {"tiles", IMGPU_OPT_ID_TILES, "WxH", IMGPU_OPT_CLAHE, F_ALL, p_tiles,
     "WxH, each 1..256, e.g. 8x8", "CLAHE tile grid (default 8x8)"},
    {"angle", IMGPU_OPT_ID_ANGLE, "DEG", IMGPU_OPT_ROT, F_CLI, p_angle, HINT_ANGLE,
     "rotation in degrees, counterclockwise positive"},
    {"filter", IMGPU_OPT_ID_FILTER, "nearest|bilinear|bicubic", IMGPU_OPT_ROT, F_ALL, p_filter,
     "use nearest, bilinear or bicubic", "resampling filter (default bilinear)"},
    {"expand", IMGPU_OPT_ID_EXPAND, NULL, IMGPU_OPT_ROT, F_ALL, p_canvas, "",
     "grow the canvas to the rotated image (default)"},
    {"crop", IMGPU_OPT_ID_CROP, NULL, IMGPU_OPT_ROT, F_ALL, p_canvas, "", "keep the input size"},
    {"background", IMGPU_OPT_ID_BACKGROUND, "COLOR", IMGPU_OPT_ROT | IMGPU_OPT_SAVE, F_CLI | F_BATCH,
     p_color, "black, white, transparent, #RRGGBB, #RRGGBBAA or R,G,B[,A]",
     "fill for uncovered areas; what JPEG outputs flatten alpha onto (default white)"},
    {"depth", IMGPU_OPT_ID_DEPTH, "8", IMGPU_OPT_RUN, F_CLI | F_BATCH, p_depth,
     "8, or 16 to keep 16-bit images", "write 16-bit results as 8 bits"},
    {"max-pixels", IMGPU_OPT_ID_MAX_PIXELS, "N", IMGPU_OPT_RUN | IMGPU_OPT_LOAD, F_ALL, p_count,
     "a positive whole number", "refuse inputs, and results of an op, larger than N pixels"},
    {"max-memory", IMGPU_OPT_ID_MAX_MEMORY, "N", IMGPU_OPT_RUN, F_ALL, p_size, HINT_SIZE,
     "refuse an op that would need more than N bytes of memory"},
    {"max-file-size", IMGPU_OPT_ID_MAX_FILE_SIZE, "N", IMGPU_OPT_RUN | IMGPU_OPT_LOAD, F_ALL,
     p_size, HINT_SIZE, "refuse input files over N bytes"},
    {"max-decode-time", IMGPU_OPT_ID_MAX_DECODE_TIME, "S", IMGPU_OPT_RUN | IMGPU_OPT_LOAD,
     F_ALL, p_seconds, "a positive number of seconds", "give up decoding after S seconds"},
    {"no-auto-orient", IMGPU_OPT_ID_NO_AUTO_ORIENT, NULL, IMGPU_OPT_RUN | IMGPU_OPT_LOAD, F_ALL,
     p_flag, "", "keep the stored pixels and the EXIF orientation (default: turn upright)"},
    {"page", IMGPU_OPT_ID_PAGE, "N", IMGPU_OPT_RUN | IMGPU_OPT_LOAD, F_ALL, p_page,
     "a page number 0..65535", "the page of a multi-page TIFF to read (default 0)"},
    {"pages", IMGPU_OPT_ID_PAGES, "all", IMGPU_OPT_RUN, F_CLI, p_pages,
     "all: every page, into a multi-page TIFF",
     "every page of a multi-page TIFF through the op, into a multi-page TIFF output"},
    {"quality", IMGPU_OPT_ID_QUALITY, "N", IMGPU_OPT_SAVE, F_CLI | F_BATCH, p_level,
     "1..100", "JPEG and lossy WebP quality (default: JPEG 92, WebP 75)"},
    {"png-level", IMGPU_OPT_ID_PNG_LEVEL, "N", IMGPU_OPT_SAVE, F_CLI | F_BATCH, p_level,
     "0..9", "PNG deflate level (default 1: fast; 2..9 smaller, slower)"},
    {"subsampling", IMGPU_OPT_ID_SUBSAMPLING, "444|422|420", IMGPU_OPT_SAVE, F_CLI | F_BATCH,
     p_subsampling, "use 444, 422 or 420", "JPEG chroma subsampling (default 420)"},
    {"progressive", IMGPU_OPT_ID_PROGRESSIVE, NULL, IMGPU_OPT_SAVE, F_CLI | F_BATCH, p_flag, "",
     "write progressive JPEG"},
    {"optimize", IMGPU_OPT_ID_OPTIMIZE, NULL, IMGPU_OPT_SAVE, F_CLI | F_BATCH, p_flag, "",
     "JPEG with optimized Huffman tables (smaller, slower)"},
    {"compression", IMGPU_OPT_ID_COMPRESSION, "KIND", IMGPU_OPT_SAVE, F_CLI | F_BATCH,
     p_compression, "use none, deflate, lzw, packbits, zstd, lzma, jpeg or webp",
     "TIFF compression (default deflate)"},
    {"lossless", IMGPU_OPT_ID_LOSSLESS, NULL, IMGPU_OPT_SAVE, F_CLI | F_BATCH, p_flag, "",
     "lossless WebP"},
    {"strip", IMGPU_OPT_ID_STRIP, NULL, IMGPU_OPT_SAVE, F_CLI | F_BATCH, p_flag, "",
     "write no metadata (ICC profile, EXIF, XMP, text)"},
};
const size_t imgpu_opt_count = sizeof imgpu_opt_table / sizeof imgpu_opt_table[0];

imgpu_run_options imgpu_run_options_default(void)
{
    imgpu_run_options r;
    memset(&r, 0, sizeof r);
    r.save.png_level = -1;
    return r;
}

const imgpu_opt *imgpu_opt_find(const char *name, size_t len, unsigned front)
{
    for (size_t i = 0; i < imgpu_opt_count; i++) {
        const imgpu_opt *o = &imgpu_opt_table[i];
        if ((o->fronts & front) && strlen(o->name) == len && !strncmp(o->name, name, len))
            return o;
    }
    return NULL;
}

int imgpu_opt_apply(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run)
{
    return o->parse(o, v, op, run);
}
