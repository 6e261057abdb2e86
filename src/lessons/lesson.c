/*
 * lesson.c: `lesson.add`, a lesson with seed 002's schema. A lesson's id
 * is derived from its domain key and its normalised rule, so the same rule
 * learned twice for one domain is one lesson: the second add unites its
 * fingerprints, tags and conflicts into the first instead of doubling it
 * (and its counters, status and history stay). The same rule in another
 * domain is another lesson: what helps in one context is measured there.
 *
 * System tags come from facts, not from the caller: "domain:D", and the
 * tool and channel tags of the error events whose fingerprints the lesson
 * names. The caller's own tags are kept beside them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lessons/lessons.h"

static json_t *new_lesson(const char *id, const char *rule, const char *domain, int64_t now) {
    json_t *t = lsn_time_json(now);
    json_t *m =
        json_pack("{ss ss ss s[] s[] ss sn sn si si si s[] sO sO sn si si sb s[]}", "lesson_id", id,
                  "status", "candidate", "rule_text", rule, "fingerprints", "tags", "domain_key",
                  domain, "task_cluster", "source_session_id", "retrieval_count", 0,
                  "helpful_count", 0, "harmful_count", 0, "conflicts_with", "created_at", t,
                  "updated_at", t, "utility", "transfer_retrieval_count", 0, "conflict_losses", 0,
                  "transfer_blocked", 0, "status_history");
    json_decref(t);
    return m;
}

/* What an add puts into the lesson: united into it as it is stored when
 * the write happens (another add of the same rule in between is kept). */
typedef struct merge {
    const char *id, *task_cluster, *session;
    json_t *fps, *tags, *conf; /* arrays to unite in */
    int64_t now;
    int merged;    /* the lesson existed */
    json_t *final; /* the lesson as written */
} merge;

static int apply_merge(void *ctx, json_t *m, int archived, const char **actor) {
    merge *g = ctx;
    (void)actor;
    g->merged = archived >= 0;
    const char *key[] = {"fingerprints", "tags", "conflicts_with"};
    json_t *from[] = {g->fps, g->tags, g->conf};
    for (int i = 0; i < 3; i++) {
        json_t *a = json_object_get(m, key[i]);
        if (!json_is_array(a)) json_object_set_new(m, key[i], a = json_array());
        json_t *set = lsn_set_of(a);
        if (!set) return REMEM_ENOMEM;
        lsn_unite(a, from[i], set);
        json_decref(set);
    }
    if (g->task_cluster) json_object_set_new(m, "task_cluster", json_string(g->task_cluster));
    if (g->session && !json_is_string(json_object_get(m, "source_session_id")))
        json_object_set_new(m, "source_session_id", json_string(g->session));
    json_object_set_new(m, "updated_at", lsn_time_json(g->now));
    json_decref(g->final);
    g->final = json_deep_copy(m);
    return g->final ? 1 : REMEM_ENOMEM;
}

/* A conflict is mutual: the other lesson names this one too. */
static int apply_mutual(void *ctx, json_t *m, int archived, const char **actor) {
    merge *g = ctx;
    (void)archived;
    (void)actor;
    json_t *oc = json_object_get(m, "conflicts_with");
    if (!json_is_array(oc)) json_object_set_new(m, "conflicts_with", oc = json_array());
    if (lsn_has(oc, g->id)) return 0;
    json_array_append_new(oc, json_string(g->id));
    json_object_set_new(m, "updated_at", lsn_time_json(g->now));
    return 1;
}

static int names_fp(const json_t *meta, void *want) {
    const char *f = lsn_s(meta, "fingerprint");
    return f && json_object_get(want, f);
}

/* The tags the lesson takes: "domain:D", the tool and channel tags of the
 * error events whose fingerprint it names (the stored lesson's or the
 * given ones; one pass over the events), then the caller's. */
