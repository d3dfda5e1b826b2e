// SPDX-License-Identifier: GPL-2.0
/*
 * norma.ko IPC layer: a task's name space. As in Mach, one name denotes a task's
 * receive right and/or its send rights for one port (with a count of user references),
 * or one send-once right, or a dead name (with references). Names are handed out
 * increasing, so a stale name does not soon denote another port; at most
 * MACH_PORT_NAMES_MAX at a time.
 *
 * Counting. Each entry with a port holds one reference to it; the port's srights and
 * sorights count the send and send-once rights on this node (names and messages), for
 * mach_port_get_status.
 */
#include <linux/slab.h>

#include "ipc.h"

#define NAME_FIRST  0x103u      /* Mach's names look like this: not small integers */

struct ipc_task *ipc_task_create(void)
{
	static atomic64_t ids;
	struct ipc_task *task = kzalloc(sizeof(*task), GFP_KERNEL);

	if (!task)
		return NULL;
	task->id = atomic64_inc_return(&ids);
	xa_init_flags(&task->names, XA_FLAGS_ALLOC1);
	hash_init(task->by_port);
	mutex_init(&task->map_lock);
	return task;
}

static u32 port_hash(struct ipc_port *port)
{
	return hash_ptr(port, 32);
}

u32 ipc_task_name_of(struct ipc_task *task, struct ipc_port *port)
{
	struct ipc_entry *e;

	hash_for_each_possible(task->by_port, e, hnode, port_hash(port))
		if (e->port == port)
			return e->name;
	return 0;
}

static struct ipc_entry *entry_of_port(struct ipc_task *task, struct ipc_port *port)
{
	u32 name = ipc_task_name_of(task, port);

	return name ? xa_load(&task->names, name) : NULL;
}

/* a new entry; name 0: the next free name */
static struct ipc_entry *entry_new(struct ipc_task *task, u32 name)
{
	static u32 next = NAME_FIRST;   /* shared by all tasks: names differ across tasks */
	struct ipc_entry *e;
	int ret;

	if (task->nnames >= MACH_PORT_NAMES_MAX)
		return NULL;
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return NULL;
	INIT_HLIST_NODE(&e->hnode);
	if (name)
		ret = xa_insert(&task->names, name, e, GFP_KERNEL);
	else
		ret = xa_alloc_cyclic(&task->names, &e->name, e,
				      XA_LIMIT(NAME_FIRST, 0x7fffffff), &next, GFP_KERNEL);
	if (ret < 0) {
		kfree(e);
		return NULL;
	}
	if (name)
		e->name = name;
	task->nnames++;
	return e;
}

static void entry_free(struct ipc_task *task, struct ipc_entry *e)
{
	xa_erase(&task->names, e->name);
	if (!hlist_unhashed(&e->hnode))
		hash_del(&e->hnode);
	task->nnames--;
	kfree(e);
}

/* an entry's send or send-once right whose port died: now a dead name */
static void entry_check(struct ipc_task *task, struct ipc_entry *e)
{
	struct ipc_port *port = e->port;

	if (!port || !port->dead || (e->type & MACH_PORT_TYPE_RECEIVE))
		return;
	if (e->type & MACH_PORT_TYPE_SEND)
		port->srights--;
	else
		port->sorights--;
	if (!hlist_unhashed(&e->hnode))
		hash_del(&e->hnode);
	e->type = MACH_PORT_TYPE_DEAD_NAME;
	e->urefs = max(e->urefs, 1u);
	e->port = NULL;
	ipc_port_put(port);
}

struct ipc_entry *ipc_entry_lookup(struct ipc_task *task, u32 name)
{
	struct ipc_entry *e;

	ipc_lock_held();
	if (!MACH_PORT_VALID(name))
		return NULL;
	e = xa_load(&task->names, name);
	if (e)
		entry_check(task, e);
	return e;
}

/* drop the send right of an entry (all its user references) */
static void entry_drop_send(struct ipc_task *task, struct ipc_entry *e)
{
	struct ipc_port *port = e->port;

	e->type &= ~MACH_PORT_TYPE_SEND;
	e->urefs = 0;
	port->srights--;
	if (!e->type) {
		entry_free(task, e);
		ipc_port_put(port);
	}
}

