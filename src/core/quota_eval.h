/* quota_eval.h - quota evaluators: what an object charges against a ResourceQuota.
 *
 * One evaluator per kind, as upstream's registry (pkg/quota/v1/evaluator/core):
 * pods, services, persistentvolumeclaims, and an object-count evaluator for any
 * other group/resource (`count/<resource>[.<group>]`, plus the legacy names
 * configmaps, secrets, replicationcontrollers, resourcequotas). Admission, the
 * controller's recount and the scheduler all call these functions: this is the
 * only place that decides what an object uses, which quota keys a kind owns and
 * whether an object falls in a quota's scopes.
 *
 * Objects are the v1 JSON (borrowed, never modified or retained). They must
 * already be defaulted as the API server would (e.g. a container's limits copied
 * into missing requests); nothing here defaults.
 * Feature gates are fixed at their upstream defaults of recent releases:
 * PodLevelResources, InPlacePodVerticalScaling and VolumeAttributesClass on, DRA
 * off. Time enters only as `now` (Unix seconds), for pods being deleted.
 * Pure: no I/O, no clocks, no globals.
 *
 * Errors: QUOTA_ENOMEM, or QUOTA_EINVAL for an object field that does not parse
 * (a bad quantity); functions with an err buffer also write upstream's text there.
 */
#ifndef ALLOT_CORE_QUOTA_EVAL_H
#define ALLOT_CORE_QUOTA_EVAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/dbuf.h"
#include "core/rlist.h"

enum { QUOTA_OK = 0, QUOTA_ENOMEM = -30, QUOTA_EINVAL = -31 };

typedef enum { QUOTA_CREATE, QUOTA_UPDATE, QUOTA_DELETE, QUOTA_CONNECT } quota_op;

typedef enum { QUOTA_QOS_BEST_EFFORT, QUOTA_QOS_BURSTABLE, QUOTA_QOS_GUARANTEED } quota_qos;

/* Resource-name rules shared with API validation (one definition, here):
 * IsNativeResource (no domain, or a kubernetes.io domain) and
 * IsExtendedResourceName (not native, and "requests.<name>" is qualified). */
bool quota_is_native_resource(const char *name);
bool quota_is_extended_resource_name(const char *name);

/* Resources quota never evaluates (install/registry.go ignoredResources). */
bool quota_ignored_resource(const char *group, const char *resource);

/* Usage: what `obj` (of group/resource) charges, added to `out` (cleared first).
 * Pods: PodUsageFunc (spec §2.2); services §3.1; PVCs §3.2; others: 1 per
 * object-count name. `now` only matters for pods with a deletionTimestamp. */
int quota_usage(const char *group, const char *resource, const json_t *obj, int64_t now,
                rlist *out);

/* Handles: whether admission evaluates this request at all (spec §2.6, §3). */
bool quota_handles(const char *group, const char *resource, quota_op op, const char *subresource,
                   const json_t *obj, const json_t *old);

/* MatchingResources: the names in `names` (an rlist used as a name set) that
 * this kind's evaluator owns, added to `out`. 0 or QUOTA_ENOMEM. */
int quota_matching_resources(const char *group, const char *resource, const rlist *names,
                             rlist *out);
bool quota_owns(const char *group, const char *resource, const char *name);

/* getScopeSelectorsFromQuota: spec.scopes as {scopeName, operator: Exists}, then
 * spec.scopeSelector.matchExpressions. New JSON array (caller owns); NULL on OOM. */
json_t *quota_scope_selectors(const json_t *quota_spec);

/* Whether obj is inside every scope of the quota spec (scopes and scopeSelector);
 * no scopes => 1. Kinds without scopes (services, object counts) match no scope.
 * Returns 1, 0, or -1 with the error text (e.g. a bad selector) in err. */
int quota_matches_scopes(const json_t *quota_spec, const char *group, const char *resource,
                         const json_t *obj, char *err, size_t n);

/* Matches (generic.Matches): some key of `hard` is owned by this kind AND the
 * scopes match. Admission passes status.hard. 1, 0 or -1 (err). */
