/* status.h - Kubernetes Status errors and field error lists.
 *
 * One table (API_REASONS) maps each error to its HTTP code and upstream
 * Status reason. Functions return 0 on success or -1 and fill an api_err
 * the caller passes in; nothing here is global. An api_err owns its
 * `details` (a json object) and `api_err_clear` frees it.
 */
#ifndef ALLOT_API_STATUS_H
#define ALLOT_API_STATUS_H

#include <jansson.h>
#include <stdarg.h>

#define API_REASONS(X)                                                                             \
    X(API_BAD_REQUEST, 400, "BadRequest")                                                          \
    X(API_UNAUTHORIZED, 401, "Unauthorized")                                                       \
    X(API_FORBIDDEN, 403, "Forbidden")                                                             \
    X(API_NOT_FOUND, 404, "NotFound")                                                              \
    X(API_METHOD_NOT_ALLOWED, 405, "MethodNotAllowed")                                             \
    X(API_NOT_ACCEPTABLE, 406, "NotAcceptable")                                                    \
    X(API_ALREADY_EXISTS, 409, "AlreadyExists")                                                    \
    X(API_CONFLICT, 409, "Conflict")                                                               \
    X(API_GONE, 410, "Expired")                                                                    \
    X(API_TOO_LARGE, 413, "RequestEntityTooLarge")                                                 \
    X(API_UNSUPPORTED_MEDIA, 415, "UnsupportedMediaType")                                          \
    X(API_INVALID, 422, "Invalid")                                                                 \
    X(API_TOO_MANY_REQUESTS, 429, "TooManyRequests")                                               \
    X(API_INTERNAL, 500, "InternalError")                                                          \
    X(API_UNAVAILABLE, 503, "ServiceUnavailable")                                                  \
    X(API_TIMEOUT, 504, "Timeout")

typedef enum {
    API_OK = 0,
#define X(name, code, reason) name,
    API_REASONS(X)
#undef X
} api_errcode;

/* How many codes there are, API_OK included (for tables indexed by code). */
#define X(name, code, reason) +1
enum { API_NCODES = 1 API_REASONS(X) };
#undef X

typedef struct api_err {
    api_errcode code;
    char message[4096];
    json_t *details; /* owned; optional {name, group, kind, causes[]} */
} api_err;

int api_errcode_http(api_errcode c);
const char *api_errcode_reason(api_errcode c);

void api_err_init(api_err *e);
void api_err_clear(api_err *e);
/* Set code and printf-style message; returns -1 so callers can `return api_err_set(...)`. */
int api_err_set(api_err *e, api_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Attach details.name/group/kind (group "" for core). */
void api_err_details(api_err *e, const char *name, const char *group, const char *kind);

/* Common upstream shapes. `resource` is the plural (e.g. "pods"), group "" for core. */
int api_err_not_found(api_err *e, const char *group, const char *resource, const char *name);
int api_err_already_exists(api_err *e, const char *group, const char *resource, const char *name);
int api_err_conflict(api_err *e, const char *group, const char *resource, const char *name,
                     const char *why);

/* Every Status body is bounded, whatever the request held: the message is
 * at most 4 KiB (api_err.message, cut at a UTF-8 character), and of
 * details.causes the Status keeps, in order, those that fit in
 * API_STATUS_CAUSES_BYTES with each string cut at API_STATUS_STRING_BYTES.
 * Upstream lists every cause (an invalid value per key of a 3 MiB body, a
 * conflict per field and manager) and quotes values whole. */
#define API_STATUS_CAUSES_BYTES 65536
#define API_STATUS_STRING_BYTES 4096

/* The Status object for an error (caller owns the result). */
json_t *api_err_status(const api_err *e);
/* A success Status ({"status":"Success"}) with optional details. */
json_t *api_status_success(const char *name, const char *group, const char *kind);

/* ---- field errors (upstream field.ErrorList) ----
 * A list is a json array of causes {reason, message, field}; `message` is
 * the error body without the field path, as upstream puts it in causes.   */
typedef enum {
    FERR_INVALID,       /* FieldValueInvalid:   Invalid value: "v": detail */
    FERR_REQUIRED,      /* FieldValueRequired:  Required value[: detail]   */
    FERR_FORBIDDEN,     /* FieldValueForbidden: Forbidden: detail          */
    FERR_NOT_SUPPORTED, /* FieldValueNotSupported: Unsupported value: "v": supported values: ... */
    FERR_DUPLICATE,     /* FieldValueDuplicate: Duplicate value: "v"       */
    FERR_TOO_LONG,      /* FieldValueTooLong:   Too long: detail           */
    FERR_TYPE_INVALID,  /* FieldValueTypeInvalid: Invalid value: "v": detail */
} ferr_type;

/* Append one error. `value` is the offending value as JSON (may be NULL for
 * Required/Forbidden); it is printed as upstream prints it (strings quoted,
 * numbers bare). `detail` may be NULL. */
void ferr_add(json_t *list, ferr_type t, const char *field, const json_t *value,
              const char *detail);
void ferr_addf(json_t *list, ferr_type t, const char *field, const json_t *value, const char *fmt,
               ...) __attribute__((format(printf, 5, 6)));
/* Convenience for string values. */
void ferr_add_str(json_t *list, ferr_type t, const char *field, const char *value,
                  const char *detail);

/* Turn a non-empty list into a 422 Invalid error:
 *   <Kind> "<name>" is invalid: <f>: <msg>        (one error)
 *   <Kind> "<name>" is invalid: [<f>: <msg>, ...] (several)
 * Takes ownership of `list`. Returns -1. */
int api_err_invalid(api_err *e, const char *group, const char *kind, const char *name,
                    json_t *list);

#endif
