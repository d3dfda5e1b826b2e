/*
 * PUMA-II board-to-board frames on the token ring: the payload of RL_MSG_FRAME,
 * protocol RL_PROTO_PUMA2 (retrolink/wire.h). Used by the QEMU device
 * (qemu/puma2/) and read by the Python side (retrolink.boards.puma2).
 *
 * The consistency protocol is IVY's write-invalidate with a fixed distributed manager
 * (Li and Hudak, "Memory coherence in shared virtual memory systems", 1989): the
 * model's choice, the paper names none (docs/boards/puma2.md, "Consistency").
 * Page P's manager is board P mod N; it knows P's owner and serialises P's
 * transactions. The owner holds the page writable, or readable with a copy set.
 *
 *   REQ     requester -> manager: wants P for op (READ or WRITE)
 *   FWD     manager -> owner: send P to `from` for op
 *   PAGE    owner -> requester: P's bytes (READ: the owner keeps a read copy and
 *           adds `from` to its copy set; WRITE: ownership moves, `copyset` is the
 *           copies the new owner must invalidate; no bytes when `from` has a copy)
 *   INV     new owner -> each copy holder: drop your copy of P
 *   INV_ACK copy holder -> new owner: dropped
 *   CONFIRM requester -> manager: P's transaction is over (owner = from on a WRITE)
 *
 * A frame is the 16-byte header, then PUMA2_PAGE bytes for a PAGE with data. The
 * ring's own framing (start and end delimiters, addresses, FCS) is not carried: the
 * fabric's token ring counts it (overhead_bytes). Hosts are little-endian.
 */
#ifndef RETROLINK_PROTO_PUMA2_H
#define RETROLINK_PROTO_PUMA2_H

#include <stdint.h>

#define PUMA2_WIRE_HDR_SIZE     16

enum puma2_msg {
    PUMA2_MSG_REQ = 1,
    PUMA2_MSG_FWD = 2,
    PUMA2_MSG_PAGE = 3,
    PUMA2_MSG_INV = 4,
    PUMA2_MSG_INV_ACK = 5,
    PUMA2_MSG_CONFIRM = 6,
};

#define PUMA2_MSG_F_DATA        (1u << 0)   /* PAGE: PUMA2_PAGE bytes follow */

struct puma2_wire_hdr {
    uint8_t type;       /* enum puma2_msg */
    uint8_t op;         /* PUMA2_OP_READ or PUMA2_OP_WRITE (REQ, FWD, PAGE, CONFIRM) */
    uint16_t flags;     /* PUMA2_MSG_F_* */
    uint32_t page;      /* the page number in the shared space */
    uint32_t from;      /* the transaction's requester */
    uint32_t copyset;   /* PAGE of a WRITE: the copies to invalidate (bit n: board n) */
};
_Static_assert(sizeof(struct puma2_wire_hdr) == PUMA2_WIRE_HDR_SIZE,
               "PUMA-II frame header layout");

#endif /* RETROLINK_PROTO_PUMA2_H */
