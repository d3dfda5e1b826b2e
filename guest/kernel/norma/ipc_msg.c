// SPDX-License-Identifier: GPL-2.0
/*
 * norma.ko IPC layer: mach_msg. A send reads and checks the message, then waits for
 * room at the destination (a local port's queue below its limit; for a port on another
 * node, fewer unaccepted messages in flight than the limit), then takes the rights and
 * queues the message (or hands it to the transport) in one step under ipc_lock, so a
 * send that times out or is interrupted has taken nothing. MACH_SEND_NOTIFY queues
 * into a full queue anyway, once per task and port at a time, and the sender's notify
 * port gets MACH_NOTIFY_MSG_ACCEPTED when a task takes that message.
 *
 * A receive waits for a message on a port whose receive right the task holds (first
 * queueing what waits in the inbox, ipc_remote.c, which is also what may wake it); it wakes
 * with MACH_RCV_PORT_DIED if that right goes (another thread destroyed it, or sent it
 * away). Waits are interruptible by signals and bounded by the timeouts.
 */
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/mman.h>
#include <linux/mm.h>

#include "ipc.h"

struct mach_times ipc_times;

static long timeout_jiffies(u32 option, u32 flag, u32 ms)
{
	return option & flag ? (long)msecs_to_jiffies(ms) : MAX_SCHEDULE_TIMEOUT;
}

/* ---- queues and notifications ------------------------------------------------------ */

void ipc_enqueue(struct ipc_port *port, struct ipc_kmsg *kmsg)
{
	ipc_lock_held();
	kmsg->t_queued_ns = ipc_stamp(NORMA_ST_RCV_QUEUED);
	list_add_tail(&kmsg->link, &port->queue);
	port->msgcount++;
	if (kmsg->notify)
		list_add_tail(&kmsg->forced_link, &port->forced);
	wake_up_all(&port->rcv_wait);
}

void ipc_notify_accepted(struct ipc_port *notify, u32 not_port)
{
	struct ipc_kmsg *kmsg;
	struct norma_kmsg *k;

	ipc_lock_held();
	kmsg = kzalloc(sizeof(*kmsg), GFP_KERNEL);
	k = kzalloc(sizeof(*k) + sizeof(u32), GFP_KERNEL);
	if (!kmsg || !k || notify->dead || notify->proxy) {
		/* nobody to tell (or no memory: Mach loses it the same way) */
		kfree(kmsg);
		kfree(k);
		ipc_port_put(notify);
		return;
	}
	INIT_LIST_HEAD(&kmsg->forced_link);
	k->size = sizeof(*k) + sizeof(u32);
	k->inline_size = sizeof(u32);
	k->id = MACH_NOTIFY_MSG_ACCEPTED;
	k->src_node = ipc_node();
	k->dest = notify->uid;
	k->reply = NORMA_UID_NONE;
	k->t_send_ns = ipc_now();
	/* as Mach: the kernel sends it with a send-once right made for the notify port */
	k->bits = MACH_MSGH_BITS(MACH_MSG_TYPE_PORT_SEND_ONCE, 0);
	memcpy(kmsg_inline(k), &not_port, sizeof(u32));
	kmsg->k = k;
	kmsg->dest = notify;                /* the reference passes to the message */
	kmsg->dest_type = MACH_MSG_TYPE_PORT_SEND_ONCE;
	notify->sorights++;
	ipc_enqueue(notify, kmsg);          /* a notification is never held back */
}

void ipc_kmsg_accepted(struct ipc_kmsg *kmsg, bool dead)
{
	ipc_lock_held();
	if (kmsg->notify) {
		list_del_init(&kmsg->forced_link);
		ipc_notify_accepted(kmsg->notify, kmsg->notify_name);
		kmsg->notify = NULL;
	}
	if (kmsg->remote && (kmsg->k->flags & NORMA_KF_NOTIFY)) {
		ipc_defer_accepted(kmsg->k->src_node, kmsg->k->dest, kmsg->k->seqno, dead);
		kmsg->k->flags &= ~NORMA_KF_NOTIFY;
	}
}

static bool forced_by(struct ipc_port *port, u64 task_id)
{
	struct ipc_kmsg *kmsg;

	if (port->proxy)
		return ipc_remote_forced_by(port, task_id);
	list_for_each_entry(kmsg, &port->forced, forced_link)
		if (kmsg->forced_by == task_id)
			return true;
	return false;
}

/* ---- send --------------------------------------------------------------------------- */

/* wait for room at dest, with ipc_lock held (dropped while waiting); *forced: queue
 * anyway (MACH_SEND_NOTIFY) */
