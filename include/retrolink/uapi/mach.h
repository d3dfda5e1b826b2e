/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Mach-style IPC over NORMA IPC/DE: the user interface of /dev/mach, shared by norma.ko
 * (guest/kernel/norma/ipc_*.c) and libmach (guest/lib/mach/). docs/boards/norma.md
 * describes the semantics, docs/boards/libmach.md the library.
 *
 * One open file of /dev/mach is one Mach task: its IPC space (port names and the rights
 * they denote). Everything mirrors OSF Mach 3 (mach/message.h, mach/port.h,
 * mach/kern_return.h, mach/notify.h, servers/netname_defs.h) with the real numeric
 * values, except where marked "retrolink:".
 *
 * Calls are ioctls whose structure carries Mach's return code ('ret': a
 * mach_msg_return_t or kern_return_t); the ioctl itself fails (errno) only when the
 * structure cannot be read or written (EFAULT), the command is unknown (ENOTTY), or the
 * file's task is gone (EBADF never happens: the file holds it).
 *
 * Limits (every user path is bounded): a message of at most MACH_MSG_SIZE_MAX bytes
 * inline (header, body, descriptors, data) with at most MACH_MSG_DESC_MAX descriptors
 * and MACH_MSG_OOL_MAX bytes of OOL data in all; MACH_PORT_NAMES_MAX names per task;
 * MACH_PORT_UREFS_MAX user references per right.
 */
#ifndef RETROLINK_UAPI_MACH_H
#define RETROLINK_UAPI_MACH_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* ---- ports and rights (mach/port.h) ------------------------------------------ */
typedef __u32 mach_port_name_t;
typedef __u32 mach_port_t;              /* in user space a port is known by its name */
typedef __u32 mach_port_right_t;
typedef __u32 mach_port_type_t;
typedef __u32 mach_port_urefs_t;
typedef __s32 mach_port_delta_t;
typedef __u32 mach_port_seqno_t;
typedef __u32 mach_port_msgcount_t;
typedef __s32 kern_return_t;

#define MACH_PORT_NULL              0u
#define MACH_PORT_DEAD              (~0u)
#define MACH_PORT_VALID(n)          ((n) != MACH_PORT_NULL && (n) != MACH_PORT_DEAD)

#define MACH_PORT_RIGHT_SEND        0
#define MACH_PORT_RIGHT_RECEIVE     1
#define MACH_PORT_RIGHT_SEND_ONCE   2
#define MACH_PORT_RIGHT_PORT_SET    3   /* retrolink: no port sets (KERN_INVALID_VALUE) */
#define MACH_PORT_RIGHT_DEAD_NAME   4
#define MACH_PORT_RIGHT_NUMBER      5

#define MACH_PORT_TYPE(right)       (1u << ((right) + 16))
#define MACH_PORT_TYPE_NONE         0u
#define MACH_PORT_TYPE_SEND         MACH_PORT_TYPE(MACH_PORT_RIGHT_SEND)
#define MACH_PORT_TYPE_RECEIVE      MACH_PORT_TYPE(MACH_PORT_RIGHT_RECEIVE)
#define MACH_PORT_TYPE_SEND_ONCE    MACH_PORT_TYPE(MACH_PORT_RIGHT_SEND_ONCE)
#define MACH_PORT_TYPE_PORT_SET     MACH_PORT_TYPE(MACH_PORT_RIGHT_PORT_SET)
#define MACH_PORT_TYPE_DEAD_NAME    MACH_PORT_TYPE(MACH_PORT_RIGHT_DEAD_NAME)
#define MACH_PORT_TYPE_SEND_RECEIVE (MACH_PORT_TYPE_SEND | MACH_PORT_TYPE_RECEIVE)

#define MACH_PORT_UREFS_MAX         ((mach_port_urefs_t)0xffff)
#define MACH_PORT_QLIMIT_ZERO       0u
#define MACH_PORT_QLIMIT_MIN        0u
#define MACH_PORT_QLIMIT_DEFAULT    5u
#define MACH_PORT_QLIMIT_MAX        16u

/* retrolink: the limits of one task and one message */
#define MACH_PORT_NAMES_MAX         1024u       /* names in one task */
#define MACH_MSG_SIZE_MAX           16384u      /* a message's inline part, header included */
#define MACH_MSG_DESC_MAX           64u         /* descriptors in one message */
#define MACH_MSG_OOL_MAX            (4u << 20)  /* OOL bytes in one message */
#define MACH_MSG_OOL_PAGE           (16u << 10) /* OOL arrives in whole pages of this size */

