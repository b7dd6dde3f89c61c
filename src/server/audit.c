/* audit.c - audit Events and the audit Policy (see audit.h). */
#include "server/audit.h"

#include "api/yaml.h"
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
static const char *const stage_names[] = {"RequestReceived", "ResponseStarted",
                                          "ResponseComplete", "Panic"};

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

static int parse_stages(const json_t *v, const char *where, unsigned *out, char *err,
                        size_t errlen)
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
        return fail(err, errlen, "%s.level: Unsupported value: \"%s\": supported values: "
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
    if (res && !json_is_array(res)) return fail(err, errlen, "%s.resources: expected a list", where);
    if ((res && json_array_size(res)) || r->namespaces.n) {
        if (r->urls.n)
            return fail(err, errlen, "%s.nonResourceURLs: Invalid value: rules cannot apply to "
                                     "both regular resources and non-resource URLs", where);
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
    if (rc == 0) rc = parse_stages(json_object_get(doc, "omitStages"), "omitStages", &p->omit,
                                   err, errlen);
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

/* A JSON string of s with every byte that is not UTF-8 as U+FFFD (jansson
 * refuses invalid UTF-8). */
static json_t *str(const char *s)
{
    if (!s) s = "";
    json_t *j = json_string(s);
    if (j) return j;
    size_t n = strlen(s);
    char *out = malloc(n * 3 + 1), *o = out;
    if (!out) return NULL;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t w = p[i] < 0x80                     ? 1
                   : (p[i] & 0xe0) == 0xc0         ? 2
                   : (p[i] & 0xf0) == 0xe0         ? 3
                   : (p[i] & 0xf8) == 0xf0         ? 4
                                                   : 0;
        bool ok = w && i + w <= n;
        for (size_t k = 1; ok && k < w; k++)
            ok = (p[i + k] & 0xc0) == 0x80;
        if (ok && w > 1) { /* (overlong forms and surrogates: jansson decides below) */
            char tmp[5] = {0};
            memcpy(tmp, p + i, w);
            json_t *t = json_string(tmp);
            ok = t != NULL;
            json_decref(t);
        }
        if (ok) {
            memcpy(o, p + i, w);
            o += w, i += w;
        } else {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3, i++;
        }
    }
    *o = 0;
    j = json_string(out);
    free(out);
    return j;
}

static void set_str(json_t *o, const char *k, const char *v)
{
    if (v && *v) json_object_set_new(o, k, str(v));
}

static json_t *object_ref(const audit_attrs *a)
{
    json_t *r = json_object();
    if (!r) return NULL;
    set_str(r, "resource", a->resource);
    set_str(r, "namespace", a->ns);
    set_str(r, "name", a->name);
    set_str(r, "apiGroup", a->api_group);
    set_str(r, "apiVersion", a->api_version);
    set_str(r, "subresource", a->subresource);
    return r;
}

char *audit_event_line(const audit_event *ev, const audit_attrs *a, unsigned stage, size_t *len)
{
    int si = stage == AUDIT_STAGE_RECEIVED ? 0 : stage == AUDIT_STAGE_STARTED ? 1
                                              : stage == AUDIT_STAGE_COMPLETE ? 2 : 3;
    if (ev->level == AUDIT_NONE || (ev->omit & stage)) return NULL;
    char now[32];
    now_micro(now, sizeof now);
    json_t *groups = json_array(), *user = json_object(), *e = json_object();
    for (size_t i = 0; groups && i < a->ngroups; i++)
        json_array_append_new(groups, str(a->groups[i]));
    set_str(user, "username", a->user);
    set_str(user, "uid", a->uid);
    if (groups && json_array_size(groups)) json_object_set(user, "groups", groups);
    json_object_set_new(e, "kind", json_string("Event"));
    json_object_set_new(e, "apiVersion", json_string("audit.k8s.io/v1"));
    json_object_set_new(e, "level", json_string(level_names[ev->level]));
    json_object_set_new(e, "auditID", json_string(ev->id));
    json_object_set_new(e, "stage", json_string(stage_names[si]));
    json_object_set_new(e, "requestURI", str(a->path));
    json_object_set_new(e, "verb", str(a->verb));
    json_object_set(e, "user", user);
    json_object_set_new(e, "sourceIPs", json_pack("[o]", str(a->source_ip)));
    set_str(e, "userAgent", a->user_agent);
    if (a->resource_request) json_object_set_new(e, "objectRef", object_ref(a));
    if (stage != AUDIT_STAGE_RECEIVED) {
        json_t *rs = json_pack("{s:{}, s:i}", "metadata", "code", ev->code);
        if (rs && ev->code >= 400) {
            json_object_set_new(rs, "status", json_string("Failure"));
            set_str(rs, "message", ev->message);
        }
        json_object_set_new(e, "responseStatus", rs);
    }
    if (ev->level >= AUDIT_REQUEST && ev->request)
        json_object_set(e, "requestObject", (json_t *)ev->request);
    if (ev->level >= AUDIT_REQUEST_RESPONSE && ev->response && stage != AUDIT_STAGE_RECEIVED)
        json_object_set(e, "responseObject", (json_t *)ev->response);
    json_object_set_new(e, "requestReceivedTimestamp", json_string(ev->received));
    json_object_set_new(e, "stageTimestamp", json_string(now));
    if (ev->decision) {
        json_t *an = json_object();
        set_str(an, "authorization.k8s.io/decision", ev->decision);
        set_str(an, "authorization.k8s.io/reason", ev->reason);
        json_object_set_new(e, "annotations", an);
    }
    char *text = json_dumps(e, JSON_COMPACT);
    json_decref(e);
    json_decref(user);
    json_decref(groups);
    if (!text) return NULL;
    size_t n = strlen(text);
    char *line = realloc(text, n + 2);
    if (!line) {
        free(text);
        return NULL;
    }
    line[n] = '\n';
    line[n + 1] = 0;
    *len = n + 1;
    return line;
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
