/*
 * CompactPCI backplane transactions: what one node's bridge sends another through the
 * fabric (the payload of RL_MSG_FRAME, protocol RL_PROTO_CPCI in retrolink/wire.h),
 * each one transaction on the shared bus. Used by the QEMU device (qemu/cpci/) and read
 * by the Python side (retrolink.boards.cpci).
 *
 * A frame is the 16-byte header below, then 'len' data bytes (CPCI_T_WRITE,
 * CPCI_T_READ_DONE). The header stands for the transaction's address phase and
 * command: the fabric's bus (the `cpci_bus` topology) charges data phases for the
 * bytes after it only (its header_bytes parameter). Hosts are little-endian.
 *
 * Credits: the backplane sends the bridge a notice (a DELIVER from the node itself, no
 * payload: retrolink/wire.h) for every frame it hands the backplane, in the order they
 * were sent, at the end of the frame's last data phase on the backplane (no earlier than
 * the fabric's lookahead after its ready time): from then on the frame no longer holds
 * its entries of the bridge's posted-write buffer. A notice only ever holds the bridge
 * back (a retried store is no sooner than its first attempt, which the node's promise
 * covers), so the fabric sets no arrival floor by it (topology_ops.notices_hold): a node
 * waiting in a load with its own notices to come is not held by them. A CPCI_T_WRITE holds one entry of the
 * bus's width a data phase, a CPCI_T_DOORBELL one; a READ or READ_DONE holds none. The
 * buffer (the board's posted-write-bytes, which Python's retrolink.boards.cpci checks
 * against these as QEMU does) holds at least one 8-byte access, at most
 * CPCI_PW_MAX_BYTES and CPCI_PW_MAX_ENTRIES entries.
 */
#ifndef RETROLINK_PROTO_CPCI_H
#define RETROLINK_PROTO_CPCI_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#define CPCI_WIRE_HDR_SIZE      16
#define CPCI_PW_MIN_BYTES       8       /* the posted-write buffer: one 8-byte access */
#define CPCI_PW_MAX_BYTES       1024
#define CPCI_PW_MAX_ENTRIES     256     /* posted-write bytes / the PCI's width, at most */

enum cpci_frame_type {
    CPCI_T_WRITE = 1,       /* a posted store of 'len' bytes at 'offset' of the export */
    CPCI_T_DOORBELL = 2,    /* ring doorbell 'offset' (0 .. CPCI_DB_PER_NODE-1) */
    CPCI_T_READ = 3,        /* a load of 'len' bytes at 'offset'; answered by READ_DONE */
    CPCI_T_READ_DONE = 4,   /* the load 'tag''s data ('len' bytes), or CPCI_FF_ABORT */
};

#define CPCI_FF_ABORT           (1u << 0)   /* READ_DONE: refused (no data follows) */

struct cpci_wire_hdr {
    uint8_t type;       /* enum cpci_frame_type */
    uint8_t flags;      /* CPCI_FF_* */
    uint16_t len;       /* data bytes: 1 .. CPCI_MAX_ACCESS (WRITE, READ, READ_DONE) */
    uint32_t offset;    /* byte offset in the target's exported region; the doorbell bit */
    uint32_t tag;       /* READ / READ_DONE: the load's number at its initiator */
    uint16_t src_node;  /* the initiator */
    uint16_t rsvd;
};
_Static_assert(sizeof(struct cpci_wire_hdr) == CPCI_WIRE_HDR_SIZE, "CPCI frame header layout");

#endif /* RETROLINK_PROTO_CPCI_H */
