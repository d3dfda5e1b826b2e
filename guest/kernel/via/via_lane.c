// SPDX-License-Identifier: GPL-2.0
/*
 * VIA kernel agent: LAN emulation (cLAN's "LANE"), a net_device viaN over VI 0 in
 * datagram mode (VIA_VI_CMD_DATAGRAM), so that the stock stack's UDP and TCP run over
 * the VIA network. VI 0 is never a process's.
 *
 * Framing: one Ethernet frame (header + packet) is one datagram; the MTU is 8000 bytes
 * (a frame fits an 8 KiB buffer; the NIC splits it into 2 KiB pieces on the link), a
 * choice between the NIC's 64 KiB messages and the memory the rings pin. The sender
 * puts its node in the descriptor's ImmediateData, so the receiver learns which node
 * each source MAC is on (as fc_net.c learns its ports): a unicast frame to a learnt MAC
 * goes to its node (the control segment's Reserved word), anything else (broadcast,
 * multicast: ARP; a MAC not yet seen) to VIA_DEST_BROADCAST, every other node.
 *
 * Memory: the descriptors and the buffers are DMA-coherent memory of the agent,
 * registered as two regions under a kernel protection tag; VI 0 has that tag. Receive:
 * LANE_RX descriptors stay posted, each into its own buffer; NAPI reads them in order
 * (the NIC completes them in order), copies each frame into an skb and posts the
 * descriptor again, then arms the receive queue (VIA_REG_ARM) for the next interrupt.
 * Transmit: the frame is copied into the next of LANE_TX buffers and posted (one 64-bit
 * doorbell store); completed sends are taken back as the ring is used, and when the
 * ring is full the queue stops and the send queue is armed: its interrupt wakes it.
 * Datagrams are unreliable: a frame that finds no receive descriptor is dropped (and
 * counted by the NIC), as on an Ethernet; TCP retransmits.
 *
 * Carrier: VIA_STATUS_LINK_UP when the interface comes up, else the first VIA_IRQ_LINK
 * (then masked, as fc_net.c: when a peer leaves depends on the host's timing).
 */
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/interrupt.h>
#include <linux/dma-mapping.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/slab.h>

#include "via.h"

#define LANE_BUF		8192
#define LANE_MTU		8000
#define LANE_RX			64
#define LANE_TX			64
#define LANE_TX_TIMEOUT		(5 * HZ)

static_assert(LANE_MTU + ETH_HLEN <= LANE_BUF, "a frame fits a buffer");
static_assert(LANE_RX < VIA_WQ_DEPTH && LANE_TX < VIA_WQ_DEPTH, "the rings fit the queues");

/* a descriptor with its one data segment: 48 bytes, in a 64-byte slot */
struct lane_desc {
	struct via_control_segment cs;
	struct via_data_segment ds;
	u8 pad[VIA_DESC_ALIGN - sizeof(struct via_control_segment) -
	       sizeof(struct via_data_segment)];
};

static_assert(sizeof(struct lane_desc) == VIA_DESC_ALIGN, "a descriptor slot");

struct via_lane {
	struct via_dev *via;
	struct net_device *dev;
	struct napi_struct napi;
	void __iomem *db;		/* VI 0's doorbell page */
	u32 tag;
	bool vi_open;

	struct lane_desc *desc;		/* LANE_RX receive, then LANE_TX send descriptors */
	dma_addr_t desc_dma;
	u32 desc_mh;
	u8 *buf;			/* LANE_RX + LANE_TX buffers */
	dma_addr_t buf_dma;
	u32 buf_mh;

	u32 rx_next;			/* the next receive to complete (NAPI only) */
	u32 tx_head, tx_tail;		/* taken back, posted (the tx lock) */
	u64 *node_mac;			/* learnt: node -> MAC as u64 (0: none) */
};

#define LANE_DESC_BYTES	((LANE_RX + LANE_TX) * sizeof(struct lane_desc))
#define LANE_BUF_BYTES	((size_t)(LANE_RX + LANE_TX) * LANE_BUF)

static struct lane_desc *lane_rxd(struct via_lane *l, u32 i)
{
	return &l->desc[i % LANE_RX];
}

static struct lane_desc *lane_txd(struct via_lane *l, u32 i)
{
	return &l->desc[LANE_RX + i % LANE_TX];
}

static u8 *lane_buf_of(struct via_lane *l, struct lane_desc *d)
{
	return l->buf + (d - l->desc) * LANE_BUF;
}

static u32 lane_status(struct lane_desc *d)
{
	return READ_ONCE(d->cs.status);
}

