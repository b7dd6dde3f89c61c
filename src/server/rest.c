/* rest.c - the Kubernetes REST surface: routes a request to a verb on a kind.
 *
 * Paths: /api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUB]] and the same under
 * /apis/GROUP/VERSION, the legacy /watch/ prefix, and the discovery, OpenAPI
 * and health endpoints. Object semantics live in the registry; this file
 * decodes requests, checks them against the URL and encodes responses.
 */
#include "server/server.h"
#include "core/jdump.h"

#include "api/discovery.h"
#include "api/fieldmanager.h"
#include "api/kinds.h"
#include "api/openapi.h"
#include "api/patch.h"
#include "api/protobuf.h"
#include "api/schema.h"
#include "api/typecheck.h"
#include "api/table.h"
#include "core/dbuf.h"
#include "core/selector.h"
#include "core/urlpath.h"
#include "registry/explain.h"
#include "registry/registry.h"
#include "server/authz.h"
#include "server/filter.h"
#include "server/metrics.h"
#include "server/tokenrequest.h"
#include "server/extender_route.h"
#include "server/webhook.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_LIST_BYTES ((size_t)1 << 31)
/* How much of a patch (or patched object) a 422 quotes; upstream quotes it whole. */
#define PATCH_VALUE_MAX 1024

typedef struct route {
    const api_kind *kind;
    char ns[256];
    char name[256];
    char sub[64];
    bool watch;
} route;

/* ---- responses ---- */

void resp_json(resp *r, int code, json_t *body)
{
    r->code = code;
    json_decref(r->json);
    r->json = body;
}

void resp_err(resp *r, const api_err *e)
{
    resp_json(r, api_errcode_http(e->code), api_err_status(e));
}

void resp_errf(resp *r, api_errcode code, const char *fmt, ...)
{
    api_err e;
    api_err_init(&e);
    va_list ap;
    va_start(ap, fmt);
    e.code = code;
    vsnprintf(e.message, sizeof e.message, fmt, ap);
    va_end(ap);
    resp_err(r, &e);
    api_err_clear(&e);
}

int64_t now_unix(void)
{
    return (int64_t)time(NULL);
}

void format_time(int64_t t, char *buf, size_t n)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Go's strconv.ParseBool truth values, which upstream uses for query flags. */
bool query_bool(const req *rq, const char *name)
{
    static const char *const truthy[] = {"1", "t", "T", "TRUE", "true", "True"};
    const char *v = rq->query(rq, name);
    for (size_t i = 0; v && i < sizeof truthy / sizeof *truthy; i++)
        if (!strcmp(v, truthy[i])) return true;
    return false;
}

/* Go's strconv.ParseInt(s, 10, 64): an optional sign, then decimal digits,
 * nothing else. Overflow is detected before it happens, never by wrapping. */
static int parse_int64(const char *s, int64_t *out, bool *range)
{
    bool neg = *s == '-';
    if (*s == '-' || *s == '+') s++;
    if (!*s) return -1;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    *range = false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        unsigned d = (unsigned)(*s - '0');
        if (v > (lim - d) / 10) *range = true;
        if (!*range) v = v * 10 + d;
    }
    if (*range) return -1;
    *out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    return 0;
}

int query_int64(const req *rq, const char *name, int64_t *out, api_err *e)
{
    const char *v = rq->query(rq, name);
    bool range = false;
    if (!v) return 0;
    if (parse_int64(v, out, &range) == 0) return 1;
    return api_err_set(e, API_BAD_REQUEST, "strconv.ParseInt: parsing \"%s\": %s", v,
                       range ? "value out of range" : "invalid syntax");
}

/* A resourceVersion: a decimal revision (strconv.ParseUint, as upstream's
 * storage parses it), within int64. */
static int parse_rv(const char *s, int64_t *out, api_err *e)
{
    bool range = false;
    if (*s != '-' && *s != '+' && parse_int64(s, out, &range) == 0) return 0;
    return api_err_set(e, API_BAD_REQUEST,
                       "invalid resource version: strconv.ParseUint: parsing \"%s\": %s", s,
                       range ? "value out of range" : "invalid syntax");
}

static bool wants_table(const req *rq)
{
    return rq->accept && strstr(rq->accept, "as=Table") != NULL;
}

/* Whether one media range of an Accept header is a plain object encoding
 * this server writes (no "as=" conversion such as a Table). */
static bool plain_media_range(const char *r, size_t len)
{
    static const char *const types[] = {"application/json",
                                        "application/yaml",
                                        "application/vnd.kubernetes.protobuf",
                                        "application/*",
                                        "*/*",
                                        NULL};
    while (len && (*r == ' ' || *r == '\t')) {
        r++;
        len--;
    }
    size_t tlen = 0;
    while (tlen < len && r[tlen] != ';' && r[tlen] != ' ' && r[tlen] != '\t')
        tlen++;
    bool known = false;
    for (const char *const *t = types; *t && !known; t++)
        known = strlen(*t) == tlen && !strncasecmp(r, *t, tlen);
    if (!known) return false;
    for (size_t i = tlen; i < len; i++) { /* parameters: none may be as=... */
        if (r[i] != ';') continue;
        size_t j = i + 1;
        while (j < len && (r[j] == ' ' || r[j] == '\t'))
            j++;
        if (j + 3 <= len && !strncmp(r + j, "as=", 3)) return false;
    }
    return true;
}

bool rest_refuse_table(const req *rq, resp *rs)
{
    const char *a = rq->accept;
    if (!a || !*a) return false;
    for (const char *p = a;;) {
        size_t len = strcspn(p, ",");
        if (plain_media_range(p, len)) return false;
        if (!p[len]) break;
        p += len + 1;
    }
    resp_errf(rs, API_NOT_ACCEPTABLE,
              "only the following media types are accepted: application/json, application/yaml, "
              "application/vnd.kubernetes.protobuf");
    return true;
}

static bool is_dry_run(const req *rq)
{
    const char *d = rq->query(rq, "dryRun");
    return d && strcmp(d, "All") == 0;
}

/* ---- routing ---- */

/* Split the raw (still percent-encoded) request path on '/', then decode each
 * segment on its own (core/urlpath), so an encoded '/' or NUL never changes
 * which object a request names. Returns the segment count; -1 when no route
 * can match (404); -2 with a 400 in rs for a malformed escape or a control
 * byte in a segment. */
static int split_path(const char *path, char segs[][URLPATH_SEG_MAX], int max, resp *rs)
{
    int n = 0;
    urlpath_status st = urlpath_split(path, segs, max, &n);
    if (st == URLPATH_OK) return n;
    if (st == URLPATH_NO_ROUTE) return -1;
    resp_errf(rs, API_BAD_REQUEST, "%s", urlpath_message(st));
    return -2;
}

