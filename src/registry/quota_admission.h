/* quota_admission.h - ResourceQuota admission with transactional accounting. */
#ifndef ALLOT_REGISTRY_QUOTA_ADMISSION_H
#define ALLOT_REGISTRY_QUOTA_ADMISSION_H

#include "registry/quota_cache.h" /* quota_obj_json: stored quotas, parsed */
#include "registry/registry.h"

/* Register the plugin; it must come after every mutating plugin. */
int quota_admission_register(void);

/* Load upstream's AdmissionConfiguration (JSON) and take the ResourceQuota
 * plugin's limitedResources from it. Call before serving. */
int quota_admission_configure(const char *path, char *err, size_t errlen);
void quota_admission_cleanup(void);

/* Recount `quota`'s status.used from the objects visible in the transaction
 * (spec §5). *used is a new object (caller owns). 0 or -1. Shared with the
 * quota controller, so admission and recount use one rule. */
int quota_recount_in_txn(store_txn *t, const json_t *quota, json_t **used);

/* The store indexer's part for quota: idx.ext = the object's quota_facts for
 * kinds quota evaluates (namespaced, not ignored), nothing for the others. The
 * recount uses them instead of parsing each object. */
void quota_index(const api_kind *k, const json_t *obj, store_index *out);

#endif
