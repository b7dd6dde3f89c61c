/* podcontrol.c - making and removing pods for controllers (see podcontrol.h).
 *
 * The worker pool: a batch is a range of calls; podctl keeps a list of
 * batches with calls not yet handed out. Workers (and the thread that posted
 * the batch, which works on it too instead of only waiting) take the next
 * call of the first batch under the pool lock and run it outside; the last
 * call to finish wakes the poster. Several controllers may post batches at
 * once.
 */
#include "controllers/podcontrol.h"
#include "core/jdump.h"

#include "api/kinds.h"
#include "core/evfilter.h"
#include "core/expect.h"
#include "core/rollout.h"
#include "core/strmap.h"
#include "registry/events.h"
#include "registry/registry.h"
#include "util/clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_WORKERS 64
/* upstream's DNS-1123 subdomain limit, which a generateName prefix must fit */
#define SUBDOMAIN_MAX 253

typedef struct batch {
    podctl_fn fn;
    void *ctx;
    size_t base, n;    /* calls base .. base + n - 1 */
    size_t next;       /* calls handed out (under podctl.mu) */
    size_t done, ok;   /* calls finished, and succeeded (under podctl.mu) */
    bool have_err;     /* err holds the first error (under podctl.mu) */
    api_err err;       /* owned: its details are cleared by the poster */
    pthread_cond_t cv; /* done == n */
    struct batch *link;
} batch;

typedef struct backoff {
    char *key; /* the key of podctl.backoff */
    int failures;
} backoff;

struct podctl {
    store *st;
    char *component;
    event_recorder *rec;
    const api_kind *pods;

    pthread_mutex_t mu; /* the pool: work, stop */
    pthread_cond_t work_cv;
    batch *work; /* batches with calls not handed out, oldest first */
    bool stop;
    pthread_t threads[MAX_WORKERS];
    int nthreads;

    pthread_mutex_t fmu; /* the Event spam filter */
    evfilter *filter;
    pthread_mutex_t emu; /* expectations and backoff */
    expect_set *exp;
    strmap *backoff; /* owner key -> backoff */
};

static const char *meta_str(const json_t *obj, const char *f)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), f));
}

/* ---- the pool ---- */

/* Take the next call of the first batch with calls left; NULL when none.
 * Under mu. */
static batch *take(podctl *pc, size_t *i)
{
    batch *b = pc->work;
    if (!b) return NULL;
    *i = b->base + b->next++;
    if (b->next == b->n) pc->work = b->link; /* all handed out */
    return b;
}

/* Run call i of b (mu not held), then account for it (takes mu). */
static void run_one(podctl *pc, batch *b, size_t i)
{
    api_err e;
    api_err_init(&e);
    int rc = b->fn(b->ctx, i, &e);
    pthread_mutex_lock(&pc->mu);
    if (rc == 0) {
        b->ok++;
        api_err_clear(&e);
    } else if (!b->have_err) {
        b->err = e; /* ownership of e.details moves to the batch */
        b->have_err = true;
    } else {
        api_err_clear(&e);
    }
    if (++b->done == b->n) pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&pc->mu);
}

static void *worker(void *arg)
{
    podctl *pc = arg;
    pthread_setname_np(pthread_self(), "podctl");
    pthread_mutex_lock(&pc->mu);
    for (;;) {
        size_t i;
        batch *b;
        while (!pc->stop && !(b = take(pc, &i)))
            pthread_cond_wait(&pc->work_cv, &pc->mu);
        if (pc->stop) break;
        pthread_mutex_unlock(&pc->mu);
        run_one(pc, b, i);
        pthread_mutex_lock(&pc->mu);
    }
    pthread_mutex_unlock(&pc->mu);
    return NULL;
}

/* Calls base .. base + n - 1 in parallel; returns the successes, the first
 * error moved to *first_err (when given and none is there yet). */
