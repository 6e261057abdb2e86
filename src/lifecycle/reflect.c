/*
 * reflect.c: reflection (seeds 001 and 004, after the Generative Agents
 * paper). From the namespace's recent memories the LLM proposes salient
 * questions; remem recalls context for each; the LLM answers with insights
 * citing the numbered statements it was shown; each insight is stored as
 * kind "reflection" (importance: the policy's reflection_importance, seed
 * 004's 0.95) with links to its evidence. The model only ever sees small
 * integers, never ids, so a link always names a memory that exists; a
 * number it invents is dropped and counted.
 *
 * Without an LLM the named fallback "extractive" runs instead: the
 * dominant cluster of the recent memories (extractive_cluster), stored as
 * its most central statement with links to the whole cluster. It quotes;
 * it never makes up an insight.
 *
 * Triggers (policy): the importance accumulated since the last reflection
 * (on the paper's 1-10 scale: the sum of importance x 10) reaching
 * reflection_importance_sum (150), or reflection_every memories (seed 004:
 * 10). With reflection_auto the engine's after-add hook reflects when one
 * fires; a reflection is not counted, so it never triggers itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/answers.h"
#include "lifecycle/extractive.h"
#include "lifecycle/lifecycle.h"

/* The lifecycle's own products do not count towards the next reflection,
 * nor do static or archived memories. */
static int counts(const char *kind, const char *tier) {
    return strcmp(kind, "reflection") && strcmp(kind, "summary") && strcmp(kind, "plan") &&
           strcmp(kind, "static") && strcmp(tier, "archived") && strcmp(tier, "static");
}

int lc_reflect_since(remem *db, const char *ns, const cfg_policy *p, lc_since *out) {
    memset(out, 0, sizeof *out);
    /* A walk over the namespace's cached rows, copying nothing: with
     * reflection.auto this runs after every add. */
    int rc = eng_need_open(db);
    if (rc) return rc;
    ns_cache *c = cache_get(db, ns, &rc);
    if (!c && rc) return rc;
    int64_t last = 0;
    for (size_t i = 0; c && i < c->n; i++) {
        const remem_memory *m = &c->rows[i].m;
        if (!m->invalidated_at && m->kind && !strcmp(m->kind, "reflection") &&
            c->rows[i].rowid > last)
            last = c->rows[i].rowid;
    }
    for (size_t i = 0; c && i < c->n; i++) {
        const remem_memory *m = &c->rows[i].m;
        if (m->invalidated_at || c->rows[i].rowid <= last) continue;
        if (!counts(m->kind ? m->kind : "observation", m->tier ? m->tier : "short")) continue;
        out->observations++;
        out->importance_sum += m->importance * 10;
    }
    cache_put(db, c);
    if (!p->reflection_enabled) return REMEM_OK;
    if (p->reflection_every > 0 && out->observations >= p->reflection_every)
        out->trigger = "observations";
    else if (p->reflection_importance_sum > 0 &&
             out->importance_sum >= p->reflection_importance_sum - 1e-9)
        out->trigger = "importance";
    out->due = out->trigger != NULL;
    return REMEM_OK;
}

static json_t *since_json(const lc_since *s, const cfg_policy *p) {
    return json_pack("{s:I, s:f, s:b, s:o, s:I, s:f}", "observations", (json_int_t)s->observations,
                     "importance_sum", s->importance_sum, "due", s->due, "trigger",
                     s->trigger ? json_string(s->trigger) : json_null(), "every",
                     (json_int_t)p->reflection_every, "importance_threshold",
                     p->reflection_importance_sum);
}

typedef struct reflect_args {
    const char *ns;
    size_t recent, questions, insights, evidence_k;
    double importance, similarity;
    const char *profile;
} reflect_args;

/* ctx: non-NULL when the policy reads short-term memories only (seed
 * 001 reflects "from recent memory", its STM). */
static int keep_recent(const remem_memory *m, void *ctx) {
    const char *t = m->tier ? m->tier : "short";
    if (ctx) return !strcmp(t, "short");
    return strcmp(t, "archived") && strcmp(t, "static");
}

