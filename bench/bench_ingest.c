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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remem.h"

#define BATCH  1000
#define ROUNDS 3

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
    double t0 = now_ms(), c0 = cpu_ms();
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
    double ms = now_ms() - t0;
    last_cpu = cpu_ms() - c0;
    remem_close(db);
    return ms;
}

/* import: a JSONL line per turn, parsed, then added in batches. */
static double run_import(const char *path) {
    remem *db = open_fresh(path);
    double t0 = now_ms(), c0 = cpu_ms();
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
    double ms_ = now_ms() - t0;
    last_cpu = cpu_ms() - c0;
    remem_close(db);
    return ms_;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "../shared/bench/locomo/locomo-dev.json";
    size_t n = argc > 2 ? (size_t)atol(argv[2]) : getenv("REMEM_BENCH_QUICK") ? 20000 : 100000;
    if (access(path, R_OK) != 0) {
        printf("bench_ingest: SKIP: %s is not here (the LoCoMo development half)\n", path);
        return 0;
    }
    if (load(path, n)) return 1;
    char store[64];
    snprintf(store, sizeof store, "/tmp/remem-bench-ingest-%d.db", (int)getpid());
    double a[ROUNDS], b[ROUNDS], ca[ROUNDS], cb[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) { /* interleaved: the machine's noise hits both */
        a[r] = run_ingest(store);
        ca[r] = last_cpu;
        b[r] = run_import(store);
        cb[r] = last_cpu;
    }
    qsort(a, ROUNDS, sizeof *a, cmp);
    qsort(b, ROUNDS, sizeof *b, cmp);
    qsort(ca, ROUNDS, sizeof *ca, cmp);
    qsort(cb, ROUNDS, sizeof *cb, cmp);
    double ia = a[ROUNDS / 2], ib = b[ROUNDS / 2], cia = ca[ROUNDS / 2], cib = cb[ROUNDS / 2];
    printf("bench_ingest: %zu turns in batches of %d, medians of %d rounds, SQLite, hash "
           "embedder\n",
           n_turns, BATCH, ROUNDS);
    printf("  ingest (no LLM)  %8.0f ms  %8.0f messages/s\n", ia, n_turns / ia * 1e3);
    printf("  import           %8.0f ms  %8.0f messages/s\n", ib, n_turns / ib * 1e3);
    printf("  ingest / import time: %.2fx\n", ia / ib);
    printf("  CPU time: ingest %.0f ms (%.0f messages per CPU second), import %.0f ms (%.0f); "
           "ingest / import %.2fx\n",
           cia, n_turns / cia * 1e3, cib, n_turns / cib * 1e3, cia / cib);
    char side[80];
    unlink(store);
    snprintf(side, sizeof side, "%s-wal", store), unlink(side);
    snprintf(side, sizeof side, "%s-shm", store), unlink(side);
    for (size_t i = 0; i < n_turns; i++) free(turns[i].text);
    free(turns);
    json_decref(file_root);
    return 0;
}
