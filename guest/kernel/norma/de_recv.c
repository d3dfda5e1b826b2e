// SPDX-License-Identifier: GPL-2.0
/*
 * NORMA IPC/DE, the receiver's side of a transfer (docs/boards/norma.md):
 *   (A) a send request arrives: the port is checked (dead or unknown: receive complete
 *       with -ENOENT at once, the port death answer). A short KMSG with no OOL pages is
 *       delivered at once (taken out of its receive slot) and receive complete goes
 *       back: two network messages in all.
 *   (B) otherwise everything is allocated before any data moves: the KMSG's buffer (if
 *       long) and every OOL page; short of memory, the request waits and is tried
 *       again every alloc_retry_ms, never dropped. The buffers are flushed (no dirty
 *       line may land on what the interface writes) and the first <= 8 page addresses
 *       go back in the send permit;
 *   (E) page copy done: (F) a page send permit for the next <= 8, or, all in,
 *   (I) the buffers are invalidated, receive complete goes back, and the message is
 *       delivered (norma_ipc_deliver). A long KMSG with no OOL pages is all in when its
 *       remote DMA's notification comes (tag: our rxid).
 * Everything runs in the interface driver's thread except the allocation retries (the
 * transport's worker) and the usual case of (A) and (I) together, a short KMSG with no
 * OOL pages, which the driver's hard interrupt handler offers first (de_recv_req_irq);
 * de.lock guards the waiting list and the transfers' states.
 */
#include <linux/slab.h>
#include <linux/gfp.h>
#include <linux/module.h>

#include "de.h"

unsigned int de_fail_allocs;
module_param_named(fail_allocs, de_fail_allocs, uint, 0644);
MODULE_PARM_DESC(fail_allocs,
		 "tests: the next N allocations for arriving messages fail as if memory were short");

/* ---- buffers ------------------------------------------------------------------------- */

static void de_rxs_free(struct de_rxs *s)
{
	u32 i;

	for (i = 0; s->pages && i < s->ool_pages; i++)
		if (s->pages[i])
			__free_pages(s->pages[i], NORMA_PAGE_ORDER);
	kfree(s->pages);
	kfree(s->kmsg);
	kfree(s);
}

/* Everything the message needs, or nothing (-ENOMEM). */
static int de_rxs_alloc(struct de_rxs *s)
{
	gfp_t gfp = GFP_KERNEL | __GFP_NOWARN | __GFP_NORETRY;
	u32 i;

	if (de_fail_allocs) {
		de_fail_allocs--;
		return -ENOMEM;
	}
	if (!s->kmsg) {
		s->kmsg = kmalloc(s->kmsg_size, gfp);
		if (!s->kmsg)
			goto fail;
	}
	if (s->ool_pages) {
		s->pages = kcalloc(s->ool_pages, sizeof(*s->pages), gfp);
		if (!s->pages)
			goto fail;
		/* not compound: the IPC layer maps them 4 KiB at a time */
		for (i = 0; i < s->ool_pages; i++) {
			s->pages[i] = alloc_pages(gfp, NORMA_PAGE_ORDER);
			if (!s->pages[i])
				goto fail;
		}
	}
	return 0;
fail:
	for (i = 0; s->pages && i < s->ool_pages; i++)
		if (s->pages[i])
			__free_pages(s->pages[i], NORMA_PAGE_ORDER);
	kfree(s->pages);
	s->pages = NULL;
	if (s->kmsg_size > NORMA_SHORT_MAX) {
		kfree(s->kmsg);
		s->kmsg = NULL;
	}
	return -ENOMEM;
}

/* ---- messages out ------------------------------------------------------------------------ */

static void de_reply_status(u16 peer, u32 xid, u32 rxid, int status)
{
	struct de_out *out = de_out_alloc(GFP_KERNEL | __GFP_NOFAIL, DE_RECV_DONE, xid, rxid,
					  sizeof(struct de_status));

	((struct de_status *)out->buf)->status = status;
	((struct de_status *)out->buf)->uid = NORMA_UID_NONE;
	de_out_send(peer, out);
}

