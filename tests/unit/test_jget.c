/* test_jget.c - core/jget: members by a path of keys, NULL (jget, jstr) or
 * "" (jtext) wherever the path does not lead to a value of the type asked. */
#include "core/jget.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static json_t *parse(const char *text)
{
    json_error_t err;
    json_t *v = json_loads(text, 0, &err);
    assert_non_null(v);
    return v;
}

static void test_paths(void **state)
{
    (void)state;
    json_t *pod = parse("{\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"web\"}},"
                        "\"spec\":{\"nodeName\":\"n1\",\"priority\":7,\"containers\":[{}]}}");
    assert_ptr_equal(jget(pod, "metadata"), json_object_get(pod, "metadata"));
    assert_string_equal(jstr(pod, "metadata", "name"), "p");
    assert_string_equal(jstr(pod, "metadata", "labels", "app"), "web");
    assert_string_equal(jtext(pod, "spec", "nodeName"), "n1");
    assert_int_equal(json_integer_value(jget(pod, "spec", "priority")), 7);
    assert_true(json_is_array(jget(pod, "spec", "containers")));

    /* a missing key, at any depth */
    assert_null(jget(pod, "status"));
    assert_null(jget(pod, "status", "phase"));
    assert_null(jget(pod, "metadata", "labels", "tier"));
    assert_null(jstr(pod, "status", "phase"));
    assert_string_equal(jtext(pod, "status", "phase"), "");

    /* a step that is not an object: a string, a number, an array */
    assert_null(jget(pod, "metadata", "name", "x"));
    assert_null(jget(pod, "spec", "priority", "x"));
    assert_null(jget(pod, "spec", "containers", "x"));

    /* a value of another type than string */
    assert_null(jstr(pod, "spec", "priority"));
    assert_string_equal(jtext(pod, "spec", "priority"), "");
    assert_null(jstr(pod, "metadata", "labels"));

    /* no object at all */
    assert_null(jget(NULL, "metadata"));
    assert_null(jstr(NULL, "metadata", "name"));
    assert_string_equal(jtext(NULL, "metadata", "name"), "");
    assert_string_equal(json_text(NULL), "");
    json_decref(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
