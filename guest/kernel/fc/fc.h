/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PUMA-III Fibre Channel adapter driver (retrolink's model: qemu/fc/; registers:
 * retrolink/regs/fc-regs.h; docs/boards/fc-driver.md): the state its files share.
 *
 *   fc_main.c  the adapter's attach and detach, the interrupt, the driver's lifetime,
 *              sysfs, the module
 *   fc_pci.c   the PCI card's probe and remove (x86 nodes)
 *   fc_sbus.c  the SBus card's probe and remove (SPARCstation nodes: an OF platform
 *              device, the node its FCode PROM makes)
 *   fc_chan.c  DVMA tables and channel configuration (both channels)
 *   fc_net.c   IP over FC on channel 0: the net_device
 *   fc_user.c  /dev/fcN: channel 1 for one process (raw protocol, Fast Messages)
 *
 * Every register access crosses the modelled SBus as programmed I/O and costs about
 * 200 ns of the guest's time, so the hot paths read no register they can do without:
 * the receive rings are read in memory, register values the driver wrote are cached.
 *
 * The two cards differ in byte order (fc-regs.h): the PCI card's registers and memory
 * structures are little-endian, the SBus card's big-endian. Every register access and
 * every DVMA table entry or receive slot word goes through the accessors below, which
 * know which card they serve: the driver is right on either CPU with either card.
 */
#ifndef FC_DRV_H
#define FC_DRV_H

#include <linux/types.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/srcu.h>
#include <linux/miscdevice.h>
#include <linux/device.h>

#include "retrolink/regs/fc-regs.h"

#define FC_DRV_NAME	"fc"

/* a channel's DVMA table: FC_DVMA_PAGE pages of host memory the adapter may reach */
struct fc_dvma_table {
	u64 *entries;			/* in the card's byte order (fc_dvma_map) */
	dma_addr_t dma;
	u32 pages;
	bool big_endian;		/* the card's */
};

struct fc_net;
struct fc_user;

struct fc_dev {
	/* the board (probe to remove) and each open file of /dev/fcN hold one */
	struct kref ref;
	/*
	 * Read side around every user call that reaches the adapter or maps its page;
	 * remove waits for them once 'dead' is set (as the SX driver: SRCU readers never
	 * wait, so a call that faults on user memory cannot deadlock against remove).
	 */
	struct srcu_struct srcu;
	bool dead;			/* removed: every user call fails with ENODEV */
	struct device *dev;		/* the card (PCI or platform device), referenced
					   until fc_free: DMA memory of files still open
					   after remove is freed against it */
	bool big_endian;		/* the SBus card: registers and memory big-endian */
	int irq;
	void __iomem *ctrl;		/* BAR0, the control page */
	void __iomem *chan[FC_CHANNELS];	/* BAR2, each channel's page */
	resource_size_t user_page_phys;	/* channel FC_CH_USER's page, for mmap */

	spinlock_t irq_lock;		/* irq_mask and the FC_REG_IRQ_MASK writes */
	u32 irq_mask;			/* what FC_REG_IRQ_MASK holds */

	u32 node, nodes;
	u8 mac[6];
	int id;				/* N of /dev/fcN */
	char name[16];
	struct miscdevice misc;

	struct fc_net *net;		/* channel 0 */
	struct mutex user_lock;		/* user, and each user's 'revoked' */
	struct fc_user *user;		/* channel 1's one process, or NULL */

	u64 irqs;
};

/* A register of either region, in the card's byte order (ordered as readl/writel). */
static inline u32 fc_readl(struct fc_dev *fc, const void __iomem *addr)
{
	return fc->big_endian ? ioread32be(addr) : readl(addr);
}

static inline void fc_writel(struct fc_dev *fc, u32 val, void __iomem *addr)
{
	if (fc->big_endian)
		iowrite32be(val, addr);
	else
		writel(val, addr);
}

static inline u32 fc_rd(struct fc_dev *fc, unsigned int reg)
{
	return fc_readl(fc, fc->ctrl + reg);
}

static inline void fc_wr(struct fc_dev *fc, unsigned int reg, u32 val)
{
	fc_writel(fc, val, fc->ctrl + reg);
}

static inline u32 fc_ch_rd(struct fc_dev *fc, int c, unsigned int reg)
{
	return fc_readl(fc, fc->ctrl + FC_CH_REG(c, reg));
}

static inline void fc_ch_wr(struct fc_dev *fc, int c, unsigned int reg, u32 val)
{
	fc_writel(fc, val, fc->ctrl + FC_CH_REG(c, reg));
}

/* A 32-bit word the adapter wrote into host memory (a receive slot's), as a value. */
static inline u32 fc_mem32(bool big_endian, u32 word)
{
	return big_endian ? be32_to_cpu((__force __be32)word) :
			    le32_to_cpu((__force __le32)word);
}

/* A 64-bit value as the adapter reads it from host memory (a DVMA table entry). */
static inline u64 fc_to_mem64(bool big_endian, u64 val)
{
	return big_endian ? (__force u64)cpu_to_be64(val) : (__force u64)cpu_to_le64(val);
}

/* fc_main.c: a card's probe makes its fc_dev (fc_alloc), maps it (ctrl, chan,
 * user_page_phys, irq) and attaches it; its remove detaches it and drops the ref */
struct fc_dev *fc_alloc(struct device *dev, bool big_endian);
int fc_attach(struct fc_dev *fc);
void fc_detach(struct fc_dev *fc);
void fc_irq_enable(struct fc_dev *fc, u32 causes);
void fc_irq_disable(struct fc_dev *fc, u32 causes);
void fc_get(struct fc_dev *fc);
void fc_put(struct fc_dev *fc);

/* fc_chan.c */
int fc_dvma_table_alloc(struct fc_dev *fc, struct fc_dvma_table *t, u32 pages);
void fc_dvma_table_free(struct fc_dev *fc, struct fc_dvma_table *t);
void fc_dvma_map(struct fc_dvma_table *t, u32 first, dma_addr_t dma, u32 pages,
		 bool writable);
void fc_dvma_unmap(struct fc_dvma_table *t, u32 first, u32 pages);
int fc_chan_enable(struct fc_dev *fc, int c, struct fc_dvma_table *t, u32 ring_dvma,
		   u32 slots);
void fc_chan_disable(struct fc_dev *fc, int c);
int fc_chan_wait_tx_done(struct fc_dev *fc, int c);

/* fc_pci.c, fc_sbus.c: each bus's driver, registered by the module when the kernel
 * has the bus */
#if IS_ENABLED(CONFIG_PCI)
int fc_pci_register(void);
void fc_pci_unregister(void);
#else
static inline int fc_pci_register(void) { return 0; }
static inline void fc_pci_unregister(void) { }
#endif
#if IS_ENABLED(CONFIG_SBUS)
int fc_sbus_register(void);
void fc_sbus_unregister(void);
#else
static inline int fc_sbus_register(void) { return 0; }
static inline void fc_sbus_unregister(void) { }
#endif

/* fc_net.c */
int fc_net_probe(struct fc_dev *fc);
void fc_net_remove(struct fc_dev *fc);
void fc_net_irq(struct fc_dev *fc, u32 cause);
void fc_net_link(struct fc_dev *fc);

/* fc_user.c */
extern const struct file_operations fc_user_fops;
void fc_user_revoke(struct fc_dev *fc);

#endif /* FC_DRV_H */
