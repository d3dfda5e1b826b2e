// SPDX-License-Identifier: GPL-2.0
/*
 * Driver for the NEC Cenju-3 network interface, as modelled by retrolink (qemu/cenju3/;
 * registers and rings: retrolink/regs/cenju3-regs.h; docs/boards/cenju3-driver.md).
 *
 * The interface does message communication (one packet into a receive slot the
 * destination reserved for this sender) and remote DMA (up to 128 KiB written at a
 * physical address of the destination, without its CPU). The driver gives both to one
 * in-kernel client (cenju3_nic.h: norma.ko's NORMA IPC/DE transport) and, for tests, to
 * the opener of /dev/cenju3 (c3_user.c).
 *
 * Lifetime: probe publishes the interface to the API once it is enabled; remove tells
 * the client (down), withdraws it from the API and waits for the calls in flight (SRCU),
 * resets the interface (it stops touching memory), frees the interrupt, fails what was
 * still queued with -ENODEV and frees the memory.
 */
#include <linux/module.h>
#include <linux/interrupt.h>
#include <linux/slab.h>
#include <linux/log2.h>
#include <linux/dma-mapping.h>

#include "c3.h"

unsigned int c3_param_slots = 4;
module_param_named(slots, c3_param_slots, uint, 0444);
MODULE_PARM_DESC(slots, "receive slots per peer node (1.." __stringify(C3_MAX_SLOTS)
		 ", default 4): the protocol receive buffers reserved per peer");

unsigned int c3_param_requests = 32;
module_param_named(requests, c3_param_requests, uint, 0444);
MODULE_PARM_DESC(requests, "request ring entries (a power of 2, 2.." __stringify(C3_RING_MAX)
		 ", default 32); more requests wait in the driver");

unsigned int c3_param_events = 1024;
module_param_named(events, c3_param_events, uint, 0444);
MODULE_PARM_DESC(events, "event ring entries (a power of 2, 2.." __stringify(C3_RING_MAX)
		 ", default 1024)");

static bool c3_ring_size_ok(unsigned int n)
{
	return n >= 2 && n <= C3_RING_MAX && is_power_of_2(n);
}

/* ---- interrupts ------------------------------------------------------------------- */

/*
 * With MSI (the interface's own vector) no register is read here: the events waiting
 * that may be handled here (completions of requests marked C3_NIC_DONE_IRQ: the
 * protocol messages a client posts and forgets; messages the client's rx_irq() takes)
 * are consumed at once, and the thread is woken only for what is left
 * (c3_events_irq); it acks and consumes that. On a shared
 * INTx line the cause is read, and the interface's interrupts are masked until the
 * thread is done.
 */
static irqreturn_t c3_irq(int irq, void *data)
{
	struct c3_dev *c3 = data;

	if (c3->msi)
		return c3_events_irq(c3) ? IRQ_HANDLED : IRQ_WAKE_THREAD;
	if (!(c3_rd(c3, C3_REG_IRQ_STATUS) & c3->irq_mask))
		return IRQ_NONE;
	c3_wr(c3, C3_REG_IRQ_MASK, 0);
	return IRQ_WAKE_THREAD;
}

/* Ack first: an event posted while the events are read raises the interrupt again. */
static irqreturn_t c3_irq_thread(int irq, void *data)
{
	struct c3_dev *c3 = data;

	c3->irqs++;
	c3_wr(c3, C3_REG_IRQ_STATUS, C3_IRQS);
	c3_events(c3);
	if (!c3->msi)
		c3_wr(c3, C3_REG_IRQ_MASK, c3->irq_mask);
	return IRQ_HANDLED;
}

static void c3_rx_work(struct work_struct *work)
{
	struct c3_dev *c3 = container_of(work, struct c3_dev, rx_work);

	mutex_lock(&c3->ev_lock);
	c3->held = false;
	mutex_unlock(&c3->ev_lock);
	c3_events(c3);
}

/* ---- sysfs: /sys/class/misc/cenju3/ ------------------------------------------------ */

static struct c3_dev *c3_from_dev(struct device *dev)
{
	struct miscdevice *misc = dev_get_drvdata(dev);

	return container_of(misc, struct c3_dev, misc);
}

#define C3_REG_ATTR(_name, _reg)						\
static ssize_t _name##_show(struct device *dev, struct device_attribute *a,	\
			    char *buf)						\
{										\
	return sysfs_emit(buf, "%u\n", c3_rd(c3_from_dev(dev), (_reg)));	\
}										\
static DEVICE_ATTR_RO(_name)

