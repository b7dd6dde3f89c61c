/* deployment.c - the Deployment controller (stub while it is written). */
#include "controllers/controllers.h"

#include <stdlib.h>

static void *dc_init(store *st, const atomic_bool *stop)
{
    (void)st;
    (void)stop;
    return calloc(1, 1);
}
static void dc_fini(void *self)
{
    free(self);
}
static void dc_event(void *self, const store_event *ev)
{
    (void)self;
    (void)ev;
}
static void dc_nop(void *self)
{
    (void)self;
}
const ctrl_def ctrl_deployment_def = {"deployment", dc_init, dc_fini, dc_event,
                                      dc_nop,       dc_nop,  NULL};