/* Resolve segments after /api/v1 or /apis/G/V. Returns 0, or -1 for 404. */
static int resolve(const char *group, const char *version, char segs[][256], int n, route *rt)
{
    int i = 0;
    if (i < n && strcmp(segs[i], "watch") == 0) {
        rt->watch = true;
        i++;
    }
    if (n - i >= 3 && strcmp(segs[i], "namespaces") == 0) {
        /* namespaces/NAME/{status,finalize} is the namespace's own subresource */
        bool ns_sub =
            n - i == 3 && (!strcmp(segs[i + 2], "status") || !strcmp(segs[i + 2], "finalize"));
        if (!ns_sub) {
            snprintf(rt->ns, sizeof rt->ns, "%s", segs[i + 1]);
            i += 2;
        }
    }
    if (i >= n) return -1;
    rt->kind = api_kind_find(group, version, segs[i]);
    if (!rt->kind) return -1;
    if (rt->ns[0] && !rt->kind->namespaced) return -1;
    if (i + 1 < n) snprintf(rt->name, sizeof rt->name, "%s", segs[i + 1]);
    if (i + 2 < n) snprintf(rt->sub, sizeof rt->sub, "%s", segs[i + 2]);
    if (i + 3 < n) return -1;
    return 0;
}

/* ---- decoding ---- */

static bool is_protobuf(const req *rq)
{
    return rq->content_type && !strncmp(rq->content_type, PB_CONTENT_TYPE, strlen(PB_CONTENT_TYPE));
}

/* The body as JSON, whichever of JSON or Kubernetes protobuf it came in. */
static json_t *parse_body(const req *rq, api_err *e)
{
    if (is_protobuf(rq)) return pb_decode(rq->body, rq->body_len, e);
    json_error_t jerr;
    json_t *obj = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj)
        api_err_set(e, API_BAD_REQUEST, "couldn't get version/kind; json parse error: %s",
                    jerr.text);
    return obj;
}

static json_t *decode_body(const req *rq, const route *rt, bool check_kind, api_err *e)
{
    if (!rq->body || rq->body_len == 0) {
        api_err_set(e, API_BAD_REQUEST, "the request body is empty");
        return NULL;
    }
    json_t *obj = parse_body(rq, e);
    if (!obj) return NULL;
    if (!json_is_object(obj)) {
        api_err_set(
            e, API_BAD_REQUEST,
            "couldn't get version/kind; json parse error: json: cannot unmarshal %s into "
            "Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
            "Kind string \"json:\\\"kind,omitempty\\\"\" }",
            json_is_array(obj) ? "array" : "value");
        json_decref(obj);
        return NULL;
    }
    json_t *meta = json_object_get(obj, "metadata");
    if (meta && !json_is_object(meta)) {
        api_err_set(e, API_BAD_REQUEST,
                    "json: cannot unmarshal %s into Go struct field %s.metadata of type "
                    "v1.ObjectMeta",
                    json_is_string(meta) ? "string" : "value", rt->kind->kind);
        json_decref(obj);
        return NULL;
    }
    if (!check_kind) return obj;
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    char want[128];
    api_kind_api_version(rt->kind, want, sizeof want);
    /* Like upstream's typed decoder, a body without apiVersion/kind takes the
     * endpoint's (client libraries often leave them out). */
    if (!kind || !*kind) {
        kind = rt->kind->kind;
        json_object_set_new(obj, "kind", json_string(kind));
    }
    if (av && *av && strcmp(av, want) != 0) {
        api_err_set(e, API_BAD_REQUEST,
                    "the API version in the data (%s) does not match the expected API version (%s)",
                    av, want);
    } else if (strcmp(kind, rt->kind->kind) != 0) {
        api_err_set(e, API_BAD_REQUEST,
                    "the kind in the data (%s) does not match the expected kind (%s)", kind,
                    rt->kind->kind);
    } else {
        json_object_set_new(obj, "apiVersion", json_string(want));
        return obj;
    }
    json_decref(obj);
    return NULL;
}

/* ---- typed decoding (api/typecheck.h) ---- */

typedef enum { FV_IGNORE, FV_WARN, FV_STRICT } fv_mode;

/* The fieldValidation directive: upstream's default is Warn. `opts` names the
 * options kind upstream validates it in ("CreateOptions", ...). */
