/*
 * records.c: decisions, trajectories and feedback (seed 000) written and
 * found as ordinary memories. Each record is one memory whose text is the
 * seed's document text (what gets embedded) and whose metadata holds every
 * field, so filters, export and history see them like any memory.
 *
 * Decisions and trajectories get ids of their own ("dec_", "traj_" and a
 * time-ordered id): two decisions with the same text from two episodes
 * are two records, never folded as duplicates, because each carries its
 * own episode and metrics. Feedback lives at "fb_{episode}", so a second
 * feedback for an episode replaces the first (an upsert: history keeps the
 * earlier one in its "before").
 *
 * Similarity is the cosine between the query's vector and the record's,
 * through the engine's recall with every weight but relevance at zero
 * (ties in relevance fall back to the raw cosine, so the order is the
 * cosine's even below zero).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experience/experience.h"

int exp_nearest(remem *db, const char *ns, const char *kind, const char *text, int k,
                remem_result **out) {
    char filter[96];
    snprintf(filter, sizeof filter, "{\"kind\":\"%s\"}", kind);
    const char *nss[1] = {ns};
    remem_query q;
    remem_query_init(&q);
    q.text = text;
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.filter = filter;
    q.profile = "default";
    q.k = k;
    q.w_relevance = 1;
    q.w_lexical = 0;
    q.w_recency = 0;
    q.w_importance = 0;
    q.w_context = 0;
    q.no_touch = 1;
    return remem_recall(db, &q, out);
}

/* The hit's metadata, parsed (an empty object when it has none). */
static json_t *hit_meta(const remem_hit *h) {
    json_t *m = h->mem.metadata ? json_loads(h->mem.metadata, 0, NULL) : NULL;
    if (!json_is_object(m)) {
        json_decref(m);
        m = json_object();
    }
    return m;
}

static double meta_num(json_t *m, const char *k, double def) {
    json_t *v = json_object_get(m, k);
    return json_is_number(v) ? json_number_value(v) : def;
}

