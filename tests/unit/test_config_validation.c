/* test_config_validation.c - ConfigMap and Secret validation
 * (api/config_validation.c) with upstream's messages, field paths and
 * reasons (pkg/apis/core/validation/validation.go and its tests'
 * vectors: TestValidateConfigMap, TestValidateSecret,
 * TestValidateDockerConfigSecret, TestValidateBasicAuthSecret, ...), the
 * stringData merge, IsConfigMapKey (core/names.c) and base64 (core/b64.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "api/config_validation.h"
#include "api/objects.h"
#include "core/b64.h"
#include "core/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MSG                                                                                    \
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "           \
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
#define IMMUTABLE "Forbidden: field is immutable when `immutable` is set"

typedef void (*validate_fn)(const json_t *, const json_t *, json_t *);

/* As the registry runs them: defaults (a Secret's), then validate. */
static json_t *run(validate_fn fn, json_t *o, json_t *old)
{
    json_t *causes = json_array();
    if (fn == secret_validate) {
        secret_defaults(o);
        if (old) secret_defaults(old);
    }
    fn(o, old, causes);
    json_decref(o);
    json_decref(old);
    return causes;
}

static void dump_fail(const json_t *c)
{
    char *s = json_dumps(c, JSON_INDENT(1));
    fail_msg("causes: %s", s ? s : "");
}

/* Exactly the causes given as "reason|field|message" strings. */
static void expect(validate_fn fn, json_t *obj, json_t *old, const char *const *want)
{
    json_t *c = run(fn, obj, old);
    size_t n = 0;
    while (want[n])
        n++;
    if (json_array_size(c) != n) dump_fail(c);
    for (size_t i = 0; i < n; i++) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", want[i]);
        char *f = strchr(buf, '|'), *m = f ? strchr(f + 1, '|') : NULL;
        assert_non_null(m);
        *f++ = '\0';
        *m++ = '\0';
        const json_t *ci = json_array_get(c, i);
        if (strcmp(json_string_value(json_object_get(ci, "reason")), buf) ||
            strcmp(json_string_value(json_object_get(ci, "field")), f) ||
            strcmp(json_string_value(json_object_get(ci, "message")), m))
            dump_fail(c);
    }
    json_decref(c);
}

#define CAUSES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE ((const char *const[]){NULL})

/* A {"metadata":{"name":"x"}, <field>: {<key>: <value>}} object. */
static json_t *with(const char *field, const char *key, const char *value)
{
    json_t *o = J("{'metadata':{'name':'x','namespace':'ns'}}");
    json_object_set_new(o, field, json_pack("{s:s}", key, value));
    return o;
}

/* assert_json_eq against a J() literal, which it frees. */
static void eq_j(const json_t *got, const char *want)
{
    json_t *w = J(want);
    assert_json_eq(got, w);
    json_decref(w);
}

/* ==== IsConfigMapKey ==== */

static void test_config_key(void **state)
{
    (void)state;
    const char *good[] = {"a",        "key",  "KEY_NAME", "key-name", "key.name",
                          ".dotfile", "a..b", "-",        NULL};
    for (const char **k = good; *k; k++) {
        name_msgs m = {0};
        if (name_config_key(*k, &m)) fail_msg("%s: %s", *k, m.msg[0]);
    }
    char long_ok[254], too_long[255];
    memset(long_ok, 'a', 253);
    long_ok[253] = '\0';
    memset(too_long, 'a', 254);
    too_long[254] = '\0';
    name_msgs m = {0};
    assert_int_equal(name_config_key(long_ok, &m), 0);
    assert_int_equal(name_config_key(too_long, &m), 1);
    assert_string_equal(m.msg[0], "must be no more than 253 characters");
    memset(&m, 0, sizeof m);
    assert_int_equal(name_config_key("", &m), 1);
    assert_string_equal(m.msg[0], KEY_MSG);
    memset(&m, 0, sizeof m);
    assert_int_equal(name_config_key("a b", &m), 1);
    memset(&m, 0, sizeof m);
    assert_int_equal(name_config_key(".", &m), 1);
    assert_string_equal(m.msg[0], "must not be '.'");
    memset(&m, 0, sizeof m);
    assert_int_equal(name_config_key("..", &m), 1);
    assert_string_equal(m.msg[0], "must not be '..'");
    memset(&m, 0, sizeof m);
    assert_int_equal(name_config_key("..a", &m), 1);
    assert_string_equal(m.msg[0], "must not start with '..'");
    memset(&m, 0, sizeof m);
    assert_int_equal(name_config_key("../a", &m), 2); /* '/' and the prefix */
    assert_string_equal(m.msg[0], KEY_MSG);
    assert_string_equal(m.msg[1], "must not start with '..'");
}

