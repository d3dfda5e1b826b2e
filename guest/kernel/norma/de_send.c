// SPDX-License-Identifier: GPL-2.0
/*
 * NORMA IPC/DE, the sender's side of a transfer (docs/boards/norma.md):
 *   (A) norma_de_send: a send request with the KMSG's size and OOL page count, and the
 *       KMSG itself if it is at most NORMA_SHORT_MAX bytes;
 *   (B) a send permit arrives: the page worker sends (C) a long KMSG by remote DMA to the
 *       buffer named in it (pieces of at most C3_REQ_MAX; with no OOL pages the last
 *       piece notifies the receiver), then (D) the permitted OOL pages by remote DMA,
 *       each piece flushed just before it is posted, so the flush of one overlaps the DMA
 *       of the one before; then (E) page copy done;
 *   (F) a page send permit: the next batch, as (D) and (E);
 *   (I) receive complete: tx->done(0) (or -ENOENT for a dead port) once the interface
 *       has finished every request that reads the sender's memory.
 * The receiver's interface writes the pages before it takes the page copy done that
 * follows them: the interface handles requests in order and the network keeps the
 * order of packets between two nodes (one path through the stages).
 */
#include <linux/slab.h>

#include "de.h"

/* ---- finishing --------------------------------------------------------------------- */

/* Can the transfer end? Then it leaves the table (de.lock held). Not while its page
 * work is queued (DE_TX_PAGES): that work counts its requests first, and ends it when
 * they are done. */
static bool de_tx_end(struct de_tx *d)
{
	if (d->state == DE_TX_FINISHED || d->state == DE_TX_PAGES || d->ops_out ||
	    !(d->got_done || d->cancelled || d->status == -ENODEV))
		return false;
	d->state = DE_TX_FINISHED;
	xa_erase(&de.txs, d->xid);
	return true;
}

static void de_tx_finish(struct de_tx *d)
{
	struct norma_tx *tx = d->tx;
	int status = d->got_done ? d->status : d->cancelled ? -EINTR : d->status;

	/* nothing of ours is in flight: the receiver may free what it set aside */
	if (d->cancelled && !d->got_done && READ_ONCE(de.up)) {
		struct de_out *out = de_out_alloc(GFP_KERNEL | __GFP_NOFAIL, DE_CANCEL, d->xid,
						  d->rxid, sizeof(struct de_hdr));

		de_out_send(d->peer, out);
	}
	DE_TRACE(NORMA_TR_DONE, de.node, d->xid);
	/* a norma_de_cancel racing with this reads d under the lock: done before it goes */
	spin_lock(&de.lock);
	tx->de = NULL;
	spin_unlock(&de.lock);
	kfree(d->ops);
	kfree(d);
	tx->done(tx, status);
}

static void de_tx_done_work(struct work_struct *w)
{
	de_tx_finish(container_of(w, struct de_tx, done_work));
}

/* a remote DMA request of the transfer is finished */
static void de_tx_op_done(struct c3_op *op, int status)
{
	struct de_tx *d = op->ctx;
	bool end;

	spin_lock(&de.lock);
	d->ops_out--;
	if (status && !d->got_done)
		d->status = -ENODEV;
	end = de_tx_end(d);
	spin_unlock(&de.lock);
	if (end)
		de_tx_finish(d);
}

/* ---- (A) ------------------------------------------------------------------------------ */

static int de_tx_check(const struct norma_tx *tx)
{
	const struct norma_kmsg *k = tx->kmsg;
	u32 i;

	if (!k || !tx->done || tx->dest_node >= de.nodes || tx->dest_node == de.node)
		return -EINVAL;
	if (k->size < sizeof(*k) || k->size > DE_KMSG_MAX || k->ool_pages > DE_OOL_MAX)
		return -EINVAL;
	if ((tx->nsegs && !tx->segs) || (k->ool_pages && !tx->nsegs))
		return -EINVAL;
	for (i = 0; i < tx->nsegs; i++) {
		const struct norma_seg *s = &tx->segs[i];

		if (s->page >= k->ool_pages || !s->len || s->offset >= NORMA_PAGE_SIZE ||
		    s->len > NORMA_PAGE_SIZE - s->offset || (i && s->page < s[-1].page))
			return -EINVAL;
	}
	return 0;
}

static void de_page_work(struct work_struct *w);