static size_t run_batch(podctl *pc, podctl_fn fn, void *ctx, size_t base, size_t n,
                        api_err *first_err, bool *failed)
{
    batch b = {.fn = fn, .ctx = ctx, .base = base, .n = n};
    api_err_init(&b.err);
    pthread_cond_init(&b.cv, NULL);
    pthread_mutex_lock(&pc->mu);
    batch **tail = &pc->work;
    while (*tail)
        tail = &(*tail)->link;
    *tail = &b;
    if (n > 1) pthread_cond_broadcast(&pc->work_cv);
    /* Work on it too: a batch of one never waits for a worker. */
    for (;;) {
        size_t i;
        if (b.next == b.n) break;
        batch *mine = &b;
        i = mine->base + mine->next++;
        if (mine->next == mine->n) { /* unlink it: all handed out */
            for (batch **p = &pc->work; *p; p = &(*p)->link)
                if (*p == mine) {
                    *p = mine->link;
                    break;
                }
        }
        pthread_mutex_unlock(&pc->mu);
        run_one(pc, mine, i);
        pthread_mutex_lock(&pc->mu);
    }
    while (b.done < b.n)
        pthread_cond_wait(&b.cv, &pc->mu);
    pthread_mutex_unlock(&pc->mu);
    pthread_cond_destroy(&b.cv);
    *failed = b.have_err;
    if (b.have_err) {
        if (first_err && first_err->code == API_OK) {
            api_err_clear(first_err);
            *first_err = b.err;
        } else {
            api_err_clear(&b.err);
        }
    }
    return b.ok;
}

size_t podctl_slow_start(podctl *pc, size_t count, size_t initial, podctl_fn fn, void *ctx,
                         api_err *first_err)
{
    size_t done = 0, ok = 0, size = 0;
    while ((size = ro_batch_size(size, initial, count - done)) > 0) {
        bool failed = false;
        ok += run_batch(pc, fn, ctx, done, size, first_err, &failed);
        done += size;
        if (failed) break;
    }
    return ok;
}

size_t podctl_parallel(podctl *pc, size_t count, podctl_fn fn, void *ctx, api_err *first_err)
{
    bool failed = false;
    return count ? run_batch(pc, fn, ctx, 0, count, first_err, &failed) : 0;
}

/* ---- life ---- */

podctl *podctl_new(store *st, const char *component, int workers, char *err, size_t errlen)
{
    podctl *pc = calloc(1, sizeof *pc);
    if (!pc) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pc->st = st;
    pthread_mutex_init(&pc->mu, NULL);
    pthread_cond_init(&pc->work_cv, NULL);
    pthread_mutex_init(&pc->emu, NULL);
    pthread_mutex_init(&pc->fmu, NULL);
    pc->filter = evfilter_new(EVFILTER_BURST, EVFILTER_REFILL_MS, EVFILTER_MAX_KEYS);
    pc->pods = api_kind_find("", "v1", "pods");
    if (!(pc->component = strdup(component)) || !(pc->exp = expect_new(EXPECT_TTL_MS)) ||
        !(pc->backoff = strmap_new()) || !pc->pods || !pc->filter) {
        snprintf(err, errlen, "out of memory");
        podctl_free(pc);
        return NULL;
    }
    if (!(pc->rec = event_recorder_start(st))) {
        snprintf(err, errlen, "%s: cannot start the event recorder", component);
        podctl_free(pc);
        return NULL;
    }
    if (workers < 1) workers = 1;
    if (workers > MAX_WORKERS) workers = MAX_WORKERS;
    for (int i = 0; i < workers; i++) {
        if (pthread_create(&pc->threads[i], NULL, worker, pc) != 0) {
            snprintf(err, errlen, "%s: cannot start a worker thread", component);
            podctl_free(pc);
            return NULL;
        }
        pc->nthreads++;
    }
    return pc;
}

void podctl_free(podctl *pc)
{
    if (!pc) return;
    pthread_mutex_lock(&pc->mu);
    pc->stop = true;
    pthread_cond_broadcast(&pc->work_cv);
    pthread_mutex_unlock(&pc->mu);
    for (int i = 0; i < pc->nthreads; i++)
        pthread_join(pc->threads[i], NULL);
    event_recorder_stop(pc->rec);
    expect_free(pc->exp);
    evfilter_free(pc->filter);
    void *v;
    for (size_t it = 0; pc->backoff && strmap_next(pc->backoff, &it, NULL, &v);) {
        free(((backoff *)v)->key);
        free(v);
    }
    strmap_free(pc->backoff);
    pthread_cond_destroy(&pc->work_cv);
    pthread_mutex_destroy(&pc->mu);
    pthread_mutex_destroy(&pc->emu);
    pthread_mutex_destroy(&pc->fmu);
    free(pc->component);
    free(pc);
}

/* ---- pods ---- */

