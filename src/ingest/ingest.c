/*
 * ingest.c: the operations "ingest", "ingest.resume" and "ingest.status"
 * (ingest.h says what they do). The store work:
 *
 *   verbatim   one transaction: each turn not stored yet becomes an
 *              observation with the message's id (the caller's, or one
 *              derived from the session, speaker, time and text, so that the
 *              same transcript given twice adds nothing); an exact
 *              duplicate of a stored text folds into it.
 *   staging    one transaction: the new messages (kind "message") and the
 *              job (kind "ingest_job", its metadata the list of message ids,
 *              the chunk size and the progress), before any LLM call.
 *   a chunk    its messages read back, one extraction call, the neighbours
 *              of the facts, at most one consolidation call, the texts
 *              embedded, then one transaction that checks the job is still
 *              at this chunk (so two runners never apply a chunk twice),
 *              writes the facts (linked to their messages), the updates, the
 *              invalidations and the job's progress.
 *   the queue  an unfinished job also has a marker row in the namespace
 *              INGEST_QUEUE_NS (id "<job>@<namespace hash>", metadata
 *              {ns, job}), written with the job and deleted by the
 *              transaction of its last chunk, so that "ingest.pending" (what
 *              a restarted server runs) finds every unfinished job by
 *              reading that one namespace.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/ops.h"
#include "ingest/ingest.h"
#include "util/time.h"
#include "util/utf8.h"
#include "util/util.h"

#define OP "ingest"
#define ACTOR "ingest"
#define NEIGHBOURS_PER_FACT 3
#define NEIGHBOURS_MAX 24
#define INGEST_QUEUE_NS "remem:ingest-queue"

static void marker_id(const char *ns, const char *job, char out[64]) {
    snprintf(out, 64, "%s@%016llx", job, (unsigned long long)util_hash64(ns, strlen(ns)));
}

/* ---- the messages of a call ---- */

typedef struct msg {
    char id[64];
    const char *role, *speaker;
    char *content; /* owned: the text, or the text parts joined */
    char *text;    /* owned: "speaker: content" */
    int64_t at;
    int exists; /* already stored (by id) */
} msg;

typedef struct msgs {
    msg *v;
    size_t n;
} msgs;

static void msgs_free(msgs *m) {
    for (size_t i = 0; m->v && i < m->n; i++) free(m->v[i].content), free(m->v[i].text);
    free(m->v);
    memset(m, 0, sizeof *m);
}

/* The content of a message: a string, or OpenAI's list of parts whose
 * "text" parts are joined by newlines. NULL when there is none. */
static char *content_of(json_t *c) {
    if (json_is_string(c)) return strdup(json_string_value(c));
    if (!json_is_array(c)) return NULL;
    strbuf b;
    sb_init(&b);
    size_t i;
    json_t *p;
    json_array_foreach(c, i, p) {
        const char *t = json_string_value(json_is_string(p) ? p : json_object_get(p, "text"));
        if (!t) continue;
        if (b.len) sb_puts(&b, "\n");
        sb_puts(&b, t);
    }
    return b.len ? sb_take(&b) : (sb_free(&b), NULL);
}

/* v as exactly `digits` lower-case hex digits (as "%0*llx" would write it
 * when v fits). */
static char *put_hex(char *out, uint64_t v, int digits) {
    for (int i = digits - 1; i >= 0; i--, v >>= 4) out[i] = "0123456789abcdef"[v & 15];
    return out + digits;
}

/* v in decimal, as "%lld" writes it; the length. */
static size_t dec(char buf[24], long long v) {
    char tmp[24], *p = tmp + sizeof tmp;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *--p = '-';
    size_t n = (size_t)(tmp + sizeof tmp - p);
    memcpy(buf, p, n);
    return n;
}

static void sb_put(strbuf *b, const char *s) { sb_append(b, s, strlen(s)); }

/* 0, or -1 out of memory (an id hashed from a cut buffer would name
 * another message). The hashed key is session, role, speaker, time and
 * content joined by \x1f, built in key (reused from message to message:
 * a call of a thousand messages hashed each through printf before). */
static int derive_id(const char *session, const msg *m, strbuf *key, char out[64]) {
    char num[24];
    key->len = 0;
    sb_put(key, session ? session : "");
    sb_append(key, "\x1f", 1);
    sb_put(key, m->role);
    sb_append(key, "\x1f", 1);
    sb_put(key, m->speaker);
    sb_append(key, "\x1f", 1);
    sb_append(key, num, dec(num, (long long)m->at));
    sb_append(key, "\x1f", 1);
    sb_put(key, m->content);
    if (key->oom || !key->data) return -1;
    uint64_t h = util_hash64(key->data, key->len);
    /* The time first: a transcript's ids then sort as its turns do, and
     * the store's id index grows at its end instead of everywhere. */
    char *p = out;
    memcpy(p, "msg_", 4);
    p = put_hex(p + 4, (uint64_t)(m->at & 0xffffffffffffLL), 12);
    *put_hex(p, h, 16) = '\0';
    return 0;
}

/* Read args' messages; a bad one is REMEM_EINVAL naming it
 * ("messages[3].content: ..."). Times: the message's created_at, else the
 * session time plus its position in milliseconds (turns keep their order),
 * else 0 (the store's clock). */
