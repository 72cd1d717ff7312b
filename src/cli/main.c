/* main.c — the imgpu command line: `imgpu COMMAND ARGS [OPTIONS]`: the command table, the
 * dispatch (batch, view and bench included), --help and --version. The commands are one file
 * each: cmd_op.c (every op of the op table), cmd_histogram.c, cmd_info.c, cmd_compare.c; what
 * they share is common.c (cli.h). It parses and validates everything it can before touching
 * the input (usage errors exit 2 with no file written), then builds an op pipeline on the
 * operations API and reports failures as "imgpu: <message>" with exit status 1. Nothing
 * below main() exits; every command returns its status.
 *
 * Exit status: 0 success, 1 processing error (unreadable input, failed write, no GPU for
 * --device cuda, compare over --max-abs), 2 usage error.
 */
#include "cli/cli.h"
#include "batch/batch.h"
#include "error.h"
#include "cli/suggest.h"
#include "session.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef IMGPU_VERSION
#define IMGPU_VERSION "unknown"
#endif

/* ---- commands and help ----------------------------------------------------------------- */

/* The commands that are not ops, one file each (cli.h); every op of the op table
 * (src/op/op_table.h) is a command too, `imgpu OP IN OUT [OPTIONS]`, run by the one generic
 * command of cmd_op.c (CMD_OP). */
static const command *const s_commands[CMD_COUNT] = {
    [CMD_HISTOGRAM] = &imgpu__cli_histogram,
    [CMD_INFO] = &imgpu__cli_info,
    [CMD_COMPARE] = &imgpu__cli_compare,
};

static void print_main_help(FILE *f)
{
    fprintf(f, "usage: imgpu COMMAND ARGS [OPTIONS]\n"
               "\n"
               "GPU-accelerated image processing (CUDA, with the CPU as reference and fallback).\n"
               "\n"
               "commands:\n");
    for (int i = 0; i < imgpu_op_count(); i++) {
        const imgpu_op_desc *d = imgpu_op_at(i);
        char lhs[160];
        snprintf(lhs, sizeof lhs, "%s %s", d->name, d->args);
        if (strlen(lhs) > 28)   /* a long synopsis on a line of its own, the summary below it */
            fprintf(f, "  %s\n  %-28s %s\n", lhs, "", d->summary);
        else
            fprintf(f, "  %-28s %s\n", lhs, d->summary);
    }
    for (int i = 0; i < CMD_COUNT; i++) {
        char lhs[64];
        snprintf(lhs, sizeof lhs, "%s %s", s_commands[i]->name, s_commands[i]->args);
        fprintf(f, "  %-28s %s\n", lhs, s_commands[i]->summary);
    }
    fprintf(f, "  %-28s %s\n", "batch [OPS] -o OUTDIR INPUTS", "many files through a pipelined decode/GPU/encode");
    fprintf(f, "  %-28s %s\n", "view FILE... [--snapshot OUT]", "interactive viewer (GPU, live controls); headless snapshots");
    fprintf(f, "  %-28s %s\n", "bench [--help]", "benchmarks: GPU kernels against CUB/NPP; --cpu (or no GPU): the CPU vs OpenCV");
    fprintf(f, "\n"
               "'imgpu COMMAND --help' lists a command's options; 'imgpu --version' prints the\n"
               "version and whether CUDA support is built in.\n"
               "Inputs: PNG, JPEG, TIFF, WebP, BMP, TGA, PNM (PNG, TIFF and PNM also 16-bit),\n"
               "recognised by content; '-' reads standard input. Outputs: the format follows\n"
               "the extension (.png .jpg .jpeg .tif .tiff .webp .bmp .tga .pnm .pgm .ppm) or\n"
               "--format; '-' writes standard output.\n"
               "Exit status: 0 success, 1 processing error, 2 usage error.\n");
}

