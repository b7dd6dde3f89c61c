/* rollout.c - pure decisions of the workload controllers (see rollout.h). */
#include "core/rollout.h"
#include "core/jdump.h"

#include "core/quantity.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t ro_batch_size(size_t prev, size_t initial, size_t remaining)
{
    size_t want = prev ? 2 * prev : (initial ? initial : 1);
    return want < remaining ? want : remaining;
}

int64_t ro_backoff_ms(int failures, int64_t base, int64_t max)
{
    if (failures < 1) return 0;
    int64_t d = base;
    for (int i = 1; i < failures && d < max; i++)
        d *= 2;
    return d < max ? d : max;
}

/* ---- int or percent ---- */

int ro_scaled_value(const json_t *v, int32_t total, bool round_up, int32_t *out)
{
    *out = 0;
    if (!v || json_is_null(v)) return 0;
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i > INT32_MAX || i < INT32_MIN) return -1;
        *out = (int32_t)i;
        return 0;
    }
    const char *s = json_string_value(v);
    if (!s) return -1;
    size_t n = strlen(s);
    if (n < 2 || s[n - 1] != '%') return -1; /* "invalid type: string is not a percentage" */
    char *end;
    errno = 0;
    long pct = strtol(s, &end, 10);
    if (errno || end != s + n - 1 || pct > INT32_MAX || pct < INT32_MIN) return -1;
    double scaled = (double)pct * (double)total / 100;
    double r = round_up ? ceil(scaled) : floor(scaled);
    if (r > INT32_MAX || r < INT32_MIN) return -1;
    *out = (int32_t)r;
    return 0;
}

int ro_fenceposts(const json_t *max_surge, const json_t *max_unavailable, int32_t desired,
                  int32_t *surge, int32_t *unavailable)
{
    *surge = *unavailable = 0;
    if (ro_scaled_value(max_surge, desired, true, surge) != 0 ||
        ro_scaled_value(max_unavailable, desired, false, unavailable) != 0) {
        *surge = *unavailable = 0;
        return -1;
    }
    if (*surge == 0 && *unavailable == 0) *unavailable = 1;
    return 0;
}

/* ---- Deployments ---- */

int ro_deploy_init(ro_deploy *d, int32_t replicas, bool rolling, const json_t *max_surge,
                   const json_t *max_unavailable)
{
    *d = (ro_deploy){.replicas = replicas, .rolling = rolling};
    if (!rolling) return 0;
    int32_t surge, unavail;
    if (ro_fenceposts(max_surge, max_unavailable, replicas, &surge, &unavail) != 0) return -1;
    d->max_surge = surge;
    /* MaxUnavailable: 0 for 0 replicas, never above replicas */
    d->max_unavailable = replicas == 0 ? 0 : unavail > replicas ? replicas : unavail;
    return 0;
}

int32_t ro_new_rs_replicas(const ro_deploy *d, const ro_rs *all, size_t n, const ro_rs *new_rs)
{
    if (!d->rolling) return d->replicas;
    int64_t current = 0;
    for (size_t i = 0; i < n; i++)
        current += all[i].replicas;
    int64_t max_total = (int64_t)d->replicas + d->max_surge;
    if (current >= max_total) return new_rs->replicas;
    int64_t up = max_total - current;
    if (up > (int64_t)d->replicas - new_rs->replicas) up = (int64_t)d->replicas - new_rs->replicas;
    return (int32_t)(new_rs->replicas + up);
}

static int by_creation(const void *pa, const void *pb)
{
    const ro_rs *a = pa, *b = pb;
    if (a->created != b->created) return a->created < b->created ? -1 : 1;
    int c = strcmp(a->name ? a->name : "", b->name ? b->name : "");
    if (c) return c;
    return a->id < b->id ? -1 : a->id > b->id;
}

void ro_sort_by_creation(ro_rs *rs, size_t n)
{
    if (n > 1) qsort(rs, n, sizeof *rs, by_creation);
}

static int by_revision(const void *pa, const void *pb)
{
    const ro_rs *a = pa, *b = pb;
    if (a->revision != b->revision) return a->revision < b->revision ? -1 : 1;
    return by_creation(pa, pb);
}

void ro_sort_by_revision(ro_rs *rs, size_t n)
{
    if (n > 1) qsort(rs, n, sizeof *rs, by_revision);
}

