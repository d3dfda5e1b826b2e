/*
 * retrolink-pci-board: the PCI front end of the board core (rl-pci-board.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/pci/msi.h"
#include "hw/qdev-properties.h"

#include "hw/retrolink/core/rl-pci-board.h"

/* One MSI vector when the driver enabled it, else INTA# at the level of the causes. */
static void rl_pci_board_irq(RlBoard *b, bool edge)
{
    PCIDevice *pdev = PCI_DEVICE(b->dev);

    if (msi_enabled(pdev)) {
        if (edge) {
            msi_notify(pdev, 0);
        }
    } else {
        pci_set_irq(pdev, (b->irq_status & b->irq_mask) != 0);
    }
}

static const RlBoardFront rl_pci_board_front = {
    .irq = rl_pci_board_irq,
};

static void rl_pci_board_instance_init(Object *obj)
{
    RlPciBoard *s = RL_PCI_BOARD(obj);

    rl_board_init(&s->rl, RL_PCI_BOARD_GET_CLASS(obj)->info, &rl_pci_board_front, s);
}

/*
 * Realize takes its steps in order and, when one fails, undoes the ones before it in
 * reverse (the PCI core unregisters the BARs, the object owns the memory regions).
 */
static void rl_pci_board_realize(PCIDevice *pdev, Error **errp)
{
    RlPciBoard *s = RL_PCI_BOARD(pdev);
    RlBoard *b = &s->rl;

    b->dma_as = pci_get_address_space(pdev);
    pci_config_set_interrupt_pin(pdev->config, 1);
    if (msi_init(pdev, 0, 1, true, false, errp)) {
        error_prepend(errp, "%s: ", b->info->name);
        return;
    }
    if (!rl_board_realize(b, errp)) {
        msi_uninit(pdev);
        return;
    }
    for (int i = 0; i < RL_BOARD_REGIONS; i++) {
        if (b->bar[i]) {
            pci_register_bar(pdev, i, b->bar_flags[i], b->bar[i]);
        }
    }
}

static void rl_pci_board_exit(PCIDevice *pdev)
{
    rl_board_exit(rl_pci_board(pdev));
    msi_uninit(pdev);
}

static void rl_pci_board_reset(DeviceState *dev)
{
    rl_board_reset(rl_pci_board(dev));
}

static const Property rl_pci_board_properties[] = {
    DEFINE_PROP_STRING("fabric", RlPciBoard, rl.fabric),
    DEFINE_PROP_UINT32("node", RlPciBoard, rl.node, 0),
    DEFINE_PROP_UINT32("network", RlPciBoard, rl.network, 0),
};

static void rl_pci_board_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = rl_pci_board_realize;
    k->exit = rl_pci_board_exit;
    k->class_id = PCI_CLASS_NETWORK_OTHER;
    device_class_set_legacy_reset(dc, rl_pci_board_reset);
    device_class_set_props(dc, rl_pci_board_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

void rl_pci_board_class_set(ObjectClass *klass, const RlBoardInfo *info, uint16_t vendor,
                            uint16_t device, uint8_t revision, const char *desc,
                            const VMStateDescription *vmsd)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    RL_PCI_BOARD_CLASS(klass)->info = info;
    k->vendor_id = vendor;
    k->device_id = device;
    k->revision = revision;
    dc->desc = desc;
    dc->vmsd = vmsd;
}

static InterfaceInfo rl_pci_board_interfaces[] = {
    { INTERFACE_CONVENTIONAL_PCI_DEVICE },
    { },
};

static const TypeInfo rl_pci_board_info = {
    .name = TYPE_RL_PCI_BOARD,
    .parent = TYPE_PCI_DEVICE,
    .abstract = true,
    .instance_size = sizeof(RlPciBoard),
    .instance_init = rl_pci_board_instance_init,
    .class_size = sizeof(RlPciBoardClass),
    .class_init = rl_pci_board_class_init,
    .interfaces = rl_pci_board_interfaces,
};

static void rl_pci_board_register_types(void)
{
    type_register_static(&rl_pci_board_info);
}

type_init(rl_pci_board_register_types)
