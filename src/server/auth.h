/* auth.h - bearer-token authentication.
 *
 * An auth_t maps tokens to users, filled from upstream's --token-auth-file
 * CSV format and from the admin token that allotd keeps in its data
 * directory. Tokens are not kept: only their SHA-256 digests are, and a
 * lookup compares the presented token's digest against every entry in
 * constant time, so timing reveals neither which token matched nor how much
 * of one did. Nothing here logs a token, and error messages never quote one.
 *
 * Like upstream's authenticated-group adder, every user added here gets the
 * group "system:authenticated" appended if it is not already listed.
 *
 * ServiceAccount tokens (server/satoken.h) are accepted once
 * auth_set_sa_tokens has given the signing key and a way to look the account
 * up: auth_authenticate tries the token-file tokens first, then, for a token
 * shaped like a JWT only, the ServiceAccount authenticator (upstream's order).
 * Its users are built per request in a caller-provided auth_ident.
 *
 * Threading: build the auth_t first; afterwards concurrent auth_check_bearer
 * and auth_authenticate calls are safe as long as nothing adds tokens or
 * frees it meanwhile (the verified-token cache has its own lock).
 */
#ifndef ALLOT_SERVER_AUTH_H
#define ALLOT_SERVER_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "server/satoken.h"
#include "server/tls.h"

#define AUTH_ADMIN_TOKEN_FILE "admin.token"
#define AUTH_ADMIN_USER "admin"
#define AUTH_ADMIN_UID "admin"
#define AUTH_GROUP_MASTERS "system:masters"
#define AUTH_GROUP_AUTHENTICATED "system:authenticated"
/* The admin token is 32 random bytes, hex-encoded: 64 characters. */
#define AUTH_ADMIN_TOKEN_LEN 64
/* A token file larger than this is refused. */
#define AUTH_TOKEN_FILE_MAX (16u * 1024 * 1024)

typedef struct auth auth_t;

/* One key of a user's extra (user.Info.Extra) and its values. */
typedef struct auth_extra {
    const char *key;
    const char *const *values;
    size_t nvalues;
} auth_extra;

/* Who a token belongs to. All pointers are owned by the auth_t (or by
 * whoever made the user: an auth_ident, an impersonation). Only impersonated
 * users have extras here. */
typedef struct auth_user {
    const char *name;
    const char *uid;
    const char *const *groups;
    size_t ngroups;
    const auth_extra *extra;
    size_t nextra;
} auth_user;

/* A user made for one request or connection (a ServiceAccount token's, a
 * client certificate's): the auth_user points into the struct itself, so it
 * lives as long as the auth_ident does. */
#define AUTH_IDENT_TEXT 2048
#define AUTH_IDENT_MAX_GROUPS 32
typedef struct auth_ident {
    auth_user user;
    const char *groups[AUTH_IDENT_MAX_GROUPS + 1];
    char text[AUTH_IDENT_TEXT];
} auth_ident;

/* Fill id with a copy of name, uid and groups, "system:authenticated"
 * appended when not listed. -1 (id unusable) when the strings do not fit in
 * AUTH_IDENT_TEXT or there are more than AUTH_IDENT_MAX_GROUPS - 1 groups. */
int auth_ident_set(auth_ident *id, const char *name, const char *uid, const char *const *groups,
                   size_t ngroups);

/* Whether ServiceAccount ns/name exists, is not being deleted, and has uid
 * `uid`: 1 yes, 0 no. Called on every request that presents a
 * ServiceAccount token (bound tokens: deleting the account revokes them). */
typedef int (*auth_sa_check_fn)(void *ctx, const char *ns, const char *name, const char *uid);

/* A new empty authenticator, owned by the caller (auth_free). NULL on ENOMEM. */
auth_t *auth_new(void);
void auth_free(auth_t *a);

/* Map token (non-empty) to the user; all arguments are copied. Adding a token
 * that is already present replaces its user (as upstream's map does), which
 * invalidates auth_user pointers previously returned for that token.
 * groups may be NULL when ngroups is 0. Returns 0, or -1 on bad arguments or
 * ENOMEM. */
