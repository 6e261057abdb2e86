/*
 * bench_recall_api.c: the in-process side of bench/bench_serve.sh. The
 * server's overhead is the ratio of its recalls per second over HTTP to
 * the same recalls through include/remem.h in the same run, on the same
 * store, with the same queries; this program is that baseline, plus the
 * two chores the script needs around it (a fixed dataset, and checking
 * acknowledged ids after the soak).
 *
 *   bench_recall_api fill DB NS N            N memories into NS (batches of
 *                                             1,000; texts from a fixed
 *                                             vocabulary and seed)
 *   bench_recall_api queries N               N query texts, one per line
 *   bench_recall_api recall DB NS SECONDS THREADS QUERIES [PROFILE]
 *                                             recalls (k = 10, touch off)
 *                                             round-robin over QUERIES, one
 *                                             handle per thread; prints
 *                                             recalls/s, p50 and p99
 *   bench_recall_api verify DB NS IDS        every id listed in IDS is in NS
 *   bench_recall_api                         alone (as bench/run.sh runs it):
 *                                             a temporary 10,000-memory store,
 *                                             recall at 1 and 2 threads, both
 *                                             profiles; bench_serve.sh adds
 *                                             the HTTP side
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remem.h"

static const char *const vocabulary[] = {
    "kettle",   "cupboard",  "kitchen",  "garden",   "meeting",    "deadline", "report",
    "coffee",   "tea",       "train",    "station",  "ticket",     "doctor",   "appointment",
    "birthday", "present",   "sister",   "brother",  "project",    "budget",   "invoice",
    "client",   "server",    "database", "backup",   "password",   "laptop",   "charger",
    "window",   "door",      "key",      "car",      "bicycle",    "weather",  "rain",
    "umbrella", "lunch",     "dinner",   "recipe",   "oven",       "market",   "apples",
    "bread",    "milk",      "library",  "book",     "chapter",    "author",   "music",
    "concert",  "guitar",    "painting", "museum",   "holiday",    "beach",    "mountain",
    "hotel",    "flight",    "passport", "visa",     "bank",       "loan",     "rent",
    "landlord", "neighbour", "dog",      "cat",      "walk",       "park",     "river",
    "bridge",   "city",      "village",  "school",   "teacher",    "lesson",   "exam",
    "grade",    "friend",    "party",    "gift",     "phone",      "message",  "email",
    "calendar", "morning",   "evening",  "night",    "week",       "plan",     "idea",
    "problem",  "solution",  "bug",      "release",  "test",       "review",   "red",
    "blue",     "green",     "old",      "new",      "small",      "large",    "quiet",
    "busy",     "left",      "right",    "upstairs", "downstairs", "early",    "late",
    "broken",   "fixed",     "lost",     "found",    "bought",     "sold",     "visited",
    "called",   "wrote"};
#define N_WORDS (sizeof vocabulary / sizeof vocabulary[0])

static unsigned long long rng = 0x2545F4914F6CDD1DULL;
static size_t pick(size_t n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (size_t)(rng % n);
}

static void sentence(char *buf, size_t cap, int words) {
    size_t len = 0;
    buf[0] = 0;
    for (int w = 0; w < words && len + 1 < cap; w++)
        len +=
            (size_t)snprintf(buf + len, cap - len, "%s%s", w ? " " : "", vocabulary[pick(N_WORDS)]);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static remem *open_store(const char *path) {
    remem_options opt;
    remem_options_init(&opt);
    opt.embedder = "hash";
    remem *db = NULL;
    if (remem_open(path, &opt, &db) != REMEM_OK) {
        fprintf(stderr, "bench_recall_api: open %s: %s\n", path,
                db ? remem_errmsg(db) : "out of memory");
        remem_close(db);
        return NULL;
    }
    return db;
}

static int fill(const char *path, const char *ns, long n) {
    remem *db = open_store(path);
    if (!db) return 1;
    enum { BATCH = 1000 };
    static char texts[BATCH][200];
    static remem_memory ms[BATCH];
    double t0 = now_s();
    for (long done = 0; done < n;) {
        size_t b = n - done < BATCH ? (size_t)(n - done) : BATCH;
        for (size_t i = 0; i < b; i++) {
            char words[160];
            sentence(words, sizeof words, 8 + (int)pick(9));
            snprintf(texts[i], sizeof texts[i], "note %ld: %s", done + (long)i, words);
            remem_memory_init(&ms[i]);
            ms[i].ns = ns;
            ms[i].text = texts[i];
            ms[i].importance = (double)pick(100) / 100.0;
        }
        long bad = -1;
        if (remem_add_batch(db, ms, b, NULL, 0, &bad) != REMEM_OK) {
            fprintf(stderr, "bench_recall_api: add (index %ld): %s\n", bad, remem_errmsg(db));
            remem_close(db);
            return 1;
        }
        done += (long)b;
    }
    printf("filled %s with %ld memories in %.2f s\n", ns, n, now_s() - t0);
    remem_close(db);
    return 0;
}

typedef struct worker {
    const char *path, *ns, *profile;
    char **queries;
    size_t n_queries;
    double seconds;
    double *lat_ms; /* one per recall made */
    size_t n, cap;
    int failed;
    size_t first; /* which query this thread starts at */
} worker;

