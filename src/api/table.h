/* table.h - server-side Table output (meta.k8s.io/v1 Table).
 *
 * What kubectl asks for with `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`:
 * column definitions plus one row of cells per object, cell for cell what
 * upstream's pkg/printers/internalversion/printers.go produces, so `kubectl get`
 * (and `-o wide`: the server always sends the priority-1 columns too) prints
 * what it prints against a real cluster. Kinds without a printer get upstream's
 * DefaultTableConvertor columns: Name, Created At. Kinds whose columns are
 * data (api_kind.columns: a CRD's additionalPrinterColumns) get upstream's
 * CRD table convertor: Name, then each column's JSONPath value shaped by its
 * type.
 *
 * Pure: no clock, no I/O. "now" comes in as an argument; every Age cell is
 * duration.HumanDuration(now - metadata.creationTimestamp).
 */
#ifndef ALLOT_API_TABLE_H
#define ALLOT_API_TABLE_H

#include "api/kinds.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Build a Table from `items` (a JSON array of full objects of kind `k`; a NULL
 * or non-array `items` is an empty list). include_object is "None",
 * "Metadata" (also for NULL or "") or "Object": what each row's `object`
 * carries (null, a PartialObjectMetadata, or the object itself).
 * list_meta ({resourceVersion, continue, remainingItemCount}) is copied into
 * the Table's metadata; NULL for none. Returns a new reference (caller owns);
 * `items` and `list_meta` are only read. */
json_t *table_build(const api_kind *k, const json_t *items, const char *include_object, int64_t now,
                    const json_t *list_meta);

/* Whether include_object is a value upstream accepts (NULL, "", "None",
 * "Metadata", "Object"). The server answers anything else with 400
 * "unrecognized includeObject value: %q". */
bool table_include_object_valid(const char *include_object);

/* upstream duration.HumanDuration for a whole number of seconds: "0s", "59s",
 * "119s", "2m", "2m3s", "10m", "3h", "3h5m", "47h", "2d", "2d3h", "8d",
 * "729d", "2y", "2y3d", "8y"; "<invalid>" below -1s, "0s" for -1s.
 * Writes into buf (32 bytes is always enough) and returns buf. */
const char *table_human_duration(int64_t seconds, char *buf, size_t n);

/* Parse an RFC 3339 timestamp ("2024-05-01T10:00:00Z", fractional seconds and
 * numeric offsets accepted) into unix seconds, fractions dropped. False when
 * absent, malformed, or Go's zero time (0001-01-01T00:00:00Z). */
bool table_parse_time(const json_t *v, int64_t *out);

/* The columns of group/resource's printer as a CustomResourceDefinition
 * declares them (a version's additionalPrinterColumns: name, type,
 * description, priority when 1, jsonPath), the Name column left out as CRDs
 * leave it; for the kinds allot also serves as CRDs on a cluster (Capsule's:
 * `allotd crds`). NULL when the printer does not say where every column's
 * value lives. New reference, caller owns. */
json_t *table_crd_columns(const char *group, const char *resource);

#endif
