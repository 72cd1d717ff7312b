/* cli.h — what the files of the imgpu command (src/cli/main.c, common.c and one cmd_*.c per
 * command) share: the exit statuses, the commands, one invocation's validated options (cli),
 * the help text every command's options end with, and the shared steps (usage errors,
 * failures, standard output, argument parsing and checks). Only the imgpu executable (and the
 * fuzz target tests/fuzz/fuzz_cli.c) is built from these files; the library is not.
 */
#ifndef IMGPU_CLI_CLI_H
#define IMGPU_CLI_CLI_H

#include "image.h"
#include "io.h"
#include "ops.h"
#include "op/op_table.h"
#include "cli/options.h"

#include <stdio.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* ---- commands ------------------------------------------------------------------------------- */

/* The commands that are not ops; every op of the op table (src/op/op_table.h) is a command too,
 * `imgpu OP IN OUT [OPTIONS]`, run by the one generic command of cmd_op.c (CMD_OP). */
enum { CMD_HISTOGRAM, CMD_INFO, CMD_COMPARE, CMD_COUNT, CMD_OP = CMD_COUNT };

#define C_OP (1u << CMD_OP)
#define C_HIST (1u << CMD_HISTOGRAM)
#define C_INFO (1u << CMD_INFO)
#define C_CMP (1u << CMD_COMPARE)
#define C_PROC (C_OP | C_HIST)                /* run ops: --device */
#define C_SAVE (C_OP | C_HIST | C_CMP)        /* may write an image (--plot, --diff) */
#define C_ALL (C_PROC | C_INFO | C_CMP)

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
    int decode;             /* info --decode: decode the pixels too (default: the header) */
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

/* ---- help: the option paragraphs the commands' help texts share ---------------------------- */

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
    "  --flatten COLOR      what alpha is flattened onto for JPEG (default white; where\n"    \
    "                       the command has no fill of its own, --background too)\n"      \
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

/* ---- error reporting (common.c) ------------------------------------------------------------ */

/* A usage problem found while parsing (options.h's one helper); printed with the --help hint. */
#define bad imgpu_usage_bad

/* A processing failure: the message was recorded where it was detected; prints it, returns
 * EXIT_FAIL. */
int imgpu__cli_fail(void);
#define fail imgpu__cli_fail

/* Report output is the product of histogram/info/compare: a full disk or closed pipe must not
 * end in exit 0. EXIT_OK, or the failure printed and EXIT_FAIL. */
int imgpu__cli_finish_stdout(void);
#define finish_stdout imgpu__cli_finish_stdout

/* ---- parsing and checks (common.c) --------------------------------------------------------- */

/* The command's arguments (after its name) into c: 0, or -1 with the usage problem recorded. */
int imgpu__cli_parse_args(int argc, char **argv, cli *c, const command *cmd);
/* 1 when --help or -h appears among the options: help wins over any other mistake. */
int imgpu__cli_wants_help(int argc, char **argv);
/* What parsing alone cannot see (an output's format, an output that is an input): 0 or -1. */
int imgpu__cli_validate(cli *c);

/* ---- the commands: one file each ----------------------------------------------------------- */

/* cmd_op.c: every op of the op table, `imgpu OP IN OUT`: the run, the help after the op's
 * parameters, and the input's load (histogram loads through it too). */
int imgpu__cli_op_run(const cli *c);
void imgpu__cli_op_help(const imgpu_op_desc *opd);
imgpu_image *imgpu__cli_load_input(const cli *c, const imgpu_op *ops, int n, imgpu_meta **meta);
#define load_input imgpu__cli_load_input

extern const command imgpu__cli_histogram;   /* cmd_histogram.c */
extern const command imgpu__cli_info;        /* cmd_info.c */
extern const command imgpu__cli_compare;     /* cmd_compare.c */

#endif
