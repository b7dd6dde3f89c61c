/* extender_route.h - the routes kube-scheduler calls allot's extender at
 * (cluster mode; `allotd scheduler-config` points it there):
 *
 *   POST /scheduler/filter   ExtenderArgs -> ExtenderFilterResult
 *   POST /scheduler/bind     ExtenderBindingArgs -> ExtenderBindingResult
 *
 * Answered by the server's scheduler_extender (cluster/extender.h); 404
 * outside cluster mode, 503 until the mirror is synced. */
#ifndef ALLOT_SERVER_EXTENDER_ROUTE_H
#define ALLOT_SERVER_EXTENDER_ROUTE_H

#include "server/server.h"

#include <stdbool.h>

/* True when the decoded path (segs, n) is the extender's, with rs filled. */
bool extender_serve(req *rq, resp *rs, char segs[][256], int n);

#endif
