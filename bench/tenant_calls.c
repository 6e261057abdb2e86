/*
 * tenant_calls.c: the tenant benchmark's work without HTTP (issue 17):
 * N recalls through remem_call_ex("recall", ..., REMEM_CALL_REMOTE), the
 * path `remem serve` takes for POST /v1/recall, each on a random one of
 * the store's namespaces "t:00000".. (made by bench/bench_tenants.sh or
 * bench/README.md's 100k recipe) with a random question, k = 10, touch
 * off, at a fixed "now", under a cache budget. It prints the recalls per
 * second and the answers' bytes; with DUMP=1 it prints every answer
 * (took_ms left out) so that two builds' answers can be compared byte for
 * byte. bench/tenant_calls.sh runs it under callgrind for instruction
 * counts, which the load of a shared machine does not move.
 *
 *   tenant_calls DB NAMESPACES CALLS QUESTIONS [CACHE_MB]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "remem.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Up to 4,096 questions, one per line, quotes and backslashes blanked. */
static size_t read_questions(const char *path, char **qs) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[4096];
    size_t n = 0;
    while (n < 4096 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        for (char *p = line; *p; p++)
            if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) *p = ' ';
        if (*line) qs[n++] = strdup(line);
    }
    fclose(f);
    return n;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: tenant_calls DB NAMESPACES CALLS QUESTIONS [CACHE_MB]\n");
        return 2;
    }
    int n_ns = atoi(argv[2]), calls = atoi(argv[3]);
    static char *qs[4096];
    size_t nq = read_questions(argv[4], qs);
    if (n_ns <= 0 || calls <= 0 || !nq) {
        fprintf(stderr, "tenant_calls: no namespaces, calls or questions\n");
        return 2;
    }
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    if (argc > 5) o.cache_mb = atoi(argv[5]);
    remem *db = NULL;
    if (remem_open(argv[1], &o, &db)) {
        fprintf(stderr, "tenant_calls: %s\n", db ? remem_errmsg(db) : "cannot open the store");
        return 1;
    }
    int dump = getenv("DUMP") != NULL;
    srand(7);
    size_t bytes = 0;
    double t0 = now_ms();
    for (int i = 0; i < calls; i++) {
        char args[8192], *out = NULL;
        snprintf(args, sizeof args,
                 "{\"namespaces\":[\"t:%05d\"],\"text\":\"%s\",\"k\":10,\"touch\":false,"
                 "\"now\":\"2027-01-01T00:00:00Z\"}",
                 rand() % n_ns, qs[(size_t)rand() % nq]);
        if (remem_call_ex(db, "recall", args, strlen(args), REMEM_CALL_REMOTE, &out)) {
            fprintf(stderr, "tenant_calls: %s\n", remem_errmsg(db));
            return 1;
        }
        bytes += strlen(out);
        if (dump) {
            char *t = strstr(out, "\"took_ms\":"), *e = t ? strchr(t, ',') : NULL;
            if (e) memmove(t, e + 1, strlen(e + 1) + 1);
            puts(out);
        }
        remem_free(out);
    }
    double ms = now_ms() - t0;
    fprintf(stderr, "tenant_calls: %d recalls in %.0f ms (%.0f/s), %zu bytes of answers\n", calls,
            ms, calls / (ms / 1e3), bytes);
    remem_close(db);
    return 0;
}
