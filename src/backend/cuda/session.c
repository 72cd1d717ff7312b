/* session.c — the CUDA backend's side of the session door (src/backend/session.h): thin wrappers over
 * the backend's sessions (pipeline.c), device choice (devices.c) and nvJPEG coder (jpeg.c) that
 * keep the stream and the device pointers on this side, and the one place that says what a
 * failed call means for its image (out of memory -> the CPU; a sticky fault already reported ->
 * the CPU; anything else fails the image). A session remembers its last run's result so that the
 * JPEG encoder can take it without the front end holding a device pointer.
 */
#include "session.h"

#include <stdlib.h>

#include "error.h"
#include "cuda_backend.h"
#include "devices.h"

struct imgpu_session {
    imgpu_cuda_session *cs;
    const unsigned char *d_result;   /* the last run's result; NULL after an upload */
    int w, h, c;
};

/* ---- the device ---------------------------------------------------------------------------- */

int imgpu_session_built_in(void) { return 1; }

int imgpu_session_available(void) { return imgpu_cuda_available(); }

int imgpu_session_device_count(void) { return imgpu_cuda_device_count(); }

int imgpu_session_default_device(void) { return imgpu_cuda_default_device(); }

int imgpu_session_use_device(int dev) { return imgpu_cuda_use_device(dev); }

/* ---- sessions ------------------------------------------------------------------------------ */

imgpu_session *imgpu_session_new(void)
{
    imgpu_session *s = calloc(1, sizeof *s);
    if (!s) {
        imgpu_error("out of memory");
        return NULL;
    }
    if (!(s->cs = imgpu_cuda_session_new())) {
        free(s);
        return NULL;
    }
    return s;
}

void imgpu_session_free(imgpu_session *s)
{
    if (!s)
        return;
    imgpu_cuda_session_free(s->cs);
    free(s);
}

int imgpu_session_upload(imgpu_session *s, const imgpu_image *in)
{
    s->d_result = NULL;
    return imgpu_cuda_session_upload(s->cs, in);
}

int imgpu_session_run(imgpu_session *s, const imgpu_op *ops, int n, int *w, int *h, int *channels)
{
    s->d_result = NULL;
    int rc = imgpu_cuda_session_run(s->cs, ops, n, &s->d_result, &s->w, &s->h, &s->c);
    if (rc)
        return rc;
    if (w)
        *w = s->w;
    if (h)
        *h = s->h;
    if (channels)
        *channels = s->c;
    return 0;
}

int imgpu_session_download(imgpu_session *s, imgpu_image **out) { return imgpu_cuda_session_download(s->cs, out); }

void imgpu_session_wait(imgpu_session *s) { cudaStreamSynchronize(imgpu_cuda_session_stream(s->cs)); }

/* ---- what a failure means ------------------------------------------------------------------ */

imgpu_session_verdict imgpu_session_failure(int rc, imgpu_device device, atomic_int *sticky_seen)
{
    if (rc == IMGPU_CUDA_OOM && device != IMGPU_DEVICE_CUDA)
        return IMGPU_SESSION_TO_CPU;
    /* the first sticky report fails its image; every later one (in any thread) met the dead
     * context with an innocent image */
    if (rc == IMGPU_CUDA_STICKY && sticky_seen && atomic_exchange(sticky_seen, 1))
        return IMGPU_SESSION_INNOCENT;
    return IMGPU_SESSION_FAULT;
}

/* ---- nvJPEG -------------------------------------------------------------------------------- */
#ifdef IMGPU_HAVE_NVJPEG
int imgpu_session_jpeg_built_in(void) { return 1; }

_Static_assert(IMGPU_SESSION_JPEG_BATCH == IMGPU_JPEG_BATCH, "the door's JPEG batch is jpeg.c's");
_Static_assert((int)IMGPU_SESSION_JPEG_CPU == (int)IMGPU_JPEG_CPU && (int)IMGPU_SESSION_JPEG_HW == (int)IMGPU_JPEG_HW &&
                   (int)IMGPU_SESSION_JPEG_CUDA == (int)IMGPU_JPEG_CUDA,
               "the door's decoder names are jpeg.c's values (they pass through unchanged)");

struct imgpu_session_jpeg {
    imgpu_cuda_jpeg *j;
    /* the last decode: each pool image, whether nvJPEG decoded it, and its shape */
    int n;
    const unsigned char *d_img[IMGPU_JPEG_BATCH];
    int ok[IMGPU_JPEG_BATCH], w[IMGPU_JPEG_BATCH], h[IMGPU_JPEG_BATCH], c[IMGPU_JPEG_BATCH];
};

int imgpu_session_jpeg_route(const unsigned char *b, size_t n, int *channels)
{
    return imgpu_cuda_jpeg_route(b, n, channels);
}

imgpu_session_jpeg *imgpu_session_jpeg_new(void)
{
    imgpu_session_jpeg *j = calloc(1, sizeof *j);
    if (!j) {
        imgpu_error("out of memory");
        return NULL;
    }
    if (!(j->j = imgpu_cuda_jpeg_new())) {
        free(j);
        return NULL;
    }
    return j;
}

void imgpu_session_jpeg_free(imgpu_session_jpeg *j)
{
    if (!j)
        return;
    imgpu_cuda_jpeg_free(j->j);
    free(j);
}

int imgpu_session_jpeg_decode(imgpu_session_jpeg *j, int n, const unsigned char *const *data, const size_t *len,
                              const int *route, const int *channels, const int *w, const int *h, int *ok,
                              int *how)
{
    j->n = 0;
    int rc = imgpu_cuda_jpeg_decode(j->j, n, data, len, route, channels, w, h, j->d_img, ok, how);
    if (rc)
        return rc;
    j->n = n;
    for (int i = 0; i < n; i++) {
        j->ok[i] = ok[i];
        j->w[i] = w[i];
        j->h[i] = h[i];
        j->c[i] = channels[i];
    }
    return 0;
}

int imgpu_session_upload_jpeg(imgpu_session *s, const imgpu_session_jpeg *j, int i)
{
    if (i < 0 || i >= j->n || !j->ok[i])
        return imgpu_error("nvJPEG: image %d of the last batch was not decoded", i);
    s->d_result = NULL;
    return imgpu_cuda_session_upload_device(s->cs, j->d_img[i], j->w[i], j->h[i], j->c[i]);
}

int imgpu_session_jpeg_encode(imgpu_session_jpeg *j, imgpu_session *s, const imgpu_session_jpeg_params *p,
                              unsigned char **out, size_t *len)
{
    if (!s->d_result)
        return imgpu_error("CUDA session: JPEG encode before any run");
    const imgpu_cuda_jpeg_params cp = { p->quality, p->subsampling, p->optimize, p->progressive };
    return imgpu_cuda_jpeg_encode(j->j, s->d_result, s->w, s->h, s->c, &cp, imgpu_cuda_session_stream(s->cs), out,
                                  len);
}
#endif /* without nvJPEG: src/backend/null/jpeg.c */
