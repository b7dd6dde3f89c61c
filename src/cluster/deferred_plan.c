/* deferred_plan.c - the leader's recount of deferred quota books (see
 * deferred_plan.h). */
#include "cluster/deferred_plan.h"

#include "api/kinds.h"
#include "cluster/cq_guard.h"
#include "core/deferred_book.h"
#include "core/jget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct settle_ctx {
    store *st;
    mirror *m;
    bool (*gone)(void *arg, const json_t *r);
    void *gone_arg;
} settle_ctx;

/* Whether the mirror shows reservation r settled: its pod bound (the
 * recount counts it, or, terminal, has released it), or its pod gone
 * (another uid, or none) once the mirror has taken in every pod change up
 * to the version the bind was decided on: it held the pod then, so its
 * absence is a delete, which releases. */
static bool settled(void *arg, const json_t *r)
{
    settle_ctx *c = arg;
    if (!jstr(r, "name") || !jstr(r, "uid")) return true; /* not one of allot's */
    json_t *pod = mirror_core_obj(c->st, "pods", jtext(r, "namespace"), jtext(r, "name"));
    bool same = pod && !strcmp(jtext(pod, "metadata", "uid"), jtext(r, "uid"));
    bool out = same ? *jtext(pod, "spec", "nodeName") != '\0'
                    : mirror_rv_value(jtext(r, "from")) &&
                          mirror_progress(c->m, "pods") >= mirror_rv_value(jtext(r, "from"));
    json_decref(pod);
    return out;
}

static bool expired_gone(void *arg, const json_t *r)
{
    settle_ctx *c = arg;
    return !c->gone || c->gone(c->gone_arg, r);
}

/* The mirror's pods of namespace ns, parsed, with their cluster
 * resourceVersions: 0 or -1. */
