/* cel.h - a Common Expression Language interpreter for the subset CustomQuotas use.
 *
 * This is allot's counterpart of Capsule's pkg/runtime/cel: an expression is compiled
 * once (parsed, macros expanded, type-checked against an environment of dyn variables,
 * its result type checked against what the caller expects) and then evaluated any
 * number of times, from any thread, against JSON values (jansson). Error texts are
 * Capsule's and cel-go's, so callers only prefix them (e.g. "invalid CEL expression:
 * spec.sources[0].cel: " + the compile error).
 *
 * Supported (CEL language definition + the Kubernetes quantity library):
 *   - values: int (int64, overflow is an error), uint, double, string, bool, null,
 *     list, map, kubernetes.Quantity; JSON integers read as int, JSON reals as double;
 *   - operators: + - * / % (unary -), == != < <= > >= (numeric comparisons across
 *     int/uint/double), && || ! (commutative error absorption), ?:, in, a[i], m[k],
 *     field selection m.f, list and map literals;
 *   - macros: has(), all, exists, exists_one, map (2 and 3 arguments), filter;
 *   - functions: size (global and member), contains, startsWith, endsWith, int, uint,
 *     double, string, bool, dyn; quantity, isQuantity, sign (global, as declared
 *     upstream), and the members isLessThan, isGreaterThan, compareTo, add, sub
 *     (quantity or int), asInteger, isInteger, asApproximateFloat.
 * Anything else (bytes, timestamps, durations, type(), matches() and the other regex
 * and string-extension functions, optional syntax, two-variable comprehensions, the
 * quantity mul/div/divInt functions of newer Kubernetes releases) is refused at compile time
 * ("undeclared reference to ..." or a syntax error), never evaluated wrongly.
 *
 * Where CEL versions or implementations differ, this follows cel-go as Kubernetes
 * configures it (what Capsule runs):
 *   - equality is heterogeneous: values of different types are unequal, never an error,
 *     and numbers compare by value across int, uint and double at run time
 *     (dyn(1) == 1.0 is true), while the checker still refuses 1 == 1.0 between typed
 *     operands; NaN equals nothing; < <= > >= compare across numeric types;
 *   - mixed list and map literals are list(dyn) / map(dyn, dyn), not errors;
 *   - has(x.f) is false when x is a scalar, an error when x is a list or an error;
 *   - sign() is declared upstream as a global function: sign(q), not q.sign();
 *   - deviations, each stricter or more exact: a repeated key in a map literal is an
 *     error (the spec's rule; cel-go keeps the last), asApproximateFloat() is the double
 *     nearest to the exact value (upstream may differ in the last bit), and when several
 *     elements of map/filter/exists_one fail, the first error is reported.
 *
 * Limits: an expression longer than CEL_MAX_EXPR_LEN bytes (Capsule's 4096) or nested
 * deeper than CEL_MAX_DEPTH (cel-go's default parser recursion limit) does not compile.
 * An evaluation stops with "operation cancelled: actual cost limit exceeded" when its
 * cost (about one unit per node evaluated, per macro iteration and per list element or
 * ten string bytes created or compared) passes cel_limits.cost, and with "operation
 * cancelled: memory limit exceeded" when the values it builds pass cel_limits.memory.
 *
 * Ownership: cel_compile copies what it needs from `src`; the program is the caller's
 * and is released with cel_free. Variables passed to an evaluation are only borrowed,
 * for its duration. cel_eval_json hands back a new reference the caller owns.
 * Pure: no I/O, no global mutable state; a compiled program is immutable, so one
 * program may be evaluated by many threads at once.
 */
#ifndef ALLOT_CORE_CEL_H
#define ALLOT_CORE_CEL_H

#include "core/quantity.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CEL_MAX_EXPR_LEN 4096           /* Capsule's MaxExpressionLength, in bytes */
#define CEL_MAX_DEPTH 250               /* cel-go's default maxRecursionDepth */
#define CEL_DEFAULT_COST_LIMIT 1000000  /* Kubernetes' per-expression PerCallLimit */
#define CEL_CONDITION_COST_LIMIT 100000 /* what Capsule gives admission matchConditions */
#define CEL_DEFAULT_MEMORY_LIMIT (8u << 20)

