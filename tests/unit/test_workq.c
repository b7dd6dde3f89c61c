/* test_workq.c - controllers/workq.h: marks deduplicated in order of first
 * mark, rounds and marks made during a sync, due times (order, an earlier
 * one replacing a later one, forget), the stop flag, and 100,000 due times
 * with ticks that do not scan them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "controllers/workq.h"

/* What a run synced, as "a,b,c", and what each sync does to the queue. */
typedef struct rec {
    workq *q;
    char log[1024];
    int syncs;
    const char *self_mark; /* its sync marks it again, self_left times */
    int self_left;
    const char *on, *marks;  /* on's sync marks `marks` */
    const char *stop_on;     /* its sync sets stop */
    const char *forget_self; /* its sync forgets its own key, then reads it */
    atomic_bool stop;
} rec;

static void sync_rec(void *arg, const char *key)
{
    rec *r = arg;
    r->syncs++;
    size_t len = strlen(r->log);
    snprintf(r->log + len, sizeof r->log - len, "%s%s", len ? "," : "", key);
    if (r->self_mark && !strcmp(key, r->self_mark) && r->self_left) {
        r->self_left--;
        workq_mark(r->q, key);
    }
    if (r->on && !strcmp(key, r->on)) workq_mark(r->q, r->marks);
    if (r->stop_on && !strcmp(key, r->stop_on)) atomic_store(&r->stop, true);
    if (r->forget_self && !strcmp(key, r->forget_self)) {
        workq_forget(r->q, key);
        assert_string_equal(key, r->forget_self); /* still valid (ASan would tell) */
    }
}

static rec *rec_new(void)
{
    rec *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->q = workq_new();
    assert_non_null(r->q);
    atomic_init(&r->stop, false);
    return r;
}

static void rec_free(rec *r)
{
    workq_free(r->q);
    free(r);
}

/* Run at now; the log of what was synced (cleared for the next run). */
static const char *run(rec *r, int64_t now, bool *left)
{
    static char out[1024];
    r->log[0] = '\0';
    bool l = workq_run(r->q, now, sync_rec, r, &r->stop);
    if (left) *left = l;
    memcpy(out, r->log, sizeof out);
    return out;
}

static void test_mark_dedup_order(void **state)
{
    (void)state;
    rec *r = rec_new();
    bool left = true;
    assert_string_equal(run(r, 0, &left), "");
    assert_false(left);
    const char *marks[] = {"b", "a", "b", "c", "a", "c", "b"};
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
        workq_mark(r->q, marks[i]);
    assert_int_equal(workq_queued(r->q), 3);
    assert_string_equal(run(r, 0, &left), "b,a,c");
    assert_false(left);
    assert_int_equal(workq_queued(r->q), 0);
    assert_string_equal(run(r, 0, &left), ""); /* synced: gone */
    workq_mark(r->q, "a");
    assert_string_equal(run(r, 0, NULL), "a");
    rec_free(r);
}

static void test_rounds(void **state)
{
    (void)state;
    rec *r = rec_new();
    r->self_mark = "x";
    r->self_left = 100;
    workq_mark(r->q, "x");
    workq_mark(r->q, "y");
    bool left = false;
    /* x marks itself in every round: three rounds, then it waits */
    assert_string_equal(run(r, 0, &left), "x,y,x,x");
    assert_true(left);
    assert_int_equal(workq_queued(r->q), 1);
    assert_string_equal(run(r, 0, &left), "x,x,x");
    assert_true(left);
    r->self_left = 1;
    assert_string_equal(run(r, 0, &left), "x,x");
    assert_false(left);
    rec_free(r);
}

static void test_mark_during_sync(void **state)
{
    (void)state;
    rec *r = rec_new();
    /* a marks b, not yet synced this round: b is synced once */
    r->on = "a";
    r->marks = "b";
    workq_mark(r->q, "a");
    workq_mark(r->q, "b");
    workq_mark(r->q, "c");
    assert_string_equal(run(r, 0, NULL), "a,b,c");
    /* c marks a, already synced this round: a again in the next round */
    r->on = "c";
    r->marks = "a";
    workq_mark(r->q, "a");
    workq_mark(r->q, "b");
    workq_mark(r->q, "c");
    bool left = true;
    assert_string_equal(run(r, 0, &left), "a,b,c,a");
    assert_false(left);
    /* a key that is only marked by a sync is queued for the next round */
    r->on = "a";
    r->marks = "new";
    workq_mark(r->q, "a");
    assert_string_equal(run(r, 0, NULL), "a,new");
    rec_free(r);
}

