// SPDX-License-Identifier: GPL-2.0
/*
 * Driver for the PUMA-III Fibre Channel adapter, as modelled by retrolink (qemu/fc/;
 * registers: retrolink/regs/fc-regs.h; docs/boards/fc-driver.md).
 *
 * One adapter gives two things: a network interface (fcN in `ip link`: IP over FC on
 * channel 0, fc_net.c) and the character device /dev/fcN, which hands channel 1 to
 * one process at a time (the raw protocol and Fast Messages, fc_user.c).
 *
 * Lifetime: the driver's state (struct fc_dev) is reference counted: the board holds
 * one reference from probe to remove, each open file one. Remove (rmmod, or an unbind
 * with the device open) takes the network interface down and unregisters it, marks the
 * state dead, waits (SRCU) for the user calls still in the driver, then disables the
 * user channel (the adapter stops touching its memory when that write returns), zaps
 * the process's mappings (a touch is then SIGBUS) and resets the adapter. A file still
 * open then fails every call with ENODEV; its DMA memory is freed by its last close,
 * when no mapping of it can remain.
 */
#include <linux/module.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/slab.h>
#include <linux/idr.h>
#include <linux/dma-mapping.h>

#include "fc.h"

/* the adapter joins its link within milliseconds of modelled time; poll every 1 ms */
#define FC_READY_POLL_US	1000
#define FC_READY_TIMEOUT_US	(10 * USEC_PER_SEC)

static DEFINE_IDA(fc_ida);

static void fc_free(struct kref *ref)
{
	struct fc_dev *fc = container_of(ref, struct fc_dev, ref);

	pr_debug("%s: state freed\n", fc->name);
	cleanup_srcu_struct(&fc->srcu);
	mutex_destroy(&fc->user_lock);
	pci_dev_put(fc->pdev);
	kfree(fc);
}

void fc_get(struct fc_dev *fc)
{
	kref_get(&fc->ref);
}

void fc_put(struct fc_dev *fc)
{
	kref_put(&fc->ref, fc_free);
}

/* ---- interrupts ---------------------------------------------------------- */

/* FC_REG_IRQ_MASK is written only when it changes: each write is SBus time */
static void fc_irq_update(struct fc_dev *fc, u32 set, u32 clear)
{
	unsigned long flags;
	u32 mask;

	spin_lock_irqsave(&fc->irq_lock, flags);
	mask = (fc->irq_mask | set) & ~clear;
	if (mask != fc->irq_mask) {
		WRITE_ONCE(fc->irq_mask, mask);
		fc_wr(fc, FC_REG_IRQ_MASK, mask);
	}
	spin_unlock_irqrestore(&fc->irq_lock, flags);
}

void fc_irq_enable(struct fc_dev *fc, u32 causes)
{
	fc_irq_update(fc, causes, 0);
}

void fc_irq_disable(struct fc_dev *fc, u32 causes)
{
	fc_irq_update(fc, 0, causes);
}

/*
 * Only channel 0 and the link interrupt: the user channel's process polls its ring
 * and FC_U_TX_BUSY (Fast Messages takes no interrupts), so its causes stay masked.
 */
static irqreturn_t fc_irq(int irq, void *data)
{
	struct fc_dev *fc = data;
	u32 cause = fc_rd(fc, FC_REG_IRQ_STATUS) & READ_ONCE(fc->irq_mask);

	if (!cause)
		return IRQ_NONE;	/* the shared INTx line: another device's */
	fc_wr(fc, FC_REG_IRQ_STATUS, cause);
	fc->irqs++;
	if (cause & (FC_IRQ_RX(FC_CH_IP) | FC_IRQ_TXDONE(FC_CH_IP) | FC_IRQ_ERROR(FC_CH_IP)))
		fc_net_irq(fc, cause);
	if (cause & FC_IRQ_LINK)
		fc_net_link(fc);
	return IRQ_HANDLED;
}

/* ---- sysfs: /sys/class/misc/fcN/ ------------------------------------------ */

static struct fc_dev *fc_from_dev(struct device *dev)
{
	struct miscdevice *misc = dev_get_drvdata(dev);

	return container_of(misc, struct fc_dev, misc);
}

#define FC_REG_ATTR(_name, _reg)						\
static ssize_t _name##_show(struct device *dev, struct device_attribute *a,	\
			    char *buf)						\
{										\
	return sysfs_emit(buf, "%u\n", fc_rd(fc_from_dev(dev), (_reg)));	\
}										\
static DEVICE_ATTR_RO(_name)

#define FC_CH_ATTR(_name, _c, _reg)	FC_REG_ATTR(_name, FC_CH_REG(_c, _reg))

