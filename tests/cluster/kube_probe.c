/* kube_probe.c - src/kube against a real kube-apiserver (scripts/kube-up.sh),
 * run by tests/cluster/test_kube_client.sh.
 *
 *   kube_probe KUBECONFIG NAMESPACE [RESTART_CMD]
 *
 * Checks, in order: the kubeconfig loads and requests answer (a 404 is a
 * response, not an error; the CA from memory works as from a file; with no
 * CA the server's certificate is refused); a reflector on the labelled
 * ConfigMaps of NAMESPACE syncs with what was there, then sees exactly the
 * ADDED/MODIFIED/DELETED of what the probe writes (nothing of unlabelled
 * ones) and its view equals a LIST. With RESTART_CMD, the command (given the
 * namespace) kills the API server, writes a ConfigMap straight into etcd
 * while it is down, compacts etcd and starts the server again: the
 * reflector must back off, get 410 for its old resourceVersion, relist
 * (counter), see that ConfigMap through the relist and converge again.
 * Every wait is bounded and woken by the callbacks (condition variable).
 */
#include "kube/kube.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXOBJ 64
#define WAIT_MS 60000

typedef struct probe {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int replaces;
    char names[MAXOBJ][64], rvs[MAXOBJ][32]; /* the reflector's view */
    int n;
    char events[4096]; /* "TYPE name;" */
} probe;

static probe P = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
static kube_client *C;
static const char *NS;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static const char *name_of(json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
}
static const char *rv_of(json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
}

static int find(const char *name)
{
    for (int i = 0; i < P.n; i++)
        if (strcmp(P.names[i], name) == 0) return i;
    return -1;
}

static void put_obj(json_t *o)
{
    int i = find(name_of(o));
    if (i < 0) {
        if (P.n == MAXOBJ) die("too many objects");
        i = P.n++;
    }
    snprintf(P.names[i], sizeof P.names[i], "%s", name_of(o));
    snprintf(P.rvs[i], sizeof P.rvs[i], "%s", rv_of(o));
}

static void on_replace(void *arg, json_t *items, const char *rv)
{
    size_t i;
    json_t *it;
    pthread_mutex_lock(&P.mu);
    P.n = 0;
    json_array_foreach(items, i, it)
    {
        if (strcmp(json_string_value(json_object_get(it, "kind")), "ConfigMap") != 0)
            die("listed item without kind ConfigMap");
        put_obj(it);
    }
    P.replaces++;
    pthread_cond_broadcast(&P.cv);
    pthread_mutex_unlock(&P.mu);
    printf("replace: %zu items at rv %s\n", json_array_size(items), rv);
}

static void on_event(void *arg, const char *type, json_t *obj)
{
    pthread_mutex_lock(&P.mu);
    if (strcmp(type, "DELETED") == 0) {
        int i = find(name_of(obj));
        if (i >= 0) {
            P.n--;
            memmove(P.names[i], P.names[i + 1], sizeof P.names[0] * (size_t)(P.n - i));
            memmove(P.rvs[i], P.rvs[i + 1], sizeof P.rvs[0] * (size_t)(P.n - i));
        }
    } else {
        put_obj(obj);
    }
    size_t l = strlen(P.events);
    snprintf(P.events + l, sizeof P.events - l, "%s %s;", type, name_of(obj));
    pthread_cond_broadcast(&P.cv);
    pthread_mutex_unlock(&P.mu);
}

/* Wait (bounded) until pred holds, under P.mu; woken by the callbacks. */
static void wait_for(const char *what, int (*pred)(const void *), const void *arg)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_MS / 1000;
    pthread_mutex_lock(&P.mu);
    while (!pred(arg))
        if (pthread_cond_timedwait(&P.cv, &P.mu, &until) != 0) {
            fprintf(stderr, "events: %s\n", P.events);
            die("timed out waiting for %s", what);
        }
    pthread_mutex_unlock(&P.mu);
}
static int has_events(const void *want)
{
    return strcmp(P.events, want) == 0;
}
static int replaced_n(const void *n)
{
    return P.replaces >= *(const int *)n;
}
static int has_name(const void *name)
{
    return find(name) >= 0;
}

