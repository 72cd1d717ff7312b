/* main.c — the imgpu command line: `imgpu COMMAND ARGS [OPTIONS]` for equalize, rotate,
 * histogram, info and compare. It parses and validates everything it can before touching
 * the input (usage errors exit 2 with no file written), then builds an op pipeline on the
 * operations API and reports failures as "imgpu: <message>" with exit status 1. Nothing
 * below main() exits; every command returns its status.
 *
 * Exit status: 0 success, 1 processing error (unreadable input, failed write, no GPU for
 * --device cuda, compare over --max-abs), 2 usage error.
 */
#include "batch/batch.h"
#include "cli_values.h"
#include "cli/compare.h"
#include "error.h"
#include "exif.h"
#include "image.h"
#include "io.h"
#include "ops.h"
#include "cli/options.h"
#include "cli/plot.h"
#include "cli/suggest.h"
#include "session.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>
#include <sys/stat.h>

#ifndef IMGPU_VERSION
#define IMGPU_VERSION "unknown"
#endif

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* ---- commands and options ------------------------------------------------------------- */

/* The commands that are not ops; every op of the op table (src/op/op_table.h) is a command too,
 * `imgpu OP IN OUT [OPTIONS]`, run by the one generic command below (CMD_OP). */
enum { CMD_HISTOGRAM, CMD_INFO, CMD_COMPARE, CMD_COUNT, CMD_OP = CMD_COUNT };

#define C_OP (1u << CMD_OP)
#define C_HIST (1u << CMD_HISTOGRAM)
#define C_INFO (1u << CMD_INFO)
#define C_CMP (1u << CMD_COMPARE)
#define C_PROC (C_OP | C_HIST)                /* run ops: --device */
#define C_SAVE (C_OP | C_HIST | C_CMP)        /* may write an image (--plot, --diff) */
#define C_ALL (C_PROC | C_INFO | C_CMP)

/* The options of the commands themselves; the op options and limits are options.h's table. */
typedef enum opt_id {
    OPT_DEVICE, OPT_QUIET, OPT_FORCE, OPT_FORMAT, OPT_JSON,
    OPT_CSV, OPT_PLOT, OPT_DIFF, OPT_MAX_ABS,
    OPT_BINS, OPT_RANGE,
    OPT_LOG, OPT_CDF,
} opt_id;

typedef struct opt_spec {
    const char *name;   /* without the leading "--" */
    opt_id id;
    int takes_value;
    unsigned cmds;      /* C_* mask of the commands that accept it */
} opt_spec;

static const opt_spec s_options[] = {
    {"device", OPT_DEVICE, 1, C_PROC},
    {"quiet", OPT_QUIET, 0, C_ALL},
    {"format", OPT_FORMAT, 1, C_SAVE},
    {"json", OPT_JSON, 0, C_INFO},
    {"force", OPT_FORCE, 0, C_SAVE},
    {"csv", OPT_CSV, 0, C_HIST},
    {"plot", OPT_PLOT, 1, C_HIST},
    {"diff", OPT_DIFF, 1, C_CMP},
    {"max-abs", OPT_MAX_ABS, 1, C_CMP},
    {"bins", OPT_BINS, 1, C_HIST},
    {"range", OPT_RANGE, 1, C_HIST},
    {"log", OPT_LOG, 0, C_HIST},
    {"cdf", OPT_CDF, 0, C_HIST},
};

/* Everything one invocation asked for, validated. */
typedef struct cli {
    int cmd;                /* CMD_*; CMD_OP for an op of the table */
    const imgpu_op_desc *opd; /* that op (NULL for the other commands) */
    const char *pos[2];
    int npos;
    imgpu_device device;
    int device_given;       /* --device was on the command line (it wins over IMGPU_DEVICE) */
    imgpu_run_options run;  /* limits (--max-*) and --depth, from options.h's table */
    int quiet;
    imgpu_save_options save;
    int force;
    imgpu_op op;            /* an op command's op, its parameters set from the op table */
    unsigned char given[64]; /* which of its parameters the command line gave */
    int csv;
    const char *plot;
    const char *diff;
    int have_max_abs;
    long max_abs;
    long bins;              /* 0: default */
    int have_range;
    long range_lo, range_hi;
    int log_y, cdf;         /* --log, --cdf: how --plot draws */
    int json;               /* info --json */
    const char **files;     /* info: every file named (pos[] holds the first two) */
    int nfiles;
} cli;

typedef struct command {
    const char *name;
    int npos;            /* positional arguments, exactly; -1: one or more (info) */
    const char *args;    /* their names, for messages */
    const char *summary;
    const char *help;    /* options part of `imgpu CMD --help` */
    int (*run)(const cli *c);
} command;

/* ---- help ------------------------------------------------------------------------------ */

#define HELP_DEVICE                                                                         \
    "  --device auto|cpu|cuda  backend (default auto: the CPU for jobs it finishes before\n" \
    "                       CUDA could start, else CUDA when a usable GPU is present, else the\n" \
    "                       CPU with a one-line notice; cuda without a GPU fails; the default\n" \
    "                       comes from IMGPU_DEVICE when set: IMGPU_DEVICE=cpu silences GPUs)\n"
#define HELP_LOAD                                                                           \
    "  --max-pixels N       refuse inputs, and results of an op, larger than N pixels\n"      \
    "                       (default 268435456 = 2^28)\n"                                      \
    "  --max-file-size N    refuse input files over N bytes (K, M, G suffixes; default 1G)\n"   \
    "  --max-decode-time S  give up decoding a file after S seconds (default 30)\n"           \
    "                       (environment: IMGPU_MAX_PIXELS, IMGPU_MAX_FILE_SIZE,\n"            \
    "                       IMGPU_MAX_DECODE_TIME; an option wins over its variable)\n"      \
    "  --no-auto-orient     keep the stored pixels and the EXIF orientation (default: turn\n" \
    "                       the image upright on load, as viewers and OpenCV do)\n"            \
    "  --page N             the page of a multi-page TIFF to read (0-based; default 0)\n"
#define HELP_PAGES                                                                          \
    "  --pages all          every page of a multi-page TIFF through the op, into a\n"        \
    "                       multi-page TIFF output (other outputs hold one image)\n"
#define HELP_MEMORY                                                                         \
    "  --max-memory N       refuse an op, or the decode of an input, that would need more\n" \
    "                       than N bytes of memory (input + result + working buffers;\n"    \
    "                       checked from the header; K, M, G suffixes; default 8G;\n"       \
    "                       environment: IMGPU_MAX_MEMORY)\n"
#define HELP_MEMORY_READ                                                                    \
    "  --max-memory N       refuse to decode an input that would need more than N bytes\n"  \
    "                       of memory (file + image + decoder buffers; checked from the\n"  \
    "                       header; K, M, G suffixes; default 8G; env IMGPU_MAX_MEMORY)\n"
#define HELP_QUIET "  --quiet              no notices on stderr (errors are still printed)\n"
#define HELP_SAVE                                                                           \
    "  --quality N          JPEG and lossy WebP quality 1..100 (default: JPEG 92,\n"        \
    "                       WebP 75)\n"                                                      \
    "  --subsampling 444|422|420  JPEG chroma subsampling (default 420)\n"                 \
    "  --progressive        progressive JPEG;  --optimize  optimized Huffman tables\n"      \
    "  --png-level N        PNG deflate level 0..9 (default 1: fast run-length coding;\n"   \
    "                       2..9: LZ77, slower, smaller for graphics with repeats)\n"       \
    "  --compression KIND   TIFF: none, deflate (default), lzw, packbits, zstd, lzma, jpeg,\n" \
    "                       webp\n"                                                          \
    "  --lossless           lossless WebP (default lossy at --quality)\n"                   \
    "  --background COLOR   what alpha is flattened onto for JPEG (default white)\n"         \
    "  --strip              write no metadata (default: the input's ICC profile, EXIF, XMP\n" \
    "                       and PNG text travel to the output where its format holds them)\n" \
    "  --format EXT         the output format when the name has none ('-': standard output)\n" \
    "  --force              allow the output to overwrite the input file\n"
#define HELP_TAIL_READ                                                                      \
    "  -h, --help           this help\n"                                                    \
    "Options may come before or after the file names; --opt=value and --opt value both\n"   \
    "work; '--' ends the options. Exit status: 0 success, 1 failure, 2 usage error.\n"
#define HELP_TAIL                                                                           \
    HELP_TAIL_READ                                                                          \
    "Output formats follow the extension: .png .jpg .jpeg .tif .tiff .webp .bmp .tga .pnm\n" \
    ".pgm .ppm (16-bit images stay 16-bit in PNG, TIFF and PNM; JPEG, WebP, BMP and TGA\n"  \
    "store 8 bits). '-' as the input reads standard input, as the output writes standard\n"  \
    "output (with --format).\n"

