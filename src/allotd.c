/* allotd.c - the allot control plane: flags, bootstrap, serve, shut down.
 *
 * Start-up order: data directory, TLS material and admin token, store (loads
 * every object), bootstrap namespaces, controllers, HTTPS listener, and only
 * then the kubeconfig, so a kubeconfig on disk means "ready to serve".
 */
#include "api/features.h"
#include "api/crd_kinds.h"
#include "api/kinds.h"
#include "api/priority.h"
#include "controllers/baseline.h"
#include "controllers/controllers.h"
#include "controllers/crd.h"
#include "controllers/kubesvc.h"
#include "controllers/nodeagent.h"
#include "controllers/quota.h"
#include "controllers/scheduler.h"
#include "cluster/cluster.h"
#include "registry/admission.h"
#include "registry/quota_admission.h"
#include "registry/pool_admission.h"
#include "registry/cq_admission.h"
#include "registry/quota_ledger.h"
#include "registry/registry.h"
#include "registry/svc_alloc.h"
#include "server/auth.h"
#include "server/authz.h"
#include "server/crds_cmd.h"
#include "server/http.h"
#include "server/inflight.h"
#include "server/kubeconfig.h"
#include "util/log.h"
#include "server/metrics.h"
#include "server/satoken.h"
#include "util/secfile.h"
#include "server/tls.h"
#include "server/tls_cmd.h"
#include "server/tokenrequest.h"
#include "server/scheduler_cmd.h"
#include "server/webhook_cmd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <net/if.h>
#ifndef ALLOT_JEMALLOC
#include <malloc.h> /* mallopt */
#endif
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct options {
    const char *data_dir;
    const char *bind_address;
    int port;
    const char *token_auth_file;
    const char *log_level;
    int quota_sync_s;
    bool node_agent;
    bool scheduler;
    long watch_history;
    const char *admission_config;
    const char *audit_log_path; /* NULL: DATA-DIR/audit.log; "": none */
    const char *audit_policy_file;
    int sa_max_expiration_s; /* 0: no maximum */
    int simulated_nodes;
    long max_watches;   /* per user */
    int64_t job_run_ms; /* --node-agent-job-run-duration */
    const char *service_ip_range, *node_port_range;
    const char *advertise_address; /* NULL: from --bind-address */
    long max_object_bytes;
    /* Cluster mode (docs/cluster-mode.md): */
    bool cluster_mode;
    const char *cluster_kubeconfig; /* NULL: in-cluster config */
    const char *webhook_address;    /* host:port the cluster reaches allotd at */
    const char *own_namespace;
    const char *tls_dir; /* NULL: the data directory's own CA and serving pair */
    bool port_set, bind_set;
    char webhook_host[256]; /* webhook_address's host, unbracketed */
} options;

static void usage(FILE *out)
{
    fprintf(out, "Usage: allotd [flags]\n"
                 "\n"
                 "allotd is a Kubernetes-API-compatible control plane for multi-tenant quota.\n"
                 "Point kubectl at DATA-DIR/kubeconfig once it has started.\n"
                 "\n"
                 "Flags:\n"
                 "  --data-dir DIR          where objects, certificates and tokens live\n"
                 "                          (default ./allot-data)\n"
                 "  --bind-address ADDR     IP address to serve HTTPS on (default 127.0.0.1)\n"
                 "  --port N                port to serve HTTPS on (default 6443)\n"
                 "  --token-auth-file FILE  extra bearer tokens, upstream CSV format:\n"
                 "                          token,user,uid,\"group1,group2\"\n"
                 "  --log-level LEVEL       debug, info, warn or error (default info)\n"
                 "  --feature-gates GATES   comma-separated Name=true|false; known gates:\n"
                 "                          DeferredResourceQuota (default false): compute quota\n"
                 "                          is checked by the scheduler and charged at bind\n"
                 "  --node-agent BOOL       run pods bound to stored nodes (default true); set\n"
                 "                          false when real kubelets manage the nodes\n"
                 "  --node-agent-job-run-duration DURATION\n"
                 "                          how long a Job's pod runs on the node agent before it\n"
                 "                          succeeds, when its allot.dev/run-duration annotation\n"
                 "                          does not say (Go duration; default 10s; 0: until\n"
                 "                          deleted)\n"
                 "  --simulated-nodes N     make sure nodes allot-node-1..N exist (4 cpu, 16Gi,\n"
                 "                          110 pods each) for the node agent to run pods on;\n"
                 "                          for trying allot without kubelets (default 0)\n"
                 "  --scheduler BOOL        run the built-in scheduler (default true); set false\n"
                 "                          when another scheduler binds the pods\n"
                 "  --admission-control-config-file FILE\n"
                 "                          upstream's AdmissionConfiguration (YAML or JSON); the\n"
                 "                          ResourceQuota plugin's limitedResources are honoured\n"
                 "  --audit-log-path FILE   audit Events (audit.k8s.io/v1, JSON lines), mode 0600\n"
                 "                          (default DATA-DIR/audit.log; \"\" for none)\n"
                 "  --audit-policy-file FILE upstream audit Policy (YAML or JSON); default: every\n"
                 "                          request at Metadata (never a body)\n"
                 "  --service-account-max-token-expiration DURATION\n"
                 "                          longest ServiceAccount token issued (Go duration;\n"
                 "                          default 24h, 0 for no maximum)\n"
                 "  --service-cluster-ip-range CIDR\n"
                 "                          where Services' cluster IPs come from; its first\n"
                 "                          address is the kubernetes Service's (default\n"
                 "                          10.96.0.0/12; at most 2^20 addresses)\n"
                 "  --service-node-port-range RANGE\n"
                 "                          where NodePort and LoadBalancer Services' node\n"
                 "                          ports come from (default 30000-32767)\n"
                 "  --advertise-address IP  the address the kubernetes Service's Endpoints name\n"
                 "                          (default --bind-address; for 0.0.0.0 or :: the\n"
                 "                          host's first non-loopback address)\n"
                 "  --watch-history N       events kept for watch resumption, also across\n"
                 "                          restarts (default 25000)\n"
                 "  --max-watches-per-user N open watches one user may hold (members of\n"
                 "                          system:masters excepted; default 500); one more\n"
                 "                          is refused with 429\n"
                 "  --max-object-bytes N    the largest object stored, in bytes of JSON\n"
                 "                          managedFields included; a write past it is a 413\n"
                 "                          (default 1572864, etcd's --max-request-bytes)\n"
                 "  --cluster-kubeconfig FILE\n"
                 "                          cluster mode: enforce pools, claims and custom\n"
                 "                          quotas on the existing cluster FILE names, through\n"
                 "                          admission webhooks (docs/cluster-mode.md)\n"
                 "  --cluster-mode          cluster mode with the in-cluster config (the pod's\n"
                 "                          ServiceAccount)\n"
                 "  --webhook-address HOST:PORT\n"
                 "                          cluster mode out of the cluster: install the CRDs\n"
                 "                          and webhooks pointing at HOST:PORT, and serve there\n"
                 "  --namespace NAME        allot's own namespace, never sent to its webhooks\n"
                 "                          (default: the pod's, else allot-system)\n"
                 "  --tls-dir DIR           cluster mode: serve with DIR's ca.crt, server.crt\n"
                 "                          and server.key (allotd tls; the Secret every\n"
                 "                          replica mounts) instead of the data directory's\n"
                 "  --resource-quota-sync-period DURATION\n"
                 "                          how often every quota is fully recounted\n"
                 "                          (Go duration: 30s, 5m, 1h; default 5m)\n"
                 "  -h, --help              show this help\n"
                 "\n"
                 "Signals: SIGTERM or SIGINT shut down cleanly.\n"
                 "\n"
                 "allotd kubeconfig --user NAME [--group GROUP]... [--data-dir DIR]\n"
                 "                  [--out FILE] [--days N] [--server URL]\n"
                 "  issues a client certificate (CN=NAME, O=GROUP...) signed by DIR's CA and\n"
                 "  writes a kubeconfig using it (mode 0600; default FILE NAME.kubeconfig,\n"
                 "  N 365, URL the one in DIR/kubeconfig).\n"
                 "\n"
                 "allotd crds [--output yaml|json]      the CustomResourceDefinitions\n"
                 "allotd tls --out DIR [--namespace NS] [--san NAME]...\n"
                 "  a CA and a serving certificate for the Service allot in NS (--tls-dir)\n"
                 "allotd webhook-config [--ca FILE] [--namespace NS]\n"
                 "  the ValidatingWebhookConfiguration for the Service allot in NS\n"
                 "allotd scheduler-config --kubeconfig FILE --extender-url URL --ca FILE\n"
                 "                        [--api-version v1beta1|v1]\n"
                 "  kube-scheduler's configuration with allot as its extender\n");
}

