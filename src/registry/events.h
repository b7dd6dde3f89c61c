/* events.h - record core/v1 Events about objects, as client-go's recorder
 * does: one Event per (object, type, reason, message), its count raised on
 * repeats instead of a new object each time. */
#ifndef ALLOT_REGISTRY_EVENTS_H
#define ALLOT_REGISTRY_EVENTS_H

#include "store/store.h"

#include <jansson.h>

/* type is "Normal" or "Warning"; component e.g. "default-scheduler".
 * `involved` is the object (borrowed). Best effort: 0 or -1. */
int event_record(store *st, const json_t *involved, const char *type, const char *reason,
                 const char *message, const char *component);

#endif
