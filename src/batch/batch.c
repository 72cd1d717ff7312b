/* batch.c — `imgpu batch [OPS] -o OUTDIR INPUTS...`: one op pipeline over many files. This
 * file is the command line (the options, --help) and one run from start to summary: it
 * gathers and plans the inputs (batch_plan.c), runs the pipeline (batch_run.c; the op stage on
 * the GPU: batch_gpu.c) and prints what was done. batch_internal.h says which file does what.
 *
 * Rules a user relies on: outputs stay inside OUTDIR (a name with an absolute part or a ".."
 * component is refused, and the resolved parent folder must still be under OUTDIR, so a
 * symbolic link inside OUTDIR cannot lead out); an input is never overwritten; writes are
 * atomic (io.c); an existing output is skipped unless --overwrite, which is what makes a
 * re-run resume an interrupted batch, but only when OUTDIR's manifest says it was made with
 * this run's settings from this input (batch_manifest.h): one made otherwise is "stale",
 * reported and kept, and the batch exits 1; a failing file is reported and the batch goes on.
 * A GPU error fails the file it was reported for; the worker then rebuilds its sessions, and
 * when that fails too it goes on on the CPU.
 */
#include "batch_internal.h"
#include "cli_values.h"
#include "session.h"
#include "cli/suggest.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- options ---------------------------------------------------------------------------- */

static const char s_help[] =
    "usage: imgpu batch [OPS] -o OUTDIR [OPTIONS] INPUTS...\n"
    "\n"
    "Run a pipeline of operations over many images: decode threads, the GPU stage and\n"
    "encode threads overlap, joined by bounded queues. INPUTS are files, directories\n"
    "(recursed; their image files by extension: .png .jpg .jpeg .tif .tiff .webp .bmp .tga\n"
    ".pnm .pgm .ppm in any case, other files counted in the summary as not images, hidden\n"
    "entries skipped; subfolders are kept under OUTDIR) or quoted globs ('photos/*.png')\n"
    "that imgpu expands.\n"
    "\n"
    "operations, applied in the order given (each option after an op sets that op; with\n"
    "none, the images are converted: written in --format, pixels unchanged):\n";
/* ... each op's lines from the op table (options.h: imgpu_opt_help_batch_ops), then: */
static const char s_help_rest[] =
    "output:\n"
    "  -o, --output DIR     output folder (created when missing, parents too; required)\n"
    "  --format EXT         output format: png, jpg, jpeg, tif, tiff, webp, bmp, tga, pnm, pgm,\n"
    "                       ppm (default: each input's own extension)\n"
    "  --name TEMPLATE      output name (default '{stem}.{ext}'): {stem} is the input's name\n"
    "                       without extension, {ext} the output extension, {inext} the\n"
    "                       input's (a.bmp and a.ppm with --format png: '{stem}_{inext}.{ext}');\n"
    "                       subfolders are allowed, absolute names and '..' are refused\n"
    "  --overwrite          replace existing outputs (default: skip them, so re-running a\n"
    "                       command resumes it)\n"
    "  --dry-run            list what would be written, write nothing\n"
    "  --quality N, --subsampling 444|422|420, --progressive, --optimize, --png-level N,\n"
    "  --compression KIND, --lossless, --flatten COLOR, --strip   how outputs are written,\n"
    "                       as for single images (default: quality 92, WebP 75, 4:2:0, the\n"
    "                       input's ICC profile, EXIF, XMP and PNG text kept; --background\n"
    "                       is --flatten unless a rotation before it takes it as its fill)\n"
    "  --depth 8            write 16-bit results as 8 bits (default: keep the depth)\n"
    "pipeline:\n"
    "  --jobs N             decode threads and encode threads (default: the cores)\n"
    "  --device auto|cpu|cuda  backend of the op stage (default auto, or IMGPU_DEVICE)\n"
    "  --devices 0,1,...    spread the GPU stage over these GPUs (implies --device cuda\n"
    "                       unless --device is given; an id may repeat). Each id gets\n"
    "                       jobs/(8 x ids) workers, 1 to 4, each with two CUDA streams\n"
    "  --shard K/N          process only the K-th of N deterministic slices of the sorted\n"
    "                       inputs (for job arrays and GNU parallel)\n"
    "  --stage-copy         benchmark aid: the GPU stage only copies each image\n"
    "  --max-pixels N       refuse inputs, and results of an op, larger than N pixels\n"
    "  --max-memory N       refuse an image whose decode or ops would need more than N\n"
    "                       bytes of memory, from its header (K, M, G suffixes; default\n"
    "                       8G; env IMGPU_MAX_MEMORY)\n"
    "  --max-file-size N    refuse input files over N bytes (K, M, G suffixes; default 1G)\n"
    "  --max-decode-time S  give up decoding a file after S seconds (default 30)\n"
    "                       (each limit fails the file alone; environment: IMGPU_MAX_PIXELS,\n"
    "                       IMGPU_MAX_FILE_SIZE, IMGPU_MAX_DECODE_TIME; an option wins)\n"
    "  --no-auto-orient     keep stored pixels and EXIF orientation (default: upright)\n"
    "  --page N             the page of multi-page TIFFs to read (default 0)\n"
    "  --quiet              no progress and no summary (errors are still printed)\n"
    "  --verbose            name every stale output (default: one line sums them up)\n"
    "  -h, --help           this help\n"
    "A file that fails is reported with its reason and the batch goes on; the summary gives\n"
    "done, skipped, failed, images/s and MB/s (input bytes). Ctrl-C (or SIGTERM) starts no\n"
    "new file, finishes those in flight and says how many are left; the same command resumes\n"
    "(a second Ctrl-C stops at once). Exit status: 0 all done or skipped, 1 any file failed,\n"
    "2 usage error, 130 (143) interrupted by Ctrl-C (SIGTERM).\n";

