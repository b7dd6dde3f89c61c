/* kubeconfig_parse.c - kubeconfig YAML to kube_config (kubeconfig.h).
 * Pure: yaml_to_json and string work only; the files it names are read by
 * kubeconfig.c. */
#include "kube/kubeconfig.h"

#include "api/yaml.h"
#include "core/b64.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kube_config_free(kube_config *c)
{
    if (!c) return;
    free(c->server);
    free(c->ca_file);
    free(c->ca_pem);
    if (c->token) memset(c->token, 0, strlen(c->token));
    free(c->token);
    free(c->cert_pem);
    if (c->key_pem) memset(c->key_pem, 0, strlen(c->key_pem));
    free(c->key_pem);
    free(c->token_file);
    free(c->namespace);
    memset(c, 0, sizeof *c);
}

void kube_config_files_free(kube_config_files *f)
{
    free(f->token_file);
    free(f->cert_file);
    free(f->key_file);
    memset(f, 0, sizeof *f);
}

static int dup_or_null(char **dst, const char *s)
{
    *dst = s ? strdup(s) : NULL;
    return s && !*dst ? -1 : 0;
}

int kube_config_copy(kube_config *dst, const kube_config *src)
{
    memset(dst, 0, sizeof *dst);
    dst->insecure = src->insecure;
    if (dup_or_null(&dst->server, src->server) || dup_or_null(&dst->ca_file, src->ca_file) ||
        dup_or_null(&dst->ca_pem, src->ca_pem) || dup_or_null(&dst->token, src->token) ||
        dup_or_null(&dst->cert_pem, src->cert_pem) || dup_or_null(&dst->key_pem, src->key_pem) ||
        dup_or_null(&dst->token_file, src->token_file) ||
        dup_or_null(&dst->namespace, src->namespace)) {
        kube_config_free(dst);
        return -1;
    }
    return 0;
}

static int errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Whether the list `list` of doc (clusters, contexts, users: [{name,
 * <field>: {...}}]) has an entry called `name`; *val is its `field` member
 * (NULL when absent: jansson reads NULL as an empty object). */
static bool named(json_t *doc, const char *list, const char *field, const char *name, json_t **val)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, list), i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (n && strcmp(n, name) == 0) {
            *val = json_object_get(e, field);
            return true;
        }
    }
    return false;
}

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s && *s ? s : NULL;
}

/* A path as written, or joined to dir when relative. */
static char *resolve(const char *dir, const char *p)
{
    if (p[0] == '/' || !dir || !*dir) return strdup(p);
    size_t n = strlen(dir) + strlen(p) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s/%s", dir, p);
    return s;
}

/* Base64 (Go's decoder skips CR and LF, so kubeconfigs wrapped by hand
 * decode too) into a NUL-terminated string; NULL when invalid. */
static char *b64_text(const char *s)
{
    size_t n = strlen(s), m = 0;
    char *clean = malloc(n + 1);
    if (!clean) return NULL;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '\r' && s[i] != '\n') clean[m++] = s[i];
    long dn = b64_decoded_len(clean, m);
    char *out = dn >= 0 ? malloc((size_t)dn + 1) : NULL;
    if (out && b64_decode(clean, m, (unsigned char *)out) != dn) {
        free(out);
        out = NULL;
    }
    if (out) out[dn] = '\0';
    free(clean);
    return out;
}

/* Reads one "<x>-data" or "<x>" (a path) pair: data into *mem, else the
 * resolved path into *path. -1 with err on bad base64 or no memory. */
static int data_or_file(json_t *o, const char *datakey, const char *filekey, const char *dir,
                        char **mem, char **path, const char *what, char *err, size_t errlen)
{
    const char *data = str(o, datakey), *file = str(o, filekey);
    if (data) {
        if (!(*mem = b64_text(data)))
            return errf(err, errlen, "kubeconfig: %s: %s is not base64", what, datakey);
    } else if (file) {
        if (!(*path = resolve(dir, file))) return errf(err, errlen, "kubeconfig: out of memory");
    }
    return 0;
}

