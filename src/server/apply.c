/* apply.c - server-side apply over HTTP: PATCH with Content-Type
 * application/apply-patch+yaml on an object, its status or its scale.
 *
 * The request's checks, in upstream's order and words (the patch handler,
 * PatchOptions validation, the field manager's version check and typed
 * conversion), then one registry update whose mutation is fm_apply
 * (api/fieldmanager.h): the apply goes through the same registry write as
 * any other, defaulting, validation and admission (quota) in its
 * transaction. An apply to an absent object creates it (201).
 *
 * Answers:
 *   422 PatchOptions: no fieldManager ("is required for apply patch"), one
 *       too long or unprintable, an unknown fieldValidation;
 *   400 a body that is not a YAML (or JSON) object ("error decoding YAML:
 *       ..."), an apiVersion/kind not the endpoint's ("invalid object type:
 *       /v1, Kind=Secret"), managedFields in it ("metadata.managedFields must
 *       be nil"), a field the kind does not have or a value of the wrong
 *       type ("failed to create typed patch object (ns/name; /v1,
 *       Kind=ConfigMap): .data.x: field not declared in schema"; upstream
 *       answers these with a 500), a keyed list item without its key;
 *   409 conflicts with other managers (without force);
 *   413 a configuration too large to merge (aliases included).
 */
#include "server/server.h"
#include "core/jdump.h"

#include "api/fieldmanager.h"
#include "api/schema.h"
#include "api/typecheck.h"
#include "api/yaml.h"
#include "registry/explain.h"
#include "registry/registry.h"
#include "server/authz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The Scale a scale subresource is applied as: its typed definition is
 * autoscaling/v1 Scale's; it is no served kind of its own. */
static const api_kind scale_kind = {.group = "autoscaling",
                                    .version = "v1",
                                    .kind = "Scale",
                                    .resource = "scale",
                                    .singular = "scale",
                                    .namespaced = true};

typedef struct apply_ctx {
    const req *rq;
    const api_kind *kind;
    const char *ns, *name, *sub;
    const char *manager;
    const json_t *config;
    bool force;
} apply_ctx;

static int options(const req *rq, char *manager, size_t n, api_err *e)
{
    bool strict;
    if (rest_field_validation(rq, "PatchOptions", &strict, e) != 0) return -1;
    const char *m = rq->query(rq, "fieldManager");
    if (!m || !*m) {
        /* kubectl sends "kubectl"; controllers must say who they are */
        json_t *causes = json_array();
        ferr_add(causes, FERR_REQUIRED, "fieldManager", NULL, "is required for apply patch");
        return api_err_invalid(e, "meta.k8s.io", "PatchOptions", "", causes);
    }
    return rest_field_manager(rq, "PatchOptions", manager, n, e);
}

/* "apps/v1" as schema.GroupVersionKind prints it: "apps/v1, Kind=Deployment". */
static void gvk_string(const char *av, const char *kind, char *buf, size_t n)
{
    const char *slash = av ? strchr(av, '/') : NULL;
    if (slash)
        snprintf(buf, n, "%.*s/%s, Kind=%s", (int)(slash - av), av, slash + 1, kind ? kind : "");
    else
        snprintf(buf, n, "/%s, Kind=%s", av ? av : "", kind ? kind : "");
}

/* The body as the applied configuration: a YAML or JSON object of the
 * endpoint's kind that decodes as that kind (fm_apply refuses one with
 * managedFields). */
static json_t *configuration(const req *rq, const api_kind *k, const char *ns, const char *name,
                             api_err *e)
{
    char err[512] = "";
    json_t *c = rq->body && rq->body_len ? yaml_to_json(rq->body, rq->body_len, err, sizeof err)
                                         : json_object();
    if (!c) {
        api_err_set(e, API_BAD_REQUEST, "error decoding YAML: %s", err);
        return NULL;
    }
    if (!json_is_object(c)) {
        api_err_set(e, API_BAD_REQUEST,
                    "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: "
                    "cannot unmarshal %s into Go value of type map[string]interface {}",
                    json_is_array(c)    ? "array"
                    : json_is_string(c) ? "string"
                                        : "number");
        goto fail;
    }
    const char *av = json_string_value(json_object_get(c, "apiVersion"));
    const char *kind = json_string_value(json_object_get(c, "kind"));
    char want[128], got[256], gvk[512];
    api_kind_api_version(k, want, sizeof want);
    if (!av || !kind || strcmp(av, want) || strcmp(kind, k->kind)) {
        gvk_string(av, kind, got, sizeof got);
        api_err_set(e, API_BAD_REQUEST, "invalid object type: %s", got);
        goto fail;
    }
    /* upstream's typed conversion of the patch: every field must be the
     * kind's, of its type (checked on a copy: the configuration is applied
     * as sent, nulls included) */
    bool typed = api_kind_schema(k) || k->decode_row; /* a custom resource's schema too */
    json_t *copy = typed ? jcopy(c) : NULL;
    bool nomem = typed && !copy;
    tc_result r = {0};
    int rc = typed ? (copy ? api_kind_decode(k, copy, TC_JSON, &r) : -1) : 0;
    json_decref(copy);
    gvk_string(av, kind, got, sizeof got);
    snprintf(gvk, sizeof gvk, "%s/%s; %s", ns, name, got);
    if (rc != 0 || json_array_size(r.unknown)) {
        if (rc != 0)
            api_err_set(e, API_BAD_REQUEST, "failed to create typed patch object (%s): %s", gvk,
                        nomem ? "out of memory" : r.error);
        else
            api_err_set(e, API_BAD_REQUEST,
                        "failed to create typed patch object (%s): .%s: field not declared in "
                        "schema",
                        gvk, json_string_value(json_array_get(r.unknown, 0)));
        tc_result_clear(&r);
        goto fail;
    }
    tc_result_clear(&r);
    return c;
fail:
    json_decref(c);
    return NULL;
}

