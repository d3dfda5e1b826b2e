// SPDX-License-Identifier: GPL-2.0
/*
 * Cenju-3 interface: the request ring, the event ring, the receive slots, cache control,
 * and the in-kernel API of cenju3_nic.h built on them.
 *
 * Memory. The rings and the receive table are in coherent DMA memory (on the Cenju-3
 * they would be mapped uncached); on this x86 guest without an IOMMU the DMA address of
 * that memory is its physical address, which is what the interface wants. The receive
 * slots are ordinary cached kmalloc memory, because a slot's buffer is handed up to the
 * client without a copy: the driver invalidates a message before the CPU reads it and
 * flushes what the CPU wrote to a slot (its header word, a fresh buffer) before the
 * interface may write it again. A request's source is flushed just before it is posted,
 * so the flush is the newest in the interface's ledger when the request is taken.
 *
 * Requests. Every request asks for a C3_EV_DONE event, which is how the driver learns
 * it is finished (no register read). At most 'requests' are in the ring; more wait in
 * the driver's backlog, in order, and are posted as completions make room.
 *
 * Events. The interrupt thread (or rx_work after c3_nic_rx_resume) consumes events in
 * order by their phase bit and says how far with one write of C3_REG_EVQ_TAIL, which
 * also tells a stalled interface to look again at its slots.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/dma-mapping.h>

#include "c3.h"

/* the one interface clients see (the driver takes the first it finds) */
static struct c3_dev __rcu *c3_the;
DEFINE_STATIC_SRCU(c3_srcu);
static DEFINE_MUTEX(c3_client_mutex);	/* attach, detach, publish, unpublish */

#define C3_CACHE_OP_MAX		(16u << 20)	/* C3_REG_CACHE_LEN's largest */

/* ---- cache control ------------------------------------------------------------ */

void c3_cache_op(struct c3_dev *c3, u32 op, phys_addr_t addr, size_t len)
{
	unsigned long flags;

	spin_lock_irqsave(&c3->cache_lock, flags);
	while (len) {
		u32 n = min_t(size_t, len, C3_CACHE_OP_MAX);
		u32 hi = upper_32_bits(addr);

		c3_wr(c3, C3_REG_CACHE_ADDR_LO, lower_32_bits(addr));
		if (hi != c3->cache_hi) {
			c3_wr(c3, C3_REG_CACHE_ADDR_HI, hi);
			c3->cache_hi = hi;
		}
		if (n != c3->cache_len) {
			c3_wr(c3, C3_REG_CACHE_LEN, n);
			c3->cache_len = n;
		}
		c3_wr(c3, C3_REG_CACHE_OP, op);
		addr += n;
		len -= n;
	}
	spin_unlock_irqrestore(&c3->cache_lock, flags);
}

/* ---- memory -------------------------------------------------------------------- */

/* A receive slot's buffer: C3_SLOT_SIZE bytes, C3_SLOT_ALIGN-aligned (kmalloc aligns a
 * power-of-2 size naturally), empty, and flushed: no dirty line of it may land on top of
 * what the interface writes later. */
static u8 *c3_slot_alloc(struct c3_dev *c3, gfp_t gfp)
{
	u8 *buf = kzalloc(C3_SLOT_SIZE, gfp | __GFP_NOWARN);

	if (!buf)
		return NULL;
	if (!IS_ALIGNED(virt_to_phys(buf), C3_SLOT_ALIGN)) {
		dev_err(&c3->pdev->dev, "kmalloc gave a slot buffer at %pa, not %u-aligned\n",
			&(phys_addr_t){ virt_to_phys(buf) }, C3_SLOT_ALIGN);
		kfree(buf);
		return NULL;
	}
	c3_cache_op(c3, C3_CACHE_FLUSH, virt_to_phys(buf), C3_SLOT_SIZE);
	return buf;
}

