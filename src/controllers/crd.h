/* crd.h - the CustomResourceDefinition controller (see crd.c). */
#ifndef ALLOT_CONTROLLERS_CRD_H
#define ALLOT_CONTROLLERS_CRD_H

#include "store/store.h"

#include <stddef.h>

typedef struct crd_ctrl crd_ctrl;

/* Before serving: serve every stored definition whose names were accepted
 * (NamesAccepted or Established True), as the last run served it, and
 * index their objects (loaded before their kinds existed). Call after
 * store_open and before anything counts objects (the quota recount).
 * Returns how many definitions are served, or -1 with err set. */
int crd_controller_restore(store *st, char *err, size_t errlen);

/* Start the controller thread on `st` (which must outlive crd_controller_stop).
 * NULL with a message in err on failure. */
crd_ctrl *crd_controller_start(store *st, char *err, size_t errlen);
/* Stop and join its thread; NULL is fine. The kinds it published stay
 * (crd_kinds_cleanup frees them once nothing serves). */
void crd_controller_stop(crd_ctrl *c);

#endif
