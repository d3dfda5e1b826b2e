// SPDX-License-Identifier: GPL-2.0
/*
 * norma.ko IPC layer: ports. A local port has its receive right on this node and its
 * index in 'ports' (its uid); a proxy stands for a port homed on another node and
 * carries only send and send-once rights (its sends go through the transport). Both
 * are counted by 'refs' under ipc_lock and freed at zero.
 *
 * Death. When the receive right goes (its task dies, mod_refs -1, a message carrying
 * it is destroyed) the port dies: it leaves 'ports' (lookups from other nodes fail),
 * its queued messages are destroyed (their senders told), its waiters wake, and the
 * names other tasks have for it become dead names when next looked at (lazily, as
 * Mach does). A proxy dies when its home node says so (a send or an accept reports
 * it dead).
 */
#include <linux/slab.h>

#include "ipc.h"

static DEFINE_XARRAY_ALLOC(ports);          /* local ports by uid.index */
static u32 ports_next;                      /* xa_alloc_cyclic's cursor */
static u16 ports_gen;                       /* tells a reused index apart */
static DEFINE_HASHTABLE(proxies, 7);        /* proxies by uid */

static u32 uid_hash(struct norma_uid uid)
{
	return uid.index ^ ((u32)uid.node << 16) ^ uid.gen;
}

u32 ipc_node(void)
{
	return norma_de_node();
}

static struct ipc_port *port_new(void)
{
	struct ipc_port *port = kzalloc(sizeof(*port), GFP_KERNEL);

	if (!port)
		return NULL;
	port->refs = 1;
	port->qlimit = MACH_PORT_QLIMIT_DEFAULT;
	INIT_LIST_HEAD(&port->queue);
	INIT_LIST_HEAD(&port->forced);
	INIT_LIST_HEAD(&port->pending);
	INIT_HLIST_NODE(&port->hnode);
	init_waitqueue_head(&port->rcv_wait);
	init_waitqueue_head(&port->send_wait);
	return port;
}

struct ipc_port *ipc_port_alloc(struct ipc_task *receiver)
{
	struct ipc_port *port;
	u32 index;

	ipc_lock_held();
	port = port_new();
	if (!port)
		return NULL;
	if (xa_alloc_cyclic(&ports, &index, port, xa_limit_31b, &ports_next, GFP_KERNEL) < 0) {
		kfree(port);
		return NULL;
	}
	port->uid = (struct norma_uid){ .node = ipc_node(), .gen = ++ports_gen, .index = index };
	port->receiver = receiver;
	return port;
}

void ipc_port_get(struct ipc_port *port)
{
	ipc_lock_held();
	port->refs++;
}

void ipc_port_put(struct ipc_port *port)
{
	ipc_lock_held();
	if (WARN_ON_ONCE(!port->refs) || --port->refs)
		return;
	/* the last reference: a local port is dead by now (its receive right held one) */
	WARN_ON_ONCE(!list_empty(&port->queue) || !list_empty(&port->pending));
	if (port->proxy)
		hash_del(&port->hnode);
	else if (!port->dead)
		xa_erase(&ports, port->uid.index);
	kfree_rcu(port, rcu);           /* ipc_port_lookup_rcu may still look at it */
}

struct ipc_port *ipc_port_lookup_local(struct norma_uid uid)
{
	struct ipc_port *port;

	ipc_lock_held();
	if (uid.node != ipc_node())
		return NULL;
	port = xa_load(&ports, uid.index);
	if (!port || port->uid.gen != uid.gen || port->dead)
		return NULL;
	return port;
}

struct ipc_port *ipc_port_lookup_rcu(struct norma_uid uid)
{
	struct ipc_port *port;

	if (uid.node != ipc_node())
		return NULL;
	port = xa_load(&ports, uid.index);
	if (!port || READ_ONCE(port->uid.gen) != uid.gen || READ_ONCE(port->dead))
		return NULL;
	return port;
}

struct ipc_port *ipc_proxy_find(struct norma_uid uid)
{
	struct ipc_port *port;

	hash_for_each_possible(proxies, port, hnode, uid_hash(uid))
		if (norma_uid_eq(port->uid, uid))
			return port;
	return NULL;
}

struct ipc_port *ipc_port_from_uid(struct norma_uid uid)
{
	struct ipc_port *port;

	ipc_lock_held();
	if (norma_uid_none(uid))
		return NULL;
	if (uid.node == ipc_node()) {
		port = ipc_port_lookup_local(uid);
		if (port)
			ipc_port_get(port);
		return port;
	}
	port = ipc_proxy_find(uid);
	if (port) {
		ipc_port_get(port);
		return port;
	}
	port = port_new();
	if (!port)
		return NULL;
	port->uid = uid;
	port->proxy = true;
	hash_add(proxies, &port->hnode, uid_hash(uid));
	return port;
}

/* room on a local port's queue, or in a proxy's window of unaccepted messages */
bool ipc_port_full(const struct ipc_port *port)
{
	if (port->proxy)
		return port->inflight >= port->qlimit;
	return port->msgcount >= port->qlimit;
}

void ipc_port_destroy(struct ipc_port *port)
{
	struct ipc_kmsg *kmsg;

	ipc_lock_held();
	if (port->dead)
		return;
	port->dead = true;
	port->receiver = NULL;
	if (port->proxy) {
		ipc_remote_port_died(port);
	} else {
		xa_erase(&ports, port->uid.index);
		ipc_names_port_died(port);
		/* destroying a message may destroy other ports (receive rights it carries):
		 * that recursion is as deep as receive rights are nested in messages */
		while ((kmsg = list_first_entry_or_null(&port->queue, struct ipc_kmsg, link))) {
			list_del(&kmsg->link);
			port->msgcount--;
			ipc_kmsg_destroy(kmsg);
		}
	}
	wake_up_all(&port->rcv_wait);
	wake_up_all(&port->send_wait);
}

/* module exit: every task is gone; what is left is ports in messages in ports */
void ipc_ports_exit(void)
{
	struct ipc_port *port;
	unsigned long index;

	mutex_lock(&ipc_lock);
	xa_for_each(&ports, index, port) {
		ipc_port_get(port);
		ipc_port_destroy(port);
		ipc_port_put(port);
	}
	ipc_unlock();
	WARN_ON(!xa_empty(&ports));
	WARN_ON(!hash_empty(proxies));
}
