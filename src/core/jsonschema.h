/* jsonschema.h - Kubernetes structural schemas (apiextensions.k8s.io/v1
 * CustomResourceDefinition `openAPIV3Schema`): compile, default, prune and
 * validate custom resource bodies as kube-apiserver's apiextensions-apiserver
 * does (pkg/apiserver/schema: structural schema, defaulting, pruning; the
 * kube-openapi validator for values).
 *
 * A schema is compiled once per CRD version (js_compile) into an immutable
 * js_schema; js_default/js_prune/js_validate may then run any number of
 * times, from any number of threads (they never write to the js_schema).
 * Upstream order on a write: decode, default, prune, validate (and defaulting
 * again on read, before pruning).
 *
 * Structural rules refused by js_compile (message "<path>: <upstream text>",
 * paths like upstream's relative to the schema: "openAPIV3Schema.properties[spec].type";
 * the API layer prefixes "spec.versions[i].schema."):
 *   - the root must be of type object;
 *   - every node specifies a `type` unless it has x-kubernetes-int-or-string
 *     or x-kubernetes-preserve-unknown-fields: true ("Required value: must
 *     not be empty for specified object fields" / "... at the root");
 *   - x-kubernetes-int-or-string nodes have no type, or anyOf/allOf are only
 *     the integer/string pair controller-gen emits;
 *   - x-kubernetes-preserve-unknown-fields must be true or undefined;
 *   - additionalProperties together with properties; additionalProperties:
 *     false; uniqueItems: true; items as an array; $ref, $schema, id,
 *     definitions, patternProperties, dependencies, additionalItems;
 *   - x-kubernetes-embedded-resource needs type object and properties or
 *     x-kubernetes-preserve-unknown-fields;
 *   - a type that is not one of object, array, string, integer, number, boolean;
 *   - a pattern that does not compile (see below), a default that does not
 *     validate against its own node.
 * Left out: the "no type/properties/items inside anyOf/allOf/oneOf/not that
 * the node does not have itself" rule (junctors are accepted and applied as
 * value validations, see js_validate), root `metadata` restrictions
 * (only name/generateName), x-kubernetes-list-type/-map-keys/-map-type
 * (uniqueness of set/map lists), x-kubernetes-validations (CEL rules),
 * defaults inside embedded resources' metadata, and the "default must be
 * pruned" check.
 *
 * Values (js_validate) - kube-openapi's checks, with apiextensions' error
 * conversion (reason, field path, value, detail):
 *   - type (object, array, string, integer, number, boolean; a real with no
 *     fraction is an integer; `nullable`; int-or-string = "integer,string"):
 *     TYPE_INVALID, value = the JSON type's name, detail
 *     `spec.storageGB in body must be of type integer: "string"`;
 *   - required -> REQUIRED ("Required value") at the missing field;
 *   - enum -> NOT_SUPPORTED, detail `supported values: "a", "b"`;
 *   - minimum/maximum (exclusive*), multipleOf, minLength, pattern, minItems,
 *     minProperties/maxProperties -> INVALID with go-openapi's texts;
 *     maxLength -> TOO_LONG "may not be more than N bytes"; maxItems ->
 *     TOO_MANY "must have at most N items";
 *   - format: date-time (RFC 3339 as core/rfc3339.h parses it), date, int32,
 *     int64 (on integers: range checked; upstream's strfmt ignores formats on
 *     non-strings, so this is stricter), byte (base64), uuid; other formats
 *     are ignored, as upstream drops unknown formats;
 *   - additionalProperties (schema) for maps, items for arrays, allOf, anyOf
 *     ("must validate at least one schema (anyOf)"), oneOf, not.
 * Lengths count Unicode code points (as go-openapi's utf8.RuneCountInString).
 * Field paths are upstream's: spec.storageGB, spec.items[2].name, map
 * entries spec.labels.key.
 *
 * Patterns: POSIX regcomp(REG_EXTENDED|REG_NOSUB) where upstream uses Go's
 * RE2 (ECMA-ish) syntax. \d, \D, \w, \W, \s, \S outside brackets are
 * rewritten to POSIX classes; back-references (\1..\9) are refused (RE2 has
 * none, and they make glibc backtrack); lazy quantifiers (*?), lookarounds,
 * \d inside brackets and (?flags) are not supported (compile error or a
 * different meaning); the product of the {m,n} repetition bounds is at most
 * 1000 (glibc expands them when compiling) and stacked quantifiers (a++,
 * a*?) are refused. Patterns are limited to JS_MAX_PATTERN bytes and the
 * string matched to JS_MAX_MATCH bytes (longer strings fail the pattern).
 *
 * Limits: a schema is at most JS_MAX_SCHEMA_DEPTH nodes deep and
 * JS_MAX_SCHEMA_NODES nodes; values are walked only along the schema (so
 * a body deeper than the schema is not walked; preserve-unknown-fields
 * content is left as is) and never deeper than JS_MAX_DEPTH; at most
 * JS_MAX_ERRORS errors are reported (then `truncated` is set).
 *
 * Ownership: js_compile copies what it keeps (the argument is borrowed);
 * js_free frees. js_default/js_prune change the body in place, defaults are
 * deep copies. Errors live in a js_errors the caller zero-initializes and
 * frees with js_errors_free (it owns its strings and values).
 * Pure: no I/O, no globals except constant tables. core only (no api/):
 * the api layer turns js_errors into field causes.
 */
