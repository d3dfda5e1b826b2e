// SPDX-License-Identifier: GPL-2.0
/*
 * norma.ko IPC layer: messages to and from other nodes, over the transport (norma.h).
 *
 * Sending. A send right to a port of another node is a right to a proxy. A message to
 * it becomes a KMSG whose rights are uids (send and send-once rights leave this node
 * and become proxies, or the port itself, on the receiver; a receive right may not
 * leave: MACH_SEND_INVALID_RIGHT). Flow control is the spec's: every message asks for
 * "message accepted" (NORMA_KF_NOTIFY, with this node's sequence number) and counts in
 * the proxy's window until it comes back (norma_ipc_accepted), so at most the queue
 * limit of messages from this node wait at the port; senders beyond it block here as
 * they would at a local queue. OOL data is pinned where the sender has it and read by
 * the interface; the send returns at receive complete, so the sender cannot change the
 * data under the transfer (Mach would have made it copy-on-write).
 *
 * Receiving. The transport hands up a complete message (norma_ipc_deliver, or
 * norma_ipc_deliver_irq from its hard interrupt handler: then it waits in the inbox,
 * below, for a task to queue it) only after port_check said the port is there; its KMSG buffer becomes the message (no copy) and
 * its 16 KiB pages are split into the 4 KiB pages the receiver will map. A port that
 * died in between gets the message destroyed, and the sender told ("accepted", dead).
 *
 * The transport is never called with ipc_lock held: accepted notices are queued and
 * sent by ipc_unlock().
 */
#include <linux/completion.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "ipc.h"

#define PAGES_PER_NORMA (NORMA_PAGE_SIZE / PAGE_SIZE)

/* a message sent to a proxy and not yet accepted */
struct ipc_pending {
	struct list_head link;
	u32 seqno;
	u64 forced_by;                  /* MACH_SEND_NOTIFY forced it: the task */
	struct ipc_port *notify;        /* and the port to tell (reference) */
	u32 notify_name;
};

struct ipc_rtx {
	struct norma_tx tx;
	u32 refs;                       /* under ipc_lock: the sender, the transport */
	struct completion done;
	int status;
	struct page **pinned;
	u32 npinned;
	struct norma_kmsg *k;
	struct ipc_port *proxy;         /* reference */
	u32 seqno;
};

static u32 accept_seqno;            /* this node's, for "message accepted" */

/* ---- calls to the transport made after ipc_lock is dropped ----------------------------- */
struct ipc_deferred {
	struct list_head link;
	u16 node;
	struct norma_uid uid;
	u32 seqno;
	bool dead;
};
static LIST_HEAD(deferred);
static DEFINE_SPINLOCK(deferred_lock);
static bool deferred_off;           /* module exit: the transport is gone */

void ipc_defer_accepted(u16 node, struct norma_uid uid, u32 seqno, bool dead)
{
	struct ipc_deferred *d;

	if (deferred_off)
		return;
	/* small and rare enough to wait for: a lost notice would stall its sender */
	d = kmalloc(sizeof(*d), GFP_KERNEL | __GFP_NOFAIL);

	*d = (struct ipc_deferred){ .node = node, .uid = uid, .seqno = seqno, .dead = dead };
	spin_lock(&deferred_lock);
	list_add_tail(&d->link, &deferred);
	spin_unlock(&deferred_lock);
}

void ipc_remote_exit(void)
{
	struct ipc_deferred *d, *tmp;

	ipc_lock_held();
	deferred_off = true;
	spin_lock(&deferred_lock);
	list_for_each_entry_safe(d, tmp, &deferred, link)
		kfree(d);
	INIT_LIST_HEAD(&deferred);
	spin_unlock(&deferred_lock);
}

void ipc_run_deferred(void)
{
	struct ipc_deferred *d;

	for (;;) {
		spin_lock(&deferred_lock);
		d = list_first_entry_or_null(&deferred, struct ipc_deferred, link);
		if (d)
			list_del(&d->link);
		spin_unlock(&deferred_lock);
		if (!d)
			return;
		norma_de_accepted(d->node, d->uid, d->seqno, d->dead);
		kfree(d);
	}
}

/* ---- the window of a proxy ---------------------------------------------------------- */

static struct ipc_pending *pending_find(struct ipc_port *proxy, u32 seqno)
{
	struct ipc_pending *p;

	list_for_each_entry(p, &proxy->pending, link)
		if (p->seqno == seqno)
			return p;
	return NULL;
}

