/*
 * llm_standin.h: C tests start the LLM stand-in (tests/support/
 * llm_standin.py: rules file, JSONL request log; its header is the manual)
 * as a child process on a free loopback port, give it rules, and read the
 * requests it received. Needs python3 and $REMEM_ROOT (tests/run.sh sets
 * it) or the repository as the working folder; llm_standin_start returns
 * -1 when either is missing, and the test SKIPs.
 */
#ifndef REMEM_TEST_LLM_STANDIN_H
#define REMEM_TEST_LLM_STANDIN_H

#include <jansson.h>
#include <sys/types.h>

typedef struct llm_standin {
    pid_t pid;
    char dir[64];  /* a temporary folder, removed by llm_standin_stop */
    char url[96];  /* the base URL, "http://127.0.0.1:PORT/v1" */
    char log[128]; /* the request log (JSONL) */
    char rules[128];
} llm_standin;

/* Start it with the rules (a JSON list text; NULL: none). 0 or -1. */
int llm_standin_start(llm_standin *s, const char *rules);
/* Replace the rules (read again on every request). */
void llm_standin_rules(llm_standin *s, const char *rules);
/* The requests logged so far, a JSON array (new reference). */
json_t *llm_standin_requests(llm_standin *s);
/* How many requests it has received. */
size_t llm_standin_count(llm_standin *s);
/* Stop it and remove its folder; its port is then refused. */
void llm_standin_stop(llm_standin *s);

#endif
