/* batch_run.c — the pipeline of `imgpu batch`.
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
 * The op stage runs on the GPU workers (batch_gpu.c) when CUDA is used, else on the decode
 * threads. Ctrl-C is here too; reports, progress and what is done to one item are
 * batch_item.c's.
 */
#include "batch_internal.h"
#include "session.h"
#include "cli_values.h"
#include "codec.h"

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

/* ---- the pipeline ------------------------------------------------------------------------ */

static void token_take(tokens *t)
{
    pthread_mutex_lock(&t->lock);
    while (t->left <= 0)
        pthread_cond_wait(&t->cv, &t->lock);
    t->left--;
    pthread_mutex_unlock(&t->lock);
}

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

int imgpu__batch_stop_signal(void) { return (int)s_stop_signal; }

void imgpu__batch_catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* The same checks once the image is in hand (or its JPEG bytes for nvJPEG, whose shape the
 * scan gave), before the ops run on either stage. */
static int refuse_early(batch *B, item *it)
{
    const int swap = !it->in && it->orient >= 5;   /* turned upright on the GPU: 5..8 transpose */
    const int w = it->in ? it->in->width : swap ? it->h : it->w;
    const int h = it->in ? it->in->height : swap ? it->w : it->h;
    const int c = it->in ? it->in->channels : it->c, depth = it->in ? it->in->depth : 8;
    return imgpu__batch_check_job(B, it->job, w, h, c, depth);
}

