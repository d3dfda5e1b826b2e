/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The CompactPCI backplane driver (guest/kernel/cpci/): the user-space interface of
 * /dev/cpci0. docs/boards/cpci.md documents it.
 *
 * The node's exported region (CPCI_EXPORT_MAX bytes, allocated by the driver) is split:
 * [0, CPCI_USER_OFFSET) holds the netdev's receive rings (the kernel's), and
 * [CPCI_USER_OFFSET, CPCI_EXPORT_MAX) is the user area, shared by every process that
 * maps it. Doorbells 0 and 1 are the netdev's, CPCI_USER_DB_FIRST .. CPCI_DB_PER_NODE-1
 * the users'.
 *
 * mmap (MAP_SHARED, never PROT_EXEC: EPERM), at most CPCI_USER_SIZE bytes from offset 0 of:
 *  - CPCI_MMAP_WINDOW(node): the user area of node 'node''s export, through this
 *    board's window (uncached: every load and store is a backplane transaction);
 *  - CPCI_MMAP_LOCAL: this node's own user area (ordinary cached memory, which peers'
 *    stores reach by DMA: poll it for their data).
 * After an unbind the mappings are revoked (an access raises SIGBUS).
 *
 * Waits (CPCI_IOC_WAIT) sleep interruptibly: a signal ends them with EINTR.
 * Errors: EINVAL (a bad argument), EHOSTUNREACH (no such node, or this node), ETIMEDOUT,
 * EPERM (an executable mapping), ENODEV (the board was removed: every call but close).
 */
#ifndef CPCI_UAPI_H
#define CPCI_UAPI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define CPCI_USER_OFFSET        0x80000u
#define CPCI_USER_SIZE          0x80000u
#define CPCI_USER_DB_FIRST      2

#define CPCI_MMAP_WINDOW(node)  ((__u64)(node) << 20)
#define CPCI_MMAP_LOCAL         (15ull << 20)

struct cpci_info {
    __u32 node;         /* out: this node */
    __u32 nodes;        /* out: nodes on the backplane */
    __u32 user_size;    /* out: CPCI_USER_SIZE */
    __u32 rsvd;
};

struct cpci_ring {
    __u32 node;         /* in: the peer */
    __u32 bit;          /* in: CPCI_USER_DB_FIRST .. CPCI_DB_PER_NODE-1 */
};

struct cpci_wait {
    __u32 timeout_ms;   /* in: 0 waits without a limit */
    __u32 src;          /* out: the node that rang */
    __u32 bit;          /* out: its doorbell */
    __u32 rsvd;
};

#define CPCI_IOC_MAGIC  'B'
#define CPCI_IOC_INFO   _IOR(CPCI_IOC_MAGIC, 1, struct cpci_info)
#define CPCI_IOC_RING   _IOW(CPCI_IOC_MAGIC, 2, struct cpci_ring)
/* sleep until a user doorbell rings here (one not yet taken), and take it */
#define CPCI_IOC_WAIT   _IOWR(CPCI_IOC_MAGIC, 3, struct cpci_wait)

#endif /* CPCI_UAPI_H */
