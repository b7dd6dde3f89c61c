/* sched.c - filters, scoring, FitError text and queue order of allot's scheduler.
 *
 * Follows kube-scheduler's default profile for the plugins named in sched.h:
 * pkg/scheduler/framework/plugins/{nodeunschedulable,tainttoleration,nodeaffinity,
 * noderesources}, framework/types.go (FitError), framework/preemption and
 * backend/queue. Owns nothing beyond a call; never does I/O or reads a clock.
 *
 * Preemption: allot never evicts pods, so the PostFilter suffix describes what
 * upstream's DefaultPreemption reports when it finds no candidate: nodes whose
 * filter failure was UnschedulableAndUnresolvable get "Preemption is not helpful
 * for scheduling"; nodes that failed only on resources (Unschedulable) get "No
 * preemption victims found for incoming pod", which is upstream's answer when no
 * lower-priority pod sits on the node. A pod with preemptionPolicy Never gets
 * upstream's "not eligible" text instead.
 */
#include "core/sched.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantity.h"
#include "core/quota_eval.h"

/* dbuf and rlist appends fail only on memory (or the dbuf ceiling). */
#define DBUF_TRY(expr)                                                                             \
    do {                                                                                           \
        if ((expr) != 0) return SCHED_ENOMEM;                                                      \
    } while (0)
#define TRY_ST(expr)                                                                               \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_) return rc_;                                                                       \
    } while (0)

/* ---- small JSON helpers ---------------------------------------------------------------------- */

/* jget(o, "spec", "taints", NULL): nested member, NULL when absent. */
static const json_t *jget(const json_t *o, ...)
{
    va_list ap;
    va_start(ap, o);
    for (const char *k = va_arg(ap, const char *); k && o; k = va_arg(ap, const char *))
        o = json_object_get(o, k);
    va_end(ap);
    return o;
}

