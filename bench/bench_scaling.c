/*
 * bench_scaling.c: how the operations that take a list or scan a namespace
 * grow with their input (issue 21: "every operation's work bounded by its
 * input, near-linear"). Each is timed at 1x, 2x, 4x and 8x its base size
 * and the growth ratio per doubling is printed: about 2 for linear work,
 * 4 for quadratic, and their mean (8x / 1x)^(1/3). Any ratio above 2.5
 * is a failure (exit status 1).
 *
 *   timeline      one run of N steps (an attempt each, an error event on
 *                 every other), the attempts view (every step: limit
 *                 100000) and the summary of every run
 *   static.load   a personality file of N leaves, into an empty namespace
 *   recall        candidates = N per lane over 8 x base memories, the
 *                 default profile (its context step compares neighbours)
 *   prune         a dry run over N episodes of one project that do not
 *                 cluster (distinct texts, threshold 0.99)
 *   summarize     the 10 least important of N long-term memories (it reads
 *                 and sorts the whole tier)
 *
 * Records are written with remem_add_batch (the hash embedder, in memory)
 * so that setting up stays cheap; only the operation is timed, the best of
 * REPEAT runs in one process, and the best of the processes scaling.h
 * runs per size. The whole run takes about three minutes on 2 cores;
 * REMEM_BENCH_QUICK halves the base sizes.
 *
 *   make build/bench/bench_scaling && build/bench/bench_scaling [op]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "remem.h"
#include "scaling.h"

#define REPEAT    3
#define MAX_RATIO SCALING_MAX_RATIO

static remem *open_mem(void) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    if (remem_open(":memory:", &o, &db)) {
        fprintf(stderr, "open: %s\n", remem_errmsg(db));
        exit(1);
    }
    return db;
}

static void die(remem *db, const char *what) {
    fprintf(stderr, "bench_scaling: %s: %s\n", what, remem_errmsg(db));
    exit(1);
}

/* ---- writing many memories ---- */

typedef struct rec {
    char id[48], text[128], meta[256];
    const char *kind, *tier;
    double importance;
} rec;

static void write_all(remem *db, const char *ns, rec *r, size_t n) {
    enum { B = 2000 };
    remem_memory *ms = calloc(B, sizeof *ms);
    for (size_t i = 0; i < n; i += B) {
        size_t m = n - i < B ? n - i : B;
        for (size_t j = 0; j < m; j++) {
            rec *x = &r[i + j];
            remem_memory_init(&ms[j]);
            ms[j].ns = ns;
            ms[j].id = x->id[0] ? x->id : NULL;
            ms[j].kind = x->kind;
            ms[j].tier = x->tier;
            ms[j].text = x->text;
            ms[j].metadata = x->meta[0] ? x->meta : NULL;
            ms[j].importance = x->importance;
            ms[j].created_at = 1700000000000LL + (int64_t)(i + j) * 1000;
        }
        if (remem_add_batch(db, ms, m, NULL, 0, NULL)) die(db, "add");
    }
    free(ms);
}

/* A text no other memory repeats (no duplicate folding, no clustering). */
static void distinct_text(char *buf, size_t cap, size_t i) {
    static const char *w[] = {"parse", "csv",    "json",   "file",  "rows", "write",
                              "read",  "socket", "retry",  "cache", "sort", "merge",
                              "http",  "client", "config", "log"};
    snprintf(buf, cap, "%s %s %s %s item %zu of %zx", w[i % 16], w[(i / 16) % 16],
             w[(i / 256) % 16], w[(i * 7 + 3) % 16], i, i * 2654435761u);
}

static double call_timed(remem *db, const char *op, const char *args) {
    double best = 1e30;
    for (int r = 0; r < REPEAT; r++) {
        char *out = NULL;
        double t0 = scaling_now();
        if (remem_call(db, op, args, strlen(args), &out)) die(db, op);
        double t = scaling_now() - t0;
        remem_free(out);
        if (t < best) best = t;
    }
    return best;
}

/* ---- the operations, each: set up for n, return the seconds taken ---- */

