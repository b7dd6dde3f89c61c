/* admission_review.h - the admission.k8s.io AdmissionReview protocol: what a
 * kube-apiserver sends a webhook, and what the webhook answers.
 *
 * Pure: no I/O, no store. ar_parse reads a request review (apiVersion
 * admission.k8s.io/v1, or v1beta1, which a 1.20 API server sends a webhook
 * whose configuration lists it first in admissionReviewVersions) into an
 * ar_request, checking it strictly: every field upstream's AdmissionRequest
 * requires is there and of its type, the operation is one of the four,
 * strings and the body are bounded. A review that fails is a 400 in the
 * api_err, never a crash. ar_response builds the answer in the request's
 * own apiVersion with its uid echoed, as upstream's API server checks
 * (VerifyAdmissionResponse): allowed, and on a denial the metav1.Status
 * upstream carries in AdmissionResponse.result (JSON "status"); optional
 * warnings; a mutation as patchType JSONPatch with the patch base64.
 *
 * Ownership: an ar_request owns the parsed review (root); every string and
 * json_t in it borrows from root and lives until ar_request_free.
 */
#ifndef ALLOT_API_ADMISSION_REVIEW_H
#define ALLOT_API_ADMISSION_REVIEW_H

#include "api/status.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define AR_GROUP "admission.k8s.io"
#define AR_V1 AR_GROUP "/v1"
#define AR_V1BETA1 AR_GROUP "/v1beta1"
#define AR_KIND "AdmissionReview"

/* Bounds. A review holds object and oldObject, each as large as etcd keeps
 * one (1.5 MiB by default) plus what the API server adds: 8 MiB is above any
 * review a default cluster sends. Strings are bounded by what Kubernetes
 * allows them to be (a DNS subdomain for names and groups). */
#define AR_MAX_BODY (8 * 1024 * 1024)
#define AR_MAX_UID 128
#define AR_MAX_NAME 253

typedef enum { AR_CREATE, AR_UPDATE, AR_DELETE, AR_CONNECT } ar_op;

/* "CREATE", "UPDATE", "DELETE", "CONNECT". */
const char *ar_op_name(ar_op op);

/* metav1.GroupVersionKind / GroupVersionResource: `name` is the kind or the
 * resource. group "" for the core group. */
typedef struct ar_gvn {
    const char *group, *version, *name;
} ar_gvn;

typedef struct ar_request {
    json_t *root;            /* the parsed review (owned) */
    const char *api_version; /* AR_V1 or AR_V1BETA1 */
    const char *uid;         /* non-empty */
    ar_gvn kind, resource;   /* request.kind, request.resource */
    /* requestKind, requestResource: the original request's when given,
     * else the same as kind and resource */
    ar_gvn request_kind, request_resource;
    const char *sub_resource; /* "" when none */
    const char *name;         /* "" when none (a create with generateName) */
    const char *namespace_;   /* "" when none */
    ar_op op;
    const char *username;     /* userInfo.username, "" when none */
    const json_t *user_info;  /* userInfo (an object), or NULL */
    const json_t *object;     /* an object, or NULL (absent or null) */
    const json_t *old_object; /* likewise */
    const json_t *options;    /* likewise */
    bool dry_run;
} ar_request;

/* Parse and check a request review of len bytes. 0 with *r filled (free it
 * with ar_request_free), or -1 with a 400 in e (r left empty). */
int ar_parse(const char *body, size_t len, ar_request *r, api_err *e);
void ar_request_free(ar_request *r);

/* The webhook's answer to r. */
typedef struct ar_answer {
    bool allowed;
    const api_err *denial;  /* when !allowed: code, reason, message, details */
    const json_t *warnings; /* a JSON array of strings, or NULL */
    const json_t *patch;    /* a JSON Patch (RFC 6902) array, or NULL: none */
} ar_answer;

/* The response review for r (caller owns), or NULL when out of memory. */
json_t *ar_response(const ar_request *r, const ar_answer *a);

/* The metav1.Status of a denial as AdmissionResponse.result carries it:
 * status "Failure", message, reason, details, code (no kind/apiVersion,
 * which a Go webhook's Status does not carry there). Caller owns. */
json_t *ar_result_status(const api_err *e);

#endif
