/* admission.h - the built-in admission plugins, registered in upstream's order. */
#ifndef ALLOT_REGISTRY_ADMISSION_H
#define ALLOT_REGISTRY_ADMISSION_H

#include "registry/registry.h"

/* LimitRanger, Priority and ResourceQuota; call once at startup, before serving. */
int admission_register_defaults(void);

#endif