/* Return codes of the evaluation functions. */
enum {
    CEL_OK = 0,
    CEL_ERR_EVAL = -1,  /* a CEL runtime error, or a result of the wrong shape */
    CEL_ERR_LIMIT = -2, /* cost or memory budget exhausted */
    CEL_ERR_NOMEM = -3, /* malloc failed */
    CEL_ERR_USAGE = -4, /* wrong function for the program's expectation, NULL program */
};

/* What the result must type-check to (Capsule's ResultType). */
typedef enum {
    CEL_EXPECT_ANY,      /* no check (tests, tools) */
    CEL_EXPECT_BOOL,     /* selector celExpressions, matchConditions: exactly bool */
    CEL_EXPECT_QUANTITY, /* source cel: kubernetes.Quantity or list(kubernetes.Quantity) */
    CEL_EXPECT_STRING,   /* message expressions: exactly string */
} cel_expect;

/* Evaluation budgets; a zero field (or a NULL cel_limits) takes the default. */
typedef struct cel_limits {
    uint64_t cost; /* CEL_DEFAULT_COST_LIMIT */
    size_t memory; /* CEL_DEFAULT_MEMORY_LIMIT: bytes of values one evaluation may build */
} cel_limits;

typedef struct cel_program cel_program;

/* Compile `src` in Capsule's environment: one variable, `object` (dyn). Leading and
 * trailing whitespace is trimmed first, as Capsule does. On failure returns NULL and
 * writes Capsule's text into err, e.g.
 *   "CEL expression must not be empty"
 *   "CEL expression exceeds max length of 4096"
 *   "compile CEL expression \"object.x +\": ERROR: <input>:1:11: Syntax error: ..."
 *   "compile CEL expression \"object.metadata.name\": expression must evaluate to bool, got dyn"
 * (cel-go's issue format: position, then the source line and a caret). */
cel_program *cel_compile(const char *src, cel_expect expect, char *err, size_t errlen);

/* The same with the variables `vars[0..nvars)` declared (all dyn), e.g. {"object",
 * "request"} for matchConditions. Names must be CEL identifiers. */
cel_program *cel_compile_vars(const char *src, cel_expect expect, const char *const *vars,
                              size_t nvars, char *err, size_t errlen);

void cel_free(cel_program *p);

/* The trimmed source, and the checked result type in cel-go's notation ("bool",
 * "list(kubernetes.Quantity)", "dyn", ...). Both live as long as the program. */
const char *cel_source(const cel_program *p);
const char *cel_result_type(const cel_program *p);

/* Evaluation. `vars` has one entry per declared variable, in declaration order (for
 * cel_compile: {object}); a NULL entry leaves that variable unbound, which is an error
 * only if the expression reads it. `lim` may be NULL. On failure the return code is
 * negative and err holds Capsule's text: "evaluate CEL expression \"...\": <cel error>"
 * (e.g. "no such key: spec", "integer overflow", "operation cancelled: actual cost
 * limit exceeded"). */

/* The program must have been compiled with CEL_EXPECT_BOOL. */
int cel_eval_bool(const cel_program *p, const json_t *const *vars, const cel_limits *lim, bool *out,
                  char *err, size_t errlen);

/* CEL_EXPECT_QUANTITY: a quantity, or the exact sum of a list of them (an empty list
 * is 0: seed 003's missing values; Capsule fails with "returned an empty quantity
 * list"). */
int cel_eval_quantity(const cel_program *p, const json_t *const *vars, const cel_limits *lim,
                      qty *out, char *err, size_t errlen);

/* Any expectation: the result in CEL's JSON mapping (quantities as canonical strings,
 * uints beyond int64 and non-finite doubles as strings). *out is a new reference. */
int cel_eval_json(const cel_program *p, const json_t *const *vars, const cel_limits *lim,
                  json_t **out, char *err, size_t errlen);

#endif
