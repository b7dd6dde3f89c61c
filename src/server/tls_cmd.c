/* tls_cmd.c - `allotd tls` (see tls_cmd.h). */
#include "server/tls_cmd.h"

#include "server/tls.h"
#include "util/secfile.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The Service's names: what the webhook configuration's clientConfig.service
 * makes the API server dial (<service>.<namespace>.svc), and the fully
 * qualified form for clients inside the cluster. */
#define SERVICE_NAME "allot"
#define SERVICE_SANS 2
/* kube-scheduler's client certificate for allot's extender (CN, files). */
#define SCHEDULER_CLIENT_USER "allot:kube-scheduler"
#define SCHEDULER_CLIENT_CERT "scheduler.crt"
#define SCHEDULER_CLIENT_KEY "scheduler.key"

/* Issue (or renew) kube-scheduler's client certificate into dir: 0, or -1
 * with err. */
static int scheduler_client(const char *dir, char *err, size_t errlen)
{
    char *cert = NULL, *key = NULL, cpath[4096], kpath[4096];
    int rc = secfile_join(cpath, sizeof cpath, dir, SCHEDULER_CLIENT_CERT, err, errlen) ||
                     secfile_join(kpath, sizeof kpath, dir, SCHEDULER_CLIENT_KEY, err, errlen) ||
                     tls_issue_client(dir, SCHEDULER_CLIENT_USER, NULL, 0, TLS_CLIENT_DAYS,
                                      time(NULL), &cert, &key, err, errlen)
                 ? -1
                 : 0;
    if (rc == 0 && (secfile_write(kpath, key, strlen(key), 0600, 0, err, errlen) != 0 ||
                    secfile_write(cpath, cert, strlen(cert), 0644, 0, err, errlen) != 0))
        rc = -1;
    if (key) memset(key, 0, strlen(key));
    free(key);
    free(cert);
    return rc;
}

static void tls_usage(FILE *f)
{
    fputs("usage: allotd tls --out DIR [--namespace NS] [--san NAME]...\n"
          "Make (or keep) in DIR a CA (ca.crt, ca.key) and a serving certificate signed by it\n"
          "(server.crt, server.key) for the Service allot in NS (default allot-system):\n"
          "allot.NS.svc, allot.NS.svc.cluster.local and every --san (DNS name or IP).\n"
          "Run again to renew the serving certificate; the CA is kept. The pods need\n"
          "ca.crt, server.crt and server.key (the Secret allot-tls), never ca.key:\n"
          "  kubectl create secret generic allot-tls -n NS --from-file=DIR/ca.crt \\\n"
          "      --from-file=DIR/server.crt --from-file=DIR/server.key\n"
          "Also a client certificate for kube-scheduler, which allot's extender requires\n"
          "(scheduler.crt, scheduler.key: allotd scheduler-config --client-cert/--client-key).\n",
          f);
}

int tls_cmd_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},
        {"namespace", required_argument, NULL, 'n'},
        {"san", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *ns = "allot-system";
    /* The Service's names first, then --san, then the NULL tls_ensure wants. */
    const char *sans[SERVICE_SANS + TLS_MAX_EXTRA_SANS + 1] = {NULL};
    size_t n = SERVICE_SANS;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:n:s:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'n':
            ns = optarg;
            break;
        case 's':
            if (n == SERVICE_SANS + TLS_MAX_EXTRA_SANS) {
                fprintf(stderr, "allotd tls: at most %d --san\n", TLS_MAX_EXTRA_SANS);
                return 2;
            }
            sans[n++] = optarg;
            break;
        case 'h':
            tls_usage(stdout);
            return 0;
        default:
            tls_usage(stderr);
            return 2;
        }
    }
    /* A namespace name is a DNS label (at most 63 bytes): a longer or empty
     * one cannot be part of the Service's name. */
    if (optind < argc || !out || !*out || !*ns || strlen(ns) > 63) {
        tls_usage(stderr);
        return 2;
    }
    char svc[128], fqdn[160], err[1024];
    snprintf(svc, sizeof svc, "%s.%s.svc", SERVICE_NAME, ns);
    snprintf(fqdn, sizeof fqdn, "%s.cluster.local", svc);
    sans[0] = svc;
    sans[1] = fqdn;
    if (tls_ensure(out, sans, err, sizeof err) != 0 || scheduler_client(out, err, sizeof err) != 0) {
        fprintf(stderr, "allotd tls: %s\n", err);
        return 1;
    }
    fprintf(stderr, "%s: %s and %s for %s, %s", out, TLS_CA_CERT_FILE, TLS_SERVER_CERT_FILE, svc,
            fqdn);
    for (size_t i = SERVICE_SANS; i < n; i++)
        fprintf(stderr, ", %s", sans[i]);
    fprintf(stderr, "; %s for kube-scheduler\n", SCHEDULER_CLIENT_CERT);
    return 0;
}
