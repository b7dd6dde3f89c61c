/* pod_resize.h - the pods/resize subresource (in-place pod vertical scaling).
 *
 * Upstream's resize strategy: the request may change only the containers'
 * (and init containers') resources and resizePolicy; everything else is taken
 * from the stored pod. Validation then refuses changes to resources other than
 * cpu and memory, and any change of QoS class. Pure: no I/O.
 */
#ifndef ALLOT_API_POD_RESIZE_H
#define ALLOT_API_POD_RESIZE_H

#include "api/status.h"

#include <jansson.h>

/* The pod to store: a copy of `cur` with the resize fields of `req` applied
 * (containers matched by name). NULL with e set (422) when the resize is not
 * allowed. Caller owns the result. */
json_t *pod_resize_apply(const json_t *cur, const json_t *req, api_err *e);

#endif