/* A string member, "" when absent or not a string (Go's zero value). */
static const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* strconv.ParseInt(s, 10, 64): optional sign, decimal digits, no spaces, in range. */
static bool parse_int64(const char *s, int64_t *out)
{
    bool neg = *s == '-';
    if (*s == '+' || *s == '-') s++;
    if (!*s) return false;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (lim - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* ---- filter status (upstream's *Status: a code and reasons) ---------------------------------- */

typedef struct status {
    sched_code code;
    json_t *reasons; /* array of strings; NULL while the node fits */
} status;

static int st_fail(status *st, sched_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int st_fail(status *st, sched_code code, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!st->reasons && !(st->reasons = json_array())) return SCHED_ENOMEM;
    if (json_array_append_new(st->reasons, json_string(buf))) return SCHED_ENOMEM;
    if (code > st->code) st->code = code;
    return 0;
}

static void st_clear(status *st)
{
    json_decref(st->reasons);
    st->reasons = NULL;
    st->code = SCHED_FIT;
}

/* ---- TaintToleration and NodeUnschedulable --------------------------------------------------- */

/* Toleration.ToleratesTaint. An empty effect matches every effect, an empty key
 * (only valid with Exists) every key; "" and Equal compare values. */
static bool toleration_matches(const json_t *t, const char *key, const char *value,
                               const char *effect)
{
    const char *te = jstr(t, "effect"), *tk = jstr(t, "key"), *op = jstr(t, "operator");
    if (*te && strcmp(te, effect) != 0) return false;
    if (*tk && strcmp(tk, key) != 0) return false;
    if (!*op || strcmp(op, "Equal") == 0) return strcmp(jstr(t, "value"), value) == 0;
    return strcmp(op, "Exists") == 0;
}

/* TolerationsTolerateTaint. */
static bool tolerated(const json_t *pod, const char *key, const char *value, const char *effect)
{
    size_t i;
    const json_t *t;
    json_array_foreach(jget(pod, "spec", "tolerations", NULL), i, t)
    {
        if (toleration_matches(t, key, value, effect)) return true;
    }
    return false;
}

static int filter_unschedulable(const json_t *pod, const json_t *node, status *st)
{
    if (!json_is_true(jget(node, "spec", "unschedulable", NULL))) return 0;
    /* A pod tolerating the unschedulable taint tolerates spec.unschedulable too. */
    if (tolerated(pod, "node.kubernetes.io/unschedulable", "", "NoSchedule")) return 0;
    return st_fail(st, SCHED_UNRESOLVABLE, SCHED_MSG_UNSCHEDULABLE);
}

/* FindMatchingUntoleratedTaint over the NoSchedule and NoExecute taints: the first
 * untolerated one names the failure. */
static int filter_taints(const json_t *pod, const json_t *node, status *st)
{
    size_t i;
    const json_t *t;
    json_array_foreach(jget(node, "spec", "taints", NULL), i, t)
    {
        const char *effect = jstr(t, "effect");
        if (strcmp(effect, "NoSchedule") != 0 && strcmp(effect, "NoExecute") != 0) continue;
        const char *key = jstr(t, "key"), *value = jstr(t, "value");
        if (!tolerated(pod, key, value, effect))
            return st_fail(st, SCHED_UNRESOLVABLE, SCHED_MSG_TAINT, key, value);
    }
    return 0;
}

/* ---- NodeAffinity ---------------------------------------------------------------------------- */

static bool values_contain(const json_t *values, const char *v)
{
    size_t i;
    const json_t *x;
    json_array_foreach(values, i, x)
    {
        if (json_is_string(x) && strcmp(json_string_value(x), v) == 0) return true;
    }
    return false;
}

/* One matchExpressions entry (nodeSelectorRequirementsAsSelector + labels
 * Requirement.Matches). Returns 1 match, 0 no match, -1 a requirement upstream
 * refuses to build (the whole term is then skipped, as LazyErrorNodeSelector
 * does). Key and value syntax is left to API validation. */
static int label_req_matches(const json_t *req, const json_t *labels)
{
    const char *op = jstr(req, "operator");
    const json_t *vals = json_object_get(req, "values");
    size_t nv = json_array_size(vals);
    const char *have = json_string_value(json_object_get(labels, jstr(req, "key")));
    int64_t want, got;
    if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
        if (nv == 0) return -1;
        bool in = have && values_contain(vals, have);
        return op[0] == 'I' ? in : !in;
    }
    if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
        if (nv != 0) return -1;
        return op[0] == 'E' ? have != NULL : have == NULL;
    }
    if (!strcmp(op, "Gt") || !strcmp(op, "Lt")) {
        const char *v = json_string_value(json_array_get(vals, 0));
        if (nv != 1 || !v || !parse_int64(v, &want)) return -1;
        if (!have || !parse_int64(have, &got)) return 0;
        return op[0] == 'G' ? got > want : got < want;
    }
    return -1;
}

/* One matchFields entry (nodeSelectorRequirementsAsFieldSelector): In / NotIn with
 * exactly one value; the only node field is metadata.name, others read as "". */
static int field_req_matches(const json_t *req, const char *node_name)
{
    const char *op = jstr(req, "operator"), *key = jstr(req, "key");
    const json_t *vals = json_object_get(req, "values");
    const char *v = json_string_value(json_array_get(vals, 0));
    if ((strcmp(op, "In") != 0 && strcmp(op, "NotIn") != 0) || json_array_size(vals) != 1 || !v)
        return -1;
    const char *field = strcmp(key, "metadata.name") == 0 ? node_name : "";
    bool eq = strcmp(field, v) == 0;
    return op[0] == 'I' ? eq : !eq;
}

/* nodeSelectorTerm.match: 1, 0, or -1 when the term does not parse. A term with no
 * expressions and no fields selects nothing. */
static int term_matches(const json_t *term, const json_t *node)
{
    const json_t *exprs = json_object_get(term, "matchExpressions");
    const json_t *fields = json_object_get(term, "matchFields");
    const char *name = jstr(json_object_get(node, "metadata"), "name");
    if (json_array_size(exprs) == 0 && json_array_size(fields) == 0) return 0;
    int match = 1;
    size_t i;
    const json_t *r;
    /* Every requirement is parsed even after a mismatch: a parse error anywhere
     * discards the term. */
    json_array_foreach(exprs, i, r)
    {
        int m = label_req_matches(r, jget(node, "metadata", "labels", NULL));
        if (m < 0) return -1;
        match &= m;
    }
    json_array_foreach(fields, i, r)
    {
        int m = field_req_matches(r, name);
        if (m < 0) return -1;
        /* Upstream only applies field requirements when the node has a name. */
        if (*name) match &= m;
    }
    return match;
}

/* GetRequiredNodeAffinity(pod).Match(node): spec.nodeSelector, then the ORed
 * required nodeSelectorTerms (unparsable terms are skipped). */
static bool affinity_matches(const json_t *pod, const json_t *node)
{
    const json_t *labels = jget(node, "metadata", "labels", NULL);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)jget(pod, "spec", "nodeSelector", NULL), k, v)
    {
        const char *have = json_string_value(json_object_get(labels, k));
        if (!have || !json_is_string(v) || strcmp(have, json_string_value(v)) != 0) return false;
    }
    const json_t *req = jget(pod, "spec", "affinity", "nodeAffinity",
                             "requiredDuringSchedulingIgnoredDuringExecution", NULL);
    if (!req || json_is_null(req)) return true;
    size_t i;
    const json_t *term;
    json_array_foreach(json_object_get(req, "nodeSelectorTerms"), i, term)
    {
        if (term_matches(term, node) == 1) return true;
    }
    return false;
}

