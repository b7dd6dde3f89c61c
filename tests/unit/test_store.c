/* test_store.c - the store's invariants, on the memory and SQLite backends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "store/store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether the indexer knows "things/" keys yet (test_reindex). */
static bool things_known;

static void labels_indexer(const char *key, const json_t *obj, store_index *out)
{
    json_t *l = json_object_get(json_object_get(obj, "metadata"), "labels");
    out->labels = l ? json_incref(l) : NULL;
    if (things_known && !strncmp(key, "things/", 7) && (out->fields = malloc(5)))
        memcpy(out->fields, "v\0x\0", 5); /* packed "v" = "x" */
}

static store *open_memory(size_t history)
{
    store_backend be;
    char err[256];
    store_memory_backend(&be);
    store_config cfg = {history};
    store *s = store_open(&be, labels_indexer, &cfg, err, sizeof err);
    assert_non_null(s);
    return s;
}

static store *open_sqlite_cfg(const char *dir, const store_config *cfg)
{
    store_backend be;
    char err[256];
    assert_int_equal(store_sqlite_open(dir, &be, err, sizeof err), 0);
    store *s = store_open(&be, labels_indexer, cfg, err, sizeof err);
    assert_non_null(s);
    return s;
}

static store *open_sqlite(const char *dir)
{
    return open_sqlite_cfg(dir, NULL);
}

static void put_as(store *s, const char *key, const char *value, bool derived)
{
    store_txn *t = store_begin(s);
    json_t *obj = json_pack("{s:s, s:{s:{s:s}}}", "v", value, "metadata", "labels", "app", value);
    assert_int_equal(
        derived ? store_txn_put_derived(t, key, obj, NULL) : store_txn_put(t, key, obj, NULL), 0);
    json_decref(obj);
    assert_int_equal(store_commit(t), 0);
}

static void put(store *s, const char *key, const char *value)
{
    put_as(s, key, value, false);
}

static void del(store *s, const char *key)
{
    store_txn *t = store_begin(s);
    store_obj *o = store_txn_get(t, key);
    assert_non_null(o);
    json_t *last = store_obj_parse(o);
    store_obj_unref(o);
    assert_int_equal(store_txn_delete(t, key, last), 0);
    json_decref(last);
    assert_int_equal(store_commit(t), 0);
}

/* store_obj_parse_parts: just the named members, as the whole parse has
 * them; members absent stay absent; text jsontext declines is parsed whole. */
static void test_parse_parts(void **state)
{
    (void)state;
    store *s = open_memory(0);
    store_txn *t = store_begin(s);
    json_t *pod =
        json_pack("{s:{s:s, s:s, s:{s:s}, s:[{s:s, s:b}], s:[{s:s, s:{s:{}}}]},"
                  " s:{s:s, s:[{s:s}]}, s:{s:s, s:[{s:s, s:s}]}}",
                  "metadata", "name", "p", "uid", "u-1", "labels", "app", "web", "ownerReferences",
                  "uid", "rs-1", "controller", 1, "managedFields", "manager", "m", "fieldsV1",
                  "f:spec", "spec", "nodeName", "n1", "containers", "name", "c", "status", "phase",
                  "Running", "conditions", "type", "Ready", "status", "True");
    assert_int_equal(store_txn_put(t, "pods/a/p", pod, NULL), 0);
    json_t *odd =
        json_loads("{\"metadata\":{\"l\\\"\\nbels\":1,\"labels\":{\"x\":\"y\"}}}", 0, NULL);
    assert_non_null(odd);
    assert_int_equal(store_txn_put(t, "pods/a/odd", odd, NULL), 0);
    assert_int_equal(store_commit(t), 0);

    store_obj *o = store_get(s, "pods/a/p");
    const char *const paths[] = {"metadata.uid",
                                 "metadata.labels",
                                 "metadata.ownerReferences",
                                 "metadata.deletionTimestamp",
                                 "spec.nodeName",
                                 "status",
                                 NULL};
    json_t *got = store_obj_parse_parts(o, paths);
    json_t *want =
        json_pack("{s:{s:O, s:O, s:O}, s:{s:s}, s:O}", "metadata", "uid",
                  json_object_get(json_object_get(pod, "metadata"), "uid"), "labels",
                  json_object_get(json_object_get(pod, "metadata"), "labels"), "ownerReferences",
                  json_object_get(json_object_get(pod, "metadata"), "ownerReferences"), "spec",
                  "nodeName", "n1", "status", json_object_get(pod, "status"));
    assert_true(json_equal(got, want));
    json_decref(got);
    json_decref(want);
    /* parse_sans: all but the member */
    got = store_obj_parse_sans(o, "metadata.managedFields");
    want = json_deep_copy(pod);
    json_object_del(json_object_get(want, "metadata"), "managedFields");
    assert_true(json_equal(got, want));
    json_decref(got);
    json_decref(want);
    got = store_obj_parse_sans(o, "spec");
    assert_null(json_object_get(got, "spec"));
    assert_non_null(json_object_get(got, "status"));
    json_decref(got);
    got = store_obj_parse_sans(o, "metadata.nothing"); /* absent: the whole object */
    assert_true(json_equal(got, pod));
    json_decref(got);
    const char *const none[] = {"nothing", "metadata.nothing", NULL};
    got = store_obj_parse_parts(o, none);
    assert_int_equal(json_object_size(got), 0);
    json_decref(got);
    store_obj_unref(o);

    /* a key written with escapes before the one asked for (jsontext may
     * decline it: then the whole object): the labels all the same */
    o = store_get(s, "pods/a/odd");
    const char *const labels[] = {"metadata.labels", NULL};
    got = store_obj_parse_parts(o, labels);
    assert_true(json_equal(json_object_get(json_object_get(got, "metadata"), "labels"),
                           json_object_get(json_object_get(odd, "metadata"), "labels")));
    json_decref(got);
    store_obj_unref(o);
    json_decref(odd);
    json_decref(pod);
    store_close(s);
}

