/*
 * error.c: status names and messages (from remem.h's one X-macro table) and
 * the per-handle error string every engine file reports through. It calls
 * nothing else of the engine, so any engine file may use it without a
 * circle (cache.c reports through it; handle.c closes caches).
 */
#include <stdarg.h>
#include <stdio.h>

#include "engine/engine.h"

/* ---- status codes ---- */

const char *remem_status_name(int rc) {
#define REMEM__NAME(name, val, msg) \
    if (rc == val) return #name;
    REMEM_STATUS_MAP(REMEM__NAME)
#undef REMEM__NAME
    return "REMEM_UNKNOWN";
}

const char *remem_strerror(int rc) {
#define REMEM__MSG(name, val, msg) \
    if (rc == val) return msg;
    REMEM_STATUS_MAP(REMEM__MSG)
#undef REMEM__MSG
    return "unknown error";
}

int eng_fail(remem *db, int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(db->err, sizeof db->err, fmt, ap);
    va_end(ap);
    return rc;
}

int eng_store_fail(remem *db, int rc) {
    snprintf(db->err, sizeof db->err, "%s", store_errmsg(db->st));
    return rc;
}

void eng_ok(remem *db) { db->err[0] = '\0'; }

const char *remem_errmsg(const remem *db) { return db ? db->err : "out of memory"; }
