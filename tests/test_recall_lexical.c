/*
 * test_recall_lexical.c: the lexical lane of a recall, through the public
 * API, is exact. Random namespaces are written by two handles on one file
 * (the second stands for another process: the first catches up from the
 * history), with adds, text updates, invalidations, archives and purges;
 * after every few writes, random queries go to both handles, and the
 * lexical candidates they return must be the top N of an exhaustive BM25
 * computed here from the texts this test wrote: the same scores (within
 * 1e-9) for the same memories, as many as there are matches, and no
 * candidate the exhaustive ranking puts below the N-th.
 *
 * The reference analyses with the engine's one analyser (text_analyse_with
 * and Snowball's stemmer, as the lexical lane does) and
 * scores with the formula of src/lexical/lexical.h, over every memory of
 * the namespace (invalidated and archived ones count in N, df and avgdl:
 * they are in the index, only not allowed), and merges namespaces by score
 * as recall does. Ties at the N-th place may be broken either way, so the
 * set is compared through its scores.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remem.h"
#include "lexical/lexical.h"
#include "test.h"
#include "text/analyse.h"

#define MAX_MEM   160
#define MAX_TERMS 64
#define N_CAND    8
#define NOW       1800000000000LL

static char path[256];

typedef struct mem {
    char ns[8], id[16];
    char text[256];
    int alive, hidden; /* hidden: invalidated or archived */
} mem;

static mem mems[MAX_MEM];
static int n_mems;

static const char *const VOCAB[] = {
    "garden",  "tomato",  "violin",  "cobalt",      "harbor",    "lantern", "meadow",
    "orbit",   "pixel",   "quartz",  "river",       "saddle",    "tundra",  "walnut",
    "zephyr",  "anchor",  "biscuit", "canyon",      "dolphin",   "ember",   "falcon",
    "glacier", "hammock", "island",  "jigsaw",      "kettle",    "2023",    "v8",
    "marble",  "nectar",  "deploy",  "deployments", "deploying", "Deployed"};
#define N_VOCAB (int)(sizeof VOCAB / sizeof VOCAB[0])

static unsigned long long rng = 0x9E3779B97F4A7C15ULL;
static unsigned rnd(unsigned n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* A word, common ones more often (roughly Zipfian). */
static const char *word(void) {
    unsigned r = rnd(1000);
    unsigned i = (unsigned)(N_VOCAB * (r / 1000.0) * (r / 1000.0));
    return VOCAB[i % N_VOCAB];
}

static void random_text(char *out, size_t cap, int min_words, int max_words) {
    int n = min_words + (int)rnd((unsigned)(max_words - min_words + 1));
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s%s", i ? " " : "", word(),
                                rnd(6) == 0 ? "." : "");
}

/* ---- the reference: analysed terms and an exhaustive BM25 ---- */

typedef struct terms {
    char t[MAX_TERMS][TEXT_TERM_MAX + 1];
    int n;
} terms;

static void take(const char *term, size_t len, int has_digit, int sentence_start, void *ctx) {
    (void)has_digit;
    (void)sentence_start;
    terms *ts = ctx;
    if (ts->n < MAX_TERMS) {
        memcpy(ts->t[ts->n], term, len);
        ts->t[ts->n++][len] = '\0';
    }
}

static text_stemmer *stemmer;

static void analyse(const char *text, terms *ts) {
    ts->n = 0;
    text_analyse_with(text, stemmer, take, ts);
}

static int count_in(const terms *d, const char *t) {
    int c = 0;
    for (int i = 0; i < d->n; i++) c += strcmp(d->t[i], t) == 0;
    return c;
}

/* BM25 of every memory of ns for the query (0: no match), lexical.h's
 * formula summed over the query's distinct terms in their order. */
static void reference(const char *ns, const terms *q, double *score) {
    static terms docs[MAX_MEM];
    double n_docs = 0, total = 0;
    for (int i = 0; i < n_mems; i++) {
        score[i] = 0;
        if (!mems[i].alive || strcmp(mems[i].ns, ns)) continue;
        analyse(mems[i].text, &docs[i]);
        n_docs++;
        total += docs[i].n;
    }
    if (n_docs == 0) return;
    double avgdl = total / n_docs;
    for (int t = 0; t < q->n; t++) {
        int repeat = 0;
        for (int u = 0; u < t; u++) repeat |= strcmp(q->t[u], q->t[t]) == 0;
        if (repeat) continue;
        double df = 0;
        for (int i = 0; i < n_mems; i++)
            if (mems[i].alive && !strcmp(mems[i].ns, ns) && count_in(&docs[i], q->t[t])) df++;
        if (df == 0) continue;
        double idf = log(1.0 + (n_docs - df + 0.5) / (df + 0.5));
        for (int i = 0; i < n_mems; i++) {
            if (!mems[i].alive || strcmp(mems[i].ns, ns)) continue;
            double tf = count_in(&docs[i], q->t[t]), dl = docs[i].n;
            if (tf == 0) continue;
            score[i] +=
                idf * (tf * (LEX_K1 + 1)) / (tf + LEX_K1 * (1 - LEX_B + LEX_B * dl / avgdl));
        }
    }
}

