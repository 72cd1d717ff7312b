/* stb_impl.c — the one translation unit that compiles stb_image and stb_image_write (Debian's
 * libstb-dev headers, v2.27 / v1.16), with the configuration that makes them safe enough to
 * face untrusted files: only PNG, BMP, TGA and PNM (JPEG is libjpeg-turbo's, codec_jpeg.c);
 * decoding from memory only; every allocation of both libraries charged to a per-thread budget (so a lying header or a zlib
 * bomb is refused instead of taking gigabytes); PNG deflate through zlib. stb is compiled
 * `static` here, so nothing else can call it with another configuration; io.c, which does all
 * the checking stb does not, talks to it through the three imgpu__stb_* functions declared at
 * the bottom of io.h. Nothing here knows file names: failures come back as a reason string
 * and io.c records the message.
 */
#define _GNU_SOURCE   /* gettid() and sigevent's thread id: the watchdog's per-thread timer */
#include "io.h"
#include "png_parallel.h"

#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

/* ---- the bounded allocator ------------------------------------------------------------ */

/* Each block carries its size in front, so free and realloc can keep the books, and sits in
 * the thread's list of live blocks, so a decode abandoned at its deadline (below) can free
 * everything stb had allocated; the union keeps the payload as aligned as malloc's. */
typedef union stb_block {
    struct {
        size_t size;
        union stb_block *prev, *next;
    } h;
    max_align_t align;
} stb_block;

/* Per thread: batch mode decodes on several threads at once, and each decode has its own
 * budget. Outside imgpu__stb_decode/encode the budget is 0, so a stray call is refused. */
static _Thread_local size_t s_budget;
static _Thread_local size_t s_in_use;
static _Thread_local int s_refused;   /* a request went over the budget */
static _Thread_local int s_oom;       /* malloc itself failed */
static _Thread_local uint64_t s_deadline_ns;   /* decode-time limit; 0: none */
static _Thread_local int s_late;               /* an allocation came after it */
static _Thread_local stb_block *s_live;        /* every block not yet freed */
/* The decode-time watchdog (see run_bounded): while stb runs, s_jump is armed and a timer
 * signals this thread at the deadline; the handler jumps out of stb unless the thread is
 * inside our allocator (s_in_alloc), where a jump could leave s_live half-linked: then it
 * only sets s_expired, and the allocator refuses the request, which also ends the decode. */
static _Thread_local sigjmp_buf *volatile s_jump;
static _Thread_local volatile sig_atomic_t s_in_alloc;
static _Thread_local volatile sig_atomic_t s_expired;

static void link_block(stb_block *b)
{
    b->h.prev = NULL;
    b->h.next = s_live;
    if (s_live)
        s_live->h.prev = b;
    s_live = b;
}