static int filter_affinity(const json_t *pod, const json_t *node, status *st)
{
    if (affinity_matches(pod, node)) return 0;
    return st_fail(st, SCHED_UNRESOLVABLE, SCHED_MSG_AFFINITY);
}

/* The names one term pins with `metadata.name In` requirements (their
 * intersection: they are ANDed), as a new JSON object used as a set; *set stays
 * NULL when the term has none. 0 or SCHED_ENOMEM. */
static int term_names(const json_t *term, json_t **set)
{
    size_t j, k;
    const json_t *r, *v;
    *set = NULL;
    json_array_foreach(json_object_get(term, "matchFields"), j, r)
    {
        if (strcmp(jstr(r, "key"), "metadata.name") || strcmp(jstr(r, "operator"), "In")) continue;
        json_t *next = json_object();
        int rc = next ? 0 : SCHED_ENOMEM;
        json_array_foreach(json_object_get(r, "values"), k, v)
        {
            const char *s = json_string_value(v);
            if (!rc && s && (!*set || json_object_get(*set, s)) &&
                json_object_set_new(next, s, json_true()))
                rc = SCHED_ENOMEM;
        }
        json_decref(*set);
        *set = next;
        if (rc) return rc;
    }
    return 0;
}

/* NodeAffinity PreFilter: when every required term pins metadata.name with In,
 * only the union of those names is evaluated (an empty union: the terms
 * conflict). *names gets that set as a new JSON object, or NULL for "all
 * nodes". 0 or SCHED_ENOMEM. */
static int affinity_prefilter(const json_t *pod, json_t **names)
{
    *names = NULL;
    const json_t *terms =
        jget(pod, "spec", "affinity", "nodeAffinity",
             "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", NULL);
    if (json_array_size(terms) == 0) return 0;
    json_t *all = json_object(), *set = NULL;
    int rc = all ? 0 : SCHED_ENOMEM;
    size_t i;
    const json_t *term;
    json_array_foreach(terms, i, term)
    {
        if (!rc) rc = term_names(term, &set);
        if (!rc && !set) { /* this term allows every node; the terms are ORed */
            json_decref(all);
            return 0;
        }
        if (!rc && json_object_update(all, set)) rc = SCHED_ENOMEM;
        json_decref(set);
        set = NULL;
    }
    if (rc)
        json_decref(all);
    else
        *names = all;
    return rc;
}

/* ---- NodeResourcesFit ------------------------------------------------------------------------ */

/* IsScalarResourceName: extended, hugepages-, kubernetes.io/-prefixed native and
 * attachable-volumes- names. Other names (pods, storage, ...) are not fitted. */