static void c3_slot_set(struct c3_dev *c3, u32 i, u8 *buf)
{
	c3->slot_buf[i] = buf;
	WRITE_ONCE(c3->rxt[i], cpu_to_le64(buf ? virt_to_phys(buf) : 0));
}

int c3_rings_alloc(struct c3_dev *c3)
{
	struct device *dev = &c3->pdev->dev;
	u32 entries = c3->nodes * c3->slots, p, j;

	c3->req_size = c3_param_requests;
	c3->evq_size = c3_param_events;
	c3->req = dmam_alloc_coherent(dev, c3->req_size * sizeof(*c3->req), &c3->req_dma,
				      GFP_KERNEL);
	c3->evq = dmam_alloc_coherent(dev, c3->evq_size * sizeof(*c3->evq), &c3->evq_dma,
				      GFP_KERNEL);
	c3->rxt = dmam_alloc_coherent(dev, entries * sizeof(*c3->rxt), &c3->rxt_dma,
				      GFP_KERNEL);
	c3->req_ops = devm_kcalloc(dev, c3->req_size, sizeof(*c3->req_ops), GFP_KERNEL);
	c3->req_idx = devm_kcalloc(dev, c3->req_size, sizeof(*c3->req_idx), GFP_KERNEL);
	c3->slot_buf = devm_kcalloc(dev, entries, sizeof(*c3->slot_buf), GFP_KERNEL);
	if (!c3->req || !c3->evq || !c3->rxt || !c3->req_ops || !c3->req_idx || !c3->slot_buf)
		return -ENOMEM;
	/* the bases' alignment the interface checks (dma_alloc_coherent gives pages) */
	if (!IS_ALIGNED(c3->req_dma, C3_REQ_ALIGN) || !IS_ALIGNED(c3->evq_dma, C3_EVQ_ALIGN))
		return -ENOMEM;
	/* the per-peer protocol receive buffers, reserved now for the module's life */
	for (p = 0; p < c3->nodes; p++) {
		if (p == c3->node)
			continue;	/* no messages from itself (C3_ERR_DEST) */
		for (j = 0; j < c3->slots; j++) {
			u8 *buf = c3_slot_alloc(c3, GFP_KERNEL);

			if (!buf)
				return -ENOMEM;	/* c3_rings_free frees those set */
			c3_slot_set(c3, p * c3->slots + j, buf);
		}
	}
	return 0;
}

void c3_rings_free(struct c3_dev *c3)
{
	u32 i;

	if (!c3->slot_buf)
		return;
	for (i = 0; i < c3->nodes * c3->slots; i++)
		kfree(c3->slot_buf[i]);
}

/* Configuration and indices, the interface disabled (the rings' memory zeroed). */
void c3_rings_program(struct c3_dev *c3)
{
	memset(c3->req, 0, c3->req_size * sizeof(*c3->req));
	memset(c3->evq, 0, c3->evq_size * sizeof(*c3->evq));
	c3->req_tail = 0;
	c3->req_pending = 0;
	c3->evq_head = 0;
	c3->held = false;
	c3->refused_idx = U32_MAX;
	c3_wr(c3, C3_REG_REQ_BASE_LO, lower_32_bits(c3->req_dma));
	c3_wr(c3, C3_REG_REQ_BASE_HI, upper_32_bits(c3->req_dma));
	c3_wr(c3, C3_REG_REQ_SIZE, c3->req_size);
	c3_wr(c3, C3_REG_EVQ_BASE_LO, lower_32_bits(c3->evq_dma));
	c3_wr(c3, C3_REG_EVQ_BASE_HI, upper_32_bits(c3->evq_dma));
	c3_wr(c3, C3_REG_EVQ_SIZE, c3->evq_size);
	c3_wr(c3, C3_REG_RXT_BASE_LO, lower_32_bits(c3->rxt_dma));
	c3_wr(c3, C3_REG_RXT_BASE_HI, upper_32_bits(c3->rxt_dma));
	c3_wr(c3, C3_REG_RXT_SLOTS, c3->slots);
}

