/* common.c — the steps every command of the imgpu command line shares (cli.h): the commands'
 * own options and their parsing (with the op table's and options.h's), the checks made before
 * any input is read (an output's format, an output that would replace an input), and how a
 * failure or the report on standard output ends.
 */
#include "cli/cli.h"
#include "cli_values.h"
#include "error.h"
#include "cli/suggest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The options of the commands themselves; the op options and limits are options.h's table. */
typedef enum opt_id {
    OPT_DEVICE, OPT_QUIET, OPT_FORCE, OPT_FORMAT, OPT_JSON, OPT_DECODE,
    OPT_CSV, OPT_PLOT, OPT_DIFF, OPT_MAX_ABS,
    OPT_BINS, OPT_RANGE,
    OPT_LOG, OPT_CDF,
} opt_id;

typedef struct opt_spec {
    const char *name;   /* without the leading "--" */
    opt_id id;
    int takes_value;
    unsigned cmds;      /* C_* mask of the commands that accept it */
} opt_spec;

static const opt_spec s_options[] = {
    {"device", OPT_DEVICE, 1, C_PROC},
    {"quiet", OPT_QUIET, 0, C_ALL},
    {"format", OPT_FORMAT, 1, C_SAVE},
    {"json", OPT_JSON, 0, C_INFO},
    {"decode", OPT_DECODE, 0, C_INFO},
    {"force", OPT_FORCE, 0, C_SAVE},
    {"csv", OPT_CSV, 0, C_HIST},
    {"plot", OPT_PLOT, 1, C_HIST},
    {"diff", OPT_DIFF, 1, C_CMP},
    {"max-abs", OPT_MAX_ABS, 1, C_CMP},
    {"bins", OPT_BINS, 1, C_HIST},
    {"range", OPT_RANGE, 1, C_HIST},
    {"log", OPT_LOG, 0, C_HIST},
    {"cdf", OPT_CDF, 0, C_HIST},
};

/* ---- error reporting ------------------------------------------------------------------- */

/* " (did you mean '--quality'?)" for a mistyped option, else "" (suggest.h). */
static const char *did_you_mean_option(const cli *c, const char *name, size_t len);

/* A processing failure: the message was recorded where it was detected. */
int imgpu__cli_fail(void)
{
    const char *m = imgpu_error_message();
    fprintf(stderr, "imgpu: %s\n", m[0] ? m : "unknown error");
    return EXIT_FAIL;
}

/* Report output is the product of histogram/info/compare: a full disk or closed pipe
 * must not end in exit 0. */
int imgpu__cli_finish_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        imgpu_error("cannot write to standard output: %s", strerror(errno ? errno : EIO));
        return fail();
    }
    return EXIT_OK;
}

/* ---- argument parsing ------------------------------------------------------------------- */

