/* test_svc_alloc.c - registry/svc_alloc.h through the registry on a memory
 * store: Services get their cluster IP and node ports in their own write,
 * requested values are honoured or refused with upstream's messages, a dry
 * run, a refusal further on and a failed validation leave the books as they
 * were, type changes and deletes release (at commit), and the books always
 * equal a recount of the stored Services (checked after every step against
 * a second allocator restored from the store). Ranges: 10.0.0.0/28 (14
 * addresses, the first kept for default/kubernetes), ports 30000-30004.
 *
 * One allocator serves the whole file (its hook stays registered): each test
 * deletes what it made, and checks that the books are back where they were. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "registry/admission.h"
#include "registry/quota_admission.h"
#include "registry/quota_ledger.h"
#include "registry/svc_alloc.h"
#include "teststore.h"

#define IPS "10.0.0.0/28"
#define PORTS "30000-30004"

static store *st;
static svc_alloc *books;
static const api_kind *svc_kind;

/* The books equal a recount of the stored Services. */
static void expect_books_match(void)
{
    char err[256];
    svc_alloc *fresh = svc_alloc_new(IPS, PORTS, err, sizeof err);
    svc_alloc_restored r;
    assert_int_equal(svc_alloc_restore(fresh, st, &r), 0);
    assert_int_equal(r.conflicts, 0);
    svc_alloc_info a, b;
    svc_alloc_info_get(books, &a);
    svc_alloc_info_get(fresh, &b);
    assert_int_equal(a.ips_used, b.ips_used);
    assert_int_equal(a.ports_used, b.ports_used);
    svc_alloc_free(fresh);
}

static void expect_used(uint32_t ips, uint32_t ports)
{
    svc_alloc_info i;
    svc_alloc_info_get(books, &i);
    assert_int_equal(i.ips_used, ips);
    assert_int_equal(i.ports_used, ports);
    expect_books_match();
}

/* Create a Service (J notation) in ns; the stored object, or NULL with the
 * error's code and message. */
static json_t *create(const char *ns, const char *obj, bool dry_run, int *code, char *msg, size_t n)
{
    json_t *o = J(obj), *out = NULL;
    api_err e;
    api_err_init(&e);
    int rc = reg_create(st, svc_kind, ns, o, dry_run, &out, &e);
    *code = rc == 0 ? 201 : api_errcode_http(e.code);
    snprintf(msg, n, "%.1000s", rc == 0 ? "" : e.message);
    api_err_clear(&e);
    json_decref(o);
    return out;
}

static json_t *created(const char *ns, const char *obj)
{
    int code;
    char msg[1024];
    json_t *out = create(ns, obj, false, &code, msg, sizeof msg);
    if (!out) fail_msg("create %s: %d %s", obj, code, msg);
    return out;
}

static void refused(const char *ns, const char *obj, int want_code, const char *want_msg)
{
    int code;
    char msg[1024];
    json_t *out = create(ns, obj, false, &code, msg, sizeof msg);
    if (out) fail_msg("admitted: %s", obj);
    assert_int_equal(code, want_code);
    assert_string_equal(msg, want_msg);
}

static void delete_svc(const char *ns, const char *name)
{
    reg_delete_opts o = {.grace_seconds = -1};
    json_t *out = NULL;
    bool gone = false;
    api_err e;
    api_err_init(&e);
    if (reg_delete(st, svc_kind, ns, name, &o, &out, &gone, &e) != 0)
        fail_msg("delete %s: %s", name, e.message);
    assert_true(gone);
    json_decref(out);
    api_err_clear(&e);
}

static const char *ip_of(const json_t *svc)
{
    return json_string_value(json_object_get(json_object_get(svc, "spec"), "clusterIP"));
}

static json_int_t node_port(const json_t *svc, size_t i)
{
    return json_integer_value(json_object_get(
        json_array_get(json_object_get(json_object_get(svc, "spec"), "ports"), i), "nodePort"));
}

