/*
 * test_ingest.c: conversations in ("ingest", "ingest.resume",
 * "ingest.status") through remem_call, without an LLM and against the LLM
 * stand-in (tests/support/llm_standin.py) on a loopback port:
 *   - verbatim (no LLM): each turn an observation at its own time, system
 *     messages skipped, the same transcript twice adds nothing, an exact
 *     duplicate folds, a bad message is refused by its index with nothing
 *     written, extract "llm" without an LLM refuses;
 *   - with the LLM: a 20-turn conversation in chunks of 10 makes one
 *     extraction call per chunk and no consolidation call when nothing
 *     stored is similar; each fact links to the messages it cites; the
 *     same messages again make no call and add nothing;
 *   - consolidation: one call per chunk; UPDATE and INVALIDATE applied with
 *     the facts, in one transaction;
 *   - answers in prose, a fence, numbers as strings are read; a truncated
 *     answer, an HTTP 500 or garbage writes no fact and says why; a resume
 *     once the LLM is back finishes the job exactly once;
 *   - structured output: json_schema first, json_object when the endpoint
 *     refuses it (400), remembered for the next call.
 * Skipped in part when python3 is missing.
 */
#include "test.h"
#include "support/op_call.h"

#include <stdlib.h>

#include "remem.h"
#include "support/llm_standin.h"
#include "util/util.h"

/* The ids test_verbatim_stored_shape's turns were given by 799127d. */
#define ID0 "msg_0187fba5cd8055d41209040b8c0f"
#define ID1 "msg_0187fba5cd81c3db2b1854239745"
#define ID2 "msg_fffffffffffbd63e0c2478d6466b"
#define ID3 "msg_018df229280006228087eee40e80"

static remem *open_with(const char *url) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    o.llm_url = url;
    o.llm_model = "stand-in-model";
    o.llm_timeout_ms = 3000;
    remem *db = NULL;
    int rc = remem_open(":memory:", &o, &db);
    if (rc) fprintf(stderr, "  open: %s\n", remem_errmsg(db));
    CHECK_INT(rc, 0);
    return db;
}

/* A conversation of n turns between Ada and Bo as a "messages" JSON text
 * (malloc'd), with a system message first. */
static char *conversation(int n, const char *topic) {
    strbuf b;
    sb_init(&b);
    sb_puts(&b, "[{\"role\":\"system\",\"content\":\"You are a helpful assistant.\"}");
    for (int i = 0; i < n; i++)
        sb_printf(&b,
                  ",{\"role\":\"%s\",\"name\":\"%s\",\"content\":\"turn %d about %s number %d\"}",
                  i % 2 ? "assistant" : "user", i % 2 ? "Bo" : "Ada", i, topic, i * 7);
    sb_puts(&b, "]");
    return sb_take(&b);
}

static json_t *ingest(remem *db, const char *ns, const char *messages, const char *extra,
                      int *rc) {
    strbuf b;
    sb_init(&b);
    sb_printf(&b, "{\"ns\":\"%s\",\"messages\":%s%s%s}", ns, messages, extra ? "," : "",
              extra ? extra : "");
    char *args = sb_take(&b);
    json_t *r = call(db, "ingest", args, rc);
    free(args);
    return r;
}

static int64_t count_kind(remem *db, const char *ns, const char *kind) {
    char args[256];
    snprintf(args, sizeof args,
             "{\"ns\":\"%s\",\"query\":\"*\",\"k\":1000,\"filter\":{\"kind\":\"%s\"}}", ns, kind);
    remem_query q;
    remem_query_init(&q);
    const char *nss[1] = {ns};
    char filter[128];
    snprintf(filter, sizeof filter, "{\"kind\":\"%s\"}", kind);
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.text = "turn about";
    q.k = 1000;
    q.filter = filter;
    q.no_touch = 1;
    remem_result *r = NULL;
    int rc = remem_recall(db, &q, &r);
    if (rc == REMEM_ENOTFOUND) return 0;
    CHECK_INT(rc, 0);
    int64_t n = r ? (int64_t)r->n : 0;
    remem_result_free(r);
    return n;
}

