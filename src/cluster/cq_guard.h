/* cq_guard.h - custom quotas enforced at admission in cluster mode: an
 * increase a quota counts is reserved on the quota before the webhook
 * allows the write (docs/cluster-mode.md, "Custom quotas at admission").
 *
 * Standalone allot charges a custom quota in the write's own transaction.
 * On someone else's API server the write commits after the answer, so the
 * decision is linearized on the quota object, as upstream's quota
 * admission linearizes on a ResourceQuota's status: for every quota that
 * counts the object (a CustomQuota of its namespace, a GlobalCustomQuota
 * whose namespaces include it; sources naming the object's group, version
 * and kind), in Capsule's order (smallest limit first, global first on a
 * tie), the guard reads the quota from the API server and checks Capsule's
 * formula: status.usage.used (the writer's last recount) plus the
 * reservations in its status plus what the write adds must fit the limit.
 * If it does, the increase is recorded as a reservation in the quota's
 * status (uid, namespace, name, resource, the version an update was
 * decided on, the amount, an expiry) by a PUT at the version read: two
 * replicas deciding at once conflict there, and the loser decides again on
 * what the winner recorded. The answer comes only after.
 *
 * The writer settles reservations with its recount (reconcile_cq_plan): a
 * reservation goes once the mirror holds its object (a create: that uid;
 * an update: that uid at another version than the one decided on), when
 * the recount counts what it reserved, or after CQ_RESERVE_S (beyond the
 * API server's 60 s request timeout: a write not committed by then never
 * will be). Deletes release nothing at admission (Capsule's rule too):
 * the recount lowers the usage once the mirror sees them.
 */
#ifndef ALLOT_CLUSTER_CQ_GUARD_H
#define ALLOT_CLUSTER_CQ_GUARD_H

#include "api/admission_review.h"
#include "api/status.h"
#include "kube/kube.h"
#include "store/store.h"

#include <jansson.h>
#include <stdint.h>

#define CQ_RESERVE_S 90

/* Called for an allowed review of a kind some quota may count: 0 (nothing
 * counted grows, or every increase is reserved; a dry run checks and
 * reserves nothing), or -1 with e (403 with Capsule's text; 409 or 500
 * when the reservation could not be recorded: the client retries). st is
 * the mirror, read for the quotas, their spec and the namespace's labels. */
int cq_guard(kube_client *kc, store *st, const ar_request *r, api_err *e);

/* The writer's side: the reservations of quota `cur` (as the mirror holds
 * it) still in flight at time now (unix seconds), as an array to write
 * back (new; empty when none), given `settled(arg, reservation)`: whether
 * the mirror shows the reservation's object as counted, and, for one past
 * its expiry, `gone(arg, reservation)`: whether its object is surely not in
 * the cluster (one the mirror has not taken in yet must stay reserved
 * until it is counted). NULL when out of memory. */
json_t *cq_reservations_kept(const json_t *cur, int64_t now,
                             bool (*settled)(void *arg, const json_t *reservation),
                             bool (*gone)(void *arg, const json_t *reservation), void *arg);

/* Whether what reservation r reserved is surely not in the cluster kc
 * writes to: a GET of its object answers 404, or an object of another
 * uid, or, for an update, the object still at the version the update was
 * decided on. false when it is there or the cluster cannot be asked. */
bool cq_reservation_gone(kube_client *kc, const json_t *r);

#endif