/* ---- kern_return_t (mach/kern_return.h) ---------------------------------------- */
#define KERN_SUCCESS                0
#define KERN_INVALID_ADDRESS        1
#define KERN_PROTECTION_FAILURE     2
#define KERN_NO_SPACE               3
#define KERN_INVALID_ARGUMENT       4
#define KERN_FAILURE                5
#define KERN_RESOURCE_SHORTAGE      6
#define KERN_NOT_RECEIVER           7
#define KERN_NO_ACCESS              8
#define KERN_NAME_EXISTS            13
#define KERN_ABORTED                14
#define KERN_INVALID_NAME           15
#define KERN_INVALID_TASK           16
#define KERN_INVALID_RIGHT          17
#define KERN_INVALID_VALUE          18
#define KERN_UREFS_OVERFLOW         19
#define KERN_INVALID_CAPABILITY     20
#define KERN_RIGHT_EXISTS           21

/* ---- messages (mach/message.h) ----------------------------------------------- */
typedef __u32 mach_msg_bits_t;
typedef __u32 mach_msg_size_t;
typedef __s32 mach_msg_id_t;
typedef __u32 mach_msg_type_name_t;
typedef __u32 mach_msg_option_t;
typedef __u32 mach_msg_timeout_t;           /* milliseconds */
typedef kern_return_t mach_msg_return_t;

#define MACH_MSGH_BITS_ZERO         0x00000000u
#define MACH_MSGH_BITS_REMOTE_MASK  0x000000ffu
#define MACH_MSGH_BITS_LOCAL_MASK   0x0000ff00u
#define MACH_MSGH_BITS_COMPLEX      0x80000000u
#define MACH_MSGH_BITS_USED         (MACH_MSGH_BITS_REMOTE_MASK | MACH_MSGH_BITS_LOCAL_MASK | \
				     MACH_MSGH_BITS_COMPLEX)
#define MACH_MSGH_BITS(remote, local)   ((remote) | ((local) << 8))
#define MACH_MSGH_BITS_REMOTE(bits)     ((bits) & MACH_MSGH_BITS_REMOTE_MASK)
#define MACH_MSGH_BITS_LOCAL(bits)      (((bits) & MACH_MSGH_BITS_LOCAL_MASK) >> 8)

/*
 * The header. On send, msgh_remote_port names the destination (a send or send-once
 * right) and msgh_local_port the reply port (MACH_PORT_NULL or a right made or moved
 * by the local disposition); msgh_size and msgh_seqno are ignored (the send_size
 * argument gives the size). On receive, the kernel swaps them as Mach does:
 * msgh_remote_port is the reply right it gave this task, msgh_local_port the name of
 * the port received from, msgh_size the message's size, msgh_seqno the port's sequence
 * number of the message (0, 1, ... per port).
 */
typedef struct {
	mach_msg_bits_t msgh_bits;
	mach_msg_size_t msgh_size;
	mach_port_t msgh_remote_port;
	mach_port_t msgh_local_port;
	mach_port_seqno_t msgh_seqno;
	mach_msg_id_t msgh_id;
} mach_msg_header_t;

/* A complex message (MACH_MSGH_BITS_COMPLEX): the header, this body, then
 * msgh_descriptor_count descriptors, then inline data. */
typedef struct {
	__u32 msgh_descriptor_count;
} mach_msg_body_t;

/* dispositions: what a sender does with a right it names */
#define MACH_MSG_TYPE_MOVE_RECEIVE      16  /* must hold the receive right */
#define MACH_MSG_TYPE_MOVE_SEND         17  /* must hold send rights */
#define MACH_MSG_TYPE_MOVE_SEND_ONCE    18  /* must hold a send-once right */
#define MACH_MSG_TYPE_COPY_SEND         19  /* must hold send rights */
#define MACH_MSG_TYPE_MAKE_SEND         20  /* must hold the receive right */
#define MACH_MSG_TYPE_MAKE_SEND_ONCE    21  /* must hold the receive right */
/* what a receiver gets (also the wire form of a right in a KMSG, norma.h) */
#define MACH_MSG_TYPE_PORT_NAME         15
#define MACH_MSG_TYPE_PORT_RECEIVE      MACH_MSG_TYPE_MOVE_RECEIVE
#define MACH_MSG_TYPE_PORT_SEND         MACH_MSG_TYPE_MOVE_SEND
#define MACH_MSG_TYPE_PORT_SEND_ONCE    MACH_MSG_TYPE_MOVE_SEND_ONCE

