// SPDX-License-Identifier: GPL-2.0
/*
 * The PUMA-III adapter as the SBus card it was (retrolink-fc-sbus, the SPARCstation
 * nodes): an OF platform device, the node the card's FCode PROM made (its name
 * FC_SBUS_NAME, reg: the control page then the channel pages, interrupts: its SBus
 * level). Registers and memory structures big-endian; DMA addresses are the IOMMU's
 * DVMA addresses, which the DMA API gives on sparc32. Everything else is fc_attach's
 * (fc_main.c).
 */
#include <linux/module.h>
#include <linux/of.h>
#include <linux/of_device.h>
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>
#include <asm/io.h>

#include "fc.h"

static int fc_sbus_map(struct fc_dev *fc, struct platform_device *op)
{
	struct resource *ctrl = &op->resource[0], *chan = &op->resource[1];
	int c;

	if (op->num_resources < 2 || resource_size(ctrl) < FC_CTRL_PAGE_SIZE ||
	    resource_size(chan) < FC_CHANNELS * FC_CHAN_PAGE_SIZE || op->archdata.num_irqs < 1) {
		dev_err(&op->dev, "the PROM's reg (%u ranges) or interrupts (%d) are not what fc-regs.h says\n",
			op->num_resources, op->archdata.num_irqs);
		return -ENODEV;
	}
	fc->ctrl = of_ioremap(ctrl, 0, FC_CTRL_PAGE_SIZE, "fc ctrl");
	if (!fc->ctrl)
		return -ENOMEM;
	fc->chan[0] = of_ioremap(chan, 0, FC_CHANNELS * FC_CHAN_PAGE_SIZE, "fc chan");
	if (!fc->chan[0]) {
		of_iounmap(ctrl, fc->ctrl, FC_CTRL_PAGE_SIZE);
		return -ENOMEM;
	}
	for (c = 1; c < FC_CHANNELS; c++)
		fc->chan[c] = fc->chan[0] + c * FC_CHAN_PAGE_SIZE;
	fc->user_page_phys = chan->start + FC_CH_USER * FC_CHAN_PAGE_SIZE;
	fc->irq = op->archdata.irqs[0];
	return 0;
}

static void fc_sbus_unmap(struct platform_device *op, void __iomem *ctrl, void __iomem *chan)
{
	of_iounmap(&op->resource[1], chan, FC_CHANNELS * FC_CHAN_PAGE_SIZE);
	of_iounmap(&op->resource[0], ctrl, FC_CTRL_PAGE_SIZE);
}

static int fc_sbus_probe(struct platform_device *op)
{
	struct fc_dev *fc = fc_alloc(&op->dev, true);
	void __iomem *ctrl, *chan;
	int ret;

	if (!fc)
		return -ENOMEM;
	ret = fc_sbus_map(fc, op);
	if (ret)
		goto err_put;
	ctrl = fc->ctrl;
	chan = fc->chan[0];
	/* the IOMMU's DVMA space is 32-bit */
	ret = dma_set_mask_and_coherent(&op->dev, DMA_BIT_MASK(32));
	if (ret)
		goto err_unmap;
	platform_set_drvdata(op, fc);
	ret = fc_attach(fc);
	if (ret)
		goto err_unmap;
	dev_info(&op->dev, "/dev/%s: port %u of %u, MAC %pM, SBus IRQ %d\n", fc->name, fc->node,
		 fc->nodes, fc->mac, fc->irq);
	return 0;

err_unmap:
	fc_sbus_unmap(op, ctrl, chan);
err_put:
	fc_put(fc);
	return ret;
}

static int fc_sbus_remove(struct platform_device *op)
{
	struct fc_dev *fc = platform_get_drvdata(op);
	void __iomem *ctrl = fc->ctrl, *chan = fc->chan[0];

	fc_detach(fc);
	fc_sbus_unmap(op, ctrl, chan);
	fc_put(fc);			/* the board's reference; open files keep theirs */
	return 0;
}

static const struct of_device_id fc_sbus_ids[] = {
	{ .name = FC_SBUS_NAME },
	{ }
};
MODULE_DEVICE_TABLE(of, fc_sbus_ids);

static struct platform_driver fc_sbus_driver = {
	.driver = {
		.name = FC_DRV_NAME,
		.of_match_table = fc_sbus_ids,
	},
	.probe = fc_sbus_probe,
	.remove = fc_sbus_remove,
};

int fc_sbus_register(void)
{
	return platform_driver_register(&fc_sbus_driver);
}

void fc_sbus_unregister(void)
{
	platform_driver_unregister(&fc_sbus_driver);
}
