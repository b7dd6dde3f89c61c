/* protobuf.c - Kubernetes protobuf bodies to JSON (see protobuf.h).
 *
 * Three parts: the schema tables (data), a wire-format reader (varint,
 * fixed32/64, length-delimited; groups are refused), and a table-driven
 * decoder that writes jansson values.
 *
 * How the JSON follows from the wire. Upstream's Go marshaller writes every
 * value-typed field (string, int, bool, struct) even when it is zero, and a
 * pointer field only when it is non-nil. The JSON encoding then drops zero
 * values of `omitempty` fields but never a struct. So the decoder:
 *   - drops a zero scalar unless the field is marked SCH_KEEP (a pointer field,
 *     or a field without omitempty such as ServicePort.port);
 *   - always writes a nested message that is present ("strategy": {});
 *   - writes a present but empty metav1.Time as null, as Go writes a zero Time;
 *   - omits empty lists and maps (they are all omitempty in the covered kinds).
 *
 * Field numbers and JSON names are wire facts taken from upstream's
 * generated.proto files (k8s.io/api core/v1, apps/v1, ...; apimachinery
 * meta/v1, runtime, resource, intstr); the tables are our own. A field we do
 * not list is skipped when its payload is zero (how a newer client sends a new
 * value field it left unset) and is an error otherwise, so data is never lost
 * silently.
 */
#include "api/protobuf.h"

#include "api/schema.h"
#include "core/rfc3339.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PB_MAX_DEPTH 64         /* message nesting; upstream objects need < 20 */
#define PB_MAX_NODES (1u << 20) /* JSON values produced per body */
#define PB_NAME_MAX 256         /* apiVersion / kind */

/* The scheme name upstream prints in "no kind ... is registered" errors. */
#define PB_SCHEME "pkg/api/legacyscheme/scheme.go:30"

/* ------------------------------------------------------------------------ */
/* Wire reader                                                               */

typedef struct {
    const uint8_t *p, *end;
} rd;

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2, WT_FIXED32 = 5 };

typedef struct {
    uint32_t num;
    int wt;
    uint64_t u;          /* WT_VARINT, WT_FIXED32, WT_FIXED64 */
    const uint8_t *data; /* WT_LEN */
    size_t len;
} wfield;

/* At most 10 bytes; the 10th may only carry the top bit. */
static const char *rd_varint(rd *r, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) return "truncated varint";
        uint8_t b = *r->p++;
        if (shift == 63 && b > 1) return "varint overflows 64 bits";
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return NULL;
        }
    }
    return "varint overflows 64 bits";
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Next field, or an error text. Groups (wire types 3, 4) are refused:
 * upstream's messages never use them. */
static const char *rd_field(rd *r, wfield *f)
{
    uint64_t key;
    const char *err = rd_varint(r, &key);
    if (err) return err;
    if (key >> 3 == 0 || key >> 3 > 0x1fffffff) return "invalid field number";
    f->num = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    size_t left = (size_t)(r->end - r->p);
    switch (f->wt) {
    case WT_VARINT:
        return rd_varint(r, &f->u);
    case WT_FIXED64:
    case WT_FIXED32: {
        int n = f->wt == WT_FIXED64 ? 8 : 4;
        if (left < (size_t)n) return "truncated fixed-width field";
        f->u = le(r->p, n);
        r->p += n;
        return NULL;
    }
    case WT_LEN: {
        uint64_t len;
        if ((err = rd_varint(r, &len))) return err;
        if (len > (uint64_t)(r->end - r->p)) return "truncated length-delimited field";
        f->data = r->p;
        f->len = (size_t)len;
        r->p += len;
        return NULL;
    }
    default:
        return "unsupported wire type";
    }
}

/* Whether an unlisted field carries nothing (a zero value field a newer
 * client always writes); such fields are skipped, others refused. */
static bool wire_is_zero(const wfield *f)
{
    return f->wt == WT_LEN ? f->len == 0 : f->u == 0;
}

/* ------------------------------------------------------------------------ */
/* Value conversions                                                         */

