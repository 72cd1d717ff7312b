/* test_op_table.c — the op table (src/op/op_table.h) holds together: names and kinds are
 * unique and found by name and kind; each parameter's stated default is what the op's
 * constructor (defaults) gives, and parsing the default's text gives it back; every option a
 * parameter names parses in range and refuses out of range with the one wording; the CPU
 * backend has a run entry for every op (a 3x2 image runs through each, with the shape the plan
 * promises); the manifest text starts with the op's name; and kinds are indexes, not bits (no
 * ceiling: a kind past 8 is looked up like any other, and refused as unknown). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpu/cpu.h"
#include "error.h"
#include "image.h"
#include "op/op_table.h"
#include "cli/options.h"
#include "test_util.h"

static double value_of(const imgpu_op *op, const imgpu_param *p)
{
    const void *v = imgpu_param_cptr(op, p->offset);
    switch (p->type) {
    case IMGPU_PARAM_DOUBLE:
    case IMGPU_PARAM_LEVEL: return *(const double *)v;
    case IMGPU_PARAM_COLOR: return *(const int *)imgpu_param_cptr(op, p->offset2);
    default: return *(const int *)v;
    }
}

static void test_names(void)
{
    const int n = imgpu_op_count();
    CHECK(n >= 3);
    for (int i = 0; i < n; i++) {
        const imgpu_op_desc *d = imgpu_op_at(i);
        CHECKF(imgpu_op_find(d->name) == d, "%s by name", d->name);
        CHECKF(imgpu_op_desc_of(d->kind) == d, "%s by kind", d->name);
        CHECKF(d->summary && d->args && d->verb && d->doc && d->write && d->defaults, "%s complete", d->name);
        for (int j = i + 1; j < n; j++)
            CHECKF(strcmp(d->name, imgpu_op_at(j)->name) && d->kind != imgpu_op_at(j)->kind, "%s unique", d->name);
        for (int a = 0; a < d->nparams; a++)
            for (int b = a + 1; b < d->nparams; b++)
                CHECKF(strcmp(d->params[a].name, d->params[b].name), "%s --%s twice", d->name, d->params[a].name);
    }
    CHECK(imgpu_op_find("no-such-op") == NULL);
    /* kinds are indexes: one past every bit the old option masks had is simply unknown */
    CHECK(imgpu_op_desc_of((imgpu_op_kind)imgpu_op_count()) == NULL);   /* one past the last op */
    CHECK(imgpu_op_desc_of((imgpu_op_kind)40) == NULL);
}

static void test_params(void)
{
    for (int i = 0; i < imgpu_op_count(); i++) {
        const imgpu_op_desc *d = imgpu_op_at(i);
        const imgpu_op def = imgpu_op_default(d->kind);
        CHECKF(def.kind == d->kind, "%s defaults' kind", d->name);
        for (int k = 0; k < d->nparams; k++) {
            const imgpu_param *p = &d->params[k];
            CHECKF(p->help && p->fronts && (!p->metavar || p->hint), "%s --%s described", d->name, p->name);
            CHECKF(imgpu_op_param(d, p->name, strlen(p->name)) == p, "%s --%s found", d->name, p->name);
            if (p->type == IMGPU_PARAM_FLAG || p->type == IMGPU_PARAM_COLOR || p->type == IMGPU_PARAM_RECT)
                continue;   /* no value as text: a flag, or a value that is given or not (test_rect_param) */
            CHECKF(value_of(&def, p) == p->def, "%s --%s default %g, the constructor gives %g", d->name, p->name,
                   p->def, value_of(&def, p));
            /* the default as text parses back to the default */
            char text[64];
            if (p->type == IMGPU_PARAM_ENUM)
                snprintf(text, sizeof text, "%s", p->choices[(int)p->def]);
            else if (p->type == IMGPU_PARAM_SIZE)
                snprintf(text, sizeof text, "%gx%g", p->def, p->def);
            else if (p->type == IMGPU_PARAM_LEVEL) /* a percentage where the default is one */
                snprintf(text, sizeof text, "%.17g%s", p->def,
                         *(const int *)imgpu_param_cptr(&def, p->offset2) ? "%" : "");
            else
                snprintf(text, sizeof text, "%.17g", p->def);
            imgpu_op op = imgpu_op_default(d->kind);
            CHECKF(imgpu_param_apply(p, text, &op) == 0 && value_of(&op, p) == p->def, "%s --%s '%s'", d->name,
                   p->name, text);
            /* out of range (or not a choice): refused with "invalid --NAME 'V' (HINT)" */
            if (p->type == IMGPU_PARAM_ENUM)
                snprintf(text, sizeof text, "no-such-choice");
            else if (isfinite(p->max))
                snprintf(text, sizeof text, p->type == IMGPU_PARAM_SIZE ? "%.0fx1" : "%.17g", p->max + 1);
            else
                snprintf(text, sizeof text, "x");
            char want[256];
            snprintf(want, sizeof want, "invalid --%s '%s' (%s)", p->name, text, p->hint);
            CHECKF(imgpu_param_apply(p, text, &op) < 0 && !strcmp(imgpu_usage_message(), want), "%s --%s '%s': %s",
                   d->name, p->name, text, imgpu_usage_message());
        }
    }
}

