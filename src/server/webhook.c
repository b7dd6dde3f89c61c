/* webhook.c - the admission webhook's decision and route (server/webhook.h).
 *
 * One decision per review, as a dry run through the registry: a create is
 * reg_create_as, an update reg_update_as (a create when the store does not
 * hold the object yet), a delete reg_delete, each with dry_run set, so that
 * every admission plugin decides exactly as for a client of standalone
 * allotd and the transaction is aborted. What the cluster owns and allot
 * does not is left out of the object first: its resourceVersion (a
 * precondition on allot's store would compare the cluster's revision with
 * allot's) and its managedFields.
 *
 * This module never writes the store and keeps no state: the lead's
 * reservations (issue 28) go where decide() allows a write.
 */
#include "server/webhook.h"

#include "api/admission_review.h"
#include "core/jdump.h"
#include "registry/registry.h"
#include "server/authz.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Field manager of the dry runs (never recorded: nothing is written). */
static const reg_writer WEBHOOK_WRITER = {"allot-webhook", false, NULL};

/* The request's object as allot writes it: a copy without the cluster's
 * resourceVersion and managedFields. NULL when out of memory. */
static json_t *object_for_allot(const json_t *obj)
{
    json_t *o = jcopy(obj);
    json_t *meta = json_object_get(o, "metadata");
    json_object_del(meta, "resourceVersion");
    json_object_del(meta, "managedFields");
    return o;
}

static int dry_create(store *st, const api_kind *k, const char *ns, const json_t *obj, api_err *e)
{
    json_t *o = object_for_allot(obj), *out = NULL, *warnings = NULL;
    if (!o) return api_err_set(e, API_INTERNAL, "out of memory");
    /* decoded as a create decodes a body; the pruning warnings are not
     * passed on: the API server has decoded the object already */
    int rc = rest_typed_object(k, o, &warnings, e);
    if (rc == 0) rc = reg_create_as(st, k, ns, o, &WEBHOOK_WRITER, true, &out, e);
    json_decref(warnings);
    json_decref(out);
    json_decref(o);
    return rc;
}

/* Whether e is the registry's 404 for the object `name` of k itself (not,
 * say, for a missing namespace): api_err_not_found's details name it. */
static bool object_missing(const api_err *e, const api_kind *k, const char *name)
{
    const char *dn = json_string_value(json_object_get(e->details, "name"));
    const char *dk = json_string_value(json_object_get(e->details, "kind"));
    const char *dg = json_string_value(json_object_get(e->details, "group"));
    return e->code == API_NOT_FOUND && dn && !strcmp(dn, name) && dk && !strcmp(dk, k->resource) &&
           !strcmp(dg ? dg : "", k->group);
}

static int dry_update(store *st, const api_kind *k, const char *ns, const ar_request *r, api_err *e)
{
    json_t *o = object_for_allot(r->object), *out = NULL, *warnings = NULL;
    if (!o) return api_err_set(e, API_INTERNAL, "out of memory");
    int rc = rest_typed_object(k, o, &warnings, e);
    bool created = false;
    if (rc == 0)
        rc = reg_update_as(st, k, ns, r->name, r->sub_resource, rest_replace, o, &WEBHOOK_WRITER,
                           true, &out, &created, e);
    if (rc != 0 && object_missing(e, k, r->name)) {
        /* not in allot's store yet (the mirror is behind, or the object
         * came before allot): decided as its creation would be; a status
         * write of an object allot does not know changes nothing it keeps */
        api_err_clear(e);
        api_err_init(e);
        rc = *r->sub_resource ? 0 : dry_create(st, k, ns, r->object, e);
    }
    json_decref(warnings);
    json_decref(out);
    json_decref(o);
    return rc;
}

static int dry_delete(store *st, const api_kind *k, const char *ns, const char *name, api_err *e)
{
    /* the cluster's options (its preconditions, propagation) are not
     * allot's: the question is whether the object may go */
    reg_delete_opts o = {.dry_run = true, .grace_seconds = -1};
    json_t *out = NULL;
    bool gone = false;
    int rc = reg_delete(st, k, ns, name, &o, &out, &gone, e);
    json_decref(out);
    if (rc != 0 && object_missing(e, k, name)) { /* nothing allot keeps */
        api_err_clear(e);
        api_err_init(e);
        rc = 0;
    }
    return rc;
}

/* 0: allowed; -1: denied with e. */
static int decide(store *st, const ar_request *r, api_err *e)
{
    if (r->op == AR_CONNECT) return 0;
    const api_kind *k = api_kind_find(r->resource.group, r->resource.version, r->resource.name);
    if (!k) return 0; /* not a kind of allot's: nothing of allot's to decide */
    const char *sub = r->sub_resource;
    bool status = !strcmp(sub, "status") && (k->subresources & API_SUB_STATUS);
    if (*sub && !status) return 0; /* scale, binding, eviction...: not decided here */
    const char *ns = k->namespaced ? r->namespace_ : "";
    if (k->namespaced && !*ns)
        return api_err_set(e, API_BAD_REQUEST,
                           "AdmissionReview is invalid: request.namespace: Required value: for "
                           "namespaced resource %s",
                           k->resource);
    switch (r->op) {
    case AR_CREATE:
        return *sub ? 0 : dry_create(st, k, ns, r->object, e);
    case AR_UPDATE:
        return dry_update(st, k, ns, r, e);
    case AR_DELETE:
        return *sub ? 0 : dry_delete(st, k, ns, r->name, e);
    default:
        return 0;
    }
}

