// SPDX-License-Identifier: GPL-2.0
/*
 * VIA kernel agent: /dev/viaN, the NIC handle of VIPL (retrolink/uapi/via.h).
 *
 * Each open file owns what it creates (tags, regions, CQs, VIs, pending connections):
 * the agent's tables name the owner, and a number another file owns is ENOENT. The
 * last close (the process exits or is killed) takes it all down in the order the NIC
 * needs: pending connections refused, VIs closed (the peer told; the NIC stops using
 * their descriptors), CQs cleared, regions cleared (then unpinned), tags freed.
 *
 * Remove: via_file_revoke_all zaps every file's mappings once no call is in the agent
 * (SRCU); later calls fail with ENODEV, a touch of a mapping is SIGBUS. The objects
 * stay until the last close, which then does no register access.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/module.h>

#include "via.h"

static int via_open(struct inode *inode, struct file *file)
{
	/* misc_open holds misc_mtx: remove's misc_deregister waits for this */
	struct via_dev *via = container_of(file->private_data, struct via_dev, misc);
	struct via_file *vf;

	vf = kzalloc(sizeof(*vf), GFP_KERNEL);
	if (!vf)
		return -ENOMEM;
	vf->via = via;
	vf->file = file;
	mutex_lock(&via->lock);
	if (via->dead) {
		mutex_unlock(&via->lock);
		kfree(vf);
		return -ENODEV;
	}
	list_add_tail(&vf->node, &via->files);
	mutex_unlock(&via->lock);
	via_get(via);
	file->private_data = vf;
	return 0;
}

/* the last close: no call is running and no mapping is left */
static int via_release(struct inode *inode, struct file *file)
{
	struct via_file *vf = file->private_data;
	struct via_dev *via = vf->via;

	via_cm_release(via, vf);
	mutex_lock(&via->lock);
	via_vi_release_all(via, vf);
	via_cq_release_all(via, vf);
	via_mr_release_all(via, vf);
	via_tag_release_all(via, vf);
	list_del(&vf->node);
	mutex_unlock(&via->lock);
	kfree(vf);
	via_put(via);
	return 0;
}

void via_file_revoke_all(struct via_dev *via)
{
	struct via_file *vf;

	mutex_lock(&via->lock);
	list_for_each_entry(vf, &via->files, node) {
		vf->revoked = true;
		unmap_mapping_range(vf->file->f_mapping, 0, 0, 1);
	}
	mutex_unlock(&via->lock);
}

static int via_query(struct via_dev *via, void __user *argp)
{
	struct via_nic_info info = {
		.node = via->node, .nodes = via->nodes,
		.max_vis = VIA_MAX_VIS - 1, .max_cqs = VIA_MAX_CQS,
		.max_regions = VIA_MAX_REGIONS, .max_segs = VIA_MAX_SEGS,
		.max_msg = VIA_MAX_MSG, .max_register = VIA_MAX_REGISTER,
		.wq_depth = VIA_WQ_DEPTH, .cq_max_entries = VIA_CQ_MAX_ENTRIES,
	};

	memcpy(info.mac, via->mac, sizeof(info.mac));
	return copy_to_user(argp, &info, sizeof(info)) ? -EFAULT : 0;
}

/* The ioctls that take via->lock for their whole length (none sleeps but on memory). */
static long via_ioctl_locked(struct via_file *vf, unsigned int cmd, void __user *argp)
{
	struct via_dev *via = vf->via;
	union {
		struct via_ptag tag;
		struct via_register reg;
		struct via_cq_create cq;
		struct via_vi_create vi;
		u32 id;
	} a;
	long ret;

	if (copy_from_user(&a, argp, _IOC_SIZE(cmd)))
		return -EFAULT;
	mutex_lock(&via->lock);
	switch (cmd) {
	case VIA_IOC_CREATE_PTAG:
		ret = via_tag_create(via, vf, &a.tag.ptag);
		break;
	case VIA_IOC_DESTROY_PTAG:
		ret = via_tag_destroy(via, vf, a.tag.ptag);
		break;
	case VIA_IOC_REGISTER:
		ret = via_mr_register_user(via, vf, a.reg.va, a.reg.len, a.reg.ptag,
					   &a.reg.handle);
		break;
	case VIA_IOC_DEREGISTER:
		ret = via_mr_deregister(via, vf, a.id);
		break;
	case VIA_IOC_CREATE_CQ:
		ret = via_cq_create(via, vf, &a.cq);
		break;
	case VIA_IOC_DESTROY_CQ:
		ret = via_cq_destroy(via, vf, a.id);
		break;
	case VIA_IOC_CREATE_VI:
		ret = via_vi_create(via, vf, U32_MAX, a.vi.ptag, a.vi.send_cq, a.vi.recv_cq,
				    false);
		if (ret >= 0) {
			a.vi.vi = ret;
			ret = 0;
		}
		break;
	case VIA_IOC_DESTROY_VI:
		ret = via_vi_destroy(via, vf, a.id);
		break;
	default:
		ret = -ENOTTY;
	}
	mutex_unlock(&via->lock);
	if (ret || !(_IOC_DIR(cmd) & _IOC_READ))
		return ret;
	if (!copy_to_user(argp, &a, _IOC_SIZE(cmd)))
		return 0;
	/* nobody was told of what was made: undo it */
	mutex_lock(&via->lock);
	if (cmd == VIA_IOC_CREATE_PTAG)
		via_tag_destroy(via, vf, a.tag.ptag);
	else if (cmd == VIA_IOC_REGISTER)
		via_mr_deregister(via, vf, a.reg.handle);
	else if (cmd == VIA_IOC_CREATE_CQ)
		via_cq_destroy(via, vf, a.cq.cq);
	else if (cmd == VIA_IOC_CREATE_VI)
		via_vi_destroy(via, vf, a.vi.vi);
	mutex_unlock(&via->lock);
	return -EFAULT;
}

