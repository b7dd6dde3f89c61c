/* discovery.c - discovery documents from the kind registry (see discovery.h).
 *
 * Everything here is derived from the registry rows; the only knowledge kept
 * locally is upstream's: which verbs a resource has, what each subresource
 * answers with, and in which order groups and versions are listed. Those are
 * the tables at the top, and openapi.c reads them through disc_verbs and
 * disc_subresources so the two documents can never disagree.
 */
#include "api/discovery.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Upstream knowledge ------------------------------------------------ */

static const char *const verbs_all[] = {
    "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch", NULL};
/* Namespace storage has no collection deleter upstream: "kubectl delete ns --all"
 * deletes them one by one. */
static const char *const verbs_namespace[] = {"create", "delete", "get",   "list",
                                              "patch",  "update", "watch", NULL};
static const char *const verbs_subresource_rw[] = {"get", "patch", "update", NULL};
static const char *const verbs_create[] = {"create", NULL};
static const char *const verbs_get[] = {"get", NULL};

/* Subresources in alphabetical order, as upstream lists them. kind NULL means
 * the parent's kind in the parent's group version. */
static const struct {
    unsigned bit;
    disc_sub sub;
} sub_table[] = {
    {API_SUB_BINDING, {"binding", "", "v1", "Binding", false, verbs_create}},
    {API_SUB_LOG, {"log", NULL, NULL, NULL, false, verbs_get}},
    {API_SUB_RESIZE, {"resize", NULL, NULL, NULL, false, verbs_subresource_rw}},
    {API_SUB_SCALE, {"scale", "autoscaling", "v1", "Scale", true, verbs_subresource_rw}},
    {API_SUB_STATUS, {"status", NULL, NULL, NULL, false, verbs_subresource_rw}},
    {API_SUB_TOKEN, {"token", "authentication.k8s.io", "v1", "TokenRequest", false, verbs_create}},
};

/* Resources served without storage, by the server layer (server/authz.c,
 * server/reviews.c, server/quotareview.c): POST only, as upstream's review
 * APIs, which list them with the verb create and no short names. */
static const struct {
    const char *group, *version, *resource, *singular, *kind;
    bool namespaced;
} create_only[] = {
    {"authentication.k8s.io", "v1", "selfsubjectreviews", "selfsubjectreview", "SelfSubjectReview",
     false},
    {"authentication.k8s.io", "v1", "tokenreviews", "tokenreview", "TokenReview", false},
    {"authorization.k8s.io", "v1", "localsubjectaccessreviews", "localsubjectaccessreview",
     "LocalSubjectAccessReview", true},
    {"authorization.k8s.io", "v1", "selfsubjectaccessreviews", "selfsubjectaccessreview",
     "SelfSubjectAccessReview", false},
    {"authorization.k8s.io", "v1", "selfsubjectrulesreviews", "selfsubjectrulesreview",
     "SelfSubjectRulesReview", false},
    {"authorization.k8s.io", "v1", "subjectaccessreviews", "subjectaccessreview",
     "SubjectAccessReview", false},
    {"allot.dev", "v1", "quotareviews", "quotareview", "QuotaReview", false},
};
#define NCREATE_ONLY (sizeof create_only / sizeof *create_only)

/* kube-apiserver's group priority (the order of GET /apis); groups not listed
 * (CRD-like groups registered at startup) follow in registry order. */
static const char *const group_priority[] = {"apiregistration.k8s.io",
                                             "apps",
                                             "events.k8s.io",
                                             "authentication.k8s.io",
                                             "authorization.k8s.io",
                                             "autoscaling",
                                             "batch",
                                             "certificates.k8s.io",
                                             "networking.k8s.io",
                                             "policy",
                                             "rbac.authorization.k8s.io",
                                             "storage.k8s.io",
                                             "admissionregistration.k8s.io",
                                             "apiextensions.k8s.io",
                                             "scheduling.k8s.io",
                                             "coordination.k8s.io",
                                             "node.k8s.io",
                                             "discovery.k8s.io",
                                             "flowcontrol.apiserver.k8s.io",
                                             "resource.k8s.io",
                                             NULL};

const char *const *disc_verbs(const api_kind *k)
{
    if (!*k->group && strcmp(k->resource, "namespaces") == 0) return verbs_namespace;
    return verbs_all;
}

bool disc_has_verb(const api_kind *k, const char *verb)
{
    for (const char *const *v = disc_verbs(k); *v; v++)
        if (strcmp(*v, verb) == 0) return true;
    return false;
}

