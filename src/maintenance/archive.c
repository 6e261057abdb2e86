/*
 * archive.c: memories leave the live store for archive files and come back
 * (seed 003's "archive older episodes to offline store (compressed JSON)",
 * with the restore the seed's peers lack). One archive call writes one
 * file (archive_file.h) under ARCHIVE/YYYY/MM/DD/ holding every field of
 * each memory, its vector and its history, then deletes the rows.
 *
 * Crash safety comes from the order of four steps, each durable before the
 * next, and from one rule to finish what a crash interrupts:
 *
 *   1. NAME.part is written and fsync'd (the rows are read under the
 *      store's write lock, so they cannot change meanwhile);
 *   2. it is renamed NAME.pending (folder fsync'd);
 *   3. the rows are deleted in one transaction (history row "archive");
 *   4. NAME.pending is renamed NAME (folder fsync'd).
 *
 * Every operation that writes under the folder holds its lock
 * (maint_archive_lock, an flock on ARCHIVE/.lock) from start to end, so
 * an unfinished file a holder finds was left by a writer that died.
 * maint_archive_recover, run under that lock before any archive
 * operation, removes .part files, removes a .pending file whose memories
 * are still live (step 3 never committed) and renames one whose memories
 * are gone (step 4 never ran). A memory "is live" when (ns, id) exists
 * with the archived created_at. Restore inserts the records in one
 * transaction and then rewrites the file without them, under a NAME.settle
 * marker that recovery also finishes; a record already live is skipped,
 * so a restore run twice changes nothing the second time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "maintenance/archive_file.h"
#include "maintenance/maintenance.h"

#define SUF_FINAL ".jsonl.zst"

/* ---- records ---- */

static void set_s(json_t *o, const char *k, const char *v) {
    json_object_set_new(o, k, v ? json_string(v) : json_null());
}

static int hist_row(void *ctx, const store_history_row *h) {
    json_t *o = json_pack("{s:I,s:I,s:s}", "seq", (json_int_t)h->seq, "at", (json_int_t)h->at, "op",
                          h->op ? h->op : "");
    set_s(o, "actor", h->actor);
    set_s(o, "before", h->before);
    set_s(o, "after", h->after);
    json_array_append_new(ctx, o);
    return 0;
}

/* Every field of a row, times in ms and metadata and links as their
 * stored text, so that a restore puts back exactly what was there. NULL
 * when any part is missing (out of memory, or the history unreadable: the
 * store's status in *rc), never a record without its vector or history. */
