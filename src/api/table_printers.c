/* table_printers.c - one printer per served kind: the columns and the row
 * function of upstream pkg/printers/internalversion/printers.go (v1.32),
 * rewritten over the JSON (v1) form of the objects. Rows are always built
 * "wide" (priority-1 cells included), as the apiserver does.
 *
 * Where upstream reads a field of the internal type that the v1 -> internal
 * conversion or defaulting fills in, the row function applies the same
 * fallback (status.podIPs from status.podIP, spec.clusterIPs from
 * spec.clusterIP, replicas 1, protocol TCP), so objects stored without
 * defaults still print like upstream.
 *
 * Adding a kind: a column array, a row function, one line in `printers`.
 */
#include "api/kinds.h"
#include "core/jdump.h"
#include "api/pool_kinds.h"
#include "api/table.h"
#include "api/table_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON accessors: absent reads as "" / the default ---- */

static const char *js(const json_t *o, const char *path)
{
    const char *s = json_string_value(api_json_path(o, path));
    return s ? s : "";
}

/* A JSON string's value, "" for anything else. */
static const char *sv(const json_t *v)
{
    const char *s = json_string_value(v);
    return s ? s : "";
}

static json_int_t ji(const json_t *o, const char *path, json_int_t dflt)
{
    json_t *v = api_json_path(o, path);
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static size_t jlen(const json_t *o, const char *path)
{
    json_t *v = api_json_path(o, path);
    return json_is_array(v) ? json_array_size(v) : json_object_size(v);
}

static void cell_s(json_t *cells, const char *s)
{
    json_array_append_new(cells, json_string(s ? s : ""));
}

static void cell_i(json_t *cells, json_int_t v)
{
    json_array_append_new(cells, json_integer(v));
}

static void cell_b(json_t *cells, bool v)
{
    json_array_append_new(cells, json_boolean(v));
}

static void cell_name(json_t *cells, const json_t *o)
{
    cell_s(cells, js(o, "metadata.name"));
}

static void cell_age(json_t *cells, const json_t *o, int64_t now)
{
    char buf[32];
    cell_s(cells,
           table_since(api_json_path(o, "metadata.creationTimestamp"), now, buf, sizeof buf));
}

/* A quantity's String(): quantities travel as JSON strings already in
 * canonical (or cached) form; a missing one is the zero Quantity, "0". */
static void put_quantity(tbuf *b, const json_t *q)
{
    if (json_is_string(q))
        tbuf_puts(b, json_string_value(q));
    else if (json_is_integer(q))
        tbuf_printf(b, "%lld", (long long)json_integer_value(q));
    else
        tbuf_puts(b, "0");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of a JSON object, byte-wise sorted (Go's sort.Strings). Caller frees. */
static const char **sorted_keys(const json_t *o, size_t *n)
{
    *n = json_object_size(o);
    const char **keys = calloc(*n ? *n : 1, sizeof *keys);
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        if (keys) keys[i++] = k;
    }
    if (!keys) *n = 0;
    if (*n) qsort(keys, *n, sizeof *keys, cmp_str);
    return keys;
}

/* labels.FormatLabels: "a=1,b=2", sorted; "<none>" when empty. */
static void cell_labels(json_t *cells, const json_t *map)
{
    size_t n;
    const char **keys = sorted_keys(map, &n);
    tbuf b = {0};
    for (size_t i = 0; i < n; i++)
        tbuf_printf(&b, "%s%s=%s", i ? "," : "", keys[i], sv(json_object_get(map, keys[i])));
    cell_s(cells, n ? tbuf_str(&b) : "<none>");
    tbuf_free(&b);
    free(keys);
}

/* One requirement of a label selector, with its key for sorting. */
typedef struct sel_req {
    const char *key;
    char *text;
} sel_req;

static int cmp_req(const void *a, const void *b)
{
    return strcmp(((const sel_req *)a)->key, ((const sel_req *)b)->key);
}

static char *req_text(const json_t *expr)
{
    const char *key = js(expr, "key"), *op = js(expr, "operator");
    tbuf b = {0};
    if (strcmp(op, "Exists") == 0) {
        tbuf_puts(&b, key);
    } else if (strcmp(op, "DoesNotExist") == 0) {
        tbuf_printf(&b, "!%s", key);
    } else {
        json_t *vals = json_object_get(expr, "values");
        size_t n = json_array_size(vals);
        const char **vs = calloc(n ? n : 1, sizeof *vs);
        for (size_t i = 0; vs && i < n; i++)
            vs[i] = sv(json_array_get(vals, i));
        if (vs && n) qsort(vs, n, sizeof *vs, cmp_str);
        tbuf_printf(&b, "%s %s (", key, strcmp(op, "NotIn") == 0 ? "notin" : "in");
        for (size_t i = 0; vs && i < n; i++)
            tbuf_printf(&b, "%s%s", i ? "," : "", vs[i]);
        tbuf_puts(&b, ")");
        free(vs);
    }
    char *s = strdup(tbuf_str(&b));
    tbuf_free(&b);
    return s;
}

/* metav1.LabelSelectorAsSelector(sel).String(): requirements sorted by key,
 * "k=v", "k in (a,b)", "k notin (a)", "k", "!k"; "" for nil or empty. */
static void put_selector(tbuf *out, const json_t *sel)
{
    json_t *ml = json_object_get(sel, "matchLabels"),
           *me = json_object_get(sel, "matchExpressions");
    size_t n = json_object_size(ml) + json_array_size(me), i = 0, j;
    sel_req *reqs = calloc(n ? n : 1, sizeof *reqs);
    const char *k;
    json_t *v;
    if (!reqs) return;
    json_object_foreach(ml, k, v)
    {
        tbuf b = {0};
        tbuf_printf(&b, "%s=%s", k, sv(v));
        reqs[i].key = k;
        reqs[i++].text = strdup(tbuf_str(&b));
        tbuf_free(&b);
    }
    json_array_foreach(me, j, v)
    {
        reqs[i].key = js(v, "key");
        reqs[i++].text = req_text(v);
    }
    qsort(reqs, i, sizeof *reqs, cmp_req);
    for (j = 0; j < i; j++) {
        tbuf_printf(out, "%s%s", j ? "," : "", reqs[j].text ? reqs[j].text : "");
        free(reqs[j].text);
    }
    free(reqs);
}

/* metav1.FormatLabelSelector: the selector string, "<none>" when empty. */
static void cell_label_selector(json_t *cells, const json_t *sel)
{
    tbuf b = {0};
    put_selector(&b, sel);
    cell_s(cells, b.len ? tbuf_str(&b) : "<none>");
    tbuf_free(&b);
}

/* layoutContainerCells: "a,b" names and "img1,img2" images of a template. */
static void cell_containers(json_t *cells, const json_t *o, const char *containers_path)
{
    json_t *cs = api_json_path(o, containers_path);
    tbuf names = {0}, images = {0};
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c)
    {
        tbuf_printf(&names, "%s%s", i ? "," : "", js(c, "name"));
        tbuf_printf(&images, "%s%s", i ? "," : "", js(c, "image"));
    }
    cell_s(cells, tbuf_str(&names));
    cell_s(cells, tbuf_str(&images));
    tbuf_free(&names);
    tbuf_free(&images);
}

static bool has_condition(const json_t *conds, const char *type, const char *status)
{
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        if (strcmp(js(c, "type"), type) == 0 && strcmp(js(c, "status"), status) == 0) return true;
    }
    return false;
}

/* ---- pods ---- */

#define TIME_ZERO INT64_MIN /* "no restart seen": before every real time */

static int64_t finished_at(const json_t *cs)
{
    int64_t t;
    json_t *term = api_json_path(cs, "lastState.terminated");
    if (!term) return TIME_ZERO;
    return table_parse_time(json_object_get(term, "finishedAt"), &t) ? t : TIME_ZERO;
}

/* podutil.IsRestartableInitContainer: a sidecar (restartPolicy Always). */
static bool restartable_init(const json_t *pod, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(api_json_path(pod, "spec.initContainers"), i, c)
    {
        if (strcmp(js(c, "name"), name) == 0) return strcmp(js(c, "restartPolicy"), "Always") == 0;
    }
    return false;
}

typedef struct pod_tally {
    char reason[160];
    int restarts, ready;
    int64_t last_restart;
} pod_tally;

/* The reason a terminated container with no reason gives, e.g. "Init:ExitCode:1". */
static void terminated_reason(pod_tally *t, const char *prefix, const json_t *term)
{
    if (*js(term, "reason"))
        snprintf(t->reason, sizeof t->reason, "%s%s", prefix, js(term, "reason"));
    else if (ji(term, "signal", 0))
        snprintf(t->reason, sizeof t->reason, "%sSignal:%lld", prefix,
                 (long long)ji(term, "signal", 0));
    else
        snprintf(t->reason, sizeof t->reason, "%sExitCode:%lld", prefix,
                 (long long)ji(term, "exitCode", 0));
}

