/*
 * net.c: the HTTP client of net.h over one libcurl easy handle.
 *
 * Each net_perform resets the handle (curl_easy_reset keeps live
 * connections, so a client used for many batches keeps its connection) and
 * sets every option again, so no request inherits another's settings. A
 * try's body is routed by its status, read on the first byte: a 2xx answer
 * (or a file:// read, which has no status) goes to the sink or to
 * resp->body under the cap; an error answer's start goes to resp->body for
 * the message, never into a caller's file. The retry loop is the policy of
 * net.h; the messages are built in one place, describe(), so every caller
 * speaks alike.
 */
#include "net/net.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "remem.h"

struct net_client {
    CURL *curl;
};

static CURLcode global_rc = CURLE_FAILED_INIT;
static void global_init(void) { global_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

net_client *net_client_new(char *err, size_t errcap) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, global_init);
    if (global_rc != CURLE_OK) {
        util_errf(err, errcap, REMEM_EIO, "net: libcurl would not initialise (%s)",
                  curl_easy_strerror(global_rc));
        return NULL;
    }
    net_client *c = calloc(1, sizeof *c);
    if (c) c->curl = curl_easy_init();
    if (!c || !c->curl) {
        free(c);
        util_errf(err, errcap, REMEM_ENOMEM, "net: out of memory creating a client");
        return NULL;
    }
    return c;
}

void net_client_free(net_client *c) {
    if (!c) return;
    curl_easy_cleanup(c->curl);
    free(c);
}

void net_response_free(net_response *r) {
    if (r) sb_free(&r->body);
}

long net_backoff_ms(long backoff_ms, int retry) {
    long wait = backoff_ms > 0 ? backoff_ms : NET_DEFAULT_BACKOFF_MS;
    for (int i = 1; i < retry && wait < NET_MAX_BACKOFF_MS; i++) wait *= 2;
    return wait > NET_MAX_BACKOFF_MS ? NET_MAX_BACKOFF_MS : wait;
}

/* One try's bookkeeping, shared with the body callback. */
typedef struct try_state {
    const net_request *rq;
    CURL *curl;
    net_response *resp;
    int64_t cap, bytes;
    int routed, to_sink; /* the status has been read; 2xx or a file */
    int too_big, reached_sink, sink_rc;
    char *err;
    size_t errcap;
} try_state;

static size_t on_body(char *p, size_t size, size_t nmemb, void *arg) {
    try_state *t = arg;
    size_t n = size * nmemb;
    if (!t->routed) {
        long status = 0;
        curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
        t->to_sink = status == 0 || (status >= 200 && status < 300);
        t->routed = 1;
    }
    if (!t->to_sink) { /* an error answer: keep its start for the message */
        strbuf *b = &t->resp->body;
        size_t room = b->len < NET_ERROR_BODY_KEPT ? NET_ERROR_BODY_KEPT - b->len : 0;
        sb_append(b, p, n < room ? n : room);
        return n;
    }
    if ((int64_t)n > t->cap - t->bytes) {
        t->too_big = 1;
        return 0; /* curl stops with CURLE_WRITE_ERROR */
    }
    t->bytes += (int64_t)n;
    if (t->rq->write) {
        t->reached_sink = 1;
        t->sink_rc = t->rq->write(t->rq->sink, p, n, t->err, t->errcap);
        return t->sink_rc ? 0 : n;
    }
    sb_append(&t->resp->body, p, n);
    if (t->resp->body.oom) {
        t->sink_rc = util_errf(t->err, t->errcap, REMEM_ENOMEM, "%s: out of memory for the answer",
                               t->rq->what);
        return 0;
    }
    return n;
}

int64_t net_mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 1 when rq's cancel says stop now (set, or its deadline passed). */
static int cancelled(const net_request *rq) {
    const net_cancel *c = rq->cancel;
    if (!c) return 0;
    int64_t d = atomic_load(&c->deadline_ms);
    return atomic_load(&c->stop) || (d > 0 && net_mono_ms() >= d);
}

/* Milliseconds left before rq's deadline (at least 1), or -1: none. */
static long time_left(const net_request *rq) {
    int64_t d = rq->cancel ? atomic_load(&rq->cancel->deadline_ms) : 0;
    if (d <= 0) return -1;
    int64_t left = d - net_mono_ms();
    return left < 1 ? 1 : (long)left;
}

/* The wait, stretched by 0-25% at random: never shorter than the backoff
 * promised, but spread so that clients failed together come back apart.
 * Slept in slices, so that a stop (net_cancel) ends it within 50 ms. */
