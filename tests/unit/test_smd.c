/* test_smd.c - structured merge-diff walks (core/smd.h) over a small test
 * schema, with vectors after sigs.k8s.io/structured-merge-diff's typed tests
 * (merge of keyed and set lists and their order, atomic values, compare's
 * added/removed/modified, removal of items, named fields), the typed field
 * sets they rest on (key defaults, lenient live objects), the set
 * operations added for them, and their limits.
 *
 * The test schema: the root is a struct with
 *   list:  items keyed by "name"        items: struct {name, value, sub: map}
 *   ports: keyed by port, protocol (default "TCP")
 *   set:   a set of scalars
 *   atom:  an atomic list;  amap: an atomic map
 *   vs:    a struct of Go value type;  ptr: a struct (pointer)
 * anything else is untyped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fieldset.h"
#include "core/smd.h"

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_ROOT = 1, T_LIST, T_ITEM, T_PORTS, T_SET, T_ATOM, T_AMAP, T_STRUCT };

static const char *const name_key[] = {"name"};
static const char *const port_keys[] = {"port", "protocol"};
static const char *const port_defaults[] = {NULL, "TCP"};

static fs_type ty(unsigned tag)
{
    return (fs_type){NULL, tag};
}

static fs_type t_field(const fs_schema *s, fs_type t, const char *name, unsigned *flags)
{
    static const struct {
        const char *name;
        unsigned tag, flags;
    } root[] = {
        {"list", T_LIST, FS_FIELD_NAMED},  {"ports", T_PORTS, FS_FIELD_NAMED},
        {"set", T_SET, FS_FIELD_NAMED},    {"atom", T_ATOM, FS_FIELD_NAMED},
        {"amap", T_AMAP, FS_FIELD_NAMED},  {"vs", T_STRUCT, FS_FIELD_NAMED | FS_FIELD_VALUE},
        {"ptr", T_STRUCT, FS_FIELD_NAMED}, {"meta", 0, FS_FIELD_NAMED},
    };
    *flags = 0;
    if (t.tag == T_ROOT)
        for (size_t i = 0; i < sizeof root / sizeof *root; i++)
            if (!strcmp(root[i].name, name)) {
                *flags = root[i].flags;
                return ty(root[i].tag);
            }
    if ((t.tag == T_ITEM || t.tag == T_STRUCT) &&
        (!strcmp(name, "name") || !strcmp(name, "value") || !strcmp(name, "sub") ||
         !strcmp(name, "a") || !strcmp(name, "b")))
        *flags = FS_FIELD_NAMED;
    return ty(0);
}

static fs_type t_items(const fs_schema *s, fs_type t)
{
    return ty(t.tag == T_LIST ? T_ITEM : 0);
}

static void t_shape(const fs_schema *s, fs_type t, bool is_list, fs_list_info *out)
{
    if (is_list && t.tag == T_LIST) *out = (fs_list_info){FS_LIST_MAP, name_key, 1, NULL};
    if (is_list && t.tag == T_PORTS)
        *out = (fs_list_info){FS_LIST_MAP, port_keys, 2, port_defaults};
    if (is_list && t.tag == T_SET) out->type = FS_LIST_SET;
    if (!is_list && t.tag == T_AMAP) out->type = FS_LIST_ATOMIC;
}

static const fs_schema SCH = {t_field, t_items, t_shape};
#define ROOT ty(T_ROOT)

static json_t *merge_ok(const char *live, const char *config)
{
    json_t *l = live ? J(live) : NULL, *c = J(config);
    char err[256];
    int code = -99;
    json_t *out = smd_merge(l, c, &SCH, ROOT, NULL, &code, err, sizeof err);
    if (!out) fail_msg("merge: %d %s", code, err);
    assert_int_equal(code, FS_OK);
    json_decref(l);
    json_decref(c);
    return out;
}

static void merge_is(const char *live, const char *config, const char *want)
{
    json_t *got = merge_ok(live, config), *w = J(want);
    char *g = json_dumps(got, JSON_COMPACT), *x = json_dumps(w, JSON_COMPACT);
    /* order matters for lists: compare the texts (maps keep insertion order) */
    if (!json_equal(got, w) || strcmp(g, x)) fail_msg("merge\n  got  %s\n  want %s", g, x);
    free(g);
    free(x);
    json_decref(got);
    json_decref(w);
}

