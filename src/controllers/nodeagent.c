/* nodeagent.c - a stand-in kubelet for the nodes allotd stores.
 *
 * Without a kubelet a bound pod would never run or finish, so its quota would
 * never be released. The agent gives bound pods a lifecycle:
 *  - bound to a stored node and Pending -> Running (containers ready) at once;
 *  - spec.activeDeadlineSeconds elapsed since start -> Failed, DeadlineExceeded;
 *  - annotation allot.dev/run-duration (Go duration) elapsed -> Succeeded;
 *    a pod a Job controls (run to completion) without the annotation runs
 *    for the agent's job_run_ms (--node-agent-job-run-duration), so what
 *    `kubectl create job|cronjob` makes completes;
 *  - deletionTimestamp set on a bound pod -> the pod is "stopped" and removed.
 * Every change goes through the registry (status subresource or delete), so
 * quota accounting sees the terminal transition and releases compute usage.
 *
 * One thread: follows pod and node events through one store watch, keeps at
 * most one pending action per pod (key -> action, due time) and runs due
 * actions after each batch of events. A pod event is parsed only when the
 * pod is bound (its spec.nodeName index field says so without a parse). All
 * pods are looked at again when a node is added (pods bound to it before it
 * existed), when the watch falls behind, and every CTRL_RESYNC_SECONDS (a
 * safety net: an action that failed is tried again after RETRY_MS). The
 * rescan parses every bound pod: with tens of thousands of pods it is the
 * agent's dearest work, so it is rare.
 */
#include "controllers/nodeagent.h"
#include "core/jdump.h"

#include "api/objects.h"
#include "controllers/controllers.h"
#include "core/jget.h"
#include "core/strmap.h"
#include "registry/registry.h"
#include "util/log.h"
#include "util/clock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RESCAN_MS (CTRL_RESYNC_SECONDS * 1000)
#define WAIT_MAX_MS 60000 /* longest sleep (the rescan and due actions come sooner) */
#define BATCH_EVENTS 1024 /* events taken before the due actions run */
#define RETRY_MS                                                                                   \
    10000 /* a failed action is tried again this much later (the kubelet                           \
           * syncs a pod's status every 10 s) */
#define RUN_DURATION_ANNOTATION "allot.dev/run-duration"

typedef enum { ACT_NONE, ACT_START, ACT_SUCCEED, ACT_FAIL, ACT_FINALIZE } action;

typedef struct entry {
    char *key;
    char uid[64];
    action act;
    int64_t due_ms; /* monotonic */
} entry;

struct node_agent {
    store *st;
    int64_t job_run_ms; /* a Job's pod without the annotation; 0: no default */
    pthread_t thread;
    atomic_bool stop;
    strmap *entries;  /* key -> entry* */
    int64_t next_due; /* no entry is due before this (monotonic ms; may be early) */
    bool rescan_due;  /* a node was added: look at every pod again */
};

/* Go's time.ParseDuration for the units a run time needs: h, m, s, ms. */
int64_t nodeagent_parse_duration_ms(const char *s)
{
    double total = 0;
    if (!s || !*s) return -1;
    while (*s) {
        char *end;
        double v = strtod(s, &end);
        if (end == s || v < 0) return -1;
        if (!strncmp(end, "ms", 2)) {
            total += v;
            s = end + 2;
        } else if (*end == 'h' || *end == 'm' || *end == 's') {
            total += v * (*end == 'h' ? 3600e3 : *end == 'm' ? 60e3 : 1e3);
            s = end + 1;
        } else {
            return -1;
        }
    }
    return (int64_t)total;
}

/* RFC 3339 UTC seconds to Unix seconds; -1 if malformed. */
static int64_t parse_ts(const char *s)
{
    struct tm tm = {0};
    if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) return -1;
    return (int64_t)timegm(&tm);
}

static bool node_exists(store *st, const char *node)
{
    char key[320];
    snprintf(key, sizeof key, "nodes//%s", node);
    store_obj *o = store_get(st, key);
    store_obj_unref(o);
    return o != NULL;
}

/* Whether a Job controls the pod (its controller ownerReference). */
static bool job_controlled(const json_t *pod)
{
    size_t i;
    json_t *ref;
    json_array_foreach(json_object_get(json_object_get(pod, "metadata"), "ownerReferences"), i, ref)
    {
        const char *av = jtext(ref, "apiVersion");
        if (json_is_true(json_object_get(ref, "controller")) &&
            !strcmp(jtext(ref, "kind"), "Job") && !strncmp(av, "batch/", 6))
            return true;
    }
    return false;
}

