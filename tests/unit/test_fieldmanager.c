/* test_fieldmanager.c - managedFields and server-side apply
 * (api/fieldmanager.h) on built-in kinds, with upstream's outcomes:
 *   - a create records the creator's fields (maps and pointer structs with
 *     ".", value structs without, server fields never), kubectl-create's
 *     ConfigMap and Deployment entries as the apiserver writes them;
 *   - updates take what they change silently, and drop what they remove;
 *     client-sent entries are kept when valid, reset by [] and [{}],
 *     ignored when invalid; status is reset from the main resource;
 *   - apply: twice is a no-op, fields left out are removed unless another
 *     manager owns them, keyed lists merge by key, conflicts and their
 *     message and causes, force moves ownership, kubectl's upgrade from
 *     client-side apply and its last-applied annotation;
 *   - at most 10 Update entries, managers from user agents, limits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/fieldmanager.h"
#include "api/kinds.h"

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T0 "2026-01-01T00:00:00Z"
#define T1 "2026-01-01T00:00:01Z"
#define T2 "2026-01-01T00:00:02Z"

static const api_kind *CM, *DEPLOY, *POD;

static int setup(void **state)
{
    CM = api_kind_by_kind("v1", "ConfigMap");
    DEPLOY = api_kind_by_kind("apps/v1", "Deployment");
    POD = api_kind_by_kind("v1", "Pod");
    return CM && DEPLOY && POD ? 0 : -1;
}

static const json_t *mf(const json_t *o)
{
    return json_object_get(json_object_get(o, "metadata"), "managedFields");
}

/* The entry of a manager/operation (subresource ""), or NULL. */
static const json_t *entry(const json_t *o, const char *manager, const char *op)
{
    size_t i;
    json_t *e;
    json_array_foreach(mf(o), i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "manager")), manager) &&
            !strcmp(json_string_value(json_object_get(e, "operation")), op))
            return e;
    }
    return NULL;
}

/* fieldsV1 of an entry as compact JSON (keys in their canonical order). */
static char *fields(const json_t *o, const char *manager, const char *op)
{
    const json_t *e = entry(o, manager, op);
    if (!e) fail_msg("no %s %s entry", manager, op);
    return json_dumps(json_object_get(e, "fieldsV1"), JSON_COMPACT | JSON_PRESERVE_ORDER);
}

static void fields_are(const json_t *o, const char *manager, const char *op, const char *want)
{
    char *got = fields(o, manager, op);
    char *w = strdup(want);
    for (char *p = w; *p; p++)
        if (*p == '\'') *p = '"';
    if (strcmp(got, w)) fail_msg("%s %s fieldsV1\n  got  %s\n  want %s", manager, op, got, w);
    free(got);
    free(w);
}

static json_t *create(const api_kind *k, const char *manager, const char *obj)
{
    json_t *o = J(obj);
    fm_write w = {k, "", manager, T0};
    fm_update(&w, NULL, o);
    return o;
}

static json_t *update(const api_kind *k, const char *manager, const char *now, const json_t *live,
                      json_t *nw)
{
    fm_write w = {k, "", manager, now};
    fm_update(&w, live, nw);
    return nw;
}

static json_t *apply(const api_kind *k, const char *manager, const char *now, const json_t *live,
                     const char *config, bool force, api_err *e)
{
    json_t *c = J(config);
    fm_write w = {k, "", manager, now};
    api_err_init(e);
    json_t *out = fm_apply(&w, live, c, force, NULL, e);
    json_decref(c);
    return out;
}

static json_t *apply_ok(const api_kind *k, const char *manager, const char *now, const json_t *live,
                        const char *config)
{
    api_err e;
    json_t *out = apply(k, manager, now, live, config, false, &e);
    if (!out) fail_msg("apply: %d %s", e.code, e.message);
    api_err_clear(&e);
    return out;
}

/* obj[key] equals the JSON `want` */
static void member_is(const json_t *obj, const char *key, const char *want)
{
    json_t *w = J(want);
    assert_json_eq(json_object_get(obj, key), w);
    json_decref(w);
}

static const json_t *at(const json_t *o, const char *a, const char *b)
{
    return json_object_get(json_object_get(o, a), b);
}

/* ---- Update ---- */

