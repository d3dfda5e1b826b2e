// SPDX-License-Identifier: GPL-2.0
/*
 * Driver for the PUMA-II distributed shared memory board, as modelled by retrolink
 * (qemu/puma2/; registers: retrolink/regs/puma2-regs.h; docs/boards/puma2.md).
 *
 * One board gives two things over one shared space (uapi/puma2.h): the shared RAM
 * disk /dev/puma2disk (puma2_disk.c) and the mapped DSM /dev/puma2 (puma2_dsm.c).
 *
 * Lifetime: the driver's state is reference counted: the board holds one reference
 * from probe to remove, each open file and each open of the disk one. Remove (an
 * unbind; rmmod is refused while anything is open) unregisters both devices, marks the
 * state dead and fails every command in flight (ENODEV), waits (SRCU) for the calls
 * still in the driver, zaps every mapping (a touch is then SIGBUS), deletes the disk
 * (a mounted file system then gets I/O errors) and resets the board's host interface,
 * which lets go of every page the host held.
 */
#include <linux/module.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/slab.h>
#include <linux/idr.h>

#include "puma2.h"

/* the board starts within a millisecond of modelled time; poll every 100 us */
#define PUMA2_READY_POLL_US	100
#define PUMA2_READY_TIMEOUT_US	(10 * USEC_PER_SEC)

static unsigned int disk_mib;
module_param(disk_mib, uint, 0444);
MODULE_PARM_DESC(disk_mib, "the shared RAM disk's size in MiB (the rest of the shared space "
		 "is the mapped DSM; default 0: half the space). The same on every node.");

static DEFINE_IDA(puma2_ida);

static void puma2_free(struct kref *ref)
{
	struct puma2_dev *d = container_of(ref, struct puma2_dev, ref);

	cleanup_srcu_struct(&d->srcu);
	puma2_page_free(d);
	bitmap_free(d->fetching);
	pci_dev_put(d->pdev);
	kfree(d);
}

void puma2_get(struct puma2_dev *d)
{
	kref_get(&d->ref);
}

void puma2_put(struct puma2_dev *d)
{
	kref_put(&d->ref, puma2_free);
}

static irqreturn_t puma2_irq(int irq, void *data)
{
	struct puma2_dev *d = data;
	u32 cause = puma2_rd(d, PUMA2_REG_IRQ_STATUS);

	if (!cause)
		return IRQ_NONE;	/* a shared INTx line: another device's */
	puma2_wr(d, PUMA2_REG_IRQ_STATUS, cause);
	if (cause & PUMA2_IRQ_RESP)
		puma2_responses(d);
	if (cause & PUMA2_IRQ_ERROR)
		dev_warn_ratelimited(&d->pdev->dev, "the board refused an access (PUMA2_ERR %u)\n",
				     puma2_rd(d, PUMA2_REG_ERROR));
	return IRQ_HANDLED;
}

/* The split of the shared space: the record, the disk, the DSM (uapi/puma2.h). */
static int puma2_layout(struct puma2_dev *d)
{
	u32 disk = disk_mib ? disk_mib * (SZ_1M / PUMA2_PAGE) : d->space_pages / 2;

	if (d->space_pages < 3 || disk < 1 || disk > d->space_pages - 2) {
		dev_err(&d->pdev->dev, "disk_mib=%u does not fit the board's %u MiB shared space "
			"with its sharing record and at least one DSM page\n", disk_mib,
			d->space_pages / (SZ_1M / PUMA2_PAGE));
		return -EINVAL;
	}
	d->disk_pages = disk;
	d->dsm_first = 1 + disk;
	d->dsm_pages = d->space_pages - d->dsm_first;
	return 0;
}

static int puma2_map_board(struct puma2_dev *d)
{
	struct pci_dev *pdev = d->pdev;
	u32 id;
	int ret;

	ret = pcim_iomap_regions(pdev, BIT(0) | BIT(1), PUMA2_DRV_NAME);
	if (ret)
		return ret;
	d->ctrl = pcim_iomap_table(pdev)[0];
	d->mem = pcim_iomap_table(pdev)[1];
	d->mem_phys = pci_resource_start(pdev, 1);
	id = puma2_rd(d, PUMA2_REG_ID);
	if (id != PUMA2_ID_VALUE) {
		dev_err(&pdev->dev, "not a PUMA-II board (ID %08x, expected %08x)\n", id,
			PUMA2_ID_VALUE);
		return -ENODEV;
	}
	puma2_wr(d, PUMA2_REG_CTRL, PUMA2_CTRL_RESET);
	d->node = puma2_rd(d, PUMA2_REG_NODE_ID);
	d->nodes = puma2_rd(d, PUMA2_REG_NUM_NODES);
	d->space_pages = puma2_rd(d, PUMA2_REG_SPACE_PAGES);
	if (pci_resource_len(pdev, 0) < PUMA2_CTRL_PAGE_SIZE ||
	    pci_resource_len(pdev, 1) != (u64)d->space_pages * PUMA2_PAGE ||
	    d->nodes < 1 || d->node >= d->nodes) {
		dev_err(&pdev->dev, "board %u of %u with %u pages behind a %llu-byte BAR1: the "
			"board is misconfigured\n", d->node, d->nodes, d->space_pages,
			(u64)pci_resource_len(pdev, 1));
		return -ENODEV;
	}
	return puma2_layout(d);
}

