/* test_typecheck.c - typed decoding of bodies (api/typecheck.h): upstream's
 * encoding/json and resource.Quantity texts, unknown-field paths, canonical
 * quantities. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "api/typecheck.h"
#include "testutil.h"

static const sch_msg *pod(void)
{
    return sch_kind("v1", "Pod");
}

/* Decode `body` as `m`; expect failure with `want`. */
static void expect_error(const sch_msg *m, const char *body, const char *want)
{
    json_t *o = J(body);
    tc_result r;
    assert_int_equal(tc_decode(m, o, &r), -1);
    assert_string_equal(r.error, want);
    tc_result_clear(&r);
    json_decref(o);
}

/* Decode `body` as `m`; expect success, the result equal to `want`, and the
 * unknown paths joined by ',' equal to `unknown`. */
static void expect_ok(const sch_msg *m, const char *body, const char *want, const char *unknown)
{
    json_t *o = J(body), *w = J(want);
    tc_result r;
    assert_int_equal(tc_decode(m, o, &r), 0);
    char *got = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
    char *exp = json_dumps(w, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(got, exp);
    char paths[1024] = "";
    size_t i;
    json_t *p;
    json_array_foreach(r.unknown, i, p)
    {
        if (i) strcat(paths, ",");
        strcat(paths, json_string_value(p));
    }
    assert_string_equal(paths, unknown);
    free(got);
    free(exp);
    tc_result_clear(&r);
    json_decref(o);
    json_decref(w);
}

static void wrong_types(void **state)
{
    expect_error(pod(), "{'metadata':{'labels':['a']}}",
                 "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of "
                 "type map[string]string");
    expect_error(pod(), "{'metadata':{'labels':{'a':1}}}",
                 "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of "
                 "type string");
    expect_error(pod(), "{'spec':{'nodeName':5}}",
                 "json: cannot unmarshal number into Go struct field PodSpec.spec.nodeName of type "
                 "string");
    expect_error(pod(), "{'spec':'x'}",
                 "json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec");
    expect_error(pod(), "{'spec':{'containers':{}}}",
                 "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of "
                 "type []v1.Container");
    expect_error(pod(), "{'spec':{'containers':[5]}}",
                 "json: cannot unmarshal number into Go struct field PodSpec.spec.containers of "
                 "type v1.Container");
    /* the struct named is the innermost one; list indices are not part of it */
    expect_error(pod(), "{'spec':{'containers':[{'name':'a'},{'name':true}]}}",
                 "json: cannot unmarshal bool into Go struct field Container.spec.containers.name "
                 "of type string");
    expect_error(pod(), "{'spec':{'hostNetwork':'yes'}}",
                 "json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of "
                 "type bool");
    expect_error(sch_kind("v1", "ResourceQuota"), "{'spec':{'hard':['cpu']}}",
                 "json: cannot unmarshal array into Go struct field ResourceQuotaSpec.spec.hard of "
                 "type v1.ResourceList");
    expect_error(sch_kind("v1", "ResourceQuota"), "{'spec':{'hard':'cpu'}}",
                 "json: cannot unmarshal string into Go struct field ResourceQuotaSpec.spec.hard "
                 "of type v1.ResourceList");
    expect_error(pod(), "{'kind':5}",
                 "json: cannot unmarshal number into Go struct field TypeMeta.kind of type string");
}

static void numbers(void **state)
{
    expect_error(pod(), "{'spec':{'priority':1.5}}",
                 "json: cannot unmarshal number 1.5 into Go struct field PodSpec.spec.priority of "
                 "type int32");
    expect_error(pod(), "{'spec':{'priority':4294967296}}",
                 "json: cannot unmarshal number 4294967296 into Go struct field "
                 "PodSpec.spec.priority of type int32");
    expect_error(pod(), "{'spec':{'priority':'1'}}",
                 "json: cannot unmarshal string into Go struct field PodSpec.spec.priority of type "
                 "int32");
    /* int64 takes what int32 does not */
    expect_ok(pod(), "{'spec':{'activeDeadlineSeconds':4294967296}}",
              "{'spec':{'activeDeadlineSeconds':4294967296}}", "");
}

static void quantities(void **state)
{
    const char *re = "quantities must match the regular expression "
                     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    expect_error(pod(), "{'spec':{'containers':[{'resources':{'requests':{'cpu':'abc'}}}]}}", re);
    expect_error(pod(), "{'spec':{'containers':[{'resources':{'requests':{'cpu':true}}}]}}", re);
    expect_error(pod(), "{'spec':{'containers':[{'resources':{'limits':{'cpu':''}}}]}}", re);
    expect_error(pod(), "{'spec':{'overhead':{'cpu':'NaN'}}}", re);
    /* canonical form, numbers included; negative values are validation's to refuse */
    expect_ok(pod(),
              "{'spec':{'containers':[{'resources':{'requests':{'cpu':0.5,'memory':'1024Mi'},"
              "'limits':{'cpu':'-1'}}}]}}",
              "{'spec':{'containers':[{'resources':{'requests':{'cpu':'500m','memory':'1Gi'},"
              "'limits':{'cpu':'-1'}}}]}}",
              "");
    expect_ok(sch_kind("v1", "ResourceQuota"), "{'spec':{'hard':{'pods':'1000m','cpu':null}}}",
              "{'spec':{'hard':{'pods':'1','cpu':'0'}}}", "");
    expect_ok(sch_kind("v1", "PersistentVolumeClaim"),
              "{'spec':{'resources':{'requests':{'storage':'1.5Gi'}}}}",
              "{'spec':{'resources':{'requests':{'storage':'1536Mi'}}}}", "");
}

static void unknown_fields(void **state)
{
    expect_ok(sch_kind("v1", "ResourceQuota"), "{'apiVersion':'v1','spec':{'hrad':{'cpu':'1'}}}",
              "{'apiVersion':'v1','spec':{}}", "spec.hrad");
    expect_ok(pod(),
              "{'metadata':{'name':'a','bogus':1},'spec':{'containers':[{'name':'a'},{'name':'b',"
              "'foo':{'x':1}}]},'extra':[]}",
              "{'metadata':{'name':'a'},'spec':{'containers':[{'name':'a'},{'name':'b'}]}}",
              "metadata.bogus,spec.containers[1].foo,extra");
    /* inlined types: an ephemeral container has a container's fields */
    expect_ok(pod(), "{'spec':{'ephemeralContainers':[{'name':'d','targetContainerName':'a'}]}}",
              "{'spec':{'ephemeralContainers':[{'name':'d','targetContainerName':'a'}]}}", "");
    /* raw JSON is not walked */
    expect_ok(pod(), "{'metadata':{'managedFields':[{'fieldsV1':{'f:x':{}}}]}}",
              "{'metadata':{'managedFields':[{'fieldsV1':{'f:x':{}}}]}}", "");
}

static void unknown_bounded(void **state)
{
    json_t *o = J("{'spec':{}}");
    json_t *spec = json_object_get(o, "spec");
    char key[32];
    for (int i = 0; i < TC_MAX_UNKNOWN * 3; i++) {
        snprintf(key, sizeof key, "f%d", i);
        json_object_set_new(spec, key, json_integer(i));
    }
    tc_result r;
    assert_int_equal(tc_decode(pod(), o, &r), 0);
    assert_int_equal(json_array_size(r.unknown), TC_MAX_UNKNOWN);
    assert_int_equal(json_object_size(spec), 0); /* all pruned */
    char msg[256];
    json_t *two = J("['spec.a','b[0].c']");
    tc_strict_error(two, msg, sizeof msg);
    assert_string_equal(
        msg, "strict decoding error: unknown field \"spec.a\", unknown field \"b[0].c\"");
    json_decref(two);
    tc_result_clear(&r);
    json_decref(o);
}

static void nulls_times_bytes(void **state)
{
    /* null is the zero value: dropped, but a zero metav1.Time stays null */
    expect_ok(pod(),
              "{'metadata':{'labels':null,'creationTimestamp':null,'annotations':{'a':null}},"
              "'spec':null}",
              "{'metadata':{'creationTimestamp':null,'annotations':{'a':''}}}", "");
    expect_error(pod(), "{'metadata':{'creationTimestamp':5}}",
                 "json: cannot unmarshal number into Go value of type string");
    expect_error(pod(), "{'metadata':{'creationTimestamp':'yesterday'}}",
                 "parsing time \"yesterday\" as \"2006-01-02T15:04:05Z07:00\": cannot parse "
                 "\"yesterday\" as \"2006\"");
    expect_ok(pod(), "{'metadata':{'creationTimestamp':'2024-01-02T03:04:05Z'}}",
              "{'metadata':{'creationTimestamp':'2024-01-02T03:04:05Z'}}", "");
    const sch_msg *secret = sch_kind("v1", "Secret");
    expect_ok(secret, "{'data':{'a':'aGVsbG8=','b':''}}", "{'data':{'a':'aGVsbG8=','b':''}}", "");
    expect_error(secret, "{'data':{'a':'not base64!'}}", "illegal base64 data at input byte 3");
    expect_error(secret, "{'data':{'a':'abc'}}", "illegal base64 data at input byte 0");
    expect_error(secret, "{'data':{'a':7}}",
                 "json: cannot unmarshal number into Go struct field Secret.data of type []uint8");
}

static void int_or_string(void **state)
{
    const sch_msg *svc = sch_kind("v1", "Service");
    expect_ok(
        svc, "{'spec':{'ports':[{'port':80,'targetPort':'http'},{'port':81,'targetPort':8080}]}}",
        "{'spec':{'ports':[{'port':80,'targetPort':'http'},{'port':81,'targetPort':8080}]}}", "");
    expect_error(svc, "{'spec':{'ports':[{'port':80,'targetPort':true}]}}",
                 "json: cannot unmarshal bool into Go value of type int32");
    expect_error(svc, "{'spec':{'ports':[{'port':80,'targetPort':1.5}]}}",
                 "json: cannot unmarshal number 1.5 into Go value of type int32");
}

/* Strategic merge patches are converted from a map upstream: the
 * unstructured converter's texts. */
static void unstructured_texts(void **state)
{
    const char *cases[][2] = {
        {"{'spec':{'hard':'x'}}", "cannot restore map from string"},
        {"{'spec':5}", "cannot restore struct from: int64"},
        {"{'spec':{'scopes':'BestEffort'}}", "cannot restore slice from string"},
        {"{'spec':{'scopes':[1.5]}}", "cannot convert float64 to string"},
        {"{'metadata':{'labels':{'a':true}}}", "cannot convert bool to string"},
        {"{'metadata':{'generation':'1'}}", "cannot convert string to int64"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *o = J(cases[i][0]);
        tc_result r;
        assert_int_equal(tc_decode_mode(sch_kind("v1", "ResourceQuota"), o, TC_UNSTRUCTURED, &r),
                         -1);
        assert_string_equal(r.error, cases[i][1]);
        tc_result_clear(&r);
        json_decref(o);
    }
}

static void go_values(void **state)
{
    const char *cases[][2] = {
        {"{'spec':{'hard':'x'}}", "map[spec:map[hard:x]]"},
        {"{'b':[1,'a',true,null],'a':{}}", "map[a:map[] b:[1 a true <nil>]]"},
        {"[0.5, 1e6, 1e21, 0.00001, -2.25]", "[0.5 1000000 1e+21 1e-05 -2.25]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *v = J(cases[i][0]);
        char *s = tc_go_value(v, 1000);
        assert_string_equal(s, cases[i][1]);
        free(s);
        json_decref(v);
    }
    json_t *v = J("{'spec':{'hard':'x'}}");
    char *s = tc_go_value(v, 8); /* bounded: cut where it stopped */
    assert_true(strlen(s) <= 8);
    free(s);
    json_decref(v);
}

static void not_an_object(void **state)
{
    json_t *a = json_array();
    tc_result r;
    assert_int_equal(tc_decode(pod(), a, &r), -1);
    assert_string_equal(r.error, "json: cannot unmarshal array into Go value of type v1.Pod");
    tc_result_clear(&r);
    json_decref(a);
}

/* Every served kind has a definition, and every field of every reachable
 * type has a JSON name and, where it nests, a type. */
static void schema_complete(void **state)
{
    const char *kinds[][2] = {{"v1", "Namespace"},
                              {"v1", "Pod"},
                              {"v1", "Node"},
                              {"v1", "ResourceQuota"},
                              {"v1", "LimitRange"},
                              {"v1", "Service"},
                              {"v1", "Endpoints"},
                              {"discovery.k8s.io/v1", "EndpointSlice"},
                              {"v1", "PersistentVolumeClaim"},
                              {"v1", "ConfigMap"},
                              {"v1", "Secret"},
                              {"v1", "ReplicationController"},
                              {"v1", "ServiceAccount"},
                              {"v1", "Event"},
                              {"scheduling.k8s.io/v1", "PriorityClass"},
                              {"storage.k8s.io/v1", "StorageClass"},
                              {"apps/v1", "Deployment"},
                              {"apps/v1", "ReplicaSet"},
                              {"capsule.clastix.io/v1beta2", "ResourcePool"},
                              {"capsule.clastix.io/v1beta2", "ResourcePoolClaim"}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        assert_non_null(sch_kind(kinds[i][0], kinds[i][1]));
    const sch_msg *const *all;
    size_t n = sch_all_msgs(&all);
    assert_true(n > 100);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < all[i]->n; j++) {
            const sch_field *f = &all[i]->fields[j];
            assert_true(f->type == SCH_INLINE ? f->json == NULL : f->json != NULL);
            assert_true((f->type == SCH_MSG || f->type == SCH_INLINE || f->type == SCH_MAP_SM) ==
                        (f->msg != NULL));
            assert_true(!(f->flags & SCH_VREP) || f->type == SCH_MAP_SM);
        }
}

static const sch_msg *pool(void)
{
    return sch_kind("capsule.clastix.io/v1beta2", "ResourcePool");
}

/* Maps of messages (SCH_MAP_SM): a pool's status.claims (lists of items by
 * namespace) and status.exhaustions (one message by resource). */
static void maps_of_messages(void **state)
{
    (void)state;
    expect_ok(pool(),
              "{'status':{'claims':{'ns1':[{'name':'a','uid':'u','claims':{'cpu':'0.5'},'x':1}],"
              "'ns2':null},'exhaustions':{'cpu':{'available':'1000m','requesting':2,'y':0},"
              "'memory':null}}}",
              "{'status':{'claims':{'ns1':[{'name':'a','uid':'u','claims':{'cpu':'500m'}}],"
              "'ns2':[]},'exhaustions':{'cpu':{'available':'1','requesting':'2'},"
              "'memory':{}}}}",
              "status.claims.ns1[0].x,status.exhaustions.cpu.y");
    expect_error(pool(), "{'status':{'claims':[]}}",
                 "json: cannot unmarshal array into Go struct field ResourcePoolStatus.status."
                 "claims of type map[string][]v1beta2.ResourcePoolClaimsItem");
    expect_error(pool(), "{'status':{'claims':{'ns1':{}}}}",
                 "json: cannot unmarshal object into Go struct field ResourcePoolStatus.status."
                 "claims.ns1 of type []v1beta2.ResourcePoolClaimsItem");
    expect_error(pool(), "{'status':{'claims':{'ns1':['a']}}}",
                 "json: cannot unmarshal string into Go struct field ResourcePoolStatus.status."
                 "claims.ns1 of type v1beta2.ResourcePoolClaimsItem");
    expect_error(pool(), "{'status':{'claims':{'ns1':[{'name':1}]}}}",
                 "json: cannot unmarshal number into Go struct field ResourcePoolClaimsItem.status."
                 "claims.ns1.name of type string");
    expect_error(pool(), "{'status':{'exhaustions':{'cpu':'1'}}}",
                 "json: cannot unmarshal string into Go struct field ResourcePoolStatus.status."
                 "exhaustions.cpu of type v1beta2.PoolExhaustionResource");
    expect_error(pool(), "{'status':{'exhaustions':{'cpu':{'available':'x'}}}}",
                 "quantities must match the regular expression "
                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    /* the strategic-patch (unstructured) texts name a map */
    json_t *o = J("{'status':{'exhaustions':[]}}");
    tc_result r;
    assert_int_equal(tc_decode_mode(pool(), o, TC_UNSTRUCTURED, &r), -1);
    assert_string_equal(r.error, "cannot restore map from slice");
    tc_result_clear(&r);
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wrong_types),     cmocka_unit_test(numbers),
        cmocka_unit_test(quantities),      cmocka_unit_test(unknown_fields),
        cmocka_unit_test(unknown_bounded), cmocka_unit_test(nulls_times_bytes),
        cmocka_unit_test(int_or_string),   cmocka_unit_test(not_an_object),
        cmocka_unit_test(schema_complete), cmocka_unit_test(unstructured_texts),
        cmocka_unit_test(go_values),       cmocka_unit_test(maps_of_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
