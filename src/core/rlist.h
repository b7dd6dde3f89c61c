/* rlist.h - a resource list (v1.ResourceList): resource name -> quantity.
 *
 * Mirrors upstream's quota helpers (k8s.io/apiserver/pkg/quota/v1/resources.go):
 * Add, Subtract, SubtractWithNonNegativeResult, Mask, LessThanOrEqual, IsZero,
 * IsNegative, RemoveZeros, Equals. Entries are kept sorted by name (strcmp), so
 * iteration order, JSON output and every name list built from an rlist is the
 * sorted order upstream's messages use.
 *
 * A set of resource names is an rlist too: only its keys matter (rl_mask takes
 * one, rl_less_than_or_equal and rl_is_negative return one). rl_add_name adds
 * a key with a zero value.
 *
 * Ownership: every rlist returned here (rl_new, rl_copy and every function
 * returning `rlist *`) is owned by the caller and released with rl_free.
 * Arguments are borrowed; names are copied in. Pointers returned by rl_get,
 * rl_name and rl_qty stay valid until the list is next modified or freed.
 * Functions returning `rlist *` return NULL only when out of memory (or when
 * a sum needs more digits than a qty holds, see quantity.h).
 * Pure: no I/O, no globals.
 */
#ifndef ALLOT_CORE_RLIST_H
#define ALLOT_CORE_RLIST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/dbuf.h"
#include "core/quantity.h"

enum { RL_OK = 0, RL_ENOMEM = -20, RL_EINVAL = -21 };

typedef struct rlist rlist;

rlist *rl_new(void);
void rl_free(rlist *l);
rlist *rl_copy(const rlist *l);
void rl_clear(rlist *l);

size_t rl_len(const rlist *l);
const char *rl_name(const rlist *l, size_t i); /* i-th name in sorted order */
const qty *rl_qty(const rlist *l, size_t i);
const qty *rl_get(const rlist *l, const char *name); /* NULL when absent */
bool rl_has(const rlist *l, const char *name);

/* Insert or replace (the name is copied). 0 or RL_ENOMEM. */
int rl_set(rlist *l, const char *name, const qty *q);
/* Add `name` with a zero (DecimalSI) value unless present. 0 or RL_ENOMEM. */
int rl_add_name(rlist *l, const char *name);
void rl_del(rlist *l, const char *name);

/* In place: dst += b (keys of b missing in dst are copied in). 0, RL_ENOMEM or
 * QTY_ERR_RANGE; on error dst may hold part of the sum. */
int rl_add_to(rlist *dst, const rlist *b);

/* In place: l[name] += q (inserted as q when absent). 0, RL_ENOMEM or
 * QTY_ERR_RANGE. */
int rl_add_qty(rlist *l, const char *name, const qty *q);

/* Add(a, b): every key of either list; values summed. */
rlist *rl_add(const rlist *a, const rlist *b);
/* Add(a, Mask(b, mask)) in one merge pass, for a charge: used + the requested
 * part of a delta. *changed: the result differs from a (Equals is false);
 * *exceeds: for some key taken from b, the sum is above mask's value. NULL
 * when out of memory or a sum is out of range. */
rlist *rl_add_masked(const rlist *a, const rlist *b, const rlist *mask, bool *changed,
                     bool *exceeds);
/* Subtract(a, b): a - b over the union of keys (keys only in b are negated). */
rlist *rl_subtract(const rlist *a, const rlist *b);
/* SubtractWithNonNegativeResult: max(0, a - b) per key; keys only in b get 0. */
rlist *rl_subtract_nonneg(const rlist *a, const rlist *b);
/* Mask(l, names): the entries of l whose name is a key of `names`. */
rlist *rl_mask(const rlist *l, const rlist *names);
/* RemoveZeros. */
rlist *rl_remove_zeros(const rlist *l);
/* LessThanOrEqual(a, b): the names (values from a) whose value in a is greater
 * than in b; keys missing from b are not compared. Empty list => a <= b. */
rlist *rl_less_than_or_equal(const rlist *a, const rlist *b);
/* IsNegative: the entries with a negative value. */
rlist *rl_is_negative(const rlist *l);

bool rl_is_zero(const rlist *l);                       /* every value is 0 (true when empty) */
bool rl_equal(const rlist *a, const rlist *b);         /* same keys, numerically equal values */
bool rl_same_names(const rlist *a, const rlist *b);    /* same key sets */
bool rl_has_names(const rlist *l, const rlist *names); /* every key of names is in l */

/* JSON map {"cpu": "100m", ...}. A NULL or JSON null `obj` is the empty list.
 * Entries are added to (or replace those in) `out`. Returns 0, RL_EINVAL (not an
 * object), RL_ENOMEM, or a QTY_ERR_* code for an unparsable value; on error
 * `bad` (if not NULL) points at the offending key (borrowed from obj). */
int rl_from_json(const json_t *obj, rlist *out, const char **bad);
/* New JSON object with canonical quantity strings; NULL when out of memory. */
json_t *rl_to_json(const rlist *l);

/* Upstream's message helpers (admission controller.go):
 * rl_format_names: names joined by `sep` (prettyPrintResourceNames uses ",");
 * rl_format: "k=v,k=v" with canonical values (prettyPrint).
 * Both append to `out`; 0 or RL_ENOMEM. */
int rl_format_names(const rlist *l, const char *sep, dbuf *out);
int rl_format(const rlist *l, dbuf *out);

#endif
