/* test_quota_moves.c - writes that move quota usage without a create: they
 * keep the books (the ledger equals a recount after every write) and, when
 * they raise usage, are checked against hard like any charge.
 *
 *  - pods/status and persistentvolumeclaims/status: a pod's phase back from
 *    Succeeded, its containerStatuses' allocated resources, a claim's
 *    status.allocatedResources (upstream charges status writes unchecked);
 *  - pods/resize to a quantity whose difference a qty cannot hold (was a 500
 *    "out of memory");
 *  - a namespace's quota.allot.dev/mode flip: its quotas are recounted under
 *    the new mode in the namespace write's own transaction.
 * Requests go through the registry on a memory store with the admission
 * plugins registered and the DeferredResourceQuota gate on, as allotd runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/features.h"
#include "api/patch.h"
#include "registry/admission.h"
#include "registry/quota_admission.h"
#include "registry/quota_deferred.h"
#include "registry/quota_ledger.h"
#include "teststore.h"

#define ADMISSION_MODE "{'metadata':{'labels':{'" DEFERRED_MODE_LABEL "':'admission'}}}"
#define DEFERRED_MODE "{'metadata':{'labels':{'" DEFERRED_MODE_LABEL "':null}}}"

/* A store with namespace `ns`, in admission mode unless `deferred`. */
static store *open_ns(const char *ns, bool deferred)
{
    store *st = open_store();
    char obj[256];
    snprintf(obj, sizeof obj, "{'metadata':{'name':'%s'%s}}", ns,
             deferred ? "" : ",'labels':{'" DEFERRED_MODE_LABEL "':'admission'}");
    create_core(st, "namespaces", "", obj);
    return st;
}

/* A merge patch of resource/ns/name[/sub]; the HTTP code, the message in msg. */
static int patch(store *st, const char *resource, const char *ns, const char *name, const char *sub,
                 const char *p, bool dry_run, char *msg, size_t n)
{
    return reg_merge(st, api_kind_find("", "v1", resource), ns, name, sub, p, dry_run, msg, n);
}

#define PATCH_OK(st, res, ns, name, sub, p)                                                        \
    do {                                                                                           \
        char m_[1024];                                                                             \
        if (patch(st, res, ns, name, sub, p, false, m_, sizeof m_) != 200)                         \
            fail_msg("%s %s/%s: %s", res, name, sub, m_);                                          \
    } while (0)

/* The ledger's usage of quota ns/q at `key`, canonical ("" when absent), and
 * the revision it is exact at. */
static void ledger(store *st, const char *ns, const char *q, const char *key, char *buf,
                   int64_t *rv)
{
    char k[256];
    snprintf(k, sizeof k, "resourcequotas/%s/%s", ns, q);
    store_obj *o = store_get(st, k);
    assert_non_null(o);
    int64_t at = 0;
    rlist *u = quota_ledger_read(o, &at);
    assert_non_null(u);
    const qty *v = rl_get(u, key);
    buf[0] = '\0';
    if (v) qty_format_str(v, buf, QTY_STR_MAX);
    if (rv) *rv = at;
    rl_free(u);
    store_obj_unref(o);
}

static void expect_used(store *st, const char *ns, const char *q, const char *key, const char *want)
{
    char got[QTY_STR_MAX];
    ledger(st, ns, q, key, got, NULL);
    if (strcmp(got, want) != 0) fail_msg("%s/%s used[%s] = %s, want %s", ns, q, key, got, want);
}

/* The books: quota ns/q's ledger usage equals a recount of the store, and
 * its stored status.used does once synced. */
static void expect_books(store *st, const char *ns, const char *q)
{
    char k[256];
    snprintf(k, sizeof k, "resourcequotas/%s/%s", ns, q);
    assert_int_equal(quota_ledger_sync(st), 0);
    store_txn *t = store_begin(st);
    store_obj *o = store_txn_get(t, k);
    assert_non_null(o);
    json_t *quota = store_obj_parse(o), *count = NULL;
    assert_int_equal(quota_recount_in_txn(t, quota, &count), 0);
    rlist *held = quota_ledger_read_txn(t, o), *want = rl_new();
    assert_int_equal(rl_from_json(count, want, NULL), 0);
    json_t *stored = json_object_get(json_object_get(quota, "status"), "used");
    if (!rl_equal(held, want) || !json_equal(stored, count)) {
        char *a = json_dumps(count, JSON_SORT_KEYS | JSON_COMPACT);
        char *b = json_dumps(stored, JSON_SORT_KEYS | JSON_COMPACT);
        fail_msg("%s: recount %s, stored %s", k, a, b);
    }
    rl_free(held);
    rl_free(want);
    json_decref(count);
    json_decref(quota);
    store_obj_unref(o);
    store_abort(t);
}

