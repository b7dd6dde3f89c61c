/* jsontext.c - find values in JSON text without parsing it (jsontext.h). */
#include "core/jsontext.h"

#include <string.h>

static const char *ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* The bytes a string skip stops at. */
static const unsigned char sstop[256] = {['"'] = 1, ['\\'] = 1};

/* p at a '"': past the closing quote, or NULL; *esc set when the string
 * has an escape. (Most strings are keys of a few bytes: a loop four bytes
 * a step beats memchr's call.) */
static const char *skip_string(const char *p, const char *end, bool *esc)
{
    for (p++;;) {
        while (p + 4 <= end && !(sstop[(unsigned char)p[0]] | sstop[(unsigned char)p[1]] |
                                 sstop[(unsigned char)p[2]] | sstop[(unsigned char)p[3]]))
            p += 4;
        while (p < end && !sstop[(unsigned char)*p])
            p++;
        if (p >= end) return NULL;
        if (*p == '"') return p + 1;
        *esc = true; /* a backslash: the next byte is escaped */
        p += 2;
    }
}

/* The bytes a container skip stops at. */
static const unsigned char stop[256] = {['"'] = 1, ['{'] = 1, ['['] = 1, ['}'] = 1, [']'] = 1};

/* p at a value's first byte: past its last, or NULL. Containers are skipped
 * by depth (no recursion: any nesting costs no stack). */
static const char *skip_value(const char *p, const char *end)
{
    bool esc;
    if (p >= end) return NULL;
    if (*p == '"') return skip_string(p, end, &esc);
    if (*p == '{' || *p == '[') {
        size_t depth = 0;
        while (p < end) {
            while (p + 4 <= end && !(stop[(unsigned char)p[0]] | stop[(unsigned char)p[1]] |
                                     stop[(unsigned char)p[2]] | stop[(unsigned char)p[3]]))
                p += 4;
            while (p < end && !stop[(unsigned char)*p])
                p++;
            if (p == end) break;
            char c = *p;
            if (c == '"') {
                if (!(p = skip_string(p, end, &esc))) return NULL;
                continue;
            }
            if (c == '{' || c == '[') {
                depth++;
            } else if (--depth == 0) {
                return p + 1;
            }
            p++;
        }
        return NULL;
    }
    /* a number or a literal: up to the next delimiter */
    const char *s = p;
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' &&
           *p != '\n' && *p != '\r' && *p != ':' && *p != '"')
        p++;
    return p > s ? p : NULL;
}

jt_val jt_text(const char *text, size_t len)
{
    jt_val v = {text, text + len};
    v.p = ws(v.p, v.end);
    return v;
}

int jt_member(jt_val v, const char *key, size_t klen, jt_val *out)
{
    const char *p = v.p, *end = v.end;
    if (p >= end || *p != '{') return -1;
    bool escaped = false; /* a key with an escape was passed: "absent" is unsure */
    p = ws(p + 1, end);
    if (p < end && *p == '}') return 0;
    while (p < end && *p == '"') {
        const char *k = p + 1;
        bool esc = false;
        const char *q = skip_string(p, end, &esc);
        if (!q) return -1;
        size_t n = (size_t)(q - 1 - k);
        p = ws(q, end);
        if (p >= end || *p != ':') return -1;
        p = ws(p + 1, end);
        if (esc) {
            escaped = true;
        } else if (n == klen && memcmp(k, key, klen) == 0) {
            /* (not skipped: whoever reads it finds its end) */
            out->p = p;
            out->end = end;
            return 1;
        }
        const char *ve = skip_value(p, end);
        if (!ve) return -1;
        p = ws(ve, end);
        if (p < end && *p == '}') return escaped ? -1 : 0;
        if (p >= end || *p != ',') return -1;
        p = ws(p + 1, end);
    }
    return -1;
}

int jt_next(jt_val v, const char **it, jt_val *out)
{
    const char *p, *end = v.end;
    if (!*it) {
        if (v.p >= end || *v.p != '[') return -1;
        p = ws(v.p + 1, end);
        if (p < end && *p == ']') return 0;
    } else {
        /* *it: the element returned last, skipped now */
        if (!(p = skip_value(*it, end))) return -1;
        p = ws(p, end);
        if (p < end && *p == ']') return 0;
        if (p >= end || *p != ',') return -1;
        p = ws(p + 1, end);
    }
    if (p >= end) return -1;
    out->p = p;
    out->end = end;
    *it = p;
    return 1;
}

const char *jt_skip(jt_val v)
{
    return skip_value(v.p, v.end);
}

int jt_string(jt_val v, const char **s, size_t *n)
{
    if (v.p >= v.end || *v.p != '"') return -1;
    for (const char *p = v.p + 1; p < v.end; p++) {
        if (*p == '\\') return -1;
        if (*p == '"') {
            *s = v.p + 1;
            *n = (size_t)(p - *s);
            return 0;
        }
    }
    return -1;
}
