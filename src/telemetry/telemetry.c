/*
 * telemetry.c: spans, the bounded queue, the metrics kept, and the one
 * exporter thread that sends them over OTLP/HTTP (telemetry.h says what
 * each promises; encode.c writes the JSON).
 *
 * One mutex guards the queue and the exporter's state; it is held for a
 * pointer push or pop, never across the network. The exporter wakes every
 * OTEL_BSP_SCHEDULE_DELAY ms, or as soon as a batch is full, or when
 * tm_flush asks; a failed POST (collector down, a 4xx) drops its batch and
 * counts the spans: retrying would only hold memory for a collector that
 * may not come back, and the queue's bound is the promise.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "net/net.h"
#include "telemetry/telemetry.h"
#include "util/utf8.h"

uint64_t tm_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Makes s valid UTF-8 in place, each byte that starts no valid sequence
 * becoming '?': OTLP's strings are UTF-8, and a span whose name or
 * attribute is not would otherwise cost the whole batch its encoding. */
static void fix_utf8(char *s) {
    size_t n = strlen(s), i = 0;
    while (i < n) {
        size_t off = util_utf8_check(s + i, n - i);
        if (off == n - i) break;
        s[i + off] = '?';
        i += off + 1;
    }
}

/* ---- configuration ---- */

static int env_long(const char *name, long def, long min, long *out, char *why, size_t cap) {
    const char *v = getenv(name);
    *out = def;
    if (!v || !*v) return 0;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < min) {
        snprintf(why, cap, "%s=\"%s\" is not a whole number >= %ld", name, v, min);
        return -1;
    }
    *out = n;
    return 0;
}

/* base + "/v1/" + what, without doubling a trailing slash. */
static void signal_url(char *out, size_t cap, const char *specific, const char *base,
                       const char *what) {
    if (specific && *specific) {
        snprintf(out, cap, "%s", specific); /* the per-signal variable is used as is */
        return;
    }
    size_t n = strlen(base);
    while (n && base[n - 1] == '/') n--;
    snprintf(out, cap, "%.*s/v1/%s", (int)n, base, what);
}