static void *run_recalls(void *arg) {
    worker *w = arg;
    remem *db = open_store(w->path);
    if (!db) {
        w->failed = 1;
        return NULL;
    }
    const char *nss[] = {w->ns};
    size_t qi = w->first;
    /* Warm the namespace's in-memory arrays before timing. */
    for (int i = 0; i < 20; i++) {
        remem_query q;
        remem_query_init(&q);
        q.text = w->queries[i % w->n_queries];
        q.namespaces = nss;
        q.n_namespaces = 1;
        q.k = 10;
        q.no_touch = 1;
        q.profile = w->profile;
        remem_result *r = NULL;
        remem_recall(db, &q, &r);
        remem_result_free(r);
    }
    double end = now_s() + w->seconds;
    for (double t = now_s(); t < end;) {
        remem_query q;
        remem_query_init(&q);
        q.text = w->queries[qi++ % w->n_queries];
        q.namespaces = nss;
        q.n_namespaces = 1;
        q.k = 10;
        q.no_touch = 1;
        q.profile = w->profile;
        remem_result *r = NULL;
        int rc = remem_recall(db, &q, &r);
        double t2 = now_s();
        if (rc != REMEM_OK || r->n == 0) {
            fprintf(stderr, "bench_recall_api: recall: %s\n", rc ? remem_errmsg(db) : "no hits");
            remem_result_free(r);
            w->failed = 1;
            break;
        }
        remem_result_free(r);
        if (w->n == w->cap) {
            w->cap = w->cap ? 2 * w->cap : 65536;
            w->lat_ms = realloc(w->lat_ms, w->cap * sizeof *w->lat_ms);
        }
        w->lat_ms[w->n++] = (t2 - t) * 1e3;
        t = t2;
    }
    remem_close(db);
    return NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static char **read_lines(const char *path, size_t *n) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char **lines = NULL, *buf = NULL;
    size_t cap = 0;
    *n = 0;
    /* getline: a line may be a query of megabytes (the long-query figure) */
    while (getline(&buf, &cap, f) > 0) {
        buf[strcspn(buf, "\r\n")] = 0;
        if (!*buf) continue;
        lines = realloc(lines, (*n + 1) * sizeof *lines);
        lines[(*n)++] = strdup(buf);
    }
    free(buf);
    fclose(f);
    return lines;
}