/* A Go-style duration made of whole units: "90s", "5m", "1h30m". Seconds, or -1. */
static int parse_duration(const char *s)
{
    long total = 0;
    if (!*s) return -1;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0) return -1;
        long unit = *end == 'h' ? 3600 : *end == 'm' ? 60 : *end == 's' ? 1 : 0;
        if (!unit) return -1;
        total += v * unit;
        if (total > 86400 * 365) return -1;
        s = end + 1;
    }
    return (int)total;
}

/* --webhook-address HOST:PORT ([V6]:PORT): needs cluster mode; allotd
 * serves there unless --bind-address or --port say otherwise. */
static int parse_webhook_address(options *o)
{
    const char *a = o->webhook_address, *colon = strrchr(a, ':');
    char *end;
    long port = colon ? strtol(colon + 1, &end, 10) : 0;
    size_t hl = colon ? (size_t)(colon - a) : 0;
    if (*a == '[' && hl >= 2 && a[hl - 1] == ']') a++, hl -= 2;
    if (!o->cluster_mode) {
        fprintf(stderr, "allotd: --webhook-address needs --cluster-kubeconfig or --cluster-mode\n");
        return -1;
    }
    if (!colon || !hl || hl >= sizeof o->webhook_host || *end || port < 1 || port > 65535) {
        fprintf(stderr, "allotd: --webhook-address takes HOST:PORT\n");
        return -1;
    }
    memcpy(o->webhook_host, a, hl);
    o->webhook_host[hl] = '\0';
    unsigned char ip[16];
    bool is_ip = inet_pton(AF_INET, o->webhook_host, ip) == 1 ||
                 inet_pton(AF_INET6, o->webhook_host, ip) == 1;
    if (!o->port_set) o->port = (int)port;
    if (!o->bind_set && is_ip) o->bind_address = o->webhook_host;
    return 0;
}

