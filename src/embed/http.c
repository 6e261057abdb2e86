/*
 * http.c: the "http" embedder, for any OpenAI-compatible embeddings endpoint
 * (OpenAI, Ollama, vLLM, llama.cpp's server, text-embeddings-inference).
 *
 * Wire format: POST {url}/embeddings with {"model": M, "input": [texts...]},
 * answered by {"data": [{"index": i, "embedding": [...]}, ...], ...}. Texts
 * go cfg->batch at a time; each result is placed by its "index" (servers
 * may answer out of order) and L2-normalised here, since not every server
 * normalises. The model id is "http:" + the model name. Empty texts are not
 * sent (several servers refuse them) and get the all-zero row; bytes that are
 * not UTF-8 (JSON cannot carry them) are sent as U+FFFD.
 *
 * The dimension: embedders must know theirs when created (the engine checks
 * it against the store), so with cfg->dim 0 creation sends one probe request
 * embedding "remem" and takes the length of what comes back; creation then
 * fails if the server is down. Every later response must have that length,
 * else REMEM_EDIM.
 *
 * Failures: each request has a time limit (cfg->timeout_ms, connecting
 * included). Connection errors, timeouts, HTTP 429 and 5xx are retried
 * cfg->retries times, waiting 200 ms, 400 ms, 800 ms ... (at most 5 s)
 * between tries; any other 4xx, and a malformed answer, fail at once (trying
 * again would not change them). Messages name the URL and the cause ("cannot
 * connect to http://127.0.0.1:9/v1/embeddings (Connection refused) after 4
 * tries", the HTTP status with the start of the error body, the JSON error).
 * A call is all or nothing: if any batch fails, the call fails and the
 * caller must not use out.
 *
 * Thread safety: the embedder's state is read-only after creation; each call
 * makes its own curl handle (reused across its batches, so connections are
 * kept alive).
 */
#include "embed/embed.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>
#include <utf8proc.h>

#include "remem.h"

enum {
    DEFAULT_TIMEOUT_MS = 10000,
    DEFAULT_RETRIES = 3,
    DEFAULT_BATCH = 64,
    DEFAULT_BACKOFF_MS = 200,
    MAX_BACKOFF_MS = 5000,
    MAX_DIM = 1 << 16,
    ERROR_BODY_SHOWN = 200,           /* bytes of an error body in messages */
    MAX_RESPONSE = 256 * 1024 * 1024, /* a bigger answer is refused */
    /* "http:" + the name must fit embedder.model_id, never truncated (two
     * models must never share an id) */
    MAX_MODEL_NAME = sizeof((embedder *)0)->model_id - sizeof "http:",
};

typedef struct http_state {
    char *endpoint; /* {url}/embeddings */
    char *model;
    char *auth_header; /* "Authorization: Bearer ..." or NULL */
    long timeout_ms;
    int retries;
    int batch;
    int backoff_ms;
} http_state;

/* The response body as curl delivers it, with a size cap. */
typedef struct body_buf {
    char *data;
    size_t len, cap;
    int too_big;
} body_buf;

static size_t collect_body(char *ptr, size_t size, size_t nmemb, void *userdata) {
    body_buf *b = userdata;
    size_t n = size * nmemb;
    if (b->len + n > MAX_RESPONSE) {
        b->too_big = 1;
        return 0; /* curl stops with CURLE_WRITE_ERROR */
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 16384;
        while (cap < b->len + n + 1) cap *= 2;
        char *data = realloc(b->data, cap);
        if (!data) return 0;
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, ptr, n);
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

static const char *tries_word(int tries) { return tries == 1 ? "try" : "tries"; }

/* The start of an error body, on one line, for a message. */
static void excerpt(const body_buf *b, char *out, size_t cap) {
    size_t n = b->len < ERROR_BODY_SHOWN ? b->len : ERROR_BODY_SHOWN;
    if (n >= cap) n = cap - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)b->data[i];
        out[i] = (char)(c < 0x20 || c == 0x7f ? ' ' : c);
    }
    out[n] = '\0';
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* Curl failures worth another try: the server may be restarting, busy or
 * briefly unreachable. Bad URLs, TLS verification and our own size cap are
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

