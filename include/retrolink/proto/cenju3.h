/*
 * Cenju-3 packets: what one network interface sends another through the fabric (the
 * payload of RL_MSG_FRAME, protocol RL_PROTO_CENJU3 in retrolink/wire.h), on a network
 * of the `min` topology (fabric/topo/min.c). Used by the QEMU device (qemu/cenju3/) and
 * read by the Python side (retrolink.boards.cenju3).
 *
 * A packet is the 24-byte header below, which stands for the Cenju-3 packet's routing
 * tag and header words, then 1 .. C3_PACKET_MAX bytes of data (regs/cenju3-regs.h).
 * The fabric's link counts the header and 'overhead_bytes' (docs/boards/cenju3.md).
 * Hosts are little-endian.
 */
#ifndef RETROLINK_PROTO_CENJU3_H
#define RETROLINK_PROTO_CENJU3_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#define C3_WIRE_HDR_SIZE        24

#define C3_PKT_MSG              1   /* message communication: into a receive slot */
#define C3_PKT_RDMA             2   /* remote DMA: to 'raddr' */

#define C3_PKTF_LAST            (1u << 0)   /* the last packet of its request */
#define C3_PKTF_NOTIFY          (1u << 1)   /* RDMA, last packet: post C3_EV_RDMA */

struct c3_wire_hdr {
    uint8_t kind;       /* C3_PKT_* */
    uint8_t flags;      /* C3_PKTF_* */
    uint16_t src;       /* sending node */
    uint16_t dest;      /* destination node */
    uint16_t len;       /* data bytes in this packet: 1 .. C3_PACKET_MAX */
    uint64_t raddr;     /* RDMA: the destination's physical address of this packet's data */
    uint32_t tag;       /* the request's tag */
    uint32_t req_len;   /* the request's length */
};
_Static_assert(sizeof(struct c3_wire_hdr) == C3_WIRE_HDR_SIZE, "Cenju-3 packet header layout");

#endif /* RETROLINK_PROTO_CENJU3_H */
