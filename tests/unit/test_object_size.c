/* test_object_size.c - objects stay under the store's size limit whatever
 * writes them, and error answers stay small (issue 26: 14 managers applying
 * one ConfigMap of many keys grew it to 33.7 MB, each manager's fieldsV1
 * listing every key; a 409 to such an apply was tens of MB of causes).
 * Writes go through the registry on a memory store with a small limit, with
 * the admission plugins registered, as allotd runs them; applies are
 * fm_apply in the registry's transaction, as the apply handler's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/fieldmanager.h"
#include "registry/admission.h"
#include "teststore.h"

#include <stdio.h>

#define LIMIT 65536
#define T0 "2026-01-02T03:04:05Z"

static store *open_limited(size_t limit)
{
    store_backend be;
    char err[256];
    store_memory_backend(&be);
    store_config cfg = {.max_object_bytes = limit};
    store *st = store_open(&be, reg_indexer, &cfg, err, sizeof err);
    if (!st) fail_msg("store_open: %s", err);
    create_core(st, "namespaces", "", "{'metadata':{'name':'default'}}");
    return st;
}

static const api_kind *cm_kind(void)
{
    return test_kind("", "v1", "configmaps");
}

/* A ConfigMap `name` of n keys key-00000... with values of vlen bytes of fill. */
static json_t *configmap(const char *name, size_t n, size_t vlen, char fill)
{
    char *v = malloc(vlen + 1);
    memset(v, fill, vlen);
    v[vlen] = '\0';
    json_t *data = json_object();
    for (size_t i = 0; i < n; i++) {
        char k[32];
        snprintf(k, sizeof k, "key-%05zu", i);
        json_object_set_new(data, k, json_string(v));
    }
    free(v);
    return json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", "v1", "kind", "ConfigMap",
                     "metadata", "name", name, "data", data);
}

typedef struct apply_ctx {
    const char *manager;
    const json_t *config;
    bool force;
} apply_ctx;

static json_t *mutate_apply(const json_t *cur, void *ctx, api_err *e)
{
    apply_ctx *ac = ctx;
    fm_write w = {cm_kind(), "", ac->manager, T0};
    return fm_apply(&w, cur, ac->config, ac->force, NULL, e);
}

/* Server-side apply of config as manager: 0, or -1 with e set. */
static int apply_as(store *st, const char *manager, const json_t *config, bool force, api_err *e)
{
    apply_ctx ac = {manager, config, force};
    reg_writer w = {manager, true};
    json_t *out = NULL;
    const char *name =
        json_string_value(json_object_get(json_object_get(config, "metadata"), "name"));
    int rc = reg_update_as(st, cm_kind(), "default", name, "", mutate_apply, &ac, &w, false, &out,
                           NULL, e);
    json_decref(out);
    return rc;
}

static store_obj *stored(store *st, const char *resource, const char *name)
{
    char key[256];
    snprintf(key, sizeof key, "%s/default/%s", resource, name);
    return store_get(st, key);
}

static size_t stored_len(store *st, const char *name)
{
    store_obj *o = stored(st, "configmaps", name);
    size_t n = o ? o->len : 0;
    store_obj_unref(o);
    return n;
}

static int64_t stored_rv(store *st, const char *name)
{
    store_obj *o = stored(st, "configmaps", name);
    int64_t rv = o ? o->rv : 0;
    store_obj_unref(o);
    return rv;
}

static void expect_too_large(const api_err *e)
{
    assert_int_equal(e->code, API_TOO_LARGE);
    assert_int_equal(api_errcode_http(e->code), 413);
    assert_string_equal(api_errcode_reason(e->code), "RequestEntityTooLarge");
    assert_string_equal(e->message, "etcdserver: request is too large");
}

/* The scenario at a smaller scale: managers apply the same
 * ConfigMap, each co-owning every key, so each entry's fieldsV1 lists every
 * key (keys only, as upstream's: 14 bytes a key). The apply that would take
 * the object past the limit is refused with a 413 and changes nothing; the
 * object never passes the limit. */
