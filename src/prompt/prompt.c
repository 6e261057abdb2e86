/*
 * prompt.c: the table of prompt formats and the one renderer
 * (prompt.h). Seed 004's "stream" block is reproduced byte for byte:
 *
 *   ## Your Relevant Memories from Past Deliberations
 *
 *   - [November 2, 2025 at 02:30 PM] I recommended diplomatic engagement ...
 *   - [November 1, 2025 at 10:15 AM] I decided to pursue military ...
 *
 *   **[REFLECTION]** (November 3, 2025)
 *     Bolton's recommendations have led to unintended escalation ...
 *
 * Dates are rendered in UTC, or shifted by each item's offset from it (the
 * caller's configured zone), with remem's own month names, so the block
 * is the same whatever locale the host program set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prompt/prompt.h"
#include "util/util.h"

static const prompt_format FORMATS[] = {
    {"stream", "a memory injection block: timestamped memories, then reflections",
     "## Your Relevant Memories from Past Deliberations\n", "\n", "- [{datetime}] {text}\n",
     "\n**[REFLECTION]** ({date})\n  {text}\n", 1},
    {"list", "one line per memory, in rank order: kind, date and text", "", "",
     "- ({kind}, {iso}) {text}\n", NULL, 0},
    {"plain", "the texts alone, one per line, in rank order", "", "", "{text}\n", NULL, 0},
};

const prompt_format *prompt_formats(size_t *n) {
    *n = sizeof FORMATS / sizeof FORMATS[0];
    return FORMATS;
}

const prompt_format *prompt_find(const char *name) {
    for (size_t i = 0; name && i < sizeof FORMATS / sizeof FORMATS[0]; i++)
        if (!strcmp(FORMATS[i].name, name)) return &FORMATS[i];
    return NULL;
}

static const char *const MONTHS[] = {"January",   "February", "March",    "April",
                                     "May",       "June",     "July",     "August",
                                     "September", "October",  "November", "December"};

static void put_date(strbuf *b, int64_t ms, int with_time) {
    time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    sb_printf(b, "%s %d, %d", MONTHS[tm.tm_mon], tm.tm_mday, tm.tm_year + 1900);
    if (with_time) {
        int h = tm.tm_hour % 12;
        sb_printf(b, " at %02d:%02d %s", h ? h : 12, tm.tm_min, tm.tm_hour < 12 ? "AM" : "PM");
    }
}

/* {text} with every line after the first indented as the template's line
 * is (the spaces before the placeholder on its line). */
static void put_text(strbuf *b, const char *text, size_t indent) {
    for (const char *p = text; *p; p++) {
        sb_append(b, p, 1);
        if (*p == '\n' && p[1])
            for (size_t i = 0; i < indent; i++) sb_puts(b, " ");
    }
}

static void expand(strbuf *b, const char *tpl, const prompt_item *it) {
    const char *line = tpl;
    for (const char *p = tpl; *p;) {
        if (*p == '\n') line = p + 1;
        if (*p != '{') {
            sb_append(b, p++, 1);
            continue;
        }
        const char *end = strchr(p, '}');
        size_t len = end ? (size_t)(end - p - 1) : 0;
        const char *name = p + 1;
#define IS(s) (len == strlen(s) && !strncmp(name, s, len))
        if (!end) {
            sb_puts(b, p);
            return;
        } else if (IS("text")) {
            size_t indent = 0;
            while (line + indent < p && line[indent] == ' ') indent++;
            put_text(b, it->text ? it->text : "", indent);
        } else if (IS("datetime")) {
            put_date(b, it->created_at + (int64_t)it->utc_offset_s * 1000, 1);
        } else if (IS("date")) {
            put_date(b, it->created_at + (int64_t)it->utc_offset_s * 1000, 0);
        } else if (IS("iso")) {
            char buf[40];
            util_format_time(it->created_at, buf, sizeof buf);
            sb_puts(b, buf);
        } else if (IS("kind")) {
            sb_puts(b, it->kind ? it->kind : "");
        } else if (IS("tier")) {
            sb_puts(b, it->tier ? it->tier : "");
        } else if (IS("id")) {
            sb_puts(b, it->id ? it->id : "");
        } else if (IS("score")) {
            sb_printf(b, "%.3f", it->score);
        } else {
            sb_append(b, p, len + 2); /* not a placeholder: kept as written */
        }
#undef IS
        p = end + 1;
    }
}

static int is_reflection(const prompt_item *it) {
    return it->kind && !strcmp(it->kind, "reflection");
}

char *prompt_render(const prompt_format *f, const prompt_item *items, size_t n) {
    strbuf b;
    sb_init(&b);
    if (n == 0) return sb_take(&b);
    sb_puts(&b, f->header);
    int opened = 0;
    for (size_t i = 0; i < n; i++) {
        if (f->split_reflections && is_reflection(&items[i])) continue;
        if (!opened++) sb_puts(&b, f->group_open);
        expand(&b, f->item, &items[i]);
    }
    if (f->split_reflections) {
        for (size_t i = 0; i < n; i++)
            if (is_reflection(&items[i])) expand(&b, f->reflection, &items[i]);
    }
    return sb_take(&b);
}
