/* fuzz_fieldset.c - libFuzzer target for managed field sets (core/fieldset.h).
 *
 * Input: fieldsV1 text. It is decoded with small limits; a decoded set must
 * encode canonically (decode(encode(s)) encodes to the same bytes and equals
 * s), combine with a fixed set under the algebra's identities, iterate, and
 * take part in conflict detection against a fixed object. The same bytes,
 * when they are a JSON object, are also turned into a set as an applied
 * object (fs_from_object). Nothing may crash, leak or run past its limits;
 * an error always comes with a message and no set.
 */
#include "core/fieldset.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const fs_limits LIMITS = {.max_depth = 16, .max_nodes = 2000, .max_text = 16384};

static const char FIXED[] =
    "{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}}},\"f:spec\":{\"f:replicas\":{},"
    "\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},\"f:image\":{}}},\"f:fin\":{\"v:1\":{}}}}";
static const char LIVE[] = "{\"metadata\":{\"labels\":{\"app\":\"a\"}},\"spec\":{\"replicas\":1,"
                           "\"containers\":[{\"name\":\"c\",\"image\":\"x\"}],\"fin\":[1,\"a\"]}}";

static int shapes(void *ud, const char *const *f, size_t n, bool is_list, fs_list_info *out)
{
    static const char *const name[] = {"name"};
    (void)ud;
    if (!is_list || !n) return 0;
    if (!strcmp(f[n - 1], "containers")) *out = (fs_list_info){FS_LIST_MAP, name, 1};
    else if (!strcmp(f[n - 1], "fin")) out->type = FS_LIST_SET;
    return 0;
}

static int count(void *ud, const char *p)
{
    if (!p) abort();
    (*(size_t *)ud)++;
    return 0;
}

static void check(fs_set *s, int code, const char *err)
{
    if ((s == NULL) != (code != FS_OK)) abort();
    if (!s && (code < FS_ERR_NOMEM || err[0] == '\0')) abort();
}

static void exercise(const fs_set *s, const fs_set *fixed, const json_t *live)
{
    char *t = NULL, *t2 = NULL, err[256] = "";
    size_t n = 0, n2 = 0;
    int code = 0;
    if (fs_to_fieldsv1_text(s, &t, &n)) return;
    fs_set *back = fs_from_fieldsv1_text(t, n, NULL, &code, err, sizeof err);
    if (!back || !fs_equal(back, s)) abort();
    if (fs_to_fieldsv1_text(back, &t2, &n2) || n2 != n || memcmp(t, t2, n)) abort();
    size_t members = 0;
    if (fs_iterate(s, count, &members) || members != fs_size(s)) abort();
    fs_set *u = fs_union(s, fixed), *i = fs_intersection(s, fixed), *d = fs_difference(s, fixed);
    if (u && i && fs_size(u) + fs_size(i) != fs_size(s) + fs_size(fixed)) abort();
    fs_set *r = d && i ? fs_union(d, i) : NULL;
    if (r && !fs_equal(r, s)) abort();
    fs_entry e[] = {{"m", "Update", "v1", NULL, s}, {"x", "Apply", "v1", "status", fixed}};
    fs_conflicts c;
    if (fs_conflicts_find(fixed, "a", NULL, e, 2, live, live, &c) == FS_OK) {
        char *m = fs_conflict_message(&c, 4095);
        if ((m == NULL) != (c.n == 0) || (m && strlen(m) > 4095)) abort();
        free(m);
        fs_conflicts_free(&c);
    }
    if (fs_conflicts_find(s, "a", NULL, e, 2, live, NULL, &c) == FS_OK) fs_conflicts_free(&c);
    fs_free(u);
    fs_free(i);
    fs_free(d);
    fs_free(r);
    fs_free(back);
    free(t);
    free(t2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > LIMITS.max_text) return 0;
    char err[256] = "";
    int code = 0;
    fs_set *fixed = fs_from_fieldsv1_text(FIXED, strlen(FIXED), NULL, &code, err, sizeof err);
    json_t *live = json_loads(LIVE, 0, NULL);
    if (!fixed || !live) abort();

    fs_set *s = fs_from_fieldsv1_text((const char *)data, size, &LIMITS, &code, err, sizeof err);
    check(s, code, err);
    if (s) exercise(s, fixed, live);
    fs_free(s);

    json_t *obj = json_loadb((const char *)data, size, 0, NULL);
    if (obj) {
        err[0] = '\0';
        s = fs_from_object(obj, shapes, NULL, &LIMITS, &code, err, sizeof err);
        check(s, code, err);
        if (s) exercise(s, fixed, live);
        fs_free(s);
        json_decref(obj);
    }
    fs_free(fixed);
    json_decref(live);
    return 0;
}
