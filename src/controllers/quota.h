/* quota.h - the ResourceQuota controller (periodic full recount). */
#ifndef ALLOT_CONTROLLERS_QUOTA_H
#define ALLOT_CONTROLLERS_QUOTA_H

#include "store/store.h"

#include <stddef.h>

typedef struct quota_controller quota_controller;

/* Recount every quota every period_s seconds. NULL with err on failure. */
quota_controller *quota_controller_start(store *st, int period_s, char *err, size_t errlen);
void quota_controller_stop(quota_controller *c);

/* Recount every quota now (synchronously); *corrected counts rewritten statuses. */
int quota_controller_resync(store *st, size_t *corrected);
/* The same at startup, before serving: a stored status trailing the pods after
 * a crash is expected (quota status is a derived write), so it is restored
 * without counting as drift. */
int quota_controller_restore(store *st, size_t *corrected);
/* Drift corrections since start: should stay 0 (admission keeps usage exact). */
unsigned long long quota_controller_drift_total(void);
/* Completed full recounts (the first runs at start, before serving). */
unsigned long long quota_controller_resyncs_total(void);

#endif