static int field_validation(const req *rq, const char *opts, fv_mode *out, api_err *e)
{
    const char *v = rq->query(rq, "fieldValidation");
    *out = FV_WARN;
    if (!v || !*v || !strcmp(v, "Warn")) return 0;
    if (!strcmp(v, "Strict")) {
        *out = FV_STRICT;
        return 0;
    }
    if (!strcmp(v, "Ignore")) {
        *out = FV_IGNORE;
        return 0;
    }
    json_t *causes = json_array();
    ferr_add_str(causes, FERR_NOT_SUPPORTED, "fieldValidation", v,
                 "supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"");
    return api_err_invalid(e, "meta.k8s.io", opts, "", causes);
}

int rest_field_validation(const req *rq, const char *opts, bool *strict, api_err *e)
{
    fv_mode fv;
    if (field_validation(rq, opts, &fv, e) != 0) return -1;
    *strict = fv == FV_STRICT;
    return 0;
}

int rest_field_manager(const req *rq, const char *opts, char *buf, size_t n, api_err *e)
{
    const char *m = rq->query(rq, "fieldManager");
    if (!m || !*m) {
        fm_manager_from_user_agent(rq->user_agent, buf, n);
        return 0;
    }
    json_t *causes = json_array();
    fm_manager_check(m, "fieldManager", causes);
    if (json_array_size(causes)) return api_err_invalid(e, "meta.k8s.io", opts, "", causes);
    json_decref(causes);
    snprintf(buf, n, "%s", m);
    return 0;
}

static void warn_unknown(json_t **warnings, const json_t *unknown)
{
    size_t i;
    json_t *p;
    if (!*warnings) *warnings = json_array();
    json_array_foreach(unknown, i, p) json_array_append_new(
        *warnings, json_sprintf("unknown field \"%s\"", json_string_value(p)));
}

/* Decode a request body as the route's kind, in place: wrong types are
 * upstream's 400 "<Kind> in version ... cannot be handled as a <Kind>", unknown
 * fields are pruned and, by fieldValidation, refused the same way or warned. */
static int typed_body(const route *rt, json_t *obj, fv_mode fv, json_t **warnings, api_err *e)
{
    tc_result r;
    char strict[1024];
    int rc = api_kind_decode(rt->kind, obj, TC_JSON, &r);
    const char *why = r.error;
    if (rc == 0 && r.unknown && fv == FV_STRICT) {
        tc_strict_error(r.unknown, strict, sizeof strict);
        why = strict;
        rc = -1;
    } else if (rc == 0 && r.unknown && fv == FV_WARN) {
        warn_unknown(warnings, r.unknown);
    }
    if (rc != 0)
        api_err_set(e, API_BAD_REQUEST, "%s in version \"%s\" cannot be handled as a %s: %s",
                    rt->kind->kind, rt->kind->version, rt->kind->kind, why);
    tc_result_clear(&r);
    return rc;
}

int rest_typed_object(const api_kind *k, json_t *obj, json_t **warnings, api_err *e)
{
    route rt = {.kind = k};
    return typed_body(&rt, obj, FV_WARN, warnings, e);
}

/* Whether an unknown-field path also names a member of the stored object:
 * then the client did not write it (older data), and it is pruned quietly. */
static bool stored_has(const json_t *cur, const char *path)
{
    char seg[256];
    const json_t *v = cur;
    const char *p = path;
    while (v && *p) {
        if (*p == '.') p++;
        if (*p == '[') {
            char *end;
            unsigned long i = strtoul(p + 1, &end, 10);
            if (*end != ']') return false;
            v = json_array_get(v, i);
            p = end + 1;
            continue;
        }
        size_t len = strcspn(p, ".[");
        if (len >= sizeof seg) return false;
        memcpy(seg, p, len);
        seg[len] = '\0';
        v = json_object_get(v, seg);
        p += len;
    }
    return v != NULL;
}

static bool is_strategic(const char *content_type)
{
    return content_type && !strncmp(content_type, PATCH_CT_STRATEGIC, strlen(PATCH_CT_STRATEGIC));
}

/* The 422 upstream answers for a patch whose result does not decode: field
 * "patch", whose value is the patched object as JSON, or for a strategic
 * patch the patch as Go prints a map (both shortened, see
 * docs/decisions.md), and the reason. */
static int patch_invalid(const req *rq, const json_t *obj, const char *why, api_err *e)
{
    char *text = NULL;
    if (is_strategic(rq->content_type)) {
        json_t *p = json_loadb(rq->body, rq->body_len, 0, NULL);
        text = p ? tc_go_value(p, PATCH_VALUE_MAX + 1) : NULL;
        json_decref(p);
    } else {
        text = jdump(obj, NULL);
    }
    char shown[PATCH_VALUE_MAX + 4];
    snprintf(shown, sizeof shown, "%.*s%s", PATCH_VALUE_MAX, text ? text : "",
             text && strlen(text) > PATCH_VALUE_MAX ? "..." : "");
    free(text);
    json_t *causes = json_array();
    ferr_add_str(causes, FERR_INVALID, "patch", shown, why);
    return api_err_invalid(e, "", "", "", causes);
}

/* A patched object decoded as its kind: a wrong type, or (Strict) unknown
 * fields the patch added, is upstream's 422 on field "patch"; with Warn the
 * unknown fields are warned. apiVersion and kind may not change. */
static int typed_patch_result(const req *rq, const api_kind *k, const json_t *cur, json_t *obj,
                              fv_mode fv, json_t **warnings, api_err *e)
{
    char want[128], why[1024];
    api_kind_api_version(k, want, sizeof want);
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    why[0] = '\0';
    if (!av || strcmp(av, want) != 0)
        snprintf(why, sizeof why,
                 "the API version in the data (%s) does not match the expected API version (%s)",
                 av ? av : "", want);
    else if (!kind || strcmp(kind, k->kind) != 0)
        snprintf(why, sizeof why, "the kind in the data (%s) does not match the expected kind (%s)",
                 kind ? kind : "", k->kind);
    if (why[0]) return patch_invalid(rq, obj, why, e);
    tc_result r = {0};
    tc_mode mode = is_strategic(rq->content_type) ? TC_UNSTRUCTURED : TC_JSON;
    if (api_kind_decode(k, obj, mode, &r) != 0) {
        snprintf(why, sizeof why, "%s", r.error);
        tc_result_clear(&r);
        return patch_invalid(rq, obj, why, e);
    }
    json_t *added = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(r.unknown, i, p) if (!stored_has(cur, json_string_value(p)))
        json_array_append(added, p);
    tc_result_clear(&r);
    int rc = 0;
    if (json_array_size(added) && fv == FV_STRICT) {
        tc_strict_error(added, why, sizeof why);
        rc = patch_invalid(rq, obj, why, e);
    } else if (json_array_size(added) && fv == FV_WARN) {
        warn_unknown(warnings, added);
    }
    json_decref(added);
    return rc;
}

static bool json_content(const req *rq)
{
    const char *ct = rq->content_type;
    return !ct || !*ct || strncmp(ct, "application/json", 16) == 0 || is_protobuf(rq);
}

static void unsupported_media(resp *rs, const req *rq)
{
    resp_errf(rs, API_UNSUPPORTED_MEDIA,
              "the body of the request was in an unknown format - accepted media types include: "
              "application/json, application/yaml, application/vnd.kubernetes.protobuf, "
              "application/cbor");
}

/* ---- object responses ---- */

static void respond_object(const req *rq, resp *rs, const route *rt, int code, json_t *obj);

/* The same for an object just written: sent as the text the store made of
 * it (stored, a reference taken over; NULL when there is none), not
 * serialised a second time. */
static void respond_written(const req *rq, resp *rs, const route *rt, int code, json_t *obj,
                            store_obj *stored)
{
    if (!stored || wants_table(rq)) {
        store_obj_unref(stored);
        respond_object(rq, rs, rt, code, obj);
        return;
    }
    resp_json(rs, code, obj); /* (kept for the audit log) */
    store_obj_unref(rs->stored);
    rs->stored = stored;
}

static void respond_object(const req *rq, resp *rs, const route *rt, int code, json_t *obj)
{
    if (wants_table(rq)) {
        json_t *items = json_array();
        json_array_append_new(items, obj);
        json_t *tbl =
            table_build(rt->kind, items, rq->query(rq, "includeObject"), now_unix(), NULL);
        json_decref(items);
        resp_json(rs, code, tbl);
        return;
    }
    resp_json(rs, code, obj);
}

static void do_get(req *rq, resp *rs, const route *rt)
{
    api_err e;
    api_err_init(&e);
    json_t *obj = reg_get(rq->srv->st, rt->kind, rt->ns, rt->name, &e);
    if (!obj) {
        resp_err(rs, &e);
        api_err_clear(&e);
        return;
    }
    respond_object(rq, rs, rt, 200, obj);
}

/* ---- list ---- */

static void list_prefix(const route *rt, char *buf, size_t n)
{
    char res[256];
    api_kind_store_resource(rt->kind, res, sizeof res);
    if (rt->kind->namespaced && rt->ns[0])
        snprintf(buf, n, "%s/%s/", res, rt->ns);
    else
        snprintf(buf, n, "%s/", res);
}

/* A stored object's JSON into a list: as stored, or for a kind whose reads
 * rewrite it (another stored version, defaults on read), as served. */
static int add_object_text(dbuf *b, const api_kind *k, const store_obj *o)
{
    if (!api_kind_rewrites_reads(k)) return dbuf_add(b, o->json, o->len);
    json_t *obj = store_obj_parse(o);
    if (!obj) return -1;
    api_kind_to_version(k, obj);
    char *text = jdump(obj, NULL);
    json_decref(obj);
    int rc = text ? dbuf_adds(b, text) : -1;
    free(text);
    return rc;
}

/* Continue tokens are opaque to clients: "<rv>:<last key>". */
static int parse_continue(const char *tok, const char *prefix, char *after, size_t n, api_err *e)
{
    const char *colon = strchr(tok, ':');
    if (!colon || strncmp(colon + 1, prefix, strlen(prefix)) != 0)
        return api_err_set(e, API_BAD_REQUEST, "continue key is not valid: invalid continue token");
    snprintf(after, n, "%s", colon + 1);
    return 0;
}

/* resourceVersion on a list: allot serves the current state, which satisfies
 * "not older than" any revision it has reached. A revision it has not reached
 * is upstream's 504; an exact revision other than the current one is a 410, as
 * if etcd had compacted it (no historical snapshots are kept). */
static int check_list_rv(const req *rq, int64_t current, api_err *e)
{
    const char *rvs = rq->query(rq, "resourceVersion");
    const char *match = rq->query(rq, "resourceVersionMatch");
    if (!rvs || !*rvs) return 0;
    int64_t rv;
    if (parse_rv(rvs, &rv, e) != 0) return -1;
    if (rv > current)
        return api_err_set(e, API_TIMEOUT, "Too large resource version: %lld, current: %lld",
                           (long long)rv, (long long)current);
    if (match && !strcmp(match, "Exact") && rv != current)
        return api_err_set(e, API_GONE, "too old resource version: %lld (%lld)", (long long)rv,
                           (long long)current);
    return 0;
}

static void do_list(req *rq, resp *rs, const route *rt)
{
    api_err e;
    api_err_init(&e);
    list_filter f;
    char prefix[600], after[800] = "";
    list_prefix(rt, prefix, sizeof prefix);
    if (filter_parse(rq, rt->kind, &f, &e) != 0) goto fail;
    const char *cont = rq->query(rq, "continue");
    if (cont && *cont && parse_continue(cont, prefix, after, sizeof after, &e) != 0) goto fail;
    int64_t limit = 0;
    if (query_int64(rq, "limit", &limit, &e) < 0) goto fail;
    if (limit < 0) limit = 0; /* as upstream: no limit */
    if ((uint64_t)limit > SIZE_MAX) limit = 0;

    if (check_list_rv(rq, store_revision(rq->srv->st), &e) != 0) goto fail;
    store_obj **objs = NULL;
    size_t n = 0;
    int64_t rev = 0;
    bool more = false;
    /* Selectors filter after the store's page: fetch everything matching the prefix
     * when filtering, and cut the page here. */
    bool filtering = f.labels || f.fields;
    if (store_list(rq->srv->st, prefix, after[0] ? after : NULL, filtering ? 0 : (size_t)limit,
                   &objs, &n, &rev, &more) != 0) {
        api_err_set(&e, API_INTERNAL, "list failed");
        goto fail;
    }
    size_t kept = 0;
    const char *last_key = NULL;
    for (size_t i = 0; i < n; i++) {
        if (filtering && (!filter_match(&f, objs[i]) || (limit && kept == (size_t)limit))) {
            if (limit && kept == (size_t)limit && filter_match(&f, objs[i])) more = true;
            store_obj_unref(objs[i]);
            continue;
        }
        objs[kept++] = objs[i];
        last_key = objs[i]->key;
    }
    char contbuf[900] = "";
    if (more && last_key) snprintf(contbuf, sizeof contbuf, "%lld:%s", (long long)rev, last_key);
    /* what is kept ahead of the store (a quota's usage) rendered, not written */
    reg_read_views(rq->srv->st, rt->kind, objs, kept);

    char av[128], list_kind[300];
    api_kind_api_version(rt->kind, av, sizeof av);
    api_kind_list_kind(rt->kind, list_kind, sizeof list_kind);
    if (wants_table(rq)) {
        json_t *items = json_array();
        for (size_t i = 0; i < kept; i++) {
            json_t *o = store_obj_parse(objs[i]);
            if (o) api_kind_to_version(rt->kind, o);
            json_array_append_new(items, o);
        }
        char rvs[32];
        snprintf(rvs, sizeof rvs, "%lld", (long long)rev);
        json_t *lm = json_pack("{s:s}", "resourceVersion", rvs);
        if (contbuf[0]) json_object_set_new(lm, "continue", json_string(contbuf));
        resp_json(rs, 200,
                  table_build(rt->kind, items, rq->query(rq, "includeObject"), now_unix(), lm));
        json_decref(items);
        json_decref(lm);
    } else {
        /* Fast path: splice the stored JSON; nothing is parsed. */
        dbuf b;
        dbuf_init(&b, MAX_LIST_BYTES);
        int rc = dbuf_printf(&b,
                             "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{"
                             "\"resourceVersion\":\"%lld\"",
                             list_kind, av, (long long)rev);
        if (contbuf[0]) rc |= dbuf_printf(&b, ",\"continue\":\"%s\"", contbuf);
        rc |= dbuf_adds(&b, "},\"items\":[");
        for (size_t i = 0; i < kept; i++) {
            if (i) rc |= dbuf_add(&b, ",", 1);
            rc |= add_object_text(&b, rt->kind, objs[i]);
        }
        rc |= dbuf_adds(&b, "]}");
        if (rc != 0) {
            dbuf_free(&b);
            api_err_set(&e, API_INTERNAL, "list too large");
        } else {
            rs->code = 200;
            rs->raw = dbuf_take(&b, &rs->raw_len);
        }
    }
    for (size_t i = 0; i < kept; i++)
        store_obj_unref(objs[i]);
    free(objs);
    filter_free(&f);
    if (e.code) resp_err(rs, &e);
    api_err_clear(&e);
    return;
fail:
    filter_free(&f);
    resp_err(rs, &e);
    api_err_clear(&e);
}

/* ---- create ---- */

static void do_binding(req *rq, resp *rs, const route *rt);

/* ---- dry runs explain themselves (registry/explain.h) ---- */

#define DRY_RUN_WARNINGS_MAX 10

/* A dry run says what it met in quota: a warning per quota, pool or custom
 * quota that applies, with the usage before and after, so that
 * `kubectl create|apply|replace --dry-run=server` shows it (kubectl prints
 * warnings, on a denial too). */
void rest_explain_warnings(reg_explain *x, int rc, const api_err *e, json_t **warnings)
{
    json_t *st = reg_explain_end(x, rc, e);
    if (json_array_size(json_object_get(st, "quotas")) && (*warnings || (*warnings = json_array())))
        reg_explain_warnings(st, DRY_RUN_WARNINGS_MAX, *warnings);
    json_decref(st);
}

static int explained_create(const req *rq, const route *rt, const json_t *obj, const reg_writer *w,
                            json_t **out, json_t **warnings, api_err *e)
{
    reg_explain *x = reg_explain_begin();
    int rc = reg_create_as(rq->srv->st, rt->kind, rt->ns, obj, w, true, out, e);
    rest_explain_warnings(x, rc, e, warnings);
    return rc;
}

static void do_create(req *rq, resp *rs, const route *rt)
{
    api_err e;
    api_err_init(&e);
    if (rt->sub[0]) {
        bool binding = !strcmp(rt->sub, "binding") && (rt->kind->subresources & API_SUB_BINDING);
        bool token =
            !strcmp(rt->sub, "token") && (rt->kind->subresources & API_SUB_TOKEN) && rt->ns[0];
        if (!binding && !token) {
            resp_errf(rs, API_METHOD_NOT_ALLOWED,
                      "the server does not allow this method on the requested resource");
            return;
        }
        if (rest_refuse_table(rq, rs)) return; /* neither converts to a Table */
        if (!json_content(rq)) return unsupported_media(rs, rq);
        return binding ? do_binding(rq, rs, rt) : tokenreq_create(rq, rs, rt->ns, rt->name);
    }
    if (!json_content(rq)) return unsupported_media(rs, rq);
    if (rt->name[0]) {
        resp_errf(rs, API_METHOD_NOT_ALLOWED,
                  "the server does not allow this method on the requested resource");
        return;
    }
    fv_mode fv;
    json_t *obj = NULL, *out = NULL, *warnings = NULL;
    bool dry_run = is_dry_run(rq);
    char manager[FM_MANAGER_MAX + 1];
    store_obj *stored = NULL;
    reg_writer w = {manager, false, &stored};
    if (field_validation(rq, "CreateOptions", &fv, &e) != 0 ||
        rest_field_manager(rq, "CreateOptions", manager, sizeof manager, &e) != 0 ||
        !(obj = decode_body(rq, rt, true, &e)) || typed_body(rt, obj, fv, &warnings, &e) != 0 ||
        authz_check_write(rq, rt->kind, rt->ns, obj, &e) != 0 ||
        (dry_run ? explained_create(rq, rt, obj, &w, &out, &warnings, &e)
                 : reg_create_as(rq->srv->st, rt->kind, rt->ns, obj, &w, false, &out, &e)) != 0) {
        json_decref(obj);
        rs->warnings = warnings;
        resp_err(rs, &e);
        api_err_clear(&e);
        return;
    }
    json_decref(obj);
    rs->warnings = warnings;
    if (rt->kind->warnings_on_create && (rs->warnings || (rs->warnings = json_array())))
        rt->kind->warnings_on_create(out, rs->warnings);
    respond_written(rq, rs, rt, 201, out, stored);
}

/* ---- scale subresource (autoscaling/v1 Scale) ---- */

static void selector_string(const json_t *sel, char *buf, size_t n)
{
    /* matchLabels as a label selector string; kinds with a bare map (RC) too. */
    const json_t *ml = json_object_get(sel, "matchLabels");
    if (!ml && json_is_object(sel) && !json_object_get(sel, "matchExpressions")) ml = sel;
    size_t off = 0;
    buf[0] = '\0';
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)ml, k, v)
    {
        int w = snprintf(buf + off, n - off, "%s%s=%s", off ? "," : "", k,
                         json_is_string(v) ? json_string_value(v) : "");
        if (w < 0 || (size_t)w >= n - off) break;
        off += (size_t)w;
    }
}

