/*
 * maintain.c: the server's maintenance thread. Every pruneIntervalHours
 * (the engine's "maintain.schedule", or --maintain-every HOURS) it runs
 * the "maintain" operation (prune, retention, archive: src/maintenance/)
 * on a handle of its own, so requests never wait for a handle behind it;
 * SQLite's WAL lets recalls read while it writes, and adds wait only for
 * one archive batch's transaction at a time. Stopping wakes it at once.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serverInt.h"

static struct {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int running, stop;
    double hours;
    remem *db;
    FILE *log;
} g_maint = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *maint_loop(void *arg) {
    (void)arg;
    pthread_mutex_lock(&g_maint.mu);
    while (!g_maint.stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double s = g_maint.hours * 3600.0;
        until.tv_sec += (time_t)s;
        until.tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        while (!g_maint.stop && pthread_cond_timedwait(&g_maint.cv, &g_maint.mu, &until) == 0) {}
        if (g_maint.stop) break;
        pthread_mutex_unlock(&g_maint.mu);
        char *out = NULL;
        int rc = remem_call(g_maint.db, "maintain", "{}", 2, &out);
        if (g_maint.log) {
            fprintf(g_maint.log, "remem serve: maintenance: %s\n",
                    rc ? remem_errmsg(g_maint.db) : "done");
            fflush(g_maint.log);
        }
        remem_free(out);
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
    if (hours <= 0) {
        remem_close(db);
        return 0;
    }
    g_maint.db = db;
    g_maint.hours = hours;
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

void serve_maint_stop(void) {
    if (!g_maint.running) return;
    pthread_mutex_lock(&g_maint.mu);
    g_maint.stop = 1;
    pthread_cond_signal(&g_maint.cv);
    pthread_mutex_unlock(&g_maint.mu);
    pthread_join(g_maint.thread, NULL);
    remem_close(g_maint.db);
    g_maint.db = NULL;
    g_maint.running = 0;
}