#define POD(name, res)                                                                             \
    "{'metadata':{'name':'" name                                                                   \
    "'},'spec':{'containers':[{'name':'c','image':'x','resources':" res "}]}}"
#define SMALL "{'limits':{'cpu':'100m','memory':'64Mi'}}"

/* A terminal pod made Running again through pods/status comes back into the
 * quota: checked, as a create would be. */
static void test_phase_back_is_checked(void **state)
{
    (void)state;
    store *st = open_ns("a", false);
    create_core(st, "resourcequotas", "a",
                "{'metadata':{'name':'q'},'spec':{'hard':{'pods':'2','requests.cpu':'2'}}}");
    create_core(st, "pods", "a", POD("p0", SMALL));
    create_core(st, "pods", "a", POD("p1", SMALL));
    PATCH_OK(st, "pods", "a", "p0", "status", "{'status':{'phase':'Succeeded'}}");
    expect_used(st, "a", "q", "pods", "1");
    create_core(st, "pods", "a", POD("p2", SMALL));
    char msg[sizeof((api_err *)0)->message];
    const char *want = "pods \"p0\" is forbidden: exceeded quota: q, requested: pods=1, used: "
                       "pods=2, limited: pods=2";
    for (int dry = 1; dry >= 0; dry--) { /* a dry run gets the same answer */
        assert_int_equal(patch(st, "pods", "a", "p0", "status", "{'status':{'phase':'Running'}}",
                               dry, msg, sizeof msg),
                         403);
        assert_string_equal(msg, want);
    }
    expect_used(st, "a", "q", "pods", "2");
    expect_used(st, "a", "q", "requests.cpu", "200m");
    expect_books(st, "a", "q");
    /* With room again, the same write goes through and charges. */
    PATCH_OK(st, "pods", "a", "p2", "status", "{'status':{'phase':'Failed'}}");
    PATCH_OK(st, "pods", "a", "p0", "status", "{'status':{'phase':'Running'}}");
    expect_used(st, "a", "q", "pods", "2");
    expect_books(st, "a", "q");
    store_close(st);
}

/* containerStatuses[].allocatedResources and .resources count when above the
 * spec (upstream's PodRequests with status resources). */
static void test_allocated_resources_are_checked(void **state)
{
    (void)state;
    store *st = open_ns("a", false);
    create_core(st, "resourcequotas", "a",
                "{'metadata':{'name':'q'},'spec':{'hard':{'requests.cpu':'2'}}}");
    create_core(st, "pods", "a", POD("p0", SMALL));
    char msg[sizeof((api_err *)0)->message];
    assert_int_equal(patch(st, "pods", "a", "p0", "status",
                           "{'status':{'containerStatuses':[{'name':'c','allocatedResources':{'cpu'"
                           ":'100'},'resources':{'requests':{'cpu':'100'}}}]}}",
                           false, msg, sizeof msg),
                     403);
    assert_string_equal(msg, "pods \"p0\" is forbidden: exceeded quota: q, requested: "
                             "requests.cpu=99900m, used: requests.cpu=100m, limited: "
                             "requests.cpu=2");
    expect_used(st, "a", "q", "requests.cpu", "100m");
    /* Up to hard is allowed, and charged. */
    PATCH_OK(st, "pods", "a", "p0", "status",
             "{'status':{'containerStatuses':[{'name':'c','allocatedResources':{'cpu':'2'},"
             "'resources':{'requests':{'cpu':'2'}}}]}}");
    expect_used(st, "a", "q", "requests.cpu", "2");
    expect_books(st, "a", "q");
    /* A decrease goes through even on a quota above its hard. */
    PATCH_OK(st, "resourcequotas", "a", "q", "", "{'spec':{'hard':{'requests.cpu':'1'}}}");
    PATCH_OK(st, "pods", "a", "p0", "status",
             "{'status':{'containerStatuses':[{'name':'c','allocatedResources':{'cpu':'1500m'},"
             "'resources':{'requests':{'cpu':'1500m'}}}]}}");
    expect_used(st, "a", "q", "requests.cpu", "1500m");
    expect_books(st, "a", "q");
    store_close(st);
}

/* persistentvolumeclaims/status: upstream charges allocatedResources without
 * comparing with hard; allot checks it. */
