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
 * Threading: build the auth_t first; afterwards concurrent auth_check_bearer
 * calls are safe as long as nothing adds tokens or frees it meanwhile.
 */
#ifndef ALLOT_SERVER_AUTH_H
#define ALLOT_SERVER_AUTH_H

#include <stddef.h>

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

/* Who a token belongs to. All pointers are owned by the auth_t. */
typedef struct auth_user {
    const char *name;
    const char *uid;
    const char *const *groups;
    size_t ngroups;
} auth_user;

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
