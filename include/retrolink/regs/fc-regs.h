/*
 * PUMA-III Fibre Channel adapter: the register layout shared by the QEMU device
 * model (qemu/fc/), the Linux driver (guest/kernel/fc/) and the user libraries
 * (guest/lib/fc/). Plain #defines only, so all of them can include it.
 * docs/boards/fc.md describes the behaviour and the timing model.
 *
 * Two cards, one register layout:
 * PCI (retrolink-fc, the x86 nodes): vendor 0x10cf (Fujitsu), device 0x4643 ("FC"),
 *   class 0x0280 (network). Interrupts: MSI, one vector. LITTLE-ENDIAN: the registers
 *   as the bus carries them, and every structure the adapter reads or writes in host
 *   memory (DVMA table entries, receive slot headers, the PIO buffer's words).
 * SBus (retrolink-fc-sbus, the SPARCstation 5 nodes): an FCode PROM at slot offset 0
 *   (node name FC_SBUS_NAME), BAR0 at FC_SBUS_CTRL_OFFSET and BAR2 at
 *   FC_SBUS_CHAN_OFFSET of the slot, one interrupt at SBus level FC_SBUS_LEVEL; DMA
 *   addresses are DVMA addresses of the sun4m IOMMU. BIG-ENDIAN: the registers and
 *   every structure in host memory, as above. A driver goes through accessors that
 *   know which card it has.
 * Either way the cause of an interrupt is in FC_REG_IRQ_STATUS.
 *
 * BAR0, the control page (4 KiB, the driver's only): identity, enable, interrupts,
 *   and per channel its DVMA table and receive ring.
 * BAR2, the channel pages (FC_CHANNELS x 4 KiB): one page per channel, which is
 *   all a channel's user needs to send and to give receive slots back. The driver
 *   keeps channel 0 (IP over FC, the netdev) and maps channel 1's page into the one
 *   process that opens the user device (the raw protocol and Fast Messages).
 *
 * Every access to either BAR crosses the SBus as programmed I/O and costs its bytes
 * at the 'pio-rate' in the guest's virtual time (the vCPU is held until the bus
 * transfer ends). Registers take aligned 32-bit accesses only; the PIO buffer takes
 * aligned 32- and 64-bit stores. Any other access reads 0, writes nothing, has no
 * side effect and is logged as a guest error.
 *
 * DMA: the adapter, like Sun's DVMA, addresses host memory only through a channel's
 * DVMA table: DVMA address A is byte (A % FC_DVMA_PAGE) of the page in entry
 * A / FC_DVMA_PAGE. A request whose range is not wholly inside valid entries fails
 * with FC_ERR_WINDOW before any memory is touched. The driver writes the tables;
 * a channel's user can only name DVMA addresses.
 */
#ifndef FC_REGS_H
#define FC_REGS_H

#define FC_PCI_VENDOR_ID        0x10cf
#define FC_PCI_DEVICE_ID        0x4643

/* the SBus card: its FCode PROM's node name, its regions in the slot, its level */
#define FC_SBUS_NAME            "PUMA,fc"
#define FC_SBUS_CTRL_OFFSET     0x10000
#define FC_SBUS_CHAN_OFFSET     0x30000
#define FC_SBUS_LEVEL           4

#define FC_ID_VALUE             0x46434133  /* "FCA3" */
#define FC_CHANNELS             2
#define FC_CH_IP                0           /* the driver's: IP over FC */
#define FC_CH_USER              1           /* one process's: raw protocol, FM */

#define FC_MAX_PAYLOAD          2112        /* FC's largest frame payload */
#define FC_PIO_MAX              2048        /* bytes in the PIO buffer: one frame */
#define FC_MAX_SEND             (16u << 20) /* bytes in one DMA send (cut into frames) */
#define FC_DVMA_PAGE            4096
#define FC_DVMA_MAX_PAGES       4096        /* entries in a DVMA table: 16 MiB */
#define FC_RX_SLOT_SIZE         4096        /* one slot: struct fc_rx_slot + payload */
#define FC_RX_MAX_SLOTS         1024

