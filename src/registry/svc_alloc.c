/* svc_alloc.c - Service cluster IPs and node ports, allocated in the
 * Service's own transaction (see svc_alloc.h).
 *
 * The write hook follows upstream's storage (pkg/registry/core/service/
 * storage: beginCreate/beginUpdate/afterDelete and alloc.go): the linked
 * fields are completed first (api/service_spec.h), then the cluster IP and
 * node ports are allocated (or the requested ones reserved), then, on an
 * update, what the old Service held and the new one does not is released.
 *
 * The books change in place as the transaction runs; `log` remembers the
 * transaction's changes: allocations are undone if it aborts, releases are
 * applied only if it commits (upstream's ReleaseDeferred), so a value
 * released by a write is not handed out again by that same write.
 */
#include "registry/svc_alloc.h"
#include "core/jdump.h"

#include "api/kinds.h"
#include "api/service_spec.h"
#include "api/status.h"
#include "api/validation.h"
#include "core/bitalloc.h"
#include "core/jget.h"
#include "core/svcrange.h"
#include "registry/registry.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define KUBERNETES_NS "default"
#define KUBERNETES_NAME "kubernetes"
#define MSG_IP_TAKEN "provided IP is already allocated"
#define MSG_PORT_TAKEN "provided port is already allocated"
#define MSG_FULL "range is full"

enum { BOOK_IP, BOOK_PORT };
enum { CH_ALLOC, CH_RELEASE };

typedef struct change {
    unsigned char book, op;
    uint32_t off;
} change;

struct svc_alloc {
    svc_iprange ipr;
    svc_portrange pr;
    bitalloc *ips, *ports;
    char service_ip[64];
    uint64_t rng;
    pthread_mutex_t mu; /* for svc_alloc_info_get; the books are the writer lock's */
    /* the open transaction's changes */
    store_txn *txn;
    change *log;
    size_t nlog, caplog;
    /* A batch the backend refused was undone (store_on_reset): the books
     * may hold what its Services took; recounted by the next write. */
    bool stale;
};

static int recount_in(svc_alloc *a, store_txn *t, svc_alloc_restored *out);

/* ---- books and the transaction ---- */

static uint64_t next_rand(svc_alloc *a)
{
    uint64_t x = a->rng; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    a->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static bitalloc *book(svc_alloc *a, int which)
{
    return which == BOOK_IP ? a->ips : a->ports;
}

/* The end of the transaction the books were changed in. */
static void on_txn_end(void *arg, int64_t rev, bool committed)
{
    (void)rev;
    svc_alloc *a = arg;
    pthread_mutex_lock(&a->mu);
    for (size_t i = a->nlog; i-- > 0;) {
        change *c = &a->log[i];
        if (committed && c->op == CH_RELEASE) ba_clear(book(a, c->book), c->off);
        if (!committed && c->op == CH_ALLOC) ba_clear(book(a, c->book), c->off);
    }
    pthread_mutex_unlock(&a->mu);
    a->nlog = 0;
    a->txn = NULL;
}

static int bind_txn(svc_alloc *a, store_txn *t)
{
    if (a->txn == t) return 0;
    if (store_txn_on_end(t, on_txn_end, a) != 0) return -1;
    a->txn = t;
    a->nlog = 0;
    return 0;
}

/* Room in the log for one more change. */
static int log_room(svc_alloc *a)
{
    if (a->nlog < a->caplog) return 0;
    size_t nc = a->caplog ? a->caplog * 2 : 16;
    change *nv = realloc(a->log, nc * sizeof *nv);
    if (!nv) return -1;
    a->log = nv;
    a->caplog = nc;
    return 0;
}

static void note(svc_alloc *a, int which, int op, uint32_t off)
{
    a->log[a->nlog++] = (change){(unsigned char)which, (unsigned char)op, off};
}

/* Take off in the open transaction: 0, 1 when it is taken already, -1 when
 * out of memory. */
static int take(svc_alloc *a, int which, uint32_t off)
{
    if (log_room(a) != 0) return -1;
    pthread_mutex_lock(&a->mu);
    bool ok = ba_set(book(a, which), off);
    pthread_mutex_unlock(&a->mu);
    if (ok) note(a, which, CH_ALLOC, off);
    return ok ? 0 : 1;
}

/* Take the next free offset: 0, 1 when the range is full, -1 when out of memory. */
static int take_next(svc_alloc *a, int which, uint32_t *off)
{
    if (log_room(a) != 0) return -1;
    pthread_mutex_lock(&a->mu);
    bool ok = ba_next(book(a, which), next_rand(a), off);
    pthread_mutex_unlock(&a->mu);
    if (ok) note(a, which, CH_ALLOC, *off);
    return ok ? 0 : 1;
}

/* Release off when the open transaction commits (kept until a restart's
 * recount if there is no memory to remember it). */
static void release_at_commit(svc_alloc *a, int which, uint32_t off)
{
    if (ba_has(book(a, which), off) && log_room(a) == 0) note(a, which, CH_RELEASE, off);
}

/* ---- errors ---- */

static const char *svc_name(const json_t *svc)
{
    return jtext(svc, "metadata", "name");
}

/* upstream's errors.NewInternalError */
static int internal(api_err *e, const char *fmt, const char *what)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, what);
    api_err_set(e, API_INTERNAL, "Internal error occurred: %s", msg);
    json_decref(e->details);
    e->details = json_pack("{s:[{s:s}]}", "causes", "message", msg);
    return -1;
}