static void test_verbatim(void) {
    remem *db = open_with(NULL);
    char *conv = conversation(20, "gardening");
    int rc;
    json_t *r = ingest(db, "u:1", conv, "\"session_time\":\"2023-05-08T13:56:00Z\"", &rc);
    if (rc) fprintf(stderr, "  %s\n", remem_errmsg(db));
    CHECK_INT(rc, 0);
    CHECK_STR(json_string_value(json_object_get(r, "method")), "verbatim");
    CHECK_STR(json_string_value(json_object_get(r, "fallback")), "verbatim");
    CHECK_INT(json_integer_value(json_object_get(r, "added")), 20);
    CHECK_INT(json_integer_value(json_object_get(r, "skipped")), 1);
    /* each turn at the session time plus its position */
    const char *first = json_string_value(json_array_get(json_object_get(r, "ids"), 0));
    char args[256];
    snprintf(args, sizeof args, "{\"ns\":\"u:1\",\"id\":\"%s\"}", first);
    json_t *g = call_ok(db, "memory.get", args);
    json_t *m = json_object_get(g, "memory");
    CHECK_STR(json_string_value(json_object_get(m, "text")), "Ada: turn 0 about gardening number 0");
    CHECK_STR(json_string_value(json_object_get(m, "kind")), "observation");
    CHECK_HAS(json_string_value(json_object_get(m, "created_at")), "2023-05-08T13:56:00.001");
    json_decref(g);
    json_decref(r);
    CHECK_INT(count_kind(db, "u:1", "observation"), 20);

    /* the same transcript again: nothing added */
    r = ingest(db, "u:1", conv, "\"session_time\":\"2023-05-08T13:56:00Z\"", &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(json_integer_value(json_object_get(r, "added")), 0);
    CHECK_INT(json_integer_value(json_object_get(r, "existing")), 20);
    json_decref(r);
    CHECK_INT(count_kind(db, "u:1", "observation"), 20);

    /* an exact duplicate of a stored turn at another time folds */
    r = ingest(db, "u:1",
               "[{\"role\":\"user\",\"name\":\"Ada\",\"content\":\"turn 0 about gardening number "
               "0\",\"created_at\":\"2024-01-01\"}]",
               NULL, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(json_integer_value(json_object_get(r, "duplicates")), 1);
    CHECK_INT(json_integer_value(json_object_get(r, "added")), 0);
    json_decref(r);
    CHECK_INT(count_kind(db, "u:1", "observation"), 20);

    /* refusals change nothing */
    const char *bad[][2] = {
        {"[{\"role\":\"user\",\"content\":\"ok\"},{\"role\":\"user\"}]", "messages[1]"},
        {"[{\"role\":\"user\",\"content\":\"  \"}]", "messages[0].content"},
        {"[{\"role\":\"user\",\"content\":\"x\",\"created_at\":\"2023-02-31\"}]",
         "messages[0].created_at"},
        {"[]", "messages"},
        {"[{\"role\":\"user\",\"content\":\"x\",\"colour\":1}]", "colour"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = ingest(db, "u:2", bad[i][0], NULL, &rc);
        CHECK(rc == REMEM_EINVAL || rc == REMEM_EPARSE);
        CHECK_HAS(remem_errmsg(db), bad[i][1]);
        json_decref(r);
    }
    CHECK_INT(count_kind(db, "u:2", "observation"), 0);
    r = ingest(db, "u:2", conv, "\"extract\":\"llm\"", &rc);
    CHECK_INT(rc, REMEM_EUNSUPPORTED);
    CHECK_HAS(remem_errmsg(db), "needs an LLM");
    CHECK_INT(count_kind(db, "u:2", "observation"), 0);
    free(conv);
    remem_close(db);
}

/* What a turn is stored as stays what earlier versions stored: the ids
 * derived from the session, speaker, time and text (so that a transcript
 * sent again after an upgrade adds nothing) and the metadata text. The
 * expected values were written by the code of 799127d. */
static void test_verbatim_stored_shape(void) {
    remem *db = open_with(NULL);
    int rc;
    json_t *r = ingest(db, "u:shape",
                       "[{\"role\":\"user\",\"name\":\"Ada \\\"A\\\" L\\u00f6we\","
                       "\"content\":\"I planted tomatoes\\nyesterday\"},"
                       "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Nice\"},"
                       "{\"type\":\"text\",\"text\":\"which kind?\"}]},"
                       "{\"role\":\"user\",\"name\":\"user\",\"content\":\"Cherry\","
                       "\"created_at\":-5}]",
                       "\"session\":\"s-\\t1\",\"session_time\":\"2023-05-08T13:56:00Z\"", &rc);
    CHECK_INT(rc, 0);
    json_t *ids = json_object_get(r, "ids");
    CHECK_INT(json_array_size(ids), 3);
    static const char *const want_id[] = {ID0, ID1, ID2};
    static const char *const want_meta[] = {
        "{\"role\":\"user\",\"name\":\"Ada \\\"A\\\" L\xc3\xb6we\",\"session\":\"s-\\t1\"}",
        "{\"role\":\"assistant\",\"name\":null,\"session\":\"s-\\t1\"}",
        "{\"role\":\"user\",\"name\":null,\"session\":\"s-\\t1\"}",
    };
    for (size_t i = 0; i < 3 && i < json_array_size(ids); i++) {
        const char *id = json_string_value(json_array_get(ids, i));
        CHECK_STR(id, want_id[i]);
        remem_record *rec = NULL;
        CHECK_INT(remem_get(db, "u:shape", id, &rec), REMEM_OK);
        if (rec) CHECK_STR(remem_record_memory(rec)->metadata, want_meta[i]);
        remem_record_free(rec);
    }
    json_decref(r);
    /* no session, a time given as a date */
    r = ingest(db, "u:shape",
               "[{\"role\":\"user\",\"name\":\"Bo\",\"content\":\"x\",\"created_at\":"
               "\"2024-02-29\"}]",
               NULL, &rc);
    CHECK_INT(rc, 0);
    const char *id = json_string_value(json_array_get(json_object_get(r, "ids"), 0));
    CHECK_STR(id, ID3);
    remem_record *rec = NULL;
    CHECK_INT(remem_get(db, "u:shape", id ? id : "", &rec), REMEM_OK);
    if (rec)
        CHECK_STR(remem_record_memory(rec)->metadata,
                  "{\"role\":\"user\",\"name\":\"Bo\",\"session\":null}");
    remem_record_free(rec);
    json_decref(r);
    remem_close(db);
}

/* An extraction answer citing two messages per fact, as a model in prose
 * would give it (a fence, numbers as strings). */
#define FACTS_REPLY                                                                         \
    "Here you go:\\n```json\\n{\\\"facts\\\": [{\\\"text\\\": \\\"Ada grows tomatoes.\\\", " \
    "\\\"sources\\\": [\\\"1\\\", 2]}, {\\\"text\\\": \\\"Bo keeps bees.\\\", "               \
    "\\\"sources\\\": [4]}]}\\n```"

static void test_llm_chunks_and_links(void) {
    llm_standin s;
    if (llm_standin_start(&s, "[{\"match\": \"Write down the facts\", \"reply\": \"" FACTS_REPLY
                              "\"}, {\"match\": \"New facts have arrived\", \"reply\": "
                              "\"{\\\"facts\\\": [], \\\"memories\\\": []}\"}]")) {
        SKIP("python3 or the stand-in is not available");
        return;
    }
    remem *db = open_with(s.url);
    char *conv = conversation(20, "gardening");
    int rc;
    json_t *r = ingest(db, "u:1", conv, "\"chunk\":10,\"session\":\"s1\"", &rc);
    if (rc) fprintf(stderr, "  %s\n", remem_errmsg(db));
    CHECK_INT(rc, 0);
    CHECK_STR(json_string_value(json_object_get(r, "method")), "llm");
    CHECK_STR(json_string_value(json_object_get(r, "status")), "done");
    CHECK_INT(json_integer_value(json_object_get(r, "chunks")), 2);
    /* chunk 1: two facts added; chunk 2: the same facts fold (exact
     * duplicates) and nothing similar enough asks for a consolidation call
     * only when neighbours exist */
    json_t *llm = json_object_get(r, "llm");
    size_t calls = llm_standin_count(&s);
    CHECK_INT(json_integer_value(json_object_get(llm, "calls")), (int64_t)calls);
    CHECK(calls >= 2 && calls <= 4); /* <= 1 extraction + 1 consolidation per chunk */
    json_t *reqs = llm_standin_requests(&s);
    size_t extractions = 0;
    for (size_t i = 0; i < json_array_size(reqs); i++) {
        json_t *body = json_object_get(json_array_get(reqs, i), "body");
        const char *u = json_string_value(json_object_get(
            json_array_get(json_object_get(body, "messages"), 0), "content"));
        if (u && strstr(u, "Write down the facts")) {
            extractions++;
            CHECK(strstr(u, "You are a helpful assistant") == NULL); /* system left out */
            CHECK_STR(json_string_value(json_object_get(
                          json_object_get(body, "response_format"), "type")),
                      "json_schema");
        }
    }
    CHECK_INT(extractions, 2);
    json_decref(reqs);
    CHECK_INT(json_integer_value(json_object_get(r, "added")), 2);
    /* provenance: "Ada grows tomatoes." cites messages 1 and 2 of chunk 1 */
    const char *fid = json_string_value(json_array_get(json_object_get(r, "ids"), 0));
    char args[256];
    snprintf(args, sizeof args, "{\"ns\":\"u:1\",\"id\":\"%s\"}", fid);
    json_t *g = call_ok(db, "memory.get", args);
    json_t *m = json_object_get(g, "memory");
    CHECK_STR(json_string_value(json_object_get(m, "kind")), "fact");
    json_t *links = json_object_get(m, "links");
    CHECK_INT(json_array_size(links), 2);
    for (size_t i = 0; i < json_array_size(links); i++) {
        snprintf(args, sizeof args, "{\"ns\":\"u:1\",\"id\":\"%s\"}",
                 json_string_value(json_array_get(links, i)));
        json_t *msg = call_ok(db, "memory.get", args);
        json_t *mm = json_object_get(msg, "memory");
        CHECK_STR(json_string_value(json_object_get(mm, "kind")), "message");
        CHECK_HAS(json_string_value(json_object_get(mm, "text")), i ? "turn 1 " : "turn 0 ");
        json_decref(msg);
    }
    json_decref(g);
    const char *job = json_string_value(json_object_get(r, "job"));
    snprintf(args, sizeof args, "{\"ns\":\"u:1\",\"job\":\"%s\"}", job);
    json_t *st = call_ok(db, "ingest.status", args);
    CHECK_STR(json_string_value(json_object_get(st, "status")), "done");
    CHECK_INT(json_integer_value(json_object_get(st, "messages")), 20);
    json_decref(st);
    json_decref(r);

    /* the same messages again: no call, nothing added */
    size_t before = llm_standin_count(&s);
    r = ingest(db, "u:1", conv, "\"chunk\":10,\"session\":\"s1\"", &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(json_integer_value(json_object_get(r, "added")), 0);
    CHECK_INT(json_integer_value(json_object_get(r, "existing")), 20);
    CHECK_INT(llm_standin_count(&s), before);
    json_decref(r);
    free(conv);
    remem_close(db);
    llm_standin_stop(&s);
}

static void test_consolidation(void) {
    llm_standin s;
    if (llm_standin_start(
            &s, "[{\"match\": \"Write down the facts\", \"reply\": \"{\\\"facts\\\": ["
                "{\\\"text\\\": \\\"Ada moved to Lisbon in May 2023.\\\", \\\"sources\\\": [1]},"
                "{\\\"text\\\": \\\"Ada works as a nurse in Lisbon.\\\", \\\"sources\\\": [2]}]}\"},"
                "{\"match\": \"New facts have arrived\", \"reply\": \"{\\\"facts\\\": ["
                "{\\\"f\\\": 1, \\\"action\\\": \\\"ADD\\\"}, {\\\"f\\\": \\\"F2\\\", "
                "\\\"action\\\": \\\"NOOP\\\"}], \\\"memories\\\": [{\\\"i\\\": 1, \\\"action\\\": "
                "\\\"INVALIDATE\\\", \\\"by\\\": 1}, {\\\"i\\\": 2, \\\"action\\\": \\\"UPDATE\\\", "
                "\\\"text\\\": \\\"Ada works as a nurse in Lisbon at night.\\\"}]}\"}]")) {
        SKIP("python3 or the stand-in is not available");
        return;
    }
    remem *db = open_with(s.url);
    char old1[32], old2[32];
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "u:1";
    m.kind = "fact";
    m.text = "Ada moved to Porto in May 2023.";
    CHECK_INT(remem_add(db, &m, old1, sizeof old1, NULL), 0);
    m.text = "Ada works as a nurse in Lisbon.";
    m.created_at = 1;
    m.text = "Ada works as a nurse in Lisbon hospitals.";
    CHECK_INT(remem_add(db, &m, old2, sizeof old2, NULL), 0);
    int rc;
    json_t *r = ingest(db, "u:1",
                       "[{\"role\":\"user\",\"name\":\"Ada\",\"content\":\"I moved to Lisbon in "
                       "May.\"},{\"role\":\"user\",\"name\":\"Ada\",\"content\":\"I work as a "
                       "nurse here.\"}]",
                       NULL, &rc);
    if (rc) fprintf(stderr, "  %s\n", remem_errmsg(db));
    CHECK_INT(rc, 0);
    CHECK_INT(llm_standin_count(&s), 2); /* one extraction, one consolidation */
    CHECK_INT(json_integer_value(json_object_get(r, "added")), 1);
    CHECK_INT(json_integer_value(json_object_get(r, "noop")), 1);
    json_t *reqs = llm_standin_requests(&s);
    const char *prompt = json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(json_array_get(reqs, 1), "body"),
                                       "messages"),
                       0),
        "content"));
    /* which stored memory is 1 and which 2 is the prompt's order */
    int porto_first = prompt && strstr(prompt, "1. Ada moved to Porto") != NULL;
    json_decref(reqs);
    const char *added = json_string_value(json_array_get(json_object_get(r, "ids"), 0));
    char args[256];
    snprintf(args, sizeof args, "{\"ns\":\"u:1\",\"id\":\"%s\"}", porto_first ? old1 : old2);
    json_t *g = call_ok(db, "memory.get", args);
    CHECK_STR(json_string_value(
                  json_object_get(json_object_get(g, "memory"), "superseded_by")),
              added);
    json_decref(g);
    snprintf(args, sizeof args, "{\"ns\":\"u:1\",\"id\":\"%s\"}", porto_first ? old2 : old1);
    g = call_ok(db, "memory.get", args);
    CHECK_STR(json_string_value(json_object_get(json_object_get(g, "memory"), "text")),
              "Ada works as a nurse in Lisbon at night.");
    json_decref(g);
    CHECK(porto_first); /* Porto is the nearer of the two to the first fact */
    json_decref(r);
    remem_close(db);
    llm_standin_stop(&s);
}