kern_return_t ipc_port_allocate(struct ipc_task *task, u32 right, u32 *name)
{
	struct ipc_entry *e;
	struct ipc_port *port = NULL;

	if (right != MACH_PORT_RIGHT_RECEIVE && right != MACH_PORT_RIGHT_DEAD_NAME)
		return KERN_INVALID_VALUE;
	e = entry_new(task, 0);
	if (!e)
		return task->nnames >= MACH_PORT_NAMES_MAX ? KERN_NO_SPACE
							   : KERN_RESOURCE_SHORTAGE;
	if (right == MACH_PORT_RIGHT_DEAD_NAME) {
		e->type = MACH_PORT_TYPE_DEAD_NAME;
		e->urefs = 1;
	} else {
		port = ipc_port_alloc(task);
		if (!port) {
			entry_free(task, e);
			return KERN_RESOURCE_SHORTAGE;
		}
		e->type = MACH_PORT_TYPE_RECEIVE;
		e->port = port;
		hash_add(task->by_port, &e->hnode, port_hash(port));
	}
	*name = e->name;
	return KERN_SUCCESS;
}

/* the receive right goes: the port dies; the name's send rights, if any, become a dead
 * name (as in Mach), unless the whole task goes */
static void entry_drop_receive(struct ipc_task *task, struct ipc_entry *e, bool keep_dead)
{
	struct ipc_port *port = e->port;

	if ((e->type & MACH_PORT_TYPE_SEND) && keep_dead) {
		port->srights--;
		hash_del(&e->hnode);
		e->type = MACH_PORT_TYPE_DEAD_NAME;
		e->port = NULL;
	} else {
		if (e->type & MACH_PORT_TYPE_SEND)
			port->srights--;
		entry_free(task, e);
	}
	ipc_port_destroy(port);
	ipc_port_put(port);
}

kern_return_t ipc_right_deallocate(struct ipc_task *task, u32 name)
{
	struct ipc_entry *e = ipc_entry_lookup(task, name);

	if (!e)
		return KERN_INVALID_NAME;
	if (e->type & MACH_PORT_TYPE_SEND) {
		if (--e->urefs == 0)
			entry_drop_send(task, e);
		return KERN_SUCCESS;
	}
	if (e->type & MACH_PORT_TYPE_SEND_ONCE) {
		e->port->sorights--;
		ipc_port_put(e->port);
		entry_free(task, e);
		return KERN_SUCCESS;
	}
	if (e->type & MACH_PORT_TYPE_DEAD_NAME) {
		if (--e->urefs == 0)
			entry_free(task, e);
		return KERN_SUCCESS;
	}
	return KERN_INVALID_RIGHT;      /* a receive right alone: mod_refs destroys it */
}

kern_return_t ipc_right_mod_refs(struct ipc_task *task, u32 name, u32 right, s32 delta)
{
	struct ipc_entry *e;
	s64 refs;

	if (right >= MACH_PORT_RIGHT_NUMBER || right == MACH_PORT_RIGHT_PORT_SET)
		return KERN_INVALID_VALUE;
	e = ipc_entry_lookup(task, name);
	if (!e)
		return KERN_INVALID_NAME;
	if (!(e->type & MACH_PORT_TYPE(right)))
		return KERN_INVALID_RIGHT;
	switch (right) {
	case MACH_PORT_RIGHT_RECEIVE:
	case MACH_PORT_RIGHT_SEND_ONCE:
		if (delta < -1 || delta > 0)
			return KERN_INVALID_VALUE;
		if (delta == 0)
			return KERN_SUCCESS;
		if (right == MACH_PORT_RIGHT_RECEIVE) {
			entry_drop_receive(task, e, true);
		} else {
			e->port->sorights--;
			ipc_port_put(e->port);
			entry_free(task, e);
		}
		return KERN_SUCCESS;
	default:                        /* SEND, DEAD_NAME: user references */
		refs = (s64)e->urefs + delta;
		if (refs < 0)
			return KERN_INVALID_VALUE;
		if (refs > MACH_PORT_UREFS_MAX)
			return KERN_UREFS_OVERFLOW;
		e->urefs = refs;
		if (refs)
			return KERN_SUCCESS;
		if (right == MACH_PORT_RIGHT_SEND)
			entry_drop_send(task, e);
		else
			entry_free(task, e);
		return KERN_SUCCESS;
	}
}

