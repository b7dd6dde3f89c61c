/* rfc3339.c - RFC 3339 timestamps (see rfc3339.h). */
#include "core/rfc3339.h"

#include <stdio.h>

int64_t rfc3339_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void rfc3339_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

/* n decimal digits at *s, advancing it. */
static bool digits(const char **s, int n, int64_t *v)
{
    *v = 0;
    for (int i = 0; i < n; i++, (*s)++) {
        if (**s < '0' || **s > '9') return false;
        *v = *v * 10 + (**s - '0');
    }
    return true;
}

static bool expect(const char **s, char a, char b)
{
    char c = *(*s)++;
    return c == a || c == b;
}

bool rfc3339_parse(const char *s, int64_t *sec, int64_t *nsec)
{
    int64_t y, mo, d, h, mi, se, oh = 0, om = 0, ns = 0;
    if (!s || !digits(&s, 4, &y) || !expect(&s, '-', '-') || !digits(&s, 2, &mo) ||
        !expect(&s, '-', '-') || !digits(&s, 2, &d) || !expect(&s, 'T', 't') ||
        !digits(&s, 2, &h) || !expect(&s, ':', ':') || !digits(&s, 2, &mi) ||
        !expect(&s, ':', ':') || !digits(&s, 2, &se))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59) return false;
    if (*s == '.') {
        int n = 0;
        for (s++; *s >= '0' && *s <= '9'; s++, n++)
            if (n < 9) ns = ns * 10 + (*s - '0');
        if (n == 0) return false;
        for (; n < 9; n++)
            ns *= 10;
    }
    int sign = *s == '+' ? 1 : *s == '-' ? -1 : 0;
    if (sign) {
        s++;
        if (!digits(&s, 2, &oh) || !expect(&s, ':', ':') || !digits(&s, 2, &om) || oh > 23 ||
            om > 59)
            return false;
    } else if (!expect(&s, 'Z', 'z')) {
        return false;
    }
    if (*s) return false;
    *sec = rfc3339_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + se -
           sign * (oh * 3600 + om * 60);
    if (nsec) *nsec = ns;
    return true;
}

void rfc3339_format(int64_t t, char *buf, size_t n)
{
    int64_t days = t / 86400, secs = t % 86400, y;
    if (secs < 0) {
        secs += 86400;
        days--;
    }
    unsigned m, d;
    rfc3339_civil_from_days(days, &y, &m, &d);
    snprintf(buf, n, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ", (long long)y, m, d,
             (long long)(secs / 3600), (long long)(secs / 60 % 60), (long long)(secs % 60));
}
