/*
 * hints.c: "lesson.hints", the retrieval of lessons before a run (pre-run)
 * or after a failure (on-error). Two lanes:
 *   strict    lessons of the run's own domain key, ranked first;
 *   transfer  lessons of other domains, only when the policy allows it
 *             ("always", or "auto" when the strict lane is weak), each
 *             score multiplied down, at most LSN_TRANSFER_ON_ERROR of them
 *             per on-error retrieval, and in "auto" only with evidence
 *             (the failure's own fingerprint, or a promoted lesson).
 * A hint's score is a weighted mean of the components the query provides
 * (docs/lessons.md gives the weights): fingerprint match, tag overlap,
 * text similarity, reliability and recency. Suppressed and archived
 * lessons never come back; of two conflicting lessons only the more
 * reliable does, and the other's loss is counted (repeated losses
 * suppress it). Every returned hint counts as a retrieval, and the
 * retrieval itself is kept (kind "hint_log") for the timeline and for the
 * lane each lesson ran in, all in one transaction.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lessons/lessons.h"

#define W_FP                   0.40
#define W_TAG                  0.15
#define W_TEXT                 0.25
#define W_REL                  0.15
#define W_REC                  0.05
#define RECENCY_HALF_LIFE_DAYS 30.0

typedef struct cand {
    lsn_rec *r;
    int transfer;
    double fp, tag, text, rel, rec, score;
    int dropped;         /* lost a conflict ... */
    const char *lost_to; /* ... to this lesson */
} cand;

static int eligible(const json_t *m) {
    const char *st = lsn_s(m, "status");
    return st && (!strcmp(st, "candidate") || !strcmp(st, "promoted"));
}

static int cand_cmp(const void *a, const void *b) {
    const cand *x = a, *y = b;
    if (x->transfer != y->transfer) return x->transfer - y->transfer;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return strcmp(x->r->id, y->r->id);
}

/* Which of two conflicting candidates stays: the more reliable; then the
 * promoted one; then the higher score; then the older. 1 when a wins. */
static int wins(const cand *a, const cand *b) {
    if (a->rel != b->rel) return a->rel > b->rel;
    int pa = !strcmp(lsn_s(a->r->meta, "status"), "promoted");
    int pb = !strcmp(lsn_s(b->r->meta, "status"), "promoted");
    if (pa != pb) return pa;
    if (a->score != b->score) return a->score > b->score;
    return a->r->created_at <= b->r->created_at;
}

/* The query's unit vector: embedded before the lessons are read, so that
 * their cosines with it come from the stored vectors while the cache is
 * held (lsn_list_opts.sim_to). Nothing is locked while the embedder runs. */
static int query_vector(remem *db, const char *query, float **out) {
    int dim = remem_embedder_dim(db);
    float *v = *out = malloc((size_t)dim * sizeof *v);
    if (!v) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    int rc = remem_embed(db, &query, 1, v);
    if (!rc) eng_normalize_vec(v, dim);
    return rc;
}

/* Cosine similarity of the query with each candidate's rule (clamped at
 * 0): the cosine lsn_list_where computed against the rule's stored vector
 * (one dot product, the SIMD kernel of the vector index), so that only a
 * rule still waiting for its vector goes through the embedder. */
static int similarities(remem *db, const float *qv, cand *c, size_t n) {
    int dim = remem_embedder_dim(db);
    size_t ne = 0;
    const char **texts = calloc(n + 1, sizeof *texts);
    size_t *slot = calloc(n + 1, sizeof *slot);
    for (size_t i = 0; texts && slot && i < n; i++)
        if (!c[i].r->has_sim) {
            slot[ne] = i;
            texts[ne++] = c[i].r->text;
        }
    float *v = malloc((ne + 1) * (size_t)dim * sizeof *v);
    int rc = texts && slot && v ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (!rc && ne) rc = remem_embed(db, texts, ne, v);
    for (size_t j = 0; !rc && j < ne; j++) {
        float *x = v + j * (size_t)dim;
        eng_normalize_vec(x, dim);
        c[slot[j]].r->sim = flat_dot(qv, x, dim);
    }
    for (size_t i = 0; !rc && i < n; i++) c[i].text = c[i].r->sim > 0 ? c[i].r->sim : 0;
    free(texts);
    free(slot);
    free(v);
    return rc;
}

