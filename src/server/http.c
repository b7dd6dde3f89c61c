/* http.c - libmicrohttpd glue: connections, TLS, request bodies,
 * authentication, responses.
 *
 * A fixed pool of worker threads (http_workers(), the number of cores)
 * serves every connection through epoll; a request runs on one worker from
 * its headers to its response, and nothing blocks a worker for long:
 *  - a write's response waits for its durability with its connection parked
 *    (MHD_suspend_connection): the handler's store commits do not wait
 *    (store_defer_durability), and the store's writer resumes the
 *    connection once the write is on disk (store_when_durable);
 *  - a watch with nothing to send parks its connection the same way, and is
 *    resumed by the store when an event it takes arrives, by the timer
 *    thread at its deadline or next bookmark, or when its client hangs up.
 * So an idle keep-alive connection or an idle watch holds no thread. One
 * more thread, "http-timer", keeps the time for parked connections and for
 * connections that have not yet presented a request, and notices parked
 * clients hanging up (epoll, EPOLLRDHUP); it sleeps until something is due.
 *
 * Parking (struct waker, one per connection): a connection is parked only
 * by its own worker, under the waker's lock, and resumed under the same
 * lock by whoever wakes it, so a resume always finds it suspended; a wake
 * that comes before the park makes the park return at once.
 *
 * What one client can hold (issues 12 and 26):
 *  - connections are polled with epoll, never select(2) (which cannot watch
 *    a descriptor above 1023);
 *  - a connection that has not yet presented a request (TLS handshake and
 *    headers) must do so within HTTP_HEADER_TIMEOUT_S of its accept, however
 *    slowly it trickles bytes; at most HTTP_MAX_PER_IP such connections per
 *    client address and HTTP_MAX_WAITING in all, and over either bound the
 *    OLDEST waiting connection is shut down, never the new one
 *    (server/conntrack.h): idle connections from an address cannot lock out
 *    the next real client from it;
 *  - after its first request a connection is governed by the idle timeout
 *    (HTTP_IDLE_TIMEOUT_S), longer than clients' keep-alive pools (client-go:
 *    90 s) so a client never races the server closing an idle connection;
 *  - bodies are accumulated up to upstream's 3 MiB limit; past it the
 *    request is answered 413 without buffering the rest.
 */
#include "server/http.h"
#include "core/jdump.h"
#include "server/authz.h"
#include "server/impersonate.h"

#include "core/urlpath.h"
#include "server/conntrack.h"
#include "server/inflight.h"
#include "util/log.h"
#include "server/metrics.h"
#include "server/ui.h"
#include "util/clock.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Connections that have not yet presented a request, in all. */
#define HTTP_MAX_WAITING 4096
/* Each connection's libmicrohttpd memory pool (request headers, the buffer
 * a response is written through): its default, 32 KiB, so request lines of
 * up to about 16 KiB (a long label selector) still fit. What an idle watch
 * costs is about half the pool, its stream block and ~18 KiB of TLS session
 * and bookkeeping (bench/watches.sh, 1,000 watches: 68 KiB each with 16 KiB
 * blocks, 49 KiB with 4 KiB; with a 4 KiB pool and 1 KiB blocks, 23 KiB). */
#define HTTP_CONNECTION_POOL (32 * 1024)
/* A streamed response (a watch) is sent in chunks of at most this much: a
 * burst of events is a few more TLS records, an idle watch 12 KiB less. */
#define HTTP_STREAM_BLOCK (4 * 1024)
/* A connection that has streamed a response (a watch) is closed when it
 * makes no progress for this long: a client that stops reading is let go
 * as upstream lets go of a watcher that cannot keep up, and this stays
 * longer than clients' keep-alive pools after the stream ends. */
#define HTTP_STREAM_TIMEOUT_S 120

/* One per connection (its socket context), from accept to close. */
struct waker {
    atomic_int refs; /* the connection's, a stream's, a durability wait's */
    http_server *h;
    pthread_mutex_t mu;       /* c, parked, pending */
    struct MHD_Connection *c; /* NULL once the connection closed */
    bool parked, pending;
    atomic_bool hup; /* the client hung up (seen while parked) */
    int fd;
    char addr[INET6_ADDRSTRLEN];
    /* Under h->mu: */
    ct_entry ct;               /* waiting for its first request (conntrack) */
    bool hup_watched;          /* registered with the timer's epoll */
    struct waker *prev, *next; /* every connection */
    /* Under h->tmu: the timer heap. */
    int64_t due_ms;
    size_t heap_i; /* position + 1 in h->heap, 0 when not in it */
    /* Only this connection's worker touches these: */
    bool cert_known; /* cert below is decided */
    auth_cert_result cert;
    auth_ident *cert_user; /* when cert == AUTH_CERT_OK */
    bool timeout_set;      /* HTTP_STREAM_TIMEOUT_S applies */
};

