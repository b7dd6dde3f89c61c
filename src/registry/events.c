/* events.c - Event recording with count-based deduplication (see events.h). */
#include "registry/events.h"

#include "registry/registry.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *meta_str(const json_t *obj, const char *f)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), f));
}

/* Deterministic name per (object, reason, message), like the recorder's
 * "<name>.<hash>", so repeats find the same Event. */
static void event_name(const json_t *obj, const char *type, const char *reason, const char *message,
                       char *buf, size_t n)
{
    unsigned long long h = 1469598103934665603ULL;
    const char *parts[] = {meta_str(obj, "uid"), type, reason, message};
    for (size_t i = 0; i < 4; i++)
        for (const char *p = parts[i] ? parts[i] : ""; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    snprintf(buf, n, "%s.%016llx", meta_str(obj, "name") ? meta_str(obj, "name") : "x", h);
}

typedef struct bump {
    const char *now;
} bump;

static json_t *mutate_bump(const json_t *cur, void *ctx, api_err *e)
{
    bump *b = ctx;
    json_t *ev = json_deep_copy(cur);
    json_int_t count = json_integer_value(json_object_get(cur, "count"));
    json_object_set_new(ev, "count", json_integer(count + 1));
    json_object_set_new(ev, "lastTimestamp", json_string(b->now));
    json_object_del(json_object_get(ev, "metadata"), "resourceVersion");
    return ev;
}

int event_record(store *st, const json_t *involved, const char *type, const char *reason,
                 const char *message, const char *component)
{
    const api_kind *k = api_kind_find("", "v1", "events");
    const char *ns = meta_str(involved, "namespace");
    char name[300], now[32];
    if (!k || !ns) return -1;
    event_name(involved, type, reason, message, name, sizeof name);
    reg_now_rfc3339(now, sizeof now);
    api_err e;
    api_err_init(&e);
    json_t *out = NULL;
    const json_t *obj_kind = json_object_get(involved, "kind");
    const json_t *obj_av = json_object_get(involved, "apiVersion");
    json_t *ev = json_pack(
        "{s:s, s:s, s:{s:s, s:s}, s:{s:O*, s:s, s:s, s:s, s:O*, s:s}, s:s, s:s, s:s, s:{s:s}, "
        "s:s, s:s, s:i, s:s, s:s}",
        "apiVersion", "v1", "kind", "Event", "metadata", "name", name, "namespace", ns,
        "involvedObject", "kind", obj_kind, "namespace", ns, "name", meta_str(involved, "name"),
        "uid", meta_str(involved, "uid") ? meta_str(involved, "uid") : "", "apiVersion", obj_av,
        "resourceVersion",
        meta_str(involved, "resourceVersion") ? meta_str(involved, "resourceVersion") : "", "type",
        type, "reason", reason, "message", message, "source", "component", component,
        "firstTimestamp", now, "lastTimestamp", now, "count", 1, "reportingComponent", component,
        "reportingInstance", component);
    if (!ev) return -1;
    /* Most events are new (e.g. Scheduled): create first, count a repeat. */
    int rc = reg_create(st, k, ns, ev, false, &out, &e);
    json_decref(ev);
    json_decref(out);
    out = NULL;
    if (rc != 0 && e.code == API_ALREADY_EXISTS) {
        api_err_clear(&e);
        bump b = {now};
        rc = reg_update(st, k, ns, name, "", mutate_bump, &b, false, &out, &e);
        json_decref(out);
    }
    api_err_clear(&e);
    return rc;
}