/* the message left the window: accepted (tell its notify port) or lost (do not) */
static void pending_end(struct ipc_port *proxy, struct ipc_pending *p, bool accepted)
{
	list_del(&p->link);
	proxy->inflight--;
	if (p->notify) {
		if (accepted)
			ipc_notify_accepted(p->notify, p->notify_name);
		else
			ipc_port_put(p->notify);
	}
	kfree(p);
	wake_up_all(&proxy->send_wait);
	ipc_port_put(proxy);                /* the pending message's reference */
}

bool ipc_remote_forced_by(struct ipc_port *proxy, u64 task_id)
{
	struct ipc_pending *p;

	list_for_each_entry(p, &proxy->pending, link)
		if (p->notify && p->forced_by == task_id)
			return true;
	return false;
}

void ipc_remote_port_died(struct ipc_port *proxy)
{
	struct ipc_pending *p;

	ipc_lock_held();
	while ((p = list_first_entry_or_null(&proxy->pending, struct ipc_pending, link)))
		pending_end(proxy, p, false);
}

/* ---- sending ------------------------------------------------------------------------ */

static void rtx_free(struct ipc_rtx *rt)
{
	ipc_lock_held();
	if (rt->npinned)
		unpin_user_pages(rt->pinned, rt->npinned);
	kvfree(rt->pinned);
	kvfree(rt->tx.segs);
	kfree(rt->k);
	if (rt->proxy)
		ipc_port_put(rt->proxy);
	kfree(rt);
}

void ipc_remote_release(struct ipc_rtx *rt)
{
	mutex_lock(&ipc_lock);
	if (!--rt->refs)
		rtx_free(rt);
	ipc_unlock();
}

struct ipc_rtx *ipc_remote_pin(struct ipc_send *s, mach_msg_return_t *mr)
{
	struct ipc_rtx *rt = kzalloc(sizeof(*rt), GFP_KERNEL);
	u32 i, total = 0, nsegs = 0;

	*mr = MACH_SEND_NO_BUFFER;
	if (!rt)
		return NULL;
	rt->refs = 1;
	init_completion(&rt->done);
	*mr = MACH_MSG_SUCCESS;
	for (i = 0; i < s->ndesc; i++) {
		const mach_msg_ool_descriptor_t *d = &s->descs[i].out_of_line;

		if (d->type == MACH_MSG_OOL_DESCRIPTOR && d->size)
			total += ((d->address + d->size - 1) >> PAGE_SHIFT) -
				 (d->address >> PAGE_SHIFT) + 1;
	}
	if (!total)
		return rt;
	rt->pinned = kvcalloc(total, sizeof(*rt->pinned), GFP_KERNEL);
	/* a 4 KiB page is at most two pieces: it may straddle a 16 KiB page of the KMSG */
	rt->tx.segs = kvcalloc(2 * total, sizeof(*rt->tx.segs), GFP_KERNEL);
	if (!rt->pinned || !rt->tx.segs) {
		*mr = MACH_SEND_NO_BUFFER;
		return rt;
	}
	for (i = 0; i < s->ndesc; i++) {
		const mach_msg_ool_descriptor_t *d = &s->descs[i].out_of_line;
		const struct norma_desc *nd = &kmsg_descs(s->kmsg->k)[i];
		u32 n, first = rt->npinned, off;
		int got;

		if (d->type != MACH_MSG_OOL_DESCRIPTOR || !d->size)
			continue;
		n = ((d->address + d->size - 1) >> PAGE_SHIFT) - (d->address >> PAGE_SHIFT) + 1;
		got = pin_user_pages_fast(d->address & PAGE_MASK, n, 0, rt->pinned + first);
		if (got > 0)
			rt->npinned += got;
		if (got != n) {
			*mr = MACH_SEND_INVALID_MEMORY;
			return rt;
		}
		for (off = 0; off < d->size; ) {
			u64 addr = d->address + off;
			u32 in_page = offset_in_page(addr);
			u32 len = min3((u32)(PAGE_SIZE - in_page), d->size - off,
				       NORMA_PAGE_SIZE - off % NORMA_PAGE_SIZE);
			struct page *pg = rt->pinned[first + (addr >> PAGE_SHIFT) -
						     (d->address >> PAGE_SHIFT)];

			rt->tx.segs[nsegs++] = (struct norma_seg){
				.phys = page_to_phys(pg) + in_page,
				.page = nd->first_page + off / NORMA_PAGE_SIZE,
				.offset = off % NORMA_PAGE_SIZE,
				.len = len,
			};
			off += len;
		}
	}
	rt->tx.nsegs = nsegs;
	return rt;
}

