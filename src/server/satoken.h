/* satoken.h - ServiceAccount tokens: the JWTs upstream's TokenRequest API
 * issues (--service-account-signing-key-file), and their verification.
 *
 * A token is header.payload.signature, each base64url without padding:
 *   header  {"alg":"RS256","kid":KID}   KID = base64url(SHA-256(public key, PKIX DER))
 *   payload {"aud":[...],"exp":N,"iat":N,"iss":SATOKEN_ISSUER,"jti":UUID,
 *            "kubernetes.io":{"namespace":NS,"serviceaccount":{"name":NAME,"uid":UID}},
 *            "nbf":N,"sub":"system:serviceaccount:NS:NAME"}
 * signed RS256 (RSASSA-PKCS1-v1_5, SHA-256) with an RSA key kept in the data
 * directory (SATOKEN_KEY_FILE, mode 0600).
 *
 * This module checks what the token itself says (signature, issuer, times,
 * audience, claim shapes); whether the ServiceAccount still exists with the
 * token's uid is the caller's question (auth.c asks the store). It never logs
 * and never quotes a token in an error. The clock is an argument.
 *
 * A bounded cache (satoken_cache) remembers verified tokens by their SHA-256
 * digest, so a client reusing a token pays a digest and a lookup, not an RSA
 * verification and a JSON parse; times are re-checked on every hit.
 */
#ifndef ALLOT_SERVER_SATOKEN_H
#define ALLOT_SERVER_SATOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SATOKEN_KEY_FILE "sa.key"
/* The issuer (iss) and the API server's audience, as kind's and kubeadm's
 * clusters have them (--service-account-issuer, --api-audiences default). */
#define SATOKEN_ISSUER "https://kubernetes.default.svc.cluster.local"
#define SATOKEN_KEY_BITS 2048
/* Clock skew tolerated on exp, nbf and iat (go-jose's DefaultLeeway). */
#define SATOKEN_LEEWAY_S 60
/* A bearer token longer than this is not parsed as a JWT. */
#define SATOKEN_MAX_LEN 8192
#define SATOKEN_MAX_AUDIENCES 32
/* The digest a cache is keyed by (SHA-256). */
#define SATOKEN_DIGEST_LEN 32

typedef struct satoken_key satoken_key;

/* A fresh RSA key (SATOKEN_KEY_BITS). NULL with err filled. */
satoken_key *satoken_key_generate(char *err, size_t errlen);
/* An RSA private key in PEM (PKCS#1 or PKCS#8) of at least 2048 bits. */
satoken_key *satoken_key_import(const char *pem, size_t len, char *err, size_t errlen);
/* The key in data_dir/SATOKEN_KEY_FILE, created (0600, no-clobber so racing
 * starts agree) when absent. 0 with *out set (caller frees), or -1. */
int satoken_key_ensure(const char *data_dir, satoken_key **out, char *err, size_t errlen);
void satoken_key_free(satoken_key *k);
/* The key id put in every token's header (43 characters). */
const char *satoken_key_id(const satoken_key *k);

/* What a verified token says. */
typedef struct satoken_claims {
    char ns[64];    /* DNS-1123 label: at most 63 */
    char name[254]; /* DNS-1123 subdomain: at most 253 */
    char uid[128];
    int64_t iat, nbf, exp;
} satoken_claims;

/* Sign a token for ServiceAccount ns/name (uid) valid from now for `seconds`,
 * for the audiences auds[0..naud) (1..SATOKEN_MAX_AUDIENCES). *out is a new
 * NUL-terminated string (caller frees; wipe it first if it matters).
 * 0, or -1 on bad arguments or a signing failure. */
int satoken_sign(const satoken_key *k, const char *ns, const char *name, const char *uid,
                 const char *const *auds, size_t naud, int64_t now, int64_t seconds, char **out);

/* Whether a bearer token has the shape of a JWS compact serialization (three
 * non-empty base64url parts, the first starting "eyJ", at most
 * SATOKEN_MAX_LEN): the only tokens worth parsing. No allocation. */
bool satoken_looks_like_jwt(const char *tok, size_t len);

typedef enum {
    SATOKEN_VALID = 0,
    SATOKEN_NOT_OURS,  /* not a JWT, or another issuer's: not for this authenticator */
    SATOKEN_MALFORMED, /* ours by its issuer, but not well formed */
    SATOKEN_BAD_SIGNATURE,
    SATOKEN_EXPIRED,
    SATOKEN_NOT_YET_VALID, /* nbf or iat in the future */
    SATOKEN_WRONG_AUDIENCE,
} satoken_status;

/* Why, in a few words (for a debug log; never contains the token). */
const char *satoken_status_text(satoken_status s);

/* Verify tok[0..len): signature under k, issuer SATOKEN_ISSUER, exp/nbf/iat
 * against now (with SATOKEN_LEEWAY_S), an audience in common with
 * auds[0..naud), and the kubernetes.io claims (namespace, serviceaccount
 * name and uid, sub matching them). On SATOKEN_VALID *out is filled. */
satoken_status satoken_verify(const satoken_key *k, const char *tok, size_t len,
                              const char *const *auds, size_t naud, int64_t now,
                              satoken_claims *out);

/* The time checks of satoken_verify alone, for claims verified before. */
satoken_status satoken_check_time(const satoken_claims *c, int64_t now);

/* ---- cache of verified tokens ----
 * A fixed table of slots (direct-mapped by digest), so memory is bounded
 * whatever clients send; a colliding token evicts the older one. Only tokens
 * that verified are put, with their claims; an entry is dropped once it is
 * found expired. Thread-safe (one mutex, held for a copy). */
typedef struct satoken_cache satoken_cache;

/* slots is rounded up to a power of two (at least 16). NULL on ENOMEM. */
satoken_cache *satoken_cache_new(size_t slots);
void satoken_cache_free(satoken_cache *c);
/* true with *out filled when the token of this digest verified before and is
 * not yet expired at now. */
bool satoken_cache_get(satoken_cache *c, const unsigned char digest[SATOKEN_DIGEST_LEN],
                       int64_t now, satoken_claims *out);
void satoken_cache_put(satoken_cache *c, const unsigned char digest[SATOKEN_DIGEST_LEN],
                       const satoken_claims *cl);

#endif