static double run_timeline(size_t n) {
    remem *db = open_mem();
    size_t total = n + n / 2, k = 0;
    rec *r = calloc(total, sizeof *r);
    for (size_t s = 1; s <= n; s++) {
        rec *a = &r[k++];
        a->kind = "attempt";
        snprintf(a->text, sizeof a->text, "attempt at step %zu", s);
        snprintf(a->meta, sizeof a->meta,
                 "{\"run\":\"r1\",\"step\":%zu,\"valid\":true,\"input\":{\"sql\":\"select %zu\"},"
                 "\"violations\":[],\"signal\":\"ok\"}",
                 s, s);
        if (s % 2) {
            rec *e = &r[k++];
            e->kind = "error_event";
            snprintf(e->text, sizeof e->text, "error at step %zu", s);
            snprintf(e->meta, sizeof e->meta,
                     "{\"run\":\"r1\",\"step\":%zu,\"fingerprint\":\"fp_%016zx\",\"channel\":"
                     "\"hard_failure\",\"tool\":\"sql\",\"error\":\"locked\",\"recurrence\":0}",
                     s, s % 97);
        }
    }
    write_all(db, "t", r, k);
    free(r);
    /* every step in one answer; REMEM_BENCH_NO_LIMIT: without "limit", for
     * a build that does not page (the baseline of bench/README.md) */
    const char *all = getenv("REMEM_BENCH_NO_LIMIT")
                          ? "{\"ns\":\"t\",\"run\":\"r1\"}"
                          : "{\"ns\":\"t\",\"run\":\"r1\",\"limit\":100000}";
    double t = call_timed(db, "timeline", all) +
               call_timed(db, "timeline", "{\"ns\":\"t\",\"view\":\"summary\"}");
    remem_close(db);
    return t;
}

static double run_static_load(size_t n) {
    remem *db = open_mem();
    size_t cap = n * 48 + 64, len = 0;
    char *body = malloc(cap);
    len += (size_t)snprintf(body + len, cap - len, "{\"ns\":\"p\",\"file\":{");
    for (size_t i = 0; i < n; i++)
        len +=
            (size_t)snprintf(body + len, cap - len, "%s\"k%zu\":\"value %zu\"", i ? "," : "", i, i);
    snprintf(body + len, cap - len, "}}");
    /* into an empty namespace each time: the first run's memories are
     * cleared before the second */
    double best = 1e30;
    for (int r = 0; r < REPEAT; r++) {
        if (remem_clear(db, "p", NULL)) die(db, "clear");
        char *out = NULL;
        double t0 = scaling_now();
        if (remem_call(db, "static.load", body, strlen(body), &out)) die(db, "static.load");
        double t = scaling_now() - t0;
        remem_free(out);
        if (t < best) best = t;
    }
    free(body);
    remem_close(db);
    return best;
}

static remem *recall_db;
static size_t recall_base;

/* Each size in its own process (run_isolated) builds the same store of
 * 8 x base memories; only the candidates grow. */
static double run_recall(size_t n) {
    if (!recall_db) {
        recall_db = open_mem();
        size_t m = 8 * recall_base;
        rec *r = calloc(m, sizeof *r);
        for (size_t i = 0; i < m; i++) {
            r[i].kind = "observation";
            distinct_text(r[i].text, sizeof r[i].text, i);
        }
        write_all(recall_db, "r", r, m);
        free(r);
    }
    remem_query q;
    remem_query_init(&q);
    const char *ns[] = {"r"};
    q.namespaces = ns;
    q.n_namespaces = 1;
    q.text = "retry the socket client";
    q.k = 10;
    q.candidates = (int)n;
    q.no_touch = 1;
    double best = 1e30;
    for (int r = 0; r < REPEAT; r++) {
        remem_result *res = NULL;
        double t0 = scaling_now();
        if (remem_recall(recall_db, &q, &res)) die(recall_db, "recall");
        double t = scaling_now() - t0;
        remem_result_free(res);
        if (t < best) best = t;
    }
    return best;
}

