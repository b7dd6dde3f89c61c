/* test_books.c - a property test that tries to break the quota books.
 *
 * test_books: seeded random sequences of requests go through the real REST
 * layer (rest_handle on a `req`, no HTTP) on a memory store set up as allotd
 * does (LimitRanger, Priority and ResourceQuota admission, the quota ledger,
 * the DeferredResourceQuota gate on). Four namespaces: na (quotas of every
 * flavour: compute, object counts, storage class, BestEffort / NotBestEffort /
 * Terminating / NotTerminating scopes, a PriorityClass scope selector), nb
 * (tight: pods: 2), nc (a LimitRange fills what its quota requires) -- all
 * three labelled for classic admission -- and nd, deferred (compute charged
 * at pods/binding). Steps are creates, PUTs, PATCHes of the three types,
 * subresource writes (pods/status, pods/resize, pods/binding,
 * resourcequotas/status, services/status, persistentvolumeclaims/status),
 * deletes, delete collections, namespace mode flips and reads of pods,
 * configmaps, services, PVCs and quotas; bodies are valid, hostile (the known
 * holes: see the change tables) or randomly mutated (random paths, random
 * values of random types, random JSON patch operations, garbage, protobuf).
 *
 * After EVERY step:
 *  (1) every quota's status.used (after the ledger is synced) and the
 *      ledger's usage equal a recount written here from the pure modules of
 *      src/core (quota_recount_begin/_prepare/_add_facts on facts built from
 *      freshly parsed stored JSON, quota_status_used_for, core/deferred.h's
 *      rule for unbound pods in a deferred namespace), independent of the
 *      ledger's incremental path and of the store's cached facts; and
 *      status.hard equals spec.hard;
 *  (2) no write pushes usage above hard: a key may be above its hard only
 *      when the quota's spec changed (created, hard lowered, scopes changed)
 *      while it was above, and then it may not rise until it is back under;
 *  (3) a rejected write (non-2xx), a dry run and a read change nothing: same
 *      store revision, same objects, nothing staged in the ledger;
 *  (4) every answer is below 500 (a crash prints the step being run);
 *  (5) every stored object fits its type (kind, apiVersion, strings, integers,
 *      maps, lists, quantities that parse and are not negative) and quota can
 *      evaluate the usage of every stored pod, service and PVC;
 *  (6) every stored pod passes upstream's ValidateResourceRequirements (names,
 *      requests <= limits, extended resources whole and requests == limits),
 *      is defaulted (no limit without its request) and has an
 *      activeDeadlineSeconds in range;
 *  (7) a successful pod write changes only what upstream lets it change
 *      (main resource: no container, resource, overhead, nodeName or priority
 *      change, activeDeadlineSeconds only lowered; resize: only container
 *      resources, same QoS class; status: no spec; binding: only an unset
 *      nodeName; never status.qosClass), compared as decoded objects.
 * (6) and (7) are upstream validation rules the accounting relies on: quota
 * evaluates a pod update only on resize or a Terminating-scope move.
 * A failure prints the seed, the step and the request, and shrinks the log to
 * a short sequence of requests (after the fixed set-up) that reproduces it.
 *
 * test_known_holes: hand-reduced sequences through the same checks: the holes
 * found (see "known holes") and the brief's list of holes now closed, which
 * must stay closed.
 *
 * Environment:
 *   ALLOT_BOOKS_STEPS       steps (default 20000)
 *   ALLOT_BOOKS_SEED        seed (default BOOKS_DEFAULT_SEED)
 *   ALLOT_BOOKS_MINIMIZE_S  seconds spent shrinking a failing sequence
 *                           (default 20; 0: off)
 *   ALLOT_BOOKS_KEEP_GOING  1: do not stop at the first violation; collect
 *                           every distinct one (invariant, generator, verb,
 *                           resource), shrink each, and start again from a
 *                           fresh store after each violating step
 *   ALLOT_BOOKS_RESET_EVERY steps before starting again from a fresh store
 *                           (default 100000; it bounds the log kept for shrinking)
 *   ALLOT_BOOKS_STRICT      1: no known hole is tolerated
 *   ALLOT_BOOKS_REPLAY      a file of requests, one per line as in the cases:
 *                           test_known_holes runs it instead of the cases
 *   ALLOT_BOOKS_VERBOSE     1: print every step
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/features.h"
#include "api/kinds.h"
#include "api/rq_validation.h"
#include "core/deferred.h"
#include "core/jget.h"
#include "core/quantity.h"
#include "core/quota_eval.h"
#include "core/rlist.h"
#include "registry/admission.h"
#include "registry/quota_admission.h"
#include "registry/quota_cache.h"
#include "registry/quota_ledger.h"
#include "registry/registry.h"
#include "server/server.h"
#include "testutil.h"
#include "teststore.h"

#define BOOKS_DEFAULT_SEED 20250101ULL
#define BOOKS_DEFAULT_STEPS 20000L
#define MAX_VIOL 16

#define NELEM(a) (sizeof(a) / sizeof *(a))

/* ---- configuration ---- */

static long cfg_steps = BOOKS_DEFAULT_STEPS;
static uint64_t cfg_seed = BOOKS_DEFAULT_SEED;
static double cfg_min_seconds = 20;
static long cfg_reset_every = 100000; /* steps before a fresh store (bounds the shrink log) */
static bool cfg_keep_going, cfg_verbose;

enum {
    INV_BOOKS = 1,
    INV_HARD,
    INV_UNCHANGED,
    INV_5XX,
    INV_TYPES,
    INV_PODRES,
    INV_PODUPDATE,
    NINV
};
static const char *const inv_names[NINV] = {
    "",
    "(1) quota status.used or ledger differs from a recount",
    "(2) usage pushed above hard",
    "(3) a rejected write, dry run or read changed the store",
    "(4) server error",
    "(5) a stored object does not fit its type",
    "(6) a stored pod breaks upstream's resource validation",
    "(7) a pod write changed what upstream forbids",
};

/* ---- random numbers (splitmix64) ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static size_t rn(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

static bool chance(unsigned pct)
{
    return rn(100) < pct;
}

#define PICK(a) ((a)[rn(NELEM(a))])

/* ---- small helpers ---- */

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0) s = NULL;
    va_end(ap);
    if (!s) abort();
    return s;
}

static char *dump(const json_t *v)
{
    if (!v) return strdup("(absent)");
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!s) abort();
    return s;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a real";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* ---- steps: one request each ---- */

typedef struct step {
    char *what; /* the generator that made it (for reports and de-duplication) */
    char method[16];
    char *path, *query, *ctype, *accept, *body;
    size_t body_len;
    int code; /* the answer when it ran (for shrinking) */
} step;

static void step_free(step *s)
{
    free(s->what);
    free(s->path);
    free(s->query);
    free(s->ctype);
    free(s->accept);
    free(s->body);
    memset(s, 0, sizeof *s);
}

static void step_body(step *s, const json_t *v)
{
    free(s->body);
    s->body = dump(v);
    s->body_len = strlen(s->body);
}

static void step_body_raw(step *s, const char *b, size_t n)
{
    free(s->body);
    s->body = malloc(n + 1);
    memcpy(s->body, b, n);
    s->body[n] = '\0';
    s->body_len = n;
}

static void step_query(step *s, const char *q)
{
    if (!q || !*q) return;
    char *old = s->query;
    s->query = old ? fmt("%s&%s", old, q) : strdup(q);
    free(old);
}

static void print_step(FILE *f, const step *s)
{
    fprintf(f, "%s %s%s%s", s->method, s->path, s->query ? "?" : "", s->query ? s->query : "");
    if (s->ctype) fprintf(f, " [%s]", s->ctype);
    if (s->accept) fprintf(f, " [accept %s]", s->accept);
    if (s->body) {
        fputc(' ', f);
        for (size_t i = 0; i < s->body_len && i < 1500; i++) {
            unsigned char c = (unsigned char)s->body[i];
            if (c < 0x20 || c >= 0x7f)
                fprintf(f, "\\x%02x", c);
            else
                fputc(c, f);
        }
        if (s->body_len > 1500) fprintf(f, "...(%zu bytes)", s->body_len);
    }
    fprintf(f, "  {%s}", s->what ? s->what : "");
}

/* Query parameters: "a=b&c=d", values taken as already URL-decoded. */
typedef struct qtab {
    char buf[512];
    const char *k[8], *v[8];
    int n;
} qtab;

static void qtab_parse(qtab *q, const char *s)
{
    q->n = 0;
    snprintf(q->buf, sizeof q->buf, "%s", s ? s : "");
    char *save = NULL;
    for (char *t = strtok_r(q->buf, "&", &save); t && q->n < 8; t = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(t, '=');
        if (eq) *eq = '\0';
        q->k[q->n] = t;
        q->v[q->n++] = eq ? eq + 1 : "";
    }
}

static const char *query_get(const req *r, const char *name)
{
    const qtab *q = r->conn;
    for (int i = 0; i < q->n; i++)
        if (!strcmp(q->k[i], name)) return q->v[i];
    return NULL;
}

/* The object a path names: /api/v1/namespaces/NS/RES[/NAME[/SUB]]. */
typedef struct target {
    char ns[64], res[64], name[64], sub[32];
} target;

static void parse_target(const char *path, target *t)
{
    memset(t, 0, sizeof *t);
    sscanf(path, "/api/v1/namespaces/%63[^/]/%63[^/]/%63[^/]/%31[^/]", t->ns, t->res, t->name,
           t->sub);
}

/* ---- snapshots of the whole store: every object, by reference ---- */

typedef struct snap {
    store_obj **o;
    size_t n;
    int64_t rev;
} snap;

static void snap_take(store *st, snap *s)
{
    size_t cap = 64;
    s->n = 0;
    s->o = malloc(cap * sizeof *s->o);
    s->rev = store_revision(st); /* nothing else writes: no flusher, no controllers */
    for (size_t i = 0; i < api_kind_count(); i++) {
        char res[256], prefix[300];
        api_kind_store_resource(api_kind_at(i), res, sizeof res);
        snprintf(prefix, sizeof prefix, "%s/", res);
        store_obj **v = NULL;
        size_t n = 0;
        assert_int_equal(store_list(st, prefix, NULL, 0, &v, &n, NULL, NULL), 0);
        if (s->n + n > cap) {
            while (s->n + n > cap)
                cap *= 2;
            s->o = realloc(s->o, cap * sizeof *s->o);
        }
        if (n) memcpy(s->o + s->n, v, n * sizeof *v);
        s->n += n;
        free(v);
    }
}

static void snap_free(snap *s)
{
    for (size_t i = 0; i < s->n; i++)
        store_obj_unref(s->o[i]);
    free(s->o);
    memset(s, 0, sizeof *s);
}

static const store_obj *snap_key(const snap *s, const char *key)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->o[i]->key, key)) return s->o[i];
    return NULL;
}

/* The first difference between two snapshots, or NULL. */
static const char *snap_diff(const snap *a, const snap *b, char *buf, size_t n)
{
    size_t i = 0;
    while (i < a->n && i < b->n && a->o[i] == b->o[i])
        i++;
    if (i == a->n && i == b->n) return NULL;
    if (i < b->n && !snap_key(a, b->o[i]->key)) {
        snprintf(buf, n, "%s added", b->o[i]->key);
    } else if (i < a->n && !snap_key(b, a->o[i]->key)) {
        snprintf(buf, n, "%s removed", a->o[i]->key);
    } else {
        const char *key = i < a->n ? a->o[i]->key : b->o[i]->key;
        const store_obj *x = snap_key(a, key), *y = snap_key(b, key);
        snprintf(buf, n, "%s rewritten (rv %lld -> %lld)", key, x ? (long long)x->rv : -1LL,
                 y ? (long long)y->rv : -1LL);
    }
    return buf;
}

static bool snap_has(const snap *s, const store_obj *o)
{
    for (size_t i = 0; s && i < s->n; i++)
        if (s->o[i] == o) return true;
    return false;
}

static const store_obj *snap_key(const snap *s, const char *key);

static bool ns_changed(const snap *a, const snap *b, const char *ns)
{
    char key[128];
    snprintf(key, sizeof key, "namespaces//%s", ns); /* its labels decide deferred mode */
    if (snap_key(a, key) != snap_key(b, key)) return true;
    size_t i = 0, j = 0;
    for (;;) {
        while (i < a->n && strcmp(a->o[i]->ns, ns))
            i++;
        while (j < b->n && strcmp(b->o[j]->ns, ns))
            j++;
        if (i == a->n || j == b->n) return (i == a->n) != (j == b->n);
        if (a->o[i] != b->o[j]) return true;
        i++;
        j++;
    }
}

/* ---- the world: a store with allotd's set-up, and what the checks remember ---- */

/* na, nb, nc: classic admission (labelled so); nd: deferred quota (charged at bind). */
static const char *const NS[] = {"na", "nb", "nc", "nd"};
#define MODE_LABEL "quota.allot.dev/mode"

typedef struct qtrack {
    char *key, *uid;
    json_t *spec;
    rlist *expected; /* the recount at the last check */
    rlist *over;     /* names legitimately above hard (the spec changed while above) */
    bool seen;
} qtrack;

typedef struct viol {
    int inv;
    char msg[1024];
} viol;

typedef struct world {
    store *st;
    server srv;
    snap verified; /* the store as of the last check */
    qtrack *q;
    size_t nq;
    step *log; /* the steps since the set-up, for shrinking */
    size_t nlog, logcap;
    viol v[MAX_VIOL];
    size_t nv;
    bool stale_qos; /* the step wrote a pod whose stored status.qosClass was not its spec's */
} world;

