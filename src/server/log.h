/* log.h - structured (JSON lines) logging to stderr. Never pass secrets. */
#ifndef ALLOT_SERVER_LOG_H
#define ALLOT_SERVER_LOG_H

typedef enum { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR } log_level;

void log_set_level(log_level l);
/* `msg` is a fixed message; kv is printf-formatted extra JSON members
 * (e.g. "\"verb\":\"%s\""), may be NULL. */
void log_msg(log_level l, const char *msg, const char *kv, ...)
    __attribute__((format(printf, 3, 4)));

#endif