/* (B) or (F): the next <= 8 pages, flushed first (and the long KMSG's buffer in (B)) */
static void de_permit(struct de_rxs *s, u8 type)
{
	struct de_out *out = de_out_alloc(GFP_KERNEL | __GFP_NOFAIL, type, s->xid, s->rxid,
					  sizeof(struct de_permit));
	struct de_permit *p = (struct de_permit *)out->buf;
	u32 i, n = min_t(u32, s->ool_pages - s->permitted, NORMA_PERMIT_PAGES);

	if (type == DE_SEND_PERMIT && s->kmsg_size > NORMA_SHORT_MAX) {
		c3_nic_cache_flush(virt_to_phys(s->kmsg), s->kmsg_size);
		p->kmsg_addr = virt_to_phys(s->kmsg);
	}
	p->first = s->permitted;
	p->npages = n;
	for (i = 0; i < n; i++) {
		struct page *pg = s->pages[s->permitted + i];

		c3_nic_cache_flush(page_to_phys(pg), NORMA_PAGE_SIZE);
		p->page[i] = page_to_phys(pg);
	}
	s->permitted += n;
	s->state = s->ool_pages ? DE_RX_PAGES : DE_RX_KMSG;
	DE_TRACE(NORMA_TR_PERMIT_TX, s->peer, s->xid);
	de_out_send(s->peer, out);
}

/* (I): all in. s is out of every table. */
static void de_complete(struct de_rxs *s)
{
	struct norma_kmsg *k = s->kmsg;
	struct norma_rx *rx;
	u32 i;

	if (s->kmsg_size > NORMA_SHORT_MAX)
		c3_nic_cache_inval(virt_to_phys(k), s->kmsg_size);
	for (i = 0; i < s->ool_pages; i++)
		c3_nic_cache_inval(page_to_phys(s->pages[i]), NORMA_PAGE_SIZE);
	/* the sender's KMSG is read now: it must say what its request said */
	if (k->size != s->kmsg_size || k->ool_pages != s->ool_pages ||
	    !norma_uid_eq(k->dest, s->dest)) {
		de_bad(s->peer, "KMSG differs from its send request", k->size, k->ool_pages);
		de_rxs_free(s);
		return;
	}
	rx = kzalloc(sizeof(*rx), GFP_KERNEL | __GFP_NOFAIL);
	rx->kmsg = k;
	rx->pages = s->pages;
	rx->t_arrived_ns = de_now();
	de_reply_status(s->peer, s->xid, s->rxid, 0);
	DE_STEP(NORMA_TR_DELIVER, s->peer, s->xid, rx->t_arrived_ns);
	de.delivered++;
	kfree(s);
	norma_ipc_deliver(rx);
}

/* ---- (A) ------------------------------------------------------------------------------------ */

/* Allocate and permit, or wait for memory (the worker tries again). */
static void de_start(struct de_rxs *s)
{
	if (de_rxs_alloc(s)) {
		de.alloc_retries++;
		spin_lock(&de.lock);
		s->state = DE_RX_ALLOC;
		list_add_tail(&s->wait, &de.alloc_wait);
		spin_unlock(&de.lock);
		queue_delayed_work(de.wq, &de.alloc_work, msecs_to_jiffies(de_alloc_retry_ms));
		return;
	}
	de_permit(s, DE_SEND_PERMIT);
}

/* the sizes and counts of a send request, and its KMSG's header if short, agree */
static bool de_req_ok(const struct de_send_req *r)
{
	const struct norma_kmsg *k = (const void *)(r + 1);

	return r->kmsg_size >= sizeof(*k) && r->kmsg_size <= DE_KMSG_MAX &&
	       r->ool_pages <= DE_OOL_MAX &&
	       (r->kmsg_size > NORMA_SHORT_MAX ||
		(k->size == r->kmsg_size && k->ool_pages == r->ool_pages &&
		 norma_uid_eq(k->dest, r->dest)));
}

