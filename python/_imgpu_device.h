/* _imgpu_device.h — the module's CUDA side, included by _imgpu.c (one translation unit): CUDA
 * arrays in (__cuda_array_interface__, DLPack on kDLCUDA), imgpu.Array out (__dlpack__ with
 * stream / max_version / dl_device / copy, __dlpack_device__, __cuda_array_interface__ v3),
 * streams, and inputs kept alive until the GPU work that reads them is done. Everything CUDA
 * goes through libimgpu's device-image API (include/imgpu/imgpu.h), so this file has no CUDA
 * type and builds the same with or without CUDA.
 *
 * Stream rules (DLPack and CUDA Array Interface v3):
 *  - stream= given (int handle; object with __cuda_stream__ or .cuda_stream): the work is
 *    ordered after what the caller enqueued on it, the result is ready for what the caller
 *    enqueues on it afterwards, and DLPack inputs are exported for it (__dlpack__(stream=S)).
 *  - none: a DLPack input is exported for the context's private stream (its producer makes that
 *    stream wait for its current stream); a CAI input's own `stream` is waited for. The result
 *    is ready on the private stream: __dlpack__(stream=S) and __cuda_array_interface__['stream']
 *    let the consumer wait for it.
 *  - out= without stream=: the call waits for the result (no consumer stream is known).
 * Inputs (and out=) are held until the work reading them has finished: an event per call, the
 * references released by the next device call that finds the event complete.
 */

/* ---- DLPack (versioned, 1.0) ------------------------------------------------------------------ */
typedef struct DLPackVersion { uint32_t major, minor; } DLPackVersion;
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;
#define DLPACK_FLAG_READ_ONLY (1ull << 0)

/* ---- the device context of calls that name none ------------------------------------------------ */

static imgpu_context *s_dev_ctx;
static pthread_mutex_t s_dev_lock = PTHREAD_MUTEX_INITIALIZER;

static imgpu_context *device_context(imgpu_context *given)
{
    if (given)
        return given;
    pthread_mutex_lock(&s_dev_lock);
    if (!s_dev_ctx)
        s_dev_ctx = imgpu_context_create(IMGPU_DEVICE_CUDA);
    imgpu_context *c = s_dev_ctx;
    pthread_mutex_unlock(&s_dev_lock);
    return c;
}

/* ---- probing an array: one look-up of each protocol attribute a call ---------------------------
 * torch computes __cuda_array_interface__ in Python each time it is read (a dict, a tuple, the
 * data pointer: microseconds), and PyObject_HasAttrString reads it to answer: the attribute is
 * read once a call, the dict kept for the import (cuda_probe), instead of once to ask, once to
 * choose and once to use. imgpu.Array is recognized by its type and read directly. */

static PyObject *s_str_cai, *s_str_dlpack_device;

/* o.<name> as a new reference, or NULL with no exception where it has none (any error while
 * getting it counts as none, as PyObject_HasAttrString answers). */
static PyObject *attr_or_null(PyObject *o, PyObject **name, const char *text)
{
    if (!*name && !(*name = PyUnicode_InternFromString(text))) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *v = PyObject_GetAttr(o, *name);
    if (!v)
        PyErr_Clear();
    return v;
}

/* __dlpack_device__() as (*type, *id): 0 (type kDLCPU, id -1 where there is none), -1 with the
 * exception the call raised. */
static int dlpack_device_of(PyObject *o, int *type, int *id)
{
    *type = kDLCPU;
    *id = -1;
    PyObject *m = attr_or_null(o, &s_str_dlpack_device, "__dlpack_device__");
    if (!m)
        return 0;
    PyObject *r = PyObject_CallNoArgs(m);
    Py_DECREF(m);
    if (!r)
        return -1;
    long t = -1, n = -1;
    if (PyTuple_Check(r) && PyTuple_GET_SIZE(r) >= 1)
        t = PyLong_AsLong(PyTuple_GET_ITEM(r, 0));
    if (!PyErr_Occurred() && PyTuple_Check(r) && PyTuple_GET_SIZE(r) >= 2)
        n = PyLong_AsLong(PyTuple_GET_ITEM(r, 1));
    Py_DECREF(r);
    if (PyErr_Occurred())
        return -1;
    *type = (int)t;
    *id = n >= 0 && n <= INT_MAX ? (int)n : -1;
    return 0;
}

/* The CUDA device a DLPack array lives on (__dlpack_device__), or -1 when it does not say. */
static int array_cuda_device(PyObject *array)
{
    int t, n;
    if (dlpack_device_of(array, &t, &n) < 0) {
        PyErr_Clear();
        return -1;
    }
    return (t == kDLCUDA || t == kDLCUDAManaged) && n >= 0 && n < MAX_ORDINALS ? n : -1;
}

typedef struct cuda_probe {
    int kind;          /* PROBE_HOST, PROBE_ARRAY (an imgpu.Array), PROBE_CAI, PROBE_DLPACK (on CUDA) */
    PyObject *cai;     /* PROBE_CAI: the __cuda_array_interface__ dict read (a new reference) */
    int device;        /* the array's CUDA device; -1: not known (CAI: asked of __dlpack_device__ later) */
} cuda_probe;
enum { PROBE_HOST, PROBE_ARRAY, PROBE_CAI, PROBE_DLPACK };

static PyTypeObject ArrayType;
static int array_device_of(PyObject *o);   /* an imgpu.Array's device (below) */

