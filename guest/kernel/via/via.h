/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VIA NIC's kernel agent (retrolink's model: qemu/via/; registers and formats:
 * retrolink/regs/via-regs.h; user interface: retrolink/uapi/via.h; docs/boards/via.md).
 * The split is M-VIA's:
 *
 *   via_main.c  PCI probe and remove, enable, the TPT, interrupts, the driver's lifetime
 *   via_mem.c   protection tags, memory registration (pinning, TPT entries, regions)
 *   via_vi.c    VIs and CQs: create and destroy, their mmaps, blocking waits
 *   via_cm.c    the connection manager over the NIC's mailbox
 *   via_file.c  /dev/via0: each open file is a NIC handle owning what it creates
 *   via_lane.c  LAN emulation: a net_device over VI 0 in datagram mode
 *
 * Hardware numbers are the handles: a VI's and a CQ's number are the NIC's, a memory
 * handle is the region's index + 1, a protection tag the NIC's tag. The agent's tables
 * (under via->lock) say which file owns each; a number another file owns names nothing
 * (ENOENT). The kernel's own objects (the LAN emulation's) have owner VIA_OWNER_KERNEL.
 *
 * Every register access is programmed I/O on the modelled PCI bus (150 ns a write,
 * 600 ns a read), so the hot paths (posting, polling) never reach the agent, and the
 * interrupt handler reads one register.
 */
#ifndef VIA_DRV_H
#define VIA_DRV_H

#include <linux/types.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/srcu.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/miscdevice.h>
#include <linux/pci.h>

#include "retrolink/regs/via-regs.h"
#include "retrolink/uapi/via.h"

#define VIA_DRV_NAME		"via"

/* a TPT entry's bits (qemu/core/rl-dma-window.h: RL_DMA_PAGE_*), the tag at bit 4 */
#define VIA_TPT_VALID		(1ull << 0)
#define VIA_TPT_WRITE		(1ull << 1)
#define VIA_TPT_TAG_SHIFT	4
#define VIA_TPT_ADDR_MASK	(~0xfffull)

#define VIA_MAX_TAGS		256	/* tags 1 .. 255 */
#define VIA_LANE_VI		0	/* the LAN emulation's: never a process's */
#define VIA_OWNER_KERNEL	((void *)1)

/* bytes one registration may pin: 64 MiB (16384 TPT entries, a quarter of the TPT) */
#define VIA_MAX_REGISTER	(64u << 20)

struct via_dev;
struct via_lane;

/* a memory region: NIC region 'index', memory handle index + 1 */
struct via_mr {
	void *owner;			/* a struct via_file, or VIA_OWNER_KERNEL */
	u32 index, tag;
	u64 va, len;
	u32 tpt, npages;		/* its TPT entries [tpt, tpt + npages) */
	struct page **pages;		/* pinned user pages; NULL: kernel memory */
	bool writable;
};

struct via_cq {
	void *owner;
	u32 index, entries;
	void *ring;
	dma_addr_t dma;
	size_t bytes;			/* the ring's allocation, whole pages */
	unsigned int maps;		/* VMAs mapping the ring */
	unsigned int users;		/* VIs whose queues complete into it */
};

struct via_vi {
	void *owner;
	u32 index, tag;
	struct via_cq *scq, *rcq;
	unsigned int maps;		/* VMAs mapping the doorbell page */
	bool connected;			/* the agent's view: peer_* are valid */
	u32 peer_node, peer_vi;
};

/* the connection manager's state (via_cm.c) */
struct via_cm {
	spinlock_t lock;		/* the lists and ids below */
	struct list_head listeners;	/* VIA_IOC_CONNECT_WAIT callers */
	struct list_head pending;	/* requests matched to a listener, not yet answered */
	struct list_head requests;	/* our VIA_IOC_CONNECT_REQUEST calls under way */
	struct list_head accepts;	/* VIA_IOC_CONNECT_ACCEPT calls awaiting the confirm */
	u32 next_id;
	struct work_struct rx_work;	/* drains the mailbox (VIA_IRQ_CM) */
	wait_queue_head_t wq;
};

struct via_dev {
	/* the board (probe to remove) and each open file hold one */
	struct kref ref;
	/* read side around every user call that reaches the NIC; remove waits for them */
	struct srcu_struct srcu;
	bool dead;			/* removed: every call fails with ENODEV */
	struct pci_dev *pdev;
	void __iomem *ctrl;		/* BAR0 */
	void __iomem *db;		/* BAR2: every VI's doorbell page */
	resource_size_t db_phys;

	u32 node, nodes;
	u8 mac[6];
	int id;				/* N of /dev/viaN */
	char name[16];
	struct miscdevice misc;

