/* cq_recount.c - time a custom quota's full recount (Capsule's rebuild) of
 * N pods in one namespace.
 *
 *   cq_recount [--pods 100000]
 *
 * In-process on the memory store (no disk, no HTTP): pods are created
 * through the registry, then a CustomQuota counting them (count, and a
 * JSONPath sum of their cpu requests) is created and its books loaded: the
 * recount, timed. It is timed twice: the first parses every pod, the second
 * (the books dropped and loaded again, as after a quota change) finds them
 * parsed.
 */
#include "api/kinds.h"
#include "registry/admission.h"
#include "registry/cq_books.h"
#include "registry/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Resident memory now, in MiB (/proc/self/statm), or -1. */
static double rss_mib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = -1, res = -1;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = -1;
        fclose(f);
    }
    return res < 0 ? -1 : (double)res * 4096 / (1024 * 1024);
}

static void must_create(store *st, const api_kind *k, const char *ns, json_t *obj)
{
    api_err e;
    api_err_init(&e);
    json_t *out = NULL;
    if (reg_create(st, k, ns, obj, false, &out, &e) != 0) {
        fprintf(stderr, "create %s: %s\n", k->resource, e.message);
        exit(1);
    }
    json_decref(out);
    json_decref(obj);
}

/* Load the quota's books (a recount when they are not loaded) and return
 * the time it took, with its used and claim count. */
static double load(store *st, const char *key, bool drop, char *used, size_t n, size_t *claims)
{
    store_txn *t = store_begin(st);
    if (drop) {
        ledger_forget(t, key); /* ... in a transaction that commits */
        store_obj *o = store_txn_get(t, key);
        json_t *q = store_obj_parse(o);
        store_txn_put(t, key, q, NULL);
        json_decref(q);
        store_obj_unref(o);
        store_commit(t);
        t = store_begin(st);
    }
    store_obj *o = store_txn_get(t, key);
    api_err e;
    api_err_init(&e);
    double t0 = now();
    ledger_entry *en = cq_book_of(t, o, &e);
    double t1 = now();
    if (!en) {
        fprintf(stderr, "recount: %s\n", e.message);
        exit(1);
    }
    const cq_book *b = cq_book_value(en);
    qty_format_str(&b->used, used, n);
    *claims = b->nclaims;
    store_obj_unref(o);
    store_abort(t);
    return t1 - t0;
}

int main(int argc, char **argv)
{
    long pods = argc > 2 && !strcmp(argv[1], "--pods") ? atol(argv[2]) : 100000;
    store_backend be;
    char err[256];
    store_memory_backend(&be);
    store_config cfg = {1024};
    if (admission_register_defaults() != 0) return 1;
    store *st = store_open(&be, reg_indexer, &cfg, err, sizeof err);
    if (!st) return 1;
    const api_kind *pk = api_kind_find("", "v1", "pods"),
                   *cq = api_kind_find(CQ_GROUP, CQ_VERSION, "customquotas");
    must_create(st, api_kind_find("", "v1", "namespaces"), "",
                json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace", "metadata",
                          "name", "big"));
    for (long i = 0; i < pods; i++) {
        char name[32];
        snprintf(name, sizeof name, "p-%ld", i);
        must_create(st, pk, "big",
                    json_pack("{s:s,s:s,s:{s:s},s:{s:[{s:s,s:s,s:{s:{s:s,s:s}}}]}}", "apiVersion",
                              "v1", "kind", "Pod", "metadata", "name", name, "spec", "containers",
                              "name", "c", "image", "busybox", "resources", "requests", "cpu",
                              "10m", "memory", "16Mi"));
    }
    must_create(st, cq, "big",
                json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:[{s:s,s:s,s:s},{s:s,s:s,s:s}]}}",
                          "apiVersion", CQ_GROUP "/" CQ_VERSION, "kind", "CustomQuota", "metadata",
                          "name", "q", "spec", "limit", "1000000", "sources", "apiVersion", "v1",
                          "kind", "Pod", "op", "count", "apiVersion", "v1", "kind", "Pod", "path",
                          ".spec.containers[*].resources.requests.cpu"));
    char used[64];
    size_t claims = 0;
    double rss0 = rss_mib();
    const char *key = "customquotas.capsule.clastix.io/big/q";
    double first = load(st, key, false, used, sizeof used, &claims);
    double again = load(st, key, true, used, sizeof used, &claims);
    printf("custom quota recount: %ld pods (count + JSONPath cpu): first %.1f ms, again %.1f ms; "
           "used %s, %zu claims; resident memory %+.0f MiB across both\n",
           pods, first * 1e3, again * 1e3, used, claims, rss_mib() - rss0);
    store_close(st);
    return claims == (size_t)pods ? 0 : 1;
}
