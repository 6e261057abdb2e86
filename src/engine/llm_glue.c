/*
 * llm_glue.c: the handle's LLM. remem_open makes the client from the
 * options, else $REMEM_LLM_URL / $REMEM_LLM_MODEL / $REMEM_LLM_API_KEY,
 * else the config file's llm section (no request is made until an
 * operation asks), and every operation that asks
 * the model goes through eng_llm_chat, so that two things hold everywhere:
 * a failure is REMEM_ELLM with a message that starts with the operation's
 * name and names the cause, and the tokens used are counted per operation
 * name, on the handle (remem_llm_usage(db)) and for the whole process
 * (remem_llm_usage(NULL), what the server's /metrics shows, since a server
 * spreads its requests over a pool of handles).
 *
 * The handle's net_cancel (engine.h) is handed to its LLM client and its
 * http embedder, so remem_set_deadline and remem_interrupt, here, bound
 * every model request the handle makes (REMEM_ETIMEOUT when cut).
 *
 * The process counts are a short list under one mutex: a handful of
 * operation names, touched once per LLM call (itself a network round
 * trip), so a lock costs nothing that matters.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/telemetry_glue.h"

typedef struct eng_llm_tally {
    char op[48];
    llm_usage u;
} eng_llm_tally;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static eng_llm_tally *g_counts;
static size_t g_n;

static const char *env_or(const char *v, const char *name) {
    if (v && *v) return v;
    const char *e = getenv(name);
    return e && *e ? e : NULL;
}

/* v, else $name, else the config file's value f. */
static const char *pick(const char *v, const char *name, const char *f) {
    const char *s = env_or(v, name);
    return s ? s : f && *f ? f : NULL;
}

int eng_llm_open(remem *db) {
    const remem_options *o = &db->opt;
    /* The options win, then the environment, then the config file's llm
     * section: the nearer to the call, the more deliberate the choice. */
    const cfg *conf = eng_config(db);
    const cfg_llm *f = conf ? cfg_llm_get(conf) : NULL;
    llm_config c = {
        .url = pick(o->llm_url, "REMEM_LLM_URL", f ? f->url : NULL),
        .model = pick(o->llm_model, "REMEM_LLM_MODEL", f ? f->model : NULL),
        .api_key = pick(o->llm_api_key, "REMEM_LLM_API_KEY", f ? f->api_key : NULL),
        .timeout_ms = o->llm_timeout_ms > 0 ? o->llm_timeout_ms
                      : f                   ? f->timeout_ms
                                            : 0,
        .retries = f && f->retries >= 0 ? f->retries : -1,
        .cancel = &db->cancel,
    };
    if (!c.url) return REMEM_OK; /* no LLM: the operations' fallbacks */
    char err[512] = "";
    int rc = llm_open(&c, &db->llm, err, sizeof err);
    return rc ? eng_fail(db, rc, "%s", err) : REMEM_OK;
}

void eng_llm_close(remem *db) {
    llm_close(db->llm);
    db->llm = NULL;
    free(db->llm_counts);
    db->llm_counts = NULL;
    db->n_llm_counts = 0;
}

llm *eng_llm(remem *db) { return db ? db->llm : NULL; }

/* Add u to op's entry of the list *list (*n long), growing it. */
static void add_to(eng_llm_tally **list, size_t *n, const char *op, const llm_usage *u) {
    size_t i = 0;
    while (i < *n && strcmp((*list)[i].op, op)) i++;
    if (i == *n) {
        eng_llm_tally *g = realloc(*list, (*n + 1) * sizeof *g);
        if (!g) return; /* a count lost to out-of-memory, nothing else */
        *list = g;
        memset(&g[i], 0, sizeof g[i]);
        snprintf(g[i].op, sizeof g[i].op, "%s", op);
        (*n)++;
    }
    (*list)[i].u.calls += u->calls;
    (*list)[i].u.prompt_tokens += u->prompt_tokens;
    (*list)[i].u.completion_tokens += u->completion_tokens;
}

void eng_llm_count(remem *db, const char *op, const llm_usage *u) {
    if (!u || !u->calls) return;
    if (db) add_to(&db->llm_counts, &db->n_llm_counts, op, u);
    pthread_mutex_lock(&g_lock);
    add_to(&g_counts, &g_n, op, u);
    pthread_mutex_unlock(&g_lock);
}

/* eng_llm_chat and eng_llm_chat_schema: json_mode as llm_chat's, or a
 * schema (name, text) for llm_chat_schema when schema is not NULL. */
