/* fuzz_body.c - libFuzzer target for request bodies of every served kind.
 *
 * Input: two header bytes, then a body.
 *   byte 0: the kind, an index into the kind table (api/kinds.h) modulo its
 *           size; a value past the table (0xff in the seeds) takes the kind
 *           named by the body's apiVersion and kind, so seeds survive rows
 *           being added to the table;
 *   byte 1: bit 0: an update: the body is "NEW\0OLD", OLD is first created as
 *           below, then NEW is validated as its update (subresource from
 *           bits 1-3: "", status, binding, resize, scale);
 *           bit 4: the body (NEW) is a protobuf object message of the kind
 *           (api/protobuf.h), as kubectl's typed clients send, not JSON.
 * Each body goes the way the REST layer takes it before the store sees it
 * (src/server/rest.c decode_body and typed_body, src/registry/registry.c
 * prepare_create or prepare_update, and validate): JSON with duplicate keys refused, an object
 * with an object metadata, apiVersion/kind filled in or checked, decoded as
 * its typed kind (tc_decode: wrong types refused, unknown fields pruned,
 * quantities canonical), create-time metadata set, the kind's defaults, a
 * generateName filled in, ObjectMeta and the kind's validation, the warnings
 * on create, and the 422 Status built from the causes. An update keeps the
 * stored name and system fields, a status write changes only status, a
 * resize only container resources (pod_resize_apply), then the kind's
 * defaults and ValidateObjectMetaUpdate, validate and validate_update run. Nothing may crash,
 * leak or hang, and (abort() otherwise):
 *   - a decoding error comes with a message; causes are field errors (objects
 *     with a message) and api_err_invalid turns them into a 422 Status;
 *   - decoding is idempotent: a decoded object decodes again unchanged, with
 *     no unknown fields, and defaulting twice changes nothing more than once.
 */
#include "api/kinds.h"
#include "api/pod_resize.h"
#include "api/protobuf.h"
#include "api/schema.h"
#include "api/status.h"
#include "api/typecheck.h"
#include "api/validation.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT (64 * 1024)

static void check(int ok)
{
    if (!ok) abort();
}

/* rest.c parse_body + decode_body: NULL where the REST layer answers 400. */
static json_t *decode_body(const api_kind *k, const uint8_t *body, size_t len, bool protobuf)
{
    char want[128];
    api_kind_api_version(k, want, sizeof want);
    json_t *obj;
    if (protobuf) {
        api_err e;
        api_err_init(&e);
        if (!pb_kind_known(want, k->kind)) return NULL;
        obj = pb_decode_object(want, k->kind, body, len, &e);
        if (!obj) check(e.code != API_OK && e.message[0]);
        api_err_clear(&e);
    } else {
        obj = json_loadb((const char *)body, len, JSON_REJECT_DUPLICATES, NULL);
    }
    if (!obj) return NULL;
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_is_object(obj) || (meta && !json_is_object(meta))) goto refuse;
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    if (!kind || !*kind) {
        kind = k->kind;
        json_object_set_new(obj, "kind", json_string(kind));
    }
    if ((av && *av && strcmp(av, want) != 0) || strcmp(kind, k->kind) != 0) goto refuse;
    json_object_set_new(obj, "apiVersion", json_string(want));
    return obj;
refuse:
    json_decref(obj);
    return NULL;
}

/* rest.c typed_body: 0, or -1 for the 400. Checks that decoding is idempotent. */
static int typed_body(const api_kind *k, json_t *obj)
{
    const sch_msg *m = api_kind_schema(k);
    if (!m) return 0;
    tc_result r;
    int rc = tc_decode(m, obj, &r);
    if (rc != 0) {
        check(r.error[0] != '\0');
    } else if (r.unknown) {
        char strict[1024];
        check(json_is_array(r.unknown) && json_array_size(r.unknown) > 0);
        tc_strict_error(r.unknown, strict, sizeof strict);
        check(strncmp(strict, "strict decoding error: ", 23) == 0);
    }
    tc_result_clear(&r);
    if (rc != 0) return -1;

    json_t *again = json_deep_copy(obj);
    check(again != NULL);
    check(tc_decode(m, again, &r) == 0 && r.unknown == NULL);
    check(json_equal(again, obj));
    tc_result_clear(&r);
    /* a strategic merge patch's result is decoded in the other mode */
    check(tc_decode_mode(m, again, TC_UNSTRUCTURED, &r) == 0);
    tc_result_clear(&r);
    json_decref(again);
    return 0;
}

