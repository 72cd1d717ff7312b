/* batch_gpu.c — the op stage of `imgpu batch` on the GPU: one thread per worker, two
 * sessions each, double-buffered (batch_run.c says how the stages fit); JPEGs decoded and
 * encoded by nvJPEG where it is built in; what batch does with the session door's verdict on
 * a failed image (session.h: the CPU finishes it, or it fails, the sessions are rebuilt, else
 * the rest runs on the CPU). And --stage-copy's plain copy, the stage the GPU's is measured
 * against. The GPU is reached through the session door only. */
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
#include "session.h"

/* ---- the GPU stage ----------------------------------------------------------------------- */

int imgpu__batch_gpu_count(void) { return imgpu_session_device_count(); }

int imgpu__batch_default_gpu(void) { return imgpu_session_default_device(); }

/* With nvJPEG, a JPEG input that the GPU stage may decode is read and checked here but not
 * decoded (it->jpeg): those whose markers nvJPEG takes (imgpu_session_jpeg_route). An EXIF
 * orientation 2..8 (nearly every phone photo; unless --no-auto-orient) is kept in it->orient:
 * the GPU turns the decode upright with the flip op before the batch's ops (jpeg_batch), the
 * same pixels the CPU load's turn gives. Others are decoded here from the same bytes. 1 when
 * it read the file (it->in, it->jpeg, or an error), 0 when the caller loads it as usual. */
int imgpu__batch_jpeg_read(batch *B, item *it, size_t idx)
{
    if (!imgpu_session_jpeg_built_in() || B->o->device == IMGPU_DEVICE_CPU || B->o->stage_copy ||
        imgpu_format_from_path(it->job->in) != IMGPU_FORMAT_JPEG)
        return 0;
    batch_load bl;
    imgpu__batch_load_options(B, it->job, &bl);
    const imgpu_load_options *lo = &bl.lo;
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
    const int route = r.format == IMGPU_FORMAT_JPEG && sh.depth == 8 ? imgpu_session_jpeg_route(buf, len, &c)
                                                                       : IMGPU_SESSION_JPEG_CPU;
    const int o = it->meta->orientation;
    if (route != IMGPU_SESSION_JPEG_CPU && c == sh.channels) {
        it->jpeg = buf;
        it->jpeg_len = len;
        it->route = route;
        it->w = sh.width;
        it->h = sh.height;
        it->c = c;
        it->orient = o >= 2 && o <= 8 && !lo->no_auto_orient ? o : 0;
        return 1;
    }
    it->jpeg = buf;
    it->jpeg_len = len;
    imgpu__batch_jpeg_to_pixels(B, it);
    return 1;
}


/* A plain copy in place of the GPU work: what `--stage-copy` measures against. */
void *imgpu__batch_copy_stage_thread(void *arg)
{
    gpu_worker *w = arg;
    batch *B = w->B;
    item *it;
    while ((it = imgpu__queue_pop(B->to_gpu)))
        if (imgpu__batch_cpu_ops(B, it) == 0)
            imgpu__queue_push(B->to_enc, it);
    imgpu__queue_done(B->to_enc);
    return NULL;
}

typedef struct slot {
    imgpu_session *s;
    item *it;   /* enqueued on s, result not yet downloaded */
} slot;

static int gpu_start(batch *B, slot *sl, item *it)
{
    imgpu_op ops[MAX_OPS];
    imgpu__batch_ops_for(B->o, it->in, ops);
    int rc = imgpu_session_upload(sl->s, it->in);
    if (rc == 0)
        rc = imgpu_session_run(sl->s, ops, B->o->nops, NULL, NULL, NULL);
    if (rc == 0)
        sl->it = it;
    return rc;
}

/* Download a slot's result and pass it on. On failure the item stays in the slot. */
static int gpu_finish(batch *B, slot *sl)
{
    item *it = sl->it;
    int rc = imgpu_session_download(sl->s, &it->out);
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
    if (imgpu__batch_cpu_ops(B, it) == 0)
        imgpu__queue_push(B->to_enc, it);
}

/* An image the GPU did not finish (rc != 0), as the door judges it for `device`
 * (imgpu_session_failure): the CPU finishes it, or it fails its file. 1 when it was a fault
 * (the sessions must be rebuilt). */