static bool is_scalar(const char *name)
{
    bool prefixed_native = strstr(name, "kubernetes.io/") != NULL;
    bool extended = strchr(name, '/') && !prefixed_native && !has_prefix(name, "requests.");
    return extended || prefixed_native || has_prefix(name, "hugepages-") ||
           has_prefix(name, "attachable-volumes-");
}

/* The scheduler's integer view of a quantity: milli-cores for cpu, Value() else. */
static int64_t amount(const rlist *l, const char *name)
{
    const qty *q = l ? rl_get(l, name) : NULL;
    if (!q) return 0;
    return strcmp(name, "cpu") == 0 ? qty_milli_value(q) : qty_value(q);
}

/* One resource of fitsRequest: insufficient when the request exceeds what is
 * left; unresolvable when it exceeds the whole allocatable. */
static int fit_one(const char *name, const rlist *req, const rlist *alloc, const rlist *used,
                   status *st)
{
    int64_t r = amount(req, name), a = amount(alloc, name), u = amount(used, name);
    if (r <= 0 || r <= a - u) return 0;
    return st_fail(st, r > a ? SCHED_UNRESOLVABLE : SCHED_UNSCHEDULABLE, SCHED_MSG_INSUFFICIENT,
                   name);
}

static int fit_check(const rlist *req, const rlist *alloc, const sched_node *n, status *st)
{
    if (n->pods + 1 > amount(alloc, "pods"))
        TRY_ST(st_fail(st, SCHED_UNSCHEDULABLE, SCHED_MSG_TOO_MANY_PODS));
    /* Upstream's order: pods, cpu, memory, ephemeral-storage, then scalars (in
     * map order there; sorted here, which the FitError sort makes invisible). */
    static const char *const fixed[] = {"cpu", "memory", "ephemeral-storage"};
    for (size_t i = 0; i < 3; i++)
        TRY_ST(fit_one(fixed[i], req, alloc, n->requested, st));
    for (size_t i = 0; i < rl_len(req); i++) {
        const char *name = rl_name(req, i);
        if (is_scalar(name)) TRY_ST(fit_one(name, req, alloc, n->requested, st));
    }
    return 0;
}

static int filter_fit(const rlist *req, const sched_node *n, status *st)
{
    if (n->allocatable) return fit_check(req, n->allocatable, n, st);
    rlist *alloc = rl_new();
    if (!alloc) return SCHED_ENOMEM;
    int rc = rl_from_json(jget(n->node, "status", "allocatable", NULL), alloc, NULL);
    if (rc == RL_ENOMEM)
        rc = SCHED_ENOMEM;
    else if (rc)
        rc = SCHED_EINVAL;
    if (!rc) rc = fit_check(req, alloc, n, st);
    rl_free(alloc);
    return rc;
}

/* ---- filters --------------------------------------------------------------------------------- */

/* The framework's RunFilterPlugins: stop at the first failing plugin. Order of
 * the default profile: NodeUnschedulable, TaintToleration, NodeAffinity,
 * NodeResourcesFit. */
static int run_filters(const json_t *pod, const rlist *req, const sched_node *n, status *st)
{
    int rc = filter_unschedulable(pod, n->node, st);
    if (!rc && !st->code) rc = filter_taints(pod, n->node, st);
    if (!rc && !st->code) rc = filter_affinity(pod, n->node, st);
    if (!rc && !st->code) rc = filter_fit(req, n, st);
    return rc;
}

int sched_filter(const json_t *pod, const rlist *pod_req, const sched_node *n, char *reason,
                 size_t len)
{
    status st = {SCHED_FIT, NULL};
    int rc = run_filters(pod, pod_req, n, &st);
    if (len) reason[0] = 0;
    if (!rc && st.code && len) {
        size_t off = 0, i;
        const json_t *r;
        json_array_foreach(st.reasons, i, r)
        {
            int w = snprintf(reason + off, len - off, "%s%s", i ? ", " : "", json_string_value(r));
            if (w < 0 || (size_t)w >= len - off) break;
            off += (size_t)w;
        }
    }
    if (!rc) rc = (int)st.code;
    st_clear(&st);
    return rc;
}

