// SPDX-License-Identifier: GPL-2.0
/*
 * VIA kernel agent: protection tags and memory registration.
 *
 * A tag (1 .. 255) is the NIC's: the agent hands each out to one owner and counts the
 * VIs and regions holding it, so it is freed only when none does (EBUSY).
 *
 * Registration pins the range's pages (pin_user_pages_fast, FOLL_LONGTERM: the NIC
 * reaches them at any time), maps each for DMA, writes their TPT entries with the tag
 * (writable unless the process could only read the memory) and sets the NIC's region.
 * Deregistration clears the region first: once that write returns, the NIC touches its
 * pages no more (via-regs.h), and only then are the entries invalidated, the pages
 * unmapped and unpinned (marked dirty: the NIC may have written them).
 *
 * Everything here runs under via->lock.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/bitmap.h>
#include <linux/dma-mapping.h>
#include <linux/overflow.h>

#include "via.h"

/* ---- protection tags ------------------------------------------------------------- */

int via_tag_create(struct via_dev *via, void *owner, u32 *tag)
{
	u32 t;

	for (t = 1; t < VIA_MAX_TAGS; t++) {
		if (!via->tag_owner[t]) {
			via->tag_owner[t] = owner;
			via->tag_users[t] = 0;
			*tag = t;
			return 0;
		}
	}
	return -ENOSPC;
}

bool via_tag_owned(struct via_dev *via, void *owner, u32 tag)
{
	return tag > 0 && tag < VIA_MAX_TAGS && via_owns(owner, via->tag_owner[tag]);
}

int via_tag_destroy(struct via_dev *via, void *owner, u32 tag)
{
	if (!via_tag_owned(via, owner, tag)) {
		pr_debug("%s: tag %u is not this file's\n", via->name, tag);
		return -ENOENT;
	}
	if (via->tag_users[tag]) {
		pr_debug("%s: tag %u is held by %u VIs and regions\n", via->name, tag,
			 via->tag_users[tag]);
		return -EBUSY;
	}
	via->tag_owner[tag] = NULL;
	return 0;
}

void via_tag_release_all(struct via_dev *via, void *owner)
{
	u32 t;

	for (t = 1; t < VIA_MAX_TAGS; t++)
		if (via->tag_owner[t] == owner)
			via->tag_owner[t] = NULL;
}

/* ---- regions ------------------------------------------------------------------------- */

static int via_mr_find_slot(struct via_dev *via)
{
	int i;

	for (i = 0; i < VIA_MAX_REGIONS; i++)
		if (!via->mrs[i])
			return i;
	return -ENOSPC;
}

/* TPT entries [first, first + n) for the DMA addresses of 'pages' or from 'dma' */
static void via_tpt_fill(struct via_dev *via, u32 first, u32 n, dma_addr_t *addrs,
			 u32 tag, bool writable)
{
	u64 bits = VIA_TPT_VALID | (writable ? VIA_TPT_WRITE : 0) |
		   ((u64)tag << VIA_TPT_TAG_SHIFT);
	u32 i;

	for (i = 0; i < n; i++)
		WRITE_ONCE(via->tpt[first + i], cpu_to_le64((addrs[i] & VIA_TPT_ADDR_MASK) | bits));
	/* the entries are in memory before the region that uses them is set */
	dma_wmb();
}

/* Set region mr in the NIC (the fields, then VIA_MR_SET). */
static int via_mr_set_hw(struct via_dev *via, struct via_mr *mr)
{
	unsigned long flags;
	u32 err;

	spin_lock_irqsave(&via->hw_lock, flags);
	via_wr(via, VIA_REG_MR_INDEX, mr->index);
	via_wr(via, VIA_REG_MR_VA_LO, lower_32_bits(mr->va));
	via_wr(via, VIA_REG_MR_VA_HI, upper_32_bits(mr->va));
	via_wr(via, VIA_REG_MR_LEN, mr->len);
	via_wr(via, VIA_REG_MR_TPT, mr->tpt);
	via_wr(via, VIA_REG_MR_PTAG, mr->tag);
	via_wr(via, VIA_REG_MR_CMD, VIA_MR_SET);
	err = via_rd(via, VIA_REG_ERROR);
	spin_unlock_irqrestore(&via->hw_lock, flags);
	if (err)
		dev_warn(&via->pdev->dev, "region %u refused: error %u\n", mr->index, err);
	return via_errno(err);
}

