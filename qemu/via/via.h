/*
 * The VIA NIC (retrolink-via, a cLAN-like Virtual Interface Architecture adapter): the
 * state shared by its files. Register map and behaviour rules:
 * retrolink/regs/via-regs.h; frames: retrolink/proto/via.h; timing: docs/boards/via.md.
 *
 *   via.c      the device: QOM, properties, realize, reset, events, the fabric port,
 *              the promise, migration
 *   via-regs.c BAR0 (the control page) and BAR2 (the doorbells): every access holds
 *              the vCPU for its PCI time (rl-bus)
 *   via-tx.c   the send engine: descriptor fetch and checks, data DMA, frames out, ACKs
 *   via-rx.c   frames in: DATA/DGRAM into receive descriptors, ACK, BREAK, CM
 *   via-cq.c   completions: Status write-back, CQ entries, events, errors, flushing
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RETROLINK_VIA_H
#define RETROLINK_VIA_H

#include "hw/pci/pci_device.h"
#include "net/net.h"
#include "qom/object.h"

#include "retrolink/regs/via-regs.h"
#include "retrolink/proto/via.h"
#include "hw/retrolink/core/rl-bus.h"
#include "hw/retrolink/core/rl-dma-window.h"
#include "hw/retrolink/core/rl-fifo.h"
#include "hw/retrolink/core/rl-pci-board.h"

#define TYPE_RETROLINK_VIA "retrolink-via"
OBJECT_DECLARE_SIMPLE_TYPE(ViaState, RETROLINK_VIA)

typedef struct via_wire_hdr ViaWire;

/* a CM message in the mailbox FIFO: its sender, then its words */
#define VIA_CM_ENTRY_WORDS  (1 + VIA_CM_WORDS)

enum ViaEventKind {
    VIA_EV_TX_START,    /* arg: VI, gen: its tx_gen; the descriptor is fetched and checked */
    VIA_EV_TX_DMA,      /* arg: VI, gen; the DMA of the message's next frame ended */
    VIA_EV_TX_OUT,      /* ptr: ViaFrame; the NIC hands it to the link */
    VIA_EV_ARRIVE,      /* ptr: ViaFrame; a frame from the link reached the NIC */
    VIA_EV_RX_WRITE,    /* arg: VI, gen: its rx_gen, ptr: ViaFrame; its data DMA ended */
    VIA_EV_RX_AGAIN,    /* arg: VI, gen: its rx_gen; the frames in its rx_queue may be
                           taken (via-rx.c, via_rx_data) */
    VIA_EV_WB,          /* ptr: ViaDone; a descriptor's write-back DMA ended */
    VIA_EV_CQE,         /* ptr: ViaDone; a CQ entry's DMA ended */
    VIA_EV_CM_IN,       /* ptr: ViaFrame; a CM message is checked: into the mailbox */
    VIA_EV_LINK,        /* arg: peer | up << 31 */
};

/* A frame inside the NIC: where it goes (or comes from), its header and payload. */
typedef struct ViaFrame {
    uint32_t peer;
    uint32_t len;               /* payload bytes */
    bool complete;              /* a datagram's last frame: its send completes as it leaves */
    uint32_t vi, gen;           /* then: the VI and its tx_gen */
    uint64_t ready;             /* received: the NIC's engine has checked it */
    ViaWire wire;
    uint8_t data[];
} ViaFrame;

/* A descriptor completed: what is written back, and the queue it completes. */
typedef struct ViaDone {
    uint32_t vi, q;             /* q: 0 send, 1 receive */
    uint32_t gen;               /* the VI's gen when it completed */
    uint64_t db;                /* its doorbell value: where the descriptor is */
    uint32_t status, length, immediate;
    bool write_len;             /* a receive: Length and ImmediateData too */
    uint32_t cq;                /* the CQ its entry goes to */
    /* a receive on a connected VI: the ACK sent once the write-back ends */
    bool ack;
    uint32_t ack_peer, ack_vi, ack_seq;
} ViaDone;

