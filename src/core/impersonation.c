/* impersonation.c - the Impersonate-* headers read as upstream reads them
 * (see impersonation.h). */
#include "core/impersonation.h"

#include "core/dbuf.h"
#include "core/names.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Ceiling of the 400's text before it is cut to the caller's buffer. */
#define IMP_MSG_MAX (64u * 1024)

void imp_free(imp *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->nasks; i++) {
        free(m->asks[i].ns);
        free(m->asks[i].name);
        free(m->asks[i].key);
    }
    free(m->asks);
    free(m->user);
    free(m->uid);
    for (size_t i = 0; i < m->ngroups; i++)
        free(m->groups[i]);
    free(m->groups);
    for (size_t i = 0; i < m->nextra; i++) {
        free(m->extra[i].key);
        for (size_t j = 0; j < m->extra[i].nvalues; j++)
            free(m->extra[i].values[j]);
        free(m->extra[i].values);
    }
    free(m->extra);
    memset(m, 0, sizeof *m);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Length of the valid UTF-8 sequence at s (Go's utf8.DecodeRune rules:
 * no overlong forms, surrogates or code points past U+10FFFF), 0 if none. */
static size_t utf8_seq(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    unsigned char lo = 0x80, hi = 0xbf;
    size_t n;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else
        return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return n;
}

char *imp_valid_utf8(const char *s)
{
    size_t len = strlen(s);
    char *out = malloc(len * 3 + 1), *o = out;
    if (!out) return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_seq(p);
        if (n) {
            memcpy(o, p, n);
            o += n, p += n;
        } else { /* U+FFFD, as Go's encoding/json writes an invalid byte */
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3, p++;
        }
    }
    *o = '\0';
    return out;
}

char *imp_unescape(const char *s, size_t len, int *nomem)
{
    char *out = malloc(len + 1);
    if (!out) {
        *nomem = 1;
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '%') {
            out[o++] = s[i];
            continue;
        }
        int hi = i + 2 < len ? hexval(s[i + 1]) : -1;
        int lo = hi >= 0 ? hexval(s[i + 2]) : -1;
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) { /* (malformed, or a NUL byte) */
            free(out);
            return NULL;
        }
        out[o++] = (char)(hi << 4 | lo);
        i += 2;
    }
    out[o] = '\0';
    return out;
}

/* Go's %v of a []v1.ObjectReference element: {Kind Namespace Name UID
 * APIVersion ResourceVersion FieldPath}. */
static void describe(dbuf *b, const imp_ask *a)
{
    static const char *const kinds[] = {"User", "ServiceAccount", "Group", "UserExtra", "UID"};
    bool authn = a->kind == IMP_EXTRA || a->kind == IMP_UID;
    dbuf_printf(b, "{%s %s %s  %s  %s}", kinds[a->kind], a->ns, a->name,
                authn ? IMP_AUTHN_GROUP "/v1" : "", a->key);
}

static bool sa_split(const char *user, char **ns, char **name, int *nomem)
{
    size_t pl = strlen(RBAC_SA_PREFIX);
    if (strncmp(user, RBAC_SA_PREFIX, pl) != 0) return false;
    const char *rest = user + pl, *colon = strchr(rest, ':');
    if (!colon || strchr(colon + 1, ':')) return false;
    *ns = strndup(rest, (size_t)(colon - rest));
    *name = strdup(colon + 1);
    if (!*ns || !*name) {
        *nomem = 1;
    } else {
        name_msgs msg = {0};
        if (name_dns1123_label(*ns, &msg) == 0 && name_dns1123_subdomain(*name, &msg) == 0)
            return true;
    }
    free(*ns);
    free(*name);
    *ns = *name = NULL;
    return false;
}

/* ---- building ---- */

typedef struct builder {
    imp *m;
    size_t cap_asks, cap_groups, cap_extra;
    int nomem;
} builder;