/* The cache registers as c3_cache_op remembers them (whatever a reset left there). */
void c3_cache_init(struct c3_dev *c3)
{
	c3_wr(c3, C3_REG_CACHE_ADDR_HI, 0);
	c3_wr(c3, C3_REG_CACHE_LEN, C3_CACHE_LINE);
	c3->cache_hi = 0;
	c3->cache_len = C3_CACHE_LINE;
}

/* ---- requests ------------------------------------------------------------------ */

/* Into the ring at req_tail (req_lock held; room checked). */
static void c3_post(struct c3_dev *c3, struct c3_op *op)
{
	u32 i = c3->req_tail & (c3->req_size - 1);
	struct c3_req *r = &c3->req[i];

	if (!(op->flags & C3_NIC_FLUSHED))
		c3_cache_op(c3, C3_CACHE_FLUSH, op->src, op->len);
	r->op = op->op;
	r->dest = op->dest;
	r->len = op->len;
	r->src = op->src;
	r->raddr = op->op == C3_OP_RDMA ? op->raddr : 0;
	r->tag = op->tag;
	r->flags = C3_REQF_EVENT |
		   (op->op == C3_OP_RDMA && (op->flags & C3_NIC_NOTIFY) ? C3_REQF_NOTIFY : 0);
	r->status = 0;
	c3->req_ops[i] = op;
	c3->req_idx[i] = c3->req_tail;
	c3->req_tail++;
	c3->req_pending++;
	if (op->op == C3_OP_MSG)
		c3->msgs_tx++;
	else
		c3->rdma_tx++;
}

/* Post from the backlog while there is room; ring the doorbell once (req_lock held). */
static void c3_post_backlog(struct c3_dev *c3)
{
	bool posted = false;

	while (!list_empty(&c3->backlog) && c3->req_pending < c3->req_size) {
		struct c3_op *op = list_first_entry(&c3->backlog, struct c3_op, link);

		list_del(&op->link);
		c3_post(c3, op);
		posted = true;
	}
	if (posted)
		c3_wr(c3, C3_REG_REQ_TAIL, c3->req_tail);	/* writel orders the ring's stores */
}

static int c3_op_check(struct c3_dev *c3, const struct c3_op *op)
{
	u32 max = op->op == C3_OP_MSG ? C3_MSG_MAX : C3_REQ_MAX;

	if (op->op != C3_OP_MSG && op->op != C3_OP_RDMA)
		return -EINVAL;
	if (!op->len || op->len > max || !op->done)
		return -EINVAL;
	if (op->dest >= c3->nodes || op->dest == c3->node)
		return -EINVAL;
	if (op->flags & ~(C3_NIC_NOTIFY | C3_NIC_FLUSHED | C3_NIC_DONE_IRQ))
		return -EINVAL;
	return 0;
}

int c3_nic_submit(struct c3_op *op)
{
	struct c3_dev *c3;
	unsigned long flags;
	int idx, ret;

	idx = srcu_read_lock(&c3_srcu);
	c3 = srcu_dereference(c3_the, &c3_srcu);
	ret = c3 ? c3_op_check(c3, op) : -ENODEV;
	if (ret)
		goto out;
	op->err = C3_ERR_NONE;
	op->t_done_ns = 0;
	spin_lock_irqsave(&c3->req_lock, flags);
	if (c3->dead) {
		ret = -ENODEV;
	} else {
		list_add_tail(&op->link, &c3->backlog);
		if (c3->req_pending >= c3->req_size)
			c3->backlogged++;
		c3_post_backlog(c3);
	}
	spin_unlock_irqrestore(&c3->req_lock, flags);
out:
	srcu_read_unlock(&c3_srcu, idx);
	return ret;
}
EXPORT_SYMBOL_GPL(c3_nic_submit);

