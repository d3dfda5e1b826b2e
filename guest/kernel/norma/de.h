/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NORMA IPC/DE, the transport of norma.ko (norma.h; docs/boards/norma.md): the state its
 * files share.
 *
 *   de_main.c   init and exit, the interface's callbacks, sending a protocol message,
 *               checking a received one, the module options
 *   de_send.c   the sender's side of a transfer: send request, permits, KMSG and OOL
 *               pages by remote DMA, page copy done, receive complete, cancel
 *   de_recv.c   the receiver's side: allocation (retried, never dropped), permits, page
 *               send permits, receive complete, delivery
 *   de_ctl.c    message accepted notices (piggy-backed or not), name lookups
 *   de_trace.c  the breakdown trace
 *
 * Context: protocol messages are handled where the interface driver hands them up, its
 * interrupt thread (process context, one message at a time, in arrival order), but for
 * short send requests, which its hard interrupt handler offers first (rx_irq); the page
 * sending, allocation retries and accept notices run in work items. One spinlock, de.lock,
 * guards the tables and every transfer's state; no upcall or done() is called under it.
 */
#ifndef DE_H
#define DE_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <linux/workqueue.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/wait_bit.h>

#include "norma.h"
#include "de_proto.h"
#include "cenju3_nic.h"

#define DE_KMSG_MAX		(4u << 20)	/* the largest KMSG: kmalloc's largest block */
#define DE_OOL_MAX		4096		/* OOL pages in one message: 64 MiB */

/* a protocol message going out: freed when the interface has sent it */
struct de_out {
	struct c3_op op;
	u32 len;
	u8 buf[DE_MSG_MAX] __aligned(8);
};

/* the sender's side of one norma_tx (tx->de) */
enum { DE_TX_REQ, DE_TX_PAGES, DE_TX_WAIT_DONE, DE_TX_FINISHED };
struct de_tx {
	struct norma_tx *tx;
	u32 xid;
	u16 peer;
	u8 state;
	bool cancelled;
	bool got_done;
	int status;
	u32 rxid;
	u32 ops_out;		/* remote DMA requests not yet done */
	u64 kmsg_addr;		/* the receiver's KMSG buffer (long KMSG) */
	bool kmsg_sent;
	u32 first, npages;	/* the permit being served */
	u64 page[NORMA_PERMIT_PAGES];
	u32 seg;		/* the next of tx->segs to send */
	struct c3_op *ops;	/* the KMSG's pieces, then one per segment */
	u32 nops;
	struct work_struct page_work;
	struct work_struct done_work;
};

/* the receiver's side of one transfer */
enum { DE_RX_ALLOC, DE_RX_PAGES, DE_RX_KMSG };
struct de_rxs {
	u32 rxid;
	u32 xid;
	u16 peer;
	u8 state;
	struct norma_uid dest;
	u32 kmsg_size, ool_pages;
	struct norma_kmsg *kmsg;	/* kmalloc: short, copied from its slot */
	struct page **pages;
	u32 permitted;			/* pages given in permits so far */
	struct list_head wait;		/* on de.alloc_wait while short of memory */
};

struct de_acc {
	struct list_head link;
	struct de_accept a;
};

struct de_peer {
	struct list_head accepts;	/* notices not yet sent */
	u32 naccepts;
};

struct de_state {
	bool up;			/* an interface, attached */
	u32 node, nodes;
	spinlock_t lock;
	struct xarray txs;		/* xid -> struct de_tx */
	struct xarray rxs;		/* rxid -> struct de_rxs */
	struct xarray lookups;		/* xid -> struct de_lookup_req */
	u32 next_xid, next_rxid, next_lookup;
	struct list_head alloc_wait;
	struct delayed_work alloc_work;
	struct delayed_work accept_work;
	struct de_peer *peers;
	struct workqueue_struct *wq;		/* the transport's shared worker */
	struct workqueue_struct *page_wq;	/* norma_page_sender: the dedicated worker */
	struct hrtimer accept_timer;	/* piggyback_accept: the longest wait */
	atomic_t msgs_out;		/* protocol messages the interface has not sent yet */
	bool held;			/* a message left in its slot for want of memory */
	/* counters: /sys/kernel/debug/norma_de (docs/boards/norma.md) */
	u64 delivered_irq;		/* of delivered: in the hard interrupt handler */
	u64 sends, delivered, cancels, cancels_rx, bad_msgs, alloc_retries, piggybacked, accepts_tx, accepts_rx;
	struct dentry *debugfs, *debugfs_trace;
};
extern struct de_state de;

/* module parameters (de_main.c) */
extern unsigned int de_alloc_retry_ms, de_accept_delay_us, de_fail_allocs;

/* de_main.c */
struct de_out *de_out_alloc(gfp_t gfp, u8 type, u32 xid, u32 rxid, u32 body);
int de_out_send(u16 peer, struct de_out *out);
void de_bad(u16 peer, const char *what, u32 a, u32 b);

/* de_send.c */
void de_send_down(void);
void de_send_permit_rx(u16 peer, const struct de_permit *p, u32 len);
void de_send_done_rx(u16 peer, const struct de_status *s);
void de_send_exit(void);

/* de_recv.c */
int de_recv_req(struct c3_rx *rx, const struct de_send_req *r, u32 len);
bool de_recv_req_irq(struct c3_rx *rx, const struct de_send_req *r);
void de_recv_pages_rx(u16 peer, const struct de_page_done *d);
void de_recv_kmsg_rx(u16 peer, u32 tag);
void de_recv_cancel_rx(u16 peer, u32 xid);
void de_recv_alloc_work(struct work_struct *w);
void de_recv_exit(void);

/* de_ctl.c */
u32 de_accepts_take(u16 peer, struct de_accept *a, u32 room);
void de_accepts_rx(u16 peer, const struct de_accept *a, u32 n);
void de_accept_work(struct work_struct *w);
void de_lookup_rx(u16 peer, const struct de_lookup *l);
void de_lookup_reply_rx(u16 peer, const struct de_status *s);
void de_ctl_down(void);
void de_ctl_init(void);
void de_ctl_exit(void);

/* de_trace.c */
void de_trace(u8 step, u16 src, u32 xid, u64 t_ns);
struct dentry *de_trace_debugfs(void);
static inline u64 de_now(void)
{
	return READ_ONCE(de.up) ? c3_nic_now() : ktime_get_ns();
}
/* a step of the trace, marked for the instruction profile too (norma.h) */
#define DE_STEP(step, src, xid, t_ns)					\
	do {								\
		NORMA_STEP_MARK(step);					\
		de_trace((step), (src), (xid), (t_ns));			\
	} while (0)
#define DE_TRACE(step, src, xid)	DE_STEP((step), (src), (xid), 0)

#endif /* DE_H */
