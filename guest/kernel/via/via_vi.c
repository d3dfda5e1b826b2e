// SPDX-License-Identifier: GPL-2.0
/*
 * VIA kernel agent: VIs and completion queues, their mappings, and blocking waits.
 *
 * A CQ's ring is DMA-coherent memory of the agent's (the NIC writes it directly, not
 * through the TPT), mapped read-write into the owner (the consumer clears VALID). A
 * VI's doorbell page is BAR2's page of that VI, mapped uncached into the owner as it is
 * touched (under SRCU, so that once remove has zapped it a touch is SIGBUS). Neither
 * can be destroyed while mapped (EBUSY); every VMA holds the file, so the last close
 * comes after the last munmap.
 *
 * VIA_IOC_WAIT: remember the interrupt generation, arm the queue, read its count; if it
 * differs from what the caller has seen, return; else sleep until an interrupt bumps the
 * generation (then look again), the timeout, a signal or remove. The arm comes before
 * the read, so a completion after the read raises VIA_IRQ_DONE: no wake-up is lost.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sched/signal.h>
#include <linux/dma-mapping.h>
#include <linux/log2.h>

#include "via.h"

/* ---- completion queues ------------------------------------------------------------ */

static u32 via_cq_hw(struct via_dev *via, u32 cq, u32 cmd, u32 entries, dma_addr_t dma)
{
	unsigned long flags;
	u32 err;

	spin_lock_irqsave(&via->hw_lock, flags);
	via_wr(via, VIA_REG_CQ_INDEX, cq);
	if (cmd == VIA_CQ_SET) {
		via_wr(via, VIA_REG_CQ_ADDR_LO, lower_32_bits(dma));
		via_wr(via, VIA_REG_CQ_ADDR_HI, upper_32_bits(dma));
		via_wr(via, VIA_REG_CQ_ENTRIES, entries);
	}
	via_wr(via, VIA_REG_CQ_CMD, cmd);
	err = via_rd(via, VIA_REG_ERROR);
	spin_unlock_irqrestore(&via->hw_lock, flags);
	return err;
}

static void via_cq_free(struct via_dev *via, struct via_cq *cq)
{
	via->cqs[cq->index] = NULL;
	dma_free_coherent(&via->pdev->dev, cq->bytes, cq->ring, cq->dma);
	kfree(cq);
}

int via_cq_create(struct via_dev *via, void *owner, struct via_cq_create *req)
{
	struct via_cq *cq;
	u32 err;
	int i;

	if (req->entries == 0 || req->entries > VIA_CQ_MAX_ENTRIES) {
		pr_debug("%s: CQ of %u entries: 1 .. %u\n", via->name, req->entries,
			 VIA_CQ_MAX_ENTRIES);
		return -EINVAL;
	}
	for (i = 0; i < VIA_MAX_CQS && via->cqs[i]; i++)
		;
	if (i == VIA_MAX_CQS)
		return -ENOSPC;
	cq = kzalloc(sizeof(*cq), GFP_KERNEL);
	if (!cq)
		return -ENOMEM;
	cq->owner = owner;
	cq->index = i;
	cq->entries = roundup_pow_of_two(req->entries);
	cq->bytes = PAGE_ALIGN(VIA_CQ_RING_BYTES(cq->entries));
	cq->ring = dma_alloc_coherent(&via->pdev->dev, cq->bytes, &cq->dma, GFP_KERNEL);
	if (!cq->ring) {
		kfree(cq);
		return -ENOMEM;
	}
	err = via_cq_hw(via, i, VIA_CQ_SET, cq->entries, cq->dma);
	if (err) {
		dev_warn(&via->pdev->dev, "CQ %u refused: error %u\n", i, err);
		dma_free_coherent(&via->pdev->dev, cq->bytes, cq->ring, cq->dma);
		kfree(cq);
		return via_errno(err);
	}
	via->cqs[i] = cq;
	req->cq = i;
	req->ring_entries = cq->entries;
	return 0;
}

static struct via_cq *via_cq_lookup(struct via_dev *via, void *owner, u32 cq)
{
	if (cq >= VIA_MAX_CQS || !via->cqs[cq] || !via_owns(owner, via->cqs[cq]->owner))
		return NULL;
	return via->cqs[cq];
}

static int via_cq_remove(struct via_dev *via, struct via_cq *cq)
{
	if (!READ_ONCE(via->dead)) {
		u32 err = via_cq_hw(via, cq->index, VIA_CQ_CLEAR, 0, 0);

		if (err) {
			dev_warn(&via->pdev->dev, "CQ %u not cleared: error %u\n", cq->index, err);
			return via_errno(err);
		}
	}
	via_cq_free(via, cq);
	return 0;
}

