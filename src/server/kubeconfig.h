/* kubeconfig.h - write a kubeconfig that points kubectl at this allotd.
 *
 * The file is small, fixed-shape YAML written by hand: one cluster "allot"
 * (server URL and the CA as certificate-authority-data), one user with a
 * bearer token or a client certificate and key (client-certificate-data,
 * client-key-data), one context "allot" that is current. Every string value is
 * emitted double-quoted with YAML escapes, so no input can change the
 * document's structure. Written atomically with mode 0600 (it holds a token
 * or a key).
 */
#ifndef ALLOT_SERVER_KUBECONFIG_H
#define ALLOT_SERVER_KUBECONFIG_H

#include <stddef.h>

#define KUBECONFIG_CLUSTER "allot"
#define KUBECONFIG_CONTEXT "allot"

/* Write the kubeconfig to path (its directory must exist). user names the
 * user entry (e.g. "admin"). All strings are borrowed and must be valid UTF-8.
 * Returns 0, or -1 with err filled (never containing the token). */
int kubeconfig_write(const char *path, const char *server_url, const char *ca_pem, const char *user,
                     const char *token, char *err, size_t errlen);

/* The same with a client certificate and its key (PEM) instead of a token. */
int kubeconfig_write_cert(const char *path, const char *server_url, const char *ca_pem,
                          const char *user, const char *cert_pem, const char *key_pem, char *err,
                          size_t errlen);

/* The cluster's server URL in a kubeconfig written by this module, into
 * out[0..n). 0, or -1 with err filled. */
int kubeconfig_read_server(const char *path, char *out, size_t n, char *err, size_t errlen);

#endif
