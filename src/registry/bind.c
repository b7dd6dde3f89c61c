/* bind.c - pods/binding: assign a pod to a node (see registry.h). */
#include "registry/registry.h"

#include "api/objects.h"

#include <stdio.h>
#include <string.h>

typedef struct bind_ctx {
    const char *node;
} bind_ctx;

/* A shallow copy of member `key` of `obj` put in its place (an empty object
 * or array when absent or of another type): the one level that is changed. */
static json_t *own_member(json_t *obj, const char *key, bool array)
{
    json_t *cur = json_object_get(obj, key);
    json_t *copy = array ? (json_is_array(cur) ? json_copy(cur) : json_array())
                         : (json_is_object(cur) ? json_copy(cur) : json_object());
    if (!copy || json_object_set_new(obj, key, copy) != 0) return NULL;
    return copy;
}

static int set_scheduled_condition(json_t *pod)
{
    char now[32];
    reg_now_rfc3339(now, sizeof now);
    json_t *status = own_member(pod, "status", false);
    json_t *conds = status ? own_member(status, "conditions", true) : NULL;
    if (!conds) return -1;
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        if (type && !strcmp(type, "PodScheduled")) break;
    }
    json_t *cond = json_pack("{s:s, s:s, s:n, s:s}", "type", "PodScheduled", "status", "True",
                             "lastProbeTime", "lastTransitionTime", now);
    if (i < json_array_size(conds)) return json_array_set_new(conds, i, cond);
    return json_array_append_new(conds, cond);
}

static json_t *mutate_bind(const json_t *cur, void *ctx, api_err *e)
{
    bind_ctx *bc = ctx;
    const json_t *meta = json_object_get(cur, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *existing =
        json_string_value(json_object_get(json_object_get(cur, "spec"), "nodeName"));
    if (!name) name = "";
    if (existing && *existing) {
        char why[512];
        snprintf(why, sizeof why, "pod %s is already assigned to node \"%s\"", name, existing);
        api_err_conflict(e, "", "pods/binding", name, why);
        return NULL;
    }
    if (json_object_get(meta, "deletionTimestamp")) {
        api_err_conflict(e, "", "pods/binding", name, "pod is being deleted");
        return NULL;
    }
    /* Not a deep copy: this runs inside the writer lock, and copying the whole
     * pod cost more than the rest of the mutation. Copied are the objects this
     * changes (spec, status, its conditions) and metadata, which the registry
     * rewrites in the result; the rest (containers, volumes, ...) is shared
     * with `cur`, which the registry only reads (defaulting a stored pod adds
     * nothing: it was defaulted when written). */
    json_t *nw = json_copy((json_t *)cur), *spec = nw ? own_member(nw, "spec", false) : NULL;
    if (!spec || !own_member(nw, "metadata", false) ||
        json_object_set_new(spec, "nodeName", json_string(bc->node)) != 0 ||
        set_scheduled_condition(nw) != 0) {
        json_decref(nw);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    return nw;
}

int reg_bind(store *st, const char *ns, const char *name, const char *node, bool dry_run,
             json_t **out, api_err *e)
{
    const api_kind *k = api_kind_find("", "v1", "pods");
    bind_ctx bc = {node};
    json_t *pod = NULL;
    int rc = reg_update(st, k, ns, name, "binding", mutate_bind, &bc, dry_run, &pod, e);
    if (out)
        *out = pod;
    else
        json_decref(pod);
    return rc;
}
