/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PUMA-III Fibre Channel adapter driver (retrolink's model: qemu/fc/; registers:
 * retrolink/regs/fc-regs.h; docs/boards/fc-driver.md): the state its files share.
 *
 *   fc_main.c  PCI probe and remove, the interrupt, the driver's lifetime, sysfs
 *   fc_chan.c  DVMA tables and channel configuration (both channels)
 *   fc_net.c   IP over FC on channel 0: the net_device
 *   fc_user.c  /dev/fcN: channel 1 for one process (raw protocol, Fast Messages)
 *
 * Every register access crosses the modelled SBus as programmed I/O and costs about
 * 200 ns of the guest's time, so the hot paths read no register they can do without:
 * the receive rings are read in memory, register values the driver wrote are cached.
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
#include <linux/pci.h>

#include "retrolink/regs/fc-regs.h"

#define FC_DRV_NAME	"fc"

/* a channel's DVMA table: FC_DVMA_PAGE pages of host memory the adapter may reach */
struct fc_dvma_table {
	__le64 *entries;
	dma_addr_t dma;
	u32 pages;
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
	struct pci_dev *pdev;		/* referenced until fc_free: DMA memory of files
					   still open after remove is freed against it */
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

static inline u32 fc_rd(struct fc_dev *fc, unsigned int reg)
{
	return readl(fc->ctrl + reg);
}

static inline void fc_wr(struct fc_dev *fc, unsigned int reg, u32 val)
{
	writel(val, fc->ctrl + reg);
}

static inline u32 fc_ch_rd(struct fc_dev *fc, int c, unsigned int reg)
{
	return readl(fc->ctrl + FC_CH_REG(c, reg));
}

static inline void fc_ch_wr(struct fc_dev *fc, int c, unsigned int reg, u32 val)
{
	writel(val, fc->ctrl + FC_CH_REG(c, reg));
}

/* fc_main.c */
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

/* fc_net.c */
int fc_net_probe(struct fc_dev *fc);
void fc_net_remove(struct fc_dev *fc);
void fc_net_irq(struct fc_dev *fc, u32 cause);
void fc_net_link(struct fc_dev *fc);

/* fc_user.c */
extern const struct file_operations fc_user_fops;
void fc_user_revoke(struct fc_dev *fc);

#endif /* FC_DRV_H */