/* A usage problem found while parsing (options.h's one helper). */
#define bad imgpu_usage_bad

/* The op a parameter option sets: the latest op that has a parameter of that name (--mode: the
 * latest of the ops with a --mode), so an op's options follow it. *k: its index. */
static imgpu_op *last_op(bopts *b, const imgpu_param *p, int *k)
{
    for (int i = b->nops - 1; i >= 0; i--)
        if (imgpu_opt_op_has(imgpu_op_desc_of(b->ops[i].kind), p, IMGPU_FRONT_BATCH)) {
            *k = i;
            return &b->ops[i];
        }
    char follow[160];
    imgpu_opt_ops_with(p, IMGPU_FRONT_BATCH, follow, sizeof follow);
    bad("--%s must follow %s", p->name, follow);
    return NULL;
}

static int add_op(bopts *b, imgpu_op op)
{
    if (b->nops == MAX_OPS)
        return bad("too many operations (at most %d)", MAX_OPS);
    b->ops[b->nops++] = op;
    return 0;
}

/* A list of device ids: "0", "0,1", "1,0,1". */
static int parse_devices(bopts *b, const char *v)
{
    b->ndevices = 0;
    const char *p = v;
    for (;;) {
        char num[16];
        size_t n = strcspn(p, ",");
        long id;
        if (n == 0 || n >= sizeof num || b->ndevices == 16)
            return -1;
        memcpy(num, p, n);
        num[n] = '\0';
        if (imgpu__parse_long(num, 0, 1023, &id) < 0)
            return -1;
        b->devices[b->ndevices++] = (int)id;
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

static int check_template(const char *t)
{
    for (const char *p = t; *p; p++) {
        if (*p != '{')
            continue;
        if (!strncmp(p, "{stem}", 6))
            p += 5;
        else if (!strncmp(p, "{ext}", 5))
            p += 4;
        else if (!strncmp(p, "{inext}", 7))
            p += 6;
        else
            return bad("invalid --name '%s': unknown placeholder at '%.12s' (use {stem}, {ext} and {inext})", t, p);
    }
    const char *why = imgpu__batch_name_rule(t);
    if (why)
        return bad("invalid --name '%s': %s", t, why);
    return 0;
}

/* " (did you mean '--equalize'?)" for a mistyped option, else "" (suggest.h): batch's own
 * options (parse_args) and options.h's that batch takes. */
static const char *did_you_mean(const char *name)
{
    static char buf[96];
    static const char *const own[] = {"output", "format", "name", "jobs", "device", "devices", "shard",
                                      "overwrite", "dry-run", "quiet", "verbose", "stage-copy", "help"};
    enum { OWN = sizeof own / sizeof own[0], MAX_CANDS = 96 };
    const char *cands[MAX_CANDS];
    size_t n = 0;
    for (; n < OWN; n++)
        cands[n] = own[n];
    for (size_t i = 0; i < imgpu_opt_count && n < MAX_CANDS; i++)
        if (imgpu_opt_table[i].fronts & IMGPU_FRONT_BATCH)
            cands[n++] = imgpu_opt_table[i].name;
    for (int i = 0; i < imgpu_op_count() && n < MAX_CANDS; i++) {   /* the ops and their parameters */
        const imgpu_op_desc *d = imgpu_op_at(i);
        cands[n++] = d->name;
        for (int k = 0; k < d->nparams && n < MAX_CANDS; k++)
            if (d->params[k].fronts & IMGPU_FRONT_BATCH)
                cands[n++] = d->params[k].name;
    }
    const char *best = imgpu__suggest(name, strlen(name), cands, n);
    if (!best)
        return "";
    snprintf(buf, sizeof buf, " (did you mean '--%s'?)", best);
    return buf;
}

static int parse_args(int argc, char **argv, bopts *b)
{
    int end = 0;
    unsigned char given[MAX_OPS][64];     /* each op's parameters given so far */
    memset(given, 0, sizeof given);
    b->inputs = calloc((size_t)argc + 1, sizeof *b->inputs);
    if (!b->inputs)
        return bad("out of memory");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!end && !strcmp(a, "--")) {
            end = 1;
            continue;
        }
        if (end || a[0] != '-' || !a[1]) {
            b->inputs[b->ninputs++] = argv[i];
            continue;
        }
        char name[32];
        const char *v = NULL, *eq = NULL;
        if (!strcmp(a, "-o")) {
            snprintf(name, sizeof name, "output");
        } else if (a[1] != '-') {
            return bad("unknown option '%s'", a);
        } else {
            eq = strchr(a + 2, '=');
            size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            if (n >= sizeof name)
                return bad("unknown option '%s'", a);
            memcpy(name, a + 2, n);
            name[n] = '\0';
        }
        /* batch's own options with a value; the op options and limits are the table's */
        static const char *with_value[] = {
            "output", "format", "name", "jobs", "device", "devices", "shard",
        };
        /* an op (--equalize, --rotate DEG), an op's parameter, a limit or output option */
        const imgpu_op_desc *add = imgpu_opt_find_op(name, strlen(name));
        /* a name that is both an op and a parameter of an op already given (--crop: the crop op,
         * and rotate's keep-size) sets that parameter, unless the next argument is one of the
         * op's own options (--rotate 30 --crop keeps the size; --rotate 30 --crop --inner
         * crops) */
        if (add && !eq) {
            const imgpu_param *as_p = imgpu_opt_find_param(NULL, name, strlen(name), IMGPU_FRONT_BATCH);
            int earlier = 0;
            for (int k = 0; as_p && k < b->nops; k++)
                earlier |= imgpu_opt_op_has(imgpu_op_desc_of(b->ops[k].kind), as_p, IMGPU_FRONT_BATCH);
            const char *next = i + 1 < argc ? argv[i + 1] : "";
            const size_t nn = !strncmp(next, "--", 2) ? strcspn(next + 2, "=") : 0;
            if (earlier && !(nn && imgpu_opt_find_param(add, next + 2, nn, IMGPU_FRONT_BATCH)))
                add = NULL;
        }
        const imgpu_param *add_p = add && add->add_param ? imgpu_op_param(add, add->add_param, strlen(add->add_param)) : NULL;
        const imgpu_param *pp = add ? NULL : imgpu_opt_find_param(NULL, name, strlen(name), IMGPU_FRONT_BATCH);
        const imgpu_opt *so = add ? NULL : imgpu_opt_find(name, strlen(name), IMGPU_FRONT_BATCH);
        int takes = (so && so->metavar) || (pp && pp->metavar) || add_p;
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
            takes |= !strcmp(name, with_value[k]);
        if (takes) {
            if (eq)
                v = eq + 1;
            else if (i + 1 < argc)
                v = argv[++i];
            else
                return bad("option '--%s' needs a value", name);
        } else if (eq) {
            return bad("option '--%s' takes no value", name);
        }
        long n;
        if (add) {
            /* a new op at its defaults; --rotate DEG's value is its angle */
            imgpu_op fresh;
            if (imgpu_opt_add_op(add, v, &fresh) < 0 || add_op(b, fresh) < 0)
                return -1;
        } else if (pp || so) {
            /* an op's parameter: the latest op that has it (an output option that is also one,
             * --background, fills the latest rotation if there is one, and is --flatten
             * where there is none) */
            int k = -1;
            imgpu_op *op = NULL;
            if (pp && so) {
                for (int i = b->nops - 1; i >= 0 && !op; i--)
                    if (imgpu_opt_op_has(imgpu_op_desc_of(b->ops[i].kind), pp, IMGPU_FRONT_BATCH))
                        op = &b->ops[k = i];
            } else if (pp && !(op = last_op(b, pp, &k))) {
                return -1;
            }
            if (op) {
                const imgpu_op_desc *d = imgpu_op_desc_of(op->kind);
                const imgpu_param *p = imgpu_opt_find_param(d, name, strlen(name), IMGPU_FRONT_BATCH);
                const int idx = imgpu_opt_param_index(d, p);
                if (imgpu_param_apply(p, v, op) < 0)
                    return -1;
                if (idx >= 0 && idx < (int)sizeof given[0]) {
                    given[k][idx] = 1;
                    /* as the single command: both --expand and --crop on one rotation is a
                     * contradiction, not "last wins" */
                    if (imgpu_opt_check_flags(d, given[k]) < 0)
                        return -1;
                }
            }
            if (so && !(op && (so->sets & IMGPU_OPT_YIELDS)) && imgpu_opt_apply(so, v, &b->run) < 0)
                return -1;
        } else if (!strcmp(name, "output")) {
            if (!*v)
                return bad("-o needs a folder");
            b->outdir = v;
        } else if (!strcmp(name, "format")) {
            if (!imgpu__batch_known_ext(v))
                return bad("invalid --format '%s' (png, jpg, jpeg, tif, tiff, webp, bmp, tga, pnm, pgm or ppm)", v);
            b->format = v;
        } else if (!strcmp(name, "name")) {
            if (check_template(v) < 0)
                return -1;
            b->name = v;
        } else if (!strcmp(name, "jobs")) {
            if (imgpu__parse_long(v, 1, 1024, &n) < 0)
                return bad("invalid --jobs '%s' (1..1024)", v);
            b->jobs = (int)n;
        } else if (!strcmp(name, "device")) {
            if (imgpu_opt_device(v, &b->device) < 0)
                return -1;
        } else if (!strcmp(name, "devices")) {
            if (parse_devices(b, v) < 0)
                return bad("invalid --devices '%s' (GPU ids, e.g. 0,1; at most 16)", v);
        } else if (!strcmp(name, "shard")) {
            long k, nn;
            char kbuf[24];
            const char *slash = strchr(v, '/');
            if (!slash || (size_t)(slash - v) >= sizeof kbuf)
                return bad("invalid --shard '%s' (K/N with 1 <= K <= N)", v);
            memcpy(kbuf, v, (size_t)(slash - v));
            kbuf[slash - v] = '\0';
            if (imgpu__parse_long(kbuf, 1, 1000000, &k) < 0 || imgpu__parse_long(slash + 1, 1, 1000000, &nn) < 0 || k > nn)
                return bad("invalid --shard '%s' (K/N with 1 <= K <= N)", v);
            b->shard_k = (int)k;
            b->shard_n = (int)nn;
        } else if (!strcmp(name, "overwrite")) {
            b->overwrite = 1;
        } else if (!strcmp(name, "dry-run")) {
            b->dry_run = 1;
        } else if (!strcmp(name, "quiet")) {
            b->quiet = 1;
        } else if (!strcmp(name, "verbose")) {
            b->verbose = 1;
        } else if (!strcmp(name, "stage-copy")) {
            b->stage_copy = 1;
        } else {
            return bad("unknown option '%s'%s", a, did_you_mean(name));
        }
    }
    if (!b->outdir)
        return bad("batch needs -o OUTDIR");
    if (b->ninputs == 0)
        return bad("batch needs at least one input (files, folders or globs)");
    /* no op: the images are converted (written in --format, --depth, with the save options),
     * pixels unchanged (issue 28) */
    return 0;
}


