/* device_state.h — a context's device state (include/imgpu/imgpu.h: images in device memory):
 * its private stream and buffers, kept by the CUDA backend (src/backend/cuda/device_image.c;
 * src/backend/null/device_image.c without CUDA) in a slot of the context (src/api.c). */
#ifndef IMGPU_DEVICE_STATE_H
#define IMGPU_DEVICE_STATE_H

#include <pthread.h>

#include <imgpu/imgpu.h>

/* The context's slot (NULL until the backend fills it) and the lock that guards it. */
void **imgpu__context_device_slot(imgpu_context *ctx, pthread_mutex_t **lock);
/* Frees what the backend put in a slot (waits for its work); NULL is accepted. */
void imgpu__device_state_free(void *state);

#endif
