/*
 * The VIA NIC (a Giganet cLAN-like Virtual Interface Architecture adapter): the
 * register layout and the in-memory formats shared by the QEMU device model
 * (qemu/via/), the kernel agent (guest/kernel/via/) and VIPL (guest/lib/vipl/).
 * Plain #defines and fixed-layout structs only, so all of them can include it.
 * docs/boards/via.md describes the behaviour and the timing model.
 *
 * PCI: vendor 0x10ba (Mitsubishi Electric, whose study this board serves; the model is
 * our own, not Giganet's card), device 0x5649 ("VI"), class 0x0280 (network).
 * Interrupts: MSI, one vector; the cause is in VIA_REG_IRQ_STATUS.
 *
 * BAR0, the control page (4 KiB): the kernel agent's only. Identity, enable,
 *   interrupts, the translation and protection table (TPT), memory regions, VIs,
 *   completion queues, the connection-message mailbox and counters.
 * BAR2, the doorbell pages (VIA_MAX_VIS x 4 KiB): VI v's page at v * 4 KiB, which the
 *   agent maps into the one process that owns VI v: a post is a 64-bit store there.
 *
 * Every access to either BAR is programmed I/O on the PCI bus and costs its PCI time in
 * the guest's virtual time (rl-bus: the vCPU is held until it ends). Registers take
 * aligned 32-bit accesses; the doorbells (VIA_DB_SEND, VIA_DB_RECV) aligned 64-bit
 * stores only. Any other access reads 0, writes nothing, has no side effect and is
 * logged as a guest error.
 *
 * ---- Memory: the TPT and memory regions -------------------------------------------
 * The NIC reaches host memory (other than CQ rings, which are the agent's, and the
 * TPT itself) only through the TPT, an rl-dma-window (qemu/core/rl-dma-window.h): a
 * table of 64-bit entries in host memory, each a page's bus address | RL_DMA_PAGE_VALID
 * | RL_DMA_PAGE_WRITE | protection tag << 4. A memory region (VIA_MAX_REGIONS of them,
 * set through the VIA_REG_MR_* registers) is a range of user virtual addresses
 * [va, va + len) whose pages are the TPT entries from 'tpt' on, in order: virtual
 * address A of region r is TPT window address r.tpt * 4096 + (A - (r.va & ~4095)).
 * Its memory handle is r + 1 (0 is no region). A descriptor names memory by
 * (virtual address, memory handle); the NIC checks that the handle is a set region, the
 * range lies inside [va, va + len), the region's protection tag is the VI's, and every
 * TPT entry it needs is valid (and writable, to write) with that tag. Anything else:
 * the descriptor completes with VIP_STATUS_PROTECTION_ERROR and nothing is read or
 * written through it. Once a VIA_MR_CLEAR write returns, the NIC touches the region's
 * pages no more: it checks the region again before every DMA, so a transfer under way
 * through it ends with the protection error.
 *
 * ---- VIs -----------------------------------------------------------------------------
 * VI v (0 .. VIA_MAX_VIS-1) has a send and a receive work queue. Its state is
 * VIA_VI_CLOSED, IDLE (open: receives may be posted), CONNECTED (to one VI of one peer),
 * or ERROR (the connection broke: VIA's reliable delivery level). VIA_VI_DATAGRAM is
 * the kernel's LAN emulation mode: unconnected, each send names its destination node
 * in the control segment's Reserved word (VIA_DEST_BROADCAST: every other node), and
 * arrives at the VI of the same number of the destination if that one is in datagram
 * mode too; unreliable (no acknowledgement: a message that finds no receive descriptor
 * is dropped and counted). A post is a 64-bit store of VIA_DB_VALUE(handle, offset):
 * the descriptor at byte 'offset' of the memory region 'handle' (64-byte aligned).
 * A queue holds VIA_WQ_DEPTH posted descriptors; a post to a full queue, to a closed
 * VI, or a send to a VI that is not connected or in datagram mode is refused: it is
 * dropped, VIA_DB_ERROR says why, and nothing else happens (VIPL checks first).
 *
 * Descriptors are processed in the order posted, per queue. A send: the NIC fetches the
 * descriptor (control segment and its data segments) by DMA, checks it, reads the data
 * segments by DMA and sends the message in frames of up to VIA_FRAME_PAYLOAD bytes;
 * the receiving NIC fetches the next receive descriptor of the destination VI, writes
 * the data into its segments, writes the descriptor's Length, ImmediateData and Status
 * back (Status last) and acknowledges; the send descriptor completes (Status written)
 * when the acknowledgement arrives (reliable delivery). An error completes the
 * descriptor with its VIP_STATUS_* error bit: format (a bad segment count, an
 * unsupported operation: RDMA is not offered), protection (above), length (Length is
 * not the sum of the segments, above VIA_MAX_MSG, or a message larger than the receive
 * descriptor's segments: then the receive descriptor gets it and the send the
 * VIP_STATUS_TRANSPORT_ERROR), or no receive descriptor posted at the peer
 * (VIP_STATUS_TRANSPORT_ERROR on the send). An error on a connected VI breaks its
 * connection: both VIs go to ERROR, their other posted descriptors complete with
 * VIP_STATUS_DESC_FLUSHED_ERROR, and VIA_IRQ_ERROR is raised with the VI's bit in
 * VIA_REG_VI_ERRORS. A descriptor that cannot be read at all (its handle, range, tag)
 * cannot have its Status written: the VI goes to ERROR the same way.
 *
 * ---- Completion queues -----------------------------------------------------------
 * CQ c is a ring of 'entries' (a power of two, up to VIA_CQ_MAX_ENTRIES) 8-byte
 * struct via_cq_entry in host memory the agent allocated (physically contiguous;
 * the NIC writes it directly, not through the TPT). A work queue attached to a CQ (at
 * VIA_VI_CMD_OPEN) puts an entry in it for every descriptor it completes, after the
 * descriptor's Status: in slot (n % entries) for the n-th entry, with VIA_CQE_VALID; the
 * consumer clears VALID. An entry that finds its slot still valid overflows the CQ:
 * it is lost, the CQ is marked VIA_CQ_OVERFLOW (VIA_REG_CQ_STATUS) and VIA_IRQ_ERROR is
 * raised with the CQ's bit in VIA_REG_CQ_ERRORS.
 *
 * ---- Interrupts for blocking waits ---------------------------------------------------
 * A work queue or CQ is armed by a write of VIA_REG_ARM; its next completion then sets
 * its bit in VIA_REG_VI_EVENTS(n) / VIA_REG_CQ_EVENTS, disarms it, and raises
 * VIA_IRQ_DONE. Every queue counts its completions (VIA_DB_SQ_DONE, VIA_DB_RQ_DONE;
 * VIA_REG_CQ_COUNT), so a waiter arms, then reads the count, then sleeps.
 *
 * ---- Connections: the agent's mailbox ------------------------------------------------
 * The agents' connection manager talks through the NIC: VIA_REG_CM_TX_* sends one
 * message of VIA_CM_WORDS words to a node; arriving messages queue in a FIFO of
 * VIA_CM_FIFO (VIA_IRQ_CM; a message that finds it full is dropped and counted). The
 * words are the agents' own (guest/kernel/via/). VIA_VI_CMD_CONNECT then joins a
 * local VI to a remote (node, VI).
 */
