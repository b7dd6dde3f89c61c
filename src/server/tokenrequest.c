/* tokenrequest.c - serviceaccounts/token: issue ServiceAccount tokens, and
 * tell the authenticator whether a token's account still stands. See
 * tokenrequest.h; the JWT itself is server/satoken.c's.
 */
#include "server/tokenrequest.h"

#include "api/kinds.h"
#include "api/protobuf.h"
#include "api/schema.h"
#include "api/typecheck.h"
#include "registry/registry.h"
#include "server/satoken.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP "authentication.k8s.io"
#define API_VERSION GROUP "/v1"
#define KIND "TokenRequest"

static int64_t max_seconds = TOKENREQ_DEFAULT_MAX_SECONDS;

void tokenreq_set_max_seconds(int64_t max)
{
    max_seconds = max > 0 ? max : 0;
}

static const api_kind *sa_kind(void)
{
    return api_kind_find("", "v1", "serviceaccounts");
}

int tokenreq_sa_current(void *ctx, const char *ns, const char *name, const char *uid)
{
    server *srv = ctx;
    char key[600];
    if (api_kind_key(sa_kind(), ns, name, key, sizeof key) < 0) return 0;
    store_obj *o = store_get(srv->st, key);
    if (!o) return 0;
    json_t *doc = store_obj_doc(o); /* parsed once per stored version, shared */
    const json_t *meta = json_object_get(doc, "metadata");
    const char *have = json_string_value(json_object_get(meta, "uid"));
    int ok = have && !strcmp(have, uid) && !json_object_get(meta, "deletionTimestamp");
    json_decref(doc);
    store_obj_unref(o);
    return ok;
}

/* ---- the request body ---- */

static bool is_protobuf(const req *rq)
{
    return rq->content_type && !strncmp(rq->content_type, PB_CONTENT_TYPE, strlen(PB_CONTENT_TYPE));
}

/* The body as a typed TokenRequest (unknown fields dropped), or NULL with a
 * 400 in e. */
static json_t *decode(const req *rq, api_err *e)
{
    json_t *obj = NULL;
    if (!rq->body || rq->body_len == 0) {
        api_err_set(e, API_BAD_REQUEST, "the request body is empty");
        return NULL;
    }
    if (is_protobuf(rq)) {
        if (!(obj = pb_decode(rq->body, rq->body_len, e))) return NULL;
    } else {
        json_error_t je;
        obj = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je);
        if (!obj) {
            api_err_set(e, API_BAD_REQUEST, "couldn't get version/kind; json parse error: %s",
                        je.text);
            return NULL;
        }
    }
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    tc_result r;
    if (!json_is_object(obj)) {
        api_err_set(e, API_BAD_REQUEST, "the body of the request was in an unknown format");
    } else if (av && *av && strcmp(av, API_VERSION) != 0) {
        api_err_set(e, API_BAD_REQUEST,
                    "the API version in the data (%s) does not match the expected API version "
                    "(%s)",
                    av, API_VERSION);
    } else if (kind && *kind && strcmp(kind, KIND) != 0) {
        api_err_set(e, API_BAD_REQUEST,
                    "the kind in the data (%s) does not match the expected kind (%s)", kind, KIND);
    } else if (tc_decode(sch_kind(API_VERSION, KIND), obj, &r) != 0) {
        api_err_set(e, API_BAD_REQUEST,
                    KIND " in version \"v1\" cannot be handled as a " KIND ": %s", r.error);
        tc_result_clear(&r);
    } else {
        tc_result_clear(&r);
        return obj;
    }
    json_decref(obj);
    return NULL;
}

/* metadata.name and .namespace, when given, must be the URL's (422). */
static int check_names(const json_t *meta, const char *ns, const char *name, api_err *e)
{
    const char *bn = json_string_value(json_object_get(meta, "name"));
    const char *bns = json_string_value(json_object_get(meta, "namespace"));
    json_t *causes = json_array();
    if (bn && *bn && strcmp(bn, name) != 0)
        ferr_add_str(causes, FERR_INVALID, "metadata.name", bn,
                     "must match the service account name if specified");
    else if (bns && *bns && strcmp(bns, ns) != 0)
        ferr_add_str(causes, FERR_INVALID, "metadata.namespace", bns,
                     "must match the service account namespace if specified");
    if (json_array_size(causes) == 0) {
        json_decref(causes);
        return 0;
    }
    return api_err_invalid(e, GROUP, KIND, name, causes);
}

/* Upstream's defaulting and ValidateTokenRequest: the seconds asked for. */
static int spec_seconds(const json_t *spec, int64_t *out, api_err *e)
{
    const json_t *v = json_object_get(spec, "expirationSeconds");
    *out = json_is_integer(v) ? (int64_t)json_integer_value(v) : TOKENREQ_DEFAULT_SECONDS;
    json_t *causes = json_array();
    json_t *val = json_integer((json_int_t)*out);
    if (*out < TOKENREQ_MIN_SECONDS)
        ferr_add(causes, FERR_INVALID, "spec.expirationSeconds", val,
                 "may not specify a duration less than 10 minutes");
    if (*out > TOKENREQ_MAX_SECONDS)
        ferr_add(causes, FERR_INVALID, "spec.expirationSeconds", val,
                 "may not specify a duration larger than 2^32 seconds");
    json_decref(val);
    if (json_array_size(causes) == 0) {
        json_decref(causes);
        return 0;
    }
    return api_err_invalid(e, GROUP, KIND, "", causes);
}

