/* yaml.h - YAML documents as JSON values (libyaml's parser), for
 * configuration files users copy from upstream documentation.
 *
 * The first document of the text becomes one jansson value, as Kubernetes'
 * sigs.k8s.io/yaml turns YAML into JSON: mappings become objects (keys as
 * their text), sequences arrays; a plain scalar is resolved as YAML 1.1 does
 * (null, booleans including yes/no/on/off, integers, floats, else a string);
 * a quoted scalar or one tagged !!str stays a string. Anchors and aliases
 * are followed (an alias shares its anchor's value), and, as go-yaml does, a
 * document whose alias expansions outweigh it ("billion laughs") is refused
 * with "document contains excessive aliasing". A mapping key must be a
 * scalar (go-yaml: "invalid map key"); a non-string one becomes its JSON
 * text ("1", "true", "null"). Pure: no I/O.
 */
#ifndef ALLOT_API_YAML_H
#define ALLOT_API_YAML_H

#include <jansson.h>
#include <stddef.h>

/* NULL with a message ("line L column C: ...") in err on a syntax error, an
 * unknown alias or an empty text. Caller owns the result. */
json_t *yaml_to_json(const char *text, size_t len, char *err, size_t errlen);

#endif
