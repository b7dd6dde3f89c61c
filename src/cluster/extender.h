/* extender.h - deferred quota at bind on an existing cluster: the
 * scheduler extender kube-scheduler calls (issue 29;
 * docs/deferred-cluster.md; the books: core/deferred_book.h).
 *
 * filter: a pod of a namespace labelled quota.allot.dev/mode=deferred
 * whose charge does not fit one of its ResourceQuotas' deferred limits
 * fails every node with "quota exceeded: <quota>, requested: ..., used:
 * ..., limited: ...", so it stays Pending (Unschedulable, naming the
 * quota, never a capacity reason). Read from the mirror, and a refusal
 * read again from the cluster (the mirror may trail the book a wake-up
 * was decided on): advice only, the bind decides.
 *
 * bind: the decision. For each quota that charges the pod, its
 * reservation is added to the quota's book by compare-and-swap on the
 * cluster's resourceVersion (GET, check, PUT; a conflict reads again), and
 * only when every one is recorded is the pod bound (POST pods/binding).
 * Two schedulers or two allot replicas can never both take the last unit:
 * the cluster orders their PUTs. A binding that fails leaves its
 * reservation to expire (DQ_RESERVE_S) and the leader to drop it once the
 * cluster shows the pod unbound (dq_reservation_gone).
 */
#ifndef ALLOT_CLUSTER_EXTENDER_H
#define ALLOT_CLUSTER_EXTENDER_H

#include "kube/kube.h"
#include "store/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The answers to kube-scheduler's ExtenderArgs (filter) and
 * ExtenderBindingArgs (bind), as JSON text (caller frees); the HTTP
 * status: 200, or 400 with a Status text for a body that is not one. st
 * is the mirror. */
int extender_filter(kube_client *kc, store *st, const char *body, size_t len, char **out);
int extender_bind(kube_client *kc, store *st, const char *body, size_t len, char **out);

/* The leader's check of an expired bind reservation: true when the
 * cluster surely does not hold its pod bound (404, another uid, or not
 * bound: past DQ_RESERVE_S the binding has failed). */
bool dq_reservation_gone(kube_client *kc, const json_t *reservation);

#endif
