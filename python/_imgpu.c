/* _imgpu.c — the C half of the Python module `imgpu` (python/imgpu/__init__.py is the other):
 * CPython's C API only, no pybind11 and no numpy C API, so one build serves numpy 1.x and 2.x.
 *
 * Arrays come in through the buffer protocol, __array_interface__ or __dlpack__ (host memory;
 * an object with __cuda_array_interface__ or a DLPack tensor on a CUDA device raises
 * imgpu.Error: device arrays are designed, not built yet, notes/pylib.md). An input whose rows
 * are interleaved pixels (sample stride = the sample size, pixel stride = channels x it, any
 * row stride at least a row) is used in place; any other layout (negative or odd strides,
 * a channel or column step, misaligned 16-bit samples) is copied into a tight buffer first.
 * Results are numpy arrays over imgpu's own result buffers (zero-copy: numpy.asarray of an
 * object that exposes them through the buffer protocol and frees them with the array).
 *
 * Every call releases the GIL around imgpu's work; the library is thread-safe (imgpu.h says
 * how), and an error's message is read on the thread that made the call.
 *
 * The op functions come from the op table (src/op/op_table.h): _op_table() gives __init__.py
 * each op of the registry with its parameters as Python keywords, derived from their types
 * (the section "THE OP TABLE AS PYTHON SEES IT" below says how), and _run_ops parses keyword
 * values with the CLI's own parsers, so ranges, defaults and refusals are the CLI's. An op added
 * to the registry appears as imgpu.<name> with no edit here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "batch/batch.h"
#include "cli_values.h"
#include "error.h"
#include "exif.h"
#include "image.h"
#include "io.h"
#include "meta.h"
#include "op.h"
#include "ops.h"
#include "op/op_table.h"
#include "cli/options.h"
#include <imgpu/imgpu.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static PyObject *s_Error;        /* imgpu.Error */
static PyObject *s_asarray;      /* numpy.asarray, imported on first use */

/* ================================================================================================
 * THE OP TABLE AS PYTHON SEES IT. Every op of the registry (src/op/op_table.h, imgpu_op_at) is a
 * function imgpu.<name>, generated at import (__init__.py) from _op_table(); its keywords are
 * derived from the op's parameters by their types, never by op name:
 *   INT, DOUBLE  a number in [min, max] (Python int; DOUBLE also float)
 *   ENUM         one of the choices (str)
 *   SIZE         (w, h), "WxH" or one int n for n x n; each side in [min, max]
 *   COLOR        None (the op's default), a COLOR string (the CLI's grammar) or (R, G, B[, A])
 *   FLAG         two flags that write one field with different values (rotate's --expand and
 *                --crop) are ONE bool keyword, named after the flag the op's defaults select
 *                (expand=True; False selects the other); any other flag is a bool keyword of its
 *                own (True sets it; two that contradict each other: ValueError, as the CLI).
 * A required parameter (rotate's angle) is positional after the array; the rest are keyword-only.
 * Keywords are the CLI options with '-' -> '_', only those the CLI or batch accept. Defaults are
 * the op's defaults (imgpu_op_default: its descriptor's constructor). Each value is written as the
 * CLI's text and parsed by the CLI's own parser (imgpu_param_apply), then the op's check runs, so
 * the ranges and the refusals (ValueError, "clahe: invalid --clip '2000000.0' (a number
 * 0..1000000; 0 disables clipping)") are the CLI's. A new op in the registry needs nothing here.
 * ============================================================================================== */
enum { K_INT, K_FLOAT, K_CHOICE, K_SIZE, K_COLOR, K_TOGGLE, K_FLAG, K_LEVEL, K_RECT };
static const char *const s_kind_names[] = {"int", "float", "choice", "size", "color", "bool", "bool", "level", "rect"};

typedef struct pyparam {
    char name[64];               /* the Python keyword */
    int kind;                    /* K_* */
    const imgpu_param *p;        /* the table's entry (K_TOGGLE: the flag True selects) */
    const imgpu_param *other;    /* K_TOGGLE: the flag False selects */
} pyparam;

typedef struct pyop {
    const imgpu_op_desc *d;
    imgpu_op defaults;
    int np;
    pyparam *pp;
} pyop;

static pyop *s_pyops;
static int s_npyops;

#define HISTOGRAM_NAME "histogram"   /* not an op of the table: a measurement (run_ops) */

static int param_int_at(const imgpu_op *op, size_t offset) { return *(const int *)imgpu_param_cptr(op, offset); }

/* Builds s_pyops from the registry (once, at import). 0, or -1 with an exception. */
static int pyops_build(void)
{
    const int n = imgpu_op_count();
    s_pyops = PyMem_Calloc((size_t)(n ? n : 1), sizeof *s_pyops);
    if (!s_pyops) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const imgpu_op_desc *d = imgpu_op_at(i);
        pyop *o = &s_pyops[i];
        o->d = d;
        o->defaults = imgpu_op_default(d->kind);
        o->pp = PyMem_Calloc((size_t)(d->nparams ? d->nparams : 1), sizeof *o->pp);
        if (!o->pp) {
            PyErr_NoMemory();
            return -1;
        }
        s_npyops = i + 1;
        for (int k = 0; k < d->nparams; k++) {
            const imgpu_param *p = &d->params[k];
            if (!(p->fronts & (IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH)))
                continue;
            pyparam q;
            memset(&q, 0, sizeof q);
            q.p = p;
            switch (p->type) {
            case IMGPU_PARAM_INT: q.kind = K_INT; break;
            case IMGPU_PARAM_DOUBLE: q.kind = K_FLOAT; break;
            case IMGPU_PARAM_ENUM: q.kind = K_CHOICE; break;
            case IMGPU_PARAM_SIZE: q.kind = K_SIZE; break;
            case IMGPU_PARAM_COLOR: q.kind = K_COLOR; break;
            case IMGPU_PARAM_LEVEL: q.kind = K_LEVEL; break;
            case IMGPU_PARAM_RECT: q.kind = K_RECT; break;
            case IMGPU_PARAM_FLAG: {
                /* the flags that write this field with another value */
                const imgpu_param *mate = NULL;
                int mates = 0, earlier = 0;
                for (int j = 0; j < d->nparams; j++) {
                    const imgpu_param *m = &d->params[j];
                    if (j == k || m->type != IMGPU_PARAM_FLAG || m->offset != p->offset ||
                        !(m->fronts & (IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH)))
                        continue;
                    mates++;
                    mate = m;
                    earlier |= j < k;
                }
                if (mates == 1 && mate->flag_value != p->flag_value) {
                    if (earlier)
                        goto next;   /* the pair became one keyword at its first flag */
                    const int def = param_int_at(&o->defaults, p->offset);
                    const int swap = def == mate->flag_value && def != p->flag_value;
                    q.kind = K_TOGGLE;
                    q.p = swap ? mate : p;
                    q.other = swap ? p : mate;
                } else {
                    q.kind = K_FLAG;
                }
                break;
            }
            default:
                PyErr_Format(PyExc_SystemError, "imgpu: op %s: parameter --%s of an unknown type", d->name, p->name);
                return -1;
            }
            snprintf(q.name, sizeof q.name, "%s", q.p->name);
            for (char *c = q.name; *c; c++)
                if (*c == '-')
                    *c = '_';
            o->pp[o->np++] = q;
        next:;
        }
    }
    return 0;
}

static const pyop *find_pyop(const char *name)
{
    for (int i = 0; i < s_npyops; i++)
        if (!strcmp(s_pyops[i].d->name, name))
            return &s_pyops[i];
    return NULL;
}

static const pyparam *find_pyparam(const pyop *o, const char *name)
{
    for (int i = 0; i < o->np; i++)
        if (!strcmp(o->pp[i].name, name))
            return &o->pp[i];
    return NULL;
}

static PyObject *bad_type(const pyop *o, const pyparam *q, PyObject *v, const char *takes)
{
    return PyErr_Format(PyExc_TypeError, "%s: %s= takes %s, not %.100s", o->d->name, q->name, takes,
                        Py_TYPE(v)->tp_name);
}

/* An integer (not bool; numpy integers too) as decimal text into buf. 0, -1 with TypeError. */
static int int_text(const pyop *o, const pyparam *q, PyObject *whole, PyObject *v, char *buf, size_t n,
                    const char *takes)
{
    if (PyBool_Check(v) || !PyIndex_Check(v)) {
        bad_type(o, q, whole, takes);
        return -1;
    }
    PyObject *i = PyNumber_Index(v);
    PyObject *s = i ? PyObject_Str(i) : NULL;
    Py_XDECREF(i);
    const char *t = s ? PyUnicode_AsUTF8(s) : NULL;
    if (!t) {
        Py_XDECREF(s);
        return -1;
    }
    snprintf(buf, n, "%s", t);   /* a number too long for buf is cut: the parser refuses it anyway */
    Py_DECREF(s);
    return 0;
}

/* The value v of keyword q as the CLI would be given it, into buf: 1 (text), 0 (a flag: *flag
 * is the flag to apply, or NULL for none), -1 with TypeError. */
static int value_text(const pyop *o, const pyparam *q, PyObject *v, char *buf, size_t n, const imgpu_param **flag)
{
    *flag = NULL;
    switch (q->kind) {
    case K_INT:
        return int_text(o, q, v, v, buf, n, "an int") < 0 ? -1 : 1;
    case K_LEVEL: /* a number, or a str such as "10%" (parsed as the CLI parses it) */
        if (PyUnicode_Check(v)) {
            const char *s = PyUnicode_AsUTF8(v);
            if (!s)
                return -1;
            snprintf(buf, n, "%s", s);
            return 1;
        }
        /* fall through */
    case K_FLOAT: {
        if (PyBool_Check(v) || PyUnicode_Check(v) || PyBytes_Check(v) ||
            !(PyFloat_Check(v) || PyLong_Check(v) || PyIndex_Check(v) || (Py_TYPE(v)->tp_as_number &&
                                                                          Py_TYPE(v)->tp_as_number->nb_float))) {
            bad_type(o, q, v, "a number");
            return -1;
        }
        double x = PyFloat_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError))
                return -1;
            PyErr_Clear();
            x = HUGE_VAL;   /* an int beyond double: out of any range, refused as the CLI refuses inf */
        }
        char *s = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (!s) {
            PyErr_NoMemory();
            return -1;
        }
        snprintf(buf, n, "%s", s);
        PyMem_Free(s);
        return 1;
    }
    case K_CHOICE: {
        const char *s = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
        if (!s) {
            if (!PyErr_Occurred())
                bad_type(o, q, v, "a str");
            return -1;
        }
        snprintf(buf, n, "%s", s);
        return 1;
    }
    case K_SIZE: {
        if (PyUnicode_Check(v)) {
            const char *s = PyUnicode_AsUTF8(v);
            if (!s)
                return -1;
            snprintf(buf, n, "%s", s);
            return 1;
        }
        char a[40], b[40];
        if (PyTuple_Check(v) || PyList_Check(v)) {
            if (PySequence_Size(v) != 2) {
                PyObject *r = PyObject_Repr(v);
                snprintf(buf, n, "%s", r && PyUnicode_AsUTF8(r) ? PyUnicode_AsUTF8(r) : "?");
                Py_XDECREF(r);
                PyErr_Clear();
                return 1;   /* the parser refuses it, in the CLI's words */
            }
            PyObject *x = PySequence_GetItem(v, 0), *y = PySequence_GetItem(v, 1);
            int rc = x && y && int_text(o, q, v, x, a, sizeof a, "(int, int), 'WxH' or an int") == 0 &&
                     int_text(o, q, v, y, b, sizeof b, "(int, int), 'WxH' or an int") == 0 ? 1 : -1;
            Py_XDECREF(x);
            Py_XDECREF(y);
            if (rc < 0)
                return -1;
        } else {
            if (int_text(o, q, v, v, a, sizeof a, "(int, int), 'WxH' or an int") < 0)
                return -1;
            memcpy(b, a, sizeof a);
        }
        snprintf(buf, n, "%sx%s", a, b);
        return 1;
    }
    case K_RECT: /* "X,Y,W,H" or (X, Y, W, H): the same text, the CLI's parser */
    case K_COLOR: {
        if (PyUnicode_Check(v)) {
            const char *s = PyUnicode_AsUTF8(v);
            if (!s)
                return -1;
            snprintf(buf, n, "%s", s);
            return 1;
        }
        if (!PyTuple_Check(v) && !PyList_Check(v)) {
            bad_type(o, q, v, q->kind == K_RECT ? "None, a str 'X,Y,W,H' or (X, Y, W, H)" : "None, a str or (R, G, B[, A])");
            return -1;
        }
        size_t off = 0;
        buf[0] = '\0';
        for (Py_ssize_t i = 0; i < PySequence_Size(v); i++) {
            char e[40];
            PyObject *x = PySequence_GetItem(v, i);
            int rc = x ? int_text(o, q, v, x, e, sizeof e,
                                  q->kind == K_RECT ? "None, a str 'X,Y,W,H' or (X, Y, W, H) of ints"
                                                    : "None, a str or (R, G, B[, A]) of ints") : -1;
            Py_XDECREF(x);
            if (rc < 0)
                return -1;
            if (off < n)
                off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? "," : "", e);
        }
        return 1;
    }
    case K_TOGGLE:
    case K_FLAG: {
        int t;
        if (PyBool_Check(v))
            t = v == Py_True;
        else if (PyLong_Check(v) && (PyLong_AsLong(v) == 0 || PyLong_AsLong(v) == 1))
            t = PyLong_AsLong(v) == 1;
        else {
            PyErr_Clear();
            bad_type(o, q, v, "True or False");
            return -1;
        }
        *flag = t ? q->p : q->kind == K_TOGGLE ? q->other : NULL;
        return 0;
    }
    }
    PyErr_SetString(PyExc_SystemError, "imgpu: a parameter of an unknown kind");
    return -1;
}

