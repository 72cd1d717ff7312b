/* batch.c — `imgpu batch [OPS] -o OUTDIR INPUTS...`: one op pipeline over many files.
 *
 * The work flows through three stages joined by bounded queues (batch_queue.c):
 *
 *   decode threads (--jobs)  ->  GPU stage (one thread per --devices entry,  ->  encode threads (--jobs)
 *   read + decode, or the        two CUDA sessions each, alternating)           encode (PNG in strips on
 *   ops too on the CPU backend                                                  several threads) + atomic write
 *
 * Memory is bounded by tokens, not by the input count: a decode thread takes a token before it
 * reads a file and the encode thread gives it back after the write, so at most
 * 2 x jobs + 4 x GPU workers images are alive at once (each as its input and/or its result),
 * whether the batch has ten files or a million.
 *
 * The GPU stage hides behind the codecs by double buffering: with two sessions A and B (each
 * its own stream, pinned staging and device buffers, reused across images), the worker uploads
 * image k+1 on B and enqueues its kernels, then downloads image k from A, which waits on A's
 * stream only; so the upload of k+1, the kernels of k and the download of k-1 overlap.
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
#include "batch.h"
#include "batch_manifest.h"
#include "cli_values.h"
#include "error.h"
#include "image.h"
#include "io.h"
#include "ops.h"
#include "options.h"
#ifdef IMGPU_HAVE_CUDA
#include "cuda/cuda_backend.h"
#include "cuda/devices.h"
#endif

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
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

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };
#define MAX_OPS 32
#define MAX_DEVICES 64   /* GPU workers (listed ids, each repeated per_id times) */
#define IMGPU_BATCH_LATER 16   /* >= IMGPU_JPEG_BATCH: what one nvJPEG batch gathers */

/* ---- options ---------------------------------------------------------------------------- */

typedef struct bopts {
    imgpu_op ops[MAX_OPS];
    int nops;
    const char *outdir;
    const char *format;      /* --format: output extension; NULL keeps each input's */
    const char *name;        /* --name template */
    int overwrite, dry_run, quiet, jobs, stage_copy;
    int shard_k, shard_n;    /* 1-based K of N; N = 1: everything */
    imgpu_device device;
    int devices[MAX_DEVICES], ndevices;
    imgpu_run_options run;   /* limits, --depth and the output options, from options.h's table */
    char **inputs;
    int ninputs;
} bopts;

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
    "operations, applied in the order given (each option after an op sets that op):\n"
    "  --equalize           histogram equalization; --mode luminance|per-channel,\n"
    "                       --formula opencv|pil|imagemagick (as 'imgpu equalize')\n"
    "  --clahe              CLAHE (as 'imgpu clahe'); --clip X, --tiles WxH, --mode\n"
    "  --rotate DEG         rotation; --filter nearest|bilinear|bicubic, --expand|--crop,\n"
    "                       --background COLOR (as for 'imgpu rotate')\n"
    "output:\n"
    "  -o, --output DIR     output folder (created when missing; required)\n"
    "  --format EXT         output format: png, jpg, jpeg, tif, tiff, webp, bmp, tga, pnm, pgm,\n"
    "                       ppm (default: each input's own extension)\n"
    "  --name TEMPLATE      output name (default '{stem}.{ext}'): {stem} is the input's name\n"
    "                       without extension, {ext} the output extension; subfolders are\n"
    "                       allowed, absolute names and '..' are refused\n"
    "  --overwrite          replace existing outputs (default: skip them, so re-running a\n"
    "                       command resumes it)\n"
    "  --dry-run            list what would be written, write nothing\n"
    "  --quality N, --subsampling 444|422|420, --progressive, --optimize, --png-level N,\n"
    "  --compression KIND, --lossless, --background COLOR, --strip   how outputs are written,\n"
    "                       as for single images (default: quality 92, WebP 75, 4:2:0, the\n"
    "                       input's ICC profile, EXIF, XMP and PNG text kept)\n"
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
    "  --max-memory N       refuse an image whose ops would need more than N bytes of\n"
    "                       memory (K, M, G suffixes; default 8G; env IMGPU_MAX_MEMORY)\n"
    "  --max-file-size N    refuse input files over N bytes (K, M, G suffixes; default 1G)\n"
    "  --max-decode-time S  give up decoding a file after S seconds (default 30)\n"
    "                       (each limit fails the file alone; environment: IMGPU_MAX_PIXELS,\n"
    "                       IMGPU_MAX_FILE_SIZE, IMGPU_MAX_DECODE_TIME; an option wins)\n"
    "  --no-auto-orient     keep stored pixels and EXIF orientation (default: upright)\n"
    "  --page N             the page of multi-page TIFFs to read (default 0)\n"
    "  --quiet              no progress and no summary (errors are still printed)\n"
    "  -h, --help           this help\n"
    "A file that fails is reported with its reason and the batch goes on; the summary gives\n"
    "done, skipped, failed, images/s and MB/s (input bytes). Ctrl-C (or SIGTERM) starts no\n"
    "new file, finishes those in flight and says how many are left; the same command resumes\n"
    "(a second Ctrl-C stops at once). Exit status: 0 all done or skipped, 1 any file failed,\n"
    "2 usage error, 130 (143) interrupted by Ctrl-C (SIGTERM).\n";

/* A usage problem found while parsing (options.h's one helper). */
#define bad imgpu_usage_bad

/* The op an option of options.h's table sets: the latest op of a kind it names (--mode: the
 * latest of --equalize and --clahe), so an op's options follow it. */
static imgpu_op *last_op(bopts *b, const imgpu_opt *o)
{
    static const char *const names[] = {[IMGPU_OP_EQUALIZE] = "equalize", [IMGPU_OP_ROTATE] = "rotate",
                                        [IMGPU_OP_CLAHE] = "clahe"};
    for (int i = b->nops - 1; i >= 0; i--)
        if (o->sets & IMGPU_OPT_OP(b->ops[i].kind))
            return &b->ops[i];
    char follow[64] = "";
    for (int k = 0; k < 3; k++) {
        if (!(o->sets & IMGPU_OPT_OP(k)))
            continue;
        size_t n = strlen(follow);
        snprintf(follow + n, sizeof follow - n, "%s--%s", n ? " or " : "", names[k]);
    }
    bad("--%s must follow %s", o->name, follow);
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

/* An extension of a format in the codec table (io.h), any case. */
static int known_ext(const char *ext)
{
    char probe[32];
    if (strlen(ext) > 16 || strchr(ext, '/'))
        return 0;
    snprintf(probe, sizeof probe, "x.%s", ext);
    return imgpu_format_from_path(probe) != IMGPU_FORMAT_UNKNOWN;
}

/* A name's components: refuse an absolute name and any ".." (and empty names). */
static const char *name_rule(const char *name)
{
    if (!*name)
        return "the output name is empty";
    if (name[0] == '/')
        return "absolute output names are refused (outputs stay inside OUTDIR)";
    for (const char *p = name; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return "output names with a '..' component are refused (outputs stay inside OUTDIR)";
        p += n;
        while (*p == '/')
            p++;
    }
    if (name[strlen(name) - 1] == '/')
        return "the output name ends in '/'";
    return NULL;
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
        else
            return bad("invalid --name '%s': unknown placeholder at '%.12s' (use {stem} and {ext})", t, p);
    }
    const char *why = name_rule(t);
    if (why)
        return bad("invalid --name '%s': %s", t, why);
    return 0;
}

static int parse_args(int argc, char **argv, bopts *b)
{
    int end = 0;
    int canvas_op = -1, canvas_id = -1;   /* the last --expand/--crop: which op, which one */
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
        const imgpu_opt *so = imgpu_opt_find(name, strlen(name), IMGPU_FRONT_BATCH);
        int takes = so && so->metavar;
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
        if (so) {
            /* an op option: a new op (--equalize, --clahe, --rotate DEG), the latest op's
             * parameter, or a limit / --depth */
            imgpu_op fresh, *op = NULL;
            if (so->sets & IMGPU_OPT_ADD)
                op = &fresh;
            else if (so->sets & IMGPU_OPT_SAVE) {
                /* an output option; --background also fills the latest rotation, if any */
                for (int k = b->nops - 1; k >= 0 && !op; k--)
                    if (so->sets & IMGPU_OPT_OP(b->ops[k].kind))
                        op = &b->ops[k];
            } else if (!(so->sets & IMGPU_OPT_RUN) && !(op = last_op(b, so)))
                return -1;
            if (imgpu_opt_apply(so, v, op, &b->run) < 0)
                return -1;
            if (so->id == IMGPU_OPT_ID_EXPAND || so->id == IMGPU_OPT_ID_CROP) {
                /* as the single command: both on one rotation is a contradiction, not "last wins" */
                if (canvas_op == b->nops - 1 && canvas_id != (int)so->id)
                    return bad("--expand and --crop contradict each other");
                canvas_op = b->nops - 1;
                canvas_id = (int)so->id;
            }
            if ((so->sets & IMGPU_OPT_ADD) && add_op(b, fresh) < 0)
                return -1;
        } else if (!strcmp(name, "output")) {
            if (!*v)
                return bad("-o needs a folder");
            b->outdir = v;
        } else if (!strcmp(name, "format")) {
            if (!known_ext(v))
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
            if (!strcmp(v, "auto")) b->device = IMGPU_DEVICE_AUTO;
            else if (!strcmp(v, "cpu")) b->device = IMGPU_DEVICE_CPU;
            else if (!strcmp(v, "cuda")) b->device = IMGPU_DEVICE_CUDA;
            else return bad("invalid --device '%s' (use auto, cpu or cuda)", v);
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
        } else if (!strcmp(name, "stage-copy")) {
            b->stage_copy = 1;
        } else {
            return bad("unknown option '%s'", a);
        }
    }
    if (!b->outdir)
        return bad("batch needs -o OUTDIR");
    if (b->ninputs == 0)
        return bad("batch needs at least one input (files, folders or globs)");
    if (b->nops == 0 && !b->stage_copy)
        return bad("batch needs at least one operation (--equalize, --clahe, --rotate DEG)");
    return 0;
}