size_t disc_subresources(const api_kind *k, disc_sub out[DISC_MAX_SUBS])
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof sub_table / sizeof *sub_table && n < DISC_MAX_SUBS; i++) {
        if (!(k->subresources & sub_table[i].bit)) continue;
        out[n] = sub_table[i].sub;
        if (!out[n].kind) {
            out[n].group = k->group;
            out[n].version = k->version;
            out[n].kind = k->kind;
        }
        n++;
    }
    return n;
}

/* ---- Versions and groups ----------------------------------------------- */

/* Parse "v<major>[(alpha|beta)<minor>]": rank 3 GA, 2 beta, 1 alpha, 0 other. */
static int version_rank(const char *v, long *major, long *minor)
{
    char *end;
    *major = *minor = 0;
    if (v[0] != 'v' || v[1] < '1' || v[1] > '9') return 0;
    *major = strtol(v + 1, &end, 10);
    if (!*end) return 3;
    int rank = strncmp(end, "beta", 4) == 0 ? 2 : strncmp(end, "alpha", 5) == 0 ? 1 : 0;
    if (!rank) return 0;
    const char *m = end + (rank == 2 ? 4 : 5);
    if (*m < '1' || *m > '9') return 0;
    *minor = strtol(m, &end, 10);
    return *end ? 0 : rank;
}

int disc_version_cmp(const char *a, const char *b)
{
    long amaj, amin, bmaj, bmin;
    int ar = version_rank(a, &amaj, &amin), br = version_rank(b, &bmaj, &bmin);
    if (ar != br) return br - ar;
    if (ar == 0) return strcmp(a, b); /* non-kube versions: lexical */
    if (amaj != bmaj) return amaj > bmaj ? -1 : 1;
    if (amin != bmin) return amin > bmin ? -1 : 1;
    return 0;
}

static int version_qsort_cmp(const void *a, const void *b)
{
    return disc_version_cmp(*(const char *const *)a, *(const char *const *)b);
}

size_t disc_group_versions(const char *group, const char *out[DISC_MAX_VERSIONS])
{
    size_t n = 0;
    size_t nk = api_kind_count();
    for (size_t i = 0; i < nk; i++) {
        const api_kind *k = api_kind_at(i);
        if (!api_kind_served(k) || strcmp(k->group, group) != 0) continue;
        size_t j = 0;
        while (j < n && strcmp(out[j], k->version) != 0)
            j++;
        if (j == n && n < DISC_MAX_VERSIONS) out[n++] = k->version;
    }
    for (size_t i = 0; i < NCREATE_ONLY; i++) {
        if (strcmp(create_only[i].group, group) != 0) continue;
        size_t j = 0;
        while (j < n && strcmp(out[j], create_only[i].version) != 0)
            j++;
        if (j == n && n < DISC_MAX_VERSIONS) out[n++] = create_only[i].version;
    }
    qsort(out, n, sizeof *out, version_qsort_cmp);
    return n;
}

static size_t group_rank(const char *group)
{
    size_t i = 0;
    for (; group_priority[i]; i++)
        if (strcmp(group_priority[i], group) == 0) return i;
    return i;
}

/* Non-core groups, in discovery order; returns the count. */
#define MAX_GROUPS 512
static size_t served_groups(const char *out[MAX_GROUPS])
{
    size_t n = 0, nk = api_kind_count();
    /* (before the kinds: after them come groups defined at run time) */
    for (size_t i = 0; i < NCREATE_ONLY; i++) {
        const char *g = create_only[i].group;
        size_t j = 0;
        while (j < n && strcmp(out[j], g) != 0)
            j++;
        if (j == n && n < MAX_GROUPS) out[n++] = g;
    }
    for (size_t i = 0; i < nk; i++) {
        if (!api_kind_served(api_kind_at(i))) continue;
        const char *g = api_kind_at(i)->group;
        size_t j = 0;
        while (j < n && strcmp(out[j], g) != 0)
            j++;
        if (*g && j == n && n < MAX_GROUPS) out[n++] = g;
    }
    /* Stable insertion sort by priority keeps registry order among unlisted groups. */
    for (size_t i = 1; i < n; i++) {
        const char *g = out[i];
        size_t j = i;
        for (; j > 0 && group_rank(out[j - 1]) > group_rank(g); j--)
            out[j] = out[j - 1];
        out[j] = g;
    }
    return n;
}

static json_t *group_version(const char *group, const char *version)
{
    char gv[256];
    snprintf(gv, sizeof gv, "%s%s%s", group, *group ? "/" : "", version);
    return json_pack("{s:s, s:s}", "groupVersion", gv, "version", version);
}