/* Take the op of request index 'index' out of the ring (req_lock held); NULL if none. */
static struct c3_op *c3_req_take(struct c3_dev *c3, u32 index)
{
	u32 i = index & (c3->req_size - 1);
	struct c3_op *op = c3->req_ops[i];

	if (!op || c3->req_idx[i] != index)
		return NULL;
	c3->req_ops[i] = NULL;
	c3->req_pending--;
	return op;
}

/* A request finished (C3_EV_DONE) or was refused (C3_EV_ERROR): its op's done(). */
static void c3_req_finish(struct c3_dev *c3, const struct c3_event *ev, bool refused)
{
	struct c3_op *op;
	u32 err = ev->status & 0xff;

	unsigned long flags;

	spin_lock_irqsave(&c3->req_lock, flags);	/* also from the hard irq handler */
	op = c3_req_take(c3, ev->info);
	if (op) {
		if (!err)
			err = C3_ST_ERR(READ_ONCE(c3->req[ev->info & (c3->req_size - 1)].status));
		if (err)
			c3->refused_idx = ev->info;
		c3_post_backlog(c3);
	}
	spin_unlock_irqrestore(&c3->req_lock, flags);
	if (!op) {
		/* the second event of a refused request (C3_EV_DONE and C3_EV_ERROR) */
		if (refused && ev->info == c3->refused_idx)
			return;
		c3->bad_events++;
		dev_err_ratelimited(&c3->pdev->dev, "event %u for request %u, which is not pending\n",
				    ev->kind, ev->info);
		return;
	}
	op->err = err;
	op->t_done_ns = ev->t_ns;
	if (err) {
		c3->req_failed++;
		dev_err_ratelimited(&c3->pdev->dev,
				    "request %u (op %u to node %u, %u bytes) refused: error %u\n",
				    ev->info, op->op, op->dest, op->len, err);
	}
	op->done(op, err ? -EIO : 0);
}

/* Every op the driver holds gets done(-ENODEV): the interface is reset, its irq freed. */
void c3_fail_all(struct c3_dev *c3)
{
	LIST_HEAD(ops);
	struct c3_op *op, *tmp;
	u32 i;

	spin_lock_irq(&c3->req_lock);
	for (i = 0; i < c3->req_size; i++) {
		if (c3->req_ops[i]) {
			list_add_tail(&c3->req_ops[i]->link, &ops);
			c3->req_ops[i] = NULL;
		}
	}
	list_splice_tail_init(&c3->backlog, &ops);
	c3->req_pending = 0;
	spin_unlock_irq(&c3->req_lock);
	list_for_each_entry_safe(op, tmp, &ops, link) {
		list_del(&op->link);
		op->done(op, -ENODEV);
	}
}

/* ---- events -------------------------------------------------------------------- */

static bool c3_peer_ok(struct c3_dev *c3, u32 src)
{
	return src < c3->nodes && src != c3->node;
}

/* The slot is free again: its header word cleared and flushed (ev_lock held). */
static void c3_slot_release(struct c3_dev *c3, u8 *buf)
{
	WRITE_ONCE(*(__le32 *)buf, 0);
	c3_cache_op(c3, C3_CACHE_FLUSH, virt_to_phys(buf), sizeof(__le32));
}

/* The slot of the event at evq_head invalidated, once: the hard irq handler may have
 * done it already for a message it then left to the thread. */
static void c3_slot_inval(struct c3_dev *c3, u8 *buf, u32 len)
{
	if (c3->ev_inval == c3->evq_head + 1)
		return;
	c3_cache_op(c3, C3_CACHE_INVAL, virt_to_phys(buf), C3_SLOT_PAYLOAD + len);
	c3->ev_inval = c3->evq_head + 1;
}

