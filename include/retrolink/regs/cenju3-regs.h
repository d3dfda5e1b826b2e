/*
 * Cenju-3 network interface (NEC): the register layout and the in-memory structures
 * shared by the QEMU device model (qemu/cenju3/), the Linux driver
 * (guest/kernel/cenju3/) and the tests. Plain #defines and fixed-layout structs only.
 * docs/boards/cenju3.md describes the behaviour and the timing model;
 * ../shared/specs/cenju-3.md is the source.
 *
 * PCI: vendor 0x1033 (NEC), device 0xc3c3, class 0x0280 (network).
 * Interrupts: MSI, one vector (INTx when MSI is off); the cause is in C3_REG_IRQ_STATUS.
 * BAR0: the registers below (4 KiB). Aligned 32-bit accesses only; anything else reads
 * 0, writes nothing, has no side effect and is logged as a guest error, as is a write to
 * a read-only or unknown register. Every access holds the vCPU for 'reg-access-ns' of
 * virtual time (an uncached access across the PE's bus).
 *
 * The interface reaches host memory by PHYSICAL address only (pci_dma_*), as the
 * Cenju-3's did: every address the driver hands it is physical.
 *
 * Three structures in host memory, all little-endian:
 *  - the request queue: a ring of struct c3_req the driver fills and the interface
 *    takes in order once C3_REG_REQ_TAIL says so. Two kinds of request:
 *      C3_OP_MSG   message communication: 1 .. C3_MSG_MAX bytes (one packet) from
 *                  'src' to the destination's protocol receive slots (below);
 *      C3_OP_RDMA  remote DMA: 1 .. C3_REQ_MAX bytes from 'src' written by the
 *                  destination interface at its physical address 'raddr', without the
 *                  destination CPU; the interface cuts it into packets of at most
 *                  C3_PACKET_MAX bytes on its own.
 *    When a request is done (its last packet has left the interface) the interface
 *    writes its 'status' (C3_ST_DONE | C3_ERR_*) and, if C3_REQF_EVENT, posts a
 *    C3_EV_DONE event. A request it refuses (bad length, destination, address) is
 *    done at once with the error, moves no byte, and also posts a C3_EV_ERROR event.
 *  - the receive table: for each peer node p, C3_REG_RXT_SLOTS slot addresses
 *    (u64, physical, C3_SLOT_ALIGN-aligned; 0 = none), entry p * slots + j. A packet
 *    of message communication from p goes into p's next slot in turn (a per-peer
 *    round robin kept by the interface), which must be empty (header word 0): the
 *    interface writes the payload at C3_SLOT_PAYLOAD, then the header with
 *    C3_SLOT_FULL, then posts a C3_EV_MSG event naming p and j. The driver may hand
 *    the slot's buffer up and put a fresh one's address in the table entry (the
 *    interface reads the entry for every packet), and clears the header word when the
 *    slot is free again. These are the per-peer protocol receive buffers of NORMA
 *    IPC/DE, reserved at start.
 *  - the event queue: a ring of struct c3_event the interface writes in order, each
 *    with the lap's phase bit (1 on the first lap, 0 on the second, ...), and raises
 *    C3_IRQ_EVENT. The driver consumes in order and says how far with C3_REG_EVQ_TAIL.
 * The interface never drops anything (the network is reliable): a packet whose slot is
 * still full, or an event with no room in the queue, waits in the interface, which
 * holds back everything behind it (C3_REG_STATUS shows C3_STATUS_RX_STALLED and
 * C3_IRQ_STALL is raised once) until the driver writes C3_REG_EVQ_TAIL, which makes the
 * interface look again. Packets waiting in the interface are bounded (C3_RX_FIFO_MAX);
 * past it the interface stops taking packets from the network: the fabric holds them.
 *
 * Cache control. The interface does not snoop the CPU's caches: software must flush a
 * range before the interface reads it and invalidate it before the CPU reads what the
 * interface wrote. The guest CPU of the emulation is coherent, so the board carries the
 * cost instead: writing C3_REG_CACHE_OP holds the vCPU for 'cache-op-ns' +
 * lines * 'cache-line-ns' (lines of C3_CACHE_LINE bytes touched by the range), the time
 * the VR4400's CACHE instructions would take. The interface keeps a ledger of the last
 * C3_FLUSH_LEDGER ranges flushed; a request whose source is not inside one of them is
 * still sent, but counts in C3_REG_CACHE_MISSES (the driver forgot a flush: on the real
 * machine stale data would have gone), so tests can hold the driver to the rule.
 */
