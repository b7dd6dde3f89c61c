/* tz.c - TZif time zones (see tz.h). */
#include "core/tz.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TZIF (1 << 20)

typedef struct rule_date {
    int mon, week, wday; /* Mm.w.d */
    int32_t secs;        /* local time of day the change happens at */
} rule_date;

struct tz_zone {
    int64_t *trans; /* transition instants, ascending */
    uint8_t *idx;   /* type in force from trans[i] */
    size_t ntrans;
    int32_t *off; /* per type: seconds east */
    size_t ntypes;
    int32_t first_off; /* before the first transition */
    /* POSIX footer: after the last transition */
    bool has_rule, has_dst;
    int32_t std_off, dst_off;
    rule_date start, end;
};

int64_t tz_days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void tz_civil_from_days(int64_t z, int *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

static int64_t floordiv(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static void utc_tm(int64_t t, tz_tm *o)
{
    int64_t days = floordiv(t, 86400), secs = t - days * 86400;
    tz_civil_from_days(days, &o->year, &o->mon, &o->mday);
    o->hour = (int)(secs / 3600);
    o->min = (int)(secs / 60 % 60);
    o->sec = (int)(secs % 60);
    o->wday = (int)(((days % 7) + 11) % 7); /* 1970-01-01 was a Thursday (4) */
}

/* ---- POSIX TZ footer ---- */

static const char *skip_name(const char *p)
{
    if (*p == '<') {
        const char *q = strchr(p, '>');
        return q ? q + 1 : NULL;
    }
    const char *s = p;
    while (isalpha((unsigned char)*p))
        p++;
    return p - s >= 3 ? p : NULL;
}

/* [+-]hh[:mm[:ss]] into seconds; NULL if malformed. */
static const char *parse_hms(const char *p, int32_t *out)
{
    int sign = 1;
    if (*p == '+' || *p == '-') sign = *p++ == '-' ? -1 : 1;
    if (!isdigit((unsigned char)*p)) return NULL;
    int32_t v[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        if (!isdigit((unsigned char)*p)) return NULL;
        while (isdigit((unsigned char)*p))
            v[i] = v[i] * 10 + (*p++ - '0');
        if (*p != ':' || i == 2) break;
        p++;
    }
    *out = sign * (v[0] * 3600 + v[1] * 60 + v[2]);
    return p;
}

static const char *parse_date(const char *p, rule_date *r)
{
    if (*p != 'M') return NULL; /* Jn and n forms: not used by the tz database */
    if (sscanf(p, "M%d.%d.%d", &r->mon, &r->week, &r->wday) != 3) return NULL;
    p++;
    while (isdigit((unsigned char)*p) || *p == '.')
        p++;
    r->secs = 7200;
    if (*p == '/') p = parse_hms(p + 1, &r->secs);
    return p;
}

static void parse_footer(tz_zone *z, const char *s)
{
    const char *p = skip_name(s);
    int32_t std;
    if (!p || !(p = parse_hms(p, &std))) return;
    z->std_off = -std;
    z->dst_off = z->std_off;
    z->has_rule = true;
    if (!*p) return;
    const char *q = skip_name(p);
    if (!q) return;
    p = q;
    int32_t dst = std - 3600;
    if (*p && *p != ',' && !(p = parse_hms(p, &dst))) goto plain;
    if (*p != ',' || !(p = parse_date(p + 1, &z->start)) || *p != ',' ||
        !(p = parse_date(p + 1, &z->end)))
        goto plain;
    z->dst_off = -dst;
    z->has_dst = true;
    return;
plain:
    z->has_dst = false;
}

/* Local midnight day of rule r in year y, as days since the epoch. */
static int64_t rule_day(int y, const rule_date *r)
{
    int64_t first = tz_days_from_civil(y, r->mon, 1);
    int wd_first = (int)(((first % 7) + 11) % 7);
    int64_t d = first + ((r->wday - wd_first + 7) % 7) + (int64_t)(r->week - 1) * 7;
    int ny = r->mon == 12 ? y + 1 : y, nm = r->mon == 12 ? 1 : r->mon + 1;
    int64_t next = tz_days_from_civil(ny, nm, 1);
    while (d >= next)
        d -= 7; /* week 5: the last such day */
    return d;
}

static int32_t rule_offset(const tz_zone *z, int64_t t)
{
    if (!z->has_dst) return z->std_off;
    tz_tm tm;
    utc_tm(t + z->std_off, &tm);
    int64_t start = rule_day(tm.year, &z->start) * 86400 + z->start.secs - z->std_off;
    int64_t end = rule_day(tm.year, &z->end) * 86400 + z->end.secs - z->dst_off;
    bool dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);
    return dst ? z->dst_off : z->std_off;
}

/* ---- TZif ---- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

tz_zone *tz_parse(const unsigned char *data, size_t len, char *err, size_t errlen)
{
    if (len < 44 || memcmp(data, "TZif", 4) != 0) {
        snprintf(err, errlen, "not a TZif file");
        return NULL;
    }
    const unsigned char *h = data;
    int tsize = 4;
    size_t pos = 0;
    for (int pass = 0;; pass++) {
        uint32_t isut = be32(h + 20), isstd = be32(h + 24), leap = be32(h + 28),
                 timecnt = be32(h + 32), typecnt = be32(h + 36), charcnt = be32(h + 40);
        size_t body = (size_t)timecnt * (tsize + 1) + (size_t)typecnt * 6 + charcnt +
                      (size_t)leap * (tsize + 4) + isstd + isut;
        if (timecnt > 100000 || typecnt > 256 || pos + 44 + body > len) break;
        if (pass == 0 && data[4] >= '2') { /* skip the 32-bit block */
            pos += 44 + body;
            if (pos + 44 > len || memcmp(data + pos, "TZif", 4) != 0) break;
            h = data + pos;
            tsize = 8;
            continue;
        }
        tz_zone *z = calloc(1, sizeof *z);
        if (!z) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        const unsigned char *p = h + 44;
        z->ntrans = timecnt;
        z->ntypes = typecnt;
        z->trans = calloc(timecnt ? timecnt : 1, sizeof *z->trans);
        z->idx = calloc(timecnt ? timecnt : 1, 1);
        z->off = calloc(typecnt ? typecnt : 1, sizeof *z->off);
        if (!z->trans || !z->idx || !z->off) {
            tz_free(z);
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < timecnt; i++)
            z->trans[i] = tsize == 8 ? be64(p + i * 8) : (int32_t)be32(p + i * 4);
        p += (size_t)timecnt * tsize;
        for (size_t i = 0; i < timecnt; i++)
            z->idx[i] = p[i] < typecnt ? p[i] : 0;
        p += timecnt;
        for (size_t i = 0; i < typecnt; i++)
            z->off[i] = (int32_t)be32(p + i * 6);
        z->first_off = typecnt ? z->off[0] : 0;
        const unsigned char *end = h + 44 + body;
        if (tsize == 8 && end < data + len && *end == '\n') {
            const unsigned char *nl = memchr(end + 1, '\n', (size_t)(data + len - end - 1));
            if (nl && nl - end - 1 < 128) {
                char footer[128];
                memcpy(footer, end + 1, (size_t)(nl - end - 1));
                footer[nl - end - 1] = '\0';
                parse_footer(z, footer);
            }
        }
        return z;
    }
    snprintf(err, errlen, "malformed TZif file");
    return NULL;
}