static void test_put_get_revision(void **state)
{
    store *s = open_memory(0);
    assert_int_equal(store_revision(s), 0);
    put(s, "pods/a/x", "1");
    put(s, "pods/a/y", "2");
    assert_int_equal(store_revision(s), 2);
    store_obj *o = store_get(s, "pods/a/x");
    assert_non_null(o);
    assert_int_equal(o->rv, 1);
    assert_string_equal(o->ns, "a");
    assert_string_equal(o->name, "x");
    assert_non_null(o->idx.labels);
    store_obj_unref(o);
    assert_null(store_get(s, "pods/a/z"));
    assert_int_equal(store_count(s, "pods"), 2);
    store_close(s);
}

static void test_txn_sees_own_writes_and_abort_discards(void **state)
{
    store *s = open_memory(0);
    store_txn *t = store_begin(s);
    json_t *obj = json_pack("{s:i}", "n", 1);
    store_txn_put(t, "cm/ns/a", obj, NULL);
    store_obj *seen = store_txn_get(t, "cm/ns/a");
    assert_non_null(seen);
    assert_int_equal(seen->rv, store_txn_rev(t));
    store_obj_unref(seen);
    store_obj **v;
    size_t n;
    assert_int_equal(store_txn_list(t, "cm/ns/", &v, &n), 0);
    assert_int_equal(n, 1);
    store_obj_unref(v[0]);
    free(v);
    store_abort(t);
    json_decref(obj);
    assert_null(store_get(s, "cm/ns/a"));
    assert_int_equal(store_revision(s), 0);
    store_close(s);
}

static void test_list_sorted_paged(void **state)
{
    store *s = open_memory(0);
    put(s, "pods/b/2", "x");
    put(s, "pods/a/1", "x");
    put(s, "pods/b/1", "x");
    put(s, "svc/b/1", "x");
    store_obj **v;
    size_t n;
    int64_t rev;
    bool more;
    assert_int_equal(store_list(s, "pods/", NULL, 2, &v, &n, &rev, &more), 0);
    assert_int_equal(n, 2);
    assert_true(more);
    assert_string_equal(v[0]->key, "pods/a/1");
    assert_string_equal(v[1]->key, "pods/b/1");
    char after[64];
    snprintf(after, sizeof after, "%s", v[1]->key);
    store_obj_unref(v[0]);
    store_obj_unref(v[1]);
    free(v);
    assert_int_equal(store_list(s, "pods/", after, 2, &v, &n, &rev, &more), 0);
    assert_int_equal(n, 1);
    assert_false(more);
    assert_string_equal(v[0]->key, "pods/b/2");
    store_obj_unref(v[0]);
    free(v);
    assert_int_equal(store_list(s, "pods/b/", NULL, 0, &v, &n, &rev, &more), 0);
    assert_int_equal(n, 2);
    store_obj_unref(v[0]);
    store_obj_unref(v[1]);
    free(v);
    store_close(s);
}

static void test_watch_events_in_order(void **state)
{
    store *s = open_memory(0);
    put(s, "pods/a/x", "1");
    bool expired;
    store_watch *w = store_watch_open(s, "pods/", store_revision(s), &expired);
    assert_non_null(w);
    put(s, "pods/a/x", "2");
    put(s, "svc/a/x", "1"); /* other prefix: not seen */
    del(s, "pods/a/x");
    store_event ev;
    assert_int_equal(store_watch_next(w, &ev, 1000), 1);
    assert_int_equal(ev.type, STORE_EV_MODIFIED);
    assert_non_null(ev.prev);
    assert_int_equal(ev.prev->rv, 1);
    store_obj_unref(ev.obj);
    store_obj_unref(ev.prev);
    assert_int_equal(store_watch_next(w, &ev, 1000), 1);
    assert_int_equal(ev.type, STORE_EV_DELETED);
    assert_int_equal(ev.rv, 4);
    store_obj_unref(ev.obj);
    store_obj_unref(ev.prev);
    assert_int_equal(store_watch_next(w, &ev, 10), 0); /* nothing more: times out */
    store_watch_close(w);
    store_close(s);
}

/* A wait with no timeout ends with an event, or with store_watch_wake_all:
 * also a wake that came while the owner was not waiting (its stop flag set
 * just before it waited again), once per wake. */