#ifndef CENJU3_REGS_H
#define CENJU3_REGS_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#define C3_PCI_VENDOR_ID        0x1033
#define C3_PCI_DEVICE_ID        0xc3c3

#define C3_ID_VALUE             0x43334e49  /* "C3NI" */
#define C3_VERSION              1

#define C3_PACKET_MAX           508         /* spec: the largest packet's data */
#define C3_MSG_MAX              C3_PACKET_MAX
#define C3_REQ_MAX              (128u << 10) /* spec: data in one request */
#define C3_SLOT_SIZE            512         /* one receive slot: header + a packet */
#define C3_SLOT_ALIGN           512
#define C3_SLOT_PAYLOAD         4           /* the payload follows the header word */
#define C3_MAX_SLOTS            16          /* slots per peer */
#define C3_MAX_NODES            256         /* spec: 4^4 ports */
#define C3_REQ_ALIGN            64          /* the request ring's base */
#define C3_EVQ_ALIGN            64          /* the event ring's base */
#define C3_RING_MAX             4096        /* entries in either ring (a power of 2) */
#define C3_CACHE_LINE           32
#define C3_FLUSH_LEDGER         64
#define C3_RX_FIFO_MAX          1024        /* packets waiting inside the interface */

/* ---- BAR0 ---------------------------------------------------------------- */
#define C3_BAR_SIZE             0x1000
#define C3_REG_ID               0x00  /* RO  C3_ID_VALUE */
#define C3_REG_VERSION          0x04  /* RO  C3_VERSION */
#define C3_REG_NODE_ID          0x08  /* RO  this PE's port on the network: 0 .. n-1 */
#define C3_REG_NUM_NODES        0x0c  /* RO  PEs on the network */
#define C3_REG_CTRL             0x10  /* RW  C3_CTRL_* */
#define C3_REG_STATUS           0x14  /* RO  C3_STATUS_* */
#define C3_REG_IRQ_STATUS       0x18  /* RW1C C3_IRQ_* pending */
#define C3_REG_IRQ_MASK         0x1c  /* RW  C3_IRQ_* enabled */
#define C3_REG_ERROR            0x20  /* RO  C3_ERR_* of the last refused control write */

/* configuration: written only while the interface is disabled (else refused with
 * C3_ERR_ENABLED); checked when C3_CTRL_ENABLE is set (refused with C3_ERR_CONFIG) */
#define C3_REG_REQ_BASE_LO      0x40  /* RW  physical base of the request ring */
#define C3_REG_REQ_BASE_HI      0x44
#define C3_REG_REQ_SIZE         0x48  /* RW  entries: a power of 2, 2 .. C3_RING_MAX */
#define C3_REG_EVQ_BASE_LO      0x50  /* RW  physical base of the event ring */
#define C3_REG_EVQ_BASE_HI      0x54
#define C3_REG_EVQ_SIZE         0x58  /* RW  entries: a power of 2, 2 .. C3_RING_MAX */
#define C3_REG_RXT_BASE_LO      0x60  /* RW  physical base of the receive table (8-aligned) */
#define C3_REG_RXT_BASE_HI      0x64
#define C3_REG_RXT_SLOTS        0x68  /* RW  slots per peer: 1 .. C3_MAX_SLOTS */

/* running: the driver's side of the rings (indices count up and wrap at 2^32;
 * entry = index % size) */
#define C3_REG_REQ_TAIL         0x80  /* RW  requests written so far: the doorbell */
#define C3_REG_REQ_HEAD         0x84  /* RO  requests the interface has taken */
#define C3_REG_EVQ_TAIL         0x88  /* RW  events the driver has consumed; also "look
                                         again" for a stalled interface */
#define C3_REG_EVQ_HEAD         0x8c  /* RO  events the interface has written */

/* cache control (see above): write ADDR and LEN, then the operation into CACHE_OP */
#define C3_REG_CACHE_ADDR_LO    0xa0  /* RW */
#define C3_REG_CACHE_ADDR_HI    0xa4  /* RW */
#define C3_REG_CACHE_LEN        0xa8  /* RW  bytes, 1 .. 16 MiB */
#define C3_REG_CACHE_OP         0xac  /* WO  C3_CACHE_FLUSH or C3_CACHE_INVAL */

/* virtual time, for the driver's breakdown timestamps: read LO first (it latches HI) */
#define C3_REG_NOW_LO           0xb0  /* RO  ns of virtual time */
#define C3_REG_NOW_HI           0xb4  /* RO */

