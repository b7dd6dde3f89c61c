/* http.c - libmicrohttpd glue: TLS, request bodies, authentication, responses.
 *
 * One thread per connection: handlers block while their write becomes
 * durable (group commit) and watches block between events, so a thread per
 * connection keeps both simple. Bodies are accumulated up to upstream's 3 MiB
 * limit; past it the request is answered 413 without buffering the rest.
 *
 * What one client can hold (issue 12: ~1,030 idle TCP connections used to
 * lock every client out for the 300 s idle timeout):
 *  - connections are polled with poll(2), never select(2): select cannot
 *    watch a descriptor above 1023, and libmicrohttpd refused every
 *    connection past it;
 *  - HTTP_MAX_PER_IP connections per client address (more are accepted and
 *    closed at once, so the listen queue never fills), and a global limit as
 *    large as the descriptor limit allows (HTTP_MAX_CONNECTIONS);
 *  - a connection must finish its TLS handshake and the headers of its first
 *    request within HTTP_HEADER_TIMEOUT_S of being accepted, however slowly
 *    it trickles bytes (libmicrohttpd's own timeout is an idle timeout that
 *    each byte resets; upstream's ReadHeaderTimeout is absolute too). The
 *    guard thread below shuts such connections down; after its first request
 *    a connection is governed by the idle timeout (HTTP_IDLE_TIMEOUT_S),
 *    longer than clients' keep-alive pools (client-go: 90 s) so a client never
 *    races the server closing an idle connection.
 */
#include "server/http.h"
#include "server/authz.h"
#include "server/impersonate.h"

#include "core/urlpath.h"
#include "server/inflight.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/ui.h"
#include "util/clock.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

/* One accepted connection until it has sent the headers of a request; it
 * then stays with the connection to remember its client certificate's
 * verdict (the certificate cannot change on a connection, so it is verified
 * once, on the first request). */
typedef struct conn_guard {
    int fd;
    double t0;
    bool active; /* headers of a request received: no longer the guard's */
    bool shut;
    struct conn_guard *prev, *next;
    bool cert_known; /* cert below is decided (only this connection's thread touches it) */
    auth_cert_result cert;
    auth_ident *cert_user; /* when cert == AUTH_CERT_OK */
} conn_guard;

struct http_server {
    server *srv;
    struct MHD_Daemon *d;
    pthread_mutex_t mu; /* guards, stop */
    pthread_cond_t wake;
    conn_guard head; /* circular list of connections not yet active */
    bool stop, guard_started;
    pthread_t guard;
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
} conn_state;

