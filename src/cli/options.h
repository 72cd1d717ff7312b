/* options.h — the one place options are parsed, shared by every front end: `imgpu COMMAND`
 * (src/cli/), `imgpu batch` (batch.c) and `imgpu view` (src/viewer/viewer.c).
 *
 * Two tables feed it. The op table (src/op/op_table.h) gives every op's parameters: the
 * options of `imgpu OP`, batch's and the viewer's --OP and the options that follow it;
 * imgpu_param_apply parses one into an op. This header's table holds the rest: the limits,
 * --depth and how outputs are written (imgpu_run_options). --device is parsed here too
 * (imgpu_opt_device). Errors are worded once:
 *   invalid --NAME 'VALUE' (HINT)
 * and recorded with imgpu_usage_bad() (below), which the front ends print with their --help
 * hint. Help for the op options is generated from the op table here as well (the
 * imgpu_opt_help_* functions). tests/cli/options_help.py holds every front end's --help to
 * both tables. */
#ifndef IMGPU_OPTIONS_H
#define IMGPU_OPTIONS_H

#include "error.h"
#include "io.h"
#include "op.h"
#include "ops.h"
#include "op/op_table.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What an option writes into besides an op: the limits and the output depth of a run. */
typedef struct imgpu_run_options {
    imgpu_load_options load;  /* --max-pixels, --max-file-size, --max-decode-time */
    uint64_t max_memory;      /* --max-memory; 0: IMGPU_MAX_MEMORY or the default */
    int out_depth;            /* --depth: 0 keeps the image's depth; 8 converts on output */
    int all_pages;            /* --pages all: every page through the op, into one TIFF */
    imgpu_save_options save;  /* --quality, --subsampling, ..., --strip: how outputs are written */
} imgpu_run_options;

/* What an entry sets. */
#define IMGPU_OPT_RUN (1u << 0)  /* a limit or --depth: imgpu_run_options */
#define IMGPU_OPT_LOAD (1u << 1) /* a load limit: `imgpu histogram | info | compare` take it too */
#define IMGPU_OPT_SAVE (1u << 2) /* how outputs are written: imgpu_run_options.save */
/* An alias that gives way to an op's parameter of the same name: --background is --flatten
 * (what JPEG flattens alpha onto) except where the command's op has a --background of its own
 * (rotate's fill; in batch: once a rotation is given). */
#define IMGPU_OPT_YIELDS (1u << 3)

typedef enum imgpu_opt_id {
    IMGPU_OPT_ID_BACKGROUND,
    IMGPU_OPT_ID_DEPTH,
    IMGPU_OPT_ID_MAX_PIXELS, IMGPU_OPT_ID_MAX_MEMORY, IMGPU_OPT_ID_MAX_FILE_SIZE,
    IMGPU_OPT_ID_MAX_DECODE_TIME,
    IMGPU_OPT_ID_NO_AUTO_ORIENT, IMGPU_OPT_ID_PAGE,
    IMGPU_OPT_ID_QUALITY, IMGPU_OPT_ID_PNG_LEVEL, IMGPU_OPT_ID_SUBSAMPLING,
    IMGPU_OPT_ID_PROGRESSIVE, IMGPU_OPT_ID_OPTIMIZE, IMGPU_OPT_ID_COMPRESSION,
    IMGPU_OPT_ID_LOSSLESS, IMGPU_OPT_ID_STRIP,
    IMGPU_OPT_ID_PAGES,
} imgpu_opt_id;

typedef struct imgpu_opt {
    const char *name;         /* without the leading "--" */
    imgpu_opt_id id;
    const char *metavar;      /* the value in help ("DEG", "WxH"); NULL: a flag */
    unsigned sets;            /* IMGPU_OPT_* */
    unsigned fronts;          /* IMGPU_FRONT_* that accept it */
    /* One parser per kind of value; writes *run. v is NULL for flags. 0, or -1 with the usage
     * message recorded. */
    int (*parse)(const struct imgpu_opt *o, const char *v, imgpu_run_options *run);
    const char *hint;         /* the allowed values, for the error message */
    const char *help;         /* one help line's text (after "--name METAVAR") */
} imgpu_opt;

