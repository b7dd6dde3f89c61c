/* crd_kinds.c - rows of the kind table for CustomResourceDefinitions, and
 * the hooks custom resources go through (see crd_kinds.h). */
#include "api/crd_kinds.h"
#include "core/jdump.h"

#include "api/crd.h"
#include "api/kinds.h"
#include "api/schema.h"
#include "api/status.h"
#include "api/typecheck.h"
#include "core/jget.h"
#include "core/jsonpath.h"
#include "core/jsonschema.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One published row and everything it owns. Strings live in `keep` (a JSON
 * array of strings: their text is stable while the array holds them). */
typedef struct cr_row {
    api_kind k;
    json_t *keep;
    js_schema *schema;
    api_field *fields;
    api_scale_paths scale;
    api_column *cols;
    size_t ncols;
    json_t *openapi;
    const struct cr_row *tomb_of; /* a retired copy of that row (shares its strings) */
    struct cr_row *next_built;    /* every row ever built, freed at cleanup */
} cr_row;

/* One definition's current rows. */
typedef struct cr_def {
    char *group, *plural;
    json_t *fingerprint; /* what the rows were built from */
    cr_row **rows;
    size_t nrows;
    struct cr_def *next;
} cr_def;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static cr_def *defs;
static cr_row *built;

/* ---- the hooks ---- */

static const cr_row *row_of(const api_kind *k)
{
    return k->data;
}

static void cr_defaults(const api_kind *k, json_t *obj)
{
    js_default(row_of(k)->schema, obj);
}

/* The envelope a custom resource's metadata is decoded with: ObjectMeta as
 * every kind has it (wrong types are the typed 400, unknown metadata fields
 * pruned and reported). */
static sch_field env_field;
static sch_msg env_msg;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void env_init(void)
{
    const sch_field *f = sch_field_find(sch_kind("v1", "ConfigMap"), "metadata");
    if (f) env_field = *f;
    env_msg = (sch_msg){"CustomResource", "io.k8s.apimachinery.pkg.apis.meta.v1", &env_field, 1};
}

static int cr_decode(const api_kind *k, json_t *obj, tc_result *r)
{
    pthread_once(&env_once, env_init);
    json_t *meta = json_object_get(obj, "metadata");
    if (meta && env_field.json) {
        json_t *env = json_pack("{s:O}", "metadata", meta);
        if (!env) {
            snprintf(r->error, sizeof r->error, "out of memory");
            return -1;
        }
        int rc = tc_decode(&env_msg, env, r);
        /* null metadata members dropped: the same object, in place */
        json_decref(env);
        if (rc != 0) return -1;
    }
    if (!r->unknown) r->unknown = json_array();
    if (!r->unknown || js_prune(row_of(k)->schema, obj, r->unknown) < 0) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    if (json_array_size(r->unknown) == 0) {
        json_decref(r->unknown);
        r->unknown = NULL;
    }
    /* as typed decoding: the first TC_MAX_UNKNOWN are reported, all pruned */
    while (json_array_size(r->unknown) > TC_MAX_UNKNOWN)
        json_array_remove(r->unknown, json_array_size(r->unknown) - 1);
    return 0;
}

/* field.TooMany, which status.h's ferr has no constructor for. */
static void too_many(json_t *causes, const char *field, const json_t *value, const char *detail)
{
    char *v = value ? jdump(value, NULL) : NULL;
    char msg[1024];
    snprintf(msg, sizeof msg, "Too many: %s: %s", v ? v : "null", detail ? detail : "");
    free(v);
    json_array_append_new(causes, json_pack("{s:s, s:s, s:s}", "reason", "FieldValueTooMany",
                                            "message", msg, "field", field));
}