/* descriptors (OSF MK / xnu); retrolink: every descriptor is 16 bytes (Mach's 64-bit
 * layout), the type always in byte 11, so a task walks them without knowing kinds. As in
 * Mach (#pragma pack(4)) they are 4-byte aligned: they follow the 4-byte body directly. */
#define MACH_MSG_PORT_DESCRIPTOR        0
#define MACH_MSG_OOL_DESCRIPTOR         1

#define MACH_MSG_PHYSICAL_COPY          0
#define MACH_MSG_VIRTUAL_COPY           1

typedef struct {
	mach_port_t name;       /* send: the name of the right; receive: its name here */
	__u32 pad1;
	__u16 pad2;
	__u8 disposition;       /* MACH_MSG_TYPE_* */
	__u8 type;              /* MACH_MSG_PORT_DESCRIPTOR */
	__u32 pad3;
} mach_msg_port_descriptor_t;

typedef struct {
	__u64 address;          /* send: the data; receive: where it was mapped (0 if size 0) */
	__u8 deallocate;        /* send: unmap [address, +size) from the sender once sent */
	__u8 copy;              /* MACH_MSG_PHYSICAL_COPY or MACH_MSG_VIRTUAL_COPY */
	__u8 pad1;
	__u8 type;              /* MACH_MSG_OOL_DESCRIPTOR */
	__u32 size;             /* bytes, 0 .. MACH_MSG_OOL_MAX */
} __attribute__((packed, aligned(4))) mach_msg_ool_descriptor_t;

typedef union {
	mach_msg_port_descriptor_t port;
	mach_msg_ool_descriptor_t out_of_line;
	struct {
		__u32 pad[2];
		__u8 pad3[3];
		__u8 type;
		__u32 pad4;
	} type;
} mach_msg_descriptor_t;

/* mach_msg options */
#define MACH_MSG_OPTION_NONE    0x00000000u
#define MACH_SEND_MSG           0x00000001u
#define MACH_RCV_MSG            0x00000002u
#define MACH_SEND_TIMEOUT       0x00000010u  /* give up after 'timeout' ms of a full queue */
#define MACH_SEND_NOTIFY        0x00000020u  /* full queue: queue anyway, notify when taken */
#define MACH_RCV_TIMEOUT        0x00000100u  /* give up after 'timeout' ms with no message */
#define MACH_RCV_LARGE          0x00000800u  /* too large: leave it queued, say its size */
#define MACH_MSG_OPTIONS_USED   (MACH_SEND_MSG | MACH_RCV_MSG | MACH_SEND_TIMEOUT | \
				 MACH_SEND_NOTIFY | MACH_RCV_TIMEOUT | MACH_RCV_LARGE)

#define MACH_MSG_TIMEOUT_NONE   0u

/* mach_msg_return_t: Mach 3's values */
#define MACH_MSG_SUCCESS                0x00000000
/* or'ed into MACH_RCV_BODY_ERROR: what a delivered message lost (those rights arrive as
 * MACH_PORT_NULL, that OOL data as address 0) */
#define MACH_MSG_MASK                   0x00003c00
#define MACH_MSG_IPC_SPACE              0x00002000  /* no room for another name */
#define MACH_MSG_VM_SPACE               0x00001000  /* no room to map OOL data */
#define MACH_SEND_INVALID_DATA          0x10000002  /* the message cannot be read */
#define MACH_SEND_INVALID_DEST          0x10000003  /* no send right there, or the port died */
#define MACH_SEND_TIMED_OUT             0x10000004  /* the queue stayed full */
#define MACH_SEND_WILL_NOTIFY           0x10000005  /* force-queued: a notification will come */
#define MACH_SEND_NOTIFY_IN_PROGRESS    0x10000006  /* this task already forced one there */
#define MACH_SEND_INTERRUPTED           0x10000007  /* a signal while blocked: nothing sent */
#define MACH_SEND_MSG_TOO_SMALL         0x10000008  /* send_size: below a header, or not x4 */
#define MACH_SEND_INVALID_REPLY         0x10000009  /* bad reply port or local disposition */
#define MACH_SEND_INVALID_RIGHT         0x1000000a  /* a bad right in the body (or a receive
						       right sent to another node) */
