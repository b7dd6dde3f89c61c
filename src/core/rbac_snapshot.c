/* rbac_snapshot.c - the RBAC authorizer over a snapshot of roles and bindings,
 * aggregation, RulesFor and the escalation checks (see rbac.h).
 *
 * Invariant: every (binding, subject) pair that can apply to some user is in
 * the subject index under exactly the key that user's name or one of its
 * groups produces, so visiting the index entries of a user visits exactly the
 * bindings upstream's appliesTo would accept, and nothing else:
 *   cluster bindings:    "U:<user>", "G:<group>"
 *   bindings in ns:      "<ns>/U:<user>", "<ns>/G:<group>"
 * A ServiceAccount subject is indexed as its user name
 * system:serviceaccount:<ns>:<name>, its namespace defaulting to the
 * binding's (a ClusterRoleBinding SA without one applies to nobody). Keys
 * cannot collide: namespaces hold no ':' or '/', and cluster keys have no '/'
 * before their first ':'.
 */
#include "core/rbac.h"

#include "core/jget.h"
#include "core/rbac_impl.h"
#include "core/selector.h"
#include "core/strmap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_MAX 1024

typedef struct subject {
    char *kind, *name, *ns; /* ns: as written ("" when absent) */
} subject;

typedef struct binding {
    char *name, *ns; /* ns NULL for a ClusterRoleBinding */
    char *ref_kind, *ref_name;
    const rbac_rules *rules; /* NULL: the role could not be resolved (err says why) */
    char *err;
    subject *subj;
    size_t nsubj;
} binding;

typedef struct role_ent {
    char *key; /* "<ns>/<name>" for Roles, "<name>" for ClusterRoles */
    rbac_rules rules;
} role_ent;

/* The grants under one index key: (binding << 32 | subject), ascending. */
typedef struct grants {
    uint64_t *v;
    size_t n, cap;
    char key[];
} grants;

struct rbac_snapshot {
    strmap *roles, *croles; /* key -> role_ent */
    binding *b;
    size_t nb;
    strmap *index; /* key -> grants */
};

static const char *nz(const char *s)
{
    return s ? s : "";
}

static const char *meta_str(const json_t *o, const char *k)
{
    return jtext(json_object_get(o, "metadata"), k);
}

/* ---- aggregation ---- */

typedef struct agg {
    strmap *by_name;  /* name -> ClusterRole (borrowed) */
    strmap *memo;     /* name -> aggregated rules (owned) */
    strmap *visiting; /* names on the current path: a cycle uses stored rules */
} agg;

static int cmp_role_name(const void *a, const void *b)
{
    return strcmp(meta_str(*(const json_t *const *)a, "name"),
                  meta_str(*(const json_t *const *)b, "name"));
}

static const json_t *effective_rules(agg *g, const json_t *role);

/* ruleExists + append: the union keeps the first occurrence. */
static void union_rules(json_t *out, const json_t *rules)
{
    size_t i, j;
    json_t *r, *have;
    json_array_foreach(rules, i, r)
    {
        bool dup = false;
        json_array_foreach(out, j, have) dup = dup || json_equal(have, r);
        if (!dup) json_array_append(out, r);
    }
}

/* The ClusterRoles one selector matches, but `self`, by name. Caller frees. */
static size_t matched_roles(agg *g, const json_t *selector, const char *self, const json_t ***out)
{
    char err[256];
    json_t *empty = json_object();
    sel_t *sel = sel_from_json(json_is_null(selector) ? empty : selector, err, sizeof err);
    json_decref(empty);
    size_t n = 0, it = 0;
    const char *name;
    void *v;
    *out = calloc(strmap_count(g->by_name) + 1, sizeof **out);
    while (sel && *out && strmap_next(g->by_name, &it, &name, &v)) {
        const json_t *labels = json_object_get(json_object_get(v, "metadata"), "labels");
        if (strcmp(name, self) != 0 && sel_matches(sel, labels)) (*out)[n++] = v;
    }
    sel_free(sel);
    if (n) qsort(*out, n, sizeof **out, cmp_role_name);
    return n;
}

