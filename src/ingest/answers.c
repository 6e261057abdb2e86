/*
 * answers.c: what ingest asks the model and how it reads the answers. Two
 * prompts per chunk of messages at most: the extraction (facts with the
 * numbers of the messages they come from) and the consolidation (those
 * facts against the stored memories most like them). Both show the model
 * small numbers, never ids, so it cannot name a message or a memory it was
 * not shown. The readers take the shapes models commonly give (an object
 * or a bare list, numbers as strings, JSON inside prose or a fence, via
 * llm_answer_json) and check everything before the caller writes. Pure:
 * no store, no network (fuzz/fuzz_ingest.c runs them on any bytes).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/ingest.h"
#include "llm/llm.h"
#include "util/time.h"
#include "util/utf8.h"
#include "util/util.h"

const char ingest_extract_schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"facts\"],"
    "\"properties\":{\"facts\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"additionalProperties\":false,\"required\":[\"text\",\"sources\"],\"properties\":{"
    "\"text\":{\"type\":\"string\"},\"sources\":{\"type\":\"array\",\"items\":{\"type\":"
    "\"integer\"}}}}}}}";

const char ingest_consolidate_schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"facts\",\"memories\"],"
    "\"properties\":{\"facts\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"additionalProperties\":false,\"required\":[\"f\",\"action\"],\"properties\":{"
    "\"f\":{\"type\":\"integer\"},\"action\":{\"type\":\"string\",\"enum\":[\"ADD\",\"NOOP\"]}}}},"
    "\"memories\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"additionalProperties\":"
    "false,\"required\":[\"i\",\"action\"],\"properties\":{\"i\":{\"type\":\"integer\"},"
    "\"action\":{\"type\":\"string\",\"enum\":[\"UPDATE\",\"INVALIDATE\",\"NOOP\"]},"
    "\"text\":{\"type\":\"string\"},\"by\":{\"type\":\"integer\"}}}}}}";

static void put_time(strbuf *b, int64_t at) {
    char t[40];
    util_format_time(at, t, sizeof t);
    t[16] = '\0'; /* "2023-05-08T13:56": minutes are what a conversation needs */
    t[10] = ' ';
    sb_puts(b, t);
}

char *ingest_extract_prompt(const ingest_msg *msgs, size_t n, int64_t session_time) {
    strbuf b;
    sb_init(&b);
    sb_puts(&b, "You keep the long-term memory of an AI agent. Below is part of a "
                "conversation, its messages numbered.\n");
    if (session_time) {
        sb_puts(&b, "The conversation took place at ");
        put_time(&b, session_time);
        sb_puts(&b, " (UTC).\n");
    }
    sb_puts(&b, "\nMessages:\n");
    for (size_t i = 0; i < n; i++) {
        sb_printf(&b, "[%zu] %s", i + 1, msgs[i].speaker);
        if (msgs[i].at) {
            sb_puts(&b, " (");
            put_time(&b, msgs[i].at);
            sb_puts(&b, ")");
        }
        sb_printf(&b, ": %s\n", msgs[i].text);
    }
    sb_puts(&b,
            "\nWrite down the facts and events in these messages worth remembering about the "
            "people in them: preferences, plans, relationships, what happened and when. Each "
            "fact is one self-contained sentence that can be understood without the "
            "conversation: name the people instead of \"I\", \"you\", \"she\", and write dates "
            "instead of \"yesterday\", \"last week\" (resolve them against the message's time). "
            "Leave out greetings and small talk. Cite the numbers of the messages each fact "
            "comes from.\n"
            "Answer with one JSON object only:\n"
            "{\"facts\": [{\"text\": \"...\", \"sources\": [1, 2]}]}\n"
            "Nothing worth remembering: {\"facts\": []}");
    return sb_take(&b);
}

/* A whole number from an integer, an integral real or a numeric string
 * ("3", "#3", "[3]"); 0 when none. */
static long whole(json_t *v) {
    if (json_is_integer(v)) return (long)json_integer_value(v);
    if (json_is_real(v) && json_real_value(v) == (double)(long)json_real_value(v))
        return (long)json_real_value(v);
    if (json_is_string(v)) {
        const char *p = json_string_value(v);
        while (*p == '#' || *p == '[' || isspace((unsigned char)*p)) p++;
        char *end;
        long x = strtol(p, &end, 10);
        while (*end == ']' || isspace((unsigned char)*end)) end++;
        return end != p && *end == '\0' ? x : 0;
    }
    return 0;
}

void ingest_facts_free(ingest_fact *f, size_t n) {
    for (size_t i = 0; f && i < n; i++) free(f[i].text);
    free(f);
}

