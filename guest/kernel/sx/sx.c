// SPDX-License-Identifier: GPL-2.0
/*
 * Driver for the SX message processor (SXM) board of the SURE SYSTEM2000, as
 * modelled by retrolink (qemu/sx/sx.c; registers: retrolink/regs/sx-regs.h).
 *
 * One character device per board, /dev/sxN: ioctls to send (with delivery
 * confirmation, blocking or asynchronous) and receive, poll for both
 * directions, and a read-only mmap of the message window. docs/boards/libsx.md
 * documents the interface; retrolink/uapi/sx.h defines it.
 *
 * Lifetime: the driver's state (struct sx_dev) is reference counted: the
 * board holds one reference from probe to remove, and each open file one.
 * Removal (rmmod, or an unbind with files open) marks it dead, wakes every
 * waiter, waits (SRCU) for the calls still in the driver to leave, then stops
 * the board and revokes the window mappings; from then on every call on a
 * file still open fails with ENODEV, and the last close frees it. SRCU rather
 * than a rwsem: its readers never wait, so a call that faults on user memory
 * (mmap_lock) cannot deadlock against a removal waiting for it.
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/interrupt.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/idr.h>
#include <linux/io.h>
#include <linux/iopoll.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/kref.h>
#include <linux/srcu.h>
#include <linux/list.h>

#include "retrolink/regs/sx-regs.h"
#include "retrolink/uapi/sx.h"

#define DRV_NAME "sx"
/* the board starts within its start-us (at most 60 s, machine.py); poll every 1 ms */
#define SX_START_POLL_US	1000
#define SX_START_TIMEOUT_US	(61 * USEC_PER_SEC)

struct sx_txslot {
	bool busy;		/* a send in flight, or a completion not yet reaped */
	bool done;
	bool orphan;		/* nobody will reap it: free it on completion */
	int status;		/* 0 or -errno */
	u64 ticket;
	struct file *owner;
};

struct sx_dev {
	struct kref ref;	/* the board (probe to remove), and each open file */
	/*
	 * Read side around every call that reaches the board (and the window's
	 * page faults); remove waits for them once dead is set: after that no
	 * call touches the registers or maps the window.
	 */
	struct srcu_struct srcu;
	struct mutex files_lock;
	struct list_head files;	/* open files (struct sx_file), for remove */
	struct pci_dev *pdev;
	void __iomem *regs;
	void __iomem *win;
	resource_size_t win_start;
	struct miscdevice misc;
	char name[16];
	int id;

	struct mutex rx_mutex;	/* receivers: a message is peeked, copied out, then dequeued */
	spinlock_t lock;	/* everything below; taken in the IRQ handler */
	wait_queue_head_t tx_wq, rx_wq;
	struct sx_txslot tx[SX_TX_SLOTS];
	u64 next_ticket;
	u8 rxq[SX_RX_SLOTS];
	u64 rx_time[SX_RX_SLOTS];	/* when each queued message was taken */
	unsigned int rx_head, rx_count;
	u32 node, nodes;
	bool dead;		/* removed: every call fails with ENODEV */
	u64 sent, received, send_errors, irqs;
};

/* An open file of /dev/sxN. */
struct sx_file {
	struct sx_dev *sx;
	struct file *file;
	struct list_head node;	/* in sx->files */
};

static DEFINE_IDA(sx_ida);

static void sx_free(struct kref *ref)
{
	struct sx_dev *sx = container_of(ref, struct sx_dev, ref);

	pr_debug("%s: state freed\n", sx->name);
	cleanup_srcu_struct(&sx->srcu);
	mutex_destroy(&sx->rx_mutex);
	mutex_destroy(&sx->files_lock);
	kfree(sx);
}

static int sx_status_errno(u32 status)
{
	switch (status) {
	case SX_ERR_NONE:
		return 0;
	case SX_ERR_LENGTH:
		return -EMSGSIZE;
	case SX_ERR_DEST:
		return -EINVAL;
	case SX_ERR_LINK_DOWN:
		return -EHOSTUNREACH;
	default:
		return -EIO;
	}
}

/* ---- interrupt -------------------------------------------------------- */

