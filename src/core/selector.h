/* selector.h - label and field selectors, as k8s.io/apimachinery parses them.
 *
 * One opaque type, sel_t, holds either a label selector (from the `-l`
 * string syntax of labels.Parse or from a metav1.LabelSelector object) or a
 * field selector (fields.ParseSelector). It is an AND of requirements.
 *
 * Ownership: every sel_t returned here is owned by the caller and released
 * with sel_free. sel_to_string returns a malloc'd string the caller frees.
 * Input JSON is only borrowed; nothing here keeps a reference to it.
 * Errors: constructors return NULL and write upstream's error text (the
 * message apiserver returns in a 400 BadRequest) into errbuf.
 *
 * Pure: no I/O, no globals; safe to use from any thread on distinct objects,
 * and a finished sel_t may be shared read-only.
 */
#ifndef ALLOT_CORE_SELECTOR_H
#define ALLOT_CORE_SELECTOR_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct sel sel_t;

typedef enum {
    SEL_IN,
    SEL_NOT_IN,
    SEL_EQUALS,        /* "="  */
    SEL_DOUBLE_EQUALS, /* "==" */
    SEL_NOT_EQUALS,    /* "!=" */
    SEL_EXISTS,
    SEL_DOES_NOT_EXIST,
    SEL_GT, /* labels only: "a>1" */
    SEL_LT, /* labels only: "a<1" */
} sel_op;

/* ---- label selectors ---- */

/* labels.Parse. "" (or only whitespace) matches everything. Values are
 * sorted and de-duplicated, requirements sorted by key, as upstream. */
sel_t *sel_parse_labels(const char *s, char *errbuf, size_t n);

/* metav1.LabelSelectorAsSelector. `ls` is the LabelSelector object:
 *   NULL or JSON null  -> a selector that matches NOTHING (upstream's
 *                         labels.Nothing(); callers for which an absent
 *                         selector means "all" must decide that themselves);
 *   {} (no matchLabels and no matchExpressions) -> matches everything.
 * Operators: In, NotIn, Exists, DoesNotExist. */
sel_t *sel_from_json(const json_t *ls, char *errbuf, size_t n);

/* Match a label selector against a labels object (string -> string).
 * NULL/non-object labels count as no labels; non-string values as absent. */
bool sel_matches(const sel_t *s, const json_t *labels);

/* ---- field selectors ---- */

/* fields.ParseSelector: terms `f=v`, `f==v`, `f!=v` joined by ','; values
 * may escape '\', ',' and '=' with a backslash. "" matches everything. */
sel_t *sel_parse_fields(const char *s, char *errbuf, size_t n);

/* Match against a flat object of field name -> value. A missing field reads
 * as "" (so `f=` matches objects without f), as upstream's Fields.Get.
 * Booleans read as "true"/"false" and integers in decimal. */
bool sel_matches_fields(const sel_t *s, const json_t *fields);
/* The same over values read through `get` (the value of a field, or NULL
 * for a missing one, which reads as ""): no object to build per match. */
typedef const char *(*sel_field_get)(void *arg, const char *key);
bool sel_matches_fields_get(const sel_t *s, sel_field_get get, void *arg);

/* Check every field name against `supported` (NULL-terminated). On the first
 * unknown one, writes "field label not supported: <name>" (the apiserver's
 * conversion-func text) and returns false. */
bool sel_fields_supported(const sel_t *s, const char *const *supported, char *errbuf, size_t n);

/* ---- inspection, both kinds ---- */

bool sel_empty(const sel_t *s);           /* no requirements: matches everything */
bool sel_matches_nothing(const sel_t *s); /* the null-LabelSelector selector */
size_t sel_count(const sel_t *s);
/* i-th requirement (sorted order). Values stay owned by `s`. */
const char *sel_key(const sel_t *s, size_t i);
sel_op sel_req_op(const sel_t *s, size_t i);
size_t sel_req_nvalues(const sel_t *s, size_t i);
const char *sel_req_value(const sel_t *s, size_t i, size_t j);

/* RequiresExactMatch: if the selector pins `key` to one value (=, ==, or
 * `in` with one value for labels; = or == for fields), set *value (owned by
 * `s`) and return true. Lets the server use an index or validate names. */
bool sel_requires(const sel_t *s, const char *key, const char **value);
#define sel_fields_requires sel_requires

/* Upstream's String(): "x in (a,b),y!=c,!z" for labels, "f=v,g!=w" for
 * fields (values re-escaped). Re-parsing the result gives the same
 * selector. Caller frees. NULL only on allocation failure. */
char *sel_to_string(const sel_t *s);

void sel_free(sel_t *s);

#endif
