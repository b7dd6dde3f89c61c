/* test_service_spec.c - api/service_spec.h, the linked fields of a Service
 * around allocation, with vectors from upstream's storage tests
 * (TestNormalizeClusterIPs, TestPatchAllocatedValues, TestInitIPFamilyFields
 * on a single-stack IPv4 cluster, TestDropTypeDependentFields). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/service_spec.h"
#include "testutil.h"

/* svc (J notation) after fn, against want. */
static void expect_after(void (*fn)(json_t *, const json_t *), const char *svc, const char *old,
                         const char *want)
{
    json_t *s = J(svc), *o = old ? J(old) : NULL, *w = J(want);
    fn(s, o);
    assert_json_eq(s, w);
    json_decref(s);
    json_decref(o);
    json_decref(w);
}

static void test_normalize(void **state)
{
    (void)state;
    /* create: the singular fills the plural; nothing else */
    expect_after(svcspec_normalize_ips, "{'spec':{'clusterIP':'10.0.0.1'}}", NULL,
                 "{'spec':{'clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1']}}");
    expect_after(svcspec_normalize_ips, "{'spec':{'clusterIPs':['10.0.0.1']}}", NULL,
                 "{'spec':{'clusterIPs':['10.0.0.1']}}");
    expect_after(svcspec_normalize_ips, "{'spec':{}}", NULL, "{'spec':{}}");
    /* update: an old client's patch without the plural keeps it */
    expect_after(svcspec_normalize_ips, "{'spec':{'clusterIP':'10.0.0.1'}}",
                 "{'spec':{'clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1']}}",
                 "{'spec':{'clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1']}}");
    /* the singular cleared with the plural unchanged: both cleared */
    expect_after(svcspec_normalize_ips, "{'spec':{'clusterIP':'','clusterIPs':['10.0.0.1']}}",
                 "{'spec':{'clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1']}}",
                 "{'spec':{'clusterIP':''}}");
    /* the singular changed with the plural unchanged: the plural follows */
    expect_after(svcspec_normalize_ips,
                 "{'spec':{'clusterIP':'10.0.0.2','clusterIPs':['10.0.0.1']}}",
                 "{'spec':{'clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1']}}",
                 "{'spec':{'clusterIP':'10.0.0.2','clusterIPs':['10.0.0.2']}}");
}

static void test_patch_allocated(void **state)
{
    (void)state;
    const char *old = "{'spec':{'type':'NodePort','clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1'],"
                      "'ports':[{'name':'a','port':80,'nodePort':30001},{'name':'b','port':81,"
                      "'nodePort':30002}]}}";
    /* left out: taken from the stored service, by port name */
    expect_after(svcspec_patch_allocated,
                 "{'spec':{'type':'NodePort','ports':[{'name':'b','port':81},{'name':'a','port':"
                 "80}]}}",
                 old,
                 "{'spec':{'type':'NodePort','clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1'],"
                 "'ports':[{'name':'b','port':81,'nodePort':30002},{'name':'a','port':80,"
                 "'nodePort':30001}]}}");
    /* a value another port of the new service keeps is not patched in twice */
    expect_after(svcspec_patch_allocated,
                 "{'spec':{'type':'NodePort','clusterIP':'10.0.0.1','ports':[{'name':'a','port':80}"
                 ",{'name':'c','port':82,'nodePort':30001}]}}",
                 old,
                 "{'spec':{'type':'NodePort','clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1'],"
                 "'ports':[{'name':'a','port':80},{'name':'c','port':82,'nodePort':30001}]}}");
    /* to ExternalName: nothing patched */
    expect_after(svcspec_patch_allocated, "{'spec':{'type':'ExternalName','ports':[{'name':'a'}]}}",
                 old, "{'spec':{'type':'ExternalName','ports':[{'name':'a'}]}}");
    /* the health check node port, while both need one */
    expect_after(svcspec_patch_allocated,
                 "{'spec':{'type':'LoadBalancer','externalTrafficPolicy':'Local'}}",
                 "{'spec':{'type':'LoadBalancer','externalTrafficPolicy':'Local',"
                 "'healthCheckNodePort':30009}}",
                 "{'spec':{'type':'LoadBalancer','externalTrafficPolicy':'Local',"
                 "'healthCheckNodePort':30009}}");
}

/* init_families: the result (want) or the error message (want_err). */
static void expect_families(const char *svc, const char *old, const char *want,
                            const char *want_err)
{
    json_t *s = J(svc), *o = old ? J(old) : NULL;
    api_err e;
    api_err_init(&e);
    int rc = svcspec_init_families(s, o, "IPv4", &e);
    if (want_err) {
        assert_int_equal(rc, -1);
        assert_int_equal(e.code, API_INVALID);
        assert_string_equal(e.message, want_err);
    } else {
        if (rc != 0) fail_msg("%s", e.message);
        json_t *w = J(want);
        assert_json_eq(s, w);
        json_decref(w);
    }
    api_err_clear(&e);
    json_decref(s);
    json_decref(o);
}

