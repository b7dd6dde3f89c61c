/* expect.h - a controller's expectations, as upstream's
 * ControllerExpectations and UIDTrackingControllerExpectations
 * (pkg/controller/controller_utils.go).
 *
 * A controller that creates or deletes pods sees the result only later, when
 * its watch delivers the pod's event. Until then its cache still shows the
 * old pod count, and a second sync would create (or delete) again. So before
 * it acts it records what it expects to see, per owner (a ReplicaSet's key):
 * `add` creations and the deletion of a set of pod keys; every event it then
 * observes lowers them, and the owner may be synced again only when they are
 * satisfied:
 *  - no record for the owner (never expected anything, or forgotten): yes;
 *  - every expected creation and deletion observed (add <= 0, del <= 0): yes;
 *  - the record is older than the TTL (upstream: 5 minutes; an event was
 *    missed, e.g. a create that failed without the controller knowing): yes;
 *  - otherwise no.
 * Setting expectations replaces the owner's record (upstream's
 * SetExpectations): creations and deletions are never expected together.
 * Deletions are tracked by pod key, so a deletion the controller did not ask
 * for (a user deleting a pod) does not count as one it expects.
 *
 * Time is the caller's (milliseconds on any monotonic clock), so this is
 * pure: no I/O, no clock, no globals. Not thread-safe (controllers/podcontrol.c
 * wraps it in a lock). Keys are copied; nothing borrowed is kept.
 */
#ifndef ALLOT_CORE_EXPECT_H
#define ALLOT_CORE_EXPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Upstream's ExpectationsTimeout. */
#define EXPECT_TTL_MS (5 * 60 * 1000)

typedef struct expect_set expect_set;

/* An empty set whose records expire after ttl_ms. NULL when out of memory. */
expect_set *expect_new(int64_t ttl_ms);
void expect_free(expect_set *s); /* NULL is fine */

/* ExpectCreations: owner expects n creations (its record replaced, dated now).
 * 0, or -1 out of memory (the owner then has no record: satisfied). */
int expect_creations(expect_set *s, const char *owner, int n, int64_t now);
/* ExpectDeletions (UID tracking): owner expects the deletion of these n pod
 * keys (record replaced, dated now). 0 or -1 as above. */
int expect_deletions(expect_set *s, const char *owner, const char *const *pods, size_t n,
                     int64_t now);
/* CreationObserved: one creation seen (or given up: a create that failed is
 * observed by the controller itself, as upstream does for skipped ones). */
void expect_creation_observed(expect_set *s, const char *owner);
/* DeletionObserved: pod `pod` seen deleted (or marked for deletion); counts
 * only if it is one of the owner's expected deletions, once. */
void expect_deletion_observed(expect_set *s, const char *owner, const char *pod);
/* SatisfiedExpectations at time now (see above). */
bool expect_satisfied(const expect_set *s, const char *owner, int64_t now);
/* What is still expected: *add and *del (0 and 0 without a record). */
void expect_pending(const expect_set *s, const char *owner, int *add, int *del);
/* DeleteExpectations: forget the owner (it was deleted). */
void expect_forget(expect_set *s, const char *owner);
/* Forget every owner. */
void expect_clear(expect_set *s);
/* Owners with a record. */
size_t expect_count(const expect_set *s);

#endif
