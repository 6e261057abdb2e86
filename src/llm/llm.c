/*
 * llm.c: the chat-completions client behind llm.h, and the parsers that
 * read what a model answers.
 *
 * The request is the smallest one every OpenAI-compatible server accepts:
 * model, messages (an optional system message, then the user's), and
 * temperature 0 so that a rating asked twice is answered alike. json_mode
 * adds response_format {"type":"json_object"}, which OpenAI, vLLM and
 * Ollama honour and llama.cpp's server may not: the parsers never rely on
 * it. Transport (timeouts, retries with backoff, the bearer key, the size
 * cap) is src/net/'s; every failure becomes REMEM_ELLM with a message that
 * names the endpoint and the cause.
 *
 * The answer parsers are pure functions over text a server we do not
 * control wrote, so they are fuzzed (fuzz/fuzz_llm.c): they never read past
 * the text, never trust a number's type, and say what they looked for when
 * they find nothing.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "llm/llm.h"
#include "net/net.h"
#include "remem.h"
#include "util/utf8.h"
#include "util/util.h"

/* An answer larger than this is refused (REMEM_ELLM, nothing stored):
 * every text remem stores from a model (an explanation, a summary, a
 * reflection, a plan) comes out of one answer, so none is larger than
 * what a client may send in one request, the server's default --max-body
 * (8 MiB, server/server.h). A model writes no more than a client can. */
#define LLM_MAX_ANSWER ((int64_t)8 << 20)

struct llm {
    net_client *net;
    char *url;      /* as it may be shown: credentials redacted (net_url_redact) */
    char *endpoint; /* the base's path + "/chat/completions", its query kept */
    char *model;
    char *api_key;
    int timeout_ms, retries, backoff_ms;
    const net_cancel *cancel;
    /* The structured output this endpoint was seen to take (llm_chat_schema):
     * 0 a JSON schema, 1 a JSON object, 2 plain text. */
    int format_level;
};

static char *dup_or(const char *s, const char *def) {
    const char *v = s && s[0] ? s : def;
    return v ? strdup(v) : NULL;
}

int llm_open(const llm_config *c, llm **out, char *err, size_t errcap) {
    *out = NULL;
    if (!c || !c->url || !c->url[0])
        return util_errf(err, errcap, REMEM_EINVAL, "llm: no URL (set REMEM_LLM_URL)");
    char shown[1024];
    net_url_redact(c->url, shown, sizeof shown);
    if (strncmp(c->url, "http://", 7) && strncmp(c->url, "https://", 8))
        return util_errf(err, errcap, REMEM_EINVAL,
                         "llm: URL %s: expected http:// or https:// (a base such as "
                         "http://127.0.0.1:11434/v1)",
                         shown);
    llm *l = calloc(1, sizeof *l);
    if (!l) return util_errf(err, errcap, REMEM_ENOMEM, "llm: out of memory");
    size_t n = strlen(shown);
    while (n > 0 && shown[n - 1] == '/') n--;
    l->url = strndup(shown, n);
    l->model = dup_or(c->model, "default");
    l->api_key = c->api_key && c->api_key[0] ? strdup(c->api_key) : NULL;
    /* With libcurl's URL parser, not by pasting text: a base with a query
     * ("...?token=abc") keeps it after the new path. */
    l->endpoint = net_url_join(c->url, "/chat/completions");
    if (!l->endpoint) {
        llm_close(l);
        return util_errf(err, errcap, REMEM_EINVAL, "llm: URL %s does not parse", shown);
    }
    if (!l->url || !l->model || (c->api_key && c->api_key[0] && !l->api_key)) {
        llm_close(l);
        return util_errf(err, errcap, REMEM_ENOMEM, "llm: out of memory");
    }
    l->timeout_ms = c->timeout_ms > 0 ? c->timeout_ms : 30000;
    l->retries = c->retries < 0 ? 2 : c->retries;
    l->backoff_ms = c->backoff_ms > 0 ? c->backoff_ms : NET_DEFAULT_BACKOFF_MS;
    l->cancel = c->cancel;
    l->net = net_client_new(err, errcap);
    if (!l->net) {
        llm_close(l);
        return REMEM_ENOMEM;
    }
    *out = l;
    return REMEM_OK;
}

