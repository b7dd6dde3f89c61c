/* test_jobsync.c - the pure Job and CronJob decisions (core/jobsync,
 * core/cronjobsync): parallelism and completions, failure and success
 * ordering, suspend, pod failure backoff; due schedule times, starting
 * deadlines, concurrency policies, job names, history limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "core/cronjobsync.h"
#include "core/jobsync.h"

static job_in base(void)
{
    job_in in = {.parallelism = 3,
                 .completions = 10,
                 .backoff_limit = 6,
                 .active_deadline = -1,
                 .start_time = 1000,
                 .now = 1010,
                 .now_ms = 100000};
    return in;
}

static void test_parallelism(void **state)
{
    (void)state;
    job_in in = base();
    job_out o;
    job_decide(&in, &o);
    assert_int_equal(o.state, JOB_RUNNING);
    assert_int_equal(o.create, 3);
    in.active = 2;
    job_decide(&in, &o);
    assert_int_equal(o.create, 1);
    in.succeeded = 8; /* 2 left: never more than completions - succeeded */
    in.active = 0;
    job_decide(&in, &o);
    assert_int_equal(o.create, 2);
    in.active = 3; /* parallelism lowered below active: delete */
    in.succeeded = 0;
    in.parallelism = 1;
    job_decide(&in, &o);
    assert_int_equal(o.remove, 2);
    assert_int_equal(o.create, 0);
    in = base();
    in.completions = -1; /* work queue: no new pods once one succeeded */
    in.succeeded = 1;
    in.active = 2;
    job_decide(&in, &o);
    assert_int_equal(o.create, 0);
    assert_int_equal(o.state, JOB_RUNNING);
    in.active = 0;
    job_decide(&in, &o);
    assert_int_equal(o.state, JOB_SUCCEEDING);
    in = base();
    in.parallelism = 5000;
    in.completions = 5000;
    job_decide(&in, &o);
    assert_int_equal(o.create, JOB_BURST);
}

static void test_success_and_failure(void **state)
{
    (void)state;
    job_in in = base();
    job_out o;
    in.succeeded = 10;
    job_decide(&in, &o);
    assert_int_equal(o.state, JOB_SUCCEEDING);
    assert_true(o.set_target);
    assert_true(o.set_final);
    assert_string_equal(o.reason, "CompletionsReached");
    in.success_criteria = true;
    job_decide(&in, &o);
    assert_false(o.set_target);
    in = base();
    in.failed = 7; /* > backoffLimit 6 */
    in.active = 2;
    job_decide(&in, &o);
    assert_int_equal(o.state, JOB_FAILING);
    assert_string_equal(o.reason, "BackoffLimitExceeded");
    assert_string_equal(o.message, "Job has reached the specified backoff limit");
    assert_true(o.set_target);
    assert_false(o.set_final); /* Failed waits for the active pods to go */
    assert_int_equal(o.remove, 2);
    in.failure_target = true;
    in.failure_reason = "BackoffLimitExceeded";
    in.active = 0;
    job_decide(&in, &o);
    assert_false(o.set_target);
    assert_true(o.set_final);
    in = base();
    in.failed = 6; /* at the limit: still running */
    job_decide(&in, &o);
    assert_int_equal(o.state, JOB_RUNNING);
    in = base();
    in.active_deadline = 5; /* started at 1000, now 1010 */
    job_decide(&in, &o);
    assert_string_equal(o.reason, "DeadlineExceeded");
    in.active_deadline = 30;
    job_decide(&in, &o);
    assert_int_equal(o.state, JOB_RUNNING);
    assert_int_equal(o.wake_ms, 20000);
    in = base();
    in.finished = true;
    in.failed = 100;
    job_decide(&in, &o);
    assert_int_equal(o.create + o.remove, 0);
    assert_int_equal(o.state, JOB_RUNNING);
}

