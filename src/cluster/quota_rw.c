/* quota_rw.c - capsule-pool quotas read and written on the API server (see
 * quota_rw.h). */
#include "cluster/quota_rw.h"

#include "core/jdump.h"

#include <stdio.h>
#include <stdlib.h>

void quota_rw_path(const char *ns, const char *pool, bool status, char *buf, size_t n)
{
    snprintf(buf, n, "/api/v1/namespaces/%s/resourcequotas/capsule-pool-%s%s", ns, pool,
             status ? "/status" : "");
}

long quota_rw_get(kube_client *kc, const char *path, json_t **out, api_err *e)
{
    char err[256], *resp = NULL;
    long status = 0;
    *out = NULL;
    if (kube_request(kc, "GET", path, NULL, NULL, QUOTA_RW_TIMEOUT_MS, &status, &resp, err,
                     sizeof err) != 0) {
        api_err_set(e, API_INTERNAL, "cannot read the namespace's quota: %s", err);
        return -1;
    }
    if (status == 200 && !(*out = json_loads(resp ? resp : "", 0, NULL))) status = 500;
    free(resp);
    return status;
}

long quota_rw_put(kube_client *kc, const char *path, json_t *obj, json_t **out)
{
    char err[256], *resp = NULL, *body;
    long status = 0;
    *out = NULL;
    json_object_del(json_object_get(obj, "metadata"), "managedFields");
    if (!(body = jdump(obj, NULL))) return 0;
    if (kube_request(kc, "PUT", path, body, NULL, QUOTA_RW_TIMEOUT_MS, &status, &resp, err,
                     sizeof err) != 0)
        status = 0;
    if (status >= 200 && status <= 299) *out = json_loads(resp ? resp : "", 0, NULL);
    free(resp);
    free(body);
    return status;
}

rlist *quota_rw_list(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);
    if (b) v = json_object_get(v, b);
    rlist *l = rl_new();
    const char *bad;
    if (l && v && rl_from_json(v, l, &bad) != 0) {
        rl_free(l);
        return NULL;
    }
    return l;
}

rlist *quota_rw_min(const rlist *l, const rlist *cap)
{
    /* l - max(0, l - cap) is min(l, cap) on l's names (a name only l has
     * goes to l - l = 0); the mask drops the names only cap has */
    rlist *over = rl_subtract_nonneg(l, cap), *d = over ? rl_subtract(l, over) : NULL;
    rlist *out = d ? rl_mask(d, l) : NULL;
    rl_free(over);
    rl_free(d);
    return out;
}