/* Length of the valid UTF-8 sequence at s, or 0 (Go's utf8 rules). */
static size_t utf8_seq(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, cp = c & 0x1f;
    else if ((c & 0xF0) == 0xE0)
        len = 3, cp = c & 0x0f;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, cp = c & 0x07;
    else
        return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
    if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
    return len;
}

/* A copy of s as valid UTF-8: each invalid byte becomes U+FFFD, as Go's
 * encoding/json writes it. Caller frees; *outn gets the length. */
static char *utf8_fix(const uint8_t *s, size_t n, size_t *outn)
{
    if (n > (SIZE_MAX - 1) / 3) return NULL;
    char *out = malloc(n * 3 + 1);
    size_t o = 0;
    if (!out) return NULL;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(s + i, n - i);
        if (k) {
            memcpy(out + o, s + i, k);
            o += k;
            i += k;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    out[o] = '\0';
    *outn = o;
    return out;
}

static json_t *mk_string(const uint8_t *s, size_t n)
{
    json_t *v = json_stringn((const char *)s, n);
    if (v) return v;
    size_t fn;
    char *fixed = utf8_fix(s, n, &fn);
    if (!fixed) return NULL;
    v = json_stringn(fixed, fn);
    free(fixed);
    return v;
}

static json_t *mk_base64(const uint8_t *s, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n > SIZE_MAX / 2) return NULL;
    size_t outn = (n + 2) / 3 * 4;
    char *out = malloc(outn + 1);
    size_t o = 0;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16;
        if (i + 1 < n) v |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < n) v |= s[i + 2];
        out[o++] = tab[v >> 18 & 63];
        out[o++] = tab[v >> 12 & 63];
        out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    json_t *r = json_stringn(out, o);
    free(out);
    return r;
}

#define GO_ZERO_TIME (-62135596800LL) /* 0001-01-01T00:00:00Z */
#define GO_MAX_TIME 253402300799LL    /* 9999-12-31T23:59:59Z */

/* RFC 3339 in UTC, as metav1.Time (seconds) or metav1.MicroTime (6 digits)
 * marshal to JSON. NULL text means Go's zero time (JSON null); an error
 * text for a time JSON cannot hold. */
static const char *fmt_time(int64_t secs, int64_t nanos, bool micro, char *buf, size_t n,
                            bool *is_null)
{
    *is_null = false;
    if (!micro) nanos = 0; /* metav1.Time drops nanos when decoding protobuf */
    if (nanos < 0 || nanos > 999999999) return "nanos out of range";
    if (secs < GO_ZERO_TIME || secs > GO_MAX_TIME) return "time out of range";
    if (secs == GO_ZERO_TIME && nanos == 0) {
        *is_null = true;
        return NULL;
    }
    int64_t days = secs / 86400, rem = secs % 86400;
    if (rem < 0) rem += 86400, days--;
    int64_t y;
    unsigned mo, d;
    rfc3339_civil_from_days(days, &y, &mo, &d);
    int k = snprintf(buf, n, "%04lld-%02u-%02uT%02d:%02d:%02d", (long long)y, mo, d,
                     (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60));
    if (micro) k += snprintf(buf + k, n - (size_t)k, ".%06d", (int)(nanos / 1000));
    snprintf(buf + k, n - (size_t)k, "Z");
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Decoder                                                                   */

typedef struct {
    api_err *e;
    int depth;
    size_t nodes;
} pb_ctx;

static int pb_fail(pb_ctx *c, const sch_msg *m, const sch_field *f, uint32_t num, const char *fmt,
                   ...) __attribute__((format(printf, 5, 6)));
static int pb_fail(pb_ctx *c, const sch_msg *m, const sch_field *f, uint32_t num, const char *fmt,
                   ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (f && f->json)
        return api_err_set(c->e, API_BAD_REQUEST, "failed to decode protobuf body: %s (%s.%s)",
                           what, m->name, f->json);
    if (m)
        return api_err_set(c->e, API_BAD_REQUEST,
                           "failed to decode protobuf body: %s (%s field %u)", what, m->name, num);
    return api_err_set(c->e, API_BAD_REQUEST, "failed to decode protobuf body: %s", what);
}

/* Every JSON value made goes through here: counts it against the budget. */
static json_t *pb_node(pb_ctx *c, json_t *v)
{
    if (!v) return NULL;
    if (++c->nodes > PB_MAX_NODES) {
        json_decref(v);
        return NULL;
    }
    return v;
}

static int dec_msg(pb_ctx *c, const sch_msg *m, const uint8_t *p, size_t n, json_t *obj);

static const sch_field *find_field(const sch_msg *m, uint32_t num)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->fields[i].num == num) return &m->fields[i];
    return NULL;
}

