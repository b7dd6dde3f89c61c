/* test_crd.c - the CustomResourceDefinition kind (api/crd.h): defaults,
 * validation with upstream's paths and messages (names, group, scope,
 * versions, schemas prefixed spec.versions[i].schema., subresources,
 * columns, conversion, stored versions, immutable fields), the delete's
 * finalizer and condition, and the naming decision (conflicts with other
 * definitions' accepted names and with built-in kinds).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/crd.h"

#include "testutil.h"

#include <stdio.h>
#include <string.h>

static const char *BUCKET =
    "{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
    " 'metadata':{'name':'buckets.example.com'},"
    " 'spec':{'group':'example.com','scope':'Namespaced',"
    "  'names':{'plural':'buckets','kind':'Bucket','shortNames':['bk']},"
    "  'versions':[{'name':'v1','served':true,'storage':true,"
    "   'subresources':{'status':{},'scale':{'specReplicasPath':'.spec.replicas',"
    "    'statusReplicasPath':'.status.replicas'}},"
    "   'additionalPrinterColumns':[{'name':'Storage','type':'integer','jsonPath':'.spec.storageGB'}],"
    "   'schema':{'openAPIV3Schema':{'type':'object','properties':{"
    "    'spec':{'type':'object','properties':{'storageGB':{'type':'integer'},"
    "     'replicas':{'type':'integer'}}},"
    "    'status':{'type':'object','properties':{'replicas':{'type':'integer'}}}}}}}]}}";

/* The Bucket definition, defaulted, with `edit` (a JSON object) merged in
 * at the top level of spec (NULL: as is). */
static json_t *bucket(void)
{
    json_t *o = J(BUCKET);
    crd_defaults(o);
    return o;
}

static json_t *validate(const json_t *o, const json_t *old)
{
    json_t *causes = json_array();
    crd_validate(o, old, causes);
    return causes;
}

/* "field: message" of every cause, joined with " | " */
static char *texts(const json_t *causes)
{
    static char buf[8192];
    buf[0] = '\0';
    size_t i;
    json_t *c;
    json_array_foreach(causes, i, c)
    {
        size_t len = strlen(buf);
        snprintf(buf + len, sizeof buf - len, "%s%s: %s", i ? " | " : "",
                 json_string_value(json_object_get(c, "field")),
                 json_string_value(json_object_get(c, "message")));
    }
    return buf;
}

static void expect_valid(const json_t *o)
{
    json_t *causes = validate(o, NULL);
    if (json_array_size(causes)) fail_msg("invalid: %s", texts(causes));
    json_decref(causes);
}

static void expect_invalid(const json_t *o, const char *want)
{
    json_t *causes = validate(o, NULL);
    if (!strstr(texts(causes), want)) fail_msg("got  %s\nwant %s", texts(causes), want);
    json_decref(causes);
}

static json_t *spec(json_t *o)
{
    return json_object_get(o, "spec");
}

static json_t *version0(json_t *o)
{
    return json_array_get(json_object_get(spec(o), "versions"), 0);
}

static void test_defaults(void **st)
{
    (void)st;
    json_t *o = bucket();
    json_t *names = json_object_get(spec(o), "names");
    assert_string_equal(json_string_value(json_object_get(names, "singular")), "bucket");
    assert_string_equal(json_string_value(json_object_get(names, "listKind")), "BucketList");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(spec(o), "conversion"), "strategy")),
        "None");
    json_t *want = J("['v1']");
    assert_json_eq(json_object_get(json_object_get(o, "status"), "storedVersions"), want);
    json_decref(want);
    assert_string_equal(crd_storage_version(o), "v1");
    assert_true(crd_namespaced(o));
    expect_valid(o);
    /* a new storage version is added to storedVersions, the old one kept */
    json_object_set_new(version0(o), "storage", json_false());
    json_array_append_new(json_object_get(spec(o), "versions"),
                          J("{'name':'v2','served':true,'storage':true,'schema':{"
                            "'openAPIV3Schema':{'type':'object'}}}"));
    crd_defaults(o);
    want = J("['v1','v2']");
    assert_json_eq(json_object_get(json_object_get(o, "status"), "storedVersions"), want);
    json_decref(want);
    json_decref(o);
}