static void test_failures_then_resume(void) {
    llm_standin s;
    if (llm_standin_start(&s, NULL)) {
        SKIP("python3 or the stand-in is not available");
        return;
    }
    remem *db = open_with(s.url);
    char *conv = conversation(6, "bees");
    struct {
        const char *rules, *cause;
    } cases[] = {
        {"[{\"status\": 500, \"reply\": \"model overloaded\"}]", "model overloaded"},
        {"[{\"truncate\": true, \"reply\": \"" FACTS_REPLY "\"}]", "not JSON"},
        {"[{\"raw\": \"<html>It works!</html>\"}]", "not JSON"},
        {"[{\"reply\": \"I found nothing worth noting.\"}]", "extraction"},
        {"[{\"reply\": \"{\\\"memories\\\": 3}\"}]", "facts"},
    };
    const char *job = NULL;
    json_t *first = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        llm_standin_rules(&s, cases[i].rules);
        int rc;
        json_t *r = ingest(db, "u:1", conv, NULL, &rc);
        CHECK_INT(rc, REMEM_ELLM);
        CHECK_HAS(remem_errmsg(db), cases[i].cause);
        CHECK_HAS(remem_errmsg(db), "ingest.resume with job");
        if (!first) {
            const char *p = strstr(remem_errmsg(db), "job job_");
            CHECK(p != NULL);
            if (p) first = json_stringn(p + 4, 20);
        }
        json_decref(r);
        CHECK_INT(count_kind(db, "u:1", "fact"), 0);
        /* the messages are kept, once, whatever failed */
        CHECK_INT(count_kind(db, "u:1", "message"), 6);
    }
    if (!first) return;
    job = json_string_value(first);
    char args[128];
    snprintf(args, sizeof args, "{\"ns\":\"u:1\",\"job\":\"%s\"}", job);
    json_t *st = call_ok(db, "ingest.status", args);
    CHECK_STR(json_string_value(json_object_get(st, "status")), "pending");
    CHECK_INT(json_integer_value(json_object_get(st, "chunks_done")), 0);
    json_decref(st);
    /* the queue a restarted server reads names it */
    json_t *pend = call_ok(db, "ingest.pending", "{}");
    CHECK_INT(json_integer_value(json_object_get(pend, "count")), 1);
    CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(pend, "jobs"), 0),
                                                "job")),
              job);
    json_decref(pend);
    /* the LLM back: resume finishes it, once */
    llm_standin_rules(&s, "[{\"match\": \"Write down the facts\", \"reply\": \"" FACTS_REPLY "\"}]");
    json_t *r = call_ok(db, "ingest.resume", args);
    CHECK_STR(json_string_value(json_object_get(r, "status")), "done");
    CHECK_INT(json_integer_value(json_object_get(r, "added")), 2);
    json_decref(r);
    pend = call_ok(db, "ingest.pending", "{}");
    CHECK_INT(json_integer_value(json_object_get(pend, "count")), 0);
    json_decref(pend);
    size_t n = llm_standin_count(&s);
    r = call_ok(db, "ingest.resume", args);
    CHECK_INT(json_integer_value(json_object_get(r, "added")), 0);
    json_decref(r);
    int rc;
    r = ingest(db, "u:1", conv, NULL, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(json_integer_value(json_object_get(r, "added")), 0);
    json_decref(r);
    CHECK_INT(llm_standin_count(&s), n);
    CHECK_INT(count_kind(db, "u:1", "fact"), 2);
    json_decref(first);
    free(conv);
    remem_close(db);
    llm_standin_stop(&s);
}

