/* batch_queue.c — the bounded queue between batch stages (see batch.h). A ring of pointers
 * under one mutex with two condition variables; capacity bounds how far a fast stage may run
 * ahead of a slow one, which is what keeps a batch's memory bounded. */
#include "batch.h"
#include "error.h"

#include <pthread.h>
#include <stdlib.h>

struct imgpu__queue {
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
    void **ring;
    int cap, head, count, producers;
};

imgpu__queue *imgpu__queue_new(int capacity, int producers)
{
    imgpu__queue *q = calloc(1, sizeof *q);
    if (!q || capacity < 1 || !(q->ring = calloc((size_t)capacity, sizeof *q->ring))) {
        free(q);
        imgpu_error("out of memory");
        return NULL;
    }
    q->cap = capacity;
    q->producers = producers;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->not_empty, NULL);
    pthread_cond_init(&q->not_full, NULL);
    return q;
}

void imgpu__queue_free(imgpu__queue *q)
{
    if (!q)
        return;
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->not_empty);
    pthread_cond_destroy(&q->not_full);
    free(q->ring);
    free(q);
}

void imgpu__queue_push(imgpu__queue *q, void *item)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == q->cap)
        pthread_cond_wait(&q->not_full, &q->lock);
    q->ring[(q->head + q->count) % q->cap] = item;
    q->count++;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

/* The head item, or NULL when the queue is empty; under q->lock. */
static void *take(imgpu__queue *q)
{
    if (q->count == 0)
        return NULL;
    void *item = q->ring[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    pthread_cond_signal(&q->not_full);
    return item;
}

void *imgpu__queue_pop(imgpu__queue *q)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == 0 && q->producers > 0)
        pthread_cond_wait(&q->not_empty, &q->lock);
    void *item = take(q);
    pthread_mutex_unlock(&q->lock);
    return item;
}

void *imgpu__queue_try_pop(imgpu__queue *q)
{
    pthread_mutex_lock(&q->lock);
    void *item = take(q);
    pthread_mutex_unlock(&q->lock);
    return item;
}

void imgpu__queue_done(imgpu__queue *q)
{
    pthread_mutex_lock(&q->lock);
    if (q->producers > 0 && --q->producers == 0)
        pthread_cond_broadcast(&q->not_empty); /* wake every consumer to see the end */
    pthread_mutex_unlock(&q->lock);
}
