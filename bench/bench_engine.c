/*
 * bench_engine.c: the engine's speed, end to end through include/remem.h.
 *
 *   ingest   memories per second with the hash embedder: batched adds (one
 *            transaction per 1,000) and single adds, each durable (WAL,
 *            synchronous=NORMAL) and with --durable (synchronous=FULL).
 *   recall   p50/p99 latency of a full recall (vector lane, full scoring by
 *            the "stream" profile: relevance + recency + importance, and a
 *            filter that keeps half the rows) at 10k, 100k and 1M memories
 *            of 384 dimensions, k = 10, one thread; side by side with the
 *            same recalls over a plain scalar float32 scan (the index's
 *            reference kernel, no int8 pre-scan), run in the same process,
 *            and the ratio; and the memory-bandwidth floor: the bytes a scan
 *            of the allowed rows must read per query (float32, and the int8
 *            codes) over the read bandwidth measured here.
 *
 * Vectors are clustered unit vectors (a mixture of Gaussian centres) with a
 * fixed seed, queries are drawn near them: realistic for embeddings, unlike
 * uniform noise. Usage: bench_engine [--quick] (10k and 100k only).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remem.h"
#include "index/flat.h"

#define DIM 384

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static double urand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}
static double grand(void) {
    double u = urand() + 1e-12, v = urand();
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static void unit(float *v) {
    double s = 0;
    for (int i = 0; i < DIM; i++) s += (double)v[i] * v[i];
    for (int i = 0; i < DIM; i++) v[i] /= (float)sqrt(s);
}

static float *centres;
static const int n_centres = 2000;

static void sample(float *v, double spread) {
    const float *c = centres + (size_t)(urand() * n_centres) * DIM;
    for (int i = 0; i < DIM; i++) v[i] = c[i] + (float)(spread * grand() / sqrt(DIM));
    unit(v);
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[(int)(p * (n - 1))];
}

/* Delete a store file with its -wal and -shm. */
static void remove_store(const char *path) {
    char side[600];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

static void bench_ingest(const char *dir) {
    static const char *words[] = {"deploy",   "payment",  "service", "Maya",    "release",
                                  "cluster",  "rollback", "timeout", "canary",  "pipeline",
                                  "user",     "prefers",  "lunch",   "meeting", "review",
                                  "database", "index",    "query"};
    printf("== ingest (hash embedder, texts of ~12 words) ==\n");
    for (int durable = 0; durable <= 1; durable++) {
        char path[512];
        snprintf(path, sizeof path, "%s/ingest-%d.db", dir, durable);
        remem_options o;
        remem_options_init(&o);
        o.embedder = "hash";
        o.durability = durable;
        remem *db;
        if (remem_open(path, &o, &db)) {
            fprintf(stderr, "open: %s\n", remem_errmsg(db));
            exit(1);
        }
        const int nb = 20000, batch = 1000, ns1 = 2000;
        char(*texts)[160] = malloc((size_t)nb * 160);
        remem_memory *ms = calloc(batch, sizeof *ms);
        for (int i = 0; i < nb; i++) {
            int len = snprintf(texts[i], 160, "m%d", i);
            for (int w = 0; w < 12; w++)
                len += snprintf(texts[i] + len, 160 - (size_t)len, " %s",
                                words[(size_t)(urand() * 18)]);
        }
        double t0 = now_s();
        for (int b = 0; b < nb; b += batch) {
            for (int i = 0; i < batch; i++) {
                remem_memory_init(&ms[i]);
                ms[i].ns = "bench:ingest";
                ms[i].text = texts[b + i];
            }
            long bad;
            if (remem_add_batch(db, ms, (size_t)batch, NULL, 0, &bad)) {
                fprintf(stderr, "add: %s\n", remem_errmsg(db));
                exit(1);
            }
        }
        double tb = now_s() - t0;
        double *lat = malloc(ns1 * sizeof *lat);
        t0 = now_s();
        for (int i = 0; i < ns1; i++) {
            remem_memory m;
            remem_memory_init(&m);
            m.ns = "bench:single";
            m.text = texts[i];
            double a = now_s();
            if (remem_add(db, &m, NULL, 0, NULL)) {
                fprintf(stderr, "add: %s\n", remem_errmsg(db));
                exit(1);
            }
            lat[i] = (now_s() - a) * 1e3;
        }
        double ts = now_s() - t0;
        printf("  synchronous=%-6s batched: %8.0f memories/s   single adds: %7.0f /s "
               "(p50 %.3f ms, p99 %.3f ms)\n",
               durable ? "FULL" : "NORMAL", nb / tb, ns1 / ts, pct(lat, ns1, 0.5),
               pct(lat, ns1, 0.99));
        free(lat);
        free(texts);
        free(ms);
        remem_close(db);
        remove_store(path);
    }
}

/* Single-thread read bandwidth: integer sums over 512 MB (integer adds
 * reassociate, so the compiler vectorises them and the loop is bound by
 * memory, not by an add chain). Best of three. */
static double bandwidth_gbs(void) {
    size_t n = (size_t)512 << 20;
    uint64_t *a = malloc(n);
    size_t cnt = n / sizeof *a;
    for (size_t i = 0; i < cnt; i++) a[i] = i;
    double best = 0;
    volatile uint64_t sink = 0;
    for (int r = 0; r < 3; r++) {
        double t0 = now_s();
        uint64_t s = 0;
        for (size_t i = 0; i < cnt; i++) s += a[i];
        sink = s;
        double gbs = (double)n / (now_s() - t0) / 1e9;
        if (gbs > best) best = gbs;
    }
    (void)sink;
    free(a);
    return best;
}

static void run_queries(remem *db, float *qs, int nq, double *lat) {
    const char *ns[] = {"bench:recall"};
    for (int i = 0; i < nq; i++) {
        remem_query q;
        remem_query_init(&q);
        q.namespaces = ns;
        q.n_namespaces = 1;
        q.vector = qs + (size_t)i * DIM;
        q.dim = DIM;
        q.k = 10;
        q.profile = "stream";
        q.filter = "{\"kind\":\"observation\"}";
        q.no_touch = 1;
        q.now = 1800000000000LL;
        remem_result *r = NULL;
        double t0 = now_s();
        if (remem_recall(db, &q, &r)) {
            fprintf(stderr, "recall: %s\n", remem_errmsg(db));
            exit(1);
        }
        lat[i] = (now_s() - t0) * 1e3;
        if (r->n != 10) {
            fprintf(stderr, "recall returned %zu hits\n", r->n);
            exit(1);
        }
        remem_result_free(r);
    }
}

static void bench_recall(const char *dir, int n, double bw) {
    char path[512];
    snprintf(path, sizeof path, "%s/recall-%d.db", dir, n);
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db;
    if (remem_open(path, &o, &db)) {
        fprintf(stderr, "open: %s\n", remem_errmsg(db));
        exit(1);
    }
    const int batch = 10000;
    remem_memory *ms = calloc(batch, sizeof *ms);
    float *vs = malloc((size_t)batch * DIM * sizeof *vs);
    char(*texts)[32] = malloc((size_t)batch * 32);
    double t0 = now_s();
    for (int b = 0; b < n; b += batch) {
        for (int i = 0; i < batch; i++) {
            sample(vs + (size_t)i * DIM, 0.6);
            snprintf(texts[i], 32, "memory %d", b + i);
            remem_memory_init(&ms[i]);
            ms[i].ns = "bench:recall";
            ms[i].text = texts[i];
            ms[i].kind = (b + i) % 2 ? "observation" : "decision";
            ms[i].importance = urand();
            ms[i].created_at = 1700000000000LL + (int64_t)(b + i) * 60000;
            ms[i].vector = vs + (size_t)i * DIM;
            ms[i].dim = DIM;
        }
        long bad;
        if (remem_add_batch(db, ms, (size_t)batch, NULL, 0, &bad)) {
            fprintf(stderr, "add: %s\n", remem_errmsg(db));
            exit(1);
        }
    }
    double load = now_s() - t0;
    const int nq = n >= 1000000 ? 100 : 300;
    float *qs = malloc((size_t)nq * DIM * sizeof *qs);
    for (int i = 0; i < nq; i++) sample(qs + (size_t)i * DIM, 0.8);
    double *lat = malloc(nq * sizeof *lat), *base = malloc(nq * sizeof *base);
    /* Warm-up: the first recall loads the namespace into memory. */
    t0 = now_s();
    run_queries(db, qs, 1, lat);
    double warm = now_s() - t0;
    run_queries(db, qs, nq, lat);
    char best[16];
    snprintf(best, sizeof best, "%s", flat_kernel_name());
    flat_set_kernel("scalar");
    flat_set_prescan(FLAT_PRESCAN_NEVER);
    run_queries(db, qs, nq, base);
    flat_set_kernel(best);
    flat_set_prescan(FLAT_PRESCAN_AUTO);
    double p50 = pct(lat, nq, 0.5), p99 = pct(lat, nq, 0.99);
    double b50 = pct(base, nq, 0.5), b99 = pct(base, nq, 0.99);
    /* The filter allows half the rows: a scan must read those. */
    double floor_f32 = (double)n / 2 * DIM * 4 / (bw * 1e9) * 1e3;
    double floor_i8 = (double)n / 2 * DIM / (bw * 1e9) * 1e3;
    printf("  %8d memories: p50 %7.3f ms  p99 %7.3f ms | scalar scan p50 %7.3f ms p99 %7.3f ms"
           " | speed-up %.1fx | float32 floor %.2f ms, int8 floor %.2f ms | load %.1f s, first "
           "recall %.0f ms\n",
           n, p50, p99, b50, b99, b50 / p50, floor_f32, floor_i8, load, warm * 1e3);
    fflush(stdout);
    free(qs);
    free(lat);
    free(base);
    free(ms);
    free(vs);
    free(texts);
    remem_close(db);
    remove_store(path);
}

int main(int argc, char **argv) {
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    char dir[] = "/tmp/remem-bench-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    centres = malloc((size_t)n_centres * DIM * sizeof *centres);
    for (int c = 0; c < n_centres; c++) {
        for (int i = 0; i < DIM; i++) centres[(size_t)c * DIM + i] = (float)grand();
        unit(centres + (size_t)c * DIM);
    }
    printf("bench_engine: kernel %s, %s\n", flat_kernel_name(), quick ? "quick" : "full");
    bench_ingest(dir);
    double bw = bandwidth_gbs();
    printf("== recall (profile stream: full scoring, filter keeps 50%%, k=10, one thread) ==\n");
    printf("  measured read bandwidth: %.1f GB/s (one thread)\n", bw);
    int sizes[] = {10000, 100000, 1000000};
    for (int i = 0; i < (quick ? 2 : 3); i++) bench_recall(dir, sizes[i], bw);
    rmdir(dir);
    free(centres);
    return 0;
}