/* The init-container pass of printPod. Returns whether the pod is still
 * initializing; restarts of sidecars are also kept apart in *ri. */
static bool pod_init_pass(const json_t *pod, pod_tally *t, pod_tally *ri)
{
    size_t n_spec = jlen(pod, "spec.initContainers"), i;
    json_t *cs;
    json_array_foreach(api_json_path(pod, "status.initContainerStatuses"), i, cs)
    {
        int rc = (int)ji(cs, "restartCount", 0);
        int64_t fin = finished_at(cs);
        bool sidecar = restartable_init(pod, js(cs, "name"));
        t->restarts += rc;
        if (fin > t->last_restart) t->last_restart = fin;
        if (sidecar) {
            ri->restarts += rc;
            if (fin > ri->last_restart) ri->last_restart = fin;
        }
        json_t *term = api_json_path(cs, "state.terminated");
        const char *wait = js(cs, "state.waiting.reason");
        if (term && ji(term, "exitCode", 0) == 0) continue;
        if (sidecar && json_is_true(json_object_get(cs, "started"))) {
            if (json_is_true(json_object_get(cs, "ready"))) t->ready++;
            continue;
        }
        if (term)
            terminated_reason(t, "Init:", term);
        else if (api_json_path(cs, "state.waiting") && *wait && strcmp(wait, "PodInitializing"))
            snprintf(t->reason, sizeof t->reason, "Init:%s", wait);
        else
            snprintf(t->reason, sizeof t->reason, "Init:%zu/%zu", i, n_spec);
        return true;
    }
    return false;
}

/* The app-container pass: walks statuses last to first, as upstream does, so
 * the first container's state wins the reason. */
static void pod_container_pass(const json_t *pod, pod_tally *t)
{
    json_t *list = api_json_path(pod, "status.containerStatuses");
    bool running = false;
    for (size_t i = json_array_size(list); i-- > 0;) {
        json_t *cs = json_array_get(list, i);
        int64_t fin = finished_at(cs);
        t->restarts += (int)ji(cs, "restartCount", 0);
        if (fin > t->last_restart) t->last_restart = fin;
        json_t *term = api_json_path(cs, "state.terminated");
        if (*js(cs, "state.waiting.reason")) {
            snprintf(t->reason, sizeof t->reason, "%s", js(cs, "state.waiting.reason"));
        } else if (term) {
            terminated_reason(t, "", term);
        } else if (json_is_true(json_object_get(cs, "ready")) &&
                   api_json_path(cs, "state.running")) {
            running = true;
            t->ready++;
        }
    }
    if (strcmp(t->reason, "Completed") == 0 && running)
        snprintf(t->reason, sizeof t->reason, "%s",
                 has_condition(api_json_path(pod, "status.conditions"), "Ready", "True")
                     ? "Running"
                     : "NotReady");
}

/* printPod's STATUS, READY and RESTARTS. */
static void pod_tally_of(const json_t *pod, pod_tally *t)
{
    const json_t *st = json_object_get(pod, "status");
    const char *phase = js(st, "phase");
    pod_tally ri = {.last_restart = TIME_ZERO};
    *t = (pod_tally){.last_restart = TIME_ZERO};
    snprintf(t->reason, sizeof t->reason, "%s", *js(st, "reason") ? js(st, "reason") : phase);

    /* Upstream reads the PodScheduled=False/SchedulingGated condition that pod
     * creation sets whenever spec.schedulingGates is non-empty; gates can only
     * be removed, so a non-empty list implies that condition: accept either. */
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(st, "conditions"), i, c)
    {
        if (strcmp(js(c, "type"), "PodScheduled") == 0 &&
            strcmp(js(c, "reason"), "SchedulingGated") == 0)
            snprintf(t->reason, sizeof t->reason, "SchedulingGated");
    }
    if (jlen(pod, "spec.schedulingGates") > 0)
        snprintf(t->reason, sizeof t->reason, "SchedulingGated");

    bool initializing = pod_init_pass(pod, t, &ri);
    if (!initializing || has_condition(json_object_get(st, "conditions"), "Initialized", "True")) {
        t->restarts = ri.restarts;
        t->last_restart = ri.last_restart;
        pod_container_pass(pod, t);
    }

    if (api_json_path(pod, "metadata.deletionTimestamp")) {
        if (strcmp(js(st, "reason"), "NodeLost") == 0)
            snprintf(t->reason, sizeof t->reason, "Unknown");
        else if (strcmp(phase, "Succeeded") && strcmp(phase, "Failed"))
            snprintf(t->reason, sizeof t->reason, "Terminating");
    }
}

/* READINESS GATES: "<none>", or "true/total" over spec.readinessGates. */
static void cell_readiness_gates(json_t *cells, const json_t *pod)
{
    json_t *gates = api_json_path(pod, "spec.readinessGates");
    json_t *conds = api_json_path(pod, "status.conditions");
    size_t n = json_array_size(gates), i, j, ok = 0;
    json_t *g, *c;
    char buf[48];
    if (n == 0) {
        cell_s(cells, "<none>");
        return;
    }
    json_array_foreach(gates, i, g)
    {
        json_array_foreach(conds, j, c)
        {
            if (strcmp(js(c, "type"), js(g, "conditionType")) == 0) {
                ok += strcmp(js(c, "status"), "True") == 0;
                break;
            }
        }
    }
    snprintf(buf, sizeof buf, "%zu/%zu", ok, n);
    cell_s(cells, buf);
}

static const char *or_none(const char *s)
{
    return *s ? s : "<none>";
}

static void pod_row(const json_t *pod, int64_t now, json_t *cells)
{
    pod_tally t;
    char buf[96], since[32];
    pod_tally_of(pod, &t);
    size_t total = jlen(pod, "spec.containers"), i;
    json_t *c;
    json_array_foreach(api_json_path(pod, "spec.initContainers"), i, c)
    {
        total += strcmp(js(c, "restartPolicy"), "Always") == 0;
    }
    cell_name(cells, pod);
    snprintf(buf, sizeof buf, "%d/%zu", t.ready, total);
    cell_s(cells, buf);
    cell_s(cells, t.reason);
    if (t.restarts != 0 && t.last_restart != TIME_ZERO)
        snprintf(buf, sizeof buf, "%d (%s ago)", t.restarts,
                 table_human_duration(now - t.last_restart, since, sizeof since));
    else
        snprintf(buf, sizeof buf, "%d", t.restarts);
    cell_s(cells, buf);
    cell_age(cells, pod, now);
    const char *ip = js(json_array_get(api_json_path(pod, "status.podIPs"), 0), "ip");
    cell_s(cells, or_none(*ip ? ip : js(pod, "status.podIP")));
    cell_s(cells, or_none(js(pod, "spec.nodeName")));
    cell_s(cells, or_none(js(pod, "status.nominatedNodeName")));
    cell_readiness_gates(cells, pod);
}

static json_t *pod_conds(const json_t *pod)
{
    const char *phase = js(pod, "status.phase");
    const char *msg = strcmp(phase, "Succeeded") == 0 ? "The pod has completed successfully."
                      : strcmp(phase, "Failed") == 0  ? "The pod failed."
                                                      : NULL;
    if (!msg) return NULL;
    return json_pack("[{s:s, s:s, s:s, s:s}]", "type", "Completed", "status", "True", "reason",
                     phase, "message", msg);
}

/* ---- the other kinds ---- */

static void namespace_row(const json_t *o, int64_t now, json_t *cells)
{
    cell_name(cells, o);
    cell_s(cells, js(o, "status.phase"));
    cell_age(cells, o, now);
}

static const char *node_address(const json_t *node, const char *type)
{
    size_t i;
    json_t *a;
    json_array_foreach(api_json_path(node, "status.addresses"), i, a)
    {
        if (strcmp(js(a, "type"), type) == 0) return js(a, "address");
    }
    return "<none>";
}

/* findNodeRoles: node-role.kubernetes.io/<role> keys and kubernetes.io/role values. */
static void cell_node_roles(json_t *cells, const json_t *labels)
{
    static const char prefix[] = "node-role.kubernetes.io/";
    size_t n, cnt = 0;
    const char **keys = sorted_keys(labels, &n);
    const char **roles = calloc(n ? n : 1, sizeof *roles);
    for (size_t i = 0; roles && i < n; i++) {
        const char *v = sv(json_object_get(labels, keys[i]));
        if (strncmp(keys[i], prefix, sizeof prefix - 1) == 0 && keys[i][sizeof prefix - 1])
            roles[cnt++] = keys[i] + sizeof prefix - 1;
        else if (strcmp(keys[i], "kubernetes.io/role") == 0 && *v)
            roles[cnt++] = v;
    }
    if (cnt) qsort(roles, cnt, sizeof *roles, cmp_str);
    tbuf b = {0};
    for (size_t i = 0; i < cnt; i++) /* a set: skip repeats */
        if (i == 0 || strcmp(roles[i], roles[i - 1]))
            tbuf_printf(&b, "%s%s", b.len ? "," : "", roles[i]);
    cell_s(cells, cnt ? tbuf_str(&b) : "<none>");
    tbuf_free(&b);
    free(roles);
    free(keys);
}

