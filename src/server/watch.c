/* watch.c - streaming watches (GET ...?watch=true).
 *
 * A watch is a stream of JSON lines {"type", "object"} read by the HTTP layer
 * through stream.read. It starts with synthetic ADDED events for the current
 * state when no resourceVersion is given (or "0"), then follows the store's
 * durable event history. Label/field selectors apply to both the new and the
 * previous value, so an object that stops matching is seen as DELETED and one
 * that starts matching as ADDED, as upstream's watch cache does.
 *
 * The reader never blocks: with nothing to send it arms its store watch
 * (store_watch_poll) and a timer for its deadline or next bookmark, and
 * returns 0; its connection is parked, holding no thread, until the store
 * notifies an event it takes, the timer fires or the client hangs up
 * (server.h's waker). Each user may hold srv->watches' limit of open
 * watches (429 past it); a client that stops reading is cut by the HTTP
 * layer's stream timeout, and what it has not read is the store's shared
 * history, never a copy of its own.
 */
#include "server/server.h"
#include "core/jdump.h"

#include "api/kinds.h"
#include "api/table.h"
#include "core/dbuf.h"
#include "core/selector.h"
#include "registry/registry.h"
#include "server/filter.h"
#include "server/inflight.h"
#include "server/metrics.h"
#include "util/clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A watch asking for longer ends after a day; clients re-watch (and the
 * deadline arithmetic cannot overflow). */
#define MAX_TIMEOUT_S 86400L
#define DEFAULT_TIMEOUT_S 1800
#define BOOKMARK_EVERY_S 5

typedef struct watch_ctx {
    server *srv;
    const api_kind *kind;
    store_watch *w;
    list_filter f;
    char *name; /* single-object watch, or NULL */
    waker *wk;  /* its connection's (the stream holds a reference) */
    char *user; /* counted in srv->watches, or NULL */
    bool table, table_header_sent, bookmarks, initial_end_bookmark;
    char *include_object;
    store_obj **initial;
    size_t ninitial, next_initial;
    int64_t initial_rev;
    int64_t deadline_ms, last_send_ms; /* monotonic */
    dbuf out;
    size_t out_pos;
    bool done;
} watch_ctx;

static bool matches(const watch_ctx *c, const store_obj *o)
{
    if (!o) return false;
    if (c->name && strcmp(o->name, c->name) != 0) return false;
    return filter_match(&c->f, o);
}

/* store_watch_filter: the events this watch may send (ADDED, MODIFIED or
 * DELETED for an object that matches now or matched before); the store
 * never wakes it for the others. */
static bool takes(void *arg, const store_event *ev)
{
    const watch_ctx *c = arg;
    return matches(c, ev->obj) || (ev->prev && matches(c, ev->prev));
}

/* The object as the watch's kind serves it: a kind whose objects may be
 * stored in another version gets its own apiVersion (api_kind_to_version). */
static json_t *served_obj(const watch_ctx *c, const store_obj *o)
{
    json_t *obj = store_obj_parse(o);
    if (obj) api_kind_to_version(c->kind, obj);
    return obj;
}

static void emit(watch_ctx *c, const char *type, const store_obj *o)
{
    if (!c->table) {
        dbuf_printf(&c->out, "{\"type\":\"%s\",\"object\":", type);
        if (api_kind_rewrites_reads(c->kind)) {
            json_t *obj = served_obj(c, o);
            char *text = obj ? jdump(obj, NULL) : NULL;
            dbuf_adds(&c->out, text ? text : "null");
            free(text);
            json_decref(obj);
        } else {
            dbuf_add(&c->out, o->json, o->len);
        }
        dbuf_adds(&c->out, "}\n");
        return;
    }
    json_t *items = json_array();
    json_array_append_new(items, served_obj(c, o));
    json_t *tbl = table_build(c->kind, items, c->include_object, now_unix(), NULL);
    json_decref(items);
    if (c->table_header_sent) json_object_set_new(tbl, "columnDefinitions", json_array());
    c->table_header_sent = true;
    json_t *ev = json_pack("{s:s, s:o}", "type", type, "object", tbl);
    char *text = jdump(ev, NULL);
    json_decref(ev);
    if (text) {
        dbuf_adds(&c->out, text);
        dbuf_adds(&c->out, "\n");
        free(text);
    }
}

static void emit_bookmark(watch_ctx *c, int64_t rv, bool initial_end)
{
    char av[128];
    api_kind_api_version(c->kind, av, sizeof av);
    dbuf_printf(&c->out,
                "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\","
                "\"metadata\":{\"resourceVersion\":\"%lld\"%s}}}\n",
                c->kind->kind, av, (long long)rv,
                initial_end ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}" : "");
}

