/* cel_lex.c - the CEL lexer (see cel_lex.h). */
#include "core/cel_lex.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool fail(cel_lexer *lx, uint32_t pos, const char *fmt, const char *arg)
{
    if (!lx->is->set) cel_issue_set(lx->is, pos, fmt, arg);
    return false;
}

static bool recognition_error(cel_lexer *lx, size_t start, size_t end)
{
    char buf[64];
    size_t len = end - start < 40 ? end - start : 40;
    snprintf(buf, sizeof buf, "%.*s", (int)len, lx->src + start);
    return fail(lx, (uint32_t)start, "Syntax error: token recognition error at: '%s'", buf);
}

/* ---- lexer: numbers --------------------------------------------------------------------- */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int hex_val(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool lex_number(cel_lexer *lx, cel_token *t)
{
    const char *s = lx->src;
    size_t i = lx->off;
    if (s[i] == '0' && i + 2 < lx->n + 1 && s[i + 1] == 'x' && hex_val(s[i + 2]) >= 0) {
        t->hex = true;
        for (i += 2; i < lx->n && hex_val(s[i]) >= 0; i++) {
            if (t->u > UINT64_MAX >> 4) t->range = true;
            t->u = t->u << 4 | (uint64_t)hex_val(s[i]);
        }
        t->k = K_INT;
    } else {
        bool flt = false;
        for (; i < lx->n && is_digit(s[i]); i++) {
            if (t->u > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10) t->range = true;
            t->u = t->u * 10 + (uint64_t)(s[i] - '0');
        }
        if (i + 1 < lx->n && s[i] == '.' && is_digit(s[i + 1])) {
            flt = true;
            for (i++; i < lx->n && is_digit(s[i]); i++)
                ;
        }
        if (i < lx->n && (s[i] == 'e' || s[i] == 'E')) {
            size_t j = i + 1;
            if (j < lx->n && (s[j] == '+' || s[j] == '-')) j++;
            if (j < lx->n && is_digit(s[j])) {
                flt = true;
                for (i = j; i < lx->n && is_digit(s[i]); i++)
                    ;
            }
        }
        t->k = flt ? K_DOUBLE : K_INT;
        if (flt) {
            char buf[CEL_MAX_EXPR_LEN + 1];
            memcpy(buf, s + lx->off, i - lx->off);
            buf[i - lx->off] = '\0';
            t->d = strtod(buf, NULL);
            t->range = isinf(t->d); /* Go's ParseFloat: overflow is an error, underflow not */
        }
    }
    if (t->k == K_INT && i < lx->n && (s[i] == 'u' || s[i] == 'U')) {
        t->k = K_UINT;
        i++;
    }
    t->len = (uint32_t)(i - lx->off);
    lx->off = i;
    return true;
}

/* ---- lexer: strings --------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (n bytes available), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80) return 1;
    size_t len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (len == 0 || len > n || s[0] > 0xF4) return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if (len == 3 && s[0] == 0xE0 && s[1] < 0xA0) return 0;  /* overlong */
    if (len == 3 && s[0] == 0xED && s[1] >= 0xA0) return 0; /* surrogate */
    if (len == 4 && s[0] == 0xF0 && s[1] < 0x90) return 0;  /* overlong */
    if (len == 4 && s[0] == 0xF4 && s[1] >= 0x90) return 0; /* > U+10FFFF */
    return len;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* One escape sequence after the backslash at s[*i]; appends its UTF-8 to o. */
static bool lex_escape(const char *s, size_t n, size_t *i, char *o, size_t *on)
{
    static const char simple_in[] = "abfnrtv\\'\"`?", simple_out[] = "\a\b\f\n\r\t\v\\'\"`?";
    size_t j = *i + 1;
    if (j >= n) return false;
    const char *hit = strchr(simple_in, s[j]);
    if (hit && s[j]) {
        o[(*on)++] = simple_out[hit - simple_in];
        *i = j + 1;
        return true;
    }
    uint32_t cp = 0;
    size_t digits = s[j] == 'x' || s[j] == 'X' ? 2 : s[j] == 'u' ? 4 : s[j] == 'U' ? 8 : 0;
    if (digits) {
        if (j + digits >= n) return false;
        for (size_t k = 1; k <= digits; k++) {
            int h = hex_val(s[j + k]);
            if (h < 0) return false;
            cp = cp << 4 | (uint32_t)h;
        }
        j += digits + 1;
    } else if (s[j] >= '0' && s[j] <= '3') {
        if (j + 2 >= n) return false;
        for (size_t k = 0; k < 3; k++) {
            if (s[j + k] < '0' || s[j + k] > '7') return false;
            cp = cp << 3 | (uint32_t)(s[j + k] - '0');
        }
        j += 3;
    } else {
        return false;
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    *on += put_utf8(o + *on, cp);
    *i = j;
    return true;
}

static bool at_close(const char *s, size_t n, size_t i, char q, bool triple)
{
    if (!triple) return s[i] == q;
    return i + 2 < n && s[i] == q && s[i + 1] == q && s[i + 2] == q;
}

/* A string literal starting at the quote s[i]; `start` is where its prefix began. */
static bool lex_string(cel_lexer *lx, cel_token *t, size_t start, size_t i, bool raw)
{
    const char *s = lx->src;
    size_t n = lx->n;
    char q = s[i];
    bool triple = i + 2 < n && s[i + 1] == q && s[i + 2] == q;
    i += triple ? 3 : 1;
    char *o = cel_arena_alloc(&*lx->arena, n - i + 1); /* decoding never grows text */
    size_t on = 0;
    if (!o) return fail(lx, (uint32_t)start, "%s", "out of memory");
    for (;;) {
        if (i >= n || (!triple && (s[i] == '\n' || s[i] == '\r')))
            return recognition_error(lx, start, i < n ? i + 1 : n);
        if (at_close(s, n, i, q, triple)) break;
        if (s[i] == '\\' && !raw) {
            if (!lex_escape(s, n, &i, o, &on))
                return recognition_error(lx, start, i + 2 <= n ? i + 2 : n);
            continue;
        }
        size_t len = utf8_seq((const unsigned char *)s + i, n - i);
        if (!len) return recognition_error(lx, start, i + 1);
        memcpy(o + on, s + i, len);
        on += len;
        i += len;
    }
    i += triple ? 3 : 1;
    t->k = K_STRING;
    t->s = o;
    t->sn = on;
    t->len = (uint32_t)(i - start);
    lx->off = i;
    return true;
}

/* ---- lexer: the rest -------------------------------------------------------------------- */

static bool is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(char c)
{
    return is_ident_start(c) || is_digit(c);
}

static void skip_space(cel_lexer *lx)
{
    const char *s = lx->src;
    while (lx->off < lx->n) {
        char c = s[lx->off];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
            lx->off++;
        } else if (c == '/' && lx->off + 1 < lx->n && s[lx->off + 1] == '/') {
            while (lx->off < lx->n && s[lx->off] != '\n')
                lx->off++;
        } else {
            break;
        }
    }
}

/* Identifier, keyword, or a string with an r/b prefix. */
static bool lex_word(cel_lexer *lx, cel_token *t)
{
    const char *s = lx->src;
    size_t i = lx->off, n = lx->n;
    bool bytes = false, raw = false;
    size_t j = i;
    if (s[j] == 'b' || s[j] == 'B') bytes = true, j++;
    if (j < n && (s[j] == 'r' || s[j] == 'R')) raw = true, j++;
    if ((bytes || raw) && j < n && (s[j] == '"' || s[j] == '\'')) {
        if (bytes)
            return fail(lx, (uint32_t)i, "%s", "Syntax error: bytes literals are not supported");
        return lex_string(lx, t, i, j, raw);
    }
    while (i < n && is_ident_char(s[i]))
        i++;
    t->len = (uint32_t)(i - lx->off);
    const char *w = s + lx->off;
    t->k = K_IDENT;
    if (t->len == 4 && !memcmp(w, "true", 4)) t->k = K_TRUE;
    if (t->len == 5 && !memcmp(w, "false", 5)) t->k = K_FALSE;
    if (t->len == 4 && !memcmp(w, "null", 4)) t->k = K_NULL;
    if (t->len == 2 && !memcmp(w, "in", 2)) t->k = K_IN;
    lx->off = i;
    return true;
}

static bool lex_punct(cel_lexer *lx, cel_token *t)
{
    static const struct {
        const char *text;
        cel_tok_kind k;
    } ops[] = {
        {"==", K_EQ},      {"!=", K_NE},    {"<=", K_LE},    {">=", K_GE},    {"&&", K_AND},
        {"||", K_OR},      {"(", K_LPAREN}, {")", K_RPAREN}, {"[", K_LBRACK}, {"]", K_RBRACK},
        {"{", K_LBRACE},   {"}", K_RBRACE}, {".", K_DOT},    {",", K_COMMA},  {":", K_COLON},
        {"?", K_QUESTION}, {"+", K_PLUS},   {"-", K_MINUS},  {"*", K_STAR},   {"/", K_SLASH},
        {"%", K_PERCENT},  {"!", K_NOT},    {"<", K_LT},     {">", K_GT},
    };
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        size_t len = strlen(ops[k].text);
        if (lx->off + len <= lx->n && !memcmp(lx->src + lx->off, ops[k].text, len)) {
            t->k = ops[k].k;
            t->len = (uint32_t)len;
            lx->off += len;
            return true;
        }
    }
    size_t len = utf8_seq((const unsigned char *)lx->src + lx->off, lx->n - lx->off);
    return recognition_error(lx, lx->off, lx->off + (len ? len : 1));
}

bool cel_lex(cel_lexer *lx, cel_token *out)
{
    skip_space(lx);
    cel_token t = {.pos = (uint32_t)lx->off};
    bool ok = true;
    if (lx->off >= lx->n) {
        t.k = K_EOF;
    } else {
        char c = lx->src[lx->off];
        if (is_digit(c) || (c == '.' && lx->off + 1 < lx->n && is_digit(lx->src[lx->off + 1])))
            ok = lex_number(lx, &t);
        else if (is_ident_start(c))
            ok = lex_word(lx, &t);
        else if (c == '"' || c == '\'')
            ok = lex_string(lx, &t, lx->off, lx->off, false);
        else
            ok = lex_punct(lx, &t);
    }
    t.pos = t.k == K_EOF ? (uint32_t)lx->n : t.pos;
    *out = t;
    return ok;
}
