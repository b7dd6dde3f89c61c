/* test_cq_books.c - custom quotas charged in the write's transaction
 * (registry/cq_admission.c, cq_books.c) on a memory store through the
 * registry, with a property: after every write, each quota's served status
 * (usage, claims, and the objects its Ready condition names as not fully
 * readable) equals a recount of the stored objects made here, by a reference
 * that knows nothing of the books; no quota's used exceeds its limit through
 * a create or update; denials change nothing. test_problems: missing values
 * count 0 and refuse nothing; a value that is not a quantity is refused where
 * a write brings it in, and otherwise counted 0 and named until it goes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cquota.h"
#include "registry/cq_books.h"
#include "registry/admission.h"
#include "registry/quota_admission.h"
#include "teststore.h"

#define G "capsule.clastix.io", "v1beta2"

#define kind test_kind /* teststore.h */

static int create(store *st, const api_kind *k, const char *ns, json_t *o, char *msg, size_t n)
{
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    int rc = reg_create(st, k, ns, o, false, &out, &e);
    snprintf(msg, n, "%s", rc == 0 ? "" : e.message);
    int code = rc == 0 ? 201 : api_errcode_http(e.code);
    json_decref(out);
    api_err_clear(&e);
    return code;
}

static int del(store *st, const api_kind *k, const char *ns, const char *name)
{
    reg_delete_opts o = {.grace_seconds = 0};
    json_t *out = NULL;
    bool gone = false;
    api_err e;
    api_err_init(&e);
    int rc = reg_delete(st, k, ns, name, &o, &out, &gone, &e);
    int code = rc == 0 ? 200 : api_errcode_http(e.code);
    json_decref(out);
    api_err_clear(&e);
    return code;
}

/* ---- the reference: a recount of stored pods ---- */

typedef struct ref {
    qty used;
    size_t claims;
    json_t *list;    /* status.claims as Capsule lists them: by namespace, kind, name */
    size_t problems; /* pods it cannot fully read */
    char first[300]; /* the first of them by namespace and name, "ns/name" */
} ref;

static int claim_cmp(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    const char *keys[] = {"namespace", "kind", "name", "uid"};
    for (int i = 0; i < 4; i++) {
        int c = strcmp(json_string_value(json_object_get(x, keys[i])),
                       json_string_value(json_object_get(y, keys[i])));
        if (c) return c;
    }
    return 0;
}

