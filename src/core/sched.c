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

#include "core/jget.h"
#include "core/quantity.h"
#include "core/quota_eval.h"
#include "core/rfc3339.h"

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
    bool quiet;      /* only the code is wanted: a pick that finds a node never shows
                      * the reasons, so its pass skips formatting them */
} status;

static int st_fail(status *st, sched_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int st_fail(status *st, sched_code code, const char *fmt, ...)
{
    if (code > st->code) st->code = code;
    if (st->quiet) return 0;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!st->reasons && !(st->reasons = json_array())) return SCHED_ENOMEM;
    if (json_array_append_new(st->reasons, json_string(buf))) return SCHED_ENOMEM;
    return 0;
}

static void st_clear(status *st)
{
    json_decref(st->reasons);
    st->reasons = NULL;
    st->code = SCHED_FIT;
}

/* ---- the prepared pod ------------------------------------------------------------------------ */

/* A toleration's operator: "" and Equal compare values, Exists matches any
 * value, anything else tolerates nothing. */
typedef enum { TOL_EQUAL, TOL_EXISTS, TOL_NEVER } tol_op;

typedef struct toleration {
    const char *key, *value, *effect; /* "" when absent */
    tol_op op;
} toleration;

typedef enum { REQ_IN, REQ_NOT_IN, REQ_EXISTS, REQ_DOES_NOT_EXIST, REQ_GT, REQ_LT } req_op;

/* One parsed matchExpressions (label) or matchFields entry. */
typedef struct requirement {
    bool field;
    req_op op;
    const char *key;      /* label key; for a field, NULL unless it is metadata.name */
    const json_t *values; /* label In / NotIn */
    const char *value;    /* field In / NotIn */
    int64_t bound;        /* label Gt / Lt */
} requirement;

typedef struct term {
    size_t first, count; /* its requirements in sched_pod.reqs */
} term;

typedef struct scalar {
    const char *name; /* borrowed from sched_pod.req */
    int64_t amount;
} scalar;

struct sched_pod {
    const json_t *pod;
    rlist *own_req, *own_nonzero; /* what sched_pod_new computed */
    const rlist *req, *nonzero;   /* the lists in use (sched_filter lends its own) */
    int64_t req_cpu, req_memory, req_storage, nz_cpu, nz_memory;
    scalar *scalars; /* the scalar resources of req, in its (sorted) order */
    size_t nscalars;
    toleration *tols;
    size_t ntols;
    bool tolerates_unschedulable;
    const char **selector; /* spec.nodeSelector as key, value, key, value, ... */
    size_t nselector;      /* pairs */
    bool selector_never;   /* a non-string value: no node matches */
    bool required;         /* required node affinity is set */
    requirement *reqs;
    term *terms; /* the parsable, non-empty nodeSelectorTerms only: the others
                  * never match any node */
    size_t nterms;
    json_t *names; /* NodeAffinity PreFilter result; NULL = all nodes */
};

/* The scheduler's integer view of a quantity: milli-cores for cpu, Value() else. */
static int64_t amount(const rlist *l, const char *name)
{
    const qty *q = l ? rl_get(l, name) : NULL;
    if (!q) return 0;
    return strcmp(name, "cpu") == 0 ? qty_milli_value(q) : qty_value(q);
}

/* IsScalarResourceName: extended, hugepages-, kubernetes.io/-prefixed native and
 * attachable-volumes- names. Other names (pods, storage, ...) are not fitted. */
static bool is_scalar(const char *name)
{
    bool prefixed_native = strstr(name, "kubernetes.io/") != NULL;
    bool extended = strchr(name, '/') && !prefixed_native && !has_prefix(name, "requests.");
    return extended || prefixed_native || has_prefix(name, "hugepages-") ||
           has_prefix(name, "attachable-volumes-");
}

/* Toleration.ToleratesTaint. An empty effect matches every effect, an empty key
 * (only valid with Exists) every key. */
static bool toleration_matches(const toleration *t, const char *key, const char *value,
                               const char *effect)
{
    if (*t->effect && strcmp(t->effect, effect) != 0) return false;
    if (*t->key && strcmp(t->key, key) != 0) return false;
    if (t->op == TOL_EQUAL) return strcmp(t->value, value) == 0;
    return t->op == TOL_EXISTS;
}

/* TolerationsTolerateTaint. */
static bool tolerated(const sched_pod *sp, const char *key, const char *value, const char *effect)
{
    for (size_t i = 0; i < sp->ntols; i++)
        if (toleration_matches(&sp->tols[i], key, value, effect)) return true;
    return false;
}

