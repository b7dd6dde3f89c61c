/* fieldset.h - managed field sets for server-side apply (structured-merge-diff's
 * sigs.k8s.io/structured-merge-diff/v4/fieldpath Set, and the apiserver's
 * conflict errors), over jansson values.
 *
 * A set holds paths into an object. A path is a sequence of elements:
 *   - a field         `f:<name>`             printed `.name`
 *   - a keyed item    `k:{"name":"c"}`       printed `[name="c"]` (key fields
 *                                            sorted by name, as upstream)
 *   - a set item      `v:<json value>`       printed `[=<value>]`
 *   - a list position `i:<index>`            printed `[3]`
 * Each node of the set's tree is a member (the path itself is in the set),
 * a parent of members, or both. fieldsV1 is the tree as a JSON object: one
 * key per element, `{}` for a member without children, `".":{}` first inside
 * a child that is also a member. Encoding is canonical, byte for byte as the
 * apiserver stores it: elements in upstream's PathElement order (fields by
 * name, then keys, then values, then indexes; keys/values by value.Compare:
 * numbers < strings < bools < lists < maps < null), JSON in key/value
 * elements compact with key fields sorted, strings escaped as Go's
 * encoding/json does (<, >, & as \u003c \u003e \u0026, U+2028/9 escaped).
 * Decoding accepts any order and merges elements that are equal once parsed.
 *
 * fs_from_object: the set of fields an object (an applied configuration)
 * sets, as upstream's ToFieldSet: scalars, nulls, empty maps and atomic
 * lists are members; maps are walked; items of keyed lists (`k:`) and set
 * lists (`v:`) are members and walked. How a list is identified is the
 * caller's knowledge (core does not know the schemas): the fs_list_cb is
 * asked for each list, with the field names leading to it (list item
 * elements left out: .spec.template.spec.containers is
 * {"spec","template","spec","containers"}). Without a callback every list is
 * atomic (upstream's deduced schema for unknown types).
 *
 * Conflicts (fs_conflicts): the fields another manager owns that the apply
 * changes: for each managedFields entry other than the applier's own Apply
 * entry, its set intersected with the applied set, keeping the paths whose
 * value in the live object differs from the applied configuration's (or
 * is absent in the live object); a path that is both a member and a parent
 * in the applied set (a list item, ".") conflicts only when absent live.
 * fs_conflict_message formats the apiserver's message ("Apply failed with 1
 * conflict: conflict with \"m\" using v1: .spec.replicas", or grouped by
 * manager, sorted, for several; bounded in size); managers print as its
 * printManager does.
 *
 * Limits: every decode/build is bounded by fs_limits (tree depth, nodes,
 * input text bytes); exceeding one is FS_ERR_LIMIT, never a crash or stall.
 *
 * Ownership: constructors return a new fs_set the caller frees with
 * fs_free (NULL is fine); inputs are borrowed, never kept nor changed. Set
 * operations return new sets and leave their operands alone. Strings
 * returned through `char **` are malloc'd, the caller frees them. Errors:
 * negative FS_ERR_* (constructors NULL, with *code) and a message in
 * err[errlen], always NUL-terminated.
 *
 * Pure: no I/O, no globals.
 */
#ifndef ALLOT_CORE_FIELDSET_H
#define ALLOT_CORE_FIELDSET_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum {
    FS_OK = 0,
    FS_ERR_INVALID = -1, /* not a fieldsV1 / a malformed element */
    FS_ERR_LIMIT = -2,   /* an fs_limits bound was exceeded */
    FS_ERR_NOMEM = -3,
};

typedef struct fs_limits {
    unsigned max_depth; /* path elements in one path */
    size_t max_nodes;   /* path elements in a whole set */
    size_t max_text;    /* bytes of fieldsV1 text (decode and encode) */
} fs_limits;

#define FS_DEFAULT_MAX_DEPTH 64u
#define FS_DEFAULT_MAX_NODES ((size_t)100000)
#define FS_DEFAULT_MAX_TEXT ((size_t)4 * 1024 * 1024)

