/* cquota.c - CustomQuota / GlobalCustomQuota decisions (see cquota.h). */
#include "core/cquota.h"

#include "core/cel.h"
#include "core/jget.h"
#include "core/jsonpath.h"
#include "core/selector.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One entry of a source's selectors: labels AND fields AND expressions. */
typedef struct cq_sel {
    sel_t *labels;
    jp_field_selector **fields;
    size_t nfields;
    cel_program **cels;
    size_t ncels;
} cq_sel;

typedef struct cq_source {
    char *group, *version, *kind;
    cq_op op;
    char *path_text, *cel_text; /* "" when absent */
    jp_expr *path;
    cel_program *cel;
    cq_sel *sels;
    size_t nsels;
    json_t *selectors; /* as written, for status.targets */
} cq_source;

struct cq_quota {
    qty limit;
    bool emit_per_claim;
    sel_t **scope;
    size_t nscope;
    sel_t **nssel; /* global kind */
    size_t nnssel;
    cq_source *src;
    size_t nsrc;
};

static const char *op_name(cq_op op)
{
    return op == CQ_OP_SUB ? "sub" : op == CQ_OP_COUNT ? "count" : "add";
}

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

void cq_split_api_version(const char *api_version, char *group, size_t gn, char *version, size_t vn)
{
    const char *slash = strchr(api_version, '/');
    if (!slash) {
        snprintf(group, gn, "%s", "");
        snprintf(version, vn, "%s", api_version);
        return;
    }
    snprintf(group, gn, "%.*s", (int)(slash - api_version), api_version);
    snprintf(version, vn, "%s", slash + 1);
}

/* ---- freeing ---- */

static void sel_entry_free(cq_sel *s)
{
    sel_free(s->labels);
    for (size_t i = 0; i < s->nfields; i++)
        jp_field_selector_free(s->fields[i]);
    free(s->fields);
    for (size_t i = 0; i < s->ncels; i++)
        cel_free(s->cels[i]);
    free(s->cels);
}

static void source_free(cq_source *s)
{
    free(s->kind); /* (group, version, path and CEL texts live in its block) */
    jp_free(s->path);
    cel_free(s->cel);
    for (size_t i = 0; i < s->nsels; i++)
        sel_entry_free(&s->sels[i]);
    free(s->sels);
    json_decref(s->selectors);
}

static void sels_free(sel_t **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sel_free(v[i]);
    free(v);
}

void cq_free(cq_quota *q)
{
    if (!q) return;
    for (size_t i = 0; i < q->nsrc; i++)
        source_free(&q->src[i]);
    sels_free(q->scope, q->nscope);
    sels_free(q->nssel, q->nnssel);
    free(q);
}

/* ---- compiling ---- */

/* A list of LabelSelectors (`what` names it in errors). */
static int compile_label_list(const json_t *list, const char *what, sel_t ***out, size_t *n,
                              char *err, size_t errlen)
{
    size_t cnt = json_array_size(list);
    *out = cnt ? calloc(cnt, sizeof **out) : NULL;
    *n = 0;
    if (cnt && !*out) return fail(err, errlen, "out of memory");
    for (size_t i = 0; i < cnt; i++) {
        char e[256];
        sel_t *s = sel_from_json(json_array_get(list, i), e, sizeof e);
        if (!s) return fail(err, errlen, "invalid %s[%zu]: %s", what, i, e);
        (*out)[(*n)++] = s;
    }
    return 0;
}

/* The label part of a SelectorWithFields entry: absent = everything. */
static sel_t *entry_labels(const json_t *entry, char *e, size_t n)
{
    json_t *ls = json_object();
    if (!ls) return NULL;
    const char *keys[] = {"matchLabels", "matchExpressions"};
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get(entry, keys[k]);
        if (v && !json_is_null(v)) json_object_set(ls, keys[k], v);
    }
    sel_t *s = sel_from_json(ls, e, n);
    json_decref(ls);
    return s;
}

