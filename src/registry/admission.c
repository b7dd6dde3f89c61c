/* admission.c - LimitRanger and Priority admission, run inside the write
 * transaction (see registry.h). The decisions live in api/limitrange.c and
 * api/priority.c; this file only fetches their inputs from the transaction.
 */
#include "registry/admission.h"

#include "api/limitrange.h"
#include "api/objects.h"
#include "api/priority.h"
#include "registry/cq_admission.h"
#include "registry/pool_admission.h"
#include "registry/quota_admission.h"

#include <stdlib.h>
#include <string.h>

/* Parsed objects under a store prefix, read through the transaction. */
typedef struct objset {
    json_t **v;
    size_t n;
} objset;

static void objset_free(objset *s)
{
    for (size_t i = 0; i < s->n; i++)
        json_decref(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

static int objset_load(store_txn *t, const char *prefix, objset *out, api_err *e)
{
    store_obj **objs = NULL;
    size_t n = 0;
    out->v = NULL;
    out->n = 0;
    if (store_txn_list(t, prefix, &objs, &n) != 0)
        return api_err_set(e, API_INTERNAL, "cannot list %s", prefix);
    out->v = calloc(n ? n : 1, sizeof *out->v);
    for (size_t i = 0; i < n; i++) {
        if (out->v) {
            json_t *o = store_obj_doc(objs[i]); /* shared: read only */
            if (o) out->v[out->n++] = o;
        }
        store_obj_unref(objs[i]);
    }
    free(objs);
    if (!out->v) return api_err_set(e, API_INTERNAL, "out of memory");
    return 0;
}

static bool is_core(const api_kind *k, const char *resource)
{
    return !*k->group && !strcmp(k->resource, resource);
}

static const char *obj_ns(const json_t *obj)
{
    const char *ns =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "namespace"));
    return ns ? ns : "";
}

/* ---- LimitRanger ---- */

/* Upstream validates an object after mutating admission: defaults a
 * LimitRange filled in (a default request above the container's own limit)
 * are validated like the client's own values. */
static int revalidate(const api_kind *k, const json_t *obj, api_err *e)
{
    if (!k->validate) return 0;
    json_t *causes = json_array();
    k->validate(obj, NULL, causes);
    if (json_array_size(causes) == 0) {
        json_decref(causes);
        return 0;
    }
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    return api_err_invalid(e, k->group, k->kind, name ? name : "", causes);
}

static int limitranger_admit(store_txn *t, const api_kind *k, reg_op op, const char *sub,
                             json_t *obj, const json_t *old, bool dry_run, api_err *e)
{
    bool pod = is_core(k, "pods"), pvc = is_core(k, "persistentvolumeclaims");
    if ((!pod && !pvc) || op == REG_DELETE || *sub) return 0;
    if (op == REG_UPDATE && pod) return 0; /* pod resources are immutable but for resize */
    char prefix[320];
    snprintf(prefix, sizeof prefix, "limitranges/%s/", obj_ns(obj));
    objset lrs;
    if (objset_load(t, prefix, &lrs, e) != 0) return -1;
    int rc = 0;
    if (lrs.n > 0) {
        const json_t *const *v = (const json_t *const *)lrs.v;
        if (pod) {
            if (op == REG_CREATE && limitrange_default_pod(obj, v, lrs.n) > 0) {
                json_object_set_new(json_object_get(obj, "status"), "qosClass",
                                    json_string(pod_qos_class(obj)));
                rc = revalidate(k, obj, e);
            }
            if (rc == 0) rc = limitrange_validate_pod(obj, v, lrs.n, e);
        } else {
            rc = limitrange_validate_pvc(obj, v, lrs.n, e);
        }
    }
    objset_free(&lrs);
    return rc;
}

/* ---- Priority ---- */

static int load_classes(store_txn *t, objset *out, api_err *e)
{
    return objset_load(t, "priorityclasses.scheduling.k8s.io//", out, e);
}

static int priority_admit(store_txn *t, const api_kind *k, reg_op op, const char *sub, json_t *obj,
                          const json_t *old, bool dry_run, api_err *e)
{
    objset classes;
    int rc = 0;
    if (is_core(k, "pods") && !*sub) {
        if (op == REG_UPDATE) {
            priority_admit_pod_update(obj, old);
            return 0;
        }
        if (op != REG_CREATE) return 0;
        if (load_classes(t, &classes, e) != 0) return -1;
        rc = priority_admit_pod(obj, (const json_t *const *)classes.v, classes.n, e);
        objset_free(&classes);
        return rc;
    }
    if (strcmp(k->group, "scheduling.k8s.io") || strcmp(k->resource, "priorityclasses")) return 0;
    if (op == REG_DELETE) {
        const char *name =
            json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
        return priority_check_delete(name ? name : "", e);
    }
    if (load_classes(t, &classes, e) != 0) return -1;
    rc = priority_check_global_default(obj, op == REG_UPDATE, (const json_t *const *)classes.v,
                                       classes.n, e);
    objset_free(&classes);
    return rc;
}

static const reg_admission limitranger = {"LimitRanger", limitranger_admit};
static const reg_admission priority = {"Priority", priority_admit};

int admission_register_defaults(void)
{
    /* Upstream's order: LimitRanger, Priority, ..., ResourceQuota last. */
    if (reg_admission_register(&limitranger) != 0) return -1;
    if (reg_admission_register(&priority) != 0) return -1;
    /* Quota before the plugins whose books live in memory (pools, custom
     * quotas), so that its denials come before they change anything. */
    if (quota_admission_register() != 0) return -1;
    if (pool_admission_register() != 0) return -1;
    return cq_admission_register();
}
