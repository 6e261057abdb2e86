/*
 * lesson.c: "lesson.add", a lesson with seed 002's schema. A lesson's id
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

static void unite(json_t *into, json_t *from) {
    size_t i;
    json_t *e;
    json_array_foreach(from, i, e) {
        if (json_is_string(e) && json_string_length(e) && !lsn_has(into, json_string_value(e)))
            json_array_append(into, e);
    }
}

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

int lsn_op_add(remem *db, json_t *args, json_t **result) {
    const char *ns = lsn_s(args, "ns"), *domain = lsn_s(args, "domain");
    const char *rule = lsn_s(args, "rule");
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
    char id[40];
    snprintf(id, sizeof id, "lsn_%016llx",
             (unsigned long long)util_hash64(key.data ? key.data : "", key.len));
    sb_free(&key);

    lsn_list ls = {0}, ev = {0};
    lsn_batch b = {0};
    json_t *meta = NULL;
    int rc = lsn_list_kind(db, ns, "lesson", &ls);
    if (!rc) rc = lsn_list_kind(db, ns, "error_event", &ev);
    if (rc) goto out;
    json_t *conf = json_object_get(args, "conflicts_with");
    size_t i;
    json_t *e;
    json_array_foreach(conf, i, e) {
        if (!strcmp(json_string_value(e), id)) {
            rc = eng_fail(db, REMEM_EINVAL, "conflicts_with: a lesson cannot conflict with itself");
            goto out;
        }
        if (!lsn_find(&ls, json_string_value(e))) {
            rc = eng_fail(db, REMEM_EINVAL, "conflicts_with: no lesson %s in %s",
                          json_string_value(e), ns);
            goto out;
        }
    }
    int64_t now = util_now_ms();
    lsn_rec *old = lsn_find(&ls, id);
    int merged = old != NULL;
    meta = merged ? json_incref(old->meta) : new_lesson(id, rule, domain, now);
    json_t *fps = json_object_get(meta, "fingerprints"), *tags = json_object_get(meta, "tags");
    unite(fps, json_object_get(args, "fingerprint"));
    json_t *sys = json_pack("[s+]", "domain:", domain);
    unite(tags, sys);
    json_decref(sys);
    for (size_t k = 0; k < ev.n; k++)
        if (lsn_has(fps, lsn_s(ev.v[k].meta, "fingerprint"))) {
            json_t *et = json_deep_copy(json_object_get(ev.v[k].meta, "tags"));
            /* Another domain's event says nothing about this domain. */
            for (size_t j = json_array_size(et); j-- > 0;)
                if (!strncmp(json_string_value(json_array_get(et, j)), "domain:", 7))
                    json_array_remove(et, j);
            unite(tags, et);
            json_decref(et);
        }
    unite(tags, json_object_get(args, "tag"));
    unite(json_object_get(meta, "conflicts_with"), conf);
    if (lsn_s(args, "task_cluster"))
        json_object_set_new(meta, "task_cluster", json_string(lsn_s(args, "task_cluster")));
    if (lsn_s(args, "session") && !json_is_string(json_object_get(meta, "source_session_id")))
        json_object_set_new(meta, "source_session_id", json_string(lsn_s(args, "session")));
    json_object_set_new(meta, "updated_at", lsn_time_json(now));
    rc = lsn_batch_put(&b, ns, id, "lesson", rule, meta, old ? old->created_at : 0);
    /* A conflict is mutual: the other lesson names this one too. */
    json_array_foreach(conf, i, e) {
        lsn_rec *o = lsn_find(&ls, json_string_value(e));
        json_t *oc = json_object_get(o->meta, "conflicts_with");
        if (!json_is_array(oc)) json_object_set_new(o->meta, "conflicts_with", oc = json_array());
        if (lsn_has(oc, id)) continue;
        json_array_append_new(oc, json_string(id));
        json_object_set_new(o->meta, "updated_at", lsn_time_json(now));
        if (!rc) rc = lsn_batch_put(&b, ns, o->id, "lesson", o->text, o->meta, o->created_at);
    }
    if (rc) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    rc = lsn_batch_commit(db, &b);
    if (rc) goto out;
    char text[600];
    snprintf(text, sizeof text, "%s %s (%s, %s): %.400s", merged ? "merged into" : "added", id,
             domain, lsn_s(meta, "status"), rule);
    *result = json_pack("{ss ss sO ss}", "lesson_id", id, "outcome", merged ? "merged" : "added",
                        "lesson", meta, "text", text);
    if (!*result) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
out:
    lsn_batch_free(&b);
    json_decref(meta);
    lsn_list_free(&ls);
    lsn_list_free(&ev);
    return rc;
}
