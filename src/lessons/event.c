/*
 * event.c: "lesson.event", one ErrorEvent. The agent reports a runtime
 * failure (seed 002's four generic channels, never a domain's own error
 * classes); remem normalises the text, fingerprints it, tags it with the
 * system tags it can trust (tool, channel, domain: facts of the call, not
 * a model's opinion) and keeps it as a memory of kind "error_event". The
 * answer also says whether the run should stop and reflect before its
 * next tool call (seed 002's trigger: a fingerprint repeated once within
 * the run, or three hard failures in it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lessons/lessons.h"

/* The run's recurrence, counted as the namespace's events are read
 * (nothing is copied out). */
typedef struct recur {
    const char *run, *fp;
    int repeats, hard;
} recur;

static int count_in_run(const json_t *meta, void *ctx) {
    recur *c = ctx;
    const char *r = lsn_s(meta, "run"), *f = lsn_s(meta, "fingerprint");
    const char *ch = lsn_s(meta, "channel");
    if (!r || strcmp(r, c->run)) return 0;
    c->repeats += f && !strcmp(f, c->fp);
    c->hard += ch && !strcmp(ch, "hard_failure");
    return 0;
}

int lsn_op_event(remem *db, json_t *args, json_t **result) {
    const char *ns = lsn_s(args, "ns"), *domain = lsn_s(args, "domain");
    const char *tool = lsn_s(args, "tool"), *channel = lsn_s(args, "channel");
    const char *error = lsn_s(args, "error"), *run = lsn_s(args, "run");
    if (!*domain || !*tool) return eng_fail(db, REMEM_EINVAL, "domain and tool must not be empty");
    char *norm = lsn_normalise(error);
    if (!norm) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    char fp[20];
    lsn_fingerprint_of(norm, fp);

    /* Recurrence within the run, from the events already kept. */
    recur rec = {.run = run, .fp = fp, .hard = !strcmp(channel, "hard_failure")};
    lsn_list ev = {0};
    lsn_list_opts o = {.keep = count_in_run, .ctx = &rec};
    int rc = run ? lsn_list_where(db, ns, "error_event", &o, &ev) : REMEM_OK;
    lsn_list_free(&ev);
    if (rc) {
        free(norm);
        return rc;
    }
    int repeats = rec.repeats, hard = rec.hard;

    char id[40], tag[3][300];
    lsn_new_id("evt_", id);
    snprintf(tag[0], sizeof tag[0], "tool:%s", tool);
    snprintf(tag[1], sizeof tag[1], "channel:%s", channel);
    snprintf(tag[2], sizeof tag[2], "domain:%s", domain);
    json_t *tags = json_pack("[sss]", tag[0], tag[1], tag[2]);
    json_t *meta = json_pack("{ss ss ss ss ss ss ss sO}", "event_id", id, "domain_key", domain,
                             "tool", tool, "channel", channel, "error", error, "normalised", norm,
                             "fingerprint", fp, "tags", tags);
    const char *opt[] = {"task", "session", "run"};
    for (size_t i = 0; i < 3; i++)
        if (lsn_str(args, opt[i], NULL))
            json_object_set_new(meta, opt[i], json_string(lsn_str(args, opt[i], NULL)));
    if (json_object_get(args, "step"))
        json_object_set_new(meta, "step", json_integer(lsn_i(args, "step", 0)));
    int reflect = repeats >= 1 || hard >= 3;
    json_object_set_new(meta, "recurrence", json_integer(repeats));

    lsn_batch b = {0};
    rc = lsn_batch_put(&b, ns, id, "error_event", error, meta);
    if (rc) {
        lsn_batch_free(&b);
    } else {
        rc = lsn_batch_commit(db, &b);
    }
    if (rc) {
        free(norm);
        json_decref(meta);
        json_decref(tags);
        return rc == REMEM_ENOMEM && !remem_errmsg(db)[0] ? eng_fail(db, rc, "out of memory") : rc;
    }
    char text[1024];
    snprintf(text, sizeof text, "%s  %s %s %s%s", fp, tag[0], tag[1], tag[2],
             reflect ? "  (reflect before the next tool call)" : "");
    *result = json_pack("{ss ss ss sO si sb ss}", "id", id, "fingerprint", fp, "normalised", norm,
                        "tags", tags, "recurrence", repeats, "reflect", reflect, "text", text);
    free(norm);
    json_decref(meta);
    json_decref(tags);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}