static void violation(world *w, int inv, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void violation(world *w, int inv, const char *f, ...)
{
    if (w->nv == MAX_VIOL) return;
    viol *v = &w->v[w->nv++];
    v->inv = inv;
    va_list ap;
    va_start(ap, f);
    vsnprintf(v->msg, sizeof v->msg, f, ap);
    va_end(ap);
}

/* What is being run, for a crash report. */
static const step *g_cur_step;
static long g_cur_index = -1;

static void print_current(void)
{
    if (!g_cur_step) return;
    if (g_cur_index < 0) { /* a replayed or hand-written step */
        fprintf(stderr, "\n*** test_books: crashed in a replayed step:\n    ");
        print_step(stderr, g_cur_step);
        fprintf(stderr, "\n");
        return;
    }
    fprintf(stderr, "\n*** test_books: crashed in step %ld (seed %llu):\n    ", g_cur_index,
            (unsigned long long)cfg_seed);
    print_step(stderr, g_cur_step);
    fprintf(stderr, "\n    reproduce: ALLOT_BOOKS_SEED=%llu ALLOT_BOOKS_STEPS=%ld%s\n",
            (unsigned long long)cfg_seed, g_cur_index + 1,
            cfg_keep_going ? " ALLOT_BOOKS_KEEP_GOING=1" : "");
}

static void on_fatal_signal(int sig)
{
    print_current();
    signal(sig, SIG_DFL);
    raise(sig);
}

extern void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

typedef struct outcome {
    int code;
    char msg[600];
} outcome;

static void exec_step(world *w, const step *s, outcome *out)
{
    qtab qt;
    qtab_parse(&qt, s->query);
    req rq;
    memset(&rq, 0, sizeof rq);
    rq.srv = &w->srv;
    rq.method = s->method;
    rq.path = s->path;
    rq.body = s->body;
    rq.body_len = s->body_len;
    rq.content_type = s->ctype;
    rq.accept = s->accept;
    rq.query = query_get;
    rq.conn = &qt;
    rq.waker = NULL;
    static const char *const admin_groups[] = {"system:masters", "system:authenticated"};
    static const auth_user admin = {"admin", "admin", admin_groups, 2};
    rq.user = &admin; /* (as http.c authenticates the admin token) */
    resp rs;
    memset(&rs, 0, sizeof rs);
    rest_handle(&rq, &rs);
    out->code = rs.code;
    const char *m = json_string_value(json_object_get(rs.json, "message"));
    snprintf(out->msg, sizeof out->msg, "%s", m ? m : "");
    json_decref(rs.json);
    free(rs.raw);
    store_obj_unref(rs.stored); /* (a written object's response, as http.c drops it) */
    json_decref(rs.warnings);
    if (rs.st.free) rs.st.free(rs.st.ctx);
}

static void setup_req(world *w, const char *method, const char *path, const char *body_sq)
{
    step s;
    memset(&s, 0, sizeof s);
    snprintf(s.method, sizeof s.method, "%s", method);
    s.path = strdup(path);
    s.ctype = strdup("application/json");
    json_t *b = J(body_sq);
    step_body(&s, b);
    json_decref(b);
    outcome o;
    exec_step(w, &s, &o);
    if (o.code != 201) fail_msg("set-up %s %s: %d %s", method, path, o.code, o.msg);
    step_free(&s);
}

static void setup_quota(world *w, const char *ns, const char *body_sq)
{
    char path[128];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/resourcequotas", ns);
    setup_req(w, "POST", path, body_sq);
}

static void check_all(world *w, const snap *old, const snap *now, bool force);

static void world_open(world *w)
{
    memset(w, 0, sizeof *w);
    w->st = open_store();
    w->srv.st = w->st;
    snprintf(w->srv.address, sizeof w->srv.address, "127.0.0.1:6443");
    for (size_t i = 0; i < NELEM(NS); i++) {
        char body[256];
        snprintf(body, sizeof body, "{'metadata':{'name':'%s'%s}}", NS[i],
                 strcmp(NS[i], "nd") ? ",'labels':{'" MODE_LABEL "':'admission'}" : "");
        setup_req(w, "POST", "/api/v1/namespaces", body);
    }
    setup_req(w, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
              "{'metadata':{'name':'high'},'value':1000}");
    setup_req(w, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
              "{'metadata':{'name':'low'},'value':10}");
    /* na: every flavour of quota. */
    setup_quota(w, "na",
                "{'metadata':{'name':'compute'},'spec':{'scopes':['NotBestEffort'],'hard':{"
                "'pods':'4','requests.cpu':'4','requests.memory':'4Gi','limits.cpu':'8',"
                "'limits.memory':'8Gi'}}}");
    setup_quota(w, "na",
                "{'metadata':{'name':'count'},'spec':{'hard':{'pods':'6','count/pods':'6',"
                "'requests.nvidia.com/gpu':'2','requests.ephemeral-storage':'10Gi',"
                "'configmaps':'4','count/configmaps':'5','services':'3','services.nodeports':'1',"
                "'services.loadbalancers':'1','persistentvolumeclaims':'3',"
                "'requests.storage':'10Gi','gold.storageclass.storage.k8s.io/requests.storage':"
                "'5Gi','gold.storageclass.storage.k8s.io/persistentvolumeclaims':'2',"
                "'resourcequotas':'9'}}}");
    setup_quota(w, "na",
                "{'metadata':{'name':'besteffort'},'spec':{'scopes':['BestEffort'],'hard':{'pods':"
                "'2'}}}");
    setup_quota(w, "na",
                "{'metadata':{'name':'notterm'},'spec':{'scopes':['NotTerminating'],'hard':{"
                "'pods':'5'}}}");
    setup_quota(w, "na",
                "{'metadata':{'name':'term'},'spec':{'scopes':['Terminating','NotBestEffort'],"
                "'hard':{'pods':'2','limits.cpu':'2','requests.cpu':'1'}}}");
    setup_quota(w, "na",
                "{'metadata':{'name':'prio'},'spec':{'hard':{'pods':'1','requests.cpu':'2'},"
                "'scopeSelector':{'matchExpressions':[{'scopeName':'PriorityClass','operator':"
                "'In','values':['high']}]}}}");
    /* nb: tight ("create-then-patch under pods: 2"). */
    setup_quota(w, "nb",
                "{'metadata':{'name':'pods'},'spec':{'hard':{'pods':'2','count/configmaps':'2',"
                "'services':'1','persistentvolumeclaims':'1','requests.storage':'2Gi'}}}");
    setup_quota(w, "nb",
                "{'metadata':{'name':'cpu'},'spec':{'scopes':['NotBestEffort'],'hard':{"
                "'requests.cpu':'2','limits.memory':'2Gi'}}}");
    /* nc: a LimitRange fills in what its quota makes pods specify. */
    setup_req(w, "POST", "/api/v1/namespaces/nc/limitranges",
              "{'metadata':{'name':'lr'},'spec':{'limits':[{'type':'Container',"
              "'default':{'cpu':'500m','memory':'256Mi'},"
              "'defaultRequest':{'cpu':'250m','memory':'128Mi'}}]}}");
    setup_quota(w, "nc",
                "{'metadata':{'name':'all'},'spec':{'hard':{'pods':'3','requests.cpu':'2',"
                "'limits.cpu':'3','requests.memory':'2Gi','limits.memory':'3Gi','configmaps':"
                "'3','services.loadbalancers':'1'}}}");
    /* nd: deferred; compute is charged when a pod is bound. */
    setup_quota(w, "nd",
                "{'metadata':{'name':'compute'},'spec':{'hard':{'pods':'3','requests.cpu':'2',"
                "'limits.memory':'2Gi','count/configmaps':'3'}}}");
    setup_quota(w, "nd",
                "{'metadata':{'name':'burst'},'spec':{'scopes':['NotBestEffort'],'hard':{'pods':"
                "'2','requests.memory':'1Gi'}}}");
    assert_int_equal(quota_ledger_sync(w->st), 0);
    snap_take(w->st, &w->verified);
    check_all(w, NULL, &w->verified, true);
    if (w->nv) fail_msg("the set-up already breaks an invariant: %s", w->v[0].msg);
}

static void world_close(world *w)
{
    snap_free(&w->verified);
    for (size_t i = 0; i < w->nq; i++) {
        free(w->q[i].key);
        free(w->q[i].uid);
        json_decref(w->q[i].spec);
        rl_free(w->q[i].expected);
        rl_free(w->q[i].over);
    }
    free(w->q);
    for (size_t i = 0; i < w->nlog; i++)
        step_free(&w->log[i]);
    free(w->log);
    quota_ledger_clear();
    quota_cache_clear();
    store_close(w->st);
    memset(w, 0, sizeof *w);
}

/* ---- (5) types ---- */

typedef enum {
    T_STR = 1,
    T_INT,
    T_BOOL,
    T_OBJ,
    T_OBJARR,
    T_STRARR,
    T_STRMAP,
    T_QTYMAP,
} ftype;

static const char *const ftype_names[] = {"",
                                          "a string",
                                          "an integer",
                                          "a boolean",
                                          "an object",
                                          "a list of objects",
                                          "a list of strings",
                                          "a map of strings",
                                          "a map of non-negative quantities"};

typedef struct fspec {
    const char *path; /* dotted; "x[]" is every element of list x */
    ftype t;
} fspec;

static const fspec meta_fields[] = {
    {"kind", T_STR},
    {"apiVersion", T_STR},
    {"metadata", T_OBJ},
    {"metadata.name", T_STR},
    {"metadata.namespace", T_STR},
    {"metadata.uid", T_STR},
    {"metadata.resourceVersion", T_STR},
    {"metadata.generateName", T_STR},
    {"metadata.creationTimestamp", T_STR},
    {"metadata.deletionTimestamp", T_STR},
    {"metadata.deletionGracePeriodSeconds", T_INT},
    {"metadata.generation", T_INT},
    {"metadata.labels", T_STRMAP},
    {"metadata.annotations", T_STRMAP},
    {"metadata.finalizers", T_STRARR},
    {"metadata.ownerReferences", T_OBJARR},
};

static const fspec pod_fields[] = {
    {"spec", T_OBJ},
    {"spec.containers", T_OBJARR},
    {"spec.containers[].name", T_STR},
    {"spec.containers[].image", T_STR},
    {"spec.containers[].restartPolicy", T_STR},
    {"spec.containers[].resources", T_OBJ},
    {"spec.containers[].resources.requests", T_QTYMAP},
    {"spec.containers[].resources.limits", T_QTYMAP},
    {"spec.initContainers", T_OBJARR},
    {"spec.initContainers[].name", T_STR},
    {"spec.initContainers[].image", T_STR},
    {"spec.initContainers[].restartPolicy", T_STR},
    {"spec.initContainers[].resources", T_OBJ},
    {"spec.initContainers[].resources.requests", T_QTYMAP},
    {"spec.initContainers[].resources.limits", T_QTYMAP},
    {"spec.overhead", T_QTYMAP},
    {"spec.resources", T_OBJ},
    {"spec.resources.requests", T_QTYMAP},
    {"spec.resources.limits", T_QTYMAP},
    {"spec.nodeName", T_STR},
    {"spec.priorityClassName", T_STR},
    {"spec.priority", T_INT},
    {"spec.activeDeadlineSeconds", T_INT},
    {"spec.terminationGracePeriodSeconds", T_INT},
    {"spec.schedulerName", T_STR},
    {"spec.restartPolicy", T_STR},
    {"spec.nodeSelector", T_STRMAP},
    {"status", T_OBJ},
    {"status.phase", T_STR},
    {"status.qosClass", T_STR},
    {"status.conditions", T_OBJARR},
    {"status.conditions[].type", T_STR},
    {"status.containerStatuses", T_OBJARR},
    {"status.containerStatuses[].name", T_STR},
    {"status.containerStatuses[].allocatedResources", T_QTYMAP},
    {"status.containerStatuses[].resources", T_OBJ},
    {"status.containerStatuses[].resources.requests", T_QTYMAP},
    {"status.containerStatuses[].resources.limits", T_QTYMAP},
};

static const fspec cm_fields[] = {
    {"data", T_STRMAP},
    {"binaryData", T_STRMAP},
    {"immutable", T_BOOL},
};

static const fspec svc_fields[] = {
    {"spec", T_OBJ},
    {"spec.type", T_STR},
    {"spec.ports", T_OBJARR},
    {"spec.ports[].port", T_INT},
    {"spec.ports[].nodePort", T_INT},
    {"spec.selector", T_STRMAP},
    {"status", T_OBJ},
};

static const fspec pvc_fields[] = {
    {"spec", T_OBJ},
    {"spec.accessModes", T_STRARR},
    {"spec.resources", T_OBJ},
    {"spec.resources.requests", T_QTYMAP},
    {"spec.resources.limits", T_QTYMAP},
    {"spec.storageClassName", T_STR},
    {"spec.volumeAttributesClassName", T_STR},
    {"status", T_OBJ},
    {"status.phase", T_STR},
    {"status.capacity", T_QTYMAP},
    {"status.allocatedResources", T_QTYMAP},
};

static const fspec quota_fields[] = {
    {"spec", T_OBJ},
    {"spec.hard", T_QTYMAP},
    {"spec.scopes", T_STRARR},
    {"spec.scopeSelector", T_OBJ},
    {"spec.scopeSelector.matchExpressions", T_OBJARR},
    {"spec.scopeSelector.matchExpressions[].scopeName", T_STR},
    {"spec.scopeSelector.matchExpressions[].operator", T_STR},
    {"spec.scopeSelector.matchExpressions[].values", T_STRARR},
    {"status", T_OBJ},
    {"status.hard", T_QTYMAP},
    {"status.used", T_QTYMAP},
};

/* Whether v is of type t as Go's decoder of that field would accept it (null
 * is an absent field); why (if not) in `why`. */
static bool leaf_ok(const json_t *v, ftype t, char *why, size_t n)
{
    size_t i;
    const char *k;
    json_t *e;
    why[0] = '\0';
    if (json_is_null(v)) return true;
    switch (t) {
    case T_STR:
        return json_is_string(v);
    case T_INT:
        return json_is_integer(v);
    case T_BOOL:
        return json_is_boolean(v);
    case T_OBJ:
        return json_is_object(v);
    case T_OBJARR:
        if (!json_is_array(v)) return false;
        json_array_foreach(v, i, e) if (!json_is_object(e))
        {
            snprintf(why, n, "element %zu is %s", i, type_name(e));
            return false;
        }
        return true;
    case T_STRARR:
        if (!json_is_array(v)) return false;
        json_array_foreach(v, i, e) if (!json_is_string(e))
        {
            snprintf(why, n, "element %zu is %s", i, type_name(e));
            return false;
        }
        return true;
    case T_STRMAP:
        if (!json_is_object(v)) return false;
        json_object_foreach((json_t *)v, k, e) if (!json_is_string(e) && !json_is_null(e))
        {
            snprintf(why, n, "[%s] is %s", k, type_name(e));
            return false;
        }
        return true;
    case T_QTYMAP:
        if (!json_is_object(v)) return false;
        json_object_foreach((json_t *)v, k, e)
        {
            qty q;
            if (qty_from_json(e, &q) != 0) {
                char *s = dump(e);
                snprintf(why, n, "[%s] = %.60s does not parse", k, s);
                free(s);
                return false;
            }
            if (qty_sign(&q) < 0) {
                char *s = dump(e);
                snprintf(why, n, "[%s] = %.60s is negative", k, s);
                free(s);
                return false;
            }
        }
        return true;
    }
    return true;
}

static void walk(world *w, const char *key, const json_t *node, const char *rest, ftype t,
                 const char *trail)
{
    if (!*rest) {
        char why[200];
        if (!leaf_ok(node, t, why, sizeof why)) {
            char *s = dump(node);
            violation(w, INV_TYPES, "%s: %s is %s (%s), not %s: %.120s", key, trail,
                      type_name(node), why[0] ? why : "wrong type", ftype_names[t], s);
            free(s);
        }
        return;
    }
    const char *dot = strchr(rest, '.');
    size_t len = dot ? (size_t)(dot - rest) : strlen(rest);
    char tok[64];
    snprintf(tok, sizeof tok, "%.*s", (int)len, rest);
    bool each = len > 2 && !strcmp(tok + len - 2, "[]");
    if (each) tok[len - 2] = '\0';
    const char *next = dot ? dot + 1 : "";
    if (!json_is_object(node)) return; /* the parent's own entry reports it */
    const json_t *child = json_object_get(node, tok);
    if (!child || json_is_null(child)) return;
    char tr[256];
    if (!each) {
        snprintf(tr, sizeof tr, "%s%s%s", trail, *trail ? "." : "", tok);
        walk(w, key, child, next, t, tr);
        return;
    }
    if (!json_is_array(child)) return;
    size_t i;
    json_t *e;
    json_array_foreach(child, i, e)
    {
        snprintf(tr, sizeof tr, "%s%s%s[%zu]", trail, *trail ? "." : "", tok, i);
        walk(w, key, e, next, t, tr);
    }
}

static void check_fields(world *w, const char *key, const json_t *obj, const fspec *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        walk(w, key, obj, f[i].path, f[i].t, "");
}

static bool is_core(const api_kind *k, const char *res)
{
    return k && !*k->group && !strcmp(k->resource, res);
}

/* ---- (6) a stored pod's resources ---- */

/* Upstream's ComputePodQOS (pkg/apis/core/helper/qos) from the spec alone:
 * cpu and memory of containers and init containers, non-zero values only,
 * Guaranteed when every container limits both and the summed requests
 * equal the summed limits. NULL when a value does not parse (then (5)
 * speaks) or the pod has pod-level resources (not modelled here). */
static const char *compute_qos(const json_t *pod)
{
    const json_t *spec = json_object_get(pod, "spec");
    if (json_object_get(spec, "resources")) return NULL;
    rlist *req = rl_new(), *lim = rl_new();
    bool guaranteed = true, ok = true;
    static const char *const lists[] = {"containers", "initContainers"};
    for (size_t l = 0; l < NELEM(lists) && ok; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(spec, lists[l]), i, c)
        {
            const json_t *res = json_object_get(c, "resources");
            int found = 0;
            for (int m = 0; m < 2; m++) {
                const json_t *map = json_object_get(res, m ? "limits" : "requests");
                static const char *const names[] = {"cpu", "memory"};
                for (int k = 0; k < 2; k++) {
                    const json_t *v = json_object_get(map, names[k]);
                    qty q;
                    if (!v) continue;
                    if (qty_from_json(v, &q) != 0) {
                        ok = false;
                        continue;
                    }
                    if (qty_sign(&q) <= 0) continue;
                    rl_add_qty(m ? lim : req, names[k], &q);
                    if (m) found++;
                }
            }
            if (found < 2) guaranteed = false;
        }
    }
    const char *cls = NULL;
    if (ok) {
        if (rl_len(req) == 0 && rl_len(lim) == 0)
            cls = "BestEffort";
        else if (guaranteed && rl_equal(req, lim))
            cls = "Guaranteed";
        else
            cls = "Burstable";
    }
    rl_free(req);
    rl_free(lim);
    return cls;
}

static void check_pod_resources(world *w, const char *key, const json_t *pod)
{
    const json_t *spec = json_object_get(pod, "spec");
    if (json_array_size(json_object_get(spec, "containers")) == 0)
        violation(w, INV_PODRES, "%s: stored without containers", key);
    const json_t *ads = json_object_get(spec, "activeDeadlineSeconds");
    if (json_is_integer(ads) &&
        (json_integer_value(ads) < 1 || json_integer_value(ads) > 2147483647))
        violation(w, INV_PODRES, "%s: spec.activeDeadlineSeconds %lld is not in 1..2147483647", key,
                  (long long)json_integer_value(ads));
    static const char *const lists[] = {"containers", "initContainers"};
    for (size_t l = 0; l < NELEM(lists); l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(spec, lists[l]), i, c)
        {
            const json_t *res = json_object_get(c, "resources");
            const json_t *rq = json_object_get(res, "requests"),
                         *lim = json_object_get(res, "limits");
            const json_t *maps[2] = {json_is_object(rq) ? rq : NULL,
                                     json_is_object(lim) ? lim : NULL};
            const char *mapname[2] = {"requests", "limits"};
            for (int m = 0; m < 2; m++) {
                const char *name;
                json_t *v;
                json_object_foreach((json_t *)maps[m], name, v)
                {
                    char field[256];
                    snprintf(field, sizeof field, "spec.%s[%zu].resources.%s[%s]", lists[l], i,
                             mapname[m], name);
                    json_t *causes = json_array();
                    rq_validate_container_resource_name(name, field, causes);
                    if (json_array_size(causes))
                        violation(w, INV_PODRES, "%s: %s: %s", key, field,
                                  json_string_value(
                                      json_object_get(json_array_get(causes, 0), "message")));
                    json_decref(causes);
                    qty q;
                    if (qty_from_json(v, &q) != 0) continue; /* (5) */
                    qty whole = q;
                    if (rq_is_integer_resource_name(name) && !qty_round_up(&whole, 0))
                        violation(w, INV_PODRES, "%s: %s is not an integer", key, field);
                }
            }
            const char *name;
            json_t *v;
            json_object_foreach((json_t *)maps[0], name, v)
            {
                qty rq_q, lim_q;
                if (qty_from_json(v, &rq_q) != 0) continue;
                const json_t *lv = json_object_get(maps[1], name);
                bool over = rq_is_overcommit_allowed(name);
                if (!lv) {
                    if (!over)
                        violation(w, INV_PODRES,
                                  "%s: spec.%s[%zu]: %s requested without a limit (not "
                                  "overcommitable)",
                                  key, lists[l], i, name);
                    continue;
                }
                if (qty_from_json(lv, &lim_q) != 0) continue;
                char a[QTY_STR_MAX], b[QTY_STR_MAX];
                qty_format_str(&rq_q, a, sizeof a);
                qty_format_str(&lim_q, b, sizeof b);
                if (over && qty_cmp(&rq_q, &lim_q) > 0)
                    violation(w, INV_PODRES, "%s: spec.%s[%zu]: requests.%s %s above limit %s", key,
                              lists[l], i, name, a, b);
                else if (!over && qty_cmp(&rq_q, &lim_q) != 0)
                    violation(w, INV_PODRES,
                              "%s: spec.%s[%zu]: requests.%s %s must equal its limit %s", key,
                              lists[l], i, name, a, b);
            }
            /* SetDefaults_Pod copies a limit into a missing request: a stored
             * pod (decoded with defaults upstream) never lacks it. */
            json_object_foreach((json_t *)maps[1], name, v)
            {
                if (!json_object_get(maps[0], name))
                    violation(w, INV_PODRES,
                              "%s: spec.%s[%zu]: limits.%s without requests.%s (not defaulted)",
                              key, lists[l], i, name, name);
            }
        }
    }
}

