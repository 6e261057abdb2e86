/*
 * bench_coldload.c: the cold load of a namespace, by a full scan of the
 * store against the adoption of its snapshot (src/engine/cache_snap.c),
 * side by side in one run, at 10,000 and 100,000 memories.
 *
 * Data: memories composed at run time from the development LoCoMo turns
 * (../shared/bench/locomo/locomo-dev.json from the repository's root, or
 * the path given): each memory is two turns, "Speaker: text" each, picked
 * by a fixed-seed generator, so the texts read like a chat memory store
 * (natural sentences, a real vocabulary). Nothing of LoCoMo is kept in
 * the repository. Stores are made once in DIR (default /tmp) and reused
 * (remem-coldload-N.db, hash embedder); delete them to start over.
 *
 * Cold means a fresh handle (remem_open) whose first recall loads the
 * namespace; the files are in the page cache (each load is run once
 * before the measured ones). For each size it prints, as medians of
 * ROUNDS loads: the load alone (remem_stats "load_ms"), the first recall
 * (open excluded, load included), the ratio scan / snapshot, the time a
 * handle's close takes to write the snapshot, and the snapshot's size.
 *
 *   build/bench/bench_coldload [LOCOMO_JSON [DIR]]    (REMEM_BENCH_QUICK=1: 10k only)
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "remem.h"

#define NS     "coldload"
#define ROUNDS 5

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static uint64_t rng = 20261123;
static uint64_t next_rand(void) {
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static char **turns;
static size_t n_turns;

/* Every turn of every session of every conversation, as "Speaker: text". */
static int read_turns(const char *path) {
    json_error_t err;
    json_t *all = json_load_file(path, 0, &err);
    if (!json_is_array(all)) {
        fprintf(stderr, "bench_coldload: cannot read %s: %s\n", path, err.text);
        return -1;
    }
    size_t cap = 0, i;
    json_t *conv;
    json_array_foreach(all, i, conv) {
        const char *key;
        json_t *session;
        json_object_foreach(json_object_get(conv, "conversation"), key, session) {
            if (!json_is_array(session)) continue;
            size_t j;
            json_t *turn;
            json_array_foreach(session, j, turn) {
                const char *who = json_string_value(json_object_get(turn, "speaker"));
                const char *text = json_string_value(json_object_get(turn, "text"));
                if (!who || !text) continue;
                if (n_turns == cap) {
                    cap = cap ? cap * 2 : 1024;
                    turns = realloc(turns, cap * sizeof *turns);
                }
                size_t len = strlen(who) + strlen(text) + 3;
                turns[n_turns] = malloc(len);
                snprintf(turns[n_turns++], len, "%s: %s", who, text);
            }
        }
    }
    json_decref(all);
    return n_turns ? 0 : -1;
}

static remem *open_store(const char *path) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    if (remem_open(path, &o, &db) != REMEM_OK) {
        fprintf(stderr, "bench_coldload: %s\n", remem_errmsg(db));
        exit(1);
    }
    return db;
}

static int64_t ns_rows(remem *db) {
    char *st = NULL;
    if (remem_stats(db, NS, &st) != REMEM_OK) return -1;
    json_t *o = json_loads(st, 0, NULL);
    free(st);
    /* Composed texts repeat now and then: an exact repeat is folded into
     * its first copy, so memories + folded is what was added. */
    int64_t n = json_integer_value(json_object_get(o, "memories")) +
                json_integer_value(json_object_get(o, "duplicates_folded"));
    json_decref(o);
    return n;
}

/* The store of n composed memories (made when missing or of another size). */
static void make_store(const char *path, size_t n) {
    remem *db = open_store(path);
    int64_t have = ns_rows(db);
    if (have == (int64_t)n) {
        remem_close(db);
        return;
    }
    remem_close(db);
    char side[600];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "rm -rf '%s-snap'", path);
    if (system(side)) return;
    fprintf(stderr, "  making %s (%zu memories)...\n", path, n);
    db = open_store(path);
    enum { BATCH = 2000 };
    remem_memory *ms = calloc(BATCH, sizeof *ms);
    char(*texts)[1024] = malloc(BATCH * sizeof *texts);
    for (size_t done = 0; done < n;) {
        size_t b = n - done < BATCH ? n - done : BATCH;
        for (size_t i = 0; i < b; i++) {
            const char *a = turns[next_rand() % n_turns], *c = turns[next_rand() % n_turns];
            snprintf(texts[i], sizeof texts[i], "%s %s", a, c);
            remem_memory_init(&ms[i]);
            ms[i].ns = NS;
            ms[i].text = texts[i];
            ms[i].created_at = 1700000000000LL + (int64_t)(done + i) * 60000;
        }
        if (remem_add_batch(db, ms, b, NULL, 0, NULL) != REMEM_OK) {
            fprintf(stderr, "bench_coldload: %s\n", remem_errmsg(db));
            exit(1);
        }
        done += b;
    }
    free(ms);
    free(texts);
    remem_close(db);
}