static int compile_tolerations(sched_pod *sp)
{
    const json_t *tols = jget(sp->pod, "spec", "tolerations"), *t;
    size_t i;
    if (json_array_size(tols) && !(sp->tols = calloc(json_array_size(tols), sizeof *sp->tols)))
        return SCHED_ENOMEM;
    json_array_foreach(tols, i, t)
    {
        const char *op = jtext(t, "operator");
        sp->tols[i] = (toleration){jtext(t, "key"), jtext(t, "value"), jtext(t, "effect"),
                                   !*op || !strcmp(op, "Equal") ? TOL_EQUAL
                                   : !strcmp(op, "Exists")      ? TOL_EXISTS
                                                                : TOL_NEVER};
    }
    sp->ntols = json_array_size(tols);
    /* A pod tolerating the unschedulable taint tolerates spec.unschedulable too. */
    sp->tolerates_unschedulable =
        tolerated(sp, "node.kubernetes.io/unschedulable", "", "NoSchedule");
    return 0;
}

static int compile_selector(sched_pod *sp)
{
    const json_t *sel = jget(sp->pod, "spec", "nodeSelector"), *v;
    const char *k;
    size_t n = 0;
    if (json_object_size(sel) &&
        !(sp->selector = calloc(2 * json_object_size(sel), sizeof(char *))))
        return SCHED_ENOMEM;
    json_object_foreach((json_t *)sel, k, v)
    {
        if (!json_is_string(v)) sp->selector_never = true;
        sp->selector[2 * n] = k;
        sp->selector[2 * n + 1] = json_string_value(v);
        n++;
    }
    sp->nselector = n;
    return 0;
}

/* One matchExpressions entry (nodeSelectorRequirementsAsSelector): false for a
 * requirement upstream refuses to build (the whole term is then skipped, as
 * LazyErrorNodeSelector does). Key and value syntax is left to API validation. */
static bool compile_label_req(const json_t *req, requirement *out)
{
    const char *op = jtext(req, "operator");
    const json_t *vals = json_object_get(req, "values");
    size_t nv = json_array_size(vals);
    *out = (requirement){false, REQ_IN, jtext(req, "key"), vals, NULL, 0};
    if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
        out->op = op[0] == 'I' ? REQ_IN : REQ_NOT_IN;
        return nv != 0;
    }
    if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
        out->op = op[0] == 'E' ? REQ_EXISTS : REQ_DOES_NOT_EXIST;
        return nv == 0;
    }
    if (!strcmp(op, "Gt") || !strcmp(op, "Lt")) {
        const char *v = json_string_value(json_array_get(vals, 0));
        out->op = op[0] == 'G' ? REQ_GT : REQ_LT;
        return nv == 1 && v && parse_int64(v, &out->bound);
    }
    return false;
}

/* One matchFields entry (nodeSelectorRequirementsAsFieldSelector): In / NotIn with
 * exactly one value; the only node field is metadata.name, others read as "". */
static bool compile_field_req(const json_t *req, requirement *out)
{
    const char *op = jtext(req, "operator"), *key = jtext(req, "key");
    const json_t *vals = json_object_get(req, "values");
    const char *v = json_string_value(json_array_get(vals, 0));
    *out = (requirement){true,
                         op[0] == 'I' ? REQ_IN : REQ_NOT_IN,
                         strcmp(key, "metadata.name") == 0 ? key : NULL,
                         NULL,
                         v,
                         0};
    return (!strcmp(op, "In") || !strcmp(op, "NotIn")) && json_array_size(vals) == 1 && v;
}

/* The required nodeSelectorTerms, keeping the terms that can match at all:
 * whether a term parses does not depend on the node. */
static int compile_affinity(sched_pod *sp)
{
    const json_t *req = jget(sp->pod, "spec", "affinity", "nodeAffinity",
                             "requiredDuringSchedulingIgnoredDuringExecution");
    if (!req || json_is_null(req)) return 0;
    sp->required = true;
    const json_t *terms = json_object_get(req, "nodeSelectorTerms"), *t, *r;
    size_t i, j, nreqs = 0;
    json_array_foreach(terms, i, t)
    {
        nreqs += json_array_size(json_object_get(t, "matchExpressions")) +
                 json_array_size(json_object_get(t, "matchFields"));
    }
    if (nreqs == 0) return 0; /* no term selects anything */
    sp->reqs = calloc(nreqs, sizeof *sp->reqs);
    sp->terms = calloc(json_array_size(terms), sizeof *sp->terms);
    if (!sp->reqs || !sp->terms) return SCHED_ENOMEM;
    size_t used = 0;
    json_array_foreach(terms, i, t)
    {
        const json_t *exprs = json_object_get(t, "matchExpressions");
        const json_t *fields = json_object_get(t, "matchFields");
        term tm = {used, 0};
        bool ok = json_array_size(exprs) + json_array_size(fields) > 0; /* empty: no node */
        json_array_foreach(exprs, j, r)
        {
            if (ok) ok = compile_label_req(r, &sp->reqs[tm.first + tm.count++]);
        }
        json_array_foreach(fields, j, r)
        {
            if (ok) ok = compile_field_req(r, &sp->reqs[tm.first + tm.count++]);
        }
        if (!ok) continue; /* its slots are reused by the next term */
        sp->terms[sp->nterms++] = tm;
        used += tm.count;
    }
    return 0;
}

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

