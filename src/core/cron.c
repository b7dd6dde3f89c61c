/* cron.c - cron schedules (see cron.h). */
#include "core/cron.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct bounds {
    int min, max;
    const char *const *names; /* index = value, or NULL */
} bounds;

static const char *const month_names[] = {"",    "jan", "feb", "mar", "apr", "may", "jun",
                                          "jul", "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const dow_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

static const bounds B_MIN = {0, 59, NULL}, B_HOUR = {0, 23, NULL}, B_DOM = {1, 31, NULL},
                    B_MON = {1, 12, month_names}, B_DOW = {0, 6, dow_names};

/* Go's strconv.Atoi on s[0..n), then robfig's checks. */
static int parse_int(const char *s, size_t n, int *out, char *err, size_t errlen)
{
    size_t i = 0;
    bool neg = false;
    if (n > 0 && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        i = 1;
    }
    long long v = 0;
    bool ok = i < n;
    for (; i < n && ok; i++) {
        if (!isdigit((unsigned char)s[i]))
            ok = false;
        else if ((v = v * 10 + (s[i] - '0')) > INT_MAX)
            ok = false;
    }
    if (!ok) {
        snprintf(err, errlen, "failed to parse int from %.*s: strconv.Atoi: parsing \"%.*s\": %s",
                 (int)n, s, (int)n, s, v > INT_MAX ? "value out of range" : "invalid syntax");
        return -1;
    }
    if (neg && v > 0) {
        snprintf(err, errlen, "negative number (-%lld) not allowed: %.*s", v, (int)n, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int int_or_name(const char *s, size_t n, const bounds *b, int *out, char *err, size_t errlen)
{
    if (b->names)
        for (int i = 0; b->names[i]; i++)
            if (*b->names[i] && strlen(b->names[i]) == n && !strncasecmp(s, b->names[i], n)) {
                *out = i;
                return 0;
            }
    return parse_int(s, n, out, err, errlen);
}

/* One comma-separated part: its bits ORed into *bits; *star set when it
 * counts as "*" for the day-of-month / day-of-week rule. */
static int parse_range(const char *s, size_t n, const bounds *b, uint64_t *bits, bool *star,
                       char *err, size_t errlen)
{
    const char *slash = memchr(s, '/', n);
    size_t rn = slash ? (size_t)(slash - s) : n;
    if (slash && memchr(slash + 1, '/', n - rn - 1)) {
        snprintf(err, errlen, "too many slashes: %.*s", (int)n, s);
        return -1;
    }
    int start, end, step = 1;
    bool is_star = false;
    const char *dash = memchr(s, '-', rn);
    if ((rn == 1 && (*s == '*' || *s == '?'))) {
        start = b->min;
        end = b->max;
        is_star = true;
    } else {
        if (dash && memchr(dash + 1, '-', rn - (size_t)(dash - s) - 1)) {
            snprintf(err, errlen, "too many hyphens: %.*s", (int)n, s);
            return -1;
        }
        size_t ln = dash ? (size_t)(dash - s) : rn;
        if (int_or_name(s, ln, b, &start, err, errlen) != 0) return -1;
        end = start;
        if (dash && int_or_name(dash + 1, rn - ln - 1, b, &end, err, errlen) != 0) return -1;
    }
    if (slash) {
        if (parse_int(slash + 1, n - rn - 1, &step, err, errlen) != 0) return -1;
        if (!dash && !is_star) end = b->max; /* "N/step" is "N-max/step" */
        if (step > 1) is_star = false;
    }
    if (start < b->min) {
        snprintf(err, errlen, "beginning of range (%d) below minimum (%d): %.*s", start, b->min,
                 (int)n, s);
        return -1;
    }
    if (end > b->max) {
        snprintf(err, errlen, "end of range (%d) above maximum (%d): %.*s", end, b->max, (int)n, s);
        return -1;
    }
    if (start > end) {
        snprintf(err, errlen, "beginning of range (%d) beyond end of range (%d): %.*s", start, end,
                 (int)n, s);
        return -1;
    }
    if (step == 0) {
        snprintf(err, errlen, "step of range should be a positive number: %.*s", (int)n, s);
        return -1;
    }
    for (int v = start; v <= end; v += step)
        *bits |= 1ULL << v;
    if (is_star) *star = true;
    return 0;
}

static int parse_field(const char *s, size_t n, const bounds *b, uint64_t *bits, bool *star,
                       char *err, size_t errlen)
{
    *bits = 0;
    *star = false;
    size_t i = 0;
    do {
        const char *comma = memchr(s + i, ',', n - i);
        size_t pn = comma ? (size_t)(comma - (s + i)) : n - i;
        if (parse_range(s + i, pn, b, bits, star, err, errlen) != 0) return -1;
        i += pn + 1;
    } while (i <= n);
    return 0;
}

static const struct {
    const char *name;
    const char *spec;
} descriptors[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

int cron_parse(const char *spec, cron_sched *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *p = spec ? spec : "";
    while (isspace((unsigned char)*p))
        p++;
    if (!*p) {
        snprintf(err, errlen, "empty spec string");
        return -1;
    }
    if (!strncmp(p, "TZ=", 3) || !strncmp(p, "CRON_TZ=", 8)) {
        while (*p && !isspace((unsigned char)*p))
            p++;
        while (isspace((unsigned char)*p))
            p++;
    }
    if (*p == '@') {
        size_t n = strcspn(p, " \t\n\r\f\v");
        for (size_t i = 0; i < sizeof descriptors / sizeof *descriptors; i++)
            if (strlen(descriptors[i].name) == n && !strncmp(p, descriptors[i].name, n))
                return cron_parse(descriptors[i].spec, out, err, errlen);
        snprintf(err, errlen, "unrecognized descriptor: %s", p);
        return -1;
    }
    const char *f[8];
    size_t fl[8], nf = 0, total = 0;
    for (const char *q = p; *q;) {
        while (isspace((unsigned char)*q))
            q++;
        if (!*q) break;
        size_t n = strcspn(q, " \t\n\r\f\v");
        if (nf < 8) {
            f[nf] = q;
            fl[nf++] = n;
        }
        total++;
        q += n;
    }
    if (total != 5) {
        char list[256];
        size_t off = 0;
        list[0] = '\0';
        for (const char *q = p; *q && off < sizeof list - 1;) {
            while (isspace((unsigned char)*q))
                q++;
            if (!*q) break;
            size_t n = strcspn(q, " \t\n\r\f\v");
            int w = snprintf(list + off, sizeof list - off, "%s%.*s", off ? " " : "", (int)n, q);
            off += w > 0 ? (size_t)w : 0;
            if (off >= sizeof list) off = sizeof list - 1;
            q += n;
        }
        snprintf(err, errlen, "expected exactly 5 fields, found %zu: [%s]", total, list);
        return -1;
    }
    uint64_t bits;
    bool star;
    if (parse_field(f[0], fl[0], &B_MIN, &bits, &star, err, errlen)) return -1;
    out->minute = bits;
    if (parse_field(f[1], fl[1], &B_HOUR, &bits, &star, err, errlen)) return -1;
    out->hour = (uint32_t)bits;
    if (parse_field(f[2], fl[2], &B_DOM, &bits, &out->dom_star, err, errlen)) return -1;
    out->dom = (uint32_t)bits;
    if (parse_field(f[3], fl[3], &B_MON, &bits, &star, err, errlen)) return -1;
    out->month = (uint16_t)bits;
    if (parse_field(f[4], fl[4], &B_DOW, &bits, &out->dow_star, err, errlen)) return -1;
    out->dow = (uint8_t)bits;
    return 0;
}

static bool day_matches(const cron_sched *s, const tz_tm *l)
{
    bool dom = (s->dom >> l->mday) & 1, dow = (s->dow >> l->wday) & 1;
    if (s->dom_star || s->dow_star) return dom && dow;
    return dom || dow;
}

int64_t cron_next(const cron_sched *s, const tz_zone *z, int64_t t)
{
    int64_t m = t / 60 * 60 - (t < 0 && t % 60 ? 60 : 0); /* floor to the minute */
    t = m + 60;
    tz_tm l;
    tz_local(z, t, &l);
    int limit = l.year + 5;
    for (;;) {
        tz_local(z, t, &l);
        if (l.year > limit) return -1;
        if (!((s->month >> l.mon) & 1)) {
            int y = l.mon == 12 ? l.year + 1 : l.year, mo = l.mon == 12 ? 1 : l.mon + 1;
            t = tz_from_local(z, y, mo, 1, 0, 0);
            continue;
        }
        if (!day_matches(s, &l)) {
            int y, mo, d;
            tz_civil_from_days(tz_days_from_civil(l.year, l.mon, l.mday) + 1, &y, &mo, &d);
            t = tz_from_local(z, y, mo, d, 0, 0);
            continue;
        }
        if (!((s->hour >> l.hour) & 1)) {
            t += 3600 - l.min * 60 - l.sec;
            continue;
        }
        if (!((s->minute >> l.min) & 1)) {
            t += 60 - l.sec;
            continue;
        }
        return t;
    }
}
