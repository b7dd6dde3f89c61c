/* cronjob.c - placeholder, replaced below */
#include "controllers/controllers.h"
#include <stdlib.h>
static void *cj_init(store *st, const atomic_bool *stop) { (void)st; (void)stop; return calloc(1, 1); }
static void cj_fini(void *s) { free(s); }
static void cj_event(void *s, const store_event *ev) { (void)s; (void)ev; }
static void cj_nop(void *s) { (void)s; }
const ctrl_def ctrl_cronjob_def = {"cronjob", cj_init, cj_fini, cj_event, cj_nop, cj_nop, NULL};