/* The table and its length. */
extern const imgpu_opt imgpu_opt_table[];
extern const size_t imgpu_opt_count;

/* The entry named name[0..len) (no leading "--") that `front` accepts, or NULL. */
const imgpu_opt *imgpu_opt_find(const char *name, size_t len, unsigned front);

/* Parse v into *run. 0, or -1 with the usage message recorded. */
int imgpu_opt_apply(const imgpu_opt *o, const char *v, imgpu_run_options *run);

/* Run options at their defaults (limits 0: from the environment or the built-in defaults;
 * PNG level -1: the default). Front ends start from this. */
imgpu_run_options imgpu_run_options_default(void);

/* ---- --device ---------------------------------------------------------------------------- */
/* auto | cpu | cuda into *d; -1 with "invalid --device 'V' (use auto, cpu or cuda)" recorded. */
int imgpu_opt_device(const char *v, imgpu_device *d);

/* ---- the op table's options ------------------------------------------------------------------ */
/* Parse v (NULL for a flag) into op's parameter p. 0, or -1 with the usage message recorded. */
int imgpu_param_apply(const imgpu_param *p, const char *v, imgpu_op *op);
/* The op whose --NAME (batch, view) is name[0..len), or NULL. */
const imgpu_op_desc *imgpu_opt_find_op(const char *name, size_t len);
/* batch's and the viewer's --NAME [VALUE]: *op at its defaults, VALUE (NULL for a flag) parsed
 * into its add_param. -1 with "invalid --NAME 'VALUE' (HINT)" recorded. */
int imgpu_opt_add_op(const imgpu_op_desc *d, const char *v, imgpu_op *op);
/* A parameter named name[0..len) that `front` accepts, of op d (NULL: of any op), or NULL. */
const imgpu_param *imgpu_opt_find_param(const imgpu_op_desc *d, const char *name, size_t len, unsigned front);
/* 1 when op d has a parameter named like p that `front` accepts. */
int imgpu_opt_op_has(const imgpu_op_desc *d, const imgpu_param *p, unsigned front);
/* "--a or --b": the ops that have a parameter named like p (`front`), in the registry's order. */
void imgpu_opt_ops_with(const imgpu_param *p, unsigned front, char *buf, size_t n);
/* A contradiction among the flags given to one op (given[i]: parameter i of d was given): two
 * flags that write the same field different values, e.g. "--expand and --crop contradict each
 * other". -1 with that usage message, else 0. */
int imgpu_opt_check_flags(const imgpu_op_desc *d, const unsigned char *given);
/* The index of p among d's parameters (-1: not d's). */
int imgpu_opt_param_index(const imgpu_op_desc *d, const imgpu_param *p);

/* ---- help generated from the op table ---------------------------------------------------- */
/* `imgpu OP --help`'s option lines of op d: "  --NAME METAVAR  doc", continuation lines
 * indented to column 23. */
void imgpu_opt_help_params(FILE *f, const imgpu_op_desc *d);
/* batch's "operations" lines: one entry per op, "  --NAME [VALUE]  batch_doc". */
void imgpu_opt_help_batch_ops(FILE *f);
/* The viewer's op lines (each op's view_doc), and its keys (view_keys), in the registry's order. */
void imgpu_opt_help_view_ops(FILE *f);
void imgpu_opt_help_view_keys(char *buf, size_t n);

/* ---- usage errors: one helper for every front end ------------------------------------------ */
/* Record a usage problem (escaped, as it quotes argv); returns -1. The front end prints it as
 * "imgpu: MESSAGE" and its "try 'imgpu ... --help'" line, exit 2. */
int imgpu_usage_bad(const char *fmt, ...) IMGPU_PRINTF(1, 2);
/* The message recorded last ("" when none). */
const char *imgpu_usage_message(void);

#endif
