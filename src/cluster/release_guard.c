/* release_guard.c - a claim's release recorded on its quota first (see
 * release_guard.h). */
#include "cluster/release_guard.h"

#include "cluster/quota_rw.h"
#include "core/jdump.h"
#include "core/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POOL_GROUP "capsule.clastix.io"
#define TRIES 5

static const json_t *at(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);
    return b ? json_object_get(v, b) : v;
}

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    const char *s = json_string_value(at(o, a, b));
    return s ? s : "";
}

/* Whether stored claim c holds its amounts in its pool (bound, as the
 * registry's books say: a pool named, not exhausted). */
static bool bound(const json_t *c, const char **pool)
{
    const json_t *st = json_object_get(c, "status");
    *pool = str_at(json_object_get(st, "pool"), "name", NULL);
    if (!**pool) return false;
    size_t i;
    json_t *cond;
    json_array_foreach(json_object_get(st, "conditions"), i, cond)
    {
        if (!strcmp(str_at(cond, "type", NULL), "Exhausted"))
            return !strcmp(str_at(cond, "status", NULL), "False");
    }
    return false;
}

/* What a write of old -> nw gives back: all of old's claim for a delete,
 * the parts that shrink for an update. NULL when out of memory or unreadable. */
static rlist *given(const json_t *old, const json_t *nw)
{
    rlist *was = quota_rw_list(old, "spec", "claim");
    if (!nw || !was) return was;
    rlist *now = quota_rw_list(nw, "spec", "claim");
    rlist *g = now ? rl_subtract_nonneg(was, now) : NULL, *pos = g ? rl_remove_zeros(g) : NULL;
    rl_free(was);
    rl_free(now);
    rl_free(g);
    return pos;
}

static int forbid(api_err *e, const char *name, const char *msg)
{
    api_err_set(e, API_FORBIDDEN, "resourcepoolclaims." POOL_GROUP " \"%s\" is forbidden: %s", name,
                msg);
    api_err_details(e, name, POOL_GROUP, "resourcepoolclaims");
    return -1;
}

/* The quota with hard `hard` and a hold for claim uid recorded: the claim's
 * amounts as they were (`from`), what is given, until when. */
static char *with_hold(json_t *rq, const rlist *hard, const char *uid, const json_t *from,
                       const rlist *give)
{
    json_t *meta = json_object_get(rq, "metadata"), *ann = json_object_get(meta, "annotations");
    if (!json_is_object(ann)) {
        ann = json_object();
        json_object_set_new(meta, "annotations", ann);
    }
    json_t *hold = json_pack("{s:I, s:O, s:o}", "expires", (json_int_t)time(NULL) + RELEASE_HOLD_S,
                             "from", from ? from : json_null(), "give", rl_to_json(give));
    char *text = hold ? jdump(hold, NULL) : NULL, key[128];
    json_decref(hold);
    snprintf(key, sizeof key, RELEASE_HOLD_PREFIX "%s", uid);
    json_t *h = rl_to_json(hard);
    if (!text || !h || json_object_set_new(ann, key, json_string(text)) != 0 ||
        json_object_set_new(json_object_get(rq, "spec"), "hard", h) != 0) {
        free(text);
        return NULL;
    }
    free(text);
    json_object_del(meta, "managedFields");
    return jdump(rq, NULL);
}

/* hard (a resource list object in q at a/b) less give's resources, where
 * it has them (clamped at 0); 0, 1 when q has no such list (nothing to
 * lower), or -1. */
static int lower(json_t *q, const char *a, const char *b, const rlist *give)
{
    json_t *at_obj = json_object_get(q, a);
    if (!json_is_object(json_object_get(at_obj, b))) return 1;
    rlist *h = quota_rw_list(at_obj, b, NULL), *g = h ? rl_mask(give, h) : NULL;
    rlist *nh = g ? rl_subtract_nonneg(h, g) : NULL;
    int rc = nh && json_is_object(at_obj) ? json_object_set_new(at_obj, b, rl_to_json(nh)) : -1;
    rl_free(h);
    rl_free(g);
    rl_free(nh);
    return rc;
}