/* A newly stored object: (5) and, for pods, (6). */
static void check_object(world *w, const api_kind *k, const char *key, const json_t *obj)
{
    if (!k) return;
    bool pod = is_core(k, "pods"), cm = is_core(k, "configmaps"), svc = is_core(k, "services"),
         pvc = is_core(k, "persistentvolumeclaims"), quota = is_core(k, "resourcequotas");
    if (!pod && !cm && !svc && !pvc && !quota) return;
    check_fields(w, key, obj, meta_fields, NELEM(meta_fields));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    if (kind && strcmp(kind, k->kind))
        violation(w, INV_TYPES, "%s: stored with kind %s", key, kind);
    if (av && strcmp(av, "v1")) violation(w, INV_TYPES, "%s: stored with apiVersion %s", key, av);
    if (pod) check_fields(w, key, obj, pod_fields, NELEM(pod_fields));
    if (cm) check_fields(w, key, obj, cm_fields, NELEM(cm_fields));
    if (svc) check_fields(w, key, obj, svc_fields, NELEM(svc_fields));
    if (pvc) check_fields(w, key, obj, pvc_fields, NELEM(pvc_fields));
    if (quota) check_fields(w, key, obj, quota_fields, NELEM(quota_fields));
    if (pod || svc || pvc) {
        rlist *u = rl_new();
        int rc = quota_usage(k->group, k->resource, obj, 0, u);
        if (rc != 0) violation(w, INV_TYPES, "%s: quota cannot evaluate its usage (%d)", key, rc);
        rl_free(u);
    }
    if (pod) check_pod_resources(w, key, obj);
}

/* ---- (7) what a successful pod write changed ---- */

/* Equality of two values as upstream compares decoded objects
 * (apiequality.Semantic.DeepEqual after decoding): an absent field, null and
 * an empty value (omitempty) are the same, and inside resource maps
 * quantities compare by value. Errs towards "equal": (7) must never report
 * a change that is not one. */
static bool empty_value(const json_t *v)
{
    if (json_is_object(v)) { /* {"requests":{}} decodes as an empty struct too */
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m) if (!empty_value(m)) return false;
        return true;
    }
    return !v || json_is_null(v) || (json_is_array(v) && json_array_size(v) == 0) ||
           (json_is_string(v) && !*json_string_value(v)) ||
           (json_is_integer(v) && json_integer_value(v) == 0) || json_is_false(v);
}

static bool sem_equal_in(const json_t *a, const json_t *b, bool quantities)
{
    if (empty_value(a) && empty_value(b)) return true;
    if (!a || !b) return false;
    if (quantities && !json_is_object(a) && !json_is_object(b)) {
        qty x, y;
        if (qty_from_json(a, &x) == 0 && qty_from_json(b, &y) == 0) return qty_cmp(&x, &y) == 0;
    }
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v)
        {
            bool q = quantities || !strcmp(k, "requests") || !strcmp(k, "limits") ||
                     !strcmp(k, "overhead") || !strcmp(k, "allocatedResources");
            if (!sem_equal_in(v, json_object_get(b, k), q)) return false;
        }
        json_object_foreach((json_t *)b, k,
                            v) if (!json_object_get(a, k) && !empty_value(v)) return false;
        return true;
    }
    if (json_is_array(a) && json_is_array(b)) {
        if (json_array_size(a) != json_array_size(b)) return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!sem_equal_in(json_array_get(a, i), json_array_get(b, i), quantities)) return false;
        return true;
    }
    return json_equal(a, b);
}

static bool sem_equal(const json_t *a, const json_t *b)
{
    return sem_equal_in(a, b, false);
}

static json_t *strip_resources(const json_t *spec)
{
    json_t *s = json_deep_copy(spec);
    static const char *const lists[] = {"containers", "initContainers"};
    for (size_t l = 0; l < NELEM(lists); l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(s, lists[l]), i, c)
        {
            json_object_del(c, "resources");
            json_object_del(c, "resizePolicy");
        }
    }
    return s;
}

static void check_pod_update(world *w, const char *key, const char *sub, const json_t *old,
                             const json_t *nw)
{
    const json_t *os = json_object_get(old, "spec"), *ns = json_object_get(nw, "spec");
    /* "the Pod QoS is immutable and populated at creation time": upstream
     * backfills an empty one from the stored pod and refuses a change. */
    const char *qa = jstr(old, "status", "qosClass"), *qb = jstr(nw, "status", "qosClass");
    if (qa && *qa && (!qb || strcmp(qa, qb)))
        violation(w, INV_PODUPDATE, "%s: status.qosClass changed %s -> %s", key, qa,
                  qb ? qb : "(absent)");
    if (!strcmp(sub, "status")) {
        if (!sem_equal(os, ns)) violation(w, INV_PODUPDATE, "%s: pods/status changed spec", key);
        return;
    }
    if (!strcmp(sub, "binding")) {
        json_t *a = json_deep_copy(os), *b = json_deep_copy(ns);
        json_object_del(a, "nodeName");
        json_object_del(b, "nodeName");
        if (!sem_equal(a, b)) violation(w, INV_PODUPDATE, "%s: pods/binding changed spec", key);
        const char *was = json_string_value(json_object_get(os, "nodeName"));
        if (was && *was &&
            !json_equal(json_object_get(os, "nodeName"), json_object_get(ns, "nodeName")))
            violation(w, INV_PODUPDATE, "%s: pods/binding moved a bound pod from %s", key, was);
        json_decref(a);
        json_decref(b);
        return;
    }
    bool resize = !strcmp(sub, "resize");
    if (resize) {
        const char *ca = compute_qos(old), *cb = compute_qos(nw);
        if (ca && cb && strcmp(ca, cb))
            violation(w, INV_PODUPDATE, "%s: pods/resize changed the QoS class %s -> %s", key, ca,
                      cb);
        json_t *a = strip_resources(os), *b = strip_resources(ns);
        if (!sem_equal(a, b))
            violation(w, INV_PODUPDATE, "%s: pods/resize changed more than container resources",
                      key);
        json_decref(a);
        json_decref(b);
    }
    static const char *const lists[] = {"containers", "initContainers"};
    for (size_t l = 0; l < NELEM(lists); l++) {
        const json_t *a = json_object_get(os, lists[l]), *b = json_object_get(ns, lists[l]);
        if (json_array_size(a) != json_array_size(b)) {
            violation(w, INV_PODUPDATE, "%s: spec.%s went from %zu to %zu entries", key, lists[l],
                      json_array_size(a), json_array_size(b));
            continue;
        }
        for (size_t i = 0; i < json_array_size(a); i++) {
            const json_t *ca = json_array_get(a, i), *cb = json_array_get(b, i);
            if (!sem_equal(json_object_get(ca, "name"), json_object_get(cb, "name")))
                violation(w, INV_PODUPDATE, "%s: spec.%s[%zu].name changed", key, lists[l], i);
            if (!resize && !sem_equal_in(json_object_get(ca, "resources"),
                                         json_object_get(cb, "resources"), false)) {
                char *x = dump(json_object_get(ca, "resources")),
                     *y = dump(json_object_get(cb, "resources"));
                violation(w, INV_PODUPDATE, "%s: spec.%s[%zu].resources changed: %.200s -> %.200s",
                          key, lists[l], i, x, y);
                free(x);
                free(y);
            }
        }
    }
    static const char *const fixed[] = {"overhead", "resources", "nodeName", "priorityClassName",
                                        "priority"};
    for (size_t i = 0; i < NELEM(fixed); i++) {
        const json_t *a = json_object_get(os, fixed[i]), *b = json_object_get(ns, fixed[i]);
        if (!sem_equal_in(a, b, !strcmp(fixed[i], "overhead"))) {
            char *x = dump(a), *y = dump(b);
            violation(w, INV_PODUPDATE, "%s: spec.%s changed: %.100s -> %.100s", key, fixed[i], x,
                      y);
            free(x);
            free(y);
        }
    }
    const json_t *a = json_object_get(os, "activeDeadlineSeconds"),
                 *b = json_object_get(ns, "activeDeadlineSeconds");
    if (json_is_integer(a) &&
        (!json_is_integer(b) || json_integer_value(b) > json_integer_value(a)))
        violation(w, INV_PODUPDATE, "%s: spec.activeDeadlineSeconds raised or removed (was %lld)",
                  key, (long long)json_integer_value(a));
}

/* ---- (1) and (2): the recount ---- */

typedef struct nsent {
    store_obj *o;
    const api_kind *k;
    json_t *j;
    quota_facts *f;
} nsent;

static qtrack *qt_find(world *w, const char *key)
{
    for (size_t i = 0; i < w->nq; i++)
        if (!strcmp(w->q[i].key, key)) return &w->q[i];
    return NULL;
}

static void qt_drop(world *w, size_t i)
{
    free(w->q[i].key);
    free(w->q[i].uid);
    json_decref(w->q[i].spec);
    rl_free(w->q[i].expected);
    rl_free(w->q[i].over);
    w->q[i] = w->q[--w->nq];
}

static void fmt_qty(const qty *q, char *buf, size_t n)
{
    if (q)
        qty_format_str(q, buf, n);
    else
        snprintf(buf, n, "(absent)");
}

/* Every key of `expected` in `got` (absent = 0): differences into buf. */
static bool same_usage(const rlist *expected, const rlist *got, char *buf, size_t n)
{
    qty zero = qty_zero(QTY_DECIMAL_SI);
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < rl_len(expected); i++) {
        const char *name = rl_name(expected, i);
        const qty *g = rl_get(got, name);
        if (qty_cmp(rl_qty(expected, i), g ? g : &zero) == 0) continue;
        char a[QTY_STR_MAX], b[QTY_STR_MAX];
        fmt_qty(g, a, sizeof a);
        fmt_qty(rl_qty(expected, i), b, sizeof b);
        if (off < n)
            off += (size_t)snprintf(buf + off, n - off, "%s%s=%s (recount %s)", off ? ", " : "",
                                    name, a, b);
    }
    return buf[0] == '\0';
}

static void check_hard(world *w, const char *key, const json_t *quota, const rlist *hard,
                       const rlist *used)
{
    qtrack *t = qt_find(w, key);
    const char *uid = jstr(quota, "metadata", "uid");
    const json_t *spec = json_object_get(quota, "spec");
    bool reset = !t || strcmp(t->uid, uid ? uid : "") || !json_equal(t->spec, spec);
    if (!t) {
        w->q = realloc(w->q, (w->nq + 1) * sizeof *w->q);
        t = &w->q[w->nq++];
        memset(t, 0, sizeof *t);
        t->key = strdup(key);
    }
    t->seen = true;
    qty zero = qty_zero(QTY_DECIMAL_SI);
    if (reset) {
        free(t->uid);
        t->uid = strdup(uid ? uid : "");
        json_decref(t->spec);
        t->spec = json_deep_copy(spec);
        rl_free(t->over);
        t->over = rl_new();
    }
    for (size_t i = 0; i < rl_len(hard); i++) {
        const char *name = rl_name(hard, i);
        const qty *u = rl_get(used, name);
        if (!u) u = &zero;
        if (qty_cmp(u, rl_qty(hard, i)) <= 0) {
            rl_del(t->over, name);
            continue;
        }
        char a[QTY_STR_MAX], h[QTY_STR_MAX], p[QTY_STR_MAX];
        qty_format_str(u, a, sizeof a);
        qty_format_str(rl_qty(hard, i), h, sizeof h);
        const qty *prev = t->expected ? rl_get(t->expected, name) : NULL;
        fmt_qty(prev, p, sizeof p);
        if (reset) {
            rl_add_name(t->over, name); /* created or changed while above: legitimate */
        } else if (!rl_has(t->over, name)) {
            violation(w, INV_HARD, "%s: used %s = %s > hard %s (was %s)", key, name, a, h, p);
            rl_add_name(t->over, name);
        } else if (prev && qty_cmp(u, prev) > 0) {
            violation(w, INV_HARD, "%s: used %s rose from %s to %s while above hard %s", key, name,
                      p, a, h);
        }
    }
    rl_free(t->expected);
    t->expected = rl_copy(used);
}

static void check_quota(world *w, const nsent *qe, const nsent *e, size_t n, bool deferred)
{
    const json_t *q = qe->j;
    const char *key = qe->o->key;
    rlist *hard = rl_new(), *acc = rl_new(), *exp = rl_new(), *stored = rl_new(), *shard = rl_new(),
          *held = rl_new();
    json_t *expj = NULL;
    char diff[700];
    if (rl_from_json(jget(q, "spec", "hard"), hard, NULL) != 0) goto out; /* (5) */
    bool ok = true;
    for (size_t i = 0; i < api_kind_count() && ok; i++) {
        const api_kind *k = api_kind_at(i);
        if (!k->namespaced) continue;
        int nb = quota_recount_begin(q, k->group, k->resource, acc);
        if (nb < 0) ok = false;
        if (nb <= 0) continue;
        quota_recount_ctx *c = quota_recount_prepare(q, k->group, k->resource);
        if (!c) {
            ok = false;
            continue;
        }
        for (size_t j = 0; j < n; j++) {
            if (e[j].k != k || !e[j].f) continue;
            /* core/deferred.h: in a deferred namespace an unassigned pod's
             * cpu and memory do not count until it is bound. */
            const char *node = is_core(k, "pods") ? jstr(e[j].j, "spec", "nodeName") : "x";
            bool unassigned = !node || !*node;
            quota_recount_add_facts(c, e[j].f, deferred && unassigned ? held : acc); /* <0: (5) */
        }
        quota_recount_ctx_free(c);
    }
    if (ok && rl_len(held)) {
        rlist *only = quota_deferred_only(held), *kept = only ? rl_subtract(held, only) : NULL;
        ok = kept && rl_add_to(acc, kept) == 0;
        rl_free(only);
        rl_free(kept);
    }
    expj = ok ? quota_status_used_for(q, acc) : NULL;
    if (!expj || rl_from_json(expj, exp, NULL) != 0) {
        char *s = dump(jget(q, "status", "used") ?: json_null());
        violation(w, INV_BOOKS, "%s: cannot recount (status.used %.200s)", key, s);
        free(s);
        goto out;
    }
    const char *bad = NULL;
    if (rl_from_json(jget(q, "status", "used"), stored, &bad) != 0)
        violation(w, INV_BOOKS, "%s: stored status.used[%s] does not parse", key, bad ? bad : "?");
    else if (!same_usage(exp, stored, diff, sizeof diff))
        violation(w, INV_BOOKS, "%s: stored status.used %s", key, diff);
    int64_t rv = 0;
    rlist *led = quota_ledger_read(qe->o, &rv);
    if (!led)
        violation(w, INV_BOOKS, "%s: the ledger has no usage for it", key);
    else if (!same_usage(exp, led, diff, sizeof diff))
        violation(w, INV_BOOKS, "%s: ledger usage %s", key, diff);
    rl_free(led);
    if (rl_from_json(jget(q, "status", "hard"), shard, NULL) != 0 || !rl_equal(shard, hard)) {
        char *a = dump(jget(q, "status", "hard") ?: json_null()),
             *b = dump(jget(q, "spec", "hard"));
        violation(w, INV_BOOKS, "%s: status.hard %.200s is not spec.hard %.200s", key, a, b);
        free(a);
        free(b);
    }
    check_hard(w, key, q, hard, exp);
out:
    json_decref(expj);
    rl_free(hard);
    rl_free(acc);
    rl_free(exp);
    rl_free(stored);
    rl_free(shard);
    rl_free(held);
}

/* The whole namespace: new objects' types, every quota's recount. */
static void check_ns(world *w, const snap *old, const snap *now, const char *ns)
{
    nsent *e = calloc(now->n + 1, sizeof *e);
    size_t n = 0;
    for (size_t i = 0; i < now->n; i++) {
        store_obj *o = now->o[i];
        if (strcmp(o->ns, ns)) continue;
        nsent *x = &e[n++];
        x->o = o;
        x->k = api_kind_for_key(o->key);
        x->j = store_obj_parse(o);
        if (!x->j) {
            violation(w, INV_TYPES, "%s: stored JSON does not parse", o->key);
            continue;
        }
        if (!snap_has(old, o)) check_object(w, x->k, o->key, x->j);
        if (x->k && x->k->namespaced) x->f = quota_facts_new(x->k->group, x->k->resource, x->j, 0);
    }
    for (size_t i = 0; i < w->nq; i++)
        w->q[i].seen = false;
    char nskey[128];
    snprintf(nskey, sizeof nskey, "namespaces//%s", ns);
    const store_obj *nso = snap_key(now, nskey);
    json_t *nsj = nso ? store_obj_parse(nso) : NULL;
    const char *mode = json_string_value(
        json_object_get(json_object_get(json_object_get(nsj, "metadata"), "labels"), MODE_LABEL));
    bool deferred = !mode || strcmp(mode, "admission"); /* the feature gate is on */
    for (size_t i = 0; i < n; i++)
        if (e[i].j && is_core(e[i].k, "resourcequotas")) check_quota(w, &e[i], e, n, deferred);
    json_decref(nsj);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "resourcequotas/%s/", ns);
    for (size_t i = 0; i < w->nq;) {
        if (!w->q[i].seen && !strncmp(w->q[i].key, prefix, strlen(prefix)))
            qt_drop(w, i);
        else
            i++;
    }
    for (size_t i = 0; i < n; i++) {
        json_decref(e[i].j);
        quota_facts_free(e[i].f);
    }
    free(e);
}

/* A namespace no step touched: its ledger must not have moved either. */
static void check_ledger_only(world *w, const snap *now, const char *ns)
{
    char prefix[128], diff[700];
    snprintf(prefix, sizeof prefix, "resourcequotas/%s/", ns);
    for (size_t i = 0; i < w->nq; i++) {
        qtrack *t = &w->q[i];
        if (strncmp(t->key, prefix, strlen(prefix)) || !t->expected) continue;
        for (size_t j = 0; j < now->n; j++) {
            if (strcmp(now->o[j]->key, t->key)) continue;
            int64_t rv = 0;
            rlist *led = quota_ledger_read(now->o[j], &rv);
            if (!led)
                violation(w, INV_BOOKS, "%s: the ledger has no usage for it", t->key);
            else if (!same_usage(t->expected, led, diff, sizeof diff))
                violation(w, INV_BOOKS, "%s: ledger moved without a write in %s: %s", t->key, ns,
                          diff);
            rl_free(led);
            break;
        }
    }
}

static void check_all(world *w, const snap *old, const snap *now, bool force)
{
    for (size_t i = 0; i < NELEM(NS); i++) {
        if (force || !old || ns_changed(old, now, NS[i]))
            check_ns(w, old, now, NS[i]);
        else
            check_ledger_only(w, now, NS[i]);
    }
}