static int recall(const char *path, const char *ns, double seconds, int threads,
                  const char *queries_path, const char *profile) {
    size_t nq = 0;
    char **queries = read_lines(queries_path, &nq);
    if (!nq) {
        fprintf(stderr, "bench_recall_api: no queries in %s\n", queries_path);
        return 1;
    }
    worker *ws = calloc((size_t)threads, sizeof *ws);
    pthread_t *ts = calloc((size_t)threads, sizeof *ts);
    for (int i = 0; i < threads; i++) {
        ws[i] = (worker){.path = path,
                         .ns = ns,
                         .profile = profile,
                         .queries = queries,
                         .n_queries = nq,
                         .seconds = seconds,
                         .first = (size_t)i * 7};
        pthread_create(&ts[i], NULL, run_recalls, &ws[i]);
    }
    size_t total = 0;
    int failed = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(ts[i], NULL);
        total += ws[i].n;
        failed |= ws[i].failed;
    }
    double *all = malloc((total ? total : 1) * sizeof *all);
    size_t k = 0;
    for (int i = 0; i < threads; i++) {
        memcpy(all + k, ws[i].lat_ms, ws[i].n * sizeof *all);
        k += ws[i].n;
        free(ws[i].lat_ms);
    }
    qsort(all, total, sizeof *all, cmp_double);
    if (total)
        printf("api threads=%d recalls=%zu recalls_per_s=%.0f p50_ms=%.3f "
               "p99_ms=%.3f\n",
               threads, total, total / seconds, all[total / 2], all[(size_t)(total * 0.99)]);
    free(all);
    free(ws);
    free(ts);
    for (size_t i = 0; i < nq; i++) free(queries[i]);
    free(queries);
    return failed || !total;
}

static int verify(const char *path, const char *ns, const char *ids_path) {
    size_t n = 0;
    char **ids = read_lines(ids_path, &n);
    remem *db = open_store(path);
    if (!db) return 1;
    size_t missing = 0;
    for (size_t i = 0; i < n; i++) {
        remem_record *rec = NULL;
        if (remem_get(db, ns, ids[i], &rec) != REMEM_OK) {
            if (missing++ < 5) fprintf(stderr, "missing: %s\n", ids[i]);
        }
        remem_record_free(rec);
        free(ids[i]);
    }
    free(ids);
    remem_close(db);
    printf("verify ids=%zu missing=%zu\n", n, missing);
    return missing != 0;
}

/* The C API figures on their own, in a temporary folder. */
static int standalone(void) {
    char dir[] = "/tmp/remem-bench-XXXXXX", db[64], queries[64];
    if (!mkdtemp(dir)) return 1;
    snprintf(db, sizeof db, "%s/recall.db", dir);
    snprintf(queries, sizeof queries, "%s/queries.txt", dir);
    int rc = fill(db, "bench", 10000);
    FILE *f = fopen(queries, "w");
    rng = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; f && i < 64; i++) {
        char q[120];
        sentence(q, sizeof q, 3 + (int)pick(3));
        fprintf(f, "%s\n", q);
    }
    if (f) fclose(f);
    double secs = getenv("REMEM_BENCH_QUICK") ? 1 : 3;
    printf("recall through the C API, 10,000 memories, k=10, touch off "
           "(the HTTP side: bench/bench_serve.sh)\n");
    const char *profiles[] = {"stream", "default"};
    for (int p = 0; p < 2 && !rc; p++)
        for (int t = 1; t <= 2 && !rc; t++) {
            printf("  %-8s ", profiles[p]);
            fflush(stdout);
            rc = recall(db, "bench", secs, t, queries, profiles[p]);
        }
    char side[96];
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(side, sizeof side, "%s%s", db, suffix[i]);
        unlink(side);
    }
    unlink(queries);
    rmdir(dir);
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 1) return standalone();
    if (argc >= 5 && !strcmp(argv[1], "fill")) return fill(argv[2], argv[3], atol(argv[4]));
    if (argc >= 3 && !strcmp(argv[1], "queries")) {
        rng = 0x9E3779B97F4A7C15ULL; /* not the fill's sequence */
        for (long i = atol(argv[2]); i > 0; i--) {
            char q[120];
            sentence(q, sizeof q, 3 + (int)pick(3));
            printf("%s\n", q);
        }
        return 0;
    }
    if (argc >= 7 && !strcmp(argv[1], "recall"))
        return recall(argv[2], argv[3], atof(argv[4]), atoi(argv[5]), argv[6],
                      argc > 7 ? argv[7] : NULL);
    if (argc >= 5 && !strcmp(argv[1], "verify")) return verify(argv[2], argv[3], argv[4]);
    fprintf(stderr, "usage: bench_recall_api fill DB NS N | queries N |\n"
                    "       recall DB NS SECONDS THREADS QUERIES [PROFILE] |\n"
                    "       verify DB NS IDS\n");
    return 2;
}