/*
 * (A) and (I) at once in the interface's hard interrupt handler, for a short KMSG with
 * no OOL pages (the usual message): everything allocated atomically first, the port
 * checked and the KMSG handed to the IPC layer (norma_ipc_deliver_irq: its receiving
 * task queues it), receive complete posted. false: the thread's de_recv_req does it
 * (short of memory, a bad request it reports, OOL pages, the fail_allocs test knob).
 */
bool de_recv_req_irq(struct c3_rx *rx, const struct de_send_req *r)
{
	struct de_out *out;
	struct norma_rx *nrx;
	struct de_status *st;
	u64 t;

	if (r->kmsg_size > NORMA_SHORT_MAX || r->ool_pages || READ_ONCE(de_fail_allocs) ||
	    !de_req_ok(r))
		return false;
	out = de_out_alloc(GFP_ATOMIC, DE_RECV_DONE, r->h.xid, 0, sizeof(*st));
	nrx = kzalloc(sizeof(*nrx), GFP_ATOMIC | __GFP_NOWARN);
	if (nrx)
		nrx->kmsg = kmemdup(r + 1, r->kmsg_size, GFP_ATOMIC | __GFP_NOWARN);
	if (!out || !nrx || !nrx->kmsg) {
		kfree(out);
		if (nrx)
			kfree(nrx->kmsg);
		kfree(nrx);
		return false;
	}
	DE_STEP(NORMA_TR_REQ_RX, rx->src, r->h.xid, rx->t_ns);
	st = (struct de_status *)out->buf;
	st->uid = NORMA_UID_NONE;
	t = nrx->t_arrived_ns = de_now();
	st->status = norma_ipc_deliver_irq(nrx);
	if (st->status) {
		/* the port death answer */
		kfree(nrx->kmsg);
		kfree(nrx);
		de_out_send(rx->src, out);
		return true;
	}
	de_out_send(rx->src, out);
	DE_STEP(NORMA_TR_DELIVER, rx->src, r->h.xid, t);
	de.delivered_irq++;
	return true;
}

int de_recv_req(struct c3_rx *rx, const struct de_send_req *r, u32 body)
{
	u16 peer = rx->src;
	bool shrt = r->kmsg_size <= NORMA_SHORT_MAX;
	const struct norma_kmsg *k = (const void *)(r + 1);
	struct de_rxs *s;
	int ret;

	if (!de_req_ok(r)) {
		de_bad(peer, "send request with a bad KMSG size or page count", r->kmsg_size,
		       r->ool_pages);
		return 0;
	}
	DE_STEP(NORMA_TR_REQ_RX, peer, r->h.xid, rx->t_ns);
	ret = norma_ipc_port_check(r->dest);
	if (ret) {
		/* the port death answer: nothing is allocated, nothing moves */
		de_reply_status(peer, r->h.xid, 0, -ENOENT);
		return 0;
	}
	s = kzalloc(sizeof(*s), GFP_KERNEL | __GFP_NOWARN);
	if (!s)
		goto later;
	s->peer = peer;
	s->xid = r->h.xid;
	s->dest = r->dest;
	s->kmsg_size = r->kmsg_size;
	s->ool_pages = r->ool_pages;
	INIT_LIST_HEAD(&s->wait);
	if (shrt) {
		/*
		 * Out of the slot, which goes back to the interface at once: the IPC layer
		 * owns a KMSG as a kmalloc block of its own (it frees, queues and forwards
		 * it), which a KMSG inside a slot buffer is not. At most NORMA_SHORT_MAX
		 * bytes; long KMSGs and OOL pages land by remote DMA where they stay.
		 */
		s->kmsg = kmemdup(k, r->kmsg_size, GFP_KERNEL | __GFP_NOWARN);
		if (!s->kmsg) {
			kfree(s);
			goto later;
		}
		if (!s->ool_pages) {
			de_complete(s);
			return 0;
		}
	}
	ret = xa_alloc_cyclic(&de.rxs, &s->rxid, s, xa_limit_31b, &de.next_rxid, GFP_KERNEL);
	if (ret < 0) {
		kfree(s->kmsg);
		kfree(s);
		goto later;
	}
	de_start(s);
	return 0;
later:
	/* not even the transfer's state: leave the request in its slot (the interface holds
	 * back what follows, nothing is lost) and try again later */
	de.held = true;
	de.alloc_retries++;
	queue_delayed_work(de.wq, &de.alloc_work, msecs_to_jiffies(de_alloc_retry_ms));
	return -EAGAIN;
}

