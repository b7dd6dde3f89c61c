/* teststore.h - a memory-backed store with the registry's indexer, for unit
 * tests of the layers above the store (include after cmocka.h). */
#ifndef ALLOT_TESTS_TESTSTORE_H
#define ALLOT_TESTS_TESTSTORE_H

#include "api/kinds.h"
#include "registry/registry.h"
#include "store/store.h"
#include "testutil.h"

static inline store *open_store(void)
{
    store_backend be;
    char err[256];
    store_memory_backend(&be);
    store *st = store_open(&be, reg_indexer, NULL, err, sizeof err);
    if (!st) fail_msg("store_open: %s", err);
    return st;
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

#endif