static void test_due_order(void **state)
{
    (void)state;
    rec *r = rec_new();
    int64_t at = 0;
    assert_false(workq_next_due(r->q, &at));
    workq_due(r->q, "c", 30);
    workq_due(r->q, "a", 10);
    workq_due(r->q, "b", 20);
    workq_due(r->q, "d", 50);
    workq_due(r->q, "e", 50); /* a tie: in the order set */
    assert_true(workq_next_due(r->q, &at));
    assert_int_equal(at, 10);
    bool left = true;
    assert_string_equal(run(r, 9, &left), "");
    assert_false(left);
    assert_int_equal(workq_queued(r->q), 0);
    assert_string_equal(run(r, 20, NULL), "a,b");
    assert_true(workq_next_due(r->q, &at));
    assert_int_equal(at, 30);
    assert_string_equal(run(r, 1000, NULL), "c,d,e");
    assert_false(workq_next_due(r->q, &at));
    assert_string_equal(run(r, 2000, NULL), ""); /* a due time fires once */
    /* marks queued before keys that come due; negative times are times too */
    workq_mark(r->q, "z");
    workq_due(r->q, "y", -5);
    workq_due(r->q, "z", -7); /* marked and due: synced once */
    assert_string_equal(run(r, -5, NULL), "z,y");
    assert_false(workq_next_due(r->q, &at));
    rec_free(r);
}

static void test_earlier_due_replaces_later(void **state)
{
    (void)state;
    rec *r = rec_new();
    int64_t at = 0;
    workq_due(r->q, "a", 100);
    workq_due(r->q, "a", 50); /* earlier: replaces */
    assert_true(workq_next_due(r->q, &at));
    assert_int_equal(at, 50);
    assert_string_equal(run(r, 49, NULL), "");
    assert_string_equal(run(r, 50, NULL), "a");
    assert_string_equal(run(r, 100, NULL), ""); /* 100 is gone with it */
    workq_due(r->q, "b", 50);
    workq_due(r->q, "b", 100); /* later: does not replace */
    assert_string_equal(run(r, 60, NULL), "b");
    assert_string_equal(run(r, 100, NULL), "");
    /* lowering one key among others reorders it */
    workq_due(r->q, "p", 10);
    workq_due(r->q, "q", 20);
    workq_due(r->q, "s", 30);
    workq_due(r->q, "s", 5);
    assert_string_equal(run(r, 15, NULL), "s,p");
    assert_string_equal(run(r, 25, NULL), "q");
    rec_free(r);
}

static void test_forget(void **state)
{
    (void)state;
    rec *r = rec_new();
    int64_t at = 0;
    workq_forget(r->q, "nothing"); /* unknown: nothing */
    workq_due(r->q, "a", 10);
    workq_due(r->q, "b", 20);
    workq_due(r->q, "c", 30);
    workq_forget(r->q, "a");
    assert_true(workq_next_due(r->q, &at));
    assert_int_equal(at, 20);
    workq_forget(r->q, "c");
    assert_string_equal(run(r, 100, NULL), "b");
    assert_false(workq_next_due(r->q, &at));
    /* forget drops the due time, not a mark */
    workq_mark(r->q, "m");
    workq_due(r->q, "m", 10);
    workq_forget(r->q, "m");
    assert_string_equal(run(r, 100, NULL), "m");
    assert_string_equal(run(r, 200, NULL), "");
    /* a due time set again after forget counts */
    workq_due(r->q, "a", 10);
    workq_forget(r->q, "a");
    workq_due(r->q, "a", 40);
    assert_string_equal(run(r, 30, NULL), "");
    assert_string_equal(run(r, 40, NULL), "a");
    /* a sync that forgets its own key (its object gone) keeps its key */
    r->forget_self = "gone";
    workq_mark(r->q, "gone");
    workq_due(r->q, "gone", 500);
    assert_string_equal(run(r, 0, NULL), "gone");
    assert_false(workq_next_due(r->q, &at));
    assert_string_equal(run(r, 1000, NULL), "");
    rec_free(r);
}

