/*
 * retrolink board core: what every board model has, whatever bus it sits on.
 *
 * A board is its own model (registers, processors, queues: qemu/<board>/) on top of
 * this core, which owns the parts they all share: the fabric properties (fabric, node,
 * network), the cluster's node count, the interrupt cause and mask registers and the
 * raising of an interrupt, the event queue (rl-sched), the port on the fabric
 * (rl-link), the refusal of a bad migration stream, and the steps of realize and exit
 * with their unwinding. A bus front end embeds an RlBoard and gives it what is the
 * bus's: how an interrupt reaches the CPU (RlBoardFront), where the board's DMA goes
 * (dma_as), where its register regions are mapped (bar[]) and the bus's byte order
 * (big_endian). rl-pci-board.c is the PCI front end, rl-sbus-board.c the SBus one;
 * the model is QEMU's hw/net/pcnet.c, whose core serves both pcnet-pci.c and the SBus
 * lance.c. A model that sits on both buses keeps its state in a struct of its own,
 * embedded in each bus's device type, and gives the core that struct as opaque.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RL_BOARD_H
#define RL_BOARD_H

#include "exec/memory.h"
#include "qemu/bswap.h"
#include "migration/vmstate.h"
#include "hw/retrolink/core/rl-link.h"
#include "hw/retrolink/core/rl-sched.h"

typedef struct RlBoard RlBoard;

/* The longest a board may take from ENABLE to being on its network ('start-us'). */
#define RL_BOARD_START_US_MAX   (60ull * 1000 * 1000)
/* Register regions a board may have: the PCI front end maps region i as BAR i. */
#define RL_BOARD_REGIONS        6

/* What a board model tells the core about itself (static, one per model). */
typedef struct RlBoardInfo {
    const char *name;           /* its QOM type, "retrolink-fc": in every message */
    const char *port_name;      /* its fabric port is "<port_name>-node<N>" */
    uint32_t protocol;          /* enum rl_protocol (retrolink/boards.def) */
    uint32_t irq_all;           /* every interrupt cause it has */
    uint32_t max_nodes;         /* the most nodes it can address */
    const RlPortOps *port_ops;  /* called with the board's opaque (RlBoard.opaque) */
    RlEventFn *event;           /* its events (rl-sched), with the opaque */
    RlEventCheckFn *event_check;        /* each event loaded from a stream */
    /*
     * Its own part of realize: check its properties, make its regions (bar[]) and
     * resources. On failure it has undone what it did and set errp.
     */
    bool (*realize)(void *dev, Error **errp);
    /* The least delay from a frame arriving to one it sends because of it (rl-link). */
    uint64_t (*reaction_ns)(void *dev);
    /*
     * Undo realize: called when a later step of realize fails and at exit (then after
     * the port has closed and before the event queue goes: drop the events that own
     * memory).
     */
    void (*unrealize)(void *dev);
    void (*reset)(void *dev);
} RlBoardInfo;

/* What the bus front end provides. */
typedef struct RlBoardFront {
    /*
     * The interrupt: a cause was raised that the mask lets through (edge), or the
     * level (irq_status & irq_mask) may have changed (!edge).
     */
    void (*irq)(RlBoard *b, bool edge);
} RlBoardFront;

struct RlBoard {
    const RlBoardInfo *info;
    const RlBoardFront *front;
    void *dev;                  /* the device (QOM object) the board is */
    void *opaque;               /* what its info's callbacks get: dev, or the model's
                                 * state inside dev (rl_board_set_opaque) */
    AddressSpace *dma_as;       /* where its DMA reads and writes */
    /*
     * The bus's byte order, set by the front end: PCI little-endian, SBus big-endian.
     * Its registers' (a model's MemoryRegionOps for each order: rl_board_ops) and every
     * structure the board reads or writes in host memory (rl_board_ldl and the rest).
     */
    bool big_endian;
    MemoryRegion *bar[RL_BOARD_REGIONS];        /* the board's regions, set by realize */
    uint8_t bar_flags[RL_BOARD_REGIONS];        /* PCI_BASE_ADDRESS_* flags of each */

    /* properties: its fabric connection and when it comes up */
    char *fabric;               /* the fabric's socket; none: a lone board */
    uint32_t node;
    uint32_t network;           /* the fabric network its port joins */
    uint64_t start_us;          /* ENABLE until it is on its network */

    /* the common registers, in VMState (VMSTATE_RL_BOARD) */
    uint32_t irq_status, irq_mask;
    uint32_t nodes;             /* the cluster's nodes (1: a lone board) */

    RlSched sched;
    RlPort *port;
    Notifier exit_notifier;     /* says the port's causality violations at exit */
};

/*
 * ENABLE until the board is on its network, in us; each board's default differs. Every
 * front end's device type has its core as parent_obj.rl.
 */
#define DEFINE_RL_BOARD_START_US(_state, _default) \
    DEFINE_PROP_UINT64("start-us", _state, parent_obj.rl.start_us, _default)

/* Called by the front end; the core calls the board's info at each step. */
void rl_board_init(RlBoard *b, const RlBoardInfo *info, const RlBoardFront *front,
                   void *dev);
