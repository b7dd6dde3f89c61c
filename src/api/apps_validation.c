/* apps_validation.c - the workload kinds' validation (see apps_validation.h). */
#include "api/apps_validation.h"
#include "core/jdump.h"

#include "api/objects.h"
#include "api/pod_validation.h"
#include "api/status.h"
#include "api/validation.h"
#include "core/dbuf.h"
#include "core/selector.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const json_t *path2(const json_t *o, const char *a, const char *b)
{
    return json_object_get(json_object_get(o, a), b);
}

/* A cause whose value is written as Go's %#v writes a map[string]string:
 * map[string]string{"a":"b", "c":"d"} (keys sorted). */
static void invalid_map(json_t *causes, const char *field, const json_t *m, const char *detail)
{
    dbuf b;
    dbuf_init(&b, 1 << 16);
    dbuf_adds(&b, "Invalid value: map[string]string{");
    const char **keys = NULL;
    size_t n = json_object_size(m), k = 0;
    if (n && (keys = malloc(n * sizeof *keys))) {
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)m, key, v) keys[k++] = key;
        for (size_t i = 1; i < k; i++) /* insertion sort: a few labels */
            for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
                const char *t = keys[j];
                keys[j] = keys[j - 1];
                keys[j - 1] = t;
            }
        for (size_t i = 0; i < k; i++) {
            const char *v = json_string_value(json_object_get(m, keys[i]));
            dbuf_printf(&b, "%s\"%s\":\"%s\"", i ? ", " : "", keys[i], v ? v : "");
        }
    }
    free(keys);
    dbuf_printf(&b, "}: %s", detail);
    json_array_append_new(causes, json_pack("{s:s, s:s, s:s}", "reason", "FieldValueInvalid",
                                            "message", b.p ? b.p : "", "field", field));
    dbuf_free(&b);
}

static void nonnegative(json_t *causes, const json_t *v, const char *field)
{
    if (json_is_integer(v) && json_integer_value(v) < 0)
        ferr_add(causes, FERR_INVALID, field, v, "must be greater than or equal to 0");
}

/* The template's pod spec, validated as a pod's: its causes under
 * spec.template. */
static void template_pod_spec(const json_t *tmpl, json_t *causes)
{
    json_t *pod = json_pack("{s:{s:s}, s:O*}", "metadata", "name", "template", "spec",
                            json_object_get(tmpl, "spec"));
    json_t *spec = pod ? jcopy(json_object_get(pod, "spec")) : NULL;
    json_t *mine = json_array();
    if (!pod || !mine || (spec && json_object_set_new(pod, "spec", spec) != 0)) {
        json_decref(pod);
        json_decref(mine);
        return;
    }
    pod_defaults(pod);
    pod_validate_create(pod, mine);
    size_t i;
    json_t *c;
    json_array_foreach(mine, i, c)
    {
        const char *f = json_string_value(json_object_get(c, "field"));
        char field[1024];
        snprintf(field, sizeof field, "spec.template.%s", f ? f : "spec");
        json_object_set_new(c, "field", json_string(field));
        json_array_append(causes, c);
    }
    json_decref(mine);
    json_decref(pod);
}

/* ValidatePodTemplateSpecForReplicaSet (and ForRC, ForStatefulSet,
 * daemon sets' checks): labels match, pod spec, restart policy Always, no
 * activeDeadlineSeconds. `kind` names the kind in the last message. */
static void template_for(const json_t *tmpl, const sel_t *sel, const char *kind, json_t *causes)
{
    if (!json_is_object(tmpl)) {
        ferr_add(causes, FERR_REQUIRED, "spec.template", NULL, NULL);
        return;
    }
    const json_t *labels = path2(tmpl, "metadata", "labels");
    val_labels(labels, "spec.template.metadata.labels", causes);
    if (sel && !sel_empty(sel) && !sel_matches(sel, labels))
        invalid_map(causes, "spec.template.metadata.labels", labels,
                    "`selector` does not match template `labels`");
    template_pod_spec(tmpl, causes);
    const char *rp = json_string_value(path2(tmpl, "spec", "restartPolicy"));
    if (rp && strcmp(rp, "Always") != 0)
        ferr_add_str(causes, FERR_NOT_SUPPORTED, "spec.template.spec.restartPolicy", rp,
                     "supported values: \"Always\"");
    if (path2(tmpl, "spec", "activeDeadlineSeconds") &&
        !json_is_null(path2(tmpl, "spec", "activeDeadlineSeconds"))) {
        char msg[128];
        snprintf(msg, sizeof msg, "activeDeadlineSeconds in %s is not Supported", kind);
        ferr_add(causes, FERR_FORBIDDEN, "spec.template.spec.activeDeadlineSeconds", NULL, msg);
    }
}

