/* cq_admission.h - Capsule's CustomQuotas and GlobalCustomQuotas charged in
 * the write's transaction (see cq_admission.c and cq_books.h). */
#ifndef ALLOT_REGISTRY_CQ_ADMISSION_H
#define ALLOT_REGISTRY_CQ_ADMISSION_H

#include "registry/registry.h"

/* Register the plugin; it runs after every other admission plugin. */
int cq_admission_register(void);

/* At start, before serving: load every custom quota's books and write the
 * statuses that trail them. */
void cq_admission_restore(store *st);

#endif