static int parse_options(int argc, char **argv, options *o)
{
    static const struct option longopts[] = {
        {"data-dir", required_argument, NULL, 'd'},
        {"bind-address", required_argument, NULL, 'b'},
        {"port", required_argument, NULL, 'p'},
        {"token-auth-file", required_argument, NULL, 't'},
        {"log-level", required_argument, NULL, 'l'},
        {"resource-quota-sync-period", required_argument, NULL, 'q'},
        {"feature-gates", required_argument, NULL, 'f'},
        {"node-agent", required_argument, NULL, 'n'},
        {"scheduler", required_argument, NULL, 's'},
        {"simulated-nodes", required_argument, NULL, 'N'},
        {"node-agent-job-run-duration", required_argument, NULL, 'J'},
        {"watch-history", required_argument, NULL, 'w'},
        {"max-watches-per-user", required_argument, NULL, 'W'},
        {"max-object-bytes", required_argument, NULL, 'M'},
        {"admission-control-config-file", required_argument, NULL, 'a'},
        {"audit-log-path", required_argument, NULL, 'A'},
        {"audit-policy-file", required_argument, NULL, 'P'},
        {"service-account-max-token-expiration", required_argument, NULL, 'S'},
        {"service-cluster-ip-range", required_argument, NULL, 'R'},
        {"service-node-port-range", required_argument, NULL, 'O'},
        {"advertise-address", required_argument, NULL, 'V'},
        {"cluster-kubeconfig", required_argument, NULL, 'K'},
        {"cluster-mode", no_argument, NULL, 'C'},
        {"webhook-address", required_argument, NULL, 'H'},
        {"namespace", required_argument, NULL, 'X'},
        {"tls-dir", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (options){"./allot-data", "127.0.0.1", 6443, NULL, "info", 300, true, true, 25000};
    o->sa_max_expiration_s = TOKENREQ_DEFAULT_MAX_SECONDS;
    o->max_watches = WATCH_DEFAULT_PER_USER;
    o->job_run_ms = NODEAGENT_JOB_RUN_MS;
    o->service_ip_range = SVC_ALLOC_DEFAULT_IP_RANGE;
    o->node_port_range = SVC_ALLOC_DEFAULT_PORT_RANGE;
    char err[512];
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            o->data_dir = optarg;
            break;
        case 'b':
            o->bind_address = optarg;
            o->bind_set = true;
            break;
        case 'K':
            o->cluster_kubeconfig = optarg;
            o->cluster_mode = true;
            break;
        case 'C':
            o->cluster_mode = true;
            break;
        case 'H':
            o->webhook_address = optarg;
            break;
        case 'X':
            o->own_namespace = optarg;
            break;
        case 'T':
            o->tls_dir = optarg;
            break;
        case 'p': {
            char *end;
            long p = strtol(optarg, &end, 10);
            if (*end || p < 1 || p > 65535) {
                fprintf(stderr, "allotd: invalid --port %s\n", optarg);
                return -1;
            }
            o->port = (int)p;
            o->port_set = true;
            break;
        }
        case 't':
            o->token_auth_file = optarg;
            break;
        case 'l':
            o->log_level = optarg;
            break;
        case 'A':
            o->audit_log_path = optarg;
            break;
        case 'R':
            o->service_ip_range = optarg;
            break;
        case 'O':
            o->node_port_range = optarg;
            break;
        case 'V': {
            unsigned char a[16];
            if (inet_pton(AF_INET, optarg, a) != 1 && inet_pton(AF_INET6, optarg, a) != 1) {
                fprintf(stderr, "allotd: --advertise-address must be an IP address\n");
                return -1;
            }
            o->advertise_address = optarg;
            break;
        }
        case 'P':
            o->audit_policy_file = optarg;
            break;
        case 'a':
            o->admission_config = optarg;
            break;
        case 'S':
            if (strcmp(optarg, "0") != 0 &&
                (o->sa_max_expiration_s = parse_duration(optarg)) < TOKENREQ_MIN_SECONDS) {
                fprintf(stderr, "allotd: --service-account-max-token-expiration must be 0 or at "
                                "least 10m\n");
                return -1;
            }
            if (!strcmp(optarg, "0")) o->sa_max_expiration_s = 0;
            break;
        case 'w': {
            char *end;
            o->watch_history = strtol(optarg, &end, 10);
            if (*end || o->watch_history < 100 || o->watch_history > 10000000) {
                fprintf(stderr, "allotd: --watch-history takes 100 to 10000000\n");
                return -1;
            }
            break;
        }
        case 'W': {
            char *end;
            o->max_watches = strtol(optarg, &end, 10);
            if (*end || o->max_watches < 1 || o->max_watches > 1000000) {
                fprintf(stderr, "allotd: --max-watches-per-user takes 1 to 1000000\n");
                return -1;
            }
            break;
        }
        case 'M': {
            char *end;
            o->max_object_bytes = strtol(optarg, &end, 10);
            if (!*optarg || *end || o->max_object_bytes < 65536 ||
                o->max_object_bytes > 64L * 1024 * 1024) {
                fprintf(stderr, "allotd: --max-object-bytes takes 65536 to 67108864\n");
                return -1;
            }
            break;
        }
        case 'f':
            if (features_parse(optarg, err, sizeof err) != 0) {
                fprintf(stderr, "allotd: invalid --feature-gates: %s\n", err);
                return -1;
            }
            break;
        case 'N': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (!*optarg || *end || n < 0 || n > NODEAGENT_SIM_MAX) {
                fprintf(stderr, "allotd: --simulated-nodes takes 0 to %d\n", NODEAGENT_SIM_MAX);
                return -1;
            }
            o->simulated_nodes = (int)n;
            break;
        }
        case 'J':
            o->job_run_ms = strcmp(optarg, "0") ? nodeagent_parse_duration_ms(optarg) : 0;
            if (o->job_run_ms < 0 || o->job_run_ms > 86400000LL * 365) {
                fprintf(stderr, "allotd: invalid --node-agent-job-run-duration %s\n", optarg);
                return -1;
            }
            break;
        case 'n':
        case 's':
            if (strcmp(optarg, "true") && strcmp(optarg, "false")) {
                fprintf(stderr, "allotd: --%s takes true or false\n",
                        c == 'n' ? "node-agent" : "scheduler");
                return -1;
            }
            *(c == 'n' ? &o->node_agent : &o->scheduler) = !strcmp(optarg, "true");
            break;
        case 'q':
            if ((o->quota_sync_s = parse_duration(optarg)) <= 0) {
                fprintf(stderr, "allotd: invalid --resource-quota-sync-period %s\n", optarg);
                return -1;
            }
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "allotd: unexpected argument %s\n", argv[optind]);
        return -1;
    }
    if (o->webhook_address && parse_webhook_address(o) != 0) return -1;
    if (o->tls_dir && !o->cluster_mode) {
        fprintf(stderr, "allotd: --tls-dir needs --cluster-kubeconfig or --cluster-mode\n");
        return -1;
    }
    if (!o->own_namespace) {
        const char *pod_ns = getenv("POD_NAMESPACE");
        o->own_namespace = pod_ns && *pod_ns ? pod_ns : "allot-system";
    }
    /* Simulated nodes exist only for the node agent: without it their pods
     * would be bound and never run. */
    if (o->simulated_nodes && !o->node_agent) {
        fprintf(stderr, "allotd: --simulated-nodes needs --node-agent true\n");
        return -1;
    }
    return 0;
}

