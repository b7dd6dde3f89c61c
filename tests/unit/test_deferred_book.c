/* test_deferred_book.c - core/deferred_book: deferred quota kept on a
 * cluster's ResourceQuota: the hard limits allot holds, a bind's check
 * against used + other pods' live reservations, reservations replaced per
 * pod, the recount of bound pods, and the mutating webhook's patches. */
#include "core/deferred_book.h"
#include "core/jget.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static json_t *parse(const char *text)
{
    json_error_t err;
    json_t *v = json_loads(text, 0, &err);
    if (!v) fail_msg("%s: %s", err.text, text);
    return v;
}

/* A quota named q with the given deferred hard (annotation text) and book
 * (annotation text, or NULL). */
static json_t *quota(const char *hard, const char *book, const char *spec)
{
    json_t *q = parse(spec ? spec : "{\"spec\":{\"hard\":{\"pods\":\"50\"}}}");
    json_t *ann = json_object();
    json_object_set_new(ann, DQ_HARD_ANNOTATION, json_string(hard));
    if (book) json_object_set_new(ann, DQ_BOOK_ANNOTATION, json_string(book));
    json_object_set_new(
        q, "metadata",
        json_pack("{s:s, s:s, s:o}", "name", "q", "namespace", "ns", "annotations", ann));
    return q;
}

static json_t *pod(const char *uid, const char *cpu, const char *node, const char *rv)
{
    char text[600];
    snprintf(text, sizeof text,
             "{\"metadata\":{\"name\":\"p-%s\",\"namespace\":\"ns\",\"uid\":\"%s\","
             "\"resourceVersion\":\"%s\"},\"spec\":{\"nodeName\":\"%s\",\"containers\":[{"
             "\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]}}",
             uid, uid, rv, node, cpu);
    return parse(text);
}

static void test_hard(void **state)
{
    (void)state;
    rlist *h = rl_new();
    json_t *q = quota("{\"requests.cpu\":\"25\",\"pods\":\"3\"}", NULL, NULL);
    assert_int_equal(dq_hard(q, h), 0);
    /* only deferred names: pods stays the built-in quota's */
    assert_int_equal(rl_len(h), 1);
    assert_int_equal(qty_cmp_int64(rl_get(h, "requests.cpu"), 25), 0);
    json_decref(q);
    q = quota("[1]", NULL, NULL);
    assert_int_equal(dq_hard(q, h), -1);
    assert_int_equal(rl_len(h), 0);
    json_decref(q);
    q = parse("{\"metadata\":{\"name\":\"q\"}}");
    assert_int_equal(dq_hard(q, h), 0);
    assert_int_equal(rl_len(h), 0);
    json_decref(q);
    rl_free(h);

    json_t *ns = parse("{\"metadata\":{\"labels\":{\"quota.allot.dev/mode\":\"deferred\"}}}");
    assert_true(dq_ns_deferred(ns));
    json_decref(ns);
    ns = parse("{\"metadata\":{\"labels\":{\"quota.allot.dev/mode\":\"admission\"}}}");
    assert_false(dq_ns_deferred(ns));
    assert_false(dq_ns_deferred(NULL));
    json_decref(ns);
}