/* How long the pod runs before it succeeds: its annotation, else the
 * default for a Job's pods; -1 for a pod that runs until stopped. */
static int64_t run_ms(const node_agent *a, const json_t *pod)
{
    json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
    const char *v = json_string_value(json_object_get(ann, RUN_DURATION_ANNOTATION));
    if (v) return nodeagent_parse_duration_ms(v);
    return a->job_run_ms > 0 && job_controlled(pod) ? a->job_run_ms : -1;
}

/* What the agent should do next for this pod, and when. */
static action next_action(const node_agent *a, const json_t *pod, int64_t *due_ms)
{
    store *st = a->st;
    const char *node = jstr(pod, "spec", "nodeName");
    const char *phase = jstr(pod, "status", "phase");
    *due_ms = clock_mono_ms();
    if (!node || !*node || !node_exists(st, node)) return ACT_NONE;
    if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp")) return ACT_FINALIZE;
    if (!phase || !strcmp(phase, "Pending")) return ACT_START;
    if (strcmp(phase, "Running")) return ACT_NONE;
    int64_t started = parse_ts(jstr(pod, "status", "startTime"));
    if (started < 0) return ACT_NONE;
    int64_t elapsed_ms = ((int64_t)time(NULL) - started) * 1000;
    action act = ACT_NONE;
    int64_t wait = INT64_MAX;
    json_t *ads = json_object_get(json_object_get(pod, "spec"), "activeDeadlineSeconds");
    if (json_is_integer(ads)) {
        act = ACT_FAIL;
        wait = json_integer_value(ads) * 1000 - elapsed_ms;
    }
    int64_t run = run_ms(a, pod);
    if (run >= 0 && run - elapsed_ms < wait) {
        act = ACT_SUCCEED;
        wait = run - elapsed_ms;
    }
    if (act != ACT_NONE) *due_ms += wait > 0 ? wait : 0;
    return act;
}

/* ---- status mutations ---- */

static json_t *condition(const char *type, const char *status, const char *now)
{
    return json_pack("{s:s, s:s, s:n, s:s}", "type", type, "status", status, "lastProbeTime",
                     "lastTransitionTime", now);
}

static void set_conditions(json_t *status, bool ready, const char *now)
{
    const char *r = ready ? "True" : "False";
    json_t *c = json_array();
    json_array_append_new(c, condition("PodReadyToStartContainers", r, now));
    json_array_append_new(c, condition("Initialized", "True", now));
    json_array_append_new(c, condition("Ready", r, now));
    json_array_append_new(c, condition("ContainersReady", r, now));
    json_array_append_new(c, condition("PodScheduled", "True", now));
    json_object_set_new(status, "conditions", c);
}

typedef struct change {
    action act;
    const char *uid;
} change;

static json_t *container_statuses(const json_t *pod, action act, const char *now)
{
    json_t *out = json_array();
    const char *started = jstr(pod, "status", "startTime");
    const char *uid = jstr(pod, "metadata", "uid");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "containers"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *image = json_string_value(json_object_get(c, "image"));
        char id[256];
        snprintf(id, sizeof id, "allot://%s/%s", uid ? uid : "", name ? name : "");
        json_t *state;
        if (act == ACT_START)
            state = json_pack("{s:{s:s}}", "running", "startedAt", now);
        else
            state = json_pack("{s:{s:i, s:s, s:s, s:s}}", "terminated", "exitCode",
                              act == ACT_SUCCEED ? 0 : 137, "reason",
                              act == ACT_SUCCEED ? "Completed" : "DeadlineExceeded", "startedAt",
                              started ? started : now, "finishedAt", now);
        json_array_append_new(out,
                              json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:i, s:o}", "name",
                                        name ? name : "", "image", image ? image : "", "imageID",
                                        "", "containerID", id, "ready", act == ACT_START, "started",
                                        act == ACT_START, "restartCount", 0, "state", state));
    }
    return out;
}

