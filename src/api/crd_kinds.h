/* crd_kinds.h - the kinds a CustomResourceDefinition serves.
 *
 * An accepted definition becomes one row of the kind table (api/kinds.h)
 * per version in spec.versions, built from the definition and its accepted
 * names: served versions are served, the storage version's row is the
 * primary one (the others are API_KIND_SECONDARY), and every row carries the
 * version's compiled schema (core/jsonschema.h, compiled once here, never
 * per request), printer columns (JSONPath compiled once), scale paths,
 * selectable fields and its openAPIV3Schema for the OpenAPI documents. The
 * rows' hooks do what upstream's custom resource handler does:
 *   - decode_row: metadata decoded as ObjectMeta (typed 400s), then fields
 *     the schema does not know pruned (unless
 *     x-kubernetes-preserve-unknown-fields) and reported for
 *     fieldValidation as the typed kinds report theirs;
 *   - defaults_row: the schema's defaults, on writes and, for a schema
 *     with any, on reads too (API_KIND_READ_DEFAULTS), as upstream
 *     defaults what it decodes from storage;
 *   - validate_row: the schema's validation with upstream's field paths
 *     and messages, and the scale subresource's replicas rules.
 * Nothing here knows a definition by name: every behaviour is a hook.
 *
 * Ownership: the rows (and what they own) are this module's. A publication
 * replaces a definition's rows; replaced rows are kept until
 * crd_kinds_cleanup (the process exit), because a reader on another thread
 * may hold one (a watch holds its row for its whole life). Thread-safe.
 */
#ifndef ALLOT_API_CRD_KINDS_H
#define ALLOT_API_CRD_KINDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Publish the rows of a definition whose names are accepted, served under
 * status.acceptedNames (kind, singular, short names, categories, list kind);
 * `terminating` marks them so (creates refused). A definition whose rows
 * would not change is not republished. 1 when rows were published, 0 when
 * they were already, -1 with a message in err (a schema that does not
 * compile: validation refuses those first). */
int crd_kinds_publish(const json_t *crd, bool terminating, char *err, size_t errlen);
/* Retire the rows of the definition of group/plural: they stay in their
 * slots, unserved and secondary (no lookup, discovery or loop finds them). */
void crd_kinds_retire(const char *group, const char *plural);
/* Whether rows of group/plural are published and served. */
bool crd_kinds_served(const char *group, const char *plural);
/* Free every row this module built. Only when no reader can remain (exit,
 * the end of a test). */
void crd_kinds_cleanup(void);

#endif