static int gave_up(batch *B, item *it, int rc, imgpu_device device)
{
    switch (imgpu_session_failure(rc, device, &B->sticky_seen)) {
    case IMGPU_SESSION_TO_CPU:
        gpu_to_cpu(B, it);
        return 0;
    case IMGPU_SESSION_INNOCENT:
        gpu_to_cpu(B, it);
        return 1;
    case IMGPU_SESSION_FAULT:
        break;
    }
    imgpu__batch_fail_item(B, it, imgpu_error_message());
    return 1;
}

/* The same under this batch's --device: out of device memory sends the image to the CPU
 * unless it is `cuda`. */
static int gpu_gave_up(batch *B, item *it, int rc) { return gave_up(B, it, rc, B->o->device); }

static int sessions_new(slot sl[2])
{
    for (int k = 0; k < 2; k++) {
        imgpu_session_free(sl[k].s);
        sl[k].s = NULL;
    }
    for (int k = 0; k < 2; k++)
        if (!(sl[k].s = imgpu_session_new()))
            return -1;
    return 0;
}

_Static_assert(IMGPU_BATCH_LATER >= IMGPU_SESSION_JPEG_BATCH, "later[] holds what one nvJPEG batch gathers");

/* One batch of JPEGs through nvJPEG: `first` and the JPEGs already waiting (up to
 * IMGPU_SESSION_JPEG_BATCH), decoded together on the hardware engines (or by the CUDA decoder), then
 * each through a session: the ops on the decoded image, and a JPEG output encoded on the GPU
 * (other outputs downloaded for the CPU encoders). Images that are not JPEG bytes, taken from
 * the queue on the way, go to later[] for the usual path. A file nvJPEG refuses is decoded on
 * the CPU and goes on through the GPU. 0, or -1 after a GPU fault (the caller rebuilds its
 * sessions). */
