/* SPDX-License-Identifier: GPL-2.0 */
/*
 * norma.ko's IPC layer: what its files share (docs/boards/norma.md).
 *
 *   ipc_main.c    the module, /dev/mach and its ioctls, the breakdown stamps
 *   ipc_space.c   tasks: names, rights and user references; copyin/copyout of one right
 *   ipc_port.c    ports and proxies (ports homed on other nodes), port death
 *   ipc_kmsg.c    messages: copyin from a task, copyout to one, destruction, OOL pages
 *   ipc_msg.c     mach_msg: queues, their limits, blocking, accepted notifications
 *   ipc_remote.c  sends to other nodes and the transport's upcalls (norma.h)
 *   ipc_name.c    the name service of this node
 *
 * Locking. One mutex, ipc_lock, guards every task, port, queue and message of the node
 * (the guest has one CPU; a message's path takes it a few times). Nothing sleeps with it
 * held but the allocator (GFP_KERNEL); user memory is touched outside it, and so is the
 * transport: calls to it that can be made under the lock are put on a list that
 * ipc_unlock() runs after dropping it. Port references ('refs') are counted under it;
 * a port is freed after an RCU grace period, for the lookup of the transport's hard
 * interrupt handler (ipc_port_lookup_rcu), which takes no lock but the inbox's.
 */
#ifndef NORMA_IPC_H
#define NORMA_IPC_H

#include <linux/list.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include "norma.h"
#include "retrolink/uapi/mach.h"

extern struct mutex ipc_lock;
void ipc_unlock(void);          /* mutex_unlock(&ipc_lock), then the deferred calls */
#define ipc_lock_held() lockdep_assert_held(&ipc_lock)

/* ---- ports ------------------------------------------------------------------------ */
struct ipc_task;

struct ipc_port {
	u32 refs;                       /* names, messages, waiters, registrations */
	struct norma_uid uid;           /* home node, index there */
	bool proxy;                     /* homed on another node: a send-only stand-in */
	bool dead;
	struct ipc_task *receiver;      /* local: the receive right's holder; NULL in a message */
	u32 srights, sorights;          /* send and send-once rights on this node */
	/* local: the queue */
	struct list_head queue;         /* struct ipc_kmsg */
	u32 msgcount, qlimit, seqno;
	struct list_head forced;        /* struct ipc_kmsg forced by MACH_SEND_NOTIFY, queued */
	/* proxy: messages sent and not yet accepted (flow control on this node) */
	u32 inflight;
	struct list_head pending;       /* struct ipc_pending */
	struct hlist_node hnode;        /* the proxy table */
	wait_queue_head_t rcv_wait;     /* receivers wait for a message or death */
	wait_queue_head_t send_wait;    /* senders wait for room or death */
	struct rcu_head rcu;            /* freed after an RCU grace period */
};

struct ipc_port *ipc_port_alloc(struct ipc_task *receiver);    /* refs 1; NULL: no memory */
void ipc_port_get(struct ipc_port *port);
void ipc_port_put(struct ipc_port *port);
/* The receive right is destroyed: the port dies, its queue is destroyed, everyone waiting
 * wakes up, its names elsewhere become dead names when next used. */
void ipc_port_destroy(struct ipc_port *port);
/* A port of this node by uid (no reference taken), NULL if none or dead. */
struct ipc_port *ipc_port_lookup_local(struct norma_uid uid);
/* The same without ipc_lock, in any context, under rcu_read_lock(): the port stays
 * there until rcu_read_unlock(), but it may die meanwhile (only its wait queues are
 * for the caller to use). */
struct ipc_port *ipc_port_lookup_rcu(struct norma_uid uid);
/* The port for uid as a right on this node: the local port, or its proxy (made if new);
 * a reference is taken. NULL: a local port that is dead or unknown, or no memory. */
struct ipc_port *ipc_port_from_uid(struct norma_uid uid);
struct ipc_port *ipc_proxy_find(struct norma_uid uid);
bool ipc_port_full(const struct ipc_port *port);
void ipc_ports_exit(void);                  /* module exit: nothing may be left */
u32 ipc_node(void);

/* ---- tasks and their names ------------------------------------------------------ */
struct ipc_entry {
	u32 name;
	u32 type;                       /* MACH_PORT_TYPE_* */
	u32 urefs;                      /* send (or dead-name) user references; send-once: 1 */
	struct ipc_port *port;          /* NULL for a dead name */
	struct hlist_node hnode;        /* by_port (not send-once rights) */
};

struct ipc_task {
	u64 id;                         /* tells tasks apart (MACH_SEND_NOTIFY_IN_PROGRESS) */
	struct xarray names;            /* name -> struct ipc_entry */
	u32 nnames;
	DECLARE_HASHTABLE(by_port, 7);  /* port -> its send/receive entry */
	bool dead;
	/* OOL mapping at receive (ipc_kmsg.c): the pages the next mmap of the file maps */
	struct mutex map_lock;
	struct task_struct *map_owner;
	struct page **map_pages;
	u32 map_npages;
};

