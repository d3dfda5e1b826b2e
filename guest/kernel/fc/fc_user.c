// SPDX-License-Identifier: GPL-2.0
/*
 * PUMA-III FC adapter: /dev/fcN, channel 1 (FC_CH_USER) for one process at a time
 * (the raw protocol and Fast Messages; interface: retrolink/uapi/fc.h).
 *
 * Owner. The channel is the process's (thread group's) that opened the file: any of its
 * threads may call, any other process holding the file (a forked child, a descriptor
 * passed over a socket) gets EACCES from every ioctl and mmap. Its mappings are
 * VM_DONTCOPY (and VM_IO, so MADV_DOFORK cannot undo it): a child inherits none. So
 * only the owner reaches the channel; the file, and the channel with it, still lasts
 * until its last close, whoever makes it.
 *
 * Protection. The adapter reaches host memory only through the channel's DVMA table,
 * which only the driver writes: entry n maps DVMA page n to memory the driver
 * allocated for this file (the receive ring at DVMA 0, writable by the adapter; the
 * FC_IOC_ALLOC buffers after it, readable only). The process can name DVMA
 * addresses in its register page, nothing else, so it can send from and receive into
 * the memory it was given and nothing else; a send outside it fails with
 * FC_ERR_WINDOW before any memory is touched. Channel 0 has its own table.
 *
 * Freeing. DMA memory is freed only when the adapter cannot reach it and no mapping
 * can: FC_IOC_FREE refuses a buffer still mapped (EBUSY, counted by the VMAs'
 * open/close), invalidates its entries and waits for a send started before to finish
 * reading it; the ring and the rest go at the last close, after the channel is
 * disabled (the adapter stops when that write returns). Every VMA holds the file,
 * so the last close comes after the last munmap.
 *
 * Remove. fc_user_revoke disables the channel and zaps the file's mappings: a touch
 * is then SIGBUS (the register page is mapped at fault time, under SRCU, like the SX
 * window; a DMA mapping has no fault handler). The memory itself stays until the last
 * close, so a mapping set up concurrently with remove maps memory of this file only.
 *
 * Locking. fc->user_lock: who holds the channel (open, release, remove). u->lock:
 * the buffers, the DVMA space, the map counts; taken under mmap_lock (mmap, VMA
 * open/close), so no user memory is touched while it is held.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/list.h>
#include <linux/bitmap.h>
#include <linux/uaccess.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>

#include "fc.h"
#include "retrolink/uapi/fc.h"

static unsigned int user_rx_slots = 512;
module_param(user_rx_slots, uint, 0444);
MODULE_PARM_DESC(user_rx_slots,
		 "receive ring slots of /dev/fcN (1.." __stringify(FC_RX_MAX_SLOTS)
		 ", 4 KiB each; halved until the DMA memory is there; default 512)");
#define FC_USER_MIN_SLOTS	16

struct fc_user;

/* DMA memory of the file, at DVMA pages [first, first + pages) */
struct fc_ubuf {
	struct list_head node;
	struct fc_user *u;
	u32 first, pages;
	void *cpu;
	dma_addr_t dma;
	unsigned int maps;	/* VMAs mapping it */
};

struct fc_user {
	struct fc_dev *fc;
	struct file *file;
	struct pid *owner;	/* the thread group that opened the file */
	bool revoked;		/* channel off, mappings zapped (fc->user_lock) */

	struct mutex lock;
	struct fc_dvma_table tbl;
	unsigned long *used;	/* DVMA pages allocated */
	u32 free_pages;
	struct fc_ubuf *ring;	/* at DVMA 0 */
	u32 rx_slots;
	struct list_head bufs;	/* the ring and FC_IOC_ALLOC's buffers */
	/* freed buffers the adapter might still have been reading: kept until close */
	struct list_head held;
};

static struct device *fc_user_dma_dev(struct fc_user *u)
{
	return u->fc->dev;
}

/* ---- DMA memory -------------------------------------------------------------- */

/* Allocate pages of DMA memory at a free DVMA range and map it (u->lock held). */
static struct fc_ubuf *fc_ubuf_alloc(struct fc_user *u, u32 pages, bool writable)
{
	size_t size = (size_t)pages * PAGE_SIZE;
	struct fc_ubuf *b;
	unsigned long first;

