/* metrics_util.c - what the scrape-time gauge families share (see
 * metrics_util.h). */
#include "server/metrics_util.h"

#include "core/quantity.h"
#include "registry/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void metrics_for_each(store *st, metrics_scrape *sc, const api_kind *k, metrics_object_fn fn)
{
    if (!k) return;
    char res[240], prefix[256];
    api_kind_store_resource(k, res, sizeof res);
    snprintf(prefix, sizeof prefix, "%s/", res);
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_list(st, prefix, NULL, 0, &objs, &n, NULL, NULL) != 0) return;
    reg_read_views(st, k, objs, n); /* (statuses kept ahead of the store, rendered) */
    for (size_t i = 0; i < n; i++) {
        json_t *obj = store_obj_parse(objs[i]);
        if (obj) fn(sc, objs[i], obj);
        json_decref(obj);
        store_obj_unref(objs[i]);
    }
    free(objs);
}

int metrics_milli_of(const json_t *v, int64_t *out)
{
    qty q;
    if (!v || qty_from_json(v, &q) != 0) return -1;
    *out = qty_milli_value(&q);
    return 0;
}

const char *metrics_str_at(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

int metrics_condition(const json_t *status, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(status, "conditions"), i, c)
    {
        const char *t = metrics_str_at(c, "type"), *s = metrics_str_at(c, "status");
        if (t && !strcmp(t, type)) return s && !strcmp(s, "True");
    }
    return -1;
}