static void test_create_configmap(void **state)
{
    json_t *o =
        create(CM, "kubectl-create",
               "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c','namespace':'d',"
               "'uid':'u','resourceVersion':'1','labels':{'app':'x'}},'data':{'b':'2','a':'1'}}");
    /* as kubectl create configmap's entry on a real apiserver */
    fields_are(
        o, "kubectl-create", "Update",
        "{'f:data':{'.':{},'f:a':{},'f:b':{}},'f:metadata':{'f:labels':{'.':{},'f:app':{}}}}");
    const json_t *e = entry(o, "kubectl-create", "Update");
    assert_string_equal(json_string_value(json_object_get(e, "apiVersion")), "v1");
    assert_string_equal(json_string_value(json_object_get(e, "time")), T0);
    assert_string_equal(json_string_value(json_object_get(e, "fieldsType")), "FieldsV1");
    assert_null(json_object_get(e, "subresource"));
    /* Go's order of ManagedFieldsEntry */
    const char *k;
    json_t *v;
    const char *order[] = {"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"};
    size_t i = 0;
    json_object_foreach((json_t *)e, k, v) assert_string_equal(k, order[i++]);
    json_decref(o);
}

static void test_create_deployment(void **state)
{
    json_t *o = create(DEPLOY, "kubectl-create",
                       "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'web'},"
                       "'spec':{'replicas':1,'selector':{'matchLabels':{'app':'web'}},"
                       "'strategy':{'type':'RollingUpdate','rollingUpdate':{'maxSurge':'25%'}},"
                       "'template':{'metadata':{'labels':{'app':'web'}},'spec':{'containers':"
                       "[{'name':'nginx','image':'nginx','ports':[{'containerPort':80}],"
                       "'resources':{}}]}}},'status':{'replicas':1}}");
    /* selector is atomic, containers keyed by name, ports by containerPort
     * and protocol (TCP when left out); spec, strategy, template are value
     * structs and containers a slice without omitempty (no "."); status is
     * reset from the main resource */
    fields_are(
        o, "kubectl-create", "Update",
        "{'f:spec':{'f:replicas':{},'f:selector':{},'f:strategy':{'f:rollingUpdate':{'.':{},"
        "'f:maxSurge':{}},'f:type':{}},'f:template':{'f:metadata':{'f:labels':{'.':{},"
        "'f:app':{}}},'f:spec':{'f:containers':{'k:{\\'name\\':\\'nginx\\'}':{'.':{},"
        "'f:image':{},'f:name':{},'f:ports':{'.':{},'k:{\\'containerPort\\':80,\\'protocol\\':\\'TCP\\'}':"
        "{'.':{},'f:containerPort':{}}},'f:resources':{}}}}}}}");
    json_decref(o);
}

static void test_update_takes_fields(void **state)
{
    json_t *live =
        create(CM, "kubectl-create", "{'metadata':{'name':'c'},'data':{'a':'1','b':'2','c':'3'}}");
    json_t *nw = json_deep_copy(live);
    json_object_set_new(json_object_get(nw, "data"), "a", json_string("9"));
    json_object_del(json_object_get(nw, "data"), "c");
    update(CM, "kubectl-edit", T1, live, nw);
    fields_are(nw, "kubectl-create", "Update", "{'f:data':{'.':{},'f:b':{}}}");
    fields_are(nw, "kubectl-edit", "Update", "{'f:data':{'f:a':{}}}");
    assert_string_equal(
        json_string_value(json_object_get(entry(nw, "kubectl-edit", "Update"), "time")), T1);
    /* the same manager again: one entry, its fields unite, its time moves */
    json_t *nw2 = json_deep_copy(nw);
    json_object_set_new(json_object_get(nw2, "data"), "b", json_string("8"));
    update(CM, "kubectl-edit", T2, nw, nw2);
    fields_are(nw2, "kubectl-edit", "Update", "{'f:data':{'f:a':{},'f:b':{}}}");
    assert_string_equal(
        json_string_value(json_object_get(entry(nw2, "kubectl-edit", "Update"), "time")), T2);
    assert_int_equal(json_array_size(mf(nw2)), 2);
    /* a write that changes nothing keeps the entries as they are */
    json_t *nw3 = json_deep_copy(nw2);
    update(CM, "other", T2, nw2, nw3);
    assert_json_eq(mf(nw3), mf(nw2));
    json_decref(live);
    json_decref(nw);
    json_decref(nw2);
    json_decref(nw3);
}

