/* auth.c - bearer tokens: token file parsing, constant-time lookup, admin token.
 *
 * Owns a vector of entries, each a token digest plus the user it maps to.
 * Entries are separately allocated so auth_user pointers handed out stay put
 * when the vector grows. Invariant: no two entries share a digest (adding a
 * known token replaces its entry), so a lookup matches at most one.
 */
#include "server/auth.h"
#include "util/secfile.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#define DIGEST_LEN 32 /* SHA-256 */

typedef struct entry {
    unsigned char digest[DIGEST_LEN];
    auth_user user; /* view over the strings below */
    char *name, *uid;
    char **groups;
} entry;

struct auth {
    entry **v;
    size_t n, cap;
    /* ServiceAccount tokens (auth_set_sa_tokens) */
    const satoken_key *sa_key;
    auth_sa_check_fn sa_check;
    void *sa_ctx;
    satoken_cache *sa_cache;
    /* client certificates (auth_set_client_ca) */
    tls_client_ca *client_ca;
    char *client_ca_pem;
};

/* Verified ServiceAccount tokens remembered (satoken_cache): at ~0.5 KB a
 * slot, 512 KB whatever clients send. */
#define SA_CACHE_SLOTS 1024

/* Error wording for the token file, in one place. */
#define MSG_COLUMNS "%s:%d: must have at least 3 columns (token, user name, user uid), found %zu"
#define MSG_BARE_QUOTE "%s:%d: bare \" in non-quoted field"
#define MSG_QUOTE "%s:%d: extraneous or missing \" in quoted field"
#define MSG_NUL "%s:%d: NUL byte in token file"
#define MSG_NOMEM "%s:%d: out of memory"
#define MSG_ADD "%s:%d: cannot add token (out of memory)"

/* ---- entries ---- */

static void entry_free(entry *e)
{
    if (!e) return;
    free(e->name);
    free(e->uid);
    for (size_t i = 0; e->groups && i < e->user.ngroups; i++)
        free(e->groups[i]);
    free(e->groups);
    gnutls_memset(e->digest, 0, sizeof e->digest);
    free(e);
}

static int digest(const char *token, size_t len, unsigned char out[DIGEST_LEN])
{
    return gnutls_hash_fast(GNUTLS_DIG_SHA256, token, len, out) < 0 ? -1 : 0;
}

static int has_group(char *const *groups, size_t n, const char *g)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(groups[i], g) == 0) return 1;
    return 0;
}

static entry *entry_new(const char *token, const char *user, const char *uid,
                        const char *const *groups, size_t ngroups)
{
    entry *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    if (digest(token, strlen(token), e->digest) != 0) goto fail;
    e->name = strdup(user);
    e->uid = strdup(uid);
    e->groups = calloc(ngroups + 1, sizeof *e->groups);
    if (!e->name || !e->uid || !e->groups) goto fail;
    for (size_t i = 0; i < ngroups; i++) {
        if (!(e->groups[e->user.ngroups] = strdup(groups[i]))) goto fail;
        e->user.ngroups++;
    }
    if (!has_group(e->groups, e->user.ngroups, AUTH_GROUP_AUTHENTICATED)) {
        if (!(e->groups[e->user.ngroups] = strdup(AUTH_GROUP_AUTHENTICATED))) goto fail;
        e->user.ngroups++;
    }
    e->user.name = e->name;
    e->user.uid = e->uid;
    e->user.groups = (const char *const *)e->groups;
    return e;
fail:
    entry_free(e);
    return NULL;
}

static int reserve(auth_t *a, size_t extra)
{
    if (a->n + extra <= a->cap) return 0;
    size_t cap = a->cap ? a->cap : 8;
    while (cap < a->n + extra)
        cap *= 2;
    entry **v = realloc(a->v, cap * sizeof *v);
    if (!v) return -1;
    a->v = v;
    a->cap = cap;
    return 0;
}

