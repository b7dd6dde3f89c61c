/* test_fieldset.c - managed field sets (core/fieldset.h):
 *   - fieldsV1 round trips of upstream's managedFields (kubernetes.io
 *     server-side-apply page, kubectl apply --server-side of a Deployment,
 *     status conditions, ports keyed by containerPort+protocol), byte for
 *     byte; unsorted input comes back canonical;
 *   - sets from applied objects with keyed lists, set lists, atomic maps;
 *   - set algebra laws over random small sets (fixed seed);
 *   - apply conflicts and the apiserver's exact messages;
 *   - hostile input: deep nesting, many elements, malformed elements.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fieldset.h"

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static fs_set *dec(const char *text)
{
    char err[256] = "";
    int code = 0;
    fs_set *s = fs_from_fieldsv1_text(text, strlen(text), NULL, &code, err, sizeof err);
    if (!s) fail_msg("decode %s: %d %s", text, code, err);
    return s;
}

static char *enc(const fs_set *s)
{
    char *t = NULL;
    size_t n = 0;
    assert_int_equal(fs_to_fieldsv1_text(s, &t, &n), FS_OK);
    assert_int_equal(strlen(t), n);
    return t;
}

static void roundtrip(const char *text)
{
    fs_set *s = dec(text);
    char *t = enc(s);
    if (strcmp(t, text) != 0) fail_msg("round trip\n  want %s\n  got  %s", text, t);
    json_t *j = fs_to_fieldsv1(s);
    assert_non_null(j);
    char *d = json_dumps(j, JSON_COMPACT);
    /* jansson keeps the canonical key order */
    fs_set *s2 = dec(d);
    assert_true(fs_equal(s, s2));
    free(d);
    json_decref(j);
    fs_free(s2);
    free(t);
    fs_free(s);
}

static void test_roundtrip_upstream(void **state)
{
    (void)state;
    /* kubernetes.io/docs/reference/using-api/server-side-apply (ConfigMap) */
    roundtrip("{\"f:data\":{\"f:key\":{}},\"f:metadata\":{\"f:labels\":{\"f:test-label\":{}}}}");
    /* kubectl apply --server-side of the nginx Deployment */
    roundtrip("{\"f:metadata\":{\"f:labels\":{\"f:app\":{}}},\"f:spec\":{\"f:replicas\":{},"
              "\"f:selector\":{},\"f:template\":{\"f:metadata\":{\"f:labels\":{\"f:app\":{}}},"
              "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"nginx\\\"}\":{\".\":{},"
              "\"f:image\":{},\"f:name\":{},\"f:ports\":{\"k:{\\\"containerPort\\\":80,"
              "\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},\"f:containerPort\":{},\"f:protocol\":{}}}}}}}}}");
    /* kube-controller-manager's status update of a Deployment */
    roundtrip("{\"f:metadata\":{\"f:annotations\":{\".\":{},\"f:deployment.kubernetes.io/revision\":{}}},"
              "\"f:status\":{\"f:availableReplicas\":{},\"f:conditions\":{\".\":{},"
              "\"k:{\\\"type\\\":\\\"Available\\\"}\":{\".\":{},\"f:lastTransitionTime\":{},"
              "\"f:lastUpdateTime\":{},\"f:message\":{},\"f:reason\":{},\"f:status\":{},\"f:type\":{}},"
              "\"k:{\\\"type\\\":\\\"Progressing\\\"}\":{\".\":{},\"f:lastTransitionTime\":{},"
              "\"f:lastUpdateTime\":{},\"f:message\":{},\"f:reason\":{},\"f:status\":{},\"f:type\":{}}},"
              "\"f:observedGeneration\":{},\"f:readyReplicas\":{},\"f:replicas\":{},\"f:updatedReplicas\":{}}}");
    /* finalizers (a set), an atomic-list position, a key with two fields */
    roundtrip("{\"f:metadata\":{\"f:finalizers\":{\".\":{},\"v:\\\"a/b\\\"\":{},\"v:\\\"kubernetes\\\"\":{}}},"
              "\"f:spec\":{\"f:x\":{\"i:0\":{},\"i:2\":{\"f:y\":{}}}}}");
    /* HTML characters are escaped as Go's encoding/json does */
    roundtrip("{\"f:metadata\":{\"f:annotations\":{\"f:a\\u003cb\\u0026c\":{}}}}");
    roundtrip("{}");
}