/* APIGroup without kind/apiVersion (as listed inside APIGroupList). */
static json_t *api_group(const char *group)
{
    const char *versions[DISC_MAX_VERSIONS];
    size_t n = disc_group_versions(group, versions);
    if (n == 0) return NULL;
    json_t *vs = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(vs, group_version(group, versions[i]));
    return json_pack("{s:s, s:o, s:o}", "name", group, "versions", vs, "preferredVersion",
                     group_version(group, versions[0]));
}

json_t *disc_core_versions(const char *server_address)
{
    return json_pack("{s:s, s:[s], s:[{s:s, s:s}]}", "kind", "APIVersions", "versions", "v1",
                     "serverAddressByClientCIDRs", "clientCIDR", "0.0.0.0/0", "serverAddress",
                     server_address ? server_address : "");
}

json_t *disc_group_list(void)
{
    const char *groups[MAX_GROUPS];
    size_t n = served_groups(groups);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, api_group(groups[i]));
    return json_pack("{s:s, s:s, s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups", arr);
}

json_t *disc_group(const char *group)
{
    if (!group || !*group) return NULL;
    json_t *g = api_group(group);
    if (!g) return NULL;
    json_object_set_new(g, "kind", json_string("APIGroup"));
    json_object_set_new(g, "apiVersion", json_string("v1"));
    return g;
}

/* ---- Resources ---------------------------------------------------------- */

static json_t *string_array(const char *const *v)
{
    json_t *arr = json_array();
    for (; *v; v++)
        json_array_append_new(arr, json_string(*v));
    return arr;
}

/* "po,pods" -> ["po","pods"]; NULL or "" -> NULL (field omitted, as upstream). */
static json_t *csv_array(const char *csv)
{
    if (!csv || !*csv) return NULL;
    json_t *arr = json_array();
    while (*csv) {
        size_t len = strcspn(csv, ",");
        if (len) json_array_append_new(arr, json_stringn(csv, len));
        csv += len + (csv[len] == ',');
    }
    return arr;
}

static int kind_by_resource(const void *a, const void *b)
{
    return strcmp((*(const api_kind *const *)a)->resource, (*(const api_kind *const *)b)->resource);
}

#define MAX_GV_KINDS 512
/* Kinds served in one group version, sorted by resource name; returns the count. */
static size_t gv_kinds(const char *group, const char *version, const api_kind *out[MAX_GV_KINDS])
{
    size_t n = 0, nk = api_kind_count();
    for (size_t i = 0; i < nk && n < MAX_GV_KINDS; i++) {
        const api_kind *k = api_kind_at(i);
        if (api_kind_served(k) && strcmp(k->group, group) == 0 && strcmp(k->version, version) == 0)
            out[n++] = k;
    }
    qsort(out, n, sizeof *out, kind_by_resource);
    return n;
}

static void set_optional(json_t *obj, const char *key, json_t *value)
{
    if (value) json_object_set_new(obj, key, value);
}

static json_t *resource_row(const api_kind *k)
{
    char hash[13];
    disc_storage_version_hash(k, hash);
    json_t *r = json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", k->resource, "singularName",
                          k->singular, "namespaced", k->namespaced, "kind", k->kind, "verbs",
                          string_array(disc_verbs(k)));
    set_optional(r, "shortNames", csv_array(k->short_names));
    set_optional(r, "categories", csv_array(k->categories));
    json_object_set_new(r, "storageVersionHash", json_string(hash));
    return r;
}

static json_t *subresource_row(const api_kind *k, const disc_sub *s)
{
    char name[256];
    snprintf(name, sizeof name, "%s/%s", k->resource, s->name);
    json_t *r =
        json_pack("{s:s, s:s, s:b}", "name", name, "singularName", "", "namespaced", k->namespaced);
    if (s->own_gv) {
        json_object_set_new(r, "group", json_string(s->group));
        json_object_set_new(r, "version", json_string(s->version));
    }
    json_object_set_new(r, "kind", json_string(s->kind));
    json_object_set_new(r, "verbs", string_array(s->verbs));
    return r;
}

/* Rows (JSON objects with "name" or "resource") sorted by that name. */
static int row_cmp(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    const char *nx = json_string_value(json_object_get(x, "name"));
    const char *ny = json_string_value(json_object_get(y, "name"));
    if (!nx) nx = json_string_value(json_object_get(x, "resource"));
    if (!ny) ny = json_string_value(json_object_get(y, "resource"));
    return strcmp(nx ? nx : "", ny ? ny : "");
}

/* The create-only rows of a group version, appended to `rows` (in the
 * legacy list's shape, or the aggregated one's); returns how many. */
