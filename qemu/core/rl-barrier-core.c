/*
 * retrolink boot barrier: the registers through which the guest's init says it has
 * booted, and asks whether the cluster has passed the barrier (docs/snapshots.md).
 *
 * Every node's init writes BARRIER_ARRIVE once, when its modules are loaded and its
 * network is up, before it reads its command. The node is then held at that
 * instant (rl_link_barrier_arrive) until every node has arrived; the fabric picks
 * the barrier's time T, the latest arrival, and runs every node to T, where a
 * snapshot may be taken. The guest reads the status register: BARRIER_PASSED from
 * the first read at or after T, BARRIER_WAITING before; and the four registers after
 * it, the microseconds left to T (little-endian, latched when the first is read), so
 * that it sleeps to T at once rather than polling. A run from a snapshot
 * starts at T with this device's state loaded, so its guest sees exactly what a
 * cold boot's does. Without a fabric (no retrolink board) the barrier is passed at
 * once; and with stop-at-arrival (a snapshot of such a node is being made) the VM
 * stops there, at the arriving instruction's end, for the runner to save and resume.
 *
 * The bus front ends (rl-barrier.c, rl-sun4m.c) map these registers.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/timer.h"
#include "system/runstate.h"

#include "hw/retrolink/core/rl-barrier.h"
#include "hw/retrolink/core/rl-link.h"

/* the status register's values: the guest writes ARRIVE, reads WAITING or PASSED */
enum {
    RL_BARRIER_PORT_WAITING = 0,
    RL_BARRIER_PORT_ARRIVE = 1,
    RL_BARRIER_PORT_PASSED = 2,
};
#define RL_BARRIER_UNKNOWN_US   10000   /* before T is known: look again after this */

static uint32_t rl_barrier_left_us(RlBarrier *b)
{
    uint64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (!b->time_known) {
        return RL_BARRIER_UNKNOWN_US;
    }
    return now >= b->time ? 0 : MIN(DIV_ROUND_UP(b->time - now, 1000), UINT32_MAX);
}

uint64_t rl_barrier_read(RlBarrier *b, hwaddr addr)
{
    if (addr >= RL_BARRIER_LEFT_US) {
        if (addr == RL_BARRIER_LEFT_US) {
            b->left_us = b->arrived ? rl_barrier_left_us(b) : RL_BARRIER_UNKNOWN_US;
        }
        return extract32(b->left_us, 8 * (addr - RL_BARRIER_LEFT_US), 8);
    }
    if (b->time_known && qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) >= b->time) {
        return RL_BARRIER_PORT_PASSED;
    }
    return RL_BARRIER_PORT_WAITING;
}

/* Every node arrived: the barrier's time (saved in a snapshot taken there) */
static void rl_barrier_released(void *opaque, uint64_t t)
{
    RlBarrier *b = opaque;

    b->time = t;
    b->time_known = true;
}

/* Without a fabric, making a snapshot: stop the VM here; the runner saves and resumes it */
static void rl_barrier_stop_here(RlBarrier *b)
{
    rl_clock_hold_start(&b->hold);
    vm_stop(RUN_STATE_PAUSED);  /* from the vCPU: once this instruction is done */
}

static void rl_barrier_vm_state_change(void *opaque, bool running, RunState state)
{
    RlBarrier *b = opaque;

    if (running) {
        rl_clock_hold_end(&b->hold);
    }
}

void rl_barrier_write(RlBarrier *b, hwaddr addr, uint64_t val)
{
    if (addr != RL_BARRIER_STATUS || val != RL_BARRIER_PORT_ARRIVE || b->arrived) {
        return;                 /* one arrival per boot; anything else is ignored */
    }
    b->arrived = true;
    if (!rl_link_barrier_arrive(rl_barrier_released, b)) {
        /* no fabric to wait for: passed now */
        b->time = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
        b->time_known = true;
        if (b->stop_at_arrival) {
            rl_barrier_stop_here(b);
        }
    }
}

int rl_barrier_post_load(RlBarrier *b)
{
    if (b->time_known && !b->arrived) {
        error_report("retrolink-barrier: a barrier time without an arrival");
        return -EINVAL;
    }
    return 0;
}

void rl_barrier_init(RlBarrier *b)
{
    rl_clock_hold_init(&b->hold);
    b->vm_state = qemu_add_vm_change_state_handler(rl_barrier_vm_state_change, b);
}
