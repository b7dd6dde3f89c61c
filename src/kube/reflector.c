/* reflector.c - kube_reflector: one collection kept in step with the API
 * server on its own thread (kube.h).
 *
 * The thread alternates LIST and WATCH as client-go's reflector does:
 *   LIST   paged (limit/continue), a consistent read (no resourceVersion:
 *          etcd's latest, never the API server's possibly older cache);
 *          the items and the list's resourceVersion go to ops->replace. A continue token that
 * expired (410) restarts the list from the first page. WATCH  from the last resourceVersion seen,
 * with bookmarks and a jittered timeoutSeconds. Events go to ops->event as they arrive; a clean end
 * resumes at once; 410 (as the HTTP status or an ERROR event) means the resourceVersion is gone:
 * relist; anything else backs off (100 ms doubling to 30 s, jittered) and resumes.
 *
 * Sleeping: transfers run on the reflector's own curl multi handle and
 * block in curl_multi_poll, which returns when bytes arrive, when one of
 * curl's own timers is due, or when kube_reflector_stop calls
 * curl_multi_wakeup; backoff waits on a condition variable stop signals.
 * So an idle reflector uses no CPU and stop is prompt (no polling).
 *
 * Invariant: callbacks run only on the reflector's thread, and never after
 * kube_reflector_stop returns (it joins the thread).
 */
#include "kube/kube_internal.h"
#include "kube/watch.h"

#include "core/dbuf.h"
#include "util/clock.h"
#include "util/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_LIMIT 500
#define LIST_TIMEOUT_MS 120000L
#define BACKOFF_BASE_MS 100
#define BACKOFF_CAP_MS 30000
#define WATCH_MIN_S 300 /* timeoutSeconds in [5, 10) minutes, as client-go */
#define WATCH_SPREAD_S 300
#define ERRBODY_MAX 65536
/* a watch that ran this long, or delivered an event, was healthy: a
 * failure after it backs off from the start again */
#define WATCH_HEALTHY_MS 10000

typedef enum { W_ENDED, W_EXPIRED, W_FAILED, W_STOPPED } watch_result;

/* One watch's state, reset per watch; read by the write callback. */
typedef struct watch_state {
    bool checked; /* status read */
    long status;  /* HTTP status */
    dbuf errbody; /* a non-200 response's body (a Status) */
    bool got_event;
    watch_result verdict; /* set by an ERROR event (W_EXPIRED or W_FAILED) */
    bool has_verdict;
    char err[256];
} watch_state;

struct kube_reflector {
    kube_client *c;
    char *path;     /* the collection path */
    char *selector; /* URL-escaped labelSelector, or NULL */
    kube_reflector_ops ops;
    void *arg;
    pthread_t th;
    CURLM *multi;
    CURL *easy;
    atomic_bool stopping, synced;
    pthread_mutex_t mu; /* guards rv (read by other threads); with cv, the backoff sleep */
    pthread_cond_t cv;
    char *rv;
    kube_watch_decoder dec;
    watch_state w;
    uint64_t rng;
    atomic_uint_fast64_t lists, relists_410, watch_restarts, events, bookmarks, failures;
};

