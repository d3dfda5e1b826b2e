/*
 * VIA NIC frames: what one NIC sends another through the fabric (the payload of
 * RL_MSG_FRAME, protocol RL_PROTO_VIA in retrolink/wire.h). Used by the QEMU device
 * (qemu/via/) and read by the Python side (retrolink.boards.via).
 *
 * A frame is the 32-byte header below, then up to VIA_FRAME_PAYLOAD bytes of a
 * message (VIA_F_DATA, VIA_F_DGRAM) or VIA_CM_WORDS words (VIA_F_CM). The link's own
 * framing (start, CRC, end, idles) is not carried: the fabric counts it
 * (overhead_bytes, docs/boards/via.md). Hosts are little-endian.
 */
#ifndef RETROLINK_PROTO_VIA_H
#define RETROLINK_PROTO_VIA_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#define VIA_WIRE_HDR_SIZE       32

enum via_frame_type {
    VIA_F_DATA = 1,     /* a frame of a message on a connected VI */
    VIA_F_ACK = 2,      /* the message 'seq' of src_vi -> dst_vi is in a receive
                           descriptor; 'status' is the receive's VIP_STATUS_* (DONE or an
                           error, which breaks the connection) */
    VIA_F_DGRAM = 3,    /* a frame of a datagram (VIA_VI_DATAGRAM): no ACK */
    VIA_F_CM = 4,       /* a connection-manager message: payload VIA_CM_WORDS words */
    VIA_F_BREAK = 5,    /* the sender's VI src_vi broke: dst_vi breaks too */
};

#define VIA_FF_FIRST            (1u << 0)   /* the message's first frame */
#define VIA_FF_LAST             (1u << 1)   /* its last frame */
#define VIA_FF_IMMEDIATE        (1u << 2)   /* 'immediate' is valid */

struct via_wire_hdr {
    uint8_t type;       /* enum via_frame_type */
    uint8_t flags;      /* VIA_FF_* */
    uint16_t src_vi;    /* the sending VI */
    uint16_t dst_vi;    /* the receiving VI */
    uint16_t src_node;  /* the sending node */
    uint32_t seq;       /* the message's number on its VI (DATA, ACK) */
    uint32_t offset;    /* this frame's payload offset in the message */
    uint32_t msg_len;   /* the message's length */
    uint32_t immediate; /* the message's ImmediateData */
    uint32_t status;    /* ACK: the receive's VIP_STATUS_*; else 0 */
    uint32_t rsvd;
};
_Static_assert(sizeof(struct via_wire_hdr) == VIA_WIRE_HDR_SIZE, "VIA frame header layout");

#endif /* RETROLINK_PROTO_VIA_H */
