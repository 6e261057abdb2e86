/*
 * test_abi.c: the promises include/remem.h makes about versions and struct
 * sizes (STRUCT SIZES). A caller compiled against an older, smaller remem.h
 * is simulated with a struct whose size field says fewer bytes and whose
 * bytes beyond that are garbage: the library must read only the caller's
 * bytes (defaults for the rest) and never write past them. A struct that
 * never went through its init function, or one from a newer header, is
 * refused with REMEM_EINVAL and a message that says so. The exported
 * symbol list itself is checked by tests/e2e/abi_symbols.sh.
 */
#include <stddef.h>
#include <stdint.h>

#include "remem.h"
#include "test.h"

#define GARBAGE 0xA5

/* The size remem_query had before w_context was appended: a real older
 * layout, since fields are only ever appended. */
#define OLD_QUERY_SIZE  offsetof(remem_query, w_context)
/* A remem_memory that ends after text: no importance, times, metadata,
 * links or vector. Everything after must take the defaults. */
#define OLD_MEMORY_SIZE offsetof(remem_memory, importance)
/* That older remem_memory as its header declared it. */
typedef struct old_memory {
    size_t size;
    const char *ns, *id, *kind, *tier, *text;
} old_memory;
_Static_assert(sizeof(old_memory) == OLD_MEMORY_SIZE, "old_memory is remem_memory's prefix");
/* A remem_patch without actor. */
#define OLD_PATCH_SIZE   offsetof(remem_patch, actor)
/* remem_options up to the embedder settings, without durability & co. */
#define OLD_OPTIONS_SIZE offsetof(remem_options, durability)

static remem *open_mem(void) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    int rc = remem_open(":memory:", &o, &db);
    if (rc) fprintf(stderr, "  open: %s\n", remem_errmsg(db));
    CHECK_INT(rc, REMEM_OK);
    return db;
}

static int all_garbage(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != GARBAGE) return 0;
    return 1;
}

static void test_version(void) {
    CHECK_STR(remem_version(), REMEM_VERSION);
    CHECK_INT(remem_version_number(), REMEM_VERSION_NUMBER);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", REMEM_VERSION_MAJOR, REMEM_VERSION_MINOR,
             REMEM_VERSION_PATCH);
    CHECK_STR(REMEM_VERSION, want);
    CHECK_INT(REMEM_VERSION_NUMBER,
              REMEM_VERSION_MAJOR * 10000 + REMEM_VERSION_MINOR * 100 + REMEM_VERSION_PATCH);
}

/* The init macros record the caller's sizeof, and the real functions
 * write no byte past the size they are given. */
static void test_init_writes_only_size(void) {
    remem_query q;
    remem_query_init(&q);
    CHECK_INT(q.size, sizeof q);
    CHECK(isnan(q.w_context) && q.normalize == -1 && q.candidates == -1);
    remem_memory m;
    remem_memory_init(&m);
    CHECK_INT(m.size, sizeof m);
    CHECK(m.importance == -1);
    remem_patch p;
    remem_patch_init(&p);
    CHECK_INT(p.size, sizeof p);
    CHECK_INT(p.fields, 0);

    _Alignas(max_align_t) unsigned char buf[sizeof(remem_query) + 64];
    memset(buf, GARBAGE, sizeof buf);
    remem_query_init_((remem_query *)buf, OLD_QUERY_SIZE);
    CHECK_INT(((remem_query *)buf)->size, OLD_QUERY_SIZE);
    CHECK(all_garbage(buf + OLD_QUERY_SIZE, sizeof buf - OLD_QUERY_SIZE));
    memset(buf, GARBAGE, sizeof buf);
    remem_memory_init_((remem_memory *)buf, OLD_MEMORY_SIZE);
    CHECK(all_garbage(buf + OLD_MEMORY_SIZE, sizeof buf - OLD_MEMORY_SIZE));
    memset(buf, GARBAGE, sizeof buf);
    remem_patch_init_((remem_patch *)buf, OLD_PATCH_SIZE);
    CHECK(all_garbage(buf + OLD_PATCH_SIZE, sizeof buf - OLD_PATCH_SIZE));
    memset(buf, GARBAGE, sizeof buf);
    remem_options_init_((remem_options *)buf, OLD_OPTIONS_SIZE);
    CHECK(all_garbage(buf + OLD_OPTIONS_SIZE, sizeof buf - OLD_OPTIONS_SIZE));
}

/* A zeroed struct (never initialised) and one larger than the library's
 * are refused by every call that reads it, and nothing is written. */
