/* pod_resize.h - the pods/resize subresource (in-place pod vertical scaling).
 *
 * Upstream's resize strategy (dropNonResizeUpdates): the request may change
 * only the containers' (and init containers') resources and resizePolicy,
 * containers matched by name; everything else, status included, is taken from
 * the stored pod. The registry then defaults the result as upstream defaults
 * the decoded request (a limit fills its missing request) and the pods'
 * validate_update hook (api/pod_validation.h, sub "resize") applies
 * ValidatePodResize: no QoS class change, no request or limit removed, no
 * resource other than cpu and memory changed. Pure: no I/O.
 */
#ifndef ALLOT_API_POD_RESIZE_H
#define ALLOT_API_POD_RESIZE_H

#include "api/status.h"

#include <jansson.h>

/* The pod to store: a copy of `cur` with the resize fields of `req` applied
 * (containers matched by name), sharing nothing with either. NULL with e set
 * only when out of memory. Caller owns the result. */
json_t *pod_resize_apply(const json_t *cur, const json_t *req, api_err *e);

#endif