int norma_de_send(struct norma_tx *tx)
{
	struct norma_kmsg *k = tx->kmsg;
	struct de_send_req *r;
	struct de_out *out;
	struct de_tx *d;
	bool shrt;
	int ret;

	if (!READ_ONCE(de.up))
		return -ENODEV;
	ret = de_tx_check(tx);
	if (ret)
		return ret;
	shrt = k->size <= NORMA_SHORT_MAX;
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	d->nops = (shrt ? 0 : DIV_ROUND_UP(k->size, C3_REQ_MAX)) + tx->nsegs;
	d->ops = kcalloc(d->nops, sizeof(*d->ops), GFP_KERNEL);
	out = de_out_alloc(GFP_KERNEL, DE_SEND_REQ, 0, 0, sizeof(*r) + (shrt ? k->size : 0));
	if ((d->nops && !d->ops) || !out)
		goto nomem;
	d->tx = tx;
	d->peer = tx->dest_node;
	d->state = DE_TX_REQ;
	INIT_WORK(&d->page_work, de_page_work);
	INIT_WORK(&d->done_work, de_tx_done_work);
	tx->de = d;
	tx->pages_sent = 0;
	ret = xa_alloc_cyclic(&de.txs, &d->xid, d, xa_limit_31b, &de.next_xid, GFP_KERNEL);
	if (ret < 0)
		goto nomem;
	r = (struct de_send_req *)out->buf;
	r->h.xid = d->xid;
	r->dest = k->dest;
	r->kmsg_size = k->size;
	r->ool_pages = k->ool_pages;
	if (shrt)
		memcpy(r + 1, k, k->size);
	DE_TRACE(NORMA_TR_SEND, de.node, d->xid);
	de.sends++;
	ret = de_out_send(d->peer, out);
	if (ret) {
		xa_erase(&de.txs, d->xid);
		tx->de = NULL;
		kfree(d->ops);
		kfree(d);
		return -ENODEV;
	}
	return 0;
nomem:
	tx->de = NULL;
	kfree(out);
	kfree(d->ops);
	kfree(d);
	return -ENOMEM;
}

/* ---- (B) and (F) -------------------------------------------------------------------------- */

void de_send_permit_rx(u16 peer, const struct de_permit *p, u32 len)
{
	bool first = p->h.type == DE_SEND_PERMIT;
	struct de_tx *d;
	u32 i, left;

	spin_lock(&de.lock);
	d = xa_load(&de.txs, p->h.xid);
	if (!d || d->peer != peer || d->cancelled || d->state == DE_TX_FINISHED) {
		spin_unlock(&de.lock);
		/* a cancelled transfer's permit crossed its cancel: not an error */
		if (!d || !d->cancelled)
			de_bad(peer, "permit for no transfer of ours to it", p->h.xid, p->h.type);
		return;
	}
	left = d->tx->kmsg->ool_pages - d->tx->pages_sent;
	if ((first ? d->state != DE_TX_REQ : d->state != DE_TX_WAIT_DONE) ||
	    p->first != d->tx->pages_sent || p->npages != min_t(u32, left, NORMA_PERMIT_PAGES) ||
	    (!first && !p->npages) ||
	    (first && !p->kmsg_addr != (d->tx->kmsg->size <= NORMA_SHORT_MAX)))
		goto bad;
	for (i = 0; i < p->npages; i++)
		if (!p->page[i] || !IS_ALIGNED(p->page[i], NORMA_PAGE_SIZE))
			goto bad;
	d->state = DE_TX_PAGES;
	d->rxid = p->h.rxid;
	if (first)
		d->kmsg_addr = p->kmsg_addr;
	d->first = p->first;
	d->npages = p->npages;
	memcpy(d->page, p->page, sizeof(d->page));
	/* d stays until its page work has run (de_tx_end) */
	spin_unlock(&de.lock);
	DE_TRACE(NORMA_TR_PERMIT_RX, de.node, p->h.xid);
	queue_work(de.page_wq ?: de.wq, &d->page_work);
	return;
bad:
	spin_unlock(&de.lock);
	de_bad(peer, "permit out of step with its transfer", p->h.xid, p->first);
}

/* Post one remote DMA of the transfer (counted in ops_out already). */
static void de_rdma(struct de_tx *d, struct c3_op *op)
{
	if (c3_nic_submit(op))
		de_tx_op_done(op, -ENODEV);
}

