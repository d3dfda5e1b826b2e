// SPDX-License-Identifier: GPL-2.0
/*
 * The CompactPCI backplane's netdev bpN: Ethernet frames in rings in the receiver's
 * memory, as Linux's ntb_transport and ntb_netdev carry them over a non-transparent
 * bridge (Debian's kernel does not build the NTB subsystem, so this is its design in
 * one file over the board's windows and doorbells).
 *
 * Region s of node r's export (CPCI_NET_REGION bytes at s * CPCI_NET_REGION) is written
 * by node s alone: a header (struct cpci_net_hdr), then NET_SLOTS slots of the frames s
 * sends r. s copies a frame into the next slot through its window onto r (32-bit CPU
 * stores, each a backplane transaction), stores the slot's length word, then the
 * header's producer count, then rings r's doorbell 0. The bus delivers a node's
 * transactions in order, so when the doorbell interrupts r the frame is in r's memory.
 * r's NAPI copies frames out of its own memory into skbs and stores its consumer count
 * into the header of region r of s's export, then rings s's doorbell 1. Nobody loads
 * through a window: a load holds the CPU for a backplane round trip.
 *
 * The pair's link: each side stores in the other's header its generation (a number new
 * at each ifup) and the last generation it saw of the other; a side resets its counts
 * for the pair whenever the other's generation changes, and sends only while the two
 * agree (both generations match), so a peer that goes down, unbinds or reloads starts
 * again from empty rings. ifdown stores generation 0: peers stop sending. Nothing is
 * sent at ifup: a boot must be quiet on the backplane until the cluster's boot barrier
 * (docs/snapshots.md). The first frame for a peer whose link is not up sends the
 * header (again a second later if no answer came) and is dropped, as an Ethernet
 * drops frames before its link is up; ARP sends again.
 *
 * Addressing: the receiver learns which node each source MAC is on from the region a
 * frame arrives in; a unicast frame to a learnt MAC goes to its node, anything else
 * (broadcast, multicast: ARP; a MAC not yet seen) to every peer whose link is up.
 * A ring that is full stops the queue (unicast; a broadcast skips that peer); the
 * receiver's doorbell 1 wakes it.
 */
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/interrupt.h>
#include <linux/ktime.h>
#include <linux/slab.h>

#include "cpci.h"

/*
 * A slot: the frame's length in bytes, then the frame. 2 KiB slots hold an Ethernet
 * frame of 1500 bytes of MTU; a region holds the header's slot and 31 frame slots.
 */
#define NET_SLOT		2048u
#define NET_SLOTS		(CPCI_NET_REGION / NET_SLOT - 1)
#define NET_DATA		8u			/* the frame's offset in its slot */
#define NET_MTU			ETH_DATA_LEN
#define NET_FRAME_MAX		(NET_MTU + ETH_HLEN)

static_assert(NET_FRAME_MAX + NET_DATA <= NET_SLOT, "a frame fits a slot");
static_assert(NET_SLOTS >= 16, "rings deep enough for a TCP window's burst");

/* at the start of region s of node r's export, stored by s (little-endian words) */
struct cpci_net_hdr {
	__le32 gen;			/* s's generation (0: s is down) */
	__le32 peer_gen;		/* r's generation s reset its counts for */
	__le32 prod;			/* frames s put in this region's slots */
	__le32 cons;			/* frames s took from region r of s's export */
};

static_assert(sizeof(struct cpci_net_hdr) <= NET_SLOT, "the header fits its slot");

struct cpci_peer {
	u32 seen_gen;			/* the peer's generation our counts are for */
	u32 tx_prod;			/* frames put in the peer's ring */
	u32 rx_cons;			/* frames taken from our ring of the peer's */
	bool up;			/* the generations agree: frames flow */
	unsigned long hello_at;		/* jiffies of our last header sent (0: none yet) */
	u64 mac;			/* learnt source address (0: none) */
};

struct cpci_net {
	struct cpci_dev *cpci;
	struct net_device *dev;
	struct napi_struct napi;
	spinlock_t lock;		/* gen, peer[]: xmit, NAPI, open and stop */
	u32 gen;			/* ours (0: down) */
	u32 last_gen;
	bool open;
	struct cpci_peer peer[CPCI_MAX_NODES];
};

/* region 'src' of our export: the frames node 'src' sends us */
static void *net_local(struct cpci_net *n, u32 src)
{
	return n->cpci->export + (size_t)src * CPCI_NET_REGION;
}

static struct cpci_net_hdr *net_local_hdr(struct cpci_net *n, u32 src)
{
	return net_local(n, src);
}