/* Takes ownership of e; capacity must already be reserved. Keeps digests unique. */
static void insert(auth_t *a, entry *e)
{
    for (size_t i = 0; i < a->n; i++) {
        if (memcmp(a->v[i]->digest, e->digest, DIGEST_LEN) == 0) {
            entry_free(a->v[i]);
            a->v[i] = e;
            return;
        }
    }
    a->v[a->n++] = e;
}

auth_t *auth_new(void)
{
    return calloc(1, sizeof(auth_t));
}

void auth_free(auth_t *a)
{
    if (!a) return;
    for (size_t i = 0; i < a->n; i++)
        entry_free(a->v[i]);
    free(a->v);
    satoken_cache_free(a->sa_cache);
    tls_client_ca_free(a->client_ca);
    free(a->client_ca_pem);
    free(a);
}

int auth_add_token(auth_t *a, const char *token, const char *user, const char *uid,
                   const char *const *groups, size_t ngroups)
{
    if (!a || !token || !*token || !user || !uid || (ngroups && !groups)) return -1;
    for (size_t i = 0; i < ngroups; i++)
        if (!groups[i]) return -1;
    if (reserve(a, 1) != 0) return -1;
    entry *e = entry_new(token, user, uid, groups, ngroups);
    if (!e) return -1;
    insert(a, e);
    return 0;
}

int auth_add_admin_token(auth_t *a, const char *token)
{
    static const char *const groups[] = {AUTH_GROUP_MASTERS, AUTH_GROUP_AUTHENTICATED};
    return auth_add_token(a, token, AUTH_ADMIN_USER, AUTH_ADMIN_UID, groups, 2);
}

/* ---- lookup ---- */

/* Every entry is compared, and the winner chosen by masking rather than by a
 * branch, so the time taken does not depend on which entry (if any) matches. */