static int apply_option(cli *c, const opt_spec *o, const char *v)
{
    switch (o->id) {
    case OPT_DEVICE:
        if (imgpu_opt_device(v, &c->device) < 0)
            return -1;
        c->device_given = 1;
        return 0;
    case OPT_QUIET: c->quiet = 1; return 0;
    case OPT_FORMAT: {
        char probe[40];
        if (strlen(v) > 16 || strchr(v, '/') ||
            (snprintf(probe, sizeof probe, "x.%s", v),
             (c->run.save.format = imgpu_format_from_path(probe)) == IMGPU_FORMAT_UNKNOWN))
            return bad("invalid --format '%s' (png, jpg, tif, webp, bmp, tga, pnm, pgm or ppm)", v);
        return 0;
    }
    case OPT_JSON: c->json = 1; return 0;
    case OPT_DECODE: c->decode = 1; return 0;
    case OPT_FORCE: c->force = 1; return 0;
    case OPT_CSV: c->csv = 1; return 0;
    case OPT_PLOT:
    case OPT_DIFF:
        if (!*v)
            return bad("--%s needs a file name", o->name);
        if (o->id == OPT_PLOT) c->plot = v;
        else c->diff = v;
        return 0;
    case OPT_MAX_ABS:
        if (imgpu__parse_long(v, 0, 65535, &c->max_abs) < 0) /* 16-bit comparisons reach 65535 */
            return bad("invalid --max-abs '%s' (0..65535)", v);
        c->have_max_abs = 1;
        return 0;
    case OPT_BINS:
        if (imgpu__parse_long(v, 1, 65536, &c->bins) < 0)
            return bad("invalid --bins '%s' (1..65536)", v);
        return 0;
    case OPT_RANGE: {
        char buf[32], *colon;
        if (strlen(v) >= sizeof buf)
            return bad("invalid --range '%s' (LO:HI)", v);
        strcpy(buf, v);
        colon = strchr(buf, ':');
        if (!colon)
            return bad("invalid --range '%s' (LO:HI)", v);
        *colon = '\0';
        if (imgpu__parse_long(buf, 0, 65535, &c->range_lo) < 0 ||
            imgpu__parse_long(colon + 1, 0, 65535, &c->range_hi) < 0 || c->range_lo > c->range_hi)
            return bad("invalid --range '%s' (LO:HI with 0 <= LO <= HI <= 65535)", v);
        c->have_range = 1;
        return 0;
    }
    case OPT_LOG: c->log_y = 1; return 0;
    case OPT_CDF: c->cdf = 1; return 0;
    }
    return bad("internal: unhandled option --%s", o->name);
}

static const opt_spec *find_option(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof s_options / sizeof s_options[0]; i++)
        if (strlen(s_options[i].name) == len && !strncmp(s_options[i].name, name, len))
            return &s_options[i];
    return NULL;
}

/* Whether an entry of options.h's table applies to the command: --depth and --max-memory to
 * the op commands, the output options to the commands that write an image, the load limits to
 * all. */
static int shared_applies(const imgpu_opt *o, const cli *c)
{
    if (o->sets & IMGPU_OPT_LOAD)
        return 1;
    if (o->sets & IMGPU_OPT_SAVE)   /* the commands that write an image (--plot, --diff too) */
        return c->opd || ((C_SAVE >> c->cmd) & 1);
    if (o->sets & IMGPU_OPT_RUN)
        return c->opd != NULL;
    return 0;
}

/* An option of the op table or options.h's table: the op command's parameter (p) or the run
 * option (so); never both (an alias that yields to a parameter, --background, was dropped). */
static int apply_shared(cli *c, const imgpu_param *p, const imgpu_opt *so, const char *v)
{
    if (p) {
        if (imgpu_param_apply(p, v, &c->op) < 0)
            return -1;
        const int k = imgpu_opt_param_index(c->opd, p);
        if (k >= 0 && k < (int)sizeof c->given)
            c->given[k] = 1;
    }
    return so ? imgpu_opt_apply(so, v, &c->run) : 0;
}

