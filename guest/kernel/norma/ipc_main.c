// SPDX-License-Identifier: GPL-2.0
/*
 * norma.ko: Mach-style IPC across Cenju-3 nodes (docs/boards/norma.md). This file is
 * the module and /dev/mach: one open file is one task (retrolink/uapi/mach.h); its
 * ioctls are the Mach calls, each answering with Mach's return code inside its
 * structure. An open file holds the module (the misc device's owner), so the module
 * cannot be unloaded while a task or one of its OOL mappings exists.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ipc.h"

DEFINE_MUTEX(ipc_lock);

static bool stamps;
module_param(stamps, bool, 0644);
MODULE_PARM_DESC(stamps, "take the breakdown stamps of MACH_IOC_TIMES (default: no); each "
		 "is a read of the interface's clock");

bool norma_step_marks;
module_param_named(step_marks, norma_step_marks, bool, 0644);
MODULE_PARM_DESC(step_marks, "mark each breakdown step for the instruction profile "
		 "(default: no)");

u64 ipc_now(void)
{
	return READ_ONCE(stamps) ? norma_de_now() : 0;
}

void ipc_unlock(void)
{
	mutex_unlock(&ipc_lock);
	ipc_run_deferred();
}

static int mach_open(struct inode *inode, struct file *file)
{
	struct ipc_task *task;

	/* OOL data arrives as shared writable mappings of this file */
	if ((file->f_flags & O_ACCMODE) != O_RDWR)
		return -EACCES;
	task = ipc_task_create();
	if (!task)
		return -ENOMEM;
	file->private_data = task;
	return 0;
}

static int mach_release(struct inode *inode, struct file *file)
{
	ipc_task_destroy(file->private_data);
	return 0;
}

static void port_ioctl(struct ipc_task *task, unsigned int cmd, struct mach_port_args *a)
{
	if (a->rsvd) {
		a->ret = KERN_INVALID_ARGUMENT;
		return;
	}
	mutex_lock(&ipc_lock);
	switch (cmd) {
	case MACH_IOC_PORT_ALLOCATE:
		a->ret = ipc_port_allocate(task, a->right, &a->name);
		break;
	case MACH_IOC_PORT_DEALLOCATE:
		a->ret = ipc_right_deallocate(task, a->name);
		break;
	case MACH_IOC_PORT_MOD_REFS:
		a->ret = ipc_right_mod_refs(task, a->name, a->right, a->delta);
		break;
	case MACH_IOC_PORT_INSERT_RIGHT:
		a->ret = ipc_right_insert(task, a->name, a->poly, a->poly_type);
		break;
	case MACH_IOC_PORT_GET_REFS:
		a->ret = ipc_right_get_refs(task, a->name, a->right, &a->value);
		break;
	case MACH_IOC_PORT_TYPE:
		a->ret = ipc_right_type(task, a->name, &a->value);
		break;
	case MACH_IOC_PORT_SET_QLIMIT: {
		struct ipc_entry *e = ipc_entry_lookup(task, a->name);

		if (!e)
			a->ret = KERN_INVALID_NAME;
		else if (!(e->type & MACH_PORT_TYPE_RECEIVE))
			a->ret = KERN_INVALID_RIGHT;
		else if (a->value > MACH_PORT_QLIMIT_MAX)
			a->ret = KERN_INVALID_VALUE;
		else {
			e->port->qlimit = a->value;
			wake_up_all(&e->port->send_wait);   /* a raised limit lets senders in */
			a->ret = KERN_SUCCESS;
		}
		break;
	}
	}
	ipc_unlock();
}

static void port_status(struct ipc_task *task, struct mach_port_status *st)
{
	struct ipc_entry *e;

	ipc_inbox_drain();                  /* what has arrived counts */
	mutex_lock(&ipc_lock);
	e = ipc_entry_lookup(task, st->name);
	if (!e) {
		st->ret = KERN_INVALID_NAME;
	} else if (!(e->type & MACH_PORT_TYPE_RECEIVE)) {
		st->ret = KERN_INVALID_RIGHT;
	} else {
		st->seqno = e->port->seqno;
		st->qlimit = e->port->qlimit;
		st->msgcount = e->port->msgcount;
		st->srights = e->port->srights;
		st->sorights = e->port->sorights;
		st->ret = KERN_SUCCESS;
	}
	ipc_unlock();
}

