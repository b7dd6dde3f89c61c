/* audit.c - audit Events and the audit Policy (see audit.h). */
#include "server/audit.h"
#include "core/jdump.h"

#include "api/yaml.h"
#include "core/dbuf.h"
#include "util/log.h"
#include "registry/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the policy ---- */

typedef struct strs {
    char **v;
    size_t n;
} strs;

typedef struct group_res {
    char *group;
    strs resources, names;
} group_res;

typedef struct rule {
    audit_level level;
    strs users, groups, verbs, namespaces, urls;
    group_res *res;
    size_t nres;
    unsigned omit;
} rule;

struct audit_policy {
    rule *rules;
    size_t n;
    unsigned omit;
};

static const char *const level_names[] = {"None", "Metadata", "Request", "RequestResponse"};
static const char *const stage_names[] = {"RequestReceived", "ResponseStarted", "ResponseComplete",
                                          "Panic"};

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

static void strs_free(strs *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

static void rule_free(rule *r)
{
    strs *all[] = {&r->users, &r->groups, &r->verbs, &r->namespaces, &r->urls};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        strs_free(all[i]);
    for (size_t i = 0; i < r->nres; i++) {
        free(r->res[i].group);
        strs_free(&r->res[i].resources);
        strs_free(&r->res[i].names);
    }
    free(r->res);
}

void audit_policy_free(audit_policy *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n; i++)
        rule_free(&p->rules[i]);
    free(p->rules);
    free(p);
}

/* A list of strings at v (absent: empty). */
static int parse_strs(const json_t *v, const char *where, strs *out, char *err, size_t errlen)
{
    if (!v || json_is_null(v)) return 0;
    if (!json_is_array(v)) return fail(err, errlen, "%s: expected a list of strings", where);
    out->v = calloc(json_array_size(v) + 1, sizeof *out->v);
    if (!out->v) return fail(err, errlen, "out of memory");
    size_t i;
    const json_t *x;
    json_array_foreach(v, i, x)
    {
        if (!json_is_string(x)) return fail(err, errlen, "%s[%zu]: expected a string", where, i);
        if (!(out->v[out->n++] = strdup(json_string_value(x))))
            return fail(err, errlen, "out of memory");
    }
    return 0;
}

static int parse_stages(const json_t *v, const char *where, unsigned *out, char *err, size_t errlen)
{
    strs s = {0};
    int rc = parse_strs(v, where, &s, err, errlen);
    for (size_t i = 0; rc == 0 && i < s.n; i++) {
        size_t k = 0;
        while (k < 4 && strcmp(s.v[i], stage_names[k]))
            k++;
        if (k == 4)
            rc = fail(err, errlen, "%s[%zu]: Unsupported value: \"%s\"", where, i, s.v[i]);
        else
            *out |= 1u << k;
    }
    strs_free(&s);
    return rc;
}