static void probe_release(cuda_probe *p) { Py_CLEAR(p->cai); }

/* A torch tensor's interface (version 2) has no stream key; torch's __dlpack__(stream=) would
 * order its current stream before ours, but builds a torch Event and Stream in Python each call
 * (~30 us measured on an H200, more than the op). torch's own C entry for its current raw stream
 * (torch._C._cuda_getCurrentRawStream(device), the one its compiled code calls) answers in well
 * under a microsecond: the stream is written into the interface dict just read (torch builds a
 * new one each read) as a version-3 producer would, 0 (the legacy default stream) as the
 * protocol's 1, and the call waits for it as for any producer's stream. 1 when done (p->device
 * set), 0 where o is not a torch tensor or this torch lacks the entry (DLPack then), with no
 * exception either way. */
static PyObject *s_str_torch, *s_torch_tensor, *s_torch_raw_stream;
static int s_torch_looked;

static int torch_stream_into(cuda_probe *p, PyObject *o)
{
    if (!s_torch_looked) {
        if (!s_str_torch && !(s_str_torch = PyUnicode_InternFromString("torch"))) {
            PyErr_Clear();
            return 0;
        }
        PyObject *torch = PyImport_GetModule(s_str_torch);
        if (!torch) {
            PyErr_Clear();
            return 0;   /* not imported yet: asked again next call */
        }
        s_torch_looked = 1;
        s_torch_tensor = PyObject_GetAttrString(torch, "Tensor");
        PyObject *c = s_torch_tensor ? PyObject_GetAttrString(torch, "_C") : NULL;
        s_torch_raw_stream = c ? PyObject_GetAttrString(c, "_cuda_getCurrentRawStream") : NULL;
        Py_XDECREF(c);
        Py_DECREF(torch);
        PyErr_Clear();
    }
    if (!s_torch_raw_stream || !PyType_Check(s_torch_tensor) ||
        PyObject_IsInstance(o, s_torch_tensor) != 1) {
        PyErr_Clear();
        return 0;
    }
    const int dev = array_cuda_device(o);
    if (dev < 0)
        return 0;
    PyObject *raw = PyObject_CallFunction(s_torch_raw_stream, "i", dev);
    void *h = raw ? PyLong_AsVoidPtr(raw) : NULL;
    const int ok = raw && !PyErr_Occurred();
    Py_XDECREF(raw);
    PyObject *v = ok ? PyLong_FromVoidPtr(h ? h : (void *)1) : NULL;
    if (!v || PyDict_SetItemString(p->cai, "stream", v) < 0) {
        Py_XDECREF(v);
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(v);
    p->device = dev;
    return 1;
}

/* What o is: 0 (p filled: PROBE_HOST for anything not a CUDA array), or -1 with an exception. */
static int probe_array(cuda_probe *p, PyObject *o)
{
    p->kind = PROBE_HOST;
    p->cai = NULL;
    p->device = -1;
    if (Py_IS_TYPE(o, &ArrayType)) {
        p->kind = PROBE_ARRAY;
        p->device = array_device_of(o);
        return 0;
    }
    if ((p->cai = attr_or_null(o, &s_str_cai, "__cuda_array_interface__")) != NULL) {
        /* An interface without a "stream" key (version 2, as torch's) says nothing of the stream
         * that wrote the data, so a call without stream= could not be ordered after the caller's
         * current stream: such an object that also speaks DLPack is taken through DLPack, whose
         * producer orders its current stream before the stream imgpu names (issue 27). A "stream"
         * key, None included (the v3 rule: no synchronization needed), keeps the interface. */
        if (!PyDict_Check(p->cai) || PyDict_GetItemString(p->cai, "stream") ||
            torch_stream_into(p, o) || !PyObject_HasAttrString(o, "__dlpack__")) {
            p->kind = PROBE_CAI;
            return 0;
        }
        Py_CLEAR(p->cai);
    }
    if (PyObject_CheckBuffer(o) || !PyObject_HasAttrString(o, "__dlpack__"))
        return 0;
    int type, id;
    if (dlpack_device_of(o, &type, &id) < 0)
        return -1;
    if (type == kDLCUDA || type == kDLCUDAManaged) {
        p->kind = PROBE_DLPACK;
        p->device = id >= 0 && id < MAX_ORDINALS ? id : -1;
    }
    return 0;
}

/* The context a call on a CUDA array runs on: the one given, else the one of the array's own
 * device (the default context when that is the default device). NULL with an exception. */
static imgpu_context *context_for_array(PyObject *array, const cuda_probe *pr, imgpu_context *given)
{
    if (given)
        return given;
    const int id = pr->kind == PROBE_CAI && pr->device < 0 ? array_cuda_device(array) : pr->device;
    imgpu_context *d = device_context(NULL);
    if (id < 0 || !d)
        return d;
    int def = -1, rc;
    Py_BEGIN_ALLOW_THREADS
    rc = imgpu_context_cuda_device(d, &def);
    Py_END_ALLOW_THREADS
    if (rc < 0 || def == id)
        return d;   /* (no GPU: the call reports it) */
    return ordinal_context(id);
}

/* ---- keeping inputs alive ----------------------------------------------------------------------- */

typedef struct pending {
    imgpu_device_event *done;
    PyObject *keep[3];
} pending;
static pending *s_pending;
static size_t s_npending, s_cap_pending;

/* Releases what the finished work held (the GIL held). */
static void pending_reap(int wait_all)
{
    size_t k = 0;
    for (size_t i = 0; i < s_npending; i++) {
        pending *p = &s_pending[i];
        int q = wait_all ? (imgpu_device_event_wait(p->done) == 0 ? 1 : -1) : imgpu_device_event_query(p->done);
        if (q != 0) {   /* done (or the device failed: nothing will read them any more) */
            imgpu_device_event_free(p->done);
            for (int j = 0; j < 3; j++)
                Py_XDECREF(p->keep[j]);
        } else {
            s_pending[k++] = *p;
        }
    }
    s_npending = k;
}

/* Holds a, b, c (new references taken) until `done` completes; consumes done. */
static int pending_add(imgpu_device_event *done, PyObject *a, PyObject *b, PyObject *c)
{
    if (s_npending == s_cap_pending) {
        size_t cap = s_cap_pending ? 2 * s_cap_pending : 16;
        pending *v = realloc(s_pending, cap * sizeof *v);
        if (!v) {   /* no room to remember: wait for the work instead */
            imgpu_device_event_wait(done);
            imgpu_device_event_free(done);
            return 0;
        }
        s_pending = v;
        s_cap_pending = cap;
    }
    pending *p = &s_pending[s_npending++];
    p->done = done;
    p->keep[0] = Py_XNewRef(a);
    p->keep[1] = Py_XNewRef(b);
    p->keep[2] = Py_XNewRef(c);
    return 0;
}

/* ---- streams ------------------------------------------------------------------------------------ */

/* stream= -> *handle; 0 none given (*given = 0), -1 TypeError. */
static int parse_stream(PyObject *o, void **handle, int *given)
{
    *handle = NULL;
    *given = 0;
    if (!o || o == Py_None)
        return 0;
    PyObject *v = NULL;
    if (PyLong_Check(o)) {
        v = Py_NewRef(o);
    } else if (PyObject_HasAttrString(o, "__cuda_stream__")) {
        PyObject *t = PyObject_CallMethod(o, "__cuda_stream__", NULL);
        if (!t)
            return -1;
        if (PyTuple_Check(t) && PyTuple_GET_SIZE(t) == 2)
            v = Py_NewRef(PyTuple_GET_ITEM(t, 1));
        Py_DECREF(t);
    } else if (PyObject_HasAttrString(o, "cuda_stream")) {
        v = PyObject_GetAttrString(o, "cuda_stream");
        if (!v)
            return -1;
    }
    if (!v || !PyLong_Check(v)) {
        Py_XDECREF(v);
        PyErr_Format(PyExc_TypeError, "stream= takes an int handle or an object with __cuda_stream__ or "
                     ".cuda_stream, not %.100s", Py_TYPE(o)->tp_name);
        return -1;
    }
    *handle = PyLong_AsVoidPtr(v);
    Py_DECREF(v);
    if (!*handle && PyErr_Occurred())
        return -1;
    *given = 1;
    return 0;
}

/* ---- CUDA arrays in ----------------------------------------------------------------------------- */

typedef struct dev_in {
    imgpu_device_image im;   /* a view (owns 0) */
    PyObject *keep;          /* the object or the DLPack capsule */
    void *wait_stream;       /* CAI: the producer's stream to wait for; else the stream used */
    int have_wait;
} dev_in;

static void dev_in_release(dev_in *d) { Py_CLEAR(d->keep); }

/* 1 when o is a CUDA array (CAI, or DLPack on a CUDA device), 0 not, -1 error. */
static int is_cuda_array(PyObject *o)
{
    cuda_probe p;
    if (probe_array(&p, o) < 0)
        return -1;
    probe_release(&p);
    return p.kind != PROBE_HOST;
}

/* The device image over a tensor's memory: interleaved rows of any stride, or TypeError. */
static int dev_describe(dev_in *d, const char *what, void *data, int ndim, const Py_ssize_t *shape,
                        const Py_ssize_t *strides, int isz, int device)
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
    const Py_ssize_t row = w * c * isz;
    const Py_ssize_t s0 = strides ? strides[0] : row, s1 = strides ? strides[1] : c * isz;
    const Py_ssize_t s2 = strides && ndim == 3 ? strides[2] : isz;
    if ((c > 1 && s2 != isz) || (w > 1 && s1 != c * isz) || (h > 1 && s0 < row) ||
        (isz == 2 && (((uintptr_t)data & 1) || (h > 1 && (s0 & 1))))) {
        PyErr_Format(PyExc_TypeError, "%s: a CUDA array whose rows are not interleaved pixels (strides %zd, %zd, "
                     "%zd bytes): imgpu takes rows of interleaved pixels with any row stride "
                     "(make it contiguous first)", what, s0, s1, s2);
        return -1;
    }
    d->im = (imgpu_device_image){data, (int)w, (int)h, (int)c, isz * 8, h > 1 ? (size_t)s0 : (size_t)row,
                                 device, 0, NULL};
    return 0;
}

