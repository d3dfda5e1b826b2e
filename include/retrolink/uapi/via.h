/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The VIA kernel agent (guest/kernel/via/): the user-space interface of /dev/via0,
 * which VIPL (guest/lib/vipl/) is written on. docs/boards/via.md documents it.
 *
 * Each open of /dev/via0 is a NIC handle (VipOpenNic): everything created through it
 * (protection tags, registered memory, CQs, VIs, pending connections) is its own, and
 * any other file's handle or number names nothing (ENOENT). Closing it (the process
 * exits or is killed) destroys all of it, in the order the NIC needs: VIs closed first
 * (the NIC stops touching their memory), then CQs, regions, pages unpinned, tags freed.
 *
 * mmap (MAP_SHARED, never PROT_EXEC):
 *  - VIA_MMAP_DOORBELL(vi), one page: that VI's doorbell page (uncached); only a VI of
 *    this file;
 *  - VIA_MMAP_CQ(cq), the CQ's ring (VIA_CQ_RING_BYTES(entries) rounded up to pages):
 *    read and write (the consumer clears VIA_CQE_VALID); only a CQ of this file.
 * A VI or CQ that is still mapped cannot be destroyed (EBUSY).
 *
 * Waits (VIA_IOC_WAIT) sleep interruptibly: a signal ends them with EINTR.
 *
 * Errors: EINVAL (a bad argument: named in the kernel log at debug level), ENOENT (a
 * tag, handle, VI, CQ or connection this file does not have), EBUSY (destroying what is
 * in use: a tag a VI or region holds, a CQ a VI uses, anything mapped; a VI not idle),
 * ENOSPC (the NIC's VIs, CQs, regions, tags or TPT entries are all taken), ENOMEM,
 * EFAULT, ETIMEDOUT (a wait or a connection's timeout passed), ECONNREFUSED (the peer
 * rejected the request, or nobody waited there for its discriminator in time:
 * the peer's agent answers at once when no VipConnectWait matches),
 * EHOSTUNREACH (no such node, or it is down), ENODEV (the NIC was removed: every call
 * but close).
 */
#ifndef VIA_UAPI_H
#define VIA_UAPI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define VIA_MMAP_DOORBELL(vi)   ((__u64)(vi) << 12)
#define VIA_MMAP_CQ(cq)         ((1ull << 32) + ((__u64)(cq) << 24))
#define VIA_CQ_RING_BYTES(n)    ((__u64)(n) * 8)
#define VIA_DISCRIMINATOR_MAX   16      /* bytes */

struct via_nic_info {
	__u32 node;             /* this NIC's node: VIA addresses are (node, discriminator) */
	__u32 nodes;
	__u32 max_vis;          /* VIA_MAX_VIS, less the agent's own */
	__u32 max_cqs;
	__u32 max_regions;
	__u32 max_segs;         /* VIA_MAX_SEGS */
	__u32 max_msg;          /* VIA_MAX_MSG: the largest transfer */
	__u32 max_register;     /* bytes one registration may pin */
	__u32 wq_depth;         /* VIA_WQ_DEPTH */
	__u32 cq_max_entries;   /* VIA_CQ_MAX_ENTRIES */
	__u8 mac[6];            /* the LAN emulation's address */
	__u8 rsvd[2];
};

struct via_ptag {
	__u32 ptag;             /* out (CREATE) / in (DESTROY): 1 .. 255 */
};

struct via_register {
	__u64 va;               /* in: first byte */
	__u64 len;              /* in: bytes, > 0 */
	__u32 ptag;             /* in: a tag of this file */
	__u32 handle;           /* out: the memory handle */
};

struct via_cq_create {
	__u32 entries;          /* in: 1 .. VIA_CQ_MAX_ENTRIES, rounded up to a power of 2 */
	__u32 cq;               /* out; mmap its ring at VIA_MMAP_CQ(cq) */
	__u32 ring_entries;     /* out: the ring's entries (the power of 2) */
	__u32 rsvd;
};

#define VIA_NO_CQ_HANDLE        0xffffffffu

struct via_vi_create {
	__u32 ptag;             /* in: a tag of this file */
	__u32 send_cq;          /* in: a CQ of this file, or VIA_NO_CQ_HANDLE */
	__u32 recv_cq;          /* in: the same */
	__u32 vi;               /* out; mmap its doorbells at VIA_MMAP_DOORBELL(vi) */
};

struct via_connect {
	__u32 vi;               /* REQUEST, ACCEPT: a VI of this file, idle */
	__u32 node;             /* REQUEST: the peer's node; WAIT: out, the requester's */
	__u32 timeout_ms;       /* REQUEST, WAIT: 0xffffffff waits for ever */
	__u32 conn;             /* WAIT: out, the pending request; ACCEPT, REJECT: in */
	__u8 discriminator[VIA_DISCRIMINATOR_MAX];  /* REQUEST: the peer's; WAIT: ours */
	__u32 disc_len;         /* its bytes, 0 .. VIA_DISCRIMINATOR_MAX */
	__u32 remote_vi;        /* out (REQUEST, WAIT): the VI at the other end */
};

#define VIA_WAIT_SEND           0       /* kind: a VI's send queue */
#define VIA_WAIT_RECV           1       /* a VI's receive queue */
#define VIA_WAIT_CQ             2       /* a CQ */

struct via_wait {
	__u32 kind;             /* VIA_WAIT_* */
	__u32 id;               /* the VI or CQ */
	__u32 seen;             /* completions the caller has seen: wait until the count
	                           (VIA_DB_SQ_DONE/RQ_DONE, VIA_REG_CQ_COUNT) differs */
	__u32 timeout_ms;       /* 0xffffffff: for ever */
};

#define VIA_IOC_MAGIC 'V'
#define VIA_IOC_QUERY           _IOR(VIA_IOC_MAGIC, 1, struct via_nic_info)
#define VIA_IOC_CREATE_PTAG     _IOR(VIA_IOC_MAGIC, 2, struct via_ptag)
#define VIA_IOC_DESTROY_PTAG    _IOW(VIA_IOC_MAGIC, 3, struct via_ptag)
#define VIA_IOC_REGISTER        _IOWR(VIA_IOC_MAGIC, 4, struct via_register)
#define VIA_IOC_DEREGISTER      _IOW(VIA_IOC_MAGIC, 5, __u32)
#define VIA_IOC_CREATE_CQ       _IOWR(VIA_IOC_MAGIC, 6, struct via_cq_create)
#define VIA_IOC_DESTROY_CQ      _IOW(VIA_IOC_MAGIC, 7, __u32)
#define VIA_IOC_CREATE_VI       _IOWR(VIA_IOC_MAGIC, 8, struct via_vi_create)
#define VIA_IOC_DESTROY_VI      _IOW(VIA_IOC_MAGIC, 9, __u32)
#define VIA_IOC_CONNECT_WAIT    _IOWR(VIA_IOC_MAGIC, 10, struct via_connect)
#define VIA_IOC_CONNECT_ACCEPT  _IOWR(VIA_IOC_MAGIC, 11, struct via_connect)
#define VIA_IOC_CONNECT_REJECT  _IOW(VIA_IOC_MAGIC, 12, struct via_connect)
#define VIA_IOC_CONNECT_REQUEST _IOWR(VIA_IOC_MAGIC, 13, struct via_connect)
#define VIA_IOC_DISCONNECT      _IOW(VIA_IOC_MAGIC, 14, __u32)
#define VIA_IOC_WAIT            _IOW(VIA_IOC_MAGIC, 15, struct via_wait)

#endif /* VIA_UAPI_H */