/* ---- pods and scoring ------------------------------------------------------------------------ */

bool sched_pod_ours(const json_t *pod)
{
    const char *sn = jstr(json_object_get(pod, "spec"), "schedulerName");
    if (*sn && strcmp(sn, "default-scheduler") != 0) return false;
    if (*jstr(json_object_get(pod, "spec"), "nodeName")) return false;
    const json_t *del = jget(pod, "metadata", "deletionTimestamp", NULL);
    return !del || json_is_null(del);
}

bool sched_pod_gated(const json_t *pod)
{
    return json_array_size(jget(pod, "spec", "schedulingGates", NULL)) > 0;
}

/* A member that is an object, created (or replacing a non-object) when needed. */
static json_t *obj_member(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (json_is_object(v)) return v;
    v = json_object();
    if (v && json_object_set_new(o, k, v)) return NULL;
    return v;
}

/* applyNonMissing on one container: cpu and memory requests that are absent get
 * the scoring defaults. */
static int default_container(json_t *ctr)
{
    char mem[32];
    json_t *req = obj_member(obj_member(ctr, "resources"), "requests");
    if (!req) return SCHED_ENOMEM;
    snprintf(mem, sizeof mem, "%lld", (long long)SCHED_DEFAULT_MEMORY);
    if (!json_object_get(req, "cpu") &&
        json_object_set_new(req, "cpu", json_sprintf("%dm", SCHED_DEFAULT_MILLI_CPU)))
        return SCHED_ENOMEM;
    if (!json_object_get(req, "memory") && json_object_set_new(req, "memory", json_string(mem)))
        return SCHED_ENOMEM;
    return 0;
}

static int quota_rc(int rc)
{
    if (rc == QUOTA_ENOMEM || rc == RL_ENOMEM) return SCHED_ENOMEM;
    return rc ? SCHED_EINVAL : 0;
}

/* Rather than a second copy of PodRequests, the defaults are written into a copy
 * of the pod and quota_pod_requests (the one place that sums a pod) runs on it. */
int sched_pod_nonzero_requests(const json_t *pod, rlist *out)
{
    static const char *const lists[] = {"containers", "initContainers"};
    json_t *cp = json_deep_copy(pod);
    int rc = cp ? 0 : SCHED_ENOMEM;
    for (size_t l = 0; l < 2 && !rc; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(jget(cp, "spec", lists[l], NULL), i, c)
        {
            if (!rc && json_is_object(c)) rc = default_container(c);
        }
    }
    if (!rc) rc = quota_rc(quota_pod_requests(cp, out));
    json_decref(cp);
    return rc;
}

static int node_allocatable(const json_t *node, rlist **out)
{
    if (!(*out = rl_new())) return SCHED_ENOMEM;
    int rc = quota_rc(rl_from_json(jget(node, "status", "allocatable", NULL), *out, NULL));
    if (rc) {
        rl_free(*out);
        *out = NULL;
    }
    return rc;
}

/* leastRequestedScore. */
static int64_t least_requested(int64_t requested, int64_t capacity)
{
    if (capacity <= 0 || requested > capacity) return 0;
    int64_t free = capacity - requested;
    if (free > INT64_MAX / 100) return free / (capacity / 100); /* > 92 PB: avoid overflow */
    return free * 100 / capacity;
}

int sched_score(const rlist *pod_nonzero, const sched_node *n)
{
    static const char *const names[] = {"cpu", "memory"};
    rlist *parsed = NULL;
    if (!n->allocatable) TRY_ST(node_allocatable(n->node, &parsed));
    const rlist *alloc = n->allocatable ? n->allocatable : parsed;
    const rlist *used = n->nonzero ? n->nonzero : n->requested;
    int64_t score = 0, weights = 0;
    for (size_t i = 0; i < 2; i++) {
        int64_t a = amount(alloc, names[i]);
        if (a == 0) continue; /* upstream skips a resource the node lacks */
        score += least_requested(amount(used, names[i]) + amount(pod_nonzero, names[i]), a);
        weights++;
    }
    rl_free(parsed);
    return weights ? (int)(score / weights) : 0;
}

