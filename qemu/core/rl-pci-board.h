/*
 * retrolink-pci-board: the abstract PCI device every retrolink PCI board is (the
 * model is QEMU's hw/misc/ivshmem-pci.c, whose TYPE_IVSHMEM_COMMON carries realize,
 * exit and class_init for thin subtypes). It is the PCI front end of the board core
 * (rl-board.h): one MSI vector or INTx for the interrupt, the bus master address
 * space for DMA, the board's regions as BARs, and the common properties (fabric,
 * node, network). A board's type sets its RlBoardInfo and PCI ids in class_init, its
 * own properties (with start-us: DEFINE_RL_BOARD_START_US) and its VMState, which
 * holds VMSTATE_RL_PCI_BOARD first.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RL_PCI_BOARD_H
#define RL_PCI_BOARD_H

#include "hw/pci/pci_device.h"
#include "qom/object.h"
#include "hw/retrolink/core/rl-board.h"

#define TYPE_RL_PCI_BOARD "retrolink-pci-board"
OBJECT_DECLARE_TYPE(RlPciBoard, RlPciBoardClass, RL_PCI_BOARD)

struct RlPciBoard {
    PCIDevice parent_obj;
    RlBoard rl;
};

struct RlPciBoardClass {
    PCIDeviceClass parent_class;
    const RlBoardInfo *info;
};

/* The board core of a device of a retrolink-pci-board subtype. */
static inline RlBoard *rl_pci_board(void *dev)
{
    return &RL_PCI_BOARD(dev)->rl;
}

/* The PCI device and the board core, first in a board's VMState. */
#define VMSTATE_RL_PCI_BOARD(_state) \
    VMSTATE_PCI_DEVICE(parent_obj.parent_obj, _state), \
    VMSTATE_RL_BOARD(parent_obj.rl, _state)

/* Set a board type's info and PCI identity (its class_init). */
void rl_pci_board_class_set(ObjectClass *klass, const RlBoardInfo *info, uint16_t vendor,
                            uint16_t device, uint8_t revision, const char *desc,
                            const VMStateDescription *vmsd);

#endif /* RL_PCI_BOARD_H */