static json_t *mutate_status(const json_t *cur, void *ctx, api_err *e)
{
    change *ch = ctx;
    const char *uid = jstr(cur, "metadata", "uid");
    const char *phase = jstr(cur, "status", "phase");
    if (!uid || strcmp(uid, ch->uid) ||
        (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))) {
        api_err_set(e, API_CONFLICT, "pod changed");
        return NULL;
    }
    char now[32];
    reg_now_rfc3339(now, sizeof now);
    json_t *pod = jcopy(cur);
    json_t *status = json_object_ensure(pod, "status");
    if (ch->act == ACT_START) {
        json_object_set_new(status, "phase", json_string("Running"));
        json_object_set_new(status, "startTime", json_string(now));
        json_object_set_new(status, "hostIP", json_string("10.0.0.1"));
        json_object_set_new(status, "podIP", json_string("10.244.0.1"));
        set_conditions(status, true, now);
    } else {
        json_object_set_new(status, "phase",
                            json_string(ch->act == ACT_SUCCEED ? "Succeeded" : "Failed"));
        if (ch->act == ACT_FAIL) {
            json_object_set_new(status, "reason", json_string("DeadlineExceeded"));
            json_object_set_new(status, "message",
                                json_string("Pod was active on the node longer than the specified "
                                            "deadline"));
        }
        set_conditions(status, false, now);
    }
    json_object_set_new(status, "containerStatuses", container_statuses(pod, ch->act, now));
    return pod;
}

/* Performs en's action: false when it failed in a way no event will follow
 * (a conflict or a pod gone is followed by its event). */
static bool perform(node_agent *a, const entry *en)
{
    api_err e;
    api_err_init(&e);
    const api_kind *k = api_kind_find("", "v1", "pods");
    char ns[256], name[256];
    const char *p = strchr(en->key, '/') + 1, *q = strchr(p, '/');
    snprintf(ns, sizeof ns, "%.*s", (int)(q - p), p);
    snprintf(name, sizeof name, "%s", q + 1);
    if (en->act == ACT_FINALIZE) {
        reg_delete_opts o = {false, 0, NULL, en->uid, NULL};
        json_t *out = NULL;
        bool gone = false;
        if (reg_delete(a->st, k, ns, name, &o, &out, &gone, &e) == 0) json_decref(out);
    } else {
        change ch = {en->act, en->uid};
        json_t *out = NULL;
        if (reg_update(a->st, k, ns, name, "status", mutate_status, &ch, false, &out, &e) == 0)
            json_decref(out);
    }
    bool failed = e.code && e.code != API_CONFLICT && e.code != API_NOT_FOUND;
    if (failed)
        log_msg(LOG_WARN, "node agent action failed", "\"pod\":\"%s\",\"error\":\"%s\"", en->key,
                e.message);
    api_err_clear(&e);
    return !failed;
}

/* ---- bookkeeping ---- */

static void forget(node_agent *a, const char *key)
{
    entry *en = strmap_del(a->entries, key);
    if (!en) return;
    free(en->key);
    free(en);
}

/* Whether a stored pod is bound, from its index (no parse). An unbound pod
 * has nothing for the agent: a delete removes it at once. */
static bool bound(const store_obj *o)
{
    const char *node = o->idx.fields ? api_fields_get(o->idx.fields, "spec.nodeName") : NULL;
    return !o->idx.fields || (node && *node);
}

/* The pending action of want->key becomes want's (key copied). */
static void put_entry(node_agent *a, const entry *want)
{
    entry *en = strmap_get(a->entries, want->key);
    if (!en && (en = calloc(1, sizeof *en)) && (en->key = strdup(want->key)) &&
        strmap_put(a->entries, en->key, en, NULL) != 0) {
        free(en->key);
        free(en);
        en = NULL;
    }
    if (!en) return; /* out of memory: the periodic rescan finds it */
    memcpy(en->uid, want->uid, sizeof en->uid);
    en->act = want->act;
    en->due_ms = want->due_ms;
    if (en->due_ms < a->next_due) a->next_due = en->due_ms;
}

static void track(node_agent *a, const store_obj *o)
{
    if (!bound(o)) {
        forget(a, o->key);
        return;
    }
    json_t *pod = store_obj_view_sans(o, "metadata.managedFields");
    int64_t due = 0;
    action act = pod ? next_action(a, pod, &due) : ACT_NONE;
    const char *uid = pod ? jstr(pod, "metadata", "uid") : NULL;
    if (act == ACT_NONE || !uid) {
        forget(a, o->key);
        json_decref(pod);
        return;
    }
    entry want = {(char *)o->key, "", act, due};
    snprintf(want.uid, sizeof want.uid, "%s", uid);
    put_entry(a, &want);
    json_decref(pod);
}

