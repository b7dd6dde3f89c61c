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

bool filter_match(const list_filter *f, const store_obj *o)
{
    if (f->labels) {
        json_t *empty = NULL;
        const json_t *l = o->idx.labels;
        if (!l) l = empty = json_object();
        bool ok = sel_matches(f->labels, l);
        json_decref(empty);
        if (!ok) return false;
    }
    if (!f->fields || !o->idx.fields) return true;
    json_t *fields = api_fields_unpack(o->idx.fields);
    bool ok = sel_matches_fields(f->fields, fields);
    json_decref(fields);
    return ok;
}
