/*
 * hooks.c: the add path's two hook pointers (see hooks.h), and the
 * per-thread guard that keeps a hook's own writes from running the hooks
 * again. Calls nothing of remem: it sits below write.c and the lifecycle.
 */
#include <string.h>

#include "engine/hooks.h"

static eng_add_check_fn g_check;
static eng_after_add_fn g_after;
static _Thread_local int g_depth;

void eng_hooks_set(eng_add_check_fn check, eng_after_add_fn after) {
    g_check = check;
    g_after = after;
}

int eng_hooks_check_add(remem *db, const remem_memory *m) {
    if (!g_check || g_depth) return REMEM_OK;
    g_depth++;
    int rc = g_check(db, m);
    g_depth--;
    return rc;
}

void eng_hooks_after_add(remem *db, const char *ns) {
    if (!g_after || g_depth || !ns) return;
    g_depth++;
    g_after(db, ns);
    g_depth--;
}
