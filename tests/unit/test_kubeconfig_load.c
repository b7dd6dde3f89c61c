/* test_kubeconfig_load.c - kube/kubeconfig: a kubeconfig as kubectl writes
 * it (token, client-certificate-data, a certificate-authority file, a
 * tokenFile; relative paths against the kubeconfig's directory) read into a
 * kube_config, the errors for what cannot be used, and the in-cluster
 * ServiceAccount mount. */
#include "kube/kubeconfig.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

/* "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n" and a key, base64 */
#define CERT_PEM "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
#define CERT_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
#define KEY_PEM "-----BEGIN EC PRIVATE KEY-----\nMHc\n-----END EC PRIVATE KEY-----\n"
#define KEY_B64                                                                                    \
    "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IYwotLS0tLUVORCBFQyBQUklWQVRFIEtFWS0tLS0tCg=="

static const char *const KUBECTL =
    "apiVersion: v1\n"
    "kind: Config\n"
    "preferences: {}\n"
    "clusters:\n"
    "- cluster:\n"
    "    certificate-authority: ca.crt\n"
    "    server: https://127.0.0.1:6443/\n"
    "  name: dev\n"
    "- cluster:\n"
    "    certificate-authority-data: " CERT_B64 "\n"
    "    server: https://prod.example:443\n"
    "  name: prod\n"
    "- cluster:\n"
    "    insecure-skip-tls-verify: true\n"
    "    server: https://10.0.0.1\n"
    "  name: lab\n"
    "contexts:\n"
    "- context:\n"
    "    cluster: dev\n"
    "    user: admin\n"
    "    namespace: tenants\n"
    "  name: dev-admin\n"
    "- context:\n"
    "    cluster: prod\n"
    "    user: certuser\n"
    "  name: prod-cert\n"
    "- context:\n"
    "    cluster: lab\n"
    "    user: robot\n"
    "  name: lab-robot\n"
    "- context: {cluster: lab, user: nobody}\n"
    "  name: lab-nobody\n"
    "- context: {cluster: gone, user: admin}\n"
    "  name: no-cluster\n"
    "- context: {cluster: lab, user: sso}\n"
    "  name: lab-sso\n"
    "- context: {cluster: lab, user: halfcert}\n"
    "  name: lab-halfcert\n"
    "current-context: %s\n"
    "users:\n"
    "- name: admin\n"
    "  user:\n"
    "    token: s3cr3t\n"
    "    tokenFile: ignored-when-token-is-set\n"
    "- name: certuser\n"
    "  user:\n"
    "    client-certificate-data: " CERT_B64 "\n"
    "    client-key-data: " KEY_B64 "\n"
    "- name: robot\n"
    "  user:\n"
    "    tokenFile: secrets/robot.token\n"
    "    client-certificate: /abs/robot.crt\n"
    "    client-key: robot.key\n"
    "- name: sso\n"
    "  user:\n"
    "    exec: {command: kubelogin, apiVersion: client.authentication.k8s.io/v1beta1}\n"
    "- name: halfcert\n"
    "  user:\n"
    "    client-certificate-data: " CERT_B64 "\n";

static int parse_ctx(const char *ctx, kube_config *c, kube_config_files *f, char *err,
                     size_t errlen)
{
    char text[8192];
    snprintf(text, sizeof text, KUBECTL, ctx);
    return kube_config_parse(text, strlen(text), "/home/u/.kube", c, f, err, errlen);
}

static void test_token_and_ca_file(void **state)
{
    (void)state;
    kube_config c;
    kube_config_files f;
    char err[256];
    assert_int_equal(parse_ctx("dev-admin", &c, &f, err, sizeof err), 0);
    assert_string_equal(c.server, "https://127.0.0.1:6443"); /* trailing slash cut */
    assert_string_equal(c.ca_file, "/home/u/.kube/ca.crt");  /* relative to the kubeconfig */
    assert_null(c.ca_pem);
    assert_string_equal(c.token, "s3cr3t");
    assert_null(f.token_file); /* the token wins over tokenFile */
    assert_string_equal(c.namespace, "tenants");
    assert_false(c.insecure);
    assert_null(c.cert_pem);
    kube_config_free(&c);
    kube_config_files_free(&f);
}

static void test_cert_data(void **state)
{
    (void)state;
    kube_config c;
    kube_config_files f;
    char err[256];
    assert_int_equal(parse_ctx("prod-cert", &c, &f, err, sizeof err), 0);
    assert_string_equal(c.server, "https://prod.example:443");
    assert_null(c.ca_file);
    assert_string_equal(c.ca_pem, CERT_PEM);
    assert_string_equal(c.cert_pem, CERT_PEM);
    assert_string_equal(c.key_pem, KEY_PEM);
    assert_null(c.token);
    assert_null(c.namespace);
    assert_null(f.cert_file);
    kube_config_free(&c);
    kube_config_files_free(&f);
}