static void test_check_and_reserve(void **state)
{
    (void)state;
    json_t *q = quota("{\"requests.cpu\":\"2\"}",
                      "{\"used\":{\"requests.cpu\":\"1\"},\"reservations\":[],"
                      "\"countedThrough\":\"7\"}",
                      NULL);
    rlist *h = rl_new(), *want = rl_new();
    dq_book b;
    char err[200];
    assert_int_equal(dq_hard(q, h), 0);
    assert_int_equal(dq_book_read(q, &b), 0);
    assert_string_equal(b.through, "7");
    json_t *a = pod("a", "500m", "", "10"), *c = pod("c", "600m", "", "11");
    assert_int_equal(dq_pod_charge(q, h, a, want, err, sizeof err), 0);
    assert_int_equal(rl_len(want), 1); /* requests.cpu only: what hard names */
    dbuf msg;
    dbuf_init(&msg, 4096);
    assert_int_equal(dq_check("q", h, &b, want, "a", 1000, &msg), 0);
    assert_int_equal(dq_reserve(&b, a, want, 1000), 0);
    /* a's reservation counts against c, not against a itself */
    assert_int_equal(dq_check("q", h, &b, want, "a", 1000, &msg), 0);
    assert_int_equal(dq_pod_charge(q, h, c, want, err, sizeof err), 0);
    assert_int_equal(dq_check("q", h, &b, want, "c", 1000, &msg), 1);
    assert_non_null(msg.p);
    assert_string_equal(msg.p, "quota exceeded: q, requested: requests.cpu=600m, used: "
                               "requests.cpu=1500m, limited: requests.cpu=2");
    /* once expired, a reservation holds nothing */
    assert_int_equal(dq_check("q", h, &b, want, "c", 1000 + DQ_RESERVE_S, &msg), 0);
    /* a second reservation of a replaces the first */
    assert_int_equal(dq_pod_charge(q, h, a, want, err, sizeof err), 0);
    assert_int_equal(dq_reserve(&b, a, want, 1001), 0);
    assert_int_equal(json_array_size(b.reservations), 1);
    b.hard = rl_copy(h); /* (the limits counted on) */
    char *text = dq_book_text(&b);
    assert_non_null(text);
    json_t *back = parse(text);
    assert_string_equal(jtext(back, "countedThrough"), "7");
    assert_string_equal(jtext(back, "used", "requests.cpu"), "1");
    assert_string_equal(jtext(back, "hard", "requests.cpu"), "2");
    json_t *q2 = quota("{}", text, NULL);
    dq_book again;
    assert_int_equal(dq_book_read(q2, &again), 0);
    assert_non_null(again.hard);
    assert_int_equal(qty_cmp_int64(rl_get(again.hard, "requests.cpu"), 2), 0);
    assert_int_equal(json_array_size(again.reservations), 1);
    dq_book_free(&again);
    json_decref(q2);
    json_t *r = json_array_get(json_object_get(back, "reservations"), 0);
    assert_string_equal(jtext(r, "uid"), "a");
    assert_string_equal(jtext(r, "from"), "10");
    assert_string_equal(jtext(r, "resource"), "pods");
    assert_string_equal(jtext(r, "usage", "requests.cpu"), "500m");
    assert_int_equal(json_integer_value(json_object_get(r, "expires")), 1001 + DQ_RESERVE_S);
    free(text);
    json_decref(back);
    dq_book_free(&b);
    dbuf_free(&msg);
    json_decref(a);
    json_decref(c);
    json_decref(q);
    rl_free(h);
    rl_free(want);
}

static void test_recount(void **state)
{
    (void)state;
    json_t *q = quota("{\"requests.cpu\":\"25\"}", NULL, NULL);
    rlist *h = rl_new(), *used = rl_new();
    assert_int_equal(dq_hard(q, h), 0);
    json_t *pods[4] = {pod("a", "1", "n1", "12"), pod("b", "2", "", "40"),
                       pod("c", "500m", "n2", "30"), pod("d", "4", "n1", "50")};
    /* d has finished: terminal pods release */
    json_object_set_new(pods[3], "status", json_pack("{s:s}", "phase", "Succeeded"));
    uint64_t through = 0;
    char err[200];
    assert_int_equal(dq_recount(q, h, pods, 4, 0, used, &through, err, sizeof err), 0);
    assert_int_equal(rl_len(used), 1);
    assert_int_equal(qty_cmp(rl_get(used, "requests.cpu"), rl_get(used, "requests.cpu")), 0);
    dbuf b;
    dbuf_init(&b, 1024);
    assert_int_equal(rl_format(used, &b), 0);
    assert_string_equal(b.p, "requests.cpu=1500m");
    assert_int_equal(through, 30);
    /* nothing bound: every name held at 0 */
    through = 0;
    assert_int_equal(dq_recount(q, h, pods + 1, 1, 0, used, &through, err, sizeof err), 0);
    assert_int_equal(rl_len(used), 1);
    assert_int_equal(qty_sign(rl_get(used, "requests.cpu")), 0);
    assert_int_equal(through, 0);
    /* a quota scoped to BestEffort pods charges none of these */
    json_t *be =
        quota("{\"requests.cpu\":\"25\"}", NULL, "{\"spec\":{\"scopes\":[\"BestEffort\"]}}");
    assert_int_equal(dq_recount(be, h, pods, 4, 0, used, &through, err, sizeof err), 0);
    assert_int_equal(qty_sign(rl_get(used, "requests.cpu")), 0);
    for (size_t i = 0; i < 4; i++)
        json_decref(pods[i]);
    dbuf_free(&b);
    json_decref(be);
    json_decref(q);
    rl_free(h);
    rl_free(used);
}