struct http_server {
    server *srv;
    struct MHD_Daemon *d;
    pthread_mutex_t mu; /* conns, waiting, all, retired, hup registrations */
    conntrack *waiting;
    waker all;       /* circular list of every connection */
    waker **retired; /* hang-up registrations ended, released by the timer thread */
    size_t nretired, retired_cap;
    atomic_bool stopping;
    atomic_int nparked;
    /* The timer thread. */
    pthread_t timer;
    bool timer_started, stop;
    int epfd, evfd;
    pthread_mutex_t tmu; /* heap, sleep_until */
    waker **heap;        /* min-heap by due_ms */
    size_t nheap, heap_cap;
    int64_t sleep_until; /* the timer thread sleeps until this (INT64_MAX: no deadline) */
};

/* One per request, made by on_uri before libmicrohttpd decodes anything. */
typedef struct conn_state {
    char *path; /* the raw request path, still percent-encoded, without the query */
    char *uri;  /* the request target as sent, query included (audit) */
    bool started;
    dbuf body;
    bool too_large;
    double t0;
    auth_ident ident;   /* the request's user when it is made per request (rq.user points here) */
    impersonation *imp; /* the user it acts as (Impersonate-User), or NULL */
    /* Answered, its response parked until its writes are durable: */
    bool answered;
    int64_t rev;
    req rq;
    resp rs;
} conn_state;

unsigned http_workers(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

/* ---- wakers ---- */

void waker_hold(waker *w)
{
    atomic_fetch_add_explicit(&w->refs, 1, memory_order_relaxed);
}

void waker_release(waker *w)
{
    if (!w || atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) != 1) return;
    pthread_mutex_destroy(&w->mu);
    free(w->cert_user);
    free(w);
}

static void timer_kick(http_server *h)
{
    uint64_t one = 1;
    if (write(h->evfd, &one, sizeof one) < 0 && errno != EAGAIN)
        log_msg(LOG_ERROR, "cannot wake the http timer thread", NULL);
}

void waker_wake(waker *w)
{
    pthread_mutex_lock(&w->mu);
    if (w->parked) {
        w->parked = false;
        atomic_fetch_sub(&w->h->nparked, 1);
        MHD_resume_connection(w->c);
    } else {
        w->pending = true;
    }
    pthread_mutex_unlock(&w->mu);
}

bool waker_hung_up(waker *w)
{
    return atomic_load(&w->hup);
}

/* Park w's connection (called by its worker, inside a libmicrohttpd
 * callback): true when parked; false when a wake came first (consumed) or
 * the server is stopping, and the caller must look again at once. */
static bool waker_park(waker *w)
{
    pthread_mutex_lock(&w->mu);
    bool park = !w->pending && !atomic_load(&w->h->stopping) && w->c;
    w->pending = false;
    if (park) {
        w->parked = true;
        atomic_fetch_add(&w->h->nparked, 1);
        MHD_suspend_connection(w->c);
    }
    pthread_mutex_unlock(&w->mu);
    return park;
}

/* The timer heap (under h->tmu), ordered by due_ms. */
static void heap_place(http_server *h, size_t i, waker *w)
{
    h->heap[i] = w;
    w->heap_i = i + 1;
}

static void heap_up(http_server *h, size_t i)
{
    waker *w = h->heap[i];
    while (i > 0 && h->heap[(i - 1) / 2]->due_ms > w->due_ms) {
        heap_place(h, i, h->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_place(h, i, w);
}

static void heap_down(http_server *h, size_t i)
{
    waker *w = h->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->nheap) break;
        if (c + 1 < h->nheap && h->heap[c + 1]->due_ms < h->heap[c]->due_ms) c++;
        if (h->heap[c]->due_ms >= w->due_ms) break;
        heap_place(h, i, h->heap[c]);
        i = c;
    }
    heap_place(h, i, w);
}

static void heap_remove(http_server *h, waker *w)
{
    if (!w->heap_i) return;
    size_t i = w->heap_i - 1;
    w->heap_i = 0;
    waker *last = h->heap[--h->nheap];
    if (i == h->nheap) return;
    h->heap[i] = last;
    last->heap_i = i + 1;
    heap_up(h, i);
    heap_down(h, last->heap_i - 1);
}

void waker_set_timer(waker *w, int64_t at_ms)
{
    http_server *h = w->h;
    bool kick = false;
    pthread_mutex_lock(&h->tmu);
    heap_remove(h, w);
    if (at_ms > 0) {
        if (h->nheap == h->heap_cap) {
            size_t nc = h->heap_cap ? h->heap_cap * 2 : 64;
            waker **nv = realloc(h->heap, nc * sizeof *nv);
            if (nv) {
                h->heap = nv;
                h->heap_cap = nc;
            }
        }
        if (h->nheap < h->heap_cap) {
            w->due_ms = at_ms;
            h->heap[h->nheap++] = w;
            heap_up(h, h->nheap - 1);
            kick = at_ms < h->sleep_until;
        }
    }
    pthread_mutex_unlock(&h->tmu);
    if (kick) timer_kick(h);
}

/* Watch a parked stream's client for hanging up (its first park). */
static void watch_hangup(waker *w)
{
    http_server *h = w->h;
    pthread_mutex_lock(&h->mu);
    if (!w->hup_watched && w->c) {
        struct epoll_event ev = {.events = EPOLLRDHUP | EPOLLET, .data.ptr = w};
        if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, w->fd, &ev) == 0) {
            waker_hold(w); /* the registration's, released by the timer thread */
            w->hup_watched = true;
        }
    }
    pthread_mutex_unlock(&h->mu);
}

