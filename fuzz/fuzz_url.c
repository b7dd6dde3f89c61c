/* fuzz_url.c - libFuzzer target for request targets: paths (core/urlpath.h)
 * and the query parameters allot parses itself.
 *
 * Input: a request target as sent ("/api/v1/namespaces/ns/pods/a%2Fb?x=y"),
 * up to the first NUL byte. The path goes through urlpath_path_len,
 * urlpath_split (with a few segment budgets, as the router asks),
 * urlpath_decode_segment, urlpath_message and urlpath_log_escape, then is
 * resolved to a kind the way src/server/rest.c resolve() does (api_kind_find
 * on /api/v1/... and /apis/G/V/...). The query string is split and
 * percent-decoded as libmicrohttpd does ('&', '=', '+' is a space), and the
 * values allot itself parses go to the same public parsers: labelSelector
 * (sel_parse_labels) and fieldSelector (sel_parse_fields, then
 * api_kind_has_field for the route's kind). The other parameters (watch,
 * dryRun, fieldValidation, limit, continue, resourceVersion,
 * gracePeriodSeconds, propagationPolicy) are parsed by static functions of
 * rest.c (strcmp against fixed words, strtol/strtoll) and are not reachable
 * from here; query decoding itself is libmicrohttpd's.
 * Nothing may crash, and (abort() otherwise):
 *   - the path part ends at the first '?' or the end;
 *   - split succeeds exactly when every segment decodes, and then gives the
 *     non-empty segments, each equal to decoding it alone and shorter than
 *     URLPATH_SEG_MAX; an error has a message;
 *   - the log form is NUL-terminated, cut at a whole byte, printable ASCII
 *     without '"' or '\\', for any buffer size.
 */
#include "api/kinds.h"
#include "core/selector.h"
#include "core/urlpath.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT 4096
#define MAX_SEGS 8

static void check(int ok)
{
    if (!ok) abort();
}

static void check_split(const char *raw, size_t plen)
{
    static const int budgets[] = {0, 1, 3, MAX_SEGS};
    char segs[MAX_SEGS][URLPATH_SEG_MAX];
    urlpath_status first = URLPATH_OK;
    for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++) {
        int n = -1;
        urlpath_status st = urlpath_split(raw, segs, budgets[b], &n);
        check(st >= URLPATH_OK && st <= URLPATH_CONTROL);
        check((st == URLPATH_OK) == (urlpath_message(st)[0] == '\0'));
        /* a bad escape or control byte is reported whatever the budget */
        if (b == 0) first = st;
        bool bad = st == URLPATH_BAD_ESCAPE || st == URLPATH_CONTROL;
        bool first_bad = first == URLPATH_BAD_ESCAPE || first == URLPATH_CONTROL;
        check(bad == first_bad && (!bad || st == first));
        if (st != URLPATH_OK) {
            check(n == -1);
            continue;
        }
        check(n >= 0 && n <= budgets[b]);
        /* walk the segments by hand and compare */
        int i = 0;
        size_t pos = 0;
        while (pos < plen) {
            while (pos < plen && raw[pos] == '/')
                pos++;
            size_t end = pos;
            while (end < plen && raw[end] != '/')
                end++;
            if (end > pos) {
                char buf[URLPATH_SEG_MAX];
                size_t dlen = 0;
                check(urlpath_decode_segment(raw + pos, end - pos, buf, sizeof buf, &dlen) ==
                      URLPATH_OK);
                size_t dlen2 = 0;
                check(urlpath_decode_segment(raw + pos, end - pos, NULL, 0, &dlen2) ==
                      URLPATH_OK);
                check(dlen2 == dlen && dlen < URLPATH_SEG_MAX);
                check(i < n);
                check(strlen(segs[i]) == dlen && memcmp(segs[i], buf, dlen) == 0);
                i++;
            }
            pos = end;
        }
        check(i == n);
    }
}

static void check_log(const char *raw)
{
    static const size_t sizes[] = {1, 2, 3, 7, 64, 1024};
    char out[1024];
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        memset(out, 'x', sizeof out);
        urlpath_log_escape(raw, out, sizes[s]);
        size_t n = strnlen(out, sizes[s]);
        check(n < sizes[s]);
        for (size_t i = 0; i < n; i++)
            check(out[i] >= 0x20 && out[i] < 0x7f && out[i] != '"' && out[i] != '\\');
    }
}

/* rest.c resolve(): the kind a path names, or NULL. */
static const api_kind *route(char segs[][URLPATH_SEG_MAX], int n)
{
    const char *group, *version;
    int i;
    if (n >= 2 && !strcmp(segs[0], "api")) {
        group = "", version = segs[1], i = 2;
    } else if (n >= 3 && !strcmp(segs[0], "apis")) {
        group = segs[1], version = segs[2], i = 3;
    } else {
        return NULL;
    }
    if (i < n && !strcmp(segs[i], "watch")) i++;
    if (n - i >= 3 && !strcmp(segs[i], "namespaces")) i += 2;
    if (i >= n) return NULL;
    const api_kind *k = api_kind_find(group, version, segs[i]);
    if (k) check(!strcmp(k->version, version) && !strcmp(k->group, group));
    return k;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* libmicrohttpd's MHD_http_unescape plus '+' as a space, in place. */
static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '+') {
            *w++ = ' ';
        } else if (*r == '%' && hexval(r[1]) >= 0 && hexval(r[2]) >= 0) {
            *w++ = (char)(hexval(r[1]) * 16 + hexval(r[2]));
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

static void query(char *q, const api_kind *k)
{
    char *save = NULL;
    for (char *arg = strtok_r(q, "&", &save); arg; arg = strtok_r(NULL, "&", &save)) {
        char empty[1] = "";
        char *eq = strchr(arg, '=');
        char *val = eq ? eq + 1 : empty;
        if (eq) *eq = '\0';
        unescape(arg);
        unescape(val);
        char err[512] = "";
        if (!strcmp(arg, "labelSelector") && *val) {
            sel_t *s = sel_parse_labels(val, err, sizeof err);
            check(s || err[0]);
            sel_free(s);
        } else if (!strcmp(arg, "fieldSelector") && *val) {
            sel_t *s = sel_parse_fields(val, err, sizeof err);
            check(s || err[0]);
            for (size_t i = 0; k && s && i < sel_count(s); i++)
                (void)api_kind_has_field(k, sel_key(s, i));
            sel_free(s);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT) return 0;
    char *raw = malloc(size + 1);
    if (!raw) return 0;
    memcpy(raw, data, size);
    raw[size] = '\0';
    size_t len = strlen(raw);
    size_t plen = urlpath_path_len(raw);
    check(plen <= len && (raw[plen] == '\0' || raw[plen] == '?'));
    check(memchr(raw, '?', plen) == NULL);

    check_split(raw, plen);
    check_log(raw);

    char segs[MAX_SEGS][URLPATH_SEG_MAX];
    int n = 0;
    const api_kind *k = NULL;
    if (urlpath_split(raw, segs, MAX_SEGS, &n) == URLPATH_OK) k = route(segs, n);
    if (raw[plen] == '?') query(raw + plen + 1, k);
    free(raw);
    return 0;
}
