// SPDX-License-Identifier: GPL-2.0
/*
 * Cenju-3 interface: /dev/cenju3, the root-only test interface (retrolink/uapi/cenju3.h).
 * The opener is a client of the in-kernel API (cenju3_nic.h) like norma.ko, so the tests
 * that drive it through here drive the API norma.ko uses: messages are kept without a
 * copy (c3_nic_rx_keep) and queued for C3_IOC_RECV; past the queue limit rx() answers
 * -EAGAIN and the interface is held back until RECV makes room (c3_nic_rx_resume).
 *
 * Lifetime: the file attaches at open and detaches at release. If the interface goes
 * away first (down), every call fails with ENODEV; sends queued by the file complete
 * (-ENODEV) on their own and free themselves, and RDMA waits for its request, so no
 * request can outlive the memory it reads.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/uaccess.h>
#include <linux/completion.h>
#include <linux/capability.h>
#include <linux/module.h>

#include "c3.h"
#include "retrolink/uapi/cenju3.h"

static_assert(C3_UAPI_MSG_MAX == C3_MSG_MAX && C3_UAPI_RDMA_MAX == C3_REQ_MAX);

#define C3_QUEUE_DEFAULT	256
#define C3_BUF_ORDER		get_order(C3_BUF_SIZE)

struct c3_urx {
	struct list_head link;
	u16 src;
	u32 len;
	u64 t_ns;
	void *data;		/* the slot's buffer (kept), or copy[] */
	bool kept;
	u8 copy[];
};

struct c3_unote {
	struct list_head link;
	struct c3_rdma_note note;
};

struct c3_user {
	spinlock_t lock;
	wait_queue_head_t wq;
	struct list_head rxq, notes;
	u32 rxq_len, notes_len, queue_max;
	bool held;		/* rx() said -EAGAIN: resume when RECV makes room */
	bool down;		/* the interface went away */
	struct page *buf;
	phys_addr_t buf_phys;
	u64 notes_lost;
};

/* a request of the file: an ioctl waits for it, or (a send) its done() frees it */
struct c3_uop {
	struct c3_op op;
	struct completion done;
	bool waited;
	int status;
};

struct c3_usend {
	struct c3_uop uo;
	u8 data[C3_MSG_MAX];
};

/* ---- callbacks (the driver's interrupt thread) -------------------------------------- */

static int c3_user_rx(void *ctx, struct c3_rx *rx)
{
	struct c3_user *u = ctx;
	struct c3_urx *m;
	bool full;

	spin_lock_irq(&u->lock);
	full = u->rxq_len >= u->queue_max;
	if (full)
		u->held = true;
	spin_unlock_irq(&u->lock);
	if (full)
		return -EAGAIN;
	m = kmalloc(sizeof(*m), GFP_KERNEL);
	if (m)
		m->data = c3_nic_rx_keep(rx);
	if (m && !m->data) {
		kfree(m);
		m = kmalloc(struct_size(m, copy, rx->len), GFP_KERNEL);
		if (m) {
			memcpy(m->copy, rx->data, rx->len);
			m->data = m->copy;
		}
	}
	if (!m) {
		/* no memory even for a copy: leave it in its slot and try again later */
		spin_lock_irq(&u->lock);
		u->held = true;
		spin_unlock_irq(&u->lock);
		return -EAGAIN;
	}
	m->kept = m->data != m->copy;
	m->src = rx->src;
	m->len = rx->len;
	m->t_ns = rx->t_ns;
	spin_lock_irq(&u->lock);
	list_add_tail(&m->link, &u->rxq);
	u->rxq_len++;
	spin_unlock_irq(&u->lock);
	wake_up(&u->wq);
	return 0;
}

static void c3_user_rdma(void *ctx, u16 src, u32 tag, u32 len)
{
	struct c3_user *u = ctx;
	struct c3_unote *n = kmalloc(sizeof(*n), GFP_KERNEL);

	spin_lock_irq(&u->lock);
	if (n && u->notes_len < C3_QUEUE_MAX) {
		n->note = (struct c3_rdma_note){ .src = src, .tag = tag, .len = len };
		list_add_tail(&n->link, &u->notes);
		u->notes_len++;
		n = NULL;
	} else {
		u->notes_lost++;
		pr_warn_ratelimited(C3_DRV_NAME ": /dev/cenju3: a remote DMA notice from node %u lost (%u waiting)\n",
				    src, u->notes_len);
	}
	spin_unlock_irq(&u->lock);
	kfree(n);
	wake_up(&u->wq);
}

static void c3_user_down(void *ctx)
{
	struct c3_user *u = ctx;

	spin_lock_irq(&u->lock);
	u->down = true;
	spin_unlock_irq(&u->lock);
	wake_up(&u->wq);
}

static const struct c3_client_ops c3_user_ops = {
	.rx = c3_user_rx,
	.rdma = c3_user_rdma,
	.down = c3_user_down,
};

/* ---- the file ---------------------------------------------------------------------- */

