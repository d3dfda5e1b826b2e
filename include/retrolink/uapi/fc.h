/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * PUMA-III Fibre Channel adapter driver: the user-space interface of /dev/fcN, shared
 * by the driver (guest/kernel/fc/) and the libraries (guest/lib/fc/).
 * docs/boards/fc.md documents it.
 *
 * /dev/fcN gives one process at a time (a second open: EBUSY) the adapter's user
 * channel (FC_CH_USER of regs/fc-regs.h):
 *  - mmap at offset FC_MMAP_REGS, one page: the channel's register page, uncached;
 *  - mmap at offset FC_MMAP_DVMA + A: the DMA memory at DVMA address A of the
 *    channel, which the driver allocated (the receive ring at DVMA 0, buffers from
 *    FC_IOC_ALLOC), exactly a whole allocation; anything else: EINVAL;
 *  - mappings are MAP_SHARED (else EINVAL) and never executable (PROT_EXEC: EPERM);
 *  - the adapter can read and write nothing but that memory: the driver owns the
 *    channel's DVMA table and ring.
 * The channel is the opening process's: any of its threads may use it; another process
 * holding the file (a forked child, a passed descriptor) gets EACCES from every ioctl
 * and mmap, and a forked child inherits none of the mappings (VM_DONTCOPY).
 * Closing the file (the last mapping gone) disables the channel, and the adapter stops
 * touching its memory before it is freed: the last close of the file, in whichever
 * process holds it last (until then a new open is EBUSY).
 *
 * Errors: EINVAL (bad argument, named in the kernel log at debug level; FREE of the
 * ring at DVMA 0), ENOMEM (no DMA memory or DVMA space; one buffer is at most 4 MiB,
 * the guest kernel's largest contiguous block), ENOENT (FREE of an address that
 * FC_IOC_ALLOC did not return),
 * EBUSY (FREE of a buffer still mapped; a second open), EACCES (an ioctl or mmap
 * from a process other than the one that opened the file), ENODEV (the adapter was
 * removed; a mapped page then gives SIGBUS), EIO (the adapter refused the
 * configuration, its FC_REG_ERROR is in the kernel log; or a FREE whose buffer a DMA
 * send did not finish reading in time: it is then freed at close).
 */
#ifndef FC_UAPI_H
#define FC_UAPI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define FC_MMAP_REGS        0ull
/* + DVMA address; below 2^31, which a 32-bit process's mmap carries (klibc's casts the
 * offset to 32 bits), above any DVMA address (FC_DVMA_MAX_PAGES pages: 16 MiB) */
#define FC_MMAP_DVMA        (1ull << 28)

struct fc_info {
	__u32 node;          /* this port's id */
	__u32 nodes;         /* port ids are 0 .. nodes-1 */
	__u32 peers_up;      /* bit n: port n reachable (n < 32) */
	__u32 rx_slots;      /* slots in the receive ring, at DVMA 0 */
	__u32 rx_slot_size;  /* FC_RX_SLOT_SIZE */
	__u32 pio_max;       /* FC_PIO_MAX */
	__u32 max_payload;   /* FC_MAX_PAYLOAD: the most a frame carries */
	__u32 dvma_pages;    /* the channel's DVMA space, in FC_DVMA_PAGE pages */
	__u32 dvma_free;     /* pages not yet allocated */
	__u32 rsvd;
};

struct fc_alloc {
	__u64 size;          /* in: bytes (rounded up to whole pages), 1 .. FC_MAX_SEND */
	__u64 dvma;          /* out: its DVMA address; mmap it at FC_MMAP_DVMA + dvma */
};

struct fc_free {
	__u64 dvma;          /* what FC_IOC_ALLOC returned */
};

#define FC_IOC_MAGIC 'F'
#define FC_IOC_INFO   _IOR(FC_IOC_MAGIC, 1, struct fc_info)
#define FC_IOC_ALLOC  _IOWR(FC_IOC_MAGIC, 2, struct fc_alloc)
#define FC_IOC_FREE   _IOW(FC_IOC_MAGIC, 3, struct fc_free)

#endif /* FC_UAPI_H */