void llm_close(llm *l) {
    if (!l) return;
    net_client_free(l->net);
    free(l->url);
    free(l->endpoint);
    free(l->model);
    free(l->api_key);
    free(l);
}

const char *llm_model(const llm *l) { return l ? l->model : NULL; }
const char *llm_url(const llm *l) { return l ? l->url : NULL; }

/* ---- the answer's envelope ---- */

/* A token count: a JSON integer, real or numeric string; 0 otherwise. */
static int64_t count_of(json_t *v) {
    if (json_is_integer(v)) return json_integer_value(v) > 0 ? json_integer_value(v) : 0;
    if (json_is_real(v) && isfinite(json_real_value(v)) && json_real_value(v) > 0 &&
        json_real_value(v) < 1e15)
        return (int64_t)json_real_value(v);
    if (json_is_string(v)) {
        char *end;
        long long x = strtoll(json_string_value(v), &end, 10);
        return end != json_string_value(v) && x > 0 ? x : 0;
    }
    return 0;
}

int llm_parse_completion(const char *body, size_t len, char **content, llm_usage *u, char *err,
                         size_t errcap) {
    *content = NULL;
    json_error_t je;
    json_t *root = body ? json_loadb(body, len, JSON_DECODE_ANY, &je) : NULL;
    int rc = REMEM_ELLM;
    if (!root) {
        util_errf(err, errcap, rc, "the answer is not JSON (truncated?): %s at byte %d", je.text,
                  je.position);
        return rc;
    }
    json_t *e = json_object_get(root, "error");
    json_t *choices = json_object_get(root, "choices");
    json_t *msg = json_object_get(json_array_get(choices, 0), "message");
    json_t *text = json_object_get(msg, "content");
    if (!json_is_object(root)) {
        util_errf(err, errcap, rc, "the answer is not a chat completion (a JSON %s, not an object)",
                  json_is_array(root) ? "array" : "scalar");
    } else if (e && !choices) {
        json_t *m = json_is_object(e) ? json_object_get(e, "message") : e;
        util_errf(err, errcap, rc, "the server answered an error: %.300s",
                  json_is_string(m) ? json_string_value(m) : "(no message)");
    } else if (!json_is_array(choices) || json_array_size(choices) == 0) {
        util_errf(err, errcap, rc, "the answer is not a chat completion: no \"choices\"");
    } else if (!json_is_string(text)) {
        util_errf(err, errcap, rc, "the answer has no choices[0].message.content%s",
                  json_is_null(text) ? " (it is null: the model refused or called a tool)" : "");
    } else if (!(*content = strndup(json_string_value(text), json_string_length(text)))) {
        rc = util_errf(err, errcap, REMEM_ENOMEM, "out of memory reading the answer");
    } else {
        json_t *us = json_object_get(root, "usage");
        if (u) {
            u->calls++;
            u->prompt_tokens += count_of(json_object_get(us, "prompt_tokens"));
            u->completion_tokens += count_of(json_object_get(us, "completion_tokens"));
        }
        rc = REMEM_OK;
    }
    json_decref(root);
    return rc;
}

/* The request's JSON: the messages at temperature 0, with format (a
 * response_format object, may be NULL) when given. */
static char *request_body(const llm *l, const char *system, const char *user, json_t *format) {
    json_t *msgs = json_array();
    if (system)
        json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "system", "content", system));
    json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "user", "content", user));
    json_t *req =
        json_pack("{s:s, s:o, s:f}", "model", l->model, "messages", msgs, "temperature", 0.0);
    if (!req) return NULL;
    if (format) json_object_set(req, "response_format", format);
    char *s = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    return s;
}

/* One chat completion with the given response_format (may be NULL);
 * *status receives the HTTP status of an answered error (0 otherwise). */
