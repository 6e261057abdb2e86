/*
 * bench_ingest.c: how fast a conversation goes in without an LLM, the
 * "ingest" operation (each turn kept verbatim, known turns skipped, exact
 * duplicates folded) against the import path (remem_parse_line on each
 * JSONL line, then remem_add_batch, what `remem import` does) over the
 * same turns, side by side in one run, in batches of 1,000 messages.
 *
 * Data: every turn of the development LoCoMo conversations
 * (../shared/bench/locomo/locomo-dev.json from the repository's root, or
 * the path given), repeated with a round number in the text until N turns
 * (default 100,000), so the texts read like a chat (natural sentences, a
 * real vocabulary) and none is an exact duplicate. Nothing of LoCoMo is
 * kept in the repository. Each path writes a fresh SQLite store in /tmp
 * (hash embedder); each is run ROUNDS times and the median is printed,
 * with messages per second and the ratio ingest / import, by the clock
 * and by the process's CPU time (user and system: what a busy shared
 * machine takes from the clock figure, the CPU figure keeps).
 *
 *   build/bench/bench_ingest [LOCOMO_JSON [N]]    (REMEM_BENCH_QUICK=1: 20,000 turns)
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remem.h"

#define BATCH  1000
#define ROUNDS 3
#define MAX_ROUNDS 9

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The process's CPU time so far (user + system, every thread). */
static double cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double last_cpu; /* the CPU time of the last run, ms */
static double last_wchar, last_wbytes; /* bytes the last run wrote */
static double last_close; /* the close of the last run (its last checkpoint), ms */

/* The process's bytes written so far (/proc/self/io): wchar, what write
 * calls handed the kernel, and write_bytes, what it sent to the disk. -1
 * when the file is not there. */
static void io_bytes(double *wchar, double *wbytes) {
    *wchar = *wbytes = -1;
    FILE *f = fopen("/proc/self/io", "r");
    if (!f) return;
    char key[64];
    long long v;
    while (fscanf(f, "%63[^:]: %lld\n", key, &v) == 2) {
        if (!strcmp(key, "wchar")) *wchar = (double)v;
        if (!strcmp(key, "write_bytes")) *wbytes = (double)v;
    }
    fclose(f);
}

/* Start and end of a run's measures. */
static double run_t0, run_c0, run_w0, run_b0;
static void run_start(void) {
    io_bytes(&run_w0, &run_b0);
    run_t0 = now_ms(), run_c0 = cpu_ms();
}
static double run_end(remem *db) {
    double ms = now_ms() - run_t0;
    last_cpu = cpu_ms() - run_c0;
    remem_close(db); /* its last checkpoint: counted apart, and in the bytes */
    last_close = now_ms() - run_t0 - ms;
    double w, b;
    io_bytes(&w, &b);
    last_wchar = w - run_w0, last_wbytes = b - run_b0;
    return ms;
}

typedef struct turn {
    const char *speaker;
    char *text;
} turn;

static turn *turns;
static size_t n_turns;
static json_t *file_root;

/* The dev turns, repeated with "(round R)" until n. */
static int load(const char *path, size_t n) {
    json_error_t err;
    file_root = json_load_file(path, 0, &err);
    if (!json_is_array(file_root)) {
        fprintf(stderr, "bench_ingest: cannot read %s: %s\n", path, err.text);
        return -1;
    }
    turns = calloc(n, sizeof *turns);
    for (int round = 0; n_turns < n; round++) {
        size_t before = n_turns, i;
        json_t *conv;
        json_array_foreach(file_root, i, conv) {
            const char *key;
            json_t *session;
            json_object_foreach(json_object_get(conv, "conversation"), key, session) {
                size_t j;
                json_t *t;
                json_array_foreach(session, j, t) {
                    const char *who = json_string_value(json_object_get(t, "speaker"));
                    const char *text = json_string_value(json_object_get(t, "text"));
                    if (!who || !text || n_turns == n) continue;
                    size_t len = strlen(text) + 32;
                    turns[n_turns].speaker = who;
                    turns[n_turns].text = malloc(len);
                    snprintf(turns[n_turns++].text, len, "%s (round %d)", text, round);
                }
            }
        }
        if (n_turns == before) return -1;
    }
    return 0;
}

static remem *open_fresh(const char *path) {
    char wal[300];
    unlink(path);
    snprintf(wal, sizeof wal, "%s-wal", path), unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", path), unlink(wal);
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    if (remem_open(path, &o, &db) != REMEM_OK) {
        fprintf(stderr, "bench_ingest: %s\n", remem_errmsg(db));
        exit(1);
    }
    return db;
}

static void die(remem *db, const char *what) {
    fprintf(stderr, "bench_ingest: %s: %s\n", what, remem_errmsg(db));
    exit(1);
}