static void add_schema_errors(const js_errors *errs, json_t *causes)
{
    static const ferr_type map[] = {
        [JS_INVALID] = FERR_INVALID,   [JS_TYPE_INVALID] = FERR_TYPE_INVALID,
        [JS_REQUIRED] = FERR_REQUIRED, [JS_NOT_SUPPORTED] = FERR_NOT_SUPPORTED,
        [JS_TOO_LONG] = FERR_TOO_LONG, [JS_FORBIDDEN] = FERR_FORBIDDEN,
    };
    for (size_t i = 0; i < errs->n; i++) {
        const js_error *e = &errs->v[i];
        if (e->reason == JS_TOO_MANY)
            too_many(causes, e->field, e->value, e->detail);
        else
            ferr_add(causes, map[e->reason], e->field, e->value, e->detail);
    }
}

/* The value at a dotted path ("spec.replicas"), or NULL. */
static const json_t *at_path(const json_t *obj, const char *dotted)
{
    return api_json_path(obj, dotted);
}

/* ValidateScaleSpec and ValidateScaleStatus: the replicas paths hold
 * integers within int32 (field paths are the CRD's, with their '.'). */
static void validate_replicas(const json_t *obj, const char *path, json_t *causes)
{
    char field[300];
    snprintf(field, sizeof field, ".%s", path);
    const json_t *v = at_path(obj, path);
    if (!v) return;
    if (!json_is_integer(v)) {
        char why[200];
        snprintf(why, sizeof why, ".%s accessor error: %s is of the type %s, expected int64", path,
                 json_is_string(v) ? "string"
                 : json_is_real(v) ? "float64"
                                   : "value",
                 json_is_string(v) ? "string"
                 : json_is_real(v) ? "float64"
                                   : "interface {}");
        json_t *zero = json_integer(0);
        ferr_add(causes, FERR_INVALID, field, zero, why);
        json_decref(zero);
    } else if (json_integer_value(v) < 0) {
        ferr_add(causes, FERR_INVALID, field, v, "should be a non-negative integer");
    } else if (json_integer_value(v) > INT32_MAX) {
        ferr_add(causes, FERR_INVALID, field, v, "should be less than or equal to 2147483647");
    }
}

static void cr_validate(const api_kind *k, const json_t *obj, const json_t *old, json_t *causes)
{
    const cr_row *r = row_of(k);
    js_errors errs = {0};
    js_validate(r->schema, obj, &errs);
    add_schema_errors(&errs, causes);
    js_errors_free(&errs);
    if (k->scale) {
        validate_replicas(obj, k->scale->spec_replicas, causes);
        validate_replicas(obj, k->scale->status_replicas, causes);
    }
}

/* ---- building rows ---- */

/* A copy of s owned by the row (NULL stays NULL). */
static const char *keep(cr_row *r, const char *s)
{
    if (!s) return NULL;
    json_t *j = json_string(s);
    if (!j || json_array_append_new(r->keep, j) != 0) return NULL;
    return json_string_value(j);
}

/* "a,b" from a JSON array of strings, kept by the row; NULL for none. */
static const char *keep_csv(cr_row *r, const json_t *list)
{
    char buf[2048] = "";
    size_t i, off = 0;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        int w = snprintf(buf + off, sizeof buf - off, "%s%s", off ? "," : "",
                         json_string_value(v) ? json_string_value(v) : "");
        if (w < 0 || (size_t)w >= sizeof buf - off) break;
        off += (size_t)w;
    }
    return off ? keep(r, buf) : NULL;
}

static void row_free(cr_row *r)
{
    if (!r) return;
    if (!r->tomb_of) {
        js_free(r->schema);
        for (size_t i = 0; i < r->ncols; i++)
            jp_free((jp_expr *)r->cols[i].path);
        free(r->cols);
        free(r->fields);
        json_decref(r->openapi);
        json_decref(r->keep);
    }
    free(r);
}