/* region 'us' of node 'dst''s export, through our window: our ring there */
static void __iomem *net_remote(struct cpci_net *n, u32 dst, u32 off)
{
	return cpci_window(n->cpci, dst, n->cpci->node * CPCI_NET_REGION + off);
}

#define NET_HDR_FIELD(f)	offsetof(struct cpci_net_hdr, f)

static u32 net_hdr_read(struct cpci_net_hdr *h, size_t field)
{
	return le32_to_cpu(READ_ONCE(*(__le32 *)((u8 *)h + field)));
}

static void net_hdr_store(struct cpci_net *n, u32 dst, size_t field, u32 val)
{
	iowrite32(val, net_remote(n, dst, field));
}

/* ---- the pair's link --------------------------------------------------------------- */

/* Our header in dst's export: counts first, the generations last (n->lock held). */
static void net_hello(struct cpci_net *n, u32 dst)
{
	struct cpci_peer *p = &n->peer[dst];

	net_hdr_store(n, dst, NET_HDR_FIELD(prod), p->tx_prod);
	net_hdr_store(n, dst, NET_HDR_FIELD(cons), p->rx_cons);
	net_hdr_store(n, dst, NET_HDR_FIELD(peer_gen), p->seen_gen);
	net_hdr_store(n, dst, NET_HDR_FIELD(gen), n->gen);
	cpci_ring(n->cpci, dst, CPCI_DB_NET_TAKEN);
	p->hello_at = jiffies | 1;
}

/* Frames may go to dst; if not, our header goes, once a second at most (n->lock held). */
static bool net_peer_ready(struct cpci_net *n, u32 dst)
{
	struct cpci_peer *p = &n->peer[dst];

	if (p->up)
		return true;
	if (!p->hello_at || time_after(jiffies, p->hello_at + HZ))
		net_hello(n, dst);
	return false;
}

/*
 * What the peer's header says of the pair (n->lock held): a new generation resets our
 * counts and is answered; the link is up once each side has the other's generation.
 */
static void net_link_check(struct cpci_net *n, u32 src)
{
	struct cpci_net_hdr *h = net_local_hdr(n, src);
	struct cpci_peer *p = &n->peer[src];
	u32 gen = net_hdr_read(h, NET_HDR_FIELD(gen));
	bool up;

	if (!n->gen)
		return;
	if (gen != p->seen_gen) {
		p->seen_gen = gen;
		p->tx_prod = 0;
		p->rx_cons = 0;
		p->up = false;
		if (gen)
			net_hello(n, src);
	}
	up = gen && net_hdr_read(h, NET_HDR_FIELD(peer_gen)) == n->gen;
	if (up != p->up) {
		p->up = up;
		netdev_dbg(n->dev, "link to node %u %s\n", src, up ? "up" : "down");
	}
}

/* ---- transmit ------------------------------------------------------------------------ */

static u32 net_room(struct cpci_net *n, u32 dst)
{
	struct cpci_peer *p = &n->peer[dst];
	u32 cons = net_hdr_read(net_local_hdr(n, dst), NET_HDR_FIELD(cons));
	u32 used = p->tx_prod - cons;

	/* a count from before a reset of the pair: no room until the peer's hello */
	return used > NET_SLOTS ? 0 : NET_SLOTS - used;
}

/* Copy the frame into dst's ring, then its length, the count and the doorbell. */
static void net_put(struct cpci_net *n, u32 dst, struct sk_buff *skb)
{
	struct cpci_peer *p = &n->peer[dst];
	u32 off = NET_SLOT * (1 + p->tx_prod % NET_SLOTS);
	void __iomem *slot = net_remote(n, dst, off);
	u32 words = skb->len / 4, tail = 0;

	/* the study's CPU copy: 32-bit stores, each one transaction on the 32-bit bus */
	__iowrite32_copy(slot + NET_DATA, skb->data, words);
	if (skb->len % 4) {
		memcpy(&tail, skb->data + words * 4, skb->len % 4);
		iowrite32(tail, slot + NET_DATA + words * 4);
	}
	iowrite32(skb->len, slot);
	p->tx_prod++;
	net_hdr_store(n, dst, NET_HDR_FIELD(prod), p->tx_prod);
	cpci_ring(n->cpci, dst, CPCI_DB_NET_SEND);
}

static int net_dest(struct cpci_net *n, const u8 *mac)
{
	u64 m;
	u32 i;

	if (is_multicast_ether_addr(mac))
		return -1;
	m = ether_addr_to_u64(mac);
	for (i = 0; i < n->cpci->nodes; i++)
		if (n->peer[i].mac == m && n->peer[i].up)
			return i;
	return -1;
}