static int read_messages_into(remem *db, json_t *args, int64_t session_time, msgs *out,
                              strbuf *key) {
    json_t *arr = json_object_get(args, "messages");
    const char *session = op_str(args, "session", NULL);
    size_t n = json_array_size(arr);
    memset(out, 0, sizeof *out);
    if (!(out->v = calloc(n ? n : 1, sizeof *out->v))) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    size_t i;
    json_t *j;
    json_array_foreach(arr, i, j) {
        msg *m = &out->v[out->n];
        const char *role = json_string_value(json_object_get(j, "role"));
        const char *name = json_string_value(json_object_get(j, "name"));
        const char *id = json_string_value(json_object_get(j, "id"));
        json_t *ca = json_object_get(j, "created_at");
        if (!role || !*role) return eng_fail(db, REMEM_EINVAL, "messages[%zu].role: missing", i);
        if (!(m->content = content_of(json_object_get(j, "content"))) ||
            util_utf8_blank(m->content)) {
            free(m->content);
            m->content = NULL;
            return eng_fail(db, REMEM_EINVAL, "messages[%zu].content: missing or empty", i);
        }
        out->n++;
        m->role = role;
        m->speaker = name && *name ? name : role;
        m->at = session_time ? session_time + (int64_t)i : 0;
        if (json_is_integer(ca)) {
            m->at = json_integer_value(ca);
        } else if (json_is_string(ca)) {
            char field[48], err[256];
            snprintf(field, sizeof field, "messages[%zu].created_at", i);
            if (util_parse_time_field(field, json_string_value(ca), &m->at, err, sizeof err))
                return eng_fail(db, REMEM_EINVAL, "%s", err);
        }
        size_t sl = strlen(m->speaker), cl = strlen(m->content);
        if (!(m->text = malloc(sl + cl + 3))) return eng_fail(db, REMEM_ENOMEM, "out of memory");
        memcpy(m->text, m->speaker, sl);
        memcpy(m->text + sl, ": ", 2);
        memcpy(m->text + sl + 2, m->content, cl + 1);
        if (id && *id) {
            if (strlen(id) >= sizeof m->id)
                return eng_fail(db, REMEM_EINVAL, "messages[%zu].id: longer than 63 bytes", i);
            snprintf(m->id, sizeof m->id, "%s", id);
        } else if (derive_id(session, m, key, m->id)) {
            return eng_fail(db, REMEM_ENOMEM, "out of memory");
        }
    }
    return REMEM_OK;
}

static int read_messages(remem *db, json_t *args, int64_t session_time, msgs *out) {
    strbuf key;
    sb_init(&key);
    int rc = read_messages_into(db, args, session_time, out, &key);
    sb_free(&key);
    return rc;
}

/* Mark the messages already stored in ns (by id). */
static int mark_existing(remem *db, const char *ns, msgs *ms) {
    for (size_t i = 0; i < ms->n; i++) {
        store_row r;
        int rc = store_find(db->st, ns, ms->v[i].id, 0, &r);
        if (rc == REMEM_OK) {
            ms->v[i].exists = 1;
            store_row_clear(&r);
        } else if (rc != REMEM_ENOTFOUND) {
            return eng_store_fail(db, rc);
        }
    }
    return REMEM_OK;
}

/* Embed texts[0..n) into a new array (NULL when n is 0); *pending when the
 * remote embedder is down (the rows are then stored without vectors). */
static int embed_all(remem *db, const char *const *texts, size_t n, float **out, int *pending) {
    *out = NULL;
    *pending = 0;
    if (!n) return REMEM_OK;
    *out = malloc(n * (size_t)db->emb->dim * sizeof **out);
    if (!*out) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    int rc = eng_embed_for_add(db, texts, n, *out, pending);
    if (rc) free(*out), *out = NULL;
    return rc;
}

/* ---- verbatim: each turn an observation ---- */

typedef struct tally {
    int64_t added, duplicates, existing, skipped, facts, updated, invalidated, noop, dropped;
    int64_t chunks, chunks_done;
    llm_usage u;
} tally;

/* A turn's metadata, {"role", "name" (null when it is the role),
 * "session" (null when none)}, as json_pack's "s?" and json_dumps
 * (compact) wrote that object, into b (reset). */
static void turn_meta(strbuf *b, const msg *m, const char *session) {
    b->len = 0;
    sb_append(b, "{\"role\":", 8);
    eng_json_string(b, m->role);
    sb_append(b, ",\"name\":", 8);
    if (strcmp(m->speaker, m->role))
        eng_json_string(b, m->speaker);
    else
        sb_append(b, "null", 4);
    sb_append(b, ",\"session\":", 11);
    if (session)
        eng_json_string(b, session);
    else
        sb_append(b, "null", 4);
    sb_append(b, "}", 1);
}

/* Store turn m (its vector vec, NULL when pending) unless its id is
 * stored (another writer got there first): as a new observation, or
 * folded into a stored exact duplicate. */
static int verbatim_turn(remem *db, txn *x, const char *ns, const msg *m, const char *meta,
                         const float *vec, int64_t now, json_t *ids, tally *t) {
    remem_memory mm;
    remem_memory_init(&mm);
    mm.ns = ns;
    mm.id = m->id;
    mm.text = m->text;
    mm.kind = "observation";
    mm.importance = -1;
    mm.created_at = m->at;
    mm.metadata = meta;
    store_row old;
    int rc = store_find(db->st, ns, m->id, 0, &old);
    if (rc == REMEM_OK) {
        store_row_clear(&old); /* stored meanwhile by another writer */
        t->existing++;
        return REMEM_OK;
    }
    if (rc != REMEM_ENOTFOUND) return eng_store_fail(db, rc);
    char *norm = util_normalize_text(m->text);
    if (!norm) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    uint64_t h = util_hash64(norm, strlen(norm));
    int64_t dup = 0;
    if ((rc = store_find_dup(db->st, ns, h, norm, &dup))) {
        eng_store_fail(db, rc);
    } else if (dup) { /* folds into the stored twin: no id of its own */
        mm.id = NULL;
        rc = eng_add_in_txn(db, x, &mm, vec, now, NULL, 0, NULL);
        if (!rc) t->duplicates++;
    } else {
        rc = eng_insert_in_txn(db, x, &mm, vec, now, norm, h);
        if (!rc) t->added++, json_array_append_new(ids, json_string(m->id));
    }
    free(norm);
    return rc;
}