static irqreturn_t sx_irq(int irq, void *data)
{
	struct sx_dev *sx = data;
	u32 cause = ioread32(sx->regs + SX_REG_IRQ_STATUS);
	u32 v;

	if (cause)
		iowrite32(cause, sx->regs + SX_REG_IRQ_STATUS);
	spin_lock(&sx->lock);
	sx->irqs++;
	/*
	 * Drain both FIFOs whatever the cause bits say: the board can queue an
	 * entry between our read of IRQ_STATUS and the write that clears it.
	 */
	while ((v = ioread32(sx->regs + SX_REG_TX_COMPLETE)) & SX_TXC_VALID) {
		struct sx_txslot *s;

		if (SX_TXC_SLOT(v) >= SX_TX_SLOTS)
			continue;
		s = &sx->tx[SX_TXC_SLOT(v)];
		if (!s->busy || s->done)
			continue;
		s->done = true;
		s->status = sx_status_errno(SX_TXC_STATUS(v));
		if (s->status)
			sx->send_errors++;
		else
			sx->sent++;
		if (s->orphan)
			s->busy = false;
	}
	while ((v = ioread32(sx->regs + SX_REG_RX_POP)) & SX_RXP_VALID) {
		if (SX_RXP_SLOT(v) >= SX_RX_SLOTS || sx->rx_count >= SX_RX_SLOTS)
			continue;
		sx->rx_time[(sx->rx_head + sx->rx_count) % SX_RX_SLOTS] = ktime_get_ns();
		sx->rxq[(sx->rx_head + sx->rx_count++) % SX_RX_SLOTS] = SX_RXP_SLOT(v);
		sx->received++;
	}
	spin_unlock(&sx->lock);
	wake_up_all(&sx->tx_wq);
	wake_up_all(&sx->rx_wq);
	return cause ? IRQ_HANDLED : IRQ_NONE;
}

/* ---- send ------------------------------------------------------------- */

static int sx_free_slot(struct sx_dev *sx)
{
	int i;

	for (i = 0; i < SX_TX_SLOTS; i++)
		if (!sx->tx[i].busy)
			return i;
	return -1;
}

static bool sx_slot_available(struct sx_dev *sx)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&sx->lock, flags);
	ok = sx->dead || sx_free_slot(sx) >= 0;
	spin_unlock_irqrestore(&sx->lock, flags);
	return ok;
}

static bool sx_slot_done(struct sx_dev *sx, int i, u64 ticket)
{
	unsigned long flags;
	bool done;

	spin_lock_irqsave(&sx->lock, flags);
	done = sx->dead || sx->tx[i].ticket != ticket || sx->tx[i].done;
	spin_unlock_irqrestore(&sx->lock, flags);
	return done;
}

/* Reap slot i (lock held): return its status and free it. */
static int sx_reap(struct sx_dev *sx, int i)
{
	int status = sx->tx[i].status;

	sx->tx[i].busy = false;
	sx->tx[i].owner = NULL;
	return status;
}

