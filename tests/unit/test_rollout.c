/* test_rollout.c - core/rollout.h: upstream's int-or-percent fenceposts and
 * their rounding, the rolling update's steps (new ReplicaSet size, old ones
 * scaled down within maxUnavailable, unhealthy replicas first, the stall of
 * kubernetes#89209 at maxUnavailable 0), proportional scaling, Deployment
 * progress, the ranking of pods to delete, availability and the
 * pod-template hash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rollout.h"
#include "testutil.h"

static void fence(const char *surge, const char *unavail, int32_t desired, int32_t ws, int32_t wu)
{
    json_t *s = surge ? J(surge) : NULL, *u = unavail ? J(unavail) : NULL;
    int32_t gs, gu;
    assert_int_equal(ro_fenceposts(s, u, desired, &gs, &gu), 0);
    if (gs != ws || gu != wu)
        fail_msg("fenceposts(%s, %s, %d) = %d, %d; want %d, %d", surge, unavail, desired, gs, gu,
                 ws, wu);
    json_decref(s);
    json_decref(u);
}

static void test_fenceposts(void **state)
{
    (void)state;
    fence("'25%'", "'25%'", 5, 2, 1); /* surge rounds up, unavailable down */
    fence("'25%'", "'25%'", 3, 1, 0);
    fence("'25%'", "'25%'", 4, 1, 1);
    fence("'25%'", "'25%'", 10, 3, 2);
    fence("0", "'25%'", 3, 0, 1); /* both 0: unavailable 1 */
    fence("0", "0", 10, 0, 1);
    fence("2", "'50%'", 5, 2, 2);
    fence("'100%'", "0", 7, 7, 0);
    fence(NULL, NULL, 10, 0, 1);
    json_t *bad = J("'5'"), *bad2 = J("'x%'"), *ok = J("'10%'");
    int32_t v;
    assert_int_equal(ro_scaled_value(bad, 10, true, &v), -1);
    assert_int_equal(ro_scaled_value(bad2, 10, true, &v), -1);
    assert_int_equal(ro_scaled_value(ok, 15, true, &v), 0);
    assert_int_equal(v, 2);
    assert_int_equal(ro_scaled_value(ok, 15, false, &v), 0);
    assert_int_equal(v, 1);
    ro_deploy d;
    assert_int_equal(ro_deploy_init(&d, 0, true, ok, ok), 0);
    assert_int_equal(d.max_unavailable, 0); /* MaxUnavailable of 0 replicas */
    assert_int_equal(ro_deploy_init(&d, 5, false, ok, ok), 0);
    assert_int_equal(d.max_surge, 0); /* Recreate */
    assert_int_equal(d.max_unavailable, 0);
    assert_int_equal(ro_deploy_init(&d, 5, true, bad, ok), -1);
    json_decref(bad);
    json_decref(bad2);
    json_decref(ok);
}

static ro_deploy deploy(int32_t replicas, int32_t surge, int32_t unavail)
{
    return (ro_deploy){replicas, true, surge, unavail};
}

static ro_rs rs(const char *name, int64_t created, int32_t replicas, int32_t available)
{
    return (ro_rs){.replicas = replicas,
                   .available = available,
                   .created = created,
                   .name = name,
                   .max_replicas = -1};
}

static void test_new_rs_replicas(void **state)
{
    (void)state;
    ro_deploy d = deploy(5, 2, 1);
    ro_rs all[2] = {rs("old", 1, 5, 5), rs("new", 2, 0, 0)};
    assert_int_equal(ro_new_rs_replicas(&d, all, 2, &all[1]), 2); /* 5 + surge 2 - 5 */
    all[1].replicas = 2;
    assert_int_equal(ro_new_rs_replicas(&d, all, 2, &all[1]), 2); /* at 7: no more */
    all[0].replicas = 3;
    assert_int_equal(ro_new_rs_replicas(&d, all, 2, &all[1]), 4);
    all[0].replicas = 0;
    assert_int_equal(ro_new_rs_replicas(&d, all, 2, &all[1]), 5); /* never above replicas */
    d.rolling = false;
    assert_int_equal(ro_new_rs_replicas(&d, all, 2, &all[1]), 5); /* Recreate: all at once */
}

