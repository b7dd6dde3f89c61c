/* counted_kinds.h - the kinds custom quotas count, watched and sent to the
 * webhook as quotas name them (cluster mode; docs/cluster-mode.md,
 * "Kinds custom quotas count").
 *
 * A custom quota's source may name any kind allot serves (a ConfigMap, a
 * Service, a Deployment...). The writer's recount reads those objects in
 * the mirror, and the guard reserves their creates and updates at
 * admission, so both must see them: every replica watches each kind some
 * quota's source names (a reflector started the first time a quota names
 * it, kept while allotd runs), and the webhook pods.counted.allot.dev takes
 * CREATE and UPDATE of exactly those kinds and pods. A quota is recounted
 * only once every kind it counts has been listed (counted_kinds_listed): a
 * collection not yet listed would count 0.
 *
 * The kinds are read from the mirror's custom quotas when one changes (a
 * store observer wakes the thread; at most once a second, as the writer
 * rewrites statuses often) and every COUNTED_KINDS_RESYNC_MS. The webhook
 * configuration is read only when the kinds change and at that resync,
 * which also puts the rules back if something else rewrote them (a
 * `kubectl apply -k` of the manifests).
 */
#ifndef ALLOT_CLUSTER_COUNTED_KINDS_H
#define ALLOT_CLUSTER_COUNTED_KINDS_H

#include "api/kinds.h"
#include "cluster/mirror.h"
#include "kube/kube.h"
#include "store/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define COUNTED_KINDS_RESYNC_MS 30000
#define COUNTED_KINDS_MAX 64
/* The webhook whose rules follow the counted kinds. */
#define COUNTED_WEBHOOK "pods.counted.allot.dev"
#define COUNTED_WEBHOOK_CONFIG "allot.dev"

/* The kinds the custom quotas of st (the mirror) count that allot serves,
 * pods first and always, each once, into out (at most max); their count.
 * A source naming a kind allot does not serve counts nothing (the quota's
 * Ready condition says so). */
size_t counted_kinds_of(store *st, const api_kind **out, size_t max);

/* The webhook rules for kinds (CREATE and UPDATE of each, any scope): a
 * new array, or NULL when out of memory. */
json_t *counted_kinds_rules(const api_kind *const *kinds, size_t n);

/* Whether m has listed every kind quota (a CustomQuota or, with global,
 * a GlobalCustomQuota, as stored) counts that allot serves. A spec that
 * does not compile counts nothing, and so needs nothing listed. */
bool counted_kinds_listed(mirror *m, const json_t *quota, bool global);

typedef struct counted_kinds counted_kinds;

/* Keep watching what the custom quotas of st count: watch(arg, k) is
 * called (on the thread) for each kind the first time a quota names it,
 * and returns 0 once its reflector runs (-1: called again later); the
 * webhook configuration COUNTED_WEBHOOK_CONFIG in the cluster kc writes to
 * has COUNTED_WEBHOOK's rules kept as counted_kinds_rules says. st must
 * not serve yet (a store observer is registered). NULL with err. */
counted_kinds *counted_kinds_start(store *st, kube_client *kc,
                                   int (*watch)(void *arg, const api_kind *k), void *arg, char *err,
                                   size_t errlen);
/* Look again now (the webhook configuration was just installed). */
void counted_kinds_kick(counted_kinds *ck);
void counted_kinds_stop(counted_kinds *ck);

#endif
