/* names.c - upstream string-syntax validators (see names.h).
 *
 * The regular expressions upstream uses are simple enough to check by hand;
 * each checker below names the regex it implements. Go's regexp anchors `$`
 * at the very end of the text, so a trailing newline never matches.
 */
#include "core/names.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- upstream wording, one place ---- */
#define RE_DNS1123_LABEL "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define RE_DNS1123_SUBDOMAIN RE_DNS1123_LABEL "(\\." RE_DNS1123_LABEL ")*"
#define RE_DNS1035_LABEL "[a-z]([-a-z0-9]*[a-z0-9])?"
#define RE_QNAME "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define RE_LABEL_VALUE "(" RE_QNAME ")?"

#define MSG_DNS1123_LABEL                                                                          \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name' or '123-abc', regex used "  \
    "for validation is '" RE_DNS1123_LABEL "')"
#define MSG_DNS1123_SUBDOMAIN                                                                      \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '" RE_DNS1123_SUBDOMAIN "')"
#define MSG_DNS1035_LABEL                                                                          \
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "   \
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name' or 'abc-123', "  \
    "regex used for validation is '" RE_DNS1035_LABEL "')"
#define MSG_QNAME_BODY                                                                             \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName' or 'my.name' or '123-abc', regex used for validation "  \
    "is '" RE_QNAME "')"
#define MSG_QNAME_PARTS                                                                            \
    "a qualified name " MSG_QNAME_BODY                                                             \
    " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
#define MSG_LABEL_VALUE                                                                            \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue' or 'my_value' or " \
    "'12345', regex used for validation is '" RE_LABEL_VALUE "')"
#define RE_CONFIG_KEY "[-._a-zA-Z0-9]+"
#define MSG_CONFIG_KEY                                                                             \
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "           \
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '" RE_CONFIG_KEY     \
    "')"
#define MSG_MAX_LEN "must be no more than %d characters"
#define MSG_EMPTY "must be non-empty"
#define MSG_NO_DOTS "must not contain dots"

__attribute__((format(printf, 2, 3))) static void add(name_msgs *m, const char *fmt, ...)
{
    if (m->n >= NAME_MSGS_MAX) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->msg[m->n++], NAME_MSG_LEN, fmt, ap);
    va_end(ap);
}

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
    return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..len) */
static bool match_dns1123_label(const char *s, size_t len)
{
    if (len == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[len - 1])) return false;
    for (size_t i = 0; i < len; i++)
        if (!is_lower_alnum(s[i]) && s[i] != '-') return false;
    return true;
}

/* label(\.label)* over s[0..len) */
static bool match_dns1123_subdomain(const char *s, size_t len)
{
    const char *p = s, *end = s + len;
    for (;;) {
        const char *dot = memchr(p, '.', (size_t)(end - p));
        size_t l = dot ? (size_t)(dot - p) : (size_t)(end - p);
        if (!match_dns1123_label(p, l)) return false;
        if (!dot) return true;
        p = dot + 1;
    }
}