/* ---- inputs ------------------------------------------------------------------------------ */

typedef struct bjob {
    char *in;       /* input path as found */
    char *rel;      /* subfolder under a directory input ("" or "a/b/") */
    char *out;      /* output path, or NULL when planning failed */
    const char *why;/* planning failure (static or owned in why_buf) */
    char *why_buf;
    int skip;       /* output exists (no --overwrite) */
    off_t in_size;
    long long in_mtime; /* ns; with in_size, the input's identity in the manifest */
    const char *settings; /* what makes this output (batch_manifest.h): joblist's, by format */
    int stale;      /* an imgpu_manifest_state: the existing output was made otherwise */
    const char *recorded; /* its recorded settings (IMGPU_MANIFEST_OTHER_SETTINGS) */
} bjob;

typedef struct joblist {
    bjob *v;
    size_t n, cap;
    int input_errors;   /* inputs that did not exist or could not be read */
    int special;        /* FIFOs, devices, sockets with an image name in a folder: skipped */
    int not_images;     /* files in a folder whose extension names no image format */
    char *not_image_names[3];   /* the first few, for the summary */
    int quiet;
    char *settings[8];  /* the manifest's settings string, by output format (imgpu_format) */
} joblist;

static int add_job(joblist *l, const char *path, const char *rel)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        bjob *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return imgpu_error("out of memory");
        l->v = v;
        l->cap = cap;
    }
    bjob *j = &l->v[l->n];
    memset(j, 0, sizeof *j);
    j->in = strdup(path);
    j->rel = strdup(rel);
    if (!j->in || !j->rel) {
        free(j->in);
        free(j->rel);
        return imgpu_error("out of memory");
    }
    l->n++;
    return 0;
}

static const char *ext_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot != base ? dot + 1 : NULL;
}

static void report(const char *fmt, ...) IMGPU_PRINTF(1, 2);

/* Directory walk: image files by extension; hidden entries (also io.c's ".NAME.XXXXXX" temp
 * files of an interrupted run) and OUTDIR itself are skipped; links to folders are not followed
 * (no cycles). Only regular files (or links to them) are taken: a FIFO or a device with an
 * image's name is skipped and reported, since reading it could wait on a writer (a file
 * named on the command line is read, under the decode-time limit). */
static int walk(joblist *l, const char *dir, const char *rel, const struct stat *outdir_st)
{
    DIR *d = opendir(dir);
    if (!d) {
        report("cannot read folder '%s': %s", dir, strerror(errno));
        l->input_errors++;
        return 0;
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        size_t pl = strlen(dir) + strlen(e->d_name) + 2, rl = strlen(rel) + strlen(e->d_name) + 2;
        char *path = malloc(pl), *sub = malloc(rl);
        if (!path || !sub) {
            free(path);
            free(sub);
            rc = imgpu_error("out of memory");
            break;
        }
        snprintf(path, pl, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
        struct stat st, lst;
        if (lstat(path, &lst) == 0 && !S_ISLNK(lst.st_mode) && S_ISDIR(lst.st_mode)) {
            if (!(outdir_st && lst.st_dev == outdir_st->st_dev && lst.st_ino == outdir_st->st_ino)) {
                snprintf(sub, rl, "%s%s/", rel, e->d_name);
                rc = walk(l, path, sub, outdir_st);
            }
        } else if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
            const char *x = ext_of(e->d_name);
            if (x && known_ext(x) && S_ISREG(st.st_mode)) {
                rc = add_job(l, path, rel);
            } else if (!x || !known_ext(x)) {
                if (l->not_images < 3)
                    l->not_image_names[l->not_images] = strdup(path);
                l->not_images++;
            } else {
                l->special++;
                if (!l->quiet)
                    report("skipped '%s': not a regular file (%s)", path,
                           S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) ? "a character device"
                           : S_ISBLK(st.st_mode) ? "a block device" : S_ISSOCK(st.st_mode) ? "a socket"
                           : "a special file");
            }
        }
        free(path);
        free(sub);
    }
    closedir(d);
    return rc;
}

static int add_input(joblist *l, const char *arg, const struct stat *outdir_st, int globbed)
{
    struct stat st;
    if (stat(arg, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return walk(l, arg, "", outdir_st);
        return add_job(l, arg, "");
    }
    if (!globbed && strpbrk(arg, "*?[")) {
        glob_t g;
        int grc = glob(arg, 0, NULL, &g);
        if (grc == GLOB_NOMATCH) {
            report("no file matches '%s'", arg);
            l->input_errors++;
            return 0;
        }
        if (grc != 0) {
            report("cannot expand '%s'", arg);
            l->input_errors++;
            return 0;
        }
        int rc = 0;
        for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++)
            rc = add_input(l, g.gl_pathv[i], outdir_st, 1);
        globfree(&g);
        return rc;
    }
    report("cannot read '%s': %s", arg, strerror(errno));
    l->input_errors++;
    return 0;
}

static int cmp_job(const void *a, const void *b)
{
    const bjob *x = a, *y = b;
    int c = strcmp(x->in, y->in);
    return c ? c : strcmp(x->rel, y->rel);
}

/* ---- planning: names, path rules, resume ------------------------------------------------ */

typedef struct devino {
    dev_t dev;
    ino_t ino;
} devino;

