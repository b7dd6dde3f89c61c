/* kubesvc.h - the `kubernetes` Service in namespace default, and its
 * Endpoints and EndpointSlice (see kubesvc.c). */
#ifndef ALLOT_CONTROLLERS_KUBESVC_H
#define ALLOT_CONTROLLERS_KUBESVC_H

#include "store/store.h"

#include <stddef.h>

/* Upstream's names and values (pkg/controlplane/controller/kubernetesservice). */
#define KUBESVC_NAMESPACE "default"
#define KUBESVC_NAME "kubernetes"
#define KUBESVC_PORT_NAME "https"
#define KUBESVC_PORT 443
/* How often the objects are checked even without a change (upstream's
 * --endpoint-reconciler interval, 10 s). */
#define KUBESVC_INTERVAL_MS 10000

typedef struct kubesvc kubesvc;

typedef struct kubesvc_config {
    const char *service_ip; /* the cluster IP range's first address */
    const char *address;    /* the address allotd is reached at (Endpoints) */
    int port;               /* allotd's port: targetPort and the Endpoints port */
} kubesvc_config;

/* Make sure the Service, Endpoints and EndpointSlice exist and are as they should be, once
 * now (a refusal is logged, and retried), then keep them so from a thread:
 * recreated when deleted, put back when changed. The strings are copied.
 * NULL with a message in err when the thread cannot start. */
kubesvc *kubesvc_start(store *st, const kubesvc_config *cfg, char *err, size_t errlen);
/* Stop and join the thread and free everything; NULL is fine. */
void kubesvc_stop(kubesvc *k);

#endif