static int puma2_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct puma2_dev *d;
	u32 status;
	int ret;

	/* not devm: a file or an open disk may outlive the binding (puma2_free frees it) */
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	kref_init(&d->ref);
	if (init_srcu_struct(&d->srcu)) {
		kfree(d);
		return -ENOMEM;
	}
	d->pdev = pci_dev_get(pdev);
	d->id = -1;
	spin_lock_init(&d->lock);
	mutex_init(&d->disk_lock);
	mutex_init(&d->dsm_lock);
	INIT_LIST_HEAD(&d->files);
	init_waitqueue_head(&d->dsm_wait);
	INIT_WORK(&d->recall_work, puma2_recall_work);

	ret = pcim_enable_device(pdev);
	if (ret)
		goto err_put;
	ret = puma2_map_board(d);
	if (ret)
		goto err_put;
	ret = puma2_page_init(d);
	if (ret)
		goto err_put;
	d->fetching = bitmap_zalloc(d->dsm_pages, GFP_KERNEL);
	if (!d->fetching) {
		ret = -ENOMEM;
		goto err_put;
	}
	d->id = ida_alloc(&puma2_ida, GFP_KERNEL);
	if (d->id < 0) {
		ret = d->id;
		goto err_put;
	}
	if (d->id)
		snprintf(d->name, sizeof(d->name), "puma2_%d", d->id);
	else
		strscpy(d->name, "puma2", sizeof(d->name));

	pci_set_master(pdev);		/* MSI is a bus master write */
	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_LEGACY);
	if (ret < 0)
		goto err_ida;
	/* not devm either: the handler must go before its vector */
	ret = request_irq(pci_irq_vector(pdev, 0), puma2_irq, IRQF_SHARED, PUMA2_DRV_NAME, d);
	if (ret)
		goto err_vectors;
	puma2_wr(d, PUMA2_REG_IRQ_MASK, PUMA2_IRQ_ALL);
	puma2_wr(d, PUMA2_REG_CTRL, PUMA2_CTRL_ENABLE);
	ret = readl_poll_timeout(d->ctrl + PUMA2_REG_STATUS, status,
				 status & PUMA2_STATUS_READY, PUMA2_READY_POLL_US,
				 PUMA2_READY_TIMEOUT_US);
	if (ret) {
		dev_err(&pdev->dev, "the board did not get ready within %ld s (status %#x)\n",
			PUMA2_READY_TIMEOUT_US / USEC_PER_SEC, status);
		goto err_irq;
	}
	pci_set_drvdata(pdev, d);

	d->misc = (struct miscdevice){
		.minor = MISC_DYNAMIC_MINOR, .name = d->name, .fops = &puma2_dsm_fops,
		.parent = &pdev->dev, .mode = 0666,
	};
	ret = misc_register(&d->misc);
	if (ret)
		goto err_irq;
	ret = puma2_disk_probe(d);
	if (ret)
		goto err_misc;
	dev_info(&pdev->dev, "board %u of %u, %u MiB shared: /dev/%s (%u MiB disk), /dev/%s "
		 "(%u MiB DSM), %s\n", d->node, d->nodes, d->space_pages >> 8,
		 d->disk->disk_name, d->disk_pages >> 8, d->name, d->dsm_pages >> 8,
		 pdev->msi_enabled ? "MSI" : "INTx");
	return 0;

err_misc:
	misc_deregister(&d->misc);
err_irq:
	puma2_wr(d, PUMA2_REG_CTRL, PUMA2_CTRL_RESET);	/* no more interrupts */
	free_irq(pci_irq_vector(pdev, 0), d);
err_vectors:
	pci_free_irq_vectors(pdev);
err_ida:
	ida_free(&puma2_ida, d->id);
err_put:
	puma2_put(d);
	return ret;
}

static void puma2_remove(struct pci_dev *pdev)
{
	struct puma2_dev *d = pci_get_drvdata(pdev);

	misc_deregister(&d->misc);	/* no more opens of /dev/puma2 */
	puma2_disk_forget(d);		/* out of the disk's sharing record */
	puma2_abort_all(d);		/* dead: waiters get ENODEV, nothing new is asked */
	wake_up_all(&d->dsm_wait);
	synchronize_srcu(&d->srcu);	/* the calls in the driver have left */
	puma2_dsm_revoke(d);		/* every mapping zapped: a touch is SIGBUS */
	puma2_disk_remove(d);		/* a mounted file system gets I/O errors */
	puma2_wr(d, PUMA2_REG_CTRL, PUMA2_CTRL_RESET);	/* every hold let go */
	free_irq(pci_irq_vector(pdev, 0), d);
	pci_free_irq_vectors(pdev);
	cancel_work_sync(&d->recall_work);
	d->ctrl = NULL;			/* devres unmaps the BARs when we return */
	d->mem = NULL;
	ida_free(&puma2_ida, d->id);
	puma2_put(d);			/* the board's reference; open files keep theirs */
}

static const struct pci_device_id puma2_ids[] = {
	{ PCI_DEVICE(PUMA2_PCI_VENDOR_ID, PUMA2_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, puma2_ids);

static struct pci_driver puma2_driver = {
	.name = PUMA2_DRV_NAME,
	.id_table = puma2_ids,
	.probe = puma2_probe,
	.remove = puma2_remove,
};
module_pci_driver(puma2_driver);

MODULE_DESCRIPTION("PUMA-II distributed shared memory board (retrolink model): shared RAM "
		   "disk and mapped DSM");
MODULE_LICENSE("GPL");
