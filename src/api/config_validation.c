/* config_validation.c - ConfigMap and Secret validation, a Secret's
 * stringData (see config_validation.h).
 */
#include "api/config_validation.h"

#include "api/status.h"
#include "core/b64.h"
#include "core/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSG_IMMUTABLE "field is immutable when `immutable` is set"
#define REDACTED "<secret contents redacted>"

/* Secret types (core.SecretType*) and the keys they ask for. */
#define TYPE_SA_TOKEN "kubernetes.io/service-account-token"
#define TYPE_DOCKERCFG "kubernetes.io/dockercfg"
#define TYPE_DOCKERCONFIGJSON "kubernetes.io/dockerconfigjson"
#define TYPE_BASIC_AUTH "kubernetes.io/basic-auth"
#define TYPE_SSH_AUTH "kubernetes.io/ssh-auth"
#define TYPE_TLS "kubernetes.io/tls"
#define SA_NAME_ANNOTATION "kubernetes.io/service-account.name"

/* ---- helpers ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of a JSON object, sorted (the caller frees the array, not the
 * keys, which the object owns). NULL when there are none or no memory. */
static const char **sorted_keys(const json_t *o, size_t *n)
{
    *n = json_is_object(o) ? json_object_size(o) : 0;
    if (!*n) return NULL;
    const char **keys = malloc(*n * sizeof *keys);
    if (!keys) {
        *n = 0;
        return NULL;
    }
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) keys[i++] = k;
    qsort(keys, *n, sizeof *keys, cmp_str);
    return keys;
}

/* "data[key]", as field.Path.Key prints it. */
static void key_path(const char *field, const char *key, char *buf, size_t n)
{
    snprintf(buf, n, "%s[%s]", field, key);
}

/* IsConfigMapKey's messages, one Invalid cause each, at field[key]. */
static void check_key(const char *field, const char *key, json_t *causes)
{
    name_msgs m = {0};
    char path[1024];
    if (!name_config_key(key, &m)) return;
    key_path(field, key, path, sizeof path);
    for (int i = 0; i < m.n; i++)
        ferr_add_str(causes, FERR_INVALID, path, key, m.msg[i]);
}

/* The bytes a value stands for: a base64 string's decoded length, a plain
 * string's length (0 for anything else: the type checks refuse it). */
static size_t value_bytes(const json_t *v, bool base64)
{
    if (!json_is_string(v)) return 0;
    size_t len = json_string_length(v);
    if (!base64) return len;
    long n = b64_decoded_len(json_string_value(v), len);
    return n > 0 ? (size_t)n : 0;
}

/* Whether two data maps are the same: absent, null and {} are one (upstream
 * compares decoded maps, and storage keeps no empty map). */
static bool same_map(const json_t *a, const json_t *b)
{
    bool ea = !json_is_object(a) || json_object_size(a) == 0;
    bool eb = !json_is_object(b) || json_object_size(b) == 0;
    if (ea || eb) return ea && eb;
    return json_equal((json_t *)a, (json_t *)b);
}

static bool is_true(const json_t *o, const char *key)
{
    return json_is_true(json_object_get(o, key));
}

/* `immutable: true` on the stored object: immutable stays true and the
 * maps named in `fields` (NULL-terminated) may not change. */
static void immutable_update(const json_t *obj, const json_t *old, const char *const *fields,
                             json_t *causes)
{
    if (!is_true(old, "immutable")) return;
    if (!is_true(obj, "immutable"))
        ferr_add(causes, FERR_FORBIDDEN, "immutable", NULL, MSG_IMMUTABLE);
    for (; *fields; fields++)
        if (!same_map(json_object_get(obj, *fields), json_object_get(old, *fields)))
            ferr_add(causes, FERR_FORBIDDEN, *fields, NULL, MSG_IMMUTABLE);
}

/* ---- ConfigMap ---- */

