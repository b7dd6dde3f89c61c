/* batch_kinds.c - Job and CronJob defaults and validation (see batch_kinds.h). */
#include "api/batch_kinds.h"
#include "core/jdump.h"

#include "api/objects.h"
#include "api/pod_validation.h"
#include "api/status.h"
#include "api/validation.h"
#include "core/cron.h"
#include "core/selector.h"
#include "core/tz.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static json_t *get(const json_t *o, const char *k)
{
    return json_object_get(o, k);
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(get(o, k));
    return s ? s : "";
}

/* ---- defaults ---- */

/* SetDefaults_PodSpec on a template's spec: pod_defaults on a stand-in pod,
 * without what admission (not defaulting) adds to pods. */
static void template_defaults(json_t *tmpl)
{
    if (!json_is_object(tmpl)) return;
    json_t *spec = get(tmpl, "spec");
    if (!json_is_object(spec)) return;
    static const char *const admission_only[] = {"serviceAccountName", "serviceAccount",
                                                 "preemptionPolicy", "priority", NULL};
    bool had[4];
    for (int i = 0; admission_only[i]; i++)
        had[i] = get(spec, admission_only[i]) != NULL;
    json_t *pod = json_pack("{s:O}", "spec", spec);
    if (!pod) return;
    pod_defaults(pod);
    json_t *ds = get(pod, "spec");
    for (int i = 0; admission_only[i]; i++)
        if (!had[i]) json_object_del(ds, admission_only[i]);
    json_object_set(tmpl, "spec", ds);
    json_decref(pod);
}

static void set_default_label(json_t *labels, const char *k, const char *v)
{
    if (!get(labels, k)) json_object_set_new(labels, k, json_string(v));
}

/* The Job strategy's generateSelector. */
static void generate_selector(json_t *obj, json_t *spec)
{
    json_t *meta = get(obj, "metadata");
    const char *uid = str(meta, "uid"), *name = str(meta, "name");
    if (json_is_true(get(spec, "manualSelector")) || !*uid) return;
    json_t *tmeta = json_object_ensure(json_object_ensure(spec, "template"), "metadata");
    json_t *labels = json_object_ensure(tmeta, "labels");
    set_default_label(labels, JOB_LABEL_CONTROLLER_UID, uid);
    set_default_label(labels, JOB_LABEL_JOB_NAME, name);
    set_default_label(labels, JOB_LABEL_LEGACY_UID, uid);
    set_default_label(labels, JOB_LABEL_LEGACY_NAME, name);
    json_t *sel = json_object_ensure(spec, "selector");
    set_default_label(json_object_ensure(sel, "matchLabels"), JOB_LABEL_CONTROLLER_UID, uid);
}

static void job_spec_defaults(json_t *spec)
{
    if (!get(spec, "completions") && !get(spec, "parallelism")) {
        json_object_set_new(spec, "completions", json_integer(1));
        json_object_set_new(spec, "parallelism", json_integer(1));
    }
    json_default_new(spec, "parallelism", json_integer(1));
    json_default_new(spec, "backoffLimit", json_integer(6));
    json_default_new(spec, "completionMode", json_string("NonIndexed"));
    json_default_new(spec, "suspend", json_false());
    json_default_new(spec, "podReplacementPolicy",
                     json_string(get(spec, "podFailurePolicy") ? "Failed" : "TerminatingOrFailed"));
    template_defaults(get(spec, "template"));
}

void job_defaults(json_t *obj)
{
    json_t *spec = json_object_ensure(obj, "spec");
    job_spec_defaults(spec);
    generate_selector(obj, spec);
    json_t *meta = json_object_ensure(obj, "metadata");
    json_t *tl = get(get(get(spec, "template"), "metadata"), "labels");
    if (json_object_size(tl) && !json_object_size(get(meta, "labels")))
        json_object_set_new(meta, "labels", jcopy(tl));
    json_object_ensure(obj, "status"); /* upstream's empty JobStatus: {} */
}

void cronjob_defaults(json_t *obj)
{
    json_t *spec = json_object_ensure(obj, "spec");
    json_default_new(spec, "concurrencyPolicy", json_string("Allow"));
    json_default_new(spec, "suspend", json_false());
    json_default_new(spec, "successfulJobsHistoryLimit", json_integer(3));
    json_default_new(spec, "failedJobsHistoryLimit", json_integer(1));
    json_t *jt = get(spec, "jobTemplate");
    template_defaults(get(get(jt, "spec"), "template"));
    json_object_ensure(obj, "status");
}

/* ---- validation ---- */

