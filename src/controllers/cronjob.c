/* cronjob.c - the CronJob controller (batch/v1), as upstream's
 * pkg/controller/cronjob (v2).
 *
 * A CronJob's own events and those of the Jobs it controls (controllerRef
 * kind CronJob) queue it (controllers/workq.h); flush and tick also sync
 * CronJobs whose next schedule time has come. A sync:
 *  1. its Jobs (controllerRef uid): status.active is the unfinished ones;
 *     a Job finished since it was listed active gives SawCompletedJob, and
 *     lastSuccessfulTime follows the latest completionTime;
 *  2. finished Jobs beyond successfulJobsHistoryLimit / failedJobsHistoryLimit
 *     are deleted, oldest first (SuccessfulDelete);
 *  3. unless suspended: core/cronjobsync.h says which schedule time is due
 *     (startingDeadlineSeconds, MissSchedule, TooManyMissedTimes) and what
 *     concurrencyPolicy does (Forbid: JobAlreadyActive; Replace: the active
 *     Jobs deleted); the Job "<name>-<minutes>" is created from
 *     jobTemplate through the registry (SuccessfulCreate, or FailedCreate
 *     with the API's message), and lastScheduleTime set;
 *  4. one status write; wake-up at the next schedule time.
 * Times are computed in spec.timeZone (core/tz.h), UTC without one (the
 * zone of a kube-controller-manager in a container).
 */
#include "api/batch_kinds.h"
#include "core/jdump.h"
#include "api/kinds.h"
#include "controllers/controllers.h"
#include "controllers/podcontrol.h"
#include "controllers/workq.h"
#include "core/cronjobsync.h"
#include "core/rfc3339.h"
#include "registry/events.h"
#include "registry/registry.h"
#include "util/log.h"
#include "util/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COMPONENT "cronjob-controller"
#define CJ_PREFIX "cronjobs.batch/"
#define JOB_PREFIX "jobs.batch/"

typedef struct cj_ctrl {
    store *st;
    const atomic_bool *stop;
    const api_kind *cronjobs, *jobs;
    workq *q; /* cronjob keys to sync, and when (Unix ms: the wall clock) */
} cj_ctrl;

static const char *sget(const json_t *o, const char *a, const char *b)
{
    const char *s = json_string_value(json_object_get(json_object_get(o, a), b));
    return s ? s : "";
}

static int64_t parse_time(const char *s)
{
    int64_t t, ns;
    return s && *s && rfc3339_parse(s, &t, &ns) ? t : -1;
}

static bool cond_true(const json_t *job, const char *type)
{
    size_t i;
    json_t *cnd;
    json_array_foreach(json_object_get(json_object_get(job, "status"), "conditions"), i, cnd)
    {
        if (!strcmp(json_string_value(json_object_get(cnd, "type")) ?: "", type) &&
            !strcmp(json_string_value(json_object_get(cnd, "status")) ?: "", "True"))
            return true;
    }
    return false;
}

static const char *cronjob_owner(const json_t *obj, const char **uid)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, r)
    {
        if (!json_is_true(json_object_get(r, "controller"))) continue;
        if (strcmp(json_string_value(json_object_get(r, "kind")) ?: "", "CronJob")) return NULL;
        if (uid) *uid = json_string_value(json_object_get(r, "uid"));
        return json_string_value(json_object_get(r, "name"));
    }
    return NULL;
}

/* CronJobs, and Jobs a CronJob may own. */
static bool cj_takes(void *self, const store_event *ev)
{
    (void)self;
    const store_obj *o = ev->obj;
    if (!strncmp(o->key, CJ_PREFIX, strlen(CJ_PREFIX))) return true;
    return !strncmp(o->key, JOB_PREFIX, strlen(JOB_PREFIX)) && ctrl_may_be_owned_by(o, "CronJob");
}

static void cj_event(void *self, const store_event *ev)
{
    cj_ctrl *c = self;
    const store_obj *o = ev->obj;
    if (!strncmp(o->key, CJ_PREFIX, strlen(CJ_PREFIX))) {
        if (ev->type == STORE_EV_DELETED)
            workq_forget(c->q, o->key);
        else
            workq_mark(c->q, o->key);
        return;
    }
    if (!cj_takes(c, ev)) return;
    json_t *job = store_obj_parse(o);
    const char *name = cronjob_owner(job, NULL);
    if (name) {
        char key[600];
        snprintf(key, sizeof key, CJ_PREFIX "%s/%s", o->ns, name);
        workq_mark(c->q, key);
    }
    json_decref(job);
}

