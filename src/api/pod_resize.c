/* pod_resize.c - the pods/resize subresource (see pod_resize.h). */
#include "api/pod_resize.h"
#include "core/jdump.h"

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

json_t *pod_resize_apply(const json_t *cur, const json_t *req, api_err *e)
{
    json_t *out = jcopy(cur);
    if (!out) {
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    for (const char *const *l = container_lists; *l; l++) {
        json_t *reqs = json_object_get(json_object_get(req, "spec"), *l);
        json_t *stored = json_object_get(json_object_get(out, "spec"), *l);
        size_t i;
        json_t *c;
        json_array_foreach(stored, i, c)
        {
            json_t *want = by_name(reqs, json_string_value(json_object_get(c, "name")));
            if (!want) continue; /* a container left out keeps what it has */
            for (const char *const *f = resize_fields; *f; f++) {
                /* A copy: the result is defaulted next, and must share nothing
                 * with the request. */
                json_t *v = json_object_get(want, *f);
                int rc = v ? json_object_set_new(c, *f, jcopy(v)) : 0;
                if (!v) json_object_del(c, *f);
                if (rc != 0) {
                    json_decref(out);
                    api_err_set(e, API_INTERNAL, "out of memory");
                    return NULL;
                }
            }
        }
    }
    return out;
}