static int verbatim(remem *db, const char *ns, json_t *args, msgs *ms, json_t *ids, tally *t) {
    const char *session = op_str(args, "session", NULL);
    int rc = REMEM_OK;
    /* Which turns are stored already is asked inside the write transaction
     * (one read transaction, not one per message): a known turn's vector
     * is computed for nothing, which costs less than a read each. */
    const char **texts = malloc((ms->n ? ms->n : 1) * sizeof *texts);
    size_t *which = malloc((ms->n ? ms->n : 1) * sizeof *which);
    size_t n = 0;
    if (!texts || !which) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < ms->n; i++) {
        if (ms->v[i].exists) {
            t->existing++;
        } else if (!strcmp(ms->v[i].role, "system")) {
            t->skipped++; /* instructions to the agent, not something that happened */
        } else {
            texts[n] = ms->v[i].text;
            which[n++] = i;
        }
    }
    float *vecs = NULL;
    int pending = 0;
    if (!rc) rc = embed_all(db, texts, n, &vecs, &pending);
    if (!rc && n && (rc = store_begin(db->st))) rc = eng_store_fail(db, rc);
    txn x = {0};
    int64_t now = util_now_ms();
    strbuf meta;
    sb_init(&meta);
    for (size_t k = 0; !rc && k < n; k++) {
        const msg *m = &ms->v[which[k]];
        turn_meta(&meta, m, session);
        rc = meta.oom ? eng_fail(db, REMEM_ENOMEM, "out of memory")
                      : verbatim_turn(db, &x, ns, m, meta.data,
                                      pending ? NULL : vecs + k * db->emb->dim, now, ids, t);
    }
    sb_free(&meta);
    if (n) rc = eng_txn_end(db, &x, rc);
    free(vecs);
    free(texts);
    free(which);
    return rc;
}

/* ---- the job ---- */

typedef struct job {
    char id[40];
    json_t *meta; /* the job record's metadata */
} job;

static json_t *job_ids(const job *j) { return json_object_get(j->meta, "messages"); }
static int64_t job_int(const job *j, const char *k) {
    return json_integer_value(json_object_get(j->meta, k));
}

static int job_load(remem *db, const char *ns, const char *id, job *j) {
    memset(j, 0, sizeof *j);
    store_row r;
    int rc = store_find(db->st, ns, id, 0, &r);
    if (rc == REMEM_ENOTFOUND)
        return eng_fail(db, rc, "no job \"%.64s\" in namespace \"%.128s\"", id, ns);
    if (rc) return eng_store_fail(db, rc);
    int ok = r.m.kind && !strcmp(r.m.kind, INGEST_KIND_JOB) && r.m.metadata;
    j->meta = ok ? json_loads(r.m.metadata, 0, NULL) : NULL;
    store_row_clear(&r);
    if (!j->meta || !json_is_array(job_ids(j)))
        return json_decref(j->meta), j->meta = NULL,
               eng_fail(db, REMEM_EINVAL, "\"%.64s\" is not an ingest job", id);
    snprintf(j->id, sizeof j->id, "%s", id);
    return REMEM_OK;
}

static const char *job_status(const job *j) {
    const char *s = json_string_value(json_object_get(j->meta, "status"));
    return s ? s : "pending";
}

/* Stage the messages not stored yet and their job in one transaction.
 * *j is the new job, or (nothing new) the job of the first stored message
 * that is not done, or none (j->meta NULL). */
