/* patch.c - JSON merge patch, JSON patch and strategic merge patch.
 *
 * Owns nothing beyond one call: each entry point deep-copies the stored
 * object, edits the copy, and hands it back (or frees it on error). Nodes of
 * the caller's patch are never inserted into the result, only copies, so
 * the result shares no memory with either input.
 *
 * Strategic merge follows k8s.io/apimachinery/pkg/util/strategicpatch
 * (applying side only, MergeParallelList + IgnoreUnmatchedNulls, which is
 * what the apiserver uses). Upstream reads patch strategies from Go struct
 * tags; here a small table (smp_rules) maps field paths to merge keys.
 */
#include "api/patch.h"
#include "core/jdump.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* jansson's iterators take json_t *; we only read through this cast. */
#define MUT(v) ((json_t *)(v))

/* ---- messages (upstream wording) ---- */

#define MSG_REJECTED "the server rejected our request due to an error in our request"
#define MSG_ACCEPTED_ALL                                                                           \
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, "    \
    "application/strategic-merge-patch+json"
#define MSG_UNKNOWN_FORMAT                                                                         \
    "the body of the request was in an unknown format - accepted media types include: "
#define MSG_RETAIN_KEYS "invalid patch format of retainKeys"
#define MSG_PRIMITIVE_LIST "invalid patch format of primitive list"
#define MSG_ORDER_LIST "invalid patch format of setElementOrder list"
#define MSG_LIST_OF_LISTS "lists of lists are not supported"
#define MSG_COPY_LIMIT                                                                             \
    "Unable to complete the copy, the accumulated size increase of copy is %zu, exceeding the "    \
    "limit %d"
#define MSG_RESULT_TOO_LARGE "Request entity too large: limit is %d"

/* Upstream answers a patch that does not apply with
 * NewGenericServerResponse(422): a fixed message, the reason in a cause. */
static int unprocessable(api_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int unprocessable(api_err *err, const char *fmt, ...)
{
    char cause[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);
    api_err_set(err, API_INVALID, "%s", MSG_REJECTED);
    if (!err->details) err->details = json_object();
    json_object_set_new(
        err->details, "causes",
        json_pack("[{s:s, s:s}]", "reason", "UnexpectedServerResponse", "message", cause));
    return -1;
}

/* Compact JSON for messages; the caller frees. */
static char *dump(const json_t *v)
{
    char *s = jdump(v, NULL);
    return s ? s : strdup("?");
}

/* JSON equality with numbers compared by value (RFC 6902 section 4.6):
 * jansson's json_equal() holds 1 and 1.0 different. */
static int val_equal(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b))
        return json_integer_value(a) == json_integer_value(b);
    if (json_is_number(a) && json_is_number(b)) return json_number_value(a) == json_number_value(b);
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        json_t *v;
        if (json_object_size(a) != json_object_size(b)) return 0;
        json_object_foreach(MUT(a), k, v)
        {
            const json_t *w = json_object_get(b, k);
            if (!w || !val_equal(v, w)) return 0;
        }
        return 1;
    }
    if (json_is_array(a) && json_is_array(b)) {
        if (json_array_size(a) != json_array_size(b)) return 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!val_equal(json_array_get(a, i), json_array_get(b, i))) return 0;
        return 1;
    }
    return json_equal(a, b);
}

/* ======================= RFC 7386 merge patch ======================= */

static void merge_into(json_t *target, const json_t *patch)
{
    const char *k;
    json_t *v;
    json_object_foreach(MUT(patch), k, v)
    {
        json_t *cur = json_object_get(target, k);
        if (json_is_null(v))
            json_object_del(target, k);
        else if (json_is_object(v) && json_is_object(cur))
            merge_into(cur, v);
        else
            json_object_set_new(target, k, patch_merge(NULL, v));
    }
}

json_t *patch_merge(const json_t *orig, const json_t *patch)
{
    if (!patch) return orig ? jcopy(orig) : json_null();
    if (!json_is_object(patch)) return jcopy(patch);
    json_t *res = json_is_object(orig) ? jcopy(orig) : json_object();
    merge_into(res, patch);
    return res;
}

/* ======================= RFC 6901 JSON Pointer ======================= */

typedef struct {
    size_t n;
    char **tok; /* unescaped reference tokens */
} jptr;

static void jptr_free(jptr *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->tok[i]);
    free(p->tok);
    p->n = 0;
    p->tok = NULL;
}

/* Split and unescape. Returns -1 for a pointer that is not "" and does not
 * start with '/', or holds '~' not followed by '0' or '1'. */
static int jptr_parse(const char *s, jptr *p)
{
    p->n = 0;
    p->tok = NULL;
    if (!*s) return 0;
    if (*s != '/') return -1;
    size_t cap = 1;
    for (const char *q = s; *q; q++)
        cap += *q == '/';
    p->tok = calloc(cap, sizeof *p->tok);
    if (!p->tok) return -1;
    while (*s == '/') {
        const char *end = strchr(s + 1, '/');
        size_t len = end ? (size_t)(end - s - 1) : strlen(s + 1);
        char *t = malloc(len + 1), *w = t;
        if (!t) goto fail;
        p->tok[p->n++] = t;
        for (size_t i = 1; i <= len; i++) {
            if (s[i] != '~') {
                *w++ = s[i];
            } else if (i < len && (s[i + 1] == '0' || s[i + 1] == '1')) {
                *w++ = s[i + 1] == '0' ? '~' : '/';
                i++;
            } else {
                goto fail;
            }
        }
        *w = '\0';
        s += len + 1;
    }
    return 0;
fail:
    jptr_free(p);
    return -1;
}

/* Array index token: "0" or digits without a leading zero, below `limit`
 * (inclusive when `allow_end`, which also admits "-" meaning the end). */
