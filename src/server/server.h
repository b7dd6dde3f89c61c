/* server.h - allotd's serving context and the request/response types shared
 * by the HTTP glue (http.c), the REST handlers (rest.c) and watches (watch.c). */
#ifndef ALLOT_SERVER_SERVER_H
#define ALLOT_SERVER_SERVER_H

#include "api/kinds.h"
#include "api/status.h"
#include "core/rbac.h"
#include "server/audit.h"
#include "server/auth.h"
#include "store/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_BODY_BYTES (3 * 1024 * 1024) /* upstream's request size limit */

typedef struct metrics metrics;
struct reg_explain;

/* What the webhook asks before its dry run (catch_up: 0, or -1 with e to
 * refuse: the store is not yet as new as what the review changes) and
 * after it allows a review (fn: 0, -1 with e to refuse, or 1 when it
 * changed what the decision reads: the review is decided again, and undo
 * called if that refuses) (server/webhook.h). */
struct ar_request;
typedef struct webhook_guard {
    int (*catch_up)(void *arg, const struct ar_request *r, api_err *e);
    /* whether the registry's dry run decides r (NULL: always) */
    bool (*dry_runs)(const struct ar_request *r);
    int (*fn)(void *arg, const struct ar_request *r, api_err *e);
    void (*undo)(void *arg, const struct ar_request *r);
    /* the mutating webhook: 0 with *patch its JSON Patch for r (new; NULL:
     * none), or -1 with e (refused) */
    int (*mutate)(void *arg, const struct ar_request *r, json_t **patch, api_err *e);
    void *arg;
} webhook_guard;

/* kube-scheduler's extender (cluster mode, cluster/extender.h): the
 * answer to a filter or bind call, as JSON text (*out, caller frees), and
 * the HTTP status. */
typedef struct scheduler_extender {
    int (*filter)(void *arg, const char *body, size_t len, char **out);
    int (*bind)(void *arg, const char *body, size_t len, char **out);
    void *arg;
} scheduler_extender;

typedef struct server {
    store *st;
    auth_t *auth;
    metrics *m;
    audit_log *audit;          /* NULL: no audit log */
    struct inflight *inflight; /* per-user requests in flight (server/inflight.h) */
    struct inflight *watches;  /* per-user open watches (the same counter) */
    audit_policy *audit_policy;
    char address[300]; /* host:port clients reach us at (discovery) */
    volatile int stopping;
    int64_t started_at;
    /* Cluster mode: the store mirrors a cluster (writes are refused), and
     * /readyz answers ready only once ready(ready_arg) says its caches are
     * synced. */
    bool mirror;
    bool (*ready)(void *arg);
    void *ready_arg;
    /* What the webhook checks after the dry run allows (server/webhook.h;
     * cluster mode's release guard). */
    webhook_guard guard;
    scheduler_extender extender; /* (its functions NULL outside cluster mode) */
} server;

/* What a handler needs from the HTTP request. */
typedef struct req {
    server *srv;
    const char *method;
    const char *path; /* as the client sent it: still percent-encoded (core/urlpath.h) */
    const char *body; /* NUL-terminated, may be NULL */
    size_t body_len;
    const char *content_type;
    const char *accept;
    const char *user_agent; /* may be NULL */
    const auth_user *user;  /* who the request is: the impersonated user when it impersonates */
    const auth_user *impersonator; /* the authenticated user acting as `user`, or NULL */
    /* Query parameters, URL-decoded, by name (NULL when absent). */
    const char *(*query)(const struct req *r, const char *name);
    void *conn;          /* opaque for query() */
    struct waker *waker; /* the connection's, for a streamed response (below) */
    /* Filled by the handler for metrics. */
    const char *verb;
    char resource[128];
    /* Filled by authorization, for the audit log: what was asked, and the
     * decision ("allow"/"forbid", NULL when none was taken) and its reason. */
    rbac_attrs authz; /* its strings point into the kind table, rq, or authz_str */
    /* namespace, name, subresource, API group, resource: the route's (the
     * path's segments, on rest_handle's stack) are gone by the audit */
    char authz_str[5][256];
    bool authz_set;
    const char *decision;
    char reason[256];
    bool seated; /* holds a seat in srv->inflight (http.c) */
} req;

/* A connection's waker (http.c): what a streamed response that has nothing
 * to send yet arranges to be called when it may have, so its connection is
 * parked meanwhile instead of holding a thread. Reference counted: a stream
 * that keeps one beyond its request holds it (waker_hold / waker_release). */
typedef struct waker waker;
void waker_hold(waker *w);
void waker_release(waker *w);
/* Resume the parked connection (or, when it is not parked yet, make its
 * next park return at once). Any thread; takes only the waker's own lock
 * and libmicrohttpd's, so it may be called under other locks. */
void waker_wake(waker *w);
/* Wake w at monotonic time at_ms (clock_mono_ms), replacing the time set
 * before; 0 for none. */
void waker_set_timer(waker *w, int64_t at_ms);
/* The client has gone away (hung up): nothing it is sent will arrive. */
bool waker_hung_up(waker *w);

