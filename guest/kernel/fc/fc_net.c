// SPDX-License-Identifier: GPL-2.0
/*
 * PUMA-III FC adapter: IP over FC on channel 0, as a net_device (fcN).
 *
 * Framing. RFC 2625 puts a 16-byte network header (48-bit IEEE addresses) and an
 * LLC/SNAP header in front of the IP packet. We carry the same two 48-bit addresses
 * and the EtherType in an Ethernet header instead, so the stock stack (ARP, IPv4,
 * ether_setup) runs unchanged; the frame's TYPE is FC-4 IP (FC_TYPE_IP) as RFC 2625's.
 * One packet is one send of one frame: Ethernet header + IP packet <= FC_MAX_PAYLOAD,
 * so the MTU is 2112 - 14 = 2098 and no reassembly is needed (RFC 2625 allows
 * 65280-byte packets in multi-frame sequences; a 2 KB frame is what the SBus
 * adapter's DMA and the FM messages also use, and TCP does the segmenting).
 *
 * Addressing. FC switches carry no broadcast, and a frame goes to one port (N_Port
 * id). The driver learns which port each source MAC arrived from; a unicast frame to
 * a learnt MAC goes to its port, anything else (broadcast, multicast, a MAC not yet
 * seen) goes as one frame to every other port (RFC 2625 uses a broadcast server or
 * FARP for this; with a handful of ports flooding is simpler and exact). A copy to a
 * port that is not there fails with FC_IRQ_ERROR, which ends that copy only; the
 * flood does not consult FC_REG_PEERS_UP, which the driver does not follow after the
 * carrier is up (below), so a peer that boots later is reached too.
 *
 * Transmit: the skb is copied into a bounce buffer in the channel's DVMA space and
 * sent by DMA. One DMA send runs at a time per channel (FC_U_TX_BUSY), so the queue
 * stops for each packet and wakes on FC_IRQ_TXDONE; a flooded packet's next copy
 * is started from the interrupt. Receive: NAPI reads the channel's ring in memory
 * (no register read), copies each frame into an skb, clears the slot's flags and
 * gives the slots back with one FC_U_RX_RELEASE write per poll.
 *
 * Carrier: FC_STATUS_LINK_UP when the interface comes up, else the first
 * FC_IRQ_LINK. After that the link interrupt stays masked: when a peer's departure
 * is seen depends on the host's timing (docs/fabric.md), and an interrupt for it
 * would make this node's timing differ from run to run (as the SX driver). A send to
 * a departed peer fails with FC_IRQ_ERROR, which ends that send.
 */
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/interrupt.h>
#include <linux/dma-mapping.h>
#include <linux/slab.h>

#include "fc.h"
#include "retrolink/proto/fc.h"

#define FC_NET_MTU		(FC_MAX_PAYLOAD - ETH_HLEN)	/* 2098 */
#define FC_NET_RX_SLOTS		256	/* 1 MiB: about 0.5 MB of frames, 9 ms at 58 MB/s */
#define FC_NET_MIN_SLOTS	16	/* the least ring it runs with */
#define FC_NET_TX_TIMEOUT	(5 * HZ)
#define FC_NET_IRQS	(FC_IRQ_RX(FC_CH_IP) | FC_IRQ_TXDONE(FC_CH_IP) | FC_IRQ_ERROR(FC_CH_IP))

static_assert(FC_MAX_PAYLOAD <= PAGE_SIZE, "one frame fits the one-page bounce buffer");

struct fc_net {
	struct fc_dev *fc;
	struct net_device *dev;
	struct napi_struct napi;
	void __iomem *page;		/* channel 0's page */

	/* channel 0's DVMA space: the ring at 0, the bounce buffer after it */
	struct fc_dvma_table tbl;
	void *ring;
	dma_addr_t ring_dma;
	u32 rx_slots;
	u32 rx_next;			/* the next slot to read (NAPI only) */
	void *tx_buf;
	dma_addr_t tx_dma;
	u32 tx_dvma;

	spinlock_t tx_lock;		/* below; taken in the interrupt */
	bool running;			/* the channel is enabled: sends may start */
	bool tx_active;			/* a DMA send of tx_buf is under way */
	bool tx_flood;			/* ... to every other port in turn */
	u32 tx_port, tx_len;
	u32 reg_len, reg_dest;		/* what FC_U_TX_LEN and FC_U_TX_DEST hold */