static const char *or_unknown(const char *s)
{
    return *s ? s : "<unknown>";
}

static void node_row(const json_t *o, int64_t now, json_t *cells)
{
    tbuf st = {0};
    const json_t *ready = NULL; /* upstream maps conditions by type: the last one wins */
    size_t i;
    json_t *c;
    json_array_foreach(api_json_path(o, "status.conditions"), i, c)
    {
        if (strcmp(js(c, "type"), "Ready") == 0) ready = c;
    }
    if (ready)
        tbuf_puts(&st, strcmp(js(ready, "status"), "True") == 0 ? "Ready" : "NotReady");
    else
        tbuf_puts(&st, "Unknown");
    if (json_is_true(api_json_path(o, "spec.unschedulable"))) tbuf_puts(&st, ",SchedulingDisabled");
    cell_name(cells, o);
    cell_s(cells, tbuf_str(&st));
    tbuf_free(&st);
    cell_node_roles(cells, api_json_path(o, "metadata.labels"));
    cell_age(cells, o, now);
    cell_s(cells, js(o, "status.nodeInfo.kubeletVersion"));
    cell_s(cells, node_address(o, "InternalIP"));
    cell_s(cells, node_address(o, "ExternalIP"));
    cell_s(cells, or_unknown(js(o, "status.nodeInfo.osImage")));
    cell_s(cells, or_unknown(js(o, "status.nodeInfo.kernelVersion")));
    cell_s(cells, or_unknown(js(o, "status.nodeInfo.containerRuntimeVersion")));
}

/* printResourceQuota: "res: used/hard, " per status.hard key, sorted; keys
 * "limits.*" go to LIMIT, every other key to REQUEST. */
static void quota_row(const json_t *o, int64_t now, json_t *cells)
{
    json_t *hard = api_json_path(o, "status.hard"), *used = api_json_path(o, "status.used");
    tbuf req = {0}, lim = {0};
    size_t n;
    const char **keys = sorted_keys(hard, &n);
    for (size_t i = 0; i < n; i++) {
        tbuf *w = strncmp(keys[i], "limits.", 7) == 0 ? &lim : &req;
        tbuf_printf(w, "%s%s: ", w->len ? ", " : "", keys[i]);
        put_quantity(w, json_object_get(used, keys[i]));
        tbuf_puts(w, "/");
        put_quantity(w, json_object_get(hard, keys[i]));
    }
    free(keys);
    cell_name(cells, o);
    cell_s(cells, tbuf_str(&req));
    cell_s(cells, tbuf_str(&lim));
    cell_age(cells, o, now);
    tbuf_free(&req);
    tbuf_free(&lim);
}

/* getServiceExternalIP (wide: load-balancer addresses are not clipped). */
static void cell_service_external_ip(json_t *cells, const json_t *svc, const char *type)
{
    json_t *ext = api_json_path(svc, "spec.externalIPs");
    tbuf b = {0};
    size_t i;
    json_t *v;
    if (strcmp(type, "ExternalName") == 0) {
        cell_s(cells, js(svc, "spec.externalName"));
        return;
    }
    if (strcmp(type, "ClusterIP") && strcmp(type, "NodePort") && strcmp(type, "LoadBalancer")) {
        cell_s(cells, "<unknown>");
        return;
    }
    if (strcmp(type, "LoadBalancer") == 0) {
        /* sets.NewString(...).List(): unique and sorted */
        json_t *ing = api_json_path(svc, "status.loadBalancer.ingress");
        size_t n = json_array_size(ing), cnt = 0;
        const char **lb = calloc(n ? n : 1, sizeof *lb);
        json_array_foreach(ing, i, v)
        {
            const char *a = *js(v, "ip") ? js(v, "ip") : js(v, "hostname");
            if (lb && *a) lb[cnt++] = a;
        }
        if (cnt) qsort(lb, cnt, sizeof *lb, cmp_str);
        for (i = 0; i < cnt; i++)
            if (i == 0 || strcmp(lb[i], lb[i - 1]))
                tbuf_printf(&b, "%s%s", b.len ? "," : "", lb[i]);
        free(lb);
    }
    json_array_foreach(ext, i, v)
    {
        tbuf_printf(&b, "%s%s", b.len ? "," : "", sv(v));
    }
    if (b.len)
        cell_s(cells, tbuf_str(&b));
    else
        cell_s(cells, strcmp(type, "LoadBalancer") == 0 ? "<pending>" : "<none>");
    tbuf_free(&b);
}

/* makePortString: "80/TCP", "80:30080/TCP", comma-joined; "<none>" if no ports. */
static void cell_service_ports(json_t *cells, const json_t *svc)
{
    tbuf b = {0};
    size_t i;
    json_t *p;
    json_array_foreach(api_json_path(svc, "spec.ports"), i, p)
    {
        const char *proto = *js(p, "protocol") ? js(p, "protocol") : "TCP";
        json_int_t np = ji(p, "nodePort", 0);
        if (i) tbuf_puts(&b, ",");
        if (np > 0)
            tbuf_printf(&b, "%lld:%lld/%s", (long long)ji(p, "port", 0), (long long)np, proto);
        else
            tbuf_printf(&b, "%lld/%s", (long long)ji(p, "port", 0), proto);
    }
    cell_s(cells, b.len ? tbuf_str(&b) : "<none>");
    tbuf_free(&b);
}

static void service_row(const json_t *o, int64_t now, json_t *cells)
{
    const char *type = js(o, "spec.type");
    const char *ip = json_string_value(json_array_get(api_json_path(o, "spec.clusterIPs"), 0));
    if (!ip) ip = js(o, "spec.clusterIP");
    cell_name(cells, o);
    cell_s(cells, type);
    cell_s(cells, or_none(ip));
    cell_service_external_ip(cells, o, type);
    cell_service_ports(cells, o);
    cell_age(cells, o, now);
    cell_labels(cells, api_json_path(o, "spec.selector"));
}

/* formatEndpoints (every port): "ip:port" per address and port, the first
 * three, then " + N more..."; a subset without ports lists its addresses. */
static void endpoints_row(const json_t *o, int64_t now, json_t *cells)
{
    const json_t *subsets = api_json_path(o, "subsets");
    tbuf b = {0};
    size_t listed = 0, count = 0, i, j, k;
    const json_t *ss, *port, *addr;
    bool more = false;
    json_array_foreach(subsets, i, ss)
    {
        const json_t *addrs = json_object_get(ss, "addresses"),
                     *ports = json_object_get(ss, "ports");
        if (json_array_size(ports) == 0) {
            count += json_array_size(addrs);
            json_array_foreach(addrs, k, addr)
            {
                if (listed == 3) {
                    more = true;
                    break;
                }
                tbuf_printf(&b, "%s%s", listed++ ? "," : "", js(addr, "ip"));
            }
            continue;
        }
        json_array_foreach(ports, j, port)
        {
            count += json_array_size(addrs);
            json_array_foreach(addrs, k, addr)
            {
                if (listed == 3) {
                    more = true;
                    break;
                }
                const char *ip = js(addr, "ip");
                bool v6 = strchr(ip, ':') != NULL; /* net.JoinHostPort brackets IPv6 */
                tbuf_printf(&b, "%s%s%s%s:%lld", listed++ ? "," : "", v6 ? "[" : "", ip,
                            v6 ? "]" : "", (long long)ji(port, "port", 0));
            }
        }
    }
    if (more) tbuf_printf(&b, " + %zu more...", count - 3);
    cell_name(cells, o);
    cell_s(cells, json_array_size(subsets) ? tbuf_str(&b) : "<none>");
    cell_age(cells, o, now);
    tbuf_free(&b);
}

/* listWithMoreString: the first three, then " + N more..."; "<unset>" for none. */
static void cell_list_more(json_t *cells, const char *const *items, size_t n)
{
    tbuf b = {0};
    for (size_t i = 0; i < n && i < 3; i++)
        tbuf_printf(&b, "%s%s", i ? "," : "", items[i]);
    if (n > 3) tbuf_printf(&b, " + %zu more...", n - 3);
    cell_s(cells, n ? tbuf_str(&b) : "<unset>");
    tbuf_free(&b);
}

/* printEndpointSlice: formatDiscoveryPorts (the number, else the name, else
 * "*") and formatDiscoveryEndpoints (every address). */
