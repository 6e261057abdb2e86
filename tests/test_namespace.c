/*
 * test_namespace.c: whole-namespace work of src/engine/namespace.c: stats,
 * the namespace list, clear, export and import round trips, reindex, and
 * the model lock that keeps two embedders' vectors out of one namespace.
 *
 * Split from the former test_engine.c; the shared helpers are in
 * tests/support/engine_fixture.h.
 */
#include "support/engine_fixture.h"

static void test_stats_namespaces_clear(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "a", "a1", "first of a", NULL, NULL), REMEM_OK);
    CHECK_INT(add_text(db, "a", "a2", "second of a", NULL, NULL), REMEM_OK);
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "a";
    m.id = "a3";
    m.text = "a decision of a";
    m.kind = "decision";
    m.tier = "long";
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    CHECK_INT(add_text(db, "b", "b1", "first of b", NULL, NULL), REMEM_OK);
    CHECK_INT(add_text(db, "b", "b2", "second of b", NULL, NULL), REMEM_OK);
    CHECK_INT(remem_invalidate(db, "b", "b2", NULL, NULL), REMEM_OK);
    char *js = NULL;
    CHECK_INT(remem_stats(db, NULL, &js), REMEM_OK);
    json_t *o = json_loads(js, 0, NULL);
    remem_free(js);
    CHECK_INT(json_integer_value(json_object_get(o, "memories")), 5);
    CHECK_INT(json_integer_value(json_object_get(o, "invalidated")), 1);
    json_t *per = json_object_get(o, "by_namespace");
    CHECK_INT(json_integer_value(json_object_get(per, "a")), 3);
    CHECK_INT(json_integer_value(json_object_get(per, "b")), 2);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "by_kind"), "observation")), 4);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "by_kind"), "decision")), 1);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "by_tier"), "short")), 4);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "by_tier"), "long")), 1);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "by_model"), "hash-v1-384")),
              5);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "embedder"), "dim")), 384);
    json_decref(o);
    CHECK_INT(remem_stats(db, "a", &js), REMEM_OK);
    o = json_loads(js, 0, NULL);
    remem_free(js);
    CHECK_INT(json_integer_value(json_object_get(o, "memories")), 3);
    CHECK_INT(json_integer_value(json_object_get(o, "invalidated")), 0);
    json_decref(o);
    CHECK_INT(remem_namespaces(db, &js), REMEM_OK);
    o = json_loads(js, 0, NULL);
    remem_free(js);
    CHECK_INT(json_array_size(o), 2);
    json_t *first = json_array_get(o, 0);
    CHECK_STR(json_string_value(json_object_get(first, "ns")), "a");
    CHECK_INT(json_integer_value(json_object_get(first, "count")), 3);
    CHECK_STR(json_string_value(json_object_get(first, "model")), "hash-v1-384");
    CHECK_INT(json_integer_value(json_object_get(first, "dim")), 384);
    json_decref(o);

    /* clear: every memory of a, and only of a. */
    CHECK_INT(recall_finds(db, "a", "first", "a1", 0, 0, NULL), 1);
    int64_t deleted = -1;
    CHECK_INT(remem_clear(db, "a", &deleted), REMEM_OK);
    CHECK_INT(deleted, 3);
    CHECK_INT(ns_count(db, "a"), 0);
    CHECK_INT(ns_count(db, "b"), 2);
    CHECK_INT(recall_finds(db, "a", "first", "a1", 0, 0, NULL), 0);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "a", "a1", &r), REMEM_ENOTFOUND);
    CHECK_INT(remem_history(db, "a", "*", &js), REMEM_OK);
    CHECK_HAS(js, "\"op\":\"clear\"");
    CHECK_HAS(js, "\"deleted\":3");
    remem_free(js);
    CHECK_INT(remem_namespaces(db, &js), REMEM_OK);
    CHECK(js && !strstr(js, "\"a\""));
    remem_free(js);
    /* The namespace takes memories again. */
    CHECK_INT(add_text(db, "a", "a1", "first of a again", NULL, NULL), REMEM_OK);
    CHECK_INT(recall_finds(db, "a", "first", "a1", 0, 0, NULL), 1);
    CHECK_INT(remem_clear(db, "", NULL), REMEM_EINVAL);
    remem_close(db);
}

/* ---- export, import, reindex ---- */

typedef struct buf {
    char *data;
    size_t len, cap;
} buf;