static void test_canonical_order(void **state)
{
    (void)state;
    /* fields by name, then keys, then values, then indexes; "." first;
     * key fields sorted; numbers before strings */
    fs_set *s = dec("{\"i:1\":{},\"v:\\\"b\\\"\":{},\"v:2\":{},\"k:{\\\"b\\\":1,\\\"a\\\":\\\"x\\\"}\":{},"
                    "\"f:z\":{\"f:q\":{},\".\":{}},\"f:a\":{\".\":{}}}");
    char *t = enc(s);
    assert_string_equal(t, "{\"f:a\":{},\"f:z\":{\".\":{},\"f:q\":{}},"
                           "\"k:{\\\"a\\\":\\\"x\\\",\\\"b\\\":1}\":{},\"v:2\":{},\"v:\\\"b\\\"\":{},\"i:1\":{}}");
    free(t);
    fs_free(s);
    /* the same element twice (key fields in another order) merges */
    s = dec("{\"f:l\":{\"k:{\\\"a\\\":1,\\\"b\\\":2}\":{\"f:x\":{}},\"k:{\\\"b\\\":2,\\\"a\\\":1}\":{\"f:y\":{}}}}");
    t = enc(s);
    assert_string_equal(t, "{\"f:l\":{\"k:{\\\"a\\\":1,\\\"b\\\":2}\":{\"f:x\":{},\"f:y\":{}}}}");
    assert_int_equal(fs_size(s), 2);
    free(t);
    fs_free(s);
}

static void test_decode_errors(void **state)
{
    (void)state;
    const char *bad[] = {
        "[]", "{\"x:a\":{}}", "{\"f\":{}}", "{\"f:a\":1}", "{\"k:[1]\":{}}", "{\"k:{\":{}}",
        "{\"v:\":{}}", "{\"i:x\":{}}", "{\"i:\":{}}", "{\".\":{}}", "{\"f:a\":{\"f:b\":[]}}", "nope",
        "{\"i:99999999999999999999\":{}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[256] = "";
        int code = 0;
        fs_set *s = fs_from_fieldsv1_text(bad[i], strlen(bad[i]), NULL, &code, err, sizeof err);
        if (s) fail_msg("accepted %s", bad[i]);
        assert_int_equal(code, FS_ERR_INVALID);
        assert_true(err[0] != '\0');
    }
}