/* labels Requirement.Matches. */
static bool label_req_matches(const requirement *r, const json_t *labels)
{
    const char *have = json_string_value(json_object_get(labels, r->key));
    int64_t got;
    switch (r->op) {
    case REQ_IN:
        return have && values_contain(r->values, have);
    case REQ_NOT_IN:
        return !(have && values_contain(r->values, have));
    case REQ_EXISTS:
        return have != NULL;
    case REQ_DOES_NOT_EXIST:
        return have == NULL;
    case REQ_GT:
        return have && parse_int64(have, &got) && got > r->bound;
    case REQ_LT:
        return have && parse_int64(have, &got) && got < r->bound;
    }
    return false;
}

/* nodeSelectorTerm.match on a term that parsed. */
static bool term_matches(const sched_pod *sp, const term *t, const sched_node_prep *np)
{
    for (size_t i = 0; i < t->count; i++) {
        const requirement *r = &sp->reqs[t->first + i];
        if (!r->field) {
            if (!label_req_matches(r, np->labels)) return false;
            continue;
        }
        /* Upstream only applies field requirements when the node has a name. */
        if (!*np->name) continue;
        bool eq = strcmp(r->key ? np->name : "", r->value) == 0;
        if (eq != (r->op == REQ_IN)) return false;
    }
    return true;
}

/* GetRequiredNodeAffinity(pod).Match(node): spec.nodeSelector, then the ORed
 * required nodeSelectorTerms. */
static bool affinity_matches(const sched_pod *sp, const sched_node_prep *np)
{
    if (sp->selector_never) return false;
    for (size_t i = 0; i < sp->nselector; i++) {
        const char *have = json_string_value(json_object_get(np->labels, sp->selector[2 * i]));
        if (!have || strcmp(have, sp->selector[2 * i + 1]) != 0) return false;
    }
    if (!sp->required) return true;
    for (size_t i = 0; i < sp->nterms; i++)
        if (term_matches(sp, &sp->terms[i], np)) return true;
    return false;
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
        if (strcmp(jtext(r, "key"), "metadata.name") || strcmp(jtext(r, "operator"), "In"))
            continue;
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
             "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms");
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

/* The integer forms of sp->req and sp->nonzero (NULL: zeros). */
static int pod_amounts(sched_pod *sp)
{
    sp->req_cpu = amount(sp->req, "cpu");
    sp->req_memory = amount(sp->req, "memory");
    sp->req_storage = amount(sp->req, "ephemeral-storage");
    sp->nz_cpu = amount(sp->nonzero, "cpu");
    sp->nz_memory = amount(sp->nonzero, "memory");
    size_t n = 0;
    for (size_t i = 0; i < rl_len(sp->req); i++)
        n += is_scalar(rl_name(sp->req, i));
    if (n && !(sp->scalars = calloc(n, sizeof *sp->scalars))) return SCHED_ENOMEM;
    for (size_t i = 0; i < rl_len(sp->req); i++) {
        const char *name = rl_name(sp->req, i);
        if (is_scalar(name)) sp->scalars[sp->nscalars++] = (scalar){name, amount(sp->req, name)};
    }
    return 0;
}

/* Everything but the lists, which sp->req / sp->nonzero already point at. */
static int pod_compile(sched_pod *sp)
{
    TRY_ST(pod_amounts(sp));
    TRY_ST(compile_tolerations(sp));
    TRY_ST(compile_selector(sp));
    return compile_affinity(sp);
}

/* Frees what sp owns, not sp itself. */
static void pod_release(sched_pod *sp)
{
    rl_free(sp->own_req);
    rl_free(sp->own_nonzero);
    free(sp->scalars);
    free(sp->tols);
    free(sp->selector);
    free(sp->reqs);
    free(sp->terms);
    json_decref(sp->names);
}

/* ---- the prepared node ----------------------------------------------------------------------- */

/* The JSON half of a prep: never fails. */
static void node_meta(const json_t *node, sched_node_prep *p)
{
    *p = (sched_node_prep){.ready = true};
    p->name = jtext(json_object_get(node, "metadata"), "name");
    p->labels = jget(node, "metadata", "labels");
    p->taints = jget(node, "spec", "taints");
    p->unschedulable = json_is_true(jget(node, "spec", "unschedulable"));
}

