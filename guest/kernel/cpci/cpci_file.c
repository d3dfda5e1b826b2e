// SPDX-License-Identifier: GPL-2.0
/*
 * The CompactPCI backplane driver: /dev/cpciN (retrolink/uapi/cpci.h), the user area's
 * mappings and the user doorbells.
 *
 * mmap gives a peer's user area through this board's window (uncached: every load
 * and store a backplane transaction) or this node's own (cached memory the peers'
 * stores reach by DMA). Pages are inserted at the first touch (the fault handler), so
 * that remove can take them all away (unmap_mapping_range) and a later touch is
 * SIGBUS. User doorbells rung here are kept in a set until a CPCI_IOC_WAIT takes one;
 * a caller killed while it waits takes nothing.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/module.h>
#include <linux/vmalloc.h>

#include "cpci.h"

#define CPCI_MMAP_NODE_SHIFT	20

static_assert(CPCI_MMAP_WINDOW(1) == 1ull << CPCI_MMAP_NODE_SHIFT, "the mmap offsets");
static_assert(CPCI_MMAP_WINDOW(CPCI_MAX_NODES) <= CPCI_MMAP_LOCAL, "window offsets below local");

static int cpci_open(struct inode *inode, struct file *file)
{
	/* misc_open holds misc_mtx: remove's misc_deregister waits for this */
	struct cpci_dev *cpci = container_of(file->private_data, struct cpci_dev, misc);
	struct cpci_file *cf;

	cf = kzalloc(sizeof(*cf), GFP_KERNEL);
	if (!cf)
		return -ENOMEM;
	cf->cpci = cpci;
	cf->file = file;
	mutex_lock(&cpci->lock);
	if (cpci->dead) {
		mutex_unlock(&cpci->lock);
		kfree(cf);
		return -ENODEV;
	}
	list_add_tail(&cf->node, &cpci->files);
	mutex_unlock(&cpci->lock);
	cpci_get(cpci);
	file->private_data = cf;
	return 0;
}

/* the last close: no call is running and no mapping is left */
static int cpci_release(struct inode *inode, struct file *file)
{
	struct cpci_file *cf = file->private_data;
	struct cpci_dev *cpci = cf->cpci;

	mutex_lock(&cpci->lock);
	list_del(&cf->node);
	mutex_unlock(&cpci->lock);
	kfree(cf);
	cpci_put(cpci);
	return 0;
}

void cpci_file_revoke_all(struct cpci_dev *cpci)
{
	struct cpci_file *cf;

	mutex_lock(&cpci->lock);
	list_for_each_entry(cf, &cpci->files, node) {
		WRITE_ONCE(cf->revoked, true);
		unmap_mapping_range(cf->file->f_mapping, 0, 0, 1);
	}
	mutex_unlock(&cpci->lock);
}

/* ---- doorbells ------------------------------------------------------------------- */

/* from the interrupt: user doorbells rung here (DB_STATUS bits) */
void cpci_user_doorbells(struct cpci_dev *cpci, u32 bits)
{
	unsigned long flags;

	spin_lock_irqsave(&cpci->db_lock, flags);
	cpci->db_pending |= bits;
	spin_unlock_irqrestore(&cpci->db_lock, flags);
	wake_up_all(&cpci->db_wq);
}

/* take the lowest pending doorbell into w; false if there is none */
static bool cpci_db_take(struct cpci_dev *cpci, struct cpci_wait *w)
{
	unsigned long flags;
	bool got = false;

	spin_lock_irqsave(&cpci->db_lock, flags);
	if (cpci->db_pending) {
		u32 b = __ffs(cpci->db_pending);

		cpci->db_pending &= ~BIT(b);
		w->src = b / CPCI_DB_PER_NODE;
		w->bit = b % CPCI_DB_PER_NODE;
		got = true;
	}
	spin_unlock_irqrestore(&cpci->db_lock, flags);
	return got;
}

static long cpci_wait(struct cpci_dev *cpci, struct cpci_wait *w)
{
	long left = w->timeout_ms ? msecs_to_jiffies(w->timeout_ms) : MAX_SCHEDULE_TIMEOUT;
	bool got = false;

	if (w->rsvd)
		return -EINVAL;
	atomic_inc(&cpci->waiters);
	left = wait_event_interruptible_timeout(cpci->db_wq,
			(got = cpci_db_take(cpci, w)) || READ_ONCE(cpci->dead), left);
	atomic_dec(&cpci->waiters);
	if (got)
		return 0;	/* taken: the caller has it, even if a signal came too */
	if (left < 0)
		return -EINTR;
	return READ_ONCE(cpci->dead) ? -ENODEV : -ETIMEDOUT;
}

static long cpci_ring_user(struct cpci_dev *cpci, const struct cpci_ring *r)
{
	if (r->bit < CPCI_USER_DB_FIRST || r->bit >= CPCI_DB_PER_NODE)
		return -EINVAL;
	if (!cpci_is_peer(cpci, r->node))
		return -EHOSTUNREACH;
	cpci_ring(cpci, r->node, r->bit);
	return 0;
}

/* ---- ioctl ------------------------------------------------------------------------- */

