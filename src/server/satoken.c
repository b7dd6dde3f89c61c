/* satoken.c - ServiceAccount JWTs: signing, verification, the key file, a
 * cache of verified tokens. See satoken.h.
 *
 * Verification never trusts the token: the parts are bounded before they are
 * decoded, base64url is decoded strictly (no padding, no stray bits), the
 * header must say RS256 (no "none", no HMAC with the public key), JSON is
 * parsed with duplicate keys refused, and every claim is type-checked. The
 * issuer is read before the signature is checked only to tell "not ours"
 * from "ours but bad", as upstream's hasCorrectIssuer does; nothing else in
 * the payload is believed until the signature verifies.
 */
#include "server/satoken.h"
#include "util/secfile.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <jansson.h>

#define KEY_PEM_MAX (32 * 1024)
#define SA_PREFIX "system:serviceaccount:"

struct satoken_key {
    gnutls_privkey_t priv;
    gnutls_pubkey_t pub;
    char kid[48];
};

/* ---- base64url (RFC 4648 section 5, no padding) ---- */

static const char B64U[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static size_t b64u_len(size_t n)
{
    return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

/* Writes b64u_len(n) characters and a NUL at out. */
static void b64u_encode(const unsigned char *p, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < n) v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        out[o++] = B64U[(v >> 18) & 63];
        out[o++] = B64U[(v >> 12) & 63];
        if (i + 1 < n) out[o++] = B64U[(v >> 6) & 63];
        if (i + 2 < n) out[o++] = B64U[v & 63];
    }
    out[o] = '\0';
}

static int b64u_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
}

/* Strict decode of s[0..n) into out (room for n*3/4 bytes). Returns the
 * decoded length, or -1: a character outside the alphabet, a length that no
 * encoding has (n % 4 == 1), or non-zero unused bits in the last character
 * (so each byte string has exactly one accepted encoding). */
static long b64u_decode(const char *s, size_t n, unsigned char *out)
{
    if (n % 4 == 1) return -1;
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64u_val((unsigned char)s[i]);
        if (v < 0) return -1;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (acc != 0) return -1;
    return (long)o;
}

/* ---- the key ---- */

void satoken_key_free(satoken_key *k)
{
    if (!k) return;
    if (k->priv) gnutls_privkey_deinit(k->priv);
    if (k->pub) gnutls_pubkey_deinit(k->pub);
    free(k);
}

const char *satoken_key_id(const satoken_key *k)
{
    return k->kid;
}

static int gt_fail(char *err, size_t errlen, const char *what, int ret)
{
    if (err && errlen) snprintf(err, errlen, "%s: %s", what, gnutls_strerror(ret));
    return -1;
}

