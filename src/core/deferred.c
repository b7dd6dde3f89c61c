/* deferred.c - deferred ResourceQuota's usage rule (see deferred.h). */
#include "core/deferred.h"

#include <string.h>

static const char *const deferred_names[] = {
    "cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"};

bool quota_deferred_resource(const char *name)
{
    for (size_t i = 0; i < sizeof deferred_names / sizeof *deferred_names; i++)
        if (!strcmp(name, deferred_names[i])) return true;
    return false;
}

void quota_deferred_mask(const char *group, const char *resource, const json_t *obj, rlist *usage)
{
    if (*group || strcmp(resource, "pods")) return;
    const char *node = json_string_value(json_object_get(json_object_get(obj, "spec"), "nodeName"));
    if (node && *node) return;
    for (size_t i = 0; i < sizeof deferred_names / sizeof *deferred_names; i++)
        rl_del(usage, deferred_names[i]);
}

rlist *quota_deferred_only(const rlist *usage)
{
    rlist *out = rl_new();
    for (size_t i = 0; out && i < rl_len(usage); i++)
        if (quota_deferred_resource(rl_name(usage, i)) &&
            rl_set(out, rl_name(usage, i), rl_qty(usage, i)) != 0) {
            rl_free(out);
            return NULL;
        }
    return out;
}
