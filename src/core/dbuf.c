/* dbuf.c - growable buffer with a ceiling. */
#include "core/dbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dbuf_init(dbuf *b, size_t max)
{
    b->p = NULL;
    b->len = b->cap = 0;
    b->max = max;
}

void dbuf_free(dbuf *b)
{
    free(b->p);
    dbuf_init(b, b->max);
}

static int reserve(dbuf *b, size_t n)
{
    if (n > b->max - b->len) return -1;
    size_t need = b->len + n + 1;
    if (need <= b->cap) return 0;
    size_t nc = b->cap ? b->cap : 256;
    while (nc < need)
        nc *= 2;
    if (nc > b->max + 1) nc = b->max + 1;
    char *np = realloc(b->p, nc);
    if (!np) return -1;
    b->p = np;
    b->cap = nc;
    return 0;
}

int dbuf_add(dbuf *b, const void *data, size_t n)
{
    if (reserve(b, n) != 0) return -1;
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

int dbuf_adds(dbuf *b, const char *s)
{
    return dbuf_add(b, s, strlen(s));
}

int dbuf_printf(dbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(b, (size_t)n) != 0) return -1;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

char *dbuf_take(dbuf *b, size_t *len)
{
    if (!b->p) {
        if (reserve(b, 0) != 0) return NULL;
        b->p[0] = '\0'; /* an empty buffer is the empty string */
    }
    char *p = b->p;
    if (len) *len = b->len;
    dbuf_init(b, b->max);
    return p;
}
