/*
 * test_recall_order.c: `default` recall does not depend on where its
 * memories sit in the namespace's cache. A handle that purged memories has
 * them swapped out of its rows (the last row moves into the hole), so its
 * rows are no longer in the order they were written; once it is closed
 * (the process's caches go with their last handle), a second handle on
 * the same file loads the same memories in write order. The stream
 * neighbours (looked up at the adjacent row first, then by rowid), the
 * pool's table, the lexical sums kept for the other lanes' candidates and
 * the entity scores must give both the same hits with the same score bits,
 * on random memories and queries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remem.h"
#include "test.h"

static unsigned long long seed = 0x2545F4914F6CDD1DULL;
static unsigned rnd(unsigned n) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return (unsigned)(seed % n);
}

static const char *const words[] = {
    "Caroline", "Melanie", "Paris",   "May",     "2023",   "painting", "camping", "school",
    "support",  "group",   "kids",    "museum",  "beach",  "guitar",   "book",    "friend",
    "adoption", "race",    "pottery", "sunrise", "Boston", "July",     "17",      "dog"};
#define N_WORDS (sizeof words / sizeof *words)

static void sentence(char *buf, size_t cap, unsigned n) {
    size_t at = (size_t)snprintf(buf, cap, "%s:", words[rnd(2)]);
    for (unsigned i = 0; i < n && at + 16 < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, " %s", words[rnd(N_WORDS)]);
}

static remem *open_at(const char *path) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    CHECK_INT(remem_open(path, &o, &db), REMEM_OK);
    return db;
}

static remem_result *ask(remem *db, const char *text) {
    const char *ns[] = {"t"};
    remem_query q;
    remem_query_init(&q);
    q.text = text;
    q.namespaces = ns;
    q.n_namespaces = 1;
    q.k = 20;
    q.no_touch = 1;
    q.now = 4102444800000LL; /* fixed: recency the same in both */
    remem_result *r = NULL;
    CHECK_INT(remem_recall(db, &q, &r), REMEM_OK);
    return r;
}

static void test_row_order(void) {
    char path[128];
    snprintf(path, sizeof path, "/tmp/remem-test-recall-order-%d.db", (int)getpid());
    unlink(path);
    remem *a = open_at(path);
    if (!a) return;
    enum { N = 600 };
    char text[256], id[32];
    for (int i = 0; i < N; i++) {
        remem_memory m;
        remem_memory_init(&m);
        m.ns = "t";
        snprintf(id, sizeof id, "m%d", i);
        m.id = id;
        sentence(text, sizeof text, 4 + rnd(12));
        m.text = text;
        m.created_at = 1700000000000LL + i * 1000LL;
        CHECK_INT(remem_add(a, &m, NULL, 0, NULL), REMEM_OK);
    }
    remem_result_free(ask(a, "warm the cache")); /* loaded before the purges */
    for (int i = 0; i < N; i += 3 + (int)rnd(5)) {
        snprintf(id, sizeof id, "m%d", i);
        CHECK_INT(remem_forget(a, "t", id, 1), REMEM_OK);
    }
    /* a's answers, then (a closed: its cache goes) b's, which loads the
     * rows in write order */
    enum { ROUNDS = 60, K = 20 };
    typedef struct answer {
        size_t n, candidates;
        char id[K][16];
        double score[K], bm25[K], context[K], entity[K];
    } answer;
    answer *got = calloc(ROUNDS, sizeof *got);
    char(*texts)[256] = calloc(ROUNDS, sizeof *texts);
    CHECK(got && texts);
    if (!got || !texts) return;
    for (int round = 0; round < ROUNDS; round++) {
        sentence(texts[round], sizeof texts[round], 2 + rnd(6));
        remem_result *x = ask(a, texts[round]);
        if (!x) continue;
        answer *g = &got[round];
        g->n = x->n;
        g->candidates = x->candidates;
        for (size_t i = 0; i < x->n && i < K; i++) {
            snprintf(g->id[i], sizeof g->id[i], "%s", x->hits[i].mem.id);
            g->score[i] = x->hits[i].score;
            g->bm25[i] = x->hits[i].bm25;
            g->context[i] = x->hits[i].context;
            g->entity[i] = x->entity ? x->entity[i] : -1;
        }
        remem_result_free(x);
    }
    remem_close(a);
    remem *b = open_at(path);
    if (!b) return;
    int compared = 0;
    for (int round = 0; round < ROUNDS; round++) {
        remem_result *y = ask(b, texts[round]);
        const answer *g = &got[round];
        if (!y) continue;
        CHECK_INT(y->n, g->n);
        CHECK_INT(y->candidates, g->candidates);
        for (size_t i = 0; i < y->n && i < g->n; i++) {
            CHECK_STR(y->hits[i].mem.id, g->id[i]);
            CHECK(y->hits[i].score == g->score[i]);
            CHECK(y->hits[i].bm25 == g->bm25[i]);
            CHECK(y->hits[i].context == g->context[i]);
            CHECK(y->entity && y->entity[i] == g->entity[i]);
            compared++;
        }
        remem_result_free(y);
    }
    CHECK(compared > 600);
    free(got);
    free(texts);
    remem_close(b);
    unlink(path);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_row_order);
    return TEST_EXIT();
}
