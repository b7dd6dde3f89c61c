/* fieldset.c - managed field sets (see fieldset.h). */
#include "core/fieldset.h"
#include "core/jdump.h"
#include "core/fieldset_impl.h"

#include "core/dbuf.h"
#include "core/utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ctx {
    fs_limits lim;
    size_t nodes;
    int code;
    char *err;
    size_t errlen;
} ctx;

static fs_limits norm_limits(const fs_limits *l)
{
    fs_limits r = {FS_DEFAULT_MAX_DEPTH, FS_DEFAULT_MAX_NODES, FS_DEFAULT_MAX_TEXT};
    if (l) {
        if (l->max_depth) r.max_depth = l->max_depth;
        if (l->max_nodes) r.max_nodes = l->max_nodes;
        if (l->max_text) r.max_text = l->max_text;
    }
    if (r.max_depth > 1000) r.max_depth = 1000;
    return r;
}

static int fail(ctx *c, int code, const char *fmt, ...)
{
    if (c->code) return c->code;
    c->code = code;
    if (c->err && c->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* ---- values: upstream's value.Compare ---- */

static int type_rank(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_INTEGER:
    case JSON_REAL: return 0;
    case JSON_STRING: return 1;
    case JSON_TRUE:
    case JSON_FALSE: return 2;
    case JSON_ARRAY: return 3;
    case JSON_OBJECT: return 4;
    default: return 5;
    }
}

static int cmp_num(double a, double b) { return a < b ? -1 : a > b ? 1 : 0; }

static int cmp_str(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    if (c) return c < 0 ? -1 : 1;
    return al < bl ? -1 : al > bl ? 1 : 0;
}

static int key_cmp_q(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted keys of an object (malloc'd array of borrowed strings). */
static const char **sorted_keys(const json_t *o, size_t *n)
{
    *n = json_object_size(o);
    const char **k = malloc((*n ? *n : 1) * sizeof *k);
    if (!k) return NULL;
    size_t i = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) k[i++] = key;
    qsort(k, *n, sizeof *k, key_cmp_q);
    return k;
}

int fsi_val_cmp(const json_t *a, const json_t *b)
{
    int ra = type_rank(a), rb = type_rank(b);
    if (ra != rb) return ra < rb ? -1 : 1;
    switch (ra) {
    case 0:
        if (json_is_integer(a) && json_is_integer(b)) {
            json_int_t x = json_integer_value(a), y = json_integer_value(b);
            return x < y ? -1 : x > y ? 1 : 0;
        }
        return cmp_num(json_number_value(a), json_number_value(b));
    case 1:
        return cmp_str(json_string_value(a), json_string_length(a), json_string_value(b),
                       json_string_length(b));
    case 2: return json_is_true(a) == json_is_true(b) ? 0 : json_is_true(a) ? 1 : -1;
    case 3: {
        size_t na = json_array_size(a), nb = json_array_size(b);
        for (size_t i = 0; i < na && i < nb; i++) {
            int c = fsi_val_cmp(json_array_get(a, i), json_array_get(b, i));
            if (c) return c;
        }
        return na < nb ? -1 : na > nb ? 1 : 0;
    }
    case 4: {
        size_t na, nb;
        const char **ka = sorted_keys(a, &na), **kb = sorted_keys(b, &nb);
        int c = 0;
        if (!ka || !kb) {
            c = na < nb ? -1 : na > nb ? 1 : 0;
        } else {
            for (size_t i = 0; !c && i < na && i < nb; i++) {
                c = strcmp(ka[i], kb[i]);
                c = c < 0 ? -1 : c > 0;
                if (!c) c = fsi_val_cmp(json_object_get(a, ka[i]), json_object_get(b, kb[i]));
            }
            if (!c) c = na < nb ? -1 : na > nb ? 1 : 0;
        }
        free(ka);
        free(kb);
        return c;
    }
    default: return 0;
    }
}

static int pe_rank(int kind) { return kind; }

int fsi_pe_cmp(const fs_node *a, const fs_node *b)
{
    if (a->kind != b->kind) return pe_rank(a->kind) < pe_rank(b->kind) ? -1 : 1;
    switch (a->kind) {
    case PE_FIELD: {
        int c = strcmp(a->name, b->name);
        return c < 0 ? -1 : c > 0;
    }
    case PE_KEY: {
        size_t na = json_array_size(a->val), nb = json_array_size(b->val);
        for (size_t i = 0; i < na && i < nb; i++) {
            json_t *x = json_array_get(a->val, i), *y = json_array_get(b->val, i);
            int c = strcmp(json_string_value(json_array_get(x, 0)),
                           json_string_value(json_array_get(y, 0)));
            if (c) return c < 0 ? -1 : 1;
            c = fsi_val_cmp(json_array_get(x, 1), json_array_get(y, 1));
            if (c) return c;
        }
        return na < nb ? -1 : na > nb ? 1 : 0;
    }
    case PE_VALUE: return fsi_val_cmp(a->val, b->val);
    case PE_INDEX: return a->idx < b->idx ? -1 : a->idx > b->idx;
    default: return 0;
    }
}

/* ---- nodes ---- */

static void node_clear(fs_node *n)
{
    for (size_t i = 0; i < n->nkids; i++) {
        node_clear(n->kids[i]);
        free(n->kids[i]);
    }
    free(n->kids);
    free(n->name);
    json_decref(n->val);
    n->kids = NULL;
    n->nkids = n->cap = 0;
    n->name = NULL;
    n->val = NULL;
}

void fsi_node_free(fs_node *n)
{
    if (!n) return;
    node_clear(n);
    free(n);
}

/* A new node with a's element (no children). */
fs_node *fsi_node_pe_copy(const fs_node *a)
{
    fs_node *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->kind = a->kind;
    n->idx = a->idx;
    if (a->name && !(n->name = strdup(a->name))) {
        free(n);
        return NULL;
    }
    if (a->val) n->val = json_incref(a->val); /* immutable once built */
    return n;
}

int fsi_kids_push(fs_node *p, fs_node *k)
{
    if (p->nkids == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 4;
        fs_node **nk = realloc(p->kids, nc * sizeof *nk);
        if (!nk) return -1;
        p->kids = nk;
        p->cap = nc;
    }
    p->kids[p->nkids++] = k;
    return 0;
}

fs_node *fsi_node_copy(const fs_node *a)
{
    fs_node *n = fsi_node_pe_copy(a);
    if (!n) return NULL;
    n->member = a->member;
    for (size_t i = 0; i < a->nkids; i++) {
        fs_node *k = fsi_node_copy(a->kids[i]);
        if (!k || fsi_kids_push(n, k)) {
            fsi_node_free(k);
            fsi_node_free(n);
            return NULL;
        }
    }
    return n;
}

bool fsi_node_empty(const fs_node *n) { return !n->member && n->nkids == 0; }

fs_node *fsi_find_kid(const fs_node *p, const fs_node *e)
{
    size_t lo = 0, hi = p->nkids;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = fsi_pe_cmp(p->kids[mid], e);
        if (c == 0) return p->kids[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* Combine a and b (same element, or roots) into out (its element set).
 * OP_RDIFF is OP_DIFF but for a child of a that is a member of b: it goes
 * whole, with everything below it. */
int fsi_combine(const fs_node *a, const fs_node *b, int op, fs_node *out)
{
    out->member = op == OP_UNION ? (a->member || b->member)
                  : op == OP_INTER ? (a->member && b->member)
                                   : (a->member && !b->member);
    size_t i = 0, j = 0;
    while (i < a->nkids || j < b->nkids) {
        int c = i >= a->nkids ? 1 : j >= b->nkids ? -1 : fsi_pe_cmp(a->kids[i], b->kids[j]);
        fs_node *k = NULL;
        if (c < 0) {
            if (op != OP_INTER && !(k = fsi_node_copy(a->kids[i]))) return -1;
            i++;
        } else if (c > 0) {
            if (op == OP_UNION && !(k = fsi_node_copy(b->kids[j]))) return -1;
            j++;
        } else if (op == OP_RDIFF && b->kids[j]->member) {
            i++, j++;
        } else {
            if (!(k = fsi_node_pe_copy(a->kids[i]))) return -1;
            if (fsi_combine(a->kids[i], b->kids[j], op, k)) {
                fsi_node_free(k);
                return -1;
            }
            i++, j++;
            if (fsi_node_empty(k)) {
                fsi_node_free(k);
                k = NULL;
            }
        }
        if (k && fsi_kids_push(out, k)) {
            fsi_node_free(k);
            return -1;
        }
    }
    return 0;
}

static fs_set *set_op(const fs_set *a, const fs_set *b, int op)
{
    fs_set empty = {{0}};
    if (!a) a = &empty;
    if (!b) b = &empty;
    fs_set *s = fs_new();
    if (!s) return NULL;
    if (fsi_combine(&a->root, &b->root, op, &s->root)) {
        fs_free(s);
        return NULL;
    }
    return s;
}

fs_set *fs_union(const fs_set *a, const fs_set *b) { return set_op(a, b, OP_UNION); }
fs_set *fs_difference(const fs_set *a, const fs_set *b) { return set_op(a, b, OP_DIFF); }
fs_set *fs_intersection(const fs_set *a, const fs_set *b) { return set_op(a, b, OP_INTER); }
fs_set *fs_recursive_difference(const fs_set *a, const fs_set *b)
{
    return set_op(a, b, OP_RDIFF);
}

static void node_sub(fs_node *a, const fs_node *b, bool rec)
{
    if (a->kind != PE_ROOT && b->member) a->member = false;
    size_t w = 0, j = 0;
    for (size_t i = 0; i < a->nkids; i++) {
        fs_node *k = a->kids[i];
        while (j < b->nkids && fsi_pe_cmp(b->kids[j], k) < 0) j++;
        if (j < b->nkids && fsi_pe_cmp(b->kids[j], k) == 0) {
            if (!(rec && b->kids[j]->member)) node_sub(k, b->kids[j], rec);
            if ((rec && b->kids[j]->member) || fsi_node_empty(k)) {
                fsi_node_free(k);
                continue;
            }
        }
        a->kids[w++] = k;
    }
    a->nkids = w;
}

void fs_subtract(fs_set *a, const fs_set *b, bool recursive)
{
    if (a && b) node_sub(&a->root, &b->root, recursive);
}

int fs_insert_fields(fs_set *s, const char *const *names, size_t n)
{
    fs_node *cur = &s->root;
    for (size_t i = 0; i < n; i++) {
        fs_node probe = {.kind = PE_FIELD, .name = (char *)names[i]};
        fs_node *k = fsi_find_kid(cur, &probe);
        if (!k) {
            if (!(k = calloc(1, sizeof *k))) return FS_ERR_NOMEM;
            k->kind = PE_FIELD;
            if (!(k->name = strdup(names[i])) || fsi_kids_push(cur, k)) {
                fsi_node_free(k);
                return FS_ERR_NOMEM;
            }
            if (fsi_finish_level(cur)) return FS_ERR_NOMEM;
        }
        cur = k;
    }
    if (n) cur->member = true;
    return FS_OK;
}

static bool node_equal(const fs_node *a, const fs_node *b)
{
    if (a->member != b->member || a->nkids != b->nkids) return false;
    for (size_t i = 0; i < a->nkids; i++)
        if (fsi_pe_cmp(a->kids[i], b->kids[i]) || !node_equal(a->kids[i], b->kids[i])) return false;
    return true;
}

bool fs_equal(const fs_set *a, const fs_set *b)
{
    fs_set empty = {{0}};
    return node_equal(a ? &a->root : &empty.root, b ? &b->root : &empty.root);
}

fs_set *fs_new(void) { return calloc(1, sizeof(fs_set)); }

void fs_free(fs_set *s)
{
    if (!s) return;
    node_clear(&s->root);
    free(s);
}

bool fs_empty(const fs_set *s) { return !s || s->root.nkids == 0; }

static size_t count_members(const fs_node *n)
{
    size_t c = n->member;
    for (size_t i = 0; i < n->nkids; i++) c += count_members(n->kids[i]);
    return c;
}

size_t fs_size(const fs_set *s) { return s ? count_members(&s->root) - s->root.member : 0; }

/* Sort p's children and merge equal ones (decoding accepts any order). */
static int kid_cmp_q(const void *a, const void *b)
{
    return fsi_pe_cmp(*(fs_node *const *)a, *(fs_node *const *)b);
}

int fsi_finish_level(fs_node *p)
{
    if (p->nkids < 2) return 0;
    qsort(p->kids, p->nkids, sizeof *p->kids, kid_cmp_q);
    size_t w = 0;
    for (size_t r = 0; r < p->nkids; r++) {
        if (w > 0 && fsi_pe_cmp(p->kids[w - 1], p->kids[r]) == 0) {
            fs_node *m = fsi_node_pe_copy(p->kids[r]);
            if (!m || fsi_combine(p->kids[w - 1], p->kids[r], OP_UNION, m)) {
                fsi_node_free(m);
                for (size_t k = r; k < p->nkids; k++) p->kids[w++] = p->kids[k];
                p->nkids = w;
                return -1;
            }
            fsi_node_free(p->kids[w - 1]);
            fsi_node_free(p->kids[r]);
            p->kids[w - 1] = m;
        } else {
            p->kids[w++] = p->kids[r];
        }
    }
    p->nkids = w;
    return 0;
}

/* ---- decoding ---- */

/* A key element's value: [[name, value]...] sorted by name. */
json_t *fsi_key_from_object(const json_t *o)
{
    size_t n;
    const char **k = sorted_keys(o, &n);
    json_t *arr = k ? json_array() : NULL;
    for (size_t i = 0; arr && i < n; i++)
        if (json_array_append_new(arr, json_pack("[sO]", k[i], json_object_get(o, k[i])))) {
            json_decref(arr);
            arr = NULL;
        }
    free(k);
    return arr;
}

static int parse_pe(ctx *c, const char *s, size_t len, fs_node *n)
{
    if (len < 2 || s[1] != ':') return fail(c, FS_ERR_INVALID, "unknown path element: %.*s", (int)(len > 64 ? 64 : len), s);
    const char *b = s + 2;
    size_t bl = len - 2;
    json_error_t je;
    switch (s[0]) {
    case 'f':
        n->kind = PE_FIELD;
        if (memchr(b, '\0', bl)) return fail(c, FS_ERR_INVALID, "field name contains NUL");
        if (!(n->name = strndup(b, bl))) return fail(c, FS_ERR_NOMEM, "out of memory");
        return 0;
    case 'k': {
        n->kind = PE_KEY;
        json_t *o = json_loadb(b, bl, JSON_REJECT_DUPLICATES, &je);
        if (!o || !json_is_object(o)) {
            json_decref(o);
            return fail(c, FS_ERR_INVALID, "parsing JSON: %s", o ? "key is not an object" : je.text);
        }
        n->val = fsi_key_from_object(o);
        json_decref(o);
        if (!n->val) return fail(c, FS_ERR_NOMEM, "out of memory");
        return 0;
    }
    case 'v':
        n->kind = PE_VALUE;
        if (!(n->val = json_loadb(b, bl, JSON_DECODE_ANY, &je)))
            return fail(c, FS_ERR_INVALID, "parsing JSON: %s", je.text);
        return 0;
    case 'i': {
        n->kind = PE_INDEX;
        char tmp[32];
        if (bl == 0 || bl >= sizeof tmp) return fail(c, FS_ERR_INVALID, "invalid index");
        memcpy(tmp, b, bl);
        tmp[bl] = '\0';
        size_t d = (tmp[0] == '-' || tmp[0] == '+');
        if (!tmp[d]) return fail(c, FS_ERR_INVALID, "invalid index");
        for (size_t i = d; tmp[i]; i++)
            if (tmp[i] < '0' || tmp[i] > '9') return fail(c, FS_ERR_INVALID, "invalid index");
        errno = 0;
        n->idx = strtoll(tmp, NULL, 10);
        if (errno) return fail(c, FS_ERR_INVALID, "invalid index");
        return 0;
    }
    default:
        return fail(c, FS_ERR_INVALID, "unknown path element: %.*s", (int)(len > 64 ? 64 : len), s);
    }
}

static int decode_level(ctx *c, const json_t *obj, fs_node *p, unsigned depth)
{
    if (!json_is_object(obj)) return fail(c, FS_ERR_INVALID, "expected an object");
    if (depth > c->lim.max_depth) return fail(c, FS_ERR_LIMIT, "fieldsV1 nested too deeply");
    const char *key;
    size_t klen;
    json_t *v;
    void *tmp;
    json_object_keylen_foreach_safe((json_t *)obj, tmp, key, klen, v)
    {
        if (klen == 1 && key[0] == '.') {
            if (p->kind == PE_ROOT) return fail(c, FS_ERR_INVALID, "\".\" at the root");
            p->member = true;
            continue;
        }
        if (++c->nodes > c->lim.max_nodes) return fail(c, FS_ERR_LIMIT, "fieldsV1 has too many elements");
        fs_node *k = calloc(1, sizeof *k);
        if (!k || fsi_kids_push(p, k)) {
            free(k);
            return fail(c, FS_ERR_NOMEM, "out of memory");
        }
        if (parse_pe(c, key, klen, k)) return c->code;
        if (!json_is_object(v)) return fail(c, FS_ERR_INVALID, "expected an object");
        if (json_object_size(v) == 0) k->member = true;
        else if (decode_level(c, v, k, depth + 1)) return c->code;
    }
    if (fsi_finish_level(p)) return fail(c, FS_ERR_NOMEM, "out of memory");
    return 0;
}

fs_set *fs_from_fieldsv1(const json_t *v, const fs_limits *limits, int *code, char *err,
                         size_t errlen)
{
    ctx c = {norm_limits(limits), 0, 0, err, errlen};
    if (err && errlen) err[0] = '\0';
    fs_set *s = fs_new();
    if (!s) fail(&c, FS_ERR_NOMEM, "out of memory");
    else if (decode_level(&c, v, &s->root, 1)) {
        fs_free(s);
        s = NULL;
    }
    if (code) *code = c.code;
    return s;
}

fs_set *fs_from_fieldsv1_text(const char *text, size_t len, const fs_limits *limits, int *code,
                              char *err, size_t errlen)
{
    fs_limits l = norm_limits(limits);
    ctx c = {l, 0, 0, err, errlen};
    if (err && errlen) err[0] = '\0';
    if (len > l.max_text) {
        fail(&c, FS_ERR_LIMIT, "fieldsV1 is too large");
        if (code) *code = c.code;
        return NULL;
    }
    json_error_t je;
    json_t *v = json_loadb(text, len, 0, &je);
    if (!v) {
        fail(&c, FS_ERR_INVALID, "parsing fieldsV1: %s", je.text);
        if (code) *code = c.code;
        return NULL;
    }
    fs_set *s = fs_from_fieldsv1(v, &l, code, err, errlen);
    json_decref(v);
    return s;
}

/* ---- encoding ---- */

/* A JSON string as Go's encoding/json writes it (HTML-safe). */
static int put_jstr(dbuf *b, const char *s, size_t n)
{
    int r = dbuf_add(b, "\"", 1);
    size_t start = 0;
    for (size_t i = 0; i < n && !r; i++) {
        unsigned char ch = (unsigned char)s[i];
        const char *esc = NULL;
        char u[8];
        size_t skip = 1;
        if (ch == '"') esc = "\\\"";
        else if (ch == '\\') esc = "\\\\";
        else if (ch == '\n') esc = "\\n";
        else if (ch == '\r') esc = "\\r";
        else if (ch == '\t') esc = "\\t";
        else if (ch < 0x20 || ch == '<' || ch == '>' || ch == '&') {
            snprintf(u, sizeof u, "\\u%04x", ch);
            esc = u;
        } else if (ch == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                   ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
            esc = (unsigned char)s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029";
            skip = 3;
        }
        if (!esc) continue;
        r = dbuf_add(b, s + start, i - start);
        if (!r) r = dbuf_adds(b, esc);
        i += skip - 1;
        start = i + 1;
    }
    if (!r) r = dbuf_add(b, s + start, n - start);
    if (!r) r = dbuf_add(b, "\"", 1);
    return r;
}

/* Compact JSON of a value (object keys sorted, strings HTML-safe). */
static int put_val(dbuf *b, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING: return put_jstr(b, json_string_value(v), json_string_length(v));
    case JSON_INTEGER: return dbuf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL: {
        char tmp[40];
        double d = json_real_value(v);
        if (d == 0) return dbuf_adds(b, "0"); /* -0 too: jansson reads "-0" as 0 */
        for (int p = 1; p <= 17; p++) { /* shortest that round-trips */
            snprintf(tmp, sizeof tmp, "%.*g", p, d);
            if (strtod(tmp, NULL) == d) break;
        }
        return dbuf_adds(b, tmp);
    }
    case JSON_TRUE: return dbuf_adds(b, "true");
    case JSON_FALSE: return dbuf_adds(b, "false");
    case JSON_NULL: return dbuf_adds(b, "null");
    case JSON_ARRAY: {
        int r = dbuf_add(b, "[", 1);
        for (size_t i = 0; !r && i < json_array_size(v); i++) {
            if (i) r = dbuf_add(b, ",", 1);
            if (!r) r = put_val(b, json_array_get(v, i));
        }
        return r ? r : dbuf_add(b, "]", 1);
    }
    case JSON_OBJECT: {
        size_t n;
        const char **k = sorted_keys(v, &n);
        if (!k) return -1;
        int r = dbuf_add(b, "{", 1);
        for (size_t i = 0; !r && i < n; i++) {
            if (i) r = dbuf_add(b, ",", 1);
            if (!r) r = put_jstr(b, k[i], strlen(k[i]));
            if (!r) r = dbuf_add(b, ":", 1);
            if (!r) r = put_val(b, json_object_get(v, k[i]));
        }
        free(k);
        return r ? r : dbuf_add(b, "}", 1);
    }
    }
    return -1;
}

/* The element as its fieldsV1 key ("f:a", "k:{...}"), raw (not escaped). */
static int pe_text(dbuf *b, const fs_node *n)
{
    switch (n->kind) {
    case PE_FIELD: return dbuf_add(b, "f:", 2) ? -1 : dbuf_adds(b, n->name);
    case PE_KEY: {
        int r = dbuf_adds(b, "k:{");
        for (size_t i = 0; !r && i < json_array_size(n->val); i++) {
            json_t *kv = json_array_get(n->val, i);
            const char *name = json_string_value(json_array_get(kv, 0));
            if (i) r = dbuf_add(b, ",", 1);
            if (!r) r = put_jstr(b, name, strlen(name));
            if (!r) r = dbuf_add(b, ":", 1);
            if (!r) r = put_val(b, json_array_get(kv, 1));
        }
        return r ? r : dbuf_add(b, "}", 1);
    }
    case PE_VALUE: return dbuf_adds(b, "v:") ? -1 : put_val(b, n->val);
    case PE_INDEX: return dbuf_printf(b, "i:%lld", n->idx);
    }
    return -1;
}

static int emit(dbuf *b, dbuf *tmp, const fs_node *n, bool self)
{
    int r = dbuf_add(b, "{", 1);
    bool first = true;
    if (!r && self && n->member && n->nkids) {
        r = dbuf_adds(b, "\".\":{}");
        first = false;
    }
    for (size_t i = 0; !r && i < n->nkids; i++) {
        const fs_node *k = n->kids[i];
        if (!first) r = dbuf_add(b, ",", 1);
        first = false;
        tmp->len = 0;
        if (!r) r = pe_text(tmp, k);
        if (!r) r = put_jstr(b, tmp->p ? tmp->p : "", tmp->len);
        if (!r) r = dbuf_add(b, ":", 1);
        if (!r) r = emit(b, tmp, k, true);
    }
    return r ? r : dbuf_add(b, "}", 1);
}

int fs_to_fieldsv1_text(const fs_set *s, char **out, size_t *outlen)
{
    fs_set empty = {{0}};
    dbuf b, tmp;
    dbuf_init(&b, FS_DEFAULT_MAX_TEXT * 4);
    dbuf_init(&tmp, FS_DEFAULT_MAX_TEXT);
    int r = emit(&b, &tmp, s ? &s->root : &empty.root, false);
    dbuf_free(&tmp);
    if (r) {
        dbuf_free(&b);
        *out = NULL;
        return FS_ERR_NOMEM;
    }
    *out = dbuf_take(&b, outlen);
    return *out ? FS_OK : FS_ERR_NOMEM;
}

/* The same tree as jansson values, keys in canonical order (jansson keeps
 * insertion order): no text in between. */
static json_t *emit_json(const fs_node *n, bool self, dbuf *tmp)
{
    json_t *o = json_object();
    if (!o) return NULL;
    if (self && n->member && n->nkids && json_object_set_new(o, ".", json_object())) goto fail;
    for (size_t i = 0; i < n->nkids; i++) {
        const fs_node *k = n->kids[i];
        json_t *c = emit_json(k, true, tmp);
        if (!c) goto fail;
        tmp->len = 0;
        if (pe_text(tmp, k)) {
            json_decref(c);
            goto fail;
        }
        if (json_object_setn_new(o, tmp->p ? tmp->p : "", tmp->len, c)) goto fail;
    }
    return o;
fail:
    json_decref(o);
    return NULL;
}

json_t *fs_to_fieldsv1(const fs_set *s)
{
    fs_set empty = {{0}};
    dbuf tmp;
    dbuf_init(&tmp, FS_DEFAULT_MAX_TEXT);
    json_t *v = emit_json(s ? &s->root : &empty.root, false, &tmp);
    dbuf_free(&tmp);
    return v;
}

/* ---- from an object ---- */

typedef struct walk {
    ctx *c;
    fs_list_cb cb; /* path callback (fs_from_object), or */
    void *ud;
    const fs_schema *sch; /* a schema cursor (fs_from_object_typed) */
    bool lenient;
    const char **fields;
    size_t nfields;
} walk;

static fs_node *add_kid(walk *w, fs_node *p, int kind)
{
    if (++w->c->nodes > w->c->lim.max_nodes) {
        fail(w->c, FS_ERR_LIMIT, "object has too many fields");
        return NULL;
    }
    fs_node *k = calloc(1, sizeof *k);
    if (!k || fsi_kids_push(p, k)) {
        free(k);
        fail(w->c, FS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    k->kind = kind;
    return k;
}

int fsi_item_pe(const json_t *item, const fs_list_info *li, fs_node *out)
{
    out->kind = li->type == FS_LIST_SET ? PE_VALUE : PE_KEY;
    if (li->type == FS_LIST_SET) {
        out->val = jcopy(item); /* scalars, as a rule: cheap */
        return out->val ? 0 : -1;
    }
    if (!json_is_object(item)) return 1;
    json_t *key = json_object();
    if (!key) return -1;
    for (size_t j = 0; j < li->nkeys; j++) {
        json_t *kv = json_object_get(item, li->keys[j]);
        const char *dflt = li->key_defaults ? li->key_defaults[j] : NULL;
        int r = kv ? json_object_set(key, li->keys[j], kv)
                   : dflt ? json_object_set_new(key, li->keys[j], json_string(dflt)) : 1;
        if (r) {
            json_decref(key);
            return kv || dflt ? -1 : 2;
        }
    }
    out->val = fsi_key_from_object(key);
    json_decref(key);
    return out->val ? 0 : -1;
}

static int walk_value(walk *w, const json_t *v, fs_node *n, unsigned depth, fs_type t);

static void walk_shape(walk *w, fs_type t, bool is_list, fs_list_info *info)
{
    if (w->sch) {
        w->sch->shape(w->sch, t, is_list, info);
    } else if (w->cb && w->cb(w->ud, w->fields, w->nfields, is_list, info)) {
        info->type = FS_LIST_ATOMIC;
    }
}

static int walk_list(walk *w, const json_t *arr, fs_node *n, unsigned depth, fs_type t)
{
    fs_list_info info = {FS_LIST_ATOMIC, NULL, 0, NULL};
    walk_shape(w, t, true, &info);
    if (info.type == FS_LIST_ATOMIC) {
        n->member = true;
        return 0;
    }
    fs_type it = w->sch ? w->sch->items(w->sch, t) : (fs_type){NULL, 0};
    size_t i;
    json_t *item;
    json_array_foreach(arr, i, item)
    {
        fs_node *k = add_kid(w, n, 0);
        if (!k) return w->c->code;
        k->member = true;
        int r = fsi_item_pe(item, &info, k);
        if (r < 0) return fail(w->c, FS_ERR_NOMEM, "out of memory");
        if (r > 0 && w->lenient) { /* a stored list that cannot be keyed: one value */
            for (size_t j = 0; j < n->nkids; j++) fsi_node_free(n->kids[j]);
            n->nkids = 0;
            n->member = true;
            return 0;
        }
        if (r == 1)
            return fail(w->c, FS_ERR_INVALID, "associative list with keys has an element that is not a map");
        for (size_t j = 0; r == 2 && j < info.nkeys; j++)
            if (!json_object_get(item, info.keys[j]) &&
                !(info.key_defaults && info.key_defaults[j]))
                return fail(w->c, FS_ERR_INVALID,
                            "associative list with keys has an element that omits key field \"%s\"",
                            info.keys[j]);
        if (info.type == FS_LIST_MAP && walk_value(w, item, k, depth + 1, it)) return w->c->code;
    }
    size_t before = n->nkids;
    if (fsi_finish_level(n)) return fail(w->c, FS_ERR_NOMEM, "out of memory");
    if (n->nkids != before && !w->lenient)
        return fail(w->c, FS_ERR_INVALID, "duplicate entries in a list with keys");
    return 0;
}

static int walk_value(walk *w, const json_t *v, fs_node *n, unsigned depth, fs_type t)
{
    if (depth > w->c->lim.max_depth) return fail(w->c, FS_ERR_LIMIT, "object nested too deeply");
    if (json_is_array(v)) return walk_list(w, v, n, depth, t);
    if (!json_is_object(v) || json_object_size(v) == 0) {
        if (n->kind != PE_ROOT) n->member = true;
        return 0;
    }
    fs_list_info info = {FS_LIST_MAP, NULL, 0, NULL};
    if (n->kind != PE_ROOT) {
        walk_shape(w, t, false, &info);
        if (info.type == FS_LIST_ATOMIC) {
            n->member = true;
            return 0;
        }
    }
    const char *key;
    json_t *fv;
    json_object_foreach((json_t *)v, key, fv)
    {
        fs_node *k = add_kid(w, n, PE_FIELD);
        if (!k) return w->c->code;
        if (!(k->name = strdup(key))) return fail(w->c, FS_ERR_NOMEM, "out of memory");
        unsigned flags = 0;
        fs_type ft = w->sch ? w->sch->field(w->sch, t, key, &flags) : (fs_type){NULL, 0};
        w->fields[w->nfields++] = key;
        int r = walk_value(w, fv, k, depth + 1, ft);
        w->nfields--;
        if (r) return r;
        if (fsi_node_empty(k)) { /* an empty keyed or set list: nothing set */
            n->nkids--;
            fsi_node_free(k);
        }
    }
    if (fsi_finish_level(n)) return fail(w->c, FS_ERR_NOMEM, "out of memory");
    return 0;
}

static fs_set *from_object(const json_t *obj, walk *w, fs_type root, int *code)
{
    ctx *c = w->c;
    fs_set *s = fs_new();
    w->fields = calloc(c->lim.max_depth + 2, sizeof *w->fields);
    if (!s || !w->fields) fail(c, FS_ERR_NOMEM, "out of memory");
    else if (!json_is_object(obj)) fail(c, FS_ERR_INVALID, "not an object");
    else walk_value(w, obj, &s->root, 0, root);
    free(w->fields);
    if (c->code) {
        fs_free(s);
        s = NULL;
    }
    if (code) *code = c->code;
    return s;
}

fs_set *fs_from_object(const json_t *obj, fs_list_cb cb, void *ud, const fs_limits *limits,
                       int *code, char *err, size_t errlen)
{
    ctx c = {norm_limits(limits), 0, 0, err, errlen};
    if (err && errlen) err[0] = '\0';
    walk w = {&c, cb, ud, NULL, false, NULL, 0};
    return from_object(obj, &w, (fs_type){NULL, 0}, code);
}

fs_set *fs_from_object_typed(const json_t *obj, const fs_schema *sch, fs_type root, unsigned flags,
                             const fs_limits *limits, int *code, char *err, size_t errlen)
{
    ctx c = {norm_limits(limits), 0, 0, err, errlen};
    if (err && errlen) err[0] = '\0';
    walk w = {&c, NULL, NULL, sch ? sch : &fs_untyped, (flags & FS_LENIENT) != 0, NULL, 0};
    return from_object(obj, &w, root, code);
}

static fs_type untyped_field(const fs_schema *s, fs_type t, const char *name, unsigned *flags)
{
    *flags = 0;
    return (fs_type){NULL, 0};
}

static fs_type untyped_items(const fs_schema *s, fs_type t)
{
    return (fs_type){NULL, 0};
}

static void untyped_shape(const fs_schema *s, fs_type t, bool is_list, fs_list_info *out)
{
}

const fs_schema fs_untyped = {untyped_field, untyped_items, untyped_shape};

/* ---- printing and iteration ---- */

/* Go's %q of a string (printable UTF-8 kept). */
static int put_goq(dbuf *b, const char *s, size_t n)
{
    int r = dbuf_add(b, "\"", 1);
    for (size_t i = 0; i < n && !r; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') r = dbuf_printf(b, "\\%c", ch);
        else if (ch == '\n') r = dbuf_adds(b, "\\n");
        else if (ch == '\t') r = dbuf_adds(b, "\\t");
        else if (ch == '\r') r = dbuf_adds(b, "\\r");
        else if (ch < 0x20 || ch == 0x7f) r = dbuf_printf(b, "\\x%02x", ch);
        else r = dbuf_add(b, s + i, 1);
    }
    return r ? r : dbuf_add(b, "\"", 1);
}

/* value.ToString */
static int put_tostring(dbuf *b, const json_t *v)
{
    if (json_is_string(v)) return put_goq(b, json_string_value(v), json_string_length(v));
    if (json_is_array(v)) {
        int r = dbuf_add(b, "[", 1);
        for (size_t i = 0; !r && i < json_array_size(v); i++) {
            if (i) r = dbuf_add(b, ",", 1);
            if (!r) r = put_tostring(b, json_array_get(v, i));
        }
        return r ? r : dbuf_add(b, "]", 1);
    }
    if (json_is_object(v)) {
        size_t n;
        const char **k = sorted_keys(v, &n);
        if (!k) return -1;
        int r = dbuf_add(b, "{", 1);
        for (size_t i = 0; !r && i < n; i++) {
            if (i) r = dbuf_add(b, ",", 1);
            if (!r) r = dbuf_printf(b, "%s=", k[i]);
            if (!r) r = put_tostring(b, json_object_get(v, k[i]));
        }
        free(k);
        return r ? r : dbuf_add(b, "}", 1);
    }
    return put_val(b, v);
}

static int pe_print(dbuf *b, const fs_node *n)
{
    switch (n->kind) {
    case PE_FIELD: return dbuf_printf(b, ".%s", n->name);
    case PE_KEY: {
        int r = dbuf_add(b, "[", 1);
        for (size_t i = 0; !r && i < json_array_size(n->val); i++) {
            json_t *kv = json_array_get(n->val, i);
            if (i) r = dbuf_add(b, ",", 1);
            if (!r) r = dbuf_printf(b, "%s=", json_string_value(json_array_get(kv, 0)));
            if (!r) r = put_tostring(b, json_array_get(kv, 1));
        }
        return r ? r : dbuf_add(b, "]", 1);
    }
    case PE_VALUE: return dbuf_adds(b, "[=") || put_tostring(b, n->val) ? -1 : dbuf_add(b, "]", 1);
    case PE_INDEX: return dbuf_printf(b, "[%lld]", n->idx);
    }
    return -1;
}

typedef struct iter {
    int (*f)(void *ud, const fs_node *const *path, size_t n, const char *text);
    void *ud;
    const fs_node **path;
    size_t depth, cap;
    dbuf b;
    int stop; /* 1 stopped, -1 no memory */
} iter;

static int iter_node(iter *it, const fs_node *n)
{
    size_t mark = it->b.len;
    for (size_t pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n->nkids; i++) {
            const fs_node *k = n->kids[i];
            if (pass == 0 && !k->member) continue;
            if (pass == 1 && k->nkids == 0) continue;
            if (it->depth == it->cap) {
                size_t nc = it->cap ? it->cap * 2 : 16;
                const fs_node **np = realloc(it->path, nc * sizeof *np);
                if (!np) return it->stop = -1;
                it->path = np;
                it->cap = nc;
            }
            it->path[it->depth++] = k;
            it->b.len = mark;
            if (pe_print(&it->b, k)) return it->stop = -1;
            int r = pass == 0 ? it->f(it->ud, it->path, it->depth, it->b.p) : iter_node(it, k);
            it->depth--;
            if (r) return it->stop = it->stop ? it->stop : 1;
        }
    }
    it->b.len = mark;
    if (it->b.p) it->b.p[mark] = '\0';
    return 0;
}

static int iterate(const fs_set *s,
                   int (*f)(void *ud, const fs_node *const *path, size_t n, const char *text),
                   void *ud)
{
    if (!s) return FS_OK;
    iter it = {f, ud, NULL, 0, 0, {0}, 0};
    dbuf_init(&it.b, FS_DEFAULT_MAX_TEXT);
    iter_node(&it, &s->root);
    free(it.path);
    dbuf_free(&it.b);
    return it.stop < 0 ? FS_ERR_NOMEM : FS_OK;
}

typedef struct pubit {
    int (*f)(void *ud, const char *path);
    void *ud;
} pubit;

static int pub_cb(void *ud, const fs_node *const *path, size_t n, const char *text)
{
    (void)path, (void)n;
    pubit *p = ud;
    return p->f(p->ud, text);
}

int fs_iterate(const fs_set *s, int (*f)(void *ud, const char *path), void *ud)
{
    pubit p = {f, ud};
    return iterate(s, pub_cb, &p);
}

static int has_cb(void *ud, const char *path) { return strcmp(path, (const char *)ud) == 0; }

typedef struct hasit {
    const char *want;
    bool found;
} hasit;

static int has_cb2(void *ud, const char *path)
{
    hasit *h = ud;
    return (h->found = has_cb((void *)h->want, path));
}

bool fs_has(const fs_set *s, const char *path)
{
    hasit h = {path, false};
    fs_iterate(s, has_cb2, &h);
    return h.found;
}

/* ---- conflicts ---- */

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

char *fs_print_manager(const char *manager, const char *operation, const char *api_version,
                       const char *subresource)
{
    dbuf b;
    dbuf_init(&b, (size_t)1 << 20);
    const char *m = manager ? manager : "";
    int r = put_goq(&b, m, strlen(m));
    if (!r && subresource && *subresource) {
        r = dbuf_adds(&b, " with subresource ");
        if (!r) r = put_goq(&b, subresource, strlen(subresource));
    }
    if (!r && operation && strcmp(operation, "Update") == 0)
        r = dbuf_printf(&b, " using %s", api_version ? api_version : "");
    if (r) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b, NULL);
}

/* The value at a path in an object, or NULL. */
static const json_t *lookup(const json_t *v, const fs_node *const *path, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        const fs_node *e = path[i];
        if (e->kind == PE_FIELD) {
            v = json_is_object(v) ? json_object_get(v, e->name) : NULL;
            continue;
        }
        if (!json_is_array(v)) return NULL;
        if (e->kind == PE_INDEX) {
            v = e->idx >= 0 ? json_array_get(v, (size_t)e->idx) : NULL;
            continue;
        }
        const json_t *found = NULL;
        size_t j;
        json_t *item;
        json_array_foreach(v, j, item)
        {
            if (e->kind == PE_VALUE) {
                if (fsi_val_cmp(item, e->val) == 0) found = item;
            } else if (json_is_object(item)) {
                bool ok = true;
                for (size_t k = 0; ok && k < json_array_size(e->val); k++) {
                    json_t *kv = json_array_get(e->val, k);
                    json_t *iv = json_object_get(item, json_string_value(json_array_get(kv, 0)));
                    ok = iv && fsi_val_cmp(iv, json_array_get(kv, 1)) == 0;
                }
                if (ok) found = item;
            }
            if (found) break;
        }
        v = found;
    }
    return v;
}

typedef struct cfind {
    const fs_set *applied;
    const json_t *live, *config;
    const char *manager;
    fs_conflicts *out;
    int rc;
} cfind;

/* Is the path a parent in the applied set (a list item with fields)? */
static bool applied_parent(const fs_set *a, const fs_node *const *path, size_t n)
{
    const fs_node *cur = &a->root;
    for (size_t i = 0; i < n; i++) {
        const fs_node *next = NULL;
        for (size_t k = 0; k < cur->nkids; k++)
            if (fsi_pe_cmp(cur->kids[k], path[i]) == 0) {
                next = cur->kids[k];
                break;
            }
        if (!next) return false;
        cur = next;
    }
    return cur->nkids > 0;
}

static int conflict_cb(void *ud, const fs_node *const *path, size_t n, const char *text)
{
    cfind *cf = ud;
    const json_t *lv = cf->live ? lookup(cf->live, path, n) : NULL;
    bool conflict;
    if (!lv) conflict = true;
    else if (applied_parent(cf->applied, path, n)) conflict = false;
    else {
        const json_t *cv = lookup(cf->config, path, n);
        conflict = !cv || fsi_val_cmp(lv, cv) != 0;
    }
    if (!conflict) return 0;
    fs_conflicts *o = cf->out;
    fs_conflict *nv = realloc(o->v, (o->n + 1) * sizeof *nv);
    if (!nv) return cf->rc = FS_ERR_NOMEM;
    o->v = nv;
    nv[o->n].manager = strdup(cf->manager);
    nv[o->n].path = strdup(text);
    o->n++;
    if (!nv[o->n - 1].manager || !nv[o->n - 1].path) return cf->rc = FS_ERR_NOMEM;
    return 0;
}

static int conflict_cmp_q(const void *a, const void *b)
{
    const fs_conflict *x = a, *y = b;
    return strcmp(x->manager, y->manager);
}

int fs_conflicts_find(const fs_set *applied, const char *applier, const char *subresource,
                      const fs_entry *entries, size_t n, const json_t *live,
                      const json_t *config, fs_conflicts *out)
{
    out->v = NULL;
    out->n = out->total = 0;
    if (!applied) return FS_OK;
    for (size_t i = 0; i < n; i++) {
        const fs_entry *e = &entries[i];
        const char *sub = e->subresource ? e->subresource : "";
        if (e->operation && strcmp(e->operation, "Apply") == 0 && applier && e->manager &&
            strcmp(e->manager, applier) == 0 && strcmp(sub, subresource ? subresource : "") == 0)
            continue;
        fs_set *both = fs_intersection(e->set, applied);
        char *pm = fs_print_manager(e->manager, e->operation, e->api_version, e->subresource);
        cfind cf = {applied, live, config, pm, out, 0};
        int rc = both && pm ? iterate(both, conflict_cb, &cf) : FS_ERR_NOMEM;
        fs_free(both);
        free(pm);
        if (!rc) rc = cf.rc;
        if (rc) {
            fs_conflicts_free(out);
            return rc;
        }
    }
    /* group by manager, sorted; keep each manager's paths in order (stable) */
    for (size_t i = 1; i < out->n; i++) {
        fs_conflict t = out->v[i];
        size_t j = i;
        while (j > 0 && conflict_cmp_q(&out->v[j - 1], &t) > 0) {
            out->v[j] = out->v[j - 1];
            j--;
        }
        out->v[j] = t;
    }
    out->total = out->n;
    return FS_OK;
}

void fs_conflicts_free(fs_conflicts *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].manager);
        free(c->v[i].path);
    }
    free(c->v);
    c->v = NULL;
    c->n = c->total = 0;
}