bool tz_name_valid(const char *name)
{
    if (!name || !*name || *name == '/') return false;
    const char *p = name;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0 || *p == '-' || (n == 1 && *p == '.') || (n == 2 && !strncmp(p, "..", 2)))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!isalnum((unsigned char)p[i]) && !strchr("_.+-", p[i])) return false;
        p += n;
        if (*p) p++;
    }
    return true;
}

tz_zone *tz_utc(void)
{
    tz_zone *z = calloc(1, sizeof *z);
    return z;
}

tz_zone *tz_load(const char *dir, const char *name, char *err, size_t errlen)
{
    if (name && !strcmp(name, "UTC")) return tz_utc();
    if (!tz_name_valid(name)) {
        snprintf(err, errlen, "unknown time zone %s", name ? name : "");
        return NULL;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir ? dir : TZ_DIR, name);
    FILE *f = fopen(path, "rb");
    unsigned char *buf = f ? malloc(MAX_TZIF) : NULL;
    size_t n = buf ? fread(buf, 1, MAX_TZIF, f) : 0;
    if (f) fclose(f);
    char perr[64];
    tz_zone *z = n ? tz_parse(buf, n, perr, sizeof perr) : NULL;
    free(buf);
    if (!z) snprintf(err, errlen, "unknown time zone %s", name);
    return z;
}

void tz_free(tz_zone *z)
{
    if (!z) return;
    free(z->trans);
    free(z->idx);
    free(z->off);
    free(z);
}

int32_t tz_offset(const tz_zone *z, int64_t t)
{
    if (!z) return 0;
    if (z->ntrans == 0 || t < z->trans[0]) {
        if (z->ntrans == 0 && z->has_rule) return rule_offset(z, t);
        return z->first_off;
    }
    if (t >= z->trans[z->ntrans - 1] && z->has_rule) return rule_offset(z, t);
    size_t lo = 0, hi = z->ntrans; /* trans[lo] <= t < trans[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->trans[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return z->off[z->idx[lo]];
}

void tz_local(const tz_zone *z, int64_t t, tz_tm *out)
{
    utc_tm(t + tz_offset(z, t), out);
}

int64_t tz_from_local(const tz_zone *z, int year, int mon, int mday, int hour, int min)
{
    int64_t u = tz_days_from_civil(year, mon, mday) * 86400 + hour * 3600 + min * 60;
    int32_t cand[3] = {tz_offset(z, u - 2 * 86400), tz_offset(z, u), tz_offset(z, u + 2 * 86400)};
    int64_t best = INT64_MAX;
    for (int i = 0; i < 3; i++) {
        int64_t t = u - cand[i];
        if (tz_offset(z, t) == cand[i] && t < best) best = t;
    }
    if (best != INT64_MAX) return best;
    /* In a gap: the first instant after it. Offsets there jump from lo to
     * hi (hi > lo), so u - hi < transition <= u - lo. Bisect. */
    int32_t lo_off = cand[0] < cand[2] ? cand[0] : cand[2];
    int32_t hi_off = cand[0] < cand[2] ? cand[2] : cand[0];
    int64_t a = u - hi_off, b = u - lo_off; /* offset(a) != offset(b) */
    int32_t oa = tz_offset(z, a);
    while (b - a > 1) {
        int64_t m = a + (b - a) / 2;
        if (tz_offset(z, m) == oa)
            a = m;
        else
            b = m;
    }
    return b;
}
