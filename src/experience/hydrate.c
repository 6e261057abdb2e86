/*
 * hydrate.c: seed 000's first-use hydration. A namespace with no decision
 * yet is filled from pre-seeded decision files, so an agent deployed fresh
 * has something to retrieve; a namespace that already holds decisions is
 * left alone, so hydrating twice adds once.
 *
 * A file is the seed's preseeded_memory*.json (a dump of its "decisions"
 * collection: {"decisions": {"ids", "documents", "metadatas",
 * "embeddings"}}), or a plain list of decision records (bare, or under
 * "decisions"). A record may use the seed's field names (conflict_title,
 * action_type, target_domain, metrics_snapshot, episode_id) or remem's
 * (title, action, domain, metrics, episode); they are stored under
 * remem's, with any other field kept as it is. The seed's embeddings are
 * not used: they come from another model (MiniLM, or an adler32 bag of
 * words), and a namespace holds one model's vectors, so every document is
 * embedded again by the handle's embedder.
 *
 * Everything is checked before anything is written, and all the files'
 * decisions go in one transaction (remem_add_batch): a bad record leaves
 * the namespace as it was. A record without an id gets one derived from
 * its content ("dec_" and a hash), so two processes hydrating at once
 * write the same ids and the second only replaces the first's rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experience/experience.h"

typedef struct pending {
    char *id;
    char *text;
    char *meta;
} pending;

typedef struct batch {
    pending *p;
    size_t n, cap;
    json_t *seen; /* ids already taken in this call: the first wins */
} batch;

static void batch_free(batch *b) {
    for (size_t i = 0; i < b->n; i++) {
        free(b->p[i].id);
        free(b->p[i].text);
        free(b->p[i].meta);
    }
    free(b->p);
    json_decref(b->seen);
}

/* The value of the first of two names a field may have. */
static json_t *either(json_t *rec, const char *a, const char *b) {
    json_t *v = json_object_get(rec, a);
    return v ? v : json_object_get(rec, b);
}

static const char *const renamed[][2] = {
    {"conflict_title", "title"},     {"action_type", "action"}, {"target_domain", "domain"},
    {"metrics_snapshot", "metrics"}, {"episode", "episode_id"}, {NULL, NULL}};

/* rec (a decision record in either spelling) as remem's metadata; NULL
 * with err set when a required field is missing or of the wrong type. */
static json_t *normalise(json_t *rec, char *err, size_t cap) {
    if (!json_is_object(rec)) return snprintf(err, cap, "a decision must be an object"), NULL;
    static const char *const req[][3] = {{"title", "conflict_title", "string"},
                                         {"action", "action_type", "string"},
                                         {"domain", "target_domain", "string"},
                                         {"reward", "reward", "number"}};
    for (size_t i = 0; i < 4; i++) {
        json_t *v = either(rec, req[i][0], req[i][1]);
        int ok = !strcmp(req[i][2], "string") ? json_is_string(v) : json_is_number(v);
        if (!ok)
            return snprintf(err, cap, "%s (or %s): %s", req[i][0], req[i][1],
                            v ? "has the wrong type" : "is missing"),
                   NULL;
    }
    json_t *reasoning = json_object_get(rec, "reasoning");
    json_t *metrics = either(rec, "metrics", "metrics_snapshot");
    json_t *ep = either(rec, "episode_id", "episode");
    if (reasoning && !json_is_string(reasoning))
        return snprintf(err, cap, "reasoning: expected a string"), NULL;
    if (metrics && !json_is_object(metrics))
        return snprintf(err, cap, "metrics (or metrics_snapshot): expected an object"), NULL;
    if (ep && !json_is_string(ep) && !json_is_null(ep))
        return snprintf(err, cap, "episode_id: expected a string"), NULL;
    json_t *m = json_object();
    json_object_set(m, "title", either(rec, "title", "conflict_title"));
    json_object_set(m, "action", either(rec, "action", "action_type"));
    json_object_set(m, "domain", either(rec, "domain", "target_domain"));
    json_object_set_new(m, "reward", json_real(json_number_value(json_object_get(rec, "reward"))));
    json_object_set_new(m, "reasoning", json_string(reasoning ? json_string_value(reasoning) : ""));
    json_object_set_new(m, "metrics", metrics ? json_deep_copy(metrics) : json_object());
    if (json_is_string(ep) && json_string_length(ep)) json_object_set(m, "episode_id", ep);
    const char *k;
    json_t *v;
    json_object_foreach(rec, k, v) {
        int known = !strcmp(k, "id") || !strcmp(k, "reward") || !strcmp(k, "reasoning");
        for (size_t i = 0; renamed[i][0] && !known; i++)
            known = !strcmp(k, renamed[i][0]) || !strcmp(k, renamed[i][1]);
        known |= !strcmp(k, "title") || !strcmp(k, "action") || !strcmp(k, "domain");
        if (!known) json_object_set(m, k, v);
    }
    return m;
}