static void set_log_level(const char *name)
{
    if (!strcmp(name, "debug"))
        log_set_level(LOG_DEBUG);
    else if (!strcmp(name, "warn"))
        log_set_level(LOG_WARN);
    else if (!strcmp(name, "error"))
        log_set_level(LOG_ERROR);
    else
        log_set_level(LOG_INFO);
}

/* default, kube-system, kube-public and kube-node-lease always exist. */
static int bootstrap_namespaces(store *st)
{
    static const char *const names[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
    const api_kind *k = api_kind_find("", "v1", "namespaces");
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        api_err e;
        api_err_init(&e);
        json_t *ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                               "metadata", "name", names[i]);
        json_t *out = NULL;
        int rc = reg_create(st, k, "", ns, false, &out, &e);
        json_decref(ns);
        json_decref(out);
        if (rc != 0 && e.code != API_ALREADY_EXISTS) {
            log_msg(LOG_ERROR, "cannot create namespace", "\"namespace\":\"%s\",\"error\":\"%s\"",
                    names[i], e.message);
            api_err_clear(&e);
            return -1;
        }
        api_err_clear(&e);
    }
    return 0;
}

/* system-node-critical and system-cluster-critical always exist, as upstream. */
static int bootstrap_priority_classes(store *st)
{
    const api_kind *k = api_kind_find("scheduling.k8s.io", "v1", "priorityclasses");
    json_t *classes = priority_system_classes();
    size_t i;
    json_t *pc;
    int rc = 0;
    json_array_foreach(classes, i, pc)
    {
        api_err e;
        api_err_init(&e);
        json_t *out = NULL;
        if (reg_create(st, k, "", pc, false, &out, &e) != 0 && e.code != API_ALREADY_EXISTS) {
            log_msg(LOG_ERROR, "cannot create priority class", "\"error\":\"%s\"", e.message);
            rc = -1;
        }
        json_decref(out);
        api_err_clear(&e);
    }
    json_decref(classes);
    return rc;
}

/* The address the kubernetes Service's Endpoints name: --advertise-address,
 * else the bind address, else (0.0.0.0, ::) the host's first non-loopback
 * address of that family on an interface that is up, as upstream resolves
 * an unspecified bind address; 127.0.0.1 when there is none. */
static void advertise_address(const options *o, char *buf, size_t n)
{
    const char *bind = o->bind_address;
    if (o->advertise_address) {
        snprintf(buf, n, "%s", o->advertise_address);
        return;
    }
    bool any4 = !strcmp(bind, "0.0.0.0"), any6 = !strcmp(bind, "::");
    snprintf(buf, n, "%s", any4 || any6 ? "127.0.0.1" : bind);
    struct ifaddrs *ifs = NULL;
    if ((!any4 && !any6) || getifaddrs(&ifs) != 0) return;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK)) continue;
        int fam = i->ifa_addr->sa_family;
        if (fam != (any4 ? AF_INET : AF_INET6)) continue;
        const void *a = fam == AF_INET
                            ? (const void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr
                            : (const void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
        if (fam == AF_INET6 && IN6_IS_ADDR_LINKLOCAL((const struct in6_addr *)a)) continue;
        if (inet_ntop(fam, a, buf, (socklen_t)n)) break;
    }
    freeifaddrs(ifs);
}

static int write_kubeconfig(const options *o, const char *ca_pem, const char *token)
{
    char path[4096], url[512], err[512];
    const char *host = o->bind_address;
    if (!strcmp(host, "0.0.0.0")) host = "127.0.0.1";
    if (!strcmp(host, "::")) host = "::1";
    if (strchr(host, ':'))
        snprintf(url, sizeof url, "https://[%s]:%d", host, o->port);
    else
        snprintf(url, sizeof url, "https://%s:%d", host, o->port);
    snprintf(path, sizeof path, "%s/kubeconfig", o->data_dir);
    if (kubeconfig_write(path, url, ca_pem, "admin", token, err, sizeof err) != 0) {
        log_msg(LOG_ERROR, "cannot write kubeconfig", "\"error\":\"%s\"", err);
        return -1;
    }
    log_msg(LOG_INFO, "ready", "\"url\":\"%s\",\"kubeconfig\":\"%s\"", url, path);
    return 0;
}

/* The data directory holds the CA key, tokens and every Secret: it is made
 * 0700 before anything is written to it, and a directory or file an older
 * allotd (or an operator's mkdir) left readable to others is tightened with a
 * warning rather than refused (docs/decisions.md, "Data directory
 * permissions"). Certificates are public and keep their mode. */
static int secure_data_dir(const char *dir)
{
    char err[512], path[4096];
    mode_t was = 0;
    int rc = secfile_private_dir(dir, &was, err, sizeof err);
    if (rc < 0) {
        log_msg(LOG_ERROR, "cannot make the data directory private", "\"error\":\"%s\"", err);
        return -1;
    }
    if (rc == 1)
        log_msg(LOG_WARN, "data directory was accessible to other users: mode set to 0700",
                "\"dir\":\"%s\",\"was\":\"%04o\"", dir, (unsigned)was);
    DIR *d = opendir(dir);
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' || (n > 4 && !strcmp(e->d_name + n - 4, ".crt"))) continue;
        if (secfile_join(path, sizeof path, dir, e->d_name, err, sizeof err) != 0) continue;
        rc = secfile_private_file(path, &was, err, sizeof err);
        if (rc < 0) {
            log_msg(LOG_ERROR, "cannot make a data file private", "\"error\":\"%s\"", err);
            closedir(d);
            return -1;
        }
        if (rc == 1)
            log_msg(LOG_WARN, "data file was readable by other users: mode set to 0600",
                    "\"file\":\"%s\",\"was\":\"%04o\"", path, (unsigned)was);
    }
    closedir(d);
    return 0;
}

