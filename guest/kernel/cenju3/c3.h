/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cenju-3 network interface driver (retrolink's model: qemu/cenju3/; registers and
 * rings: retrolink/regs/cenju3-regs.h; docs/boards/cenju3-driver.md): the state its
 * files share.
 *
 *   c3_main.c  PCI probe and remove, the interrupt, module parameters, sysfs
 *   c3_ring.c  the request ring, the event ring, receive slots, cache control, the
 *              in-kernel API of cenju3_nic.h
 *   c3_user.c  /dev/cenju3: the root-only test interface (retrolink/uapi/cenju3.h), a
 *              client of the in-kernel API like any other
 *
 * Every register access holds the vCPU for the board's 'reg-access-ns' (an uncached
 * access across the PE's bus), so the hot paths read no register they can do without:
 * events are found by their phase bit in memory, requests' completions come as events,
 * the cache-control registers the driver wrote are remembered.
 */
#ifndef C3_DRV_H
#define C3_DRV_H

#include <linux/types.h>
#include <linux/io.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/miscdevice.h>
#include <linux/pci.h>

#include "cenju3_nic.h"

#define C3_DRV_NAME	"cenju3"

struct c3_dev {
	struct pci_dev *pdev;
	void __iomem *regs;
	u32 node, nodes, slots;

	/* the request ring (coherent DMA memory) and the requests the driver holds */
	spinlock_t req_lock;
	bool dead;			/* removed: submit fails with -ENODEV */
	struct c3_req *req;
	dma_addr_t req_dma;
	u32 req_size;			/* entries, a power of 2 */
	u32 req_tail;			/* requests posted (C3_REG_REQ_TAIL) */
	u32 req_pending;		/* posted and not yet completed */
	struct c3_op **req_ops;		/* per entry: its op while pending */
	u32 *req_idx;			/* per entry: its index while pending */
	struct list_head backlog;	/* submitted while the ring was full */
	u32 refused_idx;		/* the last request completed with an error */

	/* the event ring (coherent) and who consumes it */
	struct mutex ev_lock;		/* the consumer: the irq thread or rx_work */
	struct c3_event *evq;
	dma_addr_t evq_dma;
	u32 evq_size;
	u32 evq_head;			/* events consumed (C3_REG_EVQ_TAIL) */
	bool held;			/* a client's rx() said -EAGAIN: stop here */
	u32 ev_inval;			/* evq_head + 1: that event's slot is invalidated */
	spinlock_t ev_busy_lock;	/* ev_busy, against the hard interrupt handler */
	bool ev_busy;			/* c3_events is consuming: the handler leaves it all */
	struct work_struct rx_work;	/* c3_nic_rx_resume */

	/* the receive table (coherent) and the slot buffers it names (kmalloc, cached) */
	__le64 *rxt;
	dma_addr_t rxt_dma;
	u8 **slot_buf;			/* [peer * slots + j]; NULL for this node */

	/* cache control: the registers' last values, to write only what changes;
	 * also serialises reading the clock (NOW_LO latches NOW_HI) */
	spinlock_t cache_lock;
	u32 cache_hi, cache_len;

	/* the client (ev_lock for the callbacks' side, ev_busy_lock too for rx_irq's) */
	const struct c3_client_ops *ops;
	void *ctx;

	int irq;
	bool msi;
	u32 irq_mask;
	struct miscdevice misc;

	/* driver counters (sysfs) */
	u64 irqs, irqs_hard, events, msgs_tx, rdma_tx, msgs_rx, rx_irq, rx_kept, rx_held, rx_unclaimed;
	u64 rdma_rx, req_failed, backlogged, bad_events, rx_refused;
};

static inline u32 c3_rd(struct c3_dev *c3, unsigned int reg)
{
	return readl(c3->regs + reg);
}

static inline void c3_wr(struct c3_dev *c3, unsigned int reg, u32 val)
{
	writel(val, c3->regs + reg);
}

/* c3_main.c: module parameters */
extern unsigned int c3_param_slots, c3_param_requests, c3_param_events;

/* c3_ring.c */
int c3_rings_alloc(struct c3_dev *c3);
void c3_rings_free(struct c3_dev *c3);
void c3_rings_program(struct c3_dev *c3);
#define C3_IRQS		(C3_IRQ_EVENT | C3_IRQ_ERROR | C3_IRQ_STALL)
void c3_events(struct c3_dev *c3);
bool c3_events_irq(struct c3_dev *c3);
void c3_fail_all(struct c3_dev *c3);
void c3_cache_init(struct c3_dev *c3);
void c3_cache_op(struct c3_dev *c3, u32 op, phys_addr_t addr, size_t len);
int c3_publish(struct c3_dev *c3);
void c3_unpublish(struct c3_dev *c3);

/* c3_user.c */
extern const struct file_operations c3_user_fops;

#endif /* C3_DRV_H */