/* One fact of the answer into *f; 0, or -1 when it is unusable (dropped). */
static int read_fact(json_t *it, size_t n, ingest_fact *f) {
    json_t *tx = json_is_string(it) ? it : json_object_get(it, "text");
    if (!json_is_string(tx)) tx = json_object_get(it, "fact");
    const char *s = json_string_value(tx);
    if (!s || util_utf8_blank(s) || json_string_length(tx) > INGEST_FACT_MAX ||
        strlen(s) != json_string_length(tx) || util_utf8_check(s, strlen(s)) != strlen(s))
        return -1;
    json_t *src = json_object_get(it, "sources");
    if (!src) src = json_object_get(it, "source");
    memset(f, 0, sizeof *f);
    size_t k;
    json_t *v;
    if (json_is_array(src)) {
        json_array_foreach(src, k, v) {
            long x = whole(v);
            if (x < 1 || (size_t)x > n || f->n_src == sizeof f->src / sizeof f->src[0]) continue;
            int seen = 0;
            for (size_t j = 0; j < f->n_src; j++) seen |= f->src[j] == (size_t)(x - 1);
            if (!seen) f->src[f->n_src++] = (size_t)(x - 1);
        }
    } else if (src) {
        long x = whole(src);
        if (x >= 1 && (size_t)x <= n) f->src[f->n_src++] = (size_t)(x - 1);
    }
    if (!f->n_src) return -1; /* a fact must say where it came from */
    return (f->text = strdup(s)) ? 0 : -1;
}

int ingest_read_facts(const char *answer, size_t n, ingest_fact **out, size_t *nout,
                      int64_t *dropped, char *err, size_t cap) {
    *out = NULL;
    *nout = 0;
    json_t *j = llm_answer_json(answer ? answer : "", err, cap);
    if (!j) return -1;
    json_t *facts = json_is_array(j) ? j : json_object_get(j, "facts");
    if (!json_is_array(facts)) {
        snprintf(err, cap, "the answer has no \"facts\" list");
        json_decref(j);
        return -1;
    }
    size_t m = json_array_size(facts);
    *out = calloc(m ? m : 1, sizeof **out);
    if (!*out) {
        snprintf(err, cap, "out of memory");
        json_decref(j);
        return -1;
    }
    size_t k;
    json_t *it;
    json_array_foreach(facts, k, it) {
        if (*nout == INGEST_MAX_FACTS || read_fact(it, n, &(*out)[*nout])) {
            (*dropped)++;
            continue;
        }
        (*nout)++;
    }
    json_decref(j);
    return 0;
}

char *ingest_consolidate_prompt(const char *const *memories, size_t nm, const ingest_fact *facts,
                                size_t nf) {
    strbuf b;
    sb_init(&b);
    sb_puts(&b, "You keep an AI agent's memory consistent. New facts have arrived; below are "
                "the stored memories most like them.\n\nStored memories:\n");
    for (size_t i = 0; i < nm; i++) sb_printf(&b, "%zu. %s\n", i + 1, memories[i]);
    sb_puts(&b, "\nNew facts:\n");
    for (size_t i = 0; i < nf; i++) sb_printf(&b, "F%zu. %s\n", i + 1, facts[i].text);
    sb_puts(&b, "\nFor each new fact say ADD (it holds something the stored memories do not) or "
                "NOOP (it is already there). For each stored memory that must change say "
                "UPDATE (a new fact refines it: give the merged text) or INVALIDATE (a new fact "
                "contradicts it: name that fact in \"by\"); leave the others out.\n"
                "Answer with one JSON object only, naming facts by their numbers (F2 is 2) and "
                "memories by theirs:\n"
                "{\"facts\": [{\"f\": 1, \"action\": \"ADD\"}, {\"f\": 2, \"action\": \"NOOP\"}], "
                "\"memories\": [{\"i\": 1, \"action\": \"UPDATE\", \"text\": \"...\"}, "
                "{\"i\": 2, \"action\": \"INVALIDATE\", \"by\": 1}]}");
    return sb_take(&b);
}

void ingest_plan_free(ingest_plan *p) {
    free(p->fact);
    free(p->mem);
    free(p->merged);
    free(p->by);
    json_decref(p->json);
    memset(p, 0, sizeof *p);
}

static long fact_number(json_t *v) {
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (s[0] == 'F' || s[0] == 'f') {
            json_t *t = json_string(s + 1);
            long x = whole(t);
            json_decref(t);
            return x;
        }
    }
    return whole(v);
}

