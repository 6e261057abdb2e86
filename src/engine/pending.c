/*
 * pending.c: writes that survive an embedder outage (seed 003 failure
 * mode 1). When a remote embedder (the "http" one) fails, an add is not
 * refused: the memory is committed with its text and no vector, so it is
 * durable and lexically searchable at once, and "pending" until a later
 * call embeds it. Three things drain the queue: the next successful write
 * on the handle (up to 256 rows), the operation "pending.embed" (`remem
 * pending embed`), and the server's background thread, which retries with
 * backoff.
 *
 * A handle remembers an outage: after a failure it does not call the
 * embedder again for embed_backoff_ms (1 s, doubling up to 5 minutes), so
 * a thousand adds during an outage cost one timeout, not a thousand.
 * Nothing is embedded twice: the vector is written only to a row that
 * still has none, checked inside the write transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/telemetry_glue.h"
#include "engine/ops.h"

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 300000
#define PENDING_BATCH  64

static int remote(const remem *db) { return strcmp(db->emb->name, "http") == 0; }

static void went_down(remem *db) {
    int64_t b = db->embed_backoff_ms ? db->embed_backoff_ms * 2 : BACKOFF_MIN_MS;
    db->embed_backoff_ms = b > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : b;
    db->embed_down_until = util_now_ms() + db->embed_backoff_ms;
}

int eng_embed_for_add(remem *db, const char *const *texts, size_t n, float *out, int *pending) {
    *pending = 0;
    if (remote(db) && util_now_ms() < db->embed_down_until) {
        *pending = 1;
        return REMEM_OK;
    }
    char err[512] = "";
    uint64_t t0 = tm_enabled() ? tm_now_ns() : 0;
    int rc = db->emb->embed(db->emb, texts, n, out, err, sizeof err);
    if (t0) eng_tm_note_embed_ms((double)(tm_now_ns() - t0) / 1e6);
    if (rc == REMEM_EEMBED && remote(db)) {
        went_down(db);
        *pending = 1;
        snprintf(db->emb_note, sizeof db->emb_note,
                 "the embedder failed (%.300s): memories are stored without a vector and embedded "
                 "when it answers again",
                 err[0] ? err : "no answer");
        return REMEM_OK;
    }
    if (rc) return eng_fail(db, rc, "%s", err[0] ? err : remem_strerror(rc));
    db->embed_backoff_ms = 0;
    db->embed_down_until = 0;
    return REMEM_OK;
}

int eng_embed_query(remem *db, const char *text, float *out) {
    int pending = 0;
    int rc = eng_embed_for_add(db, &text, 1, out, &pending);
    if (!rc && pending) memset(out, 0, (size_t)db->emb->dim * sizeof *out);
    return rc;
}

typedef struct todo {
    int64_t *rowids;
    size_t n, cap, max;
    int64_t total;
} todo;

static int want_row(void *ctx, const store_row *r) {
    todo *t = ctx;
    if (r->m.vector || !r->m.text) return 0;
    t->total++;
    if (t->n < t->max) {
        if (t->n == t->cap) {
            size_t nc = t->cap ? t->cap * 2 : 64;
            int64_t *p = realloc(t->rowids, nc * sizeof *p);
            if (!p) return REMEM_ENOMEM;
            t->rowids = p;
            t->cap = nc;
        }
        t->rowids[t->n++] = r->rowid;
    }
    return 0;
}

/* Embed and write one batch of rowids (texts read first, outside the
 * transaction; the vector written only where the row still has none and
 * the same text). */
