/* b64.c - standard base64 (see b64.h). */
#include "core/b64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The 6-bit value of c, or -1. */
static int sextet(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

size_t b64_encoded_len(size_t n)
{
    return (n + 2) / 3 * 4;
}

void b64_encode(const unsigned char *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16;
        if (i + 1 < n) v |= (unsigned)in[i + 1] << 8;
        if (i + 2 < n) v |= in[i + 2];
        out[o++] = alphabet[(v >> 18) & 63];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
    }
    out[o] = '\0';
}

/* The padding count of a well-formed text, or -1. */
static int padding(const char *s, size_t len)
{
    if (len % 4) return -1;
    if (len == 0) return 0;
    int pad = (s[len - 1] == '=') + (len >= 2 && s[len - 1] == '=' && s[len - 2] == '=');
    for (size_t i = 0; i < len - (size_t)pad; i++)
        if (sextet((unsigned char)s[i]) < 0) return -1;
    return pad;
}

long b64_decoded_len(const char *s, size_t len)
{
    int pad = padding(s, len);
    return pad < 0 ? -1 : (long)(len / 4 * 3) - pad;
}

long b64_decode(const char *s, size_t len, unsigned char *out)
{
    int pad = padding(s, len);
    if (pad < 0) return -1;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        unsigned v = 0;
        int k = 0;
        for (; k < 4 && s[i + k] != '='; k++)
            v = v << 6 | (unsigned)sextet((unsigned char)s[i + k]);
        v <<= 6 * (4 - k);
        out[o++] = (unsigned char)(v >> 16);
        if (k > 2) out[o++] = (unsigned char)(v >> 8);
        if (k > 3) out[o++] = (unsigned char)v;
    }
    return (long)o;
}