static void test_limits(void **state)
{
    (void)state;
    /* 2000 levels: over the depth limit, fails fast */
    size_t depth = 2000;
    char *t = malloc(depth * 8 + 16);
    size_t n = 0;
    for (size_t i = 0; i < depth; i++) n += (size_t)sprintf(t + n, "{\"f:a\":");
    n += (size_t)sprintf(t + n, "{}");
    for (size_t i = 0; i < depth; i++) t[n++] = '}';
    char err[256] = "";
    int code = 0;
    fs_set *s = fs_from_fieldsv1_text(t, n, NULL, &code, err, sizeof err);
    assert_null(s);
    assert_true(code == FS_ERR_LIMIT || code == FS_ERR_INVALID); /* jansson's own depth limit */
    free(t);
    fs_limits lim = {.max_depth = 4};
    const char *deep5 = "{\"f:a\":{\"f:a\":{\"f:a\":{\"f:a\":{\"f:a\":{}}}}}}";
    s = fs_from_fieldsv1_text(deep5, strlen(deep5), &lim, &code, err, sizeof err);
    assert_null(s);
    assert_int_equal(code, FS_ERR_LIMIT);
    /* many elements: 20000 fields, limit 1000 */
    {
        size_t cap = 20000 * 16 + 8;
        char *w = malloc(cap);
        size_t m = 0;
        w[m++] = '{';
        for (int i = 0; i < 20000; i++) m += (size_t)sprintf(w + m, "%s\"f:%d\":{}", i ? "," : "", 20000 - i);
        w[m++] = '}';
        lim = (fs_limits){.max_nodes = 1000};
        s = fs_from_fieldsv1_text(w, m, &lim, &code, err, sizeof err);
        assert_null(s);
        assert_int_equal(code, FS_ERR_LIMIT);
        /* within the default limits: decoded (any order) and sorted */
        s = fs_from_fieldsv1_text(w, m, NULL, &code, err, sizeof err);
        assert_non_null(s);
        assert_int_equal(fs_size(s), 20000);
        fs_free(s);
        lim = (fs_limits){.max_text = 100};
        s = fs_from_fieldsv1_text(w, m, &lim, &code, err, sizeof err);
        assert_null(s);
        assert_int_equal(code, FS_ERR_LIMIT);
        free(w);
    }
    /* a deep object */
    json_t *o = json_object(), *cur = o;
    for (int i = 0; i < 500; i++) {
        json_t *k = json_object();
        json_object_set_new(cur, "a", k);
        cur = k;
    }
    json_object_set_new(cur, "x", json_integer(1));
    s = fs_from_object(o, NULL, NULL, NULL, &code, err, sizeof err);
    assert_null(s);
    assert_int_equal(code, FS_ERR_LIMIT);
    json_decref(o);
}

/* list shapes of the few built-in fields the tests use */
static int shapes(void *ud, const char *const *f, size_t n, bool is_list, fs_list_info *out)
{
    (void)ud;
    static const char *const name[] = {"name"};
    static const char *const port[] = {"containerPort", "protocol"};
    static const char *const type[] = {"type"};
    const char *last = n ? f[n - 1] : "";
    if (!is_list) {
        if (n == 2 && !strcmp(f[0], "spec") && !strcmp(last, "selector")) out->type = FS_LIST_ATOMIC;
        return 0;
    }
    if (!strcmp(last, "containers")) *out = (fs_list_info){FS_LIST_MAP, name, 1};
    else if (!strcmp(last, "ports")) *out = (fs_list_info){FS_LIST_MAP, port, 2};
    else if (!strcmp(last, "conditions")) *out = (fs_list_info){FS_LIST_MAP, type, 1};
    else if (!strcmp(last, "finalizers")) out->type = FS_LIST_SET;
    return 0;
}

static const char *DEPLOY =
    "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'nginx','labels':{'app':'nginx'}},"
    "'spec':{'replicas':3,'selector':{'matchLabels':{'app':'nginx'}},'template':{'metadata':"
    "{'labels':{'app':'nginx'}},'spec':{'containers':[{'name':'nginx','image':'nginx:1.14.2',"
    "'ports':[{'containerPort':80,'protocol':'TCP'}]}]}}}}";

static fs_set *from_obj(const json_t *o)
{
    char err[256] = "";
    int code = 0;
    fs_set *s = fs_from_object(o, shapes, NULL, NULL, &code, err, sizeof err);
    if (!s) fail_msg("from_object: %d %s", code, err);
    return s;
}