/* --depth: the op commands' (after their parameters) */
#define HELP_DEPTH "  --depth 8            write a 16-bit result as 8 bits (default: keep the depth)\n"
/* What every op command's help has after its parameters. */
static const char s_help_op_tail[] = HELP_DEPTH HELP_DEVICE HELP_LOAD HELP_PAGES HELP_MEMORY HELP_SAVE HELP_QUIET HELP_TAIL;

static const char s_help_histogram[] =
    "Print the 256-bin histogram of each channel (gray; R, G, B; alpha) and, for color\n"
    "images, of the luminance Y (BT.601, the Y that equalize uses).\n"
    "Default output: min, max, mean, standard deviation and median per channel, and the\n"
    "share of pixels in 16 bins: of 16 levels (8-bit), or over the data's range (16-bit).\n"
    "\n"
    "options:\n"
    "  --csv                print 'value,<channels>' and 256 rows of counts instead\n"
    "                       (columns: gray | R,G,B; then alpha; then Y)\n"
    "  --plot OUT           also draw the histogram as a chart and save it to OUT: a title\n"
    "                       (file, channels, depth, bins, range), one panel per column of\n"
    "                       --csv; x in the image's levels, y in pixels per bin. Each bin\n"
    "                       asked for is one bar; over 640 bins, a pixel column shows the\n"
    "                       tallest of its ceil(N/640) bins\n"
    "  --log                plot y on a log10 scale (decades from 1; needs --plot)\n"
    "  --cdf                plot the cumulative share of the range's pixels too, on a\n"
    "                       0..100% axis at the right (needs --plot)\n"
    "  --bins N             count into N equal bins (default: the table 16, the plot and\n"
    "                       --csv 256, or fewer levels)\n"
    "  --range LO:HI        only levels LO..HI (default: 0..255; 16-bit: the table and the\n"
    "                       plot span the data's range, min..max, and say so; --csv 0..65535)\n" HELP_DEVICE HELP_LOAD
        HELP_MEMORY_READ HELP_SAVE HELP_QUIET HELP_TAIL;

static const char s_help_info[] =
    "Print each file's format (from its content, not its name), width x height, channels\n"
    "(gray, gray+alpha, RGB, RGBA), bit depth, colour space (Gray, RGB; JPEG: CMYK, YCCK),\n"
    "pages (TIFF), EXIF orientation, ICC profile, camera and date (EXIF) and file size; a\n"
    "blank line between files. Each image is\n"
    "decoded, so a corrupt file is reported as such; the others are still printed, and the\n"
    "exit status is 1 if any failed. Dimensions are as loaded: upright unless\n"
    "--no-auto-orient.\n"
    "\n"
    "options:\n"
    "  --json               one JSON object per line and file: path, format, width, height,\n"
    "                       channels, depth, pages, page, orientation, oriented, icc\n"
    "                       ({description, bytes} or null), exif, xmp, camera, date,\n"
    "                       colour_space, colour_converted, file_size; a file that\n"
    "                       fails: {path, error}\n"
    HELP_LOAD HELP_MEMORY_READ HELP_QUIET HELP_TAIL_READ;

static const char s_help_compare[] =
    "Compare two images of the same size and channels, over all channels (alpha too):\n"
    "max and mean absolute difference, PSNR in dB (inf when identical), and the number of\n"
    "pixels that differ. Different sizes or channel counts are an error (exit 1).\n"
    "16-bit images are compared in 16-bit levels (PSNR against 65535); an 8-bit image against\n"
    "a 16-bit one is scaled by 257 (0..255 onto 0..65535) first, and a note says so.\n"
    "\n"
    "options:\n"
    "  --diff OUT           write |A-B| as an opaque image (gray, or RGB for color inputs;\n"
    "                       an alpha difference shows in every color channel), amplified\n"
    "                       by the gain 255 / max-difference rounded down, so the largest\n"
    "                       difference is near white and a 1-level one is plainly visible;\n"
    "                       the gain used is printed; 16-bit comparisons write a 16-bit image\n"
    "  --max-abs N          exit 1 when the max absolute difference exceeds N (in the levels\n"
    "                       of the comparison: 16-bit ones where an image is 16-bit)\n" HELP_LOAD
        HELP_MEMORY_READ HELP_SAVE HELP_QUIET HELP_TAIL;

static int cmd_op(const cli *c);
static int cmd_histogram(const cli *c);
static int cmd_info(const cli *c);
static int cmd_compare(const cli *c);

static const command s_commands[CMD_COUNT] = {
    [CMD_HISTOGRAM] = {"histogram", 1, "IN", "histogram as a table, CSV or plot",
                       s_help_histogram, cmd_histogram},
    [CMD_INFO] = {"info", -1, "IN...", "format, size, depth, pages, orientation, ICC, EXIF",
                  s_help_info, cmd_info},
    [CMD_COMPARE] = {"compare", 2, "A B", "difference metrics (max, mean, PSNR), diff image",
                     s_help_compare, cmd_compare},
};

static void print_main_help(FILE *f)
{
    fprintf(f, "usage: imgpu COMMAND ARGS [OPTIONS]\n"
               "\n"
               "GPU-accelerated image processing (CUDA, with the CPU as reference and fallback).\n"
               "\n"
               "commands:\n");
    for (int i = 0; i < imgpu_op_count(); i++) {
        const imgpu_op_desc *d = imgpu_op_at(i);
        char lhs[64];
        snprintf(lhs, sizeof lhs, "%s %s", d->name, d->args);
        fprintf(f, "  %-28s %s\n", lhs, d->summary);
    }
    for (int i = 0; i < CMD_COUNT; i++) {
        char lhs[64];
        snprintf(lhs, sizeof lhs, "%s %s", s_commands[i].name, s_commands[i].args);
        fprintf(f, "  %-28s %s\n", lhs, s_commands[i].summary);
    }
    fprintf(f, "  %-28s %s\n", "batch [OPS] -o OUTDIR INPUTS", "many files through a pipelined decode/GPU/encode");
    fprintf(f, "  %-28s %s\n", "view FILE... [--snapshot OUT]", "interactive viewer (GPU, live controls); headless snapshots");
    fprintf(f, "  %-28s %s\n", "bench [--help]", "benchmarks: GPU kernels against CUB/NPP; --cpu (or no GPU): the CPU vs OpenCV");
    fprintf(f, "\n"
               "'imgpu COMMAND --help' lists a command's options; 'imgpu --version' prints the\n"
               "version and whether CUDA support is built in.\n"
               "Inputs: PNG, JPEG, TIFF, WebP, BMP, TGA, PNM (PNG, TIFF and PNM also 16-bit),\n"
               "recognised by content; '-' reads standard input. Outputs: the format follows\n"
               "the extension (.png .jpg .jpeg .tif .tiff .webp .bmp .tga .pnm .pgm .ppm) or\n"
               "--format; '-' writes standard output.\n"
               "Exit status: 0 success, 1 processing error, 2 usage error.\n");
}

static void print_command_help(const command *cmd, const imgpu_op_desc *opd)
{
    printf("usage: imgpu %s %s [OPTIONS]\n\n", cmd->name, cmd->args);
    if (!opd) {
        fputs(cmd->help, stdout);
        return;
    }
    /* an op's help: its paragraph and parameters from the op table, then what every op takes */
    printf("%s\noptions:\n", opd->doc);
    imgpu_opt_help_params(stdout, opd);
    fputs(s_help_op_tail, stdout);
}

/* The command named `name`: one of s_commands, or an op of the op table (*opd then names it;
 * *cmd is filled from its descriptor). -1 when there is none. */
static int find_command(const char *name, command *cmd, const imgpu_op_desc **opd)
{
    *opd = imgpu_op_find(name);
    if (*opd) {
        *cmd = (command){(*opd)->name, 2, (*opd)->args, (*opd)->summary, NULL, cmd_op};
        return CMD_OP;
    }
    for (int i = 0; i < CMD_COUNT; i++)
        if (!strcmp(name, s_commands[i].name)) {
            *cmd = s_commands[i];
            return i;
        }
    return -1;
}

/* ---- error reporting ------------------------------------------------------------------- */

/* A usage problem found while parsing (options.h's one helper); printed with the --help hint. */
#define bad imgpu_usage_bad

/* " (did you mean '--quality'?)" for a mistyped option or command, else "" (suggest.h). */
static const char *did_you_mean_option(const cli *c, const char *name, size_t len);
static const char *did_you_mean_command(const char *name);

static int usage_exit(const char *cmd_name)
{
    fprintf(stderr, "imgpu: %s\n", imgpu_usage_message());
    if (cmd_name)
        fprintf(stderr, "try 'imgpu %s --help'\n", cmd_name);
    else
        fprintf(stderr, "try 'imgpu --help'\n");
    return EXIT_USAGE;
}

