/*
 * cache_ent.c: each namespace cache's entity index, for recall's entity
 * lane: a second lexical index (src/lexical) whose document i holds the
 * entity keys of row i's text (src/text/entities.h), so that BM25 over it
 * weighs an entity by how rare it is in the namespace.
 *
 * It is derived data, made lazily: the first recall that asks for it
 * builds it from the rows (under the cache's read lock, so the rows hold
 * still; c->ent_lock makes one reader build it while the others wait),
 * and from then on every change of the rows changes it the same way
 * (cache.c calls cache_ent_append / _set / _remove under the write lock).
 * A namespace never recalled with the entity lane pays nothing; a change
 * that runs out of memory drops the index, and the next recall builds it
 * again. Its bytes are counted in the cache's (cache_bytes, cache_rows.c),
 * and the caller that saw it built has the registry recount the cache
 * (cache_account).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "text/entities.h"

typedef struct key_sink {
    strbuf buf;
    size_t *offs;
    size_t n, cap;
    int oom;
} key_sink;

static void take_key(const char *key, size_t len, void *ctx) {
    key_sink *k = ctx;
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 32;
        size_t *o = realloc(k->offs, cap * sizeof *o);
        if (!o) {
            k->oom = 1;
            return;
        }
        k->offs = o;
        k->cap = cap;
    }
    k->offs[k->n++] = k->buf.len;
    sb_append(&k->buf, key, len);
    sb_append(&k->buf, "", 1);
}

long cache_entity_keys(const char *text, strbuf *buf, size_t **offs, size_t *n, size_t *cap) {
    key_sink k = {*buf, *offs, *n, *cap, 0};
    size_t before = *n;
    text_entities(text, take_key, &k);
    *buf = k.buf;
    *offs = k.offs;
    *n = k.n;
    *cap = k.cap;
    if (k.oom || buf->oom) return -1;
    return (long)(*n - before);
}

/* The keys of text as pointers (into k's buffer); NULL when out of memory. */
static const char **keys_of(const char *text, key_sink *k, size_t *n) {
    k->buf.len = 0;
    k->n = 0;
    if (cache_entity_keys(text, &k->buf, &k->offs, &k->n, &k->cap) < 0) return NULL;
    const char **t = malloc((k->n ? k->n : 1) * sizeof *t);
    if (!t) return NULL;
    for (size_t i = 0; i < k->n; i++) t[i] = k->buf.data + k->offs[i];
    *n = k->n;
    return t;
}

static void sink_free(key_sink *k) {
    sb_free(&k->buf);
    free(k->offs);
}

/* A new entity index of c's rows; NULL when out of memory. Every row's
 * keys go in one after another and the index takes them in one batch
 * (lex_add_many: its lists in one block). */
static lex_index *build(const ns_cache *c) {
    lex_index *ix = lex_new();
    key_sink k = {0};
    sb_init(&k.buf);
    uint32_t *lens = malloc((c->n ? c->n : 1) * sizeof *lens);
    const char **t = NULL;
    if (!ix || !lens || lex_reserve(ix, c->n)) goto fail;
    for (size_t i = 0; i < c->n; i++) {
        size_t before = k.n;
        if (cache_entity_keys(c->rows[i].m.text, &k.buf, &k.offs, &k.n, &k.cap) < 0) goto fail;
        lens[i] = (uint32_t)(k.n - before);
    }
    if (!(t = malloc((k.n ? k.n : 1) * sizeof *t))) goto fail;
    for (size_t i = 0; i < k.n; i++) t[i] = k.buf.data + k.offs[i];
    if (lex_add_many(ix, 0, t, lens, c->n) != LEX_OK) goto fail;
    lex_trim(ix);
    free(t);
    free(lens);
    sink_free(&k);
    return ix;
fail:
    free(t);
    free(lens);
    sink_free(&k);
    lex_free(ix);
    return NULL;
}

lex_index *cache_entities(ns_cache *c, int *built) {
    pthread_mutex_lock(&c->ent_lock);
    *built = 0;
    if (!c->ent && (c->ent = build(c))) *built = 1;
    lex_index *ix = c->ent;
    pthread_mutex_unlock(&c->ent_lock);
    return ix;
}

/* The writer's side: c is write-locked, so no reader looks at c->ent. */
static void drop(ns_cache *c) {
    lex_free(c->ent);
    c->ent = NULL;
}

void cache_ent_append(ns_cache *c, size_t row) {
    if (!c->ent) return;
    key_sink k = {0};
    sb_init(&k.buf);
    size_t n = 0;
    const char **t = keys_of(c->rows[row].m.text, &k, &n);
    if (!t || lex_count(c->ent) != row || lex_add(c->ent, (uint32_t)row, t, n) != LEX_OK)
        drop(c);
    free(t);
    sink_free(&k);
}

void cache_ent_set(ns_cache *c, size_t row, const char *text) {
    if (!c->ent) return;
    key_sink k = {0};
    sb_init(&k.buf);
    size_t n = 0;
    const char **t = keys_of(text, &k, &n);
    if (!t || lex_set(c->ent, (uint32_t)row, t, n) != LEX_OK) drop(c);
    free(t);
    sink_free(&k);
}

void cache_ent_remove(ns_cache *c, size_t row) {
    if (c->ent && lex_swap_remove(c->ent, (uint32_t)row) != LEX_OK) drop(c);
}

