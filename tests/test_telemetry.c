/*
 * test_telemetry.c: src/telemetry/ on its own: the bounded queue (full is
 * refused, order kept across the ring's wrap), the OTLP/JSON encoding of
 * spans and metrics (ids as hex of the right length, 64-bit numbers as
 * strings, attribute value shapes, parent ids, status), the OTEL_*
 * configuration (endpoint joining, per-signal endpoints, headers, the
 * disabled switch, bad numbers refused), and the exporter against a closed
 * port: every span ended is accounted for (dropped and counted, never
 * exported, never waited on).
 */
#include "test.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "telemetry/telemetry.h"

static tm_span *mk(const char *name) {
    tm_span *s = calloc(1, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->kind = TM_KIND_INTERNAL;
    return s;
}

static void test_queue_bounded(void) {
    tm_queue q;
    CHECK(tm_queue_init(&q, 3) == 0);
    tm_span *a = mk("a"), *b = mk("b"), *c = mk("c"), *d = mk("d");
    CHECK(tm_queue_push(&q, a) == 0);
    CHECK(tm_queue_push(&q, b) == 0);
    CHECK(tm_queue_push(&q, c) == 0);
    CHECK(tm_queue_push(&q, d) == -1); /* full: refused, not grown */
    CHECK_INT(q.len, 3);
    tm_span *out[4];
    CHECK_INT(tm_queue_pop(&q, out, 2), 2);
    CHECK(out[0] == a && out[1] == b);
    CHECK(tm_queue_push(&q, d) == 0); /* wraps around the ring */
    CHECK_INT(tm_queue_pop(&q, out, 4), 2);
    CHECK(out[0] == c && out[1] == d);
    CHECK_INT(tm_queue_pop(&q, out, 4), 0);
    tm_span_free(a), tm_span_free(b), tm_span_free(c), tm_span_free(d);
    CHECK(tm_queue_push(&q, mk("left")) == 0); /* freed by tm_queue_free */
    tm_queue_free(&q);
}

static json_t *attr_value(json_t *span, const char *key) {
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(span, "attributes"), i, a) {
        if (!strcmp(json_string_value(json_object_get(a, "key")), key))
            return json_object_get(a, "value");
    }
    return NULL;
}

static int is_hex(const char *s, size_t n) {
    if (!s || strlen(s) != n) return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))) return 0;
    return 1;
}

