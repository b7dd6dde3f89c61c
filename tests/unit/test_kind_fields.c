/* test_kind_fields.c - field-selector values of a kind (api_kind_fields_packed)
 * and allot's derived pod field status.pendingOnQuota: the quota a pod waits on,
 * read from the PodScheduled condition whose message core/sched.c writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/kinds.h"
#include "core/dbuf.h"
#include "core/sched.h"
#include "core/selector.h"
#include "testutil.h"

#define FIELD "status.pendingOnQuota"
#define FIT_ERROR                                                                                  \
    "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No "      \
    "preemption victims found for incoming pod."

static const api_kind *pods(void)
{
    const api_kind *k = api_kind_find("", "v1", "pods");
    assert_non_null(k);
    return k;
}

/* The message the scheduler writes for a pod blocked by `quota`. Caller frees. */
static char *quota_message(size_t nnodes, const char *quota)
{
    dbuf b;
    dbuf_init(&b, 1 << 16);
    assert_int_equal(sched_quota_message(&b, nnodes, quota, "cpu=1", "cpu=2", "cpu=2"), 0);
    return dbuf_take(&b, NULL);
}

/* A pending pod with one PodScheduled condition (none when type is NULL). */
static json_t *pod_with(const char *type, const char *status, const char *reason,
                        const char *message)
{
    json_t *pod = J("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p','namespace':'n'},"
                    "'spec':{'containers':[{'name':'c','image':'i'}]},"
                    "'status':{'phase':'Pending'}}");
    if (!type) return pod;
    json_t *cond = json_pack("{s:s, s:s, s:s}", "type", type, "status", status, "reason", reason);
    if (message) json_object_set_new(cond, "message", json_string(message));
    json_t *conds = json_array();
    json_array_append_new(conds, J("{'type':'Initialized','status':'True'}"));
    json_array_append_new(conds, cond);
    json_object_set_new(json_object_get(pod, "status"), "conditions", conds);
    return pod;
}

/* The pod's status.pendingOnQuota as the index has it (and as the derive
 * function writes it directly: both must agree). */
static void expect_pending(json_t *pod, const char *want)
{
    char *packed = api_kind_fields_packed(pods(), pod);
    assert_non_null(packed);
    json_t *fields = api_fields_unpack(packed);
    const char *got = json_string_value(json_object_get(fields, FIELD));
    assert_non_null(got);
    assert_string_equal(got, want);
    char buf[256];
    sched_pod_pending_quota(pod, buf, sizeof buf);
    assert_string_equal(buf, want);
    json_decref(fields);
    free(packed);
    json_decref(pod);
}

/* The reader finds the name in exactly what the writer writes, whatever N. */
static void test_message_round_trip(void **state)
{
    (void)state;
    const char *names[] = {"compute", "q", "a.b-c", "x123456789"};
    size_t nodes[] = {1, 3, 1000};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        for (size_t j = 0; j < sizeof nodes / sizeof *nodes; j++) {
            char *msg = quota_message(nodes[j], names[i]);
            const char *name = NULL;
            size_t len = 0;
            assert_int_equal(sched_quota_message_quota(msg, &name, &len), 1);
            assert_int_equal(len, strlen(names[i]));
            assert_memory_equal(name, names[i], len);
            free(msg);
        }
}

static void test_message_others(void **state)
{
    (void)state;
    const char *name = NULL;
    size_t len = 0;
    /* No node: the scheduler's message names no quota. */
    char *none = quota_message(0, "compute");
    assert_string_equal(none, SCHED_MSG_NO_NODES);
    const char *not_ours[] = {
        none,
        FIT_ERROR,
        "",
        /* mentions quota, not where the PreFilter's message names it */
        "0/1 nodes are available: 1 Insufficient cpu. preemption: quota exceeded: q, requested: "
        "cpu=1",
        "pods \"p\" is forbidden: exceeded quota: q, requested: cpu=1, used: cpu=2, limited: cpu=2",
        "quota exceeded: q, requested: cpu=1",
        "see 0/1 nodes are available: quota exceeded: q, requested: cpu=1",
        /* cut short, or malformed */
        "0/1 nodes are available: quota exceeded: q",
        "0/1 nodes are available: quota exceeded: q,",
        "0/1 nodes are available: quota exceeded: , requested: cpu=1",
        "0/ nodes are available: quota exceeded: q, requested: cpu=1",
        "0/1 nodes are available: quota exceeded: q r, requested: cpu=1",
        "0/1 nodes are available:quota exceeded: q, requested: cpu=1",
    };
    for (size_t i = 0; i < sizeof not_ours / sizeof *not_ours; i++)
        if (sched_quota_message_quota(not_ours[i], &name, &len) != 0)
            fail_msg("read a quota from [%s]", not_ours[i]);
    assert_int_equal(sched_quota_message_quota(NULL, &name, &len), 0);
    free(none);
}

