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
    int dropped; /* lost a conflict */
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

/* Cosine similarity of the query with each candidate's rule (clamped at
 * 0), through the handle's embedder. */
static int similarities(remem *db, const char *query, cand *c, size_t n) {
    int dim = remem_embedder_dim(db);
    const char **texts = calloc(n + 1, sizeof *texts);
    float *v = malloc((n + 1) * (size_t)dim * sizeof *v);
    if (!texts || !v) {
        free(texts);
        free(v);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    texts[0] = query;
    for (size_t i = 0; i < n; i++) texts[i + 1] = c[i].r->text;
    int rc = remem_embed(db, texts, n + 1, v);
    for (size_t i = 0; !rc && i < n; i++) {
        double dot = 0, qa = 0, qb = 0;
        const float *a = v, *b = v + (i + 1) * (size_t)dim;
        for (int d = 0; d < dim; d++) {
            dot += (double)a[d] * b[d];
            qa += (double)a[d] * a[d];
            qb += (double)b[d] * b[d];
        }
        double s = qa > 0 && qb > 0 ? dot / sqrt(qa * qb) : 0;
        c[i].text = s > 0 ? s : 0;
    }
    free(texts);
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
        size_t hit = 0;
        for (size_t i = 0; i < nt; i++)
            hit += lsn_has(json_object_get(m, "tags"), json_string_value(json_array_get(qtags, i)));
        c->tag = (double)hit / (double)nt;
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

/* Mark the losers of conflicts among the candidates that passed the
 * score floor; losses are written into their metadata (suppression after
 * LSN_CONFLICT_LOSSES). Returns the array of {"lesson_id","lost_to"}. */
static json_t *resolve_conflicts(cand *c, size_t n, json_t *suppressed, const char *run,
                                 int64_t now) {
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (c[i].dropped || c[j].dropped) continue;
            if (!lsn_has(json_object_get(c[i].r->meta, "conflicts_with"), c[j].r->id) &&
                !lsn_has(json_object_get(c[j].r->meta, "conflicts_with"), c[i].r->id))
                continue;
            cand *lose = wins(&c[i], &c[j]) ? &c[j] : &c[i];
            cand *win = lose == &c[i] ? &c[j] : &c[i];
            lose->dropped = 1;
            json_t *m = lose->r->meta;
            int64_t losses = lsn_i(m, "conflict_losses", 0) + 1;
            json_object_set_new(m, "conflict_losses", json_integer(losses));
            json_array_append_new(
                out, json_pack("{ss ss}", "lesson_id", lose->r->id, "lost_to", win->r->id));
            if (losses >= LSN_CONFLICT_LOSSES) {
                char why[200];
                snprintf(why, sizeof why, "lost conflict resolution %lld times (last to %s)",
                         (long long)losses, win->r->id);
                json_object_set_new(m, "status_reason", json_string(why));
                json_t *h =
                    json_pack("{ss ss ss ss so}", "action", "suppress", "from", lsn_s(m, "status"),
                              "to", "suppressed", "reason", why, "at", lsn_time_json(now));
                if (run) json_object_set_new(h, "run", json_string(run));
                json_object_set_new(m, "status", json_string("suppressed"));
                json_t *sh = json_object_get(m, "status_history");
                if (!json_is_array(sh)) json_object_set_new(m, "status_history", sh = json_array());
                json_array_append_new(sh, h);
                json_array_append_new(
                    suppressed, json_pack("{ss ss}", "lesson_id", lose->r->id, "reason", why));
            }
        }
    return out;
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
    lsn_list ls = {0}, ev = {0};
    lsn_batch b = {0};
    cand *c = NULL;
    json_t *qtags = NULL, *hints = json_array(), *suppressed = json_array(), *conflicts = NULL;
    int rc = lsn_list_kind(db, ns, "lesson", &ls);
    if (!rc) rc = lsn_list_kind(db, ns, "error_event", &ev);
    if (rc) goto out;
    qtags = query_tags(args, &ev, fp);
    c = calloc(ls.n + 1, sizeof *c);
    if (!c) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    size_t n = 0;
    int want_transfer = strcmp(policy, "off") != 0;
    for (size_t i = 0; i < ls.n; i++) {
        if (!eligible(ls.v[i].meta) || ls.v[i].archived) continue;
        const char *d = lsn_s(ls.v[i].meta, "domain_key");
        int transfer = !d || strcmp(d, domain);
        if (transfer &&
            (!want_transfer || json_is_true(json_object_get(ls.v[i].meta, "transfer_blocked"))))
            continue;
        c[n].r = &ls.v[i];
        c[n++].transfer = transfer;
    }
    strbuf q;
    sb_init(&q);
    if (task) sb_puts(&q, task);
    if (error) sb_printf(&q, "%s%s", q.len ? " " : "", error);
    int has_text = q.len > 0;
    if (has_text && n) rc = similarities(db, q.data, c, n);
    sb_free(&q);
    if (rc) goto out;
    int64_t now = util_now_ms();
    for (size_t i = 0; i < n; i++) score(&c[i], fp, qtags, has_text, now);
    /* The floor first, then conflicts among what would be offered. */
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i].score >= LSN_MIN_SCORE) c[m++] = c[i];
    n = m;
    qsort(c, n, sizeof *c, cand_cmp);
    conflicts = resolve_conflicts(c, n, suppressed, run, now);

    /* The strict lane. */
    size_t n_strict = 0;
    double best = 0;
    for (size_t i = 0; i < n && (int)n_strict < k; i++) {
        if (c[i].transfer || c[i].dropped) continue;
        if (!n_strict) best = c[i].score;
        n_strict++;
        json_array_append_new(hints, hint_json(&c[i]));
    }
    int weak = (int)n_strict < (k < LSN_STRICT_STRONG_N ? k : LSN_STRICT_STRONG_N) ||
               best < LSN_STRICT_STRONG_SCORE;
    int use_transfer = !strcmp(policy, "always") || (!strcmp(policy, "auto") && weak);
    int quota = on_error ? LSN_TRANSFER_ON_ERROR : LSN_TRANSFER_PRE_RUN, n_transfer = 0;
    for (size_t i = 0; use_transfer && i < n && n_transfer < quota; i++) {
        if (!c[i].transfer || c[i].dropped) continue;
        /* auto is evidence-gated: the failure's own fingerprint, or a
         * lesson promoted where it was learned. */
        if (!strcmp(policy, "auto") && !c[i].fp &&
            strcmp(lsn_s(c[i].r->meta, "status"), "promoted"))
            continue;
        n_transfer++;
        json_array_append_new(hints, hint_json(&c[i]));
    }

    /* Count the retrievals, keep the losers' counts, log the retrieval. */
    size_t i;
    json_t *h;
    json_array_foreach(hints, i, h) {
        lsn_rec *r = lsn_find(&ls, lsn_s(h, "lesson_id"));
        json_object_set_new(r->meta, "retrieval_count",
                            json_integer(lsn_i(r->meta, "retrieval_count", 0) + 1));
        if (!strcmp(lsn_s(h, "lane"), "transfer"))
            json_object_set_new(r->meta, "transfer_retrieval_count",
                                json_integer(lsn_i(r->meta, "transfer_retrieval_count", 0) + 1));
        json_object_set_new(r->meta, "last_retrieved_at", lsn_time_json(now));
        rc = lsn_batch_put(&b, ns, r->id, "lesson", r->text, r->meta, r->created_at);
        if (rc) break;
    }
    json_array_foreach(conflicts, i, h) {
        lsn_rec *r = lsn_find(&ls, lsn_s(h, "lesson_id"));
        if (strcmp(lsn_s(r->meta, "status"), "suppressed") && !rc)
            rc = lsn_batch_put(&b, ns, r->id, "lesson", r->text, r->meta, r->created_at);
    }
    char lid[40];
    lsn_new_id("hnt_", lid);
    json_t *log =
        json_pack("{ss ss ss ss sb sb sO sO sO sO}", "hint_log_id", lid, "domain_key", domain,
                  "mode", on_error ? "on_error" : "pre_run", "policy", policy, "strict_weak", weak,
                  "transfer_considered", use_transfer, "hints", hints, "conflicts", conflicts,
                  "suppressed", suppressed, "query_tags", qtags);
    if (fp) json_object_set_new(log, "fingerprint", json_string(fp));
    if (run) json_object_set_new(log, "run", json_string(run));
    if (json_object_get(args, "step"))
        json_object_set_new(log, "step", json_integer(lsn_i(args, "step", 0)));
    if (task) json_object_set_new(log, "task", json_string(task));
    strbuf t;
    sb_init(&t);
    sb_printf(&t, "%s hints for %s (policy %s%s): %zu\n", on_error ? "on-error" : "pre-run", domain,
              policy, weak ? ", strict lane weak" : "", json_array_size(hints));
    json_array_foreach(hints, i, h) {
        sb_printf(&t, "  [%s] %s %.3f %s\n", lsn_s(h, "lane"), lsn_s(h, "lesson_id"),
                  lsn_d(h, "score", 0), lsn_s(h, "rule_text"));
    }
    if (!rc) rc = lsn_batch_put(&b, ns, lid, "hint_log", t.data ? t.data : "hints", log, 0);
    if (rc) {
        sb_free(&t);
        json_decref(log);
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    rc = lsn_batch_commit(db, &b);
    /* Suppressed by conflict: each its own write, the reason as actor. */
    json_array_foreach(suppressed, i, h) {
        if (rc) break;
        lsn_rec *r = lsn_find(&ls, lsn_s(h, "lesson_id"));
        char actor[512];
        snprintf(actor, sizeof actor, "lesson.hints%s%s%s: suppress: %s", run ? " (run " : "",
                 run ? run : "", run ? ")" : "", lsn_s(h, "reason"));
        rc = lsn_write_status(db, ns, r->id, r->meta, actor);
    }
    if (!rc) {
        json_object_set_new(log, "text", json_string(t.data ? t.data : ""));
        *result = log;
    } else {
        json_decref(log);
    }
    sb_free(&t);
out:
    lsn_batch_free(&b);
    free(c);
    json_decref(qtags);
    json_decref(hints);
    json_decref(suppressed);
    json_decref(conflicts);
    lsn_list_free(&ls);
    lsn_list_free(&ev);
    return rc;
}