/* Every connection holds a descriptor: take the hard limit, so the HTTP
 * server's connection limit (http_connection_limit) is not the default 1024. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == rl.rlim_max) return;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        log_msg(LOG_WARN, "cannot raise the open file limit", NULL);
}

/* The audit log and its policy (server/audit.h). 0 or -1 with err set. */
static int open_audit(const options *o, server *srv, char *err, size_t n)
{
    char path[4096];
    if (o->audit_log_path && !*o->audit_log_path) return 0;
    if (o->audit_policy_file) {
        char *text = NULL;
        size_t len = 0;
        int rc = secfile_read(o->audit_policy_file, 1 << 20, &text, &len, err, n);
        if (rc == SECFILE_ENOENT) snprintf(err, n, "%s: no such file", o->audit_policy_file);
        if (rc != 0) return -1;
        char e[512];
        srv->audit_policy = audit_policy_parse(text, len, e, sizeof e);
        free(text);
        if (!srv->audit_policy) return snprintf(err, n, "%s: %s", o->audit_policy_file, e), -1;
    } else if (!(srv->audit_policy = audit_policy_default())) {
        return snprintf(err, n, "out of memory"), -1;
    }
    if (o->audit_log_path)
        snprintf(path, sizeof path, "%s", o->audit_log_path);
    else if (secfile_join(path, sizeof path, o->data_dir, "audit.log", err, n) != 0)
        return -1;
    srv->audit = audit_log_open(path, err, n);
    return srv->audit ? 0 : -1;
}

/* `allotd kubeconfig`: a client certificate for a user, and a kubeconfig
 * that uses it, for a platform engineer to hand to a tenant. */
static int kubeconfig_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"data-dir", required_argument, NULL, 'd'}, {"user", required_argument, NULL, 'u'},
        {"group", required_argument, NULL, 'g'},    {"out", required_argument, NULL, 'o'},
        {"days", required_argument, NULL, 'D'},     {"server", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    const char *dir = "./allot-data", *user = NULL, *out = NULL, *server = NULL;
    const char *groups[TLS_CLIENT_MAX_GROUPS];
    size_t ng = 0;
    long days = TLS_CLIENT_DAYS;
    char err[1024], url[512], path[4096], defout[512], *end;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            dir = optarg;
            break;
        case 'u':
            user = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 's':
            server = optarg;
            break;
        case 'g':
            if (ng == TLS_CLIENT_MAX_GROUPS) {
                fprintf(stderr, "allotd kubeconfig: at most %d --group\n", TLS_CLIENT_MAX_GROUPS);
                return 2;
            }
            groups[ng++] = optarg;
            break;
        case 'D':
            days = strtol(optarg, &end, 10);
            if (*end || days < 1 || days > TLS_CA_DAYS) {
                fprintf(stderr, "allotd kubeconfig: --days takes 1 to %d\n", TLS_CA_DAYS);
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc || !user || !*user) {
        fprintf(stderr, "allotd kubeconfig: --user NAME is required (see allotd --help)\n");
        return 2;
    }
    if (!out) {
        if (strchr(user, '/') || user[0] == '.') {
            fprintf(stderr, "allotd kubeconfig: give --out for user %s\n", user);
            return 2;
        }
        snprintf(defout, sizeof defout, "%s.kubeconfig", user);
        out = defout;
    }
    if (!server) {
        if (secfile_join(path, sizeof path, dir, "kubeconfig", err, sizeof err) != 0 ||
            kubeconfig_read_server(path, url, sizeof url, err, sizeof err) != 0) {
            fprintf(stderr, "allotd kubeconfig: %s (give --server URL)\n", err);
            return 1;
        }
        server = url;
    }
    char *ca = NULL, *cert = NULL, *key = NULL;
    int rc = 1;
    if (tls_load(dir, NULL, NULL, &ca, err, sizeof err) != 0 ||
        tls_issue_client(dir, user, groups, ng, (unsigned)days, time(NULL), &cert, &key, err,
                         sizeof err) != 0 ||
        kubeconfig_write_cert(out, server, ca, user, cert, key, err, sizeof err) != 0)
        fprintf(stderr, "allotd kubeconfig: %s\n", err);
    else
        rc = 0;
    if (rc == 0) fprintf(stderr, "wrote %s (user %s, %zu groups, %ld days)\n", out, user, ng, days);
    if (key) memset(key, 0, strlen(key));
    free(key);
    free(cert);
    free(ca);
    return rc;
}

/* Cluster mode's readiness: the cluster's collections listed once. The
 * cluster is started after the listener (its webhooks point here), so
 * /readyz may ask before there is one. */
static _Atomic(cluster *) the_cluster;

static bool cluster_ready(void *arg)
{
    (void)arg;
    cluster *c = atomic_load(&the_cluster);
    return c && cluster_synced(c);
}

static int cluster_guard(void *arg, const struct ar_request *r, api_err *e)
{
    (void)arg;
    cluster *c = atomic_load(&the_cluster);
    return c ? cluster_admit_guard(c, r, e)
             : api_err_set(e, API_UNAVAILABLE, "allot's caches of the cluster are not synced yet");
}

static int cluster_catch_up(void *arg, const struct ar_request *r, api_err *e)
{
    (void)arg;
    cluster *c = atomic_load(&the_cluster);
    return c ? cluster_admit_catch_up(c, r, e)
             : api_err_set(e, API_UNAVAILABLE, "allot's caches of the cluster are not synced yet");
}

static void cluster_undo(void *arg, const struct ar_request *r)
{
    (void)arg;
    cluster *c = atomic_load(&the_cluster);
    if (c) cluster_admit_undo(c, r);
}