static void test_suspend_and_backoff(void **state)
{
    (void)state;
    job_in in = base();
    job_out o;
    in.suspend = true;
    in.active = 3;
    in.active_deadline = 1; /* not counted while suspended */
    job_decide(&in, &o);
    assert_int_equal(o.state, JOB_RUNNING);
    assert_int_equal(o.remove, 3);
    assert_int_equal(o.create, 0);
    assert_int_equal(job_backoff_ms(0), 0);
    assert_int_equal(job_backoff_ms(1), 10000);
    assert_int_equal(job_backoff_ms(3), 40000);
    assert_int_equal(job_backoff_ms(30), JOB_BACKOFF_MAX_MS);
    in = base();
    in.failed = 2;
    in.failures_since_success = 2;
    in.last_failure_ms = in.now_ms - 5000; /* 20 s backoff, 5 s gone */
    job_decide(&in, &o);
    assert_int_equal(o.create, 0);
    assert_int_equal(o.wake_ms, 15000);
    in.last_failure_ms = in.now_ms - 20000;
    job_decide(&in, &o);
    assert_int_equal(o.create, 3);
}

static int64_t utc(int y, int mo, int d, int h, int mi)
{
    return tz_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60;
}

static void test_cron_due(void **state)
{
    (void)state;
    cron_sched s;
    char err[128];
    assert_int_equal(cron_parse("*/1 * * * *", &s, err, sizeof err), 0);
    cj_due d;
    int64_t created = utc(2024, 5, 10, 12, 0) + 30;
    cj_due_times(&s, NULL, created, created + 10, -1, &d); /* nothing due yet */
    assert_int_equal(d.scheduled, -1);
    assert_int_equal(d.next, utc(2024, 5, 10, 12, 1));
    cj_due_times(&s, NULL, created, utc(2024, 5, 10, 12, 1) + 2, -1, &d);
    assert_int_equal(d.scheduled, utc(2024, 5, 10, 12, 1));
    assert_int_equal(d.missed, 1);
    assert_false(d.too_late);
    /* controller down for 5 minutes: the most recent time runs */
    cj_due_times(&s, NULL, utc(2024, 5, 10, 12, 1), utc(2024, 5, 10, 12, 6) + 5, -1, &d);
    assert_int_equal(d.scheduled, utc(2024, 5, 10, 12, 6));
    assert_int_equal(d.missed, 5);
    /* startingDeadlineSeconds 3: 12:06 was 5 s ago, too late */
    cj_due_times(&s, NULL, utc(2024, 5, 10, 12, 1), utc(2024, 5, 10, 12, 6) + 5, 3, &d);
    assert_true(d.too_late || d.scheduled == -1);
    cj_due_times(&s, NULL, utc(2024, 5, 10, 12, 1), utc(2024, 5, 10, 12, 6) + 5, 30, &d);
    assert_int_equal(d.scheduled, utc(2024, 5, 10, 12, 6));
    assert_false(d.too_late);
    /* days down: more than 100 missed, still the latest */
    cj_due_times(&s, NULL, utc(2024, 5, 1, 0, 0), utc(2024, 5, 10, 0, 0), -1, &d);
    assert_true(d.missed > CRONJOB_MISSED_MAX);
    assert_int_equal(d.scheduled, utc(2024, 5, 10, 0, 0));
}

static void test_cron_policy_names_history(void **state)
{
    (void)state;
    assert_int_equal(cj_concurrency("Allow", 2), CJ_RUN);
    assert_int_equal(cj_concurrency("Forbid", 1), CJ_SKIP);
    assert_int_equal(cj_concurrency("Forbid", 0), CJ_RUN);
    assert_int_equal(cj_concurrency("Replace", 1), CJ_REPLACE);
    char name[64];
    cj_job_name("hello", utc(2024, 5, 10, 12, 1), name, sizeof name);
    assert_string_equal(name, "hello-28589041");
    cj_job j[] = {
        {"a", 100, true, true, false}, {"b", 300, true, true, false},
        {"c", 200, true, true, false}, {"d", 400, false, false, false},
        {"e", 50, true, false, false}, {"f", 60, true, false, false},
    };
    assert_int_equal(cj_history(j, 6, 1, 1), 3);
    assert_true(j[0].remove && j[2].remove && j[4].remove);
    assert_false(j[1].remove || j[3].remove || j[5].remove);
    for (int i = 0; i < 6; i++)
        j[i].remove = false;
    assert_int_equal(cj_history(j, 6, 0, -1), 3); /* limit 0 removes all; -1 none */
    assert_false(j[4].remove);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallelism),
        cmocka_unit_test(test_success_and_failure),
        cmocka_unit_test(test_suspend_and_backoff),
        cmocka_unit_test(test_cron_due),
        cmocka_unit_test(test_cron_policy_names_history),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
