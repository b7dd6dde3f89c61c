/* lease.c - leader election on a Lease, decided (see lease.h). */
#include "core/lease.h"

#include "core/jdump.h"

#include <stdio.h>
#include <string.h>

static const char *spec_str(const json_t *lease, const char *field)
{
    const char *v = json_string_value(json_object_get(json_object_get(lease, "spec"), field));
    return v ? v : "";
}

static long spec_int(const json_t *lease, const char *field)
{
    return (long)json_integer_value(json_object_get(json_object_get(lease, "spec"), field));
}

lease_action lease_decide(lease_observer *ob, const json_t *cur, const char *me, int duration_s,
                          int64_t now_ms)
{
    if (!cur) {
        ob->seen = false;
        return LEASE_CREATE;
    }
    const char *holder = spec_str(cur, "holderIdentity"), *renew = spec_str(cur, "renewTime");
    long transitions = spec_int(cur, "leaseTransitions");
    /* A change of the record restarts its holder's term, on our clock. */
    if (!ob->seen || strcmp(ob->holder, holder) || strcmp(ob->renew_time, renew) ||
        ob->transitions != transitions) {
        snprintf(ob->holder, sizeof ob->holder, "%s", holder);
        snprintf(ob->renew_time, sizeof ob->renew_time, "%s", renew);
        ob->transitions = transitions;
        ob->observed_ms = now_ms;
        ob->seen = true;
    }
    if (*holder && !strcmp(holder, me)) return LEASE_RENEW;
    long d = spec_int(cur, "leaseDurationSeconds");
    if (d <= 0) d = duration_s;
    if (!*holder || now_ms - ob->observed_ms >= (int64_t)d * 1000) return LEASE_ACQUIRE;
    return LEASE_WAIT;
}

json_t *lease_write(lease_action action, const json_t *cur, const char *ns, const char *name,
                    const char *me, int duration_s, const char *now_rfc)
{
    json_t *l = cur ? jcopy(cur)
                    : json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i}}", "apiVersion",
                                "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name", name,
                                "namespace", ns, "spec", "leaseTransitions", 0);
    if (!l) return NULL;
    json_t *spec = json_object_get(l, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        if (!spec || json_object_set_new(l, "spec", spec) != 0) {
            json_decref(l);
            return NULL;
        }
    }
    int rc = 0;
    if (action != LEASE_RENEW) {
        /* A new term: upstream counts a change of holder as a transition. */
        const char *was = spec_str(cur, "holderIdentity");
        long t = spec_int(cur, "leaseTransitions");
        if (cur && *was && strcmp(was, me)) t++;
        rc |= json_object_set_new(spec, "leaseTransitions", json_integer(t));
        rc |= json_object_set_new(spec, "acquireTime", json_string(now_rfc));
    }
    rc |= json_object_set_new(spec, "holderIdentity", json_string(me));
    rc |= json_object_set_new(spec, "leaseDurationSeconds", json_integer(duration_s));
    rc |= json_object_set_new(spec, "renewTime", json_string(now_rfc));
    if (rc != 0) {
        json_decref(l);
        return NULL;
    }
    return l;
}
