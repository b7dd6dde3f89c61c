/* teststore.h - a memory-backed store with the registry's indexer, for unit
 * tests of the layers above the store (include after cmocka.h). */
#ifndef ALLOT_TESTS_TESTSTORE_H
#define ALLOT_TESTS_TESTSTORE_H

#include "registry/registry.h"
#include "store/store.h"

static inline store *open_store(void)
{
    store_backend be;
    char err[256];
    store_memory_backend(&be);
    store *st = store_open(&be, reg_indexer, NULL, err, sizeof err);
    if (!st) fail_msg("store_open: %s", err);
    return st;
}

#endif