static void test_stop(void **state)
{
    (void)state;
    rec *r = rec_new();
    r->stop_on = "b";
    workq_mark(r->q, "a");
    workq_mark(r->q, "b");
    workq_mark(r->q, "c");
    workq_mark(r->q, "d");
    bool left = false;
    assert_string_equal(run(r, 0, &left), "a,b");
    assert_true(left);
    assert_int_equal(workq_queued(r->q), 2);
    /* still stopped: nothing runs, due keys wait queued */
    workq_due(r->q, "e", 5);
    assert_string_equal(run(r, 10, &left), "");
    assert_true(left);
    assert_int_equal(workq_queued(r->q), 3);
    atomic_store(&r->stop, false);
    r->stop_on = NULL;
    workq_mark(r->q, "a");
    assert_string_equal(run(r, 10, &left), "c,d,e,a");
    assert_false(left);
    /* freeing a queue holding queued and due keys frees them (ASan) */
    workq_mark(r->q, "q1");
    workq_due(r->q, "q2", 100);
    workq_due(r->q, "q1", 100);
    rec_free(r);
}

/* ---- many keys ---- */

#define MANY 100000

typedef struct many {
    int64_t due[MANY]; /* -1: none expected */
    int synced[MANY];
    int64_t last_at; /* the due time of the previous key synced */
    int64_t now;
    int count;
} many;

static void sync_many(void *arg, const char *key)
{
    many *m = arg;
    int i = atoi(key + 1);
    assert_true(i >= 0 && i < MANY);
    assert_true(m->due[i] >= 0);
    assert_true(m->due[i] <= m->now);
    assert_true(m->due[i] >= m->last_at); /* earliest first */
    m->last_at = m->due[i];
    m->synced[i]++;
    m->count++;
}

static void test_many_due_times(void **state)
{
    (void)state;
    many *m = calloc(1, sizeof *m);
    workq *q = workq_new();
    assert_non_null(m);
    assert_non_null(q);
    char key[16];
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < MANY; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        m->due[i] = 1000 + (int64_t)(x % 1000000);
        snprintf(key, sizeof key, "k%d", i);
        workq_due(q, key, m->due[i]);
    }
    for (int i = 0; i < MANY; i += 3) { /* a third later: no change */
        snprintf(key, sizeof key, "k%d", i);
        workq_due(q, key, m->due[i] + 5000);
    }
    for (int i = 1; i < MANY; i += 3) { /* a third earlier: replaced */
        snprintf(key, sizeof key, "k%d", i);
        m->due[i] -= 999;
        workq_due(q, key, m->due[i]);
    }
    for (int i = 2; i < MANY; i += 6) { /* a sixth forgotten */
        snprintf(key, sizeof key, "k%d", i);
        workq_forget(q, key);
        m->due[i] = -1;
    }
    /* ticks with nothing due do not look at the 100,000 keys: a scan each
     * would be 10^10 steps */
    clock_t t0 = clock();
    m->now = 0;
    for (int i = 0; i < MANY; i++)
        assert_false(workq_run(q, 0, sync_many, m, NULL));
    double idle = (double)(clock() - t0) / CLOCKS_PER_SEC;
    assert_true(idle < 5.0);
    assert_int_equal(m->count, 0);
    int64_t at = 0;
    assert_true(workq_next_due(q, &at));
    assert_true(at >= 1);
    /* then time passes: each key once, when due, earliest first */
    for (m->now = 0; m->now <= 1010000; m->now += 777)
        workq_run(q, m->now, sync_many, m, NULL);
    workq_run(q, INT64_MAX, sync_many, m, NULL);
    int want = 0;
    for (int i = 0; i < MANY; i++) {
        assert_int_equal(m->synced[i], m->due[i] >= 0 ? 1 : 0);
        want += m->due[i] >= 0;
    }
    assert_int_equal(m->count, want);
    assert_false(workq_next_due(q, &at));
    workq_free(q);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mark_dedup_order),
        cmocka_unit_test(test_rounds),
        cmocka_unit_test(test_mark_during_sync),
        cmocka_unit_test(test_due_order),
        cmocka_unit_test(test_earlier_due_replaces_later),
        cmocka_unit_test(test_forget),
        cmocka_unit_test(test_stop),
        cmocka_unit_test(test_many_due_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