static double run_prune(size_t n) {
    remem *db = open_mem();
    rec *r = calloc(n, sizeof *r);
    for (size_t i = 0; i < n; i++) {
        r[i].kind = "episode";
        distinct_text(r[i].text, sizeof r[i].text, i);
        snprintf(r[i].meta, sizeof r[i].meta,
                 "{\"taskID\":\"t%zu\",\"projectID\":\"p1\",\"language\":\"c\"}", i);
    }
    write_all(db, "e", r, n);
    free(r);
    double t = call_timed(db, "prune",
                          "{\"ns\":\"e\",\"dry_run\":true,\"retention_days\":0,"
                          "\"max_episodes_per_project\":0,\"similarity_threshold\":0.99,"
                          "\"strategy\":\"heuristic\",\"ids_limit\":0}");
    remem_close(db);
    return t;
}

static double run_summarize(size_t n) {
    double best = 1e30;
    for (int k = 0; k < REPEAT; k++) {
        remem *db = open_mem();
        rec *r = calloc(n, sizeof *r);
        for (size_t i = 0; i < n; i++) {
            r[i].kind = "observation";
            r[i].tier = "long";
            r[i].importance = (double)(i % 10) / 10.0;
            distinct_text(r[i].text, sizeof r[i].text, i);
        }
        write_all(db, "s", r, n);
        free(r);
        char args[160];
        snprintf(args, sizeof args, "{\"ns\":\"s\",\"count\":10,\"method\":\"extractive\"}");
        /* the first call loads the namespace's cache (the engine's, not
         * summarize's work); the second is timed */
        char *out = NULL;
        if (remem_call(db, "summarize", args, strlen(args), &out)) die(db, "summarize");
        remem_free(out);
        double t0 = scaling_now();
        if (remem_call(db, "summarize", args, strlen(args), &out)) die(db, "summarize");
        double t = scaling_now() - t0;
        remem_free(out);
        remem_close(db);
        if (t < best) best = t;
    }
    return best;
}

typedef struct bench_op {
    const char *name;
    size_t base;
    double (*run)(size_t n);
} bench_op;

int main(int argc, char **argv) {
    int quick = getenv("REMEM_BENCH_QUICK") != NULL;
    scaling_init();
    bench_op ops[] = {
        {"timeline", 4000, run_timeline},   {"static.load", 4000, run_static_load},
        {"recall", 5000, run_recall},       {"prune", 4000, run_prune},
        {"summarize", 2000, run_summarize},
    };
    const char *only = argc > 1 ? argv[1] : NULL;
    int bad = 0;
    double worst = 0;
    printf("%-12s %8s %10s %10s %10s %10s   %s\n", "operation", "base", "1x s", "2x s", "4x s",
           "8x s", "growth per doubling");
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        if (only && strcmp(only, ops[o].name)) continue;
        size_t base = quick ? ops[o].base / 2 : ops[o].base;
        recall_base = base;
        double t[4];
        int passes = scaling_sizes(ops[o].run, base, t);
        printf("%-12s %8zu %10.4f %10.4f %10.4f %10.4f  ", ops[o].name, base, t[0], t[1], t[2],
               t[3]);
        for (int k = 1; k < 4; k++) {
            double g = t[k] / (t[k - 1] > 0 ? t[k - 1] : 1e-9);
            if (g > worst) worst = g;
            if (g > MAX_RATIO) bad = 1;
            printf(" %5.2f%s", g, g > MAX_RATIO ? "!" : "");
        }
        /* the mean growth over the three doublings, (8x / 1x)^(1/3): less
         * noisy than any one step on a shared machine */
        printf("   mean %.2f  (%d pass%s)\n", cbrt(t[3] / (t[0] > 0 ? t[0] : 1e-9)), passes,
               passes == 1 ? "" : "es");
        fflush(stdout);
    }
    if (recall_db) remem_close(recall_db);
    printf("bench_scaling: largest growth per doubling %.2f (limit %.1f): %s\n", worst, MAX_RATIO,
           bad ? "FAIL" : "ok");
    return bad;
}