static void test_runs(void)
{
    imgpu_image *im = imgpu_image_new(3, 2, 3, 8);
    CHECK(im != NULL);
    if (!im)
        return;
    for (int i = 0; i < 3 * 2 * 3; i++)
        im->data[i] = (unsigned char)(i * 13);
    for (int i = 0; i < imgpu_op_count(); i++) {
        const imgpu_op_desc *d = imgpu_op_at(i);
        imgpu_op op = imgpu_op_default(d->kind);
        imgpu_plan plan;
        CHECKF(imgpu_pipeline_plan(3, 2, 3, 8, &op, 1, NULL, NULL, &plan) == 0, "%s plan", d->name);
        imgpu_image *out = imgpu_cpu_run(im, &op);
        CHECKF(out && out->width == plan.out_w && out->height == plan.out_h && out->channels == 3,
               "%s on the CPU", d->name);
        imgpu_image_free(out);
        char text[320];
        d->write(&op, IMGPU_OP_TEXT_MANIFEST, text, sizeof text);
        CHECKF(!strncmp(text, d->name, strlen(d->name)) && text[strlen(d->name)] == ' ', "%s manifest '%s'",
               d->name, text);
    }
    imgpu_op bad = imgpu_op_default(IMGPU_OP_EQUALIZE);
    bad.kind = (imgpu_op_kind)imgpu_op_count();   /* one past the last op, however many there are */
    char unknown[40];
    snprintf(unknown, sizeof unknown, "unknown operation %d", imgpu_op_count());
    CHECK(imgpu_cpu_run(im, &bad) == NULL);
    CHECK(strstr(imgpu_error_message(), unknown) != NULL);
    imgpu_image_free(im);
}

/* The LEVEL type (levels' --black / --white): a level in [min, max] or a percentage "P%". */
static void test_level_param(void)
{
    const imgpu_op_desc *d = imgpu_op_find("levels");
    CHECK(d != NULL);
    const imgpu_param *p = d ? imgpu_op_param(d, "black", 5) : NULL;
    CHECK(p != NULL && p->type == IMGPU_PARAM_LEVEL);
    if (!p)
        return;
    imgpu_op op = imgpu_op_default(d->kind);
    CHECK(imgpu_param_apply(p, "50%", &op) == 0 && op.u.levels.black == 50.0 && op.u.levels.black_pct == 1);
    CHECK(imgpu_param_apply(p, "12.5", &op) == 0 && op.u.levels.black == 12.5 && op.u.levels.black_pct == 0);
    CHECK(imgpu_param_apply(p, "0%", &op) == 0 && op.u.levels.black == 0.0 && op.u.levels.black_pct == 1);
    CHECK(imgpu_param_apply(p, "65535", &op) == 0 && op.u.levels.black == 65535.0 && op.u.levels.black_pct == 0);
    static const char *const bad[] = {"101%", "%", "-1", "65536", "nan%", "10%%", "1e999", "", "5 %"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[160];
        snprintf(want, sizeof want, "invalid --black '%s' (%s)", bad[i], p->hint);
        CHECKF(imgpu_param_apply(p, bad[i], &op) < 0 && !strcmp(imgpu_usage_message(), want), "'%s': %s", bad[i],
               imgpu_usage_message());
    }
    /* white defaults to 100%: the image's maximum at either depth */
    const imgpu_op def = imgpu_op_default(d->kind);
    CHECK(def.u.levels.white == 100.0 && def.u.levels.white_pct == 1 && def.u.levels.gamma == 1.0);
}