	u64 *port_mac;			/* learnt: port -> MAC as u64 (0: none) */
};

static struct fc_rx_slot *fc_net_slot(struct fc_net *net, u32 i)
{
	return net->ring + (size_t)i * FC_RX_SLOT_SIZE;
}

/* the slot's words are in the card's byte order (fc-regs.h) */
static u32 fc_slot_word(struct fc_net *net, const unsigned int *w)
{
	return fc_mem32(net->fc->big_endian, READ_ONCE(*w));
}

/* ---- addressing ------------------------------------------------------------ */

/* the first port >= from to flood to, or fc->nodes if none */
static u32 fc_net_flood_port(struct fc_net *net, u32 from)
{
	u32 p;

	for (p = from; p < net->fc->nodes; p++)
		if (p != net->fc->node)
			return p;
	return net->fc->nodes;
}

/* the port a destination MAC was learnt on, or -1: flood */
static int fc_net_port_of(struct fc_net *net, const u8 *dest)
{
	u64 mac;
	u32 p;

	if (is_multicast_ether_addr(dest))
		return -1;
	mac = ether_addr_to_u64(dest);
	for (p = 0; p < net->fc->nodes; p++)
		if (READ_ONCE(net->port_mac[p]) == mac)
			return p;
	return -1;
}

static void fc_net_learn(struct fc_net *net, u32 port, const u8 *source)
{
	u64 mac;
	u32 p;

	if (!is_valid_ether_addr(source))
		return;
	mac = ether_addr_to_u64(source);
	if (likely(READ_ONCE(net->port_mac[port]) == mac))
		return;
	/* a MAC lives on one port: forget it wherever else it was */
	for (p = 0; p < net->fc->nodes; p++)
		if (READ_ONCE(net->port_mac[p]) == mac)
			WRITE_ONCE(net->port_mac[p], 0);
	WRITE_ONCE(net->port_mac[port], mac);
}

/* ---- transmit ---------------------------------------------------------------- */

/* Start the DMA send of tx_buf to port (tx_lock held): 1 to 3 register writes. */
static void fc_net_tx_start(struct fc_net *net, u32 port)
{
	if (net->reg_len != net->tx_len) {
		fc_writel(net->fc, net->tx_len, net->page + FC_U_TX_LEN);
		net->reg_len = net->tx_len;
	}
	if (net->reg_dest != port) {
		fc_writel(net->fc, port, net->page + FC_U_TX_DEST);
		net->reg_dest = port;
	}
	net->tx_port = port;
	net->tx_active = true;
	fc_writel(net->fc, 0, net->page + FC_U_TX_GO);
}

static netdev_tx_t fc_net_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct fc_net *net = netdev_priv(dev);
	unsigned long flags;
	u32 len = skb->len;
	int port;

	if (unlikely(len < ETH_HLEN || len > FC_MAX_PAYLOAD)) {
		DEV_STATS_INC(dev, tx_dropped);
		goto out;
	}
	port = fc_net_port_of(net, skb->data);
	/* the queue runs only while no send is under way: tx_buf is free */
	skb_copy_bits(skb, 0, net->tx_buf, len);

	spin_lock_irqsave(&net->tx_lock, flags);
	if (unlikely(!net->running || net->tx_active)) {
		spin_unlock_irqrestore(&net->tx_lock, flags);
		DEV_STATS_INC(dev, tx_dropped);
		goto out;
	}
	net->tx_len = len;
	net->tx_flood = port < 0;
	if (port < 0)
		port = fc_net_flood_port(net, 0);
	if (port < net->fc->nodes) {
		netif_stop_queue(dev);
		fc_net_tx_start(net, port);
	}
	spin_unlock_irqrestore(&net->tx_lock, flags);
	DEV_STATS_INC(dev, tx_packets);
	DEV_STATS_ADD(dev, tx_bytes, len);
out:
	dev_consume_skb_any(skb);
	return NETDEV_TX_OK;
}

