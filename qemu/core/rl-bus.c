/*
 * retrolink host bus: programmed I/O that costs its bus time (rl-bus.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "hw/core/cpu.h"
#include "migration/vmstate.h"
#include "hw/retrolink/core/rl-bus.h"
#include "hw/retrolink/core/rl-sched.h"

static void rl_bus_stall_end(void *opaque)
{
    RlBus *b = opaque;
    CPUState *cpu = b->stalled;

    if (!cpu) {
        return;
    }
    b->stalled = NULL;
    qatomic_set(&cpu->io_stall, false);
    cpu->halted = 0;
    qemu_cpu_kick(cpu);
}

void rl_bus_init(RlBus *b, uint64_t pio_rate)
{
    b->pio_rate = pio_rate;
    b->free_at = 0;
    b->stalled = NULL;
    b->stall_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rl_bus_stall_end, b);
}

void rl_bus_release(RlBus *b)
{
    if (b->stall_timer) {
        timer_del(b->stall_timer);
    }
    rl_bus_stall_end(b);
}

void rl_bus_destroy(RlBus *b)
{
    rl_bus_release(b);
    timer_free(b->stall_timer);
    b->stall_timer = NULL;
}

uint64_t rl_bus_pio(RlBus *b, unsigned bytes)
{
    return rl_bus_hold(b, rl_bytes_ns(bytes, b->pio_rate));
}

uint64_t rl_bus_hold(RlBus *b, uint64_t ns)
{
    uint64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    return rl_bus_hold_until(b, MAX(now, b->free_at) + ns);
}

uint64_t rl_bus_hold_until(RlBus *b, uint64_t end)
{
    uint64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    end = MAX(end, b->free_at);
    b->free_at = end;
    /*
     * The access is the last instruction of its TB under icount: the vCPU leaves
     * cpu_exec after it and, halted with io_stall, stays out until the timer. A
     * vCPU already held (a second access of one instruction) keeps the later end.
     */
    if (current_cpu && end > now) {
        b->stalled = current_cpu;
        current_cpu->halted = 1;
        qatomic_set(&current_cpu->io_stall, true);
        cpu_exit(current_cpu);
        timer_mod_ns(b->stall_timer, end);
    }
    return end;
}

bool rl_bus_stalling(const RlBus *b)
{
    return b->stalled != NULL;
}

const VMStateDescription vmstate_rl_bus = {
    .name = "retrolink-bus",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(free_at, RlBus),
        VMSTATE_END_OF_LIST()
    },
};
