/* extender.c - kube-scheduler's extender: deferred quota checked at
 * filter, charged at bind (cluster/extender.h). */
#include "cluster/extender.h"

#include "api/kinds.h"
#include "api/status.h"
#include "cluster/mirror.h"
#include "core/dbuf.h"
#include "core/deferred_book.h"
#include "core/jdump.h"
#include "core/jget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Compare-and-swap attempts of one bind (kube-scheduler binds many pods
 * at once, all on the same quota) */
#define TRIES 20
#define REQUEST_TIMEOUT_MS 3000
#define MSG_MAX 4096

/* A member of an extender argument: Go's encoding/json writes the field's
 * name ("Pod") and reads any case; lower case is accepted too. */
static const json_t *arg(const json_t *o, const char *name)
{
    const json_t *v = json_object_get(o, name);
    if (!v) {
        char low[64];
        snprintf(low, sizeof low, "%s", name);
        low[0] = (char)(low[0] - 'A' + 'a');
        v = json_object_get(o, low);
    }
    return v;
}

/* The mirror's ResourceQuotas of namespace ns (*out: caller unrefs each
 * and frees): 0 or -1. */
static int quotas_of(store *st, const char *ns, store_obj ***out, size_t *n)
{
    const api_kind *k = api_kind_find("", "v1", "resourcequotas");
    char prefix[400];
    int64_t rev;
    bool more;
    *out = NULL;
    *n = 0;
    if (!k || api_kind_key(k, ns, "", prefix, sizeof prefix) < 0) return -1;
    return store_list(st, prefix, NULL, 0, out, n, &rev, &more);
}

static void unref_all(store_obj **objs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        store_obj_unref(objs[i]);
    free(objs);
}

/* Whether quota rq's deferred limits take `pod` now, the book as rq holds
 * it: 0 fits (want = the charge), 1 exceeds (msg), -1 (msg: why). */
static int decide(const json_t *rq, const json_t *pod, rlist *want, int64_t now, dbuf *msg)
{
    rlist *hard = rl_new();
    dq_book b = {0};
    char err[256] = "out of memory";
    int rc = hard ? 0 : -1;
    if (rc == 0 && dq_hard(rq, hard) != 0) {
        rc = -1;
        snprintf(err, sizeof err, "%s: annotation %s is not a resource list",
                 jtext(rq, "metadata", "name"), DQ_HARD_ANNOTATION);
    }
    if (rc == 0 && dq_pod_charge(rq, hard, pod, want, err, sizeof err) != 0) rc = -1;
    if (rc == 0 && rl_len(want)) {
        if (dq_book_read(rq, &b) != 0) {
            rc = -1;
            snprintf(err, sizeof err, "%s: annotation %s is malformed",
                     jtext(rq, "metadata", "name"), DQ_BOOK_ANNOTATION);
        } else {
            rc = dq_check(jtext(rq, "metadata", "name"), hard, &b, want,
                          jtext(pod, "metadata", "uid"), now, msg);
        }
    }
    if (rc < 0) dbuf_adds(msg, err);
    dq_book_free(&b);
    rl_free(hard);
    return rc;
}

static int bad_request(const char *what, char **out)
{
    api_err e;
    api_err_init(&e);
    api_err_set(&e, API_BAD_REQUEST, "%s", what);
    json_t *st = api_err_status(&e);
    *out = st ? json_dumps(st, JSON_COMPACT) : NULL;
    json_decref(st);
    api_err_clear(&e);
    return 400;
}

/* GET path into *obj (new reference): the HTTP status, or 0 with err. */
static long get_json(kube_client *kc, const char *path, json_t **obj, char *err, size_t errlen)
{
    char *resp = NULL;
    long status = 0;
    *obj = NULL;
    if (kube_request(kc, "GET", path, NULL, NULL, REQUEST_TIMEOUT_MS, &status, &resp, err,
                     errlen) != 0)
        return 0;
    if (status == 200 && !(*obj = json_loads(resp ? resp : "", 0, NULL))) {
        snprintf(err, errlen, "an unreadable answer to GET %s", path);
        status = 0;
    }
    free(resp);
    return status;
}

