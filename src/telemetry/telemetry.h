/*
 * telemetry.h: remem's OpenTelemetry exporter (docs/telemetry.md). Spans
 * and a handful of metrics, sent in batches over OTLP/HTTP with the JSON
 * encoding (POST {endpoint}/v1/traces and /v1/metrics) by one background
 * thread, configured by the standard OTEL_* variables.
 *
 * Shaped by two promises:
 *   - off costs nothing: with no endpoint set (or OTEL_SDK_DISABLED=true)
 *     tm_span_start returns NULL after one branch, and every tm_span_* call
 *     takes NULL;
 *   - a request is never slowed by the collector: a finished span goes into
 *     a bounded queue under a short lock; when the queue is full the span
 *     is dropped and counted, and a failed export drops its batch and
 *     counts it. Nothing waits on the network but the exporter thread.
 *
 * Spans nest per thread: a span started while another is open on the same
 * thread becomes its child (same trace id, parent span id).
 *
 * Metrics are kept whether or not an endpoint is set (a few atomic adds or
 * a short lock per operation), since the server's /metrics shows them too.
 *
 * A part: it knows nothing of the engine; the engine's telemetry_glue.c
 * names the spans and fills their attributes.
 */
#ifndef REMEM_TELEMETRY_H
#define REMEM_TELEMETRY_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

enum {
    TM_MAX_ATTRS = 24,
    TM_KIND_INTERNAL = 1,
    TM_KIND_CLIENT = 3,
    TM_STATUS_UNSET = 0,
    TM_STATUS_OK = 1,
    TM_STATUS_ERROR = 2,
};

typedef enum { TM_STR, TM_INT, TM_DBL, TM_BOOL } tm_type;

typedef struct tm_attr {
    char *key;
    tm_type type;
    union {
        char *s;
        int64_t i;
        double d;
    } v;
} tm_attr;

typedef struct tm_span {
    char name[64];
    uint8_t trace_id[16], span_id[8], parent_id[8];
    int has_parent, kind, status;
    char *status_msg;
    uint64_t start_ns, end_ns; /* Unix time in ns */
    size_t n_attrs;
    tm_attr attrs[TM_MAX_ATTRS];
    struct tm_span *up; /* the span open on this thread before this one */
} tm_span;

/* ---- spans ---- */

/* 1 when spans are exported (an endpoint is set and the SDK not disabled);
 * the first call reads the environment and starts the exporter thread. */
int tm_enabled(void);
/* A new span, child of the one open on this thread; NULL when off. */
tm_span *tm_span_start(const char *name, int kind);
void tm_span_str(tm_span *s, const char *key, const char *v); /* v NULL: nothing */
void tm_span_int(tm_span *s, const char *key, int64_t v);
void tm_span_dbl(tm_span *s, const char *key, double v);
void tm_span_bool(tm_span *s, const char *key, int v);
void tm_span_error(tm_span *s, const char *msg);
/* Ends s (status OK unless an error was set) and queues it for export, or
 * drops and counts it when the queue is full. s is gone after. */
void tm_span_end(tm_span *s);
void tm_span_free(tm_span *s);

/* ---- metrics (always kept) ---- */

typedef enum { TM_COUNTER, TM_GAUGE, TM_HISTOGRAM } tm_metric_kind;
/* Adds v to counter name (created on first use with unit and desc). */
void tm_count(const char *name, const char *unit, const char *desc, double v);
void tm_gauge(const char *name, const char *unit, const char *desc, double v);
/* A function that sets gauges from live figures (tm_gauge), run just
 * before every read of the metrics (/metrics, the OTLP export), so that a
 * gauge is read, not pushed at each change. Registering the same function
 * twice keeps one; at most 8. 0, or -1 when full. */
int tm_add_collector(void (*fn)(void));
/* Records v in histogram name, whose bucket bounds are fixed per unit
 * ("ms": latency, "By": sizes, else decimal powers). */
void tm_observe(const char *name, const char *unit, const char *desc, double v);

/* The exporter's own counts. */
typedef struct tm_counts {
    uint64_t spans_started, spans_exported, spans_dropped_queue_full, spans_dropped_export,
        exports_failed, metric_exports;
    size_t queue_len, queue_cap;
} tm_counts;
void tm_get_counts(tm_counts *c);
/* Every metric and the exporter's counts as one JSON object:
 * {"enabled":b,"spans":{...counts},"metrics":[{"name","kind","unit",
 * "description","value"|"count","sum","bounds","buckets"}]}; malloc'd. */
char *tm_snapshot_json(void);

/* Sends what is queued now and waits (up to the export timeout) for it:
 * what a short-lived process does before exiting (registered with atexit
 * when the exporter starts). */
void tm_flush(void);

/* ---- the pieces, for tests ---- */

/* The bounded queue: a ring of cap span pointers. push returns 0, or -1
 * when full (the caller drops and counts). */
typedef struct tm_queue {
    tm_span **ring;
    size_t cap, head, len;
} tm_queue;
int tm_queue_init(tm_queue *q, size_t cap);
int tm_queue_push(tm_queue *q, tm_span *s);
size_t tm_queue_pop(tm_queue *q, tm_span **out, size_t max);
void tm_queue_free(tm_queue *q);

/* The OTLP/JSON ExportTraceServiceRequest of n spans, malloc'd (NULL: out
 * of memory). */
char *tm_encode_spans(tm_span *const *spans, size_t n, const char *service);
/* The ExportMetricsServiceRequest of every metric kept, at now_ns. */
char *tm_encode_metrics(const char *service, uint64_t start_ns, uint64_t now_ns);

/* The configuration read from the environment (exposed for tests). */
typedef struct tm_config {
    int enabled;
    char traces_url[1024], metrics_url[1024], service[256];
    char *headers[17]; /* "Name: value" lines, NULL-ended */
    long delay_ms, timeout_ms;
    size_t queue_size, batch_size;
} tm_config;
/* Fills c from getenv; returns 0, or -1 with why when a variable is bad
 * (telemetry then stays off). Free the headers with tm_config_free. */
int tm_config_read(tm_config *c, char *why, size_t cap);
void tm_config_free(tm_config *c);

uint64_t tm_now_ns(void);

#endif
