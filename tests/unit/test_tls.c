/* test_tls.c - CA and serving certificate bootstrap (server/tls.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "server/tls.h"

typedef struct {
    char root[64];
    char dir[128];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    strcpy(f->root, "/tmp/allot-tls-XXXXXX");
    if (!mkdtemp(f->root)) return -1;
    snprintf(f->dir, sizeof f->dir, "%s/data", f->root); /* does not exist yet */
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->root);
    int rc = system(cmd);
    free(f);
    return rc == 0 ? 0 : -1;
}

static char *slurp(const char *dir, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, fp);
    fclose(fp);
    buf[n] = '\0';
    return buf;
}

static gnutls_x509_crt_t load_crt(const char *dir, const char *name)
{
    char *pem = slurp(dir, name);
    assert_non_null(pem);
    gnutls_x509_crt_t crt;
    gnutls_datum_t d = {(unsigned char *)pem, (unsigned)strlen(pem)};
    assert_int_equal(gnutls_x509_crt_init(&crt), 0);
    assert_int_equal(gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_PEM), 0);
    free(pem);
    return crt;
}

static unsigned file_mode(const char *dir, const char *name)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(stat(path, &st), 0);
    return st.st_mode & 07777;
}

static void ensure_ok(const char *dir, const char *const *sans)
{
    char err[256] = "";
    int rc = tls_ensure(dir, sans, err, sizeof err);
    if (rc != 0) fail_msg("tls_ensure: %s", err);
}

/* The SANs of crt rendered as "DNS:x" / "IP:a.b.c.d" / "IP:v6", comma-joined. */
static void san_list(gnutls_x509_crt_t crt, char *out, size_t n)
{
    out[0] = '\0';
    for (unsigned seq = 0;; seq++) {
        unsigned char buf[256];
        char text[300];
        size_t size = sizeof buf;
        int ret = gnutls_x509_crt_get_subject_alt_name(crt, seq, buf, &size, NULL);
        if (ret == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE) break;
        assert_true(ret >= 0);
        if (ret == GNUTLS_SAN_DNSNAME) {
            snprintf(text, sizeof text, "DNS:%.*s", (int)size, buf);
        } else {
            char ip[64];
            assert_int_equal(ret, GNUTLS_SAN_IPADDRESS);
            assert_non_null(inet_ntop(size == 4 ? AF_INET : AF_INET6, buf, ip, sizeof ip));
            snprintf(text, sizeof text, "IP:%s", ip);
        }
        if (out[0]) strncat(out, ",", n - strlen(out) - 1);
        strncat(out, text, n - strlen(out) - 1);
    }
}

static void test_first_start_creates_files_and_modes(void **state)
{
    fixture *f = *state;
    ensure_ok(f->dir, NULL);
    assert_int_equal(file_mode(f->dir, "."), 0700);
    assert_int_equal(file_mode(f->dir, TLS_CA_KEY_FILE), 0600);
    assert_int_equal(file_mode(f->dir, TLS_SERVER_KEY_FILE), 0600);
    assert_int_equal(file_mode(f->dir, TLS_CA_CERT_FILE), 0644);
    assert_int_equal(file_mode(f->dir, TLS_SERVER_CERT_FILE), 0644);
    /* No temp files left behind. */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -q tmp", f->dir);
    assert_int_not_equal(system(cmd), 0);
}

static void assert_p256(gnutls_x509_crt_t crt)
{
    unsigned bits = 0;
    gnutls_ecc_curve_t curve = GNUTLS_ECC_CURVE_INVALID;
    assert_int_equal(gnutls_x509_crt_get_pk_algorithm(crt, &bits), GNUTLS_PK_ECDSA);
    assert_int_equal(gnutls_x509_crt_get_pk_ecc_raw(crt, &curve, NULL, NULL), 0);
    assert_int_equal(curve, GNUTLS_ECC_CURVE_SECP256R1);
}

