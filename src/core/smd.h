/* smd.h - structured merge-diff over jansson values: the walks server-side
 * apply does on objects (sigs.k8s.io/structured-merge-diff's TypedValue
 * Merge, Compare and RemoveItems, and fieldpath's EnsureNamedFieldsAreMembers),
 * driven by a schema cursor (fs_schema, core/fieldset.h) that says which
 * lists are atomic, sets or keyed by which fields, which maps are atomic,
 * and which fields a struct declares.
 *
 * Merge: the applied configuration over the live object. Maps merge key by
 * key, keyed and set lists item by item (upstream's order: the live items
 * in their order, new items placed before the next item both hold),
 * everything else (scalars, atomic lists and maps, a value whose JSON type
 * differs) is the configuration's. The configuration is taken as valid:
 * fs_from_object_typed refuses one with a keyed item that cannot be keyed
 * or twice the same key (as upstream's typed conversion does), and apply
 * takes its field set first; merging meets such a list only where the
 * live object has one too, and then fails with FS_ERR_INVALID. A live list
 * that cannot be keyed is one atomic value; a live item repeated under one
 * key is kept unless the configuration sets that key.
 *
 * Compare: the paths added, removed and modified from lhs to rhs, as
 * upstream: a leaf (scalar, atomic value, a map or list empty on both
 * sides) is added, removed or modified (by value: 1 == 1.0); a map or list
 * present on one side only is itself added or removed, with everything
 * below it. A field Go always has where its parent is (FS_FIELD_VALUE: a
 * value struct, a slice without omitempty) compares as {} or [] when unset
 * in a parent that is there. The root is never a path.
 *
 * Remove: the object without the members of a set (a map field or list
 * item that is a member goes whole; walking stops at atomic values). A map
 * or list emptied by the removal goes too (upstream leaves a null that the
 * typed conversion drops). An item of a keyed list keeps its key fields
 * unless it goes whole: an item without its key would not be one.
 *
 * Every walk is bounded by fs_limits (depth, and nodes visited or copied);
 * past one it fails with FS_ERR_LIMIT, so an alias-heavy YAML body cannot
 * expand without bound. Results are new values sharing nothing with the
 * inputs (callers edit them). Pure: no I/O, no globals.
 */
#ifndef ALLOT_CORE_SMD_H
#define ALLOT_CORE_SMD_H

#include "core/fieldset.h"

#include <jansson.h>
#include <stdbool.h>

/* live may be NULL (an object created by the apply). NULL with *code and a
 * message in err on failure. */
json_t *smd_merge(const json_t *live, const json_t *config, const fs_schema *sch, fs_type root,
                  const fs_limits *lim, int *code, char *err, size_t errlen);

typedef struct smd_diff {
    fs_set *added, *removed, *modified;
} smd_diff;

/* lhs or rhs may be NULL (an empty object). FS_OK with *out filled (free
 * with smd_diff_free), or an error with out empty. */
int smd_compare(const json_t *lhs, const json_t *rhs, const fs_schema *sch, fs_type root,
                const fs_limits *lim, smd_diff *out, char *err, size_t errlen);
void smd_diff_free(smd_diff *d);

/* obj without the members of `items`; NULL only when out of memory or
 * past the limits. */
json_t *smd_remove(const json_t *obj, const fs_set *items, const fs_schema *sch, fs_type root,
                   const fs_limits *lim);

/* s with every declared struct field that is a parent in it made a member
 * too (upstream's EnsureNamedFieldsAreMembers); NULL when out of memory. */
fs_set *smd_named_members(const fs_set *s, const fs_schema *sch, fs_type root);

/* upstream's value.Equals: numbers by value, maps unordered. */
bool smd_equal(const json_t *a, const json_t *b);

#endif