static int jptr_index(const char *t, size_t size, int allow_end, size_t *out)
{
    if (allow_end && !strcmp(t, "-")) {
        *out = size;
        return 0;
    }
    size_t len = strlen(t);
    if (!len || len > 18 || (t[0] == '0' && len > 1)) return -1;
    for (size_t i = 0; i < len; i++)
        if (t[i] < '0' || t[i] > '9') return -1;
    unsigned long long v = strtoull(t, NULL, 10);
    if (v > size || (v == size && !allow_end)) return -1;
    *out = (size_t)v;
    return 0;
}

/* The value at the first `upto` tokens of `p`, or NULL. */
static json_t *jptr_get(json_t *doc, const jptr *p, size_t upto)
{
    for (size_t i = 0; doc && i < upto; i++) {
        size_t idx;
        if (json_is_object(doc))
            doc = json_object_get(doc, p->tok[i]);
        else if (json_is_array(doc) && jptr_index(p->tok[i], json_array_size(doc), 0, &idx) == 0)
            doc = json_array_get(doc, idx);
        else
            return NULL;
    }
    return doc;
}

/* ======================= RFC 6902 JSON patch ======================= */

typedef enum { OP_ADD, OP_REMOVE, OP_REPLACE, OP_MOVE, OP_COPY, OP_TEST } jp_kind;

static const struct {
    const char *name;
    int needs_value, needs_from;
} jp_ops[] = {
    [OP_ADD] = {"add", 1, 0},   [OP_REMOVE] = {"remove", 0, 0}, [OP_REPLACE] = {"replace", 1, 0},
    [OP_MOVE] = {"move", 0, 1}, [OP_COPY] = {"copy", 0, 1},     [OP_TEST] = {"test", 1, 0},
};

static int jp_kind_of(const char *name)
{
    for (size_t i = 0; name && i < sizeof jp_ops / sizeof jp_ops[0]; i++)
        if (!strcmp(jp_ops[i].name, name)) return (int)i;
    return -1;
}

static const char *json_kind_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    case JSON_NULL:
        return "null";
    default:
        return "number";
    }
}

static int jp_valid_pointer(const json_t *op, const char *field, size_t i, api_err *err)
{
    const json_t *v = json_object_get(op, field);
    jptr p;
    if (!json_is_string(v))
        return api_err_set(err, API_BAD_REQUEST, "operation %zu: missing or non-string \"%s\"", i,
                           field);
    if (jptr_parse(json_string_value(v), &p) < 0)
        return api_err_set(err, API_BAD_REQUEST, "operation %zu: invalid JSON pointer \"%s\"", i,
                           json_string_value(v));
    jptr_free(&p);
    return 0;
}

/* Structural checks over the whole document before anything applies: a
 * malformed patch is a 400, a patch that does not fit the object a 422. */
static int jp_validate(const json_t *ops, api_err *err)
{
    if (!json_is_array(ops))
        return api_err_set(err, API_BAD_REQUEST,
                           "json: cannot unmarshal %s into Go value of type jsonpatch.Patch",
                           json_kind_name(ops));
    for (size_t i = 0; i < json_array_size(ops); i++) {
        const json_t *op = json_array_get(ops, i);
        if (!json_is_object(op))
            return api_err_set(
                err, API_BAD_REQUEST,
                "json: cannot unmarshal %s into Go value of type jsonpatch.Operation",
                json_kind_name(op));
        const json_t *name = json_object_get(op, "op");
        int k = jp_kind_of(json_string_value(name));
        if (k < 0)
            return api_err_set(err, API_BAD_REQUEST, "Unexpected kind: %s",
                               json_is_string(name) ? json_string_value(name) : "unknown");
        if (jp_valid_pointer(op, "path", i, err) < 0) return -1;
        if (jp_ops[k].needs_from && jp_valid_pointer(op, "from", i, err) < 0) return -1;
        if (jp_ops[k].needs_value && !json_object_get(op, "value"))
            return api_err_set(err, API_BAD_REQUEST, "operation %zu (%s): missing \"value\"", i,
                               jp_ops[k].name);
    }
    return 0;
}

/* Insert `val` (stolen) at `p`: object member set, array element insert. */
static int jp_add(json_t **doc, const jptr *p, json_t *val)
{
    if (p->n == 0) {
        json_decref(*doc);
        *doc = val;
        return 0;
    }
    json_t *parent = jptr_get(*doc, p, p->n - 1);
    const char *last = p->tok[p->n - 1];
    size_t idx;
    if (json_is_object(parent)) return json_object_set_new(parent, last, val);
    if (json_is_array(parent) && jptr_index(last, json_array_size(parent), 1, &idx) == 0)
        return json_array_insert_new(parent, idx, val);
    json_decref(val);
    return -1;
}

/* Detach the value at `p`; returns it (a reference) or NULL if absent. */
static json_t *jp_take(json_t *doc, const jptr *p)
{
    if (p->n == 0) return NULL; /* the root cannot be removed */
    json_t *parent = jptr_get(doc, p, p->n - 1);
    const char *last = p->tok[p->n - 1];
    json_t *v = NULL;
    size_t idx;
    if (json_is_object(parent) && (v = json_object_get(parent, last))) {
        json_incref(v);
        json_object_del(parent, last);
    } else if (json_is_array(parent) && jptr_index(last, json_array_size(parent), 0, &idx) == 0) {
        v = json_incref(json_array_get(parent, idx));
        json_array_remove(parent, idx);
    }
    return v;
}

static int jp_replace(json_t **doc, const jptr *p, const json_t *value)
{
    if (p->n == 0) {
        json_decref(*doc);
        *doc = jcopy(value);
        return 0;
    }
    json_t *parent = jptr_get(*doc, p, p->n - 1);
    const char *last = p->tok[p->n - 1];
    size_t idx;
    if (json_is_object(parent) && json_object_get(parent, last))
        return json_object_set_new(parent, last, jcopy(value));
    if (json_is_array(parent) && jptr_index(last, json_array_size(parent), 0, &idx) == 0)
        return json_array_set_new(parent, idx, jcopy(value));
    return -1;
}