/* ---- BAR0: the control page ---------------------------------------------- */
#define FC_CTRL_PAGE_SIZE       0x1000
#define FC_REG_ID               0x00  /* RO  FC_ID_VALUE */
#define FC_REG_VERSION          0x04  /* RO  1 */
#define FC_REG_NODE_ID          0x08  /* RO  this adapter's port (N_Port) id: 0 .. n-1 */
#define FC_REG_NUM_NODES        0x0c  /* RO  ports on its network */
#define FC_REG_CTRL             0x10  /* RW  FC_CTRL_* */
#define FC_REG_STATUS           0x14  /* RO  FC_STATUS_* */
#define FC_REG_IRQ_STATUS       0x18  /* RW1C FC_IRQ_* causes pending */
#define FC_REG_IRQ_MASK         0x1c  /* RW  FC_IRQ_* enabled */
#define FC_REG_MAC_LO           0x20  /* RO  IEEE address for IP over FC: bytes 0..3 */
#define FC_REG_MAC_HI           0x24  /* RO  bytes 4..5 in bits 0..15 */
#define FC_REG_PEERS_UP         0x28  /* RO  bit n = port n reachable (ports 0..31) */
#define FC_REG_ERROR            0x2c  /* RO  last FC_ERR_* of a refused control write */

#define FC_CTRL_ENABLE          (1u << 0)   /* the adapter is on the link */
#define FC_CTRL_RESET           (1u << 1)   /* write 1: reset everything (self-clearing) */

#define FC_STATUS_LINK_UP       (1u << 0)
#define FC_STATUS_READY         (1u << 1)   /* enabled: channels may be enabled */

/* interrupt causes: per channel c, and the link */
#define FC_IRQ_RX(c)            (1u << ((c) * 4 + 0))  /* a frame is in channel c's ring */
#define FC_IRQ_TXDONE(c)        (1u << ((c) * 4 + 1))  /* channel c's DMA send finished */
#define FC_IRQ_ERROR(c)         (1u << ((c) * 4 + 2))  /* a send of channel c was refused */
#define FC_IRQ_LINK             (1u << 16)             /* FC_REG_PEERS_UP changed */

/* Per channel c: written only while the channel is disabled (else refused with
 * FC_ERR_CHANNEL_ON, logged). Disabling a channel aborts its DMA at once: when the
 * write returns, the adapter no longer touches the channel's memory. */
#define FC_CH_REG(c, r)         (0x100 + (c) * 0x40 + (r))
#define FC_CH_CTRL              0x00  /* RW  FC_CH_ENABLE */
#define FC_CH_STATUS            0x04  /* RO  FC_CHS_* */
#define FC_CH_DVMA_LO           0x08  /* RW  bus address of the DVMA table (8-byte aligned) */
#define FC_CH_DVMA_HI           0x0c
#define FC_CH_DVMA_PAGES        0x10  /* RW  entries in the table (<= FC_DVMA_MAX_PAGES) */
#define FC_CH_RX_RING           0x14  /* RW  DVMA address of the receive ring (page aligned) */
#define FC_CH_RX_SLOTS          0x18  /* RW  slots in the ring (1 .. FC_RX_MAX_SLOTS) */
#define FC_CH_TX_FRAMES         0x20  /* RO  counters: frames sent */
#define FC_CH_RX_FRAMES         0x24  /* RO  frames written into the ring */
#define FC_CH_RX_DROPS          0x28  /* RO  frames dropped: no free slot */
#define FC_CH_ERRORS            0x2c  /* RO  sends refused (FC_ERR_*) */

#define FC_CH_ENABLE            (1u << 0)
#define FC_CHS_ENABLED          (1u << 0)
#define FC_CHS_IDLE             (1u << 1)   /* no DMA of this channel under way or queued */

/*
 * DVMA table entry: 64 bits, little-endian, in host memory.
 * Bits 63..12: the bus address of the page; FC_DVMA_VALID: the adapter may read it;
 * FC_DVMA_WRITE: it may also write it (receive rings).
 */
#define FC_DVMA_VALID           (1ull << 0)
#define FC_DVMA_WRITE           (1ull << 1)
#define FC_DVMA_ADDR_MASK       (~0xfffull)

