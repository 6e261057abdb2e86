/*
 * query.c: the recall query as JSON, read once for every face. HTTP's
 * POST /v1/recall, MCP's recall tool, `remem recall` and the Python binding
 * each used to read the query with rules of their own (HTTP capped k at a
 * million, MCP at 100, the CLI at 1000; one face refused what another
 * took); now they all hand the JSON text to remem_query_parse, so a query
 * is accepted or refused the same way, with the same message, everywhere.
 *
 * The numeric rules live in one table (query_limits below) used twice: by
 * the parser, and by eng_query_check, which remem_recall runs on every
 * query, so a C caller filling a remem_query by hand meets the same rules
 * and messages as a JSON client. Messages are always "FIELD: PROBLEM"
 * with the offending value printed as a user wrote it (1e9 prints as
 * 1000000000, the same as 1001 is printed).
 *
 * Ownership: remem_query_json holds the parsed JSON document, and the
 * query's strings point into it; what has no place there (the namespace
 * array, the vector as floats, the filter as text, the tiers joined) is
 * allocated beside it and freed with it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "util/util.h"

struct remem_query_json {
    remem_query q;
    json_t *root;
    const char **namespaces;
    float *vector;
    char *filter;
    char *tiers;
};

/* The bounds of the numeric overrides: [lo, hi], lo excluded when lo_open. */
typedef struct {
    const char *name;
    double lo, hi;
    int lo_open;
} limit;

#define QUERY_MAX_K          1000
#define QUERY_MAX_CANDIDATES 100000

static const limit lim_k = {"k", 1, QUERY_MAX_K, 0};
static const limit lim_candidates = {"candidates", 1, QUERY_MAX_CANDIDATES, 0};
static const limit lim_weight = {NULL, 0, 1e6, 0}; /* every w_* */
static const limit lim_any = {NULL, -HUGE_VAL, HUGE_VAL, 0};
static const limit lim_recency_base = {"recency_base", 0, 1, 1};
static const limit lim_half_life = {"half_life_hours", 0, 1e7, 1};

/* A number as a user would write it: integers in full (1e9 reads
 * 1000000000), others shortest. */
static const char *num_text(double x, char buf[40]) {
    if (x == floor(x) && fabs(x) < 1e15)
        snprintf(buf, 40, "%.0f", x);
    else
        snprintf(buf, 40, "%g", x);
    return buf;
}

/* REMEM_OK if x is within l, else REMEM_EINVAL and the message. */
static int check_limit(const limit *l, const char *name, double x, char *err, size_t cap) {
    char a[40], b[40];
    if (!isfinite(x)) return util_errf(err, cap, REMEM_EINVAL, "%s: must be a finite number", name);
    if (l->lo_open && x <= l->lo)
        return util_errf(err, cap, REMEM_EINVAL, "%s: %s must be above %s", name, num_text(x, a),
                         num_text(l->lo, b));
    if (x < l->lo)
        return util_errf(err, cap, REMEM_EINVAL, "%s: %s is below the minimum of %s", name,
                         num_text(x, a), num_text(l->lo, b));
    if (x > l->hi)
        return util_errf(err, cap, REMEM_EINVAL, "%s: %s is above the limit of %s", name,
                         num_text(x, a), num_text(l->hi, b));
    return REMEM_OK;
}

static const struct {
    const char *name;
    size_t offset;
    const limit *lim;
} doubles[] = {
    {"w_relevance", offsetof(remem_query, w_relevance), &lim_weight},
    {"w_lexical", offsetof(remem_query, w_lexical), &lim_weight},
    {"w_recency", offsetof(remem_query, w_recency), &lim_weight},
    {"w_importance", offsetof(remem_query, w_importance), &lim_weight},
    {"w_context", offsetof(remem_query, w_context), &lim_weight},
    {"min_similarity", offsetof(remem_query, min_similarity), &lim_any},
    {"min_score", offsetof(remem_query, min_score), &lim_any},
    {"recency_base", offsetof(remem_query, recency_base), &lim_recency_base},
    {"half_life_hours", offsetof(remem_query, half_life_hours), &lim_half_life},
};
#define N_DOUBLES (sizeof doubles / sizeof doubles[0])