/* From the __cuda_array_interface__ dict ai (read by probe_array; not consumed). */
static int dev_from_cai(dev_in *d, PyObject *o, PyObject *ai, const char *what)
{
    int rc = -1;
    PyObject *shape = PyDict_Check(ai) ? PyDict_GetItemString(ai, "shape") : NULL;
    PyObject *typestr = PyDict_Check(ai) ? PyDict_GetItemString(ai, "typestr") : NULL;
    PyObject *data = PyDict_Check(ai) ? PyDict_GetItemString(ai, "data") : NULL;
    PyObject *strides = PyDict_Check(ai) ? PyDict_GetItemString(ai, "strides") : NULL;
    PyObject *stream = PyDict_Check(ai) ? PyDict_GetItemString(ai, "stream") : NULL;
    PyObject *mask = PyDict_Check(ai) ? PyDict_GetItemString(ai, "mask") : NULL;
    const char *ts = typestr && PyUnicode_Check(typestr) ? PyUnicode_AsUTF8(typestr) : NULL;
    int isz = 0;
    if (ts && (!strcmp(ts, "|u1") || !strcmp(ts, "<u1") || !strcmp(ts, ">u1")))
        isz = 1;
    else if (ts && (!strcmp(ts, "<u2") || !strcmp(ts, "=u2")))
        isz = 2;
    Py_ssize_t sh[4], st[4];
    int nd = 0, ns = 0;
    if (!shape || !data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) {
        PyErr_Format(PyExc_TypeError, "%s: __cuda_array_interface__ without shape or data", what);
        goto done;
    }
    if (mask && mask != Py_None) {
        PyErr_Format(PyExc_TypeError, "%s: masked CUDA arrays are not supported", what);
        goto done;
    }
    if (!isz) {
        PyErr_Format(PyExc_TypeError, "%s: unsupported dtype '%s': imgpu takes uint8 and uint16", what, ts ? ts : "?");
        goto done;
    }
    if (tuple_ssize(shape, sh, 4, &nd) < 0 ||
        (strides && strides != Py_None && (tuple_ssize(strides, st, 4, &ns) < 0 || ns != nd))) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "%s: an image is a 2-D (H, W) or 3-D (H, W, C) array", what);
        goto done;
    }
    void *p = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
    if (!p) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__ data pointer is NULL", what);
        goto done;
    }
    if (stream && stream != Py_None) {
        d->wait_stream = PyLong_AsVoidPtr(stream);
        if (PyErr_Occurred())
            goto done;
        d->have_wait = 1;
    }
    if (dev_describe(d, what, p, nd, sh, ns ? st : NULL, isz, -1) < 0)
        goto done;
    d->keep = Py_NewRef(o);
    rc = 0;
