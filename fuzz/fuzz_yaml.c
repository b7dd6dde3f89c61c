/* fuzz_yaml.c - libFuzzer target for YAML to JSON (api/yaml.h).
 *
 * Input: YAML text. It is converted with yaml_to_json; nothing may crash,
 * leak or recurse past the nesting bound, and (abort() otherwise):
 *   - a failure comes with a message, a success without leaving one behind;
 *   - the result, printed as JSON (which is YAML), converts back to an equal
 *     value: only a non-BMP character (escaped as a UTF-16 surrogate pair,
 *     which YAML's \u escape cannot take) or a key longer than YAML's
 *     1024-character implicit keys may make that text unreadable.
 * Anchors and aliases share one jansson value, so the result is a DAG whose
 * tree can be exponentially larger than the text (a "billion laughs"
 * document): the target measures the tree with a budget and only prints
 * results of bounded size. (yaml_to_json's only caller reads the operator's
 * admission configuration file, which is trusted input.)
 */
#include "api/yaml.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT 8192
#define MAX_TREE 20000 /* nodes of the result, aliases expanded, that we print */

static void check(int ok)
{
    if (!ok) abort();
}

/* Tree size with aliases expanded, stopping once past `budget`. */
static size_t tree_size(const json_t *v, size_t budget)
{
    size_t n = 1;
    const char *k;
    json_t *c;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, c) {
            if (n > budget) break;
            n += tree_size(c, budget - n);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, c) {
            if (n > budget) break;
            n += tree_size(c, budget - n);
        }
    }
    return n;
}

/* Whether some key prints as more than 1024 characters: YAML caps an
 * implicit key there (libyaml and go-yaml both), so that JSON is no YAML. */
static bool has_long_key(const json_t *v)
{
    const char *k;
    json_t *c;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, c) {
            json_t *ks = json_string(k);
            char *t = ks ? json_dumps(ks, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
            bool long_key = t && strlen(t) > 1024;
            free(t);
            json_decref(ks);
            if (long_key || has_long_key(c)) return true;
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, c) if (has_long_key(c)) return true;
    }
    return false;
}

static bool has_surrogate_escape(const char *s)
{
    for (const char *p = s; (p = strstr(p, "\\u")) != NULL; p += 2) /* jansson: "\uD83D" */
        if ((p[2] == 'd' || p[2] == 'D') && p[3] && strchr("89abAB", p[3])) return true;
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT) return 0;
    char err[512] = "";
    json_t *v = yaml_to_json((const char *)data, size, err, sizeof err);
    if (!v) {
        check(err[0] != '\0');
        return 0;
    }
    if (tree_size(v, MAX_TREE) <= MAX_TREE) {
        char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
        check(text != NULL);
        char err2[512] = "";
        json_t *back = yaml_to_json(text, strlen(text), err2, sizeof err2);
        if (!back) check(has_surrogate_escape(text) || has_long_key(v));
        else check(json_equal(v, back));
        json_decref(back);
        free(text);
    }
    json_decref(v);
    return 0;
}