static int pods_of(store *st, mirror *m, const char *ns, json_t ***pods, uint64_t **versions,
                   size_t *n)
{
    const api_kind *k = api_kind_find("", "v1", "pods");
    char prefix[400], crv[64];
    store_obj **objs = NULL;
    int64_t rev;
    bool more;
    *pods = NULL;
    *versions = NULL;
    *n = 0;
    if (!k || api_kind_key(k, ns, "", prefix, sizeof prefix) < 0 ||
        store_list(st, prefix, NULL, 0, &objs, n, &rev, &more) != 0)
        return -1;
    int rc = 0;
    *pods = *n ? calloc(*n, sizeof **pods) : NULL;
    *versions = *n ? calloc(*n, sizeof **versions) : NULL;
    if (*n && (!*pods || !*versions)) rc = -1;
    for (size_t i = 0; i < *n; i++) {
        if (rc == 0 && !((*pods)[i] = store_obj_parse(objs[i]))) rc = -1;
        if (rc == 0 && mirror_cluster_rv(m, objs[i]->key, crv, sizeof crv))
            (*versions)[i] = mirror_rv_value(crv);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return rc;
}

static void pods_free(json_t **pods, uint64_t *versions, size_t n)
{
    for (size_t i = 0; pods && i < n; i++)
        json_decref(pods[i]);
    free(pods);
    free(versions);
}

/* Record in freed[namespace][quota] the room quota cur has left by book
 * nb: 0 or -1. */
static int room_of(json_t *freed, const json_t *cur, const dq_book *nb)
{
    const char *ns = jtext(cur, "metadata", "namespace");
    json_t *rooms = json_object_get(freed, ns);
    if (!rooms && json_object_set_new(freed, ns, rooms = json_object()) != 0) return -1;
    rlist *room = dq_room(nb->hard, nb, (int64_t)time(NULL));
    json_t *j = room ? rl_to_json(room) : NULL;
    rl_free(room);
    return j && json_object_set_new(rooms, jtext(cur, "metadata", "name"), j) == 0 ? 0 : -1;
}

/* The write for one quota (cur, under key in the mirror), if its book
 * differs from what it holds: 0 or -1. */
static int plan_one(store *st, mirror *m, settle_ctx *sc, const char *key, const json_t *cur,
                    cw_list *out, json_t *freed)
{
    rlist *hard = rl_new(), *used = rl_new();
    dq_book b = {0}, nb = {0};
    json_t **pods = NULL;
    uint64_t *versions = NULL, through = 0;
    size_t n = 0;
    char crv[64], err[256], through_s[32];
    int rc = hard && used ? 0 : -1;
    /* nothing deferred, or a book this mirror has not caught up with */
    if (rc || dq_hard(cur, hard) != 0 || !rl_len(hard) || dq_book_read(cur, &b) != 0 ||
        mirror_progress(m, "pods") < mirror_rv_value(b.through) ||
        !mirror_cluster_rv(m, key, crv, sizeof crv))
        goto done;
    rc = pods_of(st, m, jtext(cur, "metadata", "namespace"), &pods, &versions, &n);
    if (rc == 0) {
        /* dq_recount reads versions from the objects: the mirror's are its
         * own, so the cluster's are put in their place */
        for (size_t i = 0; i < n; i++) {
            snprintf(through_s, sizeof through_s, "%llu", (unsigned long long)versions[i]);
            json_object_set_new(json_object_get(pods[i], "metadata"), "resourceVersion",
                                json_string(through_s));
        }
        rc = dq_recount(cur, hard, pods, n, (int64_t)time(NULL), used, &through, err, sizeof err) ==
                     0
                 ? 0
                 : 1; /* (a bad scope: nothing to write) */
    }
    json_t *holder =
        rc == 0 ? json_pack("{s:{s:O}}", "status", "reservations", b.reservations) : NULL;
    json_t *kept =
        holder ? cq_reservations_kept(holder, (int64_t)time(NULL), settled, expired_gone, sc)
               : NULL;
    json_decref(holder);
    if (rc == 0 && !kept) rc = -1;
    if (rc == 0) {
        nb.used = used;
        nb.hard = hard;
        nb.reservations = kept;
        if (through) snprintf(nb.through, sizeof nb.through, "%llu", (unsigned long long)through);
        bool same = rl_equal(b.used, used) && b.hard && rl_equal(b.hard, hard) &&
                    json_equal(b.reservations, kept) && !strcmp(b.through, nb.through);
        /* More room than the book it replaces left (a limit raised, a pod
         * gone, a reservation released): waiting pods may fit now. */
        if (freed) {
            int64_t now = (int64_t)time(NULL);
            rlist *was = dq_room(b.hard ? b.hard : hard, &b, now), *is = dq_room(hard, &nb, now);
            bool frees = false;
            for (size_t i = 0; was && is && i < rl_len(is); i++) {
                const qty *w = rl_get(was, rl_name(is, i));
                if (!w || qty_cmp(rl_qty(is, i), w) > 0) frees = true;
            }
            if (!was || !is) rc = -1;
            rl_free(was);
            rl_free(is);
            if (rc == 0 && frees) rc = room_of(freed, cur, &nb);
        }
        char *text = same ? NULL : dq_book_text(&nb);
        json_t *obj = text ? json_deep_copy(cur) : NULL;
        json_t *meta = json_object_get(obj, "metadata");
        json_t *ann = json_object_get(meta, "annotations");
        if (!same) {
            cluster_write *w = text && json_is_object(ann) ? cw_list_add(out) : NULL;
            const api_kind *k = api_kind_find("", "v1", "resourcequotas");
            json_object_set_new(ann, DQ_BOOK_ANNOTATION, json_string(text ? text : ""));
            if (!w || !k) {
                rc = -1;
            } else {
                snprintf(w->method, sizeof w->method, "PUT");
                snprintf(w->key, sizeof w->key, "%s", key);
                api_kind_path(k, jtext(cur, "metadata", "namespace"),
                              jtext(cur, "metadata", "name"), "status", w->path, sizeof w->path);
                if (!(w->body = cw_body(k, obj, crv))) {
                    out->n--;
                    rc = -1;
                }
            }
        }
        free(text);
        json_decref(obj);
        nb.used = nb.hard = NULL; /* (used, hard and kept are freed below) */
        nb.reservations = NULL;
    }
    json_decref(kept);
done:
    pods_free(pods, versions, n);
    dq_book_free(&b);
    rl_free(hard);
    rl_free(used);
    return rc < 0 ? -1 : 0;
}

int reconcile_dq_plan(store *st, mirror *m, bool (*gone)(void *arg, const json_t *reservation),
                      void *gone_arg, cw_list *out, json_t *freed)
{
    const api_kind *k = api_kind_find("", "v1", "resourcequotas");
    char prefix[64];
    store_obj **objs = NULL;
    size_t n = 0;
    int64_t rev;
    bool more;
    if (!k) return -1;
    api_kind_store_resource(k, prefix, sizeof prefix - 1);
    strcat(prefix, "/");
    if (store_list(st, prefix, NULL, 0, &objs, &n, &rev, &more) != 0) return -1;
    settle_ctx sc = {st, m, gone, gone_arg};
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *cur = rc == 0 ? store_obj_parse(objs[i]) : NULL;
        /* (only quotas with deferred limits: most have none, and cost a
         * lookup of one annotation) */
        if (cur && jstr(cur, "metadata", "annotations", DQ_HARD_ANNOTATION))
            rc = plan_one(st, m, &sc, objs[i]->key, cur, out, freed);
        json_decref(cur);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return rc;
}

/* A pod waiting on deferred quota, for the order of wake-ups. */
typedef struct waiting {
    int64_t priority;
    char created[40];
    char name[256];
} waiting;

/* Higher priority first, then older, then by name. */
static int waiting_cmp(const void *a, const void *b)
{
    const waiting *x = a, *y = b;
    if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
    int c = strcmp(x->created, y->created);
    return c ? c : strcmp(x->name, y->name);
}

/* Whether pod waits on quota: unbound, not being deleted, and marked by
 * the scheduler as not scheduled: Unschedulable (a quota's message, or
 * any: the quota may be what holds it) or SchedulerError (a bind allot
 * refused: kube-scheduler parks it with the unschedulable pods). */
static bool waits(const json_t *pod)
{
    if (*jtext(pod, "spec", "nodeName") || jget(pod, "metadata", "deletionTimestamp")) return false;
    size_t i;
    const json_t *c;
    json_array_foreach(jget(pod, "status", "conditions"), i, c)
    {
        if (!strcmp(jtext(c, "type"), "PodScheduled") && !strcmp(jtext(c, "status"), "False") &&
            (!strcmp(jtext(c, "reason"), "Unschedulable") ||
             !strcmp(jtext(c, "reason"), "SchedulerError")))
            return true;
    }
    return false;
}

/* A quota of the wake-up: the mirror's object, its deferred limits and
 * the room it has left. */
typedef struct wake_quota {
    json_t *rq;
    rlist *hard, *room;
} wake_quota;

/* Whether pod's charge fits in every quota's room (taken from it when it
 * does): 1, 0, or -1. */
static int fits(wake_quota *q, size_t n, const json_t *pod)
{
    rlist *want = rl_new();
    char err[256];
    int rc = want ? 1 : -1;
    for (size_t i = 0; rc == 1 && i < n; i++) {
        if (dq_pod_charge(q[i].rq, q[i].hard, pod, want, err, sizeof err) != 0)
            rc = 0; /* (a bad scope: the scheduler's filter says why) */
        else if (rl_len(want))
            rc = dq_take(q[i].room, want);
    }
    rl_free(want);
    return rc;
}

int reconcile_dq_wake(store *st, mirror *m, const char *ns, const json_t *rooms, size_t max,
                      int64_t stamp, cw_list *out)
{
    json_t **pods = NULL;
    uint64_t *versions = NULL;
    size_t n = 0, nw = 0;
    if (pods_of(st, m, ns, &pods, &versions, &n) != 0) {
        pods_free(pods, versions, n);
        return -1;
    }
    waiting *w = n ? calloc(n, sizeof *w) : NULL;
    int rc = n && !w ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!waits(pods[i])) continue;
        w[nw].priority = json_integer_value(jget(pods[i], "spec", "priority"));
        snprintf(w[nw].created, sizeof w[nw].created, "%s",
                 jtext(pods[i], "metadata", "creationTimestamp"));
        snprintf(w[nw].name, sizeof w[nw].name, "%s", jtext(pods[i], "metadata", "name"));
        nw++;
    }
    if (nw) qsort(w, nw, sizeof *w, waiting_cmp);
    /* the quotas that freed, with their room */
    size_t nq = 0;
    wake_quota *q = calloc(json_object_size(rooms) + 1, sizeof *q);
    const char *qname;
    json_t *qroom;
    if (!q) rc = -1;
    json_object_foreach((json_t *)rooms, qname, qroom)
    {
        if (rc) break;
        q[nq].rq = mirror_core_obj(st, "resourcequotas", ns, qname);
        q[nq].hard = rl_new();
        q[nq].room = rl_new();
        if (!q[nq].hard || !q[nq].room || rl_from_json(qroom, q[nq].room, NULL) != 0)
            rc = -1;
        else if (q[nq].rq && dq_hard(q[nq].rq, q[nq].hard) != 0)
            rl_clear(q[nq].hard);
        nq++;
    }
    const api_kind *k = api_kind_find("", "v1", "pods");
    char value[32];
    snprintf(value, sizeof value, "%lld", (long long)stamp);
    for (size_t i = 0; rc == 0 && k && i < nw && i < max; i++) {
        /* as many as the room takes, in the queue's order: the first that
         * does not fit ends it (a later, smaller one would jump it) */
        json_t *pod = mirror_core_obj(st, "pods", ns, w[i].name);
        int f = pod ? fits(q, nq, pod) : 0;
        json_decref(pod);
        if (f < 0) rc = -1;
        if (f <= 0) break;
        cluster_write *cw = cw_list_add(out);
        json_t *patch =
            json_pack("{s:{s:{s:s}}}", "metadata", "annotations", DQ_WAKE_ANNOTATION, value);
        if (!cw || !patch) {
            json_decref(patch);
            rc = -1;
            break;
        }
        snprintf(cw->method, sizeof cw->method, "PATCH");
        api_kind_path(k, ns, w[i].name, "", cw->path, sizeof cw->path);
        api_kind_key(k, ns, w[i].name, cw->key, sizeof cw->key);
        cw->body = json_dumps(patch, JSON_COMPACT);
        json_decref(patch);
        if (!cw->body) {
            out->n--;
            rc = -1;
        }
    }
    for (size_t i = 0; q && i < nq; i++) {
        json_decref(q[i].rq);
        rl_free(q[i].hard);
        rl_free(q[i].room);
    }
    free(q);
    free(w);
    pods_free(pods, versions, n);
    return rc;
}
