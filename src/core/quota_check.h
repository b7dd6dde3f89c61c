/* quota_check.h - the ResourceQuota admission decision (upstream CheckRequest,
 * staging/.../admission/plugin/resourcequota/controller.go), pure.
 *
 * Given the quotas of the namespace and one CREATE/UPDATE request, decide: deny
 * (403 Forbidden, or a plain 500 error, with upstream's exact text) or allow,
 * with the new status.used of every quota the request charges.
 *
 * INVARIANT: admission never lets a charged key's used exceed its hard (a key
 * is compared only when this request adds to it; equal to hard is allowed).
 * The caller commits each res->used[i] with the object in ONE transaction, so
 * a request that fails after the check leaves no usage behind; quota status is
 * never written on a denial or when nothing changed (res->used[i] == NULL).
 * To emulate upstream's batching, check the next request of a batch against the
 * quotas with the previous result applied (quota_apply_used).
 *
 * Ownership: every JSON input is borrowed and never modified. The result owns
 * its message and used objects; release them with quota_result_cleanup.
 * Pure: no I/O, no clocks, no globals.
 */
#ifndef ALLOT_CORE_QUOTA_CHECK_H
#define ALLOT_CORE_QUOTA_CHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/quota_eval.h"

typedef struct quota_request {
    const char *namespace_;  /* request namespace; NULL or "" is never quota'd */
    const char *group;       /* "" for the core group */
    const char *resource;    /* plural, e.g. "pods" */
    const char *subresource; /* NULL or "" for the main resource */
    quota_op op;
    const json_t *obj;     /* the new object (defaulted, validated); its namespace is not read */
    const json_t *old;     /* UPDATE: the stored object (NULL if it was not found) */
    const json_t *quotas;  /* JSON array of the namespace's ResourceQuotas (spec and status) */
    const json_t *limited; /* ResourceQuotaConfiguration.limitedResources array, or NULL */
    int64_t now;           /* Unix seconds; only pods being deleted look at it */
    const rlist *usage;    /* optional: quota_usage of obj at `now`, when the caller has it
                              (borrowed, never modified); NULL: computed here */
    int usage_rc;          /* with `usage`: quota_usage's result */
    bool deferred;         /* deferred ResourceQuota namespace: an unassigned pod charges no
                              cpu/memory here (core/deferred.h); "must specify" still applies */
    /* Optional (explanations: what a write would do, QuotaReview): called for
     * each quota the request concerns, in order, once its change is known and
     * before anything is decided: its hard, its usage now, what the request
     * adds to hard's names (negative for a decrease), the usage it would have
     * (NULL: cannot be worked out), and upstream's "exceeded quota: ..." text
     * when the request would take it past hard (else NULL). All borrowed for
     * the call. NULL: not called. */
    void (*explain)(void *arg, const char *quota, const rlist *hard, const rlist *used,
                    const rlist *requested, const rlist *after, const char *exceeded);
    void *explain_arg;
} quota_request;

typedef struct quota_result {
    bool allowed;
    int code;      /* 0 when allowed; 403 (Forbidden) or 500 (plain error) */
    char *message; /* NULL when allowed; the text AFTER `<resource> "<name>" is forbidden: ` */
    size_t nquotas;
    json_t **used; /* quota_check: [nquotas] quotas[i]'s new status.used to commit, NULL if
                      unchanged; NULL for quota_check_views */
    rlist **next;  /* quota_check_views: [nquotas] quota i's new used, NULL if unchanged;
                      NULL for quota_check */
} quota_result;

/* Fills *res (which it initialises). Returns 0 when a decision was made (read
 * res->allowed), else QUOTA_ENOMEM or QUOTA_EINVAL (a quota or object holds an
 * unparsable quantity; res->message then says which). */
int quota_check(const quota_request *rq, quota_result *res);
void quota_result_cleanup(quota_result *res);

/* ---- prepared quotas ----
 * What admission needs of one stored quota version that does not change from
 * request to request (name, scopes, status.hard), worked out once. Immutable,
 * so any number of threads may read one. */
typedef struct quota_prepared quota_prepared;

/* From a ResourceQuota's JSON (borrowed; a reference is kept, so it must not
 * be modified afterwards). NULL with `err` set when status.hard holds an
 * unparsable quantity; NULL with err "" when out of memory. */
quota_prepared *quota_prepare(const json_t *quota, char *err, size_t errlen);
void quota_prepared_free(quota_prepared *p);
const char *quota_prepared_name(const quota_prepared *p);
const rlist *quota_prepared_hard(const quota_prepared *p);
const json_t *quota_prepared_json(const quota_prepared *p);
/* quota_matches on a prepared quota: the quota owns some hard name of
 * group/resource and subj (that kind's object) is inside every scope. 1, 0,
 * or -1 with err set (a scope that does not evaluate). */
int quota_prepared_matches(const quota_prepared *p, const char *group, const char *resource,
                           quota_scope_subject *subj, char *err, size_t n);

/* A quota as one request sees it: its prepared facts and its current usage. */
typedef struct quota_view {
    const quota_prepared *prep;
    const rlist *used; /* status.used now (the ledger's, which may be ahead of the stored) */
} quota_view;

/* quota_check over prepared quotas (rq->quotas is not read): the same
 * decision, with the new usage as rlists in res->next. */
int quota_check_views(const quota_request *rq, const quota_view *quotas, size_t n,
                      quota_result *res);

/* Sets status.used of quotas[i] (a mutable copy of rq->quotas) to res->used[i]
 * wherever that is non-NULL: the running copy for the next request of a batch. */
int quota_apply_used(json_t *quotas, const quota_result *res);

/* ---- exact moves (allot only) ----
 * Upstream charges only the requests CheckRequest evaluates, and never checks
 * a `status` subresource's charge; every other change of usage (a pod turning
 * terminal or back, a status write, a namespace's quota mode, a delete) waits
 * for its controller's recount. allot moves usage in the write's own
 * transaction, by the exact difference, and a move that raises usage is
 * checked as a charge is: every key that rises must stay at or under hard
 * (equal is allowed); a key that does not rise is never compared, so a
 * decrease is always allowed, even on a quota above its hard.
 * Both return 0 (allowed), 1 (denied: *msg is the text after `<resource>
 * "<name>" is forbidden: `, upstream's "exceeded quota: ..." or allot's "the
 * usage of <name> would need more significant digits than are supported";
 * caller frees) or QUOTA_ENOMEM. */

/* Quota p's usage goes from `used` to `nu`. */
int quota_check_usage(const quota_prepared *p, const rlist *used, const rlist *nu, char **msg);

/* An object that charged quota p `before` now charges `after` (both masked to
 * p's hard, either empty): the new usage max(0, used - before) + after, per
 * key, checked as quota_check_usage. Allowed: *next = the new usage (caller
 * frees), or NULL when a key that does not rise cannot be held exactly (more
 * digits than a qty holds): the quota is then left to the recount, which
 * cannot add that object either. */
int quota_check_move(const quota_prepared *p, const rlist *used, const rlist *before,
                     const rlist *after, rlist **next, char **msg);

#endif