static void *grow(void *p, size_t *cap, size_t need, size_t elem, int *nomem)
{
    if (need <= *cap) return p;
    size_t nc = *cap ? *cap * 2 : 4;
    while (nc < need)
        nc *= 2;
    void *q = realloc(p, nc * elem);
    if (!q) {
        *nomem = 1;
        return NULL;
    }
    *cap = nc;
    return q;
}

/* Append an ask (ns, name, key copied; ns/name may be taken: see own). */
static void add_ask(builder *b, imp_kind kind, const char *ns, const char *name, const char *key)
{
    imp *m = b->m;
    imp_ask *v = grow(m->asks, &b->cap_asks, m->nasks + 1, sizeof *v, &b->nomem);
    if (!v) return;
    m->asks = v;
    imp_ask a = {kind, imp_valid_utf8(ns), imp_valid_utf8(name), imp_valid_utf8(key)};
    if (!a.ns || !a.name || !a.key) {
        free(a.ns);
        free(a.name);
        free(a.key);
        b->nomem = 1;
        return;
    }
    m->asks[m->nasks++] = a;
}

static void add_group(builder *b, const char *g)
{
    imp *m = b->m;
    char **v = grow(m->groups, &b->cap_groups, m->ngroups + 1, sizeof *v, &b->nomem);
    if (!v) return;
    m->groups = v;
    if (!(m->groups[m->ngroups] = imp_valid_utf8(g))) {
        b->nomem = 1;
        return;
    }
    m->ngroups++;
}

static bool has_group(const imp *m, const char *g)
{
    for (size_t i = 0; i < m->ngroups; i++)
        if (!strcmp(m->groups[i], g)) return true;
    return false;
}

static void add_extra(builder *b, const char *key, const char *value)
{
    imp *m = b->m;
    imp_extra *e = NULL;
    for (size_t i = 0; i < m->nextra && !e; i++)
        if (!strcmp(m->extra[i].key, key)) e = &m->extra[i];
    if (!e) {
        imp_extra *v = grow(m->extra, &b->cap_extra, m->nextra + 1, sizeof *v, &b->nomem);
        if (!v) return;
        m->extra = v;
        e = &m->extra[m->nextra];
        *e = (imp_extra){imp_valid_utf8(key), NULL, 0};
        if (!e->key) {
            b->nomem = 1;
            return;
        }
        m->nextra++;
    }
    char **vals = realloc(e->values, (e->nvalues + 1) * sizeof *vals);
    if (!vals) {
        b->nomem = 1;
        return;
    }
    e->values = vals;
    if (!(e->values[e->nvalues] = imp_valid_utf8(value))) {
        b->nomem = 1;
        return;
    }
    e->nvalues++;
}

static bool prefixed(const char *name, const char *prefix)
{
    return strncasecmp(name, prefix, strlen(prefix)) == 0;
}

/* An extra header's key: lowercased, then percent-decoded when it decodes. */
static char *extra_key(const char *name, int *nomem)
{
    char *low = strdup(name + strlen(IMP_HEADER_EXTRA));
    if (!low) {
        *nomem = 1;
        return NULL;
    }
    for (char *p = low; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    char *dec = imp_unescape(low, strlen(low), nomem);
    if (!dec) return *nomem ? (free(low), NULL) : low;
    free(low);
    return dec;
}

static void add_extras(builder *b, const imp_header *h, size_t n)
{
    for (size_t i = 0; i < n && !b->nomem; i++) {
        if (!prefixed(h[i].name, IMP_HEADER_EXTRA)) continue;
        char *key = extra_key(h[i].name, &b->nomem);
        if (!key) return;
        add_ask(b, IMP_EXTRA, "", h[i].value, key);
        add_extra(b, key, h[i].value);
        free(key);
    }
}

/* The first value of header `name`, or NULL. */
static const char *first(const imp_header *h, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(h[i].name, name)) return h[i].value;
    return NULL;
}

