"""The retrolink wire protocol for Python (tests, tools): the structs and constants come
from include/retrolink/wire.h itself, parsed by cffi, so there is one definition."""
import re

import cffi

from retrolink import paths
from retrolink.registry import board_entries


def _cdef_text() -> str:
    text = paths.WIRE_HEADER.read_text()
    body = text.split("/* cdef-begin", 1)[1].split("*/", 1)[1].split("/* cdef-end */", 1)[0]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    # cffi has no preprocessor: the protocols boards.def lists, as wire.h expands them
    protocols = "".join(f"    RL_PROTO_{e.proto} = {e.number},\n" for e in board_entries())
    body = re.sub(r"#define RL_BOARD\(.*?#undef RL_BOARD\n", protocols, body, flags=re.S)
    # cffi wants plain integer #defines; 0xffffffffffffffff is one
    return body


ffi = cffi.FFI()
ffi.cdef(_cdef_text())
lib = ffi.dlopen(None)

MAGIC, VERSION = lib.RL_WIRE_MAGIC, lib.RL_WIRE_VERSION
NEVER = lib.RL_TIME_NEVER
BROADCAST = lib.RL_NODE_BROADCAST          # a FRAME's dst: every other node of the network
HELLO, WELCOME, FRAME, DELIVER, SYNC, GRANT, LINK, ERROR, BYE, ATTACH, PROGRESS = (
    lib.RL_MSG_HELLO, lib.RL_MSG_WELCOME, lib.RL_MSG_FRAME, lib.RL_MSG_DELIVER, lib.RL_MSG_SYNC,
    lib.RL_MSG_GRANT, lib.RL_MSG_LINK, lib.RL_MSG_ERROR, lib.RL_MSG_BYE, lib.RL_MSG_ATTACH,
    lib.RL_MSG_PROGRESS)
BARRIER, BARRIER_AT = lib.RL_MSG_BARRIER, lib.RL_MSG_BARRIER_AT
BARRIER_HELD, BARRIER_STOPPED, BARRIER_SAVE = (
    lib.RL_BARRIER_HELD, lib.RL_BARRIER_STOPPED, lib.RL_BARRIER_SAVE)
# what a port's frames are (ATTACH), and what a network carries (the fabric's config)
PROTOCOLS = {"any": lib.RL_PROTO_ANY,
             **{e.name: getattr(lib, f"RL_PROTO_{e.proto}") for e in board_entries()}}


def _pack(ctype: str, msg_type: int, node: int, time_ns: int, payload: bytes = b"", **fields):
    m = ffi.new(f"{ctype} *")
    size = ffi.sizeof(ctype)
    h = m.h if ctype != "struct rl_msg_hdr" else m
    h.magic, h.version, h.type, h.node, h.time_ns = MAGIC, VERSION, msg_type, node, time_ns
    h.length = size + len(payload)
    for k, v in fields.items():
        if k == "name":
            ffi.memmove(m.name, v.encode()[:31], len(v.encode()[:31]))
        else:
            setattr(m, k, v)
    return bytes(ffi.buffer(m)) + payload


def hello(node, reaction_ns=1000, granularity_ns=1, name="fake", time_ns=0, ports=0):
    return _pack("struct rl_hello", HELLO, node, time_ns, reaction_ns=reaction_ns,
                 granularity_ns=granularity_ns, name=name, ports=ports)


def attach(node, net, protocol=0, time_ns=0):
    return _pack("struct rl_attach", ATTACH, node, time_ns, net=net, protocol=protocol)


def sync(node, time_ns, promise_ns):
    return _pack("struct rl_sync", SYNC, node, time_ns, promise_ns=promise_ns)


def frame(node, ready_ns, dst, payload=b"", seq=0, flags=0, net=0):
    return _pack("struct rl_frame", FRAME, node, ready_ns, payload, src=node, dst=dst,
                 len=len(payload), seq=seq, flags=flags, net=net)


def bye(node, time_ns):
    return _pack("struct rl_msg_hdr", BYE, node, time_ns)


def progress(node, time_ns):
    """It moved on through the lock-step file while another node waits (no reply)."""
    return _pack("struct rl_msg_hdr", PROGRESS, node, time_ns)


def barrier(node, time_ns, flags):
    """The boot barrier (docs/snapshots.md): held there, or stopped at its time."""
    return _pack("struct rl_barrier", BARRIER, node, time_ns, flags=flags)


# the fabric's side, for fake fabrics in device tests
def welcome(node, first_grant_ns, nodes, notice_nets=0):
    return _pack("struct rl_welcome", WELCOME, node, first_grant_ns, nodes=nodes,
                 notice_nets=notice_nets)


def grant(node, time_ns):
    return _pack("struct rl_msg_hdr", GRANT, node, time_ns)


def deliver(node, arrival_ns, src, payload=b"", seq=0, flags=0, net=0):
    return _pack("struct rl_frame", DELIVER, node, arrival_ns, payload, src=src, dst=node,
                 len=len(payload), seq=seq, flags=flags, net=net)


def link_status(node, time_ns, peer, up, net=0):
    return _pack("struct rl_link_status", LINK, node, time_ns, peer=peer, up=int(up), net=net)


def unpack(data: bytes) -> dict:
    """A message as a dict: type, node, time, and its type's fields (either direction)."""
    h = ffi.from_buffer("struct rl_msg_hdr *", data)
    out = {"type": h.type, "node": h.node, "time": h.time_ns, "length": h.length,
           "magic": h.magic, "version": h.version}
    if h.type in (DELIVER, FRAME):
        f = ffi.from_buffer("struct rl_frame *", data)
        out.update(src=f.src, dst=f.dst, len=f.len, seq=f.seq, net=f.net, flags=f.flags,
                   payload=bytes(data[ffi.sizeof("struct rl_frame"):]))
    elif h.type == SYNC:
        out["promise"] = ffi.from_buffer("struct rl_sync *", data).promise_ns
    elif h.type == HELLO:
        m = ffi.from_buffer("struct rl_hello *", data)
        out.update(reaction=m.reaction_ns, granularity=m.granularity_ns, ports=m.ports,
                   name=ffi.string(m.name).decode(errors="replace"))
    elif h.type == ATTACH:
        a = ffi.from_buffer("struct rl_attach *", data)
        out.update(net=a.net, protocol=a.protocol)
    elif h.type == WELCOME:
        w = ffi.from_buffer("struct rl_welcome *", data)
        out.update(nodes=w.nodes, notice_nets=w.notice_nets)
    elif h.type == LINK:
        s = ffi.from_buffer("struct rl_link_status *", data)
        out.update(peer=s.peer, up=s.up, net=s.net)
    elif h.type in (BARRIER, BARRIER_AT):
        out["flags"] = ffi.from_buffer("struct rl_barrier *", data).flags
    elif h.type == ERROR:
        out["text"] = ffi.string(ffi.from_buffer("struct rl_error *", data).text).decode()
    return out