#ifndef VIA_REGS_H
#define VIA_REGS_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#define VIA_PCI_VENDOR_ID       0x10ba
#define VIA_PCI_DEVICE_ID       0x5649

#define VIA_ID_VALUE            0x56494131  /* "VIA1" */
#define VIA_MAX_VIS             64
#define VIA_MAX_CQS             32
#define VIA_MAX_REGIONS         1024
#define VIA_TPT_MAX_PAGES       65536       /* 256 MiB registered at once */
#define VIA_PAGE                4096
#define VIA_WQ_DEPTH            256         /* posted descriptors a work queue holds */
#define VIA_MAX_SEGS            16          /* data segments of one descriptor */
#define VIA_MAX_MSG             65536       /* bytes in one message (cLAN's VI MTU) */
#define VIA_FRAME_PAYLOAD       2048        /* message bytes a frame carries */
#define VIA_CQ_MAX_ENTRIES      4096
#define VIA_CM_WORDS            8
#define VIA_CM_FIFO             16
#define VIA_DEST_BROADCAST      0xffff

/* ---- BAR0: the control page ------------------------------------------------------ */
#define VIA_CTRL_PAGE_SIZE      0x1000
#define VIA_REG_ID              0x00  /* RO  VIA_ID_VALUE */
#define VIA_REG_VERSION         0x04  /* RO  1 */
#define VIA_REG_NODE_ID         0x08  /* RO  this NIC's node: 0 .. n-1 */
#define VIA_REG_NUM_NODES       0x0c  /* RO  nodes on its network */
#define VIA_REG_CTRL            0x10  /* RW  VIA_CTRL_* */
#define VIA_REG_STATUS          0x14  /* RO  VIA_STATUS_* */
#define VIA_REG_IRQ_STATUS      0x18  /* RW1C VIA_IRQ_* pending */
#define VIA_REG_IRQ_MASK        0x1c  /* RW  VIA_IRQ_* enabled */
#define VIA_REG_MAC_LO          0x20  /* RO  IEEE address for the LAN emulation: bytes 0..3 */
#define VIA_REG_MAC_HI          0x24  /* RO  bytes 4..5 in bits 0..15 */
#define VIA_REG_PEERS_UP        0x28  /* RO  bit n = node n reachable (nodes 0..31) */
#define VIA_REG_ERROR           0x2c  /* RO  VIA_ERR_* of the last control write (0: taken) */

