/* workq.c - a keyed work queue with due times (workq.h).
 *
 * One entry per key known to the queue, found through a strmap and owning
 * its key: it lives while it is queued, due, or being synced, and is freed
 * when it is none of these. The queue is an array of entries in order of
 * first mark ([head, n): a run consumes from head, marks append); the due
 * times a binary min-heap of entries, each entry knowing its place there, so
 * a due time is lowered or removed in O(log n) without a scan.
 */
#include "controllers/workq.h"

#include "core/strmap.h"

#include <stdlib.h>
#include <string.h>

#define NOT_DUE SIZE_MAX

typedef struct wq_ent {
    char *key;    /* owned; the key of workq.ents */
    bool queued;  /* in queue[head, n) */
    size_t hpos;  /* its place in heap, NOT_DUE when not due */
    int64_t at;   /* due time, when hpos != NOT_DUE */
    uint64_t seq; /* order of due times set (ties of `at` pop first set first) */
} wq_ent;

struct workq {
    strmap *ents; /* key -> wq_ent */
    wq_ent **queue;
    size_t head, n, cap;
    wq_ent **heap;
    size_t hn, hcap;
    uint64_t seq;
    wq_ent *running; /* the entry being synced: kept while its sync runs */
};

workq *workq_new(void)
{
    workq *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    if (!(q->ents = strmap_new())) {
        free(q);
        return NULL;
    }
    return q;
}

void workq_free(workq *q)
{
    if (!q) return;
    void *v;
    for (size_t it = 0; strmap_next(q->ents, &it, NULL, &v);) {
        free(((wq_ent *)v)->key);
        free(v);
    }
    strmap_free(q->ents);
    free(q->queue);
    free(q->heap);
    free(q);
}

/* ---- entries ---- */

static wq_ent *ent_get(workq *q, const char *key)
{
    wq_ent *e = strmap_get(q->ents, key);
    if (e) return e;
    if (!(e = calloc(1, sizeof *e))) return NULL;
    e->hpos = NOT_DUE;
    if (!(e->key = strdup(key)) || strmap_put(q->ents, e->key, e, NULL) != 0) {
        free(e->key);
        free(e);
        return NULL;
    }
    return e;
}

/* Free e if nothing holds it any more. */
static void ent_release(workq *q, wq_ent *e)
{
    if (e->queued || e->hpos != NOT_DUE || e == q->running) return;
    strmap_del(q->ents, e->key);
    free(e->key);
    free(e);
}

/* ---- the queue ---- */

/* Append e unless queued: false when out of memory. */
static bool enqueue(workq *q, wq_ent *e)
{
    if (e->queued) return true;
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 16;
        wq_ent **v = realloc(q->queue, cap * sizeof *v);
        if (!v) return false;
        q->queue = v;
        q->cap = cap;
    }
    q->queue[q->n++] = e;
    e->queued = true;
    return true;
}

/* Move the unconsumed part [head, n) to the front. */
static void compact(workq *q)
{
    if (!q->head) return;
    memmove(q->queue, q->queue + q->head, (q->n - q->head) * sizeof *q->queue);
    q->n -= q->head;
    q->head = 0;
}

/* ---- the heap ---- */

static bool earlier(const wq_ent *a, const wq_ent *b)
{
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void heap_place(workq *q, size_t i, wq_ent *e)
{
    q->heap[i] = e;
    e->hpos = i;
}

static void sift_up(workq *q, size_t i)
{
    wq_ent *e = q->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!earlier(e, q->heap[parent])) break;
        heap_place(q, i, q->heap[parent]);
        i = parent;
    }
    heap_place(q, i, e);
}

static void sift_down(workq *q, size_t i)
{
    wq_ent *e = q->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= q->hn) break;
        if (child + 1 < q->hn && earlier(q->heap[child + 1], q->heap[child])) child++;
        if (!earlier(q->heap[child], e)) break;
        heap_place(q, i, q->heap[child]);
        i = child;
    }
    heap_place(q, i, e);
}

/* Take e (in the heap) out of it. */
static void heap_remove(workq *q, wq_ent *e)
{
    size_t i = e->hpos;
    wq_ent *last = q->heap[--q->hn];
    e->hpos = NOT_DUE;
    if (last == e) return;
    heap_place(q, i, last);
    sift_down(q, i);
    sift_up(q, last->hpos);
}

/* ---- the interface ---- */

void workq_mark(workq *q, const char *key)
{
    wq_ent *e = ent_get(q, key);
    if (e && !enqueue(q, e)) ent_release(q, e); /* dropped: the resync marks it again */
}

void workq_due(workq *q, const char *key, int64_t at_ms)
{
    wq_ent *e = ent_get(q, key);
    if (!e) return;
    if (e->hpos != NOT_DUE) {
        if (at_ms < e->at) {
            e->at = at_ms;
            sift_up(q, e->hpos);
        }
        return;
    }
    if (q->hn == q->hcap) {
        size_t cap = q->hcap ? 2 * q->hcap : 16;
        wq_ent **v = realloc(q->heap, cap * sizeof *v);
        if (!v) {
            ent_release(q, e); /* dropped: the resync syncs it again */
            return;
        }
        q->heap = v;
        q->hcap = cap;
    }
    e->at = at_ms;
    e->seq = q->seq++;
    heap_place(q, q->hn++, e);
    sift_up(q, e->hpos);
}

void workq_forget(workq *q, const char *key)
{
    wq_ent *e = strmap_get(q->ents, key);
    if (!e || e->hpos == NOT_DUE) return;
    heap_remove(q, e);
    ent_release(q, e);
}

static bool stopped(const atomic_bool *stop)
{
    return stop && atomic_load(stop);
}

bool workq_run(workq *q, int64_t now_ms, workq_sync_fn sync, void *arg, const atomic_bool *stop)
{
    /* due keys first; one that cannot be queued (out of memory) stays due */
    while (q->hn && q->heap[0]->at <= now_ms) {
        wq_ent *e = q->heap[0];
        if (!enqueue(q, e)) break;
        heap_remove(q, e);
    }
    for (int round = 0; round < WORKQ_ROUNDS && q->head < q->n && !stopped(stop); round++) {
        size_t end = q->n; /* marks during the round go after: the next round */
        while (q->head < end && !stopped(stop)) {
            wq_ent *e = q->queue[q->head++];
            e->queued = false;
            q->running = e;
            sync(arg, e->key);
            q->running = NULL;
            ent_release(q, e);
        }
    }
    compact(q);
    return q->n > 0;
}

size_t workq_queued(const workq *q)
{
    return q->n - q->head;
}

bool workq_next_due(const workq *q, int64_t *at_ms)
{
    if (!q->hn) return false;
    *at_ms = q->heap[0]->at;
    return true;
}