static void test_applies_stop_at_the_limit(void **state)
{
    (void)state;
    store *st = open_limited(LIMIT);
    json_t *cm = configmap("many", 1000, 8, 'v');
    api_err e;
    api_err_init(&e);
    int applied = 0, refused = 0;
    size_t last = 0;
    for (int m = 1; m <= 14; m++) {
        char manager[16];
        snprintf(manager, sizeof manager, "m%d", m);
        int64_t rv = stored_rv(st, "many");
        if (apply_as(st, manager, cm, true, &e) == 0) {
            assert_int_equal(refused, 0); /* once refused, always refused */
            applied++;
            assert_true(stored_len(st, "many") > last); /* each entry adds every key */
        } else {
            expect_too_large(&e);
            assert_int_equal(stored_rv(st, "many"), rv); /* nothing written */
            refused++;
        }
        api_err_clear(&e);
        last = stored_len(st, "many");
        assert_true(last <= LIMIT);
    }
    assert_true(applied >= 2); /* data 22 KB, each entry 16 KB */
    assert_true(refused > 0);
    /* each entry lists the keys, never the values */
    store_obj *o = stored(st, "configmaps", "many");
    json_t *obj = store_obj_parse(o);
    store_obj_unref(o);
    json_t *mf = json_object_get(json_object_get(obj, "metadata"), "managedFields");
    assert_int_equal(json_array_size(mf), (size_t)applied);
    char *f = json_dumps(json_object_get(json_array_get(mf, 0), "fieldsV1"), JSON_COMPACT);
    assert_non_null(strstr(f, "\"f:key-00999\":{}"));
    assert_null(strstr(f, "vvvvvvvv"));
    assert_true(strlen(f) < 1000 * 20);
    free(f);
    json_decref(obj);
    json_decref(cm);
    store_close(st);
}

/* Creates and updates (not applies) that the limit refuses only for their
 * managedFields are written without them, as upstream's handlers retry; past
 * the limit without them too, they are refused. A status write alike. */
static void test_writes_shed_managed_fields(void **state)
{
    (void)state;
    store *st = open_limited(LIMIT);
    const api_kind *k = cm_kind();
    api_err e;
    api_err_init(&e);
    json_t *out = NULL;
    /* data 40 KB of 2500 keys; the creator's entry would add 35 KB */
    json_t *cm = configmap("shed", 2500, 2, 'x');
    reg_writer creator = {"creator", false};
    assert_int_equal(reg_create_as(st, k, "default", cm, &creator, false, &out, &e), 0);
    assert_null(json_object_get(json_object_get(out, "metadata"), "managedFields"));
    json_decref(out);
    assert_true(stored_len(st, "shed") <= LIMIT);
    /* too large with no managedFields at all: refused */
    json_t *big = configmap("huge", 2, LIMIT, 'y');
    assert_int_equal(reg_create_as(st, k, "default", big, &creator, false, &out, &e), -1);
    expect_too_large(&e);
    api_err_clear(&e);
    assert_null(stored(st, "configmaps", "huge"));
    json_decref(big);

    /* an update by merge patch: fits, with managedFields again */
    char msg[256];
    assert_int_equal(
        reg_merge(st, k, "default", "shed", "", "{'data':{'a':'1'}}", false, msg, sizeof msg), 200);
    store_obj *o = stored(st, "configmaps", "shed");
    assert_non_null(strstr(o->json, "\"managedFields\""));
    store_obj_unref(o);
    /* an update past the limit whatever its managedFields: 413, unchanged */
    int64_t rv = stored_rv(st, "shed");
    char *patch = malloc(LIMIT + 64);
    snprintf(patch, LIMIT + 64, "{'data':{'b':'%0*d'}}", LIMIT / 2, 0);
    assert_int_equal(reg_merge(st, k, "default", "shed", "", patch, false, msg, sizeof msg), 413);
    assert_string_equal(msg, "etcdserver: request is too large");
    assert_int_equal(stored_rv(st, "shed"), rv);
    free(patch);

    /* the status subresource: a Namespace's conditions past the limit */
    const api_kind *nsk = test_kind("", "v1", "namespaces");
    char *status = malloc(LIMIT + 128);
    snprintf(status, LIMIT + 128,
             "{'status':{'conditions':[{'type':'Custom','status':'True','message':'%0*d'}]}}",
             LIMIT, 0);
    assert_int_equal(reg_merge(st, nsk, "", "default", "status", status, false, msg, sizeof msg),
                     413);
    assert_string_equal(msg, "etcdserver: request is too large");
    free(status);
    json_decref(cm);
    store_close(st);
}

/* A 409 to an apply that conflicts on every field of several managers'
 * entries: upstream's message, cut at 4 KiB, counting what it leaves out;
 * at most 1000 causes built, and the Status body small. */