static int c3_ev_msg(struct c3_dev *c3, const struct c3_event *ev)
{
	u32 src = ev->src, j = ev->info, len = ev->len, hdr;
	struct c3_rx rx;
	u8 *buf;
	int ret;

	if (!c3_peer_ok(c3, src) || j >= c3->slots || !len || len > C3_MSG_MAX) {
		c3->bad_events++;
		dev_err_ratelimited(&c3->pdev->dev, "message event: node %u slot %u, %u bytes?\n",
				    src, j, len);
		return 0;
	}
	buf = c3->slot_buf[src * c3->slots + j];
	c3_slot_inval(c3, buf, len);
	hdr = le32_to_cpu(READ_ONCE(*(__le32 *)buf));
	if (!(hdr & C3_SLOT_FULL) || C3_SLOT_LEN(hdr) != len) {
		c3->bad_events++;
		dev_err_ratelimited(&c3->pdev->dev,
				    "message event: node %u slot %u, %u bytes, but its header is %#x\n",
				    src, j, len, hdr);
		return 0;
	}
	rx = (struct c3_rx){ .src = src, .slot = j, .len = len, .data = buf + C3_SLOT_PAYLOAD,
			     .t_ns = ev->t_ns, .priv = c3 };
	if (c3->ops) {
		ret = c3->ops->rx(c3->ctx, &rx);
		if (ret == -EAGAIN)
			return ret;
	} else {
		c3->rx_unclaimed++;
	}
	c3->msgs_rx++;
	if (c3->slot_buf[src * c3->slots + j] != buf)
		c3->rx_kept++;		/* the client has it; the slot has a fresh buffer */
	else
		c3_slot_release(c3, buf);
	return 0;
}

static void c3_ev_rdma(struct c3_dev *c3, const struct c3_event *ev)
{
	if (!c3_peer_ok(c3, ev->src)) {
		c3->bad_events++;
		dev_err_ratelimited(&c3->pdev->dev, "remote DMA event from node %u?\n", ev->src);
		return;
	}
	c3->rdma_rx++;
	if (c3->ops && c3->ops->rdma)
		c3->ops->rdma(c3->ctx, ev->src, ev->tag, ev->len);
	else
		c3->rx_unclaimed++;
}

static int c3_event(struct c3_dev *c3, const struct c3_event *ev)
{
	switch (ev->kind) {
	case C3_EV_MSG:
		return c3_ev_msg(c3, ev);
	case C3_EV_RDMA:
		c3_ev_rdma(c3, ev);
		return 0;
	case C3_EV_DONE:
		c3_req_finish(c3, ev, false);
		return 0;
	case C3_EV_ERROR:
		if (ev->flags & C3_EVF_ARRIVING) {
			/* a packet from ev->src refused on arrival (no slot, bad address) */
			c3->rx_refused++;
			dev_err_ratelimited(&c3->pdev->dev,
					    "a packet from node %u refused: error %u\n",
					    ev->src, ev->status);
			return 0;
		}
		/* a refused request of ours: done now, unless its C3_EV_DONE came first */
		c3_req_finish(c3, ev, true);
		return 0;
	default:
		c3->bad_events++;
		dev_err_ratelimited(&c3->pdev->dev, "unknown event kind %u\n", ev->kind);
		return 0;
	}
}

static void c3_ev_busy(struct c3_dev *c3, bool busy)
{
	unsigned long flags;

	spin_lock_irqsave(&c3->ev_busy_lock, flags);
	c3->ev_busy = busy;
	spin_unlock_irqrestore(&c3->ev_busy_lock, flags);
}

/* The event at evq_head + n if the interface has written it, else NULL (its phase bit
 * is 1 on the ring's first lap, 0 on the next). */
static struct c3_event *c3_ev_peek(struct c3_dev *c3, u32 n)
{
	u32 at = c3->evq_head + n;
	struct c3_event *slot = &c3->evq[at & (c3->evq_size - 1)];
	u8 phase = ((at / c3->evq_size) & 1) ? 0 : C3_EVF_PHASE;

	if ((READ_ONCE(slot->flags) & C3_EVF_PHASE) != phase)
		return NULL;
	dma_rmb();	/* the event's fields after its phase */
	return slot;
}