static int stage(remem *db, const char *ns, json_t *args, msgs *ms, int64_t session_time, job *j,
                 tally *t) {
    memset(j, 0, sizeof *j);
    int rc = mark_existing(db, ns, ms);
    if (rc) return rc;
    json_t *ids = json_array();
    strbuf key;
    sb_init(&key);
    sb_puts(&key, ns);
    for (size_t i = 0; i < ms->n; i++) {
        if (ms->v[i].exists) {
            t->existing++;
            continue;
        }
        if (!strcmp(ms->v[i].role, "system")) {
            ms->v[i].exists = 1; /* instructions to the agent: neither stored nor read */
            t->skipped++;
            continue;
        }
        json_array_append_new(ids, json_string(ms->v[i].id));
        sb_printf(&key, "\x1f%s", ms->v[i].id);
    }
    int oom = key.oom;
    uint64_t h = util_hash64(key.data ? key.data : "", key.len);
    sb_free(&key);
    if (oom) return json_decref(ids), eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (json_array_size(ids) == 0) { /* nothing new: a job left unfinished goes on */
        json_decref(ids);
        for (size_t i = 0; i < ms->n; i++) {
            store_row r;
            if (store_find(db->st, ns, ms->v[i].id, 0, &r)) continue;
            json_t *meta = r.m.metadata ? json_loads(r.m.metadata, 0, NULL) : NULL;
            const char *jid = json_string_value(json_object_get(meta, "job"));
            job cand;
            int found = jid && job_load(db, ns, jid, &cand) == REMEM_OK;
            json_decref(meta);
            store_row_clear(&r);
            eng_ok(db);
            if (!found) continue;
            if (strcmp(job_status(&cand), "done")) {
                *j = cand;
                return REMEM_OK;
            }
            json_decref(cand.meta);
        }
        return REMEM_OK;
    }
    snprintf(j->id, sizeof j->id, "job_%016llx", (unsigned long long)h);
    int64_t chunk = op_int(args, "chunk", 10), n = (int64_t)json_array_size(ids);
    j->meta = json_pack("{s:s, s:o, s:s?, s:I, s:I, s:I, s:I, s:{}}", "status", "pending",
                        "messages", ids, "session", op_str(args, "session", NULL), "session_time",
                        (json_int_t)session_time, "chunk", (json_int_t)chunk, "chunks",
                        (json_int_t)((n + chunk - 1) / chunk), "chunks_done", (json_int_t)0,
                        "counts");
    if (!j->meta) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    /* The rows: each new message, then the job. */
    size_t nn = (size_t)n + 2, k = 0;
    const char **texts = malloc(nn * sizeof *texts);
    remem_memory *rows = calloc(nn, sizeof *rows);
    char **metas = calloc(nn, sizeof *metas);
    char jtext[96];
    snprintf(jtext, sizeof jtext, "ingest job: %lld messages", (long long)n);
    if (!texts || !rows || !metas) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < ms->n; i++) {
        msg *m = &ms->v[i];
        if (m->exists) continue;
        json_t *meta = json_pack("{s:s, s:s, s:s, s:s?}", "role", m->role, "speaker", m->speaker,
                                 "job", j->id, "session", op_str(args, "session", NULL));
        metas[k] = meta ? json_dumps(meta, JSON_COMPACT) : NULL;
        json_decref(meta);
        remem_memory_init(&rows[k]);
        rows[k].ns = ns, rows[k].id = m->id, rows[k].text = m->text;
        rows[k].kind = INGEST_KIND_MESSAGE, rows[k].importance = 0, rows[k].created_at = m->at;
        rows[k].metadata = metas[k];
        texts[k] = m->text;
        if (!metas[k]) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        k++;
    }
    if (!rc) {
        metas[k] = json_dumps(j->meta, JSON_COMPACT);
        remem_memory_init(&rows[k]);
        rows[k].ns = ns, rows[k].id = j->id, rows[k].text = jtext;
        rows[k].kind = INGEST_KIND_JOB, rows[k].importance = 0, rows[k].metadata = metas[k];
        texts[k] = jtext;
        if (!metas[k]) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    char mid[64];
    marker_id(ns, j->id, mid);
    if (!rc) {
        json_t *meta = json_pack("{s:s, s:s}", "ns", ns, "job", j->id);
        metas[k + 1] = meta ? json_dumps(meta, JSON_COMPACT) : NULL;
        json_decref(meta);
        remem_memory_init(&rows[k + 1]);
        rows[k + 1].ns = INGEST_QUEUE_NS, rows[k + 1].id = mid, rows[k + 1].text = jtext;
        rows[k + 1].kind = INGEST_KIND_JOB, rows[k + 1].importance = 0;
        rows[k + 1].metadata = metas[k + 1];
        texts[k + 1] = jtext;
        if (!metas[k + 1]) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    float *vecs = NULL;
    int pending = 0;
    if (!rc) rc = embed_all(db, texts, nn, &vecs, &pending);
    if (!rc && (rc = store_begin(db->st))) rc = eng_store_fail(db, rc);
    if (!rc) {
        txn x = {0};
        int64_t now = util_now_ms();
        for (size_t i = 0; !rc && i < nn; i++)
            rc = eng_add_in_txn(db, &x, &rows[i], pending ? NULL : vecs + i * db->emb->dim, now,
                                NULL, 0, NULL);
        rc = eng_txn_end(db, &x, rc);
    }
    for (size_t i = 0; metas && i < nn; i++) free(metas[i]);
    free(metas);
    free(rows);
    free(texts);
    free(vecs);
    if (rc) json_decref(j->meta), j->meta = NULL;
    return rc;
}

/* ---- one chunk ---- */

/* The memories of ns most like text (relevance only, bookkeeping kinds
 * left out) appended to shown (ids) and texts, at most NEIGHBOURS_MAX. */
static int neighbours(remem *db, const char *ns, const char *text, json_t *shown, json_t *texts) {
    /* bookkeeping kinds are left out of a recall anyway (eng_internal_kind) */
    const double min_sim = 0.5;
    remem_result *r = NULL;
    int rc = eng_similar(db, &ns, text, NEIGHBOURS_PER_FACT, min_sim, NULL, &r);
    if (rc || !r) return rc;
    for (size_t i = 0; i < r->n && json_array_size(shown) < NEIGHBOURS_MAX; i++) {
        if (r->hits[i].similarity < min_sim) continue;
        size_t k;
        json_t *v;
        int seen = 0;
        json_array_foreach(shown, k, v) seen |= !strcmp(json_string_value(v), r->hits[i].mem.id);
        if (seen) continue;
        json_array_append_new(shown, json_string(r->hits[i].mem.id));
        json_array_append_new(texts, json_string(r->hits[i].mem.text));
    }
    remem_result_free(r);
    return REMEM_OK;
}

/* The chunk's messages read back from the store: rows[] own the texts,
 * metas[] the speakers (each message's metadata). */
static int chunk_messages(remem *db, const char *ns, const job *j, size_t from, size_t to,
                          ingest_msg *out, store_row *rows, json_t **metas) {
    for (size_t i = from; i < to; i++) {
        const char *id = json_string_value(json_array_get(job_ids(j), i));
        store_row *r = &rows[i - from];
        int rc = store_find(db->st, ns, id ? id : "", 0, r);
        if (rc == REMEM_ENOTFOUND)
            return eng_fail(db, REMEM_ENOTFOUND,
                            "message %.64s of job %s is no longer stored", id, j->id);
        if (rc) return eng_store_fail(db, rc);
        json_t *meta = metas[i - from] = r->m.metadata ? json_loads(r->m.metadata, 0, NULL) : NULL;
        const char *sp = json_string_value(json_object_get(meta, "speaker"));
        size_t sl = sp ? strlen(sp) : 0;
        ingest_msg *m = &out[i - from];
        /* The stored text is "speaker: content". */
        int whole = !sp || strncmp(r->m.text, sp, sl) || strncmp(r->m.text + sl, ": ", 2);
        m->speaker = whole ? "someone" : sp;
        m->text = whole ? r->m.text : r->m.text + sl + 2;
        m->role = json_string_value(json_object_get(meta, "role"));
        m->at = r->m.created_at;
    }
    return REMEM_OK;
}

typedef struct chunk {
    ingest_fact *facts;
    size_t nf;
    char *dup;    /* per fact: an exact duplicate of a stored text (folds, never asked about) */
    size_t *asked; /* the facts shown to the consolidation, in its numbering */
    size_t na;
    json_t *shown, *texts; /* the neighbours' ids and texts */
    ingest_plan plan;
    int have_plan;
} chunk;

static void chunk_free(chunk *c) {
    ingest_facts_free(c->facts, c->nf);
    free(c->dup);
    free(c->asked);
    json_decref(c->shown);
    json_decref(c->texts);
    if (c->have_plan) ingest_plan_free(&c->plan);
}

/* Ask the model: the facts, then (when they have neighbours) the plan. */
static int chunk_ask(remem *db, const char *ns, const job *j, ingest_msg *m, size_t n, chunk *c,
                     tally *t) {
    char *prompt = ingest_extract_prompt(m, n, job_int(j, "session_time"));
    char *answer = NULL, err[256] = "";
    if (!prompt) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    int rc = eng_llm_chat_schema(db, OP, NULL, prompt, "facts", ingest_extract_schema, &answer,
                                 &t->u);
    free(prompt);
    if (!rc && ingest_read_facts(answer, n, &c->facts, &c->nf, &t->dropped, err, sizeof err))
        rc = eng_fail(db, REMEM_ELLM, "extraction: %s", err);
    free(answer);
    answer = NULL;
    c->shown = json_array();
    c->texts = json_array();
    if (rc) return rc;
    c->dup = calloc(c->nf ? c->nf : 1, 1);
    c->asked = calloc(c->nf ? c->nf : 1, sizeof *c->asked);
    ingest_fact *af = calloc(c->nf ? c->nf : 1, sizeof *af);
    if (!c->dup || !c->asked || !af) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    /* An exact duplicate of a stored text folds into it, as any add does:
     * nothing to ask about it. */
    for (size_t i = 0; !rc && i < c->nf; i++) {
        char *norm = util_normalize_text(c->facts[i].text);
        int64_t row = 0;
        if (!norm) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        else if ((rc = store_find_dup(db->st, ns, util_hash64(norm, strlen(norm)), norm, &row)))
            eng_store_fail(db, rc);
        free(norm);
        if (rc || (c->dup[i] = row != 0)) continue;
        af[c->na] = c->facts[i];
        c->asked[c->na++] = i;
        rc = neighbours(db, ns, c->facts[i].text, c->shown, c->texts);
    }
    size_t nm = json_array_size(c->shown);
    if (rc || !nm || !c->na) return free(af), rc;
    const char **mt = malloc(nm * sizeof *mt);
    if (!mt) return free(af), eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < nm; i++) mt[i] = json_string_value(json_array_get(c->texts, i));
    prompt = ingest_consolidate_prompt(mt, nm, af, c->na);
    free(mt);
    free(af);
    if (!prompt) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    rc = eng_llm_chat_schema(db, OP, NULL, prompt, "consolidation", ingest_consolidate_schema,
                             &answer, &t->u);
    free(prompt);
    if (!rc) {
        if (ingest_read_plan(answer, nm, c->na, &c->plan, err, sizeof err))
            rc = eng_fail(db, REMEM_ELLM, "consolidation: %s", err);
        else
            c->have_plan = 1;
    }
    free(answer);
    return rc;
}