void configmap_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    static const char *const frozen[] = {"data", "binaryData", NULL};
    if (old) immutable_update(obj, old, frozen, causes);
    const json_t *data = json_object_get(obj, "data");
    const json_t *bin = json_object_get(obj, "binaryData");
    size_t total = 0, n;
    char path[1024];
    const char **keys = sorted_keys(data, &n);
    for (size_t i = 0; i < n; i++) {
        check_key("data", keys[i], causes);
        if (json_is_object(bin) && json_object_get(bin, keys[i])) {
            key_path("data", keys[i], path, sizeof path);
            ferr_add_str(causes, FERR_INVALID, path, keys[i],
                         "duplicate of key present in binaryData");
        }
        total += value_bytes(json_object_get(data, keys[i]), false);
    }
    free(keys);
    keys = sorted_keys(bin, &n);
    for (size_t i = 0; i < n; i++) {
        check_key("binaryData", keys[i], causes);
        total += value_bytes(json_object_get(bin, keys[i]), true);
    }
    free(keys);
    /* field.NewPath(""): the error is the whole object's, printed "[]" */
    if (total > CONFIG_MAX_BYTES)
        ferr_addf(causes, FERR_TOO_LONG, "[]", NULL, "must have at most %d bytes",
                  CONFIG_MAX_BYTES);
}

/* ---- Secret ---- */

/* json.Unmarshal(value, &map[string]interface{}{})'s verdict on a decoded
 * docker config, in Go's words where they are known: NULL when it is a JSON
 * object (or null). */
static const char *docker_config_error(const unsigned char *b, size_t n, char *buf, size_t len)
{
    json_error_t je;
    json_t *v = json_loadb((const char *)b, n, JSON_DECODE_ANY, &je);
    if (v) {
        const char *what = json_is_array(v)     ? "array"
                           : json_is_string(v)  ? "string"
                           : json_is_number(v)  ? "number"
                           : json_is_boolean(v) ? "bool"
                                                : NULL; /* object or null */
        json_decref(v);
        if (!what) return NULL;
        snprintf(buf, len,
                 "json: cannot unmarshal %s into Go value of type map[string]interface {}", what);
        return buf;
    }
    /* Go's wording for the common cases; the character jansson stopped at */
    size_t at = je.position > 0 ? (size_t)je.position - 1 : 0;
    const char *ctx = strstr(je.text, "end of file expected") ? "after top-level value"
                                                              : "looking for beginning of value";
    size_t tl = strlen(je.text), eof = strlen("near end of file");
    if (n == 0 || at >= n || (tl >= eof && !strcmp(je.text + tl - eof, "near end of file")))
        snprintf(buf, len, "unexpected end of JSON input");
    else if (b[at] >= 0x20 && b[at] < 0x7f)
        snprintf(buf, len, "invalid character '%c' %s", b[at], ctx);
    else
        snprintf(buf, len, "invalid character %s", ctx);
    return buf;
}

/* A docker config type: data[key] present, holding a JSON object. */
static void docker_config(const json_t *data, const char *key, json_t *causes)
{
    char path[256], why[160];
    key_path("data", key, path, sizeof path);
    const json_t *v = json_object_get(data, key);
    if (!json_is_object(data) || !v) {
        ferr_add(causes, FERR_REQUIRED, path, NULL, NULL);
        return;
    }
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    size_t len = json_is_string(v) ? json_string_length(v) : 0;
    long n = b64_decoded_len(s, len);
    unsigned char *raw = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!raw) return; /* not base64: the type checks refuse it */
    n = b64_decode(s, len, raw);
    const char *err = n >= 0 ? docker_config_error(raw, (size_t)n, why, sizeof why) : NULL;
    if (err) ferr_add_str(causes, FERR_INVALID, path, REDACTED, err);
    free(raw);
}