/* ValueError with the CLI's refusal (the usage message: thread-local), prefixed by the op. */
static int refuse(const pyop *o, const char *msg)
{
    PyErr_Format(PyExc_ValueError, "%s: %s", o->d->name, msg);
    return -1;
}

/* name + params dict -> *op, from the op's defaults. *opp: the op (NULL for histogram). With
 * cli (a list), appends the op as `imgpu batch` options instead of only checking them. */
static int build_op(PyObject *name, PyObject *params, imgpu_op *op, const pyop **opp, PyObject *cli)
{
    const char *n = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (!n) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "an op name must be a str");
        return -1;
    }
    if (params != NULL && params != Py_None && !PyDict_Check(params)) {
        PyErr_SetString(PyExc_TypeError, "op parameters must be a dict");
        return -1;
    }
    const int have = params && params != Py_None && PyDict_GET_SIZE(params) > 0;
    *opp = NULL;
    if (!strcmp(n, HISTOGRAM_NAME) && !cli) {
        if (have) {
            PyErr_SetString(PyExc_TypeError, "histogram() takes no parameters");
            return -1;
        }
        return 0;
    }
    const pyop *o = find_pyop(n);
    if (!o) {
        char names[512];
        size_t k = 0;
        names[0] = '\0';
        for (int i = 0; i < s_npyops && k < sizeof names; i++)
            k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "", s_pyops[i].d->name);
        PyErr_Format(PyExc_ValueError, "unknown op '%s' (%s%s)", n, names, cli ? "" : ", " HISTOGRAM_NAME);
        return -1;
    }
    *opp = o;
    *op = o->defaults;
    unsigned char given[64];
    memset(given, 0, sizeof given);
    const imgpu_param *add = o->d->add_param ? imgpu_op_param(o->d, o->d->add_param, strlen(o->d->add_param)) : NULL;
    if (cli) {
        PyObject *s = PyUnicode_FromFormat("--%s", o->d->name);
        if (!s || PyList_Append(cli, s) < 0) {
            Py_XDECREF(s);
            return -1;
        }
        Py_DECREF(s);
    }
    /* in the table's order (how batch options are written), add_param's value first */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < o->np; i++) {
            const pyparam *q = &o->pp[i];
            if ((pass == 0) != (q->p == add))
                continue;
            PyObject *v = have ? PyDict_GetItemString(params, q->name) : NULL;
            if (!v) {
                if (q->p->required) {
                    PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", o->d->name, q->name);
                    return -1;
                }
                continue;
            }
            char text[256];
            const imgpu_param *flag;
            int rc = v == Py_None && (q->kind == K_COLOR || q->kind == K_RECT) ? 2
                                                                                : value_text(o, q, v, text, sizeof text, &flag);
            if (rc < 0)
                return -1;
            if (rc == 2) {   /* None: the op's default colour (rect: not given) */
                memcpy(imgpu_param_ptr(op, q->p, q->p->offset), imgpu_param_cptr(&o->defaults, q->p->offset),
                       q->kind == K_RECT ? 4 * sizeof(int) : 4);
                *(int *)imgpu_param_ptr(op, q->p, q->p->offset2) = param_int_at(&o->defaults, q->p->offset2);
                continue;
            }
            const imgpu_param *target = rc == 1 ? q->p : flag;
            if (!target)
                continue;   /* a lone flag set to False: left as it is */
            if (imgpu_param_apply(target, rc == 1 ? text : NULL, op) < 0)
                return refuse(o, imgpu_usage_message());
            const int idx = (int)(target - o->d->params);
            if (idx >= 0 && idx < (int)sizeof given)
                given[idx] = 1;
            if (!cli)
                continue;
            if (!(target->fronts & IMGPU_FRONT_BATCH) && target != add) {
                PyErr_Format(PyExc_ValueError, "%s: %s= has no `imgpu batch` option", o->d->name, q->name);
                return -1;
            }
            PyObject *a = target == add ? NULL : PyUnicode_FromFormat("--%s", target->name);
            PyObject *b = rc == 1 ? PyUnicode_FromString(text) : NULL;
            int bad = (target != add && (!a || PyList_Append(cli, a) < 0)) || (rc == 1 && (!b || PyList_Append(cli, b) < 0));
            Py_XDECREF(a);
            Py_XDECREF(b);
            if (bad)
                return -1;
        }
    /* a keyword the op does not have */
    if (have) {
        PyObject *k, *v;
        Py_ssize_t pos = 0;
        while (PyDict_Next(params, &pos, &k, &v)) {
            const char *ks = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
            if (!ks || !find_pyparam(o, ks)) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", o->d->name, k);
                return -1;
            }
        }
    }
    if (imgpu_opt_check_flags(o->d, given) < 0)
        return refuse(o, imgpu_usage_message());
    if (o->d->check && o->d->check(op) < 0)
        return refuse(o, imgpu_error_message());
    return 0;
}

/* _op_table(): the registry as Python sees it: [{"name", "summary", "doc", "add_param",
 * "params": [{"name", "type", "cli" (its CLI option(s): a bool's True one first), "required",
 * "default" (absent when required), "min", "max", "units", "choices", "metavar", "hint", "help",
 * "help_false" (a bool pair: the help of the option False selects), "batch"}]}]. */
static PyObject *param_default(const pyop *o, const pyparam *q)
{
    const imgpu_op *d = &o->defaults;
    switch (q->kind) {
    case K_INT: return PyLong_FromLong(param_int_at(d, q->p->offset));
    case K_FLOAT: return PyFloat_FromDouble(*(const double *)imgpu_param_cptr(d, q->p->offset));
    case K_LEVEL: {
        const double x = *(const double *)imgpu_param_cptr(d, q->p->offset);
        if (!param_int_at(d, q->p->offset2))
            return PyFloat_FromDouble(x);
        char t[64];
        snprintf(t, sizeof t, "%g%%", x);
        return PyUnicode_FromString(t);
    }
    case K_CHOICE: {
        const char *c = imgpu_param_choice(d, q->p);
        return PyUnicode_FromString(c);
    }
    case K_SIZE: return Py_BuildValue("(ii)", param_int_at(d, q->p->offset), param_int_at(d, q->p->offset2));
    case K_COLOR: {
        if (!param_int_at(d, q->p->offset2))
            Py_RETURN_NONE;
        const uint8_t *c = imgpu_param_cptr(d, q->p->offset);
        return Py_BuildValue("(iiii)", c[0], c[1], c[2], c[3]);
    }
    case K_RECT: {
        if (!param_int_at(d, q->p->offset2))
            Py_RETURN_NONE;
        const int *r = imgpu_param_cptr(d, q->p->offset);
        return Py_BuildValue("(iiii)", r[0], r[1], r[2], r[3]);
    }
    case K_TOGGLE:
    case K_FLAG: return PyBool_FromLong(param_int_at(d, q->p->offset) == q->p->flag_value);
    }
    Py_RETURN_NONE;
}

static PyObject *py_op_table(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    PyObject *list = PyList_New(0);
    if (!list)
        return NULL;
    for (int i = 0; i < s_npyops; i++) {
        const pyop *o = &s_pyops[i];
        PyObject *params = PyList_New(0);
        if (!params)
            goto fail;
        const char *add = NULL;
        for (int k = 0; k < o->np; k++) {
            const pyparam *q = &o->pp[k];
            const imgpu_param *p = q->p;
            if (o->d->add_param && imgpu_op_param(o->d, o->d->add_param, strlen(o->d->add_param)) == p)
                add = q->name;
            PyObject *choices = PyList_New(0);
            for (int c = 0; choices && q->kind == K_CHOICE && p->choices[c]; c++) {
                PyObject *s = PyUnicode_FromString(p->choices[c]);
                if (!s || PyList_Append(choices, s) < 0)
                    Py_CLEAR(choices);
                Py_XDECREF(s);
            }
            PyObject *tup = choices ? PyList_AsTuple(choices) : NULL;
            Py_XDECREF(choices);
            PyObject *cli = q->other ? Py_BuildValue("(ss)", p->name, q->other->name) : Py_BuildValue("(s)", p->name);
            const int num = q->kind == K_INT || q->kind == K_FLOAT || q->kind == K_SIZE || q->kind == K_LEVEL;
            PyObject *dict = tup && cli
                ? Py_BuildValue("{s:s,s:s,s:N,s:O,s:N,s:N,s:z,s:N,s:z,s:z,s:z,s:z,s:O}", "name", q->name, "type",
                                s_kind_names[q->kind], "cli", cli, "required", p->required ? Py_True : Py_False, "min",
                                num ? PyFloat_FromDouble(p->min) : Py_NewRef(Py_None), "max",
                                num ? PyFloat_FromDouble(p->max) : Py_NewRef(Py_None), "units", p->units,
                                "choices", tup, "metavar", p->metavar, "hint", p->hint, "help", p->doc ? p->doc : p->help,
                                "help_false", q->other ? (q->other->doc ? q->other->doc : q->other->help) : NULL,
                                "batch", (p->fronts & IMGPU_FRONT_BATCH) || add == q->name ? Py_True : Py_False)
                : NULL;
            if (!dict) {
                Py_XDECREF(tup);
                Py_XDECREF(cli);
            }
            PyObject *def = dict && !p->required ? param_default(o, q) : NULL;
            if (!dict || (!p->required && (!def || PyDict_SetItemString(dict, "default", def) < 0)) ||
                PyList_Append(params, dict) < 0) {
                Py_XDECREF(def);
                Py_XDECREF(dict);
                Py_DECREF(params);
                goto fail;
            }
            Py_XDECREF(def);
            Py_DECREF(dict);
        }
        PyObject *d = Py_BuildValue("{s:s,s:s,s:s,s:z,s:N}", "name", o->d->name, "summary", o->d->summary, "doc",
                                    o->d->doc ? o->d->doc : "", "add_param", add, "params", params);
        if (!d || PyList_Append(list, d) < 0) {
            Py_XDECREF(d);
            goto fail;
        }
        Py_DECREF(d);
    }
    return list;
fail:
    Py_DECREF(list);
    return NULL;
}
/* ============================== end of the op table as Python sees it =========================== */

/* ---- errors -------------------------------------------------------------------------------- */

/* imgpu.Error with the thread's last message (or `fallback`). Returns NULL. */
static PyObject *raise_imgpu(const char *fallback)
{
    const char *m = imgpu_error_message();
    PyErr_SetString(s_Error, m && *m ? m : fallback);
    return NULL;
}

static PyObject *raise_cuda_unavailable(const char *what)
{
    imgpu_device r;
    if (!imgpu_built_with_cuda())
        return PyErr_Format(s_Error, "%s: CUDA not available (this imgpu was built without CUDA)", what);
    if (imgpu_device_resolve(IMGPU_DEVICE_CUDA, &r) < 0)
        return PyErr_Format(s_Error, "%s: CUDA not available (%s)", what, imgpu_error_message());
    return PyErr_Format(s_Error, "%s: CUDA arrays are not supported by this build of the module yet "
                        "(copy to the host first: tensor.cpu(), cupy.asnumpy)", what);
}

/* ---- devices and contexts ------------------------------------------------------------------ */

typedef struct ContextObject {
    PyObject_HEAD
    imgpu_context *ctx;      /* NULL once closed */
    imgpu_device device;
    /* close() with results still alive (imgpu.Array, which free their memory on the context's
     * stream): the context is closed to new calls, held here, and destroyed with the last one */
    imgpu_context *held;
    Py_ssize_t narrays;
} ContextObject;

/* device= as the Context its results keep alive: the Context given, or NULL for a name (a
 * "cuda:N" string also yields a context, the module's own for that GPU, which lives on). */
static PyObject *context_obj(PyObject *device);

/* The context an array of c's lives on: open, or closed and held for its arrays. */
static imgpu_context *context_of_arrays(PyObject *c)
{
    return c ? ((ContextObject *)c)->ctx ? ((ContextObject *)c)->ctx : ((ContextObject *)c)->held : NULL;
}

static PyTypeObject ContextType;

/* One context per CUDA device named "cuda:N" (N > 0) in a device= string or chosen by a CUDA
 * array's own device, made on first use and kept for the process (as the default one is). */
#define MAX_ORDINALS 64
static imgpu_context *s_ord_ctx[MAX_ORDINALS];
static pthread_mutex_t s_ord_lock = PTHREAD_MUTEX_INITIALIZER;

static imgpu_context *ordinal_context(int n)
{
    if (n < 0 || n >= MAX_ORDINALS) {
        PyErr_Format(s_Error, "CUDA device %d: only devices 0..%d are served", n, MAX_ORDINALS - 1);
        return NULL;
    }
    pthread_mutex_lock(&s_ord_lock);
    if (!s_ord_ctx[n])
        s_ord_ctx[n] = imgpu_context_create_on(IMGPU_DEVICE_CUDA, n);
    imgpu_context *c = s_ord_ctx[n];
    pthread_mutex_unlock(&s_ord_lock);
    if (!c)
        raise_imgpu("cannot create a context");
    return c;
}

/* "auto", "cpu", "cuda", "cuda:N". 0, or -1 with ValueError. *ordinal (may be NULL): N of
 * "cuda:N" for N > 0, else -1 ("cuda" and "cuda:0": the default device). */
static int parse_device_name_on(const char *s, imgpu_device *d, int *ordinal)
{
    if (ordinal)
        *ordinal = -1;
    if (!strcmp(s, "auto")) *d = IMGPU_DEVICE_AUTO;
    else if (!strcmp(s, "cpu")) *d = IMGPU_DEVICE_CPU;
    else if (!strcmp(s, "cuda") || !strcmp(s, "cuda:0")) *d = IMGPU_DEVICE_CUDA;
    else if (!strncmp(s, "cuda:", 5)) {
        long n;
        if (imgpu__parse_long(s + 5, 0, MAX_ORDINALS - 1, &n) < 0) {
            PyErr_Format(PyExc_ValueError, "invalid device '%s' (use auto, cpu, cuda or cuda:N, N < %d)", s,
                         MAX_ORDINALS);
            return -1;
        }
        *d = IMGPU_DEVICE_CUDA;
        if (ordinal)
            *ordinal = (int)n;
    } else {
        PyErr_Format(PyExc_ValueError, "invalid device '%s' (use auto, cpu, cuda or cuda:N)", s);
        return -1;
    }
    return 0;
}