static int cmp_devino(const void *a, const void *b)
{
    const devino *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static char *make_name(const bopts *b, const bjob *j, const char **why)
{
    const char *slash = strrchr(j->in, '/');
    const char *base = slash ? slash + 1 : j->in;
    const char *x = ext_of(base);
    size_t stem_len = x ? (size_t)(x - 1 - base) : strlen(base);
    const char *ext = b->format ? b->format : x;
    const char *t = b->name ? b->name : "{stem}.{ext}";
    if (!ext || !known_ext(ext)) {
        *why = "cannot tell the output format from the input's extension (use --format)";
        return NULL;
    }
    size_t cap = strlen(t) + 1, k = 0;
    for (const char *p = t; *p; p++)
        if (*p == '{')
            cap += stem_len + strlen(ext);
    char *name = malloc(cap);
    if (!name) {
        *why = "out of memory";
        return NULL;
    }
    for (const char *p = t; *p;) {
        if (!strncmp(p, "{stem}", 6)) {
            memcpy(name + k, base, stem_len);
            k += stem_len;
            p += 6;
        } else if (!strncmp(p, "{ext}", 5)) {
            memcpy(name + k, ext, strlen(ext));
            k += strlen(ext);
            p += 5;
        } else {
            name[k++] = *p++;
        }
    }
    name[k] = '\0';
    if ((*why = name_rule(name)) != NULL) {
        free(name);
        return NULL;
    }
    const char *ox = ext_of(name);
    if (!ox || !known_ext(ox)) {
        *why = "the output name has no known image extension (.png, .jpg, .bmp, .tga, .pnm, ...)";
        free(name);
        return NULL;
    }
    return name;
}

/* By output name, then by position in the (sorted) job list. */
static int cmp_out(const void *a, const void *b)
{
    const bjob *x = *(const bjob *const *)a, *y = *(const bjob *const *)b;
    int c = strcmp(x->out, y->out);
    return c ? c : (x < y ? -1 : x > y);
}

static int plan(const bopts *b, joblist *l)
{
    /* every input's identity, to refuse an output that is an input */
    devino *ids = calloc(l->n ? l->n : 1, sizeof *ids);
    bjob **byout = calloc(l->n ? l->n : 1, sizeof *byout);
    size_t nids = 0, nout = 0;
    if (!ids || !byout) {
        free(ids);
        free(byout);
        return imgpu_error("out of memory");
    }
    for (size_t i = 0; i < l->n; i++) {
        struct stat st;
        if (stat(l->v[i].in, &st) == 0) {
            ids[nids++] = (devino){st.st_dev, st.st_ino};
            l->v[i].in_size = st.st_size;
            l->v[i].in_mtime = imgpu_manifest_mtime_ns(&st);
        }
    }
    if (nids) /* qsort(NULL, 0, ...) is undefined */
        qsort(ids, nids, sizeof *ids, cmp_devino);
    for (size_t i = 0; i < l->n; i++) {
        bjob *j = &l->v[i];
        char *name = make_name(b, j, &j->why);
        if (!name)
            continue;
        size_t len = strlen(b->outdir) + strlen(j->rel) + strlen(name) + 2;
        if (!(j->out = malloc(len))) {
            free(name);
            j->why = "out of memory";
            continue;
        }
        snprintf(j->out, len, "%s/%s%s", b->outdir, j->rel, name);
        free(name);
        byout[nout++] = j;
    }
    /* Two inputs that would write one output (a.png and a.jpg with --format png): the first
     * in sorted order wins, the others fail rather than overwrite its result. */
    if (nout)
        qsort(byout, nout, sizeof *byout, cmp_out);
    for (size_t i = 1, g = 0; i < nout; i++) {
        if (strcmp(byout[i]->out, byout[g]->out) != 0) {
            g = i;
        } else {
            const bjob *first = byout[g];
            size_t n = strlen(first->in) + 64;
            if ((byout[i]->why_buf = malloc(n))) {
                snprintf(byout[i]->why_buf, n, "its output is also the output of '%s'", first->in);
                byout[i]->why = byout[i]->why_buf;
            } else {
                byout[i]->why = "its output is also another input's output";
            }
        }
    }
    for (size_t i = 0; i < l->n; i++) {
        bjob *j = &l->v[i];
        struct stat st;
        if (j->why || !j->out || stat(j->out, &st) != 0)
            continue;
        devino key = {st.st_dev, st.st_ino};
        if (bsearch(&key, ids, nids, sizeof *ids, cmp_devino))
            j->why = "its output would overwrite an input file";
        else if (!b->overwrite)
            j->skip = 1;
    }
    free(ids);
    free(byout);
    return 0;
}

/* What OUTDIR's manifest says of each existing output plan() would skip (batch_manifest.h):
 * made with this run's settings from this input: skipped; made otherwise (other settings, a
 * changed input, or no line describes the file): j->stale, neither skipped nor written. In a
 * folder with no manifest yet, existing outputs are skipped as before; unless this is a dry
 * run each gets a line with unknown settings, so later runs keep treating them so.
 * *legacy counts those. Also fills j->settings for every output this run may write. */
static int manifest_plan(const bopts *b, joblist *l, imgpu_manifest *mf, int *legacy)
{
    size_t olen = strlen(b->outdir) + 1;
    *legacy = 0;
    for (size_t i = 0; i < l->n; i++) {
        bjob *j = &l->v[i];
        if (j->why || !j->out)
            continue;
        /* one string per output format, shared by the jobs */
        imgpu_format f = imgpu_format_from_path(j->out);
        size_t fi = (size_t)f < sizeof l->settings / sizeof *l->settings ? (size_t)f : 0;
        if (!l->settings[fi] &&
            !(l->settings[fi] = imgpu_manifest_settings(b->ops, b->stage_copy ? 0 : b->nops, &b->run.save, j->out,
                                                          b->run.out_depth)))
            return imgpu_error("out of memory");
        j->settings = l->settings[fi];
        if (!j->skip)
            continue;
        struct stat in, out;
        if (stat(j->in, &in) != 0 || stat(j->out, &out) != 0)
            continue;   /* gone meanwhile: the pipeline reports it / writes it */
        const char *rel = j->out + olen;
        imgpu_manifest_state s = imgpu_manifest_check(mf, rel, j->settings, &in, &out, &j->recorded);
        if (s == IMGPU_MANIFEST_MATCH)
            continue;
        if (s == IMGPU_MANIFEST_LEGACY) {
            (*legacy)++;
            if (!imgpu_manifest_found(mf) && !b->dry_run &&
                imgpu_manifest_add(mf, rel, IMGPU_MANIFEST_UNKNOWN_SETTINGS, -1, -1, (long long)out.st_size,
                                   imgpu_manifest_mtime_ns(&out)) < 0)
                return -1;
            continue;
        }
        j->skip = 0;
        j->stale = (int)s;
    }
    return 0;
}

/* ---- reporting and progress ------------------------------------------------------------- */

static pthread_mutex_t s_report_lock = PTHREAD_MUTEX_INITIALIZER;
static int s_bar_shown; /* a progress bar is on the terminal's last line */
static int s_tty;

static void report(const char *fmt, ...)
{
    char line[IMGPU_MESSAGE_MAX];   /* file names escaped, a long one shortened (error.h) */
    va_list ap;
    va_start(ap, fmt);
    imgpu_vformat_message(line, sizeof line, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&s_report_lock);
    if (s_bar_shown) {
        fputs("\r\033[K", stderr);
        s_bar_shown = 0;
    }
    fprintf(stderr, "imgpu: %s\n", line);
    pthread_mutex_unlock(&s_report_lock);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef struct stats {
    atomic_int done, failed;
    atomic_int jpeg_hw, jpeg_cuda, jpeg_cpu, jpeg_enc;   /* nvJPEG: who decoded, GPU encodes */
    atomic_int jpeg_first;   /* the first JPEGs, on the CPU by design (jpeg_cpu: refused ones) */
    /* IMGPU_BATCH_PROFILE=1: where the time goes, in thread-microseconds per stage */
    atomic_llong t_read, t_gpu_decode, t_gpu_ops, t_write, t_setup;
    int failed_before;  /* failures found before the pipeline (not in `total`) */
    atomic_llong in_bytes, out_bytes;
    int total, skipped, quiet;
    double t0, last_print, interval;
} stats;

static void fmt_eta(char *buf, size_t n, double s)
{
    if (!isfinite(s) || s < 0)
        snprintf(buf, n, "--:--");
    else if (s >= 3600)
        snprintf(buf, n, "%d:%02d:%02d", (int)s / 3600, (int)s / 60 % 60, (int)s % 60);
    else
        snprintf(buf, n, "%d:%02d", (int)s / 60, (int)s % 60);
}

/* Progress after a file finished: a bar redrawn in place on a terminal (at most 10 times a
 * second), a plain line every `interval` seconds otherwise. */
static void progress(stats *st, int final)
{
    if (st->quiet)
        return;
    pthread_mutex_lock(&s_report_lock);
    double t = now_s();
    int finished = atomic_load(&st->done) + atomic_load(&st->failed) - st->failed_before;
    double min_gap = s_tty ? 0.1 : st->interval;
    if (!final && t - st->last_print < min_gap) {
        pthread_mutex_unlock(&s_report_lock);
        return;
    }
    st->last_print = t;
    double el = t - st->t0, rate = el > 0 ? finished / el : 0;
    char eta[32];
    fmt_eta(eta, sizeof eta, rate > 0 ? (st->total - finished) / rate : NAN);
    if (s_tty) {
        int width = 30, fill = st->total ? (int)((long long)width * finished / st->total) : width;
        char bar[64];
        for (int i = 0; i < width; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[width] = '\0';
        fprintf(stderr, "\r\033[K[%s] %d/%d  %.2f images/s  ETA %s", bar, finished, st->total, rate, eta);
        s_bar_shown = 1;
        if (final) {
            fputc('\n', stderr);
            s_bar_shown = 0;
        }
    } else if (!final) {
        fprintf(stderr, "imgpu batch: %d/%d files, %.2f images/s, ETA %s\n", finished, st->total, rate, eta);
    }
    fflush(stderr);
    pthread_mutex_unlock(&s_report_lock);
}

/* ---- the pipeline ------------------------------------------------------------------------ */

typedef struct item {
    bjob *job;
    imgpu_image *in, *out;
    imgpu_meta *meta;   /* the input's ICC, EXIF, XMP and text: written with the output */
    /* A JPEG for nvJPEG: its bytes, read and checked but not decoded (in is NULL), the
     * decoder that takes it and the shape it decodes to. */
    unsigned char *jpeg;
    size_t jpeg_len;
    int route, w, h, c;
    /* The output already encoded on the GPU (out is NULL): a JPEG bitstream. */
    unsigned char *bits;
    size_t bits_len;
} item;

static void item_free(item *it)
{
    imgpu_meta_free(it->meta);
    imgpu_image_free(it->in);
    imgpu_image_free(it->out);
    free(it->jpeg);
    free(it->bits);
    free(it);
}

typedef struct tokens {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int left; /* below 0 for a while when the op stage turns out to hold no images */
} tokens;

static void token_take(tokens *t)
{
    pthread_mutex_lock(&t->lock);
    while (t->left <= 0)
        pthread_cond_wait(&t->cv, &t->lock);
    t->left--;
    pthread_mutex_unlock(&t->lock);
}

static void token_give(tokens *t)
{
    pthread_mutex_lock(&t->lock);
    t->left++;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->lock);
}

typedef struct batch {
    const bopts *o;
    bjob **todo;             /* the files to process, in order */
    size_t ntodo;
    atomic_size_t next;      /* the decode threads' cursor into todo */
    imgpu__queue *to_gpu, *to_enc;
    tokens tok;
    stats st;
    /* The op stage is decided once CUDA's start-up (begun before the folder walk) answers.
     * The decode threads start before that and wait for the decision only with their first
     * image in hand, so the start-up overlaps decoding. */
    pthread_mutex_t stage_lock;
    pthread_cond_t stage_cv;
    atomic_int stage;        /* STAGE_PENDING, STAGE_DECIDED or STAGE_ABORT */
    int use_gpu_stage;       /* 0: decode threads run the ops (CPU backend); set before stage */
    atomic_int gpu_workers_alive;
    atomic_int busy_encoders;
    atomic_int sticky_seen;  /* a sticky GPU fault was reported (one file failed for it) */
    int jobs;
    /* nvJPEG's set-up costs ~1 s (bench/nvjpeg_setup.c): the first `jpeg_first_n` JPEGs are
     * decoded on the CPU while it runs, and a batch with no more JPEGs than that never sets it
     * up. todo[nvjpeg_from] is the first JPEG nvJPEG may take (ntodo: none). */
    size_t nvjpeg_from, njpeg;
    long jpeg_first_n;
    imgpu_manifest *mf;      /* OUTDIR's manifest: each output's line goes in before its rename */
} batch;

/* The ops for one image: a rotation background on a gray image is the color's luma, as in
 * `imgpu rotate` (op.h's one rule), so that batch output equals the single-image command's. */
static void ops_for_channels(const bopts *o, int channels, imgpu_op *ops)
{
    memcpy(ops, o->ops, (size_t)o->nops * sizeof *ops);
    imgpu_ops_for_image(ops, o->nops, channels >= 3 ? 3 : 1);
}

static void ops_for(const bopts *o, const imgpu_image *in, imgpu_op *ops)
{
    ops_for_channels(o, imgpu_image_color_channels(in), ops);
}

static void fail_item(batch *B, item *it, const char *msg)
{
    report("failed '%s': %s", it->job->in, msg && *msg ? msg : "unknown error");
    atomic_fetch_add(&B->st.failed, 1);
    item_free(it);
    token_give(&B->tok);
    progress(&B->st, 0);
}

/* A JPEG kept as bytes for nvJPEG, decoded on the CPU after all (libjpeg-turbo, with the
 * load's limits and orientation): no GPU stage, nvJPEG refused it, or the GPU failed. */
static int jpeg_to_pixels(batch *B, item *it)
{
    imgpu_meta *m = NULL;
    it->in = imgpu_image_load_memory_meta(it->jpeg, it->jpeg_len, it->job->in, &B->o->run.load, &m);
    free(it->jpeg);
    it->jpeg = NULL;
    if (!it->in)
        return -1;
    imgpu_meta_free(it->meta);
    it->meta = m;
    atomic_fetch_add(&B->st.jpeg_cpu, 1);
    return 0;
}

/* With nvJPEG, a JPEG input that the GPU stage may decode is read and checked here but not
 * decoded (it->jpeg): those whose markers nvJPEG takes (imgpu_cuda_jpeg_route) and that are
 * upright (an EXIF orientation other than 1 is turned on the CPU load). Others are decoded
 * here from the same bytes. 1 when it read the file (it->in, it->jpeg, or an error), 0 when
 * the caller loads it as usual. */
static int jpeg_read(batch *B, item *it, size_t idx)
{
#ifdef IMGPU_HAVE_NVJPEG
    const imgpu_load_options *lo = &B->o->run.load;
    if (B->o->device == IMGPU_DEVICE_CPU || B->o->stage_copy ||
        imgpu_format_from_path(it->job->in) != IMGPU_FORMAT_JPEG)
        return 0;
    if (idx < B->nvjpeg_from) {
        /* one of the first JPEGs: libjpeg-turbo, while nvJPEG sets up (or never does) */
        imgpu_load_result lr = { 0 };
        it->in = imgpu_image_load_ex(it->job->in, lo, &lr);
        it->meta = lr.meta;
        if (it->in)
            atomic_fetch_add(&B->st.jpeg_first, 1);
        return 1;
    }
    unsigned char *buf;
    size_t len;
    imgpu_image_shape sh;
    imgpu_load_result r = { 0 };
    if (imgpu_image_read_checked(it->job->in, lo, &buf, &len, &sh, &r) < 0)
        return 1;
    it->meta = r.meta;
    int c = 0;
    const int route = r.format == IMGPU_FORMAT_JPEG && sh.depth == 8 ? imgpu_cuda_jpeg_route(buf, len, &c)
                                                                       : IMGPU_JPEG_CPU;
    const int o = it->meta->orientation;
    if (route != IMGPU_JPEG_CPU && c == sh.channels && (o < 2 || o > 8 || lo->no_auto_orient)) {
        it->jpeg = buf;
        it->jpeg_len = len;
        it->route = route;
        it->w = sh.width;
        it->h = sh.height;
        it->c = c;
        return 1;
    }
    it->jpeg = buf;
    it->jpeg_len = len;
    jpeg_to_pixels(B, it);
    return 1;
#else
    (void)B;
    (void)it;
    (void)idx;
    return 0;
#endif
}

/* The ops on the CPU reference backend; on failure the item is failed and freed. */
static int cpu_ops(batch *B, item *it)
{
    imgpu_op ops[MAX_OPS];
    if (it->jpeg && jpeg_to_pixels(B, it) < 0) {
        fail_item(B, it, imgpu_error_message());
        return -1;
    }
    ops_for(B->o, it->in, ops);
    it->out = B->o->stage_copy ? imgpu_image_copy(it->in)
                               : imgpu_pipeline_run(it->in, ops, B->o->nops, IMGPU_DEVICE_CPU, NULL);
    if (!it->out) {
        fail_item(B, it, imgpu_error_message());
        return -1;
    }
    imgpu_image_free(it->in);
    it->in = NULL;
    return 0;
}

enum { STAGE_PENDING, STAGE_DECIDED, STAGE_ABORT };

/* 1 once the op stage is decided; 0 when the batch stops before it starts (--device cuda and
 * no usable GPU). */
static int stage_wait(batch *B)
{
    int s = atomic_load(&B->stage);
    if (s == STAGE_PENDING) {
        pthread_mutex_lock(&B->stage_lock);
        while ((s = atomic_load(&B->stage)) == STAGE_PENDING)
            pthread_cond_wait(&B->stage_cv, &B->stage_lock);
        pthread_mutex_unlock(&B->stage_lock);
    }
    return s == STAGE_DECIDED;
}

/* Ctrl-C (SIGINT) or SIGTERM: no new file is started; the files in flight are finished and
 * written whole, then the summary says what was done and how to resume. The handler resets
 * itself (SA_RESETHAND), so a second Ctrl-C stops the batch at once, as usual. */
static volatile sig_atomic_t s_stop_signal;

static void on_stop(int sig) { s_stop_signal = sig; }

static void catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* The bounds of this image's pipeline (imgpu_pipeline_plan: every result and the memory) and
 * whether its output format can hold the result, checked before the ops run on either stage:
 * an image refused here fails alone, with its file and reason. */
static int refuse_early(batch *B, item *it)
{
    imgpu_op ops[MAX_OPS];
    imgpu_plan plan;
    char why[200];
    if (B->o->stage_copy)
        return 0;
    const int w = it->in ? it->in->width : it->w, h = it->in ? it->in->height : it->h;
    const int c = it->in ? it->in->channels : it->c, depth = it->in ? it->in->depth : 8;
    ops_for_channels(B->o, c, ops);
    if (imgpu_pipeline_plan(w, h, c, depth, ops, B->o->nops, NULL, it->job->in, &plan) < 0)
        return -1;
    if (imgpu_format_check_size(imgpu_format_from_path(it->job->out), plan.out_w, plan.out_h, plan.channels,
                                B->o->run.out_depth == 8 ? 8 : plan.depth, why, sizeof why) < 0)
        return imgpu_error("cannot write '%s': %s", it->job->out, why);
    return 0;
}

static int cores(void);

static void *decode_thread(void *arg)
{
    batch *B = arg;
    /* The CPU ops this thread runs get its share of the cores: `jobs` threads already run one
     * image each (fewer images than threads: each image gets more), and the CPU backend would
     * otherwise split every op over all the cores again. */
    const int busy = B->jobs < (int)B->ntodo ? B->jobs : (int)B->ntodo;
    imgpu_backend_cpu_threads(busy > 0 ? (cores() + busy - 1) / busy : 0);
    for (;;) {
        if (s_stop_signal)
            break;
        size_t i = atomic_fetch_add(&B->next, 1);
        if (i >= B->ntodo)
            break;
        token_take(&B->tok);
        item *it = calloc(1, sizeof *it);
        if (!it) {
            report("failed '%s': out of memory", B->todo[i]->in);
            atomic_fetch_add(&B->st.failed, 1);
            token_give(&B->tok);
            continue;
        }
        it->job = B->todo[i];
        imgpu_error_clear();
        const double tr = now_s();
        if (!jpeg_read(B, it, i)) {
            imgpu_load_result lr = { 0 };
            it->in = imgpu_image_load_ex(it->job->in, &B->o->run.load, &lr);
            it->meta = lr.meta;
        }
        atomic_fetch_add(&B->st.t_read, (long long)((now_s() - tr) * 1e6));
        if (!stage_wait(B)) {
            item_free(it);
            token_give(&B->tok);
            break;
        }
        if ((!it->in && !it->jpeg) || refuse_early(B, it) < 0) {
            fail_item(B, it, imgpu_error_message());
            continue;
        }
        /* With no GPU stage (or none left alive) the ops run here, on every decode thread (the
         * GPU stage takes every image the decoder gives: 8 or 16 bits, and JPEG bytes). */
        if (!B->use_gpu_stage || atomic_load(&B->gpu_workers_alive) == 0) {
            if (cpu_ops(B, it) == 0)
                imgpu__queue_push(B->to_enc, it);
            continue;
        }
        imgpu__queue_push(B->to_gpu, it);
    }
    imgpu__queue_done(B->to_gpu);
    imgpu__queue_done(B->to_enc); /* decode threads also feed the encoders directly */
    return NULL;
}

/* Create the folders between OUTDIR and the file, checking each one that exists before going
 * into it: the folder that receives a file must resolve inside OUTDIR, so a symbolic link to a
 * folder elsewhere, planted inside OUTDIR, cannot carry an output (or a new folder) out. */
static int mkdirs_under(const char *outdir, const char *path)
{
    char *p = strdup(path), *ro = realpath(outdir, NULL);
    int rc = -1;
    if (!p || !ro) {
        imgpu_error("cannot write '%s': %s", path, !p ? "out of memory" : strerror(errno));
        goto done;
    }
    const size_t nro = strlen(ro);
    for (char *s = p + strlen(outdir) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            imgpu_error("cannot create folder '%s': %s", p, strerror(errno));
            goto done;
        }
        char *rd = realpath(p, NULL);
        int inside = rd && !strncmp(rd, ro, nro) && (rd[nro] == '\0' || rd[nro] == '/');
        free(rd);
        if (!inside) {
            imgpu_error("cannot write '%s': folder '%s' resolves outside the output folder", path, p);
            goto done;
        }
        *s = '/';
    }
    rc = 0;
done:
    free(p);
    free(ro);
    return rc;
}

/* io.c's before_rename: the output's manifest line, written before the output is in place */
typedef struct record_ctx {
    batch *B;
    const bjob *job;
} record_ctx;

static int record_output(void *ctx, long long size, long long mtime_ns)
{
    const record_ctx *c = ctx;
    return imgpu_manifest_add(c->B->mf, c->job->out + strlen(c->B->o->outdir) + 1, c->job->settings,
                              (long long)c->job->in_size, c->job->in_mtime, size, mtime_ns);
}

static void *encode_thread(void *arg)
{
    batch *B = arg;
    item *it;
    while ((it = imgpu__queue_pop(B->to_enc))) {
        imgpu_error_clear();
        /* strips of one PNG over the cores the other encoders leave idle (the tail of a batch,
         * or a batch of a few large images) */
        int busy = atomic_fetch_add(&B->busy_encoders, 1) + 1;
        int png_threads = B->jobs / busy > 1 ? B->jobs / busy : 1;
        record_ctx rec = {B, it->job};
        int ok = 1;
        if (it->out && B->o->run.out_depth == 8 && it->out->depth == 16) {
            /* --depth 8, as the single-image commands do it: after the ops, before the write */
            imgpu_image *o8 = imgpu_image_to_depth(it->out, 8);
            ok = o8 != NULL;
            if (ok) {
                imgpu_image_free(it->out);
                it->out = o8;
            }
        }
        imgpu_save_options so = B->o->run.save;
        so.meta = it->meta;
        const double tw = now_s();
        ok = ok && mkdirs_under(B->o->outdir, it->job->out) == 0 &&
             (it->bits ? imgpu_save_encoded_recorded(it->bits, it->bits_len, IMGPU_FORMAT_JPEG, it->job->out,
                                                     &so, record_output, &rec)
                       : imgpu_image_save_recorded(it->out, it->job->out, &so, png_threads,
                                                   record_output, &rec)) == 0;
        atomic_fetch_add(&B->st.t_write, (long long)((now_s() - tw) * 1e6));
        atomic_fetch_sub(&B->busy_encoders, 1);
        if (!ok) {
            fail_item(B, it, imgpu_error_message());
            continue;
        }
        struct stat st;
        if (stat(it->job->out, &st) == 0)
            atomic_fetch_add(&B->st.out_bytes, (long long)st.st_size);
        atomic_fetch_add(&B->st.in_bytes, (long long)it->job->in_size);
        atomic_fetch_add(&B->st.done, 1);
        item_free(it);
        token_give(&B->tok);
        progress(&B->st, 0);
    }
    return NULL;
}

/* ---- the GPU stage ----------------------------------------------------------------------- */

typedef struct gpu_worker {
    batch *B;
    int device;
    pthread_t tid;
} gpu_worker;

/* A plain copy in place of the GPU work: what `--stage-copy` measures against. */
static void *copy_stage_thread(void *arg)
{
    gpu_worker *w = arg;
    batch *B = w->B;
    item *it;
    while ((it = imgpu__queue_pop(B->to_gpu)))
        if (cpu_ops(B, it) == 0)
            imgpu__queue_push(B->to_enc, it);
    imgpu__queue_done(B->to_enc);
    return NULL;
}

#ifdef IMGPU_HAVE_CUDA
typedef struct slot {
    imgpu_cuda_session *s;
    item *it;   /* enqueued on s, result not yet downloaded */
} slot;

static int gpu_start(batch *B, slot *sl, item *it)
{
    imgpu_op ops[MAX_OPS];
    ops_for(B->o, it->in, ops);
    int rc = imgpu_cuda_session_upload(sl->s, it->in);
    if (rc == 0)
        rc = imgpu_cuda_session_run(sl->s, ops, B->o->nops, NULL, NULL, NULL, NULL);
    if (rc == 0)
        sl->it = it;
    return rc;
}

/* Download a slot's result and pass it on. On failure the item stays in the slot. */
static int gpu_finish(batch *B, slot *sl)
{
    item *it = sl->it;
    int rc = imgpu_cuda_session_download(sl->s, &it->out);
    if (rc)
        return rc;
    sl->it = NULL;
    imgpu_image_free(it->in);
    it->in = NULL;
    imgpu__queue_push(B->to_enc, it);
    return 0;
}

/* The item could not run on the GPU: out of device memory with --device auto, or the GPU went
 * away under it without it being the file the fault was reported for. */
static void gpu_to_cpu(batch *B, item *it)
{
    imgpu_image_free(it->out);
    it->out = NULL;
    free(it->bits);
    it->bits = NULL;
    if (cpu_ops(B, it) == 0)
        imgpu__queue_push(B->to_enc, it);
}

/* A GPU error on an item. A sticky fault (IMGPU_CUDA_STICKY: the context is gone for the whole
 * process) surfaces in every worker's next call; only the first report fails its file, every
 * later one belongs to an innocent image, which the CPU finishes. Other errors fail their file. */
static void fault_item(batch *B, item *it, int rc)
{
#ifdef IMGPU_CUDA_STICKY
    if (rc == IMGPU_CUDA_STICKY && atomic_exchange(&B->sticky_seen, 1)) {
        gpu_to_cpu(B, it);
        return;
    }
#else
    (void)rc;
#endif
    fail_item(B, it, imgpu_error_message());
}

static int sessions_new(slot sl[2])
{
    for (int k = 0; k < 2; k++) {
        imgpu_cuda_session_free(sl[k].s);
        sl[k].s = NULL;
    }
    for (int k = 0; k < 2; k++)
        if (!(sl[k].s = imgpu_cuda_session_new()))
            return -1;
    return 0;
}

#ifdef IMGPU_HAVE_NVJPEG
/* One batch of JPEGs through nvJPEG: `first` and the JPEGs already waiting (up to
 * IMGPU_JPEG_BATCH), decoded together on the hardware engines (or by the CUDA decoder), then
 * each through a session: the ops on the decoded image, and a JPEG output encoded on the GPU
 * (other outputs downloaded for the CPU encoders). Images that are not JPEG bytes, taken from
 * the queue on the way, go to later[] for the usual path. A file nvJPEG refuses is decoded on
 * the CPU and goes on through the GPU. 0, or -1 after a GPU fault (the caller rebuilds its
 * sessions). */
static int jpeg_batch(batch *B, slot sl[2], imgpu_cuda_jpeg *jm, item *first, item **later, int *nlater)
{
    item *v[IMGPU_JPEG_BATCH], *x;
    int n = 0, fault = 0;
    v[n++] = first;
    while (n + *nlater < IMGPU_JPEG_BATCH && (x = imgpu__queue_try_pop(B->to_gpu)))
        if (x->jpeg)
            v[n++] = x;
        else
            later[(*nlater)++] = x;
    const unsigned char *data[IMGPU_JPEG_BATCH], *d_img[IMGPU_JPEG_BATCH];
    size_t len[IMGPU_JPEG_BATCH];
    int route[IMGPU_JPEG_BATCH], ch[IMGPU_JPEG_BATCH], w[IMGPU_JPEG_BATCH], h[IMGPU_JPEG_BATCH];
    int ok[IMGPU_JPEG_BATCH], how[IMGPU_JPEG_BATCH];
    for (int i = 0; i < n; i++) {
        data[i] = v[i]->jpeg;
        len[i] = v[i]->jpeg_len;
        route[i] = v[i]->route;
        ch[i] = v[i]->c;
        w[i] = v[i]->w;
        h[i] = v[i]->h;
    }
    imgpu_error_clear();
    double t0 = now_s();
    int rc = imgpu_cuda_jpeg_decode(jm, n, data, len, route, ch, w, h, d_img, ok, how);
    atomic_fetch_add(&B->st.t_gpu_decode, (long long)((now_s() - t0) * 1e6));
    t0 = now_s();
    if (rc) {
        /* a device error, or no memory for the pool: the CPU decodes and runs them all */
        report("nvJPEG: %s; these %d images run on the CPU", imgpu_error_message(), n);
        for (int i = 0; i < n; i++)
            gpu_to_cpu(B, v[i]);
        return rc == IMGPU_CUDA_OOM ? 0 : -1;
    }
    const bopts *o = B->o;
    const imgpu_save_options *so = &o->run.save;
    imgpu_cuda_jpeg_params jp = {
        so->quality ? so->quality : IMGPU_DEFAULT_QUALITY,
        so->subsampling == IMGPU_SUBSAMPLING_444 ? 444 : so->subsampling == IMGPU_SUBSAMPLING_422 ? 422 : 420,
        so->optimize, so->progressive,
    };
    for (int i = 0; i < n; i++) {
        item *it = v[i];
        if (fault) {   /* the GPU failed on an earlier image: the CPU takes the rest */
            gpu_to_cpu(B, it);
            continue;
        }
        slot *s = &sl[i & 1];
        imgpu_op ops[MAX_OPS];
        imgpu_error_clear();
        if (!ok[i]) {
            /* nvJPEG refused it: libjpeg-turbo decodes it (and fails it alone, with its
             * reason, if it is corrupt); then the GPU runs its ops as for any image */
            if (jpeg_to_pixels(B, it) < 0) {
                fail_item(B, it, imgpu_error_message());
                continue;
            }
            rc = gpu_start(B, s, it);
            if (rc == 0 && (rc = gpu_finish(B, s)) != 0)
                s->it = NULL;
        } else {
            atomic_fetch_add(how[i] == IMGPU_JPEG_HW ? &B->st.jpeg_hw : &B->st.jpeg_cuda, 1);
            const unsigned char *d_out = NULL;
            int ow = 0, oh = 0, oc = 0;
            ops_for_channels(o, ch[i], ops);
            rc = imgpu_cuda_session_upload_device(s->s, d_img[i], w[i], h[i], ch[i]);
            if (rc == 0)
                rc = imgpu_cuda_session_run(s->s, ops, o->nops, &d_out, &ow, &oh, &oc);
            int enc = 1;   /* 1: not encoded on the GPU */
            if (rc == 0 && imgpu_format_from_path(it->job->out) == IMGPU_FORMAT_JPEG) {
                enc = imgpu_cuda_jpeg_encode(jm, d_out, ow, oh, oc, &jp, imgpu_cuda_session_stream(s->s), &it->bits,
                                             &it->bits_len);
                if (enc < 0)
                    rc = enc;
            }
            if (rc == 0 && enc == 1)
                rc = imgpu_cuda_session_download(s->s, &it->out);
            if (rc == 0) {
                if (enc == 0)
                    atomic_fetch_add(&B->st.jpeg_enc, 1);
                free(it->jpeg);
                it->jpeg = NULL;
                imgpu__queue_push(B->to_enc, it);
            }
        }
        if (rc == IMGPU_CUDA_OOM && o->device != IMGPU_DEVICE_CUDA) {
            gpu_to_cpu(B, it);
        } else if (rc) {
            fault_item(B, it, rc);
            fault = 1;
        }
    }
    for (int k = 0; k < 2; k++)   /* nothing reads the pool once this returns */
        cudaStreamSynchronize(imgpu_cuda_session_stream(sl[k].s));
    atomic_fetch_add(&B->st.t_gpu_ops, (long long)((now_s() - t0) * 1e6));
    return fault ? -1 : 0;
}
#endif

#ifdef IMGPU_HAVE_NVJPEG
/* nvJPEG's set-up for one worker, on a thread of its own: the handles (shared by the GPU's
 * workers), states and stream, ~1 s on an H200 (bench/nvjpeg_setup.c). */
typedef struct jpeg_setup {
    pthread_t tid;
    int started, device;
    imgpu_cuda_jpeg *jm;
    char err[256];
} jpeg_setup;

static void *jpeg_setup_thread(void *arg)
{
    jpeg_setup *js = arg;
    imgpu_error_clear();
    if (imgpu_cuda_use_device(js->device) == 0)
        js->jm = imgpu_cuda_jpeg_new();
    if (!js->jm)
        snprintf(js->err, sizeof js->err, "%s", imgpu_error_message());
    return NULL;
}
#endif

static void *gpu_thread(void *arg)
{
    gpu_worker *w = arg;
    batch *B = w->B;
    slot sl[2] = {{NULL, NULL}, {NULL, NULL}};
    int alive = imgpu_cuda_use_device(w->device) == 0 && sessions_new(sl) == 0;
    if (!alive) {
        report("GPU %d: %s; its share of the batch runs on the CPU", w->device, imgpu_error_message());
        atomic_fetch_sub(&B->gpu_workers_alive, 1);
    }
    int cur = 0;
    item *it;
    item *later[IMGPU_BATCH_LATER];   /* images jpeg_batch took off the queue for the usual path */
    int nlater = 0, first_later = 0;
#ifdef IMGPU_HAVE_NVJPEG
    imgpu_cuda_jpeg *jm = NULL;
    int jm_tried = 0;
    /* nvJPEG sets up on its own thread from now on, while this worker takes the batch's first
     * JPEGs (decoded on the CPU) and its other images; the first JPEG for nvJPEG waits for it */
    jpeg_setup js = { .device = w->device };
    if (alive && B->nvjpeg_from < B->ntodo)
        js.started = pthread_create(&js.tid, NULL, jpeg_setup_thread, &js) == 0;
#endif
    while ((it = first_later < nlater ? later[first_later++] : imgpu__queue_pop(B->to_gpu))) {
        if (first_later == nlater)
            first_later = nlater = 0;
        if (!alive) {
            gpu_to_cpu(B, it);
            continue;
        }
#ifdef IMGPU_HAVE_NVJPEG
        if (it->jpeg && !jm && !jm_tried) {
            /* the set-up begun above (or, where its thread could not start, here) */
            const double t0 = now_s();
            jm_tried = 1;
            if (js.started) {
                pthread_join(js.tid, NULL);
                js.started = 0;
                jm = js.jm;
            } else if (!(jm = imgpu_cuda_jpeg_new())) {
                snprintf(js.err, sizeof js.err, "%s", imgpu_error_message());
            }
            if (!jm)
                report("GPU %d: nvJPEG: %s; its JPEGs are decoded on the CPU", w->device, js.err);
            atomic_fetch_add(&B->st.t_setup, (long long)((now_s() - t0) * 1e6));
        }
        if (it->jpeg && jm && nlater == 0) {
            /* the images in flight on the two slots first: the batch uses both sessions */
            for (int k = 0; k < 2; k++) {
                slot *s = &sl[cur ^ 1 ^ k];
                int rc;
                if (s->it && (rc = gpu_finish(B, s)) != 0) {
                    item *x = s->it;
                    s->it = NULL;
                    fault_item(B, x, rc);
                }
            }
            cur = 0;
            if (jpeg_batch(B, sl, jm, it, later, &nlater) != 0 && sessions_new(sl) != 0) {
                alive = 0;
                if (atomic_fetch_sub(&B->gpu_workers_alive, 1) == 1)
                    report("the GPU stage failed (%s); the rest of the batch runs on the CPU",
                           imgpu_error_message());
            }
            continue;
        }
        if (it->jpeg && jpeg_to_pixels(B, it) < 0) {
            fail_item(B, it, imgpu_error_message());
            continue;
        }
#endif
        slot *s = &sl[cur], *o = &sl[cur ^ 1];
        imgpu_error_clear();
        int rc = gpu_start(B, s, it);
        int fault = 0;
        if (rc == IMGPU_CUDA_OOM && B->o->device != IMGPU_DEVICE_CUDA) {
            gpu_to_cpu(B, it);
        } else if (rc) {
            fault_item(B, it, rc);
            fault = 1;
        }
        /* image k's download waits on its own stream only, while k+1 is already queued */
        if (!fault && o->it && (rc = gpu_finish(B, o)) != 0) {
            item *bad_it = o->it;
            o->it = NULL;
            if (rc == IMGPU_CUDA_OOM && B->o->device != IMGPU_DEVICE_CUDA) {
                gpu_to_cpu(B, bad_it);
            } else {
                fault_item(B, bad_it, rc);
                fault = 1;
            }
        }
        if (fault) {
            /* the other image was not at fault: finish it on the GPU if the GPU still
             * answers, else on the CPU; then rebuild the sessions, or go on on the CPU */
            for (int k = 0; k < 2; k++)
                if (sl[k].it && gpu_finish(B, &sl[k]) != 0) {
                    item *x = sl[k].it;
                    sl[k].it = NULL;
                    gpu_to_cpu(B, x);
                }
            if (sessions_new(sl) != 0) {
                alive = 0;
                if (atomic_fetch_sub(&B->gpu_workers_alive, 1) == 1)
                    report("the GPU stage failed (%s); the rest of the batch runs on the CPU",
                           imgpu_error_message());
            }
            cur = 0;
            continue;
        }
        if (s->it)
            cur ^= 1;
    }
    for (int k = 0; k < 2; k++) {
        slot *s = &sl[cur ^ 1 ^ k]; /* the older image first */
        if (s->it && gpu_finish(B, s) != 0) {
            item *x = s->it;
            s->it = NULL;
            fail_item(B, x, imgpu_error_message());
        }
    }
    for (int k = 0; k < 2; k++)
        imgpu_cuda_session_free(sl[k].s);
#ifdef IMGPU_HAVE_NVJPEG
    if (js.started) {   /* set up, and no JPEG came for it after all */
        pthread_join(js.tid, NULL);
        jm = js.jm;
    }
    imgpu_cuda_jpeg_free(jm);
#endif
    imgpu__queue_done(B->to_enc);
    return NULL;
}
#endif

/* ---- running the batch ------------------------------------------------------------------- */

/* Decide the op stage: `planned` workers of the GPU stage (or of --stage-copy), or none when
 * the ops run on the CPU. Waits for CUDA's start-up; the decode threads are already running.
 * Returns the number of workers to start, or -1 with an error when the batch cannot run. */
static int stage_decide(batch *B, int planned)
{
    const bopts *o = B->o;
    int n = 0, rc = 0;
    if (o->stage_copy) {
        n = planned;
    } else {
        imgpu_device d = IMGPU_DEVICE_CPU;
        rc = imgpu_device_resolve(o->device, &d);
#ifdef IMGPU_HAVE_CUDA
        if (rc == 0 && d == IMGPU_DEVICE_CUDA) {
            int count = imgpu_cuda_device_count();
            for (int i = 0; rc == 0 && i < o->ndevices; i++)
                if (o->devices[i] >= count)
                    rc = imgpu_error("--devices: there is no GPU %d (%d found)", o->devices[i], count < 0 ? 0 : count);
            n = planned;
        }
#endif
    }
    if (rc < 0)
        n = 0;
    if (n == 0 && planned > 0) { /* the images no worker will hold: the bound is 2 x jobs again */
        pthread_mutex_lock(&B->tok.lock);
        B->tok.left -= 4 * planned;
        pthread_mutex_unlock(&B->tok.lock);
    }
    pthread_mutex_lock(&B->stage_lock);
    B->use_gpu_stage = n > 0;
    atomic_store(&B->gpu_workers_alive, n);
    atomic_store(&B->stage, rc < 0 ? STAGE_ABORT : STAGE_DECIDED);
    pthread_cond_broadcast(&B->stage_cv);
    pthread_mutex_unlock(&B->stage_lock);
    return rc < 0 ? -1 : n;
}

/* Which JPEGs nvJPEG may take (B->nvjpeg_from): all but the first jpeg_first_n, and none when
 * the batch has no more than that. The rule: nvJPEG's set-up (~1 s, bench/nvjpeg_setup.c) is
 * worth paying only for more JPEGs than the CPU decodes in that time, so the first 4 per
 * decode thread (a 4K photo takes a core ~40 ms to decode with libjpeg-turbo) go to the CPU
 * while it sets up. IMGPU_NVJPEG_CPU_FIRST=N sets that count (0: every JPEG to nvJPEG). Which
 * file goes where depends only on the list and the thread count, never on timing. */
static void jpeg_split(batch *B)
{
    B->nvjpeg_from = B->ntodo;
    B->njpeg = 0;
    B->jpeg_first_n = 4L * B->jobs;
#ifdef IMGPU_HAVE_NVJPEG
    const char *env = getenv("IMGPU_NVJPEG_CPU_FIRST");
    if (env && *env) {
        char *end;
        errno = 0;
        const long v = strtol(env, &end, 10);
        if (*end || errno || v < 0)
            report("IMGPU_NVJPEG_CPU_FIRST='%s' is not a count of images; using %ld", env, B->jpeg_first_n);
        else
            B->jpeg_first_n = v;
    }
    if (B->o->device == IMGPU_DEVICE_CPU || B->o->stage_copy)
        return;
    for (size_t i = 0; i < B->ntodo; i++)
        if (imgpu_format_from_path(B->todo[i]->in) == IMGPU_FORMAT_JPEG &&
            (long)B->njpeg++ == B->jpeg_first_n)
            B->nvjpeg_from = i;
#endif
}

static int run_pipeline(batch *B, int planned)
{
    const bopts *o = B->o;
    int jobs = B->jobs, rc = 0;
    /* producers of to_enc: every decode thread (CPU ops, or items that skip the GPU), and
     * every planned worker of the op stage (those not started are accounted for below) */
    int cap = 2 * jobs + 4 * planned;
    pthread_t *dec = calloc((size_t)jobs, sizeof *dec), *enc = calloc((size_t)jobs, sizeof *enc);
    gpu_worker *gw = calloc((size_t)(planned ? planned : 1), sizeof *gw);
    B->to_gpu = imgpu__queue_new(cap, jobs);
    B->to_enc = imgpu__queue_new(cap, jobs + planned);
    if (!dec || !enc || !gw || !B->to_gpu || !B->to_enc) {
        rc = imgpu_error("out of memory");
        goto done;
    }
    pthread_mutex_init(&B->tok.lock, NULL);
    pthread_cond_init(&B->tok.cv, NULL);
    B->tok.left = cap;
    pthread_mutex_init(&B->stage_lock, NULL);
    pthread_cond_init(&B->stage_cv, NULL);
    atomic_init(&B->stage, STAGE_PENDING);
    atomic_init(&B->gpu_workers_alive, 0);
    jpeg_split(B);
    int nd = 0, ne = 0, ng = 0;
    for (; nd < jobs; nd++)
        if (pthread_create(&dec[nd], NULL, decode_thread, B) != 0)
            break;
    for (; ne < jobs; ne++)
        if (pthread_create(&enc[ne], NULL, encode_thread, B) != 0)
            break;
    /* Threads that did not start will never call done: account for them, so the queues still
     * drain and end. Fewer threads is slower, not wrong, with at least one of each kind. */
    for (int k = nd; k < jobs; k++) {
        imgpu__queue_done(B->to_gpu);
        imgpu__queue_done(B->to_enc);
    }
    if (nd == 0 || ne == 0) {
        report("cannot start the batch threads: %s", strerror(errno));
        atomic_store(&B->next, B->ntodo);
    }
    int nworkers = stage_decide(B, planned);
    if (nworkers < 0)
        rc = -1;
    void *(*fn)(void *) = copy_stage_thread;
#ifdef IMGPU_HAVE_CUDA
    if (!o->stage_copy)
        fn = gpu_thread;
#endif
    for (int k = 0; k < nworkers; k++) {
        gw[k].B = B;
        gw[k].device = o->ndevices ? o->devices[k] : 0;
#ifdef IMGPU_HAVE_CUDA
        if (!o->ndevices && !o->stage_copy)
            gw[k].device = imgpu_cuda_default_device();
#endif
    }
    for (; ng < nworkers; ng++)
        if (pthread_create(&gw[ng].tid, NULL, fn, &gw[ng]) != 0)
            break;
    /* no worker thread at all: this thread is the one worker (images already wait in to_gpu) */
    const int inline_worker = nworkers > 0 && ng == 0;
    for (int k = ng + inline_worker; k < planned; k++)
        imgpu__queue_done(B->to_enc);
    if (inline_worker)
        fn(&gw[0]);
    for (int k = 0; k < nd; k++)
        pthread_join(dec[k], NULL);
    for (int k = 0; k < ng; k++)
        pthread_join(gw[k].tid, NULL);
    for (int k = 0; k < ne; k++)
        pthread_join(enc[k], NULL);
    /* with no encoder at all, what was queued is lost: count it */
    item *it;
    while (ne == 0 && (it = imgpu__queue_pop(B->to_enc)))
        fail_item(B, it, "no encode thread could be started");
    pthread_mutex_destroy(&B->stage_lock);
    pthread_cond_destroy(&B->stage_cv);
done:
    imgpu__queue_free(B->to_gpu);
    imgpu__queue_free(B->to_enc);
    free(dec);
    free(enc);
    free(gw);
    return rc;
}

static void free_jobs(joblist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].in);
        free(l->v[i].rel);
        free(l->v[i].out);
        free(l->v[i].why_buf);
    }
    free(l->v);
    for (size_t i = 0; i < sizeof l->settings / sizeof *l->settings; i++)
        free(l->settings[i]);
    for (int i = 0; i < l->not_images && i < 3; i++)
        free(l->not_image_names[i]);
}