static void test_pod_field(void **state)
{
    (void)state;
    assert_true(api_kind_has_field(pods(), FIELD));
    assert_false(api_kind_has_field(api_kind_find("", "v1", "nodes"), FIELD));
    char *msg = quota_message(1, "compute");
    expect_pending(pod_with("PodScheduled", "False", "Unschedulable", msg), "compute");
    /* every other pod: "" */
    expect_pending(pod_with(NULL, NULL, NULL, NULL), "");
    expect_pending(pod_with("PodScheduled", "False", "Unschedulable", NULL), "");
    expect_pending(pod_with("PodScheduled", "False", "Unschedulable", FIT_ERROR), "");
    expect_pending(pod_with("PodScheduled", "False", "SchedulingGated", msg), "");
    expect_pending(pod_with("PodScheduled", "True", "Unschedulable", msg), "");
    expect_pending(pod_with("PodScheduled", "Unknown", "Unschedulable", msg), "");
    expect_pending(pod_with("Ready", "False", "Unschedulable", msg), "");
    expect_pending(pod_with("PodScheduled", "False", "Unschedulable",
                            "0/1 nodes are available: 1 Insufficient cpu. preemption: quota "
                            "exceeded: compute, requested: cpu=1"),
                   "");
    /* conditions that are not a list, a condition that is not an object */
    json_t *p = pod_with(NULL, NULL, NULL, NULL);
    json_object_set_new(json_object_get(p, "status"), "conditions", J("{'a':1}"));
    expect_pending(p, "");
    p = pod_with(NULL, NULL, NULL, NULL);
    json_object_set_new(json_object_get(p, "status"), "conditions", J("[1,'x',null]"));
    expect_pending(p, "");
    /* a small buffer truncates, never overruns */
    json_t *pod = pod_with("PodScheduled", "False", "Unschedulable", msg);
    char small[4];
    sched_pod_pending_quota(pod, small, sizeof small);
    assert_string_equal(small, "com");
    json_decref(pod);
    free(msg);
}

/* The path-based fields are packed as before next to the derived one. */
static void test_path_fields_unchanged(void **state)
{
    (void)state;
    json_t *pod = pod_with(NULL, NULL, NULL, NULL);
    char *packed = api_kind_fields_packed(pods(), pod);
    json_t *fields = api_fields_unpack(packed);
    json_t *want = J("{'metadata.name':'p','metadata.namespace':'n','spec.nodeName':'',"
                     "'spec.restartPolicy':'','spec.schedulerName':'',"
                     "'spec.serviceAccountName':'','spec.hostNetwork':'false',"
                     "'status.phase':'Pending','status.podIP':'','status.nominatedNodeName':'',"
                     "'status.pendingOnQuota':''}");
    assert_json_eq(fields, want);
    json_decref(want);
    json_decref(fields);
    free(packed);
    json_decref(pod);
}

/* What `--field-selector status.pendingOnQuota!=` and `=compute` select. */
static void test_selectors(void **state)
{
    (void)state;
    char *msg = quota_message(2, "compute");
    json_t *objs[] = {pod_with("PodScheduled", "False", "Unschedulable", msg),
                      pod_with("PodScheduled", "False", "Unschedulable", FIT_ERROR),
                      pod_with(NULL, NULL, NULL, NULL)};
    struct {
        const char *selector;
        bool want[3];
    } cases[] = {
        {FIELD "!=", {true, false, false}},
        {FIELD "=compute", {true, false, false}},
        {FIELD "=other", {false, false, false}},
        {FIELD "=", {false, true, true}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char err[256];
        sel_t *sel = sel_parse_fields(cases[c].selector, err, sizeof err);
        assert_non_null(sel);
        for (size_t i = 0; i < 3; i++) {
            char *packed = api_kind_fields_packed(pods(), objs[i]);
            json_t *fields = api_fields_unpack(packed);
            if (sel_matches_fields(sel, fields) != cases[c].want[i])
                fail_msg("%s on pod %zu: want %d", cases[c].selector, i, cases[c].want[i]);
            json_decref(fields);
            free(packed);
        }
        sel_free(sel);
    }
    for (size_t i = 0; i < 3; i++)
        json_decref(objs[i]);
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_message_round_trip),
        cmocka_unit_test(test_message_others),
        cmocka_unit_test(test_pod_field),
        cmocka_unit_test(test_path_fields_unchanged),
        cmocka_unit_test(test_selectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