static void test_encode_spans(void) {
    tm_span *p = mk("memory.prune"), *c = mk("memory.summarize");
    for (int i = 0; i < 16; i++) p->trace_id[i] = (uint8_t)(0xa0 + i);
    for (int i = 0; i < 8; i++)
        p->span_id[i] = (uint8_t)(i + 1), c->span_id[i] = (uint8_t)(0xf0 + i);
    memcpy(c->trace_id, p->trace_id, 16);
    memcpy(c->parent_id, p->span_id, 8);
    c->has_parent = 1;
    p->start_ns = 1700000000123456789ull, p->end_ns = 1700000000223456789ull;
    c->start_ns = p->start_ns + 1, c->end_ns = p->end_ns - 1;
    tm_span_str(p, "projectID", "alpha \"quoted\"");
    tm_span_int(p, "episodesRemovedCount", 9007199254740993ll); /* > 2^53: a string keeps it */
    tm_span_dbl(p, "durationMs", 12.5);
    tm_span_bool(p, "dryRun", 1);
    tm_span_str(p, "absent", NULL);            /* nothing added */
    tm_span_str(c, "bytes", "ok\xff\xc3\xa9"); /* not UTF-8: mended, not fatal */
    p->status = TM_STATUS_OK;
    tm_span_error(c, "summariser failed");
    tm_span *both[2] = {p, c};
    char *js = tm_encode_spans(both, 2, "remem-test");
    CHECK(js != NULL);
    json_error_t je;
    json_t *root = json_loads(js ? js : "", 0, &je);
    CHECK(root != NULL);
    json_t *rs = json_array_get(json_object_get(root, "resourceSpans"), 0);
    json_t *res_attr =
        json_array_get(json_object_get(json_object_get(rs, "resource"), "attributes"), 0);
    CHECK_STR(json_string_value(json_object_get(res_attr, "key")), "service.name");
    CHECK_STR(json_string_value(json_object_get(json_object_get(res_attr, "value"), "stringValue")),
              "remem-test");
    json_t *spans = json_object_get(json_array_get(json_object_get(rs, "scopeSpans"), 0), "spans");
    CHECK_INT(json_array_size(spans), 2);
    json_t *s0 = json_array_get(spans, 0), *s1 = json_array_get(spans, 1);
    CHECK_STR(json_string_value(json_object_get(s0, "name")), "memory.prune");
    CHECK_STR(json_string_value(json_object_get(s0, "traceId")),
              "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");
    CHECK_STR(json_string_value(json_object_get(s0, "spanId")), "0102030405060708");
    CHECK(json_object_get(s0, "parentSpanId") == NULL);
    CHECK_STR(json_string_value(json_object_get(s1, "parentSpanId")), "0102030405060708");
    CHECK(is_hex(json_string_value(json_object_get(s1, "spanId")), 16));
    CHECK_STR(json_string_value(json_object_get(s0, "startTimeUnixNano")), "1700000000123456789");
    CHECK_STR(json_string_value(json_object_get(s0, "endTimeUnixNano")), "1700000000223456789");
    CHECK_INT(json_integer_value(json_object_get(s0, "kind")), 1);
    CHECK_INT(json_array_size(json_object_get(s0, "attributes")), 4);
    CHECK_STR(json_string_value(json_object_get(attr_value(s0, "projectID"), "stringValue")),
              "alpha \"quoted\"");
    CHECK_STR(
        json_string_value(json_object_get(attr_value(s0, "episodesRemovedCount"), "intValue")),
        "9007199254740993");
    CHECK_NEAR(json_real_value(json_object_get(attr_value(s0, "durationMs"), "doubleValue")), 12.5,
               1e-12);
    CHECK(json_is_true(json_object_get(attr_value(s0, "dryRun"), "boolValue")));
    CHECK_INT(json_integer_value(json_object_get(json_object_get(s0, "status"), "code")), 1);
    CHECK_STR(json_string_value(json_object_get(attr_value(s1, "bytes"), "stringValue")),
              "ok?\xc3\xa9");
    json_t *st1 = json_object_get(s1, "status");
    CHECK_INT(json_integer_value(json_object_get(st1, "code")), 2);
    CHECK_STR(json_string_value(json_object_get(st1, "message")), "summariser failed");
    json_decref(root);
    free(js);
    tm_span_free(p);
    tm_span_free(c);
}

static void test_encode_metrics(void) {
    tm_count("test.counter", "{x}", "a counter", 2);
    tm_count("test.counter", "{x}", "a counter", 3);
    tm_gauge("test.gauge", "{x}", "a gauge", 7);
    tm_gauge("test.gauge", "{x}", "a gauge", 4);
    tm_observe("test.latency", "ms", "a histogram", 0.2);
    tm_observe("test.latency", "ms", "a histogram", 30);
    tm_observe("test.latency", "ms", "a histogram", 1e9); /* past the last bound */
    char *js = tm_encode_metrics("svc", 1000, 2000);
    json_t *root = json_loads(js ? js : "", 0, NULL);
    CHECK(root != NULL);
    json_t *ms = json_object_get(
        json_array_get(json_object_get(json_array_get(json_object_get(root, "resourceMetrics"), 0),
                                       "scopeMetrics"),
                       0),
        "metrics");
    int seen = 0;
    size_t i;
    json_t *m;
    json_array_foreach(ms, i, m) {
        const char *name = json_string_value(json_object_get(m, "name"));
        if (!strcmp(name, "test.counter")) {
            json_t *sum = json_object_get(m, "sum");
            CHECK(json_is_true(json_object_get(sum, "isMonotonic")));
            CHECK_INT(json_integer_value(json_object_get(sum, "aggregationTemporality")), 2);
            json_t *dp = json_array_get(json_object_get(sum, "dataPoints"), 0);
            CHECK_NEAR(json_number_value(json_object_get(dp, "asDouble")), 5, 1e-9);
            CHECK_STR(json_string_value(json_object_get(dp, "timeUnixNano")), "2000");
            CHECK_STR(json_string_value(json_object_get(dp, "startTimeUnixNano")), "1000");
            seen |= 1;
        } else if (!strcmp(name, "test.gauge")) {
            json_t *dp =
                json_array_get(json_object_get(json_object_get(m, "gauge"), "dataPoints"), 0);
            CHECK_NEAR(json_number_value(json_object_get(dp, "asDouble")), 4, 1e-9);
            seen |= 2;
        } else if (!strcmp(name, "test.latency")) {
            json_t *dp =
                json_array_get(json_object_get(json_object_get(m, "histogram"), "dataPoints"), 0);
            json_t *b = json_object_get(dp, "bucketCounts"),
                   *e = json_object_get(dp, "explicitBounds");
            CHECK_INT(json_array_size(b), json_array_size(e) + 1);
            CHECK_STR(json_string_value(json_object_get(dp, "count")), "3");
            long long total = 0;
            for (size_t k = 0; k < json_array_size(b); k++)
                total += atoll(json_string_value(json_array_get(b, k)));
            CHECK_INT(total, 3);
            CHECK_STR(json_string_value(json_array_get(b, 0)), "1");                      /* 0.2 */
            CHECK_STR(json_string_value(json_array_get(b, json_array_size(b) - 1)), "1"); /* 1e9 */
            seen |= 4;
        }
    }
    CHECK_INT(seen, 7);
    json_decref(root);
    free(js);
}