/* The amounts half, from the node's lists and its parsed allocatable. */
static void node_amounts(const sched_node *n, const rlist *alloc, sched_node_prep *p)
{
    const rlist *used = n->nonzero ? n->nonzero : n->requested;
    p->amounts = true;
    p->alloc_cpu = amount(alloc, "cpu");
    p->alloc_memory = amount(alloc, "memory");
    p->alloc_storage = amount(alloc, "ephemeral-storage");
    p->alloc_pods = amount(alloc, "pods");
    p->req_cpu = amount(n->requested, "cpu");
    p->req_memory = amount(n->requested, "memory");
    p->req_storage = amount(n->requested, "ephemeral-storage");
    p->score_cpu = amount(used, "cpu");
    p->score_memory = amount(used, "memory");
}

void sched_node_prepare(sched_node *n)
{
    node_meta(n->node, &n->prep);
    /* Without a parsed allocatable the amounts are derived on use, where a bad
     * quantity is reported as before. */
    if (n->allocatable) node_amounts(n, n->allocatable, &n->prep);
}

static int quota_rc(int rc)
{
    if (rc == QUOTA_ENOMEM || rc == RL_ENOMEM) return SCHED_ENOMEM;
    return rc ? SCHED_EINVAL : 0;
}

static int node_allocatable(const json_t *node, rlist **out)
{
    if (!(*out = rl_new())) return SCHED_ENOMEM;
    int rc = quota_rc(rl_from_json(jget(node, "status", "allocatable"), *out, NULL));
    if (rc) {
        rl_free(*out);
        *out = NULL;
    }
    return rc;
}

/* A node's prep with its amounts: n->prep when sched_node_prepare made it,
 * else derived into *tmp, parsing status.allocatable into *parsed (the
 * caller frees it) when the caller did not. *alloc is the allocatable list. */
static int node_with_amounts(const sched_node *n, const sched_node_prep *np, sched_node_prep *tmp,
                             rlist **parsed, const sched_node_prep **out, const rlist **alloc)
{
    *parsed = NULL;
    *alloc = n->allocatable;
    if (np->amounts) {
        *out = np;
        return 0;
    }
    if (!*alloc) TRY_ST(node_allocatable(n->node, parsed));
    if (!*alloc) *alloc = *parsed;
    *tmp = *np;
    node_amounts(n, *alloc, tmp);
    *out = tmp;
    return 0;
}

/* ---- filters --------------------------------------------------------------------------------- */

static int filter_unschedulable(const sched_pod *sp, const sched_node_prep *np, status *st)
{
    if (!np->unschedulable || sp->tolerates_unschedulable) return 0;
    return st_fail(st, SCHED_UNRESOLVABLE, SCHED_MSG_UNSCHEDULABLE);
}

/* FindMatchingUntoleratedTaint over the NoSchedule and NoExecute taints: the first
 * untolerated one names the failure. */
static int filter_taints(const sched_pod *sp, const sched_node_prep *np, status *st)
{
    size_t i;
    const json_t *t;
    json_array_foreach(np->taints, i, t)
    {
        const char *effect = jtext(t, "effect");
        if (strcmp(effect, "NoSchedule") != 0 && strcmp(effect, "NoExecute") != 0) continue;
        const char *key = jtext(t, "key"), *value = jtext(t, "value");
        if (!tolerated(sp, key, value, effect))
            return st_fail(st, SCHED_UNRESOLVABLE, SCHED_MSG_TAINT, key, value);
    }
    return 0;
}

static int filter_affinity(const sched_pod *sp, const sched_node_prep *np, status *st)
{
    if (affinity_matches(sp, np)) return 0;
    return st_fail(st, SCHED_UNRESOLVABLE, SCHED_MSG_AFFINITY);
}

/* One resource of fitsRequest: insufficient when the request exceeds what is
 * left; unresolvable when it exceeds the whole allocatable. */
static int fit_one(const char *name, int64_t r, int64_t a, int64_t u, status *st)
{
    if (r <= 0 || r <= a - u) return 0;
    return st_fail(st, r > a ? SCHED_UNRESOLVABLE : SCHED_UNSCHEDULABLE, SCHED_MSG_INSUFFICIENT,
                   name);
}

static int filter_fit(const sched_pod *sp, const sched_node *n, const sched_node_prep *prep,
                      status *st)
{
    sched_node_prep tmp;
    const sched_node_prep *np;
    const rlist *alloc;
    rlist *parsed;
    TRY_ST(node_with_amounts(n, prep, &tmp, &parsed, &np, &alloc));
    int rc = 0;
    if (n->pods + 1 > np->alloc_pods)
        rc = st_fail(st, SCHED_UNSCHEDULABLE, SCHED_MSG_TOO_MANY_PODS);
    /* Upstream's order: pods, cpu, memory, ephemeral-storage, then scalars (in
     * map order there; sorted here, which the FitError sort makes invisible). */
    if (!rc) rc = fit_one("cpu", sp->req_cpu, np->alloc_cpu, np->req_cpu, st);
    if (!rc) rc = fit_one("memory", sp->req_memory, np->alloc_memory, np->req_memory, st);
    if (!rc)
        rc = fit_one("ephemeral-storage", sp->req_storage, np->alloc_storage, np->req_storage, st);
    for (size_t i = 0; i < sp->nscalars && !rc; i++) {
        const char *name = sp->scalars[i].name;
        rc = fit_one(name, sp->scalars[i].amount, amount(alloc, name), amount(n->requested, name),
                     st);
    }
    rl_free(parsed);
    return rc;
}