static const char *query(const req *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* A streamed response and the connection it streams on. */
typedef struct sstream {
    stream st;
    waker *w; /* a reference */
} sstream;

/* libmicrohttpd's content reader: what the stream has, else park until the
 * stream's waker says it may have more (returning 0 with the connection
 * suspended, as libmicrohttpd asks). */
static ssize_t stream_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    sstream *ss = cls;
    for (;;) {
        long n = ss->st.read(ss->st.ctx, buf, max);
        if (n < 0) return MHD_CONTENT_READER_END_OF_STREAM;
        if (n > 0) return (ssize_t)n;
        if (atomic_load(&ss->w->h->stopping)) return MHD_CONTENT_READER_END_OF_STREAM;
        watch_hangup(ss->w);
        if (waker_park(ss->w)) return 0;
    }
}

static void stream_free_cb(void *cls)
{
    sstream *ss = cls;
    ss->st.free(ss->st.ctx);
    waker_set_timer(ss->w, 0);
    waker_release(ss->w);
    free(ss);
}

/* One `Warning: 299 - "<text>"` header per text, quoted as upstream's
 * NewWarningHeader does (a backslash before each '"' and '\\'); a text with
 * a control character is dropped, as upstream refuses it. */
static void add_warnings(struct MHD_Response *r, const json_t *warnings)
{
    size_t i;
    const json_t *w;
    json_array_foreach(warnings, i, w)
    {
        const char *text = json_string_value(w);
        char value[1024];
        size_t n = (size_t)snprintf(value, sizeof value, "299 - \"");
        for (const char *p = text ? text : ""; *p && n + 4 < sizeof value; p++) {
            if ((unsigned char)*p < 0x20 || *p == 0x7f) {
                n = 0;
                break;
            }
            if (*p == '"' || *p == '\\') value[n++] = '\\';
            value[n++] = *p;
        }
        if (n == 0 || !text) continue;
        value[n++] = '"';
        value[n] = '\0';
        MHD_add_response_header(r, "Warning", value);
    }
}

static void unref_stored(void *o)
{
    store_obj_unref(o);
}

static enum MHD_Result send_resp(struct MHD_Connection *c, waker *w, resp *rs)
{
    struct MHD_Response *r;
    if (rs->st.read) {
        sstream *ss = malloc(sizeof *ss);
        if (!ss) {
            rs->st.free(rs->st.ctx);
            return MHD_NO;
        }
        ss->st = rs->st;
        ss->w = w;
        waker_hold(w);
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, HTTP_STREAM_BLOCK, stream_cb, ss,
                                              stream_free_cb);
        if (!r) {
            stream_free_cb(ss);
            return MHD_NO;
        }
        if (!w->timeout_set) {
            MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT,
                                      (unsigned)HTTP_STREAM_TIMEOUT_S);
            w->timeout_set = true;
        }
    } else if (rs->stored) {
        store_obj *o = rs->stored;
        rs->stored = NULL;
        r = MHD_create_response_from_buffer_with_free_callback_cls(o->len, o->json, unref_stored,
                                                                   o);
        if (!r) {
            store_obj_unref(o);
            return MHD_NO;
        }
    } else if (rs->fixed) {
        r = MHD_create_response_from_buffer(rs->fixed_len, (void *)rs->fixed,
                                            MHD_RESPMEM_PERSISTENT);
        if (!r) return MHD_NO;
    } else {
        char *body = rs->raw;
        size_t len = rs->raw_len;
        if (!body) {
            body = rs->json ? jdump(rs->json, NULL) : strdup("");
            len = body ? strlen(body) : 0;
        }
        rs->raw = NULL;
        r = MHD_create_response_from_buffer(len, body ? body : "",
                                            body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
        if (!r) {
            free(body);
            return MHD_NO;
        }
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            rs->content_type ? rs->content_type : "application/json");
    MHD_add_response_header(r, "Cache-Control", "no-cache, private");
    add_warnings(r, rs->warnings);
    for (const char *const *h = rs->headers; h && h[0]; h += 2)
        MHD_add_response_header(r, h[0], h[1]);
    if (rs->retry_after > 0) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", rs->retry_after);
        MHD_add_response_header(r, "Retry-After", ra);
    }
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)rs->code, r);
    MHD_destroy_response(r);
    return ret;
}

static void resp_clear(resp *rs)
{
    store_obj_unref(rs->stored);
    json_decref(rs->warnings);
    json_decref(rs->json);
    free(rs->raw);
}

/* Query keys and values reach handlers as C strings: a decoded NUL would
 * silently cut one short (labelSelector=%00... would select everything). */
static enum MHD_Result arg_has_nul(void *cls, enum MHD_ValueKind kind, const char *key,
                                   size_t key_size, const char *value, size_t value_size)
{
    bool *nul = cls;
    if (memchr(key, '\0', key_size) || (value && memchr(value, '\0', value_size))) {
        *nul = true;
        return MHD_NO;
    }
    return MHD_YES;
}

static bool query_has_nul(struct MHD_Connection *c)
{
    bool nul = false;
    MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, arg_has_nul, &nul);
    return nul;
}

static const char *const unauthenticated[] = {"system:unauthenticated"};
static const auth_user anonymous = {"system:anonymous", "", unauthenticated, 1, NULL, 0};