	/* one DMA-contiguous block: the page allocator's largest (no CMA in the guest) */
	if (get_order(size) >= MAX_ORDER) {
		pr_debug("%s: %zu bytes asked; DMA buffers are at most %lu bytes\n",
			 u->fc->name, size, PAGE_SIZE << (MAX_ORDER - 1));
		return ERR_PTR(-ENOMEM);
	}
	first = bitmap_find_next_zero_area(u->used, u->tbl.pages, 0, pages, 0);
	if (first >= u->tbl.pages) {
		pr_debug("%s: no %u free pages of DVMA space (%u free in all)\n",
			 u->fc->name, pages, u->free_pages);
		return ERR_PTR(-ENOMEM);
	}
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return ERR_PTR(-ENOMEM);
	b->cpu = dma_alloc_coherent(fc_user_dma_dev(u), size, &b->dma,
				    GFP_KERNEL | __GFP_NOWARN);
	if (!b->cpu) {
		kfree(b);
		return ERR_PTR(-ENOMEM);
	}
	b->u = u;
	b->first = first;
	b->pages = pages;
	fc_dvma_map(&u->tbl, first, b->dma, pages, writable);
	bitmap_set(u->used, first, pages);
	u->free_pages -= pages;
	list_add_tail(&b->node, &u->bufs);
	return b;
}

static void fc_ubuf_release_memory(struct fc_user *u, struct fc_ubuf *b)
{
	dma_free_coherent(fc_user_dma_dev(u), (size_t)b->pages * PAGE_SIZE, b->cpu, b->dma);
	kfree(b);
}

/* Take b out of the DVMA space (u->lock held); the adapter may still be reading it. */
static void fc_ubuf_unmap(struct fc_user *u, struct fc_ubuf *b)
{
	fc_dvma_unmap(&u->tbl, b->first, b->pages);
	bitmap_clear(u->used, b->first, b->pages);
	u->free_pages += b->pages;
	list_del(&b->node);
}

static struct fc_ubuf *fc_ubuf_find(struct fc_user *u, u64 dvma)
{
	struct fc_ubuf *b;

	list_for_each_entry(b, &u->bufs, node)
		if ((u64)b->first * FC_DVMA_PAGE == dvma)
			return b;
	return NULL;
}

/* ---- the channel's owner -------------------------------------------------------- */

static void fc_user_destroy(struct fc_user *u)
{
	struct fc_ubuf *b, *tmp;

	list_for_each_entry_safe(b, tmp, &u->bufs, node)
		fc_ubuf_release_memory(u, b);
	list_for_each_entry_safe(b, tmp, &u->held, node)
		fc_ubuf_release_memory(u, b);
	fc_dvma_table_free(u->fc, &u->tbl);
	bitmap_free(u->used);
	mutex_destroy(&u->lock);
	put_pid(u->owner);
	kfree(u);
}

/* Whether the caller is of the process that opened the file (else EACCES). */
static bool fc_user_is_owner(struct fc_user *u)
{
	if (task_tgid(current) == u->owner)
		return true;
	pr_debug("%s: %s[%d] is not the process that opened the channel\n", u->fc->name,
		 current->comm, task_tgid_nr(current));
	return false;
}

/* The ring, as large as user_rx_slots asks and the DMA memory allows (u->lock held). */
static int fc_user_alloc_ring(struct fc_user *u)
{
	u32 slots = clamp_t(u32, user_rx_slots, 1, FC_RX_MAX_SLOTS);
	struct fc_ubuf *b;

	for (;;) {
		b = fc_ubuf_alloc(u, slots * (FC_RX_SLOT_SIZE / FC_DVMA_PAGE), true);
		if (!IS_ERR(b))
			break;
		if (slots <= FC_USER_MIN_SLOTS)
			return PTR_ERR(b);
		slots /= 2;
	}
	if (slots != clamp_t(u32, user_rx_slots, 1, FC_RX_MAX_SLOTS))
		dev_info(u->fc->dev, "receive ring of %u slots (DMA memory is short)\n",
			 slots);
	u->ring = b;
	u->rx_slots = slots;
	return 0;
}

