/*
 * env.c: where the lifecycle learns a namespace's policy and the LLM it
 * may use: the policy from the configuration file (eng_policy, policy.c),
 * the LLM from the handle (eng_llm, llm_glue.c: remem_options.llm_* or
 * $REMEM_LLM_*), each call through eng_llm_chat so that the tokens are
 * counted under the operation's name. Kept in one file so every operation
 * reads them the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/lifecycle.h"

const cfg_policy *lc_policy(remem *db, const char *ns) { return eng_policy(db, ns); }

llm *lc_llm(remem *db) { return eng_llm(db); }

json_t *lc_llm_json(const llm *l, const llm_usage *u) {
    return json_pack("{s:s, s:I, s:I, s:I}", "model", llm_model(l) ? llm_model(l) : "",
                     "prompt_tokens", (json_int_t)u->prompt_tokens, "completion_tokens",
                     (json_int_t)u->completion_tokens, "calls", (json_int_t)u->calls);
}

int lc_chat(remem *db, const char *op, const char *system, const char *user, int json_mode,
            char **answer, llm_usage *u) {
    *answer = NULL;
    return eng_llm_chat(db, op, system, user, json_mode, answer, u);
}