static int oom(api_err *e)
{
    return api_err_set(e, API_INTERNAL, "Service allocation failed: out of memory");
}

/* ---- cluster IPs ---- */

static bool is_kubernetes(const json_t *svc)
{
    return !strcmp(jtext(svc, "metadata", "namespace"), KUBERNETES_NS) &&
           !strcmp(svc_name(svc), KUBERNETES_NAME);
}

/* Reserve the requested ip for svc. 0, or -1 with a 422 in e. */
static int reserve_ip(svc_alloc *a, json_t *svc, const char *ip, api_err *e)
{
    uint32_t off;
    char detail[512];
    ipr_where w = ipr_offset(&a->ipr, ip, &off);
    if (w == IPR_IN && off == 0 && is_kubernetes(svc)) return 0; /* kept for it */
    int rc = w == IPR_IN && off != 0 ? take(a, BOOK_IP, off) : 1;
    if (rc == 0) return 0;
    if (rc < 0) return oom(e);
    if (w == IPR_IN)
        snprintf(detail, sizeof detail, "failed to allocate IP %s: " MSG_IP_TAKEN, ip);
    else
        snprintf(detail, sizeof detail,
                 "failed to allocate IP %s: the provided IP (%s) is not in the valid range. The "
                 "range of valid IPs is %s",
                 ip, ip, a->ipr.cidr);
    json_t *causes = json_array();
    val_invalid_strings(causes, "spec.clusterIPs", jget(svc, "spec", "clusterIPs"), detail);
    return api_err_invalid(e, "", "Service", svc_name(svc), causes);
}

/* allocClusterIPs: the requested IP reserved, or the next one set. */
static int alloc_cluster_ip(svc_alloc *a, json_t *svc, api_err *e)
{
    if (!svcspec_needs_cluster_ip(svc) || svcspec_headless(svc)) return 0;
    json_t *spec = json_object_get(svc, "spec");
    const char *want = json_string_value(json_array_get(json_object_get(spec, "clusterIPs"), 0));
    if (want && *want) return reserve_ip(a, svc, want, e);
    uint32_t off;
    int rc = take_next(a, BOOK_IP, &off);
    if (rc < 0) return oom(e);
    if (rc > 0) return internal(e, "failed to allocate a serviceIP: %s", MSG_FULL);
    char ip[64];
    ipr_format(&a->ipr, off, ip, sizeof ip);
    json_object_set_new(spec, "clusterIP", json_string(ip));
    json_object_set_new(spec, "clusterIPs", json_pack("[s]", ip));
    return 0;
}

