/*
 * plan.c: seed 001's /plan. remem recalls the context of a goal (with the
 * namespace's profile), asks the LLM for a short plan, and stores it as
 * kind `plan` in long-term memory (seed 001: `added to LTM`) with links to
 * the memories it was shown. A plan needs a model: without one the
 * operation refuses, REMEM_EUNSUPPORTED "planning needs an LLM: set
 * REMEM_LLM_URL". There is no fallback: a made-up plan would be a lie.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/answers.h"
#include "lifecycle/lifecycle.h"

int lc_op_plan(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    const char *goal = op_str(args, "goal", NULL);
    const cfg_policy *p = lc_policy(db, ns);
    llm *lm = lc_llm(db);
    int rc = REMEM_OK;
    if (!lm) return eng_fail(db, REMEM_EUNSUPPORTED, "planning needs an LLM: set REMEM_LLM_URL");
    remem_query q;
    remem_query_init(&q);
    const char *nss[1] = {ns};
    q.text = goal;
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.k = (int)op_int(args, "k", 10);
    q.profile = p->profile;
    q.no_touch = 1;
    remem_result *res = NULL;
    char *answer = NULL, *text = NULL, *links = NULL, err[512];
    const char **ids = NULL;
    llm_usage u = {0};
    strbuf b;
    sb_init(&b);
    if ((rc = remem_recall(db, &q, &res))) goto done;
    ids = calloc(res->n ? res->n : 1, sizeof *ids);
    if (!ids) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    sb_printf(&b, "Goal: %s\n\nWhat the agent remembers:\n", goal);
    for (size_t i = 0; i < res->n; i++) {
        sb_printf(&b, "%zu. %s\n", i + 1, res->hits[i].mem.text);
        ids[i] = res->hits[i].mem.id;
    }
    if (res->n == 0) sb_puts(&b, "(nothing)\n");
    sb_puts(&b,
            "\nWrite a short plan (at most 5 steps) that reaches the goal, consistent with what "
            "the agent remembers.\nAnswer in JSON: {\"plan\": [\"step\", \"step\"]}");
    char *prompt = sb_take(&b);
    if (!prompt) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    rc = lc_chat(db, "plan", "You plan an agent's next steps. Answer only with the JSON asked for.",
                 prompt, 1, &answer, &u);
    free(prompt);
    if (rc) goto done;
    if (!(text = answer_plan(goal, answer, err, sizeof err))) {
        rc = eng_fail(db, REMEM_ELLM, "plan: the model's answer is not a plan: %s: nothing written",
                      err);
        goto done;
    }
    links = lc_ids_json(ids, res->n);
    char *meta = lc_json_text(
        json_pack("{s:s, s:s}", "goal", goal, "model", llm_model(lm) ? llm_model(lm) : ""));
    if (!links || !meta) {
        free(meta);
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    remem_memory pm;
    remem_memory_init(&pm);
    pm.ns = ns;
    pm.kind = "plan";
    pm.tier = "long";
    pm.text = text;
    pm.importance = op_num(args, "importance", -1);
    pm.metadata = meta;
    pm.links = res->n ? links : NULL;
    char id[1][32];
    rc = lc_write(db, ns, &pm, 1, id, NULL, 0, "plan");
    free(meta);
    if (rc) goto done;
    *result = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s}", "ns", ns, "id", id[0], "goal", goal,
                        "plan", text, "links", json_loads(links, 0, NULL), "llm",
                        lc_llm_json(lm, &u), "text", text);
    if (!*result) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
done:
    sb_free(&b);
    free(answer);
    free(text);
    free(links);
    free(ids);
    remem_result_free(res);
    return rc;
}
