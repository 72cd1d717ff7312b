/* cli_inproc.c — the imgpu command line, many commands in one process (a test tool).
 *
 *     cli_inproc WORKDIR      (requests on stdin, replies on stdout)
 *
 * Each request is a line with the argument count N, then N lines, one argument each (no
 * newline in an argument); the reply is one line, the command's exit status. The command is
 * src/cli/main.c's main() itself (compiled in here, renamed), with argv[0] "imgpu", standard
 * input /dev/null, and its standard output and error written to WORKDIR/out and WORKDIR/err
 * (truncated before each command). What one command costs its process only once (CUDA's
 * context creation, 0.3 s and more, seconds with a GPU test suite's other processes beside it)
 * is paid once for all: the .cuda comparison tests run their hundreds of commands through it
 * (tests/common/cli_common.py, Runner). Not a product: tests/cli/cli_inproc_check.py holds it
 * to a process of its own for exit status, output, messages and files. */
#include <unistd.h> /* _exit's declaration before the rename below */

/* main()'s one _exit (CUDA still starting and nothing ran on it: leave without waiting)
 * becomes a plain return of the same status: the context then finishes starting for the next
 * command. */
#define _exit(rc) ((void)(rc))
#define main imgpu__cli_main
#include "cli/main.c"
#undef main
#undef _exit

#include <fcntl.h>
#include <limits.h>

#define MAX_ARGS 4096

static char *read_line(FILE *f)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);
    if (n < 0) {
        free(line);
        return NULL;
    }
    if (n > 0 && line[n - 1] == '\n')
        line[n - 1] = '\0';
    return line;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cli_inproc WORKDIR\n");
        return 2;
    }
    char out_path[PATH_MAX], err_path[PATH_MAX];
    snprintf(out_path, sizeof out_path, "%s/out", argv[1]);
    snprintf(err_path, sizeof err_path, "%s/err", argv[1]);
    /* the requests and replies on descriptors of their own; the commands see /dev/null */
    const int req_fd = dup(0), rep_fd = dup(1), err_fd = dup(2);
    FILE *req = req_fd >= 0 ? fdopen(req_fd, "r") : NULL;
    FILE *rep = rep_fd >= 0 ? fdopen(rep_fd, "w") : NULL;
    const int null_fd = open("/dev/null", O_RDONLY);
    if (!req || !rep || err_fd < 0 || null_fd < 0 || dup2(null_fd, 0) < 0) {
        perror("cli_inproc");
        return 1;
    }
    close(null_fd);
    char *line;
    while ((line = read_line(req))) {
        char *end;
        const long n = strtol(line, &end, 10);
        const int bad = *end || end == line;
        free(line);
        if (bad || n < 1 || n > MAX_ARGS) {
            dprintf(err_fd, "cli_inproc: bad request\n");
            return 1;
        }
        char **av = calloc((size_t)n + 2, sizeof *av);
        if (!av)
            return 1;
        av[0] = "imgpu";
        for (long i = 1; i <= n; i++)
            if (!(av[i] = read_line(req))) {
                dprintf(err_fd, "cli_inproc: request cut short\n");
                return 1;
            }
        fflush(stdout);
        fflush(stderr);
        const int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) {
            dprintf(err_fd, "cli_inproc: %s: cannot redirect the output\n", argv[1]);
            return 1;
        }
        close(o);
        close(e);
        clearerr(stdout);
        const int rc = imgpu__cli_main((int)n + 1, av);
        fflush(stdout);
        fflush(stderr);
        for (long i = 1; i <= n; i++)
            free(av[i]);
        free(av);
        fprintf(rep, "%d\n", rc);
        fflush(rep);
    }
    return 0;
}