/* Take ownership of x (an RSA key of at least 2048 bits) into a new key. */
static satoken_key *key_from_x509(gnutls_x509_privkey_t x, char *err, size_t errlen)
{
    satoken_key *k = calloc(1, sizeof *k);
    gnutls_datum_t der = {NULL, 0};
    unsigned char sum[32];
    unsigned bits = 0;
    int ret;
    if (!k) {
        gnutls_x509_privkey_deinit(x);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (gnutls_x509_privkey_get_pk_algorithm2(x, &bits) != GNUTLS_PK_RSA || bits < 2048) {
        gnutls_x509_privkey_deinit(x);
        snprintf(err, errlen, "the service account signing key must be RSA of at least 2048 bits");
        goto fail;
    }
    if ((ret = gnutls_privkey_init(&k->priv)) < 0 ||
        (ret = gnutls_privkey_import_x509(k->priv, x, GNUTLS_PRIVKEY_IMPORT_AUTO_RELEASE)) < 0) {
        gnutls_x509_privkey_deinit(x);
        gt_fail(err, errlen, "import signing key", ret);
        goto fail;
    }
    if ((ret = gnutls_pubkey_init(&k->pub)) < 0 ||
        (ret = gnutls_pubkey_import_privkey(k->pub, k->priv, 0, 0)) < 0 ||
        (ret = gnutls_pubkey_export2(k->pub, GNUTLS_X509_FMT_DER, &der)) < 0 ||
        (ret = gnutls_hash_fast(GNUTLS_DIG_SHA256, der.data, der.size, sum)) < 0) {
        gt_fail(err, errlen, "signing key's public half", ret);
        goto fail;
    }
    gnutls_free(der.data);
    /* upstream's keyIDFromPublicKey: base64url(SHA-256(PKIX DER)) */
    b64u_encode(sum, sizeof sum, k->kid);
    return k;
fail:
    gnutls_free(der.data);
    satoken_key_free(k);
    return NULL;
}

satoken_key *satoken_key_generate(char *err, size_t errlen)
{
    gnutls_x509_privkey_t x;
    int ret = gnutls_x509_privkey_init(&x);
    if (ret < 0) return gt_fail(err, errlen, "privkey_init", ret), NULL;
    ret = gnutls_x509_privkey_generate(x, GNUTLS_PK_RSA, SATOKEN_KEY_BITS, 0);
    if (ret < 0) {
        gnutls_x509_privkey_deinit(x);
        return gt_fail(err, errlen, "generate RSA key", ret), NULL;
    }
    return key_from_x509(x, err, errlen);
}

satoken_key *satoken_key_import(const char *pem, size_t len, char *err, size_t errlen)
{
    gnutls_x509_privkey_t x;
    gnutls_datum_t d = {(unsigned char *)pem, (unsigned)len};
    int ret = gnutls_x509_privkey_init(&x);
    if (ret < 0) return gt_fail(err, errlen, "privkey_init", ret), NULL;
    ret = gnutls_x509_privkey_import2(x, &d, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (ret < 0) {
        gnutls_x509_privkey_deinit(x);
        return gt_fail(err, errlen, "parse signing key", ret), NULL;
    }
    return key_from_x509(x, err, errlen);
}

/* Write a new key to path unless one is there already. */
static int create_key_file(const char *path, char *err, size_t errlen)
{
    gnutls_x509_privkey_t x;
    gnutls_datum_t pem = {NULL, 0};
    int ret = gnutls_x509_privkey_init(&x);
    if (ret < 0) return gt_fail(err, errlen, "privkey_init", ret);
    if ((ret = gnutls_x509_privkey_generate(x, GNUTLS_PK_RSA, SATOKEN_KEY_BITS, 0)) < 0 ||
        (ret = gnutls_x509_privkey_export2(x, GNUTLS_X509_FMT_PEM, &pem)) < 0) {
        gnutls_x509_privkey_deinit(x);
        return gt_fail(err, errlen, "generate service account signing key", ret);
    }
    gnutls_x509_privkey_deinit(x);
    ret = secfile_write(path, pem.data, pem.size, 0600, 1, err, errlen);
    gnutls_memset(pem.data, 0, pem.size);
    gnutls_free(pem.data);
    return ret < 0 ? -1 : 0;
}

int satoken_key_ensure(const char *data_dir, satoken_key **out, char *err, size_t errlen)
{
    char path[PATH_MAX], *pem = NULL;
    size_t len = 0;
    *out = NULL;
    if (secfile_join(path, sizeof path, data_dir, SATOKEN_KEY_FILE, err, errlen) != 0) return -1;
    int rc = secfile_read(path, KEY_PEM_MAX, &pem, &len, err, errlen);
    if (rc == SECFILE_ENOENT) {
        if (create_key_file(path, err, errlen) != 0) return -1;
        rc = secfile_read(path, KEY_PEM_MAX, &pem, &len, err, errlen);
        if (rc == SECFILE_ENOENT) snprintf(err, errlen, "%s vanished after creation", path);
    }
    if (rc != 0) return -1;
    char why[256];
    *out = satoken_key_import(pem, len, why, sizeof why);
    if (!*out) snprintf(err, errlen, "%s: %s", path, why);
    gnutls_memset(pem, 0, len);
    free(pem);
    return *out ? 0 : -1;
}

/* ---- signing ---- */

static void uuid4(char out[37])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char r[16];
    if (gnutls_rnd(GNUTLS_RND_NONCE, r, sizeof r) < 0) memset(r, 0, sizeof r);
    r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
    r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
        out[o++] = hex[r[i] >> 4];
        out[o++] = hex[r[i] & 15];
    }
    out[o] = '\0';
}

