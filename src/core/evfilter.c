/* evfilter.c - a token bucket per event source and object (see evfilter.h). */
#include "core/evfilter.h"

#include "core/strmap.h"

#include <stdlib.h>
#include <string.h>

typedef struct bucket {
    double tokens;
    int64_t at; /* when tokens was last brought up to date */
} bucket;

struct evfilter {
    strmap *m; /* key (owned) -> bucket */
    int burst;
    int64_t refill_ms;
    size_t max_keys;
};

evfilter *evfilter_new(int burst, int64_t refill_ms, size_t max_keys)
{
    evfilter *f = calloc(1, sizeof *f);
    if (!f || !(f->m = strmap_new())) {
        free(f);
        return NULL;
    }
    f->burst = burst;
    f->refill_ms = refill_ms > 0 ? refill_ms : 1;
    f->max_keys = max_keys;
    return f;
}

static void drop_all(strmap *m)
{
    const char *k;
    void *v;
    for (size_t it = 0; strmap_next(m, &it, &k, &v);) {
        free((char *)k);
        free(v);
    }
}

void evfilter_free(evfilter *f)
{
    if (!f) return;
    drop_all(f->m);
    strmap_free(f->m);
    free(f);
}

bool evfilter_allow(evfilter *f, const char *key, int64_t now)
{
    bucket *b = strmap_get(f->m, key);
    if (!b) {
        if (strmap_count(f->m) >= f->max_keys) {
            strmap *fresh = strmap_new();
            if (fresh) {
                drop_all(f->m);
                strmap_free(f->m);
                f->m = fresh;
            }
        }
        char *k = strdup(key);
        if (!k || !(b = calloc(1, sizeof *b)) || strmap_put(f->m, k, b, NULL) != 0) {
            free(k);
            free(b);
            return true; /* out of memory: do not lose the Event for it */
        }
        b->tokens = f->burst;
        b->at = now;
    }
    if (now > b->at) {
        b->tokens += (double)(now - b->at) / (double)f->refill_ms;
        if (b->tokens > f->burst) b->tokens = f->burst;
        b->at = now;
    }
    if (b->tokens < 1) return false;
    b->tokens -= 1;
    return true;
}