static json_t *req(const char *method, const char *path, const char *body, const char *ct,
                   long want)
{
    long status;
    char *resp, err[512];
    if (kube_request(C, method, path, body, ct, 30000, &status, &resp, err, sizeof err))
        die("%s %s: %s", method, path, err);
    if (status != want)
        die("%s %s: status %ld, want %ld: %s", method, path, status, want, resp ? resp : "");
    json_t *v = resp ? json_loads(resp, 0, NULL) : NULL;
    free(resp);
    return v;
}

static void cm(const char *method, const char *name, const char *labels, const char *data,
               long want)
{
    char path[256], body[512];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps%s%s", NS,
             strcmp(method, "POST") ? "/" : "", strcmp(method, "POST") ? name : "");
    snprintf(body, sizeof body, "{\"metadata\":{\"name\":\"%s\",\"labels\":%s},\"data\":%s}", name,
             labels, data);
    json_decref(req(method, path, strcmp(method, "DELETE") ? body : NULL,
                    strcmp(method, "PATCH") ? NULL : "application/merge-patch+json", want));
}

/* The reflector's view equals the server's list of labelled ConfigMaps. */
static void check_converged(void)
{
    char path[256];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps?labelSelector=probe%%3Dyes", NS);
    json_t *list = req("GET", path, NULL, NULL, 200);
    size_t i;
    json_t *it;
    pthread_mutex_lock(&P.mu);
    if ((size_t)P.n != json_array_size(json_object_get(list, "items")))
        die("reflector holds %d ConfigMaps, the server %zu", P.n,
            json_array_size(json_object_get(list, "items")));
    json_array_foreach(json_object_get(list, "items"), i, it)
    {
        int k = find(name_of(it));
        if (k < 0 || strcmp(P.rvs[k], rv_of(it)) != 0)
            die("reflector's %s differs from the server's", name_of(it));
    }
    pthread_mutex_unlock(&P.mu);
    json_decref(list);
}

static void check_tls(const kube_config *cfg, const char *ca_path)
{
    char err[512];
    kube_config m;
    if (kube_config_copy(&m, cfg)) die("copy");
    FILE *f = fopen(ca_path, "r");
    if (!f) die("open %s", ca_path);
    static char pem[65536];
    size_t n = fread(pem, 1, sizeof pem - 1, f);
    fclose(f);
    pem[n] = '\0';
    free(m.ca_file);
    m.ca_file = NULL;
    m.ca_pem = strdup(pem);
    kube_client *c = kube_client_new(&m, err, sizeof err);
    long status;
    char *resp;
    if (!c ||
        kube_request(c, "GET", "/version", NULL, NULL, 10000, &status, &resp, err, sizeof err) ||
        status != 200)
        die("CA from memory: %s", err);
    free(resp);
    kube_client_free(c);
    /* with no CA at all the system store does not know the server: refused */
    free(m.ca_pem);
    m.ca_pem = NULL;
    c = kube_client_new(&m, err, sizeof err);
    if (!c ||
        kube_request(c, "GET", "/version", NULL, NULL, 10000, &status, &resp, err, sizeof err) == 0)
        die("a server certificate no CA vouches for was accepted");
    printf("no CA: refused (%s)\n", err);
    kube_client_free(c);
    kube_config_free(&m);
}