static void sleep_backoff(const net_request *rq, long ms) {
    ms += (long)arc4random_uniform((uint32_t)(ms / 4 + 1));
    while (ms > 0 && !cancelled(rq)) {
        long slice = ms < 50 ? ms : 50;
        struct timespec ts = {0, slice * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
        ms -= slice;
    }
}

/* libcurl calls this about once a second, and on every chunk: the place
 * to report progress and to cut a transfer whose caller gave up. */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
    (void)ultotal;
    (void)ulnow;
    const net_request *rq = arg;
    if (rq->progress) rq->progress(rq->progress_ctx, (int64_t)dlnow, (int64_t)dltotal);
    return cancelled(rq); /* non-zero: CURLE_ABORTED_BY_CALLBACK */
}

/* Curl failures worth another try: the server may be restarting, busy or
 * briefly unreachable. Bad URLs, TLS verification and the size cap are
 * not. */
static int curl_retryable(CURLcode cc) {
    switch (cc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return 1;
    default: return 0;
    }
}

static const char *tries_word(int tries) { return tries == 1 ? "try" : "tries"; }

/* Sets the options of rq on a reset handle; headers receives the list to
 * free after the transfer. 0 or REMEM_ENOMEM. */
static int set_options(CURL *curl, const net_request *rq, try_state *t, char *curl_msg,
                       struct curl_slist **headers) {
    struct curl_slist *h = NULL, *next;
    char line[4096 + 32];
    const char *lines[4] = {NULL, NULL, "Expect:", NULL};
    char ctype[256], accept[256];
    if (rq->body) {
        snprintf(ctype, sizeof ctype, "Content-Type: %s",
                 rq->content_type ? rq->content_type : "application/json");
        lines[0] = ctype;
    }
    if (rq->accept) {
        snprintf(accept, sizeof accept, "Accept: %s", rq->accept);
        lines[1] = accept;
    }
    if (rq->bearer && rq->bearer[0]) {
        snprintf(line, sizeof line, "Authorization: Bearer %s", rq->bearer);
        lines[3] = line;
    }
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        if (!lines[i]) continue;
        if (!(next = curl_slist_append(h, lines[i]))) {
            curl_slist_free_all(h);
            return REMEM_ENOMEM;
        }
        h = next;
    }
    for (size_t i = 0; rq->headers && rq->headers[i]; i++) {
        if (!(next = curl_slist_append(h, rq->headers[i]))) {
            curl_slist_free_all(h);
            return REMEM_ENOMEM;
        }
        h = next;
    }
    *headers = h;
    long timeout = rq->timeout_ms == 0 ? NET_DEFAULT_TIMEOUT_MS : rq->timeout_ms;
    long connect = rq->connect_timeout_ms ? rq->connect_timeout_ms
                   : timeout > 0          ? timeout
                                          : NET_DEFAULT_TIMEOUT_MS;
    curl_easy_setopt(curl, CURLOPT_URL, rq->url);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
    if (rq->body) {
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, rq->body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
    } else {
        curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    }
    long left = time_left(rq);
    if (left > 0 && (timeout <= 0 || left < timeout)) timeout = left;
    if (left > 0 && left < connect) connect = left;
    if (timeout > 0) curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, connect);
    if (rq->stall_ms > 0) {
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, (rq->stall_ms + 999) / 1000);
    }
    /* No CURLOPT_MAXFILESIZE: curl applies it to any Content-Length, that of
     * a redirect or an error page too, which would hide the real answer. The
     * cap is counted in on_body, on 2xx bodies only. */
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); /* no SIGALRM in threads */
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_msg);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "remem/" REMEM_VERSION);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR,
                     rq->allow_file ? "http,https,file" : "http,https");
    if (rq->follow_redirects) {
        curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
        curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    }
    if (rq->progress || rq->cancel) {
        curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(curl, CURLOPT_XFERINFODATA, rq);
        curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    }
    return REMEM_OK;
}

/* "connection refused": strerror's text with a lowercase first letter, to
 * sit inside a sentence. */
static void os_cause(long os_errno, char *out, size_t cap) {
    snprintf(out, cap, "%s", os_errno ? strerror((int)os_errno) : "cannot connect");
    if (out[0] >= 'A' && out[0] <= 'Z' && !(out[1] >= 'A' && out[1] <= 'Z')) out[0] += 'a' - 'A';
}