static int parse_rule(const json_t *j, size_t idx, rule *r, char *err, size_t errlen)
{
    char where[64];
    snprintf(where, sizeof where, "rules[%zu]", idx);
    if (!json_is_object(j)) return fail(err, errlen, "%s: expected an object", where);
    const char *lv = json_string_value(json_object_get(j, "level"));
    size_t k = 0;
    while (lv && k < 4 && strcmp(lv, level_names[k]))
        k++;
    if (!lv || k == 4)
        return fail(err, errlen,
                    "%s.level: Unsupported value: \"%s\": supported values: "
                    "\"None\", \"Metadata\", \"Request\", \"RequestResponse\"",
                    where, lv ? lv : "");
    r->level = (audit_level)k;
    static const char *const keys[] = {"users", "userGroups", "verbs", "namespaces",
                                       "nonResourceURLs"};
    strs *dst[] = {&r->users, &r->groups, &r->verbs, &r->namespaces, &r->urls};
    for (size_t i = 0; i < 5; i++) {
        char w[96];
        snprintf(w, sizeof w, "%s.%s", where, keys[i]);
        if (parse_strs(json_object_get(j, keys[i]), w, dst[i], err, errlen) != 0) return -1;
    }
    const json_t *res = json_object_get(j, "resources");
    if (res && !json_is_array(res))
        return fail(err, errlen, "%s.resources: expected a list", where);
    if ((res && json_array_size(res)) || r->namespaces.n) {
        if (r->urls.n)
            return fail(err, errlen,
                        "%s.nonResourceURLs: Invalid value: rules cannot apply to "
                        "both regular resources and non-resource URLs",
                        where);
    }
    r->res = calloc(json_array_size(res) + 1, sizeof *r->res);
    if (!r->res) return fail(err, errlen, "out of memory");
    for (size_t i = 0; i < json_array_size(res); i++) {
        const json_t *g = json_array_get(res, i);
        char w[96];
        snprintf(w, sizeof w, "%s.resources[%zu]", where, i);
        const char *grp = json_string_value(json_object_get(g, "group"));
        group_res *gr = &r->res[r->nres++];
        if (!(gr->group = strdup(grp ? grp : ""))) return fail(err, errlen, "out of memory");
        if (parse_strs(json_object_get(g, "resources"), w, &gr->resources, err, errlen) != 0 ||
            parse_strs(json_object_get(g, "resourceNames"), w, &gr->names, err, errlen) != 0)
            return -1;
    }
    snprintf(where + strlen(where), sizeof where - strlen(where), ".omitStages");
    return parse_stages(json_object_get(j, "omitStages"), where, &r->omit, err, errlen);
}

audit_policy *audit_policy_parse(const char *text, size_t len, char *err, size_t errlen)
{
    json_t *doc = yaml_to_json(text, len, err, errlen);
    if (!doc) return NULL;
    audit_policy *p = calloc(1, sizeof *p);
    const json_t *rules = json_object_get(doc, "rules");
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    int rc = p ? 0 : fail(err, errlen, "out of memory");
    if (rc == 0 && (!kind || strcmp(kind, "Policy")))
        rc = fail(err, errlen, "kind: expected \"Policy\", got \"%s\"", kind ? kind : "");
    if (rc == 0 && !json_is_array(rules)) rc = fail(err, errlen, "rules: expected a list");
    if (rc == 0 && !(p->rules = calloc(json_array_size(rules) + 1, sizeof *p->rules)))
        rc = fail(err, errlen, "out of memory");
    for (size_t i = 0; rc == 0 && i < json_array_size(rules); i++)
        rc = parse_rule(json_array_get(rules, i), i, &p->rules[p->n++], err, errlen);
    if (rc == 0)
        rc = parse_stages(json_object_get(doc, "omitStages"), "omitStages", &p->omit, err, errlen);
    json_decref(doc);
    if (rc != 0) {
        audit_policy_free(p);
        return NULL;
    }
    return p;
}

audit_policy *audit_policy_default(void)
{
    audit_policy *p = calloc(1, sizeof *p);
    if (p && !(p->rules = calloc(1, sizeof *p->rules))) {
        free(p);
        return NULL;
    }
    if (p) p->rules[p->n++].level = AUDIT_METADATA;
    return p;
}

/* ---- matching (checker.go) ---- */

static bool has(const strs *s, const char *v)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], v)) return true;
    return false;
}

static bool res_matches(const char *res, const audit_attrs *a)
{
    size_t rl = strlen(a->resource), sl = strlen(a->subresource), n = strlen(res);
    if (!strcmp(res, "*")) return true;
    if (!sl && !strcmp(res, a->resource)) return true;
    if (sl && n == rl + 1 + sl && !strncmp(res, a->resource, rl) && res[rl] == '/' &&
        !strcmp(res + rl + 1, a->subresource))
        return true;
    if (sl && !strncmp(res, "*/", 2) && !strcmp(res + 2, a->subresource)) return true;
    return n >= 2 && !strcmp(res + n - 2, "/*") && n - 2 == rl && !strncmp(res, a->resource, rl);
}