done:
    return rc;
}

static int dev_from_dlpack(dev_in *d, PyObject *o, const char *what, void *for_stream)
{
    /* DLPack: 1 is the legacy default stream (0 is not a value of the protocol) */
    PyObject *kw = Py_BuildValue("{s:N}", "stream", PyLong_FromVoidPtr(for_stream ? for_stream : (void *)1));
    PyObject *meth = kw ? PyObject_GetAttrString(o, "__dlpack__") : NULL;
    PyObject *empty = meth ? PyTuple_New(0) : NULL;
    PyObject *cap = empty ? PyObject_Call(meth, empty, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(meth);
    Py_XDECREF(empty);
    if (!cap)
        return -1;
    d->keep = cap;
    DLManagedTensor *t = PyCapsule_GetPointer(cap, "dltensor");
    if (!t)
        return -1;
    const DLTensor *x = &t->dl_tensor;
    if (x->device.device_type != kDLCUDA && x->device.device_type != kDLCUDAManaged) {
        PyErr_Format(PyExc_TypeError, "%s: a DLPack tensor on device type %d", what, x->device.device_type);
        return -1;
    }
    int isz;
    Py_ssize_t sh[3], st[3];
    if (dl_layout(x, what, sh, st, &isz) < 0)   /* _imgpu.c */
        return -1;
    return dev_describe(d, what, (unsigned char *)x->data + x->byte_offset, x->ndim, sh, x->strides ? st : NULL,
                        isz, x->device.device_id);
}

static int dev_from_array(dev_in *d, PyObject *o);   /* an imgpu.Array (below) */

/* A CUDA array probed as pr (probe_array) as a device image. for_stream: the stream a DLPack
 * producer is to order for. */
static int dev_get_probed(dev_in *d, PyObject *o, const cuda_probe *pr, const char *what, void *for_stream)
{
    memset(d, 0, sizeof *d);
    int rc = pr->kind == PROBE_ARRAY ? dev_from_array(d, o)
           : pr->kind == PROBE_CAI   ? dev_from_cai(d, o, pr->cai, what)
                                     : dev_from_dlpack(d, o, what, for_stream);
    if (rc < 0)
        dev_in_release(d);
    else if (d->im.device < 0 && pr->device >= 0)
        d->im.device = pr->device;   /* an interface names no device; the probe found it (torch's) */
    return rc;
}

/* Any CUDA array as a device image. */
static int dev_get(dev_in *d, PyObject *o, const char *what, void *for_stream)
{
    cuda_probe pr;
    if (probe_array(&pr, o) < 0)
        return -1;
    const int rc = dev_get_probed(d, o, &pr, what, for_stream);
    probe_release(&pr);
    return rc;
}

/* ---- imgpu.Array: a result in device memory ------------------------------------------------------ */

#define MAX_EXPORT_STREAMS 8

typedef struct ArrayObject {
    PyObject_HEAD
    imgpu_device_image *im;
    imgpu_device_event *ready;   /* the work that wrote it (NULL: ready) */
    PyObject *ctx_obj;           /* the Context it came from (kept open), or NULL */
    void *export_streams[MAX_EXPORT_STREAMS];
    int nexport;
    int export_unknown;          /* handed to a reader whose stream is unknown: free after all work */
    Py_ssize_t exports;          /* live DLPack capsules */
} ArrayObject;

static int array_device_of(PyObject *o) { return ((ArrayObject *)o)->im->device; }

/* An imgpu.Array read in place, as its __cuda_array_interface__ describes it (the stream that
 * wrote it waited for while that work may be pending), but without the getter: reading that
 * marks the array as handed to a reader of unknown stream, whose memory is then freed only
 * after a device-wide synchronization. Here the reader is known: the call keeps the array
 * alive (pending_add) until its work is done. */
static int dev_from_array(dev_in *d, PyObject *o)
{
    const ArrayObject *a = (const ArrayObject *)o;
    d->im = *a->im;
    d->im.owns = 0;
    d->im.internal = NULL;
    if (a->ready && a->im->internal) {
        d->wait_stream = a->im->internal;
        d->have_wait = 1;
    }
    d->keep = Py_NewRef(o);
    return 0;
}

static PyObject *array_new(imgpu_device_image *im, imgpu_device_event *ready, PyObject *ctx_obj)
{
    ArrayObject *a = PyObject_New(ArrayObject, &ArrayType);
    if (!a) {
        imgpu_device_image_free(im, NULL, -1);
        imgpu_device_event_free(ready);
        return NULL;
    }
    a->im = im;
    a->ready = ready;
    a->ctx_obj = Py_XNewRef(ctx_obj);
    if (ctx_obj)
        ((ContextObject *)ctx_obj)->narrays++;
    a->nexport = 0;
    a->export_unknown = 0;
    a->exports = 0;
    return (PyObject *)a;
}

static void Array_dealloc(ArrayObject *self)
{
    if (self->im)
        imgpu_device_image_free(self->im, self->export_streams, self->export_unknown ? -1 : self->nexport);
    imgpu_device_event_free(self->ready);
    if (self->ctx_obj) {
        ContextObject *c = (ContextObject *)self->ctx_obj;
        if (--c->narrays == 0 && c->held) {   /* closed while this array lived: now it goes */
            imgpu_context_destroy(c->held);
            c->held = NULL;
        }
    }
    Py_XDECREF(self->ctx_obj);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A consumer will use the array on `stream` (DLPack values: 1 legacy default, 2 per-thread,
 * -1 no synchronization, other: a handle). */
static int array_export_to(ArrayObject *self, PyObject *stream)
{
    long long s = 1;
    if (stream && stream != Py_None) {
        s = PyLong_AsLongLong(stream);
        if (s == -1 && PyErr_Occurred())
            return -1;
    }
    if (s == -1) {
        self->export_unknown = 1;
        return 0;
    }
    if (s == 0) {
        PyErr_SetString(PyExc_ValueError, "__dlpack__: stream=0 is ambiguous for CUDA (use 1 or 2)");
        return -1;
    }
    void *h = (void *)(intptr_t)s;
    if (self->ready && imgpu_device_event_order(self->ready, h) < 0) {
        raise_imgpu("cannot order the consumer's stream");
        return -1;
    }
    if (self->nexport < MAX_EXPORT_STREAMS)
        self->export_streams[self->nexport++] = h;
    else
        self->export_unknown = 1;
    return 0;
}

static void dl_fill(ArrayObject *self, DLTensor *t, int64_t *shape, int64_t *strides)
{
    const imgpu_device_image *im = self->im;
    const int isz = im->depth / 8;
    t->data = im->data;
    t->device.device_type = kDLCUDA;
    t->device.device_id = im->device;
    t->ndim = im->channels == 1 ? 2 : 3;
    t->dtype.code = kDLUInt;
    t->dtype.bits = (uint8_t)im->depth;
    t->dtype.lanes = 1;
    shape[0] = im->height;
    shape[1] = im->width;
    shape[2] = im->channels;
    strides[0] = (int64_t)(im->stride / (size_t)isz);
    strides[1] = im->channels;
    strides[2] = 1;
    t->shape = shape;
    t->strides = strides;
    t->byte_offset = 0;
}

typedef struct dl_holder {
    DLManagedTensor m;
    DLManagedTensorVersioned v;
    int64_t shape[3], strides[3];
    ArrayObject *owner;
} dl_holder;

static void dl_release(dl_holder *h)
{
    PyGILState_STATE g = PyGILState_Ensure();
    h->owner->exports--;
    Py_DECREF(h->owner);
    PyGILState_Release(g);
    free(h);
}

static void dl_deleter(DLManagedTensor *m) { dl_release((dl_holder *)m->manager_ctx); }
static void dl_deleter_v(DLManagedTensorVersioned *v) { dl_release((dl_holder *)v->manager_ctx); }

static void capsule_destructor(PyObject *cap)
{
    if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
        m->deleter(m);
    } else if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        DLManagedTensorVersioned *v = PyCapsule_GetPointer(cap, "dltensor_versioned");
        v->deleter(v);
    }
    PyErr_Clear();
}