static bool tracks_generation(const api_kind *k)
{
    return (k->subresources & API_SUB_STATUS) && !(k->flags & API_KIND_NO_GENERATION);
}

/* registry.c prepare_create with a fixed uid and clock: 0, or -1 for the 400. */
static int prepare_create(const api_kind *k, json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (!meta) json_object_set_new(obj, "metadata", meta = json_object());
    const char *objns = json_string_value(json_object_get(meta, "namespace"));
    if (k->namespaced) {
        if (objns && *objns && strcmp(objns, "default") != 0) return -1;
        json_object_set_new(meta, "namespace", json_string("default"));
    } else {
        json_object_del(meta, "namespace");
    }
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    if (rv && *rv) return -1;
    json_object_set_new(meta, "uid", json_string("3c5f7e4a-1b2d-4e6f-8a9b-0c1d2e3f4a5b"));
    json_object_set_new(meta, "creationTimestamp", json_string("2024-05-01T12:00:00Z"));
    json_object_del(meta, "deletionTimestamp");
    json_object_del(meta, "deletionGracePeriodSeconds");
    json_object_del(meta, "resourceVersion");
    json_object_del(meta, "selfLink");
    if (tracks_generation(k)) json_object_set_new(meta, "generation", json_integer(1));
    if ((k->subresources & API_SUB_STATUS) && !(k->flags & API_KIND_STATUS_ON_CREATE))
        json_object_del(obj, "status");
    if (k->defaults) {
        k->defaults(obj);
        json_t *twice = json_deep_copy(obj);
        check(twice != NULL);
        k->defaults(twice);
        check(json_equal(twice, obj)); /* defaulting is idempotent */
        json_decref(twice);
    }
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *gen = json_string_value(json_object_get(meta, "generateName"));
    if ((!name || !*name) && gen && *gen) {
        char buf[512];
        snprintf(buf, sizeof buf, "%sx7k2q", gen);
        json_object_set_new(meta, "name", json_string(buf));
    }
    return 0;
}

static void check_causes(const api_kind *k, const json_t *obj, json_t *causes)
{
    size_t i;
    json_t *c;
    check(json_is_array(causes));
    json_array_foreach(causes, i, c) {
        check(json_is_object(c));
        check(json_is_string(json_object_get(c, "message")));
    }
    if (json_array_size(causes) == 0) {
        json_decref(causes);
        return;
    }
    api_err e;
    api_err_init(&e);
    const char *name =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    check(api_err_invalid(&e, k->group, k->kind, name ? name : "", causes) != 0);
    check(e.code == API_INVALID && e.message[0]);
    json_t *st = api_err_status(&e);
    check(json_is_object(st));
    char *text = json_dumps(st, JSON_COMPACT);
    check(text != NULL);
    free(text);
    json_decref(st);
    api_err_clear(&e);
}

/* registry.c validate for a create: whether the object is valid. */
static bool validate_create(const api_kind *k, json_t *obj)
{
    json_t *causes = json_array();
    const json_t *meta = json_object_get(obj, "metadata");
    int n = val_object_meta(meta, k->namespaced, api_kind_name_rule(k), causes);
    check(n >= 0);
    if (k->validate) k->validate(obj, NULL, causes);
    bool ok = json_array_size(causes) == 0;
    if (ok && k->warnings_on_create) {
        json_t *w = json_array();
        k->warnings_on_create(obj, w);
        size_t i;
        json_t *s;
        json_array_foreach(w, i, s) check(json_is_string(s));
        json_decref(w);
    }
    check_causes(k, obj, causes);
    return ok;
}

/* registry.c prepare_update (a PUT to the object's URL, or to one of its
 * subresources) then validate: the new object takes the stored name,
 * namespace and system fields, a status write changes status only, a resize
 * only container resources; then defaults and the update's validation. */
