// SPDX-License-Identifier: GPL-2.0
/*
 * The CompactPCI backplane board's driver, as modelled by retrolink (qemu/cpci/;
 * registers: retrolink/regs/cpci-regs.h; docs/boards/cpci-driver.md): PCI probe and
 * remove, the export, interrupts and the driver's lifetime.
 *
 * One board gives /dev/cpciN (N from 0, cpci_file.c) and a network interface bpN
 * (cpci_net.c).
 *
 * Lifetime (as the VIA driver's): struct cpci_dev is reference counted, the board
 * holding one reference from probe to remove and each open file one. Remove (an unbind
 * with files open; rmmod is refused while a file is open, through the module reference
 * the file holds) takes the interface down, marks the state dead, wakes every sleeper,
 * waits (SRCU) for the calls and faults still in the driver, zaps every file's mappings
 * (a touch is then SIGBUS) and resets the board, so that peers' stores no longer reach
 * the export, which is then freed. A file still open fails every call with ENODEV.
 */
#include <linux/module.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/slab.h>
#include <linux/idr.h>
#include <linux/dma-mapping.h>

#include "cpci.h"

/* the backplane comes up when the cluster starts; poll every 1 ms for up to 10 s */
#define CPCI_UP_POLL_US		1000
#define CPCI_UP_TIMEOUT_US	(10 * USEC_PER_SEC)

static DEFINE_IDA(cpci_ida);

static void cpci_free(struct kref *ref)
{
	struct cpci_dev *cpci = container_of(ref, struct cpci_dev, ref);

	cleanup_srcu_struct(&cpci->srcu);
	mutex_destroy(&cpci->lock);
	pci_dev_put(cpci->pdev);
	kfree(cpci);
}

void cpci_get(struct cpci_dev *cpci)
{
	kref_get(&cpci->ref);
}

void cpci_put(struct cpci_dev *cpci)
{
	kref_put(&cpci->ref, cpci_free);
}

/* ---- interrupts ---------------------------------------------------------------- */

/*
 * Doorbells: DB_STATUS is cleared by writing back what was read (a doorbell rung in
 * between stays set and interrupts again); the netdev's go to NAPI, the users' to
 * CPCI_IOC_WAIT. Errors are counted (sysfs) and logged at debug level: a peer that
 * unbinds makes our stores into it fail there, which is no fault of ours.
 */
static irqreturn_t cpci_irq(int irq, void *data)
{
	struct cpci_dev *cpci = data;
	u32 cause = cpci_rd(cpci, CPCI_REG_IRQ_STATUS);

	if (!cause)
		return IRQ_NONE;
	cpci->irqs++;
	if (cause & CPCI_IRQ_DOORBELL) {
		u32 db = cpci_rd(cpci, CPCI_REG_DB_STATUS);

		cpci_wr(cpci, CPCI_REG_DB_STATUS, db);
		if (db & CPCI_DB_NET_MASK)
			cpci_net_doorbells(cpci);
		if (db & CPCI_DB_USER_MASK)
			cpci_user_doorbells(cpci, db & CPCI_DB_USER_MASK);
	}
	if (cause & CPCI_IRQ_ERROR) {
		u32 err = cpci_rd(cpci, CPCI_REG_ERR_STATUS);

		cpci_wr(cpci, CPCI_REG_ERR_STATUS, err);
		cpci->errors++;
		WRITE_ONCE(cpci->last_error, err);
		dev_dbg(&cpci->pdev->dev, "error %#x at %#x\n", err,
			cpci_rd(cpci, CPCI_REG_ERR_ADDR));
	}
	return IRQ_HANDLED;
}

/* ---- sysfs: /sys/class/misc/cpciN/ ----------------------------------------------- */

static struct cpci_dev *cpci_from_dev(struct device *dev)
{
	struct miscdevice *misc = dev_get_drvdata(dev);

	return container_of(misc, struct cpci_dev, misc);
}