static void endpointslice_row(const json_t *o, int64_t now, json_t *cells)
{
    const json_t *ports = api_json_path(o, "ports"), *eps = api_json_path(o, "endpoints");
    size_t np = json_array_size(ports), na = 0, i, j;
    const json_t *p, *ep, *a;
    json_array_foreach(eps, i, ep) na += json_array_size(json_object_get(ep, "addresses"));
    const char **pv = calloc(np ? np : 1, sizeof *pv), **av = calloc(na ? na : 1, sizeof *av);
    char(*num)[16] = calloc(np ? np : 1, sizeof *num);
    if (!pv || !av || !num) np = na = 0;
    json_array_foreach(ports, i, p)
    {
        if (i >= np) break;
        const json_t *port = json_object_get(p, "port");
        const char *name = json_string_value(json_object_get(p, "name"));
        snprintf(num[i], sizeof num[i], "%lld", (long long)json_integer_value(port));
        pv[i] = json_is_integer(port) ? num[i] : name ? name : "*";
    }
    size_t k = 0;
    json_array_foreach(eps, i, ep)
    {
        json_array_foreach(json_object_get(ep, "addresses"), j, a) if (k < na) av[k++] = sv(a);
    }
    cell_name(cells, o);
    cell_s(cells, js(o, "addressType"));
    cell_list_more(cells, pv, np);
    cell_list_more(cells, av, na);
    cell_age(cells, o, now);
    free(pv);
    free(av);
    free(num);
}

/* helper.GetAccessModesAsString: fixed order, duplicates dropped. */
static void put_access_modes(tbuf *b, const json_t *modes)
{
    static const char *const mode[][2] = {{"ReadWriteOnce", "RWO"},
                                          {"ReadOnlyMany", "ROX"},
                                          {"ReadWriteMany", "RWX"},
                                          {"ReadWriteOncePod", "RWOP"}};
    for (size_t m = 0; m < sizeof mode / sizeof *mode; m++) {
        size_t i;
        json_t *v;
        json_array_foreach(modes, i, v)
        {
            if (json_is_string(v) && strcmp(json_string_value(v), mode[m][0]) == 0) {
                tbuf_printf(b, "%s%s", b->len ? "," : "", mode[m][1]);
                break;
            }
        }
    }
}

static void pvc_row(const json_t *o, int64_t now, json_t *cells)
{
    const char *volume = js(o, "spec.volumeName");
    json_t *beta = api_json_path(o, "metadata.annotations");
    json_t *cls = json_object_get(beta, "volume.beta.kubernetes.io/storage-class");
    tbuf cap = {0}, modes = {0};
    if (*volume) {
        put_quantity(&cap, api_json_path(o, "status.capacity.storage"));
        put_access_modes(&modes, api_json_path(o, "status.accessModes"));
    }
    cell_name(cells, o);
    cell_s(cells,
           api_json_path(o, "metadata.deletionTimestamp") ? "Terminating" : js(o, "status.phase"));
    cell_s(cells, volume);
    cell_s(cells, tbuf_str(&cap));
    cell_s(cells, tbuf_str(&modes));
    cell_s(cells, cls ? json_string_value(cls) : js(o, "spec.storageClassName"));
    const char *vac = json_string_value(api_json_path(o, "spec.volumeAttributesClassName"));
    cell_s(cells, vac ? vac : "<unset>");
    cell_age(cells, o, now);
    const char *vm = json_string_value(api_json_path(o, "spec.volumeMode"));
    cell_s(cells, vm ? vm : "<unset>");
    tbuf_free(&cap);
    tbuf_free(&modes);
}

static void configmap_row(const json_t *o, int64_t now, json_t *cells)
{
    cell_name(cells, o);
    cell_i(cells, (json_int_t)(jlen(o, "data") + jlen(o, "binaryData")));
    cell_age(cells, o, now);
}

static void secret_row(const json_t *o, int64_t now, json_t *cells)
{
    cell_name(cells, o);
    cell_s(cells, js(o, "type"));
    cell_i(cells, (json_int_t)jlen(o, "data"));
    cell_age(cells, o, now);
}

/* RC and RS: DESIRED CURRENT READY AGE, then template containers/images. */
static void replicas_cells(const json_t *o, int64_t now, json_t *cells)
{
    cell_name(cells, o);
    cell_i(cells, ji(o, "spec.replicas", 1));
    cell_i(cells, ji(o, "status.replicas", 0));
    cell_i(cells, ji(o, "status.readyReplicas", 0));
    cell_age(cells, o, now);
    cell_containers(cells, o, "spec.template.spec.containers");
}

static void rc_row(const json_t *o, int64_t now, json_t *cells)
{
    replicas_cells(o, now, cells);
    cell_labels(cells, api_json_path(o, "spec.selector"));
}

static void rs_row(const json_t *o, int64_t now, json_t *cells)
{
    replicas_cells(o, now, cells);
    cell_label_selector(cells, api_json_path(o, "spec.selector"));
}

static void serviceaccount_row(const json_t *o, int64_t now, json_t *cells)
{
    cell_name(cells, o);
    cell_i(cells, (json_int_t)jlen(o, "secrets"));
    cell_age(cells, o, now);
}

/* printEvent: LAST SEEN falls back to first seen, then to eventTime; series
 * events use series.lastObservedTime and series.count. */
static void event_row(const json_t *o, int64_t now, json_t *cells)
{
    char first[32], last[32];
    json_t *ft = json_object_get(o, "firstTimestamp"), *lt = json_object_get(o, "lastTimestamp");
    json_t *series = json_object_get(o, "series");
    int64_t t;
    if (table_parse_time(ft, &t))
        table_since(ft, now, first, sizeof first);
    else
        table_since(json_object_get(o, "eventTime"), now, first, sizeof first);
    if (table_parse_time(lt, &t))
        table_since(lt, now, last, sizeof last);
    else
        snprintf(last, sizeof last, "%s", first);
    json_int_t count = ji(o, "count", 0);
    if (json_is_object(series)) {
        table_since(json_object_get(series, "lastObservedTime"), now, last, sizeof last);
        count = ji(series, "count", 0);
    } else if (count == 0) {
        count = 1; /* singleton events of the events.k8s.io API have no count */
    }

    tbuf target = {0}, source = {0};
    for (const char *k = js(o, "involvedObject.kind"); *k; k++)
        tbuf_printf(&target, "%c", tolower((unsigned char)*k));
    if (*js(o, "involvedObject.name")) tbuf_printf(&target, "/%s", js(o, "involvedObject.name"));
    const char *comp =
        *js(o, "source.component") ? js(o, "source.component") : js(o, "reportingComponent");
    const char *host = *js(o, "source.host") ? js(o, "source.host") : js(o, "reportingInstance");
    tbuf_puts(&source, comp);
    if (*host) tbuf_printf(&source, ", %s", host);

    /* strings.TrimSpace(message) */
    const char *msg = js(o, "message");
    size_t len = strlen(msg);
    while (len && isspace((unsigned char)*msg))
        msg++, len--;
    while (len && isspace((unsigned char)msg[len - 1]))
        len--;
    char *trimmed = strndup(msg, len);

    cell_s(cells, last);
    cell_s(cells, js(o, "type"));
    cell_s(cells, js(o, "reason"));
    cell_s(cells, tbuf_str(&target));
    cell_s(cells, js(o, "involvedObject.fieldPath"));
    cell_s(cells, tbuf_str(&source));
    cell_s(cells, trimmed);
    cell_s(cells, first);
    cell_i(cells, count);
    cell_name(cells, o);
    free(trimmed);
    tbuf_free(&target);
    tbuf_free(&source);
}

static void priorityclass_row(const json_t *o, int64_t now, json_t *cells)
{
    cell_name(cells, o);
    cell_i(cells, ji(o, "value", 0));
    cell_b(cells, json_is_true(json_object_get(o, "globalDefault")));
    cell_age(cells, o, now);
    cell_s(cells, js(o, "preemptionPolicy"));
}

/* storageutil.IsDefaultAnnotation: GA or beta annotation equal to "true". */
static bool storageclass_is_default(const json_t *o)
{
    json_t *ann = api_json_path(o, "metadata.annotations");
    /* keys with dots: json_object_get, not the dotted-path js() */
    return strcmp(sv(json_object_get(ann, "storageclass.kubernetes.io/is-default-class")),
                  "true") == 0 ||
           strcmp(sv(json_object_get(ann, "storageclass.beta.kubernetes.io/is-default-class")),
                  "true") == 0;
}

static void storageclass_row(const json_t *o, int64_t now, json_t *cells)
{
    tbuf name = {0};
    tbuf_puts(&name, js(o, "metadata.name"));
    if (storageclass_is_default(o)) tbuf_puts(&name, " (default)");
    cell_s(cells, tbuf_str(&name));
    tbuf_free(&name);
    cell_s(cells, js(o, "provisioner"));
    cell_s(cells, *js(o, "reclaimPolicy") ? js(o, "reclaimPolicy") : "Delete");
    cell_s(cells, *js(o, "volumeBindingMode") ? js(o, "volumeBindingMode") : "Immediate");
    cell_b(cells, json_is_true(json_object_get(o, "allowVolumeExpansion")));
    cell_age(cells, o, now);
}

