/*
 * PUMA-III Fibre Channel frames: what one adapter sends another through the fabric
 * (the payload of RL_MSG_FRAME, protocol RL_PROTO_FC in retrolink/wire.h). Used by
 * the QEMU device (qemu/fc/fc.c) and read by the Python side (retrolink.boards.fc).
 *
 * A frame is the 24-byte header below, in the place of FC's frame header, then up
 * to FC_MAX_PAYLOAD bytes. SOF, CRC and EOF (12 bytes) and the idles between frames
 * are not carried: the fabric's link counts them (overhead_bytes, docs/boards/fc.md).
 * Hosts are little-endian.
 */
#ifndef RETROLINK_PROTO_FC_H
#define RETROLINK_PROTO_FC_H

/* the Linux driver reads FC_TYPE_* and FC_FCTL_* of a receive slot too */
#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#define FC_WIRE_HDR_SIZE        24

/* TYPE: which channel of the receiving adapter takes the frame */
#define FC_TYPE_IP              0x05    /* FC-4 IP (RFC 2625): channel FC_CH_IP */
#define FC_TYPE_USER            0xe0    /* vendor-specific: channel FC_CH_USER */

/* F_CTL: where the frame is in its send (a sequence) */
#define FC_FCTL_FIRST           (1u << 0)
#define FC_FCTL_LAST            (1u << 1)

#define FC_RCTL_DATA            0x04    /* device data, unsolicited */

struct fc_wire_hdr {
    uint8_t r_ctl;      /* FC_RCTL_DATA */
    uint8_t type;       /* FC_TYPE_* */
    uint8_t f_ctl;      /* FC_FCTL_* */
    uint8_t seq_id;     /* the sender's send counter, low 8 bits */
    uint32_t d_id;      /* destination port */
    uint32_t s_id;      /* source port */
    uint32_t tag;       /* the send's tag (FC_U_TX_TAG / FC_U_PIO_TAG) */
    uint32_t offset;    /* relative offset of this frame's payload in the send */
    uint32_t msg_len;   /* the send's length */
};
_Static_assert(sizeof(struct fc_wire_hdr) == FC_WIRE_HDR_SIZE, "FC frame header layout");

#endif /* RETROLINK_PROTO_FC_H */