static void test_from_object(void **state)
{
    (void)state;
    json_t *o = J(DEPLOY);
    /* apiVersion, kind and metadata.name are in the set here; the apiserver
     * leaves them out of the stored entry (its caller's business) */
    json_object_del(o, "apiVersion");
    json_object_del(o, "kind");
    json_object_del(json_object_get(o, "metadata"), "name");
    fs_set *s = from_obj(o);
    char *t = enc(s);
    assert_string_equal(
        t, "{\"f:metadata\":{\"f:labels\":{\"f:app\":{}}},\"f:spec\":{\"f:replicas\":{},"
           "\"f:selector\":{},\"f:template\":{\"f:metadata\":{\"f:labels\":{\"f:app\":{}}},"
           "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"nginx\\\"}\":{\".\":{},"
           "\"f:image\":{},\"f:name\":{},\"f:ports\":{\"k:{\\\"containerPort\\\":80,"
           "\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},\"f:containerPort\":{},\"f:protocol\":{}}}}}}}}}");
    assert_true(fs_has(s, ".spec.template.spec.containers[name=\"nginx\"].image"));
    assert_true(fs_has(s, ".spec.template.spec.containers[name=\"nginx\"].ports[containerPort=80,protocol=\"TCP\"]"));
    assert_true(fs_has(s, ".spec.selector"));
    assert_false(fs_has(s, ".spec.selector.matchLabels"));
    free(t);
    fs_free(s);
    json_decref(o);

    /* set lists, nulls, empty maps, atomic lists without a callback */
    o = J("{'metadata':{'finalizers':['b','a'],'annotations':{}},'spec':{'x':null,'args':['-v','-q']}}");
    s = from_obj(o);
    t = enc(s);
    assert_string_equal(t, "{\"f:metadata\":{\"f:annotations\":{},\"f:finalizers\":{\"v:\\\"a\\\"\":{},"
                           "\"v:\\\"b\\\"\":{}}},\"f:spec\":{\"f:args\":{},\"f:x\":{}}}");
    free(t);
    fs_free(s);
    char err[256];
    int code;
    s = fs_from_object(o, NULL, NULL, NULL, &code, err, sizeof err);
    t = enc(s);
    assert_string_equal(t, "{\"f:metadata\":{\"f:annotations\":{},\"f:finalizers\":{}},"
                           "\"f:spec\":{\"f:args\":{},\"f:x\":{}}}");
    free(t);
    fs_free(s);
    json_decref(o);

    /* an empty keyed list sets nothing (an empty atomic list is a value) */
    o = J("{'spec':{'containers':[],'args':[]}}");
    s = from_obj(o);
    t = enc(s);
    assert_string_equal(t, "{\"f:spec\":{\"f:args\":{}}}");
    free(t);
    fs_free(s);
    json_decref(o);

    /* keyed items missing a key, or duplicated, are refused */
    o = J("{'spec':{'containers':[{'image':'x'}]}}");
    assert_null(fs_from_object(o, shapes, NULL, NULL, &code, err, sizeof err));
    assert_int_equal(code, FS_ERR_INVALID);
    assert_string_equal(err, "associative list with keys has an element that omits key field \"name\"");
    json_decref(o);
    o = J("{'spec':{'containers':[{'name':'a'},{'name':'a','image':'x'}]}}");
    assert_null(fs_from_object(o, shapes, NULL, NULL, &code, err, sizeof err));
    assert_int_equal(code, FS_ERR_INVALID);
    json_decref(o);
}

/* ---- set algebra laws over random small sets ---- */

static unsigned rnd(unsigned long long *st)
{
    *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(*st >> 33);
}

static const char *const ELEMS[] = {
    "f:a", "f:b", "f:c", "k:{\\\"name\\\":\\\"x\\\"}", "k:{\\\"name\\\":\\\"y\\\"}",
    "k:{\\\"port\\\":80,\\\"protocol\\\":\\\"TCP\\\"}", "v:1", "v:\\\"s\\\"", "v:true", "i:0", "i:3",
};

static void gen(unsigned long long *st, char *buf, size_t *n, int depth)
{
    buf[(*n)++] = '{';
    unsigned k = depth >= 3 ? 0 : rnd(st) % 4;
    bool first = true;
    if (depth > 0 && k && rnd(st) % 2) {
        *n += (size_t)sprintf(buf + *n, "\".\":{}");
        first = false;
    }
    for (unsigned i = 0; i < k; i++) {
        *n += (size_t)sprintf(buf + *n, "%s\"%s\":", first ? "" : ",",
                              ELEMS[rnd(st) % (sizeof ELEMS / sizeof *ELEMS)]);
        first = false;
        gen(st, buf, n, depth + 1);
    }
    buf[(*n)++] = '}';
    buf[*n] = '\0';
}