static int chat_once(llm *l, const char *system, const char *user, json_t *format, char **answer,
                     llm_usage *u, char *err, size_t errcap, long *status) {
    *answer = NULL;
    *status = 0;
    if (!l || !user) return util_errf(err, errcap, REMEM_EINVAL, "llm: no client or no prompt");
    if (util_utf8_check(user, strlen(user)) != strlen(user) ||
        (system && util_utf8_check(system, strlen(system)) != strlen(system)))
        return util_errf(err, errcap, REMEM_EINVAL, "llm: the prompt is not valid UTF-8");
    char *body = request_body(l, system, user, format);
    if (!body)
        return util_errf(err, errcap, REMEM_ENOMEM, "llm: out of memory building the request");
    net_request rq = {
        .what = "llm",
        .url = l->endpoint,
        .body = body,
        .body_len = strlen(body),
        .accept = "application/json",
        .bearer = l->api_key,
        .timeout_ms = l->timeout_ms,
        .retries = l->retries,
        .backoff_ms = l->backoff_ms,
        .max_bytes = LLM_MAX_ANSWER,
        .cap_name = "8 MiB",
        .cancel = l->cancel,
    };
    net_response resp = {0};
    char nerr[768] = "";
    int rc = net_perform(l->net, &rq, &resp, nerr, sizeof nerr);
    free(body);
    if (rc == REMEM_ENOMEM || rc == REMEM_ETIMEOUT) {
        util_errf(err, errcap, rc, "%s", nerr);
    } else if (rc != REMEM_OK) {
        *status = resp.status;
        rc = util_errf(err, errcap, REMEM_ELLM, "%s", nerr);
    } else {
        char perr[512] = "";
        rc = llm_parse_completion(resp.body.data ? resp.body.data : "", resp.body.len, answer, u,
                                  perr, sizeof perr);
        if (rc) util_errf(err, errcap, rc, "llm: POST %s: %s", l->endpoint, perr);
    }
    net_response_free(&resp);
    return rc;
}

int llm_chat(llm *l, const char *system, const char *user, int json_mode, char **answer,
             llm_usage *u, char *err, size_t errcap) {
    json_t *format = json_mode ? json_pack("{s:s}", "type", "json_object") : NULL;
    long status;
    int rc = chat_once(l, system, user, format, answer, u, err, errcap, &status);
    json_decref(format);
    return rc;
}

/* An answered error that says the server does not take this
 * response_format (OpenAI and vLLM answer 400, others 422 or 501). */
static int format_refused(long status) { return status == 400 || status == 422 || status == 501; }

int llm_chat_schema(llm *l, const char *system, const char *user, const char *name,
                    const char *schema, char **answer, llm_usage *u, char *err, size_t errcap) {
    json_error_t je;
    json_t *sch = schema ? json_loads(schema, 0, &je) : NULL;
    if (schema && !sch)
        return util_errf(err, errcap, REMEM_EINVAL, "llm: the answer's schema is not JSON: %s",
                         je.text);
    int rc = REMEM_ELLM;
    for (;;) {
        int level = l ? l->format_level : 2;
        if (level == 0 && !sch) level = 1;
        json_t *format =
            level == 0 ? json_pack("{s:s, s:{s:s, s:O, s:b}}", "type", "json_schema",
                                   "json_schema", "name", name ? name : "answer", "schema", sch,
                                   "strict", 1)
            : level == 1 ? json_pack("{s:s}", "type", "json_object")
                         : NULL;
        long status;
        rc = chat_once(l, system, user, format, answer, u, err, errcap, &status);
        json_decref(format);
        if (rc != REMEM_ELLM || !format_refused(status) || level == 2) break;
        l->format_level = level + 1; /* remembered: the next call starts there */
    }
    json_decref(sch);
    return rc;
}

/* ---- the content's parsers ---- */

/* The end (one past) of the balanced JSON object or array starting at s[0]
 * ('{' or '['), honouring strings and escapes; NULL when it never closes. */