static json_t *aggregate(agg *g, const json_t *role)
{
    const char *self = meta_str(role, "name");
    json_t *out = json_array();
    size_t i;
    const json_t *selector;
    json_array_foreach(
        json_object_get(json_object_get(role, "aggregationRule"), "clusterRoleSelectors"), i,
        selector)
    {
        const json_t **m;
        size_t n = matched_roles(g, selector, self, &m);
        for (size_t k = 0; k < n; k++)
            union_rules(out, effective_rules(g, m[k]));
        free(m);
    }
    return out;
}

/* A role's rules after aggregation (borrowed from the role or the memo). */
static const json_t *effective_rules(agg *g, const json_t *role)
{
    const char *name = meta_str(role, "name");
    if (!json_is_object(json_object_get(role, "aggregationRule")) || strmap_get(g->visiting, name))
        return json_object_get(role, "rules");
    json_t *memo = strmap_get(g->memo, name);
    if (memo) return memo;
    strmap_put(g->visiting, name, (void *)role, NULL);
    memo = aggregate(g, role);
    strmap_del(g->visiting, name);
    if (memo && strmap_put(g->memo, name, memo, NULL) != 0) {
        json_decref(memo); /* cannot memoise: give the stored rules */
        return json_object_get(role, "rules");
    }
    return memo;
}

static int agg_init(agg *g, const json_t *cluster_roles)
{
    g->by_name = strmap_new();
    g->memo = strmap_new();
    g->visiting = strmap_new();
    if (!g->by_name || !g->memo || !g->visiting) return -1;
    size_t i;
    json_t *r;
    json_array_foreach(cluster_roles, i, r)
    {
        const char *name = meta_str(r, "name");
        if (*name && strmap_put(g->by_name, name, r, NULL) != 0) return -1;
    }
    return 0;
}

static void agg_cleanup(agg *g)
{
    size_t it = 0;
    const char *k;
    void *v;
    while (g->memo && strmap_next(g->memo, &it, &k, &v))
        json_decref(v);
    strmap_free(g->by_name);
    strmap_free(g->memo);
    strmap_free(g->visiting);
}

json_t *rbac_aggregate_rules(const json_t *role, const json_t *cluster_roles)
{
    if (!json_is_object(json_object_get(role, "aggregationRule"))) return NULL;
    agg g = {0};
    json_t *out = NULL;
    if (agg_init(&g, cluster_roles) == 0) {
        /* `role` itself may be new or changed: aggregate it as given. */
        strmap_put(g.visiting, meta_str(role, "name"), (void *)role, NULL);
        out = aggregate(&g, role);
    }
    agg_cleanup(&g);
    return out;
}

/* ---- building ---- */

static void role_ent_free(role_ent *r)
{
    if (!r) return;
    rbac_rules_cleanup(&r->rules);
    free(r->key);
    free(r);
}

static int add_role(strmap *m, const char *key, const json_t *rules)
{
    role_ent *r = calloc(1, sizeof *r);
    if (!r || !(r->key = strdup(key)) || rbac_rules_add_json(&r->rules, rules) != 0) {
        role_ent_free(r);
        return -1;
    }
    void *old = NULL;
    if (strmap_put(m, r->key, r, &old) != 0) {
        role_ent_free(r);
        return -1;
    }
    role_ent_free(old);
    return 0;
}

static int add_roles(rbac_snapshot *s, const json_t *roles)
{
    size_t i;
    json_t *r;
    char key[600];
    json_array_foreach(roles, i, r)
    {
        const char *ns = meta_str(r, "namespace"), *name = meta_str(r, "name");
        if (!*ns || !*name || snprintf(key, sizeof key, "%s/%s", ns, name) >= (int)sizeof key)
            continue;
        if (add_role(s->roles, key, json_object_get(r, "rules")) != 0) return -1;
    }
    return 0;
}

static int add_cluster_roles(rbac_snapshot *s, const json_t *croles)
{
    agg g = {0};
    int rc = agg_init(&g, croles);
    size_t i;
    json_t *r;
    json_array_foreach(croles, i, r)
    {
        const char *name = meta_str(r, "name");
        if (rc == 0 && *name) rc = add_role(s->croles, name, effective_rules(&g, r));
    }
    agg_cleanup(&g);
    return rc;
}