static void test_conflict_answer_bounded(void **state)
{
    (void)state;
    store *st = open_limited(STORE_DEFAULT_MAX_OBJECT_BYTES);
    json_t *cm = configmap("conf", 3000, 4, 'a'), *changed = configmap("conf", 3000, 4, 'b');
    api_err e;
    api_err_init(&e);
    for (int m = 1; m <= 3; m++) {
        char manager[16];
        snprintf(manager, sizeof manager, "m%d", 4 - m); /* entries not in name order */
        assert_int_equal(apply_as(st, manager, cm, true, &e), 0);
    }
    assert_int_equal(apply_as(st, "other", changed, false, &e), -1);
    assert_int_equal(e.code, API_CONFLICT);
    const char *head =
        "Apply failed with 9000 conflicts: conflicts with \"m1\":\n- .data.key-00000\n- "
        ".data.key-00001";
    assert_memory_equal(e.message, head, strlen(head));
    assert_true(strlen(e.message) < sizeof e.message);
    size_t listed = 0, more = 0;
    for (const char *p = e.message; (p = strstr(p, "\n- ")); p++)
        listed++;
    const char *tail = strstr(e.message, "\n... and ");
    assert_non_null(tail);
    assert_int_equal(sscanf(tail, "\n... and %zu more", &more), 1);
    assert_int_equal(listed + more, 9000);
    json_t *causes = json_object_get(e.details, "causes");
    assert_int_equal(json_array_size(causes), 1000);
    assert_string_equal(json_string_value(json_object_get(json_array_get(causes, 0), "field")),
                        ".data.key-00000");
    json_t *status = api_err_status(&e);
    char *body = json_dumps(status, JSON_COMPACT);
    assert_true(strlen(body) < 80 * 1024);
    json_t *sc = json_object_get(json_object_get(status, "details"), "causes");
    assert_true(json_array_size(sc) > 100 && json_array_size(sc) < 1000);
    free(body);
    json_decref(status);
    api_err_clear(&e);
    json_decref(cm);
    json_decref(changed);
    store_close(st);
}

/* Any Status: causes kept in order while they fit, their strings cut at a
 * character; a message cut at 4 KiB is valid UTF-8. */
static void test_status_bounded(void **state)
{
    (void)state;
    json_t *list = json_array();
    for (int i = 0; i < 100000; i++) {
        char f[32];
        snprintf(f, sizeof f, "data[k%06d]", i);
        ferr_add_str(list, FERR_INVALID, f, "k",
                     "a lowercase RFC 1123 subdomain must consist of ...");
    }
    char *huge = malloc(1 << 20);
    for (int i = 0; i + 2 < (1 << 20); i += 2)
        memcpy(huge + i, "\xc3\xa9", 2);
    huge[(1 << 20) - 2] = 0;
    json_array_insert_new(list, 0,
                          json_pack("{s:s, s:s, s:s}", "reason", "FieldValueInvalid", "message",
                                    "Invalid value", "field", huge));
    api_err e;
    api_err_init(&e);
    api_err_invalid(&e, "", "ConfigMap", "c", list);
    json_t *st = api_err_status(&e);
    char *body = json_dumps(st, JSON_COMPACT);
    assert_non_null(body);
    assert_true(strlen(body) < 80 * 1024 + API_STATUS_STRING_BYTES);
    json_t *causes = json_object_get(json_object_get(st, "details"), "causes");
    assert_true(json_array_size(causes) > 100 && json_array_size(causes) < 100000);
    const char *f0 = json_string_value(json_object_get(json_array_get(causes, 0), "field"));
    assert_non_null(f0); /* cut, still a valid string */
    assert_true(strlen(f0) <= API_STATUS_STRING_BYTES && strlen(f0) >= API_STATUS_STRING_BYTES - 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(causes, 1), "field")),
                        "data[k000000]");
    assert_int_equal(json_array_size(json_object_get(e.details, "causes")), 100001); /* e kept */
    free(body);
    json_decref(st);
    /* the message: cut at 4 KiB, never inside a character */
    api_err_set(&e, API_BAD_REQUEST, "bad: %s", huge);
    assert_true(strlen(e.message) <= sizeof e.message - 1);
    st = api_err_status(&e);
    assert_non_null(json_object_get(st, "message"));
    json_decref(st);
    api_err_clear(&e);
    free(huge);
}

int main(void)
{
    if (admission_register_defaults() != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_applies_stop_at_the_limit),
        cmocka_unit_test(test_writes_shed_managed_fields),
        cmocka_unit_test(test_conflict_answer_bounded),
        cmocka_unit_test(test_status_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
