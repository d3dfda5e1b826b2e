/*
 * The CompactPCI backplane board (retrolink-cpci, a non-transparent bridge in the
 * manner of Intel's 21554 between a node's PCI bus and the shared backplane): the state
 * shared by its files. Register map and behaviour rules: retrolink/regs/cpci-regs.h;
 * frames (one backplane transaction each): retrolink/proto/cpci.h; timing:
 * docs/boards/cpci.md.
 *
 *   cpci.c         the device: QOM, properties, realize, reset, events, the fabric
 *                  port, the promise, migration
 *   cpci-regs.c    BAR0, the control page
 *   cpci-window.c  BAR2, the windows: the initiator side (stores become frames)
 *   cpci-posted.c  the posted-write buffer toward the backplane, its credits
 *   cpci-rx.c      frames in: the target side (writes into the export, doorbells,
 *                  loads served)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RETROLINK_CPCI_H
#define RETROLINK_CPCI_H

#include "hw/pci/pci_device.h"
#include "net/net.h"
#include "qom/object.h"

#include "retrolink/regs/cpci-regs.h"
#include "retrolink/proto/cpci.h"
#include "hw/retrolink/core/rl-bus.h"
#include "hw/retrolink/core/rl-pci-board.h"

#define TYPE_RETROLINK_CPCI "retrolink-cpci"
OBJECT_DECLARE_SIMPLE_TYPE(CpciState, RETROLINK_CPCI)

#define CPCI_IRQ_ALL    (CPCI_IRQ_DOORBELL | CPCI_IRQ_ERROR)
#define CPCI_ERR_ALL    0x7fu
#define CPCI_FRAME_MAX  (CPCI_WIRE_HDR_SIZE + CPCI_MAX_ACCESS)

enum CpciEventKind {
    CPCI_EV_ARRIVE,     /* ptr: CpciFrame; a transaction reached this bridge */
    CPCI_EV_LAND,       /* ptr: CpciFrame; a write or doorbell reaches memory/registers */
    CPCI_EV_SERVE,      /* ptr: CpciFrame; a peer's load has read the export */
    CPCI_EV_LINK,       /* arg: peer | up << 31 */
};

/* A transaction inside the bridge: its header and data. */
typedef struct CpciFrame {
    struct cpci_wire_hdr h;
    uint8_t data[CPCI_MAX_ACCESS];
} CpciFrame;

/* A load from a window, waiting for its completion (cpci-window.c): not saved. */
typedef struct CpciLoad {
    bool pending;
    bool have;                  /* its completion was delivered */
    bool abort;                 /* the peer refused it (CPCI_FF_ABORT) */
    uint32_t tag, node, size;
    uint64_t floor;             /* no completion can arrive before this (the grants) */
    uint64_t arrival;           /* have: the completion's arrival */
    uint8_t data[CPCI_MAX_ACCESS];
} CpciLoad;

/*
 * The frames this bridge sent whose entries the backplane may not have freed yet, in
 * sending order (cpci-posted.c): a ring from 'head'; the first 'noticed' of them have
 * their notice (proto/cpci.h, "Credits"), at[] its time; bytes[] the posted-write buffer
 * bytes each holds (0: a load's request or completion), 'held' their sum.
 */
#define CPCI_TXQ_SIZE   512
#define CPCI_TXQ_SPARE  (2 * CPCI_MAX_NODES)    /* entries kept for loads, completions */
QEMU_BUILD_BUG_ON(CPCI_PW_MAX_ENTRIES + CPCI_TXQ_SPARE >= CPCI_TXQ_SIZE);

typedef struct CpciTxq {
    uint32_t head, count, noticed, held;
    uint8_t bytes[CPCI_TXQ_SIZE];
    uint64_t at[CPCI_TXQ_SIZE];
    uint32_t need;              /* a posted write waits for this many notices: not saved */
    uint64_t need_ns;           /* its transaction on the node's PCI: not saved */
} CpciTxq;

struct CpciState {
    RlPciBoard parent_obj;
    RlBoard *rl;                /* the board core: fabric, node, interrupts, events */
    MemoryRegion ctrl_bar;
    MemoryRegion win_bar;