/* The last a->recent memories of the namespace (not static, not archived). */
static int recent_memories(remem *db, const reflect_args *a, int with_vec, lc_list *l) {
    void *short_only = lc_policy(db, a->ns)->reflect_short_only ? (void *)a : NULL;
    int rc = lc_snapshot(db, a->ns, keep_recent, short_only, with_vec, l);
    if (rc || l->n <= a->recent) return rc;
    size_t drop = l->n - a->recent;
    /* Free the oldest and shift the rest down. */
    lc_list old = *l;
    old.n = drop;
    old.v = malloc(drop * sizeof *old.v);
    if (!old.v) {
        lc_list_free(l);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    memcpy(old.v, l->v, drop * sizeof *old.v);
    lc_list_free(&old);
    memmove(l->v, l->v + drop, a->recent * sizeof *l->v);
    l->n = a->recent;
    return REMEM_OK;
}

/* ---- the extractive fallback ---- */

static int reflect_extractive(remem *db, const reflect_args *a, json_t *stored, json_t **note) {
    lc_list l;
    int rc = recent_memories(db, a, 1, &l);
    if (rc) return rc;
    float *vecs = malloc((l.n ? l.n : 1) * (size_t)(l.dim ? l.dim : 1) * sizeof *vecs);
    size_t *members = malloc((l.n ? l.n : 1) * sizeof *members);
    const char **ids = calloc(l.n ? l.n : 1, sizeof *ids);
    char *links = NULL, *meta = NULL;
    if (!vecs || !members || !ids) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < l.n; i++)
        memcpy(vecs + i * l.dim, l.v[i].vec, (size_t)l.dim * sizeof *vecs);
    size_t nm = 0, central = 0;
    if (extractive_cluster(vecs, l.n, l.dim, a->similarity, members, &nm, &central)) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    if (nm < 2) {
        char t[256];
        snprintf(t, sizeof t,
                 "no two of the %zu recent memories are similar enough (cosine >= %g): nothing "
                 "to reflect on",
                 l.n, a->similarity);
        *note = json_string(t);
        goto done;
    }
    for (size_t i = 0; i < nm; i++) ids[i] = l.v[members[i]].id;
    links = lc_ids_json(ids, nm);
    meta = lc_json_text(json_pack("{s:s, s:I, s:f}", "method", "extractive", "cluster_size",
                                  (json_int_t)nm, "similarity", a->similarity));
    if (!links || !meta) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    remem_memory r;
    remem_memory_init(&r);
    r.ns = a->ns;
    r.kind = "reflection";
    r.tier = "short";
    r.text = l.v[central].text;
    r.importance = a->importance;
    r.metadata = meta;
    r.links = links;
    char id[1][32];
    if ((rc = lc_write(db, a->ns, &r, 1, id, NULL, 0, "reflect"))) goto done;
    json_array_append_new(stored, json_pack("{s:s, s:s, s:o}", "id", id[0], "text", r.text, "links",
                                            json_loads(links, 0, NULL)));
done:
    free(vecs);
    free(members);
    free(ids);
    free(links);
    free(meta);
    lc_list_free(&l);
    return rc;
}

/* ---- with the LLM ---- */

static const char *SYSTEM =
    "You help an agent reflect on its own memories. Answer only with the JSON asked for.";

static void numbered(strbuf *b, const char *const *texts, size_t n) {
    for (size_t i = 0; i < n; i++) sb_printf(b, "%zu. %s\n", i + 1, texts[i]);
}

typedef struct evidence {
    const char **ids, **texts;
    size_t n;
} evidence;

/* Recall the context of one question: the statements shown to the model. */
static int question_context(remem *db, const reflect_args *a, const char *question,
                            remem_result **res, evidence *ev) {
    remem_query q;
    remem_query_init(&q);
    const char *nss[1] = {a->ns};
    q.text = question;
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.k = (int)a->evidence_k;
    q.profile = a->profile;
    q.no_touch = 1;
    int rc = remem_recall(db, &q, res);
    if (rc) return rc;
    ev->n = 0;
    ev->ids = calloc((*res)->n ? (*res)->n : 1, sizeof *ev->ids);
    ev->texts = calloc((*res)->n ? (*res)->n : 1, sizeof *ev->texts);
    if (!ev->ids || !ev->texts) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < (*res)->n; i++) {
        ev->ids[ev->n] = (*res)->hits[i].mem.id;
        ev->texts[ev->n++] = (*res)->hits[i].mem.text;
    }
    return REMEM_OK;
}

typedef struct insight {
    char *text, *links, *meta;
} insight;

