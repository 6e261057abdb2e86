/*
 * cache.c: the in-memory copy of each namespace that vector search and the
 * filters run over. A namespace is loaded on its first use (one scan of its
 * rows, vectors straight into a flat index) and then kept in step:
 *   - our own writes are applied row by row (cache_apply), using the
 *     namespace version the store's triggers bump, so that a cache that
 *     missed a change is dropped instead of patched wrongly;
 *   - another handle's or process's writes show up as a newer namespace
 *     version when the cache is next used (cache_share.c compares it on
 *     every cache_get), and the cache catches up by re-reading just the
 *     memories named in the history rows written since the last one it saw
 *     (a clear, a reindex or a large change drops it instead, to be
 *     reloaded on its next use).
 * The caches are shared by every handle of the process on the same store,
 * under one byte budget (cache_share.c); this file builds and changes one
 * cache, and never sees the others.
 * Queries never read vectors from BLOBs.
 *
 * Beside the vectors, each cache keeps the lexical index of its texts
 * (src/lexical/lexical.h): the lexical lane's BM25 is the engine's, not
 * the store's, so it ranks alike whatever the store. Its documents are the
 * rows, in the same order, and every move of a row is mirrored in it: an
 * append is a lex_add, an update in place a lex_set, a removal the same
 * swap with the last row (lex_swap_remove). A load analyses the texts and
 * hands them to the index LOAD_BATCH rows at a time with the vectors
 * (lex_add_many groups a batch's postings by term).
 *
 * A namespace may also come from its snapshot (cache_snap.c: the cache as
 * a previous process left it, checked, then caught up from history as
 * above); load tries that first for namespaces of REMEM_SNAPSHOT_MIN rows
 * or more.
 *
 * Row ownership: each cached row's strings live in one allocation that
 * starts at m.id (cache_release_row, in cache_rows.c, frees it), or, for rows read from a
 * snapshot, in the mapped file (c->slab; freed with the cache); m.ns
 * points at the cache's own name unless the row's differs. Loading thus costs one malloc per row
 * instead of nine, and the vectors go to the index in batches, quantised in
 * one tight loop (flat_append_many).
 */
#include <assert.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "text/entities.h"

typedef struct term_sink {
    strbuf *buf;
    size_t **offs;
    size_t *n, *cap;
    int oom;
} term_sink;

static void take_term(const char *term, size_t len, int has_digit, int sentence_start, void *ctx) {
    (void)has_digit;
    (void)sentence_start;
    term_sink *t = ctx;
    if (t->oom) return;
    if (*t->n == *t->cap) {
        size_t cap = *t->cap ? *t->cap * 2 : 64;
        size_t *offs = realloc(*t->offs, cap * sizeof *offs);
        if (!offs) {
            t->oom = 1;
            return;
        }
        *t->offs = offs;
        *t->cap = cap;
    }
    (*t->offs)[(*t->n)++] = t->buf->len;
    sb_append(t->buf, term, len);
    sb_append(t->buf, "", 1);
}

static void take_key(const char *key, size_t len, void *ctx) { take_term(key, len, 0, 0, ctx); }

long cache_terms(text_stemmer *st, const char *text, strbuf *buf, size_t **offs, size_t *n,
                 size_t *cap) {
    size_t before = *n;
    term_sink t = {buf, offs, n, cap, 0};
    text_analyse_with(text, st, take_term, &t);
    if (t.oom || buf->oom) return -1;
    return (long)(*n - before);
}

/* The terms of one text as the lexical index takes them (pointers into
 * the scratch, valid until its next use). */
typedef struct doc_scratch {
    strbuf buf;
    size_t *offs;
    size_t n, cap;
    const char **terms;
    size_t terms_cap;
} doc_scratch;

static void doc_scratch_free(doc_scratch *d) {
    sb_free(&d->buf);
    free(d->offs);
    free(d->terms);
}

/* Turn the offsets gathered so far into d->terms; 0 or -1 (no memory). */
static int doc_scratch_point(doc_scratch *d) {
    if (d->n > d->terms_cap) {
        const char **t = realloc(d->terms, d->n * sizeof *t);
        if (!t) return -1;
        d->terms = t;
        d->terms_cap = d->n;
    }
    for (size_t i = 0; i < d->n; i++) d->terms[i] = d->buf.data + d->offs[i];
    return 0;
}