typedef struct fs_set fs_set;

/* How the items of a list are identified. */
typedef enum {
    FS_LIST_ATOMIC = 0, /* the list is one value (member), items not walked */
    FS_LIST_SET,        /* list of scalars, items `v:<value>` */
    FS_LIST_MAP,        /* list of objects, items `k:{merge keys}` */
} fs_list_type;

typedef struct fs_list_info {
    fs_list_type type;
    const char *const *keys; /* FS_LIST_MAP: merge key field names */
    size_t nkeys;
    /* NULL, or per key the string an item that omits it is keyed by (NULL
     * entries: none): upstream's OpenAPI defaults of list-map keys, as
     * `protocol: TCP` of a container's ports. */
    const char *const *key_defaults;
} fs_list_info;

/* The shape of the list (is_list) or non-empty map at `fields[0..n)`. *out
 * comes preset to the default (lists FS_LIST_ATOMIC, maps granular:
 * FS_LIST_MAP); set out->type = FS_LIST_ATOMIC for an atomic map (a
 * structType=atomic, like apps/v1 .spec.selector). Return nonzero for atomic. */
typedef int (*fs_list_cb)(void *ud, const char *const *fields, size_t n, bool is_list,
                          fs_list_info *out);

/* ---- typed walks: a schema cursor ----
 * The shape of an object as a schema says it, for the walks that need more
 * than list shapes (core/smd.h: merge, compare, removal). A type is an
 * opaque handle of the schema's own (p NULL: untyped, upstream's deduced
 * schema: lists atomic, maps granular, every child untyped, no declared
 * fields). The callbacks are pure and get the schema back, so an
 * implementation reaches its data by embedding fs_schema in its own struct.
 * Types are small values; nothing is allocated. */
typedef struct fs_type {
    const void *p;
    unsigned tag;
} fs_type;

enum {
    FS_FIELD_NAMED = 1 << 0, /* a field the struct declares (not a key of a map) */
    FS_FIELD_VALUE = 1 << 1, /* ... Go always has where its parent is (a value struct, a
                                slice without omitempty): unset, it compares as empty */
};

typedef struct fs_schema fs_schema;
struct fs_schema {
    /* The type of member `name` of a map of type t; *flags gets FS_FIELD_*. */
    fs_type (*field)(const fs_schema *s, fs_type t, const char *name, unsigned *flags);
    /* The type of the items of a list of type t. */
    fs_type (*items)(const fs_schema *s, fs_type t);
    /* How the list (is_list) or map of type t merges; *out comes preset as
     * for fs_list_cb (list atomic, map granular). */
    void (*shape)(const fs_schema *s, fs_type t, bool is_list, fs_list_info *out);
};

/* The untyped schema (every list atomic, every map granular). */
extern const fs_schema fs_untyped;

enum {
    /* fs_from_object_typed: a live object rather than an applied
     * configuration: duplicate keyed items are one item, and a keyed list
     * whose items cannot be keyed is one atomic value, as upstream's
     * AllowDuplicates conversion of stored objects. */
    FS_LENIENT = 1 << 0,
};

fs_set *fs_new(void);
void fs_free(fs_set *s);
bool fs_empty(const fs_set *s);
size_t fs_size(const fs_set *s); /* number of members (paths) */

/* Decode fieldsV1 (a JSON object, or its text). `limits` may be NULL. */
fs_set *fs_from_fieldsv1(const json_t *v, const fs_limits *limits, int *code, char *err,
                         size_t errlen);
fs_set *fs_from_fieldsv1_text(const char *text, size_t len, const fs_limits *limits, int *code,
                              char *err, size_t errlen);
/* Encode canonically: text (malloc'd, NUL-terminated) or a new json_t
 * whose keys are in the canonical order. */
