// SPDX-License-Identifier: GPL-2.0
/*
 * norma.ko IPC layer: the name service of this node (netname_check_in / look_up /
 * check_out). A name holds a send right to its port (counted in srights) until it is
 * checked out or the port dies. Another node's names are asked through the transport
 * (norma_de_lookup), which calls norma_ipc_lookup there.
 */
#include <linux/completion.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "ipc.h"

#define NETNAMES_MAX 256

struct ipc_netname {
	struct list_head link;
	char name[NORMA_NAME_MAX];
	struct ipc_port *port;          /* a send right's reference */
};

static LIST_HEAD(netnames);
static u32 nnetnames;

static struct ipc_netname *netname_find(const char *name)
{
	struct ipc_netname *n;

	list_for_each_entry(n, &netnames, link)
		if (!strcmp(n->name, name))
			return n;
	return NULL;
}

static void netname_drop(struct ipc_netname *n)
{
	list_del(&n->link);
	nnetnames--;
	n->port->srights--;
	ipc_port_put(n->port);
	kfree(n);
}

void ipc_names_port_died(struct ipc_port *port)
{
	struct ipc_netname *n, *tmp;

	list_for_each_entry_safe(n, tmp, &netnames, link)
		if (n->port == port)
			netname_drop(n);
}

void ipc_names_exit(void)
{
	struct ipc_netname *n, *tmp;

	mutex_lock(&ipc_lock);
	list_for_each_entry_safe(n, tmp, &netnames, link)
		netname_drop(n);
	ipc_unlock();
}

int norma_ipc_lookup(const char *name, struct norma_uid *uid)
{
	struct ipc_netname *n;
	int ret = -ENOENT;

	mutex_lock(&ipc_lock);
	n = netname_find(name);
	if (n && !n->port->dead) {
		*uid = n->port->uid;
		ret = 0;
	}
	ipc_unlock();
	return ret;
}

/* the port of a send or receive right task has under name, NULL if none */
static struct ipc_port *right_port(struct ipc_task *task, u32 name)
{
	struct ipc_entry *e = ipc_entry_lookup(task, name);

	if (!e || !e->port || !(e->type & (MACH_PORT_TYPE_SEND | MACH_PORT_TYPE_RECEIVE)))
		return NULL;
	return e->port;
}

static kern_return_t check_in(struct ipc_task *task, const char *name, u32 pname)
{
	struct ipc_port *port = right_port(task, pname);
	struct ipc_netname *n;

	if (!port)
		return NETNAME_INVALID_PORT;
	n = netname_find(name);
	if (n)
		return n->port == port ? NETNAME_SUCCESS : NETNAME_NOT_YOUR_PORT;
	if (nnetnames >= NETNAMES_MAX)
		return KERN_RESOURCE_SHORTAGE;
	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n)
		return KERN_RESOURCE_SHORTAGE;
	strscpy(n->name, name, sizeof(n->name));
	n->port = port;
	ipc_port_get(port);
	port->srights++;
	list_add_tail(&n->link, &netnames);
	nnetnames++;
	return NETNAME_SUCCESS;
}

static kern_return_t check_out(struct ipc_task *task, const char *name, u32 pname)
{
	struct ipc_netname *n = netname_find(name);

	if (!n)
		return NETNAME_NOT_CHECKED_IN;
	if (right_port(task, pname) != n->port)
		return NETNAME_NOT_YOUR_PORT;
	netname_drop(n);
	return NETNAME_SUCCESS;
}

/* a send right to port for task: its name in a->port */
static kern_return_t give_send(struct ipc_task *task, struct ipc_port *port, u32 *name)
{
	port->srights++;
	ipc_port_get(port);
	*name = ipc_right_copyout(task, port, MACH_MSG_TYPE_PORT_SEND);
	if (*name == MACH_PORT_NULL)
		return KERN_NO_SPACE;
	return *name == MACH_PORT_DEAD ? NETNAME_NOT_CHECKED_IN : NETNAME_SUCCESS;
}

/* ---- a lookup on another node --------------------------------------------------- */
struct lookup_ctx {
	refcount_t refs;                /* the caller's and the callback's */
	struct completion done;
	int status;
	struct norma_uid uid;
};

static void lookup_cb(void *ctx, int status, struct norma_uid uid)
{
	struct lookup_ctx *c = ctx;

	c->status = status;
	c->uid = uid;
	complete(&c->done);
	if (refcount_dec_and_test(&c->refs))
		kfree(c);
}

static kern_return_t look_up_remote(struct ipc_task *task, u32 node, const char *name,
				    u32 *pname)
{
	struct lookup_ctx *c = kzalloc(sizeof(*c), GFP_KERNEL);
	struct ipc_port *port;
	kern_return_t kr;
	int ret;

	if (!c)
		return KERN_RESOURCE_SHORTAGE;
	refcount_set(&c->refs, 2);
	init_completion(&c->done);
	ret = norma_de_lookup(node, name, lookup_cb, c);
	if (ret) {
		kfree(c);
		return NETNAME_NO_SUCH_HOST;
	}
	if (wait_for_completion_interruptible(&c->done)) {
		kr = KERN_ABORTED;                  /* a signal: the callback frees c */
		goto out;
	}
	if (c->status == -ENOENT) {
		kr = NETNAME_NOT_CHECKED_IN;
		goto out;
	}
	if (c->status || norma_uid_none(c->uid)) {
		kr = NETNAME_NO_SUCH_HOST;
		goto out;
	}
	mutex_lock(&ipc_lock);
	port = ipc_port_from_uid(c->uid);
	if (!port) {
		kr = KERN_RESOURCE_SHORTAGE;
	} else {
		kr = give_send(task, port, pname);
		ipc_port_put(port);
	}
	ipc_unlock();
out:
	if (refcount_dec_and_test(&c->refs))
		kfree(c);
	return kr;
}

void ipc_name_ioctl(struct ipc_task *task, unsigned int cmd, struct mach_netname_args *a)
{
	struct ipc_netname *n;
	size_t len = strnlen(a->name, sizeof(a->name));

	if (!len || len == sizeof(a->name) || a->rsvd) {
		a->ret = KERN_INVALID_ARGUMENT;
		return;
	}
	if (cmd == MACH_IOC_NETNAME_LOOK_UP && a->node != ipc_node()) {
		a->ret = a->node >= norma_de_nodes() ? NETNAME_NO_SUCH_HOST :
			 look_up_remote(task, a->node, a->name, &a->port);
		return;
	}
	mutex_lock(&ipc_lock);
	switch (cmd) {
	case MACH_IOC_NETNAME_CHECK_IN:
		a->ret = check_in(task, a->name, a->port);
		break;
	case MACH_IOC_NETNAME_CHECK_OUT:
		a->ret = check_out(task, a->name, a->port);
		break;
	default:
		n = netname_find(a->name);
		a->ret = n ? give_send(task, n->port, &a->port) : NETNAME_NOT_CHECKED_IN;
		break;
	}
	ipc_unlock();
}
