/* tls.c - bootstrap of the CA and serving certificate in the data directory.
 *
 * Owns the four PEM files named in tls.h and nothing else. Keys are created
 * with gnutls and written via secfile (temp + fsync + rename, exact mode).
 * Write order makes a crash at any point recoverable on the next start:
 * a key is always written before its certificate, so a certificate on disk
 * implies the key that goes with it was written first; a serving pair left
 * mismatched by a crash fails the key-id check and is regenerated.
 */
#include "server/tls.h"
#include "util/secfile.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#define PEM_MAX (64 * 1024)
#define DAY 86400

typedef struct {
    gnutls_x509_subject_alt_name_t type; /* GNUTLS_SAN_DNSNAME or GNUTLS_SAN_IPADDRESS */
    size_t len;
    unsigned char data[254]; /* DNS name (lowercase, no NUL) or 4/16 address bytes */
} san_t;

typedef struct {
    san_t v[3 + TLS_MAX_EXTRA_SANS];
    size_t n;
} san_set;

typedef struct {
    gnutls_x509_crt_t crt;
    gnutls_x509_privkey_t key;
} keypair;

static int gt_fail(char *err, size_t errlen, const char *what, int ret)
{
    if (err && errlen) snprintf(err, errlen, "%s: %s", what, gnutls_strerror(ret));
    return -1;
}

static void keypair_clear(keypair *kp)
{
    if (kp->crt) gnutls_x509_crt_deinit(kp->crt);
    if (kp->key) gnutls_x509_privkey_deinit(kp->key);
    kp->crt = NULL;
    kp->key = NULL;
}

/* ---- SANs ---- */

static int san_equal(const san_t *a, const san_t *b)
{
    if (a->type != b->type || a->len != b->len) return 0;
    if (a->type == GNUTLS_SAN_DNSNAME)
        return strncasecmp((const char *)a->data, (const char *)b->data, a->len) == 0;
    return memcmp(a->data, b->data, a->len) == 0;
}

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

/* Parse one SAN: an IP literal, else a DNS name (letters, digits, '-', '.',
 * and '*' for wildcards). Returns 1 if parsed, 0 if deliberately ignored (an
 * unspecified address), -1 if invalid. */
static int san_parse(const char *text, san_t *out)
{
    memset(out, 0, sizeof *out);
    out->type = GNUTLS_SAN_IPADDRESS;
    if (inet_pton(AF_INET, text, out->data) == 1)
        out->len = 4;
    else if (inet_pton(AF_INET6, text, out->data) == 1)
        out->len = 16;
    if (out->len) return all_zero(out->data, out->len) ? 0 : 1;

    size_t n = strlen(text);
    if (n == 0 || n > 253) return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (!isalnum(c) && c != '-' && c != '.' && c != '*') return -1;
        out->data[i] = (unsigned char)tolower(c);
    }
    out->type = GNUTLS_SAN_DNSNAME;
    out->len = n;
    return 1;
}

static int san_set_add(san_set *s, const char *text, char *err, size_t errlen)
{
    san_t san;
    int rc = san_parse(text, &san);
    if (rc < 0) {
        snprintf(err, errlen, "invalid subject alternative name \"%.64s\"", text);
        return -1;
    }
    if (rc == 0) return 0;
    for (size_t i = 0; i < s->n; i++)
        if (san_equal(&s->v[i], &san)) return 0;
    if (s->n == sizeof s->v / sizeof s->v[0]) {
        snprintf(err, errlen, "too many subject alternative names (max %d extra)",
                 TLS_MAX_EXTRA_SANS);
        return -1;
    }
    s->v[s->n++] = san;
    return 0;
}

static int san_set_build(san_set *s, const char *const *extra, char *err, size_t errlen)
{
    static const char *const defaults[] = {"localhost", "127.0.0.1", "::1"};
    s->n = 0;
    for (size_t i = 0; i < 3; i++)
        if (san_set_add(s, defaults[i], err, errlen) != 0) return -1;
    for (size_t i = 0; extra && extra[i]; i++)
        if (san_set_add(s, extra[i], err, errlen) != 0) return -1;
    return 0;
}