static void unlink_block(stb_block *b)
{
    if (b->h.prev)
        b->h.prev->h.next = b->h.next;
    else
        s_live = b->h.next;
    if (b->h.next)
        b->h.next->h.prev = b->h.prev;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* stb cannot be interrupted, but it comes back here for memory: after the deadline every
 * request is refused, and stb gives up with "out of memory", which io.c reports as the time
 * limit. Between two allocations stb's work is bounded by the image the header declared. */
static int past_deadline(void)
{
    if (s_expired || (s_deadline_ns && now_ns() > s_deadline_ns))
        s_late = 1;
    return s_late;
}

void imgpu__stb_deadline_begin(uint64_t ms)
{
    uint64_t now = now_ns();
    s_late = 0;
    s_deadline_ns = ms > (UINT64_MAX - now) / UINT64_C(1000000) ? UINT64_MAX
                                                                : now + ms * UINT64_C(1000000);
}

int imgpu__decode_late(void) { return past_deadline(); }

int imgpu__stb_deadline_end(void)
{
    int late = past_deadline();
    s_deadline_ns = 0;
    s_late = 0;
    return late;
}

static void *stb_malloc_locked(size_t n);

static void *stb_malloc(size_t n)
{
    s_in_alloc = 1;
    void *p = stb_malloc_locked(n);
    s_in_alloc = 0;
    return p;
}

static void *stb_malloc_locked(size_t n)
{
    if (past_deadline()) {
        s_refused = 1;
        return NULL;
    }
    if (s_in_use > s_budget || n > s_budget - s_in_use || n > SIZE_MAX - sizeof(stb_block)) {
        s_refused = 1;
        return NULL;
    }
    /* calloc, not malloc: a corrupt file can leave parts of stb's buffers unwritten (stb's
     * JPEG decoder, before libjpeg-turbo took over, left a component no scan covered), which
     * stb then converts into pixels; valgrind found
     * those reads of uninitialized memory (tests/robust/robust_valgrind.sh). Zeroed pages cost
     * nothing for the large blocks (fresh mmap) and little for the small ones. */
    stb_block *b = calloc(1, sizeof *b + n);
    if (!b) {
        s_oom = 1;
        return NULL;
    }
    b->h.size = n;
    link_block(b);
    s_in_use += n;
    return b + 1;
}

static void stb_free(void *p)
{
    if (!p)
        return;
    s_in_alloc = 1;
    stb_block *b = (stb_block *)p - 1;
    unlink_block(b);
    s_in_use -= b->h.size;
    free(b);
    s_in_alloc = 0;
}

static void *stb_realloc_locked(void *p, size_t n);

static void *stb_realloc(void *p, size_t n)
{
    if (!p)
        return stb_malloc(n);
    s_in_alloc = 1;
    void *q = stb_realloc_locked(p, n);
    s_in_alloc = 0;
    return q;
}

static void *stb_realloc_locked(void *p, size_t n)
{
    if (past_deadline()) {
        s_refused = 1;
        return NULL;
    }
    stb_block *b = (stb_block *)p - 1;
    size_t old = b->h.size;
    /* This is the check that defeats PNG's "IDAT length says 4 GB" realloc. */
    if (n > old && (s_in_use > s_budget || n - old > s_budget - s_in_use ||
                    n > SIZE_MAX - sizeof(stb_block))) {
        s_refused = 1;
        return NULL;
    }
    unlink_block(b);
    stb_block *nb = realloc(b, sizeof *nb + n);
    if (!nb) {
        link_block(b);   /* realloc failed: the old block is still stb's */
        s_oom = 1;
        return NULL;
    }
    nb->h.size = n;
    link_block(nb);
    s_in_use = s_in_use - old + n;
    return nb + 1;
}

/* Free every block still live on this thread (after a decode was abandoned mid-way). */
static void free_live_blocks(void)
{
    while (s_live) {
        stb_block *b = s_live;
        s_live = b->h.next;
        s_in_use -= b->h.size;
        free(b);
    }
}

/* Turn a block of ours into a plain malloc() block holding the same n bytes, so the pixels
 * stb returns can become an imgpu_image (freed with free()) without a second copy. */
static unsigned char *stb_detach(void *p, size_t n)
{
    stb_block *b = (stb_block *)p - 1;
    unlink_block(b);
    s_in_use -= b->h.size;
    memmove(b, p, n);
    unsigned char *shrunk = realloc(b, n ? n : 1);
    return shrunk ? shrunk : (unsigned char *)b;
}

/* ---- the decode-time watchdog ------------------------------------------------------------
 * stb cannot be interrupted and a hostile file can keep it busy without allocating (a
 * progressive JPEG of 254 refinement scans over a 16384x16384 frame: 75 s, all inside one
 * call). So while stb decodes, a per-thread POSIX timer (SIGEV_THREAD_ID: only the decoding
 * thread is signalled, batch's other decoders are not) fires at the deadline and then every
 * 10 ms; its handler siglongjmp()s back to the call site, which frees every block stb still
 * holds (s_live) and reports the time limit. stb's state lives only in those blocks and on
 * the abandoned stack, and the only library calls stb makes between allocations are
 * memcpy/memset-like, so abandoning it is safe; the one unsafe place, our own allocator, is
 * fenced by s_in_alloc (the handler then only marks the deadline, and the next signal 10 ms
 * later jumps). */
#define IMGPU_DEADLINE_SIGNAL (SIGRTMIN + 4)

static pthread_once_t s_signal_once = PTHREAD_ONCE_INIT;
static int s_signal_ok;

static void on_deadline(int sig)
{
    (void)sig;
    s_expired = 1;
    sigjmp_buf *j = s_jump;
    if (j && !s_in_alloc)
        siglongjmp(*j, 1);
}

static void install_deadline_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_deadline;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    s_signal_ok = sigaction(IMGPU_DEADLINE_SIGNAL, &sa, NULL) == 0;
}

typedef struct watchdog {
    timer_t id;
    int armed;
    sigset_t old_mask;
} watchdog;

/* Arm the timer for what is left of the deadline (none armed: no deadline, or the system
 * refused a timer; the allocator's refusal still stops stb at its next allocation). */