static void nonnegative(const json_t *spec, const char *key, const char *path, json_t *causes)
{
    json_t *v = get(spec, key);
    if (json_is_integer(v) && json_integer_value(v) < 0) {
        char f[256];
        snprintf(f, sizeof f, "%s.%s", path, key);
        ferr_add(causes, FERR_INVALID, f, v, "must be greater than or equal to 0");
    }
}

/* The template's pod spec validated as a pod's, causes under `path`. */
static void validate_template(const json_t *tmpl, const char *path, json_t *causes)
{
    char f[600];
    const json_t *tspec = get(tmpl, "spec");
    const char *rp = str(tspec, "restartPolicy");
    if (strcmp(rp, "OnFailure") && strcmp(rp, "Never")) {
        snprintf(f, sizeof f, "%.200s.spec.restartPolicy", path);
        json_t *v = json_string(rp);
        ferr_add(causes, FERR_NOT_SUPPORTED, f, v, "supported values: \"OnFailure\", \"Never\"");
        json_decref(v);
    }
    json_t *labels = get(get(tmpl, "metadata"), "labels");
    if (labels) {
        snprintf(f, sizeof f, "%.200s.metadata.labels", path);
        val_labels(labels, f, causes);
    }
    json_t *pod = json_pack("{s:O?}", "spec", (json_t *)tspec);
    json_t *sub = json_array();
    if (!pod || !sub) {
        json_decref(pod);
        json_decref(sub);
        return;
    }
    pod_validate_create(pod, sub);
    size_t i;
    json_t *c;
    json_array_foreach(sub, i, c)
    {
        snprintf(f, sizeof f, "%.200s.%.300s", path, str(c, "field"));
        json_object_set_new(c, "field", json_string(f));
        json_array_append(causes, c);
    }
    json_decref(sub);
    json_decref(pod);
}

/* ValidateJobSpec's checks common to Jobs and CronJobs' job templates. */
static void validate_job_spec(const json_t *spec, const char *path, json_t *causes)
{
    char f[256];
    static const char *const nonneg[] = {"parallelism",
                                         "completions",
                                         "activeDeadlineSeconds",
                                         "backoffLimit",
                                         "ttlSecondsAfterFinished",
                                         NULL};
    for (int i = 0; nonneg[i]; i++)
        nonnegative(spec, nonneg[i], path, causes);
    json_t *mode = get(spec, "completionMode");
    if (mode && strcmp(str(spec, "completionMode"), "NonIndexed") &&
        strcmp(str(spec, "completionMode"), "Indexed")) {
        snprintf(f, sizeof f, "%s.completionMode", path);
        ferr_add(causes, FERR_NOT_SUPPORTED, f, mode,
                 "supported values: \"NonIndexed\", \"Indexed\"");
    }
    if (!strcmp(str(spec, "completionMode"), "Indexed") &&
        !json_is_integer(get(spec, "completions"))) {
        snprintf(f, sizeof f, "%s.completions", path);
        ferr_add(causes, FERR_REQUIRED, f, NULL, "when completion mode is Indexed");
    }
    json_t *prp = get(spec, "podReplacementPolicy");
    if (prp && strcmp(str(spec, "podReplacementPolicy"), "TerminatingOrFailed") &&
        strcmp(str(spec, "podReplacementPolicy"), "Failed")) {
        snprintf(f, sizeof f, "%s.podReplacementPolicy", path);
        ferr_add(causes, FERR_NOT_SUPPORTED, f, prp,
                 "supported values: \"Failed\", \"TerminatingOrFailed\"");
    }
    snprintf(f, sizeof f, "%s.template", path);
    validate_template(get(spec, "template"), f, causes);
}

void job_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    const json_t *spec = get(obj, "spec"), *meta = get(obj, "metadata");
    validate_job_spec(spec, "spec", causes);
    const json_t *sel = get(spec, "selector");
    json_t *tlabels = get(get(get(spec, "template"), "metadata"), "labels");
    if (!json_is_object(sel)) {
        ferr_add(causes, FERR_REQUIRED, "spec.selector", NULL, NULL);
        return;
    }
    val_label_selector(sel, "spec.selector", causes);
    if (!json_is_true(get(spec, "manualSelector"))) {
        const char *uid = str(meta, "uid");
        json_t *ml = get(sel, "matchLabels");
        if (*uid && (json_object_size(ml) != 1 || strcmp(str(ml, JOB_LABEL_CONTROLLER_UID), uid) ||
                     json_array_size(get(sel, "matchExpressions")))) {
            ferr_add(causes, FERR_INVALID, "spec.selector", sel, "`selector` not auto-generated");
            return;
        }
    }
    char err[256];
    sel_t *s = sel_from_json(sel, err, sizeof err);
    if (s) {
        if (!sel_matches(s, tlabels))
            ferr_add(causes, FERR_INVALID, "spec.template.metadata.labels", tlabels,
                     "`selector` does not match template `labels`");
        sel_free(s);
    }
}