static void record(cj_ctrl *c, const json_t *cj, const char *type, const char *reason,
                   const char *fmt, const char *arg)
{
    char msg[4200];
    snprintf(msg, sizeof msg, fmt, arg);
    event_record(c->st, cj, type, reason, msg, COMPONENT);
}

static int delete_job(cj_ctrl *c, const json_t *cj, const json_t *job)
{
    reg_delete_opts o = {false, -1, "Background", sget(job, "metadata", "uid"), NULL};
    json_t *out = NULL;
    bool gone = false;
    api_err e;
    api_err_init(&e);
    const char *name = sget(job, "metadata", "name");
    int rc =
        reg_delete(c->st, c->jobs, sget(job, "metadata", "namespace"), name, &o, &out, &gone, &e);
    if (rc == 0)
        record(c, cj, "Normal", "SuccessfulDelete", "Deleted job %s", name);
    else if (e.code != API_NOT_FOUND)
        record(c, cj, "Warning", "FailedDelete", "Deleted job: %s", e.message);
    json_decref(out);
    api_err_clear(&e);
    return rc;
}

static json_t *job_ref(const json_t *job)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "kind", "Job", "namespace",
                     sget(job, "metadata", "namespace"), "name", sget(job, "metadata", "name"),
                     "uid", sget(job, "metadata", "uid"), "apiVersion", "batch/v1",
                     "resourceVersion", sget(job, "metadata", "resourceVersion"));
}

static bool in_active(const json_t *status, const char *uid)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(status, "active"), i, r)
    {
        if (!strcmp(json_string_value(json_object_get(r, "uid")) ?: "", uid)) return true;
    }
    return false;
}

/* The Job for schedule time `scheduled` (upstream's getJobFromTemplate2). */
static json_t *job_from_template(const json_t *cj, const char *name, int64_t scheduled,
                                 const tz_zone *z)
{
    const json_t *jt = json_object_get(json_object_get(cj, "spec"), "jobTemplate");
    const json_t *jm = json_object_get(jt, "metadata");
    json_t *ref = podctl_controller_ref(cj);
    if (!ref) return NULL;
    json_t *labels = jcopy(json_object_get(jm, "labels"));
    json_t *ann = jcopy(json_object_get(jm, "annotations"));
    if (!json_is_object(labels)) {
        json_decref(labels);
        labels = json_object();
    }
    if (!json_is_object(ann)) {
        json_decref(ann);
        ann = json_object();
    }
    /* the scheduled time in the CronJob's zone, with its offset */
    tz_tm l;
    tz_local(z, scheduled, &l);
    int32_t off = tz_offset(z, scheduled);
    char ts[48];
    if (off == 0)
        snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02dZ", l.year, l.mon, l.mday, l.hour,
                 l.min, l.sec);
    else
        snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", l.year, l.mon, l.mday,
                 l.hour, l.min, l.sec, off < 0 ? '-' : '+', abs(off) / 3600, abs(off) / 60 % 60);
    json_object_set_new(ann, CRONJOB_SCHEDULED_ANNOTATION, json_string(ts));
    json_t *spec = jcopy(json_object_get(jt, "spec"));
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:o, s:o, s:[o]}, s:o}", "apiVersion", "batch/v1",
                     "kind", "Job", "metadata", "name", name, "namespace",
                     sget(cj, "metadata", "namespace"), "labels", labels, "annotations", ann,
                     "ownerReferences", ref, "spec", spec ? spec : json_object());
}

