/*
 * bench_scaling_lessons.c: how the lesson operations' time grows with what
 * they work over (issue 21: every operation near-linear, no growth ratio
 * above 2.5 per doubling). Each operation is timed at 1x, 2x, 4x and 8x a
 * base size, on a fresh store in memory each time, and the ratio to the
 * size before is printed:
 *   lesson.add     one add naming SIZE fingerprints, into a namespace
 *                  holding SIZE error events with those fingerprints
 *   lesson.hints   one pre-run retrieval (task text, k 3) over SIZE
 *                  lessons of the domain, 16 of them pairwise in conflict
 *   lesson.event   one event of a run that already has SIZE events
 * The namespace is made with remem_add_batch (not timed); each figure is
 * the best of 5 calls after one untimed call (the namespace's cache
 * loaded), with the hash embedder, and the best of the processes
 * scaling.h runs per size (CPU seconds, sizes interleaved).
 *
 *   bench_scaling_lessons [BASE]   BASE (default 2000; REMEM_BENCH_QUICK:
 *                                  500) is the 1x size
 * Prints "op size time ratio" lines; exits 1 when a ratio is above 2.5.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remem.h"
#include "scaling.h"

#define MAX_RATIO   SCALING_MAX_RATIO
#define CONFLICTING 16

static remem *open_mem(void) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    if (remem_open(":memory:", &o, &db)) {
        fprintf(stderr, "open: %s\n", remem_errmsg(db));
        exit(2);
    }
    return db;
}

/* n memories of kind in ns "b": id PREFIX<i>, text and metadata by fn. */
typedef void (*make_fn)(size_t i, size_t n, char *text, size_t tcap, json_t **meta);

static void fill(remem *db, const char *kind, const char *prefix, size_t n, make_fn fn) {
    remem_memory *m = calloc(n, sizeof *m);
    char **own = calloc(3 * n, sizeof *own);
    for (size_t i = 0; i < n; i++) {
        char text[200], id[64];
        json_t *meta = NULL;
        fn(i, n, text, sizeof text, &meta);
        snprintf(id, sizeof id, "%s%zu", prefix, i);
        remem_memory_init(&m[i]);
        m[i].ns = "b";
        m[i].kind = kind;
        m[i].id = own[3 * i] = strdup(id);
        m[i].text = own[3 * i + 1] = strdup(text);
        m[i].metadata = own[3 * i + 2] = json_dumps(meta, JSON_COMPACT);
        json_decref(meta);
    }
    if (remem_add_batch(db, m, n, NULL, 0, NULL)) {
        fprintf(stderr, "fill: %s\n", remem_errmsg(db));
        exit(2);
    }
    for (size_t i = 0; i < 3 * n; i++) free(own[i]);
    free(own);
    free(m);
}

static void make_event(size_t i, size_t n, char *text, size_t tcap, json_t **meta) {
    (void)n;
    char fp[32];
    snprintf(fp, sizeof fp, "fp_%016zx", i);
    snprintf(text, tcap, "no such table: orders_%zu", i);
    *meta = json_pack("{ss ss ss ss s[sss]}", "fingerprint", fp, "run", "r1", "channel",
                      "hard_failure", "domain_key", "sqlite", "tags", "tool:run_sqlite",
                      "channel:hard_failure", "domain:sqlite");
}

static void make_lesson(size_t i, size_t n, char *text, size_t tcap, json_t **meta) {
    char id[64], other[64];
    snprintf(id, sizeof id, "lsn_%zu", i);
    /* The first CONFLICTING lessons are pairwise in conflict: a fixed
     * number, so that every size resolves (and writes) the same losses. */
    snprintf(other, sizeof other, "lsn_%zu", i < CONFLICTING && (i ^ 1) < n ? i ^ 1 : i);
    snprintf(text, tcap, "rule %zu: quote the identifier of table %zu before the query", i, i % 97);
    *meta = json_pack("{ss ss ss ss s[] s[s] s[s] si si si si}", "lesson_id", id, "status",
                      "candidate", "rule_text", text, "domain_key", "sqlite", "fingerprints",
                      "tags", "domain:sqlite", "conflicts_with", other, "retrieval_count", 0,
                      "helpful_count", 0, "harmful_count", 0, "conflict_losses", 0);
}

static void call(remem *db, const char *op, json_t *args) {
    char *a = json_dumps(args, JSON_COMPACT), *out = NULL;
    if (remem_call(db, op, a, strlen(a), &out)) {
        fprintf(stderr, "%s: %s\n", op, remem_errmsg(db));
        exit(2);
    }
    remem_free(out);
    free(a);
}

/* Best of 5 calls of op after an untimed one. */
static double best_of(remem *db, const char *op, json_t *args) {
    call(db, op, args);
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        double t0 = scaling_now();
        call(db, op, args);
        double t = scaling_now() - t0;
        if (t < best) best = t;
    }
    return best;
}

static double time_add(size_t n) {
    remem *db = open_mem();
    fill(db, "error_event", "evt_", n, make_event);
    json_t *fps = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(fps, json_sprintf("fp_%016zx", i));
    json_t *args = json_pack("{ss ss ss so}", "ns", "b", "domain", "sqlite", "rule",
                             "quote identifiers that clash with keywords", "fingerprint", fps);
    double t = best_of(db, "lesson.add", args);
    json_decref(args);
    remem_close(db);
    return t;
}

static double time_hints(size_t n) {
    remem *db = open_mem();
    fill(db, "lesson", "lsn_", n, make_lesson);
    json_t *args = json_pack("{ss ss ss si}", "ns", "b", "domain", "sqlite", "task",
                             "query the orders table", "k", 3);
    double t = best_of(db, "lesson.hints", args);
    json_decref(args);
    remem_close(db);
    return t;
}

static double time_event(size_t n) {
    remem *db = open_mem();
    fill(db, "error_event", "evt_", n, make_event);
    json_t *args = json_pack("{ss ss ss ss ss ss}", "ns", "b", "domain", "sqlite", "tool",
                             "run_sqlite", "channel", "hard_failure", "error",
                             "no such table: orders_2023", "run", "r1");
    double t = best_of(db, "lesson.event", args);
    json_decref(args);
    remem_close(db);
    return t;
}

int main(int argc, char **argv) {
    scaling_init();
    size_t base = getenv("REMEM_BENCH_QUICK") ? 500 : 2000;
    if (argc > 1) base = (size_t)strtoul(argv[1], NULL, 10);
    const char *names[] = {"lesson.add", "lesson.hints", "lesson.event"};
    double (*fns[])(size_t) = {time_add, time_hints, time_event};
    double worst = 0;
    printf("%-14s %8s %10s %6s\n", "op", "size", "time", "ratio");
    for (int o = 0; o < 3; o++) {
        double t[4];
        int passes = scaling_sizes(fns[o], base, t);
        for (int k = 0; k < 4; k++) {
            if (k) {
                double g = t[k] / (t[k - 1] > 0 ? t[k - 1] : 1e-9);
                printf("%-14s %8zu %9.4fs %6.2f\n", names[o], base << k, t[k], g);
                if (g > worst) worst = g;
            } else {
                printf("%-14s %8zu %9.4fs %6s   (%d pass%s)\n", names[o], base, t[k], "-", passes,
                       passes == 1 ? "" : "es");
            }
        }
        fflush(stdout);
    }
    printf("largest ratio per doubling: %.2f (limit %.1f)\n", worst, MAX_RATIO);
    return worst > MAX_RATIO ? 1 : 0;
}