static fs_set *random_set(unsigned long long *st)
{
    char buf[8192];
    size_t n = 0;
    gen(st, buf, &n, 0);
    return dec(buf);
}

static void expect_eq(const fs_set *a, const fs_set *b, const char *law)
{
    if (!fs_equal(a, b)) {
        char *x = enc(a), *y = enc(b);
        fail_msg("%s:\n  %s\n  %s", law, x, y);
    }
}

static void test_algebra_laws(void **state)
{
    (void)state;
    unsigned long long st = 42;
    fs_set *empty = fs_new();
    for (int round = 0; round < 500; round++) {
        fs_set *a = random_set(&st), *b = random_set(&st), *c = random_set(&st);
        fs_set *ab = fs_union(a, b), *ba = fs_union(b, a);
        fs_set *iab = fs_intersection(a, b), *iba = fs_intersection(b, a);
        expect_eq(ab, ba, "union commutes");
        expect_eq(iab, iba, "intersection commutes");
        fs_set *ab_c = fs_union(ab, c), *bc = fs_union(b, c), *a_bc = fs_union(a, bc);
        expect_eq(ab_c, a_bc, "union associates");
        fs_set *aa = fs_union(a, a), *ia = fs_intersection(a, a), *ae = fs_union(a, empty);
        expect_eq(aa, a, "A u A");
        expect_eq(ia, a, "A n A");
        expect_eq(ae, a, "A u 0");
        fs_set *dd = fs_difference(a, a), *ie = fs_intersection(a, empty);
        assert_true(fs_empty(dd));
        assert_true(fs_empty(ie));
        fs_set *dab = fs_difference(a, b), *rest = fs_intersection(dab, b);
        assert_true(fs_empty(rest));
        fs_set *back = fs_union(dab, iab);
        expect_eq(back, a, "(A-B) u (AnB) = A");
        assert_int_equal(fs_size(ab) + fs_size(iab), fs_size(a) + fs_size(b));
        /* A n (B u C) = (A n B) u (A n C) */
        fs_set *l = fs_intersection(a, bc), *iac = fs_intersection(a, c), *r = fs_union(iab, iac);
        expect_eq(l, r, "distributes");
        /* encoding round trip */
        char *t = enc(ab);
        fs_set *ab2 = dec(t);
        expect_eq(ab, ab2, "decode(encode)");
        char *t2 = enc(ab2);
        assert_string_equal(t, t2);
        free(t);
        free(t2);
        fs_set *all[] = {a, b, c, ab, ba, iab, iba, ab_c, bc, a_bc, aa, ia, ae, dd, ie, dab, rest, back, l, iac, r, ab2};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++) fs_free(all[i]);
    }
    fs_free(empty);
}

/* ---- conflicts ---- */

static char *conflicts_msg(const char *live_s, const char *config_s, const fs_entry *e, size_t n,
                           size_t *count)
{
    json_t *live = J(live_s), *config = J(config_s);
    fs_set *applied = from_obj(config);
    fs_conflicts c;
    assert_int_equal(fs_conflicts_find(applied, "kubectl", NULL, e, n, live, config, &c), FS_OK);
    *count = c.n;
    char *m = fs_conflict_message(&c, 4095);
    fs_conflicts_free(&c);
    fs_free(applied);
    json_decref(live);
    json_decref(config);
    return m;
}

/* Valid UTF-8 (no character cut short). */
static bool utf8_ok(const char *s)
{
    json_t *v = json_string(s); /* jansson refuses anything else */
    bool ok = v != NULL;
    json_decref(v);
    return ok;
}

/* The conflict message is bounded: upstream's text while it fits, then the
 * listing stops at a line and counts the rest, those not listed included. */
