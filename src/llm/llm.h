/*
 * llm.h: the one client remem has for a language model: any
 * OpenAI-compatible POST {base}/chat/completions (OpenAI, Ollama, vLLM,
 * llama.cpp's server), over the src/net/ libcurl client (timeouts, retries
 * with backoff, bearer key, a cap on the answer's size). A part: it asks
 * and parses; the engine's operations (rating, reflection, summaries,
 * planning, consolidation) decide what to ask and what to store.
 *
 * Answers are parsed defensively, because local models often ignore
 * response_format: JSON is looked for inside prose and code fences, and a
 * number given as a string ("7", "Rating: 7/10") is taken. A malformed
 * answer is an error with a message naming what was wrong; the caller then
 * writes nothing.
 */
#ifndef REMEM_LLM_H
#define REMEM_LLM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct llm llm;

typedef struct llm_config {
    const char *url;     /* base URL (".../v1"); required */
    const char *model;   /* required by most servers; NULL: "default" */
    const char *api_key; /* NULL: no Authorization header */
    int timeout_ms;      /* 0: 30000 */
    int retries;         /* <0: 2 */
    int backoff_ms;      /* first wait before a retry; 0: 200 (net.h) */
    /* The owner's bound on every request (net.h's net_cancel; NULL: none);
     * kept, not copied: it must outlive the client. */
    const struct net_cancel *cancel;
} llm_config;

/* Tokens as the server reports them in "usage" (0 when it does not). */
typedef struct llm_usage {
    int64_t calls;
    int64_t prompt_tokens;
    int64_t completion_tokens;
} llm_usage;

/* Opens a client (no request is made yet). REMEM_EINVAL with err when the
 * URL is missing or not http(s)://, REMEM_ENOMEM, or libcurl's failure. */
int llm_open(const llm_config *c, llm **out, char *err, size_t errcap);
void llm_close(llm *l);
const char *llm_model(const llm *l);
const char *llm_url(const llm *l);

/* One chat completion. system may be NULL. json_mode asks for a JSON object
 * (response_format) without trusting that it is honoured. *answer is the
 * assistant's content (malloc'd). *u (may be NULL) is ADDED to. Returns 0,
 * or non-zero with err naming the cause: the endpoint down (after retries),
 * an HTTP status with the server's message, a timeout, an answer that is
 * not a chat completion. REMEM_ETIMEOUT when the config's cancel cut the
 * request (its deadline passed, or it was told to stop); REMEM_ELLM for
 * every other failure of the model or the endpoint. */
int llm_chat(llm *l, const char *system, const char *user, int json_mode, char **answer,
             llm_usage *u, char *err, size_t errcap);

/* A chat completion whose answer should follow a JSON Schema (schema, as
 * text; name labels it). Structured output is asked for the way the
 * endpoint takes it: response_format "json_schema" first, then
 * "json_object", then plain text, stepping down when the server answers
 * 400, 422 or 501, and remembering the step for the client's next calls.
 * The answer is still read defensively (llm_answer_json): a model may
 * ignore the format. Returns as llm_chat. */
int llm_chat_schema(llm *l, const char *system, const char *user, const char *name,
                    const char *schema, char **answer, llm_usage *u, char *err, size_t errcap);

/* The assistant's content of a chat completion body (len bytes, not
 * necessarily NUL-terminated): choices[0].message.content, malloc'd into
 * *content; usage (numbers or numeric strings) ADDED to *u (may be NULL),
 * with calls + 1. REMEM_ELLM with err naming what is wrong ("the answer is
 * not JSON (truncated?)", "the answer has no choices[0].message.content",
 * the server's own "error" message), or REMEM_ENOMEM. What llm_chat runs on
 * every 2xx answer; separate so that tests and fuzz_llm reach it. */
int llm_parse_completion(const char *body, size_t len, char **content, llm_usage *u, char *err,
                         size_t errcap);

/* The JSON value in an answer: the whole answer, or the first balanced
 * object/array inside prose or a ``` fence. NULL with err when none parses. */
json_t *llm_answer_json(const char *answer, char *err, size_t errcap);
/* A number in [lo, hi] from an answer: a bare number, a JSON number or
 * numeric string (also under a key such as "rating"), "7/10", "Rating: 7".
 * Returns 0 or non-zero with err. */
int llm_answer_number(const char *answer, double lo, double hi, double *out, char *err,
                      size_t errcap);
/* A string field of the answer's JSON object (the first of keys, a
 * NULL-terminated list, present as a string or number), malloc'd; NULL
 * when the answer has no JSON object or none of the keys. For the prose
 * beside a structured answer ("explanation", "reason"). */
char *llm_answer_string(const char *answer, const char *const *keys);

#endif