static void sync_cronjob(void *self, const char *key) /* workq_sync_fn */
{
    cj_ctrl *c = self;
    store_obj *o = store_get(c->st, key);
    if (!o) {
        workq_forget(c->q, key);
        return;
    }
    json_t *cj = store_obj_parse(o);
    store_obj_unref(o);
    if (!cj || json_object_get(json_object_get(cj, "metadata"), "deletionTimestamp")) {
        json_decref(cj);
        return;
    }
    const char *ns = sget(cj, "metadata", "namespace"), *uid = sget(cj, "metadata", "uid");
    const char *cjname = sget(cj, "metadata", "name");
    const json_t *spec = json_object_get(cj, "spec");
    json_t *old_status = json_object_get(cj, "status");
    json_t *status = json_is_object(old_status) ? jcopy(old_status) : json_object();
    json_t *active = json_array();
    json_t *jobs = json_array();
    int64_t now = clock_wall_ms() / 1000;
    tz_zone *z = NULL;
    api_err e;
    api_err_init(&e);

    /* 1. the CronJob's Jobs */
    char prefix[300];
    snprintf(prefix, sizeof prefix, JOB_PREFIX "%s/", ns);
    store_obj **objs = NULL;
    size_t n = 0;
    if (!status || !active || !jobs ||
        store_list(c->st, prefix, NULL, 0, &objs, &n, NULL, NULL) != 0) {
        workq_due(c->q, key, clock_wall_ms() + 1000);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *job = store_obj_parse(objs[i]);
        const char *ouid = NULL;
        if (job && cronjob_owner(job, &ouid) && ouid && !strcmp(ouid, uid) &&
            !json_object_get(json_object_get(job, "metadata"), "deletionTimestamp"))
            json_array_append(jobs, job);
        json_decref(job);
        store_obj_unref(objs[i]);
    }
    free(objs);
    size_t nj = json_array_size(jobs);
    cj_job *hist = calloc(nj ? nj : 1, sizeof *hist);
    if (!hist) goto out;
    int64_t last_ok = parse_time(json_string_value(json_object_get(status, "lastSuccessfulTime")));
    for (size_t i = 0; i < nj; i++) {
        json_t *job = json_array_get(jobs, i);
        bool complete = cond_true(job, "Complete"), failed = cond_true(job, "Failed");
        const char *jname = sget(job, "metadata", "name");
        hist[i].name = jname;
        hist[i].finished = complete || failed;
        hist[i].succeeded = complete;
        int64_t st = parse_time(sget(job, "status", "startTime"));
        hist[i].start = st >= 0 ? st : parse_time(sget(job, "metadata", "creationTimestamp"));
        if (!hist[i].finished) {
            json_array_append_new(active, job_ref(job));
            continue;
        }
        if (in_active(old_status, sget(job, "metadata", "uid"))) {
            char msg[600];
            snprintf(msg, sizeof msg, "Saw completed job: %s, status: %s", jname,
                     complete ? "Complete" : "Failed");
            event_record(c->st, cj, "Normal", "SawCompletedJob", msg, COMPONENT);
        }
        int64_t ct = parse_time(sget(job, "status", "completionTime"));
        if (complete && ct > last_ok) {
            last_ok = ct;
            json_object_set(status, "lastSuccessfulTime",
                            json_object_get(json_object_get(job, "status"), "completionTime"));
        }
    }

    /* 2. history limits */
    json_t *sl = json_object_get(spec, "successfulJobsHistoryLimit");
    json_t *fl = json_object_get(spec, "failedJobsHistoryLimit");
    if (cj_history(hist, nj, json_is_integer(sl) ? (int32_t)json_integer_value(sl) : -1,
                   json_is_integer(fl) ? (int32_t)json_integer_value(fl) : -1) > 0)
        for (size_t i = 0; i < nj; i++)
            if (hist[i].remove) delete_job(c, cj, json_array_get(jobs, i));
    free(hist);

    /* 3. the schedule */
    if (json_is_true(json_object_get(spec, "suspend"))) goto write;
    cron_sched sched;
    char err[512];
    if (cron_parse(sget(cj, "spec", "schedule"), &sched, err, sizeof err) != 0) {
        record(c, cj, "Warning", "UnparseableSchedule", "unparseable schedule: %s",
               sget(cj, "spec", "schedule"));
        goto write;
    }
    const char *tzname = json_string_value(json_object_get(spec, "timeZone"));
    z = tzname ? tz_load(NULL, tzname, err, sizeof err) : tz_utc();
    if (!z) {
        record(c, cj, "Warning", "UnknownTimeZone", "invalid timeZone: %s", tzname);
        goto write;
    }
    int64_t earliest = parse_time(json_string_value(json_object_get(status, "lastScheduleTime")));
    if (earliest < 0) earliest = parse_time(sget(cj, "metadata", "creationTimestamp"));
    json_t *sdsv = json_object_get(spec, "startingDeadlineSeconds");
    cj_due due;
    cj_due_times(&sched, z, earliest, now, json_is_integer(sdsv) ? json_integer_value(sdsv) : -1,
                 &due);
    if (due.next >= 0) workq_due(c->q, key, due.next * 1000 + 50);
    if (due.scheduled < 0) goto write;
    if (due.missed > CRONJOB_MISSED_MAX) {
        char m[32];
        snprintf(m, sizeof m, "%d", due.missed);
        record(c, cj, "Warning", "TooManyMissedTimes",
               "too many missed start times: %s. Set or decrease .spec.startingDeadlineSeconds "
               "or check clock skew",
               m);
    }
    char sched_ts[32];
    rfc3339_format(due.scheduled, sched_ts, sizeof sched_ts);
    if (due.too_late) {
        record(c, cj, "Warning", "MissSchedule", "Missed scheduled time to start a job: %s",
               sched_ts);
        goto write;
    }
    char jname[400];
    cj_job_name(cjname, due.scheduled, jname, sizeof jname);
    for (size_t i = 0; i < nj; i++)
        if (!strcmp(sget(json_array_get(jobs, i), "metadata", "name"), jname)) {
            json_object_set_new(status, "lastScheduleTime", json_string(sched_ts));
            goto write; /* made already */
        }
    cj_action act = cj_concurrency(sget(cj, "spec", "concurrencyPolicy"), json_array_size(active));
    if (act == CJ_SKIP) {
        record(c, cj, "Normal", "JobAlreadyActive",
               "Not starting job because prior execution is running and concurrency policy is "
               "Forbid%s",
               "");
        goto write;
    }
    if (act == CJ_REPLACE) {
        for (size_t i = 0; i < nj; i++) {
            json_t *job = json_array_get(jobs, i);
            if (!cond_true(job, "Complete") && !cond_true(job, "Failed")) delete_job(c, cj, job);
        }
        json_array_clear(active);
    }
    json_t *job = job_from_template(cj, jname, due.scheduled, z);
    json_t *made = NULL;
    api_err_init(&e);
    if (!job) {
        workq_due(c->q, key, clock_wall_ms() + 1000);
    } else if (reg_create(c->st, c->jobs, ns, job, false, &made, &e) == 0) {
        record(c, cj, "Normal", "SuccessfulCreate", "Created job %s", jname);
        json_array_append_new(active, job_ref(made));
        json_object_set_new(status, "lastScheduleTime", json_string(sched_ts));
    } else if (e.code == API_ALREADY_EXISTS) {
        json_object_set_new(status, "lastScheduleTime", json_string(sched_ts));
    } else {
        record(c, cj, "Warning", "FailedCreate", "Error creating job: %s", e.message);
        workq_due(c->q, key, clock_wall_ms() + 10000);
    }
    api_err_clear(&e);
    json_decref(made);
    json_decref(job);

write:
    /* 4. status */
    if (json_array_size(active))
        json_object_set(status, "active", active);
    else
        json_object_del(status, "active");
    if (!json_equal(status, json_is_object(old_status) ? old_status : NULL) &&
        !(json_object_size(status) == 0 && !old_status)) {
        json_t *outo = NULL;
        api_err_init(&e);
        if (ctrl_write_status(c->st, c->cronjobs, ns, cjname, uid, status, &outo, &e) != 0 &&
            e.code != API_NOT_FOUND)
            workq_due(c->q, key, clock_wall_ms() + 1000);
        json_decref(outo);
        api_err_clear(&e);
    }
out:
    tz_free(z);
    json_decref(jobs);
    json_decref(active);
    json_decref(status);
    json_decref(cj);
}

