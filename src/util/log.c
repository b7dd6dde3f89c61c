/* log.c - one JSON object per line on stderr, written with a single write(2)
 * so concurrent threads never interleave within a line.
 *
 * Callers write the extra members as a printf format ("\"path\":\"%s\""), but
 * a string argument is never copied as is: request paths, object names and
 * error texts come from clients, and a quote or a newline in one would forge
 * members or whole log lines. Every %s is written JSON-escaped (quotes,
 * backslashes, control bytes; invalid UTF-8 becomes U+FFFD), and so is the
 * message. The formatter below therefore understands the conversions the
 * callers use (d i u o x, with l ll or z; f g c s %); anything else is written
 * as "?" rather than guessed at, since va_arg needs the exact type.
 */
#include "util/log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static log_level min_level = LOG_INFO;
static const char *const names[] = {"debug", "info", "warn", "error"};

void log_set_level(log_level l)
{
    min_level = l;
}

/* A line buffer that drops what does not fit (the line still closes). */
typedef struct lbuf {
    char *p;
    size_t n, cap; /* cap excludes the room kept for the closing "}\n" */
} lbuf;

static void put(lbuf *b, const char *s, size_t n)
{
    if (n > b->cap - b->n) n = b->cap - b->n;
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, at most U+10FFFF), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else
        return 0;
    if (avail < n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return n;
}

void log_escape(const char *s, size_t len, char *out, size_t outlen, size_t *outn)
{
    static const char hex[] = "0123456789abcdef";
    lbuf b = {out, 0, outlen};
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        unsigned char c = u[i];
        char esc[8];
        size_t en = 0, adv = 1;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            en = 2;
        } else if (c == '\n' || c == '\r' || c == '\t') {
            esc[0] = '\\';
            esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
            en = 2;
        } else if (c < 0x20 || c == 0x7f) {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            en = 6;
        } else if (c < 0x80) {
            esc[0] = (char)c;
            en = 1;
        } else if ((adv = utf8_len(u + i, len - i)) != 0) {
            memcpy(esc, u + i, adv);
            en = adv;
        } else {
            memcpy(esc, "\\ufffd", 6); /* as Go's encoding/json writes invalid bytes */
            en = 6;
            adv = 1;
        }
        if (en > b.cap - b.n) break; /* never cut an escape in half */
        put(&b, esc, en);
        i += adv;
    }
    *outn = b.n;
}

static void put_escaped(lbuf *b, const char *s)
{
    size_t n = 0;
    if (!s) s = "(null)";
    log_escape(s, strlen(s), b->p + b->n, b->cap - b->n, &n);
    b->n += n;
}

