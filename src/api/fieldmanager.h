/* fieldmanager.h - metadata.managedFields as kube-apiserver's field manager
 * keeps them, and server-side apply.
 *
 * Every write records who set which fields (upstream's
 * k8s.io/apimachinery/pkg/util/managedfields): one entry per (manager,
 * operation, apiVersion for an Update, subresource), with the time and the
 * fields as fieldsV1 (core/fieldset.h).
 *
 * fm_update is a create, PUT or non-apply patch (upstream's Update): the
 * fields the write added or changed (structured-merge-diff's Compare of the
 * stored and the new object, core/smd.h) become the writer's, taken
 * silently from whoever owned them; fields it removed leave every entry.
 * The entries it starts from are those the client sent, when they decode
 * (a client may edit managedFields), the stored ones when it sent none, or
 * sent ones that do not decode, and none when it sent `[]` or `[{}]` (a
 * reset). A subresource write always starts from the stored ones. Server
 * fields (metadata.name, uid, resourceVersion, generation, managedFields,
 * ...) are never owned, nor what the kind resets on the path written (the
 * status from the main resource, everything but the status from
 * status). At most 10 Update entries are kept: older ones merge into
 * "ancient-changes" per apiVersion. fm_update never refuses a write: when
 * it cannot track it (limits, memory) the object keeps the stored entries.
 *
 * fm_apply is server-side apply (upstream's Apply): the applied
 * configuration is merged into the stored object by the kind's schema
 * (fm_schema_of); the fields the applier applied before and now leaves
 * out are removed unless another manager owns them too; a field another
 * manager owns whose value the apply changes is a conflict: refused with
 * upstream's 409 (`Apply failed with 1 conflict: conflict with "m" using
 * v1: .data.x`, causes of type FieldManagerConflict), or with `force`
 * taken from it. The manager "kubectl" may take, without a conflict, the
 * fields client-side apply's last-applied-configuration annotation still
 * holds (kubectl's upgrade from client-side apply), and keeps that
 * annotation up to date when the object has it.
 *
 * Pure: times come in as text, nothing global but constant tables. Inputs
 * are borrowed; every json_t returned is the caller's.
 */
#ifndef ALLOT_API_FIELDMANAGER_H
#define ALLOT_API_FIELDMANAGER_H

#include "api/kinds.h"
#include "api/status.h"
#include "core/fieldset.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* upstream's FieldManagerMaxLength */
#define FM_MANAGER_MAX 128
/* upstream's DefaultMaxUpdateManagers */
#define FM_MAX_UPDATE_MANAGERS 10
/* The annotation client-side `kubectl apply` keeps. */
#define FM_LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

/* A write, as managedFields record it. */
typedef struct fm_write {
    const api_kind *kind;
    const char *sub;     /* "" (the object), "status", "scale", ... */
    const char *manager; /* the field manager (fm_manager_check'ed) */
    const char *now;     /* the write's time, RFC 3339 ("2026-01-02T03:04:05Z") */
} fm_write;

/* Record a create (live NULL) or update of live into nw's managedFields. */
void fm_update(const fm_write *w, const json_t *live, json_t *nw);

/* Server-side apply of `config` (an object) to live (NULL: the apply
 * creates the object). The merged object with its managedFields, or NULL
 * with e set: 400 for a configuration with managedFields or that cannot be
 * merged (a keyed list item without its key, duplicate keys), 413 for one
 * too deep or too large, 409 for conflicts. *changed (may be NULL) says whether anything but
 * managedFields differs from live. */
json_t *fm_apply(const fm_write *w, const json_t *live, const json_t *config, bool force,
                 bool *changed, api_err *e);

/* Server-side apply to the scale subresource (upstream's ScaleHandler):
 * `config` (an autoscaling/v1 Scale, kind scale_kind) applied to `scale`
 * (live's Scale, without managedFields), whose managers are those of
 * live's .spec.replicas. Returns live with the applied .spec.replicas and
 * the managers mapped back: an entry that lost .spec.replicas to the apply
 * loses it in live, the applier owns .spec.replicas of live under
 * subresource "scale". w->kind is live's kind, w->sub "scale". */
json_t *fm_apply_scale(const fm_write *w, const api_kind *scale_kind, const json_t *live,
                       const json_t *scale, const json_t *config, bool force, api_err *e);

/* The manager of a request without fieldManager: the User-Agent up to its
 * first '/', without unprintable characters, at most FM_MANAGER_MAX bytes
 * (upstream's prefixFromUserAgent: "kubectl/v1.32.0 (linux/amd64)" is
 * "kubectl"). */
void fm_manager_from_user_agent(const char *ua, char *buf, size_t n);

/* upstream's ValidateFieldManager: causes (FERR_*) appended at `field` for
 * a manager over FM_MANAGER_MAX bytes or with unprintable characters. */
void fm_manager_check(const char *manager, const char *field, json_t *causes);

/* The schema server-side apply merges kind k by (api_kind.apply_schema, or
 * its typed definition, or untyped), and the object's root type. */
void fm_schema_of(const api_kind *k, const fs_schema **sch, fs_type *root);

#endif
