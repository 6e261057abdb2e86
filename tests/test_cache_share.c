/*
 * test_cache_share.c: the namespace caches as one process-wide resource
 * (src/engine/cache_share.c). Many namespaces under a budget smaller than
 * they need, recalled in random order from several threads, answer exactly
 * as a handle with caches of its own (REMEM_CACHE_SHARE=0) answers, while
 * the budget holds and namespaces are evicted; the library's byte count
 * agrees with what the heap gives back when a namespace goes; a namespace
 * of one memory costs its data and a few KB, not a large namespace's fixed
 * allocations; and writes from another thread and from another process are
 * seen by a namespace loaded again after its eviction and by one that
 * stayed cached.
 */
#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remem.h"
#include "support/engine_fixture.h"
#include "test.h"

#define N_NS      240
#define PER_NS    10
#define N_THREADS 4

static const char *const WORDS[] = {
    "garden", "tomato", "ferry",  "harbour", "invoice", "meeting", "piano",  "lesson",
    "deploy", "server", "cat",    "mortgage", "holiday", "recipe", "bicycle", "league",
    "castle", "rocket", "winter", "library", "coffee", "doctor", "violin", "market"};
#define N_WORDS (sizeof WORDS / sizeof *WORDS)

static remem *open_with(const char *path, int cache_mb, int own) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    o.cache_mb = cache_mb;
    if (own) setenv("REMEM_CACHE_SHARE", "0", 1);
    remem *db = NULL;
    int rc = remem_open(path, &o, &db);
    if (own) unsetenv("REMEM_CACHE_SHARE");
    CHECK_INT(rc, REMEM_OK);
    return db;
}

static void ns_name(int i, char *out, size_t cap) { snprintf(out, cap, "tenant:%04d", i); }

/* A sentence of namespace i, memory j: its words differ per namespace. */
static void text_of(int i, int j, char *out, size_t cap) {
    snprintf(out, cap, "note %d of tenant %d: the %s and the %s near the %s", j, i,
             WORDS[(i * 7 + j) % N_WORDS], WORDS[(i * 3 + j * 5) % N_WORDS],
             WORDS[(i + j * 11) % N_WORDS]);
}

static void fill(remem *db, int n_ns, int per_ns) {
    remem_memory *ms = calloc((size_t)n_ns * per_ns, sizeof *ms);
    char(*texts)[128] = calloc((size_t)n_ns * per_ns, sizeof *texts);
    char(*names)[32] = calloc((size_t)n_ns, sizeof *names);
    char(*ids)[16] = calloc((size_t)per_ns, sizeof *ids);
    for (int j = 0; j < per_ns; j++) snprintf(ids[j], sizeof ids[j], "m-%d", j);
    for (int i = 0; i < n_ns; i++) {
        ns_name(i, names[i], sizeof names[i]);
        for (int j = 0; j < per_ns; j++) {
            remem_memory *m = &ms[i * per_ns + j];
            remem_memory_init(m);
            m->ns = names[i];
            m->id = ids[j];
            text_of(i, j, texts[i * per_ns + j], sizeof texts[0]);
            m->text = texts[i * per_ns + j];
            m->created_at = T0 - (int64_t)(i * per_ns + j) * 60000;
        }
    }
    CHECK_INT(remem_add_batch(db, ms, (size_t)n_ns * per_ns, NULL, 0, NULL), REMEM_OK);
    free(ms);
    free(texts);
    free(names);
    free(ids);
}

/* The ranked ids, scores and texts of a recall of ns, as one string. */
static void ranking(remem *db, const char *ns, const char *query, char *out, size_t cap) {
    remem_query q;
    remem_query_init(&q);
    const char *nss[] = {ns};
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.text = query;
    q.k = 5;
    q.now = T0 + 3600000;
    q.no_touch = 1;
    remem_result *r = NULL;
    int rc = remem_recall(db, &q, &r);
    CHECK_INT(rc, REMEM_OK);
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; r && i < r->n && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s:%.9f:%s|", r->hits[i].mem.id,
                                r->hits[i].score, r->hits[i].mem.text);
    remem_result_free(r);
}

static const char *query_of(int i) { return WORDS[(i * 5) % N_WORDS]; }

/* The process cache's figure `key` from remem_stats (its "cache"). */
static long long cache_figure(remem *db, const char *key) {
    char *js = NULL;
    long long v = -1;
    if (remem_stats(db, NULL, &js) == REMEM_OK) {
        json_t *o = json_loads(js, 0, NULL);
        json_t *c = json_object_get(o, "cache");
        if (c) v = json_integer_value(json_object_get(c, key));
        json_decref(o);
    }
    remem_free(js);
    return v;
}

/* 1 when ns is loaded in the process cache now (stats show its cache). */
static int is_cached(remem *db, const char *ns) {
    char *js = NULL;
    int yes = 0;
    if (remem_stats(db, ns, &js) == REMEM_OK) yes = strstr(js, "\"cache\":{") != NULL;
    remem_free(js);
    return yes;
}

