/* impersonate.h - user impersonation on the request path, as upstream's
 * WithImpersonation filter: after authentication, before the in-flight
 * limit and authorization.
 *
 * The request's Impersonate-* headers are read as core/impersonation.h says;
 * each part is authorized for the authenticated user with the `impersonate`
 * verb (one RBAC decision each, system:masters allowed everything), and
 * once all pass the request *is* the impersonated user: its in-flight seat,
 * RBAC, the review APIs (whoami, can-i) and everything downstream see only
 * that user. The authenticated one stays on the request as
 * rq->impersonator, for the audit log (user, and impersonatedUser beside
 * it). A refused part is upstream's 403 for the impersonator; groups,
 * extras or a uid without a user upstream's 400, and so is a control
 * character in an Impersonate-* header (upstream's HTTP server refuses any
 * header holding one).
 *
 * Cost for a request without impersonation: one pass over its header list
 * (a case-insensitive compare of each name's first 12 bytes), no
 * allocation.
 */
#ifndef ALLOT_SERVER_IMPERSONATE_H
#define ALLOT_SERVER_IMPERSONATE_H

#include "server/server.h"

struct MHD_Connection;
typedef struct impersonation impersonation;

/* Apply the impersonation headers of rq (received on c). 0 and nothing
 * changed when it has none. 0 with rq->impersonator set to the
 * authenticated user and rq->user to the impersonated one, which *out owns
 * (impersonate_free once the request is done with it, audit included).
 * -1 with the 400, 403 or 500 set on rs (rq unchanged). */
int impersonate_request(struct MHD_Connection *c, req *rq, impersonation **out, resp *rs);
void impersonate_free(impersonation *p);

#endif