static int crt_has_san(gnutls_x509_crt_t crt, const san_t *want)
{
    for (unsigned seq = 0; seq < 1024; seq++) {
        san_t got = {0};
        size_t size = sizeof got.data;
        int ret = gnutls_x509_crt_get_subject_alt_name(crt, seq, got.data, &size, NULL);
        if (ret == GNUTLS_E_SHORT_MEMORY_BUFFER) continue; /* too long to be one we want */
        if (ret < 0) return 0; /* end of list, or a malformed extension */
        got.type = (gnutls_x509_subject_alt_name_t)ret;
        got.len = size;
        if (san_equal(&got, want)) return 1;
    }
    return 0;
}

/* ---- generation ---- */

static int gen_key(gnutls_x509_privkey_t *key, char *err, size_t errlen)
{
    int ret = gnutls_x509_privkey_init(key);
    if (ret < 0) return gt_fail(err, errlen, "privkey_init", ret);
    ret = gnutls_x509_privkey_generate(*key, GNUTLS_PK_ECDSA,
                                       GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0);
    if (ret < 0) return gt_fail(err, errlen, "generate ECDSA P-256 key", ret);
    return 0;
}

/* Fields every certificate here shares: v3, a random positive 128-bit serial,
 * subject (when dn is not NULL), public key, validity from an hour ago (tolerates clock skew) for
 * `days`, and a subject key id. */
static int crt_base(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, const char *dn, time_t now,
                    unsigned days, char *err, size_t errlen)
{
    unsigned char serial[16], keyid[64];
    size_t keyid_len = sizeof keyid;
    const char *bad = NULL;
    int ret = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial);
    if (ret < 0) return gt_fail(err, errlen, "random serial", ret);
    serial[0] = (unsigned char)((serial[0] & 0x7f) | 0x40); /* positive, non-zero, full length */
    if ((ret = gnutls_x509_crt_set_version(crt, 3)) < 0 ||
        (ret = gnutls_x509_crt_set_serial(crt, serial, sizeof serial)) < 0 ||
        (dn && (ret = gnutls_x509_crt_set_dn(crt, dn, &bad)) < 0) ||
        (ret = gnutls_x509_crt_set_key(crt, key)) < 0 ||
        (ret = gnutls_x509_crt_set_activation_time(crt, now - 3600)) < 0 ||
        (ret = gnutls_x509_crt_set_expiration_time(crt, now + (time_t)days * DAY)) < 0 ||
        (ret = gnutls_x509_privkey_get_key_id(key, 0, keyid, &keyid_len)) < 0 ||
        (ret = gnutls_x509_crt_set_subject_key_id(crt, keyid, keyid_len)) < 0)
        return gt_fail(err, errlen, "build certificate", ret);
    return 0;
}