/* mallinfo2 counts glibc's heap: under a sanitizer's allocator it
 * stays still, and the two tests that read it skip. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HEAP_COUNTED 0
#else
#define HEAP_COUNTED 1
#endif

static size_t heap_in_use(void) {
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* ---- 1: many namespaces, a small budget, several threads ---- */

typedef struct worker {
    const char *path;
    char (*want)[2048];
    unsigned seed;
    int mismatches, recalls;
    long long max_bytes;
} worker;

static void *work(void *arg) {
    worker *w = arg;
    remem *db = open_with(w->path, 1, 0);
    int order[N_NS];
    for (int i = 0; i < N_NS; i++) order[i] = i;
    for (int round = 0; round < 2; round++) {
        for (int i = N_NS - 1; i > 0; i--) { /* a shuffle of this thread's own */
            int j = (int)(rand_r(&w->seed) % (unsigned)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int k = 0; k < N_NS; k++) {
            char ns[32], got[2048];
            ns_name(order[k], ns, sizeof ns);
            ranking(db, ns, query_of(order[k]), got, sizeof got);
            w->recalls++;
            if (strcmp(got, w->want[order[k]])) {
                if (!w->mismatches)
                    fprintf(stderr, "  %s:\n  shared: %s\n  own:    %s\n", ns, got,
                            w->want[order[k]]);
                w->mismatches++;
            }
            if (k % 16 == 0) {
                long long b = cache_figure(db, "bytes");
                if (b > w->max_bytes) w->max_bytes = b;
            }
        }
    }
    remem_close(db);
    return NULL;
}

static void test_budget_many_threads(void) {
    tmpdir t;
    tmp_make(&t);
    remem *keep = open_with(t.db, 1, 0); /* keeps the store's shelf open */
    fill(keep, N_NS, PER_NS);
    /* What a handle with caches of its own answers. */
    char(*want)[2048] = calloc(N_NS, sizeof *want);
    remem *own = open_with(t.db, 1, 1);
    for (int i = 0; i < N_NS; i++) {
        char ns[32];
        ns_name(i, ns, sizeof ns);
        ranking(own, ns, query_of(i), want[i], sizeof want[i]);
        CHECK(want[i][0] != '\0');
    }
    remem_close(own);
    long long ev0 = cache_figure(keep, "evictions"), loads0 = cache_figure(keep, "loads");
    pthread_t th[N_THREADS];
    worker w[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        w[i] = (worker){.path = t.db, .want = want, .seed = 1234u + (unsigned)i};
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    int mismatches = 0, recalls = 0;
    long long max_bytes = 0;
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(th[i], NULL);
        mismatches += w[i].mismatches;
        recalls += w[i].recalls;
        if (w[i].max_bytes > max_bytes) max_bytes = w[i].max_bytes;
    }
    CHECK_INT(recalls, N_THREADS * 2 * N_NS);
    CHECK_INT(mismatches, 0);
    long long budget = cache_figure(keep, "budget"), bytes = cache_figure(keep, "bytes");
    long long evictions = cache_figure(keep, "evictions") - ev0;
    long long loads = cache_figure(keep, "loads") - loads0;
    printf("    %lld loads, %lld evictions, %lld of %lld bytes, at most %lld seen\n", loads,
           evictions, bytes, budget, max_bytes);
    CHECK_INT(budget, 1 << 20);
    CHECK(bytes > 0 && bytes <= budget);
    /* Beyond the budget only by what the threads had pinned at the time. */
    CHECK(max_bytes <= budget + N_THREADS * (budget / 8));
    CHECK(evictions > N_NS);
    CHECK(loads > N_NS);
    free(want);
    remem_close(keep);
    tmp_done(&t);
}

/* ---- 2: the byte count against the heap ---- */

static void test_bytes_match_heap(void) {
    if (!HEAP_COUNTED) SKIP("mallinfo2 does not see a sanitizer's allocator");
    tmpdir t;
    tmp_make(&t);
    remem *a = open_with(t.db, 1024, 0);
    fill(a, N_NS, PER_NS);
    char got[2048], ns[32];
    for (int i = 0; i < N_NS; i++) {
        ns_name(i, ns, sizeof ns);
        ranking(a, ns, query_of(i), got, sizeof got);
    }
    long long before = cache_figure(a, "bytes");
    CHECK_INT(cache_figure(a, "namespaces"), N_NS);
    /* A second handle sets a budget of 1 MB; the next release evicts. */
    remem *b = open_with(t.db, 1, 0);
    size_t heap0 = heap_in_use();
    ranking(a, "tenant:0000", query_of(0), got, sizeof got);
    size_t heap1 = heap_in_use();
    long long after = cache_figure(a, "bytes");
    double freed = (double)heap0 - (double)heap1, counted = (double)(before - after);
    printf("    counted %.0f bytes freed, the heap gave back %.0f (%.3f)\n", counted, freed,
           freed / counted);
    CHECK(after <= 1 << 20);
    CHECK(counted > 0);
    CHECK(freed > 0.9 * counted && freed < 1.1 * counted);
    remem_close(b);
    remem_close(a);
    tmp_done(&t);
}

/* ---- 3: what a namespace of one memory costs ---- */

static void test_small_namespace_cost(void) {
    enum { N = 2000 };
    if (!HEAP_COUNTED) SKIP("mallinfo2 does not see a sanitizer's allocator");
    tmpdir t;
    tmp_make(&t);
    remem *db = open_with(t.db, 1024, 0);
    fill(db, N, 1);
    char got[2048], ns[32];
    /* The store's own page cache first, so that it does not count. */
    remem *own = open_with(t.db, 1024, 1);
    ranking(own, "tenant:0000", "garden", got, sizeof got);
    remem_close(own);
    ranking(db, "tenant:0000", "garden", got, sizeof got);
    size_t heap0 = heap_in_use();
    for (int i = 1; i < N; i++) {
        ns_name(i, ns, sizeof ns);
        ranking(db, ns, query_of(i), got, sizeof got);
    }
    double per = ((double)heap_in_use() - (double)heap0) / (N - 1);
    /* The data: a text of ~60 bytes, its id, its float vector and its
     * int8 codes. */
    double data = 60 + 32 + remem_embedder_dim(db) * 5.0;
    printf("    %.0f bytes per namespace of one memory (data ~%.0f)\n", per, data);
    fflush(stdout);
    CHECK(per <= data + 4096);
    remem_close(db);
    tmp_done(&t);
}

/* ---- 4: writes from elsewhere are seen ---- */

typedef struct writer {
    const char *path;
    const char *ns[2];
} writer;

static void add_one(remem *db, const char *ns, const char *id, const char *text) {
    remem_memory m;
    remem_memory_init(&m);
    m.ns = ns;
    m.id = id;
    m.text = text;
    m.created_at = T0;
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
}

static void *thread_writes(void *arg) {
    writer *w = arg;
    remem *db = open_with(w->path, 1, 0);
    for (int k = 0; k < 2; k++) {
        add_one(db, w->ns[k], "from-thread", "a zeppelin seen from the thread's handle");
        CHECK_INT(remem_invalidate(db, w->ns[k], "m-1", NULL, NULL), REMEM_OK);
    }
    remem_close(db);
    return NULL;
}

/* Agreement with a handle that has caches of its own. */
static void agree(remem *db, const char *path, const char *ns, const char *query) {
    char got[2048], want[2048];
    ranking(db, ns, query, got, sizeof got);
    remem *own = open_with(path, 1, 1);
    ranking(own, ns, query, want, sizeof want);
    remem_close(own);
    CHECK_STR(got, want);
}

static void test_writes_seen(void) {
    tmpdir t;
    tmp_make(&t);
    remem *db = open_with(t.db, 1, 0);
    fill(db, N_NS, PER_NS);
    const char *evicted = "tenant:0001", *cached = "tenant:0002";
    char got[2048], ns[32];
    /* Load both; then enough others to evict the first, with the second
     * recalled again now and then, so that it stays among the most
     * recently used. */
    ranking(db, evicted, "zeppelin", got, sizeof got);
    for (int i = 10; i < N_NS; i++) {
        ns_name(i, ns, sizeof ns);
        ranking(db, ns, query_of(i), got, sizeof got);
        if (i % 8 == 0) ranking(db, cached, "zeppelin", got, sizeof got);
    }
    ranking(db, cached, "zeppelin", got, sizeof got);
    CHECK(!is_cached(db, evicted));
    CHECK(is_cached(db, cached));
    /* Another thread writes to both, through a handle of its own... */
    writer w = {t.db, {evicted, cached}};
    pthread_t th;
    pthread_create(&th, NULL, thread_writes, &w);
    pthread_join(th, NULL);
    CHECK(is_cached(db, cached)); /* brought along by the writer, not dropped */
    /* ...and another process. */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        remem_options o;
        remem_options_init(&o);
        o.embedder = "hash";
        remem *c = NULL;
        int ok = remem_open(t.db, &o, &c) == REMEM_OK;
        for (int k = 0; ok && k < 2; k++) {
            remem_memory m;
            remem_memory_init(&m);
            m.ns = k ? cached : evicted;
            m.id = "from-process";
            m.text = "a zeppelin over the harbour, written by another process";
            m.created_at = T0;
            ok = remem_add(c, &m, NULL, 0, NULL) == REMEM_OK;
        }
        remem_close(c);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    long long loads0 = cache_figure(db, "loads");
    ranking(db, cached, "zeppelin", got, sizeof got);
    CHECK_INT(cache_figure(db, "loads"), loads0); /* caught up, not loaded again */
    agree(db, t.db, cached, "zeppelin");
    CHECK_HAS(got, "from-thread");
    CHECK_HAS(got, "from-process");
    agree(db, t.db, evicted, "zeppelin");
    ranking(db, evicted, "zeppelin", got, sizeof got);
    CHECK_HAS(got, "from-thread");
    CHECK_HAS(got, "from-process");
    remem_close(db);
    tmp_done(&t);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_budget_many_threads);
    RUN(test_bytes_match_heap);
    RUN(test_small_namespace_cost);
    RUN(test_writes_seen);
    return TEST_EXIT();
}
