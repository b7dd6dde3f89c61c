/* filter.h - labelSelector/fieldSelector query parameters, applied to stored
 * objects through their index (no JSON parsing). Shared by list and watch. */
#ifndef ALLOT_SERVER_FILTER_H
#define ALLOT_SERVER_FILTER_H

#include "api/kinds.h"
#include "core/selector.h"
#include "server/server.h"

typedef struct list_filter {
    sel_t *labels, *fields; /* NULL: no constraint */
} list_filter;

/* Parse the request's selectors; 400 with upstream's messages on error.
 * On failure nothing needs freeing. */
int filter_parse(const req *rq, const api_kind *k, list_filter *f, api_err *e);
bool filter_match(const list_filter *f, const store_obj *o);
void filter_free(list_filter *f);

#endif