static const char *meta_str(json_t *m, const char *k) {
    json_t *v = json_object_get(m, k);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* Add one record; the write answer's fields go into res. */
static int add_record(remem *db, const char *ns, const char *id, const char *kind, const char *text,
                      json_t *meta, json_t *res) {
    char *mj = json_dumps(meta, JSON_COMPACT);
    if (!mj) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    remem_memory m;
    remem_memory_init(&m);
    m.ns = ns;
    m.id = id;
    m.kind = kind;
    m.text = text;
    m.metadata = mj;
    char idout[300] = "";
    int outcome = 0;
    int rc = remem_add(db, &m, idout, sizeof idout, &outcome);
    free(mj);
    if (rc) return rc;
    /* no id when memory is off for the namespace: accepted, not stored */
    if (idout[0]) json_object_set_new(res, "id", json_string(idout));
    json_object_set_new(res, "ns", json_string(ns));
    json_object_set_new(res, "outcome",
                        json_string(outcome == REMEM_ADDED       ? "added"
                                    : outcome == REMEM_UPSERTED  ? "replaced"
                                    : outcome == REMEM_DUPLICATE ? "duplicate"
                                                                 : "dropped"));
    json_object_set_new(res, "stored_text", json_string(text));
    return REMEM_OK;
}

static void new_id(const char *prefix, char *buf, size_t cap) {
    char ulid[27];
    util_new_id(util_now_ms(), ulid);
    snprintf(buf, cap, "%s%s", prefix, ulid);
}

/* ---- decisions ---- */

int exp_decision_text(json_t *rec, strbuf *out) {
    sb_printf(out, "%s Action: %s Domain: %s Reward: %.2f ", meta_str(rec, "title"),
              meta_str(rec, "action"), meta_str(rec, "domain"), meta_num(rec, "reward", 0));
    exp_prefix_chars(meta_str(rec, "reasoning"), 100, out);
    return out->oom ? REMEM_ENOMEM : REMEM_OK;
}

int exp_op_decision_add(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    json_t *metrics = json_object_get(args, "metrics");
    json_t *meta = json_object();
    if (!meta) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    json_object_set_new(meta, "title", json_string(op_str(args, "title", "")));
    json_object_set_new(meta, "action", json_string(op_str(args, "action", "")));
    json_object_set_new(meta, "domain", json_string(op_str(args, "domain", "")));
    json_object_set_new(meta, "reward", json_real(op_num(args, "reward", 0)));
    json_object_set_new(meta, "reasoning", json_string(op_str(args, "reasoning", "")));
    json_object_set_new(meta, "metrics", metrics ? json_deep_copy(metrics) : json_object());
    const char *ep = op_str(args, "episode", NULL);
    if (ep && *ep) json_object_set_new(meta, "episode_id", json_string(ep));
    strbuf text;
    sb_init(&text);
    exp_decision_text(meta, &text);
    char id[64];
    new_id("dec_", id, sizeof id);
    json_t *res = json_object();
    int rc = text.oom || !res ? eng_fail(db, REMEM_ENOMEM, "out of memory")
                              : add_record(db, ns, id, "decision", text.data, meta, res);
    if (!rc) {
        json_object_set_new(res, "text", json_string(text.data));
        *result = res;
    } else {
        json_decref(res);
    }
    sb_free(&text);
    json_decref(meta);
    return rc;
}

/* One decision as decision.similar lists it. */
static json_t *decision_result(const remem_hit *h, json_t *meta) {
    json_t *r = json_object();
    json_object_set_new(r, "id", json_string(h->mem.id));
    json_object_set_new(r, "title", json_string(meta_str(meta, "title")));
    json_object_set_new(r, "action", json_string(meta_str(meta, "action")));
    json_object_set_new(r, "domain", json_string(meta_str(meta, "domain")));
    /* seed 000's own names for the same fields, so its callers read them */
    json_object_set_new(r, "conflict_title", json_string(meta_str(meta, "title")));
    json_object_set_new(r, "action_type", json_string(meta_str(meta, "action")));
    json_object_set_new(r, "target_domain", json_string(meta_str(meta, "domain")));
    json_object_set_new(r, "reward", json_real(meta_num(meta, "reward", 0)));
    json_object_set_new(r, "reasoning", json_string(meta_str(meta, "reasoning")));
    json_object_set_new(r, "episode_id", json_string(meta_str(meta, "episode_id")));
    json_object_set_new(r, "similarity_score", json_real(isnan(h->similarity) ? 0 : h->similarity));
    json_object_set_new(r, "stored_text", json_string(h->mem.text));
    return r;
}

int exp_similar_decisions(remem *db, const char *ns, const char *title, json_t *metrics, int n,
                          json_t **results, char **query) {
    strbuf q;
    sb_init(&q);
    exp_decision_query(title, metrics, &q);
    if (q.oom) {
        sb_free(&q);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    remem_result *r = NULL;
    int rc = exp_nearest(db, ns, "decision", q.data, 2 * n, &r);
    if (rc) {
        sb_free(&q);
        return rc;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < r->n && json_array_size(arr) < (size_t)n; i++) {
        json_t *meta = hit_meta(&r->hits[i]);
        /* seed 000: a decision without a reward counts as 0 */
        if (meta_num(meta, "reward", 0) >= 0.05)
            json_array_append_new(arr, decision_result(&r->hits[i], meta));
        json_decref(meta);
    }
    remem_result_free(r);
    *results = arr;
    if (query)
        *query = sb_take(&q);
    else
        sb_free(&q);
    return REMEM_OK;
}

int exp_op_decision_similar(remem *db, json_t *args, json_t **result) {
    int n = (int)op_int(args, "n", 3);
    json_t *res = NULL;
    char *query = NULL;
    int rc = exp_similar_decisions(db, op_str(args, "ns", NULL), op_str(args, "title", ""),
                                   json_object_get(args, "metrics"), n, &res, &query);
    if (rc) return rc;
    strbuf t;
    sb_init(&t);
    size_t i;
    json_t *d;
    json_array_foreach(res, i, d) {
        sb_printf(&t, "%s%.4f  %s on %s  reward %.2f  %s", i ? "\n" : "",
                  json_real_value(json_object_get(d, "similarity_score")), meta_str(d, "action"),
                  meta_str(d, "domain"), meta_num(d, "reward", 0), meta_str(d, "title"));
    }
    *result = json_pack("{s:s, s:s, s:i, s:o, s:s}", "ns", op_str(args, "ns", ""), "query", query,
                        "candidates", 2 * n, "results", res, "text", t.data ? t.data : "");
    free(query);
    sb_free(&t);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* ---- trajectories ---- */

int exp_op_trajectory_add(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    json_t *summary = json_object_get(args, "summary");
    json_t *hits = json_object_get(summary, "milestones_hit");
    strbuf text;
    sb_init(&text);
    sb_printf(&text, "Task: %s Route: %s Reward: %.2f Hits: %zu", op_str(args, "task", ""),
              op_str(args, "route", ""), op_num(args, "reward", 0),
              json_is_array(hits) ? json_array_size(hits) : 0);
    json_t *meta = json_object();
    json_object_set_new(meta, "task_id", json_string(op_str(args, "task", "")));
    json_object_set_new(meta, "route", json_string(op_str(args, "route", "")));
    json_object_set_new(meta, "reward", json_real(op_num(args, "reward", 0)));
    json_object_set_new(meta, "summary", summary ? json_deep_copy(summary) : json_object());
    char id[64];
    new_id("traj_", id, sizeof id);
    json_t *res = json_object();
    int rc = text.oom || !res || !meta ? eng_fail(db, REMEM_ENOMEM, "out of memory")
                                       : add_record(db, ns, id, "trajectory", text.data, meta, res);
    if (!rc) {
        json_object_set_new(res, "text", json_string(text.data));
        *result = res;
    } else {
        json_decref(res);
    }
    sb_free(&text);
    json_decref(meta);
    return rc;
}

int exp_op_trajectory_similar(remem *db, json_t *args, json_t **result) {
    int n = (int)op_int(args, "n", 3);
    strbuf q;
    sb_init(&q);
    exp_world_query(op_str(args, "domain", ""), json_object_get(args, "world"), &q);
    if (q.oom) {
        sb_free(&q);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    remem_result *r = NULL;
    int rc = exp_nearest(db, op_str(args, "ns", NULL), "trajectory", q.data, n, &r);
    if (rc) {
        sb_free(&q);
        return rc;
    }
    json_t *arr = json_array();
    strbuf t;
    sb_init(&t);
    for (size_t i = 0; i < r->n; i++) {
        const remem_hit *h = &r->hits[i];
        json_t *meta = hit_meta(h);
        json_t *o = json_object();
        json_object_set_new(o, "id", json_string(h->mem.id));
        json_object_set_new(o, "task_id", json_string(meta_str(meta, "task_id")));
        json_object_set_new(o, "route", json_string(meta_str(meta, "route")));
        json_object_set_new(o, "reward", json_real(meta_num(meta, "reward", 0)));
        json_t *s = json_object_get(meta, "summary");
        json_object_set(o, "summary", s ? s : json_null());
        double sim = isnan(h->similarity) ? 0 : h->similarity;
        json_object_set_new(o, "similarity_score", json_real(sim));
        sb_printf(&t, "%s%.4f  %s via %s  reward %.2f", i ? "\n" : "", sim,
                  meta_str(meta, "task_id"), meta_str(meta, "route"), meta_num(meta, "reward", 0));
        json_array_append_new(arr, o);
        json_decref(meta);
    }
    remem_result_free(r);
    *result = json_pack("{s:s, s:s, s:o, s:s}", "ns", op_str(args, "ns", ""), "query", q.data,
                        "results", arr, "text", t.data ? t.data : "");
    sb_free(&q);
    sb_free(&t);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* ---- feedback ---- */

static void join_list(strbuf *b, json_t *arr) {
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) sb_printf(b, "%s%s", i ? ", " : "", json_string_value(v));
}

int exp_op_feedback_add(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL), *ep = op_str(args, "episode", "");
    json_t *imp = json_object_get(args, "improved"), *wor = json_object_get(args, "worsened");
    const char *notes = op_str(args, "notes", "");
    int64_t rating = op_int(args, "rating", 0);
    strbuf text;
    sb_init(&text);
    sb_printf(&text, "Episode: %s Rated %lld/10.", ep, (long long)rating);
    if (json_array_size(imp)) {
        sb_puts(&text, " Improved: ");
        join_list(&text, imp);
        sb_puts(&text, ".");
    }
    if (json_array_size(wor)) {
        sb_puts(&text, " Worsened: ");
        join_list(&text, wor);
        sb_puts(&text, ".");
    }
    if (*notes) sb_printf(&text, " Notes: %s", notes);
    json_t *meta = json_object();
    json_object_set_new(meta, "episode_id", json_string(ep));
    json_object_set_new(meta, "rating", json_integer(rating));
    json_object_set_new(meta, "improved", imp ? json_deep_copy(imp) : json_array());
    json_object_set_new(meta, "worsened", wor ? json_deep_copy(wor) : json_array());
    json_object_set_new(meta, "notes", json_string(notes));
    if (json_object_get(args, "hours"))
        json_object_set_new(meta, "hours", json_real(op_num(args, "hours", 0)));
    char id[300];
    snprintf(id, sizeof id, "fb_%s", ep);
    json_t *res = json_object();
    int rc = text.oom || !res || !meta ? eng_fail(db, REMEM_ENOMEM, "out of memory")
                                       : add_record(db, ns, id, "feedback", text.data, meta, res);
    if (!rc) {
        json_object_set_new(res, "text", json_string(text.data));
        *result = res;
    } else {
        json_decref(res);
    }
    sb_free(&text);
    json_decref(meta);
    return rc;
}

int exp_op_feedback_similar(remem *db, json_t *args, json_t **result) {
    remem_result *r = NULL;
    int rc = exp_nearest(db, op_str(args, "ns", NULL), "feedback", op_str(args, "text", ""),
                         (int)op_int(args, "n", 3), &r);
    if (rc) return rc;
    json_t *arr = json_array();
    strbuf t;
    sb_init(&t);
    for (size_t i = 0; i < r->n; i++) {
        const remem_hit *h = &r->hits[i];
        json_t *o = hit_meta(h);
        double sim = isnan(h->similarity) ? 0 : h->similarity;
        json_object_set_new(o, "id", json_string(h->mem.id));
        json_object_set_new(o, "similarity_score", json_real(sim));
        json_object_set_new(o, "stored_text", json_string(h->mem.text));
        sb_printf(&t, "%s%.4f  %s", i ? "\n" : "", sim, h->mem.text);
        json_array_append_new(arr, o);
    }
    remem_result_free(r);
    *result = json_pack("{s:s, s:o, s:s}", "ns", op_str(args, "ns", ""), "results", arr, "text",
                        t.data ? t.data : "");
    sb_free(&t);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}