#ifndef ALLOT_CORE_JSONSCHEMA_H
#define ALLOT_CORE_JSONSCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define JS_MAX_SCHEMA_DEPTH 64u
#define JS_MAX_SCHEMA_NODES 20000u
#define JS_MAX_PATTERN 1024u
#define JS_MAX_MATCH ((size_t)64 * 1024)
#define JS_MAX_DEPTH 128u
#define JS_MAX_ERRORS 256u

typedef struct js_schema js_schema;

/* The reason of one error: the field.ErrorType upstream uses. */
typedef enum {
    JS_INVALID,       /* FieldValueInvalid: Invalid value: <value>: <detail> */
    JS_TYPE_INVALID,  /* FieldValueTypeInvalid: Invalid value: <value>: <detail> */
    JS_REQUIRED,      /* FieldValueRequired: Required value */
    JS_NOT_SUPPORTED, /* FieldValueNotSupported: Unsupported value: <value>: <detail> */
    JS_TOO_LONG,      /* FieldValueTooLong: Too long: <detail> */
    JS_TOO_MANY,      /* FieldValueTooMany: Too many: <value>: <detail> */
    JS_FORBIDDEN,     /* FieldValueForbidden: Forbidden: <detail> */
} js_reason;

typedef struct js_error {
    js_reason reason;
    char *field;   /* "spec.items[2].name" ("" for the root); owned */
    json_t *value; /* the value as upstream prints it (owned reference), or NULL */
    char *detail;  /* upstream's detail text (owned), or NULL */
} js_error;

typedef struct js_errors {
    js_error *v;
    size_t n, cap;
    bool truncated; /* more than JS_MAX_ERRORS, or out of memory */
} js_errors;

void js_errors_free(js_errors *e);

/* Compile an openAPIV3Schema. NULL when it is not structural or not
 * supported, with "<path>: <message>" in err[n] (always NUL-terminated). */
js_schema *js_compile(const json_t *openapi_v3_schema, char *err, size_t n);
void js_free(js_schema *s);

/* Apply defaults in place: a property with a `default` that is missing (or
 * null and not nullable) in a present object gets a deep copy; walked along
 * properties, additionalProperties and items. Returns the number of defaults
 * applied, or -1 on allocation failure. */
int js_default(const js_schema *s, json_t *obj);
/* Whether any node of the schema has a default (js_default can change
 * something): readers default objects read from storage only then. */
bool js_has_defaults(const js_schema *s);

/* Drop fields the schema does not know, except under
 * x-kubernetes-preserve-unknown-fields: true; apiVersion, kind and metadata
 * are kept at the root and in embedded resources. When `pruned` is a JSON
 * array, the dropped fields' paths ("spec.foo") are appended to it.
 * Returns the number of fields dropped, or -1 on allocation failure. */
int js_prune(const js_schema *s, json_t *obj, json_t *pruned);

/* Validate `obj` (the whole resource; the root's apiVersion, kind and
 * metadata are not validated here). Errors are appended to `errs`.
 * Returns the number of errors appended (0: valid). */
int js_validate(const js_schema *s, const json_t *obj, js_errors *errs);

#endif