static void test_watch_wait_without_timeout(void **state)
{
    store *s = open_memory(0);
    bool expired;
    store_watch *w = store_watch_open(s, "pods/", store_revision(s), &expired);
    store_watch *late = NULL;
    assert_non_null(w);
    put(s, "pods/a/x", "1");
    store_event ev;
    assert_int_equal(store_watch_next(w, &ev, -1), 1);
    store_obj_unref(ev.obj);
    store_obj_unref(ev.prev);
    store_watch_wake_all(s); /* nobody waiting */
    assert_int_equal(store_watch_next(w, &ev, -1), 0);
    assert_int_equal(store_watch_next(w, &ev, 0), 0); /* answered once: nothing else */
    late = store_watch_open(s, "pods/", store_revision(s), &expired); /* after the wake */
    put(s, "pods/a/y", "1");
    assert_int_equal(store_watch_next(late, &ev, -1), 1); /* the event, not the old wake */
    store_obj_unref(ev.obj);
    store_obj_unref(ev.prev);
    store_watch_close(late);
    store_watch_close(w);
    store_close(s);
}

/* ---- filtered watches: only the events the filter takes wake them ---- */

static bool only_b(void *arg, const store_event *ev)
{
    (*(int *)arg)++;
    return strstr(ev->obj->key, "/b") != NULL;
}

typedef struct waiter {
    store_watch *w;
    int rc;
    char key[64];
} waiter;

static void *wait_one(void *p)
{
    waiter *wt = p;
    store_event ev;
    wt->rc = store_watch_next(wt->w, &ev, 20000);
    if (wt->rc == 1) {
        snprintf(wt->key, sizeof wt->key, "%s", ev.obj->key);
        store_obj_unref(ev.obj);
        store_obj_unref(ev.prev);
    }
    return NULL;
}

static void test_watch_filtered(void **state)
{
    store *s = open_memory(0);
    bool expired;
    int calls = 0;
    store_watch *w =
        store_watch_open_filtered(s, "pods/", store_revision(s), only_b, &calls, &expired);
    assert_non_null(w);
    /* events it does not take: it times out, with its position current (bookmarks) */
    for (int i = 0; i < 20; i++)
        put(s, "pods/n/a", "x");
    store_event ev;
    assert_int_equal(store_watch_next(w, &ev, 10), 0);
    assert_int_equal(store_watch_position(w), store_revision(s));
    assert_true(calls >= 20);
    /* a waiting watch is woken by the event it takes, among others */
    waiter wt = {w, -2, ""};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, wait_one, &wt), 0);
    for (int i = 0; i < 50; i++)
        put(s, "pods/n/a", "y");
    put(s, "svc/n/b", "1"); /* other prefix */
    put(s, "pods/n/b", "1");
    pthread_join(th, NULL);
    assert_int_equal(wt.rc, 1);
    assert_string_equal(wt.key, "pods/n/b");
    store_watch_close(w);
    store_close(s);
}

static void test_watch_expires_past_history(void **state)
{
    store *s = open_memory(4);
    for (int i = 0; i < 10; i++)
        put(s, "pods/a/x", "v");
    bool expired = false;
    assert_null(store_watch_open(s, "pods/", 2, &expired));
    assert_true(expired);
    store_watch *w = store_watch_open(s, "pods/", 7, &expired);
    assert_non_null(w);
    store_watch_close(w);
    store_close(s);
}

/* A watch that read to the end and is then busy (not waiting) when events it
 * takes arrive and fall out of the history has missed them: it expires. Only
 * events it does not take may be dropped behind its back (it then resumes at
 * the oldest kept). Such a watch once skipped the lost events silently: the
 * scheduler, busy with a backlog, never saw 21,000 of 50,000 pods created. */
static void test_watch_busy_expires_past_history(void **state)
{
    store *s = open_memory(4);
    bool expired = false;
    store_event ev;
    store_watch *w = store_watch_open(s, "pods/", store_revision(s), &expired);
    assert_non_null(w);
    assert_int_equal(store_watch_next(w, &ev, 0), 0); /* read to the end, not waiting */
    for (int i = 0; i < 10; i++)                      /* none of its business */
        put(s, "svc/n/a", "v");
    assert_int_equal(store_watch_next(w, &ev, 0), 0);
    put(s, "pods/n/first", "v"); /* its business, then dropped from the history */
    for (int i = 0; i < 10; i++)
        put(s, "pods/n/later", "v");
    assert_int_equal(store_watch_next(w, &ev, 0), -1);
    store_watch_close(w);
    store_close(s);
}

typedef struct writer_arg {
    store *s;
    int id;
} writer_arg;

static void *writer(void *p)
{
    writer_arg *a = p;
    for (int i = 0; i < 200; i++) {
        char key[64];
        snprintf(key, sizeof key, "pods/n%d/p%d", a->id, i);
        put(a->s, key, "x");
    }
    return NULL;
}

