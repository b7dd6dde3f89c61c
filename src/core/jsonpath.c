/* jsonpath.c - kubectl's JSONPath over jansson values (see jsonpath.h).
 *
 * This reproduces the behaviour of client-go's util/jsonpath, not its code:
 *   - The parser is client-go's recursive-descent parser turned into loops, so
 *     the C stack does not grow with the template. It recurses only where
 *     client-go re-parses a piece of text as a template of its own (union
 *     members, ['quoted.keys'], both sides of a filter), at most max_depth deep.
 *   - The evaluator keeps client-go's range/end state machine (FindResults),
 *     because its quirks are visible output: a {range} without {end} runs the
 *     rest of the template once per item and then once more outside, a null
 *     item inside a range prints "<no value>" where a null field prints
 *     "<nil>", an error inside an existence filter [?(@.a[9])] is swallowed
 *     (and the item kept), a zero-length slice of one input does not stop the
 *     next ones.
 *   - Rendering copies Go: fmt.Fprint for scalars (float64 1000000 is
 *     "1e+06"), encoding/json for objects and arrays (sorted keys, HTML-safe
 *     escapes), fmt's %v for the value quoted in "... cannot be filtered".
 *
 * Invariants:
 *   - a jp_expr never changes after jp_compile_n; an evaluation's state lives
 *     in an ectx on the caller's stack, so one jp_expr serves many threads;
 *   - every value an evaluation produces, and every node recursive descent or
 *     a filter visits, costs one step of max_steps: work and memory are
 *     bounded by the budget, whatever the object or the template;
 *   - recursion is bounded: parser sub-templates and nested {range} blocks by
 *     max_depth, filters/unions by the (shallow) tree the parser can build,
 *     rendering by RENDER_MAX_DEPTH; recursive descent uses a heap stack.
 */
#include "core/jsonpath.h"

#include "core/dbuf.h"
#include "core/jsontext.h"
#include "core/names.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages: client-go's, text/template's and Capsule's words, then allot's ---- */

#define M_UNCLOSED_ACTION "unclosed action"
#define M_BAD_CHAR "unrecognized character in action: %s"
#define M_MULTI_RECURSIVE "invalid multiple recursive descent"
#define M_BAD_NUMBER "cannot parse number %.*s"
#define M_UNTERMINATED_ARRAY "unterminated array"
#define M_BAD_INDEX "invalid array index %.*s"
#define M_INDEX_NAN "array index %.*s is not a number"
#define M_UNTERMINATED_FILTER "unterminated filter"
#define M_UNCLOSED_ARRAY "unclosed array expect ]"
#define M_UNTERMINATED_QUOTE "unterminated quoted string"
#define M_UNQUOTE "unquote string %.*s error invalid syntax"
#define M_NOT_FOUND "%.*s is not found"
#define M_NOT_ARRAY "%s is not array or slice"
#define M_OUT_OF_BOUNDS "array index out of bounds: index %" PRId64 ", length %zu"
#define M_START_AFTER_END "starting index %" PRId64 " is greater than ending index %" PRId64
#define M_STEP "step must be > 0"
#define M_NOT_FILTERABLE "%s is not array or slice and cannot be filtered"
#define M_COMPARE_ONE "can only compare one element at a time"
#define M_BAD_OPERATOR "unrecognized filter operator %.*s"
#define M_BAD_CMP_TYPE "invalid type for comparison"
#define M_BAD_CMP "incompatible types for comparison"
#define M_NOT_IN_RANGE "not in range, nothing to end"
#define M_BAD_IDENT "unrecognized identifier %.*s"

#define M_SRC_EMPTY "sourcePath must not be empty"
#define STR_(x) #x
#define STR(x) STR_(x)
#define M_SRC_LONG "sourcePath exceeds max length of " STR(JP_SOURCE_PATH_MAX)
#define M_SRC_DOT "sourcePath must start with '.'"
#define M_SRC_CONTROL "sourcePath must not contain control whitespace"
#define M_SRC_BRACES "sourcePath must not contain curly braces"
#define M_SRC_PARSE "parse usage jsonpath %s: %s"
#define M_SRC_EXEC "execute usage jsonpath: %s"
#define M_QTY_NONE "no quantity values found"
#define M_QTY_BAD "invalid quantity %s: %s"
#define M_FS_EMPTY "field selector must not be empty"

/* allot's own limits (upstream has none) */
#define M_LIM_TEMPLATE "jsonpath template is longer than the limit of %zu bytes"
#define M_LIM_DEPTH "jsonpath nesting exceeds the limit of %u levels"
#define M_LIM_STEPS "jsonpath evaluation exceeds the limit of %" PRIu64 " steps"
#define M_LIM_OUTPUT "jsonpath output exceeds the limit of %zu bytes"
#define M_LIM_VALUE_DEPTH "jsonpath value nesting exceeds the limit of %d levels"
#define M_QTY_SUM "quantity sum has more significant digits than are supported"
#define M_NOMEM "out of memory"

#define RENDER_MAX_DEPTH 2048 /* jansson's own parser depth limit */
#define JP_MAX_DEPTH_CAP 1000u
#define ERRVAL_MAX 512 /* bytes of a value quoted in an error message */

/* printf precision for a length (messages quote template pieces) */
#define PREC(n) ((int)((n) > INT_MAX ? INT_MAX : (n)))