static void test_reconcile_old(void **state)
{
    (void)state;
    /* replicas 3 at a pods quota of 3, defaults 25%/25% -> surge 1,
     * unavailable 0: the new pod cannot be created, nothing may go down
     * (kubernetes#89209: upstream stalls until the progress deadline). */
    ro_deploy d = deploy(3, 1, 0);
    ro_rs newrs = rs("new", 2, 1, 0);
    ro_rs olds[1] = {rs("old", 1, 3, 3)};
    assert_int_equal(ro_reconcile_old(&d, olds, 1, &newrs), 0);
    assert_int_equal(olds[0].target, 3);
    /* maxSurge 0: unavailable 1 lets one old pod go first */
    d = deploy(3, 0, 1);
    newrs = rs("new", 2, 0, 0);
    assert_int_equal(ro_reconcile_old(&d, olds, 1, &newrs), 1);
    assert_int_equal(olds[0].target, 2);
    /* 5 replicas, defaults: surge 2, unavailable 1 */
    d = deploy(5, 2, 1);
    newrs = rs("new", 2, 2, 0);
    olds[0] = rs("old", 1, 5, 5);
    assert_int_equal(ro_reconcile_old(&d, olds, 1, &newrs), 1); /* 7 - 4 - 2 = 1 */
    assert_int_equal(olds[0].target, 4);
    /* unhealthy replicas of the oldest set go first, within maxScaledDown */
    d = deploy(10, 3, 2);
    newrs = rs("new", 9, 3, 0);
    ro_rs two[2] = {rs("b", 5, 6, 6), rs("a", 3, 4, 2)};
    /* all 13, min 8, new unavailable 3: 2 may go; "a" (older) has 2 unavailable */
    assert_int_equal(ro_reconcile_old(&d, two, 2, &newrs), 2);
    assert_string_equal(two[0].name, "a"); /* sorted oldest first */
    assert_int_equal(two[0].target, 2);
    assert_int_equal(two[1].target, 6);
    /* available above the minimum: scale down oldest first */
    d = deploy(4, 1, 1);
    newrs = rs("new", 9, 4, 4);
    ro_rs ok2[2] = {rs("x", 2, 1, 1), rs("y", 1, 1, 1)};
    /* all 6, min 3, new unavailable 0 -> 3 may go; available 6 - 3 = 3 */
    assert_int_equal(ro_reconcile_old(&d, ok2, 2, &newrs), 2);
    assert_int_equal(ok2[0].target, 0);
    assert_int_equal(ok2[1].target, 0);
    /* nothing old: nothing to do */
    assert_int_equal(ro_reconcile_old(&d, ok2, 0, &newrs), 0);
    /* status lagging (available above spec) is not a negative cleanup */
    d = deploy(2, 1, 0);
    newrs = rs("new", 9, 2, 2);
    olds[0] = rs("old", 1, 1, 2);
    assert_int_equal(ro_reconcile_old(&d, olds, 1, &newrs), 1);
    assert_int_equal(olds[0].target, 0);
}

static void test_proportional(void **state)
{
    (void)state;
    /* 10 -> 12 replicas mid-rollout (surge 3): both sets were sized for 13 */
    ro_deploy d = deploy(12, 3, 3);
    ro_rs sets[2] = {rs("new", 2, 4, 0), rs("old", 1, 6, 6)};
    sets[0].max_replicas = sets[1].max_replicas = 13;
    ro_proportional(&d, sets, 2, 10);
    /* to add 15 - 10 = 5: old 6*15/13 = 6.9 -> +1, new 4*15/13 = 4.6 -> +1,
     * leftover 3 to the largest (old) */
    assert_string_equal(sets[0].name, "old");
    assert_int_equal(sets[0].target, 10);
    assert_int_equal(sets[1].target, 5);
    /* scale to 0: every set goes to 0 */
    d = deploy(0, 0, 0);
    ro_rs down[2] = {rs("a", 1, 3, 3), rs("b", 2, 3, 3)};
    ro_proportional(&d, down, 2, 6);
    assert_int_equal(down[0].target + down[1].target, 0);
    /* scale down 20 -> 10 (surge 0): equal sizes, older first */
    d = deploy(10, 0, 1);
    ro_rs eq[2] = {rs("new", 5, 10, 10), rs("old", 1, 10, 10)};
    eq[0].max_replicas = eq[1].max_replicas = 20;
    ro_proportional(&d, eq, 2, 20);
    assert_string_equal(eq[0].name, "old");
    assert_int_equal(eq[0].target, 5);
    assert_int_equal(eq[1].target, 5);
    /* no annotation, no status: never a division by zero */
    d = deploy(4, 1, 1);
    ro_rs none[2] = {rs("a", 1, 1, 1), rs("b", 2, 1, 0)};
    ro_proportional(&d, none, 2, 0);
    assert_int_equal(none[0].target + none[1].target, 5);
}

static void test_progress(void **state)
{
    (void)state;
    ro_dstatus s = {5, 5, 5, 5, 3};
    assert_true(ro_deploy_complete(5, 3, &s));
    assert_false(ro_deploy_complete(5, 4, &s)); /* generation not observed */
    s.available = 4;
    assert_false(ro_deploy_complete(5, 3, &s));
    ro_dstatus before = {6, 2, 5, 5, 3}, after = before;
    assert_false(ro_deploy_progressing(&before, &after));
    after.updated = 3;
    assert_true(ro_deploy_progressing(&before, &after));
    after = before;
    after.replicas = 5; /* one old replica fewer */
    assert_true(ro_deploy_progressing(&before, &after));
    after = before;
    after.available = 6;
    assert_true(ro_deploy_progressing(&before, &after));
}

static ro_pod pod(size_t id, bool assigned, int phase, bool ready)
{
    return (ro_pod){.assigned = assigned,
                    .phase = phase,
                    .ready = ready,
                    .id = id,
                    .uid = "u",
                    .created = 1000};
}

