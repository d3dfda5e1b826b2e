// SPDX-License-Identifier: GPL-2.0
/*
 * Driver for the PUMA-III Fibre Channel adapter, as modelled by retrolink (qemu/fc/;
 * registers: retrolink/regs/fc-regs.h; docs/boards/fc-driver.md).
 *
 * The adapter is a PCI card on the PCs (fc_pci.c) and the SBus card it was on the
 * SPARCstations (fc_sbus.c); each probe maps its card and calls fc_attach, which does
 * everything else the same way on both.
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
	put_device(fc->dev);
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

/* ---- attach, detach: everything but the bus --------------------------------- */

/*
 * The state of a card its probe found, with a reference to its device. Not devm: a
 * file may outlive the binding (fc_free frees it).
 */
struct fc_dev *fc_alloc(struct device *dev, bool big_endian)
{
	struct fc_dev *fc = kzalloc(sizeof(*fc), GFP_KERNEL);

	if (!fc)
		return NULL;
	kref_init(&fc->ref);
	if (init_srcu_struct(&fc->srcu)) {
		kfree(fc);
		return NULL;
	}
	fc->dev = get_device(dev);
	fc->big_endian = big_endian;
	spin_lock_init(&fc->irq_lock);
	mutex_init(&fc->user_lock);
	fc->id = -1;
	return fc;
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

/*
 * The card's probe has mapped its registers (ctrl, chan, user_page_phys) and knows its
 * interrupt (irq): check the adapter, reset it, take the interrupt, enable it on the
 * link, and make the network interface and /dev/fcN. On failure it undoes its own
 * steps; the probe drops its reference.
 */
int fc_attach(struct fc_dev *fc)
{
	u32 id = fc_rd(fc, FC_REG_ID), status;
	int ret;

	if (id != FC_ID_VALUE) {
		dev_err(fc->dev, "not a PUMA-III FC adapter (ID %08x, expected %08x)\n",
			id, FC_ID_VALUE);
		return -ENODEV;
	}
	fc_wr(fc, FC_REG_CTRL, FC_CTRL_RESET);	/* channels off, interrupts masked */
	fc_read_identity(fc);
	if (fc->nodes < 1 || fc->node >= fc->nodes) {
		dev_err(fc->dev, "port %u of %u ports: the adapter is misconfigured\n",
			fc->node, fc->nodes);
		return -ENODEV;
	}

	fc->id = ida_alloc(&fc_ida, GFP_KERNEL);
	if (fc->id < 0)
		return fc->id;
	snprintf(fc->name, sizeof(fc->name), "fc%d", fc->id);

	/* not devm: the handler must go before the card's vector (err_irq, fc_detach) */
	ret = request_irq(fc->irq, fc_irq, IRQF_SHARED, FC_DRV_NAME, fc);
	if (ret)
		goto err_ida;

	fc_wr(fc, FC_REG_CTRL, FC_CTRL_ENABLE);
	ret = read_poll_timeout(fc_rd, status, status & FC_STATUS_READY, FC_READY_POLL_US,
				FC_READY_TIMEOUT_US, false, fc, FC_REG_STATUS);
	if (ret) {
		dev_err(fc->dev, "the adapter did not get ready within %ld s (status %#x)\n",
			FC_READY_TIMEOUT_US / USEC_PER_SEC, status);
		goto err_irq;
	}

	ret = fc_net_probe(fc);
	if (ret)
		goto err_irq;
	fc->misc = (struct miscdevice){
		.minor = MISC_DYNAMIC_MINOR, .name = fc->name, .fops = &fc_user_fops,
		.parent = fc->dev, .groups = fc_groups, .mode = 0666,
	};
	ret = misc_register(&fc->misc);
	if (ret)
		goto err_net;
	return 0;

err_net:
	fc_net_remove(fc);
err_irq:
	fc_wr(fc, FC_REG_CTRL, FC_CTRL_RESET);	/* masks the adapter's interrupts */
	free_irq(fc->irq, fc);
err_ida:
	ida_free(&fc_ida, fc->id);
	return ret;
}

/* Undo fc_attach; the card's remove then unmaps it and drops the board's reference. */
void fc_detach(struct fc_dev *fc)
{
	misc_deregister(&fc->misc);	/* no more opens; the sysfs counters are gone */
	fc_net_remove(fc);		/* channel 0 stopped, its memory freed */
	mutex_lock(&fc->user_lock);
	WRITE_ONCE(fc->dead, true);
	mutex_unlock(&fc->user_lock);
	/* the user calls in flight leave; every later one sees dead: ENODEV */
	synchronize_srcu(&fc->srcu);
	fc_user_revoke(fc);		/* channel 1 stopped, its mappings zapped */
	fc_wr(fc, FC_REG_CTRL, FC_CTRL_RESET);	/* nothing in flight, no interrupt */
	free_irq(fc->irq, fc);
	fc->ctrl = NULL;		/* the card's remove unmaps the registers */
	memset(fc->chan, 0, sizeof(fc->chan));
	ida_free(&fc_ida, fc->id);
}

/* ---- the module: the driver of each bus the kernel has ------------------------ */

static int __init fc_init(void)
{
	int ret = fc_pci_register();

	if (ret)
		return ret;
	ret = fc_sbus_register();
	if (ret)
		fc_pci_unregister();
	return ret;
}
module_init(fc_init);

static void __exit fc_exit(void)
{
	fc_sbus_unregister();
	fc_pci_unregister();
}
module_exit(fc_exit);

MODULE_DESCRIPTION("PUMA-III Fibre Channel adapter (retrolink model): IP over FC and user channel");
MODULE_LICENSE("GPL");