int release_guard(kube_client *kc, const ar_request *r, api_err *e)
{
    if (r->dry_run || strcmp(r->resource.group, POOL_GROUP) ||
        strcmp(r->resource.name, "resourcepoolclaims") || *r->sub_resource ||
        (r->op != AR_DELETE && r->op != AR_UPDATE) || !r->old_object)
        return 0;
    const char *pool, *uid = str_at(r->old_object, "metadata", "uid");
    if (!bound(r->old_object, &pool) || !*uid) return 0;
    rlist *give = given(r->old_object, r->op == AR_UPDATE ? r->object : NULL);
    if (!give) return api_err_set(e, API_INTERNAL, "cannot read the claim's amounts");
    if (rl_is_zero(give)) {
        rl_free(give);
        return 0;
    }
    char path[600], spath[620];
    quota_rw_path(r->namespace_, pool, false, path, sizeof path);
    quota_rw_path(r->namespace_, pool, true, spath, sizeof spath);
    /* 1. What the cluster's quota admission enforces is status.hard, at
     * the version whose status.used it charges pods to: lowered there
     * first, with that version as precondition, once what is used fits
     * without the claim. A pod charged in between conflicts. */
    int rc = -1;
    json_t *now = NULL;
    for (int i = 0; i < TRIES && rc != 0; i++) {
        json_t *rq = NULL;
        char *msg = NULL;
        api_err_clear(e);
        api_err_init(e);
        long status = quota_rw_get(kc, path, &rq, e);
        if (status == 404) { /* nothing handed out to take back */
            rl_free(give);
            return 0;
        }
        if (status != 200) {
            if (status > 0) api_err_set(e, API_INTERNAL, "cannot read the namespace's quota");
            json_decref(rq);
            break;
        }
        rlist *hard = quota_rw_list(rq, "spec", "hard"),
              *used = quota_rw_list(rq, "status", "used");
        rlist *nh = NULL;
        int d = hard && used ? pool_release_hard(hard, used, give, pool, &nh, &msg) : POOL_ENOMEM;
        rl_free(nh);
        rl_free(hard);
        rl_free(used);
        if (d == POOL_DENIED) {
            forbid(e, r->name, msg);
            free(msg);
            json_decref(rq);
            break;
        }
        free(msg);
        int l = d == POOL_OK ? lower(rq, "status", "hard", give) : -1;
        if (l < 0) {
            api_err_set(e, API_INTERNAL, "cannot read the namespace's quota");
            json_decref(rq);
            break;
        }
        if (l == 1) {
            /* Not yet synced by the quota controller: its admission
             * charges nothing to it until it is, and syncs from the spec. */
            now = rq;
            rc = 0;
            break;
        }
        status = quota_rw_put(kc, spath, rq, &now);
        json_decref(rq);
        if (now) {
            rc = 0;
        } else if (status == 409) {
            api_err_set(e, API_CONFLICT,
                        "the namespace's quota changed while the claim was released; try again");
        } else {
            api_err_set(e, API_INTERNAL, "cannot record the claim's release (HTTP %ld)", status);
            break;
        }
    }
    /* 2. Its spec.hard (what the quota controller copies into status.hard
     * when the spec changes) lowered too, with the hold that keeps the
     * pool writer from handing the amount back while the delete is in
     * flight. No usage check: status.hard enforces the lower limit
     * already. */
    for (int i = 0; rc == 0 && i < TRIES; i++) {
        if (!now) {
            long st = quota_rw_get(kc, path, &now, e);
            if (st != 200) {
                json_decref(now);
                now = NULL;
                rc = -1;
                if (st > 0) api_err_set(e, API_INTERNAL, "cannot read the namespace's quota");
                break;
            }
        }
        rlist *hard = quota_rw_list(now, "spec", "hard");
        rlist *g = hard ? rl_mask(give, hard) : NULL, *nh = g ? rl_subtract_nonneg(hard, g) : NULL;
        char *body = nh ? with_hold(now, nh, uid, at(r->old_object, "spec", "claim"), give) : NULL;
        rl_free(hard);
        rl_free(g);
        rl_free(nh);
        json_decref(now);
        now = NULL;
        if (!body) {
            rc = api_err_set(e, API_INTERNAL, "out of memory");
            break;
        }
        char err[256], *resp = NULL;
        long status = 0;
        int t = kube_request(kc, "PUT", path, body, NULL, QUOTA_RW_TIMEOUT_MS, &status, &resp, err,
                             sizeof err);
        free(body);
        free(resp);
        if (t == 0 && status >= 200 && status <= 299) break;
        if (t != 0 || status != 409 || i + 1 == TRIES) {
            /* The enforced limit is lowered; the claim stays (the write is
             * refused), and the quota controller restores status.hard
             * from the spec at its next sync: a conservative leftover. */
            rc = api_err_set(e, API_INTERNAL, "cannot record the claim's release (HTTP %ld)",
                             status);
        }
    }
    json_decref(now);
    rl_free(give);
    return rc;
}

rlist *release_holds(store *st, const json_t *cur, int64_t now)
{
    rlist *held = rl_new();
    const char *ns = str_at(cur, "metadata", "namespace");
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(at(cur, "metadata", NULL), "annotations"), key, v)
    {
        if (!held) break;
        if (strncmp(key, RELEASE_HOLD_PREFIX, strlen(RELEASE_HOLD_PREFIX))) continue;
        const char *uid = key + strlen(RELEASE_HOLD_PREFIX);
        json_t *hold = json_loads(json_string_value(v) ? json_string_value(v) : "", 0, NULL);
        json_int_t expires = json_integer_value(json_object_get(hold, "expires"));
        bool active = hold && now < expires;
        if (active) {
            /* Still in flight only while the claim is there as it was: once
             * the cluster shows it gone or changed, the books have it. */
            char prefix[600];
            snprintf(prefix, sizeof prefix, "resourcepoolclaims." POOL_GROUP "/%s/", ns);
            store_obj **cs = NULL;
            size_t n = 0;
            int64_t rev;
            bool more, found = false;
            if (store_list(st, prefix, NULL, 0, &cs, &n, &rev, &more) == 0) {
                for (size_t i = 0; i < n; i++) {
                    json_t *c = found ? NULL : store_obj_parse(cs[i]);
                    if (c && !strcmp(str_at(c, "metadata", "uid"), uid)) {
                        found = json_equal(at(c, "spec", "claim"), json_object_get(hold, "from"));
                    }
                    json_decref(c);
                    store_obj_unref(cs[i]);
                }
                free(cs);
            }
            active = found;
        }
        rlist *g = active ? quota_rw_list(hold, "give", NULL) : NULL;
        if (g && rl_add_to(held, g) != 0) {
            rl_free(held);
            held = NULL;
        }
        rl_free(g);
        json_decref(hold);
    }
    return held;
}
