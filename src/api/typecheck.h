/* typecheck.h - decode a JSON object as its typed kind (schema.h).
 *
 * Upstream decodes every body into a Go struct before anything else sees it.
 * tc_decode does the same to a jansson value, in place:
 *   - a value of the wrong JSON type is refused with encoding/json's text
 *     ("json: cannot unmarshal array into Go struct field ObjectMeta.metadata.
 *     labels of type map[string]string"), a quantity that does not parse with
 *     resource.Quantity's, an int out of range or fractional, bad base64 or a
 *     bad time with theirs;
 *   - a field the type does not have is removed (what a typed decode does) and
 *     its path ("spec.containers[0].foo") reported, for fieldValidation;
 *   - quantities are rewritten in canonical form ("0.5" -> "500m");
 *   - null members are dropped, except times (a zero metav1.Time is null) and
 *     raw JSON.
 * On error the object may be half rewritten: callers discard it. Pure: no I/O.
 * The walk follows the schema, so its depth is the schema's (raw JSON is not
 * walked) and its cost is linear in the body.
 */
#ifndef ALLOT_API_TYPECHECK_H
#define ALLOT_API_TYPECHECK_H

#include "api/schema.h"

#include <jansson.h>

#define TC_MAX_UNKNOWN 100 /* unknown-field paths kept; more are pruned unreported */

/* Whose error texts: encoding/json's (bodies, JSON and merge patches) or
 * runtime.DefaultUnstructuredConverter's (strategic merge patches, which
 * upstream converts from a map rather than decoding). */
typedef enum { TC_JSON, TC_UNSTRUCTURED } tc_mode;

typedef struct tc_result {
    json_t *unknown;  /* array of paths of the unknown fields removed (caller owns; may be NULL
                         when there were none) */
    char error[1024]; /* the decoding error, when tc_decode returned -1 */
} tc_result;

/* Decode `obj` (modified in place) as a top-level object of message `m`:
 * apiVersion and kind are allowed as strings besides m's fields. Returns 0,
 * or -1 with r->error set. r->unknown is set either way; free it with
 * tc_result_clear. */
int tc_decode(const sch_msg *m, json_t *obj, tc_result *r);
int tc_decode_mode(const sch_msg *m, json_t *obj, tc_mode mode, tc_result *r);
void tc_result_clear(tc_result *r);

/* Upstream's strict-decoding text for the unknown fields:
 * `strict decoding error: unknown field "a", unknown field "b"`. */
void tc_strict_error(const json_t *unknown, char *buf, size_t n);

/* Go's fmt %v of a decoded JSON value ("map[spec:map[hard:x]]": keys
 * sorted, strings bare), as upstream prints a strategic patch in errors; at
 * most `max` bytes. Caller frees; NULL when out of memory. */
char *tc_go_value(const json_t *v, size_t max);

#endif