static void test_update_sent_entries(void **state)
{
    json_t *live = create(CM, "creator", "{'metadata':{'name':'c'},'data':{'a':'1'}}");
    /* a PUT without managedFields keeps the stored ones */
    json_t *nw = J("{'metadata':{'name':'c'},'data':{'a':'1','b':'2'}}");
    update(CM, "kubectl-replace", T1, live, nw);
    fields_are(nw, "creator", "Update", "{'f:data':{'.':{},'f:a':{}}}");
    fields_are(nw, "kubectl-replace", "Update", "{'f:data':{'f:b':{}}}");
    json_decref(nw);
    /* [] and [{}] reset: only this write's own fields are left */
    const char *resets[] = {"[]", "[{}]"};
    for (int i = 0; i < 2; i++) {
        nw = J("{'metadata':{'name':'c'},'data':{'a':'1','b':'2'}}");
        json_object_set_new(json_object_get(nw, "metadata"), "managedFields", J(resets[i]));
        update(CM, "resetter", T1, live, nw);
        assert_int_equal(json_array_size(mf(nw)), 1);
        fields_are(nw, "resetter", "Update", "{'f:data':{'f:b':{}}}");
        json_decref(nw);
    }
    /* invalid entries are ignored: the stored ones stay */
    const char *bad[] = {
        "[{'manager':'x','operation':'Steal','apiVersion':'v1','fieldsType':'FieldsV1'}]",
        "[{'manager':'x','operation':'Update','apiVersion':'v1'}]",
        "[{'manager':'x','operation':'Update','apiVersion':'v1','fieldsType':'FieldsV1',"
        "'fieldsV1':{'x:y':{}}}]",
        "'nonsense'"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        nw = J("{'metadata':{'name':'c'},'data':{'a':'1'}}");
        json_object_set_new(json_object_get(nw, "metadata"), "managedFields", J(bad[i]));
        update(CM, "m", T1, live, nw);
        assert_json_eq(mf(nw), mf(live));
        json_decref(nw);
    }
    /* valid entries sent are taken (a client may edit managedFields) */
    nw = J("{'metadata':{'name':'c','managedFields':[{'manager':'someone','operation':'Apply',"
           "'apiVersion':'v1','fieldsType':'FieldsV1','fieldsV1':{'f:data':{'f:a':{}}}}]},"
           "'data':{'a':'1'}}");
    update(CM, "m", T1, live, nw);
    assert_int_equal(json_array_size(mf(nw)), 1);
    fields_are(nw, "someone", "Apply", "{'f:data':{'f:a':{}}}");
    json_decref(nw);
    json_decref(live);
}

static void test_status_reset(void **state)
{
    json_t *live =
        create(POD, "creator",
               "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i'}]}}");
    json_t *nw = json_deep_copy(live);
    json_object_set_new(nw, "status", J("{'phase':'Running'}"));
    /* the main resource does not own status ... */
    update(POD, "m", T1, live, nw);
    assert_null(entry(nw, "m", "Update"));
    /* ... the status subresource does */
    json_t *nw2 = json_deep_copy(live);
    json_object_set_new(nw2, "status", J("{'phase':'Running'}"));
    fm_write w = {POD, "status", "kubelet", T1};
    fm_update(&w, live, nw2);
    size_t i;
    json_t *e, *found = NULL;
    json_array_foreach(mf(nw2), i, e) if (!strcmp(json_string_value(json_object_get(e, "manager")),
                                                  "kubelet")) found = e;
    assert_non_null(found);
    assert_string_equal(json_string_value(json_object_get(found, "subresource")), "status");
    char *f = json_dumps(json_object_get(found, "fieldsV1"), JSON_COMPACT);
    assert_string_equal(f, "{\"f:status\":{\"f:phase\":{}}}");
    free(f);
    json_decref(live);
    json_decref(nw);
    json_decref(nw2);
}

static void test_cap_updates(void **state)
{
    json_t *o = create(CM, "m0", "{'metadata':{'name':'c'},'data':{'k0':'v'}}");
    for (int i = 1; i <= 12; i++) {
        json_t *nw = json_deep_copy(o);
        char key[8], mgr[8], now[32];
        snprintf(key, sizeof key, "k%d", i);
        snprintf(mgr, sizeof mgr, "m%d", i);
        snprintf(now, sizeof now, "2026-01-01T00:00:%02dZ", i);
        json_object_set_new(json_object_get(nw, "data"), key, json_string("v"));
        update(CM, mgr, now, o, nw);
        json_decref(o);
        o = nw;
    }
    /* 13 managers wrote: 10 entries, the oldest merged into ancient-changes */
    assert_int_equal(json_array_size(mf(o)), 10);
    fields_are(o, "ancient-changes", "Update",
               "{'f:data':{'.':{},'f:k0':{},'f:k1':{},'f:k2':{},'f:k3':{}}}");
    assert_null(entry(o, "m3", "Update"));
    assert_non_null(entry(o, "m4", "Update"));
    json_decref(o);
}

