/* fieldmanager.c - metadata.managedFields and server-side apply (see
 * fieldmanager.h). The steps and their order are upstream's field manager
 * chain (managedfields/internal: strip meta, managed fields updater,
 * manager info, cap managers, last-applied manager and updater) over
 * structured-merge-diff's Updater (merge.Updater.Update and Apply, prune),
 * with the walks themselves in core/smd.c. */
#include "api/fieldmanager.h"
#include "core/jdump.h"

#include "api/objects.h"
#include "core/rfc3339.h"
#include "core/smd.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Walk bounds: a 3 MiB body holds at most about a million values. */
static const fs_limits LIMITS = {128, 1000000, 8 * 1024 * 1024};

/* ---- constant sets ---- */

/* Fields no manager owns (upstream's stripMetaManager). */
static const char *const strip_paths[][2] = {
    {"apiVersion", NULL},
    {"kind", NULL},
    {"metadata", NULL},
    {"metadata", "name"},
    {"metadata", "namespace"},
    {"metadata", "creationTimestamp"},
    {"metadata", "selfLink"},
    {"metadata", "uid"},
    {"metadata", "clusterName"},
    {"metadata", "generation"},
    {"metadata", "managedFields"},
    {"metadata", "resourceVersion"},
};

static fs_set *strip_set, *status_set, *not_status_set, *mf_set;
static pthread_once_t sets_once = PTHREAD_ONCE_INIT;

static fs_set *fields_set(const char *a, const char *b)
{
    fs_set *s = fs_new();
    const char *p[2] = {a, b};
    if (s && fs_insert_fields(s, p, b ? 2 : 1) != FS_OK) {
        fs_free(s);
        s = NULL;
    }
    return s;
}

static void build_sets(void)
{
    strip_set = fs_new();
    for (size_t i = 0; strip_set && i < sizeof strip_paths / sizeof *strip_paths; i++)
        if (fs_insert_fields(strip_set, strip_paths[i], strip_paths[i][1] ? 2 : 1) != FS_OK) {
            fs_free(strip_set);
            strip_set = NULL;
        }
    status_set = fields_set("status", NULL);
    not_status_set = fields_set("spec", NULL);
    const char *meta[] = {"metadata"};
    if (not_status_set && fs_insert_fields(not_status_set, meta, 1) != FS_OK) {
        fs_free(not_status_set);
        not_status_set = NULL;
    }
    mf_set = fields_set("metadata", "managedFields");
}

static bool sets_ready(void)
{
    pthread_once(&sets_once, build_sets);
    return strip_set && status_set && not_status_set && mf_set;
}

/* What the kind's strategy resets on the path written (upstream's
 * ResetFieldsStrategy): a kind with a status subresource owns its status
 * from status only, and its spec and metadata from the main resource only
 * (the registry's status path keeps the stored metadata; upstream's
 * strategies reset the spec and, per kind, some of the metadata). NULL:
 * none. */
static const fs_set *reset_fields(const fm_write *w)
{
    if (!(w->kind->subresources & API_SUB_STATUS)) return NULL;
    if (!w->sub[0]) return status_set;
    if (!strcmp(w->sub, "status")) return not_status_set;
    return NULL;
}

/* ---- entries ---- */

typedef struct entry {
    char *manager, *operation, *api_version, *subresource; /* owned */
    char *time;                                            /* owned, NULL: none */
    fs_set *set;
} entry;

typedef struct managed {
    entry *v;
    size_t n, cap;
} managed;

static void entry_clear(entry *e)
{
    free(e->manager);
    free(e->operation);
    free(e->api_version);
    free(e->subresource);
    free(e->time);
    fs_free(e->set);
    memset(e, 0, sizeof *e);
}

static void managed_free(managed *m)
{
    for (size_t i = 0; i < m->n; i++)
        entry_clear(&m->v[i]);
    free(m->v);
    memset(m, 0, sizeof *m);
}

static bool is_apply(const entry *e)
{
    return !strcmp(e->operation, "Apply");
}

/* upstream's BuildManagerIdentifier: an Apply entry is one per manager and
 * subresource, an Update entry also per apiVersion. */
static bool same_id(const entry *a, const char *manager, const char *op, const char *av,
                    const char *sub)
{
    return !strcmp(a->manager, manager) && !strcmp(a->operation, op) &&
           !strcmp(a->subresource, sub) && (!strcmp(op, "Apply") || !strcmp(a->api_version, av));
}

static entry *find(managed *m, const char *manager, const char *op, const char *av, const char *sub)
{
    for (size_t i = 0; i < m->n; i++)
        if (same_id(&m->v[i], manager, op, av, sub)) return &m->v[i];
    return NULL;
}