static json_t *tags_of(remem *db, const char *ns, const char *domain, const json_t *old_fps,
                       const json_t *fps, const json_t *given, int *rc) {
    json_t *want = lsn_set_of(old_fps), *tags = json_pack("[s+]", "domain:", domain);
    json_t *set = lsn_set_of(tags);
    lsn_list ev = {0};
    size_t i;
    json_t *e;
    if (!want || !tags || !set) *rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    json_array_foreach(fps, i, e) {
        if (!*rc) json_object_set_new(want, json_string_value(e), json_true());
    }
    lsn_list_opts o = {.keep = names_fp, .ctx = want};
    if (!*rc) *rc = lsn_list_where(db, ns, "error_event", &o, &ev);
    for (size_t k = 0; !*rc && k < ev.n; k++) {
        json_array_foreach(json_object_get(ev.v[k].meta, "tags"), i, e) {
            /* Another domain's event says nothing about this domain. */
            const char *t = json_string_value(e);
            if (t && strncmp(t, "domain:", 7) && !json_object_get(set, t)) {
                json_array_append(tags, e);
                json_object_set_new(set, t, json_true());
            }
        }
    }
    if (!*rc) lsn_unite(tags, given, set);
    lsn_list_free(&ev);
    json_decref(want);
    json_decref(set);
    if (*rc) {
        json_decref(tags);
        return NULL;
    }
    return tags;
}
/* The lesson id of (domain, rule): "lsn_" + the hash of the domain and
 * the normalised rule. 0, or REMEM_EINVAL for an empty one. */
static int lesson_id(remem *db, const char *domain, const char *rule, char id[40]) {
    char *norm = util_normalize_text(rule);
    if (!norm) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (!*norm || !*domain) {
        free(norm);
        return eng_fail(db, REMEM_EINVAL, "%s must not be empty", *domain ? "rule" : "domain");
    }
    strbuf key;
    sb_init(&key);
    sb_printf(&key, "%s\x1f%s", domain, norm);
    free(norm);
    snprintf(id, 40, "lsn_%016llx",
             (unsigned long long)util_hash64(key.data ? key.data : "", key.len));
    sb_free(&key);
    return REMEM_OK;
}

/* Every conflicts_with id names another lesson of ns. */
static int check_conflicts(remem *db, const char *ns, const char *id, const json_t *conf,
                           lsn_list *ls) {
    size_t i;
    json_t *e;
    json_array_foreach(conf, i, e) {
        if (!strcmp(json_string_value(e), id))
            return eng_fail(db, REMEM_EINVAL, "conflicts_with: a lesson cannot conflict with itself");
        if (!lsn_find(ls, json_string_value(e)))
            return eng_fail(db, REMEM_EINVAL, "conflicts_with: no lesson %s in %s",
                            json_string_value(e), ns);
    }
    return REMEM_OK;
}

int lsn_op_add(remem *db, json_t *args, json_t **result) {
    const char *ns = lsn_s(args, "ns"), *domain = lsn_s(args, "domain");
    const char *rule = lsn_s(args, "rule");
    char id[40];
    int rc = lesson_id(db, domain, rule, id);
    if (rc) return rc;
    lsn_list ls = {0};
    lsn_batch b = {0};
    json_t *conf = json_object_get(args, "conflicts_with"), *fresh = NULL;
    merge g = {.id = id, .task_cluster = lsn_s(args, "task_cluster"),
               .session = lsn_s(args, "session"), .fps = json_object_get(args, "fingerprint"),
               .conf = conf, .now = util_now_ms()};
    lsn_list_opts ro = {.borrow = 1}; /* read, never changed */
    if ((rc = lsn_list_where(db, ns, "lesson", &ro, &ls)) ||
        (rc = check_conflicts(db, ns, id, conf, &ls)))
        goto out;
    lsn_rec *old = lsn_find(&ls, id);
    g.tags = tags_of(db, ns, domain, old ? json_object_get(old->meta, "fingerprints") : NULL,
                     g.fps, json_object_get(args, "tag"), &rc);
    if (rc) goto out;
    fresh = new_lesson(id, rule, domain, g.now);
    if (!fresh || lsn_batch_change(&b, ns, id, "lesson", rule, fresh, apply_merge, &g)) goto oom;
    size_t i;
    json_t *e;
    json_array_foreach(conf, i, e) {
        if (lsn_batch_change(&b, ns, json_string_value(e), "lesson", NULL, NULL, apply_mutual, &g))
            goto oom;
    }
    if ((rc = lsn_batch_commit(db, &b))) goto out;
    char text[600];
    snprintf(text, sizeof text, "%s %s (%s, %s): %.400s", g.merged ? "merged into" : "added", id,
             domain, lsn_s(g.final, "status"), rule);
    *result = json_pack("{ss ss sO ss}", "lesson_id", id, "outcome", g.merged ? "merged" : "added",
                        "lesson", g.final, "text", text);
    if (*result) goto out;
oom:
    rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
out:
    lsn_batch_free(&b);
    json_decref(fresh);
    json_decref(g.tags);
    json_decref(g.final);
    lsn_list_free(&ls);
    return rc;
}