static long sx_send(struct sx_dev *sx, struct file *file, void __user *argp, bool async)
{
	struct sx_send_req req;
	void *buf;
	u64 ticket;
	int i, ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.flags)
		return -EINVAL;
	if (req.len > SX_MAX_MSG)
		return -EMSGSIZE;
	if (req.dst >= sx->nodes || req.dst == sx->node)
		return -EINVAL;
	if (req.dst < 32 && !(ioread32(sx->regs + SX_REG_PEERS_UP) & BIT(req.dst)))
		return -EHOSTUNREACH;
	buf = kmalloc(max_t(u32, req.len, 1), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (copy_from_user(buf, u64_to_user_ptr(req.buf), req.len)) {
		ret = -EFAULT;
		goto out;
	}

	for (;;) {
		spin_lock_irq(&sx->lock);
		if (sx->dead) {
			spin_unlock_irq(&sx->lock);
			ret = -ENODEV;
			goto out;
		}
		i = sx_free_slot(sx);
		if (i >= 0)
			break;
		spin_unlock_irq(&sx->lock);
		if (file->f_flags & O_NONBLOCK) {
			ret = -EAGAIN;
			goto out;
		}
		if (wait_event_interruptible(sx->tx_wq, sx_slot_available(sx))) {
			ret = -ERESTARTSYS;
			goto out;
		}
	}
	ticket = ++sx->next_ticket;
	sx->tx[i] = (struct sx_txslot){ .busy = true, .ticket = ticket, .owner = file };
	spin_unlock_irq(&sx->lock);

	/*
	 * The caller gets its ticket before the doorbell: a send it cannot be told
	 * about must not happen (it would be delivered under a ticket nobody holds,
	 * and its slot would stay busy). Nothing has reached the board yet, so
	 * giving the slot back undoes it.
	 */
	if (async && put_user(ticket, &((struct sx_send_req __user *)argp)->ticket)) {
		spin_lock_irq(&sx->lock);
		sx_reap(sx, i);
		spin_unlock_irq(&sx->lock);
		wake_up_all(&sx->tx_wq);
		ret = -EFAULT;
		goto out;
	}
	memcpy_toio(sx->win + SX_TX_BUF(i), buf, req.len);
	iowrite32(req.dst, sx->win + SX_TX_DESC(i) + SX_DESC_PEER);
	iowrite32(req.len, sx->win + SX_TX_DESC(i) + SX_DESC_LEN);
	iowrite32(req.tag, sx->win + SX_TX_DESC(i) + SX_DESC_TAG);
	iowrite32(i, sx->regs + SX_REG_TX_DOORBELL);

	if (async) {
		ret = 0;
		goto out;
	}
	if (wait_event_interruptible(sx->tx_wq, sx_slot_done(sx, i, ticket))) {
		spin_lock_irq(&sx->lock);
		if (sx->tx[i].ticket == ticket && sx->tx[i].done)
			sx_reap(sx, i);
		else if (sx->tx[i].ticket == ticket)
			sx->tx[i].orphan = true;	/* it may still be delivered */
		spin_unlock_irq(&sx->lock);
		ret = -EINTR;
		goto out;
	}
	spin_lock_irq(&sx->lock);
	ret = sx->dead ? -ENODEV : sx_reap(sx, i);
	spin_unlock_irq(&sx->lock);
	wake_up_all(&sx->tx_wq);
out:
	kfree(buf);
	return ret;
}

static int sx_find_ticket(struct sx_dev *sx, struct file *file, u64 ticket)
{
	int i;

	for (i = 0; i < SX_TX_SLOTS; i++)
		if (sx->tx[i].busy && sx->tx[i].ticket == ticket && sx->tx[i].owner == file)
			return i;
	return -1;
}

/*
 * The status is written to the caller before the send is reaped: a WAIT that
 * cannot tell the caller (EFAULT) leaves the ticket as it was, to ask again.
 */
static long sx_wait(struct sx_dev *sx, struct file *file, void __user *argp)
{
	struct sx_wait_req __user *ureq = argp;
	struct sx_wait_req req;
	int i, ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	spin_lock_irq(&sx->lock);
	i = sx_find_ticket(sx, file, req.ticket);
	spin_unlock_irq(&sx->lock);
	if (i < 0)
		return -ENOENT;
	if (req.flags & SX_WAIT_NONBLOCK) {
		if (!sx_slot_done(sx, i, req.ticket))
			return -EAGAIN;
	} else if (wait_event_interruptible(sx->tx_wq, sx_slot_done(sx, i, req.ticket))) {
		return -EINTR;
	}
	spin_lock_irq(&sx->lock);
	ret = sx->dead ? -ENODEV : sx->tx[i].ticket != req.ticket ? -ENOENT : sx->tx[i].status;
	spin_unlock_irq(&sx->lock);
	if (ret == -ENODEV || ret == -ENOENT)
		return ret;
	if (put_user(ret < 0 ? -ret : 0, &ureq->status))
		return -EFAULT;
	spin_lock_irq(&sx->lock);
	/* another thread of this file may have reaped it meanwhile: it got the status too */
	if (sx->tx[i].ticket == req.ticket && sx->tx[i].busy)
		sx_reap(sx, i);
	spin_unlock_irq(&sx->lock);
	wake_up_all(&sx->tx_wq);
	return 0;
}

/* ---- receive ---------------------------------------------------------- */

static bool sx_rx_ready(struct sx_dev *sx)
{
	unsigned long flags;
	bool ready;

	spin_lock_irqsave(&sx->lock, flags);
	ready = sx->dead || sx->rx_count;
	spin_unlock_irqrestore(&sx->lock, flags);
	return ready;
}