/* ---- FitError -------------------------------------------------------------------------------- */

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The reasons histogram of FitError.Error(): "<count> <reason>" strings sorted as
 * strings (so "10 x" sorts before "2 y", as upstream), joined by ", ", then ".". */
static int append_histogram(const json_t *counts, dbuf *out)
{
    size_t n = json_object_size(counts), i = 0;
    char **lines = calloc(n ? n : 1, sizeof *lines);
    int rc = lines ? 0 : SCHED_ENOMEM;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)counts, k, v)
    {
        if (!rc && asprintf(&lines[i++], "%lld %s", (long long)json_integer_value(v), k) < 0) {
            lines[--i] = NULL;
            rc = SCHED_ENOMEM;
        }
    }
    if (!rc) qsort(lines, i, sizeof *lines, str_cmp);
    for (size_t j = 0; j < i; j++) {
        if (!rc && dbuf_printf(out, "%s%s", j ? ", " : " ", lines[j])) rc = SCHED_ENOMEM;
        free(lines[j]);
    }
    if (!rc && i && dbuf_adds(out, ".")) rc = SCHED_ENOMEM;
    free(lines);
    return rc;
}

static int count(json_t *counts, const char *reason)
{
    json_int_t c = json_integer_value(json_object_get(counts, reason));
    return json_object_set_new(counts, reason, json_integer(c + 1)) ? SCHED_ENOMEM : 0;
}

/* Per-node statuses -> histogram. In the preemption pass a node's status is what
 * DefaultPreemption found there (see the header comment). */
static int histogram(const status *st, size_t n, bool preemption, dbuf *out)
{
    json_t *counts = json_object();
    int rc = counts ? 0 : SCHED_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++) {
        if (preemption) {
            rc = count(counts, st[i].code == SCHED_UNRESOLVABLE ? SCHED_MSG_NOT_HELPFUL
                                                                : SCHED_MSG_NO_VICTIMS);
            continue;
        }
        size_t j;
        const json_t *r;
        json_array_foreach(st[i].reasons, j, r)
        {
            if (!rc) rc = count(counts, json_string_value(r));
        }
    }
    if (!rc) rc = append_histogram(counts, out);
    json_decref(counts);
    return rc;
}

/* FitError.Error() of the scheduling attempt, then " " and the PostFilter
 * message ("preemption: " + the preemption FitError, or the eligibility text). */
static int fit_error_message(const json_t *pod, const status *st, size_t n, const char *prefilter,
                             dbuf *out)
{
    DBUF_TRY(dbuf_printf(out, "0/%zu nodes are available:", n));
    if (prefilter)
        DBUF_TRY(dbuf_printf(out, " %s.", prefilter));
    else
        TRY_ST(histogram(st, n, false, out));
    DBUF_TRY(dbuf_adds(out, " preemption: "));
    if (strcmp(jstr(json_object_get(pod, "spec"), "preemptionPolicy"), "Never") == 0) {
        DBUF_TRY(dbuf_adds(out, SCHED_MSG_NOT_ELIGIBLE));
        return 0;
    }
    DBUF_TRY(dbuf_printf(out, "0/%zu nodes are available:", n));
    return histogram(st, n, true, out);
}

/* ---- sched_pick ------------------------------------------------------------------------------ */

typedef struct pick {
    const json_t *pod;
    const sched_node *nodes;
    size_t n;
    rlist *req, *nonzero;
    json_t *names; /* NodeAffinity PreFilter result; NULL = all nodes */
    status *st;
    long best; /* index of the best node so far, -1 if none */
    int best_score;
    sched_sample *sample; /* NULL: examine every node */
} pick;

static const char *node_name(const sched_node *n)
{
    return jstr(json_object_get(n->node, "metadata"), "name");
}

