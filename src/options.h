/* options.h — the one table of op options and limits, shared by every front end:
 * `imgpu COMMAND` (main.c), `imgpu batch` (batch.c) and `imgpu view` (src/viewer/viewer.c).
 *
 * Each entry is an option's name, its value (none for a flag), the ops it sets or whether it
 * is a limit / run setting, the front ends that accept it, one parser per kind of value and
 * its help line. A front end finds an option by name (imgpu_opt_find), picks the op it sets
 * (the command's op; batch: the latest op of a kind the entry names; the viewer: its one op of
 * each kind) and applies the value (imgpu_opt_apply); the defaults of every op are the
 * constructors' in op.h, written nowhere else. Errors are worded once:
 *   invalid --NAME 'VALUE' (HINT)
 * and recorded with imgpu_usage_bad() (below), which the front ends print with their --help
 * hint. tests/cli/options_help.py holds every front end's --help to this table. */
#ifndef IMGPU_OPTIONS_H
#define IMGPU_OPTIONS_H

#include "error.h"
#include "io.h"
#include "op.h"

#include <stddef.h>
#include <stdint.h>

/* --clip's bound (the viewer's [ / ] keys stop there too). */
#define IMGPU_OPT_CLIP_MAX 1e6

/* What an option writes into besides an op: the limits and the output depth of a run. */
typedef struct imgpu_run_options {
    imgpu_load_options load;  /* --max-pixels, --max-file-size, --max-decode-time */
    uint64_t max_memory;      /* --max-memory; 0: IMGPU_MAX_MEMORY or the default */
    int out_depth;            /* --depth: 0 keeps the image's depth; 8 converts on output */
    int all_pages;            /* --pages all: every page through the op, into one TIFF */
    imgpu_save_options save;  /* --quality, --subsampling, ..., --strip: how outputs are written */
} imgpu_run_options;

/* Which op kinds an entry sets (IMGPU_OPT_OP(kind)), or that it sets the run options. */
#define IMGPU_OPT_OP(kind) (1u << (kind))
#define IMGPU_OPT_EQ IMGPU_OPT_OP(IMGPU_OP_EQUALIZE)
#define IMGPU_OPT_ROT IMGPU_OPT_OP(IMGPU_OP_ROTATE)
#define IMGPU_OPT_CLAHE IMGPU_OPT_OP(IMGPU_OP_CLAHE)
#define IMGPU_OPT_RUN (1u << 8)  /* a limit or --depth: imgpu_run_options */
#define IMGPU_OPT_ADD (1u << 9)  /* starts a new op of the (one) kind named (batch, view) */
#define IMGPU_OPT_LOAD (1u << 10) /* a load limit: `imgpu histogram | info | compare` take it too */
#define IMGPU_OPT_SAVE (1u << 11) /* how outputs are written: imgpu_run_options.save */

/* The front ends. */
#define IMGPU_FRONT_CLI (1u << 0)    /* imgpu equalize | clahe | rotate (and the read-only
                                      * commands for the load limits) */
#define IMGPU_FRONT_BATCH (1u << 1)
#define IMGPU_FRONT_VIEW (1u << 2)
#define IMGPU_FRONT_ALL (IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH | IMGPU_FRONT_VIEW)

typedef enum imgpu_opt_id {
    IMGPU_OPT_ID_EQUALIZE, IMGPU_OPT_ID_CLAHE, IMGPU_OPT_ID_ROTATE,  /* batch and view: add an op */
    IMGPU_OPT_ID_MODE, IMGPU_OPT_ID_FORMULA,
    IMGPU_OPT_ID_CLIP, IMGPU_OPT_ID_TILES,
    IMGPU_OPT_ID_ANGLE, IMGPU_OPT_ID_FILTER, IMGPU_OPT_ID_EXPAND, IMGPU_OPT_ID_CROP,
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
    /* One parser per kind of value; writes *op (of a kind in `sets`) or *run. v is NULL for
     * flags. 0, or -1 with the usage message recorded. */
    int (*parse)(const struct imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run);
    const char *hint;         /* the allowed values, for the error message */
    const char *help;         /* one help line's text (after "--name METAVAR") */
} imgpu_opt;

/* The table and its length. */
extern const imgpu_opt imgpu_opt_table[];
extern const size_t imgpu_opt_count;

/* The entry named name[0..len) (no leading "--") that `front` accepts, or NULL. */
const imgpu_opt *imgpu_opt_find(const char *name, size_t len, unsigned front);

/* Parse v into *op (which must be of a kind the entry sets; NULL for IMGPU_OPT_RUN entries)
 * or *run. An IMGPU_OPT_ADD entry writes a new op with the constructor's defaults (and the
 * angle for --rotate). 0, or -1 with the usage message recorded. */
int imgpu_opt_apply(const imgpu_opt *o, const char *v, imgpu_op *op, imgpu_run_options *run);

/* Run options at their defaults (limits 0: from the environment or the built-in defaults;
 * PNG level -1: the default). Front ends start from this. */
imgpu_run_options imgpu_run_options_default(void);

/* The op floor's defaults for each kind, the constructors' (op.h): the one place a front end
 * gets a fresh op from. */
imgpu_op imgpu_opt_default_op(imgpu_op_kind kind);

/* ---- usage errors: one helper for every front end ------------------------------------------ */
/* Record a usage problem (escaped, as it quotes argv); returns -1. The front end prints it as
 * "imgpu: MESSAGE" and its "try 'imgpu ... --help'" line, exit 2. */
int imgpu_usage_bad(const char *fmt, ...) IMGPU_PRINTF(1, 2);
/* The message recorded last ("" when none). */
const char *imgpu_usage_message(void);

#endif