static int make_ca(keypair *ca, time_t now, char *err, size_t errlen)
{
    int ret;
    if (gen_key(&ca->key, err, errlen) != 0) return -1;
    if ((ret = gnutls_x509_crt_init(&ca->crt)) < 0) return gt_fail(err, errlen, "crt_init", ret);
    if (crt_base(ca->crt, ca->key, "CN=allot-ca", now, TLS_CA_DAYS, err, errlen) != 0) return -1;
    if ((ret = gnutls_x509_crt_set_basic_constraints(ca->crt, 1, 0)) < 0 ||
        (ret =
             gnutls_x509_crt_set_key_usage(ca->crt, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN |
                                                        GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
        (ret = gnutls_x509_crt_sign2(ca->crt, ca->crt, ca->key, GNUTLS_DIG_SHA256, 0)) < 0)
        return gt_fail(err, errlen, "build CA certificate", ret);
    return 0;
}

static int make_server(keypair *srv, const keypair *ca, const san_set *sans, time_t now, char *err,
                       size_t errlen)
{
    unsigned char akid[64];
    size_t akid_len = sizeof akid;
    int ret;
    if (gen_key(&srv->key, err, errlen) != 0) return -1;
    if ((ret = gnutls_x509_crt_init(&srv->crt)) < 0) return gt_fail(err, errlen, "crt_init", ret);
    if (crt_base(srv->crt, srv->key, "CN=allot-server", now, TLS_SERVER_DAYS, err, errlen) != 0)
        return -1;
    if ((ret = gnutls_x509_crt_set_basic_constraints(srv->crt, 0, -1)) < 0 ||
        (ret = gnutls_x509_crt_set_key_usage(srv->crt, GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
        (ret = gnutls_x509_crt_set_key_purpose_oid(srv->crt, GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0)
        return gt_fail(err, errlen, "build serving certificate", ret);
    /* Optional: a CA an operator dropped in may lack a subject key id. */
    if (gnutls_x509_crt_get_subject_key_id(ca->crt, akid, &akid_len, NULL) >= 0 &&
        (ret = gnutls_x509_crt_set_authority_key_id(srv->crt, akid, akid_len)) < 0)
        return gt_fail(err, errlen, "set authority key id", ret);
    for (size_t i = 0; i < sans->n; i++) {
        ret = gnutls_x509_crt_set_subject_alt_name(srv->crt, sans->v[i].type, sans->v[i].data,
                                                   (unsigned)sans->v[i].len, GNUTLS_FSAN_APPEND);
        if (ret < 0) return gt_fail(err, errlen, "add subject alternative name", ret);
    }
    ret = gnutls_x509_crt_sign2(srv->crt, ca->crt, ca->key, GNUTLS_DIG_SHA256, 0);
    if (ret < 0) return gt_fail(err, errlen, "sign serving certificate", ret);
    return 0;
}

/* ---- files ---- */

/* Write key (0600) then certificate (0644); see the ordering note at the top. */
static int save_pair(const char *dir, const char *crt_name, const char *key_name, const keypair *kp,
                     char *err, size_t errlen)
{
    char path[PATH_MAX];
    gnutls_datum_t k = {NULL, 0}, c = {NULL, 0};
    int rc = -1, ret;
    if ((ret = gnutls_x509_privkey_export2(kp->key, GNUTLS_X509_FMT_PEM, &k)) < 0 ||
        (ret = gnutls_x509_crt_export2(kp->crt, GNUTLS_X509_FMT_PEM, &c)) < 0) {
        gt_fail(err, errlen, "export PEM", ret);
        goto out;
    }
    if (secfile_join(path, sizeof path, dir, key_name, err, errlen) != 0 ||
        secfile_write(path, k.data, k.size, 0600, 0, err, errlen) != 0)
        goto out;
    if (secfile_join(path, sizeof path, dir, crt_name, err, errlen) != 0 ||
        secfile_write(path, c.data, c.size, 0644, 0, err, errlen) != 0)
        goto out;
    rc = 0;
out:
    if (k.data) gnutls_memset(k.data, 0, k.size);
    gnutls_free(k.data);
    gnutls_free(c.data);
    return rc;
}

/* Load dir/name into *crt (when crt is non-NULL) or else *key. Returns 0,
 * SECFILE_ENOENT, or -1 with err filled (unreadable or unparsable). */
static int load_pem(const char *dir, const char *name, gnutls_x509_crt_t *crt,
                    gnutls_x509_privkey_t *key, char *err, size_t errlen)
{
    char path[PATH_MAX], *pem = NULL;
    size_t len = 0;
    if (secfile_join(path, sizeof path, dir, name, err, errlen) != 0) return -1;
    int rc = secfile_read(path, PEM_MAX, &pem, &len, err, errlen);
    if (rc != 0) return rc;
    gnutls_datum_t d = {(unsigned char *)pem, (unsigned)len};
    int ret = crt ? gnutls_x509_crt_init(crt) : gnutls_x509_privkey_init(key);
    if (ret >= 0)
        ret = crt ? gnutls_x509_crt_import(*crt, &d, GNUTLS_X509_FMT_PEM)
                  : gnutls_x509_privkey_import2(*key, &d, GNUTLS_X509_FMT_PEM, NULL, 0);
    gnutls_memset(pem, 0, len);
    free(pem);
    if (ret < 0) {
        snprintf(err, errlen, "parse %s: %s", path, gnutls_strerror(ret));
        return -1;
    }
    return 0;
}

/* 1 if the certificate carries the public half of key. */
static int pair_matches(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key)
{
    unsigned char a[64], b[64];
    size_t alen = sizeof a, blen = sizeof b;
    if (gnutls_x509_crt_get_key_id(crt, 0, a, &alen) < 0) return 0;
    if (gnutls_x509_privkey_get_key_id(key, 0, b, &blen) < 0) return 0;
    return alen == blen && memcmp(a, b, alen) == 0;
}

static int ensure_ca(const char *dir, keypair *ca, time_t now, char *err, size_t errlen)
{
    int rc = load_pem(dir, TLS_CA_CERT_FILE, &ca->crt, NULL, err, errlen);
    if (rc == SECFILE_ENOENT) {
        if (make_ca(ca, now, err, errlen) != 0) return -1;
        return save_pair(dir, TLS_CA_CERT_FILE, TLS_CA_KEY_FILE, ca, err, errlen);
    }
    if (rc != 0) return -1;
    rc = load_pem(dir, TLS_CA_KEY_FILE, NULL, &ca->key, err, errlen);
    if (rc == SECFILE_ENOENT) {
        snprintf(err, errlen, "%s/%s exists but %s is missing", dir, TLS_CA_CERT_FILE,
                 TLS_CA_KEY_FILE);
        return -1;
    }
    if (rc != 0) return -1;
    if (!pair_matches(ca->crt, ca->key)) {
        snprintf(err, errlen, "%s/%s does not match %s", dir, TLS_CA_CERT_FILE, TLS_CA_KEY_FILE);
        return -1;
    }
    if (gnutls_x509_crt_get_expiration_time(ca->crt) <= now) {
        snprintf(err, errlen, "%s/%s has expired; remove %s and %s to create a new CA", dir,
                 TLS_CA_CERT_FILE, TLS_CA_CERT_FILE, TLS_CA_KEY_FILE);
        return -1;
    }
    return 0;
}

/* 1 if the serving pair on disk can be kept, 0 if it must be (re)generated. */
static int server_reusable(const char *dir, const keypair *ca, const san_set *sans, time_t now)
{
    keypair srv = {NULL, NULL};
    char ignored[256];
    unsigned status = 0;
    int ok = 0;
    if (load_pem(dir, TLS_SERVER_CERT_FILE, &srv.crt, NULL, ignored, sizeof ignored) != 0 ||
        load_pem(dir, TLS_SERVER_KEY_FILE, NULL, &srv.key, ignored, sizeof ignored) != 0)
        goto out;
    if (!pair_matches(srv.crt, srv.key)) goto out;
    /* Signature only: validity is judged against `now` below, not the wall clock. */
    if (gnutls_x509_crt_verify(srv.crt, &ca->crt, 1,
                               GNUTLS_VERIFY_DISABLE_TIME_CHECKS |
                                   GNUTLS_VERIFY_DISABLE_TRUSTED_TIME_CHECKS,
                               &status) < 0 ||
        status != 0)
        goto out;
    if (gnutls_x509_crt_get_expiration_time(srv.crt) - now < (time_t)TLS_RENEW_BEFORE_DAYS * DAY)
        goto out;
    for (size_t i = 0; i < sans->n; i++)
        if (!crt_has_san(srv.crt, &sans->v[i])) goto out;
    ok = 1;
out:
    keypair_clear(&srv);
    return ok;
}

int tls_ensure_at(const char *data_dir, const char *const *extra_sans, time_t now, char *err,
                  size_t errlen)
{
    keypair ca = {NULL, NULL}, srv = {NULL, NULL};
    san_set sans;
    int rc = -1;
    if (san_set_build(&sans, extra_sans, err, errlen) != 0) return -1;
    if (secfile_mkdirs(data_dir, 0700, err, errlen) != 0) return -1;
    if (ensure_ca(data_dir, &ca, now, err, errlen) != 0) goto out;
    if (server_reusable(data_dir, &ca, &sans, now)) {
        rc = 0;
        goto out;
    }
    if (make_server(&srv, &ca, &sans, now, err, errlen) != 0) goto out;
    rc = save_pair(data_dir, TLS_SERVER_CERT_FILE, TLS_SERVER_KEY_FILE, &srv, err, errlen);
out:
    keypair_clear(&ca);
    keypair_clear(&srv);
    return rc;
}

int tls_ensure(const char *data_dir, const char *const *extra_sans, char *err, size_t errlen)
{
    return tls_ensure_at(data_dir, extra_sans, time(NULL), err, errlen);
}

static int read_one(const char *dir, const char *name, char **out, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (!out) return 0;
    if (secfile_join(path, sizeof path, dir, name, err, errlen) != 0) return -1;
    int rc = secfile_read(path, PEM_MAX, out, NULL, err, errlen);
    if (rc == SECFILE_ENOENT) snprintf(err, errlen, "%s is missing", path);
    return rc == 0 ? 0 : -1;
}

int tls_load(const char *data_dir, char **cert_pem, char **key_pem, char **ca_pem, char *err,
             size_t errlen)
{
    char **outs[3] = {cert_pem, key_pem, ca_pem};
    static const char *const names[3] = {TLS_SERVER_CERT_FILE, TLS_SERVER_KEY_FILE,
                                         TLS_CA_CERT_FILE};
    for (int i = 0; i < 3; i++)
        if (outs[i]) *outs[i] = NULL;
    for (int i = 0; i < 3; i++) {
        if (read_one(data_dir, names[i], outs[i], err, errlen) == 0) continue;
        for (int j = 0; j < i; j++) {
            if (!outs[j]) continue;
            free(*outs[j]);
            *outs[j] = NULL;
        }
        return -1;
    }
    return 0;
}

/* ---- client certificates ---- */

/* 1 if s is non-empty, at most 256 bytes, well-formed UTF-8 without control
 * characters (it becomes a user or group name). */
static int name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 256) return 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned c = *p, need = c < 0x80             ? 0
                                : (c & 0xe0) == 0xc0 ? 1
                                : (c & 0xf0) == 0xe0 ? 2
                                : (c & 0xf8) == 0xf0 ? 3
                                                     : 9;
        if (need == 9 || c < 0x20 || c == 0x7f || (need == 1 && c < 0xc2)) return 0;
        for (unsigned i = 1; i <= need; i++)
            if ((p[i] & 0xc0) != 0x80) return 0;
        p += need + 1;
    }
    return 1;
}

static int set_client_subject(gnutls_x509_crt_t crt, const char *user, const char *const *groups,
                              size_t ngroups, char *err, size_t errlen)
{
    int ret;
    for (size_t i = 0; i < ngroups; i++) {
        ret = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, 0, groups[i],
                                            (unsigned)strlen(groups[i]));
        if (ret < 0) return gt_fail(err, errlen, "set certificate organization", ret);
    }
    ret = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, user,
                                        (unsigned)strlen(user));
    return ret < 0 ? gt_fail(err, errlen, "set certificate common name", ret) : 0;
}

static int make_client(keypair *cl, const keypair *ca, const char *user, const char *const *groups,
                       size_t ngroups, unsigned days, time_t now, char *err, size_t errlen)
{
    unsigned char akid[64];
    size_t akid_len = sizeof akid;
    int ret;
    if (gen_key(&cl->key, err, errlen) != 0) return -1;
    if ((ret = gnutls_x509_crt_init(&cl->crt)) < 0) return gt_fail(err, errlen, "crt_init", ret);
    if (crt_base(cl->crt, cl->key, NULL, now, days, err, errlen) != 0 ||
        set_client_subject(cl->crt, user, groups, ngroups, err, errlen) != 0)
        return -1;
    /* Never past the CA: a certificate its issuer outlives is useless after. */
    time_t ca_end = gnutls_x509_crt_get_expiration_time(ca->crt);
    if (ca_end < now + (time_t)days * DAY &&
        (ret = gnutls_x509_crt_set_expiration_time(cl->crt, ca_end)) < 0)
        return gt_fail(err, errlen, "set expiration", ret);
    if ((ret = gnutls_x509_crt_set_basic_constraints(cl->crt, 0, -1)) < 0 ||
        (ret = gnutls_x509_crt_set_key_usage(cl->crt, GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
        (ret = gnutls_x509_crt_set_key_purpose_oid(cl->crt, GNUTLS_KP_TLS_WWW_CLIENT, 0)) < 0)
        return gt_fail(err, errlen, "build client certificate", ret);
    if (gnutls_x509_crt_get_subject_key_id(ca->crt, akid, &akid_len, NULL) >= 0 &&
        (ret = gnutls_x509_crt_set_authority_key_id(cl->crt, akid, akid_len)) < 0)
        return gt_fail(err, errlen, "set authority key id", ret);
    ret = gnutls_x509_crt_sign2(cl->crt, ca->crt, ca->key, GNUTLS_DIG_SHA256, 0);
    return ret < 0 ? gt_fail(err, errlen, "sign client certificate", ret) : 0;
}

static char *datum_str(const gnutls_datum_t *d)
{
    char *s = malloc(d->size + 1);
    if (!s) return NULL;
    memcpy(s, d->data, d->size);
    s[d->size] = '\0';
    return s;
}

int tls_issue_client(const char *data_dir, const char *user, const char *const *groups,
                     size_t ngroups, unsigned days, time_t now, char **cert_pem, char **key_pem,
                     char *err, size_t errlen)
{
    keypair ca = {NULL, NULL}, cl = {NULL, NULL};
    gnutls_datum_t k = {NULL, 0}, c = {NULL, 0};
    int rc = -1, ret;
    *cert_pem = *key_pem = NULL;
    if (!name_ok(user)) return snprintf(err, errlen, "invalid user name"), -1;
    if (ngroups > TLS_CLIENT_MAX_GROUPS)
        return snprintf(err, errlen, "at most %d groups", TLS_CLIENT_MAX_GROUPS), -1;
    for (size_t i = 0; i < ngroups; i++)
        if (!name_ok(groups[i])) return snprintf(err, errlen, "invalid group name"), -1;
    if (days == 0 || days > TLS_CA_DAYS)
        return snprintf(err, errlen, "days must be 1 to %d", TLS_CA_DAYS), -1;
    rc = load_pem(data_dir, TLS_CA_CERT_FILE, &ca.crt, NULL, err, errlen);
    if (rc == 0) rc = load_pem(data_dir, TLS_CA_KEY_FILE, NULL, &ca.key, err, errlen);
    if (rc == SECFILE_ENOENT)
        snprintf(err, errlen, "%s has no CA (%s and %s): start allotd there first", data_dir,
                 TLS_CA_CERT_FILE, TLS_CA_KEY_FILE);
    if (rc != 0) {
        rc = -1;
        goto out;
    }
    rc = -1;
    if (!pair_matches(ca.crt, ca.key)) {
        snprintf(err, errlen, "%s/%s does not match %s", data_dir, TLS_CA_CERT_FILE,
                 TLS_CA_KEY_FILE);
        goto out;
    }
    if (make_client(&cl, &ca, user, groups, ngroups, days, now, err, errlen) != 0) goto out;
    if ((ret = gnutls_x509_privkey_export2(cl.key, GNUTLS_X509_FMT_PEM, &k)) < 0 ||
        (ret = gnutls_x509_crt_export2(cl.crt, GNUTLS_X509_FMT_PEM, &c)) < 0) {
        gt_fail(err, errlen, "export PEM", ret);
        goto out;
    }
    *cert_pem = datum_str(&c);
    *key_pem = datum_str(&k);
    if (!*cert_pem || !*key_pem) {
        free(*cert_pem);
        free(*key_pem);
        *cert_pem = *key_pem = NULL;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    rc = 0;
out:
    if (k.data) gnutls_memset(k.data, 0, k.size);
    gnutls_free(k.data);
    gnutls_free(c.data);
    keypair_clear(&ca);
    keypair_clear(&cl);
    return rc;
}

struct tls_client_ca {
    gnutls_x509_trust_list_t tl;
};

tls_client_ca *tls_client_ca_new(const char *ca_pem, char *err, size_t errlen)
{
    tls_client_ca *ca = calloc(1, sizeof *ca);
    gnutls_datum_t d = {(unsigned char *)ca_pem, ca_pem ? (unsigned)strlen(ca_pem) : 0};
    int ret;
    if (!ca) return snprintf(err, errlen, "out of memory"), NULL;
    if ((ret = gnutls_x509_trust_list_init(&ca->tl, 0)) < 0) {
        free(ca);
        return gt_fail(err, errlen, "trust list", ret), NULL;
    }
    ret = gnutls_x509_trust_list_add_trust_mem(ca->tl, &d, NULL, GNUTLS_X509_FMT_PEM, 0, 0);
    if (ret <= 0) {
        tls_client_ca_free(ca);
        if (ret == 0) snprintf(err, errlen, "no CA certificate in the client CA PEM");
        return ret < 0 ? gt_fail(err, errlen, "client CA", ret), NULL : NULL;
    }
    return ca;
}

void tls_client_ca_free(tls_client_ca *ca)
{
    if (!ca) return;
    gnutls_x509_trust_list_deinit(ca->tl, 1);
    free(ca);
}

/* Copy an attribute value into out->buf: a string type (UTF8String,
 * PrintableString, IA5String) whose bytes are valid UTF-8 without NUL, as
 * Go's pkix.Name reads them (no DN escaping). NULL when it does not fit or is
 * not such a string. */
static const char *ava_value(const gnutls_x509_ava_st *ava, tls_subject *out, size_t *used)
{
    enum { UTF8 = 12, PRINTABLE = 19, IA5 = 22 };
    unsigned tag = ava->value_tag;
    if (tag != UTF8 && tag != PRINTABLE && tag != IA5) return NULL;
    if (ava->value.size + 1 > sizeof out->buf - *used) return NULL;
    char *v = out->buf + *used;
    memcpy(v, ava->value.data, ava->value.size);
    v[ava->value.size] = '\0';
    if (strlen(v) != ava->value.size || (v[0] && !name_ok(v))) return NULL;
    *used += ava->value.size + 1;
    return v;
}

/* gnutls gives the dotted OID with its NUL counted. */
static int oid_is(const gnutls_datum_t *oid, const char *want)
{
    size_t n = strlen(want);
    return (oid->size == n || (oid->size == n + 1 && oid->data[n] == '\0')) &&
           !memcmp(oid->data, want, n);
}

/* The subject's CommonName (the last, as Go keeps it) and Organization
 * values (in order) into out. -1 when the subject cannot be read or does
 * not fit. */
static int read_subject(gnutls_x509_crt_t crt, tls_subject *out)
{
    gnutls_x509_dn_t dn;
    size_t used = 0, max = sizeof out->orgs / sizeof out->orgs[0];
    if (gnutls_x509_crt_get_subject(crt, &dn) < 0) return -1;
    for (int irdn = 0; irdn < 64; irdn++) {
        for (int iava = 0;; iava++) {
            gnutls_x509_ava_st ava;
            int ret = gnutls_x509_dn_get_rdn_ava(dn, irdn, iava, &ava);
            if (ret == GNUTLS_E_ASN1_ELEMENT_NOT_FOUND && iava == 0) return 0; /* no more RDNs */
            if (ret == GNUTLS_E_ASN1_ELEMENT_NOT_FOUND) break;
            if (ret < 0) return -1;
            int cn = oid_is(&ava.oid, GNUTLS_OID_X520_COMMON_NAME);
            int org = oid_is(&ava.oid, GNUTLS_OID_X520_ORGANIZATION_NAME);
            if (!cn && !org) continue;
            const char *v = ava_value(&ava, out, &used);
            if (!v || (org && out->norgs == max)) return -1;
            if (cn) out->cn = v;
            if (org) out->orgs[out->norgs++] = v;
        }
    }
    return -1; /* more RDNs than any certificate of ours has */
}

tls_client_result tls_client_subject(const tls_client_ca *ca, const gnutls_datum_t *chain,
                                     unsigned n, tls_subject *out)
{
    gnutls_x509_crt_t crts[8];
    unsigned ncrt = 0, status = 0;
    tls_client_result res = TLS_CLIENT_INVALID;
    memset(out, 0, sizeof *out);
    if (!chain || n == 0) return TLS_CLIENT_NONE;
    if (!ca || n > sizeof crts / sizeof crts[0]) return TLS_CLIENT_INVALID;
    for (; ncrt < n; ncrt++) {
        if (gnutls_x509_crt_init(&crts[ncrt]) < 0) goto out;
        if (gnutls_x509_crt_import(crts[ncrt], &chain[ncrt], GNUTLS_X509_FMT_DER) < 0) {
            ncrt++;
            goto out;
        }
    }
    /* As upstream's DefaultVerifyOptions: chains to the CA, valid now, and
     * usable for client authentication. */
    gnutls_typed_vdata_st purpose = {GNUTLS_DT_KEY_PURPOSE_OID,
                                     (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT, 0};
    if (gnutls_x509_trust_list_verify_crt2(ca->tl, crts, ncrt, &purpose, 1, 0, &status, NULL) < 0 ||
        status != 0)
        goto out;
    if (read_subject(crts[0], out) != 0) goto out;
    res = out->cn && *out->cn ? TLS_CLIENT_OK : TLS_CLIENT_NONE;
out:
    for (unsigned i = 0; i < ncrt; i++)
        gnutls_x509_crt_deinit(crts[i]);
    return res;
}