static const char *balanced_end(const char *s, const char *end) {
    char stack[64];
    int depth = 0, in_str = 0;
    for (const char *p = s; p < end; p++) {
        char c = *p;
        if (in_str) {
            if (c == '\\')
                p++;
            else if (c == '"')
                in_str = 0;
            continue;
        }
        if (c == '"') {
            in_str = 1;
        } else if (c == '{' || c == '[') {
            if (depth == (int)sizeof stack) return NULL;
            stack[depth++] = c == '{' ? '}' : ']';
        } else if (c == '}' || c == ']') {
            if (depth == 0 || stack[depth - 1] != c) return NULL;
            if (--depth == 0) return p + 1;
        }
    }
    return NULL;
}

static json_t *try_parse(const char *s, size_t n, int any) {
    json_error_t je;
    return json_loadb(s, n, any ? JSON_DECODE_ANY : 0, &je);
}

/* JSON inside s[0..n): the whole (trimmed) text, else each balanced
 * object or array in turn (a fence's content is found this way too: the
 * fence's backticks are prose around it). */
static json_t *find_json(const char *s, size_t n, int any) {
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    json_t *j = try_parse(s, n, any);
    if (j) return j;
    const char *end = s + n;
    for (const char *p = s; p < end; p++) {
        if (*p != '{' && *p != '[') continue;
        const char *e = balanced_end(p, end);
        if (!e) continue;
        j = try_parse(p, (size_t)(e - p), 0);
        if (j) return j;
    }
    return NULL;
}

/* The first up-to-60 characters of s on one line, for messages. */
static void excerpt(const char *s, char *out, size_t cap) {
    size_t j = 0;
    for (size_t i = 0; s[i] && j + 4 < cap && i < 60; i++)
        out[j++] = (s[i] == '\n' || s[i] == '\r' || s[i] == '\t') ? ' ' : s[i];
    if (s[0] && strlen(s) > 60 && j + 4 < cap) out[j++] = '.', out[j++] = '.', out[j++] = '.';
    out[j] = '\0';
}

json_t *llm_answer_json(const char *answer, char *err, size_t errcap) {
    json_t *j = answer ? find_json(answer, strlen(answer), 0) : NULL;
    if (!j || !(json_is_object(j) || json_is_array(j))) {
        char ex[80];
        json_decref(j);
        excerpt(answer ? answer : "", ex, sizeof ex);
        util_errf(err, errcap, REMEM_ELLM, "the model's answer holds no JSON object: \"%s\"", ex);
        return NULL;
    }
    return j;
}

/* A plain decimal number at s ("7", "-2.5", "+8."), no exponents, hex,
 * inf or nan. Returns the characters read (0: none). */
static size_t scan_number(const char *s, double *out) {
    size_t i = 0, digits = 0;
    if (s[i] == '+' || s[i] == '-') i++;
    while (isdigit((unsigned char)s[i])) i++, digits++;
    if (s[i] == '.' && isdigit((unsigned char)s[i + 1])) {
        i++;
        while (isdigit((unsigned char)s[i])) i++, digits++;
    }
    if (!digits || digits > 30) return 0;
    char buf[40];
    memcpy(buf, s, i);
    buf[i] = '\0';
    *out = strtod(buf, NULL);
    return i;
}

static const char *const NUMBER_KEYS[] = {"rating", "score",  "importance", "poignancy",
                                          "value",  "answer", NULL};

static int in_range(double v, double lo, double hi, double *out, char *err, size_t errcap) {
    if (!isfinite(v) || v < lo || v > hi)
        return util_errf(err, errcap, REMEM_ELLM, "the model's number %g is outside %g-%g", v, lo,
                         hi);
    *out = v;
    return REMEM_OK;
}

/* A number in free text: "N/D" or "N out of D" (rescaled to hi when D is
 * not hi), else the first number after the last "rating"/"score"/"rate",
 * else the only number. 1 found, 0 none, -1 ambiguous. */
