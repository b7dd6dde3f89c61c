/* test_crd_controller.c - the CustomResourceDefinition controller through
 * the registry on a real store: a definition becomes Established and its
 * kind served; a name held by a built-in kind is not accepted; deleting the
 * definition deletes its objects, refuses creates while an object's own
 * finalizer holds it, then retires the kind; a restart (the store reopened)
 * serves stored definitions before anything else and indexes their objects.
 * Waits are bounded polls (wait_for), never fixed sleeps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/crd.h"
#include "api/crd_kinds.h"
#include "controllers/crd.h"
#include "registry/registry.h"
#include "teststore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *BUCKET_CRD =
    "{'metadata':{'name':'buckets.example.com'},"
    " 'spec':{'group':'example.com','scope':'Namespaced','names':{'plural':'buckets','kind':'Bucket'},"
    "  'versions':[{'name':'v1','served':true,'storage':true,"
    "   'schema':{'openAPIV3Schema':{'type':'object','properties':{'spec':{'type':'object',"
    "    'properties':{'storageGB':{'type':'integer','default':10}}}}}}}]}}";

typedef struct fixture {
    char dir[64];
    store *st;
    crd_ctrl *ctl;
    const api_kind *crd, *ns;
} fixture;

static store *open_dir(const char *dir)
{
    store_backend be;
    char err[256];
    if (store_sqlite_open(dir, &be, err, sizeof err) != 0) fail_msg("sqlite: %s", err);
    store *st = store_open(&be, reg_indexer, NULL, err, sizeof err);
    if (!st) fail_msg("store_open: %s", err);
    return st;
}

static void start(fixture *f)
{
    char err[256];
    if (crd_controller_restore(f->st, err, sizeof err) < 0) fail_msg("restore: %s", err);
    if (!(f->ctl = crd_controller_start(f->st, err, sizeof err))) fail_msg("start: %s", err);
}

static void stop(fixture *f)
{
    crd_controller_stop(f->ctl);
    f->ctl = NULL;
    store_close(f->st);
    f->st = NULL;
    crd_kinds_cleanup(); /* the process ends: nothing serves any more */
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/allot-crdctl-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    f->st = open_dir(f->dir);
    f->crd = api_kind_find(CRD_GROUP, CRD_VERSION, CRD_RESOURCE);
    f->ns = api_kind_find("", "v1", "namespaces");
    start(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f->st) stop(f);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    if (system(cmd) != 0) return -1;
    free(f);
    return 0;
}

/* Poll until pred holds (at most 20 s). */
static bool wait_for(bool (*pred)(fixture *), fixture *f)
{
    for (int i = 0; i < 2000; i++) {
        if (pred(f)) return true;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    return false;
}

static int create(fixture *f, const api_kind *k, const char *ns, const char *obj, api_err *e)
{
    json_t *o = J(obj), *out = NULL;
    int rc = reg_create(f->st, k, ns, o, false, &out, e);
    json_decref(o);
    json_decref(out);
    return rc;
}

static void must_create(fixture *f, const api_kind *k, const char *ns, const char *obj)
{
    api_err e;
    api_err_init(&e);
    if (create(f, k, ns, obj, &e) != 0) fail_msg("create: %s", e.message);
    api_err_clear(&e);
}

static json_t *get_crd(fixture *f, const char *name)
{
    api_err e;
    api_err_init(&e);
    json_t *o = reg_get(f->st, f->crd, "", name, &e);
    api_err_clear(&e);
    return o;
}

static bool established(fixture *f)
{
    json_t *o = get_crd(f, "buckets.example.com");
    bool ok = o && crd_condition_true(o, "Established");
    json_decref(o);
    return ok && api_kind_find("example.com", "v1", "buckets");
}

static bool crd_gone(fixture *f)
{
    json_t *o = get_crd(f, "buckets.example.com");
    json_decref(o);
    return !o && !api_kind_find("example.com", "v1", "buckets");
}

static void establish(fixture *f)
{
    must_create(f, f->ns, "", "{'metadata':{'name':'team'}}");
    must_create(f, f->crd, "", BUCKET_CRD);
    if (!wait_for(established, f)) fail_msg("not Established");
}

static void test_established_and_served(void **state)
{
    fixture *f = *state;
    establish(f);
    json_t *o = get_crd(f, "buckets.example.com");
    const json_t *na = crd_condition(o, "NamesAccepted");
    assert_string_equal(json_string_value(json_object_get(na, "reason")), "NoConflicts");
    json_decref(o);
    const api_kind *k = api_kind_find("example.com", "v1", "buckets");
    must_create(
        f, k, "team",
        "{'apiVersion':'example.com/v1','kind':'Bucket','metadata':{'name':'b'},'spec':{}}");
    api_err e;
    api_err_init(&e);
    json_t *b = reg_get(f->st, k, "team", "b", &e);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(b, "spec"), "storageGB")),
                     10);
    json_decref(b);
    assert_int_equal(
        create(f, k, "team", "{'metadata':{'name':'x'},'spec':{'storageGB':'ten'}}", &e), -1);
    assert_int_equal(e.code, API_INVALID);
    assert_string_equal(e.message, "Bucket.example.com \"x\" is invalid: spec.storageGB: Invalid "
                                   "value: \"string\": spec.storageGB in body must be of type "
                                   "integer: \"string\"");
    api_err_clear(&e);
}