static int jptr_is_proper_prefix(const jptr *a, const jptr *b)
{
    if (a->n >= b->n) return 0;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->tok[i], b->tok[i])) return 0;
    return 1;
}

static int jp_move(json_t **doc, const jptr *from, const jptr *p, const char *fs, const char *ps,
                   api_err *err)
{
    if (jptr_is_proper_prefix(from, p))
        return unprocessable(err, "move operation does not apply: from %s is a prefix of path %s",
                             fs, ps);
    if (!jptr_get(*doc, from, from->n))
        return unprocessable(err, "move operation does not apply: doc is missing from path: %s",
                             fs);
    if (!strcmp(fs, ps)) return 0;
    json_t *v = jp_take(*doc, from);
    if (!v || jp_add(doc, p, v) < 0)
        return unprocessable(err, "move operation does not apply: doc is missing path: %s", ps);
    return 0;
}

/* What a "copy" adds to the document, counted as upstream's json-patch does:
 * the compact JSON size of the copied value. */
static size_t json_size(const json_t *v)
{
    return json_dumpb(v, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* The one JSON patch operation that amplifies: a copy of a subtree into itself
 * doubles it, so 20 copies of a few KB reach half a GB. Upstream bounds the
 * sum of what copies add (AccumulatedCopySizeLimit = 3 MiB) and answers 422;
 * adds, replaces and tests only bring in what the body holds, and moves add
 * nothing, so with this bound the document never exceeds the stored object
 * plus the body plus PATCH_MAX_COPY_BYTES, at any operation. */
static int jp_copy(json_t **doc, const json_t *cur, const jptr *p, const char *fs, const char *ps,
                   size_t *copied, api_err *err)
{
    if (!cur)
        return unprocessable(err, "copy operation does not apply: doc is missing from path: %s",
                             fs);
    size_t n = json_size(cur);
    *copied = n > SIZE_MAX - *copied ? SIZE_MAX : *copied + n;
    if (*copied > PATCH_MAX_COPY_BYTES)
        return unprocessable(err, MSG_COPY_LIMIT, *copied, PATCH_MAX_COPY_BYTES);
    if (jp_add(doc, p, jcopy(cur)) < 0)
        return unprocessable(err, "copy operation does not apply: doc is missing path: %s", ps);
    return 0;
}

static int jp_apply_op(json_t **doc, const json_t *op, size_t *copied, api_err *err)
{
    int k = jp_kind_of(json_string_value(json_object_get(op, "op")));
    const char *ps = json_string_value(json_object_get(op, "path"));
    const char *fs = json_string_value(json_object_get(op, "from"));
    const json_t *value = json_object_get(op, "value");
    const json_t *cur;
    jptr p, f = {0, NULL};
    int rc = 0;
    jptr_parse(ps, &p); /* validated by jp_validate */
    if (jp_ops[k].needs_from) jptr_parse(fs, &f);

    switch ((jp_kind)k) {
    case OP_ADD:
        if (jp_add(doc, &p, jcopy(value)) < 0)
            rc =
                unprocessable(err, "add operation does not apply: doc is missing path: \"%s\"", ps);
        break;
    case OP_REMOVE: {
        json_t *v = jp_take(*doc, &p);
        if (!v)
            rc = unprocessable(err, "remove operation does not apply: doc is missing path: \"%s\"",
                               ps);
        json_decref(v);
        break;
    }
    case OP_REPLACE:
        if (jp_replace(doc, &p, value) < 0)
            rc = unprocessable(err, "replace operation does not apply: doc is missing key: %s", ps);
        break;
    case OP_MOVE:
        rc = jp_move(doc, &f, &p, fs, ps, err);
        break;
    case OP_COPY:
        rc = jp_copy(doc, jptr_get(*doc, &f, f.n), &p, fs, ps, copied, err);
        break;
    case OP_TEST:
        cur = jptr_get(*doc, &p, p.n);
        if (!cur || !val_equal(cur, value))
            rc = unprocessable(err, "testing value %s failed: test failed", ps);
        break;
    }
    jptr_free(&p);
    jptr_free(&f);
    return rc;
}

json_t *patch_json(const json_t *orig, const json_t *ops, api_err *err)
{
    if (jp_validate(ops, err) < 0) return NULL;
    json_t *doc = orig ? jcopy(orig) : json_null();
    size_t copied = 0;
    for (size_t i = 0; i < json_array_size(ops); i++) {
        if (jp_apply_op(&doc, json_array_get(ops, i), &copied, err) < 0) {
            json_decref(doc);
            return NULL;
        }
    }
    return doc;
}

/* ======================= strategic merge patch ======================= */

/* Which lists merge, and by what key. Upstream keeps this in struct tags
 * (patchStrategy:"merge" patchMergeKey:"..."); every list not named here
 * is atomic and the patch replaces it (tolerations, args, command,
 * envFrom, ...).
 *
 * `path` is matched against the field path of the list, written as JSON
 * field names joined by '.', with "[]" after a list for its elements, e.g.
 * "spec.template.spec.containers[].env". A pattern matches a suffix on a
 * field boundary, so "containers" covers Pods, templates in Deployments and
 * CronJobs alike; a leading '^' anchors the pattern at the object root.
 * `key` "" marks a list of primitives merged as a set. `kind` NULL applies
 * to every built-in kind. */
typedef struct {
    const char *kind;
    const char *path;
    const char *key;
} smp_rule;

static const smp_rule smp_rules[] = {
    /* ObjectMeta */
    {NULL, "metadata.ownerReferences", "uid"},
    {NULL, "metadata.finalizers", ""},
    /* PodSpec, wherever a pod template sits */
    {NULL, "containers", "name"},
    {NULL, "initContainers", "name"},
    {NULL, "ephemeralContainers", "name"},
    {NULL, "spec.volumes", "name"},
    {NULL, "spec.imagePullSecrets", "name"},
    {NULL, "spec.hostAliases", "ip"},
    {NULL, "spec.topologySpreadConstraints", "topologyKey"},
    {NULL, "spec.resourceClaims", "name"},
    {NULL, "spec.schedulingGates", "name"},
    /* Container */
    {NULL, "containers[].env", "name"},
    {NULL, "initContainers[].env", "name"},
    {NULL, "ephemeralContainers[].env", "name"},
    {NULL, "containers[].ports", "containerPort"},
    {NULL, "initContainers[].ports", "containerPort"},
    {NULL, "ephemeralContainers[].ports", "containerPort"},
    {NULL, "containers[].volumeMounts", "mountPath"},
    {NULL, "initContainers[].volumeMounts", "mountPath"},
    {NULL, "ephemeralContainers[].volumeMounts", "mountPath"},
    {NULL, "containers[].volumeDevices", "devicePath"},
    {NULL, "initContainers[].volumeDevices", "devicePath"},
    {NULL, "ephemeralContainers[].volumeDevices", "devicePath"},
    /* Status of pods, nodes, workloads, claims, namespaces, ... */
    {NULL, "^status.conditions", "type"},
    {"Pod", "^status.podIPs", "ip"},
    {"Pod", "^status.hostIPs", "ip"},
    {"Node", "^status.addresses", "type"},
    {"Node", "^spec.podCIDRs", ""},
    {"Service", "^spec.ports", "port"},
    {"ServiceAccount", "^secrets", "name"},
};

/* Kinds served with strategic merge semantics; others (custom resources)
 * get JSON merge patch, as their lists have no declared strategy. */
static const char *const smp_builtin_kinds[] = {"Pod",
                                                "PodTemplate",
                                                "ReplicationController",
                                                "ReplicaSet",
                                                "Deployment",
                                                "StatefulSet",
                                                "DaemonSet",
                                                "Job",
                                                "CronJob",
                                                "Service",
                                                "Endpoints",
                                                "EndpointSlice",
                                                "ConfigMap",
                                                "Secret",
                                                "Namespace",
                                                "Node",
                                                "ServiceAccount",
                                                "ResourceQuota",
                                                "LimitRange",
                                                "PersistentVolume",
                                                "PersistentVolumeClaim",
                                                "Event",
                                                "PriorityClass",
                                                "StorageClass",
                                                "Ingress",
                                                "IngressClass",
                                                "NetworkPolicy",
                                                "PodDisruptionBudget",
                                                "HorizontalPodAutoscaler",
                                                "Role",
                                                "RoleBinding",
                                                "ClusterRole",
                                                "ClusterRoleBinding",
                                                "Lease",
                                                "ControllerRevision",
                                                "RuntimeClass",
                                                "CustomResourceDefinition",
                                                "APIService",
                                                "MutatingWebhookConfiguration",
                                                "ValidatingWebhookConfiguration",
                                                "CertificateSigningRequest",
                                                "VolumeAttachment",
                                                "CSIDriver",
                                                "CSINode"};

int patch_kind_is_builtin(const char *kind)
{
    for (size_t i = 0; kind && i < sizeof smp_builtin_kinds / sizeof smp_builtin_kinds[0]; i++)
        if (!strcmp(smp_builtin_kinds[i], kind)) return 1;
    return 0;
}

/* Merging a list compares every element with every other (as upstream
 * does), so a body of a few MB could buy seconds of CPU: refuse merge
 * lists longer than this. Real merge lists (containers, env, finalizers,
 * conditions) hold tens of items. */
#define SMP_MAX_MERGE_LIST 5000

#define DIR_PATCH "$patch"
#define DIR_RETAIN "$retainKeys"
#define DIR_ORDER "$setElementOrder/"
#define DIR_DELETE "$deleteFromPrimitiveList/"

typedef struct {
    const char *kind;
    api_err *err;
    size_t len;      /* SIZE_MAX once the path no longer fits: no rule matches */
    char path[1024]; /* field path of the value being merged */
} smp_ctx;

static int has_prefix(const char *s, const char *p)
{
    return !strncmp(s, p, strlen(p));
}

static int is_directive(const char *k)
{
    return !strcmp(k, DIR_PATCH) || !strcmp(k, DIR_RETAIN) || has_prefix(k, DIR_ORDER) ||
           has_prefix(k, DIR_DELETE);
}

static size_t smp_push(smp_ctx *c, const char *field)
{
    size_t old = c->len;
    if (old == SIZE_MAX) return old;
    size_t room = sizeof c->path - old;
    int n = field ? snprintf(c->path + old, room, "%s%s", old ? "." : "", field)
                  : snprintf(c->path + old, room, "[]");
    if (n < 0 || (size_t)n >= room)
        c->len = SIZE_MAX;
    else
        c->len = old + (size_t)n;
    return old;
}

static void smp_pop(smp_ctx *c, size_t old)
{
    c->len = old;
    if (old != SIZE_MAX) c->path[old] = '\0';
}

static const smp_rule *smp_rule_for(const smp_ctx *c)
{
    if (c->len == SIZE_MAX) return NULL;
    for (size_t i = 0; i < sizeof smp_rules / sizeof smp_rules[0]; i++) {
        const smp_rule *r = &smp_rules[i];
        const char *pat = r->path;
        int anchored = *pat == '^';
        size_t pl = strlen(pat += anchored);
        if (r->kind && strcmp(r->kind, c->kind)) continue;
        if (pl > c->len || memcmp(c->path + c->len - pl, pat, pl)) continue;
        if (pl == c->len || (!anchored && c->path[c->len - pl - 1] == '.')) return r;
    }
    return NULL;
}

const char *patch_merge_key(const char *kind, const char *path)
{
    smp_ctx c = {.kind = kind, .err = NULL, .len = strlen(path), .path = ""};
    if (!patch_kind_is_builtin(kind) || c.len >= sizeof c.path) return NULL;
    memcpy(c.path, path, c.len + 1);
    const smp_rule *r = smp_rule_for(&c);
    return r ? r->key : NULL;
}

static int smp_bad(smp_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int smp_bad(smp_ctx *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return api_err_set(c->err, API_BAD_REQUEST, "%s", msg);
}

static int smp_no_merge_key(smp_ctx *c, const json_t *elem, const char *key)
{
    char *s = dump(elem);
    smp_bad(c, "map: %s does not contain declared merge key: %s", s, key);
    free(s);
    return -1;
}

static int smp_bad_patch_type(smp_ctx *c, const json_t *d, const json_t *m)
{
    char *ds = dump(d), *ms = dump(m);
    smp_bad(c, "unknown patch type: %s in map: %s", ds, ms);
    free(ds);
    free(ms);
    return -1;
}

/* "replace" / "delete" / "merge" / NULL (absent) / "" (anything else). */
static const char *smp_directive(const json_t *m)
{
    const json_t *d = json_is_object(m) ? json_object_get(m, DIR_PATCH) : NULL;
    if (!d) return NULL;
    const char *s = json_string_value(d);
    if (s && (!strcmp(s, "replace") || !strcmp(s, "delete") || !strcmp(s, "merge"))) return s;
    return "";
}

/* A patch value with nothing to merge into: a copy without nulls and
 * directives (upstream: discardNullValuesFromPatch + removeDirectives).
 * NULL means "drop it": a map saying $patch: delete (or an unknown $patch).
 * Deviation: upstream also drops maps saying replace or merge; with nothing
 * underneath, keeping their contents is what the patch author meant. */
static json_t *smp_fresh(const json_t *v)
{
    if (json_is_object(v)) {
        const char *d = smp_directive(v), *k;
        json_t *x, *o;
        if (d && (!strcmp(d, "delete") || !*d)) return NULL;
        o = json_object();
        json_object_foreach(MUT(v), k, x)
        {
            json_t *c;
            if (json_is_null(x) || is_directive(k) || !(c = smp_fresh(x))) continue;
            json_object_set_new(o, k, c);
        }
        return o;
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *c = smp_fresh(json_array_get(v, i));
            if (c) json_array_append_new(a, c);
        }
        return a;
    }
    return jcopy(v);
}

/* ---- element identity and order ---- */

/* Position in `list` of the element matching `item`: by merge key value
 * when `key` names one, else by value. -1 when absent. */
static long smp_index(const json_t *list, const json_t *item, const char *key)
{
    const json_t *want = key && *key ? json_object_get(item, key) : item;
    if (!want) return -1;
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *e = json_array_get(list, i);
        const json_t *have = key && *key ? json_object_get(e, key) : e;
        if (have && val_equal(have, want)) return (long)i;
    }
    return -1;
}

typedef struct {
    long idx;
    size_t pos;
    json_t *v;
} smp_ent;

static int smp_ent_cmp(const void *a, const void *b)
{
    const smp_ent *x = a, *y = b;
    if (x->idx != y->idx) return x->idx < y->idx ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Stable sort of `items` by position in `order`; items not in `order` keep
 * their relative order after the others. Returns a new array. */
static json_t *smp_sorted(const json_t *items, const json_t *order, const char *key)
{
    size_t n = json_array_size(items);
    json_t *out = json_array();
    smp_ent *e = n ? calloc(n, sizeof *e) : NULL;
    if (!e) return out;
    for (size_t i = 0; i < n; i++) {
        e[i].v = json_array_get(items, i);
        e[i].idx = smp_index(order, e[i].v, key);
        if (e[i].idx < 0) e[i].idx = LONG_MAX;
        e[i].pos = i;
    }
    qsort(e, n, sizeof *e, smp_ent_cmp);
    for (size_t i = 0; i < n; i++)
        json_array_append(out, e[i].v);
    free(e);
    return out;
}

/* Upstream's normalizeElementOrder: the items of `merged` that `order`
 * names take that order; the rest keep the order of `server` (the live
 * list); then the server-only items are slotted in among the others where
 * the live list had them (mergeSortedSlice). Returns a new array. */
static json_t *smp_normalize(const json_t *merged, const json_t *order, const json_t *server,
                             const char *key)
{
    json_t *named = json_array(), *rest = json_array();
    for (size_t i = 0; i < json_array_size(merged); i++) {
        json_t *e = json_array_get(merged, i);
        json_array_append(smp_index(order, e, key) >= 0 ? named : rest, e);
    }
    json_t *right = smp_sorted(named, order, key), *left = smp_sorted(rest, server, key);
    json_t *out = json_array();
    size_t i = 0, j = 0, nl = json_array_size(left), nr = json_array_size(right);
    while (i < nl || j < nr) {
        int take_left = j >= nr;
        if (i < nl && j < nr) {
            long li = smp_index(server, json_array_get(left, i), key);
            long ri = smp_index(server, json_array_get(right, j), key);
            take_left = li >= 0 && ri >= 0 && li < ri;
        }
        json_array_append(out, take_left ? json_array_get(left, i++) : json_array_get(right, j++));
    }
    json_decref(named);
    json_decref(rest);
    json_decref(left);
    json_decref(right);
    return out;
}

/* ---- lists ---- */

static json_t *smp_map(json_t *orig, const json_t *patch, smp_ctx *c);

/* 1: all maps, 0: all scalars, -1: error (lists of lists, mixed). */
static int smp_elem_kind(const json_t *a, const json_t *b, smp_ctx *c)
{
    int maps = -1;
    const json_t *lists[2] = {a, b};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < json_array_size(lists[l]); i++) {
            const json_t *e = json_array_get(lists[l], i);
            if (json_is_array(e)) return unprocessable(c->err, MSG_LIST_OF_LISTS);
            int m = json_is_object(e);
            if (maps >= 0 && m != maps)
                return smp_bad(c, "types don't match in list %s: maps and scalars", c->path);
            maps = m;
        }
    }
    return maps > 0;
}