typedef struct load_figures {
    double load_ms, first_ms;
    int from_snapshot;
} load_figures;

/* A fresh handle's first recall; what the stats say of its load. */
static load_figures cold_load(const char *path, int snapshots, double *close_ms) {
    if (snapshots)
        unsetenv("REMEM_SNAPSHOTS");
    else
        setenv("REMEM_SNAPSHOTS", "0", 1);
    remem *db = open_store(path);
    remem_query q;
    remem_query_init(&q);
    const char *ns[] = {NS};
    q.namespaces = ns;
    q.n_namespaces = 1;
    q.text = "what did Caroline say about the adoption agency and her painting";
    q.k = 10;
    q.no_touch = 1;
    remem_result *r = NULL;
    double t0 = now_ms();
    if (remem_recall(db, &q, &r) != REMEM_OK) {
        fprintf(stderr, "bench_coldload: %s\n", remem_errmsg(db));
        exit(1);
    }
    load_figures f = {.first_ms = now_ms() - t0};
    remem_result_free(r);
    char *st = NULL;
    if (remem_stats(db, NS, &st) == REMEM_OK) {
        json_t *o = json_loads(st, 0, NULL);
        json_t *cache = json_object_get(o, "cache");
        f.load_ms = json_number_value(json_object_get(cache, "load_ms"));
        f.from_snapshot =
            strcmp(json_string_value(json_object_get(cache, "source")) ?: "", "snapshot") == 0;
        json_decref(o);
        free(st);
    }
    t0 = now_ms();
    remem_close(db);
    if (close_ms) *close_ms = now_ms() - t0;
    unsetenv("REMEM_SNAPSHOTS");
    return f;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void run_size(const char *dir, size_t n) {
    char path[512], snap[700];
    snprintf(path, sizeof path, "%s/remem-coldload-%zu.db", dir, n);
    make_store(path, n);
    snprintf(snap, sizeof snap, "%s-snap", path);
    /* Scan loads (snapshots off: none read, none written). */
    double scan_load[ROUNDS], scan_first[ROUNDS], snap_load[ROUNDS], snap_first[ROUNDS];
    cold_load(path, 0, NULL); /* the store's pages into the page cache */
    for (int r = 0; r < ROUNDS; r++) {
        load_figures f = cold_load(path, 0, NULL);
        scan_load[r] = f.load_ms;
        scan_first[r] = f.first_ms;
    }
    /* The snapshot: none, then a scan whose close writes it. */
    char cmd[800];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", snap);
    if (system(cmd)) return;
    double write_ms = 0;
    cold_load(path, 1, &write_ms);
    long long bytes = 0;
    snprintf(cmd, sizeof cmd, "du -sb '%s' 2>/dev/null", snap);
    FILE *du = popen(cmd, "r");
    if (du) {
        if (fscanf(du, "%lld", &bytes) != 1) bytes = 0;
        pclose(du);
    }
    cold_load(path, 1, NULL); /* the snapshot's pages into the page cache */
    int all_snap = 1;
    for (int r = 0; r < ROUNDS; r++) {
        load_figures f = cold_load(path, 1, NULL);
        snap_load[r] = f.load_ms;
        snap_first[r] = f.first_ms;
        all_snap &= f.from_snapshot;
    }
    double sl = median(scan_load, ROUNDS), sf = median(scan_first, ROUNDS);
    double pl = median(snap_load, ROUNDS), pf = median(snap_first, ROUNDS);
    printf("%7zu  %9.1f  %9.1f  %9.1f  %9.1f  %6.1fx  %6.1fx  %8.1f  %7.1f%s\n", n, sl, sf, pl, pf,
           sl / pl, sf / pf, write_ms, (double)bytes / 1e6,
           all_snap ? "" : "  (some loads did not use the snapshot!)");
    fflush(stdout);
}

int main(int argc, char **argv) {
    const char *json = argc > 1 ? argv[1] : "../shared/bench/locomo/locomo-dev.json";
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    if (read_turns(json)) {
        fprintf(stderr, "bench_coldload: no LoCoMo turns (give the path of locomo-dev.json)\n");
        return 77;
    }
    fprintf(stderr, "bench_coldload: %zu LoCoMo turns from %s, %d rounds each, medians\n", n_turns,
            json, ROUNDS);
    printf("   rows    scan load  scan 1st   snap load  snap 1st   load    1st    "
           "write ms   snap MB\n");
    printf("             ms         ms         ms         ms      ratio   ratio\n");
    run_size(dir, 10000);
    if (!getenv("REMEM_BENCH_QUICK")) run_size(dir, 100000);
    return 0;
}