static double rand01(kube_reflector *r)
{
    /* xorshift64*: jitter only, not security */
    r->rng ^= r->rng >> 12;
    r->rng ^= r->rng << 25;
    r->rng ^= r->rng >> 27;
    return (double)((r->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static void set_rv(kube_reflector *r, const char *rv)
{
    char *s = strdup(rv);
    if (!s) return; /* keep the older one: resuming from it is still correct */
    pthread_mutex_lock(&r->mu);
    free(r->rv);
    r->rv = s;
    pthread_mutex_unlock(&r->mu);
}

/* Sleep ms, or less when stopped. */
static void nap(kube_reflector *r, long ms)
{
    struct timespec until = clock_deadline(CLOCK_MONOTONIC, ms);
    pthread_mutex_lock(&r->mu);
    while (!atomic_load(&r->stopping))
        if (pthread_cond_timedwait(&r->cv, &r->mu, &until) != 0) break;
    pthread_mutex_unlock(&r->mu);
}

/* Run the prepared r->easy to its end on r->multi. CURLE_OK, a transfer
 * error, or CURLE_ABORTED_BY_CALLBACK when stopped. */
static CURLcode run(kube_reflector *r)
{
    CURLcode res = CURLE_ABORTED_BY_CALLBACK;
    if (curl_multi_add_handle(r->multi, r->easy) != CURLM_OK) return CURLE_OUT_OF_MEMORY;
    while (!atomic_load(&r->stopping)) {
        int running, q;
        if (curl_multi_perform(r->multi, &running) != CURLM_OK) {
            res = CURLE_FAILED_INIT;
            break;
        }
        CURLMsg *m;
        bool done = false;
        while ((m = curl_multi_info_read(r->multi, &q)))
            if (m->msg == CURLMSG_DONE) {
                res = m->data.result;
                done = true;
            }
        if (done) break;
        /* blocks until data, a curl timer, or curl_multi_wakeup */
        if (curl_multi_poll(r->multi, NULL, 0, 60000, NULL) != CURLM_OK) {
            res = CURLE_FAILED_INIT;
            break;
        }
    }
    curl_multi_remove_handle(r->multi, r->easy);
    return res;
}

/* "path?<query>[&labelSelector=..]", malloc'd. */
static char *with_query(const kube_reflector *r, const char *query)
{
    dbuf b;
    dbuf_init(&b, 1 << 20);
    if (dbuf_printf(&b, "%s?%s", r->path, query) ||
        (r->selector && dbuf_printf(&b, "&labelSelector=%s", r->selector))) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b, NULL);
}

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
    return dbuf_add(arg, p, size * n) == 0 ? size * n : 0;
}

/* GET path (a query included) on the reflector's handle: 0 with the
 * status and the parsed body (NULL when not JSON), -1 on transport failure
 * or stop (err says which). */
static int get_json(kube_reflector *r, const char *path, long *status, json_t **body, char *err,
                    size_t errlen)
{
    struct curl_slist *hdrs;
    *body = NULL;
    if (kube_easy_prepare(r->c, r->easy, "GET", path, NULL, NULL, LIST_TIMEOUT_MS, &hdrs, err,
                          errlen))
        return -1;
    dbuf out;
    dbuf_init(&out, KUBE_MAX_RESPONSE);
    curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, &out);
    CURLcode rc = run(r);
    curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdrs);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s", atomic_load(&r->stopping) ? "stopped" : curl_easy_strerror(rc));
        dbuf_free(&out);
        return -1;
    }
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, status);
    if (out.len) *body = json_loadb(out.p, out.len, 0, NULL);
    dbuf_free(&out);
    return 0;
}

/* The kind of a list's items: "ConfigMapList" -> "ConfigMap". */
static void stamp_kind(json_t *item, const char *list_kind, const char *api_version)
{
    size_t n = list_kind ? strlen(list_kind) : 0;
    if (n > 4 && strcmp(list_kind + n - 4, "List") == 0 && !json_object_get(item, "kind"))
        json_object_set_new(item, "kind", json_stringn(list_kind, n - 4));
    if (api_version && !json_object_get(item, "apiVersion"))
        json_object_set_new(item, "apiVersion", json_string(api_version));
}

/* Append one page's items to `items`; its continue token into *cont
 * (NULL at the last page) and its resourceVersion into *rv. */
static int take_page(json_t *page, json_t *items, char **cont, char **rv)
{
    json_t *md = json_object_get(page, "metadata"), *arr = json_object_get(page, "items");
    const char *kind = json_string_value(json_object_get(page, "kind"));
    const char *av = json_string_value(json_object_get(page, "apiVersion"));
    const char *c = json_string_value(json_object_get(md, "continue"));
    const char *v = json_string_value(json_object_get(md, "resourceVersion"));
    if (!v || !(json_is_array(arr) || json_is_null(arr) || !arr)) return -1;
    size_t i;
    json_t *it;
    json_array_foreach(arr, i, it)
    {
        if (!json_is_object(it)) return -1;
        stamp_kind(it, kind, av);
        if (json_array_append(items, it)) return -1;
    }
    free(*cont);
    free(*rv);
    *cont = NULL;
    if (c && *c) {
        char *e = curl_easy_escape(NULL, c, 0); /* curl's memory: curl_free */
        *cont = e ? strdup(e) : NULL;
        curl_free(e);
        if (!*cont) return -1;
    }
    *rv = strdup(v);
    return *rv ? 0 : -1;
}