static bool rule_resource(const rule *r, const audit_attrs *a)
{
    if (!a->resource_request) return false;
    if (r->namespaces.n && !has(&r->namespaces, a->ns)) return false;
    if (!r->nres) return true;
    for (size_t i = 0; i < r->nres; i++) {
        const group_res *g = &r->res[i];
        if (strcmp(g->group, a->api_group)) continue;
        if (!g->resources.n) return true;
        if (g->names.n && !has(&g->names, a->name)) continue;
        for (size_t k = 0; k < g->resources.n; k++)
            if (res_matches(g->resources.v[k], a)) return true;
    }
    return false;
}

static bool url_matches(const char *spec, const char *path)
{
    size_t n = strlen(spec);
    if (!strcmp(spec, "*") || !strcmp(spec, path)) return true;
    return n && spec[n - 1] == '*' && !strncmp(path, spec, n - 1);
}

static bool rule_matches(const rule *r, const audit_attrs *a)
{
    if (r->users.n && !has(&r->users, a->user)) return false;
    if (r->groups.n) {
        bool any = false;
        for (size_t i = 0; i < a->ngroups && !any; i++)
            any = has(&r->groups, a->groups[i]);
        if (!any) return false;
    }
    if (r->verbs.n && !has(&r->verbs, a->verb)) return false;
    if (r->namespaces.n || r->nres) return rule_resource(r, a);
    if (r->urls.n) {
        if (a->resource_request) return false;
        char path[2048];
        snprintf(path, sizeof path, "%.*s", (int)strcspn(a->path, "?"), a->path);
        for (size_t i = 0; i < r->urls.n; i++)
            if (url_matches(r->urls.v[i], path)) return true;
        return false;
    }
    return true;
}

/* Requests whose bodies hold credentials. */
static bool secret_bodies(const audit_attrs *a)
{
    if (!a->resource_request) return false;
    if (!*a->api_group && !strcmp(a->resource, "secrets")) return true;
    if (!*a->api_group && !strcmp(a->resource, "serviceaccounts") &&
        !strcmp(a->subresource, "token"))
        return true;
    return !strcmp(a->api_group, "authentication.k8s.io") && !strcmp(a->resource, "tokenreviews");
}

audit_level audit_policy_level(const audit_policy *p, const audit_attrs *a, unsigned *omit)
{
    audit_level l = AUDIT_NONE;
    unsigned o = p ? p->omit : 0;
    for (size_t i = 0; p && i < p->n; i++)
        if (rule_matches(&p->rules[i], a)) {
            l = p->rules[i].level;
            o |= p->rules[i].omit;
            break;
        }
    if (l > AUDIT_METADATA && secret_bodies(a)) l = AUDIT_METADATA;
    if (omit) *omit = o;
    return l;
}

/* ---- events ---- */

static void now_micro(char *buf, size_t n)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char base[20]; /* YYYY-MM-DDThh:mm:ss */
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%.19s.%06dZ", base, (int)(ts.tv_nsec / 1000 % 1000000));
}

void audit_event_begin(audit_event *ev, const audit_policy *p, const audit_attrs *a)
{
    memset(ev, 0, sizeof *ev);
    reg_new_uid(ev->id);
    now_micro(ev->received, sizeof ev->received);
    ev->level = audit_policy_level(p, a, &ev->omit);
}

/* The Event is rendered straight to text (a jansson tree per request cost
 * as much as a tenth of a pod create); strings are escaped as log lines are
 * (log_escape: quotes, backslashes, control bytes, invalid UTF-8 as
 * \ufffd), so a request path cannot forge a line. */

/* `"<v escaped>"`. 0 or -1. */
static int add_val(dbuf *b, const char *v)
{
    size_t n = strlen(v), en = 0, cap = n * 6 + 1;
    char stackbuf[2048], *e = cap <= sizeof stackbuf ? stackbuf : malloc(cap);
    if (!e) return -1;
    log_escape(v, n, e, cap, &en);
    int rc = dbuf_add(b, "\"", 1);
    if (rc == 0) rc = dbuf_add(b, e, en);
    if (rc == 0) rc = dbuf_add(b, "\"", 1);
    if (e != stackbuf) free(e);
    return rc;
}