static void merge_fails(const char *live, const char *config, int want, const char *msg)
{
    json_t *l = live ? J(live) : NULL, *c = J(config);
    char err[256] = "";
    int code = 0;
    assert_null(smd_merge(l, c, &SCH, ROOT, NULL, &code, err, sizeof err));
    assert_int_equal(code, want);
    if (msg && !strstr(err, msg)) fail_msg("error %s lacks %s", err, msg);
    json_decref(l);
    json_decref(c);
}

static void test_merge_maps(void **state)
{
    merge_is("{'a':1,'b':2}", "{'b':3,'c':4}", "{'a':1,'b':3,'c':4}");
    merge_is("{'m':{'x':1}}", "{'m':{'y':2}}", "{'m':{'x':1,'y':2}}");
    merge_is("{'m':{'x':1}}", "{'m':{}}", "{'m':{'x':1}}"); /* {} sets nothing below */
    merge_is("{'amap':{'x':1}}", "{'amap':{'y':2}}", "{'amap':{'y':2}}");
    merge_is("{'a':{'x':1}}", "{'a':'s'}", "{'a':'s'}"); /* another type: replaced */
    merge_is("{'a':1}", "{'a':null}", "{'a':null}");
    merge_is(NULL, "{'a':{'b':[1,2]}}", "{'a':{'b':[1,2]}}");
}

static void test_merge_lists(void **state)
{
    /* atomic lists are replaced; untyped lists are atomic */
    merge_is("{'atom':[1,2,3]}", "{'atom':[4]}", "{'atom':[4]}");
    merge_is("{'other':[1,2,3]}", "{'other':[3]}", "{'other':[3]}");
    /* sets: union, live order, new values after */
    merge_is("{'set':['x','y']}", "{'set':['y','z']}", "{'set':['x','y','z']}");
    /* keyed: items merge by key; live items keep their place */
    merge_is("{'list':[{'name':'a','value':1},{'name':'b','value':2},{'name':'c'}]}",
             "{'list':[{'name':'b','value':3},{'name':'d'}]}",
             "{'list':[{'name':'a','value':1},{'name':'b','value':3},{'name':'c'},{'name':'d'}]}");
    /* new items go before the next shared one */
    merge_is("{'list':[{'name':'a'},{'name':'b'}]}", "{'list':[{'name':'c'},{'name':'a'}]}",
             "{'list':[{'name':'c'},{'name':'a'},{'name':'b'}]}");
    /* the applied order of shared items wins */
    merge_is("{'list':[{'name':'a'},{'name':'b'}]}", "{'list':[{'name':'b'},{'name':'a'}]}",
             "{'list':[{'name':'b'},{'name':'a'}]}");
    merge_is("{'list':[{'name':'a','sub':{'x':1}}]}", "{'list':[{'name':'a','sub':{'y':1}}]}",
             "{'list':[{'name':'a','sub':{'x':1,'y':1}}]}");
    /* a key left out takes its default */
    merge_is("{'ports':[{'port':80,'protocol':'TCP','name':'web'}]}",
             "{'ports':[{'port':80,'x':1}]}",
             "{'ports':[{'port':80,'protocol':'TCP','name':'web','x':1}]}");
    merge_is("{'ports':[{'port':80,'protocol':'TCP'}]}", "{'ports':[{'port':80,'protocol':'UDP'}]}",
             "{'ports':[{'port':80,'protocol':'TCP'},{'port':80,'protocol':'UDP'}]}");
    /* a live list that cannot be keyed is one value */
    merge_is("{'list':[1,2]}", "{'list':[{'name':'a'}]}", "{'list':[{'name':'a'}]}");
    /* live duplicates: kept unless the configuration sets that key */
    merge_is("{'list':[{'name':'a','value':1},{'name':'a','value':2},{'name':'b'}]}",
             "{'list':[{'name':'b','value':3}]}",
             "{'list':[{'name':'a','value':1},{'name':'a','value':2},{'name':'b','value':3}]}");
    merge_is("{'list':[{'name':'a','value':1},{'name':'a','value':2}]}",
             "{'list':[{'name':'a','value':3}]}", "{'list':[{'name':'a','value':3}]}");
}

