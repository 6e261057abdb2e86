/*
 * test_entities.c: the entities of a text (src/text/entities.h) and the
 * entity lane of recall (src/engine/cache_ent.c, recall.c):
 *   - the keys of fixed texts, exactly: capitalised words, words with a
 *     digit, runs of adjacent capitalised words joined, a leading
 *     "Name:" counted twice; the same keys every time;
 *   - through the API, after random adds, text updates and forgets by two
 *     handles (the entity index kept in step by the writers, or built
 *     afresh): no hit lies outside the query's namespaces or its filter,
 *     and a hit's entity component is above 0 exactly when its memory
 *     shares an entity key with the query, 1 for the best (with the hop,
 *     the default, also when it shares one with a lexical hit); the lane
 *     is marked in the hits it brought.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remem.h"
#include "test.h"
#include "text/entities.h"

typedef struct keys {
    char v[64][TEXT_ENTITY_MAX + 1];
    int n;
} keys;

static void take(const char *k, size_t len, void *ctx) {
    keys *ks = ctx;
    if (ks->n < 64) memcpy(ks->v[ks->n], k, len + 1), ks->n++;
}

static void expect(const char *text, const char *want) {
    keys ks = {.n = 0};
    size_t n = text_entities(text, take, &ks);
    CHECK_INT(n, ks.n);
    char got[2048] = "";
    for (int i = 0; i < ks.n; i++) {
        strcat(got, i ? " " : "");
        strcat(got, ks.v[i]);
    }
    CHECK_STR(got, want);
}

static void test_keys(void) {
    expect("Caroline: Hey Mel! I went to the LGBTQ support group in New York on 7 May 2023.",
           "caroline caroline hey mel hey_mel lgbtq new york new_york 7 may 2023");
    expect("we met at the Grand Canyon, then Bob's van broke down at 5pm",
           "grand canyon grand_canyon bob 5pm");
    expect("nothing here at all", "");
    expect("Paris and PARIS and paris", "paris paris");
    expect(NULL, "");
    /* a text that is not about its first word */
    expect("Yesterday: rain", "yesterday yesterday");
}

/* ---- the lane through the API ---- */

static const char *const NAMES[] = {"Caroline", "Melanie", "Sweden", "Oslo", "Bob", "Ann"};
static const char *const WORDS[] = {"painting", "river", "pottery", "class", "camping", "lake"};
#define N_NAMES (sizeof NAMES / sizeof *NAMES)
#define N_WORDS (sizeof WORDS / sizeof *WORDS)

static uint64_t rng = 2463534242ULL;
static unsigned rnd(unsigned n) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static void random_text(char *out, size_t cap) {
    int n = 2 + (int)rnd(6);
    out[0] = '\0';
    if (rnd(2)) snprintf(out, cap, "%s: ", NAMES[rnd(N_NAMES)]);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s ", rnd(3) ? WORDS[rnd(N_WORDS)] : NAMES[rnd(N_NAMES)]);
    }
}

static int shares_key(const char *a, const char *b) {
    keys ka = {.n = 0}, kb = {.n = 0};
    text_entities(a, take, &ka);
    text_entities(b, take, &kb);
    for (int i = 0; i < ka.n; i++)
        for (int j = 0; j < kb.n; j++)
            if (!strcmp(ka.v[i], kb.v[j])) return 1;
    return 0;
}

/* hop: the entities of the best lexical hits are followed too (the
 * default); then a hit's entity may come from a key it shares with any
 * lexical hit, else only from one it shares with the query. */
static int hop;

static int shares_with_lexical_hit(const remem_result *r, const char *text) {
    for (size_t i = 0; i < r->n; i++)
        if ((r->hits[i].lanes & 2) && shares_key(r->hits[i].mem.text, text)) return 1;
    return 0;
}