static void require_key(const json_t *data, const char *key, json_t *causes)
{
    char path[256];
    if (json_is_object(data) && json_object_get(data, key)) return;
    key_path("data", key, path, sizeof path);
    ferr_add(causes, FERR_REQUIRED, path, NULL, NULL);
}

/* The keys a Secret's type asks for. */
static void secret_type_rules(const json_t *obj, const json_t *data, json_t *causes)
{
    const char *type = json_string_value(json_object_get(obj, "type"));
    if (!type) return;
    if (!strcmp(type, TYPE_SA_TOKEN)) {
        const json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
        const char *sa = json_string_value(json_object_get(ann, SA_NAME_ANNOTATION));
        if (!sa || !*sa)
            ferr_add(causes, FERR_REQUIRED, "metadata.annotations[" SA_NAME_ANNOTATION "]", NULL,
                     NULL);
    } else if (!strcmp(type, TYPE_DOCKERCFG)) {
        docker_config(data, ".dockercfg", causes);
    } else if (!strcmp(type, TYPE_DOCKERCONFIGJSON)) {
        docker_config(data, ".dockerconfigjson", causes);
    } else if (!strcmp(type, TYPE_BASIC_AUTH)) {
        /* either may be empty, but one of them must be there */
        if (!json_object_get(data, "username") && !json_object_get(data, "password")) {
            ferr_add(causes, FERR_REQUIRED, "data[username]", NULL, NULL);
            ferr_add(causes, FERR_REQUIRED, "data[password]", NULL, NULL);
        }
    } else if (!strcmp(type, TYPE_SSH_AUTH)) {
        if (value_bytes(json_object_get(data, "ssh-privatekey"), true) == 0)
            ferr_add(causes, FERR_REQUIRED, "data[ssh-privatekey]", NULL, NULL);
    } else if (!strcmp(type, TYPE_TLS)) {
        require_key(data, "tls.crt", causes);
        require_key(data, "tls.key", causes);
    }
}

void secret_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    static const char *const frozen[] = {"data", NULL};
    if (old) {
        const char *ts = json_string_value(json_object_get(obj, "type"));
        const char *ots = json_string_value(json_object_get(old, "type"));
        if (strcmp(ts ? ts : "", ots ? ots : "") != 0)
            ferr_add_str(causes, FERR_INVALID, "type", ts ? ts : "", "field is immutable");
        immutable_update(obj, old, frozen, causes);
    }
    const json_t *data = json_object_get(obj, "data");
    size_t total = 0, n;
    const char **keys = sorted_keys(data, &n);
    for (size_t i = 0; i < n; i++) {
        check_key("data", keys[i], causes);
        total += value_bytes(json_object_get(data, keys[i]), true);
    }
    free(keys);
    if (total > CONFIG_MAX_BYTES)
        ferr_addf(causes, FERR_TOO_LONG, "data", NULL, "must have at most %d bytes",
                  CONFIG_MAX_BYTES);
    secret_type_rules(obj, data, causes);
}

/* ---- stringData ---- */

void secret_merge_string_data(json_t *obj)
{
    json_t *sd = json_object_get(obj, "stringData");
    if (!sd) return;
    if (!json_is_object(sd)) {
        if (json_is_null(sd)) json_object_del(obj, "stringData");
        return;
    }
    const char *k;
    json_t *v;
    json_object_foreach(sd, k, v) if (!json_is_string(v)) return;
    json_t *data = json_object_get(obj, "data");
    if (!json_is_object(data)) {
        data = json_object();
        if (!data || json_object_set_new(obj, "data", data) != 0) return;
    }
    json_object_foreach(sd, k, v)
    {
        size_t len = json_string_length(v);
        char *enc = malloc(b64_encoded_len(len) + 1);
        if (!enc) return;
        b64_encode((const unsigned char *)json_string_value(v), len, enc);
        json_object_set_new(data, k, json_string(enc));
        free(enc);
    }
    json_object_del(obj, "stringData");
}
