/*
 * fuzz_lessons.c: libFuzzer target for the two pure pieces of
 * src/lessons/ that read outside text: the error normaliser (any bytes an
 * agent's tool printed) and the structural validation gate (a tool's
 * schema and the input a model produced). The whole input is normalised;
 * split at its first newline, the halves are tried as a schema and an
 * input. Checked: the normalised text has no ASCII capitals, no leading,
 * trailing or doubled blanks, and is never longer than twice the input
 * (placeholders are short); the gate returns an array of violations each
 * of one of the four kinds.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lessons/lessons.h"

static const char *kinds[] = {"wrong_type", "missing_required", "empty_string", "unknown_key"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    char *n = lsn_normalise(s);
    assert(n);
    size_t len = strlen(n);
    assert(len <= 2 * strlen(s) + 8);
    assert(!len || (n[0] != ' ' && n[len - 1] != ' '));
    for (size_t i = 0; i < len; i++) {
        assert(!(n[i] >= 'A' && n[i] <= 'Z'));
        assert(!(n[i] == ' ' && n[i + 1] == ' '));
    }
    char fp[20];
    lsn_fingerprint_of(n, fp);
    assert(strlen(fp) == 19);
    free(n);

    char *nl = memchr(s, '\n', size);
    if (nl) {
        *nl = '\0';
        json_t *schema = json_loads(s, 0, NULL);
        json_t *input = json_loads(nl + 1, JSON_DECODE_ANY, NULL);
        if (json_is_object(schema) && input) {
            json_t *v = lsn_validate(schema, input);
            assert(json_is_array(v));
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e) {
                const char *k = json_string_value(json_object_get(e, "kind"));
                int known = 0;
                for (size_t j = 0; k && j < 4; j++) known |= !strcmp(k, kinds[j]);
                assert(known);
            }
            json_decref(v);
        }
        json_decref(schema);
        json_decref(input);
    }
    free(s);
    return 0;
}
