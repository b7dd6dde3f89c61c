/* urlpath.c - split a raw request path on '/', then percent-decode each
 * segment on its own, refusing malformed escapes and control bytes. */
#include "core/urlpath.h"

#include <stdbool.h>
#include <string.h>

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

size_t urlpath_path_len(const char *raw)
{
    return strcspn(raw, "?");
}

urlpath_status urlpath_decode_segment(const char *s, size_t len, char *out, size_t outlen,
                                      size_t *decoded)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (len - i < 3) return URLPATH_BAD_ESCAPE;
            int h = hexval((unsigned char)s[i + 1]), l = hexval((unsigned char)s[i + 2]);
            if (h < 0 || l < 0) return URLPATH_BAD_ESCAPE;
            c = (unsigned char)(h << 4 | l);
            i += 2;
        }
        if (is_control(c)) return URLPATH_CONTROL;
        if (out && o + 1 < outlen) out[o] = (char)c;
        o++;
    }
    if (out && outlen) out[o < outlen ? o : outlen - 1] = '\0';
    if (decoded) *decoded = o;
    return out && o >= outlen ? URLPATH_NO_ROUTE : URLPATH_OK;
}

urlpath_status urlpath_split(const char *raw, char segs[][URLPATH_SEG_MAX], int max, int *n)
{
    size_t end = urlpath_path_len(raw);
    urlpath_status worst = URLPATH_OK;
    int count = 0;
    for (size_t p = 0; p < end;) {
        if (raw[p] == '/') {
            p++;
            continue;
        }
        size_t len = strcspn(raw + p, "/?");
        char *out = count < max ? segs[count] : NULL;
        urlpath_status st = urlpath_decode_segment(raw + p, len, out, URLPATH_SEG_MAX, NULL);
        if (st == URLPATH_BAD_ESCAPE || st == URLPATH_CONTROL) return st;
        if (st != URLPATH_OK || count >= max) worst = URLPATH_NO_ROUTE;
        count++;
        p += len;
    }
    if (worst == URLPATH_OK) *n = count;
    return worst;
}

const char *urlpath_message(urlpath_status st)
{
    switch (st) {
    case URLPATH_BAD_ESCAPE:
        return "invalid URL escape in the request path";
    case URLPATH_CONTROL:
        return "invalid control character in the request path";
    case URLPATH_NO_ROUTE:
        return "the server could not find the requested resource";
    case URLPATH_OK:
        break;
    }
    return "";
}

void urlpath_log_escape(const char *raw, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t end = urlpath_path_len(raw), o = 0;
    if (!outlen) return;
    for (size_t i = 0; i < end; i++) {
        unsigned char c = (unsigned char)raw[i];
        bool plain = c > 0x20 && c < 0x7f && c != '"' && c != '\\';
        size_t need = plain ? 1 : 3;
        if (o + need >= outlen) break;
        if (plain) {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
}