/* A new entry (set empty, no time); NULL when out of memory. */
static entry *add(managed *m, const char *manager, const char *op, const char *av, const char *sub)
{
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 4;
        entry *nv = realloc(m->v, nc * sizeof *nv);
        if (!nv) return NULL;
        m->v = nv;
        m->cap = nc;
    }
    entry *e = &m->v[m->n];
    memset(e, 0, sizeof *e);
    e->manager = strdup(manager);
    e->operation = strdup(op);
    e->api_version = strdup(av);
    e->subresource = strdup(sub);
    e->set = fs_new();
    if (!e->manager || !e->operation || !e->api_version || !e->subresource || !e->set) {
        entry_clear(e);
        return NULL;
    }
    m->n++;
    return e;
}

static void drop(managed *m, size_t i)
{
    entry_clear(&m->v[i]);
    memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof *m->v);
    m->n--;
}

static void drop_empty(managed *m)
{
    for (size_t i = m->n; i-- > 0;)
        if (fs_empty(m->v[i].set)) drop(m, i);
}

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* upstream's DecodeManagedFields: 0, or -1 when the list does not decode
 * (m empty). A later entry with an earlier one's identifier replaces it. */
static int decode(const json_t *mf, managed *m)
{
    size_t i;
    json_t *je;
    memset(m, 0, sizeof *m);
    if (!json_is_array(mf)) return -1;
    json_array_foreach(mf, i, je)
    {
        const char *op = str(je, "operation"), *av = str(je, "apiVersion");
        const char *ft = str(je, "fieldsType"), *mgr = str(je, "manager");
        const char *sub = str(je, "subresource");
        const json_t *fv = json_object_get(je, "fieldsV1"), *t = json_object_get(je, "time");
        if (!json_is_object(je) || !op || (strcmp(op, "Apply") && strcmp(op, "Update")) || !av ||
            !*av || !ft || strcmp(ft, "FieldsV1") || (fv && !json_is_object(fv)) ||
            (t && !json_is_null(t) && !json_is_string(t)))
            goto bad;
        entry *old = find(m, mgr ? mgr : "", op, av, sub ? sub : "");
        if (old) drop(m, (size_t)(old - m->v));
        entry *e = add(m, mgr ? mgr : "", op, av, sub ? sub : "");
        if (!e) goto bad;
        if (json_is_string(t) && !(e->time = strdup(json_string_value(t)))) goto bad;
        if (fv) {
            int code;
            fs_set *s = fs_from_fieldsv1(fv, &LIMITS, &code, NULL, 0);
            if (!s) goto bad;
            fs_free(e->set);
            e->set = s;
        }
    }
    return 0;
bad:
    managed_free(m);
    return -1;
}

static int64_t seconds(const char *t)
{
    int64_t s = 0;
    return t && rfc3339_parse(t, &s, NULL) ? s : 0;
}

/* upstream's sortEncodedManagedFields */
static int entry_cmp_q(const void *a, const void *b)
{
    const entry *p = a, *q = b;
    int c = strcmp(p->operation, q->operation);
    if (c) return c;
    int64_t ps = seconds(p->time), qs = seconds(q->time);
    if (ps != qs) return ps < qs ? -1 : 1;
    if ((c = strcmp(p->manager, q->manager))) return c;
    if ((c = strcmp(p->api_version, q->api_version))) return c;
    return strcmp(p->subresource, q->subresource);
}

/* The entries as metadata.managedFields (empty ones left out); NULL when
 * out of memory. */
