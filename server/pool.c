/*
 * pool.c: remem handles for the server's threads. A handle may be used by
 * one thread at a time, and it keeps per-namespace vector arrays warm, so
 * handles are checked out per request from a stack (the most recently used
 * one first: the warm caches get the traffic, cold ones are opened only
 * under real concurrency) and put back after. The pool grows lazily to cap
 * handles (worker threads plus export streams); all of them open the same
 * store and see each other's commits on their next call.
 *
 * A handle that writes to a namespace keeps its own cache of it current;
 * every other handle drops and reloads its copy on next use. So a request
 * is given, when one is idle, the handle that last served its namespace:
 * with several agents each on its own namespace, each tends to stay on one
 * handle and nothing reloads. This is only a preference: a request never
 * waits for a particular handle.
 *
 * The pool also knows which handles are checked out, so that a shutdown
 * can cut the LLM and embedder calls they wait on (pool_interrupt), and
 * gives each checkout the server's deadline for that work (pool_deadline:
 * a checkout is one request).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serverInt.h"

int pool_init(handle_pool *p, const char *uri, const remem_options *opt, int cap, char *err,
              size_t errcap) {
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->freed, NULL);
    p->cap = cap < 1 ? 1 : cap;
    p->opt = *opt;
    p->uri = strdup(uri);
    p->idle = calloc((size_t)p->cap, sizeof *p->idle);
    p->idle_ns = calloc((size_t)p->cap, sizeof *p->idle_ns);
    p->busy = calloc((size_t)p->cap, sizeof *p->busy);
    if (!p->uri || !p->idle || !p->idle_ns || !p->busy) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    remem *db = pool_get(p, NULL, err, errcap);
    if (!db) return -1;
    pool_put(p, db, NULL);
    return 0;
}

const char *shown_uri(const char *uri, char *buf, size_t cap) {
    const char *sep = strstr(uri, "://");
    const char *auth = sep ? sep + 3 : NULL;
    const char *at = auth ? strchr(auth, '@') : NULL;
    const char *colon = auth ? strchr(auth, ':') : NULL;
    const char *slash = auth ? strchr(auth, '/') : NULL;
    if (!at || !colon || colon > at || (slash && slash < at))
        snprintf(buf, cap, "%s", uri);
    else /* user:password@rest -> user:***@rest */
        snprintf(buf, cap, "%.*s***%s", (int)(colon + 1 - uri), uri, at);
    return buf;
}

/* FNV-1a; 0 stands for "no namespace". */
static uint64_t ns_hash(const char *ns) {
    if (!ns) return 0;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *ns; ns++) h = (h ^ (unsigned char)*ns) * 0x100000001b3ULL;
    return h ? h : 1;
}

/* Note db as checked out; with p->mu held. */
static void mark_busy(handle_pool *p, remem *db) {
    for (int i = 0; i < p->cap; i++)
        if (!p->busy[i]) {
            p->busy[i] = db;
            break;
        }
    remem_set_deadline(db, p->deadline_ms);
}

static void unmark_busy(handle_pool *p, remem *db) {
    for (int i = 0; i < p->cap; i++)
        if (p->busy[i] == db) p->busy[i] = NULL;
    remem_set_deadline(db, 0);
}

remem *pool_get(handle_pool *p, const char *ns, char *err, size_t errcap) {
    uint64_t want = ns_hash(ns);
    pthread_mutex_lock(&p->mu);
    while (p->n_idle == 0 && p->n_open >= p->cap) pthread_cond_wait(&p->freed, &p->mu);
    if (p->n_idle > 0) {
        int pick = p->n_idle - 1;
        for (int i = pick; want && i >= 0; i--)
            if (p->idle_ns[i] == want) {
                pick = i;
                break;
            }
        remem *db = p->idle[pick];
        p->n_idle--;
        memmove(p->idle + pick, p->idle + pick + 1, (size_t)(p->n_idle - pick) * sizeof *p->idle);
        memmove(p->idle_ns + pick, p->idle_ns + pick + 1,
                (size_t)(p->n_idle - pick) * sizeof *p->idle_ns);
        mark_busy(p, db);
        pthread_mutex_unlock(&p->mu);
        return db;
    }
    p->n_open++; /* reserve the slot; open outside the lock (it is slow) */
    pthread_mutex_unlock(&p->mu);

    remem *db = NULL;
    int rc = remem_open(p->uri, &p->opt, &db);
    if (rc == REMEM_OK) {
        if (p->rate_later) remem_set_rate_later(db, p->rate_later, p->rate_later_ctx);
        pthread_mutex_lock(&p->mu);
        mark_busy(p, db);
        pthread_mutex_unlock(&p->mu);
        return db;
    }
    char shown[1024];
    snprintf(err, errcap, "cannot open %s: %s", shown_uri(p->uri, shown, sizeof shown),
             db ? remem_errmsg(db) : "out of memory");
    remem_close(db);
    pthread_mutex_lock(&p->mu);
    p->n_open--;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

void pool_rate_later(handle_pool *p, remem_rate_later_fn fn, void *ctx) {
    pthread_mutex_lock(&p->mu);
    p->rate_later = fn;
    p->rate_later_ctx = ctx;
    for (int i = 0; i < p->n_idle; i++) remem_set_rate_later(p->idle[i], fn, ctx);
    pthread_mutex_unlock(&p->mu);
}

void pool_put(handle_pool *p, remem *db, const char *ns) {
    if (!db) return;
    pthread_mutex_lock(&p->mu);
    unmark_busy(p, db);
    p->idle_ns[p->n_idle] = ns_hash(ns);
    p->idle[p->n_idle++] = db;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->mu);
}

void pool_deadline(handle_pool *p, int64_t ms) {
    pthread_mutex_lock(&p->mu);
    p->deadline_ms = ms > 0 ? ms : 0;
    pthread_mutex_unlock(&p->mu);
}

void pool_interrupt(handle_pool *p) {
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < p->cap; i++)
        if (p->busy[i]) remem_interrupt(p->busy[i]);
    pthread_mutex_unlock(&p->mu);
}

void pool_close(handle_pool *p) {
    for (int i = 0; i < p->n_idle; i++) remem_close(p->idle[i]);
    free(p->busy);
    free(p->idle);
    free(p->idle_ns);
    free(p->uri);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->freed);
    memset(p, 0, sizeof *p);
}