static struct fc_user *fc_user_create(struct fc_dev *fc, struct file *file)
{
	struct fc_user *u = kzalloc(sizeof(*u), GFP_KERNEL);
	int ret;

	if (!u)
		return ERR_PTR(-ENOMEM);
	u->fc = fc;
	u->file = file;
	u->owner = get_pid(task_tgid(current));
	mutex_init(&u->lock);
	INIT_LIST_HEAD(&u->bufs);
	INIT_LIST_HEAD(&u->held);
	u->used = bitmap_zalloc(FC_DVMA_MAX_PAGES, GFP_KERNEL);
	ret = u->used ? fc_dvma_table_alloc(fc, &u->tbl, FC_DVMA_MAX_PAGES) : -ENOMEM;
	if (ret)
		goto err;
	u->free_pages = u->tbl.pages;
	mutex_lock(&u->lock);
	ret = fc_user_alloc_ring(u);
	mutex_unlock(&u->lock);
	if (ret)
		goto err;
	ret = fc_chan_enable(fc, FC_CH_USER, &u->tbl, 0, u->rx_slots);
	if (ret)
		goto err;
	return u;
err:
	fc_user_destroy(u);
	return ERR_PTR(ret);
}

/* Called by remove, after every user call left: the channel goes, and its mappings. */
void fc_user_revoke(struct fc_dev *fc)
{
	struct fc_user *u;

	mutex_lock(&fc->user_lock);
	u = fc->user;
	if (u && !u->revoked) {
		fc_chan_disable(fc, FC_CH_USER);
		u->revoked = true;
		/* the register page and the DMA memory: a touch is now SIGBUS */
		unmap_mapping_range(u->file->f_mapping, 0, 0, 1);
	}
	mutex_unlock(&fc->user_lock);
}

/* ---- file operations ---------------------------------------------------------------- */

static int fc_user_open(struct inode *inode, struct file *file)
{
	/* misc_open holds misc_mtx: remove's misc_deregister waits for this */
	struct fc_dev *fc = container_of(file->private_data, struct fc_dev, misc);
	struct fc_user *u;
	int ret = 0;

	mutex_lock(&fc->user_lock);
	if (fc->dead) {
		ret = -ENODEV;
	} else if (fc->user) {
		ret = -EBUSY;		/* one process at a time */
	} else {
		u = fc_user_create(fc, file);
		if (IS_ERR(u))
			ret = PTR_ERR(u);
		else
			fc->user = u;
	}
	mutex_unlock(&fc->user_lock);
	if (ret)
		return ret;
	fc_get(fc);
	file->private_data = u;
	return 0;
}

/* the last close: no call is running and no mapping is left */
static int fc_user_release(struct inode *inode, struct file *file)
{
	struct fc_user *u = file->private_data;
	struct fc_dev *fc = u->fc;

	mutex_lock(&fc->user_lock);
	if (!u->revoked)
		fc_chan_disable(fc, FC_CH_USER);	/* the adapter lets go of its memory */
	fc->user = NULL;
	mutex_unlock(&fc->user_lock);
	fc_user_destroy(u);
	fc_put(fc);
	return 0;
}

static int fc_user_info(struct fc_user *u, void __user *argp)
{
	struct fc_dev *fc = u->fc;
	struct fc_info info = {
		.node = fc->node, .nodes = fc->nodes,
		.peers_up = fc_rd(fc, FC_REG_PEERS_UP),
		.rx_slots = u->rx_slots, .rx_slot_size = FC_RX_SLOT_SIZE,
		.pio_max = FC_PIO_MAX, .max_payload = FC_MAX_PAYLOAD,
		.dvma_pages = u->tbl.pages,
	};

	mutex_lock(&u->lock);
	info.dvma_free = u->free_pages;
	mutex_unlock(&u->lock);
	return copy_to_user(argp, &info, sizeof(info)) ? -EFAULT : 0;
}