/* The queued CronJobs and those due (after each batch of events and at each
 * tick); due times are on the wall clock, as schedules are. */
static void cj_flush(void *self)
{
    cj_ctrl *c = self;
    workq_run(c->q, clock_wall_ms(), sync_cronjob, c, c->stop);
}

static void cj_resync(void *self)
{
    cj_ctrl *c = self;
    ctrl_mark_listed(c->st, CJ_PREFIX, c->q);
    cj_flush(c);
}

static void *cj_init(store *st, const atomic_bool *stop)
{
    cj_ctrl *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->st = st;
    c->stop = stop;
    c->cronjobs = api_kind_find("batch", "v1", "cronjobs");
    c->jobs = api_kind_find("batch", "v1", "jobs");
    c->q = workq_new();
    if (!c->q || !c->cronjobs || !c->jobs) {
        workq_free(c->q);
        free(c);
        return NULL;
    }
    return c;
}

static void cj_fini(void *self)
{
    cj_ctrl *c = self;
    if (!c) return;
    workq_free(c->q);
    free(c);
}

static int cj_wait_ms(void *self)
{
    return ctrl_workq_wait_ms(((cj_ctrl *)self)->q, clock_wall_ms()); /* its times are wall clock */
}

const ctrl_def ctrl_cronjob_def = {"cronjob", cj_init,  cj_fini,  cj_event,  cj_flush,
                                   cj_resync, cj_flush, cj_takes, cj_wait_ms};
