/* device.h — where a job runs: the devices a front end names (--device, IMGPU_DEVICE) and the
 * backends answer to. On the ground floor, so that the session door (session.h) and the
 * dispatcher (ops.h) both stand on it without one including the other; ops.h parses the
 * names (imgpu_device_parse). */
#ifndef IMGPU_DEVICE_H
#define IMGPU_DEVICE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum imgpu_device {
    IMGPU_DEVICE_AUTO = 0,  /* where the job finishes first: the CPU for jobs smaller than
                             * what is left of CUDA's start-up plus the transfers (the
                             * dispatcher, ops.c, states the rule), else CUDA when a usable
                             * GPU is present; the CPU with a notice when none is */
    IMGPU_DEVICE_CPU,
    IMGPU_DEVICE_CUDA,
} imgpu_device;

#ifdef __cplusplus
}
#endif
#endif