static void test_ca_is_a_ten_year_p256_ca(void **state)
{
    fixture *f = *state;
    ensure_ok(f->dir, NULL);
    gnutls_x509_crt_t ca = load_crt(f->dir, TLS_CA_CERT_FILE);
    unsigned critical = 0, usage = 0;
    assert_p256(ca);
    assert_int_equal(gnutls_x509_crt_get_basic_constraints(ca, &critical, NULL, NULL), 1);
    assert_int_equal(gnutls_x509_crt_get_key_usage(ca, &usage, &critical), 0);
    assert_true(usage & GNUTLS_KEY_KEY_CERT_SIGN);
    time_t life = gnutls_x509_crt_get_expiration_time(ca) - time(NULL);
    assert_true(life > (time_t)(TLS_CA_DAYS - 1) * 86400 && life <= (time_t)TLS_CA_DAYS * 86400);
    gnutls_x509_crt_deinit(ca);
}

static void test_server_cert_fields_and_sans(void **state)
{
    fixture *f = *state;
    const char *sans[] = {"10.1.2.3", "Allot.Example.com", "fd00::1", "0.0.0.0",
                          "::",       "127.0.0.1",         NULL};
    ensure_ok(f->dir, sans);
    gnutls_x509_crt_t srv = load_crt(f->dir, TLS_SERVER_CERT_FILE);
    char list[1024], oid[128];
    size_t oid_size = sizeof oid;
    assert_p256(srv);
    san_list(srv, list, sizeof list);
    assert_string_equal(list, "DNS:localhost,IP:127.0.0.1,IP:::1,IP:10.1.2.3,"
                              "DNS:allot.example.com,IP:fd00::1");
    assert_int_equal(gnutls_x509_crt_get_basic_constraints(srv, NULL, NULL, NULL), 0);
    assert_int_equal(gnutls_x509_crt_get_key_purpose_oid(srv, 0, oid, &oid_size, NULL), 0);
    assert_string_equal(oid, GNUTLS_KP_TLS_WWW_SERVER);
    time_t life = gnutls_x509_crt_get_expiration_time(srv) - time(NULL);
    assert_true(life > (time_t)(TLS_SERVER_DAYS - 1) * 86400 &&
                life <= (time_t)TLS_SERVER_DAYS * 86400);
    gnutls_x509_crt_deinit(srv);
}

static void test_chain_verifies(void **state)
{
    fixture *f = *state;
    ensure_ok(f->dir, NULL);
    gnutls_x509_crt_t ca = load_crt(f->dir, TLS_CA_CERT_FILE);
    gnutls_x509_crt_t srv = load_crt(f->dir, TLS_SERVER_CERT_FILE);
    unsigned status = 1;
    assert_int_equal(gnutls_x509_crt_verify(srv, &ca, 1, 0, &status), 0);
    assert_int_equal(status, 0);
    assert_int_equal(gnutls_x509_crt_check_hostname(srv, "localhost"), 1);
    assert_int_equal(gnutls_x509_crt_check_ip(srv, (const unsigned char *)"\x7f\0\0\1", 4, 0), 1);
    gnutls_x509_crt_deinit(ca);
    gnutls_x509_crt_deinit(srv);

    if (system("command -v openssl >/dev/null 2>&1") == 0) {
        char cmd[512];
        snprintf(cmd, sizeof cmd,
                 "openssl verify -purpose sslserver -CAfile '%s/ca.crt' '%s/server.crt' "
                 ">/dev/null 2>&1",
                 f->dir, f->dir);
        assert_int_equal(system(cmd), 0);
    }
}

static void test_load_gives_a_usable_key_pair(void **state)
{
    fixture *f = *state;
    char err[256], *cert = NULL, *key = NULL, *ca = NULL;
    ensure_ok(f->dir, NULL);
    assert_int_equal(tls_load(f->dir, &cert, &key, &ca, err, sizeof err), 0);
    assert_non_null(strstr(cert, "BEGIN CERTIFICATE"));
    assert_non_null(strstr(key, "PRIVATE KEY"));
    assert_non_null(strstr(ca, "BEGIN CERTIFICATE"));
    /* What MHD does with the strings: the key must match the certificate. */
    gnutls_certificate_credentials_t cred;
    gnutls_datum_t c = {(unsigned char *)cert, (unsigned)strlen(cert)};
    gnutls_datum_t k = {(unsigned char *)key, (unsigned)strlen(key)};
    assert_int_equal(gnutls_certificate_allocate_credentials(&cred), 0);
    assert_true(gnutls_certificate_set_x509_key_mem(cred, &c, &k, GNUTLS_X509_FMT_PEM) >= 0);
    gnutls_certificate_free_credentials(cred);
    free(cert);
    free(key);
    free(ca);

    char *only = NULL;
    assert_int_equal(tls_load(f->dir, NULL, NULL, &only, err, sizeof err), 0);
    assert_non_null(only);
    free(only);
}