/* The send under way ended (TXDONE) or was refused (ERROR): the next copy, or wake. */
static void fc_net_tx_complete(struct fc_net *net, bool refused)
{
	struct net_device *dev = net->dev;
	u32 next = net->fc->nodes;

	spin_lock(&net->tx_lock);
	if (!net->tx_active)
		goto out;
	if (refused) {
		/* a flooded copy to a port that is not there is no error of the packet's */
		if (!net->tx_flood)
			DEV_STATS_INC(dev, tx_errors);
		netdev_dbg(dev, "send to port %u refused: FC_ERR %u\n", net->tx_port,
			   fc_readl(net->fc, net->page + FC_U_TX_STATUS));
	}
	if (net->tx_flood && net->running)
		next = fc_net_flood_port(net, net->tx_port + 1);
	if (next < net->fc->nodes) {
		fc_net_tx_start(net, next);
	} else {
		net->tx_active = false;
		if (net->running)
			netif_wake_queue(dev);
	}
out:
	spin_unlock(&net->tx_lock);
}

/* The TXDONE never came (a lost interrupt would be a device bug): take the queue back. */
static void fc_net_tx_timeout(struct net_device *dev, unsigned int txqueue)
{
	struct fc_net *net = netdev_priv(dev);
	unsigned long flags;

	spin_lock_irqsave(&net->tx_lock, flags);
	netdev_err(dev, "send to port %u timed out (FC_U_TX_BUSY %u, FC_U_TX_STATUS %u)\n",
		   net->tx_port, fc_readl(net->fc, net->page + FC_U_TX_BUSY),
		   fc_readl(net->fc, net->page + FC_U_TX_STATUS));
	net->tx_active = false;
	DEV_STATS_INC(dev, tx_errors);
	if (net->running)
		netif_wake_queue(dev);
	spin_unlock_irqrestore(&net->tx_lock, flags);
}

/* ---- receive ------------------------------------------------------------------ */

static bool fc_net_rx_ready(struct fc_net *net)
{
	return fc_slot_word(net, &fc_net_slot(net, net->rx_next)->flags) & FC_RXS_VALID;
}

static void fc_net_rx_one(struct fc_net *net, const struct fc_rx_slot *s, u32 flags)
{
	struct net_device *dev = net->dev;
	u32 len = fc_slot_word(net, &s->len), src = fc_slot_word(net, &s->src);
	u32 whole = FC_FCTL_FIRST | FC_FCTL_LAST;
	struct sk_buff *skb;

	/* one packet, one frame: anything else is not from this driver */
	if (unlikely((FC_RXS_FCTL(flags) & whole) != whole || FC_RXS_TYPE(flags) != FC_TYPE_IP ||
		     len < ETH_HLEN || len > FC_MAX_PAYLOAD ||
		     src >= net->fc->nodes || src == net->fc->node)) {
		DEV_STATS_INC(dev, rx_errors);
		DEV_STATS_INC(dev, rx_frame_errors);
		netdev_dbg(dev, "frame refused: flags %#x, %u bytes from port %u\n",
			   flags, len, src);
		return;
	}
	skb = napi_alloc_skb(&net->napi, len);
	if (unlikely(!skb)) {
		DEV_STATS_INC(dev, rx_dropped);
		return;
	}
	skb_put_data(skb, (const u8 *)s + FC_RX_PAYLOAD, len);
	fc_net_learn(net, src, skb->data + ETH_ALEN);
	skb->protocol = eth_type_trans(skb, dev);
	DEV_STATS_INC(dev, rx_packets);
	DEV_STATS_ADD(dev, rx_bytes, len);
	napi_gro_receive(&net->napi, skb);
}

static int fc_net_poll(struct napi_struct *napi, int budget)
{
	struct fc_net *net = container_of(napi, struct fc_net, napi);
	struct fc_dev *fc = net->fc;
	int done = 0;

	while (done < budget && fc_net_rx_ready(net)) {
		struct fc_rx_slot *s = fc_net_slot(net, net->rx_next);
		u32 flags = fc_slot_word(net, &s->flags);

		dma_rmb();	/* the header and payload after FC_RXS_VALID */
		fc_net_rx_one(net, s, flags);
		WRITE_ONCE(s->flags, 0);
		net->rx_next = (net->rx_next + 1) % net->rx_slots;
		done++;
	}
	/* the slots go back in one write (writel orders the flag clears before it) */
	if (done)
		fc_writel(net->fc, done, net->page + FC_U_RX_RELEASE);
	if (done < budget && napi_complete_done(napi, done)) {
		/*
		 * Drop the RX cause raised while masked (the frames are read), unmask, and
		 * look once more in memory for a frame that came in between.
		 */
		fc_wr(fc, FC_REG_IRQ_STATUS, FC_IRQ_RX(FC_CH_IP));
		fc_irq_enable(fc, FC_IRQ_RX(FC_CH_IP));
		if (fc_net_rx_ready(net))
			napi_schedule(napi);
	}
	return done;
}