/* ---- Apply ---- */

static const char *CFG = "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c'},"
                         "'data':{'a':'1','b':'2'}}";

static void test_apply_create_twice(void **state)
{
    json_t *o = apply_ok(CM, "kubectl", T0, NULL, CFG);
    fields_are(o, "kubectl", "Apply", "{'f:data':{'f:a':{},'f:b':{}}}");
    assert_int_equal(json_array_size(mf(o)), 1);
    const json_t *e = entry(o, "kubectl", "Apply");
    assert_string_equal(json_string_value(json_object_get(e, "time")), T0);
    /* the same again: nothing changes, not even the time */
    api_err err;
    bool changed = true;
    json_t *c = J(CFG);
    fm_write w = {CM, "", "kubectl", T1};
    api_err_init(&err);
    json_t *o2 = fm_apply(&w, o, c, false, &changed, &err);
    assert_non_null(o2);
    assert_false(changed);
    assert_json_eq(o2, o);
    json_decref(c);
    json_decref(o);
    json_decref(o2);
}

static void test_apply_removes(void **state)
{
    json_t *o = apply_ok(CM, "kubectl", T0, NULL, CFG);
    /* b left out: removed */
    json_t *o2 = apply_ok(CM, "kubectl", T1, o,
                          "{'apiVersion':'v1','kind':'ConfigMap',"
                          "'metadata':{'name':'c'},'data':{'a':'1'}}");
    member_is(o2, "data", "{'a':'1'}");
    fields_are(o2, "kubectl", "Apply", "{'f:data':{'f:a':{}}}");
    /* ... unless another manager owns it too */
    json_t *o3 = apply_ok(CM, "other", T1, o,
                          "{'apiVersion':'v1','kind':'ConfigMap',"
                          "'metadata':{'name':'c'},'data':{'b':'2'}}");
    json_t *o4 = apply_ok(CM, "kubectl", T2, o3,
                          "{'apiVersion':'v1','kind':'ConfigMap',"
                          "'metadata':{'name':'c'},'data':{'a':'1'}}");
    member_is(o4, "data", "{'a':'1','b':'2'}");
    /* fields nobody applied (another writer's) stay */
    json_t *upd = json_deep_copy(o);
    json_object_set_new(json_object_get(upd, "data"), "z", json_string("26"));
    update(CM, "editor", T1, o, upd);
    json_t *o5 = apply_ok(CM, "kubectl", T2, upd,
                          "{'apiVersion':'v1','kind':'ConfigMap',"
                          "'metadata':{'name':'c'},'data':{'a':'1'}}");
    member_is(o5, "data", "{'a':'1','z':'26'}");
    json_decref(o);
    json_decref(o2);
    json_decref(o3);
    json_decref(o4);
    json_decref(upd);
    json_decref(o5);
}