/* The query's tags: the tool's, the given ones, and those of the newest
 * error event with the query's fingerprint (its channel). The domain tag
 * is left out: the lanes already decide by domain. */
static json_t *query_tags(json_t *args, lsn_list *ev, const char *fp) {
    json_t *t = json_array();
    if (lsn_s(args, "tool")) json_array_append_new(t, json_sprintf("tool:%s", lsn_s(args, "tool")));
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(args, "tag"), i, e) json_array_append(t, e);
    for (size_t k = ev->n; fp && k-- > 0;) {
        if (strcmp(lsn_s(ev->v[k].meta, "fingerprint") ? lsn_s(ev->v[k].meta, "fingerprint") : "",
                   fp))
            continue;
        json_array_foreach(json_object_get(ev->v[k].meta, "tags"), i, e) {
            if (json_is_string(e) && strncmp(json_string_value(e), "domain:", 7) &&
                !lsn_has(t, json_string_value(e)))
                json_array_append(t, e);
        }
        break;
    }
    return t;
}

/* Seed 002: "use deterministic metadata for safety, not model-authored
 * tags as ground truth; treat model tags as soft only". A system tag is
 * one remem derives from facts (tool:, channel:, domain:); any other tag
 * is the caller's (the model's) and weighs CALLER_TAG_WEIGHT of one. */
#define CALLER_TAG_WEIGHT 0.5
static double tag_weight(const char *t) {
    return t && (!strncmp(t, "tool:", 5) || !strncmp(t, "channel:", 8) || !strncmp(t, "domain:", 7))
               ? 1.0
               : CALLER_TAG_WEIGHT;
}

static void score(cand *c, const char *fp, json_t *qtags, int has_text, int64_t now) {
    const json_t *m = c->r->meta;
    double w = W_REL + W_REC, s;
    c->rel = lsn_reliability(m, c->transfer);
    double age_days = (double)(now - c->r->updated_at) / 86400000.0;
    c->rec = pow(0.5, (age_days > 0 ? age_days : 0) / RECENCY_HALF_LIFE_DAYS);
    s = W_REL * c->rel + W_REC * c->rec;
    if (fp) {
        c->fp = lsn_has(json_object_get(m, "fingerprints"), fp);
        s += W_FP * c->fp;
        w += W_FP;
    }
    size_t nt = json_array_size(qtags);
    if (nt) {
        double hit = 0, all = 0;
        for (size_t i = 0; i < nt; i++) {
            const char *t = json_string_value(json_array_get(qtags, i));
            all += tag_weight(t);
            hit += tag_weight(t) * lsn_has(json_object_get(m, "tags"), t);
        }
        c->tag = all > 0 ? hit / all : 0;
        s += W_TAG * c->tag;
        w += W_TAG;
    }
    if (has_text) {
        s += W_TEXT * c->text;
        w += W_TEXT;
    }
    c->score = s / w;
    if (c->transfer) c->score *= LSN_TRANSFER_FACTOR;
}

static json_t *hint_json(const cand *c) {
    return json_pack("{ss ss sf ss ss ss s{sf sf sf sf sf}}", "lesson_id", c->r->id, "lane",
                     c->transfer ? "transfer" : "strict", "score", c->score, "rule_text",
                     c->r->text, "status", lsn_s(c->r->meta, "status"), "domain_key",
                     lsn_s(c->r->meta, "domain_key"), "components", "fingerprint", c->fp, "tags",
                     c->tag, "text", c->text, "reliability", c->rel, "recency", c->rec);
}