static int number_in_text(const char *s, double hi, double *out) {
    size_t n = strlen(s), count = 0;
    double first = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(isdigit((unsigned char)s[i]) ||
              ((s[i] == '-' || s[i] == '+') && isdigit((unsigned char)s[i + 1]))))
            continue;
        if (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '.')) {
            while (i + 1 < n && (isalnum((unsigned char)s[i + 1]) || s[i + 1] == '.')) i++;
            continue; /* part of a word or a version ("gpt-4o", "v1.2") */
        }
        double v, d;
        size_t k = scan_number(s + i, &v);
        if (!k) continue;
        if (isalpha((unsigned char)s[i + k])) { /* "1e400", "3rd": not a plain number */
            i += k;
            while (i + 1 < n && isalnum((unsigned char)s[i + 1])) i++;
            continue;
        }
        size_t j = i + k;
        while (s[j] == ' ') j++;
        size_t kd = 0;
        if (s[j] == '/')
            kd = scan_number(s + j + 1 + (s[j + 1] == ' '), &d);
        else if (!strncasecmp(s + j, "out of ", 7))
            kd = scan_number(s + j + 7, &d);
        if (kd && d > 0) {
            *out = d == hi ? v : v / d * hi;
            return 1;
        }
        if (count++ == 0) first = v;
        i += k - 1;
    }
    const char *kw[] = {"rating", "score", "rate", NULL};
    for (int w = 0; kw[w]; w++) {
        const char *last = NULL;
        for (const char *p = s; (p = strcasestr(p, kw[w])); p++) last = p;
        if (!last) continue;
        for (const char *p = last + strlen(kw[w]); *p; p++) {
            if (isalpha((unsigned char)*p) && p - last > (long)strlen(kw[w]) + 12) break;
            if (isdigit((unsigned char)*p) && scan_number(p, out)) return 1;
        }
    }
    if (count == 1) {
        *out = first;
        return 1;
    }
    return count ? -1 : 0;
}

static int number_of_json(json_t *v, double hi, double *out) {
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 1;
    }
    if (json_is_string(v)) return number_in_text(json_string_value(v), hi, out) == 1;
    return 0;
}

int llm_answer_number(const char *answer, double lo, double hi, double *out, char *err,
                      size_t errcap) {
    char ex[80];
    double v;
    if (!answer) answer = "";
    json_t *j = find_json(answer, strlen(answer), 1);
    if (j) {
        int found = number_of_json(j, hi, &v);
        if (!found && json_is_array(j) && json_array_size(j) > 0) {
            json_t *first = json_incref(json_array_get(j, 0));
            json_decref(j);
            j = first;
            found = number_of_json(j, hi, &v);
        }
        for (int k = 0; !found && json_is_object(j) && NUMBER_KEYS[k]; k++) {
            const char *key;
            json_t *val;
            json_object_foreach(j, key, val) {
                if (!strcasecmp(key, NUMBER_KEYS[k]) && number_of_json(val, hi, &v)) {
                    found = 1;
                    break;
                }
            }
        }
        json_decref(j);
        if (found) return in_range(v, lo, hi, out, err, errcap);
    }
    int t = number_in_text(answer, hi, &v);
    if (t == 1) return in_range(v, lo, hi, out, err, errcap);
    excerpt(answer, ex, sizeof ex);
    return util_errf(err, errcap, REMEM_ELLM,
                     t < 0 ? "the model's answer holds several numbers and no rating: \"%s\""
                           : "the model's answer holds no number: \"%s\"",
                     ex);
}

char *llm_answer_string(const char *answer, const char *const *keys) {
    json_t *j = answer ? find_json(answer, strlen(answer), 0) : NULL;
    char *s = NULL;
    for (int k = 0; json_is_object(j) && keys[k] && !s; k++) {
        const char *key;
        json_t *val;
        json_object_foreach(j, key, val) {
            if (strcasecmp(key, keys[k])) continue;
            if (json_is_string(val))
                s = strdup(json_string_value(val));
            else if (json_is_number(val) || json_is_array(val) || json_is_object(val))
                s = json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY);
            if (s) break;
        }
    }
    json_decref(j);
    return s;
}
