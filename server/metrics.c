/*
 * metrics.c: the numbers behind GET /metrics, in Prometheus' text format.
 * Requests are counted per route template (never per raw path, so that ids
 * and namespaces do not explode the label space) and status; latency goes
 * into one fixed-bucket histogram per route. Everything is a relaxed atomic
 * in static arrays: recording a request costs a few increments and no lock,
 * and a scrape reads whatever is there (counters only grow, so a scrape
 * racing a request is off by that request at most). The workers' queue
 * (work.c) is read under its own lock at scrape time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serverInt.h"

#define STATUS_MIN   100
#define STATUS_SLOTS 500 /* 100..599 */

static const double bucket_le[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                   0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
#define N_BUCKETS (sizeof bucket_le / sizeof bucket_le[0])

static atomic_uint_fast64_t by_status[R_SLOTS][STATUS_SLOTS];
static atomic_uint_fast64_t buckets[R_SLOTS][N_BUCKETS + 1]; /* last: +Inf */
static atomic_uint_fast64_t sum_ns[R_SLOTS];

void metrics_record(int route, int status, double seconds) {
    if (route < 0 || route >= R_SLOTS) route = R_UNMATCHED;
    if (status >= STATUS_MIN && status < STATUS_MIN + STATUS_SLOTS)
        atomic_fetch_add_explicit(&by_status[route][status - STATUS_MIN], 1, memory_order_relaxed);
    size_t b = 0;
    while (b < N_BUCKETS && seconds > bucket_le[b]) b++;
    atomic_fetch_add_explicit(&buckets[route][b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&sum_ns[route], (uint_fast64_t)(seconds * 1e9), memory_order_relaxed);
}

/* Per operation (routes_ops.c): every route that runs an operation,
 * POST /v1/<operation> and the REST routes naming one, counted under the
 * operation's name, so that /v1/{operation} is not one series for all. */
#define OP_SLOTS 256
static const int op_status[] = {200, 201, 202, 400, 401, 403, 404, 405,
                                409, 413, 415, 500, 501, 502, 503, 0};
#define OP_STATUS_SLOTS (sizeof op_status / sizeof op_status[0])
static atomic_uint_fast64_t op_by_status[OP_SLOTS][OP_STATUS_SLOTS];
static atomic_uint_fast64_t op_sum_ns[OP_SLOTS];

void metrics_op(const char *name, int status, double seconds) {
    size_t n;
    const remem_op_info *ops = remem_ops(&n), *op = remem_op_find(name);
    size_t i = op ? (size_t)(op - ops) : OP_SLOTS;
    if (i >= OP_SLOTS) return;
    size_t s = 0;
    while (op_status[s] && op_status[s] != status) s++;
    atomic_fetch_add_explicit(&op_by_status[i][s], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&op_sum_ns[i], (uint_fast64_t)(seconds * 1e9), memory_order_relaxed);
}

static void render_ops(FILE *f) {
    size_t n;
    const remem_op_info *ops = remem_ops(&n);
    fputs("# HELP remem_operation_requests_total HTTP requests that ran an operation, by "
          "operation and status (other: a status not listed).\n"
          "# TYPE remem_operation_requests_total counter\n",
          f);
    for (size_t i = 0; i < n && i < OP_SLOTS; i++)
        for (size_t s = 0; s < OP_STATUS_SLOTS; s++) {
            uint_fast64_t c = atomic_load_explicit(&op_by_status[i][s], memory_order_relaxed);
            if (!c) continue;
            char st[16];
            if (op_status[s])
                snprintf(st, sizeof st, "%d", op_status[s]);
            else
                snprintf(st, sizeof st, "other");
            fprintf(f, "remem_operation_requests_total{operation=\"%s\",status=\"%s\"} %llu\n",
                    ops[i].name, st, (unsigned long long)c);
        }
    fputs("# HELP remem_operation_seconds_total Time spent running each operation over HTTP.\n"
          "# TYPE remem_operation_seconds_total counter\n",
          f);
    for (size_t i = 0; i < n && i < OP_SLOTS; i++) {
        uint_fast64_t ns = atomic_load_explicit(&op_sum_ns[i], memory_order_relaxed);
        if (ns)
            fprintf(f, "remem_operation_seconds_total{operation=\"%s\"} %.6f\n", ops[i].name,
                    ns / 1e9);
    }
}

static void route_labels(int route, const char **tmpl, const char **method) {
    if (route < R_COUNT) {
        *tmpl = server_routes[route].tmpl;
        *method = server_routes[route].method;
    } else {
        *tmpl = "unmatched";
        *method = "any";
    }
}

/* A label value with \, " and newline escaped as the format requires. */
static void put_label(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\\\", f);
        else if (*s == '"')
            fputs("\\\"", f);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

static void render_requests(FILE *f) {
    render_ops(f);
    fputs("# HELP remem_http_requests_total HTTP requests by route template, "
          "method and status.\n"
          "# TYPE remem_http_requests_total counter\n",
          f);
    for (int r = 0; r < R_SLOTS; r++) {
        const char *tmpl, *method;
        route_labels(r, &tmpl, &method);
        for (int s = 0; s < STATUS_SLOTS; s++) {
            uint_fast64_t n = atomic_load_explicit(&by_status[r][s], memory_order_relaxed);
            if (n)
                fprintf(f,
                        "remem_http_requests_total{route=\"%s\",method=\"%s\","
                        "status=\"%d\"} %llu\n",
                        tmpl, method, s + STATUS_MIN, (unsigned long long)n);
        }
    }
}

static void render_latency(FILE *f) {
    fputs("# HELP remem_http_request_duration_seconds Time from the request's "
          "headers to its response sent, by route template.\n"
          "# TYPE remem_http_request_duration_seconds histogram\n",
          f);
    for (int r = 0; r < R_SLOTS; r++) {
        uint_fast64_t total = 0, seen[N_BUCKETS + 1];
        for (size_t b = 0; b <= N_BUCKETS; b++)
            total += seen[b] = atomic_load_explicit(&buckets[r][b], memory_order_relaxed);
        if (!total) continue;
        const char *tmpl, *method;
        route_labels(r, &tmpl, &method);
        uint_fast64_t cumulative = 0;
        for (size_t b = 0; b <= N_BUCKETS; b++) {
            cumulative += seen[b];
            char le[32];
            if (b < N_BUCKETS)
                snprintf(le, sizeof le, "%g", bucket_le[b]);
            else
                snprintf(le, sizeof le, "+Inf");
            fprintf(f,
                    "remem_http_request_duration_seconds_bucket{route=\"%s\","
                    "method=\"%s\",le=\"%s\"} %llu\n",
                    tmpl, method, le, (unsigned long long)cumulative);
        }
        fprintf(f,
                "remem_http_request_duration_seconds_sum{route=\"%s\","
                "method=\"%s\"} %.6f\n"
                "remem_http_request_duration_seconds_count{route=\"%s\","
                "method=\"%s\"} %llu\n",
                tmpl, method, atomic_load_explicit(&sum_ns[r], memory_order_relaxed) / 1e9, tmpl,
                method, (unsigned long long)cumulative);
    }
}

static void render_namespaces(FILE *f, json_t *namespaces) {
    fputs("# HELP remem_memories Memories stored per namespace (those the "
          "caller's key may read).\n"
          "# TYPE remem_memories gauge\n",
          f);
    size_t i;
    json_t *e;
    json_array_foreach(namespaces, i, e) {
        const char *ns = json_string_value(json_object_get(e, "ns"));
        if (!ns) continue;
        fputs("remem_memories{namespace=\"", f);
        put_label(f, ns);
        fprintf(f, "\"} %lld\n", (long long)json_integer_value(json_object_get(e, "count")));
    }
}

/* The LLM's calls and tokens per operation, for every handle of the
 * process (remem_llm_usage(NULL)): the pool's and the auto-rater's. */
static void render_llm(FILE *f) {
    char *text = NULL;
    if (remem_llm_usage(NULL, &text) != REMEM_OK) return;
    json_t *u = json_loads(text, 0, NULL), *ops = json_object_get(u, "ops");
    remem_free(text);
    static const char *const series[][2] = {
        {"calls", "LLM chat completions that answered, by operation."},
        {"prompt_tokens", "Prompt tokens the LLM reported, by operation."},
        {"completion_tokens", "Completion tokens the LLM reported, by operation."},
    };
    for (size_t k = 0; k < sizeof series / sizeof *series; k++) {
        fprintf(f, "# HELP remem_llm_%s_total %s\n# TYPE remem_llm_%s_total counter\n",
                series[k][0], series[k][1], series[k][0]);
        const char *op;
        json_t *c;
        json_object_foreach(ops, op, c) {
            fprintf(f, "remem_llm_%s_total{op=\"", series[k][0]);
            put_label(f, op);
            fprintf(f, "\"} %lld\n",
                    (long long)json_integer_value(json_object_get(c, series[k][0])));
        }
    }
    json_decref(u);
}

/* A metric name in Prometheus' alphabet: '.' and other signs become '_'. */
static void put_name(FILE *f, const char *name, const char *suffix) {
    for (const char *p = name; *p; p++)
        fputc((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
                  ? *p
                  : '_',
              f);
    fputs(suffix, f);
}

/* The telemetry exporter's counts and the metrics the engine keeps
 * (remem_telemetry_stats: seed 003's memory.* and remem's own), each under
 * its OpenTelemetry name with '.' as '_'; counters end in _total. */
static void render_telemetry(FILE *f) {
    char *text = NULL;
    if (remem_telemetry_stats(&text) != REMEM_OK) return;
    json_t *t = json_loads(text, 0, NULL), *sp = json_object_get(t, "spans");
    remem_free(text);
    static const char *const spans[][3] = {
        {"remem_telemetry_spans_exported_total", "exported", "Spans the OTLP collector accepted."},
        {"remem_telemetry_spans_dropped_total", "dropped",
         "Spans dropped: the queue was full or the collector could not be reached."},
        {"remem_telemetry_export_failures_total", "exports_failed",
         "OTLP export requests that failed."},
    };
    for (size_t k = 0; k < sizeof spans / sizeof *spans; k++)
        fprintf(f, "# HELP %s %s\n# TYPE %s counter\n%s %lld\n", spans[k][0], spans[k][2],
                spans[k][0], spans[k][0],
                (long long)json_integer_value(json_object_get(sp, spans[k][1])));
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(t, "metrics"), i, m) {
        const char *name = json_string_value(json_object_get(m, "name"));
        const char *kind = json_string_value(json_object_get(m, "kind"));
        const char *desc = json_string_value(json_object_get(m, "description"));
        if (!name || !kind) continue;
        size_t nl = strlen(name);
        const char *suffix =
            !strcmp(kind, "counter") && (nl < 6 || strcmp(name + nl - 6, "_total")) ? "_total" : "";
        fputs("# HELP ", f);
        put_name(f, name, suffix);
        fprintf(f, " %s\n# TYPE ", desc ? desc : "");
        put_name(f, name, suffix);
        fprintf(f, " %s\n", strcmp(kind, "counter") ? kind : "counter");
        if (strcmp(kind, "histogram")) {
            put_name(f, name, suffix);
            fprintf(f, " %.17g\n", json_number_value(json_object_get(m, "value")));
            continue;
        }
        json_t *bounds = json_object_get(m, "bounds"), *buckets = json_object_get(m, "buckets");
        long long cumulative = 0;
        for (size_t b = 0; b < json_array_size(buckets); b++) {
            cumulative += json_integer_value(json_array_get(buckets, b));
            put_name(f, name, "_bucket");
            if (b < json_array_size(bounds))
                fprintf(f, "{le=\"%g\"} %lld\n", json_number_value(json_array_get(bounds, b)),
                        cumulative);
            else
                fprintf(f, "{le=\"+Inf\"} %lld\n", cumulative);
        }
        put_name(f, name, "_sum");
        fprintf(f, " %.17g\n", json_number_value(json_object_get(m, "sum")));
        put_name(f, name, "_count");
        fprintf(f, " %lld\n", (long long)json_integer_value(json_object_get(m, "count")));
    }
    json_decref(t);
}

/* The workers (work.c): how busy, how much waits, what was turned away. */
static void render_work(FILE *f, const server *srv) {
    work_stats ws;
    work_counts((work_pool *)&srv->work, &ws);
    fprintf(f,
            "# HELP remem_http_queue_waiting Requests waiting for a worker.\n"
            "# TYPE remem_http_queue_waiting gauge\n"
            "remem_http_queue_waiting %d\n"
            "# HELP remem_http_queue_limit Requests that may wait (--queue).\n"
            "# TYPE remem_http_queue_limit gauge\n"
            "remem_http_queue_limit %d\n"
            "# HELP remem_http_queue_rejected_total Requests answered 503 because the queue "
            "was full.\n"
            "# TYPE remem_http_queue_rejected_total counter\n"
            "remem_http_queue_rejected_total %lld\n"
            "# HELP remem_http_workers_busy Workers running a request.\n"
            "# TYPE remem_http_workers_busy gauge\n"
            "remem_http_workers_busy %d\n"
            "# HELP remem_http_workers Worker threads running.\n"
            "# TYPE remem_http_workers gauge\n"
            "remem_http_workers %d\n",
            ws.queued, srv->work.max_queued, ws.rejected, ws.running, ws.threads);
}

/* The allocator (heap.c): what the process has allocated against what the
 * allocator holds of the system's memory; the gap is what eviction churn
 * leaves free inside the heap. */
static void render_heap(FILE *f) {
    size_t allocated, held;
    char name[64];
    if (heap_figures(&allocated, &held)) return;
    fprintf(f,
            "# HELP remem_heap_info The memory allocator of the process.\n"
            "# TYPE remem_heap_info gauge\n"
            "remem_heap_info{allocator=\"%s\"} 1\n"
            "# HELP remem_heap_allocated_bytes Bytes the process has allocated and not freed.\n"
            "# TYPE remem_heap_allocated_bytes gauge\n"
            "remem_heap_allocated_bytes %zu\n"
            "# HELP remem_heap_held_bytes Bytes the allocator holds of the system's memory: "
            "the allocated bytes and the free pages not yet given back.\n"
            "# TYPE remem_heap_held_bytes gauge\n"
            "remem_heap_held_bytes %zu\n",
            heap_allocator(name, sizeof name), allocated, held);
}

char *metrics_render(const server *srv, json_t *namespaces) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    render_requests(f);
    render_latency(f);
    fprintf(f,
            "# HELP remem_http_requests_in_flight Requests being handled.\n"
            "# TYPE remem_http_requests_in_flight gauge\n"
            "remem_http_requests_in_flight %d\n"
            "# HELP remem_start_time_seconds When the server started.\n"
            "# TYPE remem_start_time_seconds gauge\n"
            "remem_start_time_seconds %.3f\n",
            atomic_load(&((server *)srv)->in_flight), srv->started_ms / 1000.0);
    render_work(f, srv);
    render_heap(f);
    /* The lesson validation gate's same-step retries (seed 002), under the
     * names the seed gives them. */
    uint64_t retries, capped;
    remem_validation_counters(&retries, &capped);
    fprintf(f,
            "# HELP tool_validation_retry_attempts Invalid tool inputs answered \"retry\" "
            "(regenerate, same step) by lesson.validate.\n"
            "# TYPE tool_validation_retry_attempts counter\n"
            "tool_validation_retry_attempts %llu\n"
            "# HELP tool_validation_retry_capped_events Steps past the retry cap, answered "
            "\"reflect\".\n"
            "# TYPE tool_validation_retry_capped_events counter\n"
            "tool_validation_retry_capped_events %llu\n",
            (unsigned long long)retries, (unsigned long long)capped);
    ingest_runner_metrics(&((server *)srv)->ingest, f);
    if (namespaces) render_namespaces(f, namespaces);
    render_llm(f);
    render_telemetry(f);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
