/*
 * retrolink device timing: see rl-sched.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
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
    if (s->changed) {
        s->changed(s->changed_opaque);
    }
}

/* Run every event due before 'end' (exclusive), in order; then re-arm. */
static void run_before(RlSched *s, uint64_t end)
{
    while (s->heap->len && EV(s, 0)->time < end) {
        RlEvent ev = *EV(s, 0);
        swap_ev(s, 0, s->heap->len - 1);
        g_array_set_size(s->heap, s->heap->len - 1);
        sift_down(s, 0);
        s->fn(s->opaque, &ev);
    }
    rearm(s);
}

static void rl_sched_cb(void *opaque)
{
    RlSched *s = opaque;

    run_before(s, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + 1);
}

void rl_sched_run_before(RlSched *s, uint64_t end)
{
    run_before(s, end);
}

void rl_sched_init(RlSched *s, RlEventFn *fn, void *opaque)
{
    s->heap = g_array_new(false, true, sizeof(RlEvent));
    s->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rl_sched_cb, s);
    s->fn = fn;
    s->opaque = opaque;
    s->changed = NULL;
    s->counter = 0;
}

void rl_sched_destroy(RlSched *s)
{
    g_free(s->name);
    s->name = NULL;
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

void rl_sched_set_changed(RlSched *s, void (*changed)(void *opaque), void *opaque)
{
    s->changed = changed;
    s->changed_opaque = opaque;
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

/* ---- migration ------------------------------------------------------------------ */

void rl_sched_set_check(RlSched *s, const char *name, RlEventCheckFn *check)
{
    g_free(s->name);
    s->name = g_strdup(name);
    s->check = check;
}

static const char *rl_sched_name(const RlSched *s)
{
    return s->name ? s->name : "retrolink event queue";
}

static const VMStateDescription vmstate_rl_event = {
    .name = "retrolink-event",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(time, RlEvent),
        VMSTATE_UINT32(cls, RlEvent),
        VMSTATE_UINT64(key, RlEvent),
        VMSTATE_INT32(kind, RlEvent),
        VMSTATE_UINT32(arg, RlEvent),
        VMSTATE_UINT32(gen, RlEvent),
        /* not ptr: an event that has one is not saved */
        VMSTATE_END_OF_LIST()
    },
};

static int rl_sched_pre_save(void *opaque)
{
    RlSched *s = opaque;

    if (s->heap->len > RL_SCHED_MAX_SAVED) {
        error_report("%s: %u events pending, more than the %d a snapshot holds",
                     rl_sched_name(s), s->heap->len, RL_SCHED_MAX_SAVED);
        return -EINVAL;
    }
    for (size_t i = 0; i < s->heap->len; i++) {
        if (EV(s, i)->ptr) {
            /* the owner's pre_save should have refused, saying what it is */
            error_report("%s: an event of kind %d holds data in flight and cannot be saved",
                         rl_sched_name(s), EV(s, i)->kind);
            return -EINVAL;
        }
    }
    /* the heap as it is, read in place; post_save lets go of it */
    s->vm_events = (RlEvent *)s->heap->data;
    s->vm_count = s->heap->len;
    return 0;
}

static int rl_sched_post_save(void *opaque)
{
    RlSched *s = opaque;

    s->vm_events = NULL;
    s->vm_count = 0;
    return 0;
}

static int rl_sched_pre_load(void *opaque)
{
    RlSched *s = opaque;

    s->vm_events = NULL;        /* the stream's events are allocated into it */
    s->vm_count = 0;
    return 0;
}

/* Before the events are allocated: a count from the stream is not trusted. */
static bool rl_sched_count_ok(void *opaque, int version_id)
{
    RlSched *s = opaque;

    if (s->vm_count < 0 || s->vm_count > RL_SCHED_MAX_SAVED) {
        error_report("%s: the stream has %d events, not 0..%d", rl_sched_name(s),
                     s->vm_count, RL_SCHED_MAX_SAVED);
        return false;
    }
    return true;
}

static int rl_sched_post_load(void *opaque, int version_id)
{
    RlSched *s = opaque;
    g_autofree RlEvent *loaded = g_steal_pointer(&s->vm_events);
    uint32_t n = s->vm_count;

    s->vm_count = 0;
    for (uint32_t i = 0; i < n; i++) {
        RlEvent *ev = &loaded[i];
        Error *err = NULL;

        ev->ptr = NULL;         /* never in the stream */
        if (ev->cls > RL_EV_CLASS_FRAME) {
            error_report("%s: event %u of %u has class %u, not one of the queue's",
                         rl_sched_name(s), i, n, ev->cls);
            return -EINVAL;
        }
        if (ev->cls == RL_EV_CLASS_INTERNAL && ev->key >= s->counter) {
            error_report("%s: internal event %u of %u is numbered %" PRIu64 ", not below "
                         "the queue's counter %" PRIu64, rl_sched_name(s), i, n, ev->key,
                         s->counter);
            return -EINVAL;
        }
        if (s->check && !s->check(s->opaque, ev, &err)) {
            error_reportf_err(err, "%s: event %u of %u (kind %d, arg %u): ", rl_sched_name(s),
                              i, n, ev->kind, ev->arg);
            return -EINVAL;
        }
    }
    for (size_t i = 0; i < s->heap->len; i++) {
        assert(!EV(s, i)->ptr);   /* the owner's pre_load emptied the queue */
    }
    g_array_set_size(s->heap, 0);
    g_array_append_vals(s->heap, loaded, n);
    for (size_t i = n / 2 + 1; i-- > 0;) {
        sift_down(s, i);
    }
    rearm(s);
    return 0;
}

const VMStateDescription vmstate_rl_sched = {
    .name = "retrolink-sched",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = rl_sched_pre_save,
    .post_save = rl_sched_post_save,
    .pre_load = rl_sched_pre_load,
    .post_load = rl_sched_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(counter, RlSched),
        VMSTATE_INT32(vm_count, RlSched),
        VMSTATE_VALIDATE("event count within the bound", rl_sched_count_ok),
        VMSTATE_STRUCT_VARRAY_ALLOC(vm_events, RlSched, vm_count, 0, vmstate_rl_event,
                                    RlEvent),
        VMSTATE_END_OF_LIST()
    },
};

uint64_t rl_server_run(RlServer *s, uint64_t ready, uint64_t dur)
{
    uint64_t start = MAX(ready, s->free_at);

    s->free_at = start + dur;
    return s->free_at;
}

const VMStateDescription vmstate_rl_server = {
    .name = "retrolink-server",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(free_at, RlServer),
        VMSTATE_END_OF_LIST()
    },
};

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

static int rl_channels_post_load(void *opaque, int version_id)
{
    RlChannels *c = opaque;

    if (c->n < 1 || c->n > RL_MAX_CHANNELS) {
        error_report("retrolink channels: the stream has %u channels, not 1..%d", c->n,
                     RL_MAX_CHANNELS);
        return -EINVAL;
    }
    return 0;
}

const VMStateDescription vmstate_rl_channels = {
    .name = "retrolink-channels",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = rl_channels_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(n, RlChannels),
        VMSTATE_UINT64_ARRAY(free_at, RlChannels, RL_MAX_CHANNELS),
        VMSTATE_END_OF_LIST()
    },
};

uint64_t rl_bytes_ns(uint64_t bytes, uint64_t rate)
{
    unsigned __int128 num = (unsigned __int128)bytes * 1000000000u + rate - 1;

    return rate ? (uint64_t)(num / rate) : 0;
}