static void test_init_families(void **state)
{
    (void)state;
    expect_families("{'spec':{'type':'ClusterIP'}}", NULL,
                    "{'spec':{'type':'ClusterIP','ipFamilyPolicy':'SingleStack',"
                    "'ipFamilies':['IPv4']}}",
                    NULL);
    expect_families("{'spec':{'type':'ExternalName'}}", NULL, "{'spec':{'type':'ExternalName'}}",
                    NULL);
    /* PreferDualStack on a single-stack cluster: the one family */
    expect_families("{'spec':{'ipFamilyPolicy':'PreferDualStack'}}", NULL,
                    "{'spec':{'ipFamilyPolicy':'PreferDualStack','ipFamilies':['IPv4']}}", NULL);
    /* headless and selectorless: RequireDualStack, both families */
    expect_families("{'spec':{'clusterIP':'None','clusterIPs':['None']}}", NULL,
                    "{'spec':{'clusterIP':'None','clusterIPs':['None'],'ipFamilyPolicy':"
                    "'RequireDualStack','ipFamilies':['IPv4','IPv6']}}",
                    NULL);
    expect_families("{'spec':{'clusterIP':'None','clusterIPs':['None'],'selector':{'a':'b'}}}",
                    NULL,
                    "{'spec':{'clusterIP':'None','clusterIPs':['None'],'selector':{'a':'b'},"
                    "'ipFamilyPolicy':'SingleStack','ipFamilies':['IPv4']}}",
                    NULL);
    expect_families("{'metadata':{'name':'s'},'spec':{'ipFamilyPolicy':'RequireDualStack'}}", NULL,
                    NULL,
                    "Service \"s\" is invalid: spec.ipFamilyPolicy: Invalid value: "
                    "\"RequireDualStack\": this cluster is not configured for dual-stack services");
    expect_families("{'metadata':{'name':'s'},'spec':{'ipFamilies':['IPv6']}}", NULL, NULL,
                    "Service \"s\" is invalid: spec.ipFamilies[0]: Invalid value: \"IPv6\": not "
                    "configured on this cluster");
    expect_families("{'metadata':{'name':'s'},'spec':{'clusterIP':'fd00::1','clusterIPs':["
                    "'fd00::1']}}",
                    NULL, NULL,
                    "Service \"s\" is invalid: spec.clusterIPs[0]: Invalid value: "
                    "[]string{\"fd00::1\"}: IPv6 is not configured on this cluster");
    expect_families(
        "{'metadata':{'name':'s'},'spec':{'ipFamilyPolicy':'SingleStack',"
        "'ipFamilies':['IPv4','IPv6']}}",
        NULL, NULL,
        "Service \"s\" is invalid: spec.ipFamilyPolicy: Invalid value: \"SingleStack\": "
        "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families "
        "are specified");
    /* the cluster IP related fields are validated first */
    expect_families("{'metadata':{'name':'s'},'spec':{'clusterIP':'10.0.0.1','clusterIPs':["
                    "'10.0.0.2']}}",
                    NULL, NULL,
                    "Service \"s\" is invalid: spec.clusterIPs: Invalid value: "
                    "[]string{\"10.0.0.2\"}: first value must match `clusterIP`");
    /* update: the stored policy is kept, families inferred from the IPs */
    expect_families("{'spec':{'clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1']}}",
                    "{'spec':{'clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1'],'ipFamilyPolicy':"
                    "'PreferDualStack','ipFamilies':['IPv4']}}",
                    "{'spec':{'clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1'],'ipFamilyPolicy':"
                    "'PreferDualStack','ipFamilies':['IPv4']}}",
                    NULL);
}

static void test_drop_type_dependent(void **state)
{
    (void)state;
    const char *np = "{'spec':{'type':'NodePort','clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1'],"
                     "'ipFamilies':['IPv4'],'ipFamilyPolicy':'SingleStack','externalTrafficPolicy':"
                     "'Cluster','ports':[{'port':80,'nodePort':30001}]},'status':{}}";
    /* to ClusterIP: node ports and externalTrafficPolicy go, the IPs stay */
    expect_after(svcspec_drop_type_dependent,
                 "{'spec':{'type':'ClusterIP','clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1'],"
                 "'ipFamilies':['IPv4'],'ipFamilyPolicy':'SingleStack','externalTrafficPolicy':"
                 "'Cluster','ports':[{'port':80,'nodePort':30001}]},'status':{}}",
                 np,
                 "{'spec':{'type':'ClusterIP','clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1'],"
                 "'ipFamilies':['IPv4'],'ipFamilyPolicy':'SingleStack','ports':[{'port':80}]},"
                 "'status':{'loadBalancer':{}}}");
    /* a net-new node port given with the change is left (validation refuses it) */
    expect_after(svcspec_drop_type_dependent,
                 "{'spec':{'type':'ClusterIP','ports':[{'port':80,'nodePort':30002}]}}", np,
                 "{'spec':{'type':'ClusterIP','ports':[{'port':80,'nodePort':30002}]}}");
    /* to ExternalName: the cluster IPs and families go */
    expect_after(svcspec_drop_type_dependent,
                 "{'spec':{'type':'ExternalName','externalName':'a.b','clusterIP':'10.0.0.1',"
                 "'clusterIPs':['10.0.0.1'],'ipFamilies':['IPv4'],'ipFamilyPolicy':'SingleStack',"
                 "'ports':[{'port':80,'nodePort':30001}]}}",
                 np, "{'spec':{'type':'ExternalName','externalName':'a.b','ports':[{'port':80}]}}");
    /* from LoadBalancer: allocateLoadBalancerNodePorts and the class go */
    expect_after(svcspec_drop_type_dependent,
                 "{'spec':{'type':'NodePort','allocateLoadBalancerNodePorts':true,"
                 "'loadBalancerClass':'a/b'}}",
                 "{'spec':{'type':'LoadBalancer','allocateLoadBalancerNodePorts':true,"
                 "'loadBalancerClass':'a/b'}}",
                 "{'spec':{'type':'NodePort'}}");
    /* create: nothing */
    expect_after(svcspec_drop_type_dependent, "{'spec':{'type':'ClusterIP'}}", NULL,
                 "{'spec':{'type':'ClusterIP'}}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_patch_allocated),
        cmocka_unit_test(test_init_families),
        cmocka_unit_test(test_drop_type_dependent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