int extender_filter(kube_client *kc, store *st, const char *body, size_t len, char **out)
{
    *out = NULL;
    json_t *args = json_loadb(body ? body : "", len, 0, NULL);
    const json_t *pod = arg(args, "Pod"), *names = arg(args, "NodeNames"),
                 *nodes = arg(args, "Nodes");
    if (!json_is_object(pod)) {
        json_decref(args);
        return bad_request("ExtenderArgs.Pod: Required value", out);
    }
    const char *ns = jtext(pod, "metadata", "namespace");
    json_t *nso = mirror_core_obj(st, "namespaces", "", ns);
    dbuf msg;
    dbuf_init(&msg, MSG_MAX);
    int verdict = 0;
    if (dq_ns_deferred(nso)) {
        store_obj **qs = NULL;
        size_t n = 0;
        if (quotas_of(st, ns, &qs, &n) != 0) {
            verdict = -1;
            dbuf_adds(&msg, "cannot list the namespace's quotas");
        }
        rlist *want = rl_new();
        if (!want) verdict = -1;
        for (size_t i = 0; verdict == 0 && i < n; i++) {
            json_t *rq = store_obj_parse(qs[i]);
            verdict = rq ? decide(rq, pod, want, (int64_t)time(NULL), &msg) : -1;
            json_decref(rq);
            /* A refusal is read again from the cluster: the mirror may not
             * have the book the leader just wrote (a wake-up right after
             * room freed), and a pod refused waits for the next one. */
            char path[700], err[256];
            if (verdict == 1 &&
                api_kind_path(api_kind_for_key(qs[i]->key), ns, qs[i]->name, "", path,
                              sizeof path) >= 0 &&
                get_json(kc, path, &rq, err, sizeof err) == 200) {
                dbuf_free(&msg);
                dbuf_init(&msg, MSG_MAX);
                verdict = decide(rq, pod, want, (int64_t)time(NULL), &msg);
                json_decref(rq);
            }
        }
        rl_free(want);
        unref_all(qs, n);
    }
    json_decref(nso);
    /* ExtenderFilterResult: what passes, and why each other node fails */
    json_t *res = json_object(), *failed = json_object(), *pass = json_array();
    size_t i;
    json_t *v;
    json_array_foreach((json_t *)names, i, v)
    {
        if (verdict == 1)
            json_object_set_new(failed, json_string_value(v), json_string(msg.p ? msg.p : ""));
        else
            json_array_append(pass, v);
    }
    json_t *items = json_array();
    json_array_foreach(json_object_get(nodes, "items"), i, v)
    {
        const char *name = jtext(v, "metadata", "name");
        if (verdict == 1)
            json_object_set_new(failed, name, json_string(msg.p ? msg.p : ""));
        else
            json_array_append(items, v);
    }
    if (res && failed && pass && items) {
        if (json_is_array(names)) json_object_set(res, "NodeNames", pass);
        if (json_is_object(nodes))
            json_object_set_new(res, "Nodes", json_pack("{s:O}", "items", items));
        json_object_set(res, "FailedNodes", failed);
        json_object_set_new(res, "Error", json_string(verdict < 0 && msg.p ? msg.p : ""));
        *out = json_dumps(res, JSON_COMPACT);
    }
    json_decref(items);
    json_decref(pass);
    json_decref(failed);
    json_decref(res);
    json_decref(args);
    dbuf_free(&msg);
    return *out ? 200 : 500;
}

/* Reserve pod's charge on quota `name` of its namespace, by
 * compare-and-swap: 0 (reserved, or nothing to charge), 1 (a conflict
 * each time: try again), -1 with msg (exceeded, or the cluster cannot be
 * asked). */
