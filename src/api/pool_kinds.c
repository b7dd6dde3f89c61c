/* pool_kinds.c - ResourcePool and ResourcePoolClaim hooks (see pool_kinds.h). */
#include "api/pool_kinds.h"

#include "api/core_validation.h"
#include "api/rq_validation.h"
#include "api/status.h"
#include "api/validation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- defaulting ---- */

static const char *const config_flags[] = {"defaultsZero", "orderedQueue", "deleteBoundResources",
                                           NULL};

/* The CRD's `config: {}` default and each flag's `false`. */
static void default_config(json_t *spec)
{
    json_t *config = json_object_get(spec, "config");
    if (!config) {
        config = json_object();
        if (json_object_set_new(spec, "config", config) != 0) return;
    }
    if (!json_is_object(config)) return;
    for (const char *const *f = config_flags; *f; f++)
        if (!json_object_get(config, *f)) json_object_set_new(config, *f, json_false());
}

/* defaultsZero: every resource the pool holds is 0 by default in each
 * namespace, unless spec.defaults already names it. */
static void default_zero(json_t *spec)
{
    json_t *hard = json_object_get(json_object_get(spec, "quota"), "hard");
    if (!json_is_object(hard) || json_object_size(hard) == 0) return;
    json_t *defaults = json_object_get(spec, "defaults");
    if (!defaults) {
        defaults = json_object();
        if (json_object_set_new(spec, "defaults", defaults) != 0) return;
    }
    if (!json_is_object(defaults)) return;
    const char *key;
    json_t *v;
    json_object_foreach(hard, key, v)
    {
        if (!json_object_get(defaults, key)) json_object_set_new(defaults, key, json_string("0"));
    }
}

void resourcepool_defaults(json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec)) return;
    default_config(spec);
    if (json_is_true(json_object_get(json_object_get(spec, "config"), "defaultsZero")))
        default_zero(spec);
}

bool pool_claim_strip_release(json_t *obj)
{
    json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
    if (!json_is_object(ann) || !json_object_get(ann, POOL_RELEASE_ANNOTATION)) return false;
    json_object_del(ann, POOL_RELEASE_ANNOTATION);
    if (json_object_size(ann) == 0)
        json_object_del(json_object_get(obj, "metadata"), "annotations");
    return true;
}

bool pool_claim_release_requested(const json_t *obj)
{
    const json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
    const char *v = json_string_value(json_object_get(ann, POOL_RELEASE_ANNOTATION));
    return v && strcasecmp(v, "true") == 0;
}

/* The condition of `type` in status.conditions, or NULL. */
static const json_t *condition(const json_t *status, const char *type)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(status, "conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && !strcmp(t, type)) return c;
    }
    return NULL;
}

static const char *cstr(const json_t *c, const char *k)
{
    const char *s = json_string_value(json_object_get(c, k));
    return s ? s : "";
}

bool pool_claim_summary(const json_t *status, pool_claim_state *out)
{
    const json_t *ready = condition(status, "Ready"), *ex = condition(status, "Exhausted");
    if (!ready) return false;
    if (strcmp(cstr(ready, "status"), "True")) {
        *out = (pool_claim_state){"Assigned", "False",
                                  *cstr(ready, "reason") ? cstr(ready, "reason") : "Failed",
                                  cstr(ready, "message")};
    } else if (ex && !strcmp(cstr(ex, "status"), "True")) {
        *out = (pool_claim_state){"Bound", "False", cstr(ex, "reason"), cstr(ex, "message")};
    } else {
        *out = (pool_claim_state){"Bound", "True", "Succeeded", "Claimed resources"};
    }
    return true;
}

static bool is_create(const json_t *obj)
{
    return !json_object_get(json_object_get(obj, "metadata"), "resourceVersion");
}

void resourcepoolclaim_defaults(json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    if (!spec) {
        spec = json_object();
        if (json_object_set_new(obj, "spec", spec) != 0) return;
    }
    if (json_is_object(spec) && !json_object_get(spec, "pool"))
        json_object_set_new(spec, "pool", json_string(""));
    if (is_create(obj)) pool_claim_strip_release(obj);
}

/* ---- validation ---- */

/* spec.quota is a ResourceQuotaSpec: ResourceQuota's own validation of a
 * quota whose spec it is, its causes moved from "spec..." to "spec.quota...". */
static void validate_quota(const json_t *quota, json_t *causes)
{
    json_t *rq = json_object(), *mine = json_array();
    json_object_set(rq, "spec", (json_t *)quota);
    resourcequota_validate(rq, NULL, mine);
    size_t i;
    json_t *c;
    json_array_foreach(mine, i, c)
    {
        const char *field = json_string_value(json_object_get(c, "field"));
        if (field && strncmp(field, "spec", 4) == 0)
            json_object_set_new(c, "field", json_sprintf("spec.quota%s", field + 4));
        json_array_append(causes, c);
    }
    json_decref(mine);
    json_decref(rq);
}

static void validate_selectors(const json_t *sels, json_t *causes)
{
    if (cv_type_check(sels, CV_ARRAY, "spec.selectors", causes)) return;
    size_t i;
    const json_t *sel;
    char path[64];
    json_array_foreach(sels, i, sel)
    {
        snprintf(path, sizeof path, "spec.selectors[%zu]", i);
        if (!cv_type_check(sel, CV_OBJECT, path, causes)) val_label_selector(sel, path, causes);
    }
}

/* A required member: "<field>: Required value" when absent or null. */
static bool require(const json_t *v, const char *field, json_t *causes)
{
    if (v && !json_is_null(v)) return true;
    ferr_add(causes, FERR_REQUIRED, field, NULL, NULL);
    return false;
}

void resourcepool_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    const json_t *spec = json_object_get(obj, "spec");
    if (!require(spec, "spec", causes) || cv_type_check(spec, CV_OBJECT, "spec", causes)) return;
    validate_selectors(json_object_get(spec, "selectors"), causes);
    const json_t *quota = json_object_get(spec, "quota");
    if (require(quota, "spec.quota", causes) &&
        !cv_type_check(quota, CV_OBJECT, "spec.quota", causes))
        validate_quota(quota, causes);
    const json_t *defaults = json_object_get(spec, "defaults");
    if (defaults) rq_validate_resource_list(defaults, "spec.defaults", causes);
    const json_t *config = json_object_get(spec, "config");
    if (cv_type_check(config, CV_OBJECT, "spec.config", causes)) return;
    char path[64];
    for (const char *const *f = config_flags; *f; f++) {
        snprintf(path, sizeof path, "spec.config.%s", *f);
        cv_type_check(json_object_get(config, *f), CV_BOOLEAN, path, causes);
    }
}

void resourcepoolclaim_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    const json_t *spec = json_object_get(obj, "spec");
    if (cv_type_check(spec, CV_OBJECT, "spec", causes)) return;
    const json_t *pool = json_object_get(spec, "pool"), *claim = json_object_get(spec, "claim");
    if (require(pool, "spec.pool", causes)) cv_type_check(pool, CV_STRING, "spec.pool", causes);
    if (require(claim, "spec.claim", causes))
        rq_validate_resource_list(claim, "spec.claim", causes);
}
