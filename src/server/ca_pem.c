/* ca_pem.c - a CA certificate read from a file (see ca_pem.h). */
#include "server/ca_pem.h"

#include "util/secfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ca_pem_read(const char *cmd, const char *path)
{
    char err[512], *pem = NULL;
    int rc = secfile_read(path, CA_PEM_MAX_BYTES, &pem, NULL, err, sizeof err);
    if (rc == SECFILE_ENOENT) {
        fprintf(stderr, "%s: %s does not exist\n", cmd, path);
        return NULL;
    }
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", cmd, err);
        return NULL;
    }
    if (!strstr(pem, "-----BEGIN CERTIFICATE-----") || strstr(pem, "PRIVATE KEY")) {
        fprintf(stderr, "%s: %s is not a PEM CA certificate%s\n", cmd, path,
                strstr(pem, "PRIVATE KEY") ? " (it holds a private key)" : "");
        free(pem);
        return NULL;
    }
    return pem;
}