static void test_claim_allocation_is_checked(void **state)
{
    (void)state;
    store *st = open_ns("a", false);
    create_core(st, "resourcequotas", "a",
                "{'metadata':{'name':'q'},'spec':{'hard':{'requests.storage':'2Gi'}}}");
    create_core(st, "persistentvolumeclaims", "a",
                "{'metadata':{'name':'v0'},'spec':{'accessModes':['ReadWriteOnce'],'resources':{"
                "'requests':{'storage':'1Gi'}}}}");
    char msg[sizeof((api_err *)0)->message];
    for (int dry = 1; dry >= 0; dry--) {
        assert_int_equal(patch(st, "persistentvolumeclaims", "a", "v0", "status",
                               "{'status':{'allocatedResources':{'storage':'100Gi'}}}", dry, msg,
                               sizeof msg),
                         403);
        assert_string_equal(msg, "persistentvolumeclaims \"v0\" is forbidden: exceeded quota: q, "
                                 "requested: requests.storage=99Gi, used: requests.storage=1Gi, "
                                 "limited: requests.storage=2Gi");
    }
    expect_used(st, "a", "q", "requests.storage", "1Gi");
    PATCH_OK(st, "persistentvolumeclaims", "a", "v0", "status",
             "{'status':{'allocatedResources':{'storage':'2Gi'}}}");
    expect_used(st, "a", "q", "requests.storage", "2Gi");
    expect_books(st, "a", "q");
    store_close(st);
}

/* pods/resize to limits.cpu 1e400: 1e400 - 500m needs more digits than a qty
 * holds. A quota that does not charge limits.cpu lets it through, as it lets
 * the same pod be created; one that does refuses it with a 403. */
static void test_resize_beyond_precision(void **state)
{
    (void)state;
    store *st = open_ns("a", false);
    create_core(st, "resourcequotas", "a", "{'metadata':{'name':'q'},'spec':{'hard':{'cpu':'1'}}}");
    const char *res = "{'requests':{'cpu':'250m','memory':'512Mi'},'limits':{'cpu':'500m',"
                      "'memory':'512Mi'}}";
    char pod[512], msg[1024];
    snprintf(pod, sizeof pod,
             "{'metadata':{'name':'p0'},'spec':{'containers':[{'name':'c','image':'x',"
             "'resources':%s}]}}",
             res);
    create_core(st, "pods", "a", pod);
    const char *huge = "{'spec':{'containers':[{'name':'c','resources':{'requests':{'cpu':'250m',"
                       "'memory':'512Mi'},'limits':{'cpu':'1e400','memory':'512Mi'}}}]}}";
    assert_int_equal(patch(st, "pods", "a", "p0", "resize", huge, false, msg, sizeof msg), 200);
    expect_used(st, "a", "q", "cpu", "250m");
    expect_books(st, "a", "q");
    /* Back down (a decrease), then the same resize under a limits.cpu quota. */
    snprintf(pod, sizeof pod, "{'spec':{'containers':[{'name':'c','resources':%s}]}}", res);
    PATCH_OK(st, "pods", "a", "p0", "resize", pod);
    create_core(st, "resourcequotas", "a",
                "{'metadata':{'name':'l'},'spec':{'hard':{'limits.cpu':'2'}}}");
    expect_used(st, "a", "l", "limits.cpu", "500m");
    for (int dry = 1; dry >= 0; dry--) {
        assert_int_equal(patch(st, "pods", "a", "p0", "resize", huge, dry, msg, sizeof msg), 403);
        assert_string_equal(msg, "pods \"p0\" is forbidden: quota l: the usage of limits.cpu would "
                                 "need more significant digits than are supported");
    }
    expect_used(st, "a", "l", "limits.cpu", "500m");
    expect_books(st, "a", "l");
    expect_books(st, "a", "q");
    store_close(st);
}

/* A namespace's quota mode flip recounts its quotas in the same transaction:
 * an unbound pod's cpu/memory counts in admission mode, not in deferred. */
