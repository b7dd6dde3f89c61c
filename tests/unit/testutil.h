/* testutil.h - helpers shared by the unit tests (include after cmocka.h).
 * Test fixtures only: failures abort the test through cmocka. */
#ifndef ALLOT_TESTS_TESTUTIL_H
#define ALLOT_TESTS_TESTUTIL_H

#include "core/quantity.h"
#include "core/rlist.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* JSON written with single quotes for readability: "{'a':1}". Caller owns. */
static inline json_t *J(const char *s)
{
    char *d = strdup(s);
    for (char *p = d; *p; p++)
        if (*p == '\'') *p = '"';
    json_error_t e;
    json_t *v = json_loads(d, JSON_DECODE_ANY, &e);
    if (!v) fail_msg("bad test JSON %s: %s", s, e.text);
    free(d);
    return v;
}

/* Fail with both values when got != want (keys sorted in the message). */
static inline void assert_json_eq(const json_t *got, const json_t *want)
{
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
        char *w = json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("got  %s\nwant %s", g, w);
    }
}

/* "a=1,b=2Gi" -> rlist. */
static inline rlist *L(const char *spec)
{
    rlist *l = rl_new();
    char *d = strdup(spec), *save = NULL;
    for (char *t = strtok_r(d, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strrchr(t, '=');
        qty q;
        *eq = 0;
        if (qty_parse(eq + 1, &q)) fail_msg("bad qty %s", eq + 1);
        assert_int_equal(rl_set(l, t, &q), 0);
    }
    free(d);
    return l;
}

/* Field error i of a causes list (api/status.h) is {reason, field, message}. */
static inline void expect_cause(const json_t *causes, size_t i, const char *reason,
                                const char *field, const char *msg)
{
    const json_t *c = json_array_get(causes, i);
    assert_non_null(c);
    assert_string_equal(json_string_value(json_object_get(c, "reason")), reason);
    assert_string_equal(json_string_value(json_object_get(c, "field")), field);
    assert_string_equal(json_string_value(json_object_get(c, "message")), msg);
}

#endif