int32_t ro_reconcile_old(const ro_deploy *d, ro_rs *olds, size_t n, const ro_rs *new_rs)
{
    int64_t old_pods = 0, available = new_rs->available;
    for (size_t i = 0; i < n; i++) {
        olds[i].target = olds[i].replicas;
        old_pods += olds[i].replicas;
    }
    if (old_pods == 0) return 0;
    int64_t all_pods = old_pods + new_rs->replicas;
    int64_t min_available = (int64_t)d->replicas - d->max_unavailable;
    int64_t new_unavailable = (int64_t)new_rs->replicas - new_rs->available;
    int64_t max_scaled_down = all_pods - min_available - new_unavailable;
    if (max_scaled_down <= 0) return 0;
    ro_sort_by_creation(olds, n);
    /* cleanupUnhealthyReplicas: unavailable replicas go first, oldest sets first */
    int64_t cleaned = 0;
    for (size_t i = 0; i < n && cleaned < max_scaled_down; i++) {
        ro_rs *r = &olds[i];
        if (r->target == 0 || r->available >= r->target) continue;
        int64_t cnt = max_scaled_down - cleaned;
        if (cnt > (int64_t)r->target - r->available) cnt = (int64_t)r->target - r->available;
        r->target -= (int32_t)cnt;
        cleaned += cnt;
    }
    /* scaleDownOldReplicaSetsForRollingUpdate: down to the minimum available */
    for (size_t i = 0; i < n; i++)
        available += olds[i].available;
    int64_t scaled = 0;
    if (available > min_available) {
        int64_t want = available - min_available;
        for (size_t i = 0; i < n && scaled < want; i++) {
            ro_rs *r = &olds[i];
            if (r->target == 0) continue;
            int64_t cnt = want - scaled;
            if (cnt > r->target) cnt = r->target;
            r->target -= (int32_t)cnt;
            scaled += cnt;
        }
    }
    return (int32_t)(cleaned + scaled);
}

/* ReplicaSetsBySizeNewer (up) and ReplicaSetsBySizeOlder (down): larger first. */
static int by_size_newer(const void *pa, const void *pb)
{
    const ro_rs *a = pa, *b = pb;
    if (a->replicas != b->replicas) return a->replicas > b->replicas ? -1 : 1;
    return by_creation(pb, pa);
}

static int by_size_older(const void *pa, const void *pb)
{
    const ro_rs *a = pa, *b = pb;
    if (a->replicas != b->replicas) return a->replicas > b->replicas ? -1 : 1;
    return by_creation(pa, pb);
}

/* getReplicaSetFraction */
static int32_t fraction(const ro_rs *r, const ro_deploy *d, int32_t status_replicas)
{
    if (d->replicas == 0) return -r->replicas;
    int64_t max_now = (int64_t)d->replicas + d->max_surge;
    int64_t before = r->max_replicas >= 0 ? r->max_replicas : status_replicas;
    if (before <= 0) return r->replicas > 0 ? INT32_MAX : 0; /* upstream divides by 0: +Inf */
    double size = (double)r->replicas * (double)max_now / (double)before;
    double rounded = round(size); /* RoundToInt32: half away from zero */
    if (rounded > INT32_MAX) rounded = INT32_MAX;
    return (int32_t)((int64_t)rounded - r->replicas);
}

void ro_proportional(const ro_deploy *d, ro_rs *rs, size_t n, int32_t status_replicas)
{
    if (n == 0) return;
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        rs[i].target = rs[i].replicas;
        sum += rs[i].replicas;
    }
    int64_t allowed = d->replicas > 0 ? (int64_t)d->replicas + d->max_surge : 0;
    int64_t to_add = allowed - sum;
    if (to_add > 0 && n > 1) qsort(rs, n, sizeof *rs, by_size_newer);
    if (to_add < 0 && n > 1) qsort(rs, n, sizeof *rs, by_size_older);
    if (to_add == 0) return;
    int64_t added = 0;
    for (size_t i = 0; i < n; i++) {
        ro_rs *r = &rs[i];
        int32_t prop = 0;
        if (r->replicas != 0 && to_add != added) { /* GetReplicaSetProportion */
            int64_t f = fraction(r, d, status_replicas), left = to_add - added;
            int64_t p = to_add > 0 ? (f < left ? f : left) : (f > left ? f : left);
            prop = (int32_t)p;
        }
        r->target = r->replicas + prop;
        added += prop;
    }
    int64_t first = (int64_t)rs[0].target + (to_add - added);
    rs[0].target = first < 0 ? 0 : (int32_t)first;
}