static int c3_user_open(struct inode *inode, struct file *file)
{
	struct c3_user *u;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return -ENOMEM;
	spin_lock_init(&u->lock);
	init_waitqueue_head(&u->wq);
	INIT_LIST_HEAD(&u->rxq);
	INIT_LIST_HEAD(&u->notes);
	u->queue_max = C3_QUEUE_DEFAULT;
	u->buf = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN, C3_BUF_ORDER);
	if (!u->buf) {
		kfree(u);
		return -ENOMEM;
	}
	u->buf_phys = page_to_phys(u->buf);
	ret = c3_nic_attach(&c3_user_ops, u);
	if (ret) {
		__free_pages(u->buf, C3_BUF_ORDER);
		kfree(u);
		return ret;
	}
	/* the zeroes are in the cache: written back before remote DMA may land there */
	c3_nic_cache_flush(u->buf_phys, C3_BUF_SIZE);
	file->private_data = u;
	return 0;
}

static int c3_user_release(struct inode *inode, struct file *file)
{
	struct c3_user *u = file->private_data;
	struct c3_urx *m, *tm;
	struct c3_unote *n, *tn;

	c3_nic_detach(u);	/* no callback for u from here on */
	list_for_each_entry_safe(m, tm, &u->rxq, link) {
		if (m->kept)
			c3_nic_rx_free(m->data);
		kfree(m);
	}
	list_for_each_entry_safe(n, tn, &u->notes, link)
		kfree(n);
	__free_pages(u->buf, C3_BUF_ORDER);
	kfree(u);
	return 0;
}

static void c3_user_op_done(struct c3_op *op, int status)
{
	struct c3_uop *uo = container_of(op, struct c3_uop, op);

	if (!uo->waited) {
		kfree(container_of(uo, struct c3_usend, uo));
		return;
	}
	uo->status = status;
	complete(&uo->done);
}

static long c3_user_send(struct c3_user *u, struct c3_msg __user *arg)
{
	struct c3_usend *s;
	struct c3_msg *msg;
	int ret;

	msg = memdup_user(arg, sizeof(*msg));
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	ret = -EINVAL;
	if (!msg->len || msg->len > C3_MSG_MAX || (msg->flags & ~C3_SENDF_WAIT) ||
	    msg->node >= c3_nic_nodes() || msg->node == c3_nic_node())
		goto out;
	ret = -ENOMEM;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		goto out;
	memcpy(s->data, msg->data, msg->len);
	init_completion(&s->uo.done);
	s->uo.waited = msg->flags & C3_SENDF_WAIT;
	s->uo.op = (struct c3_op){ .op = C3_OP_MSG, .dest = msg->node, .len = msg->len,
				   .src = virt_to_phys(s->data), .done = c3_user_op_done };
	ret = c3_nic_submit(&s->uo.op);
	if (ret) {
		kfree(s);
		goto out;
	}
	if (s->uo.waited) {
		/* the interface finishes every request (or remove fails it): bounded */
		wait_for_completion(&s->uo.done);
		ret = s->uo.status;
		kfree(s);
	}
out:
	kfree(msg);
	return ret;
}

/* Wait (interruptibly, up to timeout_ms) until cond or the interface is down. */
#define C3_USER_WAIT(u, cond, timeout_ms) ({					\
	long __t = wait_event_interruptible_timeout((u)->wq,			\
		(cond) || READ_ONCE((u)->down), msecs_to_jiffies(timeout_ms));	\
	__t < 0 ? (int)__t : 0; })

