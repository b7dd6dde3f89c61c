/* metrics_custom_quotas.h - Capsule's CustomQuota and GlobalCustomQuota
 * gauges (capsule_custom_quota_*, capsule_global_custom_quota_*), rendered
 * at scrape time from the stored quotas (shared spec
 * capsule-pools-and-custom-quotas.md §5). */
#ifndef ALLOT_SERVER_METRICS_CUSTOM_QUOTAS_H
#define ALLOT_SERVER_METRICS_CUSTOM_QUOTAS_H

#include "core/dbuf.h"
#include "store/store.h"

/* Append every capsule_custom_quota_* and capsule_global_custom_quota_*
 * family to b (each with its # HELP and # TYPE lines, samples grouped by
 * family). A series whose value or line cannot be built (unparsable
 * quantity, failed allocation) is left out; nothing is ever written half. */
void metrics_render_custom_quotas(store *st, dbuf *b);

#endif
