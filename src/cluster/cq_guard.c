/* cq_guard.c - custom quota increases reserved on the quota first (see
 * cq_guard.h). */
#include "cluster/cq_guard.h"

#include "api/kinds.h"
#include "core/cquota.h"
#include "core/jdump.h"
#include "core/quota_check.h"
#include "registry/cq_books.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRIES 5
#define REQUEST_TIMEOUT_MS 3000

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    const char *s = json_string_value(json_object_get(json_object_get(o, a), b));
    return s ? s : "";
}

/* One quota that may count the object. */
typedef struct cand {
    bool global;
    char name[256];
    qty limit; /* from the mirror's spec: the order only */
} cand;

/* Capsule's order: smallest limit first, global before namespaced on a
 * tie, then by name. */
static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    int c = qty_cmp(&x->limit, &y->limit);
    if (!c) c = (int)y->global - (int)x->global;
    return c ? c : strcmp(x->name, y->name);
}

/* The quota's compiled spec, when it counts kind gvk at all and (global)
 * covers a namespace labelled `labels`; NULL otherwise. */
static cq_quota *counting(const json_t *quota, bool global, const ar_gvn *gvk, const json_t *labels)
{
    char err[256];
    cq_quota *q = cq_compile(json_object_get(quota, "spec"), global, err, sizeof err);
    if (q && (!cq_targets(q, gvk->group, gvk->version, gvk->name) ||
              (global && !cq_all_namespaces(q) && !cq_selects_namespace(q, labels)))) {
        cq_free(q);
        q = NULL;
    }
    return q;
}

/* What the write adds to quota q's total: the object's net contribution
 * now less before (0 when it does not grow); *usage its claim now. -1 when
 * it cannot be computed. */
static int increase(const cq_quota *q, const ar_request *r, qty *add, qty *usage)
{
    bool matched, problem;
    qty net, was = qty_zero(QTY_DECIMAL_SI), u;
    char err[256];
    *add = qty_zero(QTY_DECIMAL_SI);
    if (cq_object_usage(q, r->kind.group, r->kind.version, r->kind.name, r->object, NULL, &matched,
                        usage, &net, &problem, err, sizeof err) != 0)
        return -1;
    if (!matched) return 0;
    if (r->old_object) {
        bool m2;
        qty n2;
        if (cq_object_usage(q, r->kind.group, r->kind.version, r->kind.name, r->old_object, NULL,
                            &m2, &u, &n2, &problem, err, sizeof err) != 0)
            return -1;
        if (m2) was = n2;
    }
    if (qty_cmp(&net, &was) <= 0) return 0;
    *add = net;
    return qty_sub(add, &was) == 0 ? 0 : -1;
}

/* The quota's API path (status: its status subresource). */
static void quota_path(const cand *c, const char *ns, bool status, char *buf, size_t n)
{
    if (c->global)
        snprintf(buf, n, "/apis/" CQ_GROUP "/" CQ_VERSION "/globalcustomquotas/%s%s", c->name,
                 status ? "/status" : "");
    else
        snprintf(buf, n, "/apis/" CQ_GROUP "/" CQ_VERSION "/namespaces/%s/customquotas/%s%s", ns,
                 c->name, status ? "/status" : "");
}

static const char *ns_of(const ar_request *r)
{
    return r->namespace_;
}

/* The object's resource as reservations name it: "<plural>[.<group>]". */
static void resource_of(const ar_request *r, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s", r->resource.name, *r->resource.group ? "." : "", r->resource.group);
}

/* Reserve `add` on quota c for r, at the version read: 0, 1 (a conflict:
 * try again), or -1 with e (denied, or the API server cannot be asked). */