static void print_command_help(const command *cmd, const imgpu_op_desc *opd)
{
    printf("usage: imgpu %s %s [OPTIONS]\n\n", cmd->name, cmd->args);
    if (!opd) {
        fputs(cmd->help, stdout);
        return;
    }
    /* an op's help: its paragraph and parameters from the op table, then what every op takes */
    imgpu__cli_op_help(opd);
}

/* The command named `name`: one of s_commands, or an op of the op table (*opd then names it;
 * *cmd is filled from its descriptor). -1 when there is none. */
static int find_command(const char *name, command *cmd, const imgpu_op_desc **opd)
{
    *opd = imgpu_op_find(name);
    if (*opd) {
        *cmd = (command){(*opd)->name, 2, (*opd)->args, (*opd)->summary, NULL, imgpu__cli_op_run};
        return CMD_OP;
    }
    for (int i = 0; i < CMD_COUNT; i++)
        if (!strcmp(name, s_commands[i]->name)) {
            *cmd = *s_commands[i];
            return i;
        }
    return -1;
}

/* ---- error reporting ------------------------------------------------------------------- */

/* " (did you mean 'histogram'?)" for a mistyped command, else "" (suggest.h). */
static const char *did_you_mean_command(const char *name);

static int usage_exit(const char *cmd_name)
{
    fprintf(stderr, "imgpu: %s\n", imgpu_usage_message());
    if (cmd_name)
        fprintf(stderr, "try 'imgpu %s --help'\n", cmd_name);
    else
        fprintf(stderr, "try 'imgpu --help'\n");
    return EXIT_USAGE;
}

/* Output options the output's format does not use are named once (not silently dropped). */
static void note_ignored_options(const cli *c, const char *out)
{
    if (!out)
        return;
    imgpu_save_options_note_ignored(&c->run.save, c->run.save.format ? c->run.save.format
                                                                    : imgpu_format_from_path(out));
}

/* ---- main --------------------------------------------------------------------------------- */

static void print_version(void)
{
    printf("imgpu %s\n", IMGPU_VERSION);
    if (imgpu_session_built_in())
        printf("CUDA support: yes (use --device cuda|auto; without a usable GPU auto runs on the CPU)\n");
    else
        printf("CUDA support: no (built without a CUDA toolkit: CPU only)\n");
    if (imgpu_session_jpeg_built_in())
        printf("nvJPEG: yes (batch decodes and encodes JPEG on the GPU)\n");
    else
        printf("nvJPEG: no (JPEG is decoded and encoded on the CPU)\n");
    char libs[256];
    imgpu_codec_libraries(libs, sizeof libs);
    printf("codecs: %s\n", libs);
}

/* `imgpu bench` and `imgpu view` are the separate programs imgpu-bench and imgpu-view installed
 * beside imgpu (they link CUB and NPP, or GLFW, GLEW and GL, which the everyday tool should not
 * load at start-up). argv is NULL-terminated: execv passes it on whole. */
static int run_sibling(char **argv, const char *prog, const char *missing)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 32);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            strcpy(slash + 1, prog);
            if (access(self, X_OK) == 0) {
                argv[1] = self;
                execv(self, argv + 1);
            }
        }
    }
    imgpu_error("%s", missing);
    return fail();
}

static int run_command(cli *c, const char *name, int argc, char **argv);

static const char *did_you_mean_command(const char *name)
{
    static char buf[96];
    enum { MAX_CANDS = 64 };
    const char *cands[MAX_CANDS] = {"batch", "view", "bench", "help"};
    size_t n = 4;
    for (int i = 0; i < CMD_COUNT && n < MAX_CANDS; i++)
        cands[n++] = s_commands[i]->name;
    for (int i = 0; i < imgpu_op_count() && n < MAX_CANDS; i++)
        cands[n++] = imgpu_op_at(i)->name;
    const char *best = imgpu__suggest(name, strlen(name), cands, n);
    if (!best)
        return "";
    snprintf(buf, sizeof buf, " (did you mean '%s'?)", best);
    return buf;
}