/* A processing failure: the message was recorded where it was detected. */
static int fail(void)
{
    const char *m = imgpu_error_message();
    fprintf(stderr, "imgpu: %s\n", m[0] ? m : "unknown error");
    return EXIT_FAIL;
}

/* Report output is the product of histogram/info/compare: a full disk or closed pipe
 * must not end in exit 0. */
static int finish_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        imgpu_error("cannot write to standard output: %s", strerror(errno ? errno : EIO));
        return fail();
    }
    return EXIT_OK;
}

/* ---- value parsing ---------------------------------------------------------------------- */


/* ---- argument parsing ------------------------------------------------------------------- */

static int apply_option(cli *c, const opt_spec *o, const char *v)
{
    switch (o->id) {
    case OPT_DEVICE:
        if (imgpu_opt_device(v, &c->device) < 0)
            return -1;
        c->device_given = 1;
        return 0;
    case OPT_QUIET: c->quiet = 1; return 0;
    case OPT_FORMAT: {
        char probe[40];
        if (strlen(v) > 16 || strchr(v, '/') ||
            (snprintf(probe, sizeof probe, "x.%s", v),
             (c->run.save.format = imgpu_format_from_path(probe)) == IMGPU_FORMAT_UNKNOWN))
            return bad("invalid --format '%s' (png, jpg, tif, webp, bmp, tga, pnm, pgm or ppm)", v);
        return 0;
    }
    case OPT_JSON: c->json = 1; return 0;
    case OPT_FORCE: c->force = 1; return 0;
    case OPT_CSV: c->csv = 1; return 0;
    case OPT_PLOT:
    case OPT_DIFF:
        if (!*v)
            return bad("--%s needs a file name", o->name);
        if (o->id == OPT_PLOT) c->plot = v;
        else c->diff = v;
        return 0;
    case OPT_MAX_ABS:
        if (imgpu__parse_long(v, 0, 65535, &c->max_abs) < 0) /* 16-bit comparisons reach 65535 */
            return bad("invalid --max-abs '%s' (0..65535)", v);
        c->have_max_abs = 1;
        return 0;
    case OPT_BINS:
        if (imgpu__parse_long(v, 1, 65536, &c->bins) < 0)
            return bad("invalid --bins '%s' (1..65536)", v);
        return 0;
    case OPT_RANGE: {
        char buf[32], *colon;
        if (strlen(v) >= sizeof buf)
            return bad("invalid --range '%s' (LO:HI)", v);
        strcpy(buf, v);
        colon = strchr(buf, ':');
        if (!colon)
            return bad("invalid --range '%s' (LO:HI)", v);
        *colon = '\0';
        if (imgpu__parse_long(buf, 0, 65535, &c->range_lo) < 0 ||
            imgpu__parse_long(colon + 1, 0, 65535, &c->range_hi) < 0 || c->range_lo > c->range_hi)
            return bad("invalid --range '%s' (LO:HI with 0 <= LO <= HI <= 65535)", v);
        c->have_range = 1;
        return 0;
    }
    case OPT_LOG: c->log_y = 1; return 0;
    case OPT_CDF: c->cdf = 1; return 0;
    }
    return bad("internal: unhandled option --%s", o->name);
}

static const opt_spec *find_option(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof s_options / sizeof s_options[0]; i++)
        if (strlen(s_options[i].name) == len && !strncmp(s_options[i].name, name, len))
            return &s_options[i];
    return NULL;
}

/* Whether an entry of options.h's table applies to the command: --depth and --max-memory to
 * the op commands, the output options to the commands that write an image, the load limits to
 * all. */
static int shared_applies(const imgpu_opt *o, const cli *c)
{
    if (o->sets & IMGPU_OPT_LOAD)
        return 1;
    if (o->sets & IMGPU_OPT_SAVE)   /* the commands that write an image (--plot, --diff too) */
        return c->opd || ((C_SAVE >> c->cmd) & 1);
    if (o->sets & IMGPU_OPT_RUN)
        return c->opd != NULL;
    return 0;
}

/* An option of the op table or options.h's table: the op command's parameter (p) and/or the
 * run option (so; --background is both: a rotation's fill and what JPEG flattens onto). */
static int apply_shared(cli *c, const imgpu_param *p, const imgpu_opt *so, const char *v)
{
    if (p) {
        if (imgpu_param_apply(p, v, &c->op) < 0)
            return -1;
        const int k = imgpu_opt_param_index(c->opd, p);
        if (k >= 0 && k < (int)sizeof c->given)
            c->given[k] = 1;
    }
    return so ? imgpu_opt_apply(so, v, &c->run) : 0;
}

static int parse_args(int argc, char **argv, cli *c, const command *cmd)
{
    const unsigned mask = 1u << c->cmd;
    int end_of_options = 0;

    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!end_of_options && !strcmp(a, "--")) {
            end_of_options = 1;
            continue;
        }
        /* "-" alone is a file name, not an option. */
        if (end_of_options || a[0] != '-' || a[1] == '\0') {
            if (cmd->npos < 0) {
                if (!c->files && !(c->files = calloc((size_t)argc, sizeof *c->files)))
                    return bad("out of memory");
                c->files[c->nfiles++] = a;
                if (c->npos < 2)
                    c->pos[c->npos++] = a;
                continue;
            }
            if (c->npos == cmd->npos)
                return bad("unexpected argument '%s' (%s takes %s)", a, cmd->name, cmd->args);
            c->pos[c->npos++] = a;
            continue;
        }
        if (a[1] != '-')
            return bad("unknown option '%s'", a);
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        /* the command's own options, an op's parameter (this op's, or another's: then it does
         * not apply), the limits and output options */
        const opt_spec *o = find_option(name, len);
        const imgpu_param *any = o ? NULL : imgpu_opt_find_param(NULL, name, len, IMGPU_FRONT_CLI);
        const imgpu_param *p = o || !c->opd ? NULL : imgpu_opt_find_param(c->opd, name, len, IMGPU_FRONT_CLI);
        const imgpu_opt *so = o ? NULL : imgpu_opt_find(name, len, IMGPU_FRONT_CLI);
        if (!o && !so && !any)
            return bad("unknown option '--%.*s'%s", (int)len, name, did_you_mean_option(c, name, len));
        if (so && !shared_applies(so, c))
            so = NULL;
        if (o ? !(o->cmds & mask) : !p && !so)
            return bad("option '--%s' does not apply to '%s'", o ? o->name : any ? any->name : imgpu_opt_find(name, len, IMGPU_FRONT_CLI)->name, cmd->name);
        const char *oname = o ? o->name : p ? p->name : so->name;
        const char *value = NULL;
        if (o ? o->takes_value : p ? p->metavar != NULL : so->metavar != NULL) {
            /* The next word is the value even when it starts with '-': --angle -30. */
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return bad("option '--%s' needs a value", oname);
        } else if (eq) {
            return bad("option '--%s' takes no value", oname);
        }
        if ((o ? apply_option(c, o, value) : apply_shared(c, p, so, value)) < 0)
            return -1;
    }
    if (c->npos < cmd->npos || (cmd->npos < 0 && c->npos == 0))
        return bad("%s needs %s", cmd->name, cmd->args);
    if (c->opd) {
        if (imgpu_opt_check_flags(c->opd, c->given) < 0)
            return -1;
        for (int k = 0; k < c->opd->nparams && k < (int)sizeof c->given; k++) {
            const imgpu_param *q = &c->opd->params[k];
            if (q->required && !c->given[k])
                return bad("%s needs --%s %s", cmd->name, q->name, q->metavar ? q->metavar : "");
        }
    }
    return 0;
}

/* 1 when --help or -h appears among the options: help wins over any other mistake. */
static int wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            return 0;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
    }
    return 0;
}

/* ---- output path checks (before any input is read) ---------------------------------------- */

/* realpath() of the directory part joined with the last component, so a file that does not
 * exist yet still gets a canonical name. NULL when the directory cannot be resolved. */
static char *canonical_path(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    const char *base;
    if (!slash) {
        dir = strdup(".");
        base = path;
    } else {
        size_t n = slash == path ? 1 : (size_t)(slash - path); /* "/x" -> dir "/" */
        dir = strndup(path, n);
        base = slash + 1;
    }
    if (!dir)
        return NULL;
    char *real = realpath(dir, NULL);
    free(dir);
    if (!real)
        return NULL;
    size_t len = strlen(real) + 1 + strlen(base) + 1;
    char *out = malloc(len);
    if (out)
        snprintf(out, len, "%s/%s", real, base);
    free(real);
    return out;
}

/* 1 when writing `out` would replace the file `in`: the same inode when both exist (this
 * catches hard and symbolic links), or the same canonical name. */
