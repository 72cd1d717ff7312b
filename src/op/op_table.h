/* op_table.h — the op table: every operation described as data (libvips' introspection is the
 * model). Each op lives in one file, src/op/<op>.c, that exports one imgpu_op_desc: its name
 * and one-line summary, its parameters (name as the CLI option, type, default, range, units,
 * help, where the value lives in the op's parameter struct), its validation, the shape and
 * memory of its result, the CPU cost `auto` weighs, and how it is written in the batch
 * manifest and in the viewer's printed command. The registry (registry.h: one line per op)
 * lists the descriptors; nothing else lists op names. Option parsing and help (options.c),
 * the plan (op.c), the dispatcher (ops.c), the manifest and the viewer read this table; each
 * backend keeps a run entry per op, found by the op's kind (src/backend/cpu/ops_table.c,
 * src/backend/cuda/ops_table.c).
 *
 * There is no ceiling on the number of ops: a kind is an index, never a bit.
 */
#ifndef IMGPU_OP_TABLE_H
#define IMGPU_OP_TABLE_H

#include <stddef.h>

#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The front ends an option is accepted by. */
#define IMGPU_FRONT_CLI (1u << 0)    /* imgpu OP (and the read-only commands, for the load limits) */
#define IMGPU_FRONT_BATCH (1u << 1)
#define IMGPU_FRONT_VIEW (1u << 2)
#define IMGPU_FRONT_ALL (IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH | IMGPU_FRONT_VIEW)

typedef enum imgpu_param_type {
    IMGPU_PARAM_INT,     /* int in [min, max] */
    IMGPU_PARAM_DOUBLE,  /* finite double in [min, max] (both +-HUGE_VAL: any finite number) */
    IMGPU_PARAM_ENUM,    /* one of choices[] (an int: the index) */
    IMGPU_PARAM_FLAG,    /* no value: writes flag_value (an int) */
    IMGPU_PARAM_SIZE,    /* WxH ('x' or 'X'), two ints at offset and offset2, each in [min, max] */
    IMGPU_PARAM_COLOR,   /* COLOR (cli_values.h): 4 bytes RGBA at offset, int 1 at offset2 */
    IMGPU_PARAM_LEVEL,   /* a level: a finite double in [min, max] at offset and int 0 at offset2,
                          * or a percentage "P%" (P in [0, 100]) at offset and int 1 at offset2 */
    IMGPU_PARAM_RECT,    /* X,Y,W,H: four ints at offset (X, Y in [min, max]; W, H in [1, max]), int 1
                          * at offset2 (given) */
} imgpu_param_type;

typedef struct imgpu_param {
    const char *name;         /* the CLI option without "--"; Python keyword with '-' -> '_' */
    imgpu_param_type type;
    const char *metavar;      /* the value in help ("DEG", "WxH", "luminance|per-channel"); NULL: a flag */
    const char *const *choices; /* ENUM: the names, NULL-terminated; the value is the index */
    double def;               /* default (ENUM: index; SIZE: each side); the constructors agree */
    double min, max;          /* range (INT, DOUBLE, SIZE: each side) */
    const char *units;        /* "degrees", or NULL */
    const char *help;         /* one line */
    const char *hint;         /* the allowed values: "invalid --NAME 'VALUE' (HINT)" */
    const char *doc;          /* `imgpu OP --help`: the text after "--NAME METAVAR", lines split by
                               * '\n' (NULL: not in that help) */
    size_t offset;            /* of the value in the op's parameter struct (imgpu_op.u) */
    size_t offset2;           /* SIZE: the second int; COLOR: the "given" int; LEVEL: the "%" int */
    int flag_value;           /* FLAG: the value written at offset (an int) */
    unsigned fronts;          /* IMGPU_FRONT_* that accept it */
    int required;             /* `imgpu OP` fails without it ("rotate needs --angle DEG") */
    const char *const *aliases; /* other names, NULL-terminated, or NULL */
} imgpu_param;

/* How an op is written as text (imgpu_op_desc.write). */
typedef enum imgpu_op_text {
    IMGPU_OP_TEXT_MANIFEST, /* batch manifest: "equalize mode=luminance formula=opencv" */
    IMGPU_OP_TEXT_OPTIONS,  /* the options of `imgpu OP IN OUT ...` the viewer prints */
    IMGPU_OP_TEXT_STATUS,   /* the viewer's overlay and title: "equalize luminance" */
} imgpu_op_text;

