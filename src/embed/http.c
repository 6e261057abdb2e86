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
 * The transport is src/net/ (timeouts, retries of what may pass with
 * backoff, the bearer key, the size cap, the messages: "http embedder: POST
 * http://127.0.0.1:9/v1/embeddings: connection refused after 4 tries");
 * this file adds the wire format and the parser, embed_http_parse, a pure
 * function (the fuzz target fuzz/fuzz_embed_http.c calls it without a
 * network). A malformed answer fails at once (trying again would not
 * change it). A call is all or nothing: if any batch fails, the call fails
 * and the caller must not use out.
 *
 * Thread safety: the embedder's state is read-only after creation; each call
 * makes its own net client (reused across its batches, so the connection is
 * kept alive).
 */
#include "embed/embed.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <utf8proc.h>

#include "net/net.h"
#include "remem.h"

enum {
    DEFAULT_TIMEOUT_MS = 10000,
    DEFAULT_RETRIES = 3,
    DEFAULT_BATCH = 64,
    DEFAULT_BACKOFF_MS = 200,
    MAX_DIM = EMBED_HTTP_MAX_DIM,
    MAX_RESPONSE = 256 * 1024 * 1024, /* a bigger answer is refused */
    /* "http:" + the name must fit embedder.model_id, never truncated (two
     * models must never share an id) */
    MAX_MODEL_NAME = sizeof((embedder *)0)->model_id - sizeof "http:",
};

typedef struct http_state {
    char *endpoint; /* {url}/embeddings */
    char *model;
    char *api_key; /* or NULL */
    long timeout_ms;
    int retries;
    int batch;
    int backoff_ms;
    const net_cancel *cancel;
} http_state;

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

/* Two passes, so that nothing is written from an answer that turns out to
 * be bad further down. The contract is in embed.h. */
int embed_http_parse(const char *body, size_t len, const char *source, size_t n, int *dim,
                     float *out, const size_t *rows, char *err, size_t errcap) {
    json_error_t jerr;
    json_t *root = json_loadb(body ? body : "", body ? len : 0, 0, &jerr);
    int rc = REMEM_EEMBED;
    char *seen = NULL;
    if (!root) {
        snprintf(err, errcap, "http embedder: malformed JSON from %s: %s (line %d, column %d)",
                 source, jerr.text, jerr.line, jerr.column);
        return REMEM_EEMBED;
    }
    json_t *data = json_is_object(root) ? json_object_get(root, "data") : NULL;
    if (!json_is_array(data)) {
        json_t *msg = json_object_get(json_object_get(root, "error"), "message");
        snprintf(err, errcap, "http embedder: answer from %s has no \"data\" array%s%s", source,
                 json_is_string(msg) ? ": " : "",
                 json_is_string(msg) ? json_string_value(msg) : "");
        goto done;
    }
    if (json_array_size(data) != n) {
        snprintf(err, errcap, "http embedder: %s returned %zu embeddings for %zu texts", source,
                 json_array_size(data), n);
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
                             source, i);
                    goto done;
                }
                seen[at] = 1;
                if (!json_is_array(vec) || json_array_size(vec) == 0) {
                    snprintf(err, errcap,
                             "http embedder: data[%zu] from %s has no \"embedding\" array", i,
                             source);
                    goto done;
                }
                size_t got = json_array_size(vec);
                if (*dim == 0) {
                    if (got > MAX_DIM) {
                        snprintf(err, errcap,
                                 "http embedder: %s returned a %zu-dimensional embedding "
                                 "(at most %d supported)",
                                 source, got, MAX_DIM);
                        rc = REMEM_EDIM;
                        goto done;
                    }
                    *dim = (int)got;
                } else if (got != (size_t)*dim) {
                    snprintf(err, errcap,
                             "http embedder: %s returned an embedding of dimension %zu, "
                             "expected %d",
                             source, got, *dim);
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
                                 i, source, j);
                        goto done;
                    }
                }
            } else {
                float *row = out + (rows ? rows[at] : (size_t)at) * (size_t)*dim;
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

/* Embeds texts[0..n) in batches into out (n * *dim floats). Empty texts
 * are not sent (several servers refuse them): they get the all-zero row,
 * as a text with no features does. out NULL: only learn *dim (the probe). */
static int embed_all(const http_state *st, const char *const *texts, size_t n, int *dim, float *out,
                     char *err, size_t errcap) {
    net_client *client = net_client_new(err, errcap);
    size_t *rows = malloc((n ? n : 1) * sizeof *rows), nrows = 0;
    net_response resp = {0};
    int rc = REMEM_OK;
    if (!client) {
        free(rows);
        return REMEM_EEMBED; /* err says why */
    }
    if (!rows) {
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
        net_request rq = {
            .what = "http embedder",
            .url = st->endpoint,
            .body = body,
            .body_len = strlen(body),
            .accept = "application/json",
            .bearer = st->api_key,
            .timeout_ms = st->timeout_ms,
            .retries = st->retries,
            .backoff_ms = st->backoff_ms,
            .max_bytes = MAX_RESPONSE,
            .cap_name = "256 MiB",
            .cancel = st->cancel,
        };
        rc = net_perform(client, &rq, &resp, err, errcap);
        free(body);
        if (rc == REMEM_OK)
            rc = embed_http_parse(resp.body.data, resp.body.len, st->endpoint, count, dim, out,
                                  rows + start, err, errcap);
        else if (rc != REMEM_ENOMEM)
            rc = REMEM_EEMBED;
    }
done:
    free(rows);
    net_response_free(&resp);
    net_client_free(client);
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
    free(st->api_key);
    free(st);
}

static void http_destroy(embedder *e) {
    if (!e) return;
    free_state(e->state);
    free(e);
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
    embedder *e = calloc(1, sizeof *e);
    http_state *st = calloc(1, sizeof *st);
    if (!e || !st) goto oom;
    size_t ulen = strlen(cfg->url);
    while (ulen > 0 && cfg->url[ulen - 1] == '/') ulen--;
    st->endpoint = format_alloc("%.*s/embeddings", (int)ulen, cfg->url);
    st->model = strdup(cfg->model);
    if (!st->endpoint || !st->model) goto oom;
    if (cfg->api_key && cfg->api_key[0]) {
        st->api_key = strdup(cfg->api_key);
        if (!st->api_key) goto oom;
    }
    st->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
    st->retries = cfg->retries < 0 ? 0 : cfg->retries ? cfg->retries : DEFAULT_RETRIES;
    st->batch = cfg->batch ? cfg->batch : DEFAULT_BATCH;
    st->backoff_ms = cfg->retry_backoff_ms ? cfg->retry_backoff_ms : DEFAULT_BACKOFF_MS;
    st->cancel = cfg->cancel;

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
    snprintf(err, errcap, "http embedder: out of memory");
    return REMEM_ENOMEM;
}
