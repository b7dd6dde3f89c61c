/* extender_route.c - kube-scheduler's extender calls, routed to cluster
 * mode's extender (server/extender_route.h; cluster/extender.h). */
#include "server/extender_route.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

bool extender_serve(req *rq, resp *rs, char segs[][256], int n)
{
    if (n != 2 || strcmp(segs[0], "scheduler") ||
        (strcmp(segs[1], "filter") && strcmp(segs[1], "bind")))
        return false;
    const scheduler_extender *x = &rq->srv->extender;
    rq->verb = rq->method;
    snprintf(rq->resource, sizeof rq->resource, "%s", "scheduler");
    if (!x->filter || !x->bind) {
        resp_errf(rs, API_NOT_FOUND, "the server could not find the requested resource");
        return true;
    }
    if (strcmp(rq->method, "POST")) {
        resp_errf(rs, API_METHOD_NOT_ALLOWED,
                  "the server does not allow this method on the requested resource");
        return true;
    }
    /* as the webhooks: nothing is decided before the mirror holds the
     * whole cluster (kube-scheduler retries the pod) */
    if (!rq->srv->ready || !rq->srv->ready(rq->srv->ready_arg)) {
        resp_errf(rs, API_UNAVAILABLE, "allot's caches of the cluster are not synced yet");
        return true;
    }
    const char *ct = rq->content_type;
    size_t m = strlen("application/json");
    if (!ct || strncasecmp(ct, "application/json", m) || (ct[m] && ct[m] != ';')) {
        resp_errf(rs, API_UNSUPPORTED_MEDIA,
                  "the body of an extender call must be "
                  "application/json");
        return true;
    }
    char *text = NULL;
    rs->code = !strcmp(segs[1], "filter") ? x->filter(x->arg, rq->body, rq->body_len, &text)
                                          : x->bind(x->arg, rq->body, rq->body_len, &text);
    if (!text) {
        resp_errf(rs, API_INTERNAL, "out of memory");
        return true;
    }
    rs->raw = text;
    rs->raw_len = strlen(text);
    rs->content_type = "application/json";
    return true;
}
