/*
 * The PUMA-III adapter as the SBus card it was (retrolink-fc-sbus), on the SPARCstation
 * 5 nodes: the model (fc.c) on the board core's SBus front end (rl-sbus-board.c). The
 * control page and the channel pages sit at the slot offsets of regions 0 and 2
 * (FC_SBUS_CTRL_OFFSET, FC_SBUS_CHAN_OFFSET), which the card's FCode PROM
 * (guest/sparc/fcode/fc.fth) gives OpenBIOS as its reg property; registers and host
 * memory structures are big-endian; DMA addresses are the IOMMU's DVMA addresses.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "migration/vmstate.h"

#include "fc.h"
#include "hw/retrolink/core/rl-sbus-board.h"

OBJECT_DECLARE_SIMPLE_TYPE(FcSbusState, RETROLINK_FC_SBUS)

struct FcSbusState {
    RlSbusBoard parent_obj;
    FcState fc;
};

/* the register header's slot offsets are the front end's places for regions 0 and 2 */
QEMU_BUILD_BUG_ON(FC_SBUS_CTRL_OFFSET != RL_SBUS_REGION_OFFSET(0));
QEMU_BUILD_BUG_ON(FC_SBUS_CHAN_OFFSET != RL_SBUS_REGION_OFFSET(2));
QEMU_BUILD_BUG_ON(FC_CHANNELS * FC_CHAN_PAGE_SIZE > RL_SBUS_REGION_OFFSET(1));

static const RlBoardInfo fc_sbus_board_info = FC_BOARD_INFO(TYPE_RETROLINK_FC_SBUS);

static int fc_sbus_pre_save(void *opaque)
{
    return fc_pre_save(&RETROLINK_FC_SBUS(opaque)->fc);
}

static const VMStateDescription vmstate_fc_sbus = {
    .name = TYPE_RETROLINK_FC_SBUS,
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = fc_sbus_pre_save,
    .fields = (const VMStateField[]) {
        VMSTATE_RL_SBUS_BOARD(FcSbusState),
        VMSTATE_FC(fc, FcSbusState),
        VMSTATE_END_OF_LIST()
    },
};

static const Property fc_sbus_properties[] = {
    DEFINE_FC_PROPERTIES(FcSbusState),
};

static void fc_sbus_instance_init(Object *obj)
{
    FcSbusState *s = RETROLINK_FC_SBUS(obj);

    s->fc.rl = rl_sbus_board(obj);
    rl_board_set_opaque(s->fc.rl, &s->fc);
}

static void fc_sbus_class_init(ObjectClass *klass, void *data)
{
    rl_sbus_board_class_set(klass, &fc_sbus_board_info, FC_SBUS_LEVEL,
                            "PUMA-III Fibre Channel SBus card on a retrolink FC network",
                            &vmstate_fc_sbus);
    device_class_set_props(DEVICE_CLASS(klass), fc_sbus_properties);
}

static const TypeInfo fc_sbus_info = {
    .name = TYPE_RETROLINK_FC_SBUS,
    .parent = TYPE_RL_SBUS_BOARD,
    .instance_size = sizeof(FcSbusState),
    .instance_init = fc_sbus_instance_init,
    .class_init = fc_sbus_class_init,
};

static void fc_sbus_register_types(void)
{
    type_register_static(&fc_sbus_info);
}

type_init(fc_sbus_register_types)
