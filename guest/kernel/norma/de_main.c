// SPDX-License-Identifier: GPL-2.0
/*
 * NORMA IPC/DE: start and stop, the interface's callbacks, protocol messages out and in.
 *
 * Protocol messages arrive in the per-peer receive slots the interface driver reserved
 * at start (cenju3.ko's 'slots' per peer), so a send request can always be received
 * whatever the memory situation; each is checked here (type, length, the counts in it)
 * before anything reads it, and a bad one is logged and dropped. Nothing is timed out
 * or sent again: the network is reliable and the interface never drops.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "de.h"

bool norma_piggyback_accept;
module_param_named(piggyback_accept, norma_piggyback_accept, bool, 0444);
MODULE_PARM_DESC(piggyback_accept,
		 "accept notices ride on other protocol messages to their node (paper's proposal; default off)");

bool norma_page_sender;
module_param_named(page_sender, norma_page_sender, bool, 0444);
MODULE_PARM_DESC(page_sender,
		 "OOL pages are sent by a dedicated worker, not the shared one (paper's proposal; default off)");

unsigned int de_alloc_retry_ms = 10;
module_param_named(alloc_retry_ms, de_alloc_retry_ms, uint, 0644);
MODULE_PARM_DESC(alloc_retry_ms,
		 "a receiver short of memory tries to allocate a message's buffers again after this (default 10)");

unsigned int de_accept_delay_us = 200;
module_param_named(accept_delay_us, de_accept_delay_us, uint, 0644);
MODULE_PARM_DESC(accept_delay_us,
		 "piggyback_accept: the longest an accept notice waits for a message to ride on (default 200)");

struct de_state de;

void de_bad(u16 peer, const char *what, u32 a, u32 b)
{
	de.bad_msgs++;
	pr_warn_ratelimited("norma: from node %u: %s (%u, %u): dropped\n", peer, what, a, b);
}

/* ---- out ---------------------------------------------------------------------------- */

static void de_out_done(struct c3_op *op, int status)
{
	struct de_out *out = container_of(op, struct de_out, op);

	if (status)
		pr_err_ratelimited("norma: a protocol message to node %u failed (%d, error %u)\n",
				   op->dest, status, op->err);
	kfree(out);
	/* the last thing: norma_de_exit waits for it before the module's code goes */
	if (atomic_dec_and_test(&de.msgs_out))
		wake_up_var(&de.msgs_out);
}

/* A message of 'body' bytes (header included) to fill in; NULL without memory. */
struct de_out *de_out_alloc(gfp_t gfp, u8 type, u32 xid, u32 rxid, u32 body)
{
	struct de_out *out = kzalloc(sizeof(*out), gfp | __GFP_NOWARN);
	struct de_hdr *h;

	if (!out)
		return NULL;
	h = (struct de_hdr *)out->buf;
	h->type = type;
	h->xid = xid;
	h->rxid = rxid;
	out->len = body;
	return out;
}

/* Send it (accept notices for the peer ride along if piggy-backing); it is freed when
 * sent, or now if it cannot be. */
int de_out_send(u16 peer, struct de_out *out)
{
	struct de_hdr *h = (struct de_hdr *)out->buf;
	int ret;

	if (norma_piggyback_accept && h->type != DE_ACCEPTED) {
		u32 n = de_accepts_take(peer, (struct de_accept *)(out->buf + out->len),
					de_accept_room(out->len));

		h->naccept = n;
		out->len += n * sizeof(struct de_accept);
		de.piggybacked += n;
	}
	/* de_out_done frees it: fine in the hard irq handler, no thread switch for it */
	out->op = (struct c3_op){ .op = C3_OP_MSG, .dest = peer, .len = out->len,
				  .src = virt_to_phys(out->buf), .flags = C3_NIC_DONE_IRQ,
				  .done = de_out_done };
	atomic_inc(&de.msgs_out);
	ret = c3_nic_submit(&out->op);
	if (ret) {
		atomic_dec(&de.msgs_out);
		pr_err_ratelimited("norma: protocol message %u to node %u not sent (%d)\n",
				   h->type, peer, ret);
		kfree(out);
	}
	return ret;
}

/* ---- in ----------------------------------------------------------------------------- */

