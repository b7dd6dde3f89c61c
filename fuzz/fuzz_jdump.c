/* fuzz_jdump.c - libFuzzer target for core/jdump.h.
 *
 * Input: any bytes. When jansson parses them (any value, NUL allowed in
 * strings), jdump must write exactly jansson's compact text and jcopy must
 * make a value equal to the original whose text is the same (members in the
 * same order). A string made without jansson's UTF-8 check from the raw
 * bytes must fail in both or in neither.
 */
#include "core/jdump.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void same(const json_t *v)
{
    char *theirs = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    size_t n = 0;
    char *ours = jdump(v, &n);
    if (!theirs != !ours) abort();
    if (ours && (n != strlen(theirs) || memcmp(ours, theirs, n) != 0)) abort();
    free(theirs);
    free(ours);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *v = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (v) {
        same(v);
        json_t *c = jcopy(v);
        if (!c || !json_equal(c, v)) abort();
        char *a = jdump(v, NULL), *b = jdump(c, NULL);
        if (!a || !b || strcmp(a, b) != 0) abort();
        free(a);
        free(b);
        json_decref(c);
        json_decref(v);
    }
    json_t *raw = json_stringn_nocheck((const char *)data, size); /* maybe not UTF-8 */
    if (raw) same(raw);
    json_decref(raw);
    return 0;
}