static bool is_health(const char *url)
{
    return !strcmp(url, "/healthz") || !strcmp(url, "/livez") || !strcmp(url, "/readyz") ||
           !strncmp(url, "/healthz/", 9) || !strncmp(url, "/livez/", 7) ||
           !strncmp(url, "/readyz/", 8);
}

/* The client certificate's verdict: computed once per connection (kept
 * with its waker), else for this request (into scratch). */
static auth_cert_result client_cert(const auth_t *a, struct MHD_Connection *c, auth_ident *scratch,
                                    const auth_user **user)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    waker *g = ci ? ci->socket_context : NULL;
    if (g && g->cert_known) {
        if (g->cert == AUTH_CERT_OK) *user = &g->cert_user->user;
        return g->cert;
    }
    const union MHD_ConnectionInfo *si =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    unsigned n = 0;
    const gnutls_datum_t *chain =
        si && si->tls_session ? gnutls_certificate_get_peers(si->tls_session, &n) : NULL;
    auth_ident *id = g ? malloc(sizeof *id) : scratch;
    auth_cert_result r = id ? auth_check_cert(a, chain, n, id) : AUTH_CERT_INVALID;
    if (r == AUTH_CERT_INVALID) log_msg(LOG_DEBUG, "client certificate not verified", NULL);
    if (r == AUTH_CERT_OK) *user = &id->user;
    if (g) {
        g->cert_known = true;
        g->cert = r;
        if (r == AUTH_CERT_OK)
            g->cert_user = id;
        else
            free(id);
    }
    return r;
}

/* Who sent the request, as upstream's union authenticator decides it: a
 * verified client certificate (x509 comes first upstream), else a bearer
 * token (token file, admin, ServiceAccount). A certificate that does not
 * verify is no identity, but a valid token on the same request still is. */
static const auth_user *authenticate(const server *srv, struct MHD_Connection *c, const char *authz,
                                     auth_ident *scratch)
{
    const auth_user *u = NULL;
    if (client_cert(srv->auth, c, scratch, &u) == AUTH_CERT_OK) return u;
    return authz ? auth_authenticate(srv->auth, authz, scratch, (int64_t)time(NULL)) : NULL;
}

/* A seat among the user's requests in flight (server/inflight.h); false
 * with upstream's 429 set when the user has none left. system:masters is
 * exempt. */
static bool take_seat(server *srv, req *rq, resp *rs)
{
    for (size_t i = 0; i < rq->user->ngroups; i++)
        if (!strcmp(rq->user->groups[i], RBAC_SYSTEM_MASTERS)) return true;
    if (!srv->inflight || inflight_enter(srv->inflight, rq->user->name)) {
        rq->seated = srv->inflight != NULL;
        return true;
    }
    resp_errf(rs, API_TOO_MANY_REQUESTS, "Too many requests, please try again later.");
    json_object_set_new(rs->json, "details", json_pack("{s:i}", "retryAfterSeconds", 1));
    rs->retry_after = 1;
    return false;
}

/* The dashboard's files (server/ui.h): no data in them, so no identity is
 * needed to fetch them; every API call the page makes is authenticated. */
static void serve_ui(req *rq, resp *rs)
{
    rq->verb = "UI";
    rs->headers = ui_headers;
    if (strcmp(rq->method, "GET") && strcmp(rq->method, "HEAD")) {
        resp_errf(rs, API_METHOD_NOT_ALLOWED, "the dashboard's files are read-only");
        return;
    }
    const ui_asset *a = ui_find(rq->path);
    if (!a) {
        resp_errf(rs, API_NOT_FOUND, "the page \"%s\" is not part of the dashboard", rq->path);
        return;
    }
    rs->fixed = a->data;
    rs->fixed_len = a->len;
    rs->content_type = a->type;
}

/* Routing sees only cs->path, the raw path: libmicrohttpd's decoded url
 * would let "%00" and "%2f" change which object a request names. */