static void test_types(void **state)
{
    (void)state;
    expect_used(1, 0); /* the first address, kept for default/kubernetes */
    json_t *c = created("a", "{'metadata':{'name':'c'},'spec':{'ports':[{'port':80}]}}");
    assert_non_null(ip_of(c));
    assert_int_equal(strncmp(ip_of(c), "10.0.0.", 7), 0);
    json_t *want = J("['IPv4']");
    assert_json_eq(json_object_get(json_object_get(c, "spec"), "ipFamilies"), want);
    json_decref(want);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(c, "spec"), "ipFamilyPolicy")),
        "SingleStack");
    /* entries for one port number (TCP and UDP) share a node port */
    json_t *np = created("a", "{'metadata':{'name':'np'},'spec':{'type':'NodePort','ports':[{"
                              "'name':'t','port':53},{'name':'u','port':53,'protocol':'UDP'},{"
                              "'name':'w','port':80}]}}");
    assert_true(node_port(np, 0) >= 30000 && node_port(np, 0) <= 30004);
    assert_int_equal(node_port(np, 0), node_port(np, 1));
    assert_int_not_equal(node_port(np, 0), node_port(np, 2));
    json_t *lb = created("a", "{'metadata':{'name':'lb'},'spec':{'type':'LoadBalancer',"
                              "'allocateLoadBalancerNodePorts':false,'ports':[{'port':80}]}}");
    assert_int_equal(node_port(lb, 0), 0);
    json_t *hl = created("a", "{'metadata':{'name':'hl'},'spec':{'clusterIP':'None','ports':[{"
                              "'port':80}]}}");
    assert_string_equal(ip_of(hl), "None");
    json_t *ext = created("a", "{'metadata':{'name':'ext'},'spec':{'type':'ExternalName',"
                               "'externalName':'a.example.com'}}");
    assert_null(ip_of(ext));
    expect_used(4, 2);
    const char *names[] = {"c", "np", "lb", "hl", "ext"};
    for (size_t i = 0; i < 5; i++)
        delete_svc("a", names[i]);
    expect_used(1, 0);
    json_decref(c);
    json_decref(np);
    json_decref(lb);
    json_decref(hl);
    json_decref(ext);
}

static void test_requested(void **state)
{
    (void)state;
    json_t *f = created("a", "{'metadata':{'name':'f'},'spec':{'clusterIP':'10.0.0.5','ports':["
                             "{'port':80}]}}");
    assert_string_equal(ip_of(f), "10.0.0.5");
    refused("a", "{'metadata':{'name':'g'},'spec':{'clusterIP':'10.0.0.5','ports':[{'port':80}]}}",
            422,
            "Service \"g\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.0.0.5\"}: "
            "failed to allocate IP 10.0.0.5: provided IP is already allocated");
    refused("a", "{'metadata':{'name':'g'},'spec':{'clusterIP':'10.0.0.15','ports':[{'port':80}]}}",
            422,
            "Service \"g\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.0.0.15\"}: "
            "failed to allocate IP 10.0.0.15: the provided IP (10.0.0.15) is not in the valid "
            "range. The range of valid IPs is 10.0.0.0/28");
    /* the first address: default/kubernetes's alone */
    refused("a", "{'metadata':{'name':'g'},'spec':{'clusterIP':'10.0.0.1','ports':[{'port':80}]}}",
            422,
            "Service \"g\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.0.0.1\"}: "
            "failed to allocate IP 10.0.0.1: provided IP is already allocated");
    json_t *k = created("default", "{'metadata':{'name':'kubernetes'},'spec':{'clusterIP':"
                                   "'10.0.0.1','ports':[{'port':443}]}}");
    json_t *n = created("a", "{'metadata':{'name':'n'},'spec':{'type':'NodePort','ports':[{"
                             "'port':80,'nodePort':30003}]}}");
    assert_int_equal(node_port(n, 0), 30003);
    refused("a",
            "{'metadata':{'name':'m'},'spec':{'type':'NodePort','ports':[{'port':80,'nodePort':"
            "30003}]}}",
            422,
            "Service \"m\" is invalid: spec.ports[0].nodePort: Invalid value: 30003: provided "
            "port is already allocated");
    refused("a",
            "{'metadata':{'name':'m'},'spec':{'type':'NodePort','ports':[{'port':80,'nodePort':"
            "30005}]}}",
            422,
            "Service \"m\" is invalid: spec.ports[0].nodePort: Invalid value: 30005: provided "
            "port is not in the valid range. The range of valid ports is 30000-30004");
    expect_used(3, 1);
    delete_svc("a", "f");
    delete_svc("a", "n");
    delete_svc("default", "kubernetes");
    expect_used(1, 0);
    json_decref(f);
    json_decref(k);
    json_decref(n);
}

