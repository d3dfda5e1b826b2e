/* SPDX-License-Identifier: GPL-2.0 */
/*
 * norma.ko: Mach-style IPC across Cenju-3 nodes. Two layers in one module, and this
 * header is the whole contract between them (docs/boards/norma.md):
 *
 *   ipc_*.c   the IPC layer: tasks (one per open /dev/mach), port name spaces, ports,
 *             rights, message queues and their limits, mach_msg, OOL memory mapped into
 *             the receiver, accepted notifications, the local name service.
 *   de_*.c    NORMA IPC/DE, the transport between nodes over the Cenju-3 interface
 *             (cenju3.ko, ../cenju3/cenju3_nic.h): reserve first, the short path, send
 *             permits, remote DMA of OOL pages, page send permits, receive complete,
 *             message accepted, name lookups, port death. No timeouts, no retransmission.
 *
 * The IPC layer calls norma_de_*; the transport calls norma_ipc_* (upcalls). Upcalls run
 * in process context (the transport's work items, or the interface driver's interrupt
 * thread, which is where protocol messages arrive) and may take the IPC layer's locks,
 * but for norma_ipc_deliver_irq, which is for the interface's hard interrupt handler; the IPC layer must not hold its locks across a
 * norma_de_* call that can sleep (marked "may sleep").
 */
#ifndef NORMA_H
#define NORMA_H

#include <linux/types.h>

#define NORMA_PAGE_SIZE     (16u << 10)     /* the OS page of Cenju-3: OOL unit */
#define NORMA_PAGE_ORDER    2               /* 16 KiB = 4 guest pages */
#define NORMA_SHORT_MAX     440             /* a KMSG this small rides in the send request */
#define NORMA_PERMIT_PAGES  8               /* OOL page addresses per (page) send permit */
#define NORMA_NAME_MAX      32              /* a name in the name service, NUL included */

/* A port's name across the cluster: its home node (where its receive right is) and its
 * index there; 'gen' tells a reused index from the port that had it before. */
struct norma_uid {
	u16 node;
	u16 gen;
	u32 index;
};
#define NORMA_UID_NONE  ((struct norma_uid){ .node = 0xffff })

static inline bool norma_uid_none(struct norma_uid u) { return u.node == 0xffff; }
static inline bool norma_uid_eq(struct norma_uid a, struct norma_uid b)
{
	return a.node == b.node && a.gen == b.gen && a.index == b.index;
}

/*
 * The KMSG: a message in its kernel form, which is also its form on the network. The
 * IPC layer builds it at send (copyin: rights become uids with their wire disposition,
 * OOL regions become descriptors) and turns it back into a task's message at receive
 * (copyout). The transport moves it as opaque bytes; it reads only this header.
 * Layout: struct norma_kmsg, then 'ndesc' struct norma_desc, then the inline data.
 */
struct norma_kmsg {
	u32 size;               /* bytes of the whole KMSG, this header included */
	u32 bits;               /* msgh_bits, dispositions in wire form (uapi/mach.h) */
	struct norma_uid dest;  /* the port it is sent to */
	struct norma_uid reply; /* the reply port (NORMA_UID_NONE: none) */
	s32 id;                 /* msgh_id */
	u32 seqno;              /* the sender node's accept-notification sequence number */
	u16 src_node;           /* the node that sent it */
	u16 flags;              /* NORMA_KF_* */
	u32 ndesc;              /* descriptors that follow */
	u32 ool_pages;          /* NORMA_PAGE_SIZE pages of OOL data, over all descriptors */
	u32 inline_size;        /* inline data bytes after the descriptors */
	u64 t_send_ns;          /* breakdown: virtual time the sender's mach_msg began */
};
#define NORMA_KF_NOTIFY     (1u << 0)   /* the sender wants "message accepted" */

#define NORMA_DESC_PORT     1
#define NORMA_DESC_OOL      2
struct norma_desc {
	u32 type;               /* NORMA_DESC_* */
	u32 disposition;        /* PORT: the wire disposition (uapi/mach.h) */
	struct norma_uid uid;   /* PORT */
	u32 size;               /* OOL: bytes */
	u32 first_page;         /* OOL: its first page among the message's ool_pages */
};

/* One physically contiguous piece of a sender's OOL data: it goes to byte 'offset' of
 * the message's OOL page 'page' (offset + len <= NORMA_PAGE_SIZE). */