__attribute__((format(printf, 3, 4))) static void seterr(char *buf, size_t n, const char *fmt, ...)
{
    if (!buf || n == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

static char *memdup0(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* Go's int arithmetic wraps; C's signed overflow is undefined. */
static int64_t wadd(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

jp_limits jp_default_limits(void)
{
    jp_limits l = {JP_DEFAULT_MAX_TEMPLATE, JP_DEFAULT_MAX_DEPTH, JP_DEFAULT_MAX_STEPS,
                   JP_DEFAULT_MAX_OUTPUT};
    return l;
}

static jp_limits limits_or_default(const jp_limits *in)
{
    jp_limits l = jp_default_limits();
    if (!in) return l;
    if (in->max_template) l.max_template = in->max_template;
    /* max_depth bounds the recursion of the parser and of {range}: capped so
     * that no caller can ask for a stack deeper than a thread has */
    if (in->max_depth)
        l.max_depth = in->max_depth < JP_MAX_DEPTH_CAP ? in->max_depth : JP_MAX_DEPTH_CAP;
    if (in->max_steps) l.max_steps = in->max_steps;
    if (in->max_output) l.max_output = in->max_output;
    return l;
}

/* ---- UTF-8 and the Unicode classes client-go's lexer asks about ---- */

#define R_EOF (-1)
#define R_ERROR 0xFFFD

/* utf8.DecodeRune: an invalid or short sequence is U+FFFD of width 1. */
static int32_t utf8_decode(const unsigned char *s, size_t n, size_t *width)
{
    *width = 1;
    if (s[0] < 0x80) return s[0];
    int need;
    int32_t r;
    unsigned char lo = 0x80, hi = 0xBF;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        need = 1, r = s[0] & 0x1F;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        need = 2, r = s[0] & 0x0F;
        if (s[0] == 0xE0) lo = 0xA0;
        if (s[0] == 0xED) hi = 0x9F;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        need = 3, r = s[0] & 0x07;
        if (s[0] == 0xF0) lo = 0x90;
        if (s[0] == 0xF4) hi = 0x8F;
    } else {
        return R_ERROR;
    }
    if ((size_t)need >= n) return R_ERROR;
    for (int i = 1; i <= need; i++) {
        unsigned char lb = i == 1 ? lo : 0x80, hb = i == 1 ? hi : 0xBF;
        if (s[i] < lb || s[i] > hb) return R_ERROR;
        r = (r << 6) | (s[i] & 0x3F);
    }
    *width = (size_t)need + 1;
    return r;
}

static size_t utf8_encode(int32_t r, char out[4])
{
    if (r < 0 || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) r = R_ERROR;
    if (r < 0x80) {
        out[0] = (char)r;
        return 1;
    }
    if (r < 0x800) {
        out[0] = (char)(0xC0 | (r >> 6));
        out[1] = (char)(0x80 | (r & 0x3F));
        return 2;
    }
    if (r < 0x10000) {
        out[0] = (char)(0xE0 | (r >> 12));
        out[1] = (char)(0x80 | ((r >> 6) & 0x3F));
        out[2] = (char)(0x80 | (r & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (r >> 18));
    out[1] = (char)(0x80 | ((r >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((r >> 6) & 0x3F));
    out[3] = (char)(0x80 | (r & 0x3F));
    return 4;
}

enum rclass { RC_LETTER, RC_DIGIT, RC_PRINT, RC_NONPRINT };

/* Non-ASCII runes that are not letters, for unicode.IsLetter / IsDigit /
 * strconv.IsPrint. Exact (Unicode 14) for Latin-1, General Punctuation to
 * Miscellaneous Symbols and Arrows (U+2000-2BFF), CJK Symbols and
 * Punctuation, Private Use, CJK Compatibility Forms, Halfwidth and Fullwidth
 * Forms and Specials, plus every decimal digit (Nd) range; any other
 * non-ASCII rune counts as a letter. So a rune outside those blocks that Go
 * does not call a letter (rare at the start of a template token) parses as
 * an identifier here ("unrecognized identifier" when evaluated) where
 * client-go reports "unrecognized character" at parse time. */
static const struct {
    int32_t lo, hi;
    enum rclass c;
} rune_table[] = {
    {0x0080, 0x00A0, RC_NONPRINT}, {0x00A1, 0x00A9, RC_PRINT},    {0x00AB, 0x00AC, RC_PRINT},
    {0x00AD, 0x00AD, RC_NONPRINT}, {0x00AE, 0x00B4, RC_PRINT},    {0x00B6, 0x00B9, RC_PRINT},
    {0x00BB, 0x00BF, RC_PRINT},    {0x00D7, 0x00D7, RC_PRINT},    {0x00F7, 0x00F7, RC_PRINT},
    {0x0660, 0x0669, RC_DIGIT},    {0x06F0, 0x06F9, RC_DIGIT},    {0x07C0, 0x07C9, RC_DIGIT},
    {0x0966, 0x096F, RC_DIGIT},    {0x09E6, 0x09EF, RC_DIGIT},    {0x0A66, 0x0A6F, RC_DIGIT},
    {0x0AE6, 0x0AEF, RC_DIGIT},    {0x0B66, 0x0B6F, RC_DIGIT},    {0x0BE6, 0x0BEF, RC_DIGIT},
    {0x0C66, 0x0C6F, RC_DIGIT},    {0x0CE6, 0x0CEF, RC_DIGIT},    {0x0D66, 0x0D6F, RC_DIGIT},
    {0x0DE6, 0x0DEF, RC_DIGIT},    {0x0E50, 0x0E59, RC_DIGIT},    {0x0ED0, 0x0ED9, RC_DIGIT},
    {0x0F20, 0x0F29, RC_DIGIT},    {0x1040, 0x1049, RC_DIGIT},    {0x1090, 0x1099, RC_DIGIT},
    {0x17E0, 0x17E9, RC_DIGIT},    {0x1810, 0x1819, RC_DIGIT},    {0x1946, 0x194F, RC_DIGIT},
    {0x19D0, 0x19D9, RC_DIGIT},    {0x1A80, 0x1A89, RC_DIGIT},    {0x1A90, 0x1A99, RC_DIGIT},
    {0x1B50, 0x1B59, RC_DIGIT},    {0x1BB0, 0x1BB9, RC_DIGIT},    {0x1C40, 0x1C49, RC_DIGIT},
    {0x1C50, 0x1C59, RC_DIGIT},    {0x2000, 0x200F, RC_NONPRINT}, {0x2010, 0x2027, RC_PRINT},
    {0x2028, 0x202F, RC_NONPRINT}, {0x2030, 0x205E, RC_PRINT},    {0x205F, 0x206F, RC_NONPRINT},
    {0x2070, 0x2070, RC_PRINT},    {0x2072, 0x2073, RC_NONPRINT}, {0x2074, 0x207E, RC_PRINT},
    {0x2080, 0x208E, RC_PRINT},    {0x208F, 0x208F, RC_NONPRINT}, {0x209D, 0x209F, RC_NONPRINT},
    {0x20A0, 0x20C0, RC_PRINT},    {0x20C1, 0x20CF, RC_NONPRINT}, {0x20D0, 0x20F0, RC_PRINT},
    {0x20F1, 0x20FF, RC_NONPRINT}, {0x2100, 0x2101, RC_PRINT},    {0x2103, 0x2106, RC_PRINT},
    {0x2108, 0x2109, RC_PRINT},    {0x2114, 0x2114, RC_PRINT},    {0x2116, 0x2118, RC_PRINT},
    {0x211E, 0x2123, RC_PRINT},    {0x2125, 0x2125, RC_PRINT},    {0x2127, 0x2127, RC_PRINT},
    {0x2129, 0x2129, RC_PRINT},    {0x212E, 0x212E, RC_PRINT},    {0x213A, 0x213B, RC_PRINT},
    {0x2140, 0x2144, RC_PRINT},    {0x214A, 0x214D, RC_PRINT},    {0x214F, 0x2182, RC_PRINT},
    {0x2185, 0x218B, RC_PRINT},    {0x218C, 0x218F, RC_NONPRINT}, {0x2190, 0x2426, RC_PRINT},
    {0x2427, 0x243F, RC_NONPRINT}, {0x2440, 0x244A, RC_PRINT},    {0x244B, 0x245F, RC_NONPRINT},
    {0x2460, 0x2B73, RC_PRINT},    {0x2B74, 0x2B75, RC_NONPRINT}, {0x2B76, 0x2B95, RC_PRINT},
    {0x2B96, 0x2B96, RC_NONPRINT}, {0x2B97, 0x2BFF, RC_PRINT},    {0x3000, 0x3000, RC_NONPRINT},
    {0x3001, 0x3004, RC_PRINT},    {0x3007, 0x302F, RC_PRINT},    {0x3036, 0x303A, RC_PRINT},
    {0x303D, 0x303F, RC_PRINT},    {0xA620, 0xA629, RC_DIGIT},    {0xA8D0, 0xA8D9, RC_DIGIT},
    {0xA900, 0xA909, RC_DIGIT},    {0xA9D0, 0xA9D9, RC_DIGIT},    {0xA9F0, 0xA9F9, RC_DIGIT},
    {0xAA50, 0xAA59, RC_DIGIT},    {0xABF0, 0xABF9, RC_DIGIT},    {0xE000, 0xF8FF, RC_NONPRINT},
    {0xFE30, 0xFE4F, RC_PRINT},    {0xFF00, 0xFF00, RC_NONPRINT}, {0xFF01, 0xFF0F, RC_PRINT},
    {0xFF10, 0xFF19, RC_DIGIT},    {0xFF1A, 0xFF20, RC_PRINT},    {0xFF3B, 0xFF40, RC_PRINT},
    {0xFF5B, 0xFF65, RC_PRINT},    {0xFFBF, 0xFFC1, RC_NONPRINT}, {0xFFC8, 0xFFC9, RC_NONPRINT},
    {0xFFD0, 0xFFD1, RC_NONPRINT}, {0xFFD8, 0xFFD9, RC_NONPRINT}, {0xFFDD, 0xFFDF, RC_NONPRINT},
    {0xFFE0, 0xFFE6, RC_PRINT},    {0xFFE7, 0xFFE7, RC_NONPRINT}, {0xFFE8, 0xFFEE, RC_PRINT},
    {0xFFEF, 0xFFFB, RC_NONPRINT}, {0xFFFC, 0xFFFD, RC_PRINT},    {0xFFFE, 0xFFFF, RC_NONPRINT},
    {0x104A0, 0x104A9, RC_DIGIT},  {0x10D30, 0x10D39, RC_DIGIT},  {0x11066, 0x1106F, RC_DIGIT},
    {0x110F0, 0x110F9, RC_DIGIT},  {0x11136, 0x1113F, RC_DIGIT},  {0x111D0, 0x111D9, RC_DIGIT},
    {0x112F0, 0x112F9, RC_DIGIT},  {0x11450, 0x11459, RC_DIGIT},  {0x114D0, 0x114D9, RC_DIGIT},
    {0x11650, 0x11659, RC_DIGIT},  {0x116C0, 0x116C9, RC_DIGIT},  {0x11730, 0x11739, RC_DIGIT},
    {0x118E0, 0x118E9, RC_DIGIT},  {0x11950, 0x11959, RC_DIGIT},  {0x11C50, 0x11C59, RC_DIGIT},
    {0x11D50, 0x11D59, RC_DIGIT},  {0x11DA0, 0x11DA9, RC_DIGIT},  {0x16A60, 0x16A69, RC_DIGIT},
    {0x16AC0, 0x16AC9, RC_DIGIT},  {0x16B50, 0x16B59, RC_DIGIT},  {0x1D7CE, 0x1D7FF, RC_DIGIT},
    {0x1E140, 0x1E149, RC_DIGIT},  {0x1E2F0, 0x1E2F9, RC_DIGIT},  {0x1E950, 0x1E959, RC_DIGIT},
    {0x1FBF0, 0x1FBF9, RC_DIGIT},
};

static enum rclass rune_class(int32_t r)
{
    if (r < 0x80) {
        if ((r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) return RC_LETTER;
        if (r >= '0' && r <= '9') return RC_DIGIT;
        return r >= 0x20 && r < 0x7F ? RC_PRINT : RC_NONPRINT;
    }
    size_t lo = 0, hi = sizeof rune_table / sizeof rune_table[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r < rune_table[mid].lo)
            hi = mid;
        else if (r > rune_table[mid].hi)
            lo = mid + 1;
        else
            return rune_table[mid].c;
    }
    return RC_LETTER;
}

static bool is_digit_rune(int32_t r)
{
    return r >= 0 && rune_class(r) == RC_DIGIT;
}

/* client-go's isAlphaNumeric: '_', letters, digits */
static bool is_alnum_rune(int32_t r)
{
    if (r < 0) return false;
    enum rclass c = rune_class(r);
    return r == '_' || c == RC_LETTER || c == RC_DIGIT;
}

/* fmt's %#U: U+0078 'x', or U+0009 for a rune strconv.IsPrint refuses. */
static void fmt_rune_U(int32_t r, char *buf, size_t n)
{
    enum rclass c = rune_class(r);
    if (c == RC_NONPRINT) {
        snprintf(buf, n, "U+%04" PRIX32, (uint32_t)r);
        return;
    }
    char u[5] = {0};
    utf8_encode(r, u);
    snprintf(buf, n, "U+%04" PRIX32 " '%s'", (uint32_t)r, u);
}

/* unicode.IsSpace (what strings.TrimSpace and strings.Fields use). */
static bool go_is_space(int32_t r)
{
    switch (r) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
        return true;
    default:
        return r >= 0x2000 && r <= 0x200A;
    }
}

/* Width of the space rune at s[i], 0 if none. */
static size_t space_at(const char *s, size_t n, size_t i)
{
    size_t w;
    int32_t r = utf8_decode((const unsigned char *)s + i, n - i, &w);
    return go_is_space(r) ? w : 0;
}

/* strings.TrimSpace: [*b, *e) is s without leading/trailing white space. */
static void go_trim_space(const char *s, size_t n, size_t *b, size_t *e)
{
    size_t i = 0, j = n, w;
    while (i < n && (w = space_at(s, n, i)) > 0)
        i += w;
    while (j > i) {
        /* step back to the start of the last rune (at most 4 bytes) */
        size_t k = j - 1;
        while (k > i && j - k < 4 && ((unsigned char)s[k] & 0xC0) == 0x80)
            k--;
        size_t kw;
        int32_t r = utf8_decode((const unsigned char *)s + k, j - k, &kw);
        if (k + kw != j) r = R_ERROR, k = j - 1; /* not a whole rune: one bad byte */
        if (!go_is_space(r)) break;
        j = k;
    }
    *b = i;
    *e = j;
}

/* ---- Go's number parsing and printing ---- */

/* strconv.Atoi: [+-]?[0-9]+ that fits an int64. */
static bool go_atoi(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == n) return false;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (lim - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* strconv.ParseFloat for what client-go's number scanner can produce:
 * [+-]? then digits with at most one '.'. Overflow (Inf) is an error, as in
 * Go. Built as "<digits>e<exp>" so strtod never meets a decimal point (and
 * so never depends on the locale). */
static bool go_parse_float(const char *s, size_t n, double *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    char *buf = malloc(n + 32);
    if (!buf) return false;
    size_t o = 0, ndig = 0;
    long frac = 0;
    bool dot = false;
    for (; i < n; i++) {
        if (s[i] == '.') {
            if (dot) break;
            dot = true;
        } else if (s[i] >= '0' && s[i] <= '9') {
            buf[o++] = s[i];
            ndig++;
            if (dot) frac++;
        } else {
            break;
        }
    }
    bool ok = i == n && ndig > 0;
    if (ok) {
        snprintf(buf + o, 32, "e-%ld", frac);
        double v = strtod(buf, NULL);
        ok = !isinf(v);
        *out = neg ? -v : v;
    }
    free(buf);
    return ok;
}

static bool roundtrips(uint64_t m, int e, double v)
{
    char s[48];
    snprintf(s, sizeof s, "%" PRIu64 "e%d", m, e);
    return strtod(s, NULL) == v;
}

/* The shortest decimal digits that read back as v (v > 0, finite), as Go's
 * strconv finds them: v = 0.<digits> * 10^dp. */
static void float_shortest(double v, char digs[24], int *nd, int *dp)
{
    for (int p = 1; p <= 17; p++) {
        char buf[48];
        snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        uint64_t m = 0;
        int k = 0;
        const char *q = buf;
        for (; *q && *q != 'e'; q++)
            if (*q >= '0' && *q <= '9') m = m * 10 + (uint64_t)(*q - '0'), k++;
        int e10 = atoi(q + (*q == 'e'));
        int e = e10 - (k - 1);
        uint64_t pow = 1;
        for (int j = 1; j < k; j++)
            pow *= 10;
        /* the rounded candidate first, then its neighbours (Go picks the
         * closest shortest string that reads back, which near a power of two
         * may not be the rounded one) */
        uint64_t cand[3] = {m, m + 1, m - 1};
        for (int c = 0; c < 3; c++) {
            if (cand[c] < pow || cand[c] >= pow * 10) continue;
            if (!roundtrips(cand[c], e, v)) continue;
            snprintf(digs, 24, "%" PRIu64, cand[c]);
            int len = (int)strlen(digs);
            while (len > 1 && digs[len - 1] == '0')
                digs[--len] = '\0';
            *nd = len;
            *dp = e10 + 1;
            return;
        }
    }
    /* unreachable: 17 digits always read back */
    snprintf(digs, 24, "0");
    *nd = 1;
    *dp = 1;
}

static void fmt_e(char *buf, size_t n, bool neg, const char *d, int nd, int dp)
{
    int x = dp - 1;
    snprintf(buf, n, "%s%c%s%.*se%c%02d", neg ? "-" : "", d[0], nd > 1 ? "." : "", nd - 1, d + 1,
             x < 0 ? '-' : '+', x < 0 ? -x : x);
}

static void fmt_f(char *buf, size_t n, bool neg, const char *d, int nd, int dp)
{
    size_t o = 0;
    if (neg && o + 1 < n) buf[o++] = '-';
    if (dp <= 0) {
        for (const char *z = "0."; *z && o + 1 < n; z++)
            buf[o++] = *z;
        for (int i = 0; i < -dp && o + 1 < n; i++)
            buf[o++] = '0';
        for (int i = 0; i < nd && o + 1 < n; i++)
            buf[o++] = d[i];
    } else {
        for (int i = 0; i < dp && o + 1 < n; i++)
            buf[o++] = i < nd ? d[i] : '0';
        if (nd > dp && o + 1 < n) buf[o++] = '.';
        for (int i = dp; i < nd && o + 1 < n; i++)
            buf[o++] = d[i];
    }
    buf[o] = '\0';
}

/* fmt.Fprint(float64): %g with the shortest digits, %e when the exponent is
 * < -4 or >= 6 (so 1000000.0 prints 1e+06). */
static void go_float_v(double f, char *buf, size_t n)
{
    bool neg = signbit(f);
    if (f == 0) {
        snprintf(buf, n, neg ? "-0" : "0");
        return;
    }
    char d[24];
    int nd, dp;
    float_shortest(fabs(f), d, &nd, &dp);
    int x = dp - 1;
    if (x < -4 || x >= 6)
        fmt_e(buf, n, neg, d, nd, dp);
    else
        fmt_f(buf, n, neg, d, nd, dp);
}

/* encoding/json: %f, or %e below 1e-6 and from 1e21, with e-07 cut to e-7. */
static void go_float_json(double f, char *buf, size_t n)
{
    bool neg = signbit(f);
    double a = fabs(f);
    if (a == 0) {
        snprintf(buf, n, neg ? "-0" : "0");
        return;
    }
    char d[24];
    int nd, dp;
    float_shortest(a, d, &nd, &dp);
    if (a < 1e-6 || a >= 1e21) {
        fmt_e(buf, n, neg, d, nd, dp);
        size_t l = strlen(buf);
        if (l >= 4 && buf[l - 4] == 'e' && buf[l - 3] == '-' && buf[l - 2] == '0') {
            buf[l - 2] = buf[l - 1];
            buf[l - 1] = '\0';
        }
    } else {
        fmt_f(buf, n, neg, d, nd, dp);
    }
}

/* ---- the syntax tree ---- */

enum ntype {
    N_LIST,
    N_TEXT,
    N_FIELD,
    N_ARRAY,
    N_FILTER,
    N_INT,
    N_FLOAT,
    N_BOOL,
    N_WILDCARD,
    N_RECURSIVE,
    N_UNION,
    N_IDENT,
};

enum fop { OP_EXISTS, OP_LT, OP_GT, OP_EQ, OP_NE, OP_LE, OP_GE, OP_UNKNOWN, OP_AND, OP_OR };

typedef struct node node;
struct node {
    enum ntype type;
    union {
        struct {
            node **v;
            size_t n, cap;
        } list; /* N_LIST; N_UNION holds N_LISTs */
        struct {
            char *s;
            size_t len;
        } str; /* N_TEXT, N_FIELD, N_IDENT */
        struct {
            int64_t v[3];
            bool known[3];
            bool derived; /* [i] means [i:i+1], with i+1 == 0 meaning the end */
        } arr;
        struct {
            node *left, *right; /* N_LISTs */
            char *op;
            size_t oplen;
            enum fop code;
        } filter;
        int64_t i;
        double f;
        bool b;
    } u;
};

struct jp_expr {
    node *root; /* N_LIST of N_TEXT and N_LIST (one per {action}) */
    jp_limits lim;
    /* A filter on a single value filters it as a one-element list (for
     * custom quota field selectors; client-go: "is not array or slice"). */
    bool scalar_filters;
    /* An index or slice past either end of a list selects the elements that
     * exist (nothing for a single index) instead of "array index out of
     * bounds" (custom quota paths: a missing value is nothing, seed 003). */
    bool clamp_indexes;
    /* The one action when it is fields and [*] only (the usual custom quota
     * source, e.g. `.spec.containers[*].resources.requests.cpu`): summed
     * without building result lists (quantity_sum_fast). NULL otherwise. */
    const node *chain;
    bool text_chain; /* chain, and every field name as JSON text writes it */
};

static void node_free(node *n)
{
    if (!n) return;
    switch (n->type) {
    case N_LIST:
    case N_UNION:
        for (size_t i = 0; i < n->u.list.n; i++)
            node_free(n->u.list.v[i]);
        free(n->u.list.v);
        break;
    case N_TEXT:
    case N_FIELD:
    case N_IDENT:
        free(n->u.str.s);
        break;
    case N_FILTER:
        node_free(n->u.filter.left);
        node_free(n->u.filter.right);
        free(n->u.filter.op);
        break;
    default:
        break;
    }
    free(n);
}

static node *node_new(enum ntype t)
{
    node *n = calloc(1, sizeof *n);
    if (n) n->type = t;
    return n;
}

/* Takes ownership of `child`, also on failure. */
static int list_add(node *list, node *child)
{
    if (!child) return JP_ERR_NOMEM;
    if (list->u.list.n == list->u.list.cap) {
        size_t nc = list->u.list.cap ? list->u.list.cap * 2 : 4;
        node **p = realloc(list->u.list.v, nc * sizeof *p);
        if (!p) {
            node_free(child);
            return JP_ERR_NOMEM;
        }
        list->u.list.v = p;
        list->u.list.cap = nc;
    }
    list->u.list.v[list->u.list.n++] = child;
    return JP_OK;
}

static node *str_node(enum ntype t, const char *s, size_t n)
{
    node *nd = node_new(t);
    if (!nd) return NULL;
    nd->u.str.s = memdup0(s, n);
    nd->u.str.len = n;
    if (!nd->u.str.s) {
        free(nd);
        return NULL;
    }
    return nd;
}

/* ---- the parser: client-go's Parser, as loops ---- */

typedef struct parser {
    const char *in;
    size_t len, pos, start, width;
    unsigned depth; /* sub-template nesting */
    const jp_limits *lim;
    char *err;
    size_t errlen;
} parser;

static int perr(parser *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(parser *p, int code, const char *fmt, ...)
{
    if (p->err && p->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err, p->errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

static int32_t p_next(parser *p)
{
    if (p->pos >= p->len) {
        p->width = 0;
        return R_EOF;
    }
    int32_t r = utf8_decode((const unsigned char *)p->in + p->pos, p->len - p->pos, &p->width);
    p->pos += p->width;
    return r;
}

static void p_backup(parser *p)
{
    p->pos -= p->width;
}

static int32_t p_peek(parser *p)
{
    int32_t r = p_next(p);
    p_backup(p);
    return r;
}

/* consumeText: the text since the last call */
static void p_consume(parser *p, const char **s, size_t *n)
{
    if (s) *s = p->in + p->start;
    if (n) *n = p->pos - p->start;
    p->start = p->pos;
}

static bool has_prefix(const parser *p, const char *pre)
{
    size_t n = strlen(pre);
    return p->len - p->pos >= n && memcmp(p->in + p->pos, pre, n) == 0;
}

/* isTerminator: what ends a field or an identifier */
static bool is_terminator(int32_t r)
{
    switch (r) {
    case R_EOF:
    case ' ':
    case '\t':
    case '\r':
    case '\n':
    case '.':
    case ',':
    case '[':
    case ']':
    case '$':
    case '@':
    case '{':
    case '}':
        return true;
    default:
        return false;
    }
}

static int parse_template(const char *s, size_t n, unsigned depth, const jp_limits *lim, node *root,
                          char *err, size_t errlen);

/* parseAction: parse pre + s + suf (a "{...}" text) as a template of its
 * own and hand back its first action's node list (client-go drops anything
 * after it). */
static int parse_sub(parser *p, const char *pre, const char *s, size_t n, const char *suf,
                     node **out)
{
    *out = NULL;
    if (p->depth + 1 > p->lim->max_depth)
        return perr(p, JP_ERR_LIMIT, M_LIM_DEPTH, p->lim->max_depth);
    size_t pl = strlen(pre), sl = strlen(suf);
    char *t = malloc(pl + n + sl);
    node *root = node_new(N_LIST);
    if (!t || !root) {
        free(t);
        free(root);
        return perr(p, JP_ERR_NOMEM, M_NOMEM);
    }
    memcpy(t, pre, pl);
    if (n) memcpy(t + pl, s, n);
    memcpy(t + pl + n, suf, sl);
    int rc = parse_template(t, pl + n + sl, p->depth + 1, p->lim, root, p->err, p->errlen);
    free(t);
    if (rc == JP_OK) {
        /* the text starts with '{', so the first node is that action */
        *out = root->u.list.v[0];
        root->u.list.v[0] = NULL;
    }
    node_free(root);
    return rc;
}

static int parse_field(parser *p, node *cur)
{
    p_consume(p, NULL, NULL);
    for (;;) {
        int32_t r = p_next(p);
        if (r == '\\') {
            p_next(p);
        } else if (is_terminator(r)) {
            p_backup(p);
            break;
        }
    }
    const char *s;
    size_t n;
    p_consume(p, &s, &n);
    if (n == 1 && s[0] == '*') return list_add(cur, node_new(N_WILDCARD));
    node *f = str_node(N_FIELD, s, n);
    if (!f) return JP_ERR_NOMEM;
    size_t o = 0; /* client-go drops every backslash of a field name */
    for (size_t i = 0; i < n; i++)
        if (s[i] != '\\') f->u.str.s[o++] = s[i];
    f->u.str.s[o] = '\0';
    f->u.str.len = o;
    return list_add(cur, f);
}

static int parse_identifier(parser *p, node *cur)
{
    while (!is_terminator(p_next(p)))
        ;
    p_backup(p);
    const char *s;
    size_t n;
    p_consume(p, &s, &n);
    bool t = n == 4 && memcmp(s, "true", 4) == 0, f = n == 5 && memcmp(s, "false", 5) == 0;
    if (t || f) {
        node *b = node_new(N_BOOL);
        if (b) b->u.b = t;
        return list_add(cur, b);
    }
    return list_add(cur, str_node(N_IDENT, s, n));
}

static int parse_recursive(parser *p, node *cur)
{
    if (cur->u.list.n && cur->u.list.v[cur->u.list.n - 1]->type == N_RECURSIVE)
        return perr(p, JP_ERR_SYNTAX, M_MULTI_RECURSIVE);
    p->pos += 2;
    p_consume(p, NULL, NULL);
    int rc = list_add(cur, node_new(N_RECURSIVE));
    if (rc) return rc;
    if (is_alnum_rune(p_peek(p))) return parse_field(p, cur);
    return JP_OK;
}

static int parse_number(parser *p, node *cur)
{
    int32_t r = p_peek(p);
    if (r == '+' || r == '-') p_next(p);
    for (;;) {
        r = p_next(p);
        if (r != '.' && !is_digit_rune(r)) {
            p_backup(p);
            break;
        }
    }
    const char *s;
    size_t n;
    p_consume(p, &s, &n);
    int64_t i;
    double f;
    node *nd;
    if (go_atoi(s, n, &i)) {
        if ((nd = node_new(N_INT))) nd->u.i = i;
    } else if (go_parse_float(s, n, &f)) {
        if ((nd = node_new(N_FLOAT))) nd->u.f = f;
    } else {
        return perr(p, JP_ERR_SYNTAX, M_BAD_NUMBER, PREC(n), s);
    }
    return list_add(cur, nd);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* strconv.UnquoteChar's escape after the backslash at s[0]; writes the
 * bytes to o, returns bytes consumed (0: invalid syntax). */
static size_t unquote_escape(const char *s, size_t n, char quote, char *o, size_t *olen)
{
    static const char simple[] = "a\ab\bf\fn\nr\rt\tv\v\\\\";
    if (n < 2) return 0;
    char c = s[1];
    const char *sp = strchr(simple, c);
    if (c && sp && (sp - simple) % 2 == 0) {
        o[(*olen)++] = sp[1];
        return 2;
    }
    if (c == '\'' || c == '"') {
        if (c != quote) return 0;
        o[(*olen)++] = c;
        return 2;
    }
    if (c >= '0' && c <= '7') {
        if (n < 4) return 0;
        int v = c - '0';
        for (int j = 2; j < 4; j++) {
            if (s[j] < '0' || s[j] > '7') return 0;
            v = v * 8 + (s[j] - '0');
        }
        if (v > 255) return 0;
        o[(*olen)++] = (char)v;
        return 4;
    }
    int digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
    if (!digits || n < 2 + (size_t)digits) return 0;
    int32_t v = 0;
    for (int j = 0; j < digits; j++) {
        int h = hexval(s[2 + j]);
        if (h < 0 || v > 0x10FFFF) return 0;
        v = v * 16 + h;
    }
    if (c == 'x') {
        o[(*olen)++] = (char)v;
    } else {
        if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
        *olen += utf8_encode(v, o + *olen);
    }
    return 2 + (size_t)digits;
}

/* UnquoteExtend: strconv.Unquote that also takes single quotes. `s` includes
 * both quotes. Returns a malloc'd string (NULL: invalid syntax or no memory,
 * told apart by *nomem). */
static char *unquote_extend(const char *s, size_t n, size_t *olen, bool *nomem)
{
    char quote = s[0];
    const char *in = s + 1;
    size_t m = n - 2;
    char *o = malloc(3 * m + 1); /* a bad byte becomes U+FFFD: 3 bytes */
    *nomem = !o;
    if (!o) return NULL;
    *olen = 0;
    if (!memchr(in, '\\', m) && !memchr(in, quote, m)) {
        memcpy(o, in, m);
        *olen = m;
        o[m] = '\0';
        return o;
    }
    for (size_t i = 0; i < m;) {
        unsigned char c = (unsigned char)in[i];
        if (c == (unsigned char)quote) goto bad;
        if (c >= 0x80) {
            size_t w;
            int32_t r = utf8_decode((const unsigned char *)in + i, m - i, &w);
            *olen += utf8_encode(r, o + *olen);
            i += w;
        } else if (c != '\\') {
            o[(*olen)++] = (char)c;
            i++;
        } else {
            size_t used = unquote_escape(in + i, m - i, quote, o, olen);
            if (!used) goto bad;
            i += used;
        }
    }
    o[*olen] = '\0';
    return o;
bad:
    free(o);
    return NULL;
}

static int parse_quote(parser *p, node *cur, int32_t end)
{
    for (;;) {
        int32_t r = p_next(p);
        if (r == R_EOF || r == '\n') return perr(p, JP_ERR_SYNTAX, M_UNTERMINATED_QUOTE);
        if (r == end && p->in[p->pos - 2] != '\\') break;
    }
    const char *s;
    size_t n, olen;
    bool nomem;
    p_consume(p, &s, &n);
    char *u = unquote_extend(s, n, &olen, &nomem);
    if (!u)
        return nomem ? perr(p, JP_ERR_NOMEM, M_NOMEM)
                     : perr(p, JP_ERR_SYNTAX, M_UNQUOTE, PREC(n), s);
    node *t = node_new(N_TEXT);
    if (!t) {
        free(u);
        return JP_ERR_NOMEM;
    }
    t->u.str.s = u;
    t->u.str.len = olen;
    return list_add(cur, t);
}

/* sliceOperatorRex ^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$ : the three groups'
 * spans (group 2 and 3 include their ':'; absent ones are empty). */
static bool slice_groups(const char *s, size_t n, size_t b[3], size_t e[3])
{
    size_t i = 0;
    for (int g = 0; g < 3; g++) {
        b[g] = e[g] = i;
        if (g > 0) {
            if (i == n || s[i] != ':') continue;
            i++;
        }
        if (i < n && s[i] == '-') i++;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        e[g] = i;
    }
    return i == n;
}

static int parse_slice(parser *p, node *cur, const char *s, size_t n)
{
    size_t b[3], e[3];
    if (!slice_groups(s, n, b, e)) return perr(p, JP_ERR_SYNTAX, M_BAD_INDEX, PREC(n), s);
    node *a = node_new(N_ARRAY);
    if (!a) return JP_ERR_NOMEM;
    for (int i = 0; i < 3; i++) {
        const char *g = s + b[i];
        size_t gl = e[i] - b[i];
        if (gl) {
            if (i > 0) g++, gl--;
            if (i > 0 && gl == 0) continue; /* ":" alone: unknown */
            a->u.arr.known[i] = true;
            if (!go_atoi(g, gl, &a->u.arr.v[i])) {
                node_free(a);
                return perr(p, JP_ERR_SYNTAX, M_INDEX_NAN, PREC(gl), g);
            }
        } else if (i == 1) {
            a->u.arr.known[1] = true;
            a->u.arr.v[1] = wadd(a->u.arr.v[0], 1);
            a->u.arr.derived = true;
        }
    }
    return list_add(cur, a);
}

static int parse_union(parser *p, node *cur, const char *s, size_t n)
{
    node *u = node_new(N_UNION);
    if (!u) return JP_ERR_NOMEM;
    size_t i = 0;
    for (;;) {
        const char *c = memchr(s + i, ',', n - i);
        size_t j = c ? (size_t)(c - s) : n, b = i, e = j;
        while (b < e && s[b] == ' ')
            b++;
        while (e > b && s[e - 1] == ' ')
            e--;
        node *part;
        int rc = parse_sub(p, "{[", s + b, e - b, "]}", &part);
        if (rc == JP_OK) rc = list_add(u, part);
        if (rc) {
            node_free(u);
            return rc;
        }
        if (!c) break;
        i = j + 1;
    }
    return list_add(cur, u);
}

static int parse_array(parser *p, node *cur)
{
    for (;;) {
        int32_t r = p_next(p);
        if (r == R_EOF || r == '\n') return perr(p, JP_ERR_SYNTAX, M_UNTERMINATED_ARRAY);
        if (r == ']') break;
    }
    const char *s;
    size_t n;
    p_consume(p, &s, &n);
    s++, n -= 2; /* the brackets */
    if (n == 1 && s[0] == '*') s = ":";
    if (memchr(s, ',', n)) return parse_union(p, cur, s, n);
    if (n >= 2 && s[0] == '\'' && s[n - 1] == '\'' && !memchr(s + 1, '\'', n - 2)) {
        node *keys;
        int rc = parse_sub(p, "{.", s + 1, n - 2, "}", &keys);
        if (rc) return rc;
        for (size_t i = 0; i < keys->u.list.n && rc == JP_OK; i++) {
            rc = list_add(cur, keys->u.list.v[i]);
            keys->u.list.v[i] = NULL;
        }
        node_free(keys);
        return rc;
    }
    return parse_slice(p, cur, s, n);
}

static bool is_opchar(char c)
{
    return c == '!' || c == '<' || c == '>' || c == '=';
}

/* ^([^!<>=]+)([!<>=]+)(.+?)$ : split a filter into left, operator, right. */
static bool filter_split(const char *t, size_t n, size_t *opb, size_t *ope)
{
    size_t i = 0;
    while (i < n && !is_opchar(t[i]))
        i++;
    if (i == 0 || i == n) return false;
    size_t j = i;
    while (j < n && is_opchar(t[j]))
        j++;
    if (j == n) {
        if (j - i < 2) return false; /* the right side needs a character */
        j--;
    }
    *opb = i;
    *ope = j;
    return true;
}

static enum fop op_code(const char *s, size_t n)
{
    static const struct {
        const char *s;
        enum fop c;
    } ops[] = {{"<", OP_LT},  {">", OP_GT},  {"==", OP_EQ},
               {"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strlen(ops[i].s) == n && memcmp(ops[i].s, s, n) == 0) return ops[i].c;
    return OP_UNKNOWN;
}

/* Where the last top-level `op` ("&&" or "||") is in t[0..n): outside
 * quotes, brackets and parentheses; n when there is none. */
static size_t find_logic(const char *t, size_t n, const char *op)
{
    int depth = 0;
    char q = 0;
    size_t at = n;
    for (size_t i = 0; i + 1 < n; i++) {
        char c = t[i];
        if (q) {
            if (c == '\\')
                i++;
            else if (c == q)
                q = 0;
        } else if (c == '"' || c == '\'') {
            q = c;
        } else if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']' || c == '}') {
            depth--;
        } else if (depth == 0 && c == op[0] && t[i + 1] == op[1]) {
            at = i++;
        }
    }
    return at;
}

static int filter_node(parser *p, const char *t, size_t n, node **out);

/* `a && b`, `a || b` (allot's extension of kubectl's filters: || binds
 * looser than &&; both are left-associative). 1 when t has none. */
static int logic_node(parser *p, const char *t, size_t n, node **out)
{
    enum fop code = OP_OR;
    size_t at = find_logic(t, n, "||");
    if (at == n) {
        code = OP_AND;
        at = find_logic(t, n, "&&");
    }
    if (at == n) return 1;
    if (p->depth + 1 > p->lim->max_depth)
        return perr(p, JP_ERR_LIMIT, M_LIM_DEPTH, p->lim->max_depth);
    node *f = node_new(N_FILTER);
    if (!f) return JP_ERR_NOMEM;
    f->u.filter.code = code;
    p->depth++;
    int rc = filter_node(p, t, at, &f->u.filter.left);
    if (rc == JP_OK) rc = filter_node(p, t + at + 2, n - at - 2, &f->u.filter.right);
    p->depth--;
    if (rc) {
        node_free(f);
        return rc;
    }
    *out = f;
    return JP_OK;
}

static int filter_node(parser *p, const char *t, size_t n, node **out)
{
    while (n && (*t == ' ' || *t == '\t')) /* around && and || */
        t++, n--;
    while (n && (t[n - 1] == ' ' || t[n - 1] == '\t'))
        n--;
    int lr = logic_node(p, t, n, out);
    if (lr != 1) return lr;
    node *f = node_new(N_FILTER);
    if (!f) return JP_ERR_NOMEM;
    size_t ob, oe;
    int rc;
    if (!filter_split(t, n, &ob, &oe)) {
        f->u.filter.code = OP_EXISTS;
        rc = parse_sub(p, "{", t, n, "}", &f->u.filter.left);
        if (rc == JP_OK && !(f->u.filter.right = node_new(N_LIST))) rc = JP_ERR_NOMEM;
    } else {
        f->u.filter.code = op_code(t + ob, oe - ob);
        f->u.filter.op = memdup0(t + ob, oe - ob);
        f->u.filter.oplen = oe - ob;
        rc = f->u.filter.op ? parse_sub(p, "{", t, ob, "}", &f->u.filter.left) : JP_ERR_NOMEM;
        if (rc == JP_OK) rc = parse_sub(p, "{", t + oe, n - oe, "}", &f->u.filter.right);
    }
    if (rc) {
        node_free(f);
        return rc;
    }
    *out = f;
    return JP_OK;
}

static int parse_filter(parser *p, node *cur)
{
    p->pos += 3;
    p_consume(p, NULL, NULL);
    bool begin = false, end = false;
    int32_t pair = 0;
    for (;;) {
        int32_t r = p_next(p);
        if (r == R_EOF || r == '\n') return perr(p, JP_ERR_SYNTAX, M_UNTERMINATED_FILTER);
        if (r == '"' || r == '\'') {
            if (!begin) {
                begin = true;
                pair = r;
            } else if (p->in[p->pos - 2] != '\\' && r == pair) {
                end = true;
            }
        } else if (r == ')' && begin == end) {
            break;
        }
    }
    if (p_next(p) != ']') return perr(p, JP_ERR_SYNTAX, M_UNCLOSED_ARRAY);
    const char *t;
    size_t n;
    p_consume(p, &t, &n);
    node *f;
    int rc = filter_node(p, t, n - 2, &f);
    return rc ? rc : list_add(cur, f);
}

/* parseInsideAction, up to and including the closing '}' */
static int parse_action(parser *p, node *cur)
{
    for (;;) {
        int rc = JP_OK;
        if (has_prefix(p, "}")) {
            p->pos++;
            p_consume(p, NULL, NULL);
            return JP_OK;
        }
        if (has_prefix(p, "[?(")) {
            rc = parse_filter(p, cur);
        } else if (has_prefix(p, "..")) {
            rc = parse_recursive(p, cur);
        } else {
            int32_t r = p_next(p);
            if (r == R_EOF || r == '\r' || r == '\n')
                return perr(p, JP_ERR_SYNTAX, M_UNCLOSED_ACTION);
            if (r == ' ' || r == '@' || r == '$') {
                p_consume(p, NULL, NULL);
            } else if (r == '[') {
                rc = parse_array(p, cur);
            } else if (r == '"' || r == '\'') {
                rc = parse_quote(p, cur, r);
            } else if (r == '.') {
                rc = parse_field(p, cur);
            } else if (r == '+' || r == '-' || is_digit_rune(r)) {
                p_backup(p);
                rc = parse_number(p, cur);
            } else if (is_alnum_rune(r)) {
                p_backup(p);
                rc = parse_identifier(p, cur);
            } else {
                char u[32];
                fmt_rune_U(r, u, sizeof u);
                return perr(p, JP_ERR_SYNTAX, M_BAD_CHAR, u);
            }
        }
        if (rc) return rc;
    }
}

/* Parse: text outside {} becomes N_TEXT, each {action} an N_LIST of root. */
static int parse_template(const char *s, size_t n, unsigned depth, const jp_limits *lim, node *root,
                          char *err, size_t errlen)
{
    parser p = {.in = s, .len = n, .depth = depth, .lim = lim, .err = err, .errlen = errlen};
    for (;;) {
        const char *lb = memchr(s + p.pos, '{', n - p.pos);
        size_t at = lb ? (size_t)(lb - s) : n;
        if (at > p.start) {
            int rc = list_add(root, str_node(N_TEXT, s + p.start, at - p.start));
            if (rc) return perr(&p, rc, M_NOMEM);
        }
        if (!lb) return JP_OK;
        p.pos = p.start = at + 1;
        node *action = node_new(N_LIST);
        int rc = list_add(root, action);
        if (rc) return perr(&p, rc, M_NOMEM);
        rc = parse_action(&p, action);
        if (rc == JP_ERR_NOMEM) return perr(&p, rc, M_NOMEM);
        if (rc) return rc;
    }
}

/* A field name as JSON text writes it unescaped (else the text path cannot
 * compare it raw). */
static bool plain_key(const char *k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (k[i] == '"' || k[i] == '\\' || (unsigned char)k[i] < 0x20) return false;
    return true;
}

/* root's one action if it is only named fields and full slices ([*]). */
static const node *plain_chain(const node *root)
{
    if (root->u.list.n != 1 || root->u.list.v[0]->type != N_LIST) return NULL;
    const node *a = root->u.list.v[0];
    for (size_t i = 0; i < a->u.list.n; i++) {
        const node *s = a->u.list.v[i];
        bool field = s->type == N_FIELD && s->u.str.len > 0;
        bool all = s->type == N_ARRAY && !s->u.arr.known[0] && !s->u.arr.known[1] &&
                   !s->u.arr.known[2] && !s->u.arr.derived;
        if (!field && !all) return NULL;
    }
    return a->u.list.n ? a : NULL;
}

jp_expr *jp_compile_n(const char *text, size_t len, const jp_limits *limits, int *code, char *err,
                      size_t errlen)
{
    int rc;
    jp_expr *e = calloc(1, sizeof *e);
    if (!e) {
        rc = JP_ERR_NOMEM;
        seterr(err, errlen, M_NOMEM);
        goto fail;
    }
    e->lim = limits_or_default(limits);
    if (len > e->lim.max_template) {
        rc = JP_ERR_LIMIT;
        seterr(err, errlen, M_LIM_TEMPLATE, e->lim.max_template);
        goto fail;
    }
    if (!(e->root = node_new(N_LIST))) {
        rc = JP_ERR_NOMEM;
        seterr(err, errlen, M_NOMEM);
        goto fail;
    }
    rc = parse_template(text ? text : "", text ? len : 0, 0, &e->lim, e->root, err, errlen);
    if (rc) goto fail;
    e->chain = plain_chain(e->root);
    e->text_chain = e->chain != NULL;
    for (size_t i = 0; e->chain && i < e->chain->u.list.n; i++) {
        const node *s = e->chain->u.list.v[i];
        if (s->type == N_FIELD && !plain_key(s->u.str.s, s->u.str.len)) e->text_chain = false;
    }
    if (code) *code = JP_OK;
    return e;
fail:
    jp_free(e);
    if (code) *code = rc;
    return NULL;
}

jp_expr *jp_compile(const char *text, const jp_limits *limits, char *err, size_t errlen)
{
    return jp_compile_n(text, text ? strlen(text) : 0, limits, NULL, err, errlen);
}

void jp_free(jp_expr *e)
{
    if (!e) return;
    node_free(e->root);
    free(e);
}

/* ---- values ----
 * What client-go's reflect.Values are here: a borrowed json_t, or a value
 * the template made (quoted text, a number or boolean literal, a byte that
 * `.*` takes out of a string), or Go's invalid Value (the nil a {range}
 * passes down for a null item or an empty list). */

enum vkind { V_JSON, V_TEXT, V_INT, V_FLOAT, V_BOOL, V_BYTE, V_INVALID };

typedef struct jv {
    enum vkind k;
    union {
        const json_t *j;
        struct {
            const char *s;
            size_t len;
        } t;
        int64_t i; /* V_INT, V_BYTE */
        double f;
        bool b;
    } u;
} jv;

static jv jv_json(const json_t *j)
{
    jv v = {.k = V_JSON};
    v.u.j = j;
    return v;
}

static bool jv_is_null(const jv *v)
{
    return v->k == V_JSON && json_is_null(v->u.j);
}

static bool jv_string(const jv *v, const char **s, size_t *n)
{
    if (v->k == V_TEXT) {
        *s = v->u.t.s, *n = v->u.t.len;
        return true;
    }
    if (v->k == V_JSON && json_is_string(v->u.j)) {
        *s = json_string_value(v->u.j), *n = json_string_length(v->u.j);
        return true;
    }
    return false;
}

typedef struct vlist {
    jv *v;
    size_t n, cap;
} vlist;

static void vl_free(vlist *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

typedef struct ectx {
    const jp_expr *e;
    bool allow_missing;
    uint64_t steps;
    /* client-go's FindResults state */
    int begin_range, in_range, end_range;
    size_t last_end;
    bool has_last_end;
    char *err;
    size_t errlen;
} ectx;

static bool fatal(int rc)
{
    return rc == JP_ERR_LIMIT || rc == JP_ERR_NOMEM;
}

static int eerr(ectx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int eerr(ectx *c, int code, const char *fmt, ...)
{
    if (c->err && c->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

static int step(ectx *c)
{
    if (++c->steps > c->e->lim.max_steps)
        return eerr(c, JP_ERR_LIMIT, M_LIM_STEPS, c->e->lim.max_steps);
    return JP_OK;
}

static int vl_push(ectx *c, vlist *l, jv v)
{
    int rc = step(c);
    if (rc) return rc;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 4;
        jv *p = realloc(l->v, nc * sizeof *p);
        if (!p) return eerr(c, JP_ERR_NOMEM, M_NOMEM);
        l->v = p;
        l->cap = nc;
    }
    l->v[l->n++] = v;
    return JP_OK;
}

static int vl_append(ectx *c, vlist *dst, const vlist *src)
{
    for (size_t i = 0; i < src->n; i++) {
        int rc = vl_push(c, dst, src->v[i]);
        if (rc) return rc;
    }
    return JP_OK;
}

/* client-go's `return input, err`: the error results are the input (only an
 * existence filter looks at them). A limit hit while copying wins. */
static int fail_input(ectx *c, const vlist *in, vlist *out, int rc)
{
    out->n = 0;
    int rc2 = vl_append(c, out, in);
    return rc2 ? rc2 : rc;
}

/* ---- rendering: Go's fmt and encoding/json ---- */

typedef struct rend {
    dbuf b;
    int rc;
    bool truncate; /* error messages: stop quietly when full */
    bool too_deep; /* the JP_ERR_LIMIT was RENDER_MAX_DEPTH, not the size */
} rend;

static void r_add(rend *r, const char *s, size_t n)
{
    if (r->rc) return;
    if (dbuf_add(&r->b, s, n) == 0) return;
    if (r->truncate || n > r->b.max - r->b.len)
        r->rc = JP_ERR_LIMIT;
    else
        r->rc = JP_ERR_NOMEM;
}

static void r_adds(rend *r, const char *s)
{
    r_add(r, s, strlen(s));
}

static void r_int(rend *r, int64_t i)
{
    char b[24];
    snprintf(b, sizeof b, "%" PRId64, i);
    r_adds(r, b);
}

/* encoding/json's string encoder with HTML escaping (json.Marshal's default). */
static void r_json_string(rend *r, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    r_add(r, "\"", 1);
    size_t start = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            if (c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&') {
                i++;
                continue;
            }
            r_add(r, s + start, i - start);
            char e[7] = {'\\', 0};
            switch (c) {
            case '"':
            case '\\':
                e[1] = (char)c;
                r_add(r, e, 2);
                break;
            case '\b':
                r_add(r, "\\b", 2);
                break;
            case '\f':
                r_add(r, "\\f", 2);
                break;
            case '\n':
                r_add(r, "\\n", 2);
                break;
            case '\r':
                r_add(r, "\\r", 2);
                break;
            case '\t':
                r_add(r, "\\t", 2);
                break;
            default:
                memcpy(e, "\\u00", 4);
                e[4] = hex[c >> 4], e[5] = hex[c & 0xF];
                r_add(r, e, 6);
            }
            start = ++i;
            continue;
        }
        size_t w;
        int32_t rr = utf8_decode((const unsigned char *)s + i, n - i, &w);
        if (rr == R_ERROR && w == 1) {
            r_add(r, s + start, i - start);
            r_add(r, "\\ufffd", 6);
            start = i += w;
            continue;
        }
        if (rr == 0x2028 || rr == 0x2029) {
            r_add(r, s + start, i - start);
            r_add(r, rr == 0x2028 ? "\\u2028" : "\\u2029", 6);
            start = i += w;
            continue;
        }
        i += w;
    }
    r_add(r, s + start, n - start);
    r_add(r, "\"", 1);
}

typedef struct kv {
    const char *k;
    size_t klen;
    const json_t *v;
} kv;

static int kv_cmp(const void *a, const void *b)
{
    const kv *x = a, *y = b;
    size_t n = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp(x->k, y->k, n);
    if (c) return c;
    return x->klen < y->klen ? -1 : x->klen > y->klen;
}

/* An object's members sorted by key (Go sorts map keys to print them). */
static kv *sorted_members(const json_t *o, size_t *n)
{
    *n = json_object_size(o);
    kv *m = malloc((*n ? *n : 1) * sizeof *m);
    if (!m) return NULL;
    size_t i = 0;
    const char *k;
    size_t klen;
    json_t *v;
    json_object_keylen_foreach((json_t *)o, k, klen, v)
    {
        m[i].k = k, m[i].klen = klen, m[i].v = v;
        i++;
    }
    qsort(m, i, sizeof *m, kv_cmp);
    return m;
}

static void r_real_json(rend *r, double f)
{
    char b[64];
    go_float_json(f, b, sizeof b);
    r_adds(r, b);
}

/* json.Marshal of a decoded JSON value */
static void r_json(rend *r, const json_t *v, int depth)
{
    if (r->rc) return;
    if (depth > RENDER_MAX_DEPTH) {
        r->rc = JP_ERR_LIMIT;
        r->too_deep = true;
        return;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n;
        kv *m = sorted_members(v, &n);
        if (!m) {
            r->rc = JP_ERR_NOMEM;
            return;
        }
        r_add(r, "{", 1);
        for (size_t i = 0; i < n && !r->rc; i++) {
            if (i) r_add(r, ",", 1);
            r_json_string(r, m[i].k, m[i].klen);
            r_add(r, ":", 1);
            r_json(r, m[i].v, depth + 1);
        }
        r_add(r, "}", 1);
        free(m);
        break;
    }
    case JSON_ARRAY:
        r_add(r, "[", 1);
        for (size_t i = 0; i < json_array_size(v) && !r->rc; i++) {
            if (i) r_add(r, ",", 1);
            r_json(r, json_array_get(v, i), depth + 1);
        }
        r_add(r, "]", 1);
        break;
    case JSON_STRING:
        r_json_string(r, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        r_int(r, (int64_t)json_integer_value(v));
        break;
    case JSON_REAL:
        r_real_json(r, json_real_value(v));
        break;
    case JSON_TRUE:
        r_adds(r, "true");
        break;
    case JSON_FALSE:
        r_adds(r, "false");
        break;
    default:
        r_adds(r, "null");
    }
}

static void r_real_v(rend *r, double f)
{
    char b[64];
    go_float_v(f, b, sizeof b);
    r_adds(r, b);
}

/* fmt's %v of a decoded JSON value: map[k:v ...], [a b], <nil> */
static void r_gov(rend *r, const json_t *v, int depth)
{
    if (r->rc) return;
    if (depth > RENDER_MAX_DEPTH) {
        r->rc = JP_ERR_LIMIT;
        r->too_deep = true;
        return;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n;
        kv *m = sorted_members(v, &n);
        if (!m) {
            r->rc = JP_ERR_NOMEM;
            return;
        }
        r_adds(r, "map[");
        for (size_t i = 0; i < n && !r->rc; i++) {
            if (i) r_add(r, " ", 1);
            r_add(r, m[i].k, m[i].klen);
            r_add(r, ":", 1);
            r_gov(r, m[i].v, depth + 1);
        }
        r_add(r, "]", 1);
        free(m);
        break;
    }
    case JSON_ARRAY:
        r_add(r, "[", 1);
        for (size_t i = 0; i < json_array_size(v) && !r->rc; i++) {
            if (i) r_add(r, " ", 1);
            r_gov(r, json_array_get(v, i), depth + 1);
        }
        r_add(r, "]", 1);
        break;
    case JSON_STRING:
        r_add(r, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        r_int(r, (int64_t)json_integer_value(v));
        break;
    case JSON_REAL:
        r_real_v(r, json_real_value(v));
        break;
    case JSON_TRUE:
        r_adds(r, "true");
        break;
    case JSON_FALSE:
        r_adds(r, "false");
        break;
    default:
        r_adds(r, "<nil>");
    }
}

/* %v of any value (the "... cannot be filtered" message) */
static void r_value_v(rend *r, const jv *v)
{
    switch (v->k) {
    case V_JSON:
        r_gov(r, v->u.j, 0);
        break;
    case V_TEXT:
        r_add(r, v->u.t.s, v->u.t.len);
        break;
    case V_INT:
    case V_BYTE:
        r_int(r, v->u.i);
        break;
    case V_FLOAT:
        r_real_v(r, v->u.f);
        break;
    case V_BOOL:
        r_adds(r, v->u.b ? "true" : "false");
        break;
    case V_INVALID:
        r_adds(r, "<invalid reflect.Value>");
        break;
    }
}

/* PrintResults for one value: JSON for objects and arrays, fmt.Fprint else */
static void r_value_text(rend *r, const jv *v)
{
    if (v->k == V_JSON && (json_is_object(v->u.j) || json_is_array(v->u.j))) {
        r_json(r, v->u.j, 0);
        return;
    }
    if (v->k == V_INVALID) {
        r_adds(r, "<no value>");
        return;
    }
    r_value_v(r, v);
}

/* Go's type name for "%v is not array or slice" */
static const char *go_type_name(const jv *v)
{
    switch (v->k) {
    case V_JSON:
        switch (json_typeof(v->u.j)) {
        case JSON_OBJECT:
            return "map[string]interface {}";
        case JSON_STRING:
            return "string";
        case JSON_INTEGER:
            return "int64";
        case JSON_REAL:
            return "float64";
        default:
            return "bool";
        }
    case V_TEXT:
        return "string";
    case V_INT:
        return "int";
    case V_FLOAT:
        return "float64";
    case V_BOOL:
        return "bool";
    case V_BYTE:
        return "uint8";
    default:
        return "<invalid reflect.Value>"; /* client-go panics here */
    }
}

/* ---- text/template's comparisons ---- */

enum bkind { BK_INVALID, BK_BOOL, BK_INT, BK_FLOAT, BK_STRING, BK_UINT };

typedef struct bval {
    enum bkind k;
    int64_t i;
    double f;
    const char *s;
    size_t n;
    bool b;
} bval;

static bval basic(const jv *v)
{
    bval b = {BK_INVALID, 0, 0, NULL, 0, false};
    if (jv_string(v, &b.s, &b.n)) {
        b.k = BK_STRING;
        return b;
    }
    switch (v->k) {
    case V_JSON:
        if (json_is_integer(v->u.j)) b.k = BK_INT, b.i = (int64_t)json_integer_value(v->u.j);
        if (json_is_real(v->u.j)) b.k = BK_FLOAT, b.f = json_real_value(v->u.j);
        if (json_is_boolean(v->u.j)) b.k = BK_BOOL, b.b = json_is_true(v->u.j);
        break;
    case V_INT:
        b.k = BK_INT, b.i = v->u.i;
        break;
    case V_BYTE:
        b.k = BK_UINT, b.i = v->u.i;
        break;
    case V_FLOAT:
        b.k = BK_FLOAT, b.f = v->u.f;
        break;
    case V_BOOL:
        b.k = BK_BOOL, b.b = v->u.b;
        break;
    default:
        break;
    }
    return b;
}

static int str_cmp(const bval *a, const bval *b)
{
    size_t n = a->n < b->n ? a->n : b->n;
    int c = n ? memcmp(a->s, b->s, n) : 0;
    if (c) return c;
    return a->n < b->n ? -1 : a->n > b->n;
}

/* eq: 0/1, or a negative code with the message set */
static int cmp_eq(ectx *c, const jv *x, const jv *y)
{
    bval a = basic(x), b = basic(y);
    if (a.k == BK_INVALID || b.k == BK_INVALID) return eerr(c, JP_ERR_EVAL, M_BAD_CMP_TYPE);
    if (a.k != b.k) {
        if (a.k == BK_INT && b.k == BK_UINT) return a.i >= 0 && a.i == b.i;
        if (a.k == BK_UINT && b.k == BK_INT) return b.i >= 0 && a.i == b.i;
        return eerr(c, JP_ERR_EVAL, M_BAD_CMP);
    }
    switch (a.k) {
    case BK_BOOL:
        return a.b == b.b;
    case BK_FLOAT:
        return a.f == b.f;
    case BK_STRING:
        return str_cmp(&a, &b) == 0;
    default:
        return a.i == b.i;
    }
}

static int cmp_lt(ectx *c, const jv *x, const jv *y)
{
    bval a = basic(x), b = basic(y);
    if (a.k == BK_INVALID || b.k == BK_INVALID) return eerr(c, JP_ERR_EVAL, M_BAD_CMP_TYPE);
    if (a.k != b.k) {
        if (a.k == BK_INT && b.k == BK_UINT) return a.i < 0 || a.i < b.i;
        if (a.k == BK_UINT && b.k == BK_INT) return b.i >= 0 && a.i < b.i;
        return eerr(c, JP_ERR_EVAL, M_BAD_CMP);
    }
    switch (a.k) {
    case BK_BOOL:
        return eerr(c, JP_ERR_EVAL, M_BAD_CMP_TYPE);
    case BK_FLOAT:
        return a.f < b.f;
    case BK_STRING:
        return str_cmp(&a, &b) < 0;
    default:
        return a.i < b.i;
    }
}

static int compare(ectx *c, enum fop op, const jv *x, const jv *y)
{
    int r;
    switch (op) {
    case OP_LT:
        return cmp_lt(c, x, y);
    case OP_EQ:
        return cmp_eq(c, x, y);
    case OP_NE:
        return (r = cmp_eq(c, x, y)) < 0 ? r : !r;
    case OP_GE:
        return (r = cmp_lt(c, x, y)) < 0 ? r : !r;
    case OP_LE:
        return (r = cmp_lt(c, x, y)) != 0 ? r : cmp_eq(c, x, y);
    case OP_GT:
        if ((r = cmp_lt(c, x, y)) < 0) return r;
        if (r == 0 && (r = cmp_eq(c, x, y)) < 0) return r;
        return !r;
    default:
        return JP_ERR_EVAL;
    }
}

/* ---- evaluation: client-go's walk ---- */

static int walk(ectx *c, const vlist *in, const node *n, vlist *out);

/* evalList: each node's output is the next one's input; an empty list is
 * the input itself (`{@}`). On error, the results of the failing node. */
static int eval_list(ectx *c, const vlist *in, const node *list, vlist *out)
{
    vlist cur = {0};
    const vlist *src = in;
    for (size_t i = 0; i < list->u.list.n; i++) {
        vlist next = {0};
        int rc = walk(c, src, list->u.list.v[i], &next);
        vl_free(&cur);
        cur = next;
        src = &cur;
        if (rc) {
            *out = cur;
            return rc;
        }
    }
    if (src == in) return vl_append(c, out, in);
    *out = cur;
    return JP_OK;
}

static int eval_field(ectx *c, const vlist *in, const node *n, vlist *out)
{
    if (in->n == 0) return JP_OK;
    for (size_t i = 0; i < in->n; i++) {
        const jv *v = &in->v[i];
        if (v->k != V_JSON || !json_is_object(v->u.j)) continue;
        const json_t *r = json_object_getn(v->u.j, n->u.str.s, n->u.str.len);
        if (!r) continue;
        int rc = vl_push(c, out, jv_json(r));
        if (rc) return rc;
    }
    if (out->n == 0 && !c->allow_missing)
        return eerr(c, JP_ERR_EVAL, M_NOT_FOUND, PREC(n->u.str.len), n->u.str.s);
    return JP_OK;
}

/* One array's [start:end:step]; 1 when the slice is empty (skip it). */
static int slice_bounds(ectx *c, const node *n, size_t len, int64_t *b, int64_t *e, int64_t *st)
{
    int64_t l = (int64_t)len;
    int64_t p0 = n->u.arr.known[0] ? n->u.arr.v[0] : 0;
    if (p0 < 0) p0 = wadd(p0, l);
    int64_t p1 = n->u.arr.known[1] ? n->u.arr.v[1] : l;
    if (p1 < 0 || (p1 == 0 && n->u.arr.derived)) p1 = wadd(p1, l);
    if (p1 == p0) return 1; /* requesting zero elements is allowed */
    if (c->e->clamp_indexes) {
        if (n->u.arr.derived && (p0 < 0 || p0 >= l)) return 1; /* [i] past an end */
        p0 = p0 < 0 ? 0 : p0 > l ? l : p0;
        p1 = p1 < 0 ? 0 : p1 > l ? l : p1;
        if (p0 >= p1) return 1;
    }
    if (p0 >= l || p0 < 0) return eerr(c, JP_ERR_EVAL, M_OUT_OF_BOUNDS, p0, len);
    if (p1 > l || p1 < 0) return eerr(c, JP_ERR_EVAL, M_OUT_OF_BOUNDS, wadd(p1, -1), len);
    if (p0 > p1) return eerr(c, JP_ERR_EVAL, M_START_AFTER_END, p0, p1);
    *st = 1;
    if (n->u.arr.known[2]) {
        if (n->u.arr.v[2] <= 0) return eerr(c, JP_ERR_EVAL, M_STEP);
        *st = n->u.arr.v[2];
    }
    *b = p0;
    *e = p1;
    return 0;
}

static int eval_array(ectx *c, const vlist *in, const node *n, vlist *out)
{
    for (size_t i = 0; i < in->n; i++) {
        const jv *v = &in->v[i];
        if (jv_is_null(v)) continue;
        if (v->k != V_JSON || !json_is_array(v->u.j))
            return fail_input(c, in, out, eerr(c, JP_ERR_EVAL, M_NOT_ARRAY, go_type_name(v)));
        int64_t b = 0, e = 0, st = 1;
        int rc = slice_bounds(c, n, json_array_size(v->u.j), &b, &e, &st);
        if (rc == 1) continue;
        if (rc) return fail_input(c, in, out, rc);
        for (int64_t k = b; k < e; k = e - k <= st ? e : k + st) {
            rc = vl_push(c, out, jv_json(json_array_get(v->u.j, (size_t)k)));
            if (rc) return rc;
        }
    }
    return JP_OK;
}

static int not_filterable(ectx *c, const jv *v)
{
    rend r = {.truncate = true};
    dbuf_init(&r.b, ERRVAL_MAX);
    r_value_v(&r, v);
    int rc = eerr(c, JP_ERR_EVAL, M_NOT_FILTERABLE, r.b.p ? r.b.p : "");
    dbuf_free(&r.b);
    return rc;
}

/* One side of a comparison: exactly one value, or skip (1), or an error. */
static int one_side(ectx *c, const vlist *elem, const node *side, vlist *res)
{
    int rc = eval_list(c, elem, side, res);
    if (rc) return rc;
    if (res->n == 0) return 1;
    if (res->n > 1) return eerr(c, JP_ERR_EVAL, M_COMPARE_ONE);
    return JP_OK;
}

/* Does one array element pass? 1/0, or a code (`partial`: client-go keeps
 * the results so far rather than returning its input). */
static int filter_one(ectx *c, const node *n, const jv *e, bool *partial)
{
    vlist elem = {(jv *)e, 1, 1}, lefts = {0}, rights = {0};
    int rc;
    if (n->u.filter.code == OP_AND || n->u.filter.code == OP_OR) {
        bool pl = false;
        rc = filter_one(c, n->u.filter.left, e, &pl);
        if (rc < 0 || rc == (n->u.filter.code == OP_OR)) return rc;
        return filter_one(c, n->u.filter.right, e, partial);
    }
    if (n->u.filter.code == OP_EXISTS) {
        /* an error here is ignored: only whether anything came out counts */
        rc = eval_list(c, &elem, n->u.filter.left, &lefts);
        rc = fatal(rc) ? rc : lefts.n > 0;
        goto done;
    }
    rc = one_side(c, &elem, n->u.filter.left, &lefts);
    if (rc == JP_OK) rc = one_side(c, &elem, n->u.filter.right, &rights);
    if (rc) {
        if (rc == 1) rc = 0; /* a side with no value: the element is skipped */
        goto done;
    }
    *partial = true;
    if (n->u.filter.code == OP_UNKNOWN)
        rc = eerr(c, JP_ERR_EVAL, M_BAD_OPERATOR, PREC(n->u.filter.oplen), n->u.filter.op);
    else
        rc = compare(c, n->u.filter.code, &lefts.v[0], &rights.v[0]);
done:
    vl_free(&lefts);
    vl_free(&rights);
    return rc;
}

static int eval_filter(ectx *c, const vlist *in, const node *n, vlist *out)
{
    for (size_t i = 0; i < in->n; i++) {
        const jv *v = &in->v[i];
        if (v->k == V_JSON && !json_is_array(v->u.j) && c->e->scalar_filters) {
            jv e = *v;
            bool partial = false;
            int rc = step(c);
            if (rc == JP_OK) rc = filter_one(c, n, &e, &partial);
            if (rc == 1) rc = vl_push(c, out, e);
            if (rc < 0) return fatal(rc) || partial ? rc : fail_input(c, in, out, rc);
            continue;
        }
        if (v->k != V_JSON || !json_is_array(v->u.j))
            return fail_input(c, in, out, not_filterable(c, v));
        for (size_t k = 0; k < json_array_size(v->u.j); k++) {
            jv e = jv_json(json_array_get(v->u.j, k));
            bool partial = false;
            int rc = step(c);
            if (rc == JP_OK) rc = filter_one(c, n, &e, &partial);
            if (rc == 1) rc = vl_push(c, out, e);
            if (rc < 0) return fatal(rc) || partial ? rc : fail_input(c, in, out, rc);
        }
    }
    return JP_OK;
}

static int push_literal(ectx *c, const vlist *in, jv v, vlist *out)
{
    for (size_t i = 0; i < in->n; i++) {
        int rc = vl_push(c, out, v);
        if (rc) return rc;
    }
    return JP_OK;
}

static int push_bytes(ectx *c, const char *s, size_t n, vlist *out)
{
    for (size_t i = 0; i < n; i++) {
        jv b = {.k = V_BYTE};
        b.u.i = (unsigned char)s[i];
        int rc = vl_push(c, out, b);
        if (rc) return rc;
    }
    return JP_OK;
}

static int push_children(ectx *c, const json_t *j, vlist *out)
{
    int rc = JP_OK;
    if (json_is_object(j)) {
        for (void *it = json_object_iter((json_t *)j); it && !rc;
             it = json_object_iter_next((json_t *)j, it))
            rc = vl_push(c, out, jv_json(json_object_iter_value(it)));
    } else if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j) && !rc; i++)
            rc = vl_push(c, out, jv_json(json_array_get(j, i)));
    }
    return rc;
}

/* evalWildcard: an object's values, an array's elements, a string's bytes */
static int eval_wildcard(ectx *c, const vlist *in, vlist *out)
{
    for (size_t i = 0; i < in->n; i++) {
        const char *s;
        size_t n;
        int rc = jv_string(&in->v[i], &s, &n) ? push_bytes(c, s, n, out)
                 : in->v[i].k == V_JSON       ? push_children(c, in->v[i].u.j, out)
                                              : JP_OK;
        if (rc) return rc;
    }
    return JP_OK;
}

static bool has_children(const jv *v)
{
    const char *s;
    size_t n;
    if (jv_string(v, &s, &n)) return n > 0;
    if (v->k != V_JSON) return false;
    if (json_is_object(v->u.j)) return json_object_size(v->u.j) > 0;
    return json_is_array(v->u.j) && json_array_size(v->u.j) > 0;
}

typedef struct frame {
    const json_t *j;
    size_t i;
    void *it;
} frame;

/* Next child of the container on top of the stack, NULL when done. */
static const json_t *frame_next(frame *f)
{
    if (json_is_array(f->j))
        return f->i < json_array_size(f->j) ? json_array_get(f->j, f->i++) : NULL;
    f->it =
        f->i++ ? json_object_iter_next((json_t *)f->j, f->it) : json_object_iter((json_t *)f->j);
    return f->it ? json_object_iter_value(f->it) : NULL;
}

/* evalRecursive, depth first and pre-order like client-go's recursion, on a
 * heap stack: a value is output when it has children (non-empty containers
 * and strings; a string's children are bytes, which have none). */
static int descend(ectx *c, const json_t *root, vlist *out)
{
    frame *st = malloc(16 * sizeof *st);
    size_t n = 1, cap = 16;
    int rc = JP_OK;
    if (!st) return eerr(c, JP_ERR_NOMEM, M_NOMEM);
    st[0] = (frame){root, 0, NULL};
    while (n && !rc) {
        const json_t *ch = frame_next(&st[n - 1]);
        if (!ch) {
            n--;
            continue;
        }
        jv v = jv_json(ch);
        if ((rc = step(c)) || !has_children(&v)) continue;
        if ((rc = vl_push(c, out, v)) || json_is_string(ch)) continue;
        if (n == cap) {
            frame *p = realloc(st, cap * 2 * sizeof *st);
            if (!p) {
                rc = eerr(c, JP_ERR_NOMEM, M_NOMEM);
                break;
            }
            st = p, cap *= 2;
        }
        st[n++] = (frame){ch, 0, NULL};
    }
    free(st);
    return rc;
}

static int eval_recursive(ectx *c, const vlist *in, vlist *out)
{
    for (size_t i = 0; i < in->n; i++) {
        const jv *v = &in->v[i];
        if (!has_children(v)) continue;
        int rc = vl_push(c, out, *v);
        if (rc == JP_OK && v->k == V_JSON && !json_is_string(v->u.j)) rc = descend(c, v->u.j, out);
        if (rc) return rc;
    }
    return JP_OK;
}

static int eval_union(ectx *c, const vlist *in, const node *n, vlist *out)
{
    for (size_t i = 0; i < n->u.list.n; i++) {
        vlist part = {0};
        int rc = eval_list(c, in, n->u.list.v[i], &part);
        if (rc == JP_OK) rc = vl_append(c, out, &part);
        vl_free(&part);
        if (rc) return fatal(rc) ? rc : fail_input(c, in, out, rc);
    }
    return JP_OK;
}

static bool ident_is(const node *n, const char *s)
{
    return n->u.str.len == strlen(s) && memcmp(n->u.str.s, s, n->u.str.len) == 0;
}

static int eval_ident(ectx *c, const vlist *in, const node *n, vlist *out)
{
    if (ident_is(n, "range")) {
        c->begin_range++;
        return vl_append(c, out, in);
    }
    if (ident_is(n, "end")) {
        if (c->in_range > 0) {
            c->end_range++;
            return JP_OK;
        }
        return eerr(c, JP_ERR_EVAL, M_NOT_IN_RANGE);
    }
    return fail_input(c, in, out,
                      eerr(c, JP_ERR_EVAL, M_BAD_IDENT, PREC(n->u.str.len), n->u.str.s));
}

static int walk(ectx *c, const vlist *in, const node *n, vlist *out)
{
    jv lit = {.k = V_INT};
    switch (n->type) {
    case N_LIST:
        return eval_list(c, in, n, out);
    case N_TEXT:
        lit.k = V_TEXT;
        lit.u.t.s = n->u.str.s, lit.u.t.len = n->u.str.len;
        return vl_push(c, out, lit);
    case N_FIELD:
        return eval_field(c, in, n, out);
    case N_ARRAY:
        return eval_array(c, in, n, out);
    case N_FILTER:
        return eval_filter(c, in, n, out);
    case N_INT:
        lit.u.i = n->u.i;
        return push_literal(c, in, lit, out);
    case N_FLOAT:
        lit.k = V_FLOAT, lit.u.f = n->u.f;
        return push_literal(c, in, lit, out);
    case N_BOOL:
        lit.k = V_BOOL, lit.u.b = n->u.b;
        return push_literal(c, in, lit, out);
    case N_WILDCARD:
        return eval_wildcard(c, in, out);
    case N_RECURSIVE:
        return eval_recursive(c, in, out);
    case N_UNION:
        return eval_union(c, in, n, out);
    case N_IDENT:
        return eval_ident(c, in, n, out);
    }
    return JP_OK;
}

/* ---- FindResults: the template's parts, with range/end ---- */

typedef struct groups {
    vlist *g;
    size_t n, cap;
} groups;

static void groups_free(groups *g)
{
    for (size_t i = 0; i < g->n; i++)
        vl_free(&g->g[i]);
    free(g->g);
    g->g = NULL;
    g->n = g->cap = 0;
}

/* Takes `l` (also on failure). */
static int groups_add(ectx *c, groups *g, vlist *l)
{
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 8;
        vlist *p = realloc(g->g, nc * sizeof *p);
        if (!p) {
            vl_free(l);
            return eerr(c, JP_ERR_NOMEM, M_NOMEM);
        }
        g->g = p;
        g->cap = nc;
    }
    g->g[g->n++] = *l;
    *l = (vlist){0};
    return JP_OK;
}

/* value.Interface() then reflect.ValueOf: a null item becomes Go's nil */
static jv range_value(const jv *v)
{
    if (jv_is_null(v)) return (jv){.k = V_INVALID};
    return *v;
}

static int find_results(ectx *c, size_t first, jv data, groups *out);

/* A {range}: the rest of the template once per item (or once on nil, its
 * output dropped, when there is none), then skip to the matching {end}. */
static int run_range(ectx *c, size_t *i, vlist *items, groups *out)
{
    const node *root = c->e->root;
    int rc = JP_OK;
    c->begin_range--;
    if ((unsigned)++c->in_range > c->e->lim.max_depth)
        return eerr(c, JP_ERR_LIMIT, M_LIM_DEPTH, c->e->lim.max_depth);
    if (items->n == 0) rc = find_results(c, *i + 1, (jv){.k = V_INVALID}, NULL);
    for (size_t k = 0; k < items->n && rc == JP_OK; k++)
        rc = find_results(c, *i + 1, range_value(&items->v[k]), out);
    if (rc) return rc;
    c->in_range--;
    for (size_t k = *i + 1; k < root->u.list.n; k++) {
        if (c->has_last_end && k == c->last_end) {
            *i = k;
            break;
        }
    }
    return JP_OK;
}

/* `out` NULL: evaluate for the errors only. */
static int find_results(ectx *c, size_t first, jv data, groups *out)
{
    const node *root = c->e->root;
    vlist cur = {0};
    int rc = vl_push(c, &cur, data);
    for (size_t i = first; rc == JP_OK && i < root->u.list.n; i++) {
        vlist res = {0};
        rc = walk(c, &cur, root->u.list.v[i], &res);
        if (rc == JP_OK && c->end_range > 0 && c->end_range <= c->in_range) {
            c->end_range--;
            c->last_end = i;
            c->has_last_end = true;
            vl_free(&res);
            break;
        }
        if (rc == JP_OK && c->begin_range > 0)
            rc = run_range(c, &i, &res, out);
        else if (rc == JP_OK && out)
            rc = groups_add(c, out, &res);
        vl_free(&res);
    }
    vl_free(&cur);
    return rc;
}

static int run(const jp_expr *e, const json_t *obj, bool allow_missing, groups *g, char *err,
               size_t errlen)
{
    ectx c = {.e = e, .allow_missing = allow_missing, .err = err, .errlen = errlen};
    jv root = obj ? jv_json(obj) : (jv){.k = V_INVALID};
    int rc = find_results(&c, 0, root, g);
    if (rc) groups_free(g);
    return rc;
}

int jp_eval_text(const jp_expr *e, const json_t *obj, bool allow_missing, char **out,
                 size_t *outlen, char *err, size_t errlen)
{
    groups g = {0};
    *out = NULL;
    int rc = run(e, obj, allow_missing, &g, err, errlen);
    if (rc) return rc;
    rend r = {0};
    dbuf_init(&r.b, e->lim.max_output);
    for (size_t i = 0; i < g.n && !r.rc; i++) {
        for (size_t k = 0; k < g.g[i].n; k++) {
            if (k) r_add(&r, " ", 1);
            r_value_text(&r, &g.g[i].v[k]);
        }
    }
    groups_free(&g);
    if (r.rc == JP_OK && !(*out = dbuf_take(&r.b, outlen))) r.rc = JP_ERR_NOMEM;
    dbuf_free(&r.b);
    if (r.rc == JP_ERR_NOMEM)
        seterr(err, errlen, M_NOMEM);
    else if (r.rc == JP_ERR_LIMIT && r.too_deep)
        seterr(err, errlen, M_LIM_VALUE_DEPTH, RENDER_MAX_DEPTH);
    else if (r.rc == JP_ERR_LIMIT)
        seterr(err, errlen, M_LIM_OUTPUT, e->lim.max_output);
    return r.rc;
}

/* ---- FindResults as json_t values ---- */

struct jp_results {
    struct {
        const json_t **v;
        size_t n;
    } * g;
    size_t ng;
    json_t **owned; /* values made for literals, freed with the results */
    size_t nowned;
};

void jp_results_free(jp_results *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->ng; i++)
        free(r->g[i].v);
    for (size_t i = 0; i < r->nowned; i++)
        json_decref(r->owned[i]);
    free(r->g);
    free(r->owned);
    free(r);
}

static json_t *literal_json(const jv *v)
{
    switch (v->k) {
    case V_TEXT:
        return json_stringn_nocheck(v->u.t.s, v->u.t.len);
    case V_INT:
    case V_BYTE:
        return json_integer(v->u.i);
    case V_FLOAT:
        return json_real(v->u.f);
    case V_BOOL:
        return json_boolean(v->u.b);
    default:
        return json_null();
    }
}

static int results_fill(jp_results *r, const groups *g, size_t total)
{
    r->g = calloc(g->n ? g->n : 1, sizeof *r->g);
    r->owned = calloc(total ? total : 1, sizeof *r->owned);
    if (!r->g || !r->owned) return JP_ERR_NOMEM;
    for (size_t i = 0; i < g->n; i++) {
        r->g[i].v = calloc(g->g[i].n ? g->g[i].n : 1, sizeof *r->g[i].v);
        if (!r->g[i].v) return JP_ERR_NOMEM;
        r->ng++;
        for (size_t k = 0; k < g->g[i].n; k++) {
            const jv *v = &g->g[i].v[k];
            json_t *j = v->k == V_JSON ? NULL : literal_json(v);
            if (v->k != V_JSON && !j) return JP_ERR_NOMEM;
            if (j) r->owned[r->nowned++] = j;
            r->g[i].v[k] = j ? j : v->u.j;
            r->g[i].n++;
        }
    }
    return JP_OK;
}

int jp_find(const jp_expr *e, const json_t *obj, bool allow_missing, jp_results **out, char *err,
            size_t errlen)
{
    groups g = {0};
    *out = NULL;
    int rc = run(e, obj, allow_missing, &g, err, errlen);
    if (rc) return rc;
    size_t total = 0;
    for (size_t i = 0; i < g.n; i++)
        total += g.g[i].n;
    jp_results *r = calloc(1, sizeof *r);
    rc = r ? results_fill(r, &g, total) : JP_ERR_NOMEM;
    groups_free(&g);
    if (rc) {
        jp_results_free(r);
        seterr(err, errlen, M_NOMEM);
        return rc;
    }
    *out = r;
    return JP_OK;
}

size_t jp_results_ngroups(const jp_results *r)
{
    return r ? r->ng : 0;
}

size_t jp_results_group_len(const jp_results *r, size_t group)
{
    return r && group < r->ng ? r->g[group].n : 0;
}

const json_t *jp_results_get(const jp_results *r, size_t group, size_t i)
{
    if (!r || group >= r->ng || i >= r->g[group].n) return NULL;
    return r->g[group].v[i];
}

/* ---- Capsule: source paths ---- */

int jp_validate_source_path(const char *path, char *err, size_t errlen)
{
    int code;
    jp_expr *e = jp_compile_source_path(path, &code, err, errlen);
    jp_free(e);
    return code;
}

/* validateSourcePath on the trimmed path: the broken rule's text, or NULL */
static const char *source_rule_broken(const char *p, size_t n)
{
    if (n == 0) return M_SRC_EMPTY;
    if (n > JP_SOURCE_PATH_MAX) return M_SRC_LONG;
    if (p[0] != '.') return M_SRC_DOT;
    for (size_t i = 0; i < n; i++)
        if (p[i] == '\r' || p[i] == '\n' || p[i] == '\t') return M_SRC_CONTROL;
    for (size_t i = 0; i < n; i++)
        if (p[i] == '{' || p[i] == '}') return M_SRC_BRACES;
    return NULL;
}

/* `parse usage jsonpath %q: %v` */
static void source_parse_error(const char *p, size_t n, const char *msg, char *err, size_t errlen)
{
    size_t qn = 4 * n + 3;
    char *path = memdup0(p, n), *q = malloc(qn);
    if (path && q)
        seterr(err, errlen, M_SRC_PARSE, name_go_quote(path, q, qn), msg);
    else
        seterr(err, errlen, M_NOMEM);
    free(path);
    free(q);
}

int jp_source_path_rules(const char *path, char *err, size_t errlen)
{
    size_t b, e;
    const char *p = path ? path : "";
    go_trim_space(p, strlen(p), &b, &e);
    const char *broken = source_rule_broken(p + b, e - b);
    if (!broken) return JP_OK;
    seterr(err, errlen, "%s", broken);
    return JP_ERR_INVALID;
}

jp_expr *jp_compile_source_path(const char *path, int *code, char *err, size_t errlen)
{
    size_t b, e, n = path ? strlen(path) : 0;
    int rc;
    go_trim_space(path ? path : "", n, &b, &e);
    const char *p = path ? path + b : "";
    n = e - b;
    const char *broken = source_rule_broken(p, n);
    if (broken) {
        seterr(err, errlen, "%s", broken);
        if (code) *code = JP_ERR_INVALID;
        return NULL;
    }
    char wrapped[JP_SOURCE_PATH_MAX + 3], msg[2048];
    wrapped[0] = '{';
    memcpy(wrapped + 1, p, n);
    wrapped[n + 1] = '}';
    jp_limits lim = jp_default_limits();
    lim.max_template = JP_SOURCE_PATH_MAX + 2;
    jp_expr *x = jp_compile_n(wrapped, n + 2, &lim, &rc, msg, sizeof msg);
    if (!x) source_parse_error(p, n, msg, err, errlen);
    if (x) x->clamp_indexes = true; /* docs/custom-quotas.md: missing values */
    if (code) *code = rc;
    return x;
}

/* CompiledJSONPath.Execute, keeping the length (the text may hold NULs). */
static int source_eval_n(const jp_expr *e, const json_t *obj, char **out, size_t *outlen, char *err,
                         size_t errlen)
{
    char msg[1024];
    size_t len, b, end;
    char *s;
    *out = NULL;
    int rc = jp_eval_text(e, obj, true, &s, &len, msg, sizeof msg);
    if (rc) {
        seterr(err, errlen, M_SRC_EXEC, msg);
        return rc;
    }
    go_trim_space(s, len, &b, &end);
    memmove(s, s + b, end - b);
    s[end - b] = '\0';
    *out = s;
    *outlen = end - b;
    return JP_OK;
}

int jp_source_eval(const jp_expr *e, const json_t *obj, char **out, char *err, size_t errlen)
{
    size_t len;
    return source_eval_n(e, obj, out, &len, err, errlen);
}

/* ---- Capsule: quantities ---- */

static int bad_quantity(const char *tok, size_t n, int qerr, char *err, size_t errlen)
{
    size_t qn = 4 * n + 3;
    char *t = memdup0(tok, n), *q = malloc(qn);
    if (t && q)
        seterr(err, errlen, M_QTY_BAD, name_go_quote(t, q, qn), qty_strerror(qerr));
    else
        seterr(err, errlen, M_NOMEM);
    free(t);
    free(q);
    return t && q ? JP_ERR_QUANTITY : JP_ERR_NOMEM;
}

/* The quantities of text (split on Unicode white space) added to sum; *ntok
 * counts them. */
static int add_quantities(const char *text, size_t len, qty *sum, size_t *ntok, char *err,
                          size_t errlen)
{
    size_t i = 0;
    while (i < len) {
        size_t w;
        if ((w = space_at(text, len, i))) {
            i += w;
            continue;
        }
        size_t start = i;
        while (i < len && !space_at(text, len, i)) {
            utf8_decode((const unsigned char *)text + i, len - i, &w);
            i += w;
        }
        qty q;
        int qe = qty_parse_len(text + start, i - start, &q);
        if (qe) return bad_quantity(text + start, i - start, qe, err, errlen);
        if (qty_add(sum, &q)) {
            seterr(err, errlen, M_QTY_SUM);
            return JP_ERR_QUANTITY;
        }
        (*ntok)++;
    }
    return JP_OK;
}

int jp_parse_quantities(const char *text, size_t len, qty *sum, char *err, size_t errlen)
{
    size_t ntok = 0;
    *sum = qty_zero(QTY_DECIMAL_SI);
    int rc = add_quantities(text, len, sum, &ntok, err, errlen);
    if (rc == JP_OK && ntok == 0) {
        seterr(err, errlen, M_QTY_NONE);
        rc = JP_ERR_QUANTITY;
    }
    return rc;
}

/* One plain quantity string, added to sum: 0, or 1 for the slow path. */
static int add_plain(const json_t *v, qty *sum)
{
    const char *str = json_string_value(v);
    size_t n = str ? json_string_length(v) : 0;
    qty q;
    if (!n || strcspn(str, " \t\n\v\f\r") != n || qty_parse_len(str, n, &q) != 0 ||
        qty_add(sum, &q) != 0)
        return 1;
    return 0;
}

/* The chain's steps from i on, under v, as eval_field and eval_array walk
 * them: a field of anything but an object and a missing field yield
 * nothing, a slice of null nothing, a slice of any other non-array is an
 * error (1: the slow path words it). */
static int chain_sum(const node *a, size_t i, const json_t *v, qty *sum, size_t *seen)
{
    if (i == a->u.list.n) {
        (*seen)++;
        return add_plain(v, sum);
    }
    const node *s = a->u.list.v[i];
    if (s->type == N_FIELD) {
        const json_t *r = json_is_object(v) ? json_object_getn(v, s->u.str.s, s->u.str.len) : NULL;
        return r ? chain_sum(a, i + 1, r, sum, seen) : 0;
    }
    if (json_is_null(v)) return 0;
    if (!json_is_array(v)) return 1;
    for (size_t k = 0; k < json_array_size(v); k++)
        if (chain_sum(a, i + 1, json_array_get(v, k), sum, seen)) return 1;
    return 0;
}

/* chain_sum over JSON text (core/jsontext.h): the same walk, the same
 * answers; 1 also where the text cannot tell (an escape in a key or value). */
static int add_plain_text(jt_val v, qty *sum)
{
    const char *str;
    size_t n;
    qty q;
    if (jt_string(v, &str, &n) != 0 || !n) return 1;
    for (size_t i = 0; i < n; i++)
        if (strchr(" \t\n\v\f\r", str[i]) || !str[i]) return 1; /* (as add_plain's strcspn) */
    return qty_parse_len(str, n, &q) != 0 || qty_add(sum, &q) != 0;
}

static int chain_sum_text(const node *a, size_t i, jt_val v, qty *sum, size_t *seen)
{
    if (i == a->u.list.n) {
        (*seen)++;
        return add_plain_text(v, sum);
    }
    const node *s = a->u.list.v[i];
    char kind = jt_kind(v);
    if (s->type == N_FIELD) {
        jt_val r;
        int found = kind == '{' ? jt_member(v, s->u.str.s, s->u.str.len, &r) : 0;
        return found < 0 ? 1 : found ? chain_sum_text(a, i + 1, r, sum, seen) : 0;
    }
    if (kind == 'n') return 0;
    if (kind != '[') return 1;
    jt_val el;
    int r;
    for (const char *it = NULL; (r = jt_next(v, &it, &el)) > 0;)
        if (chain_sum_text(a, i + 1, el, sum, seen)) return 1;
    return r < 0;
}

int jp_quantity_sum_text(const jp_expr *e, const char *text, size_t len, qty *sum)
{
    if (!e->text_chain) return 1;
    size_t seen = 0;
    *sum = qty_zero(QTY_DECIMAL_SI);
    return chain_sum_text(e->chain, 0, jt_text(text, len), sum, &seen);
}

/* The common case without rendering: every result a non-empty string with
 * no white space (what the text would print and split into the same
 * tokens), each a quantity; no result at all is 0. 1 when the slow path
 * must decide (anything else, including every error: it words them). */
static int quantity_sum_fast(const jp_expr *e, const json_t *obj, qty *sum)
{
    size_t seen = 0;
    if (e->chain) return chain_sum(e->chain, 0, obj, sum, &seen);
    groups g = {0};
    char err[8];
    if (run(e, obj, true, &g, err, sizeof err) != JP_OK) return 1;
    int rc = 0;
    for (size_t i = 0; i < g.n && !rc; i++) {
        for (size_t k = 0; k < g.g[i].n && !rc; k++) {
            const jv *v = &g.g[i].v[k];
            rc = v->k == V_JSON ? add_plain(v->u.j, sum) : 1;
        }
    }
    groups_free(&g);
    return rc;
}

/* Each value as kubectl prints it, split into quantities and added up; a
 * null value, and one that prints as nothing but white space, add nothing. */
static int sum_values(const jp_expr *e, const groups *g, qty *sum, char *err, size_t errlen)
{
    rend r = {0};
    int rc = JP_OK;
    for (size_t i = 0; i < g->n && rc == JP_OK; i++) {
        for (size_t k = 0; k < g->g[i].n && rc == JP_OK; k++) {
            const jv *v = &g->g[i].v[k];
            if (jv_is_null(v) || v->k == V_INVALID) continue;
            dbuf_init(&r.b, e->lim.max_output);
            r_value_text(&r, v);
            size_t ntok = 0;
            if (r.rc == JP_OK) rc = add_quantities(r.b.p, r.b.len, sum, &ntok, err, errlen);
            dbuf_free(&r.b);
            if (r.rc == JP_ERR_NOMEM)
                seterr(err, errlen, M_NOMEM);
            else if (r.rc == JP_ERR_LIMIT && r.too_deep)
                seterr(err, errlen, M_LIM_VALUE_DEPTH, RENDER_MAX_DEPTH);
            else if (r.rc == JP_ERR_LIMIT)
                seterr(err, errlen, M_LIM_OUTPUT, e->lim.max_output);
            if (r.rc) rc = r.rc;
        }
    }
    return rc;
}

int jp_quantity_sum(const jp_expr *e, const json_t *obj, qty *sum, char *err, size_t errlen)
{
    *sum = qty_zero(QTY_DECIMAL_SI);
    if (quantity_sum_fast(e, obj, sum) == 0) return JP_OK;
    *sum = qty_zero(QTY_DECIMAL_SI);
    groups g = {0};
    char msg[1024];
    int rc = run(e, obj, true, &g, msg, sizeof msg);
    if (rc) {
        seterr(err, errlen, M_SRC_EXEC, msg);
        return rc;
    }
    rc = sum_values(e, &g, sum, err, errlen);
    groups_free(&g);
    if (rc) *sum = qty_zero(QTY_DECIMAL_SI);
    return rc;
}

/* ---- Capsule: JSONPath field selectors ---- */

struct jp_field_selector {
    jp_fs_op op;
    char *path, *value;
    jp_expr *expr;
};

/* findTopLevelEquals / findTopLevelNotEquals: the first '=' ("==" is one
 * operator) or "!=" outside [], {}, () and quotes; -1 if none. */
static long top_level_op(const char *s, size_t n, bool bang, size_t *width)
{
    int bracket = 0, brace = 0, paren = 0;
    char quote = 0;
    bool escaped = false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (escaped) {
            escaped = false;
            continue;
        }
        if (quote) {
            if (ch == '\\')
                escaped = true;
            else if (ch == quote)
                quote = 0;
            continue;
        }
        switch (ch) {
        case '\'':
        case '"':
            quote = ch;
            break;
        case '[':
            bracket++;
            break;
        case ']':
            bracket -= bracket > 0;
            break;
        case '{':
            brace++;
            break;
        case '}':
            brace -= brace > 0;
            break;
        case '(':
            paren++;
            break;
        case ')':
            paren -= paren > 0;
            break;
        default:
            if (bracket || brace || paren) break;
            if (bang && ch == '!' && i + 1 < n && s[i + 1] == '=') {
                *width = 2;
                return (long)i;
            }
            if (!bang && ch == '=') {
                *width = i + 1 < n && s[i + 1] == '=' ? 2 : 1;
                return (long)i;
            }
        }
    }
    return -1;
}

/* SplitFieldSelectorEquals / ...NotEquals on the trimmed selector s[0..n):
 * malloc'd path and value, or false. */
static bool split_selector(const char *s, size_t n, bool bang, char **path, char **value)
{
    size_t w, pb, pe, vb, ve;
    long at = top_level_op(s, n, bang, &w);
    if (at < 0) return false;
    go_trim_space(s, (size_t)at, &pb, &pe);
    go_trim_space(s + at + w, n - (size_t)at - w, &vb, &ve);
    const char *v = s + at + w + vb;
    size_t vn = ve - vb;
    if (pe == pb || vn == 0) return false;
    if (vn >= 2 && v[0] == v[vn - 1] && (v[0] == '"' || v[0] == '\'')) {
        /* trimMatchingQuotes: drop the quotes and the spaces inside them */
        go_trim_space(v + 1, vn - 2, &vb, &ve);
        v = v + 1 + vb;
        vn = ve - vb;
    }
    *path = memdup0(s + pb, pe - pb);
    *value = memdup0(v, vn);
    return true;
}

void jp_field_selector_free(jp_field_selector *fs)
{
    if (!fs) return;
    free(fs->path);
    free(fs->value);
    jp_free(fs->expr);
    free(fs);
}

jp_field_selector *jp_field_selector_compile(const char *raw, int *code, char *err, size_t errlen)
{
    size_t b, e, n = raw ? strlen(raw) : 0;
    int rc = JP_ERR_NOMEM;
    go_trim_space(raw ? raw : "", n, &b, &e);
    const char *s = raw ? raw + b : "";
    n = e - b;
    jp_field_selector *fs = calloc(1, sizeof *fs);
    if (!fs) goto nomem;
    if (n == 0) {
        rc = JP_ERR_INVALID;
        seterr(err, errlen, M_FS_EMPTY);
        goto fail;
    }
    /* "!=" first, or ".a!=b" would split at its '=' */
    if (split_selector(s, n, true, &fs->path, &fs->value))
        fs->op = JP_FS_NOT_EQUALS;
    else if (split_selector(s, n, false, &fs->path, &fs->value))
        fs->op = JP_FS_EQUALS;
    else
        fs->op = JP_FS_TRUTHY, fs->path = memdup0(s, n), fs->value = memdup0("", 0);
    if (!fs->path || !fs->value) goto nomem;
    fs->expr = jp_compile_source_path(fs->path, &rc, err, errlen);
    if (!fs->expr) goto fail;
    fs->expr->scalar_filters = true; /* docs/custom-quotas.md */
    if (code) *code = JP_OK;
    return fs;
nomem:
    seterr(err, errlen, M_NOMEM);
fail:
    jp_field_selector_free(fs);
    if (code) *code = rc;
    return NULL;
}

/* false for "", "0" and "false" in any case */
static bool truthy(const char *s, size_t n)
{
    static const char f[] = "false";
    if (n == 0 || (n == 1 && s[0] == '0')) return false;
    if (n != sizeof f - 1) return true;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
        if (ch != f[i]) return true;
    }
    return false;
}

int jp_field_selector_match(const jp_field_selector *fs, const json_t *obj, bool *match, char *err,
                            size_t errlen)
{
    char *s;
    size_t n;
    *match = false;
    int rc = source_eval_n(fs->expr, obj, &s, &n, err, errlen);
    if (rc) return rc;
    bool same = n == strlen(fs->value) && memcmp(s, fs->value, n) == 0;
    switch (fs->op) {
    case JP_FS_TRUTHY:
        *match = truthy(s, n);
        break;
    case JP_FS_EQUALS:
        *match = same;
        break;
    case JP_FS_NOT_EQUALS:
        *match = !same;
        break;
    }
    free(s);
    return JP_OK;
}

jp_fs_op jp_field_selector_op(const jp_field_selector *fs)
{
    return fs->op;
}

const char *jp_field_selector_path(const jp_field_selector *fs)
{
    return fs->path;
}

const char *jp_field_selector_value(const jp_field_selector *fs)
{
    return fs->value;
}
