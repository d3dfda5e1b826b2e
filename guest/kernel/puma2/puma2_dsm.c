// SPDX-License-Identifier: GPL-2.0
/*
 * PUMA-II driver: /dev/puma2, the shared space's DSM part mapped into processes (the
 * paper's future work). A mapping's page is the board memory's page, reached across
 * the VME bus (uncached); it is mapped only while the board holds the page for this
 * host, read-only while held for reading:
 *  - a read of an unmapped page asks the board for it (READ: fetched if another board
 *    has it) and maps it read-only;
 *  - a write asks for it writable (WRITE: ownership moves here and every other copy is
 *    invalidated, pfn_mkwrite for a page mapped read-only) and maps it writable;
 *  - when another board wants a page held here, the board sends a RECALL: every
 *    mapping of the page is zapped, then it is released (puma2_recall_work), and the
 *    next touch asks again.
 * So processes on different nodes that map the same offset share one memory, with the
 * board's consistency; an x86 locked instruction is one access to a page held for
 * writing, so atomics on it are atomic across the nodes.
 *
 * Faults are serialised per page (d->fetching) and never hold dsm_lock while they wait
 * for the board, since the answer may wait for this node's own RECALL.
 */
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "retrolink/uapi/puma2.h"
#include "puma2.h"

struct puma2_file {
	struct puma2_dev *d;
	struct file *file;
	struct list_head node;		/* in d->files */
};

static void puma2_zap(struct puma2_dev *d, loff_t start, loff_t len)
{
	struct puma2_file *pf;

	lockdep_assert_held(&d->dsm_lock);
	list_for_each_entry(pf, &d->files, node)
		unmap_mapping_range(pf->file->f_mapping, start, len, 1);
}

/* RECALLs: the DSM's pages are unmapped and let go; the disk's are let go by their request. */
void puma2_recall_work(struct work_struct *work)
{
	struct puma2_dev *d = container_of(work, struct puma2_dev, recall_work);
	u32 page;

	for (;;) {
		page = find_first_bit(d->recalled, d->space_pages);
		if (page >= d->space_pages)
			break;
		clear_bit(page, d->recalled);
		if (page < d->dsm_first)
			continue;
		mutex_lock(&d->dsm_lock);
		puma2_zap(d, (loff_t)(page - d->dsm_first) << PAGE_SHIFT, PAGE_SIZE);
		puma2_page_put(d, page);
		d->recalls++;
		mutex_unlock(&d->dsm_lock);
	}
}

/* Remove: every mapping zapped; dead, so a touch is SIGBUS. */
void puma2_dsm_revoke(struct puma2_dev *d)
{
	mutex_lock(&d->dsm_lock);
	puma2_zap(d, 0, 0);
	mutex_unlock(&d->dsm_lock);
}

/* ---- faults ------------------------------------------------------------------------- */

static vm_fault_t puma2_dsm_access(struct vm_fault *vmf, bool write, bool mkwrite)
{
	struct vm_area_struct *vma = vmf->vma;
	struct puma2_file *pf = vma->vm_private_data;
	struct puma2_dev *d = pf->d;
	u8 want = write ? PUMA2_OP_WRITE : PUMA2_OP_READ;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	u32 idx = vmf->pgoff, page;
	int srcu;

	if (vmf->pgoff >= d->dsm_pages)
		return VM_FAULT_SIGBUS;
	page = d->dsm_first + idx;
	srcu = srcu_read_lock(&d->srcu);
	while (!READ_ONCE(d->dead)) {
		u8 held;

		mutex_lock(&d->dsm_lock);
		held = puma2_held(d, page);
		if (held >= want) {
			if (mkwrite) {
				ret = 0;	/* the core makes the PTE writable */
			} else {
				vm_flags_t flags = held == PUMA2_OP_WRITE ? vma->vm_flags
									: vma->vm_flags & ~VM_WRITE;
				pgprot_t prot = pgprot_noncached(vm_get_page_prot(flags));

				ret = vmf_insert_pfn_prot(vma, vmf->address,
							  (d->mem_phys >> PAGE_SHIFT) + page, prot);
			}
			mutex_unlock(&d->dsm_lock);
			break;
		}
		if (test_and_set_bit(idx, d->fetching)) {
			mutex_unlock(&d->dsm_lock);
			wait_event(d->dsm_wait, !test_bit(idx, d->fetching) || READ_ONCE(d->dead));
			continue;
		}
		mutex_unlock(&d->dsm_lock);
		if (write)
			d->faults_write++;
		else
			d->faults_read++;
		if (puma2_page_get(d, page, want)) {
			clear_bit(idx, d->fetching);
			wake_up_all(&d->dsm_wait);
			break;			/* ENODEV, a killed process, a refusal: SIGBUS */
		}
		clear_bit(idx, d->fetching);
		wake_up_all(&d->dsm_wait);
		/* and map it, unless a RECALL took it meanwhile: then ask again */
	}
	srcu_read_unlock(&d->srcu, srcu);
	return ret;
}