static void watchdog_arm(watchdog *w)
{
    w->armed = 0;
    s_expired = 0;
    if (!s_deadline_ns)
        return;
    pthread_once(&s_signal_once, install_deadline_handler);
    if (!s_signal_ok)
        return;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = IMGPU_DEADLINE_SIGNAL;
    sev._sigev_un._tid = gettid();   /* glibc 2.36 names no macro for it */
    if (timer_create(CLOCK_MONOTONIC, &sev, &w->id) != 0)
        return;
    uint64_t now = now_ns();
    uint64_t left = s_deadline_ns > now ? s_deadline_ns - now : 1;
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    its.it_value.tv_sec = (time_t)(left / UINT64_C(1000000000));
    its.it_value.tv_nsec = (long)(left % UINT64_C(1000000000));
    its.it_interval.tv_nsec = 10 * 1000 * 1000;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, IMGPU_DEADLINE_SIGNAL);
    pthread_sigmask(SIG_UNBLOCK, &set, &w->old_mask);
    if (timer_settime(w->id, 0, &its, NULL) != 0) {
        pthread_sigmask(SIG_SETMASK, &w->old_mask, NULL);
        timer_delete(w->id);
        return;
    }
    w->armed = 1;
}

static void watchdog_disarm(watchdog *w)
{
    s_jump = NULL;   /* first: a signal still queued must not jump any more */
    if (!w->armed)
        return;
    timer_delete(w->id);
    pthread_sigmask(SIG_SETMASK, &w->old_mask, NULL);
    w->armed = 0;
}

static void budget_begin(size_t budget)
{
    s_budget = budget;
    s_refused = 0;
    s_oom = 0;
}

/* The reason a call failed: ours when the allocator said no, else stb's. */
static const char *budget_end(const char *stb_reason)
{
    s_budget = 0;
    if (s_refused)
        return "needs more memory than an image of its size can use (corrupt or malicious file)";
    if (s_oom)
        return "out of memory";
    return stb_reason ? stb_reason : "corrupt image data";
}

/* ---- zlib for stb_image_write's PNG deflate ------------------------------------------- */

static _Thread_local int s_png_level = 1;
static _Thread_local const char *s_zlib_error;
static _Thread_local char s_why[160];

static unsigned char *imgpu__zlib_compress(unsigned char *data, int data_len, int *out_len,
                                           int quality);

/* ---- stb configuration ---------------------------------------------------------------- */

/* Even as a system header stb trips two warnings: v2.27 declares
 * stbi_set_unpremultiply_on_load_thread (and v1.16 stbi_write_hdr_to_func here) static without
 * defining it, and GCC's -Wmaybe-uninitialized fires inside stb code inlined into our
 * functions. Both are stb's; they stay off for the rest of this file, which is mostly stb. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define STBI_ONLY_PNG
#define STBI_ONLY_BMP
#define STBI_ONLY_TGA
#define STBI_ONLY_PNM
/* STBI_ONLY_* already implies these; spelled out so a reader (and grep) sees that the GIF,
 * PSD and PIC loaders (memory-safety bugs) and HDR (can loop forever) are not compiled. */
#define STBI_NO_JPEG   /* codec_jpeg.c decodes JPEG through libjpeg-turbo */
#define STBI_NO_GIF
#define STBI_NO_PSD
#define STBI_NO_PIC
#define STBI_NO_HDR
#define STBI_NO_LINEAR
#define STBI_NO_STDIO
#define STBI_MALLOC(n) stb_malloc(n)
#define STBI_REALLOC(p, n) stb_realloc(p, n)
#define STBI_FREE(p) stb_free(p)
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

#define STBI_WRITE_NO_STDIO
#define STBIW_MALLOC(n) stb_malloc(n)
#define STBIW_REALLOC(p, n) stb_realloc(p, n)
#define STBIW_FREE(p) stb_free(p)
#define STBIW_ZLIB_COMPRESS imgpu__zlib_compress
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

/* `quality` is stb's stbi_write_png_compression_level, one global shared by every thread, so
 * it is ignored: the level comes from the thread-local set by imgpu__stb_encode. The buffer
 * must come from stb_malloc, because stb_image_write releases it with STBIW_FREE. */
