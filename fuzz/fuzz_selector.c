/* fuzz_selector.c - libFuzzer target for label and field selectors (core/selector.h).
 *
 * Input: a selector text, optionally followed by a NUL byte and a JSON value.
 * The text is parsed as a label selector (labels.Parse, the labelSelector
 * query parameter) and as a field selector (fields.ParseSelector, the
 * fieldSelector parameter); the JSON value, when it is one, is read as a
 * metav1.LabelSelector object (sel_from_json, and the API's validation of it,
 * val_label_selector). Each selector is matched against a few fixed label
 * sets and against the JSON value itself, inspected, and rendered. Nothing
 * may crash or leak, and (abort() otherwise):
 *   - an error comes with a message, a success without one;
 *   - String() re-parses to a selector that prints the same (for a field
 *     selector, from the second rendering on: upstream sorts the raw terms,
 *     so "b==,b=!" prints "b=!,b=", which re-parses as "b=,b=!"), has as
 *     many requirements and matches exactly the same label or field sets;
 *   - every requirement has a key and an operator of its kind, the values
 *     it counts, and sel_requires agrees with the requirement it reports;
 *   - an empty selector matches everything; the null LabelSelector nothing.
 */
#include "api/validation.h"
#include "core/selector.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT 4096

static void check(int ok)
{
    if (!ok) abort();
}

static const char *const LABELS[] = {
    "{}",
    "{\"app\":\"web\",\"tier\":\"frontend\",\"env\":\"prod\"}",
    "{\"a\":\"x\",\"b\":\"y\",\"c\":\"p\",\"d\":\"z\",\"x\":\"1\"}",
    "{\"k8s.io/app\":\"db\",\"foo\":\"bar\",\"baz\":\"blah\",\"n\":\"10\",\"m\":\"-3\"}",
    ("{\"metadata.name\":\"p1\",\"metadata.namespace\":\"default\",\"spec.nodeName\":\"\","
     "\"status.phase\":\"Running\",\"spec.unschedulable\":false,\"status.replicas\":3}"),
};
#define NLABELS (sizeof LABELS / sizeof *LABELS)
static json_t *labels[NLABELS];

static const char *const SUPPORTED[] = {"metadata.name", "metadata.namespace", "spec.nodeName",
                                        "status.phase", NULL};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    for (size_t i = 0; i < NLABELS; i++)
        if (!(labels[i] = json_loads(LABELS[i], 0, NULL))) abort();
    return 0;
}

static void inspect(const sel_t *s, bool fields)
{
    size_t n = sel_count(s);
    check(sel_empty(s) == (n == 0) || sel_matches_nothing(s));
    for (size_t i = 0; i < n; i++) {
        const char *key = sel_key(s, i);
        check(key != NULL);
        sel_op op = sel_req_op(s, i);
        size_t nv = sel_req_nvalues(s, i);
        if (fields)
            check(op == SEL_EQUALS || op == SEL_DOUBLE_EQUALS || op == SEL_NOT_EQUALS);
        else
            check(op >= SEL_IN && op <= SEL_LT);
        for (size_t j = 0; j < nv; j++)
            check(sel_req_value(s, i, j) != NULL);
        if (op == SEL_EXISTS || op == SEL_DOES_NOT_EXIST) check(nv == 0);
        const char *v = NULL;
        if (sel_requires(s, key, &v)) check(v != NULL);
    }
    const char *v = NULL;
    (void)sel_requires(s, "app", &v);
    (void)sel_requires(s, "", &v);
}

static bool match(const sel_t *s, bool fields, const json_t *obj)
{
    return fields ? sel_matches_fields(s, obj) : sel_matches(s, obj);
}

/* Render, re-parse, compare. */
static void round_trip(const sel_t *s, bool fields, const json_t *doc)
{
    char err[512] = "";
    char *str = sel_to_string(s);
    check(str != NULL);
    sel_t *r = fields ? sel_parse_fields(str, err, sizeof err) : sel_parse_labels(str, err, sizeof err);
    if (!r) abort(); /* String() must re-parse */
    char *again = sel_to_string(r);
    check(again != NULL);
    if (strcmp(str, again) != 0) {
        /* fields.ParseSelector sorts the raw terms, String() prints "f==v"
         * as "f=v": a term's place can move once (upstream too); the second
         * rendering is a fixed point */
        check(fields && strlen(str) == strlen(again));
        sel_t *r2 = sel_parse_fields(again, err, sizeof err);
        check(r2 != NULL);
        char *third = sel_to_string(r2);
        check(third && strcmp(third, again) == 0);
        free(third);
        sel_free(r2);
    }
    check(sel_count(r) == sel_count(s));
    for (size_t i = 0; i < NLABELS; i++)
        check(match(s, fields, labels[i]) == match(r, fields, labels[i]));
    if (doc) check(match(s, fields, doc) == match(r, fields, doc));
    if (sel_empty(s) && !sel_matches_nothing(s))
        for (size_t i = 0; i < NLABELS; i++)
            check(match(s, fields, labels[i]));
    free(again);
    free(str);
    sel_free(r);
}

static void one(sel_t *s, bool fields, const char *err, const json_t *doc)
{
    if (!s) {
        check(err[0] != '\0');
        return;
    }
    inspect(s, fields);
    round_trip(s, fields, doc);
    if (fields) {
        char e2[256];
        bool ok = sel_fields_supported(s, SUPPORTED, e2, sizeof e2);
        if (!ok) check(strncmp(e2, "field label not supported: ", 27) == 0);
    }
    sel_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    size_t tlen = strlen(text);
    json_t *doc = tlen < size ? json_loadb(text + tlen + 1, size - tlen - 1, 0, NULL) : NULL;

    char err[512] = "";
    one(sel_parse_labels(text, err, sizeof err), false, err, doc);
    err[0] = '\0';
    one(sel_parse_fields(text, err, sizeof err), true, err, doc);

    if (doc) {
        err[0] = '\0';
        json_t *causes = json_array();
        int bad = val_label_selector(doc, "spec.selector", causes);
        check(bad == (int)json_array_size(causes));
        json_decref(causes);
        sel_t *s = sel_from_json(doc, err, sizeof err);
        if (s) {
            inspect(s, false);
            if (!sel_matches_nothing(s)) round_trip(s, false, doc);
            else
                for (size_t i = 0; i < NLABELS; i++)
                    check(!sel_matches(s, labels[i]));
            sel_free(s);
        } else {
            check(err[0] != '\0');
        }
        /* the JSON value's "matchLabels", if any, as a label set */
        const json_t *ml = json_object_get(doc, "matchLabels");
        sel_t *t = sel_parse_labels(text, err, sizeof err);
        if (t && ml) (void)sel_matches(t, ml);
        sel_free(t);
    }
    json_decref(doc);
    free(text);
    return 0;
}
