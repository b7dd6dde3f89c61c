/* fuzz_jsonschema.c - libFuzzer target for structural schemas (core/jsonschema.h).
 *
 * Input: a JSON schema, optionally followed by a NUL byte and a JSON body.
 * The schema is compiled; when it compiles, the body (or the schema text
 * itself read as a body) is defaulted, pruned and validated, twice on
 * copies: results must be deterministic, pruning twice drops nothing, and every error has a field and, unless it
 * is a Required one, a detail. Nothing may crash, leak or take long.
 */
#include "core/jsonschema.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void run(const js_schema *s, const json_t *body)
{
    json_t *a = json_deep_copy(body);
    if (!a) return;
    (void)js_default(s, a);
    json_t *pruned = json_array();
    int p1 = js_prune(s, a, pruned);
    if (p1 >= 0 && pruned && json_array_size(pruned) != (size_t)p1) abort();
    if (p1 >= 0 && js_prune(s, a, NULL) != 0) abort();
    js_errors e1 = {0}, e2 = {0};
    int n1 = js_validate(s, a, &e1), n2 = js_validate(s, a, &e2);
    if (n1 != n2 || e1.n != e2.n) abort();
    for (size_t i = 0; i < e1.n; i++) {
        if (!e1.v[i].field || strcmp(e1.v[i].field, e2.v[i].field)) abort();
        if (e1.v[i].reason != JS_REQUIRED && !e1.v[i].detail) abort();
    }
    js_errors_free(&e1);
    js_errors_free(&e2);
    json_decref(pruned);
    json_decref(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024) return 0;
    const uint8_t *nul = memchr(data, 0, size);
    size_t slen = nul ? (size_t)(nul - data) : size;
    json_t *schema = json_loadb((const char *)data, slen, 0, NULL);
    if (!schema) return 0;
    char err[256];
    js_schema *s = js_compile(schema, err, sizeof err);
    if (!s && err[0] == '\0') abort();
    if (s) {
        json_t *body = nul ? json_loadb((const char *)nul + 1, size - slen - 1,
                                        JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL)
                           : NULL;
        run(s, body ? body : schema);
        json_decref(body);
        js_free(s);
    }
    json_decref(schema);
    return 0;
}
