/* deferred_book.c - deferred quota kept on a cluster's ResourceQuota
 * (core/deferred_book.h). */
#include "core/deferred_book.h"

#include "core/deferred.h"
#include "core/jget.h"
#include "core/quota_eval.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool dq_ns_deferred(const json_t *ns)
{
    return !strcmp(jtext(ns, "metadata", "labels", DQ_MODE_LABEL), DQ_MODE_DEFERRED);
}

/* Annotation `name` of o parsed as a JSON object: new reference, NULL when
 * absent; *bad when present but not a JSON object. */
static json_t *annotation_json(const json_t *o, const char *name, bool *bad)
{
    const char *text = jstr(o, "metadata", "annotations", name);
    *bad = false;
    if (!text) return NULL;
    json_t *v = json_loads(text, 0, NULL);
    if (!json_is_object(v)) {
        json_decref(v);
        *bad = true;
        return NULL;
    }
    return v;
}

int dq_hard(const json_t *rq, rlist *out)
{
    bool bad;
    rl_clear(out);
    json_t *h = annotation_json(rq, DQ_HARD_ANNOTATION, &bad);
    int rc = bad || (h && rl_from_json(h, out, NULL) != 0) ? -1 : 0;
    json_decref(h);
    /* (only what is deferred: anything else is the built-in quota's) */
    for (size_t i = rl_len(out); rc == 0 && i-- > 0;)
        if (!quota_deferred_resource(rl_name(out, i))) rl_del(out, rl_name(out, i));
    if (rc) rl_clear(out);
    return rc;
}

void dq_book_free(dq_book *b)
{
    rl_free(b->used);
    rl_free(b->hard);
    json_decref(b->reservations);
    memset(b, 0, sizeof *b);
}

int dq_book_read(const json_t *rq, dq_book *b)
{
    bool bad;
    memset(b, 0, sizeof *b);
    b->used = rl_new();
    b->reservations = json_array();
    json_t *v = annotation_json(rq, DQ_BOOK_ANNOTATION, &bad);
    int rc = !b->used || !b->reservations || bad ? -1 : 0;
    if (rc == 0 && v) {
        const json_t *res = json_object_get(v, "reservations");
        if (rl_from_json(json_object_get(v, "used"), b->used, NULL) != 0 ||
            (res && !json_is_array(res)) || json_array_extend(b->reservations, (json_t *)res) != 0)
            rc = -1;
        snprintf(b->through, sizeof b->through, "%s", jtext(v, "countedThrough"));
        const json_t *h = json_object_get(v, "hard");
        if (rc == 0 && h && (!(b->hard = rl_new()) || rl_from_json(h, b->hard, NULL) != 0)) rc = -1;
    }
    json_decref(v);
    if (rc) {
        dq_book_free(b);
        b->used = rl_new();
        b->reservations = json_array();
    }
    return rc;
}

char *dq_book_text(const dq_book *b)
{
    json_t *used = rl_to_json(b->used);
    json_t *v =
        used ? json_pack("{s:o, s:O}", "used", used, "reservations", b->reservations) : NULL;
    if (v && *b->through) json_object_set_new(v, "countedThrough", json_string(b->through));
    json_t *hard = v && b->hard ? rl_to_json(b->hard) : NULL;
    if (hard && json_object_set_new(v, "hard", hard) != 0) json_decref(v), v = NULL;
    if (v && b->hard && !hard) json_decref(v), v = NULL;
    char *text = v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(v);
    return text;
}

int dq_pod_charge(const json_t *rq, const rlist *hard, const json_t *pod, rlist *want, char *err,
                  size_t errlen)
{
    rl_clear(want);
    if (!rl_len(hard)) return 0;
    int m = quota_matches_scopes(jget(rq, "spec"), "", "pods", pod, err, errlen);
    if (m <= 0) return m;
    rlist *all = rl_new();
    /* (as if assigned: an unassigned pod's compute usage is what its bind
     * charges) */
    int rc = all && quota_usage("", "pods", pod, 0, all) == 0 ? 0 : -1;
    rlist *mine = rc == 0 ? rl_mask(all, hard) : NULL;
    if (!mine || rl_add_to(want, mine) != 0) {
        rc = -1;
        snprintf(err, errlen, "out of memory");
    }
    rl_free(mine);
    rl_free(all);
    return rc;
}

/* The usage of the live reservations in b of pods other than uid, added
 * to sum. 0 or -1. */
