/*
 * work.c: the server's workers. libmicrohttpd's threads only read requests
 * and write replies; a request's handler runs here, on a worker thread, so
 * that no request waits on an I/O thread behind another's long work (an LLM
 * call, a store lock): http.c suspends the connection, queues the request,
 * and the worker that runs it resumes the connection with its reply.
 *
 * The pool is elastic: min_threads workers live for good; when a request is
 * queued and none is idle, another is started, up to max_threads; one with
 * nothing to do for WORK_IDLE_MS above the minimum ends. The queue is
 * bounded: when max_queued requests already wait with every worker busy
 * (and no more may start), work_submit refuses, and http.c answers 503
 * with Retry-After at once, so that a burst is told to come back instead of
 * waiting with no answer. Queued and running requests are counted for
 * /metrics and for the drain at shutdown, which takes back the requests not
 * yet started (work_take_queued) to answer them itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "serverInt.h"

/* A worker above the minimum with nothing to do for this long ends. */
#define WORK_IDLE_MS 10000

int work_init(work_pool *w, int min_threads, int max_threads, int max_queued,
              void (*run)(request *)) {
    memset(w, 0, sizeof *w);
    w->min_threads = min_threads < 1 ? 1 : min_threads;
    w->max_threads = max_threads < w->min_threads ? w->min_threads : max_threads;
    w->max_queued = max_queued < 1 ? 1 : max_queued;
    w->run = run;
    if (pthread_mutex_init(&w->mu, NULL) || pthread_cond_init(&w->ready, NULL) ||
        pthread_cond_init(&w->gone, NULL))
        return -1;
    w->ok = 1;
    return 0;
}

/* Wait for a request; NULL when the worker should end (stopping, or idle
 * too long above the minimum). Called and returns with w->mu held. */
static request *next_request(work_pool *w) {
    while (!w->head && !w->stop) {
        if (w->threads > w->min_threads) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += WORK_IDLE_MS / 1000;
            int rc = pthread_cond_timedwait(&w->ready, &w->mu, &until);
            if (rc == ETIMEDOUT && !w->head && w->threads > w->min_threads) return NULL;
        } else {
            pthread_cond_wait(&w->ready, &w->mu);
        }
    }
    if (w->stop) return NULL;
    request *rq = w->head;
    w->head = rq->next;
    if (!w->head) w->tail = NULL;
    rq->next = NULL;
    w->queued--;
    w->running++;
    return rq;
}

static void *worker_main(void *arg) {
    work_pool *w = arg;
    pthread_mutex_lock(&w->mu);
    request *rq;
    while ((rq = next_request(w))) {
        pthread_mutex_unlock(&w->mu);
        w->run(rq); /* resumes rq's connection: rq may be gone after */
        pthread_mutex_lock(&w->mu);
        w->running--;
    }
    w->threads--;
    pthread_cond_broadcast(&w->gone);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Start one more worker; with w->mu held. 0 or -1. */
static int spawn(work_pool *w) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, worker_main, w);
    pthread_attr_destroy(&attr);
    if (rc) return -1;
    w->threads++;
    return 0;
}

int work_start(work_pool *w) {
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    while (rc == 0 && w->threads < w->min_threads) rc = spawn(w);
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* Requests queued that no worker, idle or just started, is about to take;
 * with w->mu held. */
static int waiting(const work_pool *w) {
    int free_workers = w->threads - w->running;
    return w->queued > free_workers ? w->queued - free_workers : 0;
}

int work_submit(work_pool *w, request *rq) {
    pthread_mutex_lock(&w->mu);
    if (w->stop || (w->threads >= w->max_threads && waiting(w) >= w->max_queued)) {
        w->rejected++;
        pthread_mutex_unlock(&w->mu);
        return -1;
    }
    rq->next = NULL;
    if (w->tail)
        w->tail->next = rq;
    else
        w->head = rq;
    w->tail = rq;
    w->queued++;
    /* More queued than workers free to take them (idle, or started and not
     * yet waiting): start one more. */
    if (waiting(w) > 0 && w->threads < w->max_threads && spawn(w) != 0 && w->threads == 0) {
        /* No worker at all and none can start: take it back. */
        w->head = w->tail = NULL;
        w->queued--;
        w->rejected++;
        pthread_mutex_unlock(&w->mu);
        return -1;
    }
    pthread_mutex_unlock(&w->mu);
    /* Signalled after the unlock: a worker woken while the mutex is still
     * held wakes only to wait for it (two more futex calls and a context
     * switch a request). A worker that is about to wait holds the mutex
     * until it waits, so the request queued above cannot be missed. */
    pthread_cond_signal(&w->ready);
    return 0;
}

request *work_take_queued(work_pool *w) {
    pthread_mutex_lock(&w->mu);
    request *list = w->head;
    w->head = w->tail = NULL;
    w->queued = 0;
    pthread_mutex_unlock(&w->mu);
    return list;
}

void work_counts(work_pool *w, work_stats *out) {
    pthread_mutex_lock(&w->mu);
    out->queued = waiting(w);
    out->running = w->running;
    out->threads = w->threads;
    out->rejected = w->rejected;
    pthread_mutex_unlock(&w->mu);
}

int work_stop(work_pool *w, int wait_ms) {
    if (!w->ok) return 0;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->ready);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += wait_ms / 1000;
    until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    while (w->threads > 0 && pthread_cond_timedwait(&w->gone, &w->mu, &until) != ETIMEDOUT) {}
    int left = w->threads;
    pthread_mutex_unlock(&w->mu);
    return left;
}