/* ---- running one step with every check ---- */

static void run_step(world *w, const step *s, outcome *out)
{
    w->nv = 0;
    target tg;
    parse_target(s->path, &tg);
    bool write = strcmp(s->method, "GET") != 0;
    bool dry = s->query && strstr(s->query, "dryRun=All");
    char podkey[256] = "";
    store_obj *oldpod = NULL;
    if (write && !strcmp(tg.res, "pods") && tg.name[0]) {
        snprintf(podkey, sizeof podkey, "pods/%s/%s", tg.ns, tg.name);
        oldpod = store_get(w->st, podkey);
    }
    w->stale_qos = false;
    if (oldpod) {
        json_t *a = store_obj_parse(oldpod);
        const char *stored = jstr(a, "status", "qosClass"), *spec = a ? compute_qos(a) : NULL;
        w->stale_qos = stored && spec && strcmp(stored, spec);
        json_decref(a);
    }
    exec_step(w, s, out);
    if (out->code >= 500 || out->code < 100)
        violation(w, INV_5XX, "answered %d: %.400s", out->code, out->msg);
    bool rejected = out->code < 200 || out->code >= 300;
    if (!write || rejected || dry) {
        snap pre;
        char why[400];
        snap_take(w->st, &pre);
        if (snap_diff(&w->verified, &pre, why, sizeof why))
            violation(w, INV_UNCHANGED, "%s answered %d but %s", write ? "write" : "read",
                      out->code, why);
        else if (pre.rev != w->verified.rev)
            violation(w, INV_UNCHANGED, "%s answered %d but the revision moved %lld -> %lld",
                      write ? "write" : "read", out->code, (long long)w->verified.rev,
                      (long long)pre.rev);
        quota_ledger_stats ls;
        quota_ledger_get_stats(&ls);
        if (ls.dirty)
            violation(w, INV_UNCHANGED, "answered %d but %zu quota(s) have charges pending",
                      out->code, ls.dirty);
        snap_free(&pre);
    }
    if (oldpod && !rejected && !dry) {
        store_obj *np = store_get(w->st, podkey);
        if (np && np != oldpod) {
            json_t *a = store_obj_parse(oldpod), *b = store_obj_parse(np);
            if (a && b) check_pod_update(w, podkey, tg.sub, a, b);
            json_decref(a);
            json_decref(b);
        }
        store_obj_unref(np);
    }
    store_obj_unref(oldpod);
    if (quota_ledger_sync(w->st) != 0) violation(w, INV_BOOKS, "quota_ledger_sync failed");
    snap now;
    snap_take(w->st, &now);
    check_all(w, &w->verified, &now, false);
    snap_free(&w->verified);
    w->verified = now;
}

/* ---- generating steps ---- */

static const char *const cpu_vals[] = {"100m", "250m", "500m", "1", "2"};
static const char *const mem_vals[] = {"64Mi", "256Mi", "512Mi", "1Gi"};
static const char *const apps[] = {"a", "b", "c"};

static json_t *gen_resources(void)
{
    json_t *res = json_object();
    size_t i = rn(NELEM(cpu_vals)), j = i + rn(NELEM(cpu_vals) - i);
    size_t m = rn(NELEM(mem_vals)), k = m + rn(NELEM(mem_vals) - m);
    switch (rn(7)) {
    case 0: /* BestEffort */
        break;
    case 1:
        json_object_set_new(res, "requests", json_pack("{s:s}", "cpu", cpu_vals[i]));
        break;
    case 2: /* Guaranteed */
        json_object_set_new(res, "requests",
                            json_pack("{s:s,s:s}", "cpu", cpu_vals[i], "memory", mem_vals[m]));
        json_object_set_new(res, "limits",
                            json_pack("{s:s,s:s}", "cpu", cpu_vals[i], "memory", mem_vals[m]));
        break;
    case 3: /* limits only: requests are defaulted from them */
        json_object_set_new(res, "limits",
                            json_pack("{s:s,s:s}", "cpu", cpu_vals[j], "memory", mem_vals[k]));
        break;
    case 4: /* Burstable */
        json_object_set_new(res, "requests",
                            json_pack("{s:s,s:s}", "cpu", cpu_vals[i], "memory", mem_vals[m]));
        json_object_set_new(res, "limits",
                            json_pack("{s:s,s:s}", "cpu", cpu_vals[j], "memory", mem_vals[k]));
        break;
    case 5:
        json_object_set_new(res, "requests",
                            json_pack("{s:s,s:s}", "cpu", cpu_vals[i], "nvidia.com/gpu", "1"));
        json_object_set_new(res, "limits",
                            json_pack("{s:s,s:s,s:s}", "cpu", cpu_vals[j], "memory", mem_vals[k],
                                      "nvidia.com/gpu", "1"));
        break;
    default:
        json_object_set_new(
            res, "requests",
            json_pack("{s:s,s:s}", "memory", mem_vals[m], "ephemeral-storage", "1Gi"));
        break;
    }
    return res;
}

static json_t *gen_pod(const char *name)
{
    json_t *p =
        json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Pod", "metadata", "name", name);
    if (chance(10)) {
        json_object_del(p, "apiVersion");
        json_object_del(p, "kind");
    }
    json_t *meta = json_object_get(p, "metadata");
    if (chance(50)) json_object_set_new(meta, "labels", json_pack("{s:s}", "app", PICK(apps)));
    if (chance(10)) json_object_set_new(meta, "finalizers", json_pack("[s]", "example.com/hold"));
    json_t *spec = json_object(), *cs = json_array();
    size_t n = 1 + rn(2);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(cs, json_pack("{s:s,s:s,s:o}", "name", i ? "c1" : "c0", "image",
                                            "img:1", "resources", gen_resources()));
    json_object_set_new(spec, "containers", cs);
    if (chance(10))
        json_object_set_new(spec, "initContainers",
                            json_pack("[{s:s,s:s,s:o}]", "name", "i0", "image", "img:1",
                                      "resources", gen_resources()));
    if (chance(20)) json_object_set_new(spec, "activeDeadlineSeconds", json_integer(60));
    if (chance(15)) json_object_set_new(spec, "priorityClassName", json_string("high"));
    if (chance(5)) json_object_set_new(spec, "priorityClassName", json_string("low"));
    if (chance(8)) json_object_set_new(spec, "nodeName", json_string("n1"));
    if (chance(3)) json_object_set_new(spec, "overhead", json_pack("{s:s}", "cpu", "100m"));
    json_object_set_new(p, "spec", spec);
    return p;
}

static json_t *gen_cm(const char *name)
{
    return json_pack("{s:s,s:s,s:{s:s},s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                     "metadata", "name", name, "data", "k", PICK(apps));
}

static json_t *gen_svc(const char *name)
{
    static const char *const types[] = {"ClusterIP", "ClusterIP", "NodePort", "LoadBalancer"};
    return json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:[{s:i}]}}", "apiVersion", "v1", "kind", "Service",
                     "metadata", "name", name, "spec", "type", PICK(types), "ports", "port", 80);
}

static json_t *gen_pvc(const char *name)
{
    static const char *const sizes[] = {"1Gi", "2Gi", "3Gi", "5Gi", "500Mi"};
    static const char *const classes[] = {"gold", "silver"};
    json_t *p = json_pack("{s:s,s:s,s:{s:s},s:{s:[s],s:{s:{s:s}}}}", "apiVersion", "v1", "kind",
                          "PersistentVolumeClaim", "metadata", "name", name, "spec", "accessModes",
                          "ReadWriteOnce", "resources", "requests", "storage", PICK(sizes));
    if (chance(50))
        json_object_set_new(json_object_get(p, "spec"), "storageClassName",
                            json_string(PICK(classes)));
    return p;
}

/* Quota resource names and values that fit them. */
static const char *const hard_names[] = {
    "pods",
    "requests.cpu",
    "limits.cpu",
    "requests.memory",
    "limits.memory",
    "count/configmaps",
    "configmaps",
    "services",
    "services.nodeports",
    "services.loadbalancers",
    "persistentvolumeclaims",
    "requests.storage",
    "gold.storageclass.storage.k8s.io/requests.storage",
    "resourcequotas",
    "requests.nvidia.com/gpu",
    "count/pods",
    "cpu",
    "memory",
};

static const char *hard_value(const char *name)
{
    static const char *const counts[] = {"0", "1", "2", "3", "5", "10"};
    static const char *const cpus[] = {"0", "500m", "1", "2", "4", "8"};
    static const char *const bytes[] = {"0", "512Mi", "1Gi", "4Gi", "10Gi"};
    if (strstr(name, "cpu")) return PICK(cpus);
    if (strstr(name, "memory") || strstr(name, "storage")) return PICK(bytes);
    return PICK(counts);
}

static json_t *gen_quota(const char *name)
{
    json_t *hard = json_object();
    size_t n = 1 + rn(4);
    for (size_t i = 0; i < n; i++) {
        const char *h = PICK(hard_names);
        json_object_set_new(hard, h, json_string(hard_value(h)));
    }
    json_t *spec = json_pack("{s:o}", "hard", hard);
    static const char *const scopes[][2] = {{"BestEffort", NULL},
                                            {"NotBestEffort", NULL},
                                            {"Terminating", NULL},
                                            {"NotTerminating", NULL},
                                            {"NotBestEffort", "NotTerminating"}};
    if (chance(30)) {
        size_t s = rn(NELEM(scopes));
        json_t *arr = json_array();
        for (int i = 0; i < 2 && scopes[s][i]; i++)
            json_array_append_new(arr, json_string(scopes[s][i]));
        json_object_set_new(spec, "scopes", arr);
    } else if (chance(10)) {
        json_object_set_new(spec, "scopeSelector",
                            json_pack("{s:[{s:s,s:s,s:[s]}]}", "matchExpressions", "scopeName",
                                      "PriorityClass", "operator", "In", "values", "high"));
    }
    return json_pack("{s:s,s:s,s:{s:s},s:o}", "apiVersion", "v1", "kind", "ResourceQuota",
                     "metadata", "name", name, "spec", spec);
}

/* Targeted changes: a path ('|'-separated, digits index lists, '-' appends)
 * and the values to try (JSON in single quotes; '$DEL' deletes). These are the
 * known holes and their neighbours. */
typedef struct tchange {
    const char *path, *values;
} tchange;

#define QANY                                                                                       \
    "['100','x','abc','-1','NaN','','1Gi','0.5','1','2','250m','1e3',' 1','-0','1e400',"           \
    "'9223372036854775808m','-100m',5,-1,0.25,true,null,[],{},'$DEL']"

static const tchange common_changes[] = {
    {"metadata|labels", "[['a'],{'a':1},'x',{'app':'b'},{'a':null},'$DEL',{'bad key!':'x'}]"},
    {"metadata|annotations", "[{'a':5},['x'],{'a':'b'}]"},
    {"metadata|finalizers", "[['example.com/hold'],[],[5],'x','$DEL',['orphan']]"},
    {"metadata|namespace", "['nb',5]"},
    {"metadata|name", "['other',5]"},
    {"metadata|resourceVersion", "['1','abc',5]"},
    {"metadata|uid", "['x',5]"},
    {"metadata|deletionTimestamp", "['2020-01-01T00:00:00Z',5]"},
    {"metadata|generateName", "[5,'g-']"},
    {"metadata", "['x',[],5]"},
    {"kind", "['Secret','ConfigMap',5,'$DEL','']"},
    {"apiVersion", "['v2','apps/v1',5,'$DEL']"},
};

static const tchange pod_changes[] = {
    {"spec|containers|0|resources|requests|cpu", QANY},
    {"spec|containers|0|resources|limits|cpu", QANY},
    {"spec|containers|0|resources|requests|memory", QANY},
    {"spec|containers|0|resources|limits|memory", QANY},
    {"spec|containers|1|resources|requests|cpu", "['3','x',true]"},
    {"spec|containers|0|resources|requests|nvidia.com/gpu", "['0.5','1','2','-1',1,'x',true]"},
    {"spec|containers|0|resources|limits|nvidia.com/gpu", "['0.5','1','2']"},
    {"spec|containers|0|resources|requests|foo", "['1']"},
    {"spec|containers|0|resources|requests|ephemeral-storage", "['100Gi','-1']"},
    {"spec|containers|0|resources|requests",
     "[{'cpu':'3','memory':'3Gi'},'x',[],{'cpu':true},null,'$DEL',{'cpu':'100'}]"},
    {"spec|containers|0|resources|limits", "[{'cpu':'100m'},'$DEL',{'memory':'1'},'x']"},
    {"spec|containers|0|resources", "['x',[],{},'$DEL',5]"},
    {"spec|containers|0", "['x',5,{}]"},
    {"spec|containers|0|name", "['renamed',5,'','c1']"},
    {"spec|containers|-",
     "[{'name':'extra','image':'x','resources':{'requests':{'cpu':'3','memory':'1Gi'}}},"
     "{'name':'c0','image':'x'},'x',{'name':'e2','image':'x','resources':{'limits':{'cpu':'8'}}}]"},
    {"spec|containers", "['x',[],[5],{},null]"},
    {"spec|initContainers",
     "[[{'name':'i0','image':'x','resources':{'requests':{'cpu':'5'}}}],'x',[5],'$DEL',"
     "[{'name':'i0','image':'x','restartPolicy':'Always','resources':{'requests':{'cpu':'2'}}}]]"},
    {"spec|initContainers|-",
     "[{'name':'i1','image':'x','restartPolicy':'Always','resources':{'requests':{'cpu':'2'}}}]"},
    {"spec|overhead", "[{'cpu':'10','memory':'10Gi'},{'cpu':'-1'},'x','$DEL']"},
    {"spec|resources", "[{'requests':{'cpu':'10'}},{'limits':{'cpu':'1'}},'x']"},
    {"spec|nodeName", "['n1','n2','',5,null,'$DEL']"},
    {"spec|priorityClassName", "['high','low','',5,'$DEL']"},
    {"spec|priority", "[1000000,'x',-5]"},
    {"spec|activeDeadlineSeconds", "[1,10,30,100000,0,-1,'x',1.5,'$DEL']"},
    {"spec", "['x',[],5,null]"},
    {"status|phase", "['Succeeded','Failed','Running','Pending','Unknown',5,'']"},
    {"status|containerStatuses",
     "[[{'name':'c0','allocatedResources':{'cpu':'100','memory':'100Gi'},'resources':{"
     "'requests':{'cpu':'100'},'limits':{'cpu':'100'}}}],[{'name':'c0','allocatedResources':{"
     "'cpu':'x'}}],'x',[{'name':'c0','resources':{'requests':{'cpu':'-5'}}}]]"},
    {"status|conditions",
     "[[{'type':'PodResizePending','status':'True','reason':'Infeasible'}],'x']"},
    {"status|qosClass", "['BestEffort',5]"},
    {"status", "['x',5]"},
};

static const tchange cm_changes[] = {
    {"data", "[{'a':'b'},{'a':1},['x'],'x',{'a':null}]"},
    {"binaryData", "[{'a':5},{'a':'eA=='}]"},
    {"immutable", "[true,'x']"},
};

static const tchange svc_changes[] = {
    {"spec|type", "['NodePort','LoadBalancer','ClusterIP','ExternalName',5,'']"},
    {"spec|ports",
     "[[{'port':80}],[{'port':80,'nodePort':30001},{'port':81}],'x',[{'port':'x'}],[]]"},
    {"spec|ports|0|nodePort", "[30000,'x']"},
    {"spec", "['x']"},
    {"status|loadBalancer", "['x']"},
};

static const tchange pvc_changes[] = {
    {"spec|resources|requests|storage", "['1Gi','3Gi','20Gi','-1Gi','x','',5,'1.5Gi','$DEL']"},
    {"spec|storageClassName", "['gold','silver',5,'','$DEL']"},
    {"spec|resources", "['x',{}]"},
    {"status|allocatedResources|storage", "['100Gi','1Gi','x','-1']"},
    {"status|capacity|storage", "['50Gi']"},
    {"spec", "['x']"},
};

static const tchange quota_changes[] = {
    {"spec|hard|pods", "['0','1','2','10','100','-1','x','1.5',1000,'$DEL']"},
    {"spec|hard|requests.cpu", "['0','1','10','100','-1','x','$DEL']"},
    {"spec|hard|limits.memory", "['1Gi','100Gi','-1','$DEL']"},
    {"spec|hard|count/configmaps", "['1','100','1500m']"},
    {"spec|hard|services", "['0','5']"},
    {"spec|hard|requests.storage", "['1Gi','100Gi']"},
    {"spec|hard", "[[],'x',{'pods':1000},{'foo':'1'},{},{'pods':'1'},{'pods':true}]"},
    {"spec|scopes", "[['BestEffort'],['Terminating'],['NotTerminating'],'x',[5],[],'$DEL']"},
    {"spec|scopeSelector",
     "[{'matchExpressions':[{'scopeName':'PriorityClass','operator':'In','values':['high']}]},"
     "'x','$DEL']"},
    {"spec", "['x',[],5]"},
    {"status|used", "[{'pods':'0','requests.cpu':'0'},{},'x',{'pods':'-5'}]"},
    {"status|used|pods", "['0','100']"},
    {"status|hard", "[{'pods':'1000','requests.cpu':'1000'},'x']"},
    {"status", "['x']"},
};

typedef struct tkind {
    const char *res;
    const char *const *names;
    size_t nnames;
    unsigned weight;
    const tchange *changes;
    size_t nchanges;
    json_t *(*gen)(const char *name);
} tkind;

static const char *const pod_names[] = {"p0", "p1", "p2", "p3", "p4", "p5"};
static const char *const cm_names[] = {"c0", "c1", "c2", "c3", "c4", "c5"};
static const char *const svc_names[] = {"s0", "s1", "s2", "s3"};
static const char *const pvc_names[] = {"v0", "v1", "v2", "v3"};
static const char *const quota_names[] = {"qx0", "qx1"};

static const tkind kinds[] = {
    {"pods", pod_names, NELEM(pod_names), 42, pod_changes, NELEM(pod_changes), gen_pod},
    {"configmaps", cm_names, NELEM(cm_names), 12, cm_changes, NELEM(cm_changes), gen_cm},
    {"services", svc_names, NELEM(svc_names), 12, svc_changes, NELEM(svc_changes), gen_svc},
    {"persistentvolumeclaims", pvc_names, NELEM(pvc_names), 12, pvc_changes, NELEM(pvc_changes),
     gen_pvc},
    {"resourcequotas", quota_names, NELEM(quota_names), 22, quota_changes, NELEM(quota_changes),
     gen_quota},
};