/* the body's size of each type (a send request's KMSG is checked by de_recv_req) */
static const u32 de_body[DE_TYPE_MAX + 1] = {
	[DE_SEND_REQ] = sizeof(struct de_send_req),
	[DE_SEND_PERMIT] = sizeof(struct de_permit),
	[DE_PAGE_DONE] = sizeof(struct de_page_done),
	[DE_PAGE_PERMIT] = sizeof(struct de_permit),
	[DE_RECV_DONE] = sizeof(struct de_status),
	[DE_ACCEPTED] = sizeof(struct de_hdr),
	[DE_LOOKUP] = sizeof(struct de_lookup),
	[DE_LOOKUP_REPLY] = sizeof(struct de_status),
	[DE_CANCEL] = sizeof(struct de_hdr),
};

static int de_rx(void *ctx, struct c3_rx *rx)
{
	const struct de_hdr *h = rx->data;
	u32 body, acc;

	if (rx->len < sizeof(*h) || !h->type || h->type > DE_TYPE_MAX) {
		de_bad(rx->src, "message too short or of no known type",
		       rx->len, rx->len >= sizeof(*h) ? h->type : 0);
		return 0;
	}
	body = de_body[h->type];
	if (h->type == DE_SEND_REQ && rx->len >= body) {
		u32 k = ((const struct de_send_req *)h)->kmsg_size;

		if (k <= NORMA_SHORT_MAX)
			body += k;
	}
	acc = (u32)h->naccept * sizeof(struct de_accept);
	if (rx->len != body + acc) {
		de_bad(rx->src, "message length is not its type's", rx->len, h->type);
		return 0;
	}
	/* the notices first: they may free a queue slot the request below is for */
	if (h->naccept)
		de_accepts_rx(rx->src, (const struct de_accept *)((const u8 *)h + body), h->naccept);

	switch (h->type) {
	case DE_SEND_REQ:
		return de_recv_req(rx, rx->data, body);
	case DE_SEND_PERMIT:
	case DE_PAGE_PERMIT:
		de_send_permit_rx(rx->src, rx->data, body);
		break;
	case DE_PAGE_DONE:
		de_recv_pages_rx(rx->src, rx->data);
		break;
	case DE_RECV_DONE:
		de_send_done_rx(rx->src, rx->data);
		break;
	case DE_ACCEPTED:
		break;
	case DE_LOOKUP:
		de_lookup_rx(rx->src, rx->data);
		break;
	case DE_LOOKUP_REPLY:
		de_lookup_reply_rx(rx->src, rx->data);
		break;
	case DE_CANCEL:
		de_recv_cancel_rx(rx->src, h->xid);
		break;
	}
	return 0;
}

/* A short send request, in the interface's hard interrupt handler (de_recv_req_irq);
 * false: de_rx has it, in the thread (notices riding on it take the IPC lock). */
static bool de_rx_irq(void *ctx, struct c3_rx *rx)
{
	const struct de_send_req *r = rx->data;

	if (norma_piggyback_accept || rx->len < sizeof(*r) || r->h.type != DE_SEND_REQ ||
	    r->h.naccept || r->kmsg_size > NORMA_SHORT_MAX ||
	    rx->len != sizeof(*r) + r->kmsg_size)
		return false;
	return de_recv_req_irq(rx, r);
}

/* A long KMSG with no OOL pages is all in: its remote DMA's notify, tag = our rxid. */
static void de_rdma(void *ctx, u16 src, u32 tag, u32 len)
{
	de_recv_kmsg_rx(src, tag);
}

static void de_down(void *ctx)
{
	pr_warn("norma: the Cenju-3 interface went away: sends and lookups under way fail\n");
	WRITE_ONCE(de.up, false);
	de_send_down();
	de_ctl_down();
}

static const struct c3_client_ops de_ops = {
	.rx = de_rx,
	.rx_irq = de_rx_irq,
	.rdma = de_rdma,
	.down = de_down,
};

/* ---- counters: /sys/kernel/debug/norma_de ------------------------------------------------ */

