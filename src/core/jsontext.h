/* jsontext.h - find values in JSON text without parsing it into values.
 *
 * For paths that need a few values out of many large stored objects (a
 * custom quota's recount reads one path and the uid of each of 100,000
 * stored pods): a member is found by skipping the text before it, with no
 * allocation, where json_loadb would build the whole object (9 of 10
 * instructions of a recount were the parse).
 *
 * Contract: the text is one JSON value as json_dumps writes it (the store's
 * objects): valid, and no object with a key twice (the first is found; a
 * parser would keep the last). On text that is not valid JSON the functions
 * may return anything but never read outside [p, end). A key is compared as
 * written: one with an escape in it is not matched (jt_member declines).
 *
 * Pure: no I/O, no globals, no allocation.
 */
#ifndef ALLOT_CORE_JSONTEXT_H
#define ALLOT_CORE_JSONTEXT_H

#include <stdbool.h>
#include <stddef.h>

/* A value's text: p at its first byte; it ends at or before end (a value
 * found is not skipped to learn its end: reading it finds it). */
typedef struct jt_val {
    const char *p, *end;
} jt_val;

/* The whole text as a value (leading white space skipped); p == end when it
 * is empty. */
jt_val jt_text(const char *text, size_t len);

/* The first byte of v ('{', '[', '"', 't', 'f', 'n', or a number's first),
 * or 0 when v is empty. */
static inline char jt_kind(jt_val v)
{
    return v.p < v.end ? *v.p : 0;
}

/* Member `key` (klen bytes, compared raw) of object v: 1 found (*out is its
 * value), 0 absent, -1 declined: v is not an object or is malformed, or a
 * key before the match has an escape that could spell it. */
int jt_member(jt_val v, const char *key, size_t klen, jt_val *out);

/* Array iteration: `for (const char *it = NULL; (r = jt_next(v, &it, &e)) > 0;)`;
 * 1 with the next element in *out, 0 at the end, -1 when v is not an array
 * or is malformed. `it` is the last element's start (skipped on the next
 * call). */
int jt_next(jt_val v, const char **it, jt_val *out);

/* Past v's last byte (its end found by skipping it), or NULL when it is
 * malformed. */
const char *jt_skip(jt_val v);

/* A string without escapes: 0 with its bytes in *s, *n (not NUL-terminated);
 * -1 when v is not a string or has an escape. */
int jt_string(jt_val v, const char **s, size_t *n);

#endif
