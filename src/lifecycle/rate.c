/*
 * rate.c: the operations that exist to talk to the LLM (their table,
 * llm_ops, is in llm_ops.c and listed in src/engine/ops.h):
 *   "llm.check"    does the configured endpoint answer, and how fast;
 *   `rate`         seed 001's importance rating (its /rate): the poignancy
 *                  prompt, verbatim, answered 1-10, stored as rating / 10
 *                  with the explanation in metadata.rating;
 *   "consolidate"  an add that first asks whether the new text updates,
 *                  contradicts or repeats what is stored (consolidate.c);
 * and the auto-rate policy that remem_add applies (eng_rate_on_add), with
 * remem_set_rate_later for a server that rates after answering.
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
#include "lifecycle/llm_ops.h"

/* Argument readers of our own, not ops.c's op_str: ops.c lists this
 * file's operations, so calling back into it would make the two files a
 * circle (scripts/check_cycles.py). The arguments are already checked. */
static const char *arg_str(json_t *args, const char *key, const char *def) {
    json_t *v = json_object_get(args, key);
    return json_is_string(v) ? json_string_value(v) : def;
}

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

int eng_rate_on_add(remem *db, remem_memory *m, char **meta, int *later) {
    *meta = NULL;
    *later = 0;
    if (m->importance >= 0) return REMEM_OK;
    const cfg_policy *p = eng_policy(db, m->ns);
    if (!eng_llm(db) || !p->auto_rate) {
        /* Seed 001: "if the score is not present ... only relevancy". The
         * kind's default is stored, marked as such, for the metaverse
         * profile to leave out. */
        if (!p->mark_unrated) return REMEM_OK;
        json_t *r = json_pack("{s:s}", "fallback", "kind_default");
        if (!r || !(*meta = with_rating(m->metadata, r)))
            return eng_fail(db, REMEM_ENOMEM, "out of memory");
        m->metadata = *meta;
        return REMEM_OK;
    }
    if (db->rate_later) {
        *later = 1;
        return REMEM_OK;
    }
    double rating;
    char *expl = NULL;
    json_t *r;
    if (rate_text(db, "rate", m->text, &rating, &expl, NULL) == REMEM_OK) {
        m->importance = rating / 10.0;
        r = json_pack("{s:f, s:s?, s:s, s:b}", "rating", rating, "explanation", expl, "model",
                      llm_model(eng_llm(db)), "auto", 1);
    } else {
        r = json_pack("{s:s, s:s}", "fallback", "kind_default", "error", db->err);
    }
    free(expl);
    eng_ok(db);
    if (!r || !(*meta = with_rating(m->metadata, r)))
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    m->metadata = *meta;
    return REMEM_OK;
}

void remem_set_rate_later(remem *db, remem_rate_later_fn fn, void *ctx) {
    if (!db) return;
    db->rate_later = fn;
    db->rate_later_ctx = ctx;
}

int op_rate(remem *db, json_t *args, json_t **result) {
    const char *ns = arg_str(args, "ns", NULL), *id = arg_str(args, "id", NULL);
    const char *text = arg_str(args, "text", NULL);
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
    const char *kind = m ? m->kind : arg_str(args, "kind", "observation");
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
        snprintf(line, sizeof line, "rated %g/10: importance %.2f%s%.600s%s", rating, importance,
                 expl ? " (" : "", expl ? expl : "", expl ? ")" : "");
    else
        snprintf(line, sizeof line, "no LLM configured: importance %.2f (%s)", importance,
                 given ? "the given value" : "the kind's default");
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
int op_llm_check(remem *db, json_t *args, json_t **result) {
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
