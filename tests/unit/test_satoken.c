/* test_satoken.c - ServiceAccount JWTs (server/satoken.c): signing and
 * verification round trip, tampering, times, audiences, malformed tokens of
 * many shapes, the key file and the verified-token cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <jansson.h>

#include "server/satoken.h"

#define NOW ((int64_t)1800000000)

static satoken_key *key, *other;
static const char *const api_auds[] = {SATOKEN_ISSUER};

static int setup(void **state)
{
    char err[256];
    key = satoken_key_generate(err, sizeof err);
    other = satoken_key_generate(err, sizeof err);
    return key && other ? 0 : -1;
}

static int teardown(void **state)
{
    satoken_key_free(key);
    satoken_key_free(other);
    return 0;
}

__attribute__((noinline)) static char *sign(const satoken_key *k, int64_t now, int64_t secs)
{
    char *t = NULL;
    assert_int_equal(satoken_sign(k, "tenant-a", "builder", "uid-1", api_auds, 1, now, secs, &t),
                     0);
    return t;
}

static satoken_status verify(const char *tok, int64_t now, satoken_claims *c)
{
    satoken_claims ignored;
    return satoken_verify(key, tok, strlen(tok), api_auds, 1, now, c ? c : &ignored);
}

static void b64u(const char *s, size_t n, char *out)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)(unsigned char)s[i] << 16;
        if (i + 1 < n) v |= (unsigned)(unsigned char)s[i + 1] << 8;
        if (i + 2 < n) v |= (unsigned char)s[i + 2];
        out[o++] = t[(v >> 18) & 63];
        out[o++] = t[(v >> 12) & 63];
        if (i + 1 < n) out[o++] = t[(v >> 6) & 63];
        if (i + 2 < n) out[o++] = t[v & 63];
    }
    out[o] = 0;
}

/* A token whose header and payload are given as JSON text, with the
 * signature of `k` over them (or a garbage one when k is NULL). */
static char *forge(const satoken_key *k, const char *header, const char *payload)
{
    (void)k;
    char *t = malloc(8192), h[2048], p[4096];
    b64u(header, strlen(header), h);
    b64u(payload, strlen(payload), p);
    snprintf(t, 8192, "%s.%s.c2ln", h, p);
    return t;
}

static void test_round_trip(void **state)
{
    char *t = sign(key, NOW, 3600);
    satoken_claims c;
    assert_true(satoken_looks_like_jwt(t, strlen(t)));
    assert_int_equal(verify(t, NOW, &c), SATOKEN_VALID);
    assert_string_equal(c.ns, "tenant-a");
    assert_string_equal(c.name, "builder");
    assert_string_equal(c.uid, "uid-1");
    assert_int_equal(c.exp, NOW + 3600);
    assert_int_equal(c.iat, NOW);
    assert_int_equal(c.nbf, NOW);
    /* the header names the key; the payload carries upstream's claims */
    char *d1 = strchr(t, '.'), *d2 = strchr(d1 + 1, '.');
    assert_non_null(d2);
    assert_int_equal(strlen(satoken_key_id(key)), 43);
    free(t);
}

static void test_claims_as_upstream(void **state)
{
    char *t = sign(key, NOW, 600);
    char *d1 = strchr(t, '.'), *d2 = strchr(d1 + 1, '.');
    /* decode the payload with gnutls (base64url -> base64) */
    size_t n = (size_t)(d2 - d1 - 1);
    char *b = calloc(1, n + 4);
    memcpy(b, d1 + 1, n);
    for (size_t i = 0; i < n; i++)
        b[i] = b[i] == '-' ? '+' : b[i] == '_' ? '/' : b[i];
    while (n % 4)
        b[n++] = '=';
    gnutls_datum_t in = {(unsigned char *)b, (unsigned)n}, out = {NULL, 0};
    assert_true(gnutls_base64_decode2(&in, &out) >= 0);
    json_t *p = json_loadb((const char *)out.data, out.size, 0, NULL);
    assert_non_null(p);
    assert_string_equal(json_string_value(json_object_get(p, "iss")), SATOKEN_ISSUER);
    assert_string_equal(json_string_value(json_object_get(p, "sub")),
                        "system:serviceaccount:tenant-a:builder");
    assert_string_equal(json_string_value(json_array_get(json_object_get(p, "aud"), 0)),
                        SATOKEN_ISSUER);
    json_t *k8s = json_object_get(p, "kubernetes.io");
    assert_string_equal(json_string_value(json_object_get(k8s, "namespace")), "tenant-a");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(k8s, "serviceaccount"), "uid")), "uid-1");
    assert_int_equal(strlen(json_string_value(json_object_get(p, "jti"))), 36);
    assert_int_equal(json_integer_value(json_object_get(p, "exp")), NOW + 600);
    json_decref(p);
    gnutls_free(out.data);
    free(b);
    free(t);
}