int quota_matches(const json_t *quota_spec, const rlist *hard, const char *group,
                  const char *resource, const json_t *obj, char *err, size_t n);

/* MatchingScopes: append to `out` (a JSON array) each selector of `selectors`
 * (array of ScopedResourceSelectorRequirement) that obj matches. 0, or -1 with
 * `error on matching scope {..}: ...` in err (out then unchanged). */
int quota_matching_scopes(const char *group, const char *resource, const json_t *obj,
                          const json_t *selectors, json_t *out, char *err, size_t n);

/* Constraints: for pods, the legacy "must specify" rule (spec §2.5) over the
 * `required` names. 0 = satisfied, 1 = violated (message in err, e.g.
 * `must specify cpu for: bar,foo; memory for: bar,foo`), or a negative error. */
int quota_constraints(const char *group, const char *resource, const rlist *required,
                      const json_t *obj, char *err, size_t n);

/* ---- admission on prepared quotas ----
 * quota_matching_scopes, quota_matches_scopes and quota_constraints redo, on
 * every call, work that depends only on the quota or only on the object. When
 * one request is checked against many quotas, split it:
 *   quota_scopes: a quota's scope selectors, parsed and converted once. Immutable
 *     once built, so threads may share one (unlike quota_recount_ctx).
 *   quota_scope_subject: one request's object as scopes see it (its facts, and
 *     the label sets class scopes are tested on, cached as they are built). Not
 *     shared: one per request and object.
 *   quota_cfacts: one object's "must specify" walk over its containers, after
 *     which quota_cfacts_check answers for any `required`. Borrows obj's
 *     container names: obj must outlive it. Immutable once built.
 * Each gives the same answer (and text) as the JSON function it splits, which
 * is built on it. Constructors return NULL only when out of memory. */
typedef struct quota_scopes quota_scopes;
quota_scopes *quota_scopes_new(const json_t *quota_spec);
void quota_scopes_free(quota_scopes *s);
size_t quota_scopes_len(const quota_scopes *s); /* 0: the quota has no scopes */

typedef struct quota_scope_subject quota_scope_subject;
quota_scope_subject *quota_scope_subject_new(const char *group, const char *resource,
                                             const json_t *obj);
void quota_scope_subject_free(quota_scope_subject *subj);

/* quota_matching_scopes over a quota's own selectors: appends each one the
 * subject matches to `out` (NULL: only count them; on an error `out` may hold
 * some). Returns how many matched, -1 (err as quota_matching_scopes) or
 * QUOTA_ENOMEM. All of them matched == quota_matches_scopes says 1. */
int quota_scopes_matching(const quota_scopes *s, quota_scope_subject *subj, json_t *out, char *err,
                          size_t n);
/* quota_matches_scopes: 1, 0 or -1 (err). */
int quota_scopes_matches(const quota_scopes *s, quota_scope_subject *subj, char *err, size_t n);

typedef struct quota_cfacts quota_cfacts;
quota_cfacts *quota_cfacts_new(const char *group, const char *resource, const json_t *obj);
void quota_cfacts_free(quota_cfacts *cf);
/* quota_constraints(group, resource, required, obj, err, n). */
int quota_cfacts_check(const quota_cfacts *cf, const rlist *required, char *err, size_t n);
/* The same in two steps, for a `required` that serves many requests: which of
 * the names upstream may require (cpu, memory, requests.*, limits.*) it holds,
 * then the check against that mask. */
unsigned quota_must_specify_mask(const rlist *required);
int quota_cfacts_check_mask(const quota_cfacts *cf, unsigned required, char *err, size_t n);

/* Go's %v of a []ScopedResourceSelectorRequirement: `[{PriorityClass In [a b]}]`. */
int quota_format_scopes(const json_t *selectors, dbuf *out);

/* Pod helpers (exposed for the scheduler and for tests). */
quota_qos quota_pod_qos(const json_t *pod);            /* GetPodQOS */
bool quota_pod_is_terminating(const json_t *pod);      /* activeDeadlineSeconds >= 0 */
bool quota_pod_counts(const json_t *pod, int64_t now); /* QuotaV1Pod: not terminal */
/* PodRequests / PodLimits as quota computes them (spec §2.2). */
int quota_pod_requests(const json_t *pod, rlist *out);
int quota_pod_limits(const json_t *pod, rlist *out);