static void test_structured_output_ladder(void) {
    llm_standin s;
    if (llm_standin_start(&s, "[{\"format\": \"json_schema\", \"status\": 400, \"reply\": "
                              "\"response_format json_schema is not supported\"},"
                              "{\"match\": \"Write down the facts\", \"reply\": \"" FACTS_REPLY
                              "\"}]")) {
        SKIP("python3 or the stand-in is not available");
        return;
    }
    remem *db = open_with(s.url);
    char *conv = conversation(4, "kites");
    int rc;
    json_t *r = ingest(db, "u:1", conv, NULL, &rc);
    if (rc) fprintf(stderr, "  %s\n", remem_errmsg(db));
    CHECK_INT(rc, 0);
    CHECK_INT(json_integer_value(json_object_get(r, "added")), 2);
    json_decref(r);
    free(conv);
    conv = conversation(4, "boats");
    r = ingest(db, "u:1", conv, NULL, &rc);
    CHECK_INT(rc, 0);
    json_decref(r);
    json_t *reqs = llm_standin_requests(&s);
    const char *want[] = {"json_schema", "json_object"};
    for (size_t i = 0; i < json_array_size(reqs); i++) {
        json_t *f = json_object_get(json_object_get(json_array_get(reqs, i), "body"),
                                    "response_format");
        /* one refused json_schema, then json_object from there on */
        CHECK_STR(json_string_value(json_object_get(f, "type")), want[i ? 1 : 0]);
    }
    CHECK(json_array_size(reqs) >= 3);
    json_decref(reqs);
    free(conv);
    remem_close(db);
    llm_standin_stop(&s);
}

int main(int argc, char **argv) {
    test__only = argc > 1 ? argv[1] : NULL;
    RUN(test_verbatim);
    RUN(test_verbatim_stored_shape);
    RUN(test_llm_chunks_and_links);
    RUN(test_consolidation);
    RUN(test_failures_then_resume);
    RUN(test_structured_output_ladder);
    return TEST_EXIT();
}