static int de_stats_show(struct seq_file *m, void *v)
{
	seq_printf(m, "node %u\nnodes %u\nup %d\n", de.node, de.nodes, READ_ONCE(de.up));
	seq_printf(m, "sends %llu\ndelivered %llu\ndelivered_irq %llu\nbad_msgs %llu\n"
		   "alloc_retries %llu\n", de.sends, de.delivered + de.delivered_irq,
		   de.delivered_irq, de.bad_msgs, de.alloc_retries);
	seq_printf(m, "accepts_tx %llu\naccepts_rx %llu\npiggybacked %llu\n",
		   de.accepts_tx, de.accepts_rx, de.piggybacked);
	seq_printf(m, "cancels %llu\ncancels_rx %llu\nmsgs_out %d\n", de.cancels, de.cancels_rx,
		   atomic_read(&de.msgs_out));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(de_stats);

/* ---- the layer's interface (norma.h) -------------------------------------------------- */

u32 norma_de_node(void)
{
	return de.node;
}

u32 norma_de_nodes(void)
{
	return de.nodes;
}

u64 norma_de_now(void)
{
	return de_now();
}

int norma_de_init(void)
{
	int ret;

	spin_lock_init(&de.lock);
	xa_init_flags(&de.txs, XA_FLAGS_ALLOC1);
	xa_init_flags(&de.rxs, XA_FLAGS_ALLOC1);
	xa_init_flags(&de.lookups, XA_FLAGS_ALLOC1);
	INIT_LIST_HEAD(&de.alloc_wait);
	INIT_DELAYED_WORK(&de.alloc_work, de_recv_alloc_work);
	INIT_DELAYED_WORK(&de.accept_work, de_accept_work);
	de.node = 0;
	de.nodes = 1;
	atomic_set(&de.msgs_out, 0);
	de_ctl_init();
	/* one worker, shared by everything the transport does outside the interface's
	 * thread (page sending included, unless norma_page_sender) */
	de.wq = alloc_ordered_workqueue("norma_de", 0);
	if (!de.wq)
		return -ENOMEM;
	if (norma_page_sender) {
		/* its own thread, ahead of the shared one (the paper's proposal) */
		de.page_wq = alloc_workqueue("norma_pages", WQ_HIGHPRI | WQ_UNBOUND, 1);
		if (!de.page_wq) {
			destroy_workqueue(de.wq);
			return -ENOMEM;
		}
	}
	ret = c3_nic_attach(&de_ops, &de);
	if (ret) {
		/* no interface (or /dev/cenju3 holds it): this node alone */
		pr_info("norma: no Cenju-3 interface to use (%d): single node\n", ret);
		goto out;
	}
	de.node = c3_nic_node();
	de.nodes = c3_nic_nodes();
	de.peers = kcalloc(de.nodes, sizeof(*de.peers), GFP_KERNEL);
	if (!de.peers) {
		c3_nic_detach(&de);
		if (de.page_wq)
			destroy_workqueue(de.page_wq);
		destroy_workqueue(de.wq);
		return -ENOMEM;
	}
	for (ret = 0; ret < de.nodes; ret++)
		INIT_LIST_HEAD(&de.peers[ret].accepts);
	WRITE_ONCE(de.up, true);
	pr_info("norma: NORMA IPC/DE on node %u of %u (%u receive slots per peer)%s%s\n",
		de.node, de.nodes, c3_nic_slots(),
		norma_piggyback_accept ? ", accept notices piggy-backed" : "",
		norma_page_sender ? ", dedicated page sender" : "");
out:
	de.debugfs = debugfs_create_file("norma_de", 0444, NULL, NULL, &de_stats_fops);
	de.debugfs_trace = de_trace_debugfs();
	return 0;
}

/*
 * The IPC layer has no task left (every send finished or cancelled). Detach first (no
 * callback after it), then forget what peers had under way here.
 */
void norma_de_exit(void)
{
	debugfs_remove(de.debugfs);
	debugfs_remove(de.debugfs_trace);
	c3_nic_detach(&de);
	WRITE_ONCE(de.up, false);
	wait_var_event(&de.msgs_out, !atomic_read(&de.msgs_out));
	hrtimer_cancel(&de.accept_timer);
	cancel_delayed_work_sync(&de.alloc_work);
	cancel_delayed_work_sync(&de.accept_work);
	if (de.page_wq) {
		destroy_workqueue(de.page_wq);
		de.page_wq = NULL;
	}
	destroy_workqueue(de.wq);	/* what was queued runs first */
	de_send_exit();
	de_recv_exit();
	de_ctl_exit();
	kfree(de.peers);
	de.peers = NULL;
	xa_destroy(&de.txs);
	xa_destroy(&de.rxs);
	xa_destroy(&de.lookups);
}
