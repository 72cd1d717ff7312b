/* test_batch_split.c — a batch split over processes (batch.h: imgpu_batch_plan, imgpu_batch_stage,
 * imgpu_batch_commit; the Python module's imgpu.dask runs on them), in one process on the CPU, so
 * that the ASan+UBSan build covers the C half (tests/python/test_dask.py runs the cluster):
 *  - the plan lists the files imgpu_batch_run would write, and writes nothing but OUTDIR;
 *  - a staged run (two shares) leaves every output under a temp name with its tag beside its
 *    target, none in place and no manifest, and fails a corrupt file with its reason;
 *  - the commit puts them in place: the same bytes as imgpu_batch_run's, the temp names gone,
 *    the manifest written, so a second plan has nothing left to do (resume);
 *  - a record whose staged file is gone, changed, or not beside its output fails alone, and a
 *    file named elsewhere is never removed; an invalid tag is a usage error.
 */
#include "batch/batch.h"
#include "error.h"
#include "image.h"
#include "io.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int s_fail, s_checks;
#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        s_checks++;                                                               \
        if (!(cond)) {                                                            \
            s_fail++;                                                             \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                  \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
        }                                                                         \
    } while (0)

#define MAXN 32
typedef struct collect {
    char *todo[2 * MAXN];
    int ntodo;
    imgpu_batch_record rec[MAXN];
    int nrec;
    char *fail_path[MAXN], *fail_reason[MAXN];
    int nfail;
} collect;

static char *sdup(const char *s) { return s ? strdup(s) : NULL; }

static void on_todo(void *ctx, const char *in, const char *out)
{
    collect *c = ctx;
    if (c->ntodo < MAXN) {
        c->todo[2 * c->ntodo] = sdup(in);
        c->todo[2 * c->ntodo + 1] = sdup(out);
        c->ntodo++;
    }
}

static void on_staged(void *ctx, const imgpu_batch_record *r)
{
    collect *c = ctx;
    if (c->nrec < MAXN) {
        imgpu_batch_record *x = &c->rec[c->nrec++];
        *x = *r;
        x->in = sdup(r->in);
        x->out = sdup(r->out);
        x->staged = sdup(r->staged);
        x->settings = sdup(r->settings);
    }
}

static void on_fail(void *ctx, const char *path, const char *reason)
{
    collect *c = ctx;
    if (c->nfail < MAXN) {
        c->fail_path[c->nfail] = sdup(path);
        c->fail_reason[c->nfail] = sdup(reason);
        c->nfail++;
    }
}

static void collect_free(collect *c)
{
    for (int i = 0; i < 2 * c->ntodo; i++)
        free(c->todo[i]);
    for (int i = 0; i < c->nrec; i++) {
        free((char *)c->rec[i].in);
        free((char *)c->rec[i].out);
        free((char *)c->rec[i].staged);
        free((char *)c->rec[i].settings);
    }
    for (int i = 0; i < c->nfail; i++) {
        free(c->fail_path[i]);
        free(c->fail_reason[i]);
    }
    memset(c, 0, sizeof *c);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return b;
}

static int same_file(const char *a, const char *b)
{
    size_t na, nb;
    unsigned char *x = slurp(a, &na), *y = slurp(b, &nb);
    int same = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return same;
}

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* hidden entries of dir other than the manifest */
static int hidden_left(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            strcmp(e->d_name, ".imgpu-batch"))
            n++;
    if (d)
        closedir(d);
    return n;
}

static void write_image(const char *path, int seed)
{
    imgpu_image *im = imgpu_image_new(37 + seed, 23 + 2 * seed, 3, 8);
    for (int y = 0; y < im->height; y++)
        for (int x = 0; x < im->width * 3; x++)
            im->data[(size_t)y * im->stride + (size_t)x] = (unsigned char)(((size_t)(y * 131 + x) * (7 + seed)) % 97 + 40);
    CHECK(imgpu_image_save(im, path, NULL) == 0, "save %s: %s", path, imgpu_error_message());
    imgpu_image_free(im);
}