/* Release (at commit) the cluster IPs svc holds. */
static void release_ips(svc_alloc *a, const json_t *svc)
{
    size_t i;
    const json_t *ip;
    uint32_t off;
    json_array_foreach(jget(svc, "spec", "clusterIPs"), i, ip)
    {
        if (ipr_offset(&a->ipr, json_string_value(ip), &off) == IPR_IN && off != 0)
            release_at_commit(a, BOOK_IP, off);
    }
}

/* ---- node ports ---- */

static json_int_t node_port(const json_t *p)
{
    return json_integer_value(json_object_get(p, "nodePort"));
}

/* Reserve the requested node port np for port i. 0, or -1 with a 422. */
static int reserve_port(svc_alloc *a, const json_t *svc, size_t i, json_int_t np, api_err *e)
{
    uint32_t off;
    bool in = portr_offset(&a->pr, np, &off);
    int rc = in ? take(a, BOOK_PORT, off) : 1;
    if (rc == 0) return 0;
    if (rc < 0) return oom(e);
    char field[64], detail[160];
    snprintf(field, sizeof field, "spec.ports[%zu].nodePort", i);
    if (in)
        snprintf(detail, sizeof detail, MSG_PORT_TAKEN);
    else
        snprintf(detail, sizeof detail,
                 "provided port is not in the valid range. The range of valid ports is %s",
                 a->pr.text);
    json_t *causes = json_array(), *v = json_integer(np);
    ferr_add(causes, FERR_INVALID, field, v, detail);
    json_decref(v);
    return api_err_invalid(e, "", "Service", svc_name(svc), causes);
}

/* The next free node port, or -1 with a 500. */
static json_int_t next_port(svc_alloc *a, api_err *e)
{
    uint32_t off;
    int rc = take_next(a, BOOK_PORT, &off);
    if (rc < 0) return oom(e);
    if (rc > 0) return internal(e, "failed to allocate a nodePort: %s", MSG_FULL);
    return (json_int_t)(a->pr.base + off);
}

/* findRequestedNodePort: the node port an entry for the same port number asks for. */
static json_int_t requested_for(const json_t *ports, json_int_t port)
{
    size_t i;
    const json_t *p;
    json_array_foreach(ports, i, p)
    {
        if (json_integer_value(json_object_get(p, "port")) == port && node_port(p))
            return node_port(p);
    }
    return 0;
}

/* The node port given to an earlier entry (before `upto`) for the same port
 * number: upstream's svcPortToNodePort, which records the first. */
static json_int_t given_for(const json_t *ports, size_t upto, json_int_t port,
                            const json_int_t *got)
{
    for (size_t k = 0; k < upto; k++)
        if (got[k] && json_integer_value(json_object_get(json_array_get(ports, k), "port")) == port)
            return got[k];
    return 0;
}

/* initNodePorts (create): entries for one port number share one node port. */
static int alloc_node_ports(svc_alloc *a, json_t *svc, api_err *e)
{
    if (!svcspec_needs_node_ports(svc)) return 0;
    bool alloc = svcspec_allocates_node_ports(svc);
    json_t *ports = json_object_get(json_object_get(svc, "spec"), "ports");
    size_t n = json_array_size(ports), i;
    json_int_t *got = calloc(n ? n : 1, sizeof *got); /* what each entry was first given */
    if (!got) return oom(e);
    int rc = 0;
    json_t *p;
    json_array_foreach(ports, i, p)
    {
        json_int_t np = node_port(p), port = json_integer_value(json_object_get(p, "port"));
        if (!np && !alloc) continue;
        json_int_t have = given_for(ports, i, port, got);
        if (!have) {
            json_int_t want = requested_for(ports, port);
            if (want && (rc = reserve_port(a, svc, i, want, e)) != 0) break;
            json_int_t v = want ? want : next_port(a, e);
            if ((rc = v < 0 ? -1 : 0) != 0) break;
            json_object_set_new(p, "nodePort", json_integer(v));
            got[i] = v;
        } else if (np != have) {
            if (!np)
                json_object_set_new(p, "nodePort", json_integer(have));
            else if ((rc = reserve_port(a, svc, i, np, e)) != 0)
                break;
        }
    }
    free(got);
    return rc;
}

