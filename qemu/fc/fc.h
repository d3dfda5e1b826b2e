/*
 * PUMA-III Fibre Channel adapter (retrolink-fc): the state shared by its files.
 * Register map: retrolink/regs/fc-regs.h; frames: retrolink/proto/fc.h;
 * behaviour and timing model: docs/boards/fc.md.
 *
 *   fc.c       the model: events, the fabric port, the promise, realize, reset,
 *              migration (FcState, embedded in each bus's device type)
 *   fc-pci.c   the PCI card (retrolink-fc), on the x86 nodes
 *   fc-sbus.c  the SBus card (retrolink-fc-sbus), on the SPARCstation 5 nodes
 *   fc-regs.c  the two register regions: every access costs its SBus PIO time (rl-bus)
 *   fc-tx.c    DMA and PIO sends: SBus DMA -> transmit buffer -> adapter -> link
 *   fc-rx.c    arriving frames: adapter -> SBus DMA into the channel's ring
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RETROLINK_FC_H
#define RETROLINK_FC_H

#include "hw/qdev-properties.h"
#include "net/net.h"

#include "retrolink/regs/fc-regs.h"
#include "retrolink/proto/fc.h"
#include "hw/retrolink/core/rl-bus.h"
#include "hw/retrolink/core/rl-dma-window.h"
#include "hw/retrolink/core/rl-board.h"

#define TYPE_RETROLINK_FC       "retrolink-fc"
#define TYPE_RETROLINK_FC_SBUS  "retrolink-fc-sbus"

typedef struct fc_wire_hdr FcWire;

#define FC_IRQ_ALL      (FC_IRQ_RX(0) | FC_IRQ_TXDONE(0) | FC_IRQ_ERROR(0) | \
                         FC_IRQ_RX(1) | FC_IRQ_TXDONE(1) | FC_IRQ_ERROR(1) | FC_IRQ_LINK)

/* the most frames the on-board transmit buffer can hold ('tx-queue-frames') */
#define FC_TXQ_MAX      16

enum FcEventKind {
    FC_EV_TX_DMA_DONE,  /* arg: channel, gen: its tx_gen; the DMA of the send's next frame */
    FC_EV_TX_OUT,       /* arg: channel, gen, ptr: FcFrame; the adapter hands it to the link */
    FC_EV_ARRIVE,       /* ptr: FcFrame; a frame's last byte reached the adapter */
    FC_EV_RX_ADAPTED,   /* ptr: FcFrame; the adapter's receive stage is done */
    FC_EV_RX_DMA_DONE,  /* arg: channel, gen: its rx_gen, ptr: FcFrame; in the ring */
    FC_EV_LINK,         /* arg: peer | up << 31 */
};

/* A frame inside the adapter: wire header, payload, and where it goes. */
typedef struct FcFrame {
    uint32_t peer;              /* destination (transmit) or source (receive) */
    uint32_t len;               /* payload bytes */
    uint32_t slot;              /* receive: the ring slot it is written to */
    bool last;                  /* transmit: the last frame of a DMA send */
    uint64_t pages[2];          /* receive: the slot's bus pages, from the DVMA table */
    FcWire wire;
    uint8_t data[];
} FcFrame;

/* One channel: its configuration, its DMA send, its receive ring (fc-regs.h). */
typedef struct FcChannel {
    /* configuration (BAR0) */
    uint32_t ctrl;
    RlDmaWindow dvma;           /* its DVMA table (FC_CH_DVMA_LO/HI/PAGES) */
    uint32_t rx_ring, rx_slots;
    /* counters */
    uint32_t tx_frames, rx_frames, rx_drops, errors;
    /* its page (BAR2) */
    uint32_t tx_addr, tx_len, tx_dest, tx_tag;
    uint32_t tx_status, tx_done, pio_tag;
    uint8_t pio_buf[FC_PIO_MAX];
    /* the DMA send under way (tx_active): what TX_GO took, and how far it is */
    bool tx_active;
    uint32_t cur_addr, cur_len, cur_dest, cur_tag;
    uint32_t tx_off;            /* bytes read from host memory so far */
    uint32_t tx_slot;           /* the transmit buffer slot its next frame fills */
    uint32_t tx_seq;            /* sends started: the frames' seq_id */
    uint32_t tx_gen;            /* bumped by an abort: its events are stale */
    uint64_t *tx_pages;         /* the send's DVMA pages, read at TX_GO */
    uint32_t tx_first_page;
    /* the receive ring: the adapter's next slot, slots it owns, slots the host holds */
    uint32_t rx_next, rx_free, rx_host;
    uint32_t rx_gen;
} FcChannel;