static void test_apply_conflicts(void **state)
{
    json_t *live = create(CM, "kubectl-create",
                          "{'apiVersion':'v1','kind':'ConfigMap',"
                          "'metadata':{'name':'c'},'data':{'a':'1','b':'2'}}");
    api_err e;
    /* same values: no conflict, ownership shared */
    json_t *same = apply(CM, "kubectl", T1, live, CFG, false, &e);
    assert_non_null(same);
    fields_are(same, "kubectl-create", "Update", "{'f:data':{'.':{},'f:a':{},'f:b':{}}}");
    fields_are(same, "kubectl", "Apply", "{'f:data':{'f:a':{},'f:b':{}}}");
    json_decref(same);
    /* a changed value another manager owns: upstream's 409 */
    assert_null(apply(CM, "kubectl", T1, live,
                      "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c'},"
                      "'data':{'a':'9'}}",
                      false, &e));
    assert_int_equal(e.code, API_CONFLICT);
    assert_string_equal(e.message, "Apply failed with 1 conflict: conflict with \"kubectl-create\" "
                                   "using v1: .data.a");
    json_t *causes = json_object_get(e.details, "causes");
    assert_int_equal(json_array_size(causes), 1);
    json_t *want = J("{'reason':'FieldManagerConflict','message':'conflict with "
                     "\\\"kubectl-create\\\" using v1','field':'.data.a'}");
    assert_json_eq(json_array_get(causes, 0), want);
    json_decref(want);
    api_err_clear(&e);
    /* two fields, two managers: grouped by manager */
    json_t *tmp = json_deep_copy(live);
    json_object_set_new(json_object_get(tmp, "data"), "b", json_string("3"));
    update(CM, "zeta", T1, live, tmp);
    assert_null(apply(CM, "kubectl", T2, tmp,
                      "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c'},"
                      "'data':{'a':'9','b':'9','c':'1'}}",
                      false, &e));
    assert_string_equal(e.message,
                        "Apply failed with 2 conflicts: conflicts with \"kubectl-create\" "
                        "using v1:\n- .data.a\nconflicts with \"zeta\" using v1:\n- .data.b");
    api_err_clear(&e);
    /* forced: the fields move to the applier */
    json_t *forced = apply(CM, "kubectl", T2, tmp,
                           "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c'},"
                           "'data':{'a':'9','b':'9'}}",
                           true, &e);
    assert_non_null(forced);
    member_is(forced, "data", "{'a':'9','b':'9'}");
    fields_are(forced, "kubectl", "Apply", "{'f:data':{'f:a':{},'f:b':{}}}");
    fields_are(forced, "kubectl-create", "Update", "{'f:data':{}}"); /* the map itself */
    assert_null(entry(forced, "zeta", "Update"));
    json_decref(forced);
    json_decref(tmp);
    json_decref(live);
}

static void test_apply_keyed_lists(void **state)
{
    const char *a = "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'d'},"
                    "'spec':{'template':{'spec':{'containers':[{'name':'a','image':'x'}]}}}}";
    const char *b = "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'d'},"
                    "'spec':{'template':{'spec':{'containers':[{'name':'b','image':'y'}]}}}}";
    json_t *o = apply_ok(DEPLOY, "one", T0, NULL, a);
    json_t *o2 = apply_ok(DEPLOY, "two", T1, o, b);
    const json_t *cs = json_object_get(
        json_object_get(json_object_get(json_object_get(o2, "spec"), "template"), "spec"),
        "containers");
    assert_int_equal(json_array_size(cs), 2);
    /* "one" leaves its container out: it goes, "two"'s stays */
    json_t *o3 = apply_ok(DEPLOY, "one", T2, o2,
                          "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'d'}}");
    cs = json_object_get(
        json_object_get(json_object_get(json_object_get(o3, "spec"), "template"), "spec"),
        "containers");
    assert_int_equal(json_array_size(cs), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(cs, 0), "name")), "b");
    assert_null(entry(o3, "one", "Apply"));
    json_decref(o);
    json_decref(o2);
    json_decref(o3);
}

static void test_apply_upgrade_from_client_side(void **state)
{
    /* client-side kubectl apply made it: its annotation, its manager */
    const char *la =
        "{\\\"apiVersion\\\":\\\"v1\\\",\\\"data\\\":{\\\"a\\\":\\\"1\\\"},\\\"kind\\\":"
        "\\\"ConfigMap\\\",\\\"metadata\\\":{\\\"annotations\\\":{},\\\"name\\\":\\\"c\\\"}}\\n";
    char obj[1024];
    snprintf(obj, sizeof obj,
             "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c','annotations':"
             "{'kubectl.kubernetes.io/last-applied-configuration':'%s'}},'data':{'a':'1'}}",
             la);
    json_t *live = create(CM, "kubectl-client-side-apply", obj);
    /* server-side apply by kubectl of a changed value: no conflict */
    json_t *o = apply_ok(CM, "kubectl", T1, live,
                         "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c'},"
                         "'data':{'a':'2'}}");
    assert_string_equal(json_string_value(at(o, "data", "a")), "2");
    fields_are(o, "kubectl", "Apply", "{'f:data':{'f:a':{}}}");
    /* ... and the annotation follows what it applied */
    const char *now =
        json_string_value(json_object_get(at(o, "metadata", "annotations"), FM_LAST_APPLIED));
    assert_string_equal(now, "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"2\"},\"kind\":\"ConfigMap\","
                             "\"metadata\":{\"name\":\"c\"}}\n");
    /* another manager has no such pass */
    api_err e;
    assert_null(apply(CM, "helm", T1, live,
                      "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c'},"
                      "'data':{'a':'3'}}",
                      false, &e));
    assert_int_equal(e.code, API_CONFLICT);
    api_err_clear(&e);
    json_decref(o);
    json_decref(live);
}

