/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * PUMA-II board driver: the user-space interface, shared by the driver
 * (guest/kernel/puma2/) and the guest programs (guest/bin/puma2/).
 * docs/boards/puma2.md documents it.
 *
 * The driver splits the board's shared space (PUMA2_REG_SPACE_PAGES pages, the same
 * on every node) in three, the same way on every node:
 *   page 0                         the disk's sharing record (who writes, who reads)
 *   pages 1 .. disk_pages          the shared RAM disk, /dev/puma2disk (blk-mq)
 *   the rest                       the mapped DSM, /dev/puma2 (mmap)
 * disk_pages is the module parameter `disk_mib` in pages (default: half the space).
 *
 * /dev/puma2disk: a block device of 4 KiB blocks. The paper's sharing rule: one node
 * (the server) fills it; once another node opens it (mount -o ro), every node reads
 * only. An open for writing while another node has it open, or any open while
 * another node has it open for writing: EBUSY, and the kernel log names that node.
 *
 * /dev/puma2: mmap(MAP_SHARED) at offset O maps DSM bytes O .. O+len of the shared
 * space's DSM part onto the board memory: a read of a page this board does not hold
 * fetches it, a write takes ownership and invalidates the other copies (the board's
 * consistency), so processes on different nodes that map the same offset share one
 * memory. Mappings are never executable (PROT_EXEC: EPERM); MAP_PRIVATE: EINVAL.
 * When the board goes (unbind), every mapping's next access gives SIGBUS.
 * ioctls: the board's identity and counters, and FETCH (below).
 */
#ifndef PUMA2_UAPI_H
#define PUMA2_UAPI_H

#include <linux/types.h>
#include <linux/ioctl.h>

struct puma2_info {
    __u32 node;             /* this board's station on the ring */
    __u32 nodes;            /* boards on the ring */
    __u32 space_pages;      /* the shared space, 4 KiB pages */
    __u32 disk_pages;       /* the shared RAM disk's pages (from page 1) */
    __u32 dsm_first;        /* the DSM's first page in the space */
    __u32 dsm_pages;        /* the DSM's pages: mmap offsets 0 .. dsm_pages * 4096 */
};

/* The board's counters (PUMA2_REG_*: times in virtual ns since it was enabled). */
struct puma2_stats {
    __u64 bus_ns;           /* the VME bus busy with this host's programmed I/O */
    __u64 net_ns;           /* a host request waiting on another board, bus idle */
    __u64 now_ns;           /* the guest's clock when read (ktime_get_ns) */
    __u32 pages_in, pages_out, msgs_in, msgs_out, invalidated;
    __u32 recalls;          /* RECALLs the driver answered */
    __u32 faults_read, faults_write;    /* mapped-DSM faults that asked the board */
};

/*
 * FETCH: have the board bring DSM pages first .. first + pages - 1 here (op: 1 READ,
 * 2 WRITE), up to 32 requests in flight, each let go as it is answered, and nothing
 * copied to the host: the board-to-board page transfer alone, for timing it. EBUSY
 * if one of the pages is mapped here (held for a mapping) or being fetched.
 */
struct puma2_fetch {
    __u32 first;
    __u32 pages;
    __u32 op;
    __u32 reserved;         /* 0 */
};

#define PUMA2_IOC_MAGIC     'P'
#define PUMA2_IOC_INFO      _IOR(PUMA2_IOC_MAGIC, 1, struct puma2_info)
#define PUMA2_IOC_STATS     _IOR(PUMA2_IOC_MAGIC, 2, struct puma2_stats)
#define PUMA2_IOC_FETCH     _IOW(PUMA2_IOC_MAGIC, 3, struct puma2_fetch)

#endif /* PUMA2_UAPI_H */
