/* yaml_emit.h - JSON values written as a YAML stream (libyaml's emitter),
 * for manifests people read and diff (`allotd crds`).
 *
 * Block style throughout; a string is written plain when it reads back as
 * the same string (yaml.h's resolver, which is sigs.k8s.io/yaml's), else
 * quoted, so that "true", "1.5" or "" stay strings; a string of several
 * lines is written as a literal block when it can be. Keys are sorted
 * (as JSON_SORT_KEYS, and as upstream's generators write manifests), so the
 * text does not depend on the order a value was built in. Pure: no I/O.
 */
#ifndef ALLOT_API_YAML_EMIT_H
#define ALLOT_API_YAML_EMIT_H

#include <jansson.h>
#include <stddef.h>

/* Each element of `docs` (a JSON array) as one document, opened by "---".
 * Returns a NUL-terminated text of *len bytes (caller frees), or NULL when
 * a value cannot be written (a nesting deeper than 100, no memory). */
char *yaml_emit_stream(const json_t *docs, size_t *len);

#endif