kern_return_t ipc_right_get_refs(struct ipc_task *task, u32 name, u32 right, u32 *refs)
{
	struct ipc_entry *e;

	if (right >= MACH_PORT_RIGHT_NUMBER)
		return KERN_INVALID_VALUE;
	e = ipc_entry_lookup(task, name);
	if (!e)
		return KERN_INVALID_NAME;
	if (!(e->type & MACH_PORT_TYPE(right)))
		*refs = 0;
	else if (right == MACH_PORT_RIGHT_SEND || right == MACH_PORT_RIGHT_DEAD_NAME)
		*refs = e->urefs;
	else
		*refs = 1;
	return KERN_SUCCESS;
}

kern_return_t ipc_right_type(struct ipc_task *task, u32 name, u32 *type)
{
	struct ipc_entry *e = ipc_entry_lookup(task, name);

	if (!e)
		return KERN_INVALID_NAME;
	*type = e->type;
	return KERN_SUCCESS;
}

/* ---- rights in messages --------------------------------------------------------- */

static bool disp_is_send(u32 disp)
{
	return disp >= MACH_MSG_TYPE_MOVE_SEND && disp <= MACH_MSG_TYPE_MAKE_SEND_ONCE;
}

struct ipc_ledger *ipc_ledger_alloc(u32 ndesc)
{
	struct ipc_ledger *l = kmalloc(struct_size(l, e, 2 + ndesc), GFP_KERNEL);

	if (l) {
		l->n = 0;
		l->max = 2 + ndesc;
	}
	return l;
}

/* 0: name's right can go in the message with disp; -EINVAL: it cannot */
int ipc_right_check(struct ipc_task *task, struct ipc_ledger *l, u32 name, u32 disp)
{
	struct ipc_entry *e = ipc_entry_lookup(task, name);
	u32 i;

	if (!e || (!disp_is_send(disp) && disp != MACH_MSG_TYPE_MOVE_RECEIVE))
		return -EINVAL;
	for (i = 0; i < l->n && l->e[i].entry != e; i++)
		;
	if (i == l->n) {
		if (l->n == l->max)
			return -EINVAL;
		memset(&l->e[i], 0, sizeof(l->e[i]));
		l->e[i].entry = e;
		l->n++;
	}
	switch (disp) {
	case MACH_MSG_TYPE_MOVE_RECEIVE:
		l->e[i].move_recv++;
		break;
	case MACH_MSG_TYPE_MAKE_SEND:
	case MACH_MSG_TYPE_MAKE_SEND_ONCE:
		l->e[i].make++;
		break;
	case MACH_MSG_TYPE_MOVE_SEND:
		l->e[i].move_send++;
		break;
	case MACH_MSG_TYPE_COPY_SEND:
		l->e[i].copy_send++;
		break;
	case MACH_MSG_TYPE_MOVE_SEND_ONCE:
		l->e[i].move_so++;
		break;
	}
	/* what the message takes from this name so far must be there */
	if (e->type & MACH_PORT_TYPE_DEAD_NAME)     /* COPY/MOVE_SEND(_ONCE): MACH_PORT_DEAD */
		return l->e[i].move_recv || l->e[i].make ||
		       l->e[i].move_send + l->e[i].move_so + !!l->e[i].copy_send > e->urefs ?
		       -EINVAL : 0;
	if ((l->e[i].move_recv || l->e[i].make) && !(e->type & MACH_PORT_TYPE_RECEIVE))
		return -EINVAL;
	/* a receive right moved: nothing else may be done with the name in that message */
	if (l->e[i].move_recv > 1 ||
	    (l->e[i].move_recv && (l->e[i].make || l->e[i].move_send || l->e[i].copy_send)))
		return -EINVAL;
	if ((l->e[i].move_send || l->e[i].copy_send) &&
	    (!(e->type & MACH_PORT_TYPE_SEND) ||
	     l->e[i].move_send + !!l->e[i].copy_send > e->urefs))
		return -EINVAL;
	if (l->e[i].move_so && (!(e->type & MACH_PORT_TYPE_SEND_ONCE) || l->e[i].move_so > 1))
		return -EINVAL;
	return 0;
}