struct norma_seg {
	phys_addr_t phys;
	u32 page;
	u32 offset;
	u32 len;
};

/*
 * A send, from the IPC layer to the transport (norma_de_send). The IPC layer owns it
 * and everything it points to until 'done' is called; the transport never frees it.
 */
struct norma_tx {
	u16 dest_node;
	struct norma_kmsg *kmsg;        /* kmalloc'ed: physically contiguous */
	struct norma_seg *segs;         /* the OOL data in page order (pinned by the IPC layer) */
	u32 nsegs;
	/* called once, in process context: 0 (receive complete: the receiver has it all),
	 * -ENOENT (the port is dead or unknown there; nothing was delivered), -ENODEV (no
	 * interface / the node is unreachable), -EINTR (norma_de_cancel) */
	void (*done)(struct norma_tx *tx, int status);
	void *owner;                    /* the IPC layer's */
	struct list_head link;          /* the transport's while it holds the tx */
	u32 state;                      /* the transport's */
	u32 pages_sent;                 /* the transport's */
	void *de;                       /* the transport's */
};

/*
 * A received message, from the transport to the IPC layer (norma_ipc_deliver). The
 * transport allocated it, its 'pages' array and its KMSG buffer (kmalloc) and its OOL
 * pages (alloc_pages of NORMA_PAGE_ORDER without __GFP_COMP, one per OOL page, pinned
 * until mapped or freed); the IPC layer owns all of it from the call on. norma_rx_free()
 * (defined by the IPC layer, ipc_kmsg.c) frees what is left of one; the transport may
 * call it too, for a message it gives up before delivering.
 */
struct norma_rx {
	struct norma_kmsg *kmsg;
	struct page **pages;            /* kmsg->ool_pages entries */
	u64 t_arrived_ns;               /* breakdown: when the receive completed */
	struct list_head link;          /* the IPC layer's, once delivered */
};
void norma_rx_free(struct norma_rx *rx);

/* ---- transport, called by the IPC layer --------------------------------------- */
int norma_de_init(void);            /* module init: find the interface, reserve buffers */
void norma_de_exit(void);
u32 norma_de_node(void);            /* this node (0 without an interface) */
u32 norma_de_nodes(void);           /* nodes (1 without an interface) */

/* Send tx->kmsg (and its OOL) to tx->kmsg->dest on tx->dest_node. Returns 0 (done()
 * will be called) or -EINVAL/-ENODEV/-ENOMEM at once (done() will not be called).
 * May sleep (it allocates the transfer's state). */
int norma_de_send(struct norma_tx *tx);
/* Give up a send (its task died): done(-EINTR) is called once the interface no longer
 * reads its pages, which may be later (the transport waits for its requests). */
void norma_de_cancel(struct norma_tx *tx);

/* A task took message 'seqno' from port 'uid' that 'node' sent with NORMA_KF_NOTIFY, or
 * (dead) the port died with it queued: queue "message accepted" back to 'node'. */
void norma_de_accepted(u16 node, struct norma_uid uid, u32 seqno, bool dead);

/* Ask 'node' for the port registered there under 'name'. Calls cb(ctx, 0, uid),
 * cb(ctx, -ENOENT, NONE) or cb(ctx, -ENODEV, NONE), once, in process context. */
int norma_de_lookup(u16 node, const char *name,
		    void (*cb)(void *ctx, int status, struct norma_uid uid), void *ctx);

/* Breakdown timestamps: virtual time now (the interface's clock; without one, the
 * kernel's monotonic clock, which under icount is virtual time too). */
u64 norma_de_now(void);

/*
 * The transport's breakdown trace (de_trace.c): with the module parameter 'trace' on
 * (/sys/module/norma/parameters/trace), each protocol step of each transfer is recorded
 * with the interface's virtual time (the clocks of all nodes are one virtual time) in a
 * ring of NORMA_TRACE_MAX entries, the oldest overwritten. A transfer is named by its
 * sender's node and xid on both sides, so the two nodes' records join up.
 * norma_de_trace_read() moves up to max entries, oldest first, into buf and returns how
 * many; an ioctl of the IPC layer hands them to user space (docs/boards/norma.md).
 */