/* A streamed body (watch): called until it returns -1 (end). It writes up to
 * `max` bytes into buf and returns how many, or 0 when it has nothing yet:
 * then it must have arranged a waker_wake (a store notify, a timer) for when
 * it may have; it never blocks. */
typedef struct stream {
    long (*read)(void *ctx, char *buf, size_t max);
    void (*free)(void *ctx);
    void *ctx;
} stream;

typedef struct resp {
    int code;
    json_t *json; /* body as JSON (owned), or */
    char *raw;    /* a serialized body (owned, malloc) */
    size_t raw_len;
    const char *content_type; /* default application/json */
    stream st;                /* when st.read is set: a streamed body */
    json_t *warnings;         /* warning texts (owned), sent as `Warning: 299 - "..."` */
    int retry_after;          /* seconds for a Retry-After header, 0 for none */
    store_obj *stored;        /* a body sent as this stored version's text (a reference), or NULL */
    const void *fixed;        /* a body that outlives the response (not freed), or NULL */
    size_t fixed_len;
    const char *const *headers; /* more headers: name, value, ..., NULL (static), or NULL */
} resp;

/* Set a JSON body / an error Status. */
void resp_json(resp *r, int code, json_t *body);
void resp_err(resp *r, const api_err *e);
void resp_errf(resp *r, api_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Entry point for everything under /api, /apis, discovery, openapi, health. */
void rest_handle(req *rq, resp *rs);

/* Decode obj (a body of kind k) in place as a create does: wrong types are a
 * 400, unknown fields pruned with a warning (appended to *warnings, created
 * when NULL). 0 or -1 with e set. */
int rest_typed_object(const api_kind *k, json_t *obj, json_t **warnings, api_err *e);

/* reg_mutate_fn of a replacement (PUT): the object `ctx` (a json_t *) as it is. */
json_t *rest_replace(const json_t *cur, void *ctx, api_err *e);

/* The request's field manager: fieldManager, or its user agent's prefix
 * (api/fieldmanager.h) into buf; 0, or -1 with upstream's 422 on `opts`
 * ("CreateOptions", "PatchOptions", ...) for a fieldManager that is too long
 * or not printable. */
int rest_field_manager(const req *rq, const char *opts, char *buf, size_t n, api_err *e);

/* For a handler with no Table conversion (the access, rules, token and
 * quota reviews, pods/binding, serviceaccounts/token: objects without
 * metadata, or none at all): when no
 * media range of the Accept header is a plain encoding (application/json,
 * yaml, protobuf, a wildcard; none asking "as=Table" or another
 * conversion), upstream's negotiation 406 is put in rs and true returned.
 * An absent Accept is plain. */
bool rest_refuse_table(const req *rq, resp *rs);

/* The fieldValidation directive (422 on `opts` for an unknown one); *strict
 * when it is Strict. */
int rest_field_validation(const req *rq, const char *opts, bool *strict, api_err *e);

/* The autoscaling/v1 Scale of a scalable object (caller owns). */
json_t *rest_scale_of(const api_kind *k, const json_t *obj);

/* A dry run's quota explanation as warnings (registry/explain.h): x from
 * reg_explain_begin, rc and e the write's outcome. */
void rest_explain_warnings(struct reg_explain *x, int rc, const api_err *e, json_t **warnings);

/* Server-side apply (server/apply.c): PATCH with application/apply-patch+yaml
 * on the object or its status (sub) or scale subresource. */
void rest_apply(req *rq, resp *rs, const api_kind *k, const char *ns, const char *name,
                const char *sub);

/* allot.dev/v1 QuotaReview (server/quotareview.c): true when the path
 * (decoded segments) is the review's, and rs holds the answer. */
bool quotareview_serve(req *rq, resp *rs, char segs[][256], int n);

/* GET pods/log (server/podlog.c): what `kubectl logs` gets where no
 * container runs. */
void podlog_serve(req *rq, resp *rs, const api_kind *k, const char *ns, const char *name);

/* authentication.k8s.io/v1 TokenReview (server/tokenreview.c), likewise. */
bool tokenreview_serve(req *rq, resp *rs, char segs[][256], int n);

/* Watch on a collection; fills rs with a stream. */
void watch_start(req *rq, resp *rs, const void *kind, const char *ns, const char *name);

/* A boolean query parameter, parsed as upstream does (1, t, true, True, ...). */
bool query_bool(const req *rq, const char *name);
/* An integer query parameter, parsed as upstream's strconv.ParseInt(v, 10, 64):
 * 1 with *out set, 0 when absent, -1 with upstream's 400 in e
 * ("strconv.ParseInt: parsing \"x\": invalid syntax" or "value out of range"). */
int query_int64(const req *rq, const char *name, int64_t *out, api_err *e);

int64_t now_unix(void);
/* RFC 3339 UTC seconds ("2026-11-21T10:00:00Z"). */
void format_time(int64_t unix_seconds, char *buf, size_t n);

#endif