static void handle(http_server *h, struct MHD_Connection *c, waker *w, const char *method,
                   conn_state *cs, resp *rs, req *rq, auth_ident *ident)
{
    server *srv = h->srv;
    const char *url = cs->path;
    rq->srv = srv;
    rq->method = method;
    rq->path = url;
    rq->query = query;
    rq->conn = c;
    rq->verb = method;
    snprintf(rq->resource, sizeof rq->resource, "%s", "");
    rq->waker = w;
    rs->code = 200;

    if (is_health(url)) {
        rq->verb = "HEALTH";
        /* Not ready until the caches a mirror decides on are synced
         * (cluster mode); alive meanwhile. */
        bool unsynced = srv->ready && strncmp(url, "/livez", 6) && strncmp(url, "/healthz", 8) &&
                        !srv->ready(srv->ready_arg);
        rs->raw = strdup(srv->stopping ? "shutting down" : unsynced ? "caches not synced" : "ok");
        rs->raw_len = rs->raw ? strlen(rs->raw) : 0;
        rs->content_type = "text/plain; charset=utf-8";
        if (srv->stopping || unsynced) rs->code = 503;
        return;
    }
    if (ui_path(url)) {
        serve_ui(rq, rs);
        return;
    }
    const char *authz =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    rq->user = authenticate(srv, c, authz, ident);
    /* In cluster mode the cluster's API server calls the webhook, and by
     * default it presents no credentials (docs/cluster-mode.md). */
    if (!rq->user && srv->mirror && !strncmp(url, "/admission/", 11)) rq->user = &anonymous;
    if (!rq->user) {
        resp_errf(rs, API_UNAUTHORIZED, "Unauthorized");
        return;
    }
    if (impersonate_request(c, rq, &cs->imp, rs) != 0) return;
    if (cs->too_large) {
        resp_errf(rs, API_TOO_LARGE, "Request entity too large: limit is %d", MAX_BODY_BYTES);
        return;
    }
    if (!take_seat(srv, rq, rs)) return;
    if (query_has_nul(c)) {
        resp_errf(rs, API_BAD_REQUEST, "invalid control character in the request query");
        return;
    }
    if (!strcmp(url, "/metrics")) {
        rq->verb = "GET";
        rbac_attrs a = {authz_user(rq), "get", false, "", "", "", "", "", url};
        if (authz_request(rq, &a, rs) != 0) return;
        rs->raw = metrics_render(srv->m, srv->st, &rs->raw_len);
        rs->content_type = "text/plain; version=0.0.4; charset=utf-8";
        return;
    }
    rq->body = cs->body.p;
    rq->body_len = cs->body.len;
    rq->content_type =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    rq->accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    rq->user_agent = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_USER_AGENT);
    rest_handle(rq, rs);
}

/* libmicrohttpd's URI log callback: called once per request with the request
 * target exactly as sent, before it decodes the path and the query; what it
 * returns is the request's *con_cls. NULL (out of memory) closes the
 * connection in on_request. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    conn_state *cs = calloc(1, sizeof *cs);
    if (!cs) return NULL;
    cs->path = strndup(uri, urlpath_path_len(uri));
    cs->uri = strndup(uri, 4096); /* (a longer target is logged cut) */
    if (!cs->path || !cs->uri) {
        free(cs->path);
        free(cs->uri);
        free(cs);
        return NULL;
    }
    dbuf_init(&cs->body, MAX_BODY_BYTES);
    cs->t0 = clock_mono_s();
    return cs;
}

static void log_request(const req *rq, const conn_state *cs, int code, double secs)
{
    char path[256];
    urlpath_log_escape(cs->path, path, sizeof path);
    /* 503 is a state, not a fault: not ready yet (a mirror still
     * filling), shutting down, a backend unavailable. Operators alerting
     * on error lines should not be paged for a start-up. */
    if (code == 503)
        log_msg(LOG_WARN, "request unavailable", "\"verb\":\"%s\",\"path\":\"%s\",\"code\":%d",
                rq->verb, path, code);
    else if (code >= 500)
        log_msg(LOG_ERROR, "request failed", "\"verb\":\"%s\",\"path\":\"%s\",\"code\":%d",
                rq->verb, path, code);
    else
        log_msg(LOG_DEBUG, "request",
                "\"verb\":\"%s\",\"path\":\"%s\",\"code\":%d,\"seconds\":%.6f", rq->verb, path,
                code, secs);
}

/* ---- connections ---- */

static waker *waker_of_entry(ct_entry *e)
{
    return (waker *)((char *)e - offsetof(waker, ct));
}

/* Shut down a connection that must give way (under h->mu: libmicrohttpd
 * notifies CLOSED, which takes h->mu, before it closes the descriptor, so
 * the descriptor shut down is never one reused since). */
static void give_way(ct_entry *e)
{
    shutdown(waker_of_entry(e)->fd, SHUT_RDWR);
}

static void client_addr(struct MHD_Connection *c, char *buf, size_t n)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    snprintf(buf, n, "?");
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)n);
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)n);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    http_server *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        waker *w = calloc(1, sizeof *w);
        if (!w || !ci) {
            free(w);
            return; /* no waker: its requests are refused (on_request) */
        }
        atomic_init(&w->refs, 1);
        w->h = h;
        w->c = c;
        w->fd = ci->connect_fd;
        pthread_mutex_init(&w->mu, NULL);
        client_addr(c, w->addr, sizeof w->addr);
        pthread_mutex_lock(&h->mu);
        w->next = &h->all;
        w->prev = h->all.prev;
        h->all.prev->next = w;
        h->all.prev = w;
        bool was_empty = conntrack_waiting(h->waiting) == 0;
        ct_entry *out = conntrack_add(h->waiting, &w->ct, w->addr, clock_mono_s());
        if (out) give_way(out);
        pthread_mutex_unlock(&h->mu);
        if (was_empty) timer_kick(h); /* a deadline earlier than the timer's sleep */
        *socket_context = w;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        waker *w = *socket_context;
        pthread_mutex_lock(&w->mu);
        w->c = NULL; /* wakes from now on do nothing */
        pthread_mutex_unlock(&w->mu);
        pthread_mutex_lock(&h->mu);
        conntrack_remove(h->waiting, &w->ct);
        w->prev->next = w->next;
        w->next->prev = w->prev;
        bool retire = w->hup_watched;
        if (retire) {
            /* (the descriptor is still open: it is closed after this) */
            epoll_ctl(h->epfd, EPOLL_CTL_DEL, w->fd, NULL);
            w->hup_watched = false;
            if (h->nretired == h->retired_cap) {
                size_t nc = h->retired_cap ? h->retired_cap * 2 : 64;
                waker **nv = realloc(h->retired, nc * sizeof *nv);
                if (nv) {
                    h->retired = nv;
                    h->retired_cap = nc;
                }
            }
            /* The timer thread may hold w from its last epoll_wait: it
             * drops the registration's reference before its next one.
             * (Out of memory: the reference leaks rather than dangles.) */
            if (h->nretired < h->retired_cap) h->retired[h->nretired++] = w;
        }
        pthread_mutex_unlock(&h->mu);
        waker_set_timer(w, 0);
        *socket_context = NULL;
        waker_release(w);
    }
}