/* A usage error found after parsing: printed with the --help hint on the command line; kept as
 * the usage message in-process. */
static int usage_error(int lib, const char *msg)
{
    if (lib) {
        imgpu_usage_bad("%s", msg);
        return EXIT_USAGE;
    }
    fprintf(stderr, "imgpu: %s\ntry 'imgpu batch --help'\n", msg);
    return EXIT_USAGE;
}

/* One run; lib: in-process (imgpu_batch_run, batch.h says what differs). */
static int batch_run(int argc, char **argv, int lib, imgpu_batch_summary *sum, batch_split *sp);

/* The line about one output made otherwise than this run would make it (stale): kept. */
static void report_stale(const bjob *j)
{
    if (j->stale == IMGPU_MANIFEST_OTHER_SETTINGS)
        imgpu__batch_report("'%s' was made with other settings (%s); use --overwrite to replace it", j->out,
                            j->recorded);
    else if (j->stale == IMGPU_MANIFEST_INPUT_CHANGED)
        imgpu__batch_report("'%s' was made from an earlier version of '%s' (its size or time changed); "
                            "use --overwrite to replace it", j->out, j->in);
    else
        imgpu__batch_report("'%s' has no record of what made it (changed since it was written, or "
                            "written by another program); use --overwrite to replace it", j->out);
}