static int fact_action(const chunk *c, size_t i) {
    if (!c->have_plan || c->dup[i]) return INGEST_ADD; /* a duplicate's add folds */
    for (size_t k = 0; k < c->na; k++)
        if (c->asked[k] == i) return c->plan.fact[k];
    return INGEST_ADD;
}

/* The chunk's writes and the job's progress, in one transaction. */
static int chunk_write(remem *db, const char *ns, job *j, size_t from, const ingest_msg *m,
                       chunk *c, const float *vecs, int pending, json_t *out_ids, tally *t) {
    size_t nm = json_array_size(c->shown), ci = (size_t)job_int(j, "chunks_done");
    int64_t now = util_now_ms();
    int rc = store_begin(db->st);
    if (rc) return eng_store_fail(db, rc);
    txn x = {0};
    job cur;
    if ((rc = job_load(db, ns, j->id, &cur))) return eng_txn_end(db, &x, rc);
    if (job_int(&cur, "chunks_done") != (int64_t)ci) { /* another runner took this chunk */
        json_decref(cur.meta);
        rc = eng_fail(db, REMEM_EBUSY, "job %s: chunk %zu was written by another run",
                      j->id, ci + 1);
        return eng_txn_end(db, &x, rc);
    }
    json_decref(cur.meta);
    char (*fid)[64] = calloc(c->nf ? c->nf : 1, sizeof *fid);
    if (!fid) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    size_t v = 0; /* the next vector: facts added, then UPDATE texts */
    for (size_t i = 0; !rc && i < c->nf; i++) {
        if (fact_action(c, i) != INGEST_ADD) {
            t->noop++;
            continue;
        }
        json_t *links = json_array();
        int64_t at = 0;
        for (size_t s = 0; s < c->facts[i].n_src; s++) {
            size_t k = from + c->facts[i].src[s];
            json_array_append(links, json_array_get(job_ids(j), k));
            if (m[c->facts[i].src[s]].at > at) at = m[c->facts[i].src[s]].at;
        }
        char *lt = json_dumps(links, JSON_COMPACT);
        json_t *meta = json_pack("{s:s, s:s?}", "job", j->id, "session",
                                 json_string_value(json_object_get(j->meta, "session")));
        char *mt = meta ? json_dumps(meta, JSON_COMPACT) : NULL;
        json_decref(meta);
        json_decref(links);
        remem_memory f;
        remem_memory_init(&f);
        f.ns = ns, f.text = c->facts[i].text, f.kind = INGEST_KIND_FACT, f.importance = -1;
        f.created_at = at, f.links = lt, f.metadata = mt;
        int outcome = 0;
        rc = !lt || !mt ? eng_fail(db, REMEM_ENOMEM, "out of memory")
                        : eng_add_in_txn(db, &x, &f, pending ? NULL : vecs + v * db->emb->dim, now,
                                         fid[i], sizeof fid[i], &outcome);
        v++;
        free(lt);
        free(mt);
        if (rc) break;
        t->facts++;
        if (outcome == REMEM_DUPLICATE) {
            t->duplicates++;
        } else {
            t->added++;
            json_array_append_new(out_ids, json_string(fid[i]));
        }
    }
    for (size_t i = 0; !rc && c->have_plan && i < nm; i++) {
        const char *id = json_string_value(json_array_get(c->shown, i));
        if (c->plan.mem[i] == INGEST_UPDATE) {
            remem_patch p;
            remem_patch_init(&p);
            p.fields = REMEM_SET_TEXT;
            p.text = c->plan.merged[i];
            p.actor = ACTOR;
            rc = pending ? eng_fail(db, REMEM_EEMBED,
                                    "the embedder is down: an updated text needs its "
                                    "vector (resume the job later)")
                         : eng_update_in_txn(db, &x, ns, id, &p, vecs + v * db->emb->dim, now);
            v++;
            if (!rc) t->updated++;
        } else if (c->plan.mem[i] == INGEST_INVALIDATE) {
            rc = eng_invalidate_in_txn(db, &x, ns, id, fid[c->asked[c->plan.by[i]]], ACTOR, now);
            if (!rc) t->invalidated++;
        }
    }
    free(fid);
    /* The job's progress. */
    if (!rc) {
        json_t *meta = json_deep_copy(j->meta);
        int64_t done = (int64_t)ci + 1;
        json_object_set_new(meta, "chunks_done", json_integer(done));
        if (done >= job_int(j, "chunks")) json_object_set_new(meta, "status", json_string("done"));
        json_t *cn = json_object_get(meta, "counts");
        const struct { const char *k; int64_t v; } add[] = {
            {"facts", t->facts}, {"added", t->added}, {"updated", t->updated},
            {"invalidated", t->invalidated}, {"noop", t->noop}, {"duplicates", t->duplicates},
            {"dropped", t->dropped}, {"llm_calls", t->u.calls},
            {"prompt_tokens", t->u.prompt_tokens}, {"completion_tokens", t->u.completion_tokens}};
        for (size_t i = 0; i < sizeof add / sizeof add[0]; i++)
            json_object_set_new(cn, add[i].k,
                                json_integer(json_integer_value(json_object_get(cn, add[i].k)) +
                                             add[i].v));
        char *mt = json_dumps(meta, JSON_COMPACT);
        remem_patch p;
        remem_patch_init(&p);
        p.fields = REMEM_SET_METADATA;
        p.metadata = mt;
        p.actor = ACTOR;
        rc = mt ? eng_update_in_txn(db, &x, ns, j->id, &p, NULL, now)
                : eng_fail(db, REMEM_ENOMEM, "out of memory");
        free(mt);
        if (!rc && done >= job_int(j, "chunks")) { /* off the queue */
            char mid[64];
            marker_id(ns, j->id, mid);
            rc = eng_purge_in_txn(db, &x, INGEST_QUEUE_NS, mid, now);
            if (rc == REMEM_ENOTFOUND) rc = REMEM_OK, eng_ok(db);
        }
        if (!rc) json_decref(j->meta), j->meta = meta;
        else json_decref(meta);
    }
    return eng_txn_end(db, &x, rc);
}