/* A completion whose op's done() may run in the hard irq handler. */
static bool c3_ev_done_irq(struct c3_dev *c3, const struct c3_event *ev)
{
	u32 i = ev->info & (c3->req_size - 1);
	bool ok;

	spin_lock(&c3->req_lock);
	ok = ev->kind == C3_EV_DONE && c3->req_ops[i] && c3->req_idx[i] == ev->info &&
	     (c3->req_ops[i]->flags & C3_NIC_DONE_IRQ);
	spin_unlock(&c3->req_lock);
	return ok;
}

/*
 * A message the client's rx_irq() takes in the hard irq handler: true if it did (the
 * slot is released). Anything out of the ordinary (a bad event, a slot that does not
 * say what the event says) is the thread's, which reports it.
 */
static bool c3_ev_msg_irq(struct c3_dev *c3, const struct c3_event *ev)
{
	u32 src = ev->src, j = ev->info, len = ev->len, hdr;
	struct c3_rx rx;
	u8 *buf;

	if (ev->kind != C3_EV_MSG || !c3->ops || !c3->ops->rx_irq || !c3_peer_ok(c3, src) ||
	    j >= c3->slots || !len || len > C3_MSG_MAX)
		return false;
	buf = c3->slot_buf[src * c3->slots + j];
	c3_slot_inval(c3, buf, len);
	hdr = le32_to_cpu(READ_ONCE(*(__le32 *)buf));
	if (!(hdr & C3_SLOT_FULL) || C3_SLOT_LEN(hdr) != len)
		return false;
	rx = (struct c3_rx){ .src = src, .slot = j, .len = len, .data = buf + C3_SLOT_PAYLOAD,
			     .t_ns = ev->t_ns, .priv = c3 };
	if (!c3->ops->rx_irq(c3->ctx, &rx))
		return false;
	c3->msgs_rx++;
	c3->rx_irq++;
	c3_slot_release(c3, buf);
	return true;
}

/*
 * The hard irq handler's part (MSI): if nothing consumes events now, consume the
 * events waiting from the first on while each is a C3_NIC_DONE_IRQ completion or a
 * message the client's rx_irq() takes; true if none is left (the thread need not
 * run). The first one it cannot take, and all after it, are the thread's, so
 * callbacks still see events in the order they came.
 */
bool c3_events_irq(struct c3_dev *c3)
{
	struct c3_event *slot;
	u32 n = 0, m;
	bool ok;

	spin_lock(&c3->ev_busy_lock);
	if (c3->ev_busy || c3->held) {
		spin_unlock(&c3->ev_busy_lock);
		return false;
	}
	if (!c3_ev_peek(c3, 0)) {
		/* the interrupt of events the handler took already (it came while the
		 * handler ran): ack it, and look once more before leaving */
		c3_wr(c3, C3_REG_IRQ_STATUS, C3_IRQS);
		ok = !c3_ev_peek(c3, 0);
		if (ok) {
			c3->irqs++;
			c3->irqs_hard++;
			spin_unlock(&c3->ev_busy_lock);
			return true;
		}
	}
	do {
		m = 0;
		while (n < c3->evq_size && (slot = c3_ev_peek(c3, 0))) {
			struct c3_event ev = *slot;

			if (c3_ev_done_irq(c3, &ev))
				c3_req_finish(c3, &ev, false);
			else if (!c3_ev_msg_irq(c3, &ev))
				break;
			c3->evq_head++;
			c3->events++;
			n++;
			m++;
		}
		if (!n) {
			/* nothing for the handler: the thread acks and consumes */
			spin_unlock(&c3->ev_busy_lock);
			return false;
		}
		if (m) {
			c3_wr(c3, C3_REG_IRQ_STATUS, C3_IRQS);
			c3_wr(c3, C3_REG_EVQ_TAIL, c3->evq_head);
		}
		/* what came before the ack (which took its interrupt): another round, e.g.
		 * the completion of a reply rx_irq() posted; what the handler cannot take
		 * is the thread's */
		ok = !c3_ev_peek(c3, 0);
	} while (!ok && m && n < c3->evq_size);
	if (ok) {
		c3->irqs++;
		c3->irqs_hard++;
	}
	spin_unlock(&c3->ev_busy_lock);
	return ok;
}

