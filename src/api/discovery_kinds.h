/* discovery_kinds.h - discovery.k8s.io/v1 EndpointSlice: defaults and
 * validation (kinds.h hooks), as upstream's pkg/apis/discovery
 * (SetDefaults_EndpointPort, ValidateEndpointSlice, ...Update), with one
 * difference: a loopback address is accepted (core_validation.h
 * cv_endpoint_ip). Inputs borrowed; causes appended (status.h). */
#ifndef ALLOT_API_DISCOVERY_KINDS_H
#define ALLOT_API_DISCOVERY_KINDS_H

#include <jansson.h>

#define DISCOVERY_GROUP "discovery.k8s.io"
#define DISCOVERY_VERSION "v1"
/* The label naming the Service a slice belongs to. */
#define DISCOVERY_SERVICE_NAME_LABEL "kubernetes.io/service-name"

void endpointslice_defaults(json_t *obj);
void endpointslice_validate(const json_t *obj, const json_t *old, json_t *causes);
void endpointslice_validate_update(const json_t *obj, const json_t *old, const char *sub,
                                   json_t *causes);

#endif