/* device=: None (auto), a name, or a Context. *ctx is set for a Context (borrowed). */
static int parse_device(PyObject *o, imgpu_device *d, imgpu_context **ctx)
{
    *ctx = NULL;
    if (o == NULL || o == Py_None) {
        *d = IMGPU_DEVICE_AUTO;
        return 0;
    }
    if (PyObject_TypeCheck(o, &ContextType)) {
        ContextObject *c = (ContextObject *)o;
        if (!c->ctx) {
            PyErr_SetString(PyExc_ValueError, "the imgpu.Context is closed");
            return -1;
        }
        *ctx = c->ctx;
        *d = c->device;
        return 0;
    }
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "device must be a str ('auto', 'cpu', 'cuda') or an imgpu.Context, "
                     "not %.100s", Py_TYPE(o)->tp_name);
        return -1;
    }
    const char *s = PyUnicode_AsUTF8(o);
    int ordinal;
    if (!s || parse_device_name_on(s, d, &ordinal) < 0)
        return -1;
    if (ordinal > 0 && !(*ctx = ordinal_context(ordinal)))
        return -1;
    return 0;
}

/* With device cuda: resolve now, so that a machine without a GPU raises imgpu.Error saying so. */
static int check_device(imgpu_device d, imgpu_context *ctx)
{
    imgpu_device r;
    int rc;
    if (d != IMGPU_DEVICE_CUDA)
        return 0;
    Py_BEGIN_ALLOW_THREADS
    rc = ctx ? imgpu_context_resolve(ctx, &r) : imgpu_device_resolve(IMGPU_DEVICE_CUDA, &r);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        PyErr_Format(s_Error, "CUDA not available: %s", imgpu_error_message());
        return -1;
    }
    return 0;
}

static PyObject *context_obj(PyObject *device)
{
    return device && PyObject_TypeCheck(device, &ContextType) ? device : NULL;
}

static int Context_init(ContextObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device", NULL};
    const char *dev = "auto";
    imgpu_device d;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|s:Context", kwlist, &dev))
        return -1;
    int ordinal;
    if (parse_device_name_on(dev, &d, &ordinal) < 0)
        return -1;
    if (self->held || self->narrays > 0) {   /* its results free their memory on its stream */
        PyErr_SetString(PyExc_RuntimeError, "imgpu.Context: initialized again while its results are alive");
        return -1;
    }
    if (self->ctx)
        imgpu_context_destroy(self->ctx);
    self->ctx = imgpu_context_create_on(d, ordinal);
    if (!self->ctx) {
        raise_imgpu("cannot create a context");
        return -1;
    }
    self->device = d;
    if (check_device(d, self->ctx) < 0) {
        imgpu_context_destroy(self->ctx);
        self->ctx = NULL;
        return -1;
    }
    return 0;
}

static void Context_dealloc(ContextObject *self)
{
    imgpu_context_destroy(self->ctx);
    imgpu_context_destroy(self->held);   /* (NULL: its arrays hold references, so none is left) */
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Context_close(ContextObject *self, PyObject *unused)
{
    (void)unused;
    if (self->ctx && self->narrays > 0 && !self->held)
        self->held = self->ctx;   /* destroyed with its last array (Array_dealloc) */
    else
        imgpu_context_destroy(self->ctx);
    self->ctx = NULL;
    Py_RETURN_NONE;
}

static PyObject *Context_get_device(ContextObject *self, void *unused)
{
    (void)unused;
    const int n = self->ctx ? imgpu_context_cuda_ordinal(self->ctx) : -1;
    if (n > 0)
        return PyUnicode_FromFormat("cuda:%d", n);
    return PyUnicode_FromString(imgpu_device_name(self->device));
}

static PyObject *Context_get_closed(ContextObject *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(self->ctx == NULL);
}

static PyMethodDef Context_methods[] = {
    {"close", (PyCFunction)Context_close, METH_NOARGS, "Release the context (idempotent)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Context_getset[] = {
    {"device", (getter)Context_get_device, NULL, "the device asked for: 'auto', 'cpu' or 'cuda'", NULL},
    {"closed", (getter)Context_get_closed, NULL, "True once close() was called", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ContextType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "imgpu._imgpu._Context",
    .tp_basicsize = sizeof(ContextObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C context (imgpu_context): a device resolved once and its state, reused.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Context_init,
    .tp_dealloc = (destructor)Context_dealloc,
    .tp_methods = Context_methods,
    .tp_getset = Context_getset,
};

/* ---- results: memory exposed through the buffer protocol, handed to numpy.asarray ----------- */

typedef struct HostBuffer {
    PyObject_HEAD
    void *mem;              /* the samples */
    imgpu_image *im;        /* freed with the object when set */
    void *raw;              /* free()d with the object when set */
    int ndim;
    Py_ssize_t shape[3], strides[3];
    Py_ssize_t itemsize;
    const char *format;     /* "B", "H" or "I" */
    Py_ssize_t exports;
} HostBuffer;

static int HostBuffer_getbuffer(HostBuffer *self, Py_buffer *view, int flags)
{
    (void)flags;   /* always C-contiguous, writable */
    view->buf = self->mem;
    view->obj = (PyObject *)self;
    Py_INCREF(self);
    Py_ssize_t n = self->itemsize;
    for (int i = 0; i < self->ndim; i++)
        n *= self->shape[i];
    view->len = n;
    view->readonly = 0;
    view->itemsize = self->itemsize;
    view->format = (char *)self->format;
    view->ndim = self->ndim;
    view->shape = self->shape;
    view->strides = self->strides;
    view->suboffsets = NULL;
    view->internal = NULL;
    self->exports++;
    return 0;
}

static void HostBuffer_releasebuffer(HostBuffer *self, Py_buffer *view)
{
    (void)view;
    self->exports--;
}

static void HostBuffer_dealloc(HostBuffer *self)
{
    imgpu_image_free(self->im);
    free(self->raw);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyBufferProcs HostBuffer_as_buffer = {
    (getbufferproc)HostBuffer_getbuffer,
    (releasebufferproc)HostBuffer_releasebuffer,
};

static PyTypeObject HostBufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "imgpu._imgpu._HostBuffer",
    .tp_basicsize = sizeof(HostBuffer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "imgpu's result memory, owned and freed with this object (numpy arrays view it).",
    .tp_dealloc = (destructor)HostBuffer_dealloc,
    .tp_as_buffer = &HostBuffer_as_buffer,
};

static PyObject *numpy_asarray(PyObject *o)
{
    if (!s_asarray) {
        PyObject *np = PyImport_ImportModule("numpy");
        if (!np)
            return NULL;
        s_asarray = PyObject_GetAttrString(np, "asarray");
        Py_DECREF(np);
        if (!s_asarray)
            return NULL;
    }
    return PyObject_CallOneArg(s_asarray, o);
}

/* A numpy array over `im` (owned: freed with the array; always consumed). HxW for one channel,
 * else HxWxC. */
static PyObject *image_to_numpy(imgpu_image *im)
{
    const size_t b = (size_t)imgpu_image_sample_bytes(im);
    const size_t row = (size_t)im->width * (size_t)im->channels * b;
    if (im->stride != row) {   /* results are tight; make sure of it */
        imgpu_image *t = imgpu_image_copy(im);
        imgpu_image_free(im);
        if (!t)
            return raise_imgpu("out of memory");
        im = t;
    }
    HostBuffer *hb = PyObject_New(HostBuffer, &HostBufferType);
    if (!hb) {
        imgpu_image_free(im);
        return NULL;
    }
    hb->im = im;
    hb->raw = NULL;
    hb->mem = im->data;
    hb->exports = 0;
    hb->itemsize = (Py_ssize_t)b;
    hb->format = b == 2 ? "H" : "B";
    hb->shape[0] = im->height;
    hb->shape[1] = im->width;
    hb->strides[0] = (Py_ssize_t)row;
    hb->strides[1] = (Py_ssize_t)(im->channels * b);
    if (im->channels == 1) {
        hb->ndim = 2;
        hb->strides[1] = (Py_ssize_t)b;
    } else {
        hb->ndim = 3;
        hb->shape[2] = im->channels;
        hb->strides[2] = (Py_ssize_t)b;
    }
    PyObject *a = numpy_asarray((PyObject *)hb);
    Py_DECREF(hb);
    return a;
}

/* ---- inputs: the buffer protocol, __array_interface__, __dlpack__ ---------------------------- */

/* DLPack's C ABI (dlpack.h 0.6+, unversioned tensors), as far as a consumer needs it. */
typedef struct DLDevice { int32_t device_type, device_id; } DLDevice;
typedef struct DLDataType { uint8_t code, bits; uint16_t lanes; } DLDataType;
typedef struct DLTensor {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides;   /* in elements; NULL: C-contiguous */
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
enum { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13, kDLUInt = 1 };

typedef struct in_view {
    imgpu_image im;         /* a view: owns = 0 */
    Py_buffer buf;
    int have_buf;
    PyObject *keep;         /* held until release: the object, or the DLPack capsule */
    unsigned char *copy;    /* a tight copy of a strided input */
    int copied;
} in_view;

static void in_release(in_view *v)
{
    if (v->have_buf)
        PyBuffer_Release(&v->buf);
    v->have_buf = 0;
    Py_CLEAR(v->keep);   /* a DLPack capsule's destructor calls the producer's deleter */
    free(v->copy);
    v->copy = NULL;
}

/* The image from a raw description: data, 2 or 3 dims, byte strides (NULL: C-contiguous),
 * sample size 1 or 2. Used in place when rows are interleaved pixels, else copied. 0 or -1. */
static int in_describe(in_view *v, const char *what, unsigned char *data, int ndim, const Py_ssize_t *shape,
                       const Py_ssize_t *strides, int itemsize)
{
    if (ndim != 2 && ndim != 3) {
        PyErr_Format(PyExc_TypeError, "%s: an image is a 2-D (H, W) or 3-D (H, W, C) array, not %d-D", what, ndim);
        return -1;
    }
    const Py_ssize_t h = shape[0], w = shape[1], c = ndim == 3 ? shape[2] : 1;
    if (c < 1 || c > 4) {
        PyErr_Format(PyExc_TypeError, "%s: %zd channels (imgpu takes 1..4: gray, gray+alpha, RGB, RGBA)", what, c);
        return -1;
    }
    if (h < 1 || w < 1 || h > INT32_MAX || w > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "%s: an image of %zdx%zd pixels (each side 1..2147483647)", what, w, h);
        return -1;
    }
    const Py_ssize_t s0 = strides ? strides[0] : w * c * itemsize;
    const Py_ssize_t s1 = strides ? strides[1] : c * itemsize;
    const Py_ssize_t s2 = strides && ndim == 3 ? strides[2] : itemsize;
    const Py_ssize_t row = w * c * itemsize;
    int inplace = s2 == itemsize && (w == 1 || s1 == c * itemsize) && (h == 1 || s0 >= row);
    if (itemsize == 2 && (((uintptr_t)data & 1) || (h > 1 && (s0 & 1))))
        inplace = 0;
    v->im.width = (int)w;
    v->im.height = (int)h;
    v->im.channels = (int)c;
    v->im.depth = itemsize * 8;
    v->im.owns = 0;
    size_t total;
    if (imgpu_image_bytes((int)w, (int)h, (int)c, itemsize * 8, &total) < 0) {
        PyErr_Format(PyExc_ValueError, "%s: %s", what, imgpu_error_message());
        return -1;
    }
    if (inplace) {
        v->im.data = data;
        v->im.stride = h == 1 ? (size_t)row : (size_t)s0;
        return 0;
    }
    /* any other layout: gathered into a tight copy (one pass; the op then reads it) */
    v->copy = malloc(total ? total : 1);
    if (!v->copy) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t y = 0; y < h; y++)
        for (Py_ssize_t x = 0; x < w; x++)
            for (Py_ssize_t k = 0; k < c; k++)
                memcpy(v->copy + ((size_t)(y * w + x) * (size_t)c + (size_t)k) * (size_t)itemsize,
                       data + y * s0 + x * s1 + k * s2, (size_t)itemsize);
    v->im.data = v->copy;
    v->im.stride = (size_t)row;
    v->copied = 1;
    return 0;
}

/* A buffer format of one uint8 or native uint16 sample: 1, 2; 0 otherwise. */
static int format_itemsize(const char *f)
{
    if (!f)
        return 1;   /* "B" when the exporter gives none */
    const int little = 1 == *(const unsigned char *)&(const uint16_t){1};
    if (*f == '@' || *f == '=' || (*f == '<' && little) || (*f == '>' && !little) || (*f == '!' && !little))
        f++;
    if (!strcmp(f, "B"))
        return 1;
    if (!strcmp(f, "H"))
        return 2;
    return 0;
}

static int in_from_buffer(in_view *v, PyObject *o, const char *what)
{
    if (PyObject_GetBuffer(o, &v->buf, PyBUF_RECORDS_RO) < 0)
        return -1;
    v->have_buf = 1;
    const int isz = format_itemsize(v->buf.format);
    if (!isz || isz != v->buf.itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: unsupported dtype (buffer format '%s'): imgpu takes uint8 and "
                     "uint16 (native byte order)", what, v->buf.format ? v->buf.format : "B");
        return -1;
    }
    if (v->buf.ndim == 1 || v->buf.ndim == 0) {
        PyErr_Format(PyExc_TypeError, "%s: an image is a 2-D (H, W) or 3-D (H, W, C) array, not %d-D",
                     what, v->buf.ndim);
        return -1;
    }
    return in_describe(v, what, v->buf.buf, v->buf.ndim, v->buf.shape, v->buf.strides, isz);
}

/* A tuple of Py_ssize_t into out[0..n). */
static int tuple_ssize(PyObject *t, Py_ssize_t *out, int max, int *n)
{
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) > max)
        return -1;
    *n = (int)PyTuple_GET_SIZE(t);
    for (int i = 0; i < *n; i++) {
        out[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, i));
        if (out[i] == -1 && PyErr_Occurred())
            return -1;
    }
    return 0;
}