#define CPCI_REG_ATTR(_name, _reg)						\
static ssize_t _name##_show(struct device *dev, struct device_attribute *a,	\
			    char *buf)						\
{										\
	return sysfs_emit(buf, "%u\n", cpci_rd(cpci_from_dev(dev), (_reg)));	\
}										\
static DEVICE_ATTR_RO(_name)

CPCI_REG_ATTR(node, CPCI_REG_NODE);
CPCI_REG_ATTR(nodes, CPCI_REG_NODES);
CPCI_REG_ATTR(tx_writes, CPCI_REG_TX_WRITES);
CPCI_REG_ATTR(tx_reads, CPCI_REG_TX_READS);
CPCI_REG_ATTR(rx_writes, CPCI_REG_RX_WRITES);
CPCI_REG_ATTR(rx_rejected, CPCI_REG_RX_REJECTED);
CPCI_REG_ATTR(db_sent, CPCI_REG_DB_SENT);
CPCI_REG_ATTR(db_received, CPCI_REG_DB_RECEIVED);

/* the driver's own state: what a test checks is left behind by a killed process */
static ssize_t state_show(struct device *dev, struct device_attribute *a, char *buf)
{
	struct cpci_dev *cpci = cpci_from_dev(dev);
	unsigned int files = 0;
	struct cpci_file *cf;

	mutex_lock(&cpci->lock);
	list_for_each_entry(cf, &cpci->files, node)
		files++;
	mutex_unlock(&cpci->lock);
	return sysfs_emit(buf, "files %u waiters %d irqs %llu errors %llu last_error %#x\n",
			  files, atomic_read(&cpci->waiters), READ_ONCE(cpci->irqs),
			  READ_ONCE(cpci->errors), READ_ONCE(cpci->last_error));
}
static DEVICE_ATTR_RO(state);

static struct attribute *cpci_attrs[] = {
	&dev_attr_node.attr, &dev_attr_nodes.attr, &dev_attr_tx_writes.attr,
	&dev_attr_tx_reads.attr, &dev_attr_rx_writes.attr, &dev_attr_rx_rejected.attr,
	&dev_attr_db_sent.attr, &dev_attr_db_received.attr, &dev_attr_state.attr, NULL,
};
ATTRIBUTE_GROUPS(cpci);

/* ---- PCI ------------------------------------------------------------------------ */

static int cpci_map_bars(struct cpci_dev *cpci)
{
	struct pci_dev *pdev = cpci->pdev;
	u32 id;
	int ret;

	ret = pcim_iomap_regions(pdev, BIT(CPCI_CTRL_BAR) | BIT(CPCI_WINDOW_BAR), CPCI_DRV_NAME);
	if (ret)
		return ret;
	if (pci_resource_len(pdev, CPCI_CTRL_BAR) < CPCI_CTRL_SIZE ||
	    pci_resource_len(pdev, CPCI_WINDOW_BAR) < CPCI_WINDOWS_SIZE) {
		dev_err(&pdev->dev, "BAR0 (%llu bytes) or BAR2 (%llu) is smaller than cpci-regs.h says\n",
			(u64)pci_resource_len(pdev, CPCI_CTRL_BAR),
			(u64)pci_resource_len(pdev, CPCI_WINDOW_BAR));
		return -ENODEV;
	}
	/* pci_iomap: uncached, so that every access is one transaction, in order */
	cpci->ctrl = pcim_iomap_table(pdev)[CPCI_CTRL_BAR];
	cpci->win = pcim_iomap_table(pdev)[CPCI_WINDOW_BAR];
	cpci->win_phys = pci_resource_start(pdev, CPCI_WINDOW_BAR);
	id = cpci_rd(cpci, CPCI_REG_ID);
	if (id != CPCI_ID_MAGIC || cpci_rd(cpci, CPCI_REG_VERSION) != CPCI_VERSION) {
		dev_err(&pdev->dev, "not a CompactPCI backplane board of version %u (ID %08x)\n",
			CPCI_VERSION, id);
		return -ENODEV;
	}
	return 0;
}

