"""The fabric's side of the lock-step file (include/retrolink/lockstep.h, docs/fabric.md
"Grants without a round trip"): what it publishes, when it adopts what a node published in
its slot instead of a SYNC, and PROGRESS. The nodes' own grant computation runs in QEMU
(rl_ls_grants, the function the fabric itself uses); the guest tests cover it, and the
multinet test compares it with the socket's grants."""
import mmap
import re
import time

import pytest
from fakenode import FakeNode

from retrolink import lockstep, wire

NEVER = 2**64 - 1
P2P = "nodes 2\ntopology p2p rate=12500000 prop_ns=5000 overhead_bytes=28\n"
L = 2240 + 5000                   # 28 bytes at 12.5 MB/s + propagation


class LockstepFile:
    """The file as a node's link port sees it (a writable mapping)."""

    def __init__(self, sock):
        path = lockstep.path_for(sock)
        size = lockstep.ffi.sizeof("struct rl_lockstep")
        for _ in range(300):
            # the fabric creates it, then sets its size
            if path.exists() and path.stat().st_size >= size:
                break
            time.sleep(0.01)
        self.f = open(path, "r+b")
        self.m = mmap.mmap(self.f.fileno(), size)
        self.ls = lockstep.ffi.cast("struct rl_lockstep *", lockstep.ffi.from_buffer(self.m))

    def use_slot(self, node: int):
        self.ls.node[node].active = 1          # before HELLO, as the link port does

    def publish(self, node: int, t: int, promise: int, frames: int = 0, grant: int = 0):
        slot = self.ls.node[node]
        slot.seq += 1
        slot.t, slot.promise, slot.frames, slot.grant = t, promise, frames, grant
        slot.syncs += 1
        slot.seq += 1

    def block_when(self, ready):
        """The fabric's block once ready(block) holds (it publishes after its messages,
        so a node can see a message before the block that counts it)."""
        for _ in range(3000):
            b = self.ls.fab
            if b.seq % 2 == 0 and ready(b):
                return b
            time.sleep(0.001)
        raise AssertionError("the fabric's block never showed what was expected")


def two_nodes(fabric, slot_for_a: bool):
    f = fabric(P2P)
    file = LockstepFile(f.sock)
    if slot_for_a:
        file.use_slot(0)
    a, b = FakeNode(f.sock, 0, reaction_ns=300_000), FakeNode(f.sock, 1, reaction_ns=300_000)
    a.welcome(), b.welcome()
    return f, file, a, b


def test_the_file_describes_the_cluster_and_what_the_fabric_knows(fabric):
    f, file, a, b = two_nodes(fabric, slot_for_a=False)
    s = file.ls.s
    assert (s.magic, s.version) == (lockstep.lib.RL_LS_MAGIC, lockstep.lib.RL_LS_VERSION)
    assert (s.nnodes, s.nnets, s.vm_nodes) == (2, 1, 2)
    assert s.latency[0] == L and s.stations[0] == 2
    assert [s.station_node[0][i] for i in range(2)] == [0, 1]
    assert [s.reaction[i] for i in range(2)] == [300_000, 300_000]
    b.s.sendall(wire.sync(1, 0, 7_000_000))
    assert a.sync(0, NEVER) == 7_000_000 + L
    # WELCOME and a GRANT sent to each (b's once a promised nothing); nothing consumed
    blk = file.block_when(lambda blk: (blk.sent[0], blk.sent[1]) == (2, 2))
    assert (blk.consumed[0], blk.consumed[1]) == (0, 0)
    assert (blk.alive[0], blk.alive[1]) == (1, 1)
    # nodes that do not publish: the fabric's whole view of their send floor
    assert (blk.floor[0], blk.floor[1]) == (NEVER, 7_000_000)


def test_a_published_slot_moves_the_others_grants_without_a_sync(fabric):
    f, file, a, b = two_nodes(fabric, slot_for_a=True)
    file.publish(0, t=1000, promise=7_000_000, grant=a.grant)
    # b's grant comes from a's slot: a said no SYNC at all
    assert b.sync(0, NEVER) == 7_000_000 + L
    # a publishes: the fabric gives its delivered arrivals plus R only (none: never)
    file.block_when(lambda blk: blk.floor[0] == NEVER and blk.floor[1] == NEVER)


