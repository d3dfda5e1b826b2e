"""The Cenju-3 interface's register map, ring entries and packet format for tests and the
fuzzer, from the one definition: include/retrolink/regs/cenju3-regs.h and
include/retrolink/proto/cenju3.h."""
import struct

from retrolink.headers import defines

R = type("Cenju3Regs", (), defines("regs/cenju3-regs.h", "proto/cenju3.h"))

# struct c3_req, struct c3_event (regs/cenju3-regs.h), struct c3_wire_hdr (proto/cenju3.h)
REQ = struct.Struct("<HHIQQIHH")
EVENT = struct.Struct("<BBHIIIIIQ")
WIRE_HDR = struct.Struct("<BBHHHQII")
assert REQ.size == 32 and EVENT.size == 32 and WIRE_HDR.size == R.C3_WIRE_HDR_SIZE

OPS = {R.C3_OP_MSG: "MSG", R.C3_OP_RDMA: "RDMA"}


def req(op: int, dest: int, length: int, src: int, raddr: int = 0, tag: int = 0,
        flags: int = 0, status: int = 0) -> bytes:
    """One request as the driver writes it into the ring."""
    return REQ.pack(op, dest, length, src, raddr, tag, flags, status)


def parse_event(data: bytes) -> dict:
    kind, flags, src, info, tag, length, status, _, t_ns = EVENT.unpack_from(data)
    return dict(kind=kind, flags=flags, src=src, info=info, tag=tag, len=length,
                status=status, t_ns=t_ns)


def packet(kind: int, src: int, dest: int, data: bytes, raddr: int = 0, tag: int = 0,
           req_len: int | None = None, flags: int | None = None) -> bytes:
    """One packet as an interface puts it on the network: header, then data."""
    if flags is None:
        flags = R.C3_PKTF_LAST
    req_len = len(data) if req_len is None else req_len
    return WIRE_HDR.pack(kind, flags, src, dest, len(data), raddr, tag, req_len) + data


def parse_packet(data: bytes) -> dict:
    kind, flags, src, dest, length, raddr, tag, req_len = WIRE_HDR.unpack_from(data)
    return dict(kind=kind, flags=flags, src=src, dest=dest, len=length, raddr=raddr, tag=tag,
                req_len=req_len, data=data[WIRE_HDR.size:])
