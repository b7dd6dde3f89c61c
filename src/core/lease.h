/* lease.h - leader election on a coordination.k8s.io/v1 Lease, decided
 * (pure; the I/O is cluster/leader.c).
 *
 * As client-go's leaderelection: a candidate never trusts another
 * machine's clock. It notes, on its own monotonic clock, when it last saw
 * the Lease record change (holder, renewTime or transitions); the holder's
 * term is over when the record has not changed for leaseDurationSeconds
 * since. The holder renews every retry period and counts itself leader only
 * until its last successful renewal plus the renew deadline (shorter than
 * the duration), so it stops acting before anyone else may start. Every
 * write of the Lease is a compare-and-swap on its resourceVersion, so two
 * candidates can never both take it.
 */
#ifndef ALLOT_CORE_LEASE_H
#define ALLOT_CORE_LEASE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct lease_observer {
    char holder[254];    /* spec.holderIdentity last seen ("" none) */
    char renew_time[40]; /* spec.renewTime last seen */
    long transitions;    /* spec.leaseTransitions last seen */
    int64_t observed_ms; /* when (monotonic, ms) the record last changed */
    bool seen;           /* a record has been observed */
} lease_observer;

typedef enum {
    LEASE_WAIT,    /* another candidate holds it: look again later */
    LEASE_CREATE,  /* there is no Lease: create it, holding it */
    LEASE_ACQUIRE, /* its holder's term is over (or empty): take it */
    LEASE_RENEW,   /* we hold it: renew */
} lease_action;

/* Note `cur` (the Lease as read; NULL when there is none) at now_ms, and
 * say what candidate `me` does with a lease of duration_s seconds. */
lease_action lease_decide(lease_observer *ob, const json_t *cur, const char *me, int duration_s,
                          int64_t now_ms);

/* The Lease to write for `action` (LEASE_CREATE, _ACQUIRE, _RENEW): cur
 * (NULL for a create) changed so that `me` holds it, renewed at now_rfc
 * (RFC 3339 with microseconds, as upstream's MicroTime), keeping cur's
 * metadata.resourceVersion as the write's precondition. name/ns for a
 * create. Caller owns; NULL when out of memory. */
json_t *lease_write(lease_action action, const json_t *cur, const char *ns, const char *name,
                    const char *me, int duration_s, const char *now_rfc);

#endif