static void *decode_thread(void *arg)
{
    batch *B = arg;
    /* The CPU ops this thread runs get its share of the cores: `jobs` threads already run one
     * image each (fewer images than threads: each image gets more), and the CPU backend would
     * otherwise split every op over all the cores again. */
    const int busy = B->jobs < (int)B->ntodo ? B->jobs : (int)B->ntodo;
    imgpu_backend_cpu_threads(busy > 0 ? (imgpu__batch_cores() + busy - 1) / busy : 0);
    for (;;) {
        if (s_stop_signal)
            break;
        size_t i = atomic_fetch_add(&B->next, 1);
        if (i >= B->ntodo)
            break;
        token_take(&B->tok);
        item *it = calloc(1, sizeof *it);
        if (!it) {
            imgpu__batch_failed(B->todo[i]->in, "out of memory", "failed '%s': out of memory", B->todo[i]->in);
            atomic_fetch_add(&B->st.failed, 1);
            imgpu__batch_token_give(&B->tok);
            continue;
        }
        it->job = B->todo[i];
        imgpu_error_clear();
        const double tr = imgpu__batch_now();
        if (!imgpu__batch_jpeg_read(B, it, i)) {
            imgpu_load_result lr = { 0 };
            batch_load bl;
            imgpu__batch_load_options(B, it->job, &bl);
            it->in = imgpu_image_load_ex(it->job->in, &bl.lo, &lr);
            it->meta = lr.meta;
        }
        atomic_fetch_add(&B->st.t_read, (long long)((imgpu__batch_now() - tr) * 1e6));
        if (!stage_wait(B)) {
            imgpu__batch_item_free(it);
            imgpu__batch_token_give(&B->tok);
            break;
        }
        if ((!it->in && !it->jpeg) || refuse_early(B, it) < 0) {
            imgpu__batch_fail_item(B, it, imgpu_error_message());
            continue;
        }
        /* With no GPU stage (or none left alive) the ops run here, on every decode thread (the
         * GPU stage takes every image the decoder gives: 8 or 16 bits, and JPEG bytes). */
        if (!B->use_gpu_stage || atomic_load(&B->gpu_workers_alive) == 0) {
            if (imgpu__batch_cpu_ops(B, it) == 0)
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
    long long size, mtime_ns;   /* a staged run: the output's, for its record */
} record_ctx;

static int record_output(void *ctx, long long size, long long mtime_ns)
{
    record_ctx *c = ctx;
    if (c->B->split) {   /* a staged run: the client records it (batch.h) */
        c->size = size;
        c->mtime_ns = mtime_ns;
        return 0;
    }
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
        record_ctx rec = {B, it->job, 0, 0};
        char *staged = NULL;
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
        const double tw = imgpu__batch_now();
        ok = ok && mkdirs_under(B->o->outdir, it->job->out) == 0;
        if (ok && B->split)
            imgpu__write_stage_next(B->split->tag, &staged);
        ok = ok && (it->bits ? imgpu_save_encoded_recorded(it->bits, it->bits_len, IMGPU_FORMAT_JPEG, it->job->out,
                                                     &so, record_output, &rec)
                       : imgpu_image_save_recorded(it->out, it->job->out, &so, png_threads,
                                                   record_output, &rec)) == 0;
        atomic_fetch_add(&B->st.t_write, (long long)((imgpu__batch_now() - tw) * 1e6));
        atomic_fetch_sub(&B->busy_encoders, 1);
        if (!ok) {
            imgpu__write_stage_next(NULL, NULL);
            imgpu__batch_fail_item(B, it, imgpu_error_message());
            continue;
        }
        if (B->split && !staged) {   /* cannot happen: a regular file's write stages */
            imgpu__batch_fail_item(B, it, "the output was not staged");
            continue;
        }
        if (B->split) {   /* handed over staged; the client puts it in place */
            const bjob *j = it->job;
            imgpu_batch_record r = {j->in, j->out, staged, j->settings, (long long)j->in_size, j->in_mtime,
                                    rec.size, rec.mtime_ns};
            pthread_mutex_lock(&B->split->lock);
            B->split->on_staged(B->split->ctx, &r);
            pthread_mutex_unlock(&B->split->lock);
            free(staged);
            atomic_fetch_add(&B->st.out_bytes, rec.size);
        } else {
            struct stat st;
            if (stat(it->job->out, &st) == 0)
                atomic_fetch_add(&B->st.out_bytes, (long long)st.st_size);
        }
        atomic_fetch_add(&B->st.in_bytes, (long long)it->job->in_size);
        atomic_fetch_add(&B->st.done, 1);
        imgpu__batch_item_free(it);
        imgpu__batch_token_give(&B->tok);
        imgpu__batch_progress(&B->st, 0);
    }
    return NULL;
}

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
    } else if (planned > 0) {   /* none planned: --device cpu, or auto's set-up rule */
        imgpu_device d = IMGPU_DEVICE_CPU;
        rc = imgpu_device_resolve(o->device, &d);
        if (rc == 0 && d == IMGPU_DEVICE_CUDA) {
            int count = imgpu__batch_gpu_count();
            for (int i = 0; rc == 0 && i < o->ndevices; i++)
                if (o->devices[i] >= count)
                    rc = imgpu_error("--devices: there is no GPU %d (%d found)", o->devices[i], count < 0 ? 0 : count);
            n = planned;
        }
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

/* The set-up rule. A GPU is worth setting up only for more images than the CPU finishes in the
 * meantime: CUDA's context takes ~0.3 s and nvJPEG's handles and states ~1 s more
 * (bench/nvjpeg_setup.c), while one decode thread does a 4K photo in ~40-60 ms (decode, ops,
 * encode on another thread). So:
 *   - with `--device auto`, a batch of no more than 8 images per decode thread runs on the CPU
 *     alone and never starts CUDA, unless it rotates (below). 4K photos, equalize, 16 cores
 *     (H200, bench/RESULTS.md): 1 / 16 / 64 / 100 in 0.10 / 0.23 / 0.68 / 0.99 s on the CPU
 *     against 0.42 / 0.58 / 0.99 / 2.09 s with the GPU stage, which above 64 also waits for
 *     nvJPEG; 150 (above the rule) 1.63 s against 2.18 s: the crossing is near 200 for
 *     equalize, and local contrast, ~1.4x equalize's CPU time, crosses near 150 (estimated from the
 *     500-photo figures, not measured);
 *     `--device cuda` and `--devices` always use the GPU;
 *   - in a larger batch the first 4 JPEGs per decode thread are decoded on the CPU while nvJPEG
 *     sets up (jpeg_split; 128 measured the same as 64 on 500 photos, 256 worse), and a batch
 *     with no more JPEGs than that never sets nvJPEG up.
 * IMGPU_NVJPEG_CPU_FIRST=N sets the count of the second rule, and twice N is the first's (0: the
 * GPU stage and nvJPEG for everything, as before the rules). Which file goes where depends
 * only on the list and the thread count, never on timing. */
int imgpu__batch_auto_cpu(batch *B)
{
    const bopts *o = B->o;
    B->jpeg_first_n = 4L * B->jobs;
    B->auto_cpu = 0;
    if (!imgpu_session_built_in() || o->device == IMGPU_DEVICE_CPU || o->stage_copy || B->ntodo == 0)
        return 0;
    const char *env = getenv("IMGPU_NVJPEG_CPU_FIRST");
    if (env && *env) {
        char *end;
        errno = 0;
        const long v = strtol(env, &end, 10);
        if (*end || errno || v < 0)
            imgpu__batch_report("IMGPU_NVJPEG_CPU_FIRST='%s' is not a count of images; using %ld", env, B->jpeg_first_n);
        else
            B->jpeg_first_n = v;
    }
    /* ... and only for ops the CPU does at the codecs' pace: a rotation by other than quarter
     * turns costs it ~3x the rest of an image's work (64 4K JPEGs, equalize + rotate 15, H100:
     * 4.27 s on the CPU against 1.49 s with the GPU stage), so such a batch keeps the GPU. */
    int cheap = 1;
    for (int i = 0; i < o->nops; i++)
        if (imgpu_op_desc_of(o->ops[i].kind)->heavy && imgpu_op_desc_of(o->ops[i].kind)->heavy(&o->ops[i]))
            cheap = 0;
    /* a staged share of a plan (imgpu.dask) decides as the plan's whole run would */
    const size_t ntodo = B->split && B->split->plan_ntodo ? B->split->plan_ntodo : B->ntodo;
    B->auto_cpu = o->device == IMGPU_DEVICE_AUTO && !o->ndevices && cheap && (long)ntodo <= 2 * B->jpeg_first_n;
    return B->auto_cpu;
}

/* Which JPEGs nvJPEG may take (B->nvjpeg_from): all but the first jpeg_first_n (the set-up
 * rule above), and none when the batch has no more than that. */
static void jpeg_split(batch *B)
{
    B->nvjpeg_from = B->ntodo;
    B->njpeg = 0;
    if (!imgpu_session_jpeg_built_in() || B->o->device == IMGPU_DEVICE_CPU || B->o->stage_copy || B->auto_cpu)
        return;
    /* a staged share counts the plan's JPEGs before it: the plan's first JPEGs, whichever share
     * holds them, are libjpeg-turbo's, as in the whole run (the same bytes however it is cut) */
    size_t j = B->split ? B->split->plan_jpegs_before : 0;
    for (size_t i = 0; i < B->ntodo; i++)
        if (imgpu_format_from_path(B->todo[i]->in) == IMGPU_FORMAT_JPEG) {
            B->njpeg++;
            if (B->nvjpeg_from == B->ntodo && (long)j >= B->jpeg_first_n)
                B->nvjpeg_from = i;
            j++;
        }
}

int imgpu__batch_run_pipeline(batch *B, int planned)
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
        imgpu__batch_report("cannot start the batch threads: %s", strerror(errno));
        atomic_store(&B->next, B->ntodo);
    }
    int nworkers = stage_decide(B, planned);
    if (nworkers < 0)
        rc = -1;
    void *(*fn)(void *) = imgpu__batch_copy_stage_thread;
    if (!o->stage_copy)
        fn = imgpu__batch_gpu_thread;
    for (int k = 0; k < nworkers; k++) {
        gw[k].B = B;
        gw[k].device = o->ndevices ? o->devices[k] : 0;
        if (!o->ndevices && !o->stage_copy)
            gw[k].device = imgpu__batch_default_gpu();
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
        imgpu__batch_fail_item(B, it, "no encode thread could be started");
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


int imgpu__batch_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}