/* A descriptor as the NIC read it from host memory. */
typedef struct ViaDesc {
    struct via_control_segment cs;
    struct via_data_segment seg[VIA_MAX_SEGS];
    uint64_t db;
} ViaDesc;

typedef struct ViaRegion {
    uint64_t va;
    uint32_t len;
    uint32_t tpt;
    uint32_t ptag;              /* 0: not set */
} ViaRegion;

/* A work queue: the doorbell values posted, oldest first. */
typedef struct ViaWq {
    uint64_t db[VIA_WQ_DEPTH];
    uint32_t head, count;
    uint32_t done;              /* descriptors completed (wraps) */
} ViaWq;

typedef struct ViaVi {
    uint32_t state, ptag;
    uint32_t send_cq, recv_cq;
    uint32_t peer_node, peer_vi;
    uint32_t db_error;
    ViaWq wq[2];                /* 0 send, 1 receive */
    uint32_t tx_seq;            /* messages sent on it */
    uint32_t rx_seq;            /* messages received on it */
    uint32_t gen;               /* bumped by CLOSE and reset: its write-backs are stale */
    uint32_t tx_gen, rx_gen;    /* bumped when a send / a receive is dropped */
    /*
     * The sends under way: not saved (pre_save refuses them). The first tx_unacked
     * descriptors of the send queue are sent and wait for their ACKs, oldest first (the
     * oldest is message tx_ack_seq); with tx_busy, the next one is being sent.
     */
    uint32_t tx_unacked;
    uint32_t tx_ack_seq;
    bool tx_busy;
    bool tx_bad;                /* its descriptor cannot be read */
    uint32_t tx_err;            /* the VIP_STATUS_* error its fetch found */
    uint32_t tx_held;           /* an error it met while earlier sends await their ACKs */
    uint32_t tx_off, tx_cur_seq;
    ViaDesc tx;
    /* the message being received (rx_busy): not saved */
    bool rx_busy;
    bool rx_has_desc;           /* false: the message is dropped to its last frame */
    uint32_t rx_src, rx_status, rx_len, rx_msg_len;
    uint64_t rx_ready;          /* its receive descriptor is fetched and checked */
    uint64_t rx_written;        /* the last frame's data DMA written so far ends */
    /* its frames waiting for the message before to be written, in the order they came
     * (ViaFrame *): one VIA_EV_RX_AGAIN event takes them in that order (via-rx.c) */
    GQueue rx_queue;
    ViaDesc rx;
} ViaVi;

typedef struct ViaCq {
    uint64_t addr;
    uint32_t entries;
    uint32_t status;            /* VIA_CQ_* */
    uint32_t count;
} ViaCq;

struct ViaState {
    RlPciBoard parent_obj;
    RlBoard *rl;                /* the board core: fabric, node, interrupts, events */
    MemoryRegion ctrl_bar;
    MemoryRegion db_bar;

    /* properties (and the core's: fabric, node, network, start-us) */
    MACAddr mac;
    uint64_t pio_write_ns, pio_read_ns;
    uint64_t dma_rate, dma_setup_ns;
    uint64_t desc_ns, frame_ns;

    /* guest-visible state (the interrupt registers are the core's) */
    uint32_t ctrl, error;
    uint64_t ready_at;
    uint32_t peers_up;
    RlDmaWindow tpt;
    uint32_t mr_index, mr_va_lo, mr_va_hi, mr_len, mr_tpt, mr_ptag;
    ViaRegion mr[VIA_MAX_REGIONS];
    uint32_t vi_index, vi_ptag, vi_cq, vi_peer;
    ViaVi vi[VIA_MAX_VIS];
    uint32_t cq_index, cq_addr_lo, cq_addr_hi, cq_entries;
    ViaCq cq[VIA_MAX_CQS];
    uint32_t vi_armed[4], cq_armed;
    uint32_t vi_events[4], cq_events;
    uint32_t vi_errors[2], cq_errors;
    uint32_t cm_dest, cm_word[VIA_CM_WORDS];
    RlFifo cm_rx;               /* VIA_CM_ENTRY_WORDS words a message */
    uint32_t tx_msgs, rx_msgs, rx_drops, desc_errors, db_refused;