static void test_load_missing_dir_fails_cleanly(void **state)
{
    fixture *f = *state;
    char err[256] = "", *cert = (char *)1, *key = (char *)1, *ca = (char *)1;
    assert_int_equal(tls_load(f->dir, &cert, &key, &ca, err, sizeof err), -1);
    assert_null(cert);
    assert_null(key);
    assert_null(ca);
    assert_non_null(strstr(err, "server.crt"));
}

static void test_second_start_reuses_files(void **state)
{
    fixture *f = *state;
    const char *sans[] = {"10.0.0.5", NULL};
    const char *names[] = {TLS_CA_CERT_FILE, TLS_CA_KEY_FILE, TLS_SERVER_CERT_FILE,
                           TLS_SERVER_KEY_FILE};
    char *before[4];
    ensure_ok(f->dir, sans);
    for (int i = 0; i < 4; i++)
        before[i] = slurp(f->dir, names[i]);
    ensure_ok(f->dir, sans);
    ensure_ok(f->dir, NULL); /* a subset of the SANs is still satisfied */
    for (int i = 0; i < 4; i++) {
        char *after = slurp(f->dir, names[i]);
        assert_string_equal(before[i], after);
        free(after);
        free(before[i]);
    }
}

static void test_new_san_regenerates_serving_cert_only(void **state)
{
    fixture *f = *state;
    const char *sans[] = {"192.168.7.7", NULL};
    ensure_ok(f->dir, NULL);
    char *ca1 = slurp(f->dir, TLS_CA_CERT_FILE), *srv1 = slurp(f->dir, TLS_SERVER_CERT_FILE);
    ensure_ok(f->dir, sans);
    char *ca2 = slurp(f->dir, TLS_CA_CERT_FILE), *srv2 = slurp(f->dir, TLS_SERVER_CERT_FILE);
    assert_string_equal(ca1, ca2);
    assert_string_not_equal(srv1, srv2);
    gnutls_x509_crt_t srv = load_crt(f->dir, TLS_SERVER_CERT_FILE);
    char list[512];
    san_list(srv, list, sizeof list);
    assert_string_equal(list, "DNS:localhost,IP:127.0.0.1,IP:::1,IP:192.168.7.7");
    gnutls_x509_crt_deinit(srv);
    free(ca1);
    free(ca2);
    free(srv1);
    free(srv2);
}