static void emit_error(watch_ctx *c, const api_err *e)
{
    json_t *ev = json_pack("{s:s, s:o}", "type", "ERROR", "object", api_err_status(e));
    char *text = jdump(ev, NULL);
    json_decref(ev);
    if (text) {
        dbuf_adds(&c->out, text);
        dbuf_adds(&c->out, "\n");
        free(text);
    }
}

/* Produce the next event or initial object into c->out, without waiting.
 * Returns whether it produced anything (or ended the watch); false when
 * there is nothing yet: the store watch is then armed. */
static bool produce(watch_ctx *c)
{
    if (c->next_initial < c->ninitial) {
        store_obj *o = c->initial[c->next_initial++];
        if (matches(c, o)) emit(c, "ADDED", o);
        if (c->next_initial == c->ninitial && c->initial_end_bookmark)
            emit_bookmark(c, c->initial_rev, true);
        return true;
    }
    store_event ev;
    int rc = store_watch_poll(c->w, &ev);
    if (rc < 0) {
        if (!c->srv->stopping) {
            api_err e;
            api_err_init(&e);
            api_err_set(&e, API_GONE, "too old resource version: %lld (%lld)",
                        (long long)store_watch_position(c->w),
                        (long long)store_oldest_revision(c->srv->st));
            emit_error(c, &e);
            api_err_clear(&e);
        }
        c->done = true;
        return true;
    }
    if (rc == 0) return false;
    bool now = matches(c, ev.obj);
    bool before = ev.type == STORE_EV_MODIFIED && matches(c, ev.prev);
    if (ev.type == STORE_EV_DELETED) {
        if (now) emit(c, "DELETED", ev.obj);
    } else if (ev.type == STORE_EV_ADDED) {
        if (now) emit(c, "ADDED", ev.obj);
    } else if (now) {
        /* A MODIFIED whose previous value is unknown (restart) counts as matching. */
        emit(c, before || !ev.prev ? "MODIFIED" : "ADDED", ev.obj);
    } else if (before) {
        emit(c, "DELETED", ev.obj);
    }
    store_obj_unref(ev.obj);
    store_obj_unref(ev.prev);
    return true;
}

static long watch_read(void *ctx, char *buf, size_t max)
{
    watch_ctx *c = ctx;
    for (;;) {
        if (c->out_pos < c->out.len) {
            size_t n = c->out.len - c->out_pos;
            if (n > max) n = max;
            memcpy(buf, c->out.p + c->out_pos, n);
            c->out_pos += n;
            if (c->out_pos == c->out.len) { /* an idle watch keeps no buffer */
                dbuf_free(&c->out);
                c->out_pos = 0;
            }
            c->last_send_ms = clock_mono_ms();
            return (long)n;
        }
        int64_t now = clock_mono_ms();
        if (c->done || c->srv->stopping || now >= c->deadline_ms || waker_hung_up(c->wk)) return -1;
        /* What is ready as well goes in the same chunk: a burst (a ledger
         * flush writes many quotas at once, the initial objects) is one TLS
         * record and one wakeup of the client, not one per event. */
        if (produce(c)) {
            while (!c->done && c->out.len < max && produce(c))
                ;
            continue;
        }
        int64_t wake = c->deadline_ms;
        if (c->bookmarks) {
            int64_t due = c->last_send_ms + BOOKMARK_EVERY_S * 1000;
            if (now >= due) {
                emit_bookmark(c, store_watch_position(c->w), false);
                continue;
            }
            if (due < wake) wake = due;
        }
        waker_set_timer(c->wk, wake);
        return 0; /* parked until the store, the timer or a hang-up wakes it */
    }
}

static void watch_free(void *ctx)
{
    watch_ctx *c = ctx;
    for (size_t i = c->next_initial; i < c->ninitial; i++)
        store_obj_unref(c->initial[i]);
    for (size_t i = 0; i < c->next_initial; i++)
        store_obj_unref(c->initial[i]);
    free(c->initial);
    store_watch_close(c->w);
    filter_free(&c->f);
    free(c->name);
    free(c->include_object);
    dbuf_free(&c->out);
    if (c->user) inflight_leave(c->srv->watches, c->user);
    free(c->user);
    metrics_watch_delta(c->srv->m, -1);
    free(c);
}

/* store_watch_open_notify's notify: an event for it arrived. */
static void watch_notify(void *arg)
{
    waker_wake(arg);
}

/* A place among the user's open watches (srv->watches), for all but
 * system:masters: false with upstream's 429 in rs when the user holds its
 * limit. */