static int buf_write(void *ctx, const char *data, size_t len) {
    buf *b = ctx;
    if (b->len + len + 1 > b->cap) {
        size_t cap = (b->cap + len + 1) * 2;
        char *d = realloc(b->data, cap);
        if (!d) return 1;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

static int stop_write(void *ctx, const char *data, size_t len) {
    (void)ctx, (void)data, (void)len;
    return 1;
}

/* Fields an import does not carry over (it is an add). */
static void drop_unported(json_t *o) {
    const char *keys[] = {"updated_at",     "accessed_at",   "access_count",
                          "invalidated_at", "superseded_by", "duplicate_count"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) json_object_del(o, keys[i]);
}

static void test_export_import(void) {
    remem *a = open_store(":memory:");
    remem *b = open_store(":memory:");
    if (!a || !b) return;
    int dim = remem_embedder_dim(a);
    float *v = calloc((size_t)dim, sizeof *v);
    axis_vec(v, dim, 0.3);
    const char *texts[] = {"Maria prefers tea over coffee", "The deploy failed on step 3",
                           "Lesson: run the migrations before the deploy",
                           "Unicode: caf\xc3\xa9 \xe2\x98\x95 \"quoted\" \\ back"};
    for (int i = 0; i < 4; i++) {
        remem_memory m;
        remem_memory_init(&m);
        char id[16];
        snprintf(id, sizeof id, "e%d", i);
        m.ns = i < 3 ? "ns:one" : "ns:two";
        m.id = id;
        m.text = texts[i];
        m.kind = i == 2 ? "lesson" : NULL;
        m.tier = i == 1 ? "long" : NULL;
        m.importance = i == 0 ? 0.125 : -1;
        m.created_at = T0 - i * HOUR_MS;
        m.expires_at = i == 1 ? T0 + 48 * HOUR_MS : 0;
        m.metadata = i == 0 ? "{\"reward\":0.5,\"nested\":{\"k\":[1,2]}}" : NULL;
        m.links = i == 2 ? "[\"e1\"]" : NULL;
        if (i == 3) {
            m.vector = v;
            m.dim = dim;
        }
        CHECK_INT(remem_add(a, &m, NULL, 0, NULL), REMEM_OK);
    }
    buf out = {0};
    int64_t count = 0;
    CHECK_INT(remem_export(a, NULL, 1, buf_write, &out, &count), REMEM_OK);
    CHECK_INT(count, 4);
    /* Import it line by line into the empty store, as one batch. */
    remem_memory ms[8];
    remem_line *holders[8] = {0};
    size_t n = 0;
    for (char *line = out.data; line && *line && n < 8;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        remem_memory_init(&ms[n]);
        CHECK_INT(remem_parse_line(b, line, len, NULL, &ms[n], &holders[n]), REMEM_OK);
        n++;
        line = nl ? nl + 1 : NULL;
    }
    CHECK_INT(n, 4);
    long bad = 7;
    CHECK_INT(remem_add_batch(b, ms, n, NULL, 0, &bad), REMEM_OK);
    CHECK_INT(bad, -1);
    for (size_t i = 0; i < n; i++) remem_free_line(holders[i]);
    buf back = {0};
    CHECK_INT(remem_export(b, NULL, 1, buf_write, &back, &count), REMEM_OK);
    CHECK_INT(count, 4);
    /* Line by line the same memory: every field the format carries, the
     * vector to float precision. */
    char *la = out.data, *lb = back.data;
    for (int i = 0; i < 4 && la && lb; i++) {
        char *na = strchr(la, '\n'), *nb = strchr(lb, '\n');
        json_t *ja = json_loadb(la, na ? (size_t)(na - la) : strlen(la), 0, NULL);
        json_t *jb = json_loadb(lb, nb ? (size_t)(nb - lb) : strlen(lb), 0, NULL);
        CHECK(ja && jb);
        json_t *va = json_object_get(ja, "vector"), *vb = json_object_get(jb, "vector");
        CHECK_INT(json_array_size(va), dim);
        CHECK_INT(json_array_size(vb), dim);
        double maxdiff = 0;
        for (size_t j = 0; j < json_array_size(va) && j < json_array_size(vb); j++) {
            double d = fabs(json_number_value(json_array_get(va, j)) -
                            json_number_value(json_array_get(vb, j)));
            if (d > maxdiff) maxdiff = d;
        }
        CHECK(maxdiff < 1e-6);
        json_object_del(ja, "vector");
        json_object_del(jb, "vector");
        drop_unported(ja);
        drop_unported(jb);
        if (!json_equal(ja, jb)) {
            char *sa = json_dumps(ja, JSON_COMPACT), *sb = json_dumps(jb, JSON_COMPACT);
            fprintf(stderr, "  line %d differs:\n    %s\n    %s\n", i + 1, sa, sb);
            free(sa);
            free(sb);
            CHECK(0);
        }
        json_decref(ja);
        json_decref(jb);
        la = na ? na + 1 : NULL;
        lb = nb ? nb + 1 : NULL;
    }
    /* One namespace only, and without vectors. */
    buf one = {0};
    CHECK_INT(remem_export(b, "ns:two", 0, buf_write, &one, &count), REMEM_OK);
    CHECK_INT(count, 1);
    CHECK(one.data && !strstr(one.data, "\"vector\"") && strstr(one.data, "\"e3\""));
    /* A writer that stops: REMEM_EIO. */
    CHECK_INT(remem_export(b, NULL, 0, stop_write, NULL, &count), REMEM_EIO);
    free(out.data);
    free(back.data);
    free(one.data);
    free(v);
    remem_close(a);
    remem_close(b);
}

typedef struct progress_seen {
    int64_t calls, done, total;
} progress_seen;

static void on_progress(void *ctx, int64_t done, int64_t total) {
    progress_seen *p = ctx;
    p->calls++;
    p->done = done;
    p->total = total;
}

/* Cosine of memory id's stored vector to the embedding of text. */
static double sim_to_text(remem *db, const char *ns, const char *id, const char *text) {
    int dim = remem_embedder_dim(db);
    float *qv = malloc((size_t)dim * sizeof *qv);
    double sim = NAN;
    if (remem_embed(db, &text, 1, qv) == REMEM_OK) {
        remem_query q;
        remem_query_init(&q);
        const char *nss[1] = {ns};
        q.namespaces = nss;
        q.n_namespaces = 1;
        q.vector = qv;
        q.dim = dim;
        q.k = 100;
        q.no_touch = 1;
        q.include_invalid = 1;
        remem_result *r = NULL;
        if (remem_recall(db, &q, &r) == REMEM_OK)
            for (size_t i = 0; i < r->n; i++)
                if (strcmp(r->hits[i].mem.id, id) == 0) sim = r->hits[i].similarity;
        remem_result_free(r);
    }
    free(qv);
    return sim;
}

static void test_reindex(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    int dim = remem_embedder_dim(db);
    float *v = calloc((size_t)dim, sizeof *v);
    const char *texts[] = {"The cat sat on the warm windowsill",
                           "Quarterly revenue grew by twelve percent",
                           "Remember to water the tomato plants"};
    for (int i = 0; i < 3; i++) {
        remem_memory m;
        remem_memory_init(&m);
        char id[16];
        snprintf(id, sizeof id, "r%d", i);
        axis_vec(v, dim, 0.1 * i); /* not the text's embedding */
        m.ns = i < 2 ? "r" : "r2";
        m.id = id;
        m.text = texts[i];
        m.vector = v;
        m.dim = dim;
        CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    }
    /* Before: the stored vectors are the hand-made ones. */
    double before = sim_to_text(db, "r", "r0", texts[0]);
    CHECK(before < 0.9);
    progress_seen p = {0};
    CHECK_INT(remem_reindex(db, "r", on_progress, &p), REMEM_OK);
    CHECK(p.calls >= 1);
    CHECK_INT(p.done, 2);
    CHECK_INT(p.total, 2);
    CHECK_NEAR(sim_to_text(db, "r", "r0", texts[0]), 1.0, 1e-5);
    CHECK_NEAR(sim_to_text(db, "r", "r1", texts[1]), 1.0, 1e-5);
    /* The other namespace was left alone... */
    CHECK(sim_to_text(db, "r2", "r2", texts[2]) < 0.9);
    /* ...until a reindex of everything. */
    CHECK_INT(remem_reindex(db, NULL, NULL, NULL), REMEM_OK);
    CHECK_NEAR(sim_to_text(db, "r2", "r2", texts[2]), 1.0, 1e-5);
    char *js = NULL;
    CHECK_INT(remem_history(db, "r", "*", &js), REMEM_OK);
    CHECK_HAS(js, "\"op\":\"reindex\"");
    remem_free(js);
    CHECK_INT(ns_count(db, "r"), 2);
    free(v);
    remem_close(db);
}

/* Model lock: a namespace of hash vectors refuses a handle of another model
 * (the http embedder against the stand-in server), inside a batch too, until
 * a reindex moves it. */
static void test_model_mismatch(void) {
    tmpdir t;
    tmp_make(&t);
    remem *h = open_store(t.db);
    if (!h) return;
    CHECK_INT(add_text(h, "x", "x1", "a memory embedded by the hash model", NULL, NULL), REMEM_OK);
    CHECK_INT(add_text(h, "x", "x2", "another one of the hash model", NULL, NULL), REMEM_OK);
    remem_close(h);
    embed_server *s = embed_server_start(384);
    CHECK(s != NULL);
    if (!s) {
        tmp_done(&t);
        return;
    }
    remem_options o;
    remem_options_init(&o);
    o.embedder = "http";
    o.embed_url = embed_server_url(s);
    o.embed_model = "stand-in";
    o.embed_timeout_ms = 5000;
    remem *w = NULL;
    int rc = remem_open(t.db, &o, &w);
    CHECK_INT(rc, REMEM_OK);
    if (rc) {
        fprintf(stderr, "  %s\n", remem_errmsg(w));
        remem_close(w);
        embed_server_stop(s);
        tmp_done(&t);
        return;
    }
    CHECK_STR(remem_embedder_model(w), "http:stand-in");
    CHECK_INT(remem_embedder_dim(w), 384);
    /* Writing into x: refused, nothing changes. */
    CHECK_INT(add_text(w, "x", "x3", "a memory of the other model", NULL, NULL), REMEM_EMODEL);
    CHECK_HAS(remem_errmsg(w), "hash-v1-384");
    CHECK_HAS(remem_errmsg(w), "http:stand-in");
    CHECK_HAS(remem_errmsg(w), "reindex");
    CHECK_INT(ns_count(w, "x"), 2);
    /* Nor can a text update re-embed one of its memories. */
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_TEXT;
    p.text = "changed";
    CHECK_INT(remem_update(w, "x", "x1", &p), REMEM_EMODEL);
    remem_record *r = NULL;
    CHECK_INT(remem_get(w, "x", "x1", &r), REMEM_OK);
    if (r) CHECK_STR(remem_record_memory(r)->text, "a memory embedded by the hash model");
    remem_record_free(r);
    /* Reading x with this model's vectors: refused too. */
    remem_query q;
    remem_query_init(&q);
    const char *nss[1] = {"x"};
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.text = "memory";
    remem_result *res = NULL;
    CHECK_INT(remem_recall(w, &q, &res), REMEM_EMODEL);
    CHECK_HAS(remem_errmsg(w), "reindex");
    /* A batch whose 4th memory goes to x: nothing of it is written, although
     * the first three had been inserted when the 4th failed. */
    remem_memory ms[5];
    char texts[5][32];
    for (int i = 0; i < 5; i++) {
        remem_memory_init(&ms[i]);
        snprintf(texts[i], sizeof texts[i], "batch line %d", i);
        ms[i].ns = i == 3 ? "x" : "y";
        ms[i].text = texts[i];
    }
    long bad = -1;
    CHECK_INT(remem_add_batch(w, ms, 5, NULL, 0, &bad), REMEM_EMODEL);
    CHECK_INT(bad, 3);
    CHECK_INT(ns_count(w, "y"), 0);
    CHECK_INT(ns_count(w, "x"), 2);
    /* Without the 4th it goes in, under the http model. */
    ms[3].ns = "y";
    CHECK_INT(remem_add_batch(w, ms, 5, NULL, 0, &bad), REMEM_OK);
    CHECK_INT(ns_count(w, "y"), 5);
    /* reindex is the way out. */
    CHECK_INT(remem_reindex(w, "x", NULL, NULL), REMEM_OK);
    res = NULL;
    CHECK_INT(remem_recall(w, &q, &res), REMEM_OK);
    CHECK(res && res->n == 2);
    remem_result_free(res);
    CHECK_INT(add_text(w, "x", "x3", "a memory of the other model", NULL, NULL), REMEM_OK);
    remem_close(w);
    /* Now the hash handle is the one refused. */
    h = open_store(t.db);
    if (h) {
        res = NULL;
        CHECK_INT(remem_recall(h, &q, &res), REMEM_EMODEL);
        CHECK_HAS(remem_errmsg(h), "http:stand-in");
        remem_close(h);
    }
    embed_server_stop(s);
    tmp_done(&t);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_stats_namespaces_clear);
    RUN(test_export_import);
    RUN(test_reindex);
    RUN(test_model_mismatch);
    return TEST_EXIT();
}
