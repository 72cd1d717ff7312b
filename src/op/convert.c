/* convert.c — the op "convert" (issue 28): no parameters and no pixel change. `imgpu convert
 * IN OUT` is the generic op command around it: the load (auto-orient, --page), --depth 8, the
 * metadata (--strip) and the save options (format from OUT's extension, --quality, ...) are
 * the whole work. `imgpu batch` without an op runs no op at all (the same pixels, written in
 * --format); --convert there is accepted and changes nothing. The CPU backend copies
 * (src/backend/cpu/convert.c), CUDA copies on the device (src/backend/cuda/convert.c). */
#include "op_table.h"

#include <stdio.h>
#include <string.h>

imgpu_op imgpu_op_convert(void)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_CONVERT;
    return op;
}

static void defaults(imgpu_op *op) { *op = imgpu_op_convert(); }

static void work(int w, int h, int c, int depth, const imgpu_op *op, double *host, double *dev)
{
    (void)w, (void)h, (void)c, (void)depth, (void)op;
    *host = 0;
    *dev = 0;
}

/* a copy */
static double cpu_ns(int w, int h, int c, const imgpu_op *op)
{
    (void)op;
    return (double)w * h * c * 0.25;
}

static int write(const imgpu_op *op, imgpu_op_text how, char *buf, size_t n)
{
    (void)op;
    switch (how) {
    case IMGPU_OP_TEXT_MANIFEST: return snprintf(buf, n, "convert pixels=unchanged");
    case IMGPU_OP_TEXT_OPTIONS: return snprintf(buf, n, "%s", "");
    case IMGPU_OP_TEXT_STATUS: return snprintf(buf, n, "convert");
    }
    return snprintf(buf, n, "convert");
}

const imgpu_op_desc imgpu__op_convert = {
    .name = "convert",
    .kind = IMGPU_OP_CONVERT,
    .summary = "change only the format, depth, metadata or save options",
    .args = "IN OUT",
    .verb = "convert",
    .doc = "Write IN as OUT without changing a pixel: the format follows OUT's extension (or\n"
           "--format), --depth 8 writes a 16-bit image as 8 bits, --strip drops the metadata, and\n"
           "the save options (--quality, --compression, ...) apply. The EXIF orientation is applied\n"
           "on load unless --no-auto-orient, as for every command.\n",
    .params = NULL,
    .nparams = 0,
    .add_help = "no pixel change (what 'imgpu batch' does without an op)",
    .batch_doc = "no pixel change: the default when no op is given (as 'imgpu convert')",
    .view_doc = "", /* not in the viewer */
    .view_keys = "",
    .defaults = defaults,
    .work = work,
    .cpu_ns = cpu_ns,
    .write = write,
};
