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
 * The op parameters (names, types, defaults, ranges, help, choices) are in ONE table below,
 * s_ops: the Python functions are generated from it at import (__init__.py), and _run_ops
 * parses and checks keyword values against it. It mirrors the CLI's options (src/cli/options.c)
 * and is to be replaced by the op table of issue 26 (src/op/ files) when that lands.
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
 * THE OP PARAMETER TABLE — the one place the module knows each op's parameters. It mirrors the
 * CLI's options (src/cli/options.c: names, hints, ranges; defaults are op.h's constructors, which
 * _run_ops starts every op from: imgpu_opt_default_op). To be replaced by the op table of
 * issue 26 (src/op/ files): __init__.py reads only _op_table(), and _run_ops only these entries.
 * ============================================================================================== */
typedef enum ptype {
    PT_CHOICE,   /* one of choices[] */
    PT_NUMBER,   /* a finite number in [lo, hi] */
    PT_ANGLE,    /* a finite number of degrees */
    PT_TILES,    /* (tx, ty) or n, each in [lo, hi] */
    PT_BOOL,     /* True / False */
    PT_COLOR,    /* None, a COLOR string (the CLI's grammar) or (R, G, B[, A]) 0..255 */
} ptype;

typedef enum pfield {
    F_EQ_MODE, F_EQ_FORMULA, F_CL_CLIP, F_CL_TILES, F_CL_MODE, F_ROT_ANGLE, F_ROT_FILTER,
    F_ROT_EXPAND, F_ROT_BACKGROUND,
} pfield;

typedef struct pdesc {
    const char *name;      /* the Python keyword */
    const char *cli;       /* the CLI's option (without --); how imgpu.batch passes it on */
    ptype type;
    pfield field;
    const char *def;       /* the default as Python source; NULL: required (positional) */
    double lo, hi;         /* PT_NUMBER, PT_TILES */
    const char *choices[4];/* PT_CHOICE, NULL-terminated, in the enum's order */
    const char *hint;      /* the allowed values, worded as the CLI's error says them */
    const char *help;
} pdesc;

#define OP_HISTOGRAM (-1)
typedef struct odesc {
    const char *name;
    int kind;              /* imgpu_op_kind, or OP_HISTOGRAM */
    const char *cli;       /* the `imgpu batch` option that adds it */
    const char *doc;
    int np;
    pdesc p[4];
} odesc;

#define MODE_PARAM(field)                                                                       \
    {"mode", "mode", PT_CHOICE, field, "'luminance'", 0, 0, {"luminance", "per-channel", NULL},   \
     "use luminance or per-channel",                                                             \
     "luminance: Y of BT.601 YCbCr is equalized and the colors kept; per-channel: R, G and B "   \
     "independently (gray images: both the same)"}

