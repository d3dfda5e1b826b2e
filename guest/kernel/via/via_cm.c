// SPDX-License-Identifier: GPL-2.0
/*
 * VIA kernel agent: the connection manager, over the NIC's mailbox (VIA_REG_CM_*).
 *
 * The agents speak in messages of VIA_CM_WORDS words:
 *   word 0  VIA_CM_MAGIC << 16 | type       word 1  the request's id (the requester's)
 *   word 2  the sender's VI                 word 3  REQ: the discriminator's length;
 *                                                   CONFIRM, DISC: the receiver's VI
 *   words 4..7  REQ: the discriminator (VIA_DISCRIMINATOR_MAX bytes)
 *
 * A connection (VIA 1.0's client-server model):
 *   client REQUEST  --REQ-->      server: a VIA_IOC_CONNECT_WAIT whose discriminator
 *                                 matches gets it (a pending connection of its file);
 *                                 none: the agent answers REJECT at once
 *                  <--ACCEPT--    server ACCEPT: its VI is connected first, then told
 *                  <--REJECT--    server REJECT
 *   client connects its VI, --CONFIRM-->: the server's ACCEPT returns. So each side's
 *   call returns with its VI connected and the peer's connected or about to be, before
 *   any data can arrive: a message never finds a VI that is not connected yet.
 *   A requester that gave up (timeout, signal) answers a late ACCEPT with CANCEL, which
 *   fails the server's ACCEPT (ECONNREFUSED; its VI is disconnected again).
 *   DISC: the sender's VI was disconnected or closed: the receiver's VI connected to it
 *   is disconnected (posted sends flushed).
 *
 * The mailbox is drained by a work item (VIA_IRQ_CM masked meanwhile), which needs
 * via->lock for DISC. The calls wait on cm->wq without via->lock.
 */
#include <linux/slab.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "via.h"

#define VIA_CM_MAGIC		0x5643u		/* "VC" */
#define VIA_CM_REQ		1
#define VIA_CM_ACCEPT		2
#define VIA_CM_REJECT		3
#define VIA_CM_CONFIRM		4
#define VIA_CM_DISC		5
#define VIA_CM_CANCEL		6
#define VIA_CM_CONFIRM_MS	5000	/* an ACCEPT's wait for the requester's CONFIRM */

static_assert(VIA_CM_WORDS == 8 && VIA_DISCRIMINATOR_MAX == 16,
	      "the discriminator fills words 4..7");

struct via_cm_listener {
	struct list_head node;
	void *owner;
	u8 disc[VIA_DISCRIMINATOR_MAX];
	u32 disc_len;
	struct via_cm_pending *got;
};

/* a request matched to a listener, until accepted or rejected */
struct via_cm_pending {
	struct list_head node;
	void *owner;
	u32 conn, peer, req_id, remote_vi;
};

/* a REQUEST or an ACCEPT under way: what it waits for comes in 'result' */
struct via_cm_call {
	struct list_head node;
	u32 id, peer, vi;
	int result;		/* 0: waiting; 1: accepted/confirmed; else -errno */
	u32 remote_vi;
};

/* ---- the mailbox ------------------------------------------------------------------ */

static int via_cm_send(struct via_dev *via, u32 dest, u32 type, u32 id, u32 w2, u32 w3,
		       const u8 *disc)
{
	u32 w[VIA_CM_WORDS] = { VIA_CM_MAGIC << 16 | type, id, w2, w3 };
	unsigned long flags;
	u32 err;
	int i;

	if (disc)
		memcpy(&w[4], disc, VIA_DISCRIMINATOR_MAX);
	if (READ_ONCE(via->dead))
		return -ENODEV;
	spin_lock_irqsave(&via->hw_lock, flags);
	via_wr(via, VIA_REG_CM_TX_DEST, dest);
	for (i = 0; i < VIA_CM_WORDS; i++)
		via_wr(via, VIA_REG_CM_TX_WORD(i), w[i]);
	via_wr(via, VIA_REG_CM_TX_GO, 0);
	err = via_rd(via, VIA_REG_ERROR);
	spin_unlock_irqrestore(&via->hw_lock, flags);
	if (err)
		pr_debug("%s: CM message %u to node %u refused: error %u\n", via->name, type,
			 dest, err);
	return via_errno(err);
}