#define MACH_SEND_INVALID_NOTIFY        0x1000000b  /* bad notify port for MACH_SEND_NOTIFY */
#define MACH_SEND_INVALID_MEMORY        0x1000000c  /* OOL data that cannot be read */
#define MACH_SEND_NO_BUFFER             0x1000000d  /* no kernel memory for it */
#define MACH_SEND_TOO_LARGE             0x1000000e  /* above a limit (xnu's value; Mach 3 had
						       MACH_SEND_NO_NOTIFY there, unused here) */
#define MACH_SEND_INVALID_TYPE          0x1000000f  /* unknown descriptor type or option */
#define MACH_SEND_INVALID_HEADER        0x10000010  /* bits outside MACH_MSGH_BITS_USED */

#define MACH_RCV_INVALID_NAME           0x10004002  /* rcv_name holds no receive right */
#define MACH_RCV_TIMED_OUT              0x10004003
#define MACH_RCV_TOO_LARGE              0x10004004  /* rcv_size too small; msgh_size says */
#define MACH_RCV_INTERRUPTED            0x10004005  /* a signal while waiting */
#define MACH_RCV_INVALID_DATA           0x10004008  /* the buffer cannot be written */
#define MACH_RCV_PORT_DIED              0x10004009  /* the receive right went while waiting */
#define MACH_RCV_HEADER_ERROR           0x1000400b
#define MACH_RCV_BODY_ERROR             0x1000400c  /* no room to map OOL data or names */

/* ---- notifications (mach/notify.h) --------------------------------------------- */
#define MACH_NOTIFY_FIRST               0100
#define MACH_NOTIFY_MSG_ACCEPTED        (MACH_NOTIFY_FIRST + 002)
#define MACH_NOTIFY_DEAD_NAME           (MACH_NOTIFY_FIRST + 010)

/* Sent to the notify port of a MACH_SEND_NOTIFY send that returned
 * MACH_SEND_WILL_NOTIFY, once a task took that message (or it was destroyed). */
typedef struct {
	mach_msg_header_t not_header;   /* msgh_id MACH_NOTIFY_MSG_ACCEPTED */
	mach_port_name_t not_port;      /* the sender's name for the port it sent to */
} mach_msg_accepted_notification_t;

/* ---- the name service (servers/netname_defs.h) ------------------------------------ */
#define NETNAME_NAME_MAX                32  /* NUL included (NORMA_NAME_MAX) */
#define NETNAME_SUCCESS                 0
#define NETNAME_NOT_YOUR_PORT           2500
#define NETNAME_NOT_CHECKED_IN          2501
#define NETNAME_NO_SUCH_HOST            2502
#define NETNAME_INVALID_PORT            2504

/* ---- the ioctls ---------------------------------------------------------------- */
/* mach_msg(msg, option, send_size, rcv_size, rcv_name, timeout, notify) */
struct mach_msg_args {
	__u64 msg;              /* the message buffer */
	__u32 option;           /* MACH_SEND_MSG | MACH_RCV_MSG | ... */
	__u32 send_size;
	__u32 rcv_size;
	__u32 rcv_name;
	__u32 timeout;          /* ms, for MACH_SEND_TIMEOUT and MACH_RCV_TIMEOUT */
	__u32 notify;           /* MACH_SEND_NOTIFY: a name holding a send or receive right */
	__s32 ret;              /* out: mach_msg_return_t */
	__u32 rsvd;             /* 0 */
};

/* the port calls: 'ret' is a kern_return_t; which fields each reads is by its ioctl */
struct mach_port_args {
	__u32 name;             /* the name (ALLOCATE: out) */
	__u32 right;            /* MACH_PORT_RIGHT_* (ALLOCATE, MOD_REFS, GET_REFS) */
	__s32 delta;            /* MOD_REFS */
	__u32 poly;             /* INSERT_RIGHT: the name of the right in this task */
	__u32 poly_type;        /* INSERT_RIGHT: a MACH_MSG_TYPE_* disposition */
	__u32 value;            /* GET_REFS: refs (out); SET_QLIMIT: the limit;
				   TYPE: MACH_PORT_TYPE_* (out) */
	__s32 ret;              /* out */
	__u32 rsvd;             /* 0 */
};

/* mach_port_get_attributes(MACH_PORT_RECEIVE_STATUS) on a name with a receive right */
struct mach_port_status {
	__u32 name;             /* in */
	__u32 seqno;            /* the next message's sequence number */
	__u32 qlimit;
	__u32 msgcount;         /* messages queued */
	__u32 srights;          /* send rights anywhere on this node, in messages included */
	__u32 sorights;         /* send-once rights */
	__s32 ret;              /* out: KERN_SUCCESS, KERN_INVALID_NAME, KERN_INVALID_RIGHT */
	__u32 rsvd;
};