static void test_tampered(void **state)
{
    char *t = sign(key, NOW, 3600);
    size_t n = strlen(t);
    char *d1 = strchr(t, '.'), *d2 = strchr(d1 + 1, '.');
    /* every character of the signature flipped in turn */
    for (size_t i = (size_t)(d2 + 1 - t); i < n; i += 7) {
        char was = t[i];
        t[i] = was == 'A' ? 'B' : 'A';
        satoken_status st = verify(t, NOW, NULL);
        assert_true(st == SATOKEN_BAD_SIGNATURE || st == SATOKEN_MALFORMED);
        t[i] = was;
    }
    /* a payload byte changed: the signature no longer matches */
    char was = d1[5];
    d1[5] = was == 'x' ? 'y' : 'x';
    assert_int_not_equal(verify(t, NOW, NULL), SATOKEN_VALID);
    d1[5] = was;
    /* signature truncated, or dropped */
    t[n - 4] = 0;
    assert_int_not_equal(verify(t, NOW, NULL), SATOKEN_VALID);
    d2[1] = 0;
    assert_int_not_equal(verify(t, NOW, NULL), SATOKEN_VALID);
    free(t);
    /* another key's token */
    t = sign(other, NOW, 3600);
    assert_int_equal(verify(t, NOW, NULL), SATOKEN_BAD_SIGNATURE);
    free(t);
}

static void test_times(void **state)
{
    char *t = sign(key, NOW, 3600);
    assert_int_equal(verify(t, NOW + 3600, NULL), SATOKEN_VALID);
    assert_int_equal(verify(t, NOW + 3600 + SATOKEN_LEEWAY_S, NULL), SATOKEN_VALID);
    assert_int_equal(verify(t, NOW + 3600 + SATOKEN_LEEWAY_S + 1, NULL), SATOKEN_EXPIRED);
    assert_int_equal(verify(t, NOW - SATOKEN_LEEWAY_S, NULL), SATOKEN_VALID);
    assert_int_equal(verify(t, NOW - SATOKEN_LEEWAY_S - 1, NULL), SATOKEN_NOT_YET_VALID);
    free(t);
}

static void test_audience(void **state)
{
    static const char *const auds[] = {"vault", "https://example.com"};
    char *t = NULL;
    satoken_claims c;
    assert_int_equal(satoken_sign(key, "ns", "sa", "u", auds, 2, NOW, 600, &t), 0);
    assert_int_equal(verify(t, NOW, NULL), SATOKEN_WRONG_AUDIENCE);
    assert_int_equal(satoken_verify(key, t, strlen(t), auds + 1, 1, NOW, &c), SATOKEN_VALID);
    free(t);
    /* several audiences, one of them ours */
    static const char *const mixed[] = {"vault", SATOKEN_ISSUER};
    assert_int_equal(satoken_sign(key, "ns", "sa", "u", mixed, 2, NOW, 600, &t), 0);
    assert_int_equal(verify(t, NOW, NULL), SATOKEN_VALID);
    free(t);
}

