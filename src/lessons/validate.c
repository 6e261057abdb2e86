/*
 * validate.c: the structural validation gate (seed 002) and its retry
 * counter. The gate answers one question before a tool runs: is this
 * input shaped as the tool's schema says? Exactly four kinds of
 * violation, every one returned as data so the agent can regenerate the
 * input at once:
 *   wrong_type        the input's top level is not the schema's type
 *   missing_required  a required key is absent
 *   empty_string      a required key holds an empty (or blank) string
 *   unknown_key       a key the schema does not list, when it forbids extras
 * Never semantics: a bad shell command, wrong SQL, an HTTP error are
 * runtime failures (lesson.event), not the gate's business; nested values,
 * enums and bounds are not looked at either.
 *
 * The retry counter keeps a malformed-input loop from eating the step
 * budget: the same step may be regenerated LSN_RETRY_CAP times, then the
 * answer says "reflect". Its count per run and step is the attempts kept
 * (kind "attempt"), so it holds across processes; the process-wide totals
 * behind /metrics are two atomics.
 */
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lessons/lessons.h"

static atomic_uint_fast64_t retry_attempts, capped_events;

void lsn_count_retry(void) { atomic_fetch_add_explicit(&retry_attempts, 1, memory_order_relaxed); }
void lsn_count_capped(void) { atomic_fetch_add_explicit(&capped_events, 1, memory_order_relaxed); }

void remem_validation_counters(uint64_t *attempts, uint64_t *capped) {
    if (attempts) *attempts = atomic_load_explicit(&retry_attempts, memory_order_relaxed);
    if (capped) *capped = atomic_load_explicit(&capped_events, memory_order_relaxed);
}

static const char *type_name(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    default: return "null";
    }
}

static int is_type(const char *t, const json_t *v) {
    if (!strcmp(t, "number")) return json_is_number(v);
    if (!strcmp(t, "integer")) return json_is_integer(v);
    return !strcmp(t, type_name(v));
}

static int blank(const char *s) {
    for (; *s; s++)
        if (!isspace((unsigned char)*s)) return 0;
    return 1;
}

static void violation(json_t *out, const char *kind, const char *key, const char *fmt,
                      const char *a, const char *b) {
    char msg[600];
    snprintf(msg, sizeof msg, fmt, a, b);
    json_t *v = json_pack("{ss ss}", "kind", kind, "message", msg);
    json_object_set_new(v, "key", key ? json_string(key) : json_null());
    json_array_append_new(out, v);
}

json_t *lsn_validate(const json_t *schema, const json_t *input) {
    json_t *out = json_array();
    const json_t *type = json_object_get(schema, "type");
    const char *want = json_is_string(type) ? json_string_value(type) : "object";
    if (!is_type(want, input)) {
        char what[80];
        snprintf(what, sizeof what, "%s %s", strchr("aeiou", want[0]) ? "an" : "a", want);
        violation(out, "wrong_type", NULL, "the input is %s; the schema wants %s", type_name(input),
                  what);
        return out;
    }
    if (!json_is_object(input)) return out;
    const json_t *props = json_object_get(schema, "properties");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(schema, "required"), i, r) {
        if (!json_is_string(r)) continue;
        const char *k = json_string_value(r);
        json_t *v = json_object_get(input, k);
        if (!v)
            violation(out, "missing_required", k, "required key \"%s\" is missing%s", k, "");
        else if (json_is_string(v) && blank(json_string_value(v)))
            violation(out, "empty_string", k, "required key \"%s\" is an empty string%s", k, "");
    }
    if (json_is_false(json_object_get(schema, "additionalProperties"))) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)input, k, v) {
            if (!json_object_get(props, k))
                violation(out, "unknown_key", k,
                          "key \"%s\" is not in the schema, which forbids "
                          "extra keys%s",
                          k, "");
        }
    }
    return out;
}

int lsn_op_validate(remem *db, json_t *args, json_t **result) {
    json_t *schema = json_object_get(args, "schema"), *input = json_object_get(args, "input");
    const char *ns = lsn_s(args, "ns"), *run = lsn_s(args, "run");
    int64_t step = lsn_i(args, "step", 0);
    if (run && !ns) return eng_fail(db, REMEM_EINVAL, "run: counting retries needs --ns");
    const json_t *st = json_object_get(schema, "type");
    if (st && !json_is_string(st))
        return eng_fail(db, REMEM_EINVAL, "schema: \"type\" must be a string");
    if (json_object_get(schema, "required") && !json_is_array(json_object_get(schema, "required")))
        return eng_fail(db, REMEM_EINVAL, "schema: \"required\" must be an array of key names");
    json_t *v = lsn_validate(schema, input);
    if (!v) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    int valid = json_array_size(v) == 0;
    const char *signal = valid ? "execute" : "retry";
    int64_t retry = 0;
    int rc = REMEM_OK;
    if (run) {
        /* The invalid attempts already kept for this run and step. */
        lsn_list at = {0};
        rc = lsn_list_kind(db, ns, "attempt", &at);
        for (size_t i = 0; !rc && i < at.n; i++) {
            const json_t *m = at.v[i].meta;
            const char *r = lsn_s(m, "run");
            if (r && !strcmp(r, run) && lsn_i(m, "step", -1) == step &&
                json_is_false(json_object_get(m, "valid")))
                retry++;
        }
        lsn_list_free(&at);
        if (!valid) {
            retry++;
            signal = retry > LSN_RETRY_CAP ? "reflect" : "retry";
        }
        char id[40];
        lsn_new_id("att_", id);
        json_t *meta = json_pack("{ss ss sI sO sb sO si ss}", "attempt_id", id, "run", run, "step",
                                 (json_int_t)step, "input", input, "valid", valid, "violations", v,
                                 "retry", valid ? 0 : (int)retry, "signal", signal);
        if (lsn_s(args, "tool"))
            json_object_set_new(meta, "tool", json_string(lsn_s(args, "tool")));
        char *text = json_dumps(input, JSON_COMPACT | JSON_ENCODE_ANY);
        lsn_batch b = {0};
        if (!rc) rc = lsn_batch_put(&b, ns, id, "attempt", text ? text : "input", meta);
        free(text);
        json_decref(meta);
        if (rc) {
            lsn_batch_free(&b);
            json_decref(v);
            return rc == REMEM_ENOMEM ? eng_fail(db, rc, "out of memory") : rc;
        }
        rc = lsn_batch_commit(db, &b);
        if (rc) {
            json_decref(v);
            return rc;
        }
        if (!valid) {
            if (retry > LSN_RETRY_CAP)
                lsn_count_capped();
            else
                lsn_count_retry();
        }
    }
    strbuf t;
    sb_init(&t);
    if (valid)
        sb_puts(&t, "valid: execute");
    else
        sb_printf(&t, "invalid (%zu violation%s): %s", json_array_size(v),
                  json_array_size(v) == 1 ? "" : "s", signal);
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) sb_printf(&t, "\n  %s: %s", lsn_s(e, "kind"), lsn_s(e, "message"));
    *result = json_pack("{sb so ss ss}", "valid", valid, "violations", v, "signal", signal, "text",
                        t.data ? t.data : "");
    sb_free(&t);
    if (*result && run) {
        json_object_set_new(*result, "retry", json_integer(valid ? 0 : retry));
        json_object_set_new(*result, "retry_cap", json_integer(LSN_RETRY_CAP));
    }
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}