static void test_config(void) {
    tm_config c;
    char why[300];
    unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
    unsetenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    unsetenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
    CHECK(tm_config_read(&c, why, sizeof why) == 0);
    CHECK(!c.enabled); /* no endpoint: off */
    CHECK_STR(c.service, "remem");
    CHECK_INT(c.delay_ms, 5000);
    CHECK_INT(c.queue_size, 2048);
    CHECK_INT(c.batch_size, 512);
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/", 1);
    setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:9/custom", 1);
    setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key=abc%20def, x-team=mem", 1);
    setenv("OTEL_SERVICE_NAME", "agent-memory", 1);
    setenv("OTEL_BSP_MAX_QUEUE_SIZE", "10", 1);
    setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "50", 1);
    CHECK(tm_config_read(&c, why, sizeof why) == 0);
    CHECK(c.enabled);
    CHECK_STR(c.traces_url, "http://collector:4318/v1/traces");
    CHECK_STR(c.metrics_url, "http://m:9/custom");
    CHECK_STR(c.headers[0], "api-key: abc def");
    CHECK_STR(c.headers[1], "x-team: mem");
    CHECK(c.headers[2] == NULL);
    CHECK_STR(c.service, "agent-memory");
    CHECK_INT(c.batch_size, 10); /* never more than the queue */
    tm_config_free(&c);
    setenv("OTEL_SDK_DISABLED", "TRUE", 1);
    CHECK(tm_config_read(&c, why, sizeof why) == 0);
    CHECK(!c.enabled);
    unsetenv("OTEL_SDK_DISABLED");
    setenv("OTEL_BSP_SCHEDULE_DELAY", "soon", 1);
    CHECK(tm_config_read(&c, why, sizeof why) == -1);
    CHECK(strstr(why, "OTEL_BSP_SCHEDULE_DELAY") != NULL);
    unsetenv("OTEL_BSP_SCHEDULE_DELAY");
    setenv("OTEL_EXPORTER_OTLP_HEADERS", "a=x%0d%0aInjected: yes%", 1);
    CHECK(tm_config_read(&c, why, sizeof why) == 0);
    CHECK_STR(c.headers[0], "a: xInjected: yes%"); /* one line, whatever it decodes to */
    CHECK(c.headers[1] == NULL);
    tm_config_free(&c);
    setenv("OTEL_EXPORTER_OTLP_HEADERS", "bad key:=v", 1);
    CHECK(tm_config_read(&c, why, sizeof why) == -1);
    setenv("OTEL_EXPORTER_OTLP_HEADERS", "novalue", 1);
    CHECK(tm_config_read(&c, why, sizeof why) == -1);
    CHECK(strstr(why, "OTEL_EXPORTER_OTLP_HEADERS") != NULL);
    unsetenv("OTEL_EXPORTER_OTLP_HEADERS");
    unsetenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
    unsetenv("OTEL_SERVICE_NAME");
    unsetenv("OTEL_BSP_MAX_QUEUE_SIZE");
    unsetenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE");
}

