/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * SX message processor driver: the user-space interface of /dev/sxN, shared by
 * the driver and libsx (guest/lib/sx/). docs/boards/libsx.md documents it, and what
 * a caller may assume after each error ("What a caller may assume"), in short:
 *  - SEND: EFAULT, EINVAL, EMSGSIZE, ENOMEM, EAGAIN: nothing sent; EHOSTUNREACH:
 *    not confirmed (nothing sent if the destination was already down, else it
 *    may still be delivered); EINTR, ENODEV, EIO: may have been sent.
 *  - SEND_ASYNC: any error: nothing sent, no ticket, no slot held (the ticket
 *    is written back before the board is told).
 *  - WAIT: EFAULT, EINTR, EAGAIN: the ticket is unchanged, ask again (the status
 *    is written back before the send is reaped); ENOENT: not this file's
 *    ticket; ENODEV: the ticket is gone.
 *  - RECV: any error but ENODEV: no message taken, the next RECV gets it (a
 *    message leaves the queue once buffer and request are written).
 *  - ENODEV from every call (poll: POLLERR | POLLHUP; a mapped window: SIGBUS):
 *    the board was removed; the file stays valid until it is closed.
 */
#ifndef SX_UAPI_H
#define SX_UAPI_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* the longest message: the board's buffer size (SX_MAX_MSG of regs/sx-regs.h; the
 * driver includes both, so a difference is a redefinition error) */
#define SX_MAX_MSG 4096

struct sx_info {
	__u32 node;          /* this node's id */
	__u32 nodes;         /* node ids are 0 .. nodes-1 */
	__u32 peers_up;      /* bit n: node n reachable (n < 32) */
	__u32 tx_slots;      /* sends that can be in flight at once */
};

struct sx_send_req {
	__u32 dst;
	__u32 len;
	__u32 tag;
	__u32 flags;         /* 0 */
	__u64 buf;           /* user pointer to len bytes */
	__u64 ticket;        /* out (SX_IOC_SEND_ASYNC): handle for WAIT/TEST */
};

struct sx_wait_req {
	__u64 ticket;
	__u32 flags;         /* SX_WAIT_NONBLOCK: just test */
	__u32 status;        /* out: 0 = delivered and confirmed, else an errno */
};

struct sx_recv_req {
	__u64 buf;           /* user pointer */
	__u32 len;           /* in: buffer size; out: message length */
	__u32 flags;         /* SX_RECV_NONBLOCK */
	__u32 src;           /* out: sender's node id */
	__u32 tag;           /* out: sender's tag */
	__u64 rx_time_ns;    /* out: CLOCK_MONOTONIC when the board handed it over */
};

#define SX_WAIT_NONBLOCK 1u
#define SX_RECV_NONBLOCK 1u

#define SX_IOC_MAGIC 'x'
#define SX_IOC_INFO       _IOR(SX_IOC_MAGIC, 1, struct sx_info)
#define SX_IOC_SEND       _IOWR(SX_IOC_MAGIC, 2, struct sx_send_req)
#define SX_IOC_SEND_ASYNC _IOWR(SX_IOC_MAGIC, 3, struct sx_send_req)
#define SX_IOC_WAIT       _IOWR(SX_IOC_MAGIC, 4, struct sx_wait_req)
#define SX_IOC_RECV       _IOWR(SX_IOC_MAGIC, 5, struct sx_recv_req)

#endif /* SX_UAPI_H */