static int reserved(const dq_book *b, const char *uid, int64_t now, rlist *sum)
{
    size_t i;
    json_t *r;
    json_array_foreach(b->reservations, i, r)
    {
        if (json_integer_value(json_object_get(r, "expires")) <= now ||
            !strcmp(jtext(r, "uid"), uid ? uid : ""))
            continue;
        rlist *u = rl_new();
        int rc =
            u && rl_from_json(json_object_get(r, "usage"), u, NULL) == 0 && rl_add_to(sum, u) == 0
                ? 0
                : -1;
        rl_free(u);
        if (rc) return -1;
    }
    return 0;
}

int dq_check(const char *name, const rlist *hard, const dq_book *b, const rlist *want,
             const char *uid, int64_t now, dbuf *msg)
{
    rlist *held = rl_copy(b->used);
    if (!held || reserved(b, uid, now, held) != 0) {
        rl_free(held);
        return -1;
    }
    rlist *after = rl_add(held, want);
    rlist *req = rl_new(), *use = rl_new(), *lim = rl_new();
    int rc = after && req && use && lim ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < rl_len(want); i++) {
        const char *k = rl_name(want, i);
        const qty *h = rl_get(hard, k);
        if (!h || qty_sign(rl_qty(want, i)) <= 0 || qty_cmp(rl_get(after, k), h) <= 0) continue;
        qty zero = qty_zero(QTY_DECIMAL_SI);
        const qty *u = rl_get(held, k);
        if (rl_set(req, k, rl_qty(want, i)) || rl_set(use, k, u ? u : &zero) || rl_set(lim, k, h))
            rc = -1;
    }
    if (rc == 0 && rl_len(req)) {
        rc = dbuf_printf(msg, "quota exceeded: %s, requested: ", name) || rl_format(req, msg) ||
                     dbuf_adds(msg, ", used: ") || rl_format(use, msg) ||
                     dbuf_adds(msg, ", limited: ") || rl_format(lim, msg)
                 ? -1
                 : 1;
    }
    rl_free(req);
    rl_free(use);
    rl_free(lim);
    rl_free(after);
    rl_free(held);
    return rc;
}

rlist *dq_room(const rlist *hard, const dq_book *b, int64_t now)
{
    rlist *held = rl_copy(b->used);
    if (!held || reserved(b, NULL, now, held) != 0) {
        rl_free(held);
        return NULL;
    }
    rlist *room = rl_subtract_nonneg(hard, held);
    /* (only what hard names: a resource held but no longer limited) */
    rlist *mine = room ? rl_mask(room, hard) : NULL;
    rl_free(room);
    rl_free(held);
    return mine;
}

int dq_take(rlist *room, const rlist *want)
{
    for (size_t i = 0; i < rl_len(want); i++) {
        const qty *r = rl_get(room, rl_name(want, i));
        if (r && qty_cmp(rl_qty(want, i), r) > 0) return 0;
    }
    for (size_t i = 0; i < rl_len(want); i++) {
        const qty *r = rl_get(room, rl_name(want, i));
        if (!r) continue;
        qty left = *r;
        if (qty_sub(&left, rl_qty(want, i)) != 0 || rl_set(room, rl_name(want, i), &left) != 0)
            return -1;
    }
    return 1;
}

int dq_reserve(dq_book *b, const json_t *pod, const rlist *want, int64_t now)
{
    const char *uid = jtext(pod, "metadata", "uid");
    json_t *keep = json_array(), *r;
    size_t i;
    json_array_foreach(b->reservations, i, r)
    {
        if (keep && strcmp(jtext(r, "uid"), uid) && json_array_append(keep, r) != 0)
            json_decref(keep), keep = NULL;
    }
    json_t *usage = rl_to_json(want);
    json_t *mine = usage ? json_pack("{s:s, s:s, s:s, s:s, s:o, s:I, s:s}", "uid", uid, "namespace",
                                     jtext(pod, "metadata", "namespace"), "name",
                                     jtext(pod, "metadata", "name"), "resource", "pods", "usage",
                                     usage, "expires", (json_int_t)(now + DQ_RESERVE_S), "from",
                                     jtext(pod, "metadata", "resourceVersion"))
                         : NULL;
    if (!keep || !mine || json_array_append_new(keep, mine) != 0) {
        json_decref(keep);
        if (!keep) json_decref(mine);
        return -1;
    }
    json_decref(b->reservations);
    b->reservations = keep;
    return 0;
}