static const auth_user *lookup(const auth_t *a, const unsigned char want[DIGEST_LEN])
{
    uintptr_t found = 0;
    for (size_t i = 0; i < a->n; i++) {
        unsigned diff = 0;
        for (size_t j = 0; j < DIGEST_LEN; j++)
            diff |= (unsigned)(want[j] ^ a->v[i]->digest[j]);
        uintptr_t mask = (uintptr_t)0 - (uintptr_t)(diff == 0);
        found |= (uintptr_t)&a->v[i]->user & mask;
    }
    return (const auth_user *)found;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The token of a bearer Authorization header: 0 with *tok and *len set, or -1. */
static int bearer_token(const char *header, const char **tok_out, size_t *len)
{
    const char *p = header, *end = header + strlen(header);
    while (p < end && is_space(*p))
        p++;
    while (end > p && is_space(end[-1]))
        end--;
    /* The scheme is everything up to the first space; the token runs to the
     * next space or the end. "Bearer  x" has an empty token: rejected. */
    const char *sp = memchr(p, ' ', (size_t)(end - p));
    if (!sp || sp - p != 6 || strncasecmp(p, "bearer", 6) != 0) return -1;
    const char *tok = sp + 1;
    const char *tok_end = memchr(tok, ' ', (size_t)(end - tok));
    if (!tok_end) tok_end = end;
    if (tok_end == tok) return -1;
    *tok_out = tok;
    *len = (size_t)(tok_end - tok);
    return 0;
}

const auth_user *auth_check_bearer(const auth_t *a, const char *header)
{
    const char *tok;
    size_t len;
    unsigned char want[DIGEST_LEN];
    if (!a || !header || bearer_token(header, &tok, &len) != 0) return NULL;
    if (digest(tok, len, want) != 0) return NULL;
    const auth_user *u = lookup(a, want);
    gnutls_memset(want, 0, sizeof want);
    return u;
}

/* ---- per-request users ---- */

static char *ident_put(auth_ident *id, size_t *used, const char *s)
{
    size_t n = strlen(s) + 1;
    if (n > sizeof id->text - *used) return NULL;
    char *p = memcpy(id->text + *used, s, n);
    *used += n;
    return p;
}

int auth_ident_set(auth_ident *id, const char *name, const char *uid, const char *const *groups,
                   size_t ngroups)
{
    size_t used = 0, n = 0;
    int has_auth = 0;
    memset(&id->user, 0, sizeof id->user);
    if (!name || !uid || ngroups >= AUTH_IDENT_MAX_GROUPS) return -1;
    if (!(id->user.name = ident_put(id, &used, name)) ||
        !(id->user.uid = ident_put(id, &used, uid)))
        return -1;
    for (size_t i = 0; i < ngroups; i++) {
        if (!(id->groups[n++] = ident_put(id, &used, groups[i]))) return -1;
        has_auth |= !strcmp(groups[i], AUTH_GROUP_AUTHENTICATED);
    }
    if (!has_auth) id->groups[n++] = AUTH_GROUP_AUTHENTICATED;
    id->groups[n] = NULL;
    id->user.groups = (const char *const *)id->groups;
    id->user.ngroups = n;
    return 0;
}

/* ---- client certificates ---- */

int auth_set_client_ca(auth_t *a, const char *ca_pem, char *err, size_t errlen)
{
    if (!a || !ca_pem) return snprintf(err, errlen, "no client CA"), -1;
    tls_client_ca *ca = tls_client_ca_new(ca_pem, err, errlen);
    char *copy = ca ? strdup(ca_pem) : NULL;
    if (!copy) {
        tls_client_ca_free(ca);
        if (ca) snprintf(err, errlen, "out of memory");
        return -1;
    }
    tls_client_ca_free(a->client_ca);
    free(a->client_ca_pem);
    a->client_ca = ca;
    a->client_ca_pem = copy;
    return 0;
}

const char *auth_client_ca_pem(const auth_t *a)
{
    return a ? a->client_ca_pem : NULL;
}

auth_cert_result auth_check_cert(const auth_t *a, const gnutls_datum_t *chain, unsigned n,
                                 auth_ident *id)
{
    tls_subject subj;
    if (!a || !a->client_ca || !chain || n == 0) return AUTH_CERT_NONE;
    switch (tls_client_subject(a->client_ca, chain, n, &subj)) {
    case TLS_CLIENT_NONE:
        return AUTH_CERT_NONE;
    case TLS_CLIENT_INVALID:
        return AUTH_CERT_INVALID;
    case TLS_CLIENT_OK:
        break;
    }
    /* upstream's CommonNameUserConversion: no uid, groups as the O values */
    return auth_ident_set(id, subj.cn, "", subj.orgs, subj.norgs) == 0 ? AUTH_CERT_OK
                                                                       : AUTH_CERT_INVALID;
}

/* ---- ServiceAccount tokens ---- */

int auth_set_sa_tokens(auth_t *a, const satoken_key *key, auth_sa_check_fn check, void *ctx)
{
    if (!a || !key || !check) return -1;
    if (!a->sa_cache && !(a->sa_cache = satoken_cache_new(SA_CACHE_SLOTS))) return -1;
    a->sa_key = key;
    a->sa_check = check;
    a->sa_ctx = ctx;
    return 0;
}

const satoken_key *auth_sa_key(const auth_t *a)
{
    return a ? a->sa_key : NULL;
}

/* The user of a ServiceAccount token (digest: its SHA-256), or NULL. */
static const auth_user *sa_user(const auth_t *a, const char *tok, size_t len,
                                const unsigned char *dig, auth_ident *id, int64_t now)
{
    static const char *const auds[] = {SATOKEN_ISSUER};
    satoken_claims c;
    if (!satoken_cache_get(a->sa_cache, dig, now, &c)) {
        satoken_status st = satoken_verify(a->sa_key, tok, len, auds, 1, now, &c);
        if (st != SATOKEN_VALID) return NULL;
        satoken_cache_put(a->sa_cache, dig, &c);
    }
    if (!a->sa_check(a->sa_ctx, c.ns, c.name, c.uid)) return NULL; /* deleted, or re-created */
    char name[sizeof "system:serviceaccount:" + sizeof c.ns + sizeof c.name];
    char nsgroup[sizeof "system:serviceaccounts:" + sizeof c.ns];
    snprintf(name, sizeof name, "system:serviceaccount:%s:%s", c.ns, c.name);
    snprintf(nsgroup, sizeof nsgroup, "system:serviceaccounts:%s", c.ns);
    const char *groups[] = {"system:serviceaccounts", nsgroup, AUTH_GROUP_AUTHENTICATED};
    return auth_ident_set(id, name, c.uid, groups, 3) == 0 ? &id->user : NULL;
}

const auth_user *auth_authenticate(const auth_t *a, const char *header, auth_ident *scratch,
                                   int64_t now)
{
    const char *tok;
    size_t len;
    unsigned char dig[DIGEST_LEN];
    if (!a || !header || bearer_token(header, &tok, &len) != 0) return NULL;
    if (digest(tok, len, dig) != 0) return NULL;
    const auth_user *u = lookup(a, dig);
    /* Only a token shaped like a JWT costs more than the digest above. */
    if (!u && a->sa_key && scratch && satoken_looks_like_jwt(tok, len))
        u = sa_user(a, tok, len, dig, scratch, now);
    gnutls_memset(dig, 0, sizeof dig);
    return u;
}

/* ---- token file: CSV as Go's encoding/csv reads it (no comments, no lazy
 * quotes, variable field count, "\r\n" read as "\n", empty lines skipped) ---- */

typedef struct {
    char *s;
    size_t n, cap;
} sbuf;

typedef struct {
    sbuf *f; /* fields of the current record */
    size_t n, cap;
} record;

typedef struct {
    const char *p, *end, *path;
    int line;
    char *err;
    size_t errlen;
} csv_in;

static int sbuf_put(sbuf *b, char c)
{
    if (b->n + 1 >= b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 32;
        char *s = realloc(b->s, cap);
        if (!s) return -1;
        b->s = s;
        b->cap = cap;
    }
    b->s[b->n++] = c;
    b->s[b->n] = '\0';
    return 0;
}

static void record_free(record *r)
{
    for (size_t i = 0; i < r->cap; i++) {
        if (r->f[i].s) gnutls_memset(r->f[i].s, 0, r->f[i].cap); /* may hold a token */
        free(r->f[i].s);
    }
    free(r->f);
}

/* Start a new, empty field at r->f[r->n]. */
static int record_field(record *r)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        sbuf *f = realloc(r->f, cap * sizeof *f);
        if (!f) return -1;
        memset(f + r->cap, 0, (cap - r->cap) * sizeof *f);
        r->f = f;
        r->cap = cap;
    }
    sbuf *b = &r->f[r->n++];
    if (!b->s) {
        if (!(b->s = malloc(32))) return -1;
        b->cap = 32;
    }
    b->n = 0;
    b->s[0] = '\0';
    return 0;
}