static size_t add_create_only(json_t *rows, const char *group, const char *version, bool agg)
{
    size_t n = 0;
    for (size_t i = 0; i < NCREATE_ONLY; i++) {
        if (strcmp(create_only[i].group, group) || strcmp(create_only[i].version, version))
            continue;
        json_t *r;
        if (agg)
            r = json_pack("{s:s, s:{s:s, s:s, s:s}, s:s, s:s, s:o}", "resource",
                          create_only[i].resource, "responseKind", "group", "", "kind",
                          create_only[i].kind, "version", "", "scope",
                          create_only[i].namespaced ? "Namespaced" : "Cluster", "singularResource",
                          create_only[i].singular, "verbs", string_array(verbs_create));
        else
            r = json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", create_only[i].resource,
                          "singularName", create_only[i].singular, "namespaced",
                          create_only[i].namespaced, "kind", create_only[i].kind, "verbs",
                          string_array(verbs_create));
        json_array_append_new(rows, r);
        n++;
    }
    return n;
}

/* Sort rows by name; a resource's subresource rows ("pods/status") stay
 * right behind it, as "/" sorts before every letter. */
static json_t *sorted_rows(json_t *rows)
{
    size_t n = json_array_size(rows);
    json_t **v = n ? calloc(n, sizeof *v) : NULL;
    if (n && !v) return rows;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(rows, i));
    qsort(v, n, sizeof *v, row_cmp);
    json_array_clear(rows);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(rows, v[i]);
    free(v);
    return rows;
}

json_t *disc_resource_list(const char *group, const char *version)
{
    const api_kind *kinds[MAX_GV_KINDS];
    size_t n = gv_kinds(group, version, kinds);
    json_t *rows = json_array();
    size_t extra = add_create_only(rows, group, version, false);
    if (n == 0 && extra == 0) {
        json_decref(rows);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        disc_sub subs[DISC_MAX_SUBS];
        size_t ns = disc_subresources(kinds[i], subs);
        json_array_append_new(rows, resource_row(kinds[i]));
        for (size_t j = 0; j < ns; j++)
            json_array_append_new(rows, subresource_row(kinds[i], &subs[j]));
    }
    if (extra) sorted_rows(rows);
    json_t *gv = group_version(group, version);
    json_t *list =
        json_pack("{s:s, s:s, s:O, s:o}", "kind", "APIResourceList", "apiVersion", "v1",
                  "groupVersion", json_object_get(gv, "groupVersion"), "resources", rows);
    json_decref(gv);
    return list;
}

/* ---- Aggregated discovery (apidiscovery.k8s.io/v2) ---------------------- */

/* Upstream leaves group/version empty when the response kind is the resource's own. */
static json_t *response_kind(const char *group, const char *version, const char *kind)
{
    return json_pack("{s:s, s:s, s:s}", "group", group, "kind", kind, "version", version);
}

static json_t *agg_subresource(const disc_sub *s)
{
    return json_pack("{s:s, s:o, s:o}", "subresource", s->name, "responseKind",
                     response_kind(s->own_gv ? s->group : "", s->own_gv ? s->version : "", s->kind),
                     "verbs", string_array(s->verbs));
}

static json_t *agg_resource(const api_kind *k)
{
    json_t *r =
        json_pack("{s:s, s:o, s:s, s:s, s:o}", "resource", k->resource, "responseKind",
                  response_kind("", "", k->kind), "scope", k->namespaced ? "Namespaced" : "Cluster",
                  "singularResource", k->singular, "verbs", string_array(disc_verbs(k)));
    set_optional(r, "shortNames", csv_array(k->short_names));
    set_optional(r, "categories", csv_array(k->categories));
    disc_sub subs[DISC_MAX_SUBS];
    size_t ns = disc_subresources(k, subs);
    if (ns) {
        json_t *arr = json_array();
        for (size_t i = 0; i < ns; i++)
            json_array_append_new(arr, agg_subresource(&subs[i]));
        json_object_set_new(r, "subresources", arr);
    }
    return r;
}

static json_t *agg_version(const char *group, const char *version)
{
    const api_kind *kinds[MAX_GV_KINDS];
    size_t n = gv_kinds(group, version, kinds);
    json_t *resources = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(resources, agg_resource(kinds[i]));
    if (add_create_only(resources, group, version, true)) sorted_rows(resources);
    return json_pack("{s:s, s:o, s:s}", "version", version, "resources", resources, "freshness",
                     "Current");
}