static json_t *smp_merge_scalars(const json_t *ol, const json_t *pl)
{
    json_t *merged = json_array();
    const json_t *lists[2] = {ol, pl};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < json_array_size(lists[l]); i++) {
            json_t *e = json_array_get(lists[l], i);
            if (smp_index(merged, e, NULL) < 0) json_array_append_new(merged, jcopy(e));
        }
    json_t *out = smp_normalize(merged, pl, ol, NULL);
    json_decref(merged);
    return out;
}

/* Apply the $patch elements of a merge list to `work` (ours) and collect
 * the plain ones into `plain`. `plain` holds references to nodes of the
 * caller's patch for the length of the call: their refcounts go up and
 * back down, nothing else about them changes. Returns 1 for $patch:
 * replace, -1 on error. */
static int smp_special_elems(json_t *work, const json_t *pl, const char *key, json_t *plain,
                             smp_ctx *c)
{
    int replace = 0;
    for (size_t i = 0; i < json_array_size(pl); i++) {
        const json_t *e = json_array_get(pl, i), *kv = json_object_get(e, key);
        const char *d = smp_directive(e);
        if (!d || (!strcmp(d, "merge") && kv)) {
            /* an element saying merge merges like any other (upstream errors) */
            json_array_append(plain, MUT(e));
        } else if (!strcmp(d, "delete")) {
            if (!kv) return smp_no_merge_key(c, e, key);
            for (size_t j = json_array_size(work); j-- > 0;) {
                const json_t *w = json_object_get(json_array_get(work, j), key);
                if (w && val_equal(w, kv)) json_array_remove(work, j);
            }
        } else if (!strcmp(d, "replace")) {
            replace = 1;
        } else if (*d) {
            continue; /* {"$patch":"merge"} alone: lists merge anyway */
        } else {
            return smp_bad_patch_type(c, json_object_get(e, DIR_PATCH), e);
        }
    }
    return replace;
}

