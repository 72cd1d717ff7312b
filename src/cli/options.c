/* options.c — the one place options are parsed: --device, the op table's parameters
 * (src/op/op_table.h) and the table of limits and output options below; and the help of the
 * op options, generated from the op table (options.h says who uses it and how). */
#include "options.h"

#include "cli_values.h"
#include "op/op_table.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- usage errors ---------------------------------------------------------------------- */

static _Thread_local char s_usage[512];   /* per thread: the Python module parses options on many */

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

/* ---- --device ------------------------------------------------------------------------------- */

int imgpu_opt_device(const char *v, imgpu_device *d)
{
    if (imgpu_device_parse(v, d) < 0)
        return imgpu_usage_bad("invalid --device '%s' (use auto, cpu or cuda)", v);
    return 0;
}

/* ---- the op table's parameters: one parser per type ------------------------------------------ */

static int invalid_param(const imgpu_param *p, const char *v)
{
    return imgpu_usage_bad("invalid --%s '%s' (%s)", p->name, v, p->hint);
}

int imgpu_param_apply(const imgpu_param *p, const char *v, imgpu_op *op)
{
    void *dst = imgpu_param_ptr(op, p, p->offset);
    switch (p->type) {
    case IMGPU_PARAM_FLAG:
        *(int *)dst = p->flag_value;
        return 0;
    case IMGPU_PARAM_INT: {
        long n;
        if (imgpu__parse_long(v, (long)p->min, (long)p->max, &n) < 0)
            return invalid_param(p, v);
        *(int *)dst = (int)n;
        return 0;
    }
    case IMGPU_PARAM_DOUBLE: {
        double x;
        if (imgpu__parse_double(v, p->min, p->max, &x) < 0)
            return invalid_param(p, v);
        *(double *)dst = x;
        return 0;
    }
    case IMGPU_PARAM_LEVEL: {
        /* N in [min, max], or P% with P in [0, 100] */
        char buf[64];
        double x;
        const size_t n = strlen(v);
        const int pct = n > 0 && v[n - 1] == '%';
        if (n >= sizeof buf)
            return invalid_param(p, v);
        memcpy(buf, v, n - (size_t)pct);
        buf[n - (size_t)pct] = '\0';
        if (imgpu__parse_double(buf, pct ? 0.0 : p->min, pct ? 100.0 : p->max, &x) < 0)
            return invalid_param(p, v);
        *(double *)dst = x;
        *(int *)imgpu_param_ptr(op, p, p->offset2) = pct;
        return 0;
    }
    case IMGPU_PARAM_ENUM:
        for (int i = 0; p->choices[i]; i++)
            if (!strcmp(v, p->choices[i])) {
                *(int *)dst = i;
                return 0;
            }
        return invalid_param(p, v);
    case IMGPU_PARAM_SIZE: {
        /* WxH ('x' or 'X'), each side in [min, max] */
        char buf[32];
        long tw, th;
        size_t n = strcspn(v, "xX");
        if (strlen(v) >= sizeof buf || !v[n])
            return invalid_param(p, v);
        memcpy(buf, v, n);
        buf[n] = '\0';
        if (imgpu__parse_long(buf, (long)p->min, (long)p->max, &tw) < 0 ||
            imgpu__parse_long(v + n + 1, (long)p->min, (long)p->max, &th) < 0)
            return invalid_param(p, v);
        *(int *)dst = (int)tw;
        *(int *)imgpu_param_ptr(op, p, p->offset2) = (int)th;
        return 0;
    }
    case IMGPU_PARAM_RECT: {
        /* X,Y,W,H: X and Y in [min, max], W and H in [max(min, 1), max] */
        char buf[96];
        long r[4];
        const size_t len = strlen(v);
        if (len >= sizeof buf)
            return invalid_param(p, v);
        memcpy(buf, v, len + 1);
        char *s = buf;
        for (int k = 0; k < 4; k++) {
            char *comma = strchr(s, ',');
            if ((k < 3) != (comma != NULL))
                return invalid_param(p, v);
            if (comma)
                *comma = '\0';
            if (imgpu__parse_long(s, k < 2 ? (long)p->min : (long)(p->min > 1 ? p->min : 1), (long)p->max, &r[k]) < 0)
                return invalid_param(p, v);
            s = comma ? comma + 1 : s;
        }
        for (int k = 0; k < 4; k++)
            ((int *)dst)[k] = (int)r[k];
        *(int *)imgpu_param_ptr(op, p, p->offset2) = 1;
        return 0;
    }
    case IMGPU_PARAM_COLOR: {
        uint8_t c[4];
        if (imgpu__parse_color(v, c) < 0)
            return invalid_param(p, v);
        memcpy(dst, c, 4);
        *(int *)imgpu_param_ptr(op, p, p->offset2) = 1;
        return 0;
    }
    }
    return imgpu_usage_bad("internal: parameter --%s of an unknown type", p->name);
}

