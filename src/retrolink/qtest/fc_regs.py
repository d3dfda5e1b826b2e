"""The PUMA-III FC adapter's register map and frame format for tests and the fuzzer, from
the one definition: include/retrolink/regs/fc-regs.h and include/retrolink/proto/fc.h."""
import struct

from retrolink.headers import defines

R = type("FcRegs", (), defines("regs/fc-regs.h", "proto/fc.h"))

# struct fc_wire_hdr (proto/fc.h) and struct fc_rx_slot (regs/fc-regs.h), little-endian
WIRE_HDR = struct.Struct("<BBBBIIIII")
RX_SLOT = struct.Struct("<IIIIII8x")
assert WIRE_HDR.size == R.FC_WIRE_HDR_SIZE and RX_SLOT.size == R.FC_RX_PAYLOAD


def ch_reg(c: int, r: int) -> int:
    """FC_CH_REG(c, r): channel c's register r in the control page (BAR0)."""
    return 0x100 + c * 0x40 + r


def irq_rx(c: int) -> int:
    return 1 << (c * 4)


def irq_txdone(c: int) -> int:
    return 1 << (c * 4 + 1)


def irq_error(c: int) -> int:
    return 1 << (c * 4 + 2)


def pio_send(length: int, dest: int) -> int:
    return (length & 0xFFFF) | (dest << 16)


def wire_frame(src: int, dst: int, type_: int, payload: bytes, tag: int = 0,
               offset: int = 0, msg_len: int | None = None, f_ctl: int | None = None,
               seq_id: int = 0) -> bytes:
    """One frame as an adapter puts it on the fabric: header, then payload."""
    msg_len = len(payload) if msg_len is None else msg_len
    if f_ctl is None:
        f_ctl = (R.FC_FCTL_FIRST if offset == 0 else 0) | \
                (R.FC_FCTL_LAST if offset + len(payload) == msg_len else 0)
    return WIRE_HDR.pack(R.FC_RCTL_DATA, type_, f_ctl, seq_id, dst, src, tag, offset,
                         msg_len) + payload


def parse_wire(data: bytes) -> dict:
    r_ctl, type_, f_ctl, seq_id, d_id, s_id, tag, offset, msg_len = \
        WIRE_HDR.unpack_from(data)
    return dict(r_ctl=r_ctl, type=type_, f_ctl=f_ctl, seq_id=seq_id, d_id=d_id, s_id=s_id,
                tag=tag, offset=offset, msg_len=msg_len, payload=data[WIRE_HDR.size:])