static void test_refused_sizes(void) {
    remem *db = open_mem();
    remem_memory m;
    memset(&m, 0, sizeof m);
    m.ns = "a";
    m.text = "never initialised";
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_EINVAL);
    CHECK_STR(remem_errmsg(db), "remem_memory was not initialised with remem_memory_init");
    CHECK_INT(remem_add_batch(db, &m, 1, NULL, 0, NULL), REMEM_EINVAL);
    CHECK(remem_memory_to_json(&m) == NULL);

    remem_memory_init(&m);
    m.ns = "a";
    m.text = "from a newer header";
    m.size = sizeof m + 8;
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "newer remem.h");

    remem_query q;
    memset(&q, 0, sizeof q);
    const char *ns[] = {"a"};
    q.namespaces = ns;
    q.n_namespaces = 1;
    q.text = "anything";
    remem_result *r = (remem_result *)1;
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EINVAL);
    CHECK(r == NULL);
    CHECK_STR(remem_errmsg(db), "remem_query was not initialised with remem_query_init");

    remem_patch p;
    memset(&p, 0, sizeof p);
    p.fields = REMEM_SET_IMPORTANCE;
    p.importance = 0.5;
    CHECK_INT(remem_update(db, "a", "x", &p), REMEM_EINVAL);
    CHECK_STR(remem_errmsg(db), "remem_patch was not initialised with remem_patch_init");

    remem_line *h = (remem_line *)1;
    memset(&m, 0, sizeof m);
    CHECK_INT(remem_parse_line(db, "{\"text\":\"t\",\"ns\":\"a\"}", 22, NULL, &m, &h),
              REMEM_EINVAL);
    CHECK(h == NULL);
    CHECK(m.text == NULL);

    char *json = NULL;
    CHECK_INT(remem_stats(db, NULL, &json), REMEM_OK);
    CHECK_HAS(json, "\"memories\":0");
    remem_free(json);
    remem_close(db);

    remem_options o;
    memset(&o, 0, sizeof o);
    remem *bad = NULL;
    CHECK_INT(remem_open(":memory:", &o, &bad), REMEM_EINVAL);
    CHECK_STR(remem_errmsg(bad), "remem_options was not initialised with remem_options_init");
    remem_close(bad);
}

/* An old memory (ends after text) adds, with the defaults for every field
 * it lacks, though its bytes beyond say otherwise; a batch of old memories
 * is walked at the caller's stride. */
static void test_old_memory(void) {
    remem *db = open_mem();
    enum { N = 3 };
    old_memory buf[N]; /* the old caller's array */
    _Alignas(max_align_t) unsigned char one[sizeof(remem_memory)];
    memset(one, GARBAGE, sizeof one);
    remem_memory *m = (remem_memory *)one;
    remem_memory_init_(m, OLD_MEMORY_SIZE);
    m->ns = "old";
    m->id = "single";
    m->kind = "decision";
    m->text = "an old caller's memory";
    char id[64];
    int outcome = 0;
    int rc = remem_add(db, m, id, sizeof id, &outcome);
    if (rc) fprintf(stderr, "  add: %s\n", remem_errmsg(db));
    CHECK_INT(rc, REMEM_OK);
    CHECK_STR(id, "single");
    remem_record *rec = NULL;
    CHECK_INT(remem_get(db, "old", "single", &rec), REMEM_OK);
    if (rec) {
        const remem_memory *got = remem_record_memory(rec);
        CHECK_NEAR(got->importance, 0.9, 1e-12); /* the kind's default, not garbage */
        CHECK(got->metadata == NULL && got->links == NULL);
        CHECK_INT(got->expires_at, 0);
        CHECK_INT(got->size, sizeof(remem_memory));
    }
    remem_record_free(rec);

    static const char *texts[N] = {"first old", "second old", "third old"};
    memset(buf, GARBAGE, sizeof buf);
    for (int i = 0; i < N; i++) {
        old_memory *e = &buf[i];
        remem_memory_init_((remem_memory *)e, OLD_MEMORY_SIZE);
        e->ns = "old";
        e->text = texts[i];
    }
    char ids[N][64];
    long failed = 0;
    rc = remem_add_batch(db, (remem_memory *)buf, N, &ids[0][0], 64, &failed);
    if (rc) fprintf(stderr, "  batch: %s\n", remem_errmsg(db));
    CHECK_INT(rc, REMEM_OK);
    CHECK_INT(failed, -1);
    for (int i = 0; i < N; i++) {
        rec = NULL;
        CHECK_INT(remem_get(db, "old", ids[i], &rec), REMEM_OK);
        if (rec) CHECK_STR(remem_record_memory(rec)->text, texts[i]);
        remem_record_free(rec);
    }
    /* An element whose size differs from the first is refused by index. */
    buf[1].size = sizeof(remem_memory);
    CHECK_INT(remem_add_batch(db, (remem_memory *)buf, N, NULL, 0, &failed), REMEM_EINVAL);
    CHECK_INT(failed, 1);

    /* remem_memory_to_json reads only the old bytes. */
    char *js = remem_memory_to_json(m);
    CHECK(js != NULL);
    if (js) CHECK(strstr(js, "\"metadata\":{}") || !strstr(js, "\"metadata\":\""));
    remem_free(js);

    /* remem_parse_line fills an old struct only up to its size. */
    memset(one, GARBAGE, sizeof one);
    remem_memory_init_(m, OLD_MEMORY_SIZE);
    remem_line *h = NULL;
    const char *line = "{\"ns\":\"old\",\"text\":\"parsed\",\"importance\":0.25,\"links\":[\"x\"]}";
    CHECK_INT(remem_parse_line(db, line, strlen(line), NULL, m, &h), REMEM_OK);
    CHECK_STR(m->text, "parsed");
    CHECK_INT(m->size, OLD_MEMORY_SIZE);
    CHECK(all_garbage(one + OLD_MEMORY_SIZE, sizeof one - OLD_MEMORY_SIZE));
    remem_free_line(h);
    remem_close(db);
}