static json_t *record_json(store *st, const store_row *r, int *rc) {
    const remem_memory *m = &r->m;
    json_t *o = json_object();
    set_s(o, "id", m->id);
    set_s(o, "ns", m->ns);
    set_s(o, "kind", m->kind);
    set_s(o, "tier", m->tier);
    set_s(o, "text", m->text);
    json_object_set_new(o, "importance", json_real(m->importance));
    json_object_set_new(o, "created_at", json_integer(m->created_at));
    json_object_set_new(o, "updated_at", json_integer(m->updated_at));
    json_object_set_new(o, "accessed_at", json_integer(m->accessed_at));
    json_object_set_new(o, "access_count", json_integer(m->access_count));
    json_object_set_new(o, "expires_at", json_integer(m->expires_at));
    json_object_set_new(o, "invalidated_at", json_integer(m->invalidated_at));
    set_s(o, "superseded_by", m->superseded_by);
    json_object_set_new(o, "duplicate_count", json_integer(m->duplicate_count));
    set_s(o, "metadata", m->metadata);
    set_s(o, "links", m->links);
    if (r->vec && m->dim > 0) {
        /* float32 little-endian in base64: exact, and printing 384
         * floats as decimal text was most of an archive's cost. */
        set_s(o, "model", m->model);
        json_object_set_new(o, "dim", json_integer(m->dim));
        size_t nb = (size_t)m->dim * sizeof(float);
        unsigned char *b64 = malloc(4 * ((nb + 2) / 3) + 1);
        if (b64) {
            EVP_EncodeBlock(b64, (const unsigned char *)r->vec, (int)nb);
            json_object_set_new(o, "vector_f32le", json_string((char *)b64));
        }
        free(b64);
        if (!json_object_get(o, "vector_f32le")) *rc = REMEM_ENOMEM;
    }
    json_t *h = json_array();
    int hrc = store_history(st, m->ns, m->id, hist_row, h);
    json_object_set_new(o, "history", h);
    if (hrc) *rc = hrc;
    if (*rc) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static const char *jstr(json_t *o, const char *k) {
    return json_string_value(json_object_get(o, k));
}
static int64_t jint(json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

/* The memory of a record (strings point into o); *vec malloc'd or NULL. */
static int record_memory(json_t *o, remem_memory *m, float **vec) {
    memset(m, 0, sizeof *m);
    m->size = sizeof *m;
    *vec = NULL;
    m->id = jstr(o, "id");
    m->ns = jstr(o, "ns");
    m->kind = jstr(o, "kind");
    m->tier = jstr(o, "tier");
    m->text = jstr(o, "text");
    if (!m->id || !m->ns || !m->kind || !m->tier || !m->text) return -1;
    m->importance = json_number_value(json_object_get(o, "importance"));
    m->created_at = jint(o, "created_at");
    m->updated_at = jint(o, "updated_at");
    m->accessed_at = jint(o, "accessed_at");
    m->access_count = jint(o, "access_count");
    m->expires_at = jint(o, "expires_at");
    m->invalidated_at = jint(o, "invalidated_at");
    m->superseded_by = jstr(o, "superseded_by");
    m->duplicate_count = jint(o, "duplicate_count");
    m->metadata = jstr(o, "metadata");
    m->links = jstr(o, "links");
    const char *b64 = jstr(o, "vector_f32le");
    int dim = (int)jint(o, "dim");
    if (b64) {
        size_t len = strlen(b64), nb = (size_t)dim * sizeof(float);
        unsigned char *raw = malloc(len / 4 * 3 + 3);
        if (!raw) return -1;
        int got = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)len);
        /* EVP_DecodeBlock counts the padding's zero bytes too. */
        if (dim <= 0 || got < (int)nb || (size_t)got > nb + 2) {
            free(raw);
            return -1;
        }
        *vec = (float *)raw;
        m->vector = *vec;
        m->dim = dim;
        m->model = jstr(o, "model");
        if (!m->model) return -1;
    }
    return 0;
}

/* Is the archived record o live again (same ns, id and created_at)? */
static int record_live(remem *db, json_t *o, int *live) {
    store_row r;
    *live = 0;
    int rc = store_find(db->st, jstr(o, "ns"), jstr(o, "id"), 0, &r);
    if (rc == REMEM_ENOTFOUND) return REMEM_OK;
    if (rc) return eng_store_fail(db, rc);
    *live = r.m.created_at == jint(o, "created_at");
    store_row_clear(&r);
    return REMEM_OK;
}

/* ---- files ---- */

static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

typedef int (*file_fn)(remem *db, void *ctx, const char *path);