/* A pair of candidates (positions i < j in the ranked list) marked as
 * conflicting, by either side. */
typedef struct pair {
    size_t i, j;
} pair;

static int pair_cmp(const void *a, const void *b) {
    const pair *x = a, *y = b;
    if (x->i != y->i) return x->i < y->i ? -1 : 1;
    return x->j < y->j ? -1 : x->j > y->j;
}

/* The conflicting pairs among the n ranked candidates, in rank order of
 * (i, j), each once: a lookup per listed conflict, not a test per pair. */
static pair *conflict_pairs(cand *c, size_t n, size_t *np) {
    json_t *at = json_object();
    size_t cap = 0, k = 0;
    pair *p = NULL;
    for (size_t i = 0; at && i < n; i++) json_object_set_new(at, c[i].r->id, json_integer((json_int_t)i));
    for (size_t i = 0; at && i < n; i++) {
        size_t x;
        json_t *e;
        json_array_foreach(json_object_get(c[i].r->meta, "conflicts_with"), x, e) {
            json_t *pos = json_object_get(at, json_string_value(e));
            if (!pos || (size_t)json_integer_value(pos) == i) continue;
            if (k == cap) {
                cap = cap ? cap * 2 : 16;
                pair *q = realloc(p, cap * sizeof *q);
                if (!q) goto oom;
                p = q;
            }
            size_t j = (size_t)json_integer_value(pos);
            p[k++] = (pair){i < j ? i : j, i < j ? j : i};
        }
    }
    if (!at) goto oom;
    json_decref(at);
    if (k > 1) qsort(p, k, sizeof *p, pair_cmp);
    size_t m = 0;
    for (size_t x = 0; x < k; x++)
        if (!m || pair_cmp(&p[m - 1], &p[x])) p[m++] = p[x];
    *np = m;
    return p ? p : calloc(1, sizeof *p);
oom:
    json_decref(at);
    free(p);
    return NULL;
}

/* Mark the losers of conflicts among the candidates that passed the
 * score floor (their losses are counted when the retrieval is written).
 * Returns the array of {"lesson_id","lost_to"} (NULL: out of memory). */
static json_t *resolve_conflicts(cand *c, size_t n) {
    size_t np = 0;
    pair *p = conflict_pairs(c, n, &np);
    json_t *out = p ? json_array() : NULL;
    for (size_t k = 0; out && k < np; k++) {
        cand *a = &c[p[k].i], *b = &c[p[k].j];
        if (a->dropped || b->dropped) continue;
        cand *lose = wins(a, b) ? b : a;
        cand *win = lose == a ? b : a;
        lose->dropped = 1;
        lose->lost_to = win->r->id;
        json_array_append_new(out,
                              json_pack("{ss ss}", "lesson_id", lose->r->id, "lost_to", win->r->id));
    }
    free(p);
    return out;
}

/* ---- the writes: counted in the store, as each lesson is now ---- */

/* One lesson's change by this retrieval: a hint counted, or a conflict
 * lost (and the suppression it may bring). */
typedef struct bump {
    const char *id, *lost_to, *run;
    int transfer, hint;
    int64_t now;
    int suppressed; /* set by the write: this loss suppressed it */
    char why[200];
    char actor[512];
} bump;

static int count_hint(bump *u, json_t *m) {
    json_object_set_new(m, "retrieval_count", json_integer(lsn_i(m, "retrieval_count", 0) + 1));
    if (u->transfer)
        json_object_set_new(m, "transfer_retrieval_count",
                            json_integer(lsn_i(m, "transfer_retrieval_count", 0) + 1));
    json_object_set_new(m, "last_retrieved_at", lsn_time_json(u->now));
    return 1;
}

/* A lost conflict; at LSN_CONFLICT_LOSSES losses a lesson still offered
 * (candidate or promoted, not archived) is suppressed, its reason the
 * history row's actor. */