/* Where a kind's scale reads and writes (api/kinds.h: a CRD's paths, or
 * spec.replicas, status.replicas and spec.selector). */
static const char *spec_replicas_path(const api_kind *k)
{
    return k->scale ? k->scale->spec_replicas : "spec.replicas";
}

json_t *rest_scale_of(const api_kind *k, const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    char sel[1024];
    if (k->scale)
        snprintf(sel, sizeof sel, "%s",
                 k->scale->label_selector
                     ? json_string_value(api_json_path(obj, k->scale->label_selector)) ?: ""
                     : "");
    else
        selector_string(api_json_path(obj, "spec.selector"), sel, sizeof sel);
    json_t *m = json_object();
    const char *keep[] = {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"};
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) {
        json_t *v = json_object_get(meta, keep[i]);
        if (v) json_object_set(m, keep[i], v);
    }
    json_t *replicas = api_json_path(obj, spec_replicas_path(k));
    json_t *st_replicas =
        api_json_path(obj, k->scale ? k->scale->status_replicas : "status.replicas");
    return json_pack("{s:s, s:s, s:o, s:{s:I}, s:{s:I, s:s}}", "kind", "Scale", "apiVersion",
                     "autoscaling/v1", "metadata", m, "spec", "replicas",
                     (json_int_t)json_integer_value(replicas), "status", "replicas",
                     (json_int_t)json_integer_value(st_replicas), "selector", sel);
}

