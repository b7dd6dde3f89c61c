/* conntrack.c - waiting connections, per address and in all (conntrack.h).
 *
 * An entry handed back (evicted or expired) leaves the lists at once, so
 * the heads are always the oldest connections still waiting and every call
 * is O(1) but for the address lookup.
 */
#include "server/conntrack.h"

#include "core/strmap.h"

#include <stdlib.h>
#include <string.h>

struct ct_addr {
    size_t n;
    ct_entry *head, *tail;
    char name[]; /* the map's key */
};

struct conntrack {
    strmap *addrs; /* name -> ct_addr; an address lives while it has entries */
    ct_entry *head, *tail;
    size_t n;
    unsigned per_addr, total;
    double deadline;
};

conntrack *conntrack_new(unsigned per_addr, unsigned total, double deadline_s)
{
    conntrack *t = calloc(1, sizeof *t);
    if (!t || !(t->addrs = strmap_new())) {
        free(t);
        return NULL;
    }
    t->per_addr = per_addr ? per_addr : 1;
    t->total = total ? total : 1;
    t->deadline = deadline_s;
    return t;
}

void conntrack_free(conntrack *t)
{
    if (!t) return;
    void *v;
    for (size_t it = 0; strmap_next(t->addrs, &it, NULL, &v);)
        free(v);
    strmap_free(t->addrs);
    free(t);
}

/* Off both lists; the address goes when it has no entry left. */
static void unlink_entry(conntrack *t, ct_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        t->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        t->tail = e->prev;
    t->n--;
    ct_addr *a = e->addr;
    if (e->addr_prev)
        e->addr_prev->addr_next = e->addr_next;
    else
        a->head = e->addr_next;
    if (e->addr_next)
        e->addr_next->addr_prev = e->addr_prev;
    else
        a->tail = e->addr_prev;
    if (--a->n == 0) {
        strmap_del(t->addrs, a->name);
        free(a);
    }
    e->prev = e->next = e->addr_prev = e->addr_next = NULL;
    e->addr = NULL;
}

static ct_entry *hand_back(conntrack *t, ct_entry *e)
{
    unlink_entry(t, e);
    e->evicted = true;
    return e;
}

ct_entry *conntrack_add(conntrack *t, ct_entry *e, const char *addr, double now)
{
    ct_addr *a = strmap_get(t->addrs, addr);
    if (!a) {
        size_t len = strlen(addr) + 1;
        if (!(a = calloc(1, sizeof *a + len))) return NULL;
        memcpy(a->name, addr, len);
        if (strmap_put(t->addrs, a->name, a, NULL) != 0) {
            free(a);
            return NULL;
        }
    }
    e->t0 = now;
    e->listed = true;
    e->evicted = false;
    e->addr = a;
    e->next = e->addr_next = NULL;
    e->prev = t->tail;
    if (t->tail)
        t->tail->next = e;
    else
        t->head = e;
    t->tail = e;
    t->n++;
    e->addr_prev = a->tail;
    if (a->tail)
        a->tail->addr_next = e;
    else
        a->head = e;
    a->tail = e;
    a->n++;
    /* Over a bound, the oldest gives way: never e itself, the newest. */
    if (a->n > t->per_addr) return hand_back(t, a->head);
    if (t->n > t->total) return hand_back(t, t->head);
    return NULL;
}

void conntrack_remove(conntrack *t, ct_entry *e)
{
    if (e->listed && !e->evicted) unlink_entry(t, e);
    e->listed = false;
}

ct_entry *conntrack_expired(conntrack *t, double now)
{
    if (!t->head || t->head->t0 + t->deadline > now) return NULL;
    return hand_back(t, t->head);
}

bool conntrack_next_deadline(const conntrack *t, double *at)
{
    if (!t->head) return false;
    *at = t->head->t0 + t->deadline;
    return true;
}

size_t conntrack_waiting(const conntrack *t)
{
    return t->n;
}

size_t conntrack_waiting_from(const conntrack *t, const char *addr)
{
    const ct_addr *a = strmap_get(t->addrs, addr);
    return a ? a->n : 0;
}
