// SPDX-License-Identifier: GPL-2.0
/*
 * PUMA-III FC adapter: DVMA tables and channel configuration.
 *
 * The adapter reaches host memory only through a channel's DVMA table (fc-regs.h):
 * DVMA page n is the host page in entry n. The driver writes the tables; the
 * adapter reads them when a DMA starts, so an entry written before the register
 * write that starts a DMA (writel orders the memory writes before it) is seen.
 */
#include <linux/dma-mapping.h>
#include <linux/iopoll.h>

#include "fc.h"

/* the longest DMA send: FC_MAX_SEND at the SBus's ~61 MB/s is ~280 ms; wait far longer */
#define FC_TX_DRAIN_POLL_US	20
#define FC_TX_DRAIN_TIMEOUT_US	(2 * USEC_PER_SEC)

static_assert(PAGE_SIZE == FC_DVMA_PAGE, "a DVMA page is a host page");

int fc_dvma_table_alloc(struct fc_dev *fc, struct fc_dvma_table *t, u32 pages)
{
	/* dma_alloc_coherent's memory is zeroed: every entry starts invalid */
	t->entries = dma_alloc_coherent(fc->dev, pages * sizeof(*t->entries), &t->dma,
					GFP_KERNEL);
	if (!t->entries)
		return -ENOMEM;
	t->pages = pages;
	t->big_endian = fc->big_endian;
	return 0;
}

void fc_dvma_table_free(struct fc_dev *fc, struct fc_dvma_table *t)
{
	if (t->entries)
		dma_free_coherent(fc->dev, t->pages * sizeof(*t->entries), t->entries,
				  t->dma);
	t->entries = NULL;
}

/* DVMA pages [first, first + pages) -> the DMA-contiguous memory at dma */
void fc_dvma_map(struct fc_dvma_table *t, u32 first, dma_addr_t dma, u32 pages,
		 bool writable)
{
	u64 flags = FC_DVMA_VALID | (writable ? FC_DVMA_WRITE : 0);
	u32 i;

	for (i = 0; i < pages; i++)
		t->entries[first + i] = fc_to_mem64(t->big_endian,
			(((u64)dma + (u64)i * FC_DVMA_PAGE) & FC_DVMA_ADDR_MASK) | flags);
	dma_wmb();
}

void fc_dvma_unmap(struct fc_dvma_table *t, u32 first, u32 pages)
{
	memset(&t->entries[first], 0, pages * sizeof(*t->entries));
	dma_wmb();
}

/*
 * Configure channel c (it is disabled) with table t and a ring of 'slots' slots at
 * DVMA ring_dvma, and enable it. The adapter then owns every slot of the ring.
 */
int fc_chan_enable(struct fc_dev *fc, int c, struct fc_dvma_table *t, u32 ring_dvma,
		   u32 slots)
{
	u32 status;

	fc_ch_wr(fc, c, FC_CH_DVMA_LO, lower_32_bits(t->dma));
	fc_ch_wr(fc, c, FC_CH_DVMA_HI, upper_32_bits(t->dma));
	fc_ch_wr(fc, c, FC_CH_DVMA_PAGES, t->pages);
	fc_ch_wr(fc, c, FC_CH_RX_RING, ring_dvma);
	fc_ch_wr(fc, c, FC_CH_RX_SLOTS, slots);
	fc_ch_wr(fc, c, FC_CH_CTRL, FC_CH_ENABLE);
	status = fc_ch_rd(fc, c, FC_CH_STATUS);
	if (!(status & FC_CHS_ENABLED)) {
		dev_err(fc->dev,
			"channel %d refused its configuration (FC_REG_ERROR %u, status %#x): "
			"%u table entries, ring of %u slots at DVMA %#x\n",
			c, fc_rd(fc, FC_REG_ERROR), status, t->pages, slots, ring_dvma);
		return -EIO;
	}
	return 0;
}

/* When the write returns, the adapter no longer touches the channel's memory. */
void fc_chan_disable(struct fc_dev *fc, int c)
{
	fc_ch_wr(fc, c, FC_CH_CTRL, 0);
}

static bool fc_tx_moved_on(struct fc_dev *fc, void __iomem *page, u32 done0)
{
	return !fc_readl(fc, page + FC_U_TX_BUSY) || fc_readl(fc, page + FC_U_TX_DONE) != done0;
}

/*
 * Wait until the DMA send that may be reading host memory for channel c has
 * finished reading it. Called after DVMA entries were invalidated: the adapter
 * resolves a send's pages when it starts, so a send started before keeps reading
 * the old pages until it ends, while any send started after cannot reach them.
 * One DMA send runs at a time per channel: it is enough to see the channel not
 * busy, or the count of finished sends move on. 0, or -ETIMEDOUT.
 */
int fc_chan_wait_tx_done(struct fc_dev *fc, int c)
{
	void __iomem *page = fc->chan[c];
	u32 done0 = fc_readl(fc, page + FC_U_TX_DONE);
	bool moved;

	return read_poll_timeout(fc_tx_moved_on, moved, moved, FC_TX_DRAIN_POLL_US,
				 FC_TX_DRAIN_TIMEOUT_US, false, fc, page, done0);
}