FC_REG_ATTR(node, FC_REG_NODE_ID);
FC_REG_ATTR(nodes, FC_REG_NUM_NODES);
FC_REG_ATTR(peers_up, FC_REG_PEERS_UP);
FC_CH_ATTR(ip_tx_frames, FC_CH_IP, FC_CH_TX_FRAMES);
FC_CH_ATTR(ip_rx_frames, FC_CH_IP, FC_CH_RX_FRAMES);
FC_CH_ATTR(ip_rx_drops, FC_CH_IP, FC_CH_RX_DROPS);
FC_CH_ATTR(ip_errors, FC_CH_IP, FC_CH_ERRORS);
FC_CH_ATTR(user_tx_frames, FC_CH_USER, FC_CH_TX_FRAMES);
FC_CH_ATTR(user_rx_frames, FC_CH_USER, FC_CH_RX_FRAMES);
FC_CH_ATTR(user_rx_drops, FC_CH_USER, FC_CH_RX_DROPS);
FC_CH_ATTR(user_errors, FC_CH_USER, FC_CH_ERRORS);

static ssize_t irqs_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n", (unsigned long long)READ_ONCE(fc_from_dev(dev)->irqs));
}
static DEVICE_ATTR_RO(irqs);

static struct attribute *fc_attrs[] = {
	&dev_attr_node.attr, &dev_attr_nodes.attr, &dev_attr_peers_up.attr,
	&dev_attr_ip_tx_frames.attr, &dev_attr_ip_rx_frames.attr,
	&dev_attr_ip_rx_drops.attr, &dev_attr_ip_errors.attr,
	&dev_attr_user_tx_frames.attr, &dev_attr_user_rx_frames.attr,
	&dev_attr_user_rx_drops.attr, &dev_attr_user_errors.attr,
	&dev_attr_irqs.attr, NULL,
};
ATTRIBUTE_GROUPS(fc);

/* ---- PCI ------------------------------------------------------------------- */

static int fc_map_bars(struct fc_dev *fc)
{
	struct pci_dev *pdev = fc->pdev;
	u32 id;
	int c, ret;

	ret = pcim_iomap_regions(pdev, BIT(0) | BIT(2), FC_DRV_NAME);
	if (ret)
		return ret;
	if (pci_resource_len(pdev, 0) < FC_CTRL_PAGE_SIZE ||
	    pci_resource_len(pdev, 2) < FC_CHANNELS * FC_CHAN_PAGE_SIZE) {
		dev_err(&pdev->dev, "BAR0 (%llu bytes) or BAR2 (%llu) is smaller than fc-regs.h says\n",
			(u64)pci_resource_len(pdev, 0), (u64)pci_resource_len(pdev, 2));
		return -ENODEV;
	}
	fc->ctrl = pcim_iomap_table(pdev)[0];
	for (c = 0; c < FC_CHANNELS; c++)
		fc->chan[c] = pcim_iomap_table(pdev)[2] + c * FC_CHAN_PAGE_SIZE;
	fc->user_page_phys = pci_resource_start(pdev, 2) + FC_CH_USER * FC_CHAN_PAGE_SIZE;
	id = fc_rd(fc, FC_REG_ID);
	if (id != FC_ID_VALUE) {
		dev_err(&pdev->dev, "not a PUMA-III FC adapter (ID %08x, expected %08x)\n",
			id, FC_ID_VALUE);
		return -ENODEV;
	}
	return 0;
}

static void fc_read_identity(struct fc_dev *fc)
{
	u32 lo = fc_rd(fc, FC_REG_MAC_LO), hi = fc_rd(fc, FC_REG_MAC_HI);

	fc->node = fc_rd(fc, FC_REG_NODE_ID);
	fc->nodes = fc_rd(fc, FC_REG_NUM_NODES);
	fc->mac[0] = lo;
	fc->mac[1] = lo >> 8;
	fc->mac[2] = lo >> 16;
	fc->mac[3] = lo >> 24;
	fc->mac[4] = hi;
	fc->mac[5] = hi >> 8;
}