    /* the NIC's resources (docs/boards/via.md, "Timing") */
    RlBus bus;                  /* the PCI bus as the CPU's PIO sees it */
    RlServer dma;               /* the DMA engine, the PCI bus master */
    RlServer nic;               /* the NIC's engine: descriptors and frames */
};

static inline uint64_t via_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* Take the oldest descriptor posted on a work queue (it holds one): its doorbell value. */
static inline uint64_t via_wq_pop(ViaWq *wq)
{
    uint64_t db = wq->db[wq->head];

    wq->head = (wq->head + 1) % VIA_WQ_DEPTH;
    wq->count--;
    return db;
}

/* via.c */
bool via_ready(ViaState *s);
void via_board_reset(ViaState *s);
uint64_t via_dma_ns(ViaState *s, uint64_t bytes);
/* book a DMA transfer of bytes ready at 'ready'; returns its end */
uint64_t via_dma(ViaState *s, uint64_t ready, uint64_t bytes);
/* the NIC builds frame f (frame-ns) from 'ready' and hands it to the link */
void via_frame_out(ViaState *s, ViaFrame *f, uint64_t ready);
ViaFrame *via_frame_new(ViaState *s, uint32_t type, uint32_t peer, uint32_t len);
void via_tx_out(ViaState *s, ViaFrame *f);

/* via-regs.c */
extern const MemoryRegionOps via_ctrl_ops;
extern const MemoryRegionOps via_db_ops;

/* via-tx.c */
bool via_desc_read(ViaState *s, ViaVi *vi, uint64_t db, ViaDesc *d, uint32_t *status);
bool via_seg_rw(ViaState *s, ViaVi *vi, const ViaDesc *d, uint32_t off, void *buf,
                uint32_t len, bool write);
uint32_t via_rx_check(ViaState *s, ViaVi *vi, const ViaDesc *d, uint32_t msg_len);
void via_tx_kick(ViaState *s, uint32_t v, uint64_t ready);
void via_tx_start(ViaState *s, uint32_t v);
void via_tx_dma(ViaState *s, uint32_t v);
void via_tx_ack(ViaState *s, uint32_t v, uint32_t seq, uint32_t status, uint64_t ready);
void via_cm_send(ViaState *s, uint64_t bus_end);

/* via-rx.c */
void via_rx_arrive(ViaState *s, ViaFrame *f);
void via_rx_write(ViaState *s, uint32_t v, ViaFrame *f);
void via_rx_again(ViaState *s, uint32_t v);
void via_rx_queue_clear(ViaVi *vi);
void via_cm_in(ViaState *s, ViaFrame *f);

/* via-cq.c */
ViaDone *via_done_new(uint32_t v, uint32_t q, uint64_t db, uint32_t status);
void via_complete(ViaState *s, ViaDone *d, uint64_t ready);
void via_send_ack(ViaState *s, uint32_t peer, uint32_t src_vi, uint32_t dst_vi,
                  uint32_t seq, uint32_t status, uint64_t ready);
void via_wb_done(ViaState *s, ViaDone *d);
void via_cqe_done(ViaState *s, ViaDone *d);
void via_vi_break(ViaState *s, uint32_t v, bool tell_peer, uint64_t ready);
void via_vi_flush(ViaState *s, uint32_t v, uint32_t q, uint64_t ready);
void via_vi_abort(ViaState *s, uint32_t v);
bool via_cq_in_use(ViaState *s, uint32_t c);

#endif /* RETROLINK_VIA_H */