/* ==== ConfigMap ==== */

static void test_configmap_keys(void **state)
{
    (void)state;
    expect(configmap_validate,
           J("{'metadata':{'name':'x'},'data':{'key':'v','key.name':'',"
             "'KEY_NAME':'v'},'binaryData':{'bin':'AAE='}}"),
           NULL, NONE);
    /* the conformance spec "should fail to create ConfigMap with empty key" */
    expect(configmap_validate, with("data", "", "value"), NULL,
           CAUSES("FieldValueInvalid|data[]|Invalid value: \"\": " KEY_MSG));
    expect(configmap_validate, with("binaryData", "a b", "AA=="), NULL,
           CAUSES("FieldValueInvalid|binaryData[a b]|Invalid value: \"a b\": " KEY_MSG));
    expect(configmap_validate, with("data", "..", "v"), NULL,
           CAUSES("FieldValueInvalid|data[..]|Invalid value: \"..\": must not be '..'"));
    /* sorted keys, then the duplicate in the other bag */
    expect(configmap_validate,
           J("{'metadata':{'name':'x'},'data':{'z':'1','.':'2','dup':'3'},'binaryData':"
             "{'dup':'AA=='}}"),
           NULL,
           CAUSES("FieldValueInvalid|data[.]|Invalid value: \".\": must not be '.'",
                  "FieldValueInvalid|data[dup]|Invalid value: \"dup\": duplicate of key present in "
                  "binaryData"));
}

/* A ConfigMap whose data holds `n` bytes, and binaryData `b` (decoded). */
static json_t *sized_configmap(size_t n, size_t b)
{
    char *s = malloc(n + 1);
    memset(s, 'x', n);
    s[n] = '\0';
    unsigned char *raw = calloc(1, b + 1);
    char *enc = malloc(b64_encoded_len(b) + 1);
    b64_encode(raw, b, enc);
    json_t *o = json_pack("{s:{s:s}, s:{s:s}, s:{s:s}}", "metadata", "name", "x", "data", "a", s,
                          "binaryData", "b", enc);
    free(s);
    free(raw);
    free(enc);
    return o;
}

static void test_configmap_size(void **state)
{
    (void)state;
    expect(configmap_validate, sized_configmap(CONFIG_MAX_BYTES - 10, 10), NULL, NONE);
    expect(configmap_validate, sized_configmap(CONFIG_MAX_BYTES - 10, 11), NULL,
           CAUSES("FieldValueTooLong|[]|Too long: must have at most 1048576 bytes"));
    expect(configmap_validate, sized_configmap(CONFIG_MAX_BYTES + 1, 0), NULL,
           CAUSES("FieldValueTooLong|[]|Too long: must have at most 1048576 bytes"));
}

static void test_configmap_immutable(void **state)
{
    (void)state;
    const char *old = "{'metadata':{'name':'x'},'immutable':true,'data':{'a':'1'}}";
    /* metadata may change, the frozen parts may not */
    expect(configmap_validate,
           J("{'metadata':{'name':'x','labels':{'l':'v'}},'immutable':true,'data':{'a':'1'}}"),
           J(old), NONE);
    expect(configmap_validate, J("{'metadata':{'name':'x'},'immutable':true,'data':{'a':'2'}}"),
           J(old), CAUSES("FieldValueForbidden|data|" IMMUTABLE));
    expect(configmap_validate,
           J("{'metadata':{'name':'x'},'data':{'a':'1'},'binaryData':{'b':'AA=='}}"), J(old),
           CAUSES("FieldValueForbidden|immutable|" IMMUTABLE,
                  "FieldValueForbidden|binaryData|" IMMUTABLE));
    /* not immutable before: anything goes, and it may become immutable */
    expect(configmap_validate, J("{'metadata':{'name':'x'},'immutable':true,'data':{'a':'2'}}"),
           J("{'metadata':{'name':'x'},'data':{'a':'1'}}"), NONE);
    /* absent, null and {} are the same map */
    expect(configmap_validate, J("{'metadata':{'name':'x'},'immutable':true,'data':{}}"),
           J("{'metadata':{'name':'x'},'immutable':true}"), NONE);
}