/* Writes the message for a failed transfer (cc != CURLE_OK). */
static void describe_curl_failure(const http_state *st, CURL *curl, CURLcode cc,
                                  const char *curl_msg, int tries, char *err, size_t errcap) {
    long os_errno = 0;
    curl_easy_getinfo(curl, CURLINFO_OS_ERRNO, &os_errno);
    const char *cause = curl_msg[0] ? curl_msg : curl_easy_strerror(cc);
    if (cc == CURLE_COULDNT_CONNECT) {
        snprintf(err, errcap, "http embedder: cannot connect to %s (%s) after %d %s", st->endpoint,
                 os_errno ? strerror((int)os_errno) : cause, tries, tries_word(tries));
    } else if (cc == CURLE_OPERATION_TIMEDOUT) {
        snprintf(err, errcap, "http embedder: %s timed out (no answer within %ld ms) after %d %s",
                 st->endpoint, st->timeout_ms, tries, tries_word(tries));
    } else {
        snprintf(err, errcap, "http embedder: request to %s failed (%s) after %d %s", st->endpoint,
                 cause, tries, tries_word(tries));
    }
}

/* Sends body to the endpoint, retrying as the file's opening comment says.
 * On success (HTTP 2xx) resp holds the answer. */
static int post_with_retries(const http_state *st, CURL *curl, const char *body, body_buf *resp,
                             char *err, size_t errcap) {
    char curl_msg[CURL_ERROR_SIZE];
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, resp);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_msg);
    long backoff = st->backoff_ms;
    for (int tries = 1;; tries++) {
        resp->len = 0;
        resp->too_big = 0;
        curl_msg[0] = '\0';
        CURLcode cc = curl_easy_perform(curl);
        int last = tries > st->retries;
        if (cc != CURLE_OK) {
            if (resp->too_big) {
                snprintf(err, errcap, "http embedder: answer from %s is larger than %d MiB",
                         st->endpoint, MAX_RESPONSE >> 20);
                return REMEM_EEMBED;
            }
            if (last || !curl_retryable(cc)) {
                describe_curl_failure(st, curl, cc, curl_msg, tries, err, errcap);
                return REMEM_EEMBED;
            }
        } else {
            long status = 0;
            curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
            if (status >= 200 && status < 300) return REMEM_OK;
            int retryable = status == 429 || status >= 500;
            if (last || !retryable) {
                char shown[ERROR_BODY_SHOWN + 1];
                excerpt(resp, shown, sizeof shown);
                if (retryable)
                    snprintf(err, errcap, "http embedder: %s answered HTTP %ld after %d %s: %s",
                             st->endpoint, status, tries, tries_word(tries), shown);
                else
                    snprintf(err, errcap, "http embedder: %s answered HTTP %ld: %s", st->endpoint,
                             status, shown);
                return REMEM_EEMBED;
            }
        }
        sleep_ms(backoff);
        backoff = backoff * 2 > MAX_BACKOFF_MS ? MAX_BACKOFF_MS : backoff * 2;
    }
}

/* JSON strings must be UTF-8; a text that is not (remem accepts any bytes)
 * is sent with U+FFFD in place of each invalid byte. */
static json_t *json_text(const char *text) {
    json_t *j = json_string(text);
    if (j) return j;
    size_t len = strlen(text);
    char *fixed = malloc(len * 3 + 1), *w = fixed;
    if (!fixed) return NULL;
    const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)text;
    while (*p) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t n = utf8proc_iterate(p, -1, &cp);
        if (n > 0) {
            memcpy(w, p, (size_t)n);
            w += n;
            p += n;
        } else {
            memcpy(w, "\xef\xbf\xbd", 3);
            w += 3;
            p++;
        }
    }
    *w = '\0';
    j = json_string(fixed);
    free(fixed);
    return j;
}

