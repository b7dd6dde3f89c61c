/* openapi_pb.c - Swagger 2.0 as gnostic's openapi_v2.Document protobuf (see
 * openapi_pb.h). The wire format: a field is a varint key (number << 3 |
 * wire type), then a varint (0), 8 little-endian bytes (1, doubles) or a
 * varint length and the bytes (2, strings and messages). A message is
 * written into its own buffer first, then appended with its length. */
#include "api/openapi_pb.h"
#include "core/jdump.h"

#include "core/dbuf.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* gnostic's field numbers */
enum { DOC_SWAGGER = 1, DOC_INFO = 2, DOC_DEFINITIONS = 9 };
enum { INFO_TITLE = 1, INFO_VERSION = 2 };
enum { NAMED_NAME = 1, NAMED_VALUE = 2, ANY_YAML = 2, REPEATED_ITEMS = 1 };
enum { ADDL_SCHEMA = 1, ADDL_BOOLEAN = 2 };

typedef enum { K_STRING, K_DOUBLE, K_BOOL, K_INT64, K_ANY } scalar_kind;

/* Schema's scalar members. */
static const struct {
    const char *json;
    int field;
    scalar_kind kind;
} scalars[] = {
    {"$ref", 1, K_STRING},          {"format", 2, K_STRING},
    {"title", 3, K_STRING},         {"description", 4, K_STRING},
    {"default", 5, K_ANY},          {"multipleOf", 6, K_DOUBLE},
    {"maximum", 7, K_DOUBLE},       {"exclusiveMaximum", 8, K_BOOL},
    {"minimum", 9, K_DOUBLE},       {"exclusiveMinimum", 10, K_BOOL},
    {"maxLength", 11, K_INT64},     {"minLength", 12, K_INT64},
    {"pattern", 13, K_STRING},      {"maxItems", 14, K_INT64},
    {"minItems", 15, K_INT64},      {"uniqueItems", 16, K_BOOL},
    {"maxProperties", 17, K_INT64}, {"minProperties", 18, K_INT64},
    {"readOnly", 27, K_BOOL},       {"example", 30, K_ANY},
};
enum {
    S_REQUIRED = 19,
    S_ENUM = 20,
    S_ADDL = 21,
    S_TYPE = 22,
    S_ITEMS = 23,
    S_ALL_OF = 24,
    S_PROPERTIES = 25,
    S_VENDOR = 31
};

#define DEPTH_MAX 128 /* a schema nested deeper is cut there */

/* ---- wire format ---- */