/* ==== Secret ==== */

static void test_secret_keys_and_size(void **state)
{
    (void)state;
    expect(secret_validate, J("{'metadata':{'name':'x'},'data':{'tls.crt':'AA==','a_b':''}}"), NULL,
           NONE);
    /* the conformance spec "should fail to create secret due to empty secret key" */
    expect(secret_validate, with("data", "", "dmFsdWUtMQ=="), NULL,
           CAUSES("FieldValueInvalid|data[]|Invalid value: \"\": " KEY_MSG));
    /* decoded bytes count: 4 base64 characters are 3 bytes */
    size_t n = CONFIG_MAX_BYTES / 3 * 4 + 4; /* 1048578 decoded bytes */
    char *s = malloc(n + 1);
    memset(s, 'A', n);
    s[n] = '\0';
    expect(secret_validate, with("data", "a", s), NULL,
           CAUSES("FieldValueTooLong|data|Too long: must have at most 1048576 bytes"));
    s[n - 4] = '\0'; /* 1048575 bytes */
    expect(secret_validate, with("data", "a", s), NULL, NONE);
    free(s);
}

static void test_secret_types(void **state)
{
    (void)state;
    expect(secret_validate, J("{'metadata':{'name':'x'},'type':'kubernetes.io/tls'}"), NULL,
           CAUSES("FieldValueRequired|data[tls.crt]|Required value",
                  "FieldValueRequired|data[tls.key]|Required value"));
    expect(secret_validate,
           J("{'metadata':{'name':'x'},'type':'kubernetes.io/tls','data':{'tls.crt':'',"
             "'tls.key':''}}"),
           NULL, NONE);
    expect(secret_validate, J("{'metadata':{'name':'x'},'type':'kubernetes.io/basic-auth'}"), NULL,
           CAUSES("FieldValueRequired|data[username]|Required value",
                  "FieldValueRequired|data[password]|Required value"));
    expect(secret_validate,
           J("{'metadata':{'name':'x'},'type':'kubernetes.io/basic-auth','data':{'password':''}}"),
           NULL, NONE);
    expect(secret_validate,
           J("{'metadata':{'name':'x'},'type':'kubernetes.io/ssh-auth','data':{'ssh-privatekey':"
             "''}}"),
           NULL, CAUSES("FieldValueRequired|data[ssh-privatekey]|Required value"));
    expect(secret_validate,
           J("{'metadata':{'name':'x'},'type':'kubernetes.io/service-account-token'}"), NULL,
           CAUSES("FieldValueRequired|metadata.annotations[kubernetes.io/service-account.name]|"
                  "Required value"));
    /* docker configs: present, and a JSON object ({} = e30=, [1] = WzFd, "{" = ew==) */
    expect(secret_validate,
           J("{'metadata':{'name':'x'},'type':'kubernetes.io/dockerconfigjson','data':"
             "{'.dockerconfigjson':'e30='}}"),
           NULL, NONE);
    expect(secret_validate, J("{'metadata':{'name':'x'},'type':'kubernetes.io/dockercfg'}"), NULL,
           CAUSES("FieldValueRequired|data[.dockercfg]|Required value"));
    expect(secret_validate,
           J("{'metadata':{'name':'x'},'type':'kubernetes.io/dockerconfigjson','data':"
             "{'.dockerconfigjson':'WzFd'}}"),
           NULL,
           CAUSES("FieldValueInvalid|data[.dockerconfigjson]|Invalid value: \"<secret contents "
                  "redacted>\": json: cannot unmarshal array into Go value of type "
                  "map[string]interface {}"));
    expect(secret_validate,
           J("{'metadata':{'name':'x'},'type':'kubernetes.io/dockercfg','data':{'.dockercfg':"
             "'ew=='}}"),
           NULL,
           CAUSES("FieldValueInvalid|data[.dockercfg]|Invalid value: \"<secret contents "
                  "redacted>\": unexpected end of JSON input"));
    /* an unknown type asks for nothing */
    expect(secret_validate, J("{'metadata':{'name':'x'},'type':'example.com/any'}"), NULL, NONE);
}