/* The framework's RunFilterPlugins: stop at the first failing plugin. Order of
 * the default profile: NodeUnschedulable, TaintToleration, NodeAffinity,
 * NodeResourcesFit. */
static int run_filters(const sched_pod *sp, const sched_node *n, const sched_node_prep *np,
                       status *st)
{
    int rc = filter_unschedulable(sp, np, st);
    if (!rc && !st->code) rc = filter_taints(sp, np, st);
    if (!rc && !st->code) rc = filter_affinity(sp, np, st);
    if (!rc && !st->code) rc = filter_fit(sp, n, np, st);
    return rc;
}

/* n->prep, or its JSON half derived now into *tmp. */
static const sched_node_prep *node_prep(const sched_node *n, sched_node_prep *tmp)
{
    if (n->prep.ready) return &n->prep;
    node_meta(n->node, tmp);
    return tmp;
}

int sched_filter(const json_t *pod, const rlist *pod_req, const sched_node *n, char *reason,
                 size_t len)
{
    status st = {SCHED_FIT, NULL, false};
    sched_pod sp = {.pod = pod, .req = pod_req};
    sched_node_prep tmp;
    int rc = pod_compile(&sp);
    if (!rc) rc = run_filters(&sp, n, node_prep(n, &tmp), &st);
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
    pod_release(&sp);
    return rc;
}

/* ---- pods and scoring ------------------------------------------------------------------------ */

bool sched_pod_ours(const json_t *pod)
{
    const char *sn = jtext(json_object_get(pod, "spec"), "schedulerName");
    if (*sn && strcmp(sn, "default-scheduler") != 0) return false;
    if (*jtext(json_object_get(pod, "spec"), "nodeName")) return false;
    const json_t *del = jget(pod, "metadata", "deletionTimestamp");
    return !del || json_is_null(del);
}

bool sched_pod_gated(const json_t *pod)
{
    return json_array_size(jget(pod, "spec", "schedulingGates")) > 0;
}

/* applyNonMissing on one container: a shallow copy of it whose resources and
 * resources.requests are copies too, with the scoring defaults for absent cpu
 * and memory requests. Everything else stays shared with the original, which
 * is not modified. *out NULL on error. */
static int default_container(const json_t *c, json_t **out)
{
    char mem[32];
    json_t *ctr = json_copy((json_t *)c), *res = json_object_get(c, "resources"), *req = NULL;
    res = json_is_object(res) ? json_copy(res) : json_object();
    if (res) {
        req = json_object_get(res, "requests");
        req = json_is_object(req) ? json_copy(req) : json_object();
    }
    int rc = ctr && res && req ? 0 : SCHED_ENOMEM;
    if (!rc && (json_object_set(res, "requests", req) || json_object_set(ctr, "resources", res)))
        rc = SCHED_ENOMEM;
    snprintf(mem, sizeof mem, "%lld", (long long)SCHED_DEFAULT_MEMORY);
    if (!rc && !json_object_get(req, "cpu") &&
        json_object_set_new(req, "cpu", json_sprintf("%dm", SCHED_DEFAULT_MILLI_CPU)))
        rc = SCHED_ENOMEM;
    if (!rc && !json_object_get(req, "memory") &&
        json_object_set_new(req, "memory", json_string(mem)))
        rc = SCHED_ENOMEM;
    json_decref(req);
    json_decref(res);
    if (rc) {
        json_decref(ctr);
        ctr = NULL;
    }
    *out = ctr;
    return rc;
}

/* Rather than a second copy of PodRequests, the defaults are written into a copy
 * of the pod and quota_pod_requests (the one place that sums a pod) runs on it.
 * Only the path down to each container's requests is copied (the rest is
 * shared by reference): a deep copy of the pod cost more than the sum. */