/* The headers of a request arrived: no longer waiting (conntrack). */
static void guard_release(http_server *h, waker *w)
{
    if (!w || !w->ct.listed) return; /* (only this connection's worker changes listed to true) */
    pthread_mutex_lock(&h->mu);
    conntrack_remove(h->waiting, &w->ct);
    pthread_mutex_unlock(&h->mu);
}

/* ---- the timer thread: deadlines of waiting connections, parked streams'
 * timers, parked clients hanging up ---- */

static int64_t timer_wait_ms(http_server *h, int64_t now)
{
    int64_t until = INT64_MAX;
    double at;
    pthread_mutex_lock(&h->mu);
    if (conntrack_next_deadline(h->waiting, &at)) until = (int64_t)(at * 1000) + 1;
    pthread_mutex_unlock(&h->mu);
    pthread_mutex_lock(&h->tmu);
    if (h->nheap && h->heap[0]->due_ms < until) until = h->heap[0]->due_ms;
    h->sleep_until = until;
    pthread_mutex_unlock(&h->tmu);
    if (until == INT64_MAX) return -1;
    return until <= now ? 0 : until - now > 3600000 ? 3600000 : until - now;
}

static void *timer_main(void *arg)
{
    http_server *h = arg;
    pthread_setname_np(pthread_self(), "http-timer");
    struct epoll_event evs[64];
    waker **due = NULL;
    size_t due_cap = 0;
    for (;;) {
        /* Registrations that ended before this wait cannot be in it. */
        pthread_mutex_lock(&h->mu);
        bool stop = h->stop;
        size_t nret = h->nretired;
        waker **ret = h->retired;
        h->retired = NULL;
        h->nretired = h->retired_cap = 0;
        pthread_mutex_unlock(&h->mu);
        for (size_t i = 0; i < nret; i++)
            waker_release(ret[i]);
        free(ret);
        if (stop) break;

        int n = epoll_wait(h->epfd, evs, 64, (int)timer_wait_ms(h, clock_mono_ms()));
        for (int i = 0; i < n; i++) {
            waker *w = evs[i].data.ptr;
            if (!w) { /* the kick */
                uint64_t v;
                if (read(h->evfd, &v, sizeof v) < 0 && errno != EAGAIN)
                    log_msg(LOG_ERROR, "cannot read the http timer's eventfd", NULL);
                continue;
            }
            atomic_store(&w->hup, true);
            waker_wake(w);
        }
        /* Waiting connections past their deadline give way. */
        double now_s = clock_mono_s();
        pthread_mutex_lock(&h->mu);
        for (ct_entry *e; (e = conntrack_expired(h->waiting, now_s));)
            give_way(e);
        pthread_mutex_unlock(&h->mu);
        /* Parked streams whose time came. */
        int64_t now = clock_mono_ms();
        size_t ndue = 0;
        pthread_mutex_lock(&h->tmu);
        while (h->nheap && h->heap[0]->due_ms <= now) {
            waker *w = h->heap[0];
            heap_remove(h, w);
            if (ndue == due_cap) {
                size_t nc = due_cap ? due_cap * 2 : 64;
                waker **nv = realloc(due, nc * sizeof *nv);
                if (!nv) break; /* (the rest wait for the next round) */
                due = nv;
                due_cap = nc;
            }
            waker_hold(w);
            due[ndue++] = w;
        }
        pthread_mutex_unlock(&h->tmu);
        for (size_t i = 0; i < ndue; i++) {
            waker_wake(due[i]);
            waker_release(due[i]);
        }
    }
    free(due);
    return NULL;
}

/* The request's audit Event (server/audit.h): its attributes as
 * authorization saw them, or, for a request never authorized (401, health,
 * a 404 before routing), the method and path as a non-resource request. */