#define VIA_CTRL_ENABLE         (1u << 0)   /* on the switch */
#define VIA_CTRL_RESET          (1u << 1)   /* write 1: everything back to power-on */

#define VIA_STATUS_LINK_UP      (1u << 0)
#define VIA_STATUS_READY        (1u << 1)   /* enabled and on the switch */

#define VIA_IRQ_DONE            (1u << 0)   /* an armed queue completed (VI/CQ_EVENTS) */
#define VIA_IRQ_CM              (1u << 1)   /* the connection mailbox is not empty */
#define VIA_IRQ_ERROR           (1u << 2)   /* a VI broke or a CQ overflowed (*_ERRORS) */
#define VIA_IRQ_LINK            (1u << 3)   /* VIA_REG_PEERS_UP changed */
#define VIA_IRQ_ALL             0xfu

/* The TPT (an rl-dma-window): written while the NIC is not enabled (VIA_ERR_ENABLED). */
#define VIA_REG_TPT_LO          0x30  /* RW  bus address of the table (8-byte aligned) */
#define VIA_REG_TPT_HI          0x34
#define VIA_REG_TPT_PAGES       0x38  /* RW  entries (<= VIA_TPT_MAX_PAGES) */

/* Memory regions: fill the fields, then write VIA_REG_MR_CMD (acts on MR_INDEX). */
#define VIA_REG_MR_INDEX        0x40  /* RW  region 0 .. VIA_MAX_REGIONS-1 (handle - 1) */
#define VIA_REG_MR_VA_LO        0x44  /* RW  its first virtual address */
#define VIA_REG_MR_VA_HI        0x48
#define VIA_REG_MR_LEN          0x4c  /* RW  bytes (1 .. VIA_TPT_MAX_PAGES * 4096 - 4095) */
#define VIA_REG_MR_TPT          0x50  /* RW  the TPT entry of its first page */
#define VIA_REG_MR_PTAG         0x54  /* RW  protection tag 1 .. 255 */
#define VIA_REG_MR_CMD          0x58  /* WO  VIA_MR_SET or VIA_MR_CLEAR */
#define VIA_MR_SET              1     /* the fields above become region MR_INDEX */
#define VIA_MR_CLEAR            2     /* region MR_INDEX is no more */

/* VIs: fill the fields, then write VIA_REG_VI_CMD (acts on VI_INDEX). */
#define VIA_REG_VI_INDEX        0x60  /* RW  VI 0 .. VIA_MAX_VIS-1 */
#define VIA_REG_VI_PTAG         0x64  /* RW  its protection tag, 1 .. 255 (OPEN) */
#define VIA_REG_VI_CQ           0x68  /* RW  send CQ | recv CQ << 16; VIA_NO_CQ: none (OPEN) */
#define VIA_REG_VI_PEER         0x6c  /* RW  peer node | peer VI << 16 (CONNECT) */
#define VIA_REG_VI_CMD          0x70  /* WO  VIA_VI_CMD_* */
#define VIA_REG_VI_STATE        0x74  /* RO  VI_INDEX's VIA_VI_* */
#define VIA_NO_CQ               0xffff
#define VIA_VI_CMD_OPEN         1     /* CLOSED -> IDLE, with PTAG and CQ */
#define VIA_VI_CMD_CONNECT      2     /* IDLE -> CONNECTED to PEER */
#define VIA_VI_CMD_DISCONNECT   3     /* CONNECTED/ERROR -> IDLE: posted sends are flushed;
                                         posted receives stay */
#define VIA_VI_CMD_CLOSE        4     /* any -> CLOSED: everything posted is flushed */
#define VIA_VI_CMD_DATAGRAM     5     /* CLOSED -> DATAGRAM, with PTAG and CQ */
#define VIA_VI_CLOSED           0
#define VIA_VI_IDLE             1
#define VIA_VI_CONNECTED        2
#define VIA_VI_ERROR            3
#define VIA_VI_DATAGRAM         4