static void rtx_done(struct norma_tx *tx, int status)
{
	struct ipc_rtx *rt = container_of(tx, struct ipc_rtx, tx);
	struct ipc_pending *p;

	mutex_lock(&ipc_lock);
	rt->status = status;
	ipc_times.send_done_ns = ipc_stamp(NORMA_ST_SEND_DONE);
	if (status) {
		/* not delivered: no "accepted" will come for it */
		p = pending_find(rt->proxy, rt->seqno);
		if (p)
			pending_end(rt->proxy, p, false);
		if (status == -ENOENT)
			ipc_port_destroy(rt->proxy);
	}
	complete_all(&rt->done);
	if (!--rt->refs)
		rtx_free(rt);
	ipc_unlock();
}

void ipc_remote_queue(struct ipc_rtx *rt, struct ipc_send *s)
{
	struct ipc_kmsg *kmsg = s->kmsg;
	struct norma_kmsg *k = kmsg->k;
	struct ipc_pending *p;

	ipc_lock_held();
	rt->proxy = kmsg->dest;
	ipc_port_get(rt->proxy);
	p = kzalloc(sizeof(*p), GFP_KERNEL | __GFP_NOFAIL);
	p->seqno = rt->seqno = k->seqno = ++accept_seqno;
	p->notify = kmsg->notify;
	p->notify_name = kmsg->notify_name;
	p->forced_by = kmsg->forced_by;
	kmsg->notify = NULL;
	list_add_tail(&p->link, &rt->proxy->pending);
	ipc_port_get(rt->proxy);
	rt->proxy->inflight++;
	k->flags |= NORMA_KF_NOTIFY;

	/* the rights are uids in the KMSG now; here they are gone */
	ipc_kmsg_release_rights(kmsg);
	rt->k = k;
	kmsg->k = NULL;
	ipc_kmsg_free(kmsg);
	s->kmsg = NULL;
	rt->tx.dest_node = rt->proxy->uid.node;
	rt->tx.kmsg = k;
	rt->tx.done = rtx_done;
	rt->tx.owner = rt;
}

mach_msg_return_t ipc_remote_go(struct ipc_rtx *rt)
{
	struct ipc_pending *p;
	int ret;

	mutex_lock(&ipc_lock);
	rt->refs++;                         /* the transport's, until done() */
	ipc_unlock();
	ret = norma_de_send(&rt->tx);
	if (ret) {
		mutex_lock(&ipc_lock);
		rt->refs--;
		p = pending_find(rt->proxy, rt->seqno);
		if (p)
			pending_end(rt->proxy, p, false);
		ipc_unlock();
		return MACH_SEND_INVALID_DEST;
	}
	if (!rt->k->ool_pages)
		return MACH_MSG_SUCCESS;    /* the KMSG is the kernel's: nothing to wait for */
	if (wait_for_completion_interruptible(&rt->done)) {
		if (!completion_done(&rt->done))
			norma_de_cancel(&rt->tx);
		return MACH_SEND_INTERRUPTED;
	}
	return rt->status ? MACH_SEND_INVALID_DEST : MACH_MSG_SUCCESS;
}

/* ---- upcalls from the transport (norma.h) ------------------------------------------- */

int norma_ipc_port_check(struct norma_uid uid)
{
	int ret;

	mutex_lock(&ipc_lock);
	ret = ipc_port_lookup_local(uid) ? 0 : -ENOENT;
	ipc_unlock();
	return ret;
}

void norma_ipc_accepted(struct norma_uid uid, u32 seqno, bool dead)
{
	struct ipc_port *proxy;
	struct ipc_pending *p;

	mutex_lock(&ipc_lock);
	proxy = ipc_proxy_find(uid);
	if (proxy) {
		ipc_port_get(proxy);
		p = pending_find(proxy, seqno);
		if (p)
			pending_end(proxy, p, true);
		if (dead)
			ipc_port_destroy(proxy);
		ipc_port_put(proxy);
	}
	ipc_unlock();
}

static bool wire_type_ok(u32 t, bool none_ok)
{
	return t == MACH_MSG_TYPE_PORT_SEND || t == MACH_MSG_TYPE_PORT_SEND_ONCE ||
	       (none_ok && t == 0);
}

