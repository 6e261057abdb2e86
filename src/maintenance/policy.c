/*
 * policy.c: seed 003's configuration keys for one namespace, from the
 * configuration file's policy (eng_policy, src/engine/policy.c; the keys
 * and their defaults are in docs/config.md). Without a file nothing is
 * pruned or archived behind the user's back: no count limit, no age
 * limit, no schedule. Every operation also takes each key as an
 * argument, which wins for that run.
 */
#include <stdio.h>
#include <string.h>

#include "maintenance/maintenance.h"

void maint_policy_get(remem *db, const char *ns, maint_policy *out) {
    memset(out, 0, sizeof *out);
    const cfg_policy *p = eng_policy(db, ns);
    out->max_episodes_per_project = p->max_episodes_per_project;
    out->similarity_threshold = p->similarity_threshold;
    snprintf(out->strategy, sizeof out->strategy, "%s",
             p->summarization_strategy ? p->summarization_strategy : "llm");
    out->prune_interval_hours = p->prune_interval_hours;
    out->retention_days = p->retention_days;
    out->feedback_weight_factor = p->feedback_weight_factor;
    if (p->archive_location && p->archive_location[0]) {
        snprintf(out->archive_location, sizeof out->archive_location, "%s", p->archive_location);
        return;
    }
    const char *path = db && db->st ? store_path(db->st) : "";
    if (!path[0] || !strcmp(path, ":memory:"))
        snprintf(out->archive_location, sizeof out->archive_location, "remem-archive");
    else if (strlen(path) + sizeof ".archive" <= sizeof out->archive_location) {
        memcpy(out->archive_location, path, strlen(path));
        memcpy(out->archive_location + strlen(path), ".archive", sizeof ".archive");
    }
}
