/*
 * context.c: the "context" operation: recall with the namespace's policy
 * (profile, top_k, the seeds' weight overrides) and render the hits as a
 * block for a prompt in one of prompt.h's formats (seed 004's "stream" by
 * default). The answer carries the block as "text" (what the CLI prints)
 * and the hits with every score component. With memory off (seed 004's
 * --no-memory) the block is empty and the answer says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/lifecycle.h"
#include "prompt/prompt.h"
#include "util/tz.h"

/* The recall query as JSON: the namespace's policy under the caller's
 * arguments. */
static json_t *context_query(json_t *args, const cfg_policy *p, char *err, size_t cap) {
    const char *ns = op_str(args, "ns", NULL);
    json_t *q = json_pack("{s:[s], s:s}", "namespaces", ns, "text", op_str(args, "query", ""));
    if (!q) return NULL;
    if (p->overrides_json) {
        json_t *o = json_loads(p->overrides_json, 0, NULL);
        if (json_is_object(o)) json_object_update(q, o);
        json_decref(o);
    }
    const char *profile = op_str(args, "profile", p->profile);
    if (profile) json_object_set_new(q, "profile", json_string(profile));
    int64_t k = op_int(args, "k", p->top_k);
    if (k > 0) json_object_set_new(q, "k", json_integer(k));
    json_t *now = json_object_get(args, "now");
    if (now) json_object_set(q, "now", now);
    json_object_set_new(q, "touch", json_boolean(op_bool(args, "touch", 1)));
    (void)err;
    (void)cap;
    return q;
}

int lc_op_context(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    const char *fname = op_str(args, "format", "stream");
    const prompt_format *f = prompt_find(fname);
    if (!f) return eng_fail(db, REMEM_EINVAL, "context: unknown format \"%s\"", fname);
    const cfg_policy *p = lc_policy(db, ns);
    /* the dates' zone: the call's, else the policy's time_zone, else UTC */
    const char *zone = op_str(args, "time_zone", p->time_zone);
    if (zone && !util_tz_valid(zone))
        return eng_fail(db, REMEM_EINVAL,
                        "context: time_zone \"%s\" is not a zone of the time zone database "
                        "(e.g. America/New_York, Europe/Paris, UTC)",
                        zone);
    if (eng_memory_off(db, ns)) {
        *result = json_pack("{s:s, s:s, s:s, s:[], s:s}", "ns", ns, "format", f->name, "text", "",
                            "hits", "memory", "off");
        return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    char err[600] = "";
    json_t *q = context_query(args, p, err, sizeof err);
    char *qtext = q ? json_dumps(q, JSON_COMPACT) : NULL;
    json_decref(q);
    if (!qtext) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    remem_query_json *pq = NULL;
    int rc = remem_query_parse(qtext, strlen(qtext), &pq, err, sizeof err);
    free(qtext);
    if (rc) return eng_fail(db, rc, "context: %s", err);
    remem_result *res = NULL;
    if ((rc = remem_recall(db, remem_query_json_get(pq), &res))) {
        remem_query_json_free(pq);
        return rc;
    }
    prompt_item *items = calloc(res->n ? res->n : 1, sizeof *items);
    json_t *hits = json_array();
    char *block = NULL;
    if (!items || !hits) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < res->n; i++) {
        const remem_hit *h = &res->hits[i];
        items[i] = (prompt_item){h->mem.id,   h->mem.text,       h->mem.kind,
                                 h->mem.tier, h->mem.created_at, h->score, 0};
        util_tz_offset(zone, h->mem.created_at, &items[i].utc_offset_s);
        char *hj = remem_hit_to_json(h);
        json_array_append_new(hits, hj ? json_loads(hj, 0, NULL) : json_null());
        remem_free(hj);
    }
    block = prompt_render(f, items, res->n);
    if (!block) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    *result = json_pack("{s:s, s:s, s:s, s:s, s:O}", "ns", ns, "format", f->name, "profile",
                        res->profile ? res->profile : "default", "text", block, "hits", hits);
    if (!*result) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
done:
    free(block);
    free(items);
    json_decref(hits);
    remem_result_free(res);
    remem_query_json_free(pq);
    return rc;
}
