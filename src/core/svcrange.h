/* svcrange.h - the ranges Service cluster IPs and node ports come from.
 *
 * An IP range is a CIDR (kube-apiserver's --service-cluster-ip-range) whose
 * usable addresses are numbered from 0: offset 0 is the network address + 1
 * (the `kubernetes` Service's IP), and neither the network address nor, for
 * IPv4, the broadcast address is ever handed out (upstream's ipallocator).
 * A port range is kube-apiserver's --service-node-port-range ("30000-32767",
 * "30000+2767" or one port), numbered from its first port. Each knows the
 * size of its static band (bitalloc.h): upstream's calculateRangeOffset.
 *
 * Pure: no I/O, no globals.
 */
#ifndef ALLOT_CORE_SVCRANGE_H
#define ALLOT_CORE_SVCRANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Upstream's maxCIDRBits: at most 2^20 addresses are kept in the bitmap. */
#define IPR_MAX_HOST_BITS 20

typedef struct svc_iprange {
    int family;            /* 4 or 6 */
    unsigned char net[16]; /* the network address (4 bytes used for IPv4) */
    int prefix;            /* the mask's length */
    uint32_t max;          /* usable addresses: offsets 0..max-1 */
    uint32_t band;         /* the static band's size */
    char cidr[64];         /* canonical, as upstream prints it: "10.96.0.0/12" */
} svc_iprange;

/* Parse a CIDR (host bits are masked off, as upstream's ParseCIDR does). 0,
 * or -1 with a message in err (`flag` names the option in it). */
int ipr_parse(const char *text, const char *flag, svc_iprange *out, char *err, size_t n);

/* "IPv4" or "IPv6" (the API's ipFamilies values). */
const char *ipr_family(const svc_iprange *r);

typedef enum {
    IPR_IN,  /* *off set */
    IPR_OUT, /* a valid address outside the usable addresses */
    IPR_BAD, /* not an address, or of the other family */
} ipr_where;
ipr_where ipr_offset(const svc_iprange *r, const char *ip, uint32_t *off);

/* The address at `off` (< r->max), canonical, into buf (at least 46 bytes). */
void ipr_format(const svc_iprange *r, uint32_t off, char *buf, size_t n);

typedef struct svc_portrange {
    uint32_t base, size; /* ports base .. base + size - 1 */
    uint32_t band;       /* the static band's size */
    char text[32];       /* as upstream prints it: "30000-32767" */
} svc_portrange;

/* Parse "LOW-HIGH", "BASE+OFFSET" or "PORT" (upstream's ParsePortRange). 0,
 * or -1 with a message in err. */
int portr_parse(const char *text, const char *flag, svc_portrange *out, char *err, size_t n);

/* Whether port is in the range; *off its offset if so. */
bool portr_offset(const svc_portrange *r, long long port, uint32_t *off);

#endif