static int cluster_mutate(void *arg, const struct ar_request *r, json_t **patch, api_err *e)
{
    (void)arg;
    cluster *c = atomic_load(&the_cluster);
    *patch = NULL;
    return c ? cluster_admit_mutate(c, r, patch, e)
             : api_err_set(e, API_UNAVAILABLE, "allot's caches of the cluster are not synced yet");
}

/* kube-scheduler's extender calls: 503 (it retries the pod) until the
 * cluster is started. */
static int unavailable(char **out)
{
    *out = strdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                  "\"message\":\"allot is starting\",\"reason\":\"ServiceUnavailable\","
                  "\"code\":503}");
    return 503;
}

static int cluster_filter(void *arg, const char *body, size_t len, char **out)
{
    (void)arg;
    cluster *c = atomic_load(&the_cluster);
    return c ? cluster_extender_filter(c, body, len, out) : unavailable(out);
}

static int cluster_bind(void *arg, const char *body, size_t len, char **out)
{
    (void)arg;
    cluster *c = atomic_load(&the_cluster);
    return c ? cluster_extender_bind(c, body, len, out) : unavailable(out);
}

/* Cluster mode (docs/cluster-mode.md): the store is a memory mirror of the
 * cluster that nothing here writes; no controllers, scheduler or node
 * agent (the cluster has its own); the listener serves the webhooks,
 * metrics and reads of the mirror. */
static int run_cluster(const options *o, const sigset_t *sigs)
{
    char err[1024], token[256];
    char *cert = NULL, *key = NULL, *ca = NULL;
    int rc = 1;
    server srv = {0};
    http_server *http = NULL;
    cluster *cl = NULL;
    store_backend be;

    if (secure_data_dir(o->data_dir) != 0) return 1;
    const char *sans[] = {o->bind_address, *o->webhook_host ? o->webhook_host : NULL, NULL};
    /* Replicas behind one Service share one CA (the webhook's caBundle):
     * --tls-dir's files are read as they are, never made or renewed here. */
    if ((!o->tls_dir && tls_ensure(o->data_dir, sans, err, sizeof err) != 0) ||
        tls_load(o->tls_dir ? o->tls_dir : o->data_dir, &cert, &key, &ca, err, sizeof err) != 0) {
        log_msg(LOG_ERROR, "tls setup failed", "\"error\":\"%s\"", err);
        goto out;
    }
    srv.auth = auth_new();
    if (!srv.auth || auth_ensure_admin_token(o->data_dir, token, sizeof token, err, sizeof err) ||
        auth_add_admin_token(srv.auth, token) != 0 ||
        auth_set_client_ca(srv.auth, ca, err, sizeof err) != 0) {
        log_msg(LOG_ERROR, "auth setup failed", "\"error\":\"%s\"", err);
        goto out;
    }
    if (admission_register_defaults() != 0 || authz_init() != 0) {
        log_msg(LOG_ERROR, "cannot register admission plugins", NULL);
        goto out;
    }
    store_memory_backend(&be);
    store_config scfg = {.event_history = (size_t)o->watch_history};
    if (!(srv.st = store_open(&be, reg_indexer, &scfg, err, sizeof err))) {
        log_msg(LOG_ERROR, "cannot open the mirror", "\"error\":\"%s\"", err);
        goto out;
    }
    srv.mirror = true;
    srv.ready = cluster_ready;
    srv.guard = (webhook_guard){cluster_catch_up, cluster_admit_dry_runs, cluster_guard,
                                cluster_undo, cluster_mutate, NULL};
    srv.extender = (scheduler_extender){cluster_filter, cluster_bind, NULL};
    srv.m = metrics_new();
    srv.inflight = inflight_new(INFLIGHT_DEFAULT_LIMIT);
    srv.watches = inflight_new((unsigned)o->max_watches);
    if (!srv.m || !srv.inflight || !srv.watches) goto out;
    snprintf(srv.address, sizeof srv.address, strchr(o->bind_address, ':') ? "[%s]:%d" : "%s:%d",
             o->bind_address, o->port);
    if (!(http = http_start(&srv, o->bind_address, o->port, cert, key, err, sizeof err))) {
        log_msg(LOG_ERROR, "cannot serve", "\"error\":\"%s\"", err);
        goto out;
    }
    cluster_opts co = {o->cluster_kubeconfig, o->webhook_address, ca, o->own_namespace};
    if (!(cl = cluster_start(srv.st, &co, err, sizeof err))) {
        log_msg(LOG_ERROR, "cannot start cluster mode", "\"error\":\"%s\"", err);
        goto out;
    }
    atomic_store(&the_cluster, cl);
    if (write_kubeconfig(o, ca, token) != 0) goto out;

    int sig = 0;
    sigwait(sigs, &sig);
    log_msg(LOG_INFO, "shutting down", "\"signal\":%d", sig);
    rc = 0;
out:
    srv.stopping = 1;
    if (srv.st) store_watch_wake_all(srv.st);
    http_stop(http);
    atomic_store(&the_cluster, NULL);
    cluster_stop(cl); /* (no reflector feeds the mirror after this) */
    store_close(srv.st);
    metrics_free(srv.m);
    authz_cleanup();
    inflight_free(srv.inflight);
    inflight_free(srv.watches);
    auth_free(srv.auth);
    quota_admission_cleanup();
    free(cert);
    free(key);
    free(ca);
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    char err[1024], token[256];
    char *cert = NULL, *key = NULL, *ca = NULL;
    int rc = 1;
    server srv = {0};
    controllers *ctl = NULL;
    quota_controller *qc = NULL;
    node_agent *agent = NULL;
    baseline *base = NULL;
    crd_ctrl *crds = NULL;
    scheduler *sched = NULL;
    http_server *http = NULL;
    satoken_key *sakey = NULL;
    svc_alloc *svcs = NULL;
    kubesvc *kubernetes_svc = NULL;
    store_backend be;

    if (argc > 1 && !strcmp(argv[1], "kubeconfig")) return kubeconfig_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "crds")) return crds_cmd_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "tls")) return tls_cmd_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "webhook-config")) return webhook_cmd_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "scheduler-config"))
        return scheduler_cmd_main(argc - 1, argv + 1);
    if (parse_options(argc, argv, &o) != 0) return 2;