/* Printer columns (upstream's default when none: Age). */
static int build_columns(cr_row *r, const json_t *version, char *err, size_t n)
{
    const json_t *cols = json_object_get(version, "additionalPrinterColumns");
    json_t *dflt = NULL;
    if (!json_array_size(cols)) {
        dflt = json_pack("[{s:s, s:s, s:s, s:s}]", "name", "Age", "type", "date", "jsonPath",
                         ".metadata.creationTimestamp", "description",
                         "CreationTimestamp is a timestamp representing the server time when this "
                         "object was created. It is not guaranteed to be set in happens-before "
                         "order across separate operations. Clients may not set this value. It "
                         "is represented in RFC3339 form and is in UTC.\n\nPopulated by the "
                         "system. Read-only. Null for lists. More info: "
                         "https://git.k8s.io/community/contributors/devel/sig-architecture/"
                         "api-conventions.md#metadata");
        cols = dflt;
    }
    size_t nc = json_array_size(cols), i;
    json_t *c;
    r->cols = calloc(nc ? nc : 1, sizeof *r->cols);
    int rc = r->cols ? 0 : -1;
    json_array_foreach(cols, i, c)
    {
        if (rc != 0) break;
        const char *jp = jstr(c, "jsonPath") ?: "";
        char tmpl[1100], desc[1200];
        snprintf(tmpl, sizeof tmpl, "{%s}", jp);
        jp_expr *e = jp_compile(tmpl, NULL, err, n);
        if (!e) {
            rc = -1;
            break;
        }
        const char *d = jstr(c, "description");
        snprintf(desc, sizeof desc, "Custom resource definition column (in JSONPath format): %s",
                 jp);
        r->cols[r->ncols++] = (api_column){keep(r, jstr(c, "name") ?: ""),
                                           keep(r, jstr(c, "type") ?: "string"),
                                           keep(r, jstr(c, "format") ?: ""),
                                           keep(r, d && *d ? d : desc),
                                           (int)json_integer_value(json_object_get(c, "priority")),
                                           e};
    }
    json_decref(dflt);
    return rc;
}

/* selectableFields as field-selector labels ("spec.color" at spec.color). */
static int build_fields(cr_row *r, const json_t *version)
{
    const json_t *sf = json_object_get(version, "selectableFields");
    size_t n = json_array_size(sf), i;
    json_t *f;
    if (!n) return 0;
    r->fields = calloc(n + 1, sizeof *r->fields);
    if (!r->fields) return -1;
    size_t k = 0;
    json_array_foreach(sf, i, f)
    {
        const char *jp = jstr(f, "jsonPath");
        if (!jp || jp[0] != '.') continue;
        const char *label = keep(r, jp + 1);
        r->fields[k++] = (api_field){label, label, NULL, NULL};
    }
    return 0;
}

static const char *strip_dot(cr_row *r, const char *p)
{
    return p && *p ? keep(r, p[0] == '.' ? p + 1 : p) : NULL;
}

/* Whether objects of this resource may be stored in another version than
 * `version`: more than one version, or an older stored version. */
static bool converts(const json_t *crd, const char *version)
{
    if (json_array_size(json_object_get(json_object_get(crd, "spec"), "versions")) > 1) return true;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(json_object_get(crd, "status"), "storedVersions"), i,
                       v) if (strcmp(json_string_value(v) ?: "", version) != 0) return true;
    return false;
}