static void immutable(const json_t *spec, const json_t *ospec, const char *key, json_t *causes)
{
    if (!json_equal(get(spec, key), get(ospec, key))) {
        char f[128];
        snprintf(f, sizeof f, "spec.%s", key);
        ferr_add(causes, FERR_INVALID, f, get(spec, key), VAL_FIELD_IMMUTABLE);
    }
}

void job_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes)
{
    if (sub && *sub) return; /* status: the controller's */
    const json_t *spec = get(obj, "spec"), *ospec = get(old, "spec");
    immutable(spec, ospec, "selector", causes);
    immutable(spec, ospec, "completionMode", causes);
    immutable(spec, ospec, "completions", causes);
    /* As upstream: the template of a suspended Job that never started may
     * change (a queue sets node affinity before it starts). */
    bool open = json_is_true(get(ospec, "suspend")) && !get(get(old, "status"), "startTime");
    if (!open) immutable(spec, ospec, "template", causes);
}

static void validate_time_zone(const json_t *spec, json_t *causes)
{
    json_t *tzv = get(spec, "timeZone");
    if (!tzv || json_is_null(tzv)) return;
    const char *name = json_string_value(tzv);
    if (!name || !*name) {
        ferr_add(causes, FERR_INVALID, "spec.timeZone", tzv,
                 "timeZone must be nil or non-empty string");
        return;
    }
    if (!strcasecmp(name, "Local")) {
        ferr_add(causes, FERR_INVALID, "spec.timeZone", tzv,
                 "timeZone must be an explicit time zone as defined in "
                 "https://www.iana.org/time-zones");
        return;
    }
    char err[300];
    tz_zone *z = tz_load(NULL, name, err, sizeof err);
    if (!z) ferr_add(causes, FERR_INVALID, "spec.timeZone", tzv, err);
    tz_free(z);
}

void cronjob_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    const json_t *spec = get(obj, "spec"), *meta = get(obj, "metadata");
    const char *name = str(meta, "name");
    if (strlen(name) > CRONJOB_NAME_MAX) {
        json_t *v = json_string(name);
        ferr_add(causes, FERR_INVALID, "metadata.name", v, "must be no more than 52 characters");
        json_decref(v);
    }
    json_t *schedv = get(spec, "schedule");
    const char *sched = str(spec, "schedule");
    if (!*sched) {
        ferr_add(causes, FERR_REQUIRED, "spec.schedule", NULL, NULL);
    } else {
        cron_sched cs;
        char err[512];
        if (cron_parse(sched, &cs, err, sizeof err) != 0)
            ferr_add(causes, FERR_INVALID, "spec.schedule", schedv, err);
        bool old_tz = old && strstr(str(get(old, "spec"), "schedule"), "TZ");
        if (strstr(sched, "TZ")) {
            if (!old_tz)
                ferr_add(causes, FERR_INVALID, "spec.schedule", schedv,
                         "cannot use TZ or CRON_TZ in schedule, use timeZone field instead");
            else if (get(spec, "timeZone"))
                ferr_add(causes, FERR_INVALID, "spec.schedule", schedv,
                         "cannot use both timeZone field and TZ or CRON_TZ in schedule");
        }
    }
    validate_time_zone(spec, causes);
    json_t *cp = get(spec, "concurrencyPolicy");
    const char *cps = str(spec, "concurrencyPolicy");
    if (!*cps)
        ferr_add(causes, FERR_REQUIRED, "spec.concurrencyPolicy", NULL, NULL);
    else if (strcmp(cps, "Allow") && strcmp(cps, "Forbid") && strcmp(cps, "Replace"))
        ferr_add(causes, FERR_NOT_SUPPORTED, "spec.concurrencyPolicy", cp,
                 "supported values: \"Allow\", \"Forbid\", \"Replace\"");
    nonnegative(spec, "startingDeadlineSeconds", "spec", causes);
    nonnegative(spec, "successfulJobsHistoryLimit", "spec", causes);
    nonnegative(spec, "failedJobsHistoryLimit", "spec", causes);
    const json_t *jspec = get(get(spec, "jobTemplate"), "spec");
    if (get(jspec, "selector") && !json_is_true(get(jspec, "manualSelector")))
        ferr_add(causes, FERR_INVALID, "spec.jobTemplate.spec.selector", get(jspec, "selector"),
                 "`selector` will be auto-generated");
    validate_job_spec(jspec, "spec.jobTemplate.spec", causes);
}
