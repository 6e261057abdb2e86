/*
 * render.c: tool results of the MCP face, rendered twice: as readable text
 * for the model (one content block) and as structuredContent for programs
 * (the engine's own JSON renderings, so a memory looks the same here as
 * over HTTP and on the command line).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mcpInt.h"

/* The engine renders memories and results (remem_*_to_json) so that every
 * face shows the same shapes; take its text as a JSON value. */
json_t *mcp_engine_json(char *text) {
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    remem_free(text);
    return v;
}

/* A successful result: one text block for the model, structuredContent for
 * programs. Steals structured. */
json_t *mcp_tool_ok(const char *text, json_t *structured) {
    return json_pack("{s:[{s:s, s:s}], s:o}", "content", "type", "text", "text", text,
                     "structuredContent", structured);
}

/* A failed result. No structuredContent: it would have to match the
 * tool's outputSchema, which describes success. */
json_t *mcp_tool_error(const char *text) {
    return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text, "isError",
                     1);
}

void mcp_tb_printf(textbuf *b, const char *fmt, ...) {
    va_list ap;
    int n;
    if (b->oom) return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 512;
        while (cap - b->len <= (size_t)n) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/* ------------------------------------------------------------------ */
/* Rendering memories                                                  */
/* ------------------------------------------------------------------ */

json_t *mcp_memory_json(const remem_memory *m) { return mcp_engine_json(remem_memory_to_json(m)); }

/* One memory as the model reads it: where it lives, what it is, its text. */
void mcp_render_memory(textbuf *b, const remem_memory *m) {
    char created[40] = "";
    if (m->created_at) remem_format_time(m->created_at, created, sizeof created);
    mcp_tb_printf(b, "[%s/%s] %s, tier %s, importance %.2f, created %s", m->ns ? m->ns : "?",
                  m->id ? m->id : "?", m->kind ? m->kind : "memory", m->tier ? m->tier : "?",
                  m->importance, created[0] ? created : "?");
    if (m->invalidated_at) mcp_tb_printf(b, ", INVALIDATED");
    if (m->superseded_by) mcp_tb_printf(b, " (superseded by %s)", m->superseded_by);
    if (m->metadata && strcmp(m->metadata, "{}") != 0)
        mcp_tb_printf(b, "\n   metadata %s", m->metadata);
    mcp_tb_printf(b, "\n   %s\n", m->text ? m->text : "");
}

void mcp_render_hit(textbuf *b, size_t rank, const remem_hit *h) {
    mcp_tb_printf(b, "%zu. score %.4f ", rank, h->score);
    mcp_render_memory(b, &h->mem);
    mcp_tb_printf(b, "   why: relevance %.3f", h->relevance);
    if (isfinite(h->similarity)) mcp_tb_printf(b, " (cosine %.3f)", h->similarity);
    mcp_tb_printf(b,
                  ", lexical %.3f (bm25 %.2f), recency %.3f, importance %.2f, "
                  "context %.3f; found by %s\n",
                  h->lexical, h->bm25, h->recency, h->importance, h->context,
                  (h->lanes & 3u) == 3u ? "vector and lexical search"
                  : (h->lanes & 1u)     ? "vector search"
                  : (h->lanes & 2u)     ? "lexical search"
                                        : "scan");
}

/* Ends a call that built a text: the ok result, or an error when memory
 * ran out on the way. Frees the buffer; steals structured. */
json_t *mcp_finish_text(textbuf *b, json_t *structured) {
    json_t *r;
    if (b->oom || !b->s || !structured) {
        json_decref(structured);
        free(b->s);
        return mcp_tool_error("out of memory while rendering the result");
    }
    r = mcp_tool_ok(b->s, structured);
    free(b->s);
    return r;
}