static cr_row *build_row(const json_t *crd, const json_t *version, bool terminating, char *err,
                         size_t n)
{
    const json_t *spec = json_object_get(crd, "spec");
    const json_t *acc = json_object_get(json_object_get(crd, "status"), "acceptedNames");
    const json_t *schema = json_object_get(json_object_get(version, "schema"), "openAPIV3Schema");
    const json_t *subs = json_object_get(version, "subresources");
    const char *vname = jstr(version, "name") ?: "";
    cr_row *r = calloc(1, sizeof *r);
    if (!r || !(r->keep = json_array())) {
        free(r);
        snprintf(err, n, "out of memory");
        return NULL;
    }
    if (!(r->schema = js_compile(schema, err, n)) || build_columns(r, version, err, n) != 0 ||
        build_fields(r, version) != 0 || !(r->openapi = jcopy(schema))) {
        row_free(r);
        return NULL;
    }
    api_kind *k = &r->k;
    k->group = keep(r, jstr(spec, "group") ?: "");
    k->version = keep(r, vname);
    k->kind = keep(r, jstr(acc, "kind") ?: "");
    k->resource = keep(r, jstr(acc, "plural") ?: "");
    k->singular = keep(r, jstr(acc, "singular") ?: "");
    k->short_names = keep_csv(r, json_object_get(acc, "shortNames"));
    k->categories = keep_csv(r, json_object_get(acc, "categories"));
    k->list_kind = keep(r, jstr(acc, "listKind"));
    k->storage_version = keep(r, crd_storage_version(crd));
    k->namespaced = crd_namespaced(crd);
    k->name_rule = API_NAME_SUBDOMAIN;
    k->fields = r->fields;
    if (json_object_get(subs, "status")) k->subresources |= API_SUB_STATUS;
    const json_t *scale = json_object_get(subs, "scale");
    if (json_is_object(scale)) {
        k->subresources |= API_SUB_SCALE;
        r->scale.spec_replicas = strip_dot(r, jstr(scale, "specReplicasPath"));
        r->scale.status_replicas = strip_dot(r, jstr(scale, "statusReplicasPath"));
        r->scale.label_selector = strip_dot(r, jstr(scale, "labelSelectorPath"));
        k->scale = &r->scale;
    }
    k->columns = r->cols;
    k->ncolumns = r->ncols;
    k->openapi_schema = r->openapi;
    k->defaults_row = cr_defaults;
    k->validate_row = cr_validate;
    k->decode_row = cr_decode;
    k->data = r;
    k->flags = API_KIND_RUNTIME | API_KIND_NO_STRATEGIC | API_KIND_GENERATION_ALL;
    if (!json_is_true(json_object_get(version, "served"))) k->flags |= API_KIND_UNSERVED;
    if (!json_is_true(json_object_get(version, "storage"))) k->flags |= API_KIND_SECONDARY;
    if (terminating) k->flags |= API_KIND_TERMINATING;
    if (converts(crd, vname)) k->flags |= API_KIND_CONVERTS;
    if (js_has_defaults(r->schema)) k->flags |= API_KIND_READ_DEFAULTS;
    if (!k->group || !k->version || !k->kind || !k->resource || !k->singular ||
        (k->scale && (!r->scale.spec_replicas || !r->scale.status_replicas))) {
        snprintf(err, n, "out of memory or incomplete definition");
        row_free(r);
        return NULL;
    }
    return r;
}

/* ---- publication ---- */

static cr_def *def_find(const char *group, const char *plural)
{
    for (cr_def *d = defs; d; d = d->next)
        if (!strcmp(d->group, group) && !strcmp(d->plural, plural)) return d;
    return NULL;
}

/* Record a row for cleanup. Under mu. */
static void remember(cr_row *r)
{
    r->next_built = built;
    built = r;
}

/* Publish a retired copy of r: unserved and secondary. Under mu. */
static void retire_row(const cr_row *r)
{
    cr_row *t = calloc(1, sizeof *t);
    if (!t) return; /* the old row stays served; the next sync retries */
    t->k = r->k;
    t->k.flags |= API_KIND_UNSERVED | API_KIND_SECONDARY;
    t->tomb_of = r;
    t->k.data = r; /* hooks of a retired row still find its schema */
    if (api_kind_publish(&t->k, NULL) != 0) {
        free(t);
        return;
    }
    remember(t);
}

/* What the rows are built from (a deep copy: the caller may change crd). */
static json_t *fingerprint(const json_t *crd, bool terminating)
{
    const json_t *st = json_object_get(crd, "status");
    json_t *refs = json_pack("{s:O?, s:O?, s:O?, s:b}", "spec", json_object_get(crd, "spec"),
                             "names", json_object_get(st, "acceptedNames"), "stored",
                             json_object_get(st, "storedVersions"), "terminating", terminating);
    json_t *fp = jcopy(refs);
    json_decref(refs);
    return fp;
}

static bool rows_have_version(cr_row **rows, size_t n, const char *version)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i]->k.version, version)) return true;
    return false;
}