/* The worker: every waiting request tried once, in arrival order. */
void de_recv_alloc_work(struct work_struct *w)
{
	LIST_HEAD(todo);
	struct de_rxs *s, *tmp;

	if (de.held) {
		de.held = false;
		c3_nic_rx_resume();
	}
	spin_lock(&de.lock);
	list_splice_init(&de.alloc_wait, &todo);
	spin_unlock(&de.lock);
	list_for_each_entry_safe(s, tmp, &todo, wait) {
		list_del_init(&s->wait);
		de_start(s);
	}
}

/* ---- (E) and the KMSG's notification ----------------------------------------------------------- */

void de_recv_pages_rx(u16 peer, const struct de_page_done *d)
{
	struct de_rxs *s = xa_load(&de.rxs, d->h.rxid);
	u32 last_n;

	if (!s || s->peer != peer || s->xid != d->h.xid || s->state != DE_RX_PAGES) {
		de_bad(peer, "page copy done for no transfer from it", d->h.rxid, d->first);
		return;
	}
	last_n = s->permitted - round_down(s->permitted - 1, NORMA_PERMIT_PAGES);
	if (d->first != s->permitted - last_n || d->npages != last_n) {
		de_bad(peer, "page copy done out of step", d->first, d->npages);
		return;
	}
	DE_TRACE(NORMA_TR_PAGES_RX, peer, s->xid);
	if (s->permitted < s->ool_pages) {
		de_permit(s, DE_PAGE_PERMIT);
		return;
	}
	xa_erase(&de.rxs, s->rxid);
	de_complete(s);
}

void de_recv_kmsg_rx(u16 peer, u32 tag)
{
	struct de_rxs *s = xa_load(&de.rxs, tag);

	if (!s || s->peer != peer || s->state != DE_RX_KMSG) {
		de_bad(peer, "remote DMA notice for no KMSG from it", tag, 0);
		return;
	}
	DE_TRACE(NORMA_TR_PAGES_RX, peer, s->xid);
	xa_erase(&de.rxs, s->rxid);
	de_complete(s);
}

/* ---- cancel and exit ---------------------------------------------------------------------------- */

/* The sender gave up (its requests are all done, so no more data comes): forget it. */
void de_recv_cancel_rx(u16 peer, u32 xid)
{
	struct de_rxs *s, *found = NULL;
	unsigned long i;

	spin_lock(&de.lock);
	list_for_each_entry(s, &de.alloc_wait, wait) {
		if (s->peer == peer && s->xid == xid) {
			list_del_init(&s->wait);
			if (s->rxid)
				xa_erase(&de.rxs, s->rxid);
			found = s;
			break;
		}
	}
	spin_unlock(&de.lock);
	if (!found) {
		xa_for_each(&de.rxs, i, s) {
			if (s->peer == peer && s->xid == xid && s->state != DE_RX_ALLOC) {
				xa_erase(&de.rxs, i);
				found = s;
				break;
			}
		}
	}
	/* not found: it completed before the cancel crossed it, which is not an error */
	if (found) {
		de.cancels_rx++;
		de_rxs_free(found);
	}
}

void de_recv_exit(void)
{
	struct de_rxs *s, *tmp;
	unsigned long i;

	list_for_each_entry_safe(s, tmp, &de.alloc_wait, wait) {
		list_del(&s->wait);
		if (s->rxid)
			xa_erase(&de.rxs, s->rxid);
		de_rxs_free(s);
	}
	xa_for_each(&de.rxs, i, s) {
		xa_erase(&de.rxs, i);
		de_rxs_free(s);
	}
}
