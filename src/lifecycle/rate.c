/*
 * rate.c: the operations that exist to talk to the LLM, in one table
 * (llm_ops, listed in src/engine/ops.h):
 *   "llm.check"    does the configured endpoint answer, and how fast;
 *   "rate"         seed 001's importance rating (its /rate): the poignancy
 *                  prompt, verbatim, answered 1-10, stored as rating / 10
 *                  with the explanation in metadata.rating;
 *   "consolidate"  an add that first asks whether the new text updates,
 *                  contradicts or repeats what is stored (consolidate.c).
 *
 * With no LLM configured, "rate" uses a named fallback (the kind's default
 * importance, seed 004's values, or the value the caller gives) and says
 * so in its answer; "llm.check" refuses. With an LLM that fails (down,
 * slow, an error status, an answer that is not a rating), the operation
 * fails with the cause and writes nothing: a fallback is for an absent LLM,
 * never a silent stand-in for a broken one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "engine/ops.h"
#include "lifecycle/llm_ops.h"

/* Seed 001's prompt, as its Python concatenation produces it (the missing
 * space before "provide only 1 json" included): the seed's users compare
 * ratings with the ones their own code got, so not a character differs. */
static const char RATE_PROMPT_HEAD[] =
    "On the scale of 1 to 10, where 1 is purely mundane "
    "(e.g., brushing teeth, making bed) and 10 is extremely poignant "
    "(e.g., a break-up, college acceptance, life), rate the likely poignancy of the "
    "following piece of memory.\nMemory: ";
static const char RATE_PROMPT_TAIL[] =
    "\nProvide just your rating a single number rating:<fill_in> and a explanation in JSON "
    "format like this: "
    "{\"explanation\": ...,\"rating\":.. }"
    "provide only 1 json";

char *rate_prompt(const char *memory) {
    size_t n = sizeof RATE_PROMPT_HEAD + strlen(memory) + sizeof RATE_PROMPT_TAIL;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s%s", RATE_PROMPT_HEAD, memory, RATE_PROMPT_TAIL);
    return p;
}

int rate_text(remem *db, const char *op, const char *text, double *rating, char **explanation,
              llm_usage *u) {
    *explanation = NULL;
    char *prompt = rate_prompt(text), *answer = NULL;
    if (!prompt) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    int rc = eng_llm_chat(db, op, NULL, prompt, 1, &answer, u);
    free(prompt);
    if (rc) return rc;
    char err[256] = "";
    if (llm_answer_number(answer, 1, 10, rating, err, sizeof err))
        rc = eng_fail(db, REMEM_ELLM, "%s: %s", op, err);
    else {
        static const char *const keys[] = {"explanation", "reason", "explain", NULL};
        *explanation = llm_answer_string(answer, keys);
    }
    free(answer);
    return rc;
}

/* The memory's metadata object with "rating" set to r (taken), as text. */
static char *with_rating(const char *metadata, json_t *r) {
    json_t *m = metadata ? json_loads(metadata, 0, NULL) : NULL;
    if (!json_is_object(m)) {
        json_decref(m);
        m = json_object();
    }
    json_object_set_new(m, "rating", r);
    char *s = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    return s;
}

static int op_rate(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL), *id = op_str(args, "id", NULL);
    const char *text = op_str(args, "text", NULL);
    json_t *given = json_object_get(args, "importance");
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (!id == !text)
        return eng_fail(db, REMEM_EINVAL,
                        "rate: give either id (with ns: a stored memory) or text (rated, not "
                        "stored)");
    if (id && !ns) return eng_fail(db, REMEM_EINVAL, "rate: id needs ns");
    remem_record *rec = NULL;
    const remem_memory *m = NULL;
    if (id) {
        if ((rc = remem_get(db, ns, id, &rec))) return rc;
        m = remem_record_memory(rec);
        text = m->text;
    }
    const char *kind = m ? m->kind : op_str(args, "kind", "observation");
    double rating = NAN, importance;
    char *expl = NULL;
    llm_usage u = {0};
    json_t *meta_rating, *res;
    if (eng_llm(db)) {
        if ((rc = rate_text(db, "rate", text, &rating, &expl, &u))) goto done;
        importance = rating / 10.0;
        meta_rating = json_pack("{s:f, s:s?, s:s}", "rating", rating, "explanation", expl, "model",
                                llm_model(eng_llm(db)));
        res = json_pack("{s:f, s:f, s:s?, s:o}", "rating", rating, "importance", importance,
                        "explanation", expl, "llm", eng_llm_answer(db, &u));
    } else {
        const char *how = given ? "given" : "kind_default";
        importance = given ? json_number_value(given) : eng_kind_importance(kind);
        meta_rating = json_pack("{s:s}", "fallback", how);
        res = json_pack("{s:f, s:s}", "importance", importance, "fallback", how);
    }
    if (!res || !meta_rating) {
        json_decref(meta_rating);
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    char line[768];
    if (!isnan(rating))
        snprintf(line, sizeof line, "rated %g/10: importance %.2f%s%.600s", rating, importance,
                 expl ? " (" : "", expl ? expl : "");
    else
        snprintf(line, sizeof line, "no LLM configured: importance %.2f (%s)", importance,
                 given ? "the given value" : "the kind's default");
    if (!isnan(rating) && expl) strcat(line, ")");
    if (m) {
        char *meta = with_rating(m->metadata, meta_rating);
        remem_patch p;
        remem_patch_init(&p);
        p.fields = REMEM_SET_IMPORTANCE | REMEM_SET_METADATA;
        p.importance = importance;
        p.metadata = meta;
        p.actor = "rate";
        rc = meta ? remem_update(db, ns, id, &p) : eng_fail(db, REMEM_ENOMEM, "out of memory");
        free(meta);
        if (rc) {
            json_decref(res);
            goto done;
        }
        json_object_set_new(res, "ns", json_string(ns));
        json_object_set_new(res, "id", json_string(id));
    } else {
        json_decref(meta_rating);
    }
    json_object_set_new(res, "text", json_string(line));
    *result = res;
done:
    free(expl);
    remem_record_free(rec);
    return rc;
}