int eng_query_check(const remem_query *q, char *err, size_t cap) {
    int rc;
    /* In C, k <= 0 and candidates <= 0 mean "the profile's". */
    if (q->k > 0 && (rc = check_limit(&lim_k, "k", q->k, err, cap))) return rc;
    if (q->candidates > 0 &&
        (rc = check_limit(&lim_candidates, "candidates", q->candidates, err, cap)))
        return rc;
    for (size_t i = 0; i < N_DOUBLES; i++) {
        double x = *(const double *)((const char *)q + doubles[i].offset);
        if (isnan(x)) continue; /* the profile's */
        if ((rc = check_limit(doubles[i].lim, doubles[i].name, x, err, cap))) return rc;
    }
    return REMEM_OK;
}

/* ------------------------------------------------------------------ */
/* The JSON reader                                                     */
/* ------------------------------------------------------------------ */

static const char *const known_fields[] = {"namespaces",
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

static const char *type_word(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    default: return "null";
    }
}

typedef struct {
    json_t *o;
    char *err;
    size_t cap;
} reader;

static int wrong_type(reader *r, const char *name, const char *want, const json_t *v) {
    return util_errf(r->err, r->cap, REMEM_EINVAL, "%s: must be %s, got %s", name, want,
                     type_word(v));
}

/* The field's value, or NULL when absent or null. */
static json_t *field(reader *r, const char *name) {
    json_t *v = json_object_get(r->o, name);
    return v && !json_is_null(v) ? v : NULL;
}

static int unknown_fields(reader *r) {
    const char *key;
    json_t *v;
    json_object_foreach(r->o, key, v) {
        const char *const *k = known_fields;
        while (*k && strcmp(*k, key) != 0) k++;
        if (*k) continue;
        char list[512] = "";
        size_t used = 0;
        for (k = known_fields; *k && used < sizeof list; k++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                     k == known_fields ? "" : ", ", *k);
        return util_errf(r->err, r->cap, REMEM_EINVAL, "%.64s: unknown field (known: %s)", key,
                         list);
    }
    return REMEM_OK;
}

static int read_string(reader *r, const char *name, const char **out) {
    json_t *v = field(r, name);
    if (!v) return REMEM_OK;
    if (!json_is_string(v)) return wrong_type(r, name, "a string", v);
    *out = json_string_value(v);
    return REMEM_OK;
}

static int read_bool(reader *r, const char *name, int *out) {
    json_t *v = field(r, name);
    if (!v) return REMEM_OK;
    if (!json_is_boolean(v)) return wrong_type(r, name, "true or false", v);
    *out = json_is_true(v);
    return REMEM_OK;
}

/* An integer field within l: 5 and 5.0 are fine, 5.5 is not. */
static int read_int(reader *r, const limit *l, int *out) {
    json_t *v = field(r, l->name);
    if (!v) return REMEM_OK;
    if (!json_is_number(v)) return wrong_type(r, l->name, "an integer", v);
    double x = json_number_value(v);
    char a[40];
    int rc = check_limit(l, l->name, x, r->err, r->cap);
    if (rc) return rc;
    if (x != floor(x))
        return util_errf(r->err, r->cap, REMEM_EINVAL, "%s: %s is not a whole number", l->name,
                         num_text(x, a));
    *out = (int)x;
    return REMEM_OK;
}

static int read_doubles(reader *r, remem_query *q) {
    for (size_t i = 0; i < N_DOUBLES; i++) {
        json_t *v = field(r, doubles[i].name);
        if (!v) continue;
        if (!json_is_number(v)) return wrong_type(r, doubles[i].name, "a number", v);
        double x = json_number_value(v);
        int rc = check_limit(doubles[i].lim, doubles[i].name, x, r->err, r->cap);
        if (rc) return rc;
        *(double *)((char *)q + doubles[i].offset) = x;
    }
    return REMEM_OK;
}