/*
 * A message leaves the queue only once it has been copied out, buffer and
 * request both: a RECV that fails (EFAULT, ENOMEM, a signal) consumes nothing,
 * and the next one gets the same message. rx_mutex makes peek, copy and
 * dequeue one step among receivers.
 */
static long sx_recv(struct sx_dev *sx, struct file *file, void __user *argp)
{
	struct sx_recv_req req;
	u32 j, len, copy;
	void *buf;
	int ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	for (;;) {
		if (mutex_lock_interruptible(&sx->rx_mutex))
			return -EINTR;
		spin_lock_irq(&sx->lock);
		if (sx->dead) {
			ret = -ENODEV;
			goto out_unlock;
		}
		if (sx->rx_count) {
			j = sx->rxq[sx->rx_head];
			req.rx_time_ns = sx->rx_time[sx->rx_head];
			spin_unlock_irq(&sx->lock);
			break;
		}
		spin_unlock_irq(&sx->lock);
		mutex_unlock(&sx->rx_mutex);
		if ((file->f_flags & O_NONBLOCK) || (req.flags & SX_RECV_NONBLOCK))
			return -EAGAIN;
		if (wait_event_interruptible(sx->rx_wq, sx_rx_ready(sx)))
			return -EINTR;
	}
	len = min_t(u32, ioread32(sx->win + SX_RX_DESC(j) + SX_DESC_LEN), SX_MAX_MSG);
	req.src = ioread32(sx->win + SX_RX_DESC(j) + SX_DESC_PEER);
	req.tag = ioread32(sx->win + SX_RX_DESC(j) + SX_DESC_TAG);
	copy = min(len, req.len);		/* a short buffer truncates, as recv(2) */
	buf = kmalloc(max_t(u32, copy, 1), GFP_KERNEL);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy_fromio(buf, sx->win + SX_RX_BUF(j), copy);
	ret = copy_to_user(u64_to_user_ptr(req.buf), buf, copy) ? -EFAULT : 0;
	kfree(buf);
	req.len = len;
	if (!ret && copy_to_user(argp, &req, sizeof(req)))
		ret = -EFAULT;
	if (ret)
		goto out;
	/* copied out: now it is consumed, and the slot goes back to the board */
	spin_lock_irq(&sx->lock);
	sx->rx_head = (sx->rx_head + 1) % SX_RX_SLOTS;
	sx->rx_count--;
	spin_unlock_irq(&sx->lock);
	iowrite32(j, sx->regs + SX_REG_RX_RELEASE);
	goto out;
out_unlock:
	spin_unlock_irq(&sx->lock);
out:
	mutex_unlock(&sx->rx_mutex);
	return ret;
}

/* ---- file operations --------------------------------------------------- */

static struct sx_dev *sx_from_file(struct file *file)
{
	return ((struct sx_file *)file->private_data)->sx;
}

static int sx_open(struct inode *inode, struct file *file)
{
	/* misc_open holds misc_mtx: remove's misc_deregister waits for this */
	struct sx_dev *sx = container_of(file->private_data, struct sx_dev, misc);
	struct sx_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	f->sx = sx;
	f->file = file;
	kref_get(&sx->ref);
	mutex_lock(&sx->files_lock);
	list_add(&f->node, &sx->files);
	mutex_unlock(&sx->files_lock);
	file->private_data = f;
	return 0;
}

static long sx_do_ioctl(struct sx_dev *sx, struct file *file, unsigned int cmd,
			void __user *argp)
{
	switch (cmd) {
	case SX_IOC_INFO: {
		struct sx_info info = {
			.node = sx->node, .nodes = sx->nodes,
			.peers_up = ioread32(sx->regs + SX_REG_PEERS_UP), .tx_slots = SX_TX_SLOTS,
		};
		return copy_to_user(argp, &info, sizeof(info)) ? -EFAULT : 0;
	}
	case SX_IOC_SEND:
		return sx_send(sx, file, argp, false);
	case SX_IOC_SEND_ASYNC:
		return sx_send(sx, file, argp, true);
	case SX_IOC_WAIT:
		return sx_wait(sx, file, argp);
	case SX_IOC_RECV:
		return sx_recv(sx, file, argp);
	default:
		return -ENOTTY;
	}
}

