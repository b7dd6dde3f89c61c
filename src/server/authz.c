/* authz.c - RBAC on the request path (see authz.h). */
#include "server/authz.h"
#include "core/jdump.h"

#include "api/protobuf.h"
#include "core/jget.h"
#include "registry/registry.h"
#include "util/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the snapshot ---- */

typedef struct snap {
    rbac_snapshot *s;
    uint64_t gen;
    atomic_int refs;
} snap;

enum { K_ROLE, K_CLUSTERROLE, K_ROLEBINDING, K_CLUSTERROLEBINDING, K_N };

static struct {
    store *st;
    pthread_mutex_t mu;
    snap *cur;
    _Atomic uint64_t gen; /* bumped by every committed RBAC write */
    const api_kind *kinds[K_N];
    char prefixes[K_N][300]; /* their store keys' prefixes */
} A = {.mu = PTHREAD_MUTEX_INITIALIZER};

static const char *const resources[K_N] = {"roles", "clusterroles", "rolebindings",
                                           "clusterrolebindings"};

static void snap_release(snap *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
        rbac_snapshot_free(s->s);
        free(s);
    }
}

/* Every stored object of kind k as a JSON array (a new reference). */
static json_t *list_kind(const api_kind *k)
{
    char prefix[300];
    api_kind_store_resource(k, prefix, sizeof prefix - 1);
    strcat(prefix, "/");
    store_obj **objs = NULL;
    size_t n = 0;
    json_t *arr = json_array();
    if (!arr || store_list(A.st, prefix, NULL, 0, &objs, &n, NULL, NULL) != 0) {
        json_decref(arr);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *d = store_obj_doc(objs[i]);
        if (d) json_array_append_new(arr, d);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return arr;
}

static snap *build(uint64_t gen)
{
    if (!A.st) return NULL; /* (authz_bootstrap not called: everyone but system:masters denied) */
    json_t *l[K_N];
    for (int i = 0; i < K_N; i++)
        l[i] = list_kind(A.kinds[i]);
    snap *s = calloc(1, sizeof *s);
    if (s && l[0] && l[1] && l[2] && l[3])
        s->s = rbac_snapshot_new(l[K_ROLE], l[K_CLUSTERROLE], l[K_ROLEBINDING],
                                 l[K_CLUSTERROLEBINDING]);
    for (int i = 0; i < K_N; i++)
        json_decref(l[i]);
    if (!s || !s->s) {
        free(s);
        return NULL;
    }
    s->gen = gen;
    atomic_init(&s->refs, 1);
    return s;
}

/* The current snapshot (a reference), rebuilt first if an RBAC write
 * committed since it was built; NULL when it cannot be built. */
static snap *acquire(void)
{
    pthread_mutex_lock(&A.mu);
    uint64_t gen = atomic_load(&A.gen);
    if (!A.cur || A.cur->gen != gen) {
        snap *nw = build(gen);
        if (nw) {
            snap_release(A.cur);
            A.cur = nw;
        }
    }
    snap *s = A.cur;
    if (s) atomic_fetch_add(&s->refs, 1);
    pthread_mutex_unlock(&A.mu);
    return s;
}

static int kind_index(const api_kind *k)
{
    for (int i = 0; i < K_N; i++)
        if (k == A.kinds[i]) return i;
    return -1;
}

/* store_observe: an RBAC object published (durable, or taken in from
 * elsewhere) makes the snapshot be built again, from what readers see. */
static void observe(void *arg, const store_event *ev)
{
    (void)arg;
    for (int i = 0; i < K_N; i++)
        if (!strncmp(ev->obj->key, A.prefixes[i], strlen(A.prefixes[i]))) {
            atomic_fetch_add(&A.gen, 1);
            return;
        }
}

int authz_init(void)
{
    for (int i = 0; i < K_N; i++) {
        if (!(A.kinds[i] = api_kind_find(RBAC_GROUP, RBAC_VERSION, resources[i]))) return -1;
        api_kind_store_resource(A.kinds[i], A.prefixes[i], sizeof A.prefixes[i] - 1);
        strcat(A.prefixes[i], "/");
    }
    return 0;
}

void authz_cleanup(void)
{
    pthread_mutex_lock(&A.mu);
    snap_release(A.cur);
    A.cur = NULL;
    pthread_mutex_unlock(&A.mu);
}

/* ---- deciding ---- */

rbac_user authz_user(const req *rq)
{
    rbac_user u = {"", NULL, 0};
    if (rq->user) u = (rbac_user){rq->user->name, rq->user->groups, rq->user->ngroups};
    return u;
}

static bool privileged(const rbac_user *u)
{
    for (size_t i = 0; i < u->ngroups; i++)
        if (!strcmp(u->groups[i], RBAC_SYSTEM_MASTERS)) return true;
    return false;
}

static int forbid(api_err *e, const char *msg, const char *name, const char *group,
                  const char *resource)
{
    api_err_set(e, API_FORBIDDEN, "%s", msg);
    api_err_details(e, name && *name ? name : NULL, group, resource && *resource ? resource : NULL);
    return -1;
}

static void forbidden(resp *rs, const char *msg, const char *name, const char *group,
                      const char *resource)
{
    api_err e;
    api_err_init(&e);
    forbid(&e, msg, name, group, resource);
    resp_err(rs, &e);
    api_err_clear(&e);
}

static int check(const rbac_attrs *a, resp *rs, char *reason, size_t rn)
{
    char why[512] = "";
    if (reason && rn) *reason = 0;
    if (privileged(&a->user)) return 0;
    snap *s = acquire();
    rbac_decision d = s ? rbac_authorize(s->s, a, why, sizeof why) : RBAC_DENY;
    snap_release(s);
    if (reason) snprintf(reason, rn, "%s", why);
    if (d == RBAC_ALLOW) return 0;
    char msg[1400];
    rbac_forbidden_message(a, why, msg, sizeof msg);
    forbidden(rs, msg, a->name, a->api_group, a->resource);
    return -1;
}

int authz_check(const rbac_attrs *a, resp *rs)
{
    return check(a, rs, NULL, 0);
}

int authz_request(req *rq, const rbac_attrs *a, resp *rs)
{
    rq->authz = *a;
    const char *src[5] = {a->ns, a->name, a->subresource, a->api_group, a->resource};
    const char **dst[5] = {&rq->authz.ns, &rq->authz.name, &rq->authz.subresource,
                           &rq->authz.api_group, &rq->authz.resource};
    for (int i = 0; i < 5; i++) {
        snprintf(rq->authz_str[i], sizeof rq->authz_str[i], "%s", src[i] ? src[i] : "");
        *dst[i] = rq->authz_str[i];
    }
    rq->authz_set = true;
    int rc = check(a, rs, rq->reason, sizeof rq->reason);
    rq->decision = rc == 0 ? "allow" : "forbid";
    return rc;
}

void authz_resource_attrs(const req *rq, const api_kind *k, const char *ns, const char *name,
                          const char *sub, bool watch, rbac_attrs *a)
{
    const char *m = rq->method, *verb = "";
    if (!strcmp(m, "GET") || !strcmp(m, "HEAD"))
        verb = watch ? "watch" : *name ? "get" : "list";
    else if (!strcmp(m, "POST"))
        verb = "create";
    else if (!strcmp(m, "PUT"))
        verb = "update";
    else if (!strcmp(m, "PATCH"))
        verb = "patch";
    else if (!strcmp(m, "DELETE"))
        verb = *name ? "delete" : "deletecollection";
    *a = (rbac_attrs){authz_user(rq), verb, true, k->group, k->resource, sub, name, ns, rq->path};
}

int authz_check_write(const req *rq, const api_kind *k, const char *ns, const json_t *obj,
                      api_err *e)
{
    int i = kind_index(k);
    rbac_user u = authz_user(rq);
    if (i < 0 || privileged(&u)) return 0;
    snap *s = acquire();
    if (!s) return api_err_set(e, API_INTERNAL, "authorization is not available");
    char msg[4096];
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    int rc = i == K_ROLE || i == K_CLUSTERROLE
                 ? rbac_check_role_write(s->s, &u, ns, resources[i], obj, msg, sizeof msg)
                 : rbac_check_binding_write(s->s, &u, ns, json_object_get(obj, "roleRef"), msg,
                                            sizeof msg);
    snap_release(s);
    if (rc == 0) return 0;
    char text[4400];
    rbac_forbidden_text(resources[i], RBAC_GROUP, name, msg, text, sizeof text);
    return forbid(e, text, name, RBAC_GROUP, resources[i]);
}

/* ---- the review APIs ---- */

/* attrs from a SubjectAccessReviewSpec for user u; false if it has neither
 * resourceAttributes nor nonResourceAttributes. */
static bool spec_attrs(const json_t *spec, rbac_user u, rbac_attrs *a)
{
    const json_t *ra = json_object_get(spec, "resourceAttributes");
    const json_t *na = json_object_get(spec, "nonResourceAttributes");
    if (json_is_object(ra)) {
        *a = (rbac_attrs){u,
                          jtext(ra, "verb"),
                          true,
                          jtext(ra, "group"),
                          jtext(ra, "resource"),
                          jtext(ra, "subresource"),
                          jtext(ra, "name"),
                          jtext(ra, "namespace"),
                          ""};
        return true;
    }
    if (json_is_object(na)) {
        *a = (rbac_attrs){u, jtext(na, "verb"), false, "", "", "", "", "", jtext(na, "path")};
        return true;
    }
    return false;
}

json_t *authz_review_reply(const json_t *in, const char *group, const char *kind, json_t *status)
{
    json_t *out = json_object();
    json_object_set_new(out, "kind", json_string(kind));
    char av[128];
    snprintf(av, sizeof av, "%s/v1", group);
    json_object_set_new(out, "apiVersion", json_string(av));
    json_t *meta = json_object_get(in, "metadata");
    meta = json_is_object(meta) ? json_copy(meta) : json_object();
    json_object_set_new(meta, "creationTimestamp", json_null());
    json_object_set_new(out, "metadata", meta);
    const json_t *spec = json_object_get(in, "spec");
    json_object_set_new(out, "spec", json_is_object(spec) ? jcopy(spec) : json_object());
    json_object_set_new(out, "status", status);
    return out;
}

static json_t *access_status(const rbac_attrs *a)
{
    char why[512] = "";
    bool ok = privileged(&a->user);
    if (!ok) {
        snap *s = acquire();
        ok = s && rbac_authorize(s->s, a, why, sizeof why) == RBAC_ALLOW;
        snap_release(s);
    }
    json_t *st = json_pack("{s:b}", "allowed", ok);
    if (*why) json_object_set_new(st, "reason", json_string(why));
    return st;
}

static json_t *rules_status(rbac_user u, const char *ns)
{
    snap *s = acquire();
    rbac_rules rules;
    rbac_rules_init(&rules);
    char err[512] = "";
    int rc = s ? rbac_rules_for(s->s, &u, ns, &rules, err, sizeof err) : -1;
    snap_release(s);
    json_t *st = rc == 0 ? rbac_rules_review(&rules, *err ? err : NULL) : NULL;
    rbac_rules_cleanup(&rules);
    return st;
}

/* A SelfSubjectReview's status: the request's user (the impersonated one
 * when it impersonates), extra included. */
static json_t *self_review_status(const auth_user *user)
{
    json_t *groups = json_array(), *extra = json_object();
    for (size_t i = 0; user && i < user->ngroups; i++)
        json_array_append_new(groups, json_string(user->groups[i]));
    for (size_t i = 0; user && i < user->nextra; i++) {
        json_t *values = json_array();
        for (size_t j = 0; j < user->extra[i].nvalues; j++)
            json_array_append_new(values, json_string(user->extra[i].values[j]));
        json_object_set_new(extra, user->extra[i].key, values);
    }
    json_t *info = json_pack("{s:s, s:o}", "username", user ? user->name : "", "groups", groups);
    if (info && user && user->uid && *user->uid) /* (omitempty, as upstream's UserInfo) */
        json_object_set_new(info, "uid", json_string(user->uid));
    if (info && json_object_size(extra)) json_object_set(info, "extra", extra);
    json_decref(extra);
    return info ? json_pack("{s:o}", "userInfo", info) : NULL;
}

/* LocalSubjectAccessReview's checks (its REST Create and
 * ValidateLocalSubjectAccessReview): the object's namespace is the URL's,
 * and so is the one it asks about. 0, or -1 with the error on rs. */
static int local_review_checks(json_t *in, const char *ns, resp *rs)
{
    json_t *meta = json_object_get(in, "metadata");
    const char *ons = jtext(meta, "namespace");
    if (*ons && strcmp(ons, ns)) {
        resp_errf(rs, API_BAD_REQUEST,
                  "the namespace of the provided object does not match the namespace sent on "
                  "the request");
        return -1;
    }
    if (!json_is_object(meta)) json_object_set_new(in, "metadata", meta = json_object());
    json_object_set_new(meta, "namespace", json_string(ns));
    const json_t *spec = json_object_get(in, "spec");
    const char *pre = "LocalSubjectAccessReview.authorization.k8s.io \"\" is invalid: ";
    if (json_is_object(json_object_get(spec, "nonResourceAttributes"))) {
        resp_errf(rs, API_INVALID,
                  "%sspec.nonResourceAttributes: Invalid value: \"object\": disallowed on this "
                  "kind of request",
                  pre);
        return -1;
    }
    const json_t *ra = json_object_get(spec, "resourceAttributes");
    if (json_is_object(ra) && strcmp(jtext(ra, "namespace"), ns)) {
        resp_errf(rs, API_INVALID,
                  "%sspec.resourceAttributes.namespace: Invalid value: \"%s\": must match "
                  "metadata.namespace",
                  pre, jtext(ra, "namespace"));
        return -1;
    }
    return 0;
}

bool authz_serve_review(req *rq, resp *rs, const char *group, const char *version,
                        const char *resource, const char *ns)
{
    bool authn = !strcmp(group, "authentication.k8s.io");
    bool authz = !strcmp(group, "authorization.k8s.io");
    static const char *const kinds[][2] = {
        {"selfsubjectaccessreviews", "SelfSubjectAccessReview"},
        {"subjectaccessreviews", "SubjectAccessReview"},
        {"selfsubjectrulesreviews", "SelfSubjectRulesReview"},
        {"selfsubjectreviews", "SelfSubjectReview"},
        {"localsubjectaccessreviews", "LocalSubjectAccessReview"}};
    int which = -1;
    for (int i = 0; i < 5; i++)
        if (!strcmp(resource, kinds[i][0]) && (i == 3 ? authn : authz)) which = i;
    /* only LocalSubjectAccessReviews are namespaced */
    if (which < 0 || strcmp(version, "v1") || (which == 4) != (ns != NULL)) return false;
    if (strcmp(rq->method, "POST")) {
        resp_errf(rs, API_METHOD_NOT_ALLOWED,
                  "the server does not allow this method on the requested resource");
        return true;
    }
    rbac_attrs self = {authz_user(rq), "create", true, group, resource, "", "",
                       ns ? ns : "",   rq->path};
    if (authz_request(rq, &self, rs) != 0) return true;
    if (rest_refuse_table(rq, rs)) return true; /* a review has no metadata to tabulate */
    json_error_t je;
    api_err e;
    api_err_init(&e);
    json_t *in = NULL;
    if (rq->body && pb_has_magic(rq->body, rq->body_len))
        in = pb_decode(rq->body, rq->body_len, &e);
    else if (rq->body)
        in = json_loadb(rq->body, rq->body_len, 0, &je);
    if (!json_is_object(in)) {
        json_decref(in);
        if (e.message[0])
            resp_err(rs, &e);
        else
            resp_errf(rs, API_BAD_REQUEST, "the body of the request was in an unknown format");
        api_err_clear(&e);
        return true;
    }
    api_err_clear(&e);
    if (which == 4 && local_review_checks(in, ns, rs) != 0) {
        json_decref(in);
        return true;
    }
    const json_t *spec = json_object_get(in, "spec");
    rbac_user u = authz_user(rq);
    const char **groups = NULL;
    json_t *status = NULL;
    rbac_attrs a;
    if (which == 1 || which == 4) { /* the subject named in the spec */
        const json_t *g = json_object_get(spec, "groups");
        groups = calloc(json_array_size(g) + 1, sizeof *groups);
        size_t n = 0;
        for (size_t i = 0; groups && i < json_array_size(g); i++)
            if (json_is_string(json_array_get(g, i)))
                groups[n++] = json_string_value(json_array_get(g, i));
        u = (rbac_user){jtext(spec, "user"), groups, n};
    }
    if (which == 0 || which == 1 || which == 4) {
        if (!spec_attrs(spec, u, &a)) {
            resp_errf(rs, API_INVALID,
                      "%s.authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid "
                      "value: \"null\": exactly one of nonResourceAttributes or "
                      "resourceAttributes must be specified",
                      kinds[which][1]);
            goto done;
        }
        status = access_status(&a);
    } else if (which == 2) {
        status = rules_status(u, jtext(spec, "namespace"));
    } else {
        status = self_review_status(rq->user);
    }
    if (!status) {
        resp_errf(rs, API_INTERNAL, "out of memory");
        goto done;
    }
    resp_json(rs, 201, authz_review_reply(in, group, kinds[which][1], status));
done:
    free(groups);
    json_decref(in);
    return true;
}

/* ---- bootstrap ---- */

static json_t *replace_with(const json_t *cur, void *ctx, api_err *e)
{
    (void)e;
    json_t *nw = jcopy((const json_t *)ctx);
    json_t *m = json_object_get(cur, "metadata");
    if (nw && m) {
        json_object_set_new(json_object_get(nw, "metadata"), "resourceVersion",
                            json_string(jtext(m, "resourceVersion")));
    }
    return nw;
}

/* The object to create for a RECREATE: the reconciled one without what the
 * store assigned to the old one. */
static json_t *fresh_copy(const json_t *obj)
{
    static const char *const assigned[] = {"resourceVersion", "uid", "creationTimestamp",
                                           "managedFields", "generation"};
    json_t *o = jcopy(obj);
    json_t *m = json_object_get(o, "metadata");
    for (size_t i = 0; m && i < sizeof assigned / sizeof *assigned; i++)
        json_object_del(m, assigned[i]);
    return o;
}

/* Create default `d` if missing, else reconcile the stored one with it. */
static int ensure_default(store *st, const json_t *d, api_err *e)
{
    const api_kind *k = api_kind_by_kind(jtext(d, "apiVersion"), jtext(d, "kind"));
    const char *name = jtext(json_object_get(d, "metadata"), "name");
    if (!k) return api_err_set(e, API_INTERNAL, "no kind %s", jtext(d, "kind"));
    json_t *cur = reg_get(st, k, "", name, e), *want = NULL, *out = NULL;
    api_err_clear(e); /* (NotFound) */
    api_err_init(e);
    int r = 0;
    rbac_reconcile_op op = RBAC_RECONCILE_NONE;
    if (!cur)
        r = reg_create(st, k, "", d, false, &out, e);
    else if (!(want = rbac_reconcile(cur, d, &op)) && op == RBAC_RECONCILE_ERROR)
        r = api_err_set(e, API_INTERNAL, "out of memory");
    else if (op == RBAC_RECONCILE_PROTECTED)
        log_msg(LOG_INFO, "skipped reconcile-protected bootstrap RBAC object",
                "\"kind\":\"%s\",\"name\":\"%s\"", jtext(d, "kind"), name);
    else if (op == RBAC_RECONCILE_UPDATE)
        r = reg_update(st, k, "", name, "", replace_with, want, false, &out, e);
    else if (op == RBAC_RECONCILE_RECREATE) {
        reg_delete_opts o = {false, -1, NULL, jtext(json_object_get(cur, "metadata"), "uid"), NULL};
        bool gone = false;
        json_t *fresh = fresh_copy(want);
        r = reg_delete(st, k, "", name, &o, &out, &gone, e);
        json_decref(out);
        out = NULL;
        if (r == 0) r = reg_create(st, k, "", fresh, false, &out, e);
        json_decref(fresh);
    }
    json_decref(out);
    json_decref(want);
    json_decref(cur);
    return r;
}

/* What upstream's clusterrole aggregation controller does, once at start:
 * the stored rules of every aggregated ClusterRole become the union of the
 * roles it selects (authorization reads the union whatever is stored; this
 * is for kubectl get -o yaml). */
static json_t *set_rules(const json_t *cur, void *ctx, api_err *e)
{
    (void)e;
    json_t *o = jcopy(cur);
    if (o) json_object_set(o, "rules", (json_t *)ctx);
    return o;
}

static int sync_aggregated(store *st, api_err *e)
{
    json_t *all = list_kind(A.kinds[K_CLUSTERROLE]);
    if (!all) return api_err_set(e, API_INTERNAL, "cannot list clusterroles");
    size_t i;
    json_t *r;
    int rc = 0;
    json_array_foreach(all, i, r)
    {
        json_t *rules = rbac_aggregate_rules(r, all), *out = NULL;
        if (rules && !json_equal(rules, json_object_get(r, "rules")))
            rc = reg_update(st, A.kinds[K_CLUSTERROLE], "",
                            jtext(json_object_get(r, "metadata"), "name"), "", set_rules, rules,
                            false, &out, e);
        json_decref(out);
        json_decref(rules);
        if (rc != 0) break;
    }
    json_decref(all);
    return rc;
}

int authz_bootstrap(store *st, char *err, size_t n)
{
    A.st = st;
    if (store_observe(st, observe, NULL) != 0) return snprintf(err, n, "too many observers"), -1;
    json_t *defs = rbac_default_objects();
    if (!defs) return snprintf(err, n, "out of memory"), -1;
    size_t i;
    json_t *d;
    int rc = 0;
    api_err e;
    json_array_foreach(defs, i, d)
    {
        api_err_init(&e);
        if (ensure_default(st, d, &e) != 0 && rc == 0) {
            snprintf(err, n, "%s %s: %s", jtext(d, "kind"),
                     jtext(json_object_get(d, "metadata"), "name"), e.message);
            rc = -1;
        }
        api_err_clear(&e);
    }
    json_decref(defs);
    api_err_init(&e);
    if (rc == 0 && sync_aggregated(st, &e) != 0) {
        snprintf(err, n, "aggregated clusterroles: %s", e.message);
        rc = -1;
    }
    api_err_clear(&e);
    return rc;
}