static mach_msg_return_t wait_room(struct ipc_task *task, u32 dname, struct ipc_port *dest,
				   const struct mach_msg_args *a, bool *forced)
{
	long left = timeout_jiffies(a->option, MACH_SEND_TIMEOUT, a->timeout);
	struct ipc_entry *e;

	for (;;) {
		e = ipc_entry_lookup(task, dname);
		if (!e || e->port != dest || dest->dead)
			return MACH_SEND_INVALID_DEST;
		if (!ipc_port_full(dest))
			return MACH_MSG_SUCCESS;
		if (a->option & MACH_SEND_NOTIFY) {
			if (forced_by(dest, task->id))
				return MACH_SEND_NOTIFY_IN_PROGRESS;
			*forced = true;
			return MACH_MSG_SUCCESS;
		}
		if (!left)
			return MACH_SEND_TIMED_OUT;
		ipc_unlock();
		left = wait_event_interruptible_timeout(dest->send_wait,
							READ_ONCE(dest->dead) || !ipc_port_full(dest),
							left);
		mutex_lock(&ipc_lock);
		if (left < 0)
			return MACH_SEND_INTERRUPTED;
		if (left == 0 && ipc_port_full(dest) && !dest->dead)
			return MACH_SEND_TIMED_OUT;
	}
}

/* MACH_SEND_NOTIFY's port: a send or receive right for a port of this node */
static mach_msg_return_t notify_port(struct ipc_task *task, u32 name, struct ipc_port **port)
{
	struct ipc_entry *e = ipc_entry_lookup(task, name);

	if (!e || !e->port || e->port->proxy ||
	    !(e->type & (MACH_PORT_TYPE_SEND | MACH_PORT_TYPE_RECEIVE)))
		return MACH_SEND_INVALID_NOTIFY;
	*port = e->port;
	ipc_port_get(*port);
	return MACH_MSG_SUCCESS;
}

/* OOL regions the sender asked to deallocate, once the message is sent */
static void deallocate_ool(const struct ipc_send *s)
{
	u32 i;

	for (i = 0; i < s->ndesc; i++) {
		const mach_msg_ool_descriptor_t *d = &s->descs[i].out_of_line;
		u64 start, end;

		if (d->type != MACH_MSG_OOL_DESCRIPTOR || !d->deallocate || !d->size)
			continue;
		start = d->address & PAGE_MASK;
		end = PAGE_ALIGN(d->address + d->size);
		vm_munmap(start, end - start);
	}
}

static mach_msg_return_t msg_send(struct ipc_task *task, const struct mach_msg_args *a)
{
	struct ipc_send s = { .t_begin_ns = ipc_stamp(NORMA_ST_SEND_BEGIN) };
	struct ipc_port *dest = NULL, *notify = NULL;
	struct ipc_rtx *rt = NULL;
	struct ipc_entry *e;
	mach_msg_return_t mr;
	bool forced = false;
	u32 dname;

	mr = ipc_kmsg_get(&s, a->msg, a->send_size);
	if (mr)
		goto out;
	dname = s.hdr.msgh_remote_port;
	mutex_lock(&ipc_lock);
	e = ipc_entry_lookup(task, dname);
	if (!e || !e->port) {
		mr = MACH_SEND_INVALID_DEST;
	} else {
		dest = e->port;
		ipc_port_get(dest);
		if (a->option & MACH_SEND_NOTIFY)
			mr = notify_port(task, a->notify, &notify);
	}
	ipc_unlock();
	if (mr)
		goto out;

	/* the OOL data: copied now for a local port, pinned for another node */
	if (dest->proxy)
		rt = ipc_remote_pin(&s, &mr);
	else
		mr = ipc_kmsg_copy_ool(&s);
	if (mr)
		goto out;

	mutex_lock(&ipc_lock);
	/* a bad message fails at once, not after waiting for room */
	mr = ipc_kmsg_check_rights(task, &s, dest->proxy);
	if (!mr)
		mr = wait_room(task, dname, dest, a, &forced);
	if (!mr)
		mr = ipc_kmsg_copyin_rights(task, &s, dest->proxy);
	if (!mr) {
		ipc_times.send_begin_ns = s.t_begin_ns;
		ipc_times.send_copied_ns = ipc_stamp(NORMA_ST_SEND_COPIED);
		ipc_times.send_done_ns = 0;
		ipc_times.send_remote = dest->proxy;
		if (forced) {
			/* the notification holds the notify port's reference */
			s.kmsg->notify = notify;
			s.kmsg->notify_name = dname;
			s.kmsg->forced_by = task->id;
			notify = NULL;
		}
		if (dest->proxy) {
			ipc_remote_queue(rt, &s);
		} else {
			ipc_enqueue(s.kmsg->dest, s.kmsg);
			s.kmsg = NULL;
		}
		ipc_times.send_queued_ns = ipc_stamp(NORMA_ST_SEND_QUEUED);
	}
	ipc_unlock();
	if (rt) {
		mr = mr ? mr : ipc_remote_go(rt);
		ipc_remote_release(rt);
	}
	if (!mr)
		deallocate_ool(&s);
	if (!mr && forced)
		mr = MACH_SEND_WILL_NOTIFY;
out:
	ipc_send_free(&s);
	if (dest || notify) {
		mutex_lock(&ipc_lock);
		if (dest)
			ipc_port_put(dest);
		if (notify)
			ipc_port_put(notify);
		ipc_unlock();
	}
	return mr;
}

