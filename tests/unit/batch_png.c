/* batch_png.c — unit tests of batch mode's building blocks:
 *  - the parallel PNG strip encoder (png_parallel.c): for every channel count, sizes from 1x1
 *    to images of many strips, photo/noise/constant content and zlib levels 0, 1, 6, 9, the
 *    file decodes (imgpu's loader, which checks every critical chunk's CRC; its libdeflate
 *    path checks the zlib Adler-32 too) to exactly the input pixels; the bytes do not depend
 *    on the thread count; the zlib stream has one strip per IDAT chunk; a padded stride gives
 *    the same file.
 *    (batch_cli.py decodes the encoder's files with OpenCV too.)
 *  - imgpu_image_save_threads writes the same pixels as imgpu_image_save.
 *  - the bounded queue: several producers and consumers pass every item exactly once, and a
 *    full queue blocks its producers.
 */
#include "batch/batch.h"
#include "error.h"
#include "image.h"
#include "io.h"
#include "png_parallel.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static uint32_t s_rng = 12345;
static uint32_t rnd(void)
{
    s_rng = s_rng * 1664525u + 1013904223u;
    return s_rng >> 8;
}

/* content 0: smooth photo-like gradients with a little noise; 1: noise; 2: constant */
static void fill(unsigned char *p, int w, int h, int c, size_t stride, int content)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w * c; x++) {
            unsigned v;
            if (content == 0)
                v = (unsigned)((x / c) * 3 + y * 2 + (x % c) * 40) + rnd() % 5;
            else if (content == 1)
                v = rnd();
            else
                v = 77;
            p[(size_t)y * stride + (size_t)x] = (unsigned char)v;
        }
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int count_idat(const unsigned char *b, size_t n)
{
    int k = 0;
    for (size_t pos = 8; pos + 8 <= n;) {
        uint32_t len = be32(b + pos);
        if (!memcmp(b + pos + 4, "IDAT", 4))
            k++;
        pos += 12 + (size_t)len;
    }
    return k;
}

static void test_encoder(int w, int h, int c, int content, int level, size_t pad)
{
    size_t stride = (size_t)w * c + pad;
    unsigned char *px = malloc(stride * h);
    fill(px, w, h, c, stride, content);
    unsigned char *ref = NULL;
    size_t ref_len = 0;
    const char *why = NULL;
    int threads[] = {1, 2, 3, 8};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        unsigned char *out = NULL;
        size_t len = 0;
        int rc = imgpu__png_encode_parallel(px, w, h, c, stride, level, threads[t], &out, &len, &why);
        CHECK(rc == 0, "%dx%dx%d level %d threads %d: %s", w, h, c, level, threads[t], rc ? why : "");
        if (rc)
            continue;
        if (!ref) {
            ref = out;
            ref_len = len;
            imgpu_image *im = imgpu_image_load_memory(out, len, "parallel.png", NULL);
            CHECK(im != NULL, "%dx%dx%d content %d level %d: decodes: %s", w, h, c, content, level,
                  im ? "" : imgpu_error_message());
            if (im) {
                int same = im->width == w && im->height == h && im->channels == c;
                for (int y = 0; same && y < h; y++)
                    same = !memcmp(imgpu_image_row(im, y), px + (size_t)y * stride, (size_t)w * c);
                CHECK(same, "%dx%dx%d content %d level %d: same pixels after decoding", w, h, c, content, level);
                imgpu_image_free(im);
            }
            int rows = imgpu__png_strip_rows((size_t)w * c + 1);
            int strips = (h + rows - 1) / rows;
            CHECK(count_idat(out, len) == strips, "%dx%dx%d: %d IDAT chunks, expected %d (one per strip)", w, h, c,
                  count_idat(out, len), strips);
        } else {
            CHECK(len == ref_len && !memcmp(out, ref, len), "%dx%dx%d level %d: %d threads give other bytes", w, h,
                  c, level, threads[t]);
            free(out);
        }
    }
    free(ref);
    free(px);
}

/* ---- the queue ---------------------------------------------------------------------------- */

#define Q_ITEMS 20000
#define Q_PROD 4
#define Q_CONS 3
static imgpu__queue *s_q;
static int s_seen[Q_ITEMS * Q_PROD];
static pthread_mutex_t s_seen_lock = PTHREAD_MUTEX_INITIALIZER;