/* mergeSlice for lists of maps with merge key `key`. */
static json_t *smp_merge_maps(json_t *ol, const json_t *pl, const char *key, smp_ctx *c)
{
    json_t *work = json_copy(ol), *plain = json_array(), *server = NULL, *out = NULL;
    int replace = smp_special_elems(work, pl, key, plain, c);
    if (replace < 0) goto done;
    if (replace) {
        out = smp_fresh(plain);
        goto done;
    }
    server = json_copy(work); /* live order after deletions, kept alive */
    for (size_t i = 0; i < json_array_size(plain); i++) {
        const json_t *e = json_array_get(plain, i);
        if (!json_object_get(e, key)) {
            smp_no_merge_key(c, e, key);
            goto done;
        }
        long at = smp_index(work, e, key);
        if (at < 0) {
            json_t *f = smp_fresh(e);
            if (f) json_array_append_new(work, f);
            continue;
        }
        size_t saved = smp_push(c, NULL);
        json_t *m = smp_map(json_incref(json_array_get(work, (size_t)at)), e, c);
        smp_pop(c, saved);
        if (!m) goto done;
        json_array_set_new(work, (size_t)at, m);
    }
    out = smp_normalize(work, plain, server, key);
done:
    json_decref(work);
    json_decref(plain);
    json_decref(server);
    return out;
}