/* The connection calls and waits: they sleep without via->lock. */
static long via_ioctl_conn(struct via_file *vf, unsigned int cmd, void __user *argp)
{
	struct via_dev *via = vf->via;
	struct via_connect c;
	long ret;

	if (copy_from_user(&c, argp, sizeof(c)))
		return -EFAULT;
	switch (cmd) {
	case VIA_IOC_CONNECT_WAIT:
		ret = via_cm_wait(via, vf, &c);
		break;
	case VIA_IOC_CONNECT_ACCEPT:
		ret = via_cm_accept(via, vf, &c);
		break;
	case VIA_IOC_CONNECT_REJECT:
		ret = via_cm_reject(via, vf, &c);
		break;
	default:
		ret = via_cm_request(via, vf, &c);
		break;
	}
	if (!ret && (_IOC_DIR(cmd) & _IOC_READ) && copy_to_user(argp, &c, sizeof(c)))
		ret = -EFAULT;
	return ret;
}

static long via_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct via_file *vf = file->private_data;
	struct via_dev *via = vf->via;
	void __user *argp = (void __user *)arg;
	struct via_wait w;
	u32 id;
	long ret;
	int idx;

	idx = srcu_read_lock(&via->srcu);
	if (READ_ONCE(via->dead)) {
		ret = -ENODEV;
		goto out;
	}
	switch (cmd) {
	case VIA_IOC_QUERY:
		ret = via_query(via, argp);
		break;
	case VIA_IOC_CREATE_PTAG:
	case VIA_IOC_DESTROY_PTAG:
	case VIA_IOC_REGISTER:
	case VIA_IOC_DEREGISTER:
	case VIA_IOC_CREATE_CQ:
	case VIA_IOC_DESTROY_CQ:
	case VIA_IOC_CREATE_VI:
	case VIA_IOC_DESTROY_VI:
		ret = via_ioctl_locked(vf, cmd, argp);
		break;
	case VIA_IOC_CONNECT_WAIT:
	case VIA_IOC_CONNECT_ACCEPT:
	case VIA_IOC_CONNECT_REJECT:
	case VIA_IOC_CONNECT_REQUEST:
		ret = via_ioctl_conn(vf, cmd, argp);
		break;
	case VIA_IOC_DISCONNECT:
		ret = get_user(id, (u32 __user *)argp) ? -EFAULT : via_cm_disconnect(via, vf, id);
		break;
	case VIA_IOC_WAIT:
		ret = copy_from_user(&w, argp, sizeof(w)) ? -EFAULT : via_wait(via, vf, &w);
		break;
	default:
		ret = -ENOTTY;
	}
out:
	srcu_read_unlock(&via->srcu, idx);
	return ret;
}

static int via_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct via_file *vf = file->private_data;
	struct via_dev *via = vf->via;
	int idx, ret;

	idx = srcu_read_lock(&via->srcu);
	ret = READ_ONCE(via->dead) ? -ENODEV : via_mmap(vf, vma);
	srcu_read_unlock(&via->srcu, idx);
	return ret;
}

const struct file_operations via_fops = {
	.owner = THIS_MODULE,
	.open = via_open,
	.release = via_release,
	.unlocked_ioctl = via_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = via_file_mmap,
	.llseek = noop_llseek,
};