static void audit_request(const server *srv, struct MHD_Connection *c, const conn_state *cs,
                          const char *method, const req *rq, const resp *rs)
{
    static const char *const anon_groups[] = {"system:unauthenticated"};
    char verb[16], ip[64] = "";
    const rbac_attrs *z = &rq->authz;
    const auth_user *u = rq->impersonator ? rq->impersonator : rq->user; /* who sent it */
    audit_attrs a = {u ? u->name : "system:anonymous",
                     u ? u->uid : "",
                     u ? (const char *const *)u->groups : anon_groups,
                     u ? u->ngroups : 1,
                     NULL,
                     false,
                     "",
                     "",
                     "",
                     "",
                     "",
                     "",
                     cs->uri,
                     ip,
                     MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_USER_AGENT)};
    a.impersonated = rq->impersonator ? rq->user : NULL;
    if (rq->authz_set) {
        a.verb = z->verb;
        a.resource_request = z->resource_request;
        if (z->resource_request) {
            a.api_group = z->api_group;
            a.resource = z->resource;
            a.subresource = z->subresource;
            a.ns = z->ns;
            a.name = z->name;
        }
    } else {
        size_t i = 0;
        for (; method[i] && i < sizeof verb - 1; i++)
            verb[i] = (char)tolower((unsigned char)method[i]);
        verb[i] = 0;
        a.verb = verb;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, ip, sizeof ip);
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, ip, sizeof ip);
    audit_event ev;
    audit_event_begin(&ev, srv->audit_policy, &a);
    if (ev.level == AUDIT_NONE) return;
    ev.code = rs->code;
    ev.message = rs->code >= 400 ? json_string_value(json_object_get(rs->json, "message")) : NULL;
    ev.decision = rq->decision;
    ev.reason = rq->reason;
    json_t *body = NULL;
    if (ev.level >= AUDIT_REQUEST && rq->body && rq->body_len)
        body = json_loadb(rq->body, rq->body_len, 0, NULL); /* (protobuf bodies: left out) */
    ev.request = body;
    ev.response = ev.level >= AUDIT_REQUEST_RESPONSE ? rs->json : NULL;
    if (audit_log_stage(srv->audit, &ev, &a,
                        rs->st.read ? AUDIT_STAGE_STARTED : AUDIT_STAGE_COMPLETE) != 0)
        log_msg(LOG_ERROR, "cannot write the audit log", NULL);
    json_decref(body);
}

/* The store's writer: the revision a parked response waits for is durable. */
static void on_durable(void *arg, bool ok)
{
    waker *w = arg;
    waker_wake(w);
    waker_release(w);
}

/* Send an answered request's response, and account for it. */
static enum MHD_Result finish(http_server *h, struct MHD_Connection *c, waker *w,
                              const char *method, conn_state *cs)
{
    req *rq = &cs->rq;
    resp *rs = &cs->rs;
    /* (a watch gives its seat back once it streams: long-running requests
     * hold none, as upstream) */
    if (rq->seated) inflight_leave(h->srv->inflight, rq->user->name);
    rq->seated = false;
    enum MHD_Result ret = send_resp(c, w, rs);
    double secs = clock_mono_s() - cs->t0;
    metrics_request(h->srv->m, rq->verb, rq->resource, rs->code, secs);
    log_request(rq, cs, rs->code, secs);
    if (h->srv->audit) audit_request(h->srv, c, cs, method, rq, rs);
    resp_clear(rs);
    memset(rs, 0, sizeof *rs);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    http_server *h = cls;
    conn_state *cs = *con_cls;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    waker *w = ci ? ci->socket_context : NULL;
    if (!cs || !w) return MHD_NO;
    if (!cs->started) {
        cs->started = true;
        guard_release(h, w);
        return MHD_YES;
    }
    if (*upload_size) {
        if (!cs->too_large && dbuf_add(&cs->body, upload, *upload_size) != 0) {
            cs->too_large = true;
            dbuf_free(&cs->body);
        }
        *upload_size = 0;
        return MHD_YES;
    }
    store *st = h->srv->st;
    if (!cs->answered) {
        /* The handler's commits do not wait for the disk: the response
         * does, parked, and the store's writer resumes it. */
        store_defer_durability(true);
        handle(h, c, w, method, cs, &cs->rs, &cs->rq, &cs->ident);
        cs->rev = store_deferred_rev();
        store_defer_durability(false);
        cs->answered = true;
        if (cs->rev) {
            waker_hold(w); /* on_durable's */
            int r = store_when_durable(st, cs->rev, on_durable, w);
            if (r != 1) waker_release(w);
            if (r < 0) store_wait_durable(st, cs->rev); /* (out of memory) */
        }
    }
    while (cs->rev && !store_is_durable(st, cs->rev)) {
        char why[512];
        if (store_rev_failed(st, cs->rev, why, sizeof why)) {
            /* the backend refused the write: nothing of it was published */
            resp_clear(&cs->rs);
            memset(&cs->rs, 0, sizeof cs->rs);
            resp_errf(&cs->rs, API_INTERNAL, "Internal error occurred: %s", why);
            break;
        }
        if (atomic_load(&h->stopping)) { /* (no parking now: wait here) */
            if (store_wait_durable(st, cs->rev) == 0 || !store_rev_failed(st, cs->rev, NULL, 0))
                break; /* durable, or the store closed */
            continue;  /* failed: answered above */
        }
        if (waker_park(w)) return MHD_YES; /* on_durable resumes it: here again */
    }
    return finish(h, c, w, method, cs);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    conn_state *cs = *con_cls;
    if (!cs) return;
    if (cs->rq.seated) inflight_leave(((http_server *)cls)->srv->inflight, cs->rq.user->name);
    resp_clear(&cs->rs);
    if (cs->rs.st.read) cs->rs.st.free(cs->rs.st.ctx); /* (answered, never sent) */
    dbuf_free(&cs->body);
    impersonate_free(cs->imp);
    free(cs->path);
    free(cs->uri);
    free(cs);
    *con_cls = NULL;
}

