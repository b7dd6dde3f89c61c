/* kubeconfig.c - kube_config_load: the files a kubeconfig names, and the
 * in-cluster ServiceAccount mount. The text itself is parsed by
 * kubeconfig_parse.c (pure). */
#include "kube/kubeconfig.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_KUBECONFIG ((size_t)16 << 20)
#define MAX_PEM ((size_t)1 << 20)

char *kube_read_file(const char *path, size_t max, bool trim, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            /* read one byte past max, to tell a file of max bytes from a longer one */
            char *nb = cap <= max ? realloc(buf, (cap = cap ? cap * 2 : 4096) + 1) : NULL;
            if (!nb) {
                snprintf(err, errlen, "%s: %s", path,
                         cap > max ? "file too large" : "out of memory");
                goto fail;
            }
            buf = nb;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) break;
    }
    if (ferror(f) || len > max) {
        snprintf(err, errlen, "%s: %s", path, len > max ? "file too large" : "read error");
        goto fail;
    }
    fclose(f);
    buf[len] = '\0';
    if (trim) {
        while (len > 0 && isspace((unsigned char)buf[len - 1]))
            buf[--len] = '\0';
        size_t lead = strspn(buf, " \t\r\n");
        memmove(buf, buf + lead, len - lead + 1);
    }
    return buf;
fail:
    free(buf);
    fclose(f);
    return NULL;
}

/* Read what kube_config_parse left as paths into out. */
static int read_named_files(kube_config *out, kube_config_files *f, char *err, size_t errlen)
{
    if (f->token_file) {
        if (!(out->token = kube_read_file(f->token_file, MAX_PEM, true, err, errlen))) return -1;
        out->token_file = f->token_file;
        f->token_file = NULL;
    }
    if (f->cert_file &&
        !(out->cert_pem = kube_read_file(f->cert_file, MAX_PEM, false, err, errlen)))
        return -1;
    if (f->key_file && !(out->key_pem = kube_read_file(f->key_file, MAX_PEM, false, err, errlen)))
        return -1;
    return 0;
}

static int load_file(const char *path, kube_config *out, char *err, size_t errlen)
{
    char *text = kube_read_file(path, MAX_KUBECONFIG, false, err, errlen);
    if (!text) return -1;
    char *dir = strdup(path);
    if (!dir) {
        free(text);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        slash == dir ? (void)(dir[1] = '\0') : (void)(*slash = '\0');
    else
        strcpy(dir, ".");
    kube_config_files files;
    int rc = kube_config_parse(text, strlen(text), dir, out, &files, err, errlen);
    free(text);
    free(dir);
    if (rc) return -1;
    rc = read_named_files(out, &files, err, errlen);
    kube_config_files_free(&files);
    if (rc) kube_config_free(out);
    return rc;
}

int kube_config_incluster(const char *sa_dir, const char *host, const char *port, kube_config *out,
                          char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char path[4096];
    if (!(out->server = kube_incluster_server(host, port))) {
        snprintf(
            err, errlen,
            "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
        return -1;
    }
    snprintf(path, sizeof path, "%s/token", sa_dir);
    if (!(out->token_file = strdup(path)) ||
        !(out->token = kube_read_file(path, MAX_PEM, true, err, errlen)))
        goto fail;
    snprintf(path, sizeof path, "%s/ca.crt", sa_dir);
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "in-cluster config: %s: %s", path, strerror(errno));
        goto fail;
    }
    if (!(out->ca_file = strdup(path))) goto fail;
    snprintf(path, sizeof path, "%s/namespace", sa_dir);
    char ignored[64];
    if (stat(path, &st) == 0)
        out->namespace = kube_read_file(path, 4096, true, ignored, sizeof ignored);
    return 0;
fail:
    if (!err[0]) snprintf(err, errlen, "out of memory");
    kube_config_free(out);
    return -1;
}

int kube_config_load(const char *path, kube_config *out, char *err, size_t errlen)
{
    if (errlen) err[0] = '\0';
    if (path) return load_file(path, out, err, errlen);
    return kube_config_incluster(KUBE_SA_DIR, getenv("KUBERNETES_SERVICE_HOST"),
                                 getenv("KUBERNETES_SERVICE_PORT"), out, err, errlen);
}