static void test_secret_update(void **state)
{
    (void)state;
    expect(secret_validate,
           J("{'metadata':{'name':'x'},'type':'kubernetes.io/tls','data':"
             "{'tls.crt':'','tls.key':''}}"),
           J("{'metadata':{'name':'x'}}"),
           CAUSES("FieldValueInvalid|type|Invalid value: \"kubernetes.io/tls\": field is "
                  "immutable"));
    const char *old = "{'metadata':{'name':'x'},'immutable':true,'data':{'a':'AA=='}}";
    expect(secret_validate, J("{'metadata':{'name':'x'},'immutable':true,'data':{'a':'AA=='}}"),
           J(old), NONE);
    /* a stringData write is a data write: refused on an immutable Secret */
    expect(secret_validate,
           J("{'metadata':{'name':'x'},'immutable':true,'data':{'a':'AA=='},'stringData':"
             "{'b':'x'}}"),
           J(old), CAUSES("FieldValueForbidden|data|" IMMUTABLE));
    expect(secret_validate, J("{'metadata':{'name':'x'},'data':{'a':'AA=='}}"), J(old),
           CAUSES("FieldValueForbidden|immutable|" IMMUTABLE));
}

static void test_string_data(void **state)
{
    (void)state;
    json_t *o = J("{'metadata':{'name':'x'},'data':{'a':'eA==','b':'eQ=='},'stringData':"
                  "{'b':'hello','c':''}}");
    secret_defaults(o);
    eq_j(o, "{'metadata':{'name':'x'},'type':'Opaque','data':{'a':'eA==','b':'aGVsbG8=','c':''}}");
    json_decref(o);
    /* keys of stringData are validated as data's */
    expect(secret_validate, J("{'metadata':{'name':'x'},'stringData':{'':'v'}}"), NULL,
           CAUSES("FieldValueInvalid|data[]|Invalid value: \"\": " KEY_MSG));
    /* a value of the wrong type is left for the type checks */
    o = J("{'metadata':{'name':'x'},'stringData':{'a':1}}");
    secret_merge_string_data(o);
    assert_non_null(json_object_get(o, "stringData"));
    json_decref(o);
    o = J("{'stringData':null}");
    secret_merge_string_data(o);
    eq_j(o, "{}");
    json_decref(o);
}

/* ==== base64 ==== */

static void test_b64(void **state)
{
    (void)state;
    /* RFC 4648 section 10 */
    const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *enc[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (int i = 0; i < 7; i++) {
        char out[16];
        unsigned char back[16];
        size_t n = strlen(plain[i]);
        assert_int_equal(b64_encoded_len(n), strlen(enc[i]));
        b64_encode((const unsigned char *)plain[i], n, out);
        assert_string_equal(out, enc[i]);
        assert_int_equal(b64_decoded_len(enc[i], strlen(enc[i])), (long)n);
        assert_int_equal(b64_decode(enc[i], strlen(enc[i]), back), (long)n);
        assert_memory_equal(back, plain[i], n);
    }
    const unsigned char bin[] = {0, 0xff, 0xfe, 0x80};
    char out[16];
    b64_encode(bin, 4, out);
    assert_string_equal(out, "AP/+gA==");
    const char *bad[] = {"Zg=", "Z===", "Zg=a", "====", "Zm9v\n", "Zm 9", "Z!==", NULL};
    for (const char **b = bad; *b; b++)
        if (b64_decoded_len(*b, strlen(*b)) != -1) fail_msg("accepted %s", *b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_key),
        cmocka_unit_test(test_configmap_keys),
        cmocka_unit_test(test_configmap_size),
        cmocka_unit_test(test_configmap_immutable),
        cmocka_unit_test(test_secret_keys_and_size),
        cmocka_unit_test(test_secret_types),
        cmocka_unit_test(test_secret_update),
        cmocka_unit_test(test_string_data),
        cmocka_unit_test(test_b64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