typedef struct imgpu_op_desc {
    const char *name;         /* the command (`imgpu NAME`), batch's and the viewer's --NAME */
    imgpu_op_kind kind;
    const char *summary;      /* one line, `imgpu --help` */
    const char *args;         /* the command's arguments, for usage lines: "IN OUT" */
    const char *verb;         /* "cannot VERB 'in.png'": "rotate", "equalize" */
    const char *doc;          /* `imgpu NAME --help`: the paragraph before "options:" */
    const imgpu_param *params;
    int nparams;
    /* batch and view: --NAME starts an op at its defaults; add_param names the parameter its
     * value sets (NULL: --NAME is a flag); add_help: its one help line */
    const char *add_param;
    const char *add_help;
    const char *batch_doc;    /* `imgpu batch --help`: its lines (after "  --NAME [VALUE]") */
    const char *view_doc;     /* `imgpu view --help`: its whole lines */
    const char *view_keys;    /* the viewer's '?' text: its lines of keys */
    /* The viewer's keys (GLFW codes of printable keys are their upper-case ASCII): view_key
     * (0: none) makes the op the one contrast op shown, or turns it off; while it is shown,
     * each view_steps entry steps a parameter (DOUBLE, INT, or SIZE as a square grid) by step
     * (Shift: big_step) down or up, within [min, max]. */
    char view_key;
    struct imgpu_view_step {
        char down, up;
        const char *param;
        double step, big_step, min, max;
    } view_steps[2];

    /* An op of this kind at its defaults. */
    void (*defaults)(imgpu_op *op);
    /* Validation: 0, or -1 with one message recorded (imgpu_error), one per rule. NULL: none. */
    int (*check)(const imgpu_op *op);
    /* Validation against the input's size (a crop's box inside the image): 0, or -1 with the
     * reason in why[0..n) ("the box 1,2,3,4 is outside the 2x2 image"); the plan says
     * "cannot VERB 'NAME': why". NULL: none. */
    int (*check_shape)(int w, int h, const imgpu_op *op, char *why, size_t n);
    /* 1 when the result's size depends on the pixels (crop --trim): shape / out_size are then
     * its bound, the backends return the smaller result and the chain goes on from it. NULL: 0. */
    int (*data_sized)(const imgpu_op *op);
    /* The op as it follows `prev` (NULL: first) in a chain: it may change prev (crop --inner
     * makes the rotation before it take the inner canvas). imgpu_ops_for_image calls it; the
     * plan calls it on copies and refuses a chain it fails on, or one not yet folded. 0, or -1
     * with the message recorded. NULL: nothing to do. */
    int (*chain)(imgpu_op *op, imgpu_op *prev);
    /* The result's size from a w x h input, in double (a rotation's box may be beyond int).
     * NULL: the input's size. */
    void (*shape)(int w, int h, const imgpu_op *op, double *ow, double *oh);
    /* The same as int (what the backends allocate): imgpu_pipeline_plan has refused a result
     * beyond int before any backend asks. NULL: the input's size. */
    void (*out_size)(int w, int h, const imgpu_op *op, int *ow, int *oh);
    /* Working memory beyond its input and result, in bytes: host (the CPU backend) and device
     * (the CUDA backend's scratch), for a w x h input of c channels of `depth` bits. */
    void (*work)(int w, int h, int c, int depth, const imgpu_op *op, double *host, double *dev);
    /* The CPU backend's cost of the op on one core, in ns, for a w x h x c input (8 bits);
     * `auto`'s rule (ops.c) weighs it against CUDA's start-up and transfers. */
    double (*cpu_ns)(int w, int h, int c, const imgpu_op *op);
    /* 1 when the op is heavy for the CPU: `auto`'s small-batch rule (src/batch/batch_run.c) keeps a
     * batch on the CPU only when none of its ops is. NULL: light. */
    int (*heavy)(const imgpu_op *op);
    /* The op as it runs on an image of `color_channels` (1 or 3), e.g. a gray image's rotation
     * background is the colour's luma (op.h imgpu_ops_for_image). NULL: unchanged. */
    void (*for_image)(imgpu_op *op, int color_channels);
    /* Notices (imgpu_notice) about the op's parameters on an image named `name` (with alpha or
     * not), e.g. a background's alpha that an image without alpha ignores. NULL: none. */
    void (*notes)(const imgpu_op *op, int has_alpha, const char *name);
    /* The op as text (imgpu_op_text); snprintf's contract: the length it would write. */
    int (*write)(const imgpu_op *op, imgpu_op_text how, char *buf, size_t n);
} imgpu_op_desc;

/* ---- the registry (registry.c) ------------------------------------------------------------- */
int imgpu_op_count(void);
/* The i-th op (0 <= i < imgpu_op_count()), in the registry's order (help lists them so). */
const imgpu_op_desc *imgpu_op_at(int i);
/* By name (the command word), or NULL. */
const imgpu_op_desc *imgpu_op_find(const char *name);
/* By kind, or NULL for a kind no op has. */
const imgpu_op_desc *imgpu_op_desc_of(imgpu_op_kind kind);
/* A parameter of d by name (or an alias), or NULL. */
const imgpu_param *imgpu_op_param(const imgpu_op_desc *d, const char *name, size_t len);
/* A fresh op of `kind` at its defaults (the constructors' values). */
imgpu_op imgpu_op_default(imgpu_op_kind kind);
/* Where a parameter's value lives in op. */
static inline void *imgpu_param_ptr(imgpu_op *op, const imgpu_param *p, size_t offset)
{
    (void)p;
    return (char *)&op->u + offset;
}
static inline const void *imgpu_param_cptr(const imgpu_op *op, size_t offset)
{
    return (const char *)&op->u + offset;
}
/* The name of an ENUM parameter's current value ("?" when out of range). */
const char *imgpu_param_choice(const imgpu_op *op, const imgpu_param *p);

#ifdef __cplusplus
}
#endif
#endif