static void de_page_work(struct work_struct *w)
{
	struct de_tx *d = container_of(w, struct de_tx, page_work);
	struct norma_tx *tx = d->tx;
	const struct norma_kmsg *k = tx->kmsg;
	u32 npieces = k->size <= NORMA_SHORT_MAX ? 0 : DIV_ROUND_UP(k->size, C3_REQ_MAX);
	u32 xid = d->xid, rxid = d->rxid, first = d->first, n = d->npages;
	u32 seg0 = d->seg, seg_end = d->seg, i, count;
	bool kmsg = d->kmsg_addr && !d->kmsg_sent, end;
	u16 peer = d->peer;
	struct de_out *out = NULL;

	while (seg_end < tx->nsegs && tx->segs[seg_end].page < first + n)
		seg_end++;
	count = (kmsg ? npieces : 0) + (seg_end - seg0);
	if (n)
		out = de_out_alloc(GFP_KERNEL | __GFP_NOFAIL, DE_PAGE_DONE, xid, rxid,
				   sizeof(struct de_page_done));
	/* every request of the batch counted before the first is posted: d stays until the
	 * last is done, and nothing below touches d after posting the last */
	spin_lock(&de.lock);
	d->ops_out += count;
	d->kmsg_sent = true;
	d->seg = seg_end;
	tx->pages_sent = first + n;
	d->state = DE_TX_WAIT_DONE;
	/* a batch of pages without data (nothing to post) of a cancelled transfer */
	end = !count && de_tx_end(d);
	spin_unlock(&de.lock);

	if (kmsg) {
		/* (C): the KMSG, flushed by c3_nic_submit */
		for (i = 0; i < npieces; i++) {
			u32 off = i * C3_REQ_MAX;
			bool last = i == npieces - 1;

			d->ops[i] = (struct c3_op){
				.op = C3_OP_RDMA, .dest = peer, .len = min(k->size - off, C3_REQ_MAX),
				.src = virt_to_phys((void *)k) + off, .raddr = d->kmsg_addr + off,
				.tag = rxid, .flags = last && !k->ool_pages ? C3_NIC_NOTIFY : 0,
				.done = de_tx_op_done, .ctx = d };
			if (last && !n)
				DE_TRACE(NORMA_TR_KMSG_TX, de.node, xid);
			de_rdma(d, &d->ops[i]);
		}
	}
	/* (D): flush a piece, post it; the next flush runs while the interface moves it */
	for (i = seg0; i < seg_end; i++) {
		const struct norma_seg *s = &tx->segs[i];
		struct c3_op *op = &d->ops[npieces + i];

		c3_nic_cache_flush(s->phys, s->len);
		*op = (struct c3_op){
			.op = C3_OP_RDMA, .dest = peer, .len = s->len, .src = s->phys,
			.raddr = d->page[s->page - first] + s->offset, .flags = C3_NIC_FLUSHED,
			.done = de_tx_op_done, .ctx = d };
		if (i == seg_end - 1)
			DE_TRACE(NORMA_TR_PAGES_TX, de.node, xid);
		de_rdma(d, op);
	}
	/* (E) */
	if (out) {
		struct de_page_done *pd = (struct de_page_done *)out->buf;

		pd->first = first;
		pd->npages = n;
		de_out_send(peer, out);
	}
	if (end)
		de_tx_finish(d);
}

/* ---- (I) ------------------------------------------------------------------------------------- */

void de_send_done_rx(u16 peer, const struct de_status *s)
{
	struct de_tx *d;
	bool end;

	spin_lock(&de.lock);
	d = xa_load(&de.txs, s->h.xid);
	if (!d || d->peer != peer || d->got_done || d->state == DE_TX_PAGES ||
	    (s->status != 0 && s->status != -ENOENT)) {
		spin_unlock(&de.lock);
		de_bad(peer, "receive complete for no transfer of ours waiting for it",
		       s->h.xid, s->status);
		return;
	}
	d->got_done = true;
	d->status = s->status;
	end = de_tx_end(d);
	spin_unlock(&de.lock);
	DE_TRACE(NORMA_TR_DONE_RX, de.node, s->h.xid);
	if (end)
		de_tx_finish(d);
}

/* ---- cancel, interface gone, exit ------------------------------------------------------------ */

void norma_de_cancel(struct norma_tx *tx)
{
	struct de_tx *d;
	bool end = false;

	spin_lock(&de.lock);
	d = tx->de;
	if (d && d->state != DE_TX_FINISHED && !d->cancelled) {
		d->cancelled = true;
		de.cancels++;
		end = de_tx_end(d);
	}
	spin_unlock(&de.lock);
	/* not here: the caller may hold its locks, and done() takes them */
	if (end)
		queue_work(de.wq, &d->done_work);
}

/* Every transfer not waiting for its requests ends with -ENODEV (those that are, end
 * when the interface driver fails them). */
void de_send_down(void)
{
	struct de_tx *d;
	unsigned long xid;

	for (;;) {
		bool end = false;

		spin_lock(&de.lock);
		xa_for_each(&de.txs, xid, d) {
			if (d->state == DE_TX_FINISHED)
				continue;
			if (!d->got_done && !d->cancelled)
				d->status = -ENODEV;
			end = de_tx_end(d);
			if (end)
				break;
		}
		spin_unlock(&de.lock);
		if (!end)
			return;
		de_tx_finish(d);
	}
}

/* At exit the IPC layer has no task left, so no transfer: any left is a bug there. */
void de_send_exit(void)
{
	WARN_ON(!xa_empty(&de.txs));
	de_send_down();
}
