/* kubeconfig.h - write a kubeconfig that points kubectl at this allotd.
 *
 * The file is small, fixed-shape YAML written by hand: one cluster "allot"
 * (server URL and the CA as certificate-authority-data), one user with a
 * bearer token, one context "allot" that is current. Every string value is
 * emitted double-quoted with YAML escapes, so no input can change the
 * document's structure. Written atomically with mode 0600 (it holds a token).
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

#endif