/* copy the argument in, run fn, copy it back */
#define CALL(type, ...) ({                                              \
	type __a;                                                       \
	long __r = 0;                                                   \
	if (copy_from_user(&__a, argp, sizeof(__a))) {                  \
		__r = -EFAULT;                                          \
	} else {                                                        \
		__VA_ARGS__;                                            \
		if (copy_to_user(argp, &__a, sizeof(__a)))              \
			__r = -EFAULT;                                  \
	}                                                               \
	__r; })

static long mach_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct ipc_task *task = file->private_data;
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case MACH_IOC_MSG:
		return CALL(struct mach_msg_args, ipc_mach_msg(file, task, &__a));
	case MACH_IOC_PORT_ALLOCATE:
	case MACH_IOC_PORT_DEALLOCATE:
	case MACH_IOC_PORT_MOD_REFS:
	case MACH_IOC_PORT_INSERT_RIGHT:
	case MACH_IOC_PORT_GET_REFS:
	case MACH_IOC_PORT_TYPE:
	case MACH_IOC_PORT_SET_QLIMIT:
		return CALL(struct mach_port_args, port_ioctl(task, cmd, &__a));
	case MACH_IOC_PORT_STATUS:
		return CALL(struct mach_port_status, port_status(task, &__a));
	case MACH_IOC_NETNAME_CHECK_IN:
	case MACH_IOC_NETNAME_LOOK_UP:
	case MACH_IOC_NETNAME_CHECK_OUT:
		return CALL(struct mach_netname_args, ipc_name_ioctl(task, cmd, &__a));
	case MACH_IOC_INFO: {
		struct mach_info info = {
			.node = ipc_node(),
			.nodes = norma_de_nodes(),
			.names_max = MACH_PORT_NAMES_MAX,
			.msg_size_max = MACH_MSG_SIZE_MAX,
			.desc_max = MACH_MSG_DESC_MAX,
			.ool_max = MACH_MSG_OOL_MAX,
			.ool_page = MACH_MSG_OOL_PAGE,
		};

		return copy_to_user(argp, &info, sizeof(info)) ? -EFAULT : 0;
	}
	case MACH_IOC_TIMES: {
		struct mach_times t;

		mutex_lock(&ipc_lock);
		t = ipc_times;
		ipc_unlock();
		return copy_to_user(argp, &t, sizeof(t)) ? -EFAULT : 0;
	}
	default:
		return -ENOTTY;
	}
}

static const struct file_operations mach_fops = {
	.owner = THIS_MODULE,
	.open = mach_open,
	.release = mach_release,
	.unlocked_ioctl = mach_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = ipc_mmap,
	.llseek = noop_llseek,
};

static struct miscdevice mach_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "mach",
	.fops = &mach_fops,
	.mode = 0666,
};

static int __init norma_init(void)
{
	int ret;

	BUILD_BUG_ON(sizeof(mach_msg_header_t) != 24);
	BUILD_BUG_ON(sizeof(mach_msg_descriptor_t) != 16);
	BUILD_BUG_ON(sizeof(mach_msg_port_descriptor_t) != 16);
	BUILD_BUG_ON(sizeof(mach_msg_ool_descriptor_t) != 16);
	BUILD_BUG_ON(offsetof(mach_msg_ool_descriptor_t, type) != 11);
	BUILD_BUG_ON(__alignof__(mach_msg_descriptor_t) != 4);
	BUILD_BUG_ON(offsetof(mach_msg_port_descriptor_t, type) != 11);
	BUILD_BUG_ON(MACH_MSG_OOL_PAGE != NORMA_PAGE_SIZE);
	BUILD_BUG_ON(NETNAME_NAME_MAX != NORMA_NAME_MAX);
	BUILD_BUG_ON(NORMA_PAGE_SIZE % PAGE_SIZE);

	ret = norma_de_init();
	if (ret)
		return ret;
	ret = misc_register(&mach_misc);
	if (ret) {
		norma_de_exit();
		return ret;
	}
	return 0;
}

static void __exit norma_exit(void)
{
	misc_deregister(&mach_misc);        /* no task is left: the module was not in use */
	norma_de_exit();                    /* no more upcalls */
	ipc_inbox_exit();
	mutex_lock(&ipc_lock);
	ipc_remote_exit();
	ipc_unlock();
	ipc_names_exit();
	ipc_ports_exit();
}

module_init(norma_init);
module_exit(norma_exit);
MODULE_DESCRIPTION("Mach-style IPC over NORMA IPC/DE on the Cenju-3 interface (retrolink model)");
MODULE_LICENSE("GPL");