static void test_expiring_cert_is_renewed(void **state)
{
    fixture *f = *state;
    char err[256];
    time_t now = time(NULL);
    /* Issued 340 days ago: 25 days left, inside the renewal window. */
    assert_int_equal(tls_ensure_at(f->dir, NULL, now - 340L * 86400, err, sizeof err), 0);
    char *old = slurp(f->dir, TLS_SERVER_CERT_FILE);
    assert_int_equal(tls_ensure_at(f->dir, NULL, now - 340L * 86400, err, sizeof err), 0);
    char *same = slurp(f->dir, TLS_SERVER_CERT_FILE);
    assert_string_equal(old, same); /* 365 days left at that time: kept */
    ensure_ok(f->dir, NULL);
    char *renewed = slurp(f->dir, TLS_SERVER_CERT_FILE);
    assert_string_not_equal(old, renewed);
    gnutls_x509_crt_t srv = load_crt(f->dir, TLS_SERVER_CERT_FILE);
    assert_true(gnutls_x509_crt_get_expiration_time(srv) > now + 300L * 86400);
    gnutls_x509_crt_deinit(srv);
    free(old);
    free(same);
    free(renewed);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_mismatched_or_garbage_server_pair_is_replaced(void **state)
{
    fixture *f = *state;
    ensure_ok(f->dir, NULL);
    char *cakey = slurp(f->dir, TLS_CA_KEY_FILE);
    write_file(f->dir, TLS_SERVER_KEY_FILE, cakey); /* a crash between key and cert writes */
    ensure_ok(f->dir, NULL);
    char *key = slurp(f->dir, TLS_SERVER_KEY_FILE);
    assert_string_not_equal(cakey, key);
    write_file(f->dir, TLS_SERVER_CERT_FILE, "garbage");
    ensure_ok(f->dir, NULL);
    gnutls_x509_crt_t srv = load_crt(f->dir, TLS_SERVER_CERT_FILE);
    gnutls_x509_crt_deinit(srv);
    free(cakey);
    free(key);
}

static void test_ca_cert_without_key_is_an_error(void **state)
{
    fixture *f = *state;
    char err[256] = "", path[256];
    ensure_ok(f->dir, NULL);
    snprintf(path, sizeof path, "%s/%s", f->dir, TLS_CA_KEY_FILE);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(tls_ensure(f->dir, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "ca.key is missing"));
}

static void test_invalid_san_is_rejected(void **state)
{
    fixture *f = *state;
    char err[256] = "";
    const char *sans[] = {"not a name!", NULL};
    assert_int_equal(tls_ensure(f->dir, sans, err, sizeof err), -1);
    assert_non_null(strstr(err, "invalid subject alternative name"));
}

/* ---- client certificates ---- */

/* The DER of a PEM certificate, for tls_client_subject (as a TLS peer gives it). */
static gnutls_datum_t der_of(const char *pem)
{
    gnutls_x509_crt_t crt;
    gnutls_datum_t in = {(unsigned char *)pem, (unsigned)strlen(pem)}, out = {NULL, 0};
    assert_int_equal(gnutls_x509_crt_init(&crt), 0);
    assert_int_equal(gnutls_x509_crt_import(crt, &in, GNUTLS_X509_FMT_PEM), 0);
    assert_int_equal(gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_DER, &out), 0);
    gnutls_x509_crt_deinit(crt);
    return out;
}

static tls_client_result subject_of(const char *ca_dir, const char *cert_pem, tls_subject *s)
{
    char *ca_pem = slurp(ca_dir, TLS_CA_CERT_FILE), err[256];
    tls_client_ca *ca = tls_client_ca_new(ca_pem, err, sizeof err);
    assert_non_null(ca);
    gnutls_datum_t d = der_of(cert_pem);
    tls_client_result r = tls_client_subject(ca, &d, 1, s);
    gnutls_free(d.data);
    tls_client_ca_free(ca);
    free(ca_pem);
    return r;
}

static void test_client_cert_issued_and_verified(void **state)
{
    fixture *f = *state;
    ensure_ok(f->dir, NULL);
    const char *groups[] = {"tenant-a-admins", "devs"};
    char *cert = NULL, *key = NULL, err[256];
    assert_int_equal(
        tls_issue_client(f->dir, "alice", groups, 2, 30, time(NULL), &cert, &key, err, sizeof err),
        0);
    assert_non_null(strstr(key, "PRIVATE KEY"));
    tls_subject s;
    assert_int_equal(subject_of(f->dir, cert, &s), TLS_CLIENT_OK);
    assert_string_equal(s.cn, "alice");
    assert_int_equal(s.norgs, 2);
    assert_string_equal(s.orgs[0], "tenant-a-admins");
    assert_string_equal(s.orgs[1], "devs");
    /* EKU clientAuth only, 30 days */
    gnutls_x509_crt_t crt;
    gnutls_datum_t in = {(unsigned char *)cert, (unsigned)strlen(cert)};
    gnutls_x509_crt_init(&crt);
    gnutls_x509_crt_import(crt, &in, GNUTLS_X509_FMT_PEM);
    char oid[128];
    size_t n = sizeof oid;
    assert_int_equal(gnutls_x509_crt_get_key_purpose_oid(crt, 0, oid, &n, NULL), 0);
    assert_string_equal(oid, GNUTLS_KP_TLS_WWW_CLIENT);
    time_t left = gnutls_x509_crt_get_expiration_time(crt) - time(NULL);
    assert_true(left > 29 * 86400 && left <= 30 * 86400);
    gnutls_x509_crt_deinit(crt);
    free(cert);
    free(key);
}