static int same_file(const char *in, const char *out)
{
    struct stat si, so;
    if (stat(in, &si) == 0 && stat(out, &so) == 0 && si.st_dev == so.st_dev &&
        si.st_ino == so.st_ino)
        return 1;
    char *a = canonical_path(in), *b = canonical_path(out);
    int same = a && b ? !strcmp(a, b) : !strcmp(in, out);
    free(a);
    free(b);
    return same;
}

/* An output's format must be known and it must not clobber an input (unless --force). */
static int check_output(const cli *c, const char *out, const char *in1, const char *in2)
{
    if (!strcmp(out, "-")) {   /* standard output: the format must be named */
        if (!c->run.save.format)
            return bad("writing to standard output ('-') needs --format (png, jpg, tif, webp, "
                       "bmp, tga, pnm)");
        return 0;
    }
    struct stat st;
    const size_t olen = strlen(out);
    if ((olen && out[olen - 1] == '/') || (stat(out, &st) == 0 && S_ISDIR(st.st_mode)))
        return bad("output '%s' is a folder: name a file (e.g. '%s%sout.png')", out, out,
                   olen && out[olen - 1] == '/' ? "" : "/");
    const char *unwritable = imgpu_format_unwritable_from_path(out);
    if (!c->run.save.format && unwritable)
        return bad("cannot write '%s': %s output is not supported (use " IMGPU_EXTENSIONS_HINT
                   ", or --format)", out, unwritable);
    if (!c->run.save.format && imgpu_format_from_path(out) == IMGPU_FORMAT_UNKNOWN)
        return bad("cannot tell the output format of '%s' from its extension (use "
                   IMGPU_EXTENSIONS_HINT ", or --format)", out);

    if (!c->force && strcmp(in1, "-") && (!in2 || strcmp(in2, "-"))) {
        if (same_file(in1, out) || (in2 && same_file(in2, out)))
            return bad("output '%s' is the input file '%s'; add --force to overwrite it", out,
                       in2 && same_file(in2, out) ? in2 : in1);
    }
    return 0;
}

/* Output options the output's format does not use are named once (not silently dropped). */
static void note_ignored_options(const cli *c, const char *out)
{
    if (!out)
        return;
    imgpu_save_options_note_ignored(&c->run.save, c->run.save.format ? c->run.save.format
                                                                    : imgpu_format_from_path(out));
}

static int validate(cli *c)
{
    if (c->opd) {
        if (c->run.all_pages && c->run.load.page)
            return bad("--pages all and --page %d contradict each other", c->run.load.page);
        if (c->run.all_pages && check_output(c, c->pos[1], c->pos[0], NULL) == 0 &&
            !imgpu_format_has_pages(c->run.save.format ? c->run.save.format
                                                       : imgpu_format_from_path(c->pos[1])))
            return bad("--pages all writes every page into one file: '%s' cannot hold pages "
                       "(write a .tif, or pick one page with --page N)", c->pos[1]);
        return check_output(c, c->pos[1], c->pos[0], NULL);
    }
    switch (c->cmd) {
    case CMD_HISTOGRAM:
        if (!c->plot && (c->log_y || c->cdf))
            return bad("--%s draws into the plot: add --plot OUT", c->log_y ? "log" : "cdf");
        return c->plot ? check_output(c, c->plot, c->pos[0], NULL) : 0;
    case CMD_COMPARE: return c->diff ? check_output(c, c->diff, c->pos[0], c->pos[1]) : 0;
    default: return 0;
    }
}

/* ---- shared steps --------------------------------------------------------------------- */


/* Resolve --device before reading the input, so `--device cuda` on a machine without a GPU
 * fails at once rather than after decoding a large file. The request itself (not the
 * resolved device) goes to the ops API: with `auto` it may still fall back to the CPU when
 * the GPU runs out of memory. */
static int check_device(const cli *c)
{
    imgpu_device resolved;
    return imgpu_device_resolve(c->device, &resolved);
}

/* What the load's on_shape hook needs: the command (its output and limits), the job (n ops;
 * 0: a histogram) and whether to start CUDA for it (--device auto, ops.c's rule). */
typedef struct prepare_ctx {
    const cli *c;
    const imgpu_op *ops;
    int n;
    int prepare;
} prepare_ctx;

/* The job's bounds from the header, before the input is decoded (issue 25): every result
 * and the memory of the worst step (imgpu_pipeline_plan against --max-pixels and
 * --max-memory) and whether the output format can hold the result, so a job that cannot run
 * is refused in milliseconds without decoding its input; then CUDA starts when the GPU could
 * win the job, overlapping the decode. process_one checks the plan again on the decoded
 * image (the same numbers). */
static int prepare_for_shape(const imgpu_image_shape *s, void *ctx)
{
    const prepare_ctx *p = ctx;
    imgpu_op ops[1];
    int n = p->n < 1 ? p->n : 1;
    if (n == 1) {   /* as process_one will run it: a gray image's background is the luma */
        ops[0] = p->ops[0];
        imgpu_ops_for_image(ops, 1, s->channels >= 3 ? 3 : 1);
        const cli *c = p->c;
        imgpu_plan plan;
        char why[200];
        if (imgpu_pipeline_plan(s->width, s->height, s->channels, s->depth, ops, 1, NULL,
                                c->pos[0], &plan) < 0)
            return -1;
        if (imgpu_format_check_size(c->run.save.format ? c->run.save.format
                                                       : imgpu_format_from_path(c->pos[1]),
                                    plan.out_w, plan.out_h, plan.channels,
                                    c->run.out_depth == 8 ? 8 : plan.depth, why, sizeof why) < 0)
            return imgpu_error("cannot write '%s': %s", c->pos[1], why);
    }
    if (p->prepare)
        imgpu_backend_prepare_for(p->c->device, s->width, s->height, s->channels, s->depth, ops, n);
    return 0;
}

/* Load the input (the job: n ops, or a histogram with n == 0). The job is bounded from the
 * header before the decode (prepare_for_shape). With --device cuda, CUDA's context creation
 * starts first, on a background thread, and a machine without a GPU fails before the decode;
 * with auto it starts once the file's header gives the image's size, and only when the GPU
 * could win the job (ops.c), overlapping the decode. */
static imgpu_image *load_input(const cli *c, const imgpu_op *ops, int n, imgpu_meta **meta)
{
    imgpu_load_options lo = c->run.load;
    prepare_ctx pc = { c, ops, n, c->device == IMGPU_DEVICE_AUTO };
    lo.on_shape = prepare_for_shape;
    lo.on_shape_ctx = &pc;
    if (c->device != IMGPU_DEVICE_AUTO)
        imgpu_backend_prepare(c->device);
    if (c->device == IMGPU_DEVICE_CUDA && check_device(c) < 0)
        return NULL;
    imgpu_load_result r = { 0 };
    imgpu_image *im = imgpu_image_load_ex(c->pos[0], &lo, &r);
    if (meta)
        *meta = r.meta;
    else
        imgpu_meta_free(r.meta);
    return im;
}

/* --pages all: every page of the input through the op, each result a page of the TIFF
 * output, written once all are done (atomically: a page that fails leaves no file). */
typedef struct pages_ctx {
    const cli *c;
    const imgpu_op *op;
    imgpu_page_writer *w;
} pages_ctx;

static int process_page(void *ctx, int index, int count, imgpu_image *in, imgpu_meta *meta)
{
    pages_ctx *pc = ctx;
    const cli *c = pc->c;
    imgpu_op op = *pc->op;
    imgpu_image *out = NULL;
    int rc = -1;
    imgpu_plan plan;
    imgpu_ops_for_image(&op, 1, imgpu_image_color_channels(in));
    if (imgpu_pipeline_plan(in->width, in->height, in->channels, in->depth, &op, 1, NULL,
                            c->pos[0], &plan) < 0 ||
        !(out = imgpu_pipeline_run(in, &op, 1, c->device, NULL)))
        goto done;
    if (c->run.out_depth == 8 && out->depth == 16) {
        imgpu_image *o8 = imgpu_image_to_depth(out, 8);
        if (!o8)
            goto done;
        imgpu_image_free(out);
        out = o8;
    }
    if (index == 0) {   /* the pages' samples, guessed from the first: BigTIFF past 2 GiB */
        const uint64_t one = (uint64_t)out->width * out->height * out->channels * (out->depth / 8);
        if (!(pc->w = imgpu_pages_begin(c->pos[1], count, one * (uint64_t)count, &c->run.save)))
            goto done;
    }
    rc = imgpu_pages_add(pc->w, out, c->run.save.strip ? NULL : meta);
done:
    imgpu_image_free(in);
    imgpu_image_free(out);
    imgpu_meta_free(meta);
    return rc;
}