int sched_pod_nonzero_requests(const json_t *pod, rlist *out)
{
    static const char *const lists[] = {"containers", "initContainers"};
    const json_t *spec = json_object_get(pod, "spec");
    if (!json_is_object(spec)) /* no containers to default */
        return quota_rc(quota_pod_requests(pod, out));
    json_t *cp = json_copy((json_t *)pod), *spec_cp = json_copy((json_t *)spec);
    int rc = cp && spec_cp && !json_object_set(cp, "spec", spec_cp) ? 0 : SCHED_ENOMEM;
    for (size_t l = 0; l < 2 && !rc; l++) {
        const json_t *ctrs = json_object_get(spec, lists[l]);
        if (!json_is_array(ctrs)) continue;
        json_t *arr = json_array(), *c;
        size_t i;
        rc = arr && !json_object_set_new(spec_cp, lists[l], arr) ? 0 : SCHED_ENOMEM;
        json_array_foreach(ctrs, i, c)
        {
            json_t *d = c;
            if (!rc && json_is_object(c)) rc = default_container(c, &d);
            if (!rc &&
                (json_is_object(c) ? json_array_append_new(arr, d) : json_array_append(arr, c)))
                rc = SCHED_ENOMEM;
        }
    }
    if (!rc) rc = quota_rc(quota_pod_requests(cp, out));
    json_decref(spec_cp);
    json_decref(cp);
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

/* Least-allocated over cpu and memory, the pod's non-zero requests given as
 * integers. Upstream skips a resource the node lacks. */
static int score_node(int64_t pod_cpu, int64_t pod_memory, const sched_node *n,
                      const sched_node_prep *prep)
{
    sched_node_prep tmp;
    const sched_node_prep *np;
    const rlist *alloc;
    rlist *parsed;
    TRY_ST(node_with_amounts(n, prep, &tmp, &parsed, &np, &alloc));
    rl_free(parsed);
    int64_t score = 0, weights = 0;
    if (np->alloc_cpu != 0) {
        score += least_requested(np->score_cpu + pod_cpu, np->alloc_cpu);
        weights++;
    }
    if (np->alloc_memory != 0) {
        score += least_requested(np->score_memory + pod_memory, np->alloc_memory);
        weights++;
    }
    return weights ? (int)(score / weights) : 0;
}

int sched_score(const rlist *pod_nonzero, const sched_node *n)
{
    sched_node_prep tmp;
    return score_node(amount(pod_nonzero, "cpu"), amount(pod_nonzero, "memory"), n,
                      node_prep(n, &tmp));
}

/* ---- sched_pick ------------------------------------------------------------------------------ */

int sched_pod_new(const json_t *pod, sched_pod **out)
{
    sched_pod *sp = calloc(1, sizeof *sp);
    *out = NULL;
    if (!sp) return SCHED_ENOMEM;
    sp->pod = pod;
    sp->req = sp->own_req = rl_new();
    sp->nonzero = sp->own_nonzero = rl_new();
    int rc = sp->own_req && sp->own_nonzero ? 0 : SCHED_ENOMEM;
    if (!rc) rc = quota_rc(quota_pod_requests(pod, sp->own_req));
    if (!rc) rc = sched_pod_nonzero_requests(pod, sp->own_nonzero);
    if (!rc) rc = affinity_prefilter(pod, &sp->names);
    if (!rc) rc = pod_compile(sp);
    if (rc) {
        sched_pod_free(sp);
        return rc;
    }
    *out = sp;
    return 0;
}

void sched_pod_free(sched_pod *sp)
{
    if (!sp) return;
    pod_release(sp);
    free(sp);
}

const rlist *sched_pod_requests(const sched_pod *sp)
{
    return sp->req;
}

const rlist *sched_pod_nonzero(const sched_pod *sp)
{
    return sp->nonzero;
}

void sched_pod_take_lists(sched_pod *sp, rlist **requests, rlist **nonzero)
{
    *requests = sp->own_req;
    *nonzero = sp->own_nonzero;
    /* The scalar names point into the request list: they leave with it. */
    sp->own_req = sp->own_nonzero = NULL;
    sp->req = sp->nonzero = NULL;
    free(sp->scalars);
    sp->scalars = NULL;
    sp->nscalars = 0;
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
    if (strcmp(jtext(json_object_get(pod, "spec"), "preemptionPolicy"), "Never") == 0) {
        DBUF_TRY(dbuf_adds(out, SCHED_MSG_NOT_ELIGIBLE));
        return 0;
    }
    DBUF_TRY(dbuf_printf(out, "0/%zu nodes are available:", n));
    return histogram(st, n, true, out);
}

/* The PreFilter and the filters on one node. */
static int filter_node(const sched_pod *sp, const sched_node *nd, const sched_node_prep *np,
                       status *st)
{
    if (sp->names && !json_object_get(sp->names, np->name))
        return st_fail(st, SCHED_UNRESOLVABLE, SCHED_MSG_AFFINITY_PREFILTER);
    return run_filters(sp, nd, np, st);
}

/* Every node's status with its reasons, for the FitError. Filters are pure, so
 * this second pass finds what the pick found. */
static int fit_error(const sched_pod *sp, const sched_node *nodes, size_t n, const char *prefilter,
                     dbuf *out)
{
    status *st = calloc(n, sizeof *st);
    int rc = st ? 0 : SCHED_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++) {
        sched_node_prep tmp;
        rc = prefilter ? st_fail(&st[i], SCHED_UNRESOLVABLE, "%s", prefilter)
                       : filter_node(sp, &nodes[i], node_prep(&nodes[i], &tmp), &st[i]);
    }
    if (!rc) rc = fit_error_message(sp->pod, st, n, prefilter, out);
    for (size_t i = 0; st && i < n; i++)
        st_clear(&st[i]);
    free(st);
    return rc;
}

