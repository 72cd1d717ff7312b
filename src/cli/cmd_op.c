/* cmd_op.c — `imgpu OP IN OUT [OPTIONS]`: every op of the op table (src/op/op_table.h) is a
 * command, run by this one generic command: the op the table's options set (c->op) on the
 * input, saved to the output; --pages all runs every page of a multi-page TIFF. The input's
 * load (bounded from the header, CUDA started alongside) serves histogram too.
 */
#include "cli/cli.h"
#include "error.h"

#include <stdint.h>
#include <stdio.h>

#define HELP_PAGES                                                                          \
    "  --pages all          every page of a multi-page TIFF through the op, into a\n"        \
    "                       multi-page TIFF output (other outputs hold one image)\n"
#define HELP_MEMORY                                                                         \
    "  --max-memory N       refuse an op, or the decode of an input, that would need more\n" \
    "                       than N bytes of memory (input + result + working buffers;\n"    \
    "                       checked from the header; K, M, G suffixes; default 8G;\n"       \
    "                       environment: IMGPU_MAX_MEMORY)\n"
/* --depth: the op commands' (after their parameters) */
#define HELP_DEPTH "  --depth 8            write a 16-bit result as 8 bits (default: keep the depth)\n"
/* What every op command's help has after its parameters. */
static const char s_help_op_tail[] = HELP_DEPTH HELP_DEVICE HELP_LOAD HELP_PAGES HELP_MEMORY HELP_SAVE HELP_QUIET HELP_TAIL;

/* An op's help after the usage line: its paragraph and parameters from the op table, then what
 * every op takes. */
void imgpu__cli_op_help(const imgpu_op_desc *opd)
{
    printf("%s\noptions:\n", opd->doc);
    imgpu_opt_help_params(stdout, opd);
    fputs(s_help_op_tail, stdout);
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
imgpu_image *imgpu__cli_load_input(const cli *c, const imgpu_op *ops, int n, imgpu_meta **meta)
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
int imgpu__cli_op_run(const cli *c)
{
    imgpu_op op = c->op;
    return process_one(c, &op);
}
