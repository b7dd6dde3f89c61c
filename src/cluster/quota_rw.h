/* quota_rw.h - a capsule-pool ResourceQuota read from and written back to
 * the API server itself (not the mirror), for the guards that must decide
 * at the version they write (cluster/release_guard.h,
 * cluster/leave_guard.h).
 */
#ifndef ALLOT_CLUSTER_QUOTA_RW_H
#define ALLOT_CLUSTER_QUOTA_RW_H

#include "api/status.h"
#include "core/rlist.h"
#include "kube/kube.h"

#include <jansson.h>

#define QUOTA_RW_TIMEOUT_MS 3000

/* The API path of namespace ns's capsule-pool-<pool> quota, into buf
 * ("/status" appended when status). */
void quota_rw_path(const char *ns, const char *pool, bool status, char *buf, size_t n);

/* GET path into *out (parsed; caller owns): the HTTP status, or -1 with e
 * set when the API server could not be asked. */
long quota_rw_get(kube_client *kc, const char *path, json_t **out, api_err *e);

/* PUT obj (its metadata.resourceVersion the precondition; managedFields
 * dropped from it) to path: the HTTP status (0 when the API server could
 * not be asked), *out the object answered on success (caller owns). */
long quota_rw_put(kube_client *kc, const char *path, json_t *obj, json_t **out);

/* The resource list at o.a.b (b may be NULL) as an rlist (caller frees;
 * empty when absent), or NULL when it does not parse or out of memory. */
rlist *quota_rw_list(const json_t *o, const char *a, const char *b);

/* min(l, cap) for each name of l (a name cap lacks: 0), as a new rlist
 * (caller frees); NULL when out of memory. */
rlist *quota_rw_min(const rlist *l, const rlist *cap);

#endif
