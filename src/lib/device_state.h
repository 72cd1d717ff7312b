/* device_state.h — a context's device state (include/imgpu/imgpu.h: images in device memory):
 * its private stream and buffers, kept by the CUDA backend (src/lib/device_image.c;
 * src/lib/device_image_null.c without CUDA) in a slot of the context (src/lib/api.c). */
#ifndef IMGPU_DEVICE_STATE_H
#define IMGPU_DEVICE_STATE_H

#include <pthread.h>

#include <imgpu/imgpu.h>

#include "error.h"

/* A context (api.c creates and destroys it; the fields are shared with device_image.c). */
struct imgpu_context {
    imgpu_device device;      /* as asked */
    int ordinal;              /* the CUDA device asked for (imgpu_context_create_on); -1: the default */
    pthread_mutex_t lock;     /* guards the three fields below */
    int resolved_once;        /* 1: resolved and rc/message recorded */
    int resolve_rc;
    imgpu_device resolved;
    char why[IMGPU_MESSAGE_MAX];   /* the reason resolution failed, replayed on later calls */
    pthread_mutex_t dev_lock;      /* guards dev and serializes device work on it */
    void *dev;                     /* device state: private stream, buffers (device_image.c) */
};

/* The context's slot (NULL until the backend fills it) and the lock that guards it. */
static inline void **imgpu__context_device_slot(imgpu_context *ctx, pthread_mutex_t **lock)
{
    *lock = &ctx->dev_lock;
    return &ctx->dev;
}
/* Frees what the backend put in a slot (waits for its work); NULL is accepted. */
void imgpu__device_state_free(void *state);
/* A host image's ops and histograms on a context made for one CUDA device (ordinal >= 0):
 * uploaded to that device, run there on the context's stream, downloaded; complete on return. */
int imgpu__context_run_host_on_device(imgpu_context *ctx, const imgpu_image *in, const imgpu_op *ops, int n,
                                      imgpu_image **out);
int imgpu__context_histogram_host_on_device(imgpu_context *ctx, const imgpu_image *in, imgpu_histogram_full *out);

#endif