void ipc_right_copyin(struct ipc_task *task, u32 name, u32 disp, struct ipc_port **portp,
		      u32 *wtype)
{
	struct ipc_entry *e = ipc_entry_lookup(task, name);
	struct ipc_port *port = e->port;

	*portp = NULL;
	if (e->type & MACH_PORT_TYPE_DEAD_NAME) {
		/* a dead name sent on: MACH_PORT_DEAD in the message */
		*wtype = MACH_MSG_TYPE_PORT_SEND;
		if (disp != MACH_MSG_TYPE_COPY_SEND && --e->urefs == 0)
			entry_free(task, e);
		return;
	}
	switch (disp) {
	case MACH_MSG_TYPE_MOVE_RECEIVE:
		*wtype = MACH_MSG_TYPE_PORT_RECEIVE;
		port->receiver = NULL;              /* in transit: the message holds it */
		if (e->type & MACH_PORT_TYPE_SEND) {
			e->type = MACH_PORT_TYPE_SEND;  /* the name keeps the send right */
			ipc_port_get(port);
		} else {
			entry_free(task, e);            /* its reference goes to the message */
		}
		break;
	case MACH_MSG_TYPE_MAKE_SEND:
	case MACH_MSG_TYPE_COPY_SEND:
		*wtype = MACH_MSG_TYPE_PORT_SEND;
		port->srights++;
		ipc_port_get(port);
		break;
	case MACH_MSG_TYPE_MOVE_SEND:
		*wtype = MACH_MSG_TYPE_PORT_SEND;
		port->srights++;
		ipc_port_get(port);
		if (--e->urefs == 0)
			entry_drop_send(task, e);
		break;
	case MACH_MSG_TYPE_MAKE_SEND_ONCE:
		*wtype = MACH_MSG_TYPE_PORT_SEND_ONCE;
		port->sorights++;
		ipc_port_get(port);
		break;
	case MACH_MSG_TYPE_MOVE_SEND_ONCE:
		*wtype = MACH_MSG_TYPE_PORT_SEND_ONCE;
		entry_free(task, e);                /* right and reference go to the message */
		break;
	}
	*portp = port;
}

u32 ipc_right_copyout(struct ipc_task *task, struct ipc_port *port, u32 wtype)
{
	struct ipc_entry *e;

	ipc_lock_held();
	if (!port)
		return wtype ? MACH_PORT_DEAD : MACH_PORT_NULL;
	if (port->dead && wtype != MACH_MSG_TYPE_PORT_RECEIVE) {
		/* died on the way: a dead name (Mach gives MACH_PORT_DEAD) */
		ipc_right_release(port, wtype);
		return MACH_PORT_DEAD;
	}
	e = wtype == MACH_MSG_TYPE_PORT_SEND_ONCE ? NULL : entry_of_port(task, port);
	if (e) {
		ipc_port_put(port);                 /* the entry has its reference */
		if (wtype == MACH_MSG_TYPE_PORT_RECEIVE) {
			e->type |= MACH_PORT_TYPE_RECEIVE;
			port->receiver = task;
			return e->name;
		}
		port->srights--;                    /* merged into the name's right */
		if (e->urefs < MACH_PORT_UREFS_MAX)
			e->urefs++;
		if (!(e->type & MACH_PORT_TYPE_SEND)) {
			e->type |= MACH_PORT_TYPE_SEND;
			e->urefs = 1;
			port->srights++;
		}
		return e->name;
	}
	e = entry_new(task, 0);
	if (!e) {
		ipc_right_release(port, wtype);
		return MACH_PORT_NULL;
	}
	e->port = port;
	switch (wtype) {
	case MACH_MSG_TYPE_PORT_RECEIVE:
		e->type = MACH_PORT_TYPE_RECEIVE;
		port->receiver = task;
		break;
	case MACH_MSG_TYPE_PORT_SEND:
		e->type = MACH_PORT_TYPE_SEND;
		e->urefs = 1;
		break;
	default:
		e->type = MACH_PORT_TYPE_SEND_ONCE;
		e->urefs = 1;
		return e->name;                     /* not in by_port: one name per right */
	}
	hash_add(task->by_port, &e->hnode, port_hash(port));
	return e->name;
}

