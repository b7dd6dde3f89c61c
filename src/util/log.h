/* log.h - structured (JSON lines) logging to stderr. Never pass secrets. */
#ifndef ALLOT_UTIL_LOG_H
#define ALLOT_UTIL_LOG_H

#include <stdarg.h>
#include <stddef.h>

typedef enum { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR } log_level;

void log_set_level(log_level l);
/* `msg` is a fixed message; kv is printf-formatted extra JSON members
 * (e.g. "\"verb\":\"%s\""), may be NULL. Every string (msg and each %s) is
 * written JSON-escaped, so a %s must sit inside quotes in kv; conversions
 * other than d i u o x (with l, ll or z), f g c s print "?". */
void log_msg(log_level l, const char *msg, const char *kv, ...)
    __attribute__((format(printf, 3, 4)));

/* The line log_msg writes, into line[cap] (cap >= 128): returns its length,
 * newline included. Lines longer than cap are cut, still one JSON object. */
size_t log_format(char *line, size_t cap, log_level l, const char *msg, const char *kv, va_list ap);

/* JSON string escaping of s[len] into out[outlen] (no quotes added, no NUL
 * written): '"' '\\' and control bytes escaped, invalid UTF-8 as \ufffd. An
 * escape never straddles the end of out. *outn is the length written. */
void log_escape(const char *s, size_t len, char *out, size_t outlen, size_t *outn);

#endif
