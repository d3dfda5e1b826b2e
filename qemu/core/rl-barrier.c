/*
 * retrolink boot barrier: one I/O port through which the guest's init says it has
 * booted, and asks whether the cluster has passed the barrier (docs/snapshots.md).
 *
 * Every node's init writes BARRIER_ARRIVE once, when its modules are loaded and its
 * network is up, before it reads its command. The node is then held at that
 * instant (rl_link_barrier_arrive) until every node has arrived; the fabric picks
 * the barrier's time T, the latest arrival, and runs every node to T, where a
 * snapshot may be taken. The guest reads the port: BARRIER_PASSED from the first
 * read at or after T, BARRIER_WAITING before; and the four ports after it, the
 * microseconds left to T (little-endian, latched when the first is read), so that
 * it sleeps to T at once rather than polling. A run from a snapshot
 * starts at T with this device's state loaded, so its guest sees exactly what a
 * cold boot's does. Without a fabric (no retrolink board) the barrier is passed at
 * once; and with stop-at-arrival (a snapshot of such a node is being made) the VM
 * stops there, at the arriving instruction's end, for the runner to save and resume.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/timer.h"
#include "system/runstate.h"
#include "hw/isa/isa.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qemu/module.h"
#include "qom/object.h"

#include "hw/retrolink/core/rl-clock-hold.h"
#include "hw/retrolink/core/rl-link.h"

#define TYPE_RL_BARRIER "retrolink-barrier"
OBJECT_DECLARE_SIMPLE_TYPE(RlBarrierState, RL_BARRIER)

/* the port's values: the guest writes ARRIVE, reads WAITING or PASSED */
enum {
    RL_BARRIER_PORT_WAITING = 0,
    RL_BARRIER_PORT_ARRIVE = 1,
    RL_BARRIER_PORT_PASSED = 2,
};
#define RL_BARRIER_STATUS       0       /* port offsets */
#define RL_BARRIER_LEFT_US      1       /* .. 4: microseconds to T */
#define RL_BARRIER_PORTS        5
#define RL_BARRIER_UNKNOWN_US   10000   /* before T is known: look again after this */

struct RlBarrierState {
    ISADevice parent_obj;
    MemoryRegion io;
    uint32_t iobase;
    bool stop_at_arrival;   /* without a fabric: stop there for a snapshot */
    RlClockHold hold;       /* the clock while the VM stops */
    VMChangeStateEntry *vm_state;

    /* VMState */
    bool arrived;
    bool time_known;
    uint64_t time;          /* the barrier's time T, once known */
    uint32_t left_us;       /* latched by a read of RL_BARRIER_LEFT_US */
};

static uint32_t rl_barrier_left_us(RlBarrierState *s)
{
    uint64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (!s->time_known) {
        return RL_BARRIER_UNKNOWN_US;
    }
    return now >= s->time ? 0 : MIN(DIV_ROUND_UP(s->time - now, 1000), UINT32_MAX);
}

static uint64_t rl_barrier_read(void *opaque, hwaddr addr, unsigned size)
{
    RlBarrierState *s = opaque;

    if (addr >= RL_BARRIER_LEFT_US) {
        if (addr == RL_BARRIER_LEFT_US) {
            s->left_us = s->arrived ? rl_barrier_left_us(s) : RL_BARRIER_UNKNOWN_US;
        }
        return extract32(s->left_us, 8 * (addr - RL_BARRIER_LEFT_US), 8);
    }
    if (s->time_known && qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) >= s->time) {
        return RL_BARRIER_PORT_PASSED;
    }
    return RL_BARRIER_PORT_WAITING;
}

/* Every node arrived: the barrier's time (saved in a snapshot taken there) */
static void rl_barrier_released(void *opaque, uint64_t t)
{
    RlBarrierState *s = opaque;

    s->time = t;
    s->time_known = true;
}

/* Without a fabric, making a snapshot: stop the VM here; the runner saves and resumes it */
static void rl_barrier_stop_here(RlBarrierState *s)
{
    rl_clock_hold_start(&s->hold);
    vm_stop(RUN_STATE_PAUSED);  /* from the vCPU: once this instruction is done */
}

static void rl_barrier_vm_state_change(void *opaque, bool running, RunState state)
{
    RlBarrierState *s = opaque;

    if (running) {
        rl_clock_hold_end(&s->hold);
    }
}

static void rl_barrier_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    RlBarrierState *s = opaque;

    if (addr != RL_BARRIER_STATUS || val != RL_BARRIER_PORT_ARRIVE || s->arrived) {
        return;                 /* one arrival per boot; anything else is ignored */
    }
    s->arrived = true;
    if (!rl_link_barrier_arrive(rl_barrier_released, s)) {
        /* no fabric to wait for: passed now */
        s->time = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
        s->time_known = true;
        if (s->stop_at_arrival) {
            rl_barrier_stop_here(s);
        }
    }
}

static const MemoryRegionOps rl_barrier_ops = {
    .read = rl_barrier_read,
    .write = rl_barrier_write,
    .valid.min_access_size = 1,
    .valid.max_access_size = 1,
    .endianness = DEVICE_LITTLE_ENDIAN,
};

static int rl_barrier_post_load(void *opaque, int version_id)
{
    RlBarrierState *s = opaque;

    if (s->time_known && !s->arrived) {
        error_report("retrolink-barrier: a barrier time without an arrival");
        return -EINVAL;
    }
    return 0;
}

static const VMStateDescription vmstate_rl_barrier = {
    .name = TYPE_RL_BARRIER,
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = rl_barrier_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(arrived, RlBarrierState),
        VMSTATE_BOOL(time_known, RlBarrierState),
        VMSTATE_UINT64(time, RlBarrierState),
        VMSTATE_UINT32(left_us, RlBarrierState),
        VMSTATE_END_OF_LIST()
    }
};

static void rl_barrier_realize(DeviceState *d, Error **errp)
{
    ISADevice *dev = ISA_DEVICE(d);
    RlBarrierState *s = RL_BARRIER(d);

    memory_region_init_io(&s->io, OBJECT(dev), &rl_barrier_ops, s, TYPE_RL_BARRIER,
                          RL_BARRIER_PORTS);
    memory_region_add_subregion(isa_address_space_io(dev), s->iobase, &s->io);
    rl_clock_hold_init(&s->hold);
    s->vm_state = qemu_add_vm_change_state_handler(rl_barrier_vm_state_change, s);
}

static const Property rl_barrier_properties[] = {
    /* beside isa-debug-exit (0xf4), which ends the node */
    DEFINE_PROP_UINT32("iobase", RlBarrierState, iobase, 0xf5),
    DEFINE_PROP_BOOL("stop-at-arrival", RlBarrierState, stop_at_arrival, false),
};

static void rl_barrier_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->realize = rl_barrier_realize;
    dc->vmsd = &vmstate_rl_barrier;
    dc->desc = "retrolink boot barrier (docs/snapshots.md)";
    device_class_set_props(dc, rl_barrier_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo rl_barrier_info = {
    .name          = TYPE_RL_BARRIER,
    .parent        = TYPE_ISA_DEVICE,
    .instance_size = sizeof(RlBarrierState),
    .class_init    = rl_barrier_class_init,
};

static void rl_barrier_register_types(void)
{
    type_register_static(&rl_barrier_info);
}

type_init(rl_barrier_register_types)
