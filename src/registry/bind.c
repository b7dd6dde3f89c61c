/* bind.c - pods/binding: assign a pod to a node (see registry.h). */
#include "registry/registry.h"

#include "api/objects.h"

#include <stdio.h>
#include <string.h>

typedef struct bind_ctx {
    const char *node;
} bind_ctx;

static void set_scheduled_condition(json_t *pod)
{
    char now[32];
    reg_now_rfc3339(now, sizeof now);
    json_t *status = json_object_ensure(pod, "status");
    json_t *conds = json_object_get(status, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        if (type && !strcmp(type, "PodScheduled")) break;
    }
    json_t *cond = json_pack("{s:s, s:s, s:n, s:s}", "type", "PodScheduled", "status", "True",
                             "lastProbeTime", "lastTransitionTime", now);
    if (i < json_array_size(conds))
        json_array_set_new(conds, i, cond);
    else
        json_array_append_new(conds, cond);
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
    json_t *nw = json_deep_copy(cur);
    json_object_set_new(json_object_ensure(nw, "spec"), "nodeName", json_string(bc->node));
    set_scheduled_condition(nw);
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
