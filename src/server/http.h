/* http.h - the HTTPS listener (libmicrohttpd + GnuTLS). */
#ifndef ALLOT_SERVER_HTTP_H
#define ALLOT_SERVER_HTTP_H

#include "core/dbuf.h"
#include "server/server.h"

typedef struct http_server http_server;

/* Listen on bind_addr:port with the given PEM certificate and key; the
 * strings must outlive the server. NULL on error with err filled. */
http_server *http_start(server *srv, const char *bind_addr, int port, const char *cert_pem,
                        const char *key_pem, char *err, size_t errlen);
/* Stop accepting, close connections and join their threads. */
void http_stop(http_server *h);

#endif
