/* fuzz_jsonpath.c - libFuzzer target for kubectl's JSONPath (core/jsonpath.h).
 *
 * Input: a template, optionally followed by a NUL byte and a JSON document.
 * The template is compiled with small limits and evaluated on a fixed document
 * (the kubectl reference page's, plus a Pod) and, when the rest of the input is
 * valid JSON, on that document, with and without AllowMissingKeys, as text and
 * as FindResults. The same bytes are then used as Capsule input: a source path
 * (validation, execute, quantity sum), a JSONPath field selector (compile and
 * match) and a list of quantities; a source path's sum is also taken from
 * the document's text (jp_quantity_sum_text: the same answer as the parsed
 * document's, or none) and core/jsontext.h finds each member and element
 * of the document's text as parsed. Nothing may crash, leak or run past its
 * limits; a few contracts are checked too (an error code always comes with a
 * message and no result, evaluation is deterministic, FindResults fails
 * exactly when the text evaluation fails before rendering).
 */
#include "core/jsonpath.h"
#include "core/jsontext.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char DOC[] =
    "{\"kind\":\"List\",\"items\":[{\"kind\":\"None\",\"metadata\":{\"name\":\"127.0.0.1\","
    "\"labels\":{\"kubernetes.io/hostname\":\"127.0.0.1\"}},\"status\":{\"capacity\":{\"cpu\":\"4\"},"
    "\"ready\":true,\"addresses\":[{\"type\":\"LegacyHostIP\",\"address\":\"127.0.0.1\"}]}},"
    "{\"kind\":\"None\",\"metadata\":{\"name\":\"127.0.0.2\"},\"status\":{\"capacity\":{\"cpu\":\"8\"},"
    "\"ready\":false,\"addresses\":[{\"type\":\"LegacyHostIP\",\"address\":\"127.0.0.2\"},"
    "{\"type\":\"another\",\"address\":\"127.0.0.3\"}]}}],\"users\":[{\"name\":\"myself\",\"user\":{}},"
    "{\"name\":\"e2e\",\"user\":{\"username\":\"admin\",\"password\":\"secret\"}}],"
    "\"spec\":{\"restartPolicy\":\"Always\",\"replicas\":3,\"ratio\":0.5,\"big\":1e300,\"none\":null,"
    "\"containers\":[{\"name\":\"main\",\"image\":\"nginx:1.27.0\",\"resources\":{\"requests\":"
    "{\"cpu\":\"100m\",\"memory\":\"1Gi\"}}},{\"name\":\"side\",\"resources\":{\"requests\":"
    "{\"cpu\":\"250m\"}}}],\"accessModes\":[\"ReadWriteOnce\",\"ReadOnlyMany\"],\"empty\":[],"
    "\"text\":\"<a&b>\\u2028\\u0000\\u00e9\"},\"status\":{\"phase\":\"Running\"}}";

static json_t *doc;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    doc = json_loads(DOC, JSON_ALLOW_NUL, NULL);
    if (!doc) abort();
    return 0;
}

static const jp_limits LIMITS = {
    .max_template = 4096, .max_depth = 16, .max_steps = 20000, .max_output = 64 * 1024};

/* An error must come with a message (and nothing else). */
static void check_err(int rc, const char *err, const void *result)
{
    if (rc == JP_OK) return;
    if (rc < JP_ERR_QUANTITY || rc > JP_ERR_SYNTAX || err[0] == '\0' || result) abort();
}

static void eval_text(const jp_expr *e, const json_t *obj, bool allow, int find_rc)
{
    char err[512] = "", *out = NULL, *again = NULL;
    size_t n = 0, n2 = 0;
    int rc = jp_eval_text(e, obj, allow, &out, &n, err, sizeof err);
    check_err(rc, err, out);
    /* FindResults fails exactly when evaluation does; only rendering can add
     * an error (the output or the value-depth limit) */
    if (find_rc != JP_OK && find_rc != JP_ERR_NOMEM && rc != find_rc) abort();
    if (find_rc == JP_OK && rc != JP_OK && rc != JP_ERR_LIMIT && rc != JP_ERR_NOMEM) abort();
    if (rc == JP_OK && (!out || n > LIMITS.max_output || out[n] != '\0')) abort();
    int rc2 = jp_eval_text(e, obj, allow, &again, &n2, err, sizeof err);
    if (rc2 != rc || n2 != n || (rc == JP_OK && memcmp(out, again, n) != 0)) abort();
    free(out);
    free(again);
}

static int find(const jp_expr *e, const json_t *obj, bool allow)
{
    char err[512] = "";
    jp_results *r = NULL;
    int rc = jp_find(e, obj, allow, &r, err, sizeof err);
    check_err(rc, err, r);
    for (size_t g = 0; g < jp_results_ngroups(r); g++)
        for (size_t i = 0; i < jp_results_group_len(r, g); i++)
            if (!jp_results_get(r, g, i)) abort();
    jp_results_free(r);
    return rc;
}

static void eval_all(const jp_expr *e, const json_t *obj)
{
    for (int allow = 0; allow < 2; allow++)
        eval_text(e, obj, allow, find(e, obj, allow));
}

