/*
 * metrics.c: the metrics remem keeps (counters, gauges, histograms by
 * name), their snapshot for the server's /metrics and their OTLP/JSON
 * ExportMetricsServiceRequest. A short fixed table under one mutex: a few
 * dozen names at most, touched a few times per operation, so a lock is
 * cheaper than anything cleverer and the table never grows past its size
 * (a name beyond it is ignored, not allocated).
 *
 * Sums are cumulative since the process started (aggregationTemporality 2),
 * what Prometheus-style back ends expect.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemetry/telemetry.h"

json_t *tm_resource_json(const char *service);
json_t *tm_scope_json(void);

enum { MAX_METRICS = 48, MAX_BOUNDS = 16 };

typedef struct metric {
    char name[80], unit[16], desc[160];
    tm_metric_kind kind;
    double value; /* counter, gauge */
    size_t n_bounds;
    const double *bounds;
    uint64_t buckets[MAX_BOUNDS + 1], count;
    double sum;
} metric;

static const double ms_bounds[] = {0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000};
static const double byte_bounds[] = {64, 256, 512, 1024, 1536, 2048, 3072, 4096, 8192, 16384};
static const double pow_bounds[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
#define NB(a) (sizeof a / sizeof *a)

static pthread_mutex_t g_mlock = PTHREAD_MUTEX_INITIALIZER;
static metric g_m[MAX_METRICS];
static size_t g_nm;

enum { MAX_COLLECTORS = 8 };
static void (*g_collect[MAX_COLLECTORS])(void);
static size_t g_ncollect;

int tm_add_collector(void (*fn)(void)) {
    int rc = -1;
    pthread_mutex_lock(&g_mlock);
    for (size_t i = 0; i < g_ncollect; i++)
        if (g_collect[i] == fn) rc = 0;
    if (rc && g_ncollect < MAX_COLLECTORS) {
        g_collect[g_ncollect++] = fn;
        rc = 0;
    }
    pthread_mutex_unlock(&g_mlock);
    return rc;
}

/* The collectors, run outside the lock (they take it through tm_gauge). */
static void collect(void) {
    void (*fns[MAX_COLLECTORS])(void);
    pthread_mutex_lock(&g_mlock);
    size_t n = g_ncollect;
    memcpy(fns, g_collect, n * sizeof *fns);
    pthread_mutex_unlock(&g_mlock);
    for (size_t i = 0; i < n; i++) fns[i]();
}

/* The entry of name, created with kind on first use; NULL when the table
 * is full. Called with the lock held. */
static metric *find(const char *name, tm_metric_kind kind, const char *unit, const char *desc) {
    for (size_t i = 0; i < g_nm; i++)
        if (!strcmp(g_m[i].name, name)) return g_m[i].kind == kind ? &g_m[i] : NULL;
    if (g_nm >= MAX_METRICS) return NULL;
    metric *m = &g_m[g_nm++];
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->unit, sizeof m->unit, "%s", unit ? unit : "1");
    snprintf(m->desc, sizeof m->desc, "%s", desc ? desc : "");
    m->kind = kind;
    if (kind == TM_HISTOGRAM) {
        if (!strcmp(m->unit, "ms"))
            m->bounds = ms_bounds, m->n_bounds = NB(ms_bounds);
        else if (!strcmp(m->unit, "By"))
            m->bounds = byte_bounds, m->n_bounds = NB(byte_bounds);
        else
            m->bounds = pow_bounds, m->n_bounds = NB(pow_bounds);
    }
    return m;
}

void tm_count(const char *name, const char *unit, const char *desc, double v) {
    pthread_mutex_lock(&g_mlock);
    metric *m = find(name, TM_COUNTER, unit, desc);
    if (m && v > 0) m->value += v;
    pthread_mutex_unlock(&g_mlock);
}

void tm_gauge(const char *name, const char *unit, const char *desc, double v) {
    pthread_mutex_lock(&g_mlock);
    metric *m = find(name, TM_GAUGE, unit, desc);
    if (m) m->value = v;
    pthread_mutex_unlock(&g_mlock);
}

