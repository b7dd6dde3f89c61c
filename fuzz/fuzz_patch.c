/* fuzz_patch.c - libFuzzer target for PATCH bodies (api/patch.h).
 *
 * Input: two header bytes, a JSON document, a NUL byte, then the patch body.
 *   byte 0: the Content-Type (json-patch, merge-patch, strategic-merge-patch,
 *           apply-patch+yaml, with parameters, or one no server applies);
 *   byte 1: the kind whose strategic merge rules apply (a built-in kind, the
 *           Scale subresource, a custom kind, or none).
 * The body is applied to the document through patch_apply, the dispatcher
 * src/server/rest.c calls, and the result is then decoded as its typed kind
 * (as rest.c typed_patch_result does). Nothing may crash, leak, hang or blow
 * up memory, and (abort() otherwise):
 *   - patch_check_type and patch_apply agree on which types are refused;
 *   - a failure comes with an error code and a message; a success with a
 *     value and no error;
 *   - the document is never modified (inputs are borrowed);
 *   - a merge patch (RFC 7386) is idempotent: applying it twice gives the
 *     result of applying it once;
 *   - the result is printable JSON.
 * Sizes are bounded (MAX_INPUT) so that one input costs milliseconds; the
 * patch module's own limits (operations, list lengths, copied bytes) keep
 * results small, and -rss_limit_mb catches any input that escapes them.
 */
#include "api/kinds.h"
#include "api/patch.h"
#include "api/schema.h"
#include "api/status.h"
#include "api/typecheck.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT (16 * 1024)

static void check(int ok)
{
    if (!ok) abort();
}

static const char *const TYPES[] = {
    PATCH_CT_JSON,
    PATCH_CT_MERGE,
    PATCH_CT_STRATEGIC,
    PATCH_CT_STRATEGIC "; charset=utf-8",
    PATCH_CT_MERGE "; charset=utf-8",
    PATCH_CT_APPLY,
    "application/json",
    "",
};
#define NTYPES (sizeof TYPES / sizeof *TYPES)

static const char *const KINDS[] = {
    "Pod",        "ResourceQuota", "LimitRange", "Deployment", "Service", "Node",
    "Namespace",  "ReplicaSet",    "Scale",      "ConfigMap",  "PersistentVolumeClaim",
    "CustomQuota", "ResourcePool",  NULL,
};
#define NKINDS (sizeof KINDS / sizeof *KINDS)

static void check_err(const api_err *e)
{
    check(e->code != API_OK && e->message[0] != '\0');
}

/* rest.c typed_patch_result: decode the result as its kind, when it is one. */
static void decode_result(json_t *obj, const char *ct)
{
    const api_kind *k = NULL;
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if (av && kind) k = api_kind_by_kind(av, kind);
    const sch_msg *m = k ? api_kind_schema(k) : NULL;
    if (!m) return;
    tc_result r = {0};
    bool strategic = !strncmp(ct, PATCH_CT_STRATEGIC, strlen(PATCH_CT_STRATEGIC));
    if (tc_decode_mode(m, obj, strategic ? TC_UNSTRUCTURED : TC_JSON, &r) != 0)
        check(r.error[0] != '\0');
    tc_result_clear(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > MAX_INPUT) return 0;
    const char *ct = TYPES[data[0] % NTYPES];
    const char *kind = KINDS[data[1] % NKINDS];
    const char *rest = (const char *)data + 2;
    size_t len = size - 2;
    const char *nul = memchr(rest, 0, len);
    if (!nul) return 0;
    json_t *doc = json_loadb(rest, (size_t)(nul - rest), 0, NULL);
    if (!doc) return 0;
    const char *body = nul + 1;
    size_t blen = len - (size_t)(nul - rest) - 1;

    json_t *before = json_deep_copy(doc);
    check(before != NULL);
    api_err e;
    api_err_init(&e);
    int type_ok = patch_check_type(ct, &e);
    if (type_ok != 0) check_err(&e);
    api_err_clear(&e);

    api_err_init(&e);
    json_t *out = patch_apply(ct, doc, body, blen, kind, &e);
    check(json_equal(doc, before)); /* borrowed, never modified */
    if (!out) {
        check_err(&e);
    } else {
        check(type_ok == 0 && e.code == API_OK);
        char *text = json_dumps(out, JSON_ENCODE_ANY | JSON_COMPACT);
        check(text != NULL);
        free(text);

        if (!strncmp(ct, PATCH_CT_MERGE, strlen(PATCH_CT_MERGE))) {
            json_t *p = json_loadb(body, blen, JSON_DECODE_ANY, NULL);
            if (p) {
                json_t *twice = patch_merge(out, p);
                check(twice && json_equal(twice, out));
                json_decref(twice);
                json_decref(p);
            }
        }
        if (json_is_object(out)) decode_result(out, ct);
    }
    api_err_clear(&e);
    json_decref(out);
    json_decref(before);
    json_decref(doc);
    return 0;
}