static void test_apply_errors(void **state)
{
    api_err e;
    /* managedFields are the server's (fuzz_apply's first finds) */
    assert_null(apply(CM, "m", T0, NULL,
                      "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c',"
                      "'managedFields':[]}}",
                      false, &e));
    assert_int_equal(e.code, API_BAD_REQUEST);
    assert_string_equal(e.message, "metadata.managedFields must be nil");
    api_err_clear(&e);
    const char *nulled = "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c',"
                         "'managedFields':null},'data':{'a':'1'}}";
    json_t *o = apply_ok(CM, "m", T0, NULL, nulled);
    bool changed = true;
    json_t *cn = J(nulled);
    fm_write w0 = {CM, "", "m", T1};
    api_err_init(&e);
    json_t *again = fm_apply(&w0, o, cn, false, &changed, &e);
    assert_non_null(again);
    assert_false(changed);
    json_decref(again);
    json_decref(cn);
    json_decref(o);
    /* an item without its key, a duplicate key: 400 */
    assert_null(apply(DEPLOY, "m", T0, NULL,
                      "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'d'},"
                      "'spec':{'template':{'spec':{'containers':[{'image':'x'}]}}}}",
                      false, &e));
    assert_int_equal(e.code, API_BAD_REQUEST);
    assert_non_null(strstr(e.message, "omits key field \"name\""));
    api_err_clear(&e);
    assert_null(apply(DEPLOY, "m", T0, NULL,
                      "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'d'},"
                      "'spec':{'template':{'spec':{'containers':[{'name':'x'},{'name':'x'}]}}}}",
                      false, &e));
    assert_int_equal(e.code, API_BAD_REQUEST);
    api_err_clear(&e);
    /* too large (aliases would make it so): 413 */
    json_t *leaf = J("{'a':'1','b':'2','c':'3','d':'4'}"), *data = json_object();
    for (int i = 0; i < 300000; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        json_object_set(data, k, leaf);
    }
    json_t *c = json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", "v1", "kind", "ConfigMap",
                          "metadata", "name", "c", "data", data);
    fm_write w = {CM, "", "m", T0};
    api_err_init(&e);
    assert_null(fm_apply(&w, NULL, c, false, NULL, &e));
    assert_int_equal(e.code, API_TOO_LARGE);
    api_err_clear(&e);
    json_decref(c);
    json_decref(leaf);
}

static void test_managers(void **state)
{
    char buf[256];
    fm_manager_from_user_agent("kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9", buf, sizeof buf);
    assert_string_equal(buf, "kubectl");
    fm_manager_from_user_agent("OpenAPI-Generator/31.0.0/python", buf, sizeof buf);
    assert_string_equal(buf, "OpenAPI-Generator");
    fm_manager_from_user_agent("a\x01"
                               "b\xff"
                               "c",
                               buf, sizeof buf);
    assert_string_equal(buf, "abc");
    fm_manager_from_user_agent(NULL, buf, sizeof buf);
    assert_string_equal(buf, "");
    char longua[400];
    memset(longua, 'x', sizeof longua - 1);
    longua[sizeof longua - 1] = 0;
    fm_manager_from_user_agent(longua, buf, sizeof buf);
    assert_int_equal(strlen(buf), FM_MANAGER_MAX);

    json_t *causes = json_array();
    fm_manager_check("ok-manager", "fieldManager", causes);
    assert_int_equal(json_array_size(causes), 0);
    fm_manager_check(longua, "fieldManager", causes);
    fm_manager_check("bad\x07", "fieldManager", causes);
    assert_int_equal(json_array_size(causes), 2); /* too long; unprintable */
    json_decref(causes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_configmap),
        cmocka_unit_test(test_create_deployment),
        cmocka_unit_test(test_update_takes_fields),
        cmocka_unit_test(test_update_sent_entries),
        cmocka_unit_test(test_status_reset),
        cmocka_unit_test(test_cap_updates),
        cmocka_unit_test(test_apply_create_twice),
        cmocka_unit_test(test_apply_removes),
        cmocka_unit_test(test_apply_conflicts),
        cmocka_unit_test(test_apply_keyed_lists),
        cmocka_unit_test(test_apply_upgrade_from_client_side),
        cmocka_unit_test(test_apply_errors),
        cmocka_unit_test(test_managers),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