static int reserve_once(kube_client *kc, const cand *c, const ar_request *r, const json_t *labels,
                        api_err *e)
{
    char path[700], spath[720], err[256] = "", *resp = NULL;
    long status = 0;
    quota_path(c, ns_of(r), false, path, sizeof path);
    quota_path(c, ns_of(r), true, spath, sizeof spath);
    if (kube_request(kc, "GET", path, NULL, NULL, REQUEST_TIMEOUT_MS, &status, &resp, err,
                     sizeof err) != 0)
        return api_err_set(e, API_INTERNAL, "cannot read %s %s: %s",
                           c->global ? "GlobalCustomQuota" : "CustomQuota", c->name, err);
    json_t *quota = status == 200 ? json_loads(resp ? resp : "", 0, NULL) : NULL;
    free(resp);
    if (status == 404) return 0; /* gone: it counts nothing any more */
    if (!quota)
        return api_err_set(e, API_INTERNAL, "cannot read %s %s (HTTP %ld)",
                           c->global ? "GlobalCustomQuota" : "CustomQuota", c->name, status);
    int rc = 0;
    /* (the spec as the API server holds it now: it may have changed) */
    cq_quota *q = counting(quota, c->global, &r->kind, labels);
    qty add, usage;
    if (!q || increase(q, r, &add, &usage) != 0 || qty_sign(&add) <= 0) {
        cq_free(q);
        json_decref(quota);
        return 0;
    }
    /* Capsule's formula: used + reserved (in flight, another object's) +
     * this increase <= limit */
    json_t *st = json_object_get(quota, "status");
    qty used = qty_zero(QTY_DECIMAL_SI), reserved = qty_zero(QTY_DECIMAL_SI), one;
    if (qty_from_json(json_object_get(json_object_get(st, "usage"), "used"), &one) == 0) used = one;
    const char *uid = str_at(r->object, "metadata", "uid");
    json_t *keep = json_array(), *v;
    size_t i;
    int64_t now = (int64_t)time(NULL);
    /* (an earlier reservation of this object, its create's say, stays: it
     * covers what this one does not, until the mirror shows it counted) */
    json_array_foreach(json_object_get(st, "reservations"), i, v)
    {
        if (json_integer_value(json_object_get(v, "expires")) > now &&
            qty_from_json(json_object_get(v, "usage"), &one) == 0)
            qty_add(&reserved, &one);
        json_array_append(keep, v);
    }
    qty after = used;
    if (qty_add(&after, &reserved) != 0 || qty_add(&after, &add) != 0) rc = -1;
    if (rc == 0 && qty_cmp(&after, cq_limit(q)) > 0) {
        char msg[800];
        cq_exceeds_text(msg, sizeof msg, r->op == AR_CREATE, c->global, c->name, &usage, &after,
                        cq_limit(q), &reserved);
        api_err_set(e, API_FORBIDDEN, "%s \"%s\" is forbidden: %s", r->resource.name,
                    str_at(r->object, "metadata", "name"), msg);
        api_err_details(e, str_at(r->object, "metadata", "name"), r->resource.group,
                        r->resource.name);
        rc = -1;
    } else if (rc == 0 && !r->dry_run) {
        char res[300];
        resource_of(r, res, sizeof res);
        const char *from =
            r->op == AR_UPDATE ? str_at(r->old_object, "metadata", "resourceVersion") : "";
        json_t *mine =
            json_pack("{s:s, s:s, s:s, s:s, s:o, s:I}", "uid", uid, "namespace", ns_of(r), "name",
                      str_at(r->object, "metadata", "name"), "resource", res, "usage",
                      qty_to_json(&add), "expires", (json_int_t)(now + CQ_RESERVE_S));
        /* (absent for a create: the 1.20 API server refuses "" in a custom
         * resource, kubernetes#99804) */
        if (mine && *from) json_object_set_new(mine, "from", json_string(from));
        if (!st) json_object_set_new(quota, "status", st = json_object());
        if (!mine || json_array_append_new(keep, mine) != 0 ||
            json_object_set(st, "reservations", keep) != 0) {
            rc = api_err_set(e, API_INTERNAL, "out of memory");
        } else {
            json_object_del(json_object_get(quota, "metadata"), "managedFields");
            char *body = jdump(quota, NULL);
            resp = NULL;
            status = 0;
            if (!body || kube_request(kc, "PUT", spath, body, NULL, REQUEST_TIMEOUT_MS, &status,
                                      &resp, err, sizeof err) != 0)
                status = 0;
            free(body);
            json_t *why = status > 299 && resp ? json_loads(resp, 0, NULL) : NULL;
            free(resp);
            if (status == 409)
                rc = 1;
            else if (status < 200 || status > 299)
                rc = api_err_set(e, API_INTERNAL,
                                 "cannot record the reservation on %s %s (HTTP %ld): %s",
                                 c->global ? "GlobalCustomQuota" : "CustomQuota", c->name, status,
                                 json_string_value(json_object_get(why, "message"))
                                     ? json_string_value(json_object_get(why, "message"))
                                     : err);
            json_decref(why);
        }
    } else if (rc != 0) {
        rc = api_err_set(e, API_FORBIDDEN, "custom quota usage beyond supported precision");
    }
    json_decref(keep);
    cq_free(q);
    json_decref(quota);
    return rc;
}

