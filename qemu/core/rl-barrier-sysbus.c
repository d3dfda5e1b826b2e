/*
 * retrolink boot barrier on a system bus: the device core's registers
 * (rl-barrier-core.c) in one MMIO region, for machines without ISA ports (the
 * SPARCstation 5 node, rl-sun4m.c maps it). Byte registers, so the bus's byte order
 * does not matter; the microseconds left are little-endian bytes as on the PC.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "hw/sysbus.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qemu/module.h"
#include "qom/object.h"

#include "hw/retrolink/core/rl-barrier-sysbus.h"
#include "hw/retrolink/core/rl-barrier.h"

OBJECT_DECLARE_SIMPLE_TYPE(RlBarrierSysbusState, RL_BARRIER_SYSBUS)

struct RlBarrierSysbusState {
    SysBusDevice parent_obj;
    MemoryRegion mmio;
    RlBarrier core;
};

static uint64_t rl_barrier_sysbus_read(void *opaque, hwaddr addr, unsigned size)
{
    RlBarrierSysbusState *s = opaque;

    return rl_barrier_read(&s->core, addr);
}

static void rl_barrier_sysbus_write(void *opaque, hwaddr addr, uint64_t val,
                                    unsigned size)
{
    RlBarrierSysbusState *s = opaque;

    rl_barrier_write(&s->core, addr, val);
}

static const MemoryRegionOps rl_barrier_sysbus_ops = {
    .read = rl_barrier_sysbus_read,
    .write = rl_barrier_sysbus_write,
    .valid.min_access_size = 1,
    .valid.max_access_size = 1,
    .endianness = DEVICE_NATIVE_ENDIAN,
};

static int rl_barrier_sysbus_post_load(void *opaque, int version_id)
{
    RlBarrierSysbusState *s = opaque;

    return rl_barrier_post_load(&s->core);
}

static const VMStateDescription vmstate_rl_barrier_sysbus = {
    .name = TYPE_RL_BARRIER_SYSBUS,
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = rl_barrier_sysbus_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_RL_BARRIER(core, RlBarrierSysbusState),
        VMSTATE_END_OF_LIST()
    }
};

static void rl_barrier_sysbus_realize(DeviceState *d, Error **errp)
{
    RlBarrierSysbusState *s = RL_BARRIER_SYSBUS(d);

    memory_region_init_io(&s->mmio, OBJECT(d), &rl_barrier_sysbus_ops, s,
                          TYPE_RL_BARRIER_SYSBUS, RL_BARRIER_REGS);
    sysbus_init_mmio(SYS_BUS_DEVICE(d), &s->mmio);
    rl_barrier_init(&s->core);
}

static const Property rl_barrier_sysbus_properties[] = {
    DEFINE_PROP_BOOL("stop-at-arrival", RlBarrierSysbusState, core.stop_at_arrival, false),
};

static void rl_barrier_sysbus_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->realize = rl_barrier_sysbus_realize;
    dc->vmsd = &vmstate_rl_barrier_sysbus;
    dc->desc = "retrolink boot barrier on the system bus (docs/snapshots.md)";
    device_class_set_props(dc, rl_barrier_sysbus_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo rl_barrier_sysbus_info = {
    .name          = TYPE_RL_BARRIER_SYSBUS,
    .parent        = TYPE_SYS_BUS_DEVICE,
    .instance_size = sizeof(RlBarrierSysbusState),
    .class_init    = rl_barrier_sysbus_class_init,
};

static void rl_barrier_sysbus_register_types(void)
{
    type_register_static(&rl_barrier_sysbus_info);
}

type_init(rl_barrier_sysbus_register_types)
