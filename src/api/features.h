/* features.h - feature gates (--feature-gates=Name=true,Other=false), set once
 * at startup before serving and read-only afterwards. */
#ifndef ALLOT_API_FEATURES_H
#define ALLOT_API_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    FEATURE_DEFERRED_RESOURCE_QUOTA, /* DeferredResourceQuota: charge compute quota at bind */
    FEATURE_COUNT
} feature;

bool feature_enabled(feature f);
/* Parse upstream's "A=true,B=false" form; -1 with upstream's message on error. */
int features_parse(const char *spec, char *err, size_t errlen);

#endif
