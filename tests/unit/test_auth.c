/* test_auth.c - bearer tokens, token files and the admin token (server/auth.c). */
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

#include "server/auth.h"
#include "server/satoken.h"
#include "server/tls.h"

#include <gnutls/x509.h>
#include <time.h>

typedef struct {
    char dir[64];
    char path[128]; /* a token file inside dir */
    auth_t *a;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    strcpy(f->dir, "/tmp/allot-auth-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->path, sizeof f->path, "%s/tokens.csv", f->dir);
    f->a = auth_new();
    *state = f;
    return f->a ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    auth_free(f->a);
    free(f);
    return rc == 0 ? 0 : -1;
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fwrite(text, 1, strlen(text), fp);
    fclose(fp);
}

/* Groups of u joined with '|'. */
static const char *groups_of(const auth_user *u)
{
    static char out[512];
    out[0] = '\0';
    for (size_t i = 0; i < u->ngroups; i++) {
        if (i) strcat(out, "|");
        strcat(out, u->groups[i]);
    }
    return out;
}

static const auth_user *check(fixture *f, const char *token)
{
    char hdr[256];
    snprintf(hdr, sizeof hdr, "Bearer %s", token);
    return auth_check_bearer(f->a, hdr);
}

static void test_add_token_and_authenticated_group(void **state)
{
    fixture *f = *state;
    const char *groups[] = {"dev", "ops"};
    assert_int_equal(auth_add_token(f->a, "tok-1", "alice", "u1", groups, 2), 0);
    assert_int_equal(auth_add_token(f->a, "tok-2", "bob", "u2", NULL, 0), 0);
    const auth_user *u = check(f, "tok-1");
    assert_non_null(u);
    assert_string_equal(u->name, "alice");
    assert_string_equal(u->uid, "u1");
    assert_string_equal(groups_of(u), "dev|ops|system:authenticated");
    u = check(f, "tok-2");
    assert_non_null(u);
    assert_string_equal(groups_of(u), "system:authenticated");
    assert_null(check(f, "tok-3"));
    assert_int_equal(auth_add_token(f->a, "", "x", "y", NULL, 0), -1);
    assert_int_equal(auth_add_token(f->a, "t", NULL, "y", NULL, 0), -1);
}

static void test_re_adding_a_token_replaces_its_user(void **state)
{
    fixture *f = *state;
    assert_int_equal(auth_add_token(f->a, "same", "first", "1", NULL, 0), 0);
    assert_int_equal(auth_add_token(f->a, "same", "second", "2", NULL, 0), 0);
    assert_string_equal(check(f, "same")->name, "second");
}

static void test_bearer_header_edge_cases(void **state)
{
    fixture *f = *state;
    assert_int_equal(auth_add_token(f->a, "tok", "alice", "u1", NULL, 0), 0);
    static const struct {
        const char *header;
        int ok;
    } cases[] = {
        {"Bearer tok", 1},
        {"bearer tok", 1},
        {"BEARER tok", 1},
        {"  Bearer tok \t\r\n", 1}, /* surrounding whitespace trimmed */
        {"Bearer tok extra parts", 1},
        {"Bearer", 0},
        {"Bearer ", 0},
        {"Bearer  tok", 0}, /* two spaces: the token part is empty */
        {"Bearer\ttok", 0},
        {"Bearertok", 0},
        {"Basic tok", 0},
        {"Bearer to", 0},
        {"Bearer tokx", 0},
        {"Bearer TOK", 0},
        {"", 0},
        {"   ", 0},
        {"tok", 0},
        {"XBearer tok", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const auth_user *u = auth_check_bearer(f->a, cases[i].header);
        if ((u != NULL) != cases[i].ok) fail_msg("header \"%s\"", cases[i].header);
    }
    assert_null(auth_check_bearer(f->a, NULL));
    assert_null(auth_check_bearer(NULL, "Bearer tok"));
}

static void test_token_file_valid_lines(void **state)
{
    fixture *f = *state;
    char err[256] = "";
    write_text(f->path, "\n"
                        "t1,alice,u1,\"dev,ops\"\n"
                        "\r\n"
                        "t2,bob,u2\r\n"
                        "\"t,3\",\"carol \"\"c\"\"\",u3,solo,ignored,columns\n"
                        ",nobody,u0,skipped\n"
                        "t5,dan,u5,\"\"\n"
                        "t6,erin,u6,\",a,,b,\"\n"
                        "t7,frank,u7"); /* no final newline */
    assert_int_equal(auth_load_token_file(f->a, f->path, err, sizeof err), 0);
    const auth_user *u = check(f, "t1");
    assert_non_null(u);
    assert_string_equal(u->name, "alice");
    assert_string_equal(groups_of(u), "dev|ops|system:authenticated");
    u = check(f, "t2");
    assert_non_null(u);
    assert_string_equal(u->uid, "u2"); /* no stray \r */
    u = check(f, "t,3");
    assert_non_null(u);
    assert_string_equal(u->name, "carol \"c\"");
    assert_string_equal(groups_of(u), "solo|system:authenticated");
    assert_null(auth_check_bearer(f->a, "Bearer "));
    assert_string_equal(groups_of(check(f, "t5")), "system:authenticated");
    assert_string_equal(groups_of(check(f, "t6")), "a|b|system:authenticated");
    assert_string_equal(check(f, "t7")->uid, "u7");
}

static void test_token_file_duplicate_last_wins_and_groups_kept(void **state)
{
    fixture *f = *state;
    char err[256] = "";
    write_text(f->path, "dup,first,1\n"
                        "dup,second,2,\"system:authenticated,x\"\n");
    assert_int_equal(auth_load_token_file(f->a, f->path, err, sizeof err), 0);
    const auth_user *u = check(f, "dup");
    assert_string_equal(u->name, "second");
    assert_string_equal(groups_of(u), "system:authenticated|x"); /* not added twice */
}

static void test_token_file_quoted_field_spans_lines(void **state)
{
    fixture *f = *state;
    char err[256] = "";
    write_text(f->path, "t1,\"multi\nline\",u1\n"
                        "t2,bob\n");
    assert_int_equal(auth_load_token_file(f->a, f->path, err, sizeof err), -1);
    assert_string_equal(err + strlen(f->path),
                        ":3: must have at least 3 columns (token, user name, user uid), found 2");
}

static void expect_file_error(fixture *f, const char *text, const char *suffix)
{
    char err[256] = "";
    write_text(f->path, text);
    assert_int_equal(auth_load_token_file(f->a, f->path, err, sizeof err), -1);
    assert_memory_equal(err, f->path, strlen(f->path));
    assert_string_equal(err + strlen(f->path), suffix);
    assert_null(strstr(err, "secret")); /* the token never appears in errors */
}

static void test_token_file_malformed_lines(void **state)
{
    fixture *f = *state;
    expect_file_error(f, "secret1,alice,u1\n\nsecret2,bob\n",
                      ":3: must have at least 3 columns (token, user name, user uid), found 2");
    expect_file_error(f, "secret\n",
                      ":1: must have at least 3 columns (token, user name, user uid), found 1");
    expect_file_error(f, "ok,a,b\nsec\"ret,bob,u2\n", ":2: bare \" in non-quoted field");
    expect_file_error(f, "\"secret\"x,bob,u2\n", ":1: extraneous or missing \" in quoted field");
    expect_file_error(f, "t,a,b\n\"secret,bob,u2\n",
                      ":2: extraneous or missing \" in quoted field");
    expect_file_error(f, " \n",
                      ":1: must have at least 3 columns (token, user name, user uid), "
                      "found 1"); /* whitespace is not a blank line */
}

static void test_failed_load_leaves_auth_unchanged(void **state)
{
    fixture *f = *state;
    char err[256];
    assert_int_equal(auth_add_token(f->a, "keep", "k", "k", NULL, 0), 0);
    write_text(f->path, "new,n,n\nkeep,replaced,r\nbad\n");
    assert_int_equal(auth_load_token_file(f->a, f->path, err, sizeof err), -1);
    assert_null(check(f, "new"));
    assert_string_equal(check(f, "keep")->name, "k");
}

static void test_missing_token_file(void **state)
{
    fixture *f = *state;
    char err[256] = "";
    assert_int_equal(auth_load_token_file(f->a, "/nonexistent/tokens.csv", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/tokens.csv"));
}

static void test_admin_token_created_then_reused(void **state)
{
    fixture *f = *state;
    char err[256] = "", t1[128], t2[128], path[256], data[128];
    struct stat st;
    snprintf(data, sizeof data, "%s/data", f->dir);
    assert_int_equal(auth_ensure_admin_token(data, t1, sizeof t1, err, sizeof err), 0);
    assert_int_equal(strlen(t1), AUTH_ADMIN_TOKEN_LEN);
    assert_int_equal(strspn(t1, "0123456789abcdef"), AUTH_ADMIN_TOKEN_LEN);
    snprintf(path, sizeof path, "%s/%s", data, AUTH_ADMIN_TOKEN_FILE);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(stat(data, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    assert_int_equal(auth_ensure_admin_token(data, t2, sizeof t2, err, sizeof err), 0);
    assert_string_equal(t1, t2);

    assert_int_equal(auth_add_admin_token(f->a, t1), 0);
    const auth_user *u = check(f, t1);
    assert_non_null(u);
    assert_string_equal(u->name, "admin");
    assert_string_equal(u->uid, "admin");
    assert_string_equal(groups_of(u), "system:masters|system:authenticated");

    char small[64]; /* one short of 64 chars + NUL */
    assert_int_equal(auth_ensure_admin_token(data, small, sizeof small, err, sizeof err), -1);
    assert_null(strstr(err, t1));
}

static void test_admin_token_operator_supplied(void **state)
{
    fixture *f = *state;
    char err[256] = "", tok[128], path[256];
    snprintf(path, sizeof path, "%s/%s", f->dir, AUTH_ADMIN_TOKEN_FILE);
    write_text(path, "  my-own-token\r\n");
    assert_int_equal(auth_ensure_admin_token(f->dir, tok, sizeof tok, err, sizeof err), 0);
    assert_string_equal(tok, "my-own-token");
    write_text(path, "two words\n");
    assert_int_equal(auth_ensure_admin_token(f->dir, tok, sizeof tok, err, sizeof err), -1);
    assert_null(strstr(err, "words"));
    write_text(path, "\n");
    assert_int_equal(auth_ensure_admin_token(f->dir, tok, sizeof tok, err, sizeof err), -1);
}

/* ---- per-request users, ServiceAccount tokens, client certificates ---- */

static void test_ident_set(void **state)
{
    auth_ident id;
    const char *g[] = {"a", "b"};
    assert_int_equal(auth_ident_set(&id, "bob", "u1", g, 2), 0);
    assert_string_equal(id.user.name, "bob");
    assert_string_equal(groups_of(&id.user), "a|b|system:authenticated");
    const char *g2[] = {"system:authenticated"};
    assert_int_equal(auth_ident_set(&id, "bob", "", g2, 1), 0);
    assert_int_equal(id.user.ngroups, 1);
    char big[AUTH_IDENT_TEXT];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_int_equal(auth_ident_set(&id, big, "", NULL, 0), -1);
}

/* A fake store: one ServiceAccount, tenant-a/builder with uid "uid-1". */
static int sa_exists = 1;
static int fake_sa(void *ctx, const char *ns, const char *name, const char *uid)
{
    (void)ctx;
    return sa_exists && !strcmp(ns, "tenant-a") && !strcmp(name, "builder") &&
           !strcmp(uid, "uid-1");
}

static void test_service_account_tokens(void **state)
{
    fixture *f = *state;
    char err[256], hdr[4096], *tok = NULL;
    static const char *const api[] = {SATOKEN_ISSUER}, *const other[] = {"vault"};
    satoken_key *k = satoken_key_generate(err, sizeof err);
    assert_non_null(k);
    assert_int_equal(auth_add_token(f->a, "static-token", "carol", "c", NULL, 0), 0);
    assert_int_equal(auth_set_sa_tokens(f->a, k, fake_sa, NULL), 0);
    assert_ptr_equal(auth_sa_key(f->a), k);
    int64_t now = (int64_t)time(NULL);
    assert_int_equal(satoken_sign(k, "tenant-a", "builder", "uid-1", api, 1, now, 600, &tok), 0);
    snprintf(hdr, sizeof hdr, "Bearer %s", tok);
    auth_ident id;
    for (int pass = 0; pass < 2; pass++) { /* the second is a cache hit */
        const auth_user *u = auth_authenticate(f->a, hdr, &id, now);
        assert_non_null(u);
        assert_string_equal(u->name, "system:serviceaccount:tenant-a:builder");
        assert_string_equal(u->uid, "uid-1");
        assert_string_equal(groups_of(u), "system:serviceaccounts|system:serviceaccounts:tenant-a|"
                                          "system:authenticated");
    }
    /* static tokens still work through the same entry point */
    const auth_user *u = auth_authenticate(f->a, "Bearer static-token", &id, now);
    assert_non_null(u);
    assert_string_equal(u->name, "carol");
    /* the account deleted (or re-created with another uid): refused, cached or not */
    sa_exists = 0;
    assert_null(auth_authenticate(f->a, hdr, &id, now));
    sa_exists = 1;
    /* expired, even when cached */
    assert_null(auth_authenticate(f->a, hdr, &id, now + 600 + SATOKEN_LEEWAY_S + 1));
    free(tok);
    /* another audience */
    assert_int_equal(satoken_sign(k, "tenant-a", "builder", "uid-1", other, 1, now, 600, &tok), 0);
    snprintf(hdr, sizeof hdr, "Bearer %s", tok);
    assert_null(auth_authenticate(f->a, hdr, &id, now));
    free(tok);
    /* auth_check_bearer knows only static tokens */
    assert_int_equal(satoken_sign(k, "tenant-a", "builder", "uid-1", api, 1, now, 600, &tok), 0);
    snprintf(hdr, sizeof hdr, "Bearer %s", tok);
    assert_null(auth_check_bearer(f->a, hdr));
    free(tok);
    assert_null(auth_authenticate(f->a, "Bearer nope", &id, now));
    assert_null(auth_authenticate(f->a, NULL, &id, now));
    satoken_key_free(k);
}

static void test_client_certificates(void **state)
{
    fixture *f = *state;
    char err[256], *cert = NULL, *key = NULL, *ca = NULL;
    const char *groups[] = {"tenant-a-admins"};
    assert_int_equal(tls_ensure(f->dir, NULL, err, sizeof err), 0);
    assert_int_equal(tls_load(f->dir, NULL, NULL, &ca, err, sizeof err), 0);
    assert_int_equal(
        tls_issue_client(f->dir, "alice", groups, 1, 1, time(NULL), &cert, &key, err, sizeof err),
        0);
    gnutls_x509_crt_t crt;
    gnutls_datum_t in = {(unsigned char *)cert, (unsigned)strlen(cert)}, der = {NULL, 0};
    gnutls_x509_crt_init(&crt);
    assert_int_equal(gnutls_x509_crt_import(crt, &in, GNUTLS_X509_FMT_PEM), 0);
    assert_int_equal(gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_DER, &der), 0);
    auth_ident id;
    /* no client CA configured: certificates are no identity */
    assert_int_equal(auth_check_cert(f->a, &der, 1, &id), AUTH_CERT_NONE);
    assert_int_equal(auth_set_client_ca(f->a, ca, err, sizeof err), 0);
    assert_string_equal(auth_client_ca_pem(f->a), ca);
    assert_int_equal(auth_check_cert(f->a, &der, 1, &id), AUTH_CERT_OK);
    assert_string_equal(id.user.name, "alice");
    assert_string_equal(id.user.uid, "");
    assert_string_equal(groups_of(&id.user), "tenant-a-admins|system:authenticated");
    assert_int_equal(auth_check_cert(f->a, NULL, 0, &id), AUTH_CERT_NONE);
    gnutls_datum_t junk = {(unsigned char *)"x", 1};
    assert_int_equal(auth_check_cert(f->a, &junk, 1, &id), AUTH_CERT_INVALID);
    assert_int_equal(auth_set_client_ca(f->a, "not a pem", err, sizeof err), -1);
    gnutls_free(der.data);
    gnutls_x509_crt_deinit(crt);
    free(cert);
    free(key);
    free(ca);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_add_token_and_authenticated_group),
        T(test_re_adding_a_token_replaces_its_user),
        T(test_bearer_header_edge_cases),
        T(test_token_file_valid_lines),
        T(test_token_file_duplicate_last_wins_and_groups_kept),
        T(test_token_file_quoted_field_spans_lines),
        T(test_token_file_malformed_lines),
        T(test_failed_load_leaves_auth_unchanged),
        T(test_missing_token_file),
        T(test_admin_token_created_then_reused),
        T(test_admin_token_operator_supplied),
        T(test_ident_set),
        T(test_service_account_tokens),
        T(test_client_certificates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