static double ms_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* "llm.check": one tiny chat completion, timed. */
static int op_llm_check(remem *db, json_t *args, json_t **result) {
    (void)args;
    llm *l = eng_llm(db);
    if (!l)
        return eng_fail(db, REMEM_EUNSUPPORTED,
                        "no LLM configured: set REMEM_LLM_URL (e.g. http://127.0.0.1:11434/v1)");
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char *answer = NULL;
    llm_usage u = {0};
    int rc = eng_llm_chat(db, "llm.check", NULL, "Reply with the single word OK.", 0, &answer, &u);
    double ms = ms_since(&t0);
    if (rc) {
        char msg[sizeof db->err];
        snprintf(msg, sizeof msg, "%s", db->err);
        return eng_fail(db, rc, "%s (after %.0f ms)", msg, ms);
    }
    char line[512];
    snprintf(line, sizeof line, "the LLM at %s (model %s) answered in %.0f ms", llm_url(l),
             llm_model(l), ms);
    *result = json_pack("{s:b, s:s, s:s, s:f, s:s%, s:o, s:s}", "ok", 1, "url", llm_url(l), "model",
                        llm_model(l), "ms", ms, "answer", answer,
                        strlen(answer) > 200 ? (size_t)200 : strlen(answer), "llm",
                        eng_llm_answer(db, &u), "text", line);
    free(answer);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

const engine_op llm_ops[] = {
    {{"llm.check", "admin",
      "Whether the configured LLM endpoint answers, and how fast (one tiny chat completion).",
      "{\"type\":\"object\",\"properties\":{}}"},
     op_llm_check},
    {{"rate", "write",
      "Rate a memory's importance with seed 001's poignancy prompt (1-10, stored as importance "
      "= rating/10, the explanation in metadata.rating); no LLM: the kind's default or the "
      "given importance.",
      "{\"type\":\"object\",\"x-positional\":[\"id\"],\"properties\":{"
      "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace of the memory "
      "(required with id)\"},"
      "\"id\":{\"type\":\"string\",\"minLength\":1,\"description\":\"a stored memory to rate: "
      "its importance becomes rating/10\"},"
      "\"text\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":65536,\"description\":\"a "
      "text to rate without storing anything (instead of id)\"},"
      "\"kind\":{\"type\":\"string\",\"minLength\":1,\"description\":\"with text and no LLM: "
      "the kind whose default importance is answered (observation)\"},"
      "\"importance\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1,\"description\":\"with "
      "no LLM configured: the importance to use instead of the kind's default\"}}}"},
     op_rate},
    {{"consolidate", "write",
      "Add a text after checking it against the most similar memories: exact duplicates fold "
      "without the LLM; otherwise the LLM says per memory UPDATE (merge), INVALIDATE "
      "(superseded by the new one), NOOP, and whether to ADD the new text.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"text\"],\"properties\":{"
      "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace\"},"
      "\"text\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":65536,\"description\":\"the "
      "new fact\"},"
      "\"kind\":{\"type\":\"string\",\"minLength\":1,\"description\":\"kind of the new memory "
      "(observation)\"},"
      "\"importance\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1,\"description\":"
      "\"importance of the new memory (the kind's default)\"},"
      "\"metadata\":{\"type\":\"object\",\"description\":\"metadata of the new memory\"},"
      "\"threshold\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1,\"description\":\"cosine "
      "similarity from which a stored memory is shown to the LLM (0.5)\"},"
      "\"k\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":20,\"description\":\"at most this "
      "many similar memories are shown (5)\"}}}"},
     op_consolidate},
};
const size_t llm_ops_n = sizeof llm_ops / sizeof llm_ops[0];