json_t *podctl_controller_ref(const json_t *owner)
{
    const char *av = json_string_value(json_object_get(owner, "apiVersion"));
    const char *kind = json_string_value(json_object_get(owner, "kind"));
    const char *name = meta_str(owner, "name"), *uid = meta_str(owner, "uid");
    if (!av || !kind || !name || !uid) return NULL;
    return json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "apiVersion", av, "kind", kind, "name", name,
                     "uid", uid, "controller", 1, "blockOwnerDeletion", 1);
}

/* A copy of member `key` of `from` into `to`, when present. 0 or -1. */
static int copy_member(json_t *to, const json_t *from, const char *key)
{
    json_t *v = json_object_get(from, key);
    if (!v) return 0;
    json_t *c = jcopy(v);
    return c && json_object_set_new(to, key, c) == 0 ? 0 : -1;
}

json_t *podctl_pod_from_template(const json_t *tmpl, const json_t *owner, const char *generate_name,
                                 api_err *e)
{
    const json_t *tmeta = json_object_get(tmpl, "metadata");
    const char *oname = meta_str(owner, "name"), *ns = meta_str(owner, "namespace");
    if (!oname || !ns) {
        api_err_set(e, API_INTERNAL, "the owner has no name or namespace");
        return NULL;
    }
    if (json_object_size(json_object_get(tmeta, "labels")) == 0) {
        api_err_set(e, API_INVALID, "unable to create pods, no labels");
        return NULL;
    }
    char prefix[SUBDOMAIN_MAX + 2];
    if (generate_name)
        snprintf(prefix, sizeof prefix, "%s", generate_name);
    else if (strlen(oname) + 1 <= SUBDOMAIN_MAX) /* getPodsPrefix */
        snprintf(prefix, sizeof prefix, "%s-", oname);
    else
        snprintf(prefix, sizeof prefix, "%s", oname);
    json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "Pod",
                            "metadata", "generateName", prefix, "namespace", ns);
    json_t *meta = json_object_get(pod, "metadata");
    json_t *ref = podctl_controller_ref(owner);
    if (!ref) {
        api_err_set(e, API_INTERNAL, "the owner has no apiVersion, kind, name or uid");
        json_decref(pod);
        return NULL;
    }
    json_t *refs = json_array();
    if (!refs) {
        json_decref(ref);
    } else if (json_array_append_new(refs, ref) != 0) { /* takes ref either way */
        json_decref(refs);
        refs = NULL;
    }
    json_t *spec = jcopy(json_object_get(tmpl, "spec"));
    if (!spec) spec = json_object();
    if (!pod || !refs || !spec) {
        json_decref(pod);
        json_decref(refs);
        json_decref(spec);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    /* json_object_set_new takes its value whatever it returns */
    if (json_object_set_new(meta, "ownerReferences", refs) != 0) {
        json_decref(spec);
        json_decref(pod);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    if (json_object_set_new(pod, "spec", spec) != 0 || copy_member(meta, tmeta, "labels") != 0 ||
        copy_member(meta, tmeta, "annotations") != 0 ||
        copy_member(meta, tmeta, "finalizers") != 0) {
        json_decref(pod);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    return pod;
}

bool podctl_namespace_terminating(const api_err *e)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(e->details, "causes"), i, c)
    {
        const char *r = json_string_value(json_object_get(c, "reason"));
        if (r && !strcmp(r, "NamespaceTerminating")) return true;
    }
    return false;
}

static void record(podctl *pc, const json_t *owner, const char *type, const char *reason,
                   const char *fmt, const char *arg)
{
    const char *uid = meta_str(owner, "uid");
    pthread_mutex_lock(&pc->fmu);
    bool allowed = evfilter_allow(pc->filter, uid ? uid : "", clock_mono_ms());
    pthread_mutex_unlock(&pc->fmu);
    if (!allowed) return;
    size_t n = strlen(fmt) + strlen(arg) + 1;
    char *msg = malloc(n);
    if (!msg) return;
    snprintf(msg, n, fmt, arg);
    event_recorder_emit(pc->rec, event_new(owner, type, reason, msg, pc->component));
    free(msg);
}

int podctl_create_pod(podctl *pc, const json_t *owner, const json_t *pod, json_t **created,
                      api_err *e)
{
    json_t *out = NULL;
    const char *ns = meta_str(pod, "namespace");
    if (reg_create(pc->st, pc->pods, ns ? ns : "", pod, false, &out, e) != 0) {
        if (!podctl_namespace_terminating(e))
            record(pc, owner, "Warning", "FailedCreate", "Error creating: %s", e->message);
        return -1;
    }
    const char *name = meta_str(out, "name");
    record(pc, owner, "Normal", "SuccessfulCreate", "Created pod: %s", name ? name : "");
    if (created)
        *created = out;
    else
        json_decref(out);
    return 0;
}