/* The apps/v1 selector and template: required, valid, not empty, matched by
 * the template's labels. `what` is upstream's word in "empty selector is
 * invalid for <what>". */
static void selector_and_template(const json_t *spec, const char *what, const char *kind,
                                  json_t *causes)
{
    const json_t *ls = json_object_get(spec, "selector");
    sel_t *sel = NULL;
    if (!ls || json_is_null(ls)) {
        ferr_add(causes, FERR_REQUIRED, "spec.selector", NULL, NULL);
    } else {
        val_label_selector(ls, "spec.selector", causes);
        if (json_object_size(json_object_get(ls, "matchLabels")) +
                json_array_size(json_object_get(ls, "matchExpressions")) ==
            0) {
            char msg[96];
            snprintf(msg, sizeof msg, "empty selector is invalid for %s", what);
            ferr_add(causes, FERR_INVALID, "spec.selector", ls, msg);
        }
        char err[256];
        if (!(sel = sel_from_json(ls, err, sizeof err)))
            ferr_add(causes, FERR_INVALID, "spec.selector", ls, "invalid label selector");
    }
    /* upstream checks the template only when the selector converts */
    if (sel || !ls || json_is_null(ls))
        template_for(json_object_get(spec, "template"), sel, kind, causes);
    sel_free(sel);
}

/* ValidatePositiveIntOrPercent */
static bool int_or_percent(const json_t *v, const char *field, json_t *causes)
{
    if (!v || json_is_null(v)) return true;
    if (json_is_integer(v)) {
        nonnegative(causes, v, field);
        return json_integer_value(v) >= 0;
    }
    const char *s = json_string_value(v);
    size_t n = s ? strlen(s) : 0;
    bool ok = n >= 2 && s[n - 1] == '%';
    for (size_t i = 0; ok && i + 1 < n; i++)
        ok = s[i] >= '0' && s[i] <= '9';
    if (!ok)
        ferr_add(causes, FERR_INVALID, field, v,
                 s ? "a valid percent string must be a numeric string followed by an ending '%' "
                     "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
                   : "must be an integer or percentage (e.g '5%')");
    return ok;
}

/* getIntOrPercentValue: the number, percent or not. */
static long ios_value(const json_t *v)
{
    if (json_is_integer(v)) return (long)json_integer_value(v);
    const char *s = json_string_value(v);
    return s ? strtol(s, NULL, 10) : 0;
}

static void deployment_strategy(const json_t *st, json_t *causes)
{
    const char *type = json_string_value(json_object_get(st, "type"));
    const json_t *ru = json_object_get(st, "rollingUpdate");
    if (type && !strcmp(type, "Recreate")) {
        if (ru && !json_is_null(ru))
            ferr_add(causes, FERR_FORBIDDEN, "spec.strategy.rollingUpdate", NULL,
                     "may not be specified when strategy `type` is 'Recreate'");
    } else if (type && !strcmp(type, "RollingUpdate")) {
        if (!ru || json_is_null(ru)) {
            ferr_add(causes, FERR_REQUIRED, "spec.strategy.rollingUpdate", NULL,
                     "this should be defaulted and never be nil");
            return;
        }
        const json_t *mu = json_object_get(ru, "maxUnavailable"),
                     *ms = json_object_get(ru, "maxSurge");
        bool ok = int_or_percent(mu, "spec.strategy.rollingUpdate.maxUnavailable", causes);
        ok &= int_or_percent(ms, "spec.strategy.rollingUpdate.maxSurge", causes);
        if (ios_value(mu) == 0 && ios_value(ms) == 0) {
            json_t *zero = json_integer(0);
            ferr_add(causes, FERR_INVALID, "spec.strategy.rollingUpdate.maxUnavailable",
                     mu ? mu : zero, "may not be 0 when `maxSurge` is 0");
            json_decref(zero);
        }
        if (ok && json_is_string(mu) && ios_value(mu) > 100)
            ferr_add(causes, FERR_INVALID, "spec.strategy.rollingUpdate.maxUnavailable", mu,
                     "must not be greater than 100%");
    } else {
        ferr_add_str(causes, FERR_NOT_SUPPORTED, "spec.strategy", type ? type : "",
                     "supported values: \"Recreate\", \"RollingUpdate\"");
    }
}

