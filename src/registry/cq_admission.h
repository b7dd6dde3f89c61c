/* cq_admission.h - Capsule's CustomQuotas and GlobalCustomQuotas charged in
 * the write's transaction (see cq_admission.c and cq_books.h). */
#ifndef ALLOT_REGISTRY_CQ_ADMISSION_H
#define ALLOT_REGISTRY_CQ_ADMISSION_H

#include "registry/registry.h"

/* Register the plugin; it runs after every other admission plugin. */
int cq_admission_register(void);

#endif