void c3_events(struct c3_dev *c3)
{
	mutex_lock(&c3->ev_lock);
	c3_ev_busy(c3, true);
	while (!c3->held) {
		struct c3_event *slot = c3_ev_peek(c3, 0);
		struct c3_event ev;

		if (!slot)
			break;
		ev = *slot;
		if (c3_event(c3, &ev) == -EAGAIN) {
			c3->held = true;
			c3->rx_held++;
			break;
		}
		c3->evq_head++;
		c3->events++;
	}
	/* also "look again" for an interface waiting for a slot this pass freed */
	c3_wr(c3, C3_REG_EVQ_TAIL, c3->evq_head);
	c3_ev_busy(c3, false);
	mutex_unlock(&c3->ev_lock);
}

/* ---- the rest of the API ------------------------------------------------------------ */

/* The client and its callbacks (ev_lock held): the hard irq handler's rx_irq() reads
 * them under ev_busy_lock, so none runs once they are gone. */
static void c3_set_client(struct c3_dev *c3, const struct c3_client_ops *ops, void *ctx)
{
	spin_lock_irq(&c3->ev_busy_lock);
	c3->ops = ops;
	c3->ctx = ctx;
	spin_unlock_irq(&c3->ev_busy_lock);
}

int c3_publish(struct c3_dev *c3)
{
	int ret = 0;

	mutex_lock(&c3_client_mutex);
	if (rcu_access_pointer(c3_the))
		ret = -EBUSY;
	else
		rcu_assign_pointer(c3_the, c3);
	mutex_unlock(&c3_client_mutex);
	return ret;
}

/* The client is told (down), then no API call can reach c3 any more. */
void c3_unpublish(struct c3_dev *c3)
{
	mutex_lock(&c3_client_mutex);
	if (rcu_access_pointer(c3_the) == c3) {
		mutex_lock(&c3->ev_lock);
		if (c3->ops && c3->ops->down)
			c3->ops->down(c3->ctx);
		c3_set_client(c3, NULL, NULL);
		mutex_unlock(&c3->ev_lock);
		RCU_INIT_POINTER(c3_the, NULL);
	}
	mutex_unlock(&c3_client_mutex);
	synchronize_srcu(&c3_srcu);
}

