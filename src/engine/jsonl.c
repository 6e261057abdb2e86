/*
 * jsonl.c: one line of remem's JSONL format into a remem_memory, for
 * `remem import`, the server's batch route and the bindings. The line's
 * strings stay in the parsed JSON tree (held by remem_line) so nothing is
 * copied; metadata and links are re-serialised once. Every problem is a
 * REMEM_EPARSE that names the field (`created_at: "2023-02-31" is not a
 * valid time (February 2023 has 28 days)`, from util/time.h).
 * The format is the one `remem export` writes, so export | import round-trips.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "util/util.h"

struct remem_line {
    json_t *root;
    char *metadata, *links;
    float *vector;
};

void remem_free_line(remem_line *h) {
    if (!h) return;
    json_decref(h->root);
    free(h->metadata);
    free(h->links);
    free(h->vector);
    free(h);
}

static int time_field(remem *db, json_t *o, const char *key, int64_t *out) {
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return REMEM_OK;
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return REMEM_OK;
    }
    if (!json_is_string(v))
        return eng_fail(db, REMEM_EPARSE, "%s: must be milliseconds or an ISO 8601 string", key);
    char msg[384];
    if (util_parse_time_field(key, json_string_value(v), out, msg, sizeof msg))
        return eng_fail(db, REMEM_EPARSE, "%s", msg);
    return REMEM_OK;
}

static int str_field(remem *db, json_t *o, const char *key, const char **out) {
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return REMEM_OK;
    if (!json_is_string(v)) return eng_fail(db, REMEM_EPARSE, "%s: must be a string", key);
    *out = json_string_value(v);
    return REMEM_OK;
}

/* The line into *m, a remem_memory of the library's own size. */
static int parse_line(remem *db, const char *line, size_t len, const char *default_ns,
                      remem_memory *m, remem_line **holder) {
    remem_memory_init(m);
    remem_line *h = calloc(1, sizeof *h);
    if (!h) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    json_error_t e;
    h->root = json_loadb(line, len, 0, &e);
    int rc = REMEM_OK;
    if (!h->root) {
        rc = eng_fail(db, REMEM_EPARSE, "not valid JSON: %s (column %d)", e.text, e.column);
        goto out;
    }
    json_t *o = h->root;
    if (!json_is_object(o)) {
        rc = eng_fail(db, REMEM_EPARSE, "a line must be a JSON object");
        goto out;
    }
    m->ns = default_ns;
    if ((rc = str_field(db, o, "ns", &m->ns)) || (rc = str_field(db, o, "id", &m->id)) ||
        (rc = str_field(db, o, "kind", &m->kind)) || (rc = str_field(db, o, "tier", &m->tier)) ||
        (rc = str_field(db, o, "text", &m->text)))
        goto out;
    if (!m->text || !*m->text) {
        rc = eng_fail(db, REMEM_EPARSE, "text: missing or empty");
        goto out;
    }
    if (!m->ns || !*m->ns) {
        rc = eng_fail(db, REMEM_EPARSE, "ns: missing (and no default namespace given)");
        goto out;
    }
    json_t *imp = json_object_get(o, "importance");
    if (imp && !json_is_null(imp)) {
        if (!json_is_number(imp) || json_number_value(imp) < 0 || json_number_value(imp) > 1) {
            rc = eng_fail(db, REMEM_EPARSE, "importance: must be a number in [0,1]");
            goto out;
        }
        m->importance = json_number_value(imp);
    }
    if ((rc = time_field(db, o, "created_at", &m->created_at)) ||
        (rc = time_field(db, o, "expires_at", &m->expires_at)) ||
        (rc = time_field(db, o, "invalidated_at", &m->invalidated_at)) ||
        (rc = str_field(db, o, "superseded_by", &m->superseded_by)))
        goto out;
    json_t *meta = json_object_get(o, "metadata");
    if (meta && !json_is_null(meta)) {
        if (!json_is_object(meta)) {
            rc = eng_fail(db, REMEM_EPARSE, "metadata: must be an object");
            goto out;
        }
        if (!(h->metadata = json_dumps(meta, JSON_COMPACT))) goto oom;
        m->metadata = h->metadata;
    }
    json_t *links = json_object_get(o, "links");
    if (links && !json_is_null(links)) {
        size_t i;
        json_t *v;
        int ok = json_is_array(links);
        json_array_foreach(links, i, v) ok = ok && json_is_string(v);
        if (!ok) {
            rc = eng_fail(db, REMEM_EPARSE, "links: must be an array of ids");
            goto out;
        }
        if (!(h->links = json_dumps(links, JSON_COMPACT))) goto oom;
        m->links = h->links;
    }
    json_t *vec = json_object_get(o, "vector");
    if (vec && !json_is_null(vec)) {
        size_t n = json_is_array(vec) ? json_array_size(vec) : 0;
        if (n == 0 || n > 65536) {
            rc = eng_fail(db, REMEM_EPARSE, "vector: must be a non-empty array of numbers");
            goto out;
        }
        if (!(h->vector = malloc(n * sizeof *h->vector))) goto oom;
        for (size_t i = 0; i < n; i++) {
            json_t *x = json_array_get(vec, i);
            if (!json_is_number(x) || !isfinite(json_number_value(x))) {
                rc = eng_fail(db, REMEM_EPARSE, "vector: element %zu is not a number", i);
                goto out;
            }
            h->vector[i] = (float)json_number_value(x);
        }
        m->vector = h->vector;
        m->dim = (int)n;
    }
    /* What remem_add would refuse (an unknown tier, an empty id, ...) is
     * refused here, so a checked import never fails half-way. */
    if ((rc = eng_check_memory(db, m))) goto out;
    *holder = h;
    return REMEM_OK;
oom:
    rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
out:
    remem_free_line(h);
    remem_memory_init(m);
    return rc;
}

/* The caller's *m may be smaller than ours (an older remem.h): the line is
 * parsed into a full one and handed over up to the caller's size. */
int remem_parse_line(remem *db, const char *line, size_t len, const char *default_ns,
                     remem_memory *m, remem_line **holder) {
    *holder = NULL;
    if (!db) return REMEM_EINVAL;
    remem_memory full;
    remem_memory_init(&full);
    int rc = eng_give_memory(db, &full, m);
    if (rc) return rc;
    rc = parse_line(db, line, len, default_ns, &full, holder);
    eng_give_memory(db, &full, m);
    return rc;
}