static int read_namespaces(reader *r, remem_query_json *p) {
    json_t *v = field(r, "namespaces");
    if (!v)
        return util_errf(r->err, r->cap, REMEM_EINVAL, "namespaces: missing; name at least one");
    if (json_is_string(v)) { /* a lone name */
        json_t *list = json_pack("[O]", v);
        if (!list || json_object_set_new(r->o, "namespaces", list))
            return util_errf(r->err, r->cap, REMEM_ENOMEM, "out of memory");
        v = list;
    }
    if (!json_is_array(v))
        return util_errf(r->err, r->cap, REMEM_EINVAL,
                         "namespaces: must be a name or a list of names");
    size_t n = json_array_size(v);
    if (n == 0)
        return util_errf(r->err, r->cap, REMEM_EINVAL, "namespaces: empty; name at least one");
    if (!(p->namespaces = calloc(n, sizeof *p->namespaces)))
        return util_errf(r->err, r->cap, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(v, i);
        if (!json_is_string(x) || json_string_length(x) == 0)
            return util_errf(r->err, r->cap, REMEM_EINVAL,
                             "namespaces: item %zu must be a non-empty string", i);
        p->namespaces[i] = json_string_value(x);
    }
    p->q.namespaces = p->namespaces;
    p->q.n_namespaces = n;
    return REMEM_OK;
}

static int read_vector(reader *r, remem_query_json *p) {
    json_t *v = field(r, "vector");
    if (!v) return REMEM_OK;
    size_t n = json_is_array(v) ? json_array_size(v) : 0;
    if (!json_is_array(v)) return wrong_type(r, "vector", "an array of numbers", v);
    if (n == 0 || n > 65536)
        return util_errf(r->err, r->cap, REMEM_EINVAL,
                         "vector: must hold 1 to 65536 numbers, got %zu", n);
    if (!(p->vector = malloc(n * sizeof *p->vector)))
        return util_errf(r->err, r->cap, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(v, i);
        if (!json_is_number(x))
            return util_errf(r->err, r->cap, REMEM_EINVAL,
                             "vector: item %zu must be a number, got %s", i, type_word(x));
        p->vector[i] = (float)json_number_value(x);
        if (!isfinite(p->vector[i]))
            return util_errf(r->err, r->cap, REMEM_EINVAL, "vector: item %zu is out of float range",
                             i);
    }
    p->q.vector = p->vector;
    p->q.dim = (int)n;
    return REMEM_OK;
}

static int read_filter(reader *r, remem_query_json *p) {
    json_t *v = field(r, "filter");
    if (!v) return REMEM_OK;
    if (json_is_string(v)) {
        p->q.filter = json_string_value(v);
        return REMEM_OK;
    }
    if (!json_is_object(v)) return wrong_type(r, "filter", "an object (or its JSON text)", v);
    /* remem_query takes the filter as text */
    if (!(p->filter = json_dumps(v, JSON_COMPACT)))
        return util_errf(r->err, r->cap, REMEM_ENOMEM, "out of memory");
    p->q.filter = p->filter;
    return REMEM_OK;
}

static int read_tiers(reader *r, remem_query_json *p) {
    json_t *v = field(r, "tiers");
    if (!v) return REMEM_OK;
    if (json_is_string(v)) {
        p->q.tiers = json_string_value(v);
        return REMEM_OK;
    }
    if (!json_is_array(v)) return wrong_type(r, "tiers", "an array of tier names", v);
    strbuf b;
    sb_init(&b);
    size_t i;
    json_t *t;
    json_array_foreach(v, i, t) {
        if (!json_is_string(t)) {
            sb_free(&b);
            return util_errf(r->err, r->cap, REMEM_EINVAL,
                             "tiers: item %zu must be a string, got %s", i, type_word(t));
        }
        sb_printf(&b, "%s%s", i ? "," : "", json_string_value(t));
    }
    sb_puts(&b, "");
    if (b.oom) {
        sb_free(&b);
        return util_errf(r->err, r->cap, REMEM_ENOMEM, "out of memory");
    }
    p->tiers = sb_take(&b);
    p->q.tiers = p->tiers;
    return REMEM_OK;
}