/* Free the buffer at dvma (u->lock held). */
static int fc_user_free_locked(struct fc_user *u, u64 dvma)
{
	struct fc_ubuf *b = fc_ubuf_find(u, dvma);

	if (!b) {
		pr_debug("%s: FREE of DVMA %#llx: no buffer starts there\n", u->fc->name, dvma);
		return -ENOENT;
	}
	if (b == u->ring) {
		pr_debug("%s: FREE of DVMA 0: the receive ring goes with the file\n",
			 u->fc->name);
		return -EINVAL;
	}
	if (b->maps) {
		pr_debug("%s: FREE of DVMA %#llx: still mapped %u times\n", u->fc->name, dvma,
			 b->maps);
		return -EBUSY;
	}
	fc_ubuf_unmap(u, b);
	/* no new send can reach it now; one started before may still be reading it */
	if (fc_chan_wait_tx_done(u->fc, FC_CH_USER)) {
		dev_warn(u->fc->dev,
			 "a DMA send did not finish: the buffer at DVMA %#llx is freed at close\n",
			 dvma);
		list_add_tail(&b->node, &u->held);
		return -EIO;
	}
	fc_ubuf_release_memory(u, b);
	return 0;
}

static int fc_user_alloc_ioctl(struct fc_user *u, void __user *argp)
{
	struct fc_alloc req;
	struct fc_ubuf *b;
	u64 dvma;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.size == 0 || req.size > FC_MAX_SEND) {
		pr_debug("%s: ALLOC of %llu bytes: 1 .. %u\n", u->fc->name, req.size,
			 FC_MAX_SEND);
		return -EINVAL;
	}
	mutex_lock(&u->lock);
	b = fc_ubuf_alloc(u, DIV_ROUND_UP(req.size, FC_DVMA_PAGE), false);
	mutex_unlock(&u->lock);
	if (IS_ERR(b))
		return PTR_ERR(b);
	dvma = (u64)b->first * FC_DVMA_PAGE;
	req.dvma = dvma;
	if (copy_to_user(argp, &req, sizeof(req))) {
		/* nobody was told of it: undo (unless another thread already mapped it) */
		mutex_lock(&u->lock);
		fc_user_free_locked(u, dvma);
		mutex_unlock(&u->lock);
		return -EFAULT;
	}
	return 0;
}

static int fc_user_free_ioctl(struct fc_user *u, void __user *argp)
{
	struct fc_free req;
	int ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	mutex_lock(&u->lock);
	ret = fc_user_free_locked(u, req.dvma);
	mutex_unlock(&u->lock);
	return ret;
}

static long fc_user_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct fc_user *u = file->private_data;
	struct fc_dev *fc = u->fc;
	void __user *argp = (void __user *)arg;
	long ret;
	int idx;

	if (!fc_user_is_owner(u))
		return -EACCES;
	idx = srcu_read_lock(&fc->srcu);
	if (READ_ONCE(fc->dead)) {
		ret = -ENODEV;
		goto out;
	}
	switch (cmd) {
	case FC_IOC_INFO:
		ret = fc_user_info(u, argp);
		break;
	case FC_IOC_ALLOC:
		ret = fc_user_alloc_ioctl(u, argp);
		break;
	case FC_IOC_FREE:
		ret = fc_user_free_ioctl(u, argp);
		break;
	default:
		ret = -ENOTTY;
	}
out:
	srcu_read_unlock(&fc->srcu, idx);
	return ret;
}

static_assert((u64)FC_DVMA_MAX_PAGES * FC_DVMA_PAGE <= FC_MMAP_DVMA,
	      "a DVMA offset never reaches back to the register page");

/* ---- mmap ----------------------------------------------------------------------------- */

/* The register page is mapped as it is touched, and only while the adapter is there. */
static vm_fault_t fc_regs_fault(struct vm_fault *vmf)
{
	struct fc_user *u = vmf->vma->vm_private_data;
	struct fc_dev *fc = u->fc;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	int idx = srcu_read_lock(&fc->srcu);

	if (!READ_ONCE(fc->dead) && vmf->pgoff == 0)
		ret = vmf_insert_pfn(vmf->vma, vmf->address, fc->user_page_phys >> PAGE_SHIFT);
	srcu_read_unlock(&fc->srcu, idx);
	return ret;
}