/* Fill d for 'len' bytes of its buffer and post it (a 64-bit doorbell store). */
static void lane_post(struct via_lane *l, struct lane_desc *d, u32 len, u32 control,
		      u32 dest, u32 imm, unsigned int doorbell)
{
	d->cs.seg_count = 1;
	d->cs.control = control;
	d->cs.reserved = dest;
	d->cs.immediate = imm;
	d->cs.length = len;
	d->ds.data = (unsigned long)lane_buf_of(l, d);
	d->ds.handle = l->buf_mh;
	d->ds.length = len;
	WRITE_ONCE(d->cs.status, 0);
	/* writeq orders the descriptor's stores before the doorbell */
	writeq(VIA_DB_VALUE(l->desc_mh, (u8 *)d - (u8 *)l->desc), l->db + doorbell);
}

static void lane_post_rx(struct via_lane *l, struct lane_desc *d)
{
	lane_post(l, d, LANE_BUF, 0, 0, 0, VIA_DB_RECV);
}

/* ---- addressing ------------------------------------------------------------------- */

static u32 lane_dest(struct via_lane *l, const u8 *mac)
{
	u64 m;
	u32 n;

	if (is_multicast_ether_addr(mac))
		return VIA_DEST_BROADCAST;
	m = ether_addr_to_u64(mac);
	for (n = 0; n < l->via->nodes; n++)
		if (READ_ONCE(l->node_mac[n]) == m)
			return n;
	return VIA_DEST_BROADCAST;
}

static void lane_learn(struct via_lane *l, u32 node, const u8 *source)
{
	u64 m;
	u32 n;

	if (node >= l->via->nodes || node == l->via->node || !is_valid_ether_addr(source))
		return;
	m = ether_addr_to_u64(source);
	if (likely(READ_ONCE(l->node_mac[node]) == m))
		return;
	for (n = 0; n < l->via->nodes; n++)
		if (READ_ONCE(l->node_mac[n]) == m)
			WRITE_ONCE(l->node_mac[n], 0);
	WRITE_ONCE(l->node_mac[node], m);
}

/* ---- transmit ---------------------------------------------------------------------- */

/* Take back the sends the NIC completed (the tx lock held). */
static void lane_tx_reap(struct via_lane *l)
{
	while (l->tx_head != l->tx_tail && (lane_status(lane_txd(l, l->tx_head)) & VIP_STATUS_DONE)) {
		if (lane_status(lane_txd(l, l->tx_head)) & VIP_STATUS_ERROR_MASK)
			DEV_STATS_INC(l->dev, tx_errors);
		l->tx_head++;
	}
}

/* The ring is full: stop the queue; the send queue's next completion interrupts and
 * NAPI wakes it (a completion before the arm is looked for here). */
static void lane_tx_full(struct via_lane *l)
{
	netif_stop_queue(l->dev);
	via_wr(l->via, VIA_REG_ARM, VIA_ARM_VI(VIA_LANE_VI, 0));
	lane_tx_reap(l);
	if (l->tx_tail - l->tx_head < LANE_TX)
		netif_wake_queue(l->dev);
}

static netdev_tx_t lane_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct via_lane *l = netdev_priv(dev);
	struct lane_desc *d;
	u32 len = skb->len;

	if (unlikely(len < ETH_HLEN || len > LANE_BUF || !l->vi_open)) {
		DEV_STATS_INC(dev, tx_dropped);
		goto out;
	}
	lane_tx_reap(l);
	if (unlikely(l->tx_tail - l->tx_head >= LANE_TX)) {
		lane_tx_full(l);
		if (netif_queue_stopped(dev))
			return NETDEV_TX_BUSY;
	}
	d = lane_txd(l, l->tx_tail++);
	skb_copy_bits(skb, 0, lane_buf_of(l, d), len);
	lane_post(l, d, len, VIP_CONTROL_IMMEDIATE, lane_dest(l, skb->data), l->via->node,
		  VIA_DB_SEND);
	DEV_STATS_INC(dev, tx_packets);
	DEV_STATS_ADD(dev, tx_bytes, len);
	if (l->tx_tail - l->tx_head >= LANE_TX)
		lane_tx_full(l);
out:
	dev_consume_skb_any(skb);
	return NETDEV_TX_OK;
}

static void lane_tx_timeout(struct net_device *dev, unsigned int txqueue)
{
	struct via_lane *l = netdev_priv(dev);

	netdev_err(dev, "sends not completed: %u outstanding, VI state %u\n",
		   l->tx_tail - l->tx_head, readl(l->db + VIA_DB_STATE));
	DEV_STATS_INC(dev, tx_errors);
}

/* ---- receive ------------------------------------------------------------------------- */

