/*
 * maintain.c: the server's background thread, on a handle of its own so
 * requests never wait for a handle behind it (SQLite's WAL lets recalls
 * read while it writes; adds wait only for one batch's transaction). Two
 * chores, each on its own clock:
 *
 *   - every pruneIntervalHours (the engine's "maintain.schedule", or
 *     --maintain-every HOURS) the "maintain" operation: prune, retention,
 *     archive (src/maintenance/);
 *   - with the http embedder, the retry queue of memories stored while it
 *     was down ("pending.embed", src/engine/pending.c): looked at every 30
 *     s, the wait doubling up to 5 minutes while the embedder still fails.
 *
 * Stopping wakes it at once and cuts the embedder call it may be waiting
 * on (remem_interrupt); a chore that still runs (a long prune) is waited
 * for only up to a bound, so that a shutdown ends within its grace.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serverInt.h"

#define PENDING_TICK_MS 30000
#define PENDING_MAX_MS  300000

static struct {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int running, stop, pending_on;
    double hours;
    remem *db;
    FILE *log;
} g_maint = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void say(const char *what, int rc) {
    if (!g_maint.log) return;
    fprintf(g_maint.log, "remem serve: %s: %s\n", what, rc ? remem_errmsg(g_maint.db) : "done");
    fflush(g_maint.log);
}

/* Memories waiting for a vector, from the stats. */
static long pending_count(void) {
    char *js = NULL;
    long n = 0;
    if (remem_stats(g_maint.db, NULL, &js) == REMEM_OK) {
        const char *p = strstr(js, "\"pending_embeddings\":");
        if (p) n = strtol(p + strlen("\"pending_embeddings\":"), NULL, 10);
    }
    remem_free(js);
    return n;
}

static void *maint_loop(void *arg) {
    (void)arg;
    int64_t every = (int64_t)(g_maint.hours * 3600e3), pend_wait = PENDING_TICK_MS;
    int64_t next_maint = every > 0 ? remem_now() + every : INT64_MAX;
    int64_t next_pend = g_maint.pending_on ? remem_now() + pend_wait : INT64_MAX;
    pthread_mutex_lock(&g_maint.mu);
    while (!g_maint.stop) {
        int64_t due = next_maint < next_pend ? next_maint : next_pend;
        struct timespec until = {.tv_sec = (time_t)(due / 1000),
                                 .tv_nsec = (long)(due % 1000) * 1000000L};
        while (!g_maint.stop && remem_now() < due &&
               pthread_cond_timedwait(&g_maint.cv, &g_maint.mu, &until) == 0) {}
        if (g_maint.stop) break;
        pthread_mutex_unlock(&g_maint.mu);
        int64_t now = remem_now();
        if (now >= next_pend) {
            char *out = NULL;
            int rc =
                pending_count() > 0 ? remem_call(g_maint.db, "pending.embed", "{}", 2, &out) : 0;
            if (out) say("pending embeddings", rc);
            remem_free(out);
            pend_wait = rc ? (pend_wait * 2 > PENDING_MAX_MS ? PENDING_MAX_MS : pend_wait * 2)
                           : PENDING_TICK_MS;
            next_pend = remem_now() + pend_wait;
        }
        if (now >= next_maint) {
            char *out = NULL;
            say("maintenance", remem_call(g_maint.db, "maintain", "{}", 2, &out));
            remem_free(out);
            next_maint = remem_now() + every;
        }
        pthread_mutex_lock(&g_maint.mu);
    }
    pthread_mutex_unlock(&g_maint.mu);
    return NULL;
}

int serve_maint_start(const serve_config *cfg, FILE *log, char *err, size_t cap) {
    remem *db = NULL;
    int rc = remem_open(cfg->db_path, &cfg->opt, &db);
    if (rc) {
        snprintf(err, cap, "maintenance handle: %s", remem_errmsg(db));
        remem_close(db);
        return -1;
    }
    double hours = cfg->maintain_every_hours;
    if (hours < 0) {
        char *out = NULL;
        hours = 0;
        if (remem_call(db, "maintain.schedule", "{}", 2, &out) == REMEM_OK) {
            const char *p = strstr(out, "\"pruneIntervalHours\":");
            if (p) hours = strtod(p + strlen("\"pruneIntervalHours\":"), NULL);
        }
        remem_free(out);
    }
    int pending_on = !strcmp(remem_embedder_name(db), "http");
    if (hours <= 0 && !pending_on) {
        remem_close(db);
        return 0;
    }
    g_maint.db = db;
    g_maint.hours = hours;
    g_maint.pending_on = pending_on;
    g_maint.log = log;
    g_maint.stop = 0;
    if (pthread_create(&g_maint.thread, NULL, maint_loop, NULL)) {
        snprintf(err, cap, "cannot start the maintenance thread");
        remem_close(db);
        return -1;
    }
    g_maint.running = 1;
    return 0;
}

void serve_maint_cut(void) {
    if (!g_maint.running) return;
    pthread_mutex_lock(&g_maint.mu);
    g_maint.stop = 1;
    pthread_cond_signal(&g_maint.cv);
    pthread_mutex_unlock(&g_maint.mu);
    remem_interrupt(g_maint.db);
}

int serve_maint_stop(int wait_ms) {
    if (!g_maint.running) return 0;
    serve_maint_cut();
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += wait_ms / 1000;
    until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    if (pthread_timedjoin_np(g_maint.thread, NULL, &until) != 0) {
        fprintf(stderr, "remem serve: the maintenance under way did not end within %d ms\n",
                wait_ms);
        return -1; /* its handle stays open under it */
    }
    remem_close(g_maint.db);
    g_maint.db = NULL;
    g_maint.running = 0;
    return 0;
}
