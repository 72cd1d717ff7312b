/* session.c — the null session: the session door (src/backend/session.h) of a build without CUDA.
 * Every call answers "not built in" (creators return NULL, the others -1, each with that
 * message), so the front ends (batch's GPU stage, the viewer) are written once, against the
 * door, and a CPU-only build simply never gets a session. Compiled instead of
 * src/backend/cuda/session.c when CMake finds no CUDA toolkit (or IMGPU_ENABLE_CUDA=OFF). */
#include "session.h"

#include "error.h"

#define NOT_BUILT "this imgpu was built without CUDA support"

int imgpu_session_built_in(void) { return 0; }

int imgpu_session_available(void)
{
    imgpu_error(NOT_BUILT);
    return 0;
}

int imgpu_session_device_count(void) { return imgpu_error(NOT_BUILT); }

int imgpu_session_default_device(void) { return 0; }

int imgpu_session_use_device(int dev)
{
    (void)dev;
    return imgpu_error(NOT_BUILT);
}

imgpu_session *imgpu_session_new(void)
{
    imgpu_error(NOT_BUILT);
    return NULL;
}

void imgpu_session_free(imgpu_session *s) { (void)s; }

int imgpu_session_upload(imgpu_session *s, const imgpu_image *in)
{
    (void)s, (void)in;
    return imgpu_error(NOT_BUILT);
}

int imgpu_session_run(imgpu_session *s, const imgpu_op *ops, int n, int *w, int *h, int *channels)
{
    (void)s, (void)ops, (void)n, (void)w, (void)h, (void)channels;
    return imgpu_error(NOT_BUILT);
}

int imgpu_session_download(imgpu_session *s, imgpu_image **out)
{
    (void)s, (void)out;
    return imgpu_error(NOT_BUILT);
}

void imgpu_session_wait(imgpu_session *s) { (void)s; }

/* No GPU ever failed here: whatever the code, the image fails with its message. */
imgpu_session_verdict imgpu_session_failure(int rc, imgpu_device device, atomic_int *sticky_seen)
{
    (void)rc, (void)device, (void)sticky_seen;
    return IMGPU_SESSION_FAULT;
}