static long cpci_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct cpci_file *cf = file->private_data;
	struct cpci_dev *cpci = cf->cpci;
	void __user *argp = (void __user *)arg;
	union {
		struct cpci_info info;
		struct cpci_ring ring;
		struct cpci_wait wait;
	} a;
	long ret;
	int idx;

	idx = srcu_read_lock(&cpci->srcu);
	if (READ_ONCE(cpci->dead)) {
		ret = -ENODEV;
		goto out;
	}
	switch (cmd) {
	case CPCI_IOC_INFO:
		a.info = (struct cpci_info){
			.node = cpci->node, .nodes = cpci->nodes, .user_size = CPCI_USER_SIZE,
		};
		ret = copy_to_user(argp, &a.info, sizeof(a.info)) ? -EFAULT : 0;
		break;
	case CPCI_IOC_RING:
		ret = copy_from_user(&a.ring, argp, sizeof(a.ring)) ? -EFAULT :
		      cpci_ring_user(cpci, &a.ring);
		break;
	case CPCI_IOC_WAIT:
		if (copy_from_user(&a.wait, argp, sizeof(a.wait))) {
			ret = -EFAULT;
			break;
		}
		ret = cpci_wait(cpci, &a.wait);
		if (!ret && copy_to_user(argp, &a.wait, sizeof(a.wait))) {
			/* nobody was told: the doorbell is pending again */
			cpci_user_doorbells(cpci, BIT(CPCI_DB_BIT(a.wait.src, a.wait.bit)));
			ret = -EFAULT;
		}
		break;
	default:
		ret = -ENOTTY;
	}
out:
	srcu_read_unlock(&cpci->srcu, idx);
	return ret;
}

/* ---- mmap ------------------------------------------------------------------------- */

/* the page frame of the user area's byte 'off' at mmap offset 'area' */
static unsigned long cpci_pfn(struct cpci_dev *cpci, u64 area, u64 off)
{
	void *local;

	if (area == CPCI_MMAP_LOCAL) {
		local = cpci->export + CPCI_USER_OFFSET + off;
		return is_vmalloc_addr(local) ? vmalloc_to_pfn(local) : PHYS_PFN(virt_to_phys(local));
	}
	return (cpci->win_phys + area + CPCI_USER_OFFSET + off) >> PAGE_SHIFT;
}

static vm_fault_t cpci_fault(struct vm_fault *vmf)
{
	struct cpci_file *cf = vmf->vma->vm_file->private_data;
	struct cpci_dev *cpci = cf->cpci;
	u64 pos = (u64)vmf->pgoff << PAGE_SHIFT;
	u64 area = pos >= CPCI_MMAP_LOCAL ? CPCI_MMAP_LOCAL :
		   pos & ~((1ull << CPCI_MMAP_NODE_SHIFT) - 1);
	vm_fault_t ret = VM_FAULT_SIGBUS;
	int idx = srcu_read_lock(&cpci->srcu);

	if (!READ_ONCE(cpci->dead) && !READ_ONCE(cf->revoked) && pos - area < CPCI_USER_SIZE)
		ret = vmf_insert_pfn(vmf->vma, vmf->address, cpci_pfn(cpci, area, pos - area));
	srcu_read_unlock(&cpci->srcu, idx);
	return ret;
}

static const struct vm_operations_struct cpci_vm_ops = {
	.fault = cpci_fault,
};

static int cpci_mmap_check(struct cpci_dev *cpci, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	unsigned long size = vma->vm_end - vma->vm_start;

	if (vma->vm_pgoff > U64_MAX >> PAGE_SHIFT)
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED) || size > CPCI_USER_SIZE)
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	if (off == CPCI_MMAP_LOCAL)
		return 0;
	if (off & ((1ull << CPCI_MMAP_NODE_SHIFT) - 1) ||
	    off >= CPCI_MMAP_WINDOW(CPCI_MAX_NODES))
		return -EINVAL;
	return cpci_is_peer(cpci, off >> CPCI_MMAP_NODE_SHIFT) ? 0 : -EHOSTUNREACH;
}

static int cpci_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct cpci_file *cf = file->private_data;
	struct cpci_dev *cpci = cf->cpci;
	int idx, ret;

	idx = srcu_read_lock(&cpci->srcu);
	ret = READ_ONCE(cpci->dead) ? -ENODEV : cpci_mmap_check(cpci, vma);
	if (!ret) {
		/* never executable, never copied into a child, never grown */
		vma->vm_flags &= ~VM_MAYEXEC;
		vma->vm_flags |= VM_PFNMAP | VM_DONTEXPAND | VM_DONTCOPY | VM_IO | VM_DONTDUMP;
		if (vma->vm_pgoff << PAGE_SHIFT != CPCI_MMAP_LOCAL)
			vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
		vma->vm_ops = &cpci_vm_ops;
	}
	srcu_read_unlock(&cpci->srcu, idx);
	return ret;
}

const struct file_operations cpci_fops = {
	.owner = THIS_MODULE,
	.open = cpci_open,
	.release = cpci_release,
	.unlocked_ioctl = cpci_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = cpci_mmap,
	.llseek = noop_llseek,
};