/* Describe a failed response for the log (the Status's message). */
static void status_err(long status, json_t *body, char *err, size_t errlen)
{
    const char *msg = json_string_value(json_object_get(body, "message"));
    snprintf(err, errlen, "HTTP %ld%s%s", status, msg ? ": " : "", msg ? msg : "");
}

/* LIST every page, then replace. 0, or -1 with err (stopped included). */
static int do_list(kube_reflector *r, char *err, size_t errlen)
{
    json_t *items = json_array();
    char *cont = NULL, *rv = NULL;
    int rc = -1, restarts = 0;
    if (!items) goto out;
    for (;;) {
        char q[64];
        snprintf(q, sizeof q, "limit=%d", PAGE_LIMIT);
        char *path = with_query(r, q), *full = NULL;
        if (path && cont) {
            size_t n = strlen(path) + strlen(cont) + 16;
            if ((full = malloc(n))) snprintf(full, n, "%s&continue=%s", path, cont);
        }
        long status = 0;
        json_t *page = NULL;
        int grc = path && (!cont || full)
                      ? get_json(r, full ? full : path, &status, &page, err, errlen)
                      : (snprintf(err, errlen, "out of memory"), -1);
        free(path);
        free(full);
        if (grc) goto out;
        if (status == 410 && cont && restarts++ < 3) {
            /* the continue token expired mid-list: start over from page one */
            json_decref(page);
            json_array_clear(items);
            free(cont);
            cont = NULL;
            continue;
        }
        if (status != 200 || !page || take_page(page, items, &cont, &rv)) {
            if (status == 200)
                snprintf(err, errlen, "list response is not a list");
            else
                status_err(status, page, err, errlen);
            json_decref(page);
            goto out;
        }
        json_decref(page);
        if (!cont) break;
    }
    if (atomic_load(&r->stopping)) goto out;
    r->ops.replace(r->arg, items, rv);
    set_rv(r, rv);
    atomic_fetch_add(&r->lists, 1);
    atomic_store(&r->synced, true);
    rc = 0;
out:
    json_decref(items);
    free(cont);
    free(rv);
    return rc;
}

static int on_event(void *arg, const kube_watch_event *ev)
{
    kube_reflector *r = arg;
    if (ev->type == KUBE_EV_ERROR) {
        r->w.has_verdict = true;
        r->w.verdict = kube_status_expired(ev->object) ? W_EXPIRED : W_FAILED;
        status_err(ev->code, ev->object, r->w.err, sizeof r->w.err);
        return 1;
    }
    if (ev->rv) set_rv(r, ev->rv);
    if (ev->type == KUBE_EV_BOOKMARK) {
        atomic_fetch_add(&r->bookmarks, 1);
        return 0;
    }
    r->w.got_event = true;
    atomic_fetch_add(&r->events, 1);
    r->ops.event(r->arg, ev->type_name, ev->object);
    return atomic_load(&r->stopping) ? 1 : 0;
}

static size_t on_watch_data(char *p, size_t size, size_t n, void *arg)
{
    kube_reflector *r = arg;
    n *= size;
    if (atomic_load(&r->stopping)) return 0;
    if (!r->w.checked) {
        curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->w.status);
        r->w.checked = true;
    }
    if (r->w.status != 200) {
        dbuf_add(&r->w.errbody, p, n); /* past the bound the rest is dropped */
        return n;
    }
    int rc = kube_watch_feed(&r->dec, p, n, on_event, r, r->w.err, sizeof r->w.err);
    if (rc < 0) {
        r->w.has_verdict = true;
        r->w.verdict = W_FAILED;
    }
    return rc == 0 ? n : 0;
}

