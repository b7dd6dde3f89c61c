/* cel_impl.h - internals shared by the cel*.c files (not part of the API; see cel.h).
 *
 * Pipeline: cel_parse.c turns the source into an AST (macros already expanded into
 * comprehension nodes), cel_check.c gives every node a static type and resolves
 * identifiers, cel_eval.c walks the AST, calling into the function table of
 * cel_lib.c. Values and the arena they live in are in cel_value.c.
 *
 * Memory: a program's AST, types and literal strings live in the program's arena;
 * everything an evaluation builds lives in the evaluation's arena, freed in one go at
 * its end. Values therefore never own anything: a cel_val is a plain struct that
 * points into an arena, into the program, or into the caller's JSON.
 */
#ifndef ALLOT_CORE_CEL_IMPL_H
#define ALLOT_CORE_CEL_IMPL_H

#include "core/cel.h"
#include "core/quantity.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- arena ------------------------------------------------------------------------------ */

typedef struct cel_chunk cel_chunk;

typedef struct cel_arena {
    cel_chunk *head;
    size_t used;  /* bytes handed out so far */
    size_t limit; /* cel_arena_alloc fails once `used` would pass it */
} cel_arena;

void cel_arena_init(cel_arena *a, size_t limit);
void cel_arena_free(cel_arena *a);
/* Zeroed, 16-byte aligned; NULL past the limit or when malloc fails. */
void *cel_arena_alloc(cel_arena *a, size_t n);
/* n bytes of s plus a NUL. */
char *cel_arena_strndup(cel_arena *a, const char *s, size_t n);

/* ---- static types ----------------------------------------------------------------------- */

typedef enum {
    T_ERROR, /* a subexpression that failed to check; acts as dyn so checking goes on */
    T_DYN,
    T_FREE, /* the element type of an empty literal: unifies with anything, prints dyn */
    T_NULL,
    T_BOOL,
    T_INT,
    T_UINT,
    T_DOUBLE,
    T_STRING,
    T_QTY,
    T_LIST, /* p[0] element */
    T_MAP,  /* p[0] key, p[1] value */
} cel_tkind;

typedef struct cel_type {
    cel_tkind k;
    const struct cel_type *p[2];
} cel_type;

extern const cel_type cel_t_error, cel_t_dyn, cel_t_free, cel_t_null, cel_t_bool, cel_t_int,
    cel_t_uint, cel_t_double, cel_t_string, cel_t_qty;

/* NULL when the arena is exhausted. */
const cel_type *cel_type_list(cel_arena *a, const cel_type *elem);
const cel_type *cel_type_map(cel_arena *a, const cel_type *k, const cel_type *v);
bool cel_type_is_dynlike(const cel_type *t); /* dyn, error or free */
bool cel_type_exact(const cel_type *a, const cel_type *b);
/* cel-go's FormatCelType ("list(int)", "null"); `go_string` prints Type.String() instead,
 * which differs only for null ("null_type"). Free type variables print as dyn. */
void cel_type_format(const cel_type *t, bool go_string, char *buf, size_t n);

/* ---- values ----------------------------------------------------------------------------- */

typedef enum {
    V_NULL,
    V_BOOL,
    V_INT,
    V_UINT,
    V_DOUBLE,
    V_STRING,
    V_QTY,
    V_LIST,
    V_MAP,
    V_ERROR,
} cel_vkind;

typedef struct cel_val cel_val;
typedef struct cel_list {
    size_t n;
    cel_val *v;
} cel_list;
typedef struct cel_map {
    size_t n;
    cel_val *k, *v;
} cel_map;

struct cel_val {
    uint8_t k;    /* cel_vkind */
    uint8_t json; /* V_LIST/V_MAP: `j` is a borrowed JSON array/object, else `l`/`m` */
    union {
        bool b;
        int64_t i;
        uint64_t u;
        double d;
        struct {
            const char *p; /* valid UTF-8, not NUL-terminated */
            size_t n;
        } s;
        const qty *q;
        const json_t *j;
        const cel_list *l;
        const cel_map *m;
        const char *err; /* V_ERROR: the message */
    };
};

