/*
 * fewshot.c: seed 000's few-shot block, the replay memory's way into the
 * agent's prompt. The decisions are decision.similar's (the situation
 * query, 2n candidates, reward >= 0.05, best n); each one whose episode
 * has human feedback (the memory "fb_{episode}") carries it. The bytes
 * are the seed's:
 *
 *   --- PAST EXPERIENCE & HUMAN VERIFICATION ---
 *   - Action Taken: [COMMUNICATE] on RELATIONSHIPS
 *   Agent's Initial Reasoning: A quick call prevents relationship erosion...
 *   HUMAN FEEDBACK: Rated 8/10. Notes: Partner appreciated the transparency.
 *
 * lines joined by "\n", no newline at the end, and "" when no decision
 * qualifies (so a prompt template can drop the section). The action and
 * domain are upper-cased; the reasoning is the decision's whole reasoning.
 * A renderer for the prompt formats table (src/prompt/) as well as the
 * "fewshot" operation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experience/experience.h"

/* The live feedback memory of episode ep in ns, as parsed metadata, or
 * NULL (none, or not a live feedback). Store errors are returned. */
static int episode_feedback(remem *db, const char *ns, const char *ep, json_t **meta) {
    *meta = NULL;
    if (!ep || !*ep) return REMEM_OK;
    size_t len = strlen(ep) + 4;
    char *id = malloc(len);
    if (!id) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    snprintf(id, len, "fb_%s", ep);
    remem_record *r = NULL;
    int rc = remem_get(db, ns, id, &r);
    free(id);
    if (rc == REMEM_ENOTFOUND || rc == REMEM_EINVAL) { /* EINVAL: an id too long to exist */
        eng_ok(db);
        return REMEM_OK;
    }
    if (rc) return rc;
    const remem_memory *m = remem_record_memory(r);
    if (m->kind && !strcmp(m->kind, "feedback") && !m->invalidated_at &&
        strcmp(m->tier ? m->tier : "", "archived") && m->metadata) {
        *meta = json_loads(m->metadata, 0, NULL);
        if (!json_is_object(*meta)) {
            json_decref(*meta);
            *meta = NULL;
        }
    }
    remem_record_free(r);
    return REMEM_OK;
}

int exp_fewshot_text(remem *db, const char *ns, const char *title, json_t *metrics, int n,
                     char **text, json_t **decisions) {
    json_t *ds = NULL;
    *text = NULL;
    int rc = exp_similar_decisions(db, ns, title, metrics, n, &ds, NULL);
    if (rc) return rc;
    strbuf b;
    sb_init(&b);
    if (json_array_size(ds)) sb_puts(&b, "--- PAST EXPERIENCE & HUMAN VERIFICATION ---");
    size_t i;
    json_t *d;
    json_array_foreach(ds, i, d) {
        json_t *fb = NULL;
        rc = episode_feedback(db, ns, json_string_value(json_object_get(d, "episode_id")), &fb);
        if (rc) break;
        sb_puts(&b, "\n- Action Taken: [");
        exp_upper(json_string_value(json_object_get(d, "action")), &b);
        sb_puts(&b, "] on ");
        exp_upper(json_string_value(json_object_get(d, "domain")), &b);
        sb_puts(&b, "\nAgent's Initial Reasoning: ");
        sb_puts(&b, json_string_value(json_object_get(d, "reasoning")));
        if (fb) {
            json_t *notes = json_object_get(fb, "notes");
            sb_puts(&b, "\nHUMAN FEEDBACK: Rated ");
            exp_render_value(json_object_get(fb, "rating"), &b);
            sb_printf(&b, "/10. Notes: %s", json_is_string(notes) ? json_string_value(notes) : "");
            json_object_set(d, "feedback", fb);
            json_decref(fb);
        }
    }
    if (!rc && b.oom) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (rc) {
        sb_free(&b);
        json_decref(ds);
        return rc;
    }
    *text = sb_take(&b);
    if (!*text) {
        json_decref(ds);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    if (decisions)
        *decisions = ds;
    else
        json_decref(ds);
    return REMEM_OK;
}

int exp_op_fewshot(remem *db, json_t *args, json_t **result) {
    char *text = NULL;
    json_t *ds = NULL;
    int rc =
        exp_fewshot_text(db, op_str(args, "ns", NULL), op_str(args, "title", ""),
                         json_object_get(args, "metrics"), (int)op_int(args, "n", 3), &text, &ds);
    if (rc) return rc;
    *result =
        json_pack("{s:s, s:s, s:o}", "ns", op_str(args, "ns", ""), "text", text, "decisions", ds);
    free(text);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}