static int smp_too_long(smp_ctx *c, size_t n)
{
    if (n <= SMP_MAX_MERGE_LIST) return 0;
    return api_err_set(c->err, API_TOO_LARGE,
                       "strategic merge patch: list %s has %zu elements, more than %d", c->path, n,
                       SMP_MAX_MERGE_LIST);
}

/* Merge list `pl` into list `ol` (ours; its elements may be reused) at the
 * current path. Returns a new array, or NULL with c->err set. */
static json_t *smp_list(json_t *ol, const json_t *pl, smp_ctx *c)
{
    const smp_rule *r = smp_rule_for(c);
    if (!r) return smp_fresh(pl); /* atomic list: the patch replaces it */
    if (smp_too_long(c, json_array_size(ol) + json_array_size(pl)) < 0) return NULL;
    if (!json_array_size(ol) && !json_array_size(pl)) return json_array();
    int maps = smp_elem_kind(ol, pl, c);
    if (maps < 0) return NULL;
    if (!maps) return smp_merge_scalars(ol, pl);
    if (!*r->key) {
        smp_bad(c, "cannot merge lists without merge key for %s", c->path);
        return NULL;
    }
    return smp_merge_maps(ol, pl, r->key, c);
}

/* ---- maps ---- */

static int smp_retain_keys(json_t *orig, const json_t *patch, smp_ctx *c)
{
    const json_t *rk = json_object_get(patch, DIR_RETAIN);
    const char *k;
    json_t *x;
    void *tmp;
    if (!rk) return 0;
    if (!json_is_array(rk)) return smp_bad(c, MSG_RETAIN_KEYS);
    if (smp_too_long(c, json_array_size(rk)) < 0) return -1;
    json_object_foreach(MUT(patch), k, x)
    {
        json_t *name = json_string(k);
        int listed = smp_index(rk, name, NULL) >= 0;
        json_decref(name);
        if (!json_is_null(x) && !is_directive(k) && !listed) return smp_bad(c, MSG_RETAIN_KEYS);
    }
    json_object_foreach_safe(orig, tmp, k, x)
    {
        json_t *name = json_string(k);
        if (smp_index(rk, name, NULL) < 0) json_object_del(orig, k);
        json_decref(name);
    }
    return 0;
}