struct ipc_task *ipc_task_create(void);
void ipc_task_destroy(struct ipc_task *task);

/* The entry of name, with a right whose port died turned into a dead name. */
struct ipc_entry *ipc_entry_lookup(struct ipc_task *task, u32 name);
kern_return_t ipc_port_allocate(struct ipc_task *task, u32 right, u32 *name);
kern_return_t ipc_right_deallocate(struct ipc_task *task, u32 name);
kern_return_t ipc_right_mod_refs(struct ipc_task *task, u32 name, u32 right, s32 delta);
kern_return_t ipc_right_insert(struct ipc_task *task, u32 name, u32 poly, u32 poly_type);
kern_return_t ipc_right_get_refs(struct ipc_task *task, u32 name, u32 right, u32 *refs);
kern_return_t ipc_right_type(struct ipc_task *task, u32 name, u32 *type);

/*
 * Rights in a message. ipc_right_check sees whether a disposition of name can be
 * copied in, counting what the message already takes from the same names in 'ledger'
 * (so a message is copied in whole or not at all); ipc_right_copyin then takes it: the
 * port (with a reference the message now owns) and the wire type (PORT_*). A NULL port
 * with *wtype set is MACH_PORT_DEAD.
 */
struct ipc_ledger {
	u32 n, max;                     /* entries used, room (2 + descriptors) */
	struct {
		struct ipc_entry *entry;
		u32 move_send, copy_send, move_so, move_recv, make;
	} e[];
};
struct ipc_ledger *ipc_ledger_alloc(u32 ndesc);     /* kfree() it */
int ipc_right_check(struct ipc_task *task, struct ipc_ledger *ledger, u32 name, u32 disp);
void ipc_right_copyin(struct ipc_task *task, u32 name, u32 disp, struct ipc_port **port,
		      u32 *wtype);
/* Give task the right (port, wtype) a message carried (the reference passes to the
 * task); its name, or MACH_PORT_NULL (no room: the right is released). */
u32 ipc_right_copyout(struct ipc_task *task, struct ipc_port *port, u32 wtype);
/* Release a right (port, wtype) a message carried, as its destruction does. */
void ipc_right_release(struct ipc_port *port, u32 wtype);
/* The name task has for port (its send or receive right), 0 if none. */
u32 ipc_task_name_of(struct ipc_task *task, struct ipc_port *port);

/* ---- messages --------------------------------------------------------------------- */
struct ipc_kmsg {
	struct list_head link;          /* on its port's queue */
	struct norma_kmsg *k;           /* the KMSG: wire header, descriptors, inline data */
	struct ipc_port *dest;          /* reference held */
	u32 dest_type;                  /* PORT_SEND or PORT_SEND_ONCE */
	struct ipc_port *reply;         /* reference held; NULL: none (or dead: reply_type) */
	u32 reply_type;                 /* 0: no reply port */
	struct ipc_port **rights;       /* per descriptor: the port carried (ref) or NULL */
	struct page **pages;            /* OOL data: 4 KiB pages, NORMA_PAGE_SIZE-grouped */
	u32 npages;
	/* MACH_SEND_NOTIFY forced it: notify this port once it is taken */
	struct ipc_port *notify;
	u32 notify_name;                /* the sender's name for dest, for not_port */
	u64 forced_by;                  /* the task's id, for MACH_SEND_NOTIFY_IN_PROGRESS */
	struct list_head forced_link;
	bool remote;                    /* came from another node (k->src_node) */
	u64 t_arrived_ns, t_queued_ns;
};

static inline struct norma_desc *kmsg_descs(struct norma_kmsg *k)
{
	return (struct norma_desc *)(k + 1);
}

static inline void *kmsg_inline(struct norma_kmsg *k)
{
	return kmsg_descs(k) + k->ndesc;
}

/* a message's size as a task sees it */
static inline u32 kmsg_user_size(const struct norma_kmsg *k)
{
	u32 size = sizeof(mach_msg_header_t) + k->inline_size;

	if (k->bits & MACH_MSGH_BITS_COMPLEX)
		size += sizeof(mach_msg_body_t) + k->ndesc * sizeof(mach_msg_descriptor_t);
	return size;
}

/* What a send reads from the task before it takes the lock (ipc_kmsg.c). */
struct ipc_send {
	mach_msg_header_t hdr;
	u32 ndesc;
	mach_msg_descriptor_t *descs;   /* kmalloc'ed */
	struct ipc_kmsg *kmsg;          /* with its KMSG, inline data and OOL (local) */
	u32 ool_bytes, ool_pages;
	u64 t_begin_ns;
};
mach_msg_return_t ipc_kmsg_get(struct ipc_send *s, u64 uaddr, u32 size);
/* local: copy the OOL data into fresh pages */
mach_msg_return_t ipc_kmsg_copy_ool(struct ipc_send *s);
/* the rights of the header and body: can they be taken; check all, then take all (both
 * under ipc_lock) */