static unsigned char *imgpu__zlib_compress(unsigned char *data, int data_len, int *out_len,
                                           int quality)
{
    (void)quality;
    if (data_len < 0) {
        s_zlib_error = "invalid data length";
        return NULL;
    }
    uLong bound = compressBound((uLong)data_len);
    if (bound > (uLong)INT_MAX - 64) {   /* stb adds its chunk overhead in int arithmetic */
        s_zlib_error = "image too large for one PNG data chunk";
        return NULL;
    }
    unsigned char *out = stb_malloc(bound);
    if (!out) {
        s_zlib_error = "out of memory";
        return NULL;
    }
    uLongf n = bound;
    int rc = imgpu__png_compress(out, &n, data, (uLong)data_len, s_png_level);
    if (rc != Z_OK) {
        s_zlib_error = zError(rc);
        stb_free(out);
        return NULL;
    }
    *out_len = (int)n;
    return out;
}

/* ---- the interface io.c uses ---------------------------------------------------------- */

/* stb's reason for the failure of a call on buf, or NULL when it gave none of its own.
 * stb sets its reason only on failure and never clears it (each call below clears it
 * first), and one call tries several formats: stbi_load tests PNG before BMP, stbi_info
 * asks PNG and BMP before PNM and TGA, stbi_is_16_bit asks PNG. Those probes leave their
 * rejection behind ("bad png sig", "not BMP"), and a later failure that sets no reason
 * (stb's inflate on a reserved block type) would report another format's complaint:
 * "corrupt BMP data (bad png sig)". A probe's reason counts only when buf really is that format. "unknown image
 * type" (every probe said no, the format's own reason overwritten by the later probes)
 * would call a file io.c has identified unknown; it is said as what it means. */
static const char *stb_reason(const unsigned char *buf, size_t len)
{
    static const unsigned char png_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    const char *r = stbi__g_failure_reason;
    if (!r)
        return NULL;
    if (strcmp(r, "bad png sig") == 0 && !(len >= 8 && memcmp(buf, png_sig, 8) == 0))
        return NULL;
    if (strcmp(r, "not BMP") == 0 && !(len >= 2 && buf[0] == 'B' && buf[1] == 'M'))
        return NULL;
    if (strcmp(r, "unknown image type") == 0)
        return "the decoder did not accept its header";
    return r;
}

/* What io.c shows in the parentheses when stb gave no reason of its own. */
#define STB_NO_REASON "the decoder gave no reason"

/* Header only: no pixel memory. */
int imgpu__stb_info(const unsigned char *buf, size_t len, int *w, int *h, int *c, int *is16,
                    const char **why)
{
    if (len > INT_MAX) {
        *why = "file too large for the decoder";
        return -1;
    }
    budget_begin((size_t)1 << 20);
    stbi__g_failure_reason = NULL;
    int ok = stbi_info_from_memory(buf, (int)len, w, h, c);
    const char *own = ok ? NULL : stb_reason(buf, len);
    if (ok)
        *is16 = stbi_is_16_bit_from_memory(buf, (int)len);
    const char *reason = budget_end(ok ? NULL : own ? own : STB_NO_REASON);
    if (!ok) {
        *why = reason;
        return -1;
    }
    return 0;
}

/* A copy of a PNG rewritten for stb, or NULL when nothing needs rewriting (or no memory):
 *  - zero-length IDAT chunks (legal, and meaningless) are dropped: stb v2.27 reads one that
 *    comes first into its still-NULL data buffer (`NULL + 0`, undefined behaviour; found by
 *    fuzz_decode, tests/fuzz/regress/decode/);
 *  - a PLTE of fewer than 256 entries is padded to 256 with black: stb expands palette
 *    indexes through a 256-entry stack array of which it fills only the file's entries, so an
 *    index past the PLTE came out as uninitialized stack bytes (valgrind, the
 *    png_palette_oob seed). Such indexes are an error by the PNG spec; they now decode black.
 * io.c has already checked every chunk length against the file and every critical CRC. */