#define NORMA_TRACE_MAX     4096
enum norma_step {
	NORMA_TR_SEND = 1,      /* sender: norma_de_send called */
	NORMA_TR_REQ_RX,        /* receiver: the send request arrived (interface's time) */
	NORMA_TR_PERMIT_TX,     /* receiver: buffers allocated, send permit posted */
	NORMA_TR_PERMIT_RX,     /* sender: a (page) send permit arrived */
	NORMA_TR_KMSG_TX,       /* sender: the long KMSG's remote DMA posted */
	NORMA_TR_PAGES_TX,      /* sender: a batch of OOL pages posted (and page copy done) */
	NORMA_TR_PAGES_RX,      /* receiver: page copy done (or the KMSG's DMA) arrived */
	NORMA_TR_DELIVER,       /* receiver: receive complete posted, norma_ipc_deliver called */
	NORMA_TR_DONE_RX,       /* sender: receive complete arrived */
	NORMA_TR_DONE,          /* sender: tx->done called */
	NORMA_TR_ACCEPT_TX,     /* receiver: "message accepted" posted */
	NORMA_TR_ACCEPT_RX,     /* sender: "message accepted" arrived */
};
/* The IPC layer's breakdown steps (struct mach_times), numbered after the transport's. */
enum norma_ipc_step {
	NORMA_ST_SEND_BEGIN = 32,       /* mach_msg entered to send */
	NORMA_ST_SEND_COPIED,           /* the KMSG built, its rights taken */
	NORMA_ST_SEND_QUEUED,           /* queued on a local port, or handed to the transport */
	NORMA_ST_SEND_DONE,             /* remote: receive complete reached the IPC layer */
	NORMA_ST_RCV_ARRIVED,           /* remote: the transport delivered it */
	NORMA_ST_RCV_QUEUED,            /* on its port's queue */
	NORMA_ST_RCV_TAKEN,             /* a receiver took it off the queue */
	NORMA_ST_RCV_DONE,              /* copied out: mach_msg about to return */
};

/*
 * Step marks for the instruction profile (docs/profile.md "Steps"): with the module
 * parameter step_marks on, each step above (and each of the transport's trace steps)
 * runs "nopl 0x524cNNNN(%rax)", NNNN the step's number: a no-op for the CPU at which
 * the profile's QEMU plugin (qemu/plugins/insn-profile.c) starts counting the next
 * step. Off (the default), a mark is a test and a branch.
 */
extern bool norma_step_marks;
#define NORMA_STEP_MARK(step)							\
	do {									\
		if (unlikely(READ_ONCE(norma_step_marks)))			\
			asm volatile(".byte 0x0f, 0x1f, 0x80\n\t.long 0x524c0000 + %c0" \
				     :: "i" (step) : "memory");			\
	} while (0)

struct norma_trace {
	u64 t_ns;
	u32 xid;                /* the transfer on its sender's node (accept: the seqno) */
	u16 src;                /* the transfer's sending node */
	u8 step;                /* enum norma_step */
	u8 rsvd;
};
u32 norma_de_trace_read(struct norma_trace *buf, u32 max);

/* ---- IPC layer, called by the transport (upcalls) ------------------------------ */
/* Step B of a send request: can the port take a message? 0 (yes: allocate and permit),
 * -ENOENT (dead or unknown: the sender is told at once). */
int norma_ipc_port_check(struct norma_uid uid);
/* Everything has arrived: queue it on its port (or destroy it if the port died since). */
void norma_ipc_deliver(struct norma_rx *rx);
/* The same, in hard interrupt context, for a message with no OOL pages: -ENOENT (the
 * port is dead or unknown: rx is still the transport's), or 0: the IPC layer has it
 * and its receiving task (or a work item) queues it on the port. Never sleeps. */
int norma_ipc_deliver_irq(struct norma_rx *rx);
/* "message accepted" for a message this node sent to 'uid' (dead: destroyed unread). */
void norma_ipc_accepted(struct norma_uid uid, u32 seqno, bool dead);
/* A name lookup from another node: 0 and *uid, or -ENOENT. */
int norma_ipc_lookup(const char *name, struct norma_uid *uid);

/* module options (de_main.c): the paper's proposed speed-ups, off by default */
extern bool norma_piggyback_accept;    /* accepted notices ride on other protocol messages */
extern bool norma_page_sender;         /* a dedicated page-send worker */

#endif /* NORMA_H */