int main(void)
{
    char root[] = "/tmp/imgpu_split_XXXXXX";
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    char in[256], sub[256], ref[256], out[256], p[512], q[512];
    snprintf(in, sizeof in, "%s/in", root);
    snprintf(sub, sizeof sub, "%s/in/sub", root);
    snprintf(ref, sizeof ref, "%s/ref", root);
    snprintf(out, sizeof out, "%s/out", root);
    mkdir(in, 0777);
    mkdir(sub, 0777);
    const char *names[] = {"a.png", "b.png", "c.png", "d.png", "e.png", "sub/f.png"};
    const int nimg = 6;
    for (int i = 0; i < nimg; i++) {
        snprintf(p, sizeof p, "%s/%s", in, names[i]);
        write_image(p, i);
    }
    snprintf(p, sizeof p, "%s/bad.png", in);
    FILE *f = fopen(p, "wb");
    fputs("\x89PNG\r\n\x1a\n not a png", f);
    fclose(f);

    /* the whole run, the reference */
    char *argv_ref[] = {"batch", "--equalize", "--device", "cpu", "--jobs", "2", "-o", ref, "--", in, NULL};
    collect c;
    memset(&c, 0, sizeof c);
    imgpu_batch_summary sum;
    int rc = imgpu_batch_run(10, argv_ref, on_fail, &c, &sum);
    CHECK(rc == 1 && sum.done == nimg && sum.failed == 1, "reference run: rc %d done %d failed %d", rc, sum.done,
          sum.failed);
    collect_free(&c);

    /* the plan */
    char *argv[] = {"batch", "--equalize", "--device", "cpu", "--jobs", "2", "-o", out, "--", in, NULL};
    rc = imgpu_batch_plan(10, argv, on_todo, on_fail, &c, &sum);
    CHECK(rc == 0 && c.ntodo == nimg + 1 && sum.done == nimg + 1 && c.nfail == 0, "plan: rc %d, %d to do, %d failed",
          rc, c.ntodo, c.nfail);
    CHECK(exists(out) && hidden_left(out) == 0, "the plan made OUTDIR and nothing in it");
    snprintf(p, sizeof p, "%s/.imgpu-batch", out);
    CHECK(!exists(p), "the plan wrote no manifest");
    char *pairs[2 * MAXN];
    const int npairs = c.ntodo;
    for (int i = 0; i < 2 * npairs; i++)
        pairs[i] = sdup(c.todo[i]);
    collect_free(&c);

    /* two shares, staged */
    const int half = npairs / 2;
    rc = imgpu_batch_stage(10, argv, (const char *const *)pairs, (size_t)half, "t-1", on_staged, on_fail, &c, &sum);
    int rc2 = imgpu_batch_stage(10, argv, (const char *const *)pairs + 2 * half, (size_t)(npairs - half), "t-1",
                                on_staged, on_fail, &c, &sum);
    CHECK(c.nrec == nimg && c.nfail == 1, "staged %d (want %d), failed %d", c.nrec, nimg, c.nfail);
    CHECK(rc + rc2 == 1, "one share had the failure: rc %d, %d", rc, rc2);
    CHECK(c.nfail == 1 && strstr(c.fail_path[0], "bad.png") && c.fail_reason[0][0],
          "the corrupt file failed with a reason");
    CHECK(!exists(p), "staging wrote no manifest");
    for (int i = 0; i < c.nrec; i++) {
        const imgpu_batch_record *r = &c.rec[i];
        CHECK(!exists(r->out), "%s is not in place before the commit", r->out);
        CHECK(exists(r->staged) && strstr(r->staged, ".t-1."), "staged as %s", r->staged);
        const char *ss = strrchr(r->staged, '/'), *os = strrchr(r->out, '/');
        CHECK(ss - r->staged == os - r->out && !strncmp(r->staged, r->out, (size_t)(os - r->out)) && ss[1] == '.',
              "%s beside %s", r->staged, r->out);
        CHECK(r->settings && strstr(r->settings, "equalize") && r->out_size > 0, "record of %s", r->out);
    }

    /* the commit */
    collect k;
    memset(&k, 0, sizeof k);
    long put = imgpu_batch_commit(out, c.rec, (size_t)c.nrec, on_fail, &k);
    CHECK(put == nimg && k.nfail == 0, "commit: %ld put, %d failed (%s)", put, k.nfail, k.nfail ? k.fail_reason[0] : "");
    for (int i = 0; i < nimg; i++) {
        snprintf(p, sizeof p, "%s/%s", ref, names[i]);
        snprintf(q, sizeof q, "%s/%s", out, names[i]);
        CHECK(same_file(p, q), "%s equals imgpu_batch_run's", q);
    }
    snprintf(q, sizeof q, "%s/sub", out);
    CHECK(hidden_left(out) == 0 && hidden_left(q) == 0, "no temp name left");
    snprintf(p, sizeof p, "%s/.imgpu-batch", out);
    CHECK(exists(p), "the commit wrote the manifest");
    collect_free(&k);
    collect_free(&c);

    /* resume: nothing left to do */
    rc = imgpu_batch_plan(10, argv, on_todo, on_fail, &k, &sum);
    CHECK(k.ntodo == 1 && sum.skipped == nimg, "resumed plan: %d to do (the corrupt one), %d skipped", k.ntodo,
          sum.skipped);
    collect_free(&k);

    /* records that cannot be put in place fail alone */
    imgpu_batch_record bad[3];
    snprintf(p, sizeof p, "%s/.a.png.t-2.XXXXXX", out);   /* gone */
    bad[0] = (imgpu_batch_record){"x", "", p, "equalize", 1, 1, 10, 10};
    char outa[512], outb[512], elsewhere[512];
    snprintf(outa, sizeof outa, "%s/a.png", out);
    bad[0].out = outa;
    snprintf(elsewhere, sizeof elsewhere, "%s/in/.kept", root);   /* not beside its output */
    f = fopen(elsewhere, "wb");
    fputs("keep", f);
    fclose(f);
    bad[1] = (imgpu_batch_record){"y", outa, elsewhere, "equalize", 1, 1, 4, 0};
    snprintf(q, sizeof q, "%s/.b.png.t-2.123456", out);   /* changed since */
    f = fopen(q, "wb");
    fputs("changed", f);
    fclose(f);
    snprintf(outb, sizeof outb, "%s/b.png", out);
    bad[2] = (imgpu_batch_record){"z", outb, q, "equalize", 1, 1, 3, 0};
    put = imgpu_batch_commit(out, bad, 3, on_fail, &k);
    CHECK(put == 0 && k.nfail == 3, "bad records: %ld put, %d failed", put, k.nfail);
    CHECK(k.nfail == 3 && strstr(k.fail_reason[0], "staged") && strstr(k.fail_reason[1], "not beside") &&
          strstr(k.fail_reason[2], "changed"), "reasons");
    CHECK(exists(elsewhere), "a file named elsewhere is never removed");
    CHECK(!exists(q), "a changed staged file of OUTDIR is removed");
    snprintf(p, sizeof p, "%s/a.png", ref);
    CHECK(same_file(p, outa), "a failed record leaves the output there as it was");
    collect_free(&k);

    /* the tag */
    rc = imgpu_batch_stage(10, argv, (const char *const *)pairs, 1, "../x", on_staged, on_fail, &k, &sum);
    CHECK(rc == 2 && sum.fatal, "an invalid tag is a usage error (rc %d)", rc);
    collect_free(&k);

    for (int i = 0; i < 2 * npairs; i++)
        free(pairs[i]);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    printf("test_batch_split: %d checks, %d failed\n", s_checks, s_fail);
    return s_fail ? 1 : 0;
}
