/* deferred.h - the one rule of deferred ResourceQuota (spec deferred-quota.md):
 * in a deferred namespace, a pod's compute resources (cpu, memory and their
 * requests./limits. forms) count only while it is assigned to a node. Pure. */
#ifndef ALLOT_CORE_DEFERRED_H
#define ALLOT_CORE_DEFERRED_H

#include "core/rlist.h"

#include <jansson.h>
#include <stdbool.h>

/* Whether a quota resource name is charged at bind rather than at admission. */
bool quota_deferred_resource(const char *name);
/* Remove the deferred resources from `usage` when obj is an unassigned pod
 * (spec.nodeName empty); leaves other kinds and assigned pods alone. */
void quota_deferred_mask(const char *group, const char *resource, const json_t *obj, rlist *usage);
/* usage restricted to the deferred resources (new list, caller frees). */
rlist *quota_deferred_only(const rlist *usage);

#endif
