/*
 * PUMA-II distributed shared memory board: the register layout shared by the QEMU
 * device model (qemu/puma2/), the Linux driver (guest/kernel/puma2/) and the guest
 * programs. Plain #defines only. docs/boards/puma2.md describes the behaviour, the
 * consistency protocol and the timing model.
 *
 * PCI: vendor 0x10cf (Fujitsu), device 0x5032 ("P2"), class 0x0580 (memory, other).
 * Interrupts: MSI, one vector; the cause is in PUMA2_REG_IRQ_STATUS.
 *
 * BAR0, the control page (4 KiB): identity, enable, interrupts, the command and
 *   response FIFOs, counters.
 * BAR1, the board memory (PUMA2_REG_SPACE_PAGES x 4 KiB): this node's copy of the
 *   shared virtual space. Page P of the space is bytes P * PUMA2_PAGE .. + 4095 of
 *   BAR1, whether or not this board holds it: its bytes are the page's only while the
 *   board holds it for the host (PUMA2_OP_READ / PUMA2_OP_WRITE, until RELEASE).
 *   A store to a page the host does not hold for writing is dropped and refused
 *   (PUMA2_ERR_NOT_WRITABLE), so no copy can differ from its owner's.
 *
 * Every access to either BAR crosses the VME bus as programmed I/O: each 32-bit
 * transaction (an 8-byte access is two) costs 'vme-overhead-ns' + 4 bytes at
 * 'vme-rate' of the guest's virtual time, the vCPU held meanwhile. Registers take
 * aligned 32-bit accesses only; BAR1 takes aligned 1-, 2-, 4- and 8-byte accesses.
 * Any other access reads 0, writes nothing and is logged as a guest error.
 *
 * The driver asks for pages by writing commands into the command FIFO:
 *   (page number << PUMA2_CMD_PAGE_SHIFT) | PUMA2_OP_*
 * READ makes the page present and readable on this board, WRITE present and writable
 * with every other copy invalidated; either then holds it for the host until the
 * driver writes RELEASE for it. While the host holds a page, the board answers
 * another board's request that would take the page away with a RECALL in the
 * response FIFO and waits for the RELEASE. Each READ and WRITE is answered by one
 * response; RELEASE has none unless it is refused.
 */
#ifndef PUMA2_REGS_H
#define PUMA2_REGS_H

#define PUMA2_PCI_VENDOR_ID     0x10cf
#define PUMA2_PCI_DEVICE_ID     0x5032

#define PUMA2_ID_VALUE          0x324d5550  /* "PUM2" */
#define PUMA2_PAGE              4096
#define PUMA2_PAGE_SHIFT        12
#define PUMA2_MAX_SPACE_PAGES   16384       /* 64 MiB of board memory at most */
#define PUMA2_CMD_DEPTH         64          /* entries in the command FIFO */
#define PUMA2_RESP_DEPTH        128         /* entries in the response FIFO */
#define PUMA2_MAX_NODES         32

/* ---- BAR0: the control page ----------------------------------------------- */
#define PUMA2_CTRL_PAGE_SIZE    0x1000
#define PUMA2_REG_ID            0x00  /* RO  PUMA2_ID_VALUE */
#define PUMA2_REG_VERSION       0x04  /* RO  1 */
#define PUMA2_REG_NODE_ID       0x08  /* RO  this board's station on the ring: 0 .. n-1 */
#define PUMA2_REG_NUM_NODES     0x0c  /* RO  boards on the ring */
#define PUMA2_REG_CTRL          0x10  /* RW  PUMA2_CTRL_* */
#define PUMA2_REG_STATUS        0x14  /* RO  PUMA2_STATUS_* */
#define PUMA2_REG_IRQ_STATUS    0x18  /* RW1C PUMA2_IRQ_* causes pending */
#define PUMA2_REG_IRQ_MASK      0x1c  /* RW  PUMA2_IRQ_* enabled */
#define PUMA2_REG_ERROR         0x20  /* RO  the last PUMA2_ERR_* of a refused write */
#define PUMA2_REG_SPACE_PAGES   0x24  /* RO  pages in the shared space (= BAR1 / 4 KiB) */
#define PUMA2_REG_CMD           0x28  /* WO  push a command */
#define PUMA2_REG_CMD_FREE      0x2c  /* RO  free entries in the command FIFO */
#define PUMA2_REG_RESP          0x30  /* RO  pop a response; PUMA2_RESP_EMPTY if none */
#define PUMA2_REG_RESP_COUNT    0x34  /* RO  responses waiting */
/*
 * Counters, 64 bits as two registers: reading LO latches HI. Times in ns of virtual
 * time since the board was enabled.
 */