static json_t *encode(managed *m)
{
    drop_empty(m);
    if (m->n > 1) qsort(m->v, m->n, sizeof *m->v, entry_cmp_q);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < m->n; i++) {
        entry *e = &m->v[i];
        /* ManagedFieldsEntry's members in its Go order */
        json_t *o = json_pack("{s:s, s:s, s:s}", "manager", e->manager, "operation", e->operation,
                              "apiVersion", e->api_version);
        json_t *fv = fs_to_fieldsv1(e->set);
        int rc = !o || !fv;
        if (!rc && e->time) rc = json_object_set_new(o, "time", json_string(e->time));
        if (!rc) rc = json_object_set_new(o, "fieldsType", json_string("FieldsV1"));
        if (!rc) rc = json_object_set(o, "fieldsV1", fv);
        if (!rc && *e->subresource)
            rc = json_object_set_new(o, "subresource", json_string(e->subresource));
        json_decref(fv);
        if (rc || json_array_append_new(arr, o)) {
            if (rc) json_decref(o);
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

/* upstream's capManagersManager: the oldest Update entries beyond
 * FM_MAX_UPDATE_MANAGERS merge into one "ancient-changes" entry per
 * apiVersion. 0, or -1 when out of memory. */
static int cap_updates(managed *m)
{
    size_t nupd = 0;
    for (size_t i = 0; i < m->n; i++)
        nupd += !is_apply(&m->v[i]);
    if (nupd <= FM_MAX_UPDATE_MANAGERS) return 0;
    qsort(m->v, m->n, sizeof *m->v, entry_cmp_q); /* Apply first, then oldest first */
    for (size_t i = 0; i < m->n && nupd > FM_MAX_UPDATE_MANAGERS;) {
        entry *e = &m->v[i];
        if (is_apply(e) || !strcmp(e->manager, "ancient-changes")) {
            i++;
            continue;
        }
        entry *bucket = find(m, "ancient-changes", "Update", e->api_version, "");
        if (!bucket) { /* the oldest of its version becomes the bucket */
            char *name = strdup("ancient-changes"), *sub = strdup("");
            if (!name || !sub) {
                free(name);
                free(sub);
                return -1;
            }
            free(e->manager);
            free(e->subresource);
            e->manager = name;
            e->subresource = sub;
            i++;
            continue;
        }
        fs_set *u = fs_union(bucket->set, e->set);
        if (!u) return -1;
        fs_free(bucket->set);
        bucket->set = u;
        free(bucket->time);
        bucket->time = e->time;
        e->time = NULL;
        drop(m, i);
        nupd--;
    }
    return 0;
}

/* ---- the managers to start from ---- */

/* upstream's isResetManagedFields: [] or [{}]. */
static bool is_reset(const json_t *mf)
{
    return json_is_array(mf) &&
           (json_array_size(mf) == 0 ||
            (json_array_size(mf) == 1 && json_is_object(json_array_get(mf, 0)) &&
             json_object_size(json_array_get(mf, 0)) == 0));
}

static const json_t *mf_of(const json_t *obj)
{
    return json_object_get(json_object_get(obj, "metadata"), "managedFields");
}

/* upstream's decodeManagedFields (and decodeLiveManagedFields). */
static void start_from(const fm_write *w, const json_t *live, const json_t *nw, managed *m)
{
    const json_t *sent = mf_of(nw);
    if (!w->sub[0] && is_reset(sent)) {
        memset(m, 0, sizeof *m);
        return;
    }
    if (!w->sub[0] && sent && decode(sent, m) == 0 && m->n > 0) return;
    managed_free(m);
    if (decode(mf_of(live), m) != 0) memset(m, 0, sizeof *m);
}

/* ---- the object without its managedFields ---- */

/* A shallow view of obj without metadata.managedFields: a new top level
 * and metadata sharing every other value (read only). */
static json_t *without_mf(const json_t *obj)
{
    if (!obj) return NULL;
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta) || !json_object_get(meta, "managedFields"))
        return json_incref((json_t *)obj); /* nothing to leave out (a create, as a rule) */
    json_t *top = json_copy((json_t *)obj);
    json_t *m2 = json_copy(meta);
    if (!top || !m2 || json_object_del(m2, "managedFields") ||
        json_object_set_new(top, "metadata", m2)) {
        json_decref(top);
        return NULL;
    }
    return top;
}

static void set_mf(json_t *obj, json_t *mf)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta)) {
        json_decref(mf);
        return;
    }
    if (mf && json_array_size(mf))
        json_object_set_new(meta, "managedFields", mf);
    else {
        json_decref(mf);
        json_object_del(meta, "managedFields");
    }
}

/* The compare of live and nw, leaving out managedFields and the reset
 * fields. */
static int diff(const fm_write *w, const json_t *live, const json_t *nw, smd_diff *d)
{
    const fs_schema *sch;
    fs_type root;
    fm_schema_of(w->kind, &sch, &root);
    json_t *l = without_mf(live), *n = without_mf(nw);
    int rc = (live && !l) || !n ? FS_ERR_NOMEM : smd_compare(l, n, sch, root, &LIMITS, d, NULL, 0);
    json_decref(l);
    json_decref(n);
    if (rc) return rc;
    const fs_set *reset = reset_fields(w);
    fs_set *all[3] = {d->added, d->removed, d->modified};
    for (int i = 0; i < 3; i++) {
        fs_subtract(all[i], mf_set, true);
        if (reset) fs_subtract(all[i], reset, true);
    }
    return 0;
}

static void api_version(const fm_write *w, char *buf, size_t n)
{
    api_kind_api_version(w->kind, buf, n);
}

/* ---- Update ---- */