static int jpeg_batch(batch *B, slot sl[2], imgpu_session_jpeg *jm, item *first, item **later, int *nlater)
{
    item *v[IMGPU_SESSION_JPEG_BATCH], *x;
    int n = 0, fault = 0;
    v[n++] = first;
    while (n + *nlater < IMGPU_SESSION_JPEG_BATCH && (x = imgpu__queue_try_pop(B->to_gpu)))
        if (x->jpeg)
            v[n++] = x;
        else
            later[(*nlater)++] = x;
    const unsigned char *data[IMGPU_SESSION_JPEG_BATCH];
    size_t len[IMGPU_SESSION_JPEG_BATCH];
    int route[IMGPU_SESSION_JPEG_BATCH], ch[IMGPU_SESSION_JPEG_BATCH], w[IMGPU_SESSION_JPEG_BATCH],
        h[IMGPU_SESSION_JPEG_BATCH];
    int ok[IMGPU_SESSION_JPEG_BATCH], how[IMGPU_SESSION_JPEG_BATCH];
    for (int i = 0; i < n; i++) {
        data[i] = v[i]->jpeg;
        len[i] = v[i]->jpeg_len;
        route[i] = v[i]->route;
        ch[i] = v[i]->c;
        w[i] = v[i]->w;
        h[i] = v[i]->h;
    }
    imgpu_error_clear();
    double t0 = imgpu__batch_now();
    int rc = imgpu_session_jpeg_decode(jm, n, data, len, route, ch, w, h, ok, how);
    atomic_fetch_add(&B->st.t_gpu_decode, (long long)((imgpu__batch_now() - t0) * 1e6));
    t0 = imgpu__batch_now();
    if (rc) {
        /* a device error, or no memory for the pool: the CPU decodes and runs them all */
        imgpu__batch_report("nvJPEG: %s; these %d images run on the CPU", imgpu_error_message(), n);
        for (int i = 0; i < n; i++)
            gpu_to_cpu(B, v[i]);
        /* whatever --device says; the sessions are rebuilt unless it was only out of memory */
        return imgpu_session_failure(rc, IMGPU_DEVICE_AUTO, NULL) == IMGPU_SESSION_TO_CPU ? 0 : -1;
    }
    const bopts *o = B->o;
    const imgpu_save_options *so = &o->run.save;
    imgpu_session_jpeg_params jp = {
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
        imgpu_op ops[MAX_OPS + 1];   /* the orientation's flip, then the batch's ops */
        imgpu_error_clear();
        if (!ok[i]) {
            /* nvJPEG refused it: libjpeg-turbo decodes it (and fails it alone, with its
             * reason, if it is corrupt); then the GPU runs its ops as for any image */
            if (imgpu__batch_jpeg_to_pixels(B, it) < 0) {
                imgpu__batch_fail_item(B, it, imgpu_error_message());
                continue;
            }
            rc = gpu_start(B, s, it);
            if (rc == 0 && (rc = gpu_finish(B, s)) != 0)
                s->it = NULL;
        } else {
            atomic_fetch_add(how[i] == IMGPU_SESSION_JPEG_HW ? &B->st.jpeg_hw : &B->st.jpeg_cuda, 1);
            /* an EXIF orientation: turned upright on the GPU first, as the CPU load turns it
             * (a flip is a pixel permutation: exact) */
            const int turn = it->orient >= 2;
            if (turn)
                ops[0] = imgpu_op_flip_for_orientation(it->orient);
            imgpu__batch_ops_for_channels(o, ch[i], ops + turn);
            rc = imgpu_session_upload_jpeg(s->s, jm, i);
            if (rc == 0)
                rc = imgpu_session_run(s->s, ops, o->nops + turn, NULL, NULL, NULL);
            if (rc == 0 && turn) {   /* the output's EXIF says 1, its size the upright one */
                imgpu_meta_set_upright(it->meta, it->orient >= 5 ? h[i] : w[i], it->orient >= 5 ? w[i] : h[i]);
                atomic_fetch_add(&B->st.jpeg_turned, 1);
            }
            int enc = 1;   /* 1: not encoded on the GPU */
            if (rc == 0 && imgpu_format_from_path(it->job->out) == IMGPU_FORMAT_JPEG) {
                enc = imgpu_session_jpeg_encode(jm, s->s, &jp, &it->bits, &it->bits_len);
                if (enc < 0)
                    rc = enc;
            }
            if (rc == 0 && enc == 1)
                rc = imgpu_session_download(s->s, &it->out);
            if (rc == 0) {
                if (enc == 0)
                    atomic_fetch_add(&B->st.jpeg_enc, 1);
                free(it->jpeg);
                it->jpeg = NULL;
                imgpu__queue_push(B->to_enc, it);
            }
        }
        if (rc)
            fault = gpu_gave_up(B, it, rc);
    }
    for (int k = 0; k < 2; k++)   /* nothing reads the pool once this returns */
        imgpu_session_wait(sl[k].s);
    atomic_fetch_add(&B->st.t_gpu_ops, (long long)((imgpu__batch_now() - t0) * 1e6));
    return fault ? -1 : 0;
}

/* nvJPEG's set-up for one worker, on a thread of its own: the handles (shared by the GPU's
 * workers), states and stream, ~1 s on an H200 (bench/nvjpeg_setup.c). */
typedef struct jpeg_setup {
    pthread_t tid;
    int started, device;
    imgpu_session_jpeg *jm;
    char err[IMGPU_MESSAGE_MAX];
} jpeg_setup;

/* nvJPEG's modules kept between batches of one process (imgpu_batch_keep_state: the Python
 * module, whose imgpu.batch and imgpu.dask workers run batch after batch): a module set up once
 * (handles ~0.6 s, hardware state ~0.35 s, the decode pool) serves the next batch on its GPU,
 * instead of each batch paying the set-up again. Off by default: a command runs one batch. */
#define KEPT_MAX 8
static pthread_mutex_t s_kept_lock = PTHREAD_MUTEX_INITIALIZER;
static int s_keep;
/* A shelf of kept objects, each with its GPU: the modules, and the workers' two CUDA sessions
 * (stream, pinned staging, device buffers: cudaMallocHost and cudaMalloc of the largest image
 * each), made again by every batch before. */
