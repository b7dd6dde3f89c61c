/* kube.h - a client of a real Kubernetes API server, for allot's cluster
 * mode (issue 28): allotd lists and watches the cluster it enforces on and
 * writes only through that cluster's API.
 *
 *   kube_config   where the API server is and how to authenticate to it:
 *                 from a kubeconfig file or the in-cluster ServiceAccount.
 *   kube_client   HTTPS requests (libcurl), thread-safe, connections reused.
 *   kube_reflector  one collection kept in step on its own thread: LIST,
 *                 then WATCH from the list's resourceVersion with bookmarks,
 *                 relisting on 410 Gone and reconnecting with backoff.
 *
 * Secrets (the bearer token, the client key) are never logged.
 */
#ifndef ALLOT_KUBE_KUBE_H
#define ALLOT_KUBE_KUBE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kube_config {
    char *server;  /* "https://host:port", no trailing slash */
    char *ca_file; /* PEM file path, or NULL (then ca_pem may be set) */
    char *ca_pem;  /* certificate-authority-data decoded, or NULL */
    char *token;   /* bearer token, or NULL (never logged) */
    char *cert_pem,
        *key_pem;  /* client-certificate(-data)/client-key(-data) read into memory, or NULL */
    bool insecure; /* insecure-skip-tls-verify */
    /* Additions beyond the first interface: */
    char *token_file; /* where token was read from (tokenFile, in-cluster), or NULL: the client
                       * re-reads it every minute, as client-go does, since kubelet rotates bound
                       * ServiceAccount tokens */
    char *namespace;  /* the context's namespace (in-cluster: the pod's), or NULL */
} kube_config;

/* From a kubeconfig file (current-context; the *-data fields base64-decoded; token or tokenFile;
 * relative file paths resolved against the kubeconfig's directory), or with path NULL the
 * in-cluster config (KUBERNETES_SERVICE_HOST/PORT,
 * /var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt}). 0, or -1 with a message in err. On
 * failure *out holds nothing (to free or not). */
int kube_config_load(const char *path, kube_config *out, char *err, size_t errlen);
void kube_config_free(kube_config *c);
/* A deep copy of src into dst; -1 when out of memory (dst then empty). */
int kube_config_copy(kube_config *dst, const kube_config *src);

typedef struct kube_client kube_client; /* thread-safe; reuses connections */
kube_client *kube_client_new(const kube_config *cfg, char *err, size_t errlen); /* copies cfg */
void kube_client_free(kube_client *c);
/* One request. body may be NULL; content_type NULL means application/json. On a response
 * (any status) returns 0 with *status and *resp (malloc'd, NUL-terminated, caller frees; may be
 * NULL when empty); -1 with err on a transport error. timeout_ms bounds the whole request
 * (0: 60 s). A response larger than KUBE_MAX_RESPONSE is a transport error. */
int kube_request(kube_client *c, const char *method, const char *path, const char *body,
                 const char *content_type, long timeout_ms, long *status, char **resp, char *err,
                 size_t errlen);
#define KUBE_MAX_RESPONSE ((size_t)256 << 20)

/* A reflector keeps one collection in step: LIST (paged with limit/continue), then WATCH from the
 * list's resourceVersion with allowWatchBookmarks=true, relisting on 410 Gone / "too old resource
 * version" (an ERROR event with code 410, or the HTTP status), and reconnecting with capped
 * exponential backoff with jitter (100 ms .. 30 s) on any other failure; watches carry
 * timeoutSeconds (5-10 minutes, jittered) and are resumed from the last seen resourceVersion.
 * Listed items get the kind and apiVersion the list implies (a list's items carry neither), so
 * that replace and event see objects of one shape. */
typedef struct kube_reflector_ops {
    /* After every (re)list: the whole collection (`items`, an array the callee may keep a reference
     * to) at list resourceVersion rv. The callee replaces what it held with it. */
    void (*replace)(void *arg, json_t *items, const char *rv);
    /* One watch event: type "ADDED" | "MODIFIED" | "DELETED"; obj borrowed (json_incref to keep).
     * BOOKMARKs are consumed by the reflector (they only move its resourceVersion). */
    void (*event)(void *arg, const char *type, json_t *obj);
} kube_reflector_ops;
typedef struct kube_reflector kube_reflector;
/* path: a collection path ("/api/v1/namespaces", "/apis/capsule.clastix.io/v1beta2/resourcepools",
 * "/api/v1/pods"); label_selector may be NULL. Callbacks run on the reflector's thread, one at a
 * time per reflector. Returns NULL with err on a bad argument. The client must outlive it. */
kube_reflector *kube_reflector_start(kube_client *c, const char *path, const char *label_selector,
                                     const kube_reflector_ops *ops, void *arg, char *err,
                                     size_t errlen);
bool kube_reflector_synced(const kube_reflector *r); /* its first list has been replaced */
/* Joins its thread; no callback after. Prompt: it wakes the blocked transfer or backoff sleep.
 * Never from its own callbacks (the thread would join itself). */
void kube_reflector_stop(kube_reflector *r);

/* Reflector counters for metrics (monotonic since start). */
typedef struct kube_reflector_stats {
    uint64_t lists;          /* LISTs completed and replaced (the first one included) */
    uint64_t relists_410;    /* relists because the resourceVersion was gone (410) */
    uint64_t watch_restarts; /* watches reopened (ended, timed out or failed) */
    uint64_t events;         /* ADDED/MODIFIED/DELETED delivered */
    uint64_t bookmarks;      /* BOOKMARKs consumed */
    uint64_t failures;       /* failed LISTs and watches (transport, HTTP status, bad stream) */
} kube_reflector_stats;
void kube_reflector_stats_get(const kube_reflector *r, kube_reflector_stats *out);
/* The resourceVersion it would resume a watch from ("" before the first list); into buf. */
void kube_reflector_rv(const kube_reflector *r, char *buf, size_t len);

#endif