/* Is name n digits and nothing else (a YYYY, MM or DD folder)? */
static int all_digits(const char *name, size_t n) {
    if (strlen(name) != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (name[i] < '0' || name[i] > '9') return 0;
    return 1;
}

/* Each regular file of remem's own layout under dir, YYYY/MM/DD/FILE
 * (depth first, names in order). Every entry is checked with lstat: a
 * link, a device or a folder of any other name is never entered or
 * handed on, so the walk stays inside what remem wrote, whatever else
 * the folder holds. */
static int walk_level(remem *db, const char *dir, int depth, file_fn fn, void *ctx) {
    struct dirent **list = NULL;
    int n = scandir(dir, &list, NULL, alphasort);
    if (n < 0) return REMEM_OK; /* no archive yet */
    int rc = REMEM_OK;
    for (int i = 0; i < n; i++) {
        const char *e = list[i]->d_name;
        char p[2048];
        struct stat sb;
        int dir_level = depth < 3;
        if (!rc && e[0] != '.' && (!dir_level || all_digits(e, depth ? 2 : 4)) &&
            (size_t)snprintf(p, sizeof p, "%s/%s", dir, e) < sizeof p && !lstat(p, &sb)) {
            if (dir_level && S_ISDIR(sb.st_mode))
                rc = walk_level(db, p, depth + 1, fn, ctx);
            else if (!dir_level && S_ISREG(sb.st_mode))
                rc = fn(db, ctx, p);
        }
        free(list[i]);
    }
    free(list);
    return rc;
}

static int walk(remem *db, const char *dir, file_fn fn, void *ctx) {
    return walk_level(db, dir, 0, fn, ctx);
}

static void dir_of(const char *path, char *out, size_t cap) {
    snprintf(out, cap, "%s", path);
    char *s = strrchr(out, '/');
    if (s) *s = '\0';
}

/* Rewrite final (reading from src) without the records that are live;
 * remove src when it is not final. Under the write lock. */
static int settle(remem *db, const char *src, const char *final) {
    char err[512], tmp[2100], d[2048];
    arch_reader *r = arch_reader_open(src, err, sizeof err);
    if (!r) return eng_fail(db, REMEM_EIO, "%s", err);
    snprintf(tmp, sizeof tmp, "%s.rewrite.part", final);
    arch_writer *w = arch_writer_open(tmp, err, sizeof err);
    int rc = w ? REMEM_OK : eng_fail(db, REMEM_EIO, "%s", err);
    json_t *o;
    int got, first = 1;
    size_t kept = 0, dropped = 0;
    while (!rc && (got = arch_reader_next(r, &o, err, sizeof err)) == 1) {
        int live = 0;
        if (!first) rc = record_live(db, o, &live);
        if (!rc && !live) {
            if (arch_writer_put(w, o, err, sizeof err)) rc = eng_fail(db, REMEM_EIO, "%s", err);
            kept += !first;
        }
        dropped += live;
        first = 0;
        json_decref(o);
    }
    if (!rc && got < 0) rc = eng_fail(db, REMEM_ECORRUPT, "%s", err);
    arch_reader_close(r);
    if (rc) {
        arch_writer_abort(w);
        unlink(tmp);
        return rc;
    }
    if (arch_writer_finish(w, err, sizeof err)) {
        unlink(tmp);
        return eng_fail(db, REMEM_EIO, "%s", err);
    }
    if (!kept) {
        unlink(tmp);
        unlink(final);
    } else if (!dropped && strcmp(src, final)) {
        unlink(tmp);
        if (rename(src, final))
            return eng_fail(db, REMEM_EIO, "rename %s: %s", src, strerror(errno));
    } else if (rename(tmp, final)) {
        return eng_fail(db, REMEM_EIO, "rename %s: %s", tmp, strerror(errno));
    }
    if (strcmp(src, final)) unlink(src);
    dir_of(final, d, sizeof d);
    arch_fsync_dir(d);
    return REMEM_OK;
}

/* settle under the store's write lock, for this one file. */
static int settle_locked(remem *db, const char *src, const char *final) {
    int rc = store_begin(db->st);
    if (rc) return eng_store_fail(db, rc);
    rc = settle(db, src, final);
    store_rollback(db->st);
    return rc;
}

static int recover_one(remem *db, void *ctx, const char *p) {
    (void)ctx;
    char final[2048];
    if (ends_with(p, ".part")) {
        unlink(p);
        return REMEM_OK;
    }
    if (ends_with(p, ".pending")) {
        snprintf(final, sizeof final, "%.*s", (int)(strlen(p) - strlen(".pending")), p);
        return settle_locked(db, p, final);
    }
    if (ends_with(p, ".settle")) {
        snprintf(final, sizeof final, "%.*s", (int)(strlen(p) - strlen(".settle")), p);
        int rc = access(final, F_OK) ? REMEM_OK : settle_locked(db, final, final);
        if (!rc) unlink(p);
        return rc;
    }
    return REMEM_OK;
}

/* The id lists of prunes that died (prune.c names them .prune-ids-*.part
 * at the top of the folder): under the folder's lock no live prune has
 * one open. */
static void remove_dead_prune_lists(const char *dir) {
    struct dirent **list = NULL;
    int n = scandir(dir, &list, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const char *e = list[i]->d_name;
        char p[2048];
        struct stat sb;
        if (!strncmp(e, ".prune-ids-", 11) && ends_with(e, ".part") &&
            (size_t)snprintf(p, sizeof p, "%s/%s", dir, e) < sizeof p && !lstat(p, &sb) &&
            S_ISREG(sb.st_mode))
            unlink(p);
        free(list[i]);
    }
    free(list);
}

int maint_archive_recover(remem *db, const char *dir) {
    if (db->opt.read_only || access(dir, F_OK)) return REMEM_OK;
    remove_dead_prune_lists(dir);
    return walk(db, dir, recover_one, NULL);
}

int maint_archive_lock(remem *db, const char *dir, int create, int *fd) {
    char p[1100];
    *fd = -1;
    if (!create && access(dir, F_OK)) return REMEM_OK;
    if (create && arch_mkdirs(dir))
        return eng_fail(db, REMEM_EIO, "cannot create the archive folder %s: %s", dir,
                        strerror(errno));
    snprintf(p, sizeof p, "%s/.lock", dir);
    int f = open(p, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (f < 0) return eng_fail(db, REMEM_EIO, "cannot open %s: %s", p, strerror(errno));
    while (flock(f, LOCK_EX) && errno == EINTR) {}
    *fd = f;
    return REMEM_OK;
}

void maint_archive_unlock(int fd) {
    if (fd >= 0) close(fd); /* closing the only descriptor releases the flock */
}

/* ---- archiving ---- */

static void file_names(const char *dir, int64_t now, char *day, size_t dcap, char *base,
                       size_t bcap) {
    static atomic_uint counter;
    time_t t = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(day, dcap, "%s/%04d/%02d/%02d", dir, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    snprintf(base, bcap, "%s/%04d%02d%02dT%02d%02d%02d%03dZ-%d-%u%s", day, tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(now % 1000),
             (int)getpid(), atomic_fetch_add(&counter, 1), SUF_FINAL);
}

int maint_archive_rows(remem *db, const char *dir, const char *ns, const int64_t *rowids, size_t n,
                       int64_t now, const char *actor, json_t *ids) {
    return maint_archive_rows_adding(db, dir, ns, rowids, n, now, actor, ids, NULL, NULL, NULL, 0);
}

int maint_archive_rows_adding(remem *db, const char *dir, const char *ns, const int64_t *rowids,
                              size_t n, int64_t now, const char *actor, json_t *ids,
                              const remem_memory *add, const float *add_vec, char *id_out,
                              size_t id_cap) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    if (!n) return REMEM_OK;
    char day[1200], final[1400], part[1500], pending[1500], err[512];
    file_names(dir, now, day, sizeof day, final, sizeof final);
    snprintf(part, sizeof part, "%s.part", final);
    snprintf(pending, sizeof pending, "%s.pending", final);
    if (arch_mkdirs(day))
        return eng_fail(db, REMEM_EIO, "cannot create the archive folder %s: %s", day,
                        strerror(errno));
    if ((rc = store_begin(db->st))) return eng_store_fail(db, rc);
    txn x = {0};
    arch_writer *w = arch_writer_open(part, err, sizeof err);
    if (!w) rc = eng_fail(db, REMEM_EIO, "%s", err);
    json_t *hdr = json_pack("{s:i,s:s,s:I,s:s}", "remem_archive", 1, "ns", ns, "archived_at",
                            (json_int_t)now, "actor", actor ? actor : "archive");
    if (!rc && arch_writer_put(w, hdr, err, sizeof err)) rc = eng_fail(db, REMEM_EIO, "%s", err);
    json_decref(hdr);
    for (size_t i = 0; !rc && i < n; i++) {
        store_row r;
        if ((rc = store_get_rowid(db->st, rowids[i], 1, &r))) {
            eng_store_fail(db, rc);
            break;
        }
        if (strcmp(r.m.ns, ns)) {
            rc = eng_fail(db, REMEM_EINVAL, "archive: %s is not in namespace %s", r.m.id, ns);
        } else {
            json_t *o = record_json(db->st, &r, &rc);
            if (rc == REMEM_ENOMEM)
                eng_fail(db, rc, "out of memory");
            else if (rc)
                eng_store_fail(db, rc);
            else if (arch_writer_put(w, o, err, sizeof err))
                rc = eng_fail(db, REMEM_EIO, "%s", err);
            json_decref(o);
        }
        store_row_clear(&r);
    }
    if (!rc) {
        int f = arch_writer_finish(w, err, sizeof err);
        w = NULL;
        if (f) rc = eng_fail(db, REMEM_EIO, "%s", err);
    }
    if (!rc && (rename(part, pending) || arch_fsync_dir(day)))
        rc = eng_fail(db, REMEM_EIO, "archive: rename %s: %s", part, strerror(errno));
    const char *rel = final + strlen(dir) + 1;
    for (size_t i = 0; !rc && i < n; i++) {
        store_row r;
        if ((rc = store_get_rowid(db->st, rowids[i], 0, &r))) {
            eng_store_fail(db, rc);
            break;
        }
        char *before = eng_memory_text(&r.m);
        json_t *a = json_pack("{s:s}", "archived_to", rel);
        char *after = json_dumps(a, JSON_COMPACT);
        json_decref(a);
        if (!before || !after)
            rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        else if ((rc = store_delete(db->st, rowids[i])) ||
                 (rc = store_history_add(db->st, ns, r.m.id, now, "archive", actor, before, after)))
            eng_store_fail(db, rc);
        if (!rc) rc = eng_txn_row(db, &x, ns, rowids[i]);
        if (!rc && ids) json_array_append_new(ids, json_string(r.m.id));
        free(before);
        free(after);
        store_row_clear(&r);
    }
    if (!rc && add) rc = eng_add_in_txn(db, &x, add, add_vec, now, id_out, id_cap, NULL);
    arch_writer_abort(w);
    rc = eng_txn_end(db, &x, rc);
    if (rc) {
        /* Rolled back: the rows are live, so the file must not stay. */
        unlink(part);
        unlink(pending);
        return rc;
    }
    if (rename(pending, final) == 0) arch_fsync_dir(day);
    return REMEM_OK;
}

/* ---- restore ---- */

typedef struct restore_ctx {
    const char *ns, *id;
    int64_t since, until; /* on archived_at; 0: open */
    int dry_run;
    json_t *ids;
    int64_t restored, already, files;
} restore_ctx;

/* Put back the matching records of one file, in one transaction. */
static int restore_records(remem *db, restore_ctx *c, const char *path, int *touched) {
    char err[512];
    arch_reader *r = arch_reader_open(path, err, sizeof err);
    if (!r) return eng_fail(db, REMEM_EIO, "%s", err);
    json_t *o;
    int got = arch_reader_next(r, &o, err, sizeof err), rc = REMEM_OK;
    *touched = 0;
    if (got == 1) {
        int64_t at = jint(o, "archived_at");
        const char *ns = jstr(o, "ns");
        int skip =
            !ns || strcmp(ns, c->ns) || (c->since && at < c->since) || (c->until && at > c->until);
        json_decref(o);
        if (skip) got = 0;
    }
    if (got == 1 && !c->dry_run && (rc = store_begin(db->st))) {
        arch_reader_close(r);
        return eng_store_fail(db, rc);
    }
    int began = got == 1 && !c->dry_run;
    txn x = {0};
    int64_t now = util_now_ms();
    while (!rc && got == 1 && (got = arch_reader_next(r, &o, err, sizeof err)) == 1) {
        if (c->id && strcmp(c->id, jstr(o, "id") ? jstr(o, "id") : "")) {
            json_decref(o);
            continue;
        }
        int live = 0;
        remem_memory m;
        float *vec = NULL;
        if (record_memory(o, &m, &vec)) {
            rc = eng_fail(db, REMEM_ECORRUPT, "archive %s: a record lacks a field", path);
        } else if (!(rc = record_live(db, o, &live)) && live) {
            c->already++;
        } else if (!rc && c->dry_run) {
            c->restored++;
            json_array_append_new(c->ids, json_string(m.id));
        } else if (!rc) {
            store_row old;
            int f = store_find(db->st, m.ns, m.id, 0, &old);
            if (f == REMEM_OK) {
                store_row_clear(&old);
                rc = eng_fail(db, REMEM_EINVAL,
                              "restore: %s/%s exists with other content (another memory took "
                              "its id); forget it first",
                              m.ns, m.id);
            } else if (f != REMEM_ENOTFOUND) {
                rc = eng_store_fail(db, f);
            }
            char model[128] = "";
            int dim = 0;
            int64_t rows = 0;
            if (!rc && m.vector) {
                f = store_ns_info(db->st, m.ns, model, sizeof model, &dim, NULL, &rows);
                if (f && f != REMEM_ENOTFOUND)
                    rc = eng_store_fail(db, f);
                else if (model[0] && rows > 0 && (strcmp(model, m.model) || dim != m.dim))
                    rc = eng_fail(db, REMEM_EMODEL,
                                  "restore: %s/%s holds a vector of model %s; the namespace "
                                  "now holds %s: reindex the namespace back first",
                                  m.ns, m.id, m.model, model);
                else if (!model[0] || rows == 0 || strcmp(model, m.model))
                    rc = store_ns_set_model(db->st, m.ns, m.model, m.dim),
                    rc = rc ? eng_store_fail(db, rc) : 0;
            }
            char *norm = rc ? NULL : util_normalize_text(m.text);
            int64_t rowid = 0;
            if (!rc && !norm) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
            if (!rc &&
                (rc = store_insert(db->st, &m, norm, util_hash64(norm, strlen(norm)), &rowid)))
                eng_store_fail(db, rc);
            if (!rc) {
                char *after = eng_memory_text(&m);
                if (!after)
                    rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
                else if ((rc = store_history_add(db->st, m.ns, m.id, now, "restore", "restore",
                                                 NULL, after)))
                    eng_store_fail(db, rc);
                free(after);
            }
            if (!rc) rc = eng_txn_row(db, &x, m.ns, rowid);
            if (!rc) {
                c->restored++;
                json_array_append_new(c->ids, json_string(m.id));
                *touched = 1;
            }
            free(norm);
        }
        free(vec);
        json_decref(o);
    }
    if (!rc && got < 0) rc = eng_fail(db, REMEM_ECORRUPT, "%s", err);
    arch_reader_close(r);
    if (began) rc = eng_txn_end(db, &x, rc);
    return rc;
}

static int restore_file(remem *db, void *ctx, const char *path) {
    restore_ctx *c = ctx;
    if (!ends_with(path, SUF_FINAL)) return REMEM_OK;
    /* The marker first: if the process dies after the insert commits,
     * recovery still takes the restored records out of the file. */
    char marker[2100], d[2048];
    snprintf(marker, sizeof marker, "%s.settle", path);
    FILE *f = c->dry_run ? NULL : fopen(marker, "w");
    if (!c->dry_run) {
        if (!f) return eng_fail(db, REMEM_EIO, "cannot create %s: %s", marker, strerror(errno));
        fclose(f);
        dir_of(path, d, sizeof d);
        arch_fsync_dir(d);
    }
    int touched = 0;
    int rc = restore_records(db, c, path, &touched);
    c->files += touched;
    if (!rc && touched) {
        if ((rc = store_begin(db->st))) return eng_store_fail(db, rc);
        rc = settle(db, path, path);
        store_rollback(db->st);
    }
    if (!rc && !c->dry_run) unlink(marker);
    return rc;
}

static int archive_dir(remem *db, json_t *args, char *out, size_t cap) {
    maint_policy pol;
    maint_policy_get(db, op_str(args, "ns", NULL), &pol);
    snprintf(out, cap, "%s", op_str(args, "archive_location", pol.archive_location));
    return REMEM_OK;
}

static int parse_time_arg(remem *db, json_t *args, const char *k, int64_t *ms) {
    const char *s = op_str(args, k, NULL);
    char why[128];
    *ms = 0;
    if (s && util_parse_time_why(s, ms, why, sizeof why))
        return eng_fail(db, REMEM_EINVAL, "%s: \"%s\" is not a valid time (%s)", k, s, why);
    return REMEM_OK;
}

static int op_restore(remem *db, json_t *args, json_t **result) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    restore_ctx c = {.ns = op_str(args, "ns", NULL),
                     .id = op_str(args, "id", NULL),
                     .dry_run = op_bool(args, "dry_run", 0)};
    if ((rc = parse_time_arg(db, args, "since", &c.since)) ||
        (rc = parse_time_arg(db, args, "until", &c.until)))
        return rc;
    if (!c.id && !c.since && !c.until && !op_bool(args, "all", 0))
        return eng_fail(db, REMEM_EINVAL,
                        "restore: name what to bring back: --id, --since/--until, or --all");
    if (!c.dry_run && db->opt.read_only)
        return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    char dir[1024];
    int lk;
    archive_dir(db, args, dir, sizeof dir);
    if ((rc = maint_archive_lock(db, dir, 0, &lk))) return rc;
    c.ids = json_array();
    if (!(rc = maint_archive_recover(db, dir))) rc = walk(db, dir, restore_file, &c);
    maint_archive_unlock(lk);
    if (!rc && c.id && !c.restored && !c.already)
        rc = eng_fail(db, REMEM_ENOTFOUND, "restore: %s is in no archive of %s under %s", c.id,
                      c.ns, dir);
    if (rc) {
        json_decref(c.ids);
        return rc;
    }
    char text[200];
    snprintf(text, sizeof text, "%s%lld restored, %lld already live", c.dry_run ? "dry run: " : "",
             (long long)c.restored, (long long)c.already);
    *result = json_pack("{s:s,s:I,s:I,s:o,s:b,s:s}", "ns", c.ns, "restored", (json_int_t)c.restored,
                        "alreadyLive", (json_int_t)c.already, "ids", c.ids, "dryRun", c.dry_run,
                        "text", text);
    return REMEM_OK;
}

/* ---- archive and archive.list ---- */

typedef struct sel_ctx {
    int64_t *rowids;
    size_t n, cap;
    json_t *want; /* ids asked for (object used as a set), or NULL */
    int64_t before;
} sel_ctx;

static int select_row(void *ctx, const store_row *r) {
    sel_ctx *s = ctx;
    if (s->want && !json_object_get(s->want, r->m.id)) return 0;
    if (s->before && r->m.created_at >= s->before) return 0;
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 256;
        int64_t *p = realloc(s->rowids, nc * sizeof *p);
        if (!p) return REMEM_ENOMEM;
        s->rowids = p;
        s->cap = nc;
    }
    s->rowids[s->n++] = r->rowid;
    return 0;
}

