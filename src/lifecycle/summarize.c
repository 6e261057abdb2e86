/*
 * summarize.c: seed 001's summarise-and-forget. The least important
 * long-term memories (lowest importance first, then oldest) become one
 * memory of kind "summary" in long-term memory, linked to its sources, and
 * the sources move to tier "archived": out of recall, kept, restorable
 * with `unarchive`. One transaction: the summary never exists without its
 * sources archived, nor the sources archived without their summary.
 *
 * The summary is the LLM's when one is configured; otherwise the named
 * fallback "extractive" (extractive_summary: the most central sentences of
 * the sources, by their vectors, without repetition).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/answers.h"
#include "lifecycle/extractive.h"
#include "lifecycle/lifecycle.h"

static int keep_long(const remem_memory *m, void *ctx) {
    (void)ctx;
    return m->tier && !strcmp(m->tier, "long");
}

static int least_important_first(const void *a, const void *b) {
    const lc_mem *x = a, *y = b;
    if (x->importance != y->importance) return x->importance < y->importance ? -1 : 1;
    if (x->created_at != y->created_at) return x->created_at < y->created_at ? -1 : 1;
    return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
}

static int llm_summary(remem *db, llm_usage *u, const char *const *texts, size_t n, char **out) {
    strbuf b;
    sb_init(&b);
    sb_puts(&b, "Summarise the following memories of an agent in a few sentences, keeping every "
                "fact that matters for its future decisions:\n");
    for (size_t i = 0; i < n; i++) sb_printf(&b, "%zu. %s\n", i + 1, texts[i]);
    sb_puts(&b, "\nAnswer in JSON: {\"summary\": \"...\"}");
    char *prompt = sb_take(&b), *answer = NULL, err[512];
    if (!prompt) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    int rc = lc_chat(db, "summarize",
                     "You condense an agent's memories. Answer only with the JSON asked for.",
                     prompt, 1, &answer, u);
    free(prompt);
    if (rc) return rc;
    if (!(*out = answer_summary(answer, err, sizeof err)))
        rc = eng_fail(db, REMEM_ELLM,
                      "summarize: the model's answer is not a summary: %s: nothing written", err);
    free(answer);
    return rc;
}

int lc_summarise_texts(remem *db, const char *const *texts, size_t n, int want_llm, char **out,
                       char *method, size_t cap, char *why, size_t whycap) {
    why[0] = '\0';
    if (want_llm && lc_llm(db)) {
        llm_usage u = {0};
        int rc = llm_summary(db, &u, texts, n, out);
        if (!rc) {
            snprintf(method, cap, "llm");
            return REMEM_OK;
        }
        /* The model failed: the cluster still gets a summary, quoted from
         * its own sentences, and the caller reports why. */
        snprintf(why, whycap, "%s", remem_errmsg(db));
        eng_ok(db);
    } else if (want_llm) {
        snprintf(why, whycap, "no LLM configured");
    }
    snprintf(method, cap, "extractive");
    return extractive_summary(db, texts, n, 3, out);
}

/* One try: read the long-term memories, summarise the least important,
 * archive them with the summary in one transaction that first checks
 * each is still long-term (REMEM_EBUSY when another call took one). */
static int summarize_once(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    size_t count = (size_t)op_int(args, "count", 10);
    size_t sentences = (size_t)op_int(args, "sentences", 3);
    const char *method = op_str(args, "method", "auto");
    lc_list l;
    int rc = lc_snapshot(db, ns, keep_long, NULL, 0, &l);
    if (rc) return rc;
    llm *lm = NULL;
    llm_usage u = {0};
    char *summary = NULL, *links = NULL, *meta = NULL;
    const char **texts = NULL, **ids = NULL;
    lc_move *mv = NULL;
    if (l.n < 2) {
        rc = eng_fail(db, REMEM_EINVAL,
                      "summarize: %s has %zu long-term memor%s: at least 2 are needed", ns, l.n,
                      l.n == 1 ? "y" : "ies");
        goto done;
    }
    if (strcmp(method, "extractive")) lm = lc_llm(db);
    if (!strcmp(method, "llm") && !lm) {
        rc = eng_fail(db, REMEM_EUNSUPPORTED,
                      "summarize: method \"llm\" needs an LLM: set REMEM_LLM_URL");
        goto done;
    }
    if (l.n > 1) qsort(l.v, l.n, sizeof *l.v, least_important_first);
    size_t n = count < l.n ? count : l.n;
    texts = calloc(n, sizeof *texts);
    ids = calloc(n, sizeof *ids);
    mv = calloc(n, sizeof *mv);
    if (!texts || !ids || !mv) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    double imp = 0;
    for (size_t i = 0; i < n; i++) {
        texts[i] = l.v[i].text;
        ids[i] = l.v[i].id;
        mv[i] = (lc_move){l.v[i].id, "archived", "long"};
        if (l.v[i].importance > imp) imp = l.v[i].importance;
    }
    rc = lm ? llm_summary(db, &u, texts, n, &summary)
            : extractive_summary(db, texts, n, sentences, &summary);
    if (rc) goto done;
    links = lc_ids_json(ids, n);
    meta = lc_json_text(
        json_pack("{s:s, s:I}", "method", lm ? "llm" : "extractive", "sources", (json_int_t)n));
    if (!links || !meta) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    remem_memory s;
    remem_memory_init(&s);
    s.ns = ns;
    s.kind = "summary";
    s.tier = "long";
    s.text = summary;
    s.importance = imp;
    s.metadata = meta;
    s.links = links;
    char id[1][32];
    if ((rc = lc_write(db, ns, &s, 1, id, mv, n, "summarize"))) goto done;
    char text[256];
    snprintf(text, sizeof text,
             "%s: %zu long-term memories summarised into %s (%s); sources archived", ns, n, id[0],
             lm ? "llm" : "extractive");
    *result = json_pack("{s:s, s:s, s:s, s:o, s:I, s:I, s:s, s:s}", "ns", ns, "id", id[0],
                        "summary", summary, "sources", json_loads(links, 0, NULL), "archived",
                        (json_int_t)n, "long_before", (json_int_t)l.n, "method",
                        lm ? "llm" : "extractive", "text", text);
    if (*result) {
        json_object_set_new(*result, "long_after", json_integer((json_int_t)(l.n - n + 1)));
        if (lm)
            json_object_set_new(*result, "llm", lc_llm_json(lm, &u));
        else
            json_object_set_new(*result, "fallback", json_string("extractive"));
    } else
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
done:
    free(summary);
    free(links);
    free(meta);
    free(texts);
    free(ids);
    free(mv);
    lc_list_free(&l);
    return rc;
}

/* Concurrent calls read the same long-term memories and would pick the
 * same sources; the write claims them (each must still be long-term at
 * commit), and the call that loses reads again and summarises what is
 * left, so no memory is summarised twice. */
#define SUMMARIZE_TRIES 5

int lc_op_summarize(remem *db, json_t *args, json_t **result) {
    int rc = REMEM_EBUSY;
    for (int i = 0; i < SUMMARIZE_TRIES && rc == REMEM_EBUSY; i++)
        rc = summarize_once(db, args, result);
    return rc;
}
