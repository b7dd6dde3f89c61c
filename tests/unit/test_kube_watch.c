/* test_kube_watch.c - kube/watch: the watch stream decoder (events split
 * across chunks, several per chunk, no newline between them, the size
 * bound, malformed text, BOOKMARK and ERROR 410), whether a Status means
 * "resourceVersion gone", and the reconnect backoff. */
#include "kube/watch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* What the callback saw: "TYPE name rv code;" per event. */
typedef struct seen {
    char log[4096];
    int n;
    int stop_after; /* ask to stop after this many events (0: never) */
} seen;

static int record(void *arg, const kube_watch_event *ev)
{
    seen *s = arg;
    const char *name =
        json_string_value(json_object_get(json_object_get(ev->object, "metadata"), "name"));
    size_t l = strlen(s->log);
    snprintf(s->log + l, sizeof s->log - l, "%s %s %s %ld;", ev->type_name, name ? name : "-",
             ev->rv ? ev->rv : "-", ev->code);
    s->n++;
    return s->stop_after && s->n >= s->stop_after;
}

#define EV_A                                                                                       \
    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"11\"},\"data\":{\"k\":\"}{\\\"\"}}}\n"
#define EV_M                                                                                       \
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"12\"}}}\n"
#define EV_D                                                                                       \
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"13\"}}}\n"
#define EV_B                                                                                       \
    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"resourceVersion\":\"20\"}}}\n"
#define EV_E                                                                                       \
    "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource version: 5 (10)\",\"reason\":\"Expired\",\"code\":410}}\n"
#define WANT "ADDED a 11 0;MODIFIED a 12 0;DELETED a 13 0;BOOKMARK - 20 0;"

static void feed_ok(kube_watch_decoder *d, const char *p, size_t n, seen *s)
{
    char err[256] = "";
    int rc = kube_watch_feed(d, p, n, record, s, err, sizeof err);
    if (rc != 0) fail_msg("feed: %d %s", rc, err);
}

static void test_whole_and_every_split(void **state)
{
    (void)state;
    const char *stream = EV_A EV_M EV_D EV_B;
    size_t len = strlen(stream);
    /* all in one chunk */
    kube_watch_decoder d;
    kube_watch_init(&d, 0);
    seen s = {0};
    feed_ok(&d, stream, len, &s);
    assert_string_equal(s.log, WANT);
    assert_false(kube_watch_pending(&d));
    kube_watch_cleanup(&d);
    /* split at every position into two chunks */
    for (size_t cut = 0; cut <= len; cut++) {
        kube_watch_init(&d, 0);
        memset(&s, 0, sizeof s);
        feed_ok(&d, stream, cut, &s);
        feed_ok(&d, stream + cut, len - cut, &s);
        assert_string_equal(s.log, WANT);
        kube_watch_cleanup(&d);
    }
    /* one byte at a time: pending inside each event, not between */
    kube_watch_init(&d, 0);
    memset(&s, 0, sizeof s);
    for (size_t i = 0; i < len; i++) {
        feed_ok(&d, stream + i, 1, &s);
        if (stream[i] == '{' && i > 0 && stream[i - 1] == '\n') assert_true(kube_watch_pending(&d));
    }
    assert_string_equal(s.log, WANT);
    assert_false(kube_watch_pending(&d));
    kube_watch_cleanup(&d);
}

static void test_no_newlines_and_whitespace(void **state)
{
    (void)state;
    /* objects back to back, CRLF and blanks between: same events */
    const char *stream = " \r\n" EV_A "\r\n\t" EV_M EV_D;
    char buf[2048];
    size_t m = 0;
    for (const char *p = stream; *p; p++)
        if (!(*p == '\n' && p[1] == '{')) buf[m++] = *p; /* drop the newlines between objects */
    kube_watch_decoder d;
    kube_watch_init(&d, 0);
    seen s = {0};
    feed_ok(&d, buf, m, &s);
    assert_string_equal(s.log, "ADDED a 11 0;MODIFIED a 12 0;DELETED a 13 0;");
    kube_watch_cleanup(&d);
}

static void test_error_410(void **state)
{
    (void)state;
    kube_watch_decoder d;
    kube_watch_init(&d, 0);
    seen s = {0};
    feed_ok(&d, EV_E, strlen(EV_E), &s);
    assert_string_equal(s.log, "ERROR - - 410;");
    json_t *st = json_loads(strchr(EV_E, ':') + 1 + strlen("\"ERROR\",\"object\":"),
                            JSON_DISABLE_EOF_CHECK, NULL);
    assert_non_null(st);
    assert_true(kube_status_expired(st));
    json_decref(st);
    kube_watch_cleanup(&d);
}

static void test_stop_keeps_the_rest(void **state)
{
    (void)state;
    const char *stream = EV_A EV_M EV_D;
    kube_watch_decoder d;
    kube_watch_init(&d, 0);
    seen s = {.stop_after = 1};
    char err[128];
    assert_int_equal(kube_watch_feed(&d, stream, strlen(stream), record, &s, err, sizeof err), 1);
    assert_string_equal(s.log, "ADDED a 11 0;");
    s.stop_after = 0;
    feed_ok(&d, NULL, 0, &s); /* the buffered rest decodes on the next feed */
    assert_string_equal(s.log, "ADDED a 11 0;MODIFIED a 12 0;DELETED a 13 0;");
    kube_watch_cleanup(&d);
}

