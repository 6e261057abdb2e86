/*
 * hooks.h: the two places where the lifecycle's namespace policies act on
 * an ordinary add (src/engine/write.c) without the engine calling up into
 * src/lifecycle/: a check before the add (seed 001's "long-term memory is
 * reached only through short-term": long_requires_stm) and a step after
 * it commits (automatic reflection, seeds 001 and 004). The lifecycle
 * registers its functions when the library loads (a constructor beside
 * its operations table); write.c only calls through the pointers here.
 * Hence no file cycle: write.c -> hooks.c <- lifecycle, and the lifecycle
 * may call remem_add freely.
 *
 * In the shared library the hooks are always there. A program linked
 * statically against libremem.a gets them with the operations table
 * (any use of remem_call or remem_ops pulls it in, as the remem command
 * and every face do); one that never names an operation links no policy
 * hook, and its adds ignore long_requires_stm and automatic reflection.
 *
 * A hook that runs while another hook of the same thread is running is
 * skipped: a reflection stored by the after-add step never triggers a
 * reflection of its own.
 */
#ifndef REMEM_ENGINE_HOOKS_H
#define REMEM_ENGINE_HOOKS_H

#include "remem.h"

/* Before an add: REMEM_OK, or a status with the handle's message set
 * (the add then writes nothing). m has its defaults filled (kind, tier). */
typedef int (*eng_add_check_fn)(remem *db, const remem_memory *m);
/* After an add committed in ns. Failures are the hook's own business: the
 * add is durable and stays acknowledged. */
typedef void (*eng_after_add_fn)(remem *db, const char *ns);

void eng_hooks_set(eng_add_check_fn check, eng_after_add_fn after);
int eng_hooks_check_add(remem *db, const remem_memory *m);
void eng_hooks_after_add(remem *db, const char *ns);

#endif
