/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NORMA IPC/DE: the protocol messages one node's transport sends another's, each one
 * Cenju-3 message (one packet of at most C3_MSG_MAX = 508 bytes) into the receiver's
 * per-peer protocol receive slots. KMSGs too long for a send request and OOL pages go
 * by remote DMA instead, to addresses the receiver gave in a permit.
 * docs/boards/norma.md describes the protocol step by step.
 *
 * Every message starts with struct de_hdr. 'xid' names the send on the sender's node
 * (its transfer id there), 'rxid' the receive on the receiver's (0 until the permit).
 * Accept notices may ride at the end of any message (norma_piggyback_accept): 'naccept'
 * struct de_accept after the body, whose size is fixed by 'type' (the send request's
 * includes its KMSG: 'kmsg_size' bytes when short).
 * Hosts are little-endian, and so are these.
 */
#ifndef DE_PROTO_H
#define DE_PROTO_H

#include <linux/types.h>
#include "norma.h"

#define DE_MSG_MAX		508	/* C3_MSG_MAX */

#define DE_SEND_REQ		1	/* (A) KMSG size and OOL pages [+ the KMSG if short] */
#define DE_SEND_PERMIT		2	/* (B) the KMSG buffer and the first <= 8 page buffers */
#define DE_PAGE_DONE		3	/* (E) pages [first, first + n) are in */
#define DE_PAGE_PERMIT		4	/* (F) the next <= 8 page buffers */
#define DE_RECV_DONE		5	/* (I) receive complete (or the port is dead) */
#define DE_ACCEPTED		6	/* message accepted: accept notices only */
#define DE_LOOKUP		7	/* a name to look up in the receiver's name service */
#define DE_LOOKUP_REPLY		8
#define DE_CANCEL		9	/* the sender gave up (its task died): forget xid */
#define DE_TYPE_MAX		9

struct de_hdr {
	u8 type;		/* DE_* */
	u8 naccept;		/* struct de_accept after the body */
	u16 rsvd;
	u32 xid;		/* the sender's transfer (or lookup) id */
	u32 rxid;		/* the receiver's transfer id */
	u32 rsvd2;
} __packed;

/* (A): the KMSG follows if kmsg_size <= NORMA_SHORT_MAX; 36 bytes, so that after the
 * slot's 4-byte header word the KMSG is 8-aligned in the slot buffer, where the
 * receiver reads it */
struct de_send_req {
	struct de_hdr h;
	struct norma_uid dest;	/* the port, for the receiver's check before it allocates */
	u32 kmsg_size;
	u32 ool_pages;
	u32 rsvd;
} __packed;

/* (B) and (F): physical addresses of page buffers first .. first + npages - 1 */
struct de_permit {
	struct de_hdr h;
	u64 kmsg_addr;		/* (B) of a long KMSG: its buffer; else 0 */
	u32 first;
	u32 npages;		/* 0 .. NORMA_PERMIT_PAGES */
	u64 page[NORMA_PERMIT_PAGES];
} __packed;

/* (E) */
struct de_page_done {
	struct de_hdr h;
	u32 first;
	u32 npages;
} __packed;

/* (I) and DE_LOOKUP_REPLY */
struct de_status {
	struct de_hdr h;
	s32 status;		/* 0, -ENOENT */
	u32 rsvd;
	struct norma_uid uid;	/* LOOKUP_REPLY: the port found */
} __packed;

struct de_lookup {
	struct de_hdr h;
	char name[NORMA_NAME_MAX];
} __packed;

/* one "message accepted": the message 'seqno' this node's receiver sent to 'uid' */
struct de_accept {
	struct norma_uid uid;
	u32 seqno;
	u32 dead;		/* 1: the port died with the message queued */
} __packed;

static_assert(sizeof(struct de_hdr) == 16);
static_assert((4 + sizeof(struct de_send_req)) % 8 == 0);
static_assert(sizeof(struct de_send_req) + NORMA_SHORT_MAX <= DE_MSG_MAX);
static_assert(sizeof(struct de_permit) <= DE_MSG_MAX);
static_assert(sizeof(struct de_accept) == 16);

/* accept notices that fit after a body of 'body' bytes */
static inline u32 de_accept_room(u32 body)
{
	return (DE_MSG_MAX - body) / sizeof(struct de_accept);
}

#endif /* DE_PROTO_H */