static int reflect_llm(remem *db, llm *lm, llm_usage *u, const reflect_args *a, json_t *stored,
                       json_t *questions_out, json_t **note, int64_t *ignored) {
    lc_list l;
    int rc = recent_memories(db, a, 0, &l);
    if (rc) return rc;
    char *answer = NULL, err[512];
    json_t *qs = NULL;
    insight *ins = NULL;
    size_t nins = 0, capins = 0;
    strbuf b;
    sb_init(&b);
    if (l.n == 0) {
        *note = json_string("no recent memories: nothing to reflect on");
        goto done;
    }
    const char **texts = malloc(l.n * sizeof *texts);
    if (!texts) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < l.n; i++) texts[i] = l.v[i].text;
    sb_puts(&b, "Statements about the agent's recent experience:\n");
    numbered(&b, texts, l.n);
    free(texts);
    sb_printf(&b,
              "\nGiven only the statements above, what are the %zu most salient high-level "
              "questions we can answer about the subjects in the statements?\n"
              "Answer in JSON: {\"questions\": [\"...\"]}",
              a->questions);
    char *prompt = sb_take(&b);
    if (!prompt) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    rc = lc_chat(db, "reflect", SYSTEM, prompt, 1, &answer, u);
    free(prompt);
    if (rc) goto done;
    if (!(qs = answer_questions(answer, a->questions, err, sizeof err))) {
        rc = eng_fail(db, REMEM_ELLM, "reflect: the model's questions are not usable: %s", err);
        goto done;
    }
    free(answer);
    answer = NULL;
    size_t qi;
    json_t *qv;
    json_array_foreach(qs, qi, qv) {
        const char *question = json_string_value(qv);
        json_array_append(questions_out, qv);
        remem_result *res = NULL;
        evidence ev = {0};
        rc = question_context(db, a, question, &res, &ev);
        if (!rc && ev.n) {
            sb_init(&b);
            sb_puts(&b, "Statements:\n");
            numbered(&b, ev.texts, ev.n);
            sb_printf(&b,
                      "\nQuestion: %s\nWhat %zu high-level insights can you infer from the "
                      "statements above that answer the question? Cite the statements each "
                      "insight rests on by their numbers.\n"
                      "Answer in JSON: {\"insights\": [{\"insight\": \"...\", \"evidence\": [1, "
                      "2]}]}",
                      question, a->insights);
            prompt = sb_take(&b);
            rc = prompt ? lc_chat(db, "reflect", SYSTEM, prompt, 1, &answer, u)
                        : eng_fail(db, REMEM_ENOMEM, "out of memory");
            free(prompt);
            answer_insight *got = NULL;
            size_t ngot = 0;
            if (!rc &&
                answer_insights(answer, ev.n, a->insights, &got, &ngot, ignored, err, sizeof err))
                rc =
                    eng_fail(db, REMEM_ELLM, "reflect: the model's insights are not JSON: %s", err);
            for (size_t k = 0; !rc && k < ngot; k++) {
                const char **link = calloc(got[k].n_cites, sizeof *link);
                if (!link) {
                    rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
                    break;
                }
                for (size_t z = 0; z < got[k].n_cites; z++) link[z] = ev.ids[got[k].cites[z]];
                if (nins == capins) {
                    capins = capins ? capins * 2 : 8;
                    insight *v = realloc(ins, capins * sizeof *v);
                    if (!v)
                        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
                    else
                        ins = v;
                }
                if (!rc) {
                    insight *x = &ins[nins++];
                    x->text = strdup(got[k].text);
                    x->links = lc_ids_json(link, got[k].n_cites);
                    x->meta = lc_json_text(json_pack("{s:s, s:s, s:s}", "method", "llm", "question",
                                                     question, "model",
                                                     llm_model(lm) ? llm_model(lm) : ""));
                    if (!x->text || !x->links || !x->meta)
                        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
                }
                free(link);
            }
            answer_insights_free(got, ngot);
            free(answer);
            answer = NULL;
        }
        free(ev.ids);
        free(ev.texts);
        remem_result_free(res);
        if (rc) goto done;
    }
    if (nins == 0) {
        rc = eng_fail(db, REMEM_ELLM,
                      "reflect: the model gave no insight citing the statements it was shown: "
                      "nothing written");
        goto done;
    }
    remem_memory *adds = calloc(nins, sizeof *adds);
    char(*ids)[32] = calloc(nins, sizeof *ids);
    if (!adds || !ids) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < nins; i++) {
        remem_memory_init(&adds[i]);
        adds[i].ns = a->ns;
        adds[i].kind = "reflection";
        adds[i].tier = "short";
        adds[i].text = ins[i].text;
        adds[i].importance = a->importance;
        adds[i].metadata = ins[i].meta;
        adds[i].links = ins[i].links;
    }
    if (!rc) rc = lc_write(db, a->ns, adds, nins, ids, NULL, 0, "reflect");
    for (size_t i = 0; !rc && i < nins; i++)
        json_array_append_new(stored,
                              json_pack("{s:s, s:s, s:o}", "id", ids[i], "text", ins[i].text,
                                        "links", json_loads(ins[i].links, 0, NULL)));
    free(adds);
    free(ids);