static json_t *mutate_node_ready(const json_t *cur, void *ctx, api_err *e)
{
    char now[32];
    reg_now_rfc3339(now, sizeof now);
    json_t *node = jcopy(cur);
    json_t *status = json_object_ensure(node, "status");
    json_object_set_new(status, "conditions",
                        json_pack("[{s:s, s:s, s:s, s:s, s:s, s:s}]", "type", "Ready", "status",
                                  "True", "reason", "KubeletReady", "message",
                                  "allot node agent is posting ready status", "lastHeartbeatTime",
                                  now, "lastTransitionTime", now));
    json_object_set_new(status, "nodeInfo",
                        json_pack("{s:s, s:s, s:s, s:s}", "kubeletVersion", "v1.32.0-allot",
                                  "containerRuntimeVersion", "allot://0.1", "operatingSystem",
                                  "linux", "architecture", "amd64"));
    return node;
}

/* Nodes the agent runs pods for report Ready, as a kubelet would. */
static void mark_nodes_ready(node_agent *a)
{
    store_obj **objs = NULL;
    size_t n = 0;
    const api_kind *k = api_kind_find("", "v1", "nodes");
    if (store_list(a->st, "nodes/", NULL, 0, &objs, &n, NULL, NULL) != 0) return;
    for (size_t i = 0; i < n; i++) {
        bool ready = strstr(objs[i]->json, "\"KubeletReady\"") != NULL;
        if (!ready) {
            api_err e;
            api_err_init(&e);
            json_t *out = NULL;
            if (reg_update(a->st, k, "", objs[i]->name, "status", mutate_node_ready, NULL, false,
                           &out, &e) == 0)
                json_decref(out);
            api_err_clear(&e);
        }
        store_obj_unref(objs[i]);
    }
    free(objs);
}

static void rescan(node_agent *a, const char *why)
{
    mark_nodes_ready(a);
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_list(a->st, "pods/", NULL, 0, &objs, &n, NULL, NULL) != 0) return;
    log_msg(LOG_DEBUG, "node agent rescan", "\"why\":\"%s\",\"pods\":%zu", why, n);
    for (size_t i = 0; i < n; i++) {
        track(a, objs[i]);
        store_obj_unref(objs[i]);
    }
    free(objs);
}

