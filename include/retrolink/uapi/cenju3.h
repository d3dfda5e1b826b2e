/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Cenju-3 interface driver: /dev/cenju3, the root-only test interface (mode 0600),
 * shared by the driver (guest/kernel/cenju3/c3_user.c) and its test program
 * (guest/bin/cenju3/c3_nic_test.c). docs/boards/cenju3-driver.md documents it.
 *
 * The opener becomes the driver's one client (a second open, or an open while norma.ko
 * holds the interface: EBUSY). It sends raw messages and remote DMA between nodes:
 *  - C3_IOC_SEND: one message of 1 .. C3_MSG_MAX bytes to a node (not this one);
 *    returns once it is queued (C3_SENDF_WAIT: once the interface sent it);
 *  - C3_IOC_RECV: the next message from any node, in arrival order, waiting up to
 *    timeout_ms; messages wait in the driver up to the queue limit (C3_IOC_CONFIG),
 *    beyond which the interface is held back (it stalls; nothing is lost);
 *  - the file's buffer: C3_BUF_SIZE bytes of physically contiguous memory, at the
 *    physical address C3_IOC_INFO gives; pread/pwrite at an offset read and write it
 *    (pread invalidates first: what remote DMA wrote there is seen);
 *  - C3_IOC_RDMA: remote DMA of len bytes from the buffer at 'offset' to the physical
 *    address 'raddr' of node 'dest' (ANY memory there: this is a test interface, for
 *    root only), optionally notifying its client (C3_RDMAF_NOTIFY with 'tag'); returns
 *    once the interface sent it;
 *  - C3_IOC_WAIT_RDMA: the next notification of a remote DMA into this node.
 * Errors: EINVAL (a bad argument), ETIMEDOUT (RECV, WAIT_RDMA), EIO (the interface
 * refused the request), ENODEV (no interface, or it was removed), EBUSY (see above),
 * EFAULT, ENOTTY, EINTR.
 */
#ifndef CENJU3_UAPI_H
#define CENJU3_UAPI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define C3_UAPI_MSG_MAX     508             /* C3_MSG_MAX of regs/cenju3-regs.h */
#define C3_UAPI_RDMA_MAX    (128u << 10)    /* C3_REQ_MAX */
#define C3_BUF_SIZE         (256u << 10)    /* the file's buffer */
#define C3_QUEUE_MAX        4096            /* the largest queue limit */

struct c3_info {
	__u32 node;
	__u32 nodes;
	__u32 slots;         /* receive slots per peer */
	__u32 msg_max;       /* C3_UAPI_MSG_MAX */
	__u32 rdma_max;      /* C3_UAPI_RDMA_MAX */
	__u32 buf_size;      /* C3_BUF_SIZE */
	__u64 buf_phys;      /* the file's buffer: its physical address */
};

#define C3_SENDF_WAIT       (1u << 0)

struct c3_msg {
	__u32 node;          /* SEND: destination; RECV: the sender */
	__u32 len;           /* bytes of data */
	__u32 flags;         /* SEND: C3_SENDF_*; RECV: 0 */
	__u32 timeout_ms;    /* RECV: how long to wait (0: do not) */
	__u64 t_ns;          /* RECV: the interface's virtual time of its arrival */
	__u8 data[C3_UAPI_MSG_MAX];
	__u32 rsvd;
};

#define C3_RDMAF_NOTIFY     (1u << 0)

struct c3_rdma {
	__u32 dest;
	__u32 len;           /* 1 .. C3_UAPI_RDMA_MAX */
	__u32 offset;        /* in the file's buffer: offset + len <= C3_BUF_SIZE */
	__u32 flags;         /* C3_RDMAF_* */
	__u64 raddr;         /* physical address at dest */
	__u32 tag;           /* with C3_RDMAF_NOTIFY */
	__u32 rsvd;
};

struct c3_rdma_note {
	__u32 timeout_ms;    /* in */
	__u32 src;           /* out: the sending node */
	__u32 tag;
	__u32 len;
};

struct c3_config {
	__u32 queue_max;     /* messages RECV may have waiting: 1 .. C3_QUEUE_MAX (default 256) */
	__u32 rsvd;
};

#define C3_IOC_MAGIC 'C'
#define C3_IOC_INFO       _IOR(C3_IOC_MAGIC, 1, struct c3_info)
#define C3_IOC_SEND       _IOW(C3_IOC_MAGIC, 2, struct c3_msg)
#define C3_IOC_RECV       _IOWR(C3_IOC_MAGIC, 3, struct c3_msg)
#define C3_IOC_RDMA       _IOW(C3_IOC_MAGIC, 4, struct c3_rdma)
#define C3_IOC_WAIT_RDMA  _IOWR(C3_IOC_MAGIC, 5, struct c3_rdma_note)
#define C3_IOC_CONFIG     _IOW(C3_IOC_MAGIC, 6, struct c3_config)
#define C3_IOC_NOW        _IOR(C3_IOC_MAGIC, 7, __u64)

#endif /* CENJU3_UAPI_H */