static PyObject *run_copy(ArrayObject *self);

static PyObject *Array_dlpack(ArrayObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO:__dlpack__", kwlist, &stream, &max_version, &dl_device, &copy))
        return NULL;
    if (dl_device != Py_None) {
        long t = -1, id = -1;
        if (PyTuple_Check(dl_device) && PyTuple_GET_SIZE(dl_device) == 2) {
            t = PyLong_AsLong(PyTuple_GET_ITEM(dl_device, 0));
            id = PyLong_AsLong(PyTuple_GET_ITEM(dl_device, 1));
        }
        if (PyErr_Occurred())
            return NULL;
        if (t != kDLCUDA || id != self->im->device)
            return PyErr_Format(PyExc_BufferError, "imgpu.Array lives on (%d, %d): it cannot be exported to "
                                "device %R", kDLCUDA, self->im->device, dl_device);
    }
    if (copy == Py_True) {   /* a copy on the device, exported instead */
        PyObject *c = run_copy(self);
        if (!c)
            return NULL;
        PyObject *a = PyTuple_New(0), *k = Py_BuildValue("{s:O,s:O}", "stream", stream, "max_version", max_version);
        PyObject *r = a && k ? Array_dlpack((ArrayObject *)c, a, k) : NULL;
        Py_XDECREF(a);
        Py_XDECREF(k);
        Py_DECREF(c);
        return r;
    }
    if (array_export_to(self, stream) < 0)
        return NULL;
    int versioned = 0;
    if (max_version != Py_None) {
        if (!PyTuple_Check(max_version) || PyTuple_GET_SIZE(max_version) < 1)
            return PyErr_Format(PyExc_TypeError, "max_version must be a (major, minor) tuple");
        long major = PyLong_AsLong(PyTuple_GET_ITEM(max_version, 0));
        if (major == -1 && PyErr_Occurred())
            return NULL;
        versioned = major >= 1;
    }
    dl_holder *h = calloc(1, sizeof *h);
    if (!h)
        return PyErr_NoMemory();
    h->owner = (ArrayObject *)Py_NewRef(self);
    self->exports++;
    PyObject *cap;
    if (versioned) {
        h->v.version.major = 1;
        h->v.version.minor = 0;
        h->v.manager_ctx = h;
        h->v.deleter = dl_deleter_v;
        dl_fill(self, &h->v.dl_tensor, h->shape, h->strides);
        cap = PyCapsule_New(&h->v, "dltensor_versioned", capsule_destructor);
    } else {
        h->m.manager_ctx = h;
        h->m.deleter = dl_deleter;
        dl_fill(self, &h->m.dl_tensor, h->shape, h->strides);
        cap = PyCapsule_New(&h->m, "dltensor", capsule_destructor);
    }
    if (!cap) {
        self->exports--;
        Py_DECREF(self);
        free(h);
    }
    return cap;
}