static const tkind *pick_kind(void)
{
    unsigned total = 0;
    for (size_t i = 0; i < NELEM(kinds); i++)
        total += kinds[i].weight;
    unsigned r = (unsigned)rn(total);
    for (size_t i = 0; i < NELEM(kinds); i++) {
        if (r < kinds[i].weight) return &kinds[i];
        r -= kinds[i].weight;
    }
    return &kinds[0];
}

static bool is_kind(const tkind *tk, const char *res)
{
    return !strcmp(tk->res, res);
}

/* A name: an existing object of the kind (usually), else one from the pool. */
static char *pick_name(world *w, const tkind *tk, const char *ns, unsigned existing_pct)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s/%s/", tk->res, ns);
    store_obj **v = NULL;
    size_t n = 0;
    char *name = NULL;
    assert_int_equal(store_list(w->st, prefix, NULL, 0, &v, &n, NULL, NULL), 0);
    if (n && chance(existing_pct)) name = strdup(v[rn(n)]->name);
    for (size_t i = 0; i < n; i++)
        store_obj_unref(v[i]);
    free(v);
    return name ? name : strdup(tk->names[rn(tk->nnames)]);
}

static json_t *stored(world *w, const tkind *tk, const char *ns, const char *name)
{
    char key[256];
    snprintf(key, sizeof key, "%s/%s/%s", tk->res, ns, name);
    store_obj *o = store_get(w->st, key);
    json_t *j = o ? store_obj_parse(o) : NULL;
    store_obj_unref(o);
    return j;
}

static void set_path(step *s, const char *ns, const char *res, const char *name, const char *sub)
{
    if (name && sub && *sub)
        s->path = fmt("/api/v1/namespaces/%s/%s/%s/%s", ns, res, name, sub);
    else if (name)
        s->path = fmt("/api/v1/namespaces/%s/%s/%s", ns, res, name);
    else
        s->path = fmt("/api/v1/namespaces/%s/%s", ns, res);
}

/* ---- paths inside objects (JSON arrays of tokens) ---- */

static json_t *path_parse(const char *s)
{
    json_t *p = json_array();
    char *d = strdup(s), *save = NULL;
    for (char *t = strtok_r(d, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
        bool digits = strspn(t, "0123456789") == strlen(t);
        json_array_append_new(p, digits ? json_integer(atoll(t)) : json_string(t));
    }
    free(d);
    return p;
}

static char *path_pointer(const json_t *path, size_t upto)
{
    char buf[1024];
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < upto && i < json_array_size(path) && off < sizeof buf - 8; i++) {
        const json_t *t = json_array_get(path, i);
        buf[off++] = '/';
        if (json_is_integer(t)) {
            off += (size_t)snprintf(buf + off, sizeof buf - off, "%lld",
                                    (long long)json_integer_value(t));
            continue;
        }
        for (const char *c = json_string_value(t); *c && off < sizeof buf - 4; c++) {
            if (*c == '~') {
                buf[off++] = '~';
                buf[off++] = '0';
            } else if (*c == '/') {
                buf[off++] = '~';
                buf[off++] = '1';
            } else {
                buf[off++] = *c;
            }
        }
    }
    buf[off < sizeof buf ? off : sizeof buf - 1] = '\0';
    return strdup(buf);
}

static const json_t *path_get(const json_t *root, const json_t *path, size_t upto)
{
    const json_t *cur = root;
    for (size_t i = 0; i < upto && cur; i++) {
        const json_t *t = json_array_get(path, i);
        if (json_is_integer(t))
            cur = json_is_array(cur) ? json_array_get(cur, (size_t)json_integer_value(t)) : NULL;
        else
            cur = json_is_object(cur) ? json_object_get(cur, json_string_value(t)) : NULL;
    }
    return cur;
}

/* Set (value, stolen) or delete (value NULL) at path in root; missing objects
 * on the way are created and scalars on the way replaced by objects. */
static bool path_apply(json_t *root, const json_t *path, json_t *value)
{
    size_t n = json_array_size(path);
    json_t *cur = root;
    for (size_t i = 0; i + 1 < n; i++) {
        const json_t *t = json_array_get(path, i), *nt = json_array_get(path, i + 1);
        json_t *next = NULL;
        if (json_is_integer(t)) {
            next = json_is_array(cur) ? json_array_get(cur, (size_t)json_integer_value(t)) : NULL;
        } else if (json_is_object(cur)) {
            const char *k = json_string_value(t);
            next = json_object_get(cur, k);
            if (value && !json_is_integer(nt) && (!next || !json_is_object(next))) {
                next = json_object();
                json_object_set_new(cur, k, next);
            }
        }
        if (!next) {
            json_decref(value);
            return false;
        }
        cur = next;
    }
    const json_t *t = json_array_get(path, n - 1);
    bool append = json_is_string(t) && !strcmp(json_string_value(t), "-");
    if (json_is_array(cur) && (json_is_integer(t) || append)) {
        size_t idx = append ? json_array_size(cur) : (size_t)json_integer_value(t);
        if (!value) return json_array_remove(cur, idx) == 0;
        if (idx == json_array_size(cur)) return json_array_append_new(cur, value) == 0;
        return json_array_set_new(cur, idx, value) == 0;
    }
    if (json_is_object(cur) && json_is_string(t)) {
        if (!value) return json_object_del(cur, json_string_value(t)) == 0;
        return json_object_set_new(cur, json_string_value(t), value) == 0;
    }
    json_decref(value);
    return false;
}

/* ---- random values and paths ---- */

static const char *const rstrings[] = {
    "",
    "x",
    "abc",
    "NaN",
    "-1",
    "1",
    "100",
    "1Gi",
    "0.5",
    "high",
    "n1",
    "Secret",
    "BestEffort",
    "Terminating",
    "Succeeded",
    "Running",
    "gold",
    "NodePort",
    "LoadBalancer",
    "v1",
    "Pod",
    "example.com/f",
    "a/b",
    "~1",
    "$patch",
    "500m",
    "2",
    "-1Gi",
    "replace",
    "delete",
    "1e3",
    " 1",
    "c0",
};
static const char *const rkeys[] = {
    "cpu",
    "memory",
    "requests",
    "limits",
    "nvidia.com/gpu",
    "storage",
    "pods",
    "name",
    "image",
    "labels",
    "hard",
    "scopes",
    "phase",
    "nodeName",
    "type",
    "resources",
    "containers",
    "initContainers",
    "overhead",
    "activeDeadlineSeconds",
    "priorityClassName",
    "finalizers",
    "$patch",
    "$retainKeys",
    "data",
    "status",
    "spec",
    "metadata",
    "kind",
    "apiVersion",
    "used",
    "allocatedResources",
    "requests.cpu",
    "count/pods",
    "x",
};

static json_t *rand_value(int depth)
{
    static const json_int_t ints[] = {
        0, 1, 2, -1, 5, 100, 30000, 9007199254740993LL, -9223372036854775807LL - 1};
    static const double reals[] = {0.5, -1.5, 1e300, 2.0, 0.1};
    switch (rn(depth > 1 ? 8 : 10)) {
    case 0:
    case 1:
    case 2:
        return json_string(PICK(rstrings));
    case 3:
        return json_integer(PICK(ints));
    case 4:
        return json_real(PICK(reals));
    case 5:
        return json_boolean(rn(2));
    case 6:
        return json_null();
    case 7:
        return json_string(PICK(cpu_vals));
    case 8: {
        json_t *a = json_array();
        size_t n = rn(3);
        for (size_t i = 0; i < n; i++)
            json_array_append_new(a, rand_value(depth + 1));
        return a;
    }
    default: {
        json_t *o = json_object();
        size_t n = rn(3);
        for (size_t i = 0; i < n; i++)
            json_object_set_new(o, PICK(rkeys), rand_value(depth + 1));
        return o;
    }
    }
}

static json_t *rand_path(const json_t *obj)
{
    json_t *p = json_array();
    const json_t *cur = obj;
    for (int d = 0; d < 7; d++) {
        if (json_is_object(cur) && json_object_size(cur) > 0 && (d == 0 || chance(70))) {
            size_t idx = rn(json_object_size(cur)), i = 0;
            const char *k, *pick = NULL;
            json_t *v, *pv = NULL;
            json_object_foreach((json_t *)cur, k, v)
            {
                if (i++ == idx) {
                    pick = k;
                    pv = v;
                    break;
                }
            }
            json_array_append_new(p, json_string(pick));
            cur = pv;
            continue;
        }
        if (json_is_array(cur) && json_array_size(cur) > 0 && chance(70)) {
            size_t idx = rn(json_array_size(cur));
            json_array_append_new(p, json_integer((json_int_t)idx));
            cur = json_array_get(cur, idx);
            continue;
        }
        break;
    }
    if (json_array_size(p) == 0 || chance(35))
        json_array_append_new(p, json_string(json_is_array(cur) && chance(50) ? "-" : PICK(rkeys)));
    return p;
}

/* ---- edits: (path, value or NULL = delete), rendered as any write ---- */

typedef struct edits {
    json_t *path[4];
    json_t *value[4]; /* NULL: delete */
    size_t n;
    char what[160];
} edits;

static void edits_free(edits *e)
{
    for (size_t i = 0; i < e->n; i++) {
        json_decref(e->path[i]);
        json_decref(e->value[i]);
    }
    e->n = 0;
}

static void edit_add(edits *e, json_t *path, json_t *value)
{
    if (e->n == NELEM(e->path)) {
        json_decref(path);
        json_decref(value);
        return;
    }
    e->path[e->n] = path;
    e->value[e->n++] = value;
}

static void edit_add_str(edits *e, const char *path, json_t *value)
{
    edit_add(e, path_parse(path), value);
}

/* One value of a targeted change; NULL for '$DEL'. */
static json_t *tchange_value(const tchange *c)
{
    json_t *arr = J(c->values);
    json_t *v = json_incref(json_array_get(arr, rn(json_array_size(arr))));
    json_decref(arr);
    if (json_is_string(v) && !strcmp(json_string_value(v), "$DEL")) {
        json_decref(v);
        return NULL;
    }
    return v;
}

static void targeted_edits(const tkind *tk, edits *e)
{
    size_t n = 1 + (chance(25) ? 1 : 0);
    for (size_t i = 0; i < n; i++) {
        const tchange *c = chance(80) ? &tk->changes[rn(tk->nchanges)]
                                      : &common_changes[rn(NELEM(common_changes))];
        edit_add_str(e, c->path, tchange_value(c));
        if (!i) snprintf(e->what, sizeof e->what, "targeted %s", c->path);
    }
}

static void random_edits(const json_t *cur, edits *e)
{
    size_t n = 1 + (chance(30) ? 1 : 0);
    for (size_t i = 0; i < n; i++)
        edit_add(e, rand_path(cur), chance(15) ? NULL : rand_value(0));
    snprintf(e->what, sizeof e->what, "random");
}

static const char *const phases[] = {"Running", "Succeeded", "Failed", "Pending"};

/* A quantity string of the list `vals` at most `max` (a string), or vals[0]. */
static const char *qty_at_most(const char *const *vals, size_t n, const json_t *max)
{
    qty m, v;
    if (!max || qty_from_json(max, &m) != 0) return vals[rn(n)];
    for (int tries = 0; tries < 8; tries++) {
        const char *s = vals[rn(n)];
        if (qty_parse(s, &v) == 0 && qty_cmp(&v, &m) <= 0) return s;
    }
    return vals[0];
}

/* Changes a well-behaved client would make. */
static void valid_edits(const tkind *tk, const char *sub, const json_t *cur, edits *e)
{
    snprintf(e->what, sizeof e->what, "valid");
    if (is_kind(tk, "pods")) {
        if (!strcmp(sub, "status")) {
            if (chance(70)) {
                edit_add_str(e, "status|phase", json_string(PICK(phases)));
            } else {
                /* A kubelet reporting what it allocated: the spec's requests. */
                const json_t *c0 = jget(cur, "spec", "containers");
                const json_t *rq = jget(json_array_get(c0, 0), "resources", "requests");
                const char *name =
                    json_string_value(json_object_get(json_array_get(c0, 0), "name"));
                edit_add_str(e, "status|containerStatuses",
                             json_pack("[{s:s,s:o}]", "name", name ? name : "c0",
                                       "allocatedResources",
                                       rq ? json_deep_copy(rq) : json_object()));
            }
            return;
        }
        if (!strcmp(sub, "resize")) {
            const json_t *res = json_object_get(
                json_array_get(jget(cur, "spec", "containers"), 0), "resources");
            const json_t *rq = json_object_get(res, "requests"),
                         *lim = json_object_get(res, "limits");
            static const char *const parts[] = {"cpu", "memory"};
            const char *part = PICK(parts);
            const char *const *vals = !strcmp(part, "cpu") ? cpu_vals : mem_vals;
            size_t nvals = !strcmp(part, "cpu") ? NELEM(cpu_vals) : NELEM(mem_vals);
            const json_t *r = json_object_get(rq, part), *l = json_object_get(lim, part);
            char path[128];
            if (r && l && json_equal(r, l)) { /* Guaranteed stays Guaranteed */
                const char *v = vals[rn(nvals)];
                snprintf(path, sizeof path, "spec|containers|0|resources|requests|%s", part);
                edit_add_str(e, path, json_string(v));
                snprintf(path, sizeof path, "spec|containers|0|resources|limits|%s", part);
                edit_add_str(e, path, json_string(v));
            } else if (r) {
                snprintf(path, sizeof path, "spec|containers|0|resources|requests|%s", part);
                edit_add_str(e, path, json_string(qty_at_most(vals, nvals, l)));
            } else if (l) {
                snprintf(path, sizeof path, "spec|containers|0|resources|limits|%s", part);
                edit_add_str(e, path, json_string(vals[rn(nvals)]));
            }
            snprintf(e->what, sizeof e->what, "valid resize %s", part);
            return;
        }
        switch (rn(4)) {
        case 0:
            edit_add_str(e, "metadata|labels|app", json_string(PICK(apps)));
            break;
        case 1:
            edit_add_str(e, "spec|containers|0|image", json_string(chance(50) ? "img:1" : "img:2"));
            break;
        case 2: {
            const json_t *ads = jget(cur, "spec", "activeDeadlineSeconds");
            json_int_t v = json_is_integer(ads) ? json_integer_value(ads) / 2 : 60;
            edit_add_str(e, "spec|activeDeadlineSeconds", json_integer(v > 0 ? v : 1));
            break;
        }
        default:
            edit_add_str(e, "metadata|finalizers",
                         chance(50) ? json_pack("[s]", "example.com/hold") : NULL);
            break;
        }
        return;
    }
    if (is_kind(tk, "configmaps")) {
        edit_add_str(e, "data|k", json_string(PICK(apps)));
    } else if (is_kind(tk, "services")) {
        static const char *const types[] = {"ClusterIP", "NodePort", "LoadBalancer"};
        edit_add_str(e, "spec|type", json_string(PICK(types)));
    } else if (is_kind(tk, "persistentvolumeclaims")) {
        static const char *const sizes[] = {"1Gi", "2Gi", "4Gi", "8Gi"};
        const json_t *st = jget(cur, "spec", "resources", "requests");
        st = json_object_get(st, "storage");
        if (!strcmp(sub, "status"))
            edit_add_str(e, "status|allocatedResources|storage",
                         st ? json_deep_copy(st) : json_string("1Gi"));
        else
            edit_add_str(e, "spec|resources|requests|storage", json_string(PICK(sizes)));
    } else { /* quotas: raise or lower a limit */
        const json_t *hard = jget(cur, "spec", "hard");
        const char *name = PICK(hard_names);
        if (json_is_object(hard) && json_object_size(hard) && chance(80)) {
            size_t idx = rn(json_object_size(hard)), i = 0;
            const char *k;
            json_t *v;
            json_object_foreach((json_t *)hard, k, v) if (i++ == idx)
            {
                name = k;
                break;
            }
        }
        json_t *path = json_pack("[s,s,s]", "spec", "hard", name);
        edit_add(e, path, json_string(hard_value(name)));
        snprintf(e->what, sizeof e->what, "valid quota hard");
    }
}

/* RFC 7386 diff a -> b. */
static json_t *merge_diff(const json_t *a, const json_t *b)
{
    if (!json_is_object(a) || !json_is_object(b)) return json_deep_copy(b);
    json_t *d = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v) if (!json_object_get(b, k))
        json_object_set_new(d, k, json_null());
    json_object_foreach((json_t *)b, k, v)
    {
        const json_t *av = json_object_get(a, k);
        if (av && json_equal(av, v)) continue;
        json_object_set_new(d, k,
                            av && json_is_object(av) && json_is_object(v) ? merge_diff(av, v)
                                                                          : json_deep_copy(v));
    }
    return d;
}

static bool named_list(const json_t *l)
{
    size_t i;
    json_t *e;
    json_array_foreach(l, i, e) if (!json_is_string(json_object_get(e, "name"))) return false;
    return true;
}

/* A strategic merge patch a -> b: containers merged by name (or replaced with
 * the list's $patch: replace directive), everything else as a merge patch. */
static json_t *smp_diff(const json_t *a, const json_t *b, const char *field)
{
    bool merge_list = field && (!strcmp(field, "containers") || !strcmp(field, "initContainers"));
    if (merge_list && json_is_array(a) && json_is_array(b)) {
        bool same = json_array_size(a) == json_array_size(b) && named_list(a) && named_list(b);
        for (size_t i = 0; same && i < json_array_size(a); i++)
            same = json_equal(json_object_get(json_array_get(a, i), "name"),
                              json_object_get(json_array_get(b, i), "name"));
        json_t *out = json_array();
        if (!same) {
            json_array_extend(out, (json_t *)b);
            json_array_append_new(out, json_pack("{s:s}", "$patch", "replace"));
            json_t *copy = json_deep_copy(out);
            json_decref(out);
            return copy;
        }
        for (size_t i = 0; i < json_array_size(a); i++) {
            const json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
            if (json_equal(x, y)) continue;
            json_t *d = smp_diff(x, y, NULL);
            json_object_set(d, "name", json_object_get(y, "name"));
            json_array_append_new(out, d);
        }
        return out;
    }
    if (!json_is_object(a) || !json_is_object(b)) return json_deep_copy(b);
    json_t *d = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v) if (!json_object_get(b, k))
        json_object_set_new(d, k, json_null());
    json_object_foreach((json_t *)b, k, v)
    {
        const json_t *av = json_object_get(a, k);
        if (av && json_equal(av, v)) continue;
        json_object_set_new(d, k, av ? smp_diff(av, v, k) : json_deep_copy(v));
    }
    return d;
}

