/* yaml.c - YAML documents as JSON values (see yaml.h). */
#include "api/yaml.h"
#include "core/jdump.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 100 /* nesting bound: a hostile file cannot exhaust the stack */

/* Aliases share one jansson value, so a few lines can name a tree of
 * billions of nodes ("billion laughs") that anything printing or walking the
 * result expands. go-yaml (sigs.k8s.io/yaml, upstream's YAML decoder) counts
 * every node it decodes, those of alias expansions included, and refuses a
 * document whose expansions are too large a share of it; so does this. */
#define ALIAS_RATIO_LOW 400000
#define ALIAS_RATIO_HIGH 4000000
#define EXCESSIVE_ALIASING "document contains excessive aliasing"

typedef struct frame {
    json_t *node; /* object or array being filled */
    char *key;    /* objects: the key waiting for its value (owned) */
    char *anchor; /* its anchor, if any (owned) */
    size_t size;  /* nodes in its tree so far, aliases expanded */
} frame;

typedef struct ctx {
    frame stack[MAX_DEPTH];
    int depth;
    json_t *root;
    json_t *anchors; /* anchor name -> value */
    json_t *sizes;   /* anchor name -> nodes in its tree, aliases expanded */
    size_t decoded;  /* nodes decoded, as go-yaml counts them (decodeCount) */
    size_t aliased;  /* of which inside alias expansions (aliasCount) */
} ctx;

/* go-yaml's allowedAliasRatio. */
static double allowed_alias_ratio(size_t decoded)
{
    if (decoded <= ALIAS_RATIO_LOW) return 0.99;
    if (decoded >= ALIAS_RATIO_HIGH) return 0.10;
    return 0.99 - 0.89 * ((double)(decoded - ALIAS_RATIO_LOW) /
                          (double)(ALIAS_RATIO_HIGH - ALIAS_RATIO_LOW));
}

static bool is_one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list)) return true;
    return false;
}

static json_t *plain_scalar(const char *s, size_t len)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                        "True", "TRUE", "on",  "On",  "ON",  NULL};
    static const char *const falses[] = {"n",     "N",     "no",  "No",  "NO",  "false",
                                         "False", "FALSE", "off", "Off", "OFF", NULL};
    if (strlen(s) != len) return json_stringn(s, len); /* an embedded NUL: text */
    if (is_one_of(s, nulls)) return json_null();
    if (is_one_of(s, trues)) return json_true();
    if (is_one_of(s, falses)) return json_false();
    char *end;
    errno = 0;
    const char *digits_from = s + (*s == '-' || *s == '+');
    if (*digits_from && strspn(digits_from, "0123456789") == strlen(digits_from)) {
        long long v = strtoll(s, &end, 10);
        if (!errno && !*end) return json_integer(v);
    }
    static const char *const infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
    static const char *const ninfs[] = {"-.inf", "-.Inf", "-.INF", NULL};
    if (is_one_of(s, infs) || is_one_of(s, ninfs) || !strcmp(s, ".nan") || !strcmp(s, ".NaN"))
        return json_stringn(s, len); /* JSON has no such numbers */
    bool digits = false;
    for (const char *p = s; *p; p++)
        digits |= *p >= '0' && *p <= '9';
    if (digits && strspn(s, "0123456789+-.eE") == len) {
        errno = 0;
        double d = strtod(s, &end);
        if (!errno && !*end && isfinite(d)) return json_real(d);
    }
    return json_stringn(s, len);
}

static json_t *scalar(const yaml_event_t *ev)
{
    const char *v = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || (tag && !strcmp(tag, YAML_STR_TAG)))
        return json_stringn(v, len);
    return plain_scalar(v, len);
}

/* Attach a finished value of `size` nodes to its parent (or make it the
 * root). `anchor`, when set, names it. */
