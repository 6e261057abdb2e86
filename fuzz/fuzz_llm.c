/*
 * fuzz_llm.c: libFuzzer target for the LLM answer parsers (src/llm/llm.c):
 * the chat-completion envelope (llm_parse_completion) and the readers of
 * the model's content (llm_answer_json, llm_answer_number,
 * llm_answer_string), all of which read text a server remem does not
 * control wrote. Each input is tried as an envelope and as content. The
 * parsers must agree with their contracts: a success gives a value (a
 * number inside the asked range, an object or array), a failure gives a
 * message and no value.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm.h"
#include "remem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[512];
    char *content = NULL;
    llm_usage u = {0};
    err[0] = '\0';
    int rc = llm_parse_completion((const char *)data, size, &content, &u, err, sizeof err);
    if (rc == REMEM_OK) {
        assert(content && u.calls == 1 && u.prompt_tokens >= 0 && u.completion_tokens >= 0);
    } else {
        assert(!content && err[0] && u.calls == 0);
    }
    free(content);

    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    err[0] = '\0';
    json_t *j = llm_answer_json(text, err, sizeof err);
    assert(j ? (json_is_object(j) || json_is_array(j)) : err[0] != '\0');
    json_decref(j);
    double v = -1;
    err[0] = '\0';
    if (llm_answer_number(text, 1, 10, &v, err, sizeof err) == REMEM_OK)
        assert(isfinite(v) && v >= 1 && v <= 10);
    else
        assert(err[0]);
    static const char *const keys[] = {"explanation", "reason", NULL};
    free(llm_answer_string(text, keys));
    free(text);
    return 0;
}
