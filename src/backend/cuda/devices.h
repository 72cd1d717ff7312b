/* devices.h — choosing among several GPUs of one host (src/cuda/devices.c), for front ends
 * that spread work over GPUs (`imgpu batch --devices 0,1`). The CUDA runtime's current device
 * belongs to the calling thread: a thread that makes sessions calls imgpu_cuda_use_device
 * first, and its sessions (streams, buffers) live on that device. */
#ifndef IMGPU_CUDA_DEVICES_H
#define IMGPU_CUDA_DEVICES_H

#ifdef __cplusplus
extern "C" {
#endif

/* Number of CUDA devices, or -1 with a message. */
int imgpu_cuda_device_count(void);
/* Make `dev` the calling thread's current device. 0, or -1 with a message. */
int imgpu_cuda_use_device(int dev);
/* The device the one-call API and the probe use (IMGPU_CUDA_DEVICE, default 0). */
int imgpu_cuda_default_device(void);

#ifdef __cplusplus
}
#endif
#endif