/* $deleteFromPrimitiveList/<f>: drop those values from the list f. */
static int smp_delete_lists(json_t *orig, const json_t *patch, smp_ctx *c)
{
    const char *k;
    json_t *del;
    json_object_foreach(MUT(patch), k, del)
    {
        if (!has_prefix(k, DIR_DELETE) || json_is_null(del)) continue;
        if (!json_is_array(del)) return smp_bad(c, MSG_PRIMITIVE_LIST);
        const char *f = k + strlen(DIR_DELETE);
        json_t *list = json_object_get(orig, f);
        if (!json_is_array(list)) continue;
        if (smp_too_long(c, json_array_size(list) + json_array_size(del)) < 0) return -1;
        json_t *kept = json_array();
        for (size_t i = 0; i < json_array_size(list); i++) {
            json_t *e = json_array_get(list, i);
            if (smp_index(del, e, NULL) < 0) json_array_append(kept, e);
        }
        json_object_set_new(orig, f, kept);
    }
    return 0;
}

/* validatePatchWithSetOrderList: the patch list must follow the order list. */
static int smp_check_order(const json_t *pl, const json_t *order, const char *key, smp_ctx *c)
{
    size_t pi = 0, oi = 0, np = json_array_size(pl), no = json_array_size(order);
    while (pi < np && oi < no) {
        const json_t *e = json_array_get(pl, pi), *o = json_array_get(order, oi);
        if (smp_directive(e)) {
            pi++;
            continue;
        }
        if (*key && (!json_object_get(e, key) || !json_object_get(o, key)))
            return smp_no_merge_key(c, json_object_get(e, key) ? o : e, key);
        if (*key ? val_equal(json_object_get(e, key), json_object_get(o, key)) : val_equal(e, o))
            pi++;
        oi++;
    }
    if (pi < np && oi >= no) {
        char *ps = dump(pl), *os = dump(order);
        smp_bad(c, "the order in patch list:\n%s\n doesn't match $setElementOrder list:\n%s", ps,
                os);
        free(ps);
        free(os);
        return -1;
    }
    return 0;
}

/* One $setElementOrder/<f>: merge list f and put it in the given order.
 * Marks f in `done` so the field loop leaves it alone. */
static int smp_order_one(json_t *orig, const json_t *patch, const char *f, const json_t *order,
                         json_t *done, smp_ctx *c)
{
    const smp_rule *r = smp_rule_for(c);
    json_t *ol = json_object_get(orig, f), *merged;
    const json_t *pl = json_object_get(patch, f);
    if (!r || (pl && !json_is_array(pl))) return 0; /* plain field handling */
    if (!json_is_array(ol)) ol = NULL;
    if (smp_too_long(c, json_array_size(ol) + json_array_size(pl) + json_array_size(order)) < 0)
        return -1;
    if (pl && smp_check_order(pl, order, r->key, c) < 0) return -1;
    if (!ol && !pl) return 0;
    if (!pl)
        merged = json_incref(ol);
    else if (!ol)
        merged = smp_fresh(pl);
    else if (!(merged = smp_list(ol, pl, c)))
        return -1;
    int maps = json_is_object(json_array_get(merged, 0));
    json_t *empty = json_array();
    json_t *sorted = smp_normalize(merged, order, ol ? ol : empty, maps ? r->key : NULL);
    json_decref(empty);
    json_decref(merged);
    json_object_set_new(orig, f, sorted);
    json_object_set_new(done, f, json_true());
    return 0;
}

static int smp_ordered_lists(json_t *orig, const json_t *patch, json_t *done, smp_ctx *c)
{
    const char *k;
    json_t *order;
    json_object_foreach(MUT(patch), k, order)
    {
        if (!has_prefix(k, DIR_ORDER)) continue;
        if (!json_is_array(order)) return smp_bad(c, MSG_ORDER_LIST);
        const char *f = k + strlen(DIR_ORDER);
        size_t saved = smp_push(c, f);
        int rc = smp_order_one(orig, patch, f, order, done, c);
        smp_pop(c, saved);
        if (rc < 0) return -1;
    }
    return 0;
}

/* The ordinary fields: null deletes, maps and lists recurse, the rest
 * (and any type change) takes the patch value. */
static int smp_fields(json_t *orig, const json_t *patch, const json_t *done, smp_ctx *c)
{
    const char *k;
    json_t *pv;
    json_object_foreach(MUT(patch), k, pv)
    {
        if (is_directive(k) || json_object_get(done, k)) continue;
        if (json_is_null(pv)) {
            json_object_del(orig, k);
            continue;
        }
        json_t *ov = json_object_get(orig, k), *nv;
        size_t saved = smp_push(c, k);
        if (json_is_object(ov) && json_is_object(pv))
            nv = smp_map(json_incref(ov), pv, c);
        else if (json_is_array(ov) && json_is_array(pv))
            nv = smp_list(ov, pv, c);
        else if (!(nv = smp_fresh(pv))) {
            smp_pop(c, saved);
            json_object_del(orig, k); /* {"$patch":"delete"} with nothing to delete */
            continue;
        }
        smp_pop(c, saved);
        if (!nv) return -1;
        json_object_set_new(orig, k, nv);
    }
    return 0;
}

/* Merge `patch` into `orig` (a reference we own and consume). Returns the
 * merged map (a reference) or NULL with c->err set. Order matters only
 * where upstream's random map order could not make it matter: retainKeys
 * first, then deletions from primitive lists, then ordered lists. */
