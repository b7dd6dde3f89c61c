/* discovery.h - API discovery documents built from the kind registry.
 *
 * Pure functions: each reads the registry (kinds.h) and returns a new jansson
 * document shaped exactly as kube-apiserver 1.32 shapes it; the HTTP layer
 * serves what it gets. No I/O, no clock, no globals of its own.
 *
 * Ownership: every json_t returned is a new reference owned by the caller.
 * Functions that take a group/version return NULL when it is not served
 * (the caller answers 404).
 *
 * What clients use each document for:
 *   GET /api            disc_core_versions   APIVersions: legacy group versions.
 *   GET /apis           disc_group_list      APIGroupList: groups and preferred versions;
 *                                            kubectl's RESTMapper and short-name expansion.
 *   GET /apis/<g>       disc_group           APIGroup for one group.
 *   GET /api/v1, /apis/<g>/<v>
 *                       disc_resource_list   APIResourceList: resources, verbs, scope,
 *                                            short names, categories ("kubectl get all").
 *   GET /api, /apis with Accept naming DISC_AGGREGATED_CONTENT_TYPE (kubectl >= 1.26
 *                       asks for this first):  disc_aggregated, one round trip carrying
 *                       everything the two levels above carry. The response MUST carry
 *                       Content-Type DISC_AGGREGATED_CONTENT_TYPE: client-go picks the
 *                       decoder by the response content type, not by the body.
 *   GET /version        disc_version         "Server Version" in kubectl version; the
 *                                            version-skew warning compares minor versions.
 */
#ifndef ALLOT_API_DISCOVERY_H
#define ALLOT_API_DISCOVERY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/kinds.h"

/* The Kubernetes release whose API allot speaks. kubectl warns when the client
 * and server minors differ by more than one; "+allot" is semver build metadata,
 * accepted by every version parser kubectl uses (k3s does the same). */
#define DISC_K8S_MAJOR "1"
#define DISC_K8S_MINOR "32"
#define DISC_GIT_VERSION "v1.32.0+allot"

/* Media type of aggregated discovery, for both Accept matching and the response. */
#define DISC_AGGREGATED_CONTENT_TYPE                                                               \
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
#define DISC_AGGREGATED_CONTENT_TYPE_V2BETA1                                                       \
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"

/* GET /api. `server_address` is "host:port" as the client reached us. */
json_t *disc_core_versions(const char *server_address);
/* GET /apis: every non-core group, in upstream's group priority order. */
json_t *disc_group_list(void);
/* GET /apis/<group>; NULL if the group is not served (or is ""). */
json_t *disc_group(const char *group);
/* GET /api/v1 (group "") or /apis/<g>/<v>; NULL if not served. */
json_t *disc_resource_list(const char *group, const char *version);
/* Aggregated discovery (apidiscovery.k8s.io/v2): core=true for /api, false for /apis.
 * `v2beta1` selects that apiVersion for clients that only accept it (same shape). */
json_t *disc_aggregated(bool core);
json_t *disc_aggregated_as(bool core, bool v2beta1);
/* GET /version. */
json_t *disc_version(void);

/* ---- Shared with openapi.c: one place decides verbs and subresources. ---- */

#define DISC_MAX_VERBS 8
#define DISC_MAX_SUBS 4
#define DISC_MAX_VERSIONS 32

/* A subresource as discovery and OpenAPI describe it. group/version/kind are
 * the response kind: the parent's kind for status, Scale (autoscaling/v1) for
 * scale, Binding (v1) for binding. `own_gv` is false when the response kind
 * lives in the parent's group version (upstream then omits group/version). */
typedef struct disc_sub {
    const char *name; /* "status" */
    const char *group;
    const char *version;
    const char *kind;
    bool own_gv;
    const char *const *verbs; /* NULL-terminated */
} disc_sub;

/* Verbs of the main resource, NULL-terminated, in upstream's (sorted) order. */
const char *const *disc_verbs(const api_kind *k);
bool disc_has_verb(const api_kind *k, const char *verb);
/* Subresources of `k`, alphabetical; returns the count (<= DISC_MAX_SUBS). */
size_t disc_subresources(const api_kind *k, disc_sub out[DISC_MAX_SUBS]);

/* Served versions of a group ("" for core), most preferred first; returns the count. */
size_t disc_group_versions(const char *group, const char *out[DISC_MAX_VERSIONS]);
/* Upstream's kube-aware version order: <0 when a is preferred over b. */
int disc_version_cmp(const char *a, const char *b);

/* storageVersionHash: base64 of the first 8 bytes of sha256("<group>/<version>/<kind>"),
 * byte-identical to upstream (pods: "xPOwRZ+Yhw8="). `out` gets 12 chars + NUL. */
void disc_storage_version_hash(const api_kind *k, char out[13]);
/* SHA-256 (FIPS 180-4). Here because storageVersionHash needs upstream's exact bytes;
 * openapi.c reuses it for document hashes. */
void disc_sha256(const void *data, size_t len, unsigned char out[32]);

#endif