static int subdomain_n(const char *v, size_t len, const char *pfx, name_msgs *m)
{
    int before = m->n;
    if (len > NAME_DNS1123_SUBDOMAIN_MAX) add(m, "%s" MSG_MAX_LEN, pfx, NAME_DNS1123_SUBDOMAIN_MAX);
    if (!match_dns1123_subdomain(v, len)) add(m, "%s%s", pfx, MSG_DNS1123_SUBDOMAIN);
    return m->n - before;
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over s[0..len) */
static bool match_qname(const char *s, size_t len)
{
    if (len == 0 || !is_alnum(s[0]) || !is_alnum(s[len - 1])) return false;
    for (size_t i = 0; i < len; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return false;
    return true;
}

int name_dns1123_label(const char *v, name_msgs *m)
{
    int before = m->n;
    size_t len = strlen(v);
    if (len > NAME_DNS1123_LABEL_MAX) add(m, MSG_MAX_LEN, NAME_DNS1123_LABEL_MAX);
    if (!match_dns1123_label(v, len)) {
        /* A valid subdomain that is not a label must contain dots (length
         * was already reported), so upstream says just that. */
        if (match_dns1123_subdomain(v, len))
            add(m, "%s", MSG_NO_DOTS);
        else
            add(m, "%s", MSG_DNS1123_LABEL);
    }
    return m->n - before;
}

int name_dns1123_subdomain(const char *v, name_msgs *m)
{
    return subdomain_n(v, strlen(v), "", m);
}

int name_dns1035_label(const char *v, name_msgs *m)
{
    int before = m->n;
    size_t len = strlen(v);
    if (len > NAME_DNS1035_LABEL_MAX) add(m, MSG_MAX_LEN, NAME_DNS1035_LABEL_MAX);
    bool ok = len > 0 && v[0] >= 'a' && v[0] <= 'z' && match_dns1123_label(v, len);
    if (!ok) add(m, "%s", MSG_DNS1035_LABEL);
    return m->n - before;
}

int name_qualified(const char *v, name_msgs *m)
{
    int before = m->n;
    const char *slash = strchr(v, '/');
    const char *name = v;
    if (slash && strchr(slash + 1, '/')) {
        add(m, "%s", MSG_QNAME_PARTS);
        return m->n - before;
    }
    if (slash) {
        size_t plen = (size_t)(slash - v);
        name = slash + 1;
        if (plen == 0)
            add(m, "prefix part " MSG_EMPTY);
        else
            subdomain_n(v, plen, "prefix part ", m);
    }
    size_t nlen = strlen(name);
    if (nlen == 0)
        add(m, "name part " MSG_EMPTY);
    else if (nlen > NAME_QUALIFIED_MAX)
        add(m, "name part " MSG_MAX_LEN, NAME_QUALIFIED_MAX);
    if (!match_qname(name, nlen)) add(m, "name part %s", MSG_QNAME_BODY);
    return m->n - before;
}

int name_label_value(const char *v, name_msgs *m)
{
    int before = m->n;
    size_t len = strlen(v);
    if (len > NAME_LABEL_VALUE_MAX) add(m, MSG_MAX_LEN, NAME_LABEL_VALUE_MAX);
    if (len > 0 && !match_qname(v, len)) add(m, "%s", MSG_LABEL_VALUE);
    return m->n - before;
}

int name_config_key(const char *v, name_msgs *m)
{
    int before = m->n;
    size_t len = strlen(v);
    if (len > NAME_DNS1123_SUBDOMAIN_MAX) add(m, MSG_MAX_LEN, NAME_DNS1123_SUBDOMAIN_MAX);
    bool ok = len > 0;
    for (size_t i = 0; ok && i < len; i++)
        ok = is_alnum(v[i]) || v[i] == '-' || v[i] == '_' || v[i] == '.';
    if (!ok) add(m, "%s", MSG_CONFIG_KEY);
    /* hasChDirPrefix */
    if (strcmp(v, ".") == 0)
        add(m, "must not be '.'");
    else if (strcmp(v, "..") == 0)
        add(m, "must not be '..'");
    else if (strncmp(v, "..", 2) == 0)
        add(m, "must not start with '..'");
    return m->n - before;
}

int name_path_segment(const char *v, bool prefix, name_msgs *m)
{
    int before = m->n;
    if (!prefix) {
        if (strcmp(v, ".") == 0 || strcmp(v, "..") == 0) {
            add(m, "may not be '%s'", v);
            return m->n - before;
        }
    }
    if (strchr(v, '/')) add(m, "may not contain '/'");
    if (strchr(v, '%')) add(m, "may not contain '%%'");
    return m->n - before;
}

void name_msgs_join(const name_msgs *m, const char *sep, char *buf, size_t n)
{
    size_t off = 0;
    if (n == 0) return;
    buf[0] = '\0';
    for (int i = 0; i < m->n && off < n; i++) {
        int w = snprintf(buf + off, n - off, "%s%s", i ? sep : "", m->msg[i]);
        if (w < 0) break;
        off += (size_t)w;
    }
}

char *name_go_quote(const char *s, char *buf, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (n < 3) {
        if (n) buf[0] = '\0';
        return buf;
    }
    buf[o++] = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[5];
        size_t el = 0;
        switch (*p) {
        case '"':
            memcpy(esc, "\\\"", el = 2);
            break;
        case '\\':
            memcpy(esc, "\\\\", el = 2);
            break;
        case '\a':
            memcpy(esc, "\\a", el = 2);
            break;
        case '\b':
            memcpy(esc, "\\b", el = 2);
            break;
        case '\f':
            memcpy(esc, "\\f", el = 2);
            break;
        case '\n':
            memcpy(esc, "\\n", el = 2);
            break;
        case '\r':
            memcpy(esc, "\\r", el = 2);
            break;
        case '\t':
            memcpy(esc, "\\t", el = 2);
            break;
        case '\v':
            memcpy(esc, "\\v", el = 2);
            break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                esc[0] = '\\';
                esc[1] = 'x';
                esc[2] = hex[*p >> 4];
                esc[3] = hex[*p & 15];
                el = 4;
            } else {
                esc[0] = (char)*p;
                el = 1;
            }
        }
        if (o + el + 2 > n) break; /* keep room for the closing quote and NUL */
        memcpy(buf + o, esc, el);
        o += el;
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}

bool name_parse_int64(const char *s, long long *out)
{
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    if (*p == '\0') return false;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9') return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || *end != '\0') return false;
    *out = v;
    return true;
}