static grants *index_slot(rbac_snapshot *s, const char *key)
{
    grants *g = strmap_get(s->index, key);
    if (g) return g;
    size_t len = strlen(key);
    g = calloc(1, sizeof *g + len + 1);
    if (!g) return NULL;
    memcpy(g->key, key, len + 1);
    if (strmap_put(s->index, g->key, g, NULL) != 0) {
        free(g);
        return NULL;
    }
    return g;
}

static int index_add(rbac_snapshot *s, const char *key, uint64_t grant)
{
    grants *g = index_slot(s, key);
    if (!g) return -1;
    if (g->n && g->v[g->n - 1] >> 32 == grant >> 32) return 0; /* first subject wins */
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 4;
        uint64_t *v = realloc(g->v, cap * sizeof *v);
        if (!v) return -1;
        g->v = v;
        g->cap = cap;
    }
    g->v[g->n++] = grant;
    return 0;
}

/* The index key of subject `sj` of binding `b` into k (see the invariant). */
static int subject_key(const binding *b, const subject *sj, dbuf *k)
{
    if (b->ns) dbuf_printf(k, "%s/", b->ns);
    if (strcmp(sj->kind, "User") == 0) return dbuf_printf(k, "U:%s", sj->name);
    if (strcmp(sj->kind, "Group") == 0) return dbuf_printf(k, "G:%s", sj->name);
    if (strcmp(sj->kind, "ServiceAccount") != 0) return 1;
    const char *ns = *sj->ns ? sj->ns : nz(b->ns);
    if (!*ns) return 1;
    return dbuf_printf(k, "U:" RBAC_SA_PREFIX "%s:%s", ns, sj->name);
}

static int index_binding(rbac_snapshot *s, size_t bi)
{
    const binding *b = &s->b[bi];
    for (size_t j = 0; j < b->nsubj; j++) {
        dbuf k;
        dbuf_init(&k, RBAC_TEXT_MAX);
        int rc = subject_key(b, &b->subj[j], &k);
        if (rc == 0) rc = index_add(s, k.p, (uint64_t)bi << 32 | j);
        dbuf_free(&k);
        if (rc < 0) return -1;
    }
    return 0;
}

static void resolve(const rbac_snapshot *s, binding *b)
{
    char key[600], err[ERR_MAX];
    const role_ent *r = NULL;
    if (strcmp(b->ref_kind, "ClusterRole") == 0) {
        r = strmap_get(s->croles, b->ref_name);
        snprintf(err, sizeof err, "clusterrole." RBAC_GROUP " \"%s\" not found", b->ref_name);
    } else if (strcmp(b->ref_kind, "Role") == 0 && b->ns) {
        snprintf(key, sizeof key, "%s/%s", b->ns, b->ref_name);
        r = strmap_get(s->roles, key);
        snprintf(err, sizeof err, "role." RBAC_GROUP " \"%s\" not found", b->ref_name);
    } else {
        snprintf(err, sizeof err, "unsupported role reference kind: \"%s\"", b->ref_kind);
    }
    if (r)
        b->rules = &r->rules;
    else
        b->err = strdup(err);
}

static int parse_subjects(binding *b, const json_t *subjects)
{
    size_t n = json_array_size(subjects);
    b->subj = calloc(n ? n : 1, sizeof *b->subj);
    if (!b->subj) return -1;
    for (size_t i = 0; i < n; i++) {
        const json_t *o = json_array_get(subjects, i);
        subject *sj = &b->subj[b->nsubj++];
        sj->kind = strdup(jtext(o, "kind"));
        sj->name = strdup(jtext(o, "name"));
        sj->ns = strdup(jtext(o, "namespace"));
        if (!sj->kind || !sj->name || !sj->ns) return -1;
    }
    return 0;
}

static int add_bindings(rbac_snapshot *s, const json_t *list, bool namespaced)
{
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o)
    {
        const char *ns = meta_str(o, "namespace");
        const json_t *ref = json_object_get(o, "roleRef");
        if (namespaced && !*ns) continue;
        binding *b = &s->b[s->nb++];
        b->name = strdup(meta_str(o, "name"));
        b->ns = namespaced ? strdup(ns) : NULL;
        b->ref_kind = strdup(jtext(ref, "kind"));
        b->ref_name = strdup(jtext(ref, "name"));
        if (!b->name || (namespaced && !b->ns) || !b->ref_kind || !b->ref_name ||
            parse_subjects(b, json_object_get(o, "subjects")) != 0)
            return -1;
        resolve(s, b);
        if (index_binding(s, s->nb - 1) != 0) return -1;
    }
    return 0;
}

