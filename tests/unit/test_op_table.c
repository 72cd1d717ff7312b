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
            if (p->type == IMGPU_PARAM_FLAG || p->type == IMGPU_PARAM_COLOR)
                continue;
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

int main(void)
{
    test_names();
    test_params();
    test_level_param();
    test_runs();
    TEST_MAIN_END();
}
