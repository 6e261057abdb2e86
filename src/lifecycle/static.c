/*
 * static.c: seed 001's static memory, loaded from a personality file
 * (identity, long-term goals, societal rules, environment, trust scores:
 * any JSON object). Each leaf value and each list item becomes one memory
 * of kind and tier "static", its text "key path: value" (so the words of
 * the key take part in recall) and its key path in metadata.key. The id is
 * derived from the key path ("static:identity.name"), so loading the file
 * again replaces each memory in place (nothing doubled), and keys the new
 * file no longer has are archived (restorable, out of recall). One
 * transaction: the old personality or the new one, never half of each.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/lifecycle.h"

#define STATIC_ID_MAX    200
/* Deeper than any personality needs; bounds the walk's recursion. */
#define STATIC_DEPTH_MAX 32

typedef struct leaf {
    char *path, *text, *id, *meta;
} leaf;

typedef struct leaves {
    leaf *v;
    size_t n, cap;
    int oom, too_deep;
} leaves;

static void push(leaves *L, const char *path, json_t *value) {
    if (L->oom) return;
    if (L->n == L->cap) {
        size_t cap = L->cap ? L->cap * 2 : 32;
        leaf *v = realloc(L->v, cap * sizeof *v);
        if (!v) {
            L->oom = 1;
            return;
        }
        L->v = v;
        L->cap = cap;
    }
    char *val = json_is_string(value)
                    ? strdup(json_string_value(value))
                    : json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    leaf *f = &L->v[L->n];
    memset(f, 0, sizeof *f);
    f->path = strdup(path);
    if (val && f->path) {
        size_t tl = strlen(path) + strlen(val) + 3;
        f->text = malloc(tl);
        if (f->text) snprintf(f->text, tl, "%s: %s", path, val);
        f->id = malloc(strlen(path) + 8);
        if (f->id) sprintf(f->id, "static:%s", path);
        f->meta = lc_json_text(json_pack("{s:s, s:s}", "key", path, "source", "static.load"));
    }
    L->n++;
    if (!val || !f->path || !f->text || !f->id || !f->meta) L->oom = 1;
    free(val);
}

static void walk(leaves *L, const char *path, json_t *v, int depth) {
    char sub[STATIC_ID_MAX + 64];
    if (depth > STATIC_DEPTH_MAX) {
        L->too_deep = 1;
        return;
    }
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", k);
            walk(L, sub, x, depth + 1);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            walk(L, sub, x, depth + 1);
        }
    } else if (!json_is_null(v)) {
        push(L, path, v);
    }
}

static void leaves_free(leaves *L) {
    for (size_t i = 0; i < L->n; i++) {
        free(L->v[i].path);
        free(L->v[i].text);
        free(L->v[i].id);
        free(L->v[i].meta);
    }
    free(L->v);
}

static int keep_loaded_static(const remem_memory *m, void *ctx) {
    (void)ctx;
    return m->tier && !strcmp(m->tier, "static") && !strncmp(m->id, "static:", 7);
}

/* An index of n records' ids (the char * at offset off of each size-byte
 * record): a JSON object (jansson's hash table) from id to position, so
 * matching a file of n leaves against the m loaded before is n + m
 * lookups, not n * m comparisons. NULL: out of memory. A later duplicate
 * keeps the first position. */
static json_t *index_ids(const void *v, size_t n, size_t size, size_t off) {
    json_t *ix = json_object();
    for (size_t i = 0; ix && i < n; i++) {
        const char *id = *(char *const *)((const char *)v + i * size + off);
        if (!json_object_get(ix, id) &&
            json_object_set_new_nocheck(ix, id, json_integer((json_int_t)i))) {
            json_decref(ix);
            ix = NULL;
        }
    }
    return ix;
}

/* Every key path short enough and none twice ({"a.b": 1, "a": {"b": 2}}:
 * two values, one key path); *fresh: the index of L's ids. */
