/* interop.h — the viewer's one door into the CUDA backend: a CUDA session that keeps the shown
 * image on the device, and CUDA-GL interop (GL textures registered with CUDA once, then per
 * frame: map -> surface object -> the display kernels of kernels/viewer.cu write into the
 * texture -> unmap; cuda-samples' postProcessGL pattern). src/viewer/ includes this header and
 * nothing else of src/cuda/ or kernels/; it needs no CUDA or GL header (a GL texture is its
 * GLuint name, passed as unsigned int); whether a usable GPU is there at all is the session
 * door's question (session.h, imgpu_session_available). Implemented in interop.c, which is built only with
 * CUDA and the viewer (it needs GL's headers); a build without CUDA has no interop, and the
 * viewer then computes on the CPU and uploads each frame with glTexSubImage2D.
 * Errors: 0 success; -1 with one message recorded through imgpu_error ("CUDA error in <call>:
 * <reason>" for a failed CUDA call). Everything runs on the session's one stream; the calls
 * that write into textures return when it is idle.
 * Rule: unregister a texture before deleting its GL object.
 */
#ifndef IMGPU_CUDA_INTEROP_H
#define IMGPU_CUDA_INTEROP_H

#include <stddef.h>

#include "image.h"
#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Does this GL share textures with CUDA? Registers `gl_tex` (an RGBA8 GL_TEXTURE_2D of the
 * current context, owned by the caller) for surface load/store and unregisters it at once.
 * 0 when it can; -1 with the reason written to why[0..n) (no error recorded, none left set). */
int imgpu_interop_probe(unsigned int gl_tex, char *why, size_t n);

/* A GL texture registered with CUDA (opaque). register: `gl_tex` is a GL_TEXTURE_2D of the
 * current context, RGBA8 for images or RGBA32F (256 x 4) for the histogram overlay; *out is
 * written only on success. unregister: accepts NULL and sets *t to NULL. */
typedef struct imgpu_interop_tex imgpu_interop_tex;
int imgpu_interop_register(unsigned int gl_tex, imgpu_interop_tex **out);
void imgpu_interop_unregister(imgpu_interop_tex **t);

/* The viewer's CUDA side: a session (a stream, the resident 8-bit source and the last result),
 * the two histograms of the overlay (before: the source; after: the last result) and two
 * events that time a frame. Not thread-safe. free accepts NULL. */
typedef struct imgpu_interop imgpu_interop;
imgpu_interop *imgpu_interop_new(void);
void imgpu_interop_free(imgpu_interop *x);

/* Uploads the 8-bit `src` as the session's source and takes its "before" histogram on the
 * device. orig != NULL: writes the source as RGBA8 into that texture's top-left w x h texels
 * and returns when done; NULL (the upload path): returns with the work enqueued. */
int imgpu_interop_set_source(imgpu_interop *x, const imgpu_image *src, imgpu_interop_tex *orig);

/* Runs ops[0..n) on the source and writes the result as RGBA8 into dst's top-left *w x *h
 * texels; hist != NULL: the result's "after" histogram too, and both histograms as the
 * overlay's 256 x 4 RGBA32F rows into hist. *w, *h, *channels: the result's shape. *gpu_ms
 * (may be NULL): the device time of the ops and the writes (events). Returns when done. */
int imgpu_interop_process(imgpu_interop *x, const imgpu_op *ops, int n, imgpu_interop_tex *dst,
                          imgpu_interop_tex *hist, int *w, int *h, int *channels, double *gpu_ms);

/* The upload path on the GPU: runs ops[0..n) on the source and downloads the result into a new
 * host image *out. */
int imgpu_interop_run(imgpu_interop *x, const imgpu_op *ops, int n, imgpu_image **out);

/* The last result (or the source, before any run) into a new host image *out. */
int imgpu_interop_download(imgpu_interop *x, imgpu_image **out);

#ifdef __cplusplus
}
#endif
#endif
