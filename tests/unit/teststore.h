/* teststore.h - a memory-backed store with the registry's indexer, for unit
 * tests of the layers above the store (include after cmocka.h). */
#ifndef ALLOT_TESTS_TESTSTORE_H
#define ALLOT_TESTS_TESTSTORE_H

#include "api/kinds.h"
#include "api/patch.h"
#include "registry/registry.h"
#include "store/store.h"
#include "testutil.h"

#include <stdio.h>

static inline store *open_store(void)
{
    store_backend be;
    char err[256];
    store_memory_backend(&be);
    store *st = store_open(&be, reg_indexer, NULL, err, sizeof err);
    if (!st) fail_msg("store_open: %s", err);
    return st;
}

/* The served kind group/version/resource; fails the test if there is none. */
static inline const api_kind *test_kind(const char *group, const char *version,
                                        const char *resource)
{
    const api_kind *k = api_kind_find(group, version, resource);
    if (!k) fail_msg("no kind %s/%s %s", group, version, resource);
    return k;
}

/* Create a core-group object through the registry (admission included);
 * `obj` in testutil.h's J() notation. Fails the test if refused. */
static inline void create_core(store *st, const char *resource, const char *ns, const char *obj)
{
    const api_kind *k = api_kind_find("", "v1", resource);
    json_t *o = J(obj), *out = NULL;
    api_err e;
    api_err_init(&e);
    if (reg_create(st, k, ns, o, false, &out, &e) != 0)
        fail_msg("create %s %s: %s", resource, obj, e.message);
    json_decref(out);
    json_decref(o);
    api_err_clear(&e);
}

/* reg_update's mutation for a merge patch given in J() notation (ctx). */
static inline json_t *merge_mutation(const json_t *cur, void *ctx, api_err *e)
{
    json_t *p = J(ctx), *nw = patch_merge(cur, p);
    json_decref(p);
    if (!nw) api_err_set(e, API_INTERNAL, "out of memory");
    return nw;
}

/* A merge patch of kind k's ns/name[/sub] through the registry: the HTTP
 * code, and the error message in msg ("" on success). */
static inline int reg_merge(store *st, const api_kind *k, const char *ns, const char *name,
                            const char *sub, const char *patch, bool dry_run, char *msg, size_t n)
{
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    int rc = reg_update(st, k, ns, name, sub, merge_mutation, (void *)patch, dry_run, &out, &e);
    int code = rc == 0 ? 200 : api_errcode_http(e.code);
    const char *m = rc == 0 ? "" : e.message;
    size_t l = n ? strnlen(m, n - 1) : 0; /* a long message is cut, as snprintf would */
    if (n) {
        memcpy(msg, m, l);
        msg[l] = '\0';
    }
    json_decref(out);
    api_err_clear(&e);
    return code;
}

#endif
