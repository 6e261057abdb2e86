/*
 * test_engine_limits.c: what the library refuses or bounds at its public
 * boundary, each the fix of a defect a hostile or careless client found
 * (issue 8), through include/remem.h alone:
 *   - the work one recall causes: a query text above REMEM_QUERY_TEXT_MAX
 *     (4 MiB) is refused at once; a longer one than the embedder reads is
 *     read by its head (REMEM_QUERY_HEAD_MAX), and of its words the 64 rarest distinct ones,
 *     each counted once, reach the lexical lane;
 *   - invalid UTF-8 in any string of any write (add, batch, update,
 *     invalidate, forget, clear) is refused naming the field and the byte;
 *   - text of white space alone is refused like "" (add and update);
 *   - a recall at a `now` before a memory was created does not see it.
 * Every refusal must change nothing: the tests compare the store's export
 * before and after.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remem.h"
#include "test.h"

/* A fixed "now": 2023-11-14T22:13:20Z. */
#define T0   1700000000000LL
#define HOUR 3600000LL

static remem *open_memory(void) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    int rc = remem_open(":memory:", &o, &db);
    if (rc) {
        fprintf(stderr, "  cannot open: %s\n", remem_errmsg(db));
        remem_close(db);
        return NULL;
    }
    return db;
}

static int add(remem *db, const char *ns, const char *id, const char *text) {
    remem_memory m;
    remem_memory_init(&m);
    m.ns = ns;
    m.id = id;
    m.text = text;
    m.created_at = T0 - HOUR;
    return remem_add(db, &m, NULL, 0, NULL);
}

static double seconds_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* A text of `bytes` bytes: word repeated, space-separated. */
static char *repeated(const char *word, size_t bytes) {
    char *t = malloc(bytes + 1);
    size_t wl = strlen(word), i = 0;
    while (i < bytes) {
        for (size_t j = 0; j < wl && i < bytes; j++) t[i++] = word[j];
        if (i < bytes) t[i++] = ' ';
    }
    t[bytes] = '\0';
    return t;
}

static int recall(remem *db, const char *ns, const char *text, remem_result **r) {
    remem_query q;
    remem_query_init(&q);
    const char *nss[] = {ns};
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.text = text;
    q.now = T0;
    q.no_touch = 1;
    return remem_recall(db, &q, r);
}

/* The hit of id in r, or NULL. */
static const remem_hit *hit_of(const remem_result *r, const char *id) {
    for (size_t i = 0; r && i < r->n; i++)
        if (strcmp(r->hits[i].mem.id, id) == 0) return &r->hits[i];
    return NULL;
}

/* ---- the work one query causes (issue 8, item 2) ---- */

static remem *garden_store(void) {
    remem *db = open_memory();
    if (!db) return NULL;
    const char *texts[] = {
        "the garden needs watering every morning",
        "tomatoes grow in the garden",
        "a zebra crossed the road",
        "the quarterly report is due on friday",
        "garden party on saturday with the family",
        "the report mentions the garden budget",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        char id[8];
        snprintf(id, sizeof id, "m%zu", i);
        CHECK_INT(add(db, "g", id, texts[i]), REMEM_OK);
    }
    return db;
}

/* recall(), timed: *took is its wall time in seconds. */
static int timed_recall(remem *db, const char *text, remem_result **r, double *took) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    *r = NULL;
    int rc = recall(db, "g", text, r);
    *took = seconds_since(&t0);
    return rc;
}

/* 200 KB of one repeated word took the old lexical lane about 5 s (its
 * work grew faster than the text). A text over REMEM_QUERY_TEXT_MAX (4 MiB)
 * is refused at once, with a message that says why. */
static void test_long_query_refused_fast(void) {
    remem *db = garden_store();
    if (!db) return;
    char *text = repeated("garden", REMEM_QUERY_TEXT_MAX + 1);
    remem_result *r;
    double took;
    CHECK_INT(timed_recall(db, text, &r, &took), REMEM_EINVAL);
    CHECK(r == NULL);
    CHECK_HAS(remem_errmsg(db), "query text is 4194305 bytes; the limit is 4194304");
    CHECK(took < 0.2);
    remem_result_free(r);
    free(text);
    remem_close(db);
}

