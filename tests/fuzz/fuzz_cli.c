/* fuzz_cli.c — libFuzzer target: the command-line parser. The imgpu command's files (src/cli/:
 * main.c, common.c, cmd_*.c) are compiled into this target, main.c with main renamed and IMGPU_CLI_PARSE_ONLY defined, so a command line is parsed and
 * validated exactly as `imgpu` does it (options, values, output checks, help) and then stops
 * before any file is read or written. The input is split at NUL bytes into at most 32
 * arguments after "imgpu". `bench` (execs another program), `view` (opens a window) and
 * `batch` (its own parser in src/batch/batch.c, which runs the batch for real: it creates the output
 * folder) are dispatched before the common parser and have no parse-only mode yet, so they
 * are skipped.
 * Run with -close_fd_mask=3: help and usage text go to stdout and stderr.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int imgpu__cli_main(int argc, char **argv);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX_ARGS = 32 };
    char *copy = malloc(size + 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)"imgpu";
    for (char *p = copy; p <= copy + size && argc <= MAX_ARGS;) {
        argv[argc++] = p;
        p += strlen(p) + 1;
    }
    argv[argc] = NULL;
    if (!(argc > 1 && (!strcmp(argv[1], "bench") || !strcmp(argv[1], "view") ||
                       !strcmp(argv[1], "batch")))) {
        int rc = imgpu__cli_main(argc, argv);
        if (rc != 0 && rc != 1 && rc != 2)
            abort();
    }
    free(copy);
    return 0;
}