static int count_loss(bump *u, json_t *m, int archived, const char **actor) {
    int64_t losses = lsn_i(m, "conflict_losses", 0) + 1;
    json_object_set_new(m, "conflict_losses", json_integer(losses));
    u->suppressed = 0;
    if (losses < LSN_CONFLICT_LOSSES || archived > 0 || !eligible(m)) return 1;
    snprintf(u->why, sizeof u->why, "lost conflict resolution %lld times (last to %s)",
             (long long)losses, u->lost_to);
    json_t *h = json_pack("{ss ss ss ss so}", "action", "suppress", "from", lsn_s(m, "status"),
                          "to", "suppressed", "reason", u->why, "at", lsn_time_json(u->now));
    if (!h) return REMEM_ENOMEM;
    if (u->run) json_object_set_new(h, "run", json_string(u->run));
    json_object_set_new(m, "status_reason", json_string(u->why));
    json_object_set_new(m, "status", json_string("suppressed"));
    json_t *sh = json_object_get(m, "status_history");
    if (!json_is_array(sh)) json_object_set_new(m, "status_history", sh = json_array());
    json_array_append_new(sh, h);
    snprintf(u->actor, sizeof u->actor, "lesson.hints%s%s%s: suppress: %s", u->run ? " (run " : "",
             u->run ? u->run : "", u->run ? ")" : "", u->why);
    *actor = u->actor;
    u->suppressed = 1;
    return 1;
}

static int apply_bump(void *ctx, json_t *m, int archived, const char **actor) {
    bump *u = ctx;
    return u->hint ? count_hint(u, m) : count_loss(u, m, archived, actor);
}

/* The hint log, written after the lessons' changes: the suppressions
 * they made go into it (and into the answer, log). */
typedef struct log_fill {
    bump *u;
    size_t n;
    json_t *log;
} log_fill;

static int fill_log(void *ctx, json_t *m, int archived, const char **actor) {
    log_fill *f = ctx;
    (void)archived;
    (void)actor;
    json_t *sup = json_array();
    for (size_t i = 0; sup && i < f->n; i++)
        if (f->u[i].suppressed)
            json_array_append_new(sup,
                                  json_pack("{ss ss}", "lesson_id", f->u[i].id, "reason", f->u[i].why));
    if (!sup) return REMEM_ENOMEM;
    json_object_set(m, "suppressed", sup);
    json_object_set_new(f->log, "suppressed", sup);
    return 1;
}

/* The error events with fingerprint ctx (for the query's tags). */
static int has_fp(const json_t *meta, void *ctx) {
    const char *f = lsn_s(meta, "fingerprint");
    return f && !strcmp(f, ctx);
}

/* The lessons offered to this retrieval, in c (room for ls->n): their
 * lane set, before scoring. */
static size_t gather(lsn_list *ls, const char *domain, const char *policy, cand *c) {
    size_t n = 0;
    int want_transfer = strcmp(policy, "off") != 0;
    for (size_t i = 0; i < ls->n; i++) {
        if (!eligible(ls->v[i].meta) || ls->v[i].archived) continue;
        const char *d = lsn_s(ls->v[i].meta, "domain_key");
        int transfer = !d || strcmp(d, domain);
        if (transfer &&
            (!want_transfer || json_is_true(json_object_get(ls->v[i].meta, "transfer_blocked"))))
            continue;
        c[n].r = &ls->v[i];
        c[n++].transfer = transfer;
    }
    return n;
}

/* The hints of the ranked candidates c: the strict lane's best k, then
 * the transfer lane by policy. *weak, *use_transfer: what was decided. */