static int cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

int imgpu_batch_main(int argc, char **argv)
{
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
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(s_help, stdout);
            return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
        }
        if (!strncmp(argv[i], "--device", 8) && (argv[i][8] == '\0' || argv[i][8] == '='))
            explicit_device = 1;
    }
    if (parse_args(argc - 1, argv + 1, &o) < 0) {
        fprintf(stderr, "imgpu: %s\ntry 'imgpu batch --help'\n", imgpu_usage_message());
        free(o.inputs);
        return EXIT_USAGE;
    }
    /* IMGPU_MAX_* fill in the limits no option set, as for the single-image commands (batch
     * ignored them: IMGPU_MAX_DECODE_TIME did not bound a batch's decodes). */
    if (imgpu_load_options_from_env(&o.run.load) < 0) {
        fprintf(stderr, "imgpu: %s\ntry 'imgpu batch --help'\n", imgpu_error_message());
        free(o.inputs);
        return EXIT_USAGE;
    }
    if (o.ndevices && !explicit_device)
        o.device = IMGPU_DEVICE_CUDA;
    else if (!explicit_device && imgpu_device_from_env(&o.device) < 0) {   /* IMGPU_DEVICE */
        fprintf(stderr, "imgpu: %s\ntry 'imgpu batch --help'\n", imgpu_error_message());
        free(o.inputs);
        return EXIT_USAGE;
    }
    if (o.ndevices && o.device == IMGPU_DEVICE_CPU) {
        fprintf(stderr, "imgpu: --devices contradicts --device cpu\ntry 'imgpu batch --help'\n");
        free(o.inputs);
        return EXIT_USAGE;
    }
    imgpu_limits lim = {o.run.load.max_pixels, o.run.max_memory};
    if (imgpu_limits_from_env(&lim) < 0) {
        fprintf(stderr, "imgpu: %s\ntry 'imgpu batch --help'\n", imgpu_error_message());
        free(o.inputs);
        return EXIT_USAGE;
    }
    imgpu_set_limits(&lim); /* before any thread starts */
    imgpu_set_quiet(o.quiet);
    if (o.format) {   /* one output format: output options it does not use are named once */
        char probe[32];
        snprintf(probe, sizeof probe, "x.%s", o.format);
        imgpu_save_options_note_ignored(&o.run.save, imgpu_format_from_path(probe));
    }
    s_tty = isatty(STDERR_FILENO);
    if (!o.jobs)
        o.jobs = cores();
    if (!o.stage_copy && !o.dry_run)
        imgpu_backend_prepare(o.device); /* CUDA's start-up overlaps the folder walk */

    /* OUTDIR: created unless this is a dry run */
    struct stat ost;
    int have_out = stat(o.outdir, &ost) == 0;
    if (have_out && !S_ISDIR(ost.st_mode)) {
        imgpu_error("output folder '%s' is not a folder", o.outdir);
        goto fail;
    }
    if (!have_out && !o.dry_run) {
        if (mkdir(o.outdir, 0777) != 0 && errno != EEXIST) {
            imgpu_error("cannot create output folder '%s': %s", o.outdir, strerror(errno));
            goto fail;
        }
        have_out = stat(o.outdir, &ost) == 0;
    }

    l.quiet = o.quiet;
    for (int i = 0; i < o.ninputs; i++)
        if (add_input(&l, o.inputs[i], have_out ? &ost : NULL, 0) < 0)
            goto fail;
    if (l.n) /* no input matched: l.v is NULL, and qsort(NULL, 0, ...) is undefined */
        qsort(l.v, l.n, sizeof *l.v, cmp_job);
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
    if (plan(&o, &l) < 0)
        goto fail;
    if (!(mf = imgpu_manifest_open(o.outdir)) || manifest_plan(&o, &l, mf, &legacy) < 0)
        goto fail;
    if (legacy)
        imgpu_notice("%d existing output%s in '%s' %s made before imgpu recorded what made its "
                     "outputs (%s): skipped as before, whatever their settings; --overwrite "
                     "remakes them", legacy, legacy == 1 ? "" : "s", o.outdir,
                     legacy == 1 ? "was" : "were", IMGPU_MANIFEST_NAME);

    batch B;
    memset(&B, 0, sizeof B);
    B.o = &o;
    B.jobs = o.jobs;
    B.mf = mf;
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
    B.st.skipped = l.special;
    char in_shown[4096], out_shown[4096];   /* dry-run lines: names escaped (error.h) */
    for (size_t i = 0; i < l.n; i++) {
        bjob *j = &l.v[i];
        if (j->why) {
            report("failed '%s': %s", j->in, j->why);
            plan_failed++;
        } else if (j->stale) {
            stale++;
            if (j->stale == IMGPU_MANIFEST_OTHER_SETTINGS)
                report("'%s' was made with other settings (%s); use --overwrite to replace it",
                       j->out, j->recorded);
            else if (j->stale == IMGPU_MANIFEST_INPUT_CHANGED)
                report("'%s' was made from an earlier version of '%s' (its size or time changed); "
                       "use --overwrite to replace it", j->out, j->in);
            else
                report("'%s' has no record of what made it (changed since it was written, or "
                       "written by another program); use --overwrite to replace it", j->out);
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
            if (o.dry_run)
                printf("%s -> %s\n", imgpu_escape(j->in, in_shown, sizeof in_shown),
                       imgpu_escape(j->out, out_shown, sizeof out_shown));
        }
    }
    atomic_init(&B.st.failed, plan_failed + l.input_errors);
    B.st.failed_before = plan_failed + l.input_errors;
    B.st.total = (int)B.ntodo;
    char stale_s[96] = "";   /* in the summaries only when some are */
    if (stale)
        snprintf(stale_s, sizeof stale_s, ", %d stale (made otherwise; --overwrite replaces them)",
                 stale);
    if (o.dry_run) {
        if (!o.quiet)
            fprintf(stderr, "imgpu batch: dry run: %zu to write, %d skipped (%s), %d failed%s\n",
                    B.ntodo, B.st.skipped, l.special ? "exist, or not regular files" : "exist",
                    atomic_load(&B.st.failed), stale_s);
        free(B.todo);
        rc = fflush(stdout) == 0 && atomic_load(&B.st.failed) == 0 && !stale ? EXIT_OK : EXIT_FAIL;
        goto done;
    }

    /* The op stage: on the GPU workers when CUDA is used, else on the decode threads; decided
     * in run_pipeline, after the decode threads have started. */
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
    int planned = o.device == IMGPU_DEVICE_CPU && !o.stage_copy ? 0 : nids * per_id;
    B.st.t0 = B.st.last_print = now_s();
    atomic_init(&B.next, 0);
    catch_stop_signals();
    if (B.ntodo > 0 && run_pipeline(&B, planned) < 0) {
        free(B.todo);
        goto fail;
    }
    progress(&B.st, 1);
    double el = now_s() - B.st.t0;
    int done_n = atomic_load(&B.st.done), failed_n = atomic_load(&B.st.failed);
    if (s_stop_signal) {
        /* Said even with --quiet: the user asked for the stop and must learn where it left off. */
        int left = B.st.total - (done_n + failed_n - B.st.failed_before);
        fprintf(stderr, "imgpu batch: interrupted (%s) after %.2f s: %d done, %d skipped, %d failed, "
                "%d not started; run the same command again to finish them (outputs already "
                "written are skipped)\n", s_stop_signal == SIGINT ? "Ctrl-C" : "SIGTERM", el,
                done_n, B.st.skipped, failed_n, left < 0 ? 0 : left);
        free(B.todo);
        rc = 128 + s_stop_signal;
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
        fprintf(stderr, "imgpu batch: %d done, %d skipped, %d failed%s in %.2f s: %.2f images/s, "
                "%.1f MB/s (%.1f MB read, %.1f MB written; %s)\n", done_n, B.st.skipped, failed_n,
                stale_s, el,
                el > 0 ? done_n / el : 0.0, el > 0 ? mb / el : 0.0, mb,
                (double)atomic_load(&B.st.out_bytes) / 1e6,
                B.ntodo == 0 ? "nothing to run" : o.stage_copy ? "stage: plain copy"
                : B.use_gpu_stage ? "ops on the GPU" : "ops on the CPU");
        const char *prof = getenv("IMGPU_BATCH_PROFILE");
        if (prof && !strcmp(prof, "1"))   /* bench aid: thread-seconds summed over each stage's threads */
            fprintf(stderr, "imgpu batch: profile (thread-seconds): nvJPEG set-up %.3f, read + check + CPU "
                    "decode %.3f, nvJPEG decode %.3f, GPU ops + encode + download %.3f, write %.3f\n",
                    atomic_load(&B.st.t_setup) / 1e6,
                    atomic_load(&B.st.t_read) / 1e6, atomic_load(&B.st.t_gpu_decode) / 1e6,
                    atomic_load(&B.st.t_gpu_ops) / 1e6, atomic_load(&B.st.t_write) / 1e6);
#ifdef IMGPU_HAVE_NVJPEG
        /* where the JPEGs went: what a user (and batch_nvjpeg.py) checks */
        if (B.use_gpu_stage && B.njpeg) {
            const int first = atomic_load(&B.st.jpeg_first);
            char why[160] = "";
            if (B.nvjpeg_from == B.ntodo)
                snprintf(why, sizeof why, " (%zu JPEG%s, no more than the %ld worth nvJPEG's set-up: "
                         "IMGPU_NVJPEG_CPU_FIRST)", B.njpeg, B.njpeg == 1 ? "" : "s", B.jpeg_first_n);
            else if (first)
                snprintf(why, sizeof why, " (the first %d while nvJPEG set up)", first);
            fprintf(stderr, "imgpu batch: JPEG (nvJPEG): %d decoded by the GPU's hardware engines, %d by "
                    "its CUDA decoder, %d on the CPU%s; %d encoded on the GPU\n", atomic_load(&B.st.jpeg_hw),
                    atomic_load(&B.st.jpeg_cuda), atomic_load(&B.st.jpeg_cpu) + first, why,
                    atomic_load(&B.st.jpeg_enc));
        }
#endif
    }
    free(B.todo);
    rc = failed_n || stale ? EXIT_FAIL : EXIT_OK;
    goto done;
fail:
    report("%s", imgpu_error_message());
    rc = EXIT_FAIL;
done:
    if (imgpu_manifest_close(mf) < 0) {
        report("%s", imgpu_error_message());
        if (rc == EXIT_OK)
            rc = EXIT_FAIL;
    }
    free_jobs(&l);
    free(o.inputs);
    if (imgpu_backend_shutdown()) {   /* CUDA still starting, unused: do not wait for it */
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    return rc;
}
