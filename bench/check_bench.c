/* check_bench.c - time the ResourceQuota admission decision alone (core/quota_check).
 *
 *   check_bench [--iters 200000]
 *
 * In-process and single-threaded: no store, no HTTP. One defaulted pod (two
 * containers with cpu/memory requests and limits) is checked against 0, 1 and
 * 10 quotas, with and without scopes, through quota_check_views (prepared
 * quotas, usage as rlists: what the registry calls in the writer lock) and
 * through the JSON quota_check, and the cost per call and per quota is printed.
 * Usage is not carried from one call to the next, so every call decides the
 * same request.
 */
#include "api/objects.h"
#include "core/quota_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXQ 10

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static json_t *container(const char *name, const char *cpu, const char *mem)
{
    return json_pack("{s:s,s:s,s:{s:{s:s,s:s},s:{s:s,s:s}}}", "name", name, "image", "busybox",
                     "resources", "requests", "cpu", cpu, "memory", mem, "limits", "cpu", cpu,
                     "memory", mem);
}

/* A pod as the API server stores it on create: defaulted, status.qosClass set. */
static json_t *make_pod(void)
{
    json_t *pod = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:[o,o]}}", "apiVersion", "v1", "kind",
                            "Pod", "metadata", "name", "p-1", "namespace", "bench", "spec",
                            "priorityClassName", "high", "containers",
                            container("app", "250m", "256Mi"), container("sidecar", "50m", "64Mi"));
    pod_defaults(pod);
    return pod;
}

/* Quota i of a namespace. scoped: every odd quota has scopes, alternately
 * NotTerminating+NotBestEffort and a scopeSelector PriorityClass In [high]
 * (the pod matches both). */
static json_t *make_quota(int i, bool scoped)
{
    char name[32];
    snprintf(name, sizeof name, "q-%d", i);
    json_t *hard =
        json_pack("{s:s,s:s,s:s,s:s,s:s}", "pods", "1000000", "requests.cpu", "100000",
                  "requests.memory", "100Ti", "limits.cpu", "100000", "limits.memory", "100Ti");
    json_t *used =
        json_pack("{s:s,s:s,s:s,s:s,s:s}", "pods", "12", "requests.cpu", "3600m", "requests.memory",
                  "3840Mi", "limits.cpu", "3600m", "limits.memory", "3840Mi");
    json_t *spec = json_pack("{s:O}", "hard", hard);
    if (scoped && i % 4 == 1)
        json_object_set_new(spec, "scopes", json_pack("[s,s]", "NotTerminating", "NotBestEffort"));
    if (scoped && i % 4 == 3)
        json_object_set_new(spec, "scopeSelector",
                            json_pack("{s:[{s:s,s:s,s:[s]}]}", "matchExpressions", "scopeName",
                                      "PriorityClass", "operator", "In", "values", "high"));
    return json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:o,s:{s:o,s:o}}", "apiVersion", "v1", "kind",
                     "ResourceQuota", "metadata", "name", name, "namespace", "bench",
                     "resourceVersion", "1", "spec", spec, "status", "hard", hard, "used", used);
}

typedef struct setup {
    size_t n;
    json_t *quotas; /* JSON array, for quota_check */
    quota_prepared *prep[MAXQ];
    rlist *used[MAXQ];
    quota_view views[MAXQ];
} setup;

static void setup_init(setup *s, size_t n, bool scoped)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->quotas = json_array();
    for (size_t i = 0; i < n; i++) {
        char err[256];
        json_t *q = make_quota((int)i, scoped);
        json_array_append_new(s->quotas, q);
        s->prep[i] = quota_prepare(q, err, sizeof err);
        s->used[i] = rl_new();
        if (!s->prep[i] || !s->used[i] ||
            rl_from_json(json_object_get(json_object_get(q, "status"), "used"), s->used[i], NULL)) {
            fprintf(stderr, "quota %zu: %s\n", i, err);
            exit(1);
        }
        s->views[i] = (quota_view){s->prep[i], s->used[i]};
    }
}

static void setup_cleanup(setup *s)
{
    for (size_t i = 0; i < s->n; i++) {
        quota_prepared_free(s->prep[i]);
        rl_free(s->used[i]);
    }
    json_decref(s->quotas);
}

/* One decision; exits unless it allowed the pod and charged every quota. */
static void decide(const quota_request *rq, const setup *s, bool views)
{
    quota_result res;
    int rc = views ? quota_check_views(rq, s->views, s->n, &res) : quota_check(rq, &res);
    bool charged = true;
    for (size_t i = 0; i < s->n; i++)
        charged &= views ? res.next[i] != NULL : res.used[i] != NULL;
    if (rc || !res.allowed || !charged) {
        fprintf(stderr, "unexpected decision: rc %d, allowed %d, %s\n", rc, res.allowed,
                res.message ? res.message : "not every quota charged");
        exit(1);
    }
    quota_result_cleanup(&res);
}

/* ns per call of `iters` decisions (after a short warm-up). */
static double time_calls(const quota_request *rq, const setup *s, bool views, long iters)
{
    for (long i = 0; i < iters / 100 + 1; i++)
        decide(rq, s, views);
    double t0 = now();
    for (long i = 0; i < iters; i++)
        decide(rq, s, views);
    return (now() - t0) * 1e9 / (double)iters;
}

int main(int argc, char **argv)
{
    long iters = argc > 2 && !strcmp(argv[1], "--iters") ? atol(argv[2]) : 200000;
    json_t *pod = make_pod();
    static const size_t counts[] = {0, 1, 10};
    printf("%-8s %-7s %6s %12s %12s\n", "path", "scopes", "quotas", "ns/call", "ns/quota");
    for (int views = 1; views >= 0; views--) {
        for (int scoped = 0; scoped < 2; scoped++) {
            for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
                setup s;
                setup_init(&s, counts[k], scoped);
                quota_request rq = {.namespace_ = "bench",
                                    .group = "",
                                    .resource = "pods",
                                    .op = QUOTA_CREATE,
                                    .obj = pod,
                                    .quotas = s.quotas,
                                    .now = 1700000000};
                double ns = time_calls(&rq, &s, views, iters);
                printf("%-8s %-7s %6zu %12.0f %12.0f\n", views ? "views" : "json",
                       scoped ? "mixed" : "none", s.n, ns, s.n ? ns / (double)s.n : 0.0);
                setup_cleanup(&s);
            }
        }
    }
    json_decref(pod);
    return 0;
}