/* counters (RO, wrap) */
#define C3_REG_TX_PACKETS       0xc0
#define C3_REG_RX_PACKETS       0xc4
#define C3_REG_REQ_ERRORS       0xc8  /* requests refused */
#define C3_REG_STALLS           0xcc  /* times the interface waited for the driver */
#define C3_REG_CACHE_MISSES     0xd0  /* requests whose source no flush covered */
#define C3_REG_RDMA_ERRORS      0xd4  /* arriving remote DMA refused (bad address) */
#define C3_REG_CACHE_OPS        0xd8  /* cache operations done */

#define C3_CTRL_ENABLE          (1u << 0)   /* on the network, rings in use */
#define C3_CTRL_RESET           (1u << 1)   /* write 1: back to power-on (self-clearing) */

#define C3_STATUS_ENABLED       (1u << 0)
#define C3_STATUS_RX_STALLED    (1u << 1)   /* waiting for a slot or for event room */
#define C3_STATUS_TX_IDLE       (1u << 2)   /* no request under way or queued */

#define C3_IRQ_EVENT            (1u << 0)   /* an event was written */
#define C3_IRQ_ERROR            (1u << 1)   /* a request or an arriving packet refused */
#define C3_IRQ_STALL            (1u << 2)   /* the interface started waiting for the driver */

#define C3_CACHE_FLUSH          1
#define C3_CACHE_INVAL          2

/* errors: a request's status, an event's, C3_REG_ERROR */
#define C3_ERR_NONE             0
#define C3_ERR_LENGTH           1   /* 0, or above C3_MSG_MAX / C3_REQ_MAX */
#define C3_ERR_DEST             2   /* not a node of the network, or this node (MSG) */
#define C3_ERR_ADDR             3   /* a source or target range outside memory */
#define C3_ERR_OP               4   /* unknown op or flags */
#define C3_ERR_ENABLED          5   /* configuration written while enabled */
#define C3_ERR_CONFIG           6   /* enabled with a bad ring, table or size */
#define C3_ERR_NO_SLOT          7   /* arriving message: the peer's table entry is 0 */

/* ---- the request ring ------------------------------------------------------ */
#define C3_OP_MSG               1
#define C3_OP_RDMA              2

#define C3_REQF_EVENT           (1u << 0)   /* post C3_EV_DONE when done */
#define C3_REQF_NOTIFY          (1u << 1)   /* RDMA: the destination posts C3_EV_RDMA
                                               (with 'tag') when the last byte is in */

#define C3_ST_DONE              (1u << 15)  /* status: the request is finished */
#define C3_ST_ERR(s)            ((s) & 0xff)

struct c3_req {
    uint16_t op;        /* C3_OP_* */
    uint16_t dest;      /* destination node */
    uint32_t len;       /* bytes */
    uint64_t src;       /* physical address of the data here */
    uint64_t raddr;     /* RDMA: physical address in the destination; MSG: 0 */
    uint32_t tag;       /* the driver's: in C3_EV_DONE, and in C3_EV_RDMA at the other end */
    uint16_t flags;     /* C3_REQF_* */
    uint16_t status;    /* written by the interface: C3_ST_DONE | C3_ERR_* */
};
_Static_assert(sizeof(struct c3_req) == 32, "Cenju-3 request layout");

/* ---- the event ring ---------------------------------------------------------- */
#define C3_EV_MSG               1   /* src: sender, info: slot index j, len: bytes */
#define C3_EV_RDMA              2   /* src: sender, tag: its tag, len: bytes of the request */
#define C3_EV_DONE              3   /* info: request index, tag: its tag, len: its bytes */
#define C3_EV_ERROR             4   /* a refused request (info: index, tag) or an
                                       arriving packet (src); status: C3_ERR_* */

#define C3_EVF_PHASE            (1u << 0)
#define C3_EVF_ARRIVING         (1u << 1)   /* C3_EV_ERROR: an arriving packet was refused
                                               (src: its sender; info 0), not a request */

struct c3_event {
    uint8_t kind;       /* C3_EV_* */
    uint8_t flags;      /* C3_EVF_PHASE: the lap's phase, written last */
    uint16_t src;       /* the sending node (MSG, RDMA, arriving errors) */
    uint32_t info;      /* see C3_EV_* */
    uint32_t tag;
    uint32_t len;
    uint32_t status;    /* C3_ERR_* */
    uint32_t rsvd;
    uint64_t t_ns;      /* virtual time at which the interface posted it */
};
_Static_assert(sizeof(struct c3_event) == 32, "Cenju-3 event layout");

/* ---- a receive slot ---------------------------------------------------------- */
#define C3_SLOT_FULL            (1u << 31)
#define C3_SLOT_LEN(h)          ((h) & 0xffff)

#endif /* CENJU3_REGS_H */