static char *payload_json(const char *ns, const char *name, const char *uid,
                          const char *const *auds, size_t naud, int64_t now, int64_t seconds)
{
    char sub[sizeof SA_PREFIX + 64 + 254 + 1], jti[37];
    snprintf(sub, sizeof sub, SA_PREFIX "%s:%s", ns, name);
    uuid4(jti);
    json_t *aud = json_array();
    for (size_t i = 0; aud && i < naud; i++)
        json_array_append_new(aud, json_string(auds[i]));
    json_t *p =
        json_pack("{s:o, s:I, s:I, s:s, s:s, s:{s:s, s:{s:s, s:s}}, s:I, s:s}", "aud", aud, "exp",
                  (json_int_t)(now + seconds), "iat", (json_int_t)now, "iss", SATOKEN_ISSUER, "jti",
                  jti, "kubernetes.io", "namespace", ns, "serviceaccount", "name", name, "uid", uid,
                  "nbf", (json_int_t)now, "sub", sub);
    char *s = p ? json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(p);
    return s;
}

int satoken_sign(const satoken_key *k, const char *ns, const char *name, const char *uid,
                 const char *const *auds, size_t naud, int64_t now, int64_t seconds, char **out)
{
    *out = NULL;
    if (!k || !ns || !name || !uid || !auds || naud == 0 || naud > SATOKEN_MAX_AUDIENCES ||
        seconds <= 0 || strlen(ns) >= sizeof((satoken_claims *)0)->ns ||
        strlen(name) >= sizeof((satoken_claims *)0)->name ||
        strlen(uid) >= sizeof((satoken_claims *)0)->uid)
        return -1;
    char header[96];
    snprintf(header, sizeof header, "{\"alg\":\"RS256\",\"kid\":\"%s\"}", k->kid);
    char *payload = payload_json(ns, name, uid, auds, naud, now, seconds);
    if (!payload) return -1;
    size_t hn = strlen(header), pn = strlen(payload);
    size_t cap = b64u_len(hn) + 1 + b64u_len(pn) + 1 + b64u_len(1024) + 1;
    char *tok = malloc(cap);
    gnutls_datum_t sig = {NULL, 0};
    int rc = -1;
    if (!tok) goto out;
    b64u_encode((const unsigned char *)header, hn, tok);
    size_t n = strlen(tok);
    tok[n++] = '.';
    b64u_encode((const unsigned char *)payload, pn, tok + n);
    n += strlen(tok + n);
    gnutls_datum_t data = {(unsigned char *)tok, (unsigned)n};
    if (gnutls_privkey_sign_data(k->priv, GNUTLS_DIG_SHA256, 0, &data, &sig) < 0 || sig.size > 1024)
        goto out;
    tok[n++] = '.';
    b64u_encode(sig.data, sig.size, tok + n);
    *out = tok;
    tok = NULL;
    rc = 0;
out:
    gnutls_free(sig.data);
    free(tok);
    free(payload);
    return rc;
}

/* ---- verification ---- */

const char *satoken_status_text(satoken_status s)
{
    switch (s) {
    case SATOKEN_VALID:
        return "valid";
    case SATOKEN_NOT_OURS:
        return "not a service account token of this issuer";
    case SATOKEN_MALFORMED:
        return "malformed token";
    case SATOKEN_BAD_SIGNATURE:
        return "invalid signature";
    case SATOKEN_EXPIRED:
        return "token has expired";
    case SATOKEN_NOT_YET_VALID:
        return "token is not valid yet";
    case SATOKEN_WRONG_AUDIENCE:
        return "token audiences are invalid for this server";
    }
    return "invalid token";
}

bool satoken_looks_like_jwt(const char *tok, size_t len)
{
    if (len < 8 || len > SATOKEN_MAX_LEN || memcmp(tok, "eyJ", 3) != 0) return false;
    const char *d1 = memchr(tok, '.', len);
    if (!d1 || d1 == tok) return false;
    const char *d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok));
    if (!d2 || d2 == d1 + 1 || d2 == tok + len - 1) return false;
    return memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - tok)) == NULL;
}

/* Decode one base64url part holding a JSON object. NULL if it is not one. */
static json_t *decode_json_part(const char *s, size_t n)
{
    unsigned char *buf = malloc(n / 4 * 3 + 3);
    if (!buf) return NULL;
    long len = b64u_decode(s, n, buf);
    json_t *v =
        len > 0 ? json_loadb((const char *)buf, (size_t)len, JSON_REJECT_DUPLICATES, NULL) : NULL;
    free(buf);
    if (v && !json_is_object(v)) {
        json_decref(v);
        v = NULL;
    }
    return v;
}

