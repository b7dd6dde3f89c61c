/* table_internal.h - what table.c (the Table frame) and table_printers.c (the
 * per-kind printers) share. Not for use outside the table module. */
#ifndef ALLOT_API_TABLE_INTERNAL_H
#define ALLOT_API_TABLE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One column, as upstream's metav1.TableColumnDefinition. */
typedef struct table_col {
    const char *name;
    const char *type;   /* "string", "integer", "boolean", "date" */
    const char *format; /* "name" for the object-name column, else "" */
    const char *desc;
    int priority; /* 1: shown by kubectl only with -o wide */
    /* Where the cell's value lives, as a CRD's additionalPrinterColumns
     * jsonPath (".status.claimCount"), for the kinds that are also served as
     * CRDs on a cluster (table_crd_columns); NULL elsewhere. */
    const char *path;
} table_col;

/* A printer: the columns of one resource and the function that fills a row.
 * row() appends exactly one cell per column to `cells`; conds(), when set,
 * returns the row's conditions (new reference) or NULL for none. */
typedef struct table_printer {
    const char *group;
    const char *resource;
    const table_col *cols; /* terminated by {NULL} */
    void (*row)(const json_t *obj, int64_t now, json_t *cells);
    json_t *(*conds)(const json_t *obj);
} table_printer;

/* The printer for group/resource, or NULL (the caller falls back to the
 * default Name / Created At table). */
const table_printer *table_printer_find(const char *group, const char *resource);

/* Shared column descriptions (metav1.ObjectMeta swagger docs). */
#define TABLE_DESC_NAME                                                                            \
    "Name must be unique within a namespace. Is required when creating resources, although "       \
    "some resources may allow a client to request the generation of an appropriate name "          \
    "automatically. Name is primarily intended for creation idempotence and configuration "        \
    "definition. Cannot be updated. More info: "                                                   \
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
#define TABLE_DESC_AGE                                                                             \
    "CreationTimestamp is a timestamp representing the server time when this object was "          \
    "created. It is not guaranteed to be set in happens-before order across separate "             \
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "     \
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "                      \
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"                            \
    "api-conventions.md#metadata"

/* upstream translateTimestampSince: "<unknown>" for an absent or zero time,
 * else HumanDuration(now - t). Writes into buf (>= 32 bytes) and returns it. */
const char *table_since(const json_t *ts, int64_t now, char *buf, size_t n);

/* A growable string with a ceiling (TBUF_MAX); past it, appends are dropped. */
#define TBUF_MAX (1u << 20)
typedef struct tbuf {
    char *p;
    size_t len, cap;
} tbuf;
void tbuf_puts(tbuf *b, const char *s);
void tbuf_printf(tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The text so far ("" if nothing), valid until the next append or free. */
const char *tbuf_str(const tbuf *b);
void tbuf_free(tbuf *b);

#endif