/* Queue one decision: rec its record, id and doc (may be NULL) the
 * file's. */
static int queue(batch *b, json_t *rec, json_t *id, json_t *doc, char *err, size_t cap) {
    if (id && !json_is_string(id)) return snprintf(err, cap, "id: expected a string"), -1;
    if (doc && !json_is_string(doc) && !json_is_null(doc))
        return snprintf(err, cap, "document: expected a string"), -1;
    json_t *meta = normalise(rec, err, cap);
    if (!meta) return -1;
    strbuf text;
    sb_init(&text);
    if (json_is_string(doc) && json_string_length(doc))
        sb_puts(&text, json_string_value(doc));
    else
        exp_decision_text(meta, &text);
    char *mj = json_dumps(meta, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(meta);
    char idbuf[300];
    if (id && json_string_length(id)) {
        snprintf(idbuf, sizeof idbuf, "%s", json_string_value(id));
    } else {
        /* the same record gives the same id: see the top of the file */
        strbuf key;
        sb_init(&key);
        sb_printf(&key, "%s\n%s", text.data ? text.data : "", mj ? mj : "");
        snprintf(idbuf, sizeof idbuf, "dec_%016llx",
                 (unsigned long long)util_hash64(key.data ? key.data : "", key.len));
        sb_free(&key);
    }
    if (json_object_get(b->seen, idbuf)) { /* an id seen before in this call */
        free(mj);
        sb_free(&text);
        return 0;
    }
    if (b->n == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 64;
        pending *np = realloc(b->p, ncap * sizeof *np);
        if (!np) {
            free(mj);
            sb_free(&text);
            return snprintf(err, cap, "out of memory"), -2;
        }
        b->p = np;
        b->cap = ncap;
    }
    pending *p = &b->p[b->n];
    p->id = strdup(idbuf);
    p->text = sb_take(&text);
    p->meta = mj;
    b->n++;
    json_object_set_new(b->seen, idbuf, json_true());
    if (!p->id || !p->text || !p->meta) return snprintf(err, cap, "out of memory"), -2;
    return 0;
}

/* Queue every decision of one file's contents; err names where. */
static int queue_file(batch *b, json_t *file, char *err, size_t cap) {
    char sub[400];
    json_t *d = json_is_object(file) ? json_object_get(file, "decisions") : file;
    if (json_is_array(d)) {
        size_t i;
        json_t *rec;
        json_array_foreach(d, i, rec) {
            int rc = queue(b, rec, json_object_get(rec, "id"), NULL, sub, sizeof sub);
            if (rc)
                return snprintf(err, cap, "%s[%zu]: %s", json_is_object(file) ? "decisions" : "", i,
                                sub),
                       rc;
        }
        return 0;
    }
    if (!json_is_object(d))
        return snprintf(err, cap,
                        "not a pre-seeded decisions file (expected a list of decisions, or an "
                        "object with \"decisions\")"),
               -1;
    json_t *ids = json_object_get(d, "ids"), *docs = json_object_get(d, "documents"),
           *metas = json_object_get(d, "metadatas");
    if (!json_is_array(metas))
        return snprintf(err, cap, "decisions.metadatas: expected a list"), -1;
    if (ids && (!json_is_array(ids) || json_array_size(ids) != json_array_size(metas)))
        return snprintf(err, cap, "decisions.ids: expected a list as long as metadatas"), -1;
    if (docs && (!json_is_array(docs) || json_array_size(docs) != json_array_size(metas)))
        return snprintf(err, cap, "decisions.documents: expected a list as long as metadatas"), -1;
    size_t i;
    json_t *rec;
    json_array_foreach(metas, i, rec) {
        int rc = queue(b, rec, json_array_get(ids, i), json_array_get(docs, i), sub, sizeof sub);
        if (rc) return snprintf(err, cap, "decisions.metadatas[%zu]: %s", i, sub), rc;
    }
    return 0;
}

int exp_hydrate(remem *db, const char *ns, json_t *files, json_t **result) {
    exp_summary s;
    int rc = exp_summarise(db, ns, &s);
    if (rc) return rc;
    json_decref(s.by_action);
    json_t *res = json_object();
    if (!res) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    json_object_set_new(res, "ns", json_string(ns));
    if (s.decisions > 0) {
        char why[160];
        snprintf(why, sizeof why, "the namespace already holds %lld decisions",
                 (long long)s.decisions);
        json_object_set_new(res, "hydrated", json_integer(0));
        json_object_set_new(res, "skipped", json_true());
        json_object_set_new(res, "reason", json_string(why));
        json_object_set_new(res, "ids", json_array());
        json_object_set_new(res, "text", json_string(why));
        *result = res;
        return REMEM_OK;
    }
    batch b = {0};
    b.seen = json_object();
    char err[600];
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) {
        char sub[500];
        int q = queue_file(&b, f, sub, sizeof sub);
        if (q) {
            snprintf(err, sizeof err, "files[%zu]: %s", i, sub);
            batch_free(&b);
            json_decref(res);
            return eng_fail(db, q == -2 ? REMEM_ENOMEM : REMEM_EINVAL, "hydrate: %s", err);
        }
    }
    json_t *ids = json_array();
    if (b.n) {
        remem_memory *ms = calloc(b.n, sizeof *ms);
        if (!ms) {
            batch_free(&b);
            json_decref(res);
            json_decref(ids);
            return eng_fail(db, REMEM_ENOMEM, "out of memory");
        }
        for (size_t k = 0; k < b.n; k++) {
            remem_memory_init(&ms[k]);
            ms[k].ns = ns;
            ms[k].id = b.p[k].id;
            ms[k].kind = "decision";
            ms[k].text = b.p[k].text;
            ms[k].metadata = b.p[k].meta;
        }
        long failed = -1;
        rc = remem_add_batch(db, ms, b.n, NULL, 0, &failed);
        free(ms);
        for (size_t k = 0; k < b.n && !rc; k++) json_array_append_new(ids, json_string(b.p[k].id));
    }
    size_t n = b.n;
    batch_free(&b);
    if (rc) {
        json_decref(res);
        json_decref(ids);
        return rc;
    }
    char t[320];
    snprintf(t, sizeof t, "hydrated %zu decisions into %s", n, ns);
    json_object_set_new(res, "hydrated", json_integer((json_int_t)n));
    json_object_set_new(res, "skipped", json_false());
    json_object_set_new(res, "ids", ids);
    json_object_set_new(res, "text", json_string(t));
    *result = res;
    return REMEM_OK;
}

int exp_hydrate_paths(remem *db, const char *ns, const char *const *paths, size_t n,
                      json_t **result) {
    json_t *files = json_array();
    if (!files) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_error_t je;
        json_t *f = json_load_file(paths[i], 0, &je);
        if (!f) {
            json_decref(files);
            return eng_fail(db, REMEM_EIO, "hydrate: %s: %s (line %d)", paths[i], je.text, je.line);
        }
        json_array_append_new(files, f);
    }
    int rc = exp_hydrate(db, ns, files, result);
    json_decref(files);
    return rc;
}

int exp_op_hydrate(remem *db, json_t *args, json_t **result) {
    return exp_hydrate(db, op_str(args, "ns", NULL), json_object_get(args, "files"), result);
}
