/*
 * tiers.c: seed 001's tiers. Short-term memory has a capacity (policy
 * stm_size); `migrate` takes the memories beyond it, oldest first (or,
 * under seed 001's rules, the most important first), out of short-term: those whose importance exceeds the policy's threshold go to
 * long-term, the others to `archived` (out of recall, restorable with
 * `unarchive`), all in one transaction, and the answer lists each move.
 * Seed 001 also says long-term memory "always has to pass through STM
 * first": the policy long_requires_stm refuses an add straight to tier
 * long (lc_check_add, run by the engine's add path through hooks.h).
 * Static memories never migrate: only tier short is ever looked at.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/lifecycle.h"

int lc_check_add(remem *db, const remem_memory *m) {
    if (!m->tier || strcmp(m->tier, "long") != 0) return REMEM_OK;
    if (!lc_policy(db, m->ns)->long_requires_stm) return REMEM_OK;
    return eng_fail(db, REMEM_EINVAL,
                    "tier long: the policy of namespace %s (long_requires_stm) admits memories to "
                    "long-term only through short-term: add to tier short, then `remem migrate "
                    "--ns %s`",
                    m->ns, m->ns);
}

static int keep_short(const remem_memory *m, void *ctx) {
    (void)ctx;
    return m->tier && !strcmp(m->tier, "short");
}

/* Seed 001: "the oldest and most important entries" migrate: the most
 * important first, the oldest first among equals. */
static int important_first(const void *a, const void *b) {
    const lc_mem *x = a, *y = b;
    if (x->importance != y->importance) return x->importance > y->importance ? -1 : 1;
    if (x->created_at != y->created_at) return x->created_at < y->created_at ? -1 : 1;
    return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
}

static int oldest_first(const void *a, const void *b) {
    const lc_mem *x = a, *y = b;
    if (x->created_at != y->created_at) return x->created_at < y->created_at ? -1 : 1;
    return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
}

int lc_op_migrate(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    const cfg_policy *p = lc_policy(db, ns);
    int64_t cap = op_int(args, "stm_size", p->stm_size);
    double threshold = op_num(args, "threshold", p->threshold);
    int dry = op_bool(args, "dry_run", 0);
    lc_list l;
    int rc = lc_snapshot(db, ns, keep_short, NULL, 0, &l);
    if (rc) return rc;
    int by_importance = op_bool(args, "by_importance", p->migrate_by_importance);
    if (l.n) qsort(l.v, l.n, sizeof *l.v, by_importance ? important_first : oldest_first);
    size_t leave = cap > 0 && l.n > (size_t)cap ? l.n - (size_t)cap : 0;
    lc_move *mv = calloc(leave ? leave : 1, sizeof *mv);
    json_t *moved = json_array(), *to_long = json_array(), *to_arch = json_array();
    if (!mv || !moved || !to_long || !to_arch) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < leave; i++) {
        mv[i].id = l.v[i].id;
        mv[i].tier = l.v[i].importance > threshold ? "long" : "archived";
        json_array_append_new(!strcmp(mv[i].tier, "long") ? to_long : to_arch,
                              json_string(mv[i].id));
        json_array_append_new(moved,
                              json_pack("{s:s, s:s, s:s, s:f}", "id", mv[i].id, "from", "short",
                                        "to", mv[i].tier, "importance", l.v[i].importance));
    }
    if (leave && !dry && (rc = lc_write(db, ns, NULL, 0, NULL, mv, leave, "migrate"))) goto done;
    char text[512];
    if (cap <= 0)
        snprintf(text, sizeof text,
                 "%s: short-term has no capacity set (stm_size 0): nothing migrated", ns);
    else
        snprintf(text, sizeof text,
                 "%s: %s%zu of %zu short-term memories over the capacity of %lld: %zu to long "
                 "(importance > %g), %zu to archived",
                 ns, dry ? "would move " : "", leave, l.n, (long long)cap, json_array_size(to_long),
                 threshold, json_array_size(to_arch));
    *result = json_pack("{s:s, s:I, s:f, s:s, s:b, s:I, s:I, s:O, s:O, s:O, s:s}", "ns", ns,
                        "stm_size", (json_int_t)cap, "threshold", threshold, "order",
                        by_importance ? "importance" : "oldest", "dry_run", dry, "short_before",
                        (json_int_t)l.n, "short_after", (json_int_t)(l.n - leave), "to_long",
                        to_long, "to_archived", to_arch, "moved", moved, "text", text);
    if (!*result) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
