/* pod_resize.c - the pods/resize subresource (see pod_resize.h). */
#include "api/pod_resize.h"

#include "core/quota_eval.h"

#include <string.h>

static const char *const container_lists[] = {"containers", "initContainers", NULL};
static const char *const resize_fields[] = {"resources", "resizePolicy", NULL};

static json_t *by_name(const json_t *list, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        const char *n = json_string_value(json_object_get(c, "name"));
        if (n && name && !strcmp(n, name)) return c;
    }
    return NULL;
}

/* Every request/limit other than cpu and memory is unchanged. */
static bool only_cpu_memory(const json_t *old_res, const json_t *new_res)
{
    static const char *const parts[] = {"requests", "limits", NULL};
    for (const char *const *p = parts; *p; p++) {
        const json_t *a = json_object_get(old_res, *p), *b = json_object_get(new_res, *p);
        const char *k;
        json_t *v;
        for (int side = 0; side < 2; side++) {
            const json_t *from = side ? b : a, *to = side ? a : b;
            json_object_foreach((json_t *)from, k, v)
            {
                if (!strcmp(k, "cpu") || !strcmp(k, "memory")) continue;
                if (!json_equal(v, json_object_get(to, k))) return false;
            }
        }
    }
    return true;
}

json_t *pod_resize_apply(const json_t *cur, const json_t *req, api_err *e)
{
    json_t *out = json_deep_copy(cur);
    json_t *errs = json_array();
    const char *name = json_string_value(json_object_get(json_object_get(cur, "metadata"), "name"));
    if (!out || !errs) {
        json_decref(out);
        json_decref(errs);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    bool mutable_ok = true;
    for (const char *const *l = container_lists; *l; l++) {
        json_t *reqs = json_object_get(json_object_get(req, "spec"), *l);
        json_t *stored = json_object_get(json_object_get(out, "spec"), *l);
        size_t i;
        json_t *c;
        json_array_foreach(stored, i, c)
        {
            json_t *want = by_name(reqs, json_string_value(json_object_get(c, "name")));
            if (!want) continue; /* a container left out keeps what it has */
            mutable_ok &= only_cpu_memory(json_object_get(c, "resources"),
                                          json_object_get(want, "resources"));
            for (const char *const *f = resize_fields; *f; f++) {
                json_t *v = json_object_get(want, *f);
                if (v)
                    json_object_set(c, *f, v);
                else
                    json_object_del(c, *f);
            }
        }
    }
    if (!mutable_ok)
        ferr_add(errs, FERR_FORBIDDEN, "spec", NULL, "only cpu and memory resources are mutable");
    else if (quota_pod_qos(cur) != quota_pod_qos(out)) {
        /* upstream prints the stored pod's status.qosClass */
        static const char *const qos[] = {"BestEffort", "Burstable", "Guaranteed"};
        const char *was =
            json_string_value(json_object_get(json_object_get(cur, "status"), "qosClass"));
        ferr_add_str(errs, FERR_INVALID, "spec", was ? was : qos[quota_pod_qos(cur)],
                     "Pod QOS Class may not change as a result of resizing");
    }
    if (json_array_size(errs)) {
        json_decref(out);
        api_err_invalid(e, "", "Pod", name, errs);
        return NULL;
    }
    json_decref(errs);
    return out;
}