static void cpci_read_identity(struct cpci_dev *cpci)
{
	u32 lo = cpci_rd(cpci, CPCI_REG_MAC_LO), hi = cpci_rd(cpci, CPCI_REG_MAC_HI);

	cpci->node = cpci_rd(cpci, CPCI_REG_NODE);
	cpci->nodes = cpci_rd(cpci, CPCI_REG_NODES);
	cpci->mac[0] = lo;
	cpci->mac[1] = lo >> 8;
	cpci->mac[2] = lo >> 16;
	cpci->mac[3] = lo >> 24;
	cpci->mac[4] = hi;
	cpci->mac[5] = hi >> 8;
}

/* The export: zeroed memory, its address and size given, then CTRL's EXPORT bit. */
static int cpci_export(struct cpci_dev *cpci)
{
	struct device *dev = &cpci->pdev->dev;
	u32 err;

	cpci->export = dma_alloc_coherent(dev, CPCI_EXPORT_MAX, &cpci->export_dma, GFP_KERNEL);
	if (!cpci->export)
		return -ENOMEM;
	cpci_wr(cpci, CPCI_REG_EXPORT_LO, lower_32_bits(cpci->export_dma));
	cpci_wr(cpci, CPCI_REG_EXPORT_HI, upper_32_bits(cpci->export_dma));
	cpci_wr(cpci, CPCI_REG_EXPORT_SIZE, CPCI_EXPORT_MAX);
	cpci_wr(cpci, CPCI_REG_CTRL, CPCI_CTRL_ENABLE | CPCI_CTRL_EXPORT);
	err = cpci_rd(cpci, CPCI_REG_ERR_STATUS);
	if (err) {
		dev_err(dev, "the board refused the export at %pad (error %#x)\n",
			&cpci->export_dma, err);
		return -ENODEV;
	}
	return 0;
}

/* the board back at power-on: the export no longer reached, then freed */
static void cpci_unexport(struct cpci_dev *cpci)
{
	cpci_wr(cpci, CPCI_REG_CTRL, CPCI_CTRL_RESET);
	if (cpci->export)
		dma_free_coherent(&cpci->pdev->dev, CPCI_EXPORT_MAX, cpci->export,
				  cpci->export_dma);
	cpci->export = NULL;
}

static int cpci_wait_up(struct cpci_dev *cpci)
{
	u32 status;
	int ret;

	ret = readl_poll_timeout(cpci->ctrl + CPCI_REG_STATUS, status, status & CPCI_STATUS_UP,
				 CPCI_UP_POLL_US, CPCI_UP_TIMEOUT_US);
	if (ret) {
		dev_err(&cpci->pdev->dev, "the backplane did not come up within %ld s\n",
			CPCI_UP_TIMEOUT_US / USEC_PER_SEC);
		return ret;
	}
	cpci_read_identity(cpci);
	if (cpci->nodes < 1 || cpci->nodes > CPCI_MAX_NODES || cpci->node >= cpci->nodes) {
		dev_err(&cpci->pdev->dev, "node %u of %u: the board is misconfigured\n",
			cpci->node, cpci->nodes);
		return -ENODEV;
	}
	return 0;
}