void fm_update(const fm_write *w, const json_t *live, json_t *nw)
{
    const json_t *sent = mf_of(nw), *stored = mf_of(live);
    managed m = {0};
    smd_diff d = {0};
    char av[128];
    api_version(w, av, sizeof av);
    if (!sets_ready() || diff(w, live, nw, &d) != 0) goto keep_live;
    bool changed = !fs_empty(d.added) || !fs_empty(d.removed) || !fs_empty(d.modified);
    /* Nothing changed, and the entries are the stored ones: as they are. */
    if (!changed && (w->sub[0] || !sent || json_equal((json_t *)sent, (json_t *)stored))) {
        smd_diff_free(&d);
        set_mf(nw, stored ? jcopy(stored) : NULL);
        return;
    }
    start_from(w, live, nw, &m);
    for (size_t i = 0; i < m.n; i++) { /* an update takes what it sets, silently */
        fs_subtract(m.v[i].set, d.added, false);
        fs_subtract(m.v[i].set, d.modified, false);
        fs_subtract(m.v[i].set, d.removed, false);
    }
    /* this write's fields: what it added or changed (taken from the diff) */
    fs_set *mine = fs_empty(d.modified) ? d.added : fs_union(d.added, d.modified);
    if (mine == d.added) d.added = NULL;
    if (!mine) goto keep_live;
    fs_subtract(mine, strip_set, false);
    if (!fs_empty(mine)) {
        entry *e = find(&m, w->manager, "Update", av, w->sub);
        if (!e && !(e = add(&m, w->manager, "Update", av, w->sub))) {
            fs_free(mine);
            goto keep_live;
        }
        fs_set *u = fs_empty(e->set) ? mine : fs_union(e->set, mine);
        char *t = strdup(w->now);
        if (!u || !t) {
            if (u != mine) fs_free(u);
            free(t);
            fs_free(mine);
            goto keep_live;
        }
        if (u == mine) mine = NULL;
        fs_free(e->set);
        e->set = u;
        free(e->time);
        e->time = t;
    }
    fs_free(mine);
    drop_empty(&m);
    json_t *mf = cap_updates(&m) == 0 ? encode(&m) : NULL;
    if (!mf) goto keep_live;
    set_mf(nw, mf);
    managed_free(&m);
    smd_diff_free(&d);
    return;
keep_live: /* upstream's UpdateNoErrors: the write goes on, untracked */
    managed_free(&m);
    smd_diff_free(&d);
    set_mf(nw, stored ? jcopy(stored) : NULL);
}

/* ---- Apply ---- */

static fs_set *named(const fm_write *w, const fs_set *s)
{
    const fs_schema *sch;
    fs_type root;
    fm_schema_of(w->kind, &sch, &root);
    return smd_named_members(s, sch, root);
}

static fs_set *set_of(const fm_write *w, const json_t *obj, unsigned flags)
{
    const fs_schema *sch;
    fs_type root;
    fm_schema_of(w->kind, &sch, &root);
    return fs_from_object_typed(obj, sch, root, flags, &LIMITS, NULL, NULL, 0);
}

static json_t *remove_items(const fm_write *w, const json_t *obj, const fs_set *items)
{
    const fs_schema *sch;
    fs_type root;
    fm_schema_of(w->kind, &sch, &root);
    return smd_remove(obj, items, sch, root, &LIMITS);
}

/* upstream's Updater.prune: the fields and items the applier applied last
 * time (`last`) and no longer applies go, unless some manager (the
 * applier's new set included) owns them. NULL when out of memory. */
static json_t *prune(const fm_write *w, json_t *merged, const managed *m, const fs_set *last)
{
    if (fs_empty(last)) return json_incref(merged);
    json_t *pruned = NULL, *added_back = NULL, *out = NULL;
    fs_set *lastn = named(w, last), *owned = fs_new(), *ms = NULL, *ps = NULL, *drop = NULL;
    for (size_t i = 0; owned && i < m->n; i++) {
        fs_set *u = fs_union(owned, m->v[i].set);
        fs_free(owned);
        owned = u;
    }
    fs_set *ownedn = owned ? named(w, owned) : NULL;
    if (!lastn || !ownedn) goto done;
    /* remove what was applied last time ... */
    if (!(pruned = remove_items(w, merged, lastn))) goto done;
    fs_set *a = set_of(w, merged, FS_LENIENT), *b = set_of(w, pruned, FS_LENIENT);
    ms = a ? named(w, a) : NULL;
    ps = b ? named(w, b) : NULL;
    fs_free(a);
    fs_free(b);
    if (!ms || !ps) goto done;
    /* ... add back what anyone owns (addBackOwnedItems) ... */
    fs_set *keep = fs_union(ps, ownedn);
    drop = keep ? fs_difference(ms, keep) : NULL;
    fs_free(keep);
    if (!drop || !(added_back = remove_items(w, merged, drop))) goto done;
    /* ... and what the applier never had (addBackDanglingItems) */
    fs_free(ps);
    fs_set *c = set_of(w, added_back, FS_LENIENT);
    ps = c ? named(w, c) : NULL;
    fs_free(c);
    fs_free(drop);
    drop = ps ? fs_difference(ms, ps) : NULL;
    fs_set *gone = drop ? fs_intersection(drop, lastn) : NULL;
    if (gone) out = remove_items(w, merged, gone);
    fs_free(gone);
done:
    fs_free(lastn);
    fs_free(owned);
    fs_free(ownedn);
    fs_free(ms);
    fs_free(ps);
    fs_free(drop);
    json_decref(pruned);
    json_decref(added_back);
    return out;
}