/* The adapter, whichever bus it is on: the `fc` member of each bus's device type. */
typedef struct FcState {
    RlBoard *rl;                /* the board core: fabric, node, interrupts, events */
    MemoryRegion ctrl_bar;
    MemoryRegion chan_bar;

    /* properties (and the core's: fabric, node, network, start-us) */
    MACAddr mac;
    uint64_t dma_rate;          /* SBus DMA, bytes/s */
    uint64_t pio_rate;          /* SBus programmed I/O, bytes/s */
    uint64_t adapter_rate;      /* the adapter's own stage, bytes/s */
    uint64_t send_setup_ns;     /* a DMA send: command to the first DMA */
    uint64_t frame_setup_ns;    /* each frame in the adapter (either way) */
    uint32_t txq_frames;        /* the transmit buffer, in frames */

    /* guest-visible state (the interrupt registers are the core's) */
    uint32_t ctrl, error;
    uint64_t ready_at;          /* enabled: on the link from then on (FC_STATUS_READY) */
    uint32_t peers_up;
    FcChannel ch[FC_CHANNELS];

    /* the adapter's resources (docs/boards/fc.md, "Timing") */
    RlBus bus;                  /* the SBus as the CPU's PIO sees it */
    RlServer dma;               /* the SBus DMA engine: sends and receives */
    RlServer tx_adapter;        /* the adapter's transmit stage */
    RlServer rx_adapter;        /* its receive stage (FC is full duplex) */
    uint64_t txq_free_at[FC_TXQ_MAX];   /* each transmit buffer slot is free again */
} FcState;

static inline uint64_t fc_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* fc.c: what each bus's device type is made of */
extern const VMStateDescription vmstate_fc;
#define VMSTATE_FC(_field, _state) VMSTATE_STRUCT(_field, _state, 1, vmstate_fc, FcState)
/*
 * The device type's own pre_save calls it: a pre_save that fails inside a nested
 * struct leaves the stream's description unfinished (migration/vmstate.c).
 */
int fc_pre_save(FcState *s);
extern const RlPortOps fc_link_ops;
void fc_event(void *opaque, RlEvent *ev);
bool fc_event_check(void *opaque, const RlEvent *ev, Error **errp);
bool fc_realize(void *opaque, Error **errp);
uint64_t fc_reaction_ns(void *opaque);
void fc_unrealize(void *opaque);
void fc_reset(void *opaque);

/* The board core's view of the adapter, named as the device type _name is. */
#define FC_BOARD_INFO(_name) {                  \
    .name = _name,                              \
    .port_name = "fc",                          \
    .protocol = RL_PROTO_FC,                    \
    .irq_all = FC_IRQ_ALL,                      \
    .max_nodes = RL_MAX_NODES,                  \
    .port_ops = &fc_link_ops,                   \
    .event = fc_event,                          \
    .event_check = fc_event_check,              \
    .realize = fc_realize,                      \
    .reaction_ns = fc_reaction_ns,              \
    .unrealize = fc_unrealize,                  \
    .reset = fc_reset,                          \
}

/*
 * The adapter's properties, in a device type _state whose FcState is `fc`. Defaults and
 * their sources: docs/boards/fc.md, "Timing"; puma-iii.md.
 */
#define DEFINE_FC_PROPERTIES(_state)                                            \
    DEFINE_PROP_MACADDR("mac", _state, fc.mac),                                 \
    DEFINE_PROP_UINT64("dma-rate", _state, fc.dma_rate, 61000000),              \
    DEFINE_PROP_UINT64("pio-rate", _state, fc.pio_rate, 20000000),              \
    DEFINE_PROP_UINT64("adapter-rate", _state, fc.adapter_rate, 58000000),      \
    DEFINE_PROP_UINT64("send-setup-ns", _state, fc.send_setup_ns, 500),         \
    DEFINE_PROP_UINT64("frame-setup-ns", _state, fc.frame_setup_ns, 200),       \
    DEFINE_PROP_UINT32("tx-queue-frames", _state, fc.txq_frames, 2),            \
    DEFINE_RL_BOARD_START_US(_state, 10000)

bool fc_peer_up(FcState *s, uint32_t peer);
bool fc_ready(FcState *s);
void fc_board_reset(FcState *s);
uint64_t fc_adapter_ns(FcState *s, uint32_t payload);

/* fc-regs.c */
/* each in the two byte orders: rl_board_ops */
extern const MemoryRegionOps fc_ctrl_ops[2];
extern const MemoryRegionOps fc_chan_ops[2];

/* fc-tx.c */
void fc_tx_go(FcState *s, uint32_t c, uint64_t bus_end);
void fc_pio_send(FcState *s, uint32_t c, uint32_t val, uint64_t bus_end);
void fc_tx_dma_done(FcState *s, uint32_t c);
void fc_tx_out(FcState *s, uint32_t c, FcFrame *f);
void fc_tx_abort(FcState *s, uint32_t c);
uint32_t fc_txq_free(FcState *s);

/* fc-rx.c */
void fc_rx_arrive(FcState *s, FcFrame *f);
void fc_rx_adapted(FcState *s, FcFrame *f);
void fc_rx_dma_done(FcState *s, uint32_t c, FcFrame *f);
void fc_rx_release(FcState *s, uint32_t c, uint32_t n);
void fc_rx_abort(FcState *s, uint32_t c);

#endif /* RETROLINK_FC_H */
