/* promtext.c - Prometheus text exposition (see promtext.h). */
#include "core/promtext.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAMILY_MAX ((size_t)16 << 20) /* as metrics_render's whole buffer */
#define LINE_MAX_BYTES ((size_t)64 << 10)

void metrics_scrape_init(metrics_scrape *sc, const metrics_family *families, size_t n)
{
    sc->families = families;
    sc->n = n < METRICS_FAMILIES_MAX ? n : METRICS_FAMILIES_MAX;
    for (size_t f = 0; f < METRICS_FAMILIES_MAX; f++)
        dbuf_init(&sc->fam[f], FAMILY_MAX);
    dbuf_init(&sc->line, LINE_MAX_BYTES);
}

void metrics_scrape_free(metrics_scrape *sc)
{
    for (size_t f = 0; f < METRICS_FAMILIES_MAX; f++)
        dbuf_free(&sc->fam[f]);
    dbuf_free(&sc->line);
}

void metrics_scrape_write(const metrics_scrape *sc, dbuf *b)
{
    for (size_t f = 0; f < sc->n; f++) {
        const metrics_family *fam = &sc->families[f];
        dbuf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", fam->name, fam->help, fam->name);
        if (sc->fam[f].len) dbuf_add(b, sc->fam[f].p, sc->fam[f].len);
    }
}

int metrics_add_label_value(dbuf *b, const char *s)
{
    int rc = 0;
    while (rc == 0 && *s) {
        size_t run = strcspn(s, "\\\"\n");
        if (run) rc = dbuf_add(b, s, run);
        s += run;
        if (rc == 0 && *s) {
            rc = dbuf_adds(b, *s == '\n' ? "\\n" : *s == '"' ? "\\\"" : "\\\\");
            s++;
        }
    }
    return rc;
}

/* 4Gi is 4294967296, not 4.294967296e+09; 200 is 200, not 2e+02. */
void metrics_format_value(double v, char *buf, size_t n)
{
    if (isnan(v) || isinf(v)) {
        snprintf(buf, n, "%s", isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (v == 0) v = 0; /* no "-0" */
    int digits = 1;
    while (digits < 17) {
        snprintf(buf, n, "%.*e", digits - 1, v);
        if (strtod(buf, NULL) == v) break;
        digits++;
    }
    snprintf(buf, n, "%.*e", digits - 1, v);
    const char *e = strchr(buf, 'e');
    long exp = e ? strtol(e + 1, NULL, 10) : 0;
    if (exp >= -5 && exp < 21)
        snprintf(buf, n, "%.*f", exp >= digits - 1 ? 0 : (int)(digits - 1 - exp), v);
}

void metrics_sample(metrics_scrape *sc, size_t f, const char *const *labels, double v)
{
    if (f >= sc->n) return;
    dbuf *line = &sc->line;
    char val[64];
    metrics_format_value(v, val, sizeof val);
    line->len = 0;
    int rc = dbuf_adds(line, sc->families[f].name);
    for (size_t i = 0; rc == 0 && labels[i]; i += 2) {
        rc = dbuf_printf(line, "%s%s=\"", i ? "," : "{", labels[i]);
        if (rc == 0) rc = metrics_add_label_value(line, labels[i + 1] ? labels[i + 1] : "");
        if (rc == 0) rc = dbuf_adds(line, "\"");
    }
    if (rc == 0 && labels[0]) rc = dbuf_adds(line, "}");
    if (rc == 0) rc = dbuf_printf(line, " %s\n", val);
    if (rc == 0) dbuf_add(&sc->fam[f], line->p, line->len);
}

double metrics_float(int64_t milli)
{
    return (double)milli / 1000.0;
}

double metrics_percent(int64_t part, int64_t whole)
{
    return whole > 0 ? (double)part / (double)whole * 100.0 : 0;
}