/* The terms of text in d (replacing what it held); their count, or -1. */
static long doc_terms(const ns_cache *c, doc_scratch *d, const char *text) {
    d->buf.len = 0;
    d->n = 0;
    long got = cache_terms(c->stem, text, &d->buf, &d->offs, &d->n, &d->cap);
    if (got < 0 || doc_scratch_point(d)) return -1;
    return got;
}

/* Readers share the cache (under its read lock): the first to need a
 * row's metadata parses it and publishes it with an atomic exchange; one
 * that loses the race drops its own copy. */
const json_t *cache_meta(ns_cache *c, size_t i) {
    json_t *cur = __atomic_load_n(&c->meta[i], __ATOMIC_ACQUIRE);
    if (cur || !c->rows[i].m.metadata) return cur;
    json_t *j = json_loads(c->rows[i].m.metadata, 0, NULL);
    if (j && !json_is_object(j)) {
        json_decref(j);
        j = json_object(); /* never parse it again */
    }
    if (!j) return NULL;
    json_t *expected = NULL;
    if (!__atomic_compare_exchange_n(&c->meta[i], &expected, j, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        json_decref(j);
        return expected;
    }
    return j;
}

int cache_tier_code(const char *t) {
    if (!strcmp(t, "static")) return 0;
    if (!strcmp(t, "short")) return 1;
    if (!strcmp(t, "long")) return 2;
    if (!strcmp(t, "archived")) return 3;
    return 4;
}

/* dst = src with every string copied into one allocation (m.id at its
 * start) and m.ns pointing at c->ns when it is the same name; no vector.
 * src is left alone. 0, or -1 when out of memory. */
static int pack_row(ns_cache *c, const store_row *src, store_row *dst) {
    int own_ns = strcmp(src->m.ns, c->ns) != 0;
    const char *from[] = {src->m.id,    src->m.kind,          src->m.tier,
                          src->m.text,  src->m.superseded_by, src->m.metadata,
                          src->m.links, src->m.model,         own_ns ? src->m.ns : NULL};
    enum { N_STRINGS = sizeof from / sizeof from[0] };
    size_t len[N_STRINGS], total = 0;
    for (int k = 0; k < N_STRINGS; k++) {
        len[k] = from[k] ? strlen(from[k]) + 1 : 0;
        total += len[k];
    }
    char *block = malloc(total);
    if (!block) return -1;
    c->str_bytes += util_heap_bytes(malloc_usable_size(block)); /* the heap's own count */
    *dst = *src;
    dst->vec = NULL;
    dst->m.vector = NULL;
    dst->m.ns = c->ns;
    const char **to[N_STRINGS] = {&dst->m.id,    &dst->m.kind,          &dst->m.tier,
                                  &dst->m.text,  &dst->m.superseded_by, &dst->m.metadata,
                                  &dst->m.links, &dst->m.model,         &dst->m.ns};
    for (int k = 0; k < N_STRINGS; k++) {
        if (!from[k]) {
            if (k < N_STRINGS - 1) *to[k] = NULL;
            continue;
        }
        memcpy(block, from[k], len[k]);
        *to[k] = block;
        block += len[k];
    }
    return 0;
}

/* Append a copy of r's fields (pack_row), its vector and its terms. */
static int append_row(ns_cache *c, const store_row *r, const float *vec) {
    if (c->n == c->cap && cache_reserve(c, c->cap ? c->cap * 2 : 256)) return -1;
    doc_scratch d = {0};
    long nt = doc_terms(c, &d, r->m.text);
    store_row packed;
    if (nt < 0 || pack_row(c, r, &packed)) {
        doc_scratch_free(&d);
        return -1;
    }
    if (flat_append(c->ix, vec) < 0) {
        doc_scratch_free(&d);
        cache_release_row(c, &packed);
        return -1;
    }
    if (lex_add(c->lex, (uint32_t)c->n, d.terms, (size_t)nt) != LEX_OK) {
        doc_scratch_free(&d);
        flat_swap_remove(c->ix, c->n);
        cache_release_row(c, &packed);
        return -1;
    }
    doc_scratch_free(&d);
    if (cache_map_put(c, r->rowid, (uint32_t)c->n)) {
        flat_swap_remove(c->ix, c->n);
        lex_swap_remove(c->lex, (uint32_t)c->n);
        cache_release_row(c, &packed);
        return -1;
    }
    c->rows[c->n] = packed;
    c->meta[c->n] = NULL;
    c->tier[c->n] = (uint8_t)cache_tier_code(c->rows[c->n].m.tier);
    c->n++;
    cache_ent_append(c, c->n - 1);
    assert(flat_count(c->ix) == c->n); /* rows[i] describes flat row i */
    assert(lex_count(c->lex) == c->n); /* and lexical document i */
    return 0;
}

static void remove_at(ns_cache *c, size_t i) {
    assert(i < c->n && flat_count(c->ix) == c->n && lex_count(c->lex) == c->n);
    cache_map_forget(c, c->rows[i].rowid);
    cache_release_row(c, &c->rows[i]);
    json_decref(c->meta[i]);
    size_t last = c->n - 1;
    flat_swap_remove(c->ix, i);
    lex_swap_remove(c->lex, (uint32_t)i); /* the same move: never fails */
    cache_ent_remove(c, i);
    if (i != last) {
        c->rows[i] = c->rows[last];
        c->meta[i] = c->meta[last];
        c->tier[i] = c->tier[last];
        cache_map_put(c, c->rows[i].rowid, (uint32_t)i);
    }
    c->n--;
}

/* Rows a load hands the index at a time: their vectors wait in a buffer
 * that stays in the CPU's caches (LOAD_BATCH * dim floats). */
#define LOAD_BATCH 256

typedef struct load_ctx {
    ns_cache *c;
    float *batch;              /* batch_cap vectors */
    size_t batch_cap;          /* LOAD_BATCH, or fewer for a small namespace */
    size_t pending;            /* rows whose vector is in batch, not yet in the index */
    doc_scratch terms;         /* the waiting rows' terms, one after another */
    uint32_t lens[LOAD_BATCH]; /* how many terms each waiting row has */
    /* With db->load_entities: the entity index too, from the same pass
     * over each text (text_analyse_words); dropped, to be built on first
     * use as usual, if it runs out of memory. */
    int ents_on;
    doc_scratch ents;
    uint32_t ent_lens[LOAD_BATCH];
} load_ctx;

static void load_drop_entities(load_ctx *lc) {
    lex_free(lc->c->ent);
    lc->c->ent = NULL;
    lc->ents_on = 0;
}

/* Row's terms into lc->terms (and its entity keys into lc->ents); how
 * many terms, or -1 when out of memory. */
static long load_terms(load_ctx *lc, const char *text) {
    doc_scratch *d = &lc->terms;
    if (!lc->ents_on) return cache_terms(lc->c->stem, text, &d->buf, &d->offs, &d->n, &d->cap);
    size_t before = d->n, ents_before = lc->ents.n;
    term_sink t = {&d->buf, &d->offs, &d->n, &d->cap, 0};
    term_sink k = {&lc->ents.buf, &lc->ents.offs, &lc->ents.n, &lc->ents.cap, 0};
    text_entity_scan scan;
    text_entities_begin(&scan, text, take_key, &k);
    if (text) text_analyse_words(text, lc->c->stem, take_term, &t, text_entities_word, &scan);
    text_entities_end(&scan);
    if (k.oom || lc->ents.buf.oom) load_drop_entities(lc);
    else lc->ent_lens[lc->pending] = (uint32_t)(lc->ents.n - ents_before);
    if (t.oom || d->buf.oom) return -1;
    return (long)(d->n - before);
}

/* Hand the waiting vectors and terms to the indexes: rows [n - pending, n). */
static int load_flush(load_ctx *lc) {
    if (!lc->pending) return 0;
    ns_cache *c = lc->c;
    size_t first = c->n - lc->pending;
    if (flat_append_many(c->ix, lc->batch, lc->pending) < 0) return REMEM_ENOMEM;
    if (doc_scratch_point(&lc->terms) ||
        lex_add_many(c->lex, (uint32_t)first, lc->terms.terms, lc->lens, lc->pending) != LEX_OK) {
        /* The rows stay in c without their postings: the load fails and
         * c is freed, so nothing sees them disagree. */
        return REMEM_ENOMEM;
    }
    if (lc->ents_on &&
        (doc_scratch_point(&lc->ents) ||
         lex_add_many(c->ent, (uint32_t)first, lc->ents.terms, lc->ent_lens, lc->pending) != LEX_OK))
        load_drop_entities(lc);
    lc->terms.buf.len = 0;
    lc->terms.n = 0;
    lc->ents.buf.len = 0;
    lc->ents.n = 0;
    lc->pending = 0;
    assert(flat_count(c->ix) == c->n); /* rows [n - pending, n) now indexed */
    assert(lex_count(c->lex) == c->n);
    return 0;
}

/* The row's fields go to the cache's arrays at once, its vector to the
 * batch. The index thus lags the rows by up to LOAD_BATCH until the load
 * ends (load flushes); nothing else sees the cache before then. */
static int load_row(void *vctx, const store_row *r) {
    load_ctx *lc = vctx;
    ns_cache *c = lc->c;
    if (lc->pending == lc->batch_cap && load_flush(lc)) return REMEM_ENOMEM;
    /* More rows than the namespace counted when the load began (a write
     * landed since): grow; the index takes the waiting vectors first so
     * that growing it copies them once. */
    if (c->n == c->cap && (load_flush(lc) || cache_reserve(c, c->cap * 2))) return REMEM_ENOMEM;
    store_row *dst = &c->rows[c->n];
    if (pack_row(c, r, dst)) return REMEM_ENOMEM;
    if (cache_map_put(c, r->rowid, (uint32_t)c->n)) {
        cache_release_row(c, dst);
        return REMEM_ENOMEM;
    }
    long nt = load_terms(lc, r->m.text);
    if (nt < 0) { /* the load fails and frees c: its map entry goes with it */
        cache_release_row(c, dst);
        return REMEM_ENOMEM;
    }
    lc->lens[lc->pending] = (uint32_t)nt;
    float *slot = lc->batch + lc->pending * (size_t)c->dim;
    /* The store's vector may be unaligned: memcpy, never a float read. */
    if (r->m.vector && r->m.dim == c->dim)
        memcpy(slot, r->m.vector, (size_t)c->dim * sizeof(float));
    else
        memset(slot, 0, (size_t)c->dim * sizeof(float));
    lc->pending++;
    c->meta[c->n] = NULL;
    c->tier[c->n] = (uint8_t)cache_tier_code(dst->m.tier);
    c->n++;
    return 0;
}

static int take_touch(void *ctx, int64_t rowid, int64_t accessed_at, int64_t access_count) {
    ns_cache *c = ctx;
    long at = cache_find(c, rowid);
    if (at >= 0) {
        c->rows[at].m.accessed_at = accessed_at;
        c->rows[at].m.access_count = access_count;
    }
    return 0;
}

/* The cache of ns (at version, holding rows rows) from its snapshot
 * (cache_snap.c), brought up to date with the history since; NULL when
 * there is none or it cannot be used: the caller scans instead. */
static ns_cache *adopt_snapshot(remem *db, const char *ns, const char *model, int dim,
                                int64_t version, int64_t rows, int *refused) {
    double t0 = snap_clock_ms();
    ns_cache *c = snap_read(db, ns, model, dim, version, refused);
    if (!c) return NULL;
    *refused = 1; /* until it is up to date */
    int64_t seen = c->version, now = version, n = rows, changes = 0;
    if (c->version != version) {
        /* Older: the changes since, as for another process's writes. Each
         * change of a row bumps the version once and writes one history
         * row: fewer history rows than versions mean history was lost
         * (rows deleted by hand, a restored backup), and what changed is
         * then unknown. Rows keep the order a scan gives them (rowid
         * order: an added row has the highest rowid, an update keeps its
         * place), which is what breaks exact ties in ranking; a removal
         * would move the last row into its place, so a purge or a clear
         * since the snapshot means a scan instead. */
        if (cache_refresh(db, c, &changes, 1) || changes < c->version - seen ||
            store_ns_info(db->st, ns, NULL, 0, NULL, &now, &n) != REMEM_OK) {
            cache_destroy(c);
            return NULL;
        }
    }
    /* Reads since: the access fields of the rows touched after it. */
    if (store_touched_since(db->st, ns, c->touch_seq, take_touch, c, &c->touch_seq)) {
        cache_destroy(c);
        return NULL;
    }
    /* The count must agree once caught up (when no write slipped in
     * meanwhile: then the next check of external changes catches up). */
    if (now == c->version && (int64_t)c->n != n) {
        cache_destroy(c);
        return NULL;
    }
    *refused = 0;
    c->snap_version = seen;
    c->from_snapshot = 1;
    c->load_ms = snap_clock_ms() - t0;
    return c;
}

/* The empty cache of ns a scan fills (lc->c, its batch, entities on when
 * the handle loads them), every array sized once for rows rows: growing
 * by doubling would copy (and have the kernel zero) the vectors several
 * times over. Room for writes to come only in a large namespace: a small
 * one costs what it holds. REMEM_OK, or ENOMEM (nothing kept). */
static int load_open(remem *db, const char *ns, int dim, int64_t version, int64_t rows,
                     int64_t hist_seq, int64_t touch_seq, load_ctx *lc) {
    memset(lc, 0, sizeof *lc);
    ns_cache *c = cache_new(db, ns, dim);
    /* A small namespace's batch is its size: a load allocates what the
     * namespace holds, not what a large one needs. */
    size_t batch_cap = (size_t)rows < LOAD_BATCH ? (size_t)rows + 1 : LOAD_BATCH;
    lc->c = c;
    lc->batch = malloc(batch_cap * (size_t)dim * sizeof(float));
    lc->batch_cap = batch_cap;
    if (c && db->load_entities && (c->ent = lex_new())) lc->ents_on = 1;
    size_t room = (size_t)rows >= 1024 ? (size_t)rows + rows / 8 : (size_t)rows;
    if (!c || !lc->batch || cache_reserve(c, room)) {
        free(lc->batch);
        cache_destroy(c);
        memset(lc, 0, sizeof *lc);
        return eng_fail(db, REMEM_ENOMEM, "out of memory loading namespace %s", ns);
    }
    c->version = version;
    c->hist_seq = hist_seq;
    c->touch_seq = touch_seq;
    return REMEM_OK;
}

/* The end of a scan into lc->c (rc: how it went): the cache, complete,
 * or NULL with the failure reported in *rc. */
static ns_cache *load_close(remem *db, load_ctx *lc, int rc, double t0, int refused, int *out) {
    ns_cache *c = lc->c;
    if (!rc) rc = load_flush(lc);
    free(lc->batch);
    doc_scratch_free(&lc->terms);
    doc_scratch_free(&lc->ents);
    if (!rc) lex_trim(c->lex);
    if (!rc && c->ent) lex_trim(c->ent);
    *out = rc;
    if (rc) {
        if (rc == REMEM_ENOMEM)
            eng_fail(db, rc, "out of memory loading namespace %s", c->ns);
        else
            eng_store_fail(db, rc);
        cache_destroy(c);
        return NULL;
    }
    c->snap_version = -1;
    c->snap_refused = refused;
    c->load_ms = snap_clock_ms() - t0;
    return c;
}

/* A load in one read of the store (store_load): what its start gave. */
typedef struct one_read {
    remem *db;
    const char *ns;
    load_ctx lc;
    char *model;
    size_t model_cap;
    int64_t version, rows;
    int rc; /* of load_open */
} one_read;

static int one_read_start(void *ctx, const store_ns *n, int64_t hist_seq) {
    one_read *o = ctx;
    if (o->model) snprintf(o->model, o->model_cap, "%s", n->model);
    o->version = n->version;
    o->rows = n->rows;
    if (n->rows <= 0) return 0; /* nothing to cache; no rows follow */
    int dim = n->dim > 0 ? n->dim : o->db->emb ? o->db->emb->dim : 1;
    o->rc = load_open(o->db, o->ns, dim, n->version, n->rows, hist_seq, -1, &o->lc);
    return o->rc;
}

static int one_read_row(void *ctx, const store_row *r) {
    one_read *o = ctx;
    return o->lc.c ? load_row(&o->lc, r) : 0;
}

ns_cache *cache_load_read(remem *db, const char *ns, char *model, size_t model_cap,
                          int64_t *version, int64_t *rows, int *rc) {
    double t0 = snap_clock_ms();
    one_read o = {.db = db, .ns = ns, .model = model, .model_cap = model_cap};
    if (model && model_cap) model[0] = '\0';
    int r = store_load(db->st, ns, one_read_start, one_read_row, &o);
    *version = o.version;
    *rows = o.rows;
    if (o.rc) { /* load_open failed and said why */
        *rc = o.rc;
        return NULL;
    }
    if (r == REMEM_ENOTFOUND && !o.lc.c) {
        *rc = REMEM_ENOTFOUND;
        return NULL;
    }
    if (!o.lc.c) { /* empty, or the read failed before any row */
        *rc = r ? eng_store_fail(db, r) : REMEM_OK;
        return NULL;
    }
    return load_close(db, &o.lc, r, t0, 0, rc);
}

ns_cache *cache_load(remem *db, const char *ns, int *rc) {
    if (store_has_load(db->st)) {
        int64_t version, rows;
        ns_cache *c = cache_load_read(db, ns, NULL, 0, &version, &rows, rc);
        if (*rc == REMEM_ENOTFOUND) *rc = REMEM_OK;
        return c;
    }
    char model[128];
    int dim;
    int64_t version, rows, hist_seq = 0;
    double t0 = snap_clock_ms();
    /* The history position first: changes that land during the scan are
     * then re-applied by the next catch-up, which is harmless. */
    *rc = store_history_max(db->st, ns, &hist_seq);
    if (*rc) {
        eng_store_fail(db, *rc);
        return NULL;
    }
    *rc = store_ns_info(db->st, ns, model, sizeof model, &dim, &version, &rows);
    if (*rc == REMEM_ENOTFOUND || (*rc == REMEM_OK && rows == 0)) {
        *rc = REMEM_OK;
        return NULL;
    }
    if (*rc) {
        eng_store_fail(db, *rc);
        return NULL;
    }
    if (dim <= 0) dim = db->emb ? db->emb->dim : 1;
    /* The touch count before the scan too (for a snapshot of this cache:
     * a touch during the scan is then re-read, which is harmless). */
    int64_t touch_seq = -1;
    if (snap_enabled() && store_touched_since(db->st, ns, 0, NULL, NULL, &touch_seq))
        touch_seq = -1;
    int refused = 0;
    if (snap_enabled() && (size_t)rows >= snap_min_rows()) {
        ns_cache *c = adopt_snapshot(db, ns, model, dim, version, rows, &refused);
        if (c) return c;
    }
    load_ctx lc;
    if ((*rc = load_open(db, ns, dim, version, rows, hist_seq, touch_seq, &lc))) return NULL;
    int r = store_scan(db->st, ns, 1, load_row, &lc);
    return load_close(db, &lc, r, t0, refused, rc);
}

/* Bring row (re-read from the store) into the cache; 0 (r is then
 * cleared), or -1 to drop (r is left to the caller). */
static int upsert_row(ns_cache *c, store_row *r) {
    if (r->vec && r->m.dim != c->dim) return -1;
    long at = cache_find(c, r->rowid);
    if (at >= 0) {
        store_row packed;
        if (strcmp(c->rows[at].m.text, r->m.text) != 0) {
            /* The text changed: its terms first (the one step that can
             * fail; the row is then dropped with the cache). */
            doc_scratch d = {0};
            long nt = doc_terms(c, &d, r->m.text);
            int bad = nt < 0 || lex_set(c->lex, (uint32_t)at, d.terms, (size_t)nt) != LEX_OK;
            doc_scratch_free(&d);
            if (bad) return -1;
            cache_ent_set(c, (size_t)at, r->m.text);
        }
        if (pack_row(c, r, &packed)) return -1;
        if (r->vec) flat_set(c->ix, (size_t)at, r->vec);
        cache_release_row(c, &c->rows[at]);
        json_decref(c->meta[at]);
        c->meta[at] = NULL;
        c->rows[at] = packed;
        c->tier[at] = (uint8_t)cache_tier_code(packed.m.tier);
        store_row_clear(r);
        return 0;
    }
    float *zero = r->vec ? NULL : calloc((size_t)c->dim, sizeof(float));
    const float *v = r->vec ? r->vec : zero;
    int bad = !v || append_row(c, r, v);
    free(zero);
    if (bad) return -1;
    store_row_clear(r);
    return 0;
}

static int has_id(const ns_cache *c, const char *id) {
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->rows[i].m.id, id) == 0) return 1;
    return 0;
}