/* ---- from the interrupt (fc_main.c) --------------------------------------------- */

void fc_net_irq(struct fc_dev *fc, u32 cause)
{
	struct fc_net *net = fc->net;

	if (cause & (FC_IRQ_TXDONE(FC_CH_IP) | FC_IRQ_ERROR(FC_CH_IP)))
		fc_net_tx_complete(net, cause & FC_IRQ_ERROR(FC_CH_IP));
	if (cause & FC_IRQ_RX(FC_CH_IP)) {
		/* masked until the poll has read the ring dry */
		fc_irq_disable(fc, FC_IRQ_RX(FC_CH_IP));
		napi_schedule(&net->napi);
	}
}

/* FC_IRQ_LINK, enabled only while the carrier is off (see the banner) */
void fc_net_link(struct fc_dev *fc)
{
	struct fc_net *net = fc->net;

	if (fc_rd(fc, FC_REG_STATUS) & FC_STATUS_LINK_UP) {
		fc_irq_disable(fc, FC_IRQ_LINK);
		netif_carrier_on(net->dev);
	}
}

/* ---- net_device ------------------------------------------------------------------ */

static int fc_net_open(struct net_device *dev)
{
	struct fc_net *net = netdev_priv(dev);
	struct fc_dev *fc = net->fc;
	u32 i;
	int ret;

	for (i = 0; i < net->rx_slots; i++)
		WRITE_ONCE(fc_net_slot(net, i)->flags, 0);
	net->rx_next = 0;
	ret = fc_chan_enable(fc, FC_CH_IP, &net->tbl, 0, net->rx_slots);
	if (ret)
		return ret;
	/* the bounce buffer never moves: its address is written once */
	fc_writel(net->fc, net->tx_dvma, net->page + FC_U_TX_ADDR);
	spin_lock_irq(&net->tx_lock);
	net->reg_len = net->reg_dest = U32_MAX;	/* unknown: written by the first send */
	net->tx_active = false;
	net->running = true;
	spin_unlock_irq(&net->tx_lock);
	napi_enable(&net->napi);
	netif_carrier_off(dev);
	fc_irq_enable(fc, FC_NET_IRQS | FC_IRQ_LINK);
	fc_net_link(fc);	/* the link may be up already */
	netif_start_queue(dev);
	return 0;
}

static int fc_net_stop(struct net_device *dev)
{
	struct fc_net *net = netdev_priv(dev);
	struct fc_dev *fc = net->fc;

	netif_tx_disable(dev);
	spin_lock_irq(&net->tx_lock);
	net->running = false;		/* a completion starts no further send */
	spin_unlock_irq(&net->tx_lock);
	napi_disable(&net->napi);	/* no poll runs, none unmasks RX */
	fc_irq_disable(fc, FC_NET_IRQS | FC_IRQ_LINK);
	fc_chan_disable(fc, FC_CH_IP);	/* the adapter lets go of the ring and tx_buf */
	synchronize_irq(fc->irq);
	net->tx_active = false;
	netif_carrier_off(dev);
	return 0;
}

static void fc_net_get_stats64(struct net_device *dev, struct rtnl_link_stats64 *stats)
{
	struct fc_net *net = netdev_priv(dev);

	netdev_stats_to_stats64(stats, &dev->stats);
	/* frames the adapter dropped for want of a free slot */
	stats->rx_missed_errors = fc_ch_rd(net->fc, FC_CH_IP, FC_CH_RX_DROPS);
}

