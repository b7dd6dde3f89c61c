/* job.c - the Job controller (batch/v1), as upstream's
 * pkg/controller/job for NonIndexed Jobs.
 *
 * Follows every store event: a Job's own events and those of the pods it
 * controls (controllerRef kind Job) queue the Job (controllers/workq.h);
 * flush syncs each queued Job. flush and tick also sync Jobs whose timer is
 * due (pod failure backoff, activeDeadlineSeconds, ttlSecondsAfterFinished,
 * create backoff).
 *
 * A sync, as upstream's syncJob with finalizer tracking:
 *  1. the Job's pods: those whose controllerRef has the Job's uid (no
 *     adoption of orphans: documented in docs/jobs.md);
 *  2. finished pods (Succeeded, Failed, or being deleted) still holding
 *     the finalizer batch.kubernetes.io/job-tracking go into
 *     status.uncountedTerminatedPods (one status write), their finalizer
 *     is removed, and then they move into status.succeeded / failed: each
 *     pod counted once, even when deleted right after;
 *  3. core/jobsync.h decides: pods to create (through podcontrol: quota
 *     applies, FailedCreate events carry its message) or delete,
 *     conditions to add;
 *  4. one status write: active, ready, terminating, counts, startTime,
 *     completionTime, conditions; Events for the transitions.
 * Expectations (podcontrol) keep a sync from acting again before the
 * watch has shown what the last one did.
 */
#include "api/batch_kinds.h"
#include "core/jdump.h"
#include "api/kinds.h"
#include "api/objects.h"
#include "controllers/controllers.h"
#include "controllers/podcontrol.h"
#include "controllers/workq.h"
#include "core/jobsync.h"
#include "core/rfc3339.h"
#include "core/strmap.h"
#include "registry/events.h"
#include "registry/registry.h"
#include "util/log.h"
#include "util/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COMPONENT "job-controller"
#define JOB_PREFIX "jobs.batch/"
#define WORKERS 4

typedef struct job_rec { /* per Job key, in memory */
    char *key;           /* owned: the recs map's key */
    int32_t failures;    /* pod failures since the last success */
    int64_t last_failure_ms;
    int64_t create_after_ms; /* a failed create: wait (unless a pod finished) */
} job_rec;

typedef struct job_ctrl {
    store *st;
    const atomic_bool *stop;
    podctl *pc;
    const api_kind *jobs, *pods;
    workq *q;         /* job keys to sync, and when (monotonic ms) */
    ctrl_set orphans; /* pod keys holding the finalizer whose Job may be gone */
    strmap *recs;     /* job key -> job_rec* */
} job_ctrl;

/* ---- small helpers ---- */

static const char *sget(const json_t *o, const char *a, const char *b)
{
    const char *s = json_string_value(json_object_get(json_object_get(o, a), b));
    return s ? s : "";
}

static int64_t now_unix(void)
{
    return (int64_t)time(NULL);
}

static int64_t parse_time(const char *s)
{
    int64_t t, ns;
    return s && *s && rfc3339_parse(s, &t, &ns) ? t : -1;
}

static job_rec *rec_of(job_ctrl *c, const char *key)
{
    job_rec *r = strmap_get(c->recs, key);
    if (r) return r;
    r = calloc(1, sizeof *r);
    if (r && (!(r->key = strdup(key)) || strmap_put(c->recs, r->key, r, NULL) != 0)) {
        free(r->key);
        free(r);
        r = NULL;
    }
    return r;
}

static void rec_free(job_rec *r)
{
    if (!r) return;
    free(r->key);
    free(r);
}

static void rec_forget(job_ctrl *c, const char *key)
{
    rec_free(strmap_del(c->recs, key));
    podctl_forget(c->pc, key);
    workq_forget(c->q, key);
}

/* Sync the Job again in ms (or sooner, if it was due sooner). */
static void wake_in(job_ctrl *c, const char *key, int64_t ms)
{
    workq_due(c->q, key, clock_mono_ms() + (ms > 0 ? ms : 1));
}

static const json_t *condition(const json_t *job, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(job, "status"), "conditions"), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", type)) return c;
    }
    return NULL;
}

