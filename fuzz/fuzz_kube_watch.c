/* fuzz_kube_watch.c - libFuzzer target for the watch stream decoder
 * (kube/watch.h), which reads what a real API server (or anything
 * impersonating one on the network path) streams to allot in cluster mode.
 *
 * Input: byte 0 picks the chunk sizes, the rest is the stream. It is fed
 * twice: whole, and cut into chunks of 1..16 bytes (sizes from a generator
 * seeded by byte 0). Nothing may crash or leak, and (abort() otherwise):
 *   - both feedings deliver the same events (type, resourceVersion, code,
 *     the object's member count) and end the same way (all consumed, or
 *     failed), with the same "unfinished event" state: the decoder's
 *     result may not depend on how the bytes were chunked;
 *   - every event has a known type and an object;
 *   - a failure comes with a message and sticks until reset;
 *   - the buffer stays within the event bound plus the largest chunk.
 * The bound is small here (4 KiB) so inputs reach it.
 */
#include "kube/watch.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT 65536
#define BOUND 4096

static void check(int ok)
{
    if (!ok) abort();
}

typedef struct trace {
    uint64_t h;
    size_t n;
} trace;

static void mix(trace *t, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        t->h = (t->h ^ b[i]) * 1099511628211ULL; /* FNV-1a */
}

static int on_event(void *arg, const kube_watch_event *ev)
{
    trace *t = arg;
    check(ev->type >= KUBE_EV_ADDED && ev->type <= KUBE_EV_ERROR);
    check(ev->type_name != NULL && json_is_object(ev->object));
    check(ev->type == KUBE_EV_ERROR || ev->code == 0);
    size_t members = json_object_size(ev->object);
    mix(t, &ev->type, sizeof ev->type);
    mix(t, &ev->code, sizeof ev->code);
    mix(t, &members, sizeof members);
    if (ev->rv) mix(t, ev->rv, strlen(ev->rv) + 1);
    (void)kube_status_expired(ev->object);
    t->n++;
    return 0;
}

/* Feed p[n] in the chunks `next` gives; returns the last feed's result. */
static int run(const uint8_t *p, size_t n, unsigned seed, trace *t, bool *pending)
{
    kube_watch_decoder d;
    kube_watch_init(&d, BOUND);
    char err[256];
    int rc = 0;
    size_t off = 0;
    while (off < n && rc == 0) {
        size_t k = seed ? 1 + (seed = seed * 1103515245u + 12345u, (seed >> 16) % 16) : n;
        if (k > n - off) k = n - off;
        err[0] = '\0';
        rc = kube_watch_feed(&d, (const char *)p + off, k, on_event, t, err, sizeof err);
        check(rc == 0 || rc == -1);
        check(rc == 0 || err[0] != '\0');
        check(d.len <= BOUND + (seed ? 16 : n));
        off += k;
    }
    if (rc < 0) check(kube_watch_feed(&d, "{}", 2, on_event, t, err, sizeof err) == -1);
    *pending = rc == 0 && kube_watch_pending(&d);
    kube_watch_cleanup(&d);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > MAX_INPUT) return 0;
    unsigned seed = data[0] | 1u;
    trace whole = {14695981039346656037ULL, 0}, pieces = whole;
    bool pw, pp;
    int rw = run(data + 1, size - 1, 0, &whole, &pw);
    int rp = run(data + 1, size - 1, seed, &pieces, &pp);
    check(rw == rp);
    check(pw == pp);
    check(whole.n == pieces.n && whole.h == pieces.h);
    (void)kube_backoff_ms(data[0], 100, 30000, data[0] / 256.0);
    return 0;
}