/* OUTDIR and the folders above it that are missing, as `mkdir -p` ("created when missing":
 * -o a/b/c failed when a/b was not there). */
static int make_outdir(const char *dir)
{
    char *p = strdup(dir);
    if (!p)
        return imgpu_error("out of memory");
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        const char c = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            if (c == '\0' || !strcmp(p, dir))
                rc = imgpu_error("cannot create output folder '%s': %s", dir, strerror(errno));
            else
                rc = imgpu_error("cannot create output folder '%s': '%s': %s", dir, p, strerror(errno));
            break;
        }
        *s = c;
        if (c == '\0')
            break;
    }
    free(p);
    return rc;
}

void imgpu_batch_tune_allocator(void)
{
#ifdef __GLIBC__
    /* Images up to 32 MB (4K RGB is 25 MB) come from one heap that keeps what is freed, so the
     * next image reuses pages already mapped. glibc's defaults give each of the 2 x jobs
     * threads an arena of 64 MB heaps and map most image buffers afresh: every page of every
     * buffer then faults in again, and with 32 threads the page faults and unmaps contend
     * for the process's memory map (H200, 16 cores, 500 4K JPEGs, local contrast on --device cpu: 22 s of
     * system time). The images in flight are bounded (2 x jobs, plus the GPU stage's), so the
     * heap's peak is too. A Dask worker gets MALLOC_TRIM_THRESHOLD_=65536 from its nanny, which
     * also turns glibc's adaptive mmap threshold off: every image buffer is mapped afresh
     * (imgpu.dask's workers call this; 40 1080p JPEGs took 2x as long without it). */
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

int imgpu_batch_main(int argc, char **argv) { return batch_run(argc, argv, 0, NULL, NULL); }

int imgpu_batch_run(int argc, char **argv, imgpu_batch_fail_fn on_fail, void *ctx,
                    imgpu_batch_summary *sum)
{
    imgpu__batch_set_fail_hook(on_fail, ctx);
    int rc = batch_run(argc, argv, 1, sum, NULL);
    imgpu__batch_set_fail_hook(NULL, NULL);
    return rc;
}

int imgpu_batch_plan(int argc, char **argv, imgpu_batch_todo_fn on_todo, imgpu_batch_fail_fn on_fail,
                     void *ctx, imgpu_batch_summary *sum)
{
    batch_split sp = {.on_todo = on_todo, .ctx = ctx};
    imgpu__batch_set_fail_hook(on_fail, ctx);
    int rc = batch_run(argc, argv, 1, sum, &sp);
    imgpu__batch_set_fail_hook(NULL, NULL);
    return rc;
}

int imgpu_batch_stage(int argc, char **argv, const char *const *pairs, size_t npairs, const char *tag,
                      imgpu_batch_staged_fn on_staged, imgpu_batch_fail_fn on_fail, void *ctx,
                      imgpu_batch_summary *sum)
{
    return imgpu_batch_stage_part(argc, argv, pairs, npairs, 0, 0, tag, on_staged, on_fail, ctx, sum);
}

int imgpu_batch_stage_part(int argc, char **argv, const char *const *pairs, size_t npairs, size_t plan_ntodo,
                           size_t jpegs_before, const char *tag, imgpu_batch_staged_fn on_staged,
                           imgpu_batch_fail_fn on_fail, void *ctx, imgpu_batch_summary *sum)
{
    size_t tl = tag ? strlen(tag) : 0;
    int tag_ok = tl >= 1 && tl <= 40;
    for (size_t i = 0; tag_ok && i < tl; i++)
        tag_ok = isalnum((unsigned char)tag[i]) || tag[i] == '-' || tag[i] == '_';
    if (!tag_ok) {
        imgpu_usage_bad("the staging tag must be 1 to 40 of [A-Za-z0-9_-]");
        if (sum)
            *sum = (imgpu_batch_summary){0, 0, 0, 0, 1};
        return EXIT_USAGE;
    }
    batch_split sp = {.pairs = pairs, .npairs = npairs, .tag = tag, .on_staged = on_staged, .ctx = ctx,
                      .plan_ntodo = plan_ntodo, .plan_jpegs_before = plan_ntodo ? jpegs_before : 0};
    pthread_mutex_init(&sp.lock, NULL);
    imgpu__batch_set_fail_hook(on_fail, ctx);
    int rc = batch_run(argc, argv, 1, sum, &sp);
    imgpu__batch_set_fail_hook(NULL, NULL);
    pthread_mutex_destroy(&sp.lock);
    return rc;
}

/* One staged output into place: 0, or -1 + error (the staged file then removed). */
static int commit_one(imgpu_manifest *mf, const char *outdir, const imgpu_batch_record *r)
{
    const size_t olen = strlen(outdir);
    const char *slash = strrchr(r->out, '/'), *sslash = strrchr(r->staged, '/');
    struct stat st;
    int rc = -1, beside = 0;
    /* the staged file beside its output, a hidden name, and still the file the worker wrote */
    if (strncmp(r->out, outdir, olen) != 0 || r->out[olen] != '/' || imgpu__batch_name_rule(r->out + olen + 1) ||
        !slash || !sslash || slash - r->out != sslash - r->staged ||
        strncmp(r->out, r->staged, (size_t)(slash - r->out)) != 0 || sslash[1] != '.')
        imgpu_error("cannot write '%s': its staged file '%s' is not beside it in the output folder", r->out,
                    r->staged);
    else if (!(beside = 1) || lstat(r->staged, &st) != 0)
        imgpu_error("cannot write '%s': its staged file '%s': %s%s", r->out, r->staged, strerror(errno),
                    errno == ENOENT ? " (do the workers write to the file system this process sees, at the "
                                      "same path?)" : "");
    else if (!S_ISREG(st.st_mode) || (long long)st.st_size != r->out_size ||
             imgpu_manifest_mtime_ns(&st) != r->out_mtime_ns)
        imgpu_error("cannot write '%s': its staged file '%s' changed since it was written", r->out, r->staged);
    else if (imgpu_manifest_add(mf, r->out + olen + 1, r->settings, r->in_size, r->in_mtime_ns, r->out_size,
                                r->out_mtime_ns) < 0)
        ;
    else if (rename(r->staged, r->out) != 0)
        imgpu_error("cannot write '%s': %s", r->out, strerror(errno));
    else
        rc = 0;
    if (rc < 0 && beside)   /* a name elsewhere is not removed: it is not this run's */
        unlink(r->staged);
    return rc;
}

/* The renames made durable: each folder they went into synced once (a task's outputs are
 * mostly in one folder; a sync per output cost ~4 ms each on a plain disk). */
static void sync_folders(const imgpu_batch_record *r, size_t n, const unsigned char *put)
{
    for (size_t i = 0; i < n; i++) {
        if (!put[i])
            continue;
        const size_t len = (size_t)(strrchr(r[i].out, '/') - r[i].out);
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = put[k] && (size_t)(strrchr(r[k].out, '/') - r[k].out) == len && !strncmp(r[k].out, r[i].out, len);
        if (seen)
            continue;
        char *dir = strndup(r[i].out, len);
        int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
        free(dir);
    }
}

long imgpu_batch_commit(const char *outdir, const imgpu_batch_record *r, size_t n,
                        imgpu_batch_fail_fn on_fail, void *ctx)
{
    imgpu_manifest *mf = imgpu_manifest_open(outdir);
    if (!mf)   /* a symbolic link, a second hard link, not a regular file */
        return -1;
    long put = 0;
    unsigned char *ok = calloc(n ? n : 1, 1);
    if (!ok) {
        imgpu_manifest_close(mf);
        return imgpu_error("out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        imgpu_error_clear();
        if (commit_one(mf, outdir, &r[i]) == 0) {
            ok[i] = 1;
            put++;
        } else if (on_fail) {
            on_fail(ctx, r[i].in, imgpu_error_message());
        }
    }
    sync_folders(r, n, ok);
    free(ok);
    if (imgpu_manifest_close(mf) < 0 && on_fail)   /* the journal's final sync */
        on_fail(ctx, outdir, imgpu_error_message());
    return put;
}

static int batch_run(int argc, char **argv, int lib, imgpu_batch_summary *sum, batch_split *sp)
{
    imgpu_batch_summary counts = {0, 0, 0, 0, 0};
    bopts o;
    joblist l;
    imgpu_manifest *mf = NULL;
    int rc = EXIT_FAIL, explicit_device = 0, legacy = 0, stale = 0;
    memset(&o, 0, sizeof o);
    memset(&l, 0, sizeof l);
    o.device = IMGPU_DEVICE_AUTO;
    o.run = imgpu_run_options_default();
    o.run.save.no_follow = 1;   /* an output never leaves OUTDIR through a planted link */
    o.shard_k = o.shard_n = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        if (!lib && (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))) {
            fputs(s_help, stdout);
            imgpu_opt_help_batch_ops(stdout);
            fputs(s_help_rest, stdout);
            return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
        }
        if (!strncmp(argv[i], "--device", 8) && (argv[i][8] == '\0' || argv[i][8] == '='))
            explicit_device = 1;
    }
    if (parse_args(argc - 1, argv + 1, &o) < 0) {
        if (!lib)
            fprintf(stderr, "imgpu: %s\ntry 'imgpu batch --help'\n", imgpu_usage_message());
        free(o.inputs);
        return EXIT_USAGE;
    }
    if (lib)
        o.quiet = 1;   /* in-process: no progress bar, no summary lines (the caller gets the counts) */
    /* IMGPU_MAX_* fill in the limits no option set, as for the single-image commands (batch
     * ignored them: IMGPU_MAX_DECODE_TIME did not bound a batch's decodes). */
    if (imgpu_load_options_from_env(&o.run.load) < 0) {
        free(o.inputs);
        return usage_error(lib, imgpu_error_message());
    }
    if (o.ndevices && !explicit_device)
        o.device = IMGPU_DEVICE_CUDA;
    else if (!explicit_device && imgpu_device_from_env(&o.device) < 0) {   /* IMGPU_DEVICE */
        free(o.inputs);
        return usage_error(lib, imgpu_error_message());
    }
    if (o.ndevices && o.device == IMGPU_DEVICE_CPU) {
        free(o.inputs);
        return usage_error(lib, "--devices contradicts --device cpu");
    }
    imgpu_limits lim = {o.run.load.max_pixels, o.run.max_memory};
    if (imgpu_limits_from_env(&lim) < 0) {
        free(o.inputs);
        return usage_error(lib, imgpu_error_message());
    }
    imgpu_set_limits(&lim); /* before any thread starts */
    if (!lib)   /* the process's allocator is the caller's in-process */
        imgpu_batch_tune_allocator();
    if (!lib)
        imgpu_set_quiet(o.quiet);
    if (o.format) {   /* one output format: output options it does not use are named once */
        char probe[32];
        snprintf(probe, sizeof probe, "x.%s", o.format);
        imgpu_save_options_note_ignored(&o.run.save, imgpu_format_from_path(probe));
    }
    imgpu__batch_set_tty(isatty(STDERR_FILENO));
    if (!o.jobs)
        o.jobs = imgpu__batch_cores();
    /* A batch that insists on the GPU starts CUDA now, so its start-up overlaps the folder
     * walk; `auto` decides after the plan (the set-up rule, below). */
    const int gpu_early = !o.stage_copy && !o.dry_run && !(sp && sp->on_todo) && (o.device == IMGPU_DEVICE_CUDA || o.ndevices);
    if (gpu_early)
        imgpu_backend_prepare(o.device);

    /* OUTDIR: created unless this is a dry run */
    struct stat ost;
    int have_out = stat(o.outdir, &ost) == 0;
    if (have_out && !S_ISDIR(ost.st_mode)) {
        imgpu_error("output folder '%s' is not a folder", o.outdir);
        goto fail;
    }
    if (!have_out && !o.dry_run) {
        if (make_outdir(o.outdir) < 0)
            goto fail;
        have_out = stat(o.outdir, &ost) == 0;
    }

    l.quiet = o.quiet;
    if (sp && sp->pairs) {   /* a staged run: the files given, no manifest */
        if (imgpu__batch_given(&o, &l, sp->pairs, sp->npairs) < 0)
            goto fail;
        goto planned;
    }
    for (int i = 0; i < o.ninputs; i++)
        if (imgpu__batch_add_input(&l, o.inputs[i], have_out ? &ost : NULL, 0) < 0)
            goto fail;
    if (l.n) /* no input matched: l.v is NULL, and qsort(NULL, 0, ...) is undefined */
        qsort(l.v, l.n, sizeof *l.v, imgpu__batch_cmp_job);
    /* the same path given twice (a file and its folder) is one input */
    size_t u = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (u && !strcmp(l.v[u - 1].in, l.v[i].in)) {
            free(l.v[i].in);
            free(l.v[i].rel);
            continue;
        }
        l.v[u++] = l.v[i];
    }
    l.n = u;
    /* the shard: every N-th file of the sorted list, starting at the K-th */
    if (o.shard_n > 1) {
        size_t k = 0;
        for (size_t i = 0; i < l.n; i++) {
            if (i % (size_t)o.shard_n == (size_t)(o.shard_k - 1)) {
                l.v[k++] = l.v[i];
            } else {
                free(l.v[i].in);
                free(l.v[i].rel);
            }
        }
        l.n = k;
    }
    if (imgpu__batch_plan(&o, &l) < 0)
        goto fail;
    if (!(mf = imgpu_manifest_open(o.outdir)) || imgpu__batch_manifest_plan(&o, &l, mf, &legacy) < 0)
        goto fail;
    if (legacy)
        imgpu_notice("%d existing output%s in '%s' %s made before imgpu recorded what made its "
                     "outputs (%s): skipped as before, whatever their settings; --overwrite "
                     "remakes them", legacy, legacy == 1 ? "" : "s", o.outdir,
                     legacy == 1 ? "was" : "were", IMGPU_MANIFEST_NAME);

