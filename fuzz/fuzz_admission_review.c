/* fuzz_admission_review.c - libFuzzer target for AdmissionReview requests
 * (api/admission_review.h), the body a kube-apiserver POSTs to allot's
 * webhook.
 *
 * Input: the review's body as sent. ar_parse reads it; nothing may crash,
 * leak or hang, and (abort() otherwise):
 *   - a refusal comes with a 400 or 413 and a message, and leaves the
 *     request empty;
 *   - an accepted review has its apiVersion, a non-empty uid within
 *     AR_MAX_UID, a kind and a resource with version and name, a known
 *     operation, and the object the operation needs;
 *   - the answers built for it (allowed, and denied with a Status and
 *     warnings) echo its apiVersion and uid and are printable JSON.
 */
#include "api/admission_review.h"
#include "api/status.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT (64 * 1024)

static void check(int ok)
{
    if (!ok) abort();
}

static void check_answer(const ar_request *r, const ar_answer *a)
{
    json_t *v = ar_response(r, a);
    check(v != NULL);
    check(!strcmp(json_string_value(json_object_get(v, "apiVersion")), r->api_version));
    const json_t *resp = json_object_get(v, "response");
    check(!strcmp(json_string_value(json_object_get(resp, "uid")), r->uid));
    check(json_is_boolean(json_object_get(resp, "allowed")));
    check(json_is_true(json_object_get(resp, "allowed")) == a->allowed);
    check(a->allowed || json_is_object(json_object_get(resp, "status")));
    char *text = json_dumps(v, JSON_COMPACT);
    check(text != NULL);
    free(text);
    json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT) return 0;
    ar_request r;
    api_err e;
    api_err_init(&e);
    if (ar_parse((const char *)data, size, &r, &e) != 0) {
        check(e.code == API_BAD_REQUEST || e.code == API_TOO_LARGE);
        check(e.message[0] != '\0');
        check(r.root == NULL);
        api_err_clear(&e);
        return 0;
    }
    check(e.code == API_OK);
    check(!strcmp(r.api_version, AR_V1) || !strcmp(r.api_version, AR_V1BETA1));
    check(r.uid[0] && strlen(r.uid) <= AR_MAX_UID);
    check(r.kind.version[0] && r.kind.name[0] && r.resource.version[0] && r.resource.name[0]);
    check(strlen(r.name) <= AR_MAX_NAME && strlen(r.namespace_) <= AR_MAX_NAME);
    check(r.op >= AR_CREATE && r.op <= AR_CONNECT && ar_op_name(r.op)[0]);
    if (r.op == AR_CREATE || r.op == AR_UPDATE) check(json_is_object(r.object));
    if (r.op == AR_UPDATE || r.op == AR_DELETE) check(r.name[0] != '\0');

    ar_answer a = {.allowed = true};
    check_answer(&r, &a);
    api_err d;
    api_err_init(&d);
    api_err_set(&d, API_FORBIDDEN, "%s \"%s\" is forbidden", r.resource.name, r.name);
    json_t *w = json_pack("[s]", r.username);
    a = (ar_answer){.allowed = false, .denial = &d, .warnings = w};
    check_answer(&r, &a);
    json_decref(w);
    api_err_clear(&d);
    ar_request_free(&r);
    return 0;
}