/* Read field 1 of a one-string message ({1 string}, e.g. Quantity). */
static const char *read_only_string(const uint8_t *p, size_t n, const uint8_t **s, size_t *sn)
{
    rd r = {p, p + n};
    *s = NULL;
    *sn = 0;
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (err) return err;
        if (w.num != 1) continue;
        if (w.wt != WT_LEN) return "wrong wire type";
        *s = w.data;
        *sn = w.len;
    }
    return NULL;
}

static json_t *dec_quantity(pb_ctx *c, const sch_msg *m, const sch_field *f, const uint8_t *p,
                            size_t n)
{
    const uint8_t *s;
    size_t sn;
    const char *err = read_only_string(p, n, &s, &sn);
    if (err) return pb_fail(c, m, f, 0, "%s in Quantity", err), NULL;
    /* Go's zero Quantity marshals as "0"; a present string is already canonical. */
    return s ? mk_string(s, sn) : json_string("0");
}

static json_t *dec_intorstr(pb_ctx *c, const sch_msg *m, const sch_field *f, const uint8_t *p,
                            size_t n)
{
    rd r = {p, p + n};
    uint64_t type = 0, ival = 0;
    const uint8_t *s = (const uint8_t *)"";
    size_t sn = 0;
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (err) return pb_fail(c, m, f, 0, "%s in IntOrString", err), NULL;
        if ((w.num == 1 || w.num == 2) && w.wt != WT_VARINT) break;
        if (w.num == 3 && w.wt != WT_LEN) break;
        if (w.num == 1) type = w.u;
        if (w.num == 2) ival = w.u;
        if (w.num == 3) s = w.data, sn = w.len;
    }
    if (r.p < r.end) return pb_fail(c, m, f, 0, "wrong wire type in IntOrString"), NULL;
    if (type == 1) return mk_string(s, sn);
    return json_integer((int32_t)(uint32_t)ival);
}

static json_t *dec_time(pb_ctx *c, const sch_msg *m, const sch_field *f, const uint8_t *p, size_t n)
{
    rd r = {p, p + n};
    uint64_t secs = 0, nanos = 0;
    if (n == 0) return json_null(); /* Go's zero Time */
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (err) return pb_fail(c, m, f, 0, "%s in Time", err), NULL;
        if ((w.num == 1 || w.num == 2) && w.wt != WT_VARINT)
            return pb_fail(c, m, f, 0, "wrong wire type in Time"), NULL;
        if (w.num == 1) secs = w.u;
        if (w.num == 2) nanos = w.u;
    }
    char buf[64];
    bool is_null;
    const char *err = fmt_time((int64_t)secs, (int32_t)(uint32_t)nanos, f->type == SCH_MICROTIME,
                               buf, sizeof buf, &is_null);
    if (err) return pb_fail(c, m, f, 0, "%s", err), NULL;
    return is_null ? json_null() : json_string(buf);
}

/* RawExtension / FieldsV1: {1 raw bytes}, the bytes being JSON. (A nested
 * protobuf object in a RawExtension is refused: no covered kind has one.) */
static json_t *dec_raw(pb_ctx *c, const sch_msg *m, const sch_field *f, const uint8_t *p, size_t n)
{
    const uint8_t *s;
    size_t sn;
    const char *err = read_only_string(p, n, &s, &sn);
    if (err) return pb_fail(c, m, f, 0, "%s in raw field", err), NULL;
    if (!s || sn == 0) return json_null();
    json_error_t je;
    json_t *v = json_loadb((const char *)s, sn, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!v) return pb_fail(c, m, f, 0, "raw bytes are not JSON: %s", je.text), NULL;
    c->nodes += sn / 2; /* a rough charge for the values parsed */
    if (c->nodes > PB_MAX_NODES) {
        json_decref(v);
        return pb_fail(c, m, f, 0, "too many values"), NULL;
    }
    return v;
}

