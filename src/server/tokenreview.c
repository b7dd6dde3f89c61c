/* tokenreview.c - authentication.k8s.io/v1 TokenReview: "who is this
 * token?", asked by a component that delegates authentication to the API
 * server (system:auth-delegator grants it).
 *
 *   POST /apis/authentication.k8s.io/v1/tokenreviews
 *   {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
 *    "spec": {"token": "...", "audiences": ["..."]}}
 *
 * The token is authenticated as a request's bearer token would be (the
 * token file, the admin token, ServiceAccount tokens). The reply (201, as
 * upstream's) echoes the request with a status: {authenticated: true, user:
 * {username, uid, groups}, audiences} or, for a token that authenticates
 * nobody, {user: {}}. Audiences as upstream's: the requested ones (the API
 * server's, https://kubernetes.default.svc.cluster.local, when none are
 * asked for); a ServiceAccount token is valid only for the API server's
 * audience, so it authenticates only when that audience is among those
 * requested, while token-file tokens are good for any audience. The token is
 * never logged (the audit log keeps TokenReviews at Metadata).
 */
#include "api/protobuf.h"
#include "core/jdump.h"
#include "core/jget.h"
#include "server/auth.h"
#include "server/authz.h"
#include "server/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GROUP "authentication.k8s.io"
#define KIND "TokenReview"
#define TOKEN_MAX 16384 /* longer than any token this server issues */

static json_t *decode(const req *rq, api_err *e)
{
    if (!rq->body) return NULL;
    if (pb_has_magic(rq->body, rq->body_len)) return pb_decode(rq->body, rq->body_len, e);
    return json_loadb(rq->body, rq->body_len, 0, NULL);
}

static bool has(const json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i,
                       v) if (json_is_string(v) && !strcmp(json_string_value(v), s)) return true;
    return false;
}

/* The status for `token` asked for `auds` (NULL or empty: the API server's). */
static json_t *review_status(const req *rq, const char *token, const json_t *auds)
{
    size_t len = strlen(token);
    char *header = malloc(len + 8);
    if (!header) return NULL;
    memcpy(header, "Bearer ", 7);
    memcpy(header + 7, token, len + 1);
    auth_ident scratch;
    const auth_user *u = auth_authenticate(rq->srv->auth, header, &scratch, (int64_t)time(NULL));
    free(header);
    json_t *want = json_array_size(auds) ? jcopy(auds) : json_pack("[s]", SATOKEN_ISSUER);
    bool sa = u && !strncmp(u->name, "system:serviceaccount:", 22);
    if (!want) return NULL;
    if (!u || (sa && !has(want, SATOKEN_ISSUER))) {
        json_decref(want);
        return json_pack("{s:{}}", "user");
    }
    if (sa) {
        json_decref(want);
        want = json_pack("[s]", SATOKEN_ISSUER);
    }
    json_t *groups = json_array();
    for (size_t i = 0; groups && i < u->ngroups; i++)
        json_array_append_new(groups, json_string(u->groups[i]));
    return json_pack("{s:b, s:{s:s, s:s, s:o}, s:o}", "authenticated", 1, "user", "username",
                     u->name, "uid", u->uid ? u->uid : "", "groups", groups, "audiences", want);
}

bool tokenreview_serve(req *rq, resp *rs, char segs[][256], int n)
{
    if (n != 4 || strcmp(segs[0], "apis") || strcmp(segs[1], GROUP) || strcmp(segs[2], "v1") ||
        strcmp(segs[3], "tokenreviews"))
        return false;
    if (strcmp(rq->method, "POST")) {
        resp_errf(rs, API_METHOD_NOT_ALLOWED,
                  "the server does not allow this method on the requested resource");
        return true;
    }
    rbac_attrs a = {authz_user(rq), "create", true, GROUP, "tokenreviews", "", "", "", rq->path};
    if (authz_request(rq, &a, rs) != 0) return true;
    if (rest_refuse_table(rq, rs)) return true; /* a review has no metadata to tabulate */
    api_err e;
    api_err_init(&e);
    json_t *in = decode(rq, &e);
    const json_t *spec = json_object_get(in, "spec");
    const char *token = jtext(spec, "token");
    json_t *status = NULL;
    if (!json_is_object(in)) {
        if (e.message[0])
            resp_err(rs, &e);
        else
            resp_errf(rs, API_BAD_REQUEST, "the body of the request was in an unknown format");
    } else if (!*token) {
        resp_errf(rs, API_BAD_REQUEST, "token is required for TokenReview in authentication");
    } else if (strlen(token) > TOKEN_MAX || strpbrk(token, " \t\r\n")) {
        /* no such token: what a bearer header could not carry */
        resp_json(rs, 201, authz_review_reply(in, GROUP, KIND, json_pack("{s:{}}", "user")));
    } else if (!(status = review_status(rq, token, json_object_get(spec, "audiences")))) {
        resp_errf(rs, API_INTERNAL, "out of memory");
    } else {
        resp_json(rs, 201, authz_review_reply(in, GROUP, KIND, status));
    }
    api_err_clear(&e);
    json_decref(in);
    return true;
}