/* A JSON value as a CEL value (borrowed: the JSON must outlive the value). */
cel_val cel_from_json(const json_t *j);
/* CEL's JSON mapping; NULL when not convertible, on allocation failure, or once the
 * result would take more than *budget bytes (which it decreases as it goes: lists may
 * share elements, so a small value can stand for an exponentially large document). */
json_t *cel_to_json(const cel_val *v, size_t *budget);

size_t cel_list_len(const cel_val *l);
cel_val cel_list_at(const cel_val *l, size_t i);
size_t cel_map_len(const cel_val *m);
/* Lookup with CEL key equality (1 == 1u == 1.0); false when absent. */
bool cel_map_get(const cel_val *m, const cel_val *key, cel_val *out);
/* The cost of one lookup: JSON objects hash, maps built by literals are scanned. */
uint64_t cel_map_lookup_cost(const cel_val *m);

typedef struct cel_map_iter {
    const cel_val *m;
    size_t i;
    void *it;
} cel_map_iter;
void cel_map_iter_init(cel_map_iter *it, const cel_val *m);
bool cel_map_next(cel_map_iter *it, cel_val *key, cel_val *val);

/* CEL's heterogeneous equality (never an error). Adds the work done to *steps and gives
 * up (returning false) once it passes `max`: shared sublists make the work of a compare
 * unbounded by the size of the values, so the caller charges *steps and aborts. */
bool cel_val_equal(const cel_val *a, const cel_val *b, uint64_t *steps, uint64_t max);
/* Ordering for < <= > >=: -1/0/1, 2 when unordered (NaN), 3 when not comparable. */
int cel_val_compare(const cel_val *a, const cel_val *b);
/* Runtime type name, as cel-go's TypeName(): "int", "list", "kubernetes.Quantity". */
const char *cel_val_type_name(const cel_val *v);
/* Go's %v of a map key or index ("no such key: %v"). */
void cel_val_format_key(const cel_val *v, char *buf, size_t n);
/* strconv.FormatFloat(d, 'g', -1, 64), what Go's %g and %v print. */
void cel_format_double(double d, char *buf, size_t n);
/* Number of code points of valid UTF-8. */
size_t cel_utf8_len(const char *s, size_t n);

/* ---- AST -------------------------------------------------------------------------------- */

typedef enum {
    N_LIT,
    N_IDENT,
    N_SELECT,
    N_HAS,
    N_INDEX,
    N_CALL,
    N_LIST,
    N_MAP,
    N_AND,
    N_OR,
    N_COND,
    N_COMP,
} cel_nkind;

typedef enum { M_ALL, M_EXISTS, M_EXISTS_ONE, M_MAP, M_MAP_FILTER, M_FILTER } cel_macro;

typedef struct cel_node cel_node;
struct cel_node {
    uint8_t kind;
    uint16_t height;      /* 1 + the tallest child; bounded by CEL_MAX_DEPTH */
    uint32_t pos;         /* byte offset in the source, for error locations */
    const cel_type *type; /* set by the checker */
    union {
        cel_val lit;
        struct {
            const char *name;
            int ref; /* >= 0: comprehension slot; < 0: variable -(ref + 1) */
        } id;
        struct {
            cel_node *x;
            const char *field; /* NUL-terminated, in the program arena */
        } sel;                 /* N_SELECT, N_HAS */
        struct {
            cel_node *x, *index;
        } idx;
        struct {
            const char *name;
            int fn; /* index in cel_funcs, -1 if undeclared (the checker reports it) */
            bool member;
            uint8_t n; /* arguments, the receiver first when member */
            cel_node **args;
        } call;
        struct {
            size_t n;
            cel_node **items;
        } list;
        struct {
            size_t n;
            cel_node **keys, **vals;
        } map;
        struct {
            cel_node *a, *b, *c; /* N_AND/N_OR: a, b; N_COND: a ? b : c */
        } op;
        struct {
            uint8_t macro; /* cel_macro */
            int slot;      /* frame slot of the iteration variable */
            const char *var;
            cel_node *range, *pred, *xform; /* M_MAP: xform only; M_MAP_FILTER: both */
        } comp;
    };
};

