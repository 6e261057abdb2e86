/*
 * render.c: memories, hits and results as JSON. Every face prints these
 * (the CLI's --json, the server, MCP, history rows, export), so there is
 * one shape of a memory everywhere: times as ISO 8601 UTC, metadata and
 * links as JSON values, score components under "components".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "util/util.h"

static void set_time(json_t *o, const char *key, int64_t ms, int zero_is_null) {
    if (zero_is_null && ms == 0) {
        json_object_set_new(o, key, json_null());
        return;
    }
    char buf[40];
    util_format_time(ms, buf, sizeof buf);
    json_object_set_new(o, key, json_string(buf));
}

static void set_str(json_t *o, const char *key, const char *v) {
    json_object_set_new(o, key, v ? json_string(v) : json_null());
}

/* A JSON value stored as text; an unparsable one is kept as a string. */
static void set_json_text(json_t *o, const char *key, const char *text) {
    if (!text) {
        json_object_set_new(o, key, json_null());
        return;
    }
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    json_object_set_new(o, key, v ? v : json_string(text));
}

json_t *eng_memory_json(const remem_memory *m, int with_vec) {
    json_t *o = json_object();
    if (!o) return NULL;
    set_str(o, "id", m->id);
    set_str(o, "ns", m->ns);
    set_str(o, "kind", m->kind);
    set_str(o, "tier", m->tier);
    if (m->text) set_str(o, "text", m->text); /* a purged memory has none */
    json_object_set_new(o, "importance", json_real(m->importance));
    set_time(o, "created_at", m->created_at, 0);
    set_time(o, "updated_at", m->updated_at, 0);
    set_time(o, "accessed_at", m->accessed_at, 0);
    json_object_set_new(o, "access_count", json_integer(m->access_count));
    set_time(o, "expires_at", m->expires_at, 1);
    set_time(o, "invalidated_at", m->invalidated_at, 1);
    set_str(o, "superseded_by", m->superseded_by);
    json_object_set_new(o, "duplicate_count", json_integer(m->duplicate_count));
    set_json_text(o, "metadata", m->metadata);
    set_json_text(o, "links", m->links);
    set_str(o, "model", m->model);
    if (with_vec && m->vector) {
        json_t *v = json_array();
        for (int i = 0; i < m->dim; i++) json_array_append_new(v, json_real(m->vector[i]));
        json_object_set_new(o, "vector", v);
    }
    return o;
}

static char *dump(json_t *o) {
    if (!o) return NULL;
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(7));
    json_decref(o);
    return s;
}

char *remem_memory_to_json(const remem_memory *m) { return dump(eng_memory_json(m, 0)); }

static json_t *num_or_null(double v) { return isnan(v) ? json_null() : json_real(v); }

static json_t *hit_json(const remem_hit *h) {
    json_t *o = eng_memory_json(&h->mem, 0);
    if (!o) return NULL;
    json_object_set_new(o, "score", json_real(h->score));
    json_t *c = json_object();
    json_object_set_new(c, "relevance", json_real(h->relevance));
    json_object_set_new(c, "similarity", num_or_null(h->similarity));
    json_object_set_new(c, "lexical", json_real(h->lexical));
    json_object_set_new(c, "bm25", json_real(h->bm25));
    json_object_set_new(c, "recency", json_real(h->recency));
    json_object_set_new(c, "importance", json_real(h->importance));
    json_object_set_new(c, "context", json_real(h->context));
    json_t *lanes = json_array();
    if (h->lanes & 1) json_array_append_new(lanes, json_string("vector"));
    if (h->lanes & 2) json_array_append_new(lanes, json_string("lexical"));
    json_object_set_new(c, "lanes", lanes);
    json_object_set_new(o, "components", c);
    return o;
}

char *remem_hit_to_json(const remem_hit *h) { return dump(hit_json(h)); }

char *remem_result_to_json(const remem_result *r) {
    json_t *o = json_object();
    json_object_set_new(o, "profile", json_string(r->profile ? r->profile : ""));
    char t[40];
    util_format_time(r->now, t, sizeof t);
    json_object_set_new(o, "now", json_string(t));
    json_object_set_new(o, "candidates", json_integer((json_int_t)r->candidates));
    json_object_set_new(o, "took_ms", json_real(r->took_ms));
    json_t *hits = json_array();
    for (size_t i = 0; i < r->n; i++) json_array_append_new(hits, hit_json(&r->hits[i]));
    json_object_set_new(o, "hits", hits);
    return dump(o);
}
