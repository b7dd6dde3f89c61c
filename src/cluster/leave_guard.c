/* leave_guard.c - a namespace's way out of a pool frozen first (see
 * leave_guard.h). */
#include "cluster/leave_guard.h"

#include "api/kinds.h"
#include "cluster/quota_rw.h"
#include "core/jdump.h"
#include "registry/pool_books.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRIES 5
/* How long a review waits for the mirror to show the frozen quota: the
 * watch delivers it in milliseconds; beyond this the review is refused
 * (retryable) rather than decided on an older view. */
#define MIRROR_WAIT_MS 3000

static const json_t *labels_of(const json_t *o)
{
    return json_object_get(json_object_get(o, "metadata"), "labels");
}

/* Label sets equal, an absent or null set being the empty one. */
static bool same_labels(const json_t *a, const json_t *b)
{
    size_t na = json_is_object(a) ? json_object_size(a) : 0;
    size_t nb = json_is_object(b) ? json_object_size(b) : 0;
    return (!na && !nb) || json_equal(a, b);
}

/* The names of the pools in the mirror that select namespace `old` but not
 * `nw` (a new array; caller owns), or NULL when out of memory. */
static json_t *pools_left(store *st, const json_t *old, const json_t *nw)
{
    store_obj **objs = NULL;
    size_t n = 0;
    int64_t rev;
    bool more;
    json_t *out = json_array();
    if (!out || store_list(st, PB_POOLS_PREFIX, NULL, 0, &objs, &n, &rev, &more) != 0) {
        json_decref(out);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *p = out ? store_obj_parse(objs[i]) : NULL;
        if (p && pb_selects_ns(p, old) && !pb_selects_ns(p, nw) &&
            json_array_append_new(out, json_string(objs[i]->name)) != 0) {
            json_decref(out);
            out = NULL;
        }
        json_decref(p);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return out;
}

static const char *ns_of(const ar_request *r)
{
    if (*r->name) return r->name;
    const char *n =
        json_string_value(json_object_get(json_object_get(r->object, "metadata"), "name"));
    return n ? n : "";
}

static const char *rv_of(const json_t *o)
{
    const char *v =
        json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
    return v ? v : "";
}

/* rq with its spec.hard capped at cap and the hold recorded for the
 * namespace at cluster version `from`; 0 or -1. */
static int with_hold(json_t *rq, const rlist *cap, const char *from)
{
    json_t *meta = json_object_get(rq, "metadata"), *ann = json_object_get(meta, "annotations");
    if (!json_is_object(ann)) {
        ann = json_object();
        if (json_object_set_new(meta, "annotations", ann) != 0) return -1;
    }
    rlist *sh = quota_rw_list(rq, "spec", "hard"), *nh = sh ? quota_rw_min(sh, cap) : NULL;
    json_t *hold = json_pack("{s:I, s:s, s:o}", "expires", (json_int_t)time(NULL) + LEAVE_HOLD_S,
                             "namespaceVersion", from, "cap", rl_to_json(cap));
    char *text = hold ? jdump(hold, NULL) : NULL;
    int rc =
        nh && text &&
                json_object_set_new(json_object_get(rq, "spec"), "hard", rl_to_json(nh)) == 0 &&
                json_object_set_new(ann, LEAVE_HOLD_KEY, json_string(text)) == 0
            ? 0
            : -1;
    free(text);
    json_decref(hold);
    rl_free(sh);
    rl_free(nh);
    return rc;
}

/* Freeze namespace ns's quota of pool `pool` (leave_guard.h): 1 with the
 * resourceVersion written in crv, 0 when there is nothing to freeze (no
 * such quota, or one quota admission charges nothing to yet: no
 * status.hard), or -1 with e. */
static int freeze(kube_client *kc, const char *ns, const char *pool, const char *from, char *crv,
                  size_t n, api_err *e)
{
    char path[600], spath[620];
    quota_rw_path(ns, pool, false, path, sizeof path);
    quota_rw_path(ns, pool, true, spath, sizeof spath);
    for (int i = 0; i < TRIES; i++) {
        json_t *rq = NULL, *now = NULL;
        api_err_clear(e);
        api_err_init(e);
        long status = quota_rw_get(kc, path, &rq, e);
        if (status == 404) return 0;
        if (status != 200) {
            json_decref(rq);
            if (status > 0) api_err_set(e, API_INTERNAL, "cannot read the namespace's quota");
            return -1;
        }
        json_t *sh = json_object_get(json_object_get(rq, "status"), "hard");
        if (!json_is_object(sh) || !json_object_size(sh)) {
            json_decref(rq);
            return 0;
        }
        /* 1. status.hard down to status.used, at the version that used was
         * read at: a pod charged in between conflicts */
        rlist *hard = quota_rw_list(rq, "status", "hard"),
              *used = quota_rw_list(rq, "status", "used");
        rlist *cap = hard && used ? quota_rw_min(hard, used) : NULL;
        int rc = cap ? 0 : -1;
        if (rc == 0 && !rl_equal(hard, cap)) {
            json_t *st = json_object_get(rq, "status");
            rc = json_object_set_new(st, "hard", rl_to_json(cap));
            if (rc == 0) {
                status = quota_rw_put(kc, spath, rq, &now);
                json_decref(rq);
                rq = now;
                now = NULL;
                if (!rq) rc = status == 409 ? 1 : -1;
            }
        }
        /* 2. spec.hard the same, with the hold, at the version just
         * written: the quota controller may have restored status.hard from
         * the old spec in between, which conflicts here */
        if (rc == 0 && with_hold(rq, cap, from) != 0) rc = -1;
        if (rc == 0) {
            status = quota_rw_put(kc, path, rq, &now);
            const char *v = json_string_value(
                json_object_get(json_object_get(now, "metadata"), "resourceVersion"));
            if (now && v)
                snprintf(crv, n, "%s", v);
            else
                rc = status == 409 ? 1 : -1;
        }
        rl_free(hard);
        rl_free(used);
        rl_free(cap);
        json_decref(rq);
        json_decref(now);
        if (rc == 0) return 1;
        if (rc < 0)
            return api_err_set(e, API_INTERNAL,
                               "cannot freeze the namespace's quota of resourcepool %s (HTTP %ld)",
                               pool, status);
    }
    return api_err_set(e, API_CONFLICT,
                       "the namespace's quota of resourcepool %s kept changing while it left the "
                       "pool; try again",
                       pool);
}

int leave_guard(kube_client *kc, store *st, mirror *m, const ar_request *r, api_err *e)
{
    if (r->dry_run || *r->resource.group || strcmp(r->resource.name, "namespaces") ||
        *r->sub_resource || r->op != AR_UPDATE || !r->old_object || !r->object ||
        same_labels(labels_of(r->old_object), labels_of(r->object)))
        return 0;
    json_t *left = pools_left(st, r->old_object, r->object);
    if (!left) return api_err_set(e, API_INTERNAL, "out of memory");
    const api_kind *rqk = api_kind_find("", "v1", "resourcequotas");
    const char *ns = ns_of(r);
    int rc = 0;
    size_t i;
    json_t *p;
    json_array_foreach(left, i, p)
    {
        char crv[64] = "", name[300], key[700];
        int f = freeze(kc, ns, json_string_value(p), rv_of(r->old_object), crv, sizeof crv, e);
        if (f < 0) {
            rc = -1;
            break;
        }
        if (f == 0) continue;
        rc = 1;
        snprintf(name, sizeof name, "capsule-pool-%s", json_string_value(p));
        if (!rqk || api_kind_key(rqk, ns, name, key, sizeof key) < 0 ||
            !mirror_wait_crv(m, key, crv, MIRROR_WAIT_MS)) {
            rc = api_err_set(e, API_UNAVAILABLE,
                             "allot has not seen the namespace's frozen quota yet; try again");
            break;
        }
    }
    json_decref(left);
    if (rc < 0) leave_guard_undo(kc, st, r);
    return rc;
}

void leave_guard_undo(kube_client *kc, store *st, const ar_request *r)
{
    json_t *left = pools_left(st, r->old_object, r->object);
    const char *ns = ns_of(r);
    size_t i;
    json_t *p;
    json_array_foreach(left, i, p)
    {
        char path[600];
        json_t *rq = NULL, *now = NULL;
        api_err e;
        api_err_init(&e);
        quota_rw_path(ns, json_string_value(p), false, path, sizeof path);
        if (quota_rw_get(kc, path, &rq, &e) == 200) {
            json_t *ann = json_object_get(json_object_get(rq, "metadata"), "annotations");
            const char *text = json_string_value(json_object_get(ann, LEAVE_HOLD_KEY));
            json_t *hold = text ? json_loads(text, 0, NULL) : NULL;
            /* only a hold made for this version of the namespace (this
             * relabel's); at the version read, so nothing written since
             * is undone */
            const char *from = json_string_value(json_object_get(hold, "namespaceVersion"));
            if (from && !strcmp(from, rv_of(r->old_object)) &&
                json_object_del(ann, LEAVE_HOLD_KEY) == 0)
                quota_rw_put(kc, path, rq, &now);
            json_decref(hold);
        }
        json_decref(rq);
        json_decref(now);
        api_err_clear(&e);
    }
    json_decref(left);
}

int leave_hold_cap(mirror *m, const json_t *q, int64_t now, rlist **cap)
{
    *cap = NULL;
    const json_t *meta = json_object_get(q, "metadata");
    const char *text =
        json_string_value(json_object_get(json_object_get(meta, "annotations"), LEAVE_HOLD_KEY));
    json_t *hold = text ? json_loads(text, 0, NULL) : NULL;
    if (!hold) return 0; /* none, or not readable: holds nothing */
    bool active = now < json_integer_value(json_object_get(hold, "expires"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *from = json_string_value(json_object_get(hold, "namespaceVersion"));
    const api_kind *nsk = api_kind_find("", "v1", "namespaces");
    char key[400], crv[64];
    /* In flight only while the mirror holds the namespace at the version
     * the relabel was decided on: the API server commits an update only at
     * the version its admission saw (a conflict runs admission again), so
     * once that version is gone the relabel has committed or never will.
     * (Labels alone would not do: relabelled out and back, they match.) */
    if (active)
        active = ns && from && nsk && api_kind_key(nsk, "", ns, key, sizeof key) >= 0 &&
                 mirror_cluster_rv(m, key, crv, sizeof crv) && !strcmp(crv, from);
    int rc = 0;
    if (active && !(*cap = quota_rw_list(hold, "cap", NULL))) rc = -1;
    json_decref(hold);
    return rc;
}