static int attach(ctx *c, json_t *v, size_t size, const char *anchor, char *err, size_t errlen)
{
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (anchor && (json_object_set(c->anchors, anchor, v) ||
                   json_object_set_new(c->sizes, anchor, json_integer((json_int_t)size)))) {
        json_decref(v);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (c->depth > 0) c->stack[c->depth - 1].size += size;
    if (c->depth == 0) {
        json_decref(c->root);
        c->root = v;
        return 0;
    }
    frame *f = &c->stack[c->depth - 1];
    if (json_is_array(f->node)) return json_array_append_new(f->node, v) ? -1 : 0;
    if (!f->key) { /* v is a key: keep its text */
        if (json_is_object(v) || json_is_array(v)) {
            /* go-yaml refuses these too; printing them as text would nest
             * escapes, doubling the text with each level of key in a key */
            snprintf(err, errlen, "invalid map key: a %s", json_is_object(v) ? "mapping" : "sequence");
            json_decref(v);
            return -1;
        }
        f->key = json_is_string(v) ? strdup(json_string_value(v))
                                   : jdump(v, NULL);
        json_decref(v);
        return f->key ? 0 : -1;
    }
    int rc = json_object_set_new(f->node, f->key, v);
    free(f->key);
    f->key = NULL;
    return rc ? -1 : 0;
}

static int open_node(ctx *c, json_t *node, const char *anchor, char *err, size_t errlen)
{
    char *a = anchor ? strdup(anchor) : NULL;
    if (!node || c->depth == MAX_DEPTH || (anchor && !a)) {
        json_decref(node);
        free(a);
        bool oom = !node || (anchor && !a);
        snprintf(err, errlen, oom ? "out of memory" : "nested deeper than %d levels", MAX_DEPTH);
        return -1;
    }
    if (anchor && json_object_set(c->anchors, anchor, node)) {
        json_decref(node);
        free(a);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->decoded++;
    c->stack[c->depth++] = (frame){node, NULL, a, 1};
    return 0;
}

/* An alias: its value again, counted as go-yaml counts a re-decoded node. */
static int alias(ctx *c, const char *anchor, char *err, size_t errlen)
{
    json_t *v = json_object_get(c->anchors, anchor);
    for (int i = 0; v && i < c->depth; i++)
        if (c->stack[i].node == v) v = NULL; /* inside itself: no cycles in JSON */
    if (!v) {
        snprintf(err, errlen, "unknown or recursive alias *%s", anchor);
        return -1;
    }
    json_int_t n = json_integer_value(json_object_get(c->sizes, anchor));
    size_t size = n > 0 ? (size_t)n : 1;
    c->decoded += 1 + size;
    c->aliased += size;
    if (c->aliased > 100 && c->decoded > 1000 &&
        (double)c->aliased / (double)c->decoded > allowed_alias_ratio(c->decoded)) {
        snprintf(err, errlen, EXCESSIVE_ALIASING);
        return -1;
    }
    return attach(c, json_incref(v), size, NULL, err, errlen);
}

json_t *yaml_to_json(const char *text, size_t len, char *err, size_t errlen)
{
    yaml_parser_t p;
    ctx c = {.anchors = json_object(), .sizes = json_object()};
    bool done = false, ok = true;
    if (!c.anchors || !c.sizes || !yaml_parser_initialize(&p)) {
        json_decref(c.anchors);
        json_decref(c.sizes);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (ok && !done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            snprintf(err, errlen, "line %zu column %zu: %s", p.problem_mark.line + 1,
                     p.problem_mark.column + 1, p.problem ? p.problem : "syntax error");
            ok = false;
            break;
        }
        switch (ev.type) {
        case YAML_SCALAR_EVENT:
            c.decoded++;
            ok = attach(&c, scalar(&ev), 1, (const char *)ev.data.scalar.anchor, err, errlen) == 0;
            break;
        case YAML_SEQUENCE_START_EVENT:
            ok = open_node(&c, json_array(), (const char *)ev.data.sequence_start.anchor, err,
                           errlen) == 0;
            break;
        case YAML_MAPPING_START_EVENT:
            ok = open_node(&c, json_object(), (const char *)ev.data.mapping_start.anchor, err,
                           errlen) == 0;
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: {
            frame f = c.stack[--c.depth];
            free(f.key);
            ok = attach(&c, f.node, f.size, f.anchor, err, errlen) == 0;
            free(f.anchor);
            break;
        }
        case YAML_ALIAS_EVENT:
            ok = alias(&c, (const char *)ev.data.alias.anchor, err, errlen) == 0;
            break;
        case YAML_DOCUMENT_END_EVENT: /* the first document only */
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    while (c.depth > 0) { /* after an error */
        frame f = c.stack[--c.depth];
        free(f.key);
        free(f.anchor);
        json_decref(f.node);
    }
    json_decref(c.anchors);
    json_decref(c.sizes);
    if (ok && !c.root) {
        snprintf(err, errlen, "empty document");
        ok = false;
    }
    if (!ok) {
        json_decref(c.root);
        return NULL;
    }
    return c.root;
}