bool ro_deploy_complete(int32_t spec_replicas, int64_t generation, const ro_dstatus *s)
{
    return s->updated == spec_replicas && s->replicas == spec_replicas &&
           s->available == spec_replicas && s->observed_generation >= generation;
}

bool ro_deploy_progressing(const ro_dstatus *before, const ro_dstatus *now)
{
    int32_t old_before = before->replicas - before->updated, old_now = now->replicas - now->updated;
    return now->updated > before->updated || old_now < old_before || now->ready > before->ready ||
           now->available > before->available;
}

/* ---- pods ---- */

/* afterOrZero: t1 after t2, a zero time counting as after any other. */
static bool after_or_zero(int64_t t1, int64_t t2)
{
    if (t1 == 0 || t2 == 0) return t1 == 0;
    return t1 > t2;
}

/* logarithmicRankDiff, on nanoseconds since as upstream (times in ms here). */
static int64_t log_rank(int64_t t, int64_t now)
{
    int64_t d = (now - t) * 1000000;
    return d > 0 ? (int64_t)log2((double)d) : -1;
}

/* Step 6 and 8's comparison of two times: whether a's time ranks it first. */
static int time_order(int64_t ta, int64_t tb, const ro_pod *a, const ro_pod *b, int64_t now)
{
    if (now == 0 || ta == 0 || tb == 0) return after_or_zero(ta, tb) ? -1 : 1;
    int64_t diff = log_rank(ta, now) - log_rank(tb, now);
    if (diff == 0) {
        int c = strcmp(a->uid ? a->uid : "", b->uid ? b->uid : "");
        return c < 0 ? -1 : c > 0; /* the same uid (the same pod): neither */
    }
    return diff < 0 ? -1 : 1;
}

/* <0: a first, >0: b first, 0: neither (upstream's Less false both ways). */
static int pod_order(const ro_pod *a, const ro_pod *b, int64_t now)
{
    if (a->assigned != b->assigned) return a->assigned ? 1 : -1;
    if (a->phase != b->phase) return a->phase < b->phase ? -1 : 1;
    if (a->ready != b->ready) return a->ready ? 1 : -1;
    if (a->deletion_cost != b->deletion_cost) return a->deletion_cost < b->deletion_cost ? -1 : 1;
    if (a->rank != b->rank) return a->rank > b->rank ? -1 : 1;
    if (a->ready && b->ready && a->ready_since != b->ready_since)
        return time_order(a->ready_since, b->ready_since, a, b, now);
    if (a->restarts != b->restarts) return a->restarts > b->restarts ? -1 : 1;
    if (a->sidecar_restarts != b->sidecar_restarts)
        return a->sidecar_restarts > b->sidecar_restarts ? -1 : 1;
    if (a->created != b->created) return time_order(a->created, b->created, a, b, now);
    return 0;
}

bool ro_pod_delete_before(const ro_pod *a, const ro_pod *b, int64_t now)
{
    return pod_order(a, b, now) < 0;
}

void ro_rank_for_deletion(ro_pod *pods, size_t n, int64_t now)
{
    if (n < 2) return;
    /* A merge sort of our own: qsort has no argument to carry `now` (qsort_r
     * is not C11), and a global would make this not reentrant. */
    ro_pod *tmp = malloc(n * sizeof *tmp);
    if (!tmp) { /* insertion sort: slow but correct without memory */
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0; j--) {
                int o = pod_order(&pods[j], &pods[j - 1], now);
                if (o > 0 || (o == 0 && pods[j].id > pods[j - 1].id)) break;
                ro_pod t = pods[j];
                pods[j] = pods[j - 1];
                pods[j - 1] = t;
            }
        return;
    }
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n,
                   hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                int o = pod_order(&pods[i], &pods[j], now);
                if (o < 0 || (o == 0 && pods[i].id <= pods[j].id))
                    tmp[k++] = pods[i++];
                else
                    tmp[k++] = pods[j++];
            }
            while (i < mid)
                tmp[k++] = pods[i++];
            while (j < hi)
                tmp[k++] = pods[j++];
        }
        memcpy(pods, tmp, n * sizeof *pods);
    }
    free(tmp);
}

