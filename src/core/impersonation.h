/* impersonation.h - upstream user impersonation: what a request's
 * Impersonate-* headers ask to act as, the authorization each part needs,
 * and the user the request then is.
 *
 * Upstream's k8s.io/apiserver/pkg/endpoints/filters/impersonation.go,
 * rewritten:
 *  - Impersonate-User (the first such header; empty = absent) is a User, or
 *    a ServiceAccount when it is system:serviceaccount:NS:NAME with NS a
 *    DNS-1123 label and NAME a DNS-1123 subdomain (serviceaccount.
 *    SplitUsername); every Impersonate-Group header is a Group (empty values
 *    too); every Impersonate-Extra-KEY header a UserExtra, KEY lowercased then
 *    percent-decoded as url.PathUnescape (a malformed escape keeps the key as
 *    sent); Impersonate-Uid (the first; empty = absent) a UID.
 *  - Groups, extras or a uid without a user: upstream's 400, "requested
 *    [{Group  g    } ...] without impersonating a user" (Go's %v of the
 *    ObjectReferences).
 *  - Each part is one authorization check with verb "impersonate":
 *    users, groups and serviceaccounts (namespaced) in the core group ""; uids
 *    and userextras/KEY in authentication.k8s.io; the name is the value.
 *  - The user: the name (a ServiceAccount's as sent), the uid, the groups
 *    (a ServiceAccount without Impersonate-Group gets system:serviceaccounts
 *    and system:serviceaccounts:NS), then system:authenticated appended
 *    unless a group is system:authenticated or system:unauthenticated; for
 *    system:anonymous, system:unauthenticated appended unless listed.
 *
 * Strings are kept as valid UTF-8 (imp_valid_utf8).
 *
 * Divergences: extras keep the order their headers came in (upstream walks
 * a Go map: random); a key that decodes to a NUL byte is kept as sent (a C
 * string cannot hold it).
 *
 * Ownership: header strings are borrowed during imp_parse only; an imp owns
 * every string it points to (imp_free). Pure: no I/O, no globals.
 */
#ifndef ALLOT_CORE_IMPERSONATION_H
#define ALLOT_CORE_IMPERSONATION_H

#include "core/rbac.h"

#include <stddef.h>

#define IMP_HEADER_USER "Impersonate-User"
#define IMP_HEADER_GROUP "Impersonate-Group"
#define IMP_HEADER_UID "Impersonate-Uid"
#define IMP_HEADER_EXTRA "Impersonate-Extra-" /* + the key */
#define IMP_VERB "impersonate"
#define IMP_AUTHN_GROUP "authentication.k8s.io"
#define IMP_ANONYMOUS "system:anonymous"

/* One request header (name and value NUL-terminated, borrowed). */
typedef struct imp_header {
    const char *name, *value;
} imp_header;

typedef enum { IMP_USER, IMP_SERVICEACCOUNT, IMP_GROUP, IMP_EXTRA, IMP_UID } imp_kind;

/* One thing the request asks to act as: one authorization check. */
typedef struct imp_ask {
    imp_kind kind;
    char *ns;   /* a ServiceAccount's namespace, else "" */
    char *name; /* the user, ServiceAccount, group, extra value or uid */
    char *key;  /* an extra's key (lowercase, decoded), else "" */
} imp_ask;

/* One key of the user's extra, its values in header order. */
typedef struct imp_extra {
    char *key;
    char **values;
    size_t nvalues;
} imp_extra;

/* A parsed impersonation: the checks, in upstream's order (user, groups,
 * extras, uid), and the user the request becomes once all pass. */
typedef struct imp {
    imp_ask *asks;
    size_t nasks;
    char *user, *uid; /* uid "" when not asked for */
    char **groups;
    size_t ngroups;
    imp_extra *extra;
    size_t nextra;
} imp;

typedef enum {
    IMP_NONE = 0,   /* no impersonation asked for: *m is empty */
    IMP_ASKED = 1,  /* *m holds the checks and the user */
    IMP_BAD = -1,   /* upstream's 400: the message is in err */
    IMP_NOMEM = -2, /* out of memory: *m is empty */
} imp_result;

/* Read the impersonation headers among h[0..n) (names compared ignoring
 * case; other headers are skipped) into *m, which the caller imp_free()s
 * whatever the result. err (errn bytes, NUL-terminated, cut to fit)
 * receives the 400's message. */
imp_result imp_parse(const imp_header *h, size_t n, imp *m, char *err, size_t errn);
void imp_free(imp *m);

/* The authorization attributes of m->asks[i] for `requestor` (pointing into
 * m: valid while m is). */
void imp_attrs(const imp *m, size_t i, rbac_user requestor, rbac_attrs *a);

/* A copy of s with each byte that is not part of valid UTF-8 replaced by
 * U+FFFD (what upstream's JSON shows for it); NULL on out of memory. Every
 * string an imp holds went through it, so it can always be written as JSON. */
char *imp_valid_utf8(const char *s);

/* url.PathUnescape of s[0..len) into a new string; NULL when an escape is
 * malformed, decodes to a NUL byte, or on out of memory (*nomem set). */
char *imp_unescape(const char *s, size_t len, int *nomem);

#endif