/* A NumericDate: a JSON number (go-jose accepts fractions), within range. */
static bool numeric_date(const json_t *v, int64_t *out)
{
    if (!json_is_number(v)) return false;
    double d = json_number_value(v);
    if (!(d > -1e15 && d < 1e15)) return false;
    *out = (int64_t)d;
    return true;
}

static bool copy_str(const json_t *v, char *dst, size_t n)
{
    const char *s = json_string_value(v);
    size_t len = s ? json_string_length(v) : 0;
    if (!s || len == 0 || len >= n || memchr(s, '\0', len)) return false;
    memcpy(dst, s, len + 1);
    return true;
}

satoken_status satoken_check_time(const satoken_claims *c, int64_t now)
{
    if (now > c->exp + SATOKEN_LEEWAY_S) return SATOKEN_EXPIRED;
    if (now + SATOKEN_LEEWAY_S < c->nbf || now + SATOKEN_LEEWAY_S < c->iat)
        return SATOKEN_NOT_YET_VALID;
    return SATOKEN_VALID;
}

/* aud: a string or an array of strings (as go-jose reads it); true when one
 * of them is among auds. */
static satoken_status check_audience(const json_t *aud, const char *const *auds, size_t naud)
{
    if (json_is_string(aud)) {
        for (size_t i = 0; i < naud; i++)
            if (!strcmp(json_string_value(aud), auds[i])) return SATOKEN_VALID;
        return SATOKEN_WRONG_AUDIENCE;
    }
    if (!json_is_array(aud)) return SATOKEN_MALFORMED;
    size_t i;
    const json_t *a;
    satoken_status st = SATOKEN_WRONG_AUDIENCE;
    json_array_foreach(aud, i, a)
    {
        if (!json_is_string(a)) return SATOKEN_MALFORMED;
        for (size_t j = 0; j < naud; j++)
            if (!strcmp(json_string_value(a), auds[j])) st = SATOKEN_VALID;
    }
    return st;
}

/* The claims of a payload whose signature verified. */
static satoken_status read_claims(const json_t *p, const char *const *auds, size_t naud,
                                  int64_t now, satoken_claims *c)
{
    const json_t *k8s = json_object_get(p, "kubernetes.io");
    const json_t *sa = json_object_get(k8s, "serviceaccount");
    if (!numeric_date(json_object_get(p, "exp"), &c->exp)) return SATOKEN_MALFORMED;
    c->nbf = c->iat = INT64_MIN / 2;
    const json_t *v;
    if ((v = json_object_get(p, "nbf")) && !numeric_date(v, &c->nbf)) return SATOKEN_MALFORMED;
    if ((v = json_object_get(p, "iat")) && !numeric_date(v, &c->iat)) return SATOKEN_MALFORMED;
    satoken_status st = satoken_check_time(c, now);
    if (st != SATOKEN_VALID) return st;
    if ((st = check_audience(json_object_get(p, "aud"), auds, naud)) != SATOKEN_VALID) return st;
    if (!json_is_object(k8s) || !json_is_object(sa) ||
        !copy_str(json_object_get(k8s, "namespace"), c->ns, sizeof c->ns) ||
        !copy_str(json_object_get(sa, "name"), c->name, sizeof c->name) ||
        !copy_str(json_object_get(sa, "uid"), c->uid, sizeof c->uid))
        return SATOKEN_MALFORMED;
    /* sub must name the same account as the private claims */
    const char *sub = json_string_value(json_object_get(p, "sub"));
    size_t pl = strlen(SA_PREFIX), nl = strlen(c->ns);
    if (!sub || strncmp(sub, SA_PREFIX, pl) != 0 || strncmp(sub + pl, c->ns, nl) != 0 ||
        sub[pl + nl] != ':' || strcmp(sub + pl + nl + 1, c->name) != 0)
        return SATOKEN_MALFORMED;
    return SATOKEN_VALID;
}

