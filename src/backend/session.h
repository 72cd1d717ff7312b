/* session.h — the session door: how a front end that keeps an image on the GPU (batch's GPU
 * workers; the viewer) speaks to the CUDA backend without seeing it. A session is a stream and
 * device buffers of its own: upload a host image once, run chains of ops (op.h) on it as often
 * as wanted, download the last result; batch alternates two so that one uploads while the other
 * computes. With nvJPEG (IMGPU_HAVE_NVJPEG), JPEG bytes are decoded on the GPU into a pool, a
 * session takes one as its source, and a result is encoded on the GPU. The door also carries the
 * policy for an image the GPU gave up on (imgpu_session_failure): out of device memory -> the
 * CPU finishes it; any other CUDA error fails it, and a sticky fault that another image already
 * reported leaves this one to the CPU. No CUDA type or device pointer crosses the door; front
 * ends include this header and nothing of src/backend/cuda/ or kernels/. Implemented in
 * src/backend/cuda/session.c; a build without CUDA has the null session instead
 * (src/backend/null/session.c), and one without nvJPEG the null JPEG coder
 * (src/backend/null/jpeg.c): the same calls, answering "not built in", so no front end needs
 * to know how imgpu was built.
 * Errors: 0 success; nonzero with one message recorded through imgpu_error (-1, or a code that
 * imgpu_session_failure reads: out of device memory, sticky fault). Not thread-safe: one thread
 * per session and per JPEG coder; the device a thread chose owns what that thread makes.
 */
#ifndef IMGPU_SESSION_H
#define IMGPU_SESSION_H

#include <stdatomic.h>
#include <stddef.h>

#include "device.h"
#include "image.h"
#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- what this build has ------------------------------------------------------------------- */

/* 1 when the CUDA backend is built in; 0 in a build without CUDA (every call below then fails
 * with "this imgpu was built without CUDA support"). */
int imgpu_session_built_in(void);
/* 1 when nvJPEG (GPU JPEG decode and encode) is built in; 0 otherwise (the JPEG calls below
 * then fail with "this imgpu was built without nvJPEG"). */
int imgpu_session_jpeg_built_in(void);

/* ---- the device ---------------------------------------------------------------------------- */

/* 1 when a usable GPU is present (probed once, cached); 0 with the reason recorded. Release
 * with imgpu_backend_shutdown (ops.h) at the end. */
int imgpu_session_available(void);
/* Number of CUDA devices, or -1 with a message. */
int imgpu_session_device_count(void);
/* The device the one-call API uses (IMGPU_CUDA_DEVICE, default 0). */
int imgpu_session_default_device(void);
/* Make `dev` the calling thread's device: sessions and JPEG coders this thread makes from then
 * on live there. 0, or nonzero with a message. */
int imgpu_session_use_device(int dev);

/* ---- sessions ------------------------------------------------------------------------------ */

typedef struct imgpu_session imgpu_session;
/* NULL with a message on failure; free accepts NULL. */
imgpu_session *imgpu_session_new(void);
void imgpu_session_free(imgpu_session *s);
/* Copies `in` (8- or 16-bit) into the session's staging (after its earlier work finished) and
 * enqueues the copy to the device; returns without waiting for it. */
int imgpu_session_upload(imgpu_session *s, const imgpu_image *in);
/* Enqueues ops[0..n) on the uploaded source, which stays intact (runs can repeat); n == 0 gives
 * the source itself. *w, *h, *channels (each may be NULL): the result's shape. */
int imgpu_session_run(imgpu_session *s, const imgpu_op *ops, int n, int *w, int *h, int *channels);
/* The last result into a new host image *out; waits for the session's work. */
int imgpu_session_download(imgpu_session *s, imgpu_image **out);
/* Waits until the work enqueued on the session has finished. An error is not reported here:
 * the session's next call meets it. */
void imgpu_session_wait(imgpu_session *s);

/* ---- what a failure means ------------------------------------------------------------------ */

