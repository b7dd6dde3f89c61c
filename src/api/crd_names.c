/* crd_names.c - the naming controller's decision (see crd.h): which of the
 * names a CustomResourceDefinition asks for it may serve, given the names
 * the other definitions of its group have accepted and the built-in kinds
 * of the group hold (upstream's NamingConditionController, with built-ins
 * counted as taken: allot serves kinds such as capsule.clastix.io's itself). */
#include "api/crd.h"
#include "core/jdump.h"
#include "core/jget.h"

#include <stdio.h>
#include <string.h>

static void take(json_t *set, const char *name)
{
    if (name && *name) json_object_set_new(set, name, json_true());
}

void crd_taken_add(const json_t *names, json_t *resources, json_t *kinds)
{
    take(resources, jstr(names, "plural"));
    take(resources, jstr(names, "singular"));
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(names, "shortNames"), i, v)
        take(resources, json_string_value(v));
    take(kinds, jstr(names, "kind"));
    take(kinds, jstr(names, "listKind"));
}

/* equalToAcceptedOrFresh: 0, or -1 with upstream's message. */
static int fresh(const char *requested, const char *accepted, const json_t *used, char *msg,
                 size_t n)
{
    if (!requested) requested = "";
    if (accepted && !strcmp(requested, accepted)) return 0;
    if (!json_object_get(used, requested)) return 0;
    snprintf(msg, n, "\"%s\" is already in use", requested);
    return -1;
}

static void conflict(crd_naming *out, const char *reason, const char *msg)
{
    out->ok = false;
    out->reason = reason;
    snprintf(out->message, sizeof out->message, "%s", msg);
}

/* One of plural, singular, kind, listKind: requested, or the accepted one
 * kept on a conflict. */
static void one_name(crd_naming *out, const json_t *req, const json_t *acc, const char *key,
                     const json_t *used, const char *reason)
{
    char msg[600];
    const char *want = jstr(req, key), *have = jstr(acc, key);
    if (fresh(want, have, used, msg, sizeof msg) == 0) {
        json_object_set_new(out->accepted, key, json_string(want ? want : ""));
        return;
    }
    conflict(out, reason, msg);
    json_object_set_new(out->accepted, key, json_string(have ? have : ""));
}

static bool list_has(const json_t *list, const char *v)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) if (!strcmp(json_string_value(e) ?: "", v)) return true;
    return false;
}

/* Short names: those already accepted stay ours; every new one must be free.
 * Upstream aggregates the errors as "[a, b]" when there are several. */
static void short_names(crd_naming *out, const json_t *req, const json_t *acc, const json_t *used)
{
    const json_t *want = json_object_get(req, "shortNames"),
                 *have = json_object_get(acc, "shortNames");
    if (json_equal(want, have) || (!json_array_size(want) && !json_array_size(have))) {
        if (json_array_size(want)) json_object_set(out->accepted, "shortNames", (json_t *)want);
        return;
    }
    char msgs[1024] = "", one[300];
    size_t nerr = 0, i;
    json_t *v;
    json_array_foreach(want, i, v)
    {
        const char *s = json_string_value(v) ?: "";
        if (list_has(have, s) || fresh(s, "", used, one, sizeof one) == 0) continue;
        size_t len = strlen(msgs);
        snprintf(msgs + len, sizeof msgs - len, "%s%s", nerr ? ", " : "", one);
        nerr++;
    }
    if (!nerr) {
        if (json_array_size(want))
            json_object_set(out->accepted, "shortNames", (json_t *)want);
        else
            json_object_del(out->accepted, "shortNames");
        return;
    }
    char agg[1100];
    snprintf(agg, sizeof agg, nerr > 1 ? "[%s]" : "%s", msgs);
    conflict(out, "ShortNamesConflict", agg);
    if (json_array_size(have))
        json_object_set(out->accepted, "shortNames", (json_t *)have);
    else
        json_object_del(out->accepted, "shortNames");
}

int crd_naming_compute(const json_t *crd, const json_t *resources, const json_t *kinds,
                       crd_naming *out)
{
    memset(out, 0, sizeof *out);
    const json_t *req = json_object_get(json_object_get(crd, "spec"), "names");
    const json_t *acc = json_object_get(json_object_get(crd, "status"), "acceptedNames");
    out->accepted = jcopy(json_is_object(acc) ? acc : NULL);
    if (!out->accepted) out->accepted = json_object();
    if (!out->accepted) return -1;
    out->ok = true;
    out->reason = "NoConflicts";
    one_name(out, req, acc, "plural", resources, "PluralConflict");
    one_name(out, req, acc, "singular", resources, "SingularConflict");
    short_names(out, req, acc, resources);
    one_name(out, req, acc, "kind", kinds, "KindConflict");
    one_name(out, req, acc, "listKind", kinds, "ListKindConflict");
    const json_t *cats = json_object_get(req, "categories");
    if (json_array_size(cats))
        json_object_set(out->accepted, "categories", (json_t *)cats);
    else
        json_object_del(out->accepted, "categories");
    if (out->ok) snprintf(out->message, sizeof out->message, "no conflicts found");
    return 0;
}

void crd_naming_clear(crd_naming *n)
{
    json_decref(n->accepted);
    n->accepted = NULL;
}