/* The namespace of r as the mirror holds it (a new object), or NULL. */
static json_t *namespace_of(store *st, const ar_request *r)
{
    const api_kind *nsk = api_kind_find("", "v1", "namespaces");
    char key[400];
    json_t *nso = NULL;
    if (nsk && api_kind_key(nsk, "", ns_of(r), key, sizeof key) >= 0) {
        store_obj *o = store_get(st, key);
        nso = o ? store_obj_parse(o) : NULL;
        store_obj_unref(o);
    }
    return nso;
}

/* The quotas of the mirror that may count r's object in a namespace
 * labelled `labels`, in Capsule's order, into *out (caller frees); -1 when
 * out of memory. */
static int candidates(store *st, const ar_request *r, const json_t *labels, cand **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    char prefix[400];
    int rc = 0;
    for (int g = 0; rc == 0 && g < 2; g++) {
        if (g)
            snprintf(prefix, sizeof prefix, "%s", GCQ_PREFIX);
        else
            snprintf(prefix, sizeof prefix, "%s%s/", CQ_PREFIX, ns_of(r));
        store_obj **objs = NULL;
        size_t m = 0;
        int64_t rev;
        bool more;
        if (store_list(st, prefix, NULL, 0, &objs, &m, &rev, &more) != 0) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < m; i++) {
            json_t *quota = rc == 0 ? store_obj_parse(objs[i]) : NULL;
            cq_quota *q = quota ? counting(quota, g, &r->kind, labels) : NULL;
            if (q) {
                cand *v = realloc(*out, (*n + 1) * sizeof *v);
                if (!v) {
                    rc = -1;
                } else {
                    *out = v;
                    v[*n] = (cand){.global = g, .limit = *cq_limit(q)};
                    snprintf(v[*n].name, sizeof v[*n].name, "%s", objs[i]->name);
                    (*n)++;
                }
            }
            cq_free(q);
            json_decref(quota);
            store_obj_unref(objs[i]);
        }
        free(objs);
    }
    if (rc == 0 && *n > 1) qsort(*out, *n, sizeof **out, cand_cmp);
    return rc;
}

/* The cluster's own quota admission runs after the validating webhooks:
 * a create allowed and reserved here can still be refused there, and its
 * reservation would then hold the custom quota until it expired
 * (CQ_RESERVE_S). So a create the namespace's ResourceQuotas, as the
 * mirror holds them, will refuse is refused here first, with upstream's
 * text (core/quota_check.h), and reserves nothing. A mirror a moment
 * behind errs either way for that moment: a create refused here that the
 * cluster would have let in after a delete, or one let through that the
 * cluster refuses (its reservation then waits out its expiry, as before).
 * 0 (the quotas fit it, or cannot say), or -1 with e (403). */
static int cluster_quota_refuses(store *st, const ar_request *r, api_err *e)
{
    if (r->op != AR_CREATE) return 0;
    const api_kind *rqk = api_kind_find("", "v1", "resourcequotas");
    char prefix[400];
    if (!rqk || api_kind_key(rqk, ns_of(r), "", prefix, sizeof prefix) < 0) return 0;
    store_obj **objs = NULL;
    size_t n = 0;
    int64_t rev;
    bool more;
    if (store_list(st, prefix, NULL, 0, &objs, &n, &rev, &more) != 0) return 0;
    json_t *quotas = json_array();
    for (size_t i = 0; i < n; i++) {
        if (quotas && json_array_append_new(quotas, store_obj_parse(objs[i])) != 0)
            json_decref(quotas), quotas = NULL;
        store_obj_unref(objs[i]);
    }
    free(objs);
    int rc = 0;
    quota_result res;
    quota_request rq = {.namespace_ = ns_of(r),
                        .group = r->resource.group,
                        .resource = r->resource.name,
                        .subresource = r->sub_resource,
                        .op = QUOTA_CREATE,
                        .obj = r->object,
                        .quotas = quotas,
                        .now = (int64_t)time(NULL)};
    if (n && quotas && quota_check(&rq, &res) == 0) {
        if (!res.allowed && res.code == 403) {
            const char *name = str_at(r->object, "metadata", "name");
            api_err_set(e, API_FORBIDDEN, "%s \"%s\" is forbidden: %s", r->resource.name,
                        name ? name : "", res.message ? res.message : "exceeded quota");
            api_err_details(e, name, r->resource.group, r->resource.name);
            rc = -1;
        }
        quota_result_cleanup(&res);
    }
    json_decref(quotas);
    return rc;
}

