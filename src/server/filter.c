/* filter.c - selector query parameters (see filter.h). */
#include "server/filter.h"

void filter_free(list_filter *f)
{
    sel_free(f->labels);
    sel_free(f->fields);
    f->labels = f->fields = NULL;
}

int filter_parse(const req *rq, const api_kind *k, list_filter *f, api_err *e)
{
    char err[512];
    const char *ls = rq->query(rq, "labelSelector"), *fs = rq->query(rq, "fieldSelector");
    f->labels = f->fields = NULL;
    if (ls && *ls && !(f->labels = sel_parse_labels(ls, err, sizeof err)))
        return api_err_set(e, API_BAD_REQUEST, "unable to parse requirement: %s", err);
    if (fs && *fs) {
        if (!(f->fields = sel_parse_fields(fs, err, sizeof err)))
            return api_err_set(e, API_BAD_REQUEST, "%s", err);
        for (size_t i = 0; i < sel_count(f->fields); i++) {
            if (api_kind_has_field(k, sel_key(f->fields, i))) continue;
            api_err_set(e, API_BAD_REQUEST, "field label not supported: %s", sel_key(f->fields, i));
            filter_free(f);
            return -1;
        }
    }
    return 0;
}

static const char *packed_get(void *packed, const char *key)
{
    return api_fields_get(packed, key);
}

bool filter_match(const list_filter *f, const store_obj *o)
{
    /* (no labels: NULL, which every requirement reads as an absent label) */
    if (f->labels && !sel_matches(f->labels, o->idx.labels)) return false;
    if (!f->fields || !o->idx.fields) return true;
    /* (read in place: a watch's filter runs for every event of its kind) */
    return sel_matches_fields_get(f->fields, packed_get, (void *)o->idx.fields);
}