void deployment_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    const json_t *spec = json_object_get(obj, "spec");
    nonnegative(causes, json_object_get(spec, "replicas"), "spec.replicas");
    selector_and_template(spec, "deployment", "ReplicaSet", causes);
    deployment_strategy(json_object_get(spec, "strategy"), causes);
    const json_t *mrs = json_object_get(spec, "minReadySeconds");
    nonnegative(causes, mrs, "spec.minReadySeconds");
    nonnegative(causes, json_object_get(spec, "revisionHistoryLimit"), "spec.revisionHistoryLimit");
    const json_t *pds = json_object_get(spec, "progressDeadlineSeconds");
    if (json_is_integer(pds)) {
        nonnegative(causes, pds, "spec.progressDeadlineSeconds");
        if (json_integer_value(pds) <= json_integer_value(mrs))
            ferr_add(causes, FERR_INVALID, "spec.progressDeadlineSeconds", pds,
                     "must be greater than minReadySeconds");
    }
}

void replicaset_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    const json_t *spec = json_object_get(obj, "spec");
    nonnegative(causes, json_object_get(spec, "replicas"), "spec.replicas");
    nonnegative(causes, json_object_get(spec, "minReadySeconds"), "spec.minReadySeconds");
    selector_and_template(spec, "deployment", "ReplicaSet", causes);
}

static void one_of(json_t *causes, const json_t *o, const char *key, const char *field,
                   const char *a, const char *b)
{
    const char *v = json_string_value(json_object_get(o, key));
    if (!v || !strcmp(v, a) || !strcmp(v, b)) return;
    char sup[128];
    snprintf(sup, sizeof sup, "supported values: \"%s\", \"%s\"", a, b);
    ferr_add_str(causes, FERR_NOT_SUPPORTED, field, v, sup);
}

void statefulset_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    const json_t *spec = json_object_get(obj, "spec");
    nonnegative(causes, json_object_get(spec, "replicas"), "spec.replicas");
    nonnegative(causes, json_object_get(spec, "minReadySeconds"), "spec.minReadySeconds");
    one_of(causes, spec, "podManagementPolicy", "spec.podManagementPolicy", "OrderedReady",
           "Parallel");
    one_of(causes, json_object_get(spec, "updateStrategy"), "type", "spec.updateStrategy.type",
           "OnDelete", "RollingUpdate");
    selector_and_template(spec, "statefulset", "StatefulSet", causes);
}

void daemonset_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    const json_t *spec = json_object_get(obj, "spec");
    nonnegative(causes, json_object_get(spec, "minReadySeconds"), "spec.minReadySeconds");
    one_of(causes, json_object_get(spec, "updateStrategy"), "type", "spec.updateStrategy.type",
           "OnDelete", "RollingUpdate");
    selector_and_template(spec, "daemonset", "DaemonSet", causes);
}

void replicationcontroller_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    const json_t *spec = json_object_get(obj, "spec");
    nonnegative(causes, json_object_get(spec, "minReadySeconds"), "spec.minReadySeconds");
    const json_t *sel = json_object_get(spec, "selector");
    if (json_object_size(sel) == 0) ferr_add(causes, FERR_REQUIRED, "spec.selector", NULL, NULL);
    val_labels(sel, "spec.selector", causes);
    nonnegative(causes, json_object_get(spec, "replicas"), "spec.replicas");
    json_t *ls = sel ? json_pack("{s:O}", "matchLabels", sel) : json_pack("{s:{}}", "matchLabels");
    char err[256];
    sel_t *s = ls ? sel_from_json(ls, err, sizeof err) : NULL;
    json_decref(ls);
    template_for(json_object_get(spec, "template"), s, "ReplicationController", causes);
    sel_free(s);
}

void apps_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes)
{
    (void)sub;
    const json_t *now = path2(obj, "spec", "selector"), *was = path2(old, "spec", "selector");
    if (!json_equal(now ? now : json_null(), was ? was : json_null()))
        ferr_add(causes, FERR_INVALID, "spec.selector", now, "field is immutable");
}