static void test_sqlite_concurrent_durable_restart(void **state)
{
    char dir[] = "/tmp/allot-store-XXXXXX";
    assert_non_null(mkdtemp(dir));
    store *s = open_sqlite(dir);
    pthread_t th[8];
    writer_arg args[8];
    for (int i = 0; i < 8; i++) {
        args[i] = (writer_arg){s, i};
        pthread_create(&th[i], NULL, writer, &args[i]);
    }
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    del(s, "pods/n0/p0");
    store_stats st;
    store_get_stats(s, &st);
    assert_int_equal(st.commits, 1601);
    int64_t rev = store_revision(s);
    store_close(s);

    s = open_sqlite(dir);
    assert_int_equal(store_revision(s), rev);
    assert_int_equal(store_count(s, "pods"), 1599);
    assert_null(store_get(s, "pods/n0/p0"));
    store_obj *o = store_get(s, "pods/n7/p199");
    assert_non_null(o);
    assert_non_null(o->idx.labels); /* the indexer ran on load */
    store_obj_unref(o);
    /* Watches resume across the restart from a recent revision. */
    bool expired;
    store_watch *w = store_watch_open(s, "pods/", rev - 1, &expired);
    assert_non_null(w);
    store_event ev;
    assert_int_equal(store_watch_next(w, &ev, 1000), 1);
    assert_int_equal(ev.type, STORE_EV_DELETED);
    assert_string_equal(ev.obj->key, "pods/n0/p0");
    store_obj_unref(ev.obj);
    store_obj_unref(ev.prev);
    store_watch_close(w);
    store_close(s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* What the database file holds for key right now ("" when absent), read
 * through a second connection: what a crash at this moment would leave. */
static void on_disk(const char *dir, const char *key, char *out, size_t n)
{
    char path[256];
    snprintf(path, sizeof path, "%s/allot.db", dir);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT value FROM objects WHERE key = ?", -1, &st, NULL),
        SQLITE_OK);
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    snprintf(out, n, "%s",
             sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : "");
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static const char *value_of(store *s, const char *key, char *buf, size_t n)
{
    store_obj *o = store_get(s, key);
    json_t *j = o ? store_obj_parse(o) : NULL;
    snprintf(buf, n, "%s", j ? json_string_value(json_object_get(j, "v")) : "");
    json_decref(j);
    store_obj_unref(o);
    return buf;
}

/* Derived writes: served and watched at once, persisted coalesced (newest value
 * only, no history event), superseded by a later durable write of the key, and
 * never let a revision be reused after a restart. */
static void test_derived_writes_coalesce(void **state)
{
    char dir[] = "/tmp/allot-store-XXXXXX", buf[256];
    assert_non_null(mkdtemp(dir));
    store_config cfg = {0, 3600 * 1000}; /* no flush by time: only on close */
    store *s = open_sqlite_cfg(dir, &cfg);
    put(s, "pods/a/p", "1");
    int64_t before = store_revision(s);
    bool expired;
    store_watch *w = store_watch_open(s, "resourcequotas/", before, &expired);
    put_as(s, "resourcequotas/a/q", "used-1", true);
    put_as(s, "resourcequotas/a/q", "used-2", true);
    put_as(s, "resourcequotas/a/r", "used-1", true);
    put(s, "resourcequotas/a/r", "spec"); /* durable: supersedes the derived value */
    assert_string_equal(value_of(s, "resourcequotas/a/q", buf, sizeof buf), "used-2");
    store_event ev;
    for (int i = 0; i < 4; i++) { /* every version is watched, in order */
        assert_int_equal(store_watch_next(w, &ev, 1000), 1);
        assert_int_equal(ev.rv, before + 1 + i);
        store_obj_unref(ev.obj);
        store_obj_unref(ev.prev);
    }
    store_watch_close(w);
    on_disk(dir, "resourcequotas/a/q", buf, sizeof buf);
    assert_string_equal(buf, ""); /* not persisted yet: a crash now loses it */
    on_disk(dir, "resourcequotas/a/r", buf, sizeof buf);
    assert_non_null(strstr(buf, "\"spec\""));
    store_stats st;
    store_get_stats(s, &st);
    assert_int_equal(st.derived_writes, 3);
    assert_int_equal(st.derived_flushed, 0);
    int64_t rev = store_revision(s);
    store_close(s); /* flushes what waits */

    s = open_sqlite_cfg(dir, &cfg);
    assert_int_equal(store_revision(s), rev);
    assert_string_equal(value_of(s, "resourcequotas/a/q", buf, sizeof buf), "used-2");
    assert_string_equal(value_of(s, "resourcequotas/a/r", buf, sizeof buf), "spec");
    /* The persisted history holds the durable write only. */
    w = store_watch_open(s, "resourcequotas/", before, &expired);
    assert_non_null(w);
    assert_int_equal(store_watch_next(w, &ev, 1000), 1);
    assert_int_equal(ev.rv, rev);
    store_obj_unref(ev.obj);
    store_obj_unref(ev.prev);
    assert_int_equal(store_watch_next(w, &ev, 10), 0);
    store_watch_close(w);
    /* A derived-only transaction still moves the persisted revision. */
    put_as(s, "resourcequotas/a/q", "used-3", true);
    rev = store_revision(s);
    store_close(s);
    s = open_sqlite_cfg(dir, &cfg);
    assert_int_equal(store_revision(s), rev);
    store_close(s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* An object {"v":"xx..."} whose compact JSON is exactly len bytes (len >= 8). */
static json_t *sized(size_t len, char fill)
{
    char *v = malloc(len - 8 + 1);
    assert_non_null(v);
    memset(v, fill, len - 8);
    v[len - 8] = '\0';
    json_t *o = json_pack("{s:s}", "v", v);
    free(v);
    char *text = json_dumps(o, JSON_COMPACT);
    assert_int_equal(strlen(text), len);
    free(text);
    return o;
}

static size_t stored_len(store *s, const char *key)
{
    store_obj *o = store_get(s, key);
    size_t n = o ? o->len : 0;
    store_obj_unref(o);
    return n;
}

/* The object size limit: a put whose text passes max_object_bytes is
 * STORE_TOO_LARGE, writes nothing and leaves the transaction going; at the
 * limit is fine; derived values have none; an object stored under a larger
 * limit may change without growing, never grow. */
static void test_object_size_limit(void **state)
{
    char dir[] = "/tmp/allot-store-XXXXXX";
    assert_non_null(mkdtemp(dir));
    store_config cfg = {.max_object_bytes = 1000};
    store *s = open_sqlite_cfg(dir, &cfg);
    json_t *at = sized(1000, 'a'), *over = sized(1001, 'b'), *small = sized(10, 'c');
    store_txn *t = store_begin(s);
    assert_int_equal(store_txn_put(t, "cm/a/at", at, NULL), 0);
    assert_int_equal(store_txn_put(t, "cm/a/over", over, NULL), STORE_TOO_LARGE);
    assert_int_equal(store_txn_put(t, "cm/a/at", over, NULL), STORE_TOO_LARGE);
    assert_int_equal(store_txn_put(t, "cm/a/small", small, NULL), 0);
    assert_int_equal(store_txn_put_derived(t, "rq/a/derived", over, NULL), 0);
    assert_int_equal(store_txn_writes(t), 3);
    assert_int_equal(store_commit(t), 0);
    assert_int_equal(stored_len(s, "cm/a/at"), 1000);
    assert_int_equal(stored_len(s, "cm/a/over"), 0);
    assert_int_equal(stored_len(s, "cm/a/small"), 10);
    assert_int_equal(stored_len(s, "rq/a/derived"), 1001);
    store_close(s);

    /* the limit lowered: what is stored stays, may change but not grow */
    cfg.max_object_bytes = 100;
    s = open_sqlite_cfg(dir, &cfg);
    assert_int_equal(stored_len(s, "cm/a/at"), 1000);
    json_t *same = sized(1000, 'd'), *less = sized(500, 'e');
    t = store_begin(s);
    assert_int_equal(store_txn_put(t, "cm/a/at", same, NULL), 0);
    assert_int_equal(store_txn_put(t, "cm/a/at", over, NULL), STORE_TOO_LARGE);
    assert_int_equal(store_txn_put(t, "cm/a/new", less, NULL), STORE_TOO_LARGE);
    assert_int_equal(store_txn_put(t, "cm/a/small", less, NULL), STORE_TOO_LARGE);
    assert_int_equal(store_commit(t), 0);
    assert_int_equal(stored_len(s, "cm/a/small"), 10);
    store_obj *o = store_get(s, "cm/a/at");
    assert_int_equal(o->len, 1000);
    assert_non_null(strstr(o->json, "ddd"));
    store_obj_unref(o);
    store_close(s);

    /* the default: etcd's 1.5 MiB */
    s = open_memory(0);
    json_t *max = sized(STORE_DEFAULT_MAX_OBJECT_BYTES, 'f'),
           *past = sized(STORE_DEFAULT_MAX_OBJECT_BYTES + 1, 'g');
    t = store_begin(s);
    assert_int_equal(store_txn_put(t, "cm/a/max", max, NULL), 0);
    assert_int_equal(store_txn_put(t, "cm/a/past", past, NULL), STORE_TOO_LARGE);
    assert_int_equal(store_commit(t), 0);
    assert_int_equal(stored_len(s, "cm/a/max"), STORE_DEFAULT_MAX_OBJECT_BYTES);
    assert_int_equal(STORE_DEFAULT_MAX_OBJECT_BYTES, 1572864);
    store_close(s);
    json_t *all[] = {at, over, small, same, less, max, past};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        json_decref(all[i]);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* Lists by namespace see only that namespace; counts span all of them. */
static void test_list_by_namespace(void **state)
{
    store *s = open_memory(0);
    put(s, "pods/a/1", "x");
    put(s, "pods/ab/1", "x");
    put(s, "pods/b/1", "x");
    del(s, "pods/b/1");
    store_obj **v;
    size_t n;
    int64_t rev;
    bool more;
    assert_int_equal(store_list(s, "pods/a/", NULL, 0, &v, &n, &rev, &more), 0);
    assert_int_equal(n, 1);
    store_obj_unref(v[0]);
    free(v);
    assert_int_equal(store_list(s, "pods/b/", NULL, 0, &v, &n, &rev, &more), 0);
    assert_int_equal(n, 0);
    free(v);
    assert_int_equal(store_list(s, "pods/a", NULL, 0, &v, &n, &rev, &more), 0);
    assert_int_equal(n, 2); /* a partial namespace is a plain key prefix */
    for (size_t i = 0; i < n; i++)
        store_obj_unref(v[i]);
    free(v);
    assert_int_equal(store_count(s, "pods"), 2);
    store_close(s);
}

static int count_events(const char *dir)
{
    char path[256];
    sqlite3 *db;
    sqlite3_stmt *st;
    snprintf(path, sizeof path, "%s/allot.db", dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM events", -1, &st, NULL), 0);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* The watch history is bounded by bytes as well as by events: 600 updates of
 * a large object keep only what fits, in memory and in the database read
 * back at the next start; a watch from before it gets expired (410), one
 * from inside it sees every later event. */
static void test_history_bounded_by_bytes(void **state)
{
    char dir[] = "/tmp/allot-store-XXXXXX";
    assert_non_null(mkdtemp(dir));
    size_t big = 20000;
    char *v = malloc(big + 1);
    memset(v, 'x', big);
    v[big] = '\0';
    store_config cfg = {.event_history = 100000, .history_bytes = 10 * big};
    store *s = open_sqlite_cfg(dir, &cfg);
    int64_t first = store_revision(s);
    for (int i = 0; i < 600; i++) {
        v[0] = (char)('a' + i % 26);
        put(s, "configmaps/a/big", v);
    }
    int64_t last = store_revision(s);
    /* each update's event counts its value and the previous one: ~2*big */
    int64_t oldest = store_oldest_revision(s);
    assert_true(oldest > last - 10 && oldest < last);
    bool expired = false;
    assert_null(store_watch_open(s, "configmaps/", first, &expired));
    assert_true(expired);
    store_watch *w = store_watch_open(s, "configmaps/", oldest, &expired);
    assert_non_null(w);
    store_event ev;
    int64_t seen = 0;
    while (store_watch_next(w, &ev, 0) > 0) {
        seen++;
        store_obj_unref(ev.obj);
        store_obj_unref(ev.prev);
    }
    assert_int_equal(seen, last - oldest);
    store_watch_close(w);
    store_close(s);
    /* the database keeps what the ring kept, not 600 events */
    int n = count_events(dir);
    assert_true(n > 0 && n <= 12);
    s = open_sqlite_cfg(dir, &cfg);
    assert_int_equal(store_revision(s), last);
    assert_true(store_oldest_revision(s) < last);
    /* a smaller bound at the next start drops the rest from the database too */
    store_close(s);
    store_config small = {.event_history = 100000, .history_bytes = 2 * big};
    s = open_sqlite_cfg(dir, &small);
    store_close(s);
    assert_true(count_events(dir) <= 3);
    free(v);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* store_reindex: objects loaded before their kind was known get their
 * index; values, revisions and other prefixes are untouched, and a reader
 * holding an old version keeps it. */
static void test_reindex(void **state)
{
    char dir[] = "/tmp/allot-store-XXXXXX";
    assert_non_null(mkdtemp(dir));
    things_known = false;
    store *s = open_sqlite(dir);
    put(s, "things/ns/a", "1");
    put(s, "things/ns/b", "2");
    put(s, "pods/ns/p", "3");
    store_close(s);

    s = open_sqlite(dir);
    int64_t rev = store_revision(s);
    store_obj *old = store_get(s, "things/ns/a");
    assert_null(old->idx.fields);
    things_known = true;
    assert_int_equal(store_reindex(s, "things/"), 0);
    store_obj *o = store_get(s, "things/ns/a");
    assert_non_null(o->idx.fields);
    assert_string_equal(o->idx.fields, "v");
    assert_non_null(o->idx.labels);
    assert_int_equal(o->rv, old->rv);
    assert_int_equal(o->len, old->len);
    assert_memory_equal(o->json, old->json, o->len);
    assert_null(old->idx.fields); /* the old version, as its reader saw it */
    store_obj_unref(old);
    store_obj_unref(o);
    o = store_get(s, "pods/ns/p");
    assert_null(o->idx.fields); /* another prefix */
    store_obj_unref(o);
    assert_int_equal(store_revision(s), rev);
    assert_int_equal(store_count(s, "things"), 2);
    /* the watch history was indexed anew too (a resumed watch filters on it) */
    bool expired = false;
    store_watch *w = store_watch_open(s, "things/", 0, &expired);
    assert_non_null(w);
    store_event ev;
    assert_int_equal(store_watch_next(w, &ev, 1000), 1);
    assert_string_equal(ev.obj->key, "things/ns/a");
    assert_non_null(ev.obj->idx.fields);
    store_obj_unref(ev.obj);
    store_obj_unref(ev.prev);
    store_watch_close(w);
    store_close(s);
    things_known = false;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- nothing is published before the backend has it ---- */

/* A backend whose writes wait for the test's go-ahead and fail on demand. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;      /* batches allowed through */
    int fail_next; /* batches to refuse */
    int written;
} gate;

static int gate_load(void *impl, void *ctx,
                     void (*on_object)(void *, const char *, int64_t, const char *, size_t),
                     void (*on_event)(void *, const store_op *), int64_t *rev, char *err,
                     size_t errlen)
{
    *rev = 0;
    return 0;
}

static int gate_write(void *impl, const store_op *ops, size_t n, int64_t rev, char *err,
                      size_t errlen)
{
    gate *g = impl;
    pthread_mutex_lock(&g->mu);
    while (!g->open && !g->fail_next)
        pthread_cond_wait(&g->cv, &g->mu);
    int rc = 0;
    if (g->fail_next) {
        g->fail_next--;
        snprintf(err, errlen, "lost the lease");
        rc = -1;
    } else {
        g->open--;
        g->written++;
    }
    pthread_mutex_unlock(&g->mu);
    return rc;
}

static void gate_close(void *impl)
{
    (void)impl;
}

static void gate_let(gate *g, int open, int fail)
{
    pthread_mutex_lock(&g->mu);
    g->open += open;
    g->fail_next += fail;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static int resets;
static void count_reset(void *arg)
{
    (void)arg;
    resets++;
}

static store *open_gated(gate *g)
{
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    store_backend be = {g, gate_load, gate_write, NULL, gate_close};
    char err[256];
    store *s = store_open(&be, labels_indexer, NULL, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(store_on_reset(s, count_reset, NULL), 0);
    return s;
}

/* A deferred commit: the transaction applied, nobody waiting. */
static int64_t put_deferred(store *s, const char *key, const char *value)
{
    store_defer_durability(true);
    put_as(s, key, value, false);
    int64_t rev = store_deferred_rev();
    store_defer_durability(false);
    return rev;
}

static void test_published_only_when_durable(void **state)
{
    (void)state;
    gate g = {0};
    store *s = open_gated(&g);
    bool expired;
    store_watch *w = store_watch_open(s, "things/", 0, &expired);
    int64_t r1 = put_deferred(s, "things/ns/a", "1");
    /* later transactions see it; readers and watchers do not, yet */
    store_txn *t = store_begin(s);
    store_obj *o = store_txn_get(t, "things/ns/a");
    assert_non_null(o);
    store_obj_unref(o);
    store_abort(t);
    assert_null(store_get(s, "things/ns/a"));
    assert_int_equal(store_revision(s), 0);
    assert_false(store_is_durable(s, r1));
    store_event ev;
    assert_int_equal(store_watch_next(w, &ev, 0), 0);
    gate_let(&g, 1, 0);
    assert_int_equal(store_wait_durable(s, r1), 0);
    o = store_get(s, "things/ns/a");
    assert_non_null(o);
    store_obj_unref(o);
    assert_int_equal(store_revision(s), r1);
    assert_int_equal(store_watch_next(w, &ev, 1000), 1);
    assert_int_equal(ev.rv, r1);
    store_obj_unref(ev.obj);
    store_obj_unref(ev.prev);
    store_watch_close(w);
    gate_let(&g, 100, 0);
    store_close(s);
}

static void test_refused_batch_fails_and_publishes_nothing(void **state)
{
    (void)state;
    gate g = {0};
    resets = 0;
    store *s = open_gated(&g);
    put_deferred(s, "things/ns/keep", "0");
    gate_let(&g, 1, 0);
    assert_int_equal(store_sync(s), 0);
    bool expired;
    store_watch *w = store_watch_open(s, "things/", store_revision(s), &expired);
    /* a and b (which read a) wait; the backend refuses their batch(es) */
    int64_t ra = put_deferred(s, "things/ns/a", "1");
    store_txn *t = store_begin(s);
    store_obj *a = store_txn_get(t, "things/ns/a");
    assert_non_null(a);
    store_obj_unref(a);
    json_t *obj = json_pack("{s:s}", "v", "2");
    assert_int_equal(store_txn_put(t, "things/ns/b", obj, NULL), 0);
    json_decref(obj);
    store_defer_durability(true);
    assert_int_equal(store_commit(t), 0);
    int64_t rb = store_deferred_rev();
    store_defer_durability(false);
    gate_let(&g, 0, 1); /* (b was queued behind a's batch or is in it: one refusal fails both) */
    assert_int_equal(store_wait_durable(s, ra), -1);
    assert_int_equal(store_wait_durable(s, rb), -1);
    char why[128];
    assert_true(store_rev_failed(s, ra, why, sizeof why));
    assert_string_equal(why, "lost the lease");
    assert_true(resets >= 1);
    /* nothing of them anywhere: readers, watchers, transactions */
    assert_null(store_get(s, "things/ns/a"));
    assert_null(store_get(s, "things/ns/b"));
    t = store_begin(s);
    assert_null(store_txn_get(t, "things/ns/a"));
    assert_null(store_txn_get(t, "things/ns/b"));
    store_abort(t);
    store_event ev;
    assert_int_equal(store_watch_next(w, &ev, 0), 0);
    /* the store goes on: a later write is durable and published, with a new
     * revision (a failed one is never reused) */
    int64_t rc = put_deferred(s, "things/ns/c", "3");
    assert_true(rc > rb);
    gate_let(&g, 1, 0);
    assert_int_equal(store_wait_durable(s, rc), 0);
    assert_int_equal(store_watch_next(w, &ev, 1000), 1);
    assert_string_equal(ev.obj->key, "things/ns/c");
    store_obj_unref(ev.obj);
    store_obj_unref(ev.prev);
    assert_int_equal(store_watch_next(w, &ev, 0), 0);
    store_obj *k = store_get(s, "things/ns/keep");
    assert_non_null(k);
    store_obj_unref(k);
    store_watch_close(w);
    gate_let(&g, 100, 0);
    store_close(s);
}

/* ---- changes written elsewhere ---- */

static int observed[3];
static void observe_counts(void *arg, const store_event *ev)
{
    (void)arg;
    observed[ev->type - 1]++;
}

static void test_ingest(void **state)
{
    (void)state;
    store *s = open_memory(100);
    memset(observed, 0, sizeof observed);
    assert_int_equal(store_observe(s, observe_counts, NULL), 0);
    bool expired;
    store_watch *w = store_watch_open(s, "things/", 0, &expired);
    char err[128];
    const char *v1 = "{\"v\":\"1\",\"metadata\":{\"labels\":{\"app\":\"x\"}}}";
    const char *v2 = "{\"v\":\"2\"}";
    store_op add[] = {{STORE_EV_MODIFIED, 5, "things/ns/x", v1, strlen(v1), false},
                      {STORE_EV_ADDED, 5, "things/ns/y", v2, strlen(v2), false}};
    assert_int_equal(store_ingest(s, add, 2, err, sizeof err), 0);
    store_op mod = {STORE_EV_MODIFIED, 7, "things/ns/x", v2, strlen(v2), false};
    assert_int_equal(store_ingest(s, &mod, 1, err, sizeof err), 0);
    store_op del = {STORE_EV_DELETED, 9, "things/ns/y", v2, strlen(v2), false};
    assert_int_equal(store_ingest(s, &del, 1, err, sizeof err), 0);
    /* a revision not after the store's is refused, and nothing applied */
    store_op old = {STORE_EV_ADDED, 9, "things/ns/z", v2, strlen(v2), false};
    assert_int_equal(store_ingest(s, &old, 1, err, sizeof err), -1);
    assert_null(store_get(s, "things/ns/z"));
    assert_int_equal(store_revision(s), 9);
    store_obj *x = store_get(s, "things/ns/x");
    assert_non_null(x);
    assert_int_equal(x->rv, 7);
    assert_null(x->idx.labels); /* indexed anew from its value */
    store_obj_unref(x);
    assert_null(store_get(s, "things/ns/y"));
    /* watchers and observers see what a durable batch shows: ADDED is
     * decided by the store (x was new, whatever the feed called it) */
    store_ev_type want[] = {STORE_EV_ADDED, STORE_EV_ADDED, STORE_EV_MODIFIED, STORE_EV_DELETED};
    for (size_t i = 0; i < 4; i++) {
        store_event ev;
        assert_int_equal(store_watch_next(w, &ev, 0), 1);
        assert_int_equal(ev.type, want[i]);
        if (ev.type == STORE_EV_MODIFIED) assert_non_null(ev.prev);
        store_obj_unref(ev.obj);
        store_obj_unref(ev.prev);
    }
    assert_int_equal(observed[0], 2);
    assert_int_equal(observed[1], 1);
    assert_int_equal(observed[2], 1);
    /* an observer removed is told nothing more; another (arg) still is */
    assert_int_equal(store_observe(s, observe_counts, observed), 0);
    store_unobserve(s, observe_counts, NULL);
    store_op add2 = {STORE_EV_ADDED, 10, "things/ns/w", v2, strlen(v2), false};
    assert_int_equal(store_ingest(s, &add2, 1, err, sizeof err), 0);
    assert_int_equal(observed[0], 3);
    store_unobserve(s, observe_counts, observed);
    store_op del2 = {STORE_EV_DELETED, 11, "things/ns/w", v2, strlen(v2), false};
    assert_int_equal(store_ingest(s, &del2, 1, err, sizeof err), 0);
    assert_int_equal(observed[2], 1);
    for (size_t i = 0; i < 2; i++) { /* (the watch saw them too) */
        store_event ev;
        assert_int_equal(store_watch_next(w, &ev, 0), 1);
        store_obj_unref(ev.obj);
        store_obj_unref(ev.prev);
    }
    store_watch_close(w);
    /* a local write goes on from the revision taken in */
    put_as(s, "things/ns/w", "3", false);
    store_obj *o = store_get(s, "things/ns/w");
    assert_int_equal(o->rv, 12);
    store_obj_unref(o);
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_revision),
        cmocka_unit_test(test_txn_sees_own_writes_and_abort_discards),
        cmocka_unit_test(test_list_sorted_paged),
        cmocka_unit_test(test_watch_events_in_order),
        cmocka_unit_test(test_watch_filtered),
        cmocka_unit_test(test_watch_expires_past_history),
        cmocka_unit_test(test_watch_busy_expires_past_history),
        cmocka_unit_test(test_sqlite_concurrent_durable_restart),
        cmocka_unit_test(test_derived_writes_coalesce),
        cmocka_unit_test(test_list_by_namespace),
        cmocka_unit_test(test_history_bounded_by_bytes),
        cmocka_unit_test(test_reindex),
        cmocka_unit_test(test_parse_parts),
        cmocka_unit_test(test_published_only_when_durable),
        cmocka_unit_test(test_refused_batch_fails_and_publishes_nothing),
        cmocka_unit_test(test_ingest),
        cmocka_unit_test(test_watch_wait_without_timeout),
        cmocka_unit_test(test_object_size_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