/* system:authenticated / system:unauthenticated as upstream adds them. */
static void add_auth_group(builder *b)
{
    imp *m = b->m;
    if (strcmp(m->user, IMP_ANONYMOUS) != 0) {
        if (!has_group(m, RBAC_AUTHENTICATED) && !has_group(m, RBAC_UNAUTHENTICATED))
            add_group(b, RBAC_AUTHENTICATED);
    } else if (!has_group(m, RBAC_UNAUTHENTICATED)) {
        add_group(b, RBAC_UNAUTHENTICATED);
    }
}

static imp_result bad_request(const imp *m, char *err, size_t errn)
{
    dbuf d;
    dbuf_init(&d, IMP_MSG_MAX);
    dbuf_adds(&d, "requested [");
    for (size_t i = 0; i < m->nasks; i++) {
        if (i) dbuf_adds(&d, " ");
        describe(&d, &m->asks[i]);
    }
    dbuf_adds(&d, "] without impersonating a user");
    if (errn) {
        size_t n = d.p ? d.len : 0;
        if (n >= errn) /* cut, but not inside a character */
            for (n = errn - 1; n && ((unsigned char)d.p[n] & 0xc0) == 0x80; n--)
                ;
        memcpy(err, d.p ? d.p : "", n);
        err[n] = '\0';
    }
    dbuf_free(&d);
    return IMP_BAD;
}

imp_result imp_parse(const imp_header *h, size_t n, imp *m, char *err, size_t errn)
{
    memset(m, 0, sizeof *m);
    if (errn) *err = '\0';
    builder b = {m, 0, 0, 0, 0};
    const char *user = first(h, n, IMP_HEADER_USER), *uid = first(h, n, IMP_HEADER_UID);
    bool has_user = user && *user, has_groups = first(h, n, IMP_HEADER_GROUP) != NULL;
    char *sa_ns = NULL, *sa_name = NULL;
    if (has_user && sa_split(user, &sa_ns, &sa_name, &b.nomem)) {
        add_ask(&b, IMP_SERVICEACCOUNT, sa_ns, sa_name, "");
        if (!has_groups) {
            char nsgroup[512];
            snprintf(nsgroup, sizeof nsgroup, "%s:%s", RBAC_SA_GROUP, sa_ns);
            add_group(&b, RBAC_SA_GROUP);
            add_group(&b, nsgroup);
        }
    } else if (has_user) {
        add_ask(&b, IMP_USER, "", user, "");
    }
    free(sa_ns);
    free(sa_name);
    for (size_t i = 0; i < n && !b.nomem; i++) {
        if (strcasecmp(h[i].name, IMP_HEADER_GROUP) != 0) continue;
        add_ask(&b, IMP_GROUP, "", h[i].value, "");
        add_group(&b, h[i].value);
    }
    if (!b.nomem) add_extras(&b, h, n);
    if (!b.nomem && uid && *uid) add_ask(&b, IMP_UID, "", uid, "");
    if (!b.nomem && m->nasks && !has_user) {
        imp_result r = bad_request(m, err, errn);
        imp_free(m);
        return r;
    }
    if (!b.nomem && m->nasks) {
        m->user = imp_valid_utf8(user);
        m->uid = imp_valid_utf8(uid && *uid ? uid : "");
        if (!m->user || !m->uid) b.nomem = 1;
        if (!b.nomem) add_auth_group(&b);
    }
    if (b.nomem) {
        imp_free(m);
        return IMP_NOMEM;
    }
    return m->nasks ? IMP_ASKED : IMP_NONE;
}

void imp_attrs(const imp *m, size_t i, rbac_user requestor, rbac_attrs *a)
{
    static const char *const resources[] = {"users", "serviceaccounts", "groups", "userextras",
                                            "uids"};
    const imp_ask *k = &m->asks[i];
    bool authn = k->kind == IMP_EXTRA || k->kind == IMP_UID;
    *a = (rbac_attrs){
        requestor, IMP_VERB, true, authn ? IMP_AUTHN_GROUP : "", resources[k->kind], k->key,
        k->name,   k->ns,    ""};
}