static long sx_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct sx_dev *sx = sx_from_file(file);
	long ret = -ENODEV;
	int idx = srcu_read_lock(&sx->srcu);

	if (!READ_ONCE(sx->dead))
		ret = sx_do_ioctl(sx, file, cmd, (void __user *)arg);
	srcu_read_unlock(&sx->srcu, idx);
	return ret;
}

static __poll_t sx_poll(struct file *file, poll_table *wait)
{
	struct sx_dev *sx = sx_from_file(file);
	__poll_t mask = 0;

	poll_wait(file, &sx->rx_wq, wait);
	poll_wait(file, &sx->tx_wq, wait);
	spin_lock_irq(&sx->lock);
	if (sx->dead)
		mask = EPOLLERR | EPOLLHUP;	/* nothing to read, nothing can be sent */
	else if (sx->rx_count)
		mask |= EPOLLIN | EPOLLRDNORM;
	if (!sx->dead && sx_free_slot(sx) >= 0)
		mask |= EPOLLOUT | EPOLLWRNORM;
	spin_unlock_irq(&sx->lock);
	return mask;
}

/*
 * The window is mapped a page at a time, as it is touched, and only while the
 * board is there: sx_remove unmaps what was mapped, and a page touched after
 * that is SIGBUS.
 */
static vm_fault_t sx_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct sx_dev *sx = sx_from_file(vma->vm_file);
	vm_fault_t ret = VM_FAULT_SIGBUS;
	int idx = srcu_read_lock(&sx->srcu);

	if (!READ_ONCE(sx->dead))
		ret = vmf_insert_pfn(vma, vmf->address,
				     (sx->win_start >> PAGE_SHIFT) + vmf->pgoff);
	srcu_read_unlock(&sx->srcu, idx);
	return ret;
}

static const struct vm_operations_struct sx_vm_ops = {
	.fault = sx_vm_fault,
};

/* The message window, read-only: descriptors and buffers as the board sees them. */
static int sx_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct sx_dev *sx = sx_from_file(file);
	unsigned long size = vma->vm_end - vma->vm_start;

	if (READ_ONCE(sx->dead))
		return -ENODEV;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	if (vma->vm_pgoff > SX_WINDOW_SIZE >> PAGE_SHIFT ||
	    size > SX_WINDOW_SIZE - (vma->vm_pgoff << PAGE_SHIFT))
		return -EINVAL;
	vma->vm_flags &= ~VM_MAYWRITE;
	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	vma->vm_ops = &sx_vm_ops;
	return 0;
}

static int sx_release(struct inode *inode, struct file *file)
{
	struct sx_file *f = file->private_data;
	struct sx_dev *sx = f->sx;
	int i;

	spin_lock_irq(&sx->lock);
	for (i = 0; i < SX_TX_SLOTS; i++) {
		if (sx->tx[i].busy && sx->tx[i].owner == file) {
			if (sx->tx[i].done)
				sx_reap(sx, i);
			else
				sx->tx[i].orphan = true;
		}
	}
	spin_unlock_irq(&sx->lock);
	wake_up_all(&sx->tx_wq);
	mutex_lock(&sx->files_lock);
	list_del(&f->node);
	mutex_unlock(&sx->files_lock);
	kfree(f);
	kref_put(&sx->ref, sx_free);
	return 0;
}

static const struct file_operations sx_fops = {
	.owner = THIS_MODULE,
	.open = sx_open,
	.unlocked_ioctl = sx_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = sx_poll,
	.mmap = sx_mmap,
	.release = sx_release,
	.llseek = noop_llseek,
};

/* ---- sysfs counters: /sys/class/misc/sxN/ ------------------------------ */

static struct sx_dev *sx_from_dev(struct device *dev)
{
	struct miscdevice *misc = dev_get_drvdata(dev);

	return container_of(misc, struct sx_dev, misc);
}

#define SX_BOARD_ATTR(_name, _reg)						\
static ssize_t _name##_show(struct device *dev, struct device_attribute *a,	\
			    char *buf)						\
{										\
	return sysfs_emit(buf, "%u\n", ioread32(sx_from_dev(dev)->regs + (_reg)));	\
}										\
static DEVICE_ATTR_RO(_name)

