/* inflight.h - per-user limits on requests in flight, in the spirit of
 * upstream's API Priority and Fairness: one tenant flooding the server
 * cannot take every worker from the others.
 *
 * Each user (by name) may have at most `limit` requests being served at
 * once; one more is refused at once with upstream's 429 ("Too many requests,
 * please try again later.", Retry-After: 1), before any work is done for it.
 * Members of system:masters are exempt, as upstream's `exempt` priority
 * level; watches are not counted (long-running requests hold no seat after
 * they start, upstream too). Service accounts and users are all keyed by
 * their exact name, so no user's name can be chosen to share another's
 * budget.
 *
 * Cost: one uncontended mutex and a hash lookup per request, on the
 * request's own thread.
 */
#ifndef ALLOT_SERVER_INFLIGHT_H
#define ALLOT_SERVER_INFLIGHT_H

#include <stdbool.h>
#include <stddef.h>

#define INFLIGHT_DEFAULT_LIMIT 64
/* Open watches per user (allotd --max-watches-per-user), counted the same way. */
#define WATCH_DEFAULT_PER_USER 500

typedef struct inflight inflight;

inflight *inflight_new(unsigned limit);
void inflight_free(inflight *f);

/* Take a seat for user `name`: true, or false when the user is at its
 * limit (nothing taken). */
bool inflight_enter(inflight *f, const char *name);
/* Give back a seat taken by inflight_enter. */
void inflight_leave(inflight *f, const char *name);
/* Requests of `name` in flight now. */
unsigned inflight_count(inflight *f, const char *name);

#endif
