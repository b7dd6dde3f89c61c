/* webhook.h - allot's admission webhook: a kube-apiserver asks allot to
 * admit a write (admission.k8s.io AdmissionReview, api/admission_review.h).
 *
 * The decision is standalone mode's: the request's operation is run as a
 * dry run through the registry against the store the server was given (in
 * cluster mode, the mirror of the cluster's objects), so the verdict and
 * the 403 texts are exactly those a client of standalone allotd gets:
 * pools, claims, custom quotas, quota. Kinds allot does not serve,
 * subresources other than status, and CONNECT are allowed. Nothing is ever
 * written.
 */
#ifndef ALLOT_SERVER_WEBHOOK_H
#define ALLOT_SERVER_WEBHOOK_H

#include "api/admission_review.h"
#include "server/server.h"
#include "store/store.h"

#include <stddef.h>

/* Decide the AdmissionReview `body` (len bytes) on st, then g (may be NULL). *resp_json (caller
 * frees, *resp_len bytes, NUL-terminated) is the response review, or a
 * Status when the review could not be read. Returns the HTTP status to
 * answer with: 200 for a decided review (allowed or not), 400 or 413 for a
 * malformed one, 500 when out of memory (*resp_json may then be NULL). */
/* g (server.h's webhook_guard, may be NULL): what must hold before a
 * review the dry run allows is answered allowed (cluster mode: a claim's
 * release recorded on its quota first, cluster/release_guard.h; a
 * namespace's quota frozen before it leaves a pool, and the review decided
 * again on the frozen quota, cluster/leave_guard.h). */
int webhook_review(store *st, const webhook_guard *g, const char *body, size_t len,
                   char **resp_json, size_t *resp_len);

/* The mutating webhook: g->mutate's answer to the AdmissionReview `body`
 * (allowed with its JSON Patch, or none; or refused); the same statuses
 * as webhook_review. */
int webhook_mutate(const webhook_guard *g, const char *body, size_t len, char **resp_json,
                   size_t *resp_len);

/* The route: POST /admission/v1/validate and /admission/v1/mutate (segs, n: the decoded path). True
 * when the path is the webhook's, with rs filled. The caller must be
 * authenticated and allowed by RBAC the non-resource URL with verb "post"
 * (docs/cluster-mode.md, "Admission webhooks"). */
bool webhook_serve(req *rq, resp *rs, char segs[][256], int n);

#endif