static void test_mode_flip_recounts(void **state)
{
    (void)state;
    store *st = open_ns("d", true);
    create_core(st, "resourcequotas", "d",
                "{'metadata':{'name':'q'},'spec':{'hard':{'pods':'5','requests.cpu':'2',"
                "'limits.memory':'2Gi'}}}");
    create_core(st, "pods", "d", POD("p0", "{'limits':{'cpu':'2','memory':'1Gi'}}"));
    expect_used(st, "d", "q", "pods", "1");
    expect_used(st, "d", "q", "requests.cpu", "0");
    PATCH_OK(st, "namespaces", "", "d", "", ADMISSION_MODE);
    char v[QTY_STR_MAX];
    int64_t rv = 0;
    ledger(st, "d", "q", "requests.cpu", v, &rv);
    assert_string_equal(v, "2");
    store_obj *ns = store_get(st, "namespaces//d");
    assert_non_null(ns);
    assert_int_equal(rv, ns->rv); /* exact as of the namespace write itself */
    store_obj_unref(ns);
    expect_used(st, "d", "q", "limits.memory", "1Gi");
    expect_books(st, "d", "q");
    /* And back: the unbound pod's compute leaves the books. */
    PATCH_OK(st, "namespaces", "", "d", "", DEFERRED_MODE);
    expect_used(st, "d", "q", "requests.cpu", "0");
    expect_used(st, "d", "q", "limits.memory", "0");
    expect_used(st, "d", "q", "pods", "1");
    expect_books(st, "d", "q");
    store_close(st);
}

/* The flip to admission mode that would raise a quota above its hard is
 * refused, as any write that raises usage: in admission mode the unbound pods
 * would be bound and run. Nothing changes: not the namespace, not the books. */
static void test_mode_flip_over_hard_is_refused(void **state)
{
    (void)state;
    store *st = open_ns("d", true);
    create_core(st, "resourcequotas", "d",
                "{'metadata':{'name':'q'},'spec':{'hard':{'requests.cpu':'2'}}}");
    create_core(st, "pods", "d", POD("p0", "{'limits':{'cpu':'2','memory':'1Gi'}}"));
    create_core(st, "pods", "d", POD("p1", "{'limits':{'cpu':'1','memory':'1Gi'}}"));
    char msg[sizeof((api_err *)0)->message];
    for (int dry = 1; dry >= 0; dry--) {
        assert_int_equal(patch(st, "namespaces", "", "d", "", ADMISSION_MODE, dry, msg, sizeof msg),
                         403);
        assert_string_equal(
            msg, "namespaces \"d\" is forbidden: cannot set quota.allot.dev/mode=admission: the "
                 "pods waiting on ResourceQuota \"q\" under deferred quota would be charged to "
                 "it at once and exceed it (exceeded quota: q, requested: requests.cpu=3, used: "
                 "requests.cpu=0, limited: requests.cpu=2); delete those pods or wait until they "
                 "are scheduled (kubectl get pods -n d --field-selector "
                 "status.pendingOnQuota=q), or raise the quota's hard, then set the label again");
    }
    assert_true(quota_ns_deferred(NULL, st, "d"));
    expect_used(st, "d", "q", "requests.cpu", "0");
    expect_books(st, "d", "q");
    /* Once the pods fit, the flip goes through; a dry run changes nothing. */
    const api_kind *pods = api_kind_find("", "v1", "pods");
    reg_delete_opts opts = {.grace_seconds = 0};
    json_t *out = NULL;
    bool gone = false;
    api_err e;
    api_err_init(&e);
    assert_int_equal(reg_delete(st, pods, "d", "p1", &opts, &out, &gone, &e), 0);
    json_decref(out);
    assert_int_equal(patch(st, "namespaces", "", "d", "", ADMISSION_MODE, true, msg, sizeof msg),
                     200);
    expect_used(st, "d", "q", "requests.cpu", "0");
    PATCH_OK(st, "namespaces", "", "d", "", ADMISSION_MODE);
    expect_used(st, "d", "q", "requests.cpu", "2");
    expect_books(st, "d", "q");
    /* A namespace write that leaves the mode alone moves nothing. */
    PATCH_OK(st, "namespaces", "", "d", "", "{'metadata':{'labels':{'team':'x'}}}");
    expect_used(st, "d", "q", "requests.cpu", "2");
    expect_books(st, "d", "q");
    store_close(st);
}

int main(void)
{
    char err[256];
    if (features_parse("DeferredResourceQuota=true", err, sizeof err) != 0) return 1;
    if (admission_register_defaults() != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phase_back_is_checked),
        cmocka_unit_test(test_allocated_resources_are_checked),
        cmocka_unit_test(test_claim_allocation_is_checked),
        cmocka_unit_test(test_resize_beyond_precision),
        cmocka_unit_test(test_mode_flip_recounts),
        cmocka_unit_test(test_mode_flip_over_hard_is_refused),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    quota_admission_cleanup();
    return rc;
}
