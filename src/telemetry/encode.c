/*
 * encode.c: spans in OTLP/JSON (the ExportTraceServiceRequest of
 * opentelemetry-proto, JSON mapping): ids as lowercase hex (trace 32
 * digits, span 16), 64-bit integers (times, int attributes) as decimal
 * strings, enums (kind, status code) as numbers, attributes as {key,
 * value:{stringValue|intValue|doubleValue|boolValue}}. All spans of a batch
 * share one resource (service.name) and one scope ("remem").
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "remem.h"
#include "telemetry/telemetry.h"

static json_t *hex(const uint8_t *b, size_t n) {
    char s[33];
    for (size_t i = 0; i < n; i++) snprintf(s + 2 * i, 3, "%02x", b[i]);
    return json_stringn(s, 2 * n);
}

static json_t *u64s(uint64_t v) {
    char s[24];
    snprintf(s, sizeof s, "%llu", (unsigned long long)v);
    return json_string(s);
}

static json_t *attr_json(const tm_attr *a) {
    json_t *v = NULL;
    char n[24];
    switch (a->type) {
    case TM_STR: v = json_pack("{s:s}", "stringValue", a->v.s); break;
    case TM_INT:
        snprintf(n, sizeof n, "%lld", (long long)a->v.i);
        v = json_pack("{s:s}", "intValue", n);
        break;
    case TM_DBL: /* JSON has no NaN or infinity */
        v = json_pack("{s:f}", "doubleValue", isfinite(a->v.d) ? a->v.d : 0.0);
        break;
    case TM_BOOL: v = json_pack("{s:b}", "boolValue", (int)a->v.i); break;
    }
    return v ? json_pack("{s:s,s:o}", "key", a->key, "value", v) : NULL;
}

/* The resource every request carries. */
json_t *tm_resource_json(const char *service) {
    return json_pack("{s:[{s:s,s:{s:s}},{s:s,s:{s:s}},{s:s,s:{s:s}}]}", "attributes", "key",
                     "service.name", "value", "stringValue", service, "key", "telemetry.sdk.name",
                     "value", "stringValue", "remem", "key", "telemetry.sdk.language", "value",
                     "stringValue", "c");
}

json_t *tm_scope_json(void) {
    return json_pack("{s:s,s:s}", "name", "remem", "version", REMEM_VERSION);
}

char *tm_encode_spans(tm_span *const *spans, size_t n, const char *service) {
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        const tm_span *s = spans[i];
        json_t *attrs = json_array();
        for (size_t k = 0; k < s->n_attrs; k++)
            json_array_append_new(attrs, attr_json(&s->attrs[k]));
        json_t *sp =
            json_pack("{s:o,s:o,s:s,s:i,s:o,s:o,s:o}", "traceId", hex(s->trace_id, 16), "spanId",
                      hex(s->span_id, 8), "name", s->name, "kind", s->kind, "startTimeUnixNano",
                      u64s(s->start_ns), "endTimeUnixNano", u64s(s->end_ns), "attributes", attrs);
        if (sp && s->has_parent) json_object_set_new(sp, "parentSpanId", hex(s->parent_id, 8));
        json_t *st = json_pack("{s:i}", "code", s->status);
        if (st && s->status_msg) json_object_set_new(st, "message", json_string(s->status_msg));
        if (sp)
            json_object_set_new(sp, "status", st);
        else
            json_decref(st);
        if (!sp || json_array_append_new(arr, sp)) {
            json_decref(arr);
            return NULL;
        }
    }
    json_t *req = arr ? json_pack("{s:[{s:o,s:[{s:o,s:o}]}]}", "resourceSpans", "resource",
                                  tm_resource_json(service), "scopeSpans", "scope", tm_scope_json(),
                                  "spans", arr)
                      : NULL;
    char *out = req ? json_dumps(req, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(req);
    return out;
}