static void test_patches(void **state)
{
    (void)state;
    json_t *p = pod("a", "1", "", "1");
    json_t *patch = dq_pod_patch(p, "quota.allot.dev/deferred");
    assert_non_null(patch);
    json_t *op = json_array_get(patch, 0);
    assert_string_equal(jtext(op, "path"), "/spec/containers/0/resources");
    assert_string_equal(jtext(op, "value", "requests", "cpu"), "1");
    assert_string_equal(jtext(op, "value", "requests", "quota.allot.dev/deferred"), "1");
    assert_string_equal(jtext(op, "value", "limits", "quota.allot.dev/deferred"), "1");
    /* applied, nothing more to add */
    json_object_set(json_array_get(jget(p, "spec", "containers"), 0), "resources",
                    json_object_get(op, "value"));
    json_decref(patch);
    assert_null(dq_pod_patch(p, "quota.allot.dev/deferred"));
    json_decref(p);
    p = parse("{\"spec\":{\"containers\":[]}}");
    assert_null(dq_pod_patch(p, "quota.allot.dev/deferred"));
    json_decref(p);

    json_t *q = parse("{\"metadata\":{\"name\":\"q\",\"annotations\":{\"a\":\"b\","
                      "\"quota.allot.dev/deferred-hard\":\"{\\\"limits.memory\\\":\\\"1Gi\\\"}\"}},"
                      "\"spec\":{\"hard\":{\"pods\":\"50\",\"requests.cpu\":\"25\"}}}");
    patch = dq_quota_patch(q, NULL);
    assert_non_null(patch);
    assert_int_equal(json_array_size(patch), 2);
    op = json_array_get(patch, 0);
    assert_string_equal(jtext(op, "path"), "/spec/hard");
    assert_string_equal(jtext(op, "value", "pods"), "50");
    assert_null(jget(op, "value", "requests.cpu"));
    op = json_array_get(patch, 1);
    assert_string_equal(jtext(op, "path"), "/metadata/annotations");
    assert_string_equal(jtext(op, "value", "a"), "b");
    assert_string_equal(jtext(op, "value", DQ_HARD_ANNOTATION),
                        "{\"limits.memory\":\"1Gi\",\"requests.cpu\":\"25\"}");
    json_decref(patch);
    json_object_del(json_object_get(jget(q, "spec"), "hard"), "requests.cpu");
    assert_null(dq_quota_patch(q, NULL)); /* nothing deferred in spec.hard */
    /* a replace that drops allot's book gets it back from the old version */
    json_t *old = quota("{\"requests.cpu\":\"25\"}", "{\"used\":{}}", NULL);
    patch = dq_quota_patch(q, old);
    assert_non_null(patch);
    assert_int_equal(json_array_size(patch), 1);
    op = json_array_get(patch, 0);
    assert_string_equal(jtext(op, "path"), "/metadata/annotations");
    assert_string_equal(jtext(op, "value", DQ_BOOK_ANNOTATION), "{\"used\":{}}");
    assert_string_equal(jtext(op, "value", "a"), "b");
    json_decref(patch);
    /* a write that keeps it needs nothing */
    assert_null(dq_quota_patch(old, old));
    json_decref(old);
    json_decref(q);
}

static void test_room(void **state)
{
    (void)state;
    json_t *q = quota("{\"requests.cpu\":\"5\"}",
                      "{\"used\":{\"requests.cpu\":\"2\"},\"reservations\":["
                      "{\"uid\":\"x\",\"usage\":{\"requests.cpu\":\"1\"},\"expires\":100},"
                      "{\"uid\":\"y\",\"usage\":{\"requests.cpu\":\"1\"},\"expires\":50}]}",
                      NULL);
    rlist *h = rl_new(), *want = rl_new();
    dq_book b;
    assert_int_equal(dq_hard(q, h), 0);
    assert_int_equal(dq_book_read(q, &b), 0);
    /* 5 - 2 used - 1 live reservation (y's has expired) */
    rlist *room = dq_room(h, &b, 60);
    assert_non_null(room);
    assert_int_equal(qty_cmp_int64(rl_get(room, "requests.cpu"), 2), 0);
    qty one = qty_from_int64(1, 0, QTY_DECIMAL_SI), three = qty_from_int64(3, 0, QTY_DECIMAL_SI);
    rl_set(want, "requests.cpu", &three);
    assert_int_equal(dq_take(room, want), 0); /* 3 does not fit in 2 */
    assert_int_equal(qty_cmp_int64(rl_get(room, "requests.cpu"), 2), 0);
    rl_set(want, "requests.cpu", &one);
    rl_set(want, "requests.memory", &three); /* (not limited by this room) */
    assert_int_equal(dq_take(room, want), 1);
    assert_int_equal(dq_take(room, want), 1);
    assert_int_equal(dq_take(room, want), 0); /* full */
    assert_int_equal(qty_sign(rl_get(room, "requests.cpu")), 0);
    assert_false(rl_has(room, "requests.memory"));
    rl_free(room);
    /* over its hard already (a limit lowered): no room, not negative */
    rlist *low = rl_new();
    rl_set(low, "requests.cpu", &one);
    room = dq_room(low, &b, 60);
    assert_int_equal(qty_sign(rl_get(room, "requests.cpu")), 0);
    rl_free(room);
    rl_free(low);
    dq_book_free(&b);
    json_decref(q);
    rl_free(h);
    rl_free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hard),    cmocka_unit_test(test_check_and_reserve),
        cmocka_unit_test(test_recount), cmocka_unit_test(test_patches),
        cmocka_unit_test(test_room),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