static PyObject *Array_dlpack_device(ArrayObject *self, PyObject *unused)
{
    (void)unused;
    return Py_BuildValue("(ii)", kDLCUDA, self->im->device);
}

static PyObject *Array_cai(ArrayObject *self, void *unused)
{
    (void)unused;
    const imgpu_device_image *im = self->im;
    const size_t row = (size_t)im->width * im->channels * (im->depth / 8);
    PyObject *shape = im->channels == 1 ? Py_BuildValue("(ii)", im->height, im->width)
                                        : Py_BuildValue("(iii)", im->height, im->width, im->channels);
    PyObject *strides = im->stride == row ? Py_NewRef(Py_None)
        : im->channels == 1 ? Py_BuildValue("(nn)", (Py_ssize_t)im->stride, (Py_ssize_t)(im->depth / 8))
                            : Py_BuildValue("(nnn)", (Py_ssize_t)im->stride, (Py_ssize_t)(im->channels * im->depth / 8),
                                            (Py_ssize_t)(im->depth / 8));
    /* the consumer waits for the stream the result was written on (the context's private one);
     * who reads it afterwards, and on which stream, is unknown: freed after all work */
    PyObject *stream = self->ready && im->internal ? PyLong_FromVoidPtr(im->internal) : Py_NewRef(Py_None);
    self->export_unknown = 1;
    return Py_BuildValue("{s:N,s:s,s:(NO),s:N,s:i,s:N}", "shape", shape, "typestr", im->depth == 16 ? "<u2" : "|u1",
                         "data", PyLong_FromVoidPtr(im->data), Py_False, "strides", strides, "version", 3, "stream",
                         stream);
}

static PyObject *Array_get_shape(ArrayObject *self, void *unused)
{
    (void)unused;
    const imgpu_device_image *im = self->im;
    return im->channels == 1 ? Py_BuildValue("(ii)", im->height, im->width)
                             : Py_BuildValue("(iii)", im->height, im->width, im->channels);
}

static PyObject *Array_get_dtype(ArrayObject *self, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(self->im->depth == 16 ? "uint16" : "uint8");
}

static PyObject *Array_get_device(ArrayObject *self, void *unused)
{
    (void)unused;
    return PyUnicode_FromFormat("cuda:%d", self->im->device);
}

static PyObject *Array_get_ptr(ArrayObject *self, void *unused)
{
    (void)unused;
    return PyLong_FromVoidPtr(self->im->data);
}

/* numpy(): a host copy (waits for the work). */
/* The context an imgpu.Array's own work (numpy(), a copy) runs on: its Context's, else that of
 * the GPU it lives on (the default context when that is the default device). NULL with an
 * exception or a message. */