/* The conflicts of each other entry: its fields the apply adds or changes. */
typedef struct conflicts {
    fs_set **of; /* per entry of m, NULL: none */
    size_t n;
} conflicts;

static void conflicts_free(conflicts *c)
{
    for (size_t i = 0; c->of && i < c->n; i++)
        fs_free(c->of[i]);
    free(c->of);
    c->of = NULL;
}

/* -1 out of memory, else how many entries conflict. */
static int find_conflicts(const managed *m, const entry *me, const smd_diff *d, conflicts *c)
{
    int n = 0;
    c->n = m->n;
    c->of = calloc(m->n ? m->n : 1, sizeof *c->of);
    if (!c->of) return -1;
    fs_set *changed = fs_union(d->added, d->modified);
    if (!changed) return -1;
    for (size_t i = 0; i < m->n; i++) {
        if (&m->v[i] == me) continue;
        fs_set *x = fs_intersection(m->v[i].set, changed);
        if (!x) {
            fs_free(changed);
            return -1;
        }
        if (fs_empty(x))
            fs_free(x);
        else
            c->of[i] = x, n++;
    }
    fs_free(changed);
    return n;
}

/* upstream's lastAppliedManager: the fields client-side apply last applied
 * that still hold their value; NULL when the annotation says nothing. */
static fs_set *allowed_by_last_applied(const fm_write *w, const json_t *live)
{
    const char *la =
        str(json_object_get(json_object_get(live, "metadata"), "annotations"), FM_LAST_APPLIED);
    char av[128];
    api_version(w, av, sizeof av);
    json_t *obj = la && *la ? json_loads(la, 0, NULL) : NULL;
    fs_set *s = NULL;
    smd_diff d = {0};
    const char *oav = str(obj, "apiVersion");
    if (json_is_object(obj) && oav && !strcmp(oav, av) && (s = set_of(w, obj, FS_LENIENT))) {
        json_t *l = without_mf(live);
        const fs_schema *sch;
        fs_type root;
        fm_schema_of(w->kind, &sch, &root);
        if (l && smd_compare(obj, l, sch, root, &LIMITS, &d, NULL, 0) == FS_OK) {
            fs_subtract(s, d.modified, false);
            fs_subtract(s, d.added, false);
            fs_subtract(s, d.removed, false);
        } else {
            fs_free(s);
            s = NULL;
        }
        json_decref(l);
    }
    smd_diff_free(&d);
    json_decref(obj);
    return s;
}

static int fs_err(api_err *e, int code, const char *why)
{
    if (code == FS_ERR_NOMEM) return api_err_set(e, API_INTERNAL, "out of memory");
    if (code == FS_ERR_LIMIT)
        return api_err_set(e, API_TOO_LARGE, "the applied configuration is too large: %s", why);
    return api_err_set(e, API_BAD_REQUEST, "%s", why);
}

/* Conflicts listed at most, in the message and as causes; the others are
 * counted. Upstream lists every one, as many as the managers' entries hold
 * (14 managers of 20,000 keys: 280,000 causes, 26 MB); the message is cut
 * at 4 KiB anyway, and api_err_status bounds the causes. */
#define CONFLICTS_LISTED 1000

typedef struct cfl {
    fs_conflict *v;
    size_t n, total;
    const char *manager;
    int rc;
} cfl;

static int collect(void *ud, const char *path)
{
    cfl *c = ud;
    if (c->n == CONFLICTS_LISTED) return 1; /* (the rest are counted by fs_size) */
    fs_conflict *nv = realloc(c->v, (c->n + 1) * sizeof *nv);
    if (!nv) return c->rc = -1;
    c->v = nv;
    c->v[c->n].manager = strdup(c->manager);
    c->v[c->n].path = strdup(path);
    c->n++;
    if (!c->v[c->n - 1].manager || !c->v[c->n - 1].path) return c->rc = -1;
    return 0;
}

/* An entry with conflicts, as printManager prints its manager. */
typedef struct cfl_of {
    char *pm;
    const fs_set *set;
    size_t i; /* its place in managedFields: order among equal names */
} cfl_of;

