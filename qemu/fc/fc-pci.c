/*
 * The PUMA-III adapter as a PCI card (retrolink-fc), on the x86 nodes: the model
 * (fc.c) on the board core's PCI front end (rl-pci-board.c). BAR 0 is the control
 * page, BAR 2 the channel pages; registers and host memory structures little-endian.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "migration/vmstate.h"

#include "fc.h"
#include "hw/retrolink/core/rl-pci-board.h"

OBJECT_DECLARE_SIMPLE_TYPE(FcPciState, RETROLINK_FC)

struct FcPciState {
    RlPciBoard parent_obj;
    FcState fc;
};

static const RlBoardInfo fc_pci_board_info = FC_BOARD_INFO(TYPE_RETROLINK_FC);

static int fc_pci_pre_save(void *opaque)
{
    return fc_pre_save(&RETROLINK_FC(opaque)->fc);
}

static const VMStateDescription vmstate_fc_pci = {
    .name = TYPE_RETROLINK_FC,
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = fc_pci_pre_save,
    .fields = (const VMStateField[]) {
        VMSTATE_RL_PCI_BOARD(FcPciState),
        VMSTATE_FC(fc, FcPciState),
        VMSTATE_END_OF_LIST()
    },
};

static const Property fc_pci_properties[] = {
    DEFINE_FC_PROPERTIES(FcPciState),
};

static void fc_pci_instance_init(Object *obj)
{
    FcPciState *s = RETROLINK_FC(obj);

    s->fc.rl = rl_pci_board(obj);
    rl_board_set_opaque(s->fc.rl, &s->fc);
}

static void fc_pci_class_init(ObjectClass *klass, void *data)
{
    rl_pci_board_class_set(klass, &fc_pci_board_info, FC_PCI_VENDOR_ID, FC_PCI_DEVICE_ID, 1,
                           "PUMA-III Fibre Channel adapter on a retrolink FC network",
                           &vmstate_fc_pci);
    device_class_set_props(DEVICE_CLASS(klass), fc_pci_properties);
}

static const TypeInfo fc_pci_info = {
    .name = TYPE_RETROLINK_FC,
    .parent = TYPE_RL_PCI_BOARD,
    .instance_size = sizeof(FcPciState),
    .instance_init = fc_pci_instance_init,
    .class_init = fc_pci_class_init,
};

static void fc_pci_register_types(void)
{
    type_register_static(&fc_pci_info);
}

type_init(fc_pci_register_types)
