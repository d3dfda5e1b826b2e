// SPDX-License-Identifier: GPL-2.0
/*
 * The VIA NIC's kernel agent, as modelled by retrolink (qemu/via/; registers:
 * retrolink/regs/via-regs.h; docs/boards/via.md): PCI probe and remove, the TPT,
 * interrupts and the driver's lifetime.
 *
 * One NIC gives /dev/viaN (N from 0: the NIC handle of VIPL, via_file.c) and a network
 * interface over VI 0 (the LAN emulation, via_lane.c).
 *
 * Lifetime (as the FC driver): struct via_dev is reference counted, the board holding
 * one reference from probe to remove and each open file one. Remove (an unbind with
 * files open; rmmod is refused while a file is open, through the module reference the
 * file holds) takes the interface down, marks the state dead, wakes every sleeper, waits
 * (SRCU) for the calls still in the agent, zaps every file's mappings (a touch is then
 * SIGBUS) and resets the NIC, which then touches no host memory. A file still open fails
 * every call with ENODEV; its pinned pages and rings go at its last close.
 */
#include <linux/module.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/slab.h>
#include <linux/idr.h>
#include <linux/dma-mapping.h>
#include <linux/bitmap.h>

#include "via.h"

/* the NIC joins the switch within a few ms of modelled time (start-us); poll every 1 ms */
#define VIA_READY_POLL_US	1000
#define VIA_READY_TIMEOUT_US	(10 * USEC_PER_SEC)
#define VIA_TPT_BYTES		((size_t)VIA_TPT_MAX_PAGES * sizeof(__le64))

static DEFINE_IDA(via_ida);

static void via_free(struct kref *ref)
{
	struct via_dev *via = container_of(ref, struct via_dev, ref);

	pr_debug("%s: state freed\n", via->name);
	if (via->tpt)
		dma_free_coherent(&via->pdev->dev, VIA_TPT_BYTES, via->tpt, via->tpt_dma);
	bitmap_free(via->tpt_used);
	cleanup_srcu_struct(&via->srcu);
	mutex_destroy(&via->lock);
	pci_dev_put(via->pdev);
	kfree(via);
}

void via_get(struct via_dev *via)
{
	kref_get(&via->ref);
}

void via_put(struct via_dev *via)
{
	kref_put(&via->ref, via_free);
}

/* VIA_REG_ERROR of a refused control write, as the errno the user sees */
int via_errno(u32 err)
{
	switch (err) {
	case VIA_ERR_NONE:
		return 0;
	case VIA_ERR_BUSY:
		return -EBUSY;
	case VIA_ERR_NOT_READY:
	case VIA_ERR_DEST:
		return -EHOSTUNREACH;
	case VIA_ERR_STATE:
		return -EBUSY;
	default:
		return -EINVAL;
	}
}

/* ---- interrupts ---------------------------------------------------------------- */

static void via_irq_update(struct via_dev *via, u32 set, u32 clear)
{
	unsigned long flags;
	u32 mask;

	spin_lock_irqsave(&via->irq_lock, flags);
	mask = (via->irq_mask | set) & ~clear;
	if (mask != via->irq_mask) {
		WRITE_ONCE(via->irq_mask, mask);
		via_wr(via, VIA_REG_IRQ_MASK, mask);
	}
	spin_unlock_irqrestore(&via->irq_lock, flags);
}

void via_irq_enable(struct via_dev *via, u32 causes)
{
	via_irq_update(via, causes, 0);
}

void via_irq_disable(struct via_dev *via, u32 causes)
{
	via_irq_update(via, 0, causes);
}

/*
 * One register read in the common case (VIA_IRQ_DONE): the waiters find out which
 * queue completed from its count, so the event words are only cleared, with posted
 * writes, never read.
 */