static int process_pages(const cli *c, imgpu_op *op)
{
    pages_ctx pc = { c, op, NULL };
    if (c->device == IMGPU_DEVICE_CUDA && check_device(c) < 0)
        return fail();
    if (imgpu_image_load_pages(c->pos[0], &c->run.load, process_page, &pc) < 0) {
        imgpu_pages_abandon(pc.w);
        return fail();
    }
    return imgpu_pages_finish(pc.w) < 0 ? fail() : EXIT_OK;
}

/* Run one op on the input file and save the result. */
static int process_one(const cli *c, imgpu_op *op)
{
    if (c->run.all_pages)
        return process_pages(c, op);
    int rc = EXIT_FAIL;
    imgpu_image *in = NULL, *out = NULL;
    imgpu_meta *meta = NULL;

    in = load_input(c, op, 1, &meta);
    if (!in)
        goto done;
    /* a gray image's rotation background is the color's luma (op.h); what the op says about
     * its parameters on this image (a background's alpha on an image without alpha) */
    imgpu_ops_for_image(op, 1, imgpu_image_color_channels(in));
    if (c->opd->notes)
        c->opd->notes(op, imgpu_image_has_alpha(in), c->pos[0]);
    /* Bound the result and the memory before running anything, and refuse an output the
     * format cannot hold, so an impossible job fails in milliseconds, not after the op. */
    imgpu_plan plan;
    char why[200];
    if (imgpu_pipeline_plan(in->width, in->height, in->channels, in->depth, op, 1, NULL, c->pos[0], &plan) < 0)
        goto done;
    if (imgpu_format_check_size(c->run.save.format ? c->run.save.format
                                                   : imgpu_format_from_path(c->pos[1]), plan.out_w, plan.out_h, plan.channels,
                                c->run.out_depth == 8 ? 8 : plan.depth, why, sizeof why) < 0) {
        imgpu_error("cannot write '%s': %s", c->pos[1], why);
        goto done;
    }
    out = imgpu_pipeline_run(in, op, 1, c->device, NULL);
    if (!out)
        goto done;
    if (c->run.out_depth == 8 && out->depth == 16) {
        imgpu_image *o8 = imgpu_image_to_depth(out, 8);
        if (!o8)
            goto done;
        imgpu_image_free(out);
        out = o8;
    }
    imgpu_save_options so = c->run.save;
    so.meta = meta;   /* the input's ICC profile, EXIF, XMP and text travel (not with --strip) */
    /* a PNG on the CPU backend's threads (png_parallel.c: the same pixels, about stb's size,
     * a 4K photo in half the time) */
    if (imgpu_image_save_threads(out, c->pos[1], &so, imgpu_backend_cpu_thread_count()) < 0)
        goto done;
    rc = EXIT_OK;
done:
    imgpu_meta_free(meta);
    imgpu_image_free(in);
    imgpu_image_free(out);
    return rc == EXIT_OK ? EXIT_OK : fail();
}

/* ---- equalize / rotate -------------------------------------------------------------------- */

/* Every op command: the op the table's options set (c->op) on the input, saved to the output. */
static int cmd_op(const cli *c)
{
    imgpu_op op = c->op;
    return process_one(c, &op);
}

/* ---- histogram ---------------------------------------------------------------------------- */

typedef struct hist_column {
    const char *name;
    const uint32_t *bins;
} hist_column;

/* The columns in a fixed order shared by the table, the CSV and the plot:
 * gray | R, G, B; then alpha; then Y for color images. */
static int hist_columns(const imgpu_histogram *h, hist_column cols[6])
{
    int n = 0;
    if (h->channels >= 3) {
        cols[n++] = (hist_column){"R", h->bins[0]};
        cols[n++] = (hist_column){"G", h->bins[1]};
        cols[n++] = (hist_column){"B", h->bins[2]};
    } else {
        cols[n++] = (hist_column){"gray", h->bins[0]};
    }
    if (h->channels == 2 || h->channels == 4)
        cols[n++] = (hist_column){"alpha", h->bins[h->channels - 1]};
    if (h->channels >= 3 && h->has_luma)
        cols[n++] = (hist_column){"Y", h->luma};
    return n;
}

static void print_csv(const imgpu_histogram *h)
{
    hist_column cols[6];
    int n = hist_columns(h, cols);
    fputs("value", stdout);
    for (int k = 0; k < n; k++)
        printf(",%s", cols[k].name);
    putchar('\n');
    for (int v = 0; v < 256; v++) {
        printf("%d", v);
        for (int k = 0; k < n; k++)
            printf(",%" PRIu32, cols[k].bins[v]);
        putchar('\n');
    }
}

static void print_table(const char *path, const imgpu_image *im, const imgpu_histogram *h,
                        imgpu_device used)
{
    hist_column cols[6];
    int n = hist_columns(h, cols);
    char shown[4096];
    printf("%s: %dx%d %s, %" PRIu64 " pixels (computed on the %s)\n\n",
           imgpu_escape(path, shown, sizeof shown), im->width,
           im->height, imgpu_image_layout_name(im->channels), (uint64_t)im->width * (uint64_t)im->height,
           used == IMGPU_DEVICE_CUDA ? "GPU" : "CPU");
    printf("%-8s %5s %5s %9s %9s %7s\n", "channel", "min", "max", "mean", "stddev", "median");
    for (int k = 0; k < n; k++) {
        const uint32_t *b = cols[k].bins;
        uint64_t total = 0, cum = 0;
        double sum = 0, sumsq = 0;
        int lo = -1, hi = -1, median = -1;
        for (int v = 0; v < 256; v++) {
            total += b[v];
            sum += (double)v * b[v];
            if (b[v]) {
                if (lo < 0)
                    lo = v;
                hi = v;
            }
        }
        if (!total) {
            printf("%-8s %5s %5s %9s %9s %7s\n", cols[k].name, "-", "-", "-", "-", "-");
            continue;
        }
        double mean = sum / (double)total;
        for (int v = 0; v < 256; v++) {
            sumsq += (v - mean) * (v - mean) * b[v];
            cum += b[v];
            /* Lower median: the first level holding at least half of the pixels. */
            if (median < 0 && 2 * cum >= total)
                median = v;
        }
        printf("%-8s %5d %5d %9.2f %9.2f %7d\n", cols[k].name, lo, hi, mean,
               sqrt(sumsq / (double)total), median);
    }

    printf("\n%% of pixels in bins of 16 levels:\n%-8s", "levels");
    for (int k = 0; k < n; k++)
        printf(" %6s", cols[k].name);
    putchar('\n');
    for (int g = 0; g < 16; g++) {
        printf("%3d-%-4d", g * 16, g * 16 + 15);
        for (int k = 0; k < n; k++) {
            uint64_t s = 0, total = 0;
            for (int v = 0; v < 256; v++) {
                total += cols[k].bins[v];
                if (v / 16 == g)
                    s += cols[k].bins[v];
            }
            printf(" %6.2f", total ? 100.0 * (double)s / (double)total : 0.0);
        }
        putchar('\n');
    }
}

/* Draw and save --plot: `n` series of `nb` bins over levels lo..hi (data_range: the data's
 * range, not asked for: the title says so). */
static int save_plot(const cli *c, int depth, long lo, long hi, long nb, int n, const char *const names[],
                     const uint32_t *const counts[], int data_range)
{
    imgpu_histogram_plot_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.file = c->pos[0];
    spec.depth = depth;
    spec.lo = lo;
    spec.hi = hi;
    spec.bins = nb;
    spec.log_y = c->log_y;
    spec.cdf = c->cdf;
    spec.data_range = data_range;
    spec.nseries = n;
    for (int k = 0; k < n; k++)
        spec.series[k] = (imgpu_plot_series){names[k], counts[k]};
    imgpu_image *plot = imgpu__histogram_plot(&spec);
    int rc = plot ? imgpu_image_save(plot, c->plot, &c->run.save) : -1;
    imgpu_image_free(plot);
    return rc;
}

/* Level v of lo..hi counted into bin (v - lo) * nb / (hi - lo + 1) of out[nb], per plane. */
static void bin_levels(const uint32_t *const planes[], int n, long lo, long hi, long nb, uint32_t *out)
{
    const uint64_t width = (uint64_t)(hi - lo + 1);
    memset(out, 0, (size_t)n * (size_t)nb * sizeof *out);
    for (int k = 0; k < n; k++)
        for (long v = lo; v <= hi; v++)
            out[(size_t)k * nb + (size_t)((uint64_t)(v - lo) * (uint64_t)nb / width)] += planes[k][v];
}