static bool condition_true(const json_t *job, const char *type)
{
    const json_t *c = condition(job, type);
    return c && !strcmp(json_string_value(json_object_get(c, "status")) ?: "", "True");
}

/* The controllerRef of a pod naming a Job: its name, or NULL. */
static const char *job_owner(const json_t *pod, const char **uid)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(json_object_get(pod, "metadata"), "ownerReferences"), i, r)
    {
        if (!json_is_true(json_object_get(r, "controller"))) continue;
        const char *kind = json_string_value(json_object_get(r, "kind"));
        const char *av = json_string_value(json_object_get(r, "apiVersion"));
        if (!kind || strcmp(kind, "Job") || !av || strncmp(av, "batch/", 6)) return NULL;
        if (uid) *uid = json_string_value(json_object_get(r, "uid"));
        return json_string_value(json_object_get(r, "name"));
    }
    return NULL;
}

/* ---- events ---- */

/* Jobs, and pods a Job may own (the pods of ReplicaSets are told apart by
 * their text, without a parse). */
static bool job_takes(void *self, const store_event *ev)
{
    (void)self;
    const store_obj *o = ev->obj;
    if (!strncmp(o->key, JOB_PREFIX, strlen(JOB_PREFIX))) return true;
    return !strncmp(o->key, "pods/", 5) && ctrl_may_be_owned_by(o, "Job");
}

static void job_event(void *self, const store_event *ev)
{
    job_ctrl *c = self;
    const store_obj *o = ev->obj;
    if (!strncmp(o->key, JOB_PREFIX, strlen(JOB_PREFIX))) {
        if (ev->type == STORE_EV_DELETED)
            rec_forget(c, o->key);
        else
            workq_mark(c->q, o->key);
        return;
    }
    if (!job_takes(c, ev)) return;
    json_t *pod = store_obj_parse(o);
    const char *name = job_owner(pod, NULL);
    if (name) {
        char key[600];
        snprintf(key, sizeof key, JOB_PREFIX "%s/%s", o->ns, name);
        json_t *prev = ev->prev ? store_obj_parse(ev->prev) : NULL;
        bool deleting = json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp");
        bool was_deleting =
            prev && json_object_get(json_object_get(prev, "metadata"), "deletionTimestamp");
        if (ev->type == STORE_EV_ADDED)
            podctl_creation_observed(c->pc, key);
        else if (ev->type == STORE_EV_DELETED || (deleting && !was_deleting))
            podctl_deletion_observed(c->pc, key, o->key);
        workq_mark(c->q, key);
        if (ev->type != STORE_EV_DELETED && ctrl_has_finalizer(pod, JOB_TRACKING_FINALIZER))
            ctrl_set_add(&c->orphans, o->key);
        json_decref(prev);
    }
    json_decref(pod);
}

/* A pod holding the tracking finalizer whose Job is gone (or another by
 * that name) loses the finalizer once it is finished or being deleted. */
static void check_orphan(job_ctrl *c, const char *pod_key)
{
    store_obj *o = store_get(c->st, pod_key);
    if (!o) return;
    json_t *pod = store_obj_parse(o);
    const char *uid = NULL, *name = job_owner(pod, &uid);
    const char *phase = sget(pod, "status", "phase");
    bool done = !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed") ||
                json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp");
    if (name && done && ctrl_has_finalizer(pod, JOB_TRACKING_FINALIZER)) {
        char key[600];
        snprintf(key, sizeof key, JOB_PREFIX "%s/%s", o->ns, name);
        store_obj *jo = store_get(c->st, key);
        json_t *job = jo ? store_obj_parse(jo) : NULL;
        if (!job || strcmp(sget(job, "metadata", "uid"), uid ? uid : ""))
            ctrl_remove_finalizer(c->st, c->pods, o->ns, o->name, sget(pod, "metadata", "uid"),
                                  JOB_TRACKING_FINALIZER);
        json_decref(job);
        store_obj_unref(jo);
    }
    json_decref(pod);
    store_obj_unref(o);
}

/* ---- a sync ---- */

typedef struct pod_view {
    json_t *pod; /* owned */
    const char *name, *uid;
    bool fin, succeeded, failed, deleting, active, ready;
} pod_view;