static int reserve(kube_client *kc, const char *name, const json_t *pod, dbuf *msg)
{
    const api_kind *k = api_kind_find("", "v1", "resourcequotas");
    char path[700], spath[720], err[256] = "";
    const char *ns = jtext(pod, "metadata", "namespace");
    /* Written through the status subresource, whose update keeps the
     * object's metadata: a write of the quota itself would go through
     * allot's own mutating webhook on quotas, a call back into this
     * server while one of its workers waits here. */
    if (!k || api_kind_path(k, ns, name, "", path, sizeof path) < 0 ||
        api_kind_path(k, ns, name, "status", spath, sizeof spath) < 0)
        return -1;
    for (int t = 0; t < TRIES; t++) {
        json_t *rq = NULL;
        long status = get_json(kc, path, &rq, err, sizeof err);
        if (status == 404) return 0; /* gone: it limits nothing any more */
        if (status != 200) {
            dbuf_printf(msg, "cannot read ResourceQuota %s: %s", name,
                        status ? "unexpected status" : err);
            return -1;
        }
        rlist *want = rl_new();
        int64_t now = (int64_t)time(NULL);
        int rc = want ? decide(rq, pod, want, now, msg) : -1;
        if (rc == 0 && rl_len(want)) {
            dq_book b;
            char *text = NULL, *body = NULL, *resp = NULL;
            rc = dq_book_read(rq, &b) == 0 && dq_reserve(&b, pod, want, now) == 0 &&
                         (text = dq_book_text(&b))
                     ? 0
                     : -1;
            json_t *meta = json_object_get(rq, "metadata");
            json_t *ann = json_object_get(meta, "annotations");
            if (!json_is_object(ann)) json_object_set_new(meta, "annotations", ann = json_object());
            json_object_del(meta, "managedFields");
            if (rc == 0 && json_is_object(ann) &&
                json_object_set_new(ann, DQ_BOOK_ANNOTATION, json_string(text)) == 0)
                body = jdump(rq, NULL);
            free(text);
            dq_book_free(&b);
            status = 0;
            if (!body || kube_request(kc, "PUT", spath, body, NULL, REQUEST_TIMEOUT_MS, &status,
                                      &resp, err, sizeof err) != 0)
                status = 0;
            free(body);
            free(resp);
            if (status == 409) {
                rc = 1;
            } else if (status < 200 || status > 299) {
                dbuf_printf(msg, "cannot record the bind on ResourceQuota %s (HTTP %ld)%s%s", name,
                            status, *err ? ": " : "", err);
                rc = -1;
            }
        } else if (rc > 0) {
            rc = -1; /* exceeded: msg says which */
        }
        rl_free(want);
        json_decref(rq);
        if (rc != 1) return rc;
    }
    dbuf_printf(msg, "ResourceQuota %s kept changing while the bind was recorded; try again", name);
    return -1;
}

/* POST the pod's binding to node: 0, or -1 with msg. */
static int bind_pod(kube_client *kc, const json_t *pod, const char *node, dbuf *msg)
{
    const api_kind *k = api_kind_find("", "v1", "pods");
    const char *ns = jtext(pod, "metadata", "namespace"), *name = jtext(pod, "metadata", "name");
    char path[700], err[256] = "", *resp = NULL;
    long status = 0;
    if (!k || api_kind_path(k, ns, name, "binding", path, sizeof path) < 0) return -1;
    json_t *b = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}}", "apiVersion", "v1",
                          "kind", "Binding", "metadata", "name", name, "namespace", ns, "uid",
                          jtext(pod, "metadata", "uid"), "target", "apiVersion", "v1", "kind",
                          "Node", "name", node);
    char *body = b ? jdump(b, NULL) : NULL;
    json_decref(b);
    if (!body || kube_request(kc, "POST", path, body, NULL, REQUEST_TIMEOUT_MS, &status, &resp, err,
                              sizeof err) != 0)
        status = 0;
    free(body);
    json_t *why = status > 299 && resp ? json_loads(resp, 0, NULL) : NULL;
    free(resp);
    int rc = status >= 200 && status <= 299 ? 0 : -1;
    if (rc)
        dbuf_printf(msg, "cannot bind pod %s/%s to %s (HTTP %ld): %s", ns, name, node, status,
                    jstr(why, "message") ? jstr(why, "message") : err);
    json_decref(why);
    return rc;
}

