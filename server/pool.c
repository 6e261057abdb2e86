/*
 * pool.c: remem handles for the server's threads. A handle may be used by
 * one thread at a time, and it keeps per-namespace vector arrays warm, so
 * handles are checked out per request from a stack (the most recently used
 * one first: the warm caches get the traffic, cold ones are opened only
 * under real concurrency) and put back after. The pool grows lazily to cap
 * handles (worker threads plus export streams); all of them open the same
 * store and see each other's commits on their next call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serverInt.h"

int pool_init(handle_pool *p, const char *uri, const remem_options *opt,
              int cap, char *err, size_t errcap)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->freed, NULL);
    p->cap = cap < 1 ? 1 : cap;
    p->opt = *opt;
    p->uri = strdup(uri);
    p->idle = calloc((size_t)p->cap, sizeof *p->idle);
    if (!p->uri || !p->idle) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    remem *db = pool_get(p, err, errcap);
    if (!db) return -1;
    pool_put(p, db);
    return 0;
}

remem *pool_get(handle_pool *p, char *err, size_t errcap)
{
    pthread_mutex_lock(&p->mu);
    while (p->n_idle == 0 && p->n_open >= p->cap)
        pthread_cond_wait(&p->freed, &p->mu);
    if (p->n_idle > 0) {
        remem *db = p->idle[--p->n_idle];
        pthread_mutex_unlock(&p->mu);
        return db;
    }
    p->n_open++; /* reserve the slot; open outside the lock (it is slow) */
    pthread_mutex_unlock(&p->mu);

    remem *db = NULL;
    int rc = remem_open(p->uri, &p->opt, &db);
    if (rc == REMEM_OK) return db;
    snprintf(err, errcap, "cannot open %s: %s", p->uri,
             db ? remem_errmsg(db) : "out of memory");
    remem_close(db);
    pthread_mutex_lock(&p->mu);
    p->n_open--;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

void pool_put(handle_pool *p, remem *db)
{
    if (!db) return;
    pthread_mutex_lock(&p->mu);
    p->idle[p->n_idle++] = db;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->mu);
}

void pool_close(handle_pool *p)
{
    for (int i = 0; i < p->n_idle; i++) remem_close(p->idle[i]);
    free(p->idle);
    free(p->uri);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->freed);
    memset(p, 0, sizeof *p);
}