/* One map entry {1 key, 2 value} into the object `map`. */
static int dec_map_entry(pb_ctx *c, const sch_msg *m, const sch_field *f, const uint8_t *p,
                         size_t n, json_t *map)
{
    rd r = {p, p + n};
    const uint8_t *k = (const uint8_t *)"", *v = NULL;
    size_t kn = 0, vn = 0;
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (err) return pb_fail(c, m, f, 0, "%s in map entry", err);
        if (w.num != 1 && w.num != 2) continue;
        if (w.wt != WT_LEN) return pb_fail(c, m, f, 0, "wrong wire type in map entry");
        if (w.num == 1)
            k = w.data, kn = w.len;
        else
            v = w.data, vn = w.len;
    }
    /* Stored objects are JSON text, which refuses \u0000 as a JSON body
     * does (and jansson cuts keys at a NUL): no NUL in keys or strings. */
    if (memchr(k, 0, kn) || (f->type == SCH_MAP_SS && v && memchr(v, 0, vn)))
        return pb_fail(c, m, f, 0, "map entry contains a NUL byte");
    json_t *val;
    if (f->type == SCH_MAP_SQ)
        val = dec_quantity(c, m, f, v ? v : (const uint8_t *)"", vn);
    else if (f->type == SCH_MAP_SB)
        val = mk_base64(v ? v : (const uint8_t *)"", vn);
    else
        val = mk_string(v ? v : (const uint8_t *)"", vn);
    if (!(val = pb_node(c, val))) return c->e->code ? -1 : pb_fail(c, m, f, 0, "too many values");
    size_t keyn;
    char *key = utf8_fix(k, kn, &keyn);
    if (!key) {
        json_decref(val);
        return pb_fail(c, m, f, 0, "out of memory");
    }
    int rc = json_object_setn_new(map, key, keyn, val);
    free(key);
    return rc ? pb_fail(c, m, f, 0, "bad map key") : 0;
}

/* A length-delimited value of field f: a new JSON value, or NULL on error. */
static json_t *dec_len_value(pb_ctx *c, const sch_msg *m, const sch_field *f, const wfield *w)
{
    switch (f->type) {
    case SCH_STRING:
        if (memchr(w->data, 0, w->len)) { /* (as a JSON body: \u0000 is refused) */
            pb_fail(c, m, f, 0, "string contains a NUL byte");
            return NULL;
        }
        return mk_string(w->data, w->len);
    case SCH_BYTES:
        return mk_base64(w->data, w->len);
    case SCH_QUANTITY:
        return dec_quantity(c, m, f, w->data, w->len);
    case SCH_INTORSTR:
        return dec_intorstr(c, m, f, w->data, w->len);
    case SCH_TIME:
    case SCH_MICROTIME:
        return dec_time(c, m, f, w->data, w->len);
    case SCH_RAWJSON:
        return dec_raw(c, m, f, w->data, w->len);
    case SCH_MSG: {
        json_t *o = json_object();
        if (o && dec_msg(c, f->msg, w->data, w->len, o)) {
            json_decref(o);
            return NULL;
        }
        return o;
    }
    default:
        return NULL;
    }
}

static bool is_scalar(int type)
{
    return type == SCH_BOOL || type == SCH_INT32 || type == SCH_INT64;
}

static json_t *scalar_value(const sch_field *f, uint64_t u)
{
    if (f->type == SCH_BOOL) return json_boolean(u != 0);
    if (f->type == SCH_INT32) return json_integer((int32_t)(uint32_t)u);
    return json_integer((json_int_t)(int64_t)u);
}

/* Whether v is the zero value an omitempty field drops. */
static bool is_zero(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return json_string_length(v) == 0;
    case JSON_INTEGER:
        return json_integer_value(v) == 0;
    case JSON_FALSE:
        return true;
    default:
        return false;
    }
}

/* Store one decoded value: appended for a repeated field, else set (last
 * one wins, as in protobuf), a zero omitempty scalar removing the key. */