mach_msg_return_t ipc_kmsg_check_rights(struct ipc_task *task, struct ipc_send *s,
					bool remote);
mach_msg_return_t ipc_kmsg_copyin_rights(struct ipc_task *task, struct ipc_send *s,
					 bool remote);
void ipc_send_free(struct ipc_send *s);     /* what is left of a send, rights included */
void ipc_kmsg_release_rights(struct ipc_kmsg *kmsg);    /* under ipc_lock */
/* Destroy a message: its rights, its pages; its sender is told (accepted, dead). */
void ipc_kmsg_destroy(struct ipc_kmsg *kmsg);
void ipc_kmsg_free(struct ipc_kmsg *kmsg);  /* the memory only */
/* Receive: the rights to task's names (under ipc_lock), then the rest (without). */
struct ipc_copyout {
	u32 reply_name;                 /* msgh_remote_port */
	u32 local_name;                 /* msgh_local_port: the name received from */
	u32 seqno;                      /* msgh_seqno */
	u32 names[MACH_MSG_DESC_MAX];   /* the port descriptors' */
};
mach_msg_return_t ipc_kmsg_copyout_rights(struct ipc_task *task, struct ipc_kmsg *kmsg,
					  struct ipc_copyout *out);
mach_msg_return_t ipc_kmsg_put(struct file *file, struct ipc_task *task,
			       struct ipc_kmsg *kmsg, const struct ipc_copyout *out, u64 uaddr);
int ipc_mmap(struct file *file, struct vm_area_struct *vma);

/* ---- mach_msg and queues (ipc_msg.c) ------------------------------------------------ */
struct mach_msg_args;
void ipc_mach_msg(struct file *file, struct ipc_task *task, struct mach_msg_args *a);
/* Queue a message on a local port (under ipc_lock); it is the port's now. */
void ipc_enqueue(struct ipc_port *port, struct ipc_kmsg *kmsg);
/* A message a task took or that was destroyed: its sender's notification. */
void ipc_kmsg_accepted(struct ipc_kmsg *kmsg, bool dead);
/* A kernel message MACH_NOTIFY_MSG_ACCEPTED to 'notify' (its reference is taken). */
void ipc_notify_accepted(struct ipc_port *notify, u32 not_port);

/* ---- other nodes (ipc_remote.c) --------------------------------------------------- */
/*
 * A send to a proxy: ipc_remote_pin pins the OOL data where it is (no lock); after the
 * rights are taken, ipc_remote_queue (under ipc_lock) turns the message into the
 * transport's: its rights become uids and leave this node, it counts in the proxy's
 * window until accepted; ipc_remote_go hands it to the transport (no lock) and, if it
 * has OOL data, waits for receive complete (the pages are read in place). Every rtx is
 * released once, by ipc_remote_release.
 */
struct ipc_rtx;
struct ipc_rtx *ipc_remote_pin(struct ipc_send *s, mach_msg_return_t *mr);
void ipc_remote_queue(struct ipc_rtx *rt, struct ipc_send *s);
mach_msg_return_t ipc_remote_go(struct ipc_rtx *rt);
void ipc_remote_release(struct ipc_rtx *rt);
bool ipc_remote_forced_by(struct ipc_port *proxy, u64 task_id);
void ipc_remote_port_died(struct ipc_port *proxy);
/* calls to the transport that ipc_unlock() makes */
void ipc_defer_accepted(u16 node, struct norma_uid uid, u32 seqno, bool dead);
void ipc_run_deferred(void);
/*
 * Messages from other nodes that the transport handed up in its hard interrupt handler
 * (norma_ipc_deliver_irq) wait in the inbox, in arrival order, for a task to queue them
 * on their ports: the receiver it woke, any task entering mach_msg, or a work item if
 * no receiver was waiting. ipc_inbox_drain (without ipc_lock) does it; every message
 * from another node goes through the inbox, so they keep their arrival order.
 */
bool ipc_inbox_pending(void);
void ipc_inbox_drain(void);
/* module exit, after norma_de_exit and with no task left: what is left is freed */
void ipc_inbox_exit(void);
/* module exit, after norma_de_exit: what is destroyed from now on tells no other node */
void ipc_remote_exit(void);

/* ---- the name service (ipc_name.c) ----------------------------------------------- */
void ipc_name_ioctl(struct ipc_task *task, unsigned int cmd, struct mach_netname_args *a);
void ipc_names_port_died(struct ipc_port *port);
void ipc_names_exit(void);

/* ---- the breakdown (ipc_msg.c, ipc_main.c) ------------------------------------------- */
extern struct mach_times ipc_times;         /* under ipc_lock */
/* A breakdown stamp: norma_de_now(), or 0 with the module option stamps=0 (the
 * interface's clock may cost a register access each time: 6 per message here). */
u64 ipc_now(void);
/* The stamp of a breakdown step, marked for the instruction profile (norma.h). */
#define ipc_stamp(step)	({ NORMA_STEP_MARK(step); ipc_now(); })

#endif /* NORMA_IPC_H */