static int hexval(char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* A header name's characters (RFC 9110's tchar). */
static int tchar(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* OTEL_EXPORTER_OTLP_HEADERS: "k1=v1,k2=v2" (values may be %-encoded).
 * Spaces around keys are dropped; a key that is not a header name is
 * refused; control characters in a value (decoded or not) are dropped, so
 * that no value can add a header line of its own. */
static int parse_headers(tm_config *c, const char *v, char *why, size_t cap) {
    size_t n = 0;
    while (v && *v) {
        const char *end = strchr(v, ',');
        size_t len = end ? (size_t)(end - v) : strlen(v);
        const char *eq = memchr(v, '=', len);
        const char *k0 = v, *k1 = eq;
        while (eq && k0 < k1 && *k0 == ' ') k0++;
        while (eq && k1 > k0 && k1[-1] == ' ') k1--;
        int ok = eq && k1 > k0;
        for (const char *p = k0; ok && p < k1; p++) ok = tchar(*p);
        if (!ok) {
            snprintf(why, cap, "OTEL_EXPORTER_OTLP_HEADERS: \"%.*s\" is not key=value", (int)len,
                     v);
            return -1;
        }
        if (n + 1 >= sizeof c->headers / sizeof *c->headers) {
            snprintf(why, cap, "OTEL_EXPORTER_OTLP_HEADERS: more than 16 headers");
            return -1;
        }
        char *line = malloc(len + 3);
        if (!line) {
            snprintf(why, cap, "out of memory");
            return -1;
        }
        size_t k = 0;
        memcpy(line, k0, (size_t)(k1 - k0));
        k = (size_t)(k1 - k0);
        line[k++] = ':';
        line[k++] = ' ';
        for (const char *p = eq + 1; p < v + len; p++) {
            int ch = (unsigned char)*p;
            if (ch == '%' && p + 2 < v + len && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
                ch = hexval(p[1]) * 16 + hexval(p[2]);
                p += 2;
            }
            if (ch < 0x20 || ch == 0x7f) continue; /* no header injection */
            line[k++] = (char)ch;
        }
        line[k] = '\0';
        c->headers[n++] = line;
        v = end ? end + 1 : NULL;
    }
    return 0;
}

int tm_config_read(tm_config *c, char *why, size_t cap) {
    memset(c, 0, sizeof *c);
    why[0] = '\0';
    const char *svc = getenv("OTEL_SERVICE_NAME");
    snprintf(c->service, sizeof c->service, "%s", svc && *svc ? svc : "remem");
    fix_utf8(c->service);
    long delay, qsize, batch, timeout;
    if (env_long("OTEL_BSP_SCHEDULE_DELAY", 5000, 1, &delay, why, cap) ||
        env_long("OTEL_BSP_MAX_QUEUE_SIZE", 2048, 1, &qsize, why, cap) ||
        env_long("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, 1, &batch, why, cap) ||
        env_long("OTEL_EXPORTER_OTLP_TIMEOUT", 10000, 1, &timeout, why, cap))
        return -1;
    c->delay_ms = delay;
    c->queue_size = (size_t)qsize;
    c->batch_size = (size_t)(batch > qsize ? qsize : batch);
    c->timeout_ms = timeout;
    const char *dis = getenv("OTEL_SDK_DISABLED");
    if (dis && !strcasecmp(dis, "true")) return 0;
    const char *base = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
    const char *tr = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    const char *me = getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
    if (!(base && *base) && !(tr && *tr) && !(me && *me)) return 0;
    if (!base) base = "";
    if ((tr && *tr) || *base) signal_url(c->traces_url, sizeof c->traces_url, tr, base, "traces");
    if ((me && *me) || *base)
        signal_url(c->metrics_url, sizeof c->metrics_url, me, base, "metrics");
    if (parse_headers(c, getenv("OTEL_EXPORTER_OTLP_HEADERS"), why, cap)) {
        tm_config_free(c);
        return -1;
    }
    c->enabled = 1;
    return 0;
}

void tm_config_free(tm_config *c) {
    for (size_t i = 0; i < sizeof c->headers / sizeof *c->headers; i++) {
        free(c->headers[i]);
        c->headers[i] = NULL;
    }
}

/* ---- the queue ---- */

int tm_queue_init(tm_queue *q, size_t cap) {
    memset(q, 0, sizeof *q);
    q->ring = calloc(cap ? cap : 1, sizeof *q->ring);
    q->cap = q->ring ? cap : 0;
    return q->ring ? 0 : -1;
}

int tm_queue_push(tm_queue *q, tm_span *s) {
    if (q->len >= q->cap) return -1;
    q->ring[(q->head + q->len) % q->cap] = s;
    q->len++;
    return 0;
}

size_t tm_queue_pop(tm_queue *q, tm_span **out, size_t max) {
    size_t n = 0;
    while (n < max && q->len) {
        out[n++] = q->ring[q->head];
        q->head = (q->head + 1) % q->cap;
        q->len--;
    }
    return n;
}

void tm_queue_free(tm_queue *q) {
    tm_span *s;
    while (tm_queue_pop(q, &s, 1)) tm_span_free(s);
    free(q->ring);
    memset(q, 0, sizeof *q);
}

/* ---- the exporter ---- */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_on; /* read after g_once only */
static tm_config g_cfg;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER, g_done = PTHREAD_COND_INITIALIZER;
static tm_queue g_q;
static uint64_t g_flush_asked, g_flush_done, g_start_ns;
static atomic_uint_fast64_t g_started, g_exported, g_drop_full, g_drop_export, g_failed,
    g_metric_exports;

static int post(net_client *c, const char *url, char *body) {
    if (!body) return -1;
    net_request rq = {.what = "telemetry",
                      .url = url,
                      .body = body,
                      .body_len = strlen(body),
                      .headers = (const char *const *)g_cfg.headers,
                      .timeout_ms = g_cfg.timeout_ms,
                      .retries = 0,
                      .max_bytes = 1 << 20};
    net_response resp = {0};
    char err[512];
    int rc = net_perform(c, &rq, &resp, err, sizeof err);
    net_response_free(&resp);
    free(body);
    return rc ? -1 : 0;
}

static void export_spans(net_client *c, tm_span **batch, size_t n) {
    if (!n) return;
    int rc = c && g_cfg.traces_url[0]
                 ? post(c, g_cfg.traces_url, tm_encode_spans(batch, n, g_cfg.service))
                 : -1;
    if (rc) {
        atomic_fetch_add(&g_failed, 1);
        atomic_fetch_add(&g_drop_export, n);
    } else {
        atomic_fetch_add(&g_exported, n);
    }
    for (size_t i = 0; i < n; i++) tm_span_free(batch[i]);
}

static void export_metrics(net_client *c) {
    if (!c || !g_cfg.metrics_url[0]) return;
    if (post(c, g_cfg.metrics_url, tm_encode_metrics(g_cfg.service, g_start_ns, tm_now_ns())))
        atomic_fetch_add(&g_failed, 1);
    else
        atomic_fetch_add(&g_metric_exports, 1);
}

static int g_stop, g_stopped;
static net_client *g_client;

static void *exporter(void *arg) {
    (void)arg;
    net_client *c = g_client;
    tm_span **batch = calloc(g_cfg.batch_size, sizeof *batch);
    pthread_mutex_lock(&g_lock);
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long long ns = until.tv_nsec + (g_cfg.delay_ms % 1000) * 1000000LL;
        until.tv_sec += g_cfg.delay_ms / 1000 + ns / 1000000000LL;
        until.tv_nsec = ns % 1000000000LL;
        while (!g_stop && g_q.len < g_cfg.batch_size && g_flush_asked == g_flush_done)
            if (pthread_cond_timedwait(&g_wake, &g_lock, &until)) break;
        if (g_stop) break;
        uint64_t asked = g_flush_asked;
        size_t n;
        while (batch && (n = tm_queue_pop(&g_q, batch, g_cfg.batch_size))) {
            pthread_mutex_unlock(&g_lock);
            export_spans(c, batch, n);
            pthread_mutex_lock(&g_lock);
        }
        pthread_mutex_unlock(&g_lock);
        export_metrics(c);
        pthread_mutex_lock(&g_lock);
        g_flush_done = asked;
        pthread_cond_broadcast(&g_done);
    }
    g_stopped = 1;
    pthread_cond_broadcast(&g_done);
    pthread_mutex_unlock(&g_lock);
    free(batch);
    return NULL;
}

/* At exit: send what is queued, then stop the thread before the libraries
 * it uses (libcurl, OpenSSL) run their own exit handlers, which were
 * registered before this one and so run after it. */
static void at_exit(void) {
    tm_flush();
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    pthread_mutex_lock(&g_lock);
    g_stop = 1;
    pthread_cond_signal(&g_wake);
    while (!g_stopped)
        if (pthread_cond_timedwait(&g_done, &g_lock, &until)) break;
    pthread_mutex_unlock(&g_lock);
}

static char g_problem[300]; /* why telemetry stayed off despite an endpoint */

static void start(void) {
    if (tm_config_read(&g_cfg, g_problem, sizeof g_problem) || !g_cfg.enabled) return;
    if (tm_queue_init(&g_q, g_cfg.queue_size)) return;
    /* The client (and so libcurl's and OpenSSL's global set-up) is made
     * here, on the caller's thread, never racing the process's other
     * users of those libraries from the exporter thread. */
    if (!(g_client = net_client_new(g_problem, sizeof g_problem))) return;
    g_start_ns = tm_now_ns();
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &a, exporter, NULL);
    pthread_attr_destroy(&a);
    if (rc) return;
    atexit(at_exit);
    g_on = 1;
}

