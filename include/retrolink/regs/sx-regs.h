/*
 * SX message processor (SXM) board: the register and window layout shared by
 * the QEMU device model (qemu/sx/sx.c) and the Linux driver
 * (guest/kernel/sx/). Plain #defines only, so both can include it.
 * docs/boards/sx.md describes the behaviour and the timing model.
 *
 * PCI: vendor 0x10cf (Fujitsu), device 0x5358 ("SX"), class 0x0280 (network).
 * BAR0: 4 KiB of 32-bit registers. BAR2: the 128 KiB message window, memory
 * shared by the host (PM) and the SXM: descriptors and message buffers.
 * Interrupts: MSI, one vector; the cause is in SX_REG_IRQ_STATUS.
 */
#ifndef SX_REGS_H
#define SX_REGS_H

#define SX_PCI_VENDOR_ID        0x10cf
#define SX_PCI_DEVICE_ID        0x5358

#define SX_ID_VALUE             0x53584d31  /* "SXM1" */
#define SX_MAX_MSG              4096        /* bytes per message */

/* BAR0 registers (aligned 32-bit access only; any other access reads 0, writes
 * nothing, has no side effect, and is logged as a guest error) */
#define SX_REG_ID               0x00  /* RO  SX_ID_VALUE */
#define SX_REG_VERSION          0x04  /* RO  1 */
#define SX_REG_NODE_ID          0x08  /* RO  this board's node id on the ring */
#define SX_REG_NUM_NODES        0x0c  /* RO  node ids are 0 .. n-1 */
#define SX_REG_CTRL             0x10  /* RW  SX_CTRL_* */
#define SX_REG_STATUS           0x14  /* RO  SX_STATUS_* */
#define SX_REG_IRQ_STATUS       0x18  /* RW1C SX_IRQ_* causes pending */
#define SX_REG_IRQ_MASK         0x1c  /* RW  SX_IRQ_* enabled */
#define SX_REG_TX_DOORBELL      0x20  /* WO  tx slot index: send that slot */
#define SX_REG_TX_COMPLETE      0x24  /* RO  pop one tx completion (SX_TXC_*), 0 = none */
#define SX_REG_RX_POP           0x28  /* RO  pop one full rx slot (SX_RXP_*), 0 = none */
#define SX_REG_RX_RELEASE       0x2c  /* WO  rx slot index: give it back to the SXM */
#define SX_REG_ERROR            0x30  /* RO  last SX_ERR_* seen (sticky until CTRL reset) */
#define SX_REG_PEERS_UP         0x34  /* RO  bit n = node n reachable (nodes 0..31) */
#define SX_REG_TX_MSGS          0x40  /* RO  counters: messages sent and confirmed */
#define SX_REG_RX_MSGS          0x44  /* RO  messages received into rx slots */
#define SX_REG_TX_ERRORS        0x48  /* RO  sends completed with an error */
#define SX_REG_BAD_DOORBELLS    0x4c  /* RO  doorbells rejected (bad slot/busy/disabled) */

#define SX_CTRL_ENABLE          (1u << 0)   /* start the SXM: doorbells and messages once
                                               * SX_STATUS_READY is set */
#define SX_CTRL_RESET           (1u << 1)   /* write 1: reset board state (self-clearing) */

#define SX_STATUS_LINK_UP       (1u << 0)   /* connected to the ring */
#define SX_STATUS_READY         (1u << 1)   /* enabled and started (start-us after ENABLE) */

#define SX_IRQ_RX               (1u << 0)   /* a message is in an rx slot */
#define SX_IRQ_TXDONE           (1u << 1)   /* a tx completion is queued */
#define SX_IRQ_ERROR            (1u << 2)   /* a doorbell was rejected; see SX_REG_ERROR */
#define SX_IRQ_LINK             (1u << 3)   /* SX_REG_PEERS_UP changed */

/* SX_REG_TX_COMPLETE value: valid bit, slot, status */
#define SX_TXC_VALID            (1u << 31)
#define SX_TXC_SLOT(v)          ((v) & 0xff)
#define SX_TXC_STATUS(v)        (((v) >> 8) & 0xff)   /* SX_ERR_*; SX_ERR_NONE = confirmed */

/* SX_REG_RX_POP value: valid bit, slot */
#define SX_RXP_VALID            (1u << 31)
#define SX_RXP_SLOT(v)          ((v) & 0xff)

/* Error codes (tx completion status and SX_REG_ERROR) */
#define SX_ERR_NONE             0   /* delivered and confirmed by the destination */
#define SX_ERR_LENGTH           1   /* descriptor length > SX_MAX_MSG */
#define SX_ERR_DEST             2   /* destination is not a node of the ring, or self */
#define SX_ERR_LINK_DOWN        3   /* destination unreachable, or went down before confirming */
#define SX_ERR_SLOT             4   /* doorbell for a slot out of range */
#define SX_ERR_BUSY             5   /* doorbell for a slot already being sent */
#define SX_ERR_DISABLED         6   /* doorbell while SX_STATUS_READY is clear */
#define SX_ERR_RX_SLOT          7   /* RX_RELEASE of a slot that is not held by the host */

/* BAR2 message window layout */
#define SX_WINDOW_SIZE          0x20000
#define SX_TX_SLOTS             8
#define SX_RX_SLOTS             16
#define SX_DESC_SIZE            16
#define SX_TX_DESC_OFF          0x0000  /* SX_TX_SLOTS tx descriptors */
#define SX_RX_DESC_OFF          0x0100  /* SX_RX_SLOTS rx descriptors */
#define SX_TX_BUF_OFF           0x1000  /* SX_TX_SLOTS buffers of SX_MAX_MSG */
#define SX_RX_BUF_OFF           0x9000  /* SX_RX_SLOTS buffers of SX_MAX_MSG */

/*
 * Descriptor (16 bytes, little-endian u32 words).
 * tx: host writes dst, len, tag before the doorbell; the SXM reads them when
 *     the doorbell is rung and copies the buffer during its bus DMA, so the
 *     host must not touch the slot until its completion is popped.
 * rx: the SXM writes src, len, tag of the sender's descriptor before the slot
 *     appears in SX_REG_RX_POP; the host owns it until SX_REG_RX_RELEASE.
 */
#define SX_DESC_PEER            0x0   /* tx: destination node; rx: source node */
#define SX_DESC_LEN             0x4   /* bytes */
#define SX_DESC_TAG             0x8   /* opaque, carried to the receiver */
#define SX_DESC_RSVD            0xc

#define SX_TX_DESC(i)           (SX_TX_DESC_OFF + (i) * SX_DESC_SIZE)
#define SX_RX_DESC(i)           (SX_RX_DESC_OFF + (i) * SX_DESC_SIZE)
#define SX_TX_BUF(i)            (SX_TX_BUF_OFF + (i) * SX_MAX_MSG)
#define SX_RX_BUF(i)            (SX_RX_BUF_OFF + (i) * SX_MAX_MSG)

/* Frames between boards on the ring: retrolink/proto/sx.h */

#endif /* SX_REGS_H */