typedef struct pod_list {
    pod_view *v;
    size_t n;
} pod_list;

static void pods_free(pod_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        json_decref(l->v[i].pod);
    free(l->v);
}

static bool pod_ready(const json_t *pod)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *s = json_string_value(json_object_get(c, "status"));
        if (t && s && !strcmp(t, "Ready")) return !strcmp(s, "True");
    }
    return false;
}

static int list_pods(job_ctrl *c, const char *ns, const char *job_uid, pod_list *out)
{
    char prefix[300];
    snprintf(prefix, sizeof prefix, "pods/%s/", ns);
    store_obj **objs = NULL;
    size_t n = 0;
    memset(out, 0, sizeof *out);
    if (store_list(c->st, prefix, NULL, 0, &objs, &n, NULL, NULL) != 0) return -1;
    out->v = calloc(n ? n : 1, sizeof *out->v);
    for (size_t i = 0; i < n; i++) {
        json_t *pod = out->v ? store_obj_parse(objs[i]) : NULL;
        const char *uid = NULL;
        if (pod && job_owner(pod, &uid) && uid && !strcmp(uid, job_uid)) {
            pod_view *p = &out->v[out->n++];
            p->pod = pod;
            p->name = sget(pod, "metadata", "name");
            p->uid = sget(pod, "metadata", "uid");
            p->fin = ctrl_has_finalizer(pod, JOB_TRACKING_FINALIZER);
            const char *phase = sget(pod, "status", "phase");
            p->deleting = json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp");
            p->succeeded = !strcmp(phase, "Succeeded");
            /* upstream's isPodFailed: a pod deleted before it succeeded failed */
            p->failed = !strcmp(phase, "Failed") || (p->deleting && !p->succeeded);
            p->active = !p->succeeded && !p->failed && !p->deleting;
            p->ready = p->active && pod_ready(pod);
        } else {
            json_decref(pod);
        }
        store_obj_unref(objs[i]);
    }
    free(objs);
    return out->v ? 0 : -1;
}

static bool in_list(const json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (!strcmp(json_string_value(v) ?: "", s)) return true;
    }
    return false;
}

/* As upstream serializes JobStatus: zero counts (omitempty) and empty
 * uncounted lists are left out. */
static void tidy_status(json_t *status)
{
    static const char *const omitempty[] = {"active", "succeeded", "failed", NULL};
    for (int i = 0; omitempty[i]; i++) {
        json_t *v = json_object_get(status, omitempty[i]);
        if (json_is_integer(v) && json_integer_value(v) == 0) json_object_del(status, omitempty[i]);
    }
    json_t *unc = json_object_get(status, "uncountedTerminatedPods");
    if (json_array_size(json_object_get(unc, "succeeded")) == 0) json_object_del(unc, "succeeded");
    if (json_array_size(json_object_get(unc, "failed")) == 0) json_object_del(unc, "failed");
}

static int write_status(job_ctrl *c, const json_t *job, const json_t *want)
{
    json_t *status = jcopy(want);
    if (!status) return -1;
    tidy_status(status);
    if (json_equal(json_object_get(job, "status"), status)) {
        json_decref(status);
        return 0;
    }
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    int rc = ctrl_write_status(c->st, c->jobs, sget(job, "metadata", "namespace"),
                               sget(job, "metadata", "name"), sget(job, "metadata", "uid"), status,
                               &out, &e);
    if (rc != 0 && e.code != API_CONFLICT && e.code != API_NOT_FOUND)
        log_msg(LOG_WARN, "job status write failed", "\"job\":\"%s\",\"error\":\"%s\"",
                sget(job, "metadata", "name"), e.message);
    json_decref(out);
    json_decref(status);
    api_err_clear(&e);
    return rc;
}

/* Set condition `type` to status, upstream's way: a change of status moves
 * lastTransitionTime; the same status keeps the condition as is. Returns
 * whether it changed. */