static const odesc s_ops[] = {
    {"equalize", IMGPU_OP_EQUALIZE, "equalize",
     "Histogram equalization (OpenCV equalizeHist) of 8- and 16-bit images (16 bits: a "
     "65536-level map). Alpha passes through untouched. The same bytes as `imgpu equalize`.",
     2,
     {MODE_PARAM(F_EQ_MODE),
      {"formula", "formula", PT_CHOICE, F_EQ_FORMULA, "'opencv'", 0, 0, {"opencv", "pil", "imagemagick", NULL},
       "use opencv, pil or imagemagick",
       "the LUT: OpenCV equalizeHist, PIL ImageOps.equalize / torchvision (step scheme), or "
       "ImageMagick's -equalize"}}},
    {"clahe", IMGPU_OP_CLAHE, "clahe",
     "Contrast-limited adaptive histogram equalization with OpenCV's createCLAHE semantics: a "
     "LUT per tile from its clipped histogram, blended bilinearly between the four nearest tile "
     "centres. 8-bit (256 bins) and 16-bit (65536 bins) images; alpha passes through. The same "
     "bytes as `imgpu clahe`.",
     3,
     {{"clip", "clip", PT_NUMBER, F_CL_CLIP, "40.0", 0.0, IMGPU_CLAHE_CLIP_MAX, {NULL},
       "a number 0..1000000; 0 disables clipping",
       "clip limit (OpenCV's): each tile's bins are clipped at max(1, floor(clip * tile area / "
       "bins))"},
      {"tiles", "tiles", PT_TILES, F_CL_TILES, "(8, 8)", 1, IMGPU_CLAHE_MAX_TILES, {NULL},
       "WxH, each 1..256, e.g. 8x8",
       "tile grid (tiles_x, tiles_y), or one number for both; images that are not a multiple of "
       "it are padded by reflection (reflect-101) for the histograms"},
      MODE_PARAM(F_CL_MODE)}},
    {"rotate", IMGPU_OP_ROTATE, "rotate",
     "Rotate counterclockwise by `angle` degrees about the image centre. Multiples of 90 are "
     "exact pixel permutations whatever the filter. The same bytes as `imgpu rotate`.",
     4,
     {{"angle", "angle", PT_ANGLE, F_ROT_ANGLE, NULL, 0, 0, {NULL}, "degrees, e.g. 30 or -12.5",
       "rotation in degrees, counterclockwise positive"},
      {"filter", "filter", PT_CHOICE, F_ROT_FILTER, "'bilinear'", 0, 0, {"nearest", "bilinear", "bicubic", NULL},
       "use nearest, bilinear or bicubic", "resampling filter"},
      {"expand", "expand", PT_BOOL, F_ROT_EXPAND, "True", 0, 0, {NULL}, "True or False",
       "True: grow the canvas to hold the whole rotated image (--expand); False: keep the input "
       "size, cutting off the corners (--crop)"},
      {"background", "background", PT_COLOR, F_ROT_BACKGROUND, "None", 0, 255, {NULL},
       "None, black, white, transparent, #RGB, #RGBA, #RRGGBB, #RRGGBBAA, R,G,B[,A] or a tuple "
       "(R, G, B[, A]) of 0..255",
       "fill for uncovered areas (None: transparent when the image has alpha, else black; gray "
       "images get the color's luma)"}}},
    {"histogram", OP_HISTOGRAM, NULL,
     "Full-resolution histograms: a uint32 array of shape (planes, levels), levels 256 (8-bit) "
     "or 65536 (16-bit); the planes are the channels in order (gray | R, G, B; then alpha) and, "
     "for RGB and RGBA images, the luminance Y (BT.601, the Y that equalize uses) last: the "
     "columns of `imgpu histogram --csv` (with --bins 65536 for 16-bit images).",
     0, {{NULL}}},
};
#define N_OPS ((int)(sizeof s_ops / sizeof s_ops[0]))
/* ============================== end of the op parameter table ================================ */

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
    imgpu_context *ctx;
    imgpu_device device;
} ContextObject;

static PyTypeObject ContextType;