/* Whether svc's ports (or health check) hold node port np. */
static bool holds_port(const json_t *svc, json_int_t np)
{
    size_t i;
    const json_t *p;
    json_array_foreach(jget(svc, "spec", "ports"), i, p) if (node_port(p) == np) return true;
    return false;
}

static void release_port(svc_alloc *a, json_int_t np)
{
    uint32_t off;
    if (np && portr_offset(&a->pr, np, &off)) release_at_commit(a, BOOK_PORT, off);
}

/* updateNodePorts: new values reserved, the old ones the new service does
 * not keep released (at commit). */
static int update_node_ports(svc_alloc *a, json_t *svc, const json_t *old, api_err *e)
{
    bool alloc = svcspec_allocates_node_ports(svc);
    json_t *ports = json_object_get(json_object_get(svc, "spec"), "ports");
    size_t n = json_array_size(ports), i, nseen = 0, nres = 0;
    /* upstream's portAllocated (values reserved here) and newNodePorts */
    json_int_t *reserved = calloc(n ? n : 1, sizeof *reserved);
    const json_t **seen = calloc(n ? n : 1, sizeof *seen);
    int rc = reserved && seen ? 0 : oom(e);
    json_t *p;
    json_array_foreach(ports, i, p)
    {
        if (rc != 0) break;
        json_int_t np = node_port(p);
        if (!np && !alloc) continue;
        if (np) {
            bool again = false;
            for (size_t k = 0; k < nres; k++)
                again |= reserved[k] == np;
            if (!holds_port(old, np) && !again) {
                if ((rc = reserve_port(a, svc, i, np, e)) != 0) break;
                reserved[nres++] = np;
            }
        } else {
            json_int_t v = next_port(a, e);
            if ((rc = v < 0 ? -1 : 0) != 0) break;
            json_object_set_new(p, "nodePort", json_integer(v));
            np = v;
        }
        for (size_t k = 0; k < nseen; k++) {
            if (node_port(seen[k]) == np &&
                !strcmp(jtext(seen[k], "protocol"), jtext(p, "protocol"))) {
                char what[96];
                snprintf(what, sizeof what, "{%s %lld}", jtext(p, "protocol"), (long long)np);
                rc = internal(e, "duplicate nodePort: %s", what);
            }
        }
        seen[nseen++] = p;
    }
    if (rc == 0) {
        json_array_foreach(jget(old, "spec", "ports"), i, p)
        {
            if (node_port(p) && !holds_port(svc, node_port(p))) release_port(a, node_port(p));
        }
    }
    free(reserved);
    free(seen);
    return rc;
}

/* allocHealthCheckNodePort: its errors are 500s upstream. */
static int alloc_hc_port(svc_alloc *a, json_t *svc, api_err *e)
{
    json_t *spec = json_object_get(svc, "spec");
    json_int_t hc = json_integer_value(json_object_get(spec, "healthCheckNodePort"));
    uint32_t off;
    char what[256];
    if (hc) {
        bool in = portr_offset(&a->pr, hc, &off);
        int rc = in ? take(a, BOOK_PORT, off) : 1;
        if (rc <= 0) return rc == 0 ? 0 : oom(e);
        if (in)
            snprintf(what, sizeof what, "%lld: " MSG_PORT_TAKEN, (long long)hc);
        else
            snprintf(what, sizeof what,
                     "%lld: provided port is not in the valid range. The range of valid ports "
                     "is %s",
                     (long long)hc, a->pr.text);
        return internal(e, "failed to allocate requested HealthCheck NodePort %s", what);
    }
    int rc = take_next(a, BOOK_PORT, &off);
    if (rc < 0) return oom(e);
    if (rc > 0) return internal(e, "failed to allocate a HealthCheck NodePort 0: %s", MSG_FULL);
    json_object_set_new(spec, "healthCheckNodePort", json_integer(a->pr.base + off));
    return 0;
}

