// placeholder until the kernels land
__global__ void imgpu_placeholder_kernel() {}