static const struct net_device_ops fc_net_ops = {
	.ndo_open = fc_net_open,
	.ndo_stop = fc_net_stop,
	.ndo_start_xmit = fc_net_xmit,
	.ndo_tx_timeout = fc_net_tx_timeout,
	.ndo_get_stats64 = fc_net_get_stats64,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

/* ---- probe and remove ---------------------------------------------------------- */

static void fc_net_free_dma(struct fc_net *net)
{
	struct device *d = net->fc->dev;

	fc_dvma_table_free(net->fc, &net->tbl);
	if (net->tx_buf)
		dma_free_coherent(d, PAGE_SIZE, net->tx_buf, net->tx_dma);
	if (net->ring)
		dma_free_coherent(d, (size_t)net->rx_slots * FC_RX_SLOT_SIZE, net->ring,
				  net->ring_dma);
}

/*
 * The ring, as large as FC_NET_RX_SLOTS and the DMA API allow: sparc32's gives at most
 * 256 KiB of coherent memory in one piece (arch/sparc/mm/iommu.c, sbus_iommu_alloc).
 */
static void *fc_net_alloc_ring(struct fc_net *net)
{
	struct device *d = net->fc->dev;
	void *ring;

	for (net->rx_slots = FC_NET_RX_SLOTS; net->rx_slots >= FC_NET_MIN_SLOTS;
	     net->rx_slots /= 2) {
		ring = dma_alloc_coherent(d, (size_t)net->rx_slots * FC_RX_SLOT_SIZE,
					  &net->ring_dma, GFP_KERNEL | __GFP_NOWARN);
		if (ring) {
			if (net->rx_slots != FC_NET_RX_SLOTS)
				dev_info(d, "IP receive ring of %u slots (DMA memory is short)\n",
					 net->rx_slots);
			return ring;
		}
	}
	return NULL;
}

static int fc_net_alloc_dma(struct fc_net *net)
{
	struct device *d = net->fc->dev;

	net->ring = fc_net_alloc_ring(net);
	net->tx_buf = dma_alloc_coherent(d, PAGE_SIZE, &net->tx_dma, GFP_KERNEL);
	if (!net->ring || !net->tx_buf ||
	    fc_dvma_table_alloc(net->fc, &net->tbl, net->rx_slots + 1))
		return -ENOMEM;
	fc_dvma_map(&net->tbl, 0, net->ring_dma, net->rx_slots, true);
	fc_dvma_map(&net->tbl, net->rx_slots, net->tx_dma, 1, false);
	net->tx_dvma = net->rx_slots * FC_DVMA_PAGE;
	return 0;
}

int fc_net_probe(struct fc_dev *fc)
{
	struct net_device *dev;
	struct fc_net *net;
	int ret;

	dev = alloc_netdev(sizeof(*net), "fc%d", NET_NAME_ENUM, ether_setup);
	if (!dev)
		return -ENOMEM;
	net = netdev_priv(dev);
	net->fc = fc;
	net->dev = dev;
	net->page = fc->chan[FC_CH_IP];
	spin_lock_init(&net->tx_lock);
	net->port_mac = kcalloc(fc->nodes, sizeof(*net->port_mac), GFP_KERNEL);
	ret = net->port_mac ? fc_net_alloc_dma(net) : -ENOMEM;
	if (ret)
		goto err_free;

	SET_NETDEV_DEV(dev, fc->dev);
	dev->netdev_ops = &fc_net_ops;
	dev->watchdog_timeo = FC_NET_TX_TIMEOUT;
	dev->mtu = FC_NET_MTU;
	dev->max_mtu = FC_NET_MTU;
	if (is_valid_ether_addr(fc->mac)) {
		eth_hw_addr_set(dev, fc->mac);
	} else {
		eth_hw_addr_random(dev);
		dev_warn(fc->dev, "the adapter's MAC %pM is not valid: using %pM\n",
			 fc->mac, dev->dev_addr);
	}
	netif_napi_add(dev, &net->napi, fc_net_poll);
	netif_carrier_off(dev);
	fc->net = net;
	ret = register_netdev(dev);
	if (ret) {
		fc->net = NULL;
		netif_napi_del(&net->napi);
		goto err_free;
	}
	return 0;

err_free:
	fc_net_free_dma(net);
	kfree(net->port_mac);
	free_netdev(dev);
	return ret;
}

void fc_net_remove(struct fc_dev *fc)
{
	struct fc_net *net = fc->net;
	struct net_device *dev = net->dev;

	unregister_netdev(dev);		/* fc_net_stop if it was up: channel 0 is off */
	fc->net = NULL;
	netif_napi_del(&net->napi);
	fc_net_free_dma(net);
	kfree(net->port_mac);
	free_netdev(dev);
}