static ref recount(store *st, const json_t *quota, bool global)
{
    char err[1024];
    cq_quota *q = cq_compile(json_object_get(quota, "spec"), global, err, sizeof err);
    assert_non_null(q);
    const char *qns =
        json_string_value(json_object_get(json_object_get(quota, "metadata"), "namespace"));
    ref r = {qty_zero(QTY_DECIMAL_SI), 0, NULL, 0, ""};
    json_t **v = NULL;
    store_obj **objs = NULL;
    size_t n = 0;
    assert_int_equal(store_list(st, "pods/", NULL, 0, &objs, &n, NULL, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        json_t *p = store_obj_parse(objs[i]);
        const char *ns = objs[i]->ns;
        bool covered = !global ? !strcmp(ns, qns) : cq_all_namespaces(q);
        if (global && !covered) { /* the namespace's labels as stored, not the status */
            char key[300];
            snprintf(key, sizeof key, "namespaces//%s", ns);
            store_obj *no = store_get(st, key);
            json_t *nsobj = no ? store_obj_parse(no) : NULL;
            covered =
                nsobj && cq_selects_namespace(
                             q, json_object_get(json_object_get(nsobj, "metadata"), "labels"));
            json_decref(nsobj);
            if (no) store_obj_unref(no);
        }
        bool matched = false, problem = false;
        qty u, net;
        if (covered &&
            cq_object_usage(q, "", "v1", "Pod", p, NULL, &matched, &u, &net, &problem, err,
                            sizeof err) == 0 &&
            problem) {
            char at[300];
            snprintf(at, sizeof at, "%s/%s", ns, objs[i]->name);
            if (!r.problems++ || strcmp(at, r.first) < 0)
                snprintf(r.first, sizeof r.first, "%s", at);
        }
        if (covered && matched) {
            assert_int_equal(qty_add(&r.used, &net), 0); /* the nets, clamped at the end */
            v = realloc(v, (r.claims + 1) * sizeof *v);
            assert_non_null(v);
            const json_t *m = json_object_get(p, "metadata");
            v[r.claims++] = json_pack("{s:s, s:s, s:s, s:O, s:O, s:O, s:o}", "group", "", "version",
                                      "v1", "kind", "Pod", "name", json_object_get(m, "name"),
                                      "namespace", json_object_get(m, "namespace"), "uid",
                                      json_object_get(m, "uid"), "usage", qty_to_json(&u));
        }
        json_decref(p);
        store_obj_unref(objs[i]);
    }
    free(objs);
    cq_free(q);
    if (qty_sign(&r.used) < 0) r.used = qty_zero(QTY_DECIMAL_SI);
    if (r.claims) qsort(v, r.claims, sizeof *v, claim_cmp);
    r.list = json_array();
    for (size_t i = 0; i < r.claims; i++)
        json_array_append_new(r.list, v[i]);
    free(v);
    return r;
}

/* Every quota's served status equals the reference; none is over its limit
 * unless `over_ok` (namespaces moved into a global quota bring their pods:
 * as a quota created over existing objects, it is then over its limit). */
static void check_books(store *st, bool over_ok)
{
    const api_kind *ks[2] = {kind(G, "customquotas"), kind(G, "globalcustomquotas")};
    const char *prefixes[2] = {"customquotas.capsule.clastix.io/",
                               "globalcustomquotas.capsule.clastix.io//"};
    for (int g = 0; g < 2; g++) {
        store_obj **objs = NULL;
        size_t n = 0;
        assert_int_equal(store_list(st, prefixes[g], NULL, 0, &objs, &n, NULL, NULL), 0);
        reg_read_views(st, ks[g], objs, n); /* (as served) */
        for (size_t i = 0; i < n; i++) {
            json_t *quota = store_obj_parse(objs[i]);
            const json_t *status = json_object_get(quota, "status");
            ref r = recount(st, quota, g == 1);
            qty used, lim;
            assert_int_equal(
                qty_from_json(json_object_get(json_object_get(status, "usage"), "used"), &used), 0);
            assert_int_equal(
                qty_from_json(json_object_get(json_object_get(quota, "spec"), "limit"), &lim), 0);
            if (qty_cmp(&used, &r.used) != 0 ||
                json_array_size(json_object_get(status, "claims")) != r.claims) {
                char a[64], b[64];
                qty_format_str(&used, a, sizeof a);
                qty_format_str(&r.used, b, sizeof b);
                fail_msg("%s: status used %s with %zu claims, recount %s with %zu", objs[i]->key, a,
                         json_array_size(json_object_get(status, "claims")), b, r.claims);
            }
            if (!json_equal(json_object_get(status, "claims"), r.list)) {
                char *a = json_dumps(json_object_get(status, "claims"), JSON_COMPACT);
                char *b = json_dumps(r.list, JSON_COMPACT);
                fail_msg("%s: status.claims %.600s, recount %.600s", objs[i]->key, a, b);
            }
            json_decref(r.list);
            /* Ready: True, or False naming how many pods it cannot read and
             * the first of them */
            const json_t *cs = json_object_get(status, "conditions"), *ready = NULL;
            for (size_t c = 0; c < json_array_size(cs); c++)
                if (!strcmp(json_string_value(json_object_get(json_array_get(cs, c), "type")),
                            "Ready"))
                    ready = json_array_get(cs, c);
            assert_non_null(ready);
            const char *rs = json_string_value(json_object_get(ready, "status")),
                       *reason = json_string_value(json_object_get(ready, "reason")),
                       *rm = json_string_value(json_object_get(ready, "message"));
            if (!r.problems) {
                if (strcmp(rs, "True"))
                    fail_msg("%s: Ready %s %s: %s", objs[i]->key, rs, reason, rm);
            } else {
                char head[64], at[400];
                snprintf(head, sizeof head, "%zu object%s with values this quota cannot read",
                         r.problems, r.problems == 1 ? "" : "s");
                snprintf(at, sizeof at, "get usage from %s (/v1, Kind=Pod) source path", r.first);
                if (strcmp(rs, "False") || strcmp(reason, "UnreadableValues") ||
                    strncmp(rm, head, strlen(head)) || !strstr(rm, at))
                    fail_msg("%s: Ready %s %s: %s; want %s naming %s", objs[i]->key, rs, reason, rm,
                             head, r.first);
            }
            if (qty_cmp(&used, &lim) > 0 && !(over_ok && g == 1)) {
                char a[64], b[64];
                qty_format_str(&used, a, sizeof a);
                qty_format_str(&lim, b, sizeof b);
                fail_msg("%s: used %s over limit %s after a pod write", objs[i]->key, a, b);
            }
            json_decref(quota);
            store_obj_unref(objs[i]);
        }
        free(objs);
    }
}

/* ---- the scenario ---- */

static uint64_t rng = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static json_t *pod(const char *name, const char *track, unsigned cpu_m)
{
    char cpu[32];
    snprintf(cpu, sizeof cpu, "%um", cpu_m);
    return json_pack("{s:{s:s, s:{s:s}}, s:{s:[{s:s, s:s, s:{s:{s:s}}}]}}", "metadata", "name",
                     name, "labels", "track", track, "spec", "containers", "name", "c", "image",
                     "nginx", "resources", "requests", "cpu", cpu);
}

static void test_books_equal_recount(void **state)
{
    (void)state;
    store *st = open_store();
    const api_kind *pods = kind("", "v1", "pods"), *cq = kind(G, "customquotas"),
                   *gcq = kind(G, "globalcustomquotas");
    const char *nss[3] = {"a", "b", "c"};
    create_core(st, "namespaces", "", "{'metadata':{'name':'a','labels':{'t':'x'}}}");
    create_core(st, "namespaces", "", "{'metadata':{'name':'b','labels':{'t':'x'}}}");
    create_core(st, "namespaces", "", "{'metadata':{'name':'c'}}");
    char msg[sizeof((api_err *)0)->message];
    json_t *q = J("{'metadata':{'name':'count'},'spec':{'limit':'4','sources':[{'apiVersion':'v1',"
                  "'kind':'Pod','op':'count','selectors':[{'matchLabels':{'track':'yes'}}]}]}}");
    assert_int_equal(create(st, cq, "a", q, msg, sizeof msg), 201);
    json_decref(q);
    q = J("{'metadata':{'name':'cpu'},'spec':{'limit':'1','sources':[{'apiVersion':'v1',"
          "'kind':'Pod','path':'.spec.containers[*].resources.requests.cpu'},{'apiVersion':'v1',"
          "'kind':'Pod','op':'sub','path':'.spec.containers[0].resources.requests.cpu',"
          "'selectors':[{'matchLabels':{'track':'free'}}]}]}}");
    assert_int_equal(create(st, cq, "b", q, msg, sizeof msg), 201);
    json_decref(q);
    q = J("{'metadata':{'name':'tenant'},'spec':{'limit':'1500m','namespaceSelectors':[{"
          "'matchLabels':{'t':'x'}}],'sources':[{'apiVersion':'v1','kind':'Pod','path':"
          "'.spec.containers[0].resources.requests.cpu'}]}}");
    assert_int_equal(create(st, gcq, "", q, msg, sizeof msg), 201);
    json_decref(q);
    check_books(st, false);
    const char *tracks[3] = {"yes", "no", "free"};
    unsigned denied = 0, created = 0;
    bool over = false; /* a namespace moved: a global quota may be over its limit */
    for (int step = 0; step < 400; step++) {
        char name[32];
        snprintf(name, sizeof name, "p%u", rnd(12));
        const char *ns = nss[rnd(3)];
        unsigned what = rnd(10);
        if (what < 5) {
            json_t *p = pod(name, tracks[rnd(3)], 100 * (1 + rnd(5)));
            int code = create(st, pods, ns, p, msg, sizeof msg);
            json_decref(p);
            if (code == 403) {
                denied++;
                if (!strstr(msg, "exceeds limit for")) fail_msg("denied: %s", msg);
            } else if (code == 201) {
                created++;
            } else if (code != 409) {
                fail_msg("create: %d %s", code, msg);
            }
        } else if (what < 8) {
            char patch[128];
            snprintf(patch, sizeof patch, "{'metadata':{'labels':{'track':'%s'}}}", tracks[rnd(3)]);
            int code = reg_merge(st, pods, ns, name, "", patch, false, msg, sizeof msg);
            if (code != 200 && code != 404 && code != 403) fail_msg("relabel: %d %s", code, msg);
        } else if (what < 9) {
            int code = del(st, pods, ns, name);
            if (code != 200 && code != 404) fail_msg("delete: %d", code);
        } else {
            char patch[64];
            snprintf(patch, sizeof patch, "{'metadata':{'labels':{'t':'%s'}}}", rnd(2) ? "x" : "y");
            assert_int_equal(reg_merge(st, kind("", "v1", "namespaces"), "", nss[rnd(3)], "", patch,
                                       false, msg, sizeof msg),
                             200);
        }
        over |= what == 9;
        check_books(st, over);
    }
    print_message("custom quota books: %u pods created, %u denied over 400 steps\n", created,
                  denied);
    assert_true(created > 0 && denied > 0);
    /* a resync finds nothing to correct... */
    size_t drift = 9;
    assert_int_equal(cq_books_resync(st, &drift), 0);
    assert_int_equal(drift, 0);
    /* ...unless a pod came in around admission (written to the store
     * directly): then it adopts the recount */
    store_txn *t = store_begin(st);
    json_t *p = pod("sneaky", "yes", 100);
    json_object_set_new(json_object_get(p, "metadata"), "namespace", json_string("a"));
    json_object_set_new(json_object_get(p, "metadata"), "uid", json_string("sneaky-uid"));
    assert_int_equal(store_txn_put(t, "pods/a/sneaky", p, NULL), 0);
    json_decref(p);
    assert_int_equal(store_commit(t), 0);
    assert_int_equal(cq_books_resync(st, &drift), 0);
    assert_true(drift >= 1);
    check_books(st, true);
    store_close(st);
}

/* Amounts beyond 18 digits are kept whole (a claim's `big`), through a
 * create, an update that changes them, one that makes them small, a
 * delete (ASan: nothing leaks) and a resync. */
static void test_big_amounts(void **state)
{
    (void)state;
    store *st = open_store();
    const api_kind *pods = kind("", "v1", "pods"), *cq = kind(G, "customquotas");
    char msg[sizeof((api_err *)0)->message];
    create_core(st, "namespaces", "", "{'metadata':{'name':'big'}}");
    json_t *q = J("{'metadata':{'name':'mem'},'spec':{'limit':'1e40','sources':[{'apiVersion':"
                  "'v1','kind':'Pod','path':'.spec.containers[*].resources.requests.memory'}]}}");
    assert_int_equal(create(st, cq, "big", q, msg, sizeof msg), 201);
    json_decref(q);
    const char *mems[3] = {"123456789012345678901234", "1Gi", "98765432109876543210987654"};
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        json_t *p = json_pack("{s:{s:s}, s:{s:[{s:s, s:s, s:{s:{s:s}}}]}}", "metadata", "name",
                              name, "spec", "containers", "name", "c", "image", "nginx",
                              "resources", "requests", "memory", mems[i]);
        assert_int_equal(create(st, pods, "big", p, msg, sizeof msg), 201);
        json_decref(p);
        check_books(st, false);
    }
    assert_int_equal(del(st, pods, "big", "p0"), 200); /* a big claim removed, p2 moves */
    check_books(st, false);
    assert_int_equal(del(st, pods, "big", "p1"), 200);
    check_books(st, false);
    size_t drift = 9;
    assert_int_equal(cq_books_resync(st, &drift), 0);
    assert_int_equal(drift, 0);
    store_close(st);
}