/* ---- BAR2: channel c's page at c * FC_CHAN_PAGE_SIZE ------------------------ */
#define FC_CHAN_PAGE_SIZE       0x1000
#define FC_U_NODE_ID            0x00  /* RO  = FC_REG_NODE_ID */
#define FC_U_NUM_NODES          0x04  /* RO  = FC_REG_NUM_NODES */
#define FC_U_TX_ADDR            0x10  /* RW  DMA send: DVMA address of the data */
#define FC_U_TX_LEN             0x14  /* RW  bytes (1 .. FC_MAX_SEND) */
#define FC_U_TX_DEST            0x18  /* RW  destination port */
#define FC_U_TX_TAG             0x1c  /* RW  opaque, carried in every frame of the send */
#define FC_U_TX_GO              0x20  /* WO  start the DMA send (value ignored) */
#define FC_U_TX_BUSY            0x24  /* RO  1 while a DMA send is reading host memory
                                         ("DMA in progress"); the next may start at 0 */
#define FC_U_TX_STATUS          0x28  /* RO  FC_ERR_* of the last TX_GO or PIO_SEND */
#define FC_U_TX_DONE            0x2c  /* RO  DMA sends finished so far (wraps) */
#define FC_U_PIO_SEND           0x30  /* WO  send the PIO buffer: FC_PIO_SEND_* below */
#define FC_U_PIO_TAG            0x34  /* RW  tag of the next PIO send */
#define FC_U_TXQ_FREE           0x38  /* RO  frames the adapter's transmit queue can take */
#define FC_U_RX_RELEASE         0x40  /* WO  n: give the next n slots of the ring back */
#define FC_U_RX_DROPS           0x44  /* RO  = FC_CH_RX_DROPS */
#define FC_U_PIO_BUF            0x800 /* WO  FC_PIO_MAX bytes: the payload of a PIO send */

/* FC_U_PIO_SEND value: payload length (0 .. FC_PIO_MAX) and destination port */
#define FC_PIO_SEND(len, dest)  (((unsigned)(len) & 0xffff) | ((unsigned)(dest) << 16))
#define FC_PIO_SEND_LEN(v)      ((v) & 0xffff)
#define FC_PIO_SEND_DEST(v)     ((v) >> 16)

/* Status of a send (FC_U_TX_STATUS) and of a refused control write (FC_REG_ERROR) */
#define FC_ERR_NONE             0   /* accepted */
#define FC_ERR_WINDOW           1   /* the DVMA range is not wholly mapped (or not writable) */
#define FC_ERR_LENGTH           2   /* length 0 or above the limit */
#define FC_ERR_DEST             3   /* not a port of the network, or this port */
#define FC_ERR_BUSY             4   /* a DMA send is in progress, or the transmit queue is full */
#define FC_ERR_DISABLED         5   /* the adapter or the channel is not enabled */
#define FC_ERR_LINK_DOWN        6   /* the destination is unreachable */
#define FC_ERR_CHANNEL_ON       7   /* channel configuration written while it is enabled */
#define FC_ERR_CONFIG           8   /* channel enabled with a bad table or ring */

/*
 * Receive ring: FC_CH_RX_SLOTS slots of FC_RX_SLOT_SIZE bytes in DVMA space, used in
 * order. The adapter writes an arriving frame into the next slot it owns: the payload
 * at FC_RX_PAYLOAD, then the header below, FC_RXS_VALID last. The reader consumes
 * slots in order, clears 'flags', and gives them back with FC_U_RX_RELEASE. A frame
 * that finds no slot the adapter owns is dropped and counted. Little-endian words.
 */
struct fc_rx_slot {
	unsigned int flags;     /* FC_RXS_VALID | type << 8 | f_ctl << 16 */
	unsigned int len;       /* payload bytes in this frame */
	unsigned int src;       /* sending port */
	unsigned int tag;       /* the send's tag */
	unsigned int offset;    /* this frame's offset in the send */
	unsigned int msg_len;   /* the whole send's length */
	unsigned int rsvd[2];
};
#define FC_RXS_VALID            (1u << 0)
#define FC_RXS_TYPE(f)          (((f) >> 8) & 0xff)
#define FC_RXS_FCTL(f)          (((f) >> 16) & 0xff)
#define FC_RX_PAYLOAD           32      /* sizeof(struct fc_rx_slot) */
_Static_assert(sizeof(struct fc_rx_slot) == FC_RX_PAYLOAD, "FC receive slot header layout");
_Static_assert(FC_RX_PAYLOAD + FC_MAX_PAYLOAD <= FC_RX_SLOT_SIZE, "a frame fits a slot");

#endif /* FC_REGS_H */