/* `"key":"<v escaped>"`, after a comma unless it opens an object. 0 or -1. */
static int add_str(dbuf *b, const char *key, const char *v)
{
    int rc = dbuf_printf(b, "%s\"%s\":", b->len && b->p[b->len - 1] != '{' ? "," : "", key);
    return rc == 0 ? add_val(b, v) : -1;
}

/* The same, left out when v is NULL or empty. */
static int add_opt(dbuf *b, const char *key, const char *v)
{
    return v && *v ? add_str(b, key, v) : 0;
}

/* `"key":<json>`: a request or response object, compact. */
static int add_json(dbuf *b, const char *key, const json_t *j)
{
    char *t = jdump(j, NULL);
    if (!t) return -1;
    int rc = dbuf_printf(b, ",\"%s\":", key);
    if (rc == 0) rc = dbuf_adds(b, t);
    free(t);
    return rc;
}

/* `"name":[v1,...]`, after a comma unless it opens an object. */
static int add_list(dbuf *b, const char *name, const char *const *v, size_t n)
{
    int rc = dbuf_printf(b, "%s\"%s\":[", b->p[b->len - 1] == '{' ? "" : ",", name);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (i) rc = dbuf_add(b, ",", 1);
        if (rc == 0) rc = add_val(b, v[i]);
    }
    return rc == 0 ? dbuf_add(b, "]", 1) : -1;
}

/* `,"key":{username, uid, groups, extra}`, an authentication.k8s.io/v1
 * UserInfo (empty members left out). */
static int add_user(dbuf *b, const char *key, const char *name, const char *uid,
                    const char *const *groups, size_t ngroups, const auth_extra *extra,
                    size_t nextra)
{
    int rc = dbuf_printf(b, ",\"%s\":{", key);
    if (rc == 0) rc = add_opt(b, "username", name);
    if (rc == 0) rc = add_opt(b, "uid", uid);
    if (rc == 0 && ngroups) rc = add_list(b, "groups", groups, ngroups);
    if (rc == 0 && nextra) {
        rc = dbuf_printf(b, "%s\"extra\":{", b->p[b->len - 1] == '{' ? "" : ",");
        for (size_t i = 0; rc == 0 && i < nextra; i++) {
            if (i) rc = dbuf_add(b, ",", 1);
            if (rc == 0) rc = add_val(b, extra[i].key);
            if (rc == 0) rc = dbuf_add(b, ":[", 2);
            for (size_t j = 0; rc == 0 && j < extra[i].nvalues; j++) {
                if (j) rc = dbuf_add(b, ",", 1);
                if (rc == 0) rc = add_val(b, extra[i].values[j]);
            }
            if (rc == 0) rc = dbuf_add(b, "]", 1);
        }
        if (rc == 0) rc = dbuf_add(b, "}", 1);
    }
    return rc == 0 ? dbuf_add(b, "}", 1) : -1;
}

static int add_object_ref(dbuf *b, const audit_attrs *a)
{
    int rc = dbuf_adds(b, ",\"objectRef\":{");
    const char *keys[] = {"resource", "namespace", "name", "apiGroup", "apiVersion", "subresource"};
    const char *vals[] = {a->resource,  a->ns,          a->name,
                          a->api_group, a->api_version, a->subresource};
    for (int i = 0; rc == 0 && i < 6; i++)
        rc = add_opt(b, keys[i], vals[i]);
    return rc == 0 ? dbuf_add(b, "}", 1) : -1;
}

