/*
 * retrolink boot barrier on the PC: the device core's registers (rl-barrier-core.c) at
 * I/O ports, beside isa-debug-exit (docs/snapshots.md).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "hw/isa/isa.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qemu/module.h"
#include "qom/object.h"

#include "hw/retrolink/core/rl-barrier.h"

#define TYPE_RL_BARRIER "retrolink-barrier"
OBJECT_DECLARE_SIMPLE_TYPE(RlBarrierState, RL_BARRIER)

struct RlBarrierState {
    ISADevice parent_obj;
    MemoryRegion io;
    uint32_t iobase;
    RlBarrier core;
};

static uint64_t rl_barrier_isa_read(void *opaque, hwaddr addr, unsigned size)
{
    RlBarrierState *s = opaque;

    return rl_barrier_read(&s->core, addr);
}

static void rl_barrier_isa_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    RlBarrierState *s = opaque;

    rl_barrier_write(&s->core, addr, val);
}

static const MemoryRegionOps rl_barrier_ops = {
    .read = rl_barrier_isa_read,
    .write = rl_barrier_isa_write,
    .valid.min_access_size = 1,
    .valid.max_access_size = 1,
    .endianness = DEVICE_LITTLE_ENDIAN,
};

static int rl_barrier_isa_post_load(void *opaque, int version_id)
{
    RlBarrierState *s = opaque;

    return rl_barrier_post_load(&s->core);
}

static const VMStateDescription vmstate_rl_barrier = {
    .name = TYPE_RL_BARRIER,
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = rl_barrier_isa_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_RL_BARRIER(core, RlBarrierState),
        VMSTATE_END_OF_LIST()
    }
};

static void rl_barrier_realize(DeviceState *d, Error **errp)
{
    ISADevice *dev = ISA_DEVICE(d);
    RlBarrierState *s = RL_BARRIER(d);

    memory_region_init_io(&s->io, OBJECT(dev), &rl_barrier_ops, s, TYPE_RL_BARRIER,
                          RL_BARRIER_REGS);
    memory_region_add_subregion(isa_address_space_io(dev), s->iobase, &s->io);
    rl_barrier_init(&s->core);
}

static const Property rl_barrier_properties[] = {
    /* beside isa-debug-exit (0xf4), which ends the node */
    DEFINE_PROP_UINT32("iobase", RlBarrierState, iobase, 0xf5),
    DEFINE_PROP_BOOL("stop-at-arrival", RlBarrierState, core.stop_at_arrival, false),
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