/* An old query (before w_context) ranks exactly as a full one with the
 * profile's w_context, though its garbage bytes would say NaN-free nonsense. */
static void test_old_query(void) {
    remem *db = open_mem();
    const char *texts[] = {"the kettle is in the left cupboard", "tea bags are in the drawer",
                           "the cupboard door squeaks", "buy more milk"};
    for (size_t i = 0; i < 4; i++) {
        remem_memory m;
        remem_memory_init(&m);
        m.ns = "q";
        m.text = texts[i];
        CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    }
    const char *ns[] = {"q"};
    remem_query full;
    remem_query_init(&full);
    full.namespaces = ns;
    full.n_namespaces = 1;
    full.text = "where is the kettle cupboard";
    full.no_touch = 1;
    full.now = 1763700000000LL;
    remem_result *a = NULL, *b = NULL;
    CHECK_INT(remem_recall(db, &full, &a), REMEM_OK);

    _Alignas(max_align_t) unsigned char buf[sizeof(remem_query)];
    memset(buf, GARBAGE, sizeof buf);
    remem_query *old = (remem_query *)buf;
    remem_query_init_(old, OLD_QUERY_SIZE);
    old->namespaces = ns;
    old->n_namespaces = 1;
    old->text = full.text;
    old->no_touch = 1;
    old->now = full.now;
    int rc = remem_recall(db, old, &b);
    if (rc) fprintf(stderr, "  recall: %s\n", remem_errmsg(db));
    CHECK_INT(rc, REMEM_OK);
    if (a && b) {
        CHECK_INT(b->n, a->n);
        for (size_t i = 0; i < a->n && i < b->n; i++) {
            CHECK_STR(b->hits[i].mem.id, a->hits[i].mem.id);
            CHECK_NEAR(b->hits[i].score, a->hits[i].score, 0);
            CHECK_NEAR(b->hits[i].context, a->hits[i].context, 0);
        }
        /* Hits are the library's memories: their size is the library's. */
        if (b->n) CHECK_INT(b->hits[0].mem.size, sizeof(remem_memory));
        char *js = remem_result_to_json(b);
        CHECK(js != NULL);
        remem_free(js);
    }
    remem_result_free(a);
    remem_result_free(b);
    remem_close(db);
}

/* An old patch (without actor) updates; the actor is the default (none). */
static void test_old_patch_and_options(void) {
    remem *db = open_mem();
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "p";
    m.id = "x";
    m.text = "patched later";
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    _Alignas(max_align_t) unsigned char buf[sizeof(remem_patch)];
    memset(buf, GARBAGE, sizeof buf);
    remem_patch *p = (remem_patch *)buf;
    remem_patch_init_(p, OLD_PATCH_SIZE);
    p->fields = REMEM_SET_IMPORTANCE;
    p->importance = 0.75;
    int rc = remem_update(db, "p", "x", p);
    if (rc) fprintf(stderr, "  update: %s\n", remem_errmsg(db));
    CHECK_INT(rc, REMEM_OK);
    char *hist = NULL;
    CHECK_INT(remem_history(db, "p", "x", &hist), REMEM_OK);
    CHECK_HAS(hist, "\"actor\":null");
    remem_free(hist);
    remem_close(db);

    _Alignas(max_align_t) unsigned char ob[sizeof(remem_options)];
    memset(ob, GARBAGE, sizeof ob);
    remem_options *o = (remem_options *)ob;
    remem_options_init_(o, OLD_OPTIONS_SIZE);
    o->embedder = "hash";
    remem *db2 = NULL;
    rc = remem_open(":memory:", o, &db2);
    if (rc) fprintf(stderr, "  open: %s\n", remem_errmsg(db2));
    CHECK_INT(rc, REMEM_OK); /* read_only etc. are the defaults, not 0xA5A5A5A5 */
    remem_memory_init(&m);
    m.ns = "p";
    m.text = "writable";
    CHECK_INT(remem_add(db2, &m, NULL, 0, NULL), REMEM_OK);
    remem_close(db2);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_version);
    RUN(test_init_writes_only_size);
    RUN(test_refused_sizes);
    RUN(test_old_memory);
    RUN(test_old_query);
    RUN(test_old_patch_and_options);
    return TEST_EXIT();
}