/* The request body for texts[rows[i]], i < n, or NULL when memory ran out.
 * Free with free(). */
static char *request_body(const char *model, const char *const *texts, const size_t *rows,
                          size_t n) {
    json_t *input = json_array();
    json_t *root = json_object();
    char *out = NULL;
    if (!input || !root) goto done;
    for (size_t i = 0; i < n; i++)
        if (json_array_append_new(input, json_text(texts[rows[i]])) != 0) goto done;
    if (json_object_set_new(root, "model", json_string(model)) != 0) goto done;
    if (json_object_set(root, "input", input) != 0) goto done;
    out = json_dumps(root, JSON_COMPACT);
done:
    json_decref(input);
    json_decref(root);
    return out;
}

/* Checks a response for n texts and, when out is not NULL, writes the
 * normalised vector of the text at index i of the request into row rows[i]
 * of out (*dim floats per row). *dim 0: learn it from the answer. Two
 * passes, so that nothing is written from an answer that turns out to be
 * bad further down. */
static int parse_response(const http_state *st, const body_buf *resp, size_t n, int *dim,
                          float *out, const size_t *rows, char *err, size_t errcap) {
    json_error_t jerr;
    json_t *root = json_loadb(resp->data ? resp->data : "", resp->len, 0, &jerr);
    int rc = REMEM_EEMBED;
    char *seen = NULL;
    if (!root) {
        snprintf(err, errcap, "http embedder: malformed JSON from %s: %s (line %d, column %d)",
                 st->endpoint, jerr.text, jerr.line, jerr.column);
        return REMEM_EEMBED;
    }
    json_t *data = json_is_object(root) ? json_object_get(root, "data") : NULL;
    if (!json_is_array(data)) {
        json_t *msg = json_object_get(json_object_get(root, "error"), "message");
        snprintf(err, errcap, "http embedder: answer from %s has no \"data\" array%s%s",
                 st->endpoint, json_is_string(msg) ? ": " : "",
                 json_is_string(msg) ? json_string_value(msg) : "");
        goto done;
    }
    if (json_array_size(data) != n) {
        snprintf(err, errcap, "http embedder: %s returned %zu embeddings for %zu texts",
                 st->endpoint, json_array_size(data), n);
        goto done;
    }
    seen = calloc(n ? n : 1, 1);
    if (!seen) {
        snprintf(err, errcap, "http embedder: out of memory");
        rc = REMEM_ENOMEM;
        goto done;
    }
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && !out) break;
        for (size_t i = 0; i < n; i++) {
            json_t *item = json_array_get(data, i);
            json_t *index = json_object_get(item, "index");
            json_t *vec = json_object_get(item, "embedding");
            /* Without "index" (not OpenAI's format, but seen in the wild),
             * the position is the index. */
            json_int_t at =
                index ? (json_is_integer(index) ? json_integer_value(index) : -1) : (json_int_t)i;
            if (pass == 0) {
                if (at < 0 || (size_t)at >= n || seen[at]) {
                    snprintf(err, errcap,
                             "http embedder: %s returned a missing, repeated or "
                             "out-of-range \"index\" in data[%zu]",
                             st->endpoint, i);
                    goto done;
                }
                seen[at] = 1;
                if (!json_is_array(vec) || json_array_size(vec) == 0) {
                    snprintf(err, errcap,
                             "http embedder: data[%zu] from %s has no \"embedding\" array", i,
                             st->endpoint);
                    goto done;
                }
                size_t got = json_array_size(vec);
                if (*dim == 0) {
                    if (got > MAX_DIM) {
                        snprintf(err, errcap,
                                 "http embedder: %s returned a %zu-dimensional embedding "
                                 "(at most %d supported)",
                                 st->endpoint, got, MAX_DIM);
                        rc = REMEM_EDIM;
                        goto done;
                    }
                    *dim = (int)got;
                } else if (got != (size_t)*dim) {
                    snprintf(err, errcap,
                             "http embedder: %s returned an embedding of dimension %zu, "
                             "expected %d",
                             st->endpoint, got, *dim);
                    rc = REMEM_EDIM;
                    goto done;
                }
                size_t j;
                json_t *x;
                json_array_foreach(vec, j, x) {
                    double v = json_number_value(x);
                    if (!json_is_number(x) || !isfinite((float)v)) {
                        snprintf(err, errcap,
                                 "http embedder: data[%zu] from %s: element %zu is not a "
                                 "finite number",
                                 i, st->endpoint, j);
                        goto done;
                    }
                }
            } else {
                float *row = out + rows[at] * (size_t)*dim;
                double sum = 0;
                for (int j = 0; j < *dim; j++) {
                    row[j] = (float)json_number_value(json_array_get(vec, (size_t)j));
                    sum += (double)row[j] * row[j];
                }
                if (sum > 0) {
                    float scale = (float)(1.0 / sqrt(sum));
                    for (int j = 0; j < *dim; j++) row[j] *= scale;
                }
            }
        }
    }
    rc = REMEM_OK;