/* A 1 MB text of repeated words (a pasted page, a whole conversation) is
 * answered: both lanes read its head (REMEM_QUERY_HEAD_MAX bytes), so the
 * answer is the one for that head, and the cost does not grow with the text
 * (bench/README.md times it; the bound here only catches a collapse). */
static void test_long_query_answered(void) {
    remem *db = garden_store();
    if (!db) return;
    size_t sizes[] = {REMEM_QUERY_HEAD_MAX, 1000000, REMEM_QUERY_TEXT_MAX};
    remem_result *head = NULL;
    char *h = repeated("garden party", REMEM_QUERY_HEAD_MAX);
    CHECK_INT(recall(db, "g", h, &head), REMEM_OK);
    free(h);
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        char *text = repeated("garden party", sizes[k]);
        remem_result *r;
        double took;
        CHECK_INT(timed_recall(db, text, &r, &took), REMEM_OK);
        CHECK(r && head && r->n == head->n && r->n > 0);
        for (size_t i = 0; r && head && i < r->n && i < head->n; i++) {
            CHECK_STR(r->hits[i].mem.id, head->hits[i].mem.id);
            CHECK_NEAR(r->hits[i].similarity, head->hits[i].similarity, 1e-6);
            CHECK_NEAR(r->hits[i].bm25, head->hits[i].bm25, 1e-9);
        }
        CHECK(took < 2.0);
        remem_result_free(r);
        free(text);
    }
    remem_result_free(head);
    remem_close(db);
}

/* A text at the old limit (32 KiB) is answered, in milliseconds,
 * whatever it repeats: a word repeated 4,700 times is one term of the
 * lexical lane. */
static void test_query_at_limit_answered_fast(void) {
    remem *db = garden_store();
    if (!db) return;
    char *text = repeated("garden", 32768);
    remem_result *r;
    double took;
    CHECK_INT(timed_recall(db, text, &r, &took), REMEM_OK);
    CHECK(r && r->n > 0);
    /* The same lexical score as the word asked four times. */
    remem_result *four = NULL;
    CHECK_INT(recall(db, "g", "garden garden garden garden", &four), REMEM_OK);
    const remem_hit *a = hit_of(r, "m1"), *b = hit_of(four, "m1");
    CHECK(a && b);
    if (a && b) CHECK_NEAR(a->bm25, b->bm25, 1e-9);
    CHECK(took < 0.1);
    remem_result_free(r);
    remem_result_free(four);
    free(text);
    remem_close(db);
}

/* A repeated query term counts once (src/lexical/lexical.h): "garden"
 * asked twice or ten times scores as asked once. (The FTS5 lane before
 * schema 3 counted a repeat up to four times.) */
static void test_term_repeats_count_once(void) {
    remem *db = garden_store();
    if (!db) return;
    const char *asks[] = {"garden", "garden garden", "garden garden garden garden",
                          "garden garden garden garden garden garden garden garden garden garden"};
    double bm25[4] = {0};
    for (int i = 0; i < 4; i++) {
        remem_result *r = NULL;
        CHECK_INT(recall(db, "g", asks[i], &r), REMEM_OK);
        const remem_hit *h = hit_of(r, "m1");
        CHECK(h && (h->lanes & 2));
        if (h) bm25[i] = h->bm25;
        remem_result_free(r);
    }
    CHECK(bm25[0] > 0);
    for (int i = 1; i < 4; i++) CHECK_NEAR(bm25[i], bm25[0], 1e-12);
    remem_close(db);
}

/* BM25 of memory id for text (0 when not a lexical candidate). */
static double bm25_of(remem *db, const char *text, const char *id) {
    remem_result *r = NULL;
    CHECK_INT(recall(db, "c", text, &r), REMEM_OK);
    const remem_hit *h = hit_of(r, id);
    double v = h && (h->lanes & 2) ? h->bm25 : 0;
    remem_result_free(r);
    return v;
}

/* Of a query's distinct terms the index knows, the 64 rarest are scored
 * (among equal df, the earliest); unknown words take none of the 64. */