#ifndef ALLOT_JEMALLOC
    /* glibc's malloc (a sanitizer build, or one without jemalloc): one arena
     * per connection thread fragments badly with many small long-lived
     * objects; a few shared arenas keep RSS close to use. */
    mallopt(M_ARENA_MAX, 2);
#endif
    set_log_level(o.log_level);

    /* Signals are taken synchronously by sigwait below; block them in every thread. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    raise_fd_limit();
    if (o.cluster_mode) return run_cluster(&o, &sigs);
    if (!(svcs = svc_alloc_new(o.service_ip_range, o.node_port_range, err, sizeof err))) {
        log_msg(LOG_ERROR, "invalid service ranges", "\"error\":\"%s\"", err);
        goto out;
    }
    if (secure_data_dir(o.data_dir) != 0) goto out;

    const char *sans[] = {o.bind_address, NULL};
    if (tls_ensure(o.data_dir, sans, err, sizeof err) != 0 ||
        tls_load(o.data_dir, &cert, &key, &ca, err, sizeof err) != 0) {
        log_msg(LOG_ERROR, "tls setup failed", "\"error\":\"%s\"", err);
        goto out;
    }
    srv.auth = auth_new();
    if (!srv.auth || auth_ensure_admin_token(o.data_dir, token, sizeof token, err, sizeof err) ||
        auth_add_admin_token(srv.auth, token) != 0) {
        log_msg(LOG_ERROR, "auth setup failed", "\"error\":\"%s\"", err);
        goto out;
    }
    if (o.token_auth_file &&
        auth_load_token_file(srv.auth, o.token_auth_file, err, sizeof err) != 0) {
        log_msg(LOG_ERROR, "cannot load --token-auth-file", "\"error\":\"%s\"", err);
        goto out;
    }
    /* Client certificates signed by our CA, and ServiceAccount tokens signed
     * by DATA-DIR/sa.key (made on first start), authenticate too. */
    if (auth_set_client_ca(srv.auth, ca, err, sizeof err) != 0 ||
        satoken_key_ensure(o.data_dir, &sakey, err, sizeof err) != 0 ||
        auth_set_sa_tokens(srv.auth, sakey, tokenreq_sa_current, &srv) != 0) {
        log_msg(LOG_ERROR, "cannot set up client certificates or service account tokens",
                "\"error\":\"%s\"", err);
        goto out;
    }
    tokenreq_set_max_seconds(o.sa_max_expiration_s);
    if (open_audit(&o, &srv, err, sizeof err) != 0) {
        log_msg(LOG_ERROR, "cannot set up the audit log", "\"error\":\"%s\"", err);
        goto out;
    }
    if (o.admission_config && quota_admission_configure(o.admission_config, err, sizeof err) != 0) {
        log_msg(LOG_ERROR, "cannot load admission configuration", "\"error\":\"%s\"", err);
        goto out;
    }
    if (store_sqlite_open(o.data_dir, &be, err, sizeof err) != 0) {
        log_msg(LOG_ERROR, "cannot open store", "\"error\":\"%s\"", err);
        goto out;
    }
    /* Plugins first: their index parts are computed for what the store loads. */
    if (admission_register_defaults() != 0 || authz_init() != 0) {
        log_msg(LOG_ERROR, "cannot register admission plugins", NULL);
        goto out;
    }
    store_config scfg = {.event_history = (size_t)o.watch_history,
                         .max_object_bytes = (size_t)o.max_object_bytes};
    srv.st = store_open(&be, reg_indexer, &scfg, err, sizeof err);
    if (!srv.st) {
        log_msg(LOG_ERROR, "cannot load store", "\"error\":\"%s\"", err);
        goto out;
    }
    log_msg(LOG_INFO, "store loaded", "\"revision\":%lld", (long long)store_revision(srv.st));
    /* Custom resources' kinds come from stored definitions: served (and
     * their objects indexed) before anything counts objects or serves. */
    int ncrds = crd_controller_restore(srv.st, err, sizeof err);
    if (ncrds < 0) {
        log_msg(LOG_ERROR, "cannot serve stored CustomResourceDefinitions", "\"error\":\"%s\"",
                err);
        goto out;
    }
    log_msg(LOG_INFO, "custom resources served", "\"definitions\":%d", ncrds);
    /* Cluster IPs and node ports are books kept beside the stored Services:
     * recounted from them before any Service is written (svc_alloc.h). */
    svc_alloc_restored sr;
    if (svc_alloc_restore(svcs, srv.st, &sr) != 0 || svc_alloc_register(svcs, srv.st) != 0) {
        log_msg(LOG_ERROR, "cannot recount service cluster IPs and node ports", NULL);
        goto out;
    }
    svc_alloc_info si;
    svc_alloc_info_get(svcs, &si);
    log_msg(LOG_INFO, "service addresses recounted",
            "\"services\":%zu,\"clusterIPRange\":\"%s\",\"clusterIPs\":%zu,"
            "\"nodePortRange\":\"%s\",\"nodePorts\":%zu",
            sr.services, si.ip_range, sr.ips, si.port_range, sr.ports);
    if (sr.outside || sr.conflicts)
        log_msg(LOG_WARN, "stored services hold addresses the ranges do not track",
                "\"outsideRanges\":%zu,\"heldTwice\":%zu", sr.outside, sr.conflicts);
    /* Quota status is a derived write (store.h): after a crash the stored
     * status may trail the stored pods, so the books are recounted before
     * anything can be admitted against them. */
    size_t corrected = 0;
    if (quota_controller_restore(srv.st, &corrected) != 0) {
        log_msg(LOG_ERROR, "cannot recount quotas", NULL);
        goto out;
    }
    log_msg(LOG_INFO, "quotas recounted", "\"restored\":%zu", corrected);
    /* Pools' and custom quotas' statuses that trail their books after a
     * crash are written now: readers only render them. */
    pool_admission_restore(srv.st);
    cq_admission_restore(srv.st);
    /* Charges live in the quota ledger; their status reaches the quota
     * objects at most this late (and before any client reads quotas). */
    if (quota_ledger_start(srv.st, QUOTA_LEDGER_FLUSH_MS) != 0) {
        log_msg(LOG_ERROR, "cannot start the quota ledger", NULL);
        goto out;
    }
    if (pool_admission_start_events(srv.st) != 0) {
        log_msg(LOG_ERROR, "cannot start the resourcepool event recorder", NULL);
        goto out;
    }
    srv.m = metrics_new();
    srv.inflight = inflight_new(INFLIGHT_DEFAULT_LIMIT);
    srv.watches = inflight_new((unsigned)o.max_watches);
    if (!srv.m || !srv.inflight || !srv.watches || bootstrap_namespaces(srv.st) != 0 ||
        bootstrap_priority_classes(srv.st) != 0)
        goto out;
    if (authz_bootstrap(srv.st, err, sizeof err) != 0) {
        log_msg(LOG_ERROR, "cannot write the default RBAC roles", "\"error\":\"%s\"", err);
        goto out;
    }
    ctl = controllers_start(srv.st, err, sizeof err);
    if (!ctl) {
        log_msg(LOG_ERROR, "cannot start controllers", "\"error\":\"%s\"", err);
        goto out;
    }
    if (!(crds = crd_controller_start(srv.st, err, sizeof err))) {
        log_msg(LOG_ERROR, "cannot start the CustomResourceDefinition controller",
                "\"error\":\"%s\"", err);
        goto out;
    }
    /* Every namespace gets upstream's ServiceAccount "default" and
     * ConfigMap kube-root-ca.crt (our CA), through quota like any client. */
    if (!(base = baseline_start(srv.st, ca, err, sizeof err))) {
        log_msg(LOG_ERROR, "cannot start the namespace baseline controller", "\"error\":\"%s\"",
                err);
        goto out;
    }
    snprintf(srv.address, sizeof srv.address, strchr(o.bind_address, ':') ? "[%s]:%d" : "%s:%d",
             o.bind_address, o.port);
    /* Services an older allotd stored without a cluster IP get one; then
     * the cluster's own Service and Endpoints. */
    if (sr.missing && svc_alloc_repair(svcs, srv.st) != 0)
        log_msg(LOG_WARN, "some stored services could not be given a cluster IP", NULL);
    char advertise[64];
    advertise_address(&o, advertise, sizeof advertise);
    kubesvc_config kc = {svc_alloc_service_ip(svcs), advertise, o.port};
    if (!(kubernetes_svc = kubesvc_start(srv.st, &kc, err, sizeof err))) {
        log_msg(LOG_ERROR, "cannot start the kubernetes service controller", "\"error\":\"%s\"",
                err);
        goto out;
    }
    qc = quota_controller_start(srv.st, o.quota_sync_s, err, sizeof err);
    if (!qc) {
        log_msg(LOG_ERROR, "cannot start quota controller", "\"error\":\"%s\"", err);
        goto out;
    }
    if (nodeagent_ensure_nodes(srv.st, o.simulated_nodes, err, sizeof err) != 0) {
        log_msg(LOG_ERROR, "cannot create simulated nodes", "\"error\":\"%s\"", err);
        goto out;
    }
    if (o.node_agent) {
        reg_set_graceful_pod_deletion(true);
        if (!(agent = nodeagent_start(srv.st, &(nodeagent_opts){o.job_run_ms}, err, sizeof err))) {
            log_msg(LOG_ERROR, "cannot start node agent", "\"error\":\"%s\"", err);
            goto out;
        }
    }
    if (o.scheduler && !(sched = scheduler_start(srv.st, err, sizeof err))) {
        log_msg(LOG_ERROR, "cannot start scheduler", "\"error\":\"%s\"", err);
        goto out;
    }
    http = http_start(&srv, o.bind_address, o.port, cert, key, err, sizeof err);
    if (!http) {
        log_msg(LOG_ERROR, "cannot serve", "\"error\":\"%s\"", err);
        goto out;
    }
    if (write_kubeconfig(&o, ca, token) != 0) goto out;

    int sig = 0;
    sigwait(&sigs, &sig);
    log_msg(LOG_INFO, "shutting down", "\"signal\":%d", sig);
    rc = 0;