static int chat(remem *db, const char *op, const char *system, const char *user, int json_mode,
                const char *schema_name, const char *schema, char **answer, llm_usage *u) {
    *answer = NULL;
    if (!db->llm) return eng_fail(db, REMEM_EUNSUPPORTED, "%s needs an LLM: set REMEM_LLM_URL", op);
    llm_usage one = {0};
    char err[1024] = "";
    /* OpenTelemetry's GenAI conventions: a client span "chat {model}". */
    const char *model = llm_model(db->llm);
    tm_span *s = NULL;
    if (tm_enabled()) {
        char name[64];
        snprintf(name, sizeof name, "chat %s", model ? model : "");
        s = tm_span_start(name, TM_KIND_CLIENT);
        tm_span_str(s, "gen_ai.operation.name", "chat");
        tm_span_str(s, "gen_ai.request.model", model);
        tm_span_str(s, "remem.op", op);
    }
    int rc = schema ? llm_chat_schema(db->llm, system, user, schema_name, schema, answer, &one,
                                      err, sizeof err)
                    : llm_chat(db->llm, system, user, json_mode, answer, &one, err, sizeof err);
    if (!rc) {
        tm_span_int(s, "gen_ai.usage.input_tokens", one.prompt_tokens);
        tm_span_int(s, "gen_ai.usage.output_tokens", one.completion_tokens);
        tm_count("remem.llm.input_tokens", "{token}", "Prompt tokens the LLM reported.",
                 (double)one.prompt_tokens);
        tm_count("remem.llm.output_tokens", "{token}", "Completion tokens the LLM reported.",
                 (double)one.completion_tokens);
    } else if (s) {
        tm_span_str(s, "error.type", remem_strerror(rc));
        tm_span_error(s, err);
    }
    tm_span_end(s);
    if (rc) return eng_fail(db, rc, "%s: %s", op, err);
    eng_llm_count(db, op, &one);
    if (u) {
        u->calls += one.calls;
        u->prompt_tokens += one.prompt_tokens;
        u->completion_tokens += one.completion_tokens;
    }
    return REMEM_OK;
}

int eng_llm_chat(remem *db, const char *op, const char *system, const char *user, int json_mode,
                 char **answer, llm_usage *u) {
    return chat(db, op, system, user, json_mode, NULL, NULL, answer, u);
}

int eng_llm_chat_schema(remem *db, const char *op, const char *system, const char *user,
                        const char *schema_name, const char *schema, char **answer,
                        llm_usage *u) {
    return chat(db, op, system, user, 1, schema_name, schema, answer, u);
}

json_t *eng_llm_answer(remem *db, const llm_usage *u) {
    return json_pack("{s:s?, s:I, s:I}", "model", llm_model(db->llm), "prompt_tokens",
                     (json_int_t)u->prompt_tokens, "completion_tokens",
                     (json_int_t)u->completion_tokens);
}

static json_t *counts_json(const eng_llm_tally *c, size_t n) {
    json_t *ops = json_object();
    for (size_t i = 0; ops && i < n; i++)
        json_object_set_new(ops, c[i].op,
                            json_pack("{s:I, s:I, s:I}", "calls", (json_int_t)c[i].u.calls,
                                      "prompt_tokens", (json_int_t)c[i].u.prompt_tokens,
                                      "completion_tokens", (json_int_t)c[i].u.completion_tokens));
    return ops;
}

int remem_llm_usage(remem *db, char **json) {
    *json = NULL;
    json_t *ops;
    if (db) {
        ops = counts_json(db->llm_counts, db->n_llm_counts);
    } else {
        pthread_mutex_lock(&g_lock);
        ops = counts_json(g_counts, g_n);
        pthread_mutex_unlock(&g_lock);
    }
    json_t *o = json_pack("{s:s?, s:s?, s:o?}", "model", db ? llm_model(db->llm) : NULL, "url",
                          db ? llm_url(db->llm) : NULL, "ops", ops);
    if (o) *json = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    return *json ? REMEM_OK : REMEM_ENOMEM;
}

void remem_set_deadline(remem *db, int64_t ms) {
    if (!db) return;
    atomic_store(&db->cancel.deadline_ms, ms > 0 ? net_mono_ms() + ms : 0);
    atomic_store(&db->cancel.stop, 0);
}

void remem_interrupt(remem *db) {
    if (db) atomic_store(&db->cancel.stop, 1);
}