static int put(pb_ctx *c, const sch_msg *m, const sch_field *f, json_t *obj, json_t *v)
{
    if (!(v = pb_node(c, v)))
        return c->e->code ? -1 : pb_fail(c, m, f, 0, "too many values or out of memory");
    if (f->flags & SCH_REP) {
        json_t *arr = json_object_get(obj, f->json);
        if (!json_is_array(arr)) {
            arr = json_array();
            if (!arr || json_object_set_new(obj, f->json, arr)) {
                json_decref(v);
                return pb_fail(c, m, f, 0, "out of memory");
            }
        }
        return json_array_append_new(arr, v) ? pb_fail(c, m, f, 0, "out of memory") : 0;
    }
    if (f->type != SCH_MSG && !(f->flags & SCH_KEEP) && is_zero(v)) {
        json_decref(v);
        json_object_del(obj, f->json);
        return 0;
    }
    return json_object_set_new(obj, f->json, v) ? pb_fail(c, m, f, 0, "out of memory") : 0;
}

/* Packed repeated scalars: a run of varints in one length-delimited field. */
static int dec_packed(pb_ctx *c, const sch_msg *m, const sch_field *f, const wfield *w, json_t *obj)
{
    rd r = {w->data, w->data + w->len};
    while (r.p < r.end) {
        uint64_t u;
        const char *err = rd_varint(&r, &u);
        if (err) return pb_fail(c, m, f, 0, "%s in packed field", err);
        if (put(c, m, f, obj, scalar_value(f, u))) return -1;
    }
    return 0;
}

static int dec_field(pb_ctx *c, const sch_msg *m, const sch_field *f, const wfield *w, json_t *obj)
{
    if (is_scalar(f->type)) {
        if (w->wt == WT_LEN && (f->flags & SCH_REP)) return dec_packed(c, m, f, w, obj);
        if (w->wt != WT_VARINT) return pb_fail(c, m, f, 0, "wrong wire type %d", w->wt);
        return put(c, m, f, obj, scalar_value(f, w->u));
    }
    if (w->wt != WT_LEN) return pb_fail(c, m, f, 0, "wrong wire type %d", w->wt);
    switch (f->type) {
    case SCH_INLINE:
        return dec_msg(c, f->msg, w->data, w->len, obj);
    case SCH_MAP_SS:
    case SCH_MAP_SB:
    case SCH_MAP_SQ: {
        json_t *map = json_object_get(obj, f->json);
        if (!json_is_object(map)) {
            map = pb_node(c, json_object());
            if (!map || json_object_set_new(obj, f->json, map))
                return pb_fail(c, m, f, 0, "too many values or out of memory");
        }
        return dec_map_entry(c, m, f, w->data, w->len, map);
    }
    case SCH_MAP_SM: /* custom kinds only, refused above: never reached */
        return pb_fail(c, m, f, 0, "map of messages not supported");
    case SCH_MSG: {
        /* A repeated occurrence of a singular message merges into it. */
        json_t *prev = json_object_get(obj, f->json);
        if (!(f->flags & SCH_REP) && json_is_object(prev))
            return dec_msg(c, f->msg, w->data, w->len, prev);
        break;
    }
    default:
        break;
    }
    json_t *v = dec_len_value(c, m, f, w);
    if (!v) return c->e->code ? -1 : pb_fail(c, m, f, 0, "out of memory");
    return put(c, m, f, obj, v);
}

static int dec_msg(pb_ctx *c, const sch_msg *m, const uint8_t *p, size_t n, json_t *obj)
{
    if (++c->depth > PB_MAX_DEPTH) return pb_fail(c, m, NULL, 0, "nesting too deep");
    rd r = {p, p + n};
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (err) return pb_fail(c, m, NULL, 0, "%s", err);
        const sch_field *f = find_field(m, w.num);
        if (!f) {
            if (wire_is_zero(&w)) continue;
            return pb_fail(c, m, NULL, w.num, "field not supported by this server");
        }
        if (dec_field(c, m, f, &w, obj)) return -1;
    }
    c->depth--;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */

bool pb_has_magic(const void *body, size_t len)
{
    return body && len >= 4 && memcmp(body, "k8s\0", 4) == 0;
}

/* The message of a kind that has a protobuf encoding: Kubernetes' own types
 * (package io.k8s.*). Custom resources (Capsule's kinds) have none, as
 * upstream serves CRDs in JSON only: their scheme does not know them. */
static const sch_msg *pb_kind_msg(const char *api_version, const char *kind)
{
    const sch_msg *m = sch_kind(api_version, kind);
    return m && strncmp(m->pkg, "io.k8s.", 7) == 0 ? m : NULL;
}

bool pb_kind_known(const char *api_version, const char *kind)
{
    return api_version && kind && pb_kind_msg(api_version, kind) != NULL;
}

static json_t *decode_object(const char *api_version, const char *kind, const uint8_t *msg,
                             size_t len, api_err *e)
{
    const sch_msg *m = pb_kind_msg(api_version, kind);
    if (!m) {
        api_err_set(e, API_BAD_REQUEST,
                    "no kind \"%s\" is registered for version \"%s\" in scheme \"%s\"", kind,
                    api_version, PB_SCHEME);
        return NULL;
    }
    pb_ctx c = {e, 0, 0};
    json_t *obj = json_object();
    if (!obj || json_object_set_new(obj, "kind", mk_string((const uint8_t *)kind, strlen(kind))) ||
        json_object_set_new(obj, "apiVersion",
                            mk_string((const uint8_t *)api_version, strlen(api_version)))) {
        json_decref(obj);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    if (dec_msg(&c, m, msg, len, obj)) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

json_t *pb_decode_object(const char *api_version, const char *kind, const void *msg, size_t len,
                         api_err *e)
{
    return decode_object(api_version ? api_version : "", kind ? kind : "", msg, len, e);
}

/* Copy a wire string into buf as a C string; false if too long or has NUL. */
static bool copy_name(const wfield *w, char *buf)
{
    if (w->len >= PB_NAME_MAX || memchr(w->data, 0, w->len)) return false;
    memcpy(buf, w->data, w->len);
    buf[w->len] = '\0';
    return true;
}

static const char *read_type_meta(const wfield *tm, char *api_version, char *kind)
{
    rd r = {tm->data, tm->data + tm->len};
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (err) return err;
        if (w.num != 1 && w.num != 2) continue;
        if (w.wt != WT_LEN) return "wrong wire type in typeMeta";
        if (!copy_name(&w, w.num == 1 ? api_version : kind)) return "invalid apiVersion or kind";
    }
    return NULL;
}

json_t *pb_decode(const void *body, size_t len, api_err *e)
{
    static const char pfx[] = "failed to decode protobuf body";
    if (!pb_has_magic(body, len)) {
        api_err_set(e, API_BAD_REQUEST, "%s: missing the \"k8s\\x00\" prefix", pfx);
        return NULL;
    }
    const uint8_t *p = (const uint8_t *)body + 4;
    rd r = {p, p + (len - 4)};
    char api_version[PB_NAME_MAX] = "", kind[PB_NAME_MAX] = "";
    const uint8_t *raw = (const uint8_t *)"";
    size_t raw_len = 0;
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (!err && w.num >= 1 && w.num <= 4 && w.wt != WT_LEN) err = "wrong wire type";
        if (!err && w.num == 1) err = read_type_meta(&w, api_version, kind);
        if (!err && w.num == 2) raw = w.data, raw_len = w.len;
        if (!err && w.num == 3 && w.len) err = "content encodings are not supported";
        if (!err && w.num == 4 && w.len &&
            (w.len != strlen(PB_CONTENT_TYPE) || memcmp(w.data, PB_CONTENT_TYPE, w.len)))
            err = "unsupported content type";
        if (err) {
            api_err_set(e, API_BAD_REQUEST, "%s: %s (Unknown)", pfx, err);
            return NULL;
        }
    }
    if (!kind[0]) {
        api_err_set(e, API_BAD_REQUEST, "Object 'Kind' is missing in protobuf body");
        return NULL;
    }
    return decode_object(api_version, kind, raw, raw_len, e);
}
