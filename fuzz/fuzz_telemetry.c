/*
 * fuzz_telemetry.c: libFuzzer target for the one text telemetry parses,
 * OTEL_EXPORTER_OTLP_HEADERS (src/telemetry/telemetry.c), and for the
 * encoder over arbitrary attribute text. The input is the variable's value:
 * a refusal must say why and name the variable; an acceptance must give at
 * most 16 "Name: value" lines with a non-empty token name and no control
 * character (no header a value could smuggle in). The same bytes as a string
 * attribute and a status message must encode to a JSON object (bytes that are
 * not UTF-8 become '?').
 */
#include <assert.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "telemetry/telemetry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *v = malloc(size + 1);
    if (!v) return 0;
    memcpy(v, data, size);
    v[size] = '\0';
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9", 1);
    if (strlen(v) == size) {
        setenv("OTEL_EXPORTER_OTLP_HEADERS", v, 1);
        tm_config c;
        char why[300];
        if (tm_config_read(&c, why, sizeof why)) {
            assert(strstr(why, "OTEL_EXPORTER_OTLP_HEADERS") || strstr(why, "memory"));
        } else {
            assert(c.enabled);
            size_t n = 0;
            for (; c.headers[n]; n++) {
                const char *h = c.headers[n], *colon = strstr(h, ": ");
                assert(colon && colon > h);
                for (const char *p = h; *p; p++) assert((unsigned char)*p >= 0x20 && *p != 0x7f);
            }
            assert(n <= 16);
            tm_config_free(&c);
        }
    }
    tm_span *s = calloc(1, sizeof *s);
    if (s) {
        snprintf(s->name, sizeof s->name, "fuzz"); /* names come from code, via tm_span_start */
        tm_span_error(s, v);
        s->kind = TM_KIND_INTERNAL;
        tm_span_str(s, "text", v);
        tm_span_int(s, "size", (int64_t)size);
        char *js = tm_encode_spans(&s, 1, "svc");
        assert(js); /* text that is not UTF-8 is mended, never fatal */
        json_t *o = json_loads(js, 0, NULL);
        assert(json_is_object(o));
        json_decref(o);
        free(js);
        tm_span_free(s);
    }
    free(v);
    return 0;
}