static int in_from_array_interface(in_view *v, PyObject *o, PyObject *ai, const char *what)
{
    if (!PyDict_Check(ai)) {
        PyErr_Format(PyExc_TypeError, "%s: __array_interface__ is not a dict", what);
        return -1;
    }
    PyObject *shape = PyDict_GetItemString(ai, "shape"), *typestr = PyDict_GetItemString(ai, "typestr");
    PyObject *data = PyDict_GetItemString(ai, "data"), *strides = PyDict_GetItemString(ai, "strides");
    if (!shape || !typestr || !PyUnicode_Check(typestr)) {
        PyErr_Format(PyExc_TypeError, "%s: __array_interface__ without shape or typestr", what);
        return -1;
    }
    const char *ts = PyUnicode_AsUTF8(typestr);
    const int little = 1 == *(const unsigned char *)&(const uint16_t){1};
    int isz = 0;
    if (ts && (!strcmp(ts, "|u1") || !strcmp(ts, "<u1") || !strcmp(ts, ">u1")))
        isz = 1;
    else if (ts && (!strcmp(ts, little ? "<u2" : ">u2") || !strcmp(ts, "=u2")))
        isz = 2;
    if (!isz) {
        PyErr_Format(PyExc_TypeError, "%s: unsupported dtype '%s': imgpu takes uint8 and uint16 (native byte "
                     "order)", what, ts ? ts : "?");
        return -1;
    }
    Py_ssize_t sh[4], st[4];
    int nd = 0, ns = 0;
    if (tuple_ssize(shape, sh, 4, &nd) < 0) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "%s: an image is a 2-D (H, W) or 3-D (H, W, C) array", what);
        return -1;
    }
    if (strides && strides != Py_None) {
        if (tuple_ssize(strides, st, 4, &ns) < 0 || ns != nd) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "%s: __array_interface__ strides do not match its shape", what);
            return -1;
        }
    }
    if (!data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) {
        PyErr_Format(PyExc_TypeError, "%s: __array_interface__ 'data' must be a (pointer, read-only) tuple "
                     "(a buffer object there is not supported)", what);
        return -1;
    }
    void *p = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
    if (!p && PyErr_Occurred())
        return -1;
    if (!p) {
        PyErr_Format(PyExc_ValueError, "%s: __array_interface__ data pointer is NULL", what);
        return -1;
    }
    Py_INCREF(o);
    v->keep = o;
    return in_describe(v, what, p, nd, sh, ns ? st : NULL, isz);
}

static int dlpack_device_type(PyObject *o, int *type)
{
    *type = kDLCPU;
    if (!PyObject_HasAttrString(o, "__dlpack_device__"))
        return 0;
    PyObject *r = PyObject_CallMethod(o, "__dlpack_device__", NULL);
    if (!r)
        return -1;
    long t = -1;
    if (PyTuple_Check(r) && PyTuple_GET_SIZE(r) >= 1)
        t = PyLong_AsLong(PyTuple_GET_ITEM(r, 0));
    Py_DECREF(r);
    if (t == -1 && PyErr_Occurred())
        return -1;
    *type = (int)t;
    return 0;
}

/* A DLPack tensor's element size, shape and strides in bytes (st is filled only when the tensor
 * has strides), after checking it is a uint8/uint16 image of 2 or 3 dimensions: 0, or -1 with
 * TypeError. The host and the device paths both take their tensors through it. */
static int dl_layout(const DLTensor *d, const char *what, Py_ssize_t sh[3], Py_ssize_t st[3], int *isz)
{
    if (d->dtype.code != kDLUInt || (d->dtype.bits != 8 && d->dtype.bits != 16) || d->dtype.lanes != 1) {
        PyErr_Format(PyExc_TypeError, "%s: unsupported DLPack dtype (code %d, %d bits, %d lanes): imgpu takes "
                     "uint8 and uint16", what, d->dtype.code, d->dtype.bits, d->dtype.lanes);
        return -1;
    }
    if (d->ndim != 2 && d->ndim != 3) {
        PyErr_Format(PyExc_TypeError, "%s: an image is a 2-D (H, W) or 3-D (H, W, C) array, not %d-D", what,
                     (int)d->ndim);
        return -1;
    }
    *isz = d->dtype.bits / 8;
    for (int i = 0; i < d->ndim; i++) {
        sh[i] = (Py_ssize_t)d->shape[i];
        if (d->strides)
            st[i] = (Py_ssize_t)d->strides[i] * *isz;
    }
    return 0;
}

static int in_from_dlpack(in_view *v, PyObject *o, const char *what)
{
    int type;
    if (dlpack_device_type(o, &type) < 0)
        return -1;
    if (type == kDLCUDA || type == kDLCUDAManaged) {
        raise_cuda_unavailable(what);
        return -1;
    }
    if (type != kDLCPU && type != kDLCUDAHost) {
        PyErr_Format(PyExc_TypeError, "%s: a DLPack tensor on device type %d (imgpu takes host memory)", what, type);
        return -1;
    }
    PyObject *cap = PyObject_CallMethod(o, "__dlpack__", NULL);
    if (!cap)
        return -1;
    v->keep = cap;   /* the capsule's destructor gives the tensor back (we never rename it) */
    DLManagedTensor *t = PyCapsule_GetPointer(cap, "dltensor");
    if (!t)
        return -1;
    const DLTensor *d = &t->dl_tensor;
    if (d->device.device_type == kDLCUDA || d->device.device_type == kDLCUDAManaged) {
        raise_cuda_unavailable(what);
        return -1;
    }
    int isz;
    Py_ssize_t sh[3], st[3];
    if (dl_layout(d, what, sh, st, &isz) < 0)
        return -1;
    return in_describe(v, what, (unsigned char *)d->data + d->byte_offset, d->ndim, sh,
                       d->strides ? st : NULL, isz);
}

/* Any array the module takes, as an image view. 0, or -1 with an exception set (and v released). */
static int in_get(in_view *v, PyObject *o, const char *what)
{
    memset(v, 0, sizeof *v);
    int rc;
    if (PyObject_HasAttrString(o, "__cuda_array_interface__")) {
        raise_cuda_unavailable(what);
        rc = -1;
    } else if (PyObject_CheckBuffer(o)) {
        rc = in_from_buffer(v, o, what);
    } else if (PyObject_HasAttrString(o, "__array_interface__")) {
        PyObject *ai = PyObject_GetAttrString(o, "__array_interface__");
        rc = ai ? in_from_array_interface(v, o, ai, what) : -1;
        Py_XDECREF(ai);
    } else if (PyObject_HasAttrString(o, "__dlpack__")) {
        rc = in_from_dlpack(v, o, what);
    } else {
        PyErr_Format(PyExc_TypeError, "%s: expected an array (numpy, or any object with the buffer protocol, "
                     "__array_interface__ or __dlpack__), not %.100s", what, Py_TYPE(o)->tp_name);
        rc = -1;
    }
    if (rc < 0)
        in_release(v);
    return rc;
}

/* out=: a writable array of the result's exact dtype and shape whose rows are interleaved
 * pixels. 0 and *v (the view over it), or -1 with TypeError / ValueError. */
static int out_get(in_view *v, PyObject *o, int w, int h, int c, int depth)
{
    memset(v, 0, sizeof *v);
    if (PyObject_GetBuffer(o, &v->buf, PyBUF_RECORDS) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "out= must be a writable array (buffer protocol), not %.100s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    v->have_buf = 1;
    const int isz = format_itemsize(v->buf.format);
    int ok_shape = (v->buf.ndim == 2 && c == 1) || (v->buf.ndim == 3 && v->buf.shape[2] == c);
    if (isz != depth / 8 || isz != v->buf.itemsize) {
        PyErr_Format(PyExc_TypeError, "out= has dtype format '%s'; the result is %s", v->buf.format ? v->buf.format : "B",
                     depth == 16 ? "uint16" : "uint8");
        goto fail;
    }
    if (!ok_shape || v->buf.shape[0] != h || v->buf.shape[1] != w) {
        PyErr_Format(PyExc_ValueError, "out= has the wrong shape: the result is (%d, %d%s%s)", h, w,
                     c > 1 ? ", " : "", c > 1 ? (c == 2 ? "2" : c == 3 ? "3" : "4") : "");
        goto fail;
    }
    const Py_ssize_t *s = v->buf.strides;
    const Py_ssize_t row = (Py_ssize_t)w * c * isz;
    if (s && ((v->buf.ndim == 3 && s[2] != isz) || (w > 1 && s[1] != (Py_ssize_t)c * isz) ||
              (h > 1 && s[0] < row) || (isz == 2 && (((uintptr_t)v->buf.buf & 1) || (s[0] & 1))))) {
        PyErr_SetString(PyExc_TypeError, "out= must have rows of interleaved pixels (a C-contiguous array, "
                        "or rows of one with padding)");
        goto fail;
    }
    v->im.width = w;
    v->im.height = h;
    v->im.channels = c;
    v->im.depth = depth;
    v->im.data = v->buf.buf;
    v->im.stride = s && h > 1 ? (size_t)s[0] : (size_t)row;
    return 0;
fail:
    in_release(v);
    return -1;
}

#include "_imgpu_device.h"

/* ---- running ops ------------------------------------------------------------------------------ */

#define MAX_CHAIN 32

/* _run_ops(array, ops, device=None, out=None, stream=None): ops is a list of (name, params). */
static PyObject *run_ops(PyObject *array, PyObject *ops_list, PyObject *device, PyObject *out, PyObject *stream)
{
    imgpu_op ops[MAX_CHAIN];
    int n = 0, histogram = 0;
    imgpu_device dev;
    imgpu_context *ctx;
    if (parse_device(device, &dev, &ctx) < 0)
        return NULL;
    if (stream && stream != Py_None && !PyLong_Check(stream) && !PyObject_HasAttrString(stream, "__cuda_stream__") &&
        !PyObject_HasAttrString(stream, "cuda_stream"))
        return PyErr_Format(PyExc_TypeError, "stream= takes an int handle or an object with __cuda_stream__ "
                            "or .cuda_stream, not %.100s", Py_TYPE(stream)->tp_name);
    /* host arrays run synchronously on the calling thread: a stream has nothing to order */
    PyObject *seq = PySequence_Fast(ops_list, "ops must be a list of (name, params) pairs");
    if (!seq)
        return NULL;
    const Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    if (count > MAX_CHAIN) {
        Py_DECREF(seq);
        return PyErr_Format(PyExc_ValueError, "at most %d ops in one call", MAX_CHAIN);
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(seq, i);
        const pyop *od;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            Py_DECREF(seq);
            return PyErr_Format(PyExc_TypeError, "ops must be a list of (name, params) pairs");
        }
        if (build_op(PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1), &ops[n], &od, NULL) < 0) {
            Py_DECREF(seq);
            return NULL;
        }
        if (!od)
            histogram = 1;
        else
            n++;
    }
    Py_DECREF(seq);
    if (histogram && (count != 1 || (out && out != Py_None)))
        return PyErr_Format(PyExc_ValueError, "histogram runs alone (no other ops, no out=)");
    if (check_device(dev, ctx) < 0)
        return NULL;
    cuda_probe pr;   /* what the array is: each protocol attribute read once (_imgpu_device.h) */
    if (probe_array(&pr, array) < 0)
        return NULL;
    const int cuda = pr.kind != PROBE_HOST;
    if (cuda && !histogram) {   /* on the array's GPU, without a copy (_imgpu_device.h) */
        PyObject *r = dev == IMGPU_DEVICE_CPU
                          ? PyErr_Format(PyExc_ValueError, "device='cpu' with a CUDA array (copy it to the host first)")
                          : run_ops_device(array, &pr, ops, n, ctx, context_obj(device), out, stream);
        probe_release(&pr);
        return r;
    }

    if (cuda && dev == IMGPU_DEVICE_CPU) {
        probe_release(&pr);
        return PyErr_Format(PyExc_ValueError, "device='cpu' with a CUDA array (copy it to the host first)");
    }
    in_view in;
    PyObject *result = NULL;

    if (histogram) {
        imgpu_histogram_full h;
        int rc;
        memset(&h, 0, sizeof h);
        if (cuda) {   /* counted on the array's GPU; only the counts come back */
            rc = histogram_device(array, &pr, ctx, stream, &h);
            probe_release(&pr);
            if (rc < 0)
                return NULL;
        } else {
            if (in_get(&in, array, "input") < 0)
                return NULL;
            Py_BEGIN_ALLOW_THREADS
            rc = ctx ? imgpu_context_histogram(ctx, &in.im, &h, NULL) : imgpu_histogram_full_compute(&in.im, dev, &h, NULL);
            Py_END_ALLOW_THREADS
            in_release(&in);
            if (rc < 0)
                return raise_imgpu("histogram failed");
        }
        HostBuffer *hb = PyObject_New(HostBuffer, &HostBufferType);
        if (!hb) {
            imgpu_histogram_full_free(&h);
            return NULL;
        }
        hb->im = NULL;
        hb->raw = h.counts;   /* owned by the buffer from here */
        hb->mem = h.counts;
        hb->exports = 0;
        hb->itemsize = 4;
        hb->format = "I";
        hb->ndim = 2;
        hb->shape[0] = h.planes;
        hb->shape[1] = h.levels;
        hb->strides[0] = (Py_ssize_t)h.levels * 4;
        hb->strides[1] = 4;
        result = numpy_asarray((PyObject *)hb);
        Py_DECREF(hb);
        return result;
    }

    if (in_get(&in, array, "input") < 0)
        return NULL;
    /* as every front end does: a gray image's rotation background is the color's luma */
    imgpu_ops_for_image(ops, n, imgpu_image_color_channels(&in.im));
    in_view ov;
    int have_out = 0;
    if (out && out != Py_None) {
        imgpu_plan plan;
        if (imgpu_pipeline_plan(in.im.width, in.im.height, in.im.channels, in.im.depth, ops, n, NULL, NULL, &plan) < 0) {
            in_release(&in);
            return PyErr_Format(PyExc_ValueError, "%s", imgpu_error_message());
        }
        if (out_get(&ov, out, plan.out_w, plan.out_h, plan.channels, plan.depth) < 0) {
            in_release(&in);
            return NULL;
        }
        have_out = 1;
    }
    imgpu_image *res = NULL;
    int rc;
    imgpu_context *tmp = NULL;
    Py_BEGIN_ALLOW_THREADS
    if (!ctx)
        ctx = tmp = imgpu_context_create(dev);
    if (!ctx)
        rc = -1;
    else if (have_out)
        rc = imgpu_context_run_into(ctx, &in.im, ops, n, &ov.im, NULL);
    else
        rc = imgpu_context_run(ctx, &in.im, ops, n, &res, NULL);
    imgpu_context_destroy(tmp);
    Py_END_ALLOW_THREADS
    in_release(&in);
    if (have_out) {
        in_release(&ov);
        if (rc < 0)
            return raise_imgpu("the op failed");
        Py_INCREF(out);
        return out;
    }
    if (rc < 0)
        return raise_imgpu("the op failed");
    return image_to_numpy(res);
}