static const struct vm_operations_struct fc_regs_vm_ops = {
	.fault = fc_regs_fault,
};

static void fc_dvma_vm_open(struct vm_area_struct *vma)
{
	struct fc_ubuf *b = vma->vm_private_data;

	mutex_lock(&b->u->lock);
	b->maps++;
	mutex_unlock(&b->u->lock);
}

static void fc_dvma_vm_close(struct vm_area_struct *vma)
{
	struct fc_ubuf *b = vma->vm_private_data;

	mutex_lock(&b->u->lock);
	b->maps--;
	mutex_unlock(&b->u->lock);
}

/* no .fault: once remove zaps it, a touch is SIGBUS */
static const struct vm_operations_struct fc_dvma_vm_ops = {
	.open = fc_dvma_vm_open,
	.close = fc_dvma_vm_close,
};

static int fc_user_mmap_regs(struct fc_user *u, struct vm_area_struct *vma)
{
	if (vma->vm_end - vma->vm_start != PAGE_SIZE) {
		pr_debug("%s: the register page is one page: %lu bytes asked\n", u->fc->name,
			 vma->vm_end - vma->vm_start);
		return -EINVAL;
	}
	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	vma->vm_private_data = u;
	vma->vm_ops = &fc_regs_vm_ops;
	return 0;
}

static int fc_user_mmap_dvma(struct fc_user *u, struct vm_area_struct *vma, u64 dvma)
{
	unsigned long size = vma->vm_end - vma->vm_start;
	struct fc_ubuf *b;
	int ret;

	mutex_lock(&u->lock);
	b = fc_ubuf_find(u, dvma);
	if (!b || (u64)b->pages * PAGE_SIZE != size) {
		pr_debug("%s: mmap of DVMA %#llx + %lu: not an allocated buffer, whole\n",
			 u->fc->name, dvma, size);
		ret = -EINVAL;
		goto out;
	}
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_pgoff = 0;	/* dma_mmap_coherent takes it as the offset in the buffer */
	ret = dma_mmap_coherent(fc_user_dma_dev(u), vma, b->cpu, b->dma, size);
	if (ret)
		goto out;
	vma->vm_private_data = b;
	vma->vm_ops = &fc_dvma_vm_ops;
	b->maps++;		/* the first VMA: .open is for copies and splits */
out:
	mutex_unlock(&u->lock);
	return ret;
}

static int fc_user_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct fc_user *u = file->private_data;
	struct fc_dev *fc = u->fc;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	int idx, ret;

	if (!fc_user_is_owner(u))
		return -EACCES;
	if (vma->vm_pgoff > U64_MAX >> PAGE_SHIFT)
		return -EINVAL;		/* the offset would wrap round to a valid one */

	if (!(vma->vm_flags & VM_SHARED)) {
		pr_debug("%s: mmap needs MAP_SHARED\n", fc->name);
		return -EINVAL;
	}
	if (vma->vm_flags & VM_EXEC) {
		pr_debug("%s: mmap with PROT_EXEC refused\n", fc->name);
		return -EPERM;
	}
	/* never executable (mprotect included), never copied into a child (VM_IO makes
	 * MADV_DOFORK fail; dma_mmap_coherent's remap_pfn_range sets it too) */
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_flags |= VM_DONTCOPY | VM_IO;

	idx = srcu_read_lock(&fc->srcu);
	if (READ_ONCE(fc->dead))
		ret = -ENODEV;
	else if (off == FC_MMAP_REGS)
		ret = fc_user_mmap_regs(u, vma);
	else if (off >= FC_MMAP_DVMA)
		ret = fc_user_mmap_dvma(u, vma, off - FC_MMAP_DVMA);
	else
		ret = -EINVAL;
	srcu_read_unlock(&fc->srcu, idx);
	return ret;
}

const struct file_operations fc_user_fops = {
	.owner = THIS_MODULE,
	.open = fc_user_open,
	.release = fc_user_release,
	.unlocked_ioctl = fc_user_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = fc_user_mmap,
	.llseek = noop_llseek,
};