int tm_enabled(void) {
    pthread_once(&g_once, start);
    return g_on;
}

void tm_flush(void) {
    if (!tm_enabled() || g_stopped) return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += g_cfg.timeout_ms / 1000 + 2;
    pthread_mutex_lock(&g_lock);
    uint64_t want = ++g_flush_asked;
    pthread_cond_signal(&g_wake);
    while (g_flush_done < want)
        if (pthread_cond_timedwait(&g_done, &g_lock, &until)) break;
    pthread_mutex_unlock(&g_lock);
}

void tm_get_counts(tm_counts *c) {
    memset(c, 0, sizeof *c);
    c->spans_started = atomic_load(&g_started);
    c->spans_exported = atomic_load(&g_exported);
    c->spans_dropped_queue_full = atomic_load(&g_drop_full);
    c->spans_dropped_export = atomic_load(&g_drop_export);
    c->exports_failed = atomic_load(&g_failed);
    c->metric_exports = atomic_load(&g_metric_exports);
    if (tm_enabled()) {
        pthread_mutex_lock(&g_lock);
        c->queue_len = g_q.len;
        c->queue_cap = g_q.cap;
        pthread_mutex_unlock(&g_lock);
    }
}

json_t *tm_metrics_json(void);

char *tm_snapshot_json(void) {
    tm_counts c;
    tm_get_counts(&c);
    json_t *ms = tm_metrics_json();
    json_t *all =
        json_pack("{s:b,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I},s:o}", "enabled", tm_enabled(), "spans",
                  "started", (json_int_t)c.spans_started, "exported", (json_int_t)c.spans_exported,
                  "dropped", (json_int_t)(c.spans_dropped_queue_full + c.spans_dropped_export),
                  "dropped_queue_full", (json_int_t)c.spans_dropped_queue_full,
                  "dropped_export_failed", (json_int_t)c.spans_dropped_export, "exports_failed",
                  (json_int_t)c.exports_failed, "queued", (json_int_t)c.queue_len, "queue_capacity",
                  (json_int_t)c.queue_cap, "metrics", ms);
    if (all && g_problem[0]) json_object_set_new(all, "problem", json_string(g_problem));
    char *out = all ? json_dumps(all, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(all);
    return out;
}

/* ---- spans ---- */

static _Thread_local tm_span *t_cur;
static _Thread_local uint64_t t_rng;

static uint64_t rnd(void) {
    if (!t_rng) {
        if (getrandom(&t_rng, sizeof t_rng, 0) != sizeof t_rng)
            t_rng = tm_now_ns() ^ (uint64_t)(uintptr_t)&t_rng;
        t_rng |= 1;
    }
    t_rng ^= t_rng >> 12; /* xorshift64* */
    t_rng ^= t_rng << 25;
    t_rng ^= t_rng >> 27;
    return t_rng * 2685821657736338717ull;
}

static void fill_id(uint8_t *id, size_t n) {
    for (size_t i = 0; i < n; i += 8) {
        uint64_t r = rnd();
        memcpy(id + i, &r, n - i < 8 ? n - i : 8);
    }
}

tm_span *tm_span_start(const char *name, int kind) {
    if (!tm_enabled()) return NULL;
    tm_span *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    snprintf(s->name, sizeof s->name, "%s", name);
    fix_utf8(s->name); /* a cut in the middle of a character included */
    s->kind = kind ? kind : TM_KIND_INTERNAL;
    if (t_cur) {
        memcpy(s->trace_id, t_cur->trace_id, 16);
        memcpy(s->parent_id, t_cur->span_id, 8);
        s->has_parent = 1;
    } else {
        fill_id(s->trace_id, 16);
    }
    fill_id(s->span_id, 8);
    s->start_ns = tm_now_ns();
    s->up = t_cur;
    t_cur = s;
    atomic_fetch_add(&g_started, 1);
    return s;
}

static tm_attr *attr(tm_span *s, const char *key, tm_type t) {
    if (!s || !key || s->n_attrs >= TM_MAX_ATTRS) return NULL;
    tm_attr *a = &s->attrs[s->n_attrs];
    if (!(a->key = strdup(key))) return NULL;
    fix_utf8(a->key);
    a->type = t;
    s->n_attrs++;
    return a;
}

void tm_span_str(tm_span *s, const char *key, const char *v) {
    if (!s || !v) return;
    tm_attr *a = attr(s, key, TM_STR);
    if (a && !(a->v.s = strdup(v))) a->type = TM_BOOL, a->v.i = 0;
    if (a && a->type == TM_STR) fix_utf8(a->v.s);
}
void tm_span_int(tm_span *s, const char *key, int64_t v) {
    tm_attr *a = attr(s, key, TM_INT);
    if (a) a->v.i = v;
}
void tm_span_dbl(tm_span *s, const char *key, double v) {
    tm_attr *a = attr(s, key, TM_DBL);
    if (a) a->v.d = v;
}
void tm_span_bool(tm_span *s, const char *key, int v) {
    tm_attr *a = attr(s, key, TM_BOOL);
    if (a) a->v.i = !!v;
}
void tm_span_error(tm_span *s, const char *msg) {
    if (!s) return;
    s->status = TM_STATUS_ERROR;
    free(s->status_msg);
    s->status_msg = msg ? strdup(msg) : NULL;
    if (s->status_msg) fix_utf8(s->status_msg);
}

void tm_span_free(tm_span *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n_attrs; i++) {
        free(s->attrs[i].key);
        if (s->attrs[i].type == TM_STR) free(s->attrs[i].v.s);
    }
    free(s->status_msg);
    free(s);
}

void tm_span_end(tm_span *s) {
    if (!s) return;
    s->end_ns = tm_now_ns();
    if (s->status == TM_STATUS_UNSET) s->status = TM_STATUS_OK;
    if (t_cur == s) t_cur = s->up;
    s->up = NULL;
    pthread_mutex_lock(&g_lock);
    int full = tm_queue_push(&g_q, s);
    if (!full && g_q.len >= g_cfg.batch_size) pthread_cond_signal(&g_wake);
    pthread_mutex_unlock(&g_lock);
    if (full) {
        atomic_fetch_add(&g_drop_full, 1);
        tm_span_free(s);
    }
}
