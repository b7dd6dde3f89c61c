/* audit.h - the audit log: one upstream audit.k8s.io/v1 Event per request
 * and stage, as JSON lines, decided by an upstream audit Policy.
 *
 * The policy is upstream's (apiVersion audit.k8s.io/v1, kind Policy): rules
 * are tried in order and the first that matches gives the level (None,
 * Metadata, Request, RequestResponse); a rule matches on users, userGroups,
 * verbs, namespaces and resources (group; resources named, "*", "res/sub",
 * a subresource of any resource or any subresource of one; resourceNames)
 * or nonResourceURLs (exact, "*", or a prefix ending in "*"), as
 * k8s.io/apiserver/pkg/audit/policy/checker.go does. No rule
 * matching means None. omitStages, on the policy and on a rule, drop stages.
 * Without a policy file, allotd logs every request at Metadata.
 *
 * What the log never holds, whatever the policy says:
 *  - tokens or any Authorization header (the Event has no field for them);
 *  - the bodies of Secrets, of a ServiceAccount's token subresource (a
 *    TokenRequest's response is a token) and of TokenReviews: those requests
 *    are logged at Metadata at most.
 * Every string is JSON-escaped (jansson), bytes that are not UTF-8 become
 * U+FFFD: a request path cannot forge a line.
 *
 * The log file is created 0600 and appended to with one write(2) per event
 * (O_APPEND: lines from concurrent requests never interleave).
 */
#ifndef ALLOT_SERVER_AUDIT_H
#define ALLOT_SERVER_AUDIT_H

#include "server/auth.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum { AUDIT_NONE, AUDIT_METADATA, AUDIT_REQUEST, AUDIT_REQUEST_RESPONSE } audit_level;

/* Stages, as bits for omitStages. */
enum {
    AUDIT_STAGE_RECEIVED = 1,
    AUDIT_STAGE_STARTED = 2,
    AUDIT_STAGE_COMPLETE = 4,
    AUDIT_STAGE_PANIC = 8
};

typedef struct audit_policy audit_policy;

/* A policy from its YAML or JSON text. NULL with err set ("rules[2].level:
 * ..."), or "out of memory". */
audit_policy *audit_policy_parse(const char *text, size_t len, char *err, size_t errlen);
/* Every request at Metadata, every stage. */
audit_policy *audit_policy_default(void);
void audit_policy_free(audit_policy *p);

/* What a request is, for the policy and the Event (all borrowed; "" when
 * not applicable). The user is the authenticated one (the policy decides on
 * it, as upstream's runs before impersonation); `impersonated` the user it
 * acts as, recorded as the Event's impersonatedUser. */
typedef struct audit_attrs {
    const char *user, *uid;
    const char *const *groups;
    size_t ngroups;
    const char *verb;
    bool resource_request;
    const char *api_group, *api_version, *resource, *subresource, *ns, *name;
    const char *path; /* the request URI, query included */
    const char *source_ip, *user_agent;
    const auth_user *impersonated; /* or NULL */
} audit_attrs;

/* The level for a request, and the stages to leave out (AUDIT_STAGE_* bits;
 * may be NULL). Bodies that must never be logged cap the level at
 * Metadata. */
audit_level audit_policy_level(const audit_policy *p, const audit_attrs *a, unsigned *omit);

typedef struct audit_log audit_log;

/* Open (create 0600, append) the log at path. NULL with err set. */
audit_log *audit_log_open(const char *path, char *err, size_t errlen);
void audit_log_close(audit_log *l);

/* One request's audit record, filled as the request goes. */
typedef struct audit_event {
    char id[37];       /* auditID */
    char received[32]; /* requestReceivedTimestamp */
    audit_level level;
    unsigned omit;
    const json_t *request;  /* the decoded body (borrowed), or NULL */
    const json_t *response; /* the response object (borrowed), or NULL */
    int code;               /* the response status code */
    const char *message;    /* a failure's Status message, or NULL */
    const char *decision;   /* authorization.k8s.io/decision ("allow"/"forbid"), or NULL */
    const char *reason;     /* authorization.k8s.io/reason, or NULL */
} audit_event;

/* Start ev for a request received now: its ID, time, level and stages. */
void audit_event_begin(audit_event *ev, const audit_policy *p, const audit_attrs *a);

/* The Event line for stage (one AUDIT_STAGE_* bit), newline included, or NULL
 * (level None, stage omitted, out of memory). Caller frees. */
char *audit_event_line(const audit_event *ev, const audit_attrs *a, unsigned stage, size_t *len);

/* Write the stage's line to l (no-op when l is NULL or the stage is not
 * logged). 0, or -1 when the write failed. */
int audit_log_stage(audit_log *l, const audit_event *ev, const audit_attrs *a, unsigned stage);

#endif
