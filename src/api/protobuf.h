/* protobuf.h - decode Kubernetes protobuf request bodies into JSON objects.
 *
 * kubectl >= 1.32 sends bodies from its typed clients (create namespace,
 * configmap, secret, service, deployment, quota, ...) as
 * "application/vnd.kubernetes.protobuf". allotd stores JSON, so this module
 * turns such a body into the object the JSON encoding of the same Go value
 * would give: "apiVersion" and "kind" set, unset fields omitted, pointer
 * fields kept when present even if zero (replicas: 0), value structs always
 * present ("status": {}), a zero metav1.Time as null.
 *
 * It owns the schema tables (field number -> JSON name and type, per message,
 * copied by hand from upstream's generated.proto files) and a small wire
 * reader. It never trusts the input: every length is checked, nesting depth
 * and the number of JSON values produced are bounded, and a field this server
 * does not know but that carries data is an error, not silently dropped.
 * Pure: no I/O, no clock.
 */
#ifndef ALLOT_API_PROTOBUF_H
#define ALLOT_API_PROTOBUF_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/status.h"

#define PB_CONTENT_TYPE "application/vnd.kubernetes.protobuf"

/* Whether `body` starts with the 4-byte Kubernetes protobuf magic "k8s\0". */
bool pb_has_magic(const void *body, size_t len);

/* Decode a whole protobuf body: magic "k8s\0", then a runtime.Unknown
 * {1 typeMeta{1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding, 4 contentType}
 * whose raw bytes are the object message of that apiVersion/kind.
 * Returns a new object (caller owns) with apiVersion and kind set, or NULL
 * with a 400 BadRequest in `e` (malformed or truncated data, unknown kind,
 * a field this server cannot represent). */
json_t *pb_decode(const void *body, size_t len, api_err *e);

/* Decode a bare object message (no magic, no envelope) of a known
 * apiVersion/kind. Same result and errors as pb_decode. */
json_t *pb_decode_object(const char *api_version, const char *kind, const void *msg, size_t len,
                         api_err *e);

/* Whether this module has a schema for apiVersion/kind. */
bool pb_kind_known(const char *api_version, const char *kind);

#endif