	spinlock_t hw_lock;		/* register sequences: index, fields, command */
	spinlock_t irq_lock;		/* irq_mask */
	u32 irq_mask;

	struct mutex lock;		/* the tables and lists below */
	struct list_head files;
	struct via_vi *vis[VIA_MAX_VIS];
	struct via_cq *cqs[VIA_MAX_CQS];
	struct via_mr *mrs[VIA_MAX_REGIONS];
	void *tag_owner[VIA_MAX_TAGS];
	u32 tag_users[VIA_MAX_TAGS];	/* VIs and regions holding the tag */
	unsigned long *tpt_used;
	__le64 *tpt;
	dma_addr_t tpt_dma;

	/* blocking waits: bumped by every VIA_IRQ_DONE and VIA_IRQ_ERROR */
	wait_queue_head_t done_wq;
	atomic_t done_gen;

	struct via_cm cm;
	struct via_lane *lane;
	u64 irqs;
};

/* an open file of /dev/via0: a NIC handle */
struct via_file {
	struct via_dev *via;
	struct file *file;
	struct list_head node;		/* via->files */
	bool revoked;			/* mappings zapped by remove (via->lock) */
};

static inline u32 via_rd(struct via_dev *via, unsigned int reg)
{
	return readl(via->ctrl + reg);
}

static inline void via_wr(struct via_dev *via, unsigned int reg, u32 val)
{
	writel(val, via->ctrl + reg);
}

static inline void __iomem *via_db_page(struct via_dev *via, u32 vi)
{
	return via->db + (size_t)vi * VIA_DB_PAGE_SIZE;
}

static inline bool via_owns(void *owner, void *object_owner)
{
	return object_owner && object_owner == owner;
}

/* via_main.c */
void via_get(struct via_dev *via);
void via_put(struct via_dev *via);
void via_irq_enable(struct via_dev *via, u32 causes);
void via_irq_disable(struct via_dev *via, u32 causes);
int via_errno(u32 err);

/* via_mem.c (via->lock held) */
int via_tag_create(struct via_dev *via, void *owner, u32 *tag);
int via_tag_destroy(struct via_dev *via, void *owner, u32 tag);
bool via_tag_owned(struct via_dev *via, void *owner, u32 tag);
int via_mr_register_user(struct via_dev *via, void *owner, u64 va, u64 len, u32 tag,
			 u32 *handle);
int via_mr_register_kernel(struct via_dev *via, void *cpu, dma_addr_t dma, size_t len,
			   u32 tag, u32 *handle);
int via_mr_deregister(struct via_dev *via, void *owner, u32 handle);
void via_mr_release_all(struct via_dev *via, void *owner);
void via_tag_release_all(struct via_dev *via, void *owner);

/* via_vi.c */
int via_cq_create(struct via_dev *via, void *owner, struct via_cq_create *req);
int via_cq_destroy(struct via_dev *via, void *owner, u32 cq);
int via_vi_create(struct via_dev *via, void *owner, u32 index, u32 tag, u32 send_cq,
		  u32 recv_cq, bool datagram);
int via_vi_destroy(struct via_dev *via, void *owner, u32 vi);
u32 via_vi_state(struct via_dev *via, u32 vi);
int via_vi_command(struct via_dev *via, u32 vi, u32 cmd, u32 peer);
void via_vi_release_all(struct via_dev *via, void *owner);
void via_cq_release_all(struct via_dev *via, void *owner);
long via_wait(struct via_dev *via, void *owner, const struct via_wait *w);
int via_mmap(struct via_file *vf, struct vm_area_struct *vma);

/* via_cm.c */
void via_cm_init(struct via_dev *via);
void via_cm_stop(struct via_dev *via);
void via_cm_irq(struct via_dev *via);
long via_cm_wait(struct via_dev *via, void *owner, struct via_connect *c);
long via_cm_accept(struct via_dev *via, void *owner, struct via_connect *c);
long via_cm_reject(struct via_dev *via, void *owner, struct via_connect *c);
long via_cm_request(struct via_dev *via, void *owner, struct via_connect *c);
long via_cm_disconnect(struct via_dev *via, void *owner, u32 vi);
void via_cm_vi_closing(struct via_dev *via, struct via_vi *vi);
void via_cm_release(struct via_dev *via, void *owner);

/* via_file.c */
extern const struct file_operations via_fops;
void via_file_revoke_all(struct via_dev *via);

/* via_lane.c */
int via_lane_probe(struct via_dev *via);
void via_lane_remove(struct via_dev *via);
void via_lane_irq(struct via_dev *via, u32 cause);

#endif /* VIA_DRV_H */