done:
    for (size_t i = 0; i < nins; i++) {
        free(ins[i].text);
        free(ins[i].links);
        free(ins[i].meta);
    }
    free(ins);
    free(answer);
    json_decref(qs);
    sb_free(&b);
    lc_list_free(&l);
    return rc;
}

/* Reflect in ns; *result as the "reflect" operation answers. method:
 * "auto" (the LLM when one is configured, else "extractive"), "llm",
 * "extractive". */
static int reflect_run(remem *db, const reflect_args *a, const char *method, const lc_since *since,
                       const cfg_policy *p, json_t **result) {
    llm *lm = NULL;
    int rc = REMEM_OK;
    if (strcmp(method, "extractive")) lm = lc_llm(db);
    if (!strcmp(method, "llm") && !lm)
        return eng_fail(db, REMEM_EUNSUPPORTED,
                        "reflect: method \"llm\" needs an LLM: set REMEM_LLM_URL");
    json_t *stored = json_array(), *questions = json_array(), *note = NULL;
    llm_usage u = {0};
    int64_t ignored = 0;
    rc = lm ? reflect_llm(db, lm, &u, a, stored, questions, &note, &ignored)
            : reflect_extractive(db, a, stored, &note);
    if (!rc) {
        char text[512];
        size_t n = json_array_size(stored);
        if (n)
            snprintf(text, sizeof text, "%s: %zu reflection%s stored (%s)", a->ns, n,
                     n == 1 ? "" : "s", lm ? "llm" : "extractive");
        else
            snprintf(text, sizeof text, "%s: %s", a->ns, json_string_value(note));
        *result = json_pack("{s:s, s:b, s:s, s:O, s:o, s:s}", "ns", a->ns, "reflected", n > 0,
                            "method", lm ? "llm" : "extractive", "reflections", stored, "since",
                            since_json(since, p), "text", text);
        if (lm) {
            json_object_set_new(*result, "questions", json_incref(questions));
            json_object_set_new(*result, "llm", lc_llm_json(lm, &u));
            json_object_set_new(*result, "ignored_evidence", json_integer(ignored));
        } else {
            json_object_set_new(*result, "fallback", json_string("extractive"));
        }
    }
    json_decref(stored);
    json_decref(questions);
    json_decref(note);
    return rc;
}

static void args_defaults(reflect_args *a, json_t *args, const cfg_policy *p) {
    a->ns = op_str(args, "ns", NULL);
    a->recent = (size_t)op_int(args, "recent", 100);
    a->questions = (size_t)op_int(args, "questions", 3);
    a->insights = (size_t)op_int(args, "insights", 3);
    a->evidence_k = (size_t)op_int(args, "evidence", 10);
    a->importance =
        op_num(args, "importance", p->reflection_importance > 0 ? p->reflection_importance : 0.95);
    a->similarity = op_num(args, "similarity", 0.3);
    a->profile = p->profile;
}

int lc_op_reflect(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    const cfg_policy *p = lc_policy(db, ns);
    reflect_args a;
    args_defaults(&a, args, p);
    lc_since s;
    int rc = lc_reflect_since(db, ns, p, &s);
    if (rc) return rc;
    if (op_bool(args, "if_due", 0) && !s.due) {
        char text[256];
        snprintf(text, sizeof text,
                 "%s: no reflection due (%lld memories, importance %g since the last one)", ns,
                 (long long)s.observations, s.importance_sum);
        *result = json_pack("{s:s, s:b, s:o, s:s}", "ns", ns, "reflected", 0, "since",
                            since_json(&s, p), "text", text);
        return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    return reflect_run(db, &a, op_str(args, "method", "auto"), &s, p, result);
}

void lc_after_add(remem *db, const char *ns) {
    const cfg_policy *p = lc_policy(db, ns);
    if (!p->reflection_enabled || !p->reflection_auto) return;
    lc_since s;
    if (lc_reflect_since(db, ns, p, &s) == REMEM_OK && s.due) {
        reflect_args a;
        json_t *none = json_object();
        args_defaults(&a, none, p);
        a.ns = ns;
        json_t *res = NULL;
        /* The add is durable already; a failed reflection is retried after
         * the next add, as the trigger still holds. */
        reflect_run(db, &a, "auto", &s, p, &res);
        json_decref(res);
        json_decref(none);
    }
    eng_ok(db);
}