static void lane_rx_one(struct via_lane *l, struct lane_desc *d, u32 status)
{
	struct net_device *dev = l->dev;
	u32 len = READ_ONCE(d->cs.length);
	struct sk_buff *skb;

	if (unlikely((status & VIP_STATUS_ERROR_MASK) || len < ETH_HLEN || len > LANE_BUF)) {
		if (!(status & VIP_STATUS_DESC_FLUSHED_ERROR)) {
			DEV_STATS_INC(dev, rx_errors);
			netdev_dbg(dev, "receive status %#x, %u bytes\n", status, len);
		}
		return;
	}
	skb = napi_alloc_skb(&l->napi, len);
	if (unlikely(!skb)) {
		DEV_STATS_INC(dev, rx_dropped);
		return;
	}
	skb_put_data(skb, lane_buf_of(l, d), len);
	if (status & VIP_STATUS_IMMEDIATE)
		lane_learn(l, READ_ONCE(d->cs.immediate), skb->data + ETH_ALEN);
	skb->protocol = eth_type_trans(skb, dev);
	DEV_STATS_INC(dev, rx_packets);
	DEV_STATS_ADD(dev, rx_bytes, len);
	napi_gro_receive(&l->napi, skb);
}

static bool lane_rx_ready(struct via_lane *l)
{
	return lane_status(lane_rxd(l, l->rx_next)) & VIP_STATUS_DONE;
}

static int lane_poll(struct napi_struct *napi, int budget)
{
	struct via_lane *l = container_of(napi, struct via_lane, napi);
	struct netdev_queue *txq = netdev_get_tx_queue(l->dev, 0);
	int done = 0;

	while (done < budget && lane_rx_ready(l)) {
		struct lane_desc *d = lane_rxd(l, l->rx_next);

		dma_rmb();	/* the length and data after Status */
		lane_rx_one(l, d, lane_status(d));
		lane_post_rx(l, d);
		l->rx_next++;
		done++;
	}
	__netif_tx_lock(txq, smp_processor_id());
	lane_tx_reap(l);
	if (netif_queue_stopped(l->dev) && l->tx_tail - l->tx_head < LANE_TX)
		netif_wake_queue(l->dev);
	__netif_tx_unlock(txq);
	if (done < budget && napi_complete_done(napi, done)) {
		/* the next receive interrupts; one that came in between is looked for */
		via_wr(l->via, VIA_REG_ARM, VIA_ARM_VI(VIA_LANE_VI, 1));
		if (lane_rx_ready(l))
			napi_schedule(napi);
	}
	return done;
}

/* ---- from the interrupt (via_main.c) ------------------------------------------------ */

static void lane_link(struct via_lane *l)
{
	if (via_rd(l->via, VIA_REG_STATUS) & VIA_STATUS_LINK_UP) {
		via_irq_disable(l->via, VIA_IRQ_LINK);
		netif_carrier_on(l->dev);
	}
}

void via_lane_irq(struct via_dev *via, u32 cause)
{
	struct via_lane *l = via->lane;

	if (!l || !READ_ONCE(l->vi_open))
		return;
	if (cause & VIA_IRQ_DONE)
		napi_schedule(&l->napi);
	if (cause & VIA_IRQ_LINK)
		lane_link(l);
}

/* ---- net_device ---------------------------------------------------------------------- */

static int lane_open(struct net_device *dev)
{
	struct via_lane *l = netdev_priv(dev);
	struct via_dev *via = l->via;
	int ret;
	u32 i;

	mutex_lock(&via->lock);
	ret = via_vi_create(via, VIA_OWNER_KERNEL, VIA_LANE_VI, l->tag, VIA_NO_CQ_HANDLE,
			    VIA_NO_CQ_HANDLE, true);
	mutex_unlock(&via->lock);
	if (ret < 0)
		return ret;
	memset(l->desc, 0, LANE_DESC_BYTES);
	l->rx_next = 0;
	l->tx_head = l->tx_tail = 0;
	for (i = 0; i < LANE_RX; i++)
		lane_post_rx(l, lane_rxd(l, i));
	WRITE_ONCE(l->vi_open, true);
	napi_enable(&l->napi);
	netif_carrier_off(dev);
	via_irq_enable(via, VIA_IRQ_LINK);
	lane_link(l);
	via_wr(via, VIA_REG_ARM, VIA_ARM_VI(VIA_LANE_VI, 1));
	napi_schedule(&l->napi);	/* a frame may have come before the arm */
	netif_start_queue(dev);
	return 0;
}

