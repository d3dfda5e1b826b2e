/*
 * The CompactPCI backplane board (the interconnect study's processor-to-processor bus):
 * the register layout shared by the QEMU device model (qemu/cpci/) and the driver
 * (guest/kernel/cpci/). Plain #defines only, so both can include it.
 * docs/boards/cpci.md describes the behaviour and the timing model.
 *
 * The board is a non-transparent bridge (in the manner of Intel's 21554) between a
 * node's own PCI bus and the shared CompactPCI backplane (33 MHz, 32 bits). Each node
 * exports one region of its memory (CPCI_REG_EXPORT_*); every node's board opens a
 * window onto every other node's exported region; CPU loads and stores into a window
 * become backplane transactions that reach the peer's memory. Doorbell registers
 * interrupt a peer.
 *
 * PCI: vendor 0x10ba (Mitsubishi Electric, whose study this board serves; the model is
 * our own), device 0x4350 ("CP"), class 0x0680 (bridge, other).
 * Interrupts: MSI, one vector; the cause is in CPCI_REG_IRQ_STATUS.
 *
 * BAR0, the control page (4 KiB): aligned 32-bit accesses only.
 * BAR2, the windows (CPCI_MAX_NODES x CPCI_WINDOW_SIZE): node n's window at
 *   n * CPCI_WINDOW_SIZE. Byte o of window n is byte o of node n's exported region.
 *   Accesses of 1, 2, 4 or 8 bytes, naturally aligned; each access is one transaction
 *   (a CPU copy of N bytes in 4-byte stores is N/4 transactions: the study's point).
 *
 * ---- Timing (every figure a parameter of the board or of the bus: cpci.md) ----------
 * A store into a window is a posted write: the vCPU is held for the store's
 * transaction on the node's own PCI bus (arbitration, address phase, one data phase a
 * 32-bit word, turnaround), then the bridge forwards it onto the backplane (its
 * latency), where the fabric's bus serialises every node's transactions; it reaches the
 * peer's memory (the peer bridge's latency, then its own PCI's write) at its time.
 * A load from a window is non-posted: the vCPU is held until the data is back (the
 * request's way there, the peer's memory read, the completion's way back).
 * Doorbells are posted writes like any other: a doorbell rung after stores into the
 * same peer's window arrives after them (one bus, in order).
 *
 * ---- Errors ---------------------------------------------------------------------------
 * A window access while the board is not enabled, into the node's own window, or into
 * the window of a node that is not on the backplane: a store is dropped, a load returns
 * all ones (a master abort), and CPCI_ERR_STATUS says which (CPCI_ERR_ADDR: the BAR2
 * offset). A store or load that finds the peer's export disabled or falls outside it:
 * dropped at the peer (CPCI_ERR_INBOUND there, its CPCI_REG_RX_REJECTED counts it); a
 * load returns all ones and sets CPCI_ERR_PEER_ABORT here. Any other bad access (an
 * unknown register, a write to a read-only one, a bad width or alignment) reads 0,
 * writes nothing, sets CPCI_ERR_BAD_ACCESS and is logged as a guest error; a bad value
 * written to a known register (an export that is not page-aligned or too large, a
 * doorbell to no such node or bit) is ignored and sets CPCI_ERR_BAD_VALUE.
 * CPCI_ERR_STATUS is write-one-to-clear; an unmasked error raises CPCI_IRQ_ERROR.
 */
#ifndef RETROLINK_CPCI_REGS_H
#define RETROLINK_CPCI_REGS_H

#define CPCI_PCI_VENDOR_ID      0x10ba
#define CPCI_PCI_DEVICE_ID      0x4350
#define CPCI_PCI_CLASS          0x0680

#define CPCI_CTRL_BAR           0
#define CPCI_CTRL_SIZE          0x1000
#define CPCI_WINDOW_BAR         2

#define CPCI_MAX_NODES          8
#define CPCI_WINDOW_SIZE        0x100000u                  /* 1 MiB a node */
#define CPCI_WINDOWS_SIZE       (CPCI_MAX_NODES * CPCI_WINDOW_SIZE)
#define CPCI_EXPORT_MAX         CPCI_WINDOW_SIZE
#define CPCI_PAGE_SIZE          4096u
#define CPCI_MAX_ACCESS         8                          /* bytes in one transaction */

#define CPCI_DB_PER_NODE        4                          /* doorbells a node rings another */
/* bit of CPCI_REG_DB_STATUS that doorbell 'bit' rung by node 'src' sets */
#define CPCI_DB_BIT(src, bit)   ((src) * CPCI_DB_PER_NODE + (bit))

#define CPCI_ID_MAGIC           0x49435043u                /* "CPCI" little-endian */
#define CPCI_VERSION            1