static void test_names(void **st)
{
    (void)st;
    json_t *o = bucket();
    json_object_set_new(json_object_get(o, "metadata"), "name", json_string("pails.example.com"));
    expect_invalid(o, "metadata.name: Invalid value: \"pails.example.com\": must be "
                      "spec.names.plural+\".\"+spec.group");
    json_decref(o);

    o = bucket();
    json_t *names = json_object_get(spec(o), "names");
    json_object_set_new(names, "shortNames", J("['ok','Not_OK']"));
    json_object_set_new(names, "listKind", json_string("Bucket"));
    json_object_set_new(names, "kind", json_string("Bucket"));
    json_t *causes = validate(o, NULL);
    expect_cause(causes, 0, "FieldValueInvalid", "spec.names.shortNames[1]",
                 "Invalid value: \"Not_OK\": a DNS-1035 label must consist of lower case "
                 "alphanumeric characters or '-', start with an alphabetic character, and end "
                 "with an alphanumeric character (e.g. 'my-name' or 'abc-123', regex used for "
                 "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
    expect_cause(causes, 1, "FieldValueInvalid", "spec.names.listKind",
                 "Invalid value: \"Bucket\": kind and listKind may not be the same");
    json_decref(causes);
    json_object_set_new(names, "kind", json_string("Bad Kind"));
    expect_invalid(o, "spec.names.kind: Invalid value: \"Bad Kind\": may have mixed case, but "
                      "should otherwise match: a DNS-1035 label");
    json_object_del(names, "kind");
    json_object_del(names, "plural");
    expect_invalid(o, "spec.names.plural: Required value | spec.names.kind: Required value");
    json_decref(o);
}

static void test_group_scope(void **st)
{
    (void)st;
    json_t *o = bucket();
    json_object_set_new(spec(o), "group", json_string("example"));
    json_object_set_new(json_object_get(o, "metadata"), "name", json_string("buckets.example"));
    expect_invalid(o, "spec.group: Invalid value: \"example\": should be a domain with at least "
                      "one dot");
    json_object_del(spec(o), "group");
    expect_invalid(o, "spec.group: Required value");
    json_decref(o);

    o = bucket();
    json_object_set_new(spec(o), "scope", json_string("Global"));
    expect_invalid(o, "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", "
                      "\"Namespaced\"");
    json_object_del(spec(o), "scope");
    expect_invalid(o, "spec.scope: Required value");
    json_decref(o);

    /* a group under k8s.io needs the approval annotation */
    o = bucket();
    json_object_set_new(spec(o), "group", json_string("x.k8s.io"));
    json_object_set_new(json_object_get(o, "metadata"), "name", json_string("buckets.x.k8s.io"));
    expect_invalid(o, "metadata.annotations[api-approved.kubernetes.io]: Required value: "
                      "protected groups must have approval annotation");
    json_decref(o);
}

static void test_versions(void **st)
{
    (void)st;
    json_t *o = bucket();
    json_t *versions = json_object_get(spec(o), "versions");
    json_t *second = json_deep_copy(version0(o));
    json_array_append_new(versions, second);
    expect_invalid(o, "spec.versions: Invalid value: "
                      "[{\"name\":\"v1\",\"served\":true,\"storage\":true},{\"name\":\"v1\","
                      "\"served\":true,\"storage\":true}]: must contain unique version names");
    expect_invalid(o, "must have exactly one version marked as storage version");
    json_object_set_new(second, "name", json_string("V2"));
    json_object_set_new(second, "storage", json_false());
    expect_invalid(o, "spec.versions[1].name: Invalid value: \"V2\": a DNS-1035 label");
    json_object_set_new(second, "name", json_string("v2"));
    expect_valid(o);
    json_object_set_new(version0(o), "served", json_false());
    json_object_set_new(second, "served", json_false());
    expect_invalid(o, "must have at least one version marked as served");
    json_decref(o);
}

static void test_schemas(void **st)
{
    (void)st;
    json_t *o = bucket();
    json_t *v = version0(o);
    json_object_del(v, "schema");
    expect_invalid(o, "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are "
                      "required");
    json_object_set_new(v, "schema",
                        J("{'openAPIV3Schema':{'type':'object','properties':{'spec':{}}}}"));
    json_t *causes = validate(o, NULL);
    expect_cause(causes, 0, "FieldValueRequired",
                 "spec.versions[0].schema.openAPIV3Schema.properties[spec].type",
                 "Required value: must not be empty for specified object fields");
    json_decref(causes);
    json_object_set_new(v, "schema", J("{'openAPIV3Schema':{'type':'string'}}"));
    expect_invalid(o, "spec.versions[0].schema.openAPIV3Schema.type: Invalid value: \"string\": "
                      "must be object at the root");
    json_decref(o);
}

static void test_cel_warning(void **st)
{
    (void)st;
    json_t *o = bucket(), *w = json_array();
    crd_warnings(o, w);
    assert_int_equal(json_array_size(w), 0);
    json_t *spec_schema = json_object_get(
        json_object_get(json_object_get(json_object_get(json_object_get(version0(o), "schema"),
                                                        "openAPIV3Schema"),
                                        "properties"),
                        "spec"),
        "properties");
    json_object_set_new(json_object_get(spec_schema, "storageGB"), "x-kubernetes-validations",
                        J("[{'rule':'self > 0'}]"));
    crd_warnings(o, w);
    assert_int_equal(json_array_size(w), 1);
    assert_string_equal(json_string_value(json_array_get(w, 0)),
                        "spec.versions[0].schema.openAPIV3Schema: x-kubernetes-validations rules "
                        "are not enforced by allotd");
    expect_valid(o); /* accepted */
    json_decref(w);
    json_decref(o);
}

static void test_subresources_columns(void **st)
{
    (void)st;
    json_t *o = bucket();
    json_t *scale = json_object_get(json_object_get(version0(o), "subresources"), "scale");
    json_object_set_new(scale, "specReplicasPath", json_string(".status.replicas"));
    json_object_set_new(scale, "statusReplicasPath", json_string("status.replicas"));
    json_object_set_new(scale, "labelSelectorPath", json_string(".metadata.labels"));
    json_t *causes = validate(o, NULL);
    expect_cause(causes, 0, "FieldValueInvalid",
                 "spec.versions[0].subresources.scale.specReplicasPath",
                 "Invalid value: \".status.replicas\": should be a json path under .spec");
    expect_cause(causes, 1, "FieldValueInvalid",
                 "spec.versions[0].subresources.scale.statusReplicasPath",
                 "Invalid value: \"status.replicas\": must be a simple json path starting with .");
    expect_cause(causes, 2, "FieldValueInvalid",
                 "spec.versions[0].subresources.scale.labelSelectorPath",
                 "Invalid value: \".metadata.labels\": should be a json path under either .spec "
                 "or .status");
    json_decref(causes);
    json_object_del(scale, "specReplicasPath");
    expect_invalid(o, "spec.versions[0].subresources.scale.specReplicasPath: Required value");
    json_decref(o);

    o = bucket();
    json_t *col = json_array_get(json_object_get(version0(o), "additionalPrinterColumns"), 0);
    json_object_set_new(col, "type", json_string("float"));
    json_object_set_new(col, "format", json_string("huge"));
    json_object_set_new(col, "jsonPath", json_string(".spec[?(@"));
    causes = validate(o, NULL);
    expect_cause(causes, 0, "FieldValueInvalid",
                 "spec.versions[0].additionalPrinterColumns[0].type",
                 "Invalid value: \"float\": must be one of boolean,date,integer,number,string");
    expect_cause(causes, 1, "FieldValueInvalid",
                 "spec.versions[0].additionalPrinterColumns[0].format",
                 "Invalid value: \"huge\": must be one of "
                 "byte,date,date-time,double,float,int32,int64,password");
    expect_cause(causes, 2, "FieldValueInvalid",
                 "spec.versions[0].additionalPrinterColumns[0].JSONPath",
                 "Invalid value: \".spec[?(@\": unrecognized column definition");
    json_decref(causes);
    json_decref(o);
}

static void test_conversion_and_stored(void **st)
{
    (void)st;
    json_t *o = bucket();
    json_object_set_new(spec(o), "conversion", J("{'strategy':'Webhook'}"));
    expect_invalid(o, "spec.conversion.strategy: Unsupported value: \"Webhook\": supported "
                      "values: \"None\"");
    json_object_set_new(spec(o), "conversion", J("{'strategy':'None'}"));
    json_object_set_new(spec(o), "preserveUnknownFields", json_true());
    expect_invalid(o, "spec.preserveUnknownFields: Invalid value: true: cannot set to true");
    json_object_del(spec(o), "preserveUnknownFields");

    /* on update: stored versions must be in spec.versions */
    json_t *old = json_deep_copy(o);
    json_object_set_new(json_object_get(o, "status"), "storedVersions", J("['v1','v0']"));
    json_t *causes = validate(o, old);
    expect_cause(causes, 0, "FieldValueInvalid", "status.storedVersions[1]",
                 "Invalid value: \"v0\": must appear in spec.versions");
    json_decref(causes);
    json_decref(old);
    json_decref(o);
}

static void test_update(void **st)
{
    (void)st;
    json_t *old = bucket(), *o = bucket();
    json_object_set_new(spec(o), "scope", json_string("Cluster"));
    json_object_set_new(json_object_get(spec(o), "names"), "kind", json_string("Pail"));
    json_object_set_new(spec(o), "group", json_string("example.org"));
    json_t *causes = json_array();
    crd_validate_update(o, old, "", causes);
    /* not established: only group and plural are immutable */
    assert_int_equal(json_array_size(causes), 1);
    expect_cause(causes, 0, "FieldValueInvalid", "spec.group",
                 "Invalid value: \"example.org\": field is immutable");
    json_decref(causes);
    crd_set_condition(old, "Established", "True", "InitialNamesAccepted", "ok",
                      "2026-01-01T00:00:00Z");
    causes = json_array();
    crd_validate_update(o, old, "", causes);
    assert_int_equal(json_array_size(causes), 3);
    expect_cause(causes, 0, "FieldValueInvalid", "spec.scope",
                 "Invalid value: \"Cluster\": field is immutable");
    expect_cause(causes, 1, "FieldValueInvalid", "spec.names.kind",
                 "Invalid value: \"Pail\": field is immutable");
    json_decref(causes);
    json_decref(old);
    json_decref(o);
}

static void test_conditions_and_delete(void **st)
{
    (void)st;
    json_t *o = bucket();
    assert_true(crd_set_condition(o, "NamesAccepted", "True", "NoConflicts", "no conflicts found",
                                  "2026-01-01T00:00:00Z"));
    /* same status: the transition time stays */
    assert_false(crd_set_condition(o, "NamesAccepted", "True", "NoConflicts", "no conflicts found",
                                   "2026-02-02T00:00:00Z"));
    assert_true(crd_condition_true(o, "NamesAccepted"));
    assert_string_equal(
        json_string_value(json_object_get(crd_condition(o, "NamesAccepted"), "lastTransitionTime")),
        "2026-01-01T00:00:00Z");
    crd_on_delete(o, "2026-03-03T00:00:00Z");
    crd_on_delete(o, "2026-03-03T00:00:00Z"); /* once */
    json_t *want = J("['customresourcecleanup.apiextensions.k8s.io']");
    assert_json_eq(json_object_get(json_object_get(o, "metadata"), "finalizers"), want);
    json_decref(want);
    const json_t *t = crd_condition(o, "Terminating");
    assert_string_equal(json_string_value(json_object_get(t, "reason")), "InstanceDeletionPending");
    assert_string_equal(json_string_value(json_object_get(t, "message")),
                        "CustomResourceDefinition marked for deletion; CustomResource deletion "
                        "will begin soon");
    json_decref(o);
}

/* ---- naming ---- */

static crd_naming naming(const json_t *crd, const char *taken_resources, const char *taken_kinds)
{
    json_t *r = J(taken_resources), *k = J(taken_kinds);
    crd_naming n;
    assert_int_equal(crd_naming_compute(crd, r, k, &n), 0);
    json_decref(r);
    json_decref(k);
    return n;
}

static void test_naming(void **st)
{
    (void)st;
    json_t *o = bucket();
    crd_naming n = naming(o, "{}", "{}");
    if (!n.ok) fail_msg("%s: %s", n.reason, n.message);
    assert_string_equal(n.reason, "NoConflicts");
    assert_string_equal(n.message, "no conflicts found");
    json_t *want = J("{'plural':'buckets','singular':'bucket','shortNames':['bk'],'kind':'Bucket',"
                     "'listKind':'BucketList'}");
    assert_json_eq(n.accepted, want);
    json_decref(want);
    crd_naming_clear(&n);

    /* another definition holds the plural and a short name: the last
     * conflict checked (short names come after the plural) decides */
    n = naming(o, "{'buckets':true}", "{}");
    assert_false(n.ok);
    assert_string_equal(n.reason, "PluralConflict");
    assert_string_equal(n.message, "\"buckets\" is already in use");
    assert_string_equal(json_string_value(json_object_get(n.accepted, "plural")), "");
    assert_string_equal(json_string_value(json_object_get(n.accepted, "kind")), "Bucket");
    crd_naming_clear(&n);
    n = naming(o, "{'bk':true}", "{'BucketList':true}");
    assert_string_equal(n.reason, "ListKindConflict");
    assert_string_equal(n.message, "\"BucketList\" is already in use");
    crd_naming_clear(&n);
    json_object_set_new(json_object_get(spec(o), "names"), "shortNames", J("['bk','bu']"));
    n = naming(o, "{'bk':true,'bu':true}", "{}");
    assert_string_equal(n.reason, "ShortNamesConflict");
    assert_string_equal(n.message, "[\"bk\" is already in use, \"bu\" is already in use]");
    assert_null(json_object_get(n.accepted, "shortNames"));
    crd_naming_clear(&n);

    /* names already accepted stay ours, whoever asks for them later */
    json_t *status = json_object_get(o, "status");
    json_object_set_new(status, "acceptedNames",
                        J("{'plural':'buckets','singular':'bucket','kind':'Bucket',"
                          "'listKind':'BucketList','shortNames':['bk']}"));
    n = naming(o, "{'buckets':true,'bucket':true,'bk':true,'bu':true}", "{'Bucket':true}");
    assert_false(n.ok);
    assert_string_equal(n.reason, "ShortNamesConflict");
    assert_string_equal(n.message, "\"bu\" is already in use");
    want = J("['bk']");
    assert_json_eq(json_object_get(n.accepted, "shortNames"), want);
    json_decref(want);
    crd_naming_clear(&n);
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_group_scope),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_schemas),
        cmocka_unit_test(test_cel_warning),
        cmocka_unit_test(test_subresources_columns),
        cmocka_unit_test(test_conversion_and_stored),
        cmocka_unit_test(test_update),
        cmocka_unit_test(test_conditions_and_delete),
        cmocka_unit_test(test_naming),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
