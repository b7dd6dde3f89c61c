/* impersonate.c - the impersonation filter (see impersonate.h). */
#include "server/impersonate.h"

#include "core/impersonation.h"
#include "server/authz.h"

#include <microhttpd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PREFIX "Impersonate-"

struct impersonation {
    imp m;
    auth_user user; /* a view over m */
    auth_extra *extra;
};

/* The request's Impersonate-* headers (borrowed from libmicrohttpd for the
 * request's lifetime). */
typedef struct collected {
    imp_header *h;
    size_t n, cap;
    bool nomem, bad;
} collected;

/* A byte upstream's HTTP server refuses in a header (Go's
 * httpguts.ValidHeaderFieldValue: controls other than tab, and DEL). */
static bool has_control(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f) return true;
    return false;
}

static enum MHD_Result collect(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                               const char *value, size_t value_size)
{
    (void)kind;
    collected *c = cls;
    if (key_size < strlen(PREFIX) || strncasecmp(key, PREFIX, strlen(PREFIX)) != 0) return MHD_YES;
    if (has_control(key, key_size) || (value && has_control(value, value_size))) {
        c->bad = true;
        return MHD_NO;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        imp_header *h = realloc(c->h, cap * sizeof *h);
        if (!h) {
            c->nomem = true;
            return MHD_NO;
        }
        c->h = h;
        c->cap = cap;
    }
    c->h[c->n++] = (imp_header){key, value ? value : ""};
    return MHD_YES;
}

void impersonate_free(impersonation *p)
{
    if (!p) return;
    imp_free(&p->m);
    free(p->extra);
    free(p);
}

/* Parse and authorize the impersonation part by part for the requestor:
 * 0 with *out the user to act as (NULL when the headers ask for nothing,
 * e.g. an empty Impersonate-User alone), or -1 with rs set. */
static int authorize(const req *rq, const collected *c, impersonation **out, resp *rs)
{
    impersonation *p = calloc(1, sizeof *p);
    char err[4096];
    imp_result r = p ? imp_parse(c->h, c->n, &p->m, err, sizeof err) : IMP_NOMEM;
    if (r == IMP_NONE) {
        impersonate_free(p);
        return 0;
    }
    if (r == IMP_BAD) {
        resp_errf(rs, API_BAD_REQUEST, "%s", err);
        goto fail;
    }
    if (r == IMP_NOMEM) goto nomem;
    rbac_user requestor = authz_user(rq);
    for (size_t i = 0; i < p->m.nasks; i++) {
        rbac_attrs a;
        imp_attrs(&p->m, i, requestor, &a);
        if (authz_check(&a, rs) != 0) goto fail;
    }
    if (p->m.nextra && !(p->extra = calloc(p->m.nextra, sizeof *p->extra))) goto nomem;
    for (size_t i = 0; i < p->m.nextra; i++)
        p->extra[i] = (auth_extra){p->m.extra[i].key, (const char *const *)p->m.extra[i].values,
                                   p->m.extra[i].nvalues};
    p->user = (auth_user){p->m.user,    p->m.uid, (const char *const *)p->m.groups,
                          p->m.ngroups, p->extra, p->m.nextra};
    *out = p;
    return 0;
nomem:
    resp_errf(rs, API_INTERNAL, "out of memory");
fail:
    impersonate_free(p);
    return -1;
}

int impersonate_request(struct MHD_Connection *c, req *rq, impersonation **out, resp *rs)
{
    *out = NULL;
    collected hs = {0};
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, collect, &hs);
    int rc = 0;
    if (hs.bad) {
        resp_errf(rs, API_BAD_REQUEST, "invalid control character in the impersonation headers");
        rc = -1;
    } else if (hs.nomem) {
        resp_errf(rs, API_INTERNAL, "out of memory");
        rc = -1;
    } else if (hs.n) {
        rc = authorize(rq, &hs, out, rs);
        if (rc == 0 && *out) {
            rq->impersonator = rq->user;
            rq->user = &(*out)->user;
        }
    }
    free(hs.h);
    return rc;
}
