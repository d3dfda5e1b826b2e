// SPDX-License-Identifier: GPL-2.0
/*
 * NORMA IPC/DE: "message accepted" notices and name lookups (docs/boards/norma.md).
 *
 * Accept notices. When a task takes a message whose sender asked for it
 * (NORMA_KF_NOTIFY), the IPC layer calls norma_de_accepted; the (port, sequence number)
 * pair is queued for the sender's node and goes back at once in a DE_ACCEPTED message
 * with whatever else is queued for that node, up to 30 pairs a message (posting one is
 * a spinlock and a doorbell: no thread switch; short of memory, the worker sends them
 * later). With piggyback_accept the pairs wait
 * instead for another protocol message to that node to ride on (de_out_send), at most
 * accept_delay_us, after which the worker sends what is left on its own: a sender
 * whose port queue is full waits for them, so they cannot wait for traffic that may
 * never come. Notices for this node's own messages are handed up by the worker too.
 *
 * Name lookups: DE_LOOKUP with the name, answered with the port (or -ENOENT) from the
 * other node's name service (norma_ipc_lookup).
 */
#include <linux/slab.h>
#include <linux/string.h>

#include "de.h"

/* ---- accept notices --------------------------------------------------------------------- */

static struct de_peer de_self;		/* this node's own notices (and all, with no peers) */

static struct de_peer *de_peer_of(u16 node)
{
	return node == de.node || !de.peers ? &de_self : &de.peers[node];
}

static enum hrtimer_restart de_accept_timer(struct hrtimer *t)
{
	queue_delayed_work(de.wq, &de.accept_work, 0);
	return HRTIMER_NORESTART;
}

void de_ctl_init(void)
{
	INIT_LIST_HEAD(&de_self.accepts);
	de_self.naccepts = 0;
	hrtimer_init(&de.accept_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	de.accept_timer.function = de_accept_timer;
}

/* Post the notices queued for peer node, 30 a message; false if short of memory. */
static bool de_accepts_send(u16 node, gfp_t gfp)
{
	while (READ_ONCE(de.peers[node].naccepts)) {
		struct de_out *out = de_out_alloc(gfp, DE_ACCEPTED, 0, 0, sizeof(struct de_hdr));
		unsigned long flags;
		struct de_hdr *h;
		u32 n, i;

		if (!out)
			return false;
		h = (struct de_hdr *)out->buf;
		n = de_accepts_take(node, (struct de_accept *)(h + 1), de_accept_room(sizeof(*h)));
		if (!n) {
			kfree(out);
			break;
		}
		h->naccept = n;
		out->len += n * sizeof(struct de_accept);
		for (i = 0; i < n; i++)
			DE_TRACE(NORMA_TR_ACCEPT_TX, node, ((struct de_accept *)(h + 1))[i].seqno);
		spin_lock_irqsave(&de.lock, flags);
		de.accepts_tx += n;
		spin_unlock_irqrestore(&de.lock, flags);
		if (de_out_send(node, out))
			break;	/* the interface is gone: de_ctl_down drops the rest */
	}
	return true;
}

void norma_de_accepted(u16 node, struct norma_uid uid, u32 seqno, bool dead)
{
	struct de_acc *e;
	unsigned long flags;

	if (node >= de.nodes) {
		pr_err_ratelimited("norma: an accept notice for node %u of %u?\n", node, de.nodes);
		return;
	}
	/* the IPC layer may call this under its spinlocks */
	e = kmalloc(sizeof(*e), GFP_ATOMIC | __GFP_NOWARN);
	if (!e) {
		pr_err_ratelimited("norma: no memory for an accept notice to node %u: its sender is not told\n",
				   node);
		return;
	}
	e->a = (struct de_accept){ .uid = uid, .seqno = seqno, .dead = dead };
	spin_lock_irqsave(&de.lock, flags);
	list_add_tail(&e->link, &de_peer_of(node)->accepts);
	de_peer_of(node)->naccepts++;
	spin_unlock_irqrestore(&de.lock, flags);
	if (node == de.node || !de.peers) {
		/* this node's own: norma_ipc_accepted takes the IPC lock, not here */
		queue_delayed_work(de.wq, &de.accept_work, 0);
	} else if (norma_piggyback_accept) {
		if (!hrtimer_active(&de.accept_timer))
			hrtimer_start(&de.accept_timer, ns_to_ktime(de_accept_delay_us * 1000ull),
				      HRTIMER_MODE_REL);
	} else if (!de_accepts_send(node, GFP_ATOMIC)) {
		queue_delayed_work(de.wq, &de.accept_work, 0);
	}
}

/* Up to room notices for peer, out of its queue, into a[]. */
u32 de_accepts_take(u16 peer, struct de_accept *a, u32 room)
{
	struct de_peer *p = de_peer_of(peer);
	struct de_acc *e, *tmp;
	unsigned long flags;
	LIST_HEAD(taken);
	u32 n = 0;

	spin_lock_irqsave(&de.lock, flags);
	list_for_each_entry_safe(e, tmp, &p->accepts, link) {
		if (n == room)
			break;
		list_move_tail(&e->link, &taken);
		p->naccepts--;
		a[n++] = e->a;
	}
	spin_unlock_irqrestore(&de.lock, flags);
	list_for_each_entry_safe(e, tmp, &taken, link)
		kfree(e);
	return n;
}

void de_accept_work(struct work_struct *w)
{
	struct de_accept a[32];
	u32 node, n, i;

	/* this node's own */
	while ((n = de_accepts_take(de.node, a, ARRAY_SIZE(a))))
		for (i = 0; i < n; i++)
			norma_ipc_accepted(a[i].uid, a[i].seqno, a[i].dead);
	for (node = 0; de.peers && node < de.nodes; node++)
		de_accepts_send(node, GFP_KERNEL | __GFP_NOFAIL);
}

void de_accepts_rx(u16 peer, const struct de_accept *a, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (a[i].dead > 1) {
			de_bad(peer, "accept notice with a bad dead flag", a[i].seqno, a[i].dead);
			continue;
		}
		DE_TRACE(NORMA_TR_ACCEPT_RX, de.node, a[i].seqno);
		de.accepts_rx++;
		norma_ipc_accepted(a[i].uid, a[i].seqno, a[i].dead);
	}
}

