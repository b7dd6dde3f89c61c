/* inflight.c - per-user requests in flight (see inflight.h). */
#include "server/inflight.h"

#include "core/strmap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct seat {
    unsigned n;
    char name[]; /* the map's key */
} seat;

struct inflight {
    pthread_mutex_t mu;
    strmap *users; /* name -> seat; an entry lives while n > 0 */
    unsigned limit;
};

inflight *inflight_new(unsigned limit)
{
    inflight *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    if (!(f->users = strmap_new())) {
        free(f);
        return NULL;
    }
    pthread_mutex_init(&f->mu, NULL);
    f->limit = limit ? limit : INFLIGHT_DEFAULT_LIMIT;
    return f;
}

void inflight_free(inflight *f)
{
    if (!f) return;
    void *v;
    for (size_t it = 0; strmap_next(f->users, &it, NULL, &v);)
        free(v);
    strmap_free(f->users);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

bool inflight_enter(inflight *f, const char *name)
{
    pthread_mutex_lock(&f->mu);
    seat *s = strmap_get(f->users, name);
    bool ok = true;
    if (!s) {
        size_t len = strlen(name) + 1;
        s = malloc(sizeof *s + len);
        if (s) {
            s->n = 0;
            memcpy(s->name, name, len);
            if (strmap_put(f->users, s->name, s, NULL) != 0) {
                free(s);
                s = NULL;
            }
        }
        /* (out of memory: let the request through uncounted rather than
         * refuse everyone) */
    }
    if (s && s->n >= f->limit)
        ok = false;
    else if (s)
        s->n++;
    pthread_mutex_unlock(&f->mu);
    return ok;
}

void inflight_leave(inflight *f, const char *name)
{
    pthread_mutex_lock(&f->mu);
    seat *s = strmap_get(f->users, name);
    if (s && s->n > 0 && --s->n == 0) {
        strmap_del(f->users, name);
        free(s);
    }
    pthread_mutex_unlock(&f->mu);
}

unsigned inflight_count(inflight *f, const char *name)
{
    pthread_mutex_lock(&f->mu);
    seat *s = strmap_get(f->users, name);
    unsigned n = s ? s->n : 0;
    pthread_mutex_unlock(&f->mu);
    return n;
}