static void remove_id(ns_cache *c, const char *id) {
    for (size_t i = c->n; i-- > 0;)
        if (strcmp(c->rows[i].m.id, id) == 0) remove_at(c, i);
}

typedef struct catchup {
    char **ids;
    unsigned char *deleted;
    size_t n, cap, limit;
    int drop;
} catchup;

static int on_history(void *vctx, const char *id, const char *op) {
    catchup *u = vctx;
    if (strcmp(id, "*") == 0 || u->n >= u->limit) {
        u->drop = 1; /* a clear or reindex, or too much: reload instead */
        return 1;
    }
    if (u->n == u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 16;
        char **ids = realloc(u->ids, cap * sizeof *ids);
        if (!ids) return REMEM_ENOMEM;
        u->ids = ids;
        unsigned char *del = realloc(u->deleted, cap);
        if (!del) return REMEM_ENOMEM;
        u->deleted = del;
        u->cap = cap;
    }
    if (!(u->ids[u->n] = strdup(id))) return REMEM_ENOMEM;
    u->deleted[u->n++] = strcmp(op, "delete") == 0;
    return 0;
}

int cache_refresh(remem *db, ns_cache *c, int64_t *seen, int keep_order) {
    int64_t version = -1, seq = c->hist_seq;
    /* The version first: a write landing after it is caught next time. */
    if (store_ns_info(db->st, c->ns, NULL, 0, NULL, &version, NULL)) return -1;
    if (version == c->version) return 0;
    catchup u = {0};
    u.limit = c->n / 4 > 256 ? c->n / 4 : 256;
    int rc = store_history_since(db->st, c->ns, c->hist_seq, on_history, &u, &seq);
    int bad = (rc && !u.drop) || u.drop;
    for (size_t i = 0; !bad && i < u.n; i++) {
        store_row r;
        int f = store_find(db->st, c->ns, u.ids[i], 1, &r);
        /* A row that must go would move the last row into its place. */
        if (keep_order && (u.deleted[i] || f == REMEM_ENOTFOUND) && has_id(c, u.ids[i])) {
            if (!f) store_row_clear(&r);
            bad = 1;
            break;
        }
        /* A purge and a re-add of the same id: the old row goes first. */
        if (u.deleted[i]) remove_id(c, u.ids[i]);
        if (f == REMEM_ENOTFOUND) {
            remove_id(c, u.ids[i]);
            continue;
        }
        if (f || upsert_row(c, &r)) {
            if (!f) store_row_clear(&r);
            bad = 1;
        }
    }
    for (size_t i = 0; i < u.n; i++) free(u.ids[i]);
    free(u.ids);
    free(u.deleted);
    if (bad) return -1;
    if (seen) *seen = (int64_t)u.n;
    c->version = version;
    c->hist_seq = seq;
    return 0;
}

int cache_apply_rows(remem *db, ns_cache *c, int64_t before, int64_t after, int64_t hist_seq,
                     const int64_t *rowids, size_t n) {
    /* Another process (or handle) wrote to ns before us: the history has
     * both. */
    if (c->version != before) return cache_refresh(db, c, NULL, 0);
    for (size_t i = 0; i < n; i++) {
        long at = cache_find(c, rowids[i]);
        store_row r;
        int rc = store_get_rowid(db->st, rowids[i], 1, &r);
        if (rc == REMEM_ENOTFOUND) {
            if (at >= 0) remove_at(c, (size_t)at);
            continue;
        }
        if (rc || upsert_row(c, &r)) {
            if (!rc) store_row_clear(&r);
            return -1;
        }
    }
    c->version = after;
    c->hist_seq = hist_seq;
    assert(flat_count(c->ix) == c->n);
    return 0;
}
