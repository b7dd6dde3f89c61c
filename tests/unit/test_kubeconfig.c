/* test_kubeconfig.c - kubeconfig writer (server/kubeconfig.c), checked with
 * kubectl when it is installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/kubeconfig.h"
#include "server/tls.h"

typedef struct {
    char dir[64];
    char path[128];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    strcpy(f->dir, "/tmp/allot-kcfg-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->path, sizeof f->path, "%s/kubeconfig", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    free(f);
    return rc == 0 ? 0 : -1;
}

static int have_kubectl(void)
{
    return system("command -v kubectl >/dev/null 2>&1") == 0;
}

/* Output of `kubectl config view --raw -o jsonpath=<expr>` on f->path, or NULL. */
static char *kubectl_get(const fixture *f, const char *jsonpath)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "kubectl config view --kubeconfig '%s' --raw -o jsonpath='%s' 2>&1",
             f->path, jsonpath);
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    char *out = calloc(1, 65536);
    size_t n = fread(out, 1, 65535, p);
    out[n] = '\0';
    if (pclose(p) != 0) fail_msg("kubectl failed: %s", out);
    return out;
}

static void expect_kubectl(const fixture *f, const char *jsonpath, const char *want)
{
    char *got = kubectl_get(f, jsonpath);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_written_file_mode_and_shape(void **state)
{
    fixture *f = *state;
    char err[256] = "";
    assert_int_equal(kubeconfig_write(f->path, "https://127.0.0.1:6443", "CA PEM\n", "admin",
                                      "abc123", err, sizeof err),
                     0);
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    FILE *fp = fopen(f->path, "r");
    char text[2048];
    size_t n = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    text[n] = '\0';
    assert_non_null(strstr(text, "apiVersion: v1\nkind: Config\n"));
    assert_non_null(strstr(text, "certificate-authority-data: Q0EgUEVNCg==\n"));
    assert_non_null(strstr(text, "current-context: \"allot\"\n"));
}

static void test_kubectl_reads_back_values(void **state)
{
    fixture *f = *state;
    char err[256] = "", data[128], *ca = NULL;
    if (!have_kubectl()) skip();
    snprintf(data, sizeof data, "%s/data", f->dir);
    assert_int_equal(tls_ensure(data, NULL, err, sizeof err), 0);
    assert_int_equal(tls_load(data, NULL, NULL, &ca, err, sizeof err), 0);
    /* Characters that would break unquoted YAML, in the token and user name. */
    const char *token = "t0k: #\"quoted\" \\back\\ 'single' {x} [y] - *z";
    const char *user = "ad\"min: #1";
    assert_int_equal(
        kubeconfig_write(f->path, "https://[::1]:6443", ca, user, token, err, sizeof err), 0);
    expect_kubectl(f, "{.users[0].user.token}", token);
    expect_kubectl(f, "{.users[0].name}", user);
    expect_kubectl(f, "{.contexts[0].context.user}", user);
    expect_kubectl(f, "{.clusters[0].cluster.server}", "https://[::1]:6443");
    expect_kubectl(f, "{.current-context}", "allot");
    expect_kubectl(f, "{.contexts[0].context.cluster}", "allot");

    /* certificate-authority-data decodes back to the CA PEM. */
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "kubectl config view --kubeconfig '%s' --raw "
             "-o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d | "
             "cmp -s - '%s/ca.crt'",
             f->path, data);
    assert_int_equal(system(cmd), 0);
    free(ca);
}

static void test_rejects_invalid_input(void **state)
{
    fixture *f = *state;
    char err[256] = "";
    assert_int_equal(
        kubeconfig_write(f->path, "https://x", "ca", "admin", "bad\xff", err, sizeof err), -1);
    assert_non_null(strstr(err, "token"));
    assert_int_equal(kubeconfig_write(f->path, NULL, "ca", "admin", "t", err, sizeof err), -1);
    assert_int_equal(access(f->path, F_OK), -1); /* nothing written */
    assert_int_equal(
        kubeconfig_write("/nonexistent/dir/kc", "https://x", "ca", "admin", "t", err, sizeof err),
        -1);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_written_file_mode_and_shape),
        T(test_kubectl_reads_back_values),
        T(test_rejects_invalid_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