/* The vectors a chunk's writes need: its added facts, then UPDATE texts. */
static int chunk_embed(remem *db, const chunk *c, float **vecs, int *pending) {
    size_t nm = json_array_size(c->shown), n = 0;
    const char **texts = malloc((c->nf + nm + 1) * sizeof *texts);
    if (!texts) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->nf; i++)
        if (fact_action(c, i) == INGEST_ADD) texts[n++] = c->facts[i].text;
    for (size_t i = 0; c->have_plan && i < nm; i++)
        if (c->plan.mem[i] == INGEST_UPDATE) texts[n++] = c->plan.merged[i];
    int rc = embed_all(db, texts, n, vecs, pending);
    free(texts);
    return rc;
}

/* Run the job's chunks from where it stands; each its own transaction. */
static int run_job(remem *db, const char *ns, job *j, json_t *out_ids, tally *t) {
    int rc = REMEM_OK;
    size_t total = json_array_size(job_ids(j)), size = (size_t)job_int(j, "chunk");
    if (!size) size = 10;
    while (!rc && strcmp(job_status(j), "done")) {
        size_t ci = (size_t)job_int(j, "chunks_done"), from = ci * size;
        size_t to = from + size < total ? from + size : total;
        if (from >= total) break;
        ingest_msg *m = calloc(to - from, sizeof *m);
        store_row *rows = calloc(to - from, sizeof *rows);
        json_t **metas = calloc(to - from, sizeof *metas);
        chunk c = {0};
        float *vecs = NULL;
        int pending = 0;
        tally one = {0};
        rc = !m || !rows || !metas ? eng_fail(db, REMEM_ENOMEM, "out of memory")
                                   : chunk_messages(db, ns, j, from, to, m, rows, metas);
        if (!rc) rc = chunk_ask(db, ns, j, m, to - from, &c, &one);
        if (!rc) rc = chunk_embed(db, &c, &vecs, &pending);
        if (!rc) rc = chunk_write(db, ns, j, from, m, &c, vecs, pending, out_ids, &one);
        /* Calls made count even when the chunk failed: they were paid for. */
        t->u.calls += one.u.calls, t->u.prompt_tokens += one.u.prompt_tokens;
        t->u.completion_tokens += one.u.completion_tokens;
        if (!rc) {
            t->facts += one.facts, t->added += one.added, t->updated += one.updated;
            t->invalidated += one.invalidated, t->noop += one.noop, t->dropped += one.dropped;
            t->duplicates += one.duplicates, t->chunks_done++;
        }
        free(vecs);
        chunk_free(&c);
        for (size_t i = 0; rows && metas && i < to - from; i++)
            store_row_clear(&rows[i]), json_decref(metas[i]);
        free(rows);
        free(metas);
        free(m);
        if (rc && rc != REMEM_ENOMEM) {
            char why[768];
            snprintf(why, sizeof why, "%s", remem_errmsg(db));
            rc = eng_fail(db, rc,
                          "%s (chunk %zu of %lld; the messages are stored: ingest.resume with job "
                          "%s goes on from there)",
                          why, ci + 1, (long long)job_int(j, "chunks"), j->id);
        }
    }
    return rc;
}