static void test_merge_errors(void **state)
{
    /* met while merging with a live list ... */
    merge_fails("{'list':[]}", "{'list':[{'value':1}]}", FS_ERR_INVALID, "associative list");
    merge_fails("{'list':[{'name':'a'}]}", "{'list':[1]}", FS_ERR_INVALID, "associative list");
    merge_fails("{'list':[{'name':'a'}]}", "{'list':[{'name':'a'},{'name':'a'}]}", FS_ERR_INVALID,
                "duplicate entries for key");
    merge_fails("{'set':['y']}", "{'set':['x','x']}", FS_ERR_INVALID, "duplicate entries");
    merge_fails(NULL, "[1]", FS_ERR_INVALID, "not an object");
    /* ... and always by the configuration's field set, which apply takes first */
    const char *bad[] = {"{'list':[{'value':1}]}", "{'list':[1]}", "{'set':['x','x']}",
                         "{'list':[{'name':'a'},{'name':'a'}]}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *c = J(bad[i]);
        int code = 0;
        assert_null(fs_from_object_typed(c, &SCH, ROOT, 0, NULL, &code, NULL, 0));
        assert_int_equal(code, FS_ERR_INVALID);
        json_decref(c);
    }
}

/* ---- compare ---- */

static void has(const fs_set *s, const char *path)
{
    if (!fs_has(s, path)) fail_msg("missing %s", path);
}

static size_t count_cb_n;
static int count_cb(void *ud, const char *p)
{
    (void)ud, (void)p;
    count_cb_n++;
    return 0;
}

static size_t members(const fs_set *s)
{
    count_cb_n = 0;
    fs_iterate(s, count_cb, NULL);
    return count_cb_n;
}

static void compare(const char *l, const char *r, smd_diff *d)
{
    json_t *a = l ? J(l) : NULL, *b = r ? J(r) : NULL;
    char err[256];
    assert_int_equal(smd_compare(a, b, &SCH, ROOT, NULL, d, err, sizeof err), FS_OK);
    json_decref(a);
    json_decref(b);
}

static void test_compare(void **state)
{
    smd_diff d;
    compare("{'a':1,'m':{'x':1},'k':'same'}", "{'a':2,'m':{},'n':{'y':1},'k':'same'}", &d);
    has(d.modified, ".a");
    has(d.removed, ".m.x");
    has(d.added, ".n");
    has(d.added, ".n.y");
    assert_int_equal(members(d.modified), 1);
    assert_int_equal(members(d.removed), 1);
    assert_int_equal(members(d.added), 2);
    smd_diff_free(&d);

    /* numbers by value; an empty map on both sides is one leaf */
    compare("{'a':1,'e':{}}", "{'a':1.0,'e':{}}", &d);
    assert_true(fs_empty(d.added) && fs_empty(d.removed) && fs_empty(d.modified));
    smd_diff_free(&d);
    compare("{}", "{'e':{}}", &d);
    has(d.added, ".e");
    smd_diff_free(&d);

    /* a value struct is never absent: only its fields are added */
    compare("{}", "{'vs':{'a':1},'ptr':{'a':1}}", &d);
    has(d.added, ".vs.a");
    has(d.added, ".ptr");
    has(d.added, ".ptr.a");
    assert_false(fs_has(d.added, ".vs"));
    smd_diff_free(&d);

    /* keyed items: an added item with everything below it */
    compare("{'list':[{'name':'a','value':1}]}",
            "{'list':[{'name':'a','value':2},{'name':'b','value':1}]}", &d);
    has(d.modified, ".list[name=\"a\"].value");
    has(d.added, ".list[name=\"b\"]");
    has(d.added, ".list[name=\"b\"].name");
    has(d.added, ".list[name=\"b\"].value");
    smd_diff_free(&d);

    /* sets and atomic values */
    compare("{'set':['x','y'],'atom':[1],'amap':{'a':1}}",
            "{'set':['y','z'],'atom':[2],'amap':{'a':2}}", &d);
    has(d.removed, ".set[=\"x\"]");
    has(d.added, ".set[=\"z\"]");
    has(d.modified, ".atom");
    has(d.modified, ".amap");
    assert_int_equal(members(d.modified), 2);
    smd_diff_free(&d);

    /* a changed type is one modified leaf; lists order-insensitive by key */
    compare("{'a':{'x':1},'list':[{'name':'a'},{'name':'b'}]}",
            "{'a':[1],'list':[{'name':'b'},{'name':'a'}]}", &d);
    has(d.modified, ".a");
    assert_int_equal(members(d.modified), 1);
    assert_true(fs_empty(d.added) && fs_empty(d.removed));
    smd_diff_free(&d);

    /* a created object: everything added */
    compare(NULL, "{'meta':{'name':'x'},'list':[{'name':'a'}]}", &d);
    has(d.added, ".meta");
    has(d.added, ".meta.name");
    has(d.added, ".list");
    has(d.added, ".list[name=\"a\"].name");
    smd_diff_free(&d);
}