typedef struct {
    int device;
    void *p;
} kept;
static kept s_kept_jm[KEPT_MAX], s_kept_sess[2 * KEPT_MAX];
static int s_njm, s_nsess;

void imgpu_batch_keep_state(int keep)
{
    pthread_mutex_lock(&s_kept_lock);
    s_keep = keep != 0;
    pthread_mutex_unlock(&s_kept_lock);
}

/* Frees the kept modules and sessions, each on its own GPU: on a thread of its own where one
 * starts, so that the caller's thread keeps its CUDA device (a Python thread's torch would
 * follow it). */
static void *release_kept(void *arg)
{
    (void)arg;
    for (int i = 0; i < s_njm + s_nsess; i++) {
        const kept *k = i < s_njm ? &s_kept_jm[i] : &s_kept_sess[i - s_njm];
        if (imgpu_session_use_device(k->device) != 0)
            imgpu_error_clear();   /* the GPU is gone (a sticky fault): nothing there to free */
        else if (i < s_njm)
            imgpu_session_jpeg_free(k->p);
        else
            imgpu_session_free(k->p);
    }
    s_njm = s_nsess = 0;
    return NULL;
}

int imgpu_batch_release_state(void)
{
    pthread_mutex_lock(&s_kept_lock);
    const int n = s_njm + s_nsess;
    pthread_t t;
    if (n > 0 && pthread_create(&t, NULL, release_kept, NULL) == 0)
        pthread_join(t, NULL);
    else if (n > 0)
        release_kept(NULL);
    pthread_mutex_unlock(&s_kept_lock);
    return n;
}

/* An object of `device` taken off the shelf (*n kept there), or NULL. */
static void *kept_take(kept *shelf, int *n, int device)
{
    void *p = NULL;
    pthread_mutex_lock(&s_kept_lock);
    for (int i = 0; i < *n; i++)
        if (shelf[i].device == device) {
            p = shelf[i].p;
            shelf[i] = shelf[--*n];
            break;
        }
    pthread_mutex_unlock(&s_kept_lock);
    return p;
}

/* p kept on the shelf for the next batch (1), or 0 (keeping off, the shelf full, or p NULL):
 * the caller frees it. Only what a worker that ended sound used is offered (after a sticky
 * fault the GPU's context is gone). */
static int kept_put(kept *shelf, int *n, int cap, int device, void *p)
{
    int put = 0;
    pthread_mutex_lock(&s_kept_lock);
    if (p && s_keep && *n < cap) {
        shelf[*n].device = device;
        shelf[(*n)++].p = p;
        put = 1;
    }
    pthread_mutex_unlock(&s_kept_lock);
    return put;
}

/* The worker's sessions kept for the next batch, or freed (not kept: off, full, or after a
 * fault). Their images are all finished (gpu_finish) by then. */
static void sessions_end(slot sl[2], int device, int keep)
{
    for (int k = 0; k < 2; k++) {
        if (!(keep && kept_put(s_kept_sess, &s_nsess, 2 * KEPT_MAX, device, sl[k].s)))
            imgpu_session_free(sl[k].s);
        sl[k].s = NULL;
    }
}

static void *jpeg_setup_thread(void *arg)
{
    jpeg_setup *js = arg;
    imgpu_error_clear();
    if (imgpu_session_use_device(js->device) == 0 && !(js->jm = kept_take(s_kept_jm, &s_njm, js->device)))
        js->jm = imgpu_session_jpeg_new();
    if (!js->jm)
        snprintf(js->err, sizeof js->err, "%s", imgpu_error_message());
    return NULL;
}

