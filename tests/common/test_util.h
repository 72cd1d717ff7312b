/* test_util.h — the smallest test harness: CHECK records a failure and goes on, so one run
 * reports every broken case; TEST_MAIN_END returns 1 if anything failed. */
#ifndef IMGPU_TEST_UTIL_H
#define IMGPU_TEST_UTIL_H

#include <stdio.h>

static int t_failures, t_checks;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        t_checks++;                                                                  \
        if (!(cond)) {                                                               \
            t_failures++;                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECKF(cond, ...)                                                            \
    do {                                                                             \
        t_checks++;                                                                  \
        if (!(cond)) {                                                               \
            t_failures++;                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
        }                                                                            \
    } while (0)

#define TEST_MAIN_END()                                                              \
    do {                                                                             \
        printf("%d checks, %d failed\n", t_checks, t_failures);                      \
        return t_failures ? 1 : 0;                                                   \
    } while (0)

#endif