static PyObject *py_run_ops(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"array", "ops", "device", "out", "stream", NULL};
    PyObject *array, *ops, *device = Py_None, *out = Py_None, *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OOO:_run_ops", kwlist, &array, &ops, &device, &out, &stream))
        return NULL;
    return run_ops(array, ops, device, out, stream);
}

static PyObject *py_run_op(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"name", "array", "params", "device", "out", "stream", NULL};
    PyObject *name, *array, *params = Py_None, *device = Py_None, *out = Py_None, *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OOOO:_run_op", kwlist, &name, &array, &params, &device, &out,
                                     &stream))
        return NULL;
    PyObject *pair = PyTuple_Pack(2, name, params);
    if (!pair)
        return NULL;
    PyObject *list = PyList_New(1);
    if (!list) {
        Py_DECREF(pair);
        return NULL;
    }
    PyList_SET_ITEM(list, 0, pair);
    PyObject *r = run_ops(array, list, device, out, stream);
    Py_DECREF(list);
    return r;
}

/* _check_op(name, params): the parameters checked as _run_op would (ValueError, TypeError). */
static PyObject *py_check_op(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *name, *params;
    imgpu_op op;
    const pyop *od;
    if (!PyArg_ParseTuple(args, "OO:_check_op", &name, &params))
        return NULL;
    if (build_op(name, params, &op, &od, NULL) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* _cli_args(name, params): the op as `imgpu batch` options, e.g. ['--rotate', '15.0',
 * '--filter', 'bicubic'] (the parameters given, checked, in the table's order). */
static PyObject *py_cli_args(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *name, *params;
    imgpu_op op;
    const pyop *od;
    if (!PyArg_ParseTuple(args, "OO:_cli_args", &name, &params))
        return NULL;
    PyObject *list = PyList_New(0);
    if (list && build_op(name, params, &op, &od, list) < 0)
        Py_CLEAR(list);
    /* batch's names rule: an op name that is also a parameter of another op (crop: rotate's
     * keep-size) starts the op only when one of its own options follows: give its first
     * choice parameter at the value it has (crop at its defaults: --crop --gravity center) */
    if (list && PyList_GET_SIZE(list) == 1 &&
        imgpu_opt_find_param(NULL, od->d->name, strlen(od->d->name), IMGPU_FRONT_BATCH)) {
        for (int k = 0; k < od->d->nparams; k++) {
            const imgpu_param *p = &od->d->params[k];
            if (p->type != IMGPU_PARAM_ENUM || !(p->fronts & IMGPU_FRONT_BATCH))
                continue;
            PyObject *flag = PyUnicode_FromFormat("--%s", p->name), *v = PyUnicode_FromString(imgpu_param_choice(&op, p));
            if (!flag || !v || PyList_Append(list, flag) < 0 || PyList_Append(list, v) < 0)
                Py_CLEAR(list);
            Py_XDECREF(flag);
            Py_XDECREF(v);
            break;
        }
    }
    return list;
}

/* ---- reading --------------------------------------------------------------------------------- */

/* The file behind a failed load: FileNotFoundError when it does not exist, else imgpu.Error. */
static PyObject *raise_load(const char *path)
{
    struct stat st;
    if (path && stat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
        PyObject *args = Py_BuildValue("(iss)", ENOENT, imgpu_error_message(), path);
        if (args) {
            PyErr_SetObject(PyExc_FileNotFoundError, args);
            Py_DECREF(args);
        }
        return NULL;
    }
    return raise_imgpu("cannot read the image");
}

/* A path (str or os.PathLike, not bytes) into a new bytes object (fs encoding); NULL with no
 * error when `o` is not a path. */
static PyObject *as_path(PyObject *o)
{
    if (PyBytes_Check(o) || PyByteArray_Check(o) || PyObject_CheckBuffer(o))
        return NULL;
    if (!PyUnicode_Check(o) && !PyObject_HasAttrString(o, "__fspath__"))
        return NULL;
    PyObject *b = NULL;
    if (!PyUnicode_FSConverter(o, &b))
        return NULL;
    return b;
}

static PyObject *py_read(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"source", "page", "auto_orient", NULL};
    PyObject *src;
    int page = 0, auto_orient = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$ip:read", kwlist, &src, &page, &auto_orient))
        return NULL;
    if (page < 0 || page > 65535)
        return PyErr_Format(PyExc_ValueError, "invalid page=%d (a page number 0..65535)", page);
    imgpu_load_options lo;
    memset(&lo, 0, sizeof lo);
    lo.page = page;
    lo.no_auto_orient = !auto_orient;
    if (imgpu_load_options_from_env(&lo) < 0)
        return raise_imgpu("bad IMGPU_MAX_* variable");
    imgpu_image *im = NULL;
    PyObject *path = as_path(src);
    if (path) {
        const char *p = PyBytes_AS_STRING(path);
        Py_BEGIN_ALLOW_THREADS
        im = imgpu_image_load(p, &lo);
        Py_END_ALLOW_THREADS
        if (!im) {
            raise_load(p);
            Py_DECREF(path);
            return NULL;
        }
        Py_DECREF(path);
    } else {
        if (PyErr_Occurred())
            return NULL;
        Py_buffer b;
        if (PyObject_GetBuffer(src, &b, PyBUF_SIMPLE) < 0) {
            PyErr_Clear();
            return PyErr_Format(PyExc_TypeError, "read() takes a path (str, os.PathLike) or the file's bytes, "
                                "not %.100s", Py_TYPE(src)->tp_name);
        }
        Py_BEGIN_ALLOW_THREADS
        im = imgpu_image_load_memory(b.buf, (size_t)b.len, "<bytes>", &lo);
        Py_END_ALLOW_THREADS
        PyBuffer_Release(&b);
        if (!im)
            return raise_imgpu("cannot decode the image");
    }
    return image_to_numpy(im);
}

static PyObject *py_info(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"path", "page", "auto_orient", NULL};
    PyObject *src;
    int page = 0, auto_orient = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$ip:info", kwlist, &src, &page, &auto_orient))
        return NULL;
    if (page < 0 || page > 65535)
        return PyErr_Format(PyExc_ValueError, "invalid page=%d (a page number 0..65535)", page);
    PyObject *path = as_path(src);
    if (!path) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "info() takes a path (str or os.PathLike), not %.100s", Py_TYPE(src)->tp_name);
        return NULL;
    }
    const char *p = PyBytes_AS_STRING(path);
    imgpu_load_options lo;
    memset(&lo, 0, sizeof lo);
    lo.page = page;
    lo.no_auto_orient = !auto_orient;
    lo.no_page_notice = 1;   /* the result lists the pages, as `imgpu info` does */
    imgpu_load_result r;
    memset(&r, 0, sizeof r);
    /* headers only, as `imgpu info`: no field needs the pixels */
    imgpu_image_shape shape;
    const imgpu_image_shape *im = &shape;
    int rc;
    if (imgpu_load_options_from_env(&lo) < 0) {
        Py_DECREF(path);
        return raise_imgpu("bad IMGPU_MAX_* variable");
    }
    Py_BEGIN_ALLOW_THREADS
    rc = imgpu_image_read_info(p, &lo, &shape, &r);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        raise_load(p);
        Py_DECREF(path);
        return NULL;
    }
    /* the fields of `imgpu info --json` (src/cli/cmd_info.c, info_one), in its order */
    const imgpu_meta *m = r.meta;
    char icc[128] = "";
    /* the file's own profile: a CMYK JPEG's, not the sRGB one load put in its place */
    const unsigned char *icc_b = m->file_icc ? m->file_icc : m->icc;
    const size_t icc_n = m->file_icc ? m->file_icc_len : m->icc_len;
    if (icc_b && imgpu_meta_icc_description(icc_b, icc_n, icc, sizeof icc) < 0)
        snprintf(icc, sizeof icc, "(no description)");
    const char *colour = m->colour ? m->colour : im->channels <= 2 ? "Gray" : "RGB";
    imgpu_exif_info ex;
    const int have_exif = m->exif && imgpu_exif_parse(m->exif, m->exif_len, &ex) == 0;
    imgpu_error_clear();
    PyObject *d = PyDict_New();
    PyObject *pathobj = PyUnicode_DecodeFSDefault(p);
    int ok = d && pathobj && !PyDict_SetItemString(d, "path", pathobj);
    Py_XDECREF(pathobj);
#define SET(key, expr)                                                                                  \
    do {                                                                                                \
        PyObject *v_ = (expr);                                                                          \
        ok = ok && v_ && !PyDict_SetItemString(d, key, v_);                                             \
        Py_XDECREF(v_);                                                                                 \
    } while (0)
    SET("format", PyUnicode_FromString(imgpu_format_name(r.format)));
    SET("width", PyLong_FromLong(im->width));
    SET("height", PyLong_FromLong(im->height));
    SET("channels", PyLong_FromLong(im->channels));
    SET("depth", PyLong_FromLong(im->depth));
    SET("pages", PyLong_FromLong(m->pages));
    SET("page", PyLong_FromLong(m->page));
    SET("orientation", PyLong_FromLong(m->orientation));
    SET("oriented", PyBool_FromLong(m->oriented));
    if (icc_b)
        SET("icc", Py_BuildValue("{s:s,s:n}", "description", icc, "bytes", (Py_ssize_t)icc_n));
    else
        SET("icc", Py_NewRef(Py_None));
    SET("exif", PyBool_FromLong(m->exif != NULL));
    SET("xmp", PyBool_FromLong(m->xmp != NULL));
    if (have_exif) {
        char cam[160];
        snprintf(cam, sizeof cam, "%s%s%s", ex.make, ex.make[0] && ex.model[0] ? " " : "", ex.model);
        SET("camera", PyUnicode_DecodeUTF8(cam, (Py_ssize_t)strlen(cam), "replace"));
        SET("date", PyUnicode_DecodeUTF8(ex.datetime_original, (Py_ssize_t)strlen(ex.datetime_original), "replace"));
    }
    SET("colour_space", PyUnicode_FromString(colour));
    SET("colour_converted", PyBool_FromLong(m->colour_converted));
    SET("file_size", PyLong_FromUnsignedLongLong((unsigned long long)r.bytes));
#undef SET
    imgpu_meta_free(r.meta);
    Py_DECREF(path);
    if (!ok) {
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

/* ---- writing --------------------------------------------------------------------------------- */

/* **save_options -> *run (the CLI's parsers and ranges: options.c's table, entries of
 * IMGPU_OPT_SAVE and --depth). "format" is the output format's name. 0, or -1 with ValueError /
 * TypeError. */
static int parse_save_options(PyObject *kw, imgpu_run_options *run, const char *fn)
{
    *run = imgpu_run_options_default();
    if (!kw)
        return 0;
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kw, &pos, &k, &v)) {
        const char *ks = PyUnicode_AsUTF8(k);
        if (!ks)
            return -1;
        if (v == Py_None)
            continue;
        if (!strcmp(ks, "format")) {
            const char *f = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
            char probe[40];
            if (!f || strlen(f) > 16 || strchr(f, '/') ||
                (snprintf(probe, sizeof probe, "x.%s", f),
                 (run->save.format = imgpu_format_from_path(probe)) == IMGPU_FORMAT_UNKNOWN)) {
                PyErr_Format(f ? PyExc_ValueError : PyExc_TypeError,
                             "invalid format=%R (png, jpg, tif, webp, bmp, tga, pnm, pgm or ppm)", v);
                return -1;
            }
            continue;
        }
        char name[40];
        size_t n = strlen(ks);
        if (n >= sizeof name)
            goto unknown;
        for (size_t i = 0; i <= n; i++)
            name[i] = ks[i] == '_' ? '-' : ks[i];
        const imgpu_opt *o = imgpu_opt_find(name, n, IMGPU_FRONT_CLI);
        if (!o || !((o->sets & IMGPU_OPT_SAVE) || o->id == IMGPU_OPT_ID_DEPTH))
            goto unknown;
        char val[64];
        const char *vs = NULL;
        if (!o->metavar) {   /* a flag */
            if (!PyBool_Check(v)) {
                PyErr_Format(PyExc_TypeError, "%s: %s= takes True or False, not %R", fn, ks, v);
                return -1;
            }
            if (v == Py_False)
                continue;
        } else if (PyUnicode_Check(v)) {
            vs = PyUnicode_AsUTF8(v);
            if (!vs)
                return -1;
        } else if (PyLong_Check(v) && !PyBool_Check(v)) {
            long long x = PyLong_AsLongLong(v);
            if (x == -1 && PyErr_Occurred())
                return -1;
            snprintf(val, sizeof val, "%lld", x);
            vs = val;
        } else if (o->id == IMGPU_OPT_ID_BACKGROUND && (PyTuple_Check(v) || PyList_Check(v))) {
            PyObject *t = PySequence_Tuple(v);
            if (!t)
                return -1;
            size_t off = 0;
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t) && i < 4; i++) {
                long x = PyLong_AsLong(PyTuple_GET_ITEM(t, i));
                if (x == -1 && PyErr_Occurred()) {
                    Py_DECREF(t);
                    return -1;
                }
                off += (size_t)snprintf(val + off, sizeof val - off, "%s%ld", i ? "," : "", x);
            }
            Py_DECREF(t);
            vs = val;
        } else {
            PyErr_Format(PyExc_TypeError, "%s: invalid type for %s=%R", fn, ks, v);
            return -1;
        }
        if (imgpu_opt_apply(o, vs, run) < 0) {
            PyErr_Format(PyExc_ValueError, "%s: %s", fn, imgpu_usage_message());
            return -1;
        }
    }
    return 0;
