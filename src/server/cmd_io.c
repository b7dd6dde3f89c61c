/* cmd_io.c - subcommands' CA read and YAML output (see cmd_io.h). */
#include "server/cmd_io.h"

#include "api/yaml_emit.h"
#include "util/secfile.h"

#include <errno.h>
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

int cmd_print_yaml(const char *cmd, const char *header, const json_t *obj)
{
    json_t *docs = json_pack("[O]", obj);
    char *text = docs ? yaml_emit_stream(docs, NULL) : NULL;
    json_decref(docs);
    if (!text) {
        fprintf(stderr, "%s: cannot write the configuration as YAML\n", cmd);
        return 1;
    }
    size_t n = strlen(text);
    int rc = 0;
    if (fputs(header, stdout) < 0 || fwrite(text, 1, n, stdout) != n || fflush(stdout) != 0) {
        fprintf(stderr, "%s: stdout: %s\n", cmd, strerror(errno));
        rc = 1;
    }
    free(text);
    return rc;
}