/* a KMSG from the network: everything in it must add up before it is used */
static bool kmsg_valid(const struct norma_rx *rx)
{
	const struct norma_kmsg *k = rx->kmsg;
	u32 i, remote = MACH_MSGH_BITS_REMOTE(k->bits), local = MACH_MSGH_BITS_LOCAL(k->bits);

	if (k->ndesc > MACH_MSG_DESC_MAX || k->inline_size > MACH_MSG_SIZE_MAX ||
	    k->ool_pages > MACH_MSG_OOL_MAX / NORMA_PAGE_SIZE ||
	    k->size != sizeof(*k) + k->ndesc * sizeof(struct norma_desc) + k->inline_size ||
	    (k->bits & ~MACH_MSGH_BITS_USED) || !wire_type_ok(remote, false) ||
	    !wire_type_ok(local, true) || (k->ndesc && !(k->bits & MACH_MSGH_BITS_COMPLEX)) ||
	    (k->ool_pages && !rx->pages))
		return false;
	for (i = 0; i < k->ool_pages; i++)
		if (!rx->pages[i])
			return false;
	for (i = 0; i < k->ndesc; i++) {
		const struct norma_desc *nd = &kmsg_descs((struct norma_kmsg *)k)[i];

		if (nd->type == NORMA_DESC_PORT) {
			if (!wire_type_ok(nd->disposition, true))
				return false;
		} else if (nd->type != NORMA_DESC_OOL || nd->size > MACH_MSG_OOL_MAX ||
			   nd->first_page + DIV_ROUND_UP(nd->size, NORMA_PAGE_SIZE) > k->ool_pages) {
			return false;
		}
	}
	return true;
}

/* a right arriving from the network: the port here (or its proxy), counted */
static struct ipc_port *right_arrives(struct norma_uid uid, u32 wtype)
{
	struct ipc_port *port;

	if (!wtype)
		return NULL;
	port = ipc_port_from_uid(uid);      /* NULL: dead, it arrives as MACH_PORT_DEAD */
	if (port && wtype == MACH_MSG_TYPE_PORT_SEND)
		port->srights++;
	else if (port)
		port->sorights++;
	return port;
}

static void deliver_one(struct norma_rx *rx)
{
	struct norma_kmsg *k = rx->kmsg;
	struct ipc_kmsg *kmsg;
	struct ipc_port *dest;
	u32 i, j;

	NORMA_STEP_MARK(NORMA_ST_RCV_ARRIVED);
	if (!k) {
		norma_rx_free(rx);
		return;
	}
	if (!kmsg_valid(rx)) {
		pr_warn_ratelimited("norma: a malformed message from node %u: dropped\n",
				    k->src_node);
		if (k->flags & NORMA_KF_NOTIFY)
			norma_de_accepted(k->src_node, k->dest, k->seqno, true);
		norma_rx_free(rx);
		return;
	}
	kmsg = kzalloc(sizeof(*kmsg), GFP_KERNEL);
	if (kmsg && k->ndesc)
		kmsg->rights = kcalloc(k->ndesc, sizeof(*kmsg->rights), GFP_KERNEL);
	if (kmsg && k->ool_pages)
		kmsg->pages = kvcalloc(k->ool_pages * PAGES_PER_NORMA, sizeof(*kmsg->pages),
				       GFP_KERNEL);
	if (!kmsg || (k->ndesc && !kmsg->rights) || (k->ool_pages && !kmsg->pages)) {
		/* the transport reserved everything first; this is only the bookkeeping */
		pr_warn_ratelimited("norma: no memory for a message from node %u: dropped\n",
				    k->src_node);
		ipc_kmsg_free(kmsg);
		if (k->flags & NORMA_KF_NOTIFY)
			norma_de_accepted(k->src_node, k->dest, k->seqno, true);
		norma_rx_free(rx);
		return;
	}
	INIT_LIST_HEAD(&kmsg->forced_link);
	/* the 16 KiB pages become the 4 KiB pages the receiver maps; past each region's
	 * data they are cleared (what the interface did not write is old memory) */
	kmsg->npages = k->ool_pages * PAGES_PER_NORMA;
	for (i = 0; i < k->ool_pages; i++) {
		split_page(rx->pages[i], NORMA_PAGE_ORDER);
		for (j = 0; j < PAGES_PER_NORMA; j++)
			kmsg->pages[i * PAGES_PER_NORMA + j] = rx->pages[i] + j;
		rx->pages[i] = NULL;
	}
	for (i = 0; i < k->ndesc; i++) {
		const struct norma_desc *nd = &kmsg_descs(k)[i];
		u32 end = DIV_ROUND_UP(nd->size, NORMA_PAGE_SIZE) * NORMA_PAGE_SIZE, off;

		if (nd->type != NORMA_DESC_OOL)
			continue;
		for (off = nd->size; off < end; off = ALIGN(off + 1, PAGE_SIZE)) {
			struct page *pg = kmsg->pages[nd->first_page * PAGES_PER_NORMA +
						      off / PAGE_SIZE];

			memset(page_address(pg) + offset_in_page(off), 0,
			       PAGE_SIZE - offset_in_page(off));
		}
	}
	kmsg->k = k;
	kmsg->remote = true;
	kmsg->t_arrived_ns = rx->t_arrived_ns;
	rx->kmsg = NULL;
	norma_rx_free(rx);

	mutex_lock(&ipc_lock);
	dest = ipc_port_lookup_local(k->dest);
	if (!dest) {
		/* the port died after port_check: destroyed unread */
		ipc_kmsg_accepted(kmsg, true);
		ipc_unlock();
		ipc_kmsg_free(kmsg);
		return;
	}
	kmsg->dest = right_arrives(k->dest, MACH_MSGH_BITS_REMOTE(k->bits));
	kmsg->dest_type = MACH_MSGH_BITS_REMOTE(k->bits);
	kmsg->reply_type = MACH_MSGH_BITS_LOCAL(k->bits);
	kmsg->reply = right_arrives(k->reply, kmsg->reply_type);
	for (i = 0; i < k->ndesc; i++) {
		const struct norma_desc *nd = &kmsg_descs(k)[i];

		if (nd->type == NORMA_DESC_PORT)
			kmsg->rights[i] = right_arrives(nd->uid, nd->disposition);
	}
	ipc_enqueue(dest, kmsg);
	ipc_unlock();
}

