/*
 * retrolink: hold a node's virtual clock still while its VM stops itself; see
 * rl-clock-hold.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"

#include "hw/retrolink/core/rl-clock-hold.h"

/* The hold's list: nothing to wake (qemu_notify_event would recurse) */
static void rl_clock_hold_notify(void *opaque, QEMUClockType type)
{
}

void rl_clock_hold_init(RlClockHold *h)
{
    timerlistgroup_init(&h->tlg, rl_clock_hold_notify, NULL);
    h->timer = timer_new_full(&h->tlg, QEMU_CLOCK_VIRTUAL, SCALE_NS, 0, NULL, NULL);
}

void rl_clock_hold_destroy(RlClockHold *h)
{
    if (h->timer) {
        timer_free(h->timer);
        h->timer = NULL;
        timerlistgroup_deinit(&h->tlg);
    }
}

void rl_clock_hold_start(RlClockHold *h)
{
    timer_mod_ns(h->timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
}

void rl_clock_hold_end(RlClockHold *h)
{
    timer_del(h->timer);
}
