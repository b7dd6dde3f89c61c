/* baseline.h - what every namespace holds from its start (see baseline.c). */
#ifndef ALLOT_CONTROLLERS_BASELINE_H
#define ALLOT_CONTROLLERS_BASELINE_H

#include "store/store.h"

#include <stddef.h>

/* Upstream's names (serviceaccount controller, root-ca-cert-publisher). */
#define BASELINE_SA_NAME "default"
#define BASELINE_CA_CONFIGMAP "kube-root-ca.crt"
#define BASELINE_CA_KEY "ca.crt"

typedef struct baseline baseline;

/* Start the controller on `st` (which must outlive baseline_stop); ca_pem is
 * copied. NULL with a message in err on failure. */
baseline *baseline_start(store *st, const char *ca_pem, char *err, size_t errlen);
/* Stop and join its thread and free everything; NULL is fine. */
void baseline_stop(baseline *b);

#endif