static unsigned char *png_for_stb(const unsigned char *buf, size_t len, size_t *out_len)
{
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    if (len < 8 || memcmp(buf, sig, 8) != 0)
        return NULL;
    unsigned char *out = NULL;
    size_t o = 0, need = 8;
    /* Pass 0 measures the rewritten file chunk by chunk, pass 1 writes exactly that many
     * bytes: the buffer is sized from every chunk the file holds, so no chunk (a second
     * PLTE, say) can write past room that was counted for another. */
    for (int pass = 0; pass < 2; pass++) {
        size_t pos = 8;
        int rewrite = 0;
        if (pass == 1) {
            out = malloc(need);
            if (!out)
                return NULL;
            memcpy(out, buf, 8);
            o = 8;
        }
        while (len - pos >= 12) {
            size_t clen = (size_t)buf[pos] << 24 | (size_t)buf[pos + 1] << 16 |
                          (size_t)buf[pos + 2] << 8 | buf[pos + 3];
            if (clen > len - pos - 12)
                break;
            const unsigned char *type = buf + pos + 4;
            int drop = clen == 0 && memcmp(type, "IDAT", 4) == 0;
            int pad = memcmp(type, "PLTE", 4) == 0 && clen < 768 && clen % 3 == 0;
            rewrite |= drop | pad;
            size_t olen = drop ? 0 : pad ? 780 : clen + 12;   /* 780: length, type, 768, CRC */
            if (pass == 0) {
                need += olen;
            } else if (o + olen > need) {   /* cannot happen: both passes read the same bytes */
                free(out);
                return NULL;
            } else if (pad) {
                unsigned char *c = out + o;
                c[0] = 0; c[1] = 0; c[2] = 768 >> 8; c[3] = 768 & 255;
                memcpy(c + 4, "PLTE", 4);
                memcpy(c + 8, buf + pos + 8, clen);
                memset(c + 8 + clen, 0, 768 - clen);
                uLong crc = crc32(crc32(0L, Z_NULL, 0), c + 4, 4 + 768);
                c[776] = (unsigned char)(crc >> 24); c[777] = (unsigned char)(crc >> 16);
                c[778] = (unsigned char)(crc >> 8); c[779] = (unsigned char)crc;
            } else if (!drop) {
                memcpy(out + o, buf + pos, clen + 12);
            }
            o += pass == 1 ? olen : 0;
            pos += clen + 12;
        }
        if (pass == 0 && !rewrite)
            return NULL;
        if (pass == 0)
            need += len - pos;   /* whatever trails the last whole chunk */
        if (pass == 1) {
            memcpy(out + o, buf + pos, len - pos);
            *out_len = o + (len - pos);
        }
    }
    return out;
}

/* stb's loader (16-bit when is16) under the watchdog. *cut = 1 when the deadline stopped it;
 * the blocks stb held are freed then. Nothing this function changes after sigsetjmp is read
 * after the jump except through pointers, so no local needs volatile. */
typedef struct load_args {
    const unsigned char *buf;
    int len, is16;
    int *x, *y, *n;
} load_args;

static void *load_stb(const load_args *a)
{
    return a->is16 ? (void *)stbi_load_16_from_memory(a->buf, a->len, a->x, a->y, a->n, 0)
                   : (void *)stbi_load_from_memory(a->buf, a->len, a->x, a->y, a->n, 0);
}

static void *load_bounded(const load_args *a, int *cut)
{
    watchdog wd;
    sigjmp_buf jump;
    *cut = 0;
    watchdog_arm(&wd);
    if (sigsetjmp(jump, 1)) {
        watchdog_disarm(&wd);
        free_live_blocks();
        *cut = 1;
        return NULL;
    }
    s_jump = &jump;
    void *p = load_stb(a);
    watchdog_disarm(&wd);
    return p;
}

/* After the watchdog jumped out of stb: free what stb held, and say why. s_late makes
 * imgpu__stb_deadline_end() report the time limit, which io.c turns into its message. */
static unsigned char *abandoned(unsigned char *clean, const char **why)
{
    free(clean);
    s_budget = 0;
    s_late = 1;
    *why = "decoding took longer than the time limit";
    return NULL;
}

/* Both depths: the PNG rewrite (png_for_stb: empty IDATs dropped — a first one of length 0
 * reached stb's memcpy(NULL, .., 0) on either path, UBSan, tests/fuzz/regress/decode/ — and
 * short palettes padded), stb's loader under the budget and the watchdog, then the checks on
 * what it returned. req_comp = 0: the file's own channels (stb's channel conversion is where
 * its 16-bit PNM heap overflow lives, and imgpu keeps what the file has anyway); 16-bit
 * samples come back native-endian. */
