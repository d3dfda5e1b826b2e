"""The VIA NIC's register map, in-memory formats and frame format for tests and the
fuzzer, from the one definition: include/retrolink/regs/via-regs.h and
include/retrolink/proto/via.h (its #defines, and the members of `enum via_frame_type`)."""
import struct

from retrolink.headers import defines
from retrolink.qtest.puma2_regs import _enum

R = type("ViaRegs", (), {**defines("regs/via-regs.h", "proto/via.h"),
                         **_enum("proto/via.h", "via_frame_type")})

# struct via_wire_hdr (proto/via.h), little-endian
WIRE_HDR = struct.Struct("<BBHHHIIIIII")
# struct via_control_segment, struct via_data_segment, struct via_cq_entry (via-regs.h)
CONTROL = struct.Struct("<QIHHIIII")
SEGMENT = struct.Struct("<QII")
CQE = struct.Struct("<II")
assert WIRE_HDR.size == R.VIA_WIRE_HDR_SIZE and CONTROL.size == 32 and SEGMENT.size == 16

FRAME_NAMES = {R.VIA_F_DATA: "DATA", R.VIA_F_ACK: "ACK", R.VIA_F_DGRAM: "DGRAM",
               R.VIA_F_CM: "CM", R.VIA_F_BREAK: "BREAK"}


def vi_events_reg(n: int) -> int:
    return 0xb0 + n * 4


def vi_errors_reg(n: int) -> int:
    return 0xc8 + n * 4


def cm_tx_word(i: int) -> int:
    return 0x104 + i * 4


def cm_rx_word(i: int) -> int:
    return 0x148 + i * 4


def arm_vi(v: int, q: int) -> int:
    return (v << 1) | (q & 1)


def arm_cq(c: int) -> int:
    return 0x10000 | c


def db_value(handle: int, off: int) -> int:
    return (handle << 32) | (off & 0xFFFFFFFF)


def descriptor(segs=(), length: int | None = None, control: int = 0, immediate: int = 0,
               reserved: int = 0, seg_count: int | None = None, status: int = 0) -> bytes:
    """A descriptor as VIPL lays it out: control segment, then (va, handle, len) segments."""
    length = sum(s[2] for s in segs) if length is None else length
    seg_count = len(segs) if seg_count is None else seg_count
    return CONTROL.pack(0, 0, seg_count, control, reserved, immediate, length, status) + \
        b"".join(SEGMENT.pack(va, h, n) for va, h, n in segs)


def parse_control(data: bytes) -> dict:
    nxt, nh, seg_count, control, reserved, imm, length, status = CONTROL.unpack_from(data)
    return dict(seg_count=seg_count, control=control, reserved=reserved, immediate=imm,
                length=length, status=status)


def wire_frame(type_: int, src_vi: int = 0, dst_vi: int = 0, src_node: int = 1,
               seq: int = 0, offset: int = 0, msg_len: int | None = None,
               payload: bytes = b"", flags: int | None = None, immediate: int = 0,
               status: int = 0) -> bytes:
    """One frame as a NIC puts it on the fabric: header, then payload."""
    msg_len = len(payload) if msg_len is None else msg_len
    if flags is None:
        flags = (R.VIA_FF_FIRST if offset == 0 else 0) | \
                (R.VIA_FF_LAST if offset + len(payload) >= msg_len else 0)
        if type_ not in (R.VIA_F_DATA, R.VIA_F_DGRAM):
            flags = 0
    return WIRE_HDR.pack(type_, flags, src_vi, dst_vi, src_node, seq, offset, msg_len,
                         immediate, status, 0) + payload


def parse_wire(data: bytes) -> dict:
    type_, flags, src_vi, dst_vi, src_node, seq, offset, msg_len, imm, status, _ = \
        WIRE_HDR.unpack_from(data)
    return dict(type=type_, flags=flags, src_vi=src_vi, dst_vi=dst_vi, src_node=src_node,
                seq=seq, offset=offset, msg_len=msg_len, immediate=imm, status=status,
                payload=data[WIRE_HDR.size:])
