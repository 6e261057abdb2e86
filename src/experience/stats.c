/*
 * stats.c: seed 000's memory stats (total decisions, mean reward, counts
 * per action type), the section remem_stats adds for a namespace that
 * holds decisions, and the "are there decisions yet?" question hydration
 * asks. One pass over the namespace's rows in the store (not the recall
 * cache: stats must not load a namespace's vectors as a side effect).
 *
 * Only live decisions count: not invalidated, not archived, not expired;
 * a decision without a numeric reward counts as reward 0, as in the seed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "experience/experience.h"

typedef struct sum_ctx {
    exp_summary *s;
    int64_t now;
} sum_ctx;

static int count_row(void *vctx, const store_row *r) {
    sum_ctx *c = vctx;
    const remem_memory *m = &r->m;
    if (!m->kind || strcmp(m->kind, "decision") || m->invalidated_at ||
        (m->tier && !strcmp(m->tier, "archived")) || (m->expires_at && m->expires_at <= c->now))
        return 0;
    json_t *meta = m->metadata ? json_loads(m->metadata, 0, NULL) : NULL;
    json_t *rw = json_object_get(meta, "reward"), *act = json_object_get(meta, "action");
    c->s->decisions++;
    /* Rewards written by plain `add` with any metadata are not bounded by
     * decision.add's schema: a long double sum of finite doubles stays
     * finite, and so does its mean. */
    if (json_is_number(rw) && isfinite(json_number_value(rw)))
        c->s->reward_sum += (long double)json_number_value(rw);
    if (json_is_string(act) && json_string_length(act)) {
        json_t *n = json_object_get(c->s->by_action, json_string_value(act));
        json_object_set_new(c->s->by_action, json_string_value(act),
                            json_integer(n ? json_integer_value(n) + 1 : 1));
    }
    json_decref(meta);
    return 0;
}

int exp_summarise(remem *db, const char *ns, exp_summary *s) {
    memset(s, 0, sizeof *s);
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (!(s->by_action = json_object())) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    sum_ctx c = {s, util_now_ms()};
    rc = store_scan(db->st, ns, 0, count_row, &c);
    if (rc) {
        json_decref(s->by_action);
        s->by_action = NULL;
        return rc == REMEM_ENOMEM ? eng_fail(db, rc, "out of memory") : eng_store_fail(db, rc);
    }
    return REMEM_OK;
}

int experience_stats(remem *db, const char *ns, json_t *o) {
    /* remem_stats has counted the kinds already: without a decision there
     * is nothing to sum, and no reason to read every row (a namespace of
     * 100,000 memories took seconds). */
    json_t *kinds = json_object_get(o, "by_kind");
    if (json_is_object(kinds) && !json_object_get(kinds, "decision")) return REMEM_OK;
    exp_summary s;
    int rc = exp_summarise(db, ns, &s);
    if (rc) return rc;
    if (s.decisions > 0) {
        double avg = (double)(s.reward_sum / (long double)s.decisions);
        json_object_set_new(o, "total_memories", json_integer(s.decisions));
        /* to three decimals, unless that would overflow; json_real
         * refuses what is not finite: null then, never a key silently
         * missing */
        double shown = fabs(avg) < 1e300 ? round(avg * 1000) / 1000 : avg;
        json_object_set_new(o, "average_reward", isfinite(shown) ? json_real(shown) : json_null());
        json_object_set_new(o, "by_action_type", s.by_action);
    } else {
        json_decref(s.by_action);
    }
    return REMEM_OK;
}