int sched_pick_pod(const sched_pod *sp, const sched_node *nodes, size_t n, sched_sample *sample,
                   size_t *chosen, dbuf *fit_error_out)
{
    if (n == 0) /* ErrNoNodesAvailable: no FitError, no PostFilter */
        return dbuf_adds(fit_error_out, SCHED_MSG_NO_NODES) ? SCHED_ENOMEM : 1;
    if (sp->names && json_object_size(sp->names) == 0) {
        /* PreFilter rejected the pod: every node carries that status. */
        TRY_ST(fit_error(sp, nodes, n, SCHED_MSG_AFFINITY_CONFLICT, fit_error_out));
        return 1;
    }
    size_t start = sample ? sample->start % n : 0, feasible = 0, i;
    size_t limit = sample && sample->max_feasible ? sample->max_feasible : n;
    long best = -1;
    int best_score = 0;
    const char *best_name = NULL;
    for (i = 0; i < n && feasible < limit; i++) {
        size_t k = (start + i) % n;
        sched_node_prep tmp;
        const sched_node_prep *np = node_prep(&nodes[k], &tmp);
        status st = {SCHED_FIT, NULL, true};
        TRY_ST(filter_node(sp, &nodes[k], np, &st));
        if (st.code) continue;
        feasible++;
        int s = score_node(sp->nz_cpu, sp->nz_memory, &nodes[k], np);
        if (s < 0) return s;
        const char *name = np->name; /* in the node's JSON, not in tmp */
        if (best < 0 || s > best_score || (s == best_score && strcmp(name, best_name) < 0)) {
            best = (long)k;
            best_score = s;
            best_name = name;
        }
    }
    if (sample) sample->examined = i;
    if (best >= 0) {
        *chosen = (size_t)best;
        return 0;
    }
    TRY_ST(fit_error(sp, nodes, n, NULL, fit_error_out));
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
    if (n == 0) /* before the pod is read, as upstream */
        return dbuf_adds(fit_error, SCHED_MSG_NO_NODES) ? SCHED_ENOMEM : 1;
    sched_pod *sp;
    int rc = sched_pod_new(pod, &sp);
    if (!rc) rc = sched_pick_pod(sp, nodes, n, sample, chosen, fit_error);
    sched_pod_free(sp);
    return rc;
}

/* ---- quota PreFilter message ----------------------------------------------------------------- */

/* The message's pieces, shared by the writer and the reader below: the
 * message starts QUOTA_MSG_ZERO "<N>" QUOTA_MSG_NODES QUOTA_MSG_EXCEEDED
 * "<quota>" QUOTA_MSG_REQUESTED. */
#define QUOTA_MSG_ZERO "0/"
#define QUOTA_MSG_NODES " nodes are available: "
#define QUOTA_MSG_EXCEEDED "quota exceeded: "
#define QUOTA_MSG_REQUESTED ", requested: "
/* The message up to the requested amounts; its arguments: N, the quota's name. */
#define QUOTA_MSG_HEAD                                                                             \
    QUOTA_MSG_ZERO "%zu" QUOTA_MSG_NODES QUOTA_MSG_EXCEEDED "%s" QUOTA_MSG_REQUESTED

int sched_quota_message(dbuf *out, size_t nnodes, const char *quota, const char *requested,
                        const char *used, const char *limited)
{
    if (nnodes == 0) /* upstream stops before PreFilter when there is no node */
        return dbuf_adds(out, SCHED_MSG_NO_NODES) ? SCHED_ENOMEM : 0;
    DBUF_TRY(dbuf_printf(out,
                         QUOTA_MSG_HEAD "%s, used: %s, limited: %s. preemption: 0/%zu nodes are "
                                        "available: %zu %s.",
                         nnodes, quota, requested, used, limited, nnodes, nnodes,
                         SCHED_MSG_NOT_HELPFUL));
    return 0;
}

int sched_quota_message_quota(const char *msg, const char **name, size_t *len)
{
    if (!msg || !has_prefix(msg, QUOTA_MSG_ZERO)) return 0;
    const char *p = msg + strlen(QUOTA_MSG_ZERO);
    size_t digits = strspn(p, "0123456789");
    if (!digits) return 0;
    p += digits;
    if (!has_prefix(p, QUOTA_MSG_NODES)) return 0;
    p += strlen(QUOTA_MSG_NODES);
    if (!has_prefix(p, QUOTA_MSG_EXCEEDED)) return 0;
    p += strlen(QUOTA_MSG_EXCEEDED);
    /* A quota's name is a DNS subdomain: it never holds the ',' that ends it. */
    size_t n = strcspn(p, ", ");
    if (!n || !has_prefix(p + n, QUOTA_MSG_REQUESTED)) return 0;
    *name = p;
    *len = n;
    return 1;
}

