/* tls.h - the data directory's certificate authority and serving certificate.
 *
 * On first start tls_ensure creates, in data_dir (created 0700 with any missing
 * parents; an existing directory keeps its mode):
 *   ca.crt / ca.key          self-signed ECDSA P-256 CA, 10 years, CA:true, keyCertSign
 *   server.crt / server.key  ECDSA P-256, 1 year, signed by the CA, EKU serverAuth,
 *                            SANs DNS:localhost, IP:127.0.0.1, IP:::1 + the extra SANs
 * Keys are 0600, certificates 0644, every file written atomically (secfile.h).
 * On later starts the files are reused. The serving pair is regenerated when
 * it is missing, unreadable, does not match its key or the CA, expires within
 * TLS_RENEW_BEFORE_DAYS, or lacks a requested SAN. The CA is generated only
 * while ca.crt is absent; a ca.crt without its ca.key is an error, because
 * silently replacing a CA would break every client that trusts it.
 * This module never logs or returns key material except through tls_load
 * and tls_issue_client (which hands the caller the key it made).
 *
 * Client certificates (upstream's --client-ca-file authenticator): the CA
 * also signs client certificates (tls_issue_client: ECDSA P-256, EKU
 * clientAuth, subject CN=user, one O= per group), and tls_client_subject
 * verifies a presented chain against the CA as upstream's x509 authenticator
 * does (signature, validity now, key usage clientAuth) and reads the user
 * (the subject's CommonName) and groups (its Organization values).
 */
#ifndef ALLOT_SERVER_TLS_H
#define ALLOT_SERVER_TLS_H

#include <stddef.h>
#include <time.h>

#include <gnutls/gnutls.h>

#define TLS_CA_CERT_FILE "ca.crt"
#define TLS_CA_KEY_FILE "ca.key"
#define TLS_SERVER_CERT_FILE "server.crt"
#define TLS_SERVER_KEY_FILE "server.key"

#define TLS_CA_DAYS 3650
#define TLS_SERVER_DAYS 365
#define TLS_RENEW_BEFORE_DAYS 30
/* At most this many extra SANs; each at most 253 bytes (a DNS name). */
#define TLS_MAX_EXTRA_SANS 32

/* Make sure data_dir holds a usable CA and serving certificate (see above).
 * extra_sans: NULL-terminated array (or NULL) of IP literals (v4 or v6) or DNS
 * names. The unspecified addresses 0.0.0.0 and :: are ignored (no client can
 * dial them), so a --bind-address can be passed as is. Borrowed, not kept.
 * Returns 0, or -1 with err filled. */
int tls_ensure(const char *data_dir, const char *const *extra_sans, char *err, size_t errlen);

/* tls_ensure with the clock as an argument: certificates are valid from
 * now - 1h and expiry is judged against now. For tests and tools. */
int tls_ensure_at(const char *data_dir, const char *const *extra_sans, time_t now, char *err,
                  size_t errlen);

/* Read the serving certificate, its key and the CA certificate as PEM
 * strings (what MHD_OPTION_HTTPS_MEM_CERT/KEY take). Any of the out pointers
 * may be NULL to skip that file. On 0 each non-NULL *out is a new
 * NUL-terminated string owned by the caller (free(); key_pem should be wiped
 * first if the caller cares). On -1 (err filled) every *out is NULL. */
int tls_load(const char *data_dir, char **cert_pem, char **key_pem, char **ca_pem, char *err,
             size_t errlen);

/* ---- client certificates ---- */

#define TLS_CLIENT_DAYS 365
/* At most this many groups (O values) in an issued certificate. */
#define TLS_CLIENT_MAX_GROUPS 16

/* Issue a client certificate for user (its subject CN) with groups (one O
 * each, in order), signed by the CA in data_dir (which must exist: this
 * never creates a CA), valid from now - 1h for `days` days but never past
 * the CA's own expiry. On 0 *cert_pem and *key_pem are new strings (caller
 * frees; wipe the key). -1 with err filled: no CA, an empty user, a name or
 * group that is not valid UTF-8 or longer than 256 bytes, too many groups. */
int tls_issue_client(const char *data_dir, const char *user, const char *const *groups,
                     size_t ngroups, unsigned days, time_t now, char **cert_pem, char **key_pem,
                     char *err, size_t errlen);

/* The identity a verified client certificate carries. */
typedef struct tls_subject {
    const char *cn; /* the subject's CommonName (the last, as Go reads it) */
    const char *orgs[TLS_CLIENT_MAX_GROUPS * 2]; /* Organization values, in order */
    size_t norgs;
    char buf[2048];
} tls_subject;

typedef enum {
    TLS_CLIENT_NONE = 0, /* no certificate, or one without a CommonName: not an identity */
    TLS_CLIENT_OK,       /* verified: *out filled */
    TLS_CLIENT_INVALID,  /* presented but not valid (foreign CA, expired, wrong usage,
                            unreadable, subject too large): the request fails 401 */
} tls_client_result;

typedef struct tls_client_ca tls_client_ca;
/* The trust anchor for client certificates: the CA certificate(s) in PEM. */
tls_client_ca *tls_client_ca_new(const char *ca_pem, char *err, size_t errlen);
void tls_client_ca_free(tls_client_ca *ca);

/* Verify the chain a client presented (DER, leaf first, as
 * gnutls_certificate_get_peers gives it) against ca at the current time. */
tls_client_result tls_client_subject(const tls_client_ca *ca, const gnutls_datum_t *chain,
                                     unsigned n, tls_subject *out);

#endif