typedef struct scale_ctx {
    const req *rq;
    const api_kind *kind;
    json_t *body; /* PUT: the new Scale */
} scale_ctx;

/* obj's member at a dotted path set to v, creating the objects on the way. */
static int set_path(json_t *obj, const char *dotted, json_t *v)
{
    char seg[256];
    for (;;) {
        const char *dot = strchr(dotted, '.');
        size_t len = dot ? (size_t)(dot - dotted) : strlen(dotted);
        if (len >= sizeof seg || !json_is_object(obj)) return -1;
        memcpy(seg, dotted, len);
        seg[len] = '\0';
        if (!dot) return json_object_set(obj, seg, v);
        json_t *next = json_object_get(obj, seg);
        if (!json_is_object(next) && json_object_set_new(obj, seg, next = json_object()) != 0)
            return -1;
        obj = next;
        dotted = dot + 1;
    }
}

static json_t *mutate_scale(const json_t *cur, void *ctx, api_err *e)
{
    scale_ctx *sc = ctx;
    json_t *scale = rest_scale_of(sc->kind, cur), *want;
    if (sc->body)
        want = json_incref(sc->body);
    else
        want = patch_apply(sc->rq->content_type, scale, sc->rq->body, sc->rq->body_len, "Scale", e);
    json_decref(scale);
    if (!want) return NULL;
    json_t *replicas = json_object_get(json_object_get(want, "spec"), "replicas");
    const char *rv =
        json_string_value(json_object_get(json_object_get(want, "metadata"), "resourceVersion"));
    if (!json_is_integer(replicas) || json_integer_value(replicas) < 0) {
        json_t *causes = json_array();
        ferr_add(causes, FERR_INVALID, "spec.replicas", replicas,
                 "must be greater than or equal to 0");
        const char *name =
            json_string_value(json_object_get(json_object_get(cur, "metadata"), "name"));
        api_err_invalid(e, "autoscaling", "Scale", name, causes);
        json_decref(want);
        return NULL;
    }
    json_t *nw = jcopy(cur);
    if (!nw || set_path(nw, spec_replicas_path(sc->kind), replicas) != 0) {
        json_decref(nw);
        json_decref(want);
        api_err_set(e, API_INTERNAL, "cannot set the replicas");
        return NULL;
    }
    if (rv && *rv)
        json_object_set_new(json_object_get(nw, "metadata"), "resourceVersion", json_string(rv));
    json_decref(want);
    return nw;
}