int extender_bind(kube_client *kc, store *st, const char *body, size_t len, char **out)
{
    *out = NULL;
    json_t *args = json_loadb(body ? body : "", len, 0, NULL);
    const char *name = json_string_value(arg(args, "PodName")),
               *ns = json_string_value(arg(args, "PodNamespace")),
               *uid = json_string_value(arg(args, "PodUID")),
               *node = json_string_value(arg(args, "Node"));
    if (!name || !*name || !ns || !*ns || !node || !*node) {
        json_decref(args);
        return bad_request("ExtenderBindingArgs: PodName, PodNamespace and Node are required", out);
    }
    dbuf msg;
    dbuf_init(&msg, MSG_MAX);
    const api_kind *pk = api_kind_find("", "v1", "pods");
    char path[700], err[256] = "";
    json_t *pod = NULL;
    int rc = pk && api_kind_path(pk, ns, name, "", path, sizeof path) >= 0 ? 0 : -1;
    long status = rc == 0 ? get_json(kc, path, &pod, err, sizeof err) : 0;
    if (status != 200) {
        dbuf_printf(&msg, "cannot read pod %s/%s: %s", ns, name,
                    status == 404 ? "not found"
                    : status      ? "unexpected status"
                                  : err);
        rc = -1;
    } else if (uid && *uid && strcmp(uid, jtext(pod, "metadata", "uid"))) {
        dbuf_printf(&msg, "pod %s/%s is not the pod %s any more", ns, name, uid);
        rc = -1;
    } else if (*jtext(pod, "spec", "nodeName")) {
        dbuf_printf(&msg, "pod %s/%s is already bound to %s", ns, name,
                    jtext(pod, "spec", "nodeName"));
        rc = -1;
    }
    /* the quotas first, every one recorded before the pod is bound */
    json_t *nso = rc == 0 ? mirror_core_obj(st, "namespaces", "", ns) : NULL;
    if (rc == 0 && dq_ns_deferred(nso)) {
        store_obj **qs = NULL;
        size_t n = 0;
        if (quotas_of(st, ns, &qs, &n) != 0) {
            dbuf_adds(&msg, "cannot list the namespace's quotas");
            rc = -1;
        }
        for (size_t i = 0; rc == 0 && i < n; i++) {
            json_t *rq = store_obj_parse(qs[i]);
            rlist *hard = rl_new();
            /* (only the quotas that defer something are asked again) */
            bool defers = rq && hard && dq_hard(rq, hard) == 0 && rl_len(hard);
            json_decref(rq);
            rl_free(hard);
            if (defers) rc = reserve(kc, qs[i]->name, pod, &msg);
        }
        unref_all(qs, n);
    }
    json_decref(nso);
    if (rc == 0) rc = bind_pod(kc, pod, node, &msg);
    json_t *res = json_pack("{s:s}", "Error", rc == 0 || !msg.p ? "" : msg.p);
    *out = res ? json_dumps(res, JSON_COMPACT) : NULL;
    json_decref(res);
    json_decref(pod);
    json_decref(args);
    dbuf_free(&msg);
    return *out ? 200 : 500;
}

bool dq_reservation_gone(kube_client *kc, const json_t *r)
{
    const api_kind *k = api_kind_find("", "v1", "pods");
    const char *ns = jstr(r, "namespace"), *name = jstr(r, "name"), *uid = jstr(r, "uid");
    char path[700], err[256];
    if (!ns || !name || !uid) return true; /* not one of allot's: holds nothing */
    if (!k || api_kind_path(k, ns, name, "", path, sizeof path) < 0) return false;
    json_t *pod = NULL;
    long status = get_json(kc, path, &pod, err, sizeof err);
    bool gone = status == 404 || (status == 200 && (strcmp(jtext(pod, "metadata", "uid"), uid) ||
                                                    !*jtext(pod, "spec", "nodeName")));
    json_decref(pod);
    return gone;
}