static int cfl_of_cmp(const void *a, const void *b)
{
    const cfl_of *x = a, *y = b;
    int c = strcmp(x->pm, y->pm);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The conflicts in upstream's order (by manager, sorted; each manager's
 * paths in order), the first CONFLICTS_LISTED of them listed in *c. */
static int list_conflicts(const managed *m, const conflicts *cs, cfl *c)
{
    cfl_of *of = calloc(m->n ? m->n : 1, sizeof *of);
    size_t k = 0;
    if (!of) return c->rc = -1;
    for (size_t i = 0; i < m->n && !c->rc; i++) {
        if (!cs->of[i]) continue;
        const entry *x = &m->v[i];
        of[k] = (cfl_of){fs_print_manager(x->manager, x->operation, x->api_version, x->subresource),
                         cs->of[i], i};
        if (!of[k++].pm) c->rc = -1;
    }
    if (!c->rc) qsort(of, k, sizeof *of, cfl_of_cmp);
    for (size_t i = 0; i < k && !c->rc; i++) {
        c->manager = of[i].pm;
        c->total += fs_size(of[i].set);
        if (c->n < CONFLICTS_LISTED && fs_iterate(of[i].set, collect, c) != FS_OK) c->rc = -1;
    }
    for (size_t i = 0; i < k; i++)
        free(of[i].pm);
    free(of);
    return c->rc;
}

/* upstream's NewConflictError: 409, the message, a cause per field (both
 * bounded: CONFLICTS_LISTED). */
static int conflict_error(const managed *m, const conflicts *cs, api_err *e)
{
    cfl c = {NULL, 0, 0, NULL, 0};
    fs_conflicts fc = {NULL, 0, 0};
    char *msg = NULL;
    if (list_conflicts(m, cs, &c) == 0) {
        fc = (fs_conflicts){c.v, c.n, c.total};
        msg = fs_conflict_message(&fc, sizeof e->message - 1);
    } else {
        fc = (fs_conflicts){c.v, c.n, c.n};
    }
    if (!msg) {
        fs_conflicts_free(&fc);
        return api_err_set(e, API_INTERNAL, "out of memory");
    }
    api_err_set(e, API_CONFLICT, "%s", msg);
    free(msg);
    json_t *causes = json_array();
    for (size_t i = 0; causes && i < c.n; i++) {
        char text[1024];
        snprintf(text, sizeof text, "conflict with %s", c.v[i].manager);
        json_array_append_new(causes, json_pack("{s:s, s:s, s:s}", "reason", "FieldManagerConflict",
                                                "message", text, "field", c.v[i].path));
    }
    if (!e->details) e->details = json_object();
    json_object_set_new(e->details, "causes", causes);
    fs_conflicts_free(&fc);
    return -1;
}

/* upstream's lastAppliedUpdater: kubectl's apply keeps an existing
 * last-applied-configuration annotation in step with what it applies. */
static void update_last_applied(const fm_write *w, json_t *obj, const json_t *config)
{
    json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
    if (strcmp(w->manager, "kubectl") || !json_object_get(ann, FM_LAST_APPLIED)) return;
    json_t *c = jcopy(config);
    json_t *cann = json_object_get(json_object_get(c, "metadata"), "annotations");
    json_object_del(cann, FM_LAST_APPLIED);
    char *text = c ? json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(c);
    if (!text) return;
    size_t total = strlen(text) + 1;
    const char *k;
    json_t *v;
    json_object_foreach(ann, k, v)
    {
        if (strcmp(k, FM_LAST_APPLIED)) total += strlen(k) + json_string_length(v);
    }
    if (total + strlen(FM_LAST_APPLIED) > 256 * 1024) { /* ValidateAnnotationsSize */
        json_object_del(ann, FM_LAST_APPLIED);
    } else {
        json_t *s = json_sprintf("%s\n", text);
        if (s) json_object_set_new(ann, FM_LAST_APPLIED, s);
    }
    free(text);
}