/* "auto", "cpu", "cuda", "cuda:N". 0, or -1 with ValueError (or imgpu.Error for cuda:N > 0). */
static int parse_device_name(const char *s, imgpu_device *d)
{
    if (!strcmp(s, "auto")) *d = IMGPU_DEVICE_AUTO;
    else if (!strcmp(s, "cpu")) *d = IMGPU_DEVICE_CPU;
    else if (!strcmp(s, "cuda") || !strcmp(s, "cuda:0")) *d = IMGPU_DEVICE_CUDA;
    else if (!strncmp(s, "cuda:", 5)) {
        long n;
        if (imgpu__parse_long(s + 5, 0, 1023, &n) < 0) {
            PyErr_Format(PyExc_ValueError, "invalid device '%s' (use auto, cpu, cuda or cuda:N)", s);
            return -1;
        }
        PyErr_Format(s_Error, "device '%s': only the default CUDA device (cuda, cuda:0) is supported "
                     "by this build of the module yet", s);
        return -1;
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
    return s ? parse_device_name(s, d) : -1;
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

static int Context_init(ContextObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device", NULL};
    const char *dev = "auto";
    imgpu_device d;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|s:Context", kwlist, &dev))
        return -1;
    if (parse_device_name(dev, &d) < 0)
        return -1;
    if (self->ctx)
        imgpu_context_destroy(self->ctx);
    self->ctx = imgpu_context_create(d);
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
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Context_close(ContextObject *self, PyObject *unused)
{
    (void)unused;
    imgpu_context_destroy(self->ctx);
    self->ctx = NULL;
    Py_RETURN_NONE;
}

static PyObject *Context_get_device(ContextObject *self, void *unused)
{
    (void)unused;
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
    const int isz = d->dtype.bits / 8;
    Py_ssize_t sh[3], st[3];
    for (int i = 0; i < d->ndim; i++) {
        sh[i] = (Py_ssize_t)d->shape[i];
        if (d->strides)
            st[i] = (Py_ssize_t)d->strides[i] * isz;
    }
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

/* ---- op parameters: the table above, applied to an imgpu_op ----------------------------------- */

static const odesc *find_op(const char *name)
{
    for (int i = 0; i < N_OPS; i++)
        if (!strcmp(s_ops[i].name, name))
            return &s_ops[i];
    return NULL;
}

static PyObject *bad_value(const odesc *od, const pdesc *p, PyObject *v, PyObject *exc)
{
    return PyErr_Format(exc, "%s: invalid %s=%R (%s)", od->name, p->name, v, p->hint);
}

/* A number (int or float, not bool) into *x; -1 with TypeError. */
static int get_number(const odesc *od, const pdesc *p, PyObject *v, double *x)
{
    if (PyBool_Check(v) || !(PyFloat_Check(v) || PyLong_Check(v))) {
        bad_value(od, p, v, PyExc_TypeError);
        return -1;
    }
    *x = PyFloat_AsDouble(v);
    if (*x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        bad_value(od, p, v, PyExc_ValueError);
        return -1;
    }
    return 0;
}

static int get_int_in(const odesc *od, const pdesc *p, PyObject *whole, PyObject *v, long *out)
{
    if (PyBool_Check(v) || !PyLong_Check(v)) {
        bad_value(od, p, whole, PyExc_TypeError);
        return -1;
    }
    int overflow;
    long n = PyLong_AsLongAndOverflow(v, &overflow);
    if ((n == -1 && PyErr_Occurred()) || overflow || n < (long)p->lo || n > (long)p->hi) {
        PyErr_Clear();
        bad_value(od, p, whole, PyExc_ValueError);
        return -1;
    }
    *out = n;
    return 0;
}

static int set_param(imgpu_op *op, const odesc *od, const pdesc *p, PyObject *v)
{
    switch (p->type) {
    case PT_CHOICE: {
        if (!PyUnicode_Check(v)) {
            bad_value(od, p, v, PyExc_TypeError);
            return -1;
        }
        const char *s = PyUnicode_AsUTF8(v);
        if (!s)
            return -1;
        int k = -1;
        for (int i = 0; p->choices[i]; i++)
            if (!strcmp(s, p->choices[i]))
                k = i;
        if (k < 0) {
            bad_value(od, p, v, PyExc_ValueError);
            return -1;
        }
        if (p->field == F_EQ_MODE) op->u.equalize.mode = (imgpu_eq_mode)k;
        else if (p->field == F_EQ_FORMULA) op->u.equalize.formula = (imgpu_eq_formula)k;
        else if (p->field == F_CL_MODE) op->u.clahe.mode = (imgpu_eq_mode)k;
        else op->u.rotate.filter = (imgpu_filter)k;
        return 0;
    }
    case PT_NUMBER:
    case PT_ANGLE: {
        double x;
        if (get_number(od, p, v, &x) < 0)
            return -1;
        if (!isfinite(x) || (p->type == PT_NUMBER && (x < p->lo || x > p->hi))) {
            bad_value(od, p, v, PyExc_ValueError);
            return -1;
        }
        if (p->field == F_CL_CLIP) op->u.clahe.clip = x;
        else op->u.rotate.angle = x;
        return 0;
    }
    case PT_TILES: {
        long tx, ty;
        if (PyLong_Check(v) && !PyBool_Check(v)) {
            if (get_int_in(od, p, v, v, &tx) < 0)
                return -1;
            ty = tx;
        } else if (PyTuple_Check(v) || PyList_Check(v)) {
            if (PySequence_Size(v) != 2) {
                bad_value(od, p, v, PyExc_ValueError);
                return -1;
            }
            PyObject *a = PySequence_GetItem(v, 0), *b = PySequence_GetItem(v, 1);
            int rc = a && b && get_int_in(od, p, v, a, &tx) == 0 && get_int_in(od, p, v, b, &ty) == 0 ? 0 : -1;
            Py_XDECREF(a);
            Py_XDECREF(b);
            if (rc < 0)
                return -1;
        } else {
            bad_value(od, p, v, PyExc_TypeError);
            return -1;
        }
        op->u.clahe.tiles_x = (int)tx;
        op->u.clahe.tiles_y = (int)ty;
        return 0;
    }
    case PT_BOOL:
        if (!PyBool_Check(v) && !(PyLong_Check(v) && (PyLong_AsLong(v) == 0 || PyLong_AsLong(v) == 1))) {
            PyErr_Clear();
            bad_value(od, p, v, PyExc_TypeError);
            return -1;
        }
        op->u.rotate.crop = !PyObject_IsTrue(v);
        return 0;
    case PT_COLOR: {
        uint8_t c[4];
        if (v == Py_None) {
            op->u.rotate.has_background = 0;
            memset(op->u.rotate.background, 0, 4);
            return 0;
        }
        if (PyUnicode_Check(v)) {
            const char *s = PyUnicode_AsUTF8(v);
            if (!s)
                return -1;
            if (imgpu__parse_color(s, c) < 0) {
                bad_value(od, p, v, PyExc_ValueError);
                return -1;
            }
        } else if (PyTuple_Check(v) || PyList_Check(v)) {
            Py_ssize_t n = PySequence_Size(v);
            if (n != 3 && n != 4) {
                bad_value(od, p, v, PyExc_ValueError);
                return -1;
            }
            c[3] = 255;
            for (Py_ssize_t i = 0; i < n; i++) {
                PyObject *e = PySequence_GetItem(v, i);
                long x = 0;
                int rc = e ? get_int_in(od, p, v, e, &x) : -1;
                Py_XDECREF(e);
                if (rc < 0)
                    return -1;
                c[i] = (uint8_t)x;
            }
        } else {
            bad_value(od, p, v, PyExc_TypeError);
            return -1;
        }
        memcpy(op->u.rotate.background, c, 4);
        op->u.rotate.has_background = 1;
        return 0;
    }
    }
    PyErr_SetString(PyExc_SystemError, "imgpu: unknown parameter type");
    return -1;
}

/* name + params dict -> *op (from the constructors' defaults). *od: the table entry. */
static int build_op(PyObject *name, PyObject *params, imgpu_op *op, const odesc **odp)
{
    const char *n = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (!n) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "an op name must be a str");
        return -1;
    }
    const odesc *od = find_op(n);
    if (!od) {
        PyErr_Format(PyExc_ValueError, "unknown op '%s' (equalize, clahe, rotate, histogram)", n);
        return -1;
    }
    *odp = od;
    if (od->kind != OP_HISTOGRAM)
        *op = imgpu_op_default((imgpu_op_kind)od->kind);
    if (params && params != Py_None) {
        if (!PyDict_Check(params)) {
            PyErr_SetString(PyExc_TypeError, "op parameters must be a dict");
            return -1;
        }
        PyObject *k, *v;
        Py_ssize_t pos = 0;
        while (PyDict_Next(params, &pos, &k, &v)) {
            const char *ks = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
            const pdesc *p = NULL;
            for (int i = 0; ks && i < od->np; i++)
                if (!strcmp(od->p[i].name, ks))
                    p = &od->p[i];
            if (!p) {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", od->name, k);
                return -1;
            }
            if (set_param(op, od, p, v) < 0)
                return -1;
        }
    }
    /* a parameter without a default must be given */
    for (int i = 0; i < od->np; i++)
        if (!od->p[i].def && (!params || params == Py_None || !PyDict_GetItemString(params, od->p[i].name))) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", od->name, od->p[i].name);
            return -1;
        }
    return 0;
}

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
        const odesc *od;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            Py_DECREF(seq);
            return PyErr_Format(PyExc_TypeError, "ops must be a list of (name, params) pairs");
        }
        if (build_op(PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1), &ops[n], &od) < 0) {
            Py_DECREF(seq);
            return NULL;
        }
        if (od->kind == OP_HISTOGRAM)
            histogram = 1;
        else
            n++;
    }
    Py_DECREF(seq);
    if (histogram && (count != 1 || (out && out != Py_None)))
        return PyErr_Format(PyExc_ValueError, "histogram runs alone (no other ops, no out=)");
    if (check_device(dev, ctx) < 0)
        return NULL;

    in_view in;
    if (in_get(&in, array, "input") < 0)
        return NULL;
    PyObject *result = NULL;

    if (histogram) {
        imgpu_histogram_full h;
        int rc;
        memset(&h, 0, sizeof h);
        Py_BEGIN_ALLOW_THREADS
        rc = ctx ? imgpu_context_histogram(ctx, &in.im, &h, NULL) : imgpu_histogram_full_compute(&in.im, dev, &h, NULL);
        Py_END_ALLOW_THREADS
        in_release(&in);
        if (rc < 0)
            return raise_imgpu("histogram failed");
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
    const odesc *od;
    if (!PyArg_ParseTuple(args, "OO:_check_op", &name, &params))
        return NULL;
    if (build_op(name, params, &op, &od) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* _op_table(): [{"name", "cli", "doc", "params": [{"name", "cli", "type", "default", "lo",
 * "hi", "choices", "hint", "help"}]}] */
static PyObject *py_op_table(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    static const char *const type_names[] = {"choice", "number", "angle", "tiles", "bool", "color"};
    PyObject *list = PyList_New(0);
    if (!list)
        return NULL;
    for (int i = 0; i < N_OPS; i++) {
        const odesc *od = &s_ops[i];
        PyObject *params = PyList_New(0);
        if (!params)
            goto fail;
        for (int k = 0; k < od->np; k++) {
            const pdesc *p = &od->p[k];
            PyObject *choices = PyTuple_New(0);
            for (int c = 0; choices && p->choices[c]; c++) {
                PyObject *s = PyUnicode_FromString(p->choices[c]);
                if (!s || _PyTuple_Resize(&choices, c + 1) < 0) {
                    Py_XDECREF(s);
                    Py_CLEAR(choices);
                    break;
                }
                PyTuple_SET_ITEM(choices, c, s);
            }
            PyObject *d = choices ? Py_BuildValue("{s:s,s:s,s:s,s:z,s:d,s:d,s:N,s:s,s:s}", "name", p->name, "cli",
                                                  p->cli, "type", type_names[p->type], "default", p->def, "lo", p->lo,
                                                  "hi", p->hi, "choices", choices, "hint", p->hint, "help", p->help)
                                    : NULL;
            if (!d || PyList_Append(params, d) < 0) {
                Py_XDECREF(d);
                Py_DECREF(params);
                goto fail;
            }
            Py_DECREF(d);
        }
        PyObject *o = Py_BuildValue("{s:s,s:z,s:s,s:N}", "name", od->name, "cli", od->cli, "doc", od->doc,
                                    "params", params);
        if (!o || PyList_Append(list, o) < 0) {
            Py_XDECREF(o);
            goto fail;
        }
        Py_DECREF(o);
    }
    return list;
fail:
    Py_DECREF(list);
    return NULL;
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
    imgpu_load_result r;
    memset(&r, 0, sizeof r);
    imgpu_image *im = NULL;
    if (imgpu_load_options_from_env(&lo) < 0) {
        Py_DECREF(path);
        return raise_imgpu("bad IMGPU_MAX_* variable");
    }
    Py_BEGIN_ALLOW_THREADS
    im = imgpu_image_load_ex(p, &lo, &r);
    Py_END_ALLOW_THREADS
    if (!im) {
        raise_load(p);
        Py_DECREF(path);
        return NULL;
    }
    /* the fields of `imgpu info --json` (src/main.c, info_one), in its order */
    const imgpu_meta *m = r.meta;
    char icc[128] = "";
    if (m->icc && imgpu_meta_icc_description(m->icc, m->icc_len, icc, sizeof icc) < 0)
        snprintf(icc, sizeof icc, "(no description)");
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
    if (m->icc)
        SET("icc", Py_BuildValue("{s:s,s:n}", "description", icc, "bytes", (Py_ssize_t)m->icc_len));
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
    SET("file_size", PyLong_FromUnsignedLongLong((unsigned long long)r.bytes));
#undef SET
    imgpu_meta_free(r.meta);
    imgpu_image_free(im);
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
                 "png_level, subsampling, progressive, optimize, compression, lossless, background, strip, "
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
    PyObject *b = PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)len);
    free(buf);
    return b;
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

static int batch_device(PyObject *device, const char *fn)
{
    imgpu_device d;
    imgpu_context *ctx;
    if (parse_device(device, &d, &ctx) < 0 || check_device(d, ctx) < 0)
        return -1;
    if (d == IMGPU_DEVICE_CUDA) {
        PyErr_Format(s_Error, "%s on the GPU (nvJPEG) is not implemented in this build of the module yet; "
                     "use device='cpu' or 'auto'", fn);
        return -1;
    }
    return 0;
}

static PyObject *py_decode_batch(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"data", "device", "threads", "auto_orient", NULL};
    PyObject *data, *device = Py_None;
    int threads = 0, auto_orient = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$Oip:decode_batch", kwlist, &data, &device, &threads, &auto_orient))
        return NULL;
    if (batch_device(device, "decode_batch") < 0)
        return NULL;
    PyObject *seq = PySequence_Fast(data, "decode_batch takes a list of bytes");
    if (!seq)
        return NULL;
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
    if (PyErr_Occurred() || batch_device(device ? device : Py_None, "encode_batch") < 0 ||
        parse_save_options(save_kw, &J.run, "encode_batch") < 0)
        goto done;
    J.run.save.format = J.format;
    J.encode = 1;
    if (!(seq = PySequence_Fast(arrays, "encode_batch takes a list of arrays")))
        goto done;
    J.n = (size_t)PySequence_Fast_GET_SIZE(seq);
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
        PyObject *b = PyBytes_FromStringAndSize((const char *)J.items[i].out, (Py_ssize_t)J.items[i].out_len);
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

/* _batch(argv): argv as `imgpu batch` takes it after "batch" (built by imgpu.batch). Returns
 * {"done", "skipped", "failed": [{"path", "reason"}], "stale"}; ValueError on a usage error. */
static PyObject *py_batch(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *list;
    if (!PyArg_ParseTuple(args, "O!:_batch", &PyList_Type, &list))
        return NULL;
    const Py_ssize_t n = PyList_GET_SIZE(list);
    PyObject **keep = calloc((size_t)n + 1, sizeof *keep);
    char **argv = calloc((size_t)n + 2, sizeof *argv);
    if (!keep || !argv) {
        free(keep);
        free(argv);
        return PyErr_NoMemory();
    }
    argv[0] = "batch";
    PyObject *result = NULL;
    Py_ssize_t k = 0;
    for (; k < n; k++) {
        if (!PyUnicode_FSConverter(PyList_GET_ITEM(list, k), &keep[k]))
            goto done;
        argv[k + 1] = PyBytes_AS_STRING(keep[k]);
    }
    failures F = {NULL, 0, 0, 0};
    imgpu_batch_summary sum;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&s_batch_lock);   /* one batch at a time per process (batch.h) */
    rc = imgpu_batch_run((int)n + 1, argv, on_fail, &F, &sum);
    pthread_mutex_unlock(&s_batch_lock);
    Py_END_ALLOW_THREADS
    if (rc == 2) {
        PyErr_Format(PyExc_ValueError, "batch: %s", imgpu_usage_message());
    } else if (sum.fatal) {
        PyErr_Format(s_Error, "batch: %s", imgpu_usage_message());
    } else if (F.oom) {
        PyErr_NoMemory();
    } else {
        PyObject *failed = PyList_New((Py_ssize_t)F.n);
        for (size_t i = 0; failed && i < F.n; i++) {
            PyObject *path = PyUnicode_DecodeFSDefault(F.v[i].path);
            PyObject *d = path ? Py_BuildValue("{s:N,s:s}", "path", path, "reason", F.v[i].reason) : NULL;
            if (!d) {
                Py_CLEAR(failed);
                break;
            }
            PyList_SET_ITEM(failed, (Py_ssize_t)i, d);
        }
        if (failed)
            result = Py_BuildValue("{s:i,s:i,s:N,s:i}", "done", sum.done, "skipped", sum.skipped, "failed", failed,
                                   "stale", sum.stale);
    }
    for (size_t i = 0; i < F.n; i++) {
        free(F.v[i].path);
        free(F.v[i].reason);
    }
    free(F.v);
done:
    for (Py_ssize_t i = 0; i < k; i++)
        Py_XDECREF(keep[i]);
    free(keep);
    free(argv);
    return result;
}