unknown:
    PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R (save options: quality, "
                 "png_level, subsampling, progressive, optimize, compression, lossless, flatten (or background), strip, "
                 "depth, format)", fn, k);
    return -1;
}

/* The image to save: --depth 8 applied. *conv is a new image to free, or NULL. */
static const imgpu_image *apply_depth(const imgpu_run_options *run, const imgpu_image *im, imgpu_image **conv)
{
    *conv = NULL;
    if (run->out_depth == 8 && im->depth == 16) {
        *conv = imgpu_image_to_depth(im, 8);
        return *conv;
    }
    return im;
}

static PyObject *py_write(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    PyObject *dst, *array;
    if (!PyArg_ParseTuple(args, "OO:write", &dst, &array))
        return NULL;
    imgpu_run_options run;
    if (parse_save_options(kw, &run, "write") < 0)
        return NULL;
    PyObject *path = as_path(dst);
    if (!path) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "write() takes a path (str or os.PathLike), not %.100s", Py_TYPE(dst)->tp_name);
        return NULL;
    }
    const char *p = PyBytes_AS_STRING(path);
    if (!run.save.format && imgpu_format_from_path(p) == IMGPU_FORMAT_UNKNOWN) {
        PyErr_Format(PyExc_ValueError, "cannot tell the output format of %R from its extension (use "
                     IMGPU_EXTENSIONS_HINT ", or format=)", dst);
        Py_DECREF(path);
        return NULL;
    }
    in_view in;
    if (in_get(&in, array, "write") < 0) {
        Py_DECREF(path);
        return NULL;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    imgpu_image *conv;
    const imgpu_image *im = apply_depth(&run, &in.im, &conv);
    rc = im ? imgpu_image_save(im, p, &run.save) : -1;
    imgpu_image_free(conv);
    Py_END_ALLOW_THREADS
    in_release(&in);
    if (rc < 0) {
        /* a missing folder is FileNotFoundError, as open() says it */
        char *dir = strdup(p);
        char *slash = dir ? strrchr(dir, '/') : NULL;
        struct stat st;
        if (slash && slash != dir) {
            *slash = '\0';
            if (stat(dir, &st) != 0 && errno == ENOENT) {
                free(dir);
                PyObject *a = Py_BuildValue("(iss)", ENOENT, imgpu_error_message(), p);
                if (a) {
                    PyErr_SetObject(PyExc_FileNotFoundError, a);
                    Py_DECREF(a);
                }
                Py_DECREF(path);
                return NULL;
            }
        }
        free(dir);
        Py_DECREF(path);
        return raise_imgpu("cannot write the image");
    }
    Py_DECREF(path);
    Py_RETURN_NONE;
}

static int format_arg(PyObject *f, imgpu_format *out)
{
    const char *s = PyUnicode_Check(f) ? PyUnicode_AsUTF8(f) : NULL;
    char probe[40];
    if (s && *s == '.')
        s++;
    if (!s || strlen(s) > 16 || strchr(s, '/') ||
        (snprintf(probe, sizeof probe, "x.%s", s), (*out = imgpu_format_from_path(probe)) == IMGPU_FORMAT_UNKNOWN)) {
        PyErr_Format(s ? PyExc_ValueError : PyExc_TypeError,
                     "invalid format %R (png, jpg, tif, webp, bmp, tga, pnm, pgm or ppm)", f);
        return -1;
    }
    return 0;
}

/* bytes holding buf[0..len) (malloc'ed; freed here, *buf set NULL), copied with the GIL released
 * where the copy is large: an encoded 4K photo is ~1 MB, and a batch's copies under the GIL held
 * the other Python threads of a pipeline (the decoding one) for milliseconds a call. The new
 * object is this thread's alone until returned, so filling it without the GIL is safe. */
#define BYTES_COPY_UNLOCKED (64 * 1024)
static PyObject *bytes_take(unsigned char **buf, size_t len)
{
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)len);
    if (b) {
        char *dst = PyBytes_AS_STRING(b);
        const unsigned char *src = *buf;
        if (len >= BYTES_COPY_UNLOCKED) {
            Py_BEGIN_ALLOW_THREADS
            memcpy(dst, src, len);
            Py_END_ALLOW_THREADS
        } else if (len) {
            memcpy(dst, src, len);
        }
    }
    free(*buf);   /* now: the next item's bytes take its memory, already paged in */
    *buf = NULL;
    return b;
}

static PyObject *py_encode(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    PyObject *array, *fmt;
    imgpu_format f;
    if (!PyArg_ParseTuple(args, "OO:encode", &array, &fmt))
        return NULL;
    if (format_arg(fmt, &f) < 0)
        return NULL;
    imgpu_run_options run;
    if (parse_save_options(kw, &run, "encode") < 0)
        return NULL;
    run.save.format = f;
    in_view in;
    if (in_get(&in, array, "encode") < 0)
        return NULL;
    unsigned char *buf = NULL;
    size_t len = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    imgpu_image *conv;
    const imgpu_image *im = apply_depth(&run, &in.im, &conv);
    rc = im ? imgpu_image_encode(im, f, &run.save, &buf, &len) : -1;
    imgpu_image_free(conv);
    Py_END_ALLOW_THREADS
    in_release(&in);
    if (rc < 0)
        return raise_imgpu("cannot encode the image");
    return bytes_take(&buf, len);
}

/* ---- batches of images: decode_batch, encode_batch (CPU threads; nvJPEG: notes/pylib.md) ---- */

typedef struct bitem {
    Py_buffer buf;          /* decode: the bytes */
    in_view in;             /* encode: the image */
    imgpu_image *im;        /* decode: the result */
    unsigned char *out;     /* encode: the result */
    size_t out_len;
    char *err;              /* strdup'ed message */
} bitem;

typedef struct bjobs {
    bitem *items;
    size_t n;
    atomic_size_t next;
    int encode;
    imgpu_format format;
    imgpu_run_options run;
    imgpu_load_options load;
} bjobs;

static void *batch_worker(void *arg)
{
    bjobs *J = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&J->next, 1);
        if (i >= J->n)
            break;
        bitem *it = &J->items[i];
        int ok;
        if (J->encode) {
            imgpu_image *conv;
            const imgpu_image *im = apply_depth(&J->run, &it->in.im, &conv);
            ok = im && imgpu_image_encode(im, J->format, &J->run.save, &it->out, &it->out_len) == 0;
            imgpu_image_free(conv);
        } else {
            char name[48];
            snprintf(name, sizeof name, "<item %zu>", i);
            ok = (it->im = imgpu_image_load_memory(it->buf.buf, (size_t)it->buf.len, name, &J->load)) != NULL;
        }
        if (!ok)
            it->err = strdup(imgpu_error_message());
    }
    return NULL;
}

/* Runs J on `threads` threads (0: the cores, at most n), the calling one among them. */
static void batch_run_threads(bjobs *J, int threads)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t t = threads > 0 ? (size_t)threads : (size_t)(cores > 0 ? cores : 1);
    if (t > J->n)
        t = J->n;
    if (t > 64)
        t = 64;
    pthread_t tid[64];
    size_t started = 0;
    for (size_t k = 1; k < t; k++)
        if (pthread_create(&tid[started], NULL, batch_worker, J) == 0)
            started++;
    batch_worker(J);
    for (size_t k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
}

/* device= of decode_batch / encode_batch: 0 the CPU threads, 1 the GPU (nvJPEG), -1 error.
 * *ctx: the Context given, or NULL. */
static int batch_device(PyObject *device, imgpu_context **ctx)
{
    imgpu_device d;
    if (parse_device(device, &d, ctx) < 0 || check_device(d, *ctx) < 0)
        return -1;
    return d == IMGPU_DEVICE_CUDA;
}

/* decode_batch(device="cuda"): imgpu.Arrays (or imgpu.Error items) from nvJPEG's engines, the
 * rest decoded on the CPU and uploaded. */
static PyObject *decode_batch_device(PyObject *seq, imgpu_context *given, PyObject *ctx_obj, int auto_orient)
{
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    imgpu_context *ctx = device_context(given);
    void *priv = ctx ? imgpu_context_cuda_stream(ctx) : NULL;
    if (!priv)
        return PyErr_Format(s_Error, "decode_batch: CUDA not available (%s)", imgpu_error_message());
    pending_reap(0);
    Py_buffer *bufs = calloc((size_t)(n ? n : 1), sizeof *bufs);
    const unsigned char **data = calloc((size_t)(n ? n : 1), sizeof *data);
    size_t *len = calloc((size_t)(n ? n : 1), sizeof *len);
    imgpu_device_image **out = calloc((size_t)(n ? n : 1), sizeof *out);
    char **errs = calloc((size_t)(n ? n : 1), sizeof *errs);
    PyObject *result = NULL;
    Py_ssize_t got = 0;
    if (!bufs || !data || !len || !out || !errs) {
        PyErr_NoMemory();
        goto done;
    }
    for (; got < n; got++) {
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, got), &bufs[got], PyBUF_SIMPLE) < 0)
            goto done;
        data[got] = bufs[got].buf;
        len[got] = (size_t)bufs[got].len;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = imgpu_context_decode_batch(ctx, (int)n, data, len, auto_orient, priv, out, errs);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        raise_imgpu("decode_batch failed on the GPU");
        goto done;
    }
    result = PyList_New(n);
    for (Py_ssize_t i = 0; result && i < n; i++) {
        PyObject *o;
        if (out[i]) {
            o = array_new(out[i], imgpu_device_event_record(priv), ctx_obj);
            out[i] = NULL;
        } else {
            o = PyObject_CallFunction(s_Error, "s", errs[i] ? errs[i] : "failed");
        }
        if (!o) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, i, o);
    }
done:
    for (Py_ssize_t i = 0; i < got; i++)
        PyBuffer_Release(&bufs[i]);
    for (Py_ssize_t i = 0; out && errs && i < n; i++) {
        imgpu_device_image_free(out[i], NULL, -1);
        free(errs[i]);
    }
    free(bufs);
    free(data);
    free(len);
    free(out);
    free(errs);
    return result;
}

/* encode_batch of CUDA arrays: JPEG on nvJPEG where it takes the image, several in flight
 * (imgpu_context_encode_jpeg_batch), else (other formats, 16-bit, alpha) a download and the CPU
 * encoder. The first item that fails raises, as one encode's failure would. */
static char *dup_error(void)
{
    const char *m = imgpu_error_message();
    const size_t n = strlen(m ? m : "") + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, m ? m : "", n);
    return d;
}

static PyObject *encode_batch_device(PyObject *seq, imgpu_context *given, imgpu_format f, imgpu_run_options *run)
{
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    imgpu_context *ctx = device_context(given);
    void *priv = ctx ? imgpu_context_cuda_stream(ctx) : NULL;
    if (!priv)
        return PyErr_Format(s_Error, "encode_batch: CUDA not available (%s)", imgpu_error_message());
    const size_t m = n > 0 ? (size_t)n : 1;
    dev_in *d = calloc(m, sizeof *d);
    const imgpu_device_image **ims = calloc(m, sizeof *ims);
    void **streams = calloc(m, sizeof *streams);
    unsigned char **bufs = calloc(m, sizeof *bufs);
    size_t *lens = calloc(m, sizeof *lens);
    int *status = calloc(m, sizeof *status);
    char **errs = calloc(m, sizeof *errs);
    PyObject *result = NULL;
    Py_ssize_t got = 0;
    if (!d || !ims || !streams || !bufs || !lens || !status || !errs) {
        PyErr_NoMemory();
        goto done;
    }
    for (; got < n; got++) {
        if (dev_get(&d[got], PySequence_Fast_GET_ITEM(seq, got), "encode_batch", priv) < 0)
            goto done;
        if (d[got].im.device < 0)
            imgpu_context_cuda_device(ctx, &d[got].im.device);
        ims[got] = &d[got].im;
        streams[got] = d[got].have_wait ? d[got].wait_stream : priv;
        status[got] = 1;
    }
    const int sub = run->save.subsampling == IMGPU_SUBSAMPLING_444 ? 444
                  : run->save.subsampling == IMGPU_SUBSAMPLING_422 ? 422 : 420;
    const int q = run->save.quality ? run->save.quality : 92;
    int brc = 0;
    Py_BEGIN_ALLOW_THREADS
    if (f == IMGPU_FORMAT_JPEG && n > 0)
        brc = imgpu_context_encode_jpeg_batch(ctx, (int)n, ims, q, sub, run->save.optimize, run->save.progressive,
                                              priv, streams, bufs, lens, status, errs);
    for (Py_ssize_t i = 0; brc == 0 && i < n; i++) {
        if (status[i] != 1)
            continue;
        /* the CPU encoder on a host copy */
        imgpu_image *h = NULL;
        int rc = imgpu_context_download(ctx, ims[i], streams[i], &h);
        if (rc == 0) {
            imgpu_image *conv;
            const imgpu_image *im = apply_depth(run, h, &conv);
            rc = im ? imgpu_image_encode(im, f, &run->save, &bufs[i], &lens[i]) : -1;
            imgpu_image_free(conv);
        }
        imgpu_image_free(h);
        status[i] = rc < 0 ? -1 : 0;
        if (rc < 0)
            errs[i] = dup_error();
    }
    Py_END_ALLOW_THREADS
    if (brc < 0) {
        PyErr_Format(s_Error, "encode_batch: %s", imgpu_error_message());
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (status[i] != 0) {
            PyErr_Format(s_Error, "encode_batch: item %zd: %s", i, errs[i] ? errs[i] : "out of memory");
            goto done;
        }
    if (!(result = PyList_New(n)))
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *b = bytes_take(&bufs[i], lens[i]);
        if (!b) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, i, b);
    }