json_t *fm_apply(const fm_write *w, const json_t *live, const json_t *config, bool force,
                 bool *changed, api_err *e)
{
    const fs_schema *sch;
    fs_type root;
    char av[128], why[512];
    int code = 0;
    managed m = {0};
    smd_diff d = {0};
    conflicts cs = {NULL, 0};
    fs_set *set = NULL, *last = NULL;
    json_t *l = NULL, *merged = NULL, *pruned = NULL, *out = NULL;
    fm_schema_of(w->kind, &sch, &root);
    api_version(w, av, sizeof av);
    if (!sets_ready()) return api_err_set(e, API_INTERNAL, "out of memory"), NULL;
    const json_t *cmf = mf_of(config);
    if (cmf && !json_is_null(cmf)) /* upstream's structuredMergeManager.Apply */
        return api_err_set(e, API_BAD_REQUEST, "metadata.managedFields must be nil"), NULL;
    if (decode(mf_of(live), &m) != 0) memset(&m, 0, sizeof m);
    if (live && !(l = without_mf(live))) goto nomem;
    /* the applier's set: what the configuration sets, but reset fields */
    if (!(set = fs_from_object_typed(config, sch, root, 0, &LIMITS, &code, why, sizeof why))) {
        fs_err(e, code, why);
        goto fail;
    }
    const fs_set *reset = reset_fields(w);
    if (reset) fs_subtract(set, reset, true);
    if (!(merged = smd_merge(l, config, sch, root, &LIMITS, &code, why, sizeof why))) {
        fs_err(e, code, why);
        goto fail;
    }
    /* a null managedFields in the configuration is none (the entries are ours) */
    json_object_del(json_object_get(merged, "metadata"), "managedFields");
    entry *me = find(&m, w->manager, "Apply", av, w->sub);
    if (me) {
        last = me->set;
        me->set = set;
    } else if ((me = add(&m, w->manager, "Apply", av, w->sub))) {
        fs_free(me->set);
        me->set = set;
    } else {
        goto nomem;
    }
    set = NULL;
    /* past the walks' limits (or memory): the object and the configuration
     * together are more than an apply handles; a 4xx, as for a body */
    if (!(pruned = prune(w, merged, &m, last)) || diff(w, l, pruned, &d) != 0) {
        api_err_set(e, API_TOO_LARGE,
                    "the object and the applied configuration are too large to "
                    "merge");
        goto fail;
    }
    int nc = find_conflicts(&m, me, &d, &cs);
    if (nc < 0) goto nomem;
    if (nc > 0 && !force && !strcmp(w->manager, "kubectl")) {
        /* kubectl's upgrade from client-side apply: what the last-applied
         * annotation still holds is no conflict; the rest still is. */
        fs_set *ok = allowed_by_last_applied(w, live);
        for (size_t i = 0; ok && i < cs.n; i++) {
            if (!cs.of[i]) continue;
            fs_subtract(cs.of[i], ok, false);
            if (fs_empty(cs.of[i])) {
                fs_free(cs.of[i]);
                cs.of[i] = NULL;
                nc--;
            }
        }
        fs_free(ok);
    }
    if (nc > 0 && !force) {
        conflict_error(&m, &cs, e);
        goto fail;
    }
    for (size_t i = 0; i < m.n; i++) {
        if (&m.v[i] == me) continue;
        fs_subtract(m.v[i].set, d.added, false);
        fs_subtract(m.v[i].set, d.modified, false);
        fs_subtract(m.v[i].set, d.removed, false);
    }
    bool same = l && smd_equal(l, pruned);
    if (!same) {
        free(me->time);
        if (!(me->time = strdup(w->now))) goto nomem;
    }
    fs_subtract(me->set, strip_set, false);
    out = same ? jcopy(live) : json_incref(pruned);
    if (!out) goto nomem;
    json_t *mf = encode(&m);
    if (!mf) goto nomem;
    set_mf(out, mf);
    update_last_applied(w, out, config);
    if (changed) *changed = !same;
    goto done;
nomem:
    api_err_set(e, API_INTERNAL, "out of memory");
fail:
    json_decref(out);
    out = NULL;
done:
    conflicts_free(&cs);
    smd_diff_free(&d);
    managed_free(&m);
    fs_free(set);
    fs_free(last);
    json_decref(l);
    json_decref(merged);
    json_decref(pruned);
    return out;
}

/* ---- the scale subresource ---- */

/* An entry of the same manager, operation and subresource (the apiVersion
 * differs between a kind and its Scale). */
static entry *find_loose(managed *m, const entry *x)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->v[i].manager, x->manager) && !strcmp(m->v[i].operation, x->operation) &&
            !strcmp(m->v[i].subresource, x->subresource))
            return &m->v[i];
    return NULL;
}

static const char *const REPLICAS[] = {"spec", "replicas"};