void *imgpu__batch_gpu_thread(void *arg)
{
    gpu_worker *w = arg;
    batch *B = w->B;
    slot sl[2] = {{NULL, NULL}, {NULL, NULL}};
    int alive = imgpu_session_use_device(w->device) == 0;
    for (int k = 0; alive && k < 2; k++)   /* the last batch's sessions where kept, else new ones */
        if (!(sl[k].s = kept_take(s_kept_sess, &s_nsess, w->device)) && !(sl[k].s = imgpu_session_new()))
            alive = 0;
    if (!alive) {
        imgpu__batch_report("GPU %d: %s; its share of the batch runs on the CPU", w->device, imgpu_error_message());
        atomic_fetch_sub(&B->gpu_workers_alive, 1);
    }
    int cur = 0;
    item *it;
    item *later[IMGPU_BATCH_LATER];   /* images jpeg_batch took off the queue for the usual path */
    int nlater = 0, first_later = 0;
    imgpu_session_jpeg *jm = NULL;
    int jm_tried = 0;
    /* nvJPEG sets up on its own thread from now on, while this worker takes the batch's first
     * JPEGs (decoded on the CPU) and its other images; the first JPEG for nvJPEG waits for it */
    jpeg_setup js = { .device = w->device };
    if (alive && B->nvjpeg_from < B->ntodo)
        js.started = pthread_create(&js.tid, NULL, jpeg_setup_thread, &js) == 0;
    while ((it = first_later < nlater ? later[first_later++] : imgpu__queue_pop(B->to_gpu))) {
        if (first_later == nlater)
            first_later = nlater = 0;
        if (!alive) {
            gpu_to_cpu(B, it);
            continue;
        }
        if (it->jpeg && !jm && !jm_tried) {
            /* the set-up begun above (or, where its thread could not start, here) */
            const double t0 = imgpu__batch_now();
            jm_tried = 1;
            if (js.started) {
                pthread_join(js.tid, NULL);
                js.started = 0;
                jm = js.jm;
            } else if (!(jm = kept_take(s_kept_jm, &s_njm, w->device)) && !(jm = imgpu_session_jpeg_new())) {
                snprintf(js.err, sizeof js.err, "%s", imgpu_error_message());
            }
            if (!jm)
                imgpu__batch_report("GPU %d: nvJPEG: %s; its JPEGs are decoded on the CPU", w->device, js.err);
            atomic_fetch_add(&B->st.t_setup, (long long)((imgpu__batch_now() - t0) * 1e6));
        }
        if (it->jpeg && jm && nlater == 0) {
            /* the images in flight on the two slots first: the batch uses both sessions */
            for (int k = 0; k < 2; k++) {
                slot *s = &sl[cur ^ 1 ^ k];
                int rc;
                if (s->it && (rc = gpu_finish(B, s)) != 0) {
                    item *x = s->it;
                    s->it = NULL;
                    /* as under --device cuda: out of memory here fails its file too */
                    gave_up(B, x, rc, IMGPU_DEVICE_CUDA);
                }
            }
            cur = 0;
            if (jpeg_batch(B, sl, jm, it, later, &nlater) != 0 && sessions_new(sl) != 0) {
                alive = 0;
                if (atomic_fetch_sub(&B->gpu_workers_alive, 1) == 1)
                    imgpu__batch_report("the GPU stage failed (%s); the rest of the batch runs on the CPU",
                           imgpu_error_message());
            }
            continue;
        }
        if (it->jpeg && imgpu__batch_jpeg_to_pixels(B, it) < 0) {
            imgpu__batch_fail_item(B, it, imgpu_error_message());
            continue;
        }
        slot *s = &sl[cur], *o = &sl[cur ^ 1];
        imgpu_error_clear();
        int rc = gpu_start(B, s, it);
        int fault = rc ? gpu_gave_up(B, it, rc) : 0;
        /* image k's download waits on its own stream only, while k+1 is already queued */
        if (!fault && o->it && (rc = gpu_finish(B, o)) != 0) {
            item *bad_it = o->it;
            o->it = NULL;
            fault = gpu_gave_up(B, bad_it, rc);
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
                    imgpu__batch_report("the GPU stage failed (%s); the rest of the batch runs on the CPU",
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
            imgpu__batch_fail_item(B, x, imgpu_error_message());
        }
    }
    sessions_end(sl, w->device, alive && !atomic_load(&B->sticky_seen));
    if (js.started) {   /* set up, and no JPEG came for it after all */
        pthread_join(js.tid, NULL);
        jm = js.jm;
    }
    if (!(alive && !atomic_load(&B->sticky_seen) && kept_put(s_kept_jm, &s_njm, KEPT_MAX, w->device, jm)))
        imgpu_session_jpeg_free(jm);
    imgpu__queue_done(B->to_enc);
    return NULL;
}