#define PUMA2_REG_BUS_NS_LO     0x40  /* the VME bus busy with this host's PIO */
#define PUMA2_REG_BUS_NS_HI     0x44
#define PUMA2_REG_NET_NS_LO     0x48  /* a host request waiting on another board, bus idle */
#define PUMA2_REG_NET_NS_HI     0x4c
#define PUMA2_REG_PAGES_IN      0x50  /* RO  pages received from other boards */
#define PUMA2_REG_PAGES_OUT     0x54  /* RO  pages sent to other boards */
#define PUMA2_REG_MSGS_IN       0x58  /* RO  protocol frames received (pages too) */
#define PUMA2_REG_MSGS_OUT      0x5c  /* RO  protocol frames sent (pages too) */
#define PUMA2_REG_INVALIDATED   0x60  /* RO  copies this board dropped on invalidation */

#define PUMA2_CTRL_ENABLE       (1u << 0)   /* the board takes commands */
#define PUMA2_CTRL_RESET        (1u << 1)   /* write 1: reset the host interface
                                             * (FIFOs, holds released; self-clearing) */

#define PUMA2_STATUS_READY      (1u << 0)   /* enabled and on the ring */

#define PUMA2_IRQ_RESP          (1u << 0)   /* a response was pushed */
#define PUMA2_IRQ_ERROR         (1u << 1)   /* a write was refused: PUMA2_REG_ERROR */
#define PUMA2_IRQ_ALL           (PUMA2_IRQ_RESP | PUMA2_IRQ_ERROR)

/* ---- commands ----------------------------------------------------------------- */
#define PUMA2_CMD_PAGE_SHIFT    4
#define PUMA2_CMD_OP_MASK       0xfu
#define PUMA2_OP_READ           1     /* present, readable, held: one response */
#define PUMA2_OP_WRITE          2     /* present, writable (others invalid), held */
#define PUMA2_OP_RELEASE        3     /* the host lets go of the page: no response */
#define PUMA2_CMD(page, op)     (((page) << PUMA2_CMD_PAGE_SHIFT) | (op))

/* ---- responses: (page << 12) | kind << 8 | status ------------------------------- */
#define PUMA2_RESP_EMPTY        0xffffffffu
#define PUMA2_RESP_PAGE(r)      ((r) >> 12)
#define PUMA2_RESP_KIND(r)      (((r) >> 8) & 0xf)
#define PUMA2_RESP_STATUS(r)    ((r) & 0xff)
#define PUMA2_RESP(page, kind, status)  (((page) << 12) | ((kind) << 8) | (status))
#define PUMA2_KIND_DONE         0     /* a READ or WRITE finished (or was refused) */
#define PUMA2_KIND_RECALL       1     /* another board waits for this held page:
                                       * RELEASE it when the host is done with it */
#define PUMA2_KIND_REFUSED      2     /* a RELEASE was refused (status says why) */

#define PUMA2_ST_OK             0
#define PUMA2_ST_RANGE          1     /* the page is outside the shared space */
#define PUMA2_ST_BUSY           2     /* a command for this page is still under way */
#define PUMA2_ST_OP             3     /* no such operation */
#define PUMA2_ST_NOT_HELD       4     /* RELEASE of a page the host does not hold */
#define PUMA2_ST_HELD           5     /* READ or WRITE of a page the host holds already
                                       * (WRITE of a page held for reading is an upgrade
                                       * and allowed) */

/* PUMA2_REG_ERROR: why a register write was refused */
#define PUMA2_ERR_NONE          0
#define PUMA2_ERR_CMD_FULL      1     /* a command written with the FIFO full: dropped */
#define PUMA2_ERR_NOT_READY     2     /* a command written before the board was ready */
#define PUMA2_ERR_BAD_ACCESS    3     /* a register access of a size other than 4 */
#define PUMA2_ERR_NOT_WRITABLE  4     /* a BAR1 store to a page not held for writing:
                                       * dropped (the other copies would differ) */

#endif /* PUMA2_REGS_H */