static int embed_batch(remem *db, const int64_t *rowids, size_t n, int64_t *done) {
    store_row *rows = calloc(n, sizeof *rows);
    const char **texts = calloc(n, sizeof *texts);
    float *vecs = malloc(n * (size_t)db->emb->dim * sizeof *vecs);
    int rc = rows && texts && vecs ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        if ((rc = store_get_rowid(db->st, rowids[i], 0, &rows[i]))) eng_store_fail(db, rc);
        texts[i] = rows[i].m.text;
    }
    char err[512] = "";
    if (!rc && (rc = db->emb->embed(db->emb, texts, n, vecs, err, sizeof err))) {
        if (remote(db)) went_down(db);
        eng_fail(db, rc, "%s", err[0] ? err : remem_strerror(rc));
    }
    if (!rc && (rc = store_begin(db->st))) eng_store_fail(db, rc);
    if (!rc) {
        db->embed_backoff_ms = db->embed_down_until = 0;
        txn x = {0};
        for (size_t i = 0; !rc && i < n; i++) {
            store_row now;
            if ((rc = store_get_rowid(db->st, rowids[i], 1, &now))) {
                if (rc == REMEM_ENOTFOUND)
                    rc = REMEM_OK; /* gone meanwhile */
                else
                    eng_store_fail(db, rc);
                continue;
            }
            int still = !now.m.vector && !now.vec && now.m.text && !strcmp(now.m.text, texts[i]);
            if (still && !(rc = eng_check_model(db, now.m.ns)) &&
                !(rc = eng_set_model(db, now.m.ns))) {
                if ((rc = store_set_vector(db->st, rowids[i], db->emb->model_id,
                                           vecs + i * (size_t)db->emb->dim, db->emb->dim)))
                    eng_store_fail(db, rc);
                /* A history row, so other processes' caches catch up. */
                else if ((rc = store_history_add(db->st, now.m.ns, now.m.id, util_now_ms(), "embed",
                                                 "pending.embed", NULL, NULL)))
                    eng_store_fail(db, rc);
                else if (!(rc = eng_txn_row(db, &x, now.m.ns, rowids[i])))
                    (*done)++;
            }
            store_row_clear(&now);
        }
        rc = eng_txn_end(db, &x, rc);
    }
    for (size_t i = 0; rows && i < n; i++) store_row_clear(&rows[i]);
    free(rows);
    free(texts);
    free(vecs);
    return rc;
}

int eng_embed_pending(remem *db, const char *ns, int64_t max, int64_t *done, int64_t *left) {
    int64_t d = 0;
    int rc = eng_need_open(db);
    if (!rc && db->opt.read_only) rc = eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    todo t = {.max = max > 0 ? (size_t)max : (size_t)-1};
    if (!rc && (rc = store_scan(db->st, ns, 1, want_row, &t)))
        rc = rc == REMEM_ENOMEM ? eng_fail(db, rc, "out of memory") : eng_store_fail(db, rc);
    for (size_t i = 0; !rc && i < t.n; i += PENDING_BATCH)
        rc = embed_batch(db, t.rowids + i, t.n - i < PENDING_BATCH ? t.n - i : PENDING_BATCH, &d);
    free(t.rowids);
    if (done) *done = d;
    if (left) *left = t.total - d;
    if (!rc && t.total == d && !ns) db->pending_hint = 0;
    return rc;
}

/* "pending.embed": the retry queue, on demand. */
static int op_pending_embed(remem *db, json_t *args, json_t **result) {
    int64_t done = 0, left = 0;
    const char *ns = op_str(args, "ns", NULL);
    int rc = eng_embed_pending(db, ns, op_int(args, "max", 0), &done, &left);
    if (rc) return rc;
    char text[160];
    snprintf(text, sizeof text, "%lld embedded, %lld still pending", (long long)done,
             (long long)left);
    *result = json_pack("{s:I,s:I,s:s}", "embedded", (json_int_t)done, "pending", (json_int_t)left,
                        "text", text);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

const engine_op pending_ops[] = {
    {{"pending.embed", "write",
      "Embed the memories stored without a vector while the embedder was down (the retry "
      "queue); each is embedded once.",
      "{\"type\":\"object\",\"properties\":{"
      "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace (none: "
      "every namespace, with an admin key)\"},"
      "\"max\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"at most this many (0: "
      "all)\"}}}", REMEM_OP_IDEMPOTENT, "admin"},
     op_pending_embed},
};
const size_t pending_ops_n = sizeof pending_ops / sizeof pending_ops[0];