static irqreturn_t via_irq(int irq, void *data)
{
	struct via_dev *via = data;
	u32 cause = via_rd(via, VIA_REG_IRQ_STATUS) & READ_ONCE(via->irq_mask);
	int n;

	if (!cause)
		return IRQ_NONE;
	via_wr(via, VIA_REG_IRQ_STATUS, cause);
	via->irqs++;
	if (cause & VIA_IRQ_DONE) {
		for (n = 0; n < 4; n++)
			via_wr(via, VIA_REG_VI_EVENTS(n), ~0u);
		via_wr(via, VIA_REG_CQ_EVENTS, ~0u);
	}
	if (cause & VIA_IRQ_ERROR) {
		u32 vi0 = via_rd(via, VIA_REG_VI_ERRORS(0)), vi1 = via_rd(via, VIA_REG_VI_ERRORS(1));
		u32 cq = via_rd(via, VIA_REG_CQ_ERRORS);

		via_wr(via, VIA_REG_VI_ERRORS(0), vi0);
		via_wr(via, VIA_REG_VI_ERRORS(1), vi1);
		via_wr(via, VIA_REG_CQ_ERRORS, cq);
		dev_dbg(&via->pdev->dev, "broken VIs %08x%08x, overflowed CQs %08x\n", vi1, vi0,
			cq);
	}
	if (cause & (VIA_IRQ_DONE | VIA_IRQ_ERROR)) {
		atomic_inc(&via->done_gen);
		wake_up_all(&via->done_wq);
	}
	if (cause & VIA_IRQ_CM)
		via_cm_irq(via);
	if (cause & (VIA_IRQ_DONE | VIA_IRQ_ERROR | VIA_IRQ_LINK))
		via_lane_irq(via, cause);
	return IRQ_HANDLED;
}

/* ---- sysfs: /sys/class/misc/viaN/ ------------------------------------------------- */

static struct via_dev *via_from_dev(struct device *dev)
{
	struct miscdevice *misc = dev_get_drvdata(dev);

	return container_of(misc, struct via_dev, misc);
}

#define VIA_REG_ATTR(_name, _reg)						\
static ssize_t _name##_show(struct device *dev, struct device_attribute *a,	\
			    char *buf)						\
{										\
	return sysfs_emit(buf, "%u\n", via_rd(via_from_dev(dev), (_reg)));	\
}										\
static DEVICE_ATTR_RO(_name)

VIA_REG_ATTR(node, VIA_REG_NODE_ID);
VIA_REG_ATTR(nodes, VIA_REG_NUM_NODES);
VIA_REG_ATTR(peers_up, VIA_REG_PEERS_UP);
VIA_REG_ATTR(tx_msgs, VIA_REG_TX_MSGS);
VIA_REG_ATTR(rx_msgs, VIA_REG_RX_MSGS);
VIA_REG_ATTR(rx_drops, VIA_REG_RX_DROPS);
VIA_REG_ATTR(desc_errors, VIA_REG_DESC_ERRORS);
VIA_REG_ATTR(db_refused, VIA_REG_DB_REFUSED);

/* what the agent has handed out: every process's and the kernel's (the test's check) */
static ssize_t in_use_show(struct device *dev, struct device_attribute *a, char *buf)
{
	struct via_dev *via = via_from_dev(dev);
	unsigned int vis = 0, cqs = 0, mrs = 0, tags = 0, tpt;
	int i;

	mutex_lock(&via->lock);
	for (i = 0; i < VIA_MAX_VIS; i++)
		vis += !!via->vis[i];
	for (i = 0; i < VIA_MAX_CQS; i++)
		cqs += !!via->cqs[i];
	for (i = 0; i < VIA_MAX_REGIONS; i++)
		mrs += !!via->mrs[i];
	for (i = 0; i < VIA_MAX_TAGS; i++)
		tags += !!via->tag_owner[i];
	tpt = bitmap_weight(via->tpt_used, VIA_TPT_MAX_PAGES);
	mutex_unlock(&via->lock);
	return sysfs_emit(buf, "vis %u cqs %u regions %u tags %u tpt %u\n", vis, cqs, mrs,
			  tags, tpt);
}
static DEVICE_ATTR_RO(in_use);

static ssize_t irqs_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n", (unsigned long long)READ_ONCE(via_from_dev(dev)->irqs));
}
static DEVICE_ATTR_RO(irqs);

static struct attribute *via_attrs[] = {
	&dev_attr_node.attr, &dev_attr_nodes.attr, &dev_attr_peers_up.attr,
	&dev_attr_tx_msgs.attr, &dev_attr_rx_msgs.attr, &dev_attr_rx_drops.attr,
	&dev_attr_desc_errors.attr, &dev_attr_db_refused.attr, &dev_attr_in_use.attr,
	&dev_attr_irqs.attr, NULL,
};
ATTRIBUTE_GROUPS(via);