#define SX_DRV_ATTR(_name)							\
static ssize_t _name##_show(struct device *dev, struct device_attribute *a,	\
			    char *buf)						\
{										\
	return sysfs_emit(buf, "%llu\n", (unsigned long long)sx_from_dev(dev)->_name); \
}										\
static DEVICE_ATTR_RO(_name)

SX_BOARD_ATTR(node, SX_REG_NODE_ID);
SX_BOARD_ATTR(nodes, SX_REG_NUM_NODES);
SX_BOARD_ATTR(peers_up, SX_REG_PEERS_UP);
SX_BOARD_ATTR(board_tx_msgs, SX_REG_TX_MSGS);
SX_BOARD_ATTR(board_rx_msgs, SX_REG_RX_MSGS);
SX_BOARD_ATTR(board_tx_errors, SX_REG_TX_ERRORS);
SX_BOARD_ATTR(board_bad_doorbells, SX_REG_BAD_DOORBELLS);
SX_DRV_ATTR(sent);
SX_DRV_ATTR(received);
SX_DRV_ATTR(send_errors);
SX_DRV_ATTR(irqs);

/* Messages the board has handed over that no reader has taken yet. */
static ssize_t rx_queued_show(struct device *dev, struct device_attribute *a, char *buf)
{
	struct sx_dev *sx = sx_from_dev(dev);
	unsigned int n;

	spin_lock_irq(&sx->lock);
	n = sx->rx_count;
	spin_unlock_irq(&sx->lock);
	return sysfs_emit(buf, "%u\n", n);
}
static DEVICE_ATTR_RO(rx_queued);

static struct attribute *sx_attrs[] = {
	&dev_attr_node.attr, &dev_attr_nodes.attr, &dev_attr_peers_up.attr,
	&dev_attr_board_tx_msgs.attr, &dev_attr_board_rx_msgs.attr,
	&dev_attr_board_tx_errors.attr, &dev_attr_board_bad_doorbells.attr,
	&dev_attr_sent.attr, &dev_attr_received.attr, &dev_attr_send_errors.attr,
	&dev_attr_irqs.attr, &dev_attr_rx_queued.attr, NULL,
};
ATTRIBUTE_GROUPS(sx);

/* ---- PCI ---------------------------------------------------------------- */

static int sx_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct sx_dev *sx;
	u32 status;
	int ret;

	/* not devm: files may outlive the binding (sx_free frees it) */
	sx = kzalloc(sizeof(*sx), GFP_KERNEL);
	if (!sx)
		return -ENOMEM;
	kref_init(&sx->ref);
	if (init_srcu_struct(&sx->srcu)) {
		kfree(sx);
		return -ENOMEM;
	}
	mutex_init(&sx->files_lock);
	INIT_LIST_HEAD(&sx->files);
	sx->pdev = pdev;
	spin_lock_init(&sx->lock);
	mutex_init(&sx->rx_mutex);
	init_waitqueue_head(&sx->tx_wq);
	init_waitqueue_head(&sx->rx_wq);

	ret = pcim_enable_device(pdev);
	if (ret)
		goto err_free;
	ret = pcim_iomap_regions(pdev, BIT(0) | BIT(2), DRV_NAME);
	if (ret)
		goto err_free;
	sx->regs = pcim_iomap_table(pdev)[0];
	sx->win = pcim_iomap_table(pdev)[2];
	sx->win_start = pci_resource_start(pdev, 2);
	if (pci_resource_len(pdev, 2) < SX_WINDOW_SIZE ||
	    ioread32(sx->regs + SX_REG_ID) != SX_ID_VALUE) {
		dev_err(&pdev->dev, "not an SX board (ID %08x)\n",
			ioread32(sx->regs + SX_REG_ID));
		ret = -ENODEV;
		goto err_free;
	}
	pci_set_master(pdev);

	iowrite32(SX_CTRL_RESET, sx->regs + SX_REG_CTRL);
	sx->node = ioread32(sx->regs + SX_REG_NODE_ID);
	sx->nodes = ioread32(sx->regs + SX_REG_NUM_NODES);

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_LEGACY);
	if (ret < 0)
		goto err_free;
	/* not devm either: the handler must go before its vector (err_irq, sx_remove) */
	ret = request_irq(pci_irq_vector(pdev, 0), sx_irq, IRQF_SHARED, DRV_NAME, sx);
	if (ret)
		goto err_vectors;

	sx->id = ida_alloc(&sx_ida, GFP_KERNEL);
	if (sx->id < 0) {
		ret = sx->id;
		goto err_irq;
	}
	snprintf(sx->name, sizeof(sx->name), "sx%d", sx->id);
	sx->misc = (struct miscdevice){
		.minor = MISC_DYNAMIC_MINOR, .name = sx->name, .fops = &sx_fops,
		.parent = &pdev->dev, .groups = sx_groups, .mode = 0666,
	};
	pci_set_drvdata(pdev, sx);
	/*
	 * No SX_IRQ_LINK: when another node leaves is up to the host's timing,
	 * so an interrupt for it would make this node's timing differ from run
	 * to run. Sends read SX_REG_PEERS_UP instead, and the board fails a
	 * send waiting on a departed peer with SX_ERR_LINK_DOWN (a TXDONE).
	 */
	iowrite32(SX_IRQ_RX | SX_IRQ_TXDONE | SX_IRQ_ERROR, sx->regs + SX_REG_IRQ_MASK);
	iowrite32(SX_CTRL_ENABLE, sx->regs + SX_REG_CTRL);
	/* the SXM starts its firmware and joins the ring (the board's start-us) */
	ret = readl_poll_timeout(sx->regs + SX_REG_STATUS, status, status & SX_STATUS_READY,
				 SX_START_POLL_US, SX_START_TIMEOUT_US);
	if (ret) {
		dev_err(&pdev->dev, "the SXM did not start within %ld s\n",
			SX_START_TIMEOUT_US / USEC_PER_SEC);
		goto err_ida;
	}
	ret = misc_register(&sx->misc);
	if (ret)
		goto err_ida;
	dev_info(&pdev->dev, "/dev/%s: node %u of %u\n", sx->name, sx->node, sx->nodes);
	return 0;

