/*
 * policy.c: seed 003's configuration keys for one namespace. The values
 * come from the configuration file's policy (src/config, cfg_policy's
 * maintenance block) once the engine holds one; until then, and for every
 * key a file leaves unset, they are the seed's own example values
 * (maxEpisodesPerProject 1000, similarityThreshold 0.7, strategy
 * heuristic, every 24 hours, 90 days, feedbackWeightFactor 1.5). Every
 * operation also takes each key as an argument, which wins.
 */
#include <stdio.h>
#include <string.h>

#include "maintenance/maintenance.h"

void maint_policy_get(remem *db, const char *ns, maint_policy *out) {
    (void)ns;
    memset(out, 0, sizeof *out);
    out->max_episodes_per_project = 1000;
    out->similarity_threshold = 0.7;
    snprintf(out->strategy, sizeof out->strategy, "heuristic");
    out->prune_interval_hours = 24;
    out->retention_days = 90;
    out->feedback_weight_factor = 1.5;
    const char *path = db && db->st ? store_path(db->st) : "";
    if (!path[0] || !strcmp(path, ":memory:"))
        snprintf(out->archive_location, sizeof out->archive_location, "remem-archive");
    else if (strlen(path) + sizeof ".archive" <= sizeof out->archive_location) {
        memcpy(out->archive_location, path, strlen(path));
        memcpy(out->archive_location + strlen(path), ".archive", sizeof ".archive");
    }
}
