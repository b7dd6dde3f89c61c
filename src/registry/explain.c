/* explain.c - what a write would meet in quota (see explain.h). */
#include "registry/explain.h"

#include "core/dbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reg_explain {
    json_t *quotas;     /* the entries, in the order the plugins added them */
    reg_explain *outer; /* the thread's explanation before this one began */
};

/* One per thread: a request stays on its thread from decoding to reply, and
 * the plugins it runs see the explanation without every admission hook
 * carrying one more argument. */
static _Thread_local reg_explain *current;

reg_explain *reg_explain_current(void)
{
    return current;
}

json_t *reg_explain_entry(reg_explain *x, const char *kind, const char *ns, const char *name)
{
    json_t *en = json_pack("{s:s}", "kind", kind);
    if (!en) return NULL;
    if (ns && *ns) json_object_set_new(en, "namespace", json_string(ns));
    json_object_set_new(en, "name", json_string(name ? name : ""));
    json_object_set_new(en, "allowed", json_true());
    json_object_set_new(en, "resources", json_array());
    if (json_array_append_new(x->quotas, en) != 0) return NULL;
    return en;
}

json_t *reg_explain_find(reg_explain *x, const char *kind, const char *ns, const char *name)
{
    size_t i;
    json_t *en;
    json_array_foreach(x->quotas, i, en)
    {
        const char *k = json_string_value(json_object_get(en, "kind"));
        const char *n = json_string_value(json_object_get(en, "name"));
        const char *s = json_string_value(json_object_get(en, "namespace"));
        if (k && n && !strcmp(k, kind) && !strcmp(n, name) && !strcmp(s ? s : "", ns ? ns : ""))
            return en;
    }
    return NULL;
}

static void set_str(json_t *o, const char *k, const char *v)
{
    if (v) json_object_set_new(o, k, json_string(v));
}

void reg_explain_row(json_t *entry, const char *resource, const char *hard, const char *used,
                     const char *requested, const char *after, bool exceeded)
{
    json_t *row = json_pack("{s:s}", "name", resource ? resource : "");
    if (!row) return;
    set_str(row, "hard", hard);
    set_str(row, "used", used);
    set_str(row, "requested", requested);
    set_str(row, "after", after);
    json_object_set_new(row, "exceeded", json_boolean(exceeded));
    json_array_append_new(json_object_get(entry, "resources"), row);
}

void reg_explain_deny(json_t *entry, const char *message)
{
    json_object_set_new(entry, "allowed", json_false());
    if (message) json_object_set_new(entry, "message", json_string(message));
}

reg_explain *reg_explain_begin(void)
{
    reg_explain *x = malloc(sizeof *x);
    if (!x) return NULL;
    x->quotas = json_array();
    x->outer = current;
    if (!x->quotas) {
        free(x);
        return NULL;
    }
    current = x;
    return x;
}

json_t *reg_explain_end(reg_explain *x, int rc, const api_err *e)
{
    if (!x) return NULL;
    current = x->outer;
    json_t *st;
    if (rc == 0)
        st = json_pack("{s:b, s:i, s:o}", "allowed", 1, "code", 200, "quotas", x->quotas);
    else
        st = json_pack("{s:b, s:i, s:s, s:s, s:o, s:o}", "allowed", 0, "code",
                       api_errcode_http(e->code), "reason", api_errcode_reason(e->code), "message",
                       e->message, "status", api_err_status(e), "quotas", x->quotas);
    free(x);
    return st;
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* "ResourceQuota compute: requests.cpu 1 + 500m = 1500m of 2; pods 3 + 1 = 4
 * of 10" (and " (exceeded)" on each key past its hard). */
static void summary(const json_t *en, dbuf *b)
{
    dbuf_printf(b, "%s %s%s%s:", str(en, "kind"), str(en, "namespace"),
                *str(en, "namespace") ? "/" : "", str(en, "name"));
    const json_t *rows = json_object_get(en, "resources"), *r;
    size_t i;
    json_array_foreach(rows, i, r)
    {
        dbuf_printf(b, "%s %s", i ? ";" : "", str(r, "name"));
        if (*str(r, "requested")) {
            const char *req = str(r, "requested");
            dbuf_printf(b, " %s %s %s = %s", *str(r, "used") ? str(r, "used") : "0",
                        req[0] == '-' ? "-" : "+", req[0] == '-' ? req + 1 : req, str(r, "after"));
        }
        if (*str(r, "hard")) dbuf_printf(b, " of %s", str(r, "hard"));
        if (json_is_true(json_object_get(r, "exceeded"))) dbuf_adds(b, " (exceeded)");
    }
    if (!json_array_size(rows)) dbuf_adds(b, " nothing to charge");
    if (*str(en, "outcome")) dbuf_printf(b, "; %s", str(en, "outcome"));
}

void reg_explain_warnings(const json_t *status, size_t max, json_t *warnings)
{
    const json_t *quotas = json_object_get(status, "quotas"), *en;
    size_t i;
    json_array_foreach(quotas, i, en)
    {
        if (i == max) {
            json_array_append_new(warnings,
                                  json_sprintf("and %zu more quotas apply (POST a QuotaReview to "
                                               "/apis/allot.dev/v1/quotareviews for all of them)",
                                               json_array_size(quotas) - max));
            break;
        }
        dbuf b;
        dbuf_init(&b, 900);
        summary(en, &b);
        if (dbuf_adds(&b, "") == 0) json_array_append_new(warnings, json_string(b.p));
        dbuf_free(&b);
    }
}
