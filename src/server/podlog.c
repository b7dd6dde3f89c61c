/* podlog.c - GET pods/log (`kubectl logs`) where no container runs.
 *
 * Upstream's apiserver validates the request and the container name, then
 * streams the kubelet's answer. allot's node agent plays the kubelet without
 * running anything, so there is no output to stream. What is answered, as
 * upstream would in each case:
 *  - the pod or the container unknown: 404 / 400 with upstream's texts
 *    (`container x is not valid for pod y`);
 *  - a pod bound to no node: an empty log (upstream's nil location);
 *  - a container not started yet: 400 `container "c" in pod "p" is waiting
 *    to start: <reason>` (the kubelet's text; ContainerCreating while the
 *    node agent has not started it);
 *  - `--previous`: 400 `previous terminated container "c" in pod "p" not
 *    found` (the agent never restarts a container);
 *  - a container the node agent runs or ran (its containerID allot://...):
 *    200, text/plain, one line saying so, so that `kubectl logs` prints why
 *    there is nothing and exits 0 as it does for a container that wrote
 *    nothing. --timestamps prefixes the container's start time, --tail=0
 *    gives nothing, --limit-bytes cuts, --follow ends at once;
 *  - a container a real kubelet reports: 400, allot does not proxy to
 *    kubelets.
 * RBAC is upstream's: `get` on pods/log (view and up).
 */
#include "core/jget.h"
#include "registry/registry.h"
#include "server/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_LINE_MAX 2048

/* The container's spec in any of the pod's container lists, or NULL. */
static const json_t *find_container(const json_t *pod, const char *name)
{
    static const char *const lists[] = {"containers", "initContainers", "ephemeralContainers"};
    const json_t *spec = json_object_get(pod, "spec");
    for (size_t l = 0; l < 3; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(spec, lists[l]), i,
                           c) if (!strcmp(jtext(c, "name"), name)) return c;
    }
    return NULL;
}

static const json_t *container_status(const json_t *pod, const char *name)
{
    static const char *const lists[] = {"containerStatuses", "initContainerStatuses",
                                        "ephemeralContainerStatuses"};
    const json_t *status = json_object_get(pod, "status");
    for (size_t l = 0; l < 3; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(status, lists[l]), i,
                           c) if (!strcmp(jtext(c, "name"), name)) return c;
    }
    return NULL;
}

/* validateContainer: the named container, or the only one. 0, or -1 with
 * the 400 on rs. */
static int pick_container(const json_t *pod, const char *want, const char *pod_name, resp *rs,
                          const char **out)
{
    const json_t *cs = json_object_get(json_object_get(pod, "spec"), "containers");
    if (want && *want) {
        if (!find_container(pod, want)) {
            resp_errf(rs, API_BAD_REQUEST, "container %s is not valid for pod %s", want, pod_name);
            return -1;
        }
        *out = want;
        return 0;
    }
    if (json_array_size(cs) == 1) {
        *out = jtext(json_array_get(cs, 0), "name");
        return 0;
    }
    char names[1024] = "";
    size_t i, off = 0;
    json_t *c;
    json_array_foreach(cs, i, c)
    {
        int w = snprintf(names + off, sizeof names - off, "%s%s", i ? " " : "", jtext(c, "name"));
        if (w < 0 || (size_t)w >= sizeof names - off) break;
        off += (size_t)w;
    }
    resp_errf(rs, API_BAD_REQUEST,
              "a container name must be specified for pod %s, choose one of: [%s]", pod_name,
              names);
    return -1;
}

/* PodLogOptions' numbers: absent, or valid as upstream validates them.
 * 0, or -1 with the error on rs. */
static int log_options(const req *rq, int64_t *tail, int64_t *limit, resp *rs)
{
    api_err e;
    api_err_init(&e);
    *tail = *limit = -1;
    int a = query_int64(rq, "tailLines", tail, &e);
    int b = a < 0 ? 0 : query_int64(rq, "limitBytes", limit, &e);
    if (a < 0 || b < 0) {
        resp_err(rs, &e);
        api_err_clear(&e);
        return -1;
    }
    api_err_clear(&e);
    if (a > 0 && *tail < 0) {
        resp_errf(rs, API_INVALID,
                  "PodLogOptions \"\" is invalid: tailLines: Invalid value: %lld: must be greater "
                  "than or equal to 0",
                  (long long)*tail);
        return -1;
    }
    if (b > 0 && *limit < 1) {
        resp_errf(rs, API_INVALID,
                  "PodLogOptions \"\" is invalid: limitBytes: Invalid value: %lld: must be greater "
                  "than 0",
                  (long long)*limit);
        return -1;
    }
    return 0;
}

static void text_body(resp *rs, const char *text, int64_t limit)
{
    size_t len = strlen(text);
    if (limit >= 0 && (uint64_t)limit < len) len = (size_t)limit;
    rs->code = 200;
    rs->raw = malloc(len + 1);
    if (!rs->raw) {
        resp_errf(rs, API_INTERNAL, "out of memory");
        return;
    }
    memcpy(rs->raw, text, len);
    rs->raw[len] = '\0';
    rs->raw_len = len;
    rs->content_type = "text/plain";
}

void podlog_serve(req *rq, resp *rs, const api_kind *k, const char *ns, const char *name)
{
    int64_t tail, limit;
    if (log_options(rq, &tail, &limit, rs) != 0) return;
    api_err e;
    api_err_init(&e);
    json_t *pod = reg_get(rq->srv->st, k, ns, name, &e);
    if (!pod) {
        resp_err(rs, &e);
        api_err_clear(&e);
        return;
    }
    api_err_clear(&e);
    const char *c = NULL;
    if (pick_container(pod, rq->query(rq, "container"), name, rs, &c) != 0) goto done;
    const char *node = jtext(pod, "spec", "nodeName");
    const json_t *st = container_status(pod, c);
    const json_t *state = json_object_get(st, "state");
    const json_t *running = json_object_get(state, "running");
    const json_t *term = json_object_get(state, "terminated");
    if (!*node) {
        text_body(rs, "", limit); /* upstream: no host, no location, an empty stream */
    } else if (query_bool(rq, "previous")) {
        resp_errf(rs, API_BAD_REQUEST,
                  "previous terminated container \"%s\" in pod \"%s\" not found", c, name);
    } else if (!running && !term) {
        const char *why = jtext(json_object_get(state, "waiting"), "reason");
        resp_errf(rs, API_BAD_REQUEST, "container \"%s\" in pod \"%s\" is waiting to start: %s", c,
                  name, *why ? why : "ContainerCreating");
    } else if (strncmp(jtext(st, "containerID"), "allot://", 8)) {
        resp_errf(rs, API_BAD_REQUEST,
                  "container \"%s\" in pod \"%s\" runs on node \"%s\": allot does not fetch logs "
                  "from kubelets",
                  c, name, node);
    } else {
        char line[LOG_LINE_MAX];
        const char *started = jtext(running ? running : term, "startedAt");
        snprintf(line, sizeof line,
                 "%s%sallot: container \"%s\" of pod \"%s/%s\" is simulated by allotd's node agent "
                 "on node \"%s\": no process runs, so it writes no log\n",
                 query_bool(rq, "timestamps") ? started : "",
                 query_bool(rq, "timestamps") ? " " : "", c, ns, name, node);
        text_body(rs, tail == 0 ? "" : line, limit);
    }
done:
    json_decref(pod);
}