static void test_client_cert_expired_foreign_or_server_refused(void **state)
{
    fixture *f = *state;
    char other[160], *cert = NULL, *key = NULL, err[256];
    tls_subject s;
    ensure_ok(f->dir, NULL);
    /* expired: issued 10 days ago for 1 day */
    assert_int_equal(tls_issue_client(f->dir, "old", NULL, 0, 1, time(NULL) - 10 * 86400, &cert,
                                      &key, err, sizeof err),
                     0);
    assert_int_equal(subject_of(f->dir, cert, &s), TLS_CLIENT_INVALID);
    free(cert);
    free(key);
    /* signed by another CA */
    snprintf(other, sizeof other, "%s/other", f->root);
    ensure_ok(other, NULL);
    assert_int_equal(
        tls_issue_client(other, "mallory", NULL, 0, 1, time(NULL), &cert, &key, err, sizeof err),
        0);
    assert_int_equal(subject_of(f->dir, cert, &s), TLS_CLIENT_INVALID);
    assert_int_equal(subject_of(other, cert, &s), TLS_CLIENT_OK);
    free(cert);
    free(key);
    /* the serving certificate is not for client authentication */
    char *srv = slurp(f->dir, TLS_SERVER_CERT_FILE);
    assert_int_equal(subject_of(f->dir, srv, &s), TLS_CLIENT_INVALID);
    free(srv);
    /* garbage DER */
    char *ca_pem = slurp(f->dir, TLS_CA_CERT_FILE);
    tls_client_ca *ca = tls_client_ca_new(ca_pem, err, sizeof err);
    gnutls_datum_t junk = {(unsigned char *)"junk", 4};
    assert_int_equal(tls_client_subject(ca, &junk, 1, &s), TLS_CLIENT_INVALID);
    assert_int_equal(tls_client_subject(ca, NULL, 0, &s), TLS_CLIENT_NONE);
    tls_client_ca_free(ca);
    free(ca_pem);
}

static void test_client_cert_arguments(void **state)
{
    fixture *f = *state;
    char *cert = NULL, *key = NULL, err[256];
    /* no CA yet: refused, and none is created */
    assert_int_equal(
        tls_issue_client(f->dir, "alice", NULL, 0, 1, time(NULL), &cert, &key, err, sizeof err),
        -1);
    assert_null(cert);
    assert_non_null(strstr(err, "no CA"));
    ensure_ok(f->dir, NULL);
    const char *bad_group[] = {"ok", "bad\nname"};
    assert_int_equal(
        tls_issue_client(f->dir, "", NULL, 0, 1, time(NULL), &cert, &key, err, sizeof err), -1);
    assert_int_equal(tls_issue_client(f->dir, "alice", bad_group, 2, 1, time(NULL), &cert, &key,
                                      err, sizeof err),
                     -1);
    assert_int_equal(
        tls_issue_client(f->dir, "alice", NULL, 0, 0, time(NULL), &cert, &key, err, sizeof err),
        -1);
    /* a name with DN metacharacters is kept as it is */
    assert_int_equal(tls_issue_client(f->dir, "a,b=c+d\\\"e", NULL, 0, 1, time(NULL), &cert, &key,
                                      err, sizeof err),
                     0);
    tls_subject s;
    assert_int_equal(subject_of(f->dir, cert, &s), TLS_CLIENT_OK);
    assert_string_equal(s.cn, "a,b=c+d\\\"e");
    free(cert);
    free(key);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_first_start_creates_files_and_modes),
        T(test_ca_is_a_ten_year_p256_ca),
        T(test_server_cert_fields_and_sans),
        T(test_chain_verifies),
        T(test_load_gives_a_usable_key_pair),
        T(test_load_missing_dir_fails_cleanly),
        T(test_second_start_reuses_files),
        T(test_new_san_regenerates_serving_cert_only),
        T(test_expiring_cert_is_renewed),
        T(test_mismatched_or_garbage_server_pair_is_replaced),
        T(test_ca_cert_without_key_is_an_error),
        T(test_invalid_san_is_rejected),
        T(test_client_cert_issued_and_verified),
        T(test_client_cert_expired_foreign_or_server_refused),
        T(test_client_cert_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
