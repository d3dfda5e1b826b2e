// SPDX-License-Identifier: GPL-2.0
/*
 * NORMA IPC/DE: the breakdown trace (norma.h: struct norma_trace, norma_de_trace_read).
 * Off by default: reading the interface's clock is two register accesses, each of them
 * modelled bus time, so a traced run is a little slower than an untraced one. The time
 * of an arrival is the interface's own (the event's), which costs nothing.
 */
#include <linux/module.h>
#include <linux/spinlock.h>

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