static int cmp_desc(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x > y ? -1 : x < y;
}

/* ---- the engine ---- */

static remem *open_db(void) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    CHECK_INT(remem_open(path, &o, &db), REMEM_OK);
    return db;
}

static int find_mem(const char *ns, const char *id) {
    for (int i = 0; i < n_mems; i++)
        if (mems[i].alive && !strcmp(mems[i].ns, ns) && !strcmp(mems[i].id, id)) return i;
    return -1;
}

/* Ask db the query over the namespaces and check its lexical candidates. */
static void check_query(remem *db, const char *const *ns, size_t n_ns, const char *text,
                        const char *who) {
    terms q;
    analyse(text, &q);
    static double score[MAX_MEM], want[MAX_MEM * 2];
    double all[MAX_MEM];
    size_t n_want = 0;
    for (int i = 0; i < n_mems; i++) all[i] = 0;
    for (size_t j = 0; j < n_ns; j++) {
        reference(ns[j], &q, score);
        for (int i = 0; i < n_mems; i++)
            if (mems[i].alive && !strcmp(mems[i].ns, ns[j])) all[i] = score[i];
    }
    for (int i = 0; i < n_mems; i++)
        if (mems[i].alive && !mems[i].hidden && all[i] > 0) want[n_want++] = all[i];
    qsort(want, n_want, sizeof *want, cmp_desc);
    if (n_want > N_CAND) n_want = N_CAND;

    remem_query rq;
    remem_query_init(&rq);
    rq.namespaces = (const char **)ns;
    rq.n_namespaces = n_ns;
    rq.text = text;
    rq.profile = "default";
    rq.k = 1000;
    rq.candidates = N_CAND;
    rq.now = NOW;
    rq.no_touch = 1;
    remem_result *r = NULL;
    int rc = remem_recall(db, &rq, &r);
    if (rc) fprintf(stderr, "  %s: %s\n", who, remem_errmsg(db));
    CHECK_INT(rc, REMEM_OK);
    if (!r) return;
    double got[MAX_MEM * 2];
    size_t n_got = 0;
    int bad = 0;
    for (size_t h = 0; h < r->n; h++) {
        const remem_hit *hit = &r->hits[h];
        int i = find_mem(hit->mem.ns, hit->mem.id);
        if (!(hit->lanes & 2)) {
            /* Another lane's candidate: its BM25 all the same (complete_scores). */
            if (i < 0 || fabs(hit->bm25 - all[i]) > 1e-9) {
                fprintf(stderr, "  %s, query \"%s\": %s/%s (lanes %u) bm25 %.12f, expected %.12f\n",
                        who, text, hit->mem.ns, hit->mem.id, hit->lanes, hit->bm25,
                        i < 0 ? -1.0 : all[i]);
                bad = 1;
            }
            continue;
        }
        if (i < 0 || mems[i].hidden || fabs(hit->bm25 - all[i]) > 1e-9) {
            fprintf(stderr, "  %s, query \"%s\": %s/%s bm25 %.12f, expected %.12f%s\n", who, text,
                    hit->mem.ns, hit->mem.id, hit->bm25, i < 0 ? -1.0 : all[i],
                    i >= 0 && mems[i].hidden ? " (hidden)" : "");
            bad = 1;
        }
        got[n_got++] = hit->bm25;
    }
    qsort(got, n_got, sizeof *got, cmp_desc);
    if (n_got != n_want) {
        fprintf(stderr, "  %s, query \"%s\": %zu lexical candidates, expected %zu\n", who, text,
                n_got, n_want);
        bad = 1;
    }
    for (size_t i = 0; !bad && i < n_got; i++)
        if (fabs(got[i] - want[i]) > 1e-9) {
            fprintf(stderr, "  %s, query \"%s\": candidate %zu has %.12f, the top %zu has %.12f\n",
                    who, text, i, got[i], i, want[i]);
            bad = 1;
        }
    CHECK(!bad);
    remem_result_free(r);
}

