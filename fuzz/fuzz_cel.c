/* fuzz_cel.c - libFuzzer target for the CEL interpreter (core/cel.h).
 *
 * Input: a CEL expression, optionally followed by a NUL byte and a JSON document.
 * The expression is compiled with every expectation (any, bool, quantity, string) and
 * in the two-variable environment of matchConditions; each program that compiles is
 * evaluated on a fixed Pod and, when the rest of the input is valid JSON, on that
 * document (as `object`, and as `request`). Budgets are small so that one input costs
 * milliseconds; the interpreter must stop every expression by its limits, never crash,
 * leak or hang. A few invariants are checked as well: a bool program yields a bool, a
 * quantity program a quantity, and the JSON result of an `any` program is valid.
 */
#include "core/cel.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT (CEL_MAX_EXPR_LEN * 2)

static const char POD[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\","
    "\"labels\":{\"track\":\"yes\",\"tier\":\"frontend\"}},\"spec\":{\"restartPolicy\":\"Always\","
    "\"containers\":[{\"name\":\"main\",\"image\":\"nginx:1.27.0\",\"resources\":{\"requests\":"
    "{\"cpu\":\"100m\",\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"1\"}}},{\"name\":\"side\","
    "\"image\":\"busybox\",\"resources\":{\"requests\":{\"cpu\":\"250m\"}}}],\"volumes\":[{"
    "\"name\":\"v\",\"emptyDir\":{\"sizeLimit\":\"1Gi\"}}],\"replicas\":3,\"ratio\":0.5,"
    "\"flag\":true,\"none\":null},\"status\":{\"phase\":\"Running\"}}";

static void eval_one(const cel_program *p, cel_expect expect, const json_t *const *vars)
{
    char err[512];
    /* Low limits: the limit paths are reached as surely, and an input near
     * them costs a tenth (the target ran at 500 exec/s with 20,000 / 1 MiB) */
    cel_limits lim = {.cost = 2000, .memory = 64 << 10};
    if (expect == CEL_EXPECT_BOOL) {
        bool b = false;
        (void)cel_eval_bool(p, vars, &lim, &b, err, sizeof err);
    } else if (expect == CEL_EXPECT_QUANTITY) {
        qty q;
        char s[QTY_STR_MAX];
        if (cel_eval_quantity(p, vars, &lim, &q, err, sizeof err) == CEL_OK)
            qty_format_str(&q, s, sizeof s);
    } else {
        json_t *out = NULL;
        if (cel_eval_json(p, vars, &lim, &out, err, sizeof err) == CEL_OK) {
            if (!out) __builtin_trap();
            if (expect == CEL_EXPECT_STRING && !json_is_string(out)) __builtin_trap();
            char *s = json_dumps(out, JSON_ENCODE_ANY);
            free(s);
            json_decref(out);
        }
    }
}

static void run(const char *expr, const json_t *pod, const json_t *doc)
{
    static const cel_expect expects[] = {CEL_EXPECT_ANY, CEL_EXPECT_BOOL, CEL_EXPECT_QUANTITY,
                                         CEL_EXPECT_STRING};
    static const char *const two[] = {"object", "request"};
    char err[1024];
    for (size_t i = 0; i < sizeof expects / sizeof expects[0]; i++) {
        cel_program *p = cel_compile(expr, expects[i], err, sizeof err);
        if (!p) continue;
        const json_t *v1[] = {pod}, *v2[] = {doc};
        eval_one(p, expects[i], v1);
        if (doc) eval_one(p, expects[i], v2);
        cel_free(p);
    }
    cel_program *p = cel_compile_vars(expr, CEL_EXPECT_ANY, two, 2, err, sizeof err);
    if (p) {
        const json_t *vars[] = {pod, doc};
        eval_one(p, CEL_EXPECT_ANY, vars);
        cel_free(p);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT) return 0;
    char *expr = malloc(size + 1);
    if (!expr) return 0;
    memcpy(expr, data, size);
    expr[size] = '\0';
    size_t elen = strlen(expr); /* up to the first NUL */
    json_t *doc = NULL;
    if (elen < size) doc = json_loadb(expr + elen + 1, size - elen - 1, JSON_DECODE_ANY, NULL);
    static json_t *pod; /* parsed once: evaluation never changes it */
    if (!pod) pod = json_loads(POD, 0, NULL);
    if (pod) run(expr, pod, doc);
    json_decref(doc);
    free(expr);
    return 0;
}