static int consider(pick *p, size_t i)
{
    const sched_node *nd = &p->nodes[i];
    if (p->names && !json_object_get(p->names, node_name(nd)))
        return st_fail(&p->st[i], SCHED_UNRESOLVABLE, SCHED_MSG_AFFINITY_PREFILTER);
    TRY_ST(run_filters(p->pod, p->req, nd, &p->st[i]));
    if (p->st[i].code) return 0;
    int s = sched_score(p->nonzero, nd);
    if (s < 0) return s;
    if (p->best < 0 || s > p->best_score ||
        (s == p->best_score && strcmp(node_name(nd), node_name(&p->nodes[p->best])) < 0)) {
        p->best = (long)i;
        p->best_score = s;
    }
    return 0;
}

static int pick_run(pick *p, size_t *chosen, dbuf *fit_error)
{
    TRY_ST(quota_rc(quota_pod_requests(p->pod, p->req)));
    TRY_ST(sched_pod_nonzero_requests(p->pod, p->nonzero));
    TRY_ST(affinity_prefilter(p->pod, &p->names));
    if (p->names && json_object_size(p->names) == 0) {
        /* PreFilter rejected the pod: every node carries that status. */
        for (size_t i = 0; i < p->n; i++)
            TRY_ST(st_fail(&p->st[i], SCHED_UNRESOLVABLE, SCHED_MSG_AFFINITY_CONFLICT));
        TRY_ST(fit_error_message(p->pod, p->st, p->n, SCHED_MSG_AFFINITY_CONFLICT, fit_error));
        return 1;
    }
    size_t start = p->sample ? p->sample->start % p->n : 0, feasible = 0, i;
    size_t limit = p->sample && p->sample->max_feasible ? p->sample->max_feasible : p->n;
    for (i = 0; i < p->n && feasible < limit; i++) {
        size_t k = (start + i) % p->n;
        TRY_ST(consider(p, k));
        if (!p->st[k].code) feasible++;
    }
    if (p->sample) p->sample->examined = i;
    if (p->best >= 0) {
        *chosen = (size_t)p->best;
        return 0;
    }
    TRY_ST(fit_error_message(p->pod, p->st, p->n, NULL, fit_error));
    return 1;
}

int sched_pick(const json_t *pod, const sched_node *nodes, size_t n, size_t *chosen,
               dbuf *fit_error)
{
    return sched_pick_sampled(pod, nodes, n, NULL, chosen, fit_error);
}

int sched_pick_sampled(const json_t *pod, const sched_node *nodes, size_t n, sched_sample *sample,
                       size_t *chosen, dbuf *fit_error)
{
    if (n == 0) /* ErrNoNodesAvailable: no FitError, no PostFilter */
        return dbuf_adds(fit_error, SCHED_MSG_NO_NODES) ? SCHED_ENOMEM : 1;
    pick p = {pod, nodes, n, rl_new(), rl_new(), NULL, calloc(n, sizeof(status)), -1, 0, sample};
    int rc = p.req && p.nonzero && p.st ? pick_run(&p, chosen, fit_error) : SCHED_ENOMEM;
    for (size_t i = 0; p.st && i < n; i++)
        st_clear(&p.st[i]);
    free(p.st);
    json_decref(p.names);
    rl_free(p.req);
    rl_free(p.nonzero);
    return rc;
}

/* ---- quota PreFilter message ----------------------------------------------------------------- */

int sched_quota_message(dbuf *out, size_t nnodes, const char *quota, const char *requested,
                        const char *used, const char *limited)
{
    if (nnodes == 0) /* upstream stops before PreFilter when there is no node */
        return dbuf_adds(out, SCHED_MSG_NO_NODES) ? SCHED_ENOMEM : 0;
    DBUF_TRY(dbuf_printf(out,
                         "0/%zu nodes are available: quota exceeded: %s, requested: %s, used: %s, "
                         "limited: %s. preemption: 0/%zu nodes are available: %zu %s.",
                         nnodes, quota, requested, used, limited, nnodes, nnodes,
                         SCHED_MSG_NOT_HELPFUL));
    return 0;
}