static void test_files_named(void **state)
{
    (void)state;
    kube_config c;
    kube_config_files f;
    char err[256];
    assert_int_equal(parse_ctx("lab-robot", &c, &f, err, sizeof err), 0);
    assert_true(c.insecure);
    assert_null(c.token);
    assert_string_equal(f.token_file, "/home/u/.kube/secrets/robot.token");
    assert_string_equal(f.cert_file, "/abs/robot.crt");
    assert_string_equal(f.key_file, "/home/u/.kube/robot.key");
    kube_config_free(&c);
    kube_config_files_free(&f);
}

static void expect_err(const char *text, const char *want)
{
    kube_config c;
    kube_config_files f;
    char err[256] = "";
    assert_int_equal(kube_config_parse(text, strlen(text), NULL, &c, &f, err, sizeof err), -1);
    if (!strstr(err, want)) fail_msg("error [%s], want [%s]", err, want);
    assert_null(c.server); /* nothing left to free */
    assert_null(f.token_file);
}

static void test_errors(void **state)
{
    (void)state;
    char text[8192];
    expect_err("apiVersion: v1\nkind: Config\nclusters: []\n", "no current-context");
    expect_err("current-context: \"\"\n", "no current-context");
    expect_err("current-context: x\ncontexts: []\n", "context \"x\" not found");
    expect_err("[a, b]\n", "not a mapping");
    expect_err("key: [unclosed\n", "kubeconfig: ");
    struct {
        const char *ctx, *want;
    } cases[] = {
        {"lab-nobody", "user \"nobody\" not found"},
        {"no-cluster", "cluster \"gone\" not found"},
        {"lab-sso", "exec plugin"},
        {"lab-halfcert", "client certificate without its key"},
        {"nowhere", "context \"nowhere\" not found"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(text, sizeof text, KUBECTL, cases[i].ctx);
        expect_err(text, cases[i].want);
    }
    expect_err("current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
               "clusters: [{name: k, cluster: {certificate-authority-data: '!!'}}]\n",
               "cluster \"k\" has no server");
    expect_err(
        "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
        "clusters: [{name: k, cluster: {server: 'https://x', certificate-authority-data: '!!'}}]\n",
        "not base64");
}

static char tmpdir[64];

static void put(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* kube_config_load reads the files the kubeconfig names, relative to it. */
static void test_load_files(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kcfg.XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    put("robot.token", "  tok-from-file\n");
    put("robot.crt", CERT_PEM);
    put("robot.key", KEY_PEM);
    put("kubeconfig",
        "current-context: c\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
        "clusters: [{name: k, cluster: {server: 'https://h:1', certificate-authority: ca.crt}}]\n"
        "users: [{name: u, user: {tokenFile: robot.token, client-certificate: robot.crt,"
        " client-key: robot.key}}]\n");
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/kubeconfig", tmpdir);
    kube_config c;
    assert_int_equal(kube_config_load(path, &c, err, sizeof err), 0);
    assert_string_equal(c.token, "tok-from-file");
    char want[256];
    snprintf(want, sizeof want, "%s/robot.token", tmpdir);
    assert_string_equal(c.token_file, want);
    snprintf(want, sizeof want, "%s/ca.crt", tmpdir);
    assert_string_equal(c.ca_file, want);
    assert_string_equal(c.cert_pem, CERT_PEM);
    assert_string_equal(c.key_pem, KEY_PEM);
    kube_config copy;
    assert_int_equal(kube_config_copy(&copy, &c), 0);
    assert_string_equal(copy.key_pem, KEY_PEM);
    kube_config_free(&copy);
    kube_config_free(&c);

    /* a named file that is missing: an error naming it */
    snprintf(want, sizeof want, "%s/robot.key", tmpdir);
    unlink(want);
    assert_int_equal(kube_config_load(path, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "robot.key"));
    assert_int_equal(kube_config_load("/nonexistent/kubeconfig", &c, err, sizeof err), -1);

    /* in cluster: the ServiceAccount mount */
    put("token", "sa-token\n");
    put("ca.crt", CERT_PEM);
    put("namespace", "allot-system");
    assert_int_equal(kube_config_incluster(tmpdir, "10.96.0.1", "443", &c, err, sizeof err), 0);
    assert_string_equal(c.server, "https://10.96.0.1:443");
    assert_string_equal(c.token, "sa-token");
    snprintf(want, sizeof want, "%s/ca.crt", tmpdir);
    assert_string_equal(c.ca_file, want);
    assert_string_equal(c.namespace, "allot-system");
    assert_non_null(c.token_file);
    kube_config_free(&c);
    assert_int_equal(kube_config_incluster(tmpdir, "", "443", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "KUBERNETES_SERVICE_HOST"));

    char *s = kube_incluster_server("fd00::1", "6443");
    assert_string_equal(s, "https://[fd00::1]:6443");
    free(s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_and_ca_file), cmocka_unit_test(test_cert_data),
        cmocka_unit_test(test_files_named),       cmocka_unit_test(test_errors),
        cmocka_unit_test(test_load_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