static void via_mr_clear_hw(struct via_dev *via, struct via_mr *mr)
{
	unsigned long flags;

	if (READ_ONCE(via->dead))
		return;		/* the NIC was reset: no region is set */
	spin_lock_irqsave(&via->hw_lock, flags);
	via_wr(via, VIA_REG_MR_INDEX, mr->index);
	via_wr(via, VIA_REG_MR_CMD, VIA_MR_CLEAR);
	/* a read: the clear has reached the NIC, which now touches the pages no more */
	via_rd(via, VIA_REG_ERROR);
	spin_unlock_irqrestore(&via->hw_lock, flags);
}

/* unmap and unpin what via_mr_pin_map got (n pages) */
static void via_mr_unmap_pages(struct via_dev *via, struct via_mr *mr, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		dma_addr_t a = le64_to_cpu(via->tpt[mr->tpt + i]) & VIA_TPT_ADDR_MASK;

		WRITE_ONCE(via->tpt[mr->tpt + i], 0);
		dma_unmap_page(&via->pdev->dev, a, PAGE_SIZE, DMA_BIDIRECTIONAL);
	}
	unpin_user_pages_dirty_lock(mr->pages, mr->npages, mr->writable);
}

static void via_mr_free(struct via_dev *via, struct via_mr *mr)
{
	if (mr->pages) {
		via_mr_unmap_pages(via, mr, mr->npages);
		kvfree(mr->pages);
	} else {
		memset(&via->tpt[mr->tpt], 0, (size_t)mr->npages * sizeof(*via->tpt));
	}
	bitmap_clear(via->tpt_used, mr->tpt, mr->npages);
	via->tag_users[mr->tag]--;
	via->mrs[mr->index] = NULL;
	kfree(mr);
}

/* A region of TPT entries for npages pages, and a region slot: filled into mr. */
static int via_mr_reserve(struct via_dev *via, struct via_mr *mr, u32 npages)
{
	unsigned long first;
	int index = via_mr_find_slot(via);

	if (index < 0) {
		pr_debug("%s: all %u regions are taken\n", via->name, VIA_MAX_REGIONS);
		return index;
	}
	first = bitmap_find_next_zero_area(via->tpt_used, VIA_TPT_MAX_PAGES, 0, npages, 0);
	if (first >= VIA_TPT_MAX_PAGES) {
		pr_debug("%s: no %u free TPT entries in a row\n", via->name, npages);
		return -ENOSPC;
	}
	mr->index = index;
	mr->tpt = first;
	mr->npages = npages;
	return 0;
}

/* Pin [va, va + len) and map it for DMA into the TPT (mr's entries). */
static int via_mr_pin_map(struct via_dev *via, struct via_mr *mr)
{
	unsigned long start = mr->va & PAGE_MASK;
	dma_addr_t *addrs;
	int pinned = 0, ret;
	u32 i;

	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), GFP_KERNEL);
	addrs = kvcalloc(mr->npages, sizeof(*addrs), GFP_KERNEL);
	if (!mr->pages || !addrs) {
		ret = -ENOMEM;
		goto out;
	}
	mr->writable = true;
	pinned = pin_user_pages_fast(start, mr->npages, FOLL_WRITE | FOLL_LONGTERM, mr->pages);
	if (pinned == -EFAULT) {
		/* memory the process may only read: the NIC may only read it too */
		mr->writable = false;
		pinned = pin_user_pages_fast(start, mr->npages, FOLL_LONGTERM, mr->pages);
	}
	if (pinned < 0) {
		ret = pinned;
		pinned = 0;
		goto out;
	}
	if (pinned != mr->npages) {
		pr_debug("%s: only %d of %u pages at %#lx could be pinned\n", via->name, pinned,
			 mr->npages, start);
		ret = -EFAULT;
		goto out;
	}
	for (i = 0; i < mr->npages; i++) {
		addrs[i] = dma_map_page(&via->pdev->dev, mr->pages[i], 0, PAGE_SIZE,
					DMA_BIDIRECTIONAL);
		if (dma_mapping_error(&via->pdev->dev, addrs[i])) {
			via_tpt_fill(via, mr->tpt, i, addrs, mr->tag, mr->writable);
			via_mr_unmap_pages(via, mr, i);
			pinned = 0;
			ret = -ENOMEM;
			goto out;
		}
	}
	via_tpt_fill(via, mr->tpt, mr->npages, addrs, mr->tag, mr->writable);
	ret = 0;