#define C3_CNT_ATTR(_name)							\
static ssize_t _name##_show(struct device *dev, struct device_attribute *a,	\
			    char *buf)						\
{										\
	return sysfs_emit(buf, "%llu\n",					\
			  (unsigned long long)READ_ONCE(c3_from_dev(dev)->_name));	\
}										\
static DEVICE_ATTR_RO(_name)

/* the interface's counters */
C3_REG_ATTR(tx_packets, C3_REG_TX_PACKETS);
C3_REG_ATTR(rx_packets, C3_REG_RX_PACKETS);
C3_REG_ATTR(req_errors, C3_REG_REQ_ERRORS);
C3_REG_ATTR(stalls, C3_REG_STALLS);
C3_REG_ATTR(cache_misses, C3_REG_CACHE_MISSES);
C3_REG_ATTR(rdma_errors, C3_REG_RDMA_ERRORS);
C3_REG_ATTR(cache_ops, C3_REG_CACHE_OPS);
/* the driver's */
C3_CNT_ATTR(node);
C3_CNT_ATTR(nodes);
C3_CNT_ATTR(slots);
C3_CNT_ATTR(irqs);
C3_CNT_ATTR(irqs_hard);
C3_CNT_ATTR(rx_irq);
C3_CNT_ATTR(events);
C3_CNT_ATTR(msgs_tx);
C3_CNT_ATTR(rdma_tx);
C3_CNT_ATTR(msgs_rx);
C3_CNT_ATTR(rx_kept);
C3_CNT_ATTR(rx_held);
C3_CNT_ATTR(rx_unclaimed);
C3_CNT_ATTR(rdma_rx);
C3_CNT_ATTR(req_failed);
C3_CNT_ATTR(backlogged);
C3_CNT_ATTR(bad_events);
C3_CNT_ATTR(rx_refused);

static struct attribute *c3_attrs[] = {
	&dev_attr_tx_packets.attr, &dev_attr_rx_packets.attr, &dev_attr_req_errors.attr,
	&dev_attr_stalls.attr, &dev_attr_cache_misses.attr, &dev_attr_rdma_errors.attr,
	&dev_attr_cache_ops.attr,
	&dev_attr_node.attr, &dev_attr_nodes.attr, &dev_attr_slots.attr, &dev_attr_irqs.attr,
	&dev_attr_irqs_hard.attr, &dev_attr_rx_irq.attr, &dev_attr_events.attr, &dev_attr_msgs_tx.attr, &dev_attr_rdma_tx.attr,
	&dev_attr_msgs_rx.attr, &dev_attr_rx_kept.attr, &dev_attr_rx_held.attr,
	&dev_attr_rx_unclaimed.attr, &dev_attr_rdma_rx.attr, &dev_attr_req_failed.attr,
	&dev_attr_backlogged.attr, &dev_attr_bad_events.attr, &dev_attr_rx_refused.attr, NULL,
};
ATTRIBUTE_GROUPS(c3);

/* ---- PCI ---------------------------------------------------------------------------- */

static int c3_identify(struct c3_dev *c3)
{
	struct device *dev = &c3->pdev->dev;
	u32 id = c3_rd(c3, C3_REG_ID), ver = c3_rd(c3, C3_REG_VERSION);

	if (id != C3_ID_VALUE || ver != C3_VERSION) {
		dev_err(dev, "not a Cenju-3 interface of version %u (ID %08x, version %u)\n",
			C3_VERSION, id, ver);
		return -ENODEV;
	}
	c3->node = c3_rd(c3, C3_REG_NODE_ID);
	c3->nodes = c3_rd(c3, C3_REG_NUM_NODES);
	if (c3->nodes < 1 || c3->nodes > C3_MAX_NODES || c3->node >= c3->nodes) {
		dev_err(dev, "node %u of %u nodes: the interface is misconfigured\n",
			c3->node, c3->nodes);
		return -ENODEV;
	}
	return 0;
}

static int c3_enable(struct c3_dev *c3)
{
	u32 status;

	c3->irq_mask = C3_IRQS;
	c3_wr(c3, C3_REG_IRQ_MASK, c3->irq_mask);
	c3_wr(c3, C3_REG_CTRL, C3_CTRL_ENABLE);
	status = c3_rd(c3, C3_REG_STATUS);
	if (!(status & C3_STATUS_ENABLED)) {
		dev_err(&c3->pdev->dev, "the interface refused its configuration (error %u)\n",
			c3_rd(c3, C3_REG_ERROR));
		return -EIO;
	}
	return 0;
}