static int put_varint(dbuf *b, uint64_t v)
{
    unsigned char buf[10];
    size_t n = 0;
    do {
        buf[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return dbuf_add(b, buf, n);
}

static int put_key(dbuf *b, int field, int wire)
{
    return put_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

/* Each step in order: `a | b` would leave the order of the writes open. */
static int put_bytes(dbuf *b, int field, const void *p, size_t n)
{
    if (put_key(b, field, 2) || put_varint(b, n)) return -1;
    return n ? dbuf_add(b, p, n) : 0;
}

static int put_string(dbuf *b, int field, const char *s)
{
    return put_bytes(b, field, s, strlen(s));
}

/* A nested message already written to m (freed here). */
static int put_message(dbuf *b, int field, dbuf *m)
{
    int rc = put_bytes(b, field, m->p, m->len);
    dbuf_free(m);
    return rc;
}

static int put_double(dbuf *b, int field, double d)
{
    uint64_t u;
    unsigned char le[8];
    memcpy(&u, &d, sizeof u);
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(u >> (8 * i));
    if (put_key(b, field, 1)) return -1;
    return dbuf_add(b, le, 8);
}

static int put_uint(dbuf *b, int field, uint64_t v)
{
    if (put_key(b, field, 0)) return -1;
    return put_varint(b, v);
}

/* The body of gnostic's Any: the value as YAML (compact JSON). */
static int any_body(dbuf *m, const json_t *v)
{
    char *text = jdump(v, NULL);
    if (!text) return -1;
    int rc = put_string(m, ANY_YAML, text);
    free(text);
    return rc;
}

static int put_any(dbuf *b, int field, const json_t *v)
{
    dbuf m;
    dbuf_init(&m, OAPB_MAX_BYTES);
    if (any_body(&m, v)) {
        dbuf_free(&m);
        return -1;
    }
    return put_message(b, field, &m);
}

/* NamedAny / NamedSchema: {name, value}; the value's body is in v (freed). */
static int put_named(dbuf *b, int field, const char *name, dbuf *v)
{
    dbuf m;
    dbuf_init(&m, OAPB_MAX_BYTES);
    if (put_string(&m, NAMED_NAME, name) || put_message(&m, NAMED_VALUE, v)) {
        dbuf_free(v);
        dbuf_free(&m);
        return -1;
    }
    return put_message(b, field, &m);
}

/* ---- Schema ---- */

static int schema(dbuf *b, const json_t *s, unsigned depth);

/* A schema as a length-delimited field of b. */
static int put_schema(dbuf *b, int field, const json_t *s, unsigned depth)
{
    dbuf m;
    dbuf_init(&m, OAPB_MAX_BYTES);
    if (schema(&m, s, depth + 1)) {
        dbuf_free(&m);
        return -1;
    }
    return put_message(b, field, &m);
}

static int scalar(dbuf *b, int field, scalar_kind k, const json_t *v)
{
    switch (k) {
    case K_STRING:
        return json_is_string(v) ? put_string(b, field, json_string_value(v)) : 0;
    case K_DOUBLE:
        return json_is_number(v) ? put_double(b, field, json_number_value(v)) : 0;
    case K_BOOL:
        return json_is_true(v) ? put_uint(b, field, 1) : 0; /* false: the default */
    case K_INT64:
        return json_is_integer(v) ? put_uint(b, field, (uint64_t)json_integer_value(v)) : 0;
    case K_ANY:
        return put_any(b, field, v);
    }
    return 0;
}

/* A repeated-string message (TypeItem) or field (required). */
static int strings(dbuf *b, int field, const json_t *v)
{
    int rc = 0;
    size_t i;
    json_t *e;
    if (json_is_string(v)) return put_string(b, field, json_string_value(v));
    json_array_foreach(v, i, e) if (json_is_string(e)) rc |=
        put_string(b, field, json_string_value(e));
    return rc;
}

/* Repeated schemas: ItemsItem (a schema or a list), allOf. */
static int schemas(dbuf *b, int field, const json_t *v, unsigned depth)
{
    int rc = 0;
    size_t i;
    json_t *e;
    if (json_is_object(v)) return put_schema(b, field, v, depth);
    json_array_foreach(v, i, e) if (json_is_object(e)) rc |= put_schema(b, field, e, depth);
    return rc;
}

/* A message member (TypeItem, ItemsItem, AdditionalPropertiesItem,
 * Properties) whose body was written into m, rc the writing's result. */
static int wrap(dbuf *b, int field, dbuf *m, int rc)
{
    if (rc) {
        dbuf_free(m);
        return -1;
    }
    return put_message(b, field, m);
}

static int properties(dbuf *m, const json_t *props, unsigned depth)
{
    const char *name;
    json_t *p;
    json_object_foreach((json_t *)props, name, p)
    {
        dbuf ps;
        dbuf_init(&ps, OAPB_MAX_BYTES);
        if (schema(&ps, p, depth + 1)) {
            dbuf_free(&ps);
            return -1;
        }
        if (put_named(m, REPEATED_ITEMS, name, &ps)) return -1;
    }
    return 0;
}

static int composite(dbuf *b, const json_t *s, unsigned depth)
{
    dbuf m;
    const json_t *v;
    if ((v = json_object_get(s, "required")) && strings(b, S_REQUIRED, v)) return -1;
    if (json_is_array(v = json_object_get(s, "enum"))) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) if (put_any(b, S_ENUM, e)) return -1;
    }
    if ((v = json_object_get(s, "additionalProperties"))) {
        dbuf_init(&m, OAPB_MAX_BYTES);
        int rc = json_is_object(v)    ? put_schema(&m, ADDL_SCHEMA, v, depth)
                 : json_is_boolean(v) ? put_uint(&m, ADDL_BOOLEAN, json_is_true(v))
                                      : 0;
        if (wrap(b, S_ADDL, &m, rc)) return -1;
    }
    if ((v = json_object_get(s, "type"))) {
        dbuf_init(&m, OAPB_MAX_BYTES);
        if (wrap(b, S_TYPE, &m, strings(&m, REPEATED_ITEMS, v))) return -1;
    }
    if ((v = json_object_get(s, "items"))) {
        dbuf_init(&m, OAPB_MAX_BYTES);
        if (wrap(b, S_ITEMS, &m, schemas(&m, REPEATED_ITEMS, v, depth))) return -1;
    }
    if ((v = json_object_get(s, "allOf")) && schemas(b, S_ALL_OF, v, depth)) return -1;
    if (json_is_object(v = json_object_get(s, "properties"))) {
        dbuf_init(&m, OAPB_MAX_BYTES);
        if (wrap(b, S_PROPERTIES, &m, properties(&m, v, depth))) return -1;
    }
    return 0;
}

static int schema(dbuf *b, const json_t *s, unsigned depth)
{
    if (!json_is_object(s) || depth > DEPTH_MAX) return 0;
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        const json_t *v = json_object_get(s, scalars[i].json);
        if (v && scalar(b, scalars[i].field, scalars[i].kind, v)) return -1;
    }
    if (composite(b, s, depth)) return -1;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)s, key, v)
    {
        if (strncmp(key, "x-", 2) != 0) continue;
        dbuf a;
        dbuf_init(&a, OAPB_MAX_BYTES);
        if (any_body(&a, v)) {
            dbuf_free(&a);
            return -1;
        }
        if (put_named(b, S_VENDOR, key, &a)) return -1;
    }
    return 0;
}

/* ---- Document ---- */

unsigned char *oapb_encode(const json_t *doc, size_t *len)
{
    dbuf b, m;
    dbuf_init(&b, OAPB_MAX_BYTES);
    const char *sw = json_string_value(json_object_get(doc, "swagger"));
    const json_t *info = json_object_get(doc, "info");
    if (put_string(&b, DOC_SWAGGER, sw ? sw : "2.0")) goto fail;
    dbuf_init(&m, OAPB_MAX_BYTES);
    int rc = scalar(&m, INFO_TITLE, K_STRING, json_object_get(info, "title"));
    if (!rc) rc = scalar(&m, INFO_VERSION, K_STRING, json_object_get(info, "version"));
    if (wrap(&b, DOC_INFO, &m, rc)) goto fail;
    dbuf_init(&m, OAPB_MAX_BYTES);
    if (wrap(&b, DOC_DEFINITIONS, &m, properties(&m, json_object_get(doc, "definitions"), 0)))
        goto fail;
    return (unsigned char *)dbuf_take(&b, len);
fail:
    dbuf_free(&b);
    return NULL;
}