static bool set_condition(json_t *status, const char *type, const char *st, const char *reason,
                          const char *message, const char *now)
{
    json_t *conds = json_object_get(status, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    size_t i;
    json_t *cnd;
    json_array_foreach(conds, i, cnd)
    {
        if (strcmp(json_string_value(json_object_get(cnd, "type")) ?: "", type)) continue;
        if (!strcmp(json_string_value(json_object_get(cnd, "status")) ?: "", st)) return false;
        json_object_set_new(cnd, "status", json_string(st));
        json_object_set_new(cnd, "reason", json_string(reason));
        json_object_set_new(cnd, "message", json_string(message));
        json_object_set_new(cnd, "lastProbeTime", json_string(now));
        json_object_set_new(cnd, "lastTransitionTime", json_string(now));
        return true;
    }
    json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", type, "status",
                                           st, "lastProbeTime", now, "lastTransitionTime", now,
                                           "reason", reason, "message", message));
    return true;
}

/* Creating pods: one call of a slow-start batch. */
typedef struct create_ctx {
    job_ctrl *c;
    const json_t *job;
} create_ctx;

static int create_one(void *arg, size_t i, api_err *e)
{
    (void)i;
    create_ctx *cc = arg;
    json_t *tmpl = json_object_get(json_object_get(cc->job, "spec"), "template");
    json_t *pod = podctl_pod_from_template(tmpl, cc->job, NULL, e);
    if (!pod) return -1;
    json_t *meta = json_object_get(pod, "metadata");
    json_t *fins = json_object_get(meta, "finalizers");
    if (!json_is_array(fins)) {
        fins = json_array();
        json_object_set_new(meta, "finalizers", fins);
    }
    json_array_append_new(fins, json_string(JOB_TRACKING_FINALIZER));
    int rc = podctl_create_pod(cc->c->pc, cc->job, pod, NULL, e);
    json_decref(pod);
    return rc;
}

static int32_t spec_int(const json_t *spec, const char *k, int32_t dflt)
{
    json_t *v = json_object_get(spec, k);
    return json_is_integer(v) ? (int32_t)json_integer_value(v) : dflt;
}

static void record(job_ctrl *c, const json_t *job, const char *type, const char *reason,
                   const char *msg)
{
    event_record(c->st, job, type, reason, msg, COMPONENT);
}

/* TTL after finished: delete the Job (its pods follow through the garbage
 * collector) once ttlSecondsAfterFinished has passed since it finished. */
static bool ttl_expired(job_ctrl *c, const char *key, const json_t *job)
{
    json_t *ttl = json_object_get(json_object_get(job, "spec"), "ttlSecondsAfterFinished");
    if (!json_is_integer(ttl)) return false;
    const json_t *fin =
        condition_true(job, "Complete") ? condition(job, "Complete") : condition(job, "Failed");
    int64_t at = parse_time(json_string_value(json_object_get(fin, "lastTransitionTime")));
    if (at < 0) return false;
    int64_t left = at + json_integer_value(ttl) - now_unix();
    if (left > 0) {
        wake_in(c, key, left * 1000);
        return false;
    }
    reg_delete_opts o = {false, -1, "Background", sget(job, "metadata", "uid"), NULL};
    json_t *out = NULL;
    bool gone = false;
    api_err e;
    api_err_init(&e);
    if (reg_delete(c->st, c->jobs, sget(job, "metadata", "namespace"),
                   sget(job, "metadata", "name"), &o, &out, &gone, &e) == 0)
        log_msg(LOG_INFO, "job deleted after its TTL", "\"job\":\"%s\"", key);
    json_decref(out);
    api_err_clear(&e);
    return true;
}