/* A located compile error (offset into the source). */
typedef struct cel_issue {
    bool set;
    uint32_t pos;
    char msg[320];
} cel_issue;

__attribute__((format(printf, 3, 4))) void cel_issue_set(cel_issue *is, uint32_t pos,
                                                         const char *fmt, ...);

struct cel_program {
    cel_arena arena;
    char *src; /* trimmed, NUL-terminated, in the arena */
    size_t srclen;
    cel_node *root;
    const char **vars;
    size_t nvars;
    int nslots; /* deepest comprehension nesting */
    cel_expect expect;
    char type_str[128];
};

/* cel_parse.c: 0, or -1 with *is set. */
int cel_parse(cel_program *p, cel_issue *is);
/* cel_check.c: types every node and resolves identifiers; 0, or -1 with the error of
 * lowest position in *is. */
int cel_check(cel_program *p, cel_issue *is);

/* ---- evaluation ------------------------------------------------------------------------- */

/* One evaluation: its arena (the memory budget is the arena's limit), its cost, the
 * variables (borrowed, in the program's declaration order) and the comprehension slots. */
typedef struct cel_ctx {
    cel_arena arena;
    uint64_t cost, cost_limit;
    int abort; /* CEL_ERR_LIMIT or CEL_ERR_NOMEM: stop at once, absorb nothing */
    const json_t *const *vars;
    cel_val *slots; /* prog->nslots iteration variables, innermost comprehension last */
} cel_ctx;

cel_val cel_eval_node(cel_ctx *c, const cel_node *n);

/* An error value; on memory exhaustion sets c->abort. */
__attribute__((format(printf, 2, 3))) cel_val cel_err(cel_ctx *c, const char *fmt, ...);
/* Adds to the cost; false (and c->abort set) once over the budget. */
bool cel_charge(cel_ctx *c, uint64_t units);
/* Arena allocation that sets c->abort on failure. */
void *cel_alloc(cel_ctx *c, size_t n);

static inline cel_val cel_bool(bool b)
{
    return (cel_val){.k = V_BOOL, .b = b};
}
static inline cel_val cel_int(int64_t i)
{
    return (cel_val){.k = V_INT, .i = i};
}

/* ---- functions (cel_lib.c) -------------------------------------------------------------- */

/* args[0] is the receiver for member overloads; no argument is an error value. */
typedef cel_val (*cel_impl)(cel_ctx *c, const cel_val *args);

/* Signatures are prefix-coded types: i int, u uint, d double, s string, b bool, q quantity,
 * y dyn, z null, A and B type parameters, l<T> list, m<K><V> map; arguments then '>'
 * then the result, e.g. "lAlA>lA" for list(A) + list(A) -> list(A). A member
 * overload's first argument is the receiver. */
typedef struct cel_overload {
    bool member;
    const char *sig;
    cel_impl impl;
} cel_overload;

typedef struct cel_func {
    const char *name;
    const cel_overload *ov;
    size_t nov;
} cel_func;

extern const cel_func cel_funcs[];
extern const size_t cel_nfuncs;

int cel_func_lookup(const char *name); /* -1 when undeclared */
/* Operators whose runtime mismatch reads plain "no such overload", as cel-go's. */
bool cel_func_is_operator(const char *name);
/* Number of arguments of a signature (receiver included). */
int cel_sig_arity(const char *sig);

#endif