int crd_kinds_publish(const json_t *crd, bool terminating, char *err, size_t errlen)
{
    const json_t *spec = json_object_get(crd, "spec");
    const json_t *versions = json_object_get(spec, "versions");
    const char *group = jstr(spec, "group"),
               *plural = jstr(json_object_get(spec, "names"), "plural");
    if (!group || !plural || !json_array_size(versions)) {
        snprintf(err, errlen, "incomplete definition");
        return -1;
    }
    json_t *fp = fingerprint(crd, terminating);
    if (!fp) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pthread_mutex_lock(&mu);
    cr_def *d = def_find(group, plural);
    if (d && json_equal(d->fingerprint, fp)) {
        pthread_mutex_unlock(&mu);
        json_decref(fp);
        return 0;
    }
    size_t n = json_array_size(versions), i;
    cr_row **rows = calloc(n, sizeof *rows);
    int rc = rows ? 0 : -1;
    json_t *v;
    json_array_foreach(versions, i, v)
    {
        if (rc != 0) break;
        if (!(rows[i] = build_row(crd, v, terminating, err, errlen))) rc = -1;
    }
    if (rc != 0) {
        for (i = 0; rows && i < n; i++)
            row_free(rows[i]);
        free(rows);
        pthread_mutex_unlock(&mu);
        json_decref(fp);
        return -1;
    }
    if (!d && (d = calloc(1, sizeof *d))) {
        d->group = strdup(group);
        d->plural = strdup(plural);
        d->next = defs;
        defs = d;
    }
    /* Built: publish. A row that cannot be published (the table is full)
     * is freed; those published live until cleanup. */
    for (i = 0; i < n; i++) {
        if (api_kind_publish(&rows[i]->k, NULL) != 0) {
            snprintf(err, errlen, "the kind table is full");
            row_free(rows[i]);
            rows[i] = NULL;
            rc = -1;
            continue;
        }
        remember(rows[i]);
    }
    if (d) {
        for (i = 0; i < d->nrows; i++) /* versions dropped from the definition */
            if (!rows_have_version(rows, n, d->rows[i]->k.version)) retire_row(d->rows[i]);
        free(d->rows);
        d->rows = rows;
        d->nrows = n;
        size_t k = 0;
        for (i = 0; i < n; i++)
            if (rows[i]) rows[k++] = rows[i];
        d->nrows = k;
        json_decref(d->fingerprint);
        d->fingerprint = rc == 0 ? json_incref(fp) : NULL;
    } else {
        free(rows);
    }
    pthread_mutex_unlock(&mu);
    json_decref(fp);
    return rc == 0 ? 1 : -1;
}

void crd_kinds_retire(const char *group, const char *plural)
{
    pthread_mutex_lock(&mu);
    cr_def **pp = &defs;
    while (*pp && (strcmp((*pp)->group, group) || strcmp((*pp)->plural, plural)))
        pp = &(*pp)->next;
    cr_def *d = *pp;
    if (d) {
        for (size_t i = 0; i < d->nrows; i++)
            retire_row(d->rows[i]);
        *pp = d->next;
        free(d->group);
        free(d->plural);
        free(d->rows);
        json_decref(d->fingerprint);
        free(d);
    }
    pthread_mutex_unlock(&mu);
}

bool crd_kinds_served(const char *group, const char *plural)
{
    pthread_mutex_lock(&mu);
    cr_def *d = def_find(group, plural);
    bool served = false;
    for (size_t i = 0; d && i < d->nrows; i++)
        served |= api_kind_served(&d->rows[i]->k);
    pthread_mutex_unlock(&mu);
    return served;
}

void crd_kinds_cleanup(void)
{
    pthread_mutex_lock(&mu);
    api_kind_forget_runtime();
    while (defs) {
        cr_def *d = defs;
        defs = d->next;
        free(d->group);
        free(d->plural);
        free(d->rows);
        json_decref(d->fingerprint);
        free(d);
    }
    /* tombstones first: they point into the rows they retired */
    for (int pass = 0; pass < 2; pass++) {
        cr_row **pp = &built;
        while (*pp) {
            cr_row *r = *pp;
            if ((pass == 0) == (r->tomb_of != NULL)) {
                *pp = r->next_built;
                row_free(r);
            } else {
                pp = &r->next_built;
            }
        }
    }
    pthread_mutex_unlock(&mu);
}