const imgpu_op_desc *imgpu_opt_find_op(const char *name, size_t len)
{
    for (int i = 0; i < imgpu_op_count(); i++) {
        const imgpu_op_desc *d = imgpu_op_at(i);
        if (strlen(d->name) == len && !strncmp(d->name, name, len))
            return d;
    }
    return NULL;
}

int imgpu_opt_add_op(const imgpu_op_desc *d, const char *v, imgpu_op *op)
{
    *op = imgpu_op_default(d->kind);
    const imgpu_param *p = d->add_param ? imgpu_op_param(d, d->add_param, strlen(d->add_param)) : NULL;
    if (p && imgpu_param_apply(p, v, op) < 0)
        return imgpu_usage_bad("invalid --%s '%s' (%s)", d->name, v, p->hint);
    return 0;
}

const imgpu_param *imgpu_opt_find_param(const imgpu_op_desc *d, const char *name, size_t len, unsigned front)
{
    for (int i = 0; i < imgpu_op_count(); i++) {
        const imgpu_op_desc *e = d ? d : imgpu_op_at(i);
        const imgpu_param *p = imgpu_op_param(e, name, len);
        if (p && (p->fronts & front))
            return p;
        if (d)
            break;
    }
    return NULL;
}

int imgpu_opt_op_has(const imgpu_op_desc *d, const imgpu_param *p, unsigned front)
{
    return imgpu_opt_find_param(d, p->name, strlen(p->name), front) != NULL;
}

void imgpu_opt_ops_with(const imgpu_param *p, unsigned front, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < imgpu_op_count(); i++) {
        const imgpu_op_desc *d = imgpu_op_at(i);
        if (imgpu_opt_op_has(d, p, front) && k < n)
            k += (size_t)snprintf(buf + k, n - k, "%s--%s", k ? " or " : "", d->name);
    }
}

int imgpu_opt_param_index(const imgpu_op_desc *d, const imgpu_param *p)
{
    for (int i = 0; i < d->nparams; i++)
        if (&d->params[i] == p)
            return i;
    return -1;
}

int imgpu_opt_check_flags(const imgpu_op_desc *d, const unsigned char *given)
{
    for (int i = 0; i < d->nparams; i++)
        for (int j = i + 1; j < d->nparams; j++) {
            const imgpu_param *a = &d->params[i], *b = &d->params[j];
            if (given[i] && given[j] && a->type == IMGPU_PARAM_FLAG && b->type == IMGPU_PARAM_FLAG &&
                a->offset == b->offset && a->flag_value != b->flag_value)
                return imgpu_usage_bad("--%s and --%s contradict each other", a->name, b->name);
        }
    return 0;
}

/* ---- help generated from the op table ----------------------------------------------------------
 * "  --NAME METAVAR" padded to column 23 (two spaces after a longer one), then the text; its
 * further lines start at column 23. */
static void help_entry(FILE *f, const char *lhs, const char *text)
{
    if (strlen(lhs) <= 20)
        fprintf(f, "  %-20s ", lhs);
    else
        fprintf(f, "  %s  ", lhs);
    for (const char *t = text; *t;) {
        size_t n = strcspn(t, "\n");
        fprintf(f, "%.*s\n", (int)n, t);
        t += n;
        if (*t == '\n' && *++t)
            fprintf(f, "%23s", "");
    }
}

void imgpu_opt_help_params(FILE *f, const imgpu_op_desc *d)
{
    for (int i = 0; i < d->nparams; i++) {
        const imgpu_param *p = &d->params[i];
        if (!(p->fronts & IMGPU_FRONT_CLI) || !p->doc)
            continue;
        char lhs[96];
        snprintf(lhs, sizeof lhs, "--%s%s%s", p->name, p->metavar ? " " : "", p->metavar ? p->metavar : "");
        help_entry(f, lhs, p->doc);
    }
}

void imgpu_opt_help_batch_ops(FILE *f)
{
    for (int i = 0; i < imgpu_op_count(); i++) {
        const imgpu_op_desc *d = imgpu_op_at(i);
        const imgpu_param *v = d->add_param ? imgpu_op_param(d, d->add_param, strlen(d->add_param)) : NULL;
        char lhs[96];
        snprintf(lhs, sizeof lhs, "--%s%s%s", d->name, v ? " " : "", v ? v->metavar : "");
        help_entry(f, lhs, d->batch_doc);
    }
}

void imgpu_opt_help_view_ops(FILE *f)
{
    for (int i = 0; i < imgpu_op_count(); i++)
        fputs(imgpu_op_at(i)->view_doc, f);
}

void imgpu_opt_help_view_keys(char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < imgpu_op_count() && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s", imgpu_op_at(i)->view_keys);
}

/* ---- the run options: one parser per kind of value ------------------------------------------- */

/* --flatten (and --background where no op of the command has a parameter of that name): what
 * alpha is flattened onto for outputs without alpha (JPEG). A rotation's fill is its own
 * parameter, --background (src/op/rotate.c). */