static bool watch_seat(req *rq, watch_ctx *c, resp *rs)
{
    if (!rq->srv->watches || !rq->user) return true;
    for (size_t i = 0; i < rq->user->ngroups; i++)
        if (!strcmp(rq->user->groups[i], RBAC_SYSTEM_MASTERS)) return true;
    if (!inflight_enter(rq->srv->watches, rq->user->name)) {
        resp_errf(rs, API_TOO_MANY_REQUESTS, "Too many requests, please try again later.");
        json_object_set_new(rs->json, "details", json_pack("{s:i}", "retryAfterSeconds", 1));
        rs->retry_after = 1;
        return false;
    }
    if (!(c->user = strdup(rq->user->name))) inflight_leave(rq->srv->watches, rq->user->name);
    return true;
}

void watch_start(req *rq, resp *rs, const void *kindp, const char *ns, const char *name)
{
    const api_kind *k = kindp;
    char prefix[600], res[256];
    watch_ctx *c = calloc(1, sizeof *c);
    if (!c) return resp_errf(rs, API_INTERNAL, "out of memory");
    c->srv = rq->srv;
    c->kind = k;
    c->wk = rq->waker;
    c->table = rq->accept && strstr(rq->accept, "as=Table");
    dbuf_init(&c->out, (size_t)64 << 20);
    api_err e;
    api_err_init(&e);
    if (!c->wk) {
        resp_errf(rs, API_INTERNAL, "this connection cannot stream");
        goto fail;
    }
    if (!watch_seat(rq, c, rs)) goto fail;
    if (filter_parse(rq, k, &c->f, &e) != 0) {
        resp_err(rs, &e);
        api_err_clear(&e);
        goto fail;
    }
    if (name) c->name = strdup(name);
    const char *io = rq->query(rq, "includeObject");
    if (io) c->include_object = strdup(io);
    c->bookmarks = query_bool(rq, "allowWatchBookmarks");
    /* Upstream parses timeoutSeconds as an int64 (400 past it) and takes any
     * value; here one over a day is a day, so the deadline cannot overflow. */
    int64_t timeout = 0;
    if (query_int64(rq, "timeoutSeconds", &timeout, &e) < 0) {
        resp_err(rs, &e);
        api_err_clear(&e);
        goto fail;
    }
    if (timeout > MAX_TIMEOUT_S) timeout = MAX_TIMEOUT_S;
    c->deadline_ms = clock_mono_ms() + 1000 * (timeout > 0 ? timeout : DEFAULT_TIMEOUT_S);
    c->last_send_ms = clock_mono_ms();

    api_kind_store_resource(k, res, sizeof res);
    if (k->namespaced && ns && *ns)
        snprintf(prefix, sizeof prefix, "%s/%s/", res, ns);
    else
        snprintf(prefix, sizeof prefix, "%s/", res);

    const char *rvs = rq->query(rq, "resourceVersion");
    bool send_initial = query_bool(rq, "sendInitialEvents");
    bool initial = !rvs || !*rvs || !strcmp(rvs, "0") || send_initial;
    int64_t from = 0;
    if (rvs && *rvs) {
        char *end;
        errno = 0;
        from = strtoll(rvs, &end, 10);
        if (*end || from < 0 || errno == ERANGE || *rvs == '-' || *rvs == '+') {
            api_err_set(&e, API_BAD_REQUEST,
                        "invalid resource version: strconv.ParseUint: parsing \"%s\": %s", rvs,
                        errno == ERANGE ? "value out of range" : "invalid syntax");
            resp_err(rs, &e);
            api_err_clear(&e);
            goto fail;
        }
    }
    if (initial) {
        store_list(rq->srv->st, prefix, NULL, 0, &c->initial, &c->ninitial, &c->initial_rev, NULL);
        reg_read_views(rq->srv->st, k, c->initial, c->ninitial);
        from = c->initial_rev;
        c->initial_end_bookmark = send_initial && c->bookmarks;
    }
    bool expired = false;
    c->w =
        store_watch_open_notify(rq->srv->st, prefix, from, takes, c, watch_notify, c->wk, &expired);
    if (!c->w && !expired) {
        resp_errf(rs, API_INTERNAL, "out of memory");
        goto fail;
    }
    if (expired) {
        /* Upstream answers 200 and sends the 410 as the stream's only event. */
        api_err_set(&e, API_GONE, "too old resource version: %lld (%lld)", (long long)from,
                    (long long)store_oldest_revision(rq->srv->st));
        emit_error(c, &e);
        api_err_clear(&e);
        c->done = true;
    }
    metrics_watch_delta(rq->srv->m, 1);
    rs->code = 200;
    rs->st = (stream){watch_read, watch_free, c};
    return;
fail:
    if (c->user) inflight_leave(rq->srv->watches, c->user);
    free(c->user);
    filter_free(&c->f);
    free(c->name);
    free(c->include_object);
    for (size_t i = 0; i < c->ninitial; i++)
        store_obj_unref(c->initial[i]);
    free(c->initial);
    dbuf_free(&c->out);
    free(c);
}