/* netname_check_in(name, port) on this node; netname_look_up(node, name) */
struct mach_netname_args {
	char name[NETNAME_NAME_MAX];    /* NUL-terminated, 1 .. 31 characters */
	__u32 node;             /* LOOK_UP: where to look (this node or another) */
	__u32 port;             /* CHECK_IN: a name holding a send right (a copy is kept);
				   LOOK_UP: out, a name holding a send right to it */
	__s32 ret;              /* out: NETNAME_* or a KERN_* */
	__u32 rsvd;
};

struct mach_info {
	__u32 node;             /* this node */
	__u32 nodes;            /* nodes 0 .. nodes-1 */
	__u32 names_max;        /* MACH_PORT_NAMES_MAX */
	__u32 msg_size_max;     /* MACH_MSG_SIZE_MAX */
	__u32 desc_max;         /* MACH_MSG_DESC_MAX */
	__u32 ool_max;          /* MACH_MSG_OOL_MAX */
	__u32 ool_page;         /* MACH_MSG_OOL_PAGE */
	__u32 rsvd;
};

/*
 * The benchmark's breakdown: virtual-time stamps (ns, the interface's clock; 0 where a
 * step did not happen, or with norma.ko's option stamps=0) of the last message this node
 * sent and of the last one it received, as the IPC layer saw them. The transport's own
 * steps are its business.
 */
struct mach_times {
	/* last send */
	__u64 send_begin_ns;    /* mach_msg entered */
	__u64 send_copied_ns;   /* copyin done: the KMSG is built */
	__u64 send_queued_ns;   /* queued on a local port, or handed to the transport */
	__u64 send_done_ns;     /* remote: the transport said receive complete */
	/* last receive */
	__u64 rcv_sent_ns;      /* the sender's send_begin_ns (carried in the KMSG) */
	__u64 rcv_arrived_ns;   /* remote: the transport had it all */
	__u64 rcv_queued_ns;    /* on its port's queue */
	__u64 rcv_taken_ns;     /* a receiver took it off the queue */
	__u64 rcv_done_ns;      /* copyout done: mach_msg about to return */
	__u32 send_remote;      /* 1: the last send went to another node */
	__u32 rcv_remote;       /* 1: the last receive came from another node */
};

#define MACH_IOC_MAGIC 'M'
#define MACH_IOC_MSG                _IOWR(MACH_IOC_MAGIC, 0x40, struct mach_msg_args)
#define MACH_IOC_PORT_ALLOCATE      _IOWR(MACH_IOC_MAGIC, 0x41, struct mach_port_args)
#define MACH_IOC_PORT_DEALLOCATE    _IOWR(MACH_IOC_MAGIC, 0x42, struct mach_port_args)
#define MACH_IOC_PORT_MOD_REFS      _IOWR(MACH_IOC_MAGIC, 0x43, struct mach_port_args)
#define MACH_IOC_PORT_INSERT_RIGHT  _IOWR(MACH_IOC_MAGIC, 0x44, struct mach_port_args)
#define MACH_IOC_PORT_GET_REFS      _IOWR(MACH_IOC_MAGIC, 0x45, struct mach_port_args)
#define MACH_IOC_PORT_TYPE          _IOWR(MACH_IOC_MAGIC, 0x46, struct mach_port_args)
#define MACH_IOC_PORT_SET_QLIMIT    _IOWR(MACH_IOC_MAGIC, 0x47, struct mach_port_args)
#define MACH_IOC_PORT_STATUS        _IOWR(MACH_IOC_MAGIC, 0x48, struct mach_port_status)
#define MACH_IOC_NETNAME_CHECK_IN   _IOWR(MACH_IOC_MAGIC, 0x49, struct mach_netname_args)
#define MACH_IOC_NETNAME_LOOK_UP    _IOWR(MACH_IOC_MAGIC, 0x4a, struct mach_netname_args)
#define MACH_IOC_NETNAME_CHECK_OUT  _IOWR(MACH_IOC_MAGIC, 0x4b, struct mach_netname_args)
#define MACH_IOC_INFO               _IOR(MACH_IOC_MAGIC, 0x4c, struct mach_info)
#define MACH_IOC_TIMES              _IOR(MACH_IOC_MAGIC, 0x4d, struct mach_times)

#endif /* RETROLINK_UAPI_MACH_H */