/* 13 free addresses, then full (upstream's 500); a delete frees one, which
 * the next create gets. */
static void test_exhaust(void **state)
{
    (void)state;
    char name[64], obj[256], freed[64] = "";
    for (int i = 0; i < 13; i++) {
        snprintf(obj, sizeof obj, "{'metadata':{'name':'x%d'},'spec':{'ports':[{'port':80}]}}", i);
        json_t *s = created("a", obj);
        if (i == 7) snprintf(freed, sizeof freed, "%s", ip_of(s));
        json_decref(s);
    }
    refused("a", "{'metadata':{'name':'over'},'spec':{'ports':[{'port':80}]}}", 500,
            "Internal error occurred: failed to allocate a serviceIP: range is full");
    expect_used(14, 0);
    delete_svc("a", "x7");
    json_t *again = created("a", "{'metadata':{'name':'again'},'spec':{'ports':[{'port':80}]}}");
    assert_string_equal(ip_of(again), freed);
    json_decref(again);
    delete_svc("a", "again");
    for (int i = 0; i < 13; i++) {
        if (i == 7) continue;
        snprintf(name, sizeof name, "x%d", i);
        delete_svc("a", name);
    }
    expect_used(1, 0);
}

/* Allocations of a write that does not commit are undone: a dry run, a
 * quota refusal (admission after the hook), a validation failure. */