int cq_guard(kube_client *kc, store *st, const ar_request *r, api_err *e)
{
    /* Capsule's rules: a status update is never refused, a delete never
     * (it releases, once the recount sees it) */
    if ((r->op != AR_CREATE && r->op != AR_UPDATE) || *r->sub_resource || !*r->namespace_ ||
        !r->object || !strcmp(r->resource.group, CQ_GROUP) ||
        !strcmp(r->resource.name, "namespaces"))
        return 0;
    cand *c = NULL;
    size_t n = 0;
    json_t *nso = namespace_of(st, r);
    const json_t *labels = json_object_get(json_object_get(nso, "metadata"), "labels");
    if (candidates(st, r, labels, &c, &n) != 0) {
        free(c);
        json_decref(nso);
        return api_err_set(e, API_INTERNAL, "out of memory");
    }
    int rc = n && !r->dry_run ? cluster_quota_refuses(st, r, e) : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int t = 1;
        for (int k = 0; t == 1 && k < TRIES; k++)
            t = reserve_once(kc, &c[i], r, labels, e);
        if (t == 1)
            rc = api_err_set(e, API_CONFLICT,
                             "%s %s kept changing while the write was reserved; try again",
                             c[i].global ? "GlobalCustomQuota" : "CustomQuota", c[i].name);
        else
            rc = t;
    }
    free(c);
    json_decref(nso);
    return rc;
}

json_t *cq_reservations_kept(const json_t *cur, int64_t now,
                             bool (*settled)(void *arg, const json_t *reservation),
                             bool (*gone)(void *arg, const json_t *reservation), void *arg)
{
    json_t *keep = json_array(), *v;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(cur, "status"), "reservations"), i, v)
    {
        if (!keep) break;
        if (settled(arg, v)) continue;
        if (json_integer_value(json_object_get(v, "expires")) <= now && gone(arg, v)) continue;
        if (json_array_append(keep, v) != 0) {
            json_decref(keep);
            keep = NULL;
        }
    }
    return keep;
}

bool cq_reservation_gone(kube_client *kc, const json_t *r)
{
    const char *res = json_string_value(json_object_get(r, "resource"));
    const char *ns = json_string_value(json_object_get(r, "namespace"));
    const char *name = json_string_value(json_object_get(r, "name"));
    const char *uid = json_string_value(json_object_get(r, "uid"));
    char key[700], path[800], err[256], *resp = NULL;
    if (!res || !name || !uid) return true; /* not one of allot's: holds nothing */
    snprintf(key, sizeof key, "%s/%s/%s", res, ns ? ns : "", name);
    const api_kind *k = api_kind_for_key(key);
    if (!k) return true; /* a kind allot no longer serves: nothing counts it */
    if (api_kind_path(k, k->namespaced && ns ? ns : "", name, "", path, sizeof path) < 0)
        return false;
    long status = 0;
    if (kube_request(kc, "GET", path, NULL, NULL, REQUEST_TIMEOUT_MS, &status, &resp, err,
                     sizeof err) != 0)
        status = 0;
    json_t *obj = status == 200 && resp ? json_loads(resp, 0, NULL) : NULL;
    free(resp);
    /* gone: no such object, another of that name, or (an update) the
     * object still at the version the update was decided on, which an
     * update past its expiry will never leave */
    const char *have = str_at(obj, "metadata", "uid"),
               *rv = str_at(obj, "metadata", "resourceVersion");
    const char *from = json_string_value(json_object_get(r, "from"));
    bool out = status == 404 || (status == 200 && *have && strcmp(have, uid)) ||
               (status == 200 && from && *from && !strcmp(rv, from));
    json_decref(obj);
    return out;
}