static const char *query(const req *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

static ssize_t stream_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    stream *st = cls;
    long n = st->read(st->ctx, buf, max);
    return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

static void stream_free_cb(void *cls)
{
    stream *st = cls;
    st->free(st->ctx);
    free(st);
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

static enum MHD_Result send_resp(struct MHD_Connection *c, resp *rs)
{
    struct MHD_Response *r;
    if (rs->st.read) {
        stream *st = malloc(sizeof *st);
        if (!st) {
            rs->st.free(rs->st.ctx);
            return MHD_NO;
        }
        *st = rs->st;
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, stream_cb, st,
                                              stream_free_cb);
        if (!r) {
            stream_free_cb(st);
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
            body = rs->json ? json_dumps(rs->json, JSON_COMPACT) : strdup("");
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

static bool is_health(const char *url)
{
    return !strcmp(url, "/healthz") || !strcmp(url, "/livez") || !strcmp(url, "/readyz") ||
           !strncmp(url, "/healthz/", 9) || !strncmp(url, "/livez/", 7) ||
           !strncmp(url, "/readyz/", 8);
}

/* The client certificate's verdict: computed once per connection when the
 * connection has its guard, else for this request (into scratch). */
static auth_cert_result client_cert(const auth_t *a, struct MHD_Connection *c, auth_ident *scratch,
                                    const auth_user **user)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    conn_guard *g = ci ? ci->socket_context : NULL;
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
static void handle(http_server *h, struct MHD_Connection *c, const char *method, conn_state *cs,
                   resp *rs, req *rq, auth_ident *ident)
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
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    rq->fd = ci ? ci->connect_fd : -1;
    rs->code = 200;

    if (is_health(url)) {
        rq->verb = "HEALTH";
        rs->raw = strdup(srv->stopping ? "shutting down" : "ok");
        rs->raw_len = rs->raw ? strlen(rs->raw) : 0;
        rs->content_type = "text/plain; charset=utf-8";
        if (srv->stopping) rs->code = 503;
        return;
    }
    if (ui_path(url)) {
        serve_ui(rq, rs);
        return;
    }
    const char *authz =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    rq->user = authenticate(srv, c, authz, ident);
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
    if (code >= 500)
        log_msg(LOG_ERROR, "request failed", "\"verb\":\"%s\",\"path\":\"%s\",\"code\":%d",
                rq->verb, path, code);
    else
        log_msg(LOG_DEBUG, "request",
                "\"verb\":\"%s\",\"path\":\"%s\",\"code\":%d,\"seconds\":%.6f", rq->verb, path,
                code, secs);
}

/* ---- the header deadline: a thread that shuts down connections too slow
 * to present a request. The socket is shut down (not closed) under h->mu,
 * and libmicrohttpd notifies CLOSED (which takes h->mu) before it closes the
 * descriptor, so the descriptor shut down is never one reused since. ---- */

static void guard_unlink(conn_guard *g)
{
    if (!g->prev) return;
    g->prev->next = g->next;
    g->next->prev = g->prev;
    g->prev = g->next = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    http_server *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        conn_guard *g = calloc(1, sizeof *g);
        if (!g || !ci) {
            free(g);
            return; /* unguarded: the idle timeout still applies */
        }
        g->fd = ci->connect_fd;
        g->t0 = clock_mono_s();
        pthread_mutex_lock(&h->mu);
        g->next = &h->head;
        g->prev = h->head.prev;
        h->head.prev->next = g;
        h->head.prev = g;
        pthread_mutex_unlock(&h->mu);
        *socket_context = g;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        conn_guard *g = *socket_context;
        pthread_mutex_lock(&h->mu);
        guard_unlink(g);
        pthread_mutex_unlock(&h->mu);
        free(g->cert_user);
        free(g);
        *socket_context = NULL;
    }
}

/* The headers of a request arrived: the connection is no longer the guard's. */
static void guard_release(http_server *h, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    conn_guard *g = ci ? ci->socket_context : NULL;
    if (!g || g->active) return; /* active is only ever set by this connection's thread */
    pthread_mutex_lock(&h->mu);
    g->active = true;
    guard_unlink(g);
    pthread_mutex_unlock(&h->mu);
}

static void *guard_main(void *arg)
{
    http_server *h = arg;
    pthread_mutex_lock(&h->mu);
    while (!h->stop) {
        struct timespec ts = clock_deadline(CLOCK_MONOTONIC, 250);
        pthread_cond_timedwait(&h->wake, &h->mu, &ts);
        double cutoff = clock_mono_s() - HTTP_HEADER_TIMEOUT_S;
        /* oldest first: stop at the first connection still within its time */
        for (conn_guard *g = h->head.next; g != &h->head && g->t0 < cutoff; g = g->next) {
            if (g->shut) continue;
            g->shut = true;
            shutdown(g->fd, SHUT_RDWR);
        }
    }
    pthread_mutex_unlock(&h->mu);
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
    audit_attrs a = {u ? u->name : "system:anonymous", u ? u->uid : "",
                     u ? (const char *const *)u->groups : anon_groups, u ? u->ngroups : 1,
                     NULL, false, "", "", "", "", "", "", cs->uri, ip,
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    http_server *h = cls;
    conn_state *cs = *con_cls;
    if (!cs) return MHD_NO;
    if (!cs->started) {
        cs->started = true;
        guard_release(h, c);
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
    resp rs = {0};
    req rq = {0};
    handle(h, c, method, cs, &rs, &rq, &cs->ident);
    /* (a watch gives its seat back once it streams: long-running requests
     * hold none, as upstream) */
    if (rq.seated) inflight_leave(h->srv->inflight, rq.user->name);
    enum MHD_Result ret = send_resp(c, &rs);
    double secs = clock_mono_s() - cs->t0;
    metrics_request(h->srv->m, rq.verb, rq.resource, rs.code, secs);
    log_request(&rq, cs, rs.code, secs);
    if (h->srv->audit) audit_request(h->srv, c, cs, method, &rq, &rs);
    resp_clear(&rs);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    conn_state *cs = *con_cls;
    if (!cs) return;
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
    h->head.next = h->head.prev = &h->head;
    pthread_mutex_init(&h->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&h->guard, NULL, guard_main, h) != 0) {
        freeaddrinfo(ai);
        snprintf(err, errlen, "cannot start the connection guard thread");
        http_stop(h);
        return NULL;
    }
    h->guard_started = true;
    /* poll(2), not select(2): see the top of this file. */
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_TLS |
                     MHD_USE_ERROR_LOG;
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
        http_connection_limit(), MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)HTTP_MAX_PER_IP,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_TIMEOUT_S, MHD_OPTION_END);
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
    if (h->d) MHD_stop_daemon(h->d); /* every connection CLOSED: the guard list is empty */
    if (h->guard_started) {
        pthread_mutex_lock(&h->mu);
        h->stop = true;
        pthread_cond_signal(&h->wake);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->guard, NULL);
    }
    pthread_cond_destroy(&h->wake);
    pthread_mutex_destroy(&h->mu);
    free(h);
}