static void test_distinct_terms_capped(void) {
    remem *db = open_memory();
    if (!db) return;
    char all[2048] = "", first64[2048] = "";
    size_t len = 0, len64 = 0;
    for (int i = 0; i < 70; i++) {
        len += (size_t)snprintf(all + len, sizeof all - len, "common%03d ", i);
        if (i < 64)
            len64 += (size_t)snprintf(first64 + len64, sizeof first64 - len64, "common%03d ", i);
    }
    CHECK_INT(add(db, "c", "c1", all), REMEM_OK);
    char all2[2100];
    snprintf(all2, sizeof all2, "%s again", all); /* not a duplicate of c1 */
    CHECK_INT(add(db, "c", "c2", all2), REMEM_OK);
    CHECK_INT(add(db, "c", "z", "a zebra crossed the road"), REMEM_OK);
    /* 70 common terms (df 2): the first 64 are scored, the rest dropped. */
    double s70 = bm25_of(db, all, "c1"), s64 = bm25_of(db, first64, "c1");
    CHECK(s64 > 0);
    CHECK_NEAR(s70, s64, 1e-12);
    /* The rarest term is kept however late it comes. */
    char q[2600];
    snprintf(q, sizeof q, "%szebra", all);
    CHECK(bm25_of(db, q, "z") > 0);
    /* Unknown words before it take no place either. */
    len = 0;
    for (int i = 0; i < 200; i++)
        len += (size_t)snprintf(q + len, sizeof q - len, "unknown%03d ", i);
    snprintf(q + len, sizeof q - len, "zebra");
    CHECK(bm25_of(db, q, "z") > 0);
    remem_close(db);
}

/* ---- the store, as a text to compare before and after a refusal ---- */

typedef struct snap {
    char *data;
    size_t len;
} snap;

static int snap_write(void *ctx, const char *data, size_t n) {
    snap *s = ctx;
    char *d = realloc(s->data, s->len + n + 1);
    if (!d) return 1;
    memcpy(d + s->len, data, n);
    s->len += n;
    d[s->len] = '\0';
    s->data = d;
    return 0;
}

/* Every memory (with vectors), the namespaces, and the history of the
 * ids given. malloc'd. */
static char *snapshot(remem *db, const char *const *ids) {
    snap s = {NULL, 0};
    snap_write(&s, "", 0);
    CHECK_INT(remem_export(db, NULL, 1, snap_write, &s, NULL), REMEM_OK);
    char *js = NULL;
    CHECK_INT(remem_namespaces(db, &js), REMEM_OK);
    if (js) snap_write(&s, js, strlen(js));
    remem_free(js);
    for (; ids && *ids; ids++) {
        js = NULL;
        remem_history(db, NULL, *ids, &js);
        if (js) snap_write(&s, js, strlen(js));
        remem_free(js);
    }
    return s.data;
}

/* rc is REMEM_EINVAL, the message names what, and the store is as before. */
#define CHECK_REFUSED(db, rc, what, before, ids)   \
    do {                                           \
        CHECK_INT((rc), REMEM_EINVAL);             \
        CHECK_HAS(remem_errmsg(db), (what));       \
        char *test__after = snapshot((db), (ids)); \
        CHECK_STR(test__after, (before));          \
        free(test__after);                         \
    } while (0)

/* ---- invalid UTF-8 at the library boundary (issue 8, item 6) ---- */

/* Byte sequences that are not UTF-8, each after "ok" (so at byte 2). */
static const char *const BAD[] = {
    "ok\xff",             /* never valid */
    "ok\x80z",            /* a stray continuation byte */
    "ok\xc0\xafz",        /* an overlong '/' */
    "ok\xe2\x82",         /* a sequence cut short */
    "ok\xed\xa0\x80z",    /* a surrogate (U+D800) */
    "ok\xf4\x90\x80\x80", /* above U+10FFFF */
};
#define N_BAD (sizeof BAD / sizeof BAD[0])

static remem_memory valid_memory(void) {
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "u";
    m.id = "new";
    m.kind = "note";
    m.tier = "short";
    m.text = "caf\xc3\xa9 na\xc3\xafve \xe2\x9c\x93 \xf0\x9f\x98\x80"; /* café naïve ✓ 😀 */
    m.metadata = "{\"k\":\"v\"}";
    m.links = "[\"a\"]";
    m.superseded_by = "later";
    m.created_at = T0;
    return m;
}