static void sync_job(void *self, const char *key) /* workq_sync_fn */
{
    job_ctrl *c = self;
    store_obj *o = store_get(c->st, key);
    if (!o) {
        rec_forget(c, key);
        return;
    }
    json_t *job = store_obj_parse(o);
    store_obj_unref(o);
    if (!job) return;
    const char *ns = sget(job, "metadata", "namespace"), *uid = sget(job, "metadata", "uid");
    bool being_deleted = json_object_get(json_object_get(job, "metadata"), "deletionTimestamp");
    bool finished = condition_true(job, "Complete") || condition_true(job, "Failed");
    if (!podctl_satisfied(c->pc, key)) { /* the watch has yet to show our last acts */
        wake_in(c, key, 1000);
        json_decref(job);
        return;
    }
    pod_list pods;
    if (list_pods(c, ns, uid, &pods) != 0) {
        wake_in(c, key, 1000);
        json_decref(job);
        return;
    }
    job_rec *rec = rec_of(c, key);
    json_t *status = jcopy(json_object_get(job, "status"));
    if (!json_is_object(status)) {
        json_decref(status);
        status = json_object();
    }
    char now[32];
    reg_now_rfc3339(now, sizeof now);

    /* 2. finished pods into uncountedTerminatedPods, then their finalizers off */
    json_t *unc = json_object_get(status, "uncountedTerminatedPods");
    if (!json_is_object(unc)) {
        unc = json_object();
        json_object_set_new(status, "uncountedTerminatedPods", unc);
    }
    json_t *usucc = json_object_get(unc, "succeeded"), *ufail = json_object_get(unc, "failed");
    if (!json_is_array(usucc)) json_object_set_new(unc, "succeeded", usucc = json_array());
    if (!json_is_array(ufail)) json_object_set_new(unc, "failed", ufail = json_array());
    bool added = false;
    for (size_t i = 0; i < pods.n; i++) {
        pod_view *p = &pods.v[i];
        if (!p->fin || (!p->succeeded && !p->failed)) continue;
        if (in_list(usucc, p->uid) || in_list(ufail, p->uid)) continue;
        /* a Job suspended or finished deletes its pods: not failures */
        if (p->failed && !p->succeeded && p->deleting &&
            (finished || being_deleted ||
             json_is_true(json_object_get(json_object_get(job, "spec"), "suspend"))) &&
            strcmp(sget(p->pod, "status", "phase"), "Failed"))
            continue;
        json_array_append_new(p->succeeded ? usucc : ufail, json_string(p->uid));
        added = true;
    }
    if (added && write_status(c, job, status) != 0) {
        wake_in(c, key, 1000);
        goto out;
    }
    for (size_t i = 0; i < pods.n; i++) {
        pod_view *p = &pods.v[i];
        if (p->fin && (p->succeeded || p->failed) &&
            ctrl_remove_finalizer(c->st, c->pods, ns, p->name, p->uid, JOB_TRACKING_FINALIZER) == 0)
            p->fin = false;
    }
    int32_t moved_s = 0, moved_f = 0;
    for (int pass = 0; pass < 2; pass++) {
        json_t *arr = pass ? ufail : usucc;
        for (size_t j = json_array_size(arr); j-- > 0;) {
            const char *u = json_string_value(json_array_get(arr, j));
            bool held = false;
            for (size_t i = 0; i < pods.n; i++)
                if (!strcmp(pods.v[i].uid, u ? u : "") && pods.v[i].fin) held = true;
            if (held) continue;
            json_array_remove(arr, j);
            if (pass)
                moved_f++;
            else
                moved_s++;
        }
    }
    /* finalizers of pods deleted while active (not counted: suspend, finish) */
    for (size_t i = 0; i < pods.n; i++) {
        pod_view *p = &pods.v[i];
        if (p->fin && p->deleting && !in_list(usucc, p->uid) && !in_list(ufail, p->uid) &&
            ctrl_remove_finalizer(c->st, c->pods, ns, p->name, p->uid, JOB_TRACKING_FINALIZER) == 0)
            p->fin = false;
    }
    int32_t succeeded = spec_int(status, "succeeded", 0) + moved_s;
    int32_t failed = spec_int(status, "failed", 0) + moved_f;
    json_object_set_new(status, "succeeded", json_integer(succeeded));
    json_object_set_new(status, "failed", json_integer(failed));
    if (rec && moved_s > 0) rec->failures = 0;
    if (rec && moved_f > 0) {
        rec->failures += moved_f;
        rec->last_failure_ms = clock_mono_ms();
    }
    if (rec && (moved_s > 0 || moved_f > 0)) rec->create_after_ms = 0; /* quota may be free */

    if (finished || being_deleted) {
        if (!finished) goto write;
        if (ttl_expired(c, key, job)) goto out;
        goto write;
    }

    /* 3. decide */
    const json_t *spec = json_object_get(job, "spec");
    int32_t active = 0, ready = 0, terminating = 0;
    for (size_t i = 0; i < pods.n; i++) {
        active += pods.v[i].active;
        ready += pods.v[i].ready;
        terminating += pods.v[i].deleting && !pods.v[i].succeeded &&
                       strcmp(sget(pods.v[i].pod, "status", "phase"), "Failed");
    }
    bool suspend = json_is_true(json_object_get(spec, "suspend"));
    const json_t *ft = condition(job, "FailureTarget");
    job_in in = {
        .parallelism = spec_int(spec, "parallelism", 1),
        .completions = json_is_integer(json_object_get(spec, "completions"))
                           ? spec_int(spec, "completions", 1)
                           : -1,
        .backoff_limit = spec_int(spec, "backoffLimit", JOB_DEFAULT_BACKOFF_LIMIT),
        .active_deadline = json_is_integer(json_object_get(spec, "activeDeadlineSeconds"))
                               ? json_integer_value(json_object_get(spec, "activeDeadlineSeconds"))
                               : -1,
        .suspend = suspend,
        .failure_target = condition_true(job, "FailureTarget"),
        .failure_reason = json_string_value(json_object_get(ft, "reason")),
        .success_criteria = condition_true(job, "SuccessCriteriaMet"),
        .start_time = parse_time(json_string_value(json_object_get(status, "startTime"))),
        .now = now_unix(),
        .active = active,
        .terminating = terminating,
        .succeeded = succeeded + (int32_t)json_array_size(usucc),
        .failed = failed + (int32_t)json_array_size(ufail),
        .failures_since_success = rec ? rec->failures : 0,
        .last_failure_ms = rec ? rec->last_failure_ms : 0,
        .now_ms = clock_mono_ms(),
    };
    /* startTime: when first not suspended, and again when resumed */
    bool was_suspended = condition_true(job, "Suspended");
    if (!suspend && (in.start_time < 0 || was_suspended)) {
        json_object_set_new(status, "startTime", json_string(now));
        in.start_time = in.now;
    }
    job_out out;
    job_decide(&in, &out);
    if (out.wake_ms > 0) wake_in(c, key, out.wake_ms);

    /* deletions: not-ready pods first */
    int32_t removed = 0;
    if (out.remove > 0) {
        const char **keys = calloc((size_t)out.remove, sizeof *keys);
        char(*kbuf)[600] = calloc((size_t)out.remove, sizeof *kbuf);
        size_t nk = 0;
        for (int want_ready = 0; want_ready < 2 && keys && kbuf; want_ready++)
            for (size_t i = 0; i < pods.n && nk < (size_t)out.remove; i++)
                if (pods.v[i].active && pods.v[i].ready == (bool)want_ready) {
                    snprintf(kbuf[nk], sizeof kbuf[nk], "pods/%s/%s", ns, pods.v[i].name);
                    keys[nk] = kbuf[nk];
                    pods.v[i].active = false;
                    nk++;
                }
        podctl_expect_deletions(c->pc, key, keys, nk);
        for (size_t i = 0; i < nk; i++) {
            const char *pname = keys[i] + strlen("pods/") + strlen(ns) + 1;
            const char *puid = NULL;
            for (size_t j = 0; j < pods.n; j++)
                if (!strcmp(pods.v[j].name, pname)) puid = pods.v[j].uid;
            api_err e;
            api_err_init(&e);
            if (podctl_delete_pod(c->pc, job, ns, pname, puid, &e) == 0)
                removed++;
            else
                podctl_deletion_observed(c->pc, key, keys[i]);
            api_err_clear(&e);
        }
        free(keys);
        free(kbuf);
    }
    /* creations, unless a failed create's backoff lasts */
    int32_t created = 0;
    if (out.create > 0 && rec && rec->create_after_ms > clock_mono_ms()) {
        wake_in(c, key, rec->create_after_ms - clock_mono_ms());
    } else if (out.create > 0) {
        create_ctx cc = {c, job};
        api_err first;
        api_err_init(&first);
        podctl_expect_creations(c->pc, key, out.create);
        size_t ok = podctl_slow_start(c->pc, (size_t)out.create, 1, create_one, &cc, &first);
        for (size_t i = ok; i < (size_t)out.create; i++)
            podctl_creation_observed(c->pc, key);
        created = (int32_t)ok;
        if (ok < (size_t)out.create && !podctl_namespace_terminating(&first)) {
            int64_t d = podctl_backoff_failure(c->pc, key);
            if (rec) rec->create_after_ms = clock_mono_ms() + d;
            wake_in(c, key, d);
        } else {
            podctl_backoff_reset(c->pc, key);
            if (rec) rec->create_after_ms = 0;
        }
        api_err_clear(&first);
    }
    active += created - removed;
    json_object_set_new(status, "active", json_integer(active));
    json_object_set_new(status, "ready", json_integer(ready));
    json_object_set_new(status, "terminating", json_integer(terminating + removed));

    /* conditions and Events */
    if (suspend && out.state == JOB_RUNNING) {
        if (set_condition(status, "Suspended", "True", "JobSuspended", "Job suspended", now))
            record(c, job, "Normal", "Suspended", "Job suspended");
    } else if (!suspend && condition(job, "Suspended")) {
        if (set_condition(status, "Suspended", "False", "JobResumed", "Job resumed", now))
            record(c, job, "Normal", "Resumed", "Job resumed");
    }
    if (out.state == JOB_FAILING) {
        if (out.set_target)
            set_condition(status, "FailureTarget", "True", out.reason, out.message, now);
        if (out.set_final && set_condition(status, "Failed", "True", out.reason, out.message, now))
            record(c, job, "Warning", out.reason, out.message);
    } else if (out.state == JOB_SUCCEEDING) {
        if (out.set_target)
            set_condition(status, "SuccessCriteriaMet", "True", out.reason, out.message, now);
        if (out.set_final &&
            set_condition(status, "Complete", "True", out.reason, out.message, now)) {
            json_object_set_new(status, "completionTime", json_string(now));
            record(c, job, "Normal", "Completed", "Job completed");
        }
    }
    if ((out.state != JOB_RUNNING) && !out.set_final) wake_in(c, key, 1000);
write:
    if (write_status(c, job, status) != 0) wake_in(c, key, 1000);
out:
    json_decref(status);
    pods_free(&pods);
    json_decref(job);
}