/* A Status body for a review that could not be read. */
static int status_text(const api_err *e, char **out, size_t *len)
{
    json_t *st = api_err_status(e);
    *out = st ? json_dumps(st, JSON_COMPACT) : NULL;
    *len = *out ? strlen(*out) : 0;
    json_decref(st);
    return *out ? api_errcode_http(e->code) : 500;
}

/* Parse the review `body` into r (e initialised): 0, or the HTTP status
 * with the Status for a review that could not be read in *resp_json. */
static int read_review(const char *body, size_t len, ar_request *r, api_err *e, char **resp_json,
                       size_t *resp_len)
{
    api_err_init(e);
    *resp_json = NULL;
    *resp_len = 0;
    if (ar_parse(body, len, r, e) == 0) return 0;
    int code = status_text(e, resp_json, resp_len);
    api_err_clear(e);
    return code;
}

int webhook_review(store *st, const webhook_guard *g, const char *body, size_t len,
                   char **resp_json, size_t *resp_len)
{
    ar_request r;
    api_err e;
    int code = read_review(body, len, &r, &e, resp_json, resp_len);
    if (code) return code;
    code = 200;
    /* A verdict is all a review asks for (registry.h). */
    bool allowed = !g || !g->catch_up || g->catch_up(g->arg, &r, &e) == 0;
    reg_set_verdict_only(true);
    bool dry = !g || !g->dry_runs || g->dry_runs(&r);
    allowed = allowed && (!dry || decide(st, &r, &e) == 0);
    reg_set_verdict_only(false);
    int guarded = allowed && g && g->fn ? g->fn(g->arg, &r, &e) : 0;
    if (guarded == 1) {
        /* the guard pinned what the decision reads (a frozen quota): the
         * answer is the one made on that */
        reg_set_verdict_only(true);
        allowed = !dry || decide(st, &r, &e) == 0;
        reg_set_verdict_only(false);
        if (!allowed && g->undo) g->undo(g->arg, &r);
    } else {
        allowed = allowed && guarded == 0;
    }
    ar_answer a = {.allowed = allowed, .denial = &e};
    json_t *review = ar_response(&r, &a);
    *resp_json = review ? json_dumps(review, JSON_COMPACT) : NULL;
    *resp_len = *resp_json ? strlen(*resp_json) : 0;
    if (!*resp_json) code = 500;
    json_decref(review);
    api_err_clear(&e);
    ar_request_free(&r);
    return code;
}

static bool json_body(const req *rq)
{
    const char *ct = rq->content_type;
    size_t n = strlen("application/json");
    return ct && !strncasecmp(ct, "application/json", n) && (!ct[n] || ct[n] == ';');
}

int webhook_mutate(const webhook_guard *g, const char *body, size_t len, char **resp_json,
                   size_t *resp_len)
{
    ar_request r;
    api_err e;
    int code = read_review(body, len, &r, &e, resp_json, resp_len);
    if (code) return code;
    json_t *patch = NULL;
    bool allowed = !g || !g->mutate || g->mutate(g->arg, &r, &patch, &e) == 0;
    ar_answer a = {.allowed = allowed, .denial = &e, .patch = allowed ? patch : NULL};
    json_t *review = ar_response(&r, &a);
    *resp_json = review ? json_dumps(review, JSON_COMPACT) : NULL;
    *resp_len = *resp_json ? strlen(*resp_json) : 0;
    json_decref(review);
    json_decref(patch);
    api_err_clear(&e);
    ar_request_free(&r);
    return *resp_json ? 200 : 500;
}

bool webhook_serve(req *rq, resp *rs, char segs[][256], int n)
{
    if (n != 3 || strcmp(segs[0], "admission") || strcmp(segs[1], "v1") ||
        (strcmp(segs[2], "validate") && strcmp(segs[2], "mutate")))
        return false;
    bool mutate = !strcmp(segs[2], "mutate");
    rq->verb = rq->method;
    snprintf(rq->resource, sizeof rq->resource, "%s", "admissionreviews");
    /* a non-resource URL: upstream's verb is the method, lower case */
    rbac_attrs a = {authz_user(rq), "post", false, "", "", "", "", "", rq->path};
    if (strcmp(rq->method, "POST")) {
        resp_errf(rs, API_METHOD_NOT_ALLOWED,
                  "the server does not allow this method on the requested resource");
        return true;
    }
    /* Standalone: who may ask is RBAC's to say. In cluster mode anyone who
     * reaches the listener may (the API server calls anonymously), but
     * nothing is decided before the mirror holds the whole cluster. */
    if (!rq->srv->mirror && authz_request(rq, &a, rs) != 0) return true;
    if (rq->srv->mirror && (!rq->srv->ready || !rq->srv->ready(rq->srv->ready_arg))) {
        resp_errf(rs, API_UNAVAILABLE, "allot's caches of the cluster are not synced yet");
        return true;
    }
    if (!json_body(rq)) {
        resp_errf(rs, API_UNSUPPORTED_MEDIA,
                  "the body of an AdmissionReview must be "
                  "application/json");
        return true;
    }
    char *text = NULL;
    size_t len = 0;
    rs->code = mutate ? webhook_mutate(&rq->srv->guard, rq->body, rq->body_len, &text, &len)
                      : webhook_review(rq->srv->st, &rq->srv->guard, rq->body, rq->body_len,
                                       &text, &len);
    if (!text) {
        resp_errf(rs, API_INTERNAL, "out of memory");
        return true;
    }
    rs->raw = text;
    rs->raw_len = len;
    rs->content_type = "application/json";
    return true;
}
