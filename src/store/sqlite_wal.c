/*
 * sqlite_wal.c: a writable SQLite handle's checkpoints, off the commit path.
 *
 * In WAL mode every committed page is appended to the WAL, and a
 * checkpoint copies the WAL's pages into the database file (reading each
 * frame back, writing it, syncing both files). SQLite's autocheckpoint
 * runs it in the commit that crosses the threshold, so the writer that
 * asked for the commit waits for it: in an ingest of 100,000 turns in
 * batches of 1,000, about a quarter of the clock (bench/README.md,
 * "Conversations in without an LLM").
 *
 * Here the handle's WAL hook, called after each commit with the WAL's
 * size, wakes a thread of the handle's own (with its own connection, so
 * the two never share one) that runs a PASSIVE checkpoint while the
 * writer goes on with its next transaction: a checkpoint never blocks a
 * writer, and copies only frames that are committed. Durability is the
 * writer's business and does not change: a commit is in the WAL (synced
 * as `synchronous` says) before it is acknowledged, checkpointed or not.
 *
 * The WAL stays bounded: past hard_pages the committing writer checkpoints
 * itself, as autocheckpoint would, after the thread's run (checkpoint_here),
 * and SQLite restarts the WAL from its start once a checkpoint has copied
 * all of it.
 *
 * The thread starts on the first checkpoint it is asked for (a handle that
 * writes little never has one), and after a fork the child leaves the
 * parent's thread alone.
 */
#include "store/sqlite_wal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sqlite_wal {
    sqlite3 *db; /* the writer's connection (its hook) */
    char *path;
    char sync[32]; /* the writer's synchronous setting, for the thread's */
    int soft, hard;
    pthread_mutex_t mu;
    pthread_cond_t cv;   /* the thread waits for work */
    pthread_cond_t idle; /* the writer waits for the thread's checkpoint */
    pthread_t thread;
    int started; /* the thread runs (or ran: failed to start, -1) */
    int want, stop, busy;
    pid_t pid; /* the process that started the thread */
};

/* The thread's connection: the same file, the writer's synchronous
 * setting (a checkpoint syncs as the connection that runs it says), a
 * small page cache (a checkpoint copies frames, it does not cache them). */
static sqlite3 *open_own(const sqlite_wal *w) {
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(w->path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA synchronous=%s", w->sync);
    sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_exec(db, "PRAGMA cache_size=-256", NULL, NULL, NULL);
    sqlite3_busy_timeout(db, 2000); /* RESTART waits for the writer's transaction */
    return db;
}

/* The bulk of the WAL copied while the writer goes on (PASSIVE), then
 * the frames it appended meanwhile with the writer held back (RESTART:
 * it waits for the writer's transaction to end, copies the rest, and
 * leaves the WAL to start over), so that the next checkpoint copies only
 * pages changed since, not again the ones of a random index that every
 * transaction dirties. Busy or an I/O error: the next commit past the
 * threshold asks again, and the writer's own checkpoint at hard_pages
 * bounds the WAL whatever happens here. */
static void checkpoint(sqlite3 *db) {
    if (sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) != SQLITE_OK)
        return;
    sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_RESTART, NULL, NULL);
}

static void *run(void *arg) {
    sqlite_wal *w = arg;
    sqlite3 *db = NULL;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->want && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
        if (w->stop) break;
        w->want = 0;
        w->busy = 1;
        pthread_mutex_unlock(&w->mu);
        if (!db) db = open_own(w);
        if (db) checkpoint(db);
        pthread_mutex_lock(&w->mu);
        w->busy = 0;
        pthread_cond_signal(&w->idle);
    }
    pthread_mutex_unlock(&w->mu);
    sqlite3_close(db);
    return NULL;
}

/* Wake the thread (start it first); 0, or -1 when it cannot run. */
static int wake(sqlite_wal *w) {
    pthread_mutex_lock(&w->mu);
    if (!w->started) {
        w->started = pthread_create(&w->thread, NULL, run, w) == 0 ? 1 : -1;
        w->pid = getpid();
    }
    int ok = w->started == 1 && w->pid == getpid();
    if (ok) {
        w->want = 1;
        pthread_cond_signal(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return ok ? 0 : -1;
}

/* Past hard frames, the writer's own checkpoint, once the thread's run
 * (if any) is over, and with the thread held back meanwhile: a checkpoint
 * that runs while the writer appends never copies the whole WAL, and
 * SQLite starts the WAL over only after one that did. So the WAL holds at
 * most hard frames and the commit that crossed them. */
static void checkpoint_here(sqlite_wal *w, sqlite3 *db, const char *name) {
    pthread_mutex_lock(&w->mu);
    w->want = 0;
    while (w->busy && w->pid == getpid()) pthread_cond_wait(&w->idle, &w->mu);
    sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    pthread_mutex_unlock(&w->mu);
}

/* After each commit, with the WAL's size in frames. */
static int hook(void *arg, sqlite3 *db, const char *name, int pages) {
    sqlite_wal *w = arg;
    if (pages >= w->hard)
        checkpoint_here(w, db, name);
    else if (pages >= w->soft && wake(w))
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return SQLITE_OK;
}

sqlite_wal *sqlite_wal_start(sqlite3 *db, const char *path, int soft_pages, int hard_pages,
                             const char *synchronous) {
    sqlite_wal *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return NULL;
    }
    w->db = db;
    snprintf(w->sync, sizeof w->sync, "%s", synchronous);
    w->soft = soft_pages;
    w->hard = hard_pages > soft_pages ? hard_pages : soft_pages;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    pthread_cond_init(&w->idle, NULL);
    sqlite3_wal_hook(db, hook, w);
    return w;
}

void sqlite_wal_stop(sqlite_wal *w) {
    if (!w) return;
    sqlite3_wal_hook(w->db, NULL, NULL);
    pthread_mutex_lock(&w->mu);
    int join = w->started == 1 && w->pid == getpid();
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (join) pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_cond_destroy(&w->idle);
    pthread_mutex_destroy(&w->mu);
    free(w->path);
    free(w);
}