void tm_observe(const char *name, const char *unit, const char *desc, double v) {
    pthread_mutex_lock(&g_mlock);
    metric *m = find(name, TM_HISTOGRAM, unit, desc);
    if (m) {
        size_t b = 0;
        while (b < m->n_bounds && v > m->bounds[b]) b++;
        m->buckets[b]++;
        m->count++;
        m->sum += v;
    }
    pthread_mutex_unlock(&g_mlock);
}

static const char *kind_name(tm_metric_kind k) {
    return k == TM_COUNTER ? "counter" : k == TM_GAUGE ? "gauge" : "histogram";
}

/* Every metric as a JSON array (tm_snapshot_json in telemetry.c adds the
 * exporter's counts). */
json_t *tm_metrics_json(void) {
    collect();
    json_t *ms = json_array();
    pthread_mutex_lock(&g_mlock);
    for (size_t i = 0; ms && i < g_nm; i++) {
        const metric *m = &g_m[i];
        json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "name", m->name, "kind", kind_name(m->kind),
                              "unit", m->unit, "description", m->desc);
        if (!o) continue;
        if (m->kind != TM_HISTOGRAM) {
            json_object_set_new(o, "value", json_real(m->value));
        } else {
            json_t *bounds = json_array(), *buckets = json_array();
            for (size_t b = 0; b < m->n_bounds; b++)
                json_array_append_new(bounds, json_real(m->bounds[b]));
            for (size_t b = 0; b <= m->n_bounds; b++)
                json_array_append_new(buckets, json_integer((json_int_t)m->buckets[b]));
            json_object_set_new(o, "bounds", bounds);
            json_object_set_new(o, "buckets", buckets);
            json_object_set_new(o, "count", json_integer((json_int_t)m->count));
            json_object_set_new(o, "sum", json_real(m->sum));
        }
        json_array_append_new(ms, o);
    }
    pthread_mutex_unlock(&g_mlock);
    return ms;
}

static json_t *u64s(uint64_t v) {
    char s[24];
    snprintf(s, sizeof s, "%llu", (unsigned long long)v);
    return json_string(s);
}

char *tm_encode_metrics(const char *service, uint64_t start_ns, uint64_t now_ns) {
    collect();
    json_t *arr = json_array();
    pthread_mutex_lock(&g_mlock);
    for (size_t i = 0; arr && i < g_nm; i++) {
        const metric *m = &g_m[i];
        json_t *dp = json_pack("{s:o,s:o,s:[]}", "startTimeUnixNano", u64s(start_ns),
                               "timeUnixNano", u64s(now_ns), "attributes");
        if (!dp) continue;
        json_t *data;
        const char *key;
        if (m->kind == TM_COUNTER) {
            json_object_set_new(dp, "asDouble", json_real(m->value));
            key = "sum";
            data = json_pack("{s:[o],s:i,s:b}", "dataPoints", dp, "aggregationTemporality", 2,
                             "isMonotonic", 1);
        } else if (m->kind == TM_GAUGE) {
            json_object_set_new(dp, "asDouble", json_real(m->value));
            key = "gauge";
            data = json_pack("{s:[o]}", "dataPoints", dp);
        } else {
            json_t *bounds = json_array(), *buckets = json_array();
            for (size_t b = 0; b < m->n_bounds; b++)
                json_array_append_new(bounds, json_real(m->bounds[b]));
            for (size_t b = 0; b <= m->n_bounds; b++)
                json_array_append_new(buckets, u64s(m->buckets[b]));
            json_object_set_new(dp, "count", u64s(m->count));
            json_object_set_new(dp, "sum", json_real(m->sum));
            json_object_set_new(dp, "bucketCounts", buckets);
            json_object_set_new(dp, "explicitBounds", bounds);
            key = "histogram";
            data = json_pack("{s:[o],s:i}", "dataPoints", dp, "aggregationTemporality", 2);
        }
        json_t *o = json_pack("{s:s,s:s,s:s,s:o}", "name", m->name, "unit", m->unit, "description",
                              m->desc, key, data);
        if (o) json_array_append_new(arr, o);
    }
    pthread_mutex_unlock(&g_mlock);
    json_t *req = arr ? json_pack("{s:[{s:o,s:[{s:o,s:o}]}]}", "resourceMetrics", "resource",
                                  tm_resource_json(service), "scopeMetrics", "scope",
                                  tm_scope_json(), "metrics", arr)
                      : NULL;
    char *out = req ? json_dumps(req, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(req);
    return out;
}