/* ---- the answers ---- */

static json_t *answer(const char *ns, const char *method, const job *j, const tally *t,
                      json_t *ids, size_t nmsg, remem *db) {
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:O}", "ns", ns,
                          "method", method, "messages", (json_int_t)nmsg, "existing",
                          (json_int_t)t->existing, "skipped", (json_int_t)t->skipped, "added",
                          (json_int_t)t->added, "duplicates", (json_int_t)t->duplicates,
                          "updated", (json_int_t)t->updated, "invalidated",
                          (json_int_t)t->invalidated, "noop", (json_int_t)t->noop, "dropped",
                          (json_int_t)t->dropped, "ids", ids);
    if (!o) return NULL;
    char line[320];
    if (j && j->meta) {
        json_object_set_new(o, "job", json_string(j->id));
        json_object_set_new(o, "status", json_string(job_status(j)));
        json_object_set_new(o, "chunks", json_integer(job_int(j, "chunks")));
        json_object_set_new(o, "chunks_done", json_integer(job_int(j, "chunks_done")));
        json_object_set_new(o, "facts", json_integer(t->facts));
        json_t *l = eng_llm_answer(db, &t->u);
        json_object_set_new(l, "calls", json_integer(t->u.calls));
        json_object_set_new(o, "llm", l);
        snprintf(line, sizeof line,
                 "job %s %s: %lld of %lld chunks; %lld facts, %lld added, %lld updated, %lld "
                 "invalidated, %lld unchanged; %lld LLM calls",
                 j->id, job_status(j), (long long)job_int(j, "chunks_done"),
                 (long long)job_int(j, "chunks"), (long long)t->facts, (long long)t->added,
                 (long long)t->updated, (long long)t->invalidated, (long long)t->noop,
                 (long long)t->u.calls);
    } else if (!strcmp(method, "llm")) {
        json_object_set_new(o, "status", json_string("done"));
        snprintf(line, sizeof line,
                 "nothing new: %lld messages already stored and their jobs done, %lld system "
                 "messages skipped",
                 (long long)t->existing, (long long)t->skipped);
    } else {
        json_object_set_new(o, "status", json_string("done"));
        snprintf(line, sizeof line,
                 "%lld turns stored as observations, %lld folded into duplicates, %lld already "
                 "stored, %lld system messages skipped",
                 (long long)t->added, (long long)t->duplicates, (long long)t->existing,
                 (long long)t->skipped);
    }
    json_object_set_new(o, "text", json_string(line));
    return o;
}

static int session_time_of(remem *db, json_t *args, int64_t *out) {
    json_t *v = json_object_get(args, "session_time");
    *out = 0;
    if (json_is_integer(v)) return *out = json_integer_value(v), REMEM_OK;
    if (!json_is_string(v)) return REMEM_OK;
    char err[256];
    if (util_parse_time_field("session_time", json_string_value(v), out, err, sizeof err))
        return eng_fail(db, REMEM_EINVAL, "%s", err);
    return REMEM_OK;
}

int op_ingest(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL), *extract = op_str(args, "extract", "auto");
    int rc = eng_need_open(db);
    if (rc || (rc = eng_check_str(db, "ns", ns, 256))) return rc;
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    if (eng_memory_off(db, ns)) {
        *result = json_pack("{s:s, s:s, s:s, s:s}", "ns", ns, "outcome", "dropped", "memory",
                            "off", "text", "memory is off: nothing stored");
        return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    int use_llm = strcmp(extract, "none") && eng_llm(db);
    if (!strcmp(extract, "llm") && !eng_llm(db))
        return eng_fail(db, REMEM_EUNSUPPORTED,
                        "ingest: extract \"llm\" needs an LLM: set REMEM_LLM_URL (or extract "
                        "\"none\" to keep the turns verbatim)");
    int64_t st;
    if ((rc = session_time_of(db, args, &st))) return rc;
    msgs ms;
    rc = read_messages(db, args, st, &ms);
    tally t = {0};
    json_t *ids = json_array();
    job j = {0};
    if (!rc && !use_llm) rc = verbatim(db, ns, args, &ms, ids, &t);
    if (!rc && use_llm) rc = stage(db, ns, args, &ms, st, &j, &t);
    if (!rc && use_llm && j.meta && !op_bool(args, "background", 0))
        rc = run_job(db, ns, &j, ids, &t);
    if (!rc) {
        *result = answer(ns, use_llm ? "llm" : "verbatim", use_llm ? &j : NULL, &t, ids, ms.n, db);
        if (!*result) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        else if (!use_llm && strcmp(extract, "none"))
            json_object_set_new(*result, "fallback", json_string("verbatim"));
    }
    json_decref(ids);
    json_decref(j.meta);
    msgs_free(&ms);
    return rc;
}