static satoken_status verify_signature(const satoken_key *k, const char *tok, size_t signed_len,
                                       const char *sig64, size_t sig64_len)
{
    unsigned char sig[1024];
    if (sig64_len > b64u_len(sizeof sig)) return SATOKEN_BAD_SIGNATURE;
    long n = b64u_decode(sig64, sig64_len, sig);
    if (n <= 0) return SATOKEN_MALFORMED;
    gnutls_datum_t data = {(unsigned char *)tok, (unsigned)signed_len};
    gnutls_datum_t s = {sig, (unsigned)n};
    return gnutls_pubkey_verify_data2(k->pub, GNUTLS_SIGN_RSA_SHA256, 0, &data, &s) < 0
               ? SATOKEN_BAD_SIGNATURE
               : SATOKEN_VALID;
}

satoken_status satoken_verify(const satoken_key *k, const char *tok, size_t len,
                              const char *const *auds, size_t naud, int64_t now,
                              satoken_claims *out)
{
    if (!k || !tok || !satoken_looks_like_jwt(tok, len)) return SATOKEN_NOT_OURS;
    const char *d1 = memchr(tok, '.', len);
    const char *d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok));
    json_t *payload = decode_json_part(d1 + 1, (size_t)(d2 - d1 - 1)), *header = NULL;
    satoken_status st = SATOKEN_NOT_OURS;
    const char *iss = json_string_value(json_object_get(payload, "iss"));
    if (!iss || strcmp(iss, SATOKEN_ISSUER) != 0) goto out; /* someone else's, or no JWT */
    st = SATOKEN_MALFORMED;
    header = decode_json_part(tok, (size_t)(d1 - tok));
    const char *alg = json_string_value(json_object_get(header, "alg"));
    const json_t *kid = json_object_get(header, "kid");
    if (!alg || strcmp(alg, "RS256") != 0) goto out;
    if (kid && (!json_is_string(kid) || strcmp(json_string_value(kid), k->kid) != 0)) {
        st = SATOKEN_BAD_SIGNATURE; /* signed by another key */
        goto out;
    }
    st = verify_signature(k, tok, (size_t)(d2 - tok), d2 + 1, len - (size_t)(d2 + 1 - tok));
    if (st != SATOKEN_VALID) goto out;
    satoken_claims c;
    memset(&c, 0, sizeof c);
    st = read_claims(payload, auds, naud, now, &c);
    if (st == SATOKEN_VALID) *out = c;
out:
    json_decref(header);
    json_decref(payload);
    return st;
}

/* ---- cache ---- */

typedef struct slot {
    bool used;
    unsigned char digest[SATOKEN_DIGEST_LEN];
    satoken_claims claims;
} slot;

struct satoken_cache {
    pthread_mutex_t mu;
    size_t mask;
    slot *v;
};

satoken_cache *satoken_cache_new(size_t slots)
{
    size_t n = 16;
    while (n < slots && n < ((size_t)1 << 24))
        n *= 2;
    satoken_cache *c = calloc(1, sizeof *c);
    if (!c || !(c->v = calloc(n, sizeof *c->v))) {
        free(c);
        return NULL;
    }
    c->mask = n - 1;
    pthread_mutex_init(&c->mu, NULL);
    return c;
}

void satoken_cache_free(satoken_cache *c)
{
    if (!c) return;
    pthread_mutex_destroy(&c->mu);
    free(c->v);
    free(c);
}

static slot *slot_for(satoken_cache *c, const unsigned char *digest)
{
    size_t h = (size_t)digest[0] | (size_t)digest[1] << 8 | (size_t)digest[2] << 16 |
               (size_t)digest[3] << 24;
    return &c->v[h & c->mask];
}

bool satoken_cache_get(satoken_cache *c, const unsigned char digest[SATOKEN_DIGEST_LEN],
                       int64_t now, satoken_claims *out)
{
    if (!c) return false;
    bool hit = false;
    pthread_mutex_lock(&c->mu);
    slot *s = slot_for(c, digest);
    if (s->used && memcmp(s->digest, digest, SATOKEN_DIGEST_LEN) == 0) {
        if (satoken_check_time(&s->claims, now) == SATOKEN_VALID) {
            *out = s->claims;
            hit = true;
        } else {
            s->used = false; /* expired (or, impossibly, early): verify afresh */
        }
    }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

void satoken_cache_put(satoken_cache *c, const unsigned char digest[SATOKEN_DIGEST_LEN],
                       const satoken_claims *cl)
{
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    slot *s = slot_for(c, digest);
    s->used = true;
    memcpy(s->digest, digest, SATOKEN_DIGEST_LEN);
    s->claims = *cl;
    pthread_mutex_unlock(&c->mu);
}