/* JSON patch operations for the edits, on `cur`. */
static json_t *jsonpatch_of(const json_t *cur, const edits *e)
{
    json_t *ops = json_array();
    for (size_t i = 0; i < e->n; i++) {
        const json_t *path = e->path[i];
        size_t n = json_array_size(path), have = 0;
        while (have < n && path_get(cur, path, have + 1))
            have++;
        const char *top = json_string_value(json_array_get(path, 0));
        const char *second = json_string_value(json_array_get(path, 1));
        bool server_set =
            top && !strcmp(top, "metadata") &&
            (!second || !strcmp(second, "uid") || !strcmp(second, "resourceVersion") ||
             !strcmp(second, "creationTimestamp") || !strcmp(second, "deletionTimestamp") ||
             have < 2);
        if (chance(15) && have > 0 && !server_set) {
            char *p = path_pointer(path, have);
            const json_t *v = path_get(cur, path, have);
            json_t *tv = chance(80) ? json_incref((json_t *)v) : json_string("wrong");
            json_array_append_new(ops,
                                  json_pack("{s:s,s:s,s:o}", "op", "test", "path", p, "value", tv));
            free(p);
        }
        char *full = path_pointer(path, n);
        if (!e->value[i]) {
            json_array_append_new(ops, json_pack("{s:s,s:s}", "op", "remove", "path", full));
        } else if (have == n) {
            json_array_append_new(ops,
                                  json_pack("{s:s,s:s,s:O}", "op", chance(70) ? "replace" : "add",
                                            "path", full, "value", e->value[i]));
        } else {
            /* add at the first missing token, with the rest built as objects */
            json_t *v = json_incref(e->value[i]);
            size_t at = have + 1;
            for (size_t j = n; j > at; j--) {
                const json_t *t = json_array_get(path, j - 1);
                if (!json_is_string(t) || !strcmp(json_string_value(t), "-")) {
                    at = n; /* cannot build lists: add at the full path (fails) */
                    break;
                }
            }
            if (at < n) {
                for (size_t j = n; j > at; j--) {
                    json_t *o = json_object();
                    json_object_set_new(o, json_string_value(json_array_get(path, j - 1)), v);
                    v = o;
                }
            }
            char *p = path_pointer(path, at);
            json_array_append_new(ops,
                                  json_pack("{s:s,s:s,s:o}", "op", "add", "path", p, "value", v));
            free(p);
        }
        free(full);
    }
    return ops;
}

static const char *const CT_JSON = "application/json";
static const char *const CT_MERGE = "application/merge-patch+json";
static const char *const CT_SMP = "application/strategic-merge-patch+json";
static const char *const CT_JP = "application/json-patch+json";

static void maybe_dry_run(step *s)
{
    if (chance(5)) step_query(s, "dryRun=All");
}

static void gen_create(world *w, step *s, const tkind *tk, const char *ns, bool hostile)
{
    char *name = pick_name(w, tk, ns, is_kind(tk, "resourcequotas") ? 0 : 15);
    json_t *obj = tk->gen(name);
    snprintf(s->method, sizeof s->method, "POST");
    set_path(s, ns, tk->res, NULL, NULL);
    s->ctype = strdup(CT_JSON);
    if (hostile) {
        edits e = {0};
        if (chance(60))
            targeted_edits(tk, &e);
        else
            random_edits(obj, &e);
        for (size_t i = 0; i < e.n; i++)
            path_apply(obj, e.path[i], json_incref(e.value[i]));
        s->what = fmt("create %s %s", tk->res, e.what);
        edits_free(&e);
    } else {
        s->what = fmt("create %s", tk->res);
    }
    step_body(s, obj);
    maybe_dry_run(s);
    json_decref(obj);
    free(name);
}

static const char *pick_sub(const tkind *tk)
{
    unsigned r = (unsigned)rn(100);
    if (is_kind(tk, "pods")) return r < 65 ? "" : r < 82 ? "status" : "resize";
    if (is_kind(tk, "configmaps")) return "";
    return r < 78 ? "" : "status";
}

static void gen_update(world *w, step *s, const tkind *tk, const char *ns)
{
    char *name = pick_name(w, tk, ns, 92);
    const char *sub = pick_sub(tk);
    json_t *cur = stored(w, tk, ns, name);
    if (!cur) cur = tk->gen(name);
    edits e = {0};
    unsigned r = (unsigned)rn(100);
    if (r < 35)
        valid_edits(tk, sub, cur, &e);
    else if (r < 75)
        targeted_edits(tk, &e);
    else
        random_edits(cur, &e);
    json_t *desired = json_deep_copy(cur);
    for (size_t i = 0; i < e.n; i++)
        path_apply(desired, e.path[i], json_incref(e.value[i]));
    set_path(s, ns, tk->res, name, sub);
    unsigned m = (unsigned)rn(100);
    const char *how;
    if (m < 25) {
        how = "put";
        snprintf(s->method, sizeof s->method, "PUT");
        s->ctype = strdup(CT_JSON);
        /* Server-set identity would make the recorded body depend on the run
         * (uids are random, revisions move when a sequence is shrunk): the
         * live values are left out, a stale revision is sent sometimes. */
        json_t *meta = json_object_get(desired, "metadata");
        if (json_is_object(meta)) {
            json_object_del(meta, "uid");
            json_object_del(meta, "creationTimestamp");
            json_object_del(meta, "deletionTimestamp");
            if (chance(10))
                json_object_set_new(meta, "resourceVersion", json_string("1"));
            else
                json_object_del(meta, "resourceVersion");
        }
        step_body(s, desired);
    } else if (m < 45) {
        how = "merge";
        snprintf(s->method, sizeof s->method, "PATCH");
        s->ctype = strdup(CT_MERGE);
        json_t *d = merge_diff(cur, desired);
        step_body(s, d);
        json_decref(d);
    } else if (m < 72) {
        how = "strategic";
        snprintf(s->method, sizeof s->method, "PATCH");
        s->ctype = strdup(CT_SMP);
        json_t *d = smp_diff(cur, desired, NULL);
        step_body(s, d);
        json_decref(d);
    } else {
        how = "jsonpatch";
        snprintf(s->method, sizeof s->method, "PATCH");
        s->ctype = strdup(CT_JP);
        json_t *ops = jsonpatch_of(cur, &e);
        step_body(s, ops);
        json_decref(ops);
    }
    if (chance(2)) {
        free(s->ctype);
        s->ctype = strdup(chance(50) ? "application/apply-patch+yaml" : "text/plain");
    }
    maybe_dry_run(s);
    s->what = fmt("%s %s%s%s %s", how, tk->res, *sub ? "/" : "", sub, e.what);
    edits_free(&e);
    json_decref(cur);
    json_decref(desired);
    free(name);
}

/* Hand-written strategic merge patches on pods: the directives. */
static void gen_smp_special(world *w, step *s, const char *ns)
{
    static const char *const bodies[] = {
        "{'spec':{'containers':[{'name':'c0','resources':{'$patch':'replace'}}]}}",
        "{'spec':{'containers':[{'name':'c0','resources':{'$patch':'replace','limits':{'cpu':"
        "'100m'}}}]}}",
        "{'spec':{'containers':[{'name':'c0','resources':{'requests':{'$patch':'replace'}}}]}}",
        "{'spec':{'containers':[{'name':'c0','image':'x'},{'$patch':'replace'}]}}",
        "{'spec':{'containers':[{'name':'c0','$patch':'delete'}]}}",
        "{'spec':{'$setElementOrder/containers':[{'name':'c1'},{'name':'c0'}],'containers':[{"
        "'name':'c1','image':'x','resources':{'requests':{'cpu':'3'}}}]}}",
        "{'spec':{'containers':[{'name':'c0','resources':{'requests':{'cpu':'100'}}}]}}",
        "{'spec':{'containers':[{'name':'c9','image':'x','resources':{'requests':{'cpu':'3'}}}]}}",
        "{'spec':{'$patch':'replace','containers':[{'name':'c0','image':'x'}]}}",
        "{'metadata':{'$deleteFromPrimitiveList/finalizers':['example.com/hold']}}",
        "{'spec':{'$retainKeys':['containers'],'containers':[{'name':'c0','image':'x'}]}}",
        "{'$patch':'delete'}",
        "{'spec':{'containers':{'$patch':'replace'}}}",
        "{'spec':{'containers':[{'name':'c0','resources':{'$retainKeys':['limits'],'limits':{"
        "'cpu':'1'}}}]}}",
        "{'spec':{'initContainers':[{'name':'i9','image':'x','resources':{'requests':{'cpu':'9'}}}"
        "]}}",
        "{'spec':{'containers':[{'name':'c0','resources':{'limits':{'cpu':null}}}]}}",
        "{'status':{'$patch':'replace','phase':'Running'}}",
    };
    static const char *const subs[] = {"", "", "", "resize", "status"};
    char *name = pick_name(w, &kinds[0], ns, 95);
    size_t b = rn(NELEM(bodies));
    const char *sub = PICK(subs);
    json_t *body = J(bodies[b]);
    snprintf(s->method, sizeof s->method, "PATCH");
    set_path(s, ns, "pods", name, sub);
    s->ctype = strdup(CT_SMP);
    step_body(s, body);
    maybe_dry_run(s);
    s->what = fmt("strategic special #%zu pods%s%s", b, *sub ? "/" : "", sub);
    json_decref(body);
    free(name);
}

/* JSON patches of random operations on random paths. */
static void gen_rand_jsonpatch(world *w, step *s, const tkind *tk, const char *ns)
{
    static const char *const ops_names[] = {"add",  "remove", "replace", "move",
                                            "copy", "test",   "bogus"};
    static const char *const bad_ptrs[] = {"",
                                           "/",
                                           "/spec/containers/-",
                                           "/spec/containers/99",
                                           "spec",
                                           "/metadata/labels/a~1b",
                                           "/~2",
                                           "/spec/containers/0/resources/requests/cpu",
                                           "/kind",
                                           "/status/used",
                                           "/spec/hard"};
    static const char *const specials[] = {
        "[{'op':'replace','path':'/kind','value':'Secret'}]",
        "[{'op':'add','path':'/spec/containers/-','value':{'name':'c7','image':'x','resources':{"
        "'requests':{'cpu':'3'}}}}]",
        "[{'op':'copy','from':'/spec/containers/0','path':'/spec/containers/-'}]",
        "[{'op':'move','from':'/spec/containers/0/resources/limits','path':'/spec/containers/0/"
        "resources/requests'}]",
        "[{'op':'replace','path':'/spec/containers/0/resources/requests/cpu','value':'100'}]",
        "[{'op':'remove','path':'/spec/containers/0/resources'}]",
        "[{'op':'replace','path':'/spec/nodeName','value':'n2'}]",
        "[{'op':'add','path':'/spec/overhead','value':{'cpu':'10'}}]",
        "[{'op':'replace','path':'/status/used','value':{'pods':'0'}}]",
        "[{'op':'add','path':'/spec/hard/pods','value':'1000'}]",
        "[{'op':'replace','path':'/spec','value':'x'}]",
        "[{'op':'replace','path':'/metadata','value':'x'}]",
        "[{'op':'remove','path':'/metadata'}]",
        "[{'op':'replace','path':'','value':{}}]",
        "[{'op':'replace','path':'','value':5}]",
    };
    char *name = pick_name(w, tk, ns, 92);
    const char *sub = pick_sub(tk);
    json_t *cur = stored(w, tk, ns, name);
    if (!cur) cur = tk->gen(name);
    json_t *ops;
    if (chance(25)) {
        size_t i = rn(NELEM(specials));
        ops = J(specials[i]);
        s->what = fmt("jsonpatch special #%zu %s%s%s", i, tk->res, *sub ? "/" : "", sub);
    } else {
        ops = json_array();
        size_t n = 1 + rn(3);
        for (size_t i = 0; i < n; i++) {
            const char *op = PICK(ops_names);
            json_t *o = json_pack("{s:s}", "op", op);
            char *p;
            if (chance(85)) {
                json_t *rp = rand_path(cur);
                p = path_pointer(rp, json_array_size(rp));
                json_decref(rp);
            } else {
                p = strdup(PICK(bad_ptrs));
            }
            json_object_set_new(o, "path", json_string(p));
            free(p);
            if (!strcmp(op, "move") || !strcmp(op, "copy")) {
                json_t *rp = rand_path(cur);
                char *f = path_pointer(rp, json_array_size(rp));
                json_object_set_new(o, "from", json_string(f));
                free(f);
                json_decref(rp);
            }
            if (strcmp(op, "remove") && chance(95)) json_object_set_new(o, "value", rand_value(0));
            json_array_append_new(ops, o);
        }
        s->what = fmt("jsonpatch random %s%s%s", tk->res, *sub ? "/" : "", sub);
    }
    snprintf(s->method, sizeof s->method, "PATCH");
    set_path(s, ns, tk->res, name, sub);
    s->ctype = strdup(CT_JP);
    step_body(s, ops);
    maybe_dry_run(s);
    json_decref(ops);
    json_decref(cur);
    free(name);
}

/* Bodies that are not objects of the kind at all, as JSON or protobuf. */
static void gen_raw(world *w, step *s, const tkind *tk, const char *ns)
{
    static const char *const raws[] = {
        "",
        "[",
        "[]",
        "5",
        "null",
        "\"x\"",
        "{\"metadata\":\"x\"}",
        "{\"metadata\":[]}",
        "{\"kind\":5}",
        "{\"apiVersion\":[]}",
        "{\"metadata\":{\"name\":\"p9\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
        "\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"cpu\":\"2\"}}}]}}",
        "{\"metadata\":{\"name\":\"p9\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
        "\"x\"}]}} trailing",
        "{\"metadata\":{\"name\":\"p9\",\"labels\":{\"a\":\"\\u0000\"}},\"spec\":{\"containers\":"
        "[{\"name\":\"c\",\"image\":\"x\"}]}}",
        "{\"metadata\":{\"name\":\"p9\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
        "\"x\",\"resources\":{\"requests\":{\"cpu\":1e999}}}]}}",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        "{\"metadata\":{\"name\":\"q9\"},\"spec\":{\"hard\":{\"pods\":\"1\"},\"hard\":{}}}",
    };
    static const char *const methods[] = {"POST", "PUT", "PATCH"};
    char *name = pick_name(w, tk, ns, 80);
    const char *m = PICK(methods);
    snprintf(s->method, sizeof s->method, "%s", m);
    set_path(s, ns, tk->res, strcmp(m, "POST") ? name : NULL, NULL);
    if (chance(30)) {
        /* protobuf: the magic, then random bytes, or a cut JSON-ish prefix */
        unsigned char buf[96];
        size_t n = 4 + rn(sizeof buf - 4);
        memcpy(buf, "k8s\0", 4);
        for (size_t i = 4; i < n; i++)
            buf[i] =
                chance(30) ? (unsigned char)PICK("\x0a\x12\x1a\x22\x08\x10") : (unsigned char)rnd();
        if (chance(10)) n = rn(4);
        step_body_raw(s, (const char *)buf, n);
        s->ctype = strdup("application/vnd.kubernetes.protobuf");
        s->what = fmt("raw protobuf %s %s", m, tk->res);
    } else {
        size_t i = rn(NELEM(raws));
        step_body_raw(s, raws[i], strlen(raws[i]));
        s->ctype = strdup(
            !strcmp(m, "PATCH") ? PICK(((const char *const[]){CT_MERGE, CT_SMP, CT_JP})) : CT_JSON);
        s->what = fmt("raw #%zu %s %s", i, m, tk->res);
    }
    free(name);
}

static void gen_binding(world *w, step *s, const char *ns)
{
    static const char *const targets[] = {
        "{'target':{'kind':'Node','name':'n1'}}",
        "{'target':{'kind':'Node','name':'n2'}}",
        "{'target':{'kind':'Node','name':5}}",
        "{'target':{'kind':'Node','name':''}}",
        "{'target':'x'}",
        "{}",
        "[]",
    };
    char *name = pick_name(w, &kinds[0], ns, 92);
    size_t i = chance(80) ? rn(2) : rn(NELEM(targets));
    json_t *b = J(targets[i]);
    if (json_is_object(b)) {
        json_object_set_new(b, "apiVersion", json_string("v1"));
        json_object_set_new(b, "kind", json_string("Binding"));
        json_object_set_new(b, "metadata", json_pack("{s:s}", "name", chance(95) ? name : "zz"));
    }
    snprintf(s->method, sizeof s->method, "POST");
    set_path(s, ns, "pods", name, "binding");
    s->ctype = strdup(CT_JSON);
    step_body(s, b);
    maybe_dry_run(s);
    s->what = fmt("binding #%zu", i);
    json_decref(b);
    free(name);
}

static void gen_delete(world *w, step *s, const tkind *tk, const char *ns)
{
    static const char *const queries[] = {"gracePeriodSeconds=0", "propagationPolicy=Orphan",
                                          "propagationPolicy=Foreground", "dryRun=All",
                                          "propagationPolicy=Bogus"};
    static const char *const bodies[] = {
        "{\"gracePeriodSeconds\":0}",
        "{\"propagationPolicy\":\"Orphan\"}",
        "{\"preconditions\":{\"uid\":\"x\"}}",
        "[",
        "{\"dryRun\":[\"All\"]}",
        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\"}",
    };
    if (is_kind(tk, "resourcequotas") && chance(85)) tk = &kinds[rn(NELEM(kinds) - 1)];
    char *name = pick_name(w, tk, ns, 90);
    snprintf(s->method, sizeof s->method, "DELETE");
    set_path(s, ns, tk->res, name, NULL);
    if (chance(25)) step_query(s, PICK(queries));
    if (chance(10)) {
        const char *b = PICK(bodies);
        step_body_raw(s, b, strlen(b));
        s->ctype = strdup(CT_JSON);
    }
    s->what = fmt("delete %s", tk->res);
    free(name);
}

