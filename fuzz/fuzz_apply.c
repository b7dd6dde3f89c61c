/* fuzz_apply.c - libFuzzer target for server-side apply and managedFields
 * (api/fieldmanager.h over core/smd.h and core/fieldset.h).
 *
 * Input: a kind selector byte, then the live object (JSON, or nothing for
 * an apply that creates) and the applied configuration (YAML or JSON),
 * separated by a line "---". The configuration is applied as manager "a"
 * (forced or not, by the selector's low bit); when that succeeds, the result
 * must be an object whose managedFields decode again, and applying the same
 * configuration to it must succeed and change nothing (apply is
 * idempotent). Then the result is tracked as an update by manager "b" and
 * the configuration as a create. Nothing may crash, leak, or run past the
 * walks' limits; a refusal always carries a 4xx or 5xx code and a message.
 */
#include "api/fieldmanager.h"
#include "api/kinds.h"
#include "api/yaml.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const KINDS[][2] = {
    {"v1", "ConfigMap"}, {"v1", "Pod"},  {"apps/v1", "Deployment"},
    {"v1", "Service"},   {"v1", "Node"}, {"capsule.clastix.io/v1beta2", "ResourcePool"},
};

static void refused(const api_err *e)
{
    if (e->code == API_OK || !e->message[0]) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 16384) return 0;
    const api_kind *k = api_kind_by_kind(KINDS[data[0] % 6][0], KINDS[data[0] % 6][1]);
    bool force = data[0] & 0x80;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    const char *sep = memmem(text, len, "\n---\n", 5);
    if (!k || !sep) return 0;
    char err[256];
    json_t *live = sep > text ? json_loadb(text, (size_t)(sep - text), 0, NULL) : NULL;
    json_t *config = yaml_to_json(sep + 5, len - (size_t)(sep - text) - 5, err, sizeof err);
    if ((live && !json_is_object(live)) || !json_is_object(config)) goto done;

    fm_write wa = {k, data[0] & 0x40 ? "status" : "", "a", "2026-01-01T00:00:00Z"};
    api_err e;
    api_err_init(&e);
    json_t *r1 = fm_apply(&wa, live, config, force, NULL, &e);
    if (!r1) {
        refused(&e);
        api_err_clear(&e);
        goto track;
    }
    if (!json_is_object(r1)) abort();
    json_t *mf = json_object_get(json_object_get(r1, "metadata"), "managedFields");
    if (mf && !json_is_array(mf)) abort();
    /* the same again: accepted, nothing changes */
    bool changed = true;
    api_err e2;
    api_err_init(&e2);
    json_t *r2 = fm_apply(&wa, r1, config, false, &changed, &e2);
    if (!r2 || changed) abort();
    json_decref(r2);
    api_err_clear(&e2);
    /* an update by another manager on top */
    fm_write wb = {k, "", "b", "2026-01-01T00:00:01Z"};
    json_t *nw = json_deep_copy(live ? live : config);
    if (nw) fm_update(&wb, r1, nw);
    json_decref(nw);
    json_decref(r1);
track:;
    /* the configuration as a create */
    json_t *created = json_deep_copy(config);
    if (created) fm_update(&wa, NULL, created);
    json_decref(created);
done:
    json_decref(live);
    json_decref(config);
    return 0;
}
