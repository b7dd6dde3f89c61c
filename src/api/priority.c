/* priority.c - PriorityClass validation and Priority admission (priority.h).
 *
 * Invariant: system-node-critical and system-cluster-critical always
 * resolve, whether or not the caller's class list holds them yet.
 */
#include "api/priority.h"

#include "core/names.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PREEMPT_LOWER "PreemptLowerPriority"
#define PREEMPT_NEVER "Never"

static const struct {
    const char *name;
    int32_t value;
    const char *description;
} system_classes[] = {
    {PRIORITY_SYSTEM_NODE_CRITICAL, PRIORITY_SYSTEM_CRITICAL + 1000,
     "Used for system critical pods that must not be moved from their current node."},
    {PRIORITY_SYSTEM_CLUSTER_CRITICAL, PRIORITY_SYSTEM_CRITICAL,
     "Used for system critical pods that must run in the cluster, but can be moved to another "
     "node if necessary."},
};
#define NSYSTEM (sizeof system_classes / sizeof *system_classes)

static const char *meta_name(const json_t *obj)
{
    const char *s = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    return s ? s : "";
}

static json_int_t pc_value(const json_t *pc)
{
    return json_integer_value(json_object_get(pc, "value"));
}

static bool pc_global_default(const json_t *pc)
{
    return json_is_true(json_object_get(pc, "globalDefault"));
}

json_t *priority_system_classes(void)
{
    json_t *list = json_array();
    for (size_t i = 0; i < NSYSTEM; i++)
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:{s:s}, s:I, s:b, s:s, s:s}", "apiVersion",
                            "scheduling.k8s.io/v1", "kind", "PriorityClass", "metadata", "name",
                            system_classes[i].name, "value", (json_int_t)system_classes[i].value,
                            "globalDefault", 0, "description", system_classes[i].description,
                            "preemptionPolicy", PREEMPT_LOWER));
    return list;
}

/* ---- errors ---- */

/* admission.NewForbidden / apierrors.NewForbidden: `<gr> "<name>" is forbidden: <msg>`. */
static int forbidden(api_err *e, const char *group, const char *resource, const char *name,
                     const char *msg)
{
    char qname[300];
    name_go_quote(name, qname, sizeof qname);
    api_err_set(e, API_FORBIDDEN, "%s%s%s %s is forbidden: %s", resource, *group ? "." : "", group,
                qname, msg);
    api_err_details(e, name, group, resource);
    return -1;
}

static const char *pod_name(const json_t *pod)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (!name || !*name) name = json_string_value(json_object_get(meta, "generateName"));
    return name && *name ? name : "Unknown";
}

/* ---- validation ---- */

/* IsKnownSystemPriorityClass: NULL when known, else upstream's reason. */
static const char *unknown_system_class(const json_t *pc, char *buf, size_t n)
{
    const char *name = meta_name(pc);
    for (size_t i = 0; i < NSYSTEM; i++) {
        if (strcmp(system_classes[i].name, name) != 0) continue;
        if (pc_value(pc) != system_classes[i].value) {
            snprintf(buf, n, "value of %s PriorityClass must be %" PRId32, name,
                     system_classes[i].value);
            return buf;
        }
        if (pc_global_default(pc)) {
            snprintf(buf, n, "globalDefault of %s PriorityClass must be false", name);
            return buf;
        }
        return NULL;
    }
    snprintf(buf, n, "%s is not a known system priority class", name);
    return buf;
}

static void validate_preemption_policy(const json_t *pp, json_t *causes)
{
    if (!pp || json_is_null(pp)) return;
    const char *s = json_string_value(pp);
    if (s && (strcmp(s, PREEMPT_LOWER) == 0 || strcmp(s, PREEMPT_NEVER) == 0)) return;
    if (s && !*s) {
        ferr_add(causes, FERR_REQUIRED, "preemptionPolicy", NULL, NULL);
        return;
    }
    ferr_add(causes, FERR_NOT_SUPPORTED, "preemptionPolicy", pp,
             "supported values: \"" PREEMPT_LOWER "\", \"" PREEMPT_NEVER "\"");
}

static bool same_json(const json_t *a, const json_t *b)
{
    if (json_is_null(a)) a = NULL;
    if (json_is_null(b)) b = NULL;
    if (!a || !b) return a == b;
    return json_equal((json_t *)a, (json_t *)b);
}

void priorityclass_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    const json_t *v = json_object_get(obj, "value");
    if (v && (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
              json_integer_value(v) > INT32_MAX)) {
        /* A decoding error upstream, reported alone as decoding would be. */
        ferr_add(causes, FERR_INVALID, "value", v, "must be a 32-bit integer");
        return;
    }
    char why[256];
    const char *name = meta_name(obj);
    if (strncmp(name, PRIORITY_SYSTEM_PREFIX, strlen(PRIORITY_SYSTEM_PREFIX)) == 0) {
        const char *err = unknown_system_class(obj, why, sizeof why);
        if (err)
            ferr_addf(causes, FERR_FORBIDDEN, "metadata.name", NULL,
                      "priority class names with '" PRIORITY_SYSTEM_PREFIX
                      "' prefix are reserved for system use only. error: %s",
                      err);
    } else if (pc_value(obj) > PRIORITY_HIGHEST_USER_DEFINABLE) {
        ferr_addf(causes, FERR_FORBIDDEN, "value", NULL,
                  "maximum allowed value of a user defined priority is %d",
                  PRIORITY_HIGHEST_USER_DEFINABLE);
    }
    const json_t *pp = json_object_get(obj, "preemptionPolicy");
    validate_preemption_policy(pp, causes);
    if (!old) return;
    if (pc_value(obj) != pc_value(old))
        ferr_add(causes, FERR_FORBIDDEN, "value", NULL, "may not be changed in an update.");
    if (!same_json(pp, json_object_get(old, "preemptionPolicy")))
        ferr_add(causes, FERR_INVALID, "preemptionPolicy", json_is_null(pp) ? NULL : pp,
                 "field is immutable");
}