static json_t *pick(cand *c, size_t n, int k, const char *policy, int on_error, int *weak,
                    int *use_transfer) {
    json_t *hints = json_array();
    size_t n_strict = 0;
    double best = 0;
    for (size_t i = 0; hints && i < n && (int)n_strict < k; i++) {
        if (c[i].transfer || c[i].dropped) continue;
        if (!n_strict) best = c[i].score;
        n_strict++;
        json_array_append_new(hints, hint_json(&c[i]));
    }
    *weak = (int)n_strict < (k < LSN_STRICT_STRONG_N ? k : LSN_STRICT_STRONG_N) ||
            best < LSN_STRICT_STRONG_SCORE;
    *use_transfer = !strcmp(policy, "always") || (!strcmp(policy, "auto") && *weak);
    int quota = on_error ? LSN_TRANSFER_ON_ERROR : LSN_TRANSFER_PRE_RUN, n_transfer = 0;
    for (size_t i = 0; hints && *use_transfer && i < n && n_transfer < quota; i++) {
        if (!c[i].transfer || c[i].dropped) continue;
        /* auto is evidence-gated: the failure's own fingerprint, or a
         * lesson promoted where it was learned. */
        if (!strcmp(policy, "auto") && !c[i].fp &&
            strcmp(lsn_s(c[i].r->meta, "status"), "promoted"))
            continue;
        n_transfer++;
        json_array_append_new(hints, hint_json(&c[i]));
    }
    return hints;
}

/* The retrieval's text: one line, then a line per hint. */
static char *log_text(const json_t *hints, int on_error, const char *domain, const char *policy,
                      int weak) {
    strbuf t;
    sb_init(&t);
    sb_printf(&t, "%s hints for %s (policy %s%s): %zu\n", on_error ? "on-error" : "pre-run", domain,
              policy, weak ? ", strict lane weak" : "", json_array_size(hints));
    size_t i;
    json_t *h;
    json_array_foreach(hints, i, h) {
        sb_printf(&t, "  [%s] %s %.3f %s\n", lsn_s(h, "lane"), lsn_s(h, "lesson_id"),
                  lsn_d(h, "score", 0), lsn_s(h, "rule_text"));
    }
    return sb_take(&t);
}

/* Queue the retrieval's writes: each hint counted, each conflict loss,
 * then the log. u has room for the hints and the losers. */
static int queue_writes(lsn_batch *b, const char *ns, const json_t *hints, const json_t *conflicts,
                        bump *u, log_fill *f, const char *run, int64_t now, const char *lid,
                        const char *text) {
    size_t n = 0, i;
    json_t *h;
    int rc = REMEM_OK;
    json_array_foreach(hints, i, h) {
        u[n] = (bump){.id = lsn_s(h, "lesson_id"), .run = run, .hint = 1, .now = now,
                      .transfer = !strcmp(lsn_s(h, "lane"), "transfer")};
        if (!rc) rc = lsn_batch_change(b, ns, u[n].id, "lesson", NULL, NULL, apply_bump, &u[n]);
        n++;
    }
    json_array_foreach(conflicts, i, h) {
        u[n] = (bump){.id = lsn_s(h, "lesson_id"), .lost_to = lsn_s(h, "lost_to"), .run = run,
                      .now = now};
        if (!rc) rc = lsn_batch_change(b, ns, u[n].id, "lesson", NULL, NULL, apply_bump, &u[n]);
        n++;
    }
    f->u = u;
    f->n = n;
    if (!rc) rc = lsn_batch_change(b, ns, lid, "hint_log", text, f->log, fill_log, f);
    return rc;
}