/* A model embedded in its bus's device type: its state, for the info's callbacks. */
static inline void rl_board_set_opaque(RlBoard *b, void *opaque)
{
    b->opaque = opaque;
}

/* Host memory structures in the bus's byte order (big_endian). */
static inline uint32_t rl_board_ldl(const RlBoard *b, const void *p)
{
    return b->big_endian ? ldl_be_p(p) : ldl_le_p(p);
}
static inline uint64_t rl_board_ldq(const RlBoard *b, const void *p)
{
    return b->big_endian ? ldq_be_p(p) : ldq_le_p(p);
}
static inline void rl_board_stl(const RlBoard *b, void *p, uint32_t v)
{
    if (b->big_endian) {
        stl_be_p(p, v);
    } else {
        stl_le_p(p, v);
    }
}
static inline void rl_board_stq(const RlBoard *b, void *p, uint64_t v)
{
    if (b->big_endian) {
        stq_be_p(p, v);
    } else {
        stq_le_p(p, v);
    }
}
/* A model's register ops in the bus's order: ops[0] little-endian, ops[1] big-endian. */
static inline const MemoryRegionOps *rl_board_ops(const RlBoard *b,
                                                  const MemoryRegionOps *ops)
{
    return &ops[b->big_endian];
}
bool rl_board_realize(RlBoard *b, Error **errp);
void rl_board_exit(RlBoard *b);
void rl_board_reset(RlBoard *b);

/*
 * The earliest the guest, acting at guest_ns, can start a send on the board: an
 * enabled board once it is ready (on its network at ready_at), one not yet enabled
 * after its start. For the boards' promises (RlPortOps.promise).
 */
uint64_t rl_board_guest_go(RlBoard *b, bool enabled, uint64_t ready_at, uint64_t guest_ns);

/*
 * The promise (RlPortOps.promise) of a board with a lead and a pending floor
 * (RlPortOps.lead, .pending): a frame it has, from 'pending' on, or one the guest,
 * acting at guest_ns (RL_TIME_NEVER: it will not act), makes it send 'lead' after it
 * can start one (rl_board_guest_go); at least now.
 */
uint64_t rl_board_promise(RlBoard *b, bool enabled, uint64_t ready_at, uint64_t guest_ns,
                          uint64_t lead, uint64_t pending, uint64_t now);

/*
 * The earliest time of the board's events but those of kind 'except' (its link
 * changes), at least now; RL_TIME_NEVER if none: the pending floor of a board any of
 * whose other events may send a frame, none before its time.
 */
uint64_t rl_board_events_floor(RlBoard *b, uint32_t except, uint64_t now);

/* Interrupts: set causes (and interrupt if the mask lets one through), clear, mask. */
void rl_board_raise(RlBoard *b, uint32_t cause);
void rl_board_ack(RlBoard *b, uint32_t causes);
void rl_board_set_mask(RlBoard *b, uint32_t mask);
void rl_board_update_irq(RlBoard *b);

/* DMA to and from the board's address space (the bus front end's). */
MemTxResult rl_board_dma_rw(RlBoard *b, uint64_t addr, void *buf, uint64_t len,
                            bool write);
static inline MemTxResult rl_board_dma_read(RlBoard *b, uint64_t addr, void *buf,
                                            uint64_t len)
{
    return rl_board_dma_rw(b, addr, buf, len, false);
}
static inline MemTxResult rl_board_dma_write(RlBoard *b, uint64_t addr, const void *buf,
                                             uint64_t len)
{
    return rl_board_dma_rw(b, addr, (void *)buf, len, true);
}

/*
 * Something the guest did wrong, in QEMU's log with -d guest_errors:
 * "<board> node N: <what>".
 */
void G_GNUC_PRINTF(2, 3) rl_board_guest_error(RlBoard *b, const char *fmt, ...);

/*
 * Register names for trace events (the tulip_reg_name() of hw/net/tulip.c): a board's
 * table of { offset, name }, ended by { 0, NULL }; RL_REG(FC_REG_, CTRL) is
 * { FC_REG_CTRL, "CTRL" }.
 */
typedef struct RlRegName {
    uint64_t offset;
    const char *name;
} RlRegName;
#define RL_REG(prefix, reg) { prefix##reg, #reg }
/* The name of the register at offset, "unknown" if the table has none. */
const char *rl_reg_name(const RlRegName *names, uint64_t offset);

/*
 * A loaded state is refused: "<board> node N: the stream's <what>" in QEMU's log.
 * Returns -EINVAL, for post_load to return.
 */
int G_GNUC_PRINTF(2, 3) rl_board_refuse(RlBoard *b, const char *fmt, ...);

/*
 * The common registers in a board's VMState. Their post_load checks them (causes the
 * board has, nodes 1..max_nodes) before the board's own post_load runs.
 */
extern const VMStateDescription vmstate_rl_board;
#define VMSTATE_RL_BOARD(_field, _state) \
    VMSTATE_STRUCT(_field, _state, 1, vmstate_rl_board, RlBoard)

#endif /* RL_BOARD_H */