/* ingest in batches: the arguments built as JSON text, as a client sends them. */
static double run_ingest(const char *path) {
    remem *db = open_fresh(path);
    run_start();
    for (size_t at = 0; at < n_turns; at += BATCH) {
        json_t *msgs = json_array();
        for (size_t i = at; i < n_turns && i < at + BATCH; i++)
            json_array_append_new(msgs, json_pack("{s:s, s:s, s:s, s:I}", "role", "user", "name",
                                                  turns[i].speaker, "content", turns[i].text,
                                                  "created_at", (json_int_t)(1683554160000 + i)));
        json_t *args = json_pack("{s:s, s:o, s:s}", "ns", "bench", "messages", msgs, "extract",
                                 "none");
        char *text = json_dumps(args, JSON_COMPACT), *out = NULL;
        json_decref(args);
        if (remem_call(db, "ingest", text, strlen(text), &out)) die(db, "ingest");
        free(text);
        remem_free(out);
    }
    return run_end(db);
}

/* import: a JSONL line per turn, parsed, then added in batches. */
static double run_import(const char *path) {
    remem *db = open_fresh(path);
    run_start();
    remem_memory ms[BATCH];
    remem_line *holders[BATCH];
    for (size_t at = 0; at < n_turns; at += BATCH) {
        size_t k = 0;
        for (size_t i = at; i < n_turns && i < at + BATCH; i++, k++) {
            json_t *o = json_pack("{s:I}", "created_at", (json_int_t)(1683554160000 + i));
            size_t len = strlen(turns[i].speaker) + strlen(turns[i].text) + 3;
            char *t = malloc(len);
            snprintf(t, len, "%s: %s", turns[i].speaker, turns[i].text);
            json_object_set_new(o, "text", json_string(t));
            free(t);
            char *line = json_dumps(o, JSON_COMPACT);
            json_decref(o);
            remem_memory_init(&ms[k]);
            if (remem_parse_line(db, line, strlen(line), "bench", &ms[k], &holders[k]))
                die(db, "parse line");
            free(line);
        }
        long bad;
        if (remem_add_batch(db, ms, k, NULL, 0, &bad)) die(db, "add batch");
        for (size_t i = 0; i < k; i++) remem_free_line(holders[i]);
    }
    return run_end(db);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct run {
    double ms, cpu, close, wchar, wbytes;
} run;

/* The median of field f over n runs. */
static double median(const run *r, int n, size_t off) {
    double v[MAX_ROUNDS];
    for (int i = 0; i < n; i++) v[i] = *(const double *)((const char *)&r[i] + off);
    qsort(v, n, sizeof *v, cmp);
    return v[n / 2];
}
#define MED(r, n, f) median(r, n, offsetof(run, f))

static void report(const char *what, const run *r, int n) {
    double ms = MED(r, n, ms), cpu = MED(r, n, cpu);
    printf("  %-16s %8.0f ms  %8.0f messages/s  CPU %6.0f ms (%.0f messages per CPU second)"
           "  close %4.0f ms\n",
           what, ms, n_turns / ms * 1e3, cpu, n_turns / cpu * 1e3, MED(r, n, close));
    printf("  %-16s written: %.0f bytes per message to the files (wchar), %.0f to the disk "
           "(write_bytes)\n",
           "", MED(r, n, wchar) / n_turns, MED(r, n, wbytes) / n_turns);
}

static run take(double ms) {
    return (run){ms, last_cpu, last_close, last_wchar, last_wbytes};
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "../shared/bench/locomo/locomo-dev.json";
    size_t n = argc > 2 ? (size_t)atol(argv[2]) : getenv("REMEM_BENCH_QUICK") ? 20000 : 100000;
    const char *rv = getenv("REMEM_BENCH_ROUNDS"), *only = getenv("REMEM_BENCH_ONLY");
    int rounds = rv && atoi(rv) > 0 ? atoi(rv) : ROUNDS;
    if (rounds > MAX_ROUNDS) rounds = MAX_ROUNDS;
    int do_ingest = !only || !strcmp(only, "ingest"), do_import = !only || !strcmp(only, "import");
    if (access(path, R_OK) != 0) {
        printf("bench_ingest: SKIP: %s is not here (the LoCoMo development half)\n", path);
        return 0;
    }
    if (load(path, n)) return 1;
    char store[64];
    snprintf(store, sizeof store, "/tmp/remem-bench-ingest-%d.db", (int)getpid());
    run a[MAX_ROUNDS], b[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) { /* interleaved: the machine's noise hits both */
        if (do_ingest) a[r] = take(run_ingest(store));
        if (do_import) b[r] = take(run_import(store));
    }
    printf("bench_ingest: %zu turns in batches of %d, medians of %d rounds, SQLite, hash "
           "embedder\n",
           n_turns, BATCH, rounds);
    if (do_ingest) report("ingest (no LLM)", a, rounds);
    if (do_import) report("import", b, rounds);
    if (do_ingest && do_import)
        printf("  ingest / import: time %.2fx, CPU time %.2fx\n", MED(a, rounds, ms) / MED(b, rounds, ms),
               MED(a, rounds, cpu) / MED(b, rounds, cpu));
    char side[80];
    if (getenv("REMEM_BENCH_KEEP")) { /* the last run's store, to look into */
        printf("  kept %s\n", store);
        goto out;
    }
    unlink(store);
    snprintf(side, sizeof side, "%s-wal", store), unlink(side);
    snprintf(side, sizeof side, "%s-shm", store), unlink(side);
out:
    for (size_t i = 0; i < n_turns; i++) free(turns[i].text);
    free(turns);
    json_decref(file_root);
    return 0;
}