static struct via_cm_call *via_cm_find(struct list_head *list, u32 id, u32 peer)
{
	struct via_cm_call *c;

	list_for_each_entry(c, list, node)
		if (c->id == id && c->peer == peer && !c->result)
			return c;
	return NULL;
}

/* A REQ from src: to the first listener whose discriminator matches, else refused. */
static void via_cm_rx_req(struct via_dev *via, u32 src, const u32 *w)
{
	struct via_cm *cm = &via->cm;
	struct via_cm_pending *p = kzalloc(sizeof(*p), GFP_KERNEL);
	struct via_cm_listener *l;
	u32 len = w[3];
	bool taken = false;

	if (p && len <= VIA_DISCRIMINATOR_MAX) {
		spin_lock(&cm->lock);
		list_for_each_entry(l, &cm->listeners, node) {
			if (l->got || l->disc_len != len || memcmp(l->disc, &w[4], len))
				continue;
			p->owner = l->owner;
			p->conn = ++cm->next_id;
			p->peer = src;
			p->req_id = w[1];
			p->remote_vi = w[2];
			list_add_tail(&p->node, &cm->pending);
			l->got = p;
			taken = true;
			break;
		}
		spin_unlock(&cm->lock);
	}
	if (taken) {
		wake_up_all(&cm->wq);
		return;
	}
	kfree(p);
	via_cm_send(via, src, VIA_CM_REJECT, w[1], 0, 0, NULL);
}

/* An answer to one of our calls (ACCEPT, REJECT to a REQUEST; CONFIRM, CANCEL to an
 * ACCEPT); an answer nobody waits for any more is itself answered, or dropped. */
static void via_cm_rx_answer(struct via_dev *via, u32 src, u32 type, const u32 *w)
{
	struct via_cm *cm = &via->cm;
	struct via_cm_call *c;
	bool to_request = type == VIA_CM_ACCEPT || type == VIA_CM_REJECT;

	spin_lock(&cm->lock);
	c = via_cm_find(to_request ? &cm->requests : &cm->accepts, w[1], src);
	if (c) {
		c->result = (type == VIA_CM_ACCEPT || type == VIA_CM_CONFIRM) ? 1 : -ECONNREFUSED;
		c->remote_vi = w[2];
	}
	spin_unlock(&cm->lock);
	if (c)
		wake_up_all(&cm->wq);
	else if (type == VIA_CM_ACCEPT)
		via_cm_send(via, src, VIA_CM_CANCEL, w[1], 0, 0, NULL);
}

/* DISC: our VI w[3], if it is connected to src's VI w[2], is disconnected. */
static void via_cm_rx_disc(struct via_dev *via, u32 src, const u32 *w)
{
	struct via_vi *vi;

	mutex_lock(&via->lock);
	vi = w[3] < VIA_MAX_VIS ? via->vis[w[3]] : NULL;
	if (vi && vi->connected && vi->peer_node == src && vi->peer_vi == w[2] &&
	    !READ_ONCE(via->dead)) {
		via_vi_command(via, vi->index, VIA_VI_CMD_DISCONNECT, 0);
		vi->connected = false;
	}
	mutex_unlock(&via->lock);
}

static void via_cm_rx(struct via_dev *via, u32 src, const u32 *w)
{
	u32 type = w[0] & 0xffff;

	if (w[0] >> 16 != VIA_CM_MAGIC || src >= via->nodes) {
		dev_dbg(&via->pdev->dev, "CM message %#x from node %u ignored\n", w[0], src);
		return;
	}
	switch (type) {
	case VIA_CM_REQ:
		via_cm_rx_req(via, src, w);
		break;
	case VIA_CM_ACCEPT:
	case VIA_CM_REJECT:
	case VIA_CM_CONFIRM:
	case VIA_CM_CANCEL:
		via_cm_rx_answer(via, src, type, w);
		break;
	case VIA_CM_DISC:
		via_cm_rx_disc(via, src, w);
		break;
	}
}

