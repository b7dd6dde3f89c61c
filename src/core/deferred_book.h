/* deferred_book.h - deferred quota kept on a cluster's own ResourceQuota
 * (cluster mode, issue 29; docs/deferred-cluster.md). Pure: no I/O.
 *
 * On an existing cluster the built-in quota admission charges a pod's
 * compute resources at create. In a namespace labelled
 * quota.allot.dev/mode=deferred allot keeps them out of its way: its
 * mutating webhook moves the deferred resources (core/deferred.h) of a
 * ResourceQuota's spec.hard into the annotation DQ_HARD_ANNOTATION, and
 * marks each pod with the extended resource kube-scheduler sends to allot
 * (SCHEDULER_MANAGED_RESOURCE). allot charges them at bind, in the book
 * DQ_BOOK_ANNOTATION on the same quota:
 *
 *   {"used": {"requests.cpu": "2"},            the recount of bound pods
 *    "hard": {"requests.cpu": "25"},           the limits it was counted on
 *    "reservations": [{uid, namespace, name,   binds decided, not yet in
 *                      resource, usage, expires, from}],   the recount
 *    "countedThrough": "1234"}                 highest pod resourceVersion
 *                                              counted in `used`
 *
 * A bind adds its reservation by compare-and-swap on the quota's
 * resourceVersion, so two deciders can never both take the last unit: a
 * bind fits when used + every live reservation of another pod + its own
 * charge stays within the hard limit. The leader's recount moves settled
 * reservations into `used`.
 */
#ifndef ALLOT_CORE_DEFERRED_BOOK_H
#define ALLOT_CORE_DEFERRED_BOOK_H

#include "core/dbuf.h"
#include "core/rlist.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The namespace label that opts into deferred quota. */
#define DQ_MODE_LABEL "quota.allot.dev/mode"
#define DQ_MODE_DEFERRED "deferred"
/* The deferred hard limits allot holds: a JSON object, as spec.hard. */
#define DQ_HARD_ANNOTATION "quota.allot.dev/deferred-hard"
/* The book (above): a JSON object. */
#define DQ_BOOK_ANNOTATION "quota.allot.dev/deferred"
/* How long a bind's reservation holds when the recount never sees its pod
 * bound (the binding failed): then the leader checks the cluster. */
#define DQ_RESERVE_S 30

typedef struct dq_book {
    rlist *used;
    rlist *hard;          /* the limits last counted against (NULL: none
                             recorded): a rise wakes waiting pods */
    json_t *reservations; /* a JSON array (owned) */
    char through[32];     /* "" when none */
} dq_book;

/* Whether namespace object ns is labelled for deferred quota. */
bool dq_ns_deferred(const json_t *ns);

/* The deferred hard limits of ResourceQuota rq into out (cleared first):
 * 0 (empty: the quota defers nothing), or -1 (an annotation that is not a
 * resource list). */
int dq_hard(const json_t *rq, rlist *out);

/* Read rq's book (an absent one is empty): 0, or -1 when malformed or out
 * of memory (b is then empty). dq_book_free frees what it holds. */
int dq_book_read(const json_t *rq, dq_book *b);
void dq_book_free(dq_book *b);
/* The book as its annotation's text (caller frees), or NULL. */
char *dq_book_text(const dq_book *b);

/* What pod charges quota rq at bind: its usage (requests, limits) of the
 * deferred resources named in hard, when it matches the quota's scopes;
 * into want (cleared first). 0, or -1 with err (a bad scope selector). */
int dq_pod_charge(const json_t *rq, const rlist *hard, const json_t *pod, rlist *want, char *err,
                  size_t errlen);

/* Whether `want` (pod uid's charge) fits quota `name`: used + the live
 * reservations (expires > now) of other pods + want <= hard for every
 * resource want charges. 0 fits; 1 exceeds, with msg (appended) "quota
 * exceeded: <name>, requested: <r>, used: <u>, limited: <h>" over the
 * resources exceeded (core/sched.h's quota message); -1 out of memory. */
int dq_check(const char *name, const rlist *hard, const dq_book *b, const rlist *want,
             const char *uid, int64_t now, dbuf *msg);

/* What quota hard still has room for: hard - used - every live
 * reservation (expires > now), at least 0 per resource (new; caller
 * frees), or NULL when out of memory. */
rlist *dq_room(const rlist *hard, const dq_book *b, int64_t now);
/* Whether `want` fits in `room` (every resource it charges at most what
 * room has left; one room does not name is not limited): 1, with room
 * lowered by want; 0 (room unchanged); -1 out of memory. */
int dq_take(rlist *room, const rlist *want);

/* Add pod's reservation of `want` to b, replacing any earlier one of the
 * same uid: from = the pod's resourceVersion decided on. 0 or -1. */
int dq_reserve(dq_book *b, const json_t *pod, const rlist *want, int64_t now);

/* The recount: the sum of what the pods of rq's namespace that are bound
 * (spec.nodeName set) and not terminal charge it, into used (cleared
 * first); *through raised to the highest resourceVersion among them
 * (decimal, as the cluster's). 0, or -1 with err. */
int dq_recount(const json_t *rq, const rlist *hard, json_t *const *pods, size_t n, int64_t now,
               rlist *used, uint64_t *through, char *err, size_t errlen);

/* The JSON Patch (RFC 6902) allot's mutating webhook answers for a pod
 * created in a deferred namespace: the managed resource on its first
 * container's requests and limits; NULL when it has it (or no container).
 * Caller owns. */
json_t *dq_pod_patch(const json_t *pod, const char *managed_resource);

/* The JSON Patch for a ResourceQuota written in a deferred namespace (old:
 * the version an update replaces, or NULL): its deferred resources moved
 * from spec.hard into DQ_HARD_ANNOTATION (over what the annotation held for
 * them), and the book of `old` kept when the write drops it (a replace of
 * the user's manifest: its reservations are binds in flight); NULL when
 * there is neither to do. Caller owns. */
json_t *dq_quota_patch(const json_t *rq, const json_t *old);

#endif