static vm_fault_t puma2_dsm_fault(struct vm_fault *vmf)
{
	return puma2_dsm_access(vmf, vmf->flags & FAULT_FLAG_WRITE, false);
}

static vm_fault_t puma2_dsm_pfn_mkwrite(struct vm_fault *vmf)
{
	return puma2_dsm_access(vmf, true, true);
}

static const struct vm_operations_struct puma2_dsm_vm_ops = {
	.fault = puma2_dsm_fault,
	.pfn_mkwrite = puma2_dsm_pfn_mkwrite,
};

static int puma2_dsm_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct puma2_file *pf = file->private_data;
	struct puma2_dev *d = pf->d;
	u64 pages = vma_pages(vma);

	if (!(vma->vm_flags & VM_SHARED)) {
		pr_debug("%s: mmap needs MAP_SHARED\n", d->name);
		return -EINVAL;
	}
	if (vma->vm_flags & VM_EXEC) {
		pr_debug("%s: mmap with PROT_EXEC refused\n", d->name);
		return -EPERM;
	}
	if (vma->vm_pgoff > d->dsm_pages || pages > d->dsm_pages - vma->vm_pgoff) {
		pr_debug("%s: mmap of pages %lu + %llu: the DSM has %u\n", d->name, vma->vm_pgoff,
			 pages, d->dsm_pages);
		return -EINVAL;
	}
	if (READ_ONCE(d->dead))
		return -ENODEV;
	/* never executable (mprotect included), never copied into a child */
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY;
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	vma->vm_private_data = pf;
	vma->vm_ops = &puma2_dsm_vm_ops;
	return 0;
}

/* ---- the file ------------------------------------------------------------------------ */

static int puma2_dsm_open(struct inode *inode, struct file *file)
{
	struct puma2_dev *d = container_of(file->private_data, struct puma2_dev, misc);
	struct puma2_file *pf = kzalloc(sizeof(*pf), GFP_KERNEL);

	if (!pf)
		return -ENOMEM;
	pf->d = d;
	pf->file = file;
	puma2_get(d);
	mutex_lock(&d->dsm_lock);
	list_add(&pf->node, &d->files);
	mutex_unlock(&d->dsm_lock);
	file->private_data = pf;
	return 0;
}

static int puma2_dsm_release(struct inode *inode, struct file *file)
{
	struct puma2_file *pf = file->private_data;
	struct puma2_dev *d = pf->d;

	mutex_lock(&d->dsm_lock);
	list_del(&pf->node);
	mutex_unlock(&d->dsm_lock);
	kfree(pf);
	puma2_put(d);
	return 0;
}

static u64 puma2_rd64(struct puma2_dev *d, u32 lo)
{
	u64 v = puma2_rd(d, lo);	/* latches HI */

	return v | (u64)puma2_rd(d, lo + 4) << 32;
}