static long c3_user_recv(struct c3_user *u, struct c3_msg __user *arg)
{
	struct c3_msg *msg;
	struct c3_urx *m = NULL;
	bool resume = false;
	int ret;

	msg = kzalloc(sizeof(*msg), GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	ret = -EFAULT;
	if (get_user(msg->timeout_ms, &arg->timeout_ms))
		goto out;
	ret = C3_USER_WAIT(u, !list_empty(&u->rxq), msg->timeout_ms);
	if (ret)
		goto out;
	spin_lock_irq(&u->lock);
	m = list_first_entry_or_null(&u->rxq, struct c3_urx, link);
	if (m) {
		list_del(&m->link);
		u->rxq_len--;
		resume = u->held;
		u->held = false;
	}
	ret = m ? 0 : u->down ? -ENODEV : -ETIMEDOUT;
	spin_unlock_irq(&u->lock);
	if (resume)
		c3_nic_rx_resume();
	if (!m)
		goto out;
	msg->node = m->src;
	msg->len = m->len;
	msg->t_ns = m->t_ns;
	memcpy(msg->data, m->data, m->len);
	if (m->kept)
		c3_nic_rx_free(m->data);
	kfree(m);
	ret = copy_to_user(arg, msg, sizeof(*msg)) ? -EFAULT : 0;
out:
	kfree(msg);
	return ret;
}

static long c3_user_rdma_send(struct c3_user *u, struct c3_rdma __user *arg)
{
	struct c3_uop s = { .waited = true };
	struct c3_rdma r;
	int ret;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	if (!r.len || r.len > C3_REQ_MAX || r.offset > C3_BUF_SIZE ||
	    r.len > C3_BUF_SIZE - r.offset || (r.flags & ~C3_RDMAF_NOTIFY) ||
	    r.dest >= c3_nic_nodes() || r.dest == c3_nic_node())
		return -EINVAL;
	init_completion(&s.done);
	s.op = (struct c3_op){ .op = C3_OP_RDMA, .dest = r.dest, .len = r.len,
			       .src = u->buf_phys + r.offset, .raddr = r.raddr, .tag = r.tag,
			       .flags = (r.flags & C3_RDMAF_NOTIFY) ? C3_NIC_NOTIFY : 0,
			       .done = c3_user_op_done };
	ret = c3_nic_submit(&s.op);
	if (ret)
		return ret;
	/* uninterruptible: the interface reads the buffer until done (bounded: it always
	 * finishes a request, or remove fails it) */
	wait_for_completion(&s.done);
	return s.status;
}

static long c3_user_wait_rdma(struct c3_user *u, struct c3_rdma_note __user *arg)
{
	struct c3_unote *n;
	u32 timeout_ms;
	int ret;

	if (get_user(timeout_ms, &arg->timeout_ms))
		return -EFAULT;
	ret = C3_USER_WAIT(u, !list_empty(&u->notes), timeout_ms);
	if (ret)
		return ret;
	spin_lock_irq(&u->lock);
	n = list_first_entry_or_null(&u->notes, struct c3_unote, link);
	if (n) {
		list_del(&n->link);
		u->notes_len--;
	}
	ret = n ? 0 : u->down ? -ENODEV : -ETIMEDOUT;
	spin_unlock_irq(&u->lock);
	if (!n)
		return ret;
	n->note.timeout_ms = timeout_ms;
	ret = copy_to_user(arg, &n->note, sizeof(n->note)) ? -EFAULT : 0;
	kfree(n);
	return ret;
}

static long c3_user_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct c3_user *u = file->private_data;
	void __user *uarg = (void __user *)arg;

	if (READ_ONCE(u->down))
		return -ENODEV;
	switch (cmd) {
	case C3_IOC_INFO: {
		struct c3_info info = {
			.node = c3_nic_node(), .nodes = c3_nic_nodes(), .slots = c3_nic_slots(),
			.msg_max = C3_MSG_MAX, .rdma_max = C3_REQ_MAX, .buf_size = C3_BUF_SIZE,
			.buf_phys = u->buf_phys,
		};

		return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
	}
	case C3_IOC_SEND:
		return c3_user_send(u, uarg);
	case C3_IOC_RECV:
		return c3_user_recv(u, uarg);
	case C3_IOC_RDMA:
		return c3_user_rdma_send(u, uarg);
	case C3_IOC_WAIT_RDMA:
		return c3_user_wait_rdma(u, uarg);
	case C3_IOC_CONFIG: {
		struct c3_config cfg;
		bool resume;

		if (copy_from_user(&cfg, uarg, sizeof(cfg)))
			return -EFAULT;
		if (!cfg.queue_max || cfg.queue_max > C3_QUEUE_MAX || cfg.rsvd)
			return -EINVAL;
		spin_lock_irq(&u->lock);
		u->queue_max = cfg.queue_max;
		resume = u->held && u->rxq_len < u->queue_max;
		if (resume)
			u->held = false;
		spin_unlock_irq(&u->lock);
		if (resume)
			c3_nic_rx_resume();
		return 0;
	}
	case C3_IOC_NOW: {
		u64 now = c3_nic_now();

		return copy_to_user(uarg, &now, sizeof(now)) ? -EFAULT : 0;
	}
	default:
		return -ENOTTY;
	}
}

/* the file's buffer: bounds checked, invalidated before a read */
static int c3_user_buf_range(loff_t pos, size_t count)
{
	if (pos < 0 || pos > C3_BUF_SIZE || count > C3_BUF_SIZE - pos)
		return -EINVAL;
	return 0;
}

static ssize_t c3_user_read(struct file *file, char __user *ubuf, size_t count, loff_t *pos)
{
	struct c3_user *u = file->private_data;

	if (c3_user_buf_range(*pos, count))
		return -EINVAL;
	if (!count)
		return 0;
	c3_nic_cache_inval(u->buf_phys + *pos, count);
	if (copy_to_user(ubuf, page_address(u->buf) + *pos, count))
		return -EFAULT;
	*pos += count;
	return count;
}

static ssize_t c3_user_write(struct file *file, const char __user *ubuf, size_t count,
			     loff_t *pos)
{
	struct c3_user *u = file->private_data;

	if (c3_user_buf_range(*pos, count))
		return -EINVAL;
	if (copy_from_user(page_address(u->buf) + *pos, ubuf, count))
		return -EFAULT;
	*pos += count;
	return count;
}

const struct file_operations c3_user_fops = {
	.owner = THIS_MODULE,
	.open = c3_user_open,
	.release = c3_user_release,
	.unlocked_ioctl = c3_user_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.read = c3_user_read,
	.write = c3_user_write,
	.llseek = default_llseek,
};