static json_t *smp_map(json_t *orig, const json_t *patch, smp_ctx *c)
{
    const char *d = smp_directive(patch);
    if (d && !strcmp(d, "replace")) {
        json_decref(orig);
        return smp_fresh(patch);
    }
    if (d && !strcmp(d, "delete")) {
        json_decref(orig);
        return json_object();
    }
    if (d && !*d) {
        json_decref(orig);
        smp_bad_patch_type(c, json_object_get(patch, DIR_PATCH), patch);
        return NULL;
    }
    if (!json_is_object(orig)) {
        json_decref(orig);
        orig = json_object();
    }
    json_t *done = json_object();
    int rc = smp_retain_keys(orig, patch, c);
    if (rc == 0) rc = smp_delete_lists(orig, patch, c);
    if (rc == 0) rc = smp_ordered_lists(orig, patch, done, c);
    if (rc == 0) rc = smp_fields(orig, patch, done, c);
    json_decref(done);
    if (rc < 0) {
        json_decref(orig);
        return NULL;
    }
    return orig;
}

json_t *patch_strategic(const json_t *orig, const json_t *patch, const char *kind, api_err *err)
{
    if (!json_is_object(patch)) {
        api_err_set(err, API_BAD_REQUEST,
                    "json: cannot unmarshal %s into Go value of type map[string]interface {}",
                    patch ? json_kind_name(patch) : "null");
        return NULL;
    }
    if (!patch_kind_is_builtin(kind)) return patch_merge(orig, patch);
    smp_ctx c = {.kind = kind, .err = err, .len = 0, .path = ""};
    json_t *base = json_is_object(orig) ? jcopy(orig) : json_object();
    return smp_map(base, patch, &c);
}

/* ======================= dispatch ======================= */

/* The media type without parameters, lower-cased, into buf. */
static void media_type(const char *ct, char *buf, size_t n)
{
    size_t i = 0;
    while (ct && (*ct == ' ' || *ct == '\t'))
        ct++;
    for (; ct && *ct && *ct != ';' && i + 1 < n; ct++)
        buf[i++] = (*ct >= 'A' && *ct <= 'Z') ? (char)(*ct - 'A' + 'a') : *ct;
    while (i > 0 && (buf[i - 1] == ' ' || buf[i - 1] == '\t'))
        i--;
    buf[i] = '\0';
}

int patch_is_apply(const char *content_type)
{
    char mt[128];
    media_type(content_type, mt, sizeof mt);
    return !strcmp(mt, PATCH_CT_APPLY);
}

int patch_check_type(const char *content_type, api_err *err)
{
    char mt[128];
    media_type(content_type, mt, sizeof mt);
    if (!strcmp(mt, PATCH_CT_JSON) || !strcmp(mt, PATCH_CT_MERGE) ||
        !strcmp(mt, PATCH_CT_STRATEGIC) || !strcmp(mt, PATCH_CT_APPLY))
        return 0;
    return api_err_set(err, API_UNSUPPORTED_MEDIA, "%s%s", MSG_UNKNOWN_FORMAT, MSG_ACCEPTED_ALL);
}

json_t *patch_apply(const char *content_type, const json_t *orig, const char *body, size_t len,
                    const char *kind, api_err *err)
{
    char mt[128];
    json_error_t je;
    json_t *p, *res = NULL;
    media_type(content_type, mt, sizeof mt);
    int is_json = !strcmp(mt, PATCH_CT_JSON), is_merge = !strcmp(mt, PATCH_CT_MERGE);
    int is_smp = !strcmp(mt, PATCH_CT_STRATEGIC);
    if (!strcmp(mt, PATCH_CT_APPLY)) {
        /* Not a patch of this module: server-side apply (api/fieldmanager.h)
         * merges by schema and records managedFields. */
        api_err_set(err, API_UNSUPPORTED_MEDIA, "%s%s", MSG_UNKNOWN_FORMAT, MSG_ACCEPTED_ALL);
        return NULL;
    }
    if (!is_json && !is_merge && !is_smp) {
        api_err_set(err, API_UNSUPPORTED_MEDIA, "%s%s", MSG_UNKNOWN_FORMAT, MSG_ACCEPTED_ALL);
        return NULL;
    }
    /* RFC 6902 section 5: a duplicate member (two "op"s) is an error. */
    p = json_loadb(body ? body : "", body ? len : 0,
                   JSON_DECODE_ANY | (is_json ? JSON_REJECT_DUPLICATES : 0), &je);
    if (!p) {
        api_err_set(err, API_BAD_REQUEST, "error decoding patch: %s", je.text);
        return NULL;
    }
    if (is_json && json_array_size(p) > PATCH_MAX_JSON_OPS) {
        api_err_set(err, API_TOO_LARGE,
                    "The allowed maximum operations in a JSON patch is %d, got %zu",
                    PATCH_MAX_JSON_OPS, json_array_size(p));
    } else if (is_json) {
        res = patch_json(orig, p, err);
    } else if (!json_is_object(p)) {
        api_err_set(err, API_BAD_REQUEST,
                    "json: cannot unmarshal %s into Go value of type map[string]interface {}",
                    json_kind_name(p));
    } else {
        res = is_merge ? patch_merge(orig, p) : patch_strategic(orig, p, kind, err);
    }
    json_decref(p);
    if (res && !json_is_object(res)) {
        unprocessable(err, "the patched document is a %s, not an object", json_kind_name(res));
        json_decref(res);
        res = NULL;
    } else if (res && json_size(res) > PATCH_MAX_RESULT_BYTES) {
        /* No patch may produce an object a PUT could not have sent. Merge and
         * strategic patches grow the object by at most the body, a JSON patch
         * by the body and its copies: this is the one check all three share. */
        api_err_set(err, API_TOO_LARGE, MSG_RESULT_TOO_LARGE, PATCH_MAX_RESULT_BYTES);
        json_decref(res);
        res = NULL;
    }
    return res;
}
