/* openapi_pb.h - a Swagger 2.0 document as gnostic's openapi_v2.Document
 * protobuf (github.com/google/gnostic, openapiv2/OpenAPIv2.proto), the
 * form client-go's discovery and kubectl read /openapi/v2 in.
 *
 * Encodes swagger, info (title, version) and definitions; paths are left
 * out (what kubectl reads of this document, for client-side validation and
 * `kubectl explain` before 1.27, is the definitions: it finds a kind by a
 * definition's x-kubernetes-group-version-kind and follows the $refs).
 * Schema members map to Schema's fields ($ref, format, title, description,
 * the numeric and length bounds, pattern, required, enum, type, items,
 * allOf, properties, additionalProperties, readOnly); default, enum values,
 * example and the x-* vendor extensions are gnostic Any messages holding
 * the value as YAML (compact JSON, which YAML reads). Other members
 * (nullable, anyOf, oneOf, not: none of them Swagger 2.0) are dropped.
 *
 * Pure: the document is borrowed, the result is the caller's (free()).
 */
#ifndef ALLOT_API_OPENAPI_PB_H
#define ALLOT_API_OPENAPI_PB_H

#include <jansson.h>
#include <stddef.h>

/* The encoded document, or NULL (out of memory, or larger than
 * OAPB_MAX_BYTES). */
unsigned char *oapb_encode(const json_t *doc, size_t *len);

#define OAPB_MAX_BYTES (64u * 1024 * 1024)

#endif
