/*
 * rater.c: the server's auto-rater. With a namespace policy auto_rate, the
 * C API rates a memory inside remem_add, which would hold an HTTP add for
 * as long as the model takes. The server answers the add at once instead:
 * every pooled handle hands the new memory's id here
 * (remem_set_rate_later), and one background thread, with a handle of its
 * own, runs the "rate" operation on each in turn, which fills in the
 * importance (and metadata.rating) when the model answers.
 *
 * The queue is a list under one mutex; the thread opens its handle on the
 * first id, so a server whose policies never auto-rate never opens it. A
 * rating that fails leaves the memory at its kind's default importance
 * (what it was written with) and is logged on stderr with the cause. At
 * shutdown the thread finishes the rating under way; ids still queued are
 * reported as left unrated (their memories are stored, only unrated).
 * Each rating gets the server's deadline for LLM work, and a shutdown past
 * its grace cuts the one under way (rater_interrupt).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "serverInt.h"

typedef struct rate_job {
    struct rate_job *next;
    char *ns, *id;
} rate_job;

static void job_free(rate_job *j) {
    if (!j) return;
    free(j->ns);
    free(j->id);
    free(j);
}

void rater_enqueue(void *ctx, const char *ns, const char *id) {
    rater *r = ctx;
    rate_job *j = calloc(1, sizeof *j);
    if (!j || !(j->ns = strdup(ns)) || !(j->id = strdup(id))) {
        job_free(j);
        fprintf(stderr, "remem serve: auto-rate: out of memory: %s/%s left unrated\n", ns, id);
        return;
    }
    pthread_mutex_lock(&r->mu);
    if (r->tail)
        r->tail->next = j;
    else
        r->head = j;
    r->tail = j;
    r->queued++;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->mu);
}

static void rate_one(rater *r, remem **db, rate_job *j, int64_t deadline_ms) {
    if (!*db) {
        int rc = remem_open(r->uri, &r->opt, db);
        if (rc) {
            fprintf(stderr, "remem serve: auto-rate: cannot open %s: %s\n", r->uri,
                    *db ? remem_errmsg(*db) : "out of memory");
            remem_close(*db);
            *db = NULL;
            return;
        }
        pthread_mutex_lock(&r->mu);
        r->db = *db;
        pthread_mutex_unlock(&r->mu);
    }
    remem_set_deadline(*db, deadline_ms);
    json_t *a = json_pack("{s:s, s:s}", "ns", j->ns, "id", j->id);
    char *args = a ? json_dumps(a, JSON_COMPACT) : NULL, *out = NULL;
    json_decref(a);
    int rc = args ? remem_call(*db, "rate", args, strlen(args), &out) : REMEM_ENOMEM;
    if (rc)
        fprintf(stderr, "remem serve: auto-rate %s/%s: %s\n", j->ns, j->id,
                args ? remem_errmsg(*db) : "out of memory");
    free(args);
    remem_free(out);
}

static void *rater_main(void *arg) {
    rater *r = arg;
    remem *db = NULL;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->head && !r->stop) pthread_cond_wait(&r->wake, &r->mu);
        if (r->stop) break;
        rate_job *j = r->head;
        r->head = j->next;
        if (!r->head) r->tail = NULL;
        r->queued--;
        int64_t deadline_ms = r->deadline_ms;
        pthread_mutex_unlock(&r->mu);
        rate_one(r, &db, j, deadline_ms);
        job_free(j);
        pthread_mutex_lock(&r->mu);
    }
    r->db = NULL;
    pthread_mutex_unlock(&r->mu);
    remem_close(db);
    return NULL;
}

void rater_interrupt(rater *r) {
    if (!r->running) return;
    pthread_mutex_lock(&r->mu);
    if (r->db) remem_interrupt(r->db);
    pthread_mutex_unlock(&r->mu);
}

int rater_start(rater *r, const char *uri, const remem_options *opt) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->wake, NULL);
    r->opt = *opt;
    if (!(r->uri = strdup(uri))) return -1;
    if (pthread_create(&r->thread, NULL, rater_main, r) != 0) {
        free(r->uri);
        r->uri = NULL;
        return -1;
    }
    r->running = 1;
    return 0;
}

int rater_stop(rater *r, int wait_ms, int cut_ms) {
    if (!r->running) return 0;
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->mu);
    /* The rating under way may finish; past wait_ms its LLM call is cut,
     * and a thread stuck past that too is left behind (the process is
     * ending). */
    int joined = 0;
    for (int round = 0; round < 2 && !joined; round++) {
        if (round) rater_interrupt(r);
        int ms = round ? cut_ms : wait_ms;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += ms / 1000;
        until.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        joined = pthread_timedjoin_np(r->thread, NULL, &until) == 0;
    }
    if (!joined) {
        fprintf(stderr, "remem serve: auto-rate: the rating under way did not end\n");
        r->running = 0;
        return -1;
    }
    if (r->queued)
        fprintf(stderr, "remem serve: auto-rate: %d memories left unrated at shutdown\n",
                r->queued);
    while (r->head) {
        rate_job *j = r->head;
        r->head = j->next;
        job_free(j);
    }
    free(r->uri);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->wake);
    r->running = 0;
    return 0;
}