static int c3_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	struct c3_dev *c3;
	int ret;

	c3 = devm_kzalloc(dev, sizeof(*c3), GFP_KERNEL);
	if (!c3)
		return -ENOMEM;
	c3->pdev = pdev;
	c3->slots = c3_param_slots;
	spin_lock_init(&c3->req_lock);
	spin_lock_init(&c3->cache_lock);
	mutex_init(&c3->ev_lock);
	spin_lock_init(&c3->ev_busy_lock);
	INIT_LIST_HEAD(&c3->backlog);
	INIT_WORK(&c3->rx_work, c3_rx_work);

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = pcim_iomap_regions(pdev, BIT(0), C3_DRV_NAME);
	if (ret)
		return ret;
	if (pci_resource_len(pdev, 0) < C3_BAR_SIZE) {
		dev_err(dev, "BAR0 has %llu bytes, cenju3-regs.h says %u\n",
			(u64)pci_resource_len(pdev, 0), C3_BAR_SIZE);
		return -ENODEV;
	}
	c3->regs = pcim_iomap_table(pdev)[0];
	ret = c3_identify(c3);
	if (ret)
		return ret;
	/* physical addresses of 64 bits in every ring entry and register pair */
	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	pci_set_master(pdev);
	c3_wr(c3, C3_REG_CTRL, C3_CTRL_RESET);	/* disabled, interrupts masked */
	c3_cache_init(c3);

	ret = c3_rings_alloc(c3);
	if (ret)
		goto err_slots;
	c3_rings_program(c3);

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_LEGACY);
	if (ret < 0)
		goto err_slots;
	c3->msi = pdev->msi_enabled;
	c3->irq = pci_irq_vector(pdev, 0);
	/* not devm: the handler must go before its vector (err_irq, c3_remove) */
	ret = request_threaded_irq(c3->irq, c3_irq, c3_irq_thread,
				   c3->msi ? 0 : IRQF_SHARED, C3_DRV_NAME, c3);
	if (ret)
		goto err_vectors;
	ret = c3_enable(c3);
	if (ret)
		goto err_irq;
	pci_set_drvdata(pdev, c3);

	c3->misc = (struct miscdevice){
		.minor = MISC_DYNAMIC_MINOR, .name = C3_DRV_NAME, .fops = &c3_user_fops,
		.parent = dev, .groups = c3_groups, .mode = 0600,
	};
	ret = misc_register(&c3->misc);
	if (ret)
		goto err_irq;
	ret = c3_publish(c3);
	if (ret) {
		dev_err(dev, "a second Cenju-3 interface: only the first is used\n");
		goto err_misc;
	}
	dev_info(dev, "node %u of %u, %u receive slots per peer, %s\n", c3->node, c3->nodes,
		 c3->slots, c3->msi ? "MSI" : "INTx");
	return 0;

err_misc:
	misc_deregister(&c3->misc);
err_irq:
	c3_wr(c3, C3_REG_CTRL, C3_CTRL_RESET);	/* off the network, interrupts masked */
	free_irq(c3->irq, c3);
err_vectors:
	pci_free_irq_vectors(pdev);
err_slots:
	c3_rings_free(c3);
	return ret;
}

static void c3_remove(struct pci_dev *pdev)
{
	struct c3_dev *c3 = pci_get_drvdata(pdev);

	misc_deregister(&c3->misc);
	c3_unpublish(c3);		/* the client told; no API call reaches c3 now */
	spin_lock_irq(&c3->req_lock);
	c3->dead = true;
	spin_unlock_irq(&c3->req_lock);
	c3_wr(c3, C3_REG_CTRL, C3_CTRL_RESET);	/* it touches no memory from here on */
	free_irq(c3->irq, c3);		/* and the thread is done */
	cancel_work_sync(&c3->rx_work);
	pci_free_irq_vectors(pdev);
	c3_fail_all(c3);
	c3_rings_free(c3);
}

static const struct pci_device_id c3_ids[] = {
	{ PCI_DEVICE(C3_PCI_VENDOR_ID, C3_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, c3_ids);

static struct pci_driver c3_driver = {
	.name = C3_DRV_NAME,
	.id_table = c3_ids,
	.probe = c3_probe,
	.remove = c3_remove,
};

static int __init c3_init(void)
{
	if (!c3_param_slots || c3_param_slots > C3_MAX_SLOTS ||
	    !c3_ring_size_ok(c3_param_requests) || !c3_ring_size_ok(c3_param_events)) {
		pr_err(C3_DRV_NAME ": slots=%u requests=%u events=%u: out of range (modinfo)\n",
		       c3_param_slots, c3_param_requests, c3_param_events);
		return -EINVAL;
	}
	return pci_register_driver(&c3_driver);
}

static void __exit c3_exit(void)
{
	pci_unregister_driver(&c3_driver);
}

module_init(c3_init);
module_exit(c3_exit);

MODULE_DESCRIPTION("NEC Cenju-3 network interface (retrolink model): messages, remote DMA");
MODULE_LICENSE("GPL");
