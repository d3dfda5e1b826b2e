// SPDX-License-Identifier: GPL-2.0
/*
 * NORMA IPC/DE: the breakdown trace (norma.h: struct norma_trace, norma_de_trace_read).
 * Off by default: reading the interface's clock is two register accesses, each of them
 * modelled bus time, so a traced run is a little slower than an untraced one. The time
 * of an arrival is the interface's own (the event's), which costs nothing.
 * /sys/kernel/debug/norma_trace hands the entries to user space as text, one a line,
 * "t_ns src xid step", oldest first; opening it takes them out of the ring.
 */
#include <linux/module.h>
#include <linux/spinlock.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "de.h"

static bool de_trace_on;
module_param_named(trace, de_trace_on, bool, 0644);
MODULE_PARM_DESC(trace, "record the breakdown of each transfer by protocol step (default off)");

static DEFINE_SPINLOCK(de_trace_lock);
static struct norma_trace de_ring[NORMA_TRACE_MAX];
static u32 de_head, de_tail;	/* written, read (count up; entry = index % MAX) */

/* t_ns 0: now */
void de_trace(u8 step, u16 src, u32 xid, u64 t_ns)
{
	unsigned long flags;

	if (!READ_ONCE(de_trace_on))
		return;
	if (!t_ns)
		t_ns = de_now();
	spin_lock_irqsave(&de_trace_lock, flags);
	de_ring[de_head % NORMA_TRACE_MAX] = (struct norma_trace){
		.t_ns = t_ns, .xid = xid, .src = src, .step = step };
	de_head++;
	if (de_head - de_tail > NORMA_TRACE_MAX)
		de_tail = de_head - NORMA_TRACE_MAX;	/* the oldest overwritten */
	spin_unlock_irqrestore(&de_trace_lock, flags);
}

u32 norma_de_trace_read(struct norma_trace *buf, u32 max)
{
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&de_trace_lock, flags);
	while (n < max && de_tail != de_head) {
		buf[n++] = de_ring[de_tail % NORMA_TRACE_MAX];
		de_tail++;
	}
	spin_unlock_irqrestore(&de_trace_lock, flags);
	return n;
}

/* ---- /sys/kernel/debug/norma_trace ---------------------------------------------------- */

struct de_trace_text {
	size_t len;
	char buf[];
};

#define DE_TRACE_LINE	48	/* "%llu %u %u %u\n" at its longest, rounded up */

static int de_trace_open(struct inode *inode, struct file *file)
{
	struct norma_trace *e = kvmalloc_array(NORMA_TRACE_MAX, sizeof(*e), GFP_KERNEL);
	struct de_trace_text *t;
	u32 n, i;

	if (!e)
		return -ENOMEM;
	t = kvmalloc(sizeof(*t) + NORMA_TRACE_MAX * DE_TRACE_LINE, GFP_KERNEL);
	if (!t) {
		kvfree(e);
		return -ENOMEM;
	}
	n = norma_de_trace_read(e, NORMA_TRACE_MAX);
	t->len = 0;
	for (i = 0; i < n; i++)
		t->len += scnprintf(t->buf + t->len, DE_TRACE_LINE, "%llu %u %u %u\n",
				    e[i].t_ns, e[i].src, e[i].xid, e[i].step);
	kvfree(e);
	file->private_data = t;
	return 0;
}

static ssize_t de_trace_file_read(struct file *file, char __user *ubuf, size_t count,
				  loff_t *pos)
{
	struct de_trace_text *t = file->private_data;

	return simple_read_from_buffer(ubuf, count, pos, t->buf, t->len);
}

static int de_trace_release(struct inode *inode, struct file *file)
{
	kvfree(file->private_data);
	return 0;
}

static const struct file_operations de_trace_fops = {
	.owner = THIS_MODULE,
	.open = de_trace_open,
	.read = de_trace_file_read,
	.release = de_trace_release,
	.llseek = default_llseek,
};

struct dentry *de_trace_debugfs(void)
{
	return debugfs_create_file("norma_trace", 0400, NULL, NULL, &de_trace_fops);
}
