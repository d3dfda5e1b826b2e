/*
 * The fabric's event queue, ordered by (time, kind, node, network, seq): never by
 * the order in which the host delivered messages, so runs are deterministic. (A
 * node numbers its frames per network: the network is part of the key.)
 */
#include <stdlib.h>
#include <string.h>

#include "fabric.h"

static bool before(const struct event *a, const struct event *b)
{
    if (a->time != b->time) {
        return a->time < b->time;
    }
    if (a->kind != b->kind) {
        return a->kind < b->kind;
    }
    if (a->node != b->node) {
        return a->node < b->node;
    }
    uint32_t na = a->net ? a->net->id : 0, nb = b->net ? b->net->id : 0;
    if (na != nb) {
        return na < nb;
    }
    return a->seq < b->seq;
}

static void swap(struct event *a, struct event *b)
{
    struct event t = *a;
    *a = *b;
    *b = t;
}

void eq_push(struct event_queue *q, const struct event *ev)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 64;
        q->ev = xreallocarray(q->ev, q->cap, sizeof(*q->ev));
    }
    size_t i = q->n++;
    q->ev[i] = *ev;
    while (i > 0 && before(&q->ev[i], &q->ev[(i - 1) / 2])) {
        swap(&q->ev[i], &q->ev[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
}

const struct event *eq_peek(const struct event_queue *q)
{
    return q->n ? &q->ev[0] : NULL;
}

bool eq_pop(struct event_queue *q, struct event *out)
{
    if (!q->n) {
        return false;
    }
    *out = q->ev[0];
    q->ev[0] = q->ev[--q->n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->n && before(&q->ev[l], &q->ev[m])) {
            m = l;
        }
        if (r < q->n && before(&q->ev[r], &q->ev[m])) {
            m = r;
        }
        if (m == i) {
            break;
        }
        swap(&q->ev[i], &q->ev[m]);
        i = m;
    }
    return true;
}

static void pa_swap(struct arrival *a, struct arrival *b)
{
    struct arrival t = *a;
    *a = *b;
    *b = t;
}

void pa_push(struct pending_arrivals *p, uint64_t t, uint32_t src)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        p->a = xreallocarray(p->a, p->cap, sizeof(*p->a));
    }
    size_t i = p->n++;
    p->a[i] = (struct arrival){ .t = t, .src = src };
    while (i > 0 && p->a[i].t < p->a[(i - 1) / 2].t) {
        pa_swap(&p->a[i], &p->a[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
}

bool pa_pop_before(struct pending_arrivals *p, uint64_t t, struct arrival *out)
{
    if (!p->n || p->a[0].t >= t) {
        return false;
    }
    *out = p->a[0];
    p->a[0] = p->a[--p->n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < p->n && p->a[l].t < p->a[m].t) {
            m = l;
        }
        if (r < p->n && p->a[r].t < p->a[m].t) {
            m = r;
        }
        if (m == i) {
            break;
        }
        pa_swap(&p->a[i], &p->a[m]);
        i = m;
    }
    return true;
}

uint64_t pa_min(const struct pending_arrivals *p)
{
    return p->n ? p->a[0].t : NEVER;
}