static int fc_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct fc_dev *fc;
	u32 status;
	int ret;

	/* not devm: a file may outlive the binding (fc_free frees it) */
	fc = kzalloc(sizeof(*fc), GFP_KERNEL);
	if (!fc)
		return -ENOMEM;
	kref_init(&fc->ref);
	if (init_srcu_struct(&fc->srcu)) {
		kfree(fc);
		return -ENOMEM;
	}
	fc->pdev = pci_dev_get(pdev);
	spin_lock_init(&fc->irq_lock);
	mutex_init(&fc->user_lock);
	fc->id = -1;

	ret = pcim_enable_device(pdev);
	if (ret)
		goto err_put;
	ret = fc_map_bars(fc);
	if (ret)
		goto err_put;
	/* DVMA table entries and the table's own address are 64-bit */
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_put;
	pci_set_master(pdev);
	fc_wr(fc, FC_REG_CTRL, FC_CTRL_RESET);	/* channels off, interrupts masked */
	fc_read_identity(fc);
	if (fc->nodes < 1 || fc->node >= fc->nodes) {
		dev_err(&pdev->dev, "port %u of %u ports: the adapter is misconfigured\n",
			fc->node, fc->nodes);
		ret = -ENODEV;
		goto err_put;
	}

	fc->id = ida_alloc(&fc_ida, GFP_KERNEL);
	if (fc->id < 0) {
		ret = fc->id;
		goto err_put;
	}
	snprintf(fc->name, sizeof(fc->name), "fc%d", fc->id);

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_LEGACY);
	if (ret < 0)
		goto err_ida;
	/* not devm either: the handler must go before its vector (err_irq, fc_remove) */
	ret = request_irq(pci_irq_vector(pdev, 0), fc_irq, IRQF_SHARED, FC_DRV_NAME, fc);
	if (ret)
		goto err_vectors;

	fc_wr(fc, FC_REG_CTRL, FC_CTRL_ENABLE);
	ret = readl_poll_timeout(fc->ctrl + FC_REG_STATUS, status, status & FC_STATUS_READY,
				 FC_READY_POLL_US, FC_READY_TIMEOUT_US);
	if (ret) {
		dev_err(&pdev->dev, "the adapter did not get ready within %ld s (status %#x)\n",
			FC_READY_TIMEOUT_US / USEC_PER_SEC, status);
		goto err_irq;
	}

	pci_set_drvdata(pdev, fc);
	ret = fc_net_probe(fc);
	if (ret)
		goto err_irq;
	fc->misc = (struct miscdevice){
		.minor = MISC_DYNAMIC_MINOR, .name = fc->name, .fops = &fc_user_fops,
		.parent = &pdev->dev, .groups = fc_groups, .mode = 0666,
	};
	ret = misc_register(&fc->misc);
	if (ret)
		goto err_net;
	dev_info(&pdev->dev, "/dev/%s: port %u of %u, MAC %pM, %s\n", fc->name, fc->node,
		 fc->nodes, fc->mac, pdev->msi_enabled ? "MSI" : "INTx");
	return 0;

err_net:
	fc_net_remove(fc);
err_irq:
	fc_wr(fc, FC_REG_CTRL, FC_CTRL_RESET);	/* masks the adapter's interrupts */
	free_irq(pci_irq_vector(pdev, 0), fc);
err_vectors:
	pci_free_irq_vectors(pdev);
err_ida:
	ida_free(&fc_ida, fc->id);
err_put:
	fc_put(fc);
	return ret;
}

static void fc_remove(struct pci_dev *pdev)
{
	struct fc_dev *fc = pci_get_drvdata(pdev);

	misc_deregister(&fc->misc);	/* no more opens; the sysfs counters are gone */
	fc_net_remove(fc);		/* channel 0 stopped, its memory freed */
	mutex_lock(&fc->user_lock);
	WRITE_ONCE(fc->dead, true);
	mutex_unlock(&fc->user_lock);
	/* the user calls in flight leave; every later one sees dead: ENODEV */
	synchronize_srcu(&fc->srcu);
	fc_user_revoke(fc);		/* channel 1 stopped, its mappings zapped */
	fc_wr(fc, FC_REG_CTRL, FC_CTRL_RESET);	/* nothing in flight, no interrupt */
	free_irq(pci_irq_vector(pdev, 0), fc);
	pci_free_irq_vectors(pdev);
	fc->ctrl = NULL;		/* devres unmaps the BARs when we return */
	memset(fc->chan, 0, sizeof(fc->chan));
	ida_free(&fc_ida, fc->id);
	fc_put(fc);			/* the board's reference; open files keep theirs */
}

static const struct pci_device_id fc_ids[] = {
	{ PCI_DEVICE(FC_PCI_VENDOR_ID, FC_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, fc_ids);

static struct pci_driver fc_driver = {
	.name = FC_DRV_NAME,
	.id_table = fc_ids,
	.probe = fc_probe,
	.remove = fc_remove,
};
module_pci_driver(fc_driver);

MODULE_DESCRIPTION("PUMA-III Fibre Channel adapter (retrolink model): IP over FC and user channel");
MODULE_LICENSE("GPL");