static void do_scale(req *rq, resp *rs, const route *rt, bool write, bool patch)
{
    api_err e;
    api_err_init(&e);
    json_t *out = NULL;
    int rc;
    if (!write) {
        out = reg_get(rq->srv->st, rt->kind, rt->ns, rt->name, &e);
        rc = out ? 0 : -1;
    } else {
        scale_ctx sc = {rq, rt->kind, NULL};
        char manager[FM_MANAGER_MAX + 1];
        reg_writer w = {manager, false};
        if (rest_field_manager(rq, patch ? "PatchOptions" : "UpdateOptions", manager,
                               sizeof manager, &e) != 0 ||
            (!patch && !(sc.body = decode_body(rq, rt, false, &e)))) {
            resp_err(rs, &e);
            api_err_clear(&e);
            return;
        }
        rc = reg_update_as(rq->srv->st, rt->kind, rt->ns, rt->name, "scale", mutate_scale, &sc, &w,
                           is_dry_run(rq), &out, NULL, &e);
        json_decref(sc.body);
    }
    if (rc != 0) {
        resp_err(rs, &e);
        api_err_clear(&e);
        return;
    }
    resp_json(rs, 200, rest_scale_of(rt->kind, out));
    json_decref(out);
}

/* ---- update and patch ---- */

json_t *rest_replace(const json_t *cur, void *ctx, api_err *e)
{
    return jcopy(ctx);
}

typedef struct patch_ctx {
    const req *rq;
    const api_kind *kind;
    const char *ns;
    fv_mode fv;
    json_t *warnings; /* of the last run (a mutation may run twice) */
} patch_ctx;

static json_t *mutate_patch(const json_t *cur, void *ctx, api_err *e)
{
    patch_ctx *pc = ctx;
    json_t *nw =
        patch_apply(pc->rq->content_type, cur, pc->rq->body, pc->rq->body_len, pc->kind->kind, e);
    json_decref(pc->warnings);
    pc->warnings = NULL;
    if (nw && (typed_patch_result(pc->rq, pc->kind, cur, nw, pc->fv, &pc->warnings, e) != 0 ||
               authz_check_write(pc->rq, pc->kind, pc->ns, nw, e) != 0)) {
        json_decref(nw);
        return NULL;
    }
    return nw;
}

static bool query_present(const req *rq, const char *name)
{
    return rq->query(rq, name) != NULL;
}

/* upstream's 422 on an options kind: "PatchOptions.meta.k8s.io \"\" is
 * invalid: force: Forbidden: ..." */
static int forbid(api_err *e, const char *opts, const char *field, const char *why)
{
    json_t *causes = json_array();
    ferr_add(causes, FERR_FORBIDDEN, field, NULL, why);
    return api_err_invalid(e, "meta.k8s.io", opts, "", causes);
}

static bool sub_allowed(const route *rt)
{
    if (!rt->sub[0]) return true;
    if (!strcmp(rt->sub, "status")) return rt->kind->subresources & API_SUB_STATUS;
    if (!strcmp(rt->sub, "resize")) return rt->kind->subresources & API_SUB_RESIZE;
    return false;
}

static void do_update(req *rq, resp *rs, const route *rt, bool patch)
{
    api_err e;
    api_err_init(&e);
    if (!rt->name[0] || !sub_allowed(rt)) {
        resp_errf(rs, API_METHOD_NOT_ALLOWED,
                  "the server does not allow this method on the requested resource");
        return;
    }
    json_t *body = NULL, *out = NULL, *warnings = NULL;
    fv_mode fv;
    int rc;
    bool dry_run = is_dry_run(rq);
    const char *opts = patch ? "PatchOptions" : "UpdateOptions";
    char manager[FM_MANAGER_MAX + 1];
    store_obj *stored = NULL;
    reg_writer w = {manager, false, &stored};
    if (patch && patch_is_apply(rq->content_type))
        return rest_apply(rq, rs, rt->kind, rt->ns, rt->name, rt->sub);
    if (field_validation(rq, opts, &fv, &e) != 0 ||
        rest_field_manager(rq, opts, manager, sizeof manager, &e) != 0 ||
        (patch && query_present(rq, "force") &&
         forbid(&e, opts, "force", "may not be specified for non-apply patch") != 0)) {
        resp_err(rs, &e);
        api_err_clear(&e);
        return;
    }
    if (patch) {
        if (is_strategic(rq->content_type) && (rt->kind->flags & API_KIND_NO_STRATEGIC)) {
            /* upstream's list for custom resources, which have no Go types */
            resp_errf(rs, API_UNSUPPORTED_MEDIA,
                      "the body of the request was in an unknown format - accepted media types "
                      "include: application/json-patch+json, application/merge-patch+json, "
                      "application/apply-patch+yaml");
            return;
        }
        if (patch_check_type(rq->content_type, &e) != 0) {
            resp_err(rs, &e);
            api_err_clear(&e);
            return;
        }
        patch_ctx pc = {rq, rt->kind, rt->ns, fv, NULL};
        reg_explain *x = dry_run ? reg_explain_begin() : NULL;
        rc = reg_update_as(rq->srv->st, rt->kind, rt->ns, rt->name, rt->sub, mutate_patch, &pc, &w,
                           dry_run, &out, NULL, &e);
        warnings = pc.warnings;
        if (x) rest_explain_warnings(x, rc, &e, &warnings);
    } else {
        if (!json_content(rq)) return unsupported_media(rs, rq);
        body = decode_body(rq, rt, true, &e);
        rc = body && typed_body(rt, body, fv, &warnings, &e) == 0 &&
                     authz_check_write(rq, rt->kind, rt->ns, body, &e) == 0
                 ? 0
                 : -1;
        reg_explain *x = rc == 0 && dry_run ? reg_explain_begin() : NULL;
        if (rc == 0)
            rc = reg_update_as(rq->srv->st, rt->kind, rt->ns, rt->name, rt->sub, rest_replace, body,
                               &w, dry_run, &out, NULL, &e);
        if (x) rest_explain_warnings(x, rc, &e, &warnings);
    }
    json_decref(body);
    if (rc != 0) {
        store_obj_unref(stored);
        rs->warnings = warnings;
        resp_err(rs, &e);
        api_err_clear(&e);
        return;
    }
    rs->warnings = warnings;
    respond_written(rq, rs, rt, 200, out, stored);
}

/* ---- pods/binding ---- */