/* ---- the hook ---- */

static int on_create(svc_alloc *a, json_t *svc, api_err *e)
{
    svcspec_normalize_ips(svc, NULL);
    if (svcspec_init_families(svc, NULL, ipr_family(&a->ipr), e) != 0 ||
        alloc_cluster_ip(a, svc, e) != 0 || alloc_node_ports(a, svc, e) != 0)
        return -1;
    return svcspec_needs_hc_node_port(svc) ? alloc_hc_port(a, svc, e) : 0;
}

/* A Service an older allotd stored without the cluster IP its type needs. */
static bool lacks_ip(const json_t *svc)
{
    return svcspec_needs_cluster_ip(svc) && !*jtext(svc, "spec", "clusterIP") &&
           !json_array_size(jget(svc, "spec", "clusterIPs"));
}

/* updateClusterIPs: from ExternalName a new IP, to ExternalName a release. */
static int update_cluster_ips(svc_alloc *a, json_t *svc, const json_t *old, api_err *e)
{
    bool was = svcspec_needs_cluster_ip(old), now = svcspec_needs_cluster_ip(svc);
    if ((!was || lacks_ip(old)) && now) return alloc_cluster_ip(a, svc, e);
    if (svcspec_headless(old)) return 0;
    if (was && !now) release_ips(a, old);
    return 0;
}

static int on_update(svc_alloc *a, json_t *svc, const json_t *old, api_err *e)
{
    svcspec_patch_allocated(svc, old);
    svcspec_normalize_ips(svc, old);
    if (svcspec_init_families(svc, old, ipr_family(&a->ipr), e) != 0 ||
        update_cluster_ips(a, svc, old, e) != 0)
        return -1;
    if (svcspec_needs_node_ports(old) && !svcspec_needs_node_ports(svc)) {
        size_t i;
        const json_t *p;
        json_array_foreach(jget(old, "spec", "ports"), i, p) release_port(a, node_port(p));
    }
    if (svcspec_needs_node_ports(svc) && update_node_ports(a, svc, old, e) != 0) return -1;
    bool had_hc = svcspec_needs_hc_node_port(old), hc = svcspec_needs_hc_node_port(svc);
    if (!had_hc && hc && alloc_hc_port(a, svc, e) != 0) return -1;
    if (had_hc && !hc)
        release_port(a, json_integer_value(jget(old, "spec", "healthCheckNodePort")));
    svcspec_drop_type_dependent(svc, old);
    return 0;
}

static void on_delete(svc_alloc *a, const json_t *svc)
{
    release_ips(a, svc);
    size_t i;
    const json_t *p;
    json_array_foreach(jget(svc, "spec", "ports"), i, p) release_port(a, node_port(p));
    release_port(a, json_integer_value(jget(svc, "spec", "healthCheckNodePort")));
}

static int write_hook(void *arg, store_txn *t, reg_op op, const char *sub, json_t *obj,
                      const json_t *old, bool dry_run, api_err *e)
{
    (void)dry_run; /* a dry run's transaction aborts: its allocations are undone */
    svc_alloc *a = arg;
    if (*sub) return 0; /* status: the spec is the stored one */
    if (a->stale) {
        if (recount_in(a, t, NULL) != 0) return oom(e);
        a->stale = false;
    }
    if (bind_txn(a, t) != 0) return oom(e);
    switch (op) {
    case REG_CREATE:
        return on_create(a, obj, e);
    case REG_UPDATE:
        return on_update(a, obj, old, e);
    case REG_DELETE:
        on_delete(a, obj);
        return 0;
    }
    return 0;
}

