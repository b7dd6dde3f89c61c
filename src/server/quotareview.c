/* quotareview.c - allot.dev/v1 QuotaReview: "would this fit, and if not,
 * which quota stops it?" without writing anything.
 *
 *   POST /apis/allot.dev/v1/quotareviews
 *   POST /apis/allot.dev/v1/namespaces/<ns>/quotareviews
 *   {"apiVersion": "allot.dev/v1", "kind": "QuotaReview",
 *    "spec": {"object": {...} | "manifest": "<YAML or JSON text>",
 *             "operation": "Create" (default) | "Update"}}
 *
 * The object is decoded as its own create would decode it, the caller must be
 * allowed to create (or update) it, and it is then written as a dry run with
 * an explanation attached (registry/explain.h). The reply (201, like the
 * other reviews) carries the explanation as its status: the decision with
 * the exact message the write would get, and each quota, pool and custom
 * quota that applies with its usage before and after. Like a dry run, it
 * changes nothing. With kubectl: `kubectl create --raw
 * /apis/allot.dev/v1/quotareviews -f review.yaml` (docs/explain.md).
 */
#include "api/yaml.h"
#include "core/jdump.h"
#include "registry/explain.h"
#include "server/authz.h"
#include "server/server.h"

#include <stdio.h>
#include <string.h>

#define GROUP "allot.dev"
#define KIND "QuotaReview"

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* The body: JSON, or YAML (kubectl create --raw -f sends a file as it is). */
static json_t *parse_text(const char *text, size_t len, char *err, size_t n)
{
    json_t *v = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
    return v ? v : yaml_to_json(text, len, err, n);
}

/* The object under review, from spec.object or spec.manifest; NULL with e set. */
static json_t *object_of(const json_t *spec, api_err *e)
{
    const json_t *o = json_object_get(spec, "object"), *m = json_object_get(spec, "manifest");
    char err[512] = "";
    json_t *obj = NULL;
    if (o && m) {
        api_err_set(e, API_BAD_REQUEST, "spec: give one of object and manifest, not both");
        return NULL;
    }
    if (json_is_object(o)) {
        obj = jcopy(o);
    } else if (json_is_string(m)) {
        obj = parse_text(json_string_value(m), json_string_length(m), err, sizeof err);
        if (obj && !json_is_object(obj)) {
            json_decref(obj);
            obj = NULL;
            snprintf(err, sizeof err, "not an object");
        }
    } else {
        api_err_set(e, API_BAD_REQUEST,
                    "spec.object (an object) or spec.manifest (a string) "
                    "is required");
        return NULL;
    }
    if (!obj) api_err_set(e, API_BAD_REQUEST, "spec.manifest: %s", *err ? err : "out of memory");
    return obj;
}

/* The review's status, or NULL with e set (the request itself is wrong, or
 * the server failed). */