/* ---- receive ------------------------------------------------------------------------ */

/* the first message off a port's queue: the port's next sequence number */
static struct ipc_kmsg *dequeue(struct ipc_port *port, u32 *seqno)
{
	struct ipc_kmsg *kmsg = list_first_entry(&port->queue, struct ipc_kmsg, link);

	list_del(&kmsg->link);
	port->msgcount--;
	*seqno = port->seqno++;
	ipc_kmsg_accepted(kmsg, false);
	wake_up_all(&port->send_wait);
	return kmsg;
}

static mach_msg_return_t msg_receive(struct file *file, struct ipc_task *task,
				     const struct mach_msg_args *a)
{
	long left = timeout_jiffies(a->option, MACH_RCV_TIMEOUT, a->timeout);
	struct ipc_copyout *out;
	struct ipc_kmsg *kmsg = NULL;
	mach_msg_return_t mr, mr2;
	struct ipc_port *port;
	struct ipc_entry *e;
	u32 need = 0;

	out = kzalloc(sizeof(*out), GFP_KERNEL);
	if (!out)
		return MACH_RCV_INVALID_DATA;
	ipc_inbox_drain();
	mutex_lock(&ipc_lock);
	e = ipc_entry_lookup(task, a->rcv_name);
	if (!e || !(e->type & MACH_PORT_TYPE_RECEIVE)) {
		ipc_unlock();
		kfree(out);
		return MACH_RCV_INVALID_NAME;
	}
	port = e->port;
	ipc_port_get(port);
	for (;;) {
		if (port->dead || port->receiver != task) {
			mr = MACH_RCV_PORT_DIED;
			break;
		}
		if (!list_empty(&port->queue)) {
			kmsg = list_first_entry(&port->queue, struct ipc_kmsg, link);
			need = kmsg_user_size(kmsg->k);
			if (need <= a->rcv_size) {
				kmsg = dequeue(port, &out->seqno);
				mr = MACH_MSG_SUCCESS;
				break;
			}
			/* too large: Mach destroys it, unless MACH_RCV_LARGE leaves it queued */
			if (!(a->option & MACH_RCV_LARGE))
				ipc_kmsg_destroy(dequeue(port, &out->seqno));
			kmsg = NULL;
			mr = MACH_RCV_TOO_LARGE;
			break;
		}
		if (!left) {
			mr = MACH_RCV_TIMED_OUT;
			break;
		}
		ipc_unlock();
		/* a message from another node may wake us from the inbox: we queue it */
		left = wait_event_interruptible_timeout(port->rcv_wait,
			READ_ONCE(port->dead) || READ_ONCE(port->receiver) != task ||
			!list_empty_careful(&port->queue) || ipc_inbox_pending(), left);
		ipc_inbox_drain();
		mutex_lock(&ipc_lock);
		if (left < 0) {
			mr = MACH_RCV_INTERRUPTED;
			break;
		}
	}
	if (kmsg) {
		ipc_times.rcv_taken_ns = ipc_stamp(NORMA_ST_RCV_TAKEN);
		ipc_times.rcv_sent_ns = kmsg->k->t_send_ns;
		ipc_times.rcv_arrived_ns = kmsg->t_arrived_ns;
		ipc_times.rcv_queued_ns = kmsg->t_queued_ns;
		ipc_times.rcv_remote = kmsg->remote;
		out->local_name = a->rcv_name;
		mr = ipc_kmsg_copyout_rights(task, kmsg, out);
	}
	ipc_port_put(port);
	ipc_unlock();

	if (mr == MACH_RCV_TOO_LARGE && a->rcv_size >= sizeof(mach_msg_header_t) &&
	    put_user(need, (u32 __user *)u64_to_user_ptr(a->msg +
				offsetof(mach_msg_header_t, msgh_size))))
		mr = MACH_RCV_INVALID_DATA;
	if (kmsg) {
		mr2 = ipc_kmsg_put(file, task, kmsg, out, a->msg);
		mr = mr2 ? mr2 : mr;
		ipc_kmsg_free(kmsg);
		mutex_lock(&ipc_lock);
		ipc_times.rcv_done_ns = ipc_stamp(NORMA_ST_RCV_DONE);
		ipc_unlock();
	}
	kfree(out);
	return mr;
}

void ipc_mach_msg(struct file *file, struct ipc_task *task, struct mach_msg_args *a)
{
	if (a->rsvd || (a->option & ~MACH_MSG_OPTIONS_USED)) {
		a->ret = a->option & MACH_SEND_MSG ? MACH_SEND_INVALID_TYPE : MACH_RCV_INVALID_DATA;
		return;
	}
	a->ret = MACH_MSG_SUCCESS;
	if (a->option & MACH_SEND_MSG) {
		a->ret = msg_send(task, a);
		if (a->ret != MACH_MSG_SUCCESS)      /* as Mach: no receive after WILL_NOTIFY */
			return;
	}
	if (a->option & MACH_RCV_MSG)
		a->ret = msg_receive(file, task, a);
}