rbac_snapshot *rbac_snapshot_new(const json_t *roles, const json_t *cluster_roles,
                                 const json_t *role_bindings, const json_t *cluster_role_bindings)
{
    rbac_snapshot *s = calloc(1, sizeof *s);
    size_t nb = json_array_size(role_bindings) + json_array_size(cluster_role_bindings);
    if (!s) return NULL;
    s->roles = strmap_new();
    s->croles = strmap_new();
    s->index = strmap_new();
    s->b = calloc(nb ? nb : 1, sizeof *s->b);
    if (!s->roles || !s->croles || !s->index || !s->b || add_roles(s, roles) != 0 ||
        add_cluster_roles(s, cluster_roles) != 0 ||
        add_bindings(s, cluster_role_bindings, false) != 0 ||
        add_bindings(s, role_bindings, true) != 0) {
        rbac_snapshot_free(s);
        return NULL;
    }
    return s;
}

static void free_roles(strmap *m)
{
    size_t it = 0;
    const char *k;
    void *v;
    while (m && strmap_next(m, &it, &k, &v))
        role_ent_free(v);
    strmap_free(m);
}

static void free_binding(binding *b)
{
    for (size_t j = 0; j < b->nsubj; j++) {
        free(b->subj[j].kind);
        free(b->subj[j].name);
        free(b->subj[j].ns);
    }
    free(b->subj);
    free(b->name);
    free(b->ns);
    free(b->ref_kind);
    free(b->ref_name);
    free(b->err);
}

void rbac_snapshot_free(rbac_snapshot *s)
{
    if (!s) return;
    size_t it = 0;
    const char *k;
    void *v;
    while (s->index && strmap_next(s->index, &it, &k, &v)) {
        free(((grants *)v)->v);
        free(v);
    }
    strmap_free(s->index);
    for (size_t i = 0; s->b && i < s->nb; i++)
        free_binding(&s->b[i]);
    free(s->b);
    free_roles(s->roles);
    free_roles(s->croles);
    free(s);
}

size_t rbac_snapshot_binding_count(const rbac_snapshot *s)
{
    return s ? s->nb : 0;
}

/* ---- visiting a user's rules (VisitRulesFor) ---- */

/* A grant list that starts on the caller's stack and moves to the heap
 * only past GRANTS_STACK entries (the common case allocates nothing). */
#define GRANTS_STACK 32
typedef struct gvec {
    uint64_t *v;
    size_t n, cap;
    uint64_t stack[GRANTS_STACK];
} gvec;

static int gvec_append(gvec *g, const uint64_t *v, size_t n)
{
    if (g->n + n > g->cap) {
        size_t cap = (g->n + n) * 2;
        uint64_t *nv = malloc(cap * sizeof *nv);
        if (!nv) return -1;
        memcpy(nv, g->v, g->n * sizeof *nv);
        if (g->v != g->stack) free(g->v);
        g->v = nv;
        g->cap = cap;
    }
    memcpy(g->v + g->n, v, n * sizeof *v);
    g->n += n;
    return 0;
}

/* Concatenate parts into dst (NUL-terminated); the caller sized dst. No
 * printf here: this runs several times per request. */
static char *concat(char *dst, const char *const *parts, size_t n)
{
    char *p = dst;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(parts[i]);
        memcpy(p, parts[i], l);
        p += l;
    }
    *p = '\0';
    return dst;
}

/* The grants under one key ("[<ns>/]<tag>:<name>"), appended to `out`. */
static int gather_key(const rbac_snapshot *s, const char *ns, const char *tag, const char *name,
                      gvec *out)
{
    char stack[512], *key = stack;
    const char *parts[] = {nz(ns), ns ? "/" : "", tag, ":", name};
    size_t need = strlen(nz(ns)) + strlen(name) + strlen(tag) + 3;
    if (need > sizeof stack && !(key = malloc(need))) return -1;
    const grants *g = strmap_get(s->index, concat(key, parts, 5));
    if (key != stack) free(key);
    return g && g->n ? gvec_append(out, g->v, g->n) : 0;
}

