"""The PUMA-II DSM board's register map and frame format for tests and the fuzzer, from
the one definition: include/retrolink/regs/puma2-regs.h and include/retrolink/proto/puma2.h
(its #defines, and the members of its `enum puma2_msg`)."""
import re
import struct

from retrolink import paths
from retrolink.headers import defines


def _enum(header: str, name: str) -> dict[str, int]:
    """The NAME = value members of one C enum of a shared header."""
    text = (paths.INCLUDE / header).read_text()
    body = re.search(r"enum\s+" + name + r"\s*\{(.*?)\}", text, re.S).group(1)
    return {m.group(1): int(m.group(2), 0)
            for m in re.finditer(r"\b([A-Z][A-Z0-9_]*)\s*=\s*(0x[0-9a-fA-F]+|[0-9]+)", body)}


R = type("Puma2Regs", (), {**defines("regs/puma2-regs.h", "proto/puma2.h"),
                           **_enum("proto/puma2.h", "puma2_msg")})

# struct puma2_wire_hdr (proto/puma2.h), little-endian: type, op, flags, page, from, copyset
WIRE_HDR = struct.Struct("<BBHIII")
assert WIRE_HDR.size == R.PUMA2_WIRE_HDR_SIZE

MSG_NAMES = {getattr(R, n): n[len("PUMA2_MSG_"):] for n in
             ("PUMA2_MSG_REQ", "PUMA2_MSG_FWD", "PUMA2_MSG_PAGE", "PUMA2_MSG_INV",
              "PUMA2_MSG_INV_ACK", "PUMA2_MSG_CONFIRM")}


def cmd(page: int, op: int) -> int:
    """PUMA2_CMD(page, op): a command FIFO entry."""
    return ((page << R.PUMA2_CMD_PAGE_SHIFT) | op) & 0xFFFFFFFF


def resp(page: int, kind: int, status: int) -> int:
    """PUMA2_RESP(page, kind, status): a response FIFO entry."""
    return ((page << 12) | (kind << 8) | status) & 0xFFFFFFFF


def parse_resp(v: int) -> tuple[int, int, int]:
    """(page, kind, status) of a response."""
    return v >> 12, (v >> 8) & 0xF, v & 0xFF


def wire_frame(type_: int, page: int, from_: int, op: int = 0, copyset: int = 0,
               data: bytes | None = None, flags: int | None = None) -> bytes:
    """One frame as a board puts it on the ring: the header, then the page's bytes if any."""
    if flags is None:
        flags = R.PUMA2_MSG_F_DATA if data is not None else 0
    return WIRE_HDR.pack(type_, op, flags, page, from_, copyset) + (data or b"")


def parse_wire(payload: bytes) -> dict:
    type_, op, flags, page, from_, copyset = WIRE_HDR.unpack_from(payload)
    return dict(type=type_, op=op, flags=flags, page=page, from_=from_, copyset=copyset,
                data=payload[WIRE_HDR.size:])