done:
    free(seen);
    json_decref(root);
    return rc;
}

/* A curl handle set up for the endpoint; headers returns the list to free
 * with curl_slist_free_all after curl_easy_cleanup. */
static CURL *open_connection(const http_state *st, struct curl_slist **headers) {
    CURL *curl = curl_easy_init();
    struct curl_slist *h = NULL, *next;
    if (!curl) return NULL;
    const char *lines[] = {"Content-Type: application/json", "Accept: application/json",
                           "Expect:", st->auth_header};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        if (!lines[i]) continue;
        if (!(next = curl_slist_append(h, lines[i]))) {
            curl_slist_free_all(h);
            curl_easy_cleanup(curl);
            return NULL;
        }
        h = next;
    }
    curl_easy_setopt(curl, CURLOPT_URL, st->endpoint);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, st->timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, st->timeout_ms);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); /* no SIGALRM in threads */
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect_body);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "remem");
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    *headers = h;
    return curl;
}

/* Embeds texts[0..n) in batches into out (n * *dim floats). Empty texts
 * are not sent (several servers refuse them): they get the all-zero row,
 * as a text with no features does. out NULL: only learn *dim (the probe). */
static int embed_all(const http_state *st, const char *const *texts, size_t n, int *dim, float *out,
                     char *err, size_t errcap) {
    struct curl_slist *headers = NULL;
    CURL *curl = open_connection(st, &headers);
    size_t *rows = malloc((n ? n : 1) * sizeof *rows), nrows = 0;
    body_buf resp = {0};
    int rc = REMEM_OK;
    if (!curl || !rows) {
        snprintf(err, errcap, "http embedder: out of memory setting up the request");
        rc = REMEM_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (texts[i][0])
            rows[nrows++] = i;
        else if (out)
            memset(out + i * (size_t)*dim, 0, (size_t)*dim * sizeof *out);
    }
    for (size_t start = 0; start < nrows && rc == REMEM_OK; start += (size_t)st->batch) {
        size_t count = nrows - start < (size_t)st->batch ? nrows - start : (size_t)st->batch;
        char *body = request_body(st->model, texts, rows + start, count);
        if (!body) {
            snprintf(err, errcap, "http embedder: out of memory building the request");
            rc = REMEM_ENOMEM;
            break;
        }
        rc = post_with_retries(st, curl, body, &resp, err, errcap);
        free(body);
        if (rc == REMEM_OK)
            rc = parse_response(st, &resp, count, dim, out, rows + start, err, errcap);
    }
done:
    free(rows);
    free(resp.data);
    if (curl) curl_easy_cleanup(curl);
    curl_slist_free_all(headers);
    return rc;
}