int via_cq_destroy(struct via_dev *via, void *owner, u32 index)
{
	struct via_cq *cq = via_cq_lookup(via, owner, index);

	if (!cq) {
		pr_debug("%s: CQ %u is not this file's\n", via->name, index);
		return -ENOENT;
	}
	if (cq->users || cq->maps) {
		pr_debug("%s: CQ %u: %u VIs use it, %u mappings\n", via->name, index, cq->users,
			 cq->maps);
		return -EBUSY;
	}
	return via_cq_remove(via, cq);
}

void via_cq_release_all(struct via_dev *via, void *owner)
{
	int i;

	for (i = 0; i < VIA_MAX_CQS; i++)
		if (via->cqs[i] && via->cqs[i]->owner == owner)
			via_cq_remove(via, via->cqs[i]);
}

/* ---- VIs -------------------------------------------------------------------------- */

/* A VI command (with its fields), under hw_lock: VIA_REG_ERROR as an errno. */
static int via_vi_hw(struct via_dev *via, u32 vi, u32 cmd, u32 tag, u32 cqs, u32 peer)
{
	unsigned long flags;
	u32 err;

	spin_lock_irqsave(&via->hw_lock, flags);
	via_wr(via, VIA_REG_VI_INDEX, vi);
	if (cmd == VIA_VI_CMD_OPEN || cmd == VIA_VI_CMD_DATAGRAM) {
		via_wr(via, VIA_REG_VI_PTAG, tag);
		via_wr(via, VIA_REG_VI_CQ, cqs);
	} else if (cmd == VIA_VI_CMD_CONNECT) {
		via_wr(via, VIA_REG_VI_PEER, peer);
	}
	via_wr(via, VIA_REG_VI_CMD, cmd);
	err = via_rd(via, VIA_REG_ERROR);
	spin_unlock_irqrestore(&via->hw_lock, flags);
	if (err)
		pr_debug("%s: VI %u command %u refused: error %u\n", via->name, vi, cmd, err);
	return via_errno(err);
}

int via_vi_command(struct via_dev *via, u32 vi, u32 cmd, u32 peer)
{
	return via_vi_hw(via, vi, cmd, 0, 0, peer);
}

u32 via_vi_state(struct via_dev *via, u32 vi)
{
	return readl(via_db_page(via, vi) + VIA_DB_STATE);
}

/*
 * VI 'index' (VIA_LANE_VI for the kernel) or, with index U32_MAX, the first free one
 * above it; returns the VI or an errno.
 */
int via_vi_create(struct via_dev *via, void *owner, u32 index, u32 tag, u32 send_cq,
		  u32 recv_cq, bool datagram)
{
	struct via_cq *scq = NULL, *rcq = NULL;
	struct via_vi *vi;
	u32 i, cqs;
	int ret;

	if (!via_tag_owned(via, owner, tag)) {
		pr_debug("%s: CREATE_VI with tag %u, not this file's\n", via->name, tag);
		return -ENOENT;
	}
	if (send_cq != VIA_NO_CQ_HANDLE && !(scq = via_cq_lookup(via, owner, send_cq)))
		return -ENOENT;
	if (recv_cq != VIA_NO_CQ_HANDLE && !(rcq = via_cq_lookup(via, owner, recv_cq)))
		return -ENOENT;
	if (index == U32_MAX) {
		for (i = VIA_LANE_VI + 1; i < VIA_MAX_VIS && via->vis[i]; i++)
			;
		if (i == VIA_MAX_VIS)
			return -ENOSPC;
	} else {
		i = index;
		if (via->vis[i])
			return -EBUSY;
	}
	vi = kzalloc(sizeof(*vi), GFP_KERNEL);
	if (!vi)
		return -ENOMEM;
	vi->owner = owner;
	vi->index = i;
	vi->tag = tag;
	vi->scq = scq;
	vi->rcq = rcq;
	cqs = (scq ? scq->index : VIA_NO_CQ) | (rcq ? rcq->index : VIA_NO_CQ) << 16;
	ret = via_vi_hw(via, i, datagram ? VIA_VI_CMD_DATAGRAM : VIA_VI_CMD_OPEN, tag, cqs, 0);
	if (ret) {
		kfree(vi);
		return ret;
	}
	if (scq)
		scq->users++;
	if (rcq)
		rcq->users++;
	via->tag_users[tag]++;
	via->vis[i] = vi;
	return i;
}