/* ---- remove, named fields ---- */

/* fieldsV1 as raw JSON text (keys hold double quotes) */
static fs_set *dec(const char *fv)
{
    json_t *j = json_loads(fv, 0, NULL);
    assert_non_null(j);
    int code;
    fs_set *s = fs_from_fieldsv1(j, NULL, &code, NULL, 0);
    json_decref(j);
    assert_non_null(s);
    return s;
}

static void remove_is(const char *obj, const char *fv, const char *want)
{
    json_t *o = J(obj), *w = J(want);
    fs_set *s = dec(fv);
    json_t *got = smd_remove(o, s, &SCH, ROOT, NULL);
    assert_non_null(got);
    assert_json_eq(got, w);
    json_decref(got);
    json_decref(o);
    json_decref(w);
    fs_free(s);
}

static void test_remove(void **state)
{
    const char *obj = "{'a':1,'b':{'c':1,'d':2},'list':[{'name':'x','value':1},{'name':'y'}],"
                      "'set':['p','q'],'atom':[1,2]}";
    remove_is(obj,
              "{\"f:a\":{},\"f:b\":{\"f:c\":{}},\"f:list\":{\"k:{\\\"name\\\":\\\"y\\\"}\":{}}}",
              "{'b':{'d':2},'list':[{'name':'x','value':1}],'set':['p','q'],'atom':[1,2]}");
    /* what a removal empties goes too; set values; items' fields */
    remove_is(obj,
              "{\"f:b\":{\"f:c\":{},\"f:d\":{}},\"f:set\":{\"v:\\\"p\\\"\":{}},"
              "\"f:list\":{\"k:{\\\"name\\\":\\\"x\\\"}\":{\"f:value\":{}}}}",
              "{'a':1,'list':[{'name':'x'},{'name':'y'}],'set':['q'],'atom':[1,2]}");
    /* an item keeps its key unless it goes whole */
    remove_is(obj, "{\"f:list\":{\"k:{\\\"name\\\":\\\"x\\\"}\":{\"f:name\":{},\"f:value\":{}}}}",
              "{'a':1,'b':{'c':1,'d':2},'list':[{'name':'x'},{'name':'y'}],'set':['p','q'],"
              "'atom':[1,2]}");
    /* atomic values are not walked into */
    remove_is(obj, "{\"f:atom\":{\"i:0\":{}}}", obj);
    remove_is(obj, "{}", obj);
}

static void test_named(void **state)
{
    fs_set *s = dec("{\"f:vs\":{\"f:a\":{}},"
                    "\"f:list\":{\"k:{\\\"name\\\":\\\"x\\\"}\":{\"f:sub\":{\"f:k\":{}}}},"
                    "\"f:other\":{\"f:z\":{}}}");
    fs_set *n = smd_named_members(s, &SCH, ROOT);
    has(n, ".vs");   /* a declared field that is a parent */
    has(n, ".list"); /* ... a keyed list too */
    has(n, ".list[name=\"x\"].sub");
    assert_false(fs_has(n, ".other"));            /* untyped: not declared */
    assert_false(fs_has(n, ".list[name=\"x\"]")); /* items are not fields */
    has(n, ".vs.a");
    fs_free(s);
    fs_free(n);
}

/* ---- typed field sets, set operations ---- */