/* ---- PCI ------------------------------------------------------------------------ */

static int via_map_bars(struct via_dev *via)
{
	struct pci_dev *pdev = via->pdev;
	u32 id;
	int ret;

	ret = pcim_iomap_regions(pdev, BIT(0) | BIT(2), VIA_DRV_NAME);
	if (ret)
		return ret;
	if (pci_resource_len(pdev, 0) < VIA_CTRL_PAGE_SIZE ||
	    pci_resource_len(pdev, 2) < (u64)VIA_MAX_VIS * VIA_DB_PAGE_SIZE) {
		dev_err(&pdev->dev, "BAR0 (%llu bytes) or BAR2 (%llu) is smaller than via-regs.h says\n",
			(u64)pci_resource_len(pdev, 0), (u64)pci_resource_len(pdev, 2));
		return -ENODEV;
	}
	via->ctrl = pcim_iomap_table(pdev)[0];
	via->db = pcim_iomap_table(pdev)[2];
	via->db_phys = pci_resource_start(pdev, 2);
	id = via_rd(via, VIA_REG_ID);
	if (id != VIA_ID_VALUE) {
		dev_err(&pdev->dev, "not a VIA NIC (ID %08x, expected %08x)\n", id,
			VIA_ID_VALUE);
		return -ENODEV;
	}
	return 0;
}

static void via_read_identity(struct via_dev *via)
{
	u32 lo = via_rd(via, VIA_REG_MAC_LO), hi = via_rd(via, VIA_REG_MAC_HI);

	via->node = via_rd(via, VIA_REG_NODE_ID);
	via->nodes = via_rd(via, VIA_REG_NUM_NODES);
	via->mac[0] = lo;
	via->mac[1] = lo >> 8;
	via->mac[2] = lo >> 16;
	via->mac[3] = lo >> 24;
	via->mac[4] = hi;
	via->mac[5] = hi >> 8;
}

/* The TPT: every entry invalid, given to the NIC before it is enabled. */
static int via_tpt_init(struct via_dev *via)
{
	via->tpt = dma_alloc_coherent(&via->pdev->dev, VIA_TPT_BYTES, &via->tpt_dma,
				      GFP_KERNEL);
	via->tpt_used = bitmap_zalloc(VIA_TPT_MAX_PAGES, GFP_KERNEL);
	if (!via->tpt || !via->tpt_used)
		return -ENOMEM;
	via_wr(via, VIA_REG_TPT_LO, lower_32_bits(via->tpt_dma));
	via_wr(via, VIA_REG_TPT_HI, upper_32_bits(via->tpt_dma));
	via_wr(via, VIA_REG_TPT_PAGES, VIA_TPT_MAX_PAGES);
	if (via_rd(via, VIA_REG_ERROR)) {
		dev_err(&via->pdev->dev, "the NIC refused the TPT (error %u)\n",
			via_rd(via, VIA_REG_ERROR));
		return -ENODEV;
	}
	return 0;
}

