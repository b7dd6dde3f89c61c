/* pod_validation.h - Pod validation with upstream's messages.
 *
 * Ports the parts of pkg/apis/core/validation that decide what a pod may hold
 * and how it may change: ValidatePodCreate (containers, init and ephemeral
 * containers, their resources, pod-level resources, overhead, tolerations,
 * scheduling gates, activeDeadlineSeconds), ValidatePodUpdate (only images,
 * activeDeadlineSeconds, tolerations, terminationGracePeriodSeconds and
 * scheduling gates may change), ValidatePodStatusUpdate and ValidatePodResize.
 * Metadata is validated by the registry for every kind.
 *
 * Resource lists are visited in sorted key order, so the causes are
 * deterministic (upstream ranges over Go maps). A quantity that does not
 * parse is reported as Invalid with the parser's message (upstream refuses
 * such a body while decoding it).
 *
 * Inputs are borrowed and never modified; causes are appended to a JSON array
 * the caller owns (see ferr_add in status.h). Pure: no I/O, no state.
 */
#ifndef ALLOT_API_POD_VALIDATION_H
#define ALLOT_API_POD_VALIDATION_H

#include <jansson.h>

/* The start of upstream's message for a forbidden spec change (field `spec`);
 * allot follows it with a newline and the changed paths (upstream prints a
 * cmp.Diff of the Go structs there). */
#define POD_MSG_UPDATE_FORBIDDEN                                                                   \
    "pod updates may not change fields other than `spec.containers[*].image`,"                     \
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "        \
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set " \
    "to 1 if it was previously negative)"

/* ValidatePodCreate's checks of a defaulted pod's spec. */
void pod_validate_create(const json_t *pod, json_t *causes);

/* The kinds.h validate_update hook: the transition old -> obj written through
 * subresource `sub`:
 *   ""        ValidatePodUpdate;
 *   "status"  ValidatePodStatusUpdate (nodeName and qosClass unchanged; a
 *             pod stored without a class may take its spec's) and the
 *             quantities of status (allocatedResources, resources) parse and
 *             are not negative;
 *   "binding" nothing (pods/binding sets nodeName itself);
 *   "resize"  ValidatePodResize, on the defaulted result: the new spec
 *             validated as on create, the stored QoS class equal to the new
 *             spec's, no request or limit removed, nothing changed but the
 *             cpu and memory of container resources (and resizePolicy).
 * Any other subresource is validated as "". */
void pod_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes);

#endif
