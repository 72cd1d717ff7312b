/* registry.h — the one list of ops: one line each, the name of its descriptor
 * (imgpu__op_<name>, src/op/<name>.c). The order is the order help and docs list them in.
 * registry.c builds the table from it, and each backend its run table (src/backend/cpu/,
 * src/backend/cuda/): adding an op is one line here. */
#ifndef IMGPU_OP_REGISTRY_H
#define IMGPU_OP_REGISTRY_H

#define IMGPU_OP_REGISTRY(X) \
    X(equalize)              \
    X(clahe)                 \
    X(rotate)                \
    X(flip)                  \
    X(convert)               \
    X(resize)                \
    X(levels)                \
    X(gamma)                 \
    X(crop)                  \
    X(normalize)             \
    X(autolevel)

#endif
