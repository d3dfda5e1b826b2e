/*
 * retrolink device timing: see rl-sched.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "hw/retrolink/core/rl-sched.h"

static bool ev_before(const RlEvent *a, const RlEvent *b)
{
    if (a->time != b->time) {
        return a->time < b->time;
    }
    if (a->cls != b->cls) {
        return a->cls < b->cls;
    }
    return a->key < b->key;
}

#define EV(s, i) (&g_array_index((s)->heap, RlEvent, (i)))

static void swap_ev(RlSched *s, size_t i, size_t j)
{
    RlEvent t = *EV(s, i);
    *EV(s, i) = *EV(s, j);
    *EV(s, j) = t;
}

static void sift_down(RlSched *s, size_t i)
{
    size_t n = s->heap->len;

    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && ev_before(EV(s, l), EV(s, m))) {
            m = l;
        }
        if (r < n && ev_before(EV(s, r), EV(s, m))) {
            m = r;
        }
        if (m == i) {
            return;
        }
        swap_ev(s, i, m);
        i = m;
    }
}

static void sift_up(RlSched *s, size_t i)
{
    while (i > 0 && ev_before(EV(s, i), EV(s, (i - 1) / 2))) {
        swap_ev(s, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void rearm(RlSched *s)
{
    /*
     * QEMU_CLOCK_VIRTUAL is an int64_t: an event at or beyond INT64_MAX (a frame the
     * fabric says arrives then) is never due. timer_mod_ns() would take such a time
     * as negative, i.e. due at once, and the callback would re-arm it for ever.
     */
    if (s->heap->len && EV(s, 0)->time < INT64_MAX) {
        timer_mod_ns(s->timer, EV(s, 0)->time);
    } else {
        timer_del(s->timer);
    }
}

static void rl_sched_cb(void *opaque)
{
    RlSched *s = opaque;
    uint64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    while (s->heap->len && EV(s, 0)->time <= now) {
        RlEvent ev = *EV(s, 0);
        swap_ev(s, 0, s->heap->len - 1);
        g_array_set_size(s->heap, s->heap->len - 1);
        sift_down(s, 0);
        s->fn(s->opaque, &ev);
    }
    rearm(s);
}

void rl_sched_init(RlSched *s, RlEventFn *fn, void *opaque)
{
    s->heap = g_array_new(false, true, sizeof(RlEvent));
    s->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rl_sched_cb, s);
    s->fn = fn;
    s->opaque = opaque;
    s->counter = 0;
}

void rl_sched_destroy(RlSched *s)
{
    if (s->timer) {
        timer_free(s->timer);
        s->timer = NULL;
    }
    if (s->heap) {
        g_array_free(s->heap, true);
        s->heap = NULL;
    }
}

void rl_sched_add(RlSched *s, uint64_t time, uint32_t cls, uint64_t key, int kind,
                  uint32_t arg, uint32_t gen, void *ptr)
{
    RlEvent ev = {
        .time = time, .cls = cls, .kind = kind, .arg = arg, .gen = gen, .ptr = ptr,
        .key = cls == RL_EV_CLASS_INTERNAL ? s->counter++ : key,
    };
    g_array_append_val(s->heap, ev);
    sift_up(s, s->heap->len - 1);
    rearm(s);
}

size_t rl_sched_count(const RlSched *s)
{
    return s->heap->len;
}

RlEvent *rl_sched_nth(RlSched *s, size_t i)
{
    return EV(s, i);
}

void rl_sched_filter(RlSched *s, bool (*keep)(void *opaque, RlEvent *ev), void *opaque)
{
    size_t out = 0;

    for (size_t i = 0; i < s->heap->len; i++) {
        if (keep(opaque, EV(s, i))) {
            *EV(s, out++) = *EV(s, i);
        }
    }
    g_array_set_size(s->heap, out);
    for (size_t i = out / 2 + 1; i-- > 0;) {
        sift_down(s, i);
    }
    rearm(s);
}

uint64_t rl_server_run(RlServer *s, uint64_t ready, uint64_t dur)
{
    uint64_t start = MAX(ready, s->free_at);

    s->free_at = start + dur;
    return s->free_at;
}

uint64_t rl_channels_run(RlChannels *c, uint64_t ready, uint64_t dur)
{
    uint32_t best = 0;

    for (uint32_t i = 1; i < c->n; i++) {
        if (c->free_at[i] < c->free_at[best]) {
            best = i;
        }
    }
    uint64_t start = MAX(ready, c->free_at[best]);
    c->free_at[best] = start + dur;
    return c->free_at[best];
}

uint64_t rl_bytes_ns(uint64_t bytes, uint64_t rate)
{
    unsigned __int128 num = (unsigned __int128)bytes * 1000000000u + rate - 1;

    return rate ? (uint64_t)(num / rate) : 0;
}