static int http_embed(embedder *e, const char *const *texts, size_t n, float *out, char *err,
                      size_t errcap) {
    if (n == 0) return REMEM_OK;
    if (!texts || !out) {
        snprintf(err, errcap, "http embedder: texts and out must not be NULL");
        return REMEM_EINVAL;
    }
    for (size_t i = 0; i < n; i++)
        if (!texts[i]) {
            snprintf(err, errcap, "http embedder: text %zu is NULL", i);
            return REMEM_EINVAL;
        }
    int dim = e->dim;
    return embed_all(e->state, texts, n, &dim, out, err, errcap);
}

static void free_state(http_state *st) {
    if (!st) return;
    free(st->endpoint);
    free(st->model);
    free(st->auth_header);
    free(st);
}

static void http_destroy(embedder *e) {
    if (!e) return;
    free_state(e->state);
    free(e);
    curl_global_cleanup();
}

static char *format_alloc(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) s = NULL;
    va_end(ap);
    return s;
}

int embed_http_create(const embed_config *cfg, embedder **out, char *err, size_t errcap) {
    if (!out) {
        snprintf(err, errcap, "http embedder: out must not be NULL");
        return REMEM_EINVAL;
    }
    *out = NULL;
    if (!cfg || !cfg->url || !cfg->url[0]) {
        snprintf(err, errcap,
                 "http embedder: no URL (the base of an OpenAI-compatible "
                 "API, e.g. http://localhost:11434/v1)");
        return REMEM_EINVAL;
    }
    if (!cfg->model || !cfg->model[0]) {
        snprintf(err, errcap, "http embedder: no model name for %s", cfg->url);
        return REMEM_EINVAL;
    }
    if (strlen(cfg->model) > MAX_MODEL_NAME) {
        snprintf(err, errcap, "http embedder: model name longer than %d bytes", MAX_MODEL_NAME);
        return REMEM_EINVAL;
    }
    if (cfg->dim < 0 || cfg->dim > MAX_DIM || cfg->timeout_ms < 0 || cfg->batch < 0 ||
        cfg->retry_backoff_ms < 0) {
        snprintf(err, errcap,
                 "http embedder: dim, timeout_ms, batch and retry_backoff_ms "
                 "must not be negative (dim at most %d)",
                 MAX_DIM);
        return REMEM_EINVAL;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, errcap, "http embedder: libcurl initialisation failed");
        return REMEM_EEMBED;
    }
    embedder *e = calloc(1, sizeof *e);
    http_state *st = calloc(1, sizeof *st);
    if (!e || !st) goto oom;
    size_t ulen = strlen(cfg->url);
    while (ulen > 0 && cfg->url[ulen - 1] == '/') ulen--;
    st->endpoint = format_alloc("%.*s/embeddings", (int)ulen, cfg->url);
    st->model = strdup(cfg->model);
    if (!st->endpoint || !st->model) goto oom;
    if (cfg->api_key && cfg->api_key[0]) {
        st->auth_header = format_alloc("Authorization: Bearer %s", cfg->api_key);
        if (!st->auth_header) goto oom;
    }
    st->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
    st->retries = cfg->retries < 0 ? 0 : cfg->retries ? cfg->retries : DEFAULT_RETRIES;
    st->batch = cfg->batch ? cfg->batch : DEFAULT_BATCH;
    st->backoff_ms = cfg->retry_backoff_ms ? cfg->retry_backoff_ms : DEFAULT_BACKOFF_MS;

    e->name = "http";
    snprintf(e->model_id, sizeof e->model_id, "http:%s", cfg->model);
    e->embed = http_embed;
    e->destroy = http_destroy;
    e->state = st;
    e->dim = cfg->dim;
    if (e->dim == 0) {
        const char *probe[] = {"remem"};
        int rc = embed_all(st, probe, 1, &e->dim, NULL, err, errcap);
        if (rc != REMEM_OK) {
            http_destroy(e);
            return rc;
        }
    }
    *out = e;
    return REMEM_OK;
oom:
    free_state(st);
    free(e);
    curl_global_cleanup();
    snprintf(err, errcap, "http embedder: out of memory");
    return REMEM_ENOMEM;
}