static void via_cm_rx_work(struct work_struct *work)
{
	struct via_dev *via = container_of(work, struct via_dev, cm.rx_work);
	u32 w[VIA_CM_WORDS], src;
	unsigned long flags;
	int i;

	for (;;) {
		if (READ_ONCE(via->dead))
			return;
		spin_lock_irqsave(&via->hw_lock, flags);
		if (!via_rd(via, VIA_REG_CM_RX_COUNT)) {
			spin_unlock_irqrestore(&via->hw_lock, flags);
			break;
		}
		src = via_rd(via, VIA_REG_CM_RX_SRC);
		for (i = 0; i < VIA_CM_WORDS; i++)
			w[i] = via_rd(via, VIA_REG_CM_RX_WORD(i));
		via_wr(via, VIA_REG_CM_RX_POP, 0);
		spin_unlock_irqrestore(&via->hw_lock, flags);
		via_cm_rx(via, src, w);
	}
	/* drained: take the interrupt again (a message in between is looked for once) */
	via_wr(via, VIA_REG_IRQ_STATUS, VIA_IRQ_CM);
	via_irq_enable(via, VIA_IRQ_CM);
	if (via_rd(via, VIA_REG_CM_RX_COUNT))
		schedule_work(&via->cm.rx_work);
}

void via_cm_irq(struct via_dev *via)
{
	via_irq_disable(via, VIA_IRQ_CM);
	schedule_work(&via->cm.rx_work);
}

void via_cm_init(struct via_dev *via)
{
	struct via_cm *cm = &via->cm;

	spin_lock_init(&cm->lock);
	INIT_LIST_HEAD(&cm->listeners);
	INIT_LIST_HEAD(&cm->pending);
	INIT_LIST_HEAD(&cm->requests);
	INIT_LIST_HEAD(&cm->accepts);
	INIT_WORK(&cm->rx_work, via_cm_rx_work);
	init_waitqueue_head(&cm->wq);
}

/* remove: interrupts off; the work item runs no more */
void via_cm_stop(struct via_dev *via)
{
	cancel_work_sync(&via->cm.rx_work);
}

/* ---- the calls ------------------------------------------------------------------ */

static long via_cm_timeout(u32 ms)
{
	return ms == U32_MAX ? MAX_SCHEDULE_TIMEOUT : msecs_to_jiffies(ms);
}

/* Wait for c->result (or for *got): 0, -ETIMEDOUT, -EINTR or -ENODEV. */
static int via_cm_sleep(struct via_dev *via, int *result, long timeout)
{
	long left = wait_event_interruptible_timeout(via->cm.wq,
				READ_ONCE(*result) || READ_ONCE(via->dead), timeout);

	if (READ_ONCE(*result))
		return 0;
	if (READ_ONCE(via->dead))
		return -ENODEV;
	return left < 0 ? -EINTR : -ETIMEDOUT;
}

long via_cm_wait(struct via_dev *via, void *owner, struct via_connect *c)
{
	struct via_cm *cm = &via->cm;
	struct via_cm_listener l = { .owner = owner, .disc_len = c->disc_len };
	struct via_cm_pending *p;
	long left;

	if (c->disc_len > VIA_DISCRIMINATOR_MAX)
		return -EINVAL;
	memcpy(l.disc, c->discriminator, c->disc_len);
	spin_lock(&cm->lock);
	list_add_tail(&l.node, &cm->listeners);
	spin_unlock(&cm->lock);
	left = wait_event_interruptible_timeout(cm->wq,
			READ_ONCE(l.got) || READ_ONCE(via->dead), via_cm_timeout(c->timeout_ms));
	spin_lock(&cm->lock);
	list_del(&l.node);
	p = l.got;
	spin_unlock(&cm->lock);
	if (!p) {
		if (READ_ONCE(via->dead))
			return -ENODEV;
		return left < 0 ? -EINTR : -ETIMEDOUT;
	}
	c->conn = p->conn;
	c->node = p->peer;
	c->remote_vi = p->remote_vi;
	return 0;
}