/* ---- the module --------------------------------------------------------------------------------- */

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
    {"_op_table", py_op_table, METH_NOARGS, "_op_table(): the op parameter table."},
    {"read", (PyCFunction)(void (*)(void))py_read, METH_VARARGS | METH_KEYWORDS, NULL},
    {"info", (PyCFunction)(void (*)(void))py_info, METH_VARARGS | METH_KEYWORDS, NULL},
    {"write", (PyCFunction)(void (*)(void))py_write, METH_VARARGS | METH_KEYWORDS, NULL},
    {"encode", (PyCFunction)(void (*)(void))py_encode, METH_VARARGS | METH_KEYWORDS, NULL},
    {"decode_batch", (PyCFunction)(void (*)(void))py_decode_batch, METH_VARARGS | METH_KEYWORDS, NULL},
    {"encode_batch", (PyCFunction)(void (*)(void))py_encode_batch, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_batch", py_batch, METH_VARARGS, "_batch(argv): `imgpu batch` in-process."},
    {"_set_quiet", py_set_quiet, METH_O, "_set_quiet(flag): silence imgpu's notices on stderr."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef s_module = {
    PyModuleDef_HEAD_INIT, "_imgpu", "The C half of the imgpu module (see imgpu/__init__.py).", -1, s_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__imgpu(void)
{
    if (PyType_Ready(&ContextType) < 0 || PyType_Ready(&HostBufferType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&s_module);
    if (!m)
        return NULL;
    s_Error = PyErr_NewExceptionWithDoc("imgpu.Error", "An imgpu failure; str() is imgpu's message.", NULL, NULL);
    if (!s_Error || PyModule_AddObjectRef(m, "Error", s_Error) < 0 ||
        PyModule_AddObjectRef(m, "_Context", (PyObject *)&ContextType) < 0 ||
        PyModule_AddStringConstant(m, "__version__", imgpu_version_string()) < 0 ||
        PyModule_AddIntConstant(m, "built_with_cuda", imgpu_built_with_cuda()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
