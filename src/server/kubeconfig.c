/* kubeconfig.c - hand-written kubeconfig YAML. See kubeconfig.h.
 *
 * Builds the document in a bounded buffer, then writes it through secfile.
 * Strings are always double-quoted: inside "..." YAML needs only '\\', '"'
 * and control characters escaped, which keeps the quoting rule simple enough
 * to check by eye.
 */
#include "server/kubeconfig.h"
#include "util/secfile.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>

#define DOC_MAX (256 * 1024)

typedef struct {
    char *s;
    size_t n, cap;
    int oom;
} buf;

static void put(buf *b, const char *p, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *s = cap <= DOC_MAX ? realloc(b->s, cap) : NULL;
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->n, p, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

/* 1 if s is well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF). */
static int utf8_valid(const unsigned char *s)
{
    while (*s) {
        unsigned c = *s, need, min, cp;
        if (c < 0x80) {
            s++;
            continue;
        }
        if ((c & 0xe0) == 0xc0)
            need = 1, min = 0x80, cp = c & 0x1f;
        else if ((c & 0xf0) == 0xe0)
            need = 2, min = 0x800, cp = c & 0x0f;
        else if ((c & 0xf8) == 0xf0)
            need = 3, min = 0x10000, cp = c & 0x07;
        else
            return 0;
        for (unsigned i = 1; i <= need; i++) {
            if ((s[i] & 0xc0) != 0x80) return 0;
            cp = (cp << 6) | (s[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        s += need + 1;
    }
    return 1;
}

/* Emit s as a YAML double-quoted scalar. */
static void put_quoted(buf *b, const char *s)
{
    puts_(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            put(b, esc, 2);
        } else if (*p < 0x20 || *p == 0x7f) {
            snprintf(esc, sizeof esc, "\\x%02x", *p);
            puts_(b, esc);
        } else {
            put(b, (const char *)p, 1);
        }
    }
    puts_(b, "\"");
}

static void put_base64(buf *b, const unsigned char *p, size_t n)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < n) v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        char out[4] = {tbl[(v >> 18) & 63], tbl[(v >> 12) & 63],
                       i + 1 < n ? tbl[(v >> 6) & 63] : '=', i + 2 < n ? tbl[v & 63] : '='};
        put(b, out, 4);
    }
}

/* "<indent>key: "value"\n" */
static void put_kv(buf *b, const char *indent_key, const char *value)
{
    puts_(b, indent_key);
    puts_(b, ": ");
    put_quoted(b, value);
    puts_(b, "\n");
}

/* token, or else cert_pem and key_pem: the user's credentials. */
static void build(buf *b, const char *server_url, const char *ca_pem, const char *user,
                  const char *token, const char *cert_pem, const char *key_pem)
{
    puts_(b, "apiVersion: v1\nkind: Config\nclusters:\n- name: ");
    put_quoted(b, KUBECONFIG_CLUSTER);
    puts_(b, "\n  cluster:\n");
    put_kv(b, "    server", server_url);
    puts_(b, "    certificate-authority-data: ");
    put_base64(b, (const unsigned char *)ca_pem, strlen(ca_pem));
    puts_(b, "\nusers:\n- name: ");
    put_quoted(b, user);
    puts_(b, "\n  user:\n");
    if (token) {
        put_kv(b, "    token", token);
    } else {
        puts_(b, "    client-certificate-data: ");
        put_base64(b, (const unsigned char *)cert_pem, strlen(cert_pem));
        puts_(b, "\n    client-key-data: ");
        put_base64(b, (const unsigned char *)key_pem, strlen(key_pem));
        puts_(b, "\n");
    }
    puts_(b, "contexts:\n- name: ");
    put_quoted(b, KUBECONFIG_CONTEXT);
    puts_(b, "\n  context:\n");
    put_kv(b, "    cluster", KUBECONFIG_CLUSTER);
    put_kv(b, "    user", user);
    put_kv(b, "current-context", KUBECONFIG_CONTEXT);
    puts_(b, "preferences: {}\n");
}

/* Check the strings, build, write 0600. */
static int write_doc(const char *path, const char *const *args, const char *const *what, size_t n,
                     const char *server_url, const char *ca_pem, const char *user,
                     const char *token, const char *cert_pem, const char *key_pem, char *err,
                     size_t errlen)
{
    buf b = {NULL, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        if (!args[i] || !utf8_valid((const unsigned char *)args[i])) {
            snprintf(err, errlen, "kubeconfig %s: missing or non-UTF-8 %s", path, what[i]);
            return -1;
        }
    }
    build(&b, server_url, ca_pem, user, token, cert_pem, key_pem);
    int rc = -1;
    if (b.oom)
        snprintf(err, errlen, "kubeconfig %s: document too large or out of memory", path);
    else
        rc = secfile_write(path, b.s, b.n, 0600, 0, err, errlen);
    if (b.s) gnutls_memset(b.s, 0, b.cap);
    free(b.s);
    return rc;
}

int kubeconfig_write(const char *path, const char *server_url, const char *ca_pem, const char *user,
                     const char *token, char *err, size_t errlen)
{
    const char *const args[] = {server_url, ca_pem, user, token};
    static const char *const what[] = {"server URL", "CA", "user", "token"};
    return write_doc(path, args, what, 4, server_url, ca_pem, user, token, NULL, NULL, err, errlen);
}

int kubeconfig_write_cert(const char *path, const char *server_url, const char *ca_pem,
                          const char *user, const char *cert_pem, const char *key_pem, char *err,
                          size_t errlen)
{
    const char *const args[] = {server_url, ca_pem, user, cert_pem, key_pem};
    static const char *const what[] = {"server URL", "CA", "user", "certificate", "key"};
    return write_doc(path, args, what, 5, server_url, ca_pem, user, NULL, cert_pem, key_pem, err,
                     errlen);
}

/* The value of the first `server: "..."` line of a kubeconfig kubeconfig_write
 * wrote (double-quoted, no escapes in a URL allot writes). */
int kubeconfig_read_server(const char *path, char *out, size_t n, char *err, size_t errlen)
{
    char *text = NULL;
    int rc = secfile_read(path, DOC_MAX, &text, NULL, err, errlen);
    if (rc == SECFILE_ENOENT) snprintf(err, errlen, "%s: no such file", path);
    if (rc != 0) return -1;
    rc = -1;
    const char *p = strstr(text, "\n    server: \"");
    if (p) {
        p += strlen("\n    server: \"");
        const char *q = strchr(p, '"');
        if (q && (size_t)(q - p) < n && !memchr(p, '\\', (size_t)(q - p))) {
            memcpy(out, p, (size_t)(q - p));
            out[q - p] = '\0';
            rc = 0;
        }
    }
    if (rc != 0) snprintf(err, errlen, "%s: no server URL found", path);
    gnutls_memset(text, 0, strlen(text));
    free(text);
    return rc;
}