/* ---- per-object facts ----
 * Everything the rules above need from one object, computed once from its JSON:
 * its usage (as quota_usage at `now`) and, for the scope decision, for pods
 * whether it is Terminating, BestEffort, uses cross-namespace affinity and its
 * priorityClassName; for PVCs the VolumeAttributesClass names; nothing for other
 * kinds (they match no scope). The JSON entry points (quota_matches_scopes,
 * quota_matching_scopes, quota_recount_add) compute facts and decide on them, so
 * a cached copy (the registry keeps one per stored object) and a fresh parse can
 * never disagree. Packed in one allocation (~150 bytes for a typical pod);
 * immutable once built, so it may be shared read-only across threads. */
typedef struct quota_facts quota_facts;

/* The facts of obj (of group/resource), usage evaluated at `now`. NULL only when
 * out of memory; a usage error (a bad quantity) is kept inside and reported by
 * quota_recount_add_facts, as quota_recount_add reports it. */
quota_facts *quota_facts_new(const char *group, const char *resource, const json_t *obj,
                             int64_t now);
/* The same from obj's usage as quota_usage computed it (`usage` borrowed,
 * `usage_rc` its result): for a caller that needed the usage anyway. */
quota_facts *quota_facts_of_usage(const char *group, const char *resource, const json_t *obj,
                                  const rlist *usage, int usage_rc);
void quota_facts_free(quota_facts *f);
/* Byte-for-byte the same facts (debug cross-checks and tests). */
bool quota_facts_equal(const quota_facts *a, const quota_facts *b);
size_t quota_facts_size(const quota_facts *f); /* bytes allocated, for memory accounting */

/* ---- controller recount (spec §5, generic.CalculateUsageStats) ----
 * For each kind the controller knows:
 *   quota_recount_begin(q, kind, acc)   -- zeros for the spec.hard keys the kind
 *                                          owns; returns how many (0: skip kind)
 *   for each object of the kind in the namespace: quota_recount_add(...)
 * then quota_status_used_for(q, acc) gives the status.used to write. */
int quota_recount_begin(const json_t *quota, const char *group, const char *resource, rlist *acc);
/* Adds obj's usage (spec.hard's keys) when it is inside the quota's scopes: 1
 * counted, 0 not (a scope error counts as "not", as upstream drops it silently),
 * <0 error. quota_facts_new + quota_recount_add_facts. */
int quota_recount_add(const json_t *quota, const char *group, const char *resource,
                      const json_t *obj, int64_t now, rlist *acc);

/* The recount on cached facts: quota_recount_prepare parses the quota's scope
 * selectors (their label selectors are built once, on first use) and spec.hard
 * for one kind; quota_recount_add_facts is then quota_recount_add for an object
 * whose facts were built with the same group/resource and the recount's `now`.
 * Only the keys of spec.hard are added to acc (the only ones status.used keeps).
 * A context is not thread-safe (it memoises selector results). NULL on OOM. */
typedef struct quota_recount_ctx quota_recount_ctx;
quota_recount_ctx *quota_recount_prepare(const json_t *quota, const char *group,
                                         const char *resource);
void quota_recount_ctx_free(quota_recount_ctx *c);
/* Whether the facts' object is inside every scope of the quota: 1, 0, or -1 with
 * the error text in err (quota_matches_scopes on facts). */
int quota_recount_matches(quota_recount_ctx *c, const quota_facts *f, char *err, size_t n);
/* 1 counted, 0 not (outside the scopes, or a scope error), <0 a usage error. */
int quota_recount_add_facts(quota_recount_ctx *c, const quota_facts *f, rlist *acc);

/* copy(status.used), overwritten by every key of acc, masked to spec.hard's keys:
 * what upstream's syncResourceQuota writes. Keys no evaluator computed keep their
 * old value (or stay absent). New JSON object; NULL on error. */
json_t *quota_status_used_for(const json_t *quota, const rlist *acc);

#endif
