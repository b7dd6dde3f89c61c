/* loadgen.c - create objects over many keep-alive HTTPS connections and report
 * throughput, latency percentiles and the server's resident memory.
 *
 *   loadgen --data-dir DIR --url https://127.0.0.1:6443 [--connections 16]
 *           [--requests 20000] [--namespaces 1] [--ns-prefix bench]
 *           [--resource pods|configmaps|nodes|resourcepoolclaims|buckets|admissionreviews]
 *           [--pid SERVER_PID[,PID...]] [--label NAME] [--cpu QUANTITY] [--rate PER_SECOND]
 *
 * admissionreviews: AdmissionReviews (a claim's create) posted to allotd's
 * webhook, /admission/v1/validate (answered 200). --rate sends open loop:
 * request i is due at start + i/rate, and its latency counts from then, so
 * a server that falls behind shows it in the tail (no coordinated omission).
 *
 * Each connection is one thread with one curl handle, so the TLS session and
 * the TCP connection are reused for every request (as client-go does). The
 * namespaces must exist (and for buckets, bench/crd.sh's CRD). Latencies are measured per request
 * on the client.
 */
#include <curl/curl.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct config {
    const char *data_dir, *url, *resource, *ns_prefix, *label;
    int connections, namespaces;
    int cpu_mix;     /* pods request ((i % 9) + 1) * 100m cpu instead of 10m */
    double rate;     /* --rate: requests per second in all, open loop (0: closed loop) */
    const char *cpu; /* --cpu: what every pod requests (e.g. 1000: fits no node) */
    long requests;
    long pid;     /* the server (the first of --pid's list) */
    long pids[8]; /* --pid A,B,...: every process the server is (summed) */
    int npids;
    char token[512], ca[4096];
    const char *token_file; /* --token-file: whose requests (default the admin's) */
} config;

typedef struct worker {
    const config *cfg;
    int id;
    double *lat; /* seconds, one per request this worker made */
    long n, errors, conflicts;
} worker;

static atomic_long next_request;
static double start_time; /* when the run began (open loop's clock) */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t discard(char *p, size_t sz, size_t n, void *ud)
{
    return sz * n;
}

static void body_for(const config *c, long i, char *buf, size_t n)
{
    char cpu[16];
    if (c->cpu)
        snprintf(cpu, sizeof cpu, "%s", c->cpu);
    else
        snprintf(cpu, sizeof cpu, "%ldm", c->cpu_mix ? (i % 9 + 1) * 100 : 10);
    if (!strcmp(c->resource, "nodes"))
        snprintf(buf, n,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%ld\"},"
                 "\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"110\"},"
                 "\"allocatable\":{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"110\"}}}",
                 i);
    else if (!strcmp(c->resource, "pods"))
        snprintf(buf, n,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-%ld\","
                 "\"labels\":{\"app\":\"bench\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
                 "\"image\":\"busybox:1.36\",\"resources\":{\"requests\":{\"cpu\":\"%s\","
                 "\"memory\":\"16Mi\"},\"limits\":{\"cpu\":\"%s\",\"memory\":\"16Mi\"}}}]}}",
                 i, cpu, cpu);
    else if (!strcmp(c->resource, "resourcepoolclaims"))
        snprintf(buf, n,
                 "{\"apiVersion\":\"capsule.clastix.io/v1beta2\",\"kind\":\"ResourcePoolClaim\","
                 "\"metadata\":{\"name\":\"claim-%ld\"},\"spec\":{\"pool\":\"bench\","
                 "\"claim\":{\"requests.cpu\":\"1m\"}}}",
                 i);
    else if (!strcmp(c->resource, "admissionreviews"))
        snprintf(buf, n,
                 "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                 "\"request\":{\"uid\":\"review-%ld\",\"kind\":{\"group\":"
                 "\"capsule.clastix.io\",\"version\":\"v1beta2\",\"kind\":"
                 "\"ResourcePoolClaim\"},\"resource\":{\"group\":\"capsule.clastix.io\","
                 "\"version\":\"v1beta2\",\"resource\":\"resourcepoolclaims\"},\"name\":"
                 "\"claim-%ld\",\"namespace\":\"%s-%ld\",\"operation\":\"CREATE\","
                 "\"userInfo\":{\"username\":\"bench\"},\"object\":{\"apiVersion\":"
                 "\"capsule.clastix.io/v1beta2\",\"kind\":\"ResourcePoolClaim\",\"metadata\":{"
                 "\"name\":\"claim-%ld\",\"namespace\":\"%s-%ld\",\"uid\":\"u-%ld\"},"
                 "\"spec\":{\"pool\":\"bench\",\"claim\":{\"requests.cpu\":\"1m\"}}},"
                 "\"oldObject\":null,\"dryRun\":false}}",
                 i, i, c->ns_prefix, i % c->namespaces, i, c->ns_prefix, i % c->namespaces, i);
    else if (!strcmp(c->resource, "buckets")) /* bench/crd.sh's custom resource */
        snprintf(buf, n,
                 "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Bucket\",\"metadata\":{"
                 "\"name\":\"b-%ld\"},\"spec\":{\"region\":\"us-east-1\",\"storageGB\":20}}",
                 i);
    else
        snprintf(buf, n,
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c-%ld\"},"
                 "\"data\":{\"k\":\"v\"}}",
                 i);
}

