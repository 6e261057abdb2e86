/*
 * openapi.c: the OpenAPI document served at GET /openapi.json. The one
 * source is docs/openapi.json; the assembler copies it into the binary at
 * build time (.incbin, path relative to the repository root where make
 * runs; the Makefile makes this object depend on the file), so the served
 * description can never differ from the one in docs/. That it matches the
 * routes is checked by tests/e2e/serve_openapi.sh.
 */
#include <stddef.h>
#include "serverInt.h"

__asm__(".section .rodata\n"
        ".balign 16\n"
        ".globl remem__openapi_begin\n"
        ".hidden remem__openapi_begin\n"
        "remem__openapi_begin:\n"
        ".incbin \"docs/openapi.json\"\n"
        ".globl remem__openapi_end\n"
        ".hidden remem__openapi_end\n"
        "remem__openapi_end:\n"
        ".byte 0\n"
        ".previous\n");

extern const char remem__openapi_begin[], remem__openapi_end[];

const char *openapi_document(size_t *len) {
    *len = (size_t)(remem__openapi_end - remem__openapi_begin);
    return remem__openapi_begin;
}