int fs_to_fieldsv1_text(const fs_set *s, char **out, size_t *outlen);
json_t *fs_to_fieldsv1(const fs_set *s);

/* The set of fields `obj` sets. A keyed item missing a merge key, or
 * duplicate items, are FS_ERR_INVALID (upstream refuses them too). */
fs_set *fs_from_object(const json_t *obj, fs_list_cb cb, void *ud, const fs_limits *limits,
                       int *code, char *err, size_t errlen);

/* fs_from_object with a schema cursor (root: the object's type). */
fs_set *fs_from_object_typed(const json_t *obj, const fs_schema *sch, fs_type root, unsigned flags,
                             const fs_limits *limits, int *code, char *err, size_t errlen);

/* Set algebra: new sets (NULL only when out of memory). */
fs_set *fs_union(const fs_set *a, const fs_set *b);
fs_set *fs_difference(const fs_set *a, const fs_set *b);
fs_set *fs_intersection(const fs_set *a, const fs_set *b);
/* a without b's members and everything below them (upstream's
 * RecursiveDifference: {a.b.c} minus {a.b} is empty). */
fs_set *fs_recursive_difference(const fs_set *a, const fs_set *b);
bool fs_equal(const fs_set *a, const fs_set *b);
/* a minus b in place (recursive: as fs_recursive_difference). Allocates
 * nothing, so it cannot fail. */
void fs_subtract(fs_set *a, const fs_set *b, bool recursive);

/* Add the path of field elements names[0..n) as a member. FS_OK or
 * FS_ERR_NOMEM. For building small fixed sets ("metadata", "uid"). */
int fs_insert_fields(fs_set *s, const char *const *names, size_t n);

/* Member paths in upstream's Set.Iterate order (at each level members
 * first, then children), printed as fieldpath.Path.String(). `f` returns
 * nonzero to stop. Returns FS_OK or FS_ERR_NOMEM. */
int fs_iterate(const fs_set *s, int (*f)(void *ud, const char *path), void *ud);
/* Is the path (printed form) a member? For tests. */
bool fs_has(const fs_set *s, const char *path);

/* One metadata.managedFields entry (borrowed strings; NULL = absent). */
typedef struct fs_entry {
    const char *manager;
    const char *operation; /* "Apply" or "Update" */
    const char *api_version;
    const char *subresource;
    const fs_set *set;
} fs_entry;

typedef struct fs_conflict {
    char *manager; /* as printManager prints it: "\"m\" using v1" */
    char *path;    /* ".spec.replicas" */
} fs_conflict;

typedef struct fs_conflicts {
    fs_conflict *v; /* sorted by manager (stable), paths in iterate order */
    size_t n;
    size_t total; /* how many there are: n, or more when v lists only the first n */
} fs_conflicts;

/* Conflicts of an apply by `applier` (its Apply entry, same subresource, is
 * its own). `applied` is fs_from_object(config); `live` the current object
 * (NULL: none). out is filled (n = 0: no conflict); free with
 * fs_conflicts_free. */
int fs_conflicts_find(const fs_set *applied, const char *applier, const char *subresource,
                      const fs_entry *entries, size_t n, const json_t *live,
                      const json_t *config, fs_conflicts *out);
void fs_conflicts_free(fs_conflicts *c);
/* The apiserver's message for n >= 1 conflicts (malloc'd), at most `max`
 * bytes (NUL excluded; max >= FS_CONFLICT_MESSAGE_MIN). Upstream lists every
 * conflict, bounded only by the object's size; here the listing stops at
 * the last line that fits, with how many it leaves out ("\n... and 12
 * more"), the conflicts of v not printed and those past it alike. A single
 * conflict too long for max is cut (at a UTF-8 character). */
#define FS_CONFLICT_MESSAGE_MIN 128
char *fs_conflict_message(const fs_conflicts *c, size_t max);
/* printManager for one entry (malloc'd). */
char *fs_print_manager(const char *manager, const char *operation, const char *api_version,
                       const char *subresource);

#endif
