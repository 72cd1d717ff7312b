/* batch_item.c — what every stage of `imgpu batch` does to one item, below the pipeline that
 * runs the stages (batch_run.c) and the GPU stage (batch_gpu.c), which both call it: reports,
 * failures and progress; an item's ops, its CPU run and its release (with its token); the
 * load's options with the job's checks from the header. Nothing here starts a thread.
 */
#include "batch_internal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- reporting and progress ------------------------------------------------------------- */

static pthread_mutex_t s_report_lock = PTHREAD_MUTEX_INITIALIZER;
static int s_bar_shown; /* a progress bar is on the terminal's last line */
static int s_tty;

void imgpu__batch_report(const char *fmt, ...)
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

static imgpu_batch_fail_fn s_fail_fn;
static void *s_fail_ctx;

void imgpu__batch_set_fail_hook(imgpu_batch_fail_fn fn, void *ctx)
{
    s_fail_fn = fn;
    s_fail_ctx = ctx;
}

void imgpu__batch_failed(const char *path, const char *reason, const char *fmt, ...)
{
    if (s_fail_fn) {
        pthread_mutex_lock(&s_report_lock);
        s_fail_fn(s_fail_ctx, path, reason);
        pthread_mutex_unlock(&s_report_lock);
        return;
    }
    char line[IMGPU_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    imgpu_vformat_message(line, sizeof line, fmt, ap);
    va_end(ap);
    imgpu__batch_report("%s", line);
}

double imgpu__batch_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

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
void imgpu__batch_progress(stats *st, int final)
{
    if (st->quiet)
        return;
    pthread_mutex_lock(&s_report_lock);
    double t = imgpu__batch_now();
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

/* ---- one item ---------------------------------------------------------------------------- */

void imgpu__batch_item_free(item *it)
{
    imgpu_meta_free(it->meta);
    imgpu_image_free(it->in);
    imgpu_image_free(it->out);
    free(it->jpeg);
    free(it->bits);
    free(it);
}

void imgpu__batch_token_give(tokens *t)
{
    pthread_mutex_lock(&t->lock);
    t->left++;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->lock);
}

/* The ops for one image: a rotation background on a gray image is the color's luma, as in
 * `imgpu rotate` (op.h's one rule), so that batch output equals the single-image command's. */
void imgpu__batch_ops_for_channels(const bopts *o, int channels, imgpu_op *ops)
{
    memcpy(ops, o->ops, (size_t)o->nops * sizeof *ops);
    imgpu_ops_for_image(ops, o->nops, channels >= 3 ? 3 : 1);
}

void imgpu__batch_ops_for(const bopts *o, const imgpu_image *in, imgpu_op *ops)
{
    imgpu__batch_ops_for_channels(o, imgpu_image_color_channels(in), ops);
}

void imgpu__batch_fail_item(batch *B, item *it, const char *msg)
{
    msg = msg && *msg ? msg : "unknown error";
    imgpu__batch_failed(it->job->in, msg, "failed '%s': %s", it->job->in, msg);
    atomic_fetch_add(&B->st.failed, 1);
    imgpu__batch_item_free(it);
    imgpu__batch_token_give(&B->tok);
    imgpu__batch_progress(&B->st, 0);
}

/* A JPEG kept as bytes for nvJPEG, decoded on the CPU after all (libjpeg-turbo, with the
 * load's limits and orientation): no GPU stage, nvJPEG refused it, or the GPU failed. */
int imgpu__batch_jpeg_to_pixels(batch *B, item *it)
{
    imgpu_meta *m = NULL;
    batch_load bl;
    imgpu__batch_load_options(B, it->job, &bl);
    it->in = imgpu_image_load_memory_meta(it->jpeg, it->jpeg_len, it->job->in, &bl.lo, &m);
    free(it->jpeg);
    it->jpeg = NULL;
    if (!it->in)
        return -1;
    imgpu_meta_free(it->meta);
    it->meta = m;
    atomic_fetch_add(&B->st.jpeg_cpu, 1);
    return 0;
}

/* The ops on the CPU reference backend; on failure the item is failed and freed. */
int imgpu__batch_cpu_ops(batch *B, item *it)
{
    imgpu_op ops[MAX_OPS];
    if (it->jpeg && imgpu__batch_jpeg_to_pixels(B, it) < 0) {
        imgpu__batch_fail_item(B, it, imgpu_error_message());
        return -1;
    }
    imgpu__batch_ops_for(B->o, it->in, ops);
    it->out = B->o->stage_copy ? imgpu_image_copy(it->in)
                               : imgpu_pipeline_run(it->in, ops, B->o->nops, IMGPU_DEVICE_CPU, NULL);
    if (!it->out) {
        imgpu__batch_fail_item(B, it, imgpu_error_message());
        return -1;
    }
    imgpu_image_free(it->in);
    it->in = NULL;
    return 0;
}

void imgpu__batch_set_tty(int tty) { s_tty = tty; }

/* The bounds of a job's pipeline on a w x h image (imgpu_pipeline_plan: every result and the
 * memory) and whether its output format can hold the result: an image refused here fails
 * alone, with its file and reason. */
int imgpu__batch_check_job(const batch *B, const bjob *job, int w, int h, int c, int depth)
{
    imgpu_op ops[MAX_OPS];
    imgpu_plan plan;
    char why[200];
    if (B->o->stage_copy)
        return 0;
    imgpu__batch_ops_for_channels(B->o, c, ops);
    if (imgpu_pipeline_plan(w, h, c, depth, ops, B->o->nops, NULL, job->in, &plan) < 0)
        return -1;
    if (imgpu_format_check_size(imgpu_format_from_path(job->out), plan.out_w, plan.out_h, plan.channels,
                                B->o->run.out_depth == 8 ? 8 : plan.depth, why, sizeof why) < 0)
        return imgpu_error("cannot write '%s': %s", job->out, why);
    return 0;
}

/* The load's hook: the job checked from the header, before its input is decoded (issue 25:
 * a bomb under --max-memory is refused without the decode). */
static int check_shape(const imgpu_image_shape *s, void *ctx)
{
    const batch_load *bl = ctx;
    return imgpu__batch_check_job(bl->B, bl->job, s->width, s->height, s->channels, s->depth);
}

void imgpu__batch_load_options(batch *B, const bjob *job, batch_load *bl)
{
    bl->lo = B->o->run.load;
    bl->lo.on_shape = check_shape;
    bl->lo.on_shape_ctx = bl;
    bl->B = B;
    bl->job = job;
}