int lsn_op_hints(remem *db, json_t *args, json_t **result) {
    const char *ns = lsn_s(args, "ns"), *domain = lsn_s(args, "domain");
    const char *policy = lsn_str(args, "policy", "auto"), *run = lsn_s(args, "run");
    const char *task = lsn_s(args, "task"), *error = lsn_s(args, "error");
    const char *fp_arg = lsn_s(args, "fingerprint");
    int k = (int)lsn_i(args, "k", 3);
    int on_error = error || fp_arg;
    char fpbuf[20];
    const char *fp = fp_arg;
    if (!fp && error) {
        char *norm = lsn_normalise(error);
        if (!norm) return eng_fail(db, REMEM_ENOMEM, "out of memory");
        lsn_fingerprint_of(norm, fpbuf);
        free(norm);
        fp = fpbuf;
    }
    strbuf q;
    sb_init(&q);
    if (task) sb_puts(&q, task);
    if (error) sb_printf(&q, "%s%s", q.len ? " " : "", error);
    int has_text = q.len > 0;
    lsn_list ls = {0}, ev = {0};
    lsn_batch b = {0};
    cand *c = NULL;
    bump *u = NULL;
    char *text = NULL;
    json_t *qtags = NULL, *hints = NULL, *conflicts = NULL, *log = NULL;
    float *qv = NULL;
    int rc = has_text ? query_vector(db, q.data, &qv) : REMEM_OK;
    if (rc) goto out;
    /* Read, not changed: the cache's metadata, not copies, and each
     * rule's cosine with the query, not its vector. */
    lsn_list_opts lo = {.sim_to = qv, .borrow = 1, .any_order = 1};
    lsn_list_opts eo = {.keep = has_fp, .ctx = (void *)fp};
    rc = lsn_list_where(db, ns, "lesson", &lo, &ls);
    if (!rc && fp) rc = lsn_list_where(db, ns, "error_event", &eo, &ev);
    if (rc) goto out;
    qtags = query_tags(args, &ev, fp);
    if (!(c = calloc(ls.n + 1, sizeof *c))) goto oom;
    size_t n = gather(&ls, domain, policy, c);
    /* Nothing is locked here: the embedder runs while others write. */
    if (has_text && n && (rc = similarities(db, qv, c, n))) goto out;
    int64_t now = util_now_ms();
    for (size_t i = 0; i < n; i++) score(&c[i], fp, qtags, has_text, now);
    /* The floor first, then conflicts among what would be offered. */
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i].score >= LSN_MIN_SCORE) c[m++] = c[i];
    n = m;
    if (n > 1) qsort(c, n, sizeof *c, cand_cmp);
    if (!(conflicts = resolve_conflicts(c, n))) goto oom;
    int weak, use_transfer;
    if (!(hints = pick(c, n, k, policy, on_error, &weak, &use_transfer))) goto oom;

    char lid[40];
    lsn_new_id("hnt_", lid);
    log = json_pack("{ss ss ss ss sb sb sO sO s[] sO}", "hint_log_id", lid, "domain_key", domain,
                    "mode", on_error ? "on_error" : "pre_run", "policy", policy, "strict_weak",
                    weak, "transfer_considered", use_transfer, "hints", hints, "conflicts",
                    conflicts, "suppressed", "query_tags", qtags);
    if (!log) goto oom;
    if (fp) json_object_set_new(log, "fingerprint", json_string(fp));
    if (run) json_object_set_new(log, "run", json_string(run));
    if (json_object_get(args, "step"))
        json_object_set_new(log, "step", json_integer(lsn_i(args, "step", 0)));
    if (task) json_object_set_new(log, "task", json_string(task));
    text = log_text(hints, on_error, domain, policy, weak);
    u = calloc(json_array_size(hints) + json_array_size(conflicts) + 1, sizeof *u);
    log_fill f = {.log = log};
    if (!text || !u || queue_writes(&b, ns, hints, conflicts, u, &f, run, now, lid, text)) goto oom;
    /* Counted in the store, as each lesson is at that moment. */
    if ((rc = lsn_batch_commit(db, &b))) goto out;
    json_object_set_new(log, "text", json_string(text));
    *result = log;
    log = NULL;
    goto out;
oom:
    rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
out:
    sb_free(&q);
    free(qv);
    lsn_batch_free(&b);
    free(c);
    free(u);
    free(text);
    json_decref(log);
    json_decref(qtags);
    json_decref(hints);
    json_decref(conflicts);
    lsn_list_free(&ls);
    lsn_list_free(&ev);
    return rc;
}
