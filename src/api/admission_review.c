/* admission_review.c - parse a request AdmissionReview, build the response
 * review (api/admission_review.h). Pure: the body comes in, JSON goes out.
 *
 * Field names and shapes are upstream's admission/v1 AdmissionRequest and
 * AdmissionResponse (v1beta1's are the same). Errors name the field by its
 * JSON path ("request.uid: Required value"), as field errors do, in a 400:
 * the API server that sent a malformed review gets a Status it can log.
 */
#include "api/admission_review.h"

#include "core/b64.h"

#include <stdlib.h>
#include <string.h>

#define AR_MAX_VERSION 63 /* a DNS label ("v1beta1") */
#define AR_MAX_USER 1024  /* a user name: an email, an OIDC subject */

static const char *const OPS[] = {[AR_CREATE] = "CREATE",
                                  [AR_UPDATE] = "UPDATE",
                                  [AR_DELETE] = "DELETE",
                                  [AR_CONNECT] = "CONNECT"};

const char *ar_op_name(ar_op op)
{
    return (unsigned)op < sizeof OPS / sizeof *OPS ? OPS[op] : "";
}

/* The one message shape of a review that cannot be read. Returns -1. */
#define bad(e, ...) api_err_set(e, API_BAD_REQUEST, "AdmissionReview is invalid: " __VA_ARGS__)

/* A string member `key` of o at `path` into *out: absent or null is "" (Go
 * decodes null as the zero value), and an error when `required`; longer
 * than max bytes, or holding a NUL (C would cut it), is an error. */
static int get_str(const json_t *o, const char *path, const char *key, bool required, size_t max,
                   const char **out, api_err *e)
{
    const json_t *v = json_object_get(o, key);
    *out = "";
    if (!v || json_is_null(v)) return required ? bad(e, "%s.%s: Required value", path, key) : 0;
    if (!json_is_string(v))
        return bad(e, "%s.%s: Invalid value: %s: must be a string", path, key,
                   json_is_object(v)  ? "object"
                   : json_is_array(v) ? "array"
                                      : "scalar");
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (strlen(s) != n) return bad(e, "%s.%s: Invalid value: must not contain NUL", path, key);
    if (n > max) return bad(e, "%s.%s: Too long: must have at most %zu bytes", path, key, max);
    if (required && !n) return bad(e, "%s.%s: Required value", path, key);
    *out = s;
    return 0;
}

/* An optional object member: NULL when absent or null; an error otherwise
 * when it is not an object. */
static int get_obj(const json_t *o, const char *path, const char *key, const json_t **out,
                   api_err *e)
{
    const json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_object(v)) return bad(e, "%s.%s: Invalid value: must be an object", path, key);
    *out = v;
    return 0;
}

/* A GroupVersionKind or GroupVersionResource (`name_key` "kind" or
 * "resource"): group may be "" (the core group), version and name may not. */
static int get_gvn(const json_t *req, const char *key, const char *name_key, bool required,
                   ar_gvn *out, api_err *e)
{
    const json_t *o;
    char path[64];
    snprintf(path, sizeof path, "request.%s", key);
    if (get_obj(req, "request", key, &o, e) != 0) return -1;
    if (!o) return required ? bad(e, "%s: Required value", path) : 1;
    if (get_str(o, path, "group", false, AR_MAX_NAME, &out->group, e) != 0 ||
        get_str(o, path, "version", true, AR_MAX_VERSION, &out->version, e) != 0 ||
        get_str(o, path, name_key, true, AR_MAX_NAME, &out->name, e) != 0)
        return -1;
    return 0;
}

static int get_op(const json_t *req, ar_op *op, api_err *e)
{
    const char *s;
    if (get_str(req, "request", "operation", true, 16, &s, e) != 0) return -1;
    for (size_t i = 0; i < sizeof OPS / sizeof *OPS; i++)
        if (!strcmp(s, OPS[i])) {
            *op = (ar_op)i;
            return 0;
        }
    return bad(e,
               "request.operation: Unsupported value: \"%s\": supported values: \"CREATE\", "
               "\"UPDATE\", \"DELETE\", \"CONNECT\"",
               s);
}

static int get_dry_run(const json_t *req, bool *out, api_err *e)
{
    const json_t *v = json_object_get(req, "dryRun");
    *out = false;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_boolean(v)) return bad(e, "request.dryRun: Invalid value: must be a boolean");
    *out = json_is_true(v);
    return 0;
}

/* What the operation needs to be decided: the object written (CREATE,
 * UPDATE), the name of the object (UPDATE, DELETE: a create's may still be
 * generated). */
static int check_op_fields(const ar_request *r, api_err *e)
{
    if ((r->op == AR_CREATE || r->op == AR_UPDATE) && !r->object)
        return bad(e, "request.object: Required value: for operation %s", ar_op_name(r->op));
    if ((r->op == AR_UPDATE || r->op == AR_DELETE) && !*r->name)
        return bad(e, "request.name: Required value: for operation %s", ar_op_name(r->op));
    return 0;
}

