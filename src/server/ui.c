/* ui.c - the dashboard's static files (see ui.h). */
#include "server/ui.h"

#include <string.h>

const char *const ui_headers[] = {
    "Content-Security-Policy",
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options",
    "nosniff",
    "X-Frame-Options",
    "DENY",
    "Referrer-Policy",
    "no-referrer",
    NULL,
};

bool ui_path(const char *path)
{
    return !strncmp(path, "/ui", 3) && (path[3] == '\0' || path[3] == '/');
}

const ui_asset *ui_find(const char *path)
{
    if (!ui_path(path)) return NULL;
    const char *name = path[3] ? path + 4 : "";
    if (!*name) name = "index.html";
    for (const ui_asset *a = ui_assets; a->name; a++)
        if (!strcmp(a->name, name)) return a;
    return NULL;
}
