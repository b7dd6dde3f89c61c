/* conditions.c - metav1.Condition lists in an object's status (see
 * conditions.h). */
#include "registry/conditions.h"

#include <string.h>

static const char *str_of(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* The condition of `type` in a conditions array (borrowed), or NULL. */
const json_t *cond_get(const json_t *status, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(status, "conditions"), i,
                       c) if (!strcmp(str_of(c, "type"), type)) return c;
    return NULL;
}

/* A condition, with old's lastTransitionTime when old has the same status. */
static json_t *make(const json_t *old, const char *type, const char *st, const char *reason,
                    const char *msg, json_int_t gen, const char *now)
{
    const char *ltt =
        old && !strcmp(str_of(old, "status"), st) && *str_of(old, "lastTransitionTime")
            ? str_of(old, "lastTransitionTime")
            : now;
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "type", type, "status", st, "reason", reason,
                     "message", msg, "lastTransitionTime", ltt, "observedGeneration", gen);
}

/* Set condition `type` in status.conditions, keeping lastTransitionTime when
 * the status does not change. */
void cond_set(json_t *status, const char *type, const char *st, const char *reason, const char *msg,
              json_int_t gen, const char *now)
{
    json_t *conds = json_object_get(status, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    json_t *c = make(cond_get(status, type), type, st, reason, msg, gen, now);
    size_t i;
    json_t *x;
    json_array_foreach(conds, i, x) if (!strcmp(str_of(x, "type"), type))
    {
        json_array_set_new(conds, i, c);
        return;
    }
    json_array_append_new(conds, c);
}

void cond_del(json_t *status, const char *type)
{
    json_t *conds = json_object_get(status, "conditions");
    size_t i;
    json_t *x;
    json_array_foreach(conds, i, x) if (!strcmp(str_of(x, "type"), type))
    {
        json_array_remove(conds, i);
        return;
    }
}

void cond_set_one(json_t *status, const char *member, const char *type, const char *st,
                  const char *reason, const char *msg, json_int_t gen, const char *now)
{
    const json_t *old = json_object_get(status, member);
    if (strcmp(str_of(old, "type"), type)) old = NULL;
    json_object_set_new(status, member, make(old, type, st, reason, msg, gen, now));
}
