/* so_anchor.c — the one source file of libimgpu.so's own target: the library's contents are
 * the objects of imgpu_core, linked in whole (cmake/libimgpu.cmake). A shared library target
 * needs a source of its own, and this is it. */
#include <imgpu/imgpu.h>

/* The exported names come from imgpu_core; this translation unit adds none. */
typedef int imgpu__so_anchor_unused;