static int p_color(const imgpu_opt *o, const char *v, imgpu_run_options *run)
{
    uint8_t c[4];
    if (imgpu__parse_color(v, c) < 0)
        return invalid(o, v);
    memcpy(run->save.background, c, 4);
    run->save.has_background = 1;
    return 0;
}

static int p_depth(const imgpu_opt *o, const char *v, imgpu_run_options *run)
{
    if (strcmp(v, "8") && strcmp(v, "16"))
        return invalid(o, v);
    run->out_depth = !strcmp(v, "8") ? 8 : 0;
    return 0;
}

/* A positive whole number (--max-pixels). */
static int p_count(const imgpu_opt *o, const char *v, imgpu_run_options *run)
{
    uint64_t n;
    if (imgpu__parse_u64(v, &n) < 0 || n == 0)
        return invalid(o, v);
    run->load.max_pixels = n;
    return 0;
}

/* Bytes with an optional K, M or G (--max-memory, --max-file-size): io.c's parser, which
 * the IMGPU_MAX_* variables use too. */
static int p_size(const imgpu_opt *o, const char *v, imgpu_run_options *run)
{
    uint64_t *dst = o->id == IMGPU_OPT_ID_MAX_MEMORY ? &run->max_memory : &run->load.max_file_bytes;
    if (imgpu_parse_size(v, dst) < 0)
        return invalid(o, v);
    return 0;
}

static int p_seconds(const imgpu_opt *o, const char *v, imgpu_run_options *run)
{
    if (imgpu_parse_seconds(v, &run->load.max_decode_ms) < 0)
        return invalid(o, v);
    return 0;
}

/* --page N: 0-based, up to 65535 */
static int p_page(const imgpu_opt *o, const char *v, imgpu_run_options *run)
{
    long n;
    if (imgpu__parse_long(v, 0, 65535, &n) < 0)
        return invalid(o, v);
    run->load.page = (int)n;
    return 0;
}

/* --pages all (the one value for now: every page) */
static int p_pages(const imgpu_opt *o, const char *v, imgpu_run_options *run)
{
    if (strcmp(v, "all"))
        return invalid(o, v);
    run->all_pages = 1;
    return 0;
}

/* --no-auto-orient, --progressive, --optimize, --lossless, --strip */
static int p_flag(const imgpu_opt *o, const char *v, imgpu_run_options *run)
{
    (void)v;
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
static int p_level(const imgpu_opt *o, const char *v, imgpu_run_options *run)
{
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

static int p_subsampling(const imgpu_opt *o, const char *v, imgpu_run_options *run)
{
    if (!strcmp(v, "444") || !strcmp(v, "4:4:4")) run->save.subsampling = IMGPU_SUBSAMPLING_444;
    else if (!strcmp(v, "422") || !strcmp(v, "4:2:2")) run->save.subsampling = IMGPU_SUBSAMPLING_422;
    else if (!strcmp(v, "420") || !strcmp(v, "4:2:0")) run->save.subsampling = IMGPU_SUBSAMPLING_420;
    else return invalid(o, v);
    return 0;
}

static int p_compression(const imgpu_opt *o, const char *v, imgpu_run_options *run)
{
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
#define HINT_SIZE "a positive number of bytes, optionally with K, M or G"

const imgpu_opt imgpu_opt_table[] = {
    {"flatten", IMGPU_OPT_ID_BACKGROUND, "COLOR", IMGPU_OPT_SAVE, F_CLI | F_BATCH,
     p_color, "black, white, transparent, #RRGGBB, #RRGGBBAA or R,G,B[,A]",
     "what JPEG outputs flatten alpha onto (default white)"},
    {"background", IMGPU_OPT_ID_BACKGROUND, "COLOR", IMGPU_OPT_SAVE | IMGPU_OPT_YIELDS,
     F_CLI | F_BATCH, p_color, "black, white, transparent, #RRGGBB, #RRGGBBAA or R,G,B[,A]",
     "--flatten, where the command has no --background of its own (rotate's fill)"},
    {"depth", IMGPU_OPT_ID_DEPTH, "8", IMGPU_OPT_RUN, F_CLI | F_BATCH, p_depth,
     "8, or 16 to keep 16-bit images", "write 16-bit results as 8 bits"},
    {"max-pixels", IMGPU_OPT_ID_MAX_PIXELS, "N", IMGPU_OPT_RUN | IMGPU_OPT_LOAD, F_ALL, p_count,
     "a positive whole number", "refuse inputs, and results of an op, larger than N pixels"},
    {"max-memory", IMGPU_OPT_ID_MAX_MEMORY, "N", IMGPU_OPT_RUN | IMGPU_OPT_LOAD, F_ALL, p_size,
     HINT_SIZE, "refuse an op, or a decode, that would need more than N bytes of memory"},
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

int imgpu_opt_apply(const imgpu_opt *o, const char *v, imgpu_run_options *run)
{
    return o->parse(o, v, run);
}
