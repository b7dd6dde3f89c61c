/* watch.c - the watch stream decoder and a reflector's pure policy
 * (watch.h). The scanner below only finds where each top-level object ends;
 * jansson parses it, so the scanner may be lenient about everything but
 * strings (a brace inside a string is not structure). */
#include "kube/watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kube_watch_init(kube_watch_decoder *d, size_t max_event)
{
    memset(d, 0, sizeof *d);
    d->max_event = max_event ? max_event : KUBE_WATCH_MAX_EVENT;
}

void kube_watch_reset(kube_watch_decoder *d)
{
    d->len = d->scan = d->start = 0;
    d->depth = 0;
    d->in_str = d->esc = d->failed = false;
}

void kube_watch_cleanup(kube_watch_decoder *d)
{
    free(d->buf);
    kube_watch_init(d, d->max_event);
}

bool kube_watch_pending(const kube_watch_decoder *d)
{
    return d->depth > 0;
}

static int fail(kube_watch_decoder *d, char *err, size_t errlen, const char *msg,
                const char *detail)
{
    d->failed = true;
    snprintf(err, errlen, "watch stream: %s%s%s", msg, detail ? ": " : "", detail ? detail : "");
    return -1;
}

static bool parse_type(const char *s, kube_ev_type *t)
{
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i]) == 0) {
            *t = (kube_ev_type)i;
            return true;
        }
    return false;
}

/* Decode the event text p[n] and hand it to fn: 0/1 as fn said, -1 when
 * the text is not an event. */
static int emit(kube_watch_decoder *d, const char *p, size_t n, kube_watch_fn fn, void *arg,
                char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *root = json_loadb(p, n, 0, &jerr);
    if (!root) return fail(d, err, errlen, "malformed event", jerr.text);
    const char *tname = json_string_value(json_object_get(root, "type"));
    json_t *obj = json_object_get(root, "object");
    kube_watch_event ev = {.type_name = tname, .object = obj};
    if (!tname || !parse_type(tname, &ev.type)) {
        json_decref(root);
        return fail(d, err, errlen, "event without a known type", NULL);
    }
    if (!json_is_object(obj)) {
        json_decref(root);
        return fail(d, err, errlen, "event without an object", NULL);
    }
    ev.rv = json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    if (ev.type == KUBE_EV_ERROR) ev.code = (long)json_integer_value(json_object_get(obj, "code"));
    int rc = fn(arg, &ev) ? 1 : 0;
    json_decref(root);
    return rc;
}

/* Scan buf from d->scan: advance the structure state byte by byte, emit
 * every object that closes. */
static int scan(kube_watch_decoder *d, kube_watch_fn fn, void *arg, char *err, size_t errlen)
{
    while (d->scan < d->len) {
        char c = d->buf[d->scan++];
        if (d->depth == 0) {
            if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
            if (c != '{') return fail(d, err, errlen, "malformed event", "not a JSON object");
            d->start = d->scan - 1;
            d->depth = 1;
            continue;
        }
        if (d->scan - d->start > d->max_event)
            return fail(d, err, errlen, "event larger than the bound", NULL);
        if (d->in_str) {
            if (d->esc)
                d->esc = false;
            else if (c == '\\')
                d->esc = true;
            else if (c == '"')
                d->in_str = false;
            continue;
        }
        if (c == '"')
            d->in_str = true;
        else if (c == '{' || c == '[')
            d->depth++;
        else if ((c == '}' || c == ']') && --d->depth == 0) {
            int rc = emit(d, d->buf + d->start, d->scan - d->start, fn, arg, err, errlen);
            if (rc != 0) return rc;
        }
    }
    return 0;
}

/* Drop what was consumed: everything scanned when between objects, else
 * what precedes the current object. */
static void compact(kube_watch_decoder *d)
{
    size_t drop = d->depth > 0 ? d->start : d->scan;
    if (drop == 0) return;
    memmove(d->buf, d->buf + drop, d->len - drop);
    d->len -= drop;
    d->scan -= drop;
    d->start -= d->depth > 0 ? drop : d->start;
}

int kube_watch_feed(kube_watch_decoder *d, const char *p, size_t n, kube_watch_fn fn, void *arg,
                    char *err, size_t errlen)
{
    if (d->failed) {
        snprintf(err, errlen, "watch stream: decoder failed earlier");
        return -1;
    }
    if (n > 0 && d->len + n > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (cap < d->len + n)
            cap *= 2;
        char *nb = realloc(d->buf, cap);
        if (!nb) return fail(d, err, errlen, "out of memory", NULL);
        d->buf = nb;
        d->cap = cap;
    }
    if (n > 0) memcpy(d->buf + d->len, p, n);
    d->len += n;
    int rc = scan(d, fn, arg, err, errlen);
    if (rc >= 0) compact(d);
    return rc;
}

bool kube_status_expired(const json_t *status)
{
    if (!json_is_object(status)) return false;
    if (json_integer_value(json_object_get(status, "code")) == 410) return true;
    const char *reason = json_string_value(json_object_get(status, "reason"));
    if (reason && (strcmp(reason, "Expired") == 0 || strcmp(reason, "Gone") == 0)) return true;
    const char *msg = json_string_value(json_object_get(status, "message"));
    return msg && strstr(msg, "too old resource version") != NULL;
}

long kube_backoff_ms(unsigned attempt, long base, long cap, double r01)
{
    long d = base;
    for (unsigned i = 0; i < attempt && d < cap; i++)
        d *= 2;
    if (d > cap) d = cap;
    if (r01 < 0) r01 = 0;
    if (r01 >= 1) r01 = 0.999999;
    return d / 2 + (long)((double)(d - d / 2) * r01);
}
