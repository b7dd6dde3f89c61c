/* ui.h - the dashboard's static files, served at /ui.
 *
 * The files (ui/) are compiled into the binary (cmake/embed.cmake): allotd
 * needs no file system, CDN or network to serve them. They hold no data: the
 * page asks for a token and reads everything through the API with it, so the
 * files themselves are served without authentication, with a strict
 * Content-Security-Policy (no inline script, no other origin).
 */
#ifndef ALLOT_SERVER_UI_H
#define ALLOT_SERVER_UI_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ui_asset {
    const char *name; /* "index.html" */
    const char *type; /* its Content-Type */
    const unsigned char *data;
    size_t len;
} ui_asset;

/* The embedded files, {NULL}-terminated (generated: ui_assets.c). */
extern const ui_asset ui_assets[];

/* Whether the raw request path is the dashboard's: "/ui" or under "/ui/". */
bool ui_path(const char *path);

/* The file a dashboard path names: "/ui", "/ui/" and "/ui/index.html" name
 * the page; NULL when there is no such file. */
const ui_asset *ui_find(const char *path);

/* Headers every dashboard response carries (name, value, ..., NULL). */
extern const char *const ui_headers[];

#endif