/* One random write by db, mirrored in mems. */
static void random_write(remem *db) {
    static int next_id;
    const char *nss[] = {"t:a", "t:b"};
    unsigned op = rnd(10);
    int live[MAX_MEM], n_live = 0;
    for (int i = 0; i < n_mems; i++)
        if (mems[i].alive) live[n_live++] = i;
    if (op < 5 || n_live < 4) {
        if (n_mems == MAX_MEM) return;
        mem *m = &mems[n_mems];
        snprintf(m->ns, sizeof m->ns, "%s", nss[rnd(2)]);
        snprintf(m->id, sizeof m->id, "m%d", next_id++);
        random_text(m->text, sizeof m->text, 1, 14);
        remem_memory rm;
        remem_memory_init(&rm);
        rm.ns = m->ns;
        rm.id = m->id;
        rm.text = m->text;
        rm.created_at = NOW - 1000000;
        /* Repeated texts are fine here: a duplicate only bumps a count. */
        char id_out[64];
        int rc = remem_add(db, &rm, id_out, sizeof id_out, NULL);
        CHECK_INT(rc, REMEM_OK);
        if (rc == REMEM_OK && strcmp(id_out, m->id) == 0) {
            m->alive = 1;
            m->hidden = 0;
            n_mems++;
        }
        return;
    }
    mem *m = &mems[live[rnd((unsigned)n_live)]];
    if (op < 7) {
        char text[256];
        random_text(text, sizeof text, 1, 14);
        remem_patch p;
        remem_patch_init(&p);
        p.fields = REMEM_SET_TEXT;
        p.text = text;
        CHECK_INT(remem_update(db, m->ns, m->id, &p), REMEM_OK);
        snprintf(m->text, sizeof m->text, "%s", text);
    } else if (op == 7) {
        CHECK_INT(remem_invalidate(db, m->ns, m->id, NULL, NULL), REMEM_OK);
        m->hidden = 1;
    } else if (op == 8) {
        CHECK_INT(remem_forget(db, m->ns, m->id, 0), REMEM_OK); /* archived */
        m->hidden = 1;
    } else {
        CHECK_INT(remem_forget(db, m->ns, m->id, 1), REMEM_OK); /* purged */
        m->alive = 0;
    }
}

static void test_lexical_lane_exact(void) {
    snprintf(path, sizeof path, "/tmp/remem-test-recall-lexical-%d.db", (int)getpid());
    remem *a = open_db(), *b = open_db();
    if (!a || !b) return;
    const char *one[] = {"t:a"}, *other[] = {"t:b"}, *both[] = {"t:a", "t:b"};
    for (int round = 0; round < 120; round++) {
        /* Mostly a's own writes (its cache patched in place), some by b
         * (a catches up from the history), now and then a reopened a (a
         * cold load). */
        for (int w = 0; w < 3; w++) random_write(rnd(3) ? a : b);
        if (round % 40 == 39) {
            remem_close(a);
            a = open_db();
            if (!a) break;
        }
        for (int k = 0; k < 3; k++) {
            char text[256];
            random_text(text, sizeof text, 1, 6);
            if (rnd(4) == 0) strcat(text, " unknownword");
            check_query(a, one, 1, text, "a");
            check_query(a, other, 1, text, "a");
            check_query(a, both, 2, text, "a (both)");
            check_query(b, both, 2, text, "b (both)");
        }
    }
    /* What the index costs is reported for a loaded namespace. */
    char *js = NULL;
    if (a && remem_stats(a, "t:a", &js) == REMEM_OK) {
        int rows = 0;
        for (int i = 0; i < n_mems; i++) rows += mems[i].alive && !strcmp(mems[i].ns, "t:a");
        char want[64];
        snprintf(want, sizeof want, "\"cache\":{\"rows\":%d,", rows);
        CHECK_HAS(js, want);
        CHECK_HAS(js, "\"lexical_bytes_per_memory\":");
    } else {
        CHECK(0);
    }
    remem_free(js);
    remem_close(a);
    remem_close(b);
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char p[300];
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    /* The query's own terms only: the WordNet expansion (which adds
     * weighted terms) has its own test (test_expansion.c). */
    setenv("REMEM_RECALL_EXPAND", "0", 1);
    stemmer = text_stemmer_new();
    CHECK(stemmer != NULL);
    RUN(test_lexical_lane_exact);
    text_stemmer_free(stemmer);
    return TEST_EXIT();
}