static void validate_update(const api_kind *k, json_t **pnew, const json_t *old, const char *sub)
{
    static const char *const immutable_meta[] = {"uid", "creationTimestamp", "deletionTimestamp",
                                                 "deletionGracePeriodSeconds", "generation"};
    json_t *nw = *pnew;
    json_t *meta = json_object_get(nw, "metadata");
    if (!meta) json_object_set_new(nw, "metadata", meta = json_object());
    const json_t *oldm = json_object_get(old, "metadata");
    const char *name = json_string_value(json_object_get(oldm, "name"));
    const char *nname = json_string_value(json_object_get(meta, "name"));
    if (nname && name && strcmp(nname, name) != 0) return; /* 400 */
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    if (rv && *rv && strcmp(rv, "7") != 0) return; /* 409 */
    json_object_set_new(meta, "resourceVersion", json_string("7"));
    if (!strcmp(sub, "resize")) {
        if (strcmp(k->kind, "Pod") != 0) return;
        api_err e;
        api_err_init(&e);
        json_t *resized = pod_resize_apply(old, nw, &e);
        if (!resized) check(e.code != API_OK && e.message[0]);
        api_err_clear(&e);
        if (!resized) return;
        json_decref(nw);
        *pnew = nw = resized;
    } else if (!strcmp(sub, "status")) {
        json_t *merged = json_deep_copy(old);
        check(merged != NULL);
        json_t *status = json_object_get(nw, "status");
        if (status) json_object_set(merged, "status", status);
        else json_object_del(merged, "status");
        json_decref(nw);
        *pnew = nw = merged;
    } else {
        json_object_set_new(meta, "name", json_string(name ? name : ""));
        if (k->namespaced) json_object_set_new(meta, "namespace", json_string("default"));
        else json_object_del(meta, "namespace");
        for (size_t i = 0; i < sizeof immutable_meta / sizeof *immutable_meta; i++) {
            json_t *v = json_object_get(oldm, immutable_meta[i]);
            if (v) json_object_set(meta, immutable_meta[i], v);
            else json_object_del(meta, immutable_meta[i]);
        }
        if ((k->subresources & API_SUB_STATUS) && !*sub) {
            json_t *status = json_object_get(old, "status");
            if (!status) json_object_del(nw, "status");
            else json_object_set_new(nw, "status", json_copy(status));
        }
        if (tracks_generation(k) &&
            !json_equal(json_object_get(old, "spec"), json_object_get(nw, "spec")))
            json_object_set_new(meta, "generation",
                                json_integer(json_integer_value(json_object_get(oldm, "generation")) + 1));
    }
    if (k->defaults) k->defaults(nw);
    meta = json_object_get(nw, "metadata");
    json_t *causes = json_array();
    val_object_meta(meta, k->namespaced, api_kind_name_rule(k), causes);
    val_object_meta_update(meta, oldm, causes);
    if (k->validate) k->validate(nw, old, causes);
    if (k->validate_update) k->validate_update(nw, old, sub, causes);
    check_causes(k, nw, causes);
}

static const api_kind *pick_kind(uint8_t b, const uint8_t *body, size_t len)
{
    size_t n = api_kind_count();
    if (b < n) return api_kind_at(b);
    /* by the body's apiVersion and kind (a cheap scan; the seeds use it) */
    json_t *o = json_loadb((const char *)body, len, JSON_DISABLE_EOF_CHECK, NULL);
    const char *av = json_string_value(json_object_get(o, "apiVersion"));
    const char *kind = json_string_value(json_object_get(o, "kind"));
    const api_kind *k = av && kind ? api_kind_by_kind(av, kind) : NULL;
    json_decref(o);
    return k ? k : api_kind_at(b % n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const subs[] = {"", "status", "binding", "resize", "scale"};
    if (size < 2 || size > MAX_INPUT) return 0;
    const uint8_t *body = data + 2;
    size_t len = size - 2;
    bool update = data[1] & 1, protobuf = data[1] & 0x10;
    const char *sub = subs[((data[1] >> 1) & 7) % 5];
    const uint8_t *nul = update ? memchr(body, 0, len) : NULL;
    size_t newlen = nul ? (size_t)(nul - body) : len;
    const api_kind *k = pick_kind(data[0], body, newlen);
    if (!k) return 0;

    json_t *old = NULL;
    if (nul) { /* the stored object: created first */
        old = decode_body(k, nul + 1, len - newlen - 1, false);
        if (!old || typed_body(k, old) != 0 || prepare_create(k, old) != 0 ||
            !validate_create(k, old)) {
            json_decref(old);
            return 0;
        }
        json_object_set_new(json_object_get(old, "metadata"), "resourceVersion",
                            json_string("7"));
    }
    json_t *obj = decode_body(k, body, newlen, protobuf);
    if (!obj || typed_body(k, obj) != 0) goto done;
    if (old) {
        validate_update(k, &obj, old, sub);
    } else if (prepare_create(k, obj) == 0) {
        validate_create(k, obj);
    }
done:
    json_decref(obj);
    json_decref(old);
    return 0;
}