static int cpci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct cpci_dev *cpci;
	int ret;

	/* not devm: a file may outlive the binding (cpci_free frees it) */
	cpci = kzalloc(sizeof(*cpci), GFP_KERNEL);
	if (!cpci)
		return -ENOMEM;
	kref_init(&cpci->ref);
	if (init_srcu_struct(&cpci->srcu)) {
		kfree(cpci);
		return -ENOMEM;
	}
	cpci->pdev = pci_dev_get(pdev);
	mutex_init(&cpci->lock);
	INIT_LIST_HEAD(&cpci->files);
	spin_lock_init(&cpci->db_lock);
	init_waitqueue_head(&cpci->db_wq);

	ret = pcim_enable_device(pdev);
	if (ret)
		goto err_put;
	ret = cpci_map_bars(cpci);
	if (ret)
		goto err_put;
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_put;
	pci_set_master(pdev);
	cpci_wr(cpci, CPCI_REG_CTRL, CPCI_CTRL_RESET);	/* windows closed, nothing exported */
	ret = cpci_wait_up(cpci);
	if (ret)
		goto err_put;

	cpci->id = ida_alloc(&cpci_ida, GFP_KERNEL);
	if (cpci->id < 0) {
		ret = cpci->id;
		goto err_put;
	}
	snprintf(cpci->name, sizeof(cpci->name), "cpci%d", cpci->id);

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_LEGACY);
	if (ret < 0)
		goto err_ida;
	ret = request_irq(pci_irq_vector(pdev, 0), cpci_irq, IRQF_SHARED, CPCI_DRV_NAME, cpci);
	if (ret)
		goto err_vectors;
	cpci_wr(cpci, CPCI_REG_DB_MASK, 0);
	cpci_wr(cpci, CPCI_REG_ERR_MASK, 0);
	ret = cpci_export(cpci);
	if (ret)
		goto err_irq;

	pci_set_drvdata(pdev, cpci);
	ret = cpci_net_probe(cpci);
	if (ret)
		goto err_irq;
	cpci->misc = (struct miscdevice){
		.minor = MISC_DYNAMIC_MINOR, .name = cpci->name, .fops = &cpci_fops,
		.parent = &pdev->dev, .groups = cpci_groups, .mode = 0666,
	};
	ret = misc_register(&cpci->misc);
	if (ret)
		goto err_net;
	dev_info(&pdev->dev, "/dev/%s: node %u of %u, export %u KiB at %pad, MAC %pM, %s\n",
		 cpci->name, cpci->node, cpci->nodes, CPCI_EXPORT_MAX >> 10, &cpci->export_dma,
		 cpci->mac, pdev->msi_enabled ? "MSI" : "INTx");
	return 0;

err_net:
	cpci_net_remove(cpci);
err_irq:
	cpci_unexport(cpci);
	free_irq(pci_irq_vector(pdev, 0), cpci);
err_vectors:
	pci_free_irq_vectors(pdev);
err_ida:
	ida_free(&cpci_ida, cpci->id);
err_put:
	cpci_put(cpci);
	return ret;
}

static void cpci_remove(struct pci_dev *pdev)
{
	struct cpci_dev *cpci = pci_get_drvdata(pdev);

	misc_deregister(&cpci->misc);	/* no more opens */
	cpci_net_remove(cpci);		/* peers told we are gone */
	mutex_lock(&cpci->lock);
	WRITE_ONCE(cpci->dead, true);
	mutex_unlock(&cpci->lock);
	/* the sleepers see dead and leave; every later call fails with ENODEV */
	wake_up_all(&cpci->db_wq);
	synchronize_srcu(&cpci->srcu);
	cpci_file_revoke_all(cpci);	/* windows and user area: SIGBUS */
	cpci_unexport(cpci);
	free_irq(pci_irq_vector(pdev, 0), cpci);
	pci_free_irq_vectors(pdev);
	cpci->ctrl = NULL;		/* devres unmaps the BARs when we return */
	cpci->win = NULL;
	ida_free(&cpci_ida, cpci->id);
	cpci_put(cpci);			/* the board's reference; open files keep theirs */
}

static const struct pci_device_id cpci_ids[] = {
	{ PCI_DEVICE(CPCI_PCI_VENDOR_ID, CPCI_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, cpci_ids);

static struct pci_driver cpci_driver = {
	.name = CPCI_DRV_NAME,
	.id_table = cpci_ids,
	.probe = cpci_probe,
	.remove = cpci_remove,
};
module_pci_driver(cpci_driver);

MODULE_DESCRIPTION("CompactPCI backplane (retrolink model): windows, doorbells and a netdev");
MODULE_LICENSE("GPL");