static void gen_deletecollection(world *w, step *s, const tkind *tk, const char *ns)
{
    (void)w;
    if (is_kind(tk, "resourcequotas")) tk = &kinds[1];
    snprintf(s->method, sizeof s->method, "DELETE");
    set_path(s, ns, tk->res, NULL, NULL);
    step_query(s, chance(80) ? "labelSelector=app=a" : "labelSelector=app=b");
    s->what = fmt("deletecollection %s", tk->res);
}

static void gen_read(world *w, step *s, const tkind *tk, const char *ns)
{
    snprintf(s->method, sizeof s->method, "GET");
    if (chance(50)) {
        char *name = pick_name(w, tk, ns, 90);
        set_path(s, ns, tk->res, name, chance(10) && !is_kind(tk, "configmaps") ? "status" : NULL);
        free(name);
    } else {
        set_path(s, ns, tk->res, NULL, NULL);
        static const char *const queries[] = {"labelSelector=app=a",
                                              "fieldSelector=spec.nodeName=n1", "limit=2",
                                              "labelSelector=app in (a,b)"};
        if (chance(50)) step_query(s, PICK(queries));
    }
    if (chance(20)) s->accept = strdup("application/json;as=Table;v=v1;g=meta.k8s.io");
    s->what = fmt("read %s", tk->res);
}

/* A namespace's quota mode flipped: the books must follow. */
static void gen_mode_flip(step *s, const char *ns)
{
    snprintf(s->method, sizeof s->method, "PATCH");
    s->path = fmt("/api/v1/namespaces/%s", ns);
    s->ctype = strdup(CT_MERGE);
    const char *body = chance(50) ? "{\"metadata\":{\"labels\":{\"" MODE_LABEL "\":\"admission\"}}}"
                                  : "{\"metadata\":{\"labels\":{\"" MODE_LABEL "\":null}}}";
    step_body_raw(s, body, strlen(body));
    s->what = fmt("namespace mode flip");
}

static void gen_step(world *w, step *s)
{
    memset(s, 0, sizeof *s);
    const char *ns = PICK(NS);
    const tkind *tk = pick_kind();
    unsigned r = (unsigned)rn(1000);
    if (r < 200)
        gen_create(w, s, tk, ns, false);
    else if (r < 240)
        gen_create(w, s, tk, ns, true);
    else if (r < 260)
        gen_raw(w, s, tk, ns);
    else if (r < 590)
        gen_update(w, s, tk, ns);
    else if (r < 640)
        gen_binding(w, s, ns);
    else if (r < 690)
        gen_rand_jsonpatch(w, s, tk, ns);
    else if (r < 720)
        gen_smp_special(w, s, ns);
    else if (r < 860)
        gen_delete(w, s, tk, ns);
    else if (r < 990)
        gen_read(w, s, tk, ns);
    else if (r < 998)
        gen_deletecollection(w, s, tk, ns);
    else
        gen_mode_flip(s, ns);
}

/* ---- shrinking a failing sequence ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run the set-up and seq on a fresh store; whether the last step breaks `inv`. */
static bool replay(const step *const *seq, size_t n, int inv, bool print)
{
    world w;
    long index = g_cur_index;
    g_cur_index = -1;
    world_open(&w);
    bool hit = false;
    for (size_t i = 0; i < n; i++) {
        outcome o;
        g_cur_step = seq[i];
        run_step(&w, seq[i], &o);
        if (print) {
            fprintf(stderr, "      %zu. ", i + 1);
            print_step(stderr, seq[i]);
            fprintf(stderr, "\n         -> %d %.200s\n", o.code, o.msg);
        }
        if (i + 1 == n)
            for (size_t j = 0; j < w.nv; j++) {
                if (w.v[j].inv == inv) hit = true;
                if (print) fprintf(stderr, "         %s: %s\n", inv_names[w.v[j].inv], w.v[j].msg);
            }
    }
    g_cur_step = NULL;
    world_close(&w);
    g_cur_index = index;
    return hit;
}

/* A write that answered 2xx and was not a dry run: only those change state
 * (invariant (3) checks that the others change nothing). */
static bool effective(const step *a)
{
    return strcmp(a->method, "GET") && a->code >= 200 && a->code < 300 &&
           !(a->query && strstr(a->query, "dryRun=All"));
}

static bool same_ns_step(const step *a, const step *last)
{
    target x, y;
    parse_target(a->path, &x);
    parse_target(last->path, &y);
    return !strcmp(x.ns, y.ns);
}

static bool same_object_or_quota(const step *a, const step *last)
{
    target x, y;
    parse_target(a->path, &x);
    parse_target(last->path, &y);
    if (strcmp(x.ns, y.ns)) return false;
    if (!strcmp(x.res, "resourcequotas")) return true;
    if (strcmp(x.res, y.res)) return false;
    return !x.name[0] || !y.name[0] || !strcmp(x.name, y.name) ||
           strstr(a->body ? a->body : "", y.name) != NULL;
}

static bool effective_same_object(const step *a, const step *last)
{
    return effective(a) && same_object_or_quota(a, last);
}

static bool effective_same_ns(const step *a, const step *last)
{
    return effective(a) && same_ns_step(a, last);
}

static bool effective_any(const step *a, const step *last)
{
    (void)last;
    return effective(a);
}

/* Shrinks log[0..last] to a short sequence whose last step still breaks
 * `inv`, within cfg_min_seconds; prints it. */
static void shrink(const step *log, size_t last, int inv)
{
    size_t n = last + 1;
    const step **seq = malloc(n * sizeof *seq), **cand = malloc(n * sizeof *cand);
    for (size_t i = 0; i < n; i++)
        seq[i] = &log[i];
    double deadline = now_s() + cfg_min_seconds;
    size_t replays = 0;
    /* Relevance filters first: the same object (and quotas), the same namespace. */
    bool (*filters[])(const step *, const step *) = {NULL, effective_same_object, effective_same_ns,
                                                     effective_any, same_ns_step};
    for (size_t f = 0; f < NELEM(filters); f++) {
        size_t k = 0;
        for (size_t i = 0; i + 1 < n; i++)
            if (filters[f] && filters[f](seq[i], seq[n - 1])) cand[k++] = seq[i];
        cand[k++] = seq[n - 1];
        if (k >= n) continue;
        replays++;
        if (replay(cand, k, inv, false)) {
            memcpy(seq, cand, k * sizeof *seq);
            n = k;
            break;
        }
    }
    /* Then remove chunks of the prefix while it still fails. */
    size_t chunk = n > 2 ? (n - 1) / 2 : 1;
    while (n > 1 && now_s() < deadline) {
        bool removed = false;
        for (size_t start = 0; start < n - 1 && now_s() < deadline;) {
            size_t len = chunk < n - 1 - start ? chunk : n - 1 - start, k = 0;
            for (size_t i = 0; i < n; i++)
                if (i < start || i >= start + len) cand[k++] = seq[i];
            replays++;
            if (replay(cand, k, inv, false)) {
                memcpy(seq, cand, k * sizeof *seq);
                n = k;
                removed = true;
            } else {
                start += len;
            }
        }
        if (!removed) {
            if (chunk == 1) break;
            chunk /= 2;
        } else if (chunk > n - 1 && n > 1) {
            chunk = n - 1;
        }
    }
    bool minimal = now_s() < deadline;
    fprintf(stderr, "    shrunk to %zu step(s) after the set-up (%zu replays%s):\n", n, replays,
            minimal ? ", 1-minimal" : ", time budget spent");
    replay(seq, n, inv, true);
    free(seq);
    free(cand);
}

/* ---- the run ---- */

typedef struct sig {
    char *key;
    unsigned long count;
} sig;

static sig *sigs;
static size_t nsigs;

static bool new_signature(const step *s, int inv)
{
    target t;
    parse_target(s->path, &t);
    char *key = fmt("%d|%s|%s|%s/%s", inv, s->what, s->method, t.res, t.sub);
    for (size_t i = 0; i < nsigs; i++)
        if (!strcmp(sigs[i].key, key)) {
            sigs[i].count++;
            free(key);
            return false;
        }
    sigs = realloc(sigs, (nsigs + 1) * sizeof *sigs);
    sigs[nsigs++] = (sig){key, 1};
    return true;
}

/* ---- known holes ----
 * The holes open on the day this test was written. Each is reproduced by a
 * hand-reduced case of test_known_holes (below). While
 * BOOKS_TOLERATE_KNOWN_HOLES is 1, a random step whose violations all fall in
 * one of them is counted and reported, the store is started again (the books
 * may be off from there on) and the run goes on; any other violation fails.
 * ALLOT_BOOKS_STRICT=1 tolerates nothing. Set it to 0 once they are fixed. */
#ifndef BOOKS_TOLERATE_KNOWN_HOLES
#define BOOKS_TOLERATE_KNOWN_HOLES 0
#endif

enum {
    HOLE_NONE,
    HOLE_STATUS_USAGE,
    HOLE_RESIZE_QOS,
    HOLE_RESIZE_DEFAULTS,
    HOLE_QOS_STATUS,
    HOLE_QOS_DROPPED,
    HOLE_RESIZE_HUGE,
    HOLE_MODE_FLIP,
    NHOLES
};

static const char *const hole_names[NHOLES] = {
    "",
    "H1 pods/status and persistentvolumeclaims/status writes raise usage without a quota check "
    "(phase back from Succeeded/Failed, status.containerStatuses[].allocatedResources/resources, "
    "status.allocatedResources.storage)",
    "H3 pods/resize may change the pod's QoS class",
    "H4 pods/resize stores limits without the requests defaulting would add",
    "H5 a main-resource pod update re-derives status.qosClass inside the stored pod's own "
    "status (the update shares it), so admission sees no scope move and the books drift; "
    "reachable whenever the stored qosClass is not the spec's (after H3)",
    "H6 a pods/status write that leaves out status.qosClass (a PUT, a $patch: replace, a JSON "
    "patch remove) stores the pod without it; upstream keeps the stored one",
    "H7 pods/resize to a quantity beyond 72 digits (limits.cpu: 1e400) under a quota answers "
    "500 out of memory",
    "H8 relabelling a namespace's quota.allot.dev/mode (deferred <-> admission) does not "
    "recount its quotas: unbound pods' cpu/memory start or stop counting, the ledger does not "
    "move",
};

static bool cfg_strict;

static int classify(const world *w, const step *s, const viol *v)
{
    target t;
    parse_target(s->path, &t);
    bool pods = !strcmp(t.res, "pods");
    if (v->inv == INV_PODUPDATE && strstr(v->msg, "status.qosClass changed"))
        return strstr(v->msg, "-> (absent)") ? HOLE_QOS_DROPPED : HOLE_QOS_STATUS;
    if ((v->inv == INV_BOOKS || v->inv == INV_HARD) && w->stale_qos) return HOLE_QOS_STATUS;
    if (v->inv == INV_HARD && !strcmp(t.sub, "status") &&
        (pods || !strcmp(t.res, "persistentvolumeclaims")))
        return HOLE_STATUS_USAGE;
    if (v->inv == INV_PODUPDATE && pods && !strcmp(t.sub, "resize") &&
        strstr(v->msg, "pods/resize changed the QoS class"))
        return HOLE_RESIZE_QOS;
    if (v->inv == INV_PODRES && pods && !strcmp(t.sub, "resize") && strstr(v->msg, "not defaulted"))
        return HOLE_RESIZE_DEFAULTS;
    if (v->inv == INV_5XX && pods && !strcmp(t.sub, "resize") && strstr(v->msg, "out of memory"))
        return HOLE_RESIZE_HUGE;
    if ((v->inv == INV_BOOKS || v->inv == INV_HARD) && t.ns[0] && !t.res[0] &&
        strcmp(s->method, "GET"))
        return HOLE_MODE_FLIP; /* a write of the namespace itself */
    return HOLE_NONE;
}

/* The hole all of the step's violations fall in, or HOLE_NONE. */
static int known_hole(const world *w, const step *s)
{
    if (!BOOKS_TOLERATE_KNOWN_HOLES || cfg_strict || !w->nv) return HOLE_NONE;
    int h = HOLE_NONE;
    for (size_t i = 0; i < w->nv; i++) {
        int c = classify(w, s, &w->v[i]);
        if (c == HOLE_NONE) return HOLE_NONE;
        if (h == HOLE_NONE) h = c;
    }
    return h;
}

/* ---- hand-reduced sequences ----
 * One request per line: "METHOD[:merge|:smp|:json] PATH[?QUERY] [BODY]", the
 * body in testutil.h's single-quoted JSON; POST and PUT send JSON. */
static void step_from_line(step *s, const char *line)
{
    memset(s, 0, sizeof *s);
    char method[16], path[512];
    int used = 0;
    if (sscanf(line, "%15s %511s %n", method, path, &used) < 2) fail_msg("bad step: %s", line);
    const char *body = line + used, *ct = CT_JSON;
    char *colon = strchr(method, ':');
    if (colon) {
        *colon = '\0';
        ct = !strcmp(colon + 1, "merge") ? CT_MERGE : !strcmp(colon + 1, "smp") ? CT_SMP : CT_JP;
    }
    snprintf(s->method, sizeof s->method, "%s", method);
    char *q = strchr(path, '?');
    if (q) {
        *q = '\0';
        s->query = strdup(q + 1);
    }
    s->path = strdup(path);
    if (*body) {
        json_t *b = J(body);
        step_body(s, b);
        json_decref(b);
        s->ctype = strdup(ct);
    }
    s->what = strdup("case");
}

/* Run the lines on a fresh world; print every step and violation. Returns
 * how many steps broke an invariant; *all_known: each of those steps broke
 * it only in ways of known holes. */
static int run_lines(const char *name, const char *const *lines, size_t n, bool *all_known)
{
    world w;
    world_open(&w);
    int bad = 0;
    *all_known = true;
    g_cur_index = -1;
    fprintf(stderr, "  case: %s\n", name);
    for (size_t i = 0; i < n && lines[i]; i++) {
        step s;
        outcome o;
        step_from_line(&s, lines[i]);
        g_cur_step = &s;
        run_step(&w, &s, &o);
        fprintf(stderr, "    %zu. ", i + 1);
        print_step(stderr, &s);
        fprintf(stderr, "\n       -> %d %.160s\n", o.code, o.msg);
        for (size_t j = 0; j < w.nv; j++)
            fprintf(stderr, "       %s: %s\n", inv_names[w.v[j].inv], w.v[j].msg);
        if (w.nv) {
            bad++;
            for (size_t j = 0; j < w.nv; j++)
                if (classify(&w, &s, &w.v[j]) == HOLE_NONE) *all_known = false;
        }
        g_cur_step = NULL;
        step_free(&s);
    }
    world_close(&w);
    return bad;
}

/* Reproduce ALLOT_BOOKS_REPLAY (a file of such lines, '#' comments). */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("ALLOT_BOOKS_REPLAY: cannot open %s", path);
    char *lines[256], buf[65536];
    size_t n = 0;
    while (n < NELEM(lines) && fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\r\n")] = '\0';
        if (buf[0] && buf[0] != '#') lines[n++] = strdup(buf);
    }
    fclose(f);
    bool all_known;
    int bad = run_lines(path, (const char *const *)lines, n, &all_known);
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    return bad;
}

#define NS_POD(ns, name, res)                                                                      \
    "POST /api/v1/namespaces/" ns "/pods {'metadata':{'name':'" name "'},'spec':{'containers':[{"  \
    "'name':'c','image':'x','resources':" res "}]}}"
#define GUARANTEED_SMALL "{'limits':{'cpu':'100m','memory':'64Mi'}}"

typedef struct bcase {
    const char *name;
    int hole; /* the known hole it shows, or HOLE_NONE: a regression case, must stay clean */
    const char *steps[10];
} bcase;

