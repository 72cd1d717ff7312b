/* jpeg.c — the null JPEG coder: the nvJPEG half of the session door (src/backend/session.h) in a
 * build without nvJPEG (no CUDA, or a CUDA toolkit without it). Every JPEG is routed to the
 * CPU (libjpeg-turbo), and the coder's other calls answer "not built in". */
#include "session.h"

#include "error.h"

#define NOT_BUILT "this imgpu was built without nvJPEG"

int imgpu_session_jpeg_built_in(void) { return 0; }

int imgpu_session_jpeg_route(const unsigned char *b, size_t n, int *channels)
{
    (void)b, (void)n;
    *channels = 0;
    return IMGPU_SESSION_JPEG_CPU;
}

imgpu_session_jpeg *imgpu_session_jpeg_new(void)
{
    imgpu_error(NOT_BUILT);
    return NULL;
}

void imgpu_session_jpeg_free(imgpu_session_jpeg *j) { (void)j; }

int imgpu_session_jpeg_decode(imgpu_session_jpeg *j, int n, const unsigned char *const *data, const size_t *len,
                              const int *route, const int *channels, const int *w, const int *h, int *ok, int *how)
{
    (void)j, (void)data, (void)len, (void)route, (void)channels, (void)w, (void)h, (void)how;
    for (int i = 0; i < n; i++)
        ok[i] = 0;
    return imgpu_error(NOT_BUILT);
}

int imgpu_session_upload_jpeg(imgpu_session *s, const imgpu_session_jpeg *j, int i)
{
    (void)s, (void)j, (void)i;
    return imgpu_error(NOT_BUILT);
}

int imgpu_session_jpeg_encode(imgpu_session_jpeg *j, imgpu_session *s, const imgpu_session_jpeg_params *p,
                              unsigned char **out, size_t *len)
{
    (void)j, (void)s, (void)p, (void)out, (void)len;
    return imgpu_error(NOT_BUILT);
}