/* Judge a finished watch from its transfer result and what it received. */
static watch_result judge(kube_reflector *r, CURLcode rc, int64_t ms)
{
    watch_state *w = &r->w;
    if (atomic_load(&r->stopping)) return W_STOPPED;
    if (w->has_verdict) return w->verdict;
    if (!w->checked) curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &w->status);
    if (rc == CURLE_OK && w->status != 200 && w->status != 0) {
        json_t *st = json_loadb(w->errbody.p ? w->errbody.p : "", w->errbody.len, 0, NULL);
        bool gone = w->status == 410 || kube_status_expired(st);
        status_err(w->status, st, w->err, sizeof w->err);
        json_decref(st);
        return gone ? W_EXPIRED : W_FAILED;
    }
    if (rc != CURLE_OK) {
        snprintf(w->err, sizeof w->err, "%s", curl_easy_strerror(rc));
        return W_FAILED;
    }
    if (kube_watch_pending(&r->dec)) {
        snprintf(w->err, sizeof w->err, "watch stream ended inside an event");
        return W_FAILED;
    }
    if (!w->got_event && ms < 1000) {
        /* a server or proxy closing at once: back off rather than spin */
        snprintf(w->err, sizeof w->err, "watch ended at once");
        return W_FAILED;
    }
    return W_ENDED;
}

static watch_result do_watch(kube_reflector *r, bool *healthy)
{
    char q[512];
    pthread_mutex_lock(&r->mu);
    char *erv = curl_easy_escape(NULL, r->rv, 0);
    pthread_mutex_unlock(&r->mu);
    long secs = WATCH_MIN_S + (long)(rand01(r) * WATCH_SPREAD_S);
    snprintf(q, sizeof q, "watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%ld",
             erv ? erv : "", secs);
    curl_free(erv);
    char *path = with_query(r, q);
    memset(&r->w, 0, sizeof r->w);
    dbuf_init(&r->w.errbody, ERRBODY_MAX);
    kube_watch_reset(&r->dec);
    struct curl_slist *hdrs = NULL;
    *healthy = false;
    if (!path || kube_easy_prepare(r->c, r->easy, "GET", path, NULL, NULL, (secs + 60) * 1000L,
                                   &hdrs, r->w.err, sizeof r->w.err)) {
        free(path);
        if (!r->w.err[0]) snprintf(r->w.err, sizeof r->w.err, "out of memory");
        return W_FAILED;
    }
    free(path);
    curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, on_watch_data);
    curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
    int64_t t0 = clock_mono_ms();
    CURLcode rc = run(r);
    int64_t ms = clock_mono_ms() - t0;
    curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdrs);
    watch_result res = judge(r, rc, ms);
    *healthy = r->w.status == 200 && (r->w.got_event || ms >= WATCH_HEALTHY_MS);
    dbuf_free(&r->w.errbody);
    return res;
}

static void *thread_main(void *arg)
{
    kube_reflector *r = arg;
    bool need_list = true;
    unsigned attempt = 0, expired_in_row = 0;
    char err[256];
    while (!atomic_load(&r->stopping)) {
        if (need_list) {
            if (do_list(r, err, sizeof err) == 0) {
                need_list = false;
            } else {
                if (atomic_load(&r->stopping)) break;
                atomic_fetch_add(&r->failures, 1);
                log_msg(LOG_WARN, "kube list failed",
                        "\"path\":\"%s\",\"error\":\"%s\",\"attempt\":%u", r->path, err, attempt);
                nap(r, kube_backoff_ms(attempt++, BACKOFF_BASE_MS, BACKOFF_CAP_MS, rand01(r)));
                continue;
            }
        }
        bool healthy;
        watch_result w = do_watch(r, &healthy);
        if (w == W_STOPPED) break;
        atomic_fetch_add(&r->watch_restarts, 1);
        if (healthy) attempt = expired_in_row = 0;
        switch (w) {
        case W_ENDED:
            break;
        case W_EXPIRED:
            atomic_fetch_add(&r->relists_410, 1);
            log_msg(LOG_INFO, "kube watch expired, relisting", "\"path\":\"%s\",\"error\":\"%s\"",
                    r->path, r->w.err);
            need_list = true;
            /* the first 410 relists at once; a watch gone again right after
             * its relist (a server or proxy out of step) backs off, so the
             * reflector cannot LIST in a tight loop */
            if (expired_in_row++ > 0)
                nap(r, kube_backoff_ms(attempt++, BACKOFF_BASE_MS, BACKOFF_CAP_MS, rand01(r)));
            break;
        default:
            atomic_fetch_add(&r->failures, 1);
            log_msg(LOG_WARN, "kube watch failed",
                    "\"path\":\"%s\",\"error\":\"%s\",\"attempt\":%u", r->path, r->w.err, attempt);
            nap(r, kube_backoff_ms(attempt++, BACKOFF_BASE_MS, BACKOFF_CAP_MS, rand01(r)));
        }
    }
    return NULL;
}