char *audit_event_line(const audit_event *ev, const audit_attrs *a, unsigned stage, size_t *len)
{
    int si = stage == AUDIT_STAGE_RECEIVED   ? 0
             : stage == AUDIT_STAGE_STARTED  ? 1
             : stage == AUDIT_STAGE_COMPLETE ? 2
                                             : 3;
    if (ev->level == AUDIT_NONE || (ev->omit & stage)) return NULL;
    char now[32];
    now_micro(now, sizeof now);
    dbuf b;
    dbuf_init(&b, 16u << 20);
    int rc = dbuf_printf(&b,
                         "{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\",\"level\":\"%s\","
                         "\"auditID\":\"%s\",\"stage\":\"%s\"",
                         level_names[ev->level], ev->id, stage_names[si]);
    if (rc == 0) rc = add_str(&b, "requestURI", a->path ? a->path : "");
    if (rc == 0) rc = add_str(&b, "verb", a->verb ? a->verb : "");
    if (rc == 0) rc = add_user(&b, "user", a->user, a->uid, a->groups, a->ngroups, NULL, 0);
    const auth_user *iu = a->impersonated;
    if (rc == 0 && iu)
        rc = add_user(&b, "impersonatedUser", iu->name, iu->uid, iu->groups, iu->ngroups, iu->extra,
                      iu->nextra);
    if (rc == 0) rc = dbuf_adds(&b, ",\"sourceIPs\":[");
    if (rc == 0) rc = add_val(&b, a->source_ip ? a->source_ip : "");
    if (rc == 0) rc = dbuf_add(&b, "]", 1);
    if (rc == 0) rc = add_opt(&b, "userAgent", a->user_agent);
    if (rc == 0 && a->resource_request) rc = add_object_ref(&b, a);
    if (rc == 0 && stage != AUDIT_STAGE_RECEIVED) {
        rc = dbuf_printf(&b, ",\"responseStatus\":{\"metadata\":{},\"code\":%d", ev->code);
        if (rc == 0 && ev->code >= 400) {
            rc = dbuf_adds(&b, ",\"status\":\"Failure\"");
            if (rc == 0) rc = add_opt(&b, "message", ev->message);
        }
        if (rc == 0) rc = dbuf_add(&b, "}", 1);
    }
    if (rc == 0 && ev->level >= AUDIT_REQUEST && ev->request)
        rc = add_json(&b, "requestObject", ev->request);
    if (rc == 0 && ev->level >= AUDIT_REQUEST_RESPONSE && ev->response &&
        stage != AUDIT_STAGE_RECEIVED)
        rc = add_json(&b, "responseObject", ev->response);
    if (rc == 0)
        rc = dbuf_printf(&b, ",\"requestReceivedTimestamp\":\"%s\",\"stageTimestamp\":\"%s\"",
                         ev->received, now);
    if (rc == 0 && ev->decision) {
        rc = dbuf_adds(&b, ",\"annotations\":{");
        if (rc == 0) rc = add_opt(&b, "authorization.k8s.io/decision", ev->decision);
        if (rc == 0) rc = add_str(&b, "authorization.k8s.io/reason", ev->reason ? ev->reason : "");
        if (rc == 0) rc = dbuf_add(&b, "}", 1);
    }
    if (rc == 0) rc = dbuf_add(&b, "}\n", 2);
    if (rc != 0) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b, len);
}

/* ---- the file ---- */

struct audit_log {
    int fd;
};

audit_log *audit_log_open(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        fail(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fchmod(fd, 0600) != 0) { /* an existing file keeps no wider mode */
        fail(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    audit_log *l = malloc(sizeof *l);
    if (!l) {
        close(fd);
        fail(err, errlen, "out of memory");
        return NULL;
    }
    l->fd = fd;
    return l;
}

void audit_log_close(audit_log *l)
{
    if (!l) return;
    close(l->fd);
    free(l);
}

int audit_log_stage(audit_log *l, const audit_event *ev, const audit_attrs *a, unsigned stage)
{
    if (!l) return 0;
    size_t len = 0;
    char *line = audit_event_line(ev, a, stage, &len);
    if (!line) return 0;
    ssize_t w = write(l->fd, line, len); /* (O_APPEND: one write, one whole line) */
    free(line);
    return w == (ssize_t)len ? 0 : -1;
}
