/* client.c - kube_client: HTTPS requests to one API server through
 * libcurl (kube.h).
 *
 * Thread-safety: the client's configuration is immutable after
 * kube_client_new, except the bearer token, which is re-read from its file
 * (kubelet rotates bound ServiceAccount tokens) under `mu`. Each request
 * borrows an easy handle from a small pool: a handle keeps its connections
 * and TLS sessions, so reusing handles reuses connections, and a handle is
 * used by one thread at a time.
 */
#include "kube/kube_internal.h"
#include "kube/kubeconfig.h"

#include "core/dbuf.h"
#include "util/clock.h"
#include "util/log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL_MAX 16           /* idle handles kept; more are closed */
#define TOKEN_REREAD_MS 60000 /* as client-go's cachingTokenSource */
#define CONNECT_TIMEOUT_MS 10000L
#define DEFAULT_TIMEOUT_MS 60000L

struct kube_client {
    kube_config cfg;
    pthread_mutex_t mu; /* guards pool, npool, cfg.token, token_read_ms */
    CURL *pool[POOL_MAX];
    int npool;
    int64_t token_read_ms;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

kube_client *kube_client_new(const kube_config *cfg, char *err, size_t errlen)
{
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK) {
        snprintf(err, errlen, "curl_global_init: %s", curl_easy_strerror(global_rc));
        return NULL;
    }
    if (!cfg || !cfg->server || strncmp(cfg->server, "https://", 8) != 0) {
        /* plain http would send the bearer token in the clear */
        snprintf(err, errlen, "kube client: server must be an https:// URL");
        return NULL;
    }
    kube_client *c = calloc(1, sizeof *c);
    if (!c || kube_config_copy(&c->cfg, cfg)) {
        free(c);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    size_t n = strlen(c->cfg.server);
    while (n > 0 && c->cfg.server[n - 1] == '/')
        c->cfg.server[--n] = '\0';
    pthread_mutex_init(&c->mu, NULL);
    c->token_read_ms = clock_mono_ms();
    return c;
}

void kube_client_free(kube_client *c)
{
    if (!c) return;
    for (int i = 0; i < c->npool; i++)
        curl_easy_cleanup(c->pool[i]);
    pthread_mutex_destroy(&c->mu);
    kube_config_free(&c->cfg);
    free(c);
}

CURL *kube_easy_get(kube_client *c)
{
    CURL *e = NULL;
    pthread_mutex_lock(&c->mu);
    if (c->npool > 0) e = c->pool[--c->npool];
    pthread_mutex_unlock(&c->mu);
    return e ? e : curl_easy_init();
}

void kube_easy_put(kube_client *c, CURL *e)
{
    if (!e) return;
    pthread_mutex_lock(&c->mu);
    if (c->npool < POOL_MAX) {
        c->pool[c->npool++] = e;
        e = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    if (e) curl_easy_cleanup(e);
}

/* "Authorization: Bearer <token>" into *hdrs, the token re-read from its
 * file when due. A failed re-read keeps the old token (and says so once per
 * minute): the file may be mid-rotation. Never logs the token. */
static int add_auth(kube_client *c, struct curl_slist **hdrs)
{
    pthread_mutex_lock(&c->mu);
    int64_t now = clock_mono_ms();
    if (c->cfg.token_file && now - c->token_read_ms >= TOKEN_REREAD_MS) {
        char err[256];
        char *t = kube_read_file(c->cfg.token_file, 1 << 20, true, err, sizeof err);
        if (t) {
            free(c->cfg.token);
            c->cfg.token = t;
        } else {
            log_msg(LOG_WARN, "kube token file unreadable, keeping the last token",
                    "\"error\":\"%s\"", err);
        }
        c->token_read_ms = now;
    }
    int rc = 0;
    if (c->cfg.token) {
        size_t n = strlen(c->cfg.token) + 32;
        char *h = malloc(n);
        struct curl_slist *l = NULL;
        if (h) {
            snprintf(h, n, "Authorization: Bearer %s", c->cfg.token);
            l = curl_slist_append(*hdrs, h);
            memset(h, 0, n);
            free(h);
        }
        if (l)
            *hdrs = l;
        else
            rc = -1;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static int set_tls(kube_client *c, CURL *e)
{
    const kube_config *k = &c->cfg;
    CURLcode rc = CURLE_OK;
    if (k->ca_pem) {
        struct curl_blob b = {.data = k->ca_pem, .len = strlen(k->ca_pem), .flags = CURL_BLOB_COPY};
        rc = curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
    } else if (k->ca_file) {
        rc = curl_easy_setopt(e, CURLOPT_CAINFO, k->ca_file);
    }
    if (rc == CURLE_OK && k->cert_pem) {
        struct curl_blob b = {
            .data = k->cert_pem, .len = strlen(k->cert_pem), .flags = CURL_BLOB_COPY};
        rc = curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &b);
        if (rc == CURLE_OK) rc = curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (rc == CURLE_OK && k->key_pem) {
        struct curl_blob b = {
            .data = k->key_pem, .len = strlen(k->key_pem), .flags = CURL_BLOB_COPY};
        rc = curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &b);
        if (rc == CURLE_OK) rc = curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (rc == CURLE_OK && k->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    return rc == CURLE_OK ? 0 : -1;
}

int kube_easy_prepare(kube_client *c, CURL *e, const char *method, const char *path,
                      const char *body, const char *content_type, long timeout_ms,
                      struct curl_slist **hdrs, char *err, size_t errlen)
{
    *hdrs = NULL;
    curl_easy_reset(e);
    size_t n = strlen(c->cfg.server) + strlen(path) + 1;
    char *url = malloc(n);
    if (!url) goto oom;
    snprintf(url, n, "%s%s", c->cfg.server, path);
    CURLcode rc = curl_easy_setopt(e, CURLOPT_URL, url); /* curl copies it */
    free(url);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "kube request: bad URL for path %s", path);
        return -1;
    }
    if (set_tls(c, e)) {
        snprintf(err, errlen, "kube request: this libcurl cannot take the TLS configuration");
        return -1;
    }
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    /* a peer that vanished without a FIN would otherwise hold a watch forever */
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 10L);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, ""); /* gzip'd LISTs */
    if (strcmp(method, "GET") == 0)
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    else
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    }
    struct curl_slist *l = curl_slist_append(NULL, "Accept: application/json");
    if (!l) goto oom;
    *hdrs = l;
    /* no 100-continue round trip before large bodies */
    if (!(l = curl_slist_append(*hdrs, "Expect:"))) goto oom;
    if (body) {
        char ct[256];
        snprintf(ct, sizeof ct, "Content-Type: %s",
                 content_type ? content_type : "application/json");
        if (!(l = curl_slist_append(*hdrs, ct))) goto oom;
    }
    if (add_auth(c, hdrs)) goto oom;
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, *hdrs);
    return 0;