static void *run(void *arg)
{
    worker *w = arg;
    const config *c = w->cfg;
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = NULL;
    char auth[600], url[1024], body[1024];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->token);
    hdr = curl_slist_append(hdr, auth);
    hdr = curl_slist_append(hdr, "Content-Type: application/json");
    hdr = curl_slist_append(hdr, "Accept: application/json");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_CAINFO, c->ca);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    bool review = !strcmp(c->resource, "admissionreviews");
    for (;;) {
        long i = atomic_fetch_add(&next_request, 1);
        if (i >= c->requests) break;
        double due = c->rate > 0 ? start_time + (double)i / c->rate : 0;
        if (due > 0) {
            double wait = due - now();
            if (wait > 0)
                nanosleep(&(struct timespec){(time_t)wait, (long)((wait - (long)wait) * 1e9)},
                          NULL);
        }
        if (review)
            snprintf(url, sizeof url, "%s/admission/v1/validate", c->url);
        else if (!strcmp(c->resource, "nodes")) /* cluster-scoped */
            snprintf(url, sizeof url, "%s/api/v1/nodes", c->url);
        else
            snprintf(url, sizeof url, "%s/%s/namespaces/%s-%ld/%s", c->url,
                     !strcmp(c->resource, "resourcepoolclaims") ? "apis/capsule.clastix.io/v1beta2"
                     : !strcmp(c->resource, "buckets")          ? "apis/example.com/v1"
                                                                : "api/v1",
                     c->ns_prefix, i % c->namespaces, c->resource);
        body_for(c, i, body, sizeof body);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        double t0 = due > 0 ? due : now();
        CURLcode rc = curl_easy_perform(h);
        double dt = now() - t0;
        long code = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        if (review && code == 200) code = 201; /* a decided review */
        if (rc != CURLE_OK || (code != 201 && code != 409 && code != 403)) {
            if (w->errors++ < 3)
                fprintf(stderr, "request %ld: %s (HTTP %ld)\n", i, curl_easy_strerror(rc), code);
            continue;
        }
        if (code != 201) w->conflicts++;
        w->lat[w->n++] = dt;
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static long rss_kib(long pid)
{
    char path[64], line[256];
    long kib = -1;
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
    fclose(f);
    return kib;
}

/* Server CPU time (user + system) in seconds, from /proc/PID/stat; -1 if unknown. */
static double cpu_seconds(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    const char *p = strrchr(buf, ')'); /* comm may hold spaces */
    unsigned long ut, st;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The server's context switches (voluntary and involuntary) summed over its
 * threads, from /proc/PID/task/TID/status; -1 if unknown. (A thread that
 * exits takes its count along: allotd's threads live as long as it.) */
static long ctx_switches(long pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/task", pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    long total = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[320];
        snprintf(p, sizeof p, "/proc/%ld/task/%s/status", pid, e->d_name);
        FILE *f = fopen(p, "r");
        if (!f) continue;
        long v;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
                sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
                total += v;
        fclose(f);
    }
    closedir(d);
    return total;
}

static int read_file(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t got = fread(buf, 1, n - 1, f);
    fclose(f);
    buf[got] = '\0';
    while (got && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
        buf[--got] = '\0';
    return 0;
}

static int parse_args(int argc, char **argv, config *c)
{
    memset(c, 0, sizeof *c);
    c->url = "https://127.0.0.1:6443";
    c->resource = "pods";
    c->ns_prefix = "bench";
    c->label = "run";
    c->connections = 16;
    c->namespaces = 1;
    c->requests = 20000;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--data-dir"))
            c->data_dir = v;
        else if (!strcmp(k, "--url"))
            c->url = v;
        else if (!strcmp(k, "--connections"))
            c->connections = atoi(v);
        else if (!strcmp(k, "--requests"))
            c->requests = atol(v);
        else if (!strcmp(k, "--namespaces"))
            c->namespaces = atoi(v);
        else if (!strcmp(k, "--ns-prefix"))
            c->ns_prefix = v;
        else if (!strcmp(k, "--resource"))
            c->resource = v;
        else if (!strcmp(k, "--pid")) {
            for (const char *q = v; *q && c->npids < 8;) {
                c->pids[c->npids++] = atol(q);
                q = strchr(q, ',');
                if (!q) break;
                q++;
            }
            c->pid = c->npids ? c->pids[0] : 0;
        } else if (!strcmp(k, "--label"))
            c->label = v;
        else if (!strcmp(k, "--cpu-mix"))
            c->cpu_mix = atoi(v);
        else if (!strcmp(k, "--cpu"))
            c->cpu = v;
        else if (!strcmp(k, "--token-file"))
            c->token_file = v;
        else if (!strcmp(k, "--rate"))
            c->rate = atof(v);
        else {
            fprintf(stderr, "loadgen: unknown flag %s\n", k);
            return -1;
        }
    }
    if (!c->data_dir || c->connections < 1 || c->namespaces < 1 || c->requests < 1) {
        fprintf(stderr,
                "usage: loadgen --data-dir DIR [--url U] [--connections N] "
                "[--requests N] [--namespaces N] [--resource pods|configmaps|buckets] [--pid P] "
                "[--token-file F]\n");
        return -1;
    }
    char path[4096];
    if (c->token_file)
        snprintf(path, sizeof path, "%s", c->token_file);
    else
        snprintf(path, sizeof path, "%s/admin.token", c->data_dir);
    if (read_file(path, c->token, sizeof c->token) != 0) {
        fprintf(stderr, "loadgen: cannot read %s\n", path);
        return -1;
    }
    snprintf(c->ca, sizeof c->ca, "%s/ca.crt", c->data_dir);
    return 0;
}

/* The sums over --pid's processes; -1 when one is unknown. */
static double cpu_all(const config *c)
{
    double t = 0;
    for (int i = 0; i < c->npids; i++) {
        double v = cpu_seconds(c->pids[i]);
        if (v < 0) return -1;
        t += v;
    }
    return t;
}

static long ctx_all(const config *c)
{
    long t = 0;
    for (int i = 0; i < c->npids; i++) {
        long v = ctx_switches(c->pids[i]);
        if (v < 0) return -1;
        t += v;
    }
    return t;
}

static long rss_all(const config *c)
{
    long t = 0;
    for (int i = 0; i < c->npids; i++) {
        long v = rss_kib(c->pids[i]);
        if (v < 0) return -1;
        t += v;
    }
    return t;
}

int main(int argc, char **argv)
{
    config c;
    if (parse_args(argc, argv, &c) != 0) return 2;
    curl_global_init(CURL_GLOBAL_ALL);
    worker *w = calloc((size_t)c.connections, sizeof *w);
    pthread_t *th = calloc((size_t)c.connections, sizeof *th);
    for (int i = 0; i < c.connections; i++) {
        w[i] = (worker){&c, i, calloc((size_t)c.requests, sizeof(double)), 0, 0, 0};
    }
    double cpu0 = c.pid ? cpu_all(&c) : -1;
    long cs0 = c.pid ? ctx_all(&c) : -1;
    double t0 = now();
    start_time = t0;
    for (int i = 0; i < c.connections; i++)
        pthread_create(&th[i], NULL, run, &w[i]);
    for (int i = 0; i < c.connections; i++)
        pthread_join(th[i], NULL);
    double secs = now() - t0;
    double cpu1 = c.pid ? cpu_all(&c) : -1;
    long cs1 = c.pid ? ctx_all(&c) : -1;

    long n = 0, errors = 0, rejected = 0;
    for (int i = 0; i < c.connections; i++) {
        n += w[i].n;
        errors += w[i].errors;
        rejected += w[i].conflicts;
    }
    double *all = malloc((size_t)(n ? n : 1) * sizeof *all);
    long k = 0;
    for (int i = 0; i < c.connections; i++) {
        memcpy(all + k, w[i].lat, (size_t)w[i].n * sizeof *all);
        k += w[i].n;
        free(w[i].lat);
    }
    qsort(all, (size_t)n, sizeof *all, cmp_double);
    double p50 = n ? all[n / 2] : 0, p99 = n ? all[(long)((double)n * 0.99)] : 0;
    double max = n ? all[n - 1] : 0;
    long rss = c.pid ? rss_all(&c) : -1;
    printf(
        "%s: %ld %s creates over %d connections in %.2fs: %.0f/s, p50 %.2f ms, p99 %.2f ms, "
        "max %.2f ms, rejected %ld, errors %ld, server RSS %.1f MiB, server CPU %.0f us/request, "
        "server ctxsw %.2f/request\n",
        c.label, n - rejected, c.resource, c.connections, secs, (double)(n - rejected) / secs,
        p50 * 1e3, p99 * 1e3, max * 1e3, rejected, errors, rss >= 0 ? (double)rss / 1024 : -1,
        cpu0 >= 0 && cpu1 >= 0 && n ? (cpu1 - cpu0) / (double)n * 1e6 : -1,
        cs0 >= 0 && cs1 >= 0 && n ? (double)(cs1 - cs0) / (double)n : -1);
    free(all);
    free(w);
    free(th);
    curl_global_cleanup();
    return errors ? 1 : 0;
}