/* PUMA2_IOC_FETCH: the pages brought here and let go, a window of them in flight. */
static long puma2_dsm_fetch(struct puma2_dev *d, void __user *argp)
{
	struct puma2_req *win[PUMA2_CMD_DEPTH / 2];
	struct puma2_fetch f;
	u32 i, sent = 0, done = 0;
	long ret = 0;

	if (copy_from_user(&f, argp, sizeof(f)))
		return -EFAULT;
	if (f.reserved || (f.op != PUMA2_OP_READ && f.op != PUMA2_OP_WRITE) ||
	    f.first >= d->dsm_pages || f.pages > d->dsm_pages - f.first)
		return -EINVAL;
	for (i = 0; i < f.pages; i++)
		if (puma2_held(d, d->dsm_first + f.first + i) ||
		    test_bit(f.first + i, d->fetching))
			return -EBUSY;
	while (done < f.pages) {
		while (sent < f.pages && sent - done < ARRAY_SIZE(win)) {
			struct puma2_req *r = puma2_submit(d, d->dsm_first + f.first + sent, f.op);

			if (IS_ERR(r)) {
				ret = PTR_ERR(r);
				f.pages = sent;		/* wait for those in flight, then stop */
				break;
			}
			win[sent++ % ARRAY_SIZE(win)] = r;
		}
		if (done == sent)
			break;
		if (puma2_wait(d, win[done % ARRAY_SIZE(win)]) && !ret)
			ret = -EIO;
		puma2_page_put(d, d->dsm_first + f.first + done);
		done++;
	}
	return ret;
}

static long puma2_dsm_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct puma2_file *pf = file->private_data;
	struct puma2_dev *d = pf->d;
	void __user *argp = (void __user *)arg;
	struct puma2_info info;
	struct puma2_stats st;
	long ret = 0;
	int idx;

	idx = srcu_read_lock(&d->srcu);
	if (READ_ONCE(d->dead)) {
		ret = -ENODEV;
		goto out;
	}
	switch (cmd) {
	case PUMA2_IOC_INFO:
		info = (struct puma2_info){
			.node = d->node, .nodes = d->nodes, .space_pages = d->space_pages,
			.disk_pages = d->disk_pages, .dsm_first = d->dsm_first,
			.dsm_pages = d->dsm_pages,
		};
		if (copy_to_user(argp, &info, sizeof(info)))
			ret = -EFAULT;
		break;
	case PUMA2_IOC_FETCH:
		ret = puma2_dsm_fetch(d, argp);
		break;
	case PUMA2_IOC_STATS:
		memset(&st, 0, sizeof(st));
		mutex_lock(&d->dsm_lock);	/* one reader of the latched halves */
		st.bus_ns = puma2_rd64(d, PUMA2_REG_BUS_NS_LO);
		st.net_ns = puma2_rd64(d, PUMA2_REG_NET_NS_LO);
		st.pages_in = puma2_rd(d, PUMA2_REG_PAGES_IN);
		st.pages_out = puma2_rd(d, PUMA2_REG_PAGES_OUT);
		st.msgs_in = puma2_rd(d, PUMA2_REG_MSGS_IN);
		st.msgs_out = puma2_rd(d, PUMA2_REG_MSGS_OUT);
		st.invalidated = puma2_rd(d, PUMA2_REG_INVALIDATED);
		st.recalls = d->recalls;
		st.faults_read = d->faults_read;
		st.faults_write = d->faults_write;
		mutex_unlock(&d->dsm_lock);
		st.now_ns = ktime_get_ns();
		if (copy_to_user(argp, &st, sizeof(st)))
			ret = -EFAULT;
		break;
	default:
		ret = -ENOTTY;
	}
out:
	srcu_read_unlock(&d->srcu, idx);
	return ret;
}

const struct file_operations puma2_dsm_fops = {
	.owner = THIS_MODULE,
	.open = puma2_dsm_open,
	.release = puma2_dsm_release,
	.unlocked_ioctl = puma2_dsm_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = puma2_dsm_mmap,
	.llseek = noop_llseek,
};