int op_ingest_resume(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL), *id = op_str(args, "job", NULL);
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (!eng_llm(db))
        return eng_fail(db, REMEM_EUNSUPPORTED, "ingest.resume needs an LLM: set REMEM_LLM_URL");
    job j;
    if ((rc = job_load(db, ns, id, &j))) return rc;
    tally t = {0};
    json_t *ids = json_array();
    rc = run_job(db, ns, &j, ids, &t);
    if (!rc) {
        *result = answer(ns, "llm", &j, &t, ids, json_array_size(job_ids(&j)), db);
        if (!*result) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    json_decref(ids);
    json_decref(j.meta);
    return rc;
}

int op_ingest_status(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL), *id = op_str(args, "job", NULL);
    int rc = eng_need_open(db);
    if (rc) return rc;
    job j;
    if ((rc = job_load(db, ns, id, &j))) return rc;
    json_t *counts = json_object_get(j.meta, "counts");
    char line[256];
    snprintf(line, sizeof line, "job %s %s: %lld of %lld chunks, %lld messages", j.id,
             job_status(&j), (long long)job_int(&j, "chunks_done"), (long long)job_int(&j, "chunks"),
             (long long)json_array_size(job_ids(&j)));
    *result = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:O, s:s}", "ns", ns, "job", j.id,
                        "status", job_status(&j), "messages",
                        (json_int_t)json_array_size(job_ids(&j)), "chunks",
                        (json_int_t)job_int(&j, "chunks"), "chunks_done",
                        (json_int_t)job_int(&j, "chunks_done"), "counts", counts, "text", line);
    json_decref(j.meta);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

typedef struct pending_ctx {
    json_t *jobs;
    int64_t limit;
} pending_ctx;

static int pending_row(void *ctx, const store_row *r) {
    pending_ctx *p = ctx;
    json_t *meta = r->m.metadata ? json_loads(r->m.metadata, 0, NULL) : NULL;
    if (json_is_string(json_object_get(meta, "ns")) && json_is_string(json_object_get(meta, "job")) &&
        (int64_t)json_array_size(p->jobs) < p->limit)
        json_array_append(p->jobs, meta);
    json_decref(meta);
    return 0;
}

int op_ingest_pending(remem *db, json_t *args, json_t **result) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    pending_ctx p = {json_array(), op_int(args, "limit", 1000)};
    if ((rc = store_scan(db->st, INGEST_QUEUE_NS, 0, pending_row, &p))) {
        json_decref(p.jobs);
        return eng_store_fail(db, rc);
    }
    char line[96];
    snprintf(line, sizeof line, "%zu unfinished ingest jobs", json_array_size(p.jobs));
    *result = json_pack("{s:o, s:I, s:s}", "jobs", p.jobs, "count",
                        (json_int_t)json_array_size(p.jobs), "text", line);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

#define NS_PROP "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace\"}"
#define JOB_PROP                                                                                  \
    "\"job\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,\"description\":\"the job id " \
    "an ingest answered\"}"

const engine_op ingest_ops[] = {
    {{"ingest", "write",
      "Keep what matters from a conversation: with an LLM, the new messages are stored, then "
      "facts are extracted and reconciled with the stored memories (one extraction and at most "
      "one consolidation call per chunk of messages), each fact linked to its messages; without "
      "one (or extract none), each turn is stored verbatim as an observation. Messages already "
      "stored are skipped.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"messages\"],\"x-positional\":[\"messages\"],"
      "\"properties\":{" NS_PROP ","
      "\"messages\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":100000,\"description\":"
      "\"the conversation: chat messages {role, content, name?, created_at?, id?} (a JSON file "
      "of them, - for stdin, on the command line)\",\"items\":{\"type\":\"object\",\"x-file\":"
      "true,\"additionalProperties\":false,\"required\":[\"role\",\"content\"],\"properties\":{"
      "\"role\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64},"
      "\"content\":{\"type\":[\"string\",\"array\"]},"
      "\"name\":{\"type\":\"string\",\"maxLength\":256},"
      "\"created_at\":{\"type\":[\"string\",\"integer\"]},"
      "\"id\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":63}}}},"
      "\"session\":{\"type\":\"string\",\"maxLength\":256,\"description\":\"a session id, kept "
      "with each memory\"},"
      "\"session_time\":{\"type\":[\"string\",\"integer\"],\"description\":\"when the "
      "conversation happened (messages without created_at take it)\"},"
      "\"extract\":{\"type\":\"string\",\"enum\":[\"auto\",\"llm\",\"none\"],\"description\":"
      "\"auto: the LLM when one is configured, else verbatim turns; llm: fail without one; "
      "none: verbatim turns\"},"
      "\"chunk\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":200,\"description\":\"messages "
      "per extraction call (default 10)\"},"
      "\"background\":{\"type\":\"boolean\",\"description\":\"store the messages and the job, "
      "answer at once, and leave the extraction to ingest.resume (the server runs it)\"}}}",
      0, "memory"},
     op_ingest},
    {{"ingest.resume", "write",
      "Go on with an ingest job that stopped (an LLM failure, a crash): the chunks not yet "
      "written, each once.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"job\"],\"x-positional\":[\"job\"],"
      "\"properties\":{" NS_PROP "," JOB_PROP "}}",
      0, "memory"},
     op_ingest_resume},
    {{"ingest.status", "read", "Where an ingest job stands: chunks done, facts and what they did.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"job\"],\"x-positional\":[\"job\"],"
      "\"properties\":{" NS_PROP "," JOB_PROP "}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "memory"},
     op_ingest_status},
    {{"ingest.pending", "admin",
      "The ingest jobs not finished yet, in every namespace (what a restarted server resumes).",
      "{\"type\":\"object\",\"properties\":{\"limit\":{\"type\":\"integer\",\"minimum\":1,"
      "\"maximum\":100000,\"description\":\"at most this many (default 1000)\"}}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "admin"},
     op_ingest_pending},
};
const size_t ingest_ops_n = sizeof ingest_ops / sizeof ingest_ops[0];