static void run_due(node_agent *a)
{
    int64_t now = clock_mono_ms();
    if (now < a->next_due) return;
    a->next_due = INT64_MAX;
    /* Collect first: performing an action changes the map through events. */
    size_t cap = strmap_count(a->entries), n = 0;
    entry *due = calloc(cap ? cap : 1, sizeof *due);
    if (!due) return;
    const char *k;
    void *v;
    for (size_t it = 0; strmap_next(a->entries, &it, &k, &v);) {
        entry *en = v;
        if (en->due_ms <= now && n < cap) {
            due[n] = *en;
            due[n++].key = strdup(en->key);
        } else if (en->due_ms < a->next_due) {
            a->next_due = en->due_ms;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (due[i].key) {
            forget(a, due[i].key);
            if (!perform(a, &due[i]) && !strmap_get(a->entries, due[i].key)) {
                /* tried again in a while, unless an event has taken it meanwhile */
                due[i].due_ms = clock_mono_ms() + RETRY_MS;
                put_entry(a, &due[i]);
            }
        }
        free(due[i].key);
    }
    free(due);
}

/* The agent's events: pods and nodes. Runs on the store's writer thread. */
static bool takes(void *arg, const store_event *ev)
{
    (void)arg;
    return !strncmp(ev->obj->key, "pods/", 5) || !strncmp(ev->obj->key, "nodes/", 6);
}

static void node_event(node_agent *a, const store_event *ev)
{
    if (ev->type == STORE_EV_DELETED) return;
    if (ev->type == STORE_EV_ADDED) a->rescan_due = true;
    if (!strstr(ev->obj->json, "\"KubeletReady\"")) a->rescan_due = true; /* marks it Ready */
}

static void on_event(node_agent *a, const store_event *ev)
{
    if (!strncmp(ev->obj->key, "nodes/", 6))
        node_event(a, ev);
    else if (ev->type == STORE_EV_DELETED)
        forget(a, ev->obj->key);
    else
        track(a, ev->obj);
    store_obj_unref(ev->obj);
    store_obj_unref(ev->prev);
}

static store_watch *watch_open(node_agent *a)
{
    bool expired = false;
    store_watch *w =
        store_watch_open_filtered(a->st, "", store_revision(a->st), takes, NULL, &expired);
    rescan(a, "watch opened");
    return w;
}

static void *run(void *arg)
{
    node_agent *a = arg;
    pthread_setname_np(pthread_self(), "node-agent");
    store_watch *w = watch_open(a);
    int64_t last_scan = clock_mono_ms();
    while (!atomic_load(&a->stop)) {
        /* Sleep until an event, the first due action or the next rescan. */
        int64_t until = a->rescan_due ? 0 : a->next_due;
        if (last_scan + RESCAN_MS < until) until = last_scan + RESCAN_MS;
        int64_t left = until - clock_mono_ms();
        store_event ev;
        int rc = w ? store_watch_next(w, &ev,
                                      left < 0             ? 0
                                      : left > WAIT_MAX_MS ? WAIT_MAX_MS
                                                           : (int)left)
                   : -1;
        /* a burst of events is taken whole, then the due actions run once */
        for (int n = 0; rc == 1; n++) {
            on_event(a, &ev);
            rc = n < BATCH_EVENTS ? store_watch_next(w, &ev, 0) : 0;
        }
        if (rc < 0 && !atomic_load(&a->stop)) {
            store_watch_close(w); /* fell behind the history: start over */
            w = watch_open(a);
            last_scan = clock_mono_ms();
        }
        if (a->rescan_due || clock_mono_ms() - last_scan >= RESCAN_MS) {
            rescan(a, a->rescan_due ? "node added or not ready" : "periodic");
            a->rescan_due = false;
            last_scan = clock_mono_ms();
        }
        run_due(a);
    }
    store_watch_close(w);
    return NULL;
}

node_agent *nodeagent_start(store *st, const nodeagent_opts *o, char *err, size_t errlen)
{
    node_agent *a = calloc(1, sizeof *a);
    if (!a || !(a->entries = strmap_new())) {
        free(a);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    a->st = st;
    a->job_run_ms = o ? o->job_run_ms : NODEAGENT_JOB_RUN_MS;
    a->next_due = INT64_MAX;
    if (pthread_create(&a->thread, NULL, run, a) != 0) {
        strmap_free(a->entries);
        free(a);
        snprintf(err, errlen, "cannot start node agent");
        return NULL;
    }
    return a;
}

void nodeagent_stop(node_agent *a)
{
    if (!a) return;
    atomic_store(&a->stop, true);
    store_watch_wake_all(a->st); /* its wait may be long */
    pthread_join(a->thread, NULL);
    void *v;
    for (size_t it = 0; strmap_next(a->entries, &it, NULL, &v);) {
        free(((entry *)v)->key);
        free(v);
    }
    strmap_free(a->entries);
    free(a);
}

int nodeagent_ensure_nodes(store *st, int n, char *err, size_t errlen)
{
    const api_kind *k = api_kind_find("", "v1", "nodes");
    for (int i = 1; i <= n; i++) {
        char name[64];
        snprintf(name, sizeof name, NODEAGENT_SIM_PREFIX "%d", i);
        /* Status as a kubelet would register it; the agent marks it Ready. */
        json_t *res = json_pack("{s:s, s:s, s:s}", "cpu", NODEAGENT_SIM_CPU, "memory",
                                NODEAGENT_SIM_MEMORY, "pods", NODEAGENT_SIM_PODS);
        json_t *node = res ? json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:O, s:O}}", "apiVersion",
                                       "v1", "kind", "Node", "metadata", "name", name, "labels",
                                       "kubernetes.io/hostname", name, "status", "capacity", res,
                                       "allocatable", res)
                           : NULL;
        json_decref(res);
        if (!node) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        api_err e;
        api_err_init(&e);
        json_t *out = NULL;
        int rc = reg_create(st, k, "", node, false, &out, &e);
        json_decref(node);
        json_decref(out);
        if (rc != 0 && e.code != API_ALREADY_EXISTS) {
            snprintf(err, errlen, "node %s: %s", name, e.message);
            api_err_clear(&e);
            return -1;
        }
        api_err_clear(&e);
    }
    return 0;
}