static void test_pod_ranking(void **state)
{
    (void)state;
    int64_t now = 1000000000;
    ro_pod a = pod(0, false, 0, false), b = pod(1, true, 0, false);
    assert_true(ro_pod_delete_before(&a, &b, now)); /* unassigned first */
    assert_false(ro_pod_delete_before(&b, &a, now));
    a = pod(0, true, 0, false), b = pod(1, true, 2, false);
    assert_true(ro_pod_delete_before(&a, &b, now)); /* pending before running */
    a = pod(0, true, 2, false), b = pod(1, true, 2, true);
    assert_true(ro_pod_delete_before(&a, &b, now)); /* not ready first */
    a = pod(0, true, 2, true), b = pod(1, true, 2, true);
    a.deletion_cost = -5;
    assert_true(ro_pod_delete_before(&a, &b, now)); /* lower cost first */
    a.deletion_cost = 0;
    a.rank = 3, b.rank = 1;
    assert_true(ro_pod_delete_before(&a, &b, now)); /* doubled up first */
    a.rank = b.rank = 0;
    /* ready for 1 s against 1 h: the newer one first */
    a.ready_since = now - 1000, b.ready_since = now - 3600 * 1000;
    assert_true(ro_pod_delete_before(&a, &b, now));
    assert_false(ro_pod_delete_before(&b, &a, now));
    /* within one log2 bucket: by uid */
    a.ready_since = now - 1000, b.ready_since = now - 1001;
    a.uid = "b", b.uid = "a";
    assert_true(ro_pod_delete_before(&b, &a, now));
    assert_false(ro_pod_delete_before(&a, &b, now));
    /* an unknown ready time counts as the most recent */
    a.ready_since = 0, b.ready_since = now - 5;
    assert_true(ro_pod_delete_before(&a, &b, now));
    a.ready_since = b.ready_since = now - 5;
    a.restarts = 4;
    assert_true(ro_pod_delete_before(&a, &b, now)); /* more restarts first */
    a.restarts = 0;
    a.created = now - 2000, b.created = now - 86400000;
    assert_true(ro_pod_delete_before(&a, &b, now)); /* newer first */
    /* the sort: the first three are the ones to delete */
    ro_pod set[6] = {pod(0, true, 2, true),  pod(1, false, 0, false), pod(2, true, 2, true),
                     pod(3, true, 0, false), pod(4, true, 2, false),  pod(5, true, 2, true)};
    set[0].created = now - 100000000, set[2].created = now - 1000, set[5].created = now - 1000;
    set[2].uid = "a", set[5].uid = "b";
    ro_rank_for_deletion(set, 6, now);
    size_t want[6] = {1, 3, 4, 2, 5, 0};
    for (int i = 0; i < 6; i++)
        assert_int_equal(set[i].id, want[i]);
}

static void test_available(void **state)
{
    (void)state;
    assert_false(ro_pod_available(false, 1, 0, 100));
    assert_true(ro_pod_available(true, 0, 0, 100));
    assert_false(ro_pod_available(true, 0, 5, 100000)); /* unknown since when */
    assert_false(ro_pod_available(true, 1000, 5, 6000));
    assert_true(ro_pod_available(true, 1000, 5, 6001));
    assert_int_equal(ro_available_at(1000, 5), 6001);
}

static void test_template_hash(void **state)
{
    (void)state;
    json_t *a = J("{'metadata':{'labels':{'app':'web'}},'spec':{'containers':[{'name':'c',"
                  "'image':'nginx','resources':{}}]}}");
    json_t *b = J("{'metadata':{'creationTimestamp':null,'labels':{'app':'web',"
                  "'pod-template-hash':'abc'}},'spec':{'containers':[{'image':'nginx',"
                  "'name':'c'}],'volumes':[]}}");
    json_t *c = J("{'metadata':{'labels':{'app':'web'}},'spec':{'containers':[{'name':'c',"
                  "'image':'nginx:2'}]}}");
    assert_true(ro_template_equal(a, b));
    assert_false(ro_template_equal(a, c));
    char ha[16], hb[16], hc[16], hcol[16];
    assert_int_equal(ro_template_hash(a, -1, ha), 0);
    assert_int_equal(ro_template_hash(b, -1, hb), 0);
    assert_int_equal(ro_template_hash(c, -1, hc), 0);
    assert_int_equal(ro_template_hash(a, 1, hcol), 0);
    assert_string_equal(ha, hb);
    assert_string_not_equal(ha, hc);
    assert_string_not_equal(ha, hcol);
    assert_true(strlen(ha) >= 1 && strlen(ha) <= 10);
    for (const char *p = ha; *p; p++)
        assert_non_null(strchr("bcdfghjklmnpqrstvwxz2456789", *p));
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fenceposts),    cmocka_unit_test(test_new_rs_replicas),
        cmocka_unit_test(test_reconcile_old), cmocka_unit_test(test_proportional),
        cmocka_unit_test(test_progress),      cmocka_unit_test(test_pod_ranking),
        cmocka_unit_test(test_available),     cmocka_unit_test(test_template_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
