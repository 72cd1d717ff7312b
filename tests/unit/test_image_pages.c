/* test_image_pages.c — large pixel buffers carry the transparent-huge-page hint (src/core/image.c,
 * as numpy's arrays do): the mapping around an image of 4 MiB and more has "hg" among its
 * VmFlags in /proc/self/smaps, and one under 4 MiB, allocated first, has not. Linux only (77
 * elsewhere, or where the kernel has no transparent huge pages). */
#include "image.h"
#include "test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 if the mapping holding address a has "hg" in its VmFlags, 0 if not, -1 if not found. */
static int hinted(const void *a)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int in = 0, found = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = (uintptr_t)a >= lo && (uintptr_t)a < hi;
            continue;
        }
        if (in && !strncmp(line, "VmFlags:", 8)) {
            found = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    return found;
}

int main(void)
{
#if !defined(__linux__)
    return 77;
#else
    FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!thp) {
        printf("no transparent huge pages here: skipped\n");
        return 77;
    }
    fclose(thp);
    imgpu_image *small = imgpu_image_new_unset(1024, 512, 3, 8); /* 1.5 MiB */
    imgpu_image *big = imgpu_image_new_unset(3840, 2160, 3, 8);  /* 24 MiB */
    imgpu_image *zero = imgpu_image_new(2048, 1024, 4, 8);       /* 8 MiB, calloc'ed */
    CHECK(small && big && zero);
    if (small && big && zero) {
        const size_t bytes = (size_t)3840 * 2160 * 3;
        CHECKF(hinted(small->data + 1536 * 512) == 0, "a 1.5 MiB image has the hint");
        CHECKF(hinted(big->data + bytes / 2) == 1, "a 4K RGB image lacks the hint");
        CHECKF(hinted(zero->data + ((size_t)4 << 20)) == 1, "an 8 MiB zeroed image lacks the hint");
        memset(big->data, 7, bytes); /* the memory works as before */
        CHECK(big->data[bytes - 1] == 7);
    }
    imgpu_image_free(small);
    imgpu_image_free(big);
    imgpu_image_free(zero);
    TEST_MAIN_END();
#endif
}