static void via_vi_free(struct via_dev *via, struct via_vi *vi)
{
	if (vi->scq)
		vi->scq->users--;
	if (vi->rcq)
		vi->rcq->users--;
	via->tag_users[vi->tag]--;
	via->vis[vi->index] = NULL;
	kfree(vi);
}

/* Close the VI whatever its state: the peer is told, everything posted is flushed. */
static void via_vi_close(struct via_dev *via, struct via_vi *vi)
{
	if (!READ_ONCE(via->dead)) {
		via_cm_vi_closing(via, vi);
		via_vi_hw(via, vi->index, VIA_VI_CMD_CLOSE, 0, 0, 0);
	}
	via_vi_free(via, vi);
}

static struct via_vi *via_vi_lookup(struct via_dev *via, void *owner, u32 vi)
{
	if (vi >= VIA_MAX_VIS || !via->vis[vi] || !via_owns(owner, via->vis[vi]->owner))
		return NULL;
	return via->vis[vi];
}

int via_vi_destroy(struct via_dev *via, void *owner, u32 index)
{
	struct via_vi *vi = via_vi_lookup(via, owner, index);
	u32 state;

	if (!vi) {
		pr_debug("%s: VI %u is not this file's\n", via->name, index);
		return -ENOENT;
	}
	if (vi->maps) {
		pr_debug("%s: VI %u: its doorbell page is mapped\n", via->name, index);
		return -EBUSY;
	}
	state = via_vi_state(via, index);
	if (state != VIA_VI_IDLE && state != VIA_VI_DATAGRAM) {
		pr_debug("%s: VI %u is not idle (state %u)\n", via->name, index, state);
		return -EBUSY;
	}
	via_vi_close(via, vi);
	return 0;
}

void via_vi_release_all(struct via_dev *via, void *owner)
{
	int i;

	for (i = 0; i < VIA_MAX_VIS; i++)
		if (via->vis[i] && via->vis[i]->owner == owner)
			via_vi_close(via, via->vis[i]);
}

/* ---- waits ------------------------------------------------------------------------ */

/* Arm the queue and read its count (via->lock held: the VI or CQ stays). */
static int via_wait_arm(struct via_dev *via, void *owner, const struct via_wait *w,
			u32 *count)
{
	unsigned long flags;

	switch (w->kind) {
	case VIA_WAIT_SEND:
	case VIA_WAIT_RECV:
		if (!via_vi_lookup(via, owner, w->id))
			return -ENOENT;
		via_wr(via, VIA_REG_ARM, VIA_ARM_VI(w->id, w->kind));
		*count = readl(via_db_page(via, w->id) +
			       (w->kind == VIA_WAIT_SEND ? VIA_DB_SQ_DONE : VIA_DB_RQ_DONE));
		return 0;
	case VIA_WAIT_CQ:
		if (!via_cq_lookup(via, owner, w->id))
			return -ENOENT;
		via_wr(via, VIA_REG_ARM, VIA_ARM_CQ(w->id));
		spin_lock_irqsave(&via->hw_lock, flags);
		via_wr(via, VIA_REG_CQ_INDEX, w->id);
		*count = via_rd(via, VIA_REG_CQ_COUNT);
		spin_unlock_irqrestore(&via->hw_lock, flags);
		return 0;
	default:
		pr_debug("%s: WAIT of kind %u\n", via->name, w->kind);
		return -EINVAL;
	}
}

long via_wait(struct via_dev *via, void *owner, const struct via_wait *w)
{
	bool forever = w->timeout_ms == U32_MAX;
	long left = forever ? MAX_SCHEDULE_TIMEOUT : msecs_to_jiffies(w->timeout_ms);
	u32 count;
	int gen, ret;

	for (;;) {
		gen = atomic_read(&via->done_gen);
		mutex_lock(&via->lock);
		ret = via_wait_arm(via, owner, w, &count);
		mutex_unlock(&via->lock);
		if (ret)
			return ret;
		if (count != w->seen)
			return 0;
		if (!forever && left <= 0)
			return -ETIMEDOUT;
		left = wait_event_interruptible_timeout(via->done_wq,
				atomic_read(&via->done_gen) != gen || READ_ONCE(via->dead), left);
		if (left < 0)
			return -EINTR;
		if (READ_ONCE(via->dead))
			return -ENODEV;
		if (forever)
			left = MAX_SCHEDULE_TIMEOUT;
		else if (left == 0 && atomic_read(&via->done_gen) == gen)
			return -ETIMEDOUT;
	}
}