static int op_archive(remem *db, json_t *args, json_t **result) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    const char *ns = op_str(args, "ns", NULL);
    sel_ctx s = {0};
    json_t *ids = json_object_get(args, "ids");
    if ((rc = parse_time_arg(db, args, "before", &s.before))) return rc;
    if (!ids && !s.before)
        return eng_fail(db, REMEM_EINVAL, "archive: name what to archive: --ids or --before");
    if (ids) {
        /* without the set, select_row would take every row: refuse instead */
        s.want = json_object();
        size_t i;
        json_t *v;
        json_array_foreach(ids, i, v) {
            if (s.want && json_object_set(s.want, json_string_value(v), json_true())) break;
        }
        if (!s.want || json_object_size(s.want) < json_array_size(ids)) {
            json_decref(s.want);
            return eng_fail(db, REMEM_ENOMEM, "out of memory");
        }
    }
    char dir[1024];
    int lk;
    archive_dir(db, args, dir, sizeof dir);
    if ((rc = maint_archive_lock(db, dir, !db->opt.read_only, &lk)) ||
        (rc = maint_archive_recover(db, dir))) {
        maint_archive_unlock(lk);
        json_decref(s.want);
        return rc;
    }
    rc = store_scan(db->st, ns, 0, select_row, &s);
    if (rc) rc = rc == REMEM_ENOMEM ? eng_fail(db, rc, "out of memory") : eng_store_fail(db, rc);
    json_t *done = json_array();
    size_t batch = (size_t)op_int(args, "batch", 1000);
    for (size_t i = 0; !rc && i < s.n; i += batch)
        rc = maint_archive_rows(db, dir, ns, s.rowids + i, s.n - i < batch ? s.n - i : batch,
                                util_now_ms(), "archive", done);
    maint_archive_unlock(lk);
    free(s.rowids);
    json_decref(s.want);
    if (rc) {
        json_decref(done);
        return rc;
    }
    char text[1200];
    snprintf(text, sizeof text, "%zu archived under %s", json_array_size(done), dir);
    *result = json_pack("{s:s,s:o,s:s,s:s}", "ns", ns, "archived", done, "archiveLocation", dir,
                        "text", text);
    return REMEM_OK;
}

