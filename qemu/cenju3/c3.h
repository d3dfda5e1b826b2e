/*
 * Cenju-3 network interface (retrolink-cenju3): the state shared by its files.
 * Register map and rings: retrolink/regs/cenju3-regs.h; packets: retrolink/proto/cenju3.h;
 * behaviour and timing model: docs/boards/cenju3.md.
 *
 *   c3.c       the device: QOM, properties, realize, interrupts, the fabric port,
 *              the promise, reset, migration
 *   c3-regs.c  BAR0: every access holds the vCPU for 'reg-access-ns' (rl-bus); the
 *              cache operations, their cost and the flush ledger; NOW
 *   c3-tx.c    the request ring: take, check, DMA-read packet by packet, to the link
 *   c3-rx.c    arriving packets: the FIFO, MSG into slots, RDMA, the stall rule
 *   c3-evq.c   the event ring: post in order with phase bits, wait for room
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RETROLINK_CENJU3_H
#define RETROLINK_CENJU3_H

#include "hw/pci/pci_device.h"
#include "qom/object.h"

#include "retrolink/regs/cenju3-regs.h"
#include "retrolink/proto/cenju3.h"
#include "hw/retrolink/core/rl-bus.h"
#include "hw/retrolink/core/rl-pci-board.h"

#define TYPE_RETROLINK_CENJU3 "retrolink-cenju3"
OBJECT_DECLARE_SIMPLE_TYPE(C3State, RETROLINK_CENJU3)

#define C3_IRQ_ALL      (C3_IRQ_EVENT | C3_IRQ_ERROR | C3_IRQ_STALL)
#define C3_REQF_ALL     (C3_REQF_EVENT | C3_REQF_NOTIFY)
#define C3_CACHE_LEN_MAX (16u << 20)

/*
 * The interface's transmit buffers: a packet is DMA-read into one, then handed to the
 * link by the packet stage; the DMA of the next packet overlaps (double buffering).
 */
#define C3_TXBUF        2
/* Events waiting for room in the event ring (see c3-evq.c for why this bounds them). */
#define C3_EVQ_WAIT_MAX 16

enum C3EventKind {
    C3_EVK_READY,       /* gen: enable_gen; start-us after ENABLE: on the network */
    C3_EVK_TX_TAKE,     /* gen: tx_gen; the request at REQ_HEAD is taken (req-setup-ns) */
    C3_EVK_TX_DMA,      /* arg: buffer, gen: tx_gen; its packet's DMA read ended */
    C3_EVK_TX_OUT,      /* arg: buffer, gen: tx_gen; its packet leaves for the network */
    C3_EVK_ARRIVE,      /* ptr: C3Packet; its last byte reached the interface */
    C3_EVK_RX_DONE,     /* gen: rx_gen; the FIFO's head packet is written */
};

enum C3TxBufState { C3_TXB_FREE, C3_TXB_DMA, C3_TXB_OUT };

/* A packet inside the interface: the wire header's fields, decoded, then its data. */
typedef struct C3Packet {
    uint32_t kind;              /* C3_PKT_* */
    uint32_t flags;             /* C3_PKTF_* */
    uint32_t src, dest;
    uint32_t len;               /* data bytes: 1 .. C3_PACKET_MAX */
    uint64_t raddr;
    uint32_t tag;
    uint32_t req_len;
    /* transmit side: the request it belongs to */
    uint32_t state;             /* enum C3TxBufState */
    uint32_t req_index;
    uint32_t req_flags;
    uint8_t data[C3_PACKET_MAX];
} C3Packet;

/* The request being sent: what was taken from the ring and how far it is. */
typedef struct C3Req {
    uint32_t index;             /* its ring index (REQ_HEAD when taken) */
    uint32_t op, dest, len, tag, flags;
    uint64_t src, raddr;
    uint32_t off;               /* bytes DMA-read so far */
} C3Req;

/* An event waiting to be written (struct c3_event; its time is when it is written). */
typedef struct C3Ev {
    uint32_t kind, flags, src, info, tag, len, status;   /* flags: C3_EVF_ARRIVING */
} C3Ev;

struct C3State {
    RlPciBoard parent_obj;
    RlBoard *rl;                /* the board core: fabric, node, interrupts, events */
    MemoryRegion bar;

    /* properties (docs/boards/cenju3.md, "Timing"; and the core's: fabric, node,
     * network, start-us) */
    uint64_t reg_access_ns;     /* an uncached load or store across the PE's bus */
    uint64_t dma_rate;          /* the interface's DMA from and to PE memory, bytes/s */
    uint64_t req_setup_ns;      /* taking a request: read and check its descriptor */
    uint64_t packet_setup_ns;   /* each packet, each way */
    uint64_t cache_op_ns;       /* a cache operation's fixed cost */
    uint64_t cache_line_ns;     /* and per line it touches */