static json_t *agg_group(const char *group)
{
    const char *versions[DISC_MAX_VERSIONS];
    size_t n = disc_group_versions(group, versions);
    json_t *vs = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(vs, agg_version(group, versions[i]));
    /* Upstream serialises an empty ObjectMeta with "creationTimestamp": null and
     * omits the name of the core group. */
    json_t *meta = json_pack("{s:n}", "creationTimestamp");
    if (*group) json_object_set_new(meta, "name", json_string(group));
    return json_pack("{s:o, s:o}", "metadata", meta, "versions", vs);
}

json_t *disc_aggregated_as(bool core, bool v2beta1)
{
    json_t *items = json_array();
    if (core) {
        json_array_append_new(items, agg_group(""));
    } else {
        const char *groups[MAX_GROUPS];
        size_t n = served_groups(groups);
        for (size_t i = 0; i < n; i++)
            json_array_append_new(items, agg_group(groups[i]));
    }
    return json_pack("{s:s, s:s, s:{}, s:o}", "kind", "APIGroupDiscoveryList", "apiVersion",
                     v2beta1 ? "apidiscovery.k8s.io/v2beta1" : "apidiscovery.k8s.io/v2", "metadata",
                     "items", items);
}

json_t *disc_aggregated(bool core)
{
    return disc_aggregated_as(core, false);
}

/* ---- /version ------------------------------------------------------------ */

#ifndef ALLOT_GIT_COMMIT
#define ALLOT_GIT_COMMIT "0000000000000000000000000000000000000000"
#endif
#ifndef ALLOT_BUILD_DATE
#define ALLOT_BUILD_DATE "1970-01-01T00:00:00Z"
#endif

#if defined(__x86_64__)
#define DISC_ARCH "amd64"
#elif defined(__aarch64__)
#define DISC_ARCH "arm64"
#elif defined(__arm__)
#define DISC_ARCH "arm"
#elif defined(__s390x__)
#define DISC_ARCH "s390x"
#elif defined(__powerpc64__)
#define DISC_ARCH "ppc64le"
#else
#define DISC_ARCH "unknown"
#endif

json_t *disc_version(void)
{
    /* goVersion and compiler exist for Go builds; kubectl only prints them. */
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "major", DISC_K8S_MAJOR,
                     "minor", DISC_K8S_MINOR, "gitVersion", DISC_GIT_VERSION, "gitCommit",
                     ALLOT_GIT_COMMIT, "gitTreeState", "clean", "buildDate", ALLOT_BUILD_DATE,
                     "goVersion", "n/a", "compiler", "cc", "platform", "linux/" DISC_ARCH);
}

/* ---- Hashes -------------------------------------------------------------- */

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror32(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static void sha256_block(uint32_t h[8], const unsigned char *p)
{
    uint32_t w[64], s[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(s, h, sizeof s);
    for (int i = 0; i < 64; i++) {
        uint32_t e = s[4], a = s[0];
        uint32_t t1 = s[7] + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) +
                      ((e & s[5]) ^ (~e & s[6])) + sha256_k[i] + w[i];
        uint32_t t2 =
            (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) + ((a & s[1]) ^ (a & s[2]) ^ (s[1] & s[2]));
        memmove(s + 1, s, 7 * sizeof *s);
        s[4] += t1;
        s[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        h[i] += s[i];
}

void disc_sha256(const void *data, size_t len, unsigned char out[32])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const unsigned char *p = data;
    size_t left = len;
    for (; left >= 64; p += 64, left -= 64)
        sha256_block(h, p);
    /* Final one or two blocks: the tail, 0x80, zeros, then the bit length. */
    unsigned char tail[128] = {0};
    memcpy(tail, p, left);
    tail[left] = 0x80;
    size_t tlen = left < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        tail[tlen - 1 - i] = (unsigned char)(bits >> (8 * i));
    for (size_t off = 0; off < tlen; off += 64)
        sha256_block(h, tail + off);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(h[i] >> 8);
        out[4 * i + 3] = (unsigned char)h[i];
    }
}

static void base64_encode(const unsigned char *in, size_t n, char *out)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n) v |= in[i + 2];
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    out[o] = '\0';
}

void disc_storage_version_hash(const api_kind *k, char out[13])
{
    char gvk[512];
    unsigned char digest[32];
    /* the version objects are stored in (a CRD's storage version) */
    const char *v = k->storage_version ? k->storage_version : k->version;
    int len = snprintf(gvk, sizeof gvk, "%s/%s/%s", k->group, v, k->kind);
    if (len < 0 || (size_t)len >= sizeof gvk) len = (int)strlen(gvk);
    disc_sha256(gvk, (size_t)len, digest);
    base64_encode(digest, 8, out);
}