out:
	if (ret) {
		if (pinned)
			unpin_user_pages(mr->pages, pinned);
		kvfree(mr->pages);
		mr->pages = NULL;
	}
	kvfree(addrs);
	return ret;
}

/* Take mr's entries and slot and set it in the NIC; on failure it is freed. */
static int via_mr_install(struct via_dev *via, struct via_mr *mr, u32 *handle)
{
	int ret;

	bitmap_set(via->tpt_used, mr->tpt, mr->npages);
	via->tag_users[mr->tag]++;
	via->mrs[mr->index] = mr;
	ret = via_mr_set_hw(via, mr);
	if (ret) {
		via_mr_free(via, mr);
		return ret;
	}
	*handle = mr->index + 1;
	return 0;
}

int via_mr_register_user(struct via_dev *via, void *owner, u64 va, u64 len, u32 tag,
			 u32 *handle)
{
	struct via_mr *mr;
	u64 end;
	int ret;

	if (!via_tag_owned(via, owner, tag)) {
		pr_debug("%s: REGISTER with tag %u, not this file's\n", via->name, tag);
		return -ENOENT;
	}
	if (len == 0 || len > VIA_MAX_REGISTER || check_add_overflow(va, len, &end) ||
	    end > TASK_SIZE_MAX) {
		pr_debug("%s: REGISTER of %llu bytes at %#llx: 1 .. %u bytes of user memory\n",
			 via->name, len, va, VIA_MAX_REGISTER);
		return -EINVAL;
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return -ENOMEM;
	mr->owner = owner;
	mr->tag = tag;
	mr->va = va;
	mr->len = len;
	ret = via_mr_reserve(via, mr, (PAGE_ALIGN(end) - (va & PAGE_MASK)) >> PAGE_SHIFT);
	if (ret)
		goto err_free;
	ret = via_mr_pin_map(via, mr);
	if (ret)
		goto err_free;
	return via_mr_install(via, mr, handle);

err_free:
	kfree(mr);
	return ret;
}

/* A region over kernel memory already mapped for DMA (the LAN emulation's buffers). */
int via_mr_register_kernel(struct via_dev *via, void *cpu, dma_addr_t dma, size_t len,
			   u32 tag, u32 *handle)
{
	u64 va = (unsigned long)cpu;
	struct via_mr *mr;
	dma_addr_t *addrs;
	u32 i;
	int ret;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return -ENOMEM;
	mr->owner = VIA_OWNER_KERNEL;
	mr->tag = tag;
	mr->va = va;
	mr->len = len;
	mr->writable = true;
	ret = via_mr_reserve(via, mr, (PAGE_ALIGN(va + len) - (va & PAGE_MASK)) >> PAGE_SHIFT);
	if (ret)
		goto err_free;
	addrs = kcalloc(mr->npages, sizeof(*addrs), GFP_KERNEL);
	if (!addrs) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < mr->npages; i++)
		addrs[i] = (dma & VIA_TPT_ADDR_MASK) + (dma_addr_t)i * PAGE_SIZE;
	via_tpt_fill(via, mr->tpt, mr->npages, addrs, tag, true);
	kfree(addrs);
	return via_mr_install(via, mr, handle);

err_free:
	kfree(mr);
	return ret;
}

int via_mr_deregister(struct via_dev *via, void *owner, u32 handle)
{
	struct via_mr *mr;

	if (handle == 0 || handle > VIA_MAX_REGIONS || !via->mrs[handle - 1] ||
	    !via_owns(owner, via->mrs[handle - 1]->owner)) {
		pr_debug("%s: memory handle %u is not this file's\n", via->name, handle);
		return -ENOENT;
	}
	mr = via->mrs[handle - 1];
	via_mr_clear_hw(via, mr);
	via_mr_free(via, mr);
	return 0;
}

void via_mr_release_all(struct via_dev *via, void *owner)
{
	int i;

	for (i = 0; i < VIA_MAX_REGIONS; i++) {
		struct via_mr *mr = via->mrs[i];

		if (mr && mr->owner == owner) {
			via_mr_clear_hw(via, mr);
			via_mr_free(via, mr);
		}
	}
}
