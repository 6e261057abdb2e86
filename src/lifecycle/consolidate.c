/*
 * consolidate.c: "consolidate", an add that keeps a namespace consistent
 * (issue 9; what mem0 and Graphiti users ask for). In order:
 *   1. an exact duplicate (the same normalised text) folds into the stored
 *      memory as remem_add folds it, with no LLM call;
 *   2. no LLM configured: a plain add (the exact path only; the answer says
 *      "fallback": "exact_only");
 *   3. the k most similar memories above the threshold (cosine similarity)
 *      are shown to the LLM with the new text, numbered 1..n: the model
 *      sees small integers, never ids, so it cannot name a memory that was
 *      not shown. None above the threshold: a plain add, no LLM call;
 *   4. the model answers per item UPDATE (merge into it: a new text, the
 *      before kept in history), INVALIDATE (contradicted: invalidated with
 *      superseded_by the new memory, never deleted) or NOOP, and whether
 *      the new text is added ("new": "ADD" or "NOOP").
 * The whole answer is checked before anything is written: an item number
 * outside 1..n, an unknown action, an UPDATE without text or a malformed
 * answer is REMEM_ELLM naming it, and nothing changes. The writes are then
 * updates, the add, the invalidations, each its own transaction (the public
 * write calls), so history shows each step.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/engine.h"
#include "lifecycle/llm_ops.h"
#include "util/utf8.h"
#include "util/util.h"

/* Argument readers (not ops.c's: see rate.c). */
static const char *arg_str(json_t *args, const char *key) {
    json_t *v = json_object_get(args, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}
static double arg_num(json_t *args, const char *key, double def) {
    json_t *v = json_object_get(args, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

enum { ACT_NOOP, ACT_UPDATE, ACT_INVALIDATE };

typedef struct shown {
    char *id, *text;
    int action;
    const char *merged; /* UPDATE's text, inside the answer's JSON */
} shown;

static int is_dup(remem *db, const char *ns, const char *text, int *dup) {
    char *norm = util_normalize_text(text);
    if (!norm) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    int64_t rowid = 0;
    int rc = store_find_dup(db->st, ns, util_hash64(norm, strlen(norm)), norm, &rowid);
    free(norm);
    if (rc) return eng_store_fail(db, rc);
    *dup = rowid != 0;
    return REMEM_OK;
}

/* The stored memories of ns most similar to text (relevance only). */
static int neighbours(remem *db, const char *ns, const char *text, double threshold, int k,
                      shown **out, size_t *n) {
    remem_result *r = NULL;
    *out = NULL;
    *n = 0;
    int rc = eng_similar(db, &ns, text, k, threshold, NULL, &r);
    if (rc || !r) return rc;
    *out = calloc(r->n ? r->n : 1, sizeof **out);
    if (!*out) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < r->n; i++) {
        if (r->hits[i].similarity < threshold) continue;
        shown *s = &(*out)[(*n)++];
        s->id = strdup(r->hits[i].mem.id);
        s->text = strdup(r->hits[i].mem.text);
        if (!s->id || !s->text) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    remem_result_free(r);
    return rc;
}

static void shown_free(shown *s, size_t n) {
    for (size_t i = 0; s && i < n; i++) free(s[i].id), free(s[i].text);
    free(s);
}

static char *prompt_for(const shown *s, size_t n, const char *text) {
    strbuf b;
    sb_init(&b);
    sb_puts(&b, "You keep an agent's memory consistent. A new fact has arrived; below are the "
                "stored memories most similar to it, numbered.\n\nStored memories:\n");
    for (size_t i = 0; i < n; i++) sb_printf(&b, "%zu. %s\n", i + 1, s[i].text);
    sb_printf(&b, "\nNew fact: %s\n\n", text);
    sb_puts(&b, "For each stored memory choose one action:\n"
                "- UPDATE: the new fact adds to or refines it; give the merged text in \"text\".\n"
                "- INVALIDATE: the new fact contradicts it; the new fact replaces it.\n"
                "- NOOP: it stays as it is.\n"
                "Then say whether the new fact is stored as a memory of its own: \"new\": \"ADD\" "
                "(it holds something none of them does, or it replaces one you INVALIDATE) or "
                "\"NOOP\" (it is already there, or an UPDATE took it in).\n"
                "Answer with one JSON object only, naming memories by the numbers above:\n"
                "{\"items\": [{\"i\": 1, \"action\": \"UPDATE\", \"text\": \"...\"}, "
                "{\"i\": 2, \"action\": \"NOOP\"}], \"new\": \"ADD\"}");
    return sb_take(&b);
}

/* An item number: an integer or a numeric string; 0 when neither. */
static long item_number(json_t *v) {
    if (json_is_integer(v)) return (long)json_integer_value(v);
    if (json_is_real(v) && json_real_value(v) == (long)json_real_value(v))
        return (long)json_real_value(v);
    if (json_is_string(v)) {
        const char *p = json_string_value(v);
        while (*p == '#' || isspace((unsigned char)*p)) p++;
        char *end;
        long x = strtol(p, &end, 10);
        return end != p && *end == '\0' ? x : 0;
    }
    return 0;
}

/* Read the model's answer into s[].action/merged and *add. REMEM_ELLM
 * with the message naming the first problem. */
static int read_answer(remem *db, json_t *j, shown *s, size_t n, int *add) {
    json_t *items = json_object_get(j, "items"), *nw = json_object_get(j, "new");
    if (json_is_array(j)) items = j, nw = NULL;
    if (!items && !nw)
        return eng_fail(db, REMEM_ELLM,
                        "consolidate: the model's answer has neither \"items\" nor \"new\"");
    if (items && !json_is_array(items))
        return eng_fail(db, REMEM_ELLM, "consolidate: the model's \"items\" is not a list");
    int any_invalidate = 0, explicit_add = -1;
    size_t k;
    json_t *it;
    json_array_foreach(items, k, it) {
        json_t *a = json_object_get(it, "action");
        if (!json_is_object(it) || !json_is_string(a))
            return eng_fail(db, REMEM_ELLM,
                            "consolidate: item %zu of the model's answer has no \"action\"", k + 1);
        const char *act = json_string_value(a);
        long i = item_number(json_object_get(it, "i"));
        if (!strcasecmp(act, "ADD") && i == 0) { /* mem0's shape: the new fact's own row */
            explicit_add = 1;
            continue;
        }
        if (i < 1 || (size_t)i > n)
            return eng_fail(db, REMEM_ELLM,
                            "consolidate: the model named memory %ld, but only 1-%zu were shown", i,
                            n);
        shown *t = &s[i - 1];
        if (t->action != ACT_NOOP || t->merged)
            return eng_fail(db, REMEM_ELLM, "consolidate: the model named memory %ld twice", i);
        if (!strcasecmp(act, "UPDATE")) {
            json_t *tx = json_object_get(it, "text");
            if (!json_is_string(tx) || util_utf8_blank(json_string_value(tx)))
                return eng_fail(db, REMEM_ELLM,
                                "consolidate: the model's UPDATE of memory %ld has no \"text\"", i);
            t->action = ACT_UPDATE;
            t->merged = json_string_value(tx);
        } else if (!strcasecmp(act, "INVALIDATE") || !strcasecmp(act, "DELETE")) {
            t->action = ACT_INVALIDATE; /* mem0 says DELETE; remem never deletes */
            any_invalidate = 1;
        } else if (!strcasecmp(act, "NOOP") || !strcasecmp(act, "NONE") ||
                   !strcasecmp(act, "ADD")) {
            t->action = ACT_NOOP;
            if (!strcasecmp(act, "ADD")) explicit_add = 1;
        } else {
            return eng_fail(db, REMEM_ELLM,
                            "consolidate: unknown action \"%.40s\" for memory %ld (ADD, UPDATE, "
                            "INVALIDATE or NOOP)",
                            act, i);
        }
    }
    if (nw) {
        const char *v = json_is_string(nw) ? json_string_value(nw) : "";
        if (json_is_boolean(nw))
            explicit_add = json_is_true(nw);
        else if (!strcasecmp(v, "ADD"))
            explicit_add = 1;
        else if (!strcasecmp(v, "NOOP") || !strcasecmp(v, "NONE"))
            explicit_add = explicit_add == 1 ? 1 : 0;
        else
            return eng_fail(db, REMEM_ELLM, "consolidate: the model's \"new\" is not ADD or NOOP");
    }
    /* A replaced memory needs its replacement. */
    *add = any_invalidate || explicit_add == 1;
    return REMEM_OK;
}

static int add_new(remem *db, json_t *args, char *id, size_t cap, int *outcome) {
    remem_memory m;
    remem_memory_init(&m);
    m.ns = arg_str(args, "ns");
    m.text = arg_str(args, "text");
    m.kind = arg_str(args, "kind");
    m.importance = arg_num(args, "importance", -1);
    json_t *meta = json_object_get(args, "metadata");
    char *ms = meta ? json_dumps(meta, JSON_COMPACT) : NULL;
    m.metadata = ms;
    int rc = meta && !ms ? eng_fail(db, REMEM_ENOMEM, "out of memory")
                         : remem_add(db, &m, id, cap, outcome);
    free(ms);
    return rc;
}

static const char *outcome_name(int o) {
    return o == REMEM_DUPLICATE ? "duplicate" : o == REMEM_UPSERTED ? "upserted" : "added";
}

int op_consolidate(remem *db, json_t *args, json_t **result) {
    const char *ns = arg_str(args, "ns"), *text = arg_str(args, "text");
    double threshold = arg_num(args, "threshold", 0.5);
    int k = (int)arg_num(args, "k", 5), dup = 0, outcome = 0, add = 0;
    char id[64] = "";
    int rc = eng_need_open(db);
    if (rc || (rc = eng_check_str(db, "text", text, 65536))) return rc;
    if (eng_memory_off(db, ns)) { /* accepted and dropped, as an add is: nothing to ask */
        *result = json_pack("{s:s, s:n, s:s, s:[], s:s, s:s}", "ns", ns, "id", "outcome", "dropped",
                            "actions", "memory", "off", "text", "memory is off: nothing stored");
        return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    if ((rc = is_dup(db, ns, text, &dup))) return rc;
    if (dup || !eng_llm(db)) {
        if ((rc = add_new(db, args, id, sizeof id, &outcome))) return rc;
        char line[160];
        snprintf(line, sizeof line, "%s %s%s", outcome_name(outcome), id,
                 dup ? " (an exact duplicate: no LLM call)"
                     : " (no LLM configured: only exact duplicates fold)");
        *result = json_pack("{s:s, s:s, s:s, s:[], s:s}", "ns", ns, "id", id, "outcome",
                            outcome_name(outcome), "actions", "text", line);
        if (*result && !dup) json_object_set_new(*result, "fallback", json_string("exact_only"));
        if (*result && dup) json_object_set_new(*result, "llm_calls", json_integer(0));
        return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    shown *s = NULL;
    size_t n = 0;
    char *prompt = NULL, *answer = NULL;
    json_t *j = NULL, *actions = json_array();
    llm_usage u = {0};
    if ((rc = neighbours(db, ns, text, threshold, k, &s, &n))) goto done;
    if (n == 0) {
        add = 1; /* nothing similar: nothing to ask */
    } else {
        char err[256] = "";
        if (!(prompt = prompt_for(s, n, text))) {
            rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
            goto done;
        }
        if ((rc = eng_llm_chat(db, "consolidate", NULL, prompt, 1, &answer, &u))) goto done;
        if (!(j = llm_answer_json(answer, err, sizeof err))) {
            rc = eng_fail(db, REMEM_ELLM, "consolidate: %s", err);
            goto done;
        }
        if ((rc = read_answer(db, j, s, n, &add))) goto done;
    }
    /* Everything is checked: write. */
    for (size_t i = 0; i < n && !rc; i++) {
        if (s[i].action != ACT_UPDATE) continue;
        remem_patch p;
        remem_patch_init(&p);
        p.fields = REMEM_SET_TEXT;
        p.text = s[i].merged;
        p.actor = "consolidate";
        rc = remem_update(db, ns, s[i].id, &p);
        if (!rc)
            json_array_append_new(actions, json_pack("{s:s, s:s, s:s}", "id", s[i].id, "action",
                                                     "UPDATE", "text", s[i].merged));
    }
    if (!rc && add) rc = add_new(db, args, id, sizeof id, &outcome);
    for (size_t i = 0; i < n && !rc; i++) {
        if (s[i].action != ACT_INVALIDATE) continue;
        rc = remem_invalidate(db, ns, s[i].id, id, "consolidate");
        if (!rc)
            json_array_append_new(actions, json_pack("{s:s, s:s, s:s}", "id", s[i].id, "action",
                                                     "INVALIDATE", "superseded_by", id));
    }
    if (rc) goto done;
    for (size_t i = 0; i < n; i++)
        if (s[i].action == ACT_NOOP)
            json_array_append_new(actions,
                                  json_pack("{s:s, s:s}", "id", s[i].id, "action", "NOOP"));
    size_t nup = 0, ninv = 0;
    for (size_t i = 0; i < n; i++)
        nup += s[i].action == ACT_UPDATE, ninv += s[i].action == ACT_INVALIDATE;
    const char *oc = add ? outcome_name(outcome) : nup ? "updated" : "noop";
    char line[256];
    snprintf(line, sizeof line, "%s%s%s: %zu similar, %zu updated, %zu invalidated%s", oc,
             add ? " " : "", add ? id : "", n, nup, ninv,
             n ? "" : " (nothing similar: no LLM call)");
    *result = json_pack("{s:s, s:s?, s:s, s:O, s:I, s:s}", "ns", ns, "id", add ? id : NULL,
                        "outcome", oc, "actions", actions, "similar", (json_int_t)n, "text", line);
    if (*result) json_object_set_new(*result, "llm", eng_llm_answer(db, &u));
    if (!*result) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
done:
    json_decref(actions);
    json_decref(j);
    free(answer);
    free(prompt);
    shown_free(s, n);
    return rc;
}
