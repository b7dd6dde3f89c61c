/* schema_docs.c - descriptions of the served types and their fields, in our
 * own words, with the required fields and enum values upstream's OpenAPI
 * documents carry (see schema.h). Read only by the OpenAPI generator. */
#include "api/schema.h"

#include <string.h>

static const sch_doc docs[] = {
    {"ResourceRequirements", NULL, "The compute resources a container asks for and may use.", NULL,
     false},
    {"ResourceRequirements", "limits",
     "The most of each resource the container may use. Quota counts limits.* from here.", NULL,
     false},
    {"ResourceRequirements", "requests",
     "The amount of each resource the container is guaranteed; defaults to its limit when only a "
     "limit is given. Quota counts requests.* from here.",
     NULL, false},
};

const sch_doc *sch_doc_find(const char *msg, const char *field)
{
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        const sch_doc *d = &docs[i];
        if (strcmp(d->msg, msg) != 0) continue;
        if (field ? d->field && strcmp(d->field, field) == 0 : !d->field) return d;
    }
    return NULL;
}
