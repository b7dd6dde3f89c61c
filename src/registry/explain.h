/* explain.h - what a write would meet in quota, without making it.
 *
 * An explanation runs the write as a dry run, through the same validation and
 * admission as the write itself, with a collector attached to the thread:
 * each quota-like admission plugin (ResourceQuota, ResourcePools,
 * CustomQuotas) adds an entry for every quota, pool or custom quota that
 * applies, saying what it holds, what the write would add and whether that
 * fits. Plugins after a denial still run, so every quota that applies is
 * listed; the decision is the first denial, exactly the error the write
 * would get. Nothing is written (the transaction is aborted).
 *
 * An entry: {"kind", "namespace" (when namespaced), "name", "allowed",
 * "message" (when not allowed), "resources": [{"name", "hard", "used",
 * "requested", "after", "exceeded"}]} (quantities as strings), plus what a
 * kind adds ("pool" for a ResourceQuota a pool keeps; "outcome": a claim's,
 * or "would wait Pending: ..." for a pod deferred quota would hold).
 */
#ifndef ALLOT_REGISTRY_EXPLAIN_H
#define ALLOT_REGISTRY_EXPLAIN_H

#include "registry/registry.h"

#include <jansson.h>
#include <stdbool.h>

typedef struct reg_explain reg_explain;

/* The explanation this thread is gathering, or NULL (the usual case: a
 * plugin then has nothing to do). */
reg_explain *reg_explain_current(void);

/* A new entry of x for one quota-like object (borrowed: x owns it); NULL
 * when out of memory. ns NULL or "" for a cluster-scoped object. */
json_t *reg_explain_entry(reg_explain *x, const char *kind, const char *ns, const char *name);

/* x's entry for that object (borrowed), or NULL. */
json_t *reg_explain_find(reg_explain *x, const char *kind, const char *ns, const char *name);

/* A row of an entry, for one resource (or value): `exceeded` when `after`
 * is past `hard` (a denial is reg_explain_deny's). Any string may be NULL
 * (left out). */
void reg_explain_row(json_t *entry, const char *resource, const char *hard, const char *used,
                     const char *requested, const char *after, bool exceeded);

/* The entry refuses the write, with `message` (the quota's own words). */
void reg_explain_deny(json_t *entry, const char *message);

/* Begin explaining the writes this thread makes next (the caller makes
 * them dry runs: reg_create, reg_update with dry_run). NULL when out of
 * memory. */
reg_explain *reg_explain_begin(void);

/* Stop explaining; `rc` and `e` are what the write returned (e is read only
 * when rc != 0). Frees x and returns the explanation (caller owns; NULL when
 * out of memory or x is NULL): {"allowed", "code", "reason", "message",
 * "status" (the Status object of a denial), "quotas": [entry, ...]}. */
json_t *reg_explain_end(reg_explain *x, int rc, const api_err *e);

/* Warning texts (strings, appended to `warnings`) summing up an
 * explanation's entries for a dry run's reply: one per quota, at most `max`
 * (then one saying how many more). */
void reg_explain_warnings(const json_t *status, size_t max, json_t *warnings);

#endif
