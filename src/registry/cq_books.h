/* cq_books.h - a CustomQuota's or GlobalCustomQuota's books: its compiled
 * spec, its usage and the objects it counts (its claims).
 *
 * The books are a function of the stored objects: loading them is Capsule's
 * rebuild (a full recount of every object the quota targets, §2.3), and
 * every write admitted afterwards changes them by exactly what it changes
 * (cq_admission.c), in the write's transaction. They live on the ledger
 * (registry/ledger.h) as an in-place kind, like a pool's: an aborted
 * transaction drops them and the next user recounts. The quota's status
 * (usage, claims, targets, namespaces, Ready) is derived from them and
 * written behind, at most a second late and before any client reads
 * quotas.
 *
 * A quota object written by a client (a new generation: spec changed) is a
 * new stored version, so its books are loaded again: usage and claims are
 * rebuilt whenever the quota is created or changed.
 */
#ifndef ALLOT_REGISTRY_CQ_BOOKS_H
#define ALLOT_REGISTRY_CQ_BOOKS_H

#include "api/custom_quota_kinds.h"
#include "api/kinds.h"
#include "api/status.h"
#include "core/cquota.h"
#include "core/idxmap.h"
#include "core/strmap.h"
#include "registry/ledger.h"
#include "store/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#define CQ_PREFIX "customquotas." CQ_GROUP "/"
#define GCQ_PREFIX "globalcustomquotas." CQ_GROUP "//"

/* An object as claims name it: made once per write (or per object in a
 * recount) and shared by every quota's claim on it. Reference-counted
 * (atomically: books are freed on whichever thread drops them). */
typedef struct cq_obj {
    _Atomic unsigned refs;
    const char *uid, *group, *version, *kind, *ns, *name; /* (after the struct) */
    unsigned long uid_hash;                               /* strmap_hash(uid) */
    /* its status.claims entry up to the usage, `{"group":...,"uid":"..."`,
     * rendered by the first status write that lists it (atomically: NULL
     * until then) */
    _Atomic(char *) json;
} cq_obj;

/* One object a quota counts: 48 bytes (there is one per pod per quota that
 * counts it), the amounts as qty_small, or in `big` when one does not fit. */
typedef struct cq_claim {
    cq_obj *obj;
    qty_small usage; /* its claim: the per-object fold, clamped (core/cquota.h) */
    qty_small net;   /* its signed contribution to the total */
    qty *big;        /* usage then net, when either is not small; else NULL */
} cq_claim;

static inline qty cq_claim_usage(const cq_claim *c)
{
    return c->big ? c->big[0] : qty_from_small(&c->usage);
}

static inline qty cq_claim_net(const cq_claim *c)
{
    return c->big ? c->big[1] : qty_from_small(&c->net);
}

typedef struct cq_book {
    /* first, together: what a write reads of every quota of its namespace */
    bool global;
    size_t nkinds;
    const api_kind **kinds;     /* the kinds its sources name, each once (the served ones) */
    const api_kind *kind_in[2]; /* (kinds, when there are at most two) */
    cq_quota *q;                /* NULL when the spec does not compile (error says why) */
    idxmap claims;              /* uid -> index in claimv */
    /* the claims, unordered (no allocation per claim: a pod counted by a
     * hundred quotas is a hundred claims) */
    cq_claim *claimv;
    size_t nclaims, claimcap;
    qty sum;       /* the claims' nets */
    qty used;      /* max(0, sum) */
    json_t *quota; /* the stored version loaded (metadata, spec) */
    const char *name, *ns;
    char *error; /* the Ready=False message (the quota cannot count), or NULL */
    /* the objects it cannot fully evaluate: uid -> cq_problem; NULL until
     * the first (one lookup per write when there are none) */
    strmap *problems;
    strmap *selected;   /* global with namespaceSelectors: the namespaces; else NULL (all) */
    json_t *namespaces; /* status.namespaces (global) */
    /* caches */
    bool verified;
    json_t *last_status;
} cq_book;

/* An object whose values a quota cannot all read, with its first problem
 * (core/cquota.h's text): counted as cq_object_usage counts it, and named in
 * the quota's Ready condition until it is fixed or gone. */
#define CQ_PROBLEM_MAX 600 /* bytes of a problem's text kept (the rest is cut) */
/* The length of problem text msg as the books keep it: at most
 * CQ_PROBLEM_MAX bytes, cut before a character (every object of a quota may
 * have one). */
static inline size_t cq_problem_len(const char *msg)
{
    size_t n = strlen(msg);
    if (n > CQ_PROBLEM_MAX) {
        n = CQ_PROBLEM_MAX;
        while (n && ((unsigned char)msg[n] & 0xC0) == 0x80)
            n--;
    }
    return n;
}
typedef struct cq_problem {
    cq_obj *obj; /* a reference; its uid keys books.problems */
    char msg[];
} cq_problem;

