/* yaml_emit.c - JSON values as a YAML stream (see yaml_emit.h). */
#include "api/yaml_emit.h"

#include "api/yaml.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 100
/* A ceiling on the text, as on every growable buffer: manifests are a few
 * hundred KiB. */
#define MAX_TEXT (64u << 20)

typedef struct outbuf {
    char *p;
    size_t len, cap;
} outbuf;

static int write_out(void *data, unsigned char *buf, size_t size)
{
    outbuf *o = data;
    if (o->len + size + 1 > MAX_TEXT) return 0;
    if (o->len + size + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + size + 1)
            cap *= 2;
        char *p = realloc(o->p, cap);
        if (!p) return 0;
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->len, buf, size);
    o->len += size;
    o->p[o->len] = '\0';
    return 1;
}

/* Whether `s` written plain reads back as the string itself. */
static bool plain_reads_back(const char *s, size_t n)
{
    if (n == 0) return false;
    char err[128];
    json_t *v = yaml_to_json(s, n, err, sizeof err);
    bool same =
        json_is_string(v) && json_string_length(v) == n && !memcmp(json_string_value(v), s, n);
    json_decref(v);
    return same;
}

static int scalar(yaml_emitter_t *e, const char *text, size_t n, bool plain,
                  yaml_scalar_style_t style)
{
    yaml_event_t ev;
    /* Not plain-implicit: the emitter quotes it (the tag stays implicit). */
    if (!yaml_scalar_event_initialize(&ev, NULL, (yaml_char_t *)YAML_STR_TAG, (yaml_char_t *)text,
                                      (int)n, plain, 1, style))
        return -1;
    return yaml_emitter_emit(e, &ev) ? 0 : -1;
}

static int string(yaml_emitter_t *e, const json_t *v)
{
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (memchr(s, '\n', n)) return scalar(e, s, n, false, YAML_LITERAL_SCALAR_STYLE);
    return scalar(e, s, n, plain_reads_back(s, n), YAML_ANY_SCALAR_STYLE);
}

static int value(yaml_emitter_t *e, const json_t *v, int depth);

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int mapping(yaml_emitter_t *e, const json_t *v, int depth)
{
    yaml_event_t ev;
    size_t n = json_object_size(v), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys) return -1;
    const char *key;
    const json_t *member;
    json_object_foreach((json_t *)v, key, member) keys[i++] = key;
    qsort(keys, n, sizeof *keys, cmp_keys);
    int rc = -1;
    if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
        !yaml_emitter_emit(e, &ev))
        goto done;
    for (i = 0; i < n; i++) {
        json_t *k = json_string(keys[i]);
        int krc = k ? string(e, k) : -1;
        json_decref(k);
        if (krc != 0 || value(e, json_object_get(v, keys[i]), depth + 1) != 0) goto done;
    }
    rc = yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev) ? 0 : -1;
done:
    free(keys);
    return rc;
}

static int sequence(yaml_emitter_t *e, const json_t *v, int depth)
{
    yaml_event_t ev;
    if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
        !yaml_emitter_emit(e, &ev))
        return -1;
    size_t i;
    const json_t *item;
    json_array_foreach(v, i, item)
    {
        if (value(e, item, depth + 1) != 0) return -1;
    }
    return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev) ? 0 : -1;
}

static int value(yaml_emitter_t *e, const json_t *v, int depth)
{
    char num[64];
    if (depth > MAX_DEPTH) return -1;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return mapping(e, v, depth);
    case JSON_ARRAY:
        return sequence(e, v, depth);
    case JSON_STRING:
        return string(e, v);
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return scalar(e, num, strlen(num), true, YAML_PLAIN_SCALAR_STYLE);
    case JSON_REAL:
        /* %.17g keeps every bit; a whole number gets ".0" so it stays a float. */
        snprintf(num, sizeof num, "%.17g", json_real_value(v));
        if (!strpbrk(num, ".eEn")) strcat(num, ".0");
        return scalar(e, num, strlen(num), true, YAML_PLAIN_SCALAR_STYLE);
    case JSON_TRUE:
        return scalar(e, "true", 4, true, YAML_PLAIN_SCALAR_STYLE);
    case JSON_FALSE:
        return scalar(e, "false", 5, true, YAML_PLAIN_SCALAR_STYLE);
    default:
        return scalar(e, "null", 4, true, YAML_PLAIN_SCALAR_STYLE);
    }
}

static int document(yaml_emitter_t *e, const json_t *doc)
{
    yaml_event_t ev;
    if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0) ||
        !yaml_emitter_emit(e, &ev) || value(e, doc, 0) != 0)
        return -1;
    return yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(e, &ev) ? 0 : -1;
}

char *yaml_emit_stream(const json_t *docs, size_t *len)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    outbuf out = {0};
    if (!json_is_array(docs) || !yaml_emitter_initialize(&e)) return NULL;
    yaml_emitter_set_output(&e, write_out, &out);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1); /* no folding of long lines: diffs stay line by line */
    yaml_emitter_set_indent(&e, 2);
    int rc = -1;
    if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) || !yaml_emitter_emit(&e, &ev))
        goto done;
    size_t i;
    const json_t *doc;
    json_array_foreach(docs, i, doc)
    {
        if (document(&e, doc) != 0) goto done;
    }
    if (!yaml_stream_end_event_initialize(&ev) || !yaml_emitter_emit(&e, &ev) ||
        !yaml_emitter_flush(&e))
        goto done;
    rc = 0;
done:
    yaml_emitter_delete(&e);
    if (rc != 0 || !out.p) {
        free(out.p);
        return NULL;
    }
    if (len) *len = out.len;
    return out.p;
}