static void test_conflict_message_bounded(void **state)
{
    (void)state;
    fs_conflict three[] = {{(char *)"\"a\"", (char *)".data.k1"},
                           {(char *)"\"a\"", (char *)".data.k2"},
                           {(char *)"\"b\" using v1", (char *)".data.k1"}};
    fs_conflicts c = {three, 3, 3};
    char *m = fs_conflict_message(&c, 4095);
    assert_string_equal(m, "Apply failed with 3 conflicts: conflicts with \"a\":\n- .data.k1\n- "
                           ".data.k2\nconflicts with \"b\" using v1:\n- .data.k1");
    free(m);
    c.total = 1000; /* only the first three listed */
    m = fs_conflict_message(&c, 4095);
    assert_string_equal(m,
                        "Apply failed with 1000 conflicts: conflicts with \"a\":\n- .data.k1\n- "
                        ".data.k2\nconflicts with \"b\" using v1:\n- .data.k1\n... and 997 more");
    free(m);

    enum { N = 500 };
    fs_conflict *v = calloc(N, sizeof *v);
    char paths[N][24];
    for (int i = 0; i < N; i++) {
        snprintf(paths[i], sizeof paths[i], ".data.key-%05d", i);
        v[i] = (fs_conflict){(char *)(i < N / 2 ? "\"m1\"" : "\"m2\""), paths[i]};
    }
    c = (fs_conflicts){v, N, N};
    for (size_t max = FS_CONFLICT_MESSAGE_MIN; max <= 4096; max += 397) {
        m = fs_conflict_message(&c, max);
        assert_true(strlen(m) <= max);
        assert_memory_equal(
            m, "Apply failed with 500 conflicts: conflicts with \"m1\":\n- .data.key-00000",
            strlen("Apply failed with 500 conflicts: conflicts with \"m1\":\n- .data.key-00000"));
        size_t listed = 0, more = 0;
        for (const char *p = m; (p = strstr(p, "\n- ")); p++)
            listed++;
        const char *tail = strstr(m, "\n... and ");
        assert_non_null(tail);
        assert_int_equal(sscanf(tail, "\n... and %zu more", &more), 1);
        assert_int_equal(listed + more, N);
        assert_string_equal(tail + strlen(tail) - 5, " more");
        free(m);
    }
    free(v);

    /* one conflict longer than max: cut, never inside a character */
    char *path = malloc(2 * 1000 + 2);
    path[0] = '.';
    for (int i = 0; i < 1000; i++)
        memcpy(path + 1 + 2 * i, "\xc3\xa9", 2); /* é */
    path[2001] = '\0';
    fs_conflict one = {(char *)"\"m\"", path};
    c = (fs_conflicts){&one, 1, 1};
    for (size_t max = 200; max < 204; max++) {
        m = fs_conflict_message(&c, max);
        assert_true(strlen(m) <= max && strlen(m) >= max - 1);
        assert_true(utf8_ok(m));
        assert_memory_equal(m, "Apply failed with 1 conflict: conflict with \"m\": .\xc3\xa9", 50);
        free(m);
    }
    free(path);
}