int dq_recount(const json_t *rq, const rlist *hard, json_t *const *pods, size_t n, int64_t now,
               rlist *used, uint64_t *through, char *err, size_t errlen)
{
    rl_clear(used);
    /* (every name held, at 0 when nothing is charged: as status.used) */
    for (size_t i = 0; i < rl_len(hard); i++) {
        qty zero = qty_zero(rl_qty(hard, i)->format);
        if (rl_set(used, rl_name(hard, i), &zero) != 0) goto oom;
    }
    rlist *want = rl_new();
    if (!want) goto oom;
    for (size_t i = 0; i < n; i++) {
        if (!*jtext(pods[i], "spec", "nodeName") || !quota_pod_counts(pods[i], now)) continue;
        if (dq_pod_charge(rq, hard, pods[i], want, err, errlen) != 0) {
            rl_free(want);
            return -1;
        }
        if (!rl_len(want)) continue;
        if (rl_add_to(used, want) != 0) {
            rl_free(want);
            goto oom;
        }
        uint64_t v = strtoull(jtext(pods[i], "metadata", "resourceVersion"), NULL, 10);
        if (v > *through) *through = v;
    }
    rl_free(want);
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

json_t *dq_pod_patch(const json_t *pod, const char *managed_resource)
{
    const json_t *c0 = json_array_get(jget(pod, "spec", "containers"), 0);
    if (!c0) return NULL;
    if (jget(c0, "resources", "limits", managed_resource) &&
        jget(c0, "resources", "requests", managed_resource))
        return NULL;
    /* an extended resource's request equals its limit */
    json_t *res = json_deep_copy(jget(c0, "resources"));
    if (!json_is_object(res)) json_decref(res), res = json_object();
    static const char *const parts[] = {"requests", "limits"};
    for (size_t i = 0; res && i < 2; i++) {
        json_t *l = json_object_get(res, parts[i]);
        if (!json_is_object(l)) json_object_set_new(res, parts[i], l = json_object());
        if (!l || json_object_set_new(l, managed_resource, json_string("1")) != 0)
            json_decref(res), res = NULL;
    }
    return res ? json_pack("[{s:s, s:s, s:o}]", "op", "add", "path", "/spec/containers/0/resources",
                           "value", res)
               : NULL;
}

json_t *dq_quota_patch(const json_t *rq, const json_t *old)
{
    const json_t *hard = jget(rq, "spec", "hard");
    json_t *keep = json_object(), *v;
    const char *k;
    bool bad, moved = false;
    json_t *held = annotation_json(rq, DQ_HARD_ANNOTATION, &bad);
    if (!held) held = json_object();
    json_object_foreach((json_t *)hard, k, v)
    {
        if (!keep || !held) break;
        if (quota_deferred_resource(k)) {
            moved = true;
            json_object_set(held, k, v);
        } else {
            json_object_set(keep, k, v);
        }
    }
    /* allot's book outlives a write that drops it (kubectl replace of the
     * user's manifest): its reservations are binds in flight */
    const char *book = jstr(old, "metadata", "annotations", DQ_BOOK_ANNOTATION);
    bool carry = book && !jget(rq, "metadata", "annotations", DQ_BOOK_ANNOTATION);
    json_t *patch = NULL, *ann = NULL;
    char *text = moved ? json_dumps(held, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if ((moved && text) || carry) {
        ann = json_deep_copy(jget(rq, "metadata", "annotations"));
        if (!json_is_object(ann)) json_decref(ann), ann = json_object();
        if (ann && text) json_object_set_new(ann, DQ_HARD_ANNOTATION, json_string(text));
        if (ann && carry) json_object_set_new(ann, DQ_BOOK_ANNOTATION, json_string(book));
        patch = json_array();
        if (patch && moved)
            json_array_append_new(patch, json_pack("{s:s, s:s, s:O}", "op", "add", "path",
                                                   "/spec/hard", "value", keep));
        if (patch && ann)
            json_array_append_new(patch, json_pack("{s:s, s:s, s:O}", "op", "add", "path",
                                                   "/metadata/annotations", "value", ann));
        if (patch && json_array_size(patch) != (size_t)(moved + 1))
            json_decref(patch), patch = NULL;
    }
    json_decref(ann);
    free(text);
    json_decref(held);
    json_decref(keep);
    return patch;
}