static void expect_fail(const char *text, size_t max, const char *want)
{
    kube_watch_decoder d;
    kube_watch_init(&d, max);
    seen s = {0};
    char err[256] = "";
    assert_int_equal(kube_watch_feed(&d, text, strlen(text), record, &s, err, sizeof err), -1);
    if (!strstr(err, want)) fail_msg("error [%s], want [%s]", err, want);
    /* failed stays failed, until reset */
    assert_int_equal(kube_watch_feed(&d, EV_A, strlen(EV_A), record, &s, err, sizeof err), -1);
    kube_watch_reset(&d);
    int before = s.n;
    const char *small = "{\"type\":\"ADDED\",\"object\":{}}";
    assert_int_equal(kube_watch_feed(&d, small, strlen(small), record, &s, err, sizeof err), 0);
    assert_int_equal(s.n, before + 1);
    kube_watch_cleanup(&d);
}

static void test_malformed(void **state)
{
    (void)state;
    expect_fail("[1,2]\n", 0, "not a JSON object");
    expect_fail("garbage\n", 0, "not a JSON object");
    expect_fail("{\"type\":\"ADDED\",\"object\":{\"a\":}}\n", 0, "malformed event");
    expect_fail("{\"type\":\"ADDED\",\"object\":{]}\n", 0, "malformed event");
    expect_fail("{\"type\":\"SOMETHING\",\"object\":{}}\n", 0, "known type");
    expect_fail("{\"object\":{}}\n", 0, "known type");
    expect_fail("{\"type\":\"ADDED\",\"object\":[]}\n", 0, "without an object");
    expect_fail("{\"type\":\"ADDED\"}\n", 0, "without an object");
    /* a good event before the bad one is still delivered */
    expect_fail(EV_M "{\"type\":1}\n", 0, "known type");
}

static void test_size_bound(void **state)
{
    (void)state;
    /* EV_A is ~120 bytes: it passes a bound of 1000, fails one of 64 */
    kube_watch_decoder d;
    kube_watch_init(&d, 1000);
    seen s = {0};
    feed_ok(&d, EV_A, strlen(EV_A), &s);
    kube_watch_cleanup(&d);
    expect_fail(EV_A, 64, "larger than the bound");
    /* an event that never ends fails once past the bound, fed in pieces */
    kube_watch_init(&d, 4096);
    char err[256];
    char chunk[1024];
    memset(chunk, ' ', sizeof chunk);
    memcpy(chunk, "{\"type\":\"ADDED\",\"object\":{\"x\":\"", 31);
    int rc = 0, i;
    for (i = 0; i < 10 && rc == 0; i++) {
        rc = kube_watch_feed(&d, chunk, sizeof chunk, record, &s, err, sizeof err);
        memset(chunk, 'x', sizeof chunk);
    }
    assert_int_equal(rc, -1);
    assert_int_equal(i, 5); /* the 5th KiB crosses 4096 */
    assert_true(d.cap <= 8192);
    kube_watch_cleanup(&d);
}

static void test_status_expired(void **state)
{
    (void)state;
    const char *yes[] = {"{\"code\":410}", "{\"reason\":\"Expired\"}", "{\"reason\":\"Gone\"}",
                         "{\"code\":500,\"message\":\"too old resource version: 1 (2)\"}"};
    const char *no[] = {"{\"code\":500,\"reason\":\"InternalError\"}", "{}", "[]", "\"x\""};
    for (size_t i = 0; i < 4; i++) {
        json_t *y = json_loads(yes[i], JSON_DECODE_ANY, NULL),
               *n = json_loads(no[i], JSON_DECODE_ANY, NULL);
        assert_true(kube_status_expired(y));
        assert_false(kube_status_expired(n));
        json_decref(y);
        json_decref(n);
    }
    assert_false(kube_status_expired(NULL));
}

static void test_backoff(void **state)
{
    (void)state;
    /* doubling from 100 ms, jittered into [d/2, d], capped at 30 s */
    assert_int_equal(kube_backoff_ms(0, 100, 30000, 0.0), 50);
    assert_int_equal(kube_backoff_ms(0, 100, 30000, 0.999999), 99);
    assert_int_equal(kube_backoff_ms(3, 100, 30000, 0.0), 400);
    assert_int_equal(kube_backoff_ms(20, 100, 30000, 0.0), 15000);
    assert_true(kube_backoff_ms(1000, 100, 30000, 0.5) <= 30000);
    assert_int_equal(kube_backoff_ms(UINT32_MAX, 100, 30000, 1.5), 29999);
    for (unsigned a = 0; a < 40; a++) {
        long lo = kube_backoff_ms(a, 100, 30000, 0), hi = kube_backoff_ms(a, 100, 30000, 0.99);
        assert_true(lo >= 50 && hi <= 30000 && lo <= hi);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_and_every_split),
        cmocka_unit_test(test_no_newlines_and_whitespace),
        cmocka_unit_test(test_error_410),
        cmocka_unit_test(test_stop_keeps_the_rest),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_size_bound),
        cmocka_unit_test(test_status_expired),
        cmocka_unit_test(test_backoff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