static int compile_entry(const json_t *entry, size_t si, size_t j, cq_sel *out, char *err,
                         size_t errlen)
{
    char e[1024];
    int code = 0;
    if (!(out->labels = entry_labels(entry, e, sizeof e)))
        return fail(err, errlen, "invalid spec.sources[%zu].selectors[%zu]: %s", si, j, e);
    const json_t *fs = json_object_get(entry, "fieldSelectors"),
                 *cs = json_object_get(entry, "celExpressions");
    size_t nf = json_array_size(fs), nc = json_array_size(cs);
    out->fields = nf ? calloc(nf, sizeof *out->fields) : NULL;
    out->cels = nc ? calloc(nc, sizeof *out->cels) : NULL;
    if ((nf && !out->fields) || (nc && !out->cels)) return fail(err, errlen, "out of memory");
    for (size_t k = 0; k < nf; k++) {
        const char *raw = json_string_value(json_array_get(fs, k));
        jp_field_selector *f = jp_field_selector_compile(raw ? raw : "", &code, e, sizeof e);
        if (!f)
            return fail(
                err, errlen,
                "invalid field selector: spec.sources[%zu].selectors[%zu].fieldSelectors[%zu]: "
                "%s",
                si, j, k, e);
        out->fields[out->nfields++] = f;
    }
    for (size_t k = 0; k < nc; k++) {
        const char *src = json_string_value(json_array_get(cs, k));
        cel_program *p = cel_compile(src ? src : "", CEL_EXPECT_BOOL, e, sizeof e);
        if (!p)
            return fail(
                err, errlen,
                "invalid CEL expression: spec.sources[%zu].selectors[%zu].celExpressions[%zu]: "
                "%s",
                si, j, k, e);
        out->cels[out->ncels++] = p;
    }
    return 0;
}

static int parse_op(const char *s, cq_op *op)
{
    if (!*s || !strcmp(s, "add"))
        *op = CQ_OP_ADD;
    else if (!strcmp(s, "sub"))
        *op = CQ_OP_SUB;
    else if (!strcmp(s, "count"))
        *op = CQ_OP_COUNT;
    else
        return -1;
    return 0;
}

static int compile_source(const json_t *js, size_t i, cq_source *s, char *err, size_t errlen)
{
    char e[1024], g[256], v[256];
    const char *av = jtext(js, "apiVersion");
    if (*av)
        cq_split_api_version(av, g, sizeof g, v, sizeof v);
    else {
        snprintf(g, sizeof g, "%s", jtext(js, "group"));
        snprintf(v, sizeof v, "%s", jtext(js, "version"));
    }
    /* kind, group, version and the path or CEL text in one block: every
     * write of the kind compares the first three and looks the text up, for
     * every quota of its namespace */
    const char *kd = jtext(js, "kind"), *pt = jtext(js, "path"), *ct = jtext(js, "cel");
    size_t kl = strlen(kd) + 1, gl = strlen(g) + 1, vl = strlen(v) + 1, pl = strlen(pt) + 1,
           cl = strlen(ct) + 1;
    char *blk = malloc(kl + gl + vl + pl + cl);
    if (blk) {
        s->kind = memcpy(blk, kd, kl);
        s->group = memcpy(blk += kl, g, gl);
        s->version = memcpy(blk += gl, v, vl);
        s->path_text = memcpy(blk += vl, pt, pl);
        s->cel_text = memcpy(blk + pl, ct, cl);
    }
    s->selectors = json_incref(json_object_get(js, "selectors"));
    if (!s->group || !s->version || !s->kind || !s->path_text || !s->cel_text)
        return fail(err, errlen, "out of memory");
    if (parse_op(jtext(js, "op"), &s->op) != 0)
        return fail(err, errlen, "unsupported operation \"%s\" in spec.sources[%zu]",
                    jtext(js, "op"), i);
    bool has_path = *s->path_text, has_cel = *s->cel_text;
    if (s->op == CQ_OP_COUNT ? (has_path || has_cel) : (has_path == has_cel))
        return fail(err, errlen,
                    "path and cel must be empty when op is 'count'; otherwise exactly one of path "
                    "or cel must be set and non-empty");
    int code = 0;
    if (has_path && !(s->path = jp_compile_source_path(s->path_text, &code, e, sizeof e)))
        return fail(err, errlen, "invalid path: spec.sources[%zu].path: %s", i, e);
    if (has_cel && !(s->cel = cel_compile(s->cel_text, CEL_EXPECT_QUANTITY, e, sizeof e)))
        return fail(err, errlen, "invalid CEL expression: spec.sources[%zu].cel: %s", i, e);
    size_t n = json_array_size(s->selectors);
    s->sels = n ? calloc(n, sizeof *s->sels) : NULL;
    if (n && !s->sels) return fail(err, errlen, "out of memory");
    for (size_t j = 0; j < n; j++) {
        s->nsels++;
        if (compile_entry(json_array_get(s->selectors, j), i, j, &s->sels[j], err, errlen) != 0)
            return -1;
    }
    return 0;
}