/* Length of the line ending at p ("\n" or "\r\n"), or 0 if none is there. */
static size_t eol_len(const csv_in *in, const char *p)
{
    if (p < in->end && *p == '\n') return 1;
    if (p + 1 < in->end && p[0] == '\r' && p[1] == '\n') return 2;
    return 0;
}

static int csv_fail(csv_in *in, const char *fmt)
{
    snprintf(in->err, in->errlen, fmt, in->path, in->line);
    return -1;
}

/* Read a quoted field (in->p just past the opening quote) into b. On return
 * in->p is at the character after the closing quote. */
static int csv_quoted(csv_in *in, sbuf *b)
{
    int start = in->line;
    for (;;) {
        if (in->p == in->end) { /* unterminated: point at where the quote opened */
            in->line = start;
            return csv_fail(in, MSG_QUOTE);
        }
        size_t nl = eol_len(in, in->p);
        char c = *in->p;
        if (c == '"' && in->p + 1 < in->end && in->p[1] == '"') {
            in->p += 2;
        } else if (c == '"') {
            in->p++;
            return 0;
        } else if (nl) {
            in->p += nl;
            in->line++;
            c = '\n';
        } else {
            in->p++;
        }
        if (c == '\0') return csv_fail(in, MSG_NUL);
        if (sbuf_put(b, c) != 0) return csv_fail(in, MSG_NOMEM);
    }
}

