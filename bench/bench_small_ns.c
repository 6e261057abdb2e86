/*
 * bench_small_ns.c: what a small namespace costs in process (issue 17),
 * through include/remem.h only, so that the same file builds against an
 * earlier commit and the two run side by side (bench/README.md, "Many
 * small namespaces"):
 *
 *   1. memory: N namespaces of one memory each, each recalled once; the
 *      heap the process holds afterwards (mallinfo2), per namespace, next
 *      to the data (text, id, float32 vector);
 *   2. cold and warm: N namespaces of 10 memories; a recall of each on a
 *      handle that has never loaded it (cold: the namespace read from the
 *      store into the cache), then again (warm), then an export of each
 *      without vectors (one indexed read of its rows, rendered), p50 and
 *      p99 of each.
 *
 *   bench_small_ns [N]     (N = 2000)
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remem.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static size_t heap(void) {
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

static const char *const words[] = {"garden", "ferry",  "invoice", "piano",  "deploy", "coffee",
                                    "doctor", "league", "winter",  "rocket", "market", "castle"};

static remem *open_store(const char *path) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    if (remem_open(path, &o, &db) != REMEM_OK) {
        fprintf(stderr, "bench_small_ns: %s\n", remem_errmsg(db));
        exit(1);
    }
    return db;
}

static void fill(remem *db, int n_ns, int per) {
    size_t n = (size_t)n_ns * per;
    remem_memory *ms = calloc(n, sizeof *ms);
    char(*texts)[96] = calloc(n, sizeof *texts);
    char(*names)[24] = calloc((size_t)n_ns, sizeof *names);
    for (int i = 0; i < n_ns; i++) {
        snprintf(names[i], sizeof names[i], "user:%05d", i);
        for (int j = 0; j < per; j++) {
            size_t k = (size_t)i * per + j;
            remem_memory_init(&ms[k]);
            ms[k].ns = names[i];
            snprintf(texts[k], sizeof texts[k], "note %d of user %d about the %s and the %s", j, i,
                     words[(i + j) % 12], words[(i * 5 + j * 7) % 12]);
            ms[k].text = texts[k];
        }
    }
    if (remem_add_batch(db, ms, n, NULL, 0, NULL) != REMEM_OK) {
        fprintf(stderr, "bench_small_ns: %s\n", remem_errmsg(db));
        exit(1);
    }
    free(ms);
    free(texts);
    free(names);
}

static double recall(remem *db, int i) {
    char ns[24];
    snprintf(ns, sizeof ns, "user:%05d", i);
    const char *nss[] = {ns};
    remem_query q;
    remem_query_init(&q);
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.text = words[i % 12];
    q.k = 5;
    q.no_touch = 1;
    remem_result *r = NULL;
    double t = now_ms();
    remem_recall(db, &q, &r);
    t = now_ms() - t;
    remem_result_free(r);
    return t;
}

static int sink(void *ctx, const char *data, size_t len) {
    (void)data;
    *(size_t *)ctx += len;
    return 0;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    printf("  %-34s p50 %7.3f ms  p99 %7.3f ms\n", what, v[n / 2], v[n * 99 / 100]);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    char dir[] = "/tmp/remem-bench-small-XXXXXX", path[64];
    if (!mkdtemp(dir)) return 1;
    printf("bench_small_ns: remem %s, %d namespaces\n", remem_version(), n);

    snprintf(path, sizeof path, "%s/one.db", dir);
    remem *db = open_store(path);
    fill(db, n, 1);
    recall(db, 0); /* the store's page cache and the handle's scratch */
    size_t h0 = heap();
    for (int i = 1; i < n; i++) recall(db, i);
    double per = ((double)heap() - (double)h0) / (n - 1);
    double data = 50 + 27 + remem_embedder_dim(db) * 4.0; /* text, id, float32 vector */
    printf("  %d namespaces of 1 memory: %.0f bytes of heap per namespace (data ~%.0f, beyond "
           "it %.0f)\n",
           n, per, data, per - data);
    remem_close(db);

    snprintf(path, sizeof path, "%s/ten.db", dir);
    db = open_store(path);
    fill(db, n, 10);
    remem_close(db);
    db = open_store(path); /* nothing loaded */
    double *cold = malloc((size_t)n * sizeof *cold), *warm = malloc((size_t)n * sizeof *warm);
    double *exp = malloc((size_t)n * sizeof *exp);
    for (int i = 0; i < n; i++) cold[i] = recall(db, i);
    for (int i = 0; i < n; i++) warm[i] = recall(db, i);
    for (int i = 0; i < n; i++) {
        char ns[24];
        size_t bytes = 0;
        snprintf(ns, sizeof ns, "user:%05d", i);
        double t = now_ms();
        remem_export(db, ns, 0, sink, &bytes, NULL);
        exp[i] = now_ms() - t;
    }
    report("recall, namespace of 10, cold", cold, n);
    report("recall, namespace of 10, warm", warm, n);
    report("export of its 10 rows (no vectors)", exp, n);
    remem_close(db);
    free(cold);
    free(warm);
    free(exp);
    const char *files[] = {"one.db", "one.db-wal", "one.db-shm", "ten.db", "ten.db-wal", "ten.db-shm"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
    return 0;
}
