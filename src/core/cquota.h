/* cquota.h - Capsule's CustomQuota and GlobalCustomQuota: the decision core.
 *
 * Reference: shared spec capsule-pools-and-custom-quotas.md §2 (Capsule
 * v0.14 customquota_types.go, calculation.go, utils.go). Pure: no I/O, no
 * clocks, no globals. Paths are core/jsonpath.h's (kubectl's dialect),
 * expressions core/cel.h's, quantities exact (core/quantity.h).
 *
 * A quota's spec is compiled once (cq_compile): its sources (group, version,
 * kind; op add, sub or count; a JSONPath or CEL value; selectors), its scope
 * selectors and, for the global kind, its namespace selectors. Then for any
 * object, cq_object_usage says whether the quota counts it and for how much:
 *  - the object must match the scope selectors (labels; an empty list
 *    matches everything);
 *  - every source whose group/version/kind is the object's (exactly) and
 *    whose selectors match (an empty list matches; entries are ORed; within
 *    one entry the label selector, every fieldSelector and every CEL
 *    expression must hold) is applied in source order: count +1, add
 *    +value, sub -value; the object's claim is that fold clamped at 0 after
 *    each step (Capsule's per-object rule), its net contribution the same
 *    unclamped;
 *  - a value is the sum of what the source's path (core/jsonpath.h's
 *    jp_quantity_sum) or CEL expression finds; a missing value is 0 (seed
 *    003: "Missing fields are treated as zero"), in every form: a member
 *    that is not there, null, an empty list under [*], a filter that
 *    matches nothing, an index past the end, an empty CEL list;
 *  - an object no source applies to is not counted (matched false); one that
 *    only `sub` sources apply to is counted with usage 0 (and a negative
 *    net).
 * A quota's used is max(0, the sum of the nets): sub sources take from the
 * total, as Capsule's rebuild does. (Capsule clamps the running total after
 * each object in creation order, so its total depends on that order; allot's
 * clamps once: the same whenever the running total never went below 0, and
 * the same at every commit whatever the order: docs/custom-quotas.md.)
 *
 * What cannot be evaluated is the object's *problem* (the first, in source
 * order), and never stops the rest being counted:
 *  - a value that is there but is not a quantity (`abc`, `true`, an
 *    object; a path that cannot walk the object, `[*]` of a string; a CEL
 *    expression that fails) counts 0 for its source:
 *    `source path "<p>" cel "<c>" op "<op>" did not resolve to a valid
 *    quantity: <why>` (Capsule's words);
 *  - a selector entry that cannot be evaluated: the source selects the
 *    object if another entry holds (an entry with a part that is false does
 *    not hold: `||` and `&&` commute over errors, as in CEL), and otherwise
 *    does not: `source path "<p>" cel "<c>" op "<op>" selectors: <why>`.
 * The caller reports it (the quota's Ready condition names the object) and
 * refuses only the write that brings it in (registry/cq_admission.c).
 *
 * Errors carry Capsule's texts; cq_compile's are admission messages for the
 * quota object.
 * Thread-safe after compile (a compiled quota is immutable).
 */
#ifndef ALLOT_CORE_CQUOTA_H
#define ALLOT_CORE_CQUOTA_H

#include "core/quantity.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum { CQ_OP_ADD, CQ_OP_SUB, CQ_OP_COUNT } cq_op;

typedef struct cq_quota cq_quota;

/* Compile a CustomQuota (global false) or GlobalCustomQuota spec. NULL with
 * err set: `invalid spec.limit: ...`, `invalid CEL expression:
 * spec.sources[i].cel: ...`, `invalid CEL expression:
 * spec.sources[i].selectors[j].celExpressions[k]: ...`, `invalid path:
 * spec.sources[i].path: ...`, `invalid field selector:
 * spec.sources[i].selectors[j].fieldSelectors[k]: ...`, selectors that do not
 * parse, or "out of memory". */
cq_quota *cq_compile(const json_t *spec, bool global, char *err, size_t errlen);
void cq_free(cq_quota *q);

const qty *cq_limit(const cq_quota *q);
bool cq_emit_per_claim(const cq_quota *q);
size_t cq_nsources(const cq_quota *q);

/* Whether some source targets exactly this group ("" for core), version and
 * kind. */
bool cq_targets(const cq_quota *q, const char *group, const char *version, const char *kind);

/* Global kind: whether the namespace with labels `labels` is selected (no
 * namespaceSelectors: every namespace, and cluster-scoped objects too). */
bool cq_all_namespaces(const cq_quota *q);
bool cq_selects_namespace(const cq_quota *q, const json_t *labels);

/* Values of one object already computed, by their path or CEL text: one
 * object charged against many quotas that read the same value (Capsule:
 * "each distinct path/CEL once per object") computes it once. Valid for one
 * object, while the quotas that filled it live. */
typedef struct cq_cache cq_cache;
cq_cache *cq_cache_new(void);
void cq_cache_free(cq_cache *c);

/* The usage of `obj` (of group/version/kind) for this quota: the one
 * definition admission, the recount and (through the books) the status and
 * metrics use. 0 with *matched, *usage (its claim: the per-object fold,
 * clamped at 0 after each source), *net (its signed contribution to the
 * quota's total: adds and counts minus subs, unclamped) and *problem set;
 * with *problem, err holds the object's first problem (above), else "".
 * -1 only when out of memory or beyond quantity precision (err says which).
 * `cache` may be NULL. */
int cq_object_usage(const cq_quota *q, const char *group, const char *version, const char *kind,
                    const json_t *obj, cq_cache *cache, bool *matched, qty *usage, qty *net,
                    bool *problem, char *err, size_t errlen);
/* cq_object_usage on the object's JSON text (core/jsontext.h's contract),
 * without parsing it, for quotas that need only their sources' kinds and
 * plain paths or counts (no scope or source selectors, no CEL): 0 with what
 * cq_object_usage gives on the parsed text (never a problem); 1 when it
 * cannot tell (anything else, every problem and error): ask
 * cq_object_usage. */
int cq_object_usage_text(const cq_quota *q, const char *group, const char *version,
                         const char *kind, const char *text, size_t len, bool *matched, qty *usage,
                         qty *net);

/* The status.targets entry of source i (a new object): group, version, kind,
 * op, and path, cel, selectors and scope (the kind's REST scope: "namespace"
 * or "root"; "" when unknown) when set. */
json_t *cq_target_json(const cq_quota *q, size_t i, const char *scope);
/* A source's group/version/kind (borrowed). */
void cq_source_gvk(const cq_quota *q, size_t i, const char **group, const char **version,
                   const char **kind);

/* Split an apiVersion into group and version ("v1" -> "", "v1";
 * "apps/v1" -> "apps", "v1"), into caller buffers. */
void cq_split_api_version(const char *api_version, char *group, size_t gn, char *version,
                          size_t vn);

/* Capsule's words for a quota (global: a GlobalCustomQuota) refusing a
 * create (else an update) of `requested` that takes its sum to `current`
 * with `reserved` in flight, into buf: "creating resource exceeds limit for
 * CustomQuota \"<name>\" (requested=.., currentUsed=.., available=0,
 * limit=.., inflightReserved=..)". */
void cq_exceeds_text(char *buf, size_t n, bool creating, bool global, const char *name,
                     const qty *requested, const qty *current, const qty *limit,
                     const qty *reserved);

/* Capsule's usagePercentage: used/limit*100, 0 when limit <= 0. */
double cq_usage_percentage(const qty *used, const qty *limit);

#endif
