/* conntrack.h - which connections that have not yet presented a request to
 * give up first.
 *
 * A connection is "waiting" from its accept until the headers of its first
 * request arrive (TLS handshake included). Waiting connections cost memory
 * and a descriptor but have shown no identity, so they are bounded per
 * client address and in all, and when a new one arrives over a bound the
 * OLDEST waiting one gives way, never the new one: 1,100 idle TCP connections
 * from 127.0.0.1 must not lock out the next kubectl from 127.0.0.1 (issue
 * 26), which completes its handshake and sends its request within
 * milliseconds while the idle ones wait for their deadline. A waiting
 * connection that is still waiting `deadline` seconds after its accept is
 * given up too (a slowloris trickling bytes never finishes its headers).
 *
 * Pure bookkeeping: no I/O, no locks, no clock (times are the caller's).
 * The caller embeds a ct_entry in each connection, holds one lock around
 * every call, and shuts down what the calls hand back. Once a connection
 * has presented a request it leaves (conntrack_remove) and is governed by
 * the per-user limits and the idle timeout.
 */
#ifndef ALLOT_SERVER_CONNTRACK_H
#define ALLOT_SERVER_CONNTRACK_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ct_addr ct_addr;

/* One waiting connection; zeroed by the caller before conntrack_add. */
typedef struct ct_entry {
    double t0;
    bool listed;  /* waiting, on the lists */
    bool evicted; /* handed back to be shut down (still listed until removed) */
    ct_addr *addr;
    struct ct_entry *prev, *next;           /* every waiting one, oldest first */
    struct ct_entry *addr_prev, *addr_next; /* its address's, oldest first */
} ct_entry;

typedef struct conntrack conntrack;

/* per_addr, total: the most waiting connections kept per address and in all
 * (at least 1 each); deadline_s: how long one may wait. NULL when out of
 * memory. */
conntrack *conntrack_new(unsigned per_addr, unsigned total, double deadline_s);
void conntrack_free(conntrack *t); /* (entries still listed are forgotten) */

/* A connection accepted from address `addr` (any string naming the client,
 * e.g. its IP) at time `now`. Returns the connection that must give way, if
 * any (the oldest waiting one of the address, or of all, not yet handed
 * back; it stays listed, marked evicted, until removed), or NULL. When out of
 * memory e is left unlisted (the connection is then only bounded by its
 * idle timeout) and NULL is returned. */
ct_entry *conntrack_add(conntrack *t, ct_entry *e, const char *addr, double now);

/* The connection presented a request, or closed: off the lists. Idempotent. */
void conntrack_remove(conntrack *t, ct_entry *e);

/* The oldest waiting connection past its deadline at `now` and not yet
 * handed back (marked evicted now), or NULL: call until NULL. */
ct_entry *conntrack_expired(conntrack *t, double now);

/* When the next deadline falls (t0 + deadline of the oldest not yet handed
 * back): true and *at, or false when nothing is waiting. */
bool conntrack_next_deadline(const conntrack *t, double *at);

/* Waiting connections in all, and of one address (not counting those
 * handed back). */
size_t conntrack_waiting(const conntrack *t);
size_t conntrack_waiting_from(const conntrack *t, const char *addr);

#endif