def test_a_slot_counting_a_frame_the_fabric_has_not_read_is_not_adopted(fabric):
    f, file, a, b = two_nodes(fabric, slot_for_a=True)
    # a claims one FRAME written before its promise of 7 ms: until the fabric has read
    # it, that promise could hide the frame, so b gets only what a's old state allows
    file.publish(0, t=1000, promise=7_000_000, frames=1, grant=a.grant)
    g = b.sync(0, NEVER)
    assert g < 7_000_000, "b was granted on a slot with an unread frame"
    a.send(5000, 1, b"x" * 10)      # the frame: ready at 5 us
    a.raw(wire.progress(0, 1000))
    # now the slot counts: the frame reaches b at 13040 (5 us + 38 bytes at 80 ns + 5 us),
    # b may answer 300 us later, a answer that 300 us after it arrives: b's grant is that
    # arrival, far beyond a's stale promise of 0 (which would hold b at 0 + L)
    arrival = 5000 + (10 + 28) * 80 + 5000
    assert b.sync(g, NEVER) == arrival + 300_000 + L + 300_000 + L
    assert [d["time"] for d in b.delivered] == [arrival]


def test_progress_from_a_publishing_node_wakes_the_fabric_for_a_waiting_one(fabric):
    f, file, a, b = two_nodes(fabric, slot_for_a=True)
    start = b.grant
    b.report(start, NEVER)            # b is at its grant and waits (a is at 0)
    time.sleep(0.2)
    file.publish(0, t=100_000, promise=100_000, grant=a.grant)
    a.raw(wire.progress(0, 100_000))
    assert b.wait_grant() == 100_000 + L
    stats = f.stop()
    assert "protocol" not in stats, stats


@pytest.mark.parametrize("t,promise,why", [
    (5000, 4000, "promise earlier than the node's own time"),
    (2**63, NEVER, "time beyond the fabric's limit"),
    (5000, 2**63, "promise beyond 2^63 ns"),
])
def test_a_slot_no_sync_could_carry_cuts_its_node_off(fabric, t, promise, why):
    f, file, a, b = two_nodes(fabric, slot_for_a=True)
    file.publish(0, t=t, promise=promise, grant=a.grant)
    # the fabric reads it at its next step (b's SYNC): a is cut off as for a bad SYNC,
    # nothing of it adopted, and b hears that its peer is down and runs on
    with pytest.raises(ConnectionError, match="lock-step slot: " + re.escape(why)):
        a.wait_grant()
    b.report(0, NEVER)
    assert b.wait_grant() == NEVER
    assert [m["up"] for m in b.links] == [0]


def test_a_slot_whose_time_goes_back_cuts_its_node_off(fabric):
    f, file, a, b = two_nodes(fabric, slot_for_a=True)
    file.publish(0, t=5000, promise=6000, grant=a.grant)
    b.sync(0, NEVER)                  # adopted: a is at 5000
    file.publish(0, t=4000, promise=6000, grant=a.grant)
    b.report(b.grant, NEVER)
    with pytest.raises(ConnectionError, match="lock-step slot: time went backwards"):
        a.wait_grant()


def test_a_static_part_rewritten_after_the_start_changes_nothing_in_the_fabric(fabric):
    """Anything that can open the file can write its static part. The fabric computes with
    its own copy, never the file's (before, 2^32 - 1 nodes there made it run off its
    arrays): the grants stay the configuration's, and the ASan build sees nothing."""
    f, file, a, b = two_nodes(fabric, slot_for_a=False)
    s = file.ls.s
    s.nnodes, s.nnets, s.vm_nodes = 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF
    s.latency[0], s.stations[0] = 0, 0xFFFFFFFF
    s.station_node[0][0] = s.station_node[0][1] = 0xFFFF
    assert b.sync(0, 7_000_000) == L                  # a is at 0: L, not the file's 0
    assert a.sync(0, NEVER) == 7_000_000 + L
    # a may answer a frame of b's at 7 ms + L, 300 us later
    assert b.sync(0, 7_000_000) == 7_000_000 + L + 300_000 + L