out:
    srv.stopping = 1;
    if (srv.st) store_watch_wake_all(srv.st);
    /* Open watches end their streams first (the last chunk sent), so clients
     * see a clean end rather than a cut connection. Bounded: a client that
     * reads nothing is cut after a second. */
    for (int i = 0; i < 100 && http && metrics_watches(srv.m) > 0; i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    http_stop(http);
    scheduler_stop(sched);
    nodeagent_stop(agent);
    quota_controller_stop(qc);
    baseline_stop(base);
    kubesvc_stop(kubernetes_svc);
    crd_controller_stop(crds);
    controllers_stop(ctl);
    pool_admission_stop_events(); /* writes what is queued */
    quota_ledger_stop();          /* writes what is pending */
    store_close(srv.st);
    svc_alloc_free(svcs); /* (its hook ran in the store's transactions) */
    crd_kinds_cleanup();  /* nothing serves or watches any more */
    metrics_free(srv.m);
    authz_cleanup();
    audit_log_close(srv.audit);
    inflight_free(srv.inflight);
    inflight_free(srv.watches);
    audit_policy_free(srv.audit_policy);
    auth_free(srv.auth);
    satoken_key_free(sakey);
    quota_admission_cleanup();
    free(cert);
    free(key);
    free(ca);
    return rc;
}