typedef enum imgpu_session_verdict {
    /* out of device memory, and `device` lets the CPU take over: the CPU finishes the image;
     * the session is still good */
    IMGPU_SESSION_TO_CPU,
    /* the image fails with the recorded message (a device error, or out of memory under
     * --device cuda); the session may be broken: free it and make new ones (when that fails
     * the GPU is gone, and the rest goes to the CPU) */
    IMGPU_SESSION_FAULT,
    /* a sticky fault (the CUDA context is gone for the whole process: it surfaces in every
     * thread's next call) that was already reported for another image: this image is innocent,
     * the CPU finishes it; the sessions are broken as for a fault */
    IMGPU_SESSION_INNOCENT,
} imgpu_session_verdict;

/* The verdict on an image whose door call returned rc (nonzero). device: the backend the user
 * asked for. sticky_seen: shared by every thread of the front end, 0 at the start; the first
 * sticky fault sets it and is the one FAULT (NULL: every sticky fault is a FAULT). */
imgpu_session_verdict imgpu_session_failure(int rc, imgpu_device device, atomic_int *sticky_seen);

/* ---- nvJPEG -------------------------------------------------------------------------------- */
/* At most this many JPEGs are decoded together. */
#define IMGPU_SESSION_JPEG_BATCH 16
/* Who decodes a JPEG. */
enum { IMGPU_SESSION_JPEG_CPU = 0, IMGPU_SESSION_JPEG_HW = 1, IMGPU_SESSION_JPEG_CUDA = 2 };

/* Which decoder takes a JPEG, from its markers alone (host only, no GPU needed):
 * IMGPU_SESSION_JPEG_HW (the GPU's hardware engines), IMGPU_SESSION_JPEG_CUDA (nvJPEG's CUDA
 * decoder: progressive) or IMGPU_SESSION_JPEG_CPU (the rest: libjpeg-turbo). *channels: 1 or 3. */
int imgpu_session_jpeg_route(const unsigned char *b, size_t n, int *channels);

/* A JPEG coder: nvJPEG's decoders and encoder and a pool of IMGPU_SESSION_JPEG_BATCH device
 * buffers for the decoded images (grown to the largest seen, never shrunk), on the calling
 * thread's device (~1 s to make: a thread of its own can make it while the worker works).
 * NULL with a message on failure; free accepts NULL. */
typedef struct imgpu_session_jpeg imgpu_session_jpeg;
imgpu_session_jpeg *imgpu_session_jpeg_new(void);
void imgpu_session_jpeg_free(imgpu_session_jpeg *j);

/* Decodes n (<= IMGPU_SESSION_JPEG_BATCH) JPEGs, each routed (route[i], channels[i],
 * w[i] x h[i] from imgpu_session_jpeg_route and the file's header), into the pool; returns when
 * they are complete. ok[i]: 1 decoded, by how[i] (IMGPU_SESSION_JPEG_HW or _CUDA); 0: nvJPEG
 * refused it, the caller decodes it on the CPU. A pool image stays valid until the next decode,
 * and the sessions that copied from it must be waited for (imgpu_session_wait) before that. */
int imgpu_session_jpeg_decode(imgpu_session_jpeg *j, int n, const unsigned char *const *data, const size_t *len,
                              const int *route, const int *channels, const int *w, const int *h, int *ok,
                              int *how);
/* Pool image i of the last decode (ok[i] == 1) becomes the session's source (a copy on the
 * device, enqueued). */
int imgpu_session_upload_jpeg(imgpu_session *s, const imgpu_session_jpeg *j, int i);

typedef struct imgpu_session_jpeg_params {
    int quality;        /* 1..100 */
    int subsampling;    /* 444, 422 or 420 */
    int optimize, progressive;
} imgpu_session_jpeg_params;
/* Encodes the session's last run's result (8-bit, 1 or 3 channels) after the work already
 * enqueued on it; *out (malloc'ed, *len bytes) the JPEG bitstream. 0; 1 when nvJPEG cannot
 * encode it this way (the caller encodes on the CPU); below 0 with a message on failure. */
int imgpu_session_jpeg_encode(imgpu_session_jpeg *j, imgpu_session *s, const imgpu_session_jpeg_params *p,
                              unsigned char **out, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