/* The RECT type (crop's --rect): X,Y,W,H, X and Y 0 or more, W and H 1 or more; "given" set. */
static void test_rect_param(void)
{
    const imgpu_op_desc *d = imgpu_op_find("crop");
    CHECK(d != NULL);
    const imgpu_param *p = d ? imgpu_op_param(d, "rect", 4) : NULL;
    CHECK(p != NULL && p->type == IMGPU_PARAM_RECT);
    if (!p)
        return;
    imgpu_op op = imgpu_op_default(d->kind);
    CHECK(op.u.crop.has_rect == 0);
    CHECK(imgpu_param_apply(p, "1,2,3,4", &op) == 0 && op.u.crop.x == 1 && op.u.crop.y == 2 && op.u.crop.w == 3 &&
          op.u.crop.h == 4 && op.u.crop.has_rect == 1);
    CHECK(imgpu_param_apply(p, "0,0,2147483647,1", &op) == 0 && op.u.crop.w == 2147483647);
    static const char *const bad[] = {"1,2,0,4", "1,2,3,0", "-1,0,1,1", "0,-1,1,1", "1,2,3", "1,2,3,4,5", "1,2,3,4,",
                                      ",1,2,3", "a,b,c,d", "", "1;2;3;4", "0,0,2147483648,1", "1, 2,3,4x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        imgpu_op o = imgpu_op_default(d->kind);
        char want[256];
        snprintf(want, sizeof want, "invalid --rect '%s' (%s)", bad[i], p->hint);
        CHECKF(imgpu_param_apply(p, bad[i], &o) < 0 && !strcmp(imgpu_usage_message(), want) && !o.u.crop.has_rect,
               "--rect '%s': %s", bad[i], imgpu_usage_message());
    }
}

/* crop's box against the input in the plan (check_shape), and --inner's chain (fold into the
 * rotation before it; refused without one). */
static void test_crop_plan(void)
{
    imgpu_plan plan;
    imgpu_op op = imgpu_op_crop(1, 1, 3, 2);
    CHECK(imgpu_pipeline_plan(4, 3, 3, 8, &op, 1, NULL, NULL, &plan) == 0 && plan.out_w == 3 && plan.out_h == 2);
    CHECK(imgpu_pipeline_plan(3, 3, 3, 8, &op, 1, NULL, "in.png", &plan) < 0);
    CHECKF(!strcmp(imgpu_error_message(), "cannot crop 'in.png': the box 1,1,3,2 is outside the 3x3 image"), "%s",
           imgpu_error_message());
    imgpu_op ops[2] = {imgpu_op_rotate(30.0), imgpu_op_default(IMGPU_OP_CROP)};
    ops[1].u.crop.inner = 1;
    CHECK(imgpu_pipeline_plan(40, 30, 3, 8, &ops[1], 1, NULL, NULL, &plan) < 0);   /* no rotation before it */
    CHECK(strstr(imgpu_error_message(), "must follow an expanding rotation") != NULL);
    CHECK(imgpu_pipeline_plan(40, 30, 3, 8, ops, 2, NULL, NULL, &plan) < 0);      /* not folded */
    imgpu_ops_for_image(ops, 2, 3);
    CHECK(ops[0].u.rotate.crop == 2);
    CHECK(imgpu_pipeline_plan(40, 30, 3, 8, ops, 2, NULL, NULL, &plan) == 0 && plan.out_w < 40 && plan.out_h < 30);
    imgpu_op keep[2] = {imgpu_op_rotate(30.0), ops[1]};
    keep[0].u.rotate.crop = 1;   /* a rotation that keeps the size: no inner rectangle to take */
    imgpu_ops_for_image(keep, 2, 3);
    CHECK(keep[0].u.rotate.crop == 1 && imgpu_pipeline_plan(40, 30, 3, 8, keep, 2, NULL, NULL, &plan) < 0);
}

int main(void)
{
    test_names();
    test_params();
    test_level_param();
    test_rect_param();
    test_crop_plan();
    test_runs();
    TEST_MAIN_END();
}
