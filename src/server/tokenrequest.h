/* tokenrequest.h - the TokenRequest API (POST
 * /api/v1/namespaces/NS/serviceaccounts/NAME/token, `kubectl create token`)
 * and the ServiceAccount check the token authenticator makes on every
 * request.
 *
 * Issuing follows upstream's TokenREST.Create: the body (JSON or protobuf
 * authentication.k8s.io/v1 TokenRequest) may name the account only as the URL
 * does, the ServiceAccount must exist (404), spec.expirationSeconds defaults
 * to 3600 and must be at least 600 and at most 2^32 (422, upstream's text),
 * spec.audiences defaults to the API server's (SATOKEN_ISSUER), and a request
 * above the configured maximum is shortened with upstream's warning. Bound
 * object references (pods, secrets, nodes) are not supported: 400.
 * Authorization (create serviceaccounts/token) happened before, in rest.c.
 */
#ifndef ALLOT_SERVER_TOKENREQUEST_H
#define ALLOT_SERVER_TOKENREQUEST_H

#include "server/server.h"

#include <stdint.h>

#define TOKENREQ_DEFAULT_SECONDS 3600
#define TOKENREQ_MIN_SECONDS 600
#define TOKENREQ_MAX_SECONDS ((int64_t)1 << 32)
/* The default of --service-account-max-token-expiration (0: no maximum). */
#define TOKENREQ_DEFAULT_MAX_SECONDS (24 * 3600)

/* Tokens longer than this are shortened to it (0: no maximum). Once, at start. */
void tokenreq_set_max_seconds(int64_t max);

/* Serve a POST to serviceaccounts/NAME/token in namespace ns. */
void tokenreq_create(req *rq, resp *rs, const char *ns, const char *name);

/* auth_sa_check_fn over the store (ctx: the server): 1 when ServiceAccount
 * ns/name exists, is not being deleted and has uid `uid`. */
int tokenreq_sa_current(void *ctx, const char *ns, const char *name, const char *uid);

#endif