err_ida:
	ida_free(&sx_ida, sx->id);
err_irq:
	iowrite32(SX_CTRL_RESET, sx->regs + SX_REG_CTRL);	/* masks the board's interrupts */
	free_irq(pci_irq_vector(pdev, 0), sx);
err_vectors:
	pci_free_irq_vectors(pdev);
err_free:
	kref_put(&sx->ref, sx_free);
	return ret;
}

static void sx_remove(struct pci_dev *pdev)
{
	struct sx_dev *sx = pci_get_drvdata(pdev);
	struct sx_file *f;

	misc_deregister(&sx->misc);	/* no more opens; the sysfs counters are gone */
	spin_lock_irq(&sx->lock);
	sx->dead = true;
	spin_unlock_irq(&sx->lock);
	/* the waiters see dead and leave the driver with ENODEV */
	wake_up_all(&sx->tx_wq);
	wake_up_all(&sx->rx_wq);
	synchronize_srcu(&sx->srcu);
	/* stop the board: it drops whatever is in flight, and interrupts no more */
	iowrite32(SX_CTRL_RESET, sx->regs + SX_REG_CTRL);
	free_irq(pci_irq_vector(pdev, 0), sx);
	pci_free_irq_vectors(pdev);
	sx->regs = NULL;		/* devres unmaps the BARs when we return */
	sx->win = NULL;
	/* the window mapped by files still open: an access is now SIGBUS (sx_vm_fault) */
	mutex_lock(&sx->files_lock);
	list_for_each_entry(f, &sx->files, node)
		unmap_mapping_range(f->file->f_mapping, 0, 0, 1);
	mutex_unlock(&sx->files_lock);
	ida_free(&sx_ida, sx->id);
	kref_put(&sx->ref, sx_free);	/* the board's reference; open files keep theirs */
}

static const struct pci_device_id sx_ids[] = {
	{ PCI_DEVICE(SX_PCI_VENDOR_ID, SX_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, sx_ids);

static struct pci_driver sx_driver = {
	.name = DRV_NAME,
	.id_table = sx_ids,
	.probe = sx_probe,
	.remove = sx_remove,
};
module_pci_driver(sx_driver);

MODULE_DESCRIPTION("SX message processor board (retrolink model of the SURE SYSTEM2000 SXM)");
MODULE_LICENSE("GPL");