static int plan_facts(json_t *facts, size_t nf, ingest_plan *p, char *err, size_t cap) {
    size_t k;
    json_t *it;
    char *seen = calloc(nf ? nf : 1, 1);
    if (!seen) return snprintf(err, cap, "out of memory"), -1;
    int rc = -1;
    json_array_foreach(facts, k, it) {
        const char *act = json_string_value(json_object_get(it, "action"));
        long f = fact_number(json_object_get(it, "f"));
        rc = -1;
        if (!act)
            snprintf(err, cap, "fact item %zu has no \"action\"", k + 1);
        else if (f < 1 || (size_t)f > nf)
            snprintf(err, cap, "the answer named fact %ld, but only F1-F%zu were given", f, nf);
        else if (seen[f - 1])
            snprintf(err, cap, "the answer named fact %ld twice", f);
        else if (!strcasecmp(act, "ADD"))
            p->fact[f - 1] = INGEST_ADD, rc = 0;
        else if (!strcasecmp(act, "NOOP") || !strcasecmp(act, "NONE"))
            p->fact[f - 1] = INGEST_NOOP, rc = 0;
        else
            snprintf(err, cap, "unknown action \"%.40s\" for fact %ld (ADD or NOOP)", act, f);
        if (rc) break;
        seen[f - 1] = 1;
    }
    free(seen);
    return json_array_size(facts) ? rc : 0;
}

static int plan_mems(json_t *mems, size_t nm, size_t nf, ingest_plan *p, char *err, size_t cap) {
    size_t k;
    json_t *it;
    json_array_foreach(mems, k, it) {
        const char *act = json_string_value(json_object_get(it, "action"));
        long i = whole(json_object_get(it, "i"));
        if (!act) return snprintf(err, cap, "memory item %zu has no \"action\"", k + 1), -1;
        if (i < 1 || (size_t)i > nm)
            return snprintf(err, cap, "the answer named memory %ld, but only 1-%zu were shown", i,
                            nm),
                   -1;
        if (p->mem[i - 1] != INGEST_NOOP || p->merged[i - 1])
            return snprintf(err, cap, "the answer named memory %ld twice", i), -1;
        if (!strcasecmp(act, "UPDATE")) {
            json_t *tx = json_object_get(it, "text");
            const char *s = json_string_value(tx);
            if (!s || util_utf8_blank(s) || json_string_length(tx) > INGEST_FACT_MAX ||
                strlen(s) != json_string_length(tx))
                return snprintf(err, cap, "the UPDATE of memory %ld has no usable \"text\"", i),
                       -1;
            p->mem[i - 1] = INGEST_UPDATE;
            p->merged[i - 1] = s;
        } else if (!strcasecmp(act, "INVALIDATE") || !strcasecmp(act, "DELETE")) {
            long by = fact_number(json_object_get(it, "by"));
            if (by < 1 || (size_t)by > nf || p->fact[by - 1] != INGEST_ADD)
                return snprintf(err, cap,
                                "memory %ld is invalidated by fact %ld, which is not one the "
                                "answer adds",
                                i, by),
                       -1;
            p->mem[i - 1] = INGEST_INVALIDATE;
            p->by[i - 1] = (size_t)(by - 1);
        } else if (strcasecmp(act, "NOOP") && strcasecmp(act, "NONE")) {
            return snprintf(err, cap,
                            "unknown action \"%.40s\" for memory %ld (UPDATE, INVALIDATE or "
                            "NOOP)",
                            act, i),
                   -1;
        }
    }
    return 0;
}

int ingest_read_plan(const char *answer, size_t nm, size_t nf, ingest_plan *p, char *err,
                     size_t cap) {
    memset(p, 0, sizeof *p);
    p->json = llm_answer_json(answer ? answer : "", err, cap);
    if (!p->json) return -1;
    json_t *facts = json_object_get(p->json, "facts"), *mems = json_object_get(p->json, "memories");
    int rc = -1;
    if (!json_is_object(p->json) || (!facts && !mems)) {
        snprintf(err, cap, "the answer has neither \"facts\" nor \"memories\"");
    } else if ((facts && !json_is_array(facts)) || (mems && !json_is_array(mems))) {
        snprintf(err, cap, "the answer's \"facts\" and \"memories\" must be lists");
    } else if (!(p->fact = calloc(nf ? nf : 1, sizeof *p->fact)) ||
               !(p->mem = calloc(nm ? nm : 1, sizeof *p->mem)) ||
               !(p->merged = calloc(nm ? nm : 1, sizeof *p->merged)) ||
               !(p->by = calloc(nm ? nm : 1, sizeof *p->by))) {
        snprintf(err, cap, "out of memory");
    } else {
        for (size_t i = 0; i < nf; i++) p->fact[i] = INGEST_ADD; /* unnamed facts are added */
        rc = plan_facts(facts, nf, p, err, cap);
        if (!rc) rc = plan_mems(mems, nm, nf, p, err, cap);
    }
    if (rc) ingest_plan_free(p);
    return rc;
}