typedef struct list_ctx {
    const char *ns;
    json_t *files, *ids;
    int with_ids;
} list_ctx;

static int list_file(remem *db, void *ctx, const char *path) {
    list_ctx *c = ctx;
    if (!ends_with(path, SUF_FINAL)) return REMEM_OK;
    char err[512];
    arch_reader *r = arch_reader_open(path, err, sizeof err);
    if (!r) return eng_fail(db, REMEM_EIO, "%s", err);
    json_t *o, *hdr = NULL;
    int got, n = 0;
    while ((got = arch_reader_next(r, &o, err, sizeof err)) == 1) {
        if (!hdr) {
            hdr = o;
            if (c->ns && strcmp(c->ns, jstr(hdr, "ns") ? jstr(hdr, "ns") : "")) break;
            continue;
        }
        if (c->with_ids) json_array_append(c->ids, json_object_get(o, "id"));
        n++;
        json_decref(o);
    }
    arch_reader_close(r);
    int skip = hdr && c->ns && strcmp(c->ns, jstr(hdr, "ns") ? jstr(hdr, "ns") : "");
    if (!skip) {
        json_t *f = json_pack("{s:s,s:i,s:b}", "path", path, "records", n, "ok", got == 0);
        if (hdr) json_object_set(f, "ns", json_object_get(hdr, "ns"));
        if (hdr) json_object_set(f, "archived_at", json_object_get(hdr, "archived_at"));
        if (got < 0) json_object_set_new(f, "error", json_string(err));
        json_array_append_new(c->files, f);
    }
    json_decref(hdr);
    return REMEM_OK;
}

