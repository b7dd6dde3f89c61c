/* test_openapi_pb.c - a Swagger 2.0 document as gnostic's openapi_v2
 * protobuf (api/openapi_pb.c): the wire bytes of a small document, worked
 * out by hand from OpenAPIv2.proto's field numbers, and a walk of a larger
 * one that checks every nested message is well formed and where it should
 * be. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "api/openapi_pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_small_document(void **state)
{
    (void)state;
    json_t *doc = J("{'swagger':'2.0','info':{'title':'K','version':'v'},"
                    "'definitions':{'A':{'type':'string','x-a':1}}}");
    static const unsigned char want[] = {
        0x0a, 0x03, '2',  '.',  '0',                                  /* swagger (1) */
        0x12, 0x06, 0x0a, 0x01, 'K',  0x12, 0x01, 'v',                /* info (2): title, version */
        0x4a, 0x1f,                                                   /* definitions (9) */
        0x0a, 0x1d,                                                   /* NamedSchema (1) */
        0x0a, 0x01, 'A',                                              /* name */
        0x12, 0x18,                                                   /* value: Schema */
        0xb2, 0x01, 0x08, 0x0a, 0x06, 's',  't',  'r', 'i', 'n', 'g', /* type (22) */
        0xfa, 0x01, 0x0a,                                             /* vendor_extension (31) */
        0x0a, 0x03, 'x',  '-',  'a',                                  /* name */
        0x12, 0x03, 0x12, 0x01, '1',                                  /* value: Any{yaml: "1"} */
    };
    size_t len = 0;
    unsigned char *got = oapb_encode(doc, &len);
    assert_non_null(got);
    assert_int_equal(len, sizeof want);
    assert_memory_equal(got, want, sizeof want);
    free(got);
    json_decref(doc);
}

/* ---- a minimal reader ---- */

typedef struct rd {
    const unsigned char *p, *end;
} rd;

static uint64_t varint(rd *r)
{
    uint64_t v = 0;
    for (int shift = 0; r->p < r->end && shift < 64; shift += 7) {
        unsigned char b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    fail_msg("truncated varint");
    return 0;
}

/* The length-delimited field `field` of a message, the n-th occurrence. */
static rd sub(rd m, unsigned field, int nth)
{
    while (m.p < m.end) {
        uint64_t key = varint(&m);
        unsigned f = (unsigned)(key >> 3), wire = (unsigned)(key & 7);
        if (wire == 0) {
            varint(&m);
        } else if (wire == 1) {
            m.p += 8;
        } else if (wire == 2) {
            uint64_t n = varint(&m);
            if (n > (uint64_t)(m.end - m.p)) fail_msg("length past the end");
            rd s = {m.p, m.p + n};
            m.p += n;
            if (f == field && nth-- == 0) return s;
        } else {
            fail_msg("wire type %u", wire);
        }
    }
    fail_msg("no field %u", field);
    return m;
}

static void want_str(rd m, unsigned field, const char *want)
{
    rd s = sub(m, field, 0);
    assert_int_equal((size_t)(s.end - s.p), strlen(want));
    assert_memory_equal(s.p, want, strlen(want));
}

/* The Schema of the n-th named entry of a Definitions/Properties body. */
static rd named(rd m, int nth, const char *name)
{
    rd e = sub(m, 1, nth);
    want_str(e, 1, name);
    return sub(e, 2, 0);
}

static void test_schema_members(void **state)
{
    (void)state;
    json_t *doc =
        J("{'info':{'title':'Kubernetes','version':'v1.32.0'},'definitions':{"
          "'io.k8s.Foo':{'description':'d','type':'object','required':['spec'],"
          " 'properties':{"
          "  'spec':{'type':'object','properties':{"
          "   'n':{'type':'integer','minimum':1.5,'maxLength':3},"
          "   'e':{'type':'string','enum':['a','b'],'pattern':'^a'},"
          "   'l':{'type':'array','items':{'$ref':'#/definitions/io.k8s.Bar'}},"
          "   'm':{'type':'object','additionalProperties':{'type':'string'}},"
          "   'f':{'type':'object','additionalProperties':false}}},"
          "  'metadata':{'$ref':'#/definitions/io.k8s.Meta','description':'m'}},"
          " 'x-kubernetes-group-version-kind':[{'group':'g','kind':'Foo','version':'v1'}],"
          " 'nullable':true,'anyOf':[{'type':'string'}]}}}");
    size_t len;
    unsigned char *b = oapb_encode(doc, &len);
    assert_non_null(b);
    rd d = {b, b + len};
    want_str(d, 1, "2.0");
    want_str(sub(d, 2, 0), 2, "v1.32.0");
    rd foo = named(sub(d, 9, 0), 0, "io.k8s.Foo");
    want_str(foo, 4, "d");
    want_str(sub(foo, 22, 0), 1, "object");
    want_str(foo, 19, "spec");
    rd vendor = sub(foo, 31, 0);
    want_str(vendor, 1, "x-kubernetes-group-version-kind");
    want_str(sub(vendor, 2, 0), 2, "[{\"group\":\"g\",\"kind\":\"Foo\",\"version\":\"v1\"}]");
    rd props = sub(foo, 25, 0);
    rd spec = named(props, 0, "spec");
    rd meta = named(props, 1, "metadata");
    want_str(meta, 1, "#/definitions/io.k8s.Meta");
    rd sp = sub(spec, 25, 0);
    rd n = named(sp, 0, "n");
    want_str(sub(n, 22, 0), 1, "integer");
    rd e = named(sp, 1, "e");
    want_str(e, 13, "^a");
    want_str(sub(e, 20, 0), 2, "\"a\"");
    want_str(sub(e, 20, 1), 2, "\"b\"");
    rd l = named(sp, 2, "l");
    want_str(sub(sub(l, 23, 0), 1, 0), 1, "#/definitions/io.k8s.Bar");
    rd m = named(sp, 3, "m");
    want_str(sub(sub(sub(m, 21, 0), 1, 0), 22, 0), 1, "string");
    rd f = named(sp, 4, "f");
    rd addl = sub(f, 21, 0);
    assert_int_equal(addl.end - addl.p, 2); /* boolean (2): false */
    assert_int_equal(addl.p[0], 0x10);
    assert_int_equal(addl.p[1], 0x00);
    free(b);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_document),
        cmocka_unit_test(test_schema_members),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