static void do_binding(req *rq, resp *rs, const route *rt)
{
    api_err e;
    api_err_init(&e);
    json_t *b = rq->body ? parse_body(rq, &e) : NULL;
    api_err_clear(&e);
    const char *node = json_string_value(json_object_get(json_object_get(b, "target"), "name"));
    if (!b || !node || !*node) {
        json_t *causes = json_array();
        ferr_add(causes, FERR_REQUIRED, "target.name", NULL, NULL);
        api_err_invalid(&e, "", "Binding", rt->name, causes);
    } else {
        if (reg_bind(rq->srv->st, rt->ns, rt->name, node, is_dry_run(rq), NULL, &e) == 0) {
            json_decref(b);
            resp_json(rs, 201, api_status_success(NULL, NULL, NULL));
            return;
        }
    }
    json_decref(b);
    resp_err(rs, &e);
    api_err_clear(&e);
}

/* ---- delete ---- */

static int delete_opts(const req *rq, reg_delete_opts *o, json_t **hold, api_err *e)
{
    *o = (reg_delete_opts){is_dry_run(rq), -1, NULL, NULL, NULL};
    *hold = NULL;
    const char *p = rq->query(rq, "propagationPolicy");
    int64_t g;
    int has_g = query_int64(rq, "gracePeriodSeconds", &g, e);
    if (has_g < 0) return -1;
    if (has_g) o->grace_seconds = g;
    if (p) o->propagation = p;
    if (rq->body && rq->body_len) {
        json_t *b = parse_body(rq, e);
        if (!json_is_object(b)) {
            json_decref(b);
            if (!e->code) api_err_set(e, API_BAD_REQUEST, "couldn't decode DeleteOptions");
            return -1;
        }
        *hold = b;
        json_t *v;
        if ((v = json_object_get(b, "gracePeriodSeconds")) && json_is_integer(v))
            o->grace_seconds = json_integer_value(v);
        if ((v = json_object_get(b, "propagationPolicy")) && json_is_string(v))
            o->propagation = json_string_value(v);
        json_t *pre = json_object_get(b, "preconditions");
        o->pre_uid = json_string_value(json_object_get(pre, "uid"));
        o->pre_rv = json_string_value(json_object_get(pre, "resourceVersion"));
        json_t *dr = json_object_get(b, "dryRun");
        if (json_is_array(dr) && json_array_size(dr) &&
            !strcmp(json_string_value(json_array_get(dr, 0)) ?: "", "All"))
            o->dry_run = true;
    }
    if (o->propagation && strcmp(o->propagation, "Orphan") &&
        strcmp(o->propagation, "Background") && strcmp(o->propagation, "Foreground")) {
        json_t *causes = json_array();
        ferr_add_str(causes, FERR_NOT_SUPPORTED, "propagationPolicy", o->propagation,
                     "supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"");
        api_err_invalid(e, "meta.k8s.io", "DeleteOptions", "", causes);
        return -1;
    }
    return 0;
}

/* Upstream returns the object for kinds with graceful deletion, a Status otherwise. */
static bool returns_object(const api_kind *k)
{
    return k->flags & API_KIND_DELETE_RETURNS_OBJECT;
}

static void do_delete(req *rq, resp *rs, const route *rt)
{
    api_err e;
    api_err_init(&e);
    reg_delete_opts o;
    json_t *hold = NULL, *out = NULL;
    bool gone = false;
    if (rt->sub[0]) {
        resp_errf(rs, API_METHOD_NOT_ALLOWED,
                  "the server does not allow this method on the requested resource");
        return;
    }
    if (delete_opts(rq, &o, &hold, &e) != 0 ||
        reg_delete(rq->srv->st, rt->kind, rt->ns, rt->name, &o, &out, &gone, &e) != 0) {
        json_decref(hold);
        resp_err(rs, &e);
        api_err_clear(&e);
        return;
    }
    json_decref(hold);
    if (returns_object(rt->kind) || !gone) {
        respond_object(rq, rs, rt, 200, out);
        return;
    }
    json_t *st = api_status_success(rt->name, rt->kind->group, rt->kind->resource);
    json_t *uid = json_object_get(json_object_get(out, "metadata"), "uid");
    if (uid) json_object_set(json_object_get(st, "details"), "uid", uid);
    json_decref(out);
    resp_json(rs, 200, st);
}

static void do_delete_collection(req *rq, resp *rs, const route *rt)
{
    api_err e;
    api_err_init(&e);
    list_filter f;
    reg_delete_opts o;
    json_t *hold = NULL;
    char prefix[600];
    list_prefix(rt, prefix, sizeof prefix);
    if (filter_parse(rq, rt->kind, &f, &e) != 0 || delete_opts(rq, &o, &hold, &e) != 0) {
        filter_free(&f);
        json_decref(hold);
        resp_err(rs, &e);
        api_err_clear(&e);
        return;
    }
    store_obj **objs = NULL;
    size_t n = 0;
    store_list(rq->srv->st, prefix, NULL, 0, &objs, &n, NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        if (filter_match(&f, objs[i])) {
            json_t *out = NULL;
            bool gone;
            api_err_clear(&e);
            if (reg_delete(rq->srv->st, rt->kind, objs[i]->ns, objs[i]->name, &o, &out, &gone,
                           &e) == 0)
                json_decref(out);
        }
        store_obj_unref(objs[i]);
    }
    free(objs);
    filter_free(&f);
    json_decref(hold);
    api_err_clear(&e);
    resp_json(rs, 200, api_status_success(NULL, NULL, NULL));
}

/* ---- discovery, OpenAPI, version ---- */

/* Discovery, OpenAPI and version paths (non-resource requests). */
static bool is_meta(char segs[][256], int n)
{
    return (n >= 1 && n <= 2 && !strcmp(segs[0], "api")) ||
           (n >= 1 && n <= 3 && !strcmp(segs[0], "apis")) ||
           (n == 1 && !strcmp(segs[0], "version")) || (n >= 2 && !strcmp(segs[0], "openapi"));
}

static bool serve_meta(req *rq, resp *rs, char segs[][256], int n)
{
    const char *accept = rq->accept ? rq->accept : "";
    bool aggregated = strstr(accept, "as=APIGroupDiscoveryList") != NULL;
    if (n == 1 && (!strcmp(segs[0], "api") || !strcmp(segs[0], "apis"))) {
        bool core = !strcmp(segs[0], "api");
        if (aggregated) {
            resp_json(rs, 200, disc_aggregated(core));
            rs->content_type = DISC_AGGREGATED_CONTENT_TYPE;
        } else {
            resp_json(rs, 200, core ? disc_core_versions(rq->srv->address) : disc_group_list());
        }
        return true;
    }
    if (n == 2 && !strcmp(segs[0], "api") && !strcmp(segs[1], "v1")) {
        resp_json(rs, 200, disc_resource_list("", "v1"));
        return true;
    }
    if (n == 2 && !strcmp(segs[0], "apis")) {
        json_t *g = disc_group(segs[1]);
        if (!g) return false;
        resp_json(rs, 200, g);
        return true;
    }
    if (n == 3 && !strcmp(segs[0], "apis")) {
        json_t *l = disc_resource_list(segs[1], segs[2]);
        if (!l) return false;
        resp_json(rs, 200, l);
        return true;
    }
    if (n == 1 && !strcmp(segs[0], "version")) {
        resp_json(rs, 200, disc_version());
        return true;
    }
    if (n == 2 && !strcmp(segs[0], "openapi") && !strcmp(segs[1], "v2")) {
        /* client-go asks for v2 only as protobuf: a document without
         * definitions (api/openapi.h says when kubectl reads it). */
        if (*accept && !strstr(accept, "json") && !strstr(accept, "*/*")) {
            if (!strstr(accept, OPENAPI_V2_PB_CONTENT_TYPE) &&
                !strstr(accept, OPENAPI_V2_PB_RESPONSE_TYPE)) {
                resp_errf(rs, API_NOT_ACCEPTABLE,
                          "only the following media types are accepted: "
                          "application/json, " OPENAPI_V2_PB_CONTENT_TYPE);
                return true;
            }
            rs->raw = (char *)openapi_v2_pb(&rs->raw_len);
            if (!rs->raw) {
                resp_errf(rs, API_INTERNAL, "the OpenAPI document could not be encoded");
                return true;
            }
            rs->code = 200;
            rs->content_type = OPENAPI_V2_PB_RESPONSE_TYPE;
            return true;
        }
        resp_json(rs, 200, openapi_v2());
        return true;
    }
    if (n >= 2 && !strcmp(segs[0], "openapi") && !strcmp(segs[1], "v3")) {
        json_t *doc = NULL;
        if (n == 2)
            doc = openapi_v3_root();
        else if (n == 4 && !strcmp(segs[2], "api"))
            doc = openapi_v3_group_version("", segs[3]);
        else if (n == 5 && !strcmp(segs[2], "apis"))
            doc = openapi_v3_group_version(segs[3], segs[4]);
        if (!doc) return false;
        resp_json(rs, 200, doc);
        return true;
    }
    return false;
}

static void not_found(resp *rs)
{
    resp_errf(rs, API_NOT_FOUND, "the server could not find the requested resource");
    json_t *st = rs->json;
    json_object_set_new(st, "details",
                        json_pack("{s:[{s:s, s:s}]}", "causes", "reason",
                                  "UnexpectedServerResponse", "message", "404 page not found"));
}

static bool is_scale(const route *rt)
{
    return rt->name[0] && !strcmp(rt->sub, "scale") && (rt->kind->subresources & API_SUB_SCALE);
}

void rest_handle(req *rq, resp *rs)
{
    char segs[10][URLPATH_SEG_MAX];
    int n = split_path(rq->path, segs, 10, rs);
    route rt;
    memset(&rt, 0, sizeof rt);
    rq->verb = "GET";
    if (n == -2) return;
    if (n < 0) return not_found(rs);
    if (!strcmp(rq->method, "GET") && is_meta(segs, n)) {
        rbac_attrs a = {authz_user(rq), "get", false, "", "", "", "", "", rq->path};
        if (authz_request(rq, &a, rs) != 0) return;
        if (serve_meta(rq, rs, segs, n)) return;
    }
    if (n == 4 && !strcmp(segs[0], "apis") &&
        authz_serve_review(rq, rs, segs[1], segs[2], segs[3], NULL))
        return;
    if (n == 6 && !strcmp(segs[0], "apis") && !strcmp(segs[3], "namespaces") &&
        authz_serve_review(rq, rs, segs[1], segs[2], segs[5], segs[4]))
        return;
    if (tokenreview_serve(rq, rs, segs, n)) return;
    if (quotareview_serve(rq, rs, segs, n)) return;
    if (webhook_serve(rq, rs, segs, n)) return;
    if (extender_serve(rq, rs, segs, n)) return;

    int base;
    if (n >= 2 && !strcmp(segs[0], "api") && !strcmp(segs[1], "v1")) {
        base = 2;
        if (resolve("", "v1", segs + base, n - base, &rt) != 0) return not_found(rs);
    } else if (n >= 3 && !strcmp(segs[0], "apis")) {
        base = 3;
        if (resolve(segs[1], segs[2], segs + base, n - base, &rt) != 0) return not_found(rs);
    } else {
        return not_found(rs);
    }
    api_kind_store_resource(rt.kind, rq->resource, sizeof rq->resource);
    if (query_bool(rq, "watch")) rt.watch = true;
    rbac_attrs a;
    authz_resource_attrs(rq, rt.kind, rt.ns, rt.name, rt.sub, rt.watch, &a);
    if (authz_request(rq, &a, rs) != 0) return;

    const char *m = rq->method;
    /* In cluster mode the store is a mirror of the cluster: what it holds
     * is written through the cluster's API server, never here. */
    if (rq->srv->mirror && strcmp(m, "GET")) {
        resp_errf(rs, API_METHOD_NOT_ALLOWED,
                  "allotd is in cluster mode: write %s through the cluster's API server",
                  rt.kind->resource);
        return;
    }
    if (!strcmp(m, "GET")) {
        if (rt.watch) {
            rq->verb = "WATCH";
            watch_start(rq, rs, rt.kind, rt.ns, rt.name[0] ? rt.name : NULL);
        } else if (rt.name[0]) {
            rq->verb = "GET";
            if (is_scale(&rt)) return do_scale(rq, rs, &rt, false, false);
            if (!strcmp(rt.sub, "log") && (rt.kind->subresources & API_SUB_LOG))
                return podlog_serve(rq, rs, rt.kind, rt.ns, rt.name);
            if (rt.sub[0] && !sub_allowed(&rt)) return not_found(rs);
            do_get(rq, rs, &rt);
        } else {
            rq->verb = "LIST";
            do_list(rq, rs, &rt);
        }
    } else if (!strcmp(m, "POST")) {
        rq->verb = "POST";
        do_create(rq, rs, &rt);
    } else if (!strcmp(m, "PUT")) {
        rq->verb = "PUT";
        if (is_scale(&rt)) return do_scale(rq, rs, &rt, true, false);
        do_update(rq, rs, &rt, false);
    } else if (!strcmp(m, "PATCH")) {
        rq->verb = "PATCH";
        if (is_scale(&rt) && patch_is_apply(rq->content_type))
            return rest_apply(rq, rs, rt.kind, rt.ns, rt.name, rt.sub);
        if (is_scale(&rt)) return do_scale(rq, rs, &rt, true, true);
        do_update(rq, rs, &rt, true);
    } else if (!strcmp(m, "DELETE")) {
        rq->verb = rt.name[0] ? "DELETE" : "DELETECOLLECTION";
        if (rt.name[0])
            do_delete(rq, rs, &rt);
        else
            do_delete_collection(rq, rs, &rt);
    } else {
        rq->verb = m;
        resp_errf(rs, API_METHOD_NOT_ALLOWED,
                  "the server does not allow this method on the requested resource");
    }
}