static void test_invalid_utf8_add(void) {
    remem *db = open_memory();
    if (!db) return;
    CHECK_INT(add(db, "u", "old", "an existing memory"), REMEM_OK);
    const char *ids[] = {"old", "new", NULL};
    char *before = snapshot(db, ids);
    char msg[128];
    for (size_t b = 0; b < N_BAD; b++) {
        const char *fields[] = {"namespace", "id", "kind", "tier", "text", "superseded_by"};
        for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
            remem_memory m = valid_memory();
            const char **slot[] = {&m.ns, &m.id, &m.kind, &m.tier, &m.text, &m.superseded_by};
            *slot[f] = BAD[b];
            snprintf(msg, sizeof msg, "%s is not valid UTF-8 at byte 2", fields[f]);
            CHECK_REFUSED(db, remem_add(db, &m, NULL, 0, NULL), msg, before, ids);
        }
        /* Inside JSON: the byte's offset in the field's text. */
        char json[64];
        remem_memory m = valid_memory();
        snprintf(json, sizeof json, "{\"k\":\"%s\"}", BAD[b]);
        m.metadata = json;
        CHECK_REFUSED(db, remem_add(db, &m, NULL, 0, NULL), "metadata is not valid UTF-8 at byte 8",
                      before, ids);
        m = valid_memory();
        snprintf(json, sizeof json, "[\"%s\"]", BAD[b]);
        m.links = json;
        CHECK_REFUSED(db, remem_add(db, &m, NULL, 0, NULL), "links is not valid UTF-8 at byte 4",
                      before, ids);
    }
    /* A batch with one bad memory writes none. */
    remem_memory batch[3] = {valid_memory(), valid_memory(), valid_memory()};
    batch[0].id = "b0";
    batch[1].id = "b1";
    batch[1].text = "fine until here \xff";
    batch[2].id = "b2";
    long failed = -1;
    CHECK_REFUSED(db, remem_add_batch(db, batch, 3, NULL, 0, &failed),
                  "memory 1: text is not valid UTF-8 at byte 16", before, ids);
    CHECK_INT(failed, 1);
    /* Valid multi-byte text in every field is taken. */
    remem_memory m = valid_memory();
    m.ns = "\xc3\xbc";
    m.id = "\xe2\x9c\x93";
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "\xc3\xbc", "\xe2\x9c\x93", &r), REMEM_OK);
    if (r) CHECK_STR(remem_record_memory(r)->text, m.text);
    remem_record_free(r);
    free(before);
    remem_close(db);
}

static void test_invalid_utf8_edit(void) {
    remem *db = open_memory();
    if (!db) return;
    CHECK_INT(add(db, "u", "old", "an existing memory"), REMEM_OK);
    const char *ids[] = {"old", NULL};
    char *before = snapshot(db, ids);
    const char *bad = "ok\xff";
    /* Every patch field. */
    remem_patch p;
    struct {
        unsigned field;
        const char *name;
    } fields[] = {{REMEM_SET_TEXT, "text"},
                  {REMEM_SET_KIND, "kind"},
                  {REMEM_SET_TIER, "tier"},
                  {REMEM_SET_METADATA, "metadata"},
                  {REMEM_SET_LINKS, "links"}};
    for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
        remem_patch_init(&p);
        p.fields = fields[f].field;
        p.text = p.kind = p.tier = p.metadata = p.links = bad;
        char msg[96];
        snprintf(msg, sizeof msg, "%s is not valid UTF-8 at byte 2", fields[f].name);
        CHECK_REFUSED(db, remem_update(db, "u", "old", &p), msg, before, ids);
    }
    remem_patch_init(&p);
    p.fields = REMEM_SET_IMPORTANCE;
    p.importance = 0.5;
    p.actor = bad;
    CHECK_REFUSED(db, remem_update(db, "u", "old", &p), "actor is not valid UTF-8 at byte 2",
                  before, ids);
    p.actor = NULL;
    CHECK_REFUSED(db, remem_update(db, bad, "old", &p), "namespace is not valid UTF-8 at byte 2",
                  before, ids);
    CHECK_REFUSED(db, remem_update(db, "u", bad, &p), "id is not valid UTF-8 at byte 2", before,
                  ids);
    /* invalidate, forget, clear, reindex. */
    CHECK_REFUSED(db, remem_invalidate(db, "u", "old", bad, NULL),
                  "superseded_by is not valid UTF-8 at byte 2", before, ids);
    CHECK_REFUSED(db, remem_invalidate(db, "u", "old", NULL, bad),
                  "reason is not valid UTF-8 at byte 2", before, ids);
    CHECK_REFUSED(db, remem_invalidate(db, bad, "old", NULL, NULL),
                  "namespace is not valid UTF-8 at byte 2", before, ids);
    CHECK_REFUSED(db, remem_forget(db, "u", bad, 1), "id is not valid UTF-8 at byte 2", before,
                  ids);
    CHECK_REFUSED(db, remem_forget(db, bad, "old", 0), "namespace is not valid UTF-8 at byte 2",
                  before, ids);
    CHECK_REFUSED(db, remem_clear(db, bad, NULL), "namespace is not valid UTF-8 at byte 2", before,
                  ids);
    CHECK_REFUSED(db, remem_reindex(db, bad, NULL, NULL), "namespace is not valid UTF-8 at byte 2",
                  before, ids);
    /* The memory itself is still there and editable. */
    remem_patch_init(&p);
    p.fields = REMEM_SET_TEXT;
    p.text = "an edited memory";
    CHECK_INT(remem_update(db, "u", "old", &p), REMEM_OK);
    free(before);
    remem_close(db);
}

