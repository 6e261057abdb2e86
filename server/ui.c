/*
 * ui.c: the inspector, GET /ui (docs/inspector.md): one HTML page, its
 * script and style, and Debian's Chart.js, all copied into the binary at
 * build time (.incbin, as openapi.c does; the Makefile makes this object
 * depend on the files), so that no request ever names a file on the
 * server's disk and the page needs no network. The page itself is public
 * (a browser cannot send a key with a navigation); everything it shows it
 * asks of the JSON API with the key the person types, so it shows only
 * what that key may read. `remem serve --no-ui` turns it off, and so does
 * `serve: {ui: false}` in the configuration (http.c reads it at startup).
 */
#include <string.h>
#include "serverInt.h"

#ifndef REMEM_CHARTJS
#define REMEM_CHARTJS "/usr/share/javascript/chart.js/chart.min.js"
#endif

#define UI_ASSET(sym, path)                                                                     \
    __asm__(".section .rodata\n.balign 16\n.globl remem__ui_" #sym "_begin\n.hidden remem__ui_" \
            #sym "_begin\nremem__ui_" #sym "_begin:\n.incbin \"" path "\"\n.globl remem__ui_" #sym \
            "_end\n.hidden remem__ui_" #sym "_end\nremem__ui_" #sym "_end:\n.byte 0\n.previous\n"); \
    extern const char remem__ui_##sym##_begin[], remem__ui_##sym##_end[];

UI_ASSET(index, "server/ui/index.html")
UI_ASSET(app, "server/ui/app.js")
UI_ASSET(css, "server/ui/app.css")
UI_ASSET(chart, REMEM_CHARTJS)

typedef struct ui_asset {
    const char *name; /* the path's last part: /ui/<name>; "" is /ui */
    const char *type;
    const char *begin, *end;
} ui_asset;

static const ui_asset *find_asset(const char *name) {
    static const ui_asset assets[] = {
        {"", "text/html; charset=utf-8", remem__ui_index_begin, remem__ui_index_end},
        {"app.js", "text/javascript; charset=utf-8", remem__ui_app_begin, remem__ui_app_end},
        {"app.css", "text/css; charset=utf-8", remem__ui_css_begin, remem__ui_css_end},
        {"chart.js", "text/javascript; charset=utf-8", remem__ui_chart_begin,
         remem__ui_chart_end},
    };
    for (size_t i = 0; i < sizeof assets / sizeof assets[0]; i++)
        if (!strcmp(assets[i].name, name)) return &assets[i];
    return NULL;
}

void h_ui(request *rq, reply *rp) {
    if (rq->srv->cfg.no_ui) {
        reply_error(rp, 404, "REMEM_ENOROUTE",
                    "the inspector is off on this server (remem serve --no-ui, or serve.ui: "
                    "false in its configuration)");
        return;
    }
    const ui_asset *a = find_asset(rq->route == R_UI ? "" : rq->id ? rq->id : "");
    if (!a || (rq->route == R_UI_ASSET && !a->name[0])) {
        reply_error(rp, 404, "REMEM_ENOROUTE", "the inspector has no file %s (it has app.js, "
                    "app.css, chart.js)", rq->id ? rq->id : "");
        return;
    }
    /* Static bytes: the reply borrows them (free_body NULL). */
    reply_text(rp, 200, (char *)a->begin, NULL, a->type);
    rp->len = (size_t)(a->end - a->begin);
}
