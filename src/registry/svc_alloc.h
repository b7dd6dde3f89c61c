/* svc_alloc.h - the cluster IPs and node ports of Services, allocated in the
 * transaction that writes the Service.
 *
 * Upstream's Service REST storage allocates a Service's cluster IP from
 * --service-cluster-ip-range and its node ports from
 * --service-node-port-range before it writes the Service, and releases them
 * when the write fails or the Service goes; its books (bitmaps) live in etcd
 * beside the Services, with a repair loop to mend them. Here the books are in
 * memory, changed only inside the store transaction of the Service's own
 * write (a registry write hook, registry.h): an allocation is undone if the
 * transaction aborts (a dry run, a refusal further on, a failed commit), and
 * a release takes effect only when it commits. Transactions are serialized
 * (store.h), so no two Services ever hold one IP or one node port.
 *
 * INVARIANTS
 *  - Between transactions, the books hold exactly the cluster IPs and node
 *    ports (health check node ports included) of the stored Services, plus
 *    the range's first IP, kept for default/kubernetes whether or not it
 *    exists.
 *  - The books are derived data: at start they are recounted from the stored
 *    Services (svc_alloc_restore), so after a crash nothing a committed
 *    Service holds can be handed out again, and nothing an uncommitted one
 *    was given stays taken.
 *
 * One svc_alloc per store; its hook is registered with the registry and runs
 * under the store's writer lock. svc_alloc_service_ip and _info may be
 * called from any thread.
 */
#ifndef ALLOT_REGISTRY_SVC_ALLOC_H
#define ALLOT_REGISTRY_SVC_ALLOC_H

#include "store/store.h"

#include <stddef.h>
#include <stdint.h>

/* kubeadm's service subnet (kube-apiserver alone would assume 10.0.0.0/24),
 * and upstream's node port range. */
#define SVC_ALLOC_DEFAULT_IP_RANGE "10.96.0.0/12"
#define SVC_ALLOC_DEFAULT_PORT_RANGE "30000-32767"

typedef struct svc_alloc svc_alloc;

/* Books for the two ranges (flag syntax; see core/svcrange.h). NULL with a
 * message in err. */
svc_alloc *svc_alloc_new(const char *ip_range, const char *port_range, char *err, size_t n);
void svc_alloc_free(svc_alloc *a);

typedef struct svc_alloc_restored {
    size_t services;   /* stored Services read */
    size_t ips, ports; /* cluster IPs and node ports marked taken */
    size_t outside;    /* values outside the ranges (kept by their Services, not tracked) */
    size_t conflicts;  /* values two stored Services hold (left as they are) */
    size_t missing;    /* Services an older allotd stored without the cluster IP they need */
} svc_alloc_restored;

/* Recount the books from the stored Services, in a transaction of its own.
 * Before the registry serves Service writes. 0, or -1 (out of memory). */
int svc_alloc_restore(svc_alloc *a, store *st, svc_alloc_restored *out);

/* Register the Service kind's write hook (registry.h) with these books, and
 * (st given) have them recounted by the next write after a batch of st's was
 * refused (store_on_reset). 0 or -1. */
int svc_alloc_register(svc_alloc *a, store *st);

/* The range's first IP: default/kubernetes's cluster IP. */
const char *svc_alloc_service_ip(const svc_alloc *a);

typedef struct svc_alloc_info {
    char ip_range[64], port_range[32];
    uint32_t ips, ips_used, ports, ports_used; /* sizes and values taken */
} svc_alloc_info;
void svc_alloc_info_get(svc_alloc *a, svc_alloc_info *out);

/* The Services an older allotd stored without a cluster IP (or node ports)
 * they need: each is given them by an update through the registry (no
 * change of the client's), as upstream's allocator would have at create.
 * 0, or -1 when one could not be repaired (logged). Any thread. */
int svc_alloc_repair(svc_alloc *a, store *st);

#endif