static int check_paths(remem *db, leaves *L, json_t **fresh) {
    for (size_t i = 0; i < L->n; i++)
        if (strlen(L->v[i].id) > STATIC_ID_MAX)
            return eng_fail(db, REMEM_EINVAL, "static.load: the key path %.80s... is too long",
                            L->v[i].path);
    if (!(*fresh = index_ids(L->v, L->n, sizeof *L->v, offsetof(leaf, id))))
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (json_object_size(*fresh) == L->n) return REMEM_OK;
    for (size_t i = 0; i < L->n; i++)
        if (json_integer_value(json_object_get(*fresh, L->v[i].id)) != (json_int_t)i)
            return eng_fail(db, REMEM_EINVAL,
                            "static.load: two values have the key path %s (a key with a dot?)",
                            L->v[i].path);
    return REMEM_OK;
}

int lc_op_static_load(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    json_t *file = json_object_get(args, "file");
    leaves L = {0};
    lc_list old = {0};
    remem_memory *adds = NULL;
    lc_move *gone = NULL;
    json_t *fresh = NULL, *was = NULL; /* id -> index, of L and of old */
    int rc = REMEM_OK;
    walk(&L, "", file, 0);
    if (L.oom) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    if (L.too_deep) {
        rc = eng_fail(db, REMEM_EINVAL,
                      "static.load: the personality file nests deeper than %d levels",
                      STATIC_DEPTH_MAX);
        goto done;
    }
    if (L.n == 0) {
        rc = eng_fail(db, REMEM_EINVAL,
                      "static.load: the personality file has no values (an object of strings, "
                      "numbers, lists or objects is expected)");
        goto done;
    }
    if ((rc = check_paths(db, &L, &fresh))) goto done;
    if ((rc = lc_snapshot(db, ns, keep_loaded_static, NULL, 0, &old))) goto done;
    if (!(was = index_ids(old.v, old.n, sizeof *old.v, offsetof(lc_mem, id)))) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    adds = calloc(L.n, sizeof *adds);
    gone = calloc(old.n ? old.n : 1, sizeof *gone);
    if (!adds || !gone) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    size_t added = 0, replaced = 0, unchanged = 0, ngone = 0, nadd = 0;
    for (size_t i = 0; i < L.n; i++) {
        json_t *at = json_object_get(was, L.v[i].id);
        const lc_mem *prev = at ? &old.v[json_integer_value(at)] : NULL;
        if (prev && !strcmp(prev->text, L.v[i].text)) {
            unchanged++;
            continue;
        }
        prev ? replaced++ : added++;
        remem_memory *m = &adds[nadd++];
        remem_memory_init(m);
        m->ns = ns;
        m->id = L.v[i].id;
        m->kind = "static";
        m->tier = "static";
        m->text = L.v[i].text;
        m->importance = 1.0;
        m->metadata = L.v[i].meta;
    }
    for (size_t j = 0; j < old.n; j++)
        if (!json_object_get(fresh, old.v[j].id))
            gone[ngone++] = (lc_move){old.v[j].id, "archived", NULL};
    if ((nadd || ngone) && (rc = lc_write(db, ns, adds, nadd, NULL, gone, ngone, "static.load")))
        goto done;
    char text[256];
    snprintf(text, sizeof text,
             "%s: %zu static memories (%zu added, %zu replaced, %zu unchanged, %zu archived)", ns,
             L.n, added, replaced, unchanged, ngone);
    *result =
        json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:s}", "ns", ns, "memories", (json_int_t)L.n,
                  "added", (json_int_t)added, "replaced", (json_int_t)replaced, "unchanged",
                  (json_int_t)unchanged, "archived", (json_int_t)ngone, "text", text);
    if (!*result) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
done:
    json_decref(fresh);
    json_decref(was);
    free(adds);
    free(gone);
    lc_list_free(&old);
    leaves_free(&L);
    return rc;
}