static int via_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct via_dev *via;
	u32 status;
	int ret;

	/* not devm: a file may outlive the binding (via_free frees it) */
	via = kzalloc(sizeof(*via), GFP_KERNEL);
	if (!via)
		return -ENOMEM;
	kref_init(&via->ref);
	if (init_srcu_struct(&via->srcu)) {
		kfree(via);
		return -ENOMEM;
	}
	via->pdev = pci_dev_get(pdev);
	spin_lock_init(&via->hw_lock);
	spin_lock_init(&via->irq_lock);
	mutex_init(&via->lock);
	INIT_LIST_HEAD(&via->files);
	init_waitqueue_head(&via->done_wq);
	via_cm_init(via);
	via->misc.minor = MISC_DYNAMIC_MINOR;

	ret = pcim_enable_device(pdev);
	if (ret)
		goto err_put;
	ret = via_map_bars(via);
	if (ret)
		goto err_put;
	/* TPT entries, the TPT's and the rings' addresses are 64-bit */
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_put;
	pci_set_master(pdev);
	via_wr(via, VIA_REG_CTRL, VIA_CTRL_RESET);	/* everything closed, irqs masked */
	via_read_identity(via);
	if (via->nodes < 1 || via->node >= via->nodes) {
		dev_err(&pdev->dev, "node %u of %u: the NIC is misconfigured\n", via->node,
			via->nodes);
		ret = -ENODEV;
		goto err_put;
	}
	ret = via_tpt_init(via);
	if (ret)
		goto err_put;

	via->id = ida_alloc(&via_ida, GFP_KERNEL);
	if (via->id < 0) {
		ret = via->id;
		goto err_put;
	}
	snprintf(via->name, sizeof(via->name), "via%d", via->id);

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_LEGACY);
	if (ret < 0)
		goto err_ida;
	ret = request_irq(pci_irq_vector(pdev, 0), via_irq, IRQF_SHARED, VIA_DRV_NAME, via);
	if (ret)
		goto err_vectors;

	via_wr(via, VIA_REG_CTRL, VIA_CTRL_ENABLE);
	ret = readl_poll_timeout(via->ctrl + VIA_REG_STATUS, status,
				 status & VIA_STATUS_READY, VIA_READY_POLL_US,
				 VIA_READY_TIMEOUT_US);
	if (ret) {
		dev_err(&pdev->dev, "the NIC did not get ready within %ld s (status %#x)\n",
			VIA_READY_TIMEOUT_US / USEC_PER_SEC, status);
		goto err_irq;
	}
	via_irq_enable(via, VIA_IRQ_DONE | VIA_IRQ_CM | VIA_IRQ_ERROR);

	pci_set_drvdata(pdev, via);
	ret = via_lane_probe(via);
	if (ret)
		goto err_irq;
	via->misc = (struct miscdevice){
		.minor = MISC_DYNAMIC_MINOR, .name = via->name, .fops = &via_fops,
		.parent = &pdev->dev, .groups = via_groups, .mode = 0666,
	};
	ret = misc_register(&via->misc);
	if (ret)
		goto err_lane;
	dev_info(&pdev->dev, "/dev/%s: node %u of %u, MAC %pM, %s\n", via->name, via->node,
		 via->nodes, via->mac, pdev->msi_enabled ? "MSI" : "INTx");
	return 0;

err_lane:
	via_lane_remove(via);
err_irq:
	via_wr(via, VIA_REG_CTRL, VIA_CTRL_RESET);
	free_irq(pci_irq_vector(pdev, 0), via);
	via_cm_stop(via);
err_vectors:
	pci_free_irq_vectors(pdev);
err_ida:
	ida_free(&via_ida, via->id);
err_put:
	via_put(via);
	return ret;
}

static void via_remove(struct pci_dev *pdev)
{
	struct via_dev *via = pci_get_drvdata(pdev);

	misc_deregister(&via->misc);	/* no more opens */
	via_lane_remove(via);		/* VI 0 closed, its memory freed */
	mutex_lock(&via->lock);
	WRITE_ONCE(via->dead, true);
	mutex_unlock(&via->lock);
	/* the sleepers see dead and leave; every later call fails with ENODEV */
	wake_up_all(&via->done_wq);
	wake_up_all(&via->cm.wq);
	synchronize_srcu(&via->srcu);
	via_file_revoke_all(via);	/* doorbell pages and rings: SIGBUS */
	via_wr(via, VIA_REG_CTRL, VIA_CTRL_RESET);	/* the NIC lets go of host memory */
	free_irq(pci_irq_vector(pdev, 0), via);
	via_cm_stop(via);
	pci_free_irq_vectors(pdev);
	via->ctrl = NULL;		/* devres unmaps the BARs when we return */
	via->db = NULL;
	ida_free(&via_ida, via->id);
	via_put(via);			/* the board's reference; open files keep theirs */
}

static const struct pci_device_id via_ids[] = {
	{ PCI_DEVICE(VIA_PCI_VENDOR_ID, VIA_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, via_ids);

static struct pci_driver via_driver = {
	.name = VIA_DRV_NAME,
	.id_table = via_ids,
	.probe = via_probe,
	.remove = via_remove,
};
module_pci_driver(via_driver);

MODULE_DESCRIPTION("VIA NIC (retrolink model): the VI kernel agent and LAN emulation");
MODULE_LICENSE("GPL");