static void test_rolled_back(void **state)
{
    (void)state;
    int code;
    char msg[1024];
    json_t *dry =
        create("a",
               "{'metadata':{'name':'d'},'spec':{'type':'NodePort','clusterIP':'10.0.0.9',"
               "'ports':[{'port':80}]}}",
               true, &code, msg, sizeof msg);
    assert_non_null(dry);
    assert_string_equal(ip_of(dry), "10.0.0.9"); /* what a real create would get */
    assert_true(node_port(dry, 0) >= 30000);
    json_decref(dry);
    expect_used(1, 0);
    create_core(st, "resourcequotas", "q",
                "{'metadata':{'name':'q'},'spec':{'hard':{'services':'0'}}}");
    refused("q", "{'metadata':{'name':'s'},'spec':{'type':'NodePort','ports':[{'port':80}]}}", 403,
            "services \"s\" is forbidden: exceeded quota: q, requested: services=1, used: "
            "services=0, limited: services=0");
    expect_used(1, 0);
    /* validation runs after the hook: an invalid port name refuses the write */
    refused("a",
            "{'metadata':{'name':'v'},'spec':{'type':'NodePort','ports':[{'name':'A_B','port':80}"
            "]}}",
            422,
            "Service \"v\" is invalid: spec.ports[0].name: Invalid value: \"A_B\": a lowercase "
            "RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
            "start and end with an alphanumeric character (e.g. 'my-name' or '123-abc', regex "
            "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
    expect_used(1, 0);
}

static json_t *update(const char *ns, const char *name, const char *patch, int *code, char *msg,
                      size_t n)
{
    *code = reg_merge(st, svc_kind, ns, name, "", patch, false, msg, n);
    return reg_get(st, svc_kind, ns, name, &(api_err){0});
}

static void test_updates(void **state)
{
    (void)state;
    int code;
    char msg[1024];
    json_t *s = created("a", "{'metadata':{'name':'s'},'spec':{'type':'NodePort','ports':[{"
                             "'name':'p','port':80}]}}");
    char ip[64];
    snprintf(ip, sizeof ip, "%s", ip_of(s));
    json_int_t np = node_port(s, 0);
    json_decref(s);
    expect_used(2, 1);
    /* a write leaving the allocated values out keeps them */
    s = update("a", "s",
               "{'spec':{'clusterIP':null,'clusterIPs':null,'ipFamilies':null,"
               "'ports':[{'name':'p','port':80}]}}",
               &code, msg, sizeof msg);
    assert_int_equal(code, 200);
    assert_string_equal(ip_of(s), ip);
    assert_int_equal(node_port(s, 0), np);
    json_decref(s);
    /* the cluster IP may not change */
    s = update("a", "s", "{'spec':{'clusterIP':'10.0.0.12'}}", &code, msg, sizeof msg);
    assert_int_equal(code, 422);
    json_decref(s);
    expect_used(2, 1);
    /* NodePort -> ClusterIP: the node port goes; -> ExternalName: the IP goes */
    s = update("a", "s", "{'spec':{'type':'ClusterIP'}}", &code, msg, sizeof msg);
    assert_int_equal(code, 200);
    assert_int_equal(node_port(s, 0), 0);
    json_decref(s);
    expect_used(2, 0);
    s = update("a", "s", "{'spec':{'type':'ExternalName','externalName':'x.example.com'}}", &code,
               msg, sizeof msg);
    assert_int_equal(code, 200);
    assert_null(ip_of(s));
    json_decref(s);
    expect_used(1, 0);
    /* back: a new IP and node port */
    s = update("a", "s", "{'spec':{'type':'NodePort'}}", &code, msg, sizeof msg);
    if (code != 200) fail_msg("%s", msg);
    assert_non_null(ip_of(s));
    assert_true(node_port(s, 0) >= 30000);
    json_decref(s);
    expect_used(2, 1);
    /* a node port changed by number: the new one reserved, the old released */
    s = update("a", "s", "{'spec':{'ports':[{'name':'p','port':80,'nodePort':30004}]}}", &code, msg,
               sizeof msg);
    if (code != 200 || node_port(s, 0) != 30004) fail_msg("%d %s", code, msg);
    json_decref(s);
    expect_used(2, 1);
    delete_svc("a", "s");
    expect_used(1, 0);
}

/* A LoadBalancer with externalTrafficPolicy Local gets a health check node
 * port (allocHealthCheckNodePort), released when it no longer needs one. */
static void test_health_check_port(void **state)
{
    (void)state;
    int code;
    char msg[1024];
    json_t *s = created("a", "{'metadata':{'name':'hc'},'spec':{'type':'LoadBalancer',"
                             "'externalTrafficPolicy':'Local','ports':[{'port':80}]}}");
    json_int_t hc =
        json_integer_value(json_object_get(json_object_get(s, "spec"), "healthCheckNodePort"));
    assert_true(hc >= 30000 && hc <= 30004);
    assert_int_not_equal(hc, node_port(s, 0));
    json_decref(s);
    expect_used(2, 2);
    s = update("a", "hc", "{'spec':{'externalTrafficPolicy':'Cluster'}}", &code, msg, sizeof msg);
    if (code != 200) fail_msg("%s", msg);
    assert_null(json_object_get(json_object_get(s, "spec"), "healthCheckNodePort"));
    json_decref(s);
    expect_used(2, 1);
    delete_svc("a", "hc");
    expect_used(1, 0);
}

/* The recount: stored values marked, values two stored Services hold and
 * values outside the ranges counted, Services stored without an IP
 * repaired by an update. */
static void test_restore_and_repair(void **state)
{
    (void)state;
    store_txn *t = store_begin(st);
    json_t *a = J("{'apiVersion':'v1','kind':'Service','metadata':{'name':'old1','namespace':'a'},"
                  "'spec':{'type':'ClusterIP','clusterIP':'10.0.0.3','ports':[{'port':80}]}}"),
           *b = J("{'apiVersion':'v1','kind':'Service','metadata':{'name':'old2','namespace':'a'},"
                  "'spec':{'type':'ClusterIP','clusterIP':'10.0.0.3','ports':[{'port':80}]}}"),
           *c = J("{'apiVersion':'v1','kind':'Service','metadata':{'name':'old3','namespace':'a'},"
                  "'spec':{'type':'NodePort','ports':[{'port':80,'nodePort':40000}]}}");
    char rv[32]; /* as the registry stores them */
    snprintf(rv, sizeof rv, "%lld", (long long)store_txn_rev(t));
    json_t *objs[] = {a, b, c};
    for (size_t i = 0; i < 3; i++)
        json_object_set_new(json_object_get(objs[i], "metadata"), "resourceVersion",
                            json_string(rv));
    assert_int_equal(store_txn_put(t, "services/a/old1", a, NULL), 0);
    assert_int_equal(store_txn_put(t, "services/a/old2", b, NULL), 0);
    assert_int_equal(store_txn_put(t, "services/a/old3", c, NULL), 0);
    assert_int_equal(store_commit(t), 0);
    char err[256];
    svc_alloc *fresh = svc_alloc_new(IPS, PORTS, err, sizeof err);
    svc_alloc_restored r;
    assert_int_equal(svc_alloc_restore(fresh, st, &r), 0);
    assert_int_equal(r.services, 3);
    assert_int_equal(r.ips, 1);
    assert_int_equal(r.conflicts, 1);
    assert_int_equal(r.outside, 1); /* node port 40000 */
    assert_int_equal(r.missing, 1); /* old3: no cluster IP */
    svc_alloc_free(fresh);
    /* the books this file's hook uses: old3 gets an IP (and a node port for
     * its port outside the range is not given: it keeps its value) */
    assert_int_equal(svc_alloc_repair(books, st), 0);
    json_t *o3 = reg_get(st, svc_kind, "a", "old3", &(api_err){0});
    assert_non_null(ip_of(o3));
    json_decref(o3);
    delete_svc("a", "old3");
    t = store_begin(st); /* (old1/old2 never went through the books) */
    assert_int_equal(store_txn_delete(t, "services/a/old1", a), 0);
    assert_int_equal(store_txn_delete(t, "services/a/old2", b), 0);
    assert_int_equal(store_commit(t), 0);
    json_decref(a);
    json_decref(b);
    json_decref(c);
    expect_used(1, 0);
}

int main(void)
{
    char err[256];
    if (admission_register_defaults() != 0) return 1;
    books = svc_alloc_new(IPS, PORTS, err, sizeof err);
    if (!books || svc_alloc_register(books, NULL) != 0) return 1;
    st = open_store();
    svc_kind = api_kind_find("", "v1", "services");
    create_core(st, "namespaces", "", "{'metadata':{'name':'default'}}");
    create_core(st, "namespaces", "", "{'metadata':{'name':'a'}}");
    create_core(st, "namespaces", "", "{'metadata':{'name':'q'}}");
    if (svc_alloc_restore(books, st, NULL) != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_requested),
        cmocka_unit_test(test_exhaust),
        cmocka_unit_test(test_rolled_back),
        cmocka_unit_test(test_updates),
        cmocka_unit_test(test_health_check_port),
        cmocka_unit_test(test_restore_and_repair),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    quota_ledger_clear();
    store_close(st);
    svc_alloc_free(books);
    quota_admission_cleanup();
    return rc;
}
