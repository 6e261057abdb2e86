/*
 * bench_prune.c: the resident size and time of "prune" over a large
 * namespace of episodes (issue 11: "pruning a namespace of 1M memories
 * stays under a stated resident size"). The store is made in a child
 * process, so the parent's resident size is prune's alone. Two figures:
 * the peak of RssAnon (the process's own memory: what "bounded" is
 * about), sampled every 5 ms by a thread, and VmHWM (which also counts the
 * pages of the store file SQLite maps, up to its 1 GiB mmap_size: the
 * kernel's page cache, shared and reclaimable).
 *
 *   bench_prune [N]     N episodes (default 1,000,000; REMEM_BENCH_QUICK:
 *                       100,000) in 10 projects, hash embedder, then one
 *                       prune with maxEpisodesPerProject 1000, retention
 *                       off, clusters at 0.99 (heuristic): prints the
 *                       episodes archived, the time and the peak RSS.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "remem.h"

static long rss_kb(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, strlen(field))) v = strtol(line + strlen(field), NULL, 10);
    if (f) fclose(f);
    return v;
}

static atomic_long peak_anon;
static atomic_int sampling = 1;

static void *sample(void *arg) {
    (void)arg;
    while (atomic_load(&sampling)) {
        long a = rss_kb("RssAnon:");
        if (a > atomic_load(&peak_anon)) atomic_store(&peak_anon, a);
        usleep(5000);
    }
    return NULL;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static remem *open_db(const char *path) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    if (remem_open(path, &o, &db)) {
        fprintf(stderr, "open: %s\n", remem_errmsg(db));
        exit(1);
    }
    return db;
}

static void fill(const char *path, long n) {
    remem *db = open_db(path);
    enum { B = 2000 };
    static remem_memory ms[B];
    static char texts[B][96], metas[B][160], ids[B][48];
    const char *words[] = {"parse", "csv",   "json", "file",  "rows", "write",  "read",   "socket",
                           "retry", "cache", "sort", "merge", "http", "client", "config", "log"};
    srand(7);
    for (long i = 0; i < n; i += B) {
        long m = n - i < B ? n - i : B;
        for (long j = 0; j < m; j++) {
            long k = i + j;
            remem_memory_init(&ms[j]);
            snprintf(texts[j], sizeof texts[j], "%s %s %s %s episode %ld", words[rand() % 16],
                     words[rand() % 16], words[rand() % 16], words[rand() % 16], k);
            snprintf(metas[j], sizeof metas[j],
                     "{\"taskID\":\"t%ld\",\"projectID\":\"p%ld\",\"language\":\"python\","
                     "\"promptBytes\":10}",
                     k, k % 10);
            snprintf(ids[j], sizeof ids[j], "p%ld_t%ld_%ld", k % 10, k, 1700000000000L + k);
            ms[j].ns = "big";
            ms[j].id = ids[j];
            ms[j].kind = "episode";
            ms[j].text = texts[j];
            ms[j].metadata = metas[j];
            ms[j].created_at = 1700000000000LL + k * 1000;
        }
        if (remem_add_batch(db, ms, (size_t)m, NULL, 0, NULL)) {
            fprintf(stderr, "add: %s\n", remem_errmsg(db));
            exit(1);
        }
    }
    remem_close(db);
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : getenv("REMEM_BENCH_QUICK") ? 100000 : 1000000;
    char dir[] = "/tmp/remem-bench-prune-XXXXXX", path[128], cmd[200];
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/store.db", dir);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        fill(path, n);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) return 1;
    double t1 = now_s();
    remem *db = open_db(path);
    long rss0 = rss_kb("VmHWM:");
    char args[400], *out = NULL;
    snprintf(args, sizeof args,
             "{\"ns\":\"big\",\"archive_location\":\"%s/arch\",\"max_episodes_per_project\":1000,"
             "\"retention_days\":0,\"similarity_threshold\":0.99,\"strategy\":\"heuristic\","
             "\"ids_limit\":0}",
             dir);
    long anon0 = rss_kb("RssAnon:");
    pthread_t th;
    pthread_create(&th, NULL, sample, NULL);
    double t2 = now_s();
    int rc = remem_call(db, "prune", args, strlen(args), &out);
    double t3 = now_s();
    atomic_store(&sampling, 0);
    pthread_join(th, NULL);
    long rss1 = rss_kb("VmHWM:");
    if (rc) fprintf(stderr, "prune: %s\n", remem_errmsg(db));
    const char *p = out ? strstr(out, "\"removedCount\":") : NULL;
    long removed = p ? atol(p + strlen("\"removedCount\":")) : -1;
    printf("bench_prune: %ld episodes made in %.1f s; prune archived %ld in %.1f s "
           "(%.0f episodes/s)\n"
           "bench_prune: anonymous RSS %ld KiB before prune, peak %ld KiB during (+%ld KiB); "
           "VmHWM (with the mapped store file) %ld -> %ld KiB\n",
           n, t1 - t0, removed, t3 - t2, removed / (t3 - t2), anon0, (long)atomic_load(&peak_anon),
           (long)atomic_load(&peak_anon) - anon0, rss0, rss1);
    remem_free(out);
    remem_close(db);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) return 1;
    return rc || removed != n - 10000 ? 1 : 0;
}