cq_quota *cq_compile(const json_t *spec, bool global, char *err, size_t errlen)
{
    const json_t *srcs = json_object_get(spec, "sources");
    size_t n = json_array_size(srcs);
    /* the sources follow the quota in its allocation (read together by every
     * write the quota may count) */
    cq_quota *q = calloc(1, sizeof *q + n * sizeof *q->src);
    if (!q) {
        fail(err, errlen, "out of memory");
        return NULL;
    }
    q->src = (cq_source *)(q + 1);
    const json_t *lim = json_object_get(spec, "limit");
    int rc = qty_from_json(lim, &q->limit);
    if (rc != 0 || qty_sign(&q->limit) <= 0) {
        char buf[64] = "";
        if (rc == 0) qty_format_str(&q->limit, buf, sizeof buf);
        fail(err, errlen, "invalid spec.limit: quantity must not be negative or 0: \"%s\"",
             rc == 0                  ? buf
             : json_string_value(lim) ? json_string_value(lim)
                                      : "");
        cq_free(q);
        return NULL;
    }
    q->emit_per_claim =
        json_is_true(json_object_get(json_object_get(spec, "options"), "emitMetricPerClaimUsage"));
    for (size_t i = 0; rc == 0 && i < n; i++) {
        q->nsrc++;
        rc = compile_source(json_array_get(srcs, i), i, &q->src[i], err, errlen);
    }
    if (rc == 0)
        rc = compile_label_list(json_object_get(spec, "scopeSelectors"), "spec.scopeSelectors",
                                &q->scope, &q->nscope, err, errlen);
    if (rc == 0 && global)
        rc = compile_label_list(json_object_get(spec, "namespaceSelectors"),
                                "spec.namespaceSelectors", &q->nssel, &q->nnssel, err, errlen);
    if (rc != 0) {
        cq_free(q);
        return NULL;
    }
    return q;
}

/* ---- accessors ---- */

const qty *cq_limit(const cq_quota *q)
{
    return &q->limit;
}

bool cq_emit_per_claim(const cq_quota *q)
{
    return q->emit_per_claim;
}

size_t cq_nsources(const cq_quota *q)
{
    return q->nsrc;
}

bool cq_targets(const cq_quota *q, const char *group, const char *version, const char *kind)
{
    for (size_t i = 0; i < q->nsrc; i++)
        if (!strcmp(q->src[i].kind, kind) && !strcmp(q->src[i].group, group) &&
            !strcmp(q->src[i].version, version))
            return true;
    return false;
}

bool cq_all_namespaces(const cq_quota *q)
{
    return q->nnssel == 0;
}

static bool any_matches(sel_t *const *v, size_t n, const json_t *labels)
{
    if (n == 0) return true;
    for (size_t i = 0; i < n; i++)
        if (sel_matches(v[i], labels)) return true;
    return false;
}

bool cq_selects_namespace(const cq_quota *q, const json_t *labels)
{
    return any_matches(q->nssel, q->nnssel, labels);
}

void cq_source_gvk(const cq_quota *q, size_t i, const char **group, const char **version,
                   const char **kind)
{
    *group = q->src[i].group;
    *version = q->src[i].version;
    *kind = q->src[i].kind;
}

json_t *cq_target_json(const cq_quota *q, size_t i, const char *scope)
{
    const cq_source *s = &q->src[i];
    json_t *t = json_pack("{s:s, s:s, s:s, s:s}", "group", s->group, "version", s->version, "kind",
                          s->kind, "op", op_name(s->op));
    if (!t) return NULL;
    if (*s->path_text) json_object_set_new(t, "path", json_string(s->path_text));
    if (*s->cel_text) json_object_set_new(t, "cel", json_string(s->cel_text));
    if (*scope) json_object_set_new(t, "scope", json_string(scope));
    if (json_array_size(s->selectors)) json_object_set(t, "selectors", s->selectors);
    return t;
}

double cq_usage_percentage(const qty *used, const qty *limit)
{
    int64_t l = qty_milli_value(limit);
    if (l <= 0) return 0;
    return (double)qty_milli_value(used) / (double)l * 100.0;
}

/* ---- usage ---- */

/* Whether selector entry s holds for obj (labels AND fields AND
 * expressions): 1, 0, -1 when it cannot be evaluated (e set: the first
 * failure), -2 out of memory. A part that is false makes the entry false
 * whatever fails beside it (CEL's commutative &&). */