/* The (binding, first applying subject) pairs for `u` among the cluster
 * bindings (ns NULL) or the bindings of one namespace, in binding order. */
static void user_grants(const rbac_snapshot *s, const rbac_user *u, const char *ns, gvec *g)
{
    g->v = g->stack;
    g->n = 0;
    g->cap = GRANTS_STACK;
    int rc = gather_key(s, ns, "U", nz(u->name), g);
    for (size_t i = 0; rc == 0 && i < u->ngroups; i++)
        rc = gather_key(s, ns, "G", nz(u->groups[i]), g);
    if (rc != 0) g->n = 0; /* allocation failure: no grants, so a deny */
    /* a handful of grants: insertion sort (glibc's qsort costs more here) */
    for (size_t i = 1; i < g->n; i++)
        for (size_t j = i; j > 0 && g->v[j - 1] > g->v[j]; j--) {
            uint64_t t = g->v[j];
            g->v[j] = g->v[j - 1];
            g->v[j - 1] = t;
        }
    size_t m = 0;
    for (size_t i = 0; i < g->n; i++)
        if (m == 0 || g->v[m - 1] >> 32 != g->v[i] >> 32) g->v[m++] = g->v[i];
    g->n = m;
}

/* A visitor: return false to stop. */
typedef bool (*rule_fn)(void *ctx, const binding *b, const subject *sj, const rbac_rule *r);

typedef struct errlist {
    const char *v[16]; /* distinct resolution errors, first 16 */
    size_t n;
} errlist;

static void err_add(errlist *e, const char *msg)
{
    for (size_t i = 0; i < e->n; i++)
        if (strcmp(e->v[i], msg) == 0) return;
    if (e->n < sizeof e->v / sizeof *e->v) e->v[e->n++] = msg;
}

