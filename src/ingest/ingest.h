/*
 * ingest.h: conversations in. An agent hands remem a transcript (messages
 * in the OpenAI chat shape) and remem keeps what matters:
 *   - without an LLM (or extract "none"), each turn is stored verbatim as
 *     an observation, "speaker: text", at its own time; turns already
 *     stored are skipped and exact duplicates fold, all in one
 *     transaction ("fallback": "verbatim");
 *   - with one, the new messages are committed first (kind "message", with
 *     a job record, kind "ingest_job"), then each chunk of them costs one
 *     extraction call (atomic, self-contained facts with the numbers of the
 *     messages they come from) and at most one consolidation call (those
 *     facts against the stored memories most like them: ADD / UPDATE /
 *     INVALIDATE / NOOP), and the chunk's writes commit in one transaction
 *     together with the job's progress. A failure leaves the job where it
 *     was; "ingest.resume" (or the same ingest again) continues it.
 *
 * The prompts and the readers of the model's answers (answers.c) are pure,
 * so that fuzz/fuzz_ingest.c reaches them; the operations (ingest.c) do
 * the store work. docs/ingest.md is the user's page.
 */
#ifndef REMEM_INGEST_H
#define REMEM_INGEST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* The kinds ingest writes besides its facts: bookkeeping, never recalled
 * unless asked for by kind. */
#define INGEST_KIND_MESSAGE "message"
#define INGEST_KIND_JOB "ingest_job"
#define INGEST_KIND_FACT "fact"

/* Bounds of one answer: facts per chunk, bytes per fact. */
#define INGEST_MAX_FACTS 64
#define INGEST_FACT_MAX 2000

/* One message of a chunk as the prompts show it. */
typedef struct ingest_msg {
    const char *speaker; /* name, else role */
    const char *role;
    const char *text;
    int64_t at; /* ms since the epoch; 0: unknown */
} ingest_msg;

/* An extracted fact: its text and the messages (0-based) it cites. */
typedef struct ingest_fact {
    char *text;
    size_t src[16];
    size_t n_src;
} ingest_fact;

/* The extraction prompt for msgs[0..n) (malloc'd; NULL: out of memory),
 * and the JSON Schema its answer should follow. */
char *ingest_extract_prompt(const ingest_msg *msgs, size_t n, int64_t session_time);
extern const char ingest_extract_schema[];

/* The facts of an extraction answer about n messages: at most
 * INGEST_MAX_FACTS, each with a non-blank text of at most INGEST_FACT_MAX
 * bytes and at least one citation in 1..n (others are dropped and counted
 * in *dropped). 0 with *out malloc'd (*nout may be 0), or -1 with err when
 * the answer holds no usable JSON ({"facts": [...]} or a bare list). */
int ingest_read_facts(const char *answer, size_t n, ingest_fact **out, size_t *nout,
                      int64_t *dropped, char *err, size_t cap);
void ingest_facts_free(ingest_fact *f, size_t n);

/* Consolidation: what the model decides for the chunk's facts against the
 * stored memories shown to it. */
enum { INGEST_NOOP, INGEST_ADD, INGEST_UPDATE, INGEST_INVALIDATE };
typedef struct ingest_plan {
    int *fact;          /* per fact: INGEST_ADD (default) or INGEST_NOOP */
    int *mem;           /* per memory: INGEST_NOOP, INGEST_UPDATE or INGEST_INVALIDATE */
    const char **merged; /* per memory: UPDATE's text (inside the answer's JSON) */
    size_t *by;          /* per memory: the fact (0-based) that replaces it */
    json_t *json;        /* the answer, owning the merged texts */
} ingest_plan;

char *ingest_consolidate_prompt(const char *const *memories, size_t nm, const ingest_fact *facts,
                                size_t nf);
extern const char ingest_consolidate_schema[];
/* Read the consolidation answer about nm memories and nf facts into *p.
 * The whole answer is checked before the caller writes anything: a number
 * out of range, a memory named twice, an unknown action, an UPDATE without
 * text, or an INVALIDATE by a fact that is not added is -1 with err naming
 * it. */
int ingest_read_plan(const char *answer, size_t nm, size_t nf, ingest_plan *p, char *err,
                     size_t cap);
void ingest_plan_free(ingest_plan *p);

#endif