static int lane_stop(struct net_device *dev)
{
	struct via_lane *l = netdev_priv(dev);
	struct via_dev *via = l->via;

	netif_tx_disable(dev);
	via_irq_disable(via, VIA_IRQ_LINK);
	WRITE_ONCE(l->vi_open, false);
	napi_disable(&l->napi);
	mutex_lock(&via->lock);
	/* closing VI 0 flushes what is posted: the NIC lets go of the buffers */
	via_vi_release_all(via, VIA_OWNER_KERNEL);
	mutex_unlock(&via->lock);
	synchronize_irq(pci_irq_vector(via->pdev, 0));
	netif_carrier_off(dev);
	return 0;
}

static void lane_get_stats64(struct net_device *dev, struct rtnl_link_stats64 *stats)
{
	netdev_stats_to_stats64(stats, &dev->stats);
}

static const struct net_device_ops lane_ops = {
	.ndo_open = lane_open,
	.ndo_stop = lane_stop,
	.ndo_start_xmit = lane_xmit,
	.ndo_tx_timeout = lane_tx_timeout,
	.ndo_get_stats64 = lane_get_stats64,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

/* ---- probe and remove ------------------------------------------------------------------ */

/* the regions, the tag and the memory (via->lock held for the first two) */
static void lane_free(struct via_lane *l)
{
	struct via_dev *via = l->via;
	struct device *d = &via->pdev->dev;

	mutex_lock(&via->lock);
	via_mr_release_all(via, VIA_OWNER_KERNEL);
	via_tag_release_all(via, VIA_OWNER_KERNEL);
	mutex_unlock(&via->lock);
	if (l->desc)
		dma_free_coherent(d, LANE_DESC_BYTES, l->desc, l->desc_dma);
	if (l->buf)
		dma_free_coherent(d, LANE_BUF_BYTES, l->buf, l->buf_dma);
	kfree(l->node_mac);
}

static int lane_alloc(struct via_lane *l)
{
	struct via_dev *via = l->via;
	struct device *d = &via->pdev->dev;
	int ret;

	l->node_mac = kcalloc(via->nodes, sizeof(*l->node_mac), GFP_KERNEL);
	l->desc = dma_alloc_coherent(d, LANE_DESC_BYTES, &l->desc_dma, GFP_KERNEL);
	l->buf = dma_alloc_coherent(d, LANE_BUF_BYTES, &l->buf_dma, GFP_KERNEL);
	if (!l->node_mac || !l->desc || !l->buf)
		return -ENOMEM;
	mutex_lock(&via->lock);
	ret = via_tag_create(via, VIA_OWNER_KERNEL, &l->tag);
	if (!ret)
		ret = via_mr_register_kernel(via, l->desc, l->desc_dma, LANE_DESC_BYTES, l->tag,
					     &l->desc_mh);
	if (!ret)
		ret = via_mr_register_kernel(via, l->buf, l->buf_dma, LANE_BUF_BYTES, l->tag,
					     &l->buf_mh);
	mutex_unlock(&via->lock);
	return ret;
}

int via_lane_probe(struct via_dev *via)
{
	struct net_device *dev;
	struct via_lane *l;
	int ret;

	dev = alloc_netdev(sizeof(*l), "via%d", NET_NAME_ENUM, ether_setup);
	if (!dev)
		return -ENOMEM;
	l = netdev_priv(dev);
	l->via = via;
	l->dev = dev;
	l->db = via_db_page(via, VIA_LANE_VI);
	ret = lane_alloc(l);
	if (ret)
		goto err_free;

	SET_NETDEV_DEV(dev, &via->pdev->dev);
	dev->netdev_ops = &lane_ops;
	dev->watchdog_timeo = LANE_TX_TIMEOUT;
	dev->mtu = LANE_MTU;
	dev->max_mtu = LANE_MTU;
	if (is_valid_ether_addr(via->mac)) {
		eth_hw_addr_set(dev, via->mac);
	} else {
		eth_hw_addr_random(dev);
		dev_warn(&via->pdev->dev, "the NIC's MAC %pM is not valid: using %pM\n",
			 via->mac, dev->dev_addr);
	}
	netif_napi_add(dev, &l->napi, lane_poll);
	netif_carrier_off(dev);
	via->lane = l;
	ret = register_netdev(dev);
	if (ret) {
		via->lane = NULL;
		netif_napi_del(&l->napi);
		goto err_free;
	}
	return 0;

err_free:
	lane_free(l);
	free_netdev(dev);
	return ret;
}

void via_lane_remove(struct via_dev *via)
{
	struct via_lane *l = via->lane;
	struct net_device *dev;

	if (!l)
		return;
	dev = l->dev;
	unregister_netdev(dev);		/* lane_stop if it was up: VI 0 is closed */
	via->lane = NULL;
	netif_napi_del(&l->napi);
	lane_free(l);
	free_netdev(dev);
}
