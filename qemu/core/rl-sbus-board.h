/*
 * retrolink-sbus-board: the abstract SBus card every retrolink SBus board is, the SBus
 * front end of the board core (rl-board.h), beside the PCI one (rl-pci-board.h). The
 * model is QEMU's SBus cards on sun4m (hw/display/tcx.c: an FCode PROM at the slot's
 * offset 0, registers at offsets of the slot; hw/dma/sparc32_dma.c: DVMA through the
 * sun4m IOMMU).
 *
 * The card is one window of its slot (the machine maps it at the slot's base,
 * rl-sun4m.c): the FCode PROM at offset 0, which OpenBIOS runs to make the card's node
 * (its name, reg and interrupts properties), and the board's region i at
 * RL_SBUS_REGION_OFFSET(i). One interrupt, at the SBus level its type has. DMA goes through the
 * machine's IOMMU (its DVMA addresses), and the bus is big-endian (RlBoard.big_endian).
 * A board's type sets its RlBoardInfo and level in class_init, its own properties (start-us:
 * DEFINE_RL_BOARD_START_US) and a VMState that holds VMSTATE_RL_SBUS_BOARD first.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RL_SBUS_BOARD_H
#define RL_SBUS_BOARD_H

#include "hw/sysbus.h"
#include "qom/object.h"
#include "hw/retrolink/core/rl-board.h"

#define TYPE_RL_SBUS_BOARD "retrolink-sbus-board"
OBJECT_DECLARE_TYPE(RlSbusBoard, RlSbusBoardClass, RL_SBUS_BOARD)

/* The card's window in its slot: the PROM's 64 KiB, then 64 KiB for each region */
#define RL_SBUS_PROM_SIZE           0x10000ull
#define RL_SBUS_REGION_OFFSET(i)    (((i) + 1) * 0x10000ull)
#define RL_SBUS_WINDOW_SIZE         RL_SBUS_REGION_OFFSET(RL_BOARD_REGIONS)
/* SBus interrupt levels (SBus IRQ1..7: SPARC PIL 2, 3, 5, 7, 9, 11, 13) */
#define RL_SBUS_LEVEL_MIN           1
#define RL_SBUS_LEVEL_MAX           7

struct RlSbusBoard {
    SysBusDevice parent_obj;
    RlBoard rl;

    /* properties */
    char *prom_file;            /* the FCode PROM image (the build tokenizes it) */
    uint32_t slot;              /* the SBus slot the machine maps the card in */

    MemoryRegion window;        /* the PROM and the regions, mapped at the slot */
    MemoryRegion prom;
    qemu_irq irq;
};

struct RlSbusBoardClass {
    SysBusDeviceClass parent_class;
    const RlBoardInfo *info;
    uint32_t level;             /* its SBus interrupt level, as its PROM says */
};

/* The board core of a device of a retrolink-sbus-board subtype. */
static inline RlBoard *rl_sbus_board(void *dev)
{
    return &RL_SBUS_BOARD(dev)->rl;
}

/* The sysbus device and the board core, first in a board's VMState. */
#define VMSTATE_RL_SBUS_BOARD(_state) \
    VMSTATE_RL_BOARD(parent_obj.rl, _state)

/* Set a board type's info and SBus interrupt level (its class_init). */
void rl_sbus_board_class_set(ObjectClass *klass, const RlBoardInfo *info, uint32_t level,
                             const char *desc, const VMStateDescription *vmsd);

/* The SBus interrupt level of a card. */
static inline uint32_t rl_sbus_board_level(RlSbusBoard *s)
{
    return RL_SBUS_BOARD_GET_CLASS(s)->level;
}

#endif /* RL_SBUS_BOARD_H */