unsigned http_connection_limit(void)
{
    /* Each connection holds a descriptor; keep room for the store, the
     * files and the listen socket. */
    struct rlimit rl;
    rlim_t fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
    if (fds == RLIM_INFINITY || fds > HTTP_MAX_CONNECTIONS + 128) fds = HTTP_MAX_CONNECTIONS + 128;
    return fds > 256 ? (unsigned)(fds - 128) : 128;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '"'))
        msg[--n] = '\0';
    for (char *p = msg; *p; p++)
        if (*p == '"' || *p == '\\') *p = '\'';
    log_msg(LOG_DEBUG, "http", "\"detail\":\"%s\"", msg);
}

http_server *http_start(server *srv, const char *bind_addr, int port, const char *cert_pem,
                        const char *key_pem, char *err, size_t errlen)
{
    struct addrinfo hints = {0}, *ai = NULL;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(bind_addr, portstr, &hints, &ai) != 0 || !ai) {
        snprintf(err, errlen, "invalid --bind-address %s", bind_addr);
        return NULL;
    }
    http_server *h = calloc(1, sizeof *h);
    if (!h) {
        freeaddrinfo(ai);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    h->srv = srv;
    h->all.next = h->all.prev = &h->all;
    h->epfd = h->evfd = -1;
    h->sleep_until = INT64_MAX;
    pthread_mutex_init(&h->mu, NULL);
    pthread_mutex_init(&h->tmu, NULL);
    h->waiting = conntrack_new(HTTP_MAX_PER_IP, HTTP_MAX_WAITING, HTTP_HEADER_TIMEOUT_S);
    h->epfd = epoll_create1(EPOLL_CLOEXEC);
    h->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event kick = {.events = EPOLLIN, .data.ptr = NULL};
    if (!h->waiting || h->epfd < 0 || h->evfd < 0 ||
        epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->evfd, &kick) != 0) {
        freeaddrinfo(ai);
        snprintf(err, errlen, "cannot set up the connection timers");
        http_stop(h);
        return NULL;
    }
    if (pthread_create(&h->timer, NULL, timer_main, h) != 0) {
        freeaddrinfo(ai);
        snprintf(err, errlen, "cannot start the http timer thread");
        http_stop(h);
        return NULL;
    }
    h->timer_started = true;
    /* epoll, never select(2): see the top of this file. */
    unsigned flags =
        MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TLS | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    /* With a trust PEM libmicrohttpd asks clients for a certificate
     * (GNUTLS_CERT_REQUEST: optional, not verified in the handshake); the
     * chain is verified against the client CA per connection (auth.h). */
    const char *trust = auth_client_ca_pem(srv->auth);
    /* The logger first, so libmicrohttpd reports option errors through it. */
    h->d = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_HTTPS_MEM_KEY, key_pem,
        MHD_OPTION_HTTPS_MEM_CERT, cert_pem, MHD_OPTION_HTTPS_MEM_TRUST, trust,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        h, MHD_OPTION_URI_LOG_CALLBACK, on_uri, h, MHD_OPTION_CONNECTION_LIMIT,
        http_connection_limit(), MHD_OPTION_THREAD_POOL_SIZE, http_workers(),
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_TIMEOUT_S,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONNECTION_POOL, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!h->d) {
        snprintf(err, errlen, "cannot listen on %s:%d", bind_addr, port);
        http_stop(h);
        return NULL;
    }
    return h;
}

void http_stop(http_server *h)
{
    if (!h) return;
    if (h->d) {
        /* Every connection is woken; from now on none parks: a watch ends
         * its stream, a response waiting for its durability waits on its
         * worker. libmicrohttpd refuses to stop with a connection parked. */
        atomic_store(&h->stopping, true);
        pthread_mutex_lock(&h->mu);
        size_t n = 0, cap = 16;
        waker **v = malloc(cap * sizeof *v);
        for (waker *w = h->all.next; v && w != &h->all; w = w->next) {
            if (n == cap) {
                waker **nv = realloc(v, (cap *= 2) * sizeof *v);
                if (!nv) break;
                v = nv;
            }
            waker_hold(w);
            v[n++] = w;
        }
        pthread_mutex_unlock(&h->mu);
        for (size_t i = 0; i < n; i++) {
            waker_wake(v[i]);
            waker_release(v[i]);
        }
        free(v);
        for (int i = 0; i < 500 && atomic_load(&h->nparked) > 0; i++)
            nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL);
        MHD_stop_daemon(h->d); /* every connection CLOSED */
    }
    if (h->timer_started) {
        pthread_mutex_lock(&h->mu);
        h->stop = true;
        pthread_mutex_unlock(&h->mu);
        timer_kick(h);
        pthread_join(h->timer, NULL); /* (it releases what was retired) */
    }
    if (h->epfd >= 0) close(h->epfd);
    if (h->evfd >= 0) close(h->evfd);
    conntrack_free(h->waiting);
    free(h->heap);
    free(h->retired);
    pthread_mutex_destroy(&h->tmu);
    pthread_mutex_destroy(&h->mu);
    free(h);
}
