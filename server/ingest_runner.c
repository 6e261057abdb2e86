/*
 * ingest_runner.c: the server's background ingests. An ingest sent with
 * "background": true is answered 202 once its messages and its job are
 * committed (the library's "ingest" stages them and stops); this thread,
 * with a handle of its own, then runs "ingest.resume" on every job that
 * "ingest.pending" lists, one at a time. It looks when a request wakes it
 * and every few seconds, and once at start: a server killed mid-ingest
 * finishes, when it comes back, every job it had accepted (the job's
 * progress commits with each chunk, so no chunk is written twice).
 *
 * The queue is the store's (unfinished jobs); its length is bounded by
 * --ingest-queue: past it a background ingest is refused with 503 and
 * Retry-After before anything is written. A job that fails (the LLM down)
 * stays pending and is tried again on the next look, at most once per
 * interval; /metrics shows the queue and the outcomes. Each resume gets
 * the server's --llm-deadline; at shutdown the call under way is cut (the
 * job stays pending: the next start finishes it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "serverInt.h"

#define LOOK_EVERY_S 5

static void resume_one(ingest_runner *r, remem *db, json_t *job) {
    remem_set_deadline(db, r->deadline_ms);
    json_t *a = json_pack("{s:O, s:O}", "ns", json_object_get(job, "ns"), "job",
                          json_object_get(job, "job"));
    char *args = a ? json_dumps(a, JSON_COMPACT) : NULL, *out = NULL;
    json_decref(a);
    int rc = args ? remem_call(db, "ingest.resume", args, strlen(args), &out) : REMEM_ENOMEM;
    if (rc) {
        atomic_fetch_add(&r->failures, 1);
        fprintf(stderr, "remem serve: ingest %s/%s: %s\n",
                json_string_value(json_object_get(job, "ns")),
                json_string_value(json_object_get(job, "job")),
                args ? remem_errmsg(db) : "out of memory");
    } else {
        atomic_fetch_add(&r->done, 1);
    }
    free(args);
    remem_free(out);
}

/* One look: every unfinished job, resumed in turn. */
static void look(ingest_runner *r, remem **db) {
    if (!*db) {
        remem *h = NULL;
        if (remem_open(r->uri, &r->opt, &h) != REMEM_OK) {
            fprintf(stderr, "remem serve: ingest: cannot open %s: %s\n", r->uri,
                    h ? remem_errmsg(h) : "out of memory");
            remem_close(h);
            return;
        }
        pthread_mutex_lock(&r->mu);
        *db = r->db = h; /* ingest_runner_stop may now interrupt it */
        pthread_mutex_unlock(&r->mu);
    }
    char *out = NULL;
    if (remem_call(*db, "ingest.pending", "{}", 2, &out) != REMEM_OK) {
        fprintf(stderr, "remem serve: ingest: %s\n", remem_errmsg(*db));
        return;
    }
    json_t *ans = json_loads(out, 0, NULL);
    remem_free(out);
    json_t *jobs = json_object_get(ans, "jobs");
    atomic_store(&r->pending, (int)json_array_size(jobs));
    size_t i;
    json_t *job;
    json_array_foreach(jobs, i, job) {
        pthread_mutex_lock(&r->mu);
        int stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        if (stop) break;
        resume_one(r, *db, job);
        atomic_fetch_sub(&r->pending, 1);
    }
    json_decref(ans);
}

static void *runner_main(void *arg) {
    ingest_runner *r = arg;
    remem *db = NULL;
    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        r->woken = 0;
        pthread_mutex_unlock(&r->mu);
        look(r, &db);
        pthread_mutex_lock(&r->mu);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += LOOK_EVERY_S;
        while (!r->stop && !r->woken)
            if (pthread_cond_timedwait(&r->wake, &r->mu, &until) != 0) break;
    }
    r->db = NULL;
    pthread_mutex_unlock(&r->mu);
    remem_close(db);
    return NULL;
}

int ingest_runner_start(ingest_runner *r, const char *uri, const remem_options *opt, int limit,
                        int deadline_ms) {
    memset(r, 0, sizeof *r);
    r->deadline_ms = deadline_ms;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->wake, NULL);
    r->opt = *opt;
    r->limit = limit > 0 ? limit : 256;
    if (!(r->uri = strdup(uri))) return -1;
    if (pthread_create(&r->thread, NULL, runner_main, r) != 0) {
        free(r->uri);
        r->uri = NULL;
        return -1;
    }
    r->running = 1;
    return 0;
}

void ingest_runner_wake(ingest_runner *r) {
    if (!r->running) return;
    atomic_fetch_add(&r->pending, 1);
    pthread_mutex_lock(&r->mu);
    r->woken = 1;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->mu);
}

int ingest_runner_full(ingest_runner *r) {
    return r->running && atomic_load(&r->pending) >= r->limit;
}

void ingest_runner_stop(ingest_runner *r) {
    if (!r->running) return;
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    if (r->db) remem_interrupt(r->db); /* cut the LLM call under way */
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    int left = atomic_load(&r->pending);
    if (left > 0)
        fprintf(stderr,
                "remem serve: ingest: %d jobs left unfinished at shutdown (stored; the next "
                "start finishes them)\n",
                left);
    free(r->uri);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->wake);
    r->running = 0;
}

void ingest_runner_metrics(ingest_runner *r, FILE *f) {
    fprintf(f,
            "# HELP remem_ingest_jobs_pending Background ingest jobs waiting or under way.\n"
            "# TYPE remem_ingest_jobs_pending gauge\n"
            "remem_ingest_jobs_pending %d\n"
            "# HELP remem_ingest_queue_limit Background ingest jobs accepted at most "
            "(--ingest-queue).\n"
            "# TYPE remem_ingest_queue_limit gauge\n"
            "remem_ingest_queue_limit %d\n"
            "# HELP remem_ingest_jobs_done_total Background ingest jobs finished.\n"
            "# TYPE remem_ingest_jobs_done_total counter\n"
            "remem_ingest_jobs_done_total %llu\n"
            "# HELP remem_ingest_job_failures_total Background ingest runs that failed (the job "
            "stays pending and is tried again).\n"
            "# TYPE remem_ingest_job_failures_total counter\n"
            "remem_ingest_job_failures_total %llu\n",
            atomic_load(&r->pending) > 0 ? atomic_load(&r->pending) : 0, r->limit,
            (unsigned long long)atomic_load(&r->done),
            (unsigned long long)atomic_load(&r->failures));
}
