/* jsonpath.h - kubectl's JSONPath dialect (k8s.io/client-go/util/jsonpath)
 * over jansson values, and Capsule's uses of it (source paths, quantity sums,
 * JSONPath field selectors).
 *
 * A template ("kind is {.kind}", "{range .items[*]}{.metadata.name}{\"\\n\"}{end}")
 * is compiled once into a jp_expr and evaluated any number of times, from any
 * number of threads: evaluation never writes to the jp_expr. Semantics,
 * rendering and error texts are client-go's:
 *   - fields `.a`, `['a']`, `['a.b']` (a path), escaped dots `.a\.b`, `$`/`@`;
 *   - `[*]`, `.*`, indexes `[0]`, `[-1]`, slices `[1:3]`, `[::2]`, unions
 *     `[0,2]`, `['a','b']`, recursive descent `..`;
 *   - filters `[?(@.a=="x")]`, `[?(@=="x")]`, `[?(@.n>1)]` (<, >, <=, >=, ==,
 *     != with text/template's comparison rules: an integer literal against a
 *     JSON real is "incompatible types for comparison"), existence `[?(@.a)]`,
 *     and, allot's extension (client-go refuses them), `&&` and `||` between
 *     them (|| binds looser; both short-circuit);
 *   - `{range ...}...{end}`, quoted text `{"\n"}`, literal text outside {};
 *   - rendering: strings raw, numbers as Go prints them (1e+06 for a real),
 *     booleans, null as <nil>, objects and arrays as Go's json.Marshal (keys
 *     sorted), values of one expression separated by one space.
 * Not supported, as in client-go: regular expressions (`=~`) are syntax
 * errors; there are no functions (length() etc.).
 * Objects are walked in the order jansson keeps their keys (insertion order),
 * where Go's map order is random.
 *
 * Limits: every compile and evaluation is bounded by a jp_limits (template
 * length, nesting depth, evaluation steps, output bytes); exceeding one is an
 * error (JP_ERR_LIMIT), never a crash or a stall.
 *
 * Ownership: jp_compile* return a jp_expr the caller frees with jp_free; the
 * input text is copied. Evaluation borrows the json_t (never keeps or changes
 * it, not even its reference count). Strings returned through `char **out` are
 * malloc'd and the caller frees them. Errors: functions return a negative
 * JP_ERR_* code (constructors NULL) and write the message (upstream's words
 * where upstream has them) into err[errlen], always NUL-terminated.
 *
 * Pure: no I/O, no globals except constant tables.
 */
#ifndef ALLOT_CORE_JSONPATH_H
#define ALLOT_CORE_JSONPATH_H

#include "core/quantity.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    JP_OK = 0,
    JP_ERR_SYNTAX = -1,   /* the template does not parse (client-go's parser error) */
    JP_ERR_EVAL = -2,     /* client-go's runtime error ("x is not found", ...) */
    JP_ERR_LIMIT = -3,    /* a jp_limits bound was exceeded */
    JP_ERR_NOMEM = -4,    /* out of memory */
    JP_ERR_INVALID = -5,  /* Capsule's validation refused a source path or selector */
    JP_ERR_QUANTITY = -6, /* no value, or a token that is not a quantity */
};

typedef struct jp_limits {
    size_t max_template; /* bytes of template text */
    unsigned max_depth;  /* nested sub-expressions (filters, unions, bracketed
                            keys) and nested {range} blocks; at most 1000 */
    uint64_t max_steps;  /* values produced + nodes visited in one evaluation */
    size_t max_output;   /* bytes of rendered text */
} jp_limits;

#define JP_DEFAULT_MAX_TEMPLATE ((size_t)64 * 1024)
#define JP_DEFAULT_MAX_DEPTH 32u
#define JP_DEFAULT_MAX_STEPS ((uint64_t)1000000)
#define JP_DEFAULT_MAX_OUTPUT ((size_t)1024 * 1024)

/* The defaults above. A jp_limits field left 0 also means its default. */
jp_limits jp_default_limits(void);

typedef struct jp_expr jp_expr;

/* Parse a template (client-go's Parse). `limits` may be NULL (defaults).
 * NULL on error, with the message in err. jp_compile_n takes a length (the
 * text may contain NUL bytes) and stores the JP_ERR_* code in *code when
 * code is not NULL. */
jp_expr *jp_compile(const char *text, const jp_limits *limits, char *err, size_t errlen);
jp_expr *jp_compile_n(const char *text, size_t len, const jp_limits *limits, int *code, char *err,
                      size_t errlen);
void jp_free(jp_expr *e);

/* Execute: render the template against `obj` as kubectl prints it. With
 * allow_missing, a missing key yields nothing instead of "<key> is not found"
 * (AllowMissingKeys; kubectl's default). *out is NUL-terminated (it may also
 * contain NULs: *outlen, when not NULL, is the exact length). A NULL obj is
 * Go's nil. */
int jp_eval_text(const jp_expr *e, const json_t *obj, bool allow_missing, char **out,
                 size_t *outlen, char *err, size_t errlen);

/* FindResults: the values, one group per template part (a text outside {}
 * is a group of one string; `{.a} {.b}` is three groups). Values are
 * borrowed from `obj` or, for literals (quoted text, numbers, booleans, the
 * bytes `.*` yields for a string), owned by the result; all stay valid until
 * jp_results_free (and `obj` must outlive the result). */
typedef struct jp_results jp_results;
int jp_find(const jp_expr *e, const json_t *obj, bool allow_missing, jp_results **out, char *err,
            size_t errlen);
