/* placeholder until the CUDA backend lands */
#include "cuda_backend.h"
#include "../error.h"
int imgpu_cuda_available(void) { imgpu_error("CUDA backend not implemented yet"); return 0; }
int imgpu_cuda_pipeline_run(const imgpu_image *in, const imgpu_op *ops, int n, imgpu_image **out) { (void)in; (void)ops; (void)n; (void)out; return imgpu_error("CUDA backend not implemented yet"); }
int imgpu_cuda_histogram(const imgpu_image *in, imgpu_histogram *out) { (void)in; (void)out; return imgpu_error("CUDA backend not implemented yet"); }