static const bcase cases[] = {
    /* The known holes. */
    {"a terminal pod made Running again by pods/status is charged without a check",
     HOLE_STATUS_USAGE,
     {NS_POD("nb", "p0", GUARANTEED_SMALL), NS_POD("nb", "p1", GUARANTEED_SMALL),
      "PATCH:merge /api/v1/namespaces/nb/pods/p0/status {'status':{'phase':'Succeeded'}}",
      NS_POD("nb", "p2", GUARANTEED_SMALL),
      "PATCH:merge /api/v1/namespaces/nb/pods/p0/status {'status':{'phase':'Running'}}"}},
    {"pods/status containerStatuses[].allocatedResources raise requests.cpu without a check",
     HOLE_STATUS_USAGE,
     {NS_POD("nb", "p0", GUARANTEED_SMALL),
      "PATCH:merge /api/v1/namespaces/nb/pods/p0/status {'status':{'containerStatuses':[{'name':"
      "'c','allocatedResources':{'cpu':'100'},'resources':{'requests':{'cpu':'100'}}}]}}"}},
    {"persistentvolumeclaims/status allocatedResources raise requests.storage without a check",
     HOLE_STATUS_USAGE,
     {"POST /api/v1/namespaces/nb/persistentvolumeclaims {'metadata':{'name':'v0'},'spec':{"
      "'accessModes':['ReadWriteOnce'],'resources':{'requests':{'storage':'1Gi'}}}}",
      "PATCH:merge /api/v1/namespaces/nb/persistentvolumeclaims/v0/status {'status':{"
      "'allocatedResources':{'storage':'100Gi'}}}"}},
    {"a request above the LimitRange's default limit is stored (upstream validates after "
     "LimitRanger: 422)",
     HOLE_NONE, /* closed by 0be5a2b */
     {NS_POD("nc", "p0", "{'requests':{'cpu':'1'}}")}},
    {"pods/resize turns a BestEffort pod Burstable (upstream: QoS class may not change)",
     HOLE_RESIZE_QOS,
     {NS_POD("na", "p0", "{}"),
      "PATCH:smp /api/v1/namespaces/na/pods/p0/resize {'spec':{'containers':[{'name':'c',"
      "'resources':{'requests':{'cpu':'100m'}}}]}}"}},
    {"pods/resize stores a limit without its defaulted request",
     HOLE_RESIZE_DEFAULTS,
     {"DELETE /api/v1/namespaces/nb/resourcequotas/cpu",
      "POST /api/v1/namespaces/nb/pods {'metadata':{'name':'p0'},'spec':{'containers':[{'name':"
      "'c','image':'x'},{'name':'d','image':'x','resources':{'requests':{'cpu':'100m'}}}]}}",
      "PATCH:smp /api/v1/namespaces/nb/pods/p0/resize {'spec':{'containers':[{'name':'c',"
      "'resources':{'limits':{'cpu':'1'}}}]}}",
      "PATCH:smp /api/v1/namespaces/nb/pods/p0/resize {'spec':{'containers':[{'name':'d',"
      "'resources':{'requests':null,'limits':{'cpu':'1'}}}]}}"}},
    {"pods/resize to limits.cpu 1e400 under a quota",
     HOLE_RESIZE_HUGE,
     {"DELETE /api/v1/namespaces/nc/resourcequotas/all",
      "POST /api/v1/namespaces/nc/resourcequotas {'metadata':{'name':'q'},'spec':{'hard':{"
      "'limits.cpu':'1'}}}",
      /* Burstable before and after: the resize reaches quota (a QoS change
       * would be refused before it) */
      NS_POD(
          "nc", "p0",
          "{'requests':{'cpu':'100m','memory':'64Mi'},'limits':{'cpu':'250m','memory':'512Mi'}}"),
      "PATCH:merge /api/v1/namespaces/nc/pods/p0/resize {'spec':{'containers':[{'name':'c',"
      "'resources':{'limits':{'cpu':'1e400','memory':'512Mi'},'requests':{'cpu':'100m',"
      "'memory':'64Mi'}}}]}}"}},
    {"a namespace switched from deferred to admission mode keeps its old books",
     HOLE_MODE_FLIP,
     {NS_POD("nd", "p0", "{'limits':{'cpu':'2','memory':'1Gi'}}"),
      "PATCH:merge /api/v1/namespaces/nd {'metadata':{'labels':{'" MODE_LABEL "':'admission'}}}"}},
    {"a namespace switched from admission to deferred mode keeps its old books",
     HOLE_MODE_FLIP,
     {NS_POD("na", "p0", "{'limits':{'cpu':'1','memory':'64Mi'}}"),
      "PATCH:merge /api/v1/namespaces/na {'metadata':{'labels':{'" MODE_LABEL "':null}}}"}},
    {"pods/status with $patch: replace drops status.qosClass",
     HOLE_QOS_DROPPED,
     {NS_POD("na", "p0", "{}"),
      "PATCH:smp /api/v1/namespaces/na/pods/p0/status {'status':{'$patch':'replace','phase':"
      "'Running'}}"}},
    {"status.qosClass rewritten by pods/status, then a label change: the books drift",
     HOLE_NONE, /* status.qosClass is immutable now */
     {NS_POD("na", "p0", "{}"),
      "PATCH:merge /api/v1/namespaces/na/pods/p0/status {'status':{'qosClass':'Burstable'}}",
      "PATCH:merge /api/v1/namespaces/na/pods/p0 {'metadata':{'labels':{'a':'b'}}}"}},
    {"pods/resize to Burstable, then a main-resource update: the books drift",
     HOLE_QOS_STATUS,
     {NS_POD("na", "p0", "{}"),
      "PATCH:smp /api/v1/namespaces/na/pods/p0/resize {'spec':{'containers':[{'name':'c',"
      "'resources':{'requests':{'cpu':'100'}}}]}}",
      "PATCH:merge /api/v1/namespaces/na/pods/p0 {'metadata':{'labels':{'a':'b'}}}"}},
    /* The holes of the brief that are closed: they must stay closed. */
    {"main-resource PATCH of a container's cpu from 1 to 100",
     HOLE_NONE,
     {NS_POD("na", "p0", "{'limits':{'cpu':'1','memory':'64Mi'}}"),
      "PATCH:smp /api/v1/namespaces/na/pods/p0 {'spec':{'containers':[{'name':'c','resources':{"
      "'requests':{'cpu':'100'},'limits':{'cpu':'100'}}}]}}",
      "PATCH:json /api/v1/namespaces/na/pods/p0 [{'op':'replace','path':'/spec/containers/0/"
      "resources/requests/cpu','value':'100'}]",
      "PATCH:merge /api/v1/namespaces/na/pods/p0 {'spec':{'containers':[{'name':'c','image':'x',"
      "'resources':{'requests':{'cpu':'100'}}}]}}"}},
    {"quantities that are not quantities",
     HOLE_NONE,
     {NS_POD("na", "p0", "{'requests':{'cpu':'x'}}"),
      NS_POD("na", "p1", "{'requests':{'cpu':'abc'}}"),
      NS_POD("na", "p2", "{'requests':{'cpu':'-1'}}"),
      NS_POD("na", "p3", "{'requests':{'cpu':'NaN'}}"),
      NS_POD("na", "p4", "{'requests':{'cpu':''}}"),
      NS_POD("na", "p5", "{'requests':{'cpu':true}}"),
      NS_POD("na", "p6", "{'requests':{'nvidia.com/gpu':'0.5'},'limits':{'nvidia.com/gpu':'0.5'}}"),
      NS_POD("na", "p7", "{'requests':{'cpu':'2'},'limits':{'cpu':'1'}}")}},
    {"create-then-patch repeatedly under pods: 2",
     HOLE_NONE,
     {NS_POD("nb", "p0", GUARANTEED_SMALL), NS_POD("nb", "p1", GUARANTEED_SMALL),
      NS_POD("nb", "p2", GUARANTEED_SMALL),
      "PATCH:merge /api/v1/namespaces/nb/pods/p0 {'metadata':{'labels':{'a':'b'}}}",
      "PATCH:smp /api/v1/namespaces/nb/pods/p1 {'metadata':{'labels':{'a':'c'}}}",
      NS_POD("nb", "p2", GUARANTEED_SMALL)}},
    {"containers, initContainers and overhead added by main-resource patches",
     HOLE_NONE,
     {NS_POD("na", "p0", "{}"),
      "PATCH:json /api/v1/namespaces/na/pods/p0 [{'op':'add','path':'/spec/containers/-','value':"
      "{'name':'d','image':'x','resources':{'requests':{'cpu':'3'}}}}]",
      "PATCH:json /api/v1/namespaces/na/pods/p0 [{'op':'copy','from':'/spec/containers/0','path':"
      "'/spec/containers/-'}]",
      "PATCH:merge /api/v1/namespaces/na/pods/p0 {'spec':{'initContainers':[{'name':'i','image':"
      "'x','resources':{'requests':{'cpu':'5'}}}]}}",
      "PATCH:merge /api/v1/namespaces/na/pods/p0 {'spec':{'overhead':{'cpu':'10'}}}",
      "PATCH:smp /api/v1/namespaces/na/pods/p0 {'spec':{'containers':[{'name':'c9','image':'x'}]}}"}},
    {"nodeName of a bound pod changed",
     HOLE_NONE,
     {NS_POD("na", "p0", "{}"),
      "POST /api/v1/namespaces/na/pods/p0/binding {'target':{'kind':'Node','name':'n1'}}",
      "PATCH:merge /api/v1/namespaces/na/pods/p0 {'spec':{'nodeName':'n2'}}",
      "POST /api/v1/namespaces/na/pods/p0/binding {'target':{'kind':'Node','name':'n2'}}"}},
    {"strategic $patch: replace dropping requests",
     HOLE_NONE,
     {NS_POD("na", "p0", "{'requests':{'cpu':'100m'},'limits':{'cpu':'1','memory':'64Mi'}}"),
      "PATCH:smp /api/v1/namespaces/na/pods/p0 {'spec':{'containers':[{'name':'c','resources':{"
      "'$patch':'replace'}}]}}",
      "PATCH:smp /api/v1/namespaces/na/pods/p0 {'spec':{'containers':[{'name':'c','image':'x'},{"
      "'$patch':'replace'}]}}"}},
    {"wrong JSON types",
     HOLE_NONE,
     {"POST /api/v1/namespaces/na/configmaps {'metadata':{'name':'c0','labels':['a']}}",
      "POST /api/v1/namespaces/na/configmaps {'metadata':{'name':'c1','labels':{'a':1}}}",
      "POST /api/v1/namespaces/na/pods {'metadata':{'name':'p0'},'spec':{'nodeName':5,"
      "'containers':[{'name':'c','image':'x'}]}}",
      "POST /api/v1/namespaces/na/resourcequotas {'metadata':{'name':'q0'},'spec':'x'}",
      "POST /api/v1/namespaces/na/resourcequotas {'metadata':{'name':'q1'},'spec':{'hard':[]}}",
      "POST /api/v1/namespaces/na/resourcequotas {'metadata':{'name':'q2'},'spec':{'hard':'x'}}",
      "PATCH:merge /api/v1/namespaces/na/resourcequotas/count {'spec':{'hard':['pods']}}"}},
    {"JSON patch replace /kind to Secret",
     HOLE_NONE,
     {NS_POD("na", "p0", "{}"),
      "PATCH:json /api/v1/namespaces/na/pods/p0 [{'op':'replace','path':'/kind','value':'Secret'}]",
      "PATCH:json /api/v1/namespaces/na/configmaps/x [{'op':'replace','path':'/kind','value':"
      "'Secret'}]"}},
    {"status.used written by a client, through the main resource and resourcequotas/status",
     HOLE_NONE,
     {NS_POD("nb", "p0", GUARANTEED_SMALL),
      "PUT /api/v1/namespaces/nb/resourcequotas/pods {'metadata':{'name':'pods'},'spec':{'hard':{"
      "'pods':'2','count/configmaps':'2','services':'1','persistentvolumeclaims':'1',"
      "'requests.storage':'2Gi'}},'status':{'used':{'pods':'0'}}}",
      "PUT /api/v1/namespaces/nb/resourcequotas/pods/status {'metadata':{'name':'pods'},'spec':{"
      "'hard':{'pods':'2'}},'status':{'hard':{'pods':'100'},'used':{'pods':'0'}}}",
      "PATCH:merge /api/v1/namespaces/nb/resourcequotas/pods/status {'status':{'used':{'pods':"
      "'0'},'hard':{'pods':'9'}}}",
      NS_POD("nb", "p1", GUARANTEED_SMALL), NS_POD("nb", "p2", GUARANTEED_SMALL)}},
};

/* Every case on a fresh store: the regression cases must be clean; the
 * known-hole cases must be clean too unless BOOKS_TOLERATE_KNOWN_HOLES. */
static void test_known_holes(void **state)
{
    (void)state;
    const char *rf = getenv("ALLOT_BOOKS_REPLAY");
    if (rf && *rf) {
        if (replay_file(rf)) fail_msg("%s breaks the books", rf);
        return;
    }
    size_t failed = 0, open = 0;
    for (size_t i = 0; i < NELEM(cases); i++) {
        bool all_known;
        int bad = run_lines(cases[i].name, cases[i].steps, NELEM(cases[i].steps), &all_known);
        if (!bad) {
            if (cases[i].hole != HOLE_NONE)
                fprintf(stderr, "  => CLOSED: %s\n", hole_names[cases[i].hole]);
            continue;
        }
        bool tolerated =
            BOOKS_TOLERATE_KNOWN_HOLES && !cfg_strict && cases[i].hole != HOLE_NONE && all_known;
        fprintf(stderr, "  => %s: %s\n", tolerated ? "still open (tolerated)" : "FAILS",
                cases[i].hole != HOLE_NONE ? hole_names[cases[i].hole] : cases[i].name);
        if (tolerated)
            open++;
        else
            failed++;
    }
    fprintf(stderr, "test_known_holes: %zu case(s), %zu failing, %zu known hole case(s) open\n",
            NELEM(cases), failed, open);
    if (failed) fail_msg("%zu case(s) break the books", failed);
}

static void report(world *w, const step *s, long index, const outcome *o)
{
    fprintf(stderr, "\n=== BOOKS VIOLATION at step %ld (seed %llu)\n    ", index,
            (unsigned long long)cfg_seed);
    print_step(stderr, s);
    fprintf(stderr, "\n    -> %d %.300s\n", o->code, o->msg);
    for (size_t i = 0; i < w->nv; i++)
        fprintf(stderr, "    %s: %s\n", inv_names[w->v[i].inv], w->v[i].msg);
    fprintf(stderr, "    reproduce: ALLOT_BOOKS_SEED=%llu ALLOT_BOOKS_STEPS=%ld%s\n",
            (unsigned long long)cfg_seed, index + 1,
            cfg_keep_going ? " ALLOT_BOOKS_KEEP_GOING=1" : "");
}

static void test_books(void **state)
{
    (void)state;
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(print_current);
    else {
        signal(SIGSEGV, on_fatal_signal);
        signal(SIGBUS, on_fatal_signal);
        signal(SIGFPE, on_fatal_signal);
    }
    signal(SIGABRT, on_fatal_signal);
    rng_state = cfg_seed;
    fprintf(stderr, "test_books: seed %llu, %ld steps\n", (unsigned long long)cfg_seed, cfg_steps);
    world w;
    world_open(&w);
    double t0 = now_s();
    unsigned long failures = 0, counts[NINV] = {0}, holes_seen[NHOLES] = {0}, writes_ok = 0;
    static unsigned long codes[600];
    memset(codes, 0, sizeof codes);
    long ran = 0;
    for (long i = 0; i < cfg_steps; i++) {
        ran++;
        if (cfg_reset_every > 0 && (long)w.nlog >= cfg_reset_every) {
            world_close(&w);
            world_open(&w);
        }
        if (w.nlog == w.logcap) {
            w.logcap = w.logcap ? 2 * w.logcap : 1024;
            w.log = realloc(w.log, w.logcap * sizeof *w.log);
        }
        step *s = &w.log[w.nlog++];
        gen_step(&w, s);
        g_cur_step = s;
        g_cur_index = i;
        outcome o;
        run_step(&w, s, &o);
        s->code = o.code;
        codes[o.code >= 100 && o.code < 600 ? o.code : 0]++;
        if (strcmp(s->method, "GET") && o.code >= 200 && o.code < 300) writes_ok++;
        if (cfg_verbose) {
            fprintf(stderr, "%ld. ", i);
            print_step(stderr, s);
            fprintf(stderr, " -> %d %.120s\n", o.code, o.msg);
        }
        if (!w.nv) continue;
        int hole = known_hole(&w, s);
        if (hole != HOLE_NONE) {
            if (!holes_seen[hole]++) {
                fprintf(stderr, "\n=== known hole %s\n    at step %ld: ", hole_names[hole], i);
                print_step(stderr, s);
                fprintf(stderr, "\n    -> %d\n", o.code);
                for (size_t j = 0; j < w.nv; j++)
                    fprintf(stderr, "    %s: %s\n", inv_names[w.v[j].inv], w.v[j].msg);
            }
            g_cur_step = NULL;
            world_close(&w);
            world_open(&w);
            continue;
        }
        failures++;
        bool fresh = false;
        int inv = w.v[0].inv;
        for (size_t j = 0; j < w.nv; j++) {
            counts[w.v[j].inv]++;
            if (new_signature(s, w.v[j].inv) && !fresh) {
                fresh = true;
                inv = w.v[j].inv;
            }
        }
        if (!cfg_keep_going || fresh) {
            report(&w, s, i, &o);
            if (cfg_min_seconds > 0) {
                /* the log moves to shrink's replays; the world is done */
                step *log = w.log;
                size_t nlog = w.nlog;
                w.log = NULL;
                w.nlog = w.logcap = 0;
                g_cur_step = NULL;
                world_close(&w);
                shrink(log, nlog - 1, inv);
                for (size_t j = 0; j < nlog; j++)
                    step_free(&log[j]);
                free(log);
                if (!cfg_keep_going) break;
                world_open(&w);
                continue;
            }
            if (!cfg_keep_going) break;
        }
        /* State may now be broken in ways every later step would repeat: start again. */
        g_cur_step = NULL;
        world_close(&w);
        world_open(&w);
    }
    double dt = now_s() - t0;
    g_cur_step = NULL;
    if (w.st) world_close(&w);
    fprintf(stderr,
            "test_books: %ld step(s) in %.1f s (%.0f steps/s, checks and shrinking included)\n",
            ran, dt, dt > 0 ? ran / dt : 0);
    if (cfg_keep_going && nsigs) {
        fprintf(stderr, "test_books: %lu violating step(s), %zu distinct signature(s):\n", failures,
                nsigs);
        for (size_t i = 0; i < nsigs; i++)
            fprintf(stderr, "  %6lu  %s\n", sigs[i].count, sigs[i].key);
        for (int i = 1; i < NINV; i++)
            if (counts[i]) fprintf(stderr, "  %s: %lu\n", inv_names[i], counts[i]);
    }
    fprintf(stderr, "test_books: %lu write(s) accepted; answers:", writes_ok);
    for (int c = 0; c < 600; c++)
        if (codes[c]) fprintf(stderr, " %d:%lu", c, codes[c]);
    fprintf(stderr, "\n");
    for (int h = 1; h < NHOLES; h++)
        if (holes_seen[h])
            fprintf(stderr, "test_books: known hole hit %lu time(s) (tolerated): %s\n",
                    holes_seen[h], hole_names[h]);
    for (size_t i = 0; i < nsigs; i++)
        free(sigs[i].key);
    free(sigs);
    sigs = NULL;
    nsigs = 0;
    if (failures) fail_msg("the quota books were broken (%lu step(s)); see above", failures);
}

int main(void)
{
    const char *v;
    if ((v = getenv("ALLOT_BOOKS_STEPS")) && *v) cfg_steps = atol(v);
    if ((v = getenv("ALLOT_BOOKS_SEED")) && *v) cfg_seed = strtoull(v, NULL, 10);
    if ((v = getenv("ALLOT_BOOKS_MINIMIZE_S")) && *v) cfg_min_seconds = atof(v);
    if ((v = getenv("ALLOT_BOOKS_RESET_EVERY")) && *v) cfg_reset_every = atol(v);
    cfg_keep_going = (v = getenv("ALLOT_BOOKS_KEEP_GOING")) && !strcmp(v, "1");
    cfg_verbose = (v = getenv("ALLOT_BOOKS_VERBOSE")) && !strcmp(v, "1");
    cfg_strict = (v = getenv("ALLOT_BOOKS_STRICT")) && !strcmp(v, "1");
    char err[256];
    if (features_parse("DeferredResourceQuota=true", err, sizeof err) != 0) return 1;
    if (admission_register_defaults() != 0) return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_known_holes),
                                       cmocka_unit_test(test_books)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    quota_admission_cleanup();
    return rc;
}