static int csv_unquoted(csv_in *in, sbuf *b)
{
    while (in->p < in->end && *in->p != ',' && !eol_len(in, in->p)) {
        char c = *in->p++;
        if (c == '"') return csv_fail(in, MSG_BARE_QUOTE);
        if (c == '\0') return csv_fail(in, MSG_NUL);
        if (sbuf_put(b, c) != 0) return csv_fail(in, MSG_NOMEM);
    }
    return 0;
}

/* Read the next record into r. Returns 1 with *start_line set, 0 at end of
 * input, -1 with the error filled. */
static int csv_next(csv_in *in, record *r, int *start_line)
{
    size_t nl;
    while ((nl = eol_len(in, in->p)) != 0) { /* skip empty lines */
        in->p += nl;
        in->line++;
    }
    if (in->p == in->end) return 0;
    *start_line = in->line;
    r->n = 0;
    for (;;) {
        if (record_field(r) != 0) return csv_fail(in, MSG_NOMEM);
        sbuf *b = &r->f[r->n - 1];
        int quoted = in->p < in->end && *in->p == '"';
        if (quoted) in->p++;
        if ((quoted ? csv_quoted(in, b) : csv_unquoted(in, b)) != 0) return -1;
        if (in->p == in->end) return 1;
        if (*in->p == ',') {
            in->p++;
            continue;
        }
        if ((nl = eol_len(in, in->p)) != 0) {
            in->p += nl;
            in->line++;
            return 1;
        }
        return csv_fail(in, MSG_QUOTE); /* only reachable after a closing quote */
    }
}

/* Add one record (already known to have >= 3 fields) to a. */
static int add_record(auth_t *a, const record *r)
{
    const char **groups = NULL;
    char *copy = NULL, *save = NULL;
    size_t ng = 0;
    int rc = -1;
    if (r->f[0].n == 0) return 0; /* empty token: skipped, as upstream does */
    if (r->n >= 4) {
        copy = strdup(r->f[3].s);
        groups = malloc((r->f[3].n / 2 + 1) * sizeof *groups); /* >= number of non-empty parts */
        if (!copy || !groups) goto out;
        for (char *g = strtok_r(copy, ",", &save); g; g = strtok_r(NULL, ",", &save))
            groups[ng++] = g;
    }
    rc = auth_add_token(a, r->f[0].s, r->f[1].s, r->f[2].s, groups, ng);
out:
    free(groups);
    free(copy);
    return rc;
}

static int parse_token_file(auth_t *into, const char *path, const char *text, size_t len, char *err,
                            size_t errlen)
{
    csv_in in = {text, text + len, path, 1, err, errlen};
    record r = {NULL, 0, 0};
    int start = 0, rc;
    while ((rc = csv_next(&in, &r, &start)) == 1) {
        if (r.n < 3) {
            snprintf(err, errlen, MSG_COLUMNS, path, start, r.n);
            rc = -1;
            break;
        }
        if (add_record(into, &r) != 0) {
            snprintf(err, errlen, MSG_ADD, path, start);
            rc = -1;
            break;
        }
    }
    record_free(&r);
    return rc < 0 ? -1 : 0;
}