done:
    for (Py_ssize_t i = 0; i < got; i++)
        dev_in_release(&d[i]);
    for (Py_ssize_t i = 0; bufs && errs && i < n; i++) {
        free(bufs[i]);
        free(errs[i]);
    }
    free(d);
    free(ims);
    free(streams);
    free(bufs);
    free(lens);
    free(status);
    free(errs);
    return result;
}

static PyObject *py_decode_batch(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"data", "device", "threads", "auto_orient", NULL};
    PyObject *data, *device = Py_None;
    int threads = 0, auto_orient = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$Oip:decode_batch", kwlist, &data, &device, &threads, &auto_orient))
        return NULL;
    imgpu_context *given;
    const int on_gpu = batch_device(device, &given);
    if (on_gpu < 0)
        return NULL;
    PyObject *seq = PySequence_Fast(data, "decode_batch takes a list of bytes");
    if (!seq)
        return NULL;
    if (on_gpu) {
        PyObject *r = decode_batch_device(seq, given, context_obj(device), auto_orient);
        Py_DECREF(seq);
        return r;
    }
    bjobs J;
    memset(&J, 0, sizeof J);
    J.n = (size_t)PySequence_Fast_GET_SIZE(seq);
    J.load.no_auto_orient = !auto_orient;
    PyObject *result = NULL;
    J.items = calloc(J.n ? J.n : 1, sizeof *J.items);
    size_t got = 0;
    if (!J.items) {
        PyErr_NoMemory();
        goto done;
    }
    if (imgpu_load_options_from_env(&J.load) < 0) {
        raise_imgpu("bad IMGPU_MAX_* variable");
        goto done;
    }
    for (; got < J.n; got++)
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, got), &J.items[got].buf, PyBUF_SIMPLE) < 0)
            goto done;
    Py_BEGIN_ALLOW_THREADS
    batch_run_threads(&J, threads);
    Py_END_ALLOW_THREADS
    result = PyList_New((Py_ssize_t)J.n);
    for (size_t i = 0; result && i < J.n; i++) {
        bitem *it = &J.items[i];
        PyObject *o;
        if (it->im) {
            o = image_to_numpy(it->im);
            it->im = NULL;
        } else {   /* a per-item error is this item's result, not the batch's failure */
            o = PyObject_CallFunction(s_Error, "s", it->err ? it->err : "out of memory");
        }
        if (!o) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, (Py_ssize_t)i, o);
    }
done:
    for (size_t i = 0; J.items && i < got; i++) {
        PyBuffer_Release(&J.items[i].buf);
        imgpu_image_free(J.items[i].im);
        free(J.items[i].err);
    }
    free(J.items);
    Py_DECREF(seq);
    return result;
}

static PyObject *py_encode_batch(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    PyObject *arrays, *fmt, *device = Py_None, *threads_o = NULL;
    if (!PyArg_ParseTuple(args, "OO:encode_batch", &arrays, &fmt))
        return NULL;
    bjobs J;
    memset(&J, 0, sizeof J);
    if (format_arg(fmt, &J.format) < 0)
        return NULL;
    /* device= and threads= are this function's; the rest are save options */
    PyObject *save_kw = kw ? PyDict_Copy(kw) : NULL;
    if (kw && !save_kw)
        return NULL;
    int threads = 0;
    if (save_kw) {
        device = PyDict_GetItemString(save_kw, "device");
        threads_o = PyDict_GetItemString(save_kw, "threads");
        Py_XINCREF(device);
        if (threads_o) {
            threads = (int)PyLong_AsLong(threads_o);
            PyDict_DelItemString(save_kw, "threads");
        }
        if (device)
            PyDict_DelItemString(save_kw, "device");
    }
    PyObject *seq = NULL, *result = NULL;
    size_t got = 0;
    imgpu_context *given = NULL;
    int on_gpu = 0;
    if (PyErr_Occurred() || (on_gpu = batch_device(device ? device : Py_None, &given)) < 0 ||
        parse_save_options(save_kw, &J.run, "encode_batch") < 0)
        goto done;
    J.run.save.format = J.format;
    J.encode = 1;
    if (!(seq = PySequence_Fast(arrays, "encode_batch takes a list of arrays")))
        goto done;
    J.n = (size_t)PySequence_Fast_GET_SIZE(seq);
    if (J.n > 0) {   /* CUDA arrays: on their GPU */
        const int cuda = is_cuda_array(PySequence_Fast_GET_ITEM(seq, 0));
        if (cuda < 0)
            goto done;
        if (cuda) {   /* device="cuda" with host arrays: the CPU encoders, as for "auto" */
            (void)on_gpu;
            result = encode_batch_device(seq, given, J.format, &J.run);
            goto done;
        }
    }
    if (!(J.items = calloc(J.n ? J.n : 1, sizeof *J.items))) {
        PyErr_NoMemory();
        goto done;
    }
    for (; got < J.n; got++)
        if (in_get(&J.items[got].in, PySequence_Fast_GET_ITEM(seq, got), "encode_batch") < 0)
            goto done;
    Py_BEGIN_ALLOW_THREADS
    batch_run_threads(&J, threads);
    Py_END_ALLOW_THREADS
    for (size_t i = 0; i < J.n; i++)
        if (J.items[i].err) {
            PyErr_Format(s_Error, "encode_batch: item %zu: %s", i, J.items[i].err);
            goto done;
        }
    result = PyList_New((Py_ssize_t)J.n);
    for (size_t i = 0; result && i < J.n; i++) {
        PyObject *b = bytes_take(&J.items[i].out, J.items[i].out_len);
        if (!b) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, (Py_ssize_t)i, b);
    }
done:
    for (size_t i = 0; J.items && i < got; i++) {
        in_release(&J.items[i].in);
        free(J.items[i].out);
        free(J.items[i].err);
    }
    free(J.items);
    Py_XDECREF(seq);
    Py_XDECREF(save_kw);
    Py_XDECREF(device);
    return result;
}

/* ---- imgpu batch in-process ------------------------------------------------------------------ */

static pthread_mutex_t s_batch_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct failure { char *path, *reason; } failure;
typedef struct failures { failure *v; size_t n, cap; int oom; } failures;

static void on_fail(void *ctx, const char *path, const char *reason)
{
    failures *F = ctx;
    if (F->n == F->cap) {
        size_t cap = F->cap ? 2 * F->cap : 16;
        failure *v = realloc(F->v, cap * sizeof *v);
        if (!v) {
            F->oom = 1;
            return;
        }
        F->v = v;
        F->cap = cap;
    }
    F->v[F->n].path = strdup(path ? path : "");
    F->v[F->n].reason = strdup(reason ? reason : "");
    F->n++;
}

/* argv from a list of str / bytes / PathLike (argv[0] = "batch"); *keep holds the bytes
 * objects. 0, or -1 with the exception set. */
static int batch_argv(PyObject *list, PyObject ***keep, char ***argv, Py_ssize_t *n)
{
    *n = PyList_GET_SIZE(list);
    *keep = calloc((size_t)*n + 1, sizeof **keep);
    *argv = calloc((size_t)*n + 2, sizeof **argv);
    if (!*keep || !*argv) {
        PyErr_NoMemory();
        return -1;
    }
    (*argv)[0] = "batch";
    for (Py_ssize_t k = 0; k < *n; k++) {
        if (!PyUnicode_FSConverter(PyList_GET_ITEM(list, k), &(*keep)[k]))
            return -1;
        (*argv)[k + 1] = PyBytes_AS_STRING((*keep)[k]);
    }
    return 0;
}

static void batch_argv_free(PyObject **keep, char **argv, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; keep && i < n; i++)
        Py_XDECREF(keep[i]);
    free(keep);
    free(argv);
}

/* The failures as [{"path", "reason"}]; NULL with the exception set. */
static PyObject *failures_list(const failures *F)
{
    if (F->oom)
        return PyErr_NoMemory();
    PyObject *failed = PyList_New((Py_ssize_t)F->n);
    for (size_t i = 0; failed && i < F->n; i++) {
        PyObject *path = PyUnicode_DecodeFSDefault(F->v[i].path);
        PyObject *d = path ? Py_BuildValue("{s:N,s:s}", "path", path, "reason", F->v[i].reason) : NULL;
        if (!d) {
            Py_CLEAR(failed);
            break;
        }
        PyList_SET_ITEM(failed, (Py_ssize_t)i, d);
    }
    return failed;
}

static void failures_free(failures *F)
{
    for (size_t i = 0; i < F->n; i++) {
        free(F->v[i].path);
        free(F->v[i].reason);
    }
    free(F->v);
}

/* The staged run's records and the plan's (in, out) pairs, collected in C while the GIL is
 * released: each a row of strings and numbers. */
typedef struct row { char *s[4]; long long v[4]; } row;
typedef struct batch_out {
    failures F;
    row *rows;
    size_t n, cap;
} batch_out;

static void rows_push(batch_out *B, const char *const *s, int ns, const long long *v)
{
    if (B->n == B->cap) {
        size_t cap = B->cap ? 2 * B->cap : 64;
        row *r = realloc(B->rows, cap * sizeof *r);
        if (!r) {
            B->F.oom = 1;
            return;
        }
        B->rows = r;
        B->cap = cap;
    }
    row *r = &B->rows[B->n++];
    memset(r, 0, sizeof *r);
    for (int i = 0; i < ns; i++)
        if (!(r->s[i] = strdup(s[i] ? s[i] : "")))
            B->F.oom = 1;
    for (int i = 0; v && i < 4; i++)
        r->v[i] = v[i];
}

static void rows_free(batch_out *B)
{
    for (size_t i = 0; i < B->n; i++)
        for (int k = 0; k < 4; k++)
            free(B->rows[i].s[k]);
    free(B->rows);
    failures_free(&B->F);
}

static void on_todo(void *ctx, const char *in, const char *out)
{
    const char *s[2] = {in, out};
    rows_push(ctx, s, 2, NULL);
}

static void on_staged(void *ctx, const imgpu_batch_record *r)
{
    const char *s[4] = {r->in, r->out, r->staged, r->settings};
    const long long v[4] = {r->in_size, r->in_mtime_ns, r->out_size, r->out_mtime_ns};
    rows_push(ctx, s, 4, v);
}

static void on_fail_rows(void *ctx, const char *path, const char *reason)
{
    on_fail(&((batch_out *)ctx)->F, path, reason);
}

/* The summary dict, with `extra` (a new reference, or NULL for none) under `key`. */
static PyObject *batch_result(int rc, const imgpu_batch_summary *sum, const failures *F, const char *key,
                              PyObject *extra)
{
    PyObject *result = NULL, *failed = NULL;
    if (rc == 2)
        PyErr_Format(PyExc_ValueError, "batch: %s", imgpu_usage_message());
    else if (sum->fatal)
        PyErr_Format(s_Error, "batch: %s", imgpu_usage_message());
    else if ((failed = failures_list(F)))
        result = Py_BuildValue("{s:i,s:i,s:N,s:i}", "done", sum->done, "skipped", sum->skipped, "failed", failed,
                               "stale", sum->stale);
    if (result && key && PyDict_SetItemString(result, key, extra) < 0)
        Py_CLEAR(result);
    Py_XDECREF(extra);
    return result;
}

/* _batch(argv): argv as `imgpu batch` takes it after "batch" (built by imgpu.batch). Returns
 * {"done", "skipped", "failed": [{"path", "reason"}], "stale"}; ValueError on a usage error. */
static PyObject *py_batch(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *list, **keep = NULL, *result = NULL;
    char **argv = NULL;
    Py_ssize_t n = 0;
    if (!PyArg_ParseTuple(args, "O!:_batch", &PyList_Type, &list))
        return NULL;
    if (batch_argv(list, &keep, &argv, &n) == 0) {
        failures F = {NULL, 0, 0, 0};
        imgpu_batch_summary sum;
        int rc;
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&s_batch_lock);   /* one batch at a time per process (batch.h) */
        rc = imgpu_batch_run((int)n + 1, argv, on_fail, &F, &sum);
        pthread_mutex_unlock(&s_batch_lock);
        Py_END_ALLOW_THREADS
        result = batch_result(rc, &sum, &F, NULL, NULL);
        failures_free(&F);
    }
    batch_argv_free(keep, argv, n);
    return result;
}

/* _batch_plan(argv): the plan of _batch(argv), nothing run (batch.h's imgpu_batch_plan): its
 * summary ("done": the files to write) with "todo": [(in, out), ...] and "jpegs_before": for
 * each todo, how many JPEG inputs (by name) come before it (the last entry: all of them), which
 * _batch_stage takes to cut the plan into shares that decode as the whole run would. */