/* jp_quantity_sum_text on obj as the store writes it answers what
 * jp_quantity_sum answers, or declines; on raw text (any bytes, a fresh
 * allocation of exactly its size) it stays inside it. */
static void sum_text(const jp_expr *e, const json_t *obj, const qty *parsed, int parsed_rc,
                     const uint8_t *raw, size_t rawlen)
{
    char *text = json_dumps(obj, JSON_COMPACT | JSON_ENCODE_ANY);
    qty q;
    if (text && jp_quantity_sum_text(e, text, strlen(text), &q) == 0 &&
        (parsed_rc != JP_OK || qty_cmp(&q, parsed) != 0))
        abort();
    free(text);
    if (!raw) return;
    char *copy = malloc(rawlen ? rawlen : 1);
    if (!copy) abort();
    memcpy(copy, raw, rawlen);
    (void)jp_quantity_sum_text(e, copy, rawlen, &q);
    free(copy);
}

/* core/jsontext.h on obj as json_dumps writes it: every member found, its
 * text (to jt_skip) parsing to the member; every array element likewise,
 * one level down; a key that is not there absent. */
static void text_members(const json_t *obj)
{
    if (!json_is_object(obj)) return;
    char *text = json_dumps(obj, JSON_COMPACT);
    if (!text) return;
    jt_val doc = jt_text(text, strlen(text)), v, el;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val)
    {
        int r = jt_member(doc, key, strlen(key), &v);
        if (r < 0) continue; /* an escaped key before it: declined, fine */
        const char *end = r == 1 ? jt_skip(v) : NULL;
        if (!end) abort();
        json_t *back = json_loadb(v.p, (size_t)(end - v.p), JSON_DECODE_ANY, NULL);
        if (!back || !json_equal(back, val)) abort();
        json_decref(back);
        if (json_is_array(val)) {
            size_t i = 0;
            int n;
            for (const char *it = NULL; (n = jt_next(v, &it, &el)) > 0; i++) {
                const char *ee = jt_skip(el);
                json_t *b = ee ? json_loadb(el.p, (size_t)(ee - el.p), JSON_DECODE_ANY, NULL) : NULL;
                if (!b || !json_equal(b, json_array_get(val, i))) abort();
                json_decref(b);
            }
            if (n < 0 || i != json_array_size(val)) abort();
        }
    }
    if (!json_object_get(obj, "\001absent") && jt_member(doc, "\001absent", 7, &v) == 1) abort();
    free(text);
}

static void capsule(const char *s, const json_t *obj, const uint8_t *raw, size_t rawlen)
{
    char err[1024] = "";
    int code = 0;
    jp_expr *e = jp_compile_source_path(s, &code, err, sizeof err);
    check_err(code, err, e);
    if ((e == NULL) != (code != JP_OK) || jp_validate_source_path(s, err, sizeof err) != code)
        abort();
    if ((jp_source_path_rules(s, err, sizeof err) == JP_ERR_INVALID) != (code == JP_ERR_INVALID))
        abort();
    if (e) {
        qty q;
        char *out = NULL;
        int rc = jp_quantity_sum(e, obj, &q, err, sizeof err);
        check_err(rc, err, NULL);
        sum_text(e, obj, &q, rc, raw, rawlen);
        rc = jp_source_eval(e, obj, &out, err, sizeof err);
        check_err(rc, err, out);
        free(out);
    }
    jp_free(e);
    jp_field_selector *fs = jp_field_selector_compile(s, &code, err, sizeof err);
    check_err(code, err, fs);
    if ((fs == NULL) != (code != JP_OK)) abort();
    if (fs) {
        bool m;
        int rc = jp_field_selector_match(fs, obj, &m, err, sizeof err);
        check_err(rc, err, NULL);
        if (rc != JP_OK && m) abort();
        if (!jp_field_selector_path(fs) || !jp_field_selector_value(fs)) abort();
    }
    jp_field_selector_free(fs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 2 * LIMITS.max_template) return 0;
    const char *t = (const char *)data;
    const uint8_t *nul = memchr(data, 0, size);
    size_t tlen = nul ? (size_t)(nul - data) : size;
    json_t *obj = nul ? json_loadb((const char *)nul + 1, size - tlen - 1,
                                   JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL)
                      : NULL;

    char err[512] = "";
    int code = 0;
    jp_expr *e = jp_compile_n(t, tlen, &LIMITS, &code, err, sizeof err);
    check_err(code, err, e);
    if ((e == NULL) != (code != JP_OK)) abort();
    if (e) {
        eval_all(e, doc);
        if (obj) eval_all(e, obj);
        jp_free(e);
    }

    char *s = malloc(tlen + 1);
    if (!s) abort();
    memcpy(s, t, tlen);
    s[tlen] = '\0';
    capsule(s, doc, NULL, 0);
    if (obj) capsule(s, obj, nul + 1, size - tlen - 1);
    if (obj) text_members(obj);
    free(s);

    qty q;
    code = jp_parse_quantities(t, tlen, &q, err, sizeof err);
    check_err(code, err, NULL);

    json_decref(obj);
    return 0;
}
