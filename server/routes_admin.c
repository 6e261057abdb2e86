/*
 * routes_admin.c: the routes about the server rather than memories:
 * /healthz, /metrics, /openapi.json, the scoring profiles and /v1/embed.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serverInt.h"

/* ------------------------------------------------------------------ */
/* Everything else                                                     */
/* ------------------------------------------------------------------ */

void h_profiles(reply *rp) {
    json_t *arr = json_array();
    for (const char *const *p = remem_profiles(); *p; p++) {
        char *def = remem_profile_json(*p);
        json_t *d = def ? json_loads(def, 0, NULL) : NULL;
        remem_free(def);
        json_array_append_new(arr, json_pack("{s:s,s:o*}", "name", *p, "definition", d));
    }
    reply_json(rp, 200, json_pack("{s:o}", "profiles", arr));
}

void h_profile(request *rq, reply *rp) {
    char *def = remem_profile_json(rq->id);
    if (!def) {
        reply_error(rp, 404, "REMEM_EPROFILE", "unknown profile \"%s\"", rq->id);
        return;
    }
    reply_text(rp, 200, def, remem_free, "application/json");
}

void h_embed(request *rq, reply *rp, remem *db) {
    /* Its own right: a key made to read or write memories does not get to
     * spend the server's CPU on arbitrary texts. */
    if (rq->key && !(rq->key->rights & SERVE_EMBED)) {
        reply_error(rp, 403, "REMEM_EFORBIDDEN",
                    "key \"%s\" may not use /v1/embed (it needs the \"embed\" right)",
                    rq->key->name);
        return;
    }
    json_t *o = body_object(rq, rp);
    if (!o) return;
    static const char *const known[] = {"texts", NULL};
    json_t *texts = json_object_get(o, "texts");
    size_t n = json_array_size(texts);
    int dim = remem_embedder_dim(db);
    const char **in = NULL;
    float *out = NULL;
    if (!known_fields(o, known, rp, "embed")) goto done;
    if (!json_is_array(texts) || n == 0) {
        reply_error(rp, 400, "REMEM_EINVAL", "expected {\"texts\": [\"...\", ...]}");
        goto done;
    }
    /* Bounded: each text answers dim numbers (~4.6 KB of JSON at 384), so
     * without a cap a 1 MiB body of tiny texts made a reply of 150 MB. */
    if (n > SERVE_EMBED_MAX_TEXTS) {
        reply_error(rp, 413, "REMEM_ETOOLARGE",
                    "/v1/embed takes at most %d texts per request (got %zu); send them in "
                    "batches",
                    SERVE_EMBED_MAX_TEXTS, n);
        goto done;
    }
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += json_string_length(json_array_get(texts, i));
    if (bytes > SERVE_EMBED_MAX_BYTES) {
        reply_error(rp, 413, "REMEM_ETOOLARGE",
                    "/v1/embed takes at most %d bytes of text per request (got %zu); send "
                    "them in batches",
                    SERVE_EMBED_MAX_BYTES, bytes);
        goto done;
    }
    rq->trim = 1; /* a large reply: give its memory back once sent */
    in = calloc(n, sizeof *in);
    out = malloc(n * (size_t)dim * sizeof *out);
    if (!in || !out) {
        reply_error(rp, 500, "REMEM_ENOMEM", "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (!(in[i] = json_string_value(json_array_get(texts, i)))) {
            reply_error(rp, 400, "REMEM_EINVAL", "\"texts\"[%zu] is not a string", i);
            goto done;
        }
    int rc = remem_embed(db, in, n, out);
    if (rc != REMEM_OK) {
        reply_remem_error(rp, db, rc);
        goto done;
    }
    json_t *vecs = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array();
        for (int j = 0; j < dim; j++)
            json_array_append_new(v, json_real(out[i * (size_t)dim + (size_t)j]));
        json_array_append_new(vecs, v);
    }
    reply_json(rp, 200,
               json_pack("{s:s,s:s,s:i,s:o}", "embedder", remem_embedder_name(db), "model",
                         remem_embedder_model(db), "dim", dim, "vectors", vecs));
done:
    free(in);
    free(out);
    json_decref(o);
}

void h_metrics(request *rq, reply *rp, remem *db) {
    json_t *list = visible_namespaces(rq, rp, db);
    if (!list) return;
    reply_text(rp, 200, metrics_render(rq->srv, list), free,
               "text/plain; version=0.0.4; charset=utf-8");
    json_decref(list);
}

void h_healthz(request *rq, reply *rp) {
    reply_json(rp, 200,
               json_pack("{s:s,s:s,s:I}", "status", "ok", "version", REMEM_VERSION, "uptime_ms",
                         (json_int_t)(remem_now() - rq->srv->started_ms)));
}

void h_openapi(reply *rp) {
    size_t len;
    const char *doc = openapi_document(&len);
    rp->status = 200;
    rp->body = (char *)doc;
    rp->len = len;
    rp->free_body = NULL;
    rp->content_type = "application/json";
}