/* One conversion "%[flags][width][.prec][length]conv" at *fmt (after '%'). */
static const char *put_conv(lbuf *b, const char *fmt, va_list *ap)
{
    char spec[32] = "%", tmp[128];
    size_t sn = 1;
    while (*fmt && strchr("-+ #0123456789.", *fmt) && sn < 16)
        spec[sn++] = *fmt++;
    int lng = 0; /* 1 l, 2 ll, 3 z */
    if (*fmt == 'z') {
        lng = 3;
        spec[sn++] = *fmt++;
    } else {
        while (*fmt == 'l' && lng < 2) {
            lng++;
            spec[sn++] = *fmt++;
        }
    }
    char conv = *fmt ? *fmt++ : '\0';
    spec[sn++] = conv;
    spec[sn] = '\0';
    int n = -1;
    switch (conv) {
    case 'd':
    case 'i':
        n = lng == 2   ? snprintf(tmp, sizeof tmp, spec, va_arg(*ap, long long))
            : lng == 1 ? snprintf(tmp, sizeof tmp, spec, va_arg(*ap, long))
            : lng == 3 ? snprintf(tmp, sizeof tmp, spec, va_arg(*ap, ptrdiff_t))
                       : snprintf(tmp, sizeof tmp, spec, va_arg(*ap, int));
        break;
    case 'u':
    case 'o':
    case 'x':
        n = lng == 2   ? snprintf(tmp, sizeof tmp, spec, va_arg(*ap, unsigned long long))
            : lng == 1 ? snprintf(tmp, sizeof tmp, spec, va_arg(*ap, unsigned long))
            : lng == 3 ? snprintf(tmp, sizeof tmp, spec, va_arg(*ap, size_t))
                       : snprintf(tmp, sizeof tmp, spec, va_arg(*ap, unsigned));
        break;
    case 'f':
    case 'g':
        n = snprintf(tmp, sizeof tmp, spec, va_arg(*ap, double));
        break;
    case 'c': {
        char ch = (char)va_arg(*ap, int);
        size_t en = 0;
        log_escape(&ch, 1, b->p + b->n, b->cap - b->n, &en);
        b->n += en;
        return fmt;
    }
    case 's':
        put_escaped(b, va_arg(*ap, const char *));
        return fmt;
    case '%':
        put(b, "%", 1);
        return fmt;
    default:
        put(b, "?", 1); /* unknown conversion: its argument cannot be skipped safely */
        return fmt;
    }
    if (n > 0) put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
    return fmt;
}

size_t log_format(char *line, size_t cap, log_level l, const char *msg, const char *kv, va_list ap)
{
    char ts[40];
    struct timespec now;
    struct tm tm;
    if (cap < 128) return 0;     /* the fixed members always fit */
    lbuf b = {line, 0, cap - 8}; /* room for the repair below and "}\n" */
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    int n = snprintf(line, b.cap, "{\"ts\":\"%s.%03ldZ\",\"level\":\"%s\",\"msg\":\"", ts,
                     now.tv_nsec / 1000000, names[l]);
    b.n = n > 0 && (size_t)n < b.cap ? (size_t)n : 0;
    put_escaped(&b, msg);
    put(&b, "\"", 1);
    if (kv) {
        va_list cp;
        va_copy(cp, ap);
        put(&b, ",", 1);
        for (const char *f = kv; *f;) {
            const char *pct = strchr(f, '%');
            size_t lit = pct ? (size_t)(pct - f) : strlen(f);
            put(&b, f, lit);
            if (!pct) break;
            f = put_conv(&b, pct + 1, &cp);
        }
        va_end(cp);
    }
    /* A cut line still ends as one JSON object: close the string it was cut
     * in, or finish the member it was cut after. */
    if (b.n == b.cap) {
        bool in_str = false, esc = false;
        size_t open = 0; /* where the string the cut fell in starts */
        for (size_t i = 0; i < b.n; i++) {
            if (esc)
                esc = false;
            else if (line[i] == '\\')
                esc = true;
            else if (line[i] == '"' && (in_str = !in_str))
                open = i;
        }
        char before = open ? line[open - 1] : '{';
        bool key = before == ',' || before == '{';
        if (key && (in_str || line[b.n - 1] == '"')) {
            b.n = before == ',' ? open - 1 : open; /* cut in or after a key: drop it */
        } else if (in_str) {
            if (esc) b.n--; /* a dangling backslash would escape the quote */
            line[b.n++] = '"';
        } else if (line[b.n - 1] == ':') {
            memcpy(line + b.n, "null", 4);
            b.n += 4;
        } else if (line[b.n - 1] == ',') {
            b.n--;
        }
    }
    line[b.n++] = '}';
    line[b.n++] = '\n';
    return b.n;
}

void log_msg(log_level l, const char *msg, const char *kv, ...)
{
    if (l < min_level) return;
    char line[2048];
    va_list ap;
    va_start(ap, kv);
    size_t n = log_format(line, sizeof line, l, msg, kv, ap);
    va_end(ap);
    ssize_t w = write(STDERR_FILENO, line, n);
    (void)w;
}
