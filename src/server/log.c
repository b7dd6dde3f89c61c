/* log.c - one JSON object per line on stderr, written with a single write(2)
 * so concurrent threads never interleave within a line. */
#include "server/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static log_level min_level = LOG_INFO;
static const char *const names[] = {"debug", "info", "warn", "error"};

void log_set_level(log_level l)
{
    min_level = l;
}

void log_msg(log_level l, const char *msg, const char *kv, ...)
{
    if (l < min_level) return;
    char line[2048], ts[40];
    struct timespec now;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    int n = snprintf(line, sizeof line, "{\"ts\":\"%s.%03ldZ\",\"level\":\"%s\",\"msg\":\"%s\"", ts,
                     now.tv_nsec / 1000000, names[l], msg);
    if (kv && n > 0 && (size_t)n < sizeof line - 2) {
        va_list ap;
        va_start(ap, kv);
        line[n++] = ',';
        int m = vsnprintf(line + n, sizeof line - (size_t)n - 2, kv, ap);
        va_end(ap);
        if (m > 0)
            n += m < (int)(sizeof line - (size_t)n - 2) ? m : (int)(sizeof line - (size_t)n - 3);
    }
    if (n < 0) return;
    if ((size_t)n > sizeof line - 3) n = (int)sizeof line - 3;
    line[n++] = '}';
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}
