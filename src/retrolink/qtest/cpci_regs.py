"""The CompactPCI backplane board's register map and frame format for tests and the
fuzzer, from the one definition: include/retrolink/regs/cpci-regs.h and
include/retrolink/proto/cpci.h (its #defines, and the members of `enum cpci_frame_type`)."""
import struct

from retrolink.headers import defines
from retrolink.qtest.puma2_regs import _enum

R = type("CpciRegs", (), {**defines("regs/cpci-regs.h", "proto/cpci.h"),
                          **_enum("proto/cpci.h", "cpci_frame_type")})

# struct cpci_wire_hdr (proto/cpci.h), little-endian
WIRE_HDR = struct.Struct("<BBHIIHH")
assert WIRE_HDR.size == R.CPCI_WIRE_HDR_SIZE

ERR_ALL = 0x7F
FRAME_NAMES = {R.CPCI_T_WRITE: "WRITE", R.CPCI_T_DOORBELL: "DOORBELL", R.CPCI_T_READ: "READ",
               R.CPCI_T_READ_DONE: "READ_DONE"}
# every register of BAR0, and whether the guest may write it
REGISTERS = {
    R.CPCI_REG_ID: False, R.CPCI_REG_VERSION: False, R.CPCI_REG_NODE: False,
    R.CPCI_REG_NODES: False, R.CPCI_REG_CTRL: True, R.CPCI_REG_STATUS: False,
    R.CPCI_REG_EXPORT_LO: True, R.CPCI_REG_EXPORT_HI: True, R.CPCI_REG_EXPORT_SIZE: True,
    R.CPCI_REG_WINDOW_SIZE: False, R.CPCI_REG_DB_RING: True, R.CPCI_REG_DB_STATUS: True,
    R.CPCI_REG_DB_MASK: True, R.CPCI_REG_IRQ_STATUS: False, R.CPCI_REG_ERR_STATUS: True,
    R.CPCI_REG_ERR_MASK: True, R.CPCI_REG_ERR_ADDR: False, R.CPCI_REG_MAC_LO: False,
    R.CPCI_REG_MAC_HI: False, R.CPCI_REG_TX_WRITES: False, R.CPCI_REG_TX_BYTES: False,
    R.CPCI_REG_TX_READS: False, R.CPCI_REG_RX_WRITES: False, R.CPCI_REG_RX_BYTES: False,
    R.CPCI_REG_RX_READS: False, R.CPCI_REG_RX_REJECTED: False, R.CPCI_REG_DB_SENT: False,
    R.CPCI_REG_DB_RECEIVED: False,
}


def db_bit(src: int, bit: int) -> int:
    """CPCI_DB_BIT: the bit of DB_STATUS that doorbell `bit` rung by node `src` sets."""
    return src * R.CPCI_DB_PER_NODE + bit


def db_ring_value(node: int, bit: int) -> int:
    return node << 16 | bit


def wire_frame(kind: int, offset: int = 0, data: bytes = b"", length: int | None = None,
               src: int = 1, tag: int = 0, flags: int = 0) -> bytes:
    """A frame as a peer's bridge sends it: the header, then the data."""
    length = len(data) if length is None else length
    return WIRE_HDR.pack(kind, flags, length, offset, tag, src, 0) + data


def parse_wire(payload: bytes) -> dict:
    kind, flags, length, offset, tag, src, _ = WIRE_HDR.unpack_from(payload)
    return dict(kind=kind, flags=flags, length=length, offset=offset, tag=tag, src_node=src,
                data=payload[WIRE_HDR.size:])