/* ---- name lookups --------------------------------------------------------------------------- */

struct de_lookup_req {
	u32 xid;
	u16 node;
	int status;
	struct norma_uid uid;
	char name[NORMA_NAME_MAX];
	void (*cb)(void *ctx, int status, struct norma_uid uid);
	void *ctx;
	struct work_struct work;	/* answers a lookup that never left this node */
};

static void de_lookup_local(struct work_struct *w)
{
	struct de_lookup_req *l = container_of(w, struct de_lookup_req, work);

	if (!l->status)
		l->status = norma_ipc_lookup(l->name, &l->uid) ? -ENOENT : 0;
	if (l->status)
		l->uid = NORMA_UID_NONE;
	l->cb(l->ctx, l->status, l->uid);
	kfree(l);
}

int norma_de_lookup(u16 node, const char *name,
		    void (*cb)(void *ctx, int status, struct norma_uid uid), void *ctx)
{
	struct de_lookup_req *l;
	struct de_out *out;
	size_t len = name ? strnlen(name, NORMA_NAME_MAX) : 0;

	if (!cb || !len || len == NORMA_NAME_MAX || node >= de.nodes)
		return -EINVAL;
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	l->node = node;
	l->cb = cb;
	l->ctx = ctx;
	memcpy(l->name, name, len);
	INIT_WORK(&l->work, de_lookup_local);
	if (node == de.node)
		goto local;
	if (!READ_ONCE(de.up)) {
		l->status = -ENODEV;
		goto local;
	}
	out = de_out_alloc(GFP_KERNEL, DE_LOOKUP, 0, 0, sizeof(struct de_lookup));
	if (!out || xa_alloc_cyclic(&de.lookups, &l->xid, l, xa_limit_31b, &de.next_lookup,
				    GFP_KERNEL) < 0) {
		kfree(out);
		kfree(l);
		return -ENOMEM;
	}
	((struct de_hdr *)out->buf)->xid = l->xid;
	memcpy(((struct de_lookup *)out->buf)->name, l->name, NORMA_NAME_MAX);
	if (de_out_send(node, out)) {
		/* the interface went away: its answer is -ENODEV, unless down gave it */
		if (xa_erase(&de.lookups, l->xid) != l)
			return 0;
		l->status = -ENODEV;
		goto local;
	}
	return 0;
local:
	queue_work(de.wq, &l->work);
	return 0;
}

void de_lookup_rx(u16 peer, const struct de_lookup *l)
{
	struct de_out *out;
	struct de_status *st;
	struct norma_uid uid = NORMA_UID_NONE;
	int ret;

	if (strnlen(l->name, NORMA_NAME_MAX) == NORMA_NAME_MAX || !l->name[0]) {
		de_bad(peer, "lookup of a name without its end", l->h.xid, 0);
		return;
	}
	ret = norma_ipc_lookup(l->name, &uid) ? -ENOENT : 0;
	out = de_out_alloc(GFP_KERNEL | __GFP_NOFAIL, DE_LOOKUP_REPLY, l->h.xid, 0,
			   sizeof(struct de_status));
	st = (struct de_status *)out->buf;
	st->status = ret;
	st->uid = ret ? NORMA_UID_NONE : uid;
	de_out_send(peer, out);
}

void de_lookup_reply_rx(u16 peer, const struct de_status *s)
{
	struct de_lookup_req *l = xa_load(&de.lookups, s->h.xid);

	if (!l || l->node != peer || (s->status && s->status != -ENOENT)) {
		de_bad(peer, "lookup reply for no lookup of ours", s->h.xid, s->status);
		return;
	}
	if (xa_erase(&de.lookups, s->h.xid) != l)
		return;
	l->cb(l->ctx, s->status, s->status ? NORMA_UID_NONE : s->uid);
	kfree(l);
}

/* ---- interface gone, exit ---------------------------------------------------------------------- */

void de_ctl_down(void)
{
	struct de_lookup_req *l;
	unsigned long i;

	xa_for_each(&de.lookups, i, l) {
		if (xa_erase(&de.lookups, i) != l)
			continue;
		l->cb(l->ctx, -ENODEV, NORMA_UID_NONE);
		kfree(l);
	}
}

void de_ctl_exit(void)
{
	struct de_accept a[32];
	u32 node;

	de_ctl_down();
	while (de_accepts_take(de.node, a, ARRAY_SIZE(a)))
		;
	for (node = 0; de.peers && node < de.nodes; node++)
		while (de_accepts_take(node, a, ARRAY_SIZE(a)))
			;
}