static void check_query(remem *db, const char *const *ns, size_t n_ns, const char *kind) {
    char text[256];
    snprintf(text, sizeof text, "what did %s do by the %s", NAMES[rnd(N_NAMES)],
             WORDS[rnd(N_WORDS)]);
    char filter[64];
    snprintf(filter, sizeof filter, "{\"kind\": \"%s\"}", kind);
    remem_query q;
    remem_query_init(&q);
    q.namespaces = (const char **)ns;
    q.n_namespaces = n_ns;
    q.text = text;
    q.filter = filter;
    q.k = 1000;
    q.no_touch = 1;
    remem_result *r = NULL;
    CHECK_INT(remem_recall(db, &q, &r), REMEM_OK);
    if (!r) return;
    CHECK(r->entity != NULL);
    double best = 0;
    for (size_t i = 0; i < r->n; i++) {
        const remem_hit *h = &r->hits[i];
        for (size_t j = 0; j < i; j++) /* every lane's candidates merged: no memory twice */
            CHECK(strcmp(h->mem.id, r->hits[j].mem.id) || strcmp(h->mem.ns, r->hits[j].mem.ns));
        int in_ns = 0;
        for (size_t j = 0; j < n_ns; j++) in_ns |= !strcmp(h->mem.ns, ns[j]);
        CHECK(in_ns);
        CHECK_STR(h->mem.kind, kind);
        if (!r->entity) continue;
        double e = r->entity[i];
        CHECK(e >= 0 && e <= 1);
        int share = shares_key(h->mem.text, text);
        if (hop && !share) share = shares_with_lexical_hit(r, h->mem.text);
        int ok = hop ? (!(e > 0) || share) : (e > 0) == share;
        if (!ok) fprintf(stderr, "  \"%s\" / \"%s\": entity %g\n", text, h->mem.text, e);
        CHECK(ok);
        if (h->lanes & 4) CHECK(share);
        if (e > best) best = e;
    }
    if (best > 0) CHECK(best == 1);
    remem_result_free(r);
}

static void lane_property(void) {
    char path[128];
    snprintf(path, sizeof path, "/tmp/remem-test-entities-%d-%d.db", (int)getpid(), hop);
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *a = NULL, *b = NULL;
    CHECK_INT(remem_open(path, &o, &a), REMEM_OK);
    CHECK_INT(remem_open(path, &o, &b), REMEM_OK);
    if (!a || !b) return;
    const char *nss[] = {"e:a", "e:b"}, *kinds[] = {"note", "chat"};
    int next = 0;
    for (int round = 0; round < 60; round++) {
        remem *w = rnd(4) ? a : b;
        unsigned op = rnd(10);
        char text[256], id[32];
        random_text(text, sizeof text);
        if (op < 6 || next < 5) {
            remem_memory m;
            remem_memory_init(&m);
            snprintf(id, sizeof id, "m%d", next++);
            m.ns = nss[rnd(2)];
            m.id = id;
            m.kind = kinds[rnd(2)];
            m.text = text;
            CHECK_INT(remem_add(w, &m, NULL, 0, NULL), REMEM_OK);
        } else {
            snprintf(id, sizeof id, "m%u", rnd((unsigned)next));
            const char *ns = nss[rnd(2)];
            if (op < 9) {
                remem_patch p;
                remem_patch_init(&p);
                p.fields = REMEM_SET_TEXT;
                p.text = text;
                int rc = remem_update(w, ns, id, &p);
                CHECK(rc == REMEM_OK || rc == REMEM_ENOTFOUND);
            } else {
                int rc = remem_forget(w, ns, id, 1);
                CHECK(rc == REMEM_OK || rc == REMEM_ENOTFOUND);
            }
        }
        if (round % 3) continue;
        const char *one[] = {nss[rnd(2)]};
        check_query(rnd(2) ? a : b, one, 1, kinds[rnd(2)]);
        check_query(rnd(2) ? a : b, nss, 2, kinds[rnd(2)]);
    }
    remem_close(a);
    remem_close(b);
    unlink(path);
}

/* The default (hop on), in a child: the switches are read once per process. */
static void test_lane_with_hop(void) {
    pid_t pid = fork();
    if (pid == 0) {
        hop = 1;
        lane_property();
        _exit(test__cur_failed);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Without the hop: exactly the memories sharing the query's entities. */
static void test_lane_exact(void) {
    setenv("REMEM_RECALL_HOP", "0", 1);
    hop = 0;
    lane_property();
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_keys);
    RUN(test_lane_with_hop); /* first: the child must read the switches unset */
    RUN(test_lane_exact);
    return TEST_EXIT();
}