json_t *fm_apply_scale(const fm_write *w, const api_kind *scale_kind, const json_t *live,
                       const json_t *scale, const json_t *config, bool force, api_err *e)
{
    managed pm = {0}, view = {0}, after = {0};
    json_t *sc = NULL, *applied = NULL, *out = NULL;
    fs_set *rep = fs_new();
    char sav[128];
    api_kind_api_version(scale_kind, sav, sizeof sav);
    if (!rep || fs_insert_fields(rep, REPLICAS, 2) != FS_OK) goto nomem;
    if (decode(mf_of(live), &pm) != 0) memset(&pm, 0, sizeof pm);
    /* ToSubresource: who owns .spec.replicas, as the Scale's managers */
    for (size_t i = 0; i < pm.n; i++) {
        fs_set *x = fs_intersection(pm.v[i].set, rep);
        if (!x) goto nomem;
        bool owns = !fs_empty(x);
        fs_free(x);
        if (!owns) continue;
        entry *v = add(&view, pm.v[i].manager, pm.v[i].operation, sav, pm.v[i].subresource);
        if (!v || fs_insert_fields(v->set, REPLICAS, 2) != FS_OK ||
            (pm.v[i].time && !(v->time = strdup(pm.v[i].time))))
            goto nomem;
    }
    json_t *vmf = encode(&view);
    if (!vmf || !(sc = jcopy(scale))) {
        json_decref(vmf);
        goto nomem;
    }
    set_mf(sc, vmf);
    fm_write sw = {scale_kind, w->sub, w->manager, w->now};
    if (!(applied = fm_apply(&sw, sc, config, force, NULL, e))) goto fail;
    if (decode(mf_of(applied), &after) != 0) goto nomem;
    /* ToParent: entries that lost .spec.replicas lose it here too ... */
    for (size_t i = 0; i < pm.n; i++) {
        entry *v = find_loose(&after, &pm.v[i]);
        fs_set *x = v ? fs_intersection(v->set, rep) : NULL;
        if (!v || fs_empty(x)) fs_subtract(pm.v[i].set, rep, false);
        fs_free(x);
    }
    /* ... and the Scale's new owners own it here */
    char av[128];
    api_version(w, av, sizeof av);
    for (size_t i = 0; i < after.n; i++) {
        fs_set *x = fs_intersection(after.v[i].set, rep);
        bool owns = x && !fs_empty(x);
        fs_free(x);
        if (!owns || find_loose(&pm, &after.v[i])) continue;
        entry *p = add(&pm, after.v[i].manager, after.v[i].operation, av, after.v[i].subresource);
        if (!p || fs_insert_fields(p->set, REPLICAS, 2) != FS_OK ||
            (after.v[i].time && !(p->time = strdup(after.v[i].time))))
            goto nomem;
    }
    if (!(out = jcopy(live))) goto nomem;
    json_t *r = json_object_get(json_object_get(applied, "spec"), "replicas");
    if (r && json_object_set(json_object_ensure(out, "spec"), "replicas", r)) goto nomem;
    json_t *mf = encode(&pm);
    if (!mf) goto nomem;
    set_mf(out, mf);
    goto done;
nomem:
    api_err_set(e, API_INTERNAL, "out of memory");
fail:
    json_decref(out);
    out = NULL;
done:
    managed_free(&pm);
    managed_free(&view);
    managed_free(&after);
    fs_free(rep);
    json_decref(sc);
    json_decref(applied);
    return out;
}

/* ---- managers ---- */

/* A UTF-8 sequence's length at s, or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80) return 1;
    size_t n = s[0] >= 0xf0 && s[0] < 0xf5   ? 4
               : s[0] >= 0xe0                ? 3
               : s[0] >= 0xc2 && s[0] < 0xe0 ? 2
                                             : 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return n;
}

/* unicode.IsPrint for the cases that matter here: ASCII controls and DEL
 * are not printable, nor invalid UTF-8, nor C1 controls and the line and
 * paragraph separators; other characters are taken as printable. */
static size_t printable(const unsigned char *s)
{
    size_t n = utf8_len(s);
    if (n == 1 && (s[0] < 0x20 || s[0] == 0x7f)) return 0;
    if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) return 0; /* C1 controls, NBSP is printable */
    if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9)) return 0;
    return n;
}

void fm_manager_from_user_agent(const char *ua, char *buf, size_t n)
{
    size_t w = 0;
    const unsigned char *s = (const unsigned char *)(ua ? ua : "");
    while (*s && *s != '/') {
        size_t k = printable(s);
        if (!k) {
            size_t skip = utf8_len(s);
            s += skip ? skip : 1;
            continue;
        }
        if (w + k > FM_MANAGER_MAX || w + k >= n) break;
        memcpy(buf + w, s, k);
        w += k;
        s += k;
    }
    if (n) buf[w < n ? w : n - 1] = '\0';
}

void fm_manager_check(const char *manager, const char *field, json_t *causes)
{
    if (strlen(manager) > FM_MANAGER_MAX)
        ferr_addf(causes, FERR_TOO_LONG, field, NULL, "must have at most %d bytes", FM_MANAGER_MAX);
    for (const unsigned char *s = (const unsigned char *)manager; *s;) {
        size_t k = printable(s);
        if (!k) {
            ferr_add_str(causes, FERR_INVALID, field, manager,
                         "must only contain printable characters");
            break;
        }
        s += k;
    }
}