/* Completion queues: fill the fields, then write VIA_REG_CQ_CMD (acts on CQ_INDEX). */
#define VIA_REG_CQ_INDEX        0x80  /* RW  CQ 0 .. VIA_MAX_CQS-1 */
#define VIA_REG_CQ_ADDR_LO      0x84  /* RW  bus address of its ring (8-byte aligned) */
#define VIA_REG_CQ_ADDR_HI      0x88
#define VIA_REG_CQ_ENTRIES      0x8c  /* RW  a power of 2, 1 .. VIA_CQ_MAX_ENTRIES */
#define VIA_REG_CQ_CMD          0x90  /* WO  VIA_CQ_SET or VIA_CQ_CLEAR */
#define VIA_REG_CQ_STATUS       0x94  /* RO  CQ_INDEX's VIA_CQ_* */
#define VIA_REG_CQ_COUNT        0x98  /* RO  entries CQ_INDEX has written (wraps) */
#define VIA_CQ_SET              1     /* the ring starts empty: the next entry is slot 0 */
#define VIA_CQ_CLEAR            2     /* refused while a VI uses it (VIA_ERR_BUSY) */
#define VIA_CQ_ACTIVE           (1u << 0)
#define VIA_CQ_OVERFLOW         (1u << 1)

/* Blocking waits */
#define VIA_REG_ARM             0xa0  /* WO  VIA_ARM_VI(v, q) or VIA_ARM_CQ(c) */
#define VIA_ARM_VI(v, q)        (((unsigned)(v) << 1) | ((q) & 1))  /* q: 0 send, 1 recv */
#define VIA_ARM_CQ(c)           (0x10000u | (unsigned)(c))
#define VIA_REG_VI_EVENTS(n)    (0xb0 + (n) * 4)  /* RW1C n = 0..3: bit (2v+q) % 32 of
                                                     queue q of VI v, 2v+q in word n */
#define VIA_REG_CQ_EVENTS       0xc0  /* RW1C bit c: CQ c completed while armed */
#define VIA_REG_VI_ERRORS(n)    (0xc8 + (n) * 4)  /* RW1C n = 0..1: bit v % 32: VI v broke */
#define VIA_REG_CQ_ERRORS       0xd0  /* RW1C bit c: CQ c overflowed */

/* The connection mailbox */
#define VIA_REG_CM_TX_DEST      0x100 /* RW  destination node */
#define VIA_REG_CM_TX_WORD(i)   (0x104 + (i) * 4) /* RW  i = 0 .. VIA_CM_WORDS-1 */
#define VIA_REG_CM_TX_GO        0x124 /* WO  send them (value ignored) */
#define VIA_REG_CM_RX_COUNT     0x140 /* RO  messages in the FIFO */
#define VIA_REG_CM_RX_SRC       0x144 /* RO  the head message's sender */
#define VIA_REG_CM_RX_WORD(i)   (0x148 + (i) * 4) /* RO  its words */
#define VIA_REG_CM_RX_POP       0x168 /* WO  drop the head message (value ignored) */

/* Counters (RO, wrap) */
#define VIA_REG_TX_MSGS         0x180 /* messages sent */
#define VIA_REG_RX_MSGS         0x184 /* messages delivered into receive descriptors */
#define VIA_REG_RX_DROPS        0x188 /* datagrams and CM messages dropped */
#define VIA_REG_DESC_ERRORS     0x18c /* descriptors completed with an error */
#define VIA_REG_DB_REFUSED      0x190 /* doorbell stores refused */

/* VIA_REG_ERROR: why the last control write was refused */
#define VIA_ERR_NONE            0
#define VIA_ERR_RANGE           1   /* an index, a count or a length out of range */
#define VIA_ERR_STATE           2   /* the command does not apply in the VI's state */
#define VIA_ERR_BUSY            3   /* a CQ a VI uses, a region set twice */
#define VIA_ERR_ALIGN           4   /* an address not aligned as it must be */
#define VIA_ERR_ENABLED         5   /* TPT written while enabled */
#define VIA_ERR_NOT_READY       6   /* CM_TX_GO or CONNECT while not on the switch */
#define VIA_ERR_DEST            7   /* not a node of the network, or (CM) this node */
#define VIA_ERR_CMD             8   /* not a command */
#define VIA_ERR_TAG             9   /* protection tag 0 or above 255 */

