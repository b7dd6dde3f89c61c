/* config_validation.h - upstream validation of ConfigMaps and Secrets, and
 * a Secret's stringData.
 *
 * Ports ValidateConfigMap / ValidateConfigMapUpdate and ValidateSecret /
 * ValidateSecretUpdate (pkg/apis/core/validation/validation.go) with their
 * field paths and texts:
 *   - every key of data (and a ConfigMap's binaryData) is a config key
 *     (`data[]: Invalid value: "": a valid config key must consist of ...`);
 *     a ConfigMap key may not be in both data and binaryData;
 *   - the values together hold at most 1 MiB (core.MaxSecretSize), counted
 *     as upstream counts them: decoded bytes of base64 values, bytes of
 *     strings (`data: Too long: must have at most 1048576 bytes` for a
 *     Secret, `[]: Too long: ...` for a ConfigMap, whose error names the
 *     whole object);
 *   - a Secret's type asks for its keys (kubernetes.io/tls: tls.crt and
 *     tls.key, kubernetes.io/dockerconfigjson: a JSON object under
 *     .dockerconfigjson, ...), and may not change;
 *   - `immutable: true` freezes data (and binaryData) and itself.
 * Keys are visited in sorted order (upstream ranges over Go maps), so the
 * causes are deterministic. A value never appears in a message: a malformed
 * docker config is reported as "<secret contents redacted>", as upstream.
 *
 * Inputs are borrowed; causes are appended to a JSON array the caller owns.
 */
#ifndef ALLOT_API_CONFIG_VALIDATION_H
#define ALLOT_API_CONFIG_VALIDATION_H

#include <jansson.h>

/* core.MaxSecretSize, which bounds ConfigMaps too. */
#define CONFIG_MAX_BYTES (1024 * 1024)

/* The kinds.h `validate` hooks: create (old NULL) and update. */
void configmap_validate(const json_t *obj, const json_t *old, json_t *causes);
void secret_validate(const json_t *obj, const json_t *old, json_t *causes);

/* What upstream's conversion of a v1 Secret does on every write: each
 * stringData entry is written into data (base64-encoded, replacing a value
 * under the same key) and stringData is dropped, so it is never stored or
 * read back. A stringData value that is not a string is left to
 * validation's type checks (the object is then refused before this runs). */
void secret_merge_string_data(json_t *obj);

#endif