bool ro_pod_available(bool ready, int64_t ready_since, int32_t min_ready, int64_t now)
{
    if (!ready) return false;
    if (min_ready <= 0) return true;
    return ready_since != 0 && ready_since + (int64_t)min_ready * 1000 < now;
}

int64_t ro_available_at(int64_t ready_since, int32_t min_ready)
{
    return ready_since + (int64_t)(min_ready > 0 ? min_ready : 0) * 1000 + 1;
}

/* ---- quota ---- */

/* -1 a < b, 0 equal, 1 a > b, 2 when either does not parse. */
static int qty_order(const json_t *a, const json_t *b)
{
    qty qa, qb;
    if (qty_from_json(a, &qa) != 0 || qty_from_json(b, &qb) != 0) return 2;
    return qty_cmp(&qa, &qb);
}

bool ro_quota_freer(const json_t *before, const json_t *after)
{
    if (!before || !after) return false;
    const json_t *hb = json_object_get(json_object_get(before, "spec"), "hard");
    const json_t *ha = json_object_get(json_object_get(after, "spec"), "hard");
    const json_t *ub = json_object_get(json_object_get(before, "status"), "used");
    const json_t *ua = json_object_get(json_object_get(after, "status"), "used");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)hb, k, v)
    {
        const json_t *now = json_object_get(ha, k);
        if (!now || qty_order(now, v) == 1) return true; /* removed or raised */
        const json_t *was_used = json_object_get(ub, k), *used = json_object_get(ua, k);
        if (was_used && used && qty_order(used, was_used) == -1) return true;
    }
    return false;
}

/* ---- the pod-template hash ---- */

static json_t *normal(const json_t *v)
{
    if (json_is_object(v)) {
        json_t *out = json_object();
        if (!out) return NULL;
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m)
        {
            json_t *c = normal(m);
            if (!c) {
                json_decref(out);
                return NULL;
            }
            bool empty = json_is_null(c) || (json_is_object(c) && json_object_size(c) == 0) ||
                         (json_is_array(c) && json_array_size(c) == 0);
            if (empty) {
                json_decref(c);
            } else if (json_object_set_new(out, k, c) != 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    if (json_is_array(v)) {
        json_t *out = json_array();
        size_t i;
        json_t *m;
        json_array_foreach(v, i, m)
        {
            json_t *c = normal(m);
            if (!out || !c || json_array_append_new(out, c) != 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    return jcopy(v);
}

json_t *ro_template_normal(const json_t *tmpl)
{
    json_t *n = tmpl ? normal(tmpl) : json_object();
    if (!n) return NULL;
    json_t *labels = json_object_get(json_object_get(n, "metadata"), "labels");
    if (labels) {
        json_object_del(labels, RO_HASH_LABEL);
        if (json_object_size(labels) == 0)
            json_object_del(json_object_get(n, "metadata"), "labels");
        if (json_object_size(json_object_get(n, "metadata")) == 0) json_object_del(n, "metadata");
    }
    return n;
}

bool ro_template_equal(const json_t *a, const json_t *b)
{
    json_t *na = ro_template_normal(a), *nb = ro_template_normal(b);
    bool eq = na && nb && json_equal(na, nb);
    json_decref(na);
    json_decref(nb);
    return eq;
}

int ro_template_hash(const json_t *tmpl, int64_t collision, char out[16])
{
    json_t *n = ro_template_normal(tmpl);
    char *text = n ? json_dumps(n, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(n);
    if (!text) return -1;
    uint32_t h = 2166136261u; /* FNV-32a */
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 16777619u;
    free(text);
    if (collision >= 0) {
        uint32_t c = (uint32_t)collision;
        for (int i = 0; i < 4; i++)
            h = (h ^ ((c >> (8 * i)) & 0xff)) * 16777619u;
    }
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    char digits[16];
    snprintf(digits, sizeof digits, "%u", h);
    size_t i = 0;
    for (; digits[i]; i++)
        out[i] = alphabet[(unsigned char)digits[i] % (sizeof alphabet - 1)];
    out[i] = '\0';
    return 0;
}