static void on_reset(void *arg);

int svc_alloc_register(svc_alloc *a, store *st)
{
    const api_kind *k = api_kind_find("", "v1", "services");
    if (!k || reg_write_hook_register(k, write_hook, a) != 0) return -1;
    return st ? store_on_reset(st, on_reset, a) : 0;
}

/* ---- life ---- */

svc_alloc *svc_alloc_new(const char *ip_range, const char *port_range, char *err, size_t n)
{
    svc_alloc *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, n, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&a->mu, NULL);
    if (ipr_parse(ip_range, "--service-cluster-ip-range", &a->ipr, err, n) != 0 ||
        portr_parse(port_range, "--service-node-port-range", &a->pr, err, n) != 0)
        goto fail;
    if (!(a->ips = ba_new(a->ipr.max, a->ipr.band)) ||
        !(a->ports = ba_new(a->pr.size, a->pr.band))) {
        snprintf(err, n, "out of memory");
        goto fail;
    }
    ba_set(a->ips, 0); /* default/kubernetes's, for good */
    ipr_format(&a->ipr, 0, a->service_ip, sizeof a->service_ip);
    if (getrandom(&a->rng, sizeof a->rng, 0) != sizeof a->rng || !a->rng)
        a->rng = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uintptr_t)a;
    return a;
fail:
    svc_alloc_free(a);
    return NULL;
}