void sched_pod_pending_quota(const json_t *pod, char *buf, size_t n)
{
    if (n) buf[0] = '\0';
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
    {
        if (strcmp(jtext(c, "type"), SCHED_COND_SCHEDULED) != 0) continue;
        const char *name;
        size_t len;
        if (!strcmp(jtext(c, "status"), "False") &&
            !strcmp(jtext(c, "reason"), SCHED_REASON_UNSCHEDULABLE) &&
            sched_quota_message_quota(jtext(c, "message"), &name, &len) && n)
            snprintf(buf, n, "%.*s", len < INT_MAX ? (int)len : INT_MAX, name);
        return; /* one PodScheduled condition: the first is the one */
    }
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

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static int64_t priority(const json_t *pod)
{
    return json_integer_value(jget(pod, "spec", "priority"));
}

void sched_queue_keys(const json_t *pod, int64_t *prio, int64_t *created_ns)
{
    int64_t secs, nanos;
    *prio = priority(pod);
    /* An unknown time sorts after every known one, as in sched_queue_cmp. */
    if (rfc3339_parse(jtext(json_object_get(pod, "metadata"), "creationTimestamp"), &secs, &nanos))
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
    bool ao = rfc3339_parse(jtext(am, "creationTimestamp"), &as, &an);
    bool bo = rfc3339_parse(jtext(bm, "creationTimestamp"), &bs, &bn);
    if (ao != bo) return ao ? -1 : 1; /* a known time goes before an unknown one */
    if (ao && (c = cmp_i64(as, bs) ? cmp_i64(as, bs) : cmp_i64(an, bn))) return c;
    if ((c = strcmp(jtext(am, "namespace"), jtext(bm, "namespace")))) return c;
    return strcmp(jtext(am, "name"), jtext(bm, "name"));
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

/* ---- unschedulable pods ---------------------------------------------------------------------- */

bool sched_event_unparks(sched_event ev)
{
    switch (ev) {
    case SCHED_EV_NODE_ADDED:
    case SCHED_EV_NODE_UPDATED:
    case SCHED_EV_POD_FREED:
    case SCHED_EV_POD_RESIZED:
    case SCHED_EV_BIND_FAILED:
        return true;
    case SCHED_EV_NODE_DELETED:
    case SCHED_EV_POD_ASSIGNED:
    case SCHED_EV_QUOTA_CHANGED:
        return false;
    }
    return true; /* an unknown event: a retry costs less than a stranded pod */
}

/* A taint TaintToleration filters on (NoSchedule, NoExecute). */
static bool taint_filters(const json_t *t)
{
    const char *effect = jtext(t, "effect");
    return !strcmp(effect, "NoSchedule") || !strcmp(effect, "NoExecute");
}

static bool taints_contain(const json_t *taints, const json_t *t)
{
    size_t i;
    const json_t *x;
    json_array_foreach(taints, i, x)
    {
        /* equal key, value and effect: timeAdded does not change what fits */
        if (!strcmp(jtext(x, "key"), jtext(t, "key")) &&
            !strcmp(jtext(x, "value"), jtext(t, "value")) &&
            !strcmp(jtext(x, "effect"), jtext(t, "effect")))
            return true;
    }
    return false;
}

/* NULL and absent compare equal to an empty object. */
static bool same_object(const json_t *a, const json_t *b)
{
    if (json_object_size(a) == 0 && json_object_size(b) == 0) return true;
    return a && b && json_equal((json_t *)a, (json_t *)b);
}

bool sched_node_update_unparks(const json_t *old, const json_t *cur)
{
    if (!old) return true;
    if (!cur) return false;
    if (json_is_true(jget(old, "spec", "unschedulable")) &&
        !json_is_true(jget(cur, "spec", "unschedulable")))
        return true;
    if (!same_object(jget(old, "status", "allocatable"), jget(cur, "status", "allocatable")))
        return true;
    if (!same_object(jget(old, "metadata", "labels"), jget(cur, "metadata", "labels"))) return true;
    const json_t *was = jget(old, "spec", "taints"), *now = jget(cur, "spec", "taints"), *t;
    size_t i;
    json_array_foreach(was, i, t)
    {
        if (taint_filters(t) && !taints_contain(now, t)) return true;
    }
    return false;
}

int64_t sched_unpark_due(int64_t now, int64_t backoff_end)
{
    return backoff_end > now ? backoff_end : now;
}

bool sched_park_expired(int64_t parked_at, int64_t now)
{
    return now - parked_at >= SCHED_PARK_MAX_MS;
}