/* The first and last level of bin b of nb over lo..hi. */
static void bin_bounds(long lo, long hi, long nb, long b, long *first, long *last)
{
    const uint64_t width = (uint64_t)(hi - lo + 1);
    *first = lo + (long)(((uint64_t)b * width + (uint64_t)nb - 1) / (uint64_t)nb);
    *last = lo + (long)(((uint64_t)(b + 1) * width + (uint64_t)nb - 1) / (uint64_t)nb) - 1;
}

/* 16-bit images, --bins and --range: full-resolution histograms (256 or 65536 levels)
 * computed by the backend, counted into equal bins over [lo, hi] here: level v in range goes
 * to bin (v - lo) * bins / (hi - lo + 1); levels outside the range are not counted.
 * Statistics are over every pixel at full resolution.
 * The range: --range LO:HI; else for a 16-bit image's table and plot the data's range (the
 * lowest..highest level of the gray | R, G, B and Y columns; alpha, often all 65535, left
 * out), widened to --bins levels where it holds fewer, and said so; else (8-bit, and --csv)
 * the whole range. The bins: --bins N; else the table's are 16 (as an 8-bit image's compact
 * table, in % of pixels) and the plot's and the CSV's 256 (or fewer levels). */
static int histogram_binned(const cli *c, const imgpu_image *in)
{
    imgpu_histogram_full f;
    imgpu_device used = IMGPU_DEVICE_CPU;
    uint32_t *binned = NULL;
    int ok = 0;
    memset(&f, 0, sizeof f);
    if (imgpu_histogram_full_compute(in, c->device, &f, &used) < 0)
        goto done;
    const long L = f.levels;
    if (c->have_range && c->range_hi >= L) {
        imgpu_error("--range %ld:%ld is beyond the %d-bit levels 0..%ld of '%s'", c->range_lo, c->range_hi,
                    in->depth, L - 1, c->pos[0]);
        goto done;
    }
    static const char *names4[] = {"R", "G", "B", "alpha"};
    const char *names[5];
    const uint32_t *planes[5];
    int n = 0;
    for (int k = 0; k < f.channels; k++) {
        names[n] = f.channels >= 3 ? names4[k] : (k == 0 ? "gray" : "alpha");
        planes[n++] = f.counts + (size_t)k * L;
    }
    if (f.has_luma) {
        names[n] = "Y";
        planes[n++] = f.counts + (size_t)f.channels * L;
    }
    /* the range the table and the plot show (csv_*: the CSV's) */
    long lo = c->have_range ? c->range_lo : 0, hi = c->have_range ? c->range_hi : L - 1;
    const long csv_lo = lo, csv_hi = hi;
    const int data_range = !c->have_range && in->depth == 16;
    if (data_range) {
        long mn = L, mx = -1;
        for (int k = 0; k < n; k++) {
            if (!strcmp(names[k], "alpha"))
                continue;
            for (long v = 0; v < L; v++)
                if (planes[k][v]) {
                    mn = v < mn ? v : mn;
                    mx = v > mx ? v : mx;
                }
        }
        if (mx >= 0) {
            lo = mn;
            hi = mx;
        }
        if (c->bins && hi - lo + 1 < c->bins) { /* room for the bins asked for */
            hi = lo + c->bins - 1 < L - 1 ? lo + c->bins - 1 : L - 1;
            lo = hi - c->bins + 1 > 0 ? hi - c->bins + 1 : 0;
        }
    }
    const long width = hi - lo + 1, csv_width = csv_hi - csv_lo + 1;
    const long nb = c->bins ? c->bins : (width < 256 ? width : 256);
    const long csv_nb = c->bins ? c->bins : (csv_width < 256 ? csv_width : 256);
    const long table_nb = c->bins ? c->bins : (width < 16 ? width : 16);
    if (nb > width || csv_nb > csv_width) {
        imgpu_error("--bins %ld is more than the %ld levels of the range %ld:%ld", c->bins, width, lo, hi);
        goto done;
    }
    const long most = nb > csv_nb ? nb : csv_nb;
    binned = malloc((size_t)n * (size_t)most * sizeof *binned);
    if (!binned) {
        imgpu_error("histogram: out of memory");
        goto done;
    }
    if (c->plot) {
        const uint32_t *series[5];
        bin_levels(planes, n, lo, hi, nb, binned);
        for (int k = 0; k < n; k++)
            series[k] = binned + (size_t)k * nb;
        if (save_plot(c, in->depth, lo, hi, nb, n, names, series, data_range) < 0)
            goto done;
    }
    if (c->csv) {
        bin_levels(planes, n, csv_lo, csv_hi, csv_nb, binned);
        fputs("value", stdout);
        for (int k = 0; k < n; k++)
            printf(",%s", names[k]);
        putchar('\n');
        for (long b = 0; b < csv_nb; b++) {
            long first, last;
            bin_bounds(csv_lo, csv_hi, csv_nb, b, &first, &last);
            printf("%ld", first);
            for (int k = 0; k < n; k++)
                printf(",%" PRIu32, binned[(size_t)k * csv_nb + b]);
            putchar('\n');
        }
    } else {
        char shown[4096];
        printf("%s: %dx%d %s, %d-bit, %" PRIu64 " pixels (computed on the %s)\n\n",
               imgpu_escape(c->pos[0], shown, sizeof shown), in->width,
               in->height, imgpu_image_layout_name(in->channels), in->depth,
               (uint64_t)in->width * (uint64_t)in->height, used == IMGPU_DEVICE_CUDA ? "GPU" : "CPU");
        printf("%-8s %6s %6s %11s %11s %7s\n", "channel", "min", "max", "mean", "stddev", "median");
        uint64_t totals[5] = {0};
        for (int k = 0; k < n; k++) {
            uint64_t total = 0, cum = 0;
            double sum = 0, sumsq = 0;
            long mn = -1, mx = -1, med = -1;
            for (long v = 0; v < L; v++)
                if (planes[k][v]) {
                    total += planes[k][v];
                    sum += (double)v * planes[k][v];
                    if (mn < 0)
                        mn = v;
                    mx = v;
                }
            totals[k] = total;
            const double mean = total ? sum / (double)total : 0;
            for (long v = 0; v < L; v++) {
                sumsq += ((double)v - mean) * ((double)v - mean) * planes[k][v];
                cum += planes[k][v];
                if (med < 0 && 2 * cum >= total)
                    med = v;
            }
            printf("%-8s %6ld %6ld %11.2f %11.2f %7ld\n", names[k], mn, mx, mean,
                   total ? sqrt(sumsq / (double)total) : 0.0, med);
        }
        const char *note = !data_range ? "" : c->bins && width == c->bins ? "around the data's range"
                                                                         : "the data's range";
        bin_levels(planes, n, lo, hi, table_nb, binned);
        if (c->bins)
            printf("\n%ld bins over levels %ld..%ld (%s%spixel counts):\n%-13s", table_nb, lo, hi, note,
                   *note ? "; " : "", "levels");
        else
            printf("\n%% of pixels in %ld bins over levels %ld..%ld%s%s%s:\n%-13s", table_nb, lo, hi,
                   *note ? " (" : "", note, *note ? ")" : "", "levels");
        for (int k = 0; k < n; k++)
            printf(c->bins ? " %10s" : " %6s", names[k]);
        putchar('\n');
        for (long b = 0; b < table_nb; b++) {
            long first, last;
            bin_bounds(lo, hi, table_nb, b, &first, &last);
            printf("%6ld-%-6ld", first, last);
            for (int k = 0; k < n; k++) {
                const uint32_t v = binned[(size_t)k * table_nb + b];
                if (c->bins)
                    printf(" %10" PRIu32, v);
                else
                    printf(" %6.2f", totals[k] ? 100.0 * (double)v / (double)totals[k] : 0.0);
            }
            putchar('\n');
        }
    }
    ok = 1;
done:
    imgpu_histogram_full_free(&f);
    free(binned);
    return ok ? finish_stdout() : fail();
}

static int cmd_histogram(const cli *c)
{
    imgpu_image *in = NULL;
    imgpu_histogram h;
    imgpu_device used = IMGPU_DEVICE_CPU;
    int ok = 0;

    in = load_input(c, NULL, 0, NULL);
    if (!in)
        goto done;
    if (in->depth == 16 || c->bins || c->have_range) {
        int rc = histogram_binned(c, in);
        imgpu_image_free(in);
        return rc;
    }
    memset(&h, 0, sizeof h);
    if (imgpu_histogram_compute(in, c->device, &h, &used) < 0)
        goto done;
    if (c->plot) {
        /* Write the plot before printing, so a failed save leaves no half report. */
        hist_column cols[6];
        const char *names[6];
        const uint32_t *series[6];
        const int n = hist_columns(&h, cols);
        for (int k = 0; k < n; k++) {
            names[k] = cols[k].name;
            series[k] = cols[k].bins;
        }
        if (save_plot(c, 8, 0, 255, 256, n, names, series, 0) < 0)
            goto done;
    }
    if (c->csv)
        print_csv(&h);
    else
        print_table(c->pos[0], in, &h, used);
    ok = 1;
done:
    imgpu_image_free(in);
    return ok ? finish_stdout() : fail();
}