/* the pending connection 'conn' of owner, taken off the list, or NULL */
static struct via_cm_pending *via_cm_take(struct via_dev *via, void *owner, u32 conn)
{
	struct via_cm_pending *p, *found = NULL;

	spin_lock(&via->cm.lock);
	list_for_each_entry(p, &via->cm.pending, node) {
		if (p->owner == owner && p->conn == conn) {
			list_del(&p->node);
			found = p;
			break;
		}
	}
	spin_unlock(&via->cm.lock);
	return found;
}

static void via_cm_put_back(struct via_dev *via, struct via_cm_pending *p)
{
	spin_lock(&via->cm.lock);
	list_add_tail(&p->node, &via->cm.pending);
	spin_unlock(&via->cm.lock);
}

/* Connect our VI to (peer, remote_vi) if it is still owner's and idle. */
static int via_cm_connect_vi(struct via_dev *via, void *owner, u32 index, u32 peer,
			     u32 remote_vi)
{
	struct via_vi *vi;
	int ret;

	mutex_lock(&via->lock);
	vi = index < VIA_MAX_VIS ? via->vis[index] : NULL;
	if (!vi || !via_owns(owner, vi->owner)) {
		ret = -ENOENT;
	} else if (vi->connected || via_vi_state(via, index) != VIA_VI_IDLE) {
		pr_debug("%s: VI %u is not idle\n", via->name, index);
		ret = -EBUSY;
	} else {
		ret = via_vi_command(via, index, VIA_VI_CMD_CONNECT, peer | remote_vi << 16);
		if (!ret) {
			vi->connected = true;
			vi->peer_node = peer;
			vi->peer_vi = remote_vi;
		}
	}
	mutex_unlock(&via->lock);
	return ret;
}

static void via_cm_unconnect_vi(struct via_dev *via, u32 index)
{
	struct via_vi *vi;

	mutex_lock(&via->lock);
	vi = via->vis[index];
	if (vi && vi->connected && !READ_ONCE(via->dead)) {
		via_vi_command(via, index, VIA_VI_CMD_DISCONNECT, 0);
		vi->connected = false;
	}
	mutex_unlock(&via->lock);
}

static void via_cm_call_del(struct via_dev *via, struct via_cm_call *call)
{
	spin_lock(&via->cm.lock);
	list_del(&call->node);
	spin_unlock(&via->cm.lock);
}

long via_cm_accept(struct via_dev *via, void *owner, struct via_connect *c)
{
	struct via_cm_call call = { .vi = c->vi };
	struct via_cm_pending *p = via_cm_take(via, owner, c->conn);
	int ret;

	if (!p)
		return -ENOENT;
	ret = via_cm_connect_vi(via, owner, c->vi, p->peer, p->remote_vi);
	if (ret) {
		via_cm_put_back(via, p);	/* the caller may accept with another VI */
		return ret;
	}
	call.id = p->req_id;
	call.peer = p->peer;
	spin_lock(&via->cm.lock);
	list_add_tail(&call.node, &via->cm.accepts);
	spin_unlock(&via->cm.lock);
	ret = via_cm_send(via, p->peer, VIA_CM_ACCEPT, p->req_id, c->vi, 0, NULL);
	if (!ret)
		ret = via_cm_sleep(via, &call.result, msecs_to_jiffies(VIA_CM_CONFIRM_MS));
	via_cm_call_del(via, &call);
	if (!ret && call.result < 0)
		ret = call.result;
	if (ret)
		via_cm_unconnect_vi(via, c->vi);
	c->node = p->peer;
	c->remote_vi = p->remote_vi;
	kfree(p);
	return ret;
}

long via_cm_reject(struct via_dev *via, void *owner, struct via_connect *c)
{
	struct via_cm_pending *p = via_cm_take(via, owner, c->conn);

	if (!p)
		return -ENOENT;
	via_cm_send(via, p->peer, VIA_CM_REJECT, p->req_id, 0, 0, NULL);
	kfree(p);
	return 0;
}