static int op_archive_list(remem *db, json_t *args, json_t **result) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    char dir[1024];
    int lk;
    archive_dir(db, args, dir, sizeof dir);
    /* A folder this process may not write is listed as it is, unlocked:
     * recovery could not change it anyway. */
    if (maint_archive_lock(db, dir, 0, &lk)) eng_ok(db);
    if (lk >= 0 && (rc = maint_archive_recover(db, dir))) {
        maint_archive_unlock(lk);
        return rc;
    }
    list_ctx c = {op_str(args, "ns", NULL), json_array(), json_array(), op_bool(args, "ids", 0)};
    rc = walk(db, dir, list_file, &c);
    maint_archive_unlock(lk);
    if (rc) {
        json_decref(c.files);
        json_decref(c.ids);
        return rc;
    }
    *result = json_pack("{s:s,s:o}", "archiveLocation", dir, "files", c.files);
    if (c.with_ids)
        json_object_set_new(*result, "ids", c.ids);
    else
        json_decref(c.ids);
    return REMEM_OK;
}

#define S_NS "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace\"}"
#define S_LOC                                                                     \
    "\"archive_location\":{\"type\":\"string\",\"minLength\":1,\"x-local\":true," \
    "\"description\":\"archive folder "                                           \
    "(default: archiveLocation of the config, else the store's path + .archive)\"}"