static int entry_matches(const cq_sel *s, const json_t *obj, const json_t *labels, char *e,
                         size_t n)
{
    if (!sel_matches(s->labels, labels)) return 0;
    bool failed = false;
    for (size_t i = 0; i < s->nfields; i++) {
        bool m = false;
        char fe[1024];
        int rc = jp_field_selector_match(s->fields[i], obj, &m, fe, sizeof fe);
        if (rc == JP_ERR_NOMEM) return -2;
        if (rc == JP_OK && !m) return 0;
        if (rc != JP_OK && !failed) snprintf(e, n, "%s", fe);
        failed |= rc != JP_OK;
    }
    const json_t *vars[1] = {obj};
    for (size_t i = 0; i < s->ncels; i++) {
        bool m = false;
        char ce[1024];
        int rc = cel_eval_bool(s->cels[i], vars, NULL, &m, ce, sizeof ce);
        if (rc == CEL_ERR_NOMEM) return -2;
        if (rc == CEL_OK && !m) return 0;
        if (rc != CEL_OK && !failed) snprintf(e, n, "%s", ce);
        failed |= rc != CEL_OK;
    }
    return failed ? -1 : 1;
}

/* Whether source s selects obj: entries ORed, an empty list selects all; 1,
 * 0, -1 when no entry holds and one cannot be evaluated (e set: the first),
 * -2 out of memory. An entry that holds selects whatever fails beside it
 * (CEL's commutative ||). */
static int source_selects(const cq_source *s, const json_t *obj, const json_t *labels, char *e,
                          size_t n)
{
    if (s->nsels == 0) return 1;
    bool failed = false;
    for (size_t i = 0; i < s->nsels; i++) {
        char ee[1024];
        int m = entry_matches(&s->sels[i], obj, labels, ee, sizeof ee);
        if (m == 1 || m == -2) return m;
        if (m == -1 && !failed) snprintf(e, n, "%s", ee);
        failed |= m == -1;
    }
    return failed ? -1 : 0;
}

/* ---- the value cache ---- */

typedef struct cq_cached {
    const char *text; /* borrowed from a compiled source */
    bool cel;
    int rc;
    qty v;
    char *err;
} cq_cached;

struct cq_cache {
    const json_t *obj, *labels; /* the object's metadata.labels, once looked up */
    cq_cached *v;
    size_t n, cap;
};

static const json_t *labels_of(const json_t *obj, cq_cache *c)
{
    if (c && c->obj == obj) return c->labels;
    const json_t *l = json_object_get(json_object_get(obj, "metadata"), "labels");
    if (c) {
        c->obj = obj;
        c->labels = l;
    }
    return l;
}

cq_cache *cq_cache_new(void)
{
    return calloc(1, sizeof(cq_cache));
}

void cq_cache_free(cq_cache *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].err);
    free(c->v);
    free(c);
}

static const cq_cached *cache_find(const cq_cache *c, const char *text, bool cel)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (c->v[i].cel == cel && !strcmp(c->v[i].text, text)) return &c->v[i];
    return NULL;
}

static void cache_put(cq_cache *c, const char *text, bool cel, int rc, const qty *v,
                      const char *err)
{
    if (!c) return;
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 4;
        cq_cached *nv = realloc(c->v, nc * sizeof *nv);
        if (!nv) return; /* a cache: best effort */
        c->v = nv;
        c->cap = nc;
    }
    char *e = rc ? strdup(err) : NULL;
    if (rc && !e) return;
    c->v[c->n++] = (cq_cached){text, cel, rc, *v, e};
}

/* The raw value of source s for obj: 0; 1 when it cannot be read as a
 * quantity (e set; *v 0); -1 out of memory. */
static int source_value(const cq_source *s, const json_t *obj, cq_cache *cache, qty *v, char *e,
                        size_t n)
{
    if (s->op == CQ_OP_COUNT) {
        *v = qty_from_int64(1, 0, QTY_DECIMAL_SI);
        return 0;
    }
    bool cel = s->cel != NULL;
    const char *text = cel ? s->cel_text : s->path_text;
    const cq_cached *hit = cache_find(cache, text, cel);
    if (hit) {
        *v = hit->v;
        if (hit->rc) snprintf(e, n, "%s", hit->err);
        return hit->rc;
    }
    const json_t *vars[1] = {obj};
    int rc = cel ? cel_eval_quantity(s->cel, vars, NULL, v, e, n)
                 : jp_quantity_sum(s->path, obj, v, e, n);
    if (cel ? rc == CEL_ERR_NOMEM : rc == JP_ERR_NOMEM) return -1;
    rc = rc ? 1 : 0;
    if (rc) *v = qty_zero(QTY_DECIMAL_SI);
    cache_put(cache, text, cel, rc, v, e);
    return rc;
}