static void deployment_row(const json_t *o, int64_t now, json_t *cells)
{
    char ready[64];
    snprintf(ready, sizeof ready, "%lld/%lld", (long long)ji(o, "status.readyReplicas", 0),
             (long long)ji(o, "spec.replicas", 1));
    cell_name(cells, o);
    cell_s(cells, ready);
    cell_i(cells, ji(o, "status.updatedReplicas", 0));
    cell_i(cells, ji(o, "status.availableReplicas", 0));
    cell_age(cells, o, now);
    cell_containers(cells, o, "spec.template.spec.containers");
    tbuf sel = {0};
    put_selector(&sel, api_json_path(o, "spec.selector"));
    cell_s(cells, tbuf_str(&sel));
    tbuf_free(&sel);
}

/* printStatefulSet: READY is ready/desired. */
static void statefulset_row(const json_t *o, int64_t now, json_t *cells)
{
    char ready[64];
    snprintf(ready, sizeof ready, "%lld/%lld", (long long)ji(o, "status.readyReplicas", 0),
             (long long)ji(o, "spec.replicas", 1));
    cell_name(cells, o);
    cell_s(cells, ready);
    cell_age(cells, o, now);
    cell_containers(cells, o, "spec.template.spec.containers");
}

/* printDaemonSet: NODE SELECTOR is the template's nodeSelector as labels. */
static void daemonset_row(const json_t *o, int64_t now, json_t *cells)
{
    cell_name(cells, o);
    cell_i(cells, ji(o, "status.desiredNumberScheduled", 0));
    cell_i(cells, ji(o, "status.currentNumberScheduled", 0));
    cell_i(cells, ji(o, "status.numberReady", 0));
    cell_i(cells, ji(o, "status.updatedNumberScheduled", 0));
    cell_i(cells, ji(o, "status.numberAvailable", 0));
    cell_labels(cells, api_json_path(o, "spec.template.spec.nodeSelector"));
    cell_age(cells, o, now);
    cell_containers(cells, o, "spec.template.spec.containers");
    cell_label_selector(cells, api_json_path(o, "spec.selector"));
}

/* ---- capsule.clastix.io: ResourcePool, ResourcePoolClaim ----
 * Custom resources print as the apiserver prints any CRD: the columns of
 * the CRD's additionalPrinterColumns (Capsule's, as spec section 1.1 lists
 * them), each a JSONPath whose cell is null when the path finds nothing, and
 * the value itself otherwise. */

/* The first condition of `type` in the array at `path`, or NULL
 * (".status.conditions[?(@.type=="Ready")]"). */
/* ---- batch/v1: printJob, printCronJob ---- */

static bool job_has_condition(const json_t *o, const char *type)
{
    return has_condition(api_json_path(o, "status.conditions"), type, "True");
}

static void job_row(const json_t *o, int64_t now, json_t *cells)
{
    char buf[64], dur[32] = "";
    json_t *comp = api_json_path(o, "spec.completions");
    json_int_t succeeded = ji(o, "status.succeeded", 0), par = ji(o, "spec.parallelism", 0);
    if (json_is_integer(comp))
        snprintf(buf, sizeof buf, "%lld/%lld", (long long)succeeded,
                 (long long)json_integer_value(comp));
    else if (par > 1)
        snprintf(buf, sizeof buf, "%lld/1 of %lld", (long long)succeeded, (long long)par);
    else
        snprintf(buf, sizeof buf, "%lld/1", (long long)succeeded);
    int64_t start, end;
    if (table_parse_time(api_json_path(o, "status.startTime"), &start)) {
        if (!table_parse_time(api_json_path(o, "status.completionTime"), &end)) end = now;
        table_human_duration(end - start, dur, sizeof dur);
    }
    const char *status = "Running";
    if (job_has_condition(o, "Complete"))
        status = "Complete";
    else if (job_has_condition(o, "Failed"))
        status = "Failed";
    else if (api_json_path(o, "metadata.deletionTimestamp"))
        status = "Terminating";
    else if (job_has_condition(o, "SuccessCriteriaMet"))
        status = "SuccessCriteriaMet";
    else if (job_has_condition(o, "Suspended"))
        status = "Suspended";
    else if (job_has_condition(o, "FailureTarget"))
        status = "FailureTarget";
    cell_name(cells, o);
    cell_s(cells, status);
    cell_s(cells, buf);
    cell_s(cells, dur);
    cell_age(cells, o, now);
    cell_containers(cells, o, "spec.template.spec.containers");
    cell_label_selector(cells, api_json_path(o, "spec.selector"));
}

static void cronjob_row(const json_t *o, int64_t now, json_t *cells)
{
    char last[32] = "<none>";
    json_t *lst = api_json_path(o, "status.lastScheduleTime");
    if (lst) table_since(lst, now, last, sizeof last);
    json_t *tz = api_json_path(o, "spec.timeZone"), *susp = api_json_path(o, "spec.suspend");
    cell_name(cells, o);
    cell_s(cells, js(o, "spec.schedule"));
    cell_s(cells, json_is_string(tz) ? json_string_value(tz) : "<none>");
    cell_s(cells, !json_is_boolean(susp) ? "<unset>" : json_is_true(susp) ? "True" : "False");
    cell_i(cells, (json_int_t)jlen(o, "status.active"));
    cell_s(cells, last);
    cell_age(cells, o, now);
    cell_containers(cells, o, "spec.jobTemplate.spec.template.spec.containers");
    cell_label_selector(cells, api_json_path(o, "spec.jobTemplate.spec.selector"));
}

static const json_t *condition_of(const json_t *o, const char *path, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(api_json_path(o, path), i, c)
    {
        if (strcmp(sv(json_object_get(c, "type")), type) == 0) return c;
    }
    return NULL;
}

/* A "string" column's cell: a string as it is, any other value as JSONPath
 * prints it, null when absent. */
static void cell_json_string(json_t *cells, const json_t *v)
{
    if (!v || json_is_null(v)) {
        json_array_append_new(cells, json_null());
    } else if (json_is_string(v)) {
        json_array_append(cells, (json_t *)v);
    } else {
        char *text = jdump(v, NULL);
        cell_s(cells, text);
        free(text);
    }
}

/* An "integer" column's cell: the integer, or null. */
static void cell_json_int(json_t *cells, const json_t *v)
{
    json_array_append_new(cells,
                          json_is_integer(v) ? json_integer(json_integer_value(v)) : json_null());
}

static void cell_condition(json_t *cells, const json_t *o, const char *type, const char *field)
{
    cell_json_string(cells, json_object_get(condition_of(o, "status.conditions", type), field));
}

static void resourcepool_row(const json_t *o, int64_t now, json_t *cells)
{
    cell_name(cells, o);
    cell_json_int(cells, api_json_path(o, "status.claimCount"));
    cell_json_int(cells, api_json_path(o, "status.namespaceCount"));
    cell_condition(cells, o, "Ready", "status");
    cell_condition(cells, o, "Ready", "message");
    cell_age(cells, o, now);
}

/* A claim: Capsule's CRD columns (charts/capsule/crds, as seed 003 lists
 * claims: POOL STATUS REASON MESSAGE AGE), read from status.condition, the
 * claim's state in one condition; a claim stored before allot wrote that
 * condition shows the same, derived from its conditions (api/pool_kinds.h).
 * Wide adds whether pods use the claim: its Bound condition (Capsule
 * v0.14's sense of Bound). */
static void resourcepoolclaim_row(const json_t *o, int64_t now, json_t *cells)
{
    const json_t *status = api_json_path(o, "status"), *one = json_object_get(status, "condition");
    pool_claim_state st;
    cell_name(cells, o);
    cell_json_string(cells, api_json_path(o, "status.pool.name"));
    if (json_is_object(one)) {
        cell_json_string(cells, json_object_get(one, "type"));
        cell_json_string(cells, json_object_get(one, "reason"));
        cell_json_string(cells, json_object_get(one, "message"));
    } else if (pool_claim_summary(status, &st)) {
        cell_s(cells, st.type);
        cell_s(cells, st.reason);
        cell_s(cells, st.message);
    } else {
        for (int i = 0; i < 3; i++)
            json_array_append_new(cells, json_null());
    }
    cell_age(cells, o, now);
    const json_t *bound = condition_of(o, "status.conditions", "Bound");
    const char *reason = sv(json_object_get(bound, "reason"));
    cell_json_string(cells, strcmp(reason, "InUse") && strcmp(reason, "Unused")
                                ? NULL
                                : json_object_get(bound, "status"));
}

/* CustomQuota and GlobalCustomQuota: Capsule's columns, the same for both
 * kinds (customquota_types.go, globalcustomquota_types.go). Status is the
 * Ready condition's message while it is True ("reconciled", as Capsule
 * prints), and its reason otherwise: a quota that fails joins every error
 * into that message, hundreds of characters that made the column unreadable;
 * like upstream's printers (a pod's STATUS is a reason), the column says
 * what, and `kubectl get -o yaml` says why. */