/* getDefaultPriorityClass: with several (a race), the lowest value wins. */
static const json_t *default_class(const json_t *const *classes, size_t n)
{
    const json_t *best = NULL;
    for (size_t i = 0; i < n; i++)
        if (pc_global_default(classes[i]) && (!best || pc_value(best) > pc_value(classes[i])))
            best = classes[i];
    return best;
}

int priority_check_global_default(const json_t *pc, bool update, const json_t *const *classes,
                                  size_t n, api_err *e)
{
    if (!pc_global_default(pc)) return 0;
    const json_t *dpc = default_class(classes, n);
    if (!dpc || (update && strcmp(meta_name(dpc), meta_name(pc)) == 0)) return 0;
    char msg[600];
    snprintf(msg, sizeof msg,
             "PriorityClass %s is already marked as default. Only one default can exist",
             meta_name(dpc));
    return forbidden(e, "scheduling.k8s.io", "priorityclasses", meta_name(pc), msg);
}

int priority_check_delete(const char *name, api_err *e)
{
    for (size_t i = 0; i < NSYSTEM; i++)
        if (strcmp(name, system_classes[i].name) == 0)
            return forbidden(e, "scheduling.k8s.io", name, name,
                             "this is a system priority class and cannot be deleted");
    return 0;
}

/* ---- admission ---- */

typedef struct {
    const char *name; /* class name to record, "" for none */
    json_int_t value;
    const char *preemption; /* NULL: the class sets none */
} resolved;

static bool resolve_named(const char *name, const json_t *const *classes, size_t n, resolved *r)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(meta_name(classes[i]), name) != 0) continue;
        r->name = name;
        r->value = pc_value(classes[i]);
        r->preemption = json_string_value(json_object_get(classes[i], "preemptionPolicy"));
        return true;
    }
    for (size_t i = 0; i < NSYSTEM; i++) {
        if (strcmp(system_classes[i].name, name) != 0) continue;
        r->name = name;
        r->value = system_classes[i].value;
        r->preemption = PREEMPT_LOWER;
        return true;
    }
    return false;
}

static void resolve_default(const json_t *const *classes, size_t n, resolved *r)
{
    const json_t *dpc = default_class(classes, n);
    if (dpc) {
        r->name = meta_name(dpc);
        r->value = pc_value(dpc);
        r->preemption = json_string_value(json_object_get(dpc, "preemptionPolicy"));
    } else { /* DefaultPriorityWhenNoDefaultClassExists */
        r->name = "";
        r->value = 0;
        r->preemption = PREEMPT_LOWER;
    }
}

int priority_admit_pod(json_t *pod, const json_t *const *classes, size_t n, api_err *e)
{
    json_t *spec = json_object_get(pod, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(pod, "spec", spec);
    }
    const char *pcname = json_string_value(json_object_get(spec, "priorityClassName"));
    char msg[700];
    resolved r;
    if (!pcname || !*pcname) {
        resolve_default(classes, n, &r);
    } else if (!resolve_named(pcname, classes, n, &r)) {
        snprintf(msg, sizeof msg, "no PriorityClass with name %s was found", pcname);
        return forbidden(e, "", "pods", pod_name(pod), msg);
    }
    const json_t *have = json_object_get(spec, "priority");
    if (json_is_integer(have) && json_integer_value(have) != r.value) {
        snprintf(msg, sizeof msg,
                 "the integer value of priority (%" JSON_INTEGER_FORMAT
                 ") must not be provided in pod spec; priority admission controller computed "
                 "%" JSON_INTEGER_FORMAT " from the given PriorityClass name",
                 json_integer_value(have), r.value);
        return forbidden(e, "", "pods", pod_name(pod), msg);
    }
    const char *pp = json_string_value(json_object_get(spec, "preemptionPolicy"));
    if (r.preemption && pp && strcmp(pp, r.preemption) != 0) {
        snprintf(msg, sizeof msg,
                 "the string value of PreemptionPolicy (%s) must not be provided in pod spec; "
                 "priority admission controller computed %s from the given PriorityClass name",
                 pp, r.preemption);
        return forbidden(e, "", "pods", pod_name(pod), msg);
    }
    if (*r.name && (!pcname || !*pcname))
        json_object_set_new(spec, "priorityClassName", json_string(r.name));
    json_object_set_new(spec, "priority", json_integer(r.value));
    if (r.preemption) json_object_set_new(spec, "preemptionPolicy", json_string(r.preemption));
    return 0;
}

void priority_admit_pod_update(json_t *pod, const json_t *old)
{
    json_t *spec = json_object_get(pod, "spec");
    const json_t *ospec = json_object_get(old, "spec");
    if (!json_is_object(spec)) return;
    static const char *const keep[] = {"priority", "preemptionPolicy"};
    for (size_t i = 0; i < 2; i++) {
        json_t *have = json_object_get(spec, keep[i]);
        json_t *was = json_object_get(ospec, keep[i]);
        if ((!have || json_is_null(have)) && was && !json_is_null(was))
            json_object_set(spec, keep[i], was);
    }
}
