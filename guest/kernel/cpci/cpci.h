/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CompactPCI backplane board's driver (retrolink's model: qemu/cpci/; registers:
 * retrolink/regs/cpci-regs.h; user interface: retrolink/uapi/cpci.h;
 * docs/boards/cpci-driver.md).
 *
 *   cpci_main.c  PCI probe and remove, the export, interrupts, the driver's lifetime
 *   cpci_net.c   the netdev bpN: rings in each peer's export, a doorbell per send
 *   cpci_file.c  /dev/cpciN: the user area's mappings and the user doorbells
 *
 * The export (CPCI_EXPORT_MAX bytes of DMA-coherent memory) is what peers' stores
 * reach: [0, CPCI_USER_OFFSET) is the netdev's, one CPCI_NET_REGION for each source
 * node, the rest the user area. Nobody reads remote memory: a load through a window
 * holds the CPU for a backplane round trip, so each side only ever stores into its
 * peers' exports and reads its own.
 */
#ifndef CPCI_DRV_H
#define CPCI_DRV_H

#include <linux/types.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/srcu.h>
#include <linux/wait.h>
#include <linux/miscdevice.h>
#include <linux/pci.h>

#include "retrolink/regs/cpci-regs.h"
#include "retrolink/uapi/cpci.h"

#define CPCI_DRV_NAME		"cpci"

/* the netdev's part of the export: one region a source node, CPCI_MAX_NODES of them */
#define CPCI_NET_REGION		(CPCI_USER_OFFSET / CPCI_MAX_NODES)

/* DB_STATUS bits of the netdev's doorbells (0: frames sent, 1: frames taken, a hello) */
#define CPCI_DB_NET_SEND	0
#define CPCI_DB_NET_TAKEN	1
#define CPCI_DB_BITS_OF(bit)	(0x11111111u << (bit))	/* that doorbell from every node */
#define CPCI_DB_NET_MASK	(CPCI_DB_BITS_OF(CPCI_DB_NET_SEND) | CPCI_DB_BITS_OF(CPCI_DB_NET_TAKEN))
#define CPCI_DB_USER_MASK	(~CPCI_DB_NET_MASK)

static_assert(CPCI_DB_PER_NODE == 4 && CPCI_MAX_NODES == 8, "CPCI_DB_BITS_OF's pattern");
static_assert(CPCI_USER_DB_FIRST == 2, "doorbells 0 and 1 are the netdev's");
static_assert(CPCI_USER_OFFSET + CPCI_USER_SIZE == CPCI_EXPORT_MAX, "the export's split");

struct cpci_net;

struct cpci_dev {
	/* the board (probe to remove) and each open file hold one */
	struct kref ref;
	/* read side around every user call and fault; remove waits for them */
	struct srcu_struct srcu;
	bool dead;			/* removed: every call fails with ENODEV */
	struct pci_dev *pdev;
	void __iomem *ctrl;		/* BAR0 */
	void __iomem *win;		/* BAR2: every node's window */
	resource_size_t win_phys;

	u32 node, nodes;
	u8 mac[6];
	int id;				/* N of /dev/cpciN */
	char name[16];
	struct miscdevice misc;

	void *export;			/* CPCI_EXPORT_MAX bytes peers' stores reach */
	dma_addr_t export_dma;

	struct mutex lock;		/* files */
	struct list_head files;

	/* user doorbells rung here and not yet taken by a CPCI_IOC_WAIT (DB_STATUS bits) */
	spinlock_t db_lock;
	u32 db_pending;
	wait_queue_head_t db_wq;
	atomic_t waiters;		/* callers sleeping in CPCI_IOC_WAIT */

	struct cpci_net *net;
	u64 irqs, errors;
	u32 last_error;
};

/* an open file of /dev/cpciN */
struct cpci_file {
	struct cpci_dev *cpci;
	struct file *file;
	struct list_head node;		/* cpci->files */
	bool revoked;			/* mappings zapped by remove */
};

static inline u32 cpci_rd(struct cpci_dev *cpci, unsigned int reg)
{
	return readl(cpci->ctrl + reg);
}

static inline void cpci_wr(struct cpci_dev *cpci, unsigned int reg, u32 val)
{
	writel(val, cpci->ctrl + reg);
}

/* node 'node''s export seen through this board's window, from byte 'off' */
static inline void __iomem *cpci_window(struct cpci_dev *cpci, u32 node, u32 off)
{
	return cpci->win + (size_t)node * CPCI_WINDOW_SIZE + off;
}

/* a peer: on the backplane and not this node */
static inline bool cpci_is_peer(struct cpci_dev *cpci, u32 node)
{
	return node < cpci->nodes && node != cpci->node;
}

static inline void cpci_ring(struct cpci_dev *cpci, u32 node, u32 bit)
{
	cpci_wr(cpci, CPCI_REG_DB_RING, CPCI_DB_RING_VALUE(node, bit));
}

/* cpci_main.c */
void cpci_get(struct cpci_dev *cpci);
void cpci_put(struct cpci_dev *cpci);

/* cpci_file.c */
extern const struct file_operations cpci_fops;
void cpci_file_revoke_all(struct cpci_dev *cpci);
void cpci_user_doorbells(struct cpci_dev *cpci, u32 bits);

/* cpci_net.c */
int cpci_net_probe(struct cpci_dev *cpci);
void cpci_net_remove(struct cpci_dev *cpci);
void cpci_net_doorbells(struct cpci_dev *cpci);

#endif /* CPCI_DRV_H */