/* ---- info --------------------------------------------------------------------------------- */

/* s as a JSON string, escaped by imgpu__json_escape (error.h): always valid JSON; a byte that
 * is not well-formed UTF-8 (a file name can hold any) becomes \udcXX, so the bytes can be
 * recovered (Python: os.fsencode). */
static void json_str(const char *s)
{
    char buf[4096];
    size_t n = strlen(s), w;
    putchar('"');
    while (n) {
        size_t used = imgpu__json_escape(buf, sizeof buf, s, n, &w);
        fwrite(buf, 1, w, stdout);
        s += used;
        n -= used;
    }
    putchar('"');
}

static const char *const s_orientation_names[9] = {
    "none", "normal", "mirrored horizontally", "rotated 180", "mirrored vertically",
    "transposed", "rotated 90 clockwise", "transversed", "rotated 90 counterclockwise",
};

/* One line of info's text block whose value comes from the file or its name (the path, the
 * ICC description, EXIF's Make, Model and date): every such value goes through imgpu_escape,
 * so no byte of it reaches the terminal raw (ESC, BEL, CSI, C2 9B, bytes that are not UTF-8). */
static void info_text(const char *label, const char *value)
{
    char shown[4096];
    printf("%-13s%s\n", label, imgpu_escape(value, shown, sizeof shown));
}

/* One file's block (or JSON line); 0, or -1 with the error printed and, for --json, an
 * object with "error" written. */
static int info_one(const cli *c, const char *path, int separate)
{
    /* Format and size from the bytes the loader read: a second open or stat of the path
     * would hang on a FIFO, and a pipe (/dev/stdin) has neither by then. */
    imgpu_load_result r = { 0 };
    imgpu_load_options lo = c->run.load;
    lo.no_page_notice = 1;   /* the report lists the pages */
    imgpu_image *im = imgpu_image_load_ex(path, &lo, &r);
    if (!im) {
        if (c->json) {
            fputs("{\"path\": ", stdout);
            json_str(path);
            fputs(", \"error\": ", stdout);
            json_str(imgpu_error_message());
            fputs("}\n", stdout);
        }
        fflush(stdout);
        fail();
        return -1;
    }
    if (separate && !c->json)   /* the blank line between blocks: only between printed ones */
        putchar('\n');
    const imgpu_meta *m = r.meta;
    const char *fmt = imgpu_format_name(r.format);
    char icc[128] = "";
    /* the file's own profile: a CMYK JPEG's, not the sRGB one load put in its place */
    const unsigned char *icc_b = m->file_icc ? m->file_icc : m->icc;
    const size_t icc_n = m->file_icc ? m->file_icc_len : m->icc_len;
    if (icc_b && imgpu_meta_icc_description(icc_b, icc_n, icc, sizeof icc) < 0)
        snprintf(icc, sizeof icc, "(no description)");
    /* the file's colour space: the format's word (JPEG), else what the channels are */
    const char *colour = m->colour ? m->colour : im->channels <= 2 ? "Gray" : "RGB";
    imgpu_exif_info ex;
    int have_exif = m->exif && imgpu_exif_parse(m->exif, m->exif_len, &ex) == 0;
    const int orient = m->orientation;
    char cam[sizeof ex.make + sizeof ex.model + 1] = "";   /* "Make Model" */
    if (have_exif)
        snprintf(cam, sizeof cam, "%s%s%s", ex.make, ex.make[0] && ex.model[0] ? " " : "", ex.model);
    if (c->json) {
        fputs("{\"path\": ", stdout);
        json_str(path);
        printf(", \"format\": \"%s\", \"width\": %d, \"height\": %d, \"channels\": %d, "
               "\"depth\": %d, \"pages\": %d, \"page\": %d, \"orientation\": %d, "
               "\"oriented\": %s, \"icc\": ",
               fmt, im->width, im->height, im->channels, im->depth, m->pages, m->page, orient,
               m->oriented ? "true" : "false");
        if (icc_b) {
            fputs("{\"description\": ", stdout);
            json_str(icc);
            printf(", \"bytes\": %zu}", icc_n);
        } else {
            fputs("null", stdout);
        }
        printf(", \"exif\": %s, \"xmp\": %s", m->exif ? "true" : "false", m->xmp ? "true" : "false");
        if (have_exif) {
            fputs(", \"camera\": ", stdout);
            json_str(cam);
            fputs(", \"date\": ", stdout);
            json_str(ex.datetime_original);
        }
        printf(", \"colour_space\": \"%s\", \"colour_converted\": %s", colour,
               m->colour_converted ? "true" : "false");
        printf(", \"file_size\": %llu}\n", (unsigned long long)r.bytes);
    } else {
        imgpu_format by_name = imgpu_format_from_path(path);
        info_text("file:", path);
        if (by_name != IMGPU_FORMAT_UNKNOWN && by_name != r.format)
            printf("format:      %s (by content; the name says %s)\n", fmt,
                   imgpu_format_name(by_name));
        else
            printf("format:      %s\n", fmt);
        printf("dimensions:  %d x %d\n", im->width, im->height);
        printf("channels:    %d (%s)\n", im->channels, imgpu_image_layout_name(im->channels));
        printf("bit depth:   %d\n", im->depth);
        if (strcmp(colour, "CMYK") && strcmp(colour, "YCCK"))
            printf("colour:      %s\n", colour);
        else   /* what load made of it */
            printf("colour:      %s (%s)\n", colour,
                   m->colour_converted ? "converted to sRGB through its ICC profile"
                                       : "converted to RGB by formula, without colour management");
        if (m->pages > 1)
            printf("pages:       %d (showing page %d; --page N picks another)\n", m->pages, m->page);
        if (orient >= 1 && orient <= 8)
            printf("orientation: %d (%s)%s\n", orient, s_orientation_names[orient],
                   m->oriented && orient != 1 ? "; shown upright, as loaded" : "");
        if (icc_b) {
            char v[sizeof icc + 32];
            snprintf(v, sizeof v, "%s (%zu bytes)", icc, icc_n);
            info_text("ICC profile:", v);
        }
        if (cam[0])
            info_text("camera:", cam);
        if (have_exif && ex.datetime_original[0])
            info_text("date:", ex.datetime_original);
        if (m->exif || m->xmp || m->n_text)
            printf("metadata:   %s%s%s\n", m->exif ? " EXIF" : "", m->xmp ? " XMP" : "",
                   m->n_text ? " text" : "");
        printf("file size:   %llu bytes", (unsigned long long)r.bytes);
        if (r.bytes >= 1024 * 1024)
            printf(" (%.1f MiB)", (double)r.bytes / (1024.0 * 1024.0));
        else if (r.bytes >= 1024)
            printf(" (%.1f KiB)", (double)r.bytes / 1024.0);
        putchar('\n');
    }
    imgpu_meta_free(r.meta);
    imgpu_image_free(im);
    return 0;
}

/* Every file named: a block each (a blank line between), or one JSON object per line with
 * --json; a file that fails is reported and the rest still printed; exit 1 if any failed. */
static int cmd_info(const cli *c)
{
    int failed = 0, printed = 0;
    for (int i = 0; i < c->nfiles; i++) {
        if (info_one(c, c->files[i], printed) < 0)
            failed = 1;
        else
            printed = 1;
    }
    int rc = finish_stdout();
    return failed ? EXIT_FAIL : rc;
}

/* ---- compare ------------------------------------------------------------------------------ */

