/* kubeconfig.h - a kubeconfig's text as a kube_config (pure part of
 * kube_config_load, so it is tested without files).
 *
 * The current-context names a context, the context a cluster and a user,
 * as kubectl reads them. What the text only names by path (the token file,
 * the client certificate and key files) comes back in kube_config_files for
 * the caller to read; certificate-authority stays a path in ca_file, as curl
 * reads it. Relative paths are resolved against `dir` (the kubeconfig's own
 * directory), as client-go does. A *-data field wins over its file
 * ("will override", clientcmd says), a token over a tokenFile.
 *
 * Users that authenticate with exec plugins, auth providers or a username
 * and password are refused with a message naming what is missing: cluster
 * mode reads a ServiceAccount token or a client certificate.
 */
#ifndef ALLOT_KUBE_KUBECONFIG_H
#define ALLOT_KUBE_KUBECONFIG_H

#include "kube/kube.h"

typedef struct kube_config_files {
    char *token_file, *cert_file, *key_file; /* resolved paths, or NULL */
} kube_config_files;

/* 0 with *out and *files filled (caller frees both), or -1 with err (and
 * nothing to free). dir may be NULL (paths then stay as written). */
int kube_config_parse(const char *text, size_t len, const char *dir, kube_config *out,
                      kube_config_files *files, char *err, size_t errlen);
void kube_config_files_free(kube_config_files *f);

/* The in-cluster server URL for KUBERNETES_SERVICE_HOST and _PORT (an IPv6
 * host in brackets), malloc'd; NULL when either is empty. */
char *kube_incluster_server(const char *host, const char *port);

/* kube_config_load's in-cluster half, with the ServiceAccount directory
 * (normally KUBE_SA_DIR) and the service host and port given: the token
 * (trimmed; token_file set so it is re-read), ca.crt as ca_file, the
 * namespace file when present. 0, or -1 with err. */
#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
int kube_config_incluster(const char *sa_dir, const char *host, const char *port, kube_config *out,
                          char *err, size_t errlen);

/* A file's contents, NUL-terminated (malloc'd), at most max bytes; NULL
 * with err otherwise. With trim, trailing and leading whitespace is cut
 * (token files end in a newline). */
char *kube_read_file(const char *path, size_t max, bool trim, char *err, size_t errlen);

#endif