void ipc_right_release(struct ipc_port *port, u32 wtype)
{
	ipc_lock_held();
	if (!port)
		return;
	switch (wtype) {
	case MACH_MSG_TYPE_PORT_RECEIVE:
		ipc_port_destroy(port);
		break;
	case MACH_MSG_TYPE_PORT_SEND:
		port->srights--;
		break;
	case MACH_MSG_TYPE_PORT_SEND_ONCE:
		port->sorights--;
		break;
	}
	ipc_port_put(port);
}

kern_return_t ipc_right_insert(struct ipc_task *task, u32 name, u32 poly, u32 poly_type)
{
	struct ipc_ledger *l;
	struct ipc_port *port;
	struct ipc_entry *e;
	u32 wtype, got;
	int bad;

	if (!MACH_PORT_VALID(name))
		return KERN_INVALID_VALUE;
	if (poly_type < MACH_MSG_TYPE_MOVE_SEND || poly_type > MACH_MSG_TYPE_MAKE_SEND_ONCE)
		return KERN_INVALID_VALUE;
	l = ipc_ledger_alloc(0);
	if (!l)
		return KERN_RESOURCE_SHORTAGE;
	bad = ipc_right_check(task, l, poly, poly_type);
	kfree(l);
	if (bad)
		return ipc_entry_lookup(task, poly) ? KERN_INVALID_RIGHT : KERN_INVALID_NAME;
	port = ipc_entry_lookup(task, poly)->port;
	if (!port)
		return KERN_INVALID_CAPABILITY;     /* a dead name */
	if (poly_type == MACH_MSG_TYPE_MAKE_SEND_ONCE || poly_type == MACH_MSG_TYPE_MOVE_SEND_ONCE) {
		if (name != poly && ipc_entry_lookup(task, name))
			return KERN_NAME_EXISTS;
		if (name == poly)                   /* a send-once right has a name of its own */
			return KERN_RIGHT_EXISTS;
	} else if (name != poly) {
		/* a port's send rights have one name in a task: its receive right's, if any */
		if (ipc_entry_lookup(task, name))
			return KERN_NAME_EXISTS;
		if (ipc_task_name_of(task, port))
			return KERN_RIGHT_EXISTS;
	}
	ipc_right_copyin(task, poly, poly_type, &port, &wtype);
	if (name != poly) {
		e = entry_new(task, name);
		if (!e) {
			ipc_right_release(port, wtype);
			return KERN_NO_SPACE;
		}
		e->port = port;
		e->urefs = 1;
		if (wtype == MACH_MSG_TYPE_PORT_SEND_ONCE) {
			e->type = MACH_PORT_TYPE_SEND_ONCE;
		} else {
			e->type = MACH_PORT_TYPE_SEND;
			hash_add(task->by_port, &e->hnode, port_hash(port));
		}
		return KERN_SUCCESS;
	}
	got = ipc_right_copyout(task, port, wtype);
	return got == name ? KERN_SUCCESS : KERN_FAILURE;
}

/* the task is gone: every right it had goes, its receive rights' ports die */
void ipc_task_destroy(struct ipc_task *task)
{
	struct ipc_entry *e;
	unsigned long name;

	mutex_lock(&ipc_lock);
	task->dead = true;
	xa_for_each(&task->names, name, e) {
		struct ipc_port *port = e->port;

		if (!port) {
			entry_free(task, e);
			continue;
		}
		if (e->type & MACH_PORT_TYPE_RECEIVE) {
			entry_drop_receive(task, e, false);
			continue;
		}
		if (e->type & MACH_PORT_TYPE_SEND)
			port->srights--;
		else
			port->sorights--;
		entry_free(task, e);
		ipc_port_put(port);
	}
	ipc_unlock();
	xa_destroy(&task->names);
	kfree(task);
}
