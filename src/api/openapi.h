/* openapi.h - OpenAPI v3 and v2 documents built from the kind registry.
 *
 * Built from the registry (kinds.h) and the discovery tables (discovery.h):
 * the paths, verbs and subresources here are the ones discovery advertises.
 * Schemas come from the typed tables (schema.h): one per Go type, named
 * "<pkg>.<Type>" as upstream names them ("io.k8s.api.core.v1.PodSpec"),
 * nested types by $ref, with the descriptions, required fields and enum
 * values of schema_docs.c, and the x-kubernetes-patch-strategy/-merge-key
 * markers of the lists patch.c merges by key (patch_merge_key). Kinds
 * defined by CustomResourceDefinitions carry their version's
 * openAPIV3Schema (with the apiVersion/kind/metadata envelope); other kinds
 * with no typed table keep an open schema with unknown fields preserved.
 * The server validates objects itself; these documents exist for what
 * clients decide from them.
 *
 * Each served group version's document and hash, and the v2 document, are
 * built once (they depend only on the registry; registering a kind drops
 * them) and handed out as copies. Thread-safe.
 *
 * Ownership: every json_t returned is a new reference owned by the caller;
 * NULL means "not served" (answer 404).
 *
 * What kubectl 1.32 does with them:
 *   GET /openapi/v3             openapi_v3_root: maps "api/v1", "apis/<g>/<v>" to
 *                               serverRelativeURL "/openapi/v3/<gv>?hash=<H>".
 *   GET /openapi/v3/<gv>        openapi_v3_group_version. kubectl create/apply/replace with
 *                               the default --validate=strict walk the paths for a PATCH
 *                               operation whose x-kubernetes-group-version-kind (an object)
 *                               is the object's GVK and look for a "fieldValidation"
 *                               parameter (in: query) on that operation. The FIRST such
 *                               operation decides, in Go's random map order, so every PATCH
 *                               here (item, status, scale) carries the parameter. When found,
 *                               kubectl sends ?fieldValidation=Strict and skips client-side
 *                               validation; otherwise it falls back to the v2 document below
 *                               and fails if it cannot use it.
 *                               kubectl apply also looks at the PATCH requestBody: if it lists
 *                               application/strategic-merge-patch+json it computes the patch
 *                               from the schemas' x-kubernetes-patch-* markers, so that type is
 *                               listed exactly for the built-in kinds with typed schemas (any
 *                               PATCH of the GVK may decide, so all of them agree). Custom
 *                               kinds list JSON and merge patches, and kubectl sends JSON
 *                               merge patches for them.
 *                               kubectl explain finds the schema whose
 *                               x-kubernetes-group-version-kind names the kind in
 *                               components.schemas and follows the $refs (in v3 each wrapped in
 *                               a one-element allOf); it names a field's type after the last
 *                               part of the $ref unless the target has a "type", which is why
 *                               Quantity and IntOrString are spelled with oneOf in v3.
 *   GET /openapi/v2             openapi_v2: Swagger 2.0 JSON, for JSON clients. client-go only
 *                               ever requests v2 as protobuf (OPENAPI_V2_PB_CONTENT_TYPE), and
 *                               kubectl does so in one case: `kubectl create/apply -f` of a kind
 *                               whose group version the v3 root does not list and that no CRD
 *                               defines (a kind that is not served). It then looks the kind up
 *                               in v2, skips validation when it is absent, and fails with
 *                               upstream's `no matches for kind "X" in version "Y"`; any error
 *                               fetching v2 (a 406) is reported instead, which is misleading.
 *                               openapi_v2_pb answers that request with a document that holds
 *                               the definitions of the kinds CRDs define and what they refer to
 *                               (ObjectMeta's tree, ListMeta): kubectl before 1.27 reads v2 only,
 *                               as protobuf, for client-side validation (`unknown field "foo"`,
 *                               `missing required field`) and `kubectl explain`, which custom
 *                               resources then get as upstream gives them; built-in kinds are
 *                               left out, so such a kubectl validates none of them (as before).
 *
 * The hash in serverRelativeURL is the uppercase hex SHA-256 of the compact,
 * key-sorted group-version document, so it changes exactly when the document
 * does; a request carrying the current hash may be cached as immutable.
 */
#ifndef ALLOT_API_OPENAPI_H
#define ALLOT_API_OPENAPI_H

#include <jansson.h>
#include <stddef.h>

/* GET /openapi/v3 */
json_t *openapi_v3_root(void);
/* GET /openapi/v3/api/v1 (group "") and /openapi/v3/apis/<g>/<v>; NULL if not served. */
json_t *openapi_v3_group_version(const char *group, const char *version);
/* Hash of that document, 64 hex chars + NUL; returns -1 if the group version is not served. */
int openapi_v3_hash(const char *group, const char *version, char out[65]);
/* GET /openapi/v2 */
json_t *openapi_v2(void);

/* GET /openapi/v2 as protobuf: a gnostic openapi_v2.Document with swagger,
 * info and the custom kinds' definitions (see above; api/openapi_pb.h).
 * The caller frees the result; NULL when it could not be encoded. */
#define OPENAPI_V2_PB_CONTENT_TYPE "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
/* ... and what upstream answers it with ('@' is not valid in a media type
 * Go's mime package parses; the deprecated spelling is still what clients ask for). */
#define OPENAPI_V2_PB_RESPONSE_TYPE "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
unsigned char *openapi_v2_pb(size_t *len);

#endif
