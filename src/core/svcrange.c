/* svcrange.c - Service IP and node port ranges (see svcrange.h). */
#include "core/svcrange.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upstream's calculateRangeOffset: min(max(lo, size / step), hi), 0 for a
 * range of at most lo values. */
static uint32_t static_band(uint64_t size, uint32_t lo, uint32_t hi, uint32_t step)
{
    if (size <= lo) return 0;
    uint64_t b = size / step;
    return b < lo ? lo : b > hi ? hi : (uint32_t)b;
}

/* The low 32 bits of an address of `len` bytes. */
static uint32_t low32(const unsigned char *a, int len)
{
    const unsigned char *p = a + len - 4;
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int bytes_of(int family)
{
    return family == 4 ? 4 : 16;
}

int ipr_parse(const char *text, const char *flag, svc_iprange *out, char *err, size_t n)
{
    char buf[64];
    memset(out, 0, sizeof *out);
    const char *slash = text ? strchr(text, '/') : NULL;
    if (!slash || (size_t)(slash - text) >= sizeof buf || strchr(text, ',')) {
        snprintf(err, n, "%s must be a CIDR such as 10.96.0.0/12%s", flag,
                 text && strchr(text, ',') ? " (dual-stack ranges are not supported)" : "");
        return -1;
    }
    memcpy(buf, text, (size_t)(slash - text));
    buf[slash - text] = '\0';
    out->family = strchr(buf, ':') ? 6 : 4;
    int bits = out->family == 4 ? 32 : 128;
    char *end;
    errno = 0;
    long prefix = strtol(slash + 1, &end, 10);
    if (inet_pton(out->family == 4 ? AF_INET : AF_INET6, buf, out->net) != 1 ||
        !isdigit((unsigned char)slash[1]) || *end || errno || prefix < 0 || prefix > bits) {
        snprintf(err, n, "%s: invalid CIDR address: %s", flag, text);
        return -1;
    }
    int host = bits - (int)prefix;
    if (host > IPR_MAX_HOST_BITS) {
        snprintf(err, n, "specified %s is too large; for %d-bit addresses, the mask must be >= %d",
                 flag, bits, bits - IPR_MAX_HOST_BITS);
        return -1;
    }
    out->prefix = (int)prefix;
    for (int i = 0; i < bytes_of(out->family); i++) { /* mask the host bits off */
        int keep = out->prefix - 8 * i;
        out->net[i] &= keep >= 8 ? 0xff : keep <= 0 ? 0 : (unsigned char)(0xff << (8 - keep));
    }
    uint64_t size = (uint64_t)1 << host;
    /* Neither the network address nor IPv4's broadcast is ever handed out. */
    uint64_t max = size - 1 - (out->family == 4 ? 1 : 0);
    if (out->family == 6 && max > 65535) max = 65535; /* upstream caps IPv6 bitmaps */
    if (size < 2 || (int64_t)max < 1) {
        snprintf(err, n, "%s %s is too small: it has no address to allocate", flag, text);
        return -1;
    }
    out->max = (uint32_t)max;
    out->band = static_band(size, 16, 256, 16);
    if (out->band >= out->max) out->band = 0;
    char addr[INET6_ADDRSTRLEN];
    inet_ntop(out->family == 4 ? AF_INET : AF_INET6, out->net, addr, sizeof addr);
    snprintf(out->cidr, sizeof out->cidr, "%s/%d", addr, out->prefix);
    return 0;
}

const char *ipr_family(const svc_iprange *r)
{
    return r->family == 4 ? "IPv4" : "IPv6";
}

ipr_where ipr_offset(const svc_iprange *r, const char *ip, uint32_t *off)
{
    unsigned char a[16];
    if (!ip || inet_pton(r->family == 4 ? AF_INET : AF_INET6, ip, a) != 1) return IPR_BAD;
    int len = bytes_of(r->family);
    for (int i = 0; i < len; i++) { /* the network part must match */
        int keep = r->prefix - 8 * i;
        unsigned char mask = keep >= 8 ? 0xff : keep <= 0 ? 0 : (unsigned char)(0xff << (8 - keep));
        if ((a[i] & mask) != r->net[i]) return IPR_OUT;
    }
    /* At most IPR_MAX_HOST_BITS host bits: the offset is in the low word. */
    uint32_t hostpart = low32(a, len) - low32(r->net, len);
    if (hostpart == 0 || hostpart - 1 >= r->max) return IPR_OUT;
    *off = hostpart - 1;
    return IPR_IN;
}

void ipr_format(const svc_iprange *r, uint32_t off, char *buf, size_t n)
{
    unsigned char a[16];
    int len = bytes_of(r->family);
    memcpy(a, r->net, 16);
    uint32_t v = low32(a, len) + off + 1; /* no carry: the host part is below 2^20 */
    a[len - 4] = (unsigned char)(v >> 24);
    a[len - 3] = (unsigned char)(v >> 16);
    a[len - 2] = (unsigned char)(v >> 8);
    a[len - 1] = (unsigned char)v;
    char addr[INET6_ADDRSTRLEN];
    inet_ntop(r->family == 4 ? AF_INET : AF_INET6, a, addr, sizeof addr);
    snprintf(buf, n, "%s", addr);
}

/* A port number of text [s, e): 0..65535 digits only, else -1. */
static long port_num(const char *s, const char *e)
{
    if (s == e || e - s > 6) return -1;
    long v = 0;
    for (const char *p = s; p < e; p++) {
        if (!isdigit((unsigned char)*p)) return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}

int portr_parse(const char *text, const char *flag, svc_portrange *out, char *err, size_t n)
{
    memset(out, 0, sizeof *out);
    const char *s = text ? text : "";
    while (isspace((unsigned char)*s))
        s++;
    const char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    const char *hy = memchr(s, '-', (size_t)(e - s)), *plus = memchr(s, '+', (size_t)(e - s));
    long lo, hi;
    if (hy && plus) {
        lo = hi = -1;
    } else if (hy || plus) {
        const char *sep = hy ? hy : plus;
        lo = port_num(s, sep);
        long second = port_num(sep + 1, e);
        hi = second < 0 || lo < 0 ? -1 : hy ? second : lo + second;
    } else {
        lo = hi = port_num(s, e);
    }
    if (lo < 0 || hi < 0) {
        snprintf(err, n, "%s: unable to parse port range: %s", flag, text ? text : "");
        return -1;
    }
    if (lo > 65535 || hi > 65535) {
        snprintf(err, n, "%s: the port range cannot be greater than 65535: %s", flag, text);
        return -1;
    }
    if (hi < lo) {
        snprintf(err, n, "%s: end port cannot be less than start port: %s", flag, text);
        return -1;
    }
    out->base = (uint32_t)lo;
    out->size = (uint32_t)(hi - lo + 1);
    out->band = static_band(out->size, 16, 128, 32);
    snprintf(out->text, sizeof out->text, "%ld-%ld", lo, hi);
    return 0;
}

bool portr_offset(const svc_portrange *r, long long port, uint32_t *off)
{
    if (port < (long long)r->base || port >= (long long)r->base + r->size) return false;
    *off = (uint32_t)(port - r->base);
    return true;
}