/* The books of stored quota version o (either kind). NULL with e set. */
ledger_entry *cq_book_of(store_txn *t, store_obj *o, api_err *e);
static inline const cq_book *cq_book_value(const ledger_entry *en)
{
    return ledger_value(en);
}
cq_book *cq_book_modify(store_txn *t, ledger_entry *en, api_err *e);

/* Whether some source names kind k (a pointer compare per kind: a write
 * asks every quota of its namespace). */
static inline bool cq_book_targets(const cq_book *b, const api_kind *k)
{
    for (size_t i = 0; i < b->nkinds; i++)
        if (b->kinds[i] == k) return true;
    return false;
}

/* Whether the books count objects in namespace ns ("" for cluster-scoped). */
bool cq_book_covers(const cq_book *b, const char *ns);

/* An object as its claims name it: read once per write, whatever the number
 * of quotas charged. The first claim made makes `obj`, which the others
 * share; cq_ident_done releases it. */
typedef struct cq_ident {
    const char *group, *version, *kind;
    const char *uid, *ns, *name; /* borrowed from the object */
    unsigned long uid_hash;      /* strmap_hash(uid): every quota's claims are keyed by it */
    cq_obj *obj;
} cq_ident;
void cq_ident_of(cq_ident *id, const char *group, const char *version, const char *kind,
                 const json_t *obj);
void cq_ident_done(cq_ident *id);

/* The claim of object `uid`, or NULL. Valid until the books next change. */
const cq_claim *cq_book_claim(const cq_book *b, const char *uid);
/* The same for an object read as id. */
const cq_claim *cq_book_claim_of(const cq_book *b, const cq_ident *id);

/* Charge: object `id` now counts `usage` with net contribution `net`
 * (matched) or nothing (!matched). 0 or -1 (out of memory, usage beyond
 * precision) with e set. */
int cq_book_set(cq_book *b, cq_ident *id, bool matched, const qty *usage, const qty *net,
                api_err *e);
/* The same when the caller holds the object's claim (`old`, NULL for none)
 * and, if it computed it, the books' next sum (`sum`, NULL to compute). */
int cq_book_set_from(cq_book *b, cq_ident *id, const cq_claim *old, bool matched, const qty *usage,
                     const qty *net, const qty *sum, api_err *e);

/* The problem the books hold for object id (its text), or NULL. */
const char *cq_book_problem_of(const cq_book *b, const cq_ident *id);
static inline size_t cq_book_nproblems(const cq_book *b)
{
    return b->problems ? strmap_count(b->problems) : 0;
}
/* Object id now has this problem (NULL: none). 0 or -1 (out of memory) with
 * e set. */
int cq_book_note(cq_book *b, cq_ident *id, const char *problem, api_err *e);

/* Set quota's status (a quota version about to be written, either kind)
 * to what its books will say, counted as t sees the store; old_status (the
 * version it replaces, or NULL) keeps its conditions' transition times. A
 * create or a spec change then stores its usage and Ready condition at once:
 * watchers (the dashboard) see them without waiting for a reader to load the
 * books. 0 or -1 with e set. */
int cq_book_status_into(store_txn *t, json_t *quota, bool global, const json_t *old_status,
                        api_err *e);

/* As pool_book_verify: the stored status checked once after a load. */
/* reg_view_fn of custom quotas: o with the status its books say, when its
 * stored status trails them; NULL to serve it as stored. */
json_t *cq_book_view(store_txn *t, store_obj *o, store_obj *cur);
/* Quota o with the status a full recount of what t holds gives (a new
 * object), the ledger's books left alone: for a store whose objects change
 * without admission (cluster mode's mirror takes the cluster's changes in
 * through store_ingest, which no book follows). NULL with e set. */
json_t *cq_book_recount_view(store_txn *t, store_obj *o, api_err *e);
int cq_book_verify(store_txn *t, ledger_entry *en, api_err *e);

/* Whether a global quota's namespace selection of ns (its labels) changes. */
bool cq_book_selection_changes(const cq_book *b, const char *ns, const json_t *labels,
                               bool leaving);

/* Recount every quota and adopt the recount where the books differ (they
 * should not: admission keeps them exact); *drift counts those. A recount
 * whose only difference is the error (a source's kind that is now served,
 * or no longer) is adopted too, and is not drift. Any thread, not inside a
 * transaction. 0 or -1. */
int cq_books_resync(store *st, size_t *drift);

/* "group/version, Kind=Kind" as Go prints a GroupVersionKind. */
void cq_gvk_string(const char *group, const char *version, const char *kind, char *buf, size_t n);

#endif