int imgpu__cli_parse_args(int argc, char **argv, cli *c, const command *cmd)
{
    const unsigned mask = 1u << c->cmd;
    int end_of_options = 0;

    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!end_of_options && !strcmp(a, "--")) {
            end_of_options = 1;
            continue;
        }
        /* "-" alone is a file name, not an option. */
        if (end_of_options || a[0] != '-' || a[1] == '\0') {
            if (cmd->npos < 0) {
                if (!c->files && !(c->files = calloc((size_t)argc, sizeof *c->files)))
                    return bad("out of memory");
                c->files[c->nfiles++] = a;
                if (c->npos < 2)
                    c->pos[c->npos++] = a;
                continue;
            }
            if (c->npos == cmd->npos)
                return bad("unexpected argument '%s' (%s takes %s)", a, cmd->name, cmd->args);
            c->pos[c->npos++] = a;
            continue;
        }
        if (a[1] != '-')
            return bad("unknown option '%s'", a);
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        /* the command's own options, an op's parameter (this op's, or another's: then it does
         * not apply), the limits and output options */
        const opt_spec *o = find_option(name, len);
        const imgpu_param *any = o ? NULL : imgpu_opt_find_param(NULL, name, len, IMGPU_FRONT_CLI);
        const imgpu_param *p = o || !c->opd ? NULL : imgpu_opt_find_param(c->opd, name, len, IMGPU_FRONT_CLI);
        const imgpu_opt *so = o ? NULL : imgpu_opt_find(name, len, IMGPU_FRONT_CLI);
        if (!o && !so && !any)
            return bad("unknown option '--%.*s'%s", (int)len, name, did_you_mean_option(c, name, len));
        if (so && (!shared_applies(so, c) || (p && (so->sets & IMGPU_OPT_YIELDS))))
            so = NULL;   /* rotate's --background is its fill, not --flatten */
        if (o ? !(o->cmds & mask) : !p && !so)
            return bad("option '--%s' does not apply to '%s'", o ? o->name : any ? any->name : imgpu_opt_find(name, len, IMGPU_FRONT_CLI)->name, cmd->name);
        const char *oname = o ? o->name : p ? p->name : so->name;
        const char *value = NULL;
        if (o ? o->takes_value : p ? p->metavar != NULL : so->metavar != NULL) {
            /* The next word is the value even when it starts with '-': --angle -30. */
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return bad("option '--%s' needs a value", oname);
        } else if (eq) {
            return bad("option '--%s' takes no value", oname);
        }
        if ((o ? apply_option(c, o, value) : apply_shared(c, p, so, value)) < 0)
            return -1;
    }
    if (c->npos < cmd->npos || (cmd->npos < 0 && c->npos == 0))
        return bad("%s needs %s", cmd->name, cmd->args);
    if (c->opd) {
        if (imgpu_opt_check_flags(c->opd, c->given) < 0)
            return -1;
        for (int k = 0; k < c->opd->nparams && k < (int)sizeof c->given; k++) {
            const imgpu_param *q = &c->opd->params[k];
            if (q->required && !c->given[k])
                return bad("%s needs --%s %s", cmd->name, q->name, q->metavar ? q->metavar : "");
        }
    }
    return 0;
}

/* 1 when --help or -h appears among the options: help wins over any other mistake. */
int imgpu__cli_wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            return 0;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
    }
    return 0;
}

/* ---- output path checks (before any input is read) ---------------------------------------- */

/* realpath() of the directory part joined with the last component, so a file that does not
 * exist yet still gets a canonical name. NULL when the directory cannot be resolved. */
static char *canonical_path(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    const char *base;
    if (!slash) {
        dir = strdup(".");
        base = path;
    } else {
        size_t n = slash == path ? 1 : (size_t)(slash - path); /* "/x" -> dir "/" */
        dir = strndup(path, n);
        base = slash + 1;
    }
    if (!dir)
        return NULL;
    char *real = realpath(dir, NULL);
    free(dir);
    if (!real)
        return NULL;
    size_t len = strlen(real) + 1 + strlen(base) + 1;
    char *out = malloc(len);
    if (out)
        snprintf(out, len, "%s/%s", real, base);
    free(real);
    return out;
}

/* 1 when writing `out` would replace the file `in`: the same inode when both exist (this
 * catches hard and symbolic links), or the same canonical name. */
static int same_file(const char *in, const char *out)
{
    struct stat si, so;
    if (stat(in, &si) == 0 && stat(out, &so) == 0 && si.st_dev == so.st_dev &&
        si.st_ino == so.st_ino)
        return 1;
    char *a = canonical_path(in), *b = canonical_path(out);
    int same = a && b ? !strcmp(a, b) : !strcmp(in, out);
    free(a);
    free(b);
    return same;
}