static int cmd_compare(const cli *c)
{
    imgpu_image *a = NULL, *b = NULL, *d = NULL;
    imgpu__compare_result r;
    int ok = 0, gain = 1;

    a = imgpu_image_load(c->pos[0], &c->run.load);
    if (!a)
        goto done;
    b = imgpu_image_load(c->pos[1], &c->run.load);
    if (!b)
        goto done;
    if (imgpu__compare(a, c->pos[0], b, c->pos[1], &r) < 0)
        goto done;
    if (c->diff) {
        gain = imgpu__diff_gain(r.max_abs, r.depth);
        d = imgpu__diff_image(a, b, gain);
        if (!d || imgpu_image_save(d, c->diff, &c->run.save) < 0)
            goto done;
    }
    ok = 1;
done:
    imgpu_image_free(a);
    imgpu_image_free(b);
    imgpu_image_free(d);
    if (!ok)
        return fail();

    char shown[4096], shown2[4096];
    if (r.scaled)
        printf("note:                '%s' is 8-bit, '%s' 16-bit: the 8-bit samples are scaled by 257 "
               "(0..255 onto 0..65535) and the metrics are in 16-bit levels\n",
               imgpu_escape(c->pos[r.scaled - 1], shown, sizeof shown),
               imgpu_escape(c->pos[2 - r.scaled], shown2, sizeof shown2));
    if (r.depth == 16)
        printf("max abs difference:  %d (16-bit levels)\n", r.max_abs);
    else
        printf("max abs difference:  %d\n", r.max_abs);
    printf("mean abs difference: %.6f\n", r.mean_abs);
    if (isinf(r.psnr))
        printf("PSNR:                inf\n");
    else
        printf("PSNR:                %.2f dB%s\n", r.psnr, r.depth == 16 ? " (peak 65535)" : "");
    printf("differing pixels:    %" PRIu64 " of %" PRIu64 " (%.4f%%)\n", r.differing_pixels,
           r.pixels, 100.0 * (double)r.differing_pixels / (double)r.pixels);
    if (c->diff)
        printf("diff image:          %s (|A-B| x %d)\n", imgpu_escape(c->diff, shown, sizeof shown),
               gain);
    int rc = finish_stdout();
    if (rc == EXIT_OK && c->have_max_abs && r.max_abs > c->max_abs) {
        imgpu_error("'%s' and '%s' differ by up to %d, more than --max-abs %ld", c->pos[0],
                    c->pos[1], r.max_abs, c->max_abs);
        return fail();
    }
    return rc;
}

/* ---- main --------------------------------------------------------------------------------- */

static void print_version(void)
{
    printf("imgpu %s\n", IMGPU_VERSION);
    if (imgpu_session_built_in())
        printf("CUDA support: yes (use --device cuda|auto; without a usable GPU auto runs on the CPU)\n");
    else
        printf("CUDA support: no (built without a CUDA toolkit: CPU only)\n");
    if (imgpu_session_jpeg_built_in())
        printf("nvJPEG: yes (batch decodes and encodes JPEG on the GPU)\n");
    else
        printf("nvJPEG: no (JPEG is decoded and encoded on the CPU)\n");
    char libs[256];
    imgpu_codec_libraries(libs, sizeof libs);
    printf("codecs: %s\n", libs);
}

/* `imgpu bench` and `imgpu view` are the separate programs imgpu-bench and imgpu-view installed
 * beside imgpu (they link CUB and NPP, or GLFW, GLEW and GL, which the everyday tool should not
 * load at start-up). argv is NULL-terminated: execv passes it on whole. */
static int run_sibling(char **argv, const char *prog, const char *missing)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 32);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            strcpy(slash + 1, prog);
            if (access(self, X_OK) == 0) {
                argv[1] = self;
                execv(self, argv + 1);
            }
        }
    }
    imgpu_error("%s", missing);
    return fail();
}

static int run_command(cli *c, const char *name, int argc, char **argv);

static const char *did_you_mean_command(const char *name)
{
    static char buf[96];
    enum { MAX_CANDS = 64 };
    const char *cands[MAX_CANDS] = {"batch", "view", "bench", "help"};
    size_t n = 4;
    for (int i = 0; i < CMD_COUNT && n < MAX_CANDS; i++)
        cands[n++] = s_commands[i].name;
    for (int i = 0; i < imgpu_op_count() && n < MAX_CANDS; i++)
        cands[n++] = imgpu_op_at(i)->name;
    const char *best = imgpu__suggest(name, strlen(name), cands, n);
    if (!best)
        return "";
    snprintf(buf, sizeof buf, " (did you mean '%s'?)", best);
    return buf;
}

/* Every option the command takes: its own (s_options) and options.h's that apply to it. */
static const char *did_you_mean_option(const cli *c, const char *name, size_t len)
{
    static char buf[96];
    enum { MAX_CANDS = 128 };
    const char *cands[MAX_CANDS];
    size_t n = 0;
    const unsigned mask = 1u << c->cmd;
    cands[n++] = "help";
    for (size_t i = 0; i < sizeof s_options / sizeof s_options[0] && n < MAX_CANDS; i++)
        if (s_options[i].cmds & mask)
            cands[n++] = s_options[i].name;
    for (int k = 0; c->opd && k < c->opd->nparams && n < MAX_CANDS; k++)
        if (c->opd->params[k].fronts & IMGPU_FRONT_CLI)
            cands[n++] = c->opd->params[k].name;
    for (size_t i = 0; i < imgpu_opt_count && n < MAX_CANDS; i++)
        if ((imgpu_opt_table[i].fronts & IMGPU_FRONT_CLI) && shared_applies(&imgpu_opt_table[i], c))
            cands[n++] = imgpu_opt_table[i].name;
    const char *best = imgpu__suggest(name, len, cands, n);
    if (!best)
        return "";
    snprintf(buf, sizeof buf, " (did you mean '--%s'?)", best);
    return buf;
}

int main(int argc, char **argv)
{
    /* A file-size rlimit must end in a message and exit 1, not a kill: with SIGXFSZ ignored
     * the write fails with EFBIG and the atomic save removes its temp file. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        bad("no command given");
        return usage_exit(NULL);
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        print_main_help(stdout);
        return finish_stdout();
    }
    if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "-v")) {
        print_version();
        return finish_stdout();
    }
    if (!strcmp(name, "help")) {
        if (argc == 2) {
            print_main_help(stdout);
            return finish_stdout();
        }
        name = argv[2];
        command hc;
        const imgpu_op_desc *hd;
        if (find_command(name, &hc, &hd) >= 0) {
            print_command_help(&hc, hd);
            return finish_stdout();
        }
        bad("unknown command '%s'%s", name, did_you_mean_command(name));
        return usage_exit(NULL);
    }
    if (!strcmp(name, "bench"))
        return run_sibling(argv, "imgpu-bench",
                           "bench: no imgpu-bench beside this imgpu (the build makes it in the same folder)");
    if (!strcmp(name, "view"))
        return run_sibling(argv, "imgpu-view",
                           "view: no imgpu-view beside this imgpu (it is built only where GLFW 3.3, GLEW, "
                           "OpenGL and EGL are found)");
    if (!strcmp(name, "batch"))
        return imgpu_batch_main(argc - 1, argv + 1);
    if (name[0] == '-') {
        bad("unknown option '%s' (a command comes first)", name);
        return usage_exit(NULL);
    }

    cli c;
    memset(&c, 0, sizeof c);
    int rc = run_command(&c, name, argc, argv);
    free(c.files);
    if (imgpu_backend_shutdown()) {
        /* CUDA is still starting and nothing ran on it (`auto` took the CPU, or the input
         * failed): leave now instead of waiting for it. stdout was checked by the command. */
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    return rc;
}

/* Everything after the command's name: options, limits, then the command itself. c->files
 * is left for main to free. */
static int run_command(cli *c, const char *name, int argc, char **argv)
{
    command command_found;
    c->cmd = find_command(name, &command_found, &c->opd);
    if (c->cmd < 0) {
        bad("unknown command '%s'%s", name, did_you_mean_command(name));
        return usage_exit(NULL);
    }
    const command *cmd = &command_found;
    if (wants_help(argc - 2, argv + 2)) {
        print_command_help(cmd, c->opd);
        return finish_stdout();
    }

    c->device = IMGPU_DEVICE_AUTO;
    c->run = imgpu_run_options_default();
    if (c->opd)
        c->op = imgpu_op_default(c->opd->kind);
    if (parse_args(argc - 2, argv + 2, c, cmd) < 0 || validate(c) < 0)
        return usage_exit(cmd->name);
    /* IMGPU_DEVICE: the default of --device, which wins over it */
    if (!c->device_given && imgpu_device_from_env(&c->device) < 0) {
        bad("%s", imgpu_error_message());
        return usage_exit(cmd->name);
    }
    /* IMGPU_MAX_* fill in the limits no option set; a malformed one is a usage error. */
    if (imgpu_load_options_from_env(&c->run.load) < 0) {
        bad("%s", imgpu_error_message());
        return usage_exit(cmd->name);
    }
    imgpu_limits lim = {c->run.load.max_pixels, c->run.max_memory};
    if (imgpu_limits_from_env(&lim) < 0) {
        bad("%s", imgpu_error_message());
        return usage_exit(cmd->name);
    }
#ifdef IMGPU_CLI_PARSE_ONLY
    /* tests/fuzz/fuzz_cli.c compiles this file with main renamed: stop before any file is
     * read or written. */
    return EXIT_OK;
#endif

    imgpu_set_quiet(c->quiet);
    imgpu_set_limits(&lim);
    switch (c->cmd) {
    case CMD_OP: note_ignored_options(c, c->pos[1]); break;
    case CMD_HISTOGRAM: note_ignored_options(c, c->plot); break;
    case CMD_COMPARE: note_ignored_options(c, c->diff); break;
    default: break;
    }
    return cmd->run(c);
}