planned:;
    batch B;
    memset(&B, 0, sizeof B);
    B.o = &o;
    B.jobs = o.jobs;
    B.mf = mf;
    B.split = sp && sp->pairs ? sp : NULL;
    B.st.quiet = o.quiet;
    B.st.interval = 5.0;
    const char *iv = getenv("IMGPU_PROGRESS_INTERVAL");
    if (iv && *iv)
        B.st.interval = atof(iv);
    if (!(B.todo = calloc(l.n ? l.n : 1, sizeof *B.todo))) {
        imgpu_error("out of memory");
        goto fail;
    }
    int plan_failed = 0;
    int stale_kind[3] = {0, 0, 0};   /* other settings, input changed, no record */
    const bjob *stale_first[3] = {NULL, NULL, NULL};
    B.st.skipped = l.special;
    char in_shown[4096], out_shown[4096];   /* dry-run lines: names escaped (error.h) */
    for (size_t i = 0; i < l.n; i++) {
        bjob *j = &l.v[i];
        if (j->why) {
            imgpu__batch_failed(j->in, j->why, "failed '%s': %s", j->in, j->why);
            plan_failed++;
        } else if (j->stale) {
            stale++;
            const int kind = j->stale == IMGPU_MANIFEST_OTHER_SETTINGS ? 0
                             : j->stale == IMGPU_MANIFEST_INPUT_CHANGED ? 1 : 2;
            if (!stale_kind[kind]++)
                stale_first[kind] = j;
            if (o.verbose)
                report_stale(j);
            if (o.dry_run)
                printf("stale %s -> %s (%s)\n", imgpu_escape(j->in, in_shown, sizeof in_shown),
                       imgpu_escape(j->out, out_shown, sizeof out_shown),
                       j->stale == IMGPU_MANIFEST_OTHER_SETTINGS ? "other settings"
                       : j->stale == IMGPU_MANIFEST_INPUT_CHANGED ? "input changed" : "unknown origin");
        } else if (j->skip) {
            B.st.skipped++;
            if (o.dry_run)
                printf("skip %s -> %s (exists)\n", imgpu_escape(j->in, in_shown, sizeof in_shown),
                       imgpu_escape(j->out, out_shown, sizeof out_shown));
        } else {
            B.todo[B.ntodo++] = j;
            if (sp && sp->on_todo)
                sp->on_todo(sp->ctx, j->in, j->out);
            if (o.dry_run)
                printf("%s -> %s\n", imgpu_escape(j->in, in_shown, sizeof in_shown),
                       imgpu_escape(j->out, out_shown, sizeof out_shown));
        }
    }
    if (stale && !o.verbose) {
        /* one line, however many: a folder of 42 outputs made otherwise printed 42 */
        if (stale == 1) {
            report_stale(stale_first[0] ? stale_first[0] : stale_first[1] ? stale_first[1] : stale_first[2]);
        } else {
            /* names go in raw: imgpu__batch_report escapes what it prints (error.h) */
            char what[3][600];
            const bjob *const *f = stale_first;
            snprintf(what[0], sizeof what[0], "%d made with other settings, as '%s' (%s)", stale_kind[0],
                     f[0] ? f[0]->out : "", f[0] && f[0]->recorded ? f[0]->recorded : "");
            snprintf(what[1], sizeof what[1], "%d from inputs changed since, as '%s'", stale_kind[1],
                     f[1] ? f[1]->out : "");
            snprintf(what[2], sizeof what[2], "%d with no record of what made them, as '%s'", stale_kind[2],
                     f[2] ? f[2]->out : "");
            char list[1900] = "";
            for (int k = 0; k < 3; k++)
                if (stale_kind[k]) {
                    size_t used = strlen(list);
                    snprintf(list + used, sizeof list - used, "%s%s", used ? "; " : "", what[k]);
                }
            imgpu__batch_report("%d outputs in '%s' were made otherwise than this run would make them and are "
                                "kept: %s; use --overwrite to replace them, --verbose to name each", stale,
                                o.outdir, list);
        }
    }
    atomic_init(&B.st.failed, plan_failed + l.input_errors);
    B.st.failed_before = plan_failed + l.input_errors;
    B.st.total = (int)B.ntodo;
    char stale_s[96] = "";   /* in the summaries only when some are */
    if (stale)
        snprintf(stale_s, sizeof stale_s, ", %d stale (made otherwise; --overwrite replaces them)",
                 stale);
    if (o.dry_run || (sp && sp->on_todo)) {   /* a dry run, or a plan: nothing run */
        if (!o.quiet)
            fprintf(stderr, "imgpu batch: dry run: %zu to write, %d skipped (%s), %d failed%s\n",
                    B.ntodo, B.st.skipped, l.special ? "exist, or not regular files" : "exist",
                    atomic_load(&B.st.failed), stale_s);
        free(B.todo);
        counts = (imgpu_batch_summary){(int)B.ntodo, B.st.skipped, atomic_load(&B.st.failed), stale, 0};
        rc = fflush(stdout) == 0 && atomic_load(&B.st.failed) == 0 && !stale ? EXIT_OK : EXIT_FAIL;
        goto done;
    }

    /* The op stage: on the GPU workers when CUDA is used, else on the decode threads; decided
     * in imgpu__batch_run_pipeline, after the decode threads have started. */
    /* GPU workers: each listed id (the default GPU without --devices) gets jobs / (8 x ids)
     * of them, 1 to 4. A worker's thread also stages every image through pinned memory (three
     * host copies of it), and among 2 x jobs busy codec threads one such thread per GPU got too
     * little CPU to keep up on 32 cores (H200 run, bench/RESULTS.md). */
    int nids = o.ndevices ? o.ndevices : 1;
    int per_id = o.jobs / (8 * nids);
    per_id = per_id < 1 ? 1 : per_id > 4 ? 4 : per_id;
    if (o.ndevices * per_id > MAX_DEVICES)
        per_id = 1;
    if (o.ndevices) {
        for (int i = o.ndevices - 1; i >= 0; i--)
            for (int k = 0; k < per_id; k++)
                o.devices[i * per_id + k] = o.devices[i];
        o.ndevices *= per_id;
    }
    /* With `auto`, CUDA's start-up begins here, on a background thread, and overlaps the
     * decoding of the first images, unless the CPU finishes the batch first (the set-up rule,
     * imgpu__batch_auto_cpu); --device cuda and --devices began it before the walk. */
    if (!imgpu__batch_auto_cpu(&B) && !o.stage_copy && !gpu_early)
        imgpu_backend_prepare(o.device);
    int planned = (o.device == IMGPU_DEVICE_CPU && !o.stage_copy) || B.auto_cpu ? 0 : nids * per_id;
    B.st.t0 = B.st.last_print = imgpu__batch_now();
    atomic_init(&B.next, 0);
    if (!lib)   /* in-process, the caller's handlers stay */
        imgpu__batch_catch_stop_signals();
    if (B.ntodo > 0 && imgpu__batch_run_pipeline(&B, planned) < 0) {
        free(B.todo);
        goto fail;
    }
    imgpu__batch_progress(&B.st, 1);
    double el = imgpu__batch_now() - B.st.t0;
    int done_n = atomic_load(&B.st.done), failed_n = atomic_load(&B.st.failed);
    counts = (imgpu_batch_summary){done_n, B.st.skipped, failed_n, stale, 0};
    const int stop_sig = imgpu__batch_stop_signal();
    if (stop_sig) {
        /* Said even with --quiet: the user asked for the stop and must learn where it left off. */
        int left = B.st.total - (done_n + failed_n - B.st.failed_before);
        fprintf(stderr, "imgpu batch: interrupted (%s) after %.2f s: %d done, %d skipped, %d failed, "
                "%d not started; run the same command again to finish them (outputs already "
                "written are skipped)\n", stop_sig == SIGINT ? "Ctrl-C" : "SIGTERM", el,
                done_n, B.st.skipped, failed_n, left < 0 ? 0 : left);
        free(B.todo);
        rc = 128 + stop_sig;
        goto done;
    }
    if (l.not_images && !o.quiet) {
        /* never silent: a folder of files with other extensions says so, with the summary */
        char names[600] = "";
        for (int k = 0; k < l.not_images && k < 3; k++) {
            size_t nl = strlen(names);
            char esc[200];
            snprintf(names + nl, sizeof names - nl, "%s'%s'", k ? ", " : "",
                     l.not_image_names[k] ? imgpu_escape(l.not_image_names[k], esc, sizeof esc) : "?");
        }
        fprintf(stderr, "imgpu batch: %d file%s in the input folders %s not images by extension "
                "(%s%s)\n", l.not_images, l.not_images == 1 ? "" : "s",
                l.not_images == 1 ? "is" : "are", names, l.not_images > 3 ? ", ..." : "");
    }
    if (!o.quiet) {
        double mb = (double)atomic_load(&B.st.in_bytes) / 1e6;
        /* why a batch `auto` kept on the CPU did so: where no GPU is there at all, that is the
         * reason, not the count of images (a resumed batch on a laptop) */
        char cpu_why[160] = "ops on the CPU: too few images for a GPU's start-up";
        if (B.auto_cpu) {
            char why[120];
            if (imgpu_backend_gpu_absent(why, sizeof why))
                snprintf(cpu_why, sizeof cpu_why, "ops on the CPU: %s", why);
        }
        fprintf(stderr, "imgpu batch: %d done, %d skipped, %d failed%s in %.2f s: %.2f images/s, "
                "%.1f MB/s (%.1f MB read, %.1f MB written; %s)\n", done_n, B.st.skipped, failed_n,
                stale_s, el,
                el > 0 ? done_n / el : 0.0, el > 0 ? mb / el : 0.0, mb,
                (double)atomic_load(&B.st.out_bytes) / 1e6,
                B.ntodo == 0 ? "nothing to run" : o.stage_copy ? "stage: plain copy"
                : B.use_gpu_stage ? "ops on the GPU"
                : B.auto_cpu ? cpu_why : "ops on the CPU");
        const char *prof = getenv("IMGPU_BATCH_PROFILE");
        if (prof && !strcmp(prof, "1"))   /* bench aid: thread-seconds summed over each stage's threads */
            fprintf(stderr, "imgpu batch: profile (thread-seconds): nvJPEG set-up %.3f, read + check + CPU "
                    "decode %.3f, nvJPEG decode %.3f, GPU ops + encode + download %.3f, write %.3f\n",
                    atomic_load(&B.st.t_setup) / 1e6,
                    atomic_load(&B.st.t_read) / 1e6, atomic_load(&B.st.t_gpu_decode) / 1e6,
                    atomic_load(&B.st.t_gpu_ops) / 1e6, atomic_load(&B.st.t_write) / 1e6);
        /* where the JPEGs went: what a user (and batch_nvjpeg.py) checks */
        if (imgpu_session_jpeg_built_in() && B.use_gpu_stage && B.njpeg) {
            const int first = atomic_load(&B.st.jpeg_first);
            char why[160] = "";
            if (B.nvjpeg_from == B.ntodo)
                snprintf(why, sizeof why, " (%zu JPEG%s, no more than the %ld worth nvJPEG's set-up: "
                         "IMGPU_NVJPEG_CPU_FIRST)", B.njpeg, B.njpeg == 1 ? "" : "s", B.jpeg_first_n);
            else if (first)
                snprintf(why, sizeof why, " (the first %d while nvJPEG set up)", first);
            const int turned = atomic_load(&B.st.jpeg_turned);
            char turned_s[64] = "";
            if (turned)
                snprintf(turned_s, sizeof turned_s, "; %d turned upright on the GPU (EXIF orientation)", turned);
            fprintf(stderr, "imgpu batch: JPEG (nvJPEG): %d decoded by the GPU's hardware engines, %d by "
                    "its CUDA decoder, %d on the CPU%s; %d encoded on the GPU%s\n", atomic_load(&B.st.jpeg_hw),
                    atomic_load(&B.st.jpeg_cuda), atomic_load(&B.st.jpeg_cpu) + first, why,
                    atomic_load(&B.st.jpeg_enc), turned_s);
        }
    }
    free(B.todo);
    rc = failed_n || stale ? EXIT_FAIL : EXIT_OK;
    goto done;
fail:
    if (lib) {   /* in-process: the caller raises it (the usage message holds it) */
        imgpu_usage_bad("%s", imgpu_error_message());
        counts.fatal = 1;
    }
    else
        imgpu__batch_report("%s", imgpu_error_message());
    rc = EXIT_FAIL;
done:
    if (imgpu_manifest_close(mf) < 0) {
        imgpu__batch_report("%s", imgpu_error_message());
        if (rc == EXIT_OK)
            rc = EXIT_FAIL;
    }
    imgpu__batch_free_jobs(&l);
    free(o.inputs);
    if (sum)
        *sum = counts;
    if (lib)   /* in-process: CUDA and its state stay for the next call */
        return rc;
    if (imgpu_backend_shutdown()) {   /* CUDA still starting, unused: do not wait for it */
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    return rc;
}

