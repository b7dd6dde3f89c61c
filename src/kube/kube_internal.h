/* kube_internal.h - what client.c shares with reflector.c: a pooled curl
 * handle set up for one request to the client's server. Not for callers
 * outside src/kube. */
#ifndef ALLOT_KUBE_INTERNAL_H
#define ALLOT_KUBE_INTERNAL_H

#include "kube/kube.h"

#include <curl/curl.h>

/* An easy handle from the client's pool (its connections and TLS sessions
 * kept), or a new one; NULL when out of memory. Give it back with put. */
CURL *kube_easy_get(kube_client *c);
void kube_easy_put(kube_client *c, CURL *e);

/* Reset e and set it up for METHOD server+path: TLS, authentication,
 * Accept, Content-Type (when body is set), timeouts. *hdrs receives the
 * header list to free (curl_slist_free_all) after the transfer. timeout_ms 0
 * means no bound on the whole transfer (watches). 0, or -1 with err. */
int kube_easy_prepare(kube_client *c, CURL *e, const char *method, const char *path,
                      const char *body, const char *content_type, long timeout_ms,
                      struct curl_slist **hdrs, char *err, size_t errlen);

#endif
