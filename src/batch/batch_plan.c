/* batch_plan.c — what `imgpu batch` will do before it does anything: the inputs (files,
 * folders walked for image extensions, globs), each output's name and the path rules that keep
 * it inside OUTDIR, what exists already and whether OUTDIR's manifest says it was made with
 * this run's settings (resume, stale outputs). */
#include "batch_internal.h"
#include "cli_values.h"

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

/* ---- inputs ------------------------------------------------------------------------------ */

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

/* Directory walk: image files by extension; hidden entries (also io.c's ".NAME.XXXXXX" temp
 * files of an interrupted run) and OUTDIR itself are skipped; links to folders are not followed
 * (no cycles). Only regular files (or links to them) are taken: a FIFO or a device with an
 * image's name is skipped and reported, since reading it could wait on a writer (a file
 * named on the command line is read, under the decode-time limit). */
static int walk(joblist *l, const char *dir, const char *rel, const struct stat *outdir_st)
{
    DIR *d = opendir(dir);
    if (!d) {
        imgpu__batch_failed(dir, strerror(errno), "cannot read folder '%s': %s", dir, strerror(errno));
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
            if (x && imgpu__batch_known_ext(x) && S_ISREG(st.st_mode)) {
                rc = add_job(l, path, rel);
            } else if (!x || !imgpu__batch_known_ext(x)) {
                if (l->not_images < 3)
                    l->not_image_names[l->not_images] = strdup(path);
                l->not_images++;
            } else {
                l->special++;
                if (!l->quiet)
                    imgpu__batch_report("skipped '%s': not a regular file (%s)", path,
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

int imgpu__batch_add_input(joblist *l, const char *arg, const struct stat *outdir_st, int globbed)
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
            imgpu__batch_failed(arg, "no file matches", "no file matches '%s'", arg);
            l->input_errors++;
            return 0;
        }
        if (grc != 0) {
            imgpu__batch_failed(arg, "cannot expand", "cannot expand '%s'", arg);
            l->input_errors++;
            return 0;
        }
        int rc = 0;
        for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++)
            rc = imgpu__batch_add_input(l, g.gl_pathv[i], outdir_st, 1);
        globfree(&g);
        return rc;
    }
    imgpu__batch_failed(arg, strerror(errno), "cannot read '%s': %s", arg, strerror(errno));
    l->input_errors++;
    return 0;
}

int imgpu__batch_cmp_job(const void *a, const void *b)
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
    if (!ext || !imgpu__batch_known_ext(ext)) {
        *why = "cannot tell the output format from the input's extension (use --format)";
        return NULL;
    }
    const char *inext = x ? x : ""; /* {inext}: the input's extension as written, "" without one */
    size_t cap = strlen(t) + 1, k = 0;
    for (const char *p = t; *p; p++)
        if (*p == '{')
            cap += stem_len + strlen(ext) + strlen(inext);
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
        } else if (!strncmp(p, "{inext}", 7)) {
            memcpy(name + k, inext, strlen(inext));
            k += strlen(inext);
            p += 7;
        } else {
            name[k++] = *p++;
        }
    }
    name[k] = '\0';
    if ((*why = imgpu__batch_name_rule(name)) != NULL) {
        free(name);
        return NULL;
    }
    const char *ox = ext_of(name);
    if (!ox || !imgpu__batch_known_ext(ox)) {
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

int imgpu__batch_plan(const bopts *b, joblist *l)
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
            /* the usual cause: a.bmp and a.ppm with --format png; {inext} keeps them apart */
            const int hint = !b->name || !strstr(b->name, "{inext}");
            size_t n = strlen(first->in) + 128;
            if ((byout[i]->why_buf = malloc(n))) {
                snprintf(byout[i]->why_buf, n, "its output is also the output of '%s'%s", first->in,
                         hint ? " (--name '{stem}_{inext}.{ext}' keeps such outputs apart)" : "");
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
int imgpu__batch_manifest_plan(const bopts *b, joblist *l, imgpu_manifest *mf, int *legacy)
{
    size_t olen = strlen(b->outdir) + 1;
    *legacy = 0;
    /* the settings of every output; the manifest is asked about each existing one, and read
     * once (what it keeps is bounded by these outputs, not by what the file holds) */
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
        struct stat out;
        if (j->skip && imgpu_manifest_found(mf) && stat(j->out, &out) == 0 &&
            imgpu_manifest_want(mf, j->out + olen, &out) < 0)
            return -1;
    }
    if (imgpu_manifest_read(mf) < 0)
        return -1;
    for (size_t i = 0; i < l->n; i++) {
        bjob *j = &l->v[i];
        if (j->why || !j->out || !j->skip)
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

int imgpu__batch_given(const bopts *b, joblist *l, const char *const *pairs, size_t n)
{
    const size_t olen = strlen(b->outdir);
    for (size_t i = 0; i < n; i++) {
        const char *in = pairs[2 * i], *out = pairs[2 * i + 1];
        if (add_job(l, in, "") < 0)
            return -1;
        bjob *j = &l->v[l->n - 1];
        if (strncmp(out, b->outdir, olen) != 0 || out[olen] != '/' || imgpu__batch_name_rule(out + olen + 1)) {
            j->why = "its output is not a name inside OUTDIR";
            continue;
        }
        if (!(j->out = strdup(out)))
            return imgpu_error("out of memory");
        struct stat st;
        if (stat(in, &st) == 0) {
            j->in_size = st.st_size;
            j->in_mtime = imgpu_manifest_mtime_ns(&st);
        }
        imgpu_format f = imgpu_format_from_path(out);
        size_t fi = (size_t)f < sizeof l->settings / sizeof *l->settings ? (size_t)f : 0;
        if (!l->settings[fi] &&
            !(l->settings[fi] = imgpu_manifest_settings(b->ops, b->stage_copy ? 0 : b->nops, &b->run.save, out,
                                                          b->run.out_depth)))
            return imgpu_error("out of memory");
        j->settings = l->settings[fi];
    }
    return 0;
}

void imgpu__batch_free_jobs(joblist *l)
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

/* ---- the names batch takes (batch.c checks options with them too) ---------------------- */

/* An extension of a format in the codec table (io.h), any case. */
int imgpu__batch_known_ext(const char *ext)
{
    char probe[32];
    if (strlen(ext) > 16 || strchr(ext, '/'))
        return 0;
    snprintf(probe, sizeof probe, "x.%s", ext);
    return imgpu_format_from_path(probe) != IMGPU_FORMAT_UNKNOWN;
}

/* A name's components: refuse an absolute name and any ".." (and empty names). */
const char *imgpu__batch_name_rule(const char *name)
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
