/* device_image.c — images in device memory (include/imgpu/imgpu.h) in a build without CUDA:
 * every call fails with "built without CUDA" (encode answers 1: the caller encodes on the CPU),
 * so programs and the Python module are written once. */
#include "device_state.h"
#include "error.h"

#include <stdlib.h>

#define NOT_BUILT "images in device memory: this imgpu was built without CUDA support"

void imgpu__device_state_free(void *state) { (void)state; }

imgpu_device_image *imgpu_device_image_wrap(void *data, int width, int height, int channels, int depth,
                                            size_t stride, int device)
{
    (void)data, (void)width, (void)height, (void)channels, (void)depth, (void)stride, (void)device;
    imgpu_error(NOT_BUILT);
    return NULL;
}

void imgpu_device_image_free(imgpu_device_image *im, void *const *streams, int nstreams)
{
    (void)streams, (void)nstreams;
    free(im);
}

int imgpu_device_event_query(const imgpu_device_event *e) { return e ? 1 : imgpu_error(NOT_BUILT); }
int imgpu_device_event_wait(const imgpu_device_event *e) { return e ? 0 : imgpu_error(NOT_BUILT); }
int imgpu_device_event_order(const imgpu_device_event *e, void *stream)
{
    (void)e, (void)stream;
    return imgpu_error(NOT_BUILT);
}
imgpu_device_event *imgpu_device_event_record(void *stream)
{
    (void)stream;
    imgpu_error(NOT_BUILT);
    return NULL;
}
imgpu_device_event *imgpu_device_event_record_on(int device, void *stream)
{
    (void)device;
    return imgpu_device_event_record(stream);
}
void imgpu_device_event_free(imgpu_device_event *e) { (void)e; }

int imgpu_context_cuda_device(imgpu_context *ctx, int *device)
{
    (void)ctx, (void)device;
    return imgpu_error(NOT_BUILT);
}
void *imgpu_context_cuda_stream(imgpu_context *ctx)
{
    (void)ctx;
    imgpu_error(NOT_BUILT);
    return NULL;
}

int imgpu_context_run_device(imgpu_context *ctx, const imgpu_device_image *in, const imgpu_op *ops, int n,
                             void *stream, imgpu_device_image **out, imgpu_device_event **done)
{
    (void)ctx, (void)in, (void)ops, (void)n, (void)stream, (void)out, (void)done;
    return imgpu_error(NOT_BUILT);
}
int imgpu_context_run_device_into(imgpu_context *ctx, const imgpu_device_image *in, const imgpu_op *ops, int n,
                                  void *stream, imgpu_device_image *out, imgpu_device_event **done)
{
    (void)ctx, (void)in, (void)ops, (void)n, (void)stream, (void)out, (void)done;
    return imgpu_error(NOT_BUILT);
}
int imgpu_context_upload(imgpu_context *ctx, const imgpu_image *in, void *stream, imgpu_device_image **out)
{
    (void)ctx, (void)in, (void)stream, (void)out;
    return imgpu_error(NOT_BUILT);
}
int imgpu_context_download(imgpu_context *ctx, const imgpu_device_image *in, void *stream, imgpu_image **out)
{
    (void)ctx, (void)in, (void)stream, (void)out;
    return imgpu_error(NOT_BUILT);
}
int imgpu_context_decode_batch(imgpu_context *ctx, int n, const unsigned char *const *data, const size_t *len,
                               int auto_orient, void *stream, imgpu_device_image **out, char **errors)
{
    (void)ctx, (void)n, (void)data, (void)len, (void)auto_orient, (void)stream, (void)out, (void)errors;
    return imgpu_error(NOT_BUILT);
}
int imgpu_context_encode_jpeg(imgpu_context *ctx, const imgpu_device_image *in, int quality, int subsampling,
                              int optimize, int progressive, void *stream, unsigned char **buf, size_t *len)
{
    (void)ctx, (void)in, (void)quality, (void)subsampling, (void)optimize, (void)progressive, (void)stream;
    (void)buf, (void)len;
    return 1;
}

int imgpu_context_encode_jpeg_batch(imgpu_context *ctx, int n, const imgpu_device_image *const *in, int quality,
                                    int subsampling, int optimize, int progressive, void *stream,
                                    void *const *streams, unsigned char **buf, size_t *len, int *status,
                                    char **errors)
{
    (void)ctx, (void)in, (void)quality, (void)subsampling, (void)optimize, (void)progressive, (void)stream;
    (void)streams;
    for (int i = 0; i < n; i++) {
        buf[i] = NULL;
        len[i] = 0;
        status[i] = 1;
        errors[i] = NULL;
    }
    return imgpu_error(NOT_BUILT);
}

int imgpu_context_histogram_device(imgpu_context *ctx, const imgpu_device_image *in, void *stream,
                                   imgpu_histogram_full *out)
{
    (void)ctx;
    (void)in;
    (void)stream;
    (void)out;
    return imgpu_error(NOT_BUILT);
}

int imgpu__context_run_host_on_device(imgpu_context *ctx, const imgpu_image *in, const imgpu_op *ops, int n,
                                      imgpu_image **out)
{
    (void)ctx;
    (void)in;
    (void)ops;
    (void)n;
    (void)out;
    return imgpu_error(NOT_BUILT);
}

int imgpu__context_histogram_host_on_device(imgpu_context *ctx, const imgpu_image *in, imgpu_histogram_full *out)
{
    (void)ctx;
    (void)in;
    (void)out;
    return imgpu_error(NOT_BUILT);
}