const engine_op archive_ops[] = {
    {{"archive", "write",
      "Move memories out of the live store into a zstd JSONL archive file (YYYY/MM/DD), with "
      "their vectors and history; restore brings them back.",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"properties\":{" S_NS "," S_LOC ","
      "\"ids\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"the ids to "
      "archive\"},"
      "\"before\":{\"type\":\"string\",\"description\":\"archive memories created before this "
      "time\"},"
      "\"batch\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100000,\"description\":"
      "\"memories per archive file and transaction (default 1000)\"}}}", REMEM_OP_DESTRUCTIVE, "admin"},
     op_archive},
    {{"restore", "write",
      "Bring archived memories back into the live store exactly as they were (idempotent).",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"properties\":{" S_NS "," S_LOC ","
      "\"id\":{\"type\":\"string\",\"minLength\":1,\"description\":\"one memory's id\"},"
      "\"since\":{\"type\":\"string\",\"description\":\"archived at or after this time\"},"
      "\"until\":{\"type\":\"string\",\"description\":\"archived at or before this time\"},"
      "\"all\":{\"type\":\"boolean\",\"description\":\"everything archived from the "
      "namespace\"},"
      "\"dry_run\":{\"type\":\"boolean\",\"description\":\"say what would come back, change "
      "nothing\"}}}", REMEM_OP_IDEMPOTENT, "admin"},
     op_restore},
    {{"archive.list", "read",
      "The archive files (of a namespace), with their record counts and checksum state.",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"properties\":{" S_NS "," S_LOC ","
      "\"ids\":{\"type\":\"boolean\",\"description\":\"list the archived ids too\"}}}", REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "admin"},
     op_archive_list},
};
const size_t archive_ops_n = sizeof archive_ops / sizeof archive_ops[0];
