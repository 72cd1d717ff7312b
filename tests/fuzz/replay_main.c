/* replay_main.c — a main() for the fuzz targets when built without libFuzzer (any compiler):
 * runs LLVMFuzzerTestOneInput once on each file named on the command line, and on each file
 * inside a named directory. This is how the regression corpus (tests/fuzz/regress/) runs in
 * the ordinary and the ASan+UBSan test suites.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        perror(path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (!buf)
            break;
        len += fread(buf + len, 1, cap - len, fp);
        if (len < cap)
            break;
        unsigned char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(fp);
    if (!buf) {
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    /* libFuzzer hands the target an exact-size buffer; so do we, so ASan sees overreads. */
    unsigned char *exact = malloc(len ? len : 1);
    if (exact)
        memcpy(exact, buf, len);
    free(buf);
    if (!exact)
        return -1;
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

int main(int argc, char **argv)
{
    int n = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            bad++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad += run_file(argv[i]) < 0;
            n++;
            continue;
        }
        struct dirent **list;
        int k = scandir(argv[i], &list, NULL, alphasort);
        if (k < 0) {
            perror(argv[i]);
            bad++;
            continue;
        }
        for (int j = 0; j < k; j++) {
            if (list[j]->d_name[0] != '.') {
                size_t len = strlen(argv[i]) + strlen(list[j]->d_name) + 2;
                char *p = malloc(len);
                if (p) {
                    snprintf(p, len, "%s/%s", argv[i], list[j]->d_name);
                    if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
                        bad += run_file(p) < 0;
                        n++;
                    }
                    free(p);
                }
            }
            free(list[j]);
        }
        free(list);
    }
    fprintf(stderr, "replayed %d inputs, %d unreadable\n", n, bad);
    return bad ? 1 : 0;
}