static bool conflicted(fixture *f)
{
    json_t *o = get_crd(f, "resourcepools.capsule.clastix.io");
    const char *r = json_string_value(json_object_get(crd_condition(o, "NamesAccepted"), "reason"));
    bool ok = r && !strcmp(r, "PluralConflict");
    json_decref(o);
    return ok;
}

static void test_builtin_names_taken(void **state)
{
    fixture *f = *state;
    must_create(f, f->crd, "",
                "{'metadata':{'name':'resourcepools.capsule.clastix.io'},"
                " 'spec':{'group':'capsule.clastix.io','scope':'Cluster',"
                "  'names':{'plural':'resourcepools','kind':'Pool'},"
                "  'versions':[{'name':'v9','served':true,'storage':true,"
                "   'schema':{'openAPIV3Schema':{'type':'object'}}}]}}");
    assert_true(wait_for(conflicted, f));
    json_t *o = get_crd(f, "resourcepools.capsule.clastix.io");
    assert_false(crd_condition_true(o, "Established"));
    json_decref(o);
    assert_null(api_kind_find("capsule.clastix.io", "v9", "resourcepools"));
}

static bool terminating_and_emptied(fixture *f)
{
    json_t *o = get_crd(f, "buckets.example.com");
    bool t = o && crd_condition_true(o, "Terminating");
    json_decref(o);
    store_obj **objs = NULL;
    size_t n = 0;
    store_list(f->st, "buckets.example.com/", NULL, 0, &objs, &n, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        store_obj_unref(objs[i]);
    free(objs);
    return t && n == 1; /* only the object its own finalizer holds */
}

/* The owner's update: the latest version without its finalizers. */
static json_t *drop_finalizers(const json_t *cur, void *ctx, api_err *e)
{
    json_t *o = json_deep_copy(cur);
    if (!o) {
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    json_object_del(json_object_get(o, "metadata"), "finalizers");
    return o;
}

static void test_delete(void **state)
{
    fixture *f = *state;
    establish(f);
    const api_kind *k = api_kind_find("example.com", "v1", "buckets");
    must_create(f, k, "team", "{'metadata':{'name':'a'},'spec':{}}");
    must_create(f, k, "team",
                "{'metadata':{'name':'held','finalizers':['example.com/hold']},'spec':{}}");
    reg_delete_opts o = {false, -1, NULL, NULL, NULL};
    json_t *out = NULL;
    bool gone = true;
    api_err e;
    api_err_init(&e);
    assert_int_equal(reg_delete(f->st, f->crd, "", "buckets.example.com", &o, &out, &gone, &e), 0);
    assert_false(gone); /* the cleanup finalizer holds it */
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(json_object_get(out, "metadata"), "finalizers"), 0)),
                        CRD_CLEANUP_FINALIZER);
    json_decref(out);
    assert_true(wait_for(terminating_and_emptied, f));
    assert_int_equal(create(f, k, "team", "{'metadata':{'name':'late'},'spec':{}}", &e), -1);
    assert_int_equal(e.code, API_METHOD_NOT_ALLOWED);
    assert_string_equal(e.message,
                        "create not allowed while custom resource definition is terminating");
    api_err_clear(&e);
    /* the object's owner lets it go: the definition goes, and its kind */
    assert_int_equal(reg_delete(f->st, k, "team", "held", &o, &out, &gone, &e), 0);
    json_decref(out);
    /* drop the finalizer from the version the update's transaction reads:
     * the controller, emptying the definition, writes the object too, and
     * reg_get serves only durable versions, so a get-then-replace could
     * read the version before the controller's (still being written) again
     * and again, each a 409 */
    out = NULL;
    assert_int_equal(
        reg_update(f->st, k, "team", "held", "", drop_finalizers, NULL, false, &out, &e), 0);
    json_decref(out);
    assert_true(wait_for(crd_gone, f));
    api_err_clear(&e);
}

static void test_restart(void **state)
{
    fixture *f = *state;
    establish(f);
    const api_kind *k = api_kind_find("example.com", "v1", "buckets");
    must_create(f, k, "team", "{'metadata':{'name':'kept'},'spec':{}}");
    stop(f);
    assert_null(api_kind_find("example.com", "v1", "buckets"));

    f->st = open_dir(f->dir);
    store_obj *o = store_get(f->st, "buckets.example.com/team/kept");
    assert_non_null(o);
    assert_null(o->idx.fields); /* loaded before its kind existed */
    store_obj_unref(o);
    start(f);
    k = api_kind_find("example.com", "v1", "buckets");
    assert_non_null(k); /* served by the restore, before the controller ran */
    o = store_get(f->st, "buckets.example.com/team/kept");
    assert_string_equal(api_fields_get(o->idx.fields, "metadata.name"), "kept");
    store_obj_unref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_established_and_served, setup, teardown),
        cmocka_unit_test_setup_teardown(test_builtin_names_taken, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