/* Bytes kept free for "\n... and <n> more". */
#define MORE_ROOM (sizeof "\n... and  more" + 20)

char *fs_conflict_message(const fs_conflicts *c, size_t max)
{
    if (!c || c->n == 0) return NULL;
    if (max < FS_CONFLICT_MESSAGE_MIN) max = FS_CONFLICT_MESSAGE_MIN;
    size_t total = c->total > c->n ? c->total : c->n;
    if (total == 1) {
        char *m = xasprintf("Apply failed with 1 conflict: conflict with %s: %s", c->v[0].manager,
                            c->v[0].path);
        if (m && strlen(m) > max) m[utf8_cut(m, max)] = '\0';
        return m;
    }
    dbuf b;
    dbuf_init(&b, max);
    int r = dbuf_printf(&b, "Apply failed with %zu conflicts: ", total);
    size_t i = 0;
    for (; !r && i < c->n; i++) {
        bool head = i == 0 || strcmp(c->v[i].manager, c->v[i - 1].manager) != 0;
        /* a path and, first under its manager, the manager's line: both or neither */
        size_t need = (head ? strlen(c->v[i].manager) + sizeof "\nconflicts with :" : 0) +
                      strlen(c->v[i].path) + 3;
        size_t room = i + 1 < total ? MORE_ROOM : 0;
        if (b.len + need + room > max) break;
        if (head) r = dbuf_printf(&b, "%sconflicts with %s:", i ? "\n" : "", c->v[i].manager);
        if (!r) r = dbuf_printf(&b, "\n- %s", c->v[i].path);
    }
    if (!r && i < total) r = dbuf_printf(&b, "\n... and %zu more", total - i);
    if (r) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b, NULL);
}
