/* patch.h - PATCH bodies applied to JSON objects: merge, JSON and strategic.
 *
 * Pure functions over jansson values: no I/O, no globals. The server hands
 * the stored object and the request body here and stores what comes back.
 *
 * Ownership (one rule for the whole module): inputs are borrowed and never
 * modified; every json_t returned is a new reference owned by the caller.
 * On failure a function returns NULL and fills `err` (a Kubernetes Status
 * reason and message, see status.h); nothing is returned half-patched.
 *
 * Errors, as upstream's patch handler reports them:
 *   400 BadRequest   body is not JSON, or the patch document is malformed
 *                    (not an array of operations, bad JSON Pointer, unknown
 *                    op or $patch directive, list element without its merge key)
 *   413 RequestEntityTooLarge  more than PATCH_MAX_JSON_OPS operations,
 *                    a strategic merge list over 5000 elements (merging is
 *                    quadratic, as upstream's is), or a result larger than
 *                    PATCH_MAX_RESULT_BYTES
 *   415 UnsupportedMediaType   unknown content type (server-side apply is
 *                    api/fieldmanager.h's, not a patch of this module)
 *   422 Invalid      a well-formed JSON patch that does not apply (missing
 *                    path, failed "test", copies adding more than
 *                    PATCH_MAX_COPY_BYTES), or a strategic patch upstream also
 *                    answers with 422 (lists of lists, $retainKeys mismatch).
 *                    Message is upstream's generic
 *                    "the server rejected our request due to an error in our
 *                    request"; the specific reason is details.causes[0].message.
 */
#ifndef ALLOT_API_PATCH_H
#define ALLOT_API_PATCH_H

#include <jansson.h>
#include <stddef.h>

#include "api/status.h"

#define PATCH_CT_JSON "application/json-patch+json"
#define PATCH_CT_MERGE "application/merge-patch+json"
#define PATCH_CT_STRATEGIC "application/strategic-merge-patch+json"
#define PATCH_CT_APPLY "application/apply-patch+yaml"

/* Upstream's limit on operations in one JSON patch. */
#define PATCH_MAX_JSON_OPS 10000
/* Upstream's limit on what the "copy" operations of one JSON patch may add
 * (the compact JSON size of each copied value, summed): JSONPatchMaxCopyBytes,
 * 3 MiB. Past it: 422, "Unable to complete the copy, ...". */
#define PATCH_MAX_COPY_BYTES 3145728
/* The largest object (compact JSON) a patch may produce, of any type: the
 * request body limit, so a patch cannot build what a PUT could not send.
 * Past it: 413 "Request entity too large: limit is 3145728". */
#define PATCH_MAX_RESULT_BYTES 3145728

/* RFC 7386 JSON Merge Patch. `orig` may be NULL (absent). Never fails for
 * valid inputs; a non-object patch replaces the target (RFC semantics). */
json_t *patch_merge(const json_t *orig, const json_t *patch);

/* RFC 6902 JSON Patch. `ops` must be an array of operation objects; paths
 * are RFC 6901 JSON Pointers ("~0" is '~', "~1" is '/', "-" appends). The
 * operations apply in order to a copy of `orig`; any failure aborts all. */
json_t *patch_json(const json_t *orig, const json_t *ops, api_err *err);

/* Kubernetes strategic merge patch for built-in kinds: maps merge, null
 * deletes, lists replace unless the field is a merge list (table in
 * patch.c), and the directives $patch (replace|delete|merge),
 * $retainKeys, $setElementOrder/<f> and $deleteFromPrimitiveList/<f>.
 * `kind` NULL or not a built-in kind falls back to patch_merge(). */
json_t *patch_strategic(const json_t *orig, const json_t *patch, const char *kind, api_err *err);

/* True when `kind` has strategic merge semantics here (a built-in kind). */
int patch_kind_is_builtin(const char *kind);

/* The merge key strategic merge patch uses for the list at field `path` of a
 * `kind` object: "" for a list of primitives merged as a set, NULL when the
 * list is atomic (replaced whole). `path` is JSON field names joined by '.',
 * with "[]" after a list for its elements: "spec.containers",
 * "spec.template.spec.containers[].env". A read-only view of the table
 * patch_strategic() follows, for the OpenAPI documents' x-kubernetes-patch-*
 * markers. */
const char *patch_merge_key(const char *kind, const char *path);

/* Dispatch on the request's Content-Type (parameters such as
 * "; charset=utf-8" are ignored). `body` need not be NUL-terminated. */
/* 0 when content_type names a patch type served (apply included: see
 * patch_is_apply); otherwise -1 with the upstream 415 in err. Lets a handler
 * refuse before reading the object. */
int patch_check_type(const char *content_type, api_err *err);
/* True for application/apply-patch+yaml (server-side apply). */
int patch_is_apply(const char *content_type);

json_t *patch_apply(const char *content_type, const json_t *orig, const char *body, size_t len,
                    const char *kind, api_err *err);

#endif