/* ---- BAR0 registers (byte offsets) ---- */
#define CPCI_REG_ID             0x000   /* RO: CPCI_ID_MAGIC */
#define CPCI_REG_VERSION        0x004   /* RO: CPCI_VERSION */
#define CPCI_REG_NODE           0x008   /* RO: this node's number on the backplane */
#define CPCI_REG_NODES          0x00c   /* RO: nodes on the backplane (0 before the cluster starts) */
#define CPCI_REG_CTRL           0x010   /* RW: CPCI_CTRL_* */
#define CPCI_REG_STATUS         0x014   /* RO: CPCI_STATUS_* */
#define CPCI_REG_EXPORT_LO      0x018   /* RW: the exported region's bus address, bits 31:0 */
#define CPCI_REG_EXPORT_HI      0x01c   /* RW: bits 63:32 */
#define CPCI_REG_EXPORT_SIZE    0x020   /* RW: its size in bytes: a multiple of
                                           CPCI_PAGE_SIZE, at most CPCI_EXPORT_MAX.
                                           Address and size are taken when
                                           CPCI_CTRL_EXPORT is set (writes while it is
                                           set: CPCI_ERR_BAD_VALUE) */
#define CPCI_REG_WINDOW_SIZE    0x024   /* RO: CPCI_WINDOW_SIZE */
#define CPCI_REG_DB_RING        0x028   /* WO: CPCI_DB_RING_VALUE(node, bit) rings peer
                                           'node''s doorbell 'bit' (a posted write) */
#define CPCI_REG_DB_STATUS      0x02c   /* RW1C: doorbells rung here, CPCI_DB_BIT(src, bit) */
#define CPCI_REG_DB_MASK        0x030   /* RW: a set bit keeps that doorbell from interrupting */
#define CPCI_REG_IRQ_STATUS     0x034   /* RO: CPCI_IRQ_* pending (unmasked doorbells, errors) */
#define CPCI_REG_ERR_STATUS     0x038   /* RW1C: CPCI_ERR_* */
#define CPCI_REG_ERR_MASK       0x03c   /* RW: a set bit keeps that error from interrupting */
#define CPCI_REG_ERR_ADDR       0x040   /* RO: the offending BAR0/BAR2 offset of the last error */
#define CPCI_REG_MAC_LO         0x044   /* RO: IEEE address for the driver's netdev: bytes 0..3 */
#define CPCI_REG_MAC_HI         0x048   /* RO: bytes 4..5 in bits 0..15 (qdev property "mac") */
/* counters, RO, 32 bits, wrapping */
#define CPCI_REG_TX_WRITES      0x080   /* stores sent into peers' windows */
#define CPCI_REG_TX_BYTES       0x084
#define CPCI_REG_TX_READS       0x088   /* loads from peers' windows */
#define CPCI_REG_RX_WRITES      0x08c   /* peers' stores written into the export */
#define CPCI_REG_RX_BYTES       0x090
#define CPCI_REG_RX_READS       0x094   /* peers' loads served from the export */
#define CPCI_REG_RX_REJECTED    0x098   /* peers' accesses outside the export, or while off */
#define CPCI_REG_DB_SENT        0x09c
#define CPCI_REG_DB_RECEIVED    0x0a0

#define CPCI_CTRL_ENABLE        (1u << 0)   /* windows and doorbells work */
#define CPCI_CTRL_EXPORT        (1u << 1)   /* peers' accesses reach the exported region */
#define CPCI_CTRL_RESET         (1u << 31)  /* WO: back to power-on state (reads as 0) */

#define CPCI_STATUS_UP          (1u << 0)   /* the backplane is up (the cluster started) */

#define CPCI_DB_RING_VALUE(node, bit)   (((node) << 16) | (bit))

#define CPCI_IRQ_DOORBELL       (1u << 0)   /* DB_STATUS & ~DB_MASK != 0 */
#define CPCI_IRQ_ERROR          (1u << 1)   /* ERR_STATUS & ~ERR_MASK != 0 */

#define CPCI_ERR_DISABLED       (1u << 0)   /* a window access or doorbell while not enabled */
#define CPCI_ERR_SELF           (1u << 1)   /* an access to the node's own window, or its own doorbell */
#define CPCI_ERR_NO_NODE        (1u << 2)   /* an access or doorbell to a node not on the backplane */
#define CPCI_ERR_PEER_ABORT     (1u << 3)   /* a load the peer refused (its export off or too small) */
#define CPCI_ERR_INBOUND        (1u << 4)   /* here: a peer's access outside the export, or while off */
#define CPCI_ERR_BAD_ACCESS     (1u << 5)   /* unknown register, read-only, width, alignment */
#define CPCI_ERR_BAD_VALUE      (1u << 6)   /* a bad value for a known register */

#endif /* RETROLINK_CPCI_REGS_H */