/* A status (or message) that must hold msg. */
static void expect_code(int code, int want, const char *msg, const char *has)
{
    if (code != want || (has && !strstr(msg, has)))
        fail_msg("HTTP %d [%s], want %d with [%s]", code, msg, want, has ? has : "");
}

static void test_problems(void **state)
{
    (void)state;
    store *st = open_store();
    const api_kind *pods = kind("", "v1", "pods"), *cq = kind(G, "customquotas");
    char msg[sizeof((api_err *)0)->message];
    create_core(st, "namespaces", "", "{'metadata':{'name':'t'}}");
    /* seed 003's cpu-limits, a cost read from an annotation (pods' resources
     * are validated before quotas: "abc" cannot get there), and one read
     * from the status */
    const char *quotas[] = {
        "{'metadata':{'name':'cpu-limits'},'spec':{'limit':'5','sources':["
        "{'apiVersion':'v1','kind':'Pod','op':'add','path':'.spec.containers[*].resources.limits."
        "cpu'},{'apiVersion':'v1','kind':'Pod','op':'add','path':"
        "'.spec.initContainers[*].resources.limits.cpu'}]}}",
        "{'metadata':{'name':'cost'},'spec':{'limit':'10','sources':[{'apiVersion':'v1','kind':"
        "'Pod','op':'count'},{'apiVersion':'v1','kind':'Pod','path':'.metadata.annotations.cost'}]}}",
        "{'metadata':{'name':'ip'},'spec':{'limit':'10','sources':[{'apiVersion':'v1','kind':'Pod',"
        "'path':'.status.podIP'}]}}",
    };
    for (size_t i = 0; i < 3; i++) {
        json_t *q = J(quotas[i]);
        expect_code(create(st, cq, "t", q, msg, sizeof msg), 201, msg, NULL);
        json_decref(q);
    }
    check_books(st, false);
    /* missing everywhere: 0, and refused by nothing */
    json_t *p =
        J("{'metadata':{'name':'p-none'},'spec':{'containers':[{'name':'c','image':'x'}]}}");
    expect_code(create(st, pods, "t", p, msg, sizeof msg), 201, msg, NULL);
    json_decref(p);
    check_books(st, false);
    /* two containers and an init container sum: 850m */
    p = J("{'metadata':{'name':'p-cpu'},'spec':{'initContainers':[{'name':'i','image':'x',"
          "'resources':{'limits':{'cpu':'100m'}}}],'containers':[{'name':'a','image':'x',"
          "'resources':{'limits':{'cpu':'250m'}}},{'name':'b','image':'x','resources':{'limits':"
          "{'cpu':'500m'}}}]}}");
    expect_code(create(st, pods, "t", p, msg, sizeof msg), 201, msg, NULL);
    json_decref(p);
    check_books(st, false);
    /* a value that is not a quantity: the create is refused, naming the path
     * and the value */
    p = J("{'metadata':{'name':'p-bad','annotations':{'cost':'abc'}},'spec':{'containers':[{"
          "'name':'c','image':'x'}]}}");
    expect_code(create(st, pods, "t", p, msg, sizeof msg), 403, msg,
                "creating resource t/p-bad (/v1, Kind=Pod) cannot be admitted because custom "
                "quota usage could not be calculated: CustomQuota \"cost\" source path "
                "\".metadata.annotations.cost\" cel \"\" op \"add\" did not resolve to a valid "
                "quantity: invalid quantity \"abc\"");
    json_decref(p);
    check_books(st, false);
    p = J("{'metadata':{'name':'p-good','annotations':{'cost':'3'}},'spec':{'containers':[{"
          "'name':'c','image':'x'}]}}");
    expect_code(create(st, pods, "t", p, msg, sizeof msg), 201, msg, NULL);
    json_decref(p);
    check_books(st, false);
    /* ... and so is an update that brings one in */
    expect_code(reg_merge(st, pods, "t", "p-good", "",
                          "{'metadata':{'annotations':{'cost':'2 x'}}}", false, msg, sizeof msg),
                403, msg,
                "updating resource t/p-good (/v1, Kind=Pod) cannot be admitted because new custom "
                "quota usage could not be calculated: CustomQuota \"cost\" source path "
                "\".metadata.annotations.cost\" cel \"\" op \"add\" did not resolve to a valid "
                "quantity: invalid quantity \"x\"");
    check_books(st, false);
    /* a status update is never refused: p-none's podIP counts 0 and is named */
    expect_code(reg_merge(st, pods, "t", "p-none", "status", "{'status':{'podIP':'10.1.2.3'}}",
                          false, msg, sizeof msg),
                200, msg, NULL);
    check_books(st, false);
    /* the object can still be changed, and other objects are not refused */
    expect_code(reg_merge(st, pods, "t", "p-none", "", "{'metadata':{'labels':{'a':'b'}}}", false,
                          msg, sizeof msg),
                200, msg, NULL);
    p = J("{'metadata':{'name':'p-other'},'spec':{'containers':[{'name':'c','image':'x'}]}}");
    expect_code(create(st, pods, "t", p, msg, sizeof msg), 201, msg, NULL);
    json_decref(p);
    check_books(st, false);
    /* one stored before admission saw it (as under a quota created later):
     * a recount counts it 0 for its cost, and names it */
    store_txn *t = store_begin(st);
    p = J(
        "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p-sneak','namespace':'t','uid':"
        "'sneak-uid','resourceVersion':'1','annotations':{'cost':'abc'}},'spec':{'containers':[{'name':'c',"
        "'image':'x','resources':{'limits':{'cpu':'1'}}}]}}");
    assert_int_equal(store_txn_put(t, "pods/t/p-sneak", p, NULL), 0);
    json_decref(p);
    assert_int_equal(store_commit(t), 0);
    size_t drift = 0;
    assert_int_equal(cq_books_resync(st, &drift), 0);
    assert_int_equal(drift, 3); /* each quota counts the pod it had not seen */
    check_books(st, false);
    expect_code(reg_merge(st, pods, "t", "p-sneak", "", "{'metadata':{'labels':{'a':'b'}}}", false,
                          msg, sizeof msg),
                200, msg, NULL);
    check_books(st, false);
    /* fixed: counted, no longer named */
    expect_code(reg_merge(st, pods, "t", "p-sneak", "", "{'metadata':{'annotations':{'cost':'2'}}}",
                          false, msg, sizeof msg),
                200, msg, NULL);
    check_books(st, false);
    /* gone: no longer named */
    assert_int_equal(del(st, pods, "t", "p-none"), 200);
    check_books(st, false);
    assert_int_equal(cq_books_resync(st, &drift), 0);
    assert_int_equal(drift, 0);
    /* a long value: its problem is kept cut (CQ_PROBLEM_MAX), the same
     * through admission and a recount */
    char *big = malloc(3000);
    assert_non_null(big);
    memset(big, 'y', 2999);
    big[2999] = '\0';
    t = store_begin(st);
    p = J("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p-long','namespace':'t','uid':"
          "'long-uid','resourceVersion':'1'},'spec':{'containers':[{'name':'c','image':'x'}]}}");
    json_object_set_new(json_object_get(p, "metadata"), "annotations",
                        json_pack("{s:s}", "cost", big));
    free(big);
    assert_int_equal(store_txn_put(t, "pods/t/p-long", p, NULL), 0);
    json_decref(p);
    assert_int_equal(store_commit(t), 0);
    assert_int_equal(cq_books_resync(st, &drift), 0);
    assert_int_equal(drift, 3);
    check_books(st, false);
    expect_code(reg_merge(st, pods, "t", "p-long", "", "{'metadata':{'labels':{'a':'b'}}}", false,
                          msg, sizeof msg),
                200, msg, NULL);
    store_obj *so = store_get(st, "customquotas.capsule.clastix.io/t/cost");
    assert_non_null(so);
    reg_read_views(st, cq, &so, 1);
    json_t *qo = store_obj_parse(so);
    const json_t *conds = json_object_get(json_object_get(qo, "status"), "conditions");
    const char *rm = json_string_value(json_object_get(json_array_get(conds, 0), "message"));
    assert_non_null(rm);
    assert_true(strlen(rm) < 1200);
    assert_non_null(strstr(rm, "get usage from t/p-long"));
    json_decref(qo);
    store_obj_unref(so);
    assert_int_equal(cq_books_resync(st, &drift), 0);
    assert_int_equal(drift, 0);
    store_close(st);
}

int main(void)
{
    if (admission_register_defaults() != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_books_equal_recount),
        cmocka_unit_test(test_big_amounts),
        cmocka_unit_test(test_problems),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    quota_admission_cleanup();
    return rc;
}