static netdev_tx_t net_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct cpci_net *n = netdev_priv(dev);
	struct cpci_dev *cpci = n->cpci;
	netdev_tx_t ret = NETDEV_TX_OK;
	bool sent = false;
	int dst;
	u32 i;

	if (unlikely(skb->len < ETH_HLEN || skb->len > NET_FRAME_MAX || skb_linearize(skb)))
		goto drop;
	spin_lock(&n->lock);
	dst = net_dest(n, skb->data);
	if (dst >= 0) {
		if (!net_room(n, dst)) {
			/* NAPI wakes the queue when the receiver's doorbell 1 comes */
			netif_stop_queue(dev);
			if (!net_room(n, dst)) {
				spin_unlock(&n->lock);
				return NETDEV_TX_BUSY;
			}
			netif_wake_queue(dev);
		}
		net_put(n, dst, skb);
		sent = true;
	} else {
		for (i = 0; i < cpci->nodes; i++) {
			if (!cpci_is_peer(cpci, i) || !net_peer_ready(n, i) || !net_room(n, i))
				continue;
			net_put(n, i, skb);
			sent = true;
		}
	}
	spin_unlock(&n->lock);
	if (!sent)
		goto drop;
	DEV_STATS_INC(dev, tx_packets);
	DEV_STATS_ADD(dev, tx_bytes, skb->len);
	dev_consume_skb_any(skb);
	return ret;
drop:
	DEV_STATS_INC(dev, tx_dropped);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/* ---- receive ------------------------------------------------------------------------- */

/* a frame of src's ring into an skb on q: handed to the stack after n->lock, since
 * the stack may send (a TCP ACK) from there */
static void net_rx_one(struct cpci_net *n, u32 src, const u8 *slot, struct sk_buff_head *q)
{
	struct net_device *dev = n->dev;
	u32 len = le32_to_cpu(READ_ONCE(*(const __le32 *)slot));
	struct sk_buff *skb;

	if (unlikely(len < ETH_HLEN || len > NET_FRAME_MAX)) {
		DEV_STATS_INC(dev, rx_length_errors);
		return;
	}
	skb = napi_alloc_skb(&n->napi, len);
	if (unlikely(!skb)) {
		DEV_STATS_INC(dev, rx_dropped);
		return;
	}
	skb_put_data(skb, slot + NET_DATA, len);
	/* the region says which node sent it */
	if (is_valid_ether_addr(skb->data + ETH_ALEN))
		n->peer[src].mac = ether_addr_to_u64(skb->data + ETH_ALEN);
	skb->protocol = eth_type_trans(skb, dev);
	DEV_STATS_INC(dev, rx_packets);
	DEV_STATS_ADD(dev, rx_bytes, len);
	__skb_queue_tail(q, skb);
}

/* The frames of src's ring, up to budget; the count stored back in src's export. */
static int net_rx_ring(struct cpci_net *n, u32 src, int budget, struct sk_buff_head *q)
{
	struct cpci_peer *p = &n->peer[src];
	u32 prod = net_hdr_read(net_local_hdr(n, src), NET_HDR_FIELD(prod));
	int done = 0;

	if (prod - p->rx_cons > NET_SLOTS) {
		/* a count no sender of this generation gives: drop what is there */
		DEV_STATS_INC(n->dev, rx_fifo_errors);
		p->rx_cons = prod;
	}
	dma_rmb();	/* the slots after the count */
	while (p->rx_cons != prod && done < budget) {
		net_rx_one(n, src, net_local(n, src) + NET_SLOT * (1 + p->rx_cons % NET_SLOTS), q);
		p->rx_cons++;
		done++;
	}
	if (done) {
		net_hdr_store(n, src, NET_HDR_FIELD(cons), p->rx_cons);
		cpci_ring(n->cpci, src, CPCI_DB_NET_TAKEN);
	}
	return done;
}

static int net_poll(struct napi_struct *napi, int budget)
{
	struct cpci_net *n = container_of(napi, struct cpci_net, napi);
	struct cpci_dev *cpci = n->cpci;
	struct sk_buff_head q;
	struct sk_buff *skb;
	bool more = false;
	int done = 0;
	u32 i;

	__skb_queue_head_init(&q);
	spin_lock(&n->lock);
	for (i = 0; i < cpci->nodes; i++) {
		if (!cpci_is_peer(cpci, i))
			continue;
		net_link_check(n, i);
		if (n->peer[i].up)
			done += net_rx_ring(n, i, budget - done, &q);
		if (done >= budget) {
			more = true;
			break;
		}
	}
	spin_unlock(&n->lock);
	while ((skb = __skb_dequeue(&q)))
		napi_gro_receive(napi, skb);
	/* room may have come, or the full peer gone: xmit looks again */
	if (netif_queue_stopped(n->dev))
		netif_wake_queue(n->dev);
	if (!more)
		napi_complete_done(napi, done);	/* a doorbell in between schedules again */
	return more ? budget : done;
}