static json_t *review(req *rq, const char *path_ns, const json_t *spec, api_err *e)
{
    const char *op = str(spec, "operation");
    bool update = op && !strcmp(op, "Update");
    if (op && !update && strcmp(op, "Create")) {
        api_err_set(e, API_BAD_REQUEST,
                    "spec.operation: Unsupported value: \"%s\": supported values: \"Create\", "
                    "\"Update\"",
                    op);
        return NULL;
    }
    json_t *obj = object_of(spec, e);
    if (!obj) return NULL;
    const char *av = str(obj, "apiVersion"), *kind = str(obj, "kind");
    const api_kind *k = av && kind ? api_kind_by_kind(av, kind) : NULL;
    json_t *status = NULL, *out = NULL, *warnings = NULL;
    if (!k) {
        api_err_set(e, API_BAD_REQUEST, "no matches for kind \"%s\" in version \"%s\"",
                    kind ? kind : "", av ? av : "");
        goto done;
    }
    json_t *meta = json_object_get(obj, "metadata");
    json_object_del(meta, "resourceVersion"); /* (a review is not a conditional write) */
    const char *ons = str(meta, "namespace"), *name = str(meta, "name");
    if (path_ns && ons && *ons && strcmp(ons, path_ns)) {
        api_err_set(e, API_BAD_REQUEST,
                    "the namespace of the object (%s) does not match the namespace of the "
                    "review (%s)",
                    ons, path_ns);
        goto done;
    }
    const char *ns = !k->namespaced ? "" : path_ns ? path_ns : ons && *ons ? ons : "default";
    char nsbuf[256];
    snprintf(nsbuf, sizeof nsbuf, "%s", ns); /* (obj's metadata changes below) */
    rbac_attrs a = {authz_user(rq),
                    update ? "update" : "create",
                    true,
                    k->group,
                    k->resource,
                    "",
                    name ? name : "",
                    nsbuf,
                    rq->path};
    resp deny = {0};
    if (authz_request(rq, &a, &deny) != 0) {
        const char *msg = str(deny.json, "message");
        api_err_set(e, API_FORBIDDEN, "%s", msg ? msg : "forbidden");
        json_decref(deny.json);
        goto done;
    }
    json_decref(deny.json);
    if (rest_typed_object(k, obj, &warnings, e) != 0 ||
        authz_check_write(rq, k, nsbuf, obj, e) != 0)
        goto done;
    reg_explain *x = reg_explain_begin();
    if (!x) {
        api_err_set(e, API_INTERNAL, "out of memory");
        goto done;
    }
    api_err why;
    api_err_init(&why);
    int rc = update ? reg_update(rq->srv->st, k, nsbuf, name ? name : "", "", rest_replace, obj,
                                 true, &out, &why)
                    : reg_create(rq->srv->st, k, nsbuf, obj, true, &out, &why);
    status = reg_explain_end(x, rc, &why);
    if (rc != 0 && why.code == API_INTERNAL) { /* the server failed, not the object */
        json_decref(status);
        status = NULL;
        api_err_set(e, API_INTERNAL, "%s", why.message);
    } else if (!status) {
        api_err_set(e, API_INTERNAL, "out of memory");
    }
    api_err_clear(&why);
done:
    json_decref(warnings);
    json_decref(out);
    json_decref(obj);
    return status;
}

bool quotareview_serve(req *rq, resp *rs, char segs[][256], int n)
{
    bool cluster = n == 4, namespaced = n == 6 && !strcmp(segs[3], "namespaces");
    if (!(cluster || namespaced) || strcmp(segs[0], "apis") || strcmp(segs[1], GROUP) ||
        strcmp(segs[2], "v1") || strcmp(segs[n - 1], "quotareviews"))
        return false;
    snprintf(rq->resource, sizeof rq->resource, "quotareviews." GROUP);
    rq->verb = "POST";
    if (strcmp(rq->method, "POST")) {
        resp_errf(rs, API_METHOD_NOT_ALLOWED,
                  "the server does not allow this method on the requested resource");
        return true;
    }
    if (rest_refuse_table(rq, rs)) return true;
    char err[512] = "";
    json_t *in = rq->body ? parse_text(rq->body, rq->body_len, err, sizeof err) : NULL;
    const char *kind = str(in, "kind"), *av = str(in, "apiVersion");
    if (!json_is_object(in)) {
        resp_errf(rs, API_BAD_REQUEST, "the body of the request was in an unknown format%s%s",
                  *err ? ": " : "", err);
    } else if ((kind && strcmp(kind, KIND)) || (av && strcmp(av, GROUP "/v1"))) {
        resp_errf(rs, API_BAD_REQUEST, "expected %s in %s/v1, got %s in %s", KIND, GROUP,
                  kind ? kind : "", av ? av : "");
    } else {
        api_err e;
        api_err_init(&e);
        json_t *status = review(rq, namespaced ? segs[4] : NULL, json_object_get(in, "spec"), &e);
        if (status)
            resp_json(rs, 201, authz_review_reply(in, GROUP, KIND, status));
        else
            resp_err(rs, &e);
        api_err_clear(&e);
    }
    json_decref(in);
    return true;
}