oom:
    curl_slist_free_all(*hdrs);
    *hdrs = NULL;
    snprintf(err, errlen, "out of memory");
    return -1;
}

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
    return dbuf_add(arg, p, size * n) == 0 ? size * n : 0;
}

int kube_request(kube_client *c, const char *method, const char *path, const char *body,
                 const char *content_type, long timeout_ms, long *status, char **resp, char *err,
                 size_t errlen)
{
    *status = 0;
    *resp = NULL;
    CURL *e = kube_easy_get(c);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    struct curl_slist *hdrs;
    if (kube_easy_prepare(c, e, method, path, body, content_type,
                          timeout_ms > 0 ? timeout_ms : DEFAULT_TIMEOUT_MS, &hdrs, err, errlen)) {
        kube_easy_put(c, e);
        return -1;
    }
    dbuf out;
    dbuf_init(&out, KUBE_MAX_RESPONSE);
    char cerr[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &out);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, cerr);
    CURLcode rc = curl_easy_perform(e);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, NULL); /* cerr goes out of scope */
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdrs);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s %s: %s", method, path,
                 rc == CURLE_WRITE_ERROR ? "response too large"
                 : cerr[0]               ? cerr
                                         : curl_easy_strerror(rc));
        dbuf_free(&out);
        /* a handle whose transfer failed may hold a broken connection; curl
         * closes those itself, so the handle is still fit for reuse */
        kube_easy_put(c, e);
        return -1;
    }
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
    kube_easy_put(c, e);
    *resp = out.len ? dbuf_take(&out, NULL) : NULL;
    dbuf_free(&out);
    return 0;
}