int auth_add_token(auth_t *a, const char *token, const char *user, const char *uid,
                   const char *const *groups, size_t ngroups);

/* Map token to the admin user: name and uid "admin", groups
 * "system:masters", "system:authenticated". 0 or -1 as auth_add_token. */
int auth_add_admin_token(auth_t *a, const char *token);

/* Load an upstream --token-auth-file: CSV (RFC 4180 quoting as Go's
 * encoding/csv reads it), one record `token,user,uid[,"group1,group2,..."]`
 * per line; extra columns are ignored, blank lines skipped, records with an
 * empty token skipped (upstream only warns). Fewer than 3 columns or a CSV
 * quoting error fails with "<path>:<line>: ..." in err. Divergence from
 * upstream: empty group names (from an empty 4th column or ",,") are dropped
 * rather than kept as the group "". All or nothing: on -1, a is unchanged. */
int auth_load_token_file(auth_t *a, const char *path, char *err, size_t errlen);

/* Authenticate an Authorization header value the way upstream does: trim
 * surrounding whitespace, split on single spaces, the first part must be
 * "bearer" in any case and the second the (non-empty) token; further parts
 * are ignored. Returns the user (owned by a, valid until auth_free or until
 * the token is re-added) or NULL when the header is absent, malformed or the
 * token unknown. header may be NULL. */
const auth_user *auth_check_bearer(const auth_t *a, const char *header);

/* Accept ServiceAccount tokens signed by key (borrowed: must outlive a),
 * for the audience SATOKEN_ISSUER, with check deciding whether the account
 * still stands. Before serving. 0 or -1 (ENOMEM). */
int auth_set_sa_tokens(auth_t *a, const satoken_key *key, auth_sa_check_fn check, void *ctx);
/* The ServiceAccount signing key, NULL when none was set. */
const satoken_key *auth_sa_key(const auth_t *a);

/* Authenticate an Authorization header (as auth_check_bearer parses it):
 * a token-file or admin token, else a valid ServiceAccount token, whose user
 * (system:serviceaccount:NS:NAME, uid the account's, groups
 * system:serviceaccounts, system:serviceaccounts:NS, system:authenticated)
 * is built in *scratch. NULL when the header authenticates nobody. now: Unix
 * seconds. Never logs the token. */
const auth_user *auth_authenticate(const auth_t *a, const char *header, auth_ident *scratch,
                                   int64_t now);

/* ---- client certificates (upstream's --client-ca-file authenticator) ---- */

/* Accept client certificates signed by the CA(s) in ca_pem (copied). Before
 * serving. 0, or -1 with err filled. */
int auth_set_client_ca(auth_t *a, const char *ca_pem, char *err, size_t errlen);
/* The PEM given to auth_set_client_ca (for the TLS server to request
 * certificates against), or NULL. */
const char *auth_client_ca_pem(const auth_t *a);

typedef enum {
    AUTH_CERT_NONE = 0, /* no certificate (or one without a CommonName): try tokens */
    AUTH_CERT_OK,       /* *id holds the user: subject CN, groups its O values */
    AUTH_CERT_INVALID,  /* presented but not verified: not an identity (tokens may still be) */
} auth_cert_result;

/* Authenticate the certificate chain a TLS client presented (DER, leaf first). */
auth_cert_result auth_check_cert(const auth_t *a, const gnutls_datum_t *chain, unsigned n,
                                 auth_ident *id);

/* Create data_dir/admin.token (mode 0600, 32 bytes from gnutls_rnd
 * hex-encoded, created no-clobber so racing starts agree) if it does not
 * exist, else read it (surrounding whitespace trimmed; any non-empty token of
 * printable non-space ASCII is accepted, so an operator may set their own).
 * The token is copied NUL-terminated into token_out (n >= 65 suffices for a
 * generated one). Returns 0, or -1 with err filled (never containing the
 * token). */
int auth_ensure_admin_token(const char *data_dir, char *token_out, size_t n, char *err,
                            size_t errlen);

#endif