/* One source's value v folded into an object's usage and net: they are one
 * sum until a sub makes them differ; usage is clamped at 0 after each
 * source. 0, or -1 beyond precision. */
static int fold(cq_op op, const qty *v, bool *diverged, qty *usage, qty *net)
{
    bool sub = op == CQ_OP_SUB;
    if (sub && !*diverged) {
        *usage = *net;
        *diverged = true;
    }
    if ((sub ? qty_sub(net, v) : qty_add(net, v)) != 0 ||
        (*diverged && (sub ? qty_sub(usage, v) : qty_add(usage, v)) != 0))
        return -1;
    if (*diverged && qty_sign(usage) < 0) *usage = qty_zero(qty_get_format(usage));
    return 0;
}

int cq_object_usage(const cq_quota *q, const char *group, const char *version, const char *kind,
                    const json_t *obj, cq_cache *cache, bool *matched, qty *usage, qty *net,
                    bool *problem, char *err, size_t errlen)
{
    *matched = *problem = false;
    *usage = qty_zero(QTY_DECIMAL_SI);
    *net = qty_zero(QTY_DECIMAL_SI);
    if (errlen) *err = '\0';
    const json_t *labels = labels_of(obj, cache);
    if (!any_matches(q->scope, q->nscope, labels)) return 0;
    bool diverged = false;
    for (size_t i = 0; i < q->nsrc; i++) {
        const cq_source *s = &q->src[i];
        char e[1024];
        if (strcmp(s->kind, kind) || strcmp(s->group, group) || strcmp(s->version, version))
            continue;
        int sel = source_selects(s, obj, labels, e, sizeof e);
        if (sel == -2) return fail(err, errlen, "out of memory");
        if (sel == -1 && !*problem) {
            *problem = true;
            snprintf(err, errlen, "source path \"%s\" cel \"%s\" op \"%s\" selectors: %s",
                     s->path_text, s->cel_text, op_name(s->op), e);
        }
        if (sel != 1) continue;
        qty v;
        int rc = source_value(s, obj, cache, &v, e, sizeof e);
        if (rc < 0) return fail(err, errlen, "out of memory");
        if (rc > 0 && !*problem) {
            *problem = true;
            snprintf(err, errlen,
                     "source path \"%s\" cel \"%s\" op \"%s\" did not resolve to a valid "
                     "quantity: %s",
                     s->path_text, s->cel_text, op_name(s->op), e);
        }
        *matched = true;
        if (fold(s->op, &v, &diverged, usage, net) != 0)
            return fail(err, errlen, "usage beyond supported precision");
    }
    if (!diverged) *usage = *net;
    return 0;
}

int cq_object_usage_text(const cq_quota *q, const char *group, const char *version,
                         const char *kind, const char *text, size_t len, bool *matched, qty *usage,
                         qty *net)
{
    *matched = false;
    *usage = *net = qty_zero(QTY_DECIMAL_SI);
    if (q->nscope) return 1;
    bool diverged = false;
    for (size_t i = 0; i < q->nsrc; i++) {
        const cq_source *s = &q->src[i];
        if (strcmp(s->kind, kind) || strcmp(s->group, group) || strcmp(s->version, version))
            continue;
        qty v;
        if (s->nsels || s->cel) return 1;
        if (s->op == CQ_OP_COUNT)
            v = qty_from_int64(1, 0, QTY_DECIMAL_SI);
        else if (jp_quantity_sum_text(s->path, text, len, &v) != 0)
            return 1;
        *matched = true;
        if (fold(s->op, &v, &diverged, usage, net) != 0) return 1;
    }
    if (!diverged) *usage = *net;
    return 0;
}

void cq_exceeds_text(char *buf, size_t n, bool creating, bool global, const char *name,
                     const qty *requested, const qty *current, const qty *limit,
                     const qty *reserved)
{
    char req[QTY_STR_MAX], cur[QTY_STR_MAX], lim[QTY_STR_MAX], res[QTY_STR_MAX];
    qty_format_str(requested, req, sizeof req);
    qty_format_str(current, cur, sizeof cur);
    qty_format_str(limit, lim, sizeof lim);
    qty_format_str(reserved, res, sizeof res);
    snprintf(buf, n,
             "%s resource exceeds limit for %s \"%s\" (requested=%s, currentUsed=%s, "
             "available=0, limit=%s, inflightReserved=%s)",
             creating ? "creating" : "updating", global ? "GlobalCustomQuota" : "CustomQuota", name,
             req, cur, lim, res);
}