static imgpu_context *array_context(ArrayObject *self)
{
    imgpu_context *c = context_of_arrays(self->ctx_obj);
    if (c)
        return c;
    imgpu_context *d = device_context(NULL);
    const int id = self->im ? self->im->device : -1;
    int def = -1, rc;
    if (!d || id < 0)
        return d;
    Py_BEGIN_ALLOW_THREADS
    rc = imgpu_context_cuda_device(d, &def);
    Py_END_ALLOW_THREADS
    return rc < 0 || def == id ? d : ordinal_context(id);
}

static PyObject *Array_numpy(ArrayObject *self, PyObject *unused)
{
    (void)unused;
    imgpu_context *ctx = array_context(self);
    imgpu_image *h = NULL;
    int rc;
    if (!ctx)
        return raise_imgpu("no context");
    Py_BEGIN_ALLOW_THREADS
    rc = (self->ready ? imgpu_device_event_wait(self->ready) : 0) == 0 ? imgpu_context_download(ctx, self->im, NULL, &h)
                                                                        : -1;
    Py_END_ALLOW_THREADS
    if (rc < 0)
        return raise_imgpu("cannot copy the array to the host");
    return image_to_numpy(h);
}

static PyObject *Array_synchronize(ArrayObject *self, PyObject *unused)
{
    (void)unused;
    int rc = 0;
    Py_BEGIN_ALLOW_THREADS
    rc = self->ready ? imgpu_device_event_wait(self->ready) : 0;
    Py_END_ALLOW_THREADS
    if (rc < 0)
        return raise_imgpu("the GPU work failed");
    Py_RETURN_NONE;
}

static PyObject *Array_repr(ArrayObject *self)
{
    const imgpu_device_image *im = self->im;
    return PyUnicode_FromFormat("imgpu.Array(shape=(%d, %d%s), dtype=%s, device='cuda:%d')", im->height, im->width,
                                im->channels == 1 ? "" : im->channels == 2 ? ", 2" : im->channels == 3 ? ", 3" : ", 4",
                                im->depth == 16 ? "uint16" : "uint8", im->device);
}