size_t jp_results_ngroups(const jp_results *r);
size_t jp_results_group_len(const jp_results *r, size_t group);
const json_t *jp_results_get(const jp_results *r, size_t group, size_t i);
void jp_results_free(jp_results *r);

/* ---- Capsule (pkg/runtime/jsonpath, pkg/runtime/quota, pkg/utils) ---- */

#define JP_SOURCE_PATH_MAX 1024 /* Capsule's maxJSONPathLength */

/* CompileJSONPath: trim (Go's TrimSpace), then "sourcePath must not be
 * empty", "sourcePath exceeds max length of 1024", "sourcePath must start
 * with '.'", "sourcePath must not contain control whitespace" (\r \n \t),
 * "sourcePath must not contain curly braces" (current Capsule: a '}' would
 * smuggle in a second expression), then parse `{<path>}`; a syntax error
 * reads `parse usage jsonpath "<path>": <parser error>`. Codes:
 * JP_ERR_INVALID for the rules, JP_ERR_SYNTAX / JP_ERR_LIMIT for the parse. */
int jp_validate_source_path(const char *path, char *err, size_t errlen);
/* The rules alone, without parsing (what Capsule checks before it parses):
 * JP_OK, or JP_ERR_INVALID with the rule's text. */
int jp_source_path_rules(const char *path, char *err, size_t errlen);
jp_expr *jp_compile_source_path(const char *path, int *code, char *err, size_t errlen);
/* A source path (and so a field selector's path) reads a missing value as
 * nothing in every form: besides kubectl's missing keys (a member that is
 * not there, null, an empty list under [*], a filter that matches nothing),
 * an index or slice past the end of a list selects only the elements that
 * exist (nothing for `[3]` of a one-element list) where client-go fails with
 * "array index out of bounds" (seed 003: "Missing fields are treated as
 * zero"; docs/custom-quotas.md). */

/* CompiledJSONPath.Execute: missing keys allowed, output TrimSpace'd, errors
 * prefixed "execute usage jsonpath: ". */
int jp_source_eval(const jp_expr *e, const json_t *obj, char **out, char *err, size_t errlen);

/* ParseQuantities: split on Unicode whitespace, parse each token as a
 * Quantity and add them up. "no quantity values found" when there is no
 * token; `invalid quantity "<token>": <ParseQuantity error>`. */
int jp_parse_quantities(const char *text, size_t len, qty *sum, char *err, size_t errlen);

/* The sum of the quantities a source path finds (seed 003's rule, where
 * Capsule's ParseQuantityFromUnstructured fails with "quantity path did not
 * resolve to any value"): each value as kubectl prints it, split on white
 * space, every token a quantity, all added up. A missing value is 0, not an
 * error: nothing found, null values and values that print as nothing but
 * white space add nothing. Errors (*sum 0): JP_ERR_QUANTITY `invalid
 * quantity "<token>": <why>` for a value that is there but is not a
 * quantity (a token of `abc`, `true`, an object); JP_ERR_EVAL / _LIMIT
 * `execute usage jsonpath: <why>` when the path cannot be walked over the
 * object (`[*]` of a string, a filter comparing a string with a number, a
 * budget); JP_ERR_NOMEM. */
int jp_quantity_sum(const jp_expr *e, const json_t *obj, qty *sum, char *err, size_t errlen);
/* jp_quantity_sum on an object's JSON text (core/jsontext.h's contract),
 * without parsing it, for the common paths (named fields and [*] only, every
 * value a quantity string without white space): 0 with *sum what
 * jp_quantity_sum gives on the parsed text; 1 when it cannot tell (any other
 * path or value, every error; *sum is then unspecified): ask jp_quantity_sum. */
int jp_quantity_sum_text(const jp_expr *e, const char *text, size_t len, qty *sum);

/* CompileFieldSelector. After trimming: "field selector must not be empty";
 * `path!=value` (checked first) is not-equals, `path=value` / `path==value`
 * is equals (the value may be wrapped in matching single or double quotes,
 * which are removed with the spaces inside them), anything else is a truthy
 * path. '=' and "!=" count only outside [], {}, () and quotes. The path is
 * compiled as a source path (its errors, as above). */
typedef enum { JP_FS_TRUTHY, JP_FS_EQUALS, JP_FS_NOT_EQUALS } jp_fs_op;
typedef struct jp_field_selector jp_field_selector;

jp_field_selector *jp_field_selector_compile(const char *raw, int *code, char *err, size_t errlen);
/* A field selector's path filters a single value as a one-element list:
 * `.spec.type[?(@=="LoadBalancer")]` holds for a LoadBalancer Service (seed
 * 003's example; client-go and Capsule fail with "is not array or slice and
 * cannot be filtered"). Everywhere else filters keep kubectl's rule.
 * evaluateCompiledFieldSelector: equals / not-equals compare the trimmed
 * output with the value; truthy is false for "", "false" (any case) and "0".
 * An evaluation error is returned as such (*match is then false). */
int jp_field_selector_match(const jp_field_selector *fs, const json_t *obj, bool *match, char *err,
                            size_t errlen);
jp_fs_op jp_field_selector_op(const jp_field_selector *fs);
const char *jp_field_selector_path(const jp_field_selector *fs);  /* owned by fs */
const char *jp_field_selector_value(const jp_field_selector *fs); /* "" for truthy */
void jp_field_selector_free(jp_field_selector *fs);

#endif