static PyObject *py_batch_plan(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *list, **keep = NULL, *result = NULL;
    char **argv = NULL;
    Py_ssize_t n = 0;
    if (!PyArg_ParseTuple(args, "O!:_batch_plan", &PyList_Type, &list))
        return NULL;
    if (batch_argv(list, &keep, &argv, &n) == 0) {
        batch_out B;
        memset(&B, 0, sizeof B);
        imgpu_batch_summary sum;
        int rc;
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&s_batch_lock);
        rc = imgpu_batch_plan((int)n + 1, argv, on_todo, on_fail_rows, &B, &sum);
        pthread_mutex_unlock(&s_batch_lock);
        Py_END_ALLOW_THREADS
        PyObject *todo = B.F.oom ? NULL : PyList_New((Py_ssize_t)B.n);
        PyObject *before = todo ? PyList_New((Py_ssize_t)B.n + 1) : NULL;
        size_t nj = 0;
        int ok = todo && before;
        for (size_t i = 0; ok && i <= B.n; i++) {
            PyObject *k = PyLong_FromSize_t(nj), *t = NULL;
            if (!k) {
                ok = 0;
                break;
            }
            PyList_SET_ITEM(before, (Py_ssize_t)i, k);
            if (i == B.n)
                break;
            nj += imgpu_format_from_path(B.rows[i].s[0]) == IMGPU_FORMAT_JPEG;
            if (!(t = Py_BuildValue("(NN)", PyUnicode_DecodeFSDefault(B.rows[i].s[0]),
                                    PyUnicode_DecodeFSDefault(B.rows[i].s[1])))) {
                ok = 0;
                break;
            }
            PyList_SET_ITEM(todo, (Py_ssize_t)i, t);
        }
        if (ok) {
            result = batch_result(rc, &sum, &B.F, "todo", todo);   /* takes todo */
            todo = NULL;
            if (result && PyDict_SetItemString(result, "jpegs_before", before) < 0)
                Py_CLEAR(result);
        } else if (B.F.oom)
            result = batch_result(rc, &sum, &B.F, "todo", NULL);
        Py_XDECREF(todo);
        Py_XDECREF(before);
        rows_free(&B);
    }
    batch_argv_free(keep, argv, n);
    return result;
}

/* _batch_stage(argv, pairs, tag, plan_ntodo=0, jpegs_before=0): a worker's share (batch.h's
 * imgpu_batch_stage_part): argv's options, the files [(in, out), ...], cut from a plan of
 * plan_ntodo files with jpegs_before JPEGs before them (_batch_plan's); the summary with
 * "staged": [(in, out, staged, settings, in_size, in_mtime_ns, out_size, out_mtime_ns), ...],
 * the records _batch_commit takes. */
static PyObject *py_batch_stage(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *list, *pairs, *tag_obj, **keep = NULL, *result = NULL, **pkeep = NULL, *tagb = NULL;
    char **argv = NULL;
    const char **pv = NULL;
    Py_ssize_t n = 0, np = 0, got = 0, plan_ntodo = 0, jpegs_before = 0;
    if (!PyArg_ParseTuple(args, "O!O!O|nn:_batch_stage", &PyList_Type, &list, &PyList_Type, &pairs, &tag_obj,
                          &plan_ntodo, &jpegs_before))
        return NULL;
    if (plan_ntodo < 0 || jpegs_before < 0 || jpegs_before > plan_ntodo) {
        PyErr_SetString(PyExc_ValueError, "_batch_stage: plan_ntodo and jpegs_before are counts, jpegs_before <= plan_ntodo");
        return NULL;
    }
    if (batch_argv(list, &keep, &argv, &n) < 0 || !PyUnicode_FSConverter(tag_obj, &tagb))
        goto done;
    np = PyList_GET_SIZE(pairs);
    pkeep = calloc(2 * (size_t)np + 1, sizeof *pkeep);
    pv = calloc(2 * (size_t)np + 1, sizeof *pv);
    if (!pkeep || !pv) {
        PyErr_NoMemory();
        goto done;
    }
    for (; got < np; got++) {
        PyObject *p = PyList_GET_ITEM(pairs, got), *a, *b;
        if (!PyArg_ParseTuple(p, "OO;a pair is (input, output)", &a, &b) ||
            !PyUnicode_FSConverter(a, &pkeep[2 * got]))
            goto done;
        if (!PyUnicode_FSConverter(b, &pkeep[2 * got + 1])) {
            Py_CLEAR(pkeep[2 * got]);
            goto done;
        }
        pv[2 * got] = PyBytes_AS_STRING(pkeep[2 * got]);
        pv[2 * got + 1] = PyBytes_AS_STRING(pkeep[2 * got + 1]);
    }
    {
        batch_out B;
        memset(&B, 0, sizeof B);
        imgpu_batch_summary sum;
        const char *tag = PyBytes_AS_STRING(tagb);
        int rc;
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&s_batch_lock);
        rc = imgpu_batch_stage_part((int)n + 1, argv, pv, (size_t)np, (size_t)plan_ntodo, (size_t)jpegs_before, tag,
                                    on_staged, on_fail_rows, &B, &sum);
        pthread_mutex_unlock(&s_batch_lock);
        Py_END_ALLOW_THREADS
        PyObject *staged = B.F.oom ? NULL : PyList_New((Py_ssize_t)B.n);
        for (size_t i = 0; staged && i < B.n; i++) {
            const row *r = &B.rows[i];
            PyObject *t = Py_BuildValue("(NNNsLLLL)", PyUnicode_DecodeFSDefault(r->s[0]),
                                        PyUnicode_DecodeFSDefault(r->s[1]), PyUnicode_DecodeFSDefault(r->s[2]),
                                        r->s[3], r->v[0], r->v[1], r->v[2], r->v[3]);
            if (!t)
                Py_CLEAR(staged);
            else
                PyList_SET_ITEM(staged, (Py_ssize_t)i, t);
        }
        if (staged || B.F.oom)
            result = batch_result(rc, &sum, &B.F, "staged", staged);
        rows_free(&B);
    }
done:
    for (Py_ssize_t i = 0; pkeep && i < 2 * got; i++)
        Py_XDECREF(pkeep[i]);
    free(pkeep);
    free(pv);
    Py_XDECREF(tagb);
    batch_argv_free(keep, argv, n);
    return result;
}

/* _batch_commit(outdir, records): the client's half (batch.h's imgpu_batch_commit): each record
 * of _batch_stage's "staged" recorded in OUTDIR's manifest, then put in place. Returns {"done":
 * how many, "failed": [{"path", "reason"}]}; imgpu.Error when the manifest cannot be used. */
static PyObject *py_batch_commit(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *outdir_obj, *recs, *outdir_b = NULL, *result = NULL, **keep = NULL;
    imgpu_batch_record *r = NULL;
    Py_ssize_t n = 0, got = 0;
    if (!PyArg_ParseTuple(args, "OO!:_batch_commit", &outdir_obj, &PyList_Type, &recs) ||
        !PyUnicode_FSConverter(outdir_obj, &outdir_b))
        return NULL;
    n = PyList_GET_SIZE(recs);
    keep = calloc(3 * (size_t)n + 1, sizeof *keep);
    r = calloc((size_t)n + 1, sizeof *r);
    if (!keep || !r) {
        PyErr_NoMemory();
        goto done;
    }
    for (; got < n; got++) {
        PyObject *a, *b, *c;
        imgpu_batch_record *x = &r[got];
        if (!PyArg_ParseTuple(PyList_GET_ITEM(recs, got), "OOOsLLLL;a record is _batch_stage's", &a, &b, &c,
                              &x->settings, &x->in_size, &x->in_mtime_ns, &x->out_size, &x->out_mtime_ns) ||
            !PyUnicode_FSConverter(a, &keep[3 * got]) || !PyUnicode_FSConverter(b, &keep[3 * got + 1]) ||
            !PyUnicode_FSConverter(c, &keep[3 * got + 2])) {
            got++;   /* its keeps (some NULL) are released below */
            goto done;
        }
        x->in = PyBytes_AS_STRING(keep[3 * got]);
        x->out = PyBytes_AS_STRING(keep[3 * got + 1]);
        x->staged = PyBytes_AS_STRING(keep[3 * got + 2]);
    }
    {
        failures F = {NULL, 0, 0, 0};
        const char *outdir = PyBytes_AS_STRING(outdir_b);
        long put;
        Py_BEGIN_ALLOW_THREADS
        put = imgpu_batch_commit(outdir, r, (size_t)n, on_fail, &F);
        Py_END_ALLOW_THREADS
        if (put < 0) {
            PyErr_Format(s_Error, "batch: %s", imgpu_error_message());
        } else {
            PyObject *failed = failures_list(&F);
            if (failed)
                result = Py_BuildValue("{s:l,s:N}", "done", put, "failed", failed);
        }
        failures_free(&F);
    }
done:
    for (Py_ssize_t i = 0; keep && i < 3 * got; i++)
        Py_XDECREF(keep[i]);
    free(keep);
    free(r);
    Py_XDECREF(outdir_b);
    return result;
}

/* ---- the module --------------------------------------------------------------------------------- */

static PyObject *py_tune_allocator(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    imgpu_batch_tune_allocator();
    Py_RETURN_NONE;
}

static PyObject *py_release_batch_state(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    int n;
    Py_BEGIN_ALLOW_THREADS
    n = imgpu_batch_release_state();
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(n);
}

static PyObject *py_set_quiet(PyObject *self, PyObject *arg)
{
    (void)self;
    int q = PyObject_IsTrue(arg);
    if (q < 0)
        return NULL;
    imgpu_set_quiet(q);
    Py_RETURN_NONE;
}

static PyMethodDef s_methods[] = {
    {"_run_op", (PyCFunction)(void (*)(void))py_run_op, METH_VARARGS | METH_KEYWORDS,
     "_run_op(name, array, params, device=None, out=None, stream=None): one op (the generic entry)."},
    {"_run_ops", (PyCFunction)(void (*)(void))py_run_ops, METH_VARARGS | METH_KEYWORDS,
     "_run_ops(array, [(name, params), ...], device=None, out=None, stream=None): a chain in one run."},
    {"_check_op", py_check_op, METH_VARARGS, "_check_op(name, params): validate parameters."},
    {"_cli_args", py_cli_args, METH_VARARGS, "_cli_args(name, params): the op as `imgpu batch` options."},
    {"_op_table", py_op_table, METH_NOARGS, "_op_table(): the op table (the registry) as Python sees it."},
    {"read", (PyCFunction)(void (*)(void))py_read, METH_VARARGS | METH_KEYWORDS, NULL},
    {"info", (PyCFunction)(void (*)(void))py_info, METH_VARARGS | METH_KEYWORDS, NULL},
    {"write", (PyCFunction)(void (*)(void))py_write, METH_VARARGS | METH_KEYWORDS, NULL},
    {"encode", (PyCFunction)(void (*)(void))py_encode, METH_VARARGS | METH_KEYWORDS, NULL},
    {"decode_batch", (PyCFunction)(void (*)(void))py_decode_batch, METH_VARARGS | METH_KEYWORDS, NULL},
    {"encode_batch", (PyCFunction)(void (*)(void))py_encode_batch, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_batch", py_batch, METH_VARARGS, "_batch(argv): `imgpu batch` in-process."},
    {"_batch_plan", py_batch_plan, METH_VARARGS, "_batch_plan(argv): the plan of _batch(argv), nothing run."},
    {"_batch_stage", py_batch_stage, METH_VARARGS,
     "_batch_stage(argv, [(in, out)], tag): the files run, outputs staged, no manifest."},
    {"_batch_commit", py_batch_commit, METH_VARARGS,
     "_batch_commit(outdir, records): staged outputs recorded in the manifest and put in place."},
    {"release_batch_state", py_release_batch_state, METH_NOARGS,
     "release_batch_state() -> int\n\nFrees the GPU state imgpu.batch keeps between batches in this process "
     "(each GPU's nvJPEG handles, decoder states and 32 decode buffers of the largest image: 0.8 GB a GPU for "
     "4K RGB; and the GPU workers' two sessions of buffers) and returns how many of these it freed. The next batch on a GPU sets nvJPEG up again (~1 s) and keeps "
     "its state again."},
    {"_tune_allocator", py_tune_allocator, METH_NOARGS,
     "_tune_allocator(): the process's allocator set as the batch command sets it (batch.h)."},
    {"_set_quiet", py_set_quiet, METH_O, "_set_quiet(flag): silence imgpu's notices on stderr."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef s_module = {
    PyModuleDef_HEAD_INIT, "_imgpu", "The C half of the imgpu module (see imgpu/__init__.py).", -1, s_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__imgpu(void)
{
    if (PyType_Ready(&ContextType) < 0 || PyType_Ready(&HostBufferType) < 0 || PyType_Ready(&ArrayType) < 0)
        return NULL;
    if (!s_pyops && pyops_build() < 0)
        return NULL;
    /* a process that imports imgpu runs batch after batch: each GPU's nvJPEG set-up is kept */
    imgpu_batch_keep_state(1);
    PyObject *m = PyModule_Create(&s_module);
    if (!m)
        return NULL;
    s_Error = PyErr_NewExceptionWithDoc("imgpu.Error", "An imgpu failure; str() is imgpu's message.", NULL, NULL);
    if (!s_Error || PyModule_AddObjectRef(m, "Error", s_Error) < 0 ||
        PyModule_AddObjectRef(m, "_Context", (PyObject *)&ContextType) < 0 ||
        PyModule_AddObjectRef(m, "Array", (PyObject *)&ArrayType) < 0 ||
        PyModule_AddStringConstant(m, "__version__", imgpu_version_string()) < 0 ||
        PyModule_AddIntConstant(m, "built_with_cuda", imgpu_built_with_cuda()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
