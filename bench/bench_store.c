/*
 * bench_store.c: one store against another in the same run, through
 * include/remem.h, e.g. SQLite next to PostgreSQL (bench/store_compare.sh
 * starts a throwaway PostgreSQL and passes both).
 *
 *   single   adds of one memory each (one transaction each)
 *   batch    adds in batches of 1,000 (one transaction each)
 *   cold     a new handle's first recall on a namespace of N memories:
 *            the whole namespace read from the store into the cache
 *   recall   p50/p99 of `default` recalls (vector + lexical lanes), k = 10,
 *            on the warm handle, with touches on (PostgreSQL batches them)
 *
 * Memories are synthetic sentences over a small vocabulary with the hash
 * embedder (384 dimensions), so the figures are the store's and the
 * engine's, not an embedder's. Each URI must name an empty store.
 *   bench_store [--n 100000] [--single 2000] NAME=URI [NAME=URI ...]
 * Without a URI it says so and exits 0 (bench/run.sh runs it bare).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "remem.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *words[] = {
    "deploy",  "kettle", "garden", "report", "tuesday", "budget", "river",  "meeting",
    "invoice", "python", "server", "coffee", "train",   "berlin", "piano",  "holiday",
    "doctor",  "bike",   "rent",   "backup", "cat",     "laptop", "recipe", "football",
    "tax",     "school", "paint",  "window", "letter",  "camera", "phone",  "dentist"};
#define N_WORDS (sizeof words / sizeof words[0])

static uint64_t rng = 88172645463325252ULL;
static unsigned next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 32);
}

static void sentence(char *buf, size_t cap, long i) {
    snprintf(buf, cap, "note %ld: the %s and the %s near the %s on %s", i, words[next() % N_WORDS],
             words[next() % N_WORDS], words[next() % N_WORDS], words[next() % N_WORDS]);
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static remem *open_or_die(const char *uri) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    if (remem_open(uri, &o, &db) != REMEM_OK) {
        fprintf(stderr, "bench_store: %s\n", db ? remem_errmsg(db) : "out of memory");
        exit(1);
    }
    return db;
}

typedef struct figures {
    double single, batch, cold_ms, p50, p99;
} figures;

static figures run(const char *uri, long n, long singles) {
    figures f = {0};
    remem *db = open_or_die(uri);
    char text[256], id[64];
    /* single adds */
    double t0 = now_s();
    for (long i = 0; i < singles; i++) {
        sentence(text, sizeof text, i);
        remem_memory m;
        remem_memory_init(&m);
        m.ns = "single";
        m.text = text;
        if (remem_add(db, &m, id, sizeof id, NULL) != REMEM_OK) {
            fprintf(stderr, "bench_store: add: %s\n", remem_errmsg(db));
            exit(1);
        }
    }
    f.single = singles / (now_s() - t0);
    /* batches of 1,000 into the big namespace */
    enum { B = 1000 };
    static char texts[B][128];
    static remem_memory ms[B];
    t0 = now_s();
    for (long done = 0; done < n; done += B) {
        long k = n - done < B ? n - done : B;
        for (long j = 0; j < k; j++) {
            sentence(texts[j], sizeof texts[j], done + j);
            remem_memory_init(&ms[j]);
            ms[j].ns = "big";
            ms[j].text = texts[j];
        }
        long failed = -1;
        if (remem_add_batch(db, ms, (size_t)k, NULL, 0, &failed) != REMEM_OK) {
            fprintf(stderr, "bench_store: batch: %s\n", remem_errmsg(db));
            exit(1);
        }
    }
    f.batch = n / (now_s() - t0);
    remem_close(db);
    /* cold load: a new handle's first recall */
    db = open_or_die(uri);
    const char *nss[] = {"big"};
    remem_query q;
    remem_query_init(&q);
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.k = 10;
    q.text = "the kettle near the garden";
    remem_result *res = NULL;
    t0 = now_s();
    if (remem_recall(db, &q, &res) != REMEM_OK) {
        fprintf(stderr, "bench_store: recall: %s\n", remem_errmsg(db));
        exit(1);
    }
    f.cold_ms = (now_s() - t0) * 1e3;
    remem_result_free(res);
    /* warm recalls */
    enum { Q = 1000 };
    static double lat[Q];
    for (int i = 0; i < Q; i++) {
        snprintf(text, sizeof text, "the %s and the %s", words[next() % N_WORDS],
                 words[next() % N_WORDS]);
        q.text = text;
        t0 = now_s();
        if (remem_recall(db, &q, &res) != REMEM_OK) {
            fprintf(stderr, "bench_store: recall: %s\n", remem_errmsg(db));
            exit(1);
        }
        lat[i] = (now_s() - t0) * 1e3;
        remem_result_free(res);
    }
    qsort(lat, Q, sizeof lat[0], cmp_d);
    f.p50 = lat[Q / 2];
    f.p99 = lat[Q * 99 / 100];
    remem_close(db);
    return f;
}

int main(int argc, char **argv) {
    long n = 100000, singles = 2000;
    const char *names[8], *uris[8];
    int k = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = atol(argv[++i]);
        else if (!strcmp(argv[i], "--single") && i + 1 < argc)
            singles = atol(argv[++i]);
        else if (strchr(argv[i], '=') && k < 8) {
            char *eq = strchr(argv[i], '=');
            *eq = '\0';
            names[k] = argv[i];
            uris[k++] = eq + 1;
        } else {
            fprintf(stderr, "usage: bench_store [--n N] [--single N] NAME=URI ...\n");
            return 2;
        }
    }
    if (k == 0) {
        /* bench/run.sh runs every program without arguments: this one
         * needs stores, which bench/store_compare.sh starts. */
        printf("bench_store: skipped: no NAME=URI given (bench/store_compare.sh runs it on "
               "SQLite and PostgreSQL)\n");
        return 0;
    }
    figures f[8];
    for (int i = 0; i < k; i++) {
        fprintf(stderr, "bench_store: %s ...\n", names[i]);
        f[i] = run(uris[i], n, singles);
    }
    printf("| figure |");
    for (int i = 0; i < k; i++) printf(" %s |", names[i]);
    printf("\n|---|");
    for (int i = 0; i < k; i++) printf("---:|");
    printf("\n| single adds (%ld) | ", singles);
    for (int i = 0; i < k; i++) printf("%.0f/s | ", f[i].single);
    printf("\n| batches of 1,000 (%ld) | ", n);
    for (int i = 0; i < k; i++) printf("%.0f/s | ", f[i].batch);
    printf("\n| cold load of %ld (first recall) | ", n);
    for (int i = 0; i < k; i++) printf("%.0f ms | ", f[i].cold_ms);
    printf("\n| `default` recall p50, %ld | ", n);
    for (int i = 0; i < k; i++) printf("%.2f ms | ", f[i].p50);
    printf("\n| `default` recall p99, %ld | ", n);
    for (int i = 0; i < k; i++) printf("%.2f ms | ", f[i].p99);
    printf("\n");
    return 0;
}