/* ---- BAR2: VI v's doorbell page at v * VIA_DB_PAGE_SIZE ---------------------------- */
#define VIA_DB_PAGE_SIZE        0x1000
#define VIA_DB_SEND             0x00  /* WO 64-bit: post a send descriptor */
#define VIA_DB_RECV             0x08  /* WO 64-bit: post a receive descriptor */
#define VIA_DB_STATE            0x10  /* RO  the VI's VIA_VI_* */
#define VIA_DB_SQ_DONE          0x14  /* RO  send descriptors completed (wraps) */
#define VIA_DB_RQ_DONE          0x18  /* RO  receive descriptors completed (wraps) */
#define VIA_DB_ERROR            0x1c  /* RO  VIA_DBE_* of the last doorbell store */
#define VIA_DB_VALUE(handle, off) (((uint64_t)(handle) << 32) | (uint32_t)(off))
#define VIA_DB_HANDLE(v)        ((uint32_t)((v) >> 32))
#define VIA_DB_OFFSET(v)        ((uint32_t)(v))

#define VIA_DBE_NONE            0
#define VIA_DBE_FULL            1   /* the work queue holds VIA_WQ_DEPTH already */
#define VIA_DBE_STATE           2   /* the VI is closed, or a send on a VI not connected */
#define VIA_DBE_ALIGN           3   /* the offset is not 64-byte aligned */

/* ---- In host memory ------------------------------------------------------------------- */
/* A descriptor (VIA 1.0): the control segment, then SegCount 16-byte segments. */
struct via_control_segment {
    uint64_t next;          /* Next: the consumer's (the NIC ignores it) */
    uint32_t next_handle;   /* NextHandle: the consumer's */
    uint16_t seg_count;     /* SegCount: data segments that follow, 0 .. VIA_MAX_SEGS */
    uint16_t control;       /* Control: VIP_CONTROL_* */
    uint32_t reserved;      /* datagram VIs: the destination node (VIA_DEST_BROADCAST) */
    uint32_t immediate;     /* ImmediateData */
    uint32_t length;        /* Length: send, the message's bytes; receive, written */
    uint32_t status;        /* Status: written by the NIC, last */
};
struct via_data_segment {
    uint64_t data;          /* virtual address */
    uint32_t handle;        /* memory handle */
    uint32_t length;        /* bytes */
};
_Static_assert(sizeof(struct via_control_segment) == 32, "VIA control segment layout");
_Static_assert(sizeof(struct via_data_segment) == 16, "VIA data segment layout");
#define VIA_DESC_ALIGN          64

/* Control (VIA 1.0) */
#define VIP_CONTROL_OP_SENDRECV         0x0
#define VIP_CONTROL_OP_RDMAWRITE        0x1
#define VIP_CONTROL_OP_RDMAREAD         0x2
#define VIP_CONTROL_OP_MASK             0x3
#define VIP_CONTROL_IMMEDIATE           0x4
#define VIP_CONTROL_QFENCE              0x8
#define VIP_CONTROL_RESERVED            0xfff0

/* Status (VIA 1.0) */
#define VIP_STATUS_DONE                 0x1
#define VIP_STATUS_FORMAT_ERROR         0x2
#define VIP_STATUS_PROTECTION_ERROR     0x4
#define VIP_STATUS_LENGTH_ERROR         0x8
#define VIP_STATUS_PARTIAL_ERROR        0x10
#define VIP_STATUS_DESC_FLUSHED_ERROR   0x20
#define VIP_STATUS_TRANSPORT_ERROR      0x40
#define VIP_STATUS_RDMA_PROT_ERROR      0x80
#define VIP_STATUS_REMOTE_DESC_ERROR    0x100
#define VIP_STATUS_ERROR_MASK           0x1fe
#define VIP_STATUS_OP_SEND              0x00000
#define VIP_STATUS_OP_RECEIVE           0x10000
#define VIP_STATUS_OP_MASK              0x70000
#define VIP_STATUS_IMMEDIATE            0x80000

/* A CQ entry: which work queue completed a descriptor. */
struct via_cq_entry {
    uint32_t vi_queue;      /* VIA_CQE_VALID | queue << 16 (0 send, 1 recv) | VI */
    uint32_t seq;           /* the CQ's entry count when written (VIA_REG_CQ_COUNT - 1) */
};
_Static_assert(sizeof(struct via_cq_entry) == 8, "VIA CQ entry layout");
#define VIA_CQE_VALID           (1u << 31)
#define VIA_CQE_VI(w)           ((w) & 0xffff)
#define VIA_CQE_RECV(w)         (((w) >> 16) & 1)

#endif /* VIA_REGS_H */
