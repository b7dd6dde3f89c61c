/* http.h - the HTTPS listener (libmicrohttpd + GnuTLS). */
#ifndef ALLOT_SERVER_HTTP_H
#define ALLOT_SERVER_HTTP_H

#include "core/dbuf.h"
#include "server/server.h"

typedef struct http_server http_server;

/* Connections one client address may hold that have not yet presented a
 * request; a new one past it makes the oldest give way (server/conntrack.h). */
#define HTTP_MAX_PER_IP 256
/* Connections in all, at most; fewer when the descriptor limit is lower
 * (http_connection_limit). allotd raises its soft descriptor limit to the
 * hard one at start. */
#define HTTP_MAX_CONNECTIONS 16384
/* A connection must complete its TLS handshake and send the headers of its
 * first request within this many seconds of being accepted. */
#define HTTP_HEADER_TIMEOUT_S 10
/* An idle connection (between requests) is closed after this many seconds. */
#define HTTP_IDLE_TIMEOUT_S 300

/* The global connection limit http_start will use: HTTP_MAX_CONNECTIONS, or
 * the descriptor limit less a reserve when that is lower. */
unsigned http_connection_limit(void);

/* The worker threads that serve every connection: the number of cores. */
unsigned http_workers(void);

/* Listen on bind_addr:port with the given PEM certificate and key; the
 * strings must outlive the server. NULL on error with err filled. */
http_server *http_start(server *srv, const char *bind_addr, int port, const char *cert_pem,
                        const char *key_pem, char *err, size_t errlen);
/* Stop: end every stream, answer what waits for durability, close every
 * connection and join the threads. */
void http_stop(http_server *h);

#endif