static int read_now(reader *r, remem_query *q) {
    json_t *v = field(r, "now");
    if (!v) return REMEM_OK;
    if (json_is_integer(v)) {
        q->now = json_integer_value(v);
        return REMEM_OK;
    }
    if (!json_is_string(v)) return wrong_type(r, "now", "milliseconds or an ISO 8601 string", v);
    if (util_parse_time_field("now", json_string_value(v), &q->now, r->err, r->cap))
        return REMEM_EINVAL;
    return REMEM_OK;
}

static int read_query(reader *r, remem_query_json *p) {
    remem_query *q = &p->q;
    int rc, touch = 1;
    if ((rc = unknown_fields(r)) || (rc = read_namespaces(r, p)) ||
        (rc = read_string(r, "text", &q->text)) || (rc = read_vector(r, p)))
        return rc;
    if (!q->vector && (!q->text || !*q->text))
        return util_errf(r->err, r->cap, REMEM_EINVAL, "text: %s; give text or vector to recall by",
                         q->text ? "empty" : "missing");
    if ((rc = read_filter(r, p)) || (rc = read_string(r, "profile", &q->profile)) ||
        (rc = read_int(r, &lim_k, &q->k)) || (rc = read_doubles(r, q)) ||
        (rc = read_int(r, &lim_candidates, &q->candidates)) ||
        (rc = read_bool(r, "normalize", &q->normalize)) || (rc = read_tiers(r, p)) ||
        (rc = read_now(r, q)) || (rc = read_bool(r, "touch", &touch)) ||
        (rc = read_bool(r, "include_invalid", &q->include_invalid)))
        return rc;
    q->no_touch = !touch;
    return REMEM_OK;
}

/* The query read from root (an object, or not: then refused), which the
 * parsed query keeps a reference to. */
static int query_from_tree(json_t *root, remem_query_json **out, char *err, size_t errcap) {
    remem_query_json *p = calloc(1, sizeof *p);
    if (!p) {
        json_decref(root);
        return util_errf(err, errcap, REMEM_ENOMEM, "out of memory");
    }
    remem_query_init(&p->q);
    p->root = root;
    int rc;
    if (!json_is_object(p->root))
        rc = util_errf(err, errcap, REMEM_EPARSE, "query: must be a JSON object, got %s",
                       type_word(p->root));
    else {
        reader r = {p->root, err, errcap};
        rc = read_query(&r, p);
    }
    if (rc) {
        remem_query_json_free(p);
        return rc;
    }
    *out = p;
    return REMEM_OK;
}

int remem_query_parse(const char *json, size_t len, remem_query_json **out, char *err,
                      size_t errcap) {
    if (err && errcap) err[0] = '\0';
    if (!out) return util_errf(err, errcap, REMEM_EINVAL, "no place for the parsed query");
    *out = NULL;
    if (!json) return util_errf(err, errcap, REMEM_EINVAL, "no query given");
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return util_errf(err, errcap, REMEM_EPARSE, "query: not valid JSON: %s (line %d, column %d)",
                         je.text, je.line, je.column);
    return query_from_tree(root, out, err, errcap);
}

int eng_query_from_json(json_t *root, remem_query_json **out, char *err, size_t errcap) {
    if (err && errcap) err[0] = '\0';
    *out = NULL;
    if (!root) return util_errf(err, errcap, REMEM_EINVAL, "no query given");
    return query_from_tree(json_incref(root), out, err, errcap);
}

const remem_query *remem_query_json_get(const remem_query_json *p) { return &p->q; }

void remem_query_json_free(remem_query_json *p) {
    if (!p) return;
    json_decref(p->root);
    free(p->namespaces);
    free(p->vector);
    free(p->filter);
    free(p->tiers);
    free(p);
}

int remem_parse_time_field(const char *field, const char *s, int64_t *ms, char *err,
                           size_t errcap) {
    return util_parse_time_field(field ? field : "time", s, ms, err, errcap) ? REMEM_EPARSE
                                                                             : REMEM_OK;
}