/* The request's fields; r->root is set. */
static int parse_request(const json_t *req, ar_request *r, api_err *e)
{
    const json_t *ui;
    if (get_str(req, "request", "uid", true, AR_MAX_UID, &r->uid, e) != 0 ||
        get_gvn(req, "kind", "kind", true, &r->kind, e) != 0 ||
        get_gvn(req, "resource", "resource", true, &r->resource, e) != 0 ||
        get_str(req, "request", "subResource", false, AR_MAX_NAME, &r->sub_resource, e) != 0 ||
        get_str(req, "request", "name", false, AR_MAX_NAME, &r->name, e) != 0 ||
        get_str(req, "request", "namespace", false, AR_MAX_NAME, &r->namespace_, e) != 0 ||
        get_op(req, &r->op, e) != 0 || get_obj(req, "request", "userInfo", &ui, e) != 0 ||
        get_str(ui, "request.userInfo", "username", false, AR_MAX_USER, &r->username, e) != 0 ||
        get_obj(req, "request", "object", &r->object, e) != 0 ||
        get_obj(req, "request", "oldObject", &r->old_object, e) != 0 ||
        get_obj(req, "request", "options", &r->options, e) != 0 ||
        get_dry_run(req, &r->dry_run, e) != 0)
        return -1;
    r->user_info = ui;
    int rk = get_gvn(req, "requestKind", "kind", false, &r->request_kind, e);
    int rr = get_gvn(req, "requestResource", "resource", false, &r->request_resource, e);
    if (rk < 0 || rr < 0) return -1;
    if (rk > 0) r->request_kind = r->kind;
    if (rr > 0) r->request_resource = r->resource;
    const char *rsub; /* checked for its type; the decision uses subResource */
    if (get_str(req, "request", "requestSubResource", false, AR_MAX_NAME, &rsub, e) != 0) return -1;
    return check_op_fields(r, e);
}

int ar_parse(const char *body, size_t len, ar_request *r, api_err *e)
{
    memset(r, 0, sizeof *r);
    if (len > AR_MAX_BODY)
        return api_err_set(e, API_TOO_LARGE, "AdmissionReview is too large: %zu bytes, limit %d",
                           len, AR_MAX_BODY);
    json_error_t je;
    json_t *root = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &je);
    if (!root) return bad(e, "not JSON: %s (line %d, column %d)", je.text, je.line, je.column);
    const char *av, *kind;
    const json_t *req;
    int rc = -1;
    if (!json_is_object(root)) {
        bad(e, "not a JSON object");
        goto fail;
    }
    if (get_str(root, "review", "apiVersion", true, 64, &av, e) != 0 ||
        get_str(root, "review", "kind", true, 64, &kind, e) != 0)
        goto fail;
    if (strcmp(av, AR_V1) && strcmp(av, AR_V1BETA1)) {
        bad(e,
            "apiVersion: Unsupported value: \"%s\": supported values: \"" AR_V1 "\", \"" AR_V1BETA1
            "\"",
            av);
        goto fail;
    }
    if (strcmp(kind, AR_KIND)) {
        bad(e, "kind: Unsupported value: \"%s\": supported values: \"" AR_KIND "\"", kind);
        goto fail;
    }
    if (get_obj(root, "review", "request", &req, e) != 0) goto fail;
    if (!req) {
        bad(e, "request: Required value");
        goto fail;
    }
    r->root = root;
    r->api_version = av;
    rc = parse_request(req, r, e);
    if (rc == 0) return 0;
fail:
    json_decref(root);
    memset(r, 0, sizeof *r);
    return rc;
}

void ar_request_free(ar_request *r)
{
    json_decref(r->root);
    memset(r, 0, sizeof *r);
}

json_t *ar_result_status(const api_err *e)
{
    json_t *st = api_err_status(e);
    if (!st) return NULL;
    /* a Go webhook's result is a bare metav1.Status: TypeMeta empty, so
     * omitted; the API server reads code, reason and message */
    json_object_del(st, "kind");
    json_object_del(st, "apiVersion");
    return st;
}

/* The patch as AdmissionResponse.patch: []byte, which JSON carries in
 * base64. NULL when out of memory. */
static json_t *patch_b64(const json_t *patch)
{
    char *text = json_dumps(patch, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text) return NULL;
    size_t n = strlen(text);
    char *enc = malloc(b64_encoded_len(n) + 1);
    json_t *v = NULL;
    if (enc) {
        b64_encode((const unsigned char *)text, n, enc);
        v = json_string(enc);
    }
    free(enc);
    free(text);
    return v;
}

json_t *ar_response(const ar_request *r, const ar_answer *a)
{
    json_t *resp = json_pack("{s:s, s:b}", "uid", r->uid, "allowed", a->allowed);
    json_t *review = resp ? json_pack("{s:s, s:s, s:o}", "apiVersion", r->api_version, "kind",
                                      AR_KIND, "response", resp)
                          : NULL;
    if (!review) return NULL;
    int rc = 0;
    if (!a->allowed && a->denial)
        rc |= json_object_set_new(resp, "status", ar_result_status(a->denial));
    if (a->warnings && json_array_size(a->warnings))
        rc |= json_object_set_new(resp, "warnings", json_deep_copy(a->warnings));
    if (a->allowed && a->patch) {
        /* only an allowed answer mutates: the API server ignores a denial's */
        rc |= json_object_set_new(resp, "patchType", json_string("JSONPatch"));
        rc |= json_object_set_new(resp, "patch", patch_b64(a->patch));
    }
    if (rc != 0) {
        json_decref(review);
        return NULL;
    }
    return review;
}