/* The queued Jobs and those due (after each batch of events and at each
 * tick), then the pods that may have lost their Job. */
static void job_flush(void *self)
{
    job_ctrl *c = self;
    workq_run(c->q, clock_mono_ms(), sync_job, c, c->stop);
    for (size_t i = 0; i < c->orphans.n && !atomic_load(c->stop); i++)
        check_orphan(c, c->orphans.v[i]);
    ctrl_set_clear(&c->orphans);
}

static void job_resync(void *self)
{
    job_ctrl *c = self;
    ctrl_mark_listed(c->st, JOB_PREFIX, c->q);
    job_flush(c);
}

static void *job_init(store *st, const atomic_bool *stop)
{
    job_ctrl *c = calloc(1, sizeof *c);
    char err[128];
    if (!c) return NULL;
    c->st = st;
    c->stop = stop;
    c->jobs = api_kind_find("batch", "v1", "jobs");
    c->pods = api_kind_find("", "v1", "pods");
    c->recs = strmap_new();
    c->q = workq_new();
    c->pc = podctl_new(st, COMPONENT, WORKERS, err, sizeof err);
    if (!c->recs || !c->q || !c->pc || !c->jobs || !c->pods) {
        podctl_free(c->pc);
        workq_free(c->q);
        strmap_free(c->recs);
        free(c);
        return NULL;
    }
    return c;
}

static void job_fini(void *self)
{
    job_ctrl *c = self;
    if (!c) return;
    podctl_free(c->pc);
    const char *k;
    void *v;
    for (size_t it = 0; strmap_next(c->recs, &it, &k, &v);)
        rec_free(v);
    strmap_free(c->recs);
    workq_free(c->q);
    ctrl_set_free(&c->orphans);
    free(c);
}

static int job_wait_ms(void *self)
{
    const job_ctrl *c = self;
    return c->orphans.n ? 0 : ctrl_workq_wait_ms(c->q, clock_mono_ms());
}

const ctrl_def ctrl_job_def = {"job",      job_init,  job_fini,  job_event,  job_flush,
                               job_resync, job_flush, job_takes, job_wait_ms};
