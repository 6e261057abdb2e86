/*
 * llm_standin.c: the C side of the LLM stand-in (see llm_standin.h): fork
 * and exec python3 on tests/support/llm_standin.py, wait for the port file
 * it writes once it listens, and read its JSONL request log.
 */
#include "llm_standin.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void llm_standin_rules(llm_standin *s, const char *rules) {
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", s->rules);
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fputs(rules ? rules : "[]", f);
    fclose(f);
    rename(tmp, s->rules);
}

int llm_standin_start(llm_standin *s, const char *rules) {
    memset(s, 0, sizeof *s);
    if (system("command -v python3 >/dev/null 2>&1") != 0) return -1;
    const char *root = getenv("REMEM_ROOT");
    char script[512], port_file[160];
    snprintf(script, sizeof script, "%s/tests/support/llm_standin.py", root ? root : ".");
    if (access(script, R_OK)) return -1;
    snprintf(s->dir, sizeof s->dir, "/tmp/remem-llm-standin-XXXXXX");
    if (!mkdtemp(s->dir)) return -1;
    snprintf(s->log, sizeof s->log, "%s/requests.jsonl", s->dir);
    snprintf(s->rules, sizeof s->rules, "%s/rules.json", s->dir);
    snprintf(port_file, sizeof port_file, "%s/port", s->dir);
    llm_standin_rules(s, rules);
    s->pid = fork();
    if (s->pid < 0) return -1;
    if (s->pid == 0) {
        execlp("python3", "python3", script, "--port-file", port_file, "--log", s->log, "--rules",
               s->rules, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 800; i++) {
        FILE *f = fopen(port_file, "r");
        int port = 0;
        if (f) {
            if (fscanf(f, "%d", &port) != 1) port = 0;
            fclose(f);
        }
        if (port > 0) {
            snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d/v1", port);
            return 0;
        }
        if (waitpid(s->pid, NULL, WNOHANG) == s->pid) break;
        usleep(25000);
    }
    kill(s->pid, SIGTERM);
    waitpid(s->pid, NULL, 0);
    return -1;
}

json_t *llm_standin_requests(llm_standin *s) {
    json_t *all = json_array();
    FILE *f = fopen(s->log, "r");
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0) {
        json_t *j = json_loads(line, 0, NULL);
        if (j) json_array_append_new(all, j);
    }
    free(line);
    if (f) fclose(f);
    return all;
}

size_t llm_standin_count(llm_standin *s) {
    json_t *r = llm_standin_requests(s);
    size_t n = json_array_size(r);
    json_decref(r);
    return n;
}

void llm_standin_stop(llm_standin *s) {
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
    if (s->dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
        if (system(cmd) != 0) {}
    }
}