static void now(char *buf, size_t n)
{
    reg_now_rfc3339(buf, n);
}

/* The mutation: the apply itself, then the result decoded as its kind
 * (quantities canonical, nulls gone) and authorized as any write. */
static json_t *mutate_apply(const json_t *cur, void *ctx, api_err *e)
{
    apply_ctx *ac = ctx;
    char t[32];
    now(t, sizeof t);
    fm_write w = {ac->kind, ac->sub, ac->manager, t};
    json_t *nw = fm_apply(&w, cur, ac->config, ac->force, NULL, e), *ignored = NULL;
    if (nw && (rest_typed_object(ac->kind, nw, &ignored, e) != 0 ||
               authz_check_write(ac->rq, ac->kind, ac->ns, nw, e) != 0)) {
        json_decref(nw);
        nw = NULL;
    }
    json_decref(ignored); /* unknown fields can only be stored ones: pruned quietly */
    return nw;
}

/* The scale subresource: the Scale applied, its replicas written back. */
static json_t *mutate_apply_scale(const json_t *cur, void *ctx, api_err *e)
{
    apply_ctx *ac = ctx;
    char t[32];
    now(t, sizeof t);
    fm_write w = {ac->kind, "scale", ac->manager, t};
    json_t *scale = rest_scale_of(ac->kind, cur);
    json_object_del(json_object_get(scale, "metadata"), "managedFields");
    json_t *nw =
        scale ? fm_apply_scale(&w, &scale_kind, cur, scale, ac->config, ac->force, e) : NULL;
    json_decref(scale);
    if (!nw) return NULL;
    json_t *r = json_object_get(json_object_get(nw, "spec"), "replicas");
    if (r && (!json_is_integer(r) || json_integer_value(r) < 0)) {
        json_t *causes = json_array();
        ferr_add(causes, FERR_INVALID, "spec.replicas", r, "must be greater than or equal to 0");
        api_err_invalid(e, "autoscaling", "Scale", ac->name, causes);
        json_decref(nw);
        return NULL;
    }
    return nw;
}

static void unsupported(resp *rs)
{
    resp_errf(rs, API_UNSUPPORTED_MEDIA,
              "the body of the request was in an unknown format - accepted media types include: "
              "application/json-patch+json, application/merge-patch+json, "
              "application/strategic-merge-patch+json");
}

void rest_apply(req *rq, resp *rs, const api_kind *k, const char *ns, const char *name,
                const char *sub)
{
    api_err e;
    api_err_init(&e);
    bool scale = !strcmp(sub, "scale");
    if (*sub && !scale && strcmp(sub, "status")) return unsupported(rs); /* pods/resize */
    char manager[FM_MANAGER_MAX + 1];
    const char *dr = rq->query(rq, "dryRun");
    bool dry_run = dr && !strcmp(dr, "All");
    json_t *out = NULL, *warnings = NULL;
    apply_ctx ac = {rq, k, ns, name, sub, manager, NULL, query_bool(rq, "force")};
    if (options(rq, manager, sizeof manager, &e) != 0 ||
        !(ac.config = configuration(rq, scale ? &scale_kind : k, ns, name, &e))) {
        resp_err(rs, &e);
        api_err_clear(&e);
        return;
    }
    reg_writer w = {manager, true};
    bool created = false;
    reg_explain *x = dry_run ? reg_explain_begin() : NULL;
    int rc = reg_update_as(rq->srv->st, k, ns, name, sub, scale ? mutate_apply_scale : mutate_apply,
                           &ac, &w, dry_run, &out, &created, &e);
    if (x) rest_explain_warnings(x, rc, &e, &warnings);
    json_decref((json_t *)ac.config);
    rs->warnings = warnings;
    if (rc != 0) {
        resp_err(rs, &e);
        api_err_clear(&e);
        return;
    }
    if (scale) {
        resp_json(rs, 200, rest_scale_of(k, out));
        json_decref(out);
        return;
    }
    resp_json(rs, created ? 201 : 200, out);
}