    /* guest-visible registers (the interrupt registers are the core's) */
    uint32_t ctrl, error;
    uint32_t req_base_lo, req_base_hi, req_size;
    uint32_t evq_base_lo, evq_base_hi, evq_size;
    uint32_t rxt_base_lo, rxt_base_hi, rxt_slots;
    uint32_t req_tail, req_head, evq_tail, evq_head;
    uint32_t cache_addr_lo, cache_addr_hi, cache_len;
    uint32_t now_hi;            /* NOW_HI as latched by the last NOW_LO read */
    uint32_t tx_packets, rx_packets, req_errors, stalls, cache_misses, rdma_errors;
    uint32_t cache_ops;
    uint64_t ready_at;          /* enabled: on the network from then on */
    uint32_t enable_gen;        /* bumped by disable/reset: a pending READY is stale */

    /* the flush ledger: the last C3_FLUSH_LEDGER ranges flushed, a ring */
    uint64_t ledger_addr[C3_FLUSH_LEDGER];
    uint32_t ledger_len[C3_FLUSH_LEDGER];
    uint32_t ledger_next, ledger_count;

    /* transmit (c3-tx.c) */
    bool tx_take_pending;       /* a TX_TAKE event is scheduled */
    bool tx_active;             /* cur has bytes left to DMA-read */
    bool tx_dma_busy;           /* a TX_DMA event is scheduled */
    C3Req cur;
    C3Packet txbuf[C3_TXBUF];
    RlServer tx_stage;          /* the packet stage of the transmit side */
    uint32_t tx_gen;

    /* receive (c3-rx.c): a FIFO ring of packets, the head in work or waiting */
    C3Packet *rx_fifo;          /* C3_RX_FIFO_MAX entries */
    uint32_t rx_first, rx_count;
    GQueue rx_held;             /* past the FIFO: still in the network (not saved) */
    bool rx_busy;               /* the head is being written: RX_DONE is scheduled */
    bool rx_stalled;            /* the head waits for a slot or event room */
    uint64_t rx_target;         /* where the head's data goes (its slot or raddr) */
    uint32_t rx_err;            /* the head is refused with this C3_ERR_* */
    uint32_t rx_slot;           /* a MSG head's slot index */
    uint32_t rx_gen;
    uint32_t rx_next_slot[C3_MAX_NODES];  /* per peer: its next slot in turn */

    /* the event ring (c3-evq.c) */
    C3Ev evq_wait[C3_EVQ_WAIT_MAX];
    uint32_t evq_wait_n;
    uint32_t evq_reserved;      /* room promised to the receive side's head */
    bool stalled;               /* in a stall episode (C3_STATUS_RX_STALLED) */

    RlBus bus;                  /* the PE's bus as the CPU's accesses see it */

    /* migration: the FIFO, linearized */
    C3Packet *vm_fifo;
    int32_t vm_fifo_count;
};

static inline uint64_t c3_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static inline uint64_t c3_u64(uint32_t lo, uint32_t hi)
{
    return (uint64_t)hi << 32 | lo;
}

/* c3.c */
bool c3_ready(C3State *s);
bool c3_enabled(C3State *s);
void c3_board_reset(C3State *s);
/* [addr, addr + len) is wholly RAM (writable too, with write). */
bool c3_ram_ok(C3State *s, uint64_t addr, uint64_t len, bool write);
bool c3_cpu_ram_ok(uint64_t addr, uint64_t len);

/* c3-regs.c */
extern const MemoryRegionOps c3_bar_ops;
void c3_disable(C3State *s);
bool c3_ledger_covers(C3State *s, uint64_t addr, uint32_t len);

/* c3-tx.c */
void c3_tx_kick(C3State *s, uint64_t from);
void c3_tx_take(C3State *s);
void c3_tx_dma_done(C3State *s, uint32_t b);
void c3_tx_out(C3State *s, uint32_t b);
void c3_tx_stop(C3State *s);
bool c3_tx_idle(C3State *s);

/* c3-rx.c */
void c3_rx_push(C3State *s, const C3Packet *p);
void c3_rx_kick(C3State *s, uint64_t from);
void c3_rx_done(C3State *s);
void c3_rx_stop(C3State *s);
void c3_rx_flush(C3State *s);
C3Packet *c3_rx_head(C3State *s);
/* Decode a packet from the network; false (and *why) if it is malformed. */
bool c3_packet_decode(C3Packet *p, const uint8_t *data, uint32_t len, const char **why);
void c3_packet_encode(const C3Packet *p, uint8_t *buf);

/* c3-evq.c */
bool c3_evq_can_post(C3State *s);
void c3_evq_post(C3State *s, uint32_t kind, uint32_t src, uint32_t info, uint32_t tag,
                 uint32_t len, uint32_t status);
void c3_evq_post_reserved(C3State *s, uint32_t flags, uint32_t kind, uint32_t src,
                          uint32_t info, uint32_t tag, uint32_t len, uint32_t status);
void c3_evq_tail_write(C3State *s, uint32_t val, uint64_t bus_end);
void c3_stall(C3State *s);

#endif /* RETROLINK_CENJU3_H */