int main(int argc, char **argv)
{
    /* A file-size rlimit must end in a message and exit 1, not a kill: with SIGXFSZ ignored
     * the write fails with EFBIG and the atomic save removes its temp file. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        bad("no command given");
        return usage_exit(NULL);
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        print_main_help(stdout);
        return finish_stdout();
    }
    if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "-v")) {
        print_version();
        return finish_stdout();
    }
    if (!strcmp(name, "help")) {
        if (argc == 2) {
            print_main_help(stdout);
            return finish_stdout();
        }
        name = argv[2];
        command hc;
        const imgpu_op_desc *hd;
        if (find_command(name, &hc, &hd) >= 0) {
            print_command_help(&hc, hd);
            return finish_stdout();
        }
        bad("unknown command '%s'%s", name, did_you_mean_command(name));
        return usage_exit(NULL);
    }
    if (!strcmp(name, "bench"))
        return run_sibling(argv, "imgpu-bench",
                           "bench: no imgpu-bench beside this imgpu (the build makes it in the same folder)");
    if (!strcmp(name, "view"))
        return run_sibling(argv, "imgpu-view",
                           "view: no imgpu-view beside this imgpu (it is built only where GLFW 3.3, GLEW, "
                           "OpenGL and EGL are found)");
    if (!strcmp(name, "batch"))
        return imgpu_batch_main(argc - 1, argv + 1);
    if (name[0] == '-') {
        bad("unknown option '%s' (a command comes first)", name);
        return usage_exit(NULL);
    }

    cli c;
    memset(&c, 0, sizeof c);
    int rc = run_command(&c, name, argc, argv);
    free(c.files);
    if (imgpu_backend_shutdown()) {
        /* CUDA is still starting and nothing ran on it (`auto` took the CPU, or the input
         * failed): leave now instead of waiting for it. stdout was checked by the command. */
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    return rc;
}

/* Everything after the command's name: options, limits, then the command itself. c->files
 * is left for main to free. */
static int run_command(cli *c, const char *name, int argc, char **argv)
{
    command command_found;
    c->cmd = find_command(name, &command_found, &c->opd);
    if (c->cmd < 0) {
        bad("unknown command '%s'%s", name, did_you_mean_command(name));
        return usage_exit(NULL);
    }
    const command *cmd = &command_found;
    if (imgpu__cli_wants_help(argc - 2, argv + 2)) {
        print_command_help(cmd, c->opd);
        return finish_stdout();
    }

    c->device = IMGPU_DEVICE_AUTO;
    c->run = imgpu_run_options_default();
    if (c->opd)
        c->op = imgpu_op_default(c->opd->kind);
    if (imgpu__cli_parse_args(argc - 2, argv + 2, c, cmd) < 0 || imgpu__cli_validate(c) < 0)
        return usage_exit(cmd->name);
    /* IMGPU_DEVICE: the default of --device, which wins over it */
    if (!c->device_given && imgpu_device_from_env(&c->device) < 0) {
        bad("%s", imgpu_error_message());
        return usage_exit(cmd->name);
    }
    /* IMGPU_MAX_* fill in the limits no option set; a malformed one is a usage error. */
    if (imgpu_load_options_from_env(&c->run.load) < 0) {
        bad("%s", imgpu_error_message());
        return usage_exit(cmd->name);
    }
    imgpu_limits lim = {c->run.load.max_pixels, c->run.max_memory};
    if (imgpu_limits_from_env(&lim) < 0) {
        bad("%s", imgpu_error_message());
        return usage_exit(cmd->name);
    }
#ifdef IMGPU_CLI_PARSE_ONLY
    /* tests/fuzz/fuzz_cli.c compiles this file with main renamed: stop before any file is
     * read or written. */
    return EXIT_OK;
#endif

    imgpu_set_quiet(c->quiet);
    imgpu_set_limits(&lim);
    switch (c->cmd) {
    case CMD_OP: note_ignored_options(c, c->pos[1]); break;
    case CMD_HISTOGRAM: note_ignored_options(c, c->plot); break;
    case CMD_COMPARE: note_ignored_options(c, c->diff); break;
    default: break;
    }
    return cmd->run(c);
}