static unsigned char *decode_depth(const unsigned char *buf, size_t len, size_t budget, int is16,
                                   int *w, int *h, int *c, const char **why)
{
    if (len > INT_MAX) {
        *why = "file too large for the decoder";
        return NULL;
    }
    size_t clean_len = 0;
    unsigned char *clean = png_for_stb(buf, len, &clean_len);
    if (clean) {
        buf = clean;
        len = clean_len;
        if (len > INT_MAX) {   /* padding PLTEs can grow the file */
            free(clean);
            *why = "file too large for the decoder";
            return NULL;
        }
    }
    budget_begin(budget);
    int x = 0, y = 0, n = 0;
    int cut = 0;
    const load_args a = { buf, (int)len, is16, &x, &y, &n };
    stbi__g_failure_reason = NULL;
    unsigned char *p = load_bounded(&a, &cut);
    if (cut)
        return abandoned(clean, why);
    const char *own = p ? NULL : stb_reason(buf, len);
    const char *reason = budget_end(p ? NULL : own ? own : STB_NO_REASON);
    free(clean);
    if (!p) {
        *why = reason;
        return NULL;
    }
    if (x < 1 || y < 1 || n < 1 || n > 4) {
        stb_free(p);
        *why = "decoder returned an invalid image";
        return NULL;
    }
    *w = x;
    *h = y;
    *c = n;
    return stb_detach(p, (size_t)x * (size_t)y * (size_t)n * (is16 ? 2 : 1));
}

unsigned char *imgpu__stb_decode(const unsigned char *buf, size_t len, size_t budget, int *w,
                                 int *h, int *c, const char **why)
{
    return decode_depth(buf, len, budget, 0, w, h, c, why);
}

unsigned char *imgpu__stb_decode16(const unsigned char *buf, size_t len, size_t budget, int *w,
                                   int *h, int *c, const char **why)
{
    return decode_depth(buf, len, budget, 1, w, h, c, why);
}

/* The encoders write through this into one growing malloc() buffer; a failed allocation is
 * remembered (stb's callbacks cannot report one) and everything after it is dropped. */
typedef struct stb_sink {
    unsigned char *data;
    size_t len, cap;
    int failed;
} stb_sink;

static void sink_write(void *ctx, void *data, int size)
{
    stb_sink *s = ctx;
    if (s->failed || size <= 0)
        return;
    size_t n = (size_t)size;
    if (n > s->cap - s->len) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap - s->len < n) {
            if (cap > SIZE_MAX / 2) {
                s->failed = 1;
                return;
            }
            cap *= 2;
        }
        unsigned char *p = realloc(s->data, cap);
        if (!p) {
            s->failed = 1;
            return;
        }
        s->data = p;
        s->cap = cap;
    }
    memcpy(s->data + s->len, data, n);
    s->len += n;
}

/* pixels: tight rows (stride w*c) except for PNG, which takes `stride`. The caller (io.c) has
 * checked the sizes against stb_image_write's int arithmetic. */
int imgpu__stb_encode(imgpu_format f, const unsigned char *pixels, int w, int h, int c,
                      size_t stride, int quality, int png_level, unsigned char **out,
                      size_t *out_len, const char **why)
{
    (void)quality;   /* JPEG, the one format that used it, is codec_jpeg.c's */
    stb_sink sink = { 0 };
    int ok = 0;
    size_t raw = ((size_t)w * (size_t)c + 1) * (size_t)h;
    /* PNG holds the filtered rows, their deflated copy and the file at once. */
    budget_begin(f == IMGPU_FORMAT_PNG ? 4 * raw + ((size_t)1 << 20) : (size_t)1 << 20);
    s_png_level = png_level;
    s_zlib_error = NULL;
    switch (f) {
    case IMGPU_FORMAT_PNG:
        ok = stbi_write_png_to_func(sink_write, &sink, w, h, c, pixels, (int)stride);
        break;
    case IMGPU_FORMAT_BMP:
        ok = stbi_write_bmp_to_func(sink_write, &sink, w, h, c, pixels);
        break;
    case IMGPU_FORMAT_TGA:
        ok = stbi_write_tga_to_func(sink_write, &sink, w, h, c, pixels);
        break;
    default:
        break;
    }
    int refused = s_refused, oom = s_oom;
    s_budget = 0;
    if (!ok || sink.failed || !sink.data) {
        free(sink.data);
        if (s_zlib_error) {
            snprintf(s_why, sizeof s_why, "zlib compression failed: %s", s_zlib_error);
            *why = s_why;
        } else if (sink.failed || oom) {
            *why = "out of memory";
        } else if (refused) {
            *why = "the encoder needed more memory than expected";
        } else {
            *why = "the encoder failed";
        }
        return -1;
    }
    *out = sink.data;
    *out_len = sink.len;
    return 0;
}