/* The message for a try that failed without an answer (cc != CURLE_OK). */
static void describe_transfer(const net_request *rq, CURL *curl, CURLcode cc, const char *curl_msg,
                              int tries, double seconds, char *err, size_t errcap) {
    const char *method = rq->body ? "POST" : "GET";
    long timeout = rq->timeout_ms == 0 ? NET_DEFAULT_TIMEOUT_MS : rq->timeout_ms;
    char cause[256];
    if (cc == CURLE_COULDNT_CONNECT) {
        long os_errno = 0;
        curl_easy_getinfo(curl, CURLINFO_OS_ERRNO, &os_errno);
        os_cause(os_errno, cause, sizeof cause);
    } else if (cc == CURLE_OPERATION_TIMEDOUT && rq->stall_ms > 0 &&
               (timeout <= 0 || seconds * 1000 < (double)timeout * 0.9)) {
        snprintf(cause, sizeof cause, "stalled (nothing received for %ld s)",
                 (rq->stall_ms + 999) / 1000);
    } else if (cc == CURLE_OPERATION_TIMEDOUT) {
        snprintf(cause, sizeof cause, "timed out (no answer within %ld ms)", timeout);
    } else {
        snprintf(cause, sizeof cause, "%s", curl_msg[0] ? curl_msg : curl_easy_strerror(cc));
    }
    char url[1024];
    net_url_redact(rq->url, url, sizeof url);
    util_errf(err, errcap, REMEM_EIO, "%s: %s %s: %s after %d %s", rq->what, method, url, cause,
              tries, tries_word(tries));
}

/* The message for an error status: the start of its body on one line. */
static void describe_status(const net_request *rq, const net_response *resp, int retried, char *err,
                            size_t errcap) {
    char shown[NET_ERROR_BODY_SHOWN + 1];
    size_t n = resp->body.len < NET_ERROR_BODY_SHOWN ? resp->body.len : NET_ERROR_BODY_SHOWN;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)resp->body.data[i];
        shown[i] = (char)(c < 0x20 || c == 0x7f ? ' ' : c);
    }
    shown[n] = '\0';
    const char *method = rq->body ? "POST" : "GET";
    char url[1024];
    net_url_redact(rq->url, url, sizeof url);
    if (retried)
        util_errf(err, errcap, REMEM_EIO, "%s: %s %s answered HTTP %ld after %d %s: %s", rq->what,
                  method, url, resp->status, resp->tries, tries_word(resp->tries), shown);
    else
        util_errf(err, errcap, REMEM_EIO, "%s: %s %s answered HTTP %ld: %s", rq->what, method, url,
                  resp->status, shown);
}

static void describe_too_big(const net_request *rq, const try_state *t, char *err, size_t errcap) {
    char cap[64];
    if (rq->cap_name)
        snprintf(cap, sizeof cap, "%s", rq->cap_name);
    else
        snprintf(cap, sizeof cap, "%lld bytes", (long long)t->cap);
    char url[1024];
    net_url_redact(rq->url, url, sizeof url);
    util_errf(err, errcap, REMEM_EIO, "%s: %s %s: larger than %s", rq->what,
              rq->body ? "POST" : "GET", url, cap);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The message of a request cut by its net_cancel. */
static int describe_cut(const net_request *rq, int tries, char *err, size_t errcap) {
    const char *method = rq->body ? "POST" : "GET";
    if (atomic_load(&rq->cancel->stop))
        return util_errf(err, errcap, REMEM_ETIMEOUT, "%s: %s %s: interrupted after %d %s",
                         rq->what, method, rq->url, tries, tries_word(tries));
    return util_errf(err, errcap, REMEM_ETIMEOUT,
                     "%s: %s %s: no answer within the caller's deadline after %d %s", rq->what,
                     method, rq->url, tries, tries_word(tries));
}

/* One try. Returns REMEM_OK (answered; resp->status says how), a final
 * failure status (message in err), or 1: a failure worth retrying, with
 * its message in err in case it is the last. */
static int try_once(net_client *c, const net_request *rq, net_response *resp, try_state *t,
                    char *err, size_t errcap) {
    char curl_msg[CURL_ERROR_SIZE] = "";
    struct curl_slist *headers = NULL;
    curl_easy_reset(c->curl);
    if (set_options(c->curl, rq, t, curl_msg, &headers) != REMEM_OK)
        return util_errf(err, errcap, REMEM_ENOMEM, "%s: out of memory", rq->what);
    double t0 = now_s();
    CURLcode cc = curl_easy_perform(c->curl);
    curl_slist_free_all(headers);
    resp->status = 0;
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &resp->status);
    if (cc == CURLE_OK) return REMEM_OK;
    if (t->sink_rc) return t->sink_rc;
    if (rq->cancel && cancelled(rq)) return describe_cut(rq, resp->tries, err, errcap);
    if (t->too_big) {
        describe_too_big(rq, t, err, errcap);
        return REMEM_EIO;
    }
    describe_transfer(rq, c->curl, cc, curl_msg, resp->tries, now_s() - t0, err, errcap);
    return curl_retryable(cc) ? 1 : REMEM_EIO;
}