static void test_not_ours(void **state)
{
    static const char *const shapes[] = {
        "",
        "0123456789abcdef0123456789abcdef",
        "alice-token",
        "eyJ",
        "eyJ.a.b.c",
        "eyJhbGciOiJSUzI1NiJ9..sig",
        "eyJhbGciOiJSUzI1NiJ9.eyJ9.",
        ".eyJ9.c2ln",
        "eyJhbGciOiJSUzI1NiJ9.eyJ9",
        "abc.def.ghi",
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        assert_int_equal(verify(shapes[i], NOW, NULL), SATOKEN_NOT_OURS);
    char big[SATOKEN_MAX_LEN + 10];
    memset(big, 'A', sizeof big - 1);
    memcpy(big, "eyJ", 3);
    big[100] = big[200] = '.';
    big[sizeof big - 1] = 0;
    assert_false(satoken_looks_like_jwt(big, strlen(big)));
    /* another issuer's JWT: not ours, whatever its signature */
    char *t = forge(NULL, "{\"alg\":\"RS256\"}", "{\"iss\":\"https://accounts.example\"}");
    assert_int_equal(verify(t, NOW, NULL), SATOKEN_NOT_OURS);
    free(t);
}

static void test_malformed(void **state)
{
    /* ours by issuer, but broken: never valid */
    static const char *const headers[] = {
        "{\"alg\":\"none\"}",
        "{\"alg\":\"HS256\"}",
        "{\"alg\":\"RS256\",\"kid\":5}",
        "{\"alg\":\"RS256\",\"kid\":\"other\"}",
        "[]",
        "{\"alg\":\"RS256\",\"alg\":\"none\"}",
        "not json",
    };
    for (size_t i = 0; i < sizeof headers / sizeof *headers; i++) {
        char *t = forge(NULL, headers[i], "{\"iss\":\"" SATOKEN_ISSUER "\"}");
        satoken_status st = verify(t, NOW, NULL);
        assert_int_not_equal(st, SATOKEN_VALID);
        if (headers[i][0] == '{') assert_int_not_equal(st, SATOKEN_NOT_OURS); /* "eyJ..." */
        free(t);
    }
    /* a payload with duplicate keys, not an object, or bad base64 */
    static const char *const bad[] = {
        "eyJhbGciOiJSUzI1NiJ9.e30=.c2ln", /* padding */
        "eyJhbGciOiJSUzI1NiJ9.e3!.c2ln",  /* not base64url */
        "eyJhbGciOiJSUzI1NiJ9.e31.c2ln",  /* stray bits */
        "eyJhbGciOiJSUzI1NiJ9.W10.c2ln",  /* [] */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_not_equal(verify(bad[i], NOW, NULL), SATOKEN_VALID);
    char *t = forge(NULL, "{\"alg\":\"RS256\"}",
                    "{\"iss\":\"" SATOKEN_ISSUER "\",\"iss\":\"" SATOKEN_ISSUER "\"}");
    assert_int_not_equal(verify(t, NOW, NULL), SATOKEN_VALID);
    free(t);
    /* a real token with its parts shuffled */
    char *r = sign(key, NOW, 600);
    char *d1 = strchr(r, '.'), *d2 = strchr(d1 + 1, '.');
    char swapped[8192];
    snprintf(swapped, sizeof swapped, "%.*s.%.*s.%s", (int)(d2 - d1 - 1), d1 + 1, (int)(d1 - r), r,
             d2 + 1);
    assert_int_not_equal(verify(swapped, NOW, NULL), SATOKEN_VALID);
    free(r);
}

static void test_sign_arguments(void **state)
{
    char *t = (char *)1;
    assert_int_equal(satoken_sign(key, "ns", "sa", "u", api_auds, 0, NOW, 600, &t), -1);
    assert_null(t);
    assert_int_equal(satoken_sign(key, "ns", "sa", "u", api_auds, 1, NOW, 0, &t), -1);
    char longns[100];
    memset(longns, 'a', 99);
    longns[99] = 0;
    assert_int_equal(satoken_sign(key, longns, "sa", "u", api_auds, 1, NOW, 600, &t), -1);
}

static void test_key_file(void **state)
{
    char dir[] = "/tmp/allot-satoken-XXXXXX", path[128], err[256];
    assert_non_null(mkdtemp(dir));
    satoken_key *a = NULL, *b = NULL;
    assert_int_equal(satoken_key_ensure(dir, &a, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/%s", dir, SATOKEN_KEY_FILE);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(satoken_key_ensure(dir, &b, err, sizeof err), 0); /* the same key, reread */
    assert_string_equal(satoken_key_id(a), satoken_key_id(b));
    char *t = NULL;
    satoken_claims c;
    assert_int_equal(satoken_sign(a, "ns", "sa", "u", api_auds, 1, NOW, 600, &t), 0);
    assert_int_equal(satoken_verify(b, t, strlen(t), api_auds, 1, NOW, &c), SATOKEN_VALID);
    free(t);
    satoken_key_free(a);
    satoken_key_free(b);
    /* a key that is not RSA (or not a key) is refused */
    FILE *f = fopen(path, "w");
    fputs("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", f);
    fclose(f);
    assert_int_equal(satoken_key_ensure(dir, &a, err, sizeof err), -1);
    assert_null(a);
    unlink(path);
    rmdir(dir);
}

static void test_cache(void **state)
{
    satoken_cache *c = satoken_cache_new(4);
    unsigned char d1[32] = {1}, d2[32] = {2};
    satoken_claims cl = {"ns", "sa", "u", NOW, NOW, NOW + 600}, got;
    assert_false(satoken_cache_get(c, d1, NOW, &got));
    satoken_cache_put(c, d1, &cl);
    assert_true(satoken_cache_get(c, d1, NOW + 10, &got));
    assert_string_equal(got.name, "sa");
    assert_false(satoken_cache_get(c, d2, NOW, &got));
    /* expired: a miss, and dropped */
    assert_false(satoken_cache_get(c, d1, NOW + 600 + SATOKEN_LEEWAY_S + 1, &got));
    assert_false(satoken_cache_get(c, d1, NOW, &got));
    /* a colliding digest (same first bytes) evicts, never aliases */
    unsigned char d3[32] = {1};
    d3[31] = 9;
    satoken_cache_put(c, d1, &cl);
    satoken_cache_put(c, d3, &cl);
    assert_false(satoken_cache_get(c, d1, NOW, &got));
    assert_true(satoken_cache_get(c, d3, NOW, &got));
    satoken_cache_free(c);
}

/* The cost the request path pays: printed, not asserted (a loaded machine
 * must not fail the suite). */
static void test_cost(void **state)
{
    char *t = sign(key, NOW, 3600);
    size_t n = strlen(t);
    satoken_claims c;
    struct timespec a, b;
    int iters = 2000;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < iters; i++)
        assert_int_equal(satoken_verify(key, t, n, api_auds, 1, NOW, &c), SATOKEN_VALID);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double verify_us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / iters;
    unsigned char d[32];
    satoken_cache *cache = satoken_cache_new(1024);
    gnutls_hash_fast(GNUTLS_DIG_SHA256, t, n, d);
    satoken_cache_put(cache, d, &c);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < iters * 10; i++) {
        gnutls_hash_fast(GNUTLS_DIG_SHA256, t, n, d);
        assert_true(satoken_cache_get(cache, d, NOW, &c));
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double hit_us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / iters / 10;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < iters * 100; i++)
        assert_false(satoken_looks_like_jwt("0123456789abcdef0123456789abcdef", 32));
    clock_gettime(CLOCK_MONOTONIC, &b);
    double shape_ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / iters / 100;
    print_message("token %zu bytes: full verify %.1f us, digest + cache hit %.2f us, "
                  "shape check of a non-JWT %.0f ns\n",
                  n, verify_us, hit_us, shape_ns);
    satoken_cache_free(cache);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_claims_as_upstream),
        cmocka_unit_test(test_tampered),   cmocka_unit_test(test_times),
        cmocka_unit_test(test_audience),   cmocka_unit_test(test_not_ours),
        cmocka_unit_test(test_malformed),  cmocka_unit_test(test_sign_arguments),
        cmocka_unit_test(test_key_file),   cmocka_unit_test(test_cache),
        cmocka_unit_test(test_cost),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