static void *producer(void *arg)
{
    intptr_t base = (intptr_t)arg;
    for (intptr_t i = 0; i < Q_ITEMS; i++)
        imgpu__queue_push(s_q, (void *)(base * Q_ITEMS + i + 1)); /* never NULL */
    imgpu__queue_done(s_q);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    void *p;
    while ((p = imgpu__queue_pop(s_q))) {
        pthread_mutex_lock(&s_seen_lock);
        s_seen[(intptr_t)p - 1]++;
        pthread_mutex_unlock(&s_seen_lock);
    }
    return NULL;
}

static void test_queue(void)
{
    pthread_t p[Q_PROD], c[Q_CONS];
    s_q = imgpu__queue_new(5, Q_PROD);
    CHECK(s_q != NULL, "queue_new");
    for (intptr_t i = 0; i < Q_CONS; i++)
        pthread_create(&c[i], NULL, consumer, NULL);
    for (intptr_t i = 0; i < Q_PROD; i++)
        pthread_create(&p[i], NULL, producer, (void *)i);
    for (int i = 0; i < Q_PROD; i++)
        pthread_join(p[i], NULL);
    for (int i = 0; i < Q_CONS; i++)
        pthread_join(c[i], NULL);
    int bad = 0;
    for (int i = 0; i < Q_ITEMS * Q_PROD; i++)
        bad += s_seen[i] != 1;
    CHECK(bad == 0, "queue: %d items not seen exactly once", bad);
    CHECK(imgpu__queue_pop(s_q) == NULL, "a drained, finished queue returns NULL");
    imgpu__queue_free(s_q);

    /* a full queue holds its producer back until a consumer takes something */
    s_q = imgpu__queue_new(2, 1);
    imgpu__queue_push(s_q, (void *)1);
    imgpu__queue_push(s_q, (void *)2);
    pthread_t t;
    pthread_create(&t, NULL, producer, (void *)0); /* pushes Q_ITEMS more, then done */
    usleep(50 * 1000);
    CHECK(imgpu__queue_pop(s_q) == (void *)1, "FIFO order");
    int n = 1;
    while (imgpu__queue_pop(s_q))
        n++;
    pthread_join(t, NULL);
    CHECK(n == Q_ITEMS + 2, "blocked producer finished: %d items, expected %d", n, Q_ITEMS + 2);
    imgpu__queue_free(s_q);
}

static void test_save_threads(void)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/batch_png_%d_a.png", dir, (int)getpid());
    snprintf(b, sizeof b, "%s/batch_png_%d_b.png", dir, (int)getpid());
    imgpu_image *im = imgpu_image_new(333, 517, 3, 8);
    fill(im->data, 333, 517, 3, im->stride, 0);
    CHECK(imgpu_image_save(im, a, NULL) == 0, "save: %s", imgpu_error_message());
    CHECK(imgpu_image_save_threads(im, b, NULL, 4) == 0, "save_threads: %s", imgpu_error_message());
    imgpu_image *x = imgpu_image_load(a, NULL), *y = imgpu_image_load(b, NULL);
    CHECK(x && y && !memcmp(x->data, y->data, (size_t)333 * 517 * 3), "save_threads: same pixels as save");
    imgpu_image_free(x);
    imgpu_image_free(y);
    imgpu_image_free(im);
    unlink(a);
    unlink(b);
}

int main(void)
{
    const int sizes[][2] = {{1, 1}, {2, 3}, {17, 5}, {640, 427}, {1001, 1500}, {3, 2000}, {4000, 64}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int c = 1; c <= 4; c++)
            test_encoder(sizes[s][0], sizes[s][1], c, (int)(s % 3), 1, 0);
    for (int content = 0; content < 3; content++)
        for (int level = 0; level <= 9; level += 3)
            test_encoder(777, 1333, 3, content, level, 0);
    test_encoder(500, 700, 4, 0, 1, 13); /* padded rows */
    test_queue();
    test_save_threads();
    printf("test_batch_png: %d checks, %d failed\n", s_checks, s_fail);
    return s_fail ? 1 : 0;
}
