/* urlpath.h - the request path as routing sees it: the raw (still
 * percent-encoded) request target is split on '/' first and each segment is
 * percent-decoded on its own, so no encoded byte ("%2f", "%00", ...) can
 * change which object a request names. A decoded segment holding a '/' is
 * just a name no object can have.
 *
 * Pure: no allocation, no I/O.
 */
#ifndef ALLOT_CORE_URLPATH_H
#define ALLOT_CORE_URLPATH_H

#include <stddef.h>

/* A decoded segment is shorter than this (it fits a char[URLPATH_SEG_MAX]). */
#define URLPATH_SEG_MAX 256

typedef enum urlpath_status {
    URLPATH_OK = 0,
    URLPATH_NO_ROUTE,   /* more segments than asked for, or one too long: no route matches */
    URLPATH_BAD_ESCAPE, /* a '%' not followed by two hex digits */
    URLPATH_CONTROL,    /* a segment decodes to a byte 0x00-0x1f or 0x7f */
} urlpath_status;

/* Length of the path part of a request target: up to the first '?'. */
size_t urlpath_path_len(const char *raw);

/* Percent-decode the `len` bytes at `s` (one segment, '/' not special) into
 * `out` (`outlen` bytes, NUL-terminated) and store the decoded length in
 * *decoded. `out` may be NULL to only check the segment. URLPATH_NO_ROUTE
 * when the result does not fit; a malformed escape or a control byte wins
 * over that. */
urlpath_status urlpath_decode_segment(const char *s, size_t len, char *out, size_t outlen,
                                      size_t *decoded);

/* Split the path part of `raw` on '/', skipping empty segments (so "//" and
 * a trailing '/' add none), and decode each segment into segs[0..*n). Every
 * segment is checked even past `max`, so a malformed escape or a control
 * byte anywhere is reported (URLPATH_BAD_ESCAPE / URLPATH_CONTROL) rather
 * than URLPATH_NO_ROUTE. *n is set only on URLPATH_OK. */
urlpath_status urlpath_split(const char *raw, char segs[][URLPATH_SEG_MAX], int max, int *n);

/* Upstream-style text for a 400 about status `st` ("" for URLPATH_OK). */
const char *urlpath_message(urlpath_status st);

/* The path part of `raw` made safe inside a JSON string in a log line: a
 * byte that is not printable ASCII, and '"' and '\\', becomes %XX (so the
 * path stays in its escaped form); existing escapes are kept as they are.
 * Cut at a whole byte when `out` (`outlen` > 0) is full; always
 * NUL-terminated. */
void urlpath_log_escape(const char *raw, char *out, size_t outlen);

#endif