static void test_conflicts(void **state)
{
    (void)state;
    const char *live = "{'metadata':{'labels':{'app':'nginx'}},'spec':{'replicas':3,"
                       "'template':{'spec':{'containers':[{'name':'c','image':'nginx:1'}]}}}}";
    fs_set *csa = dec("{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}}},\"f:spec\":{\"f:replicas\":{},"
                      "\"f:template\":{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},"
                      "\"f:image\":{},\"f:name\":{}}}}}}}");
    fs_set *hpa = dec("{\"f:spec\":{\"f:replicas\":{}}}");
    fs_set *own = dec("{\"f:spec\":{\"f:replicas\":{}}}");
    fs_entry e[] = {
        {"kubectl-client-side-apply", "Update", "apps/v1", NULL, csa},
        {"kubectl", "Apply", "apps/v1", NULL, own}, /* the applier's own: never a conflict */
    };
    size_t n;
    /* one conflict */
    char *m = conflicts_msg(live, "{'spec':{'replicas':5}}", e, 2, &n);
    assert_int_equal(n, 1);
    assert_string_equal(m, "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" "
                           "using apps/v1: .spec.replicas");
    free(m);
    /* the same value: co-owned, no conflict */
    m = conflicts_msg(live, "{'spec':{'replicas':3,'template':{'spec':{'containers':[{'name':'c','image':'nginx:1'}]}}}}",
                      e, 2, &n);
    assert_int_equal(n, 0);
    assert_null(m);
    /* several managers, several paths: grouped by manager, sorted */
    fs_entry e2[] = {
        {"kubectl-client-side-apply", "Update", "apps/v1", NULL, csa},
        {"hpa", "Apply", "autoscaling/v2", NULL, hpa},
        {"kubectl", "Update", "apps/v1", NULL, hpa}, /* same name, Update: another manager */
    };
    m = conflicts_msg(live, "{'metadata':{'labels':{'app':'web'}},'spec':{'replicas':5,'template':{'spec':"
                            "{'containers':[{'name':'c','image':'nginx:2'}]}}}}", e2, 3, &n);
    assert_int_equal(n, 5);
    assert_string_equal(m, "Apply failed with 5 conflicts: conflicts with \"hpa\":\n"
                           "- .spec.replicas\n"
                           "conflicts with \"kubectl\" using apps/v1:\n"
                           "- .spec.replicas\n"
                           "conflicts with \"kubectl-client-side-apply\" using apps/v1:\n"
                           "- .metadata.labels.app\n"
                           "- .spec.replicas\n"
                           "- .spec.template.spec.containers[name=\"c\"].image");
    free(m);
    /* subresource in the manager */
    char *pm = fs_print_manager("kube-controller-manager", "Update", "apps/v1", "status");
    assert_string_equal(pm, "\"kube-controller-manager\" with subresource \"status\" using apps/v1");
    free(pm);
    /* a field owned by another manager and absent live (added): a conflict */
    fs_set *lbl = dec("{\"f:metadata\":{\"f:labels\":{\"f:tier\":{}}}}");
    fs_entry e3[] = {{"other", "Apply", "v1", NULL, lbl}};
    m = conflicts_msg("{'metadata':{'labels':{}}}", "{'metadata':{'labels':{'tier':'x'}}}", e3, 1, &n);
    assert_string_equal(m, "Apply failed with 1 conflict: conflict with \"other\": .metadata.labels.tier");
    free(m);
    fs_free(lbl);
    fs_free(csa);
    fs_free(hpa);
    fs_free(own);
}

static int count_cb(void *ud, const char *p)
{
    (void)p;
    (*(int *)ud)++;
    return 0;
}

static void test_iterate_order(void **state)
{
    (void)state;
    fs_set *s = dec("{\"f:spec\":{\"f:template\":{\"f:x\":{}},\"f:replicas\":{},\"f:ports\":{\"k:{\\\"containerPort\\\":80,"
                    "\\\"protocol\\\":\\\"TCP\\\"}\":{}},\"f:fin\":{\"v:\\\"a\\\\\\\"b\\\"\":{},\"i:2\":{}}}}");
    int n = 0;
    assert_int_equal(fs_iterate(s, count_cb, &n), FS_OK);
    assert_int_equal(n, 5);
    assert_true(fs_has(s, ".spec.ports[containerPort=80,protocol=\"TCP\"]"));
    assert_true(fs_has(s, ".spec.fin[=\"a\\\"b\"]"));
    assert_true(fs_has(s, ".spec.fin[2]"));
    assert_true(fs_has(s, ".spec.template.x"));
    fs_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_upstream), cmocka_unit_test(test_canonical_order),
        cmocka_unit_test(test_decode_errors),      cmocka_unit_test(test_limits),
        cmocka_unit_test(test_from_object),        cmocka_unit_test(test_algebra_laws),
        cmocka_unit_test(test_conflicts),          cmocka_unit_test(test_conflict_message_bounded),
        cmocka_unit_test(test_iterate_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