static void customquota_row(const json_t *o, int64_t now, json_t *cells)
{
    const json_t *ready = condition_of(o, "status.conditions", "Ready");
    bool ok = !strcmp(sv(json_object_get(ready, "status")), "True");
    cell_name(cells, o);
    cell_json_string(cells, api_json_path(o, "spec.limit"));
    cell_json_string(cells, api_json_path(o, "status.usage.used"));
    cell_json_string(cells, api_json_path(o, "status.usage.available"));
    cell_json_string(cells, json_object_get(ready, "status"));
    cell_json_string(cells, json_object_get(ready, ok ? "message" : "reason"));
    cell_age(cells, o, now);
}

/* RBAC: roles show their creation time in RFC 3339 (printRole formats the
 * zero time too), bindings their role and, wide, their subjects as
 * rbac.SubjectsStrings lists them (service accounts as <ns>/<name>). */
static void rbac_role_row(const json_t *o, int64_t now, json_t *cells)
{
    (void)now;
    const char *ts = js(o, "metadata.creationTimestamp");
    cell_name(cells, o);
    cell_s(cells, *ts ? ts : "0001-01-01T00:00:00Z");
}

static void subjects_cell(json_t *cells, const json_t *o, const char *kind)
{
    tbuf b = {0};
    size_t i, n = 0;
    const json_t *s;
    json_array_foreach(api_json_path(o, "subjects"), i, s)
    {
        if (strcmp(sv(json_object_get(s, "kind")), kind) != 0) continue;
        tbuf_puts(&b, n++ ? ", " : "");
        if (strcmp(kind, "ServiceAccount") == 0)
            tbuf_printf(&b, "%s/", sv(json_object_get(s, "namespace")));
        tbuf_puts(&b, sv(json_object_get(s, "name")));
    }
    cell_s(cells, tbuf_str(&b));
    tbuf_free(&b);
}

static void rbac_binding_row(const json_t *o, int64_t now, json_t *cells)
{
    char ref[512];
    cell_name(cells, o);
    snprintf(ref, sizeof ref, "%s/%s", js(o, "roleRef.kind"), js(o, "roleRef.name"));
    cell_s(cells, ref);
    cell_age(cells, o, now);
    subjects_cell(cells, o, "User");
    subjects_cell(cells, o, "Group");
    subjects_cell(cells, o, "ServiceAccount");
}

/* ---- columns ---- */

#define COL_NAME                                                                                   \
    {                                                                                              \
        "Name", "string", "name", TABLE_DESC_NAME, 0                                               \
    }
#define COL_AGE                                                                                    \
    {                                                                                              \
        "Age", "string", "", TABLE_DESC_AGE, 0                                                     \
    }
#define COL(n, t, d)                                                                               \
    {                                                                                              \
        n, t, "", d, 0                                                                             \
    }
#define WIDE(n, t, d)                                                                              \
    {                                                                                              \
        n, t, "", d, 1                                                                             \
    }
#define COL_END                                                                                    \
    {                                                                                              \
        NULL, NULL, NULL, NULL, 0                                                                  \
    }
#define DESC_CONTAINERS "Names of each container in the template."
#define DESC_IMAGES "Images referenced by each container in the template."