int net_perform(net_client *c, const net_request *rq, net_response *resp, char *err,
                size_t errcap) {
    if (!c || !rq || !resp)
        return util_errf(err, errcap, REMEM_EINVAL, "net: no client or request");
    if (!rq->what) return util_errf(err, errcap, REMEM_EINVAL, "net: the request names no caller");
    if (!rq->url || !rq->url[0])
        return util_errf(err, errcap, REMEM_EINVAL, "%s: no URL to connect to", rq->what);
    resp->status = 0;
    resp->tries = 0;
    for (int retry = 0;; retry++) {
        if (cancelled(rq)) return describe_cut(rq, resp->tries, err, errcap);
        try_state t = {.rq = rq, .curl = c->curl, .resp = resp, .err = err, .errcap = errcap};
        t.cap = rq->max_bytes > 0 ? rq->max_bytes : NET_DEFAULT_MAX_BYTES;
        resp->body.len = 0; /* each try starts with an empty body */
        resp->body.oom = 0;
        if (resp->body.data) resp->body.data[0] = '\0';
        resp->tries++;
        int rc = try_once(c, rq, resp, &t, err, errcap);
        int may_retry = retry < rq->retries;
        if (rc == REMEM_OK) {
            long s = resp->status;
            if (s == 0 || (s >= 200 && s < 300)) return REMEM_OK;
            int retryable = s == 429 || s >= 500;
            if (!retryable || !may_retry) {
                describe_status(rq, resp, retryable, err, errcap);
                return REMEM_EIO;
            }
        } else if (rc != 1 || !may_retry) {
            return rc == 1 ? REMEM_EIO : rc;
        }
        if (t.reached_sink) {                   /* the sink holds part of a failed try */
            if (!rq->restart) return REMEM_EIO; /* err says why the try failed */
            int src = rq->restart(rq->sink, err, errcap);
            if (src) return src;
        }
        long wait = net_backoff_ms(rq->backoff_ms, retry + 1), left = time_left(rq);
        if (left > 0 && wait >= left) return describe_cut(rq, resp->tries, err, errcap);
        sleep_backoff(rq, wait);
    }
}

/* ---- URLs as they may be shown, and joined ---- */

/* "a=1&b=2" as "a=***&b=***" (a part without '=' is all value). */
static void redact_query(const char *q, char *out, size_t cap) {
    size_t o = 0;
    out[0] = '\0';
    while (*q && o + 1 < cap) {
        size_t n = strcspn(q, "&"), k = strcspn(q, "=");
        int named = k < n;
        int w = snprintf(out + o, cap - o, "%s%.*s%s***", o ? "&" : "", named ? (int)k : 0, q,
                         named ? "=" : "");
        if (w < 0 || (size_t)w >= cap - o) break;
        o += (size_t)w;
        q += n;
        if (*q == '&') q++;
    }
}

void net_url_redact(const char *url, char *out, size_t cap) {
    CURLU *u = curl_url();
    char *part = NULL, *whole = NULL;
    if (!cap) return;
    snprintf(out, cap, "%s", "(a URL that does not parse)");
    if (!u || !url || curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME)) goto done;
    if (!curl_url_get(u, CURLUPART_USER, &part, 0) ||
        !curl_url_get(u, CURLUPART_PASSWORD, &part, 0)) {
        curl_url_set(u, CURLUPART_USER, "***", 0);
        curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
    }
    curl_free(part);
    part = NULL;
    if (!curl_url_get(u, CURLUPART_QUERY, &part, 0)) {
        char q[512];
        redact_query(part, q, sizeof q);
        curl_url_set(u, CURLUPART_QUERY, q, 0);
    }
    curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
    if (!curl_url_get(u, CURLUPART_URL, &whole, 0)) snprintf(out, cap, "%s", whole);
done:
    curl_free(part);
    curl_free(whole);
    curl_url_cleanup(u);
}

char *net_url_join(const char *base, const char *tail) {
    CURLU *u = curl_url();
    char *path = NULL, *whole = NULL, *out = NULL;
    if (!u || curl_url_set(u, CURLUPART_URL, base, CURLU_NON_SUPPORT_SCHEME) ||
        curl_url_get(u, CURLUPART_PATH, &path, 0))
        goto done;
    size_t n = strlen(path);
    while (n > 0 && path[n - 1] == '/') n--;
    char *joined = malloc(n + strlen(tail) + 1);
    if (!joined) goto done;
    memcpy(joined, path, n);
    strcpy(joined + n, tail);
    int bad = curl_url_set(u, CURLUPART_PATH, joined, 0) != CURLUE_OK;
    free(joined);
    if (!bad && !curl_url_get(u, CURLUPART_URL, &whole, 0)) out = strdup(whole);
done:
    curl_free(path);
    curl_free(whole);
    curl_url_cleanup(u);
    return out;
}