int auth_load_token_file(auth_t *a, const char *path, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    auth_t *tmp = NULL;
    int rc = secfile_read(path, AUTH_TOKEN_FILE_MAX, &text, &len, err, errlen);
    if (rc == SECFILE_ENOENT) snprintf(err, errlen, "%s: no such file", path);
    if (rc != 0) return -1;
    rc = -1;
    if (!(tmp = auth_new())) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto out;
    }
    if (parse_token_file(tmp, path, text, len, err, errlen) != 0) goto out;
    /* Reserve first so the move below cannot fail half-way. */
    if (reserve(a, tmp->n) != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto out;
    }
    for (size_t i = 0; i < tmp->n; i++)
        insert(a, tmp->v[i]);
    tmp->n = 0;
    rc = 0;
out:
    auth_free(tmp);
    gnutls_memset(text, 0, len);
    free(text);
    return rc;
}

/* ---- admin token ---- */

static int token_acceptable(const char *s, size_t n)
{
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] <= ' ' || s[i] > '~') return 0;
    return 1;
}

/* Copy the trimmed token in file text into out. */
static int take_token(const char *path, char *text, size_t len, char *out, size_t n, char *err,
                      size_t errlen)
{
    char *p = text, *end = text + len;
    while (p < end && is_space(*p))
        p++;
    while (end > p && is_space(end[-1]))
        end--;
    size_t tlen = (size_t)(end - p);
    if (!token_acceptable(p, tlen)) {
        snprintf(err, errlen, "%s: not a valid token (printable ASCII, no spaces)", path);
        return -1;
    }
    if (tlen >= n) {
        snprintf(err, errlen, "%s: token longer than %zu bytes", path, n - 1);
        return -1;
    }
    memcpy(out, p, tlen);
    out[tlen] = '\0';
    return 0;
}

/* Write a fresh token to path unless one appeared meanwhile. 0 written or
 * already there, -1 on error. */
static int create_token(const char *path, char *err, size_t errlen)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[AUTH_ADMIN_TOKEN_LEN / 2];
    char text[AUTH_ADMIN_TOKEN_LEN + 1];
    int ret = gnutls_rnd(GNUTLS_RND_KEY, raw, sizeof raw);
    if (ret < 0) {
        snprintf(err, errlen, "generate admin token: %s", gnutls_strerror(ret));
        return -1;
    }
    for (size_t i = 0; i < sizeof raw; i++) {
        text[2 * i] = hex[raw[i] >> 4];
        text[2 * i + 1] = hex[raw[i] & 15];
    }
    text[AUTH_ADMIN_TOKEN_LEN] = '\n';
    ret = secfile_write(path, text, sizeof text, 0600, 1, err, errlen);
    gnutls_memset(raw, 0, sizeof raw);
    gnutls_memset(text, 0, sizeof text);
    return ret < 0 ? -1 : 0;
}

int auth_ensure_admin_token(const char *data_dir, char *token_out, size_t n, char *err,
                            size_t errlen)
{
    char path[PATH_MAX], *text = NULL;
    size_t len = 0;
    if (!token_out || n == 0) return -1;
    token_out[0] = '\0';
    if (secfile_mkdirs(data_dir, 0700, err, errlen) != 0 ||
        secfile_join(path, sizeof path, data_dir, AUTH_ADMIN_TOKEN_FILE, err, errlen) != 0)
        return -1;
    int rc = secfile_read(path, 4096, &text, &len, err, errlen);
    if (rc == SECFILE_ENOENT) {
        if (create_token(path, err, errlen) != 0) return -1;
        rc = secfile_read(path, 4096, &text, &len, err, errlen);
        if (rc == SECFILE_ENOENT) snprintf(err, errlen, "%s vanished after creation", path);
    }
    if (rc != 0) return -1;
    rc = take_token(path, text, len, token_out, n, err, errlen);
    gnutls_memset(text, 0, len);
    free(text);
    return rc;
}