    /* properties (and the core's: fabric, node, network, start-us) */
    MACAddr mac;
    uint64_t cycle_ns;          /* the node's own PCI: a clock */
    uint64_t width;             /* bytes a data phase */
    uint64_t arb_cycles, addr_cycles, turnaround_cycles;
    uint64_t bridge_ns;         /* this bridge: a transaction to the backplane */
    uint64_t mem_read_ns;       /* this node's memory behind its host bridge, a read */
    uint64_t pw_bytes;          /* this bridge's posted-write buffer toward the backplane */

    /* guest-visible state (IRQ_STATUS is the core's irq_status) */
    uint32_t ctrl;
    uint32_t export_lo, export_hi, export_size;
    uint32_t db_status, db_mask;
    uint32_t err_status, err_mask, err_addr;
    uint32_t tx_writes, tx_bytes, tx_reads;
    uint32_t rx_writes, rx_bytes, rx_reads, rx_rejected;
    uint32_t db_sent, db_received;
    bool up;                    /* the cluster started (welcome) */
    uint32_t peers_up;          /* bit per node */
    uint32_t tag;               /* loads sent */
    CpciLoad load;
    CpciTxq txq;

    /* resources (docs/boards/cpci.md, "Timing") */
    RlBus bus;                  /* the node's PCI as the CPU's accesses see it */
    RlServer target;            /* the node's PCI as this bridge masters it for peers */
};

static inline uint64_t cpci_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* cpci.c */
uint64_t cpci_phases(CpciState *s, uint32_t bytes);
/* a transaction of 'bytes' on the node's PCI: to its last data phase; and whole */
uint64_t cpci_pci_data_ns(CpciState *s, uint32_t bytes);
uint64_t cpci_pci_ns(CpciState *s, uint32_t bytes);
void cpci_error(CpciState *s, uint32_t err, uint32_t addr);
void cpci_update_irq(CpciState *s, uint32_t new_causes);
void cpci_board_reset(CpciState *s);
/* a frame onto the backplane, ready there at 'ready' */
void cpci_send(CpciState *s, uint32_t dst, const CpciFrame *f, uint64_t ready);
bool cpci_peer_ok(CpciState *s, uint32_t node, uint32_t addr);

/* cpci-posted.c */
/* buffer bytes a frame holds until the backplane has carried it */
uint32_t cpci_pw_entry_bytes(CpciState *s, const CpciFrame *f);
/*
 * A posted write of 'bytes' buffer bytes whose transaction takes 'pci_ns' on the node's
 * PCI (vCPU thread, inside the access): hold the vCPU for it, after waiting for room in
 * the buffer; its end.
 */
uint64_t cpci_pw_hold(CpciState *s, uint32_t bytes, uint64_t pci_ns);
void cpci_txq_sent(CpciState *s, const CpciFrame *f);
void cpci_txq_notice(CpciState *s, uint64_t at);
/* retire the entries freed by t; the frames still holding an entry then */
uint32_t cpci_txq_pending(CpciState *s, uint64_t t);
int cpci_txq_post_load(CpciState *s);    /* 0, or the refusal (rl_board_refuse) */

/* cpci-regs.c, cpci-window.c */
extern const MemoryRegionOps cpci_ctrl_ops;
extern const MemoryRegionOps cpci_win_ops;

/* cpci-rx.c */
bool cpci_frame_valid(const CpciFrame *f, uint32_t payload, uint32_t src);
/* events, at their time 'now' (which may be ahead of the clock: rl_sched_run_before) */
void cpci_rx_arrive(CpciState *s, CpciFrame *f, uint64_t now);
void cpci_rx_land(CpciState *s, CpciFrame *f, uint64_t now);
void cpci_rx_serve(CpciState *s, CpciFrame *f, uint64_t now);
/* a load's completion was delivered (it arrives at 'at') */
void cpci_load_completion(CpciState *s, const CpciFrame *f, uint64_t at);

#endif /* RETROLINK_CPCI_H */