/* ---- white space alone is no text (issue 8, item 8) ---- */

static void test_blank_text_refused(void) {
    remem *db = open_memory();
    if (!db) return;
    CHECK_INT(add(db, "u", "old", "an existing memory"), REMEM_OK);
    const char *ids[] = {"old", "new", NULL};
    char *before = snapshot(db, ids);
    const char *blanks[] = {" ", "   \t\n\r", "\v\f",
                            "\xc2\xa0\xe3\x80\x80\xe2\x80\xa8"}; /* U+00A0 U+3000 U+2028 */
    for (size_t i = 0; i < sizeof blanks / sizeof *blanks; i++) {
        remem_memory m = valid_memory();
        m.text = blanks[i];
        CHECK_REFUSED(db, remem_add(db, &m, NULL, 0, NULL), "text is only white space", before,
                      ids);
        remem_patch p;
        remem_patch_init(&p);
        p.fields = REMEM_SET_TEXT;
        p.text = blanks[i];
        CHECK_REFUSED(db, remem_update(db, "u", "old", &p), "text is only white space", before,
                      ids);
    }
    remem_memory m = valid_memory();
    m.text = "";
    CHECK_REFUSED(db, remem_add(db, &m, NULL, 0, NULL), "text is empty", before, ids);
    /* An empty namespace: refused in the words the faces use, and stats
     * for "" is refused too rather than answered as a namespace's. */
    m = valid_memory();
    m.ns = "";
    CHECK_REFUSED(db, remem_add(db, &m, NULL, 0, NULL), "namespace: must be a non-empty string", before,
                  ids);
    char *js = NULL;
    CHECK_INT(remem_stats(db, "", &js), REMEM_EINVAL);
    CHECK(js == NULL && strstr(remem_errmsg(db), "namespace: must be a non-empty string") != NULL);
    m = valid_memory();
    /* Text with something besides white space is text. */
    m.text = "  a  ";
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    m.id = "zero-width";
    m.text = "\xe2\x80\x8b"; /* U+200B is not white space */
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    free(before);
    remem_close(db);
}

/* ---- a replay at time T sees only what existed at T (issue 8, item 11) ---- */

/* Three memories, all with the query's own vector (similarity 1, so every
 * profile's thresholds pass) and reward 1 (the replay profile's filter),
 * created 2 hours before T0, at T0 and an hour after. */
static remem *timeline_store(void) {
    remem *db = open_memory();
    if (!db) return NULL;
    int dim = remem_embedder_dim(db);
    float *v = calloc((size_t)dim, sizeof *v);
    v[5] = 1;
    const char *ids[] = {"past", "present", "future"};
    const int64_t at[] = {T0 - 2 * HOUR, T0, T0 + HOUR};
    for (int i = 0; i < 3; i++) {
        remem_memory m;
        remem_memory_init(&m);
        m.ns = "t";
        m.id = ids[i];
        m.text = i == 0   ? "the zebra was seen in the past"
                 : i == 1 ? "the zebra is seen now"
                          : "the zebra will be seen later";
        m.importance = 0.5;
        m.metadata = "{\"reward\":1}";
        m.created_at = at[i];
        m.vector = v;
        m.dim = dim;
        CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    }
    free(v);
    return db;
}