/* utilerrors.NewAggregate(...).Error() */
static void err_text(const errlist *e, char *buf, size_t n)
{
    size_t off = 0;
    if (!n) return;
    buf[0] = '\0';
    if (e->n == 1) snprintf(buf, n, "%s", e->v[0]);
    for (size_t i = 0; e->n > 1 && i < e->n && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%s%s", i ? ", " : "[", e->v[i],
                                i + 1 == e->n ? "]" : "");
}

/* Visit the bindings of one scope; false once the visitor stopped. */
static bool visit_scope(const rbac_snapshot *s, const rbac_user *u, const char *ns, rule_fn fn,
                        void *ctx, errlist *errs)
{
    gvec g;
    user_grants(s, u, ns, &g);
    bool go = true;
    for (size_t i = 0; go && i < g.n; i++) {
        const binding *b = &s->b[g.v[i] >> 32];
        const subject *sj = &b->subj[g.v[i] & 0xffffffffu];
        if (!b->rules) err_add(errs, b->err ? b->err : "out of memory");
        for (size_t r = 0; b->rules && go && r < b->rules->n; r++)
            go = fn(ctx, b, sj, &b->rules->v[r]);
    }
    if (g.v != g.stack) free(g.v);
    return go;
}

static void visit_rules(const rbac_snapshot *s, const rbac_user *u, const char *ns, rule_fn fn,
                        void *ctx, errlist *errs)
{
    if (visit_scope(s, u, NULL, fn, ctx, errs) && ns && *ns) visit_scope(s, u, ns, fn, ctx, errs);
}

/* ---- authorize ---- */

typedef struct authz_ctx {
    const rbac_attrs *a;
    const binding *b;
    const subject *sj;
} authz_ctx;

static bool authz_visit(void *ctx, const binding *b, const subject *sj, const rbac_rule *r)
{
    authz_ctx *c = ctx;
    if (!rbac_rule_allows(r, c->a)) return true;
    c->b = b;
    c->sj = sj;
    return false;
}

/* Go's %q of "<a>/<b>", appended. */
static void quote_pair(dbuf *d, const char *a, const char *b)
{
    dbuf p;
    dbuf_init(&p, RBAC_TEXT_MAX);
    dbuf_adds(&p, a);
    dbuf_adds(&p, "/");
    dbuf_adds(&p, b);
    rbac_quote(d, p.p ? p.p : "");
    dbuf_free(&p);
}

/* describeSubject and the binding describers of rule.go. */
static void describe(const binding *b, const subject *sj, dbuf *d)
{
    dbuf_adds(d, b->ns ? "RoleBinding " : "ClusterRoleBinding ");
    if (b->ns)
        quote_pair(d, b->name, b->ns);
    else
        rbac_quote(d, b->name);
    dbuf_adds(d, " of ");
    dbuf_adds(d, b->ref_kind);
    dbuf_adds(d, " ");
    rbac_quote(d, b->ref_name);
    dbuf_adds(d, " to ");
    dbuf_adds(d, sj->kind);
    dbuf_adds(d, " ");
    if (strcmp(sj->kind, "ServiceAccount") == 0)
        quote_pair(d, sj->name, *sj->ns ? sj->ns : nz(b->ns));
    else
        rbac_quote(d, sj->name);
}

/* Copy text into reason[n], truncating. */
static void put_reason(char *reason, size_t n, const char *text)
{
    size_t l = strlen(text);
    if (!reason || !n) return;
    if (l >= n) l = n - 1;
    memcpy(reason, text, l);
    reason[l] = '\0';
}

rbac_decision rbac_authorize(const rbac_snapshot *s, const rbac_attrs *a, char *reason, size_t n)
{
    authz_ctx c = {a, NULL, NULL};
    errlist errs = {.n = 0};
    char text[ERR_MAX];
    if (reason && n) reason[0] = '\0';
    if (!s) return RBAC_DENY;
    visit_rules(s, &a->user, a->resource_request ? a->ns : NULL, authz_visit, &c, &errs);
    if (c.b) {
        dbuf d;
        dbuf_init(&d, RBAC_TEXT_MAX);
        dbuf_adds(&d, "RBAC: allowed by ");
        describe(c.b, c.sj, &d);
        put_reason(reason, n, d.p ? d.p : "");
        dbuf_free(&d);
        return RBAC_ALLOW;
    }
    if (errs.n && reason && n) {
        err_text(&errs, text, sizeof text);
        snprintf(reason, n, "RBAC: %s", text);
    }
    return RBAC_DENY;
}

/* ---- RulesFor ---- */

typedef struct collect_ctx {
    rbac_rules *out;
    int rc;
} collect_ctx;

static bool collect_visit(void *ctx, const binding *b, const subject *sj, const rbac_rule *r)
{
    (void)b;
    (void)sj;
    collect_ctx *c = ctx;
    c->rc |= rbac_rules_add(c->out, r);
    return true;
}

int rbac_rules_for(const rbac_snapshot *s, const rbac_user *u, const char *ns, rbac_rules *out,
                   char *err, size_t errn)
{
    collect_ctx c = {out, 0};
    errlist errs = {.n = 0};
    if (s) visit_rules(s, u, ns, collect_visit, &c, &errs);
    if (err) err_text(&errs, err, errn);
    return c.rc ? -1 : 0;
}

static json_t *review_rule(const rbac_rule *r, bool resource)
{
    rbac_rules one = {(rbac_rule *)r, 1, 1};
    json_t *arr = rbac_rules_to_json(&one), *o = json_incref(json_array_get(arr, 0));
    json_decref(arr);
    if (resource)
        json_object_del(o, "nonResourceURLs");
    else
        json_object_del(o, "apiGroups"), json_object_del(o, "resources"),
            json_object_del(o, "resourceNames");
    return o;
}

json_t *rbac_rules_review(const rbac_rules *rules, const char *evaluation_error)
{
    json_t *res = json_array(), *nonres = json_array();
    for (size_t i = 0; i < rules->n; i++) {
        if (rules->v[i].resources.n) json_array_append_new(res, review_rule(&rules->v[i], true));
        if (rules->v[i].non_resource_urls.n)
            json_array_append_new(nonres, review_rule(&rules->v[i], false));
    }
    json_t *st = json_pack("{s:o, s:o, s:b}", "resourceRules", res, "nonResourceRules", nonres,
                           "incomplete", 0);
    if (st && evaluation_error && *evaluation_error)
        json_object_set_new(st, "evaluationError", json_string(evaluation_error));
    return st;
}

/* ---- escalation checks (pkg/registry/rbac) ---- */

/* EscalationAllowed: system:masters may do anything. */
static bool is_master(const rbac_user *u)
{
    for (size_t i = 0; i < u->ngroups; i++)
        if (u->groups[i] && strcmp(u->groups[i], RBAC_SYSTEM_MASTERS) == 0) return true;
    return false;
}

/* The user's own verb on an RBAC resource (escalate, bind). */
static bool may(const rbac_snapshot *s, const rbac_user *u, const char *verb, const char *ns,
                const char *resource, const char *name)
{
    rbac_attrs a = {*u, verb, true, RBAC_GROUP, resource, "", name, ns, ""};
    return rbac_authorize(s, &a, NULL, 0) == RBAC_ALLOW;
}

/* ConfirmNoEscalation: 0, or -1 with the text in msg. */
static int confirm_no_escalation(const rbac_snapshot *s, const rbac_user *u, const char *ns,
                                 const rbac_rules *requested, char *msg, size_t n)
{
    rbac_rules owner = {0}, missing = {0};
    char err[ERR_MAX];
    int rc = rbac_rules_for(s, u, ns, &owner, err, sizeof err);
    if (rc == 0 && rbac_covers(&owner, requested, &missing)) {
        rc = 0;
    } else {
        rbac_escalation_text(u, &missing, err, msg, n);
        rc = -1;
    }
    rbac_rules_cleanup(&owner);
    rbac_rules_cleanup(&missing);
    return rc;
}

/* fullAuthority: every verb on everything, and every URL. */
static int full_authority(rbac_rules *r)
{
    json_t *j = json_pack("[{s:[s], s:[s], s:[s]}, {s:[s], s:[s]}]", "verbs", "*", "apiGroups", "*",
                          "resources", "*", "verbs", "*", "nonResourceURLs", "*");
    int rc = j ? rbac_rules_add_json(r, j) : -1;
    json_decref(j);
    return rc;
}

int rbac_check_role_write(const rbac_snapshot *s, const rbac_user *u, const char *ns,
                          const char *resource, const json_t *role, char *msg, size_t n)
{
    if (msg && n) msg[0] = '\0';
    if (is_master(u) || may(s, u, "escalate", ns, resource, meta_str(role, "name"))) return 0;
    rbac_rules rules = {0};
    int rc = rbac_rules_add_json(&rules, json_object_get(role, "rules"));
    if (rc == 0) rc = confirm_no_escalation(s, u, ns, &rules, msg, n);
    rbac_rules_cleanup(&rules);
    if (rc != 0 || !json_is_object(json_object_get(role, "aggregationRule"))) return rc;
    rc = full_authority(&rules);
    if (rc == 0) rc = confirm_no_escalation(s, u, ns, &rules, msg, n);
    rbac_rules_cleanup(&rules);
    if (rc != 0 && msg && n)
        snprintf(msg, n, "must have cluster-admin privileges to use the aggregationRule");
    return rc;
}

int rbac_check_binding_write(const rbac_snapshot *s, const rbac_user *u, const char *ns,
                             const json_t *role_ref, char *msg, size_t n)
{
    const char *kind = jtext(role_ref, "kind"), *name = jtext(role_ref, "name");
    bool cluster = strcmp(kind, "ClusterRole") == 0;
    if (msg && n) msg[0] = '\0';
    if (is_master(u)) return 0;
    if ((cluster || strcmp(kind, "Role") == 0) &&
        may(s, u, "bind", ns, cluster ? "clusterroles" : "roles", name))
        return 0;
    /* GetRoleReferenceRules, as resolve() does for stored bindings. */
    binding b = {
        .ns = (char *)(ns && *ns ? ns : NULL), .ref_kind = (char *)kind, .ref_name = (char *)name};
    resolve(s, &b);
    if (!b.rules) {
        if (msg && n) snprintf(msg, n, "%s", b.err ? b.err : "out of memory");
        free(b.err);
        return -1;
    }
    return confirm_no_escalation(s, u, ns, b.rules, msg, n);
}