int c3_nic_attach(const struct c3_client_ops *ops, void *ctx)
{
	struct c3_dev *c3;
	int ret = 0;

	if (!ops || !ops->rx)
		return -EINVAL;
	mutex_lock(&c3_client_mutex);
	c3 = rcu_dereference_protected(c3_the, lockdep_is_held(&c3_client_mutex));
	if (!c3) {
		ret = -ENODEV;
	} else if (c3->ops) {
		ret = -EBUSY;
	} else {
		mutex_lock(&c3->ev_lock);
		c3_set_client(c3, ops, ctx);
		mutex_unlock(&c3->ev_lock);
	}
	mutex_unlock(&c3_client_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(c3_nic_attach);

/* Not from a callback (it waits for the callbacks in progress). A client the removal
 * of the interface detached already (down) is not attached any more: nothing to do. */
void c3_nic_detach(void *ctx)
{
	struct c3_dev *c3;

	mutex_lock(&c3_client_mutex);
	c3 = rcu_dereference_protected(c3_the, lockdep_is_held(&c3_client_mutex));
	if (c3 && c3->ops && c3->ctx == ctx) {
		mutex_lock(&c3->ev_lock);
		c3_set_client(c3, NULL, NULL);
		/* a message held for the client that left is not held for the next one */
		if (c3->held) {
			c3->held = false;
			schedule_work(&c3->rx_work);
		}
		mutex_unlock(&c3->ev_lock);
	}
	mutex_unlock(&c3_client_mutex);
}
EXPORT_SYMBOL_GPL(c3_nic_detach);

#define C3_GET(c3, idx) \
	((idx) = srcu_read_lock(&c3_srcu), (c3) = srcu_dereference(c3_the, &c3_srcu))

u32 c3_nic_node(void)
{
	struct c3_dev *c3;
	u32 v;
	int idx;

	v = C3_GET(c3, idx) ? c3->node : 0;
	srcu_read_unlock(&c3_srcu, idx);
	return v;
}
EXPORT_SYMBOL_GPL(c3_nic_node);

u32 c3_nic_nodes(void)
{
	struct c3_dev *c3;
	u32 v;
	int idx;

	v = C3_GET(c3, idx) ? c3->nodes : 1;
	srcu_read_unlock(&c3_srcu, idx);
	return v;
}
EXPORT_SYMBOL_GPL(c3_nic_nodes);

u32 c3_nic_slots(void)
{
	struct c3_dev *c3;
	u32 v;
	int idx;

	v = C3_GET(c3, idx) ? c3->slots : 0;
	srcu_read_unlock(&c3_srcu, idx);
	return v;
}
EXPORT_SYMBOL_GPL(c3_nic_slots);

void *c3_nic_rx_keep(struct c3_rx *rx)
{
	struct c3_dev *c3 = rx->priv;
	u32 i = rx->src * c3->slots + rx->slot;
	u8 *fresh;

	if (c3->slot_buf[i] != (u8 *)rx->data - C3_SLOT_PAYLOAD)
		return rx->data;	/* kept already */
	fresh = c3_slot_alloc(c3, GFP_KERNEL);
	if (!fresh)
		return NULL;
	c3_slot_set(c3, i, fresh);
	return rx->data;
}
EXPORT_SYMBOL_GPL(c3_nic_rx_keep);

void c3_nic_rx_free(void *data)
{
	if (data)
		kfree((u8 *)data - C3_SLOT_PAYLOAD);
}
EXPORT_SYMBOL_GPL(c3_nic_rx_free);

void c3_nic_rx_resume(void)
{
	struct c3_dev *c3;
	int idx;

	if (C3_GET(c3, idx))
		schedule_work(&c3->rx_work);
	srcu_read_unlock(&c3_srcu, idx);
}
EXPORT_SYMBOL_GPL(c3_nic_rx_resume);

static void c3_nic_cache(u32 op, phys_addr_t addr, size_t len)
{
	struct c3_dev *c3;
	int idx;

	if (C3_GET(c3, idx) && len)
		c3_cache_op(c3, op, addr, len);
	srcu_read_unlock(&c3_srcu, idx);
}

void c3_nic_cache_flush(phys_addr_t addr, size_t len)
{
	c3_nic_cache(C3_CACHE_FLUSH, addr, len);
}
EXPORT_SYMBOL_GPL(c3_nic_cache_flush);

void c3_nic_cache_inval(phys_addr_t addr, size_t len)
{
	c3_nic_cache(C3_CACHE_INVAL, addr, len);
}
EXPORT_SYMBOL_GPL(c3_nic_cache_inval);

u64 c3_nic_now(void)
{
	struct c3_dev *c3;
	u64 t = 0;
	int idx;

	if (C3_GET(c3, idx)) {
		unsigned long flags;
		u32 lo;

		/* reading LO latches HI: one reader at a time */
		spin_lock_irqsave(&c3->cache_lock, flags);
		lo = c3_rd(c3, C3_REG_NOW_LO);
		t = ((u64)c3_rd(c3, C3_REG_NOW_HI) << 32) | lo;
		spin_unlock_irqrestore(&c3->cache_lock, flags);
	}
	srcu_read_unlock(&c3_srcu, idx);
	return t;
}
EXPORT_SYMBOL_GPL(c3_nic_now);
