/* jdump.c - compact JSON text and deep copies without cycle checks (jdump.h). */
#include "core/jdump.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct out {
    char *p;
    size_t len, cap;
    bool failed;
} out;

static bool grow(out *o, size_t need)
{
    if (o->failed) return false;
    if (o->len + need + 1 <= o->cap) return true;
    size_t nc = o->cap ? o->cap : 256;
    while (nc < o->len + need + 1)
        nc *= 2;
    char *np = realloc(o->p, nc);
    if (!np) {
        o->failed = true;
        return false;
    }
    o->p = np;
    o->cap = nc;
    return true;
}

static void put(out *o, const char *s, size_t n)
{
    if (!grow(o, n)) return;
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

static void putc1(out *o, char c)
{
    if (!grow(o, 1)) return;
    o->p[o->len++] = c;
}

/* The length of the UTF-8 sequence starting s[0] (at most n bytes left), as
 * RFC 3629 allows it: no overlong forms, no surrogates, nothing past
 * U+10FFFF. 0 when it is not one. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t k;
    uint32_t v;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        k = 2;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        k = 3;
        v = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        k = 4;
        v = c & 0x07;
    } else {
        return 0;
    }
    if (k > n) return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    if ((k == 3 && v < 0x800) || (k == 4 && v < 0x10000)) return 0;
    return k;
}

/* A JSON string: jansson's escapes, UTF-8 checked. */
static void put_string(out *o, const char *str, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *s = (const unsigned char *)str;
    putc1(o, '"');
    size_t run = 0; /* bytes of s before i not yet written */
    for (size_t i = 0; i < n && !o->failed;) {
        unsigned char c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0x80) {
            size_t k = utf8_seq(s + i, n - i);
            if (!k) {
                o->failed = true;
                return;
            }
            i += k;
            continue;
        }
        put(o, str + run, i - run);
        char esc[6] = {'\\', 0};
        size_t elen = 2;
        switch (c) {
        case '"':
            esc[1] = '"';
            break;
        case '\\':
            esc[1] = '\\';
            break;
        case '\b':
            esc[1] = 'b';
            break;
        case '\f':
            esc[1] = 'f';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 0xF];
            elen = 6;
        }
        put(o, esc, elen);
        run = ++i;
    }
    put(o, str + run, n - run);
    putc1(o, '"');
}

static void put_integer(out *o, json_int_t v)
{
    char buf[24];
    size_t i = sizeof buf;
    /* (unsigned arithmetic: the most negative value has no positive twin) */
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        buf[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) buf[--i] = '-';
    put(o, buf + i, sizeof buf - i);
}

static void dump(out *o, const json_t *v, int depth)
{
    if (o->failed) return;
    if (!v || depth > JDUMP_MAX_DEPTH) {
        o->failed = true;
        return;
    }
    switch (json_typeof(v)) {
    case JSON_NULL:
        put(o, "null", 4);
        return;
    case JSON_TRUE:
        put(o, "true", 4);
        return;
    case JSON_FALSE:
        put(o, "false", 5);
        return;
    case JSON_INTEGER:
        put_integer(o, json_integer_value(v));
        return;
    case JSON_REAL: {
        /* jansson's own formatting of reals (%.17g, ".0" added, exponent
         * trimmed): rare in objects, and no cycle check for a scalar */
        char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        if (!t) {
            o->failed = true;
            return;
        }
        put(o, t, strlen(t));
        free(t);
        return;
    }
    case JSON_STRING:
        put_string(o, json_string_value(v), json_string_length(v));
        return;
    case JSON_ARRAY: {
        putc1(o, '[');
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; i++) {
            if (i) putc1(o, ',');
            dump(o, json_array_get(v, i), depth + 1);
        }
        putc1(o, ']');
        return;
    }
    case JSON_OBJECT: {
        putc1(o, '{');
        bool first = true;
        const char *key;
        size_t klen;
        json_t *m;
        json_object_keylen_foreach((json_t *)v, key, klen, m)
        {
            if (!first) putc1(o, ',');
            first = false;
            put_string(o, key, klen);
            putc1(o, ':');
            dump(o, m, depth + 1);
        }
        putc1(o, '}');
        return;
    }
    }
    o->failed = true;
}

char *jdump(const json_t *v, size_t *len)
{
    out o = {0};
    dump(&o, v, 0);
    if (o.failed || !grow(&o, 0)) {
        free(o.p);
        return NULL;
    }
    o.p[o.len] = '\0';
    if (len) *len = o.len;
    return o.p;
}

static json_t *copy(const json_t *v, int depth)
{
    if (!v || depth > JDUMP_MAX_DEPTH) return NULL;
    switch (json_typeof(v)) {
    case JSON_NULL:
    case JSON_TRUE:
    case JSON_FALSE:
        return json_incref((json_t *)v); /* (jansson's singletons) */
    case JSON_INTEGER:
        return json_integer(json_integer_value(v));
    case JSON_REAL:
        return json_real(json_real_value(v));
    case JSON_STRING:
        return json_stringn_nocheck(json_string_value(v), json_string_length(v));
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        json_t *a = json_array();
        for (size_t i = 0; a && i < n; i++) {
            json_t *c = copy(json_array_get(v, i), depth + 1);
            if (!c || json_array_append_new(a, c) != 0) {
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    case JSON_OBJECT: {
        json_t *obj = json_object();
        const char *key;
        size_t klen;
        json_t *m;
        if (!obj) return NULL;
        json_object_keylen_foreach((json_t *)v, key, klen, m)
        {
            json_t *c = copy(m, depth + 1);
            if (!c || json_object_setn_new_nocheck(obj, key, klen, c) != 0) {
                json_decref(obj);
                return NULL;
            }
        }
        return obj;
    }
    }
    return NULL;
}

json_t *jcopy(const json_t *v)
{
    return copy(v, 0);
}