static int read_cluster(json_t *cl, const char *name, const char *dir, kube_config *out, char *err,
                        size_t errlen)
{
    const char *server = str(cl, "server");
    if (!server) return errf(err, errlen, "kubeconfig: cluster \"%s\" has no server", name);
    if (!(out->server = strdup(server))) return errf(err, errlen, "kubeconfig: out of memory");
    size_t n = strlen(out->server);
    while (n > 0 && out->server[n - 1] == '/')
        out->server[--n] = '\0';
    out->insecure = json_is_true(json_object_get(cl, "insecure-skip-tls-verify"));
    return data_or_file(cl, "certificate-authority-data", "certificate-authority", dir,
                        &out->ca_pem, &out->ca_file, "cluster", err, errlen);
}

static int read_user(json_t *u, const char *name, const char *dir, kube_config *out,
                     kube_config_files *f, char *err, size_t errlen)
{
    if (json_object_get(u, "exec") || json_object_get(u, "auth-provider"))
        return errf(err, errlen,
                    "kubeconfig: user \"%s\" authenticates with an exec plugin or auth provider, "
                    "which is not supported: use a token, tokenFile or client certificate",
                    name);
    const char *token = str(u, "token"), *tfile = str(u, "tokenFile");
    if (token) {
        if (!(out->token = strdup(token))) return errf(err, errlen, "kubeconfig: out of memory");
    } else if (tfile) {
        if (!(f->token_file = resolve(dir, tfile)))
            return errf(err, errlen, "kubeconfig: out of memory");
    }
    if (data_or_file(u, "client-certificate-data", "client-certificate", dir, &out->cert_pem,
                     &f->cert_file, "user", err, errlen) ||
        data_or_file(u, "client-key-data", "client-key", dir, &out->key_pem, &f->key_file, "user",
                     err, errlen))
        return -1;
    bool cert = out->cert_pem || f->cert_file, key = out->key_pem || f->key_file;
    if (cert != key)
        return errf(err, errlen, "kubeconfig: user \"%s\" has a client %s without its %s", name,
                    cert ? "certificate" : "key", cert ? "key" : "certificate");
    if (!token && !tfile && !cert && (str(u, "username") || str(u, "password")))
        return errf(err, errlen, "kubeconfig: user \"%s\": basic authentication is not supported",
                    name);
    return 0;
}

static int from_doc(json_t *doc, const char *dir, kube_config *out, kube_config_files *f, char *err,
                    size_t errlen)
{
    const char *cur = str(doc, "current-context");
    if (!cur) return errf(err, errlen, "kubeconfig: no current-context");
    json_t *ctx, *cl, *u;
    if (!named(doc, "contexts", "context", cur, &ctx))
        return errf(err, errlen, "kubeconfig: context \"%s\" not found", cur);
    const char *clname = str(ctx, "cluster"), *uname = str(ctx, "user");
    if (!clname) return errf(err, errlen, "kubeconfig: context \"%s\" names no cluster", cur);
    if (!named(doc, "clusters", "cluster", clname, &cl))
        return errf(err, errlen, "kubeconfig: cluster \"%s\" not found", clname);
    if (read_cluster(cl, clname, dir, out, err, errlen)) return -1;
    const char *ns = str(ctx, "namespace");
    if (ns && !(out->namespace = strdup(ns))) return errf(err, errlen, "kubeconfig: out of memory");
    if (!uname) return 0; /* anonymous, as kubectl allows */
    if (!named(doc, "users", "user", uname, &u))
        return errf(err, errlen, "kubeconfig: user \"%s\" not found", uname);
    return read_user(u, uname, dir, out, f, err, errlen);
}

int kube_config_parse(const char *text, size_t len, const char *dir, kube_config *out,
                      kube_config_files *files, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    memset(files, 0, sizeof *files);
    char yerr[256];
    json_t *doc = yaml_to_json(text, len, yerr, sizeof yerr);
    if (!doc) return errf(err, errlen, "kubeconfig: %s", yerr);
    int rc = json_is_object(doc) ? from_doc(doc, dir, out, files, err, errlen)
                                 : errf(err, errlen, "kubeconfig: not a mapping");
    json_decref(doc);
    if (rc) {
        kube_config_free(out);
        kube_config_files_free(files);
    }
    return rc;
}

char *kube_incluster_server(const char *host, const char *port)
{
    if (!host || !*host || !port || !*port) return NULL;
    bool v6 = strchr(host, ':') != NULL;
    size_t n = strlen(host) + strlen(port) + 16;
    char *s = malloc(n);
    if (s) snprintf(s, n, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
    return s;
}
