// SPDX-License-Identifier: GPL-2.0
/*
 * The PUMA-III adapter as a PCI card (retrolink-fc, the x86 nodes): BAR 0 the control
 * page, BAR 2 the channel pages, little-endian; MSI or INTx. Everything else is
 * fc_attach's (fc_main.c).
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/dma-mapping.h>

#include "fc.h"

static int fc_pci_map(struct fc_dev *fc, struct pci_dev *pdev)
{
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
	return 0;
}

static int fc_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct fc_dev *fc = fc_alloc(&pdev->dev, false);
	int ret;

	if (!fc)
		return -ENOMEM;
	ret = pcim_enable_device(pdev);
	if (ret)
		goto err_put;
	ret = fc_pci_map(fc, pdev);
	if (ret)
		goto err_put;
	/* DVMA table entries and the table's own address are 64-bit */
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_put;
	pci_set_master(pdev);
	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_LEGACY);
	if (ret < 0)
		goto err_put;
	fc->irq = pci_irq_vector(pdev, 0);
	pci_set_drvdata(pdev, fc);
	ret = fc_attach(fc);
	if (ret)
		goto err_vectors;
	dev_info(&pdev->dev, "/dev/%s: port %u of %u, MAC %pM, %s\n", fc->name, fc->node,
		 fc->nodes, fc->mac, pdev->msi_enabled ? "MSI" : "INTx");
	return 0;

err_vectors:
	pci_free_irq_vectors(pdev);
err_put:
	fc_put(fc);
	return ret;
}

static void fc_pci_remove(struct pci_dev *pdev)
{
	struct fc_dev *fc = pci_get_drvdata(pdev);

	fc_detach(fc);
	pci_free_irq_vectors(pdev);	/* devres unmaps the BARs when we return */
	fc_put(fc);			/* the board's reference; open files keep theirs */
}

static const struct pci_device_id fc_pci_ids[] = {
	{ PCI_DEVICE(FC_PCI_VENDOR_ID, FC_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, fc_pci_ids);

static struct pci_driver fc_pci_driver = {
	.name = FC_DRV_NAME,
	.id_table = fc_pci_ids,
	.probe = fc_pci_probe,
	.remove = fc_pci_remove,
};

int fc_pci_register(void)
{
	return pci_register_driver(&fc_pci_driver);
}

void fc_pci_unregister(void)
{
	pci_unregister_driver(&fc_pci_driver);
}