long via_cm_request(struct via_dev *via, void *owner, struct via_connect *c)
{
	u8 disc[VIA_DISCRIMINATOR_MAX] = {};
	struct via_cm_call call = { .vi = c->vi, .peer = c->node };
	struct via_vi *vi;
	int ret;

	if (c->disc_len > VIA_DISCRIMINATOR_MAX)
		return -EINVAL;
	if (c->node >= via->nodes || c->node == via->node) {
		pr_debug("%s: REQUEST to node %u: not another node of %u\n", via->name, c->node,
			 via->nodes);
		return -EHOSTUNREACH;
	}
	memcpy(disc, c->discriminator, c->disc_len);
	mutex_lock(&via->lock);
	vi = c->vi < VIA_MAX_VIS ? via->vis[c->vi] : NULL;
	if (!vi || !via_owns(owner, vi->owner))
		ret = -ENOENT;
	else if (vi->connected || via_vi_state(via, c->vi) != VIA_VI_IDLE)
		ret = -EBUSY;
	else
		ret = 0;
	mutex_unlock(&via->lock);
	if (ret)
		return ret;

	spin_lock(&via->cm.lock);
	call.id = ++via->cm.next_id;
	list_add_tail(&call.node, &via->cm.requests);
	spin_unlock(&via->cm.lock);
	ret = via_cm_send(via, c->node, VIA_CM_REQ, call.id, c->vi, c->disc_len, disc);
	if (!ret)
		ret = via_cm_sleep(via, &call.result, via_cm_timeout(c->timeout_ms));
	via_cm_call_del(via, &call);
	if (ret || call.result < 0)
		return ret ? ret : call.result;
	/* accepted: the server's VI is connected and waits for our CONFIRM */
	ret = via_cm_connect_vi(via, owner, c->vi, c->node, call.remote_vi);
	via_cm_send(via, c->node, ret ? VIA_CM_CANCEL : VIA_CM_CONFIRM, call.id, c->vi,
		    call.remote_vi, NULL);
	c->remote_vi = call.remote_vi;
	return ret;
}

/* Tell the peer of a connected VI that it is going (via->lock held). */
static void via_cm_tell_peer(struct via_dev *via, struct via_vi *vi)
{
	if (vi->connected) {
		via_cm_send(via, vi->peer_node, VIA_CM_DISC, 0, vi->index, vi->peer_vi, NULL);
		vi->connected = false;
	}
}

long via_cm_disconnect(struct via_dev *via, void *owner, u32 index)
{
	struct via_vi *vi;
	u32 state;
	int ret = 0;

	mutex_lock(&via->lock);
	vi = index < VIA_MAX_VIS ? via->vis[index] : NULL;
	if (!vi || !via_owns(owner, vi->owner)) {
		ret = -ENOENT;
		goto out;
	}
	via_cm_tell_peer(via, vi);
	state = via_vi_state(via, index);
	if (state == VIA_VI_CONNECTED || state == VIA_VI_ERROR)
		ret = via_vi_command(via, index, VIA_VI_CMD_DISCONNECT, 0);
	else if (state == VIA_VI_DATAGRAM)
		ret = -EINVAL;
out:
	mutex_unlock(&via->lock);
	return ret;
}

/* via->lock held: the VI is being closed */
void via_cm_vi_closing(struct via_dev *via, struct via_vi *vi)
{
	via_cm_tell_peer(via, vi);
}

/* the file is closing: its pending connections are refused */
void via_cm_release(struct via_dev *via, void *owner)
{
	struct via_cm_pending *p, *tmp;
	LIST_HEAD(mine);

	spin_lock(&via->cm.lock);
	list_for_each_entry_safe(p, tmp, &via->cm.pending, node)
		if (p->owner == owner)
			list_move_tail(&p->node, &mine);
	spin_unlock(&via->cm.lock);
	list_for_each_entry_safe(p, tmp, &mine, node) {
		via_cm_send(via, p->peer, VIA_CM_REJECT, p->req_id, 0, 0, NULL);
		kfree(p);
	}
}