static void destroy(kube_reflector *r)
{
    if (r->multi) curl_multi_cleanup(r->multi);
    if (r->easy) kube_easy_put(r->c, r->easy);
    kube_watch_cleanup(&r->dec);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r->path);
    curl_free(r->selector);
    free(r->rv);
    free(r);
}

kube_reflector *kube_reflector_start(kube_client *c, const char *path, const char *label_selector,
                                     const kube_reflector_ops *ops, void *arg, char *err,
                                     size_t errlen)
{
    if (!c || !path || path[0] != '/' || strchr(path, '?') || !ops || !ops->replace ||
        !ops->event) {
        snprintf(err, errlen,
                 "kube reflector: needs a client, a collection path without a query, "
                 "and replace and event callbacks");
        return NULL;
    }
    kube_reflector *r = calloc(1, sizeof *r);
    if (!r) goto oom;
    r->c = c;
    r->ops = *ops;
    r->arg = arg;
    pthread_mutex_init(&r->mu, NULL);
    clock_cond_init(&r->cv);
    kube_watch_init(&r->dec, 0);
    r->rng = (uint64_t)clock_wall_ms() ^ ((uint64_t)(uintptr_t)r << 16) ^ 0x9E3779B97F4A7C15ULL;
    if (!(r->path = strdup(path)) || !(r->rv = strdup("")) || !(r->multi = curl_multi_init()) ||
        !(r->easy = kube_easy_get(c)))
        goto oom_r;
    if (label_selector && *label_selector &&
        !(r->selector = curl_easy_escape(NULL, label_selector, 0)))
        goto oom_r;
    if (pthread_create(&r->th, NULL, thread_main, r) != 0) {
        snprintf(err, errlen, "kube reflector: cannot start its thread");
        destroy(r);
        return NULL;
    }
    return r;
oom_r:
    destroy(r);
oom:
    snprintf(err, errlen, "out of memory");
    return NULL;
}

bool kube_reflector_synced(const kube_reflector *r)
{
    return atomic_load(&((kube_reflector *)r)->synced);
}

void kube_reflector_stop(kube_reflector *r)
{
    if (!r) return;
    atomic_store(&r->stopping, true);
    pthread_mutex_lock(&r->mu);
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    curl_multi_wakeup(r->multi); /* wakes the current or the next curl_multi_poll */
    pthread_join(r->th, NULL);
    destroy(r);
}

void kube_reflector_stats_get(const kube_reflector *r, kube_reflector_stats *out)
{
    kube_reflector *m = (kube_reflector *)r; /* atomics are read, not changed */
    out->lists = atomic_load(&m->lists);
    out->relists_410 = atomic_load(&m->relists_410);
    out->watch_restarts = atomic_load(&m->watch_restarts);
    out->events = atomic_load(&m->events);
    out->bookmarks = atomic_load(&m->bookmarks);
    out->failures = atomic_load(&m->failures);
}

void kube_reflector_rv(const kube_reflector *r, char *buf, size_t len)
{
    kube_reflector *m = (kube_reflector *)r;
    pthread_mutex_lock(&m->mu);
    snprintf(buf, len, "%s", m->rv ? m->rv : "");
    pthread_mutex_unlock(&m->mu);
}