void svc_alloc_free(svc_alloc *a)
{
    if (!a) return;
    ba_free(a->ips);
    ba_free(a->ports);
    free(a->log);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

const char *svc_alloc_service_ip(const svc_alloc *a)
{
    return a->service_ip;
}

void svc_alloc_info_get(svc_alloc *a, svc_alloc_info *out)
{
    pthread_mutex_lock(&a->mu);
    snprintf(out->ip_range, sizeof out->ip_range, "%s", a->ipr.cidr);
    snprintf(out->port_range, sizeof out->port_range, "%s", a->pr.text);
    out->ips = ba_max(a->ips);
    out->ips_used = ba_count(a->ips);
    out->ports = ba_max(a->ports);
    out->ports_used = ba_count(a->ports);
    pthread_mutex_unlock(&a->mu);
}

/* ---- recount ---- */

static void mark_ip(svc_alloc *a, const json_t *svc, const char *ip, svc_alloc_restored *r)
{
    uint32_t off;
    if (ipr_offset(&a->ipr, ip, &off) != IPR_IN) {
        r->outside++;
        return;
    }
    if (off == 0 && is_kubernetes(svc)) return;
    if (ba_set(a->ips, off))
        r->ips++;
    else
        r->conflicts++;
}

static void mark_port(svc_alloc *a, json_int_t np, svc_alloc_restored *r)
{
    uint32_t off;
    if (!np) return;
    if (!portr_offset(&a->pr, np, &off))
        r->outside++;
    else if (ba_set(a->ports, off))
        r->ports++;
    else
        r->conflicts++;
}

/* One stored Service's values. Entries for one port number share a node
 * port (initNodePorts): each distinct value is marked once. */
static void mark_service(svc_alloc *a, const json_t *svc, svc_alloc_restored *r)
{
    size_t i, k;
    const json_t *v, *p;
    if (svcspec_needs_cluster_ip(svc) && !svcspec_headless(svc)) {
        if (lacks_ip(svc)) r->missing++;
        json_array_foreach(jget(svc, "spec", "clusterIPs"), i, v)
            mark_ip(a, svc, json_string_value(v), r);
        if (!json_array_size(jget(svc, "spec", "clusterIPs")) && *jtext(svc, "spec", "clusterIP"))
            mark_ip(a, svc, jtext(svc, "spec", "clusterIP"), r);
    }
    const json_t *ports = jget(svc, "spec", "ports");
    json_array_foreach(ports, i, p)
    {
        bool dup = false;
        for (k = 0; k < i && !dup; k++)
            dup = node_port(json_array_get(ports, k)) == node_port(p);
        if (!dup) mark_port(a, node_port(p), r);
    }
    mark_port(a, json_integer_value(jget(svc, "spec", "healthCheckNodePort")), r);
}

/* store_on_reset: under the writer lock, between transactions. */
static void on_reset(void *arg)
{
    ((svc_alloc *)arg)->stale = true;
}

int svc_alloc_restore(svc_alloc *a, store *st, svc_alloc_restored *out)
{
    store_txn *t = store_begin(st);
    if (!t) return -1;
    int rc = recount_in(a, t, out);
    store_abort(t);
    return rc;
}

/* The books made anew from the Services t sees (every bit cleared first but
 * default/kubernetes's). */
static int recount_in(svc_alloc *a, store_txn *t, svc_alloc_restored *out)
{
    svc_alloc_restored r = {0};
    bitalloc *ips = ba_new(a->ipr.max, a->ipr.band), *ports = ba_new(a->pr.size, a->pr.band);
    if (!ips || !ports) {
        ba_free(ips);
        ba_free(ports);
        return -1;
    }
    ba_set(ips, 0);
    pthread_mutex_lock(&a->mu);
    ba_free(a->ips);
    ba_free(a->ports);
    a->ips = ips;
    a->ports = ports;
    pthread_mutex_unlock(&a->mu);
    store_obj **objs = NULL;
    size_t n = 0;
    int rc = store_txn_list(t, "services/", &objs, &n);
    /* Only what the books need, not the whole object (a Service's metadata
     * is most of it), and not kept: store_obj_doc would cache every parse. */
    static const char *const parts[] = {"spec", "metadata.name", "metadata.namespace", NULL};
    pthread_mutex_lock(&a->mu);
    for (size_t i = 0; i < n; i++) {
        json_t *svc = store_obj_parse_parts(objs[i], parts);
        if (svc) {
            r.services++;
            mark_service(a, svc, &r);
        }
        json_decref(svc);
        store_obj_unref(objs[i]);
    }
    pthread_mutex_unlock(&a->mu);
    free(objs);
    if (out) *out = r;
    return rc;
}

/* ---- repair of Services an older allotd stored ---- */

static json_t *same(const json_t *cur, void *ctx, api_err *e)
{
    (void)ctx;
    json_t *c = jcopy(cur);
    if (!c) api_err_set(e, API_INTERNAL, "out of memory");
    return c;
}

/* Whether a stored Service lacks what its type needs (the update gives it). */
static bool needs_repair(const json_t *svc)
{
    if (svcspec_headless(svc)) return false;
    if (lacks_ip(svc)) return true;
    if (!svcspec_allocates_node_ports(svc)) return false;
    size_t i;
    const json_t *p;
    json_array_foreach(jget(svc, "spec", "ports"), i, p) if (!node_port(p)) return true;
    return false;
}

int svc_alloc_repair(svc_alloc *a, store *st)
{
    (void)a;
    const api_kind *k = api_kind_find("", "v1", "services");
    store_obj **objs = NULL;
    size_t n = 0;
    int rc = 0;
    if (!k || store_list(st, "services/", NULL, 0, &objs, &n, NULL, NULL) != 0) return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *svc = store_obj_doc(objs[i]);
        if (svc && needs_repair(svc)) {
            api_err e;
            api_err_init(&e);
            json_t *outobj = NULL;
            if (reg_update(st, k, objs[i]->ns, objs[i]->name, "", same, NULL, false, &outobj, &e) !=
                    0 &&
                e.code != API_NOT_FOUND)
                rc = -1;
            json_decref(outobj);
            api_err_clear(&e);
        }
        json_decref(svc);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return rc;
}