/* spec.audiences, or the API server's when empty, into auds (borrowed from spec). */
static int spec_audiences(const json_t *spec, const char **auds, size_t *n, api_err *e)
{
    const json_t *a = json_object_get(spec, "audiences");
    *n = 0;
    if (json_array_size(a) > SATOKEN_MAX_AUDIENCES) {
        json_t *causes = json_array();
        ferr_addf(causes, FERR_INVALID, "spec.audiences", NULL, "at most %d audiences",
                  SATOKEN_MAX_AUDIENCES);
        return api_err_invalid(e, GROUP, KIND, "", causes);
    }
    for (size_t i = 0; i < json_array_size(a); i++)
        if (json_is_string(json_array_get(a, i)))
            auds[(*n)++] = json_string_value(json_array_get(a, i));
    if (*n == 0) auds[(*n)++] = SATOKEN_ISSUER;
    return 0;
}

/* The TokenRequest answered: the request with its defaults, and the token. */
static json_t *reply(const char *ns, const char *name, const char *uid, const char *const *auds,
                     size_t naud, int64_t seconds, int64_t now, const char *token)
{
    char created[40], expires[40];
    format_time(now, created, sizeof created);
    format_time(now + seconds, expires, sizeof expires);
    json_t *a = json_array();
    for (size_t i = 0; i < naud; i++)
        json_array_append_new(a, json_string(auds[i]));
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:{s:o, s:I, s:n}, s:{s:s, s:s}}", "kind",
                     KIND, "apiVersion", API_VERSION, "metadata", "name", name, "namespace", ns,
                     "uid", uid, "creationTimestamp", created, "spec", "audiences", a,
                     "expirationSeconds", (json_int_t)seconds, "boundObjectRef", "status", "token",
                     token, "expirationTimestamp", expires);
}

/* Everything but the signing: 0 with *seconds, auds and *sa set, or -1. */
static int prepare(req *rq, const json_t *obj, const char *ns, const char *name, int64_t *seconds,
                   const char **auds, size_t *naud, json_t **sa, api_err *e)
{
    const json_t *spec = json_object_get(obj, "spec");
    if (check_names(json_object_get(obj, "metadata"), ns, name, e) != 0) return -1;
    if (!(*sa = reg_get(rq->srv->st, sa_kind(), ns, name, e))) return -1;
    if (spec_seconds(spec, seconds, e) != 0 || spec_audiences(spec, auds, naud, e) != 0) return -1;
    const json_t *ref = json_object_get(spec, "boundObjectRef");
    if (ref && !json_is_null(ref))
        return api_err_set(e, API_BAD_REQUEST,
                           "cannot bind token to an object: allot binds tokens to their "
                           "ServiceAccount only (spec.boundObjectRef is not supported)");
    if (!auth_sa_key(rq->srv->auth))
        return api_err_set(e, API_INTERNAL, "no service account signing key");
    return 0;
}

void tokenreq_create(req *rq, resp *rs, const char *ns, const char *name)
{
    api_err e;
    api_err_init(&e);
    const char *auds[SATOKEN_MAX_AUDIENCES];
    size_t naud = 0;
    int64_t seconds = 0, now = now_unix();
    json_t *obj = decode(rq, &e), *sa = NULL;
    char *token = NULL;
    if (!obj || prepare(rq, obj, ns, name, &seconds, auds, &naud, &sa, &e) != 0) goto fail;
    if (max_seconds && seconds > max_seconds) {
        char w[128];
        snprintf(w, sizeof w, "requested expiration of %lld seconds shortened to %lld seconds",
                 (long long)seconds, (long long)max_seconds);
        if (!rs->warnings) rs->warnings = json_array();
        json_array_append_new(rs->warnings, json_string(w));
        seconds = max_seconds;
    }
    const char *uid = json_string_value(json_object_get(json_object_get(sa, "metadata"), "uid"));
    if (!uid || satoken_sign(auth_sa_key(rq->srv->auth), ns, name, uid, auds, naud, now, seconds,
                             &token) != 0) {
        api_err_set(&e, API_INTERNAL, "failed to generate token");
        goto fail;
    }
    json_t *out = reply(ns, name, uid, auds, naud, seconds, now, token);
    memset(token, 0, strlen(token));
    free(token);
    json_decref(obj);
    json_decref(sa);
    if (!out) {
        resp_errf(rs, API_INTERNAL, "out of memory");
        return;
    }
    resp_json(rs, 201, out);
    return;
fail:
    json_decref(obj);
    json_decref(sa);
    resp_err(rs, &e);
    api_err_clear(&e);
}
