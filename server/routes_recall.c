/*
 * routes_recall.c: POST /v1/recall. The body becomes a remem_query (every
 * namespace it names is checked for read before a handle is taken), the
 * handle warm for the first namespace runs it, and the engine renders the
 * result.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serverInt.h"

/* The recall body as a query. Strings point into o. 1 on success. */
int recall_query(request *rq, reply *rp, json_t *o, remem_query *q, const char ***nss,
                 float **vector) {
    static const char *const known[] = {"namespaces",
                                        "text",
                                        "vector",
                                        "filter",
                                        "profile",
                                        "k",
                                        "w_relevance",
                                        "w_lexical",
                                        "w_recency",
                                        "w_importance",
                                        "w_context",
                                        "min_similarity",
                                        "min_score",
                                        "recency_base",
                                        "half_life_hours",
                                        "normalize",
                                        "candidates",
                                        "tiers",
                                        "now",
                                        "touch",
                                        "include_invalid",
                                        NULL};
    if (!known_fields(o, known, rp, "recall")) return 0;
    remem_query_init(q);
    /* A lone name is wrapped into a list; o holds the list, so the names
     * stay valid as long as o. */
    json_t *v = json_object_get(o, "namespaces");
    if (json_is_string(v)) {
        json_object_set_new(o, "namespaces", json_pack("[O]", v));
        v = json_object_get(o, "namespaces");
    }
    size_t n = json_array_size(v);
    int ok = 0;
    if (!json_is_array(v) || n == 0) {
        reply_error(rp, 400, "REMEM_EINVAL", "\"namespaces\" must name at least one namespace");
        goto done;
    }
    *nss = calloc(n, sizeof **nss);
    if (!*nss) goto done;
    for (size_t i = 0; i < n; i++) {
        const char *ns = json_string_value(json_array_get(v, i));
        if (!ns || !*ns) {
            reply_error(rp, 400, "REMEM_EINVAL", "\"namespaces\"[%zu] is not a name", i);
            goto done;
        }
        if (!allowed(rq, rp, ns, SERVE_READ)) goto done;
        (*nss)[i] = ns;
    }
    q->namespaces = *nss;
    q->n_namespaces = n;

    static const struct {
        const char *name;
        size_t offset;
    } strs[] = {{"text", offsetof(remem_query, text)}, {"profile", offsetof(remem_query, profile)}};
    for (size_t i = 0; i < 2; i++) {
        json_t *s = json_object_get(o, strs[i].name);
        if (!s || json_is_null(s)) continue;
        if (!json_is_string(s)) {
            reply_error(rp, 400, "REMEM_EINVAL", "\"%s\" must be a string", strs[i].name);
            goto done;
        }
        *(const char **)((char *)q + strs[i].offset) = json_string_value(s);
    }
    static const struct {
        const char *name;
        size_t offset;
    } nums[] = {{"w_relevance", offsetof(remem_query, w_relevance)},
                {"w_lexical", offsetof(remem_query, w_lexical)},
                {"w_recency", offsetof(remem_query, w_recency)},
                {"w_importance", offsetof(remem_query, w_importance)},
                {"w_context", offsetof(remem_query, w_context)},
                {"min_similarity", offsetof(remem_query, min_similarity)},
                {"min_score", offsetof(remem_query, min_score)},
                {"recency_base", offsetof(remem_query, recency_base)},
                {"half_life_hours", offsetof(remem_query, half_life_hours)}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        json_t *x = json_object_get(o, nums[i].name);
        if (!x || json_is_null(x)) continue;
        if (!json_is_number(x)) {
            reply_error(rp, 400, "REMEM_EINVAL", "\"%s\" must be a number", nums[i].name);
            goto done;
        }
        *(double *)((char *)q + nums[i].offset) = json_number_value(x);
    }
    static const struct {
        const char *name;
        size_t offset;
    } ints[] = {{"k", offsetof(remem_query, k)}, {"candidates", offsetof(remem_query, candidates)}};
    for (size_t i = 0; i < 2; i++) {
        json_t *x = json_object_get(o, ints[i].name);
        if (!x || json_is_null(x)) continue;
        if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > 1000000) {
            reply_error(rp, 400, "REMEM_EINVAL", "\"%s\" must be a non-negative integer",
                        ints[i].name);
            goto done;
        }
        *(int *)((char *)q + ints[i].offset) = (int)json_integer_value(x);
    }
    json_t *f = json_object_get(o, "filter");
    if (f && !json_is_null(f)) {
        if (json_is_string(f)) {
            q->filter = json_string_value(f);
        } else if (json_is_object(f)) {
            /* the C API takes the filter as text; o keeps it alive */
            char *text = json_dumps(f, JSON_COMPACT);
            if (!text) goto done;
            json_object_set_new(o, "filter", json_string(text));
            free(text);
            q->filter = json_string_value(json_object_get(o, "filter"));
        } else {
            reply_error(rp, 400, "REMEM_EFILTER", "\"filter\" must be a JSON object");
            goto done;
        }
    }
    json_t *tiers = json_object_get(o, "tiers");
    if (json_is_array(tiers)) {
        char buf[256] = "";
        size_t i;
        json_t *t;
        json_array_foreach(tiers, i, t) {
            if (!json_is_string(t)) {
                reply_error(rp, 400, "REMEM_EINVAL", "\"tiers\"[%zu] is not a string", i);
                goto done;
            }
            size_t used = strlen(buf);
            snprintf(buf + used, sizeof buf - used, "%s%s", i ? "," : "", json_string_value(t));
        }
        json_object_set_new(o, "tiers", json_string(buf));
        tiers = json_object_get(o, "tiers");
    }
    if (tiers && !json_is_null(tiers)) {
        if (!json_is_string(tiers)) {
            reply_error(rp, 400, "REMEM_EINVAL",
                        "\"tiers\" must be a list (or a comma-separated string)");
            goto done;
        }
        q->tiers = json_string_value(tiers);
    }
    json_t *vec = json_object_get(o, "vector");
    if (vec && !json_is_null(vec)) {
        if (!(*vector = vector_field(vec, &q->dim, rp))) goto done;
        q->vector = *vector;
    }
    if (!q->text && !q->vector) {
        reply_error(rp, 400, "REMEM_EINVAL", "give \"text\" or \"vector\" to recall by");
        goto done;
    }
    int touch = 1;
    if (!time_field(json_object_get(o, "now"), "now", &q->now, rp) ||
        !bool_field(json_object_get(o, "touch"), "touch", 1, &touch, rp) ||
        !bool_field(json_object_get(o, "include_invalid"), "include_invalid", 0,
                    &q->include_invalid, rp))
        goto done;
    q->no_touch = !touch;
    json_t *norm = json_object_get(o, "normalize");
    if (norm && !json_is_null(norm) && !bool_field(norm, "normalize", 0, &q->normalize, rp))
        goto done;
    ok = 1;
done:
    if (!ok && !rp->body) reply_error(rp, 500, "REMEM_ENOMEM", "out of memory");
    return ok;
}

/* The body is read before a handle is taken, so that the handle can be the
 * one warm for the first namespace named. */
void h_recall(request *rq, reply *rp) {
    json_t *o = body_object(rq, rp);
    if (!o) return;
    remem_query q;
    const char **nss = NULL;
    float *vector = NULL;
    char err[512];
    remem *db = NULL;
    remem_result *res = NULL;
    if (!recall_query(rq, rp, o, &q, &nss, &vector)) goto done;
    if (!(db = pool_get(&rq->srv->pool, nss[0], err, sizeof err))) {
        reply_error(rp, 503, "REMEM_EBUSY", "%s", err);
        goto done;
    }
    int rc = remem_recall(db, &q, &res);
    if (rc != REMEM_OK)
        reply_remem_error(rp, db, rc);
    else
        reply_text(rp, 200, remem_result_to_json(res), remem_free, "application/json");
    remem_result_free(res);
    pool_put(&rq->srv->pool, db, nss[0]);
done:
    free(nss);
    free(vector);
    json_decref(o);
}
