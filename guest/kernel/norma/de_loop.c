// SPDX-License-Identifier: GPL-2.0
/*
 * norma_loop.ko (tests only): the IPC layer over a mirror instead of NORMA IPC/DE. This
 * node is node 0 of 2, and node 1 is this node again seen through a mirror: a message
 * sent to node 1 comes back to this node's IPC layer with node ids 0 and 1 swapped in
 * every uid, so a port here looked up "on node 1" is a proxy, its messages go through
 * norma_de_send, their rights become uids and proxies, OOL data is read from the pinned
 * pages by physical address into 16 KiB pages, and "message accepted" comes back through
 * norma_de_accepted: every path of ipc_remote.c runs on one node, in process context and
 * asynchronously (one ordered workqueue), as the transport's does. It moves bytes with
 * the CPU: no interface, no timing (tests/boards/cenju3/test_mach_loopback.py).
 */
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "norma.h"

bool norma_piggyback_accept;
bool norma_page_sender;

static struct workqueue_struct *loop_wq;

/* the mirror: node 0 is node 1 on the other side, and the other way round */
static struct norma_uid mirror(struct norma_uid uid)
{
	if (!norma_uid_none(uid))
		uid.node ^= 1;
	return uid;
}

int norma_de_init(void)
{
	loop_wq = alloc_ordered_workqueue("norma_loop", 0);
	return loop_wq ? 0 : -ENOMEM;
}

void norma_de_exit(void)
{
	destroy_workqueue(loop_wq);     /* runs what is queued: every done() is called */
}

u32 norma_de_node(void)
{
	return 0;
}

u32 norma_de_nodes(void)
{
	return 2;
}

u64 norma_de_now(void)
{
	return ktime_get_ns();
}

/* ---- a send: the receiver's side, then receive complete ------------------------------ */
struct loop_send {
	struct work_struct work;
	struct norma_tx *tx;
};

/* the KMSG and OOL pages as the receiving node would have them */
static struct norma_rx *loop_receive(struct norma_tx *tx)
{
	struct norma_kmsg *k = tx->kmsg;
	struct norma_desc *d = (struct norma_desc *)(k + 1);
	struct norma_rx *rx = kzalloc(sizeof(*rx), GFP_KERNEL);
	u32 i;

	if (!rx)
		return NULL;
	rx->kmsg = kmemdup(k, k->size, GFP_KERNEL);
	rx->pages = kcalloc(k->ool_pages ?: 1, sizeof(*rx->pages), GFP_KERNEL);
	if (!rx->kmsg || !rx->pages)
		goto fail;
	for (i = 0; i < k->ool_pages; i++) {
		rx->pages[i] = alloc_pages(GFP_KERNEL, NORMA_PAGE_ORDER);
		if (!rx->pages[i])
			goto fail;
	}
	for (i = 0; i < tx->nsegs; i++) {
		const struct norma_seg *s = &tx->segs[i];
		void *from = kmap_local_page(pfn_to_page(PHYS_PFN(s->phys)));

		memcpy(page_address(rx->pages[s->page]) + s->offset,
		       from + offset_in_page(s->phys), s->len);
		kunmap_local(from);
	}
	k = rx->kmsg;
	k->dest = mirror(k->dest);
	k->reply = mirror(k->reply);
	k->src_node = 1;
	d = (struct norma_desc *)(k + 1);
	for (i = 0; i < k->ndesc; i++)
		if (d[i].type == NORMA_DESC_PORT)
			d[i].uid = mirror(d[i].uid);
	rx->t_arrived_ns = ktime_get_ns();
	return rx;
fail:
	norma_rx_free(rx);
	return NULL;
}

static void loop_send_work(struct work_struct *work)
{
	struct loop_send *ls = container_of(work, struct loop_send, work);
	struct norma_tx *tx = ls->tx;
	struct norma_rx *rx;
	int status = -ENOENT;

	kfree(ls);
	if (!norma_ipc_port_check(mirror(tx->kmsg->dest))) {
		rx = loop_receive(tx);
		status = rx ? 0 : -ENOMEM;
		if (rx)
			norma_ipc_deliver(rx);
	}
	tx->done(tx, status);
}

int norma_de_send(struct norma_tx *tx)
{
	struct loop_send *ls;

	if (tx->dest_node != 1 || !tx->kmsg || tx->kmsg->size < sizeof(*tx->kmsg))
		return -EINVAL;
	ls = kzalloc(sizeof(*ls), GFP_KERNEL);
	if (!ls)
		return -ENOMEM;
	INIT_WORK(&ls->work, loop_send_work);
	ls->tx = tx;
	queue_work(loop_wq, &ls->work);
	return 0;
}

void norma_de_cancel(struct norma_tx *tx)
{
	/* the work is queued: it calls done() when it runs */
}

/* ---- message accepted ------------------------------------------------------------- */
struct loop_accept {
	struct work_struct work;
	struct norma_uid uid;
	u32 seqno;
	bool dead;
};

static void loop_accept_work(struct work_struct *work)
{
	struct loop_accept *la = container_of(work, struct loop_accept, work);

	norma_ipc_accepted(mirror(la->uid), la->seqno, la->dead);
	kfree(la);
}

void norma_de_accepted(u16 node, struct norma_uid uid, u32 seqno, bool dead)
{
	struct loop_accept *la = kzalloc(sizeof(*la), GFP_KERNEL | __GFP_NOFAIL);

	WARN_ON_ONCE(node != 1);
	INIT_WORK(&la->work, loop_accept_work);
	la->uid = uid;
	la->seqno = seqno;
	la->dead = dead;
	queue_work(loop_wq, &la->work);
}

/* ---- name lookups ------------------------------------------------------------------ */
struct loop_lookup {
	struct work_struct work;
	char name[NORMA_NAME_MAX];
	void (*cb)(void *ctx, int status, struct norma_uid uid);
	void *ctx;
};

static void loop_lookup_work(struct work_struct *work)
{
	struct loop_lookup *ll = container_of(work, struct loop_lookup, work);
	struct norma_uid uid = NORMA_UID_NONE;
	int ret = norma_ipc_lookup(ll->name, &uid);

	ll->cb(ll->ctx, ret, ret ? NORMA_UID_NONE : mirror(uid));
	kfree(ll);
}

int norma_de_lookup(u16 node, const char *name,
		    void (*cb)(void *ctx, int status, struct norma_uid uid), void *ctx)
{
	struct loop_lookup *ll;

	if (node != 1)
		return -ENODEV;
	ll = kzalloc(sizeof(*ll), GFP_KERNEL);
	if (!ll)
		return -ENOMEM;
	INIT_WORK(&ll->work, loop_lookup_work);
	strscpy(ll->name, name, sizeof(ll->name));
	ll->cb = cb;
	ll->ctx = ctx;
	queue_work(loop_wq, &ll->work);
	return 0;
}
