/* fieldmanager_schema.c - server-side apply's schema cursor (core/fieldset.h
 * fs_schema) over the typed definitions of api/schema.h, and the choice of
 * a kind's schema (its own hook, its typed definition, or none).
 *
 * A type here is one of:
 *   T_MSG  p = sch_msg:   a struct (atomic when the message says so);
 *   T_FIELD p = sch_field: the value of a repeated field (a list) or of a
 *          map field (SCH_MAP_*: keys are not declared fields);
 *   T_MAPLIST p = sch_field: one value of a SCH_MAP_SM|SCH_VREP map, a list
 *          of the field's message.
 * Scalars, raw JSON and unknown fields are untyped ({NULL, 0}).
 */
#include "api/fieldmanager.h"

#include "api/schema.h"

enum { T_NONE, T_MSG, T_FIELD, T_MAPLIST };

static const fs_type untyped = {NULL, T_NONE};

/* The type of a field's value. */
static fs_type of_field(const sch_field *f)
{
    if (f->flags & SCH_REP) return (fs_type){f, T_FIELD};
    switch (f->type) {
    case SCH_MSG:
        return (fs_type){f->msg, T_MSG};
    case SCH_MAP_SS:
    case SCH_MAP_SB:
    case SCH_MAP_SQ:
    case SCH_MAP_SM:
        return (fs_type){f, T_FIELD};
    default:
        return untyped; /* scalars, raw JSON: untyped */
    }
}

static fs_type sch_field_type(const fs_schema *s, fs_type t, const char *name, unsigned *flags)
{
    *flags = 0;
    if (t.tag == T_MSG) {
        const sch_field *f = sch_field_find(t.p, name);
        if (!f) return untyped;
        *flags = FS_FIELD_NAMED;
        if (f->flags & SCH_VAL) *flags |= FS_FIELD_VALUE;
        return of_field(f);
    }
    if (t.tag == T_FIELD) {
        const sch_field *f = t.p;
        if (f->type == SCH_MAP_SM && !(f->flags & SCH_REP))
            return f->flags & SCH_VREP ? (fs_type){f, T_MAPLIST} : (fs_type){f->msg, T_MSG};
    }
    return untyped;
}

static fs_type sch_items(const fs_schema *s, fs_type t)
{
    const sch_field *f = t.p;
    if ((t.tag == T_FIELD && (f->flags & SCH_REP) && f->type == SCH_MSG) || t.tag == T_MAPLIST)
        return (fs_type){f->msg, T_MSG};
    return untyped;
}

static void sch_shape(const fs_schema *s, fs_type t, bool is_list, fs_list_info *out)
{
    if (!is_list) {
        if (t.tag == T_MSG && ((const sch_msg *)t.p)->atomic) out->type = FS_LIST_ATOMIC;
        if (t.tag == T_FIELD && (((const sch_field *)t.p)->flags & SCH_ATOM))
            out->type = FS_LIST_ATOMIC;
        return;
    }
    const sch_field *f = t.p;
    if (t.tag != T_FIELD || !(f->flags & SCH_REP) || !f->list) return; /* atomic */
    if (f->list->n == 0) {
        out->type = FS_LIST_SET;
        return;
    }
    out->type = FS_LIST_MAP;
    out->keys = f->list->keys;
    out->nkeys = f->list->n;
    out->key_defaults = f->list->defaults;
}

static const fs_schema sch_cursor = {sch_field_type, sch_items, sch_shape};

void fm_schema_of(const api_kind *k, const fs_schema **sch, fs_type *root)
{
    if (k && k->apply_schema) {
        *sch = k->apply_schema;
        *root = (fs_type){k->apply_root, 0};
        return;
    }
    const sch_msg *m = k ? api_kind_schema(k) : NULL;
    *sch = m ? &sch_cursor : &fs_untyped;
    *root = m ? (fs_type){m, T_MSG} : untyped;
}
