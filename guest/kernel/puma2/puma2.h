/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PUMA-II distributed shared memory board driver (retrolink's model: qemu/puma2/;
 * registers: retrolink/regs/puma2-regs.h; docs/boards/puma2.md): the state its files
 * share.
 *
 *   puma2_main.c  PCI probe and remove, the interrupt, the driver's lifetime
 *   puma2_page.c  asking the board for pages (the command FIFO) and the answers
 *   puma2_disk.c  /dev/puma2disk: the shared RAM disk (blk-mq) and its sharing rule
 *   puma2_dsm.c   /dev/puma2: the shared space mapped into processes, and RECALLs
 *
 * Every register and board memory access crosses the modelled VME bus (about 700 ns
 * a 32-bit transaction), so the driver reads no register it can do without.
 */
#ifndef PUMA2_DRV_H
#define PUMA2_DRV_H

#include <linux/types.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/srcu.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/completion.h>
#include <linux/miscdevice.h>
#include <linux/blk-mq.h>
#include <linux/pci.h>

#include "retrolink/regs/puma2-regs.h"

#define PUMA2_DRV_NAME		"puma2"
/* the sharing record of the disk (uapi/puma2.h): page 0 of the shared space */
#define PUMA2_RECORD_PAGE	0

/* One command the driver has written: its page, and the board's answer. */
struct puma2_req {
	u32 page;
	u8 op;
	u8 status;		/* PUMA2_ST_* once done */
	bool done;
	bool abandoned;		/* its waiter left: the interrupt frees it */
	struct completion completion;
};

struct puma2_dev {
	/* the board (probe to remove), each open file and open disk hold one */
	struct kref ref;
	/* read side around every call that reaches the board; remove waits for them */
	struct srcu_struct srcu;
	bool dead;			/* removed: calls fail with ENODEV, faults SIGBUS */

	struct pci_dev *pdev;
	void __iomem *ctrl;		/* BAR0 */
	void __iomem *mem;		/* BAR1: board memory, the shared space */
	resource_size_t mem_phys;
	int id;
	char name[16];
	u32 node, nodes, space_pages;
	u32 disk_pages;			/* the disk: pages 1 .. disk_pages */
	u32 dsm_first, dsm_pages;	/* the mapped DSM */

	/* the command path (puma2_page.c): under lock, also from the interrupt */
	spinlock_t lock;
	u32 cmd_credit;			/* commands that surely fit in the FIFO */
	struct puma2_req **reqs;	/* per page: the command in flight, or NULL */
	u8 *held;			/* per page: what the board holds for us (0, READ, WRITE) */
	unsigned long *recalled;	/* per page: a RECALL to answer */
	struct work_struct recall_work;
	u32 recalls;

	/* /dev/puma2disk (puma2_disk.c) */
	struct gendisk *disk;
	struct blk_mq_tag_set tag_set;
	struct mutex disk_lock;		/* one request at a time; the sharing record */
	u32 opens_read, opens_write;	/* this node's opens of the disk */
	bool disk_gone;			/* remove has begun: no opens, out of the record */

	/* /dev/puma2 (puma2_dsm.c) */
	struct miscdevice misc;
	bool misc_registered;
	struct mutex dsm_lock;		/* mappings change under it: faults and RECALLs */
	struct list_head files;		/* open files, whose mappings remove zaps */
	wait_queue_head_t dsm_wait;	/* a page's fetch finished */
	unsigned long *fetching;	/* per DSM page: a fault is asking the board */
	u32 faults_read, faults_write;
};

static inline u32 puma2_rd(struct puma2_dev *d, u32 reg)
{
	return readl(d->ctrl + reg);
}

static inline void puma2_wr(struct puma2_dev *d, u32 reg, u32 val)
{
	writel(val, d->ctrl + reg);
}

static inline void __iomem *puma2_page_addr(struct puma2_dev *d, u32 page)
{
	return d->mem + (size_t)page * PUMA2_PAGE;
}

/* puma2_main.c */
void puma2_get(struct puma2_dev *d);
void puma2_put(struct puma2_dev *d);

/* puma2_page.c */
int puma2_page_init(struct puma2_dev *d);
void puma2_page_free(struct puma2_dev *d);
struct puma2_req *puma2_submit(struct puma2_dev *d, u32 page, u8 op);
int puma2_wait(struct puma2_dev *d, struct puma2_req *req);
int puma2_page_get(struct puma2_dev *d, u32 page, u8 op);
void puma2_page_put(struct puma2_dev *d, u32 page);
void puma2_responses(struct puma2_dev *d);
void puma2_abort_all(struct puma2_dev *d);
u8 puma2_held(struct puma2_dev *d, u32 page);

/* puma2_disk.c */
int puma2_disk_probe(struct puma2_dev *d);
void puma2_disk_forget(struct puma2_dev *d);
void puma2_disk_remove(struct puma2_dev *d);

/* puma2_dsm.c */
extern const struct file_operations puma2_dsm_fops;
void puma2_recall_work(struct work_struct *work);
void puma2_dsm_revoke(struct puma2_dev *d);

#endif /* PUMA2_DRV_H */