/* ---- mmap ------------------------------------------------------------------------- */

static vm_fault_t via_db_fault(struct vm_fault *vmf)
{
	struct via_vi *vi = vmf->vma->vm_private_data;
	struct via_file *vf = vmf->vma->vm_file->private_data;
	struct via_dev *via = vf->via;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	int idx = srcu_read_lock(&via->srcu);

	if (!READ_ONCE(via->dead) && !vf->revoked)
		ret = vmf_insert_pfn(vmf->vma, vmf->address,
				     (via->db_phys + (u64)vi->index * VIA_DB_PAGE_SIZE) >> PAGE_SHIFT);
	srcu_read_unlock(&via->srcu, idx);
	return ret;
}

/* a VMA of a doorbell page or a CQ ring copied or split (+1) or gone (-1) */
static void via_vm_count(struct vm_area_struct *vma, unsigned int *maps, int delta)
{
	struct via_file *vf = vma->vm_file->private_data;

	mutex_lock(&vf->via->lock);
	*maps += delta;
	mutex_unlock(&vf->via->lock);
}

static void via_db_vm_open(struct vm_area_struct *vma)
{
	via_vm_count(vma, &((struct via_vi *)vma->vm_private_data)->maps, 1);
}

static void via_db_vm_close(struct vm_area_struct *vma)
{
	via_vm_count(vma, &((struct via_vi *)vma->vm_private_data)->maps, -1);
}

static const struct vm_operations_struct via_db_vm_ops = {
	.open = via_db_vm_open,
	.close = via_db_vm_close,
	.fault = via_db_fault,
};

static void via_cq_vm_open(struct vm_area_struct *vma)
{
	via_vm_count(vma, &((struct via_cq *)vma->vm_private_data)->maps, 1);
}

static void via_cq_vm_close(struct vm_area_struct *vma)
{
	via_vm_count(vma, &((struct via_cq *)vma->vm_private_data)->maps, -1);
}

/* no .fault: once remove zaps it, a touch is SIGBUS */
static const struct vm_operations_struct via_cq_vm_ops = {
	.open = via_cq_vm_open,
	.close = via_cq_vm_close,
};

/* via->lock held */
static int via_mmap_locked(struct via_file *vf, struct vm_area_struct *vma, u64 off)
{
	struct via_dev *via = vf->via;
	unsigned long size = vma->vm_end - vma->vm_start;
	int ret;

	if (off < (1ull << 32)) {
		struct via_vi *vi;

		if (off & (VIA_DB_PAGE_SIZE - 1) || size != PAGE_SIZE)
			return -EINVAL;
		vi = via_vi_lookup(via, vf, off >> 12);
		if (!vi)
			return -ENOENT;
		vma->vm_flags |= VM_PFNMAP | VM_DONTEXPAND;
		vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
		vma->vm_private_data = vi;
		vma->vm_ops = &via_db_vm_ops;
		vi->maps++;
		return 0;
	} else {
		u64 rel = off - (1ull << 32);
		struct via_cq *cq;

		if (rel & ((1ull << 24) - 1))
			return -EINVAL;
		cq = via_cq_lookup(via, vf, rel >> 24);
		if (!cq)
			return -ENOENT;
		if (size != cq->bytes)
			return -EINVAL;
		vma->vm_pgoff = 0;	/* dma_mmap_coherent: the offset in the buffer */
		ret = dma_mmap_coherent(&via->pdev->dev, vma, cq->ring, cq->dma, size);
		if (ret)
			return ret;
		vma->vm_private_data = cq;
		vma->vm_ops = &via_cq_vm_ops;
		cq->maps++;
		return 0;
	}
}

int via_mmap(struct via_file *vf, struct vm_area_struct *vma)
{
	struct via_dev *via = vf->via;
	u64 off;
	int ret;

	if (vma->vm_pgoff > U64_MAX >> PAGE_SHIFT)
		return -EINVAL;
	off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	if (!(vma->vm_flags & VM_SHARED)) {
		pr_debug("%s: mmap needs MAP_SHARED\n", via->name);
		return -EINVAL;
	}
	if (vma->vm_flags & VM_EXEC) {
		pr_debug("%s: mmap with PROT_EXEC refused\n", via->name);
		return -EPERM;
	}
	/* never executable, never copied into a child: the objects are this file's */
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_flags |= VM_DONTCOPY | VM_IO | VM_DONTDUMP;
	mutex_lock(&via->lock);
	ret = via_mmap_locked(vf, vma, off);
	mutex_unlock(&via->lock);
	return ret;
}