/* ---- from the interrupt (cpci_main.c) ------------------------------------------------ */

void cpci_net_doorbells(struct cpci_dev *cpci)
{
	struct cpci_net *n = READ_ONCE(cpci->net);

	if (n && READ_ONCE(n->open))
		napi_schedule(&n->napi);
}

/* ---- net_device ---------------------------------------------------------------------- */

static int net_open(struct net_device *dev)
{
	struct cpci_net *n = netdev_priv(dev);

	spin_lock_bh(&n->lock);
	/* new at each ifup, never 0: the monotonic clock's ns (another value than last) */
	n->gen = (u32)ktime_get_ns() | 1;
	if (n->gen == n->last_gen)
		n->gen += 2;
	n->last_gen = n->gen;
	memset(n->peer, 0, sizeof(n->peer));
	spin_unlock_bh(&n->lock);
	WRITE_ONCE(n->open, true);
	napi_enable(&n->napi);
	/* the backplane is up (probe waited for it): the carrier is */
	netif_carrier_on(dev);
	napi_schedule(&n->napi);	/* peers' headers from before: answered */
	netif_start_queue(dev);
	return 0;
}

static int net_stop(struct net_device *dev)
{
	struct cpci_net *n = netdev_priv(dev);
	struct cpci_dev *cpci = n->cpci;
	u32 i;

	netif_tx_disable(dev);
	WRITE_ONCE(n->open, false);
	napi_disable(&n->napi);
	spin_lock_bh(&n->lock);
	n->gen = 0;
	for (i = 0; i < cpci->nodes; i++) {
		if (!cpci_is_peer(cpci, i))
			continue;
		net_hdr_store(n, i, NET_HDR_FIELD(gen), 0);
		cpci_ring(cpci, i, CPCI_DB_NET_TAKEN);
		n->peer[i].up = false;
	}
	spin_unlock_bh(&n->lock);
	netif_carrier_off(dev);
	return 0;
}

static void net_get_stats64(struct net_device *dev, struct rtnl_link_stats64 *stats)
{
	netdev_stats_to_stats64(stats, &dev->stats);
}

static const struct net_device_ops net_ops = {
	.ndo_open = net_open,
	.ndo_stop = net_stop,
	.ndo_start_xmit = net_xmit,
	.ndo_get_stats64 = net_get_stats64,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

/* ---- probe and remove ------------------------------------------------------------------ */

int cpci_net_probe(struct cpci_dev *cpci)
{
	struct net_device *dev;
	struct cpci_net *n;
	int ret;

	dev = alloc_netdev(sizeof(*n), "bp%d", NET_NAME_ENUM, ether_setup);
	if (!dev)
		return -ENOMEM;
	n = netdev_priv(dev);
	n->cpci = cpci;
	n->dev = dev;
	spin_lock_init(&n->lock);
	SET_NETDEV_DEV(dev, &cpci->pdev->dev);
	dev->netdev_ops = &net_ops;
	dev->mtu = NET_MTU;
	dev->max_mtu = NET_MTU;
	if (is_valid_ether_addr(cpci->mac)) {
		eth_hw_addr_set(dev, cpci->mac);
	} else {
		eth_hw_addr_random(dev);
		dev_warn(&cpci->pdev->dev, "the board's MAC %pM is not valid: using %pM\n",
			 cpci->mac, dev->dev_addr);
	}
	netif_napi_add(dev, &n->napi, net_poll);
	netif_carrier_off(dev);
	WRITE_ONCE(cpci->net, n);
	ret = register_netdev(dev);
	if (ret) {
		WRITE_ONCE(cpci->net, NULL);
		netif_napi_del(&n->napi);
		free_netdev(dev);
	}
	return ret;
}

void cpci_net_remove(struct cpci_dev *cpci)
{
	struct cpci_net *n = cpci->net;

	if (!n)
		return;
	unregister_netdev(n->dev);	/* net_stop if it was up: peers told */
	WRITE_ONCE(cpci->net, NULL);
	synchronize_irq(pci_irq_vector(cpci->pdev, 0));
	netif_napi_del(&n->napi);
	free_netdev(n->dev);
}