/* A loopback port nothing listens on. */
static int closed_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &n);
    close(fd);
    return ntohs(a.sin_port);
}

/* The exporter against a dead collector: the spans are dropped and
 * counted, nested spans share the trace, ending a span never waits. Runs
 * last: the exporter reads the environment once per process. */
static void test_exporter_dead_collector(void) {
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port());
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url, 1);
    setenv("OTEL_BSP_MAX_QUEUE_SIZE", "8", 1);
    setenv("OTEL_BSP_SCHEDULE_DELAY", "50", 1);
    setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500", 1);
    CHECK(tm_enabled());
    tm_span *outer = tm_span_start("outer", 0), *inner = tm_span_start("inner", 0);
    CHECK(outer && inner);
    if (!outer || !inner) return;
    CHECK(inner->has_parent && !memcmp(inner->parent_id, outer->span_id, 8));
    CHECK(!memcmp(inner->trace_id, outer->trace_id, 16));
    tm_span_end(inner);
    tm_span_end(outer);
    tm_span *after = tm_span_start("after", 0); /* outer ended: a new trace */
    CHECK(after && !after->has_parent);
    tm_span_end(after);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 2000; i++) {
        tm_span *s = tm_span_start("burst", 0);
        tm_span_int(s, "i", i);
        tm_span_end(s);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    CHECK(ms < 1000); /* 2000 spans: microseconds each, never a network wait */
    tm_flush();
    tm_counts c;
    tm_get_counts(&c);
    CHECK_INT(c.spans_started, 2003);
    CHECK_INT(c.spans_exported, 0);
    CHECK_INT(c.spans_dropped_queue_full + c.spans_dropped_export, 2003);
    CHECK(c.spans_dropped_queue_full > 0); /* a queue of 8 cannot hold a burst */
    CHECK(c.exports_failed > 0);
    CHECK_INT(c.queue_cap, 8);
    CHECK(c.queue_len <= 8);
    char *snap = tm_snapshot_json(); /* what /metrics reads */
    json_t *j = json_loads(snap ? snap : "", 0, NULL);
    CHECK(json_is_true(json_object_get(j, "enabled")));
    CHECK_INT(json_integer_value(json_object_get(json_object_get(j, "spans"), "dropped")), 2003);
    CHECK(snap && strstr(snap, "\"test.gauge\""));
    json_decref(j);
    free(snap);
}

/* A collector runs at every read of the metrics (the OTLP payload and the
 * JSON /metrics reads), once however often it was registered, so a gauge
 * it sets is the figure at the read. */
static int collector_runs;
static void test_collector_fn(void) {
    collector_runs++;
    tm_gauge("test.collected", "{x}", "set at each read", (double)collector_runs);
}

static double metric_value(const char *name) {
    char *snap = tm_snapshot_json();
    json_t *root = json_loads(snap ? snap : "", 0, NULL), *m;
    double v = -1;
    size_t i;
    json_array_foreach(json_object_get(root, "metrics"), i, m) {
        if (!strcmp(json_string_value(json_object_get(m, "name")), name))
            v = json_number_value(json_object_get(m, "value"));
    }
    json_decref(root);
    free(snap);
    return v;
}

static void test_collector(void) {
    CHECK_INT(tm_add_collector(test_collector_fn), 0);
    CHECK_INT(tm_add_collector(test_collector_fn), 0); /* kept once */
    collector_runs = 0;
    CHECK_NEAR(metric_value("test.collected"), 1, 1e-9);
    free(tm_encode_metrics("svc", 1000, 2000));
    CHECK_INT(collector_runs, 2);
    CHECK_NEAR(metric_value("test.collected"), 3, 1e-9);
}

int main(int argc, char **argv) {
    test__only = argc > 1 ? argv[1] : NULL;
    RUN(test_queue_bounded);
    RUN(test_encode_spans);
    RUN(test_encode_metrics);
    RUN(test_config);
    RUN(test_exporter_dead_collector);
    RUN(test_collector);
    return TEST_EXIT();
}
