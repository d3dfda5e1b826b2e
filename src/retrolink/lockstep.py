"""The lock-step file (include/retrolink/lockstep.h) for Python: its structs come from the
header itself, parsed by cffi, so there is one definition. `bench fabric` reads each node's
slot (its virtual time and sync points) while a cluster runs."""
import mmap
import re
from pathlib import Path
from typing import NamedTuple

import cffi

from retrolink import paths

HEADER = paths.INCLUDE / "lockstep.h"
SUFFIX = ".lockstep"
NEVER = 2**64 - 1       # RL_TIME_NEVER


def _cdef_text() -> str:
    text = HEADER.read_text()
    body = text.split("/* cdef-begin", 1)[1].split("*/", 1)[1].split("/* cdef-end */", 1)[0]
    return re.sub(r"/\*.*?\*/", "", body, flags=re.S)


ffi = cffi.FFI()
ffi.cdef(_cdef_text())
lib = ffi.dlopen(None)


class Slot(NamedTuple):
    time_ns: int        # the node's clock at its last sync point
    sync_points: int    # every sync point so far
    exec_grants: int    # grants taken without leaving the vCPU loop (QEMU patch 0007)
    # its live clock (QEMU patch 0008): the time now, and when its budget was set;
    # None: it has none
    live: tuple[int, int] | None = None


def _live(lv, tries: int = 1000) -> tuple[int, int] | None:   # lv: struct rl_ls_live *
    """A live clock (docs/fabric.md, "Live time"): its time as rl_ls_live_promise reads
    it, without the lead and the pending floor (which bound the node's frames, not its
    time), and the time its budget was set; None if the node has none.
    A running node sets a budget about once a microsecond, so the line is copied at once
    and the copy kept if its seqlock count is even and unchanged after (None if that
    never happens in `tries` copies)."""
    copy = ffi.new("struct rl_ls_live *")
    for _ in range(tries):
        seq = lv.seq
        ffi.memmove(copy, lv, ffi.sizeof("struct rl_ls_live"))
        if seq & 1 or copy.seq != seq or lv.seq != seq:
            continue
        if not copy.ns_mult or copy.lead == NEVER:
            return None
        if copy.extra + copy.decr > copy.insns:
            # a decrementer of a budget not published: the time that one was set
            return copy.t0, copy.t0
        return copy.t0 + ((copy.insns - copy.extra - copy.decr) * copy.ns_mult >> 32), copy.t0
    return None


def path_for(socket: Path) -> Path:
    return Path(str(socket) + SUFFIX)


def read_slots(socket: Path) -> list[Slot] | None:
    """Every node's slot now, or None if there is no usable file (yet)."""
    try:
        with open(path_for(socket), "rb") as f, \
                mmap.mmap(f.fileno(), ffi.sizeof("struct rl_lockstep"),
                          access=mmap.ACCESS_READ) as m:
            ls = ffi.cast("struct rl_lockstep *", ffi.from_buffer(m))
            if ls.s.magic != lib.RL_LS_MAGIC or ls.s.version != lib.RL_LS_VERSION:
                return None
            nodes = min(ls.s.nnodes, len(ls.node))     # anyone can write the file
            slots = [Slot(ls.node[k].t, ls.node[k].syncs, ls.node[k].exec_grants,
                          _live(ffi.addressof(ls.live, k)))
                     for k in range(nodes)]
            del ls
            return slots
    except (OSError, ValueError):
        return None


def read_node_slots(sockets: list[Path]) -> list[Slot] | None:
    """Node k's slot from the lock-step file beside sockets[k] (the fabric's, or with
    shards its shard's: docs/fabric.md, "Shards"), or None if a file is not usable."""
    files = {s: read_slots(s) for s in set(sockets)}
    if any(slots is None or len(slots) < len(sockets) for slots in files.values()):
        return None
    return [files[s][k] for k, s in enumerate(sockets)]