static PyMethodDef Array_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))Array_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None): a DLPack capsule (no copy)."},
    {"__dlpack_device__", (PyCFunction)Array_dlpack_device, METH_NOARGS, "(kDLCUDA, device id)"},
    {"numpy", (PyCFunction)Array_numpy, METH_NOARGS, "A host copy as a numpy array (waits for the GPU)."},
    {"synchronize", (PyCFunction)Array_synchronize, METH_NOARGS, "Wait until the work that writes it is done."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Array_getset[] = {
    {"__cuda_array_interface__", (getter)Array_cai, NULL, "CUDA Array Interface v3 (no copy)", NULL},
    {"shape", (getter)Array_get_shape, NULL, "(H, W) or (H, W, C)", NULL},
    {"dtype", (getter)Array_get_dtype, NULL, "'uint8' or 'uint16'", NULL},
    {"device", (getter)Array_get_device, NULL, "'cuda:N'", NULL},
    {"data_ptr", (getter)Array_get_ptr, NULL, "the device pointer (int)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ArrayType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "imgpu.Array",
    .tp_basicsize = sizeof(ArrayObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An image in CUDA device memory (a result of an op on a CUDA array): hand it to "
              "torch.from_dlpack or cupy.asarray without a copy; numpy() copies it to the host.",
    .tp_dealloc = (destructor)Array_dealloc,
    .tp_repr = (reprfunc)Array_repr,
    .tp_methods = Array_methods,
    .tp_getset = Array_getset,
};

/* ---- running on device arrays --------------------------------------------------------------------- */

/* ops on a CUDA array: an imgpu.Array, or `out` (a CUDA array written in place). */
/* Work enqueued on `stream` from now on waits for what is enqueued on `after` so far (both
 * streams of CUDA device `device`, recorded there whatever the thread's device; CAI's 1, the
 * legacy default stream, as is). 0, or -1 with a message. */
static int order_after(void *stream, void *after, int device)
{
    imgpu_device_event *e = imgpu_device_event_record_on(device, after);
    const int rc = e ? imgpu_device_event_order(e, stream) : -1;
    imgpu_device_event_free(e);
    return rc;
}

static PyObject *run_ops_device(PyObject *array, const cuda_probe *pr, const imgpu_op *ops, int n,
                                imgpu_context *given, PyObject *ctx_obj, PyObject *out, PyObject *stream_obj)
{
    void *stream;
    int given_stream;
    if (parse_stream(stream_obj, &stream, &given_stream) < 0)
        return NULL;
    imgpu_context *ctx = context_for_array(array, pr, given);
    if (!ctx)
        return PyErr_Occurred() ? NULL : raise_imgpu("cannot create a context");
    pending_reap(0);
    void *priv = NULL;
    int dev = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = imgpu_context_cuda_device(ctx, &dev);
    if (rc == 0)
        priv = imgpu_context_cuda_stream(ctx);
    Py_END_ALLOW_THREADS
    if (rc < 0 || !priv)
        return PyErr_Format(s_Error, "input: a CUDA array, but CUDA not available (%s)", imgpu_error_message());
    dev_in in, ov;
    memset(&ov, 0, sizeof ov);
    if (dev_get_probed(&in, array, pr, "input", given_stream ? stream : priv) < 0)
        return NULL;
    if (in.im.device < 0)
        in.im.device = dev;   /* CAI says no device: the current one */
    /* the stream the work is ordered after: stream=, else a CAI producer's, else ours */
    void *order = given_stream ? stream : in.have_wait ? in.wait_stream : priv;
    if (given_stream && in.have_wait && in.wait_stream != stream &&   /* both: ours waits for the */
        order_after(stream, in.wait_stream, in.im.device) < 0) {       /* CAI producer's too */
        dev_in_release(&in);
        return raise_imgpu("cannot order the streams");
    }
    if (in.have_wait && (intptr_t)order == 1)
        order = NULL;   /* CAI's 1: the legacy default stream */
    imgpu_ops_for_image((imgpu_op *)ops, n, imgpu_image_color_channels(&(imgpu_image){.channels = in.im.channels}));
    imgpu_device_image *res = NULL;
    imgpu_device_event *done = NULL;
    if (out && out != Py_None) {
        if (dev_get(&ov, out, "out=", given_stream ? stream : priv) < 0) {
            dev_in_release(&in);
            return NULL;
        }
        if (ov.im.device < 0)
            ov.im.device = dev;
        /* out='s producer (a torch tensor: torch's current stream) finishes with it first: the
         * private stream, where the op runs, waits for it (the caller's streams are left alone) */
        if (ov.have_wait && ov.wait_stream != order && ov.wait_stream != priv &&
            order_after(priv, ov.wait_stream, ov.im.device) < 0) {
            dev_in_release(&in);
            dev_in_release(&ov);
            return raise_imgpu("cannot order the streams");
        }
        Py_BEGIN_ALLOW_THREADS
        rc = imgpu_context_run_device_into(ctx, &in.im, ops, n, order, &ov.im, &done);
        if (rc == 0 && !given_stream)
            rc = imgpu_device_event_wait(done);   /* no consumer stream known: out= is complete on return */
        Py_END_ALLOW_THREADS
    } else {
        Py_BEGIN_ALLOW_THREADS
        rc = imgpu_context_run_device(ctx, &in.im, ops, n, order, &res, &done);
        Py_END_ALLOW_THREADS
    }
    if (rc < 0) {
        dev_in_release(&in);
        dev_in_release(&ov);
        imgpu_device_event_free(done);
        const char *m = imgpu_error_message();
        if (strstr(m, "invalid") || strstr(m, "out of range"))
            return PyErr_Format(PyExc_ValueError, "%s", m);
        return raise_imgpu("the op failed on the GPU");
    }
    PyObject *result;
    if (res) {
        /* the result's own readiness: a second event would do; `done` marks the same work */
        imgpu_device_event *ready = imgpu_device_event_record(priv);
        result = array_new(res, ready, ctx_obj);
    } else {
        result = Py_NewRef(out);
    }
    pending_add(done, in.keep, ov.keep, NULL);
    dev_in_release(&in);
    dev_in_release(&ov);
    return result;
}

/* histogram() of a CUDA array: counted on its GPU (imgpu_context_histogram_device), after the
 * work on stream= (else the array's producer's, else ours); *h is complete on return. */
static int histogram_device(PyObject *array, const cuda_probe *pr, imgpu_context *given, PyObject *stream_obj,
                            imgpu_histogram_full *h)
{
    void *stream;
    int given_stream;
    if (parse_stream(stream_obj, &stream, &given_stream) < 0)
        return -1;
    imgpu_context *ctx = context_for_array(array, pr, given);
    if (!ctx) {
        if (!PyErr_Occurred())
            raise_imgpu("cannot create a context");
        return -1;
    }
    void *priv = NULL;
    int dev = 0, rc;
    Py_BEGIN_ALLOW_THREADS
    rc = imgpu_context_cuda_device(ctx, &dev);
    if (rc == 0)
        priv = imgpu_context_cuda_stream(ctx);
    Py_END_ALLOW_THREADS
    if (rc < 0 || !priv) {
        PyErr_Format(s_Error, "input: a CUDA array, but CUDA not available (%s)", imgpu_error_message());
        return -1;
    }
    dev_in in;
    if (dev_get_probed(&in, array, pr, "input", given_stream ? stream : priv) < 0)
        return -1;
    if (in.im.device < 0)
        in.im.device = dev;
    void *order = given_stream ? stream : in.have_wait ? in.wait_stream : priv;
    if (in.have_wait && (intptr_t)order == 1)
        order = NULL;   /* CAI's 1: the legacy default stream */
    Py_BEGIN_ALLOW_THREADS
    rc = imgpu_context_histogram_device(ctx, &in.im, order, h);
    Py_END_ALLOW_THREADS
    dev_in_release(&in);
    if (rc < 0) {
        raise_imgpu("histogram failed on the GPU");
        return -1;
    }
    return 0;
}

/* imgpu.Array n == 0 copy (for __dlpack__(copy=True)). */
static PyObject *run_copy(ArrayObject *self)
{
    imgpu_context *ctx = array_context(self);
    imgpu_device_image *res = NULL;
    imgpu_device_event *done = NULL;
    void *priv = ctx ? imgpu_context_cuda_stream(ctx) : NULL;
    if (!priv)
        return raise_imgpu("no GPU");
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = imgpu_context_run_device(ctx, self->im, NULL, 0, priv, &res, &done);
    Py_END_ALLOW_THREADS
    if (rc < 0)
        return raise_imgpu("cannot copy the array");
    pending_add(done, (PyObject *)self, NULL, NULL);
    return array_new(res, imgpu_device_event_record(priv), self->ctx_obj);
}
