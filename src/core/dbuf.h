/* dbuf.h - a growable byte buffer with a size ceiling (after curl's dynbuf).
 * Appends fail (and the buffer stays as it was) past `max`. */
#ifndef ALLOT_CORE_DBUF_H
#define ALLOT_CORE_DBUF_H

#include <stddef.h>

typedef struct dbuf {
    char *p;
    size_t len, cap, max;
} dbuf;

void dbuf_init(dbuf *b, size_t max);
void dbuf_free(dbuf *b);
int dbuf_add(dbuf *b, const void *data, size_t n);
int dbuf_adds(dbuf *b, const char *s);
int dbuf_printf(dbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hand the NUL-terminated contents to the caller (free()) and reset. */
char *dbuf_take(dbuf *b, size_t *len);

#endif