done:
    json_decref(moved);
    json_decref(to_long);
    json_decref(to_arch);
    free(mv);
    lc_list_free(&l);
    return rc;
}

/* The tier (ns, id) had before its last archiving, from its history
 * (NULL when none is recorded: "short" then). *tier is malloc'd. */
static char *tier_before_archive(remem *db, const char *ns, const char *id) {
    char *h = NULL;
    if (remem_history(db, ns, id, &h)) return NULL;
    json_t *a = json_loads(h, 0, NULL);
    remem_free(h);
    char *out = NULL;
    for (size_t i = json_array_size(a); i-- > 0 && !out;) {
        json_t *row = json_array_get(a, i);
        if (strcmp(json_string_value(json_object_get(row, "op")) ?: "", "archive") != 0) continue;
        json_t *before = json_object_get(row, "before");
        if (json_is_string(before))
            before = json_loads(json_string_value(before), 0, NULL);
        else
            json_incref(before);
        const char *t = json_string_value(json_object_get(before, "tier"));
        if (t && strcmp(t, "archived") != 0) out = strdup(t);
        json_decref(before);
    }
    json_decref(a);
    return out;
}

int lc_op_unarchive(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    const char *to = op_str(args, "tier", NULL);
    json_t *ids = json_array();
    if (op_str(args, "id", NULL)) json_array_append_new(ids, json_string(op_str(args, "id", NULL)));
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(args, "ids"), i, v) json_array_append(ids, v);
    size_t n = json_array_size(ids);
    int rc = REMEM_OK;
    lc_move *mv = calloc(n ? n : 1, sizeof *mv);
    char **tiers = calloc(n ? n : 1, sizeof *tiers);
    json_t *moved = json_array();
    if (!mv || !tiers || !moved) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    if (n == 0) {
        rc = eng_fail(db, REMEM_EINVAL, "unarchive: give an id (or ids)");
        goto done;
    }
    for (i = 0; i < n; i++) {
        const char *id = json_string_value(json_array_get(ids, i));
        remem_record *r = NULL;
        if ((rc = remem_get(db, ns, id, &r))) goto done;
        const char *cur = remem_record_memory(r)->tier;
        if (!cur || strcmp(cur, "archived") != 0) {
            rc = eng_fail(db, REMEM_EINVAL, "unarchive: %s/%s is not archived (tier %s)", ns, id,
                          cur ? cur : "short");
            remem_record_free(r);
            goto done;
        }
        remem_record_free(r);
        tiers[i] = to ? strdup(to) : tier_before_archive(db, ns, id);
        if (!tiers[i]) tiers[i] = strdup("short");
        if (!tiers[i]) {
            rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
            goto done;
        }
        mv[i].id = id;
        mv[i].tier = tiers[i];
        json_array_append_new(
            moved, json_pack("{s:s, s:s, s:s}", "id", id, "from", "archived", "to", tiers[i]));
    }
    if ((rc = lc_write(db, ns, NULL, 0, NULL, mv, n, "unarchive"))) goto done;
    char text[256];
    snprintf(text, sizeof text, "%s: %zu memor%s restored from archived", ns, n,
             n == 1 ? "y" : "ies");
    *result = json_pack("{s:s, s:O, s:s}", "ns", ns, "restored", moved, "text", text);
    if (!*result) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
done:
    for (i = 0; tiers && i < n; i++) free(tiers[i]);
    free(tiers);
    free(mv);
    json_decref(moved);
    json_decref(ids);
    return rc;
}
