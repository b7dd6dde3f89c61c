/* crd_gen.h - allot's Capsule kinds as CustomResourceDefinitions, for a
 * cluster whose own API server serves them (cluster mode, issue 28;
 * `allotd crds`, deploy/cluster/crds.yaml).
 *
 * Nothing here is written twice: each definition is built from what the
 * standalone server already serves for the kind:
 *   - names, scope, short names and categories from the kind table
 *     (api/kinds.h), as discovery advertises them;
 *   - the schema from the kind's OpenAPI v3 document (api/openapi.h, built
 *     from the typed tables of api/schema.h with the docs of schema_docs.c),
 *     made structural as apiextensions.k8s.io/v1 requires: every $ref
 *     inlined, `type` on every node, quantities as
 *     x-kubernetes-int-or-string (with resource.Quantity's pattern), no
 *     defaults (allot defaults in code: its mutating webhook in cluster
 *     mode), metadata left to the API server, and
 *     x-kubernetes-preserve-unknown-fields only on objects the typed tables
 *     leave open;
 *   - the printer columns from the kind's table printer (api/table.h,
 *     table_crd_columns);
 *   - the status (and scale) subresources from the kind's row.
 *
 * Pure: no I/O. Every json_t returned is a new reference the caller owns.
 */
#ifndef ALLOT_API_CRD_GEN_H
#define ALLOT_API_CRD_GEN_H

#include "api/kinds.h"

#include <jansson.h>
#include <stddef.h>

/* The group whose kinds are generated: Capsule's. */
#define CRD_GEN_GROUP "capsule.clastix.io"

/* The CustomResourceDefinition of kind k; NULL with a message in err when k
 * has no typed schema, printer columns or a node the conversion does not
 * know (a change to openapi.c the generator must learn). */
json_t *crd_gen(const api_kind *k, char *err, size_t errlen);

/* Every generated definition, in the kind table's order (ResourcePool,
 * ResourcePoolClaim, CustomQuota, GlobalCustomQuota), as a v1 List:
 * {"apiVersion": "v1", "kind": "List", "items": [...]}. NULL with err on
 * failure. */
json_t *crd_gen_all(char *err, size_t errlen);

/* The structural form of an OpenAPI v3 schema node whose $refs point into
 * `schemas` (a document's components.schemas), as crd_gen builds it;
 * exposed for tests. NULL with err on a node it cannot convert. */
json_t *crd_gen_structural(const json_t *node, const json_t *schemas, char *err, size_t errlen);

#endif