/* The ids a recall returns, sorted by name ("future,past,present"). */
static void ids_at(remem *db, const char *profile, int64_t now, int by_text, int include_invalid,
                   char *out, size_t cap, remem_result **keep) {
    int dim = remem_embedder_dim(db);
    float *v = calloc((size_t)dim, sizeof *v);
    v[5] = 1;
    remem_query q;
    remem_query_init(&q);
    const char *ns[] = {"t"};
    q.namespaces = ns;
    q.n_namespaces = 1;
    if (by_text) {
        q.text = "zebra seen";
    } else {
        q.vector = v;
        q.dim = dim;
    }
    q.profile = profile;
    q.k = 10;
    q.now = now;
    q.no_touch = 1;
    q.include_invalid = include_invalid;
    remem_result *r = NULL;
    int rc = remem_recall(db, &q, &r);
    if (rc) fprintf(stderr, "  %s: %s\n", profile, remem_errmsg(db));
    CHECK_INT(rc, REMEM_OK);
    const char *names[] = {"future", "past", "present"};
    out[0] = '\0';
    for (int i = 0; i < 3; i++)
        if (hit_of(r, names[i]))
            snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? "," : "", names[i]);
    if (keep)
        *keep = r;
    else
        remem_result_free(r);
    free(v);
}

static void test_replay_sees_only_the_past(void) {
    remem *db = timeline_store();
    if (!db) return;
    char got[64];
    for (const char *const *p = remem_profiles(); *p; p++) {
        /* At T0 the future memory does not exist yet; before any of them
         * nothing does; after all of them everything does. */
        ids_at(db, *p, T0, 0, 0, got, sizeof got, NULL);
        if (strcmp(got, "past,present") != 0) fprintf(stderr, "  profile %s at T0\n", *p);
        CHECK_STR(got, "past,present");
        ids_at(db, *p, T0 - 3 * HOUR, 0, 0, got, sizeof got, NULL);
        CHECK_STR(got, "");
        ids_at(db, *p, T0 + 2 * HOUR, 0, 0, got, sizeof got, NULL);
        CHECK_STR(got, "future,past,present");
        /* include_invalid brings back the hidden, not the unwritten. */
        ids_at(db, *p, T0, 0, 1, got, sizeof got, NULL);
        CHECK_STR(got, "past,present");
        /* The clock (no now given) is after all three. */
        ids_at(db, *p, 0, 0, 0, got, sizeof got, NULL);
        CHECK_STR(got, "future,past,present");
    }
    /* The lexical lane too: every text holds "zebra". */
    ids_at(db, "default", T0, 1, 0, got, sizeof got, NULL);
    CHECK_STR(got, "past,present");
    /* The same `now` asked again (the allow bitmap kept between queries)
     * and then a later one: the kept bitmap must not outlive its span. */
    ids_at(db, "stream", T0 + HOUR - 1, 0, 0, got, sizeof got, NULL);
    CHECK_STR(got, "past,present");
    ids_at(db, "stream", T0 + HOUR, 0, 0, got, sizeof got, NULL);
    CHECK_STR(got, "future,past,present");
    ids_at(db, "stream", T0 - 1, 0, 0, got, sizeof got, NULL);
    CHECK_STR(got, "past");
    /* By hand, stream at T0 (half-life 7 days): the present memory is
     * brand new (recency 1), the past one 2 hours old. */
    remem_result *r = NULL;
    ids_at(db, "stream", T0, 0, 0, got, sizeof got, &r);
    const remem_hit *now_hit = hit_of(r, "present"), *past_hit = hit_of(r, "past");
    CHECK(now_hit && past_hit);
    if (now_hit && past_hit) {
        CHECK_NEAR(now_hit->recency, 1.0, 1e-12);
        CHECK_NEAR(past_hit->recency, pow(0.5, 2.0 / (24 * 7)), 1e-12);
        CHECK(r->n == 2 && r->hits[0].mem.id && strcmp(r->hits[0].mem.id, "present") == 0);
    }
    remem_result_free(r);
    remem_close(db);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_long_query_refused_fast);
    RUN(test_query_at_limit_answered_fast);
    RUN(test_long_query_answered);
    RUN(test_term_repeats_count_once);
    RUN(test_distinct_terms_capped);
    RUN(test_invalid_utf8_add);
    RUN(test_invalid_utf8_edit);
    RUN(test_blank_text_refused);
    RUN(test_replay_sees_only_the_past);
    return TEST_EXIT();
}
