/* conditions.h - metav1.Condition lists in an object's status: the one
 * place the registry's kinds (pools, claims, custom quotas) set them. */
#ifndef ALLOT_REGISTRY_CONDITIONS_H
#define ALLOT_REGISTRY_CONDITIONS_H

#include <jansson.h>

/* The condition of `type` in status.conditions (borrowed), or NULL. */
const json_t *cond_get(const json_t *status, const char *type);
/* Set condition `type` in status.conditions, keeping lastTransitionTime when
 * its status does not change. */
void cond_set(json_t *status, const char *type, const char *st, const char *reason, const char *msg,
              json_int_t gen, const char *now);
void cond_del(json_t *status, const char *type);
/* Set the single condition status.<member> (a kind's one-condition summary,
 * e.g. a claim's status.condition), keeping lastTransitionTime while its
 * type and status do not change. */
void cond_set_one(json_t *status, const char *member, const char *type, const char *st,
                  const char *reason, const char *msg, json_int_t gen, const char *now);

#endif