/* An output's format must be known and it must not clobber an input (unless --force). */
static int check_output(const cli *c, const char *out, const char *in1, const char *in2)
{
    if (!strcmp(out, "-")) {   /* standard output: the format must be named */
        if (!c->run.save.format)
            return bad("writing to standard output ('-') needs --format (png, jpg, tif, webp, "
                       "bmp, tga, pnm)");
        return 0;
    }
    struct stat st;
    const size_t olen = strlen(out);
    if ((olen && out[olen - 1] == '/') || (stat(out, &st) == 0 && S_ISDIR(st.st_mode)))
        return bad("output '%s' is a folder: name a file (e.g. '%s%sout.png')", out, out,
                   olen && out[olen - 1] == '/' ? "" : "/");
    const char *unwritable = imgpu_format_unwritable_from_path(out);
    if (!c->run.save.format && unwritable)
        return bad("cannot write '%s': %s output is not supported (use " IMGPU_EXTENSIONS_HINT
                   ", or --format)", out, unwritable);
    if (!c->run.save.format && imgpu_format_from_path(out) == IMGPU_FORMAT_UNKNOWN)
        return bad("cannot tell the output format of '%s' from its extension (use "
                   IMGPU_EXTENSIONS_HINT ", or --format)", out);

    if (!c->force && strcmp(in1, "-") && (!in2 || strcmp(in2, "-"))) {
        if (same_file(in1, out) || (in2 && same_file(in2, out)))
            return bad("output '%s' is the input file '%s'; add --force to overwrite it", out,
                       in2 && same_file(in2, out) ? in2 : in1);
    }
    return 0;
}

int imgpu__cli_validate(cli *c)
{
    if (c->opd) {
        if (c->run.all_pages && c->run.load.page)
            return bad("--pages all and --page %d contradict each other", c->run.load.page);
        if (c->run.all_pages && check_output(c, c->pos[1], c->pos[0], NULL) == 0 &&
            !imgpu_format_has_pages(c->run.save.format ? c->run.save.format
                                                       : imgpu_format_from_path(c->pos[1])))
            return bad("--pages all writes every page into one file: '%s' cannot hold pages "
                       "(write a .tif, or pick one page with --page N)", c->pos[1]);
        return check_output(c, c->pos[1], c->pos[0], NULL);
    }
    switch (c->cmd) {
    case CMD_HISTOGRAM:
        if (!c->plot && (c->log_y || c->cdf))
            return bad("--%s draws into the plot: add --plot OUT", c->log_y ? "log" : "cdf");
        return c->plot ? check_output(c, c->plot, c->pos[0], NULL) : 0;
    case CMD_COMPARE: return c->diff ? check_output(c, c->diff, c->pos[0], c->pos[1]) : 0;
    default: return 0;
    }
}

/* Every option the command takes: its own (s_options) and options.h's that apply to it. */
static const char *did_you_mean_option(const cli *c, const char *name, size_t len)
{
    static char buf[96];
    enum { MAX_CANDS = 128 };
    const char *cands[MAX_CANDS];
    size_t n = 0;
    const unsigned mask = 1u << c->cmd;
    cands[n++] = "help";
    for (size_t i = 0; i < sizeof s_options / sizeof s_options[0] && n < MAX_CANDS; i++)
        if (s_options[i].cmds & mask)
            cands[n++] = s_options[i].name;
    for (int k = 0; c->opd && k < c->opd->nparams && n < MAX_CANDS; k++)
        if (c->opd->params[k].fronts & IMGPU_FRONT_CLI)
            cands[n++] = c->opd->params[k].name;
    for (size_t i = 0; i < imgpu_opt_count && n < MAX_CANDS; i++)
        if ((imgpu_opt_table[i].fronts & IMGPU_FRONT_CLI) && shared_applies(&imgpu_opt_table[i], c))
            cands[n++] = imgpu_opt_table[i].name;
    const char *best = imgpu__suggest(name, len, cands, n);
    if (!best)
        return "";
    snprintf(buf, sizeof buf, " (did you mean '--%s'?)", best);
    return buf;
}