/* ---- the inbox ------------------------------------------------------------------------ */

static LIST_HEAD(inbox);                /* struct norma_rx, in arrival order */
static DEFINE_SPINLOCK(inbox_lock);     /* taken in hard interrupt context too */
static DEFINE_MUTEX(inbox_mutex);       /* one drainer at a time: the order holds */

static void inbox_work_fn(struct work_struct *work)
{
	ipc_inbox_drain();
}
static DECLARE_WORK(inbox_work, inbox_work_fn);

static void inbox_add(struct norma_rx *rx)
{
	unsigned long flags;

	spin_lock_irqsave(&inbox_lock, flags);
	list_add_tail(&rx->link, &inbox);
	spin_unlock_irqrestore(&inbox_lock, flags);
}

static struct norma_rx *inbox_take(void)
{
	struct norma_rx *rx;
	unsigned long flags;

	spin_lock_irqsave(&inbox_lock, flags);
	rx = list_first_entry_or_null(&inbox, struct norma_rx, link);
	if (rx)
		list_del(&rx->link);
	spin_unlock_irqrestore(&inbox_lock, flags);
	return rx;
}

bool ipc_inbox_pending(void)
{
	return !list_empty_careful(&inbox);
}

void ipc_inbox_drain(void)
{
	struct norma_rx *rx;

	if (!ipc_inbox_pending())
		return;
	mutex_lock(&inbox_mutex);
	while ((rx = inbox_take()))
		deliver_one(rx);
	mutex_unlock(&inbox_mutex);
}

void ipc_inbox_exit(void)
{
	struct norma_rx *rx;

	cancel_work_sync(&inbox_work);
	/* no task is left: every port is dead, and no other node is told any more */
	while ((rx = inbox_take()))
		norma_rx_free(rx);
}

void norma_ipc_deliver(struct norma_rx *rx)
{
	inbox_add(rx);
	ipc_inbox_drain();
}

int norma_ipc_deliver_irq(struct norma_rx *rx)
{
	struct ipc_port *port;
	int ret = -ENOENT;

	rcu_read_lock();
	port = ipc_port_lookup_rcu(rx->kmsg->dest);
	if (port) {
		inbox_add(rx);
		/* its receiver queues it (msg_receive); with none waiting, a work item does */
		if (wq_has_sleeper(&port->rcv_wait))
			wake_up(&port->rcv_wait);
		else
			schedule_work(&inbox_work);
		ret = 0;
	}
	rcu_read_unlock();
	return ret;
}