int sched_quota_message_rl(dbuf *out, size_t nnodes, const char *quota, const rlist *requested,
                           const rlist *used, const rlist *limited)
{
    dbuf parts[3];
    const rlist *lists[3] = {requested, used, limited};
    int rc = 0;
    for (size_t i = 0; i < 3; i++) {
        dbuf_init(&parts[i], out->max);
        if (!rc && (rl_format(lists[i], &parts[i]) || dbuf_adds(&parts[i], ""))) rc = SCHED_ENOMEM;
    }
    if (!rc) rc = sched_quota_message(out, nnodes, quota, parts[0].p, parts[1].p, parts[2].p);
    for (size_t i = 0; i < 3; i++)
        dbuf_free(&parts[i]);
    return rc;
}

/* ---- queue ----------------------------------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* n decimal digits at *s. */
static bool digits(const char **s, int n, int64_t *v)
{
    *v = 0;
    for (int i = 0; i < n; i++, (*s)++) {
        if (**s < '0' || **s > '9') return false;
        *v = *v * 10 + (**s - '0');
    }
    return true;
}

static bool expect(const char **s, char c)
{
    return *(*s)++ == c;
}

/* RFC 3339 (time.RFC3339, fractional seconds allowed) -> seconds and nanoseconds
 * since the epoch. */
static bool parse_time(const char *s, int64_t *sec, int64_t *nsec)
{
    int64_t y, mo, d, h, mi, se, oh = 0, om = 0;
    if (!digits(&s, 4, &y) || !expect(&s, '-') || !digits(&s, 2, &mo) || !expect(&s, '-') ||
        !digits(&s, 2, &d) || !expect(&s, 'T') || !digits(&s, 2, &h) || !expect(&s, ':') ||
        !digits(&s, 2, &mi) || !expect(&s, ':') || !digits(&s, 2, &se))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59) return false;
    *nsec = 0;
    if (*s == '.') {
        int n = 0;
        for (s++; *s >= '0' && *s <= '9'; s++, n++)
            if (n < 9) *nsec = *nsec * 10 + (*s - '0');
        if (n == 0) return false;
        for (; n < 9; n++)
            *nsec *= 10;
    }
    int sign = *s == '+' ? 1 : *s == '-' ? -1 : 0;
    if (sign) {
        s++;
        if (!digits(&s, 2, &oh) || !expect(&s, ':') || !digits(&s, 2, &om)) return false;
    } else if (!expect(&s, 'Z')) {
        return false;
    }
    if (*s) return false;
    *sec =
        days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - sign * (oh * 3600 + om * 60);
    return true;
}

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static int64_t priority(const json_t *pod)
{
    return json_integer_value(jget(pod, "spec", "priority", NULL));
}

void sched_queue_keys(const json_t *pod, int64_t *prio, int64_t *created_ns)
{
    int64_t secs, nanos;
    *prio = priority(pod);
    /* An unknown time sorts after every known one, as in sched_queue_cmp. */
    if (parse_time(jstr(json_object_get(pod, "metadata"), "creationTimestamp"), &secs, &nanos))
        *created_ns = secs * 1000000000 + nanos;
    else
        *created_ns = INT64_MAX;
}

int sched_queue_cmp(const json_t *a, const json_t *b)
{
    int c = cmp_i64(priority(b), priority(a)); /* higher first */
    if (c) return c;
    int64_t as, an, bs, bn;
    const json_t *am = json_object_get(a, "metadata"), *bm = json_object_get(b, "metadata");
    bool ao = parse_time(jstr(am, "creationTimestamp"), &as, &an);
    bool bo = parse_time(jstr(bm, "creationTimestamp"), &bs, &bn);
    if (ao != bo) return ao ? -1 : 1; /* a known time goes before an unknown one */
    if (ao && (c = cmp_i64(as, bs) ? cmp_i64(as, bs) : cmp_i64(an, bn))) return c;
    if ((c = strcmp(jstr(am, "namespace"), jstr(bm, "namespace")))) return c;
    return strcmp(jstr(am, "name"), jstr(bm, "name"));
}

/* calculateBackoffDuration: initial * 2^(attempts-1), capped, without overflow. */
int64_t sched_backoff_ms(int attempts)
{
    const int64_t initial = 1000, max = 10000;
    if (attempts <= 0) return 0;
    int64_t d = initial;
    for (int i = 1; i < attempts; i++) {
        if (d > max - d) return max;
        d += d;
    }
    return d;
}