static const table_col pod_cols[] = {
    COL_NAME,
    COL("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
    COL("Status", "string", "The aggregate status of the containers in this pod."),
    COL("Restarts", "string",
        "The number of times the containers in this pod have been restarted and when the last "
        "container in this pod has restarted."),
    COL_AGE,
    WIDE("IP", "string",
         "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet "
         "allocated."),
    WIDE("Node", "string",
         "NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the "
         "scheduler simply schedules this pod onto that node, assuming that it fits resource "
         "requirements."),
    WIDE("Nominated Node", "string",
         "nominatedNodeName is set only when this pod preempts other pods on the node, but it "
         "cannot be scheduled right away as preemption victims receive their graceful "
         "termination periods. This field does not guarantee that the pod will be scheduled on "
         "this node. Scheduler may decide to place the pod elsewhere if other nodes become "
         "available sooner. Scheduler may also decide to give the resources on this node to a "
         "higher priority pod that is created after preemption. As a result, this field may be "
         "different than PodSpec.nodeName when the pod is scheduled."),
    WIDE("Readiness Gates", "string",
         "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready "
         "when all its containers are ready AND all conditions specified in the readiness gates "
         "have status equal to \"True\" More info: "
         "https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates"),
    COL_END,
};

static const table_col namespace_cols[] = {
    COL_NAME,
    COL("Status", "string", "The status of the namespace"),
    COL_AGE,
    COL_END,
};

#define DESC_ADDRESSES                                                                             \
    "List of addresses reachable to the node. Queried from cloud provider, if available. More "    \
    "info: https://kubernetes.io/docs/concepts/nodes/node/#addresses Note: This field is "         \
    "declared as mergeable, but the merge key is not sufficiently unique, which can cause data "   \
    "corruption when it is merged. Callers should instead use a full-replacement patch. See "      \
    "http://pr.k8s.io/79391 for an example."

static const table_col node_cols[] = {
    COL_NAME,
    COL("Status", "string", "The status of the node"),
    COL("Roles", "string", "The roles of the node"),
    COL_AGE,
    COL("Version", "string", "Kubelet Version reported by the node."),
    WIDE("Internal-IP", "string", DESC_ADDRESSES),
    WIDE("External-IP", "string", DESC_ADDRESSES),
    WIDE("OS-Image", "string",
         "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."),
    WIDE("Kernel-Version", "string",
         "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."),
    WIDE("Container-Runtime", "string",
         "ContainerRuntime Version reported by the node through runtime remote API (e.g. "
         "containerd://1.4.2)."),
    COL_END,
};

static const table_col quota_cols[] = {
    COL_NAME,
    COL("Request", "string",
        "Request represents a minimum amount of cpu/memory that a container may consume."),
    COL("Limit", "string",
        "Limits control the maximum amount of cpu/memory that a container may use independent "
        "of contention on the node."),
    COL_AGE,
    COL_END,
};

static const table_col service_cols[] = {
    COL_NAME,
    COL("Type", "string",
        "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are "
        "ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a "
        "cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by "
        "the selector or if that is not specified, by manual construction of an Endpoints object "
        "or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the "
        "endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" "
        "builds on ClusterIP and allocates a port on every node which routes to the same "
        "endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external "
        "load-balancer (if supported in the current cloud) which routes to the same endpoints as "
        "the clusterIP. \"ExternalName\" aliases this service to the specified externalName. "
        "Several other fields do not apply to ExternalName services. More info: "
        "https://kubernetes.io/docs/concepts/services-networking/service/"
        "#publishing-services-service-types"),
    COL("Cluster-IP", "string",
        "clusterIP is the IP address of the service and is usually assigned randomly. If an "
        "address is specified manually, is in-range (as per system configuration), and is not in "
        "use, it will be allocated to the service; otherwise creation of the service will fail. "
        "This field may not be changed through updates unless the type field is also being "
        "changed to ExternalName (which requires this field to be blank) or the type field is "
        "being changed from ExternalName (in which case this field may optionally be specified, "
        "as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP "
        "address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is "
        "useful when direct endpoint connections are preferred and proxying is not required.  "
        "Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified "
        "when creating a Service of type ExternalName, creation will fail. This field will be "
        "wiped when updating a Service to type ExternalName. More info: "
        "https://kubernetes.io/docs/concepts/services-networking/service/"
        "#virtual-ips-and-service-proxies"),
    COL("External-IP", "string",
        "externalIPs is a list of IP addresses for which nodes in the cluster will also accept "
        "traffic for this service.  These IPs are not managed by Kubernetes.  The user is "
        "responsible for ensuring that traffic arrives at a node with this IP.  A common example "
        "is external load-balancers that are not part of the Kubernetes system."),
    COL("Port(s)", "string",
        "The list of ports that are exposed by this service. More info: "
        "https://kubernetes.io/docs/concepts/services-networking/service/"
        "#virtual-ips-and-service-proxies"),
    COL_AGE,
    WIDE("Selector", "string",
         "Route service traffic to pods with label keys and values matching this selector. If "
         "empty or not present, the service is assumed to have an external process managing its "
         "endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, "
         "and LoadBalancer. Ignored if type is ExternalName. More info: "
         "https://kubernetes.io/docs/concepts/services-networking/service/"),
    COL_END,
};

static const table_col endpoints_cols[] = {
    COL_NAME,
    COL("Endpoints", "string",
        "The set of all endpoints is the union of all subsets. Addresses are placed into subsets "
        "according to the IPs they share. A single address with multiple ports, some of which are "
        "ready and some of which are not (because they come from different containers) will "
        "result in the address being displayed in different subsets for the different ports. No "
        "address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of "
        "addresses and ports that comprise a service."),
    COL_AGE,
    COL_END,
};

static const table_col endpointslice_cols[] = {
    COL_NAME,
    COL("AddressType", "string",
        "addressType specifies the type of address carried by this EndpointSlice. All addresses "
        "in this slice must be the same type. This field is immutable after creation. The "
        "following address types are currently supported: * IPv4: Represents an IPv4 Address. * "
        "IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name."),
    COL("Ports", "string",
        "ports specifies the list of network ports exposed by each endpoint in this slice. Each "
        "port must have a unique name. When ports is empty, it indicates that there are no "
        "defined ports. When a port is defined with a nil port value, it indicates \"all "
        "ports\". Each slice may include a maximum of 100 ports."),
    COL("Endpoints", "string",
        "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum "
        "of 1000 endpoints."),
    COL_AGE,
    COL_END,
};

static const table_col pvc_cols[] = {
    COL_NAME,
    COL("Status", "string", "Phase represents the current phase of PersistentVolumeClaim."),
    COL("Volume", "string",
        "VolumeName is the binding reference to the PersistentVolume backing this claim."),
    COL("Capacity", "string", "Represents the actual resources of the underlying volume."),
    COL("Access Modes", "string",
        "AccessModes contains the actual access modes the volume backing the PVC has. More info: "
        "https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1"),
    COL("StorageClass", "string", "StorageClass of the pvc"),
    COL("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
    COL_AGE,
    WIDE("VolumeMode", "string",
         "volumeMode defines what type of volume is required by the claim. Value of Filesystem is "
         "implied when not included in claim spec."),
    COL_END,
};

static const table_col configmap_cols[] = {
    COL_NAME,
    COL("Data", "string",
        "Data contains the configuration data. Each key must consist of alphanumeric characters, "
        "'-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The "
        "keys stored in Data must not overlap with the keys in the BinaryData field, this is "
        "enforced during validation process."),
    COL_AGE,
    COL_END,
};

static const table_col secret_cols[] = {
    COL_NAME,
    COL("Type", "string", "Used to facilitate programmatic handling of secret data."),
    COL("Data", "string",
        "Data contains the secret data. Each key must consist of alphanumeric characters, '-', "
        "'_' or '.'. The serialized form of the secret data is a base64 encoded string, "
        "representing the arbitrary (possibly non-string) data value here. Described in "
        "https://tools.ietf.org/html/rfc4648#section-4"),
    COL_AGE,
    COL_END,
};

static const table_col rc_cols[] = {
    COL_NAME,
    COL("Desired", "integer",
        "Replicas is the number of desired replicas. This is a pointer to distinguish between "
        "explicit zero and unspecified. Defaults to 1. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller"
        "#what-is-a-replicationcontroller"),
    COL("Current", "integer",
        "Replicas is the most recently observed number of replicas. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller"
        "#what-is-a-replicationcontroller"),
    COL("Ready", "integer", "The number of ready replicas for this replication controller."),
    COL_AGE,
    WIDE("Containers", "string", DESC_CONTAINERS),
    WIDE("Images", "string", DESC_IMAGES),
    WIDE("Selector", "string",
         "Selector is a label query over pods that should match the Replicas count. If Selector "
         "is empty, it is defaulted to the labels present on the Pod template. Label keys and "
         "values that must match in order to be controlled by this replication controller, if "
         "empty defaulted to labels on Pod template. More info: "
         "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/"
         "#label-selectors"),
    COL_END,
};

static const table_col rs_cols[] = {
    COL_NAME,
    COL("Desired", "integer",
        "Replicas is the number of desired replicas. This is a pointer to distinguish between "
        "explicit zero and unspecified. Defaults to 1. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/"
        "#what-is-a-replicationcontroller"),
    COL("Current", "integer",
        "Replicas is the most recently observed number of replicas. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/"
        "#what-is-a-replicationcontroller"),
    COL("Ready", "integer", "The number of ready replicas for this replica set."),
    COL_AGE,
    WIDE("Containers", "string", DESC_CONTAINERS),
    WIDE("Images", "string", DESC_IMAGES),
    WIDE("Selector", "string",
         "Selector is a label query over pods that should match the replica count. Label keys and "
         "values that must match in order to be controlled by this replica set. It must match "
         "the pod template's labels. More info: "
         "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/"
         "#label-selectors"),
    COL_END,
};

static const table_col serviceaccount_cols[] = {
    COL_NAME,
    COL("Secrets", "string",
        "Secrets is the list of secrets allowed to be used by pods running using this "
        "ServiceAccount. More info: https://kubernetes.io/docs/concepts/configuration/secret"),
    COL_AGE,
    COL_END,
};

static const table_col event_cols[] = {
    COL("Last Seen", "string",
        "The time at which the most recent occurrence of this event was recorded."),
    COL("Type", "string",
        "Type of this event (Normal, Warning), new types could be added in the future"),
    COL("Reason", "string",
        "This should be a short, machine understandable string that gives the reason for the "
        "transition into the object's current status."),
    COL("Object", "string", "The object that this event is about."),
    WIDE("Subobject", "string",
         "If referring to a piece of an object instead of an entire object, this string should "
         "contain a valid JSON/Go field access statement, such as "
         "desiredState.manifest.containers[2]. For example, if the object reference is to a "
         "container within a pod, this would take on a value like: \"spec.containers{name}\" "
         "(where \"name\" refers to the name of the container that triggered the event) or if no "
         "container name is specified \"spec.containers[2]\" (container with index 2 in this "
         "pod). This syntax is chosen only to have some well-defined way of referencing a part of "
         "an object."),
    WIDE("Source", "string",
         "The component reporting this event. Should be a short machine understandable string."),
    COL("Message", "string", "A human-readable description of the status of this operation."),
    WIDE("First Seen", "string",
         "The time at which the event was first recorded. (Time of server receipt is in "
         "TypeMeta.)"),
    WIDE("Count", "string", "The number of times this event has occurred."),
    {"Name", "string", "name", TABLE_DESC_NAME, 1},
    COL_END,
};

static const table_col priorityclass_cols[] = {
    COL_NAME,
    COL("Value", "integer",
        "value represents the integer value of this priority class. This is the actual priority "
        "that pods receive when they have the name of this class in their pod spec."),
    COL("Global-Default", "boolean",
        "globalDefault specifies whether this PriorityClass should be considered as the default "
        "priority for pods that do not have any priority class. Only one PriorityClass can be "
        "marked as `globalDefault`. However, if more than one PriorityClasses exists with their "
        "`globalDefault` field set to true, the smallest value of such global default "
        "PriorityClasses will be used as the default priority."),
    COL_AGE,
    COL("PreemptionPolicy", "string",
        "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, "
        "PreemptLowerPriority. Defaults to PreemptLowerPriority if unset."),
    COL_END,
};

static const table_col storageclass_cols[] = {
    COL_NAME,
    COL("Provisioner", "string", "provisioner indicates the type of the provisioner."),
    COL("ReclaimPolicy", "string",
        "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes "
        "of this storage class. Defaults to Delete."),
    COL("VolumeBindingMode", "string",
        "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound. "
        " When unset, VolumeBindingImmediate is used. This field is only honored by servers that "
        "enable the VolumeScheduling feature."),
    COL("AllowVolumeExpansion", "string",
        "allowVolumeExpansion shows whether the storage class allow volume expand."),
    COL_AGE,
    COL_END,
};

static const table_col deployment_cols[] = {
    COL_NAME,
    COL("Ready", "string", "Number of the pod with ready state"),
    COL("Up-to-date", "string",
        "Total number of non-terminated pods targeted by this deployment that have the desired "
        "template spec."),
    COL("Available", "string",
        "Total number of available pods (ready for at least minReadySeconds) targeted by this "
        "deployment."),
    COL_AGE,
    WIDE("Containers", "string", DESC_CONTAINERS),
    WIDE("Images", "string", DESC_IMAGES),
    WIDE("Selector", "string",
         "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be "
         "the ones affected by this deployment."),
    COL_END,
};

static const table_col statefulset_cols[] = {
    COL_NAME,
    COL("Ready", "string", "Number of the pod with ready state"),
    COL_AGE,
    WIDE("Containers", "string", DESC_CONTAINERS),
    WIDE("Images", "string", DESC_IMAGES),
    COL_END,
};

static const table_col daemonset_cols[] = {
    COL_NAME,
    COL("Desired", "integer",
        "The total number of nodes that should be running the daemon pod (including nodes "
        "correctly running the daemon pod). More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"),
    COL("Current", "integer",
        "The number of nodes that are running at least 1 daemon pod and are supposed to run the "
        "daemon pod. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"),
    COL("Ready", "integer",
        "numberReady is the number of nodes that should be running the daemon pod and have one or "
        "more of the daemon pod running with a Ready Condition."),
    COL("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod"),
    COL("Available", "integer",
        "The number of nodes that should be running the daemon pod and have one or more of the "
        "daemon pod running and available (ready for at least spec.minReadySeconds)"),
    COL("Node Selector", "string",
        "NodeSelector is a selector which must be true for the pod to fit on a node. Selector "
        "which must match a node's labels for the pod to be scheduled on that node. More info: "
        "https://kubernetes.io/docs/concepts/configuration/assign-pod-node/"),
    COL_AGE,
    WIDE("Containers", "string", DESC_CONTAINERS),
    WIDE("Images", "string", DESC_IMAGES),
    WIDE("Selector", "string",
         "A label query over pods that are managed by the daemon set. Must match in order to be "
         "controlled. It must match the pod template's labels. More info: "
         "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/"
         "#label-selectors"),
    COL_END,
};

static const table_col job_cols[] = {
    COL_NAME,
    COL("Status", "string", "Status of the job."),
    COL("Completions", "string",
        "The completion status of the job: succeeded pods over completions."),
    COL("Duration", "string", "Time required to complete the job."),
    COL_AGE,
    WIDE("Containers", "string", DESC_CONTAINERS),
    WIDE("Images", "string", DESC_IMAGES),
    WIDE("Selector", "string",
         "A label query over pods that should match the pod count. Normally, the system sets "
         "this field for you."),
    COL_END,
};
static const table_col cronjob_cols[] = {
    COL_NAME,
    COL("Schedule", "string", "The schedule in Cron format."),
    COL("Timezone", "string", "The time zone name for the given schedule."),
    COL("Suspend", "boolean", "Whether subsequent executions are suspended."),
    COL("Active", "integer", "The number of running jobs."),
    COL("Last Schedule", "string", "When the job was last successfully scheduled."),
    COL_AGE,
    WIDE("Containers", "string", DESC_CONTAINERS),
    WIDE("Images", "string", DESC_IMAGES),
    WIDE("Selector", "string",
         "A label query over pods that should match the pod count. Normally, the system sets "
         "this field for you."),
    COL_END,
};

/* Capsule's printer columns (types as its CRDs declare them), described in
 * our words. Each carries the jsonPath its CRD declares (table_crd_columns:
 * `allotd crds`), where the value the row function prints lives. Where the
 * row function decides more than a JSONPath can say, the path is the
 * nearest one and the difference is noted at the column. */
#define CRD_COL(n, t, d, p)                                                                        \
    {                                                                                              \
        n, t, "", d, 0, p                                                                          \
    }
#define CRD_WIDE(n, t, d, p)                                                                       \
    {                                                                                              \
        n, t, "", d, 1, p                                                                          \
    }
#define COL_CRD_AGE                                                                                \
    CRD_COL("Age", "date", "How long ago the object was created.", ".metadata.creationTimestamp")
#define READY_COND ".status.conditions[?(@.type==\"Ready\")]"
static const table_col resourcepool_cols[] = {
    COL_NAME,
    CRD_COL("Claims", "integer", "How many claims the pool has allocated.", ".status.claimCount"),
    CRD_COL("Namespaces", "integer", "How many namespaces the pool serves.",
            ".status.namespaceCount"),
    CRD_COL("Ready", "string", "Whether the pool was reconciled: its Ready condition.",
            READY_COND ".status"),
    CRD_COL("Status", "string", "The message of the pool's Ready condition.",
            READY_COND ".message"),
    COL_CRD_AGE,
    COL_END,
};

/* As a CRD, a claim's columns read status.condition only (allot writes it
 * on every claim it acts on; the fallback to the claim's conditions is for
 * claims stored before it did), and In Use is the Bound condition's status
 * whatever its reason. */
static const table_col resourcepoolclaim_cols[] = {
    COL_NAME,
    CRD_COL("Pool", "string", "The ResourcePool being claimed from.", ".status.pool.name"),
    CRD_COL("Status", "string",
            "The claim's state: Assigned (False: in no pool) or Bound (its status.condition).",
            ".status.condition.type"),
    CRD_COL("Reason", "string",
            "Why: Failed, Succeeded, PoolExhausted or QueueExhausted (its status.condition).",
            ".status.condition.reason"),
    CRD_COL("Message", "string", "The message of the claim's status.condition.",
            ".status.condition.message"),
    COL_CRD_AGE,
    CRD_WIDE("In Use", "string",
             "Whether pods use the claimed resources, so that the claim cannot be released: its "
             "Bound condition.",
             ".status.conditions[?(@.type==\"Bound\")].status"),
    COL_END,
};

/* As a CRD, Status is the Ready condition's message whatever its status
 * (a JSONPath cannot choose the reason when it is False, as the row
 * function does). */
static const table_col customquota_cols[] = {
    COL_NAME,
    CRD_COL("Limit", "string", "The most the quota lets its objects add up to.", ".spec.limit"),
    CRD_COL("Used", "string", "What the objects the quota counts add up to.", ".status.usage.used"),
    CRD_COL("Available", "string", "What is left below the limit.", ".status.usage.available"),
    CRD_COL("Ready", "string", "Whether the quota was reconciled: its Ready condition.",
            READY_COND ".status"),
    CRD_COL("Status", "string",
            "The message of the quota's Ready condition while it is True, else its reason.",
            READY_COND ".message"),
    COL_CRD_AGE,
    COL_END,
};
#undef READY_COND

static const table_col rbac_role_cols[] = {
    COL_NAME,
    COL("Created At", "date", TABLE_DESC_AGE),
    COL_END,
};

#define DESC_ROLEREF                                                                               \
    "RoleRef can reference a Role in the current namespace or a ClusterRole in the global "        \
    "namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This "     \
    "field is immutable."
#define DESC_CLUSTER_ROLEREF                                                                       \
    "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be "  \
    "resolved, the Authorizer must return an error. This field is immutable."
static const table_col rolebinding_cols[] = {
    COL_NAME,
    COL("Role", "string", DESC_ROLEREF),
    COL_AGE,
    WIDE("Users", "string", "Users in the roleBinding"),
    WIDE("Groups", "string", "Groups in the roleBinding"),
    WIDE("ServiceAccounts", "string", "ServiceAccounts in the roleBinding"),
    COL_END,
};
static const table_col clusterrolebinding_cols[] = {
    COL_NAME,
    COL("Role", "string", DESC_CLUSTER_ROLEREF),
    COL_AGE,
    WIDE("Users", "string", "Users in the clusterRoleBinding"),
    WIDE("Groups", "string", "Groups in the clusterRoleBinding"),
    WIDE("ServiceAccounts", "string", "ServiceAccounts in the clusterRoleBinding"),
    COL_END,
};

/* LimitRange has no printer upstream either: it gets the default table. */
static const table_printer printers[] = {
    {"", "namespaces", namespace_cols, namespace_row, NULL},
    {"", "pods", pod_cols, pod_row, pod_conds},
    {"", "nodes", node_cols, node_row, NULL},
    {"", "resourcequotas", quota_cols, quota_row, NULL},
    {"", "services", service_cols, service_row, NULL},
    {"", "endpoints", endpoints_cols, endpoints_row, NULL},
    {"", "persistentvolumeclaims", pvc_cols, pvc_row, NULL},
    {"", "configmaps", configmap_cols, configmap_row, NULL},
    {"", "secrets", secret_cols, secret_row, NULL},
    {"", "replicationcontrollers", rc_cols, rc_row, NULL},
    {"", "serviceaccounts", serviceaccount_cols, serviceaccount_row, NULL},
    {"", "events", event_cols, event_row, NULL},
    {"scheduling.k8s.io", "priorityclasses", priorityclass_cols, priorityclass_row, NULL},
    {"storage.k8s.io", "storageclasses", storageclass_cols, storageclass_row, NULL},
    {"discovery.k8s.io", "endpointslices", endpointslice_cols, endpointslice_row, NULL},
    {"apps", "deployments", deployment_cols, deployment_row, NULL},
    {"apps", "replicasets", rs_cols, rs_row, NULL},
    {"apps", "statefulsets", statefulset_cols, statefulset_row, NULL},
    {"apps", "daemonsets", daemonset_cols, daemonset_row, NULL},
    {"batch", "jobs", job_cols, job_row, NULL},
    {"batch", "cronjobs", cronjob_cols, cronjob_row, NULL},
    {"capsule.clastix.io", "resourcepools", resourcepool_cols, resourcepool_row, NULL},
    {"capsule.clastix.io", "resourcepoolclaims", resourcepoolclaim_cols, resourcepoolclaim_row,
     NULL},
    {"capsule.clastix.io", "customquotas", customquota_cols, customquota_row, NULL},
    {"capsule.clastix.io", "globalcustomquotas", customquota_cols, customquota_row, NULL},
    {"rbac.authorization.k8s.io", "roles", rbac_role_cols, rbac_role_row, NULL},
    {"rbac.authorization.k8s.io", "clusterroles", rbac_role_cols, rbac_role_row, NULL},
    {"rbac.authorization.k8s.io", "rolebindings", rolebinding_cols, rbac_binding_row, NULL},
    {"rbac.authorization.k8s.io", "clusterrolebindings", clusterrolebinding_cols, rbac_binding_row,
     NULL},
};

const table_printer *table_printer_find(const char *group, const char *resource)
{
    for (size_t i = 0; i < sizeof printers / sizeof *printers; i++)
        if (strcmp(printers[i].group, group) == 0 && strcmp(printers[i].resource, resource) == 0)
            return &printers[i];
    return NULL;
}
