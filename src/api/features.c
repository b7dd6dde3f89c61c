/* features.c - feature gates (see features.h). */
#include "api/features.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    bool dflt;
} gates[FEATURE_COUNT] = {
    [FEATURE_DEFERRED_RESOURCE_QUOTA] = {"DeferredResourceQuota", false},
};

static bool set[FEATURE_COUNT], value[FEATURE_COUNT];

bool feature_enabled(feature f)
{
    return set[f] ? value[f] : gates[f].dflt;
}

static int parse_one(const char *item, size_t len, char *err, size_t errlen)
{
    const char *eq = memchr(item, '=', len);
    if (!eq) {
        snprintf(err, errlen, "missing bool value for %.*s", (int)len, item);
        return -1;
    }
    size_t nlen = (size_t)(eq - item), vlen = len - nlen - 1;
    int f = 0;
    while (f < FEATURE_COUNT &&
           (strlen(gates[f].name) != nlen || strncmp(gates[f].name, item, nlen)))
        f++;
    if (f == FEATURE_COUNT) {
        snprintf(err, errlen, "unrecognized feature gate: %.*s", (int)nlen, item);
        return -1;
    }
    bool v;
    if (vlen == 4 && !strncmp(eq + 1, "true", 4))
        v = true;
    else if (vlen == 5 && !strncmp(eq + 1, "false", 5))
        v = false;
    else {
        snprintf(
            err, errlen,
            "invalid value of %.*s=%.*s, err: strconv.ParseBool: parsing \"%.*s\": invalid syntax",
            (int)nlen, item, (int)vlen, eq + 1, (int)vlen, eq + 1);
        return -1;
    }
    set[f] = true;
    value[f] = v;
    return 0;
}

int features_parse(const char *spec, char *err, size_t errlen)
{
    while (spec && *spec) {
        const char *comma = strchr(spec, ',');
        size_t len = comma ? (size_t)(comma - spec) : strlen(spec);
        while (len && *spec == ' ')
            spec++, len--;
        if (len && parse_one(spec, len, err, errlen) != 0) return -1;
        spec += len + (comma ? 1 : 0);
    }
    return 0;
}