int main(int argc, char **argv)
{
    if (argc < 3) die("usage: kube_probe KUBECONFIG NAMESPACE [RESTART_CMD]");
    NS = argv[2];
    setvbuf(stdout, NULL, _IOLBF, 0);
    kube_config cfg;
    char err[512];
    if (kube_config_load(argv[1], &cfg, err, sizeof err)) die("%s", err);
    if (!(C = kube_client_new(&cfg, err, sizeof err))) die("%s", err);
    check_tls(&cfg, cfg.ca_file);

    json_t *nss = req("GET", "/api/v1/namespaces", NULL, NULL, 200);
    printf("namespaces: %zu\n", json_array_size(json_object_get(nss, "items")));
    json_decref(nss);
    json_decref(req("GET", "/api/v1/namespaces/no-such-namespace", NULL, NULL, 404));
    char body[256];
    snprintf(body, sizeof body, "{\"metadata\":{\"name\":\"%s\"}}", NS);
    json_decref(req("POST", "/api/v1/namespaces", body, NULL, 201));
    cm("POST", "pre", "{\"probe\":\"yes\"}", "{\"k\":\"v\"}", 201);
    cm("POST", "other", "{}", "{\"k\":\"v\"}", 201);

    char path[256];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", NS);
    kube_reflector_ops ops = {on_replace, on_event};
    kube_reflector *r = kube_reflector_start(C, path, "probe=yes", &ops, NULL, err, sizeof err);
    if (!r) die("%s", err);
    int one = 1;
    wait_for("the first list", replaced_n, &one);
    pthread_mutex_lock(&P.mu);
    if (P.n != 1 || find("pre") != 0) die("first list: want exactly pre");
    pthread_mutex_unlock(&P.mu);

    cm("POST", "a", "{\"probe\":\"yes\"}", "{\"k\":\"v\"}", 201);
    cm("PATCH", "a", "{\"probe\":\"yes\"}", "{\"k\":\"v2\"}", 200);
    cm("POST", "b", "{}", "{\"k\":\"v\"}", 201); /* unlabelled: no event */
    cm("DELETE", "a", "{}", "{}", 200);
    cm("POST", "z", "{\"probe\":\"yes\"}", "{}", 201);
    wait_for("the events", has_events, "ADDED a;MODIFIED a;DELETED a;ADDED z;");
    check_converged();
    /* synced is set once replace has returned: long before these events */
    if (!kube_reflector_synced(r)) die("not synced after its first list");
    kube_reflector_stats st;
    kube_reflector_stats_get(r, &st);
    printf("events ok: lists %llu events %llu\n", (unsigned long long)st.lists,
           (unsigned long long)st.events);
    if (st.lists != 1 || st.events != 4)
        die("counters: lists %llu events %llu", (unsigned long long)st.lists,
            (unsigned long long)st.events);

    if (argc > 3) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "%s %s", argv[3], NS);
        printf("restarting the API server: %s\n", cmd);
        if (system(cmd) != 0) die("restart command failed");
        int two = 2;
        wait_for("a relist", replaced_n, &two);
        wait_for("the ConfigMap written while the server was down", has_name, "sneaky");
        kube_reflector_stats_get(r, &st);
        printf("after restart: lists %llu relists_410 %llu restarts %llu failures %llu\n",
               (unsigned long long)st.lists, (unsigned long long)st.relists_410,
               (unsigned long long)st.watch_restarts, (unsigned long long)st.failures);
        if (st.relists_410 < 1) die("no relist after 410");
        if (st.failures < 1) die("no failed attempt while the server was down");
        check_converged();
        /* and the watch that follows the relist delivers again */
        cm("POST", "c", "{\"probe\":\"yes\"}", "{}", 201);
        wait_for("ADDED c", has_name, "c");
        check_converged();
        if (strstr(P.events, "sneaky")) die("sneaky came as an event, not through the relist");
    }
    /* stop is prompt: it wakes the watch blocked in curl_multi_poll */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    kube_reflector_stop(r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long stop_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    printf("stop: %ld ms\n", stop_ms);
    if (stop_ms > 1000) die("stop took %ld ms", stop_ms);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s", NS);
    json_decref(req("DELETE", path, NULL, NULL, 200));
    kube_client_free(C);
    kube_config_free(&cfg);
    printf("ok\n");
    return 0;
}
