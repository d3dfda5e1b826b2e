/*
 * SX board frames on the ring: what one SX board sends another through the
 * fabric (the payload of RL_MSG_FRAME, protocol RL_PROTO_SX in retrolink/wire.h).
 * Used by the QEMU device (qemu/sx/sx.c) and read by the Python side
 * (retrolink.boards.sx) so that the header size is written once.
 *
 * A frame is a 16-byte header, then the message. A confirmation is confirm-bytes
 * long, header included. Hosts are little-endian.
 */
#ifndef RETROLINK_PROTO_SX_H
#define RETROLINK_PROTO_SX_H

#include <stdint.h>

#define SX_WIRE_MSG             1   /* a message; len bytes follow the header */
#define SX_WIRE_CONFIRM         2   /* the receiver's confirmation of a message */
#define SX_WIRE_HDR_SIZE        16

struct sx_wire_hdr {
    uint8_t type;       /* SX_WIRE_* */
    uint8_t slot;       /* the sender's tx slot */
    uint16_t rsvd;
    uint32_t tag;       /* opaque, carried to the receiver */
    uint32_t len;       /* message bytes after the header */
    uint32_t gen;       /* the sender's slot generation, echoed by the confirmation,
                           so that a late one cannot complete a reused slot */
};
_Static_assert(sizeof(struct sx_wire_hdr) == SX_WIRE_HDR_SIZE, "SX frame header layout");

#endif /* RETROLINK_PROTO_SX_H */