static void test_typed_sets(void **state)
{
    json_t *o = J("{'ports':[{'port':80},{'port':80,'protocol':'UDP'}],'amap':{'a':1},"
                  "'list':[{'name':'a','sub':{'x':1}}],'vs':{}}");
    int code;
    fs_set *s = fs_from_object_typed(o, &SCH, ROOT, 0, NULL, &code, NULL, 0);
    assert_non_null(s);
    has(s, ".ports[port=80,protocol=\"TCP\"]");
    has(s, ".ports[port=80,protocol=\"UDP\"]");
    has(s, ".amap");
    has(s, ".list[name=\"a\"].sub.x");
    has(s, ".vs");
    fs_free(s);
    json_decref(o);

    /* duplicates: refused in a configuration, one item in a live object */
    o = J("{'list':[{'name':'a','value':1},{'name':'a'}],'ports':[{'x':1}]}");
    assert_null(fs_from_object_typed(o, &SCH, ROOT, 0, NULL, &code, NULL, 0));
    s = fs_from_object_typed(o, &SCH, ROOT, FS_LENIENT, NULL, &code, NULL, 0);
    assert_non_null(s);
    has(s, ".list[name=\"a\"].value");
    has(s, ".ports"); /* cannot be keyed: atomic */
    fs_free(s);
    json_decref(o);
}

static void test_set_ops(void **state)
{
    fs_set *a = dec("{\"f:a\":{\"f:b\":{\"f:c\":{}},\"f:d\":{}},\"f:e\":{}}");
    fs_set *b = dec("{\"f:a\":{\".\":{},\"f:b\":{}}}");
    fs_set *rd = fs_recursive_difference(a, b), *d = fs_difference(a, b);
    assert_true(fs_empty(rd) == false);
    has(rd, ".e");
    assert_false(fs_has(rd, ".a.b.c"));
    assert_false(fs_has(rd, ".a.d"));
    has(d, ".a.b.c"); /* a plain difference keeps children of a member */
    has(d, ".a.d");
    fs_subtract(a, b, true);
    assert_true(fs_equal(a, rd));
    fs_set *c = dec("{\"f:e\":{}}");
    fs_subtract(a, c, false);
    assert_true(fs_empty(a));
    const char *p[] = {"metadata", "name"};
    fs_set *x = fs_new();
    assert_int_equal(fs_insert_fields(x, p, 2), FS_OK);
    has(x, ".metadata.name");
    assert_false(fs_has(x, ".metadata"));
    fs_free(x);
    fs_free(a);
    fs_free(b);
    fs_free(c);
    fs_free(d);
    fs_free(rd);
}

/* ---- limits ---- */

static void test_limits(void **state)
{
    /* an aliased subtree counts every time it appears */
    json_t *leaf = json_object();
    for (int i = 0; i < 100; i++)
        json_object_set_new(leaf, (char[]){(char)('a' + i % 26), (char)('a' + i / 26), 0},
                            json_integer(i));
    json_t *cfg = json_object();
    for (int i = 0; i < 200; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        json_object_set(cfg, k, leaf); /* shared, as YAML aliases are */
    }
    fs_limits lim = {64, 5000, 0};
    int code = 0;
    assert_null(smd_merge(NULL, cfg, &SCH, ROOT, &lim, &code, NULL, 0));
    assert_int_equal(code, FS_ERR_LIMIT);
    assert_null(smd_merge(cfg, cfg, &SCH, ROOT, &lim, &code, NULL, 0));
    assert_int_equal(code, FS_ERR_LIMIT);
    smd_diff d;
    assert_int_equal(smd_compare(NULL, cfg, &SCH, ROOT, &lim, &d, NULL, 0), FS_ERR_LIMIT);
    assert_null(d.added);
    json_decref(cfg);
    json_decref(leaf);

    /* depth */
    json_t *deep = json_object(), *cur = deep;
    for (int i = 0; i < 200; i++) {
        json_t *n = json_object();
        json_object_set_new(cur, "x", n);
        cur = n;
    }
    assert_null(smd_merge(deep, deep, &SCH, ROOT, NULL, &code, NULL, 0));
    assert_int_equal(code, FS_ERR_LIMIT);
    assert_int_equal(smd_compare(deep, NULL, &SCH, ROOT, NULL, &d, NULL, 0), FS_ERR_LIMIT);
    json_decref(deep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_maps),   cmocka_unit_test(test_merge_lists),
        cmocka_unit_test(test_merge_errors), cmocka_unit_test(test_compare),
        cmocka_unit_test(test_remove),       cmocka_unit_test(test_named),
        cmocka_unit_test(test_typed_sets),   cmocka_unit_test(test_set_ops),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