int podctl_delete_pod(podctl *pc, const json_t *owner, const char *ns, const char *name,
                      const char *uid, api_err *e)
{
    reg_delete_opts o = {.grace_seconds = -1, .pre_uid = uid};
    json_t *out = NULL;
    bool gone = false;
    int rc = reg_delete(pc->st, pc->pods, ns, name, &o, &out, &gone, e);
    json_decref(out);
    if (rc != 0) {
        /* a uid precondition that fails: the pod meant is gone */
        if (e->code == API_CONFLICT) {
            api_err_clear(e);
            api_err_not_found(e, "", "pods", name);
        }
        if (e->code != API_NOT_FOUND)
            record(pc, owner, "Warning", "FailedDelete", "Error deleting: %s", e->message);
        return -1;
    }
    record(pc, owner, "Normal", "SuccessfulDelete", "Deleted pod: %s", name);
    return 0;
}

/* ---- expectations ---- */

void podctl_expect_creations(podctl *pc, const char *owner, int n)
{
    pthread_mutex_lock(&pc->emu);
    expect_creations(pc->exp, owner, n, clock_mono_ms());
    pthread_mutex_unlock(&pc->emu);
}

void podctl_expect_deletions(podctl *pc, const char *owner, const char *const *pod_keys, size_t n)
{
    pthread_mutex_lock(&pc->emu);
    expect_deletions(pc->exp, owner, pod_keys, n, clock_mono_ms());
    pthread_mutex_unlock(&pc->emu);
}

void podctl_creation_observed(podctl *pc, const char *owner)
{
    pthread_mutex_lock(&pc->emu);
    expect_creation_observed(pc->exp, owner);
    pthread_mutex_unlock(&pc->emu);
}

void podctl_deletion_observed(podctl *pc, const char *owner, const char *pod_key)
{
    pthread_mutex_lock(&pc->emu);
    expect_deletion_observed(pc->exp, owner, pod_key);
    pthread_mutex_unlock(&pc->emu);
}

bool podctl_satisfied(podctl *pc, const char *owner)
{
    pthread_mutex_lock(&pc->emu);
    bool ok = expect_satisfied(pc->exp, owner, clock_mono_ms());
    pthread_mutex_unlock(&pc->emu);
    return ok;
}

static void backoff_drop(podctl *pc, const char *owner)
{
    backoff *b = strmap_del(pc->backoff, owner);
    if (!b) return;
    free(b->key);
    free(b);
}

void podctl_forget(podctl *pc, const char *owner)
{
    pthread_mutex_lock(&pc->emu);
    expect_forget(pc->exp, owner);
    backoff_drop(pc, owner);
    pthread_mutex_unlock(&pc->emu);
}

void podctl_forget_all_expectations(podctl *pc)
{
    pthread_mutex_lock(&pc->emu);
    expect_clear(pc->exp);
    pthread_mutex_unlock(&pc->emu);
}

/* ---- backoff ---- */

int64_t podctl_backoff_failure(podctl *pc, const char *owner)
{
    pthread_mutex_lock(&pc->emu);
    backoff *b = strmap_get(pc->backoff, owner);
    if (!b && (b = calloc(1, sizeof *b)) &&
        (!(b->key = strdup(owner)) || strmap_put(pc->backoff, b->key, b, NULL) != 0)) {
        free(b->key);
        free(b);
        b = NULL;
    }
    int failures = b ? ++b->failures : 1;
    pthread_mutex_unlock(&pc->emu);
    return ro_backoff_ms(failures, PODCTL_BACKOFF_BASE_MS, PODCTL_BACKOFF_MAX_MS);
}

void podctl_backoff_reset(podctl *pc, const char *owner)
{
    pthread_mutex_lock(&pc->emu);
    backoff_drop(pc, owner);
    pthread_mutex_unlock(&pc->emu);
}

int podctl_backoff_failures(podctl *pc, const char *owner)
{
    pthread_mutex_lock(&pc->emu);
    backoff *b = strmap_get(pc->backoff, owner);
    int n = b ? b->failures : 0;
    pthread_mutex_unlock(&pc->emu);
    return n;
}
