/* fieldset_impl.h - the inside of a field set, shared by core/fieldset.c and
 * the walks over objects that build and read sets (core/smd.c). Not for use
 * outside core: everything else goes through fieldset.h.
 *
 * A set is a tree of path elements. A node is a member (its path is in the
 * set), a parent of members, or both; its children are kept sorted by
 * fsi_pe_cmp with no duplicates once a level is finished (fsi_finish_level).
 * Nodes own their children, names and values.
 */
#ifndef ALLOT_CORE_FIELDSET_IMPL_H
#define ALLOT_CORE_FIELDSET_IMPL_H

#include "core/fieldset.h"

enum { PE_ROOT, PE_FIELD, PE_KEY, PE_VALUE, PE_INDEX };

typedef struct fs_node fs_node;
struct fs_node {
    int kind;
    char *name;    /* PE_FIELD (owned) */
    json_t *val;   /* PE_KEY: array of [name, value] sorted by name; PE_VALUE: the value */
    long long idx; /* PE_INDEX */
    bool member;
    fs_node **kids; /* sorted by fsi_pe_cmp, no duplicates */
    size_t nkids, cap;
};

struct fs_set {
    fs_node root;
};

enum { OP_UNION, OP_DIFF, OP_INTER, OP_RDIFF };

/* upstream's value.Compare: numbers < strings < bools < lists < maps < null;
 * numbers by value. */
int fsi_val_cmp(const json_t *a, const json_t *b);
/* upstream's PathElement order (fields, keys, values, indexes). */
int fsi_pe_cmp(const fs_node *a, const fs_node *b);
void fsi_node_free(fs_node *n);
/* A new node with a's element, no children, not a member. */
fs_node *fsi_node_pe_copy(const fs_node *a);
fs_node *fsi_node_copy(const fs_node *a);
int fsi_kids_push(fs_node *p, fs_node *k);
bool fsi_node_empty(const fs_node *n);
/* a op b into out (its element already set). 0 or -1 (no memory). */
int fsi_combine(const fs_node *a, const fs_node *b, int op, fs_node *out);
/* Sort a level's children and merge equal ones. 0 or -1. */
int fsi_finish_level(fs_node *p);
/* A key element's value from an object of key fields: [[name, value]...]
 * sorted by name (new reference, NULL when out of memory). */
json_t *fsi_key_from_object(const json_t *o);
/* A list item's element into out (kind and val): its value for a set, its
 * key fields (or their defaults) for a keyed list. 0; -1 out of memory; 1
 * the item is not an object; 2 it lacks a key. */
int fsi_item_pe(const json_t *item, const fs_list_info *li, fs_node *out);
/* The child of p with e's element (kids sorted), or NULL. */
fs_node *fsi_find_kid(const fs_node *p, const fs_node *e);

#endif
