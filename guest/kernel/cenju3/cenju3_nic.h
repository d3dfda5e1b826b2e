/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cenju3.ko's in-kernel API: what a protocol module (norma.ko's NORMA IPC/DE transport,
 * guest/kernel/norma/de_*.c) uses of the Cenju-3 network interface. The driver itself
 * is guest/kernel/cenju3/ (docs/boards/cenju3-driver.md); the interface's registers and
 * rings are retrolink/regs/cenju3-regs.h.
 *
 * One client at a time (norma.ko, or the opener of the test device /dev/cenju3):
 * c3_nic_attach() gives it the interface and its callbacks, c3_nic_detach() takes them
 * back. Without an interface c3_nic_attach() fails with -ENODEV and the client runs
 * single-node (c3_nic_node() 0, c3_nic_nodes() 1, c3_nic_now() 0).
 *
 * Every address handed to the interface is PHYSICAL (the Cenju-3 had no IOMMU between
 * its interface and memory; neither has this x86 guest): a buffer from kmalloc or
 * alloc_pages, named by virt_to_phys / page_to_phys. The interface does not snoop the
 * CPU's caches: the source of a request must be flushed before the interface reads it
 * (c3_nic_submit does it unless C3_NIC_FLUSHED says the client did), and memory the
 * interface wrote must be invalidated before the CPU reads it (c3_nic_cache_inval; the
 * driver does it for received messages). Each operation costs the board's modelled time.
 *
 * Context: every callback but rx_irq runs in process context (the driver's interrupt
 * thread), one at a time, in the order the interface posted its events; a callback must not sleep for
 * long (it holds up every other event) but may allocate with GFP_KERNEL and may call
 * c3_nic_submit (which never sleeps) and the cache operations.
 */
#ifndef CENJU3_NIC_H
#define CENJU3_NIC_H

#include <linux/types.h>
#include <linux/list.h>

#include "retrolink/regs/cenju3-regs.h"

struct c3_op;

/* op->flags */
#define C3_NIC_NOTIFY       (1u << 0)   /* RDMA: the destination's client gets rdma() */
#define C3_NIC_FLUSHED      (1u << 1)   /* the client flushed the source itself */
#define C3_NIC_DONE_IRQ     (1u << 2)   /* done() may run in the hard interrupt handler */

/*
 * One request: a message (C3_OP_MSG, 1 .. C3_MSG_MAX bytes into the destination's
 * receive slots) or a remote DMA (C3_OP_RDMA, 1 .. C3_REQ_MAX bytes to the destination's
 * physical address 'raddr'). The client owns it and the memory at 'src' until done().
 */
struct c3_op {
	u16 op;                 /* C3_OP_MSG or C3_OP_RDMA */
	u16 dest;               /* destination node: not this one */
	u32 len;
	phys_addr_t src;        /* physically contiguous */
	u64 raddr;              /* RDMA: physical address at the destination */
	u32 tag;                /* RDMA with C3_NIC_NOTIFY: handed to the destination */
	u32 flags;              /* C3_NIC_* */
	/* 0 (the last packet left the interface), -EIO (the interface refused it: see
	 * 'err'), -ENODEV (the interface went away first); process context, once; with
	 * C3_NIC_DONE_IRQ it may also be the hard interrupt handler (it must not sleep) */
	void (*done)(struct c3_op *op, int status);
	void *ctx;              /* the client's */
	/* the driver's */
	struct list_head link;
	u32 err;                /* C3_ERR_* the interface gave */
	u64 t_done_ns;          /* virtual time the interface posted its completion */
};

/* A message from a peer, in its receive slot, as rx() sees it. */
struct c3_rx {
	u16 src;                /* the sending node */
	u16 slot;               /* its receive slot (0 .. c3_nic_slots() - 1) */
	u32 len;                /* payload bytes: 1 .. C3_MSG_MAX */
	void *data;             /* the payload, invalidated: valid during rx() only, unless kept */
	u64 t_ns;               /* virtual time the interface posted it */
	void *priv;             /* the driver's */
};

struct c3_client_ops {
	/*
	 * A message: 0, or -EAGAIN to take it later (the driver then stops reading events
	 * here, the slot stays full and the interface holds back what follows, nothing is
	 * lost; c3_nic_rx_resume() offers it again). To keep the buffer without a copy,
	 * call c3_nic_rx_keep() before returning.
	 */
	int (*rx)(void *ctx, struct c3_rx *rx);
	/*
	 * Optional: a message offered first in the hard interrupt handler (when no event
	 * before it is waiting for the thread). true: taken (the slot goes back); false:
	 * rx() gets it, in the thread, with every event after it. It must not sleep nor
	 * call c3_nic_rx_keep(); it may call c3_nic_submit and the cache operations.
	 */
	bool (*rx_irq)(void *ctx, struct c3_rx *rx);
	/* a remote DMA with C3_NIC_NOTIFY from 'src' has all its bytes in this node's memory
	 * (invalidate before reading it) */
	void (*rdma)(void *ctx, u16 src, u32 tag, u32 len);
	/* the interface is going away (unbind): after this returns, submit fails with
	 * -ENODEV and no callback comes but done(-ENODEV) for what was queued */
	void (*down)(void *ctx);
};

int c3_nic_attach(const struct c3_client_ops *ops, void *ctx);
void c3_nic_detach(void *ctx);  /* the client that attached with ctx; not from a callback */

u32 c3_nic_node(void);
u32 c3_nic_nodes(void);
u32 c3_nic_slots(void);         /* receive slots per peer (module parameter 'slots') */

/* Queue a request; never sleeps (a full ring queues it in the driver, in order).
 * 0: done() will be called; -EINVAL (bad op, length, destination), -ENODEV: it won't. */
int c3_nic_submit(struct c3_op *op);

/* Keep rx's buffer: the slot gets a fresh one. Returns the payload, the client's until
 * c3_nic_rx_free(); NULL if no memory for the fresh buffer (then copy rx->data). */
void *c3_nic_rx_keep(struct c3_rx *rx);
void c3_nic_rx_free(void *data);
/* Read the events again after an rx() that returned -EAGAIN. */
void c3_nic_rx_resume(void);

/* Cache control through the board (1 .. 16 MiB a call; longer ranges are split). */
void c3_nic_cache_flush(phys_addr_t addr, size_t len);
void c3_nic_cache_inval(phys_addr_t addr, size_t len);

/* The interface's virtual time in ns (the breakdown timestamps); 0 without one. */
u64 c3_nic_now(void);

#endif /* CENJU3_NIC_H */
